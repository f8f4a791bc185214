//! Azure OpenAI metric windows: turns the long records that [`super::azure`] reads from
//! Azure Monitor metrics files into one row per (resource, deployment, time window), with
//! the figures the latency formula (docs/azure.md §4.3) needs side by side:
//! TTLT ≈ Time to Response + TBT × generated tokens per request.
//!
//! Which metrics feed which column. Both name families on the
//! `Microsoft.CognitiveServices/accounts` namespace count (docs/azure.md §4.1),
//! matched without case:
//!
//! | column | Azure OpenAI name | Foundry "Models" name | aggregation |
//! |---|---|---|---|
//! | `ttlt_avg_ms` | `AzureOpenAITTLTInMS` | `TimeToLastByte` | average |
//! | `time_to_response_avg_ms` | `AzureOpenAITimeToResponse` | `TimeToResponse` | average |
//! | `tbt_avg_ms` | `AzureOpenAINormalizedTBTInMS` | `NormalizedTimeBetweenTokens` | average |
//! | `normalized_ttft_avg_ms` | `AzureOpenAINormalizedTTFTInMS` | `NormalizedTimeToFirstToken` | average |
//! | `requests_total`, `requests_429_total` | `AzureOpenAIRequests` | `ModelRequests` | total |
//! | `generated_tokens_total` | `GeneratedTokens` | `OutputTokens` | total |
//! | `prompt_tokens_total` | `ProcessedPromptTokens` | `InputTokens` | total |
//! | `ptu_utilization_avg_pct`, `_max_pct` | `AzureOpenAIProvisionedManagedUtilizationV2` | `ProvisionedUtilization` | average, maximum |
//!
//! The deprecated V1 `AzureOpenAIProvisionedManagedUtilization` is not read: V2 replaced it
//! with another computation, and putting both in one column would compare unlike figures.
//!
//! Rules, and why:
//! - **Rows.** Every (resource, deployment, window start) that any record has gets a row,
//!   even when none of its metrics is one of the above: the row says the export covers that
//!   window, and its nulls say which figures it lacks. Windows are the point timestamps as
//!   given (Azure aligns them to the query start); pass one time grain per call.
//! - **Deployment** is the `modeldeploymentname` dimension. A metric not split by it is
//!   per resource, so its rows carry the last path segment of the resource id (the account
//!   name) as deployment; they are never spread over, or added to, the real deployments.
//! - **Missing stays null.** A window without a point for a figure is null, never 0 (Azure:
//!   NULL differs from zero). A ratio whose denominator is null or 0 is null.
//! - **Aggregation fallbacks**, when a file lacks the named aggregation:
//!   averages use `total ÷ count` (Azure defines `average` as exactly that); totals use
//!   `average × count` for the same reason, and request counts may also use `count` alone,
//!   because each request is one sample of value 1, so its count equals its total (token
//!   metrics never do: their count is the number of samples, not of tokens); a maximum
//!   has no fallback (no other aggregation bounds it), so it stays null.
//! - **Units.** Latency metrics in `Seconds` are multiplied by 1000; `MilliSeconds`, an
//!   absent unit and `Unspecified` are taken as milliseconds (the catalogue's unit). A
//!   latency in any other unit cannot be converted and is left out (null), not guessed.
//! - **Split series.** Totals are summed over every other dimension (status code, stream
//!   type, region, …). Averages of split series are weighted, because a plain mean of a
//!   10-request series and a 1,000-request series is wrong: by the series' own `count`
//!   (the number of samples Azure averaged; this reproduces the unsplit average exactly),
//!   else by the request count of the same deployment and window whose dimensions match
//!   the series' (e.g. Time to Response split by StatusCode weighted by the requests of
//!   that StatusCode), else — when neither is in the export — by a plain mean. That last
//!   case is a known limitation: ask for `count` with the averages to avoid it.
//!   PTU maxima take the largest series maximum.
//! - **429s.** `requests_429_total` sums the request counts whose `statuscode` is `429`.
//!   Without a StatusCode split the export cannot tell throttled from served requests, so
//!   it is null; with one, a window with request data but no 429 point had no 429s, so it
//!   is 0 (Azure writes no point for a status that did not occur). A window without any
//!   request data is null in both.
//! - **Overlapping exports.** Series of one metric split by different dimension sets
//!   (the same metric exported twice, once unsplit and once per StatusCode) overlap;
//!   adding them would count requests twice, so only the coarsest split (fewest
//!   dimensions) is used. When both name families give a figure for the same window, the
//!   Azure OpenAI family is used and the other ignored, for the same reason. The same point
//!   given twice (overlapping time spans) counts once; if the copies disagree, the larger
//!   value is kept, so the result does not depend on file order.
//! - A figure that overflows `f64` is null. Nothing here panics on any input.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::azure::{Aggregation, MetricValue};

