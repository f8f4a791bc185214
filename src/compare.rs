//! `tracediag compare`: two cohorts of requests side by side, compared fairly
//! (docs/compare.md).
//!
//! The cohorts are two input sets (A and B), or one input set split by the values of a
//! label column. The comparison checks the workload contract first — model ids, streaming
//! share, token distributions, concurrency and arrival rate, time windows, sample counts,
//! failure rates — and records every difference beyond a stated tolerance as a warning
//! that names the field and both values. Then come p50/p95/p99 of every named metric per
//! cohort (failures included), the shift B − A of each percentile with a bootstrap
//! confidence interval, a Mann–Whitney U test per metric, and the class mix.
//!
//! Plain data only: nothing here prints. The statistics (`ks_two_sample`, `mann_whitney`,
//! `bootstrap_shift`, `SplitMix64`) are public so they can be checked on their own.
//!
//! Tolerances (a difference beyond one is a warning; `--strict` makes any warning exit 1):
//!
//! | field | warning when |
//! |---|---|
//! | model ids, groups, regions | the sets of values differ, or one value's share differs by more than 10 points |
//! | streaming share | differs by more than 5 points |
//! | input / output tokens | two-sample Kolmogorov–Smirnov test rejects one distribution at p < 0.01 |
//! | concurrency (inflight median) | the larger median is more than 1.5 × the smaller |
//! | arrival rate (requests per minute over the cohort's span) | the larger is more than 1.5 × the smaller |
//! | time window | the windows overlap for less than half of the shorter one |
//! | sample count | a cohort has fewer than 100 requests (its p99 rests on one or two values) |
//! | failure rate | differs by more than 2 points |
//!
//! A field recorded in one cohort only is a warning too; a field recorded in neither is
//! listed as not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use polars::prelude::*;
use rand_distr::{Beta, Distribution};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::analyze::{self, iso_ms};
use crate::catalogue;
use crate::error::{Error, Result};
use crate::plan;
use crate::ruleset::RuleSet;
use crate::source::{self, SOURCE_COL};
use crate::stats;
use crate::stats::{quantile7, support};
use crate::summary::{
    round3, tool, BadRows, Count, LeftOut, Overlap, Pct, RulesInfo, TimeSpan, Window,
    PERCENTILE_METHOD,
};

/// The bootstrap seed when none is given: a fixed one, so the same input gives the same
/// intervals on every run.
pub const DEFAULT_SEED: u64 = 42;
/// Bootstrap resamples per metric (each resample draws both cohorts).
pub const DEFAULT_RESAMPLES: usize = 1000;
/// Confidence level of the shift intervals.
pub const CONFIDENCE: f64 = 0.95;

/// Token distributions differ when the two-sample KS test gives p below this.
pub const TOKEN_P_VALUE: f64 = 0.01;
/// Streaming shares differ by more than this many percentage points.
pub const STREAMING_POINTS: f64 = 5.0;
/// Failure rates differ by more than this many percentage points.
pub const FAILURE_POINTS: f64 = 2.0;
/// The share of one model (group, region) differs by more than this many points.
pub const MIX_POINTS: f64 = 10.0;
/// Arrival rates differ when the larger is more than this times the smaller.
pub const ARRIVAL_RATIO: f64 = 1.5;
/// Concurrency differs when the larger inflight median is more than this times the smaller.
pub const INFLIGHT_RATIO: f64 = 1.5;
/// Time windows differ when they overlap for less than this share of the shorter one.
pub const MIN_OVERLAP: f64 = 0.5;
/// A cohort needs at least this many requests for its p99 to mean something.
pub const MIN_REQUESTS: u64 = support::P99_MIN_N;

/// The quantiles reported and shifted.
const QUANTILES: [(&str, f64); 3] = [("p50", 0.50), ("p95", 0.95), ("p99", 0.99)];

/// Label columns whose mix is part of the workload contract.
const MIX_LABELS: [(&str, &str); 3] = [
    ("model", "model ids"),
    ("group", "groups"),
    ("region", "regions"),
];

/// What the log cannot tell, so the check cannot make.
const NOT_IN_LOG: [&str; 4] = [
    "reasoning effort and tools",
    "sampling settings and max output length",
    "warm-up and retry policy",
    "network path (only the coarse region is recorded)",
];

// ---------------------------------------------------------------------------------------
// Options

/// One cohort of the pair form: a name (the argument as given) and its files.
#[derive(Debug, Clone)]
pub struct CohortInput {
    pub name: String,
    pub inputs: Vec<PathBuf>,
}

/// How the two cohorts are formed.
#[derive(Debug, Clone)]
pub enum Cohorts {
    /// Two input sets, A and B.
    Pair(CohortInput, CohortInput),
    /// One input set, split by the values of a label column (A = first value).
    Split {
        inputs: Vec<PathBuf>,
        column: String,
        values: [String; 2],
    },
}

#[derive(Debug, Clone)]
pub struct Options {
    pub cohorts: Cohorts,
    /// How each cohort's files are read (format, window, bad-row policy); its `inputs`
    /// and `by` are ignored.
    pub read: analyze::Options,
    pub seed: u64,
    pub resamples: usize,
}

/// `COLUMN=A,B` (as given to `--split`) → the column and the two values.
pub fn parse_split(text: &str) -> Result<(String, [String; 2])> {
    let bad = |why: &str| {
        Error::Usage(format!(
            "--split {text}: {why}; expected COLUMN=A,B, e.g. channel=ch-east,ch-west"
        ))
    };
    let (column, values) = text.split_once('=').ok_or_else(|| bad("no `=`"))?;
    let column = column.trim();
    if column.is_empty() {
        return Err(bad("no column"));
    }
    let values: Vec<&str> = values.split(',').map(str::trim).collect();
    match values.as_slice() {
        [a, b] if !a.is_empty() && !b.is_empty() => {
            if a == b {
                Err(bad("the two values are the same"))
            } else {
                Ok((column.to_string(), [a.to_string(), b.to_string()]))
            }
        }
        _ => Err(bad(&format!(
            "expected two values, got {}",
            values.iter().filter(|v| !v.is_empty()).count()
        ))),
    }
}

