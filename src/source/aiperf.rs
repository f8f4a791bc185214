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
//!   t-fields, and no gateway rule reads them: every request is `insufficient_data`, with
//!   the client figures reported as named metrics.
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
//! - The other metrics AIPerf records (`time_to_second_token`, `inter_chunk_latency`,
//!   `output_token_count`, `reasoning_token_count`) are read by `scan` for the AIPerf
//!   figures (`peer::aiperf`), and are no canonical field.

use std::path::Path;

use polars::prelude::*;

use super::{csv, spool, InputFormat};
use crate::error::{Error, Result};

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

fn scan_scalars(path: &Path, repaired: Option<&spool::Spooled>) -> Result<LazyFrame> {
    let mut raw = csv::scan(path, repaired)?;
    let schema = raw.collect_schema().map_err(|e| {
        Error::input(
            path,
            format!("cannot read the CSV header: {}", super::polars_message(&e)),
        )
    })?;
    let types = records_columns();
    let mut exprs: Vec<Expr> = SCALAR_COLUMNS
        .iter()
        .map(|(from, to)| {
            let dtype = types.get(to).cloned().expect("a column of `scan`");
            if schema.contains(from) {
                // Text as written: a cell that is not a number is null here and, for the
                // mapped fields, counted as unparsed by the canonical mapping.
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
        col(TTFT).alias("client_ttft_ms"),
        col(LATENCY).alias("client_latency_ms"),
        col(OSL).alias("output_tokens"),
        col(ISL).alias("input_tokens"),
        outcome().alias("outcome"),
    ])
}

/// `scan` then `canonical`: what the source layer reads an AIPerf file as.
pub fn read(
    path: &Path,
    format: InputFormat,
    repaired: Option<&spool::Spooled>,
) -> Result<LazyFrame> {
    scan(path, format, repaired).map(canonical)
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

    #[test]
    fn the_scalars_csv_reads_ms_and_ns_and_blank_cells_are_null() {
        let text = "session_num,request_start_ns,request_end_ns,time_to_first_token_ms,request_latency_ms,output_sequence_length,input_sequence_length\n\
0,1785315831479615692,1785315844393613994,1714.313534,12912.955548,252,42\n\
1,1785315844396559904,,,,,\n";
        let (_d, df) = frame("scalars.csv", text);
        assert_eq!(f64s(&df, "client_ttft_ms"), [Some(1714.313534), None]);
        assert_eq!(f64s(&df, "client_latency_ms"), [Some(12912.955548), None]);
        assert_eq!(strs(&df, "outcome"), [Some("ok".into()), None]);
        assert_eq!(strs(&df, "request_id"), [None, None]);
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
