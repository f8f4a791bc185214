//! Pass 1 of `exact`'s percentiles: for each value, the rows per (fine key, bucket),
//! counted by one function over each morsel of the stream.
//!
//! A polars group-by per value hashed every row once per value into a table of its own:
//! on 10M requests and 14 values, 140M inserts, the pass's largest cost after reading the
//! file, and each query one more consumer of the shared scan (a report's families asked
//! for so many that they took four scans). Here one function receives a morsel's keys and
//! values. It numbers the morsel's distinct key tuples once, counts each value's rows per
//! (tuple, bucket) in a small table of its own, and adds those counts to the pass's
//! totals under a lock, once per morsel. The totals are sums, so they do not depend on
//! the order the morsels come in, and the frames are the same on every run.
//!
//! The frames are those a polars group-by by the keys and the bucket gives (a test checks
//! it): the keys as text, `__bucket` (null for a null value) and `__count`.

use std::sync::{Arc, Mutex, MutexGuard};

use polars::prelude::*;

use super::exact::{bucket_of, BUCKET_COL, BUCKET_SHIFT, COUNT_COL};
use super::{at_height, collect_all};

/// A key tuple: one code per key (`Coding`), null for a null key.
type Tuple = Vec<Option<u64>>;

/// Bits of a bucket in a packed (tuple, bucket) count key: buckets are in [-2^20, 2^20)
/// (64 bits less `BUCKET_SHIFT`), offset by `BUCKET_OFFSET` into [2^20, 3·2^20); 0
/// stands for a null value. The tuple's number is above them.
const BUCKET_BITS: u32 = 22;
const BUCKET_OFFSET: i64 = 1 << 21;
const BUCKET_MASK: u64 = (1 << BUCKET_BITS) - 1;

/// The bucket of a count key, null for a null value.
fn bucket(key: u64) -> Option<i64> {
    match key & BUCKET_MASK {
        0 => None,
        slot => Some(slot as i64 - BUCKET_OFFSET),
    }
}

/// How a key's values become codes, and back.
#[derive(Clone)]
enum Coding {
    /// Text: its code in polars' global categories, which hold each distinct value once
    /// for the process (a log's models and channels: a handful).
    Text(DataType),
    Flag,
    /// An integer, or a type whose physical values are integers (a date, a time): its
    /// physical value as 64 bits, cast back to `DataType`.
    Number(DataType),
}

impl Coding {
    fn of(name: &str, dtype: &DataType) -> PolarsResult<Coding> {
        Ok(match dtype {
            DataType::String => Coding::Text(DataType::from_categories(Categories::global())),
            DataType::Boolean => Coding::Flag,
            d if d.to_physical().is_integer() && d.to_physical() != DataType::UInt64 => {
                Coding::Number(d.clone())
            }
            d => polars_bail!(ComputeError: "a histogram cannot be keyed by `{name}` of type {d}"),
        })
    }

    /// A morsel's codes (`height` of them).
    fn encode(&self, c: &Column, height: usize) -> PolarsResult<Vec<Option<u64>>> {
        let c = at_height(c, height);
        Ok(match self {
            Coding::Text(dtype) => {
                let codes = c.cast(dtype)?.to_physical_repr();
                let codes = codes.as_materialized_series().u32()?.clone();
                codes.iter().map(|k| k.map(u64::from)).collect()
            }
            Coding::Flag => c.bool()?.iter().map(|b| b.map(u64::from)).collect(),
            Coding::Number(_) => {
                let values = c.to_physical_repr().strict_cast(&DataType::Int64)?;
                let values = values.as_materialized_series().i64()?.clone();
                values.iter().map(|v| v.map(|v| v as u64)).collect()
            }
        })
    }

    /// The keys of `codes` as text: as `keys_as_text` casts the key itself.
    fn decode(&self, name: &str, codes: Vec<Option<u64>>) -> PolarsResult<Column> {
        let name = PlSmallStr::from(name);
        let typed = match self {
            Coding::Text(dtype) => {
                let codes: UInt32Chunked = codes.into_iter().map(|k| k.map(|k| k as u32)).collect();
                Categorical32Chunked::from_cats_and_dtype(codes, dtype.clone()).into_series()
            }
            Coding::Flag => {
                let flags: BooleanChunked = codes.into_iter().map(|k| k.map(|k| k != 0)).collect();
                flags.into_series()
            }
            Coding::Number(dtype) => {
                let values: Int64Chunked = codes.into_iter().map(|k| k.map(|k| k as i64)).collect();
                values.into_series().strict_cast(dtype)?
            }
        };
        Ok(typed.cast(&DataType::String)?.with_name(name).into_column())
    }
}

