//! What `compare` finds: plain data, rendered by `report::compare`.

use serde::Serialize;

use crate::stats::support;
use crate::summary::{BadRows, Count, LeftOut, Overlap, Pct, RulesInfo, TimeSpan, Window};

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
    /// Fields read from the columns the user named (`--map`, `--schema`); absent without.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mapped_columns: Vec<crate::summary::MappedColumn>,
    /// A, then B.
    pub cohorts: Vec<CohortSummary>,
    /// Checked before any ranking.
    pub contract: Contract,
    pub bootstrap: Bootstrap,
    /// How each metric's `mann_whitney` is computed (`MANN_WHITNEY_METHOD`).
    pub mann_whitney_method: &'static str,
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

/// The U test reads each metric's histogram (`stats::exact`'s buckets), not its values:
/// values in one bucket, within 0.2 % of each other, count as tied.
pub const MANN_WHITNEY_METHOD: &str =
    "Mann–Whitney U on values binned at 512 bins per power of two (values within 0.2% of each other tie), two-sided, normal approximation with tie and continuity correction";

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
