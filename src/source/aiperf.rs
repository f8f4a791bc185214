//! NVIDIA AIPerf per-request exports → a frame in AIPerf's own terms (`scan`), and from it
//! the canonical columns (`canonical`). Two files are read:
//!
//! - **`profile_export.jsonl`**, one record per request, in both schemas AIPerf has
//!   written: the 2025 one (metric tags `ttft`/`ttst`, metadata `timestamp_ns`,
//!   `credit_phase`; AIPerf's `examples/artifacts/run1`) and the 2026 one
//!   (`time_to_first_token`/`time_to_second_token`, `request_start_ns`/`request_end_ns`,
//!   `was_cancelled`, `benchmark_phase`). Read by polars' JSON-lines reader with a fixed
//!   schema naming only the keys below, so no other value (the prompt, the HTTP trace, the
//!   per-chunk timestamps other than `inter_chunk_latency`) is ever materialised.
//! - **the per-request scalars CSV** (`request_start_ns, time_to_first_token_ms,
//!   request_latency_ms, output_sequence_length, …`: one row per record, the figures in ms
//!   as AIPerf writes them), read as text and cast.
//!
//! | AIPerf | column of `scan` | canonical field |
//! |---|---|---|
//! | `metadata.x_request_id` | `x_request_id` | `request_id` |
//! | `metadata.timestamp_ns` / `request_start_ns` (wall clock, ns) | `request_start_ns` | `timestamp` (Unix ns, told by size) |
//! | `metrics.ttft` / `time_to_first_token` (ms) | `time_to_first_token` | `client_ttft_ms` (c0 → c1) |
//! | `metrics.request_latency` (ms) | `request_latency` | `client_latency_ms` (c0 → c2) |
//! | `metrics.output_sequence_length` | `output_sequence_length` | `output_tokens` |
//! | `metrics.input_sequence_length` | `input_sequence_length` | `input_tokens` |
//! | `error`, `metadata.was_cancelled` | `has_error`, `error_code`, `was_cancelled` | `outcome` |
//!
//! What the figures mean:
//! - **Origin c0 is the client's send** (`start_perf_ns`), not a gateway's t0: AIPerf is
//!   the benchmark client. So the timings go to the client fields of the catalogue, never to
//!   t-fields; the client table (`rules/client.toml`) judges the requests on that clock,
//!   its figures reported as named metrics.
//! - **c1 is AIPerf's first token**: the first SSE message whose `delta.content` or
//!   reasoning is non-empty (role-only, usage-only chunks and `[DONE]` are not responses).
//!   **c2 is its last content message**, not the end of the stream: in the 2026 sample
//!   `request_end_ns − request_start_ns` exceeds `request_latency` by up to 56 ms.
//! - `output_sequence_length` is AIPerf's tokenizer count of content plus reasoning text,
//!   not the provider's `usage`; it is what AIPerf divides by, so it is what
//!   `output_tokens` holds.
//! - The ns timestamps are wall-clock (`time.time_ns()`); AIPerf measures latencies on
//!   `perf_counter_ns`, so only `timestamp` comes from them, never a duration.
//! - **Outcome**: an `error` object with code 499 (AIPerf's `RequestCancellationError`) or
//!   `was_cancelled: true` → `cancelled`; any other `error` → `error`; neither → `ok`. Error
//!   records stay in as requests (they carry no timing, so their timing fields are null).
//!   The CSV has no error column: a row with a `request_latency_ms` is a valid record (AIPerf
//!   computes the latency only for those), a row without one has an unknown outcome.
//! - `status` stays null: AIPerf's error code is its own (499 is not an HTTP response the
//!   server sent), and a valid record does not say its HTTP status. `is_stream` stays null
//!   too: the record does not say whether the request asked for a stream.
//! - A value of the wrong JSON type in a field read here (text where AIPerf writes a
//!   number) is an error naming the line and the field; polars alone would fail the whole
//!   read without one. The CSV's cells go to the canonical mapping as text, so a cell that is
//!   not a number is null and counted (`dq_unparsed`).
//! - The other metrics AIPerf records (`time_to_second_token`, `inter_chunk_latency`,
//!   `output_token_count`, `reasoning_token_count`) are read by `scan` for the AIPerf
//!   figures (`peer::aiperf`), and are no canonical field.

