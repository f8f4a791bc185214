//! The Azure Monitor job: metric exports → one row per (deployment, window) → baselines
//! and the latency-formula check → the `azure` rule table → a class for every window, and
//! a summary per deployment.
//!
//! "Up" always means against a baseline a user can see: by default the median of the same
//! deployment's previous `baseline_windows` non-excursion windows (a window whose figure
//! was `rise` times above or below its own baseline does not feed later baselines, so a
//! long episode never becomes its own normal), or, with `--baseline FILE`, the median of
//! every window of that deployment in another export. Every figure's baseline is written
//! next to it (`<field>_baseline`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::statistics::Statistics;

use crate::analyze::iso_ms;
use crate::catalogue::{Catalogue, AZURE_FIELDS, BASELINE_SUFFIX};
use crate::error::{Error, Result};
use crate::output::{self, OutFormat};
use crate::ruleset::{compile, RuleSet};
use crate::source::azure::{self, MetricError};
use crate::source::{azure_logs, azure_windows};
use crate::summary::{round3, tool, Count, RulesInfo};
use crate::window;

/// The rule-table parameter whose value marks a window as an excursion (kept out of later
/// baselines): a figure at or above `rise ×` its baseline, or at or below `baseline ÷ rise`.
pub const EXCURSION_PARAM: &str = "rise";

/// A residual p-value below this keeps the window out of later reference residuals.
const SIGNIFICANT: f64 = 0.01;

/// What to analyse, and against what.
#[derive(Debug, Clone)]
pub struct Options {
    pub inputs: Vec<PathBuf>,
    /// Another export (one or more files) whose per-deployment medians are the baseline.
    pub baseline: Vec<PathBuf>,
    /// Trailing windows in the default baseline.
    pub baseline_windows: usize,
    /// Fewest non-null earlier windows a baseline needs; fewer gives a null baseline.
    pub min_baseline_windows: usize,
    /// Report only windows starting at or after this instant (ms since the epoch, UTC).
    /// Baselines still use the earlier windows.
    pub since: Option<i64>,
    /// Report only windows starting before this instant.
    pub until: Option<i64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            inputs: vec![],
            baseline: vec![],
            baseline_windows: 60,
            min_baseline_windows: 10,
            since: None,
            until: None,
        }
    }
}

