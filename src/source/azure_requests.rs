//! Azure OpenAI `RequestResponse` resource logs (JSON lines, as a diagnostic setting
//! delivers them to Event Hub or storage) → a raw polars frame whose column names are
//! canonical field names, so the gateway pipeline's canonical mapping picks every column
//! up by exact name. Record shape: docs/azure.md §3.2–3.3; a real sample is
//! `fixtures/external/azure/elastic_test-open-ai-request-response.log`.
//!
//! | column | from the record | type |
//! |---|---|---|
//! | `request_id` | `correlationId` | String |
//! | `timestamp` | `time`, as written | String (the canonical mapping parses it) |
//! | `model` | `properties.modelName` | String |
//! | `channel` | `properties.modelDeploymentName` | String |
//! | `region` | `location` | String |
//! | `status` | `resultSignature` | String (the canonical mapping casts it) |
//! | `is_stream` | `properties.streamType` | Boolean |
//! | `input_tokens`, `output_tokens` | `properties.promptTokens`, `completionTokens` | Int64 |
//! | `total_handler_ms` | `durationMs` | Float64 |
//!
//! What the figures mean, and why the rules are what they are:
//! - **`durationMs` is the only timing the record has**, and it is the *service's* own
//!   duration for the request: its origin is the Azure OpenAI service receiving the
//!   request, not a gateway's t0, so it leaves out the client's and any gateway's network
//!   and queueing time. There is no first-token or upstream mark in these records; every
//!   other timing field stays null. It goes to `total_handler_ms` because that is the
//!   end-to-end figure of the catalogue; a reader comparing it with gateway logs must
//!   remember the different origin.
//! - `properties.requestTime`/`responseTime` are .NET ticks (100 ns since
//!   0001-01-01T00:00:00Z); (responseTime − requestTime) / 10 000 equals `durationMs` to
//!   within a millisecond (unit test below). They add nothing `durationMs` lacks, so they
//!   are not read into the frame.
//! - `time` is when the record was written, not when the request arrived: on the real
//!   sample's line 1 it is 2.8 s after `responseTime`. It is kept as written because it is
//!   the only wall-clock time of the record that every export carries; its 7-digit
//!   fraction (`…02.4350000Z`) parses through the canonical mapping as it is (unit test).
//! - `properties` arrives as an object or as a JSON-encoded string (both in the real
//!   sample). A blank string is "no properties", like a blank `other` column in the
//!   canonical mapping; a string that is not a JSON object is an error naming the line.
//! - `streamType`: `Streaming` → true, `Non-Streaming` → false, compared without case and
//!   without `-`, `_` or spaces, because logs and metric dimensions spell it differently
//!   (docs/azure.md §3.2, §4.2). Any other value, or none, is null: unknown is not "not streamed".
//! - Token counts are in some Log Analytics rows (docs/azure.md §3.3), not in the Event Hub
//!   sample; absent means null, never 0.
//! - A negative `durationMs` (the real sample's test-edited line 3) is kept as it is: the
//!   data-quality checks flag negative durations, and dropping it here would hide it.
//! - Other categories (`Audit`, `Trace`, `AzureOpenAIRequestUsage`, …) are skipped and
//!   counted; a line without a `category` is not a resource-log record and is an error.
//! - Only the columns above are read. Identity fields (`callerIpAddress`, `objectId`,
//!   `callerObjectId`, `AssetIdentity`, …) and the resource id are never copied into the
//!   frame; these records carry no prompt or response text.
//! - A value of the wrong JSON type (a number where text is expected, text that is not a
//!   number where one is expected) is an error naming the file, the line and the field.
//!   Nothing here panics on any input.

use std::path::Path;

use polars::prelude::*;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The resource-log category this reader keeps.
const CATEGORY: &str = "RequestResponse";

/// What every "not this kind of file" message ends with.
const EXPECTED: &str =
    "expected Azure OpenAI resource logs (JSON lines with \"category\": \"RequestResponse\")";

/// The frame read from one `RequestResponse` log, with what was kept and skipped.
#[derive(Debug, Clone)]
pub struct RequestLog {
    /// One row per `RequestResponse` record, in file order, canonical column names.
    pub frame: DataFrame,
    /// Number of `RequestResponse` records (the frame's height).
    pub kept: usize,
    /// Records of other categories (e.g. `Audit`), left out.
    pub skipped_other_categories: usize,
}

/// True when the first non-empty line is a JSON object with "category": "RequestResponse"
/// (case-insensitive) and an "operationName".
pub fn looks_like_request_response(first_line: &str) -> bool {
    let Some(line) = first_line
        .lines()
        .map(|l| l.trim_start_matches('\u{feff}').trim())
        .find(|l| !l.is_empty())
    else {
        return false;
    };
    let Ok(Value::Object(record)) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    let category = record.get("category").and_then(Value::as_str);
    category.is_some_and(|c| c.eq_ignore_ascii_case(CATEGORY))
        && record.contains_key("operationName")
}

