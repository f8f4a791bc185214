//! Exact type-7 percentiles in bounded memory, in two streaming passes over the plan
//! (three on a large log).
//!
//! polars' `quantile` is not a streaming aggregate: it holds every value of a group. At a
//! hundred million requests and a dozen metrics that is tens of gigabytes. Instead:
//!
//! 1. **Histogram.** Each value is put in a bucket: the top bits of its float's bit
//!    pattern, made order-preserving (`order_key`). A streaming group-by counts rows per
//!    (group, bucket). Buckets are fine (512 per power of two, so a bucket spans at most
//!    0.2 % of its values) and few (at most a few thousand per metric and group).
//! 2. **The ranks' buckets.** From the counts, the two ranks type 7 interpolates between
//!    (⌊h⌋ and ⌈h⌉ for h = (n − 1)·q) fall in known buckets at known offsets. A second
//!    streaming group-by keeps only the rows in those buckets and counts each distinct
//!    value; the values at the offsets are then exact.
//!
//! The rows of a bucket grow with the log, and pass 2 holds each distinct value it keeps:
//! where the buckets of a value's ranks hold more than 2^20 rows, a pass between the two
//! counts their rows per finer bucket (512 to a bucket) and pass 2 keeps only the finer
//! buckets holding the ranks (`Ranks::refine`). Memory is bounded by the number of buckets
//! and of distinct values in the few (finer) buckets that hold a needed rank, never by the
//! number of rows. The result equals polars' in-memory `quantile(q, Linear)` (the same
//! interpolation, in the same float steps).
//!
//! Percentiles for several levels of grouping (overall, per class, per group, per group
//! and class) come from one histogram at the finest level, rolled up: one pair of passes
//! however many levels are asked for. Any list of quantiles can be asked for (the
//! report's CDFs ask for 201); p50/p95/p99 are the usual three.

use std::collections::{BTreeMap, BTreeSet};

use polars::chunked_array::ops::arity::unary_elementwise_values;
use polars::prelude::*;

use super::{at_height, collect_all, key_columns, keys_as_text, Key, QUANTILES};
use crate::ruleset::compile::CLASS_INDEX;
use crate::summary::{round3, Pct};

/// Bits below the bucket: 52 mantissa bits less the 9 a bucket keeps.
pub(super) const BUCKET_SHIFT: u32 = 43;
pub(super) const BUCKET_COL: &str = "__bucket";
pub(super) const VALUE_COL: &str = "__value";
pub(super) const COUNT_COL: &str = "__count";

/// An integer whose order is the order of the floats (negative values below positive,
/// −0 and +0 made one value beforehand).
pub(crate) fn order_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    if b < 0 {
        -1 - (b - i64::MIN)
    } else {
        b
    }
}

/// Bits below a refined bucket (`Ranks::refine`): 512 of them to a bucket.
pub(super) const FINE_SHIFT: u32 = 34;
/// Above this many rows in the buckets of a value's ranks, those buckets are refined
/// before the values are counted: pass 2 holds each distinct value it keeps, and the rows
/// of a bucket grow with the log (at 100M requests, millions per value).
pub(super) const REFINE_ABOVE: u64 = 1 << 20;

pub(super) fn bucket_of(x: f64, shift: u32) -> i64 {
    // An arithmetic shift: the floor of the division by 2^shift.
    order_key(x) >> shift
}

/// The value as both passes see it: −0 made 0 (so a value has one bucket). IEEE addition
/// gives −0 + 0 = 0 and leaves every other value as it is.
fn value_of(x: f64) -> f64 {
    x + 0.0
}

/// The bucket of `name`'s value (`value_of`, `bucket_of`), null for a null value.
///
/// Computed by one function over the values, not as polars expressions: those (an
/// equality and a choice for −0, a comparison, a subtraction and a choice for the order,
/// a division) built five columns per value and pass, for every request.
pub(super) fn bucket_expr(name: &str, shift: u32) -> Expr {
    col(name).cast(DataType::Float64).map(
        move |c: Column| {
            let buckets: Int64Chunked =
                unary_elementwise_values(c.f64()?, |x: f64| bucket_of(value_of(x), shift));
            Ok(buckets.into_column())
        },
        |_, f| Ok(Field::new(f.name().clone(), DataType::Int64)),
    )
}

/// What a pass after the histogram keeps of a value whose bucket holds a needed rank:
/// the value itself (the values' pass), or its bucket at finer bits (a refining pass).
#[derive(Clone, Copy)]
pub(super) enum Keep {
    Value,
    Bucket(u32),
}

impl Keep {
    fn field(self) -> (DataType, &'static str) {
        match self {
            Keep::Value => (DataType::Float64, VALUE_COL),
            Keep::Bucket(_) => (DataType::Int64, BUCKET_COL),
        }
    }
}

