//! The rows a pass of `histogram` counts per (tuple, slot) of one value, added up morsel
//! by morsel.
//!
//! A hash table of every (tuple, slot) took each morsel's counts one lookup each, under
//! the lock the other thread waits on: a metric's slots lie close together, so the
//! lookups of a table of many thousand entries missed the cache, and the additions took
//! about a sixth of the histograms' time. Here a tuple's slots are a table indexed by
//! position, grown as slots further out are met, while its span and the value's tables
//! stay small; past that (an outlier many powers of two away, or very many tuples) the
//! tuple's slots are hashed, as before.

use polars::prelude::PlHashMap;

/// At most this many slots in one tuple's table (128 KiB of counts): 32 powers of two at
/// 512 slots each, wider than a metric's usual range.
const SPAN: usize = 1 << 14;
/// At most this many slots in all of one value's tables (8 MiB of counts).
const CELLS: usize = 1 << 20;

/// One tuple's rows per slot, and its nulls (slot 0).
#[derive(Default)]
struct Tuple {
    nulls: u64,
    cells: Cells,
}

enum Cells {
    /// Rows of slots `low`, `low + 1`, … by position.
    Dense {
        low: u32,
        rows: Vec<u64>,
    },
    Hashed(PlHashMap<u32, u64>),
}

impl Default for Cells {
    fn default() -> Self {
        Cells::Dense {
            low: 0,
            rows: vec![],
        }
    }
}

/// Rows per (tuple's number, slot) of one value.
#[derive(Default)]
pub(super) struct Slots {
    tuples: Vec<Tuple>,
    /// Slots in all dense tables.
    cells: usize,
}

impl Slots {
    /// Adds `n` rows of `slot` (0: null) to tuple `t`.
    pub(super) fn add(&mut self, t: u32, slot: u32, n: u64) {
        let t = t as usize;
        if t >= self.tuples.len() {
            self.tuples.resize_with(t + 1, Tuple::default);
        }
        let tuple = &mut self.tuples[t];
        if slot == 0 {
            tuple.nulls += n;
            return;
        }
        match &mut tuple.cells {
            Cells::Dense { low, rows } => {
                if rows.is_empty() {
                    *low = slot;
                } else if let Some(i) = slot
                    .checked_sub(*low)
                    .filter(|&i| (i as usize) < rows.len())
                {
                    rows[i as usize] += n;
                    return;
                }
                // A slot past the table: grown to hold it, with room for as much again on
                // that side (so that a table grows a few times, not once a slot), or
                // hashed where that would make it too wide.
                let (start, high) = (
                    (*low).min(slot) as usize,
                    (*low as usize + rows.len()).max(slot as usize + 1),
                );
                let more = high - start - rows.len();
                let roomy = if slot < *low {
                    (
                        start.saturating_sub(more).max(high.saturating_sub(SPAN)),
                        high,
                    )
                } else {
                    (start, (high + more).min(start + SPAN))
                };
                let fits = |(from, to): (usize, usize)| {
                    from <= start
                        && to >= high
                        && to - from <= SPAN
                        && self.cells + (to - from) - rows.len() <= CELLS
                };
                let room = [roomy, (start, high)].into_iter().find(|r| fits(*r));
                match room {
                    Some((from, to)) => {
                        let mut grown = vec![0; to - from];
                        let at = *low as usize - from;
                        grown[at..at + rows.len()].copy_from_slice(rows);
                        grown[slot as usize - from] += n;
                        self.cells += grown.len() - rows.len();
                        *low = from as u32;
                        *rows = grown;
                    }
                    None => {
                        let mut hashed: PlHashMap<u32, u64> = rows
                            .iter()
                            .enumerate()
                            .filter(|(_, &r)| r > 0)
                            .map(|(i, &r)| (*low + i as u32, r))
                            .collect();
                        *hashed.entry(slot).or_insert(0) += n;
                        self.cells -= rows.len();
                        tuple.cells = Cells::Hashed(hashed);
                    }
                }
            }
            Cells::Hashed(m) => *m.entry(slot).or_insert(0) += n,
        }
    }

    /// Every (tuple's number, slot, rows) with rows, nulls as slot 0; in no set order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, u32, u64)> + '_ {
        self.tuples.iter().enumerate().flat_map(|(t, tuple)| {
            let t = t as u32;
            let nulls = (tuple.nulls > 0).then_some((t, 0, tuple.nulls));
            let cells: Box<dyn Iterator<Item = (u32, u32, u64)>> = match &tuple.cells {
                Cells::Dense { low, rows } => Box::new(
                    rows.iter()
                        .enumerate()
                        .filter(|(_, &r)| r > 0)
                        .map(move |(i, &r)| (t, low + i as u32, r)),
                ),
                Cells::Hashed(m) => Box::new(m.iter().map(move |(&s, &r)| (t, s, r))),
            };
            nulls.into_iter().chain(cells)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Whatever order the slots come in, near or far apart, below or above those met,
    /// the rows per (tuple, slot) are a plain tally's; far-apart slots are hashed.
    #[test]
    fn slots_add_up_as_a_tally() {
        let mut seed = 3u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let mut slots = Slots::default();
        let mut want: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        for i in 0..20_000 {
            let t = next(5) as u32;
            let slot = match i % 10 {
                0 => 0,
                // Far out: tuple 4's slots spread too wide for a table.
                9 if t == 4 => 1 + next(1 << 21) as u32,
                _ => 1_000_000 + next(3000) as u32 - 1500 + t * 100,
            };
            let n = 1 + next(3);
            slots.add(t, slot, n);
            *want.entry((t, slot)).or_default() += n;
        }
        // Tuples 5 and 6: a slot more than a table's span above, and below, the first.
        for (t, s) in [(5, 100), (5, 100 + SPAN as u32 + 7), (6, 90_000), (6, 20)] {
            slots.add(t, s, 1);
            *want.entry((t, s)).or_default() += 1;
        }
        let got: BTreeMap<(u32, u32), u64> = slots.iter().map(|(t, s, n)| ((t, s), n)).collect();
        assert_eq!(got, want);
        for t in [4, 5, 6] {
            assert!(matches!(slots.tuples[t].cells, Cells::Hashed(_)), "{t}");
        }
        assert!(matches!(slots.tuples[0].cells, Cells::Dense { .. }));
        assert_eq!(
            slots.cells,
            slots.tuples[..4]
                .iter()
                .map(|t| match &t.cells {
                    Cells::Dense { rows, .. } => rows.len(),
                    Cells::Hashed(_) => 0,
                })
                .sum::<usize>()
        );
    }
}
