//! OpenTelemetry OTLP JSON span exports: detected by content, one row per GenAI span,
//! the engine's and the client's clocks kept apart from the gateway's, other spans left
//! out and counted, and exports with nothing to time refused.

mod common;

use common::*;

const VLLM: &str = "fixtures/otel/vllm_llm_request_spans.otlp.json";
const COLLECTOR: &str = "fixtures/otel/collector_file_exporter.jsonl";

/// stdout and stderr of a successful run, as one text.
fn whole(args: &[&str]) -> String {
    let out = cli(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    format!("{}--- stderr ---\n{}", stdout(&out), stderr(&out))
}

#[test]
fn vllm_server_spans_table() {
    insta::assert_snapshot!(whole(&["analyze", VLLM]));
}

#[test]
fn vllm_server_spans_json() {
    let text = whole(&["analyze", VLLM, "--format", "json", "--salt", "otel"]);
    let (json, _) = text.split_once("--- stderr ---").unwrap();
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["inputs"][0]["format"], "otlp");
    let n = |name: &str| {
        v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))["n"]
            .as_u64()
    };
    assert_eq!(n("engine_time_to_first_token_ms"), Some(2));
    // The spans are the inference server's clock: its table classifies them.
    assert_eq!(v["rules"]["name"], "engine");
    insta::assert_snapshot!(text);
}

/// The collector's file exporter: JSON lines, detected whatever the extension says, and
/// forced with `--input-format otlp`.
#[test]
fn collector_file_export_as_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("traces.csv");
    std::fs::copy(root().join(COLLECTOR), &renamed).unwrap();
    let text = whole(&["analyze", COLLECTOR]);
    let forced = whole(&["analyze", COLLECTOR, "--input-format", "otlp"]);
    assert_eq!(text, forced);
    let detected = whole(&["analyze", renamed.to_str().unwrap(), "--format", "json"]);
    assert!(detected.contains("\"format\": \"otlp\""), "{detected}");
    assert!(
        text.contains("1 of 3 spans have no `gen_ai.*` attribute and are left out"),
        "{text}"
    );
    assert!(text.contains("outcomes: ok 1, error 1"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn an_export_without_genai_spans_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("http.jsonl");
    std::fs::write(
        &path,
        r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"aa","spanId":"bb","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"http.route","value":{"stringValue":"/"}}]}]}]}]}"#,
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let e = fails(&["analyze", p]);
    assert!(
        e.contains(&format!(
            "tracediag: error: {p}: cannot be used as a request log: no GenAI span: none of its 1 spans has a `gen_ai.*` attribute"
        )),
        "{e}"
    );
    assert!(e.contains("read as: OpenTelemetry OTLP JSON spans"), "{e}");
    // Forcing the format on a file that holds no spans at all says the same.
    let other = dir.path().join("rows.jsonl");
    std::fs::write(&other, "{\"request_id\":\"a\",\"total_handler_ms\":1}\n").unwrap();
    let e = fails(&["analyze", other.to_str().unwrap(), "--input-format", "otel"]);
    assert!(e.contains("none of its 0 spans"), "{e}");
}

#[test]
fn an_otlp_metrics_export_is_refused_naming_the_span_export() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metrics.json");
    std::fs::write(
        &path,
        "{\n  \"resourceMetrics\": [\n    {\"scopeMetrics\": []}\n  ]\n}\n",
    )
    .unwrap();
    let e = fails(&["analyze", path.to_str().unwrap()]);
    assert!(e.contains("columns found (1): resourceMetrics"), "{e}");
    assert!(
        e.contains("= help: this looks like an OpenTelemetry OTLP JSON metrics export"),
        "{e}"
    );
}

/// serde_json and polars' JSON parser do not accept exactly the same lines: a line that is
/// JSON, but that polars cannot read with the export's schema (a `status` that is an array
/// where an object is expected), is named by its line, found by reading the lines one by
/// one with polars' reader.
#[test]
fn a_line_polars_cannot_read_is_named() {
    let span = |status: &str| {
        format!(
            "{{\"resourceSpans\":[{{\"scopeSpans\":[{{\"spans\":[{{\"traceId\":\"a\",\"spanId\":\"b\",\
             \"kind\":3,\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\",\"attributes\":\
             [{{\"key\":\"gen_ai.request.model\",\"value\":{{\"stringValue\":\"m\"}}}}],\
             \"status\":{status}}}]}}]}}]}}\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spans.jsonl");
    std::fs::write(&path, [span("{}"), "\n".into(), span("[1]")].concat()).unwrap();
    let e = fails(&["analyze", path.to_str().unwrap()]);
    assert!(
        e.contains(&format!(
            "{}: cannot read as OTLP JSON spans (JSON lines): line 3: expected dtype",
            path.display()
        )),
        "{e}"
    );
    // Far into a long export (lines are looked at a block at a time): the same line named.
    let mut lines = vec![span("{}"); 3000];
    lines[2499] = span("[1]");
    std::fs::write(&path, lines.concat()).unwrap();
    let e = fails(&["analyze", path.to_str().unwrap()]);
    assert!(e.contains("(JSON lines): line 2500: expected dtype"), "{e}");
}