/// `keep` of `name`'s value where its bucket (at `shift` bits) is one of `needed`, else
/// null: one function over the values, as `bucket_expr`.
fn kept(name: &str, shift: u32, needed: &BTreeSet<i64>, keep: Keep) -> Expr {
    // In order, for a binary search: a few dozen buckets.
    let needed: Vec<i64> = needed.iter().copied().collect();
    let (dtype, _) = keep.field();
    col(name).cast(DataType::Float64).map(
        move |c: Column| {
            // Whole-column steps (the values, which are inside, a choice) rather than one
            // step per value that builds its validity bit by bit: each vectorises.
            let values: Float64Chunked = unary_elementwise_values(c.f64()?, value_of);
            let inside: BooleanChunked = unary_elementwise_values(&values, |x: f64| {
                needed.binary_search(&bucket_of(x, shift)).is_ok()
            });
            let (name, len) = (values.name().clone(), values.len());
            Ok(match keep {
                Keep::Value => values
                    .zip_with(&inside, &Float64Chunked::full_null(name, len))?
                    .into_column(),
                Keep::Bucket(fine) => {
                    let buckets: Int64Chunked =
                        unary_elementwise_values(&values, |x: f64| bucket_of(x, fine));
                    buckets
                        .zip_with(&inside, &Int64Chunked::full_null(name, len))?
                        .into_column()
                }
            })
        },
        move |_, f| Ok(Field::new(f.name().clone(), dtype.clone())),
    )
}

fn key_exprs(keys: &[String]) -> Vec<Expr> {
    keys.iter().map(|k| col(k.as_str())).collect()
}

/// Rows per bucket, or per value's order key, in order.
pub type Counts = BTreeMap<i64, u64>;

/// One level of grouping: which of the fine keys it keeps (indices into them).
pub type Level = Vec<usize>;

fn project(key: &Key, level: &Level) -> Key {
    level.iter().map(|&i| key[i].clone()).collect()
}

/// Where one needed rank is: its bucket and how many values of the series come before it
/// in that bucket.
#[derive(Clone, Copy)]
struct Rank {
    bucket: i64,
    offset: u64,
}

/// The quantiles of one value in one group: how many values it has, and the value at each
/// quantile asked for (null where it has none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Quantiles {
    pub n: u64,
    pub at: Vec<Option<f64>>,
}

impl Quantiles {
    fn empty(quantiles: usize) -> Quantiles {
        Quantiles {
            n: 0,
            at: vec![None; quantiles],
        }
    }

    /// As p50/p95/p99, for quantiles asked as `QUANTILES`.
    pub fn pct(&self) -> Pct {
        Pct {
            n: self.n,
            p50: self.at[0],
            p95: self.at[1],
            p99: self.at[2],
        }
    }
}

/// One percentile to finish in pass 2.
struct Pending {
    level: usize,
    key: Key,
    value: usize,
    quantile: usize,
    float_idx: f64,
    idx: u64,
    lower: Rank,
    upper: Rank,
}

/// p50/p95/p99 of each of `values` for every level of grouping: `levels[l]` lists the
/// fine keys that level groups by (an empty list: one group). Groups come back sorted by
/// key, each with one `Pct` per value; a group is present when it has rows.
pub fn percentiles_by_levels(
    lf: LazyFrame,
    fine: &[String],
    levels: &[Level],
    values: &[String],
) -> PolarsResult<Vec<BTreeMap<Key, Vec<Pct>>>> {
    let hist = collect_all(histogram_queries(&lf, fine, values)?)?;
    let mut ranks = Ranks::locate(&hist, fine, levels, values)?;
    ranks.refine(&lf)?;
    let exact = collect_all(ranks.queries(&lf))?;
    ranks.finish(&exact)
}

/// Pass 1: per value, rows per (fine key, bucket); a null value has a null bucket. One
/// query per value, to be collected together (with any other queries of the same pass).
///
/// One key is packed with the bucket into one integer (`pack`: the bucket in the low
/// `PACK_BITS`), for a group-by on one integer runs much faster than on two keys (10M
/// requests, 14 values: 7.0 s against 9.7 s for the pass), and a faster consumer of a
/// shared scan leaves less in the scan's buffer. The key packed is the class index when
/// it is a key, else the first text key, by its code in polars' global categories
/// (`TextCodes`). Nothing else changes: the frames are as if grouped by the keys and the
/// bucket.
pub fn histogram_queries(
    lf: &LazyFrame,
    fine: &[String],
    values: &[String],
) -> PolarsResult<Vec<LazyFrame>> {
    let packed = packed_key(lf, fine)?;
    let packed_name = packed.as_ref().map(|(k, _)| k.as_str());
    let others: Vec<String> = fine
        .iter()
        .filter(|k| Some(k.as_str()) != packed_name)
        .cloned()
        .collect();
    let codes = TextCodes::new();
    // A text key is coded once, in the subplan every query shares, not once per query.
    let lf = match &packed {
        Some((key, true)) => lf
            .clone()
            .with_column(codes.encode(col(key.as_str())).alias(CODE_COL)),
        _ => lf.clone(),
    };
    Ok(values
        .iter()
        .map(|v| {
            let mut by = key_exprs(&others);
            let Some((key, text)) = &packed else {
                by.push(bucket_expr(v, BUCKET_SHIFT).alias(BUCKET_COL));
                return lf
                    .clone()
                    .group_by(by)
                    .agg([len().cast(DataType::UInt64).alias(COUNT_COL)])
                    .with_columns(keys_as_text(fine));
            };
            let index = col(if *text { CODE_COL } else { key.as_str() });
            by.push(packed_bucket(index, v).alias(PACKED_COL));
            let (index, bucket) = unpack(col(PACKED_COL));
            let index = if *text { codes.decode(index) } else { index };
            let mut out = key_exprs(&others);
            out.extend([
                index.alias(key.as_str()),
                bucket.alias(BUCKET_COL),
                col(COUNT_COL),
            ]);
            lf.clone()
                .group_by(by)
                .agg([len().cast(DataType::UInt64).alias(COUNT_COL)])
                .select(out)
                .with_columns(keys_as_text(fine))
        })
        .collect())
}

