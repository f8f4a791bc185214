//! The worst requests of one class, by the rule's `look_at` figure.

use polars::prelude::*;

use super::request::is_rate;
use super::request::Ctx;
use super::result::*;
use super::{check_class, polars_error, refuse_untimed, About};
use crate::error::Result;
use crate::plan::Plan;
use crate::ruleset::RuleSet;
use crate::source::{ROW_COL, SOURCE_COL};
use crate::stats;
use crate::summary::{round3, tool, RulesInfo};

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
        .unwrap_or_else(|| plan.end_to_end.clone());
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
                end_to_end_ms: row.get(&plan.end_to_end).number().map(round3),
            }
        })
        .collect();
    // The worst request is the one to look at next, on the same inputs.
    let next_command = worst
        .first()
        .and_then(|w| w.request_id.as_deref())
        .map(|id| {
            let mut words = vec!["tracediag".to_string(), "explain".to_string()];
            words.extend(about.inputs.iter().map(|p| shell_word(p)));
            words.extend(["--request-id".to_string(), shell_word(id)]);
            words.join(" ")
        });
    Ok(ClassExplanation {
        next_command,
        tool: tool(),
        rules: RulesInfo::of(rules),
        inputs: about.inputs.clone(),
        mapped_columns: about.mapped_columns.clone(),
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
        covers: rule.map(|r| r.covers.clone()).unwrap_or_default(),
        tell_apart: rule.map(|r| r.tell_apart.clone()).unwrap_or_default(),
        requests_in_class: count("in_class")?,
        requests: count("requests")?,
        limit,
        worst,
    })
}

/// A word as a POSIX shell reads it back: as it is when it holds only safe characters,
/// else in single quotes.
fn shell_word(w: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !w.is_empty() && w.chars().all(safe) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}
