//! Azure Monitor metrics JSON: turns a saved metrics response into plain records (one per
//! data point and aggregation) and into a long polars frame.
//!
//! Accepted shapes, all carrying the same `Metric` objects (docs/azure.md §1):
//! - the Metrics REST response `{cost, timespan, interval, namespace, resourceregion, value}`;
//! - the `metrics:getBatch` response `{values: [{starttime, endtime, interval, resourceid,
//!   value}]}`;
//! - either body inside the wrappers real files come in: the Azure SDK test-recorder
//!   envelope (`Entries[].ResponseBody`, an object or a JSON string) and Microsoft's
//!   x-ms-example files (`responses."200".body`);
//! - older `az monitor metrics list -o json` output (`"0:01:00"` intervals, `+00:00`
//!   timestamps, explicit `null` for every aggregation not requested).
//!
//! Why the rules are what they are:
//! - On the wire a point without data is a point with only `timeStamp`; the old CLI wrote
//!   the same thing as `null`s. Either way it gives no record, so an idle minute never
//!   becomes a zero (Azure's docs: NULL is different from zero).
//! - Azure lower-cases dimension names whatever case the filter used; we lower-case them
//!   too, so files re-serialized by other clients still match. Values keep their case.
//! - The service may change the interval and timespan it was asked for (`FULL` → `PT4H`,
//!   a 981-year span → one month), so both are read from the response, never assumed.
//! - An HTTP 200 can carry a failed metric (`errorCode` other than `Success`); it is
//!   reported in `errors` and the other metrics are still read.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use chrono::{DateTime, NaiveDateTime};
use polars::prelude::*;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// What every "not a metrics file" message starts with.
const EXPECTED: &str = "expected an Azure Monitor metrics response (value[] or values[])";

/// The `/providers/Microsoft.Insights/metrics/<name>` tail of a metric id; what precedes it
/// is the resource. Compared without case: request URIs use `microsoft.insights`.
const METRIC_ID_TAIL: &str = "/providers/microsoft.insights/metrics/";

/// One of the five aggregation types a data point may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Aggregation {
    Average,
    Minimum,
    Maximum,
    Total,
    Count,
}

impl Aggregation {
    /// All five, in the order Azure's API documents them.
    pub const ALL: [Aggregation; 5] = [
        Aggregation::Average,
        Aggregation::Minimum,
        Aggregation::Maximum,
        Aggregation::Total,
        Aggregation::Count,
    ];

    /// The key in a data point (`"average"`, …), also the name shown in frames.
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregation::Average => "average",
            Aggregation::Minimum => "minimum",
            Aggregation::Maximum => "maximum",
            Aggregation::Total => "total",
            Aggregation::Count => "count",
        }
    }
}

impl fmt::Display for Aggregation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One aggregation of one data point that has data.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricValue {
    /// Resource id as Azure wrote it (case kept), without the metric suffix.
    pub resource: String,
    /// The REST metric name (`name.value`), e.g. `TimeToResponse`.
    pub metric: String,
    pub unit: Option<String>,
    pub aggregation: Aggregation,
    /// `(name, value)` pairs sorted by name; names lower-cased, values as given.
    pub dimensions: Vec<(String, String)>,
    /// Start of the bucket, milliseconds since the Unix epoch, UTC.
    pub timestamp_ms: i64,
    pub value: f64,
}

/// A metric the service reported as failed inside an otherwise successful response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricError {
    pub resource: String,
    pub metric: String,
    /// `errorCode`, e.g. `InvalidSamplingType`, `Throttled`.
    pub code: String,
    /// `errorMessage`, empty when absent.
    pub message: String,
}

/// Everything read from one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsExport {
    /// In file order: metric, series, point, then aggregation in [`Aggregation::ALL`] order.
    pub values: Vec<MetricValue>,
    /// Metrics the service failed; their `timeseries` (normally `[]`) are not read.
    pub errors: Vec<MetricError>,
    /// The response's `interval` strings as given (e.g. `PT1M`, `0:01:00`), distinct, sorted.
    pub intervals: Vec<String>,
    /// The response's `timespan` strings (`start/end`), distinct, sorted; for getBatch,
    /// `starttime/endtime` joined the same way.
    pub timespans: Vec<String>,
}

