//! `tracediag explain`: one request taken apart, or the worst requests of one class.
//!
//! For a request: its timeline as phases (each with the figures it was computed from, their
//! origin, and whether it rests on the estimated t1 offset), its class and tags, every rule
//! of the table with the values its condition used and the thresholds they met, and its
//! place among its cohort (same model and channel). For a class: its worst requests by the
//! rule's `look_at` figure. Everything here is plain data, asked of the plan: the rows
//! explained are the only ones collected, the cohorts are aggregates; `report::explain`
//! renders it.

use std::collections::BTreeMap;

use polars::prelude::*;
use serde::Serialize;

use crate::analyze::{self, Options};
use crate::catalogue::{self, Event, Kind};
use crate::error::{Error, Result};
use crate::ids;
use crate::plan::{self, Plan};
use crate::quality;
use crate::ruleset::compile::{self, Compiler, CLASSES_SEPARATOR, ESTIMATED_SUFFIX};
use crate::ruleset::timeline::GATEWAY_POINTS;
use crate::ruleset::types::{self, Arith, Cmp, Func, Node, Ty};
use crate::ruleset::RuleSet;
use crate::ruleset::{Metric, Rule};
use crate::source::{self, AroundRows, Locations, ROW_COL, SOURCE_COL};
use crate::stats::{self, exact};
use crate::summary::{round3, tool, BadRows, ClientIds, Pct, RulesInfo, Window};

/// What to explain.
#[derive(Debug, Clone)]
pub enum Target {
    /// Every row with this request id, in input order; its cohort among the `cohort_rows`
    /// rows of its file around it when the log has more (`plan::Scope::Request`).
    Request { id: String, cohort_rows: u64 },
    /// The worst `limit` requests whose class is `class`.
    Class { class: String, limit: usize },
}

/// The result of `explain`, for either target.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "explain", rename_all = "snake_case")]
pub enum Explanation {
    Request(RequestExplanation),
    Class(ClassExplanation),
}

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

    fn flag(&self) -> Option<bool> {
        match self {
            Value::Flag(b) => Some(*b),
            _ => None,
        }
    }

    fn rounded(self) -> Value {
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
}

#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    /// t0 → t7, the gateway's end-to-end time.
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
    /// Requests whose class this is.
    pub requests_in_class: u64,
    /// Requests analysed.
    pub requests: u64,
    pub limit: usize,
    pub worst: Vec<Worst>,
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

/// Analyse `opts.inputs` with `rules` and explain `target`.
pub fn run(rules: &RuleSet, opts: &Options, target: &Target) -> Result<Explanation> {
    if let Target::Class { class, .. } = target {
        check_class(rules, class)?;
    }
    if opts.input_format.is_none() {
        if let Some(p) = opts
            .inputs
            .iter()
            .find(|p| crate::monitor::is_metrics_export(p))
        {
            return Err(Error::Usage(format!(
                "{}: an Azure Monitor metric export (windows, not requests); explain reads gateway request logs",
                p.display()
            )));
        }
    }
    analyze::check(rules, opts)?;
    let scope = match target {
        Target::Request { id, cohort_rows } => plan::Scope::Request {
            id,
            cohort_rows: *cohort_rows,
        },
        Target::Class { .. } => plan::Scope::Log,
    };
    let plan = plan::build_for(rules, opts, scope)?;
    let about = About::of(&plan, opts);
    match target {
        Target::Request { id, .. } => request(rules, &plan, &about, id).map(Explanation::Request),
        Target::Class { class, limit } => {
            class_worst(rules, &plan, &about, class, *limit).map(Explanation::Class)
        }
    }
}

/// What an explanation says about the run besides its requests.
pub struct About {
    inputs: Vec<String>,
    window: Option<Window>,
    client_ids: Option<ClientIds>,
    bad_rows: Option<BadRows>,
    /// Whether a file without any timing value is refused, as `analyze` refuses it: not
    /// within an incident window (the file may just have no request there) nor for a
    /// query's result.
    refuse_untimed: bool,
}

impl About {
    fn of(plan: &Plan, opts: &Options) -> About {
        About {
            inputs: plan
                .inputs
                .iter()
                .map(|i| i.path.display().to_string())
                .collect(),
            window: analyze::window(opts),
            client_ids: plan.id_policy.record(ids::found(&plan.inputs)),
            bad_rows: analyze::bad_rows(
                &plan.inputs,
                opts.on_bad_row,
                plan.unparsed_skipped,
                plan.skipped_examples.clone(),
            ),
            refuse_untimed: opts.since.is_none() && opts.until.is_none() && !opts.from_sql_result,
        }
    }
}

/// As `analyze`: a file none of whose rows holds a timing value is refused, not explained
/// as insufficient_data. Looked for only when the rows explained hold none, so that
/// explaining a timed request costs no pass over the log.
fn refuse_untimed(plan: &Plan, about: &About, rows: &DataFrame) -> Result<()> {
    if !about.refuse_untimed {
        return Ok(());
    }
    let timed = stats::collect(
        rows.clone()
            .lazy()
            .select([plan.any_timing().any(true).alias("__timed")]),
    )
    .and_then(|df| Ok(df.column("__timed")?.bool()?.get(0) == Some(true)))
    .map_err(polars_error)?;
    if timed {
        return Ok(());
    }
    match plan.untimed_input()? {
        Some(i) => Err(analyze::untimed_file(&plan.inputs[i])),
        None => Ok(()),
    }
}

