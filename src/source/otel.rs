//! OpenTelemetry spans as OTLP JSON (the `ExportTraceServiceRequest` of the OTLP/HTTP JSON
//! encoding: `resourceSpans` → `scopeSpans` → `spans`) → one row per GenAI span, in a raw
//! polars frame whose column names are canonical field names (the canonical mapping then
//! picks each up by exact name). Read: one document, JSON lines of them (what the
//! collector's `file` exporter writes), or a JSON array of them (what vLLM's example
//! export is). Written against the GenAI semantic conventions as of 2026-04 (status
//! "Development") and vLLM's server span `llm_request` (scope `vllm.tracing.otel`).
//!
//! A GenAI span is a span with at least one `gen_ai.*` attribute; other spans (HTTP, DB,
//! framework) are left out and counted. A file with none is refused.
//!
//! | column | from the span | notes |
//! |---|---|---|
//! | `request_id` | `gen_ai.response.id`, else `gen_ai.request.id` (vLLM), else `spanId` | |
//! | `trace_id` | `traceId` (hex) | |
//! | `timestamp` | `startTimeUnixNano` | a vLLM server span starts at the engine's arrival |
//! | `model` | `gen_ai.request.model`, else `gen_ai.response.model` | vLLM writes neither: null |
//! | `input_tokens` | `gen_ai.usage.input_tokens`, else deprecated `gen_ai.usage.prompt_tokens` | |
//! | `output_tokens` | `gen_ai.usage.output_tokens`, else deprecated `gen_ai.usage.completion_tokens` | |
//! | `cached_tokens` | `gen_ai.usage.cache_read.input_tokens` | |
//! | `is_stream` | `gen_ai.request.stream` | |
//! | `status` | `http.response.status_code` | |
//! | `outcome` | `error` when `status.code` is 2 (ERROR) or `error.type` is set, else `ok` | |
//! | `engine_ttft_ms` (e0→e1) | `gen_ai.latency.time_to_first_token` × 1000 | vLLM |
//! | `engine_latency_ms` (e0→e2) | `gen_ai.latency.e2e` × 1000 | vLLM |
//! | `engine_queue_ms` | `gen_ai.latency.time_in_queue` × 1000 | vLLM |
//! | `engine_prefill_ms` | `gen_ai.latency.time_in_model_prefill` × 1000 | vLLM |
//! | `engine_decode_ms` | `gen_ai.latency.time_in_model_decode` × 1000 | vLLM |
//! | `client_ttft_ms` (c0→c1) | `gen_ai.response.time_to_first_chunk` × 1000 | CLIENT spans (kind 3) only |
//! | `span_duration_ms` | (`endTimeUnixNano` − `startTimeUnixNano`) ÷ 10⁶ | the writer's clock |
//!
//! What the figures mean, and why they go where they go:
//! - **vLLM's `gen_ai.latency.*` count from the request's arrival at its engine** (its
//!   `arrival_time`), an origin of its own (catalogue event e0): after the gateway's t1 and
//!   the network to the server, so never a t0 figure. Every gateway point (t0 … t7) stays
//!   null; the engine table (`rules/engine.toml`) classifies these rows by the server's
//!   queue, prefill and decode times. Seconds (doubles) become milliseconds.
//! - `time_in_model_inference` is prefill + decode (on the real export: 76.167 + 20.881 =
//!   97.048 ms, and 67.217 + 771.397 = 838.614 ms): it adds nothing and is not read.
//! - **The span's own duration** is on the clock of the process that wrote the span: vLLM
//!   starts `llm_request` at the engine's arrival and ends it after the last token, so on
//!   the real export it exceeds `gen_ai.latency.e2e` by 0.49 ms and 0.23 ms; a client
//!   instrumentation's span runs from its call to its end. It is `span_duration_ms`, a
//!   duration, never subtracted from a point.
//! - `gen_ai.response.time_to_first_chunk` counts from the client's request, so it is the
//!   client's time to first token (c0→c1) — on a CLIENT span only: on another kind of span
//!   nothing says whose request it counts from, and it stays null.
//! - int64 values (`*UnixNano`, `intValue`) are decimal strings in the proto3 JSON mapping;
//!   written as JSON numbers they are read the same. A value that is not a number is null.
//! - Only the columns above are read. Span names, events, links, resource attributes and
//!   every other attribute (prompts and completions in `gen_ai.input.messages`,
//!   `gen_ai.output.messages`, `gen_ai.prompt.*`) never reach the frame: the reader's schema
//!   holds only `key` and the scalar values of attributes, and only the keys above are
//!   taken from them.
//! - An array or one document is parsed whole (an array has to be); JSON lines are scanned
//!   lazily. Either way only the mapped values are kept.

