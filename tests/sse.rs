//! `tracediag sse`: every recorded stream vendored under `fixtures/external/sse/` with its
//! counts per event kind and its usage; the terminal and JSON outputs whole; the timed
//! captures' gateway rows with their t3..t6, read back by `analyze`; refusals.

mod common;

use common::*;
use std::io::Write;
use std::process::{Command, Stdio};

/// (file, records, events, [envelope, heartbeat, effective output, visible text, error],
/// input tokens, output tokens) of every file in `fixtures/external/sse/`.
///
/// Counted outside tracediag, by a short Python script written for this table: the text
/// split on `\r\n|\r|\n`, blocks cut at blank lines; a `:` line is a comment (heartbeat);
/// a block with a `data:` line is an event, `[DONE]` envelope; else its JSON read and,
/// per API (told by the file's folder name): Anthropic by the `event:` name and whether
/// the delta's `text` / `thinking` / `partial_json` is non-empty, `ping` a heartbeat;
/// Responses by `type` ending `.delta` with a non-empty `delta` (output_text / refusal
/// visible, the rest effective); Gemini by parts' `text` with or without `thought`;
/// Chat Completions by a top-level `error`, then `content`/`refusal`, then `reasoning` /
/// `reasoning_content` / tool-call `arguments`. Spot checks by grep agree: 383
/// `response.reasoning_summary_text.delta` and 271 `response.output_text.delta`
/// (reasoning_summary); 14 `thinking_delta` of which one is `""`, 95 `text_delta`
/// (anthropic thinking); 17 `: OPENROUTER PROCESSING` lines.
///
/// Tokens: the last figure of each usage key in the raw text (`prompt_tokens` /
/// `completion_tokens`; `response.completed`'s `usage`; Anthropic's last `input_tokens`
/// of `message_start`/`message_delta` and the last `message_delta` `output_tokens`;
/// Gemini's last `promptTokenCount`, and `candidatesTokenCount` + `thoughtsTokenCount`).
type Expected = (
    &'static str,
    usize,
    usize,
    [usize; 5],
    Option<u64>,
    Option<u64>,
);

