//! The two-sample statistics: the Kolmogorov–Smirnov test, the Mann–Whitney U test and
//! the percentile bootstrap of a shift, with its seeded random stream.

use rand_distr::{Beta, Distribution};
use statrs::distribution::{ContinuousCDF, Normal};

use super::result::*;
use crate::stats::exact::order_key;
use crate::stats::quantile7;

/// SplitMix64 (Steele, Lea & Flood 2014): small, fast, the same on every platform.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2⁻⁴⁰ for any n we use).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in (0, 1): 53 random bits, never 0.
    pub fn unit_open(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// So that `rand_distr`'s samplers (the bootstrap's Beta) draw from the same seeded stream.
impl rand_core::TryRng for SplitMix64 {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> std::result::Result<u32, Self::Error> {
        Ok((self.next_u64() >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> std::result::Result<u64, Self::Error> {
        Ok(self.next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> std::result::Result<(), Self::Error> {
        for chunk in dst.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(())
    }
}

/// The survival function of the Kolmogorov distribution, Q(λ) = P(K > λ): the limiting
/// distribution of √(n_A n_B / (n_A + n_B)) · D (Smirnov 1948). Two series, each used
/// where it converges fast (as in Marsaglia, Tsang & Wang 2003 and Numerical Recipes §14.3).
pub fn kolmogorov_sf(lambda: f64) -> f64 {
    if !lambda.is_finite() {
        return if lambda > 0.0 { 0.0 } else { 1.0 };
    }
    if lambda <= 0.0 {
        return 1.0;
    }
    let q = if lambda < 1.18 {
        // P(K ≤ λ) = √(2π)/λ · Σ_{j≥1} exp(−(2j − 1)² π² / (8 λ²))
        let k = -std::f64::consts::PI * std::f64::consts::PI / (8.0 * lambda * lambda);
        let s: f64 = (1..=20)
            .map(|j| {
                let m = (2 * j - 1) as f64;
                (k * m * m).exp()
            })
            .sum();
        1.0 - (2.0 * std::f64::consts::PI).sqrt() / lambda * s
    } else {
        // Q(λ) = 2 Σ_{j≥1} (−1)^{j−1} exp(−2 j² λ²)
        let s: f64 = (1..=20)
            .map(|j| {
                let j = j as f64;
                let sign = if j as i64 % 2 == 1 { 1.0 } else { -1.0 };
                sign * (-2.0 * j * j * lambda * lambda).exp()
            })
            .sum();
        2.0 * s
    };
    q.clamp(0.0, 1.0)
}

/// The two-sample Kolmogorov–Smirnov test: D = the largest distance between the two
/// empirical distribution functions, and its asymptotic two-sided p-value
/// Q(√(n_A n_B / (n_A + n_B)) · D) — R's `ks.test(a, b, exact = FALSE)`. Ties (token counts
/// are integers) make it conservative. `None` when a sample is empty.
pub fn ks_two_sample(a: &[f64], b: &[f64]) -> Option<TwoSample> {
    ks_tallies(&tally(a), &tally(b))
}

/// `ks_two_sample` of two tallies.
pub(super) fn ks_tallies(a: &[(i64, u64)], b: &[(i64, u64)]) -> Option<TwoSample> {
    let (n1, n2) = (total(a) as f64, total(b) as f64);
    if n1 == 0.0 || n2 == 0.0 {
        return None;
    }
    // The distribution functions at each value of the union, in order.
    let mut d: f64 = 0.0;
    let (mut ca, mut cb) = (0u64, 0u64);
    walk(a, b, |from_a, from_b| {
        (ca, cb) = (ca + from_a, cb + from_b);
        d = d.max((ca as f64 / n1 - cb as f64 / n2).abs());
    });
    let en = (n1 * n2 / (n1 + n2)).sqrt();
    Some(TwoSample {
        test: "Kolmogorov–Smirnov",
        statistic: d,
        p_value: kolmogorov_sf(en * d),
    })
}

/// The Mann–Whitney U test, two-sided, normal approximation with the tie correction of the
/// variance and a continuity correction of ½ (SciPy's `mannwhitneyu(..., method="asymptotic")`).
/// `None` when a sample is empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    mann_whitney_tallies(&tally(a), &tally(b))
}

/// `mann_whitney` of two tallies: each key one value (or one bin, whose values then count
/// as tied). The ranks are read by walking both tallies at once, each key of the union
/// one group of tied ranks.
pub(super) fn mann_whitney_tallies(a: &[(i64, u64)], b: &[(i64, u64)]) -> Option<MannWhitney> {
    let (n1, n2) = (total(a) as f64, total(b) as f64);
    if n1 == 0.0 || n2 == 0.0 {
        return None;
    }
    let mut rank_sum_b = 0.0;
    let mut ties = 0.0;
    // Values ranked so far.
    let mut seen = 0u64;
    walk(a, b, |from_a, from_b| {
        // Ranks seen+1 ..= seen+t share their average.
        let t = from_a + from_b;
        let rank = (2 * seen + t + 1) as f64 / 2.0;
        let t_f = t as f64;
        ties += t_f * t_f * t_f - t_f;
        rank_sum_b += rank * from_b as f64;
        seen += t;
    });
    let u = rank_sum_b - n2 * (n2 + 1.0) / 2.0;
    let mu = n1 * n2 / 2.0;
    let nn = n1 + n2;
    let var = n1 * n2 / 12.0 * ((nn + 1.0) - ties / (nn * (nn - 1.0)));
    let diff = u - mu;
    let (z, p) = if var > 0.0 {
        let z = diff.signum() * (diff.abs() - 0.5).max(0.0) / var.sqrt();
        let normal = Normal::standard();
        (z, (2.0 * normal.sf(z.abs())).min(1.0))
    } else {
        (0.0, 1.0)
    };
    Some(MannWhitney {
        u,
        b_above_a: u / (n1 * n2),
        z,
        p_value: p,
    })
}

/// A sample as its distinct values in order, each with how many times it occurs: keyed by
/// `order_key` (so in the floats' order), −0 counted as 0.
pub(super) fn tally(values: &[f64]) -> Vec<(i64, u64)> {
    let mut keys: Vec<i64> = values
        .iter()
        .map(|&x| order_key(if x == 0.0 { 0.0 } else { x }))
        .collect();
    keys.sort_unstable();
    let mut out: Vec<(i64, u64)> = vec![];
    for k in keys {
        match out.last_mut() {
            Some((last, n)) if *last == k => *n += 1,
            _ => out.push((k, 1)),
        }
    }
    out
}

/// How many values a tally counts.
pub(super) fn total(t: &[(i64, u64)]) -> u64 {
    t.iter().map(|(_, n)| n).sum()
}

/// The union of two tallies in key order: `step(from_a, from_b)` once per key, with each
/// tally's count of it (0 where it has none).
fn walk(a: &[(i64, u64)], b: &[(i64, u64)], mut step: impl FnMut(u64, u64)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let key = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.min(y.0),
            (Some(x), None) => x.0,
            (None, Some(y)) => y.0,
            (None, None) => unreachable!("the loop's condition"),
        };
        let take = |t: &[(i64, u64)], at: &mut usize| match t.get(*at) {
            Some(&(k, n)) if k == key => {
                *at += 1;
                n
            }
            _ => 0,
        };
        let from_a = take(a, &mut i);
        let from_b = take(b, &mut j);
        step(from_a, from_b);
    }
}

/// The percentile-bootstrap interval of the shift q(B) − q(A) for each quantile in `qs`:
/// `resamples` times, draw each cohort with replacement at its own size, take the type-7
/// quantiles of both, keep the difference; the interval runs between the (1 − confidence)/2
/// and (1 + confidence)/2 type-7 quantiles of those differences. `None` where a cohort is
/// empty or `resamples` is 0.
///
/// A resample is never built: the order statistics a quantile needs are drawn directly
/// (`OrderDraw`), with the same distribution, so the cost does not grow with the cohorts.
pub fn bootstrap_shift(
    a: &[f64],
    b: &[f64],
    qs: &[f64],
    resamples: usize,
    confidence: f64,
    rng: &mut SplitMix64,
) -> Vec<Option<(f64, f64)>> {
    let (a, b) = (sorted(a), sorted(b));
    match Bootstrap::draw(a.len() as u64, b.len() as u64, qs, resamples, rng) {
        Some(draws) => draws.intervals(|i| a[i as usize], |i| b[i as usize], confidence),
        None => vec![None; qs.len()],
    }
}

/// A bootstrap's draws, made before any value is read: which ranks of each sorted cohort
/// every resample's quantiles read. The random stream does not depend on the values, so
/// the ranks can be drawn first, the values at them fetched (`stats::ranked`), and the
/// intervals computed from those alone.
pub(super) struct Bootstrap {
    /// Per quantile, each cohort's draw.
    draws: Vec<[OrderDraw; 2]>,
    /// Per quantile, per resample, the ranks A's and B's draw read.
    ranks: Vec<Vec<[Drawn; 2]>>,
}

impl Bootstrap {
    /// `resamples` draws of each quantile of `qs`, for cohorts of `na` and `nb` values;
    /// `None` where a cohort is empty or `resamples` is 0.
    pub(super) fn draw(
        na: u64,
        nb: u64,
        qs: &[f64],
        resamples: usize,
        rng: &mut SplitMix64,
    ) -> Option<Bootstrap> {
        if na == 0 || nb == 0 || resamples == 0 {
            return None;
        }
        let draws: Vec<[OrderDraw; 2]> = qs
            .iter()
            .map(|&q| {
                [
                    OrderDraw::new(na as usize, q),
                    OrderDraw::new(nb as usize, q),
                ]
            })
            .collect();
        let mut ranks: Vec<Vec<[Drawn; 2]>> = vec![Vec::with_capacity(resamples); qs.len()];
        // Resample by resample, each quantile's A then B: the stream's order.
        for _ in 0..resamples {
            for (k, [da, db]) in draws.iter().enumerate() {
                let ra = da.ranks(rng);
                let rb = db.ranks(rng);
                ranks[k].push([ra, rb]);
            }
        }
        Some(Bootstrap { draws, ranks })
    }

    /// The lowest and the highest rank of cohort `side` (0 for A, 1 for B) that the draws
    /// of quantile `k` read.
    pub(super) fn span(&self, k: usize, side: usize) -> (u64, u64) {
        let mut lo = u64::MAX;
        let mut hi = 0;
        for r in &self.ranks[k] {
            let d = r[side];
            for x in std::iter::once(d.lower).chain(d.upper) {
                (lo, hi) = (lo.min(x), hi.max(x));
            }
        }
        (lo, hi)
    }

    /// The intervals, `at_a(i)` and `at_b(i)` being the value of 0-based rank i of each
    /// sorted cohort.
    pub(super) fn intervals(
        &self,
        at_a: impl Fn(u64) -> f64,
        at_b: impl Fn(u64) -> f64,
        confidence: f64,
    ) -> Vec<Option<(f64, f64)>> {
        let lo = (1.0 - confidence) / 2.0;
        self.draws
            .iter()
            .zip(&self.ranks)
            .map(|([da, db], ranks)| {
                let mut d: Vec<f64> = ranks
                    .iter()
                    .map(|[ra, rb]| db.value(*rb, &at_b) - da.value(*ra, &at_a))
                    .collect();
                d.sort_by(f64::total_cmp);
                Some((quantile7(&d, lo)?, quantile7(&d, 1.0 - lo)?))
            })
            .collect()
    }
}

/// The type-7 quantile q of a resample (with replacement, size n) of n sorted values,
/// drawn without building the resample.
///
/// Resampling is drawing n uniforms U and taking `sorted[⌈n·U⌉ − 1]`, a non-decreasing
/// map; so the resample's k-th smallest value is `sorted[⌈n·U₍ₖ₎⌉ − 1]` where U₍ₖ₎, the
/// k-th smallest of n uniforms, is Beta(k, n + 1 − k). The next one up, which type 7
/// interpolates towards, is the smallest of the n − k uniforms above U₍ₖ₎:
/// U₍ₖ₎ + (1 − U₍ₖ₎)·Beta(1, n − k), and Beta(1, m) is 1 − W^(1/m) for a uniform W.
pub struct OrderDraw {
    n: usize,
    /// 1-based rank of the lower order statistic: ⌊(n − 1)·q⌋ + 1.
    k: usize,
    frac: f64,
    lower: Beta<f64>,
}

/// The 0-based ranks one draw reads: the lower order statistic's, and the next one's
/// when type 7 interpolates.
#[derive(Debug, Clone, Copy)]
pub(super) struct Drawn {
    lower: u64,
    upper: Option<u64>,
}

impl OrderDraw {
    pub fn new(n: usize, q: f64) -> Self {
        let h = (n - 1) as f64 * q;
        let k = h.floor() as usize + 1;
        OrderDraw {
            n,
            k,
            frac: h - (k - 1) as f64,
            lower: Beta::new(k as f64, (n + 1 - k) as f64).expect("1 ≤ k ≤ n"),
        }
    }

    /// One draw, from `sorted` (the n values).
    pub fn draw(&self, sorted: &[f64], rng: &mut SplitMix64) -> f64 {
        self.value(self.ranks(rng), |i| sorted[i as usize])
    }

    /// The ranks of one draw.
    pub(super) fn ranks(&self, rng: &mut SplitMix64) -> Drawn {
        let n = self.n;
        let rank = |u: f64| (((n as f64 * u).ceil() as usize).clamp(1, n) - 1) as u64;
        let u = self.lower.sample(rng);
        if self.frac == 0.0 || self.k == n {
            return Drawn {
                lower: rank(u),
                upper: None,
            };
        }
        // 1 − W^(1/m), computed as −expm1(ln W / m) so that it keeps its digits when m is
        // in the millions.
        let w = rng.unit_open();
        let next = u - (1.0 - u) * (w.ln() / (n - self.k) as f64).exp_m1();
        Drawn {
            lower: rank(u),
            upper: Some(rank(next)),
        }
    }

    /// The drawn quantile, `at(i)` being the value of 0-based rank i.
    pub(super) fn value(&self, d: Drawn, at: impl Fn(u64) -> f64) -> f64 {
        let x = at(d.lower);
        match d.upper {
            Some(next) => x + self.frac * (at(next) - x),
            None => x,
        }
    }
}

/// In `f64::total_cmp` order. Unstable: values equal in that order are the same bits, so
/// no order among them can show.
pub(super) fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// Round to 4 significant digits, for p-values that may be tiny (stable output).
pub(super) fn round_sig(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    format!("{x:.3e}").parse().unwrap_or(x)
}

pub(super) fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0 + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// U read off the two sorted samples equals its definition, counted pair by pair (B
    /// above A, ties a half), with ties within and across the samples and −0 beside 0.
    #[test]
    fn u_from_the_sorted_samples_is_the_pairwise_count() {
        let mut rng = SplitMix64::new(7);
        let mut draw = |n: usize| -> Vec<f64> {
            (0..n)
                .map(|_| match rng.below(10) {
                    0 => -0.0,
                    1 => 0.0,
                    k => (rng.below(6) as f64) * 0.5 + k as f64,
                })
                .collect()
        };
        let (a, b) = (draw(300), draw(200));
        let mut u = 0.0;
        for x in &a {
            for y in &b {
                u += if y > x {
                    1.0
                } else if y == x {
                    0.5
                } else {
                    0.0
                };
            }
        }
        assert_eq!(mann_whitney(&a, &b).unwrap().u, u);
    }

    /// Keyed by bins, the walk ranks each bin as one group of ties: U of two tallies of
    /// bins counts each pair of one bin ½, as the pairwise definition on the bins does.
    #[test]
    fn a_bin_is_a_group_of_ties() {
        let a_bins = [3i64, 1, 3, 7, 2, 3, 9];
        let b_bins = [3i64, 4, 1, 9, 9, 0];
        let tally_of = |bins: &[i64]| -> Vec<(i64, u64)> {
            let mut t = std::collections::BTreeMap::new();
            for b in bins {
                *t.entry(*b).or_insert(0u64) += 1;
            }
            t.into_iter().collect()
        };
        let mut u = 0.0;
        for x in &a_bins {
            for y in &b_bins {
                u += match y.cmp(x) {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                };
            }
        }
        let got = mann_whitney_tallies(&tally_of(&a_bins), &tally_of(&b_bins)).unwrap();
        assert_eq!(got.u, u);
        assert_eq!(got.b_above_a, u / (7.0 * 6.0));
    }
}
