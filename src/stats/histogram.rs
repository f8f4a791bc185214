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
//!
//! With a guess of where the ranks are (`keeping`, `guess`), the same function also keeps
//! the values in the guessed buckets, as `kept` does in pass 2, for `Ranks::offer`. Which
//! values it keeps depends on the guess alone, not on the order of the morsels; whether
//! a value is dropped for the budget may, but a dropped value is read in pass 2, and the
//! percentiles are the same either way.

use std::sync::{Arc, Mutex};

use polars::prelude::*;

use super::exact::{bucket_of, Level, BUCKET_COL, BUCKET_SHIFT, COUNT_COL};
use super::guess::{self, Guess, Ranges};
use super::kept::{values_frame, ValueRows};
use super::slots::Slots;
use super::tuples::{Keys, Numbered, DENSE_CELLS};
use super::{at_height, collect_all, counting_query, lock};
use crate::kernels::words_of;
use polars_arrow::bitmap::Bitmap;

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

/// What the morsels have counted so far.
struct Totals {
    tuples: Numbered,
    /// Per value: rows per (tuple's number, slot).
    counts: Vec<Slots>,
}

/// The distinct (tuple, value) pairs one pass keeps on its guesses, over every histogram
/// that keeps them (`Histograms::keeping`: `analyze`'s and the report's beside it), held
/// within `KEPT_PAIRS`: past it, the value that keeps the most, in whichever histogram,
/// is dropped, and its ranks are read in the values pass. Checked once per morsel and
/// histogram, under its lock.
pub struct Budget {
    limit: usize,
    /// Per value of every histogram registered: its distinct pairs, and whether it was
    /// dropped.
    values: Mutex<Vec<(usize, bool)>>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(KEPT_PAIRS)
    }
}

impl Budget {
    fn new(limit: usize) -> Budget {
        Budget {
            limit,
            values: Mutex::new(vec![]),
        }
    }

    /// Room for `n` more values: the position of the first.
    fn register(&self, n: usize) -> usize {
        let mut values = lock(&self.values);
        values.extend(std::iter::repeat_n((0, false), n));
        values.len() - n
    }

    /// Whether each of the `n` values from `at` is dropped.
    fn dropped(&self, at: usize, n: usize) -> Vec<bool> {
        lock(&self.values)[at..at + n].iter().map(|v| v.1).collect()
    }

    /// Counts `added[i]` new pairs of the value at `at + i`, then, while the pairs are
    /// past the limit, drops the value that holds the most.
    fn add(&self, at: usize, added: &[usize]) {
        let mut values = lock(&self.values);
        for (v, &n) in values[at..].iter_mut().zip(added) {
            if !v.1 {
                v.0 += n;
            }
        }
        while values.iter().map(|v| v.0).sum::<usize>() > self.limit {
            let largest = (0..values.len())
                .max_by_key(|&i| (values[i].0, std::cmp::Reverse(i)))
                .expect("a value holds the pairs");
            values[largest] = (0, true);
        }
    }
}

/// Per value, with a guess (`Histograms::keeping`): rows per (tuple's number, value's
/// bits) among those in the guessed slots. In shards by the pair's hash, so that a
/// morsel's inserts (a few per cent of its rows a value) go into whichever shard is free
/// and do not hold the counts' lock another thread waits on; a pair is in one shard only,
/// so the budget counts each once.
struct Keeping {
    shards: Vec<Mutex<Vec<ValueRows>>>,
    budget: Arc<Budget>,
    /// Where this histogram's values are in the budget's, and how many it has.
    at: usize,
    values: usize,
}

/// A (tuple's number, value's bits) pair with its rows, routed to a shard.
type Part = Vec<Vec<((u32, u64), u64)>>;

impl Keeping {
    fn new(values: usize, budget: &Arc<Budget>) -> Keeping {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        Keeping {
            shards: (0..threads)
                .map(|_| Mutex::new(vec![PlHashMap::new(); values]))
                .collect(),
            at: budget.register(values),
            budget: budget.clone(),
            values,
        }
    }

