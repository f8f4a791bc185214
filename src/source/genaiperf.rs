//! GenAI-Perf's per-request input: perf_analyzer's `profile_export.json` (one JSON document,
//! `{"experiments": [{"experiment": {…}, "requests": [{"timestamp", "request_inputs",
//! "response_timestamps", "response_outputs"}, …]}], "service_kind", "endpoint", …}`, as
//! GenAI-Perf's `llm_profile_data_parser.py` reads it, perf_analyzer 2024–2025) → one row
//! per request, with canonical column names. Only the OpenAI service kind is read: each
//! response output is an SSE fragment (`{"response": "data: {…}\n\n"}`).
//!
//! | column | from | unit |
//! |---|---|---|
//! | `timestamp` | the request's `timestamp` (Unix, wall clock) | ns |
//! | `client_ttft_ms` (c0→c1) | first response with text − `timestamp` | ns → ms |
//! | `client_latency_ms` (c0→c2) | last response with text − `timestamp` | ns → ms |
//! | `outcome` | a response carrying an SSE error → error, else ok | |
//!
//! What the figures mean, GenAI-Perf's rules (`_preprocess_response`):
//! - **Origin c0** is perf_analyzer's send time; no gateway point is known, so the client
//!   table (`rules/client.toml`) judges the requests.
//! - A fragment that does not begin with `data:` (nor another SSE field) is the rest of the
//!   previous response's event, split by the transport: it is joined to that response, as
//!   GenAI-Perf does; several events in one response count as one response.
//! - **A response has text** when one of its events has non-empty text by GenAI-Perf's
//!   extraction: `choices[0].delta.content` (chat chunk), `choices[0].text` (completions,
//!   or no `object`), `choices[0].message.content` (non-streamed chat). `[DONE]`, comments,
//!   role-only and empty deltas have none. Every response without text is left out with
//!   its timestamp before the first (c1) and last (c2) are taken.
//! - A response with an SSE error (an `error` event, or a payload with an `error` object,
//!   as `tracediag sse`'s classifier tells it) has no text; its request's outcome is error,
//!   and the timings of its other responses stay as measured.
//! - A request left with no response with text is one GenAI-Perf skips. It stays in, with
//!   null timings; the run notes how many.
//! - **Output tokens are null**: GenAI-Perf counts them with a HuggingFace tokenizer over
//!   the concatenated text, which tracediag does not have (and the text is never kept), so
//!   no inter-token latency is computed either.
//! - Prompts (`request_inputs`) are skipped unread; response text is looked at one request
//!   at a time, only to tell whether it is empty, and never reaches a frame.

use std::path::Path;

use polars::prelude::*;
use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::sse::capture;
use crate::sse::classify::{self, Api, Kind, Payload};
use crate::sse::wire::{self, Body};

/// The file as read: per request, its timestamp and, per response, what it holds.
#[derive(Deserialize)]
struct Export {
    experiments: Vec<Experiment>,
}

#[derive(Deserialize)]
struct Experiment {
    requests: Vec<Request>,
}

#[derive(Deserialize)]
struct Request {
    timestamp: i64,
    response_timestamps: Vec<i64>,
    #[serde(deserialize_with = "fragments")]
    response_outputs: Result<Vec<Response>, String>,
}

/// What one response output holds, as GenAI-Perf's empty-response rule sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Response {
    text: bool,
    error: bool,
}

#[derive(Deserialize)]
struct Output {
    response: Option<String>,
}

/// A request's response outputs, classified as soon as they are read: their text is
/// dropped when this returns. A fragment that cannot be read is `Err` (reported with the
/// request's position by the caller).
fn fragments<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Result<Vec<Response>, String>, D::Error> {
    let outputs = Vec::<Output>::deserialize(d)?;
    let mut texts = Vec::with_capacity(outputs.len());
    for (i, o) in outputs.into_iter().enumerate() {
        match o.response {
            Some(r) => texts.push(r),
            None => {
                return Ok(Err(format!(
                    "response {} has no `response` string (only perf_analyzer's OpenAI service kind is read)",
                    i + 1
                )))
            }
        }
    }
    Ok(classify_responses(texts))
}