use std::io::{BufRead, Read};
use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};

/// The spans read from one export.
pub struct Spans {
    /// One row per GenAI span, canonical column names.
    pub frame: LazyFrame,
    /// GenAI spans (the frame's height).
    pub genai: u64,
    /// Spans without a `gen_ai.*` attribute, left out.
    pub other: u64,
}

/// Whether a file's first bytes open an OTLP JSON trace export: an object (or an array of
/// objects) whose first key is `resourceSpans`, the only field of an
/// `ExportTraceServiceRequest`.
pub fn looks_like_otlp(head: &str) -> bool {
    let t = head.trim_start_matches('\u{feff}').trim_start();
    let t = t.strip_prefix('[').map_or(t, str::trim_start);
    let Some(t) = t.strip_prefix('{') else {
        return false;
    };
    t.trim_start().starts_with("\"resourceSpans\"")
}

/// The OTLP `AnyValue`, scalar members only (arrays and key-value lists are never read).
fn any_value() -> DataType {
    DataType::Struct(vec![
        Field::new("stringValue".into(), DataType::String),
        Field::new("intValue".into(), DataType::String),
        Field::new("doubleValue".into(), DataType::Float64),
        Field::new("boolValue".into(), DataType::Boolean),
    ])
}

/// The schema the file is read with: the span fields mapped, nothing else.
fn schema() -> Schema {
    let attributes = DataType::List(Box::new(DataType::Struct(vec![
        Field::new("key".into(), DataType::String),
        Field::new("value".into(), any_value()),
    ])));
    let span = DataType::Struct(vec![
        Field::new("traceId".into(), DataType::String),
        Field::new("spanId".into(), DataType::String),
        Field::new("kind".into(), DataType::String),
        Field::new("startTimeUnixNano".into(), DataType::String),
        Field::new("endTimeUnixNano".into(), DataType::String),
        Field::new("attributes".into(), attributes),
        Field::new(
            "status".into(),
            DataType::Struct(vec![Field::new("code".into(), DataType::String)]),
        ),
    ]);
    let scope = DataType::Struct(vec![Field::new(
        "spans".into(),
        DataType::List(Box::new(span)),
    )]);
    let resource = DataType::Struct(vec![Field::new(
        "scopeSpans".into(),
        DataType::List(Box::new(scope)),
    )]);
    Schema::from_iter([Field::new(
        "resourceSpans".into(),
        DataType::List(Box::new(resource)),
    )])
}

/// How the export is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `[{"resourceSpans": …}, …]`
    Array,
    /// One `{"resourceSpans": …}` per line.
    Lines,
    /// One document over several lines.
    Document,
}

