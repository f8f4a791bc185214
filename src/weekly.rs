//! The data behind `tracediag report` (the weekly latency report): class counts per period
//! and the trend between the last two periods, per-model and per-channel percentiles of
//! every named metric, end-to-end p95 per channel and period, the median timeline (t0…t7)
//! per class, and CDF points of every named metric. Plain data, sorted and rounded, ready
//! for the HTML and Markdown renderers in `report::html` and `report::markdown`. Every
//! figure is an aggregate asked of the lazy plan on `analyze`'s passes (`run`): no request
//! is held, and the percentiles and CDF points are exact (`stats::exact`).
//!
//! Time is UTC throughout: hours and days start at UTC midnight, weeks on Monday 00:00 UTC.
//! Requests without a timestamp stay in every figure that is not over time, and are
//! counted in `untimed`.
//!
//! The report's own writer is here too: a text file written to a temporary file beside
//! the target and renamed, never over an input, over an existing file only when forced
//! (the same contract as `output`, for `.html` and `.md`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::*;
use serde::Serialize;

use crate::analyze::{self, iso_ms, Analysis};
use crate::catalogue::{Event, Kind};
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::ruleset::compile::{self, CLASS_INDEX, ESTIMATED_SUFFIX};
use crate::ruleset::timeline::GATEWAY_POINTS;
use crate::ruleset::types::Ty;
use crate::ruleset::RuleSet;
use crate::stats::counts::{Asked, Counts};
use crate::stats::histogram::{Budget, Histograms};
use crate::stats::{self, exact, tuples, Key, QUANTILES};
use crate::summary::{round3, Pct};

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;
const WEEK_MS: i64 = 7 * DAY_MS;
/// 1970-01-05, the first Monday after the Unix epoch: weeks start on Mondays.
const MONDAY_MS: i64 = 4 * DAY_MS;
/// More periods than this make unreadable charts; the user is asked for a longer period.
pub const MAX_PERIODS: usize = 1000;
/// Points of a CDF chart per metric: one at the first bucket each fraction k / CDF_STEPS
/// reaches (`exact::cdf_points`).
pub const CDF_STEPS: usize = 200;
/// The exact type-7 quantiles of every named metric shown with its CDF: the least and the
/// largest value (where the chart starts and ends) and those the tables list.
pub const CDF_QUANTILES: [f64; 9] = [0.0, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99, 1.0];
/// The key used where a request has no model or channel.
pub const NONE_KEY: &str = "(none)";

const PERIOD_COL: &str = "__period";
/// The end-to-end time, whose median the timeline marks and whose p95 per channel is drawn.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    Hour,
    Day,
    Week,
}

impl Period {
    pub fn name(self) -> &'static str {
        match self {
            Period::Hour => "hour",
            Period::Day => "day",
            Period::Week => "week",
        }
    }

    pub fn length_ms(self) -> i64 {
        match self {
            Period::Hour => HOUR_MS,
            Period::Day => DAY_MS,
            Period::Week => WEEK_MS,
        }
    }

    /// The default for a span of data: hours under two days, days under eight weeks,
    /// weeks beyond.
    pub fn for_span(span_ms: i64) -> Period {
        if span_ms < 2 * DAY_MS {
            Period::Hour
        } else if span_ms < 8 * WEEK_MS {
            Period::Day
        } else {
            Period::Week
        }
    }

    /// Start (ms since the epoch, UTC) of the period holding `ms`.
    pub fn start(self, ms: i64) -> i64 {
        let offset = if self == Period::Week { MONDAY_MS } else { 0 };
        let len = self.length_ms();
        (ms - offset).div_euclid(len) * len + offset
    }

    /// A period's name as the tables show it: `2026-11-02 00:00`, `2026-11-02`, or
    /// `2026-W45 (from 2026-11-02)`.
    pub fn label(self, start: i64) -> String {
        let Some(d) = chrono::DateTime::from_timestamp_millis(start) else {
            return start.to_string();
        };
        match self {
            Period::Hour => d.format("%Y-%m-%d %H:%M").to_string(),
            Period::Day => d.format("%Y-%m-%d").to_string(),
            Period::Week => d.format("%G-W%V (from %Y-%m-%d)").to_string(),
        }
    }

    /// A short label for a chart axis: `11-02 00:00`, `2026-11-02`.
    pub fn short_label(self, start: i64) -> String {
        let Some(d) = chrono::DateTime::from_timestamp_millis(start) else {
            return start.to_string();
        };
        match self {
            Period::Hour => d.format("%m-%d %H:%M").to_string(),
            Period::Day | Period::Week => d.format("%Y-%m-%d").to_string(),
        }
    }
}

/// The report's title without `--title`.
pub const DEFAULT_TITLE: &str = "Latency report";