/// Parse every line, keep the `RequestResponse` records, and build the frame (see the
/// module documentation for the columns).
pub fn read(path: &Path) -> Result<RequestLog> {
    let bytes = std::fs::read(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::input(
            path,
            format!(
                "not UTF-8 text (invalid byte at offset {}); {EXPECTED}",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    parse(&text, path)
}

/// [`read`] on text already in memory; `path` names the file in messages.
pub fn parse(text: &str, path: &Path) -> Result<RequestLog> {
    let mut rows = vec![];
    let mut records = 0usize;
    let mut skipped = 0usize;
    for (i, raw) in text.split('\n').enumerate() {
        let number = i + 1;
        // A BOM only ever starts the file; `\r` ends lines written on Windows.
        let line = if i == 0 {
            raw.trim_start_matches('\u{feff}')
        } else {
            raw
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        records += 1;
        let at = |message: String| Error::input(path, format!("line {number}: {message}"));
        let value: Value = serde_json::from_str(line)
            .map_err(|e| at(format!("not valid JSON ({}); {EXPECTED}", syntax(&e))))?;
        let Value::Object(record) = value else {
            return Err(at(format!(
                "expected a JSON object, found {}; {EXPECTED}",
                kind(&value)
            )));
        };
        let category = match record.get("category") {
            Some(Value::String(s)) => s,
            None | Some(Value::Null) => {
                return Err(at(format!(
                    "no `category`: not a resource-log record; {EXPECTED}"
                )))
            }
            Some(other) => {
                return Err(at(format!(
                    "field `category`: expected a string, found {}",
                    describe(other)
                )))
            }
        };
        if !category.eq_ignore_ascii_case(CATEGORY) {
            skipped += 1;
            continue;
        }
        rows.push(Row::from_record(&record).map_err(at)?);
    }
    if records == 0 {
        return Err(Error::input(path, format!("the file is empty: {EXPECTED}")));
    }
    let frame = to_frame(&rows).map_err(|e| {
        Error::input(
            path,
            format!("cannot build the frame: {}", super::polars_message(&e)),
        )
    })?;
    Ok(RequestLog {
        frame,
        kept: rows.len(),
        skipped_other_categories: skipped,
    })
}

/// The values of one `RequestResponse` record that reach the frame; `None` is null.
#[derive(Debug, Default)]
struct Row {
    request_id: Option<String>,
    timestamp: Option<String>,
    model: Option<String>,
    channel: Option<String>,
    region: Option<String>,
    status: Option<String>,
    is_stream: Option<bool>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    total_handler_ms: Option<f64>,
}

impl Row {
    /// Errors are the message only; the caller adds the file and line.
    fn from_record(record: &Map<String, Value>) -> std::result::Result<Row, String> {
        let owned_properties;
        let properties = match record.get("properties") {
            None | Some(Value::Null) => None,
            Some(Value::Object(p)) => Some(p),
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(p)) => {
                    owned_properties = p;
                    Some(&owned_properties)
                }
                Ok(other) => {
                    return Err(format!(
                        "field `properties`: a JSON string holding {}, expected an object",
                        kind(&other)
                    ))
                }
                Err(e) => {
                    return Err(format!(
                        "field `properties`: a string that is not valid JSON ({} of the string)",
                        syntax(&e)
                    ))
                }
            },
            Some(other) => {
                return Err(format!(
                    "field `properties`: expected an object or a JSON string, found {}",
                    describe(other)
                ))
            }
        };
        let prop = |key: &str| properties.and_then(|p| p.get(key));
        Ok(Row {
            request_id: text(record.get("correlationId"), "correlationId")?,
            timestamp: text(record.get("time"), "time")?,
            model: text(prop("modelName"), "properties.modelName")?,
            channel: text(
                prop("modelDeploymentName"),
                "properties.modelDeploymentName",
            )?,
            region: text(record.get("location"), "location")?,
            status: status(record.get("resultSignature"))?,
            is_stream: stream_type(prop("streamType")),
            input_tokens: whole(prop("promptTokens"), "properties.promptTokens")?,
            output_tokens: whole(prop("completionTokens"), "properties.completionTokens")?,
            total_handler_ms: number(record.get("durationMs"), "durationMs")?,
        })
    }
}

fn to_frame(rows: &[Row]) -> PolarsResult<DataFrame> {
    let text = |name: &str, f: &dyn Fn(&Row) -> Option<&str>| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let count = |name: &str, f: &dyn Fn(&Row) -> Option<i64>| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let columns = vec![
        text("request_id", &|r| r.request_id.as_deref()),
        text("timestamp", &|r| r.timestamp.as_deref()),
        text("model", &|r| r.model.as_deref()),
        text("channel", &|r| r.channel.as_deref()),
        text("region", &|r| r.region.as_deref()),
        text("status", &|r| r.status.as_deref()),
        Column::new(
            "is_stream".into(),
            rows.iter().map(|r| r.is_stream).collect::<Vec<_>>(),
        ),
        count("input_tokens", &|r| r.input_tokens),
        count("output_tokens", &|r| r.output_tokens),
        Column::new(
            "total_handler_ms".into(),
            rows.iter().map(|r| r.total_handler_ms).collect::<Vec<_>>(),
        ),
    ];
    DataFrame::new(rows.len(), columns)
}

/// A text field: a string as written; absent or null is null.
fn text(v: Option<&Value>, field: &str) -> std::result::Result<Option<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(wrong(field, "a string", other)),
    }
}