/// What the morsels have counted so far.
#[derive(Default)]
struct Totals {
    /// Every key tuple met, by its number (the order met), and the number of each.
    tuples: Vec<Tuple>,
    numbers: PlHashMap<Tuple, u32>,
    /// Per value: rows per count key: the tuple's number above `BUCKET_BITS`, the value's
    /// slot (`slot`) below.
    counts: Vec<PlHashMap<u64, u64>>,
}

impl Totals {
    fn number(&mut self, tuple: Tuple) -> u32 {
        if let Some(&n) = self.numbers.get(&tuple) {
            return n;
        }
        let n = self.tuples.len() as u32;
        self.tuples.push(tuple.clone());
        self.numbers.insert(tuple, n);
        n
    }
}

/// Pass 1's histograms of `values` per (fine key, bucket): one query, collected with the
/// pass's others, then `frames`.
pub struct Histograms {
    lf: LazyFrame,
    keys: Vec<String>,
    values: Vec<String>,
    codings: Vec<Coding>,
    totals: Arc<Mutex<Totals>>,
}

impl Histograms {
    pub fn new(lf: &LazyFrame, keys: &[String], values: &[String]) -> PolarsResult<Histograms> {
        let schema = if keys.is_empty() {
            Arc::new(Schema::default())
        } else {
            lf.clone().collect_schema()?
        };
        let codings = keys
            .iter()
            .map(|k| Coding::of(k, schema.try_get(k.as_str())?))
            .collect::<PolarsResult<_>>()?;
        Ok(Histograms {
            lf: lf.clone(),
            keys: keys.to_vec(),
            values: values.to_vec(),
            codings,
            totals: Arc::new(Mutex::new(Totals {
                counts: vec![PlHashMap::new(); values.len()],
                ..Totals::default()
            })),
        })
    }

    /// The query that counts: its one row (the rows it counted) is not needed.
    pub fn query(&self) -> LazyFrame {
        let mut inputs: Vec<Expr> = self.keys.iter().map(|k| col(k.as_str())).collect();
        inputs.extend(
            self.values
                .iter()
                .map(|v| col(v.as_str()).cast(DataType::Float64)),
        );
        let first = inputs.remove(0);
        let (codings, totals) = (self.codings.clone(), self.totals.clone());
        let counted = first.map_many(
            move |cols: &mut [Column]| {
                let height = cols.iter().map(Column::len).max().unwrap_or(0);
                count_morsel(cols, &codings, &totals, height)?;
                Ok(Column::new_scalar(
                    "__counted".into(),
                    Scalar::new(DataType::UInt64, AnyValue::UInt64(1)),
                    height,
                ))
            },
            &inputs,
            |_, _| Ok(Field::new("__counted".into(), DataType::UInt64)),
        );
        self.lf.clone().select([counted.sum().alias("__counted")])
    }

    /// Once the query is collected: per value, in order, rows per (fine key, bucket), as
    /// a frame with the keys as text, `__bucket` and `__count`.
    pub fn frames(&self) -> PolarsResult<Vec<DataFrame>> {
        let totals = lock(&self.totals);
        let keys: Vec<Column> = self
            .keys
            .iter()
            .zip(&self.codings)
            .enumerate()
            .map(|(i, (name, coding))| {
                coding.decode(name, totals.tuples.iter().map(|t| t[i]).collect())
            })
            .collect::<PolarsResult<_>>()?;
        totals
            .counts
            .iter()
            .map(|counts| {
                let mut rows: Vec<(u64, u64)> = counts.iter().map(|(&k, &n)| (k, n)).collect();
                rows.sort_unstable();
                let tuples: IdxCa = rows
                    .iter()
                    .map(|(k, _)| (k >> BUCKET_BITS) as IdxSize)
                    .collect_ca("".into());
                let mut cols: Vec<Column> = keys
                    .iter()
                    .map(|k| k.take(&tuples))
                    .collect::<PolarsResult<_>>()?;
                let buckets: Int64Chunked = rows.iter().map(|(k, _)| bucket(*k)).collect();
                cols.push(buckets.with_name(BUCKET_COL.into()).into_column());
                let counts =
                    UInt64Chunked::from_vec(COUNT_COL.into(), rows.iter().map(|r| r.1).collect());
                cols.push(counts.into_column());
                DataFrame::new(rows.len(), cols)
            })
            .collect()
    }
}