/// An error unless the table can give `class`.
pub fn check_class(rules: &RuleSet, class: &str) -> Result<()> {
    let known = rules.class_order();
    if known.contains(&class) {
        return Ok(());
    }
    let mut msg = format!(
        "unknown class `{class}`: the rule table `{}` gives {}",
        rules.name,
        known.join(", ")
    );
    if let Some(s) = types::nearest(class, known.iter().copied()) {
        msg.push_str(&format!("; did you mean `{s}`?"));
    }
    Err(Error::Usage(msg))
}

fn polars_error(e: PolarsError) -> Error {
    Error::Usage(format!(
        "explain: cannot read the analysed frame: {}",
        source::polars_message(&e)
    ))
}

/// Explain every row whose `request_id` is `id`, in input order. Only those rows are
/// read (`plan::Scope::Request`: a lookup of the id column, then the rows alone); the
/// cohort is asked for its aggregates.
pub fn request(
    rules: &RuleSet,
    plan: &Plan,
    about: &About,
    id: &str,
) -> Result<RequestExplanation> {
    let rows = plan.request.clone().unwrap_or_else(|| plan.lf.clone());
    let df = stats::collect(rows.filter(col("request_id").eq(lit(id))))
        .map_err(|e| plan.read_error(&e))?;
    if df.height() == 0 {
        // A window that holds no request at all is the typo to report, not the id.
        if let Some(e) = plan.empty_window()? {
            return Err(e);
        }
        let mut msg = format!("no request `{id}` in {}", about.inputs.join(", "));
        if let Some(w) = &about.window {
            msg.push_str(&match (&w.since, &w.until) {
                (Some(s), Some(u)) => format!(" received between {s} and {u}"),
                (Some(s), None) => format!(" received at or after {s}"),
                (None, Some(u)) => format!(" received before {u}"),
                (None, None) => String::new(),
            });
        }
        // Only on this error path: every id, to suggest the nearest.
        let ids = stats::collect(plan.lf.clone().select([col("request_id")]))
            .map_err(|e| plan.read_error(&e))?;
        let ids = ids
            .column("request_id")
            .and_then(|c| c.str().cloned())
            .map_err(polars_error)?;
        if let Some(s) = types::nearest(id, ids.iter().flatten()) {
            msg.push_str(&format!("; did you mean `{s}`?"));
        }
        return Err(Error::Usage(msg));
    }
    refuse_untimed(plan, about, &df)?;
    let (all, around) = match &plan.around {
        Some((lf, rows)) => (lf, Some(rows)),
        None => (&plan.lf, None),
    };
    let mut ctx =
        Ctx::new(rules, &df, &plan.locations, all, &plan.uncomputable).map_err(polars_error)?;
    ctx.around = around;
    let requests = (0..df.height())
        .map(|i| ctx.explain_row(i, i + 1))
        .collect::<PolarsResult<Vec<_>>>()
        .map_err(|e| plan.read_error(&e))?;
    Ok(RequestExplanation {
        tool: tool(),
        rules: RulesInfo::of(rules),
        inputs: about.inputs.clone(),
        window: about.window.clone(),
        client_ids: about.client_ids.clone(),
        bad_rows: about.bad_rows.clone(),
        request_id: id.to_string(),
        occurrences: df.height(),
        requests,
    })
}

/// The worst `limit` requests of `class`, by the rule's `look_at` figure (highest first,
/// lowest first for a rate); ties by request id, then file and row; missing values last.
/// A top-k of the class's rows: only those `limit` rows are collected.
pub fn class_worst(
    rules: &RuleSet,
    plan: &Plan,
    about: &About,
    class: &str,
    limit: usize,
) -> Result<ClassExplanation> {
    check_class(rules, class)?;
    let rule = rules.rule(class);
    let look_at = rule
        .map(|r| r.look_at.clone())
        .unwrap_or_else(|| "total_handler_ms".to_string());
    let lower_is_worse = is_rate(rules, &look_at);
    let in_class = plan.lf.clone().filter(col("class").eq(lit(class)));
    let value = col(look_at.as_str())
        .cast(DataType::Float64)
        .round(3, RoundMode::HalfAwayFromZero);
    let top = in_class
        .clone()
        .with_column(value.alias("__look_at"))
        .sort_by_exprs(
            [
                col("__look_at"),
                col("request_id").fill_null(lit("")),
                col(SOURCE_COL),
                col(ROW_COL),
            ],
            SortMultipleOptions::default()
                .with_order_descending_multi([!lower_is_worse, false, false, false])
                .with_nulls_last(true)
                .with_maintain_order(true),
        )
        .limit(limit as IdxSize);
    let counts = plan.lf.clone().select([
        len().cast(DataType::UInt64).alias("requests"),
        col("class")
            .eq(lit(class))
            .cast(DataType::UInt64)
            .sum()
            .alias("in_class"),
    ]);
    let mut found = stats::collect_all(vec![top, counts]).map_err(|e| plan.read_error(&e))?;
    let counts = found.pop().expect("two queries");
    let df = found.pop().expect("two queries");
    let count = |name: &str| -> Result<u64> {
        counts
            .column(name)
            .and_then(|c| Ok(c.u64()?.get(0).unwrap_or(0)))
            .map_err(polars_error)
    };
    if count("requests")? == 0 {
        if let Some(e) = plan.empty_window()? {
            return Err(e);
        }
    }
    refuse_untimed(plan, about, &df)?;
    let ctx = Ctx::new(rules, &df, &plan.locations, &plan.lf, &plan.uncomputable)
        .map_err(polars_error)?;
    let worst: Vec<Worst> = (0..df.height())
        .map(|i| {
            let row = ctx.row(i);
            Worst {
                rank: i + 1,
                request_id: row.text("request_id"),
                source_file: row.text(SOURCE_COL).unwrap_or_default(),
                source_row: row.int(ROW_COL),
                source_line: ctx.source_line(&row),
                timestamp: ctx.timestamp(i),
                model: row.text("model"),
                channel: row.text("channel"),
                outcome: row.text("outcome"),
                look_at_value: row.get(&look_at).number().map(round3),
                look_at_estimated: row.estimated(&look_at),
                end_to_end_ms: row.get("total_handler_ms").number().map(round3),
            }
        })
        .collect();
    Ok(ClassExplanation {
        tool: tool(),
        rules: RulesInfo::of(rules),
        inputs: about.inputs.clone(),
        window: about.window.clone(),
        client_ids: about.client_ids.clone(),
        bad_rows: about.bad_rows.clone(),
        class: class.to_string(),
        order: rule.map(|r| r.order),
        when: rule.map(|r| r.when.clone()),
        look_at,
        worst_is: if lower_is_worse { "lowest" } else { "highest" },
        layer: rule.map(|r| r.layer.clone()).unwrap_or_default(),
        next_check: rule.map(|r| r.next_check.clone()).unwrap_or_default(),
        detects: rule.map(|r| r.detects.clone()).unwrap_or_default(),
        requests_in_class: count("in_class")?,
        requests: count("requests")?,
        limit,
        worst,
    })
}

