//! Ray LLMPerf `*_individual_responses.json` (a JSON array, one object per request, as
//! `token_benchmark_ray.py` writes it and the llmperf-leaderboard `raw_data/individual/`
//! files hold it) → a raw polars frame with canonical column names. Read by polars with a
//! schema that lists only the keys below; `GEN_TEXT` (the leaderboard's generated text on
//! errored rows) and `error_msg` are never columns.
//!
//! | column | from | unit |
//! |---|---|---|
//! | `client_ttft_ms` (c0→c1) | `ttft_s` | s → ms |
//! | `client_latency_ms` (c0→c2) | `end_to_end_latency_s` | s → ms |
//! | `input_tokens`, `output_tokens` | `number_input_tokens`, `number_output_tokens` | count |
//! | `outcome` | `error_code`: null → ok, any code → error | |
//!
//! What the figures mean:
//! - **Origin c0** is the client's `time.monotonic()` before it sends the request; no
//!   gateway point is known, so the client table (`rules/client.toml`) judges them.
//! - **First token (c1), LLMPerf's rule:** the first chunk with a non-empty
//!   `delta.content`. **End (c2):** after the stream ends (`[DONE]` or close).
//! - `inter_token_latency_s` is LLMPerf's own figure: the time to the last content chunk
//!   *including the TTFT*, divided by the output tokens. It is not tracediag's inter-token
//!   latency (which leaves the first token out), so no canonical field receives it; it is
//!   reported, under its own name, only with `--definitions llmperf` ([`peer_frame`]).
//! - `request_output_throughput_token_per_s` likewise is LLMPerf's (its token count over
//!   the whole e2e time; chunk-based before LLMPerf #45) and only a peer figure.
//! - Errored rows (`error_code` set: an HTTP status, or the leaderboard's −100 "Output too
//!   few tokens") stay in as requests with outcome `error`; their timings are kept as
//!   written, since LLMPerf measured them (the quality checks see them).
//! - Token counts are LLMPerf's tokenizer counts (`hf-internal-testing/llama-tokenizer`),
//!   not the provider's usage.

use std::fmt;
use std::path::Path;

use polars::prelude::*;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{FILE_INDEX, ROW_COL};
use crate::error::{Error, Result};

/// The keys that make a JSON array LLMPerf's individual responses.
const REQUIRED: [&str; 3] = ["ttft_s", "end_to_end_latency_s", "inter_token_latency_s"];

/// The per-request figures LLMPerf summarises, in its summary's order (seconds, tokens/s,
/// tokens): the columns of [`peer_frame`].
pub const METRICS: [&str; 6] = [
    "inter_token_latency_s",
    "ttft_s",
    "end_to_end_latency_s",
    "request_output_throughput_token_per_s",
    "number_input_tokens",
    "number_output_tokens",
];

/// The column of [`peer_frame`] holding a row's `error_code` (null when it succeeded).
pub const ERROR_CODE: &str = "error_code";

fn schema() -> Schema {
    let mut s: Schema = METRICS
        .iter()
        .map(|m| Field::new((*m).into(), DataType::Float64))
        .collect();
    // A code is a number (HTTP status, −100); pandas writes it as a float when any is null.
    s.insert(ERROR_CODE.into(), DataType::Float64);
    s
}

/// Whether the first element of the JSON array at `path` has LLMPerf's per-request keys.
/// Only that element's keys are read (values skipped).
pub fn looks_like_file(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut keys = vec![];
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(file));
    // Stopping after the first element makes the rest of the array a parse error, which
    // does not matter: the keys are collected by then.
    let _ = de.deserialize_any(FirstElementKeys(&mut keys));
    REQUIRED.iter().all(|k| keys.iter().any(|c| c == k))
}

/// The whole array, read once: LLMPerf's keys only, typed by `schema`.
fn read_all(path: &Path) -> Result<DataFrame> {
    super::json::read_with_schema(
        path,
        schema(),
        "LLMPerf individual responses (a JSON array of objects)",
    )
}

/// One row per request, with the canonical columns of the module documentation.
pub fn read(path: &Path) -> Result<LazyFrame> {
    let outcome = when(col(ERROR_CODE).is_null())
        .then(lit("ok"))
        .otherwise(lit("error"));
    // A request without an output token has no first token: LLMPerf's `ttft_s` then holds
    // the 0 it starts from.
    let ttft = when(
        col("number_output_tokens")
            .eq(lit(0.0))
            .fill_null(lit(false)),
    )
    .then(lit(NULL).cast(DataType::Float64))
    .otherwise(col("ttft_s") * lit(1000.0));
    let all = read_all(path)?;
    if all.height() == 0 {
        return Err(Error::input(
            path,
            "LLMPerf individual responses with no response (`[]`): no request",
        ));
    }
    Ok(all.lazy().select([
        ttft.alias("client_ttft_ms"),
        (col("end_to_end_latency_s") * lit(1000.0)).alias("client_latency_ms"),
        col("number_input_tokens").alias("input_tokens"),
        col("number_output_tokens").alias("output_tokens"),
        outcome.alias("outcome"),
    ]))
}

/// LLMPerf's own per-request figures, as written (seconds, tokens/s, tokens), with
/// [`ERROR_CODE`]: `FILE_INDEX` = `file`, `ROW_COL` = the 1-based request (the row the
/// canonical frame gives it). What `--definitions llmperf` summarises.
pub fn peer_frame(path: &Path, file: u32) -> Result<LazyFrame> {
    let mut columns = vec![
        lit(file).alias(FILE_INDEX),
        col(ROW_COL).cast(DataType::Int64),
        col(ERROR_CODE),
    ];
    columns.extend(METRICS.iter().map(|m| col(*m)));
    Ok(read_all(path)?
        .lazy()
        .with_row_index(ROW_COL, Some(1))
        .select(columns))
}