/// The dimension that names a deployment (Azure lower-cases dimension names; so does
/// the parser).
const DEPLOYMENT_DIM: &str = "modeldeploymentname";
/// The dimension that splits request counts by HTTP status.
const STATUS_DIM: &str = "statuscode";

/// Output columns, in order, with their meaning (see [`column_docs`]).
const COLUMNS: [(&str, &str); 15] = [
    (
        "resource",
        "Azure resource id (case as exported), without the metric suffix",
    ),
    (
        "deployment",
        "ModelDeploymentName; the account name (last segment of the resource id) for metrics not split by deployment",
    ),
    (
        "window_start",
        "start of the metric window (UTC), as Azure stamped the point",
    ),
    (
        "ttlt_avg_ms",
        "Time to Last Byte, average in ms (request sent → last byte)",
    ),
    (
        "time_to_response_avg_ms",
        "Time to Response, average in ms (request sent → first response chunk; TTFT)",
    ),
    (
        "tbt_avg_ms",
        "Time Between Tokens, average in ms per generated token (normalized TBT)",
    ),
    (
        "normalized_ttft_avg_ms",
        "Normalized Time to First Byte/Token, average in ms, normalized by prompt tokens; only for comparing prompt sizes",
    ),
    (
        "requests_total",
        "requests in the window, summed over status codes and other splits",
    ),
    (
        "requests_429_total",
        "requests answered 429 (throttled); null when the export has no StatusCode split, 0 when split with no 429",
    ),
    (
        "generated_tokens_total",
        "generated (completion, output) tokens in the window",
    ),
    (
        "prompt_tokens_total",
        "processed prompt (input) tokens in the window",
    ),
    (
        "tokens_per_request",
        "(generated + prompt tokens) ÷ requests; null when requests is null or 0",
    ),
    (
        "generated_tokens_per_request",
        "generated tokens ÷ requests; null when requests is null or 0",
    ),
    (
        "ptu_utilization_avg_pct",
        "provisioned-managed (PTU) utilization V2, average in percent",
    ),
    (
        "ptu_utilization_max_pct",
        "provisioned-managed (PTU) utilization V2, maximum in percent",
    ),
];

/// Each output column of [`windows`] with a one-line meaning, in column order.
pub fn column_docs() -> &'static [(&'static str, &'static str)] {
    &COLUMNS
}

/// A figure the windows carry, before naming columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Figure {
    Ttlt,
    TimeToResponse,
    Tbt,
    NormalizedTtft,
    Requests,
    GeneratedTokens,
    PromptTokens,
    PtuUtilization,
}

impl Figure {
    /// Latencies are the only figures whose unit may need converting.
    fn is_latency(self) -> bool {
        matches!(
            self,
            Figure::Ttlt | Figure::TimeToResponse | Figure::Tbt | Figure::NormalizedTtft
        )
    }
}

/// The two metric-name families. Declaration order is preference order when both give a
/// figure for the same window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    AzureOpenAI,
    Models,
}

const FAMILIES: [Family; 2] = [Family::AzureOpenAI, Family::Models];