/// Whether a fragment opens with an SSE field other than `data` (GenAI-Perf's
/// `not_data_sse_field`): such a fragment is not the rest of a split event.
fn other_field(r: &str) -> bool {
    r.starts_with(':') || r.starts_with("event:") || r.starts_with("id:") || r.starts_with("retry:")
}

/// GenAI-Perf's pre-processing of one request's fragments: split events re-joined to the
/// response they began in, then each response's events read.
fn classify_responses(mut texts: Vec<String>) -> Result<Vec<Response>, String> {
    for i in (1..texts.len()).rev() {
        let r = &texts[i];
        if r.is_empty() || r.starts_with("data:") || other_field(r) {
            continue;
        }
        if !texts[i - 1].contains("data:") {
            return Err(format!(
                "response {} continues a split SSE event, but response {} holds no `data:` field to continue",
                i + 1,
                i
            ));
        }
        let cut = r.find("data:").unwrap_or(r.len());
        let rest = texts[i].split_off(cut);
        let head = std::mem::replace(&mut texts[i], rest);
        texts[i - 1].push_str(&head);
    }
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| response(t).map_err(|e| format!("response {}: {e}", i + 1)))
        .collect()
}

/// One response's events: text if any has text, error if any is an error.
fn response(text: &str) -> Result<Response, String> {
    let lines = capture::lines(text).map_err(|e| e.message)?;
    let mut out = Response::default();
    for record in wire::parse(&lines.lines) {
        let Body::Event(e) = record.body else {
            continue;
        };
        let data = e.data.trim();
        if data == "[DONE]" {
            continue;
        }
        if e.name.as_deref() == Some("error") {
            out.error = true;
            continue;
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|_| "its SSE `data` is neither `[DONE]` nor JSON".to_string())?;
        let kind = classify::classify(Api::ChatCompletions, e.name.as_deref(), Payload::Json(&v));
        if kind.kind == Some(Kind::Error) {
            out.error = true;
        } else if has_text(&v) {
            out.text = true;
        }
    }
    Ok(out)
}