/// Whether a field or metric is a rate, where a low value is the bad one.
fn is_rate(rules: &RuleSet, name: &str) -> bool {
    match catalogue::field(name) {
        Some(f) => f.kind == Kind::Rate,
        None => rules
            .metrics
            .iter()
            .any(|m| m.name == name && m.ty == Ty::Rate),
    }
}

/// A number as exactly as it is worth showing: up to three decimals, no trailing zeros.
pub fn exact(x: f64) -> String {
    format!("{}", round3(x))
}

// ---------------------------------------------------------------------------------------
// Reading rows.

struct Ctx<'a> {
    rules: &'a RuleSet,
    /// The rows being explained (a few, collected from the plan).
    df: &'a DataFrame,
    /// Where the cohorts' aggregates are asked: the whole plan, or the rows around the
    /// request (`around`).
    all: &'a LazyFrame,
    /// Which rows `all` holds when it is not the whole log.
    around: Option<&'a AroundRows>,
    locations: &'a Locations,
    /// Reported metrics no input can compute (`Plan::uncomputable`): no cohort row.
    uncomputable: &'a [String],
    params: BTreeMap<String, f64>,
    timestamps: Option<Int64Chunked>,
    /// Every rule's elementary conditions, both sides and the result, evaluated on `df`
    /// by the compiled expressions (`checks_frame`).
    checks: DataFrame,
}

struct Row<'a> {
    df: &'a DataFrame,
    i: usize,
}

impl Row<'_> {
    fn get(&self, name: &str) -> Value {
        let Ok(c) = self.df.column(name) else {
            return Value::Missing;
        };
        match c.get(self.i) {
            Err(_) | Ok(AnyValue::Null) => Value::Missing,
            Ok(AnyValue::Boolean(b)) => Value::Flag(b),
            Ok(av) => {
                if let Some(s) = av.get_str() {
                    Value::Text(s.to_string())
                } else if av.dtype().is_integer() {
                    av.extract::<i64>().map_or(Value::Missing, Value::Integer)
                } else if let Some(x) = av.extract::<f64>() {
                    if x.is_nan() {
                        Value::Missing
                    } else {
                        Value::Number(x)
                    }
                } else {
                    Value::Text(av.to_string())
                }
            }
        }
    }

    fn text(&self, name: &str) -> Option<String> {
        match self.get(name) {
            Value::Missing => None,
            Value::Text(s) => Some(s),
            Value::Number(x) => Some(exact(x)),
            Value::Integer(n) => Some(n.to_string()),
            Value::Flag(b) => Some(b.to_string()),
        }
    }

    fn int(&self, name: &str) -> Option<i64> {
        self.get(name).number().map(|x| x as i64)
    }

    fn flag(&self, name: &str) -> bool {
        self.get(name).flag().unwrap_or(false)
    }

    fn num(&self, name: &str) -> Option<f64> {
        self.get(name).number()
    }

    /// A metric built on the estimated t1 offset, on this row.
    fn estimated(&self, name: &str) -> bool {
        self.flag(&format!("{name}{ESTIMATED_SUFFIX}"))
    }
}

impl<'a> Ctx<'a> {
    fn new(
        rules: &'a RuleSet,
        df: &'a DataFrame,
        locations: &'a Locations,
        all: &'a LazyFrame,
        uncomputable: &'a [String],
    ) -> PolarsResult<Self> {
        let timestamps = match df.column("timestamp") {
            Ok(c) => Some(c.cast(&DataType::Int64)?.i64()?.clone()),
            Err(_) => None,
        };
        Ok(Ctx {
            rules,
            df,
            all,
            around: None,
            locations,
            uncomputable,
            params: rules.param_values(),
            timestamps,
            checks: checks_frame(rules, df)?,
        })
    }

