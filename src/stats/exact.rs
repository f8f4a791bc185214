//! Exact type-7 percentiles in bounded memory, in two streaming passes over the plan
//! (three on a large log of fine-grained timings).
//!
//! polars' `quantile` is not a streaming aggregate: it holds every value of a group. At a
//! hundred million requests and a dozen metrics that is tens of gigabytes. Instead:
//!
//! 1. **Histogram.** Each value is put in a bucket: the top bits of its float's bit
//!    pattern, made order-preserving (`order_key`). One function over each morsel of the
//!    stream counts rows per (group, bucket) (`histogram`). Buckets are fine (512 per
//!    power of two, so a bucket spans at most 0.2 % of its values) and few (at most a few
//!    thousand per metric and group).
//! 2. **The ranks' buckets.** From the counts, the two ranks type 7 interpolates between
//!    (⌊h⌋ and ⌈h⌉ for h = (n − 1)·q) fall in known buckets at known offsets. A second
//!    streaming pass keeps only the rows in those buckets and counts each distinct value
//!    (`kept`); the values at the offsets are then exact.
//!
//! The rows of a bucket grow with the log, and pass 2 holds each distinct value it keeps.
//! Where the buckets of a value's ranks hold more than 2^20 rows, pass 2 counts their rows
//! per finer bucket (512 to a bucket) and, beside that, keeps their values only while it
//! has met at most 2^20 distinct (key, value) pairs (`CAP`). A log's timings have a
//! resolution (0.1 ms, 1 ms), so on most logs the values stay within the cap, however many
//! rows hold them, and the value is done. Where they pass it, the finer buckets say which
//! hold the ranks, and a third pass keeps only those (`Ranks::read`). Memory is bounded by
//! the number of buckets, the cap, and the distinct values in the few finer buckets that
//! hold a needed rank, never by the number of rows. The result equals polars' in-memory
//! `quantile(q, Linear)` (the same interpolation, in the same float steps).
//!
//! On a large log, pass 1 can also keep the values in the buckets a sample of the log's
//! first rows says the ranks fall in (`guess`, `Histograms::keeping`); a value whose
//! kept rows turn out to hold every row of each bucket its ranks are in needs no pass 2
//! (`Ranks::offer`), and one whose guess missed takes pass 2 as above.
//!
//! Percentiles for several levels of grouping (overall, per class, per group, per group
//! and class) come from one histogram at the finest level, rolled up: one pair of passes
//! however many levels are asked for. Any list of quantiles can be asked for (the
//! report's CDFs ask for nine); p50/p95/p99 are the usual three. The histogram alone
//! gives exact points of a CDF (`cdf_points`).

use std::collections::{BTreeMap, BTreeSet};

use polars::prelude::*;

use super::histogram;
use super::kept::{Kept, Wanted};
use super::{collect_all, key_columns, Key, QUANTILES};
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

/// Bits below a refined bucket (`Ranks::read`): 512 of them to a bucket.
pub(super) const FINE_SHIFT: u32 = 34;
/// Above this many rows in the buckets of a value's ranks, pass 2 keeps their values only
/// up to `CAP` distinct (key, value) pairs, and counts their rows per finer bucket for a
/// third pass should they be more: pass 2 holds each distinct value it keeps, and the
/// rows of a bucket grow with the log (at 100M requests, millions per value).
pub(super) const REFINE_ABOVE: u64 = 1 << 20;

/// The distinct (key, value) pairs a capped value keeps at most: as many as the rows an
/// uncapped value may keep. On the generated
/// 100M-request log (0.1 ms resolution) every value `analyze` asks for stays within it;
/// at 2^18, one did not.
const CAP: usize = REFINE_ABOVE as usize;

pub(super) fn bucket_of(x: f64, shift: u32) -> i64 {
    // An arithmetic shift: the floor of the division by 2^shift.
    order_key(x) >> shift
}

/// The value as both passes see it: −0 made 0 (so a value has one bucket). IEEE addition
/// gives −0 + 0 = 0 and leaves every other value as it is.
#[cfg(test)]
fn value_of(x: f64) -> f64 {
    x + 0.0
}