/// The frames of `values`' histograms (`Histograms::frames`), in a scan of their own.
pub fn collect(lf: &LazyFrame, keys: &[String], values: &[String]) -> PolarsResult<Vec<DataFrame>> {
    let histograms = Histograms::new(lf, keys, values)?;
    collect_all(vec![histograms.query()])?;
    histograms.frames()
}

fn lock(totals: &Mutex<Totals>) -> MutexGuard<'_, Totals> {
    // A morsel that failed leaves counts the pass's error discards with them.
    totals.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts one morsel's rows: `cols` are the keys (as `codings`), then the values (as
/// floats).
fn count_morsel(
    cols: &[Column],
    codings: &[Coding],
    totals: &Mutex<Totals>,
    height: usize,
) -> PolarsResult<()> {
    let (keys, values) = cols.split_at(codings.len());
    // The morsel's key tuples, numbered by one pass per key over the rows: each row's
    // tuple so far and its next code make its tuple with one key more.
    let mut tuple_of = vec![0u32; height];
    let mut tuples: Vec<Tuple> = vec![vec![]];
    for (c, coding) in keys.iter().zip(codings) {
        tuples = longer_tuples(&mut tuple_of, &tuples, coding.encode(c, height)?);
    }
    // Per value, rows per (morsel's tuple, bucket).
    let mut counted = Vec::with_capacity(values.len());
    for c in values {
        let c = at_height(c, height);
        let v = c.f64()?.rechunk();
        let nulls = v.null_count();
        let v = v.downcast_as_array();
        let slots: Vec<u32> = if nulls == 0 {
            v.values().iter().map(|&x| slot(Some(x))).collect()
        } else {
            v.iter().map(|x| slot(x.copied())).collect()
        };
        counted.push(count_slots(&tuple_of, tuples.len(), &slots));
    }
    let mut totals = lock(totals);
    let numbers: Vec<u64> = tuples
        .into_iter()
        .map(|t| u64::from(totals.number(t)))
        .collect();
    for (all, counts) in totals.counts.iter_mut().zip(counted) {
        for (t, slot, n) in counts {
            let k = (numbers[t as usize] << BUCKET_BITS) | u64::from(slot);
            *all.entry(k).or_insert(0) += n;
        }
    }
    Ok(())
}

/// At most this many cells in a table indexed by position rather than hashed (1 MiB of
/// counts, about a morsel's rows).
const DENSE_CELLS: usize = 1 << 18;

/// Each row's tuple with one key more (its code in `codes`): `tuple_of` moved to the
/// longer tuples' numbers, which are returned. Small codes (text codes, class indexes)
/// are looked up by position, others hashed.
fn longer_tuples(tuple_of: &mut [u32], tuples: &[Tuple], codes: Vec<Option<u64>>) -> Vec<Tuple> {
    let mut longer: Vec<Tuple> = vec![];
    let mut add = |shorter: u32, code: Option<u64>| {
        let mut tuple = tuples[shorter as usize].clone();
        tuple.push(code);
        longer.push(tuple);
        (longer.len() - 1) as u32
    };
    let high = codes.iter().flatten().max().copied().unwrap_or(0);
    // Cell 0 of a tuple is a null code, cell c + 1 code c.
    let width = high.saturating_add(2);
    match usize::try_from(width) {
        Ok(width) if tuples.len().saturating_mul(width) <= DENSE_CELLS => {
            let mut cells = vec![u32::MAX; tuples.len() * width];
            for (t, code) in tuple_of.iter_mut().zip(codes) {
                let cell = *t as usize * width + code.map_or(0, |c| c as usize + 1);
                if cells[cell] == u32::MAX {
                    cells[cell] = add(*t, code);
                }
                *t = cells[cell];
            }
        }
        _ => {
            let mut numbers: PlHashMap<(u32, Option<u64>), u32> = PlHashMap::new();
            for (t, code) in tuple_of.iter_mut().zip(codes) {
                *t = *numbers.entry((*t, code)).or_insert_with(|| add(*t, code));
            }
        }
    }
    longer
}