#[rustfmt::skip]
const STREAMS: &[Expected] = &[
    ("anthropic_basic_response.sse", 9, 9, [5, 1, 0, 3, 0], Some(11), Some(6)),
    ("anthropic_fable-fallback_stream-a-refusal.sse", 14, 14, [9, 1, 3, 1, 0], Some(28), Some(106)),
    // message_start says 612 input tokens, the (cumulative) message_delta 28: the last wins.
    ("anthropic_fable-fallback_stream-a-toolrefusal.sse", 18, 18, [10, 0, 7, 1, 0], Some(28), Some(106)),
    ("anthropic_fable-fallback_stream-b-fallback.sse", 21, 21, [5, 1, 0, 15, 0], Some(31), Some(547)),
    ("anthropic_incomplete_partial_json_response.sse", 16, 16, [7, 1, 3, 5, 0], Some(450), Some(124)),
    ("anthropic_pydanticai_anthropic_small_stream.sse", 7, 7, [5, 1, 0, 1, 0], Some(20), Some(5)),
    ("anthropic_pydanticai_anthropic_thinking_stream.sse", 118, 118, [9, 1, 13, 95, 0], Some(43), Some(282)),
    ("anthropic_refusal_response.sse", 5, 5, [5, 0, 0, 0, 0], Some(20), Some(0)),
    ("anthropic_tool_use_response.sse", 15, 15, [8, 1, 4, 2, 0], Some(377), Some(65)),
    ("gemini_pydanticai_gemini-2.0-flash-exp_streamGenerateContent_alt_sse.sse", 3, 3, [0, 0, 0, 3, 0], Some(13), Some(8)),
    ("gemini_pydanticai_gemini-2.5-pro_thinking_streamGenerateContent_alt_sse.sse", 23, 23, [0, 0, 4, 19, 0], Some(34), Some(1256)),
    ("openai_chat_173417d55340.sse", 14, 14, [4, 0, 0, 10, 0], Some(79), Some(11)),
    ("openai_chat_2018feb66ae1.sse", 11, 11, [4, 0, 7, 0, 0], Some(44), Some(16)),
    ("openai_chat_4cc50a6135d2.sse", 5, 5, [4, 0, 0, 1, 0], Some(79), Some(1)),
    ("openai_chat_569c877e6942.sse", 15, 15, [4, 0, 0, 11, 0], Some(79), Some(12)),
    ("openai_chat_7e5ea4d12e7c.sse", 18, 18, [4, 0, 0, 14, 0], Some(79), Some(14)),
    ("openai_chat_83b060bae42e.sse", 6, 6, [4, 0, 0, 2, 0], Some(9), Some(2)),
    ("openai_chat_a247c49c5fcd.sse", 14, 14, [4, 0, 10, 0, 0], Some(48), Some(19)),
    ("openai_chat_a491adda08c3.sse", 50, 50, [8, 0, 0, 42, 0], Some(79), Some(42)),
    ("openai_chat_c6aa7e397b71.sse", 18, 18, [4, 0, 14, 0, 0], Some(76), Some(24)),
    ("openai_chat_d61558011839.sse", 181, 181, [4, 0, 0, 177, 0], Some(19), Some(177)),
    ("openai_chat_e2aad469b71d.sse", 34, 34, [4, 0, 0, 30, 0], Some(14), Some(30)),
    ("openai_chat_f82268f2fefd.sse", 26, 26, [6, 0, 20, 0, 0], Some(149), Some(60)),
    ("openai_chat_pydanticai_chat_completions_real_model_req0.sse", 9, 9, [4, 0, 5, 0, 0], Some(53), Some(15)),
    ("openai_chat_pydanticai_chat_completions_real_model_req1.sse", 12, 12, [4, 0, 0, 8, 0], Some(78), Some(9)),
    ("openai_responses_pydanticai_responses_function_call_gpt-4o_req0.sse", 11, 11, [6, 0, 5, 0, 0], Some(255), Some(16)),
    ("openai_responses_pydanticai_responses_function_call_gpt-4o_req1.sse", 15, 15, [8, 0, 0, 7, 0], Some(278), Some(9)),
    ("openai_responses_pydanticai_responses_reasoning_summary.sse", 676, 676, [22, 0, 383, 271, 0], Some(13), Some(1680)),
    ("openai_responses_pydanticai_responses_streaming_usage.sse", 14, 14, [8, 0, 6, 0, 0], Some(53), Some(469)),
    ("openrouter_pydanticai_openrouter_stream_error_after_200.sse", 22, 5, [2, 17, 2, 0, 1], Some(43), Some(10)),
];

const DIR: &str = "fixtures/external/sse";

fn json(args: &[&str]) -> serde_json::Value {
    let o = ok(args);
    serde_json::from_str(&o).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {o}"))
}