    fn row(&self, i: usize) -> Row<'a> {
        Row { df: self.df, i }
    }

    /// The line row `i` begins on in its file (CSV, JSON lines).
    fn source_line(&self, row: &Row) -> Option<i64> {
        let file = row.text(SOURCE_COL)?;
        self.locations.line(&file, row.int(ROW_COL)?)
    }

    fn timestamp(&self, i: usize) -> Option<String> {
        self.timestamps
            .as_ref()
            .and_then(|t| t.get(i))
            .and_then(analyze::iso_ms)
    }

    fn explain_row(&self, i: usize, occurrence: usize) -> PolarsResult<Explained> {
        let row = self.row(i);
        let class = row.text("class").unwrap_or_default();
        let tags: Vec<String> = row
            .text("classes")
            .map(|s| {
                s.split(CLASSES_SEPARATOR)
                    .filter(|t| !t.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let class_rule = self.rules.rule(&class).map(|r| ClassRule {
            order: r.order,
            look_at: r.look_at.clone(),
            look_at_value: row.get(&r.look_at).rounded(),
            look_at_estimated: row.estimated(&r.look_at),
            layer: r.layer.clone(),
            next_check: r.next_check.clone(),
            detects: r.detects.clone(),
        });
        let labels = catalogue::FIELDS
            .iter()
            .filter(|f| {
                matches!(f.kind, Kind::Label | Kind::Code | Kind::Flag | Kind::Count)
                    && f.name != "request_id"
            })
            .map(|f| Label {
                name: f.name.to_string(),
                value: row.get(f.name).rounded(),
            })
            .collect();
        let data_quality = quality::ALL
            .iter()
            .filter(|c| row.flag(&quality::column(c)))
            .map(|c| c.name.to_string())
            .collect();
        let rules = self
            .rules
            .rules
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let matched = tags.iter().any(|t| t == &r.class);
                self.evidence(&row, k, matched, r.class == class)
            })
            .collect();
        Ok(Explained {
            occurrence,
            source_file: row.text(SOURCE_COL).unwrap_or_default(),
            source_row: row.int(ROW_COL),
            source_line: self.source_line(&row),
            timestamp: self.timestamp(i),
            labels,
            class,
            tags,
            class_rule,
            data_quality,
            timeline: timeline(self.rules, &row),
            rules,
            cohort: self.cohort(&row)?,
        })
    }

    /// The evidence of the `r`-th rule of the table on `row`.
    fn evidence(&self, row: &Row, r: usize, matched: bool, gives_class: bool) -> RuleEvidence {
        let rule = &self.rules.rules[r];
        let mut names = vec![];
        leaves(&rule.node, &mut names);
        let mut values = vec![];
        let mut thresholds = vec![];
        for leaf in names {
            match leaf {
                Node::Field(n) | Node::Metric(n) => {
                    if values.iter().any(|v: &Evidence| &v.name == n) {
                        continue;
                    }
                    values.push(Evidence {
                        name: n.clone(),
                        source: if matches!(leaf, Node::Field(_)) {
                            "field"
                        } else {
                            "metric"
                        },
                        value: row.get(n).rounded(),
                        estimated: row.estimated(n),
                    });
                }
                Node::Param(n) => {
                    if thresholds.iter().any(|t: &Threshold| &t.name == n) {
                        continue;
                    }
                    let p = self.rules.params.iter().find(|p| &p.name == n);
                    thresholds.push(Threshold {
                        name: n.clone(),
                        value: self.params.get(n).copied().unwrap_or(f64::NAN),
                        unit: p.map(|p| p.unit.clone()).unwrap_or_default(),
                    });
                }
                _ => {}
            }
        }
        let checked = Row {
            df: &self.checks,
            i: row.i,
        };
        let checks = atoms(rule)
            .into_iter()
            .enumerate()
            .map(|(k, atom)| {
                let mut used = vec![];
                leaves(atom, &mut used);
                let estimated = used.iter().any(|n| match n {
                    Node::Metric(m) => row.estimated(m),
                    _ => false,
                });
                let value = |side: Side| checked.get(&check_column(r, k, side)).rounded();
                let op = match atom {
                    Node::Cmp(op, ..) => Some(cmp_text(*op).to_string()),
                    _ => None,
                };
                CheckResult {
                    expr: sql(atom),
                    right: op.as_ref().map(|_| value(Side::Right)),
                    op,
                    left: value(Side::Left),
                    result: checked.get(&check_column(r, k, Side::Result)),
                    estimated,
                }
            })
            .collect();
        RuleEvidence {
            order: rule.order,
            class: rule.class.clone(),
            matched,
            gives_class,
            when: rule.when.clone(),
            values,
            thresholds,
            checks,
        }
    }

    fn cohort(&self, row: &Row) -> PolarsResult<Cohort> {
        let model = row.text("model");
        let channel = row.text("channel");
        let same = |name: &str, v: &Option<String>| -> Expr {
            match v {
                Some(s) => col(name)
                    .cast(DataType::String)
                    .eq(lit(s.as_str()))
                    .fill_null(lit(false)),
                None => col(name).is_null(),
            }
        };
        let reported: Vec<_> = self
            .rules
            .reported_metrics()
            .into_iter()
            .filter(|m| !self.uncomputable.contains(&m.name))
            .collect();
        let names: Vec<String> = reported.iter().map(|m| m.name.clone()).collect();
        let lf = self
            .all
            .clone()
            .filter(same("model", &model).and(same("channel", &channel)));
        // Per metric: the cohort's values, and those at or below this request's. Counted in
        // the same pass as the percentiles' histograms.
        let mut aggs = vec![len().cast(DataType::UInt64).alias("__requests")];
        for (k, m) in reported.iter().enumerate() {
            let v = col(m.name.as_str()).cast(DataType::Float64);
            let present = v.clone().is_not_null().and(v.clone().is_not_nan());
            aggs.push(
                present
                    .clone()
                    .cast(DataType::UInt64)
                    .sum()
                    .alias(format!("__n{k}").as_str()),
            );
            let at_or_below = match row.num(&m.name) {
                Some(x) => present.and(v.lt_eq(lit(x))).fill_null(lit(false)),
                None => lit(false),
            };
            aggs.push(
                at_or_below
                    .cast(DataType::UInt64)
                    .sum()
                    .alias(format!("__le{k}").as_str()),
            );
        }
        let mut first = vec![lf.clone().select(aggs)];
        first.extend(exact::histogram_queries(&lf, &[], &names));
        let mut first = stats::collect_all(first)?;
        let counts = first.remove(0);
        let mut ranks = exact::Ranks::locate(&first, &[], &[vec![]], &names)?;
        ranks.refine(&lf)?;
        let exact_values = stats::collect_all(ranks.queries(&lf))?;
        let pcts = ranks
            .finish(&exact_values)?
            .pop()
            .and_then(|mut m| m.remove(&vec![]))
            .unwrap_or_default();
        let count = |name: &str| -> PolarsResult<u64> {
            Ok(counts.column(name)?.u64()?.get(0).unwrap_or(0))
        };
        let mut metrics = vec![];
        for (k, m) in reported.iter().enumerate() {
            let value = row.num(&m.name);
            let (n, at_or_below) = (count(&format!("__n{k}"))?, count(&format!("__le{k}"))?);
            let rank_pct = value.and_then(|_| {
                (n > 0).then(|| ((at_or_below as f64 / n as f64) * 1000.0).round() / 10.0)
            });
            metrics.push(CohortMetric {
                name: m.name.clone(),
                label: m.label.clone().unwrap_or_default(),
                value: value.map(round3),
                estimated: row.estimated(&m.name),
                cohort: pcts.get(k).cloned().unwrap_or_default(),
                rank_pct,
            });
        }
        Ok(Cohort {
            model,
            channel,
            around: self.around.cloned(),
            requests: count("__requests")?,
            percentile_rule: crate::stats::support::RULE,
            metrics,
        })
    }
}