// ---------------------------------------------------------------------------------------
// Findings

/// The whole comparison, ready for any renderer. Rounded and ordered before it is stored.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub tool: String,
    /// One line written from the figures: the largest significant shift and the contract.
    pub verdict: String,
    pub rules: RulesInfo,
    pub percentile_method: &'static str,
    /// When a percentile is shown, and so shifted (`stats::support::RULE`).
    pub percentile_rule: &'static str,
    /// The label column the cohorts were split by (`--split`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// A, then B.
    pub cohorts: Vec<CohortSummary>,
    /// Checked before any ranking.
    pub contract: Contract,
    pub bootstrap: Bootstrap,
    pub metrics: Vec<MetricComparison>,
    /// Named metrics neither cohort can compute, left out of `metrics`; absent when every
    /// one is there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metrics_left_out: Vec<LeftOut>,
    /// The class mix, in table order, then the default class.
    pub classes: Vec<ClassMix>,
    /// Rows of either cohort's files that could not be read whole (or were left out with
    /// `--on-bad-row skip`); absent when there were none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bad_rows: Option<BadRows>,
    /// Input files of a cohort holding the same requests (counted once per file), when
    /// most of its duplicate ids come from them; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overlapping_inputs: Vec<Overlap>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CohortSummary {
    /// `A` or `B`.
    pub label: String,
    /// The argument as given (pair form) or `column=value` (split form).
    pub name: String,
    pub inputs: Vec<String>,
    pub requests: u64,
    /// Requests whose outcome is known and not ok (error, cancelled, timeout). Included in
    /// every figure.
    pub failures: u64,
    pub failure_rate: f64,
    pub outcomes: Vec<Count>,
    pub time_span: Option<TimeSpan>,
    /// Minutes between the first and the last timestamp.
    pub span_minutes: Option<f64>,
    /// Requests with a timestamp ÷ `span_minutes`.
    pub arrival_per_minute: Option<f64>,
    pub streamed: u64,
    pub not_streamed: u64,
    pub stream_unknown: u64,
    /// Streamed ÷ requests whose streaming flag is known.
    pub streaming_share: Option<f64>,
    pub models: Vec<Count>,
    pub groups: Vec<Count>,
    pub regions: Vec<Count>,
    pub input_tokens: Dist,
    pub output_tokens: Dist,
    /// Requests in flight on the channel when each request started.
    pub inflight: Dist,
}

/// A distribution in brief: how many values, their mean, median and p95 (type 7). In
/// JSON the p95 is null, with the reason, when n is too small for it (`stats::support`).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(into = "DistJson")]
pub struct Dist {
    pub n: u64,
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
}

#[derive(Serialize)]
pub struct DistJson {
    pub n: u64,
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p95_withheld: Option<String>,
}