fn layout(path: &Path) -> Result<Layout> {
    let file =
        std::fs::File::open(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    // A first line longer than this is taken for a JSON line, as the format detection does.
    let mut reader = std::io::BufReader::new(file.take(1 << 20));
    // Read as bytes: a line that is not UTF-8 is the reader's to refuse, at its line
    // (`read_error`); read as text, it failed here naming none.
    let mut bytes = vec![];
    loop {
        bytes.clear();
        if reader
            .read_until(b'\n', &mut bytes)
            .map_err(|e| Error::input(path, format!("cannot read: {e}")))?
            == 0
        {
            return Err(Error::input(
                path,
                "the file is empty: expected OTLP JSON spans",
            ));
        }
        let line = String::from_utf8_lossy(&bytes);
        let l = line.trim_start_matches('\u{feff}').trim();
        if l.is_empty() {
            continue;
        }
        return Ok(if l.starts_with('[') {
            Layout::Array
        } else if line.len() >= 1 << 20 || serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok()
        {
            Layout::Lines
        } else {
            Layout::Document
        });
    }
}

/// Where an export stops being JSON, for the message of a read that failed: the first line
/// that is not a JSON value when the first line is one (JSON lines), else the position in
/// the one document. `None` when every line is JSON (the fault is elsewhere).
fn first_syntax_error(text: &str) -> Option<(usize, usize, String)> {
    use serde::de::IgnoredAny;
    // serde's message without its own " at line L column C": the line it counts is the
    // line's own (always 1) when a line is parsed alone, and the caller names both.
    let what = |e: &serde_json::Error| {
        let m = e.to_string();
        m.rsplit_once(" at line ")
            .map_or(m.clone(), |(what, _)| what.to_string())
    };
    let parses = |l: &str| serde_json::from_str::<IgnoredAny>(l).is_ok();
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines.next()?;
    if parses(first) {
        return lines.find(|(_, l)| !parses(l)).map(|(i, l)| {
            let e = serde_json::from_str::<IgnoredAny>(l).expect_err("does not parse");
            (i + 1, e.column(), what(&e))
        });
    }
    let e = serde_json::from_str::<IgnoredAny>(text).err()?;
    Some((e.line(), e.column(), what(&e)))
}

/// The first line of a JSON-lines export that polars' reader refuses when read alone
/// with the export's schema, and why. serde_json and polars' parser (simd-json) do not
/// accept exactly the same JSON, so a line serde reads may still stop polars. Only called
/// once a read has failed: lines are read a block of `LINES_PER_LOOK` at a time, and only
/// the block that fails line by line: one read per block before it, then at most
/// `LINES_PER_LOOK` reads of one line.
fn first_rejected_line(text: &str) -> Option<(usize, String)> {
    const LINES_PER_LOOK: usize = 1024;
    let schema = Arc::new(schema());
    let refused = |json: &str| {
        JsonReader::new(std::io::Cursor::new(json.as_bytes()))
            .with_json_format(JsonFormat::JsonLines)
            .with_schema(schema.clone())
            .finish()
            .err()
            .map(|e| super::polars_message(&e))
    };
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let block = lines.chunks(LINES_PER_LOOK).find(|block| {
        let joined: Vec<&str> = block.iter().map(|(_, l)| *l).collect();
        refused(&joined.join("\n")).is_some()
    })?;
    block
        .iter()
        .find_map(|(i, l)| refused(l).map(|why| (i + 1, why)))
}

/// The error of a read that failed, naming where it failed: the first byte that is not
/// UTF-8, else where the export stops being JSON (serde's view), else, for JSON lines, the
/// first line polars' reader refuses alone (with that line's message); else polars' message
/// for the whole file.
fn read_error(path: &Path, layout: Layout, e: &PolarsError) -> Error {
    let what = match layout {
        Layout::Lines => "JSON lines",
        Layout::Array | Layout::Document => "a JSON document",
    };
    let bytes = std::fs::read(path).unwrap_or_default();
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text.trim_start_matches('\u{feff}'),
        Err(e) => {
            let at = e.valid_up_to();
            let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
            return Error::input(
                path,
                format!(
                    "cannot read as OTLP JSON spans ({what}): line {line}: byte {} is not UTF-8 (JSON must be UTF-8)",
                    at + 1
                ),
            );
        }
    };
    let (at, why) = match first_syntax_error(text) {
        Some((line, column, msg)) => (
            format!("line {line}, column {column}: {msg}; "),
            super::polars_message(e),
        ),
        None => match layout {
            Layout::Lines => match first_rejected_line(text) {
                Some((line, msg)) => (format!("line {line}: "), msg),
                None => (String::new(), super::polars_message(e)),
            },
            Layout::Array | Layout::Document => (String::new(), super::polars_message(e)),
        },
    };
    Error::input(
        path,
        format!("cannot read as OTLP JSON spans ({what}): {at}{why}"),
    )
}