/// Parse an Azure Monitor metrics file (any shape in the module doc). `path` only names
/// the file in errors. Fails on malformed JSON (with line and column), on JSON that is not
/// a metrics response (saying what it is), and on a metric, series or point that breaks
/// the schema (with its JSON path); a metric failed by the service is not a failure here.
pub fn parse_metrics(text: &str, path: &Path) -> Result<MetricsExport> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(Error::input(path, format!("the file is empty: {EXPECTED}")));
    }
    let root: Value = serde_json::from_str(text)
        .map_err(|e| Error::input(path, json_syntax_message(&e, text)))?;
    let mut out = Collector::default();
    let read = bodies(&root).and_then(|bodies| {
        bodies
            .iter()
            .try_for_each(|(body, at)| read_body(body, at, &mut out))
    });
    read.map_err(|message| Error::input(path, message))?;
    Ok(out.finish())
}

/// Length of an interval string in milliseconds: ISO-8601 durations as the service writes
/// them (`PT1M`, `PT15M`, `PT1H`, `PT4H`, `P1D`, also `P1W`, `P1DT12H`, `PT0.5S`) and
/// Python `timedelta` strings from the old CLI (`0:01:00`, `1:00:00`, `1 day, 0:00:00`).
/// `None` for `FULL`, for years and months (no fixed length), and for anything that is
/// not a positive length.
pub fn interval_ms(interval: &str) -> Option<i64> {
    let s = interval.trim();
    let ms = match s.strip_prefix(['P', 'p']) {
        Some(rest) => iso_duration_ms(rest)?,
        None => timedelta_ms(s)?,
    };
    (ms > 0).then_some(ms)
}

/// Lay values out long: columns `resource`, `metric`, `unit`, `aggregation` (str), one str
/// column per distinct dimension name (sorted; null where a value lacks that dimension),
/// `timestamp` (Datetime ms, no time zone, UTC) and `value` (f64). A dimension whose name
/// is taken by one of those fixed columns is named `dimension_<name>`. Rows are sorted by
/// resource, metric, dimension values, timestamp, aggregation, so output is deterministic.
pub fn to_frame(values: &[MetricValue]) -> PolarsResult<DataFrame> {
    const FIXED: [&str; 6] = [
        "resource",
        "metric",
        "unit",
        "aggregation",
        "timestamp",
        "value",
    ];
    let dims: Vec<&str> = values
        .iter()
        .flat_map(|v| v.dimensions.iter().map(|(n, _)| n.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();

    let mut rows: Vec<&MetricValue> = values.iter().collect();
    rows.sort_by(|a, b| {
        a.resource
            .cmp(&b.resource)
            .then_with(|| a.metric.cmp(&b.metric))
            .then_with(|| {
                let da = dims.iter().map(|n| dimension(a, n));
                let db = dims.iter().map(|n| dimension(b, n));
                da.cmp(db)
            })
            .then_with(|| a.timestamp_ms.cmp(&b.timestamp_ms))
            .then_with(|| a.aggregation.as_str().cmp(b.aggregation.as_str()))
            .then_with(|| a.unit.cmp(&b.unit))
            .then_with(|| a.value.total_cmp(&b.value))
    });

    let mut taken: BTreeSet<String> = FIXED.iter().map(|s| s.to_string()).collect();
    let mut dim_names = Vec::with_capacity(dims.len());
    for name in &dims {
        // Prefix until free: a dimension may be called `value`, or even `dimension_value`.
        let mut column = name.to_string();
        while column.is_empty() || taken.contains(&column) {
            column = format!("dimension_{column}");
        }
        taken.insert(column.clone());
        dim_names.push(column);
    }

    let height = rows.len();
    let text = |name: &str, f: &dyn Fn(&MetricValue) -> &str| {
        Column::new(name.into(), rows.iter().map(|v| f(v)).collect::<Vec<_>>())
    };
    let mut columns = vec![
        text("resource", &|v| v.resource.as_str()),
        text("metric", &|v| v.metric.as_str()),
        Column::new(
            "unit".into(),
            rows.iter().map(|v| v.unit.as_deref()).collect::<Vec<_>>(),
        ),
        text("aggregation", &|v| v.aggregation.as_str()),
    ];
    for (name, column) in dims.iter().zip(&dim_names) {
        columns.push(Column::new(
            column.as_str().into(),
            rows.iter().map(|v| dimension(v, name)).collect::<Vec<_>>(),
        ));
    }
    columns.push(
        Column::new(
            "timestamp".into(),
            rows.iter().map(|v| v.timestamp_ms).collect::<Vec<i64>>(),
        )
        .cast(&DataType::Datetime(TimeUnit::Milliseconds, None))?,
    );
    columns.push(Column::new(
        "value".into(),
        rows.iter().map(|v| v.value).collect::<Vec<f64>>(),
    ));
    DataFrame::new(height, columns)
}

/// A value's dimension `name`, if it has one.
fn dimension<'a>(v: &'a MetricValue, name: &str) -> Option<&'a str> {
    v.dimensions
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, value)| value.as_str())
}

