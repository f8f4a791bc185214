//! Reading back what the emitted SQL wrote (`--from-sql-result`): a Parquet or CSV file of
//! `rules --emit sql` run on an engine, with the canonical columns and, per request, every
//! derived metric and its `_estimated` flag, `class` and `classes`. The plan takes those
//! from the file instead of computing them, once the file is shown to be such a result for
//! the loaded rule table: every column present (the source checks `carried`), every class
//! and tag one of the table's, `class` and `classes` as the table's order gives them (the
//! first match and every match), every metric a number and every flag true or false.
//! The table still gives the class order, layers, look_at and next checks.

use polars::prelude::*;

use crate::error::Error;
use crate::ruleset::compile::ESTIMATED_SUFFIX;
use crate::ruleset::compile::{chain, estimated_metrics, CLASSES_SEPARATOR, CLASS_INDEX};
use crate::ruleset::RuleSet;
use crate::source::{Locations, CARRIED_PREFIX, ROW_COL, SOURCE_COL};
use crate::stats;

/// What a carried column holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holds {
    Metric,
    Estimated,
    Class,
    Classes,
}

/// The columns such a result holds besides the canonical ones, in the query's order.
fn columns(rules: &RuleSet) -> Vec<(String, Holds)> {
    let est = estimated_metrics(rules);
    let off = rules.adapter_metrics();
    let mut cols = vec![];
    for m in rules.metrics.iter().filter(|m| !off.contains(&m.name)) {
        cols.push((m.name.clone(), Holds::Metric));
        if est[&m.name] {
            cols.push((format!("{}{ESTIMATED_SUFFIX}", m.name), Holds::Estimated));
        }
    }
    cols.push(("class".to_string(), Holds::Class));
    cols.push(("classes".to_string(), Holds::Classes));
    cols
}

/// The names of those columns: what every input must hold.
pub fn carried(rules: &RuleSet) -> Vec<String> {
    columns(rules).into_iter().map(|(n, _)| n).collect()
}

fn carried_col(name: &str) -> Expr {
    col(format!("{CARRIED_PREFIX}{name}").as_str())
}

/// A flag as written: a boolean column, or CSV text `true`/`false` (any other value null).
fn flag(e: Expr) -> Expr {
    let text = e.cast(DataType::String).str().to_lowercase();
    when(text.clone().eq(lit("true")))
        .then(lit(true))
        .when(text.eq(lit("false")))
        .then(lit(false))
        .otherwise(lit(NULL).cast(DataType::Boolean))
}

/// A cell with no value: null, or blank text (a CSV export's empty field, as Trino's CLI
/// writes NULL).
fn missing(e: Expr) -> Expr {
    e.clone().is_null().or(e
        .cast(DataType::String)
        .str()
        .strip_chars(lit(NULL))
        .eq(lit(""))
        .fill_null(lit(false)))
}

/// Whether the `classes` list holds `name`.
fn has_tag(tags: &Expr, name: &str) -> Expr {
    tags.clone()
        .list()
        .contains(lit(name), false)
        .fill_null(lit(false))
}