/// REST metric names (docs/azure.md §4.1) and what they feed.
const METRICS: [(&str, Figure, Family); 16] = [
    ("AzureOpenAITTLTInMS", Figure::Ttlt, Family::AzureOpenAI),
    ("TimeToLastByte", Figure::Ttlt, Family::Models),
    (
        "AzureOpenAITimeToResponse",
        Figure::TimeToResponse,
        Family::AzureOpenAI,
    ),
    ("TimeToResponse", Figure::TimeToResponse, Family::Models),
    (
        "AzureOpenAINormalizedTBTInMS",
        Figure::Tbt,
        Family::AzureOpenAI,
    ),
    ("NormalizedTimeBetweenTokens", Figure::Tbt, Family::Models),
    (
        "AzureOpenAINormalizedTTFTInMS",
        Figure::NormalizedTtft,
        Family::AzureOpenAI,
    ),
    (
        "NormalizedTimeToFirstToken",
        Figure::NormalizedTtft,
        Family::Models,
    ),
    ("AzureOpenAIRequests", Figure::Requests, Family::AzureOpenAI),
    ("ModelRequests", Figure::Requests, Family::Models),
    (
        "GeneratedTokens",
        Figure::GeneratedTokens,
        Family::AzureOpenAI,
    ),
    ("OutputTokens", Figure::GeneratedTokens, Family::Models),
    (
        "ProcessedPromptTokens",
        Figure::PromptTokens,
        Family::AzureOpenAI,
    ),
    ("InputTokens", Figure::PromptTokens, Family::Models),
    (
        "AzureOpenAIProvisionedManagedUtilizationV2",
        Figure::PtuUtilization,
        Family::AzureOpenAI,
    ),
    (
        "ProvisionedUtilization",
        Figure::PtuUtilization,
        Family::Models,
    ),
];

/// What a run of Azure Monitor exports needs: the diagnosis, latencies; throughput,
/// request and token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Latency,
    Throughput,
}

impl Need {
    fn wants(self, figure: Figure) -> bool {
        match self {
            Need::Latency => figure.is_latency(),
            Need::Throughput => matches!(
                figure,
                Figure::Requests | Figure::GeneratedTokens | Figure::PromptTokens
            ),
        }
    }

    /// Whether `metric` (a REST metric name, any case) gives a figure of this need.
    pub fn is_met_by(self, metric: &str) -> bool {
        figure_of(metric).is_some_and(|(f, _)| self.wants(f))
    }

    /// The metric names that meet this need, each figure's names together
    /// (`AzureOpenAITTLTInMS / TimeToLastByte`), in table order.
    pub fn metric_names(self) -> Vec<String> {
        let mut out: Vec<(Figure, Vec<&str>)> = vec![];
        for &(name, figure, _) in METRICS.iter().filter(|(_, f, _)| self.wants(*f)) {
            match out.iter_mut().find(|(f, _)| *f == figure) {
                Some((_, names)) => names.push(name),
                None => out.push((figure, vec![name])),
            }
        }
        out.into_iter()
            .map(|(_, names)| names.join(" / "))
            .collect()
    }
}

/// Whether `metric` feeds any column of the windows.
pub fn is_read(metric: &str) -> bool {
    figure_of(metric).is_some()
}

fn figure_of(metric: &str) -> Option<(Figure, Family)> {
    METRICS
        .iter()
        .find(|(name, _, _)| name.eq_ignore_ascii_case(metric.trim()))
        .map(|&(_, figure, family)| (figure, family))
}

/// Milliseconds per unit of a latency metric; `None` for a unit that is not a time.
fn latency_scale(unit: Option<&str>) -> Option<f64> {
    match unit.map(|u| u.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") | Some("unspecified") | Some("milliseconds") => Some(1.0),
        Some("seconds") => Some(1000.0),
        _ => None,
    }
}

/// Dimensions other than the deployment, sorted by name (as the parser gives them).
type Dims = Vec<(String, String)>;

/// The aggregations of one point that the windows use (`minimum` is not one of them).
#[derive(Debug, Default, Clone, Copy)]
struct Point {
    average: Option<f64>,
    maximum: Option<f64>,
    total: Option<f64>,
    count: Option<f64>,
}