use std::path::Path;

use polars::prelude::*;

use super::{csv, spool, InputFormat};
use crate::error::{Error, Result};

/// What a run notes about an AIPerf file: the clock and rules its figures follow.
pub const CLOCK_NOTE: &str = "AIPerf's client clock: client_ttft_ms is AIPerf's time_to_first_token, by AIPerf's first-token rule (from the client's send to the first SSE message with content or reasoning); client_latency_ms ends at the last content message, not at the stream's end; output_tokens is AIPerf's output_sequence_length (its tokenizer's count, reasoning included). The client table (rules/client.toml) classifies the requests on that clock";

pub const REQUEST_ID: &str = "x_request_id";
/// Wall-clock ns of the request's start (`timestamp_ns` in the 2025 schema).
pub const START_NS: &str = "request_start_ns";
pub const TTFT: &str = "time_to_first_token";
pub const TTST: &str = "time_to_second_token";
pub const LATENCY: &str = "request_latency";
pub const OSL: &str = "output_sequence_length";
pub const ISL: &str = "input_sequence_length";
pub const OUTPUT_TOKENS: &str = "output_token_count";
pub const REASONING_TOKENS: &str = "reasoning_token_count";
/// The gaps between content messages, ms (a list per record).
pub const ICL: &str = "inter_chunk_latency";
/// Whether the record is an error record (null: unknown).
pub const HAS_ERROR: &str = "has_error";
pub const ERROR_CODE: &str = "error_code";
pub const CANCELLED: &str = "was_cancelled";
/// Whether the record is written in the 2026 schema (`time_to_first_token`,
/// `request_start_ns`).
pub const NEW_SCHEMA: &str = "new_schema";

/// AIPerf's code for a request it cancelled (`RequestCancellationError`).
const CANCELLATION_CODE: i64 = 499;

/// True when the first non-empty line of a JSON-lines file is an AIPerf record: an object
/// with a `metadata` object and a `metrics` object.
pub fn looks_like_records(first_line: &str) -> bool {
    let Ok(serde_json::Value::Object(record)) = serde_json::from_str(first_line.trim()) else {
        return false;
    };
    record.get("metadata").is_some_and(|m| m.is_object())
        && record.get("metrics").is_some_and(|m| m.is_object())
}

/// The CSV columns that make a file the per-request scalars CSV.
const SCALARS_SIGNATURE: [&str; 3] = [
    "request_start_ns",
    "time_to_first_token_ms",
    "request_latency_ms",
];

/// True when a CSV header line names the per-request scalars' columns.
pub fn looks_like_scalars(header: &str) -> bool {
    let names: Vec<&str> = header
        .trim_start_matches('\u{feff}')
        .trim()
        .split(',')
        .map(|n| n.trim().trim_matches('"'))
        .collect();
    SCALARS_SIGNATURE.iter().all(|s| names.contains(s))
}

/// A metric block `{"value": …, "unit": …}` as read: the value alone.
fn metric(dtype: DataType) -> DataType {
    DataType::Struct(vec![Field::new("value".into(), dtype)])
}

/// The keys of a record that are read; every other key is skipped by the reader.
fn record_schema() -> Schema {
    let text = || DataType::String;
    let whole = || DataType::Int64;
    let metadata = DataType::Struct(vec![
        Field::new("x_request_id".into(), text()),
        Field::new("timestamp_ns".into(), whole()),
        Field::new("request_start_ns".into(), whole()),
        Field::new("was_cancelled".into(), DataType::Boolean),
    ]);
    let number = || metric(DataType::Float64);
    let metrics = DataType::Struct(vec![
        Field::new("ttft".into(), number()),
        Field::new("time_to_first_token".into(), number()),
        Field::new("ttst".into(), number()),
        Field::new("time_to_second_token".into(), number()),
        Field::new(LATENCY.into(), number()),
        Field::new(OSL.into(), number()),
        Field::new(ISL.into(), number()),
        Field::new(OUTPUT_TOKENS.into(), number()),
        Field::new(REASONING_TOKENS.into(), number()),
        Field::new(
            ICL.into(),
            metric(DataType::List(Box::new(DataType::Float64))),
        ),
    ]);
    let error = DataType::Struct(vec![Field::new("code".into(), whole())]);
    Schema::from_iter([
        Field::new("metadata".into(), metadata),
        Field::new("metrics".into(), metrics),
        Field::new("error".into(), error),
    ])
}