/// The bucket of `name`'s value (`value_of`, `bucket_of`), null for a null value.
///
/// Computed by one function over the values, not as polars expressions: those (an
/// equality and a choice for −0, a comparison, a subtraction and a choice for the order,
/// a division) built five columns per value and pass, for every request.
#[cfg(test)]
pub(super) fn bucket_expr(name: &str, shift: u32) -> Expr {
    col(name).cast(DataType::Float64).map(
        move |c: Column| {
            let buckets: Int64Chunked =
                polars::chunked_array::ops::arity::unary_elementwise_values(c.f64()?, |x: f64| {
                    bucket_of(value_of(x), shift)
                });
            Ok(buckets.into_column())
        },
        |_, f| Ok(Field::new(f.name().clone(), DataType::Int64)),
    )
}

/// Rows per bucket, or per value's order key, in order.
pub type Counts = BTreeMap<i64, u64>;

/// One level of grouping: which of the fine keys it keeps (indices into them).
pub type Level = Vec<usize>;

/// Per level: (key, value) → bucket → rows (pass 1's histograms rolled up).
type Rolled = Vec<BTreeMap<(Key, usize), Counts>>;

/// Per level: (key, value, bucket) → value's order key → rows (the values found).
type FoundAt = Vec<BTreeMap<(Key, usize, i64), Counts>>;

fn project(key: &Key, level: &Level) -> Key {
    level.iter().map(|&i| key[i].clone()).collect()
}

/// Where one needed rank is: its bucket, how many values of the series come before it
/// in that bucket, and how many the bucket holds.
#[derive(Clone, Copy)]
struct Rank {
    bucket: i64,
    offset: u64,
    rows: u64,
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
    let hist = histogram::collect(&lf, fine, values)?;
    let mut ranks = Ranks::locate(&hist, fine, levels, values)?;
    ranks.resolve(&lf)?;
    ranks.finish()
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
    /// Per value, what the next pass asks of it.
    stage: Vec<Stage>,
    /// The pass under way: what it keeps, and of which values (by index).
    pass: Option<(Kept, Vec<usize>)>,
    /// The distinct (key, value) pairs a capped value may keep: `CAP`, which a test
    /// lowers.
    cap: usize,
    /// Per value, once done: rows per (fine key, value) in the buckets of its ranks.
    found: Vec<Option<DataFrame>>,
}

