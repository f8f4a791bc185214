//! The values at a few ranges of ranks of a series, in bounded memory: what a bootstrap of
//! its percentiles reads.
//!
//! A bootstrap resample's percentile is an order statistic drawn near the percentile's
//! rank: within a few standard deviations of a Beta distribution, a few thousand ranks
//! out of ten million. So pass 1's histogram (`exact`) tells which buckets hold the ranks
//! drawn (`Layout::needed`), and a last pass keeps only the rows of those buckets, one row
//! per distinct value, as `exact`'s own pass 2 does for single ranks. Every value read this
//! way is exact, so a bootstrap over them gives what it would over all the sorted values.
//!
//! Memory is bounded by the distinct values in the buckets holding the ranges, never by
//! the rows outside them. Where those buckets hold many rows (more than `exact`'s
//! threshold), a pass between counts their rows per finer bucket (512 to a bucket) and the
//! last pass keeps only the finer buckets holding the ranges (`Layout::refined`), as
//! `exact`'s third pass does; the pass between always runs here (`exact` first tries the
//! values under a cap, which these ranges have not been given).

use std::collections::{BTreeMap, BTreeSet};

use polars::prelude::*;

use super::exact::{
    bucket_of, from_order_key, order_key, Counts, BUCKET_COL, BUCKET_SHIFT, COUNT_COL, FINE_SHIFT,
    REFINE_ABOVE, VALUE_COL,
};
use super::kept::{Kept, Wanted};
use super::{key_columns, Key};

/// Rows per bucket, per fine key, of pass 1's frame for one value
/// (`histogram::Histograms`) or of `refine_query`'s (finer buckets). A key whose values
/// are all null has an empty histogram.
pub fn histograms(df: &DataFrame, fine: &[String]) -> PolarsResult<BTreeMap<Key, Counts>> {
    let keys = key_columns(df, fine)?;
    let buckets = df.column(BUCKET_COL)?.i64()?;
    let counts = df.column(COUNT_COL)?.u64()?;
    let mut out: BTreeMap<Key, Counts> = BTreeMap::new();
    for (row, key) in keys.into_iter().enumerate() {
        let hist = out.entry(key).or_default();
        if let Some(b) = buckets.get(row) {
            *hist.entry(b).or_default() += counts.get(row).unwrap_or(0);
        }
    }
    Ok(out)
}

/// Where a series' values lie: per bucket (at `shift` bits), the rank of its first value
/// and its rows. From pass 1's histogram every bucket; once refined, the finer buckets of
/// the buckets that were needed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    shift: u32,
    buckets: BTreeMap<i64, (u64, u64)>,
}

impl Layout {
    /// The layout of pass 1's histogram.
    pub fn of(hist: &Counts) -> Layout {
        let mut buckets = BTreeMap::new();
        let mut before = 0;
        for (&b, &rows) in hist {
            buckets.insert(b, (before, rows));
            before += rows;
        }
        Layout {
            shift: BUCKET_SHIFT,
            buckets,
        }
    }

    /// The buckets holding the 0-based ranks `lo..=hi` of each of `ranges`.
    pub fn needed(&self, ranges: &[(u64, u64)]) -> BTreeSet<i64> {
        self.buckets
            .iter()
            .filter(|(_, &(first, rows))| {
                rows > 0
                    && ranges
                        .iter()
                        .any(|&(lo, hi)| lo < first + rows && hi >= first)
            })
            .map(|(&b, _)| b)
            .collect()
    }

    /// The rows in the buckets `needed`.
    pub fn rows_in(&self, needed: &BTreeSet<i64>) -> u64 {
        needed
            .iter()
            .filter_map(|b| self.buckets.get(b))
            .map(|(_, rows)| rows)
            .sum()
    }

    /// Whether the rows in the buckets `needed` are too many to keep one row per distinct
    /// value of theirs: then the layout is refined first.
    pub fn too_many(&self, needed: &BTreeSet<i64>) -> bool {
        self.shift == BUCKET_SHIFT && self.rows_in(needed) > REFINE_ABOVE
    }

    /// The layout of the finer buckets, from their rows (`refine_query`'s frame for this
    /// key, read by `histograms`: only rows of buckets that were needed).
    pub fn refined(&self, finer: &Counts) -> Layout {
        let per_bucket = 1i64 << (BUCKET_SHIFT - FINE_SHIFT);
        let mut buckets = BTreeMap::new();
        let mut current = None;
        let mut next_rank = 0;
        for (&f, &rows) in finer {
            let coarse = f.div_euclid(per_bucket);
            if current != Some(coarse) {
                current = Some(coarse);
                next_rank = self.buckets.get(&coarse).map_or(0, |(first, _)| *first);
            }
            buckets.insert(f, (next_rank, rows));
            next_rank += rows;
        }
        Layout {
            shift: FINE_SHIFT,
            buckets,
        }
    }

