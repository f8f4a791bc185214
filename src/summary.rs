//! Findings as plain data: what an analysis found, ready for any renderer. Everything
//! here is sorted and rounded before it is stored, so the same input gives byte-identical
//! output in every format.

use serde::Serialize;
use std::collections::BTreeSet;

pub const PERCENTILE_METHOD: &str =
    "linear interpolation between closest ranks (Hyndman & Fan type 7, NumPy's default)";

/// p50/p95/p99 of one figure over `n` non-null values, as computed. Serialized as
/// [`PctJson`]: a percentile the sample cannot support is null there, with the reason.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(into = "PctJson")]
pub struct Pct {
    pub n: u64,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
}

impl Pct {
    /// The percentiles with their quantiles: (name, q, value as computed).
    pub fn quantiles(&self) -> [(&'static str, f64, Option<f64>); 3] {
        [
            ("p50", 0.50, self.p50),
            ("p95", 0.95, self.p95),
            ("p99", 0.99, self.p99),
        ]
    }
}

/// A `Pct` as JSON: each percentile null when n is too small for it
/// (`stats::support`), and then `pNN_withheld` says why.
#[derive(Serialize)]
pub struct PctJson {
    pub n: u64,
    pub p50: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_withheld: Option<String>,
    pub p95: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p95_withheld: Option<String>,
    pub p99: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_withheld: Option<String>,
}

impl From<Pct> for PctJson {
    fn from(p: Pct) -> PctJson {
        use crate::stats::support::{shown, withheld};
        PctJson {
            n: p.n,
            p50: shown(0.50, p.n, p.p50),
            p50_withheld: withheld(0.50, p.n),
            p95: shown(0.95, p.n, p.p95),
            p95_withheld: withheld(0.95, p.n),
            p99: shown(0.99, p.n, p.p99),
            p99_withheld: withheld(0.99, p.n),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub tool: String,
    pub rules: RulesInfo,
    pub percentile_method: &'static str,
    /// When a percentile is shown (`stats::support::RULE`).
    pub percentile_rule: &'static str,
    pub inputs: Vec<InputSummary>,
    /// Fields read from the columns the user named (`--map`, `--schema`); absent without.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mapped_columns: Vec<MappedColumn>,
    /// How client identifiers were written; only when the input had one (`ids`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_ids: Option<ClientIds>,
    pub rows: u64,
    pub time_span: Option<TimeSpan>,
    pub streaming: Streaming,
    /// Outcome counts, ok / error / cancelled / timeout first, then others, then unknown.
    pub outcomes: Vec<Count>,
    /// Requests whose outcome is known and not ok. They are included in every figure.
    pub failures: u64,
    pub classes: Vec<ClassRow>,
    pub metrics: Vec<MetricRow>,
    /// Named metrics no input can compute (a field each needs is in no input), left out
    /// of `metrics`; absent when every one is there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metrics_left_out: Vec<LeftOut>,
    pub quality: Vec<QualityRow>,
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Groups>,
    /// The incident window (`--since`/`--until`), when one narrowed the run; requests
    /// without a timestamp are outside every window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Rows that could not be read whole, or (with `--on-bad-row skip`) held a value
    /// that is not of its field's type; absent when there were none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bad_rows: Option<BadRows>,
    /// Input files holding the same requests, when most duplicate ids come from them;
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlapping_inputs: Option<Overlap>,
    /// The peer tool's own figures (`--definitions`), beside tracediag's; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_figures: Option<crate::peer::Figures>,
}

/// Overlapping inputs: most duplicated request ids are whole-file copies, i.e. one file
/// of a pair holds only requests the other holds too, so every figure counts them twice.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Overlap {
    /// Every duplicated request id of the run.
    pub duplicate_ids: u64,
    /// Of them, the ids the pairs below share.
    pub whole_file_ids: u64,
    pub pairs: Vec<OverlapPair>,
}

/// Two input files one of which holds only requests (by id) the other holds too.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OverlapPair {
    pub a: String,
    pub b: String,
    /// The request ids both hold.
    pub shared_ids: u64,
    /// Distinct request ids in each file.
    pub a_ids: u64,
    pub b_ids: u64,
}

/// The most pairs the sentence names.
const NAMED_PAIRS: usize = 3;

impl Overlap {
    /// One sentence for every renderer, e.g. "3000 of 3000 duplicate ids are whole-file
    /// copies: a.parquet and b.parquet hold the same requests".
    pub fn sentence(&self) -> String {
        let mut pairs: Vec<String> = self
            .pairs
            .iter()
            .take(NAMED_PAIRS)
            .map(|p| {
                if p.a == p.b {
                    format!("{} is read twice", p.a)
                } else if p.shared_ids == p.a_ids && p.shared_ids == p.b_ids {
                    format!("{} and {} hold the same requests", p.a, p.b)
                } else if p.shared_ids == p.a_ids {
                    format!(
                        "every request of {} ({}) is also in {} ({})",
                        p.a, p.a_ids, p.b, p.b_ids
                    )
                } else {
                    format!(
                        "every request of {} ({}) is also in {} ({})",
                        p.b, p.b_ids, p.a, p.a_ids
                    )
                }
            })
            .collect();
        if self.pairs.len() > NAMED_PAIRS {
            pairs.push(format!(
                "and {} more pairs of files",
                self.pairs.len() - NAMED_PAIRS
            ));
        }
        format!(
            "{} of {} duplicate ids are whole-file copies: {}; every figure counts those requests once per file",
            self.whole_file_ids,
            self.duplicate_ids,
            pairs.join("; ")
        )
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BadRows {
    /// `--on-bad-row`: keep or skip (error stops the run).
    pub policy: String,
    /// Rows (lines, records) that could not be read whole.
    pub unreadable: u64,
    /// Rows left out because a value was not of its field's type (skip only).
    pub unparsed_skipped: u64,
    /// Rows left out of every figure (skip only; 0 with keep).
    pub skipped: u64,
    /// Up to five, in file and line order (for `compare`, the cohorts in turn): "file: line
    /// 3, column 27: message".
    pub examples: Vec<String>,
}

/// How many bad rows a summary lists.
pub const BAD_ROW_EXAMPLES: usize = 5;

impl BadRows {
    /// One account for several runs (the two cohorts of `compare`): counts added, at most
    /// `BAD_ROW_EXAMPLES` examples taken from the runs in turn (the first of each run, then
    /// the second of each, …) so that one run's bad rows cannot hide another's. `None` when
    /// no run had a bad row. The runs share one policy.
    pub fn merge(runs: impl IntoIterator<Item = BadRows>) -> Option<BadRows> {
        let mut runs = runs.into_iter();
        let mut all = runs.next()?;
        let mut examples = vec![std::mem::take(&mut all.examples).into_iter()];
        for b in runs {
            all.unreadable += b.unreadable;
            all.unparsed_skipped += b.unparsed_skipped;
            all.skipped += b.skipped;
            examples.push(b.examples.into_iter());
        }
        while all.examples.len() < BAD_ROW_EXAMPLES {
            let before = all.examples.len();
            all.examples
                .extend(examples.iter_mut().filter_map(|e| e.next()));
            if all.examples.len() == before {
                break;
            }
        }
        all.examples.truncate(BAD_ROW_EXAMPLES);
        Some(all)
    }

    /// One sentence for every renderer: how many, and what became of them.
    pub fn sentence(&self) -> String {
        let mut parts = vec![];
        if self.unreadable > 0 {
            parts.push(format!(
                "{} could not be read whole",
                crate::words::plural(self.unreadable, "row")
            ));
        }
        if self.unparsed_skipped > 0 {
            parts.push(format!(
                "{} held a value not of its field's type",
                crate::words::plural(self.unparsed_skipped, "row")
            ));
        }
        let fate = if self.policy == "skip" {
            format!("{} left out of every figure", self.skipped)
        } else {
            "kept, their unreadable parts null (dq_unreadable)".to_string()
        };
        format!(
            "Bad rows (--on-bad-row {}): {}; {}",
            self.policy,
            parts.join(", "),
            fate
        )
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Window {
    pub since: Option<String>,
    pub until: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RulesInfo {
    pub name: String,
    pub source: String,
    pub params: Vec<ParamValue>,
}

impl RulesInfo {
    /// The table and the parameter values a run used (after `--set`).
    pub fn of(rules: &crate::ruleset::RuleSet) -> RulesInfo {
        // `--set` is part of which table ran: every header that names the table says it.
        let source = match rules.overrides.as_slice() {
            [] => rules.source.clone(),
            set => format!("{}; --set {}", rules.source, set.join(" ")),
        };
        RulesInfo {
            name: rules.name.clone(),
            source,
            params: rules
                .params
                .iter()
                .map(|p| ParamValue {
                    name: p.name.clone(),
                    value: p.value,
                    unit: p.unit.clone(),
                })
                .collect(),
        }
    }
}

/// `tracediag <version>`, the first thing every report says.
pub fn tool() -> String {
    format!("tracediag {}", env!("CARGO_PKG_VERSION"))
}

#[derive(Debug, Clone, Serialize)]
pub struct ParamValue {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct InputSummary {
    pub path: String,
    pub format: String,
    /// Canonical fields found in the file, and where (column, nested path, JSON string).
    pub fields: Vec<FieldSource>,
    /// The rule table that classifies its requests, where a run has several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
}

impl InputSummary {
    /// What every renderer says after the file's name and format: how many canonical
    /// fields it maps and, where a run has several tables, the one it got.
    pub fn mapped(&self) -> String {
        let n = self.fields.len();
        match &self.table {
            Some(t) => format!("{n} canonical fields mapped; table {t}"),
            None => format!("{n} canonical fields mapped"),
        }
    }
}

/// How the client identifiers of the input (`user`, `token_name`, `client_ip`) were
/// written. The salt itself is never recorded.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClientIds {
    /// The identifier fields the input had, in catalogue order.
    pub fields: Vec<String>,
    /// [`ClientIds::SALTED`] or [`ClientIds::KEPT`].
    pub written_as: &'static str,
    /// [`ClientIds::GIVEN`] or [`ClientIds::RANDOM`]; absent when kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub salt: Option<&'static str>,
    /// The first 8 hex characters of SHA-256 of the salt: outputs with the same
    /// fingerprint have joinable hashes. Absent when kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub salt_fingerprint: Option<String>,
}

impl ClientIds {
    pub const SALTED: &'static str = "hmac_sha256";
    pub const KEPT: &'static str = "kept";
    pub const GIVEN: &'static str = "given";
    pub const RANDOM: &'static str = "random_per_run";

    /// One line for every renderer: `user, token_name → salted HMAC-SHA256 (…)`.
    pub fn describe(&self) -> String {
        let fields = self.fields.join(", ");
        let fingerprint = self.salt_fingerprint.as_deref().unwrap_or("?");
        match (self.written_as, self.salt) {
            (Self::KEPT, _) => format!("{fields} → kept as logged (--keep-ids)"),
            (_, Some(Self::GIVEN)) => format!(
                "{fields} → salted HMAC-SHA256 (given salt, fingerprint {fingerprint})"
            ),
            _ => format!(
                "{fields} → salted HMAC-SHA256 (random per-run salt, fingerprint {fingerprint}; --salt for stable hashes, --keep-ids to keep them)"
            ),
        }
    }
}

/// A field read from a column the user named (`--map`, `--schema`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MappedColumn {
    pub field: String,
    pub column: String,
    /// The unit its numbers are in (s, ms, us, ns); absent when none was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<&'static str>,
    /// `--map`, or `--schema FILE`.
    pub given_by: String,
}

impl MappedColumn {
    /// The user's mapping as the outputs record it.
    pub fn of(map: &crate::source::columns::ColumnMap) -> Vec<MappedColumn> {
        map.entries
            .iter()
            .map(|e| MappedColumn {
                field: e.field.to_string(),
                column: e.column.clone(),
                unit: e.unit.map(|u| u.name()),
                given_by: e.given.to_string(),
            })
            .collect()
    }

    /// The header's line for every renderer: "mapped by --map: first_sse_event_ms ←
    /// ttft_ms, total_handler_ms ← latency_s (s)"; `None` without a mapping.
    pub fn line(columns: &[MappedColumn]) -> Option<String> {
        crate::source::columns::describe(columns.iter().map(|c| {
            (
                c.given_by.clone(),
                c.field.clone(),
                c.column.clone(),
                c.unit,
            )
        }))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FieldSource {
    pub field: String,
    pub from: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TimeSpan {
    pub start: String,
    pub end: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Streaming {
    pub streaming: u64,
    pub non_streaming: u64,
    pub unknown: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub name: String,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    pub class: String,
    /// The rule table that gives it, where a run's inputs are classified by several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// Table order; null for the default class.
    pub order: Option<i64>,
    pub count: u64,
    pub share: f64,
    pub failures: u64,
    pub end_to_end_ms: Pct,
    pub look_at: String,
    pub layer: String,
    pub next_check: String,
    /// For `insufficient_data`: of its requests, how many lack each timing field its rule
    /// reads (only fields some of them lack), so the output says what is missing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<Missing>,
}

/// Requests of a class without a value in one field.
#[derive(Debug, Clone, Serialize)]
pub struct Missing {
    pub field: String,
    pub requests: u64,
}

/// A named metric a summary leaves out: no input can compute it.
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    pub name: String,
    pub label: String,
    /// What carries the timings it is built on (`catalogue::carried_by`): a gateway log,
    /// or the tools whose logs alone have them.
    pub carried_by: Vec<&'static str>,
    /// Whether no input is such a log (rather than one missing a field).
    pub other_logs: bool,
}

impl LeftOut {
    /// The metrics a plan leaves out, as a summary names them. `uncomputable` are their
    /// names (`Plan::uncomputable`), `tools` what carries the timings some input holds
    /// (`Plan::tools`).
    pub fn of(
        rules: &crate::ruleset::RuleSet,
        uncomputable: &[String],
        tools: &BTreeSet<&'static str>,
    ) -> Vec<LeftOut> {
        rules
            .reported_metrics()
            .into_iter()
            .filter(|m| uncomputable.contains(&m.name))
            .map(|m| {
                let carried_by: BTreeSet<&'static str> = rules
                    .fields_of(&m.name)
                    .iter()
                    .filter_map(|f| crate::catalogue::carried_by(f))
                    .collect();
                LeftOut {
                    name: m.name.clone(),
                    label: m.label.clone().unwrap_or_else(|| m.name.clone()),
                    other_logs: !carried_by.is_empty() && carried_by.is_disjoint(tools),
                    carried_by: carried_by.into_iter().collect(),
                }
            })
            .collect()
    }

    /// The lines a rendered summary says them in: by name where a field is missing from
    /// logs of their kind, as one count where no input is a log of their kind.
    pub fn lines(left_out: &[LeftOut]) -> Vec<String> {
        let mut out = vec![];
        let named: Vec<&str> = left_out
            .iter()
            .filter(|m| !m.other_logs)
            .map(|m| m.label.as_str())
            .collect();
        if !named.is_empty() {
            out.push(format!(
                "Not computable from these inputs (a field each needs is in no input): {}",
                named.join("; ")
            ));
        }
        let others: Vec<&LeftOut> = left_out.iter().filter(|m| m.other_logs).collect();
        if !others.is_empty() {
            let tools: BTreeSet<&str> = others
                .iter()
                .flat_map(|m| m.carried_by.iter().copied())
                .collect();
            let tools: Vec<&str> = tools.into_iter().collect();
            out.push(format!(
                "Left out: {} metric{} of figures only other logs carry ({}); no input is one",
                others.len(),
                if others.len() == 1 { "" } else { "s" },
                join_or(&tools)
            ));
        }
        out
    }
}

/// `a`, `a or b`, `a, b or c`.
fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricRow {
    pub name: String,
    pub label: String,
    #[serde(flatten)]
    pub pct: Pct,
    pub nulls: u64,
    /// Rows whose value is built on an estimate (the t1 offset from local phases).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct QualityRow {
    pub check: String,
    pub doc: String,
    pub count: u64,
    /// Up to three request ids (or file:row where the id is missing), sorted.
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Groups {
    pub by: Vec<String>,
    /// The `by` columns no input has (every request's value is null there); absent when
    /// every column was found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<String>,
    pub groups: Vec<GroupRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GroupRow {
    /// One value per `by` column; null where the log has none.
    pub key: Vec<Option<String>>,
    pub rows: u64,
    pub failures: u64,
    pub end_to_end_ms: Pct,
    /// Class counts in table order, non-zero only.
    pub classes: Vec<Count>,
    pub metrics: Vec<MetricRow>,
}

/// Round for display and stable serialization (3 decimals).
pub fn round3(x: f64) -> f64 {
    // `+ 0.0` turns a negative zero into zero, so it never prints as "-0".
    (x * 1000.0).round() / 1000.0 + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(policy: &str, unreadable: u64, examples: &[&str]) -> BadRows {
        BadRows {
            policy: policy.into(),
            unreadable,
            unparsed_skipped: 0,
            skipped: 0,
            examples: examples.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn merge_takes_examples_from_every_run_in_turn() {
        let a = run("keep", 6, &["a1", "a2", "a3", "a4", "a5", "a6"]);
        let b = run("keep", 2, &["b1", "b2"]);
        let m = BadRows::merge([a, b]).unwrap();
        assert_eq!(m.unreadable, 8);
        assert_eq!(m.examples, ["a1", "b1", "a2", "b2", "a3"]);
    }

    #[test]
    fn merge_of_one_run_keeps_its_order_and_of_none_is_none() {
        let a = run("skip", 2, &["a1", "a2"]);
        assert_eq!(BadRows::merge([a.clone()]), Some(a));
        assert_eq!(BadRows::merge(Vec::<BadRows>::new()), None);
    }
}