// ---------------------------------------------------------------------------------------
// The timeline.

/// The catalogue field that records `event`, with its origin.
fn point_field(event: Event) -> Option<(&'static str, Event)> {
    catalogue::FIELDS.iter().find_map(|f| match f.kind {
        Kind::Point { origin, marks } if marks == event => Some((f.name, origin)),
        _ => None,
    })
}

/// A timeline point as the row has it.
#[derive(Debug, Clone)]
struct Point {
    event: Event,
    /// The field and its raw value (counted from `origin`); None for t0.
    field: Option<&'static str>,
    origin: Event,
    raw: Option<f64>,
    /// On the t0 clock, with whether that rests on an estimate.
    t0: Option<(f64, bool)>,
    /// How `t0` was obtained, or why the point could not be placed.
    t0_text: String,
}

/// A metric as `explain` names it: its name and its expression.
fn defined(m: &Metric) -> String {
    format!("{} = {}", m.name, sql(&m.node))
}

/// The row's timeline points. Placing a point on the t0 clock is the rule table's work:
/// its own field when that counts from t0, otherwise the table's metric from t0 to it
/// (`RuleSet::metric_between`, e.g. `headers_at_ms`), with that metric's estimate flag.
struct Clock<'r> {
    rules: &'r RuleSet,
    points: Vec<Point>,
    local: Vec<(&'static str, Option<f64>)>,
}