    pub fn shift(&self) -> u32 {
        self.shift
    }
}

/// One of compare's passes after pass 1, for several metrics of a source at once: per
/// metric, the rows in the buckets it needs, kept by one function over each morsel
/// (`kept`), one query for all.
pub struct InBuckets {
    kept: Kept,
    finer: bool,
}

impl InBuckets {
    /// The last pass: per metric `(value, shift, needed)`, its rows in the buckets
    /// `needed` (at `shift` bits, the layouts' own), one row per distinct (fine key,
    /// value), to be read by `ranked`.
    pub fn values(
        lf: &LazyFrame,
        fine: &[String],
        asked: Vec<(String, u32, BTreeSet<i64>)>,
    ) -> PolarsResult<InBuckets> {
        let wanted = asked
            .into_iter()
            .map(|(value, shift, needed)| Wanted {
                value,
                shift,
                needed: needed.into_iter().collect(),
                cap: None,
            })
            .collect();
        Ok(InBuckets {
            kept: Kept::new(lf, fine, wanted)?,
            finer: false,
        })
    }

    /// Between pass 1 and the last pass, for the metrics whose needed buckets hold too
    /// many rows (`Layout::too_many`), per metric `(value, needed)`: the rows of those
    /// buckets per finer bucket, per fine key. Their values are not kept (a cap of none).
    pub fn finer(
        lf: &LazyFrame,
        fine: &[String],
        asked: Vec<(String, BTreeSet<i64>)>,
    ) -> PolarsResult<InBuckets> {
        let wanted = asked
            .into_iter()
            .map(|(value, needed)| Wanted {
                value,
                shift: BUCKET_SHIFT,
                needed: needed.into_iter().collect(),
                cap: Some(0),
            })
            .collect();
        Ok(InBuckets {
            kept: Kept::new(lf, fine, wanted)?,
            finer: true,
        })
    }

    /// The query that keeps.
    pub fn query(&self) -> LazyFrame {
        self.kept.query()
    }

    /// Once the query is collected, per metric in order: its kept values (keys as text,
    /// `__value`, `__count`) or its rows per finer bucket (keys as text, `__bucket`,
    /// `__count`).
    pub fn frames(&self) -> PolarsResult<Vec<DataFrame>> {
        Ok(self
            .kept
            .found()?
            .into_iter()
            .map(|f| match (self.finer, f.finer) {
                (true, Some(finer)) => finer,
                _ => f.values,
            })
            .collect())
    }
}

/// The values `InBuckets::values` kept, by rank, per fine key, placed by the keys' layouts.
pub fn ranked(
    df: &DataFrame,
    fine: &[String],
    layouts: &BTreeMap<Key, Layout>,
) -> PolarsResult<BTreeMap<Key, Ranked>> {
    let keys = key_columns(df, fine)?;
    let values = df.column(VALUE_COL)?.f64()?;
    let counts = df.column(COUNT_COL)?.u64()?;
    let mut found: BTreeMap<Key, Vec<(i64, u64)>> = BTreeMap::new();
    for (row, key) in keys.into_iter().enumerate() {
        if let Some(x) = values.get(row) {
            let count = counts.get(row).unwrap_or(0);
            found.entry(key).or_default().push((order_key(x), count));
        }
    }
    let mut out = BTreeMap::new();
    for (key, mut kept) in found {
        let Some(layout) = layouts.get(&key) else {
            continue;
        };
        kept.sort_unstable();
        let mut r = Ranked::default();
        let mut current = None;
        let mut next_rank = 0;
        for (k, count) in kept {
            let x = from_order_key(k);
            let bucket = bucket_of(x, layout.shift);
            if current != Some(bucket) {
                current = Some(bucket);
                let Some(&(first, _)) = layout.buckets.get(&bucket) else {
                    // A bucket another key of the query needed and this one's layout
                    // does not place (it was refined away): none of its ranks is asked.
                    current = None;
                    continue;
                };
                next_rank = first;
            }
            r.starts.push(next_rank);
            r.counts.push(count);
            r.values.push(x);
            next_rank += count;
        }
        out.insert(key, r);
    }
    Ok(out)
}

/// Some of a series' values, each with the ranks it holds in the sorted series.
#[derive(Debug, Default, Clone)]
pub struct Ranked {
    /// The first 0-based rank of each value, ascending.
    starts: Vec<u64>,
    counts: Vec<u64>,
    values: Vec<f64>,
}

