//! The main job: inputs → canonical frame → derived metrics and classes (rule table) →
//! data-quality flags → one collected frame, and the summary built from it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use polars::prelude::*;

use crate::catalogue::{self, Kind};
use crate::error::{Error, Result};
use crate::ids::{self, IdPolicy, Salt};
use crate::quality;
use crate::ruleset::compile::{self, ESTIMATED_SUFFIX};
use crate::ruleset::RuleSet;
use crate::source::{
    self, BadRowPolicy, Input, InputFormat, Locations, Origin, ROW_COL, SOURCE_COL, UNPARSED_PREFIX,
};
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
    /// What happens to a row that cannot be read whole or holds an unreadable value.
    pub on_bad_row: BadRowPolicy,
    /// Client identifiers: salted hashes or kept. `None` (the default): hashed with a
    /// random salt drawn when the run starts.
    pub ids: Option<IdPolicy>,
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
    /// Where each row is in its file (`source_file`, `source_row` → line or row).
    pub locations: Locations,
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
    let (lf, inputs) = source::load(&opts.inputs, opts.input_format, opts.on_bad_row)?;
    // Raw client identifiers go no further than the projection.
    let id_policy = match &opts.ids {
        Some(p) => p.clone(),
        None => IdPolicy::Salted(Salt::random()?),
    };
    let lf = ids::apply(lf, &id_policy);
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
    let locations = Locations::of(&inputs);
    let (frame, unparsed_skipped, skipped_examples) =
        unparsed_values(frame, &inputs, &locations, opts.on_bad_row)?;
    let mut summary =
        summarize(rules, &inputs, &locations, &frame, opts).map_err(|e| read_error(&inputs, &e))?;
    summary.client_ids = id_policy.record(ids::found(&inputs));
    summary.bad_rows = bad_rows(&inputs, opts.on_bad_row, unparsed_skipped, skipped_examples);
    Ok(Analysis {
        frame,
        summary,
        locations,
    })
}

/// Rows holding a value that did not read as its field's type, under the policy: with
/// `Keep` nothing changes (the value is null and `dq_unparsed` counts it); with `Error`
/// the first one is the error; with `Skip` they leave the frame, and their number and the
/// first few are returned.
fn unparsed_values(
    frame: DataFrame,
    inputs: &[Input],
    locations: &Locations,
    policy: BadRowPolicy,
) -> Result<(DataFrame, u64, Vec<String>)> {
    let flag = quality::column(&quality::UNPARSED);
    let polars_err = |e: PolarsError| read_error(inputs, &e);
    if policy == BadRowPolicy::Keep {
        return Ok((frame, 0, vec![]));
    }
    let flagged = frame
        .clone()
        .lazy()
        .filter(col(flag.as_str()))
        .collect()
        .map_err(polars_err)?;
    if flagged.height() == 0 {
        return Ok((frame, 0, vec![]));
    }
    let shown = if policy == BadRowPolicy::Error {
        1
    } else {
        BAD_ROW_EXAMPLES
    };
    let mut where_ = vec![];
    for i in 0..flagged.height().min(shown) {
        let file = flagged
            .column(SOURCE_COL)
            .and_then(|c| Ok(c.str()?.get(i).unwrap_or("?").to_string()))
            .map_err(polars_err)?;
        let row = flagged
            .column(ROW_COL)
            .and_then(|c| Ok(c.i64()?.get(i).unwrap_or(0)))
            .map_err(polars_err)?;
        let field = catalogue::FIELDS
            .iter()
            .find(|f| {
                flagged
                    .column(&format!("{UNPARSED_PREFIX}{}", f.name))
                    .ok()
                    .and_then(|c| c.bool().ok()?.get(i))
                    .unwrap_or(false)
            })
            .map(|f| f.name)
            .unwrap_or("?");
        where_.push((file, row, field));
    }
    if policy == BadRowPolicy::Error {
        let (file, row, field) = &where_[0];
        let input = inputs
            .iter()
            .find(|i| i.path.display().to_string() == *file);
        let found = input
            .and_then(|i| source::raw_value(i, field, *row))
            .map(|v| format!("found `{v}`"))
            .unwrap_or_else(|| "found a value that is not one".into());
        let expected = catalogue::field(field)
            .map(|f| match f.kind {
                Kind::Count | Kind::Code => "an integer",
                Kind::Timestamp => "a date-time (ISO 8601 in UTC, or a Unix time)",
                Kind::Flag => "true/false",
                _ => "a finite number",
            })
            .unwrap_or("a value of the field's type");
        let at = locations.describe(file, *row);
        return Err(Error::input(
            file.as_str(),
            format!(
                "{at}, column `{field}`: expected {expected}, {found} (--on-bad-row skip or keep reads the rest of the file)"
            ),
        ));
    }
    let kept = frame
        .lazy()
        .filter(col(flag.as_str()).not())
        .collect()
        .map_err(polars_err)?;
    let examples = where_
        .into_iter()
        .map(|(file, row, field)| {
            let at = locations.describe(&file, row);
            format!("{file}: {at}, column `{field}`: not a value of its type")
        })
        .collect();
    Ok((kept, flagged.height() as u64, examples))
}