/// Everything the report shows beyond the `Summary`.
#[derive(Debug, Clone, Serialize)]
pub struct Weekly {
    /// The report's title (`--title`).
    pub title: String,
    /// The field or metric that is each request's end-to-end time (its table's).
    pub end_to_end: String,
    pub period: Period,
    /// True when `period` was chosen from the span (no `--period`).
    pub period_from_span: bool,
    /// Requests without a timestamp: in every figure except those over time.
    pub untimed: u64,
    /// Every class the table can give, in table order, the default class last.
    pub class_order: Vec<String>,
    /// Contiguous periods from the first request to the last, empty ones included.
    pub periods: Vec<PeriodRow>,
    /// The last period against the one before, when there are at least two.
    pub trend: Option<Trend>,
    /// The named metrics, in file order.
    pub metrics: Vec<MetricInfo>,
    pub by_model: Vec<GroupMetrics>,
    pub by_channel: Vec<GroupMetrics>,
    /// End-to-end p95 per channel and period.
    pub channel_p95: Vec<ChannelSeries>,
    pub cdfs: Vec<Cdf>,
    /// The phases of the median timeline, in timeline order.
    pub phases: Vec<PhaseInfo>,
    /// One row per class that has requests, in table order.
    pub waterfall: Vec<WaterfallRow>,
    pub rules: Vec<RuleDoc>,
    pub params: Vec<ParamDoc>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PeriodRow {
    /// ISO 8601 UTC.
    pub start: String,
    pub label: String,
    pub short_label: String,
    pub rows: u64,
    pub failures: u64,
    /// Requests per class, parallel to `Weekly::class_order`.
    pub classes: Vec<u64>,
    /// Milliseconds of the period the data covers: from the first timestamp or the
    /// period's start, whichever is later, to the last timestamp or the period's end.
    pub covered_ms: i64,
    /// The data covers less than the whole period (the first or last timestamp lies
    /// inside it).
    pub partial: bool,
    /// The first timestamp, when it lies inside the period (ISO 8601 UTC).
    pub data_from: Option<String>,
    /// The last timestamp, when it lies inside the period.
    pub data_until: Option<String>,
    /// `rows` per hour covered; null when the period covers no time (one instant).
    pub per_hour: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    /// The two periods, whole (their coverage and requests per hour included).
    pub previous: PeriodRow,
    pub last: PeriodRow,

    /// One row per class with requests in either period, in table order.
    pub rows: Vec<TrendRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrendRow {
    pub class: String,
    pub previous_count: u64,
    pub last_count: u64,
    /// The counts per hour of data covered; null for a period that covers no time.
    pub previous_per_hour: Option<f64>,
    pub last_per_hour: Option<f64>,
    pub per_hour_change: Option<f64>,
    /// Shares (0–1) of their period's requests; null for an empty period.
    pub previous_share: Option<f64>,
    pub last_share: Option<f64>,
    /// In percentage points.
    pub share_change_pts: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricInfo {
    pub name: String,
    pub label: String,
    /// `ms` or `tokens/s` (or `number` for anything else).
    pub unit: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct GroupMetrics {
    pub key: String,
    pub rows: u64,
    /// Parallel to `Weekly::metrics`.
    pub pcts: Vec<Pct>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChannelSeries {
    pub channel: String,
    /// Parallel to `Weekly::periods`: (requests with an end-to-end time, p95), null p95
    /// where the channel had none in that period.
    pub points: Vec<(u64, Option<f64>)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Cdf {
    pub name: String,
    pub label: String,
    pub unit: String,
    pub n: u64,
    /// Type-7 quantiles at `CDF_QUANTILES`; empty when n is 0.
    pub quantiles: Vec<f64>,
    /// Exact points of the empirical CDF, (value, fraction of the values at most it), in
    /// order, the last at the largest value (`exact::cdf_points`); empty when n is 0.
    pub points: Vec<(f64, f64)>,
}

impl Cdf {
    /// The quantile at `q`, one of `CDF_QUANTILES`.
    pub fn at(&self, q: f64) -> Option<f64> {
        let i = CDF_QUANTILES.iter().position(|&c| c == q);
        debug_assert!(i.is_some(), "{q} is not one of CDF_QUANTILES");
        self.quantiles.get(i?).copied()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseInfo {
    /// Stable identifier (`auth`, `t1_t2`, …).
    pub name: String,
    pub label: String,
    /// How it is computed, from which fields.
    pub doc: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct WaterfallRow {
    pub class: String,
    pub count: u64,
    pub end_to_end_p50: Option<f64>,
    /// Parallel to `Weekly::phases`: the median duration and how many requests have it;
    /// null where no request of the class has the phase (never 0).
    pub phases: Vec<PhaseMedian>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseMedian {
    pub median: Option<f64>,
    pub n: u64,
    /// Requests whose duration is built on the estimated t1 offset.
    pub estimated: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleDoc {
    pub order: i64,
    pub class: String,
    pub when: String,
    pub look_at: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ParamDoc {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub doc: String,
}

fn f(name: &str) -> Expr {
    col(name).cast(DataType::Float64)
}

/// One phase of the median timeline.
struct PhaseDef {
    info: PhaseInfo,
    value: Expr,
    /// The named metric it is, for the phases from t1 on.
    metric: Option<String>,
    /// Whether a request's duration rests on an estimate, for phases that can.
    estimated: Option<Expr>,
}

/// The phases of the median timeline, from the catalogue and the rule table, never from a
/// copy of either: the local phases (the catalogue's, in sequence from t0), what else
/// passed before t1 (the exact t0→t1 point less the local phases), then, between each two
/// consecutive points from t1 on, the rule table's metric that spans them
/// (`RuleSet::metric_between`), with its own estimate flag. A stretch no metric spans is
/// not drawn.
fn phase_defs(rules: &RuleSet) -> Vec<PhaseDef> {
    let fields = rules.catalogue.fields();
    let local: Vec<&str> = fields
        .iter()
        .filter(|f| f.kind == Kind::Phase)
        .map(|f| f.name)
        .collect();
    let mut defs: Vec<PhaseDef> = local
        .iter()
        .map(|name| {
            let short = name.trim_end_matches("_ms");
            PhaseDef {
                info: PhaseInfo {
                    name: short.to_string(),
                    label: format!("{} (local)", short.replace('_', " ")),
                    doc: name.to_string(),
                },
                value: f(name),
                metric: None,
                estimated: None,
            }
        })
        .collect();
    let t1 = fields.iter().find(|f| {
        f.kind
            == Kind::Point {
                origin: Event::T0,
                marks: Event::T1,
            }
    });
    let local_sum = local.iter().map(|n| f(n)).reduce(|a, b| a + b);
    if let (Some(t1), Some(local_sum)) = (t1, local_sum) {
        defs.push(PhaseDef {
            info: PhaseInfo {
                name: "other_before_t1".into(),
                label: "other before t1".into(),
                doc: format!("{} − ({})", t1.name, local.join(" + ")),
            },
            value: f(t1.name) - local_sum,
            metric: None,
            estimated: None,
        });
    }
    let may_estimate = compile::estimated_metrics(rules);
    for w in GATEWAY_POINTS[1..].windows(2) {
        let (a, b) = (w[0], w[1]);
        let Some(m) = rules.metric_between(a, b) else {
            continue;
        };
        let span = format!("{}→{}", a.short(), b.short());
        let estimated = may_estimate.get(&m.name).copied().unwrap_or(false);
        defs.push(PhaseDef {
            info: PhaseInfo {
                name: format!("{}_{}", a.short(), b.short()),
                label: m
                    .label
                    .clone()
                    .unwrap_or_else(|| format!("{} ({span})", m.name)),
                doc: if estimated {
                    format!(
                        "{} = {}; estimated where {}{ESTIMATED_SUFFIX} is true",
                        m.name,
                        one_line(&m.expr),
                        m.name
                    )
                } else {
                    format!("{} = {}", m.name, one_line(&m.expr))
                },
            },
            value: f(&m.name),
            metric: Some(m.name.clone()),
            estimated: estimated.then(|| col(format!("{}{ESTIMATED_SUFFIX}", m.name).as_str())),
        });
    }
    defs
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn unit_of(ty: &Ty) -> &'static str {
    match ty {
        Ty::Point { .. } | Ty::Span => "ms",
        Ty::Rate => "tokens/s",
        _ => "number",
    }
}

/// `n` requests over `covered_ms` as a rate per hour; null over no time.
fn per_hour(n: u64, covered_ms: i64) -> Option<f64> {
    (covered_ms > 0).then(|| round3(n as f64 * HOUR_MS as f64 / covered_ms as f64))
}

fn is_failure() -> Expr {
    col("outcome")
        .is_not_null()
        .and(col("outcome").neq(lit("ok")))
}

/// The analysis and the report data of the same requests. `period`: `None` chooses it
/// from the span of the timestamps, which a scan of the timestamps alone finds first. The
/// named metrics no input can compute (`Plan::uncomputable`) are left out of the metric
/// tables.
///
/// The report's figures are asked on `analyze`'s two streaming passes (`Beside`), neither
/// of which holds the requests: its counts and every figure's histogram beside the
/// summary's, then the values at the ranks the figures need (`stats::exact`) beside the
/// summary's.
pub fn run(
    rules: &RuleSet,
    opts: &analyze::Options,
    period: Option<Period>,
) -> Result<(Analysis, Weekly)> {
    let (analysis, passes) = analyze::run_beside(rules, opts, |plan| {
        Passes::new(&plan.rules, plan, period).map_err(|e| match e {
            Inner::Polars(e) => plan.read_error(&e),
            Inner::Usage(e) => e,
        })
    })?;
    let weekly = passes
        .finish(&analysis.plan.rules)
        .map_err(|e| analysis.plan.read_error(&e))?;
    Ok((analysis, weekly))
}

impl Weekly {
    /// The span the end-to-end figure covers where the report can name it: t0→t7 on the
    /// gateway's clock; another table's figure is named by itself.
    pub fn end_to_end_span(&self) -> Option<&'static str> {
        (self.end_to_end == crate::ruleset::DEFAULT_END_TO_END).then_some("t0→t7")
    }
}

/// The first and last timestamp of the requests (ms since the Unix epoch, UTC), and how
/// many have none.
#[derive(Debug, Clone, Copy, Default)]
struct Timestamps {
    first_ms: Option<i64>,
    last_ms: Option<i64>,
    untimed: u64,
}

impl Timestamps {
    /// Asked of the plan in a scan of its own, which reads the timestamps alone: the
    /// periods, and so pass 1's queries, depend on them.
    fn of(plan: &Plan) -> PolarsResult<Timestamps> {
        let t = || col("timestamp").cast(DataType::Int64);
        let df = stats::collect(plan.lf.clone().select([
            t().min().alias("__first"),
            t().max().alias("__last"),
            stats::true_count(col("timestamp").is_null(), "__untimed"),
        ]))?;
        let at = |c: &str| -> PolarsResult<Option<i64>> { Ok(df.column(c)?.i64()?.get(0)) };
        Ok(Timestamps {
            first_ms: at("__first")?,
            last_ms: at("__last")?,
            untimed: df.column("__untimed")?.u64()?.get(0).unwrap_or(0),
        })
    }
}

enum Inner {
    Polars(PolarsError),
    Usage(Error),
}

impl From<PolarsError> for Inner {
    fn from(e: PolarsError) -> Self {
        Inner::Polars(e)
    }
}

const ROWS: &str = "__rows";
/// The tally's keys.
fn tally_keys() -> Vec<String> {
    vec![PERIOD_COL.to_string(), CLASS_INDEX.to_string()]
}
const FAILED: &str = "__failed";
/// The tally's count of requests whose `i`-th phase rests on an estimate.
fn estimated_col(i: usize) -> String {
    format!("__estimated_{i}")
}
/// The channel with `NONE_KEY` for a request without one, as the channel chart names it.
const CHANNEL_COL: &str = "__channel";

/// The period holding each request's timestamp (its start, ms since the epoch, UTC), null
/// for a request without one: `Period::start` as an expression.
fn period_expr(period: Period) -> Expr {
    let offset = if period == Period::Week { MONDAY_MS } else { 0 };
    let len = period.length_ms();
    let t = col("timestamp").cast(DataType::Int64);
    ((t - lit(offset)).floor_div(lit(len)) * lit(len) + lit(offset)).alias(PERIOD_COL)
}

/// A key of a grouped result (text) as the integer it was.
fn int_key(k: &Option<String>) -> Option<i64> {
    k.as_deref().and_then(|s| s.parse().ok())
}

/// One family of percentiles: the keys it groups by, the groupings of them asked for, the
/// values, the quantiles, and its histograms (a query of pass 1).
struct Family {
    keys: Vec<String>,
    /// The groupings it is asked for (positions in `keys`).
    levels: Vec<exact::Level>,
    values: Vec<String>,
    quantiles: Vec<f64>,
    histograms: Histograms,
    /// On a large log, the histograms of its first rows, which guess where the ranks are.
    sampled: Option<Histograms>,
    /// Whether its ranks are guessed from the log's first rows (`sampled`).
    guessed: bool,
    /// Whether its histograms also give its values' CDFs: their `CDF_QUANTILES` over all
    /// requests (one level without keys), of the finite values alone (a rate over no time
    /// is no point of one), and the charts' points.
    cdf: bool,
}

impl Family {
    /// Its histograms of `lf`.
    fn histograms(&self, lf: &LazyFrame) -> PolarsResult<Histograms> {
        Histograms::new(lf, &self.keys, &self.values)
    }
}

/// The report's queries on `analyze`'s passes (`Beside`), and what they found.
struct Passes {
    /// The column of each request's end-to-end time (`Plan::end_to_end`).
    e2e: String,
    period: Period,
    period_from_span: bool,
    timestamps: Timestamps,
    /// Contiguous period starts, from the first request's to the last's.
    starts: Vec<i64>,
    class_order: Vec<String>,
    metrics: Vec<MetricInfo>,
    defs: Vec<PhaseDef>,
    /// The plan with each request's period, channel chart key and phases.
    lf: LazyFrame,
    /// Pass 1's counts: rows, failures and estimates per (period, class); rows per
    /// (model, channel).
    tally: Counts,
    groups: Counts,
    families: Vec<Family>,
    /// Per family, once pass 1 is read: where its ranks are.
    ranks: Vec<exact::Ranks>,
    /// Once pass 1 is read: the CDFs' histograms, one per named metric.
    cdf_hists: Vec<DataFrame>,
    /// `analyze`'s values and their percentiles per class, once found.
    by_class: (Vec<String>, BTreeMap<Key, Vec<Pct>>),
}

impl Passes {
    fn new(
        rules: &RuleSet,
        plan: &Plan,
        period: Option<Period>,
    ) -> std::result::Result<Passes, Inner> {
        let timestamps = Timestamps::of(plan)?;
        let class_order: Vec<String> = rules
            .class_order()
            .into_iter()
            .map(str::to_string)
            .collect();

        let (lo, hi) = (timestamps.first_ms, timestamps.last_ms);
        let period_from_span = period.is_none();
        let period = period.unwrap_or_else(|| match (lo, hi) {
            (Some(lo), Some(hi)) => Period::for_span(hi - lo),
            _ => Period::Hour,
        });
        let starts: Vec<i64> = match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let (first, last) = (period.start(lo), period.start(hi));
                let count = ((last - first) / period.length_ms()) as usize + 1;
                if count > MAX_PERIODS {
                    return Err(Inner::Usage(Error::Usage(format!(
                    "the requests span {count} {}s (more than {MAX_PERIODS}): pass a longer --period",
                    period.name()
                ))));
                }
                (0..count as i64)
                    .map(|i| first + i * period.length_ms())
                    .collect()
            }
            _ => vec![],
        };

        // The named metrics, the phases of the median timeline, and each request's period.
        let metrics: Vec<MetricInfo> = plan
            .reported(rules)
            .iter()
            .map(|m| MetricInfo {
                name: m.name.clone(),
                label: m.label.clone().unwrap_or_else(|| m.name.clone()),
                unit: unit_of(&m.ty).to_string(),
            })
            .collect();
        let names: Vec<String> = metrics.iter().map(|m| m.name.clone()).collect();
        let defs = phase_defs(rules);
        let phase_cols: Vec<String> = defs
            .iter()
            .map(|d| format!("__phase_{}", d.info.name))
            .collect();
        // The model and the channel as the codes the counts key by (`text_codes`), once
        // per request rather than once per count that keys by them.
        let codes = tuples::text_codes();
        let mut derived = vec![
            period_expr(period),
            col("model").cast(codes.clone()),
            col("channel").cast(codes.clone()),
            col("channel")
                .fill_null(lit(NONE_KEY))
                .cast(codes)
                .alias(CHANNEL_COL),
        ];
        derived.extend(
            defs.iter()
                .zip(&phase_cols)
                .map(|(d, c)| d.value.clone().alias(c.as_str())),
        );
        let lf = plan.lf.clone().with_columns(derived);

        // Pass 1: rows, failures and, per phase that can rest on an estimate, the requests
        // whose duration does, per (period, class); rows per (model, channel); and the
        // histograms of every family of percentiles.
        let mut flags = vec![(FAILED.to_string(), is_failure())];
        flags.extend(
            defs.iter()
                .zip(&phase_cols)
                .enumerate()
                .filter_map(|(i, (d, c))| {
                    let e = d.estimated.clone()?;
                    Some((estimated_col(i), col(c.as_str()).is_not_null().and(e)))
                }),
        );
        let tally = Counts::new(
            &lf,
            &tally_keys(),
            Asked {
                rows: ROWS.to_string(),
                flags,
                extremes: vec![],
            },
        )?;
        let groups = Counts::new(
            &lf,
            &["model".to_string(), "channel".to_string()],
            Asked {
                rows: ROWS.to_string(),
                flags: vec![],
                extremes: vec![],
            },
        )?;
        let e2e = plan.end_to_end.clone();
        let three = QUANTILES.to_vec();
        // Per class, the phases that are no named metric: those that are, and end-to-end,
        // `analyze` finds per class (`Beside::by_class`).
        let class_values: Vec<String> = defs
            .iter()
            .zip(&phase_cols)
            .filter(|(d, _)| d.metric.as_ref().is_none_or(|m| !names.contains(m)))
            .map(|(_, c)| c.clone())
            .collect();
        // Each family is one query of each pass (`Histograms`, `Ranks::queries`): the pass's
        // queries share one scan.
        let all = |keys: &[&str]| -> Vec<exact::Level> { vec![(0..keys.len()).collect()] };
        let families = vec![
            // Per model and per channel, from one histogram per (model, channel): its
            // rows counted once for both, and for the CDFs.
            (
                vec!["model", "channel"],
                vec![vec![0], vec![1]],
                names.clone(),
                three.clone(),
                true,
                true,
            ),
            (
                vec![CLASS_INDEX],
                all(&[CLASS_INDEX]),
                class_values,
                three,
                false,
                true,
            ),
            // The p95 alone, which the chart shows. The log's first rows are all in its
            // first period: they tell nothing of the others', so this family is not
            // guessed (its values pass reads end-to-end alone).
            (
                vec![PERIOD_COL, CHANNEL_COL],
                all(&[PERIOD_COL, CHANNEL_COL]),
                vec![e2e.clone()],
                vec![0.95],
                false,
                false,
            ),
        ]
        .into_iter()
        .map(|(keys, levels, values, quantiles, cdf, guessed)| {
            let keys: Vec<String> = keys.into_iter().map(str::to_string).collect();
            Ok(Family {
                histograms: Histograms::new(&lf, &keys, &values)?,
                sampled: None,
                guessed,
                keys,
                levels,
                values,
                quantiles,
                cdf,
            })
        })
        .collect::<PolarsResult<Vec<_>>>()?;
        Ok(Passes {
            e2e: plan.end_to_end.clone(),
            period,
            period_from_span,
            timestamps,
            starts,
            class_order,
            metrics,
            defs,
            lf,
            tally,
            groups,
            families,
            ranks: vec![],
            cdf_hists: vec![],
            by_class: Default::default(),
        })
    }
}

impl analyze::Beside for Passes {
    fn lf(&self, _: &LazyFrame) -> LazyFrame {
        self.lf.clone()
    }

    fn sample(&mut self, sample: &LazyFrame) -> PolarsResult<Vec<LazyFrame>> {
        let mut queries = vec![];
        for fam in self.families.iter_mut().filter(|f| f.guessed) {
            let sampled = fam.histograms(sample)?;
            queries.push(sampled.query());
            fam.sampled = Some(sampled);
        }
        Ok(queries)
    }

    fn first(&mut self, budget: &Arc<Budget>) -> PolarsResult<Vec<LazyFrame>> {
        for fam in &mut self.families {
            if let Some(sampled) = fam.sampled.take() {
                let mut guess = sampled.guess(&fam.levels, &fam.quantiles);
                if fam.cdf {
                    guess = guess.union(sampled.guess(&[vec![]], &CDF_QUANTILES));
                }
                fam.histograms = fam.histograms(&self.lf)?.keeping(guess, budget);
            }
        }
        let mut queries = vec![self.tally.query(), self.groups.query()];
        queries.extend(self.families.iter().map(|f| f.histograms.query()));
        Ok(queries)
    }

    /// Where each family's ranks are, in family order, its CDFs' right after it; the
    /// values kept on a guess offered.
    fn read_first(&mut self) -> PolarsResult<()> {
        for fam in &self.families {
            let hists = fam.histograms.frames()?;
            let kept = fam.histograms.kept()?;
            let locate = |hists: &[DataFrame], levels: &[exact::Level], quantiles: &[f64]| {
                exact::Ranks::locate_at(hists, &fam.keys, levels, &fam.values, quantiles)
            };
            let mut ranks = locate(&hists, &fam.levels, &fam.quantiles)?;
            if fam.cdf {
                let finite = hists
                    .iter()
                    .map(exact::finite_buckets)
                    .collect::<PolarsResult<Vec<_>>>()?;
                let mut cdf = locate(&finite, &[vec![]], &CDF_QUANTILES)?;
                cdf.offer(kept.clone())?;
                ranks.offer(kept)?;
                self.ranks.push(ranks);
                self.ranks.push(cdf);
                self.cdf_hists = finite;
            } else {
                ranks.offer(kept)?;
                self.ranks.push(ranks);
            }
        }
        Ok(())
    }

    /// The values at the ranks, for every family at once: one pass, or two on a large log
    /// whose timings are fine grained (`Ranks::queries`).
    fn values(&mut self) -> PolarsResult<Vec<LazyFrame>> {
        let mut queries = vec![];
        for r in &mut self.ranks {
            queries.extend(r.queries(&self.lf)?);
        }
        Ok(queries)
    }

    fn read(&mut self) -> PolarsResult<()> {
        self.ranks.iter_mut().try_for_each(exact::Ranks::read)
    }

    fn by_class(&mut self, values: &[String], pcts: &BTreeMap<Key, Vec<Pct>>) {
        self.by_class = (values.to_vec(), pcts.clone());
    }
}

impl Passes {
    /// The report data, from what the passes found.
    fn finish(self, rules: &RuleSet) -> PolarsResult<Weekly> {
        let Passes {
            e2e,
            period,
            period_from_span,
            timestamps,
            starts,
            class_order,
            metrics,
            defs,
            tally,
            groups,
            ranks,
            cdf_hists,
            by_class,
            ..
        } = self;
        let (lo, hi, untimed) = (timestamps.first_ms, timestamps.last_ms, timestamps.untimed);
        // Per family, per level.
        let mut found = ranks
            .into_iter()
            .flat_map(|r| match r.finish_quantiles() {
                Ok(levels) => levels.into_iter().map(Ok).collect(),
                Err(e) => vec![Err(e)],
            })
            .collect::<PolarsResult<Vec<_>>>()?
            .into_iter();
        let mut next = || found.next().expect("one per family and level");
        let (by_model_q, by_channel_q, cdf_q, class_q, channel_q) =
            (next(), next(), next(), next(), next());

        // The tally, rolled up (its rows are periods × classes, not requests).
        let tally = tally.frame()?;
        let keys = stats::key_columns(&tally, &tally_keys())?;
        let (rows_c, fail_c) = (tally.column(ROWS)?.u64()?, tally.column(FAILED)?.u64()?);
        let est_c: Vec<(usize, &UInt64Chunked)> = (0..defs.len())
            .filter(|i| defs[*i].estimated.is_some())
            .map(|i| Ok((i, tally.column(&estimated_col(i))?.u64()?)))
            .collect::<PolarsResult<_>>()?;
        let mut p_rows: BTreeMap<i64, u64> = BTreeMap::new();
        let mut p_fail: BTreeMap<i64, u64> = BTreeMap::new();
        let mut p_class: BTreeMap<(i64, usize), u64> = BTreeMap::new();
        let mut class_counts: BTreeMap<usize, u64> = BTreeMap::new();
        // (phase, class) → requests whose duration rests on an estimate.
        let mut estimated: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        for (row, key) in keys.iter().enumerate() {
            let rows = rows_c.get(row).unwrap_or(0);
            let class = int_key(&key[1]).map(|c| c as usize);
            if let Some(c) = class {
                *class_counts.entry(c).or_default() += rows;
                for (i, e) in &est_c {
                    *estimated.entry((*i, c)).or_default() += e.get(row).unwrap_or(0);
                }
            }
            if let Some(p) = int_key(&key[0]) {
                *p_rows.entry(p).or_default() += rows;
                *p_fail.entry(p).or_default() += fail_c.get(row).unwrap_or(0);
                if let Some(c) = class {
                    *p_class.entry((p, c)).or_default() += rows;
                }
            }
        }

        let periods: Vec<PeriodRow> = starts
            .iter()
            .map(|&s| {
                let rows = p_rows.get(&s).copied().unwrap_or(0);
                let end = s + period.length_ms();
                // `starts` is empty unless both exist.
                let (lo, hi) = (lo.unwrap_or(s), hi.unwrap_or(end));
                let covered_ms = (hi.min(end) - lo.max(s)).max(0);
                PeriodRow {
                    rows,
                    covered_ms,
                    partial: lo > s || hi < end,
                    data_from: (lo > s).then(|| iso_ms(lo)).flatten(),
                    data_until: (hi < end).then(|| iso_ms(hi)).flatten(),
                    per_hour: per_hour(rows, covered_ms),
                    failures: p_fail.get(&s).copied().unwrap_or(0),
                    classes: (0..class_order.len())
                        .map(|c| p_class.get(&(s, c)).copied().unwrap_or(0))
                        .collect(),
                    start: iso_ms(s).unwrap_or_default(),
                    label: period.label(s),
                    short_label: period.short_label(s),
                }
            })
            .collect();

        let trend = (periods.len() >= 2).then(|| {
            let prev = &periods[periods.len() - 2];
            let last = &periods[periods.len() - 1];
            let share = |n: u64, rows: u64| (rows > 0).then(|| round3(n as f64 / rows as f64));
            let rate = |n: u64, p: &PeriodRow| per_hour(n, p.covered_ms);
            let rows = class_order
                .iter()
                .enumerate()
                .filter(|(i, _)| prev.classes[*i] > 0 || last.classes[*i] > 0)
                .map(|(i, c)| {
                    let (a, b) = (prev.classes[i], last.classes[i]);
                    let (sa, sb) = (share(a, prev.rows), share(b, last.rows));
                    let (ra, rb) = (rate(a, prev), rate(b, last));
                    TrendRow {
                        class: c.clone(),
                        previous_count: a,
                        last_count: b,
                        previous_per_hour: ra,
                        last_per_hour: rb,
                        per_hour_change: ra.zip(rb).map(|(x, y)| round3(y - x)),
                        previous_share: sa,
                        last_share: sb,
                        share_change_pts: match (sa, sb) {
                            (Some(x), Some(y)) => Some(round3((y - x) * 100.0)),
                            _ => None,
                        },
                    }
                })
                .collect();
            Trend {
                previous: prev.clone(),
                last: last.clone(),

                rows,
            }
        });

        // Named metrics per model and per channel: rows per group from pass 1.
        let groups = groups.frame()?;
        let per = |qs: &BTreeMap<Key, Vec<exact::Quantiles>>,
                   key: &str|
         -> PolarsResult<Vec<GroupMetrics>> {
            let rows = stats::sums(groups.clone().lazy(), &[key.to_string()], col(ROWS))?;
            let mut out: Vec<GroupMetrics> = qs
                .iter()
                .map(|(k, q)| GroupMetrics {
                    rows: rows.get(k).copied().unwrap_or(0),
                    key: k[0].clone().unwrap_or_else(|| NONE_KEY.to_string()),
                    pcts: q.iter().map(exact::Quantiles::pct).collect(),
                })
                .collect();
            out.sort_by(|a, b| a.key.cmp(&b.key));
            Ok(out)
        };
        let by_model = per(&by_model_q, "model")?;
        let by_channel = per(&by_channel_q, "channel")?;

        // End-to-end p95 per channel and period.
        let mut by_ch: BTreeMap<String, BTreeMap<i64, (u64, Option<f64>)>> = BTreeMap::new();
        for (k, q) in &channel_q {
            if let (Some(period), Some(ch)) = (int_key(&k[0]), &k[1]) {
                by_ch
                    .entry(ch.clone())
                    .or_default()
                    .insert(period, (q[0].n, q[0].at[0]));
            }
        }
        let channel_p95 = by_ch
            .into_iter()
            .map(|(channel, m)| ChannelSeries {
                channel,
                points: starts
                    .iter()
                    .map(|s| m.get(s).copied().unwrap_or((0, None)))
                    .collect(),
            })
            .collect();

        // CDF points of every named metric.
        let overall = cdf_q.get(&vec![]).cloned().unwrap_or_default();
        let cdfs = metrics
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let q = overall.get(i).cloned().unwrap_or_default();
                // Every quantile has a value when there is one value at all.
                let quantiles: Vec<f64> = q.at.iter().flatten().copied().collect();
                let points = match (quantiles.last(), cdf_hists.get(i)) {
                    (Some(&max), Some(hist)) => exact::cdf_points(hist, max, CDF_STEPS)?,
                    _ => vec![],
                };
                Ok(Cdf {
                    name: m.name.clone(),
                    label: m.label.clone(),
                    unit: m.unit.clone(),
                    n: q.n,
                    quantiles,
                    points,
                })
            })
            .collect::<PolarsResult<_>>()?;

        // The median timeline per class.
        let phases: Vec<PhaseInfo> = defs.iter().map(|d| d.info.clone()).collect();
        let (analyzed_values, by_class) = by_class;
        let analyzed_at = |name: &str| analyzed_values.iter().position(|v| v == name);
        let waterfall = class_order
            .iter()
            .enumerate()
            .filter_map(|(ci, c)| {
                let count = class_counts.get(&ci).copied().unwrap_or(0);
                if count == 0 {
                    return None;
                }
                let key = vec![Some(ci.to_string())];
                let (own, analyzed) = (class_q.get(&key)?, by_class.get(&key)?);
                // A phase's percentiles: `analyze`'s where it is a named metric, else the
                // class family's (its values in phase order).
                let mut own = own.iter();
                let pct = |d: &PhaseDef| -> Pct {
                    match d.metric.as_ref().and_then(|m| analyzed_at(m)) {
                        Some(i) => analyzed[i].clone(),
                        None => own.next().expect("one per phase no metric is").pct(),
                    }
                };
                let pcts: Vec<Pct> = defs.iter().map(pct).collect();
                Some(WaterfallRow {
                    class: c.clone(),
                    count,
                    end_to_end_p50: analyzed_at(&e2e).and_then(|i| analyzed[i].p50),
                    phases: pcts
                        .into_iter()
                        .enumerate()
                        .map(|(i, p)| PhaseMedian {
                            median: p.p50,
                            n: p.n,
                            estimated: estimated.get(&(i, ci)).copied().unwrap_or(0),
                        })
                        .collect(),
                })
            })
            .collect();

        Ok(Weekly {
            title: DEFAULT_TITLE.to_string(),
            end_to_end: e2e.clone(),
            period,
            period_from_span,
            untimed,
            class_order,
            periods,
            trend,
            metrics,
            by_model,
            by_channel,
            channel_p95,
            cdfs,
            phases,
            waterfall,
            rules: rules
                .rules
                .iter()
                .map(|r| RuleDoc {
                    order: r.order,
                    class: r.class.clone(),
                    when: one_line(&r.when),
                    look_at: r.look_at.clone(),
                })
                .collect(),
            params: rules
                .params
                .iter()
                .map(|p| ParamDoc {
                    name: p.name.clone(),
                    value: p.value,
                    unit: p.unit.clone(),
                    doc: one_line(&p.doc),
                })
                .collect(),
        })
    }
}

/// The report's file format, from the `--out` extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Html,
    Markdown,
}

impl ReportFormat {
    pub fn from_path(path: &Path) -> Result<ReportFormat> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref()
        {
            Some("html") | Some("htm") => Ok(ReportFormat::Html),
            Some("md") | Some("markdown") => Ok(ReportFormat::Markdown),
            other => Err(Error::Usage(format!(
                "--out {}: expected a .html or .md file, found {}",
                path.display(),
                other
                    .map(|e| format!("`.{e}`"))
                    .unwrap_or_else(|| "no extension".into())
            ))),
        }
    }
}

/// Check the report target before any work is done: the format, never an input, an
/// existing file only with `force`, never a directory (as `output::check_target`).
pub fn check_target(path: &Path, inputs: &[PathBuf], force: bool) -> Result<ReportFormat> {
    let format = ReportFormat::from_path(path)?;
    crate::output::check_path(path, inputs, force)?;
    Ok(format)
}

/// Write `text` to `path` atomically: a temporary file beside it, synced, then renamed.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    crate::output::write_atomic(path, |w| {
        w.write_all(text.as_bytes()).map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_starts_are_utc_and_weeks_start_on_monday() {
        // 2026-11-04T15:30:00Z is a Wednesday.
        let t = crate::analyze::parse_instant("2026-11-04T15:30:00Z").unwrap();
        assert_eq!(
            iso_ms(Period::Hour.start(t)).unwrap(),
            "2026-11-04T15:00:00.000Z"
        );
        assert_eq!(
            iso_ms(Period::Day.start(t)).unwrap(),
            "2026-11-04T00:00:00.000Z"
        );
        assert_eq!(
            iso_ms(Period::Week.start(t)).unwrap(),
            "2026-11-02T00:00:00.000Z"
        );
        assert_eq!(
            Period::Week.label(Period::Week.start(t)),
            "2026-W45 (from 2026-11-02)"
        );
        // Before the epoch too.
        assert_eq!(Period::Hour.start(-1), -HOUR_MS);
    }

    #[test]
    fn period_from_span() {
        assert_eq!(Period::for_span(100 * 60_000), Period::Hour);
        assert_eq!(Period::for_span(2 * DAY_MS), Period::Day);
        assert_eq!(Period::for_span(8 * WEEK_MS - 1), Period::Day);
        assert_eq!(Period::for_span(8 * WEEK_MS), Period::Week);
    }
}
