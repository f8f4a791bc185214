//! The passes of `exact`'s percentiles after the histogram (and of `compare`'s,
//! `ranked::InBuckets`): for each value, the rows per (fine key, value) among those whose
//! bucket holds a needed rank, counted by one function over each morsel of the stream, as
//! `histogram` counts pass 1. A polars group-by per
//! value made one query, and one consumer of the shared scan, per value (two for a capped
//! one): a report's families took four scans of a pass.
//!
//! A capped value (`Wanted::cap`) also has its kept rows counted per finer bucket, and its
//! values are kept only while the distinct (key tuple, value) pairs met stay within the
//! cap; past it they are dropped, and the finer buckets say where its ranks are for a
//! pass more.

use std::sync::{Arc, Mutex};

use polars::prelude::*;

use super::exact::{bucket_of, BUCKET_COL, COUNT_COL, FINE_SHIFT, VALUE_COL};
use super::tuples::{Keys, Numbered};
use super::{at_height, counting_query, lock};

/// What a pass keeps of one value.
pub(super) struct Wanted {
    pub value: String,
    /// Bits below the buckets `needed` are at.
    pub shift: u32,
    /// The buckets holding its needed ranks, in order.
    pub needed: Vec<i64>,
    /// At most this many distinct (key tuple, value) pairs kept, with finer buckets beside
    /// them (a cap of 0: the finer buckets alone); none for no cap.
    pub cap: Option<usize>,
}

/// Whether a bucket is one of a value's needed buckets: a bit per bucket between the
/// first and the last (a few thousand at most, at the histogram's bits), looked up once
/// per row and value; a binary search where they lie too far apart (finer buckets).
enum Needed {
    Bits { low: i64, bits: Vec<u64> },
    Sorted(Vec<i64>),
}

/// At most this many bits (32 KiB) for `Needed::Bits`.
const NEEDED_BITS: i64 = 1 << 18;

impl Needed {
    fn new(needed: &[i64]) -> Needed {
        match (needed.first(), needed.last()) {
            (Some(&low), Some(&high)) if high - low < NEEDED_BITS => {
                let mut bits = vec![0u64; ((high - low) / 64 + 1) as usize];
                for b in needed {
                    let i = (b - low) as usize;
                    bits[i / 64] |= 1 << (i % 64);
                }
                Needed::Bits { low, bits }
            }
            _ => Needed::Sorted(needed.to_vec()),
        }
    }
}

