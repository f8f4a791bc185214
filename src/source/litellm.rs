//! LiteLLM proxy spend logs (`LiteLLM_SpendLogs` rows: a table export as CSV or JSON, or
//! `GET /spend/logs` JSON) → a raw frame whose columns carry canonical names. Columns as in
//! LiteLLM's `schema.prisma` (research notes, peers.md §4.1); no real export was found, so
//! the fixture `fixtures/litellm/synthetic_spend_logs.jsonl` is written from that schema.
//!
//! Which points are filled, and from which clock:
//! - LiteLLM stamps `datetime.now()` at the proxy. `startTime` is when it starts the call
//!   to the provider, after the proxy's auth and routing: the gateway's t1 (upstream
//!   start), not its receive (t0), which the row does not hold. So the figures are counted
//!   from t1: `completionStartTime − startTime` is `upstream_first_chunk_ms` (t1→t3) and
//!   `endTime − startTime` is `upstream_elapsed_ms` (t1→t6). No t0 point is filled: the
//!   upstream table (`rules/upstream.toml`) classifies the requests on the t1 clock.
//! - `completionStartTime` is the first chunk LiteLLM forwards (for the Responses API the
//!   first SSE event, usually the `response.created` envelope): an event (t3), not
//!   necessarily output. When nothing stamped it LiteLLM copies `endTime` into it
//!   (non-streamed calls, some pass-through routes): equal to `endTime`, it is no first
//!   chunk and is null here.
//! - Times are ISO 8601 text (`2026-11-02T10:00:00.123456`, with or without a zone; none
//!   is UTC) or, in the StandardLoggingPayload, epoch seconds as floats: a value that is a
//!   number is read as seconds.
//! - `status` (`success` / `failure`) → outcome; failed calls (which LiteLLM may log with
//!   start = end) stay in. `model`, `api_base` → channel, `prompt_tokens`,
//!   `completion_tokens`, `request_id`; `startTime` → timestamp.
//! - `user` and `requester_ip_address` are identifiers (hashed). `api_key` (a hashed key),
//!   `messages`, `response`, `metadata` and `proxy_server_request` are never read: only
//!   the keys in [`KEYS`] become columns.

use std::path::Path;

use polars::prelude::*;

use super::sniff::{self, Content};
use super::timestamp;
use super::{csv, json, Adapted, InputFormat};
use crate::error::{Error, Result};

pub const KEYS: &[&str] = &[
    "request_id",
    "startTime",
    "completionStartTime",
    "endTime",
    "model",
    "api_base",
    "prompt_tokens",
    "completion_tokens",
    "status",
    "user",
    "requester_ip_address",
];

const TIMES: [(&str, &str); 3] = [
    ("startTime", "__start_ms"),
    ("completionStartTime", "__first_ms"),
    ("endTime", "__end_ms"),
];

/// A spend-log row: its three times' names, and the provider's address or first chunk.
pub fn recognises(columns: &[String]) -> bool {
    let has = |k: &str| columns.iter().any(|c| c == k);
    has("startTime") && has("endTime") && (has("completionStartTime") || has("api_base"))
}