/// The file's records (or scalar rows) in AIPerf's terms: one row per record, the columns
/// named by the constants above. `repaired` is the row check's copy of the rows, when it
/// made one.
pub fn scan(
    path: &Path,
    format: InputFormat,
    repaired: Option<&spool::Spooled>,
) -> Result<LazyFrame> {
    match format {
        InputFormat::AiperfCsv => scan_scalars(path, repaired),
        _ => scan_records(path, repaired),
    }
}

fn scan_records(path: &Path, repaired: Option<&spool::Spooled>) -> Result<LazyFrame> {
    if repaired.is_some_and(|r| std::fs::metadata(r.path()).is_ok_and(|m| m.len() == 0)) {
        // Every row was bad and skipped: no rows.
        return Ok(DataFrame::empty_with_schema(&records_columns()).lazy());
    }
    let lf = LazyJsonLineReader::new_with_sources(super::scan_sources(path, repaired)?)
        .with_schema(Some(Arc::new(record_schema())))
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!(
                    "cannot read as AIPerf records: {}",
                    super::polars_message(&e)
                ),
            )
        })?;
    let meta = |k: &str| col("metadata").struct_().field_by_name(k);
    let value = |k: &str| {
        col("metrics")
            .struct_()
            .field_by_name(k)
            .struct_()
            .field_by_name("value")
    };
    let cancelled = meta("was_cancelled");
    Ok(lf.select([
        meta("x_request_id").alias(REQUEST_ID),
        coalesce(&[meta("request_start_ns"), meta("timestamp_ns")]).alias(START_NS),
        coalesce(&[value("time_to_first_token"), value("ttft")]).alias(TTFT),
        coalesce(&[value("time_to_second_token"), value("ttst")]).alias(TTST),
        value(LATENCY).alias(LATENCY),
        value(OSL).alias(OSL),
        value(ISL).alias(ISL),
        value(OUTPUT_TOKENS).alias(OUTPUT_TOKENS),
        value(REASONING_TOKENS).alias(REASONING_TOKENS),
        value(ICL).alias(ICL),
        col("error").is_not_null().alias(HAS_ERROR),
        col("error")
            .struct_()
            .field_by_name("code")
            .alias(ERROR_CODE),
        cancelled.alias(CANCELLED),
        meta("request_start_ns")
            .is_not_null()
            .or(value("time_to_first_token").is_not_null())
            .alias(NEW_SCHEMA),
    ]))
}

/// The columns `scan` gives, with their types (what an empty file has).
fn records_columns() -> Schema {
    let f = |n: &str, d: DataType| Field::new(n.into(), d);
    Schema::from_iter([
        f(REQUEST_ID, DataType::String),
        f(START_NS, DataType::Int64),
        f(TTFT, DataType::Float64),
        f(TTST, DataType::Float64),
        f(LATENCY, DataType::Float64),
        f(OSL, DataType::Float64),
        f(ISL, DataType::Float64),
        f(OUTPUT_TOKENS, DataType::Float64),
        f(REASONING_TOKENS, DataType::Float64),
        f(ICL, DataType::List(Box::new(DataType::Float64))),
        f(HAS_ERROR, DataType::Boolean),
        f(ERROR_CODE, DataType::Int64),
        f(CANCELLED, DataType::Boolean),
        f(NEW_SCHEMA, DataType::Boolean),
    ])
}

/// The CSV's columns and what each becomes; a column the file lacks is null.
const SCALAR_COLUMNS: [(&str, &str); 8] = [
    ("x_request_id", REQUEST_ID),
    ("request_start_ns", START_NS),
    ("time_to_first_token_ms", TTFT),
    ("time_to_second_token_ms", TTST),
    ("request_latency_ms", LATENCY),
    ("output_sequence_length", OSL),
    ("input_sequence_length", ISL),
    ("output_token_count", OUTPUT_TOKENS),
];