    /// Adds a morsel's kept rows (`kept[value]`, by the morsel's tuple), its tuples
    /// numbered as the pass numbers them (`numbers`): each shard's part under its lock,
    /// the free shards first. Past the budget, the value that kept the most is dropped:
    /// its ranks are found in the values pass.
    fn add(&self, kept: Vec<ValueRows>, numbers: &[u32]) {
        let n = self.shards.len();
        let dropped = self.budget.dropped(self.at, self.values);
        let mut added = vec![0; self.values];
        let mut parts: Vec<(usize, Part)> = (0..n).map(|s| (s, vec![vec![]; kept.len()])).collect();
        for (vi, kept) in kept.into_iter().enumerate() {
            if dropped[vi] {
                continue;
            }
            for ((t, x), rows) in kept {
                let pair = (numbers[t as usize], x);
                parts[shard_of(pair, n)].1[vi].push((pair, rows));
            }
        }
        while !parts.is_empty() {
            let before = parts.len();
            parts.retain(|(s, part)| match self.shards[*s].try_lock() {
                Ok(mut shard) => {
                    Keeping::insert(&mut shard, part, &dropped, &mut added);
                    false
                }
                Err(_) => true,
            });
            if parts.len() == before {
                let (s, part) = parts.remove(0);
                Keeping::insert(&mut lock(&self.shards[s]), &part, &dropped, &mut added);
            }
        }
        self.budget.add(self.at, &added);
    }

    /// One shard's part of a morsel, added to it, its new pairs counted in `added`; the
    /// tables of a value `dropped` emptied.
    fn insert(shard: &mut [ValueRows], part: &Part, dropped: &[bool], added: &mut [usize]) {
        for (vi, (all, part)) in shard.iter_mut().zip(part).enumerate() {
            if dropped[vi] {
                *all = PlHashMap::new();
                continue;
            }
            let before = all.len();
            for &(pair, rows) in part {
                *all.entry(pair).or_insert(0) += rows;
            }
            added[vi] += all.len() - before;
        }
    }

    /// Per value, the rows kept in all shards, taken out of them (so that the shards and
    /// the sum are not held at once); none for a dropped value.
    fn take(&self) -> Vec<Option<ValueRows>> {
        let mut all: Vec<Option<ValueRows>> = self
            .budget
            .dropped(self.at, self.values)
            .into_iter()
            .map(|d| (!d).then(PlHashMap::new))
            .collect();
        for shard in &self.shards {
            let shard = std::mem::take(&mut *lock(shard));
            for (all, kept) in all.iter_mut().zip(shard) {
                match all {
                    // A pair is in one shard: the tables are joined, not summed.
                    Some(all) if all.is_empty() => *all = kept,
                    Some(all) => all.extend(kept),
                    None => {}
                }
            }
        }
        all
    }
}

/// The shard of a pair, from a multiplicative hash of it.
fn shard_of((t, x): (u32, u64), shards: usize) -> usize {
    let h = (x ^ u64::from(t).rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h >> 32) as usize) % shards
}

/// The distinct (tuple, value) pairs pass 1 keeps at most on a guess, over all its values:
/// about 400 MB of tables at most. Values of a log's resolution (0.1 ms, 1 ms) keep a
/// few hundred thousand each however many rows; those of full float precision (a rate)
/// keep a row each, as many as `guess::sample_rows` allows for.
const KEPT_PAIRS: usize = 1 << 23;

/// Pass 1's histograms of `values` per (fine key, bucket): one query, collected with the
/// pass's others, then `frames`.
pub struct Histograms {
    lf: LazyFrame,
    keys: Keys,
    values: Vec<String>,
    /// Where the ranks are guessed to be, and the values in those slots, kept.
    guess: Option<(Arc<Guess>, Arc<Keeping>)>,
    totals: Arc<Mutex<Totals>>,
}

impl Histograms {
    pub fn new(lf: &LazyFrame, keys: &[String], values: &[String]) -> PolarsResult<Histograms> {
        Ok(Histograms {
            lf: lf.clone(),
            keys: Keys::new(lf, keys)?,
            values: values.to_vec(),
            guess: None,
            totals: Arc::new(Mutex::new(Totals {
                tuples: Numbered::default(),
                counts: (0..values.len()).map(|_| Slots::default()).collect(),
            })),
        })
    }

    /// These histograms, keeping beside the counts the values in the slots `guess` names,
    /// for `Ranks::offer`. The pairs they keep count against `budget`, shared by the
    /// pass's histograms.
    pub fn keeping(mut self, guess: Guess, budget: &Arc<Budget>) -> Histograms {
        let keeping = Keeping::new(self.values.len(), budget);
        self.guess = Some((Arc::new(guess), Arc::new(keeping)));
        self
    }