impl Point {
    /// Record one aggregation; a repeated one keeps the larger value (see module doc).
    fn set(&mut self, aggregation: Aggregation, value: f64) {
        let slot = match aggregation {
            Aggregation::Average => &mut self.average,
            Aggregation::Maximum => &mut self.maximum,
            Aggregation::Total => &mut self.total,
            Aggregation::Count => &mut self.count,
            Aggregation::Minimum => return,
        };
        *slot = Some(match *slot {
            Some(old) if old.total_cmp(&value).is_ge() => old,
            _ => value,
        });
    }

    /// The point's average: `average`, else `total ÷ count`.
    fn mean(&self) -> Option<f64> {
        self.average
            .or_else(|| ratio(self.total?, self.count?))
            .and_then(finite)
    }

    /// The point's sum: `total`, else `average × count`, else (requests only) `count`.
    fn sum(&self, figure: Figure) -> Option<f64> {
        self.total
            .or_else(|| finite(self.average? * self.count?))
            .or(if figure == Figure::Requests {
                self.count
            } else {
                None
            })
    }
}

/// All series of one figure and family in one window, keyed by their other dimensions.
type Series = BTreeMap<Dims, Point>;

/// What one window holds, by figure and family.
#[derive(Default)]
struct Window {
    figures: BTreeMap<(Figure, Family), Series>,
}

/// (resource, deployment, window start in ms): the row key, sorted as the output is.
type WindowKey = (String, String, i64);

/// One row per (resource, deployment, window); columns and rules in the module doc and
/// [`column_docs`]. `deployment` is the `modeldeploymentname` dimension, or, for a metric
/// without that dimension, the last path segment of the resource id (the account name).
/// Rows are sorted by resource, deployment, window start. Empty input gives an empty frame
/// with the same columns.
pub fn windows(values: &[MetricValue]) -> PolarsResult<DataFrame> {
    let mut grid: BTreeMap<WindowKey, Window> = BTreeMap::new();
    for v in values {
        let deployment = v
            .dimensions
            .iter()
            .find(|(name, _)| name == DEPLOYMENT_DIM)
            .map(|(_, value)| value.clone())
            .unwrap_or_else(|| account_name(&v.resource).to_string());
        let window = grid
            .entry((v.resource.clone(), deployment, v.timestamp_ms))
            .or_default();
        let Some((figure, family)) = figure_of(&v.metric) else {
            continue;
        };
        let scale = if figure.is_latency() && v.aggregation != Aggregation::Count {
            match latency_scale(v.unit.as_deref()) {
                Some(scale) => scale,
                None => continue,
            }
        } else {
            1.0
        };
        let Some(value) = finite(v.value * scale) else {
            continue;
        };
        let dims: Dims = v
            .dimensions
            .iter()
            .filter(|(name, _)| name != DEPLOYMENT_DIM)
            .cloned()
            .collect();
        window
            .figures
            .entry((figure, family))
            .or_default()
            .entry(dims)
            .or_default()
            .set(v.aggregation, value);
    }

    let mut rows = Rows::default();
    for ((resource, deployment, start), window) in &grid {
        rows.push(resource, deployment, *start, window);
    }
    rows.finish()
}

/// Column buffers, filled one window at a time.
#[derive(Default)]
struct Rows {
    resource: Vec<String>,
    deployment: Vec<String>,
    start: Vec<i64>,
    /// Indexed like `COLUMNS[3..]`.
    figures: [Vec<Option<f64>>; 12],
}