/// Collects the keys of an array's first element.
struct FirstElementKeys<'a>(&'a mut Vec<String>);

impl<'de> Visitor<'de> for FirstElementKeys<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        seq.next_element_seed(ObjectKeys(self.0))?;
        Ok(())
    }
}

struct ObjectKeys<'a>(&'a mut Vec<String>);

impl<'de> DeserializeSeed<'de> for ObjectKeys<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjectKeys<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(k) = map.next_key::<String>()? {
            map.next_value::<IgnoredAny>()?;
            self.0.push(k);
        }
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }
}

/// What a run notes about LLMPerf responses: the clock and rules their figures follow.
pub const NOTE: &str = "LLMPerf client figures, counted from the client's send (c0): client_ttft_ms follows LLMPerf's first-token rule (the first chunk with a non-empty `delta.content`), client_latency_ms ends when the stream closes; LLMPerf's inter_token_latency_s includes the TTFT and is not tracediag's inter-token latency (--definitions llmperf gives LLMPerf's own figures); the client table (rules/client.toml) classifies the requests on that clock";

#[cfg(test)]
mod tests {
    use super::*;

    const ROWS: &str = r#"[
        {"error_code": null, "error_msg": "", "inter_token_latency_s": 0.02, "ttft_s": 0.25,
         "end_to_end_latency_s": 1.5, "request_output_throughput_token_per_s": 100.0,
         "number_total_tokens": 700, "number_output_tokens": 150, "number_input_tokens": 550},
        {"error_code": -100, "error_msg": "Output too few tokens 39", "inter_token_latency_s": 1.7,
         "ttft_s": 0.8, "end_to_end_latency_s": 1.75, "request_output_throughput_token_per_s": 22.0,
         "number_total_tokens": 589, "number_output_tokens": 39, "number_input_tokens": 550,
         "GEN_TEXT": "SECRET-GENERATED"}
    ]"#;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("individual.json");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    /// LLMPerf's ttft of a request that streamed no content is the 0 it starts from: it
    /// was read as a 0 ms first token.
    #[test]
    fn no_output_token_no_first_token() {
        let (_d, path) = write(
            r#"[{"error_code": null, "inter_token_latency_s": 0.0, "ttft_s": 0.0,
                 "end_to_end_latency_s": 0.4, "request_output_throughput_token_per_s": 0.0,
                 "number_output_tokens": 0, "number_input_tokens": 10}]"#,
        );
        let df = read(&path).unwrap().collect().unwrap();
        let ttft = df.column("client_ttft_ms").unwrap().f64().unwrap().get(0);
        assert_eq!(ttft, None);
        // LLMPerf's own figures read the row as written.
        let peer = peer_frame(&path, 0).unwrap().collect().unwrap();
        assert_eq!(
            peer.column("ttft_s").unwrap().f64().unwrap().get(0),
            Some(0.0)
        );
    }

    /// Forced as LLMPerf, `[]` holds no request: it was a run over 0 requests, exit 0.
    #[test]
    fn no_response_is_no_request() {
        let (_d, path) = write("[]");
        let e = read(&path).err().unwrap().to_string();
        assert!(e.contains("with no response (`[]`): no request"), "{e}");
    }

    #[test]
    fn seconds_become_ms_errors_stay_in_and_no_text_is_read() {
        let (_d, path) = write(ROWS);
        assert!(looks_like_file(&path));
        let df = read(&path).unwrap().collect().unwrap();
        let f =
            |c: &str| -> Vec<Option<f64>> { df.column(c).unwrap().f64().unwrap().iter().collect() };
        assert_eq!(f("client_ttft_ms"), [Some(250.0), Some(800.0)]);
        assert_eq!(f("client_latency_ms"), [Some(1500.0), Some(1750.0)]);
        let outcome: Vec<Option<&str>> = df
            .column("outcome")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(outcome, [Some("ok"), Some("error")]);
        let tokens = df
            .column("output_tokens")
            .unwrap()
            .cast(&DataType::Int64)
            .unwrap();
        let tokens: Vec<Option<i64>> = tokens.i64().unwrap().iter().collect();
        assert_eq!(tokens, [Some(150), Some(39)]);
        let peer = peer_frame(&path, 2).unwrap().collect().unwrap();
        assert_eq!(peer.height(), 2);
        let codes: Vec<Option<f64>> = peer
            .column(ERROR_CODE)
            .unwrap()
            .f64()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(codes, [None, Some(-100.0)]);
        for frame in [&df, &peer] {
            let shown = format!("{frame:?}");
            assert!(
                !shown.contains("SECRET") && !shown.contains("too few"),
                "{shown}"
            );
        }
    }

    #[test]
    fn only_an_array_of_llmperf_records_is_recognised() {
        for text in [
            r#"[{"ttft_s": 1, "end_to_end_latency_s": 2}]"#,
            r#"{"ttft_s": 1, "end_to_end_latency_s": 2, "inter_token_latency_s": 3}"#,
            "[]",
            "[1, 2]",
        ] {
            let (_d, path) = write(text);
            assert!(!looks_like_file(&path), "{text}");
        }
    }
}