/// Whether `bucket` is one of `Needed::Bits`'.
#[inline(always)]
fn holds_bit(low: i64, bits: &[u64], bucket: i64) -> bool {
    // Below `low` wraps to a large index, past the bits.
    let i = bucket.wrapping_sub(low) as u64 as usize;
    bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

/// Calls `keep(row, value)` for each value (−0 made 0) whose bucket at `shift` `holds`:
/// one loop per kind of `Needed`, each a few instructions a row.
#[inline(always)]
fn in_buckets(
    xs: &[f64],
    shift: u32,
    holds: impl Fn(i64) -> bool,
    mut keep: impl FnMut(usize, f64),
) {
    for (i, &x) in xs.iter().enumerate() {
        // IEEE addition gives −0 + 0 = 0: one value, one bucket.
        let x = x + 0.0;
        if holds(bucket_of(x, shift)) {
            keep(i, x);
        }
    }
}

/// Rows per (tuple's number, value's bits).
pub(super) type ValueRows = PlHashMap<(u32, u64), u64>;

/// What a pass found of one value (`Kept::found`).
pub(super) struct Found {
    /// Rows per (fine key, value): the keys as text, `__value`, `__count`.
    pub values: DataFrame,
    /// A capped value's rows per (fine key, finer bucket): `__bucket`, `__count`.
    pub finer: Option<DataFrame>,
    /// Whether its distinct pairs passed the cap (so `values` holds only some).
    pub passed: bool,
}

/// What the morsels have kept of one value so far.
#[derive(Default)]
struct Totals {
    /// Rows per (tuple's number, value's bits).
    values: ValueRows,
    /// Rows per (tuple's number, finer bucket), for a capped value.
    finer: PlHashMap<(u32, i64), u64>,
    passed: bool,
}

struct Pass {
    tuples: Numbered,
    totals: Vec<Totals>,
}

/// One pass's kept values: one query, collected with the pass's others, then `found`.
pub(super) struct Kept {
    lf: LazyFrame,
    keys: Keys,
    wanted: Arc<Vec<Wanted>>,
    needed: Arc<Vec<Needed>>,
    pass: Arc<Mutex<Pass>>,
}

impl Kept {
    pub(super) fn new(lf: &LazyFrame, keys: &[String], wanted: Vec<Wanted>) -> PolarsResult<Kept> {
        let pass = Pass {
            tuples: Numbered::default(),
            totals: wanted.iter().map(|_| Totals::default()).collect(),
        };
        Ok(Kept {
            lf: lf.clone(),
            keys: Keys::new(lf, keys)?,
            needed: Arc::new(wanted.iter().map(|w| Needed::new(&w.needed)).collect()),
            wanted: Arc::new(wanted),
            pass: Arc::new(Mutex::new(pass)),
        })
    }

    /// The query that keeps.
    pub(super) fn query(&self) -> LazyFrame {
        let mut inputs = self.keys.exprs();
        inputs.extend(
            self.wanted
                .iter()
                .map(|w| col(w.value.as_str()).cast(DataType::Float64)),
        );
        let keys = self.keys.clone();
        let (wanted, needed, pass) = (self.wanted.clone(), self.needed.clone(), self.pass.clone());
        counting_query(&self.lf, inputs, move |cols, height| {
            keep_morsel(cols, &keys, (&wanted, &needed), &pass, height)
        })
    }

    /// Once the query is collected: per wanted value, in order, what the pass found.
    pub(super) fn found(&self) -> PolarsResult<Vec<Found>> {
        let pass = lock(&self.pass);
        let keys = self.keys.columns(pass.tuples.tuples())?;
        pass.totals
            .iter()
            .zip(self.wanted.iter())
            .map(|(t, w)| {
                let finer = match w.cap {
                    None => None,
                    Some(_) => {
                        let mut finer: Vec<((u32, i64), u64)> =
                            t.finer.iter().map(|(&k, &n)| (k, n)).collect();
                        finer.sort_unstable();
                        let bs = Int64Chunked::from_vec(
                            BUCKET_COL.into(),
                            finer.iter().map(|((_, b), _)| *b).collect(),
                        );
                        let ns = UInt64Chunked::from_vec(
                            COUNT_COL.into(),
                            finer.iter().map(|(_, n)| *n).collect(),
                        );
                        Some(keyed(
                            &keys,
                            finer.iter().map(|((t, _), _)| *t),
                            vec![bs.into_column(), ns.into_column()],
                        )?)
                    }
                };
                Ok(Found {
                    values: values_frame(&keys, &t.values)?,
                    finer,
                    passed: t.passed,
                })
            })
            .collect()
    }
}

/// Rows per (tuple's number, value's bits) as a frame, in that order: the keys as text
/// (`keys`: the key columns of the pass's tuples, by number), `__value`, `__count`.
pub(super) fn values_frame(keys: &[Column], values: &ValueRows) -> PolarsResult<DataFrame> {
    let mut values: Vec<((u32, u64), u64)> = values.iter().map(|(&k, &n)| (k, n)).collect();
    values.sort_unstable();
    let xs: Float64Chunked = values
        .iter()
        .map(|((_, b), _)| f64::from_bits(*b))
        .collect_ca(VALUE_COL.into());
    let ns = UInt64Chunked::from_vec(COUNT_COL.into(), values.iter().map(|(_, n)| *n).collect());
    keyed(
        keys,
        values.iter().map(|((t, _), _)| *t),
        vec![xs.into_column(), ns.into_column()],
    )
}

/// The rows of `tuples` (by number) of the key columns `keys`, then `more`.
fn keyed(
    keys: &[Column],
    tuples: impl Iterator<Item = u32>,
    more: Vec<Column>,
) -> PolarsResult<DataFrame> {
    let at: IdxCa = tuples.map(|t| t as IdxSize).collect_ca("".into());
    let height = at.len();
    let mut cols: Vec<Column> = keys
        .iter()
        .map(|k| k.take(&at))
        .collect::<PolarsResult<_>>()?;
    cols.extend(more);
    DataFrame::new(height, cols)
}

/// Keeps one morsel's rows: `cols` are the keys, then the wanted values (as floats).
fn keep_morsel(
    cols: &[Column],
    keys: &Keys,
    (wanted, needed): (&[Wanted], &[Needed]),
    pass: &Mutex<Pass>,
    height: usize,
) -> PolarsResult<()> {
    let (key_cols, values) = cols.split_at(keys.len());
    let (tuple_of, tuples) = keys.number(key_cols, height)?;
    let mut kept = Vec::with_capacity(wanted.len());
    for ((c, w), needed) in values.iter().zip(wanted).zip(needed) {
        let c = at_height(c, height);
        let v = c.f64()?.rechunk();
        let nulls = v.null_count();
        let v = v.downcast_as_array();
        let valid = v.validity().filter(|_| nulls > 0);
        let mut values = ValueRows::new();
        let mut finer: PlHashMap<(u32, i64), u64> = PlHashMap::new();
        // Called for the few rows in a needed bucket only: the loop over every row tests
        // the bucket and nothing else (a null's slot holds some value, tested after).
        let keep = |i: usize, x: f64| {
            if valid.is_some_and(|b| !b.get_bit(i)) {
                return;
            }
            let t = tuple_of[i];
            *values.entry((t, x.to_bits())).or_insert(0) += 1;
            if w.cap.is_some() {
                *finer.entry((t, bucket_of(x, FINE_SHIFT))).or_insert(0) += 1;
            }
        };
        match needed {
            Needed::Bits { low, bits } => {
                in_buckets(v.values(), w.shift, |b| holds_bit(*low, bits, b), keep)
            }
            Needed::Sorted(needed) => in_buckets(
                v.values(),
                w.shift,
                |b| needed.binary_search(&b).is_ok(),
                keep,
            ),
        }
        kept.push((values, finer));
    }
    let mut pass = lock(pass);
    let numbers: Vec<u32> = tuples.into_iter().map(|t| pass.tuples.number(t)).collect();
    for ((all, w), (values, finer)) in pass.totals.iter_mut().zip(wanted).zip(kept) {
        for ((t, b), n) in finer {
            *all.finer.entry((numbers[t as usize], b)).or_insert(0) += n;
        }
        if all.passed {
            continue;
        }
        for ((t, x), n) in values {
            *all.values.entry((numbers[t as usize], x)).or_insert(0) += n;
        }
        if w.cap.is_some_and(|cap| all.values.len() > cap) {
            // Not needed any more: the value's ranks are found in a pass more.
            all.passed = true;
            all.values = PlHashMap::new();
        }
    }
    Ok(())
}