pub struct Analysis {
    /// One row per (deployment, window): figures, baselines, formula check, classes.
    pub frame: DataFrame,
    pub summary: Summary,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub tool: String,
    pub rules: RulesInfo,
    pub baseline: String,
    pub inputs: Vec<InputSummary>,
    pub windows: u64,
    pub time_span: Option<crate::summary::TimeSpan>,
    pub classes: Vec<ClassRow>,
    pub deployments: Vec<Deployment>,
    /// Runs of consecutive windows of one deployment with the same class (not normal).
    pub episodes: Vec<Episode>,
    /// Metrics the service reported as failed inside an HTTP 200 (`errorCode`).
    pub metric_errors: Vec<MetricErrorRow>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InputSummary {
    pub path: String,
    pub values: u64,
    pub metrics: Vec<String>,
    pub intervals: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    pub class: String,
    pub order: Option<i64>,
    pub windows: u64,
    pub share: f64,
    pub look_at: String,
    pub layer: String,
    pub next_check: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricErrorRow {
    pub resource: String,
    pub metric: String,
    pub code: String,
    pub message: String,
}

/// One deployment's windows: class counts, median figures, and the latency-formula fit.
#[derive(Debug, Clone, Serialize)]
pub struct Deployment {
    pub resource: String,
    pub deployment: String,
    pub windows: u64,
    pub classes: Vec<Count>,
    pub median_ttlt_ms: Option<f64>,
    pub median_time_to_response_ms: Option<f64>,
    pub median_tbt_ms: Option<f64>,
    /// Prompt and generated tokens per request.
    pub median_tokens_per_request: Option<f64>,
    /// Generated (output) tokens per request: the tokens of the latency formula.
    pub median_generated_tokens_per_request: Option<f64>,
    /// Requests per window.
    pub median_requests: Option<f64>,
    /// Requests over all the deployment's windows.
    pub requests: Option<f64>,
    /// 429 answers over all the deployment's windows.
    pub requests_429: Option<f64>,
    pub max_ptu_utilization_pct: Option<f64>,
    pub formula: Option<Fit>,
}

/// Consecutive windows of one deployment that got the same class, with the figure the
/// class says to look at and its baseline (medians over the run): the numbers behind it.
#[derive(Debug, Clone, Serialize)]
pub struct Episode {
    pub deployment: String,
    pub class: String,
    pub first_window: String,
    pub last_window: String,
    pub windows: u64,
    pub look_at: String,
    pub value: Option<f64>,
    pub baseline: Option<f64>,
}

/// Least-squares fit of observed TTLT on the formula's prediction
/// (TTFT + TBT × generated tokens per request): a slope near 1 and a small residual say
/// the formula describes this deployment, so a TTLT rise it explains is not a regression.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Fit {
    pub windows: u64,
    pub slope: f64,
    pub intercept_ms: f64,
    pub r_squared: f64,
    pub residual_mean_ms: f64,
    pub residual_sd_ms: f64,
}

/// Whether a file looks like an Azure Monitor metrics export (so `analyze` can route it).
pub fn is_metrics_export(path: &Path) -> bool {
    // Metric exports are single JSON documents or Log Analytics CSVs; never parse a log
    // file twice to find out.
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("csv") => {
            // The header decides; read only the start of the file.
            let mut head = vec![0u8; 64 * 1024];
            let n = std::fs::File::open(path)
                .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
                .unwrap_or(0);
            azure_logs::looks_like_azure_metrics_rows(&String::from_utf8_lossy(&head[..n]))
        }
        None | Some("json") => {
            let Ok(text) = std::fs::read_to_string(path) else {
                return false;
            };
            let t = text.trim_start_matches('\u{feff}').trim_start();
            (t.starts_with('{') || t.starts_with('['))
                && (azure_logs::looks_like_azure_metrics_rows(&text)
                    || azure::parse_metrics(&text, path).is_ok())
        }
        _ => false,
    }
}

/// Parse one export: Metrics REST / CLI / getBatch JSON, or Log Analytics `AzureMetrics`
/// rows (CSV or JSON).
pub fn parse_export(text: &str, path: &Path) -> Result<azure::MetricsExport> {
    if azure_logs::looks_like_azure_metrics_rows(text) {
        azure_logs::parse_azure_metrics_rows(text, path)
    } else {
        azure::parse_metrics(text, path)
    }
}

/// The refusal of a run none of whose exports holds a metric `need` asks for: it names
/// each file, that it was read as an Azure Monitor metrics export, the metrics it holds,
/// and the metrics `what` reads. `None` when one export holds such a metric, or when no
/// export has a data point at all (the summary says "nothing to diagnose").
///
/// `inputs` are (path, metric names with data points).
pub fn unmet(
    inputs: &[(String, Vec<String>)],
    need: azure_windows::Need,
    what: &str,
) -> Option<Error> {
    let with_data: Vec<&(String, Vec<String>)> =
        inputs.iter().filter(|(_, m)| !m.is_empty()).collect();
    if with_data.is_empty()
        || with_data
            .iter()
            .any(|(_, m)| m.iter().any(|m| need.is_met_by(m)))
    {
        return None;
    }
    let kind = match need {
        azure_windows::Need::Latency => "Azure OpenAI latency metric",
        azure_windows::Need::Throughput => "Azure OpenAI request or token metric",
    };
    let reads = format!("{what} reads {}", need.metric_names().join(", "));
    let found = |m: &[String]| {
        if m.is_empty() {
            "none".to_string()
        } else {
            m.join(", ")
        }
    };
    Some(match inputs {
        [(path, metrics)] => Error::input(
            path,
            format!(
                "read as an Azure Monitor metrics export, it holds no {kind} (metrics found: {}); {reads}",
                found(metrics)
            ),
        ),
        _ => Error::Usage(format!(
            "no input holds an {kind}; each was read as an Azure Monitor metrics export:\n{}\n  {reads}",
            inputs
                .iter()
                .map(|(p, m)| format!("  {p}: metrics found: {}", found(m)))
                .collect::<Vec<_>>()
                .join("\n")
        )),
    })
}