impl Rows {
    fn push(&mut self, resource: &str, deployment: &str, start: i64, window: &Window) {
        let average = |figure| first_family(window, figure, |s| weighted_mean(s, window));
        let total = |figure| first_family(window, figure, |s| total_of(s, figure));
        let requests_family = FAMILIES.into_iter().find(|&family| {
            window
                .figures
                .get(&(Figure::Requests, family))
                .and_then(|s| total_of(s, Figure::Requests))
                .is_some()
        });
        let requests = requests_family.and_then(|f| {
            total_of(
                window.figures.get(&(Figure::Requests, f))?,
                Figure::Requests,
            )
        });
        // A 429 count needs a StatusCode split. Without one the export cannot tell throttled
        // from served requests, so the count is unknown (null); with one, a window whose
        // series hold no 429 point had no 429s (0) — Azure writes no point for a status
        // that did not occur. A window with no request data at all stays null.
        let throttled = requests_family.and_then(|f| {
            requests?;
            count_429(window.figures.get(&(Figure::Requests, f))?)
        });
        let generated = total(Figure::GeneratedTokens);
        let prompt = total(Figure::PromptTokens);
        let per_request = |tokens: Option<f64>| ratio(tokens?, requests?).and_then(finite);
        let both_tokens = generated.zip(prompt).and_then(|(g, p)| finite(g + p));

        let values = [
            average(Figure::Ttlt),
            average(Figure::TimeToResponse),
            average(Figure::Tbt),
            average(Figure::NormalizedTtft),
            requests,
            throttled,
            generated,
            prompt,
            per_request(both_tokens),
            per_request(generated),
            average(Figure::PtuUtilization),
            first_family(window, Figure::PtuUtilization, max_of),
        ];
        self.resource.push(resource.to_string());
        self.deployment.push(deployment.to_string());
        self.start.push(start);
        for (column, value) in self.figures.iter_mut().zip(values) {
            column.push(value);
        }
    }

    fn finish(self) -> PolarsResult<DataFrame> {
        let height = self.start.len();
        let mut columns = vec![
            Column::new(COLUMNS[0].0.into(), self.resource),
            Column::new(COLUMNS[1].0.into(), self.deployment),
            Column::new(COLUMNS[2].0.into(), self.start)
                .cast(&DataType::Datetime(TimeUnit::Milliseconds, None))?,
        ];
        for ((name, _), values) in COLUMNS[3..].iter().zip(self.figures) {
            columns.push(Column::new((*name).into(), values));
        }
        DataFrame::new(height, columns)
    }
}

/// The figure from the first family (in preference order) that gives one.
fn first_family(
    window: &Window,
    figure: Figure,
    get: impl Fn(&Series) -> Option<f64>,
) -> Option<f64> {
    FAMILIES
        .into_iter()
        .find_map(|family| get(window.figures.get(&(figure, family))?))
}

/// The series of one split: each with its dimensions.
type Split<'a> = Vec<(&'a Dims, &'a Point)>;

/// The series grouped by which dimensions split them (the names, and the series), the
/// coarsest split (fewest dimension names, then the names themselves) first.
fn layouts(series: &Series) -> Vec<(Vec<&str>, Split<'_>)> {
    let mut by_names: BTreeMap<(usize, Vec<&str>), Split<'_>> = BTreeMap::new();
    for (dims, point) in series {
        let names: Vec<&str> = dims.iter().map(|(n, _)| n.as_str()).collect();
        by_names
            .entry((names.len(), names))
            .or_default()
            .push((dims, point));
    }
    by_names
        .into_iter()
        .map(|((_, names), points)| (names, points))
        .collect()
}

/// Sum over the coarsest split that has data.
fn total_of(series: &Series, figure: Figure) -> Option<f64> {
    layouts(series).into_iter().find_map(|(_, points)| {
        let sums: Vec<f64> = points.iter().filter_map(|(_, p)| p.sum(figure)).collect();
        (!sums.is_empty())
            .then(|| sums.iter().sum())
            .and_then(finite)
    })
}

/// Largest maximum over the coarsest split that has one.
fn max_of(series: &Series) -> Option<f64> {
    layouts(series).into_iter().find_map(|(_, points)| {
        points
            .iter()
            .filter_map(|(_, p)| p.maximum)
            .max_by(f64::total_cmp)
    })
}

/// Requests with status 429 in the coarsest split by StatusCode; `None` when no series is
/// split by StatusCode.
fn count_429(series: &Series) -> Option<f64> {
    let (_, points) = layouts(series)
        .into_iter()
        .find(|(names, _)| names.contains(&STATUS_DIM))?;
    let sum: f64 = points
        .iter()
        .filter(|(dims, _)| {
            dims.iter()
                .any(|(n, v)| n == STATUS_DIM && v.trim() == "429")
        })
        .filter_map(|(_, p)| p.sum(Figure::Requests))
        .sum();
    finite(sum)
}

