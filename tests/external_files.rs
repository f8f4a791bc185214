//! Every real file vendored under `fixtures/external/` (files nobody on this project
//! wrote) gets a diagnosis built on measured values (exit 0) or a refusal that names the
//! file, the format it was read as and the columns found (exit 2); none is "analysed" into
//! a table of nothing.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_none_or(|e| e != "md") {
            out.push(p);
        }
    }
}

fn external() -> Vec<String> {
    let root = root();
    let mut out = vec![];
    files(&root.join("fixtures/external"), &mut out);
    out.iter()
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .collect()
}

/// What a successful run on `file` rests on: measured timings for a request log, windows
/// with values for an Azure Monitor export.
fn measured(file: &str, json: &serde_json::Value) -> Result<(), String> {
    if json.get("windows").is_some() {
        let windows = json["windows"].as_u64().unwrap_or(0);
        let empty: Vec<&str> = json["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["values"].as_u64().unwrap_or(0) == 0)
            .filter_map(|i| i["path"].as_str())
            .collect();
        return if windows > 0 && empty.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{file}: {windows} windows; inputs without values: {empty:?}"
            ))
        };
    }
    let timed: Vec<&str> = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["n"].as_u64().unwrap_or(0) > 0)
        .filter_map(|m| m["name"].as_str())
        .collect();
    if timed.is_empty() {
        return Err(format!("{file}: exit 0 with no timing metric measured"));
    }
    let classes = json["classes"].as_array().unwrap();
    let rows = json["rows"].as_u64().unwrap();
    let insufficient = classes
        .iter()
        .find(|c| c["class"] == "insufficient_data")
        .and_then(|c| c["requests"].as_u64())
        .unwrap_or(0);
    // An all-insufficient diagnosis is honest only with a measured end-to-end time, or
    // the figures of a clock other than the gateway's t0 (new-api's relay start, a
    // proxy's upstream start, a benchmark client's send, an inference engine's arrival), or a t0
    // point the table cannot judge alone.
    let honest = [
        "end_to_end_ms",
        "time_to_first_event_ms",
        "time_to_upstream_done_ms",
        "relay_elapsed_ms",
        "relay_time_to_first_event_ms",
        "upstream_call_ms",
        "client_time_to_first_token_ms",
        "client_request_latency_ms",
        "engine_time_to_first_token_ms",
        "engine_request_latency_ms",
    ];
    if rows > 0 && insufficient == rows && !timed.iter().any(|t| honest.contains(t)) {
        return Err(format!(
            "{file}: every request insufficient_data on {timed:?}"
        ));
    }
    Ok(())
}

#[test]
fn every_external_file_is_diagnosed_from_timings_or_refused_with_what_it_holds() {
    let files = external();
    assert!(files.len() >= 13, "{files:?}");
    check_all(&files);
}

/// The same over every real file of `../shared/external/` (the vendored ones and those
/// whose licence keeps them out of the repository), when it is beside the checkout.
#[test]
fn every_shared_external_file_is_diagnosed_from_timings_or_refused_with_what_it_holds() {
    if !shared_external("every_shared_external_file_is_diagnosed_from_timings_or_refused") {
        return;
    }
    let root = root();
    let mut out = vec![];
    files(&root.join("../shared/external"), &mut out);
    let files: Vec<String> = out
        .iter()
        .map(|p| {
            format!(
                "../{}",
                p.strip_prefix(root.parent().unwrap()).unwrap().display()
            )
        })
        .collect();
    // 63 data files; the SOURCES notes and READMEs (`.md`) are not inputs.
    assert!(files.len() >= 63, "{} files", files.len());
    check_all(&files);
}

fn check_all(files: &[String]) {
    let mut faults = vec![];
    let mut refused = 0;
    for file in files {
        let out = cli(&["analyze", file, "--format", "json"]);
        let (o, e) = (stdout(&out), stderr(&out));
        match out.status.code() {
            Some(0) => {
                let json: serde_json::Value = serde_json::from_str(&o)
                    .unwrap_or_else(|err| panic!("{file}: stdout is not JSON ({err}): {o}"));
                if let Err(f) = measured(file, &json) {
                    faults.push(f);
                }
                if o.contains("0 canonical fields mapped")
                    || e.contains("0 canonical fields mapped")
                {
                    faults.push(format!("{file}: 0 canonical fields mapped"));
                }
            }
            Some(2) if file.contains("external/azure/") => {
                // Azure Monitor exports of storage, CPU and custom metrics: no latency.
                refused += 1;
                let wanted = format!(
                    "tracediag: error: {file}: read as an Azure Monitor metrics export, it holds no Azure OpenAI latency metric (metrics found: "
                );
                if !e.starts_with(&wanted) || !e.contains("the Azure diagnosis reads ") {
                    faults.push(format!("{file}: the refusal lacks {wanted:?}: {e}"));
                }
                if !o.is_empty() {
                    faults.push(format!("{file}: a refusal wrote to stdout: {o}"));
                }
            }
            Some(2) => {
                refused += 1;
                let wanted = [
                    format!("tracediag: error: {file}: cannot be used as a request log"),
                    "\n  read as: ".to_string(),
                    "\n  columns found".to_string(),
                ];
                for w in &wanted {
                    if !e.contains(w.as_str()) {
                        faults.push(format!("{file}: the refusal lacks {w:?}: {e}"));
                    }
                }
                if !o.is_empty() {
                    faults.push(format!("{file}: a refusal wrote to stdout: {o}"));
                }
            }
            code => faults.push(format!("{file}: exit {code:?}: {e}")),
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
    assert!(
        refused > 0 && refused < files.len(),
        "{refused} of {}",
        files.len()
    );
}

/// The refusals of each kind of vendored file, whole: what was read, what was found, what
/// it looks like. No value of the file appears (the SSE bodies' text, the log's content).
#[test]
fn refusals_name_format_columns_and_the_closest_supported_format() {
    let mut all = String::new();
    for file in [
        "fixtures/external/sse/anthropic_basic_response.sse",
        "fixtures/external/sse/openai_chat_4cc50a6135d2.sse",
    ] {
        let e = fails(&["analyze", file]);
        all.push_str(&format!("$ tracediag analyze {file}\n{e}\n"));
    }
    for canary in [
        "MiniMax",
        "openclaw",
        "chatcmpl",
        "claude-3-opus",
        "qwen-turbo",
    ] {
        assert!(!all.contains(canary), "{canary} leaked: {all}");
    }
    insta::assert_snapshot!(all);
}