impl<'r> Clock<'r> {
    fn of(rules: &'r RuleSet, row: &Row) -> Clock<'r> {
        let local: Vec<(&'static str, Option<f64>)> = catalogue::FIELDS
            .iter()
            .filter(|f| f.kind == Kind::Phase)
            .map(|f| (f.name, row.num(f.name)))
            .collect();
        let mut points: Vec<Point> = vec![Point {
            event: Event::T0,
            field: None,
            origin: Event::T0,
            raw: Some(0.0),
            t0: Some((0.0, false)),
            t0_text: "0".into(),
        }];
        for e in GATEWAY_POINTS.into_iter().skip(1) {
            let Some((field, origin)) = point_field(e) else {
                continue;
            };
            let raw = row.num(field);
            let metric = rules.metric_between(Event::T0, e);
            // The metric, unless it is no more than the field itself.
            let metric = metric.filter(|m| m.node != Node::Field(field.to_string()));
            let (t0, t0_text) = match (raw, metric) {
                (Some(v), _) if origin == Event::T0 => (Some((v, false)), field.to_string()),
                (_, Some(m)) => match row.num(&m.name) {
                    Some(v) => (Some((v, row.estimated(&m.name))), defined(m)),
                    None if raw.is_none() && origin == Event::T0 => (
                        None,
                        format!(
                            "{} not logged ({field}), and {} has no value",
                            e.short(),
                            defined(m)
                        ),
                    ),
                    None if raw.is_none() => (None, format!("{} not logged ({field})", e.short())),
                    None => (
                        None,
                        format!(
                            "{} not on the t0 clock: {} has no value",
                            e.short(),
                            defined(m)
                        ),
                    ),
                },
                (None, None) => (None, format!("{} not logged ({field})", e.short())),
                (Some(_), None) => (
                    None,
                    format!(
                        "{} not on the t0 clock: the rule table has no metric from t0 to it",
                        e.short()
                    ),
                ),
            };
            points.push(Point {
                event: e,
                field: Some(field),
                origin,
                raw,
                t0,
                t0_text,
            });
        }
        Clock {
            rules,
            points,
            local,
        }
    }

    fn point(&self, e: Event) -> Option<&Point> {
        self.points.iter().find(|p| p.event == e)
    }

    /// The span from `a` to `b`, which `metric` (the rule table's, if any) spans: (ms,
    /// estimated, computed from) or why it cannot be had.
    fn span(
        &self,
        row: &Row,
        metric: Option<&Metric>,
        a: &Point,
        b: &Point,
    ) -> std::result::Result<(f64, bool, String), String> {
        // The rule table's metric for this stretch, when the row has it.
        if let Some(m) = metric {
            if let Some(v) = row.num(&m.name) {
                return Ok((v, row.estimated(&m.name), defined(m)));
            }
        }
        // Counted from `a` itself (t1 → t2 from upstream_headers_ms): exact, whether or not
        // `a` can be placed on the t0 clock.
        if let (Some(rb), true) = (b.raw, b.origin == a.event) {
            let f = b.field.unwrap_or("?");
            return Ok((rb, false, format!("{f} (ms since {})", a.event.short())));
        }
        let missing: Vec<&str> = [a, b]
            .iter()
            .filter(|p| p.t0.is_none() && p.raw.is_none())
            .map(|p| p.t0_text.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(missing.join("; "));
        }
        // Counted from the same origin: an exact difference.
        if let (Some(ra), Some(rb), Some(fa), Some(fb)) = (a.raw, b.raw, a.field, b.field) {
            if a.origin == b.origin {
                return Ok((
                    rb - ra,
                    false,
                    format!("{fb} - {fa} (both ms since {})", a.origin.short()),
                ));
            }
        }
        // Otherwise on the t0 clock.
        match (a.t0, b.t0) {
            (Some((ta, ea)), Some((tb, eb))) => {
                let text = if a.event == Event::T0 {
                    b.t0_text.clone()
                } else {
                    format!("({}) - ({})", b.t0_text, a.t0_text)
                };
                Ok((tb - ta, ea || eb, text))
            }
            _ => Err([a, b]
                .iter()
                .filter(|p| p.t0.is_none())
                .map(|p| p.t0_text.as_str())
                .collect::<Vec<_>>()
                .join("; ")),
        }
    }
}

fn timeline(rules: &RuleSet, row: &Row) -> Timeline {
    let clock = Clock::of(rules, row);
    let mut phases = vec![];

    // The local phases, in sequence from t0.
    let mut at = Some(0.0);
    for (name, v) in &clock.local {
        let (start, end) = match (at, v) {
            (Some(s), Some(d)) => (Some(s), Some(s + d)),
            _ => (None, None),
        };
        at = end;
        phases.push(Phase {
            name: name.trim_end_matches("_ms").to_string(),
            kind: PhaseKind::Local,
            span: "local".into(),
            duration_ms: v.map(round3),
            start_ms: start.map(round3),
            end_ms: end.map(round3),
            from: format!("{name} (local phase)"),
            estimated: false,
            missing: v.is_none().then(|| format!("{name} not logged")),
        });
    }

    // Consecutive points; after each run of two or more phases that are missing or cannot
    // be placed on the t0 clock, a bridge across it, when its ends can be subtracted.
    let pts = &clock.points;
    let mut run_start: Option<usize> = None;
    let bridge = |phases: &mut Vec<Phase>, s: usize, end: usize| {
        if end > s + 1 {
            let b = timeline_phase(&clock, row, &pts[s], &pts[end], PhaseKind::Bridge);
            if b.start_ms.is_some() {
                phases.push(b);
            }
        }
    };
    for k in 0..pts.len().saturating_sub(1) {
        let phase = timeline_phase(&clock, row, &pts[k], &pts[k + 1], PhaseKind::Timeline);
        if phase.start_ms.is_none() {
            run_start.get_or_insert(k);
        } else if let Some(s) = run_start.take() {
            bridge(&mut phases, s, k);
        }
        phases.push(phase);
    }
    if let Some(s) = run_start {
        bridge(&mut phases, s, pts.len() - 1);
    }

    let t7 = clock.point(Event::T7).and_then(|p| p.t0);
    let t1 = clock.point(Event::T1);
    let latest = phases
        .iter()
        .filter_map(|p| p.end_ms)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    Timeline {
        end_to_end_ms: t7.map(|(v, _)| round3(v)),
        scale_ms: t7.map(|(v, _)| round3(v)).or(latest),
        t1_offset_ms: t1.and_then(|p| p.t0).map(|(v, _)| round3(v)),
        t1_offset_estimated: t1.and_then(|p| p.t0).is_some_and(|(_, e)| e),
        t1_offset_from: t1.map(|p| p.t0_text.clone()).unwrap_or_default(),
        phases,
    }
}

fn timeline_phase(clock: &Clock, row: &Row, a: &Point, b: &Point, kind: PhaseKind) -> Phase {
    let span = format!("{}→{}", a.event.short(), b.event.short());
    // The rule table's metric for the stretch, when it has one: its name and its value.
    let metric = clock.rules.metric_between(a.event, b.event);
    let name = match kind {
        PhaseKind::Bridge => {
            let inside: Vec<&str> = clock
                .points
                .iter()
                .filter(|p| p.event > a.event && p.event < b.event)
                .map(|p| p.event.short())
                .collect();
            format!("across {}", inside.join(", "))
        }
        _ => metric.map_or_else(|| span.clone(), |m| m.name.clone()),
    };
    let placed = match (a.t0, b.t0) {
        (Some((s, _)), Some((e, _))) => (Some(round3(s)), Some(round3(e))),
        _ => (None, None),
    };
    match clock.span(row, metric, a, b) {
        Ok((ms, estimated, from)) => Phase {
            name,
            kind,
            span,
            duration_ms: Some(round3(ms)),
            start_ms: placed.0,
            end_ms: placed.1,
            from,
            estimated,
            missing: None,
        },
        Err(why) => Phase {
            name,
            kind,
            span,
            duration_ms: None,
            start_ms: None,
            end_ms: None,
            from: String::new(),
            estimated: false,
            missing: Some(why),
        },
    }
}

// ---------------------------------------------------------------------------------------
// Rule conditions: the names they use, their elementary conditions, and a small evaluator
// for showing each condition's sides on one row. Whether a rule matched is read from the
// frame's `classes` (the polars evaluation); this only shows why.

/// Field, metric and parameter leaves, in order of first use (with repeats).
fn leaves<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
    match node {
        Node::Field(_) | Node::Metric(_) | Node::Param(_) => out.push(node),
        Node::Num(_) | Node::Str(_) | Node::Bool(_) => {}
        Node::Arith(_, a, b) | Node::Cmp(_, a, b) | Node::And(a, b) | Node::Or(a, b) => {
            leaves(a, out);
            leaves(b, out);
        }
        Node::Not(a) | Node::Neg(a) => leaves(a, out),
        Node::IsNull { expr, .. } | Node::Truth { expr, .. } => leaves(expr, out),
        Node::InList { expr, list, .. } => {
            leaves(expr, out);
            for l in list {
                leaves(l, out);
            }
        }
        Node::Call { args, .. } => {
            for a in args {
                leaves(a, out);
            }
        }
    }
}

/// The elementary conditions under AND / OR / NOT.
fn conditions<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
    match node {
        Node::And(a, b) | Node::Or(a, b) => {
            conditions(a, out);
            conditions(b, out);
        }
        Node::Not(a) => conditions(a, out),
        other => out.push(other),
    }
}

