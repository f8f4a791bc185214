//! GenAI-Perf's per-request input (perf_analyzer's `profile_export.json`): detected by
//! content, one row per request with client timings from the responses with text
//! (GenAI-Perf's rule), skipped and errored requests kept; the GenAI-Perf summary stays
//! refused, naming this file. The fixture is synthetic (fixtures/genai-perf/SOURCES.md).

mod common;

use common::*;

const EXPORT: &str = "fixtures/genai-perf/profile_export.json";

/// stdout and stderr of a successful run, as one text.
fn whole(args: &[&str]) -> String {
    let out = cli(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    format!("{}--- stderr ---\n{}", stdout(&out), stderr(&out))
}

#[test]
fn profile_export_table() {
    let text = whole(&["analyze", EXPORT]);
    assert!(text.contains("requests: 5"), "{text}");
    assert!(text.contains("outcomes: ok 4, error 1"), "{text}");
    assert!(
        text.contains("1 of 5 GenAI-Perf requests have no response with text"),
        "{text}"
    );
    // Neither the prompts nor the generated text reach any output.
    for secret in ["Say hello", "Hello", "world", "upstream overloaded"] {
        assert!(!text.contains(secret), "{secret}: {text}");
    }
    insta::assert_snapshot!(text);
}

#[test]
fn profile_export_json() {
    let text = whole(&[
        "analyze",
        EXPORT,
        "--format",
        "json",
        "--salt",
        "genai-perf",
    ]);
    let (json, _) = text.split_once("--- stderr ---").unwrap();
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["inputs"][0]["format"], "GenAI-Perf profile_export.json");
    let metric = |name: &str| {
        v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    // TTFTs 212.5, 171.25, 340 (the errored request's text before its error), 290 ms;
    // the skipped request has none.
    let ttft = metric("client_time_to_first_token_ms");
    assert_eq!(ttft["n"], 4);
    assert_eq!(ttft["p50"], 251.25);
    // Last responses with text: 251, 190, 340, 330 ms (a trailing empty chunk or `[DONE]`
    // does not end a request).
    assert_eq!(metric("client_request_latency_ms")["p50"], 290.5);
    insta::assert_snapshot!(text);
}

#[test]
fn detected_by_content_and_forced_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("run.json");
    std::fs::copy(root().join(EXPORT), &renamed).unwrap();
    let detected = whole(&["analyze", renamed.to_str().unwrap()]);
    let forced = whole(&[
        "analyze",
        renamed.to_str().unwrap(),
        "--input-format",
        "genai-perf",
    ]);
    assert_eq!(detected, forced);
    assert!(
        detected.contains("GenAI-Perf profile_export.json"),
        "{detected}"
    );
}

#[test]
fn the_genai_perf_summary_is_refused_naming_profile_export_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile_export_genai_perf.json");
    // The top-level keys of a GenAI-Perf summary (values do not matter to the refusal).
    std::fs::write(
        &path,
        "{\n  \"request_throughput\": {},\n  \"request_latency\": {},\n  \"time_to_first_token\": {},\n  \"output_token_throughput\": {},\n  \"input_config\": {}\n}\n",
    )
    .unwrap();
    let e = fails(&["analyze", path.to_str().unwrap()]);
    assert!(e.contains("cannot be used as a request log"), "{e}");
    assert!(
        e.contains("this looks like a GenAI-Perf summary (`profile_export_genai_perf.json`)"),
        "{e}"
    );
    assert!(e.contains("`tracediag analyze profile_export.json`"), "{e}");
}

#[test]
fn a_request_with_mismatched_responses_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile_export.json");
    std::fs::write(
        &path,
        r#"{"experiments":[{"requests":[{"timestamp":1,"response_timestamps":[2,3],"response_outputs":[{"response":"data: [DONE]\n\n"}]}]}]}"#,
    )
    .unwrap();
    let e = fails(&["analyze", path.to_str().unwrap()]);
    assert!(
        e.contains("experiment 1, request 1: 2 response timestamps but 1 response outputs"),
        "{e}"
    );
}