/// The key `histogram_queries` packs with the bucket, and whether it is text (coded):
/// the class index, else the first text key; none when no key is either.
fn packed_key(lf: &LazyFrame, fine: &[String]) -> PolarsResult<Option<(String, bool)>> {
    if fine.iter().any(|k| k == CLASS_INDEX) {
        return Ok(Some((CLASS_INDEX.to_string(), false)));
    }
    if fine.is_empty() {
        return Ok(None);
    }
    let schema = lf.clone().collect_schema()?;
    Ok(fine
        .iter()
        .find(|k| schema.get(k.as_str()) == Some(&DataType::String))
        .map(|k| (k.clone(), true)))
}

/// Text values as small integers: their codes in polars' global categories, which hold
/// each distinct value once for the process (a log's models and channels: a handful).
/// The codes are decoded through the same categories, which `dtype` keeps alive.
struct TextCodes {
    dtype: DataType,
}

impl TextCodes {
    fn new() -> TextCodes {
        TextCodes {
            dtype: DataType::from_categories(Categories::global()),
        }
    }

    /// The value's code (a `u32`), null for a null value.
    fn encode(&self, text: Expr) -> Expr {
        text.cast(self.dtype.clone()).to_physical()
    }

    /// The text of a code (an integer column of the group-by's few rows).
    fn decode(&self, code: Expr) -> Expr {
        let dtype = self.dtype.clone();
        code.cast(DataType::UInt32).map(
            move |c| {
                let codes = c.as_materialized_series().u32()?.clone();
                Categorical32Chunked::from_cats_and_dtype(codes, dtype.clone())
                    .into_series()
                    .cast(&DataType::String)
                    .map(Column::from)
            },
            |_, f| Ok(Field::new(f.name().clone(), DataType::String)),
        )
    }
}

/// Bits of a packed bucket: buckets are in [-2^20, 2^20) (64 bits less `BUCKET_SHIFT`),
/// offset by `PACK_OFFSET` into [2^20, 3·2^20); 0 stands for a null value. Above them,
/// the key (a `u32`) plus one, 0 for a null key (a class name a `--from-sql-result` file
/// holds that the rule table does not; a null label): at most 2^32, so the packed value
/// stays below 2^54.
const PACK_BITS: u32 = 22;
const PACK_OFFSET: i64 = 1 << 21;
const PACKED_COL: &str = "__key_bucket";
/// A text key's code (`TextCodes`), before it is packed.
const CODE_COL: &str = "__key_code";

/// A key and a bucket as one integer, never null.
fn pack(key: Option<u32>, bucket: Option<i64>) -> i64 {
    (key.map_or(0, |k| i64::from(k) + 1) << PACK_BITS) + bucket.map_or(0, |b| b + PACK_OFFSET)
}

/// `pack` of a key (a `u32`) and the bucket of `name`'s value (`bucket_expr`), in one
/// function over a morsel: as expressions, the packing built six more columns per value.
fn packed_bucket(key: Expr, name: &str) -> Expr {
    key.cast(DataType::UInt32).map_many(
        |cols: &mut [Column]| {
            let height = cols[0].len().max(cols[1].len());
            let (keys, values) = (at_height(&cols[0], height), at_height(&cols[1], height));
            // In one chunk each, read as arrays: faster than a column's iterator.
            let (keys, values) = (keys.u32()?.rechunk(), values.f64()?.rechunk());
            let (keys, values) = (keys.downcast_as_array(), values.downcast_as_array());
            let packed = keys
                .iter()
                .zip(values.iter())
                .map(|(k, v)| pack(k.copied(), v.map(|&x| bucket_of(value_of(x), BUCKET_SHIFT))));
            Ok(Int64Chunked::from_iter_values(PACKED_COL.into(), packed).into_column())
        },
        &[col(name).cast(DataType::Float64)],
        |_, _| Ok(Field::new(PACKED_COL.into(), DataType::Int64)),
    )
}

