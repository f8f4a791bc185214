//! The two-sample statistics: the Kolmogorov–Smirnov test, the Mann–Whitney U test and
//! the percentile bootstrap of a shift, with its seeded random stream.

use rand_distr::{Beta, Distribution};
use statrs::distribution::{ContinuousCDF, Normal};

use super::result::*;
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
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let a = sorted(a);
    let b = sorted(b);
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j) = (0usize, 0usize);
    let mut d: f64 = 0.0;
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / n1 - j as f64 / n2).abs());
    }
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
    mann_whitney_sorted(&sorted(a), &sorted(b))
}

/// `mann_whitney` of two samples already sorted (`sorted`): their ranks are read by
/// walking both at once, each run of equal values across them one group of tied ranks.
pub(super) fn mann_whitney_sorted(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let mut rank_sum_b = 0.0;
    let mut ties = 0.0;
    // Values ranked so far, and the next value of each sample.
    let (mut seen, mut i, mut j) = (0usize, 0usize, 0usize);
    while i < a.len() || j < b.len() {
        // The next value of the union in `total_cmp` order, A's first among equals (as a
        // stable sort of A then B has them).
        let from_a_first = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.total_cmp(y).is_le(),
            (x, _) => x.is_some(),
        };
        let x = if from_a_first { a[i] } else { b[j] };
        let (from_a, from_b) = if x.is_nan() {
            // NaN equals nothing, itself included: a group of one.
            (usize::from(from_a_first), usize::from(!from_a_first))
        } else {
            // Values equal to x (−0 and 0 are) lie together in each sample's order.
            (
                a[i..].iter().take_while(|v| **v == x).count(),
                b[j..].iter().take_while(|v| **v == x).count(),
            )
        };
        (i, j) = (i + from_a, j + from_b);
        // Ranks seen+1 ..= seen+t share their average.
        let t = from_a + from_b;
        let rank = (2 * seen + t + 1) as f64 / 2.0;
        let t = t as f64;
        ties += t * t * t - t;
        rank_sum_b += rank * from_b as f64;
        seen += from_a + from_b;
    }
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
    bootstrap_shift_sorted(&sorted(a), &sorted(b), qs, resamples, confidence, rng)
}

/// `bootstrap_shift` of two samples already sorted (`sorted`).
pub(super) fn bootstrap_shift_sorted(
    a: &[f64],
    b: &[f64],
    qs: &[f64],
    resamples: usize,
    confidence: f64,
    rng: &mut SplitMix64,
) -> Vec<Option<(f64, f64)>> {
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return vec![None; qs.len()];
    }
    let draws =
        |v: &[f64]| -> Vec<OrderDraw> { qs.iter().map(|q| OrderDraw::new(v.len(), *q)).collect() };
    let (da, db) = (draws(a), draws(b));
    let mut diffs: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); qs.len()];
    for _ in 0..resamples {
        for (k, d) in diffs.iter_mut().enumerate() {
            let qa = da[k].draw(a, rng);
            let qb = db[k].draw(b, rng);
            d.push(qb - qa);
        }
    }
    let lo = (1.0 - confidence) / 2.0;
    diffs
        .into_iter()
        .map(|mut d| {
            d.sort_by(f64::total_cmp);
            Some((quantile7(&d, lo)?, quantile7(&d, 1.0 - lo)?))
        })
        .collect()
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
        let n = self.n;
        let at = |u: f64| sorted[((n as f64 * u).ceil() as usize).clamp(1, n) - 1];
        let u = self.lower.sample(rng);
        let x = at(u);
        if self.frac == 0.0 || self.k == n {
            return x;
        }
        // 1 − W^(1/m), computed as −expm1(ln W / m) so that it keeps its digits when m is
        // in the millions.
        let w = rng.unit_open();
        let next = u - (1.0 - u) * (w.ln() / (n - self.k) as f64).exp_m1();
        x + self.frac * (at(next) - x)
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

    /// The ranks of the merged walk are those of the sorted union (A before B among equal
    /// values), NaN of either sign included, each NaN a group of its own.
    #[test]
    fn ranks_are_those_of_the_sorted_union() {
        let union_ranks = |a: &[f64], b: &[f64]| -> f64 {
            let mut all: Vec<(f64, bool)> = a
                .iter()
                .map(|x| (*x, false))
                .chain(b.iter().map(|x| (*x, true)))
                .collect();
            all.sort_by(|x, y| x.0.total_cmp(&y.0));
            let (mut rank_sum_b, mut i) = (0.0, 0);
            while i < all.len() {
                let mut j = i;
                while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
                    j += 1;
                }
                let rank = (i + j + 2) as f64 / 2.0;
                rank_sum_b += rank * all[i..=j].iter().filter(|v| v.1).count() as f64;
                i = j + 1;
            }
            rank_sum_b
        };
        let a = [f64::NAN, -f64::NAN, 1.0, 1.0, -0.0, 0.0, 2.0, f64::NAN];
        let b = [f64::NAN, 0.0, 1.0, -0.0, 3.0, -f64::NAN, 2.0];
        let rank_sum_b = union_ranks(&a, &b);
        let n2 = b.len() as f64;
        let got = mann_whitney(&a, &b).unwrap();
        assert_eq!(got.u, rank_sum_b - n2 * (n2 + 1.0) / 2.0);
        let plain = [1.0, 1.0, -0.0, 0.0, 2.0];
        let other = [0.0, 1.0, -0.0, 3.0, 2.0];
        let rank_sum_b = union_ranks(&plain, &other);
        assert_eq!(
            mann_whitney(&plain, &other).unwrap().u,
            rank_sum_b - 5.0 * 6.0 / 2.0
        );
    }
}
