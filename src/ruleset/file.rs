//! The on-disk shape of a rule file (TOML), deserialized with serde. Every string that
//! holds an expression or a name keeps its byte span, so errors can point at
//! file:line:column.

use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// Short name of the table, e.g. `gateway`.
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    /// The fields the expressions are written against: `gateway` (default) or `azure`.
    #[serde(default)]
    pub catalogue: Option<Spanned<String>>,
    /// Class given to a row that no rule matches.
    pub default_class: Spanned<String>,
    /// The fields that make an input this table's: among the shipped tables, an input is
    /// classified by the first whose `applies_to` names a field the input maps. Empty: any
    /// input (a user's table given with `--rules`).
    #[serde(default)]
    pub applies_to: Vec<Spanned<String>>,
    /// The field or metric that is a request's end-to-end time on this table's clock (the
    /// class table's percentiles); `total_handler_ms` when absent.
    #[serde(default)]
    pub end_to_end: Option<Spanned<String>>,
    #[serde(default)]
    pub params: Vec<ParamDef>,
    #[serde(default)]
    pub metrics: Vec<MetricDef>,
    #[serde(default)]
    pub rules: Vec<RuleDef>,
}

/// A named threshold, overridable from the CLI with `--set name=value`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamDef {
    pub name: Spanned<String>,
    pub value: f64,
    /// `ms`, `tps`, `ratio`, `tokens`, `count` or `pct`: decides what the parameter may be compared with.
    pub unit: Spanned<String>,
    pub doc: String,
}

/// A derived metric: one named expression, computed for every row.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricDef {
    pub name: Spanned<String>,
    pub expr: Spanned<String>,
    pub doc: String,
    /// Display name; a metric with a label is reported with p50/p95/p99.
    #[serde(default)]
    pub label: Option<String>,
}

/// One row of the ordered diagnosis table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    pub class: Spanned<String>,
    pub order: Spanned<i64>,
    pub when: Spanned<String>,
    /// The metric or field to look at first.
    pub look_at: Spanned<String>,
    pub layer: String,
    pub next_check: String,
    /// What it detects.
    pub detects: String,
    /// Why it matters.
    pub why: String,
    /// The finer classes of the gateway table this class cannot tell apart with the
    /// points its log has (a table of a coarser clock).
    #[serde(default)]
    pub covers: Vec<Spanned<String>>,
    /// What to log to tell the `covers` classes apart.
    #[serde(default)]
    pub tell_apart: String,
}