/// `pack`'s key (a `u32`) and bucket.
fn unpack(packed: Expr) -> (Expr, Expr) {
    let high = packed.clone().floor_div(lit(1i64 << PACK_BITS));
    let low = packed - high.clone() * lit(1i64 << PACK_BITS);
    let null_at_zero = |v: Expr, offset: i64| {
        when(v.clone().eq(lit(0i64)))
            .then(lit(NULL).cast(DataType::Int64))
            .otherwise(v - lit(offset))
    };
    (
        null_at_zero(high, 1).cast(DataType::UInt32),
        null_at_zero(low, PACK_OFFSET),
    )
}

/// Between the passes: where every needed rank is, and the percentiles so far.
pub struct Ranks {
    fine: Vec<String>,
    levels: Vec<Level>,
    values: Vec<String>,
    out: Vec<BTreeMap<Key, Vec<Quantiles>>>,
    pending: Vec<Pending>,
    /// Per value, the buckets holding its ranks, at `shift[value]` bits.
    needed: Vec<BTreeSet<i64>>,
    shift: Vec<u32>,
    /// Per value, the rows in its needed buckets (of the finest level).
    needed_rows: Vec<u64>,
    /// `REFINE_ABOVE`, which a test lowers to make every value refined.
    refine_above: u64,
}

impl Ranks {
    /// From pass 1's frames (one per value, in order), the buckets holding the ranks of
    /// p50/p95/p99 (`finish`).
    pub fn locate(
        hists: &[DataFrame],
        fine: &[String],
        levels: &[Level],
        values: &[String],
    ) -> PolarsResult<Ranks> {
        Ranks::locate_at(hists, fine, levels, values, &QUANTILES)
    }

    /// From pass 1's frames (one per value, in order), the buckets holding the ranks of
    /// `quantiles` (`finish_quantiles`).
    pub fn locate_at(
        hists: &[DataFrame],
        fine: &[String],
        levels: &[Level],
        values: &[String],
        quantiles: &[f64],
    ) -> PolarsResult<Ranks> {
        let empty = Quantiles::empty(quantiles.len());
        // A level without keys has its one group even when there are no rows, as a polars
        // `select` of aggregates has its one row.
        let mut out: Vec<BTreeMap<Key, Vec<Quantiles>>> = levels
            .iter()
            .map(|level| {
                let mut m = BTreeMap::new();
                if level.is_empty() {
                    m.insert(vec![], vec![empty.clone(); values.len()]);
                }
                m
            })
            .collect();

        // Rolled up per level: (key, value) → bucket → rows.
        let mut rolled: Vec<BTreeMap<(Key, usize), BTreeMap<i64, u64>>> =
            vec![BTreeMap::new(); levels.len()];
        for (vi, df) in hists.iter().enumerate() {
            let keys = key_columns(df, fine)?;
            let buckets = df.column(BUCKET_COL)?.i64()?;
            let counts = df.column(COUNT_COL)?.u64()?;
            for (row, key) in keys.iter().enumerate() {
                let count = counts.get(row).unwrap_or(0);
                for (li, level) in levels.iter().enumerate() {
                    let hist = rolled[li].entry((project(key, level), vi)).or_default();
                    // A group whose values are all null still appears (with n = 0).
                    if let Some(b) = buckets.get(row) {
                        *hist.entry(b).or_default() += count;
                    }
                }
            }
        }

        let mut pending = vec![];
        let mut needed: Vec<BTreeSet<i64>> = vec![BTreeSet::new(); values.len()];
        for (li, per_key) in rolled.iter().enumerate() {
            for ((key, vi), hist) in per_key {
                let n: u64 = hist.values().sum();
                let slot = out[li]
                    .entry(key.clone())
                    .or_insert_with(|| vec![empty.clone(); values.len()]);
                slot[*vi].n = n;
                if n == 0 {
                    continue;
                }
                for (qi, q) in quantiles.iter().enumerate() {
                    // As polars does: the lower index by truncation, the upper by ceiling.
                    let float_idx = (n - 1) as f64 * q;
                    let idx = (float_idx as u64).min(n - 1);
                    let top = (float_idx.ceil() as u64).min(n - 1);
                    let lower = locate(hist, idx);
                    let upper = locate(hist, top);
                    needed[*vi].insert(lower.bucket);
                    needed[*vi].insert(upper.bucket);
                    pending.push(Pending {
                        level: li,
                        key: key.clone(),
                        value: *vi,
                        quantile: qi,
                        float_idx,
                        idx,
                        lower,
                        upper,
                    });
                }
            }
        }
        let mut needed_rows = vec![0; values.len()];
        for (vi, df) in hists.iter().enumerate() {
            let buckets = df.column(BUCKET_COL)?.i64()?;
            let counts = df.column(COUNT_COL)?.u64()?;
            for (b, c) in buckets.iter().zip(counts.iter()) {
                if b.is_some_and(|b| needed[vi].contains(&b)) {
                    needed_rows[vi] += c.unwrap_or(0);
                }
            }
        }
        Ok(Ranks {
            fine: fine.to_vec(),
            levels: levels.to_vec(),
            values: values.to_vec(),
            out,
            pending,
            shift: vec![BUCKET_SHIFT; values.len()],
            needed,
            needed_rows,
            refine_above: REFINE_ABOVE,
        })
    }