/// What the next pass asks of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Its values in its needed buckets: they hold at most `REFINE_ABOVE` rows, or they
    /// are finer buckets.
    Values,
    /// Its needed buckets hold more rows: their rows per finer bucket, and their values
    /// while the distinct pairs stay within the cap. On most logs they do (a log's
    /// timings have a resolution, often 0.1 ms or 1 ms, so a bucket holds few distinct
    /// values however many rows) and the value is done in that one pass; otherwise the
    /// finer buckets tell where its ranks are, and a pass more keeps their values.
    Capped,
    /// Its values at its ranks are read (or it has no rows).
    Done,
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

        // Each value's part on its own (they share no entry), on the machine's threads.
        let mut rolled: Rolled = vec![BTreeMap::new(); levels.len()];
        let parts = super::par_map(hists.iter().enumerate().collect(), |(vi, df)| {
            rolled_up(vi, df, fine, levels)
        });
        for part in parts {
            for (all, part) in rolled.iter_mut().zip(part?) {
                all.extend(part);
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
        let stage = (0..values.len())
            .map(|vi| {
                if needed[vi].is_empty() {
                    Stage::Done
                } else if needed_rows[vi] > REFINE_ABOVE {
                    Stage::Capped
                } else {
                    Stage::Values
                }
            })
            .collect();
        Ok(Ranks {
            fine: fine.to_vec(),
            levels: levels.to_vec(),
            values: values.to_vec(),
            out,
            pending,
            shift: vec![BUCKET_SHIFT; values.len()],
            needed,
            stage,
            pass: None,
            cap: CAP,
            found: vec![None; values.len()],
        })
    }

    /// The query of the next pass, to be collected with any other queries of the same
    /// pass and then `read`; none once every value is done. It keeps, per value not yet
    /// done (`Stage`), its values in its needed buckets; where those buckets hold many
    /// rows, their rows per finer bucket too, and their values only up to `cap` distinct
    /// ones (`kept`).
    pub fn queries(&mut self, lf: &LazyFrame) -> PolarsResult<Vec<LazyFrame>> {
        let mut wanted = vec![];
        let mut which = vec![];
        for vi in 0..self.values.len() {
            let cap = match self.stage[vi] {
                Stage::Done => continue,
                Stage::Values => None,
                Stage::Capped => Some(self.cap),
            };
            wanted.push(Wanted {
                value: self.values[vi].clone(),
                shift: self.shift[vi],
                needed: self.needed[vi].iter().copied().collect(),
                cap,
            });
            which.push(vi);
        }
        if wanted.is_empty() {
            return Ok(vec![]);
        }
        let kept = Kept::new(lf, &self.fine, wanted)?;
        let query = kept.query();
        self.pass = Some((kept, which));
        Ok(vec![query])
    }

    /// Reads what the pass of `queries` found, once collected. A value whose distinct
    /// values stayed within the cap is done; one that passed it has its ranks moved to
    /// their finer buckets, whose values the next pass keeps.
    pub fn read(&mut self) -> PolarsResult<()> {
        let Some((kept, which)) = self.pass.take() else {
            return Ok(());
        };
        for (vi, found) in which.into_iter().zip(kept.found()?) {
            match self.stage[vi] {
                Stage::Done => {}
                Stage::Values => {
                    self.found[vi] = Some(found.values);
                    self.stage[vi] = Stage::Done;
                }
                Stage::Capped => match found.finer {
                    Some(finer) if found.passed => {
                        self.refine_value(vi, &finer)?;
                        self.stage[vi] = Stage::Values;
                    }
                    _ => {
                        self.found[vi] = Some(found.values);
                        self.stage[vi] = Stage::Done;
                    }
                },
            }
        }
        Ok(())
    }

    /// Values pass 1 kept on a guess (`Histograms::keeping`; per value, in order, none
    /// where it kept none): a value whose kept rows hold every row of each bucket its
    /// ranks are in is done, with no values pass. The others are left as they were.
    pub fn offer(&mut self, kept: Vec<Option<DataFrame>>) -> PolarsResult<()> {
        let offered: Vec<(usize, Option<DataFrame>)> = kept.into_iter().enumerate().collect();
        let full = super::par_map(offered, |(vi, df)| match df {
            Some(df) if self.stage[vi] != Stage::Done => self.in_full(vi, &df),
            _ => Ok(None),
        });
        for (vi, found) in full.into_iter().enumerate() {
            if let Some(found) = found? {
                self.found[vi] = Some(found);
                self.stage[vi] = Stage::Done;
            }
        }
        Ok(())
    }

    /// The rows of `kept` (keys, `__value`, `__count`) in value `vi`'s needed buckets,
    /// when they are all the rows of each bucket holding one of its ranks.
    fn in_full(&self, vi: usize, kept: &DataFrame) -> PolarsResult<Option<DataFrame>> {
        let needed = &self.needed[vi];
        let shift = self.shift[vi];
        let values = kept.column(VALUE_COL)?.f64()?;
        let mask: BooleanChunked = values
            .iter()
            .map(|x| x.map(|x| needed.contains(&bucket_of(x, shift))))
            .collect();
        let kept = kept.filter(&mask)?;
        // Per (level, key, bucket) of a rank: the rows kept.
        let mut rows: BTreeMap<(usize, Key, i64), u64> = BTreeMap::new();
        let keys = key_columns(&kept, &self.fine)?;
        let values = kept.column(VALUE_COL)?.f64()?;
        let counts = kept.column(COUNT_COL)?.u64()?;
        for (row, key) in keys.iter().enumerate() {
            let (Some(x), Some(n)) = (values.get(row), counts.get(row)) else {
                continue;
            };
            for (li, level) in self.levels.iter().enumerate() {
                *rows
                    .entry((li, project(key, level), bucket_of(x, shift)))
                    .or_default() += n;
            }
        }
        let full = self
            .pending
            .iter()
            .filter(|p| p.value == vi)
            .flat_map(|p| [(p, p.lower), (p, p.upper)])
            .all(|(p, r)| rows.get(&(p.level, p.key.clone(), r.bucket)) == Some(&r.rows));
        Ok(full.then_some(kept))
    }

    /// Whether every value has its values at its ranks (`queries` asks for nothing more).
    pub fn done(&self) -> bool {
        self.stage.iter().all(|s| *s == Stage::Done)
    }

    /// `queries` and `read` until `done`, each pass a scan of its own: one on a small log,
    /// two where a value's needed buckets hold many rows and many distinct values.
    pub fn resolve(&mut self, lf: &LazyFrame) -> PolarsResult<()> {
        while !self.done() {
            collect_all(self.queries(lf)?)?;
            self.read()?;
        }
        Ok(())
    }

    /// Each rank of value `vi` moved to its finer bucket, from the rows per finer bucket
    /// of its needed buckets: the next pass keeps only the rows of those.
    fn refine_value(&mut self, vi: usize, df: &DataFrame) -> PolarsResult<()> {
        let per_bucket = 1i64 << (BUCKET_SHIFT - FINE_SHIFT);
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
        Ok(())
    }

    /// p50/p95/p99 (the ranks `locate` found), once `done`.
    pub fn finish(self) -> PolarsResult<Vec<BTreeMap<Key, Vec<Pct>>>> {
        Ok(self
            .finish_quantiles()?
            .into_iter()
            .map(|level| {
                level
                    .into_iter()
                    .map(|(k, qs)| (k, qs.iter().map(Quantiles::pct).collect()))
                    .collect()
            })
            .collect())
    }

    /// Value `vi`'s rows (`df`: fine keys, `__value`, `__count`) per level.
    fn found_at_levels(&self, vi: usize, df: &DataFrame) -> PolarsResult<FoundAt> {
        let mut found: FoundAt = vec![BTreeMap::new(); self.levels.len()];
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
        Ok(found)
    }

    /// The quantiles `locate_at` was asked for, once `done`.
    pub fn finish_quantiles(mut self) -> PolarsResult<Vec<BTreeMap<Key, Vec<Quantiles>>>> {
        if !self.done() {
            polars_bail!(ComputeError: "percentiles asked for before their values were read");
        }
        // Each value's part on its own (they share no entry), on the machine's threads.
        let mut found: FoundAt = vec![BTreeMap::new(); self.levels.len()];
        let values: Vec<(usize, &DataFrame)> = self
            .found
            .iter()
            .enumerate()
            .filter_map(|(vi, df)| Some((vi, df.as_ref()?)))
            .collect();
        let parts = super::par_map(values, |(vi, df)| self.found_at_levels(vi, df));
        for part in parts {
            for (all, part) in found.iter_mut().zip(part?) {
                all.extend(part);
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

/// Value `vi`'s histogram (`hist`: fine keys, `__bucket`, `__count`) rolled up per level.
fn rolled_up(
    vi: usize,
    hist: &DataFrame,
    fine: &[String],
    levels: &[Level],
) -> PolarsResult<Rolled> {
    let mut rolled: Rolled = vec![BTreeMap::new(); levels.len()];
    let keys = key_columns(hist, fine)?;
    let buckets = hist.column(BUCKET_COL)?.i64()?;
    let counts = hist.column(COUNT_COL)?.u64()?;
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
    Ok(rolled)
}

/// The bucket holding the 0-based `rank`, and the rank's offset within it.
fn locate(hist: &BTreeMap<i64, u64>, rank: u64) -> Rank {
    let mut before = 0;
    for (&bucket, &count) in hist {
        if rank < before + count {
            return Rank {
                bucket,
                offset: rank - before,
                rows: count,
            };
        }
        before += count;
    }
    unreachable!("rank {rank} is below the histogram's total {before}")
}

/// A histogram frame (`Histograms::frames`) without the buckets of infinities and NaNs:
/// the histogram of the finite values alone (a CDF is drawn of those). Their buckets are
/// apart from every finite value's (an exponent of all ones).
pub fn finite_buckets(hist: &DataFrame) -> PolarsResult<DataFrame> {
    let (low, high) = (
        bucket_of(-f64::MAX, BUCKET_SHIFT),
        bucket_of(f64::MAX, BUCKET_SHIFT),
    );
    let buckets = hist.column(BUCKET_COL)?.i64()?;
    let finite: BooleanChunked = buckets
        .iter()
        .map(|b| b.is_none_or(|b| (low..=high).contains(&b)))
        .collect();
    hist.filter(&finite)
}

/// Points of a series' empirical CDF, from its histogram without keys (one of
/// `Histograms::frames`): for each fraction k / `steps`, k = 1…`steps`, the first bucket
/// whose rows and those of the buckets below reach it, as (the largest value the bucket
/// can hold, the fraction of the series' values at most that value). Every point is exact,
/// however coarse the buckets: the values at most a bucket's largest are exactly those in
/// it and below. The last bucket's point is at the series' largest value, `max` (no value
/// of the bucket is above it). None for a series without values.
pub fn cdf_points(hist: &DataFrame, max: f64, steps: usize) -> PolarsResult<Vec<(f64, f64)>> {
    let buckets = hist.column(BUCKET_COL)?.i64()?;
    let counts = hist.column(COUNT_COL)?.u64()?;
    let mut rows: Counts = BTreeMap::new();
    for (b, c) in buckets.iter().zip(counts.iter()) {
        if let (Some(b), Some(c)) = (b, c) {
            *rows.entry(b).or_default() += c;
        }
    }
    let n: u64 = rows.values().sum();
    let mut points = vec![];
    let mut below = 0;
    let mut step = 1;
    for (&bucket, &count) in &rows {
        below += count;
        // The steps this bucket reaches: one point for all of them.
        let mut reached = false;
        while step <= steps && u128::from(below) * steps as u128 >= u128::from(n) * step as u128 {
            reached = true;
            step += 1;
        }
        if reached {
            let largest = from_order_key(((bucket + 1) << BUCKET_SHIFT) - 1);
            points.push((largest.min(max), below as f64 / n as f64));
        }
    }
    Ok(points)
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

    /// Any list of quantiles (201 of them here) equals the type-7 quantile of the
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
        let hist = histogram::collect(&lf, &[], &values).unwrap();
        let mut ranks = Ranks::locate_at(&hist, &[], &[vec![]], &values, &qs).unwrap();
        ranks.resolve(&lf).unwrap();
        let got = ranks.finish_quantiles().unwrap().pop().unwrap();
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

    /// Every CDF point is exact: its fraction is that of the values at most its value;
    /// the points rise, each fraction step k / steps is first reached at one of them, and
    /// the last is at the largest value.
    #[test]
    fn cdf_points_are_points_of_the_empirical_cdf() {
        let mut seed = 5u64;
        let x: Vec<Option<f64>> = (0..5000)
            .map(|i| match i % 7 {
                0 => None,
                1 => Some(42.0),
                2 => Some(-uniform(&mut seed) * 3.0),
                _ => Some((uniform(&mut seed) * 1e4).round() / 10.0),
            })
            .collect();
        let mut sorted: Vec<f64> = x.iter().flatten().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() as f64;
        let max = *sorted.last().unwrap();
        let hist = histogram::collect(&df!("x" => x).unwrap().lazy(), &[], &["x".into()])
            .unwrap()
            .remove(0);
        let steps = 200;
        let points = cdf_points(&hist, max, steps).unwrap();
        assert!(
            points.len() <= steps && points.len() > steps / 2,
            "{}",
            points.len()
        );
        assert_eq!(*points.last().unwrap(), (max, 1.0));
        for (x, f) in &points {
            let at_most = sorted.iter().filter(|v| *v <= x).count();
            assert_eq!(*f, at_most as f64 / n, "at {x}");
        }
        for w in points.windows(2) {
            assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1, "{w:?}");
        }
        // Each point reaches a step the one before it did not.
        let steps_reached = |f: f64| (f * n).round() as usize * steps / sorted.len();
        for w in points.windows(2) {
            assert!(steps_reached(w[1].1) > steps_reached(w[0].1), "{w:?}");
        }
        assert!(steps_reached(points[0].1) >= 1);
        // No values, no points.
        let none = histogram::collect(
            &df!("x" => [None::<f64>]).unwrap().lazy(),
            &[],
            &["x".into()],
        )
        .unwrap()
        .remove(0);
        assert!(cdf_points(&none, 0.0, steps).unwrap().is_empty());
    }

    /// A value whose needed buckets hold many rows (`Stage::Capped`) gives the same
    /// quantiles, at every level, whether its distinct values stay within the cap (one
    /// pass) or pass it (its ranks' finer buckets, then their values: two passes); and a
    /// pass over the cap keeps nothing more.
    #[test]
    fn capped_and_refined_values_give_the_same_quantiles() {
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
        let values = ["x".to_string()];
        let qs: Vec<f64> = (0..=20).map(|k| k as f64 / 20.0).collect();
        // With a key, and without (the report's CDFs): the keys' hash is then a literal.
        for (fine, levels) in [
            (vec!["g".to_string()], vec![vec![], vec![0]]),
            (vec![], vec![vec![]]),
        ] {
            // The quantiles, and how many passes they took after the histogram.
            let run = |cap: Option<usize>| {
                let hist = histogram::collect(&lf, &fine, &values).unwrap();
                let mut ranks = Ranks::locate_at(&hist, &fine, &levels, &values, &qs).unwrap();
                assert_eq!(ranks.stage, vec![Stage::Values], "a small log");
                if let Some(cap) = cap {
                    ranks.stage = vec![Stage::Capped];
                    ranks.cap = cap;
                }
                let mut passes = 0;
                while !ranks.done() {
                    collect_all(ranks.queries(&lf).unwrap()).unwrap();
                    if cap == Some(0) && passes == 0 {
                        // The capped value kept nothing, and has its finer buckets.
                        let (kept, _) = ranks.pass.as_ref().unwrap();
                        let found = kept.found().unwrap();
                        assert!(found[0].passed);
                        assert_eq!(found[0].values.height(), 0);
                        assert!(found[0].finer.as_ref().unwrap().height() > 0);
                    }
                    ranks.read().unwrap();
                    passes += 1;
                }
                (ranks.finish_quantiles().unwrap(), passes)
            };
            let (plain, one) = run(None);
            let (within, capped) = run(Some(1 << 20));
            let (refined, two) = run(Some(0));
            assert_eq!((one, capped, two), (1, 1, 2));
            assert_eq!(plain, within);
            assert_eq!(plain, refined);
            let groups = plain.last().unwrap();
            assert!(groups.values().all(|q| q[0].n > 1000), "{fine:?}");
        }
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

    /// A log of `n` rows in three groups with their own spreads, one value of a log's
    /// resolution (0.1) and one of full float precision; the first `shifted` rows ten
    /// times the rest.
    fn grouped_log(n: usize, shifted: usize) -> LazyFrame {
        let (mut g, mut x, mut y) = (vec![], vec![], vec![]);
        let mut seed = 11u64;
        for i in 0..n {
            let r = uniform(&mut seed);
            let k = i % 3;
            let scale = if i < shifted { 10.0 } else { 1.0 };
            g.push(["a", "b", "c"][k]);
            x.push((i % 13 != 0).then(|| ((r * (k + 1) as f64 * 1e3).round() / 10.0) * scale));
            y.push(Some(uniform(&mut seed).powi(3) * 1e4 * scale));
        }
        df!("g" => g, "x" => x, "y" => y).unwrap().lazy()
    }

    /// Pass 1 on a guess from the first `sample` rows: the ranks, after `offer`.
    fn guessed(lf: &LazyFrame, fine: &[String], levels: &[Level], sample: u64) -> Ranks {
        let values = ["x".to_string(), "y".to_string()];
        let sampled =
            histogram::Histograms::new(&lf.clone().slice(0, sample as IdxSize), fine, &values)
                .unwrap();
        collect_all(vec![sampled.query()]).unwrap();
        let guess = sampled.guess(levels, &QUANTILES);
        let budget = Default::default();
        let h = histogram::Histograms::new(lf, fine, &values)
            .unwrap()
            .keeping(guess, &budget);
        collect_all(vec![h.query()]).unwrap();
        let mut ranks = Ranks::locate(&h.frames().unwrap(), fine, levels, &values).unwrap();
        ranks.offer(h.kept().unwrap()).unwrap();
        ranks
    }

    /// Where the first rows are like the rest, pass 1's kept values hold every rank: no
    /// values pass, and the percentiles of two passes. A sample of no rows has met no
    /// group, so pass 1 keeps every value: no values pass either.
    #[test]
    fn a_guess_that_holds_needs_no_values_pass() {
        let lf = grouped_log(60_000, 0);
        let fine = vec!["g".to_string()];
        let levels = vec![vec![], vec![0]];
        let values = ["x".to_string(), "y".to_string()];
        let two = percentiles_by_levels(lf.clone(), &fine, &levels, &values).unwrap();
        for sample in [12_000, 0] {
            let ranks = guessed(&lf, &fine, &levels, sample);
            assert!(ranks.done(), "{sample}");
            assert_eq!(ranks.finish().unwrap(), two);
        }
    }

    /// Where the first rows are unlike the rest, the guess misses the ranks: the values
    /// pass reads them, and the percentiles are the same.
    #[test]
    fn a_guess_that_misses_leaves_the_values_pass() {
        let fine = vec!["g".to_string()];
        let levels = vec![vec![], vec![0]];
        let values = ["x".to_string(), "y".to_string()];
        let lf = grouped_log(60_000, 12_000);
        let two = percentiles_by_levels(lf.clone(), &fine, &levels, &values).unwrap();
        let mut ranks = guessed(&lf, &fine, &levels, 12_000);
        assert_eq!(ranks.stage, vec![Stage::Values, Stage::Values]);
        ranks.resolve(&lf).unwrap();
        assert_eq!(ranks.finish().unwrap(), two);
    }
}
