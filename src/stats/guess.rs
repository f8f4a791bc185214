//! A guess, from the log's first rows, of the buckets that will hold each percentile's
//! ranks, so that pass 1 can keep the values in them beside its histogram
//! (`Histograms::keeping`) and the values pass is not needed where the guess holds
//! (`Ranks::offer`).
//!
//! The values pass of `exact` reads the whole log again to keep a few buckets' values:
//! on 10M requests it took a third of `analyze`'s time. A sample tells where a quantile's
//! rank lies up to its sampling error: for q among m values, the sample's quantile is
//! within a few standard deviations, √(q(1 − q)/m) in rank, of the log's. So for each
//! group and quantile the guess is the buckets between the sample's values at the ranks
//! `Z` standard deviations (and two ranks) either side of q, widened to the end of the
//! range where that passes the sample's first or last rank.
//!
//! Nothing rests on the guess being right. `Ranks::offer` takes a value's kept values
//! only when they hold every row of every bucket its ranks fall in (the kept rows per
//! bucket equal the histogram's); otherwise the value is read in the values pass as
//! before, which then costs what it did. A log whose later rows are unlike its first
//! (the day's peak hours after a quiet morning) takes that pass; the figures are the same
//! either way.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::exact::Level;
use super::tuples::Tuple;

/// Standard deviations of a sample quantile's rank kept either side of it.
const Z: f64 = 5.0;

/// The first rows sampled, by the rows of the log: enough that pass 1's kept values stay
/// within its budget (`histogram`'s `KEPT_PAIRS`) on values of full float precision (a
/// rate, a mean of gaps), whose kept rows all differ. The kept fraction falls as 1/√m and
/// the rows grow as n, so m grows as n²: 262,144 up to 10M rows (5 % kept), 2.25M at
/// 30M (1.7 %), 8.4M from 58M rows on (0.9 % at 100M). None where the log is too small
/// for the sample to be worth it: its values pass is short.
pub fn sample_rows(rows: u64) -> Option<u64> {
    let m = ((rows as f64 / 20_000.0).powi(2) as u64).clamp(1 << 18, 1 << 23);
    (rows >= 3 * m).then_some(m)
}

/// Slot ranges (`histogram`'s slots: a bucket offset to be positive; 0 stands for null),
/// inclusive, in order and apart.
pub(super) type Ranges = Vec<(u32, u32)>;

/// Every non-null slot: a tuple the sample has not met, or a group it has no value of.
pub(super) const ALL: (u32, u32) = (1, u32::MAX);

/// Per fine key tuple the sample met, per value: the slots whose values pass 1 keeps.
#[derive(Default)]
pub struct Guess {
    ranges: PlHashMap<Tuple, Vec<Ranges>>,
}

impl Guess {
    /// From the sample's rows per (tuple, slot) of each value (`counted[value]`, by the
    /// tuple's position in `tuples`): the ranges holding, with the margin above, the ranks
    /// of `quantiles` of every group of every level a tuple is in.
    pub(super) fn of(
        tuples: &[Tuple],
        counted: &[Vec<(u32, u32, u64)>],
        levels: &[Level],
        quantiles: &[f64],
    ) -> Guess {
        let project = |t: &Tuple, level: &Level| -> Tuple { level.iter().map(|&i| t[i]).collect() };
        let mut ranges: PlHashMap<Tuple, Vec<Ranges>> = tuples
            .iter()
            .map(|t| (t.clone(), vec![vec![]; counted.len()]))
            .collect();
        for (vi, counts) in counted.iter().enumerate() {
            for level in levels {
                // The level's groups: rows per slot (nulls aside).
                let mut groups: PlHashMap<Tuple, BTreeMap<u32, u64>> = PlHashMap::new();
                for &(t, slot, n) in counts.iter().filter(|c| c.1 != 0) {
                    *groups
                        .entry(project(&tuples[t as usize], level))
                        .or_default()
                        .entry(slot)
                        .or_default() += n;
                }
                let around: PlHashMap<Tuple, Ranges> = groups
                    .into_iter()
                    .map(|(g, hist)| {
                        let r = quantiles.iter().map(|&q| around_rank(&hist, q)).collect();
                        (g, r)
                    })
                    .collect();
                for (t, per_value) in ranges.iter_mut() {
                    // A group with no value in the sample: anything may be needed.
                    match around.get(&project(t, level)) {
                        Some(r) => per_value[vi].extend(r),
                        None => per_value[vi].push(ALL),
                    }
                }
            }
        }
        for per_value in ranges.values_mut() {
            for r in per_value.iter_mut() {
                *r = merged(std::mem::take(r));
            }
        }
        Guess { ranges }
    }

    /// What either guess keeps, for the same values: of a tuple, both's ranges; a tuple
    /// either has not met keeps every slot.
    pub fn union(self, mut other: Guess) -> Guess {
        let ranges = self
            .ranges
            .into_iter()
            .filter_map(|(t, mine)| {
                let theirs = other.ranges.remove(&t)?;
                let both = mine
                    .into_iter()
                    .zip(theirs)
                    .map(|(mut a, b)| {
                        a.extend(b);
                        merged(a)
                    })
                    .collect();
                Some((t, both))
            })
            .collect();
        Guess { ranges }
    }

    /// The ranges of a tuple, per value; none for a tuple the sample has not met (every
    /// slot is kept).
    pub(super) fn of_tuple(&self, tuple: &Tuple) -> Option<&[Ranges]> {
        self.ranges.get(tuple).map(Vec::as_slice)
    }
}