/// Accumulates records while walking; sets keep intervals and timespans distinct and sorted.
#[derive(Default)]
struct Collector {
    values: Vec<MetricValue>,
    errors: Vec<MetricError>,
    intervals: BTreeSet<String>,
    timespans: BTreeSet<String>,
}

impl Collector {
    fn finish(self) -> MetricsExport {
        MetricsExport {
            values: self.values,
            errors: self.errors,
            intervals: self.intervals.into_iter().collect(),
            timespans: self.timespans.into_iter().collect(),
        }
    }
}

/// Inner walkers return a plain message; `parse_metrics` adds the file path once.
type Walk<T> = std::result::Result<T, String>;

/// The response bodies inside the file, each with the JSON path it sits at.
fn bodies(root: &Value) -> Walk<Vec<(Cow<'_, Value>, String)>> {
    let Value::Object(obj) = root else {
        return Err(format!("{EXPECTED}, found {}", describe(root)));
    };
    if let Some(entries) = obj.get("Entries") {
        // Azure SDK test recorder: one entry per HTTP call. Calls other than the metrics
        // query (auth, metric definitions) are skipped, not errors.
        let Value::Array(entries) = entries else {
            return Err(format!(
                "{EXPECTED}, found a test-recorder `Entries` that is {}",
                describe(entries)
            ));
        };
        let mut found = vec![];
        for (i, entry) in entries.iter().enumerate() {
            let body = match entry.get("ResponseBody") {
                // Some recorder versions store the body as the response text.
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(v) => Cow::Owned(v),
                    Err(_) => continue,
                },
                Some(v) => Cow::Borrowed(v),
                None => continue,
            };
            if is_metrics_body(&body) {
                found.push((body, format!("Entries[{i}].ResponseBody")));
            }
        }
        if found.is_empty() {
            return Err(format!(
                "{EXPECTED}, found a test-recorder envelope none of whose {} recorded \
                 call(s) returned a metrics response",
                entries.len()
            ));
        }
        return Ok(found);
    }
    if let Some(responses) = obj.get("responses") {
        // x-ms-example file: request `parameters` plus one response per status code; only
        // the 200 body is data (the `default` one is an error example).
        return match responses.get("200").and_then(|r| r.get("body")) {
            Some(body) => Ok(vec![(
                Cow::Borrowed(body),
                "responses.\"200\".body".to_string(),
            )]),
            None => Err(format!(
                "{EXPECTED}, found an x-ms-example file without `responses.\"200\".body`"
            )),
        };
    }
    Ok(vec![(Cow::Borrowed(root), String::new())])
}

/// Whether a recorded response body is a metrics response (rather than another call).
fn is_metrics_body(body: &Value) -> bool {
    match (body.get("values"), body.get("value")) {
        (Some(Value::Array(items)), _) => items
            .iter()
            .all(|item| matches!(item.get("value"), Some(Value::Array(_)))),
        (None, Some(Value::Array(items))) => items.iter().all(is_metric),
        _ => false,
    }
}

/// A metric has `timeseries` (required by the spec), or at least says why it has none.
/// Metric definitions, the other list with `value[]`, have neither.
fn is_metric(item: &Value) -> bool {
    item.get("timeseries").is_some() || item.get("errorCode").is_some()
}

