//! `tracediag throughput`: input and output tokens per minute (TPM) and requests per
//! minute, per deployment (Azure Monitor exports) or per group (gateway request logs),
//! summarised as min / mean / p95 / max over the span.
//!
//! The estimate is conservative: it counts every processed prompt token, ignoring what
//! prompt caching saves. For gateway logs the minutes of the span with no request count as
//! zero (the log is complete: no request means no tokens); for Azure exports a minute the
//! service reported no data for stays out (absent is not zero).

use std::collections::BTreeMap;
use std::path::PathBuf;

use polars::prelude::*;
use serde::Serialize;

use crate::analyze::{self, iso_ms};
use crate::error::{Error, Result};
use crate::ids;
use crate::monitor;
use crate::plan;
use crate::ruleset::RuleSet;
use crate::source::{azure, azure_windows};
use crate::stats::{self, quantile7, support};
use crate::summary::{round3, tool, Overlap};
use crate::window;

/// min / mean / p95 / max of one per-minute series (p95: linear interpolation, type 7)
/// over `n` minutes. In JSON the p95 is null, with the reason, when n is too small for it
/// (`stats::support`).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(into = "StatJson")]
pub struct Stat {
    pub n: u64,
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub p95: Option<f64>,
    pub max: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Deployment, or the values of the `--by` columns.
    pub key: Vec<Option<String>>,
    /// Minutes with data (Azure) or in the span (gateway logs).
    pub minutes: u64,
    pub input_tpm: Stat,
    pub output_tpm: Stat,
    pub rpm: Stat,
    /// Gateway logs only: tokens served from the prompt cache, per minute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_tpm: Option<Stat>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    pub tool: String,
    pub source: &'static str,
    pub by: Vec<String>,
    /// Gateway logs: the `by` columns no input has (every request's value is null there);
    /// absent when every column was found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<String>,
    pub first_minute: Option<String>,
    pub last_minute: Option<String>,
    /// When a p95 is shown (`stats::support::RULE`).
    pub percentile_rule: &'static str,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
    /// Gateway logs: fields read from the columns the user named (`--map`, `--schema`);
    /// absent without.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mapped_columns: Vec<crate::summary::MappedColumn>,
    /// Gateway logs: input files holding the same requests (counted once per file), when
    /// most duplicate ids come from them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlapping_inputs: Option<Overlap>,
}

#[derive(Serialize)]
pub struct StatJson {
    pub n: u64,
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub p95: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p95_withheld: Option<String>,
    pub max: Option<f64>,
}

impl From<Stat> for StatJson {
    fn from(s: Stat) -> StatJson {
        StatJson {
            n: s.n,
            min: s.min,
            mean: s.mean,
            p95: support::shown(0.95, s.n, s.p95),
            p95_withheld: support::withheld(0.95, s.n),
            max: s.max,
        }
    }
}

pub fn stat(values: &[f64]) -> Stat {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Stat::default();
    }
    v.sort_by(f64::total_cmp);
    Stat {
        n: v.len() as u64,
        min: v.first().copied().map(round3),
        mean: Some(round3(v.iter().sum::<f64>() / v.len() as f64)),
        p95: quantile7(&v, 0.95).map(round3),
        max: v.last().copied().map(round3),
    }
}