/// Whether `slot` is in `ranges` (`None`: every non-null slot).
#[inline(always)]
pub(super) fn holds(ranges: Option<&Ranges>, slot: u32) -> bool {
    slot != 0 && ranges.is_none_or(|r| r.iter().any(|&(low, high)| low <= slot && slot <= high))
}

/// The slots between the sample's values at the ranks `Z` standard deviations and two
/// ranks either side of q's, to the end of the range past the first or the last rank.
fn around_rank(hist: &BTreeMap<u32, u64>, q: f64) -> (u32, u32) {
    let m: u64 = hist.values().sum();
    let spread = Z * (q * (1.0 - q) / m as f64).sqrt() + 2.0 / m as f64;
    let top = (m - 1) as f64;
    let (low, high) = ((q - spread) * top, (q + spread) * top);
    let at = |rank: u64| {
        let mut before = 0;
        for (&slot, &n) in hist {
            before += n;
            if rank < before {
                return slot;
            }
        }
        unreachable!("rank {rank} is below the sample's {m} values")
    };
    (
        if low <= 0.0 { ALL.0 } else { at(low as u64) },
        if high >= top {
            ALL.1
        } else {
            at(high.ceil() as u64)
        },
    )
}

/// Ranges sorted and overlapping ones made one.
fn merged(mut ranges: Ranges) -> Ranges {
    ranges.sort_unstable();
    let mut out: Ranges = Vec::with_capacity(ranges.len());
    for (low, high) in ranges {
        match out.last_mut() {
            Some(last) if low <= last.1.saturating_add(1) => last.1 = last.1.max(high),
            _ => out.push((low, high)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_grow_with_the_square_of_the_rows() {
        assert_eq!(sample_rows(100_000), None);
        assert_eq!(sample_rows(1_000_000), Some(1 << 18));
        assert_eq!(sample_rows(10_000_000), Some(1 << 18));
        assert_eq!(sample_rows(30_000_000), Some(2_250_000));
        assert_eq!(sample_rows(100_000_000), Some(1 << 23));
    }

    #[test]
    fn ranges_merge_where_they_meet() {
        assert_eq!(
            merged(vec![(5, 9), (1, 2), (3, 4), (20, 30), (8, 12)]),
            vec![(1, 12), (20, 30)]
        );
        assert_eq!(merged(vec![ALL, (3, 4)]), vec![ALL]);
    }

    /// The median's range holds the sample's median and reaches either side of it; a
    /// p99 of 50 values reaches the end of the range, a median of 5 both ends.
    #[test]
    fn a_rank_is_guessed_with_a_margin() {
        let hist: BTreeMap<u32, u64> = (1..=1000).map(|s| (s, 10)).collect();
        let (low, high) = around_rank(&hist, 0.5);
        assert!(low < 500 && high > 501, "{low} {high}");
        // 5 standard deviations of a median of 10,000: 2.5 % of the ranks either side.
        assert!(low >= 470 && high <= 530, "{low} {high}");
        let small: BTreeMap<u32, u64> = (1..=50).map(|s| (s, 1)).collect();
        assert_eq!(around_rank(&small, 0.99).1, ALL.1);
        // 5 standard deviations and 2 ranks either side of the median of 50: ranks 5 to 44.
        assert_eq!(around_rank(&small, 0.5), (6, 45));
        let five: BTreeMap<u32, u64> = (1..=5).map(|s| (s, 1)).collect();
        assert_eq!(around_rank(&five, 0.5), ALL);
    }

    /// A tuple's ranges are those of every level's group it is in; a group without any
    /// value in the sample keeps all.
    #[test]
    fn a_tuple_keeps_the_ranges_of_its_groups() {
        let a: Tuple = vec![Some(1)];
        let b: Tuple = vec![Some(2)];
        // Tuple a: 1000 values over slots 100..=199; b: all null.
        let counted = vec![vec![(0u32, 0u32, 5u64)]
            .into_iter()
            .chain((100..200).map(|s| (0, s, 10)))
            .chain([(1, 0, 7)])
            .collect::<Vec<_>>()];
        let guess = Guess::of(
            &[a.clone(), b.clone()],
            &counted,
            &[vec![], vec![0]],
            &[0.5],
        );
        let ra = &guess.of_tuple(&a).unwrap()[0];
        assert_eq!(ra.len(), 1);
        assert!(
            ra[0].0 > 100 && ra[0].1 < 199 && ra[0].0 <= 150 && ra[0].1 >= 150,
            "{ra:?}"
        );
        // b's own group has no value: everything.
        assert_eq!(guess.of_tuple(&b).unwrap()[0], vec![ALL]);
        assert!(guess.of_tuple(&vec![Some(3)]).is_none());
        assert!(holds(None, 7) && !holds(None, 0));
        assert!(holds(Some(ra), 150) && !holds(Some(ra), 100));
    }

    /// The union keeps a tuple's slots either guess keeps; a tuple one of them has not
    /// met keeps every slot.
    #[test]
    fn a_union_keeps_what_either_keeps() {
        let (a, b): (Tuple, Tuple) = (vec![Some(1)], vec![Some(2)]);
        let guess = |t: &[(Tuple, Ranges)]| Guess {
            ranges: t
                .iter()
                .map(|(t, r)| (t.clone(), vec![r.clone()]))
                .collect(),
        };
        let one = guess(&[(a.clone(), vec![(10, 20)]), (b.clone(), vec![(5, 6)])]);
        let two = guess(&[(a.clone(), vec![(15, 30), (40, 41)])]);
        let both = one.union(two);
        assert_eq!(both.of_tuple(&a).unwrap()[0], vec![(10, 30), (40, 41)]);
        assert!(both.of_tuple(&b).is_none());
    }
}
