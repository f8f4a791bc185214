//! Row-level data-quality checks. Each check adds a boolean `dq_<check>` column; the
//! summary counts them with example request ids. Nothing is fixed or dropped here:
//! a flagged row keeps its values (missing stays null) and is still classified.

use polars::prelude::*;

use crate::catalogue::{self, Kind, FIELDS};
use crate::ruleset::RuleSet;
use crate::source::{UNPARSED_PREFIX, UNREADABLE_COL};

/// One data-quality check.
#[derive(Debug, Clone)]
pub struct Check {
    /// Column suffix and JSON key: `dq_<name>`.
    pub name: &'static str,
    pub doc: &'static str,
}

pub const OUT_OF_ORDER: Check = Check {
    name: "out_of_order",
    doc: "timeline points out of order (t3 ≤ t4 ≤ t5 ≤ t6 ≤ t7 among those present)",
};
pub const NEGATIVE: Check = Check {
    name: "negative",
    doc: "a negative duration or time point",
};
pub const ZERO_AS_MISSING: Check = Check {
    name: "zero_as_missing",
    doc: "a time point of exactly 0 while a later point is positive: probably \"missing\" written as 0",
};
pub const TPS_MISMATCH: Check = Check {
    name: "tps_mismatch",
    doc: "logged visible_output_tps disagrees with output_tokens ÷ (t6 − t5) beyond tps_tolerance",
};
pub const DUPLICATE_ID: Check = Check {
    name: "duplicate_id",
    doc: "the request id appears more than once",
};
pub const UNPARSED: Check = Check {
    name: "unparsed",
    doc: "a value that could not be read as its field's type (kept as null)",
};

pub const UNREADABLE: Check = Check {
    name: "unreadable",
    doc: "a line or record that could not be read whole (kept with --on-bad-row keep; its unreadable parts null)",
};
pub const IMPLAUSIBLE: Check = Check {
    name: "implausible",
    doc: "a time above 24 hours (86,400,000 ms): no single API request takes that long",
};

/// Above this, a time in milliseconds is not a request's latency.
pub const MAX_PLAUSIBLE_MS: f64 = 86_400_000.0;

pub const ALL: [Check; 8] = [
    OUT_OF_ORDER,
    NEGATIVE,
    ZERO_AS_MISSING,
    TPS_MISMATCH,
    DUPLICATE_ID,
    UNPARSED,
    UNREADABLE,
    IMPLAUSIBLE,
];

pub fn column(check: &Check) -> String {
    format!("dq_{}", check.name)
}

fn any(exprs: Vec<Expr>) -> Expr {
    exprs
        .into_iter()
        .map(|e| e.fill_null(lit(false)))
        .reduce(|a, b| a.or(b))
        .unwrap_or(lit(false))
}

/// The name of the recomputed TPS metric the tps check compares with, when the rule
/// table defines it.
pub const RECOMPUTED_TPS_METRIC: &str = "visible_output_tps_recomputed";
pub const TPS_TOLERANCE_PARAM: &str = "tps_tolerance";

/// Whether the rule table lets the TPS cross-check run.
pub fn tps_check_available(rules: &RuleSet) -> bool {
    rules
        .metrics
        .iter()
        .any(|m| m.name == RECOMPUTED_TPS_METRIC)
        && rules.params.iter().any(|p| p.name == TPS_TOLERANCE_PARAM)
}

/// Adds the `dq_*` columns. Runs after the rule table (the TPS check uses its metric).
pub fn apply(rules: &RuleSet, lf: LazyFrame) -> PolarsResult<LazyFrame> {
    let points = catalogue::t0_points_in_order();
    let mut order = vec![];
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            order.push(col(a.name).gt(col(b.name)));
        }
    }

    let timing: Vec<&str> = FIELDS
        .iter()
        .filter(|f| f.kind.is_timing())
        .map(|f| f.name)
        .collect();
    let negative = any(timing.iter().map(|n| col(*n).lt(lit(0.0))).collect());
    let implausible = any(FIELDS
        .iter()
        .filter(|f| matches!(f.kind, Kind::Point { .. } | Kind::Phase))
        .map(|f| col(f.name).gt(lit(MAX_PLAUSIBLE_MS)))
        .collect());

    let all_points: Vec<(&str, catalogue::Event)> = FIELDS
        .iter()
        .filter_map(|f| match f.kind {
            Kind::Point { marks, .. } => Some((f.name, marks)),
            _ => None,
        })
        .collect();
    let mut zeros = vec![];
    for (name, marks) in &all_points {
        let later: Vec<Expr> = all_points
            .iter()
            .filter(|(_, m)| m > marks)
            .map(|(n, _)| col(*n).gt(lit(0.0)))
            .collect();
        zeros.push(col(*name).eq(lit(0.0)).and(any(later)));
    }

    let tps = if tps_check_available(rules) {
        let tol = rules.param_values()[TPS_TOLERANCE_PARAM];
        let logged = col("visible_output_tps");
        let re = col(RECOMPUTED_TPS_METRIC);
        let diff = logged.clone() - re.clone();
        let abs = when(diff.clone().lt(lit(0.0)))
            .then(lit(0.0) - diff.clone())
            .otherwise(diff);
        abs.gt(lit(tol) * re).fill_null(lit(false))
    } else {
        lit(false)
    };

    // The number of rows sharing this id (nulls never count as duplicates).
    let dup = col("request_id").is_not_null().and(
        col("request_id")
            .count()
            .over([col("request_id")])?
            .gt(lit(1)),
    );

    let unparsed = any(FIELDS
        .iter()
        .filter(|f| !matches!(f.kind, Kind::Label))
        .map(|f| col(format!("{UNPARSED_PREFIX}{}", f.name).as_str()))
        .collect());

    Ok(lf.with_columns([
        any(order).alias(column(&OUT_OF_ORDER).as_str()),
        negative.alias(column(&NEGATIVE).as_str()),
        any(zeros).alias(column(&ZERO_AS_MISSING).as_str()),
        tps.alias(column(&TPS_MISMATCH).as_str()),
        dup.fill_null(lit(false))
            .alias(column(&DUPLICATE_ID).as_str()),
        unparsed.alias(column(&UNPARSED).as_str()),
        col(UNREADABLE_COL).alias(column(&UNREADABLE).as_str()),
        implausible.alias(column(&IMPLAUSIBLE).as_str()),
    ]))
}
