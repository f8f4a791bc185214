//! What `explain` finds: plain data, rendered by `report::explain`.

use serde::Serialize;

use crate::source::AroundRows;
use crate::summary::{round3, BadRows, ClientIds, Pct, RulesInfo, Window};

/// A value from one row of the frame (a field, a metric) or from evaluating part of a rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// Not logged, or not computable from what was logged: never zero.
    Missing,
    /// A whole number as logged (a status code, a token count).
    Integer(i64),
    Number(f64),
    Text(String),
    Flag(bool),
}

impl Value {
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Number(x) => Some(*x),
            Value::Integer(n) => Some(*n as f64),
            Value::Flag(b) => Some(if *b { 1.0 } else { 0.0 }),
            _ => None,
        }
    }

    pub(super) fn flag(&self) -> Option<bool> {
        match self {
            Value::Flag(b) => Some(*b),
            _ => None,
        }
    }

    pub(super) fn rounded(self) -> Value {
        match self {
            Value::Number(x) => Value::Number(round3(x)),
            v => v,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RequestExplanation {
    pub tool: String,
    pub rules: RulesInfo,
    pub inputs: Vec<String>,
    /// Fields read from the columns the user named (`--map`, `--schema`); absent without.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mapped_columns: Vec<crate::summary::MappedColumn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// How client identifiers were written; only when the input had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_ids: Option<ClientIds>,
    /// Rows that could not be read whole; absent when there were none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bad_rows: Option<BadRows>,
    pub request_id: String,
    /// How many rows carry this id (more than one: a duplicate id, each explained).
    pub occurrences: usize,
    pub requests: Vec<Explained>,
}

/// One request (one row) explained.
#[derive(Debug, Clone, Serialize)]
pub struct Explained {
    /// 1-based, in input order.
    pub occurrence: usize,
    pub source_file: String,
    /// 1-based row within the file, as polars numbers them (blank lines and a CSV header
    /// are not rows).
    pub source_row: Option<i64>,
    /// The 1-based line the row begins on (CSV, JSON lines); null in Parquet and JSON
    /// arrays.
    pub source_line: Option<i64>,
    pub timestamp: Option<String>,
    /// The request's labels, token counts and codes, in catalogue order.
    pub labels: Vec<Label>,
    pub class: String,
    /// Every rule that matched, in table order (the default class when none did).
    pub tags: Vec<String>,
    /// The rule that gave the class; null for the default class.
    pub class_rule: Option<ClassRule>,
    /// The data-quality checks that flagged this row.
    pub data_quality: Vec<String>,
    pub timeline: Timeline,
    /// Every rule of the table, in table order.
    pub rules: Vec<RuleEvidence>,
    pub cohort: Cohort,
}

#[derive(Debug, Clone, Serialize)]
pub struct Label {
    pub name: String,
    pub value: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassRule {
    pub order: i64,
    pub look_at: String,
    pub look_at_value: Value,
    pub look_at_estimated: bool,
    pub layer: String,
    pub next_check: String,
    pub detects: String,
    /// A coarser clock's class: the gateway table's classes it cannot tell apart, and what
    /// to log to tell them apart.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub covers: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tell_apart: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    /// The clock the points are placed on: the gateway's (t0) unless the request holds no
    /// gateway point and its log counts from another origin (new-api's r0, a benchmark
    /// client's c0, an inference server's e0, LiteLLM's t1).
    #[serde(skip_serializing_if = "is_gateway_origin")]
    pub origin: String,
    /// t0 → t7, the gateway's end-to-end time (on another clock: to its last point).
    pub end_to_end_ms: Option<f64>,
    /// The span the waterfall is drawn against: end-to-end, or the latest point on the t0
    /// clock when t7 is missing.
    pub scale_ms: Option<f64>,
    /// t0 → t1 and how it was obtained.
    pub t1_offset_ms: Option<f64>,
    pub t1_offset_estimated: bool,
    /// How the t1 offset was obtained (a field, or the rule table's metric), or why it
    /// could not be.
    pub t1_offset_from: String,
    pub phases: Vec<Phase>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    /// A local gateway phase (auth, distribution, body read), drawn in sequence from t0.
    Local,
    /// Between two consecutive timeline points.
    Timeline,
    /// Across one or more missing points, between the nearest points that were logged.
    Bridge,
}

#[derive(Debug, Clone, Serialize)]
pub struct Phase {
    pub name: String,
    pub kind: PhaseKind,
    /// `t3→t4`, or the field name for a local phase.
    pub span: String,
    /// Null when a point it needs is missing (never zero).
    pub duration_ms: Option<f64>,
    /// Where it sits on the t0 clock, when it can be placed.
    pub start_ms: Option<f64>,
    pub end_ms: Option<f64>,
    /// The figures it was computed from, and their origins.
    pub from: String,
    /// Built on the t1 offset estimated from the local phases.
    pub estimated: bool,
    /// Why there is no duration.
    pub missing: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleEvidence {
    pub order: i64,
    pub class: String,
    /// The rule matched (the request carries its tag).
    pub matched: bool,
    /// It is the first match: it gave the class.
    pub gives_class: bool,
    pub when: String,
    /// The fields and metrics its condition uses, in order of first use, with this row's
    /// values.
    pub values: Vec<Evidence>,
    /// The parameters its condition uses, with the values in force.
    pub thresholds: Vec<Threshold>,
    /// Each elementary condition, with both sides evaluated on this row.
    pub checks: Vec<CheckResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub name: String,
    /// `field` or `metric`.
    pub source: &'static str,
    pub value: Value,
    pub estimated: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Threshold {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    /// The condition as written (SQL syntax).
    pub expr: String,
    /// A comparison's operator; null for `IS NULL`, `IS TRUE`, `IN` and bare flags.
    pub op: Option<String>,
    /// The left side's value (or the tested expression's value).
    pub left: Value,
    /// A comparison's right side.
    pub right: Option<Value>,
    /// true, false, or null (a missing value: counts as not matched).
    pub result: Value,
    /// Uses a metric built on the estimated t1 offset.
    pub estimated: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Cohort {
    /// The cohort is every analysed request with the same model and channel (null: the
    /// request has none, and the cohort is the requests that have none either)…
    pub model: Option<String>,
    pub channel: Option<String>,
    /// …among these rows of its file, on a log of more rows than `--cohort-rows`; absent:
    /// in the whole log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub around: Option<AroundRows>,
    /// Requests in the cohort, this one included.
    pub requests: u64,
    /// When a cohort percentile is shown (`stats::support::RULE`).
    pub percentile_rule: &'static str,
    pub metrics: Vec<CohortMetric>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CohortMetric {
    pub name: String,
    pub label: String,
    pub value: Option<f64>,
    pub estimated: bool,
    /// p50/p95/p99 over the cohort's requests that have the metric.
    pub cohort: Pct,
    /// Share of the cohort's values at or below this request's value, in percent (the
    /// empirical CDF at the value); null when the request has no value.
    pub rank_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassExplanation {
    pub tool: String,
    pub rules: RulesInfo,
    pub inputs: Vec<String>,
    /// Fields read from the columns the user named (`--map`, `--schema`); absent without.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mapped_columns: Vec<crate::summary::MappedColumn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// How client identifiers were written; only when the input had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_ids: Option<ClientIds>,
    /// Rows that could not be read whole; absent when there were none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bad_rows: Option<BadRows>,
    pub class: String,
    /// Table order; null for the default class.
    pub order: Option<i64>,
    pub when: Option<String>,
    /// The figure the list is ranked by: the rule's `look_at` (end-to-end for the default
    /// class).
    pub look_at: String,
    /// `highest` for durations, `lowest` for rates (slow decoding is a low rate).
    pub worst_is: &'static str,
    pub layer: String,
    pub next_check: String,
    pub detects: String,
    /// A coarser clock's class: the gateway table's classes it cannot tell apart, and what
    /// to log to tell them apart.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub covers: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tell_apart: String,
    /// Requests whose class this is.
    pub requests_in_class: u64,
    /// Requests analysed.
    pub requests: u64,
    pub limit: usize,
    pub worst: Vec<Worst>,
    /// What to run next: the explanation of the worst request, where it has an id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_command: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Worst {
    pub rank: usize,
    pub request_id: Option<String>,
    pub source_file: String,
    pub source_row: Option<i64>,
    /// The line the row begins on (CSV, JSON lines).
    pub source_line: Option<i64>,
    pub timestamp: Option<String>,
    pub model: Option<String>,
    pub channel: Option<String>,
    pub outcome: Option<String>,
    pub look_at_value: Option<f64>,
    pub look_at_estimated: bool,
    pub end_to_end_ms: Option<f64>,
}

/// The gateway's clock, which the JSON leaves unsaid.
fn is_gateway_origin(origin: &str) -> bool {
    origin == "t0"
}