/// What the summary says about bad rows: `None` when there were none.
/// `unparsed_skipped` rows (with their first `skipped_examples`) were left out by `Skip`.
fn bad_rows(
    inputs: &[Input],
    policy: BadRowPolicy,
    unparsed_skipped: u64,
    skipped_examples: Vec<String>,
) -> Option<BadRows> {
    let unreadable: u64 = inputs.iter().map(|i| i.bad_rows.len() as u64).sum();
    if unreadable == 0 && unparsed_skipped == 0 {
        return None;
    }
    let examples = inputs
        .iter()
        .flat_map(|i| {
            i.bad_rows
                .iter()
                .map(|b| format!("{}: {b}", i.path.display()))
        })
        .chain(skipped_examples)
        .take(BAD_ROW_EXAMPLES)
        .collect();
    Some(BadRows {
        policy: policy.name().to_string(),
        unreadable,
        unparsed_skipped,
        skipped: if policy == BadRowPolicy::Skip {
            unreadable + unparsed_skipped
        } else {
            0
        },
        examples,
    })
}

/// Fields some files of the run have and others lack, e.g. "upstream_headers_ms: in
/// a.csv, not in b.csv". Requests from the files that lack a field have it null.
fn schema_drift(inputs: &[Input]) -> Vec<String> {
    if inputs.len() < 2 {
        return vec![];
    }
    let mut out = vec![];
    for f in catalogue::FIELDS {
        let (has, lacks): (Vec<&Input>, Vec<&Input>) = inputs.iter().partition(|i| {
            i.mapping
                .fields
                .iter()
                .any(|(n, o, _)| n == f.name && *o != Origin::Absent)
        });
        if !has.is_empty() && !lacks.is_empty() {
            let names = |v: &[&Input]| {
                v.iter()
                    .map(|i| i.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.push(format!(
                "{}: in {}, not in {}",
                f.name,
                names(&has),
                names(&lacks)
            ));
        }
    }
    out
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
    locations: &Locations,
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
        // Sorted by id, or by file and row number (row 2 before row 10) where the id is
        // missing.
        let mut keyed: Vec<(String, i64, String)> = (0..fdf.height())
            .map(|i| -> PolarsResult<(String, i64, String)> {
                Ok(match fdf.column("request_id")?.str()?.get(i) {
                    Some(id) => (id.to_string(), 0, id.to_string()),
                    None => {
                        let file = fdf.column(SOURCE_COL)?.str()?.get(i).unwrap_or("?");
                        let row = fdf.column(ROW_COL)?.i64()?.get(i).unwrap_or(0);
                        let at = locations.describe(file, row);
                        (file.to_string(), row, format!("{file}:{at}"))
                    }
                })
            })
            .collect::<PolarsResult<_>>()?;
        keyed.sort();
        keyed.dedup();
        let examples: Vec<String> = keyed.into_iter().take(3).map(|(_, _, e)| e).collect();
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

    // A timing field held in two places (flat and nested) may disagree: say which is read.
    let mut shadowed: BTreeMap<(&str, String, String), Vec<String>> = BTreeMap::new();
    for input in inputs {
        for (field, read, ignored) in &input.mapping.shadowed {
            let ignored: Vec<String> = ignored.iter().map(|o| o.to_string()).collect();
            shadowed
                .entry((field, read.to_string(), ignored.join(" and ")))
                .or_default()
                .push(input.path.display().to_string());
        }
    }
    for ((field, read, ignored), files) in shadowed {
        let files = match files.len() {
            1..=3 => files.join(", "),
            n => format!("{} and {} more files", files[0], n - 1),
        };
        notes.push(format!(
            "{files}: {field} is both {read} and {ignored}; tracediag reads {read} (the first in its lookup order) and ignores the other"
        ));
    }

    let drifted = schema_drift(inputs);
    if !drifted.is_empty() {
        notes.push(format!(
            "schema drift between the files of this run: {}",
            drifted.join("; ")
        ));
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
                        from: o.to_string(),
                    })
                    .collect(),
            })
            .collect(),
        // Set by `run`, which holds the policy with its drawn salt.
        client_ids: None,
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
        bad_rows: None,
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