/// Average over the coarsest split that has data, weighted as the module doc says.
fn weighted_mean(series: &Series, window: &Window) -> Option<f64> {
    layouts(series).into_iter().find_map(|(_, points)| {
        let means: Vec<(&Dims, &Point, f64)> = points
            .iter()
            .filter_map(|&(dims, p)| Some((dims, p, p.mean()?)))
            .collect();
        match means.as_slice() {
            [] => None,
            [(_, _, only)] => Some(*only),
            _ => {
                let own: Option<Vec<f64>> = means
                    .iter()
                    .map(|(_, p, _)| p.count.filter(|c| *c > 0.0))
                    .collect();
                let weights = own.or_else(|| {
                    means
                        .iter()
                        .map(|(dims, _, _)| matching_requests(window, dims).filter(|w| *w > 0.0))
                        .collect()
                });
                let values = means.iter().map(|(_, _, m)| *m);
                match weights {
                    Some(weights) => {
                        let sum: f64 = weights.iter().sum();
                        let dot: f64 = values.zip(&weights).map(|(m, w)| m * w).sum();
                        ratio(dot, sum)
                    }
                    None => ratio(values.sum(), means.len() as f64),
                }
                .and_then(finite)
            }
        }
    })
}

/// Requests of this window whose dimensions include all of `dims` (same values), from the
/// preferred family and the coarsest request split that has every dimension of `dims`.
fn matching_requests(window: &Window, dims: &Dims) -> Option<f64> {
    FAMILIES.into_iter().find_map(|family| {
        let series = window.figures.get(&(Figure::Requests, family))?;
        let (_, points) = layouts(series)
            .into_iter()
            .find(|(names, _)| dims.iter().all(|(n, _)| names.contains(&n.as_str())))?;
        let matched: Vec<f64> = points
            .iter()
            .filter(|(have, _)| dims.iter().all(|d| have.contains(d)))
            .filter_map(|(_, p)| p.sum(Figure::Requests))
            .collect();
        (!matched.is_empty())
            .then(|| matched.iter().sum())
            .and_then(finite)
    })
}

/// Last path segment of a resource id (the account name for an Azure OpenAI resource);
/// the whole id when it has no `/`.
fn account_name(resource: &str) -> &str {
    let trimmed = resource.trim_end_matches('/');
    match trimmed.rsplit('/').next() {
        Some(last) if !last.is_empty() => last,
        _ => resource,
    }
}

fn ratio(numerator: f64, denominator: f64) -> Option<f64> {
    (denominator != 0.0).then(|| numerator / denominator)
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn account_name_is_the_last_segment() {
        assert_eq!(
            account_name("/subscriptions/s/resourceGroups/g/providers/Microsoft.CognitiveServices/accounts/aoai-1"),
            "aoai-1"
        );
        assert_eq!(account_name("/a/b/"), "b");
        assert_eq!(account_name("plain"), "plain");
        assert_eq!(account_name("///"), "///");
        assert_eq!(account_name(""), "");
    }

    #[test]
    fn every_metric_name_maps_once_and_columns_match_figures() {
        let names: BTreeSet<String> = METRICS
            .iter()
            .map(|(n, _, _)| n.to_ascii_lowercase())
            .collect();
        assert_eq!(names.len(), METRICS.len());
        assert_eq!(
            figure_of("azureopenaittltinms"),
            Some((Figure::Ttlt, Family::AzureOpenAI))
        );
        assert_eq!(figure_of("AzureOpenAIProvisionedManagedUtilization"), None);
        assert_eq!(COLUMNS.len(), 3 + Rows::default().figures.len());
    }

    #[test]
    fn units() {
        assert_eq!(latency_scale(Some("Seconds")), Some(1000.0));
        assert_eq!(latency_scale(Some("MilliSeconds")), Some(1.0));
        assert_eq!(latency_scale(None), Some(1.0));
        assert_eq!(latency_scale(Some("Count")), None);
    }
}