fn read_body(body: &Value, at: &str, out: &mut Collector) -> Walk<()> {
    let Value::Object(obj) = body else {
        return Err(format!(
            "{}: {EXPECTED}, found {}",
            path_or_root(at),
            describe(body)
        ));
    };
    if let Some(values) = obj.get("values") {
        // metrics:getBatch: one result per resource.
        let at_values = join(at, "values");
        let Value::Array(items) = values else {
            return Err(format!(
                "{at_values}: {EXPECTED}, found `values` holding {}",
                describe(values)
            ));
        };
        for (i, item) in items.iter().enumerate() {
            let at_item = format!("{at_values}[{i}]");
            let Value::Object(item) = item else {
                return Err(format!(
                    "{at_item}: expected a per-resource result, found {}",
                    describe(item)
                ));
            };
            let resource = opt_str(item, "resourceid", &at_item)?;
            if let Some(interval) = opt_str(item, "interval", &at_item)? {
                out.intervals.insert(interval.to_string());
            }
            let start = opt_str(item, "starttime", &at_item)?;
            let end = opt_str(item, "endtime", &at_item)?;
            if let (Some(start), Some(end)) = (start, end) {
                out.timespans.insert(format!("{start}/{end}"));
            }
            let metrics = match item.get("value") {
                Some(Value::Array(metrics)) => metrics,
                Some(other) => {
                    return Err(format!(
                        "{at_item}.value: expected an array of metrics, found {}",
                        describe(other)
                    ))
                }
                None => {
                    return Err(format!(
                        "{at_item}: expected a per-resource result with `value`, found {}",
                        describe_object(item)
                    ))
                }
            };
            read_metrics(metrics, resource, &join(&at_item, "value"), out)?;
        }
        return Ok(());
    }
    if let Some(value) = obj.get("value") {
        let at_value = join(at, "value");
        let Value::Array(metrics) = value else {
            return Err(format!(
                "{at_value}: {EXPECTED}, found `value` holding {}",
                describe(value)
            ));
        };
        if let Some(i) = metrics.iter().position(|m| !is_metric(m)) {
            return Err(format!(
                "{at_value}[{i}]: expected a metric (with `timeseries`), found {}",
                describe(&metrics[i])
            ));
        }
        if let Some(interval) = opt_str(obj, "interval", at)? {
            out.intervals.insert(interval.to_string());
        }
        if let Some(timespan) = opt_str(obj, "timespan", at)? {
            out.timespans.insert(timespan.to_string());
        }
        return read_metrics(metrics, None, &at_value, out);
    }
    if let Some(error) = obj.get("error") {
        // What the service returns instead of metrics (bad query, retention, throttling).
        let code = error.get("code").and_then(Value::as_str).unwrap_or("?");
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        return Err(format!(
            "{EXPECTED}, found an Azure error response: {code}: {message}"
        ));
    }
    Err(format!(
        "{}{EXPECTED}, found {}",
        if at.is_empty() {
            String::new()
        } else {
            format!("{at}: ")
        },
        describe(body)
    ))
}

/// Read the `Metric` objects of one response (`batch_resource`: getBatch's `resourceid`).
fn read_metrics(
    metrics: &[Value],
    batch_resource: Option<&str>,
    at: &str,
    out: &mut Collector,
) -> Walk<()> {
    for (i, metric) in metrics.iter().enumerate() {
        let at_metric = format!("{at}[{i}]");
        let Value::Object(metric) = metric else {
            return Err(format!(
                "{at_metric}: expected a metric object, found {}",
                describe(metric)
            ));
        };
        let name = localizable(metric.get("name"), &format!("{at_metric}.name"))?;
        let resource = match (opt_str(metric, "id", &at_metric)?, batch_resource) {
            (Some(id), _) => resource_of(id).to_string(),
            (None, Some(resource)) => resource.to_string(),
            (None, None) => {
                return Err(format!(
                    "{at_metric}: metric `{name}` has no `id`, so its resource is unknown"
                ))
            }
        };
        let unit = opt_str(metric, "unit", &at_metric)?.map(str::to_string);

        if let Some(code) = opt_str(metric, "errorCode", &at_metric)? {
            if !code.eq_ignore_ascii_case("Success") {
                // The service says this metric failed: whatever `timeseries` holds
                // (normally `[]`) is not data.
                out.errors.push(MetricError {
                    resource,
                    metric: name.to_string(),
                    code: code.to_string(),
                    message: opt_str(metric, "errorMessage", &at_metric)?
                        .unwrap_or("")
                        .to_string(),
                });
                continue;
            }
        }

        let at_series = format!("{at_metric}.timeseries");
        for (j, series) in array_or_empty(metric.get("timeseries"), &at_series)?
            .iter()
            .enumerate()
        {
            let at_one = format!("{at_series}[{j}]");
            let Value::Object(series) = series else {
                return Err(format!(
                    "{at_one}: expected a time series object, found {}",
                    describe(series)
                ));
            };
            let dimensions = dimensions(series, &at_one)?;
            let at_data = format!("{at_one}.data");
            for (k, point) in array_or_empty(series.get("data"), &at_data)?
                .iter()
                .enumerate()
            {
                let at_point = format!("{at_data}[{k}]");
                let Value::Object(point) = point else {
                    return Err(format!(
                        "{at_point}: expected a data point object, found {}",
                        describe(point)
                    ));
                };
                let Some(stamp) = point.get("timeStamp") else {
                    return Err(format!("{at_point}: the data point has no `timeStamp`"));
                };
                let Some(timestamp_ms) = stamp.as_str().and_then(parse_timestamp) else {
                    return Err(format!(
                        "{at_point}.timeStamp: expected an ISO-8601 date-time, found {}",
                        describe(stamp)
                    ));
                };
                for aggregation in Aggregation::ALL {
                    let raw = match point.get(aggregation.as_str()) {
                        // Absent (the wire) and null (old CLI) both mean: not requested
                        // or no data in this bucket. Never a zero.
                        None | Some(Value::Null) => continue,
                        Some(raw) => raw,
                    };
                    let Some(value) = raw.as_f64() else {
                        return Err(format!(
                            "{at_point}.{aggregation}: expected a number or null, found {}",
                            describe(raw)
                        ));
                    };
                    out.values.push(MetricValue {
                        resource: resource.clone(),
                        metric: name.to_string(),
                        unit: unit.clone(),
                        aggregation,
                        dimensions: dimensions.clone(),
                        timestamp_ms,
                        value,
                    });
                }
            }
        }
    }
    Ok(())
}