/// The per-request CSV, scanned, with its header's schema.
fn scan_csv(path: &Path, repaired: Option<&spool::Spooled>) -> Result<(LazyFrame, SchemaRef)> {
    let mut raw = csv::scan(path, repaired)?;
    let schema = raw.collect_schema().map_err(|e| {
        Error::input(
            path,
            format!("cannot read the CSV header: {}", super::polars_message(&e)),
        )
    })?;
    Ok((raw, schema))
}

fn scan_scalars(path: &Path, repaired: Option<&spool::Spooled>) -> Result<LazyFrame> {
    let (raw, schema) = scan_csv(path, repaired)?;
    let types = records_columns();
    let mut exprs: Vec<Expr> = SCALAR_COLUMNS
        .iter()
        .map(|(from, to)| {
            let dtype = types.get(to).cloned().expect("a column of `scan`");
            if schema.contains(from) {
                // A cell that is not a number is null here (the AIPerf figures leave it
                // out); the canonical path reads the text itself (`scalars_canonical`)
                // and counts it as unparsed.
                let text = col(*from).str().strip_chars(lit(NULL));
                if dtype == DataType::Int64 {
                    text.cast(DataType::Int64).alias(*to)
                } else {
                    text.cast(DataType::Float64).alias(*to)
                }
            } else {
                lit(NULL).cast(dtype).alias(*to)
            }
        })
        .collect();
    let latency = col(LATENCY);
    exprs.extend([
        lit(NULL).cast(DataType::Float64).alias(REASONING_TOKENS),
        lit(NULL)
            .cast(DataType::List(Box::new(DataType::Float64)))
            .alias(ICL),
        when(latency.is_not_null())
            .then(lit(false))
            .otherwise(lit(NULL).cast(DataType::Boolean))
            .alias(HAS_ERROR),
        lit(NULL).cast(DataType::Int64).alias(ERROR_CODE),
        lit(NULL).cast(DataType::Boolean).alias(CANCELLED),
        // Its columns are the 2026 names (`request_start_ns`, `time_to_first_token_ms`).
        lit(true).alias(NEW_SCHEMA),
    ]);
    // The casts first, then the derived columns that read them.
    let cast: Vec<Expr> = exprs.drain(..SCALAR_COLUMNS.len()).collect();
    Ok(raw.select(cast).with_columns(exprs))
}

/// `outcome` of a record in `scan`'s terms (see the module documentation).
pub fn outcome() -> Expr {
    let cancelled = col(ERROR_CODE)
        .eq(lit(CANCELLATION_CODE))
        .fill_null(lit(false))
        .or(col(CANCELLED).fill_null(lit(false)));
    when(cancelled)
        .then(lit("cancelled"))
        .when(col(HAS_ERROR))
        .then(lit("error"))
        .when(col(HAS_ERROR).not())
        .then(lit("ok"))
        .otherwise(lit(NULL).cast(DataType::String))
}

/// The canonical columns of `scan`'s frame, named as the catalogue names them, so the
/// canonical mapping reads them by exact name. Only these reach the plan.
pub fn canonical(lf: LazyFrame) -> LazyFrame {
    lf.select([
        col(REQUEST_ID).alias("request_id"),
        col(START_NS).alias("timestamp"),
        without_output(col(OSL), col(TTFT)).alias("client_ttft_ms"),
        col(LATENCY).alias("client_latency_ms"),
        col(OSL).alias("output_tokens"),
        col(ISL).alias("input_tokens"),
        outcome().alias("outcome"),
    ])
}

/// The time to first token of a record, null where its output length is 0: a request
/// without an output token has no first token, whatever the tool wrote for it. AIPerf's
/// own figures (`--definitions aiperf`) read the record as written.
fn without_output(osl: Expr, ttft: Expr) -> Expr {
    when(osl.eq(lit(0.0)).fill_null(lit(false)))
        // Untyped: the column stays what it is (text in the CSV, parsed later).
        .then(lit(NULL))
        .otherwise(ttft)
}