    /// These histograms, of a sample of the log's first rows (`guess::sample_rows`), once
    /// their query is collected: the guess of where the ranks of `quantiles` of each
    /// level's groups are (`Guess::of`).
    pub fn guess(&self, levels: &[Level], quantiles: &[f64]) -> Guess {
        let totals = lock(&self.totals);
        let counted: Vec<Vec<(u32, u32, u64)>> =
            totals.counts.iter().map(|c| c.iter().collect()).collect();
        Guess::of(totals.tuples.tuples(), &counted, levels, quantiles)
    }

    /// The query that counts.
    pub fn query(&self) -> LazyFrame {
        let mut inputs = self.keys.exprs();
        inputs.extend(
            self.values
                .iter()
                .map(|v| col(v.as_str()).cast(DataType::Float64)),
        );
        let (keys, totals) = (self.keys.clone(), self.totals.clone());
        let guess = self.guess.clone();
        counting_query(&self.lf, inputs, move |cols, height| {
            let guess = guess.as_ref().map(|(g, k)| (g.as_ref(), k.as_ref()));
            count_morsel(cols, &keys, &totals, guess, height)
        })
    }

    /// Once the query is collected, with a guess (`keeping`), and once: per value, in
    /// order, the rows it kept per (fine key, value), as `kept`'s frames (the keys as
    /// text, `__value`, `__count`); none for a value dropped for the budget (`KEPT_PAIRS`).
    pub fn kept(&self) -> PolarsResult<Vec<Option<DataFrame>>> {
        let Some((_, keeping)) = &self.guess else {
            return Ok(vec![]);
        };
        let keys = self.keys.columns(lock(&self.totals).tuples.tuples())?;
        super::par_map(keeping.take(), |k| {
            k.as_ref().map(|k| values_frame(&keys, k)).transpose()
        })
        .into_iter()
        .collect()
    }

