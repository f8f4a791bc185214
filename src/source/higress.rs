//! Higress ai-statistics plugin logs → a raw frame whose columns carry canonical names.
//! The plugin (alibaba/higress `plugins/wasm-go/extensions/ai-statistics`) writes one
//! `ai_log` field into each Envoy access-log entry: a JSON string whose values are
//! strings of numbers (`"llm_service_duration":"1955"`). Read from JSON lines of access
//! logs, a JSON array of them, or one entry (the plugin README's "#### Log" examples,
//! `fixtures/external/gateway/higress_ai_statistics_doc_example_log*.json`).
//!
//! Which points are filled, and from which clock (research notes, gateway.md §1.3, read in
//! the plugin's `main.go`): both durations count from the time the plugin stamps in
//! `onHttpRequestHeaders`, when the proxy has received the request's headers: the
//! gateway's receive, t0.
//! - `llm_first_token_duration` (ms) is stamped at the first streamed response body chunk
//!   the plugin sees (`onHttpStreamingBody`): the first SSE event, not necessarily a token
//!   (a role-only chunk counts) → `first_sse_event_ms` (t0→t3). A non-streamed response
//!   has none: null.
//! - `llm_service_duration` (ms) is stamped when the response body has passed the plugin
//!   in full: the upstream body's end as the proxy sees it → `upstream_done_ms` (t0→t6).
//!   The proxy's own finish (t7) is not in `ai_log`, so `total_handler_ms` stays null.
//! - `input_token`, `output_token` → input/output tokens; `model` → model.
//!
//! Nothing else is read: not the access log's other fields (whose names the deployment's
//! log format decides), nor any other key of `ai_log` (the plugin can be configured to log
//! questions and answers there).

use std::path::Path;

use polars::prelude::*;

use super::sniff::{self, Content};
use super::{json, Adapted, InputFormat};
use crate::error::{Error, Result};

const KEYS: &[&str] = &["ai_log"];
const AI_LOG: &[&str] = &[
    "model",
    "input_token",
    "output_token",
    "llm_first_token_duration",
    "llm_service_duration",
];

/// An access-log entry holding the plugin's `ai_log`.
pub fn recognises(columns: &[String]) -> bool {
    columns.iter().any(|c| c == "ai_log")
}

/// Read the file's entries (see the module documentation).
pub fn scan(path: &Path, repaired: Option<&super::spool::Spooled>) -> Result<Adapted> {
    let raw = match sniff::physical(path)? {
        Content::Log(InputFormat::JsonLines) => json::read_keys(path, true, repaired, KEYS, &[])?,
        Content::Log(InputFormat::JsonArray) | Content::JsonObject => {
            json::read_keys(path, false, None, KEYS, &[])?
        }
        other => {
            return Err(Error::input(
                path,
                format!(
                    "expected Higress access logs (JSON with an `ai_log` field), found {}",
                    other.read_as()
                ),
            ))
        }
    };
    let fields = AI_LOG
        .iter()
        .map(|k| Field::new((*k).into(), DataType::String))
        .collect();
    let log = col("ai_log").str().json_decode(DataType::Struct(fields));
    let field = |k: &str| log.clone().struct_().field_by_name(k);
    let ms = |k: &str| {
        field(k)
            .str()
            .strip_chars(lit(NULL))
            .cast(DataType::Float64)
    };
    Ok(Adapted {
        frame: raw.select([
            field("model").alias("model"),
            field("input_token").alias("input_tokens"),
            field("output_token").alias("output_tokens"),
            ms("llm_first_token_duration").alias("first_sse_event_ms"),
            ms("llm_service_duration").alias("upstream_done_ms"),
        ]),
        notes: vec!["Higress ai-statistics logs a first chunk (t0→t3) and the upstream body's end (t0→t6), not the proxy's finish (t7) or the upstream headers: the rules that need those say insufficient_data".to_string()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(df: &DataFrame, c: &str) -> Vec<Option<f64>> {
        df.column(c).unwrap().f64().unwrap().to_vec()
    }

    #[test]
    fn string_numbers_are_ms_from_the_request_headers_and_non_streamed_has_no_first_chunk() {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let df = scan(
            &root.join("fixtures/external/gateway/higress_ai_statistics_doc_example_log.json"),
            None,
        )
        .unwrap()
        .frame
        .collect()
        .unwrap();
        assert_eq!(floats(&df, "first_sse_event_ms"), [Some(309.0)]);
        assert_eq!(floats(&df, "upstream_done_ms"), [Some(1955.0)]);
        let out = df.column("output_tokens").unwrap().str().unwrap().get(0);
        assert_eq!(out, Some("69"));
        let df = scan(
            &root.join(
                "fixtures/external/gateway/higress_ai_statistics_doc_example_log_nonstream.json",
            ),
            None,
        )
        .unwrap()
        .frame
        .collect()
        .unwrap();
        assert_eq!(floats(&df, "first_sse_event_ms"), [None]);
        assert_eq!(floats(&df, "upstream_done_ms"), [Some(19110.0)]);
    }

    #[test]
    fn json_lines_with_ai_log_as_an_object_or_a_string() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.jsonl");
        std::fs::write(
            &path,
            "{\"ai_log\":{\"model\":\"m\",\"llm_service_duration\":\"12\"},\"path\":\"/v1\"}\n\
             {\"ai_log\":\"{\\\"llm_first_token_duration\\\":\\\"3\\\",\\\"llm_service_duration\\\":\\\"\\\"}\"}\n",
        )
        .unwrap();
        let df = scan(&path, None).unwrap().frame.collect().unwrap();
        assert_eq!(floats(&df, "upstream_done_ms"), [Some(12.0), None]);
        assert_eq!(floats(&df, "first_sse_event_ms"), [None, Some(3.0)]);
    }
}