impl From<Dist> for DistJson {
    fn from(d: Dist) -> DistJson {
        DistJson {
            n: d.n,
            mean: d.mean,
            p50: d.p50,
            p95: support::shown(0.95, d.n, d.p95),
            p95_withheld: support::withheld(0.95, d.n),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Contract {
    /// One row per contract field, in the order they are checked.
    pub checks: Vec<Check>,
    pub input_tokens_test: Option<TwoSample>,
    pub output_tokens_test: Option<TwoSample>,
    /// The checks beyond their tolerance, each naming the field and both values.
    pub warnings: Vec<Warning>,
    /// Contract fields that could not be checked, and why.
    pub not_checked: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub field: String,
    pub a: String,
    pub b: String,
    pub difference: String,
    pub tolerance: String,
    pub within: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Warning {
    pub field: String,
    pub message: String,
}

/// A two-sample test: its statistic and two-sided p-value.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct TwoSample {
    pub test: &'static str,
    pub statistic: f64,
    pub p_value: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
    pub confidence: f64,
    pub method: &'static str,
}

pub const BOOTSTRAP_METHOD: &str = "percentile bootstrap: each cohort resampled with replacement at its own size (SplitMix64; a resample's order statistics drawn directly, U(k) ~ Beta(k, n + 1 - k), so the cost does not grow with n), type-7 quantiles of each resample, the interval between the 2.5th and 97.5th percentiles of the resampled shifts B − A";

pub const MANN_WHITNEY_METHOD: &str =
    "Mann–Whitney U, two-sided, normal approximation with tie and continuity correction";

#[derive(Debug, Clone, Serialize)]
pub struct MetricComparison {
    pub name: String,
    pub label: String,
    pub a: Side,
    pub b: Side,
    /// B − A of p50, p95 and p99, each with its interval.
    pub shift: Vec<Shift>,
    pub mann_whitney: Option<MannWhitney>,
}

/// One cohort's figures for one metric.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Side {
    #[serde(flatten)]
    pub pct: Pct,
    pub nulls: u64,
    /// Of the `n` requests with a value, how many failed (they are in the percentiles).
    pub failures: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Shift {
    pub quantile: &'static str,
    /// B's percentile − A's percentile; null, with the interval, when either cohort is
    /// too small for the percentile (`withheld` says which).
    pub estimate: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct MannWhitney {
    /// Pairs (a, b) with b > a, a tie counting ½.
    pub u: f64,
    /// `u` ÷ (n_A × n_B): how often a B request is slower (larger) than an A request.
    pub b_above_a: f64,
    pub z: f64,
    pub p_value: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassMix {
    pub class: String,
    pub a: u64,
    pub a_share: f64,
    pub b: u64,
    pub b_share: f64,
    /// B's share − A's share, in percentage points.
    pub difference_points: f64,
}

// ---------------------------------------------------------------------------------------
// Statistics

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
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|x| (*x, false))
        .chain(b.iter().map(|x| (*x, true)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut rank_sum_b = 0.0;
    let mut ties = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j+1 share their average.
        let rank = (i + j + 2) as f64 / 2.0;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        rank_sum_b += rank * all[i..=j].iter().filter(|v| v.1).count() as f64;
        i = j + 1;
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
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return vec![None; qs.len()];
    }
    let a = sorted(a);
    let b = sorted(b);
    let draws =
        |v: &[f64]| -> Vec<OrderDraw> { qs.iter().map(|q| OrderDraw::new(v.len(), *q)).collect() };
    let (da, db) = (draws(&a), draws(&b));
    let mut diffs: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); qs.len()];
    for _ in 0..resamples {
        for (k, d) in diffs.iter_mut().enumerate() {
            let qa = da[k].draw(&a, rng);
            let qb = db[k].draw(&b, rng);
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

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Round to 4 significant digits, for p-values that may be tiny (stable output).
fn round_sig(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    format!("{x:.3e}").parse().unwrap_or(x)
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0 + 0.0
}

// ---------------------------------------------------------------------------------------
// Running

/// One cohort ready to compare: its name, its inputs, and its analysed frame (one row per
/// request, as `analyze::run` returns it).
pub struct Cohort {
    pub name: String,
    pub inputs: Vec<String>,
    pub frame: DataFrame,
}

/// How to compare two analysed cohorts.
#[derive(Debug, Clone)]
pub struct Settings {
    pub seed: u64,
    pub resamples: usize,
    /// The split column: it differs by construction, so its mix is not checked.
    pub split: Option<String>,
    pub window: Option<Window>,
    /// Reported metrics neither cohort can compute (`Plan::uncomputable`), and the tools
    /// whose figures the cohorts' inputs hold (`Plan::tools`): left out, and named.
    pub uncomputable: Vec<String>,
    pub tools: BTreeSet<&'static str>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            seed: DEFAULT_SEED,
            resamples: DEFAULT_RESAMPLES,
            split: None,
            window: None,
            uncomputable: vec![],
            tools: BTreeSet::new(),
        }
    }
}

/// Read, analyse and split the inputs, then compare.
pub fn run(rules: &RuleSet, opts: &Options) -> Result<Comparison> {
    let mut bad_rows = vec![];
    let mut overlaps = vec![];
    // Per cohort plan: the metrics it cannot compute, the tools whose figures it holds.
    let mut coverage: Vec<(Vec<String>, BTreeSet<&'static str>)> = vec![];
    // Each cohort's rows, from the plan: only the columns the comparison reads (compare
    // takes them apart in memory; it needs no analyze summary).
    let mut analyse =
        |inputs: &[PathBuf], split: Option<&str>| -> Result<(plan::Plan, LazyFrame)> {
            let read = analyze::Options {
                inputs: inputs.to_vec(),
                by: vec![],
                ..opts.read.clone()
            };
            analyze::check(rules, &read)?;
            let plan = plan::build(rules, &read)?;
            bad_rows.extend(analyze::bad_rows(
                &plan.inputs,
                read.on_bad_row,
                plan.unparsed_skipped,
                plan.skipped_examples.clone(),
            ));
            overlaps.extend(plan.overlap.clone());
            coverage.push((plan.uncomputable.clone(), plan.tools.clone()));
            let lf = plan.lf.clone().select(cohort_columns(rules, split));
            Ok((plan, lf))
        };
    // A cohort with no request in the incident window: the window's error, naming the
    // span its inputs do cover.
    let collect = |label: &str, plan: &plan::Plan, lf: LazyFrame| -> Result<DataFrame> {
        let df = stats::collect(lf).map_err(|e| plan.read_error(&e))?;
        if df.height() == 0 {
            if let Some(e) = plan.empty_window()? {
                return Err(Error::Usage(format!("cohort {label}: {e}")));
            }
        }
        Ok(df)
    };
    let names = |p: &[PathBuf]| {
        p.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    let (a, b, split) = match &opts.cohorts {
        Cohorts::Pair(a, b) => (
            Cohort {
                name: a.name.clone(),
                inputs: names(&a.inputs),
                frame: {
                    let (plan, lf) = analyse(&a.inputs, None)?;
                    collect("A", &plan, lf)?
                },
            },
            Cohort {
                name: b.name.clone(),
                inputs: names(&b.inputs),
                frame: {
                    let (plan, lf) = analyse(&b.inputs, None)?;
                    collect("B", &plan, lf)?
                },
            },
            None,
        ),
        Cohorts::Split {
            inputs,
            column,
            values,
        } => {
            if !analyze::groupable(column) && !source::partition_keys(inputs).contains(column) {
                let cols: Vec<&str> = catalogue::FIELDS
                    .iter()
                    .map(|f| f.name)
                    .chain(["class", SOURCE_COL])
                    .filter(|n| analyze::groupable(n))
                    .collect();
                return Err(Error::Usage(format!(
                    "--split {column}=…: `{column}` is not a label column; expected one of {}",
                    cols.join(", ")
                )));
            }
            let (plan, lf) = analyse(inputs, Some(column))?;
            if !analyze::absent_columns(&plan.inputs, std::slice::from_ref(column)).is_empty() {
                return Err(Error::Usage(format!(
                    "{}: there is nothing to split",
                    analyze::absent_column_sentence(
                        &format!("--split {column}={}", values.join(",")),
                        column
                    )
                )));
            }
            // A value missing from the window may be the window's fault: say so first.
            let [fa, fb] = match split(lf, column, values) {
                Ok([a, b]) => [collect("A", &plan, a)?, collect("B", &plan, b)?],
                Err(e) => return Err(plan.empty_window()?.unwrap_or(e)),
            };
            let inputs = names(inputs);
            (
                Cohort {
                    name: format!("{column}={}", values[0]),
                    inputs: inputs.clone(),
                    frame: fa,
                },
                Cohort {
                    name: format!("{column}={}", values[1]),
                    inputs,
                    frame: fb,
                },
                Some(column.clone()),
            )
        }
    };
    // A metric either cohort can compute is compared (null on the other side).
    let uncomputable: Vec<String> = rules
        .reported_metrics()
        .iter()
        .map(|m| m.name.clone())
        .filter(|m| coverage.iter().all(|(u, _)| u.contains(m)))
        .collect();
    let tools: BTreeSet<&'static str> = coverage
        .iter()
        .flat_map(|(_, c)| c.iter().copied())
        .collect();
    let (since, until) = (opts.read.since, opts.read.until);
    let window = (since.is_some() || until.is_some()).then(|| Window {
        since: since.and_then(iso_ms),
        until: until.and_then(iso_ms),
    });
    let mut c = compare(
        rules,
        &a,
        &b,
        &Settings {
            seed: opts.seed,
            resamples: opts.resamples,
            split,
            window,
            uncomputable,
            tools,
        },
    )?;
    c.bad_rows = BadRows::merge(bad_rows);
    c.overlapping_inputs = overlaps;
    Ok(c)
}

fn internal(e: PolarsError) -> Error {
    Error::Usage(format!("compare: {e}"))
}

/// The two cohorts of `lf` whose `column` holds `values[0]` and `values[1]`, as lazy
/// filters. A value no request has is a usage error that lists the values there are
/// (found by one more pass over that column only).
pub fn split(lf: LazyFrame, column: &str, values: &[String; 2]) -> Result<[LazyFrame; 2]> {
    let key = col(column).cast(DataType::String);
    let wanted = Series::new("values".into(), values.as_slice());
    let found = stats::counts(
        lf.clone().filter(stats::member_of(key.clone(), &wanted)),
        &[column.to_string()],
    )
    .map_err(internal)?;
    for v in values {
        if !found.contains_key(&vec![Some(v.clone())]) {
            let present = stats::counts(lf.clone(), &[column.to_string()]).map_err(internal)?;
            let mut there: Vec<String> = present
                .iter()
                .filter_map(|(k, n)| k[0].as_ref().map(|k| format!("{k} ({n})")))
                .collect();
            there.sort();
            return Err(Error::Usage(if there.is_empty() {
                format!(
                    "--split {column}={}: the log has no `{column}` values",
                    values.join(",")
                )
            } else {
                format!(
                    "--split {column}={}: no request has {column} = `{v}`; its values are {}",
                    values.join(","),
                    there.join(", ")
                )
            }));
        }
    }
    let part = |v: &str| lf.clone().filter(key.clone().eq(lit(v)));
    Ok([part(&values[0]), part(&values[1])])
}

/// The columns `compare` reads from each request: the named metrics, the contract's
/// fields and labels, the class (and the split column, when there is one).
fn cohort_columns(rules: &RuleSet, split: Option<&str>) -> Vec<Expr> {
    let mut names: Vec<&str> = rules
        .reported_metrics()
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    names.extend([
        "outcome",
        "timestamp",
        "is_stream",
        "input_tokens",
        "output_tokens",
        "inflight",
        "class",
    ]);
    names.extend(MIX_LABELS.iter().map(|(c, _)| *c));
    names.extend(split);
    let mut seen = BTreeSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(*n))
        .map(col)
        .collect()
}

/// Compare two analysed cohorts.
pub fn compare(rules: &RuleSet, a: &Cohort, b: &Cohort, settings: &Settings) -> Result<Comparison> {
    for (label, c) in [("A", a), ("B", b)] {
        if c.frame.height() == 0 {
            return Err(Error::Usage(format!(
                "cohort {label} ({}) has no requests{}",
                c.name,
                if settings.window.is_some() {
                    " in the window"
                } else {
                    ""
                }
            )));
        }
    }
    let ca = CohortData::of("A", a).map_err(internal)?;
    let cb = CohortData::of("B", b).map_err(internal)?;
    let contract = contract(&ca, &cb, settings.split.as_deref());
    let metrics = metrics(rules, &a.frame, &b.frame, settings).map_err(internal)?;
    let classes = class_mix(rules, &ca, &cb);
    Ok(Comparison {
        tool: tool(),
        verdict: verdict(&contract, &metrics),
        rules: RulesInfo::of(rules),
        percentile_method: PERCENTILE_METHOD,
        percentile_rule: support::RULE,
        split: settings.split.clone(),
        window: settings.window.clone(),
        cohorts: vec![ca.summary, cb.summary],
        contract,
        bootstrap: Bootstrap {
            resamples: settings.resamples,
            seed: settings.seed,
            confidence: CONFIDENCE,
            method: BOOTSTRAP_METHOD,
        },
        metrics,
        metrics_left_out: LeftOut::of(rules, &settings.uncomputable, &settings.tools),
        classes,
        bad_rows: None,
        overlapping_inputs: vec![],
    })
}

/// A cohort's summary and the raw values the tests need.
struct CohortData {
    summary: CohortSummary,
    input_tokens: Vec<f64>,
    output_tokens: Vec<f64>,
    /// First and last timestamp, ms since the epoch.
    span: Option<(i64, i64)>,
    mixes: BTreeMap<&'static str, BTreeMap<String, u64>>,
    classes: BTreeMap<String, u64>,
}

fn values(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<f64>>> {
    let c = df.column(name)?.cast(&DataType::Float64)?;
    let ca = c.f64()?;
    Ok((0..ca.len())
        .map(|i| ca.get(i).filter(|x| x.is_finite()))
        .collect())
}

fn failed(df: &DataFrame) -> PolarsResult<Vec<bool>> {
    let c = df.column("outcome")?.cast(&DataType::String)?;
    let c = c.str()?;
    Ok((0..c.len())
        .map(|i| c.get(i).is_some_and(|o| o != "ok"))
        .collect())
}

fn dist(v: &[f64]) -> Dist {
    if v.is_empty() {
        return Dist::default();
    }
    let s = sorted(v);
    Dist {
        n: s.len() as u64,
        mean: Some(round3(s.iter().sum::<f64>() / s.len() as f64)),
        p50: quantile7(&s, 0.5).map(round3),
        p95: quantile7(&s, 0.95).map(round3),
    }
}

fn label_counts(df: &DataFrame, column: &str) -> PolarsResult<BTreeMap<String, u64>> {
    Ok(stats::counts(df.clone().lazy(), &[column.to_string()])?
        .into_iter()
        .filter_map(|(k, n)| k.into_iter().next().flatten().map(|k| (k, n)))
        .collect())
}

fn as_counts(m: &BTreeMap<String, u64>) -> Vec<Count> {
    m.iter()
        .map(|(name, count)| Count {
            name: name.clone(),
            count: *count,
        })
        .collect()
}

const OUTCOME_ORDER: [&str; 4] = ["ok", "error", "cancelled", "timeout"];

impl CohortData {
    fn of(label: &str, c: &Cohort) -> PolarsResult<CohortData> {
        let df = &c.frame;
        let rows = df.height() as u64;
        let failures = failed(df)?.iter().filter(|f| **f).count() as u64;
        let oc = label_counts(df, "outcome")?;
        let mut outcomes: Vec<Count> = OUTCOME_ORDER
            .iter()
            .filter_map(|o| {
                oc.get(*o).map(|n| Count {
                    name: o.to_string(),
                    count: *n,
                })
            })
            .collect();
        outcomes.extend(
            oc.iter()
                .filter(|(k, _)| !OUTCOME_ORDER.contains(&k.as_str()))
                .map(|(k, n)| Count {
                    name: k.clone(),
                    count: *n,
                }),
        );
        let known: u64 = oc.values().sum();
        if known < rows {
            outcomes.push(Count {
                name: "unknown".into(),
                count: rows - known,
            });
        }

        let ts = df.column("timestamp")?.cast(&DataType::Int64)?;
        let ts = ts.i64()?;
        let (min, max) = (ts.min(), ts.max());
        let with_ts = (rows as usize - ts.null_count()) as u64;
        let span = min.zip(max);
        let span_minutes = span.map(|(s, e)| (e - s) as f64 / 60_000.0);
        let arrival = span_minutes
            .filter(|m| *m > 0.0)
            .map(|m| round3(with_ts as f64 / m));

        let stream = df.column("is_stream")?.cast(&DataType::Boolean)?;
        let stream = stream.bool()?;
        let streamed = stream.sum().unwrap_or(0) as u64;
        let stream_known = (rows as usize - stream.null_count()) as u64;
        let not_streamed = stream_known - streamed;

        let input_tokens: Vec<f64> = values(df, "input_tokens")?.into_iter().flatten().collect();
        let output_tokens: Vec<f64> = values(df, "output_tokens")?.into_iter().flatten().collect();
        let inflight: Vec<f64> = values(df, "inflight")?.into_iter().flatten().collect();

        let mut mixes = BTreeMap::new();
        for (column, _) in MIX_LABELS {
            mixes.insert(column, label_counts(df, column)?);
        }
        let classes = label_counts(df, "class")?;

        let summary = CohortSummary {
            label: label.to_string(),
            name: c.name.clone(),
            inputs: c.inputs.clone(),
            requests: rows,
            failures,
            failure_rate: round4(failures as f64 / rows.max(1) as f64),
            outcomes,
            time_span: span.and_then(|(s, e)| {
                Some(TimeSpan {
                    start: iso_ms(s)?,
                    end: iso_ms(e)?,
                })
            }),
            span_minutes: span_minutes.map(round3),
            arrival_per_minute: arrival,
            streamed,
            not_streamed,
            stream_unknown: rows - stream_known,
            streaming_share: (stream_known > 0)
                .then(|| round4(streamed as f64 / stream_known as f64)),
            models: as_counts(&mixes["model"]),
            groups: as_counts(&mixes["group"]),
            regions: as_counts(&mixes["region"]),
            input_tokens: dist(&input_tokens),
            output_tokens: dist(&output_tokens),
            inflight: dist(&inflight),
        };
        Ok(CohortData {
            summary,
            input_tokens,
            output_tokens,
            span,
            mixes,
            classes,
        })
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn num(x: Option<f64>) -> String {
    match x {
        None => "—".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// A p-value for display: three decimals, or scientific below 0.001.
pub fn fmt_p(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else if p > 0.0 {
        format!("{p:.1e}")
    } else {
        "<1e-300".into()
    }
}

/// `max / min` of two non-negative figures (infinite when only one is zero).
fn ratio(a: f64, b: f64) -> f64 {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    if hi == 0.0 {
        1.0
    } else if lo == 0.0 {
        f64::INFINITY
    } else {
        hi / lo
    }
}

struct Checker {
    checks: Vec<Check>,
    warnings: Vec<Warning>,
    not_checked: Vec<String>,
}

impl Checker {
    /// Record one check; beyond tolerance it becomes a warning naming both values.
    fn check(
        &mut self,
        field: &str,
        a: String,
        b: String,
        difference: String,
        tolerance: &str,
        within: bool,
    ) {
        if !within {
            self.warnings.push(Warning {
                field: field.to_string(),
                message: format!(
                    "{field}: A {} vs B {} — {difference} (tolerance: {tolerance})",
                    one_line(&a),
                    one_line(&b)
                ),
            });
        }
        self.checks.push(Check {
            field: field.to_string(),
            a,
            b,
            difference,
            tolerance: tolerance.to_string(),
            within,
        });
    }

    /// A field recorded in one cohort only is a warning; in neither, it is not checked.
    /// Returns true when both cohorts have it.
    fn recorded(&mut self, field: &str, in_a: bool, in_b: bool, tolerance: &str) -> bool {
        match (in_a, in_b) {
            (true, true) => true,
            (false, false) => {
                self.not_checked
                    .push(format!("{field}: not recorded in either cohort"));
                false
            }
            _ => {
                let (a, b) = if in_a {
                    ("recorded".to_string(), "not recorded".to_string())
                } else {
                    ("not recorded".to_string(), "recorded".to_string())
                };
                self.check(
                    field,
                    a,
                    b,
                    "recorded in one cohort only".into(),
                    tolerance,
                    false,
                );
                false
            }
        }
    }
}

/// A multi-line cell as one line: a list joined by commas, a window's `→ end` and
/// `(minutes)` continuing the line.
fn one_line(text: &str) -> String {
    text.replace("\n→", " →")
        .replace("\n(", " (")
        .replace('\n', ", ")
}

fn mix_text(m: &BTreeMap<String, u64>) -> String {
    let total: u64 = m.values().sum();
    m.iter()
        .map(|(k, n)| format!("{k} {}", pct(*n as f64 / total as f64)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn dist_text(d: &Dist) -> String {
    format!(
        "p50 {} · p95 {} · mean {} (n {})",
        num(d.p50),
        support::cell(0.95, d.n).unwrap_or_else(|| num(d.p95)),
        num(d.mean),
        d.n
    )
}

fn contract(a: &CohortData, b: &CohortData, split: Option<&str>) -> Contract {
    let (sa, sb) = (&a.summary, &b.summary);
    let mut c = Checker {
        checks: vec![],
        warnings: vec![],
        not_checked: vec![],
    };

    // Model ids, groups, regions: the sets, then the mix.
    for (column, field) in MIX_LABELS {
        if split == Some(column) {
            c.not_checked.push(format!(
                "{field}: the split column (the cohorts differ on it by construction)"
            ));
            continue;
        }
        let (ma, mb) = (&a.mixes[column], &b.mixes[column]);
        let tolerance = format!("same set; shares within {MIX_POINTS:.0} points");
        if !c.recorded(field, !ma.is_empty(), !mb.is_empty(), &tolerance) {
            continue;
        }
        let ka: BTreeSet<&String> = ma.keys().collect();
        let kb: BTreeSet<&String> = mb.keys().collect();
        let (ta, tb) = (
            ma.values().sum::<u64>() as f64,
            mb.values().sum::<u64>() as f64,
        );
        let (difference, within) = if ka != kb {
            let only = |x: &BTreeSet<&String>, y: &BTreeSet<&String>| {
                x.difference(y)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let (oa, ob) = (only(&ka, &kb), only(&kb, &ka));
            let mut parts = vec![];
            if !oa.is_empty() {
                parts.push(format!("only in A: {oa}"));
            }
            if !ob.is_empty() {
                parts.push(format!("only in B: {ob}"));
            }
            (format!("different sets: {}", parts.join("; ")), false)
        } else {
            let (worst, points) = ka
                .iter()
                .map(|k| {
                    let d = (mb[*k] as f64 / tb - ma[*k] as f64 / ta) * 100.0;
                    (k.as_str(), d)
                })
                .fold(("", 0.0f64), |best, x| {
                    if x.1.abs() > best.1.abs() {
                        x
                    } else {
                        best
                    }
                });
            (
                format!("same set; largest share gap {points:+.1} points ({worst})"),
                points.abs() <= MIX_POINTS,
            )
        };
        c.check(
            field,
            mix_text(ma),
            mix_text(mb),
            difference,
            &tolerance,
            within,
        );
    }

    // Streaming share.
    let tolerance = format!("within {STREAMING_POINTS:.0} points");
    if split == Some("is_stream") {
        c.not_checked.push(
            "streaming share: the split column (the cohorts differ on it by construction)".into(),
        );
    } else if c.recorded(
        "streaming share",
        sa.streaming_share.is_some(),
        sb.streaming_share.is_some(),
        &tolerance,
    ) {
        let share = |s: &CohortSummary| s.streamed as f64 / (s.streamed + s.not_streamed) as f64;
        let (x, y) = (share(sa), share(sb));
        let d = (y - x) * 100.0;
        let text = |s: &CohortSummary, share: f64| {
            format!(
                "{} ({} of {})",
                pct(share),
                s.streamed,
                s.streamed + s.not_streamed
            )
        };
        c.check(
            "streaming share",
            text(sa, x),
            text(sb, y),
            format!("{d:+.1} points"),
            &tolerance,
            d.abs() <= STREAMING_POINTS,
        );
    }

    // Token distributions.
    let tolerance = format!("KS p ≥ {TOKEN_P_VALUE}");
    let mut tests = vec![];
    for (field, xa, xb, da, db) in [
        (
            "input tokens",
            &a.input_tokens,
            &b.input_tokens,
            &sa.input_tokens,
            &sb.input_tokens,
        ),
        (
            "output tokens",
            &a.output_tokens,
            &b.output_tokens,
            &sa.output_tokens,
            &sb.output_tokens,
        ),
    ] {
        let test = ks_two_sample(xa, xb).map(|t| TwoSample {
            statistic: round4(t.statistic),
            p_value: round_sig(t.p_value),
            ..t
        });
        tests.push(test);
        if !c.recorded(field, !xa.is_empty(), !xb.is_empty(), &tolerance) {
            continue;
        }
        let t = test.expect("both samples are non-empty");
        c.check(
            field,
            dist_text(da),
            dist_text(db),
            format!("KS D {:.3}, p {}", t.statistic, fmt_p(t.p_value)),
            &tolerance,
            t.p_value >= TOKEN_P_VALUE,
        );
    }

    // Concurrency.
    let tolerance = format!("ratio ≤ {INFLIGHT_RATIO}");
    if c.recorded(
        "concurrency (inflight)",
        sa.inflight.n > 0,
        sb.inflight.n > 0,
        &tolerance,
    ) {
        let (x, y) = (
            sa.inflight.p50.unwrap_or(0.0),
            sb.inflight.p50.unwrap_or(0.0),
        );
        let r = ratio(x, y);
        c.check(
            "concurrency (inflight)",
            format!("median {} (n {})", num(Some(x)), sa.inflight.n),
            format!("median {} (n {})", num(Some(y)), sb.inflight.n),
            format!(
                "ratio {}",
                if r.is_finite() {
                    format!("{r:.2}")
                } else {
                    "∞".into()
                }
            ),
            &tolerance,
            r <= INFLIGHT_RATIO,
        );
    }

    // Arrival rate.
    let tolerance = format!("ratio ≤ {ARRIVAL_RATIO}");
    if sa.arrival_per_minute.is_some() && sb.arrival_per_minute.is_some() {
        let (x, y) = (
            sa.arrival_per_minute.unwrap_or(0.0),
            sb.arrival_per_minute.unwrap_or(0.0),
        );
        let r = ratio(x, y);
        c.check(
            "arrival rate",
            format!("{} requests/min", num(Some(x))),
            format!("{} requests/min", num(Some(y))),
            format!("ratio {r:.2}"),
            &tolerance,
            r <= ARRIVAL_RATIO,
        );
    } else {
        c.not_checked
            .push("arrival rate: a cohort has fewer than two distinct timestamps".to_string());
    }

    // Time windows.
    let tolerance = format!("overlap ≥ {:.0}% of the shorter", MIN_OVERLAP * 100.0);
    match (a.span, b.span) {
        (Some((s1, e1)), Some((s2, e2))) => {
            let overlap = (e1.min(e2) - s1.max(s2)).max(0) as f64;
            let shorter = (e1 - s1).min(e2 - s2) as f64;
            let share = if shorter > 0.0 {
                overlap / shorter
            } else if s1.max(s2) <= e1.min(e2) {
                1.0
            } else {
                0.0
            };
            let text = |s: &CohortSummary| match &s.time_span {
                Some(t) => format!("{}\n→ {}\n({} min)", t.start, t.end, num(s.span_minutes)),
                None => "—".into(),
            };
            c.check(
                "time windows",
                text(sa),
                text(sb),
                format!("overlap {} of the shorter window", pct(share)),
                &tolerance,
                share >= MIN_OVERLAP,
            );
        }
        (ta, tb) => {
            c.recorded("time windows", ta.is_some(), tb.is_some(), &tolerance);
        }
    }

    // Sample counts.
    let tolerance = format!("≥ {MIN_REQUESTS} requests each");
    c.check(
        "sample counts",
        format!("{} requests", sa.requests),
        format!("{} requests", sb.requests),
        format!("{:+}", sb.requests as i64 - sa.requests as i64),
        &tolerance,
        sa.requests.min(sb.requests) >= MIN_REQUESTS,
    );

    // Failure rates.
    let tolerance = format!("within {FAILURE_POINTS:.0} points");
    if matches!(split, Some("outcome" | "status")) {
        c.not_checked
            .push("failure rates: the split column decides them".into());
    } else {
        let rate = |s: &CohortSummary| s.failures as f64 / s.requests as f64;
        let d = (rate(sb) - rate(sa)) * 100.0;
        let text =
            |s: &CohortSummary| format!("{} ({} of {})", pct(rate(s)), s.failures, s.requests);
        c.check(
            "failure rates",
            text(sa),
            text(sb),
            format!("{d:+.1} points"),
            &tolerance,
            d.abs() <= FAILURE_POINTS,
        );
    }

    c.not_checked.push(if split == Some("channel") {
        "channel: the split column (the cohorts differ on it by construction)".into()
    } else {
        "channel (route): not checked, as it is usually what a comparison compares".into()
    });
    for f in NOT_IN_LOG {
        c.not_checked.push(format!("{f}: not in a gateway log"));
    }
    Contract {
        checks: c.checks,
        input_tokens_test: tests[0],
        output_tokens_test: tests[1],
        warnings: c.warnings,
        not_checked: c.not_checked,
    }
}

fn metrics(
    rules: &RuleSet,
    a: &DataFrame,
    b: &DataFrame,
    settings: &Settings,
) -> PolarsResult<Vec<MetricComparison>> {
    let reported: Vec<_> = rules
        .reported_metrics()
        .into_iter()
        .filter(|m| !settings.uncomputable.contains(&m.name))
        .collect();
    let names: Vec<String> = reported.iter().map(|m| m.name.clone()).collect();
    let pa = stats::percentiles(a.clone().lazy(), &[], &names)?
        .remove(&vec![])
        .unwrap_or_default();
    let pb = stats::percentiles(b.clone().lazy(), &[], &names)?
        .remove(&vec![])
        .unwrap_or_default();
    let (fa, fb) = (failed(a)?, failed(b)?);
    let qs: Vec<f64> = QUANTILES.iter().map(|q| q.1).collect();
    let mut out = vec![];
    for (i, m) in reported.iter().enumerate() {
        let side =
            |df: &DataFrame, fails: &[bool], p: Option<&Pct>| -> PolarsResult<(Vec<f64>, Side)> {
                let v = values(df, &m.name)?;
                let failures = v
                    .iter()
                    .zip(fails)
                    .filter(|(v, f)| v.is_some() && **f)
                    .count() as u64;
                let vals: Vec<f64> = v.into_iter().flatten().collect();
                let pct = p.cloned().unwrap_or_default();
                Ok((
                    vals,
                    Side {
                        nulls: df.height() as u64 - pct.n,
                        pct,
                        failures,
                    },
                ))
            };
        let (va, side_a) = side(a, &fa, pa.get(i))?;
        let (vb, side_b) = side(b, &fb, pb.get(i))?;
        // One stream per metric, so a metric's interval does not depend on the others.
        let mut rng = SplitMix64::new(settings.seed.wrapping_add(i as u64));
        let cis = bootstrap_shift(&va, &vb, &qs, settings.resamples, CONFIDENCE, &mut rng);
        let get = |s: &Side, k: usize| match k {
            0 => s.pct.p50,
            1 => s.pct.p95,
            _ => s.pct.p99,
        };
        let shift = QUANTILES
            .iter()
            .enumerate()
            .map(|(k, &(name, q))| {
                // A shift is no better than the weaker of its two percentiles.
                let withheld = [("A", &side_a), ("B", &side_b)]
                    .into_iter()
                    .filter_map(|(l, s)| support::withheld(q, s.pct.n).map(|w| format!("{l}: {w}")))
                    .collect::<Vec<_>>();
                if !withheld.is_empty() {
                    return Shift {
                        quantile: name,
                        estimate: None,
                        ci_low: None,
                        ci_high: None,
                        withheld: Some(withheld.join("; ")),
                    };
                }
                Shift {
                    quantile: name,
                    estimate: get(&side_b, k)
                        .zip(get(&side_a, k))
                        .map(|(y, x)| round3(y - x)),
                    ci_low: cis[k].map(|c| round3(c.0)),
                    ci_high: cis[k].map(|c| round3(c.1)),
                    withheld: None,
                }
            })
            .collect();
        out.push(MetricComparison {
            name: m.name.clone(),
            label: m.label.clone().unwrap_or_default(),
            a: side_a,
            b: side_b,
            shift,
            mann_whitney: mann_whitney(&va, &vb).map(|t| MannWhitney {
                u: round3(t.u),
                b_above_a: round4(t.b_above_a),
                z: round4(t.z),
                p_value: round_sig(t.p_value),
            }),
        });
    }
    Ok(out)
}

/// A figure with its sign, as `num` shows it: `+12.5`, `-360`.
fn signed(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", num(Some(x)))
    } else {
        num(Some(x))
    }
}

/// The one-line verdict: the largest significant shift (its interval excludes 0; largest
/// relative to A's value, so metrics of different units compare) and the contract.
fn verdict(contract: &Contract, metrics: &[MetricComparison]) -> String {
    let confidence = format!("{:.0}%", CONFIDENCE * 100.0);
    let mut best: Option<(f64, String)> = None;
    // Many intervals are tested at once: some exclude 0 by chance alone, so the verdict
    // says how many did against how many chance would give.
    let (mut tested, mut excluding) = (0u32, 0u32);
    for m in metrics {
        for (s, (_, _, a)) in m.shift.iter().zip(m.a.pct.quantiles()) {
            let b =
                m.b.pct
                    .quantiles()
                    .into_iter()
                    .find(|q| q.0 == s.quantile)
                    .and_then(|q| q.2);
            let (Some(est), Some(lo), Some(hi), Some(a), Some(b)) =
                (s.estimate, s.ci_low, s.ci_high, a, b)
            else {
                continue;
            };
            tested += 1;
            if !(lo > 0.0 || hi < 0.0) || a == 0.0 {
                continue;
            }
            excluding += 1;
            let rel = est / a.abs();
            if best.as_ref().is_some_and(|(r, _)| r.abs() >= rel.abs()) {
                continue;
            }
            let label = if m.label.is_empty() {
                &m.name
            } else {
                &m.label
            };
            best = Some((
                rel,
                format!(
                    "the largest significant shift is {label} {}, {} → {} ({}, {:+.1}%; {confidence} interval [{}, {}])",
                    s.quantile,
                    num(Some(a)),
                    num(Some(b)),
                    signed(est),
                    rel * 100.0,
                    signed(lo),
                    signed(hi)
                ),
            ));
        }
    }
    let found = best.is_some();
    let chance = f64::from(tested) * (1.0 - CONFIDENCE);
    let shift = best.map(|b| {
        format!(
            "{}; {excluding} of {tested} intervals exclude{} 0, where chance alone gives about {chance:.1}",
            b.1,
            if excluding == 1 { "s" } else { "" }
        )
    });
    let shift = shift.unwrap_or_else(|| {
        format!("no percentile shift B − A has a {confidence} interval that excludes 0")
    });
    let contract = match contract.warnings.len() {
        0 => "the workload contract holds (no difference beyond the tolerances)".to_string(),
        n => {
            let mut fields: Vec<&str> =
                contract.warnings.iter().map(|w| w.field.as_str()).collect();
            fields.dedup();
            format!(
                "{}the cohorts differ on the workload contract ({n} warning{}: {}){}",
                if found { "but " } else { "" },
                if n == 1 { "" } else { "s" },
                fields.join(", "),
                if found {
                    ", so the shift may come from the workload"
                } else {
                    ""
                }
            )
        }
    };
    format!("B against A: {shift}; {contract}.")
}

fn class_mix(rules: &RuleSet, a: &CohortData, b: &CohortData) -> Vec<ClassMix> {
    let (ta, tb) = (a.summary.requests as f64, b.summary.requests as f64);
    rules
        .class_order()
        .into_iter()
        .map(|c| {
            let x = a.classes.get(c).copied().unwrap_or(0);
            let y = b.classes.get(c).copied().unwrap_or(0);
            let (sx, sy) = (x as f64 / ta.max(1.0), y as f64 / tb.max(1.0));
            ClassMix {
                class: c.to_string(),
                a: x,
                a_share: round4(sx),
                b: y,
                b_share: round4(sy),
                difference_points: round3((sy - sx) * 100.0),
            }
        })
        .collect()
}