    /// Once the query is collected: per value, in order, rows per (fine key, bucket), as
    /// a frame with the keys as text, `__bucket` and `__count`.
    pub fn frames(&self) -> PolarsResult<Vec<DataFrame>> {
        let totals = lock(&self.totals);
        let keys = self.keys.columns(totals.tuples.tuples())?;
        totals
            .counts
            .iter()
            .map(|counts| {
                let mut rows: Vec<(u64, u64)> = counts
                    .iter()
                    .map(|(t, slot, n)| ((u64::from(t) << BUCKET_BITS) | u64::from(slot), n))
                    .collect();
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

/// Counts one morsel's rows: `cols` are the keys, then the values (as floats); with a
/// `guess`, keeps the values in its slots (at most `KEPT_PAIRS` distinct pairs in all).
fn count_morsel(
    cols: &[Column],
    keys: &Keys,
    totals: &Mutex<Totals>,
    guess: Option<(&Guess, &Keeping)>,
    height: usize,
) -> PolarsResult<()> {
    let (key_cols, values) = cols.split_at(keys.len());
    let (tuple_of, tuples) = keys.number(key_cols, height)?;
    // Per morsel tuple, its guessed ranges per value (none: every slot).
    let ranges: Option<Vec<Option<&[Ranges]>>> =
        guess.map(|(g, _)| tuples.iter().map(|t| g.of_tuple(t)).collect());
    // Per value, rows per (morsel's tuple, bucket), and the kept values.
    let mut counted = Vec::with_capacity(values.len());
    let mut kept = Vec::with_capacity(values.len());
    for (vi, c) in values.iter().enumerate() {
        let c = at_height(c, height);
        let v = c.f64()?.rechunk();
        let nulls = v.null_count();
        let v = v.downcast_as_array();
        let slots = slots_of(v.values(), v.validity().filter(|_| nulls > 0));
        let of_value: Option<Vec<Option<&Ranges>>> = ranges
            .as_ref()
            .map(|ranges| ranges.iter().map(|r| r.map(|r| &r[vi])).collect());
        let (counts, keeps) = count_and_keep(
            &tuple_of,
            tuples.len(),
            &slots,
            v.values(),
            of_value.as_deref(),
        );
        counted.push(counts);
        kept.extend(keeps);
    }
    let mut totals = lock(totals);
    let numbers: Vec<u32> = tuples
        .into_iter()
        .map(|t| totals.tuples.number(t))
        .collect();
    for (all, counts) in totals.counts.iter_mut().zip(counted) {
        for (t, slot, n) in counts {
            all.add(numbers[t as usize], slot, n);
        }
    }
    drop(totals);
    if let Some((_, keeping)) = guess {
        keeping.add(kept, &numbers);
    }
    Ok(())
}

/// Each value's slot, 0 for a null (`validity`, where the column has nulls), with the
/// least and the greatest slot of a value: 64 rows at a time, so that a word of valid
/// rows costs one comparison and the rows' slots are still in the cache when they are
/// made 0 and looked at for the span.
fn slots_of(xs: &[f64], validity: Option<&Bitmap>) -> Slotted {
    let mut slots: Vec<u32> = Vec::with_capacity(xs.len());
    let (mut low, mut high) = (u32::MAX, 0);
    let valid = validity.map(words_of);
    for (w, block) in xs.chunks(64).enumerate() {
        let at = slots.len();
        slots.extend(block.iter().map(|&x| slot(x)));
        let rows = &mut slots[at..];
        if let Some(valid) = &valid {
            zero_unset(rows, valid[w]);
        }
        for &s in rows.iter() {
            if s != 0 {
                low = low.min(s);
                high = high.max(s);
            }
        }
    }
    Slotted {
        slots,
        span: (low <= high).then_some((low, high)),
    }
}

/// A value column's slots (`slots_of`).
struct Slotted {
    slots: Vec<u32>,
    /// The least and the greatest non-null slot, if any.
    span: Option<(u32, u32)>,
}

/// Rows per (morsel's tuple, slot), as (tuple, slot, rows); with `ranges` (a guess: per
/// morsel tuple, its guessed slots of this value), also the values kept (`keep_guessed`).
/// Where the morsel's slots span few enough cells, both in one loop over the rows, through
/// one table indexed by position: a count per cell and a bit per cell to keep.
fn count_and_keep(
    tuple_of: &[u32],
    tuples: usize,
    slotted: &Slotted,
    xs: &[f64],
    ranges: Option<&[Option<&Ranges>]>,
) -> (Vec<(u32, u32, u64)>, Option<ValueRows>) {
    let slots = &slotted.slots;
    // Nulls only: a cell a tuple, and nothing to keep.
    let (low, high) = slotted.span.unwrap_or((1, 0));
    // Cell 0 of a tuple counts its nulls, cell s − low + 1 slot s.
    let width = high.wrapping_sub(low).wrapping_add(2) as usize;
    if tuples.saturating_mul(width) > DENSE_CELLS {
        return (
            count_slots(tuple_of, slots),
            ranges.map(|r| keep_guessed(tuple_of, slots, xs, r)),
        );
    }
    let mut cells = vec![0u32; tuples * width];
    let cell =
        |t: u32, s: u32| t as usize * width + if s == 0 { 0 } else { (s - low) as usize + 1 };
    let mut kept = ranges.map(|_| ValueRows::new());
    match ranges {
        None => {
            for (&t, &s) in tuple_of.iter().zip(slots) {
                cells[cell(t, s)] += 1;
            }
        }
        Some(ranges) => {
            let keep = keep_bits(ranges, low, high, width);
            let kept = kept.as_mut().expect("a guess keeps");
            for ((&t, &s), &x) in tuple_of.iter().zip(slots).zip(xs) {
                let i = cell(t, s);
                cells[i] += 1;
                if keep[i / 64] & (1 << (i % 64)) != 0 {
                    // −0 made 0, as its slot was.
                    *kept.entry((t, (x + 0.0).to_bits())).or_insert(0) += 1;
                }
            }
        }
    }
    (cells_counted(&cells, width, low), kept)
}

/// A bit per (tuple, cell) of `count_and_keep`'s table (cell 0, the nulls', never set):
/// set where the tuple's guessed ranges hold the slot.
fn keep_bits(ranges: &[Option<&Ranges>], low: u32, high: u32, width: usize) -> Vec<u64> {
    let mut bits = vec![0u64; (ranges.len() * width).div_ceil(64)];
    for (t, r) in ranges.iter().enumerate() {
        let all = [guess::ALL];
        for &(a, b) in r.map_or(&all[..], |r| r.as_slice()) {
            let (a, b) = (a.max(low), b.min(high));
            if a <= b {
                let at = t * width + 1;
                set_bits(&mut bits, at + (a - low) as usize, at + (b - low) as usize);
            }
        }
    }
    bits
}

/// The non-zero cells of a table of `width` cells a tuple (cell 0 the nulls', cell j
/// slot j − 1 + `low`), as (tuple, slot, rows).
fn cells_counted(cells: &[u32], width: usize, low: u32) -> Vec<(u32, u32, u64)> {
    let mut out = vec![];
    for (i, &n) in cells.iter().enumerate().filter(|(_, &n)| n > 0) {
        let (t, j) = (i / width, (i % width) as u32);
        let s = if j == 0 { 0 } else { j - 1 + low };
        out.push((t as u32, s, u64::from(n)));
    }
    out
}

/// The slots of the rows whose bit in `word` (a validity word, row i at bit i) is unset
/// made 0: null.
pub(super) fn zero_unset(slots: &mut [u32], word: u64) {
    let mut unset = !word;
    if slots.len() < 64 {
        unset &= (1 << slots.len()) - 1;
    }
    while unset != 0 {
        slots[unset.trailing_zeros() as usize] = 0;
        unset &= unset - 1;
    }
}

/// Rows per (morsel's tuple, value's bits) among the values whose slot is in their
/// tuple's `ranges` (by the tuple's number in the morsel): `count_and_keep`'s where the
/// slots span too many cells for its table.
fn keep_guessed(
    tuple_of: &[u32],
    slots: &[u32],
    xs: &[f64],
    ranges: &[Option<&Ranges>],
) -> ValueRows {
    let mut kept = ValueRows::new();
    for ((&t, &s), &x) in tuple_of.iter().zip(slots).zip(xs) {
        if s != 0 && guess::holds(ranges[t as usize], s) {
            // −0 made 0, as its slot was.
            *kept.entry((t, (x + 0.0).to_bits())).or_insert(0) += 1;
        }
    }
    kept
}

/// Sets bits `first..=last`, a word at a time.
fn set_bits(bits: &mut [u64], first: usize, last: usize) {
    let (fw, lw) = (first / 64, last / 64);
    let from = u64::MAX << (first % 64);
    let to = u64::MAX >> (63 - last % 64);
    if fw == lw {
        bits[fw] |= from & to;
    } else {
        bits[fw] |= from;
        bits[fw + 1..lw].fill(u64::MAX);
        bits[lw] |= to;
    }
}

/// A value's bucket as a count key's low bits (never 0, which stands for a null value).
fn slot(x: f64) -> u32 {
    // −0 made 0 (IEEE addition gives −0 + 0 = 0), so that a value has one bucket.
    (bucket_of(x + 0.0, BUCKET_SHIFT) + BUCKET_OFFSET) as u32
}

/// Rows per (tuple, slot) among `tuples` tuples, as (tuple, slot, rows), hashed:
/// `count_and_keep`'s where the slots span too many cells for its table, or are all null.
fn count_slots(tuple_of: &[u32], slots: &[u32]) -> Vec<(u32, u32, u64)> {
    let mut counts: PlHashMap<(u32, u32), u64> = PlHashMap::new();
    for (&t, &s) in tuple_of.iter().zip(slots) {
        *counts.entry((t, s)).or_insert(0) += 1;
    }
    counts.into_iter().map(|((t, s), n)| (t, s, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ruleset::compile::CLASS_INDEX;
    use crate::stats::exact::bucket_expr;
    use crate::stats::keys_as_text;
    use std::collections::BTreeMap;

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

    /// `exact::finite_buckets`: the histogram of the finite values alone, as a group-by of
    /// the values made null where they are not finite, nulls aside; the buckets of
    /// infinities and NaNs are apart from every finite value's.
    #[test]
    fn finite_buckets_are_the_histogram_of_the_finite_values() {
        let xs = [
            Some(f64::NEG_INFINITY),
            Some(-f64::MAX),
            Some(-2.5),
            Some(0.0),
            Some(f64::MAX),
            Some(f64::INFINITY),
            Some(f64::NAN),
            Some(-f64::NAN),
            None,
        ];
        let values: Vec<Option<f64>> = xs.iter().cycle().take(90).copied().collect();
        let lf = df!("x" => values.clone()).unwrap().lazy();
        let all = collect(&lf, &[], &["x".to_string()]).unwrap().remove(0);
        let finite = super::super::exact::finite_buckets(&all).unwrap();
        let nulled: Vec<Option<f64>> = values.iter().map(|x| x.filter(|x| x.is_finite())).collect();
        let want = collect(&df!("x" => nulled).unwrap().lazy(), &[], &["x".to_string()])
            .unwrap()
            .remove(0);
        let values_of = |df: &DataFrame| df.filter(&df[BUCKET_COL].is_not_null()).unwrap();
        assert!(
            values_of(&finite).equals_missing(&values_of(&want)),
            "{finite}\n{want}"
        );
        // The four finite values' buckets, and the nulls'.
        assert_eq!(finite.height(), 5);
        let bucket = |x: f64| bucket_of(x + 0.0, BUCKET_SHIFT);
        for far in [f64::INFINITY, f64::NAN] {
            assert!(bucket(far) > bucket(f64::MAX));
            assert!(bucket(-far) < bucket(-f64::MAX));
        }
    }

    /// Nulls anywhere in a morsel, past whole words of rows and in their remainder, and in
    /// a column that starts mid-byte (a slice), are counted as nulls and every other row
    /// in its bucket.
    #[test]
    fn nulls_are_counted_wherever_they_are() {
        let mut seed = 9u64;
        let xs: Vec<Option<f64>> = (0..1000)
            .map(|i| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((seed >> 60) != 0 || i % 97 == 0).then_some((seed >> 40) as f64 / 7.0)
            })
            .collect();
        for (offset, len) in [(0, 1000), (3, 997), (5, 130), (64, 64), (1, 63)] {
            let part = &xs[offset..offset + len];
            let df = df!("x" => xs.clone()).unwrap().slice(offset as i64, len);
            let got = collect(&df.lazy(), &[], &["x".to_string()])
                .unwrap()
                .remove(0);
            let mut want: BTreeMap<Option<i64>, u64> = BTreeMap::new();
            for x in part {
                *want
                    .entry(x.map(|x| bucket_of(x + 0.0, BUCKET_SHIFT)))
                    .or_default() += 1;
            }
            let buckets = got.column(BUCKET_COL).unwrap().i64().unwrap();
            let counts = got.column(COUNT_COL).unwrap().u64().unwrap();
            let got: BTreeMap<Option<i64>, u64> = buckets
                .iter()
                .zip(counts.iter())
                .map(|(b, n)| (b, n.unwrap()))
                .collect();
            assert_eq!(got, want, "{offset}..+{len}");
        }
    }

    /// Past the budget, the value that kept the most is dropped, in every shard; the others
    /// add up over the morsels.
    #[test]
    fn past_the_budget_the_largest_value_is_dropped() {
        let keeping = Keeping::new(2, &Arc::new(Budget::new(4)));
        let morsel = |a: u64, b: u64| -> Vec<ValueRows> {
            vec![
                (0..a).map(|x| ((0, x), 1)).collect(),
                (0..b).map(|x| ((0, x), 1)).collect(),
            ]
        };
        // 3 pairs, then 5: value 0 (4 of them) is dropped.
        keeping.add(morsel(2, 1), &[7]);
        keeping.add(morsel(4, 1), &[7]);
        keeping.add(morsel(1, 1), &[7]);
        let totals = keeping.take();
        assert!(totals[0].is_none());
        let kept = totals[1].as_ref().unwrap();
        // Three morsels' rows of value 1, numbered as the pass numbers the tuple.
        assert_eq!(kept.get(&(7, 0)), Some(&3));
        assert_eq!(kept.len(), 1);
    }

    /// Histograms of one pass share its budget: the value that keeps the most, in
    /// whichever of them, is dropped, and the other's values stay.
    #[test]
    fn the_budget_is_shared_by_the_pass_histograms() {
        let budget = Arc::new(Budget::new(6));
        let (a, b) = (Keeping::new(1, &budget), Keeping::new(2, &budget));
        let rows = |n: u64| -> ValueRows { (0..n).map(|x| ((0, x), 1)).collect() };
        a.add(vec![rows(2)], &[0]);
        b.add(vec![rows(3), rows(1)], &[0]);
        // 6 pairs: within the budget.
        assert!(a.take()[0].is_some());
        b.add(vec![rows(4), rows(1)], &[0]);
        // 2 + 4 + 1 = 7: b's first value (4 pairs) is dropped.
        let b_kept = b.take();
        assert!(b_kept[0].is_none());
        assert_eq!(b_kept[1].as_ref().unwrap().len(), 1);
    }

    #[test]
    fn bit_ranges_are_set_whole() {
        for (first, last) in [
            (0, 0),
            (3, 9),
            (0, 63),
            (5, 64),
            (63, 200),
            (64, 127),
            (70, 191),
        ] {
            let mut bits = vec![0u64; 4];
            set_bits(&mut bits, first, last);
            for i in 0..256 {
                let set = bits[i / 64] & (1 << (i % 64)) != 0;
                assert_eq!(set, (first..=last).contains(&i), "{first}..={last} at {i}");
            }
        }
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