/// The series' `metadatavalues` as sorted `(lower-cased name, value)` pairs.
fn dimensions(series: &Map<String, Value>, at: &str) -> Walk<Vec<(String, String)>> {
    let at_meta = format!("{at}.metadatavalues");
    let mut dims = vec![];
    for (i, meta) in array_or_empty(series.get("metadatavalues"), &at_meta)?
        .iter()
        .enumerate()
    {
        let at_one = format!("{at_meta}[{i}]");
        let name = localizable(meta.get("name"), &format!("{at_one}.name"))?;
        let value = match meta.get("value") {
            Some(Value::String(s)) => s.clone(),
            // A series split by a dimension the resource did not set.
            None | Some(Value::Null) => String::new(),
            Some(other) => {
                return Err(format!(
                    "{at_one}.value: expected a dimension value string, found {}",
                    describe(other)
                ))
            }
        };
        dims.push((name.to_lowercase(), value));
    }
    dims.sort();
    Ok(dims)
}

/// A `LocalizableString`'s `value` (the REST name, not the display name). A plain string is
/// taken as is: some clients flatten the object when they re-serialize.
fn localizable<'a>(v: Option<&'a Value>, at: &str) -> Walk<&'a str> {
    match v {
        Some(Value::String(s)) => Ok(s),
        Some(Value::Object(o)) => match o.get("value") {
            Some(Value::String(s)) => Ok(s),
            other => Err(format!(
                "{at}.value: expected a name string, found {}",
                other.map_or_else(|| "nothing".to_string(), describe)
            )),
        },
        Some(other) => Err(format!(
            "{at}: expected {{value, localizedValue}}, found {}",
            describe(other)
        )),
        None => Err(format!("{at}: missing")),
    }
}

/// A string member, where null counts as absent (the old CLI writes `"errorMessage": null`).
fn opt_str<'a>(obj: &'a Map<String, Value>, key: &str, at: &str) -> Walk<Option<&'a str>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!(
            "{}: expected a string, found {}",
            join(at, key),
            describe(other)
        )),
    }
}

/// An array member, where absent and null are empty.
fn array_or_empty<'a>(v: Option<&'a Value>, at: &str) -> Walk<&'a [Value]> {
    match v {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(format!(
            "{at}: expected an array, found {}",
            describe(other)
        )),
    }
}

/// The resource part of a metric id. Subscription-scope ids lack the leading `/`; they are
/// kept as written.
fn resource_of(id: &str) -> &str {
    // ASCII lower-casing keeps byte offsets, so the position found applies to `id`.
    match id.to_ascii_lowercase().rfind(METRIC_ID_TAIL) {
        Some(at) => &id[..at],
        None => id,
    }
}

