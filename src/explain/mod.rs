//! `tracediag explain`: one request taken apart, or the worst requests of one class.
//!
//! For a request: its timeline as phases (each with the figures it was computed from, their
//! origin, and whether it rests on the estimated t1 offset), its class and tags, every rule
//! of the table with the values its condition used and the thresholds they met, and its
//! place among its cohort (same model and channel). For a class: its worst requests by the
//! rule's `look_at` figure. Everything here is plain data, asked of the plan: the rows
//! explained are the only ones collected, the cohorts are aggregates; `report::explain`
//! renders it.
//!
//! `result` holds that data; `request` explains one request (with `clock`, its timeline,
//! and `evidence`, its rules' conditions); `class` finds a class's worst requests.

use polars::prelude::*;
use serde::Serialize;

use crate::analyze::{self, Options};
use crate::error::{Error, Result};
use crate::ids;
use crate::plan::{self, Plan};
use crate::ruleset::types;
use crate::ruleset::RuleSet;
use crate::source;
use crate::stats;
use crate::summary::{BadRows, ClientIds, Window};

mod class;
mod clock;
mod evidence;
mod request;
mod result;

pub use class::class_worst;
pub use evidence::sql;
pub use request::{exact, request};
pub use result::*;

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
    Request(Box<RequestExplanation>),
    Class(Box<ClassExplanation>),
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
    let rules = &plan.rules.clone();
    let about = About::of(&plan, opts);
    match target {
        Target::Request { id, .. } => {
            request(rules, &plan, &about, id).map(|r| Explanation::Request(Box::new(r)))
        }
        Target::Class { class, limit } => class_worst(rules, &plan, &about, class, *limit)
            .map(|c| Explanation::Class(Box::new(c))),
    }
}

/// What an explanation says about the run besides its requests.
pub struct About {
    inputs: Vec<String>,
    mapped_columns: Vec<crate::summary::MappedColumn>,
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
            mapped_columns: crate::summary::MappedColumn::of(&opts.columns),
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::evidence::conditions;
    use super::request::Ctx;
    use super::*;
    use crate::ruleset::compile::CLASSES_SEPARATOR;
    use crate::ruleset::types::Node;

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