/// The raw frame of export documents (column `resourceSpans`).
fn documents(path: &Path, layout: Layout) -> Result<LazyFrame> {
    let schema = Arc::new(schema());
    match layout {
        Layout::Lines => LazyJsonLineReader::new_with_sources(super::scan_sources(path, None)?)
            .with_schema(Some(schema))
            .finish()
            .map_err(|e| read_error(path, layout, &e)),
        Layout::Array | Layout::Document => {
            let mut text =
                std::fs::read(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
            if text.starts_with("\u{feff}".as_bytes()) {
                text.drain(..3);
            }
            if layout == Layout::Document {
                // One object: read as the array of it.
                text.insert(0, b'[');
                text.push(b']');
            }
            JsonReader::new(std::io::Cursor::new(text))
                .with_json_format(JsonFormat::Json)
                .with_schema(schema)
                .finish()
                .map(DataFrame::lazy)
                .map_err(|e| read_error(path, layout, &e))
        }
    }
}

/// The first attribute named `key`: its value's member `member`.
fn attribute(key: &str, member: &str) -> Expr {
    col("attributes")
        .list()
        .eval(element().filter(element().struct_().field_by_name("key").eq(lit(key))))
        .list()
        .first()
        .struct_()
        .field_by_name("value")
        .struct_()
        .field_by_name(member)
}

/// A numeric attribute: a double, or an integer (a decimal string, or a JSON number).
/// polars' default cast is the lenient one: text that is not a number becomes null.
fn number(key: &str) -> Expr {
    coalesce(&[
        attribute(key, "doubleValue"),
        attribute(key, "intValue").cast(DataType::Float64),
    ])
}

/// A count attribute: an integer, or a whole double.
fn count(keys: &[&str]) -> Expr {
    let each: Vec<Expr> = keys
        .iter()
        .map(|k| {
            let d = attribute(k, "doubleValue");
            coalesce(&[
                attribute(k, "intValue").cast(DataType::Int64),
                when(d.clone().floor().eq(d.clone()))
                    .then(d.cast(DataType::Int64))
                    .otherwise(lit(NULL).cast(DataType::Int64)),
            ])
        })
        .collect();
    coalesce(&each)
}

fn seconds_as_ms(key: &str) -> Expr {
    number(key) * lit(1000.0)
}

fn text(keys: &[&str]) -> Expr {
    let each: Vec<Expr> = keys
        .iter()
        .map(|k| {
            let s = attribute(k, "stringValue");
            when(s.clone().str().strip_chars(lit(NULL)).eq(lit("")))
                .then(lit(NULL).cast(DataType::String))
                .otherwise(s)
        })
        .collect();
    coalesce(&each)
}

/// A span's kind as its number (`3`) or, as some encoders write enums, its name.
fn is_client() -> Expr {
    let k = col("kind");
    k.clone().eq(lit("3")).or(k.eq(lit("SPAN_KIND_CLIENT")))
}

fn is_error() -> Expr {
    let c = col("status").struct_().field_by_name("code");
    c.clone()
        .eq(lit("2"))
        .or(c.eq(lit("STATUS_CODE_ERROR")))
        .fill_null(lit(false))
        .or(attribute("error.type", "stringValue").is_not_null())
}

/// The spans of an export, flat: one row per span, its columns as in the schema.
fn spans(docs: LazyFrame) -> LazyFrame {
    let explode = |lf: LazyFrame, name: &str| {
        lf.explode(
            by_name([name], true, false),
            ExplodeOptions {
                empty_as_null: false,
                keep_nulls: false,
            },
        )
    };
    let lf = explode(docs, "resourceSpans").select([col("resourceSpans")
        .struct_()
        .field_by_name("scopeSpans")
        .alias("scopeSpans")]);
    let lf = explode(lf, "scopeSpans").select([col("scopeSpans")
        .struct_()
        .field_by_name("spans")
        .alias("spans")]);
    explode(lf, "spans").unnest(by_name(["spans"], true, false), None)
}

fn is_genai() -> Expr {
    col("attributes")
        .list()
        .eval(
            element()
                .struct_()
                .field_by_name("key")
                .str()
                .starts_with(lit("gen_ai.")),
        )
        .list()
        .sum()
        .gt(lit(0))
        .fill_null(lit(false))
}

/// The canonical columns of a GenAI span (see the module documentation).
fn mapped() -> Vec<Expr> {
    let ns = |name: &str| col(name).cast(DataType::Int64);
    vec![
        coalesce(&[
            text(&["gen_ai.response.id", "gen_ai.request.id"]),
            col("spanId"),
        ])
        .alias("request_id"),
        col("traceId").alias("trace_id"),
        ns("startTimeUnixNano")
            .cast(DataType::Datetime(TimeUnit::Nanoseconds, None))
            .alias("timestamp"),
        text(&["gen_ai.request.model", "gen_ai.response.model"]).alias("model"),
        count(&["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"]).alias("input_tokens"),
        count(&[
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
        ])
        .alias("output_tokens"),
        count(&["gen_ai.usage.cache_read.input_tokens"]).alias("cached_tokens"),
        attribute("gen_ai.request.stream", "boolValue").alias("is_stream"),
        count(&["http.response.status_code"]).alias("status"),
        when(is_error())
            .then(lit("error"))
            .otherwise(lit("ok"))
            .alias("outcome"),
        seconds_as_ms("gen_ai.latency.time_to_first_token").alias("engine_ttft_ms"),
        seconds_as_ms("gen_ai.latency.e2e").alias("engine_latency_ms"),
        seconds_as_ms("gen_ai.latency.time_in_queue").alias("engine_queue_ms"),
        seconds_as_ms("gen_ai.latency.time_in_model_prefill").alias("engine_prefill_ms"),
        seconds_as_ms("gen_ai.latency.time_in_model_decode").alias("engine_decode_ms"),
        when(is_client())
            .then(seconds_as_ms("gen_ai.response.time_to_first_chunk"))
            .otherwise(lit(NULL).cast(DataType::Float64))
            .alias("client_ttft_ms"),
        ((ns("endTimeUnixNano") - ns("startTimeUnixNano")).cast(DataType::Float64)
            / lit(1_000_000.0))
        .alias("span_duration_ms"),
    ]
}

/// Read an export: its GenAI spans as canonical columns, and how many spans were not.
pub fn read(path: &Path) -> Result<Spans> {
    let layout = layout(path)?;
    let all = spans(documents(path, layout)?).with_column(is_genai().alias("__genai"));
    let counts = all
        .clone()
        .select([
            col("__genai").sum().cast(DataType::UInt64).alias("genai"),
            len().cast(DataType::UInt64).alias("spans"),
        ])
        .collect()
        .map_err(|e| read_error(path, layout, &e))?;
    let get = |name: &str| {
        counts
            .column(name)
            .ok()
            .and_then(|c| c.u64().ok()?.get(0))
            .unwrap_or(0)
    };
    let (genai, total) = (get("genai"), get("spans"));
    Ok(Spans {
        frame: all.filter(col("__genai")).select(mapped()),
        genai,
        other: total - genai,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(text: &str, name: &str) -> (DataFrame, u64, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let s = read(&path).unwrap();
        (s.frame.collect().unwrap(), s.genai, s.other)
    }

    fn f64s(df: &DataFrame, name: &str) -> Vec<Option<f64>> {
        df.column(name).unwrap().f64().unwrap().to_vec()
    }

    fn i64s(df: &DataFrame, name: &str) -> Vec<Option<i64>> {
        df.column(name).unwrap().i64().unwrap().to_vec()
    }

    fn strs(df: &DataFrame, name: &str) -> Vec<Option<String>> {
        df.column(name)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|s| s.map(str::to_string))
            .collect()
    }

    const VLLM: &str = include_str!("../../fixtures/otel/vllm_llm_request_spans.otlp.json");

    #[test]
    fn detection_by_the_first_key() {
        assert!(looks_like_otlp("[\n  {\n    \"resourceSpans\": ["));
        assert!(looks_like_otlp("{\"resourceSpans\":[]}\n"));
        assert!(looks_like_otlp("\u{feff}{ \"resourceSpans\" : []}"));
        assert!(!looks_like_otlp("{\"resourceMetrics\":[]}"));
        assert!(!looks_like_otlp("[{\"request_id\":\"a\"}]"));
        assert!(!looks_like_otlp("data: {\"resourceSpans\":[]}"));
    }

    /// vLLM's latencies are seconds from the engine's arrival: milliseconds on e0; the
    /// deprecated token names read; the request id is vLLM's `gen_ai.request.id`.
    #[test]
    fn vllm_server_spans_map_seconds_to_ms_on_the_engine_clock() {
        let (df, genai, other) = collect(VLLM, "spans.json");
        assert_eq!((genai, other), (2, 1));
        assert_eq!(
            strs(&df, "request_id"),
            [
                Some("chatcmpl-0b1d".to_string()),
                Some("chatcmpl-9f3e".into())
            ]
        );
        assert_eq!(
            strs(&df, "trace_id")[0].as_deref(),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        assert_eq!(f64s(&df, "engine_ttft_ms"), [Some(125.0), Some(62.5)]);
        assert_eq!(f64s(&df, "engine_latency_ms"), [Some(500.0), Some(1250.0)]);
        assert_eq!(f64s(&df, "engine_queue_ms"), [Some(0.9765625), Some(31.25)]);
        assert_eq!(
            f64s(&df, "engine_prefill_ms"),
            [Some(124.0234375), Some(31.25)]
        );
        assert_eq!(f64s(&df, "engine_decode_ms"), [Some(375.0), Some(1187.5)]);
        assert_eq!(f64s(&df, "span_duration_ms"), [Some(500.5), Some(1250.25)]);
        assert_eq!(i64s(&df, "input_tokens"), [Some(25), Some(17)]);
        assert_eq!(i64s(&df, "output_tokens"), [Some(16), Some(40)]);
        // vLLM writes no model, no stream flag, no HTTP status: null, never a default.
        assert_eq!(strs(&df, "model"), [None, None]);
        assert_eq!(df.column("is_stream").unwrap().null_count(), 2);
        assert_eq!(df.column("status").unwrap().null_count(), 2);
        assert_eq!(df.column("client_ttft_ms").unwrap().null_count(), 2);
        assert_eq!(df.column("cached_tokens").unwrap().null_count(), 2);
        let ts = df
            .column("timestamp")
            .unwrap()
            .cast(&DataType::Int64)
            .unwrap();
        assert_eq!(ts.i64().unwrap().get(0), Some(1_780_000_000_123_456_789));
        assert_eq!(strs(&df, "outcome"), [Some("ok".into()), Some("ok".into())]);
    }

    /// Current attribute names win over the deprecated ones; an error status or
    /// `error.type` is an error outcome; a CLIENT span's time to first chunk is the
    /// client's; int64 values written as JSON numbers read alike; JSON lines.
    #[test]
    fn semconv_client_spans_as_json_lines() {
        let line = |id: &str, kind: &str, status: &str, extra: &str| {
            format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"aa","spanId":"{id}","kind":{kind},"startTimeUnixNano":1780000000000000000,"endTimeUnixNano":"1780000002000000000","status":{status},"attributes":[{{"key":"gen_ai.request.model","value":{{"stringValue":"gpt-4o"}}}},{{"key":"gen_ai.response.model","value":{{"stringValue":"gpt-4o-2024-08-06"}}}},{{"key":"gen_ai.usage.input_tokens","value":{{"intValue":12}}}},{{"key":"gen_ai.usage.prompt_tokens","value":{{"intValue":"99"}}}},{{"key":"gen_ai.usage.output_tokens","value":{{"intValue":"7"}}}},{{"key":"gen_ai.response.time_to_first_chunk","value":{{"doubleValue":0.5}}}},{{"key":"gen_ai.request.stream","value":{{"boolValue":true}}}}{extra}]}}]}}]}}]}}"#
            )
        };
        let text = [
            line("s1", "3", "{}", ""),
            line("s2", "2", r#"{"code":2,"message":"x"}"#, ""),
            line(
                "s3",
                "3",
                "{}",
                r#",{"key":"error.type","value":{"stringValue":"timeout"}},{"key":"gen_ai.usage.cache_read.input_tokens","value":{"intValue":"4"}}"#,
            ),
        ]
        .join("\n");
        let (df, genai, other) = collect(&text, "spans.jsonl");
        assert_eq!((genai, other), (3, 0));
        assert_eq!(
            strs(&df, "request_id"),
            [Some("s1".into()), Some("s2".into()), Some("s3".into())]
        );
        assert_eq!(strs(&df, "model")[0].as_deref(), Some("gpt-4o"));
        assert_eq!(i64s(&df, "input_tokens"), [Some(12); 3]);
        assert_eq!(i64s(&df, "output_tokens"), [Some(7); 3]);
        assert_eq!(i64s(&df, "cached_tokens"), [None, None, Some(4)]);
        assert_eq!(
            strs(&df, "outcome"),
            [
                Some("ok".into()),
                Some("error".into()),
                Some("error".into())
            ]
        );
        // Only CLIENT spans (kind 3) count from the client's request.
        assert_eq!(
            f64s(&df, "client_ttft_ms"),
            [Some(500.0), None, Some(500.0)]
        );
        assert_eq!(f64s(&df, "span_duration_ms"), [Some(2000.0); 3]);
        assert_eq!(f64s(&df, "engine_ttft_ms"), [None; 3]);
    }

    /// A value that is not a number is null, not an error and never 0; an empty
    /// document holds no span.
    #[test]
    fn a_value_that_is_not_a_number_is_null() {
        let text = r#"{
  "resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s", "startTimeUnixNano": "x",
    "attributes": [{"key": "gen_ai.usage.output_tokens", "value": {"intValue": "many"}},
                   {"key": "gen_ai.latency.e2e", "value": {"stringValue": "1.5"}}]}]},
                                 {"spans": []}]}]
}
"#;
        let (df, genai, other) = collect(text, "one.json");
        assert_eq!((genai, other), (1, 0));
        assert_eq!(i64s(&df, "output_tokens"), [None]);
        assert_eq!(f64s(&df, "engine_latency_ms"), [None]);
        assert_eq!(df.column("timestamp").unwrap().null_count(), 1);
        assert_eq!(f64s(&df, "span_duration_ms"), [None]);
    }
}
