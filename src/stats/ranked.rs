//! The values at a few ranges of ranks of a series, in bounded memory: what a bootstrap of
//! its percentiles reads.
//!
//! A bootstrap resample's percentile is an order statistic drawn near the percentile's
//! rank: within a few standard deviations of a Beta distribution, a few thousand ranks
//! out of ten million. So pass 1's histogram (`exact`) tells which buckets hold the ranks
//! drawn, and pass 2 keeps only the rows of those buckets, one row per distinct value, as
//! `exact`'s own pass 2 does for single ranks. Every value read this way is exact, so a
//! bootstrap over them gives what it would over all the sorted values.
//!
//! Memory is bounded by the distinct values in the buckets holding the ranges, never by
//! the rows outside them.

use std::collections::{BTreeMap, BTreeSet};

use polars::prelude::*;

use super::exact::{
    bucket_of, in_buckets, order_key, value_expr, Counts, BUCKET_COL, BUCKET_SHIFT, COUNT_COL,
    VALUE_COL,
};
use super::{key_columns, Key};

/// Pass 1's frame for one value (`exact::histogram_queries`) as rows per bucket, per fine
/// key. A key whose values are all null has an empty histogram.
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

/// The buckets of `hist` holding the 0-based ranks `lo..=hi` of each of `ranges`.
pub fn buckets_of(hist: &Counts, ranges: &[(u64, u64)]) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    let mut before = 0;
    for (&bucket, &count) in hist {
        let (first, last) = (before, before + count);
        if count > 0 && ranges.iter().any(|&(lo, hi)| lo < last && hi >= first) {
            out.insert(bucket);
        }
        before = last;
    }
    out
}

/// Pass 2: the rows of `value` in the buckets `needed`, one row per distinct (fine key,
/// value), to be read by `ranked`.
pub fn query(lf: &LazyFrame, fine: &[String], value: &str, needed: &BTreeSet<i64>) -> LazyFrame {
    in_buckets(
        lf,
        fine,
        value,
        BUCKET_SHIFT,
        needed,
        (value_expr(value), DataType::Float64, VALUE_COL),
    )
}

/// The values `query` kept, by rank, per fine key; `hists` are the keys' histograms from
/// pass 1 (they place each bucket's first value).
pub fn ranked(
    df: &DataFrame,
    fine: &[String],
    hists: &BTreeMap<Key, Counts>,
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
        let Some(hist) = hists.get(&key) else {
            continue;
        };
        // The rank of each bucket's first value.
        let mut first = BTreeMap::new();
        let mut before = 0;
        for (&bucket, &count) in hist {
            first.insert(bucket, before);
            before += count;
        }
        kept.sort_unstable();
        let mut r = Ranked::default();
        let mut current = None;
        let mut next_rank = 0;
        for (k, count) in kept {
            let x = super::exact::from_order_key(k);
            let bucket = bucket_of(x, BUCKET_SHIFT);
            if current != Some(bucket) {
                current = Some(bucket);
                next_rank = first[&bucket];
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
            _ => unreachable!("rank {rank} lies in a bucket pass 2 did not keep"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::exact::histogram_queries;
    use crate::stats::{collect_all, quantile7};

    /// The values read at ranges of ranks are those of the sorted series, per group, on
    /// values of many buckets, with ties, negatives and −0.
    #[test]
    fn values_at_ranges_of_ranks_are_the_sorted_values() {
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
        let df = df!("g" => &g, "x" => &x).unwrap();
        let fine = vec!["g".to_string()];
        let lf = df.clone().lazy();
        let hist = collect_all(histogram_queries(&lf, &fine, &["x".to_string()])).unwrap();
        let hists = histograms(&hist[0], &fine).unwrap();
        let ranges = [(0, 3), (700, 900), (1500, 1500)];
        let mut needed = BTreeSet::new();
        for h in hists.values() {
            needed.extend(buckets_of(h, &ranges));
        }
        let kept = collect_all(vec![query(&lf, &fine, "x", &needed)]).unwrap();
        let got = ranked(&kept[0], &fine, &hists).unwrap();
        for group in ["a", "b"] {
            let mut sorted: Vec<f64> = g
                .iter()
                .zip(&x)
                .filter(|(k, _)| **k == group)
                .filter_map(|(_, v)| *v)
                .map(|v| if v == 0.0 { 0.0 } else { v })
                .collect();
            sorted.sort_by(f64::total_cmp);
            let r = &got[&vec![Some(group.to_string())]];
            for &(lo, hi) in &ranges {
                for rank in lo..=hi.min(sorted.len() as u64 - 1) {
                    assert_eq!(r.at(rank), sorted[rank as usize], "{group} rank {rank}");
                }
            }
            // And a median read from them (group a's lies in 700..=900) is type 7 of the
            // sorted values.
            if group == "a" {
                let p = crate::stats::quantile7_at(sorted.len() as u64, 0.5, |i| r.at(i));
                assert_eq!(p, quantile7(&sorted, 0.5));
            }
        }
    }
}