/// `resultSignature` is an HTTP status written as a string; a number is taken as its text
/// so the canonical mapping casts both alike.
fn status(v: Option<&Value>) -> std::result::Result<Option<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(wrong("resultSignature", "a string or a number", other)),
    }
}

/// `streamType` spellings differ between logs and metric dimensions; unknown is null.
fn stream_type(v: Option<&Value>) -> Option<bool> {
    let s = v?.as_str()?;
    let key: String = s
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .collect::<String>()
        .to_ascii_lowercase();
    match key.as_str() {
        "streaming" => Some(true),
        "nonstreaming" => Some(false),
        _ => None,
    }
}

/// A JSON number, or a string holding one (exports that write every value as text).
fn number(v: Option<&Value>, field: &str) -> std::result::Result<Option<f64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| format!("field `{field}`: {n} is not a finite number")),
        Some(Value::String(s)) => match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(wrong(field, "a number", &Value::String(s.clone()))),
        },
        Some(other) => Err(wrong(field, "a number", other)),
    }
}

/// A count: a whole JSON number (`12` or `12.0`), or a string holding one.
fn whole(v: Option<&Value>, field: &str) -> std::result::Result<Option<i64>, String> {
    let x = number(v, field)?;
    match x {
        None => Ok(None),
        // Within ±2^53 an f64 holds whole numbers exactly.
        Some(x) if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 => Ok(Some(x as i64)),
        Some(x) => Err(format!(
            "field `{field}`: expected a whole number, found {x}"
        )),
    }
}

fn wrong(field: &str, expected: &str, found: &Value) -> String {
    format!(
        "field `{field}`: expected {expected}, found {}",
        describe(found)
    )
}

/// serde_json's reason and column, without its "line 1" (each line is parsed alone).
fn syntax(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let reason = full.strip_suffix(&suffix).unwrap_or(&full);
    format!("{reason} at column {}", e.column())
}

/// What a whole line or the `properties` container holds, by its type: either may hold
/// anything, prompt text included, so a string there is never quoted (`describe` quotes the
/// head of a field's value, which is metadata: an id, a time, a spelling).
fn kind(v: &Value) -> String {
    match v {
        Value::String(_) => "a string".to_string(),
        other => describe(other),
    }
}