/// `scan` then `canonical`: what the source layer reads an AIPerf file as.
pub fn read(
    path: &Path,
    format: InputFormat,
    repaired: Option<&spool::Spooled>,
) -> Result<LazyFrame> {
    match format {
        InputFormat::AiperfCsv => scalars_canonical(path, repaired),
        _ => {
            check_records(path)?;
            scan_records(path, repaired).map(canonical)
        }
    }
}

/// The CSV's canonical columns as text, so the canonical mapping parses them and counts a
/// cell that is not a number as unparsed (`dq_unparsed`) instead of dropping it unseen.
fn scalars_canonical(path: &Path, repaired: Option<&spool::Spooled>) -> Result<LazyFrame> {
    let (raw, schema) = scan_csv(path, repaired)?;
    let text = |c: &str| {
        if schema.contains(c) {
            col(c)
        } else {
            lit(NULL).cast(DataType::String)
        }
    };
    let latency = text("request_latency_ms").str().strip_chars(lit(NULL));
    let has_latency = latency.clone().is_not_null().and(latency.neq(lit("")));
    Ok(raw.select([
        text("x_request_id").alias("request_id"),
        text("request_start_ns").alias("timestamp"),
        without_output(
            text("output_sequence_length")
                .str()
                .strip_chars(lit(NULL))
                .cast(DataType::Float64),
            text("time_to_first_token_ms"),
        )
        .alias("client_ttft_ms"),
        text("request_latency_ms").alias("client_latency_ms"),
        text("output_sequence_length").alias("output_tokens"),
        text("input_sequence_length").alias("input_tokens"),
        when(has_latency)
            .then(lit("ok"))
            .otherwise(lit(NULL).cast(DataType::String))
            .alias("outcome"),
    ]))
}