/// A rule's elementary conditions as its evidence lists them: in order, each once.
fn atoms(rule: &Rule) -> Vec<&Node> {
    let mut atoms = vec![];
    conditions(&rule.node, &mut atoms);
    let mut seen = std::collections::BTreeSet::new();
    atoms.retain(|a| seen.insert(sql(a)));
    atoms
}

/// The parts of a condition its evidence shows.
#[derive(Clone, Copy)]
enum Side {
    /// A comparison's left side, or the tested expression.
    Left,
    /// A comparison's right side.
    Right,
    /// The condition itself: true, false or null.
    Result,
}

/// The column of `checks_frame` holding `side` of rule `r`'s condition `k` (`atoms`).
fn check_column(r: usize, k: usize, side: Side) -> String {
    let side = match side {
        Side::Left => "left",
        Side::Right => "right",
        Side::Result => "result",
    };
    format!("__check_{r}_{k}_{side}")
}

/// Every rule's conditions evaluated on `rows` (the few explained), by the same compiled
/// expressions that classify the log: the evidence shown is the evaluation that matched.
fn checks_frame(rules: &RuleSet, rows: &DataFrame) -> PolarsResult<DataFrame> {
    let params = rules.param_values();
    let estimated = compile::estimated_metrics(rules);
    let c = Compiler::new(&params, &estimated);
    let mut exprs = vec![];
    for (r, rule) in rules.rules.iter().enumerate() {
        for (k, atom) in atoms(rule).into_iter().enumerate() {
            let (left, right) = match atom {
                Node::Cmp(_, a, b) => (a.as_ref(), Some(b.as_ref())),
                Node::IsNull { expr, .. }
                | Node::Truth { expr, .. }
                | Node::InList { expr, .. } => (expr.as_ref(), None),
                other => (other, None),
            };
            exprs.push(c.value(left).alias(check_column(r, k, Side::Left)));
            if let Some(right) = right {
                exprs.push(c.value(right).alias(check_column(r, k, Side::Right)));
            }
            exprs.push(c.value(atom).alias(check_column(r, k, Side::Result)));
        }
    }
    if exprs.is_empty() {
        return Ok(DataFrame::empty());
    }
    stats::collect(rows.clone().lazy().select(exprs))
}

fn cmp_text(op: Cmp) -> &'static str {
    match op {
        Cmp::Eq => "=",
        Cmp::NotEq => "<>",
        Cmp::Lt => "<",
        Cmp::LtEq => "<=",
        Cmp::Gt => ">",
        Cmp::GtEq => ">=",
    }
}

fn precedence(node: &Node) -> u8 {
    match node {
        Node::Or(..) => 1,
        Node::And(..) => 2,
        Node::Not(..) => 3,
        Node::Cmp(..) | Node::IsNull { .. } | Node::Truth { .. } | Node::InList { .. } => 4,
        Node::Arith(Arith::Add | Arith::Sub, ..) => 5,
        Node::Arith(Arith::Mul | Arith::Div, ..) => 6,
        Node::Neg(..) => 7,
        _ => 8,
    }
}

/// An expression back as SQL text (parenthesised only where precedence needs it).
pub fn sql(node: &Node) -> String {
    render(node, 0)
}