/// Check every row of `lf` (the loaded inputs, with the carried columns), in one streaming
/// query: the first row that is not what the emitted query writes for `rules` is the
/// error (`Some`), naming its file, row and column.
pub fn check(
    rules: &RuleSet,
    lf: &LazyFrame,
    locations: &Locations,
) -> PolarsResult<Option<Error>> {
    let names = rules.class_order();
    let class = carried_col("class").cast(DataType::String);
    let classes = carried_col("classes").cast(DataType::String);
    let tags = classes.clone().str().split(lit(CLASSES_SEPARATOR));
    let known = Series::new("known".into(), names.clone());
    let class_ok = stats::member_of(class.clone(), &known).fill_null(lit(false));
    // Every tag known: as many of the table's classes in the list as the list is long.
    let found = names
        .iter()
        .map(|n| has_tag(&tags, n).cast(DataType::UInt32))
        .reduce(|a, b| a + b)
        .unwrap_or(lit(0u32));
    let tags_ok = found
        .eq(tags.clone().list().len().cast(DataType::UInt32))
        .fill_null(lit(false));
    // What the table's order makes of those tags: every matching rule in order (the
    // default alone where none), the first of them the class.
    let rule_tags: Vec<Expr> = rules
        .rules
        .iter()
        .map(|r| {
            when(has_tag(&tags, &r.class))
                .then(lit(r.class.as_str()))
                .otherwise(lit(NULL).cast(DataType::String))
        })
        .collect();
    let default = lit(rules.default_class.as_str());
    let expected_classes = if rule_tags.is_empty() {
        default.clone()
    } else {
        let joined = concat_str(rule_tags, CLASSES_SEPARATOR, true);
        when(joined.clone().eq(lit("")))
            .then(default.clone())
            .otherwise(joined)
    };
    let expected_class = chain(
        rules
            .rules
            .iter()
            .map(|r| (has_tag(&tags, &r.class), lit(r.class.as_str()))),
        default,
    );
    let ordered = classes
        .clone()
        .eq(expected_classes)
        .and(class.clone().eq(expected_class.clone()))
        .fill_null(lit(false));

    let mut values: Vec<(String, Holds, Expr)> = vec![];
    for (name, holds) in columns(rules) {
        let raw = carried_col(&name);
        let read = match holds {
            Holds::Estimated => flag(raw.clone()),
            Holds::Metric => raw.clone().cast(DataType::Float64),
            Holds::Class | Holds::Classes => continue,
        };
        values.push((name, holds, missing(raw).or(read.is_not_null())));
    }

    let mut checks = vec![
        ("__class_ok".to_string(), class_ok),
        ("__tags_ok".to_string(), tags_ok),
        ("__ordered".to_string(), ordered),
    ];
    checks.extend(
        values
            .iter()
            .map(|(n, _, ok)| (format!("__ok_{n}"), ok.clone())),
    );
    let all_ok = checks
        .iter()
        .map(|(_, e)| e.clone())
        .reduce(|a, b| a.and(b))
        .expect("three checks at least");
    let mut shown = vec![
        col(SOURCE_COL),
        col(ROW_COL),
        class.alias("__class_text"),
        classes.alias("__classes_text"),
        expected_class.alias("__expected_class"),
    ];
    shown.extend(checks.iter().map(|(n, e)| e.clone().alias(n.as_str())));
    shown.extend(values.iter().map(|(n, _, _)| {
        carried_col(n)
            .cast(DataType::String)
            .alias(format!("__value_{n}").as_str())
    }));
    let first = stats::collect(lf.clone().filter(all_ok.not()).select(shown).limit(1))?;
    if first.height() == 0 {
        return Ok(None);
    }
    let text = |c: &str| -> Option<String> {
        first.column(c).ok()?.str().ok()?.get(0).map(str::to_string)
    };
    let ok = |c: &str| -> bool {
        first
            .column(c)
            .ok()
            .and_then(|c| c.bool().ok()?.get(0))
            .unwrap_or(false)
    };
    let file = text(SOURCE_COL).unwrap_or_default();
    let row = first
        .column(ROW_COL)
        .ok()
        .and_then(|c| c.i64().ok()?.get(0))
        .unwrap_or(0);
    let at = locations.describe(&file, row);
    let table = format!("rule table `{}` ({})", rules.name, rules.source);
    let hint = format!(
        "its classes: {}; --from-sql-result reads what `tracediag rules --emit sql` wrote from the same table",
        names.join(", ")
    );
    let shown = |v: Option<String>| v.map_or("null".to_string(), |v| format!("`{v}`"));
    let message = if !ok("__class_ok") {
        format!(
            "{at}, column `class`: {} is not a class of {table} ({hint})",
            shown(text("__class_text"))
        )
    } else if !ok("__tags_ok") {
        let classes = text("__classes_text");
        let unknown = classes.as_deref().and_then(|c| {
            c.split(CLASSES_SEPARATOR)
                .find(|t| !names.contains(t))
                .map(str::to_string)
        });
        match unknown {
            Some(t) => format!(
                "{at}, column `classes`: `{t}` (in {}) is not a class of {table} ({hint})",
                shown(classes)
            ),
            None => format!(
                "{at}, column `classes`: {} names a class twice or is empty ({hint})",
                shown(classes)
            ),
        }
    } else if !ok("__ordered") {
        format!(
            "{at}: class {} with classes {}, where {table} gives class {} (the first of the classes in its order, the default class only alone): was the query emitted from another version of the table?",
            shown(text("__class_text")),
            shown(text("__classes_text")),
            shown(text("__expected_class"))
        )
    } else {
        let (name, holds, _) = values
            .iter()
            .find(|(n, _, _)| !ok(&format!("__ok_{n}")))
            .expect("a check failed");
        let expected = if *holds == Holds::Estimated {
            "true or false"
        } else {
            "a number"
        };
        format!(
            "{at}, column `{name}`: expected {expected}, found {}",
            shown(text(&format!("__value_{name}")))
        )
    };
    Ok(Some(Error::input(file, message)))
}