/// Read the file's rows (see the module documentation).
pub fn scan(path: &Path, repaired: Option<&super::spool::Spooled>) -> Result<Adapted> {
    let mut raw = match sniff::physical(path)? {
        Content::Log(InputFormat::JsonLines) => json::read_keys(path, true, repaired, KEYS, &[])?,
        Content::Log(InputFormat::JsonArray) | Content::JsonObject => {
            json::read_keys(path, false, None, KEYS, &["data"])?
        }
        Content::Log(InputFormat::Csv) => {
            let mut lf = csv::scan(path, repaired)?;
            let schema = lf
                .collect_schema()
                .map_err(|e| Error::input(path, super::polars_message(&e)))?;
            lf.select(
                KEYS.iter()
                    .map(|k| {
                        if schema.contains(k) {
                            col(*k)
                        } else {
                            lit(NULL).cast(DataType::String).alias(*k)
                        }
                    })
                    .collect::<Vec<_>>(),
            )
        }
        other => {
            return Err(Error::input(
                path,
                format!("expected LiteLLM spend logs, found {}", other.read_as()),
            ))
        }
    };
    // Each time in epoch ms (f64): a number is seconds, text is parsed as ISO 8601.
    for (c, out) in TIMES {
        let forms = timestamp::forms(&raw, c);
        raw = timestamp::parse_text_column(raw, c, &forms);
        let t = col(c).str().strip_chars(lit(NULL));
        let seconds = t.cast(DataType::Float64);
        raw = raw.with_column(
            when(seconds.clone().is_not_null())
                .then(seconds * lit(1000.0))
                .otherwise(
                    col(timestamp::PARSED)
                        .cast(DataType::Int64)
                        .cast(DataType::Float64),
                )
                .alias(out),
        );
    }
    let (start, first, end) = (col("__start_ms"), col("__first_ms"), col("__end_ms"));
    let first_chunk = when(first.clone().eq(end.clone()))
        .then(lit(NULL).cast(DataType::Float64))
        .otherwise(first - start.clone());
    let text = |c: &str| col(c).str().strip_chars(lit(NULL));
    Ok(Adapted {
        frame: raw.select([
            text("request_id").alias("request_id"),
            start
                .clone()
                .cast(DataType::Int64)
                .cast(DataType::Datetime(TimeUnit::Milliseconds, None))
                .alias("timestamp"),
            text("model").alias("model"),
            text("api_base").alias("channel"),
            text("status").alias("outcome"),
            text("prompt_tokens").alias("input_tokens"),
            text("completion_tokens").alias("output_tokens"),
            text("user").alias("user"),
            text("requester_ip_address").alias("client_ip"),
            first_chunk.alias("upstream_first_chunk_ms"),
            (end - start).alias("upstream_elapsed_ms"),
        ]),
        notes: vec!["LiteLLM's startTime is its call to the provider (t1), not the gateway's receive: its figures are the Upstream Start metrics (t1→t3, t1→t6), and the upstream table (rules/upstream.toml) classifies the requests on that clock".to_string()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, text: &str) -> DataFrame {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        scan(&path, None).unwrap().frame.collect().unwrap()
    }

    fn floats(df: &DataFrame, c: &str) -> Vec<Option<f64>> {
        df.column(c).unwrap().f64().unwrap().to_vec()
    }

    #[test]
    fn datetimes_and_epoch_seconds_count_from_the_provider_call() {
        let df = read(
            "spend.jsonl",
            concat!(
                r#"{"request_id":"a","startTime":"2026-11-02T10:00:00.000000","completionStartTime":"2026-11-02T10:00:00.250000","endTime":"2026-11-02T10:00:01.500000","status":"success","api_key":"88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b","messages":[{"content":"secret"}]}"#,
                "\n",
                r#"{"request_id":"b","startTime":1781100000.5,"completionStartTime":1781100002.0,"endTime":1781100002.0,"status":"failure"}"#,
                "\n"
            ),
        );
        assert_eq!(floats(&df, "upstream_first_chunk_ms"), [Some(250.0), None]);
        assert_eq!(
            floats(&df, "upstream_elapsed_ms"),
            [Some(1500.0), Some(1500.0)]
        );
        assert!(df.column("api_key").is_err() && df.column("messages").is_err());
    }

    #[test]
    fn a_csv_export_with_zones() {
        let df = read(
            "spend.csv",
            "request_id,startTime,completionStartTime,endTime,api_base,status\n\
             a,2026-11-02 10:00:00+00:00,2026-11-02 10:00:00.400+00:00,2026-11-02 10:00:02+00:00,https://api.example.com,success\n",
        );
        assert_eq!(floats(&df, "upstream_first_chunk_ms"), [Some(400.0)]);
        assert_eq!(floats(&df, "upstream_elapsed_ms"), [Some(2000.0)]);
    }
}