/// The exports of a run as [`unmet`] reads them.
fn metric_names(inputs: &[InputSummary]) -> Vec<(String, Vec<String>)> {
    inputs
        .iter()
        .map(|i| (i.path.clone(), i.metrics.clone()))
        .collect()
}

fn figure_columns() -> Vec<&'static str> {
    AZURE_FIELDS
        .iter()
        .filter(|f| f.baseline)
        .map(|f| f.name)
        .collect()
}

struct Loaded {
    frame: DataFrame,
    inputs: Vec<InputSummary>,
    errors: Vec<MetricError>,
}

fn load(paths: &[PathBuf]) -> Result<Loaded> {
    let mut values = vec![];
    let mut inputs = vec![];
    let mut errors = vec![];
    for path in paths {
        let bytes =
            std::fs::read(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let (line, column) = crate::source::line_and_column(e.as_bytes(), at);
            Error::input(
                path,
                format!("line {line}, column {column}: not UTF-8 (an export must be UTF-8 text)"),
            )
        })?;
        let export = parse_export(&text, path)?;
        let mut metrics: Vec<String> = export.values.iter().map(|v| v.metric.clone()).collect();
        metrics.sort();
        metrics.dedup();
        inputs.push(InputSummary {
            path: path.display().to_string(),
            values: export.values.len() as u64,
            metrics,
            intervals: export.intervals.clone(),
        });
        values.extend(export.values);
        errors.extend(export.errors);
    }
    let frame = azure_windows::windows(&values)
        .map_err(|e| Error::Usage(format!("cannot build the windows: {e}")))?;
    Ok(Loaded {
        frame,
        inputs,
        errors,
    })
}

