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
//!   number is read as seconds. Both keep their fraction below the millisecond (the
//!   figures are f64 ms): LiteLLM's microseconds are what tells 4.583 ms from 4 ms.
//! - The StandardLoggingPayload's `stream` (a boolean) → `is_stream`; a spend-log row
//!   without it leaves streaming unknown.
//! - `status` (`success` / `failure`) → outcome; failed calls (which LiteLLM may log with
//!   start = end) stay in. `model`, `api_base` → channel, `prompt_tokens`,
//!   `completion_tokens`, `request_id` (the StandardLoggingPayload's `id`); `startTime` →
//!   timestamp.
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
    "id",
    "startTime",
    "completionStartTime",
    "endTime",
    "model",
    "api_base",
    "prompt_tokens",
    "completion_tokens",
    "status",
    "stream",
    "user",
    "requester_ip_address",
];

/// Each time, and the two columns it is read into: its whole epoch milliseconds and the
/// rest, below the millisecond, in ms. Kept apart because one f64 of epoch ms (about
/// 1.8e12) holds only steps of 2^-12 ms: LiteLLM's microseconds would come out of a
/// difference as 4.5830078 ms; the whole parts subtract exactly, then the rests.
const TIMES: [(&str, &str, &str); 3] = [
    ("startTime", "__start_ms", "__start_sub_ms"),
    ("completionStartTime", "__first_ms", "__first_sub_ms"),
    ("endTime", "__end_ms", "__end_sub_ms"),
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
    // Each time as whole epoch ms and the rest: a number is seconds, text is parsed as ISO
    // 8601, its whole milliseconds by the timestamp parser and the rest of its fraction
    // here.
    for (c, whole, sub) in TIMES {
        let forms = timestamp::forms(&raw, c);
        raw = timestamp::parse_text_column(raw, c, &forms);
        let t = col(c).str().strip_chars(lit(NULL));
        let ms = t.clone().cast(DataType::Float64) * lit(1000.0);
        raw = raw.with_columns([
            when(ms.clone().is_not_null())
                .then(ms.clone().floor().cast(DataType::Int64))
                .otherwise(col(timestamp::PARSED).cast(DataType::Int64))
                .alias(whole),
            when(ms.clone().is_not_null())
                .then(ms.clone() - ms.floor())
                .otherwise(below_ms(t))
                .alias(sub),
        ]);
    }
    // b − a in ms, the whole parts first.
    let between = |a: usize, b: usize| {
        (col(TIMES[b].1) - col(TIMES[a].1)).cast(DataType::Float64)
            + (col(TIMES[b].2) - col(TIMES[a].2))
    };
    let (start, first, end) = (0, 1, 2);
    let first_is_end = col(TIMES[first].1)
        .eq(col(TIMES[end].1))
        .and(col(TIMES[first].2).eq(col(TIMES[end].2)));
    let first_chunk = when(first_is_end)
        .then(lit(NULL).cast(DataType::Float64))
        .otherwise(between(start, first));
    let text = |c: &str| col(c).str().strip_chars(lit(NULL));
    Ok(Adapted {
        frame: raw.select([
            // The StandardLoggingPayload's id is `id`; a spend-log row's `request_id`.
            coalesce(&[text("request_id"), text("id")]).alias("request_id"),
            col(TIMES[start].1)
                .cast(DataType::Datetime(TimeUnit::Milliseconds, None))
                .alias("timestamp"),
            text("model").alias("model"),
            text("api_base").alias("channel"),
            text("status").alias("outcome"),
            text("stream").alias("is_stream"),
            text("prompt_tokens").alias("input_tokens"),
            text("completion_tokens").alias("output_tokens"),
            text("user").alias("user"),
            text("requester_ip_address").alias("client_ip"),
            first_chunk.alias("upstream_first_chunk_ms"),
            between(start, end).alias("upstream_elapsed_ms"),
        ]),
        notes: vec!["LiteLLM's startTime is its call to the provider (t1), not the gateway's receive: its figures are the Upstream Start metrics (t1→t3, t1→t6), and the upstream table (rules/upstream.toml) classifies the requests on that clock".to_string()],
    })
}

/// The part of a text time's fraction below the millisecond, in ms (0.583 for
/// `10:00:00.004583`; 0 without such digits): the timestamp parser keeps whole
/// milliseconds, and LiteLLM writes microseconds, whose differences are its figures.
fn below_ms(text: Expr) -> Expr {
    let digits = text
        .str()
        .extract(lit(r"\d{2}:\d{2}:\d{2}[.,]\d{3}(\d+)"), 1);
    concat_str([lit("0."), digits], "", false)
        .cast(DataType::Float64)
        .fill_null(lit(0.0))
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

    /// A text time's microseconds were dropped: 4.0 ms where the timestamps give 4.583.
    #[test]
    fn datetimes_keep_their_microseconds() {
        let df = read(
            "spend.jsonl",
            concat!(
                r#"{"request_id":"a","startTime":"2026-11-02T10:00:00.000000","completionStartTime":"2026-11-02T10:00:00.004583","endTime":"2026-11-02T10:00:01.250999","status":"success"}"#,
                "\n",
                // Another width, a zone, a space: the slow path of the parser.
                r#"{"request_id":"b","startTime":"2026-11-02 18:00:00.9999+08:00","completionStartTime":"2026-11-02 18:00:01.0012345+08:00","endTime":"2026-11-02 18:00:02+08:00","status":"success"}"#,
                "\n"
            ),
        );
        let first = floats(&df, "upstream_first_chunk_ms");
        let elapsed = floats(&df, "upstream_elapsed_ms");
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
        assert!(close(first[0], 4.583), "{first:?}");
        assert!(close(elapsed[0], 1250.999), "{elapsed:?}");
        assert!(close(first[1], 1.3345), "{first:?}");
        assert!(close(elapsed[1], 1000.1), "{elapsed:?}");
    }

    /// The StandardLoggingPayload's `stream` was not read: every request's streaming was
    /// unknown.
    #[test]
    fn the_payloads_stream_is_is_stream() {
        let df = read(
            "payload.jsonl",
            concat!(
                r#"{"id":"a","stream":true,"startTime":1781100000.5,"completionStartTime":1781100000.75,"endTime":1781100002.0,"status":"success","api_base":"https://x"}"#,
                "\n",
                r#"{"id":"b","stream":false,"startTime":1781100003.0,"completionStartTime":1781100004.0,"endTime":1781100004.0,"status":"success","api_base":"https://x"}"#,
                "\n",
                r#"{"id":"c","startTime":1781100005.0,"endTime":1781100006.0,"status":"success","api_base":"https://x"}"#,
                "\n"
            ),
        );
        let stream: Vec<Option<String>> = df
            .column("is_stream")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|s| s.map(String::from))
            .collect();
        assert_eq!(stream, [Some("true".into()), Some("false".into()), None]);
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