#[test]
fn every_recorded_stream_has_its_counts_per_kind_and_its_usage() {
    let mut on_disk: Vec<String> = std::fs::read_dir(root().join(DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sse"))
        .collect();
    on_disk.sort();
    let listed: Vec<String> = STREAMS.iter().map(|s| s.0.to_string()).collect();
    assert_eq!(on_disk, listed, "every vendored stream is in the table");

    let files: Vec<String> = STREAMS.iter().map(|s| format!("{DIR}/{}", s.0)).collect();
    let mut args = vec!["sse", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let doc = json(&args);
    let streams = doc["streams"].as_array().unwrap();
    assert_eq!(streams.len(), STREAMS.len());
    let mut faults = vec![];
    for (s, (name, records, events, kinds, input, output)) in streams.iter().zip(STREAMS) {
        let k = &s["kinds"];
        let got = (
            s["records"].as_u64().unwrap() as usize,
            s["events"].as_u64().unwrap() as usize,
            [
                k["envelope"].as_u64().unwrap() as usize,
                k["heartbeat"].as_u64().unwrap() as usize,
                k["effective_output"].as_u64().unwrap() as usize,
                k["visible_text"].as_u64().unwrap() as usize,
                k["error"].as_u64().unwrap() as usize,
            ],
            s["input_tokens"].as_u64(),
            s["output_tokens"].as_u64(),
        );
        if got != (*records, *events, *kinds, *input, *output) {
            faults.push(format!("{name}: got {got:?}"));
        }
        // Every recorded stream is whole; only the OpenRouter one fails (after HTTP 200).
        let want = if name.starts_with("openrouter") {
            "error"
        } else {
            "ok"
        };
        if s["outcome"] != want || s["complete"] != true {
            faults.push(format!(
                "{name}: outcome {} complete {}",
                s["outcome"], s["complete"]
            ));
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn the_api_is_told_from_the_events_whatever_the_file_is_called() {
    let dir = tempfile::tempdir().unwrap();
    let mut faults = vec![];
    for (prefix, api) in [
        ("anthropic_", "anthropic_messages"),
        ("gemini_", "gemini"),
        ("openai_chat_", "chat_completions"),
        ("openai_responses_", "responses"),
        ("openrouter_", "chat_completions"),
    ] {
        for (name, ..) in STREAMS.iter().filter(|s| s.0.starts_with(prefix)) {
            // Renamed, so nothing but the content can tell.
            let copy = dir.path().join("stream.txt");
            std::fs::copy(root().join(DIR).join(name), &copy).unwrap();
            let doc = json(&["sse", "--format", "json", copy.to_str().unwrap()]);
            if doc["streams"][0]["api"] != api {
                faults.push(format!("{name}: {}", doc["streams"][0]["api"]));
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// One stream of each API, and the error after HTTP 200.
const SAMPLE: [&str; 6] = [
    "fixtures/external/sse/anthropic_pydanticai_anthropic_thinking_stream.sse",
    "fixtures/external/sse/gemini_pydanticai_gemini-2.5-pro_thinking_streamGenerateContent_alt_sse.sse",
    "fixtures/external/sse/openai_chat_2018feb66ae1.sse",
    "fixtures/external/sse/openai_responses_pydanticai_responses_reasoning_summary.sse",
    "fixtures/external/sse/openai_responses_pydanticai_responses_streaming_usage.sse",
    "fixtures/external/sse/openrouter_pydanticai_openrouter_stream_error_after_200.sse",
];

/// Words of the streams' text, reasoning and arguments: none may reach an output.
const CONTENT: [&str; 6] = [
    "Paris",
    "capital",
    "Token limit",
    "We need",
    "get_capital",
    "France",
];

fn no_content(text: &str) {
    for w in CONTENT {
        assert!(!text.contains(w), "content `{w}` leaked: {text}");
    }
}

#[test]
fn terminal_output_of_one_stream_of_each_api() {
    let mut args = vec!["sse"];
    args.extend(SAMPLE);
    let out = cli(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "whole streams have no notes");
    no_content(&stdout(&out));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn json_output_of_one_stream_of_each_api() {
    let mut args = vec!["sse", "--format", "json"];
    args.extend(SAMPLE);
    let o = ok(&args);
    no_content(&o);
    insta::assert_snapshot!(o);
}

#[test]
fn the_same_streams_give_byte_identical_output() {
    let mut args = vec!["sse", "--format", "json"];
    args.extend(SAMPLE);
    assert_eq!(ok(&args), ok(&args));
}

/// The legacy `/v1/completions` stream (vLLM's benchmark endpoint) was read as Chat
/// Completions: every event an envelope, "first output none", though 25 text chunks came.
#[test]
fn legacy_completions_stream_is_read_as_completions_with_its_text() {
    let file = "fixtures/sse/synthetic_completions_legacy.sse";
    let doc = json(&["sse", "--format", "json", file]);
    let s = &doc["streams"][0];
    assert_eq!(s["api"], "completions");
    assert_eq!(
        (s["records"].as_u64(), s["events"].as_u64()),
        (Some(28), Some(28))
    );
    let k = &s["kinds"];
    assert_eq!(
        (
            k["visible_text"].as_u64(),
            k["envelope"].as_u64(),
            k["effective_output"].as_u64()
        ),
        (Some(25), Some(3), Some(0))
    );
    assert_eq!(s["first_effective_output"], 1);
    assert_eq!(s["first_visible_text"], 1);
    assert_eq!(
        (s["input_tokens"].as_u64(), s["output_tokens"].as_u64()),
        (Some(12), Some(25))
    );
    assert_eq!(
        (s["outcome"].as_str(), s["complete"].as_bool()),
        (Some("ok"), Some(true))
    );
    let out = ok(&["sse", file]);
    assert!(
        out.contains("api           OpenAI Completions (legacy)"),
        "{out}"
    );
    assert!(out.contains("first output  record 1 "), "{out}");
    assert!(!out.contains("lighthouse"), "content leaked: {out}");
}

/// Groq's tokens and timings are in `x_groq.usage` of its last chunk: the usage was
/// null and the timings unread.
#[test]
fn groq_x_groq_usage_gives_the_tokens_and_the_providers_own_timings() {
    let file = "fixtures/sse/synthetic_groq_chat.sse";
    let doc = json(&["sse", "--format", "json", file]);
    let s = &doc["streams"][0];
    assert_eq!(s["api"], "chat_completions");
    assert_eq!(
        (s["input_tokens"].as_u64(), s["output_tokens"].as_u64()),
        (Some(18), Some(6))
    );
    let t = &s["server_timing"];
    assert_eq!(t["source"], "x_groq.usage");
    assert_eq!(t["queue_time_s"], 0.061348671);
    assert_eq!(t["prompt_time_s"], 0.000211569);
    assert_eq!(t["completion_time_s"], 0.010909091);
    assert_eq!(t["total_time_s"], 0.01112066);
    let out = cli(&["sse", file]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let o = stdout(&out);
    assert!(
        o.contains("usage         input 18 tokens, output 6 tokens"),
        "{o}"
    );
    assert!(
        o.contains("provider      queue 61.349 ms, prompt 0.212 ms, completion 10.909 ms, total 11.121 ms (`x_groq.usage`: the provider's own timings, on its clock; not on this stream's timeline)"),
        "{o}"
    );
    // Streams without such timings say nothing of them.
    let other = json(&[
        "sse",
        "--format",
        "json",
        "fixtures/sse/synthetic_completions_legacy.sse",
    ]);
    assert!(other["streams"][0].get("server_timing").is_none());
}

const TIMED_CHAT: &str = "fixtures/sse/synthetic_timed_chat.sse";
const TIMED_CUT: &str = "fixtures/sse/synthetic_timed_anthropic_cut.sse";

fn rows(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The synthetic captures' expected points, from their receive times (fixtures/sse/README.md):
/// sent at …600.000000; the keep-alive comment (…600.350) is no t3; the first chunk's blank
/// line …600.412500 is t3; the reasoning chunk's blank line …600.900250 is t4; the first
/// content chunk's …601.250000 is t5; the last line …601.600125 is t6.
#[test]
fn a_timed_capture_gives_its_points_from_the_send_time() {
    let out = cli(&["sse", TIMED_CHAT]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let r = rows(&stdout(&out));
    assert_eq!(r.len(), 1);
    let r = &r[0];
    assert_eq!(r["first_sse_event_ms"], 412.5);
    assert_eq!(r["first_response_ms"], 900.25);
    assert_eq!(r["first_text_delta_ms"], 1250.0);
    assert_eq!(r["upstream_done_ms"], 1600.125);
    assert_eq!(r["timestamp"], "2025-12-02T00:00:00.000Z");
    assert_eq!(r["request_id"], "chatcmpl-synthetic-1");
    assert_eq!(r["model"], "gpt-4o-synthetic");
    assert_eq!(r["outcome"], "ok");
    assert_eq!(r["is_stream"], true);
    assert_eq!(
        (r["input_tokens"].as_u64(), r["output_tokens"].as_u64()),
        (Some(12), Some(5))
    );
    // 7 data events (the keep-alive is a comment, not an event); 2 carry text.
    assert_eq!(r["stream_event_count"], 7);
    assert_eq!(r["text_delta_count"], 2);
}

/// Cut after the thinking deltas: t5 null, no output figure (no message_delta), outcome
/// cancelled, said on stderr. Points: sent …700.0; message_start …700.8 (t3); the empty
/// thinking delta at …701.1 is no output; the first non-empty one …701.7 (t4); last
/// line …702.25 (t6).
#[test]
fn a_timed_capture_cut_short_is_cancelled_and_said_so() {
    let out = cli(&["sse", TIMED_CUT]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("tracediag: note: {TIMED_CUT}: no terminal event (expected `message_stop`): the stream is incomplete, outcome cancelled\n")
    );
    let r = &rows(&stdout(&out))[0];
    assert_eq!(r["outcome"], "cancelled");
    assert_eq!(r["first_sse_event_ms"], 800.0);
    assert_eq!(r["first_response_ms"], 1700.0);
    assert!(r["first_text_delta_ms"].is_null());
    assert_eq!(r["upstream_done_ms"], 2250.0);
    assert_eq!(r["input_tokens"], 30);
    assert!(
        r["output_tokens"].is_null(),
        "never the message_start placeholder"
    );
    assert_eq!(r["text_delta_count"], 0);
}

#[test]
fn timed_rows_whole() {
    insta::assert_snapshot!(ok(&["sse", TIMED_CHAT, TIMED_CUT]));
}

#[test]
fn analyze_reads_the_rows_piped_from_sse() {
    let rows = ok(&["sse", TIMED_CHAT, TIMED_CUT]);
    let mut child = Command::new(bin())
        .args(["analyze", "-", "--format", "json"])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(rows.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["rows"], 2);
    let fields: Vec<&str> = doc["inputs"][0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    // Every column of the rows is a field analyze maps.
    assert_eq!(fields.len(), 13, "{fields:?}");
    let outcomes: Vec<(String, u64)> = doc["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [("ok".to_string(), 1), ("cancelled".to_string(), 1)]
    );
    let metric = |name: &str| {
        doc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    // The medians of the two captures' points: (412.5 + 800) / 2, (900.25 + 1700) / 2;
    // t5 only in the chat capture.
    let t3 = metric("time_to_first_event_ms");
    assert_eq!(
        (t3["n"].as_u64(), t3["p50"].as_f64()),
        (Some(2), Some(606.25))
    );
    let t4 = metric("time_to_first_effective_ms");
    assert_eq!(
        (t4["n"].as_u64(), t4["p50"].as_f64()),
        (Some(2), Some(1300.125))
    );
    let t5 = metric("time_to_first_visible_text_ms");
    assert_eq!(
        (t5["n"].as_u64(), t5["p50"].as_f64()),
        (Some(1), Some(1250.0))
    );
}

#[test]
fn out_writes_the_rows_that_analyze_reads() {
    let dir = tempfile::tempdir().unwrap();
    for ext in ["jsonl", "csv", "parquet"] {
        let path = dir.path().join(format!("rows.{ext}"));
        let p = path.to_str().unwrap();
        let out = cli(&["sse", TIMED_CHAT, "--out", p]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(stdout(&out), "");
        assert!(stderr(&out).contains("wrote 1 rows to"), "{}", stderr(&out));
        let doc = json(&["analyze", p, "--format", "json"]);
        assert_eq!(doc["rows"], 1, "{ext}");
        // Not over an existing file without --force.
        let again = fails(&["sse", TIMED_CHAT, "--out", p]);
        assert!(again.contains("already exists"), "{again}");
    }
}

#[test]
fn a_file_that_is_not_sse_is_refused_naming_what_it_looks_like() {
    let cases = [
        (
            "fixtures/external/newapi_yushow1024_items.jsonl",
            "JSON (an object or JSON lines)",
        ),
        (
            "fixtures/generated/gateway.csv",
            "CSV or other delimited text",
        ),
        (
            "rules/gateway.toml",
            "text whose first line is not an SSE field",
        ),
    ];
    for (file, looks) in cases {
        if !root().join(file).exists() {
            panic!("{file} is gone: pick another");
        }
        let e = fails(&["sse", file]);
        assert!(
            e.starts_with(&format!(
                "tracediag: error: {file}: not an SSE stream: it looks like {looks}"
            )),
            "{e}"
        );
    }
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn refusals_of_captures_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let no_sent = write(&dir, "a.sse", "1.0 data: {\"choices\":[]}\n1.0 \n");
    let e = fails(&["sse", &no_sent]);
    assert!(
        e.contains(&format!("{no_sent}: has receive times but no `: sent")),
        "{e}"
    );
    let gap = write(
        &dir,
        "b.sse",
        "1.0 : sent 1.0\n1.0 \ndata: {\"choices\":[]}\n",
    );
    let e = fails(&["sse", &gap]);
    assert!(
        e.contains(&format!("{gap}: line 3: carries no receive time")),
        "{e}"
    );
    let early = write(
        &dir,
        "c.sse",
        "5.0 : sent 5.0\n4.0 data: {\"choices\":[]}\n4.0 \n",
    );
    let e = fails(&["sse", &early]);
    assert!(
        e.contains(&format!("{early}: line 2: received before the send time")),
        "{e}"
    );
    let bad = write(
        &dir,
        "d.sse",
        "data: {\"choices\":[]}\n\ndata: not json\n\ndata: [DONE]\n\n",
    );
    let e = fails(&["sse", &bad]);
    assert!(
        e.contains(&format!(
            "{bad}: line 3: an event's data is not a JSON object"
        )),
        "{e}"
    );
    assert!(!e.contains("not json"), "the payload is not quoted: {e}");
    let unknown = write(&dir, "e.sse", "event: tick\ndata: {\"n\": 1}\n\n");
    let e = fails(&["sse", &unknown]);
    assert!(
        e.contains("none of its 1 events is one of OpenAI Chat Completions"),
        "{e}"
    );
    assert!(e.contains("(event names: tick)"), "{e}");
    let e = fails(&[
        "sse",
        TIMED_CHAT,
        "fixtures/external/sse/anthropic_basic_response.sse",
    ]);
    assert!(
        e.contains(
            "has receive times and fixtures/external/sse/anthropic_basic_response.sse has none"
        ),
        "{e}"
    );
    let e = fails(&[
        "sse",
        "fixtures/external/sse/anthropic_basic_response.sse",
        "--out",
        "x.jsonl",
    ]);
    assert!(
        e.contains("--out writes the gateway rows of timed captures"),
        "{e}"
    );
    let e = fails(&["sse", TIMED_CHAT, "--format", "json"]);
    assert!(
        e.contains("--format applies to bodies without receive times"),
        "{e}"
    );
}

#[test]
fn a_body_cut_mid_event_is_cancelled_and_the_cut_event_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let whole =
        std::fs::read_to_string(root().join(DIR).join("openai_chat_4cc50a6135d2.sse")).unwrap();
    // Cut inside the third data line.
    let at = whole.match_indices("data: ").nth(2).unwrap().0 + 30;
    let cut = write(&dir, "cut.sse", &whole[..at]);
    let out = cli(&["sse", "--format", "json", &cut]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &doc["streams"][0];
    assert_eq!(
        (s["outcome"].as_str(), s["complete"].as_bool()),
        (Some("cancelled"), Some(false))
    );
    assert_eq!(s["events"], 2);
    assert!(s["output_tokens"].is_null(), "no usage chunk arrived");
    let e = stderr(&out);
    assert!(
        e.contains("the last event (line 5) is cut off mid-payload: not counted"),
        "{e}"
    );
    assert!(
        e.contains("no terminal event (expected `data: [DONE]` or a `finish_reason`)"),
        "{e}"
    );
    assert_eq!(s["notes"].as_array().unwrap().len(), 2);
}

#[test]
fn crlf_and_cr_bodies_read_as_the_lf_body() {
    let dir = tempfile::tempdir().unwrap();
    let file = "anthropic_pydanticai_anthropic_thinking_stream.sse";
    let lf = std::fs::read_to_string(root().join(DIR).join(file)).unwrap();
    assert!(!lf.contains('\r'));
    let strip = |v: serde_json::Value| {
        let mut s = v["streams"][0].clone();
        s.as_object_mut().unwrap().remove("file");
        s
    };
    let want = strip(json(&["sse", "--format", "json", &format!("{DIR}/{file}")]));
    for (name, sep) in [("crlf.sse", "\r\n"), ("cr.sse", "\r")] {
        let p = write(&dir, name, &lf.replace('\n', sep));
        assert_eq!(
            strip(json(&["sse", "--format", "json", &p])),
            want,
            "{name}"
        );
    }
}