    /// Pass 2: per value with a needed bucket, only the rows in those buckets, one row
    /// per distinct (fine key, value). To be collected together, in order.
    pub fn queries(&self, lf: &LazyFrame) -> Vec<LazyFrame> {
        (0..self.values.len())
            .filter(|&vi| !self.needed[vi].is_empty())
            .map(|vi| self.in_needed(lf, vi, Keep::Value))
            .collect()
    }

    /// Rows per (fine key, `keep` of the value) among the rows of value `vi` in its
    /// needed buckets.
    fn in_needed(&self, lf: &LazyFrame, vi: usize, keep: Keep) -> LazyFrame {
        in_buckets(
            lf,
            &self.fine,
            &self.values[vi],
            self.shift[vi],
            &self.needed[vi],
            keep,
        )
    }

    /// The values whose needed buckets hold more than `REFINE_ABOVE` rows: pass 2 would
    /// hold too many distinct values of theirs.
    fn to_refine(&self) -> Vec<usize> {
        (0..self.values.len())
            .filter(|&vi| {
                self.shift[vi] == BUCKET_SHIFT && self.needed_rows[vi] > self.refine_above
            })
            .collect()
    }

    /// Between passes 1 and 2, only where a value's needed buckets hold many rows: per such
    /// value, the rows of those buckets per finer bucket (512 to a bucket), one query each,
    /// to be collected together and given to `refined`. None for a small log.
    pub fn refine_queries(&self, lf: &LazyFrame) -> Vec<LazyFrame> {
        self.to_refine()
            .into_iter()
            .map(|vi| self.in_needed(lf, vi, Keep::Bucket(FINE_SHIFT)))
            .collect()
    }

    /// Each rank of a refined value moved to its finer bucket, from the frames of
    /// `refine_queries` (in order): pass 2 then keeps only the rows of those.
    pub fn refined(&mut self, frames: &[DataFrame]) -> PolarsResult<()> {
        let per_bucket = 1i64 << (BUCKET_SHIFT - FINE_SHIFT);
        for (vi, df) in self.to_refine().into_iter().zip(frames) {
            // Per level: (key, bucket) → finer bucket → rows.
            let mut rolled: Vec<BTreeMap<(Key, i64), Counts>> =
                vec![BTreeMap::new(); self.levels.len()];
            let keys = key_columns(df, &self.fine)?;
            let fines = df.column(BUCKET_COL)?.i64()?;
            let counts = df.column(COUNT_COL)?.u64()?;
            for (row, key) in keys.iter().enumerate() {
                let Some(f) = fines.get(row) else { continue };
                let count = counts.get(row).unwrap_or(0);
                for (li, level) in self.levels.iter().enumerate() {
                    *rolled[li]
                        .entry((project(key, level), f.div_euclid(per_bucket)))
                        .or_default()
                        .entry(f)
                        .or_default() += count;
                }
            }
            let mut needed = BTreeSet::new();
            for p in self.pending.iter_mut().filter(|p| p.value == vi) {
                for r in [&mut p.lower, &mut p.upper] {
                    let hist = &rolled[p.level][&(p.key.clone(), r.bucket)];
                    *r = locate(hist, r.offset);
                    needed.insert(r.bucket);
                }
            }
            self.needed[vi] = needed;
            self.shift[vi] = FINE_SHIFT;
        }
        Ok(())
    }

    /// `refine_queries` and `refined` in one pass of their own.
    pub fn refine(&mut self, lf: &LazyFrame) -> PolarsResult<()> {
        let frames = collect_all(self.refine_queries(lf))?;
        self.refined(&frames)
    }

    /// p50/p95/p99 (the ranks `locate` found), from pass 2's frames.
    pub fn finish(self, exact: &[DataFrame]) -> PolarsResult<Vec<BTreeMap<Key, Vec<Pct>>>> {
        Ok(self
            .finish_quantiles(exact)?
            .into_iter()
            .map(|level| {
                level
                    .into_iter()
                    .map(|(k, qs)| (k, qs.iter().map(Quantiles::pct).collect()))
                    .collect()
            })
            .collect())
    }