/// A value's bucket as a count key's low bits: 0 for a null value.
fn slot(value: Option<f64>) -> u32 {
    // −0 made 0 (IEEE addition gives −0 + 0 = 0), so that a value has one bucket.
    value.map_or(0, |x| {
        (bucket_of(x + 0.0, BUCKET_SHIFT) + BUCKET_OFFSET) as u32
    })
}

/// Rows per (tuple, slot) among `tuples` tuples, as (tuple, slot, rows). Where the
/// morsel's slots span few enough cells, in a table indexed by position (the slots of a
/// metric's values lie close together), else hashed.
fn count_slots(tuple_of: &[u32], tuples: usize, slots: &[u32]) -> Vec<(u32, u32, u64)> {
    let (low, high) = slots
        .iter()
        .filter(|&&s| s != 0)
        .fold((u32::MAX, 0), |(l, h), &s| (l.min(s), h.max(s)));
    // Cell 0 of a tuple counts its nulls, cell s − low + 1 slot s.
    let width = if low > high {
        1
    } else {
        (high - low) as usize + 2
    };
    if tuples.saturating_mul(width) <= DENSE_CELLS {
        let mut cells = vec![0u32; tuples * width];
        for (&t, &s) in tuple_of.iter().zip(slots) {
            let j = if s == 0 { 0 } else { (s - low) as usize + 1 };
            cells[t as usize * width + j] += 1;
        }
        let mut out = vec![];
        for (i, &n) in cells.iter().enumerate().filter(|(_, &n)| n > 0) {
            let (t, j) = (i / width, (i % width) as u32);
            let s = if j == 0 { 0 } else { j - 1 + low };
            out.push((t as u32, s, u64::from(n)));
        }
        out
    } else {
        let mut counts: PlHashMap<(u32, u32), u64> = PlHashMap::new();
        for (&t, &s) in tuple_of.iter().zip(slots) {
            *counts.entry((t, s)).or_insert(0) += 1;
        }
        counts.into_iter().map(|((t, s), n)| (t, s, n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ruleset::compile::CLASS_INDEX;
    use crate::stats::exact::bucket_expr;
    use crate::stats::keys_as_text;

    /// `Histograms`' frames, and the frames of a polars group-by by the keys and the
    /// bucket, each sorted by the keys and the bucket.
    fn counted_and_grouped(
        lf: &LazyFrame,
        keys: &[String],
        values: &[&str],
    ) -> Vec<(DataFrame, DataFrame)> {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let counted = collect(lf, keys, &values).unwrap();
        let mut order = keys.to_vec();
        order.push(BUCKET_COL.to_string());
        let sorted = |df: DataFrame| {
            let mut cols: Vec<Expr> = order.iter().map(|k| col(k.as_str())).collect();
            cols.push(col(COUNT_COL));
            df.lazy()
                .select(cols)
                .sort(
                    order.clone(),
                    SortMultipleOptions::default().with_nulls_last(true),
                )
                .collect()
                .unwrap()
        };
        values
            .iter()
            .zip(counted)
            .map(|(v, counted)| {
                let mut by: Vec<Expr> = keys.iter().map(|k| col(k.as_str())).collect();
                by.push(bucket_expr(v, BUCKET_SHIFT).alias(BUCKET_COL));
                let grouped = collect_all(vec![lf
                    .clone()
                    .group_by(by)
                    .agg([len().cast(DataType::UInt64).alias(COUNT_COL)])
                    .with_columns(keys_as_text(keys))])
                .unwrap()
                .pop()
                .unwrap();
                (sorted(counted), sorted(grouped))
            })
            .collect()
    }

    /// Keyed by the class index: the same rows as polars' group-by by the class and the
    /// bucket, null classes and values, negative values, zeros, the extreme floats and
    /// infinities included.
    #[test]
    fn counts_by_the_class_equal_a_group_by() {
        let xs = [
            Some(f64::NEG_INFINITY),
            Some(-1e300),
            Some(-2.5),
            Some(-0.0),
            Some(0.0),
            Some(f64::MIN_POSITIVE),
            Some(1.0),
            Some(1.0000000000000002),
            Some(5e3),
            Some(f64::MAX),
            Some(f64::INFINITY),
            None,
        ];
        let mut classes = vec![];
        let mut values = vec![];
        for (i, x) in xs.iter().cycle().take(600).enumerate() {
            classes.push(match i % 7 {
                6 => None,
                k => Some((k * 1000) as u32),
            });
            values.push(*x);
        }
        let lf = df!(CLASS_INDEX => classes, "x" => values).unwrap().lazy();
        for (counted, grouped) in counted_and_grouped(&lf, &[CLASS_INDEX.to_string()], &["x"]) {
            assert!(counted.equals_missing(&grouped), "{counted}\n{grouped}");
            // Seven classes (null too), each with ten buckets: the twelve values less the
            // two zeros made one and 1 and its next float sharing a bucket.
            assert_eq!(counted.height(), 7 * 10);
        }
    }

    /// Text, integer, flag and date keys, alone and together, and no key at all: the same
    /// rows as polars' group-by, null keys and values that differ only in case or space
    /// included; two values at once, each with its own counts.
    #[test]
    fn counts_by_any_keys_equal_a_group_by() {
        let names = [
            Some("gpt-4.1"),
            None,
            Some("GPT-4.1"),
            Some("gpt-4.1 "),
            Some(""),
            Some("claude-sonnet-4"),
        ];
        let (mut text, mut period, mut flag, mut day, mut x, mut y) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for i in 0..900usize {
            text.push(names[i % names.len()]);
            period.push(((i / 7) % 4) as i64 * 3_600_000 - 7_200_000);
            flag.push(match i % 3 {
                0 => None,
                k => Some(k == 1),
            });
            day.push(((i / 50) % 3) as i32 + 20_000);
            x.push(match i % 5 {
                0 => None,
                k => Some(k as f64 * 10f64.powi((i % 11) as i32 - 3)),
            });
            y.push(Some(-(i as f64) / 8.0));
        }
        let lf = df!(
            "model" => text,
            "__period" => period,
            "is_stream" => flag,
            "day" => day,
            "x" => x,
            "y" => y,
        )
        .unwrap()
        .lazy()
        .with_column(col("day").cast(DataType::Date));
        for keys in [
            vec![],
            vec!["model"],
            vec!["__period", "model"],
            vec!["is_stream", "day", "model"],
        ] {
            let keys: Vec<String> = keys.into_iter().map(String::from).collect();
            for (counted, grouped) in counted_and_grouped(&lf, &keys, &["x", "y"]) {
                assert!(
                    counted.equals_missing(&grouped),
                    "{keys:?}\n{counted}\n{grouped}"
                );
                for k in &keys {
                    assert_eq!(counted.column(k).unwrap().dtype(), &DataType::String);
                }
            }
        }
    }

    /// Morsels counted apart add up: a log read in several chunks (as the streaming engine
    /// gives it, in parallel) has the counts of the same rows in one.
    #[test]
    fn counts_of_many_morsels_add_up() {
        let n = 300_000usize;
        let class: Vec<u32> = (0..n).map(|i| (i % 5) as u32).collect();
        let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 10_007) as f64 / 3.0).collect();
        let one = df!(CLASS_INDEX => class, "x" => x).unwrap();
        let mut chunked = one.slice(0, n / 3);
        chunked
            .vstack_mut(&one.slice((n / 3) as i64, n - n / 3))
            .unwrap();
        for df in [one, chunked] {
            let lf = df.lazy();
            for (counted, grouped) in counted_and_grouped(&lf, &[CLASS_INDEX.to_string()], &["x"]) {
                assert!(counted.equals_missing(&grouped));
                let total: u64 = counted
                    .column(COUNT_COL)
                    .unwrap()
                    .u64()
                    .unwrap()
                    .sum()
                    .unwrap();
                assert_eq!(total, n as u64);
            }
        }
    }
}
