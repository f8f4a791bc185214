//! The main job: inputs → canonical frame → derived metrics and classes (rule table) →
//! data-quality flags → one collected frame, and the summary built from it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use polars::prelude::*;

use crate::catalogue::{self, Kind};
use crate::error::{Error, Result};
use crate::quality;
use crate::ruleset::compile::{self, ESTIMATED_SUFFIX};
use crate::ruleset::RuleSet;
use crate::source::{self, Input, InputFormat, Origin, ROW_COL, SOURCE_COL};
use crate::stats::{self, Key};
use crate::summary::*;

/// What to analyse.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub inputs: Vec<PathBuf>,
    pub input_format: Option<InputFormat>,
    /// Label columns to group the summary by.
    pub by: Vec<String>,
    /// Keep requests received at or after this instant (ms since the Unix epoch, UTC).
    pub since: Option<i64>,
    /// Keep requests received before this instant.
    pub until: Option<i64>,
}

/// An instant given on the command line: `2026-11-02T10:00:00Z`, with or without the `Z`
/// or fractions, `2026-11-02 10:00`, or a date (`2026-11-02`, midnight), all UTC.
pub fn parse_instant(text: &str) -> Result<i64> {
    use chrono::{NaiveDate, NaiveDateTime};
    let t = text.trim().trim_end_matches(['Z', 'z']);
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(d) = NaiveDateTime::parse_from_str(t, fmt) {
            return Ok(d.and_utc().timestamp_millis());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(d
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc()
            .timestamp_millis());
    }
    Err(Error::Usage(format!(
        "`{text}` is not a UTC time: expected e.g. 2026-11-02T10:00:00Z, 2026-11-02 10:00 or 2026-11-02"
    )))
}

/// The `[since, until)` filter on a datetime column, if any bound is given.
pub fn time_filter(column: &str, since: Option<i64>, until: Option<i64>) -> Option<Expr> {
    let t = col(column).cast(DataType::Int64);
    let lower = since.map(|s| t.clone().gt_eq(lit(s)));
    let upper = until.map(|u| t.lt(lit(u)));
    match (lower, upper) {
        (Some(a), Some(b)) => Some(a.and(b)),
        (a, b) => a.or(b),
    }
}

pub struct Analysis {
    /// One row per request: labels, timing fields, metrics, class, classes, dq flags.
    pub frame: DataFrame,
    pub summary: Summary,
}

/// Columns that may be used with `--by`.
pub fn groupable(name: &str) -> bool {
    name == "class"
        || name == SOURCE_COL
        || catalogue::field(name).is_some_and(|f| {
            matches!(f.kind, Kind::Label | Kind::Code | Kind::Flag)
                && f.name != "request_id"
                && f.name != "trace_id"
        })
}

pub fn run(rules: &RuleSet, opts: &Options) -> Result<Analysis> {
    if rules.catalogue != catalogue::Catalogue::Gateway {
        return Err(Error::Usage(format!(
            "the rule table `{}` ({}) is written for the {} catalogue; gateway request logs need a gateway table",
            rules.name,
            rules.source,
            rules.catalogue.name()
        )));
    }
    for b in &opts.by {
        if !groupable(b) {
            let names: Vec<&str> = catalogue::FIELDS
                .iter()
                .map(|f| f.name)
                .chain(["class", SOURCE_COL])
                .filter(|n| groupable(n))
                .collect();
            return Err(Error::Usage(format!(
                "--by {b}: expected one of {}",
                names.join(", ")
            )));
        }
    }
    let (lf, inputs) = source::load(&opts.inputs, opts.input_format)?;
    let lf = compile::apply(rules, lf);
    // The incident window applies after the data-quality checks, so a duplicate id outside
    // the window still marks the one inside it.
    let lf = quality::apply(rules, lf).map(|lf| {
        match time_filter("timestamp", opts.since, opts.until) {
            Some(f) => lf.filter(f),
            None => lf,
        }
    });
    let frame = lf
        .and_then(|lf| lf.collect())
        .map_err(|e| read_error(&inputs, &e))?;
    let summary = summarize(rules, &inputs, &frame, opts).map_err(|e| read_error(&inputs, &e))?;
    Ok(Analysis { frame, summary })
}