    /// The quantiles `locate_at` was asked for, from pass 2's frames.
    pub fn finish_quantiles(
        mut self,
        exact: &[DataFrame],
    ) -> PolarsResult<Vec<BTreeMap<Key, Vec<Quantiles>>>> {
        let which = self
            .needed
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_empty())
            .map(|(vi, _)| vi);
        // Per level: (key, value, bucket) → value's order key → rows.
        let mut found: Vec<BTreeMap<(Key, usize, i64), Counts>> =
            vec![BTreeMap::new(); self.levels.len()];
        for (df, vi) in exact.iter().zip(which) {
            let keys = key_columns(df, &self.fine)?;
            let vals = df.column(VALUE_COL)?.f64()?;
            let counts = df.column(COUNT_COL)?.u64()?;
            for (row, key) in keys.iter().enumerate() {
                let Some(x) = vals.get(row) else { continue };
                let count = counts.get(row).unwrap_or(0);
                for (li, level) in self.levels.iter().enumerate() {
                    *found[li]
                        .entry((project(key, level), vi, bucket_of(x, self.shift[vi])))
                        .or_default()
                        .entry(order_key(x))
                        .or_default() += count;
                }
            }
        }

        for p in self.pending {
            let at = |r: Rank| -> f64 {
                let values = &found[p.level][&(p.key.clone(), p.value, r.bucket)];
                let mut seen = 0;
                for (k, c) in values {
                    seen += c;
                    if seen > r.offset {
                        return from_order_key(*k);
                    }
                }
                unreachable!("pass 2 found every value pass 1 counted in the bucket")
            };
            let v = super::interpolate(p.float_idx, p.idx, at(p.lower), at(p.upper));
            let slot = &mut self.out[p.level].get_mut(&p.key).expect("entered above")[p.value];
            slot.at[p.quantile] = Some(round3(v));
        }
        Ok(self.out)
    }
}

/// Rows per (fine key, `keep` of the value) among the rows whose `value` is in one of
/// the buckets `needed` (at `shift` bits).
pub(super) fn in_buckets(
    lf: &LazyFrame,
    fine: &[String],
    value: &str,
    shift: u32,
    needed: &BTreeSet<i64>,
    keep: Keep,
) -> LazyFrame {
    let (_, name) = keep.field();
    // `keep` where the value is in a wanted bucket, kept where it is not null.
    // Filtered after the projection, not on the bucket itself: that filter would be
    // pushed down into the subplan the pass's queries share, to meet a predicate the
    // plan has (an incident window, explain's cohort), and each query would then read
    // the file for itself.
    let mut cols = key_exprs(fine);
    cols.push(kept(value, shift, needed, keep).alias(name));
    let mut by = key_exprs(fine);
    by.push(col(name));
    lf.clone()
        .select(cols)
        .filter(col(name).is_not_null())
        .group_by(by)
        .agg([len().cast(DataType::UInt64).alias(COUNT_COL)])
        .with_columns(keys_as_text(fine))
}

/// The bucket holding the 0-based `rank`, and the rank's offset within it.
fn locate(hist: &BTreeMap<i64, u64>, rank: u64) -> Rank {
    let mut before = 0;
    for (&bucket, &count) in hist {
        if rank < before + count {
            return Rank {
                bucket,
                offset: rank - before,
            };
        }
        before += count;
    }
    unreachable!("rank {rank} is below the histogram's total {before}")
}