/// A short description of a JSON value for "found …" in messages. Strings are not quoted
/// whole: a field that should be short may hold anything.
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let head: String = s.chars().take(40).collect();
            if head.len() < s.len() {
                format!("the string {head:?}…")
            } else {
                format!("the string {head:?}")
            }
        }
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn sample() -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/external/azure/elastic_test-open-ai-request-response.log")
    }

    /// .NET ticks: 100 ns since 0001-01-01T00:00:00Z; this many lie before 1970-01-01.
    const TICKS_AT_UNIX_EPOCH: i64 = 621_355_968_000_000_000;
    const TICKS_PER_MS: i64 = 10_000;

    fn properties_of(record: &Value) -> Map<String, Value> {
        match &record["properties"] {
            Value::Object(p) => p.clone(),
            Value::String(s) => match serde_json::from_str(s).unwrap() {
                Value::Object(p) => p,
                other => panic!("properties string holds {other}"),
            },
            other => panic!("properties is {other}"),
        }
    }

    /// `requestTime`/`responseTime` are ticks: their difference ÷ 10 000 is `durationMs`
    /// (lines 1–2 of the real sample; line 3 is a test-edited copy with a negative
    /// duration). And `time` is when the record was written, after the response.
    #[test]
    fn ticks_difference_is_duration_ms_and_time_follows_the_response() {
        let text = std::fs::read_to_string(sample()).unwrap();
        let records: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for (i, record) in records.iter().take(2).enumerate() {
            let p = properties_of(record);
            let request = p["requestTime"].as_i64().unwrap();
            let response = p["responseTime"].as_i64().unwrap();
            let ms = (response - request) as f64 / TICKS_PER_MS as f64;
            let duration = record["durationMs"].as_f64().unwrap();
            assert!(
                (ms - duration).abs() < 1.0,
                "line {}: ticks give {ms} ms, durationMs is {duration}",
                i + 1
            );
        }
        // Line 1 (unedited): request at 12:22:59.485, response at 12:22:59.588,
        // record `time` 12:23:02.435.
        let p = properties_of(&records[0]);
        let to_unix_ms = |t: i64| (t - TICKS_AT_UNIX_EPOCH) / TICKS_PER_MS;
        let request_ms = to_unix_ms(p["requestTime"].as_i64().unwrap());
        let response_ms = to_unix_ms(p["responseTime"].as_i64().unwrap());
        let time = DateTime::parse_from_rfc3339(records[0]["time"].as_str().unwrap())
            .unwrap()
            .timestamp_millis();
        let expected_request = DateTime::parse_from_rfc3339("2024-04-08T12:22:59.485Z")
            .unwrap()
            .timestamp_millis();
        assert_eq!(request_ms, expected_request);
        assert!(time > response_ms, "time {time} ≤ response {response_ms}");
        assert_eq!(time - response_ms, 2_848);
    }

    /// The frame's columns are found by exact name by the canonical mapping, and the
    /// 7-digit fractions of `time` parse there as they are.
    #[test]
    fn canonical_mapping_takes_every_column_by_name_and_parses_seven_digit_fractions() {
        let path = sample();
        let log = read(&path).unwrap();
        let schema = log.frame.schema().clone();
        let mapping = super::super::canonical::map(&schema, &path).unwrap();
        for name in log.frame.get_column_names() {
            let found = mapping
                .fields
                .iter()
                .find(|(n, _, _)| n == name.as_str())
                .unwrap_or_else(|| panic!("{name} is not a canonical field"));
            assert_eq!(found.1, super::super::Origin::Column(name.to_string()));
        }
        let df = super::super::canonical::select(
            log.frame.lazy(),
            &schema,
            &mapping,
            &path,
            &[],
            &[],
            super::super::canonical::Rows::All,
        )
        .collect()
        .unwrap();
        let ts = df
            .column("timestamp")
            .unwrap()
            .cast(&DataType::Int64)
            .unwrap();
        let expected: Vec<Option<i64>> = [
            "2024-04-08T12:23:02.435Z",
            "2024-05-24T12:23:02.435Z",
            "2024-05-24T12:23:02.435Z",
        ]
        .iter()
        .map(|s| Some(DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()))
        .collect();
        assert_eq!(ts.i64().unwrap().to_vec(), expected);
        let unparsed = df.column("__unparsed_timestamp").unwrap().bool().unwrap();
        assert_eq!(unparsed.iter().collect::<Vec<_>>(), vec![Some(false); 3]);
        let status = df.column("status").unwrap().i64().unwrap().to_vec();
        assert_eq!(status, vec![Some(200); 3]);
        let total = df
            .column("total_handler_ms")
            .unwrap()
            .f64()
            .unwrap()
            .to_vec();
        assert_eq!(total, vec![Some(102.0), Some(1021.0), Some(-1021.0)]);
        let stream: Vec<_> = df
            .column("is_stream")
            .unwrap()
            .bool()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(stream, vec![None, Some(false), Some(false)]);
        let outcome = df.column("outcome").unwrap().str().unwrap();
        assert_eq!(outcome.get(0), Some("ok"));
        // No timing other than total_handler_ms: the others are absent, hence null.
        let first = df.column("first_response_ms").unwrap();
        assert_eq!(first.null_count(), 3);
    }

    #[test]
    fn stream_type_spellings() {
        let v = |s: &str| Value::String(s.into());
        assert_eq!(stream_type(Some(&v("Streaming"))), Some(true));
        assert_eq!(stream_type(Some(&v("STREAMING"))), Some(true));
        assert_eq!(stream_type(Some(&v("Non-Streaming"))), Some(false));
        assert_eq!(stream_type(Some(&v("NonStreaming"))), Some(false));
        assert_eq!(stream_type(Some(&v("non_streaming"))), Some(false));
        assert_eq!(stream_type(Some(&v("Batch"))), None);
        assert_eq!(stream_type(Some(&v(""))), None);
        assert_eq!(stream_type(Some(&Value::Bool(true))), None);
        assert_eq!(stream_type(None), None);
    }
}