/// A value of the wrong JSON type in a field `scan` reads fails the whole read in polars,
/// without a line: find the first one and name its line and field. Lines that are not JSON
/// objects (or not UTF-8) are the row check's (`rowcheck`), and skipped here.
fn check_records(path: &Path) -> Result<()> {
    use serde_json::Value;
    let file =
        std::fs::File::open(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    let reader = std::io::BufReader::new(file);
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let whole = |v: &Value| v.is_null() || v.is_i64();
    let number = |v: &Value| v.is_null() || v.is_number();
    // Lines as bytes: one that is not UTF-8 is the row check's too (read as text, it
    // failed the whole read naming no line).
    for (i, line) in std::io::BufRead::split(reader, b'\n').enumerate() {
        let line = line.map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
        let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let at = |field: String, expected: &str, found: &Value| {
            Error::input(
                path,
                format!(
                    "line {}: field `{field}`: expected {expected}, found {}",
                    i + 1,
                    kind(found)
                ),
            )
        };
        for (key, expected) in [
            ("metadata", "an object"),
            ("metrics", "an object"),
            ("error", "an object or null"),
        ] {
            match record.get(key) {
                None | Some(Value::Object(_)) => {}
                Some(Value::Null) if key != "metrics" => {}
                Some(v) => return Err(at(key.to_string(), expected, v)),
            }
        }
        if let Some(Value::Object(m)) = record.get("metadata") {
            for k in ["timestamp_ns", "request_start_ns"] {
                if let Some(v) = m.get(k).filter(|v| !whole(v)) {
                    return Err(at(format!("metadata.{k}"), "an integer (ns)", v));
                }
            }
            if let Some(v) = m
                .get("x_request_id")
                .filter(|v| !v.is_null() && !v.is_string())
            {
                return Err(at("metadata.x_request_id".into(), "a string", v));
            }
            if let Some(v) = m
                .get("was_cancelled")
                .filter(|v| !v.is_null() && !v.is_boolean())
            {
                return Err(at("metadata.was_cancelled".into(), "a boolean", v));
            }
        }
        if let Some(Value::Object(e)) = record.get("error") {
            if let Some(v) = e.get("code").filter(|v| !whole(v)) {
                return Err(at("error.code".into(), "an integer", v));
            }
        }
        let Some(Value::Object(metrics)) = record.get("metrics") else {
            continue;
        };
        for k in [
            "ttft",
            "time_to_first_token",
            "ttst",
            "time_to_second_token",
            LATENCY,
            OSL,
            ISL,
            OUTPUT_TOKENS,
            REASONING_TOKENS,
            ICL,
        ] {
            let Some(block) = metrics.get(k) else {
                continue;
            };
            let value = match block {
                Value::Null => continue,
                Value::Object(b) => b.get("value").unwrap_or(&Value::Null),
                other => return Err(at(format!("metrics.{k}"), "an object", other)),
            };
            let fits = if k == ICL {
                value.is_null()
                    || value
                        .as_array()
                        .is_some_and(|a| a.iter().all(|x| x.is_number()))
            } else {
                number(value)
            };
            if !fits {
                let expected = if k == ICL {
                    "a list of numbers"
                } else {
                    "a number"
                };
                return Err(at(format!("metrics.{k}.value"), expected, value));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str, text: &str) -> (tempfile::TempDir, DataFrame) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let format = if name.ends_with(".csv") {
            InputFormat::AiperfCsv
        } else {
            InputFormat::Aiperf
        };
        let df = read(&path, format, None).unwrap().collect().unwrap();
        (dir, df)
    }

    fn f64s(df: &DataFrame, c: &str) -> Vec<Option<f64>> {
        df.column(c).unwrap().f64().unwrap().iter().collect()
    }

    fn strs(df: &DataFrame, c: &str) -> Vec<Option<String>> {
        df.column(c)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|s| s.map(String::from))
            .collect()
    }

    #[test]
    fn both_schemas_map_to_the_client_fields_and_errors_stay_in() {
        let old = r#"{"metadata":{"x_request_id":"a","timestamp_ns":1759522419159192408,"credit_phase":"profiling"},"metrics":{"ttft":{"value":1680.5,"unit":"ms"},"request_latency":{"value":7936.9,"unit":"ms"},"output_sequence_length":{"value":193,"unit":"tokens"},"input_sequence_length":{"value":550,"unit":"tokens"},"inter_chunk_latency":{"value":[1.0,2.0],"unit":"ms"}},"error":null}
{"metadata":{"x_request_id":"b","timestamp_ns":1759522419154829652},"metrics":{"error_request_count":{"value":1,"unit":"requests"}},"error":{"code":499,"type":"RequestCancellationError","message":"Request was cancelled after 0.000 seconds"}}
{"metadata":{"x_request_id":"c","timestamp_ns":1759522419154829653},"metrics":{"error_request_count":{"value":1,"unit":"requests"}},"error":{"code":500,"type":"ServerError","message":"boom"}}
"#;
        let (_d, df) = frame("profile_export.jsonl", old);
        assert_eq!(f64s(&df, "client_ttft_ms"), [Some(1680.5), None, None]);
        assert_eq!(f64s(&df, "client_latency_ms"), [Some(7936.9), None, None]);
        assert_eq!(f64s(&df, "output_tokens"), [Some(193.0), None, None]);
        assert_eq!(
            strs(&df, "outcome"),
            [
                Some("ok".into()),
                Some("cancelled".into()),
                Some("error".into())
            ]
        );
        let ts: Vec<Option<i64>> = df
            .column("timestamp")
            .unwrap()
            .i64()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(ts[0], Some(1759522419159192408));

        let new = r#"{"metadata":{"session_num":6,"x_request_id":"e","request_start_ns":1785315984599636207,"request_end_ns":1785315988528559921,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"time_to_first_token":{"value":900.6,"unit":"ms"},"request_latency":{"value":3928.6,"unit":"ms"},"output_sequence_length":{"value":73,"unit":"tokens"},"usage_total_tokens":{"value":98,"unit":"tokens"}}}
{"metadata":{"x_request_id":"f","request_start_ns":1785315984599636300,"was_cancelled":true},"metrics":{},"error":null}
"#;
        let (_d, df) = frame("p.jsonl", new);
        assert_eq!(f64s(&df, "client_ttft_ms"), [Some(900.6), None]);
        assert_eq!(
            strs(&df, "outcome"),
            [Some("ok".into()), Some("cancelled".into())]
        );
        assert_eq!(df.width(), 7, "only the canonical columns: {df:?}");
    }

    /// A record whose output is 0 tokens has no first token: its TTFT, in the JSON lines
    /// and in the scalars CSV, is not read as one.
    #[test]
    fn no_output_token_no_first_token() {
        let lines = r#"{"metadata":{"x_request_id":"z","request_start_ns":1785315984599636207},"metrics":{"time_to_first_token":{"value":0.0,"unit":"ms"},"request_latency":{"value":12.5,"unit":"ms"},"output_sequence_length":{"value":0,"unit":"tokens"}}}
{"metadata":{"x_request_id":"y","request_start_ns":1785315984599636208},"metrics":{"time_to_first_token":{"value":40.0,"unit":"ms"},"request_latency":{"value":90.0,"unit":"ms"},"output_sequence_length":{"value":1,"unit":"tokens"}}}
"#;
        let (_d, df) = frame("p.jsonl", lines);
        assert_eq!(f64s(&df, "client_ttft_ms"), [None, Some(40.0)]);
        assert_eq!(f64s(&df, "client_latency_ms"), [Some(12.5), Some(90.0)]);
        let text = "session_num,request_start_ns,time_to_first_token_ms,request_latency_ms,output_sequence_length
0,1785315831479615692,0.0,12.5,0
1,1785315831479615693,40.0,90.0, 1
";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scalars.csv");
        std::fs::write(&path, text).unwrap();
        let (lf, _) =
            super::super::load(&[path], None, super::super::BadRowPolicy::Error, &[]).unwrap();
        let df = lf.collect().unwrap();
        assert_eq!(f64s(&df, "client_ttft_ms"), [None, Some(40.0)]);
    }

    #[test]
    fn the_scalars_csv_reads_ms_and_ns_and_counts_what_is_not_a_number() {
        let text = "session_num,request_start_ns,request_end_ns,time_to_first_token_ms,request_latency_ms,output_sequence_length,input_sequence_length\n\
0,1785315831479615692,1785315844393613994,1714.313534,12912.955548,252,42\n\
1,1785315844396559904,,,,,\n\
2,1785315844396559905,,n/a,100.5,3,4\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scalars.csv");
        std::fs::write(&path, text).unwrap();
        let (lf, inputs) =
            super::super::load(&[path], None, super::super::BadRowPolicy::Error, &[]).unwrap();
        assert_eq!(inputs[0].format, InputFormat::AiperfCsv);
        let df = lf.collect().unwrap();
        assert_eq!(f64s(&df, "client_ttft_ms"), [Some(1714.313534), None, None]);
        assert_eq!(
            f64s(&df, "client_latency_ms"),
            [Some(12912.955548), None, Some(100.5)]
        );
        assert_eq!(
            strs(&df, "outcome"),
            [Some("ok".into()), None, Some("ok".into())]
        );
        let unparsed: Vec<Option<bool>> = df
            .column("__unparsed_client_ttft_ms")
            .unwrap()
            .bool()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(unparsed, [Some(false), Some(false), Some(true)]);
        assert_eq!(strs(&df, "request_id"), [None, None, None]);
    }

    #[test]
    fn a_wrong_typed_value_is_an_error_naming_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.jsonl");
        std::fs::write(
            &path,
            "{\"metadata\":{},\"metrics\":{\"ttft\":{\"value\":1.5}}}\n\n{\"metadata\":{},\"metrics\":{\"ttft\":{\"value\":\"abc\"}}}\n",
        )
        .unwrap();
        let e = read(&path, InputFormat::Aiperf, None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("line 3: field `metrics.ttft.value`: expected a number, found a string"),
            "{e}"
        );
    }

    #[test]
    fn detection_by_content() {
        assert!(looks_like_records(
            r#"{"metadata":{},"metrics":{},"error":null}"#
        ));
        assert!(!looks_like_records(r#"{"metadata":1,"metrics":{}}"#));
        assert!(!looks_like_records(r#"{"request_id":"a"}"#));
        assert!(looks_like_scalars(
            "session_num,request_start_ns,time_to_first_token_ms,request_latency_ms\r"
        ));
        assert!(!looks_like_scalars("Metric,avg,p50"));
    }
}