pub(crate) fn from_order_key(k: i64) -> f64 {
    let b = if k < 0 { (-1 - k) + i64::MIN } else { k };
    f64::from_bits(b as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A uniform draw in [0, 1) from a seeded linear congruential stream.
    fn uniform(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A histogram keyed by the class index (packed with the bucket in one integer) has
    /// the same rows as one grouped by the class and the bucket as two keys: null classes
    /// and values, negative values, zeros, the extreme floats and infinities included.
    #[test]
    fn a_packed_class_and_bucket_equal_the_two_keys() {
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
        let fine = [CLASS_INDEX.to_string()];
        let sorted = |df: DataFrame| {
            df.lazy()
                .select([col(CLASS_INDEX), col(BUCKET_COL), col(COUNT_COL)])
                .sort([CLASS_INDEX, BUCKET_COL], Default::default())
                .collect()
                .unwrap()
        };
        let packed =
            collect_all(histogram_queries(&lf, &fine, &["x".to_string()]).unwrap()).unwrap();
        let two_keys = collect_all(vec![lf
            .clone()
            .group_by([
                col(CLASS_INDEX),
                bucket_expr("x", BUCKET_SHIFT).alias(BUCKET_COL),
            ])
            .agg([len().cast(DataType::UInt64).alias(COUNT_COL)])
            .with_columns(keys_as_text(&fine))])
        .unwrap();
        let (packed, two_keys) = (sorted(packed[0].clone()), sorted(two_keys[0].clone()));
        assert!(packed.equals_missing(&two_keys), "{packed}\n{two_keys}");
        // Seven classes (null too), each with ten buckets: the twelve values less the two
        // zeros made one and 1 and its next float sharing a bucket.
        assert_eq!(packed.height(), 7 * 10);
    }

    /// A text key is packed with the bucket by its code (`TextCodes`): the histogram holds
    /// the same rows as one grouped by the text and the bucket, a null text and values
    /// that only differ in case or space included, and a second key beside it stays a
    /// key of its own.
    #[test]
    fn a_packed_text_key_and_bucket_equal_the_two_keys() {
        let names = [
            Some("gpt-4.1"),
            None,
            Some("GPT-4.1"),
            Some("gpt-4.1 "),
            Some(""),
            Some("claude-sonnet-4"),
        ];
        let mut text = vec![];
        let mut period = vec![];
        let mut values = vec![];
        for i in 0..900usize {
            text.push(names[i % names.len()]);
            period.push(((i / 7) % 4) as i64 * 3_600_000);
            values.push(match i % 5 {
                0 => None,
                k => Some(k as f64 * 10f64.powi((i % 11) as i32 - 3)),
            });
        }
        let lf = df!("model" => text, "__period" => period, "x" => values)
            .unwrap()
            .lazy();
        for fine in [
            vec!["model".to_string()],
            vec!["__period".to_string(), "model".to_string()],
        ] {
            let mut order = fine.clone();
            order.push(BUCKET_COL.to_string());
            let sorted = |df: DataFrame| {
                let mut cols: Vec<Expr> = order.iter().map(|k| col(k.as_str())).collect();
                cols.push(col(COUNT_COL));
                df.lazy()
                    .select(cols)
                    .sort(order.clone(), Default::default())
                    .collect()
                    .unwrap()
            };
            let packed =
                collect_all(histogram_queries(&lf, &fine, &["x".to_string()]).unwrap()).unwrap();
            let mut by = key_exprs(&fine);
            by.push(bucket_expr("x", BUCKET_SHIFT).alias(BUCKET_COL));
            let two_keys = collect_all(vec![lf
                .clone()
                .group_by(by)
                .agg([len().cast(DataType::UInt64).alias(COUNT_COL)])
                .with_columns(keys_as_text(&fine))])
            .unwrap();
            let (packed, two_keys) = (sorted(packed[0].clone()), sorted(two_keys[0].clone()));
            assert!(packed.equals_missing(&two_keys), "{packed}\n{two_keys}");
            assert_eq!(packed.column("model").unwrap().dtype(), &DataType::String);
            assert!(packed.column("model").unwrap().null_count() > 0);
        }
    }

    #[test]
    fn order_keys_keep_the_order_of_floats() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -1e-300,
            0.0,
            1e-300,
            1.0,
            1.0000000000000002,
            5e3,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) < order_key(w[1]), "{} < {}", w[0], w[1]);
            assert!(bucket_of(w[0], BUCKET_SHIFT) <= bucket_of(w[1], BUCKET_SHIFT));
        }
        for x in xs {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
            // The shift is the floor of the division, below zero too.
            for shift in [FINE_SHIFT, BUCKET_SHIFT] {
                assert_eq!(
                    bucket_of(x, shift),
                    order_key(x).div_euclid(1 << shift),
                    "{x}"
                );
            }
        }
        assert_eq!(value_of(-0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(value_of(-2.5), -2.5);
    }

    /// The polars expression and the Rust function put every value in the same bucket.
    #[test]
    fn polars_and_rust_agree_on_buckets() {
        let xs = vec![
            -3.5f64, -0.0, 0.0, 1e-9, 0.5, 1.0, 999.999, 1234.5, 6.1e4, 1e12,
        ];
        let df = df!("x" => xs.clone()).unwrap();
        let got = df
            .lazy()
            .select([bucket_expr("x", BUCKET_SHIFT).alias("b")])
            .collect()
            .unwrap();
        let got: Vec<i64> = got
            .column("b")
            .unwrap()
            .i64()
            .unwrap()
            .into_no_null_iter()
            .collect();
        let want: Vec<i64> = xs
            .iter()
            .map(|x| bucket_of(if *x == 0.0 { 0.0 } else { *x }, BUCKET_SHIFT))
            .collect();
        assert_eq!(got, want);
    }

    /// Any list of quantiles (the report's 201 CDF steps) equals the type-7 quantile of the
    /// sorted values, ties, negatives and a long tail included.
    #[test]
    fn any_quantiles_equal_type_7_of_the_sorted_values() {
        let mut seed = 7u64;
        let mut x: Vec<Option<f64>> = vec![];
        for i in 0..3001 {
            let r = uniform(&mut seed);
            x.push(match i % 5 {
                0 => None,
                1 => Some(250.0),
                2 => Some(-r * 10.0),
                _ => Some(r.powi(3) * 1e5),
            });
        }
        let qs: Vec<f64> = (0..=200).map(|k| k as f64 / 200.0).collect();
        let lf = df!("x" => x.clone()).unwrap().lazy();
        let values = ["x".to_string()];
        let hist = collect_all(histogram_queries(&lf, &[], &values).unwrap()).unwrap();
        let ranks = Ranks::locate_at(&hist, &[], &[vec![]], &values, &qs).unwrap();
        let exact = collect_all(ranks.queries(&lf)).unwrap();
        let got = ranks.finish_quantiles(&exact).unwrap().pop().unwrap();
        let got = &got[&vec![]][0];
        let mut sorted: Vec<f64> = x.into_iter().flatten().collect();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(got.n, sorted.len() as u64);
        let want: Vec<Option<f64>> = qs
            .iter()
            .map(|&q| crate::stats::quantile7(&sorted, q).map(round3))
            .collect();
        assert_eq!(got.at, want);
    }

    /// Refined buckets (a large log's pass 2) give the same quantiles, at every level.
    #[test]
    fn refined_buckets_give_the_same_quantiles() {
        let n = 4000usize;
        let mut g = vec![];
        let mut x: Vec<Option<f64>> = vec![];
        let mut seed = 9u64;
        for i in 0..n {
            let r = uniform(&mut seed);
            g.push(["a", "b"][i % 2]);
            x.push(match i % 9 {
                0 => None,
                1 => Some(700.0),
                2 => Some(-r * 50.0),
                _ => Some(1000.0 + r * 3.0),
            });
        }
        let lf = df!("g" => g, "x" => x).unwrap().lazy();
        let fine = vec!["g".to_string()];
        let levels = vec![vec![], vec![0]];
        let values = ["x".to_string()];
        let qs: Vec<f64> = (0..=20).map(|k| k as f64 / 20.0).collect();
        let run = |refine: bool| {
            let hist = collect_all(histogram_queries(&lf, &fine, &values).unwrap()).unwrap();
            let mut ranks = Ranks::locate_at(&hist, &fine, &levels, &values, &qs).unwrap();
            if refine {
                ranks.refine_above = 0;
                assert_eq!(ranks.to_refine(), vec![0]);
            }
            ranks.refine(&lf).unwrap();
            let exact = collect_all(ranks.queries(&lf)).unwrap();
            ranks.finish_quantiles(&exact).unwrap()
        };
        let (plain, refined) = (run(false), run(true));
        assert_eq!(plain, refined);
        assert!(plain[1].len() == 2 && plain[1].values().all(|q| q[0].n > 1000));
    }

    /// Against polars' own in-memory quantile, on values spread over many buckets, piled
    /// into one, tied, negative and null, at three levels of grouping.
    #[test]
    fn equals_polars_quantile_at_every_level() {
        let n = 5000usize;
        let mut g = vec![];
        let mut h = vec![];
        let mut x: Vec<Option<f64>> = vec![];
        let mut seed = 42u64;
        for i in 0..n {
            let r = uniform(&mut seed);
            g.push(["a", "b", "c"][i % 3]);
            h.push(if i % 7 == 0 { "x" } else { "y" });
            x.push(match i % 10 {
                0 => None,
                1 => Some(500.0),             // a pile of ties
                2 => Some(-r * 100.0),        // negatives
                3 => Some((r * 1e4).round()), // integers
                _ => Some(r.powi(4) * 1e6),   // a long tail
            });
        }
        let df = df!("g" => g, "h" => h, "x" => x).unwrap();
        let fine = vec!["g".to_string(), "h".to_string()];
        let levels = vec![vec![], vec![0], vec![0, 1]];
        let got =
            percentiles_by_levels(df.clone().lazy(), &fine, &levels, &["x".to_string()]).unwrap();
        for (li, level) in levels.iter().enumerate() {
            let keys: Vec<Expr> = level.iter().map(|&i| col(fine[i].as_str())).collect();
            let aggs = vec![
                col("x").count().cast(DataType::UInt64).alias("n"),
                col("x")
                    .quantile(lit(0.5), QuantileMethod::Linear)
                    .alias("p50"),
                col("x")
                    .quantile(lit(0.95), QuantileMethod::Linear)
                    .alias("p95"),
                col("x")
                    .quantile(lit(0.99), QuantileMethod::Linear)
                    .alias("p99"),
            ];
            let want = if keys.is_empty() {
                df.clone().lazy().select(aggs).collect().unwrap()
            } else {
                df.clone()
                    .lazy()
                    .group_by(keys)
                    .agg(aggs)
                    .collect()
                    .unwrap()
            };
            let names: Vec<String> = level.iter().map(|&i| fine[i].clone()).collect();
            let wkeys = key_columns(&want, &names).unwrap();
            assert_eq!(wkeys.len(), got[li].len());
            for (row, key) in wkeys.iter().enumerate() {
                let p = &got[li][key][0];
                let f = |c: &str| want.column(c).unwrap().f64().unwrap().get(row).map(round3);
                assert_eq!(
                    p.n,
                    want.column("n").unwrap().u64().unwrap().get(row).unwrap()
                );
                assert_eq!(
                    (p.p50, p.p95, p.p99),
                    (f("p50"), f("p95"), f("p99")),
                    "{key:?}"
                );
            }
        }
    }
}
