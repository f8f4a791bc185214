//! Azure OpenAI `RequestResponse` resource logs: the real Event Hub sample reads to the
//! values written in the file, column by column; other categories are skipped and
//! counted; stream-type spellings normalise; absent values stay null; bad input is an
//! error naming the file, line and field, never a panic.

use std::path::{Path, PathBuf};

use polars::prelude::*;
use tracediag::source::azure_requests::{looks_like_request_response, read, RequestLog};
use tracediag::Error;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn real_sample() -> PathBuf {
    root().join("fixtures/external/azure/elastic_test-open-ai-request-response.log")
}

fn mixed() -> PathBuf {
    root().join("fixtures/azure/requests/mixed.jsonl")
}

fn read_ok(path: &Path) -> RequestLog {
    read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes `text` to a temporary file and reads it.
fn read_text(text: &str) -> (tempfile::TempDir, tracediag::Result<RequestLog>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("requests.log");
    std::fs::write(&path, text).unwrap();
    let result = read(&path);
    (dir, result)
}

fn error_of(text: &str) -> String {
    match read_text(text) {
        (_, Ok(log)) => panic!("expected an error, read {} records", log.kept),
        (_, Err(e @ Error::Input { .. })) => e.to_string(),
        (_, Err(e)) => panic!("expected an input error, got {e:?}"),
    }
}

fn strings(df: &DataFrame, name: &str) -> Vec<Option<String>> {
    let c = df.column(name).unwrap();
    assert_eq!(c.dtype(), &DataType::String, "{name}");
    c.str()
        .unwrap()
        .iter()
        .map(|v| v.map(String::from))
        .collect()
}

fn some(values: &[&str]) -> Vec<Option<String>> {
    values.iter().map(|v| Some(v.to_string())).collect()
}

fn floats(df: &DataFrame, name: &str) -> Vec<Option<f64>> {
    let c = df.column(name).unwrap();
    assert_eq!(c.dtype(), &DataType::Float64, "{name}");
    c.f64().unwrap().to_vec()
}

fn ints(df: &DataFrame, name: &str) -> Vec<Option<i64>> {
    let c = df.column(name).unwrap();
    assert_eq!(c.dtype(), &DataType::Int64, "{name}");
    c.i64().unwrap().to_vec()
}

fn flags(df: &DataFrame, name: &str) -> Vec<Option<bool>> {
    let c = df.column(name).unwrap();
    assert_eq!(c.dtype(), &DataType::Boolean, "{name}");
    c.bool().unwrap().iter().collect()
}

/// One RequestResponse record with the given `properties` JSON (object or string).
fn record(properties: &str) -> String {
    format!(
        r#"{{"category":"RequestResponse","correlationId":"id-1","durationMs":10,"location":"eastus","operationName":"ChatCompletions_Create","properties":{properties},"resultSignature":"200","time":"2024-05-24T12:23:02.4350000Z"}}"#
    )
}

const COLUMNS: [&str; 10] = [
    "request_id",
    "timestamp",
    "model",
    "channel",
    "region",
    "status",
    "is_stream",
    "input_tokens",
    "output_tokens",
    "total_handler_ms",
];

#[test]
fn real_sample_keeps_all_three_records() {
    let log = read_ok(&real_sample());
    assert_eq!(log.kept, 3);
    assert_eq!(log.skipped_other_categories, 0);
    assert_eq!(log.frame.height(), 3);
}

#[test]
fn real_sample_values_are_those_in_the_file() {
    let df = read_ok(&real_sample()).frame;
    assert_eq!(
        strings(&df, "request_id"),
        some(&[
            "9d3a6e98-fc11-48d0-82cf-4de065c1a1f8",
            "d427a391-2bc7-4f38-9cbc-6560600e0981",
            "d427a391-2bc7-4f38-9cbc-6560600e0981",
        ])
    );
    // As written: the canonical mapping parses the 7-digit fraction (unit test there).
    assert_eq!(
        strings(&df, "timestamp"),
        some(&[
            "2024-04-08T12:23:02.4350000Z",
            "2024-05-24T12:23:02.4350000Z",
            "2024-05-24T12:23:02.4350000Z",
        ])
    );
    // Line 1's properties (a JSON string) name no model or deployment.
    assert_eq!(
        strings(&df, "model"),
        vec![None, Some("gpt-35-turbo".into()), Some("dall-e-3".into())]
    );
    assert_eq!(
        strings(&df, "channel"),
        vec![None, Some("gpt-chat-pilot".into()), Some("dall-e-3".into())]
    );
    assert_eq!(strings(&df, "region"), some(&["eastus"; 3]));
    assert_eq!(strings(&df, "status"), some(&["200"; 3]));
    // Line 1 has no streamType: unknown, not false.
    assert_eq!(
        flags(&df, "is_stream"),
        vec![None, Some(false), Some(false)]
    );
    // Line 3's negative duration is kept for the data-quality check to flag.
    assert_eq!(
        floats(&df, "total_handler_ms"),
        vec![Some(102.0), Some(1021.0), Some(-1021.0)]
    );
    assert_eq!(ints(&df, "input_tokens"), vec![None; 3]);
    assert_eq!(ints(&df, "output_tokens"), vec![None; 3]);
}

#[test]
fn frame_has_only_canonical_columns_and_no_identity_or_resource() {
    let df = read_ok(&real_sample()).frame;
    let names: Vec<&str> = df.get_column_names().iter().map(|n| n.as_str()).collect();
    assert_eq!(names, COLUMNS);
    for name in &names {
        assert!(
            tracediag::catalogue::field(name).is_some(),
            "{name} is not a canonical field"
        );
    }
    // No value of an identity or resource field reached the frame.
    for column in df.columns() {
        if let Ok(values) = column.str() {
            for v in values.iter().flatten() {
                assert!(!v.contains("81.2.69"), "caller IP in {}", column.name());
                assert!(
                    !v.contains("SUBSCRIPTIONS"),
                    "resource id in {}",
                    column.name()
                );
                assert!(!v.contains("API version"), "apiName in {}", column.name());
            }
        }
    }
}

#[test]
fn mixed_fixture_skips_and_counts_the_audit_record() {
    let log = read_ok(&mixed());
    assert_eq!(log.kept, 3);
    assert_eq!(log.skipped_other_categories, 1);
    let df = &log.frame;
    assert_eq!(
        strings(df, "request_id"),
        some(&[
            "0f6c1e2a-0000-4000-8000-000000000001",
            "0f6c1e2a-0000-4000-8000-000000000002",
            "0f6c1e2a-0000-4000-8000-000000000003",
        ])
    );
    assert_eq!(
        strings(df, "model"),
        some(&["gpt-4o", "gpt-4o", "gpt-4o-mini"])
    );
    assert_eq!(
        strings(df, "channel"),
        some(&["chat-prod", "chat-prod", "chat-mini"])
    );
    assert_eq!(strings(df, "status"), some(&["200", "429", "200"]));
    assert_eq!(
        flags(df, "is_stream"),
        vec![Some(false), Some(true), Some(true)]
    );
    // Tokens where the record has them (line 4 inside a properties string), else null.
    assert_eq!(ints(df, "input_tokens"), vec![Some(120), None, Some(900)]);
    assert_eq!(ints(df, "output_tokens"), vec![Some(48), None, Some(350)]);
    assert_eq!(
        floats(df, "total_handler_ms"),
        vec![Some(850.0), Some(35.0), Some(4210.0)]
    );
    assert_eq!(
        strings(df, "timestamp"),
        some(&[
            "2024-06-03T09:15:01.2340000Z",
            "2024-06-03T09:15:12.0000000Z",
            "2024-06-03T09:16:07.1110000Z",
        ])
    );
}

#[test]
fn only_other_categories_give_an_empty_frame_with_the_count() {
    let audit = std::fs::read_to_string(mixed())
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    let (_dir, result) = read_text(&format!("{audit}\n{audit}\n"));
    let log = result.unwrap();
    assert_eq!(log.kept, 0);
    assert_eq!(log.skipped_other_categories, 2);
    assert_eq!(log.frame.height(), 0);
    let names: Vec<&str> = log
        .frame
        .get_column_names()
        .iter()
        .map(|n| n.as_str())
        .collect();
    assert_eq!(names, COLUMNS);
}

#[test]
fn stream_type_spellings_and_absent_values() {
    let lines = [
        record(r#"{"streamType":"Streaming"}"#),
        record(r#"{"streamType":"streaming"}"#),
        record(r#"{"streamType":"NonStreaming"}"#),
        record(r#"{"streamType":"NON-STREAMING"}"#),
        record(r#"{"streamType":"Batch"}"#),
        record("{}"),
        record("null"),
        record(r#""""#),
    ];
    let (_dir, result) = read_text(&lines.join("\n"));
    let df = result.unwrap().frame;
    assert_eq!(
        flags(&df, "is_stream"),
        vec![
            Some(true),
            Some(true),
            Some(false),
            Some(false),
            None,
            None,
            None,
            None
        ]
    );
    assert_eq!(strings(&df, "model"), vec![None; 8]);
    assert_eq!(ints(&df, "input_tokens"), vec![None; 8]);
}

#[test]
fn absent_top_level_fields_are_null_not_zero() {
    let (_dir, result) = read_text(r#"{"category":"RequestResponse","operationName":"X"}"#);
    let df = result.unwrap().frame;
    for name in COLUMNS {
        assert_eq!(df.column(name).unwrap().null_count(), 1, "{name}");
    }
}

#[test]
fn numbers_written_as_text_and_numeric_status_are_read() {
    let line = r#"{"category":"requestresponse","operationName":"X","durationMs":"12.5","resultSignature":429,"properties":{"promptTokens":"7","completionTokens":3.0}}"#;
    let (_dir, result) = read_text(line);
    let df = result.unwrap().frame;
    assert_eq!(floats(&df, "total_handler_ms"), vec![Some(12.5)]);
    assert_eq!(strings(&df, "status"), some(&["429"]));
    assert_eq!(ints(&df, "input_tokens"), vec![Some(7)]);
    assert_eq!(ints(&df, "output_tokens"), vec![Some(3)]);
}

#[test]
fn blank_lines_crlf_and_bom_are_accepted() {
    let text = format!(
        "\u{feff}{}\r\n\r\n   \n{}\r\n",
        record("{}"),
        record(r#"{"streamType":"Streaming"}"#)
    );
    let (_dir, result) = read_text(&text);
    let log = result.unwrap();
    assert_eq!(log.kept, 2);
    assert_eq!(flags(&log.frame, "is_stream"), vec![None, Some(true)]);
}

#[test]
fn broken_json_line_names_its_line_number() {
    let text = format!("{}\n\n{{\"category\": \"RequestResponse\",\n", record("{}"));
    let msg = error_of(&text);
    assert!(msg.contains("requests.log"), "{msg}");
    assert!(msg.contains("line 3"), "{msg}");
    assert!(msg.contains("not valid JSON"), "{msg}");
}

#[test]
fn properties_string_with_invalid_json_names_the_line_and_field() {
    let text = format!(
        "{}\n{}\n",
        record("{}"),
        record(r#""{\"modelName\": \"gpt-4o\", ""#)
    );
    let msg = error_of(&text);
    assert!(msg.contains("line 2"), "{msg}");
    assert!(msg.contains("`properties`"), "{msg}");
    assert!(msg.contains("not valid JSON"), "{msg}");
}

#[test]
fn properties_string_holding_a_non_object_is_an_error() {
    let msg = error_of(&record(r#""[1, 2]""#));
    assert!(msg.contains("line 1"), "{msg}");
    assert!(msg.contains("`properties`"), "{msg}");
    assert!(msg.contains("array"), "{msg}");
}

#[test]
fn wrong_types_name_the_line_and_field() {
    let cases = [
        (
            r#"{"category":"RequestResponse","durationMs":"fast"}"#,
            "durationMs",
        ),
        (
            r#"{"category":"RequestResponse","correlationId":42}"#,
            "correlationId",
        ),
        (
            r#"{"category":"RequestResponse","properties":{"promptTokens":1.5}}"#,
            "properties.promptTokens",
        ),
        (
            r#"{"category":"RequestResponse","properties":{"modelName":["a"]}}"#,
            "properties.modelName",
        ),
        (
            r#"{"category":"RequestResponse","properties":7}"#,
            "properties",
        ),
        (
            r#"{"category":"RequestResponse","resultSignature":true}"#,
            "resultSignature",
        ),
        (r#"{"category":3}"#, "category"),
    ];
    for (line, field) in cases {
        let text = format!("{}\n{line}\n", record("{}"));
        let msg = error_of(&text);
        assert!(msg.contains("line 2"), "{line}: {msg}");
        assert!(msg.contains(&format!("`{field}`")), "{line}: {msg}");
    }
}

#[test]
fn a_line_that_is_not_a_resource_log_record_is_an_error() {
    let msg = error_of(r#"{"request_id":"a","total_handler_ms":5}"#);
    assert!(msg.contains("line 1"), "{msg}");
    assert!(msg.contains("category"), "{msg}");
    let msg = error_of("[1, 2, 3]\n");
    assert!(msg.contains("line 1"), "{msg}");
    assert!(msg.contains("JSON object"), "{msg}");
}

#[test]
fn empty_file_is_an_error() {
    for text in ["", "\n", "  \n\r\n\t\n", "\u{feff}"] {
        let msg = error_of(text);
        assert!(msg.contains("empty"), "{text:?}: {msg}");
    }
}

#[test]
fn non_utf8_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("requests.log");
    std::fs::write(
        &path,
        b"{\"category\":\"RequestResponse\",\"location\":\"\xff\"}\n",
    )
    .unwrap();
    let msg = read(&path).unwrap_err().to_string();
    assert!(msg.contains("UTF-8"), "{msg}");
}

#[test]
fn missing_file_is_an_error() {
    let msg = read(&root().join("fixtures/azure/requests/no-such-file.jsonl"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("no-such-file.jsonl"), "{msg}");
}

/// Every byte prefix of the real sample reads to a frame or to an error; a prefix that
/// ends at a line boundary keeps exactly the complete lines.
#[test]
fn every_prefix_of_the_real_sample_is_a_frame_or_an_error_never_a_panic() {
    let bytes = std::fs::read(real_sample()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prefix.log");
    for n in 0..=bytes.len() {
        std::fs::write(&path, &bytes[..n]).unwrap();
        let result = std::panic::catch_unwind(|| read(&path));
        let result = result.unwrap_or_else(|_| panic!("panic on the first {n} bytes"));
        let prefix = &bytes[..n];
        let complete = prefix.iter().filter(|b| **b == b'\n').count();
        let at_boundary = n == bytes.len() || prefix.last() == Some(&b'\n');
        if at_boundary && complete > 0 {
            let log = result.unwrap_or_else(|e| panic!("first {n} bytes: {e}"));
            assert_eq!(log.kept, complete.min(3), "first {n} bytes");
        } else if let Err(e) = &result {
            assert!(matches!(e, Error::Input { .. }), "first {n} bytes: {e:?}");
            // A cut inside line k names line k.
            let msg = e.to_string();
            if n > 0 {
                assert!(
                    msg.contains(&format!("line {}", complete + 1)),
                    "first {n} bytes: {msg}"
                );
            }
        }
    }
}

#[test]
fn detection_by_first_line() {
    let text = std::fs::read_to_string(real_sample()).unwrap();
    let first = text.lines().next().unwrap();
    assert!(looks_like_request_response(first));
    assert!(looks_like_request_response(&text));
    assert!(looks_like_request_response(&format!(
        "\n  \n\u{feff}{first}"
    )));
    assert!(looks_like_request_response(
        r#"{"category":"requestresponse","operationName":"X"}"#
    ));
    // No operationName, another category, not an object, not JSON, nothing.
    assert!(!looks_like_request_response(
        r#"{"category":"RequestResponse"}"#
    ));
    let audit = std::fs::read_to_string(mixed()).unwrap();
    assert!(!looks_like_request_response(audit.lines().nth(1).unwrap()));
    assert!(!looks_like_request_response(r#"["RequestResponse"]"#));
    assert!(!looks_like_request_response(
        r#"{"category":"RequestResponse","#
    ));
    assert!(!looks_like_request_response("request_id,total_handler_ms"));
    assert!(!looks_like_request_response(""));
    assert!(!looks_like_request_response(
        r#"{"request_id":"a","operationName":"X"}"#
    ));
}