fn col_f64(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<f64>>> {
    let c = df.column(name)?.cast(&DataType::Float64)?;
    let ca = c.f64()?;
    Ok((0..ca.len()).map(|i| ca.get(i)).collect())
}

/// Per deployment, from Azure Monitor exports: one value per window with data.
pub fn from_azure(paths: &[PathBuf], since: Option<i64>, until: Option<i64>) -> Result<Throughput> {
    let mut values = vec![];
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    let mut minutes_per_window = vec![];
    let mut names = vec![];
    for p in paths {
        let text =
            std::fs::read_to_string(p).map_err(|e| Error::input(p, format!("cannot read: {e}")))?;
        let export = monitor::parse_export(&text, p)?;
        let mut metrics: Vec<String> = export.values.iter().map(|v| v.metric.clone()).collect();
        metrics.sort();
        metrics.dedup();
        names.push((p.display().to_string(), metrics));
        minutes_per_window.extend(
            export
                .intervals
                .iter()
                .filter_map(|i| azure::interval_ms(i)),
        );
        for v in export.values {
            first = first.min(v.timestamp_ms);
            last = last.max(v.timestamp_ms);
            if since.is_none_or(|s| v.timestamp_ms >= s) && until.is_none_or(|u| v.timestamp_ms < u)
            {
                values.push(v);
            }
        }
    }
    // An incident window that holds no point of exports that have some.
    if values.is_empty() && first <= last {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let span = window::Span {
            first: Some(first),
            last: Some(last),
            in_window: 0,
        };
        if let Some(e) = window::empty(since, until, "window", &window::source_name(&names), span) {
            return Err(e);
        }
    }
    if let Some(e) = monitor::unmet(&names, azure_windows::Need::Throughput, "throughput") {
        return Err(e);
    }
    minutes_per_window.sort();
    minutes_per_window.dedup();
    // Totals per window become per-minute rates only when every file shares one interval.
    let window_minutes = match minutes_per_window.as_slice() {
        [ms] => *ms as f64 / 60_000.0,
        [] => 1.0,
        _ => return Err(Error::Usage(
            "the exports use different intervals; export them all with one interval (e.g. PT1M)"
                .into(),
        )),
    };
    let df = azure_windows::windows(&values)
        .map_err(|e| Error::Usage(format!("cannot build the windows: {e}")))?;
    let build = || -> PolarsResult<Throughput> {
        let dep = df.column("deployment")?.str()?.clone();
        let input = col_f64(&df, "prompt_tokens_total")?;
        let output = col_f64(&df, "generated_tokens_total")?;
        let req = col_f64(&df, "requests_total")?;
        let ts = df.column("window_start")?.cast(&DataType::Int64)?;
        let ts = ts.i64()?;
        // Per deployment: the input, output and request series.
        type Series = [Vec<f64>; 3];
        let mut per: BTreeMap<Option<String>, Series> = BTreeMap::new();
        for i in 0..df.height() {
            let e = per.entry(dep.get(i).map(str::to_string)).or_default();
            for (series, value) in e.iter_mut().zip([input[i], output[i], req[i]]) {
                if let Some(x) = value {
                    series.push(x / window_minutes);
                }
            }
        }
        let rows = per
            .into_iter()
            .map(|(k, [i, o, r])| Row {
                key: vec![k],
                minutes: i.len().max(o.len()).max(r.len()) as u64,
                input_tpm: stat(&i),
                output_tpm: stat(&o),
                rpm: stat(&r),
                cached_tpm: None,
            })
            .collect();
        Ok(Throughput {
            tool: tool(),
            source: "azure monitor",
            by: vec!["deployment".into()],
            absent: vec![],
            first_minute: ts.min().and_then(iso_ms),
            last_minute: ts.max().and_then(iso_ms),
            percentile_rule: support::RULE,
            rows,
            notes: vec![
                "input TPM counts every processed prompt token (ProcessedPromptTokens / InputTokens): conservative, prompt caching ignored".into(),
                "windows the service reported no data for are left out, not counted as zero".into(),
            ],
            mapped_columns: vec![],
            overlapping_inputs: None,
        })
    };
    build().map_err(|e| Error::Usage(format!("cannot compute throughput: {e}")))
}

/// Per group, from gateway request logs: per-request tokens summed per minute.
/// `opts` as for `analyze` (inputs, format, groups, window, bad-row policy). One streaming
/// group-by per (group, minute) over the plan: memory is bounded by groups × minutes.
pub fn from_gateway(opts: &analyze::Options) -> Result<Throughput> {
    let rules = RuleSet::gateway()?;
    let by = opts.by.as_slice();
    analyze::check(&rules, opts)?;
    let plan = plan::build(&rules, opts)?;
    let minute = col("timestamp")
        .cast(DataType::Int64)
        .floor_div(lit(60_000i64))
        .alias("__minute");
    // Token counts are integers: summed as integers, exactly.
    let tokens = |name: &str| col(name).cast(DataType::Int64).sum().alias(name);
    let mut keys: Vec<Expr> = by.iter().map(|b| col(b.as_str())).collect();
    keys.push(minute);
    // A request without a token count adds nothing to its minute's sum; say how many.
    // One group-by, so one consumer of the scan (two queries on one scan share it through
    // a buffer that waits for neither); requests without a timestamp fall in a minute of
    // their own (null), left out of the series below and counted as `no_time`.
    let nulls = |e: Expr, name: &str| e.cast(DataType::UInt64).sum().alias(name);
    let per_minute = plan
        .lf
        .clone()
        .group_by(keys)
        .agg([
            tokens("input_tokens"),
            tokens("output_tokens"),
            tokens("cached_tokens"),
            len().cast(DataType::Int64).alias("__requests"),
            nulls(col("input_tokens").is_null(), "missing_in"),
            nulls(col("output_tokens").is_null(), "missing_out"),
        ])
        .with_columns(stats::keys_as_text(by));
    let client_ids = plan.id_policy.record(ids::found(&plan.inputs));
    let df = stats::collect(per_minute).map_err(|e| plan.read_error(&e))?;
    let requests = || col("__requests").cast(DataType::UInt64);
    let missing = df
        .clone()
        .lazy()
        .select([
            requests().sum().alias("rows"),
            when(col("__minute").is_null())
                .then(requests())
                .otherwise(lit(0u64))
                .sum()
                .alias("no_time"),
            col("missing_in").sum(),
            col("missing_out").sum(),
        ])
        .collect()
        .map_err(|e| plan.read_error(&e))?;
    if missing
        .column("rows")
        .ok()
        .and_then(|c| c.u64().ok()?.get(0))
        == Some(0)
    {
        if let Some(e) = plan.empty_window()? {
            return Err(e);
        }
    }
    let build = || -> PolarsResult<Throughput> {
        let count = |name: &str| -> PolarsResult<u64> {
            Ok(missing.column(name)?.u64()?.get(0).unwrap_or(0))
        };
        let (no_time, missing_in, missing_out) = (
            count("no_time")?,
            count("missing_in")?,
            count("missing_out")?,
        );
        let keys = stats::key_columns(&df, by)?;
        let minutes = df.column("__minute")?.i64()?;
        let sums: Vec<&Int64Chunked> = [
            "input_tokens",
            "output_tokens",
            "__requests",
            "cached_tokens",
        ]
        .iter()
        .map(|c| df.column(c).and_then(|c| c.i64()))
        .collect::<PolarsResult<_>>()?;
        let mut per: BTreeMap<Vec<Option<String>>, BTreeMap<i64, [f64; 4]>> = BTreeMap::new();
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        for (i, key) in keys.into_iter().enumerate() {
            let Some(minute) = minutes.get(i) else {
                continue;
            };
            first = first.min(minute);
            last = last.max(minute);
            let m = per
                .entry(key)
                .or_default()
                .entry(minute)
                .or_insert([0.0; 4]);
            for (j, s) in sums.iter().enumerate() {
                m[j] = s.get(i).unwrap_or(0) as f64;
            }
        }
        let rows = per
            .into_iter()
            .map(|(key, minutes)| {
                // Every minute of the span counts: no request in a minute is zero tokens.
                let series = |j: usize| -> Vec<f64> {
                    (first..=last)
                        .map(|m| minutes.get(&m).map(|v| v[j]).unwrap_or(0.0))
                        .collect()
                };
                Row {
                    key,
                    minutes: (last - first + 1) as u64,
                    input_tpm: stat(&series(0)),
                    output_tpm: stat(&series(1)),
                    rpm: stat(&series(2)),
                    cached_tpm: Some(stat(&series(3))),
                }
            })
            .collect();
        let mut notes = vec![
            "tokens per minute = the requests' recorded token counts summed per minute; minutes of the span without requests count as zero".to_string(),
            "input TPM counts every input token: conservative, prompt caching ignored (cached tokens shown apart)".to_string(),
        ];
        if no_time > 0 {
            notes.push(format!(
                "{no_time} requests without a timestamp are left out"
            ));
        }
        if missing_in + missing_out > 0 {
            notes.push(format!(
                "{missing_in} requests have no input token count and {missing_out} no output token count: the sums cover the recorded counts only (a lower bound)"
            ));
        }
        // Groups keyed by a client identifier show its hashes: say how they were made.
        if let Some(ids) = &client_ids {
            if by.iter().any(|b| crate::catalogue::is_identifier(b)) {
                notes.push(format!("client ids: {}", ids.describe()));
            }
        }
        let minute_iso = |m: i64| iso_ms(m * 60_000);
        Ok(Throughput {
            tool: tool(),
            source: "gateway request logs",
            by: by.to_vec(),
            absent: analyze::absent_columns(&plan.inputs, by),
            first_minute: (first <= last).then(|| minute_iso(first)).flatten(),
            last_minute: (first <= last).then(|| minute_iso(last)).flatten(),
            percentile_rule: support::RULE,
            rows,
            notes,
            mapped_columns: crate::summary::MappedColumn::of(&opts.columns),
            overlapping_inputs: plan.overlap.clone(),
        })
    };
    build().map_err(|e| Error::Usage(format!("cannot compute throughput: {e}")))
}

/// Route by content, as `analyze` does. `opts.since`/`until` narrow to an incident window
/// (ms since the epoch, UTC; `until` excluded); without `opts.by`, gateway logs are
/// grouped by model.
pub fn run(opts: &analyze::Options) -> Result<Throughput> {
    let (paths, input_format, by) = (&opts.inputs, opts.input_format, &opts.by);
    let (since, until) = (opts.since, opts.until);
    let metrics: Vec<bool> = paths
        .iter()
        .map(|p| input_format.is_none() && monitor::is_metrics_export(p))
        .collect();
    if metrics.iter().any(|m| *m) {
        if !metrics.iter().all(|m| *m) {
            return Err(Error::Usage(
                "the inputs mix Azure Monitor metric exports and gateway request logs: run them separately".into(),
            ));
        }
        if !by.is_empty() {
            return Err(Error::Usage(
                "--by applies to gateway request logs; Azure throughput is per deployment".into(),
            ));
        }
        if !opts.columns.is_empty() {
            return Err(Error::Usage(
                "--map and --schema name a request log's columns; these are Azure Monitor metric exports".into(),
            ));
        }
        return from_azure(paths, since, until);
    }
    let mut opts = opts.clone();
    if opts.by.is_empty() {
        opts.by = vec!["model".to_string()];
    }
    from_gateway(&opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NumPy: np.percentile([0, 10, 20, 30, 1000], 95) == 806.0.
    #[test]
    fn p95_is_type_7() {
        assert_eq!(
            quantile7(&[0.0, 10.0, 20.0, 30.0, 1000.0], 0.95).map(round3),
            Some(806.0)
        );
        assert_eq!(stat(&[]), Stat::default());
        assert_eq!(stat(&[5.0]).p95, Some(5.0));
    }
}
