//! Counts per key tuple, by one function over each morsel of the stream (as `histogram`
//! counts its buckets): the rows, the rows where each flag is true (null counts as false),
//! and the least and greatest value of integer columns.
//!
//! A polars group-by by the summary's keys (group, class, outcome, streaming, file) with
//! a score of aggregates hashed every row's keys and kept a table per aggregate: alone on
//! 10M requests its query took 3.0 s, this one 2.7 s (most of either is the plan's own
//! columns the counts read). Here each morsel's tuples are numbered once
//! (`Keys::number`) and each aggregate is a loop over its column into a table indexed by
//! the tuple's number, added to the pass's totals under a lock, once per morsel.
//!
//! The frame is the one the group-by gave (a test checks it): the keys as text, the row
//! count and each flag's count as `u64`, each extreme as `i64` (null where a tuple has no
//! value). Its rows are in the order the tuples were met: readers roll it up by key.

use std::sync::{Arc, Mutex};

use polars::prelude::*;

use super::tuples::{Keys, Numbered};
use super::{at_height, counting_query, lock};
use crate::kernels::words_of;
use polars_arrow::bitmap::Bitmap;

/// The least or the greatest value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Extreme {
    Min,
    Max,
}

/// What to count per key tuple: the name of the row count, the flags and the extremes,
/// each named.
pub struct Asked {
    pub rows: String,
    pub flags: Vec<(String, Expr)>,
    pub extremes: Vec<(String, Expr, Extreme)>,
}

#[derive(Default)]
struct Totals {
    tuples: Numbered,
    /// Per tuple (by number).
    rows: Vec<u64>,
    /// Per flag, per tuple.
    flags: Vec<Vec<u64>>,
    /// Per extreme, per tuple.
    extremes: Vec<Vec<Option<i64>>>,
}

/// One pass's counts: one query, collected with the pass's others, then `frame`.
pub struct Counts {
    lf: LazyFrame,
    keys: Keys,
    asked: Arc<Asked>,
    totals: Arc<Mutex<Totals>>,
}

impl Counts {
    /// `keys`, or else `asked`'s flags and extremes, are not all none: the rows are
    /// counted in the height of the columns the function receives.
    pub fn new(lf: &LazyFrame, keys: &[String], asked: Asked) -> PolarsResult<Counts> {
        polars_ensure!(
            !(keys.is_empty() && asked.flags.is_empty() && asked.extremes.is_empty()),
            ComputeError: "counts of nothing: no key, no flag, no extreme"
        );
        Ok(Counts {
            lf: lf.clone(),
            keys: Keys::new(lf, keys)?,
            totals: Arc::new(Mutex::new(Totals {
                flags: vec![vec![]; asked.flags.len()],
                extremes: vec![vec![]; asked.extremes.len()],
                ..Default::default()
            })),
            asked: Arc::new(asked),
        })
    }

    /// The query that counts.
    pub fn query(&self) -> LazyFrame {
        let mut inputs = self.keys.exprs();
        inputs.extend(
            self.asked
                .flags
                .iter()
                .map(|(_, e)| e.clone().cast(DataType::Boolean)),
        );
        inputs.extend(
            self.asked
                .extremes
                .iter()
                .map(|(_, e, _)| e.clone().cast(DataType::Int64)),
        );
        let (keys, asked, totals) = (self.keys.clone(), self.asked.clone(), self.totals.clone());
        counting_query(&self.lf, inputs, move |cols, height| {
            count_morsel(cols, &keys, &asked, &totals, height)
        })
    }

    /// Once the query is collected: one row per key tuple met.
    pub fn frame(&self) -> PolarsResult<DataFrame> {
        let totals = lock(&self.totals);
        let mut cols = self.keys.columns(totals.tuples.tuples())?;
        let n = totals.rows.len();
        cols.push(
            UInt64Chunked::from_vec(self.asked.rows.as_str().into(), totals.rows.clone())
                .into_column(),
        );
        for ((name, _), counts) in self.asked.flags.iter().zip(&totals.flags) {
            let mut counts = counts.clone();
            counts.resize(n, 0);
            cols.push(UInt64Chunked::from_vec(name.as_str().into(), counts).into_column());
        }
        for ((name, _, _), values) in self.asked.extremes.iter().zip(&totals.extremes) {
            let mut values = values.clone();
            values.resize(n, None);
            let values: Int64Chunked = values.into_iter().collect();
            cols.push(values.with_name(name.as_str().into()).into_column());
        }
        DataFrame::new(n, cols)
    }
}