/// Takes every metric, its `_estimated` flag, `class` and `classes` from the carried
/// columns (checked by `check`), with the class index the aggregates group on, and drops
/// the carried columns. The metrics the query leaves out (`adapter_metrics`) are null.
pub fn apply(rules: &RuleSet, lf: LazyFrame) -> LazyFrame {
    let mut cols = vec![];
    let carried = columns(rules);
    for (name, holds) in &carried {
        let raw = carried_col(name);
        cols.push(
            match holds {
                Holds::Class | Holds::Classes => raw.cast(DataType::String),
                Holds::Estimated => flag(raw).fill_null(lit(false)),
                Holds::Metric => raw.cast(DataType::Float64),
            }
            .alias(name.as_str()),
        );
    }
    let index = chain(
        rules.class_order().into_iter().enumerate().map(|(i, n)| {
            (
                carried_col("class").cast(DataType::String).eq(lit(n)),
                lit(i as u32),
            )
        }),
        lit(NULL).cast(DataType::UInt32),
    );
    cols.push(index.alias(CLASS_INDEX));
    // The metrics the query leaves out are null here, as in a log without their fields.
    for name in rules.adapter_metrics() {
        cols.push(lit(NULL).cast(DataType::Float64).alias(name.as_str()));
    }
    let dropped: Vec<String> = carried
        .iter()
        .map(|(n, _)| format!("{CARRIED_PREFIX}{n}"))
        .collect();
    lf.with_columns(cols).drop(by_name(dropped, true, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two rows of a result for the gateway table, both `normal`, with `change` applied
    /// to the second row's carried columns (name → text; every other value as written).
    fn check_second(change: &[(&str, &str)]) -> Option<String> {
        let rules = RuleSet::gateway().unwrap();
        let mut cols: Vec<Column> = vec![
            Column::new(SOURCE_COL.into(), ["r.csv", "r.csv"]),
            Column::new(ROW_COL.into(), [1i64, 2]),
        ];
        for (name, holds) in columns(&rules) {
            let name_in = format!("{CARRIED_PREFIX}{name}");
            let written = match holds {
                Holds::Metric => "1.5",
                Holds::Estimated => "false",
                Holds::Class | Holds::Classes => "normal",
            };
            let second = change
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(written, |(_, v)| *v);
            cols.push(Column::new(name_in.into(), [written, second]));
        }
        let lf = DataFrame::new_infer_height(cols).unwrap().lazy();
        check(&rules, &lf, &Locations::default())
            .unwrap()
            .map(|e| e.to_string())
    }

    #[test]
    fn a_result_as_the_query_writes_it_passes() {
        assert_eq!(check_second(&[]), None);
        // Blank is missing (CSV), not a bad number or flag.
        assert_eq!(
            check_second(&[("prefill_ms", " "), ("prefill_ms_estimated", "")]),
            None
        );
        let matched = [
            ("class", "upstream_headers_slow"),
            ("classes", "upstream_headers_slow;prefill_slow"),
        ];
        assert_eq!(check_second(&matched), None);
    }

    #[test]
    fn a_class_that_is_not_the_first_of_its_tags_in_table_order_is_an_error() {
        let e = check_second(&[("class", "auth_slow")]).unwrap();
        assert!(
            e.starts_with("r.csv: row 2: class `auth_slow` with classes `normal`, where rule table `gateway` (rules/gateway.toml) gives class `normal`"),
            "{e}"
        );
        let e = check_second(&[
            ("class", "prefill_slow"),
            ("classes", "prefill_slow;upstream_headers_slow"),
        ])
        .unwrap();
        assert!(e.contains("gives class `upstream_headers_slow`"), "{e}");
        let e = check_second(&[("classes", "normal;prefill_slow")]).unwrap();
        assert!(e.contains("with classes `normal;prefill_slow`"), "{e}");
    }

    #[test]
    fn unknown_and_repeated_tags_are_errors() {
        let e = check_second(&[("classes", "prefill_slow;slow")]).unwrap();
        assert!(
            e.starts_with("r.csv: row 2, column `classes`: `slow` (in `prefill_slow;slow`) is not a class of rule table `gateway`"),
            "{e}"
        );
        let e = check_second(&[("classes", "normal;normal")]).unwrap();
        assert!(
            e.starts_with(
                "r.csv: row 2, column `classes`: `normal;normal` names a class twice or is empty"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_metric_or_flag_not_of_its_type_is_an_error() {
        assert_eq!(
            check_second(&[("prefill_ms", "fast")]).as_deref(),
            Some("r.csv: row 2, column `prefill_ms`: expected a number, found `fast`")
        );
        assert_eq!(
            check_second(&[("prefill_ms_estimated", "yes")]).as_deref(),
            Some(
                "r.csv: row 2, column `prefill_ms_estimated`: expected true or false, found `yes`"
            )
        );
    }
}