/// `Z`, `+00:00` or any other offset; a time without offset is taken as UTC.
fn parse_timestamp(s: &str) -> Option<i64> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s.trim()) {
        return Some(t.timestamp_millis());
    }
    NaiveDateTime::parse_from_str(s.trim(), "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|t| t.and_utc().timestamp_millis())
}

/// ISO-8601 duration after the `P`: `[nW][nD][T[nH][nM][nS]]`, fractions allowed.
fn iso_duration_ms(rest: &str) -> Option<i64> {
    let mut total = 0f64;
    let mut number = String::new();
    let mut in_time = false;
    let mut any = false;
    // Rank of the last designator read: each must come after the previous one.
    let mut last = 0;
    for c in rest.chars() {
        let c = c.to_ascii_uppercase();
        match c {
            '0'..='9' | '.' => number.push(c),
            ',' => number.push('.'),
            'T' if !in_time && number.is_empty() => in_time = true,
            _ => {
                let (rank, unit_ms) = match (in_time, c) {
                    // Years and months have no fixed length.
                    (false, 'W') => (1, 604_800_000.0),
                    (false, 'D') => (2, 86_400_000.0),
                    (true, 'H') => (3, 3_600_000.0),
                    (true, 'M') => (4, 60_000.0),
                    (true, 'S') => (5, 1_000.0),
                    _ => return None,
                };
                if rank <= last {
                    return None;
                }
                last = rank;
                let n: f64 = number.parse().ok()?;
                number.clear();
                total += n * unit_ms;
                any = true;
            }
        }
    }
    // `PT` with nothing after it, or a trailing number without designator.
    if !any || !number.is_empty() || (in_time && last < 3) {
        return None;
    }
    to_ms(total)
}

/// Python `str(timedelta)`: `H:MM:SS[.ffffff]`, with `N day[s], ` in front past a day.
fn timedelta_ms(s: &str) -> Option<i64> {
    let (days, clock) = match s.split_once(',') {
        Some((days, clock)) => {
            let days = days.trim();
            let n = days
                .strip_suffix("days")
                .or_else(|| days.strip_suffix("day"))?
                .trim();
            (n.parse::<i64>().ok()?, clock.trim())
        }
        None => (0, s),
    };
    let mut parts = clock.split(':');
    let (h, m, sec) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !all_digits(h) || !all_digits(m) || m.len() != 2 {
        return None;
    }
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    if whole.len() != 2 || !all_digits(whole) || !frac.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (h, m, sec): (f64, f64, f64) = (h.parse().ok()?, m.parse().ok()?, sec.parse().ok()?);
    if m >= 60.0 || sec >= 60.0 {
        return None;
    }
    to_ms(days as f64 * 86_400_000.0 + h * 3_600_000.0 + m * 60_000.0 + sec * 1_000.0)
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit())
}

fn to_ms(total: f64) -> Option<i64> {
    // Within ±2^53 an f64 holds whole milliseconds exactly; beyond that is not an interval.
    (total.is_finite() && total.abs() < 9_007_199_254_740_992.0).then(|| total.round() as i64)
}

/// serde_json's message with the position said once, in words. When the text does not
/// even start like a JSON document (a CSV, a log line), its start says more than
/// serde_json's "expected ident".
fn json_syntax_message(e: &serde_json::Error, text: &str) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let reason = full.strip_suffix(&suffix).unwrap_or(&full);
    let start = text.trim_start();
    let hint = if start.starts_with(['{', '[']) {
        String::new()
    } else {
        let head: String = start
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(40)
            .collect();
        format!(" (the text starts with {head:?})")
    };
    format!(
        "not valid JSON at line {}, column {}: {reason}{hint}; {EXPECTED}",
        e.line(),
        e.column()
    )
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn path_or_root(at: &str) -> &str {
    if at.is_empty() {
        "the top level"
    } else {
        at
    }
}

/// A short description of a JSON value for "found …" in messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let mut shown: String = s.chars().take(40).collect();
            if shown.len() < s.len() {
                shown.push('…');
            }
            format!("the string {shown:?}")
        }
        Value::Array(items) => format!(
            "a JSON array of {}",
            crate::words::plural(items.len() as u64, "item")
        ),
        Value::Object(obj) => describe_object(obj),
    }
}

fn describe_object(obj: &Map<String, Value>) -> String {
    if obj.is_empty() {
        return "an empty object".to_string();
    }
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).take(8).collect();
    if obj.len() > keys.len() {
        keys.push("…");
    }
    format!("an object with keys {}", keys.join(", "))
}