/// Per tuple, the rows whose bit in `bits` is set (`tuple_of`: each row's tuple; `rows`:
/// each tuple's rows). Only the rarer bits are visited, a word of 64 rows at a time: the
/// set ones of a flag few rows have (a data-quality check), the unset ones of a flag most
/// have (a timing present), subtracted from the tuple's rows.
fn count_set(bits: &Bitmap, tuple_of: &[u32], rows: &[u64]) -> Vec<u64> {
    let height = tuple_of.len();
    let set = bits.set_bits();
    if set == height {
        return rows.to_vec();
    }
    let mut counts = vec![0u64; rows.len()];
    if set == 0 {
        return counts;
    }
    let dense = set > height / 2;
    for (w, &word) in words_of(bits).iter().enumerate() {
        let in_word = (height - w * 64).min(64);
        let mut visit = if dense { !word } else { word };
        if in_word < 64 {
            visit &= (1u64 << in_word) - 1;
        }
        while visit != 0 {
            counts[tuple_of[w * 64 + visit.trailing_zeros() as usize] as usize] += 1;
            visit &= visit - 1;
        }
    }
    if dense {
        for (c, &r) in counts.iter_mut().zip(rows) {
            *c = r - *c;
        }
    }
    counts
}

/// Counts one morsel's rows: `cols` are the keys, the flags, then the extremes.
fn count_morsel(
    cols: &[Column],
    keys: &Keys,
    asked: &Asked,
    totals: &Mutex<Totals>,
    height: usize,
) -> PolarsResult<()> {
    let (key_cols, rest) = cols.split_at(keys.len());
    let (flag_cols, rest) = rest.split_at(asked.flags.len());
    let extreme_cols = &rest[..asked.extremes.len()];
    let (tuple_of, tuples) = keys.number(key_cols, height)?;
    let n = tuples.len();

    let mut rows = vec![0u64; n];
    for &t in &tuple_of {
        rows[t as usize] += 1;
    }
    let mut flags = Vec::with_capacity(flag_cols.len());
    for c in flag_cols {
        let c = at_height(c, height);
        let b = c.bool()?.rechunk();
        let arr = b.downcast_as_array();
        // True and not null.
        let trues = match arr.validity() {
            Some(valid) => arr.values() & valid,
            None => arr.values().clone(),
        };
        flags.push(count_set(&trues, &tuple_of, &rows));
    }
    let mut extremes = Vec::with_capacity(extreme_cols.len());
    for (c, (_, _, which)) in extreme_cols.iter().zip(&asked.extremes) {
        let c = at_height(c, height);
        let v = c.i64()?.rechunk();
        let mut found: Vec<Option<i64>> = vec![None; n];
        let mut add = |t: u32, x: i64| {
            let slot = &mut found[t as usize];
            *slot = Some(match (*slot, which) {
                (None, _) => x,
                (Some(y), Extreme::Min) => y.min(x),
                (Some(y), Extreme::Max) => y.max(x),
            });
        };
        if v.null_count() == 0 {
            // No validity to read alongside.
            let values = v.downcast_as_array().values();
            for (&x, &t) in values.iter().zip(&tuple_of) {
                add(t, x);
            }
        } else {
            for (x, &t) in v.iter().zip(&tuple_of) {
                if let Some(x) = x {
                    add(t, x);
                }
            }
        }
        extremes.push(found);
    }

    let mut totals = lock(totals);
    let numbers: Vec<usize> = tuples
        .into_iter()
        .map(|t| totals.tuples.number(t) as usize)
        .collect();
    let all = totals.tuples.tuples().len();
    totals.rows.resize(all, 0);
    for (t, &g) in numbers.iter().enumerate() {
        totals.rows[g] += rows[t];
    }
    for (sum, counts) in totals.flags.iter_mut().zip(flags) {
        sum.resize(all, 0);
        for (t, &g) in numbers.iter().enumerate() {
            sum[g] += counts[t];
        }
    }
    for ((kept, found), (_, _, which)) in totals
        .extremes
        .iter_mut()
        .zip(extremes)
        .zip(&asked.extremes)
    {
        kept.resize(all, None);
        for (t, &g) in numbers.iter().enumerate() {
            kept[g] = match (kept[g], found[t], which) {
                (a, None, _) => a,
                (None, b, _) => b,
                (Some(a), Some(b), Extreme::Min) => Some(a.min(b)),
                (Some(a), Some(b), Extreme::Max) => Some(a.max(b)),
            };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{collect_all, keys_as_text};

    fn sorted(df: DataFrame, keys: &[&str]) -> DataFrame {
        df.sort(
            keys.to_vec(),
            SortMultipleOptions::default().with_nulls_last(true),
        )
        .unwrap()
    }

    /// The frame is polars' group-by's: the same keys (as text, nulls included), counts
    /// and extremes, over many morsels.
    #[test]
    fn counts_are_a_group_by() {
        let n = 50_000usize;
        let df = df!(
            "k" => (0..n).map(|i| (i % 7 != 3).then(|| format!("k{}", i % 5))).collect::<Vec<_>>(),
            "c" => (0..n).map(|i| (i % 3) as u32).collect::<Vec<_>>(),
            "b" => (0..n).map(|i| (i % 11 != 0).then_some(i % 2 == 0)).collect::<Vec<_>>(),
            "f" => (0..n).map(|i| (i % 13 != 0).then_some(i % 4 == 0)).collect::<Vec<_>>(),
            "t" => (0..n).map(|i| (i % 9 != 0).then_some((i as i64 * 7919) % 100_003 - 500)).collect::<Vec<_>>(),
        )
        .unwrap();
        let lf = df.lazy();
        let keys = ["k", "c", "b"];
        let names: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        let counts = Counts::new(
            &lf,
            &names,
            Asked {
                rows: "__rows".into(),
                flags: vec![
                    ("__f".into(), col("f")),
                    ("__t_pos".into(), col("t").gt(lit(0i64))),
                    ("__none".into(), lit(false)),
                    // Most rows (their unset bits counted) and every row.
                    ("__most".into(), col("t").is_not_null()),
                    ("__all".into(), col("c").lt(lit(10u32))),
                ],
                extremes: vec![
                    ("__min".into(), col("t"), Extreme::Min),
                    ("__max".into(), col("t"), Extreme::Max),
                    // Without nulls.
                    (
                        "__c_max".into(),
                        col("c").cast(DataType::Int64),
                        Extreme::Max,
                    ),
                ],
            },
        )
        .unwrap();
        collect_all(vec![counts.query()]).unwrap();
        let got = sorted(counts.frame().unwrap(), &keys);
        let count = |e: Expr, name: &str| {
            e.fill_null(lit(false))
                .cast(DataType::UInt64)
                .sum()
                .alias(name)
        };
        let want = collect_all(vec![lf
            .group_by(keys.iter().map(|k| col(*k)).collect::<Vec<_>>())
            .agg([
                len().cast(DataType::UInt64).alias("__rows"),
                count(col("f"), "__f"),
                count(col("t").gt(lit(0i64)), "__t_pos"),
                count(lit(false), "__none"),
                count(col("t").is_not_null(), "__most"),
                count(col("c").lt(lit(10u32)), "__all"),
                col("t").min().alias("__min"),
                col("t").max().alias("__max"),
                col("c").cast(DataType::Int64).max().alias("__c_max"),
            ])
            .with_columns(keys_as_text(&names))])
        .unwrap()
        .pop()
        .unwrap();
        let want = sorted(want, &keys);
        assert_eq!(got, want);
    }

    /// No rows, no tuple: a literal flag (one value) is no row of an empty morsel.
    #[test]
    fn no_rows_no_tuples() {
        let df = df!("k" => Vec::<Option<String>>::new()).unwrap();
        let counts = Counts::new(
            &df.lazy(),
            &["k".to_string()],
            Asked {
                rows: "__rows".into(),
                flags: vec![("__f".into(), lit(false))],
                extremes: vec![],
            },
        )
        .unwrap();
        collect_all(vec![counts.query()]).unwrap();
        assert_eq!(counts.frame().unwrap().height(), 0);
    }

    /// No keys: one row, as a `select` of the aggregates.
    #[test]
    fn no_keys_one_row() {
        let df = df!("t" => [Some(3i64), None, Some(-2)]).unwrap();
        let counts = Counts::new(
            &df.lazy(),
            &[],
            Asked {
                rows: "__rows".into(),
                flags: vec![],
                extremes: vec![("__min".into(), col("t"), Extreme::Min)],
            },
        )
        .unwrap();
        collect_all(vec![counts.query()]).unwrap();
        let got = counts.frame().unwrap();
        assert_eq!(got.column("__rows").unwrap().u64().unwrap().get(0), Some(3));
        assert_eq!(got.column("__min").unwrap().i64().unwrap().get(0), Some(-2));
    }
}