fn f64s(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<f64>>> {
    let c = df.column(name)?.cast(&DataType::Float64)?;
    let ca = c.f64()?;
    Ok((0..ca.len()).map(|i| ca.get(i)).collect())
}

fn strs(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<String>>> {
    let ca = df.column(name)?.str()?.clone();
    Ok((0..ca.len())
        .map(|i| ca.get(i).map(str::to_string))
        .collect())
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    crate::stats::quantile7(&v, 0.5)
}

/// (resource, deployment).
type DeploymentKey = (Option<String>, Option<String>);

/// A column of optional figures.
type Figures = Vec<Option<f64>>;

/// Group row indices by (resource, deployment), each in window order.
fn groups(df: &DataFrame) -> PolarsResult<BTreeMap<DeploymentKey, Vec<usize>>> {
    let res = strs(df, "resource")?;
    let dep = strs(df, "deployment")?;
    let mut g: BTreeMap<_, Vec<usize>> = BTreeMap::new();
    for i in 0..df.height() {
        g.entry((res[i].clone(), dep[i].clone()))
            .or_default()
            .push(i);
    }
    Ok(g)
}

/// The formula's prediction and residual for every window.
fn formula_columns(df: &DataFrame) -> PolarsResult<(Figures, Figures)> {
    let ttlt = f64s(df, "ttlt_avg_ms")?;
    let ttft = f64s(df, "time_to_response_avg_ms")?;
    let tbt = f64s(df, "tbt_avg_ms")?;
    let tokens = f64s(df, "generated_tokens_per_request")?;
    let mut predicted = vec![None; df.height()];
    let mut residual = vec![None; df.height()];
    for i in 0..df.height() {
        if let (Some(a), Some(b), Some(n)) = (ttft[i], tbt[i], tokens[i]) {
            predicted[i] = Some(a + b * n);
            residual[i] = ttlt[i].map(|t| t - (a + b * n));
        }
    }
    Ok((predicted, residual))
}

/// Trailing-median baselines of every figure, or per-deployment medians of another frame.
fn baselines(
    df: &DataFrame,
    fixed: Option<&DataFrame>,
    window: usize,
    min: usize,
    excursion: f64,
) -> PolarsResult<Vec<Column>> {
    let g = groups(df)?;
    let fixed_groups = match fixed {
        Some(b) => Some((b, groups(b)?)),
        None => None,
    };
    let mut out = vec![];
    for name in figure_columns() {
        let vals = f64s(df, name)?;
        let mut base = vec![None; df.height()];
        for (key, rows) in &g {
            if let Some((b, bg)) = &fixed_groups {
                let bvals = f64s(b, name)?;
                let m = bg.get(key).and_then(|r| {
                    let v: Vec<f64> = r.iter().filter_map(|&i| bvals[i]).collect();
                    (v.len() >= min).then(|| median(v)).flatten()
                });
                for &i in rows {
                    base[i] = m;
                }
                continue;
            }
            // Only windows that were not themselves an excursion feed later baselines, so
            // an episode longer than half the trailing span never becomes its own "normal".
            let mut accepted: Vec<f64> = vec![];
            for &i in rows {
                let from = accepted.len().saturating_sub(window);
                let b = (accepted.len() - from >= min)
                    .then(|| median(accepted[from..].to_vec()))
                    .flatten();
                base[i] = b;
                if let Some(v) = vals[i] {
                    let excursion =
                        b.is_some_and(|b| b > 0.0 && (v >= excursion * b || v * excursion <= b));
                    if !excursion {
                        accepted.push(v);
                    }
                }
            }
        }
        out.push(Column::new(format!("{name}{BASELINE_SUFFIX}").into(), base));
    }
    Ok(out)
}

/// Two-sided p-value of each window's residual against the residuals of its deployment's
/// baseline windows (a prediction interval: Student's t with n − 1 degrees of freedom).
fn residual_p(
    df: &DataFrame,
    residual: &[Option<f64>],
    window: usize,
    min: usize,
) -> PolarsResult<Vec<Option<f64>>> {
    let g = groups(df)?;
    let mut p = vec![None; df.height()];
    for rows in g.values() {
        // As with baselines, a window whose residual was itself significant does not join
        // the reference, so a long step is not absorbed into "normal" residuals.
        let mut accepted: Vec<f64> = vec![];
        for &i in rows {
            let Some(r) = residual[i] else { continue };
            let earlier = &accepted[accepted.len().saturating_sub(window)..];
            let mut this_p = None;
            let n = earlier.len() as f64;
            let sd = earlier.iter().std_dev();
            // Too few windows, or a flat (or NaN) spread, says nothing about how unusual a
            // residual is.
            if earlier.len() >= min.max(3) && sd.is_finite() && sd > 0.0 {
                let t = (r - earlier.iter().mean()) / (sd * (1.0 + 1.0 / n).sqrt());
                if let Ok(dist) = StudentsT::new(0.0, 1.0, n - 1.0) {
                    this_p = Some((2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0));
                }
            }
            p[i] = this_p;
            if this_p.is_none_or(|p| p >= SIGNIFICANT) {
                accepted.push(r);
            }
        }
    }
    Ok(p)
}

/// OLS of observed TTLT on the prediction, over the windows that have both.
pub fn fit(observed: &[f64], predicted: &[f64]) -> Option<Fit> {
    if observed.len() < 3 || observed.len() != predicted.len() {
        return None;
    }
    let var = predicted.iter().variance();
    if var.is_nan() || var <= 0.0 {
        return None;
    }
    let slope = predicted.iter().covariance(observed.iter()) / var;
    let intercept = observed.iter().mean() - slope * predicted.iter().mean();
    let residuals: Vec<f64> = observed.iter().zip(predicted).map(|(o, p)| o - p).collect();
    let fitted_ss: f64 = observed
        .iter()
        .zip(predicted)
        .map(|(o, p)| (o - (intercept + slope * p)).powi(2))
        .sum();
    let total_ss = observed.iter().variance() * (observed.len() as f64 - 1.0);
    Some(Fit {
        windows: observed.len() as u64,
        slope: round3(slope),
        intercept_ms: round3(intercept),
        r_squared: if total_ss > 0.0 {
            round3(1.0 - fitted_ss / total_ss)
        } else {
            1.0
        },
        residual_mean_ms: round3(residuals.iter().mean()),
        residual_sd_ms: round3(residuals.iter().std_dev()),
    })
}

pub fn run(rules: &RuleSet, opts: &Options) -> Result<Analysis> {
    if rules.catalogue != Catalogue::Azure {
        return Err(Error::Usage(format!(
            "Azure Monitor exports need a rule table written for the azure catalogue; `{}` ({}) is for {}",
            rules.name,
            rules.source,
            rules.catalogue.name()
        )));
    }
    let loaded = load(&opts.inputs)?;
    // The table's own idea of "up" also decides which windows are excursions.
    let excursion = rules
        .param_values()
        .get(EXCURSION_PARAM)
        .copied()
        .unwrap_or(1.3);
    let fixed = if opts.baseline.is_empty() {
        None
    } else {
        Some(load(&opts.baseline)?)
    };
    let build = || -> PolarsResult<(DataFrame, Option<window::Span>)> {
        let mut df = loaded.frame.clone();
        let (predicted, residual) = formula_columns(&df)?;
        let p = residual_p(
            &df,
            &residual,
            opts.baseline_windows,
            opts.min_baseline_windows,
        )?;
        df.with_column(Column::new("ttlt_predicted_ms".into(), predicted))?;
        df.with_column(Column::new("ttlt_residual_ms".into(), residual))?;
        df.with_column(Column::new("ttlt_residual_p".into(), p))?;
        let fixed_df = match &fixed {
            Some(f) => {
                let mut b = f.frame.clone();
                let (pr, re) = formula_columns(&b)?;
                b.with_column(Column::new("ttlt_predicted_ms".into(), pr))?;
                b.with_column(Column::new("ttlt_residual_ms".into(), re))?;
                Some(b)
            }
            None => None,
        };
        for c in baselines(
            &df,
            fixed_df.as_ref(),
            opts.baseline_windows,
            opts.min_baseline_windows,
            excursion,
        )? {
            df.with_column(c)?;
        }
        // Classify every window, then narrow: a baseline needs the windows before the
        // incident window.
        let lf = compile::apply(rules, df.lazy());
        match crate::analyze::time_filter("window_start", opts.since, opts.until) {
            Some(f) => {
                let kept = lf.clone().filter(f).collect()?;
                // Only when the window holds nothing: the span the exports do cover.
                let span = if kept.height() == 0 {
                    Some(window::span(lf, "window_start", opts.since, opts.until)?)
                } else {
                    None
                };
                Ok((kept, span))
            }
            None => Ok((lf.collect()?, None)),
        }
    };
    let (frame, span) =
        build().map_err(|e| Error::Usage(format!("cannot diagnose the windows: {e}")))?;
    // Exports with no data point at all keep their note ("nothing to diagnose").
    if let Some(span) = span.filter(|s| s.first.is_some()) {
        let names: Vec<String> = opts
            .inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        if let Some(e) = window::empty(
            opts.since,
            opts.until,
            "window",
            &window::source_name(&names),
            span,
        ) {
            return Err(e);
        }
    }
    // After the window check: a window holding nothing is the first thing to say.
    if let Some(e) = unmet(
        &metric_names(&loaded.inputs),
        azure_windows::Need::Latency,
        "the Azure diagnosis",
    ) {
        return Err(e);
    }
    let summary = summarize(rules, opts, &loaded, &frame)
        .map_err(|e| Error::Usage(format!("cannot summarise the windows: {e}")))?;
    Ok(Analysis { frame, summary })
}

fn summarize(
    rules: &RuleSet,
    opts: &Options,
    loaded: &Loaded,
    df: &DataFrame,
) -> PolarsResult<Summary> {
    let n = df.height() as u64;
    let classes_col = strs(df, "class")?;
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for c in classes_col.iter().flatten() {
        *counts.entry(c.clone()).or_default() += 1;
    }
    let mut classes = vec![];
    for r in &rules.rules {
        let w = counts.get(&r.class).copied().unwrap_or(0);
        classes.push(ClassRow {
            class: r.class.clone(),
            order: Some(r.order),
            windows: w,
            share: if n == 0 {
                0.0
            } else {
                round3(w as f64 / n as f64)
            },
            look_at: r.look_at.clone(),
            layer: r.layer.clone(),
            next_check: r.next_check.clone(),
        });
    }
    let w = counts.get(&rules.default_class).copied().unwrap_or(0);
    classes.push(ClassRow {
        class: rules.default_class.clone(),
        order: None,
        windows: w,
        share: if n == 0 {
            0.0
        } else {
            round3(w as f64 / n as f64)
        },
        look_at: String::new(),
        layer: String::new(),
        next_check: String::new(),
    });

    let ts = df.column("window_start")?.cast(&DataType::Int64)?;
    let ts = ts.i64()?;
    let (min, max) = (ts.min(), ts.max());
    let time_span = match (min.and_then(iso_ms), max.and_then(iso_ms)) {
        (Some(start), Some(end)) => Some(crate::summary::TimeSpan { start, end }),
        _ => None,
    };

    let order = rules.class_order();
    let cols: BTreeMap<&str, Vec<Option<f64>>> = [
        "ttlt_avg_ms",
        "time_to_response_avg_ms",
        "tbt_avg_ms",
        "tokens_per_request",
        "generated_tokens_per_request",
        "requests_total",
        "requests_429_total",
        "ptu_utilization_max_pct",
        "ttlt_predicted_ms",
    ]
    .into_iter()
    .map(|c| Ok((c, f64s(df, c)?)))
    .collect::<PolarsResult<_>>()?;
    let pick =
        |c: &str, rows: &[usize]| -> Vec<f64> { rows.iter().filter_map(|&i| cols[c][i]).collect() };
    let sum = |c: &str, rows: &[usize]| -> Option<f64> {
        let v = pick(c, rows);
        (!v.is_empty()).then(|| round3(v.iter().sum()))
    };
    let mut deployments = vec![];
    for ((res, dep), rows) in groups(df)? {
        let mut per: BTreeMap<&str, u64> = BTreeMap::new();
        for &i in &rows {
            if let Some(c) = &classes_col[i] {
                if let Some(o) = order.iter().find(|o| *o == c) {
                    *per.entry(o).or_default() += 1;
                }
            }
        }
        let both: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|&i| Some((cols["ttlt_avg_ms"][i]?, cols["ttlt_predicted_ms"][i]?)))
            .collect();
        let (obs, pred): (Vec<f64>, Vec<f64>) = both.into_iter().unzip();
        deployments.push(Deployment {
            resource: res.unwrap_or_default(),
            deployment: dep.unwrap_or_default(),
            windows: rows.len() as u64,
            classes: order
                .iter()
                .filter_map(|c| {
                    per.get(c).map(|n| Count {
                        name: c.to_string(),
                        count: *n,
                    })
                })
                .collect(),
            median_ttlt_ms: median(pick("ttlt_avg_ms", &rows)).map(round3),
            median_time_to_response_ms: median(pick("time_to_response_avg_ms", &rows)).map(round3),
            median_tbt_ms: median(pick("tbt_avg_ms", &rows)).map(round3),
            median_tokens_per_request: median(pick("tokens_per_request", &rows)).map(round3),
            median_generated_tokens_per_request: median(pick(
                "generated_tokens_per_request",
                &rows,
            ))
            .map(round3),
            median_requests: median(pick("requests_total", &rows)).map(round3),
            requests: sum("requests_total", &rows),
            requests_429: sum("requests_429_total", &rows),
            max_ptu_utilization_pct: pick("ptu_utilization_max_pct", &rows)
                .into_iter()
                .reduce(f64::max)
                .map(round3),
            formula: fit(&obs, &pred),
        });
    }

    let episodes = episodes(rules, df, &classes_col)?;

    let mut notes = vec![];
    // `run` refuses a run where no export has a latency; beside one that has, an export
    // of other metrics (storage, CPU, custom) adds nothing: say so.
    for input in &loaded.inputs {
        if !input.metrics.is_empty() && !input.metrics.iter().any(|m| azure_windows::is_read(m)) {
            notes.push(format!(
                "{}: holds no metric tracediag reads (metrics found: {}); its windows have no figure and are insufficient_data",
                input.path,
                input.metrics.join(", ")
            ));
        }
    }
    if n == 0 {
        notes.push("the exports hold no data points: nothing to diagnose".to_string());
    }
    Ok(Summary {
        tool: tool(),
        rules: RulesInfo::of(rules),
        baseline: match opts.baseline.as_slice() {
            [] => format!(
                "median of the same deployment's previous {} windows that were not excursions (at least {} with data)",
                opts.baseline_windows, opts.min_baseline_windows
            ),
            files => format!(
                "per-deployment medians of every window in {}",
                files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ),
        },
        inputs: loaded.inputs.clone(),
        windows: n,
        time_span,
        classes,
        deployments,
        episodes,
        metric_errors: loaded
            .errors
            .iter()
            .map(|e| MetricErrorRow {
                resource: e.resource.clone(),
                metric: e.metric.clone(),
                code: e.code.clone(),
                message: e.message.clone(),
            })
            .collect(),
        notes,
    })
}

fn episodes(
    rules: &RuleSet,
    df: &DataFrame,
    classes: &[Option<String>],
) -> PolarsResult<Vec<Episode>> {
    let ts = df.column("window_start")?.cast(&DataType::Int64)?;
    let ts = ts.i64()?;
    let mut out = vec![];
    for ((_, dep), rows) in groups(df)? {
        let mut k = 0;
        while k < rows.len() {
            let class = classes[rows[k]].clone().unwrap_or_default();
            let mut end = k;
            while end + 1 < rows.len() && classes[rows[end + 1]].as_deref() == Some(class.as_str())
            {
                end += 1;
            }
            if let Some(rule) = rules.rules.iter().find(|r| r.class == class) {
                let run = &rows[k..=end];
                let look = rule.look_at.as_str();
                let series = |name: &str| -> PolarsResult<Option<f64>> {
                    if df.column(name).is_err() {
                        return Ok(None);
                    }
                    let v = f64s(df, name)?;
                    Ok(median(run.iter().filter_map(|&i| v[i]).collect()).map(round3))
                };
                out.push(Episode {
                    deployment: dep.clone().unwrap_or_default(),
                    class: class.clone(),
                    first_window: ts.get(run[0]).and_then(iso_ms).unwrap_or_default(),
                    last_window: ts
                        .get(run[run.len() - 1])
                        .and_then(iso_ms)
                        .unwrap_or_default(),
                    windows: run.len() as u64,
                    look_at: look.to_string(),
                    value: series(look)?,
                    baseline: series(&format!("{look}{BASELINE_SUFFIX}"))?,
                });
            }
            k = end + 1;
        }
    }
    // In time order across deployments, as an incident timeline reads.
    out.sort_by(|a, b| (&a.first_window, &a.deployment).cmp(&(&b.first_window, &b.deployment)));
    Ok(out)
}

/// The per-window output frame for `--out`: identifying labels, class, every figure, its
/// baseline, and the table's metrics.
pub fn project(frame: &DataFrame, rules: &RuleSet, format: OutFormat) -> Result<DataFrame> {
    output::select(frame, &columns(rules), "window_start", format)
}

/// The per-window output columns, in order.
pub fn columns(rules: &RuleSet) -> Vec<String> {
    let mut out: Vec<String> = AZURE_FIELDS.iter().map(|f| f.name.to_string()).collect();
    out.insert(3, "class".into());
    out.insert(4, "classes".into());
    out.extend(
        figure_columns()
            .iter()
            .map(|f| format!("{f}{BASELINE_SUFFIX}")),
    );
    out.extend(rules.metrics.iter().map(|m| m.name.clone()));
    out
}