fn render(node: &Node, min: u8) -> String {
    let p = precedence(node);
    let s = match node {
        Node::Field(n) | Node::Metric(n) | Node::Param(n) => n.clone(),
        Node::Num(x) => exact(*x),
        Node::Str(s) => format!("'{}'", s.replace('\'', "''")),
        Node::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        Node::Arith(op, a, b) => {
            let o = match op {
                Arith::Add => "+",
                Arith::Sub => "-",
                Arith::Mul => "*",
                Arith::Div => "/",
            };
            format!("{} {o} {}", render(a, p), render(b, p + 1))
        }
        Node::Cmp(op, a, b) => format!("{} {} {}", render(a, 5), cmp_text(*op), render(b, 5)),
        Node::And(a, b) => format!("{} AND {}", render(a, p), render(b, p + 1)),
        Node::Or(a, b) => format!("{} OR {}", render(a, p), render(b, p + 1)),
        Node::Not(a) => format!("NOT {}", render(a, p)),
        Node::Neg(a) => format!("-{}", render(a, p + 1)),
        Node::IsNull { expr, negated } => format!(
            "{} IS {}NULL",
            render(expr, 5),
            if *negated { "NOT " } else { "" }
        ),
        Node::Truth {
            expr,
            value,
            negated,
        } => format!(
            "{} IS {}{}",
            render(expr, 5),
            if *negated { "NOT " } else { "" },
            if *value { "TRUE" } else { "FALSE" }
        ),
        Node::InList {
            expr,
            list,
            negated,
        } => format!(
            "{} {}IN ({})",
            render(expr, 5),
            if *negated { "NOT " } else { "" },
            list.iter()
                .map(|l| render(l, 0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Node::Call { func, args, .. } => format!(
            "{}({})",
            match func {
                Func::Coalesce => "coalesce",
                Func::Greatest => "greatest",
                Func::Least => "least",
                Func::Abs => "abs",
            },
            args.iter()
                .map(|a| render(a, 0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if p < min {
        format!("({s})")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(rel)
    }

    fn analysis(rules: &RuleSet, rel: &str) -> analyze::Collected {
        analyze::run(
            rules,
            &Options {
                inputs: vec![fixture(rel)],
                ..Default::default()
            },
        )
        .unwrap()
        .collected()
        .unwrap()
    }

    /// A rule's condition from its checks' results, in SQL's three-valued logic.
    fn combine(node: &Node, results: &BTreeMap<String, Option<bool>>) -> Option<bool> {
        match node {
            Node::And(a, b) => match (combine(a, results), combine(b, results)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Node::Or(a, b) => match (combine(a, results), combine(b, results)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Node::Not(a) => combine(a, results).map(|b| !b),
            atom => results[&sql(atom)],
        }
    }

    /// Each rule's checks, as `explain` shows them, combine into whether the rule matched
    /// on every row of the generated log and the class fixtures: the evidence shown is why
    /// the rule matched (and the checks are wired to their own conditions).
    #[test]
    fn evidence_agrees_with_the_compiled_rules() {
        let rules = RuleSet::gateway().unwrap();
        let mut files = vec![
            "generated/gateway.parquet".to_string(),
            "generated/gateway_other_string.jsonl".to_string(),
            "traces/traces.jsonl".to_string(),
        ];
        for entry in std::fs::read_dir(fixture("classes")).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".jsonl") {
                files.push(format!("classes/{name}"));
            }
        }
        files.sort();
        for rel in &files {
            let a = analysis(&rules, rel);
            let all = a.frame.clone().lazy();
            let ctx = Ctx::new(&rules, &a.frame, &a.locations, &all, &[]).unwrap();
            let mut matches = 0;
            for i in 0..a.frame.height() {
                let row = ctx.row(i);
                let tags = row.text("classes").unwrap();
                for (r, rule) in rules.rules.iter().enumerate() {
                    let tagged = tags.split(CLASSES_SEPARATOR).any(|t| t == rule.class);
                    let evidence = ctx.evidence(&row, r, tagged, false);
                    let results = evidence
                        .checks
                        .iter()
                        .map(|c| (c.expr.clone(), c.result.flag()))
                        .collect();
                    let shown = combine(&rule.node, &results).unwrap_or(false);
                    assert_eq!(shown, tagged, "{rel} row {i}, rule {}", rule.class);
                    matches += usize::from(tagged);
                }
            }
            assert!(matches > 0, "{rel}: no rule matched anywhere");
            if rel.starts_with("generated") {
                assert_eq!(a.frame.height(), 3000);
                assert!(matches >= 736, "{matches}");
            }
        }
    }

    #[test]
    fn conditions_print_back_as_sql() {
        let rules = RuleSet::gateway().unwrap();
        let r = rules.rule("upstream_headers_slow").unwrap();
        let mut atoms = vec![];
        conditions(&r.node, &mut atoms);
        let texts: Vec<String> = atoms.iter().map(|a| sql(a)).collect();
        assert_eq!(
            texts,
            [
                "header_wait_ms >= header_slow_ms",
                "header_wait_ms >= dominant_share * total_handler_ms",
                "is_stream IS NOT FALSE",
                "output_tokens IS NULL",
                "output_tokens / header_wait_ms * 1000 < slow_tps",
            ]
        );
        let m = rules.metrics.iter().find(|m| m.name == "upstream_span_ms");
        assert_eq!(
            sql(&m.unwrap().node),
            "coalesce(upstream_done_ms, total_handler_ms) - t1_offset_ms"
        );
    }

    #[test]
    fn exact_numbers() {
        assert_eq!(exact(5800.0), "5800");
        assert_eq!(exact(0.25), "0.25");
        assert_eq!(exact(106.89999999999998), "106.9");
        assert_eq!(exact(-0.0), "0");
    }
}