/// GenAI-Perf's `_extract_openai_text_output`, reduced to whether the text is empty.
fn has_text(v: &Value) -> bool {
    let Some(first) = v.get("choices").and_then(|c| c.get(0)) else {
        return false;
    };
    let text = match v.get("object").and_then(Value::as_str) {
        None | Some("text_completion") => first.get("text"),
        Some("chat.completion") => first.get("message").and_then(|m| m.get("content")),
        Some("chat.completion.chunk") => first.get("delta").and_then(|d| d.get("content")),
        Some(_) => None,
    };
    text.and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

/// What a `profile_export.json` looks like from its keys: `experiments`, each with
/// `requests` carrying `timestamp` and `response_timestamps`. Reads keys only.
pub fn looks_like_file(path: &Path) -> bool {
    #[derive(Deserialize)]
    struct Shape {
        experiments: Vec<ShapeExperiment>,
    }
    #[derive(Deserialize)]
    struct ShapeExperiment {
        requests: Vec<ShapeRequest>,
    }
    #[derive(Deserialize)]
    struct ShapeRequest {
        #[serde(rename = "timestamp")]
        _timestamp: IgnoredAny,
        #[serde(rename = "response_timestamps")]
        _response_timestamps: IgnoredAny,
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    serde_json::from_reader::<_, Shape>(std::io::BufReader::new(file))
        .is_ok_and(|s| s.experiments.iter().any(|e| !e.requests.is_empty()))
}

/// The file read: one row per request with the columns of the module documentation, and
/// the run's notes.
pub fn read(path: &Path) -> Result<super::Adapted> {
    let file =
        std::fs::File::open(path).map_err(|e| Error::input(path, format!("cannot open: {e}")))?;
    let export: Export = serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| {
        Error::input(
            path,
            format!(
                "cannot read as perf_analyzer's profile_export.json (`experiments` → `requests` with `timestamp`, `response_timestamps`, `response_outputs`): {e}"
            ),
        )
    })?;
    let (mut ts, mut ttft, mut latency, mut outcome) = (vec![], vec![], vec![], vec![]);
    let mut skipped = 0u64;
    for (x, experiment) in export.experiments.into_iter().enumerate() {
        for (r, request) in experiment.requests.into_iter().enumerate() {
            let at = || format!("experiment {}, request {}", x + 1, r + 1);
            let responses = request
                .response_outputs
                .map_err(|e| Error::input(path, format!("{}: {e}", at())))?;
            if responses.len() != request.response_timestamps.len() {
                return Err(Error::input(
                    path,
                    format!(
                        "{}: {} response timestamps but {} response outputs",
                        at(),
                        request.response_timestamps.len(),
                        responses.len()
                    ),
                ));
            }
            let with_text: Vec<i64> = request
                .response_timestamps
                .iter()
                .zip(&responses)
                .filter(|(_, o)| o.text)
                .map(|(t, _)| *t)
                .collect();
            let ms = |t: Option<&i64>| t.map(|t| (t - request.timestamp) as f64 / 1e6);
            if with_text.is_empty() {
                skipped += 1;
            }
            ts.push(request.timestamp);
            ttft.push(ms(with_text.first()));
            latency.push(ms(with_text.last()));
            outcome.push(if responses.iter().any(|o| o.error) {
                "error"
            } else {
                "ok"
            });
        }
    }
    let total = ts.len();
    if total == 0 {
        return Err(Error::input(
            path,
            "perf_analyzer's profile_export.json with no request in any experiment",
        ));
    }
    let frame = DataFrame::new(
        total,
        vec![
            Column::new("timestamp".into(), ts),
            Column::new("client_ttft_ms".into(), ttft),
            Column::new("client_latency_ms".into(), latency),
            Column::new("outcome".into(), outcome),
        ],
    )
    .map_err(|e| Error::input(path, format!("cannot build the request frame: {e}")))?;
    let mut notes = vec![NOTE.to_string()];
    if skipped > 0 {
        notes.push(format!(
            "{skipped} of {total} GenAI-Perf requests have no response with text (GenAI-Perf skips them): kept, with null client timings"
        ));
    }
    Ok(super::Adapted {
        frame: frame.lazy(),
        notes,
    })
}

/// What a run notes about a GenAI-Perf export: the origin, the rules, the missing tokens.
pub const NOTE: &str = "GenAI-Perf (perf_analyzer profile_export.json) client figures, counted from perf_analyzer's send (c0): responses without text are left out first (GenAI-Perf's rule), client_ttft_ms ends at the first response with text, client_latency_ms at the last; output tokens are null (GenAI-Perf counts them with a tokenizer tracediag does not have), so no inter-token latency; the client table (rules/client.toml) classifies the requests on that clock";

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(fragments: &[&str]) -> Vec<String> {
        fragments.iter().map(|s| s.to_string()).collect()
    }

    const fn r(text: bool, error: bool) -> Response {
        Response { text, error }
    }

    #[test]
    fn empty_responses_have_no_text_and_split_events_join_the_response_they_began_in() {
        let got = classify_responses(texts(&[
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n",
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"\"}}]}\n\n",
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"con",
            "tent\":\"Hi\"}}]}\n\ndata: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"\"}}]}\n\n",
            ": keep-alive\n\n",
            "data: {\"object\":\"text_completion\",\"choices\":[{\"text\":\"x\"}]}\n\ndata: [DONE]\n\n",
            "data: [DONE]\n\n",
        ]))
        .unwrap();
        assert_eq!(
            got,
            [
                r(false, false),
                r(false, false),
                // The split chunk's text counts where its event began.
                r(true, false),
                r(false, false),
                r(false, false),
                r(true, false),
                r(false, false),
            ]
        );
        // Completions without `object` (vLLM) read `choices[0].text`.
        let vllm = classify_responses(texts(&["data: {\"choices\":[{\"text\":\"a\"}]}\n\n"]));
        assert_eq!(vllm.unwrap(), [r(true, false)]);
    }

    #[test]
    fn an_sse_error_is_no_text_and_marks_the_response() {
        let got = classify_responses(texts(&[
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n",
            "event: error\ndata: {\"message\":\"overloaded\"}\n\n",
            "data: {\"error\":{\"message\":\"boom\",\"code\":502}}\n\n",
        ]))
        .unwrap();
        assert_eq!(got, [r(true, false), r(false, true), r(false, true)]);
        let bad = classify_responses(texts(&["data: not json\n\n"])).unwrap_err();
        assert_eq!(
            bad,
            "response 1: its SSE `data` is neither `[DONE]` nor JSON"
        );
        let orphan = classify_responses(texts(&[": hi\n\n", "tent\"}"])).unwrap_err();
        assert!(
            orphan.starts_with("response 2 continues a split SSE event"),
            "{orphan}"
        );
    }

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profile_export.json");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn ns_become_ms_from_the_responses_with_text_and_skipped_requests_stay_in() {
        let chunk = |c: &str| {
            format!(
                r#"{{"response":"data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"delta\":{{\"content\":\"{c}\"}}}}]}}\n\n"}}"#
            )
        };
        let text = format!(
            r#"{{"experiments":[{{"experiment":{{"mode":"concurrency","value":1}},"requests":[
              {{"timestamp":1000000000,"request_inputs":{{"payload":"{{\"messages\":[{{\"content\":\"SECRET-PROMPT\"}}]}}"}},
                "response_timestamps":[1001000000,1002500000,1004000000,1005000000],
                "response_outputs":[{},{},{},{{"response":"data: [DONE]\n\n"}}]}},
              {{"timestamp":2000000000,"request_inputs":{{}},
                "response_timestamps":[2003000000],"response_outputs":[{}]}}
            ]}}],"service_kind":"openai","endpoint":"v1/chat/completions"}}"#,
            chunk(""),
            chunk("SECRET-OUTPUT"),
            chunk("b"),
            chunk(""),
        );
        let (_d, path) = write(&text);
        assert!(looks_like_file(&path));
        let a = read(&path).unwrap();
        let df = a.frame.collect().unwrap();
        let f =
            |c: &str| -> Vec<Option<f64>> { df.column(c).unwrap().f64().unwrap().iter().collect() };
        assert_eq!(f("client_ttft_ms"), [Some(2.5), None]);
        assert_eq!(f("client_latency_ms"), [Some(4.0), None]);
        let ts: Vec<Option<i64>> = df
            .column("timestamp")
            .unwrap()
            .i64()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(ts, [Some(1_000_000_000), Some(2_000_000_000)]);
        assert_eq!(a.notes.len(), 2);
        assert!(
            a.notes[1].starts_with("1 of 2 GenAI-Perf requests"),
            "{}",
            a.notes[1]
        );
        assert!(!format!("{df:?}").contains("SECRET"));
    }

    #[test]
    fn mismatched_responses_are_an_error_naming_the_request() {
        let (_d, path) = write(
            r#"{"experiments":[{"requests":[{"timestamp":1,"response_timestamps":[2,3],"response_outputs":[{"response":"data: [DONE]\n\n"}]}]}]}"#,
        );
        let Err(e) = read(&path) else {
            panic!("read a mismatched request")
        };
        assert!(
            e.to_string()
                .contains("experiment 1, request 1: 2 response timestamps but 1 response outputs"),
            "{e}"
        );
    }

    #[test]
    fn only_an_export_with_requests_is_recognised() {
        for text in [
            r#"{"experiments":[]}"#,
            r#"{"experiments":[{"requests":[{"timestamp":1}]}]}"#,
            r#"{"request_latency":{},"input_config":{}}"#,
        ] {
            let (_d, path) = write(text);
            assert!(!looks_like_file(&path), "{text}");
        }
    }
}