impl Ranked {
    /// The value of the 0-based `rank`, which must lie in a bucket the query kept.
    pub fn at(&self, rank: u64) -> f64 {
        let i = self.starts.partition_point(|&s| s <= rank);
        match i.checked_sub(1) {
            Some(i) if rank < self.starts[i] + self.counts[i] => self.values[i],
            _ => unreachable!("rank {rank} lies in a bucket the last pass did not keep"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::histogram;
    use crate::stats::{collect_all, quantile7};

    /// Groups `a` and `b` of 5000 values of many buckets, with ties, negatives, −0 and a
    /// null now and then; `x` is the value.
    fn series() -> DataFrame {
        let mut seed = 11u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        let n = 5000;
        let g: Vec<&str> = (0..n).map(|i| if i % 3 == 0 { "a" } else { "b" }).collect();
        let x: Vec<Option<f64>> = (0..n)
            .map(|i| match i % 97 {
                0 => None,
                1 => Some(-0.0),
                2 => Some(0.0),
                3 => Some(-5.0),
                _ => Some((next() * 2000.0).round() / 4.0),
            })
            .collect();
        df!("g" => &g, "x" => &x).unwrap()
    }

    fn sorted_of(df: &DataFrame, group: &str) -> Vec<f64> {
        let g = df.column("g").unwrap().str().unwrap();
        let x = df.column("x").unwrap().f64().unwrap();
        let mut v: Vec<f64> = g
            .iter()
            .zip(x.iter())
            .filter(|(k, _)| *k == Some(group))
            .filter_map(|(_, v)| v)
            .map(|v| if v == 0.0 { 0.0 } else { v })
            .collect();
        v.sort_by(f64::total_cmp);
        v
    }

    /// The values read at ranges of ranks are those of the sorted series, per group, with
    /// and without the finer buckets between the passes.
    #[test]
    fn values_at_ranges_of_ranks_are_the_sorted_values() {
        let df = series();
        let fine = vec!["g".to_string()];
        let lf = df.clone().lazy();
        let hist = histogram::collect(&lf, &fine, &["x".to_string()]).unwrap();
        let layouts: BTreeMap<Key, Layout> = histograms(&hist[0], &fine)
            .unwrap()
            .into_iter()
            .map(|(k, h)| (k, Layout::of(&h)))
            .collect();
        let ranges = [(0, 3), (700, 900), (1500, 1500)];
        let needed = |layouts: &BTreeMap<Key, Layout>| -> BTreeSet<i64> {
            layouts.values().flat_map(|l| l.needed(&ranges)).collect()
        };
        let coarse = needed(&layouts);
        let pass = InBuckets::finer(&lf, &fine, vec![("x".to_string(), coarse)]).unwrap();
        collect_all(vec![pass.query()]).unwrap();
        let finer = histograms(&pass.frames().unwrap()[0], &fine).unwrap();
        let refined: BTreeMap<Key, Layout> = layouts
            .iter()
            .map(|(k, l)| (k.clone(), l.refined(&finer[k])))
            .collect();
        for layouts in [&layouts, &refined] {
            let shift = layouts.values().next().unwrap().shift();
            let pass =
                InBuckets::values(&lf, &fine, vec![("x".to_string(), shift, needed(layouts))])
                    .unwrap();
            collect_all(vec![pass.query()]).unwrap();
            let got = ranked(&pass.frames().unwrap()[0], &fine, layouts).unwrap();
            for group in ["a", "b"] {
                let sorted = sorted_of(&df, group);
                let r = &got[&vec![Some(group.to_string())]];
                for &(lo, hi) in &ranges {
                    for rank in lo..=hi.min(sorted.len() as u64 - 1) {
                        assert_eq!(r.at(rank), sorted[rank as usize], "{group} rank {rank}");
                    }
                }
                // A median read from them (group a's lies in 700..=900) is type 7 of the
                // sorted values.
                if group == "a" {
                    let p = crate::stats::quantile7_at(sorted.len() as u64, 0.5, |i| r.at(i));
                    assert_eq!(p, quantile7(&sorted, 0.5));
                }
            }
        }
        // On values packed in one bucket, the finer buckets holding a few ranks keep a few
        // of its rows.
        let mut hist = Counts::new();
        let mut finer = Counts::new();
        for i in 0..1000 {
            let x = 1000.0 + i as f64 * 1e-4;
            *hist.entry(bucket_of(x, BUCKET_SHIFT)).or_default() += 1;
            *finer.entry(bucket_of(x, FINE_SHIFT)).or_default() += 1;
        }
        let coarse = Layout::of(&hist);
        let refined = coarse.refined(&finer);
        let r = [(500, 510)];
        assert_eq!(coarse.rows_in(&coarse.needed(&r)), 1000);
        assert!(refined.rows_in(&refined.needed(&r)) < 50);
    }
}