fn read_error(inputs: &[Input], e: &PolarsError) -> Error {
    let path = if inputs.len() == 1 {
        inputs[0].path.display().to_string()
    } else {
        inputs
            .iter()
            .map(|i| i.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Error::input(
        path,
        format!("cannot read the request log: {}", source::polars_message(e)),
    )
}

const OUTCOME_ORDER: [&str; 4] = ["ok", "error", "cancelled", "timeout"];

fn is_failure() -> Expr {
    col("outcome")
        .is_not_null()
        .and(col("outcome").neq(lit("ok")))
}

fn summarize(
    rules: &RuleSet,
    inputs: &[Input],
    df: &DataFrame,
    opts: &Options,
) -> PolarsResult<Summary> {
    let by = opts.by.as_slice();
    let lf = df.clone().lazy();
    let rows = df.height() as u64;

    // Time span.
    let span = lf
        .clone()
        .select([
            col("timestamp").min().alias("min"),
            col("timestamp").max().alias("max"),
        ])
        .collect()?;
    let fmt_ts = |name: &str| -> PolarsResult<Option<String>> {
        let c = span.column(name)?.cast(&DataType::Int64)?;
        Ok(c.i64()?.get(0).and_then(iso_ms))
    };
    let time_span = match (fmt_ts("min")?, fmt_ts("max")?) {
        (Some(start), Some(end)) => Some(TimeSpan { start, end }),
        _ => None,
    };

    // Streaming and outcomes.
    let stream = stats::counts(lf.clone(), &["is_stream".to_string()])?;
    let get = |k: Option<&str>| {
        stream
            .get(&vec![k.map(str::to_string)])
            .copied()
            .unwrap_or(0)
    };
    let streaming = Streaming {
        streaming: get(Some("true")),
        non_streaming: get(Some("false")),
        unknown: get(None),
    };
    let oc = stats::counts(lf.clone(), &["outcome".to_string()])?;
    let mut outcomes: Vec<Count> = vec![];
    for o in OUTCOME_ORDER {
        if let Some(c) = oc.get(&vec![Some(o.to_string())]) {
            outcomes.push(Count {
                name: o.to_string(),
                count: *c,
            });
        }
    }
    for (k, c) in &oc {
        match &k[0] {
            Some(name) if !OUTCOME_ORDER.contains(&name.as_str()) => outcomes.push(Count {
                name: name.clone(),
                count: *c,
            }),
            _ => {}
        }
    }
    if let Some(c) = oc.get(&vec![None]) {
        outcomes.push(Count {
            name: "unknown".into(),
            count: *c,
        });
    }
    let failures = stats::trues(lf.clone(), &[], is_failure())?.values().sum();

    // Class table, in table order, then the default class.
    let class_key = vec!["class".to_string()];
    let class_counts = stats::counts(lf.clone(), &class_key)?;
    let class_fail = stats::trues(lf.clone(), &class_key, is_failure())?;
    let class_e2e = stats::percentiles(lf.clone(), &class_key, &["total_handler_ms".to_string()])?;
    let mut classes = vec![];
    let mut push_class =
        |class: &str, order: Option<i64>, look_at: &str, layer: &str, next: &str| {
            let key = vec![Some(class.to_string())];
            let count = class_counts.get(&key).copied().unwrap_or(0);
            classes.push(ClassRow {
                class: class.to_string(),
                order,
                count,
                share: if rows == 0 {
                    0.0
                } else {
                    round3(count as f64 / rows as f64)
                },
                failures: class_fail.get(&key).copied().unwrap_or(0),
                end_to_end_ms: class_e2e
                    .get(&key)
                    .map(|p| p[0].clone())
                    .unwrap_or_default(),
                look_at: look_at.to_string(),
                layer: layer.to_string(),
                next_check: next.to_string(),
            });
        };
    for r in &rules.rules {
        push_class(&r.class, Some(r.order), &r.look_at, &r.layer, &r.next_check);
    }
    push_class(&rules.default_class, None, "", "", "");

    // Named metrics.
    let metrics = metric_rows(rules, lf.clone(), &[])?
        .remove(&vec![])
        .unwrap_or_default();

    // Data quality.
    let mut quality = vec![];
    for check in quality::ALL {
        let colname = quality::column(&check);
        let flagged = lf.clone().filter(col(colname.as_str())).select([
            col("request_id"),
            col(SOURCE_COL),
            col(ROW_COL),
        ]);
        let fdf = flagged.collect()?;
        let mut examples: Vec<String> = (0..fdf.height())
            .map(|i| -> PolarsResult<String> {
                Ok(match fdf.column("request_id")?.str()?.get(i) {
                    Some(id) => id.to_string(),
                    None => format!(
                        "{}:row {}",
                        fdf.column(SOURCE_COL)?.str()?.get(i).unwrap_or("?"),
                        fdf.column(ROW_COL)?.i64()?.get(i).unwrap_or(0)
                    ),
                })
            })
            .collect::<PolarsResult<_>>()?;
        examples.sort();
        examples.dedup();
        examples.truncate(3);
        quality.push(QualityRow {
            check: check.name.to_string(),
            doc: check.doc.to_string(),
            count: fdf.height() as u64,
            examples,
        });
    }

    let mut notes = vec![];
    if !quality::tps_check_available(rules) {
        notes.push(format!(
            "the tps_mismatch check did not run: the rule table defines no `{}` metric or `{}` parameter",
            quality::RECOMPUTED_TPS_METRIC,
            quality::TPS_TOLERANCE_PARAM
        ));
    }
    // Judge by the values, not the mapping: a JSON-string `other` maps every timing field
    // but may hold none of them.
    let any_timing = catalogue::FIELDS
        .iter()
        .filter(|f| f.kind.is_timing())
        .map(|f| col(f.name).is_not_null())
        .reduce(|a, b| a.or(b))
        .unwrap_or(lit(false));
    let timed = stats::trues(lf.clone(), &[SOURCE_COL.to_string()], any_timing)?;
    for input in inputs
        .iter()
        .filter(|i| i.format == InputFormat::AzureRequestLog)
    {
        notes.push(format!(
            "{}: Azure OpenAI RequestResponse records carry one timing, durationMs (counted from the service receiving the request, not a gateway's t0), read as total_handler_ms; with no header or first-output time every request is insufficient_data, but its end-to-end percentiles stand",
            input.path.display()
        ));
    }
    for input in inputs {
        let path = input.path.display().to_string();
        if timed.get(&vec![Some(path.clone())]).copied().unwrap_or(0) == 0 {
            notes.push(format!(
                "{path}: no row has a timing field (looked for flat, dotted and `other.timing` fields); every request is insufficient_data"
            ));
        }
    }

    let groups = if by.is_empty() {
        None
    } else {
        Some(group_rows(rules, lf.clone(), by)?)
    };

    Ok(Summary {
        tool: tool(),
        rules: RulesInfo::of(rules),
        percentile_method: PERCENTILE_METHOD,
        inputs: inputs
            .iter()
            .map(|i| InputSummary {
                path: i.path.display().to_string(),
                format: i.format.to_string(),
                fields: i
                    .mapping
                    .found()
                    .map(|(f, o)| FieldSource {
                        field: f.to_string(),
                        from: match o {
                            Origin::Column(c) => format!("column `{c}`"),
                            Origin::Nested(p) => format!("nested `{}`", p.join(".")),
                            Origin::JsonString(n) => format!("JSON string `other` → timing.{n}"),
                            Origin::Absent => unreachable!("found() skips absent fields"),
                        },
                    })
                    .collect(),
            })
            .collect(),
        rows,
        time_span,
        streaming,
        outcomes,
        failures,
        classes,
        metrics,
        quality,
        notes,
        groups,
        window: (opts.since.is_some() || opts.until.is_some()).then(|| crate::summary::Window {
            since: opts.since.and_then(iso_ms),
            until: opts.until.and_then(iso_ms),
        }),
    })
}

fn metric_rows(
    rules: &RuleSet,
    lf: LazyFrame,
    keys: &[String],
) -> PolarsResult<BTreeMap<Key, Vec<MetricRow>>> {
    let reported = rules.reported_metrics();
    let names: Vec<String> = reported.iter().map(|m| m.name.clone()).collect();
    let pcts = stats::percentiles(lf.clone(), keys, &names)?;
    let counts = stats::counts(lf.clone(), keys)?;
    let est = compile::estimated_metrics(rules);
    let mut est_counts: BTreeMap<String, BTreeMap<Key, u64>> = BTreeMap::new();
    for m in &reported {
        if est.get(&m.name).copied().unwrap_or(false) {
            let c = stats::trues(
                lf.clone(),
                keys,
                col(format!("{}{ESTIMATED_SUFFIX}", m.name).as_str()),
            )?;
            est_counts.insert(m.name.clone(), c);
        }
    }
    let mut out = BTreeMap::new();
    for (key, p) in pcts {
        let rows = counts.get(&key).copied().unwrap_or(0);
        let v = reported
            .iter()
            .zip(p)
            .map(|(m, pct)| MetricRow {
                name: m.name.clone(),
                label: m.label.clone().unwrap_or_default(),
                nulls: rows - pct.n,
                estimated: est_counts
                    .get(&m.name)
                    .map(|c| c.get(&key).copied().unwrap_or(0)),
                pct,
            })
            .collect();
        out.insert(key, v);
    }
    Ok(out)
}

fn group_rows(rules: &RuleSet, lf: LazyFrame, by: &[String]) -> PolarsResult<Groups> {
    let counts = stats::counts(lf.clone(), by)?;
    let fails = stats::trues(lf.clone(), by, is_failure())?;
    let mut with_class = by.to_vec();
    with_class.push("class".to_string());
    let class_counts = stats::counts(lf.clone(), &with_class)?;
    let e2e = stats::percentiles(lf.clone(), by, &["total_handler_ms".to_string()])?;
    let mut metrics = metric_rows(rules, lf, by)?;
    let order = rules.class_order();
    let groups = counts
        .iter()
        .map(|(key, rows)| {
            let classes = order
                .iter()
                .filter_map(|c| {
                    let mut k = key.clone();
                    k.push(Some(c.to_string()));
                    class_counts.get(&k).map(|n| Count {
                        name: c.to_string(),
                        count: *n,
                    })
                })
                .collect();
            GroupRow {
                key: key.clone(),
                rows: *rows,
                failures: fails.get(key).copied().unwrap_or(0),
                end_to_end_ms: e2e.get(key).map(|p| p[0].clone()).unwrap_or_default(),
                classes,
                metrics: metrics.remove(key).unwrap_or_default(),
            }
        })
        .collect();
    Ok(Groups {
        by: by.to_vec(),
        groups,
    })
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC (`2026-06-10T14:00:04.123Z`); `None`
/// outside chrono's range.
pub fn iso_ms(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso_ms(0).unwrap(), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso_ms(1_781_100_011_000).unwrap(),
            "2026-06-10T14:00:11.000Z"
        );
    }
}
