//! NVIDIA AIPerf exports (`fixtures/external/aiperf/run1`, Apache-2.0; the anud18 run is read
//! from `../shared/external/`, not vendored: its repository states no licence): the
//! per-request files are read onto
//! the client clock and diagnosed; the summaries are refused, naming the file to pass; and
//! with `--definitions aiperf` tracediag's figures equal AIPerf's own summary of the same
//! run, figure for figure. The expected values are read from AIPerf's files here, never
//! written into the test.

mod common;

use common::*;
use serde_json::Value;

const RUN1: &str = "fixtures/external/aiperf/run1/profile_export.jsonl";
const RUN1_SUMMARY: &str = "fixtures/external/aiperf/run1/profile_export_aiperf.json";
const RUN1_SUMMARY_CSV: &str = "fixtures/external/aiperf/run1/profile_export_aiperf.csv";
const ANUD18: &str =
    "../shared/external/peers/aiperf/anud18_w0_chatbot_c1/per_request_scalars.transcribed.csv";
const ANUD18_SUMMARY_CSV: &str =
    "../shared/external/peers/aiperf/anud18_w0_chatbot_c1/profile_export_aiperf.csv";
const ANUD18_RECORD: &str =
    "../shared/external/peers/aiperf/anud18_w0_chatbot_c1/profile_export.record_session6.transcribed.json";

fn json(args: &[&str]) -> Value {
    let o = ok(args);
    serde_json::from_str(&o).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {o}"))
}

/// The named metric's `n` in an analyze JSON.
fn measured(j: &Value, name: &str) -> u64 {
    j["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .and_then(|m| m["n"].as_u64())
        .unwrap_or(0)
}

#[test]
fn each_per_request_file_is_diagnosed_from_the_client_clock() {
    let mut files = vec![(RUN1, 100, 89)];
    if shared_external("each_per_request_file_is_diagnosed_from_the_client_clock (anud18)") {
        files.extend([(ANUD18, 20, 20), (ANUD18_RECORD, 1, 1)]);
    }
    for (file, requests, timed) in files {
        let j = json(&["analyze", file, "--format", "json", "--salt", "s"]);
        assert_eq!(j["rows"], requests, "{file}");
        for m in [
            "client_time_to_first_token_ms",
            "client_request_latency_ms",
            "client_inter_token_latency_ms",
        ] {
            assert_eq!(measured(&j, m), timed, "{file}: {m}");
        }
        let notes = j["notes"].to_string();
        assert!(
            notes.contains("AIPerf's first-token rule"),
            "{file}: {notes}"
        );
    }
    // The 11 cancelled records (error code 499) stay in as requests.
    let j = json(&["analyze", RUN1, "--format", "json", "--salt", "s"]);
    assert_eq!(
        j["outcomes"].to_string(),
        r#"[{"name":"ok","count":89},{"name":"cancelled","count":11}]"#
    );
}

fn terminal_outputs(files: &[&str]) -> String {
    let mut all = String::new();
    for file in files {
        all.push_str(&format!("$ tracediag analyze {file} --salt s\n"));
        all.push_str(&ok(&["analyze", file, "--salt", "s"]));
        all.push('\n');
    }
    all
}

#[test]
fn terminal_outputs_of_the_per_request_files() {
    insta::assert_snapshot!(terminal_outputs(&[RUN1]));
}

#[test]
fn terminal_outputs_of_the_anud18_files() {
    if shared_external("terminal_outputs_of_the_anud18_files") {
        insta::assert_snapshot!(terminal_outputs(&[ANUD18, ANUD18_RECORD]));
    }
}

#[test]
fn json_output_with_aiperf_definitions() {
    insta::assert_snapshot!(ok(&[
        "analyze",
        RUN1,
        "--definitions",
        "aiperf",
        "--format",
        "json",
        "--salt",
        "s"
    ]));
}

#[test]
fn terminal_output_with_aiperf_definitions() {
    insta::assert_snapshot!(ok(&[
        "analyze",
        RUN1,
        "--definitions",
        "aiperf",
        "--salt",
        "s"
    ]));
}

/// Within `rel` of each other, relative to the larger.
fn close(a: f64, b: f64, rel: f64) -> bool {
    a == b || (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// Every figure of `profile_export_aiperf.json` — each metric block it has (per-record
/// metrics, the pooled inter-chunk latency, the run totals and throughputs) and each
/// statistic of it that is not null — equals tracediag's to a relative 1e-9. Blocks are
/// matched by AIPerf's header ("Time to First Token"): the file's 2025 tags (`ttft`) are
/// the 2026 tags' old names.
#[test]
fn run1_agrees_with_aiperfs_own_summary_json() {
    let ours = json(&[
        "analyze",
        RUN1,
        "--definitions",
        "aiperf",
        "--format",
        "json",
    ]);
    let run = &ours["peer_figures"]["runs"][0];
    let theirs: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(RUN1_SUMMARY)).unwrap()).unwrap();
    let records = theirs["records"].as_object().unwrap();
    let find = |list: &str, header: &str| -> Option<Value> {
        run[list]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["header"] == header)
            .cloned()
    };
    let mut compared = 0;
    let mut faults = vec![];
    for (tag, block) in records {
        let header = block["header"].as_str().unwrap();
        if let Some(m) = find("metrics", header) {
            for (stat, want) in block.as_object().unwrap() {
                let Some(want) = want.as_f64() else { continue };
                let got = m[stat.as_str()].as_f64();
                match got {
                    Some(got) if close(got, want, 1e-9) => compared += 1,
                    _ => faults.push(format!("{tag}.{stat}: AIPerf {want}, tracediag {got:?}")),
                }
            }
        } else if let Some(a) = find("aggregates", header) {
            // A run figure: AIPerf writes it as `avg` (its `count` is the one run).
            let (want, got) = (block["avg"].as_f64().unwrap(), a["value"].as_f64().unwrap());
            if close(got, want, 1e-9) {
                compared += 1;
            } else {
                faults.push(format!("{tag}: AIPerf {want}, tracediag {got}"));
            }
        } else {
            faults.push(format!("{tag} ({header}): not computed"));
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
    // 10 metrics × 12 statistics (no p10 in this export) + count, and 11 run figures.
    assert_eq!(compared, 10 * 13 + 11);
}

/// AIPerf's summary CSV writes each figure with `%.2f`: tracediag's unrounded figure must
/// round to it, i.e. lie within 0.005 of it (a hair more for the float the CSV's text is).
fn agrees_at_two_decimals(ours: f64, csv: &str) -> bool {
    let want: f64 = csv.parse().unwrap();
    (ours - want).abs() <= 0.005 * (1.0 + 1e-9)
}

/// The rows of the first two sections of an AIPerf summary CSV: (metric cell, its
/// figures by column name).
fn summary_csv(path: &str) -> Vec<(String, Vec<(String, String)>)> {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let mut rows = vec![];
    let mut header: Vec<String> = vec![];
    for line in text.lines() {
        if line.trim().is_empty() {
            header.clear();
            continue;
        }
        let cells: Vec<String> = line.split(',').map(str::to_string).collect();
        if header.is_empty() {
            header = cells;
            continue;
        }
        let figures = header[1..]
            .iter()
            .cloned()
            .zip(cells[1..].iter().cloned())
            .collect();
        rows.push((cells[0].clone(), figures));
    }
    rows
}

/// The anud18 run: tracediag's figures from the transcribed per-request scalars equal
/// AIPerf's `profile_export_aiperf.csv` at its two decimals, for every metric tracediag
/// computes from them; the CSV's other rows (HTTP trace, provider usage, time to first
/// output token, output token count) need fields the scalars do not carry.
#[test]
fn anud18_agrees_with_aiperfs_own_summary_csv_at_its_two_decimals() {
    if !shared_external("anud18_agrees_with_aiperfs_own_summary_csv_at_its_two_decimals") {
        return;
    }
    let ours = json(&[
        "analyze",
        ANUD18,
        "--definitions",
        "aiperf",
        "--format",
        "json",
    ]);
    let run = &ours["peer_figures"]["runs"][0];
    let theirs = summary_csv(ANUD18_SUMMARY_CSV);
    let row = |header: &str, unit: &str| {
        let names = [format!("{header} ({unit})"), header.to_string()];
        theirs
            .iter()
            .find(|(name, _)| names.contains(name))
            .map(|(_, f)| f.clone())
    };
    let mut compared = 0;
    let mut faults = vec![];
    for m in run["metrics"].as_array().unwrap() {
        let (header, unit) = (m["header"].as_str().unwrap(), m["unit"].as_str().unwrap());
        let Some(figures) = row(header, unit) else {
            faults.push(format!("{header}: not in AIPerf's CSV"));
            continue;
        };
        for (stat, want) in figures {
            let got = m[stat.as_str()].as_f64().unwrap();
            if agrees_at_two_decimals(got, &want) {
                compared += 1;
            } else {
                faults.push(format!("{header} {stat}: AIPerf {want}, tracediag {got}"));
            }
        }
    }
    // The 2026 CSV leaves out the run's first and last timestamps (in ns).
    let mut not_in_csv = vec![];
    for a in run["aggregates"].as_array().unwrap() {
        let (header, unit) = (a["header"].as_str().unwrap(), a["unit"].as_str().unwrap());
        let got = a["value"].as_f64().unwrap();
        match row(header, unit) {
            Some(f) if agrees_at_two_decimals(got, &f[0].1) => compared += 1,
            Some(f) => faults.push(format!("{header}: AIPerf {}, tracediag {got}", f[0].1)),
            None => not_in_csv.push(unit),
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
    assert_eq!(not_in_csv, ["ns", "ns"]);
    // 9 metrics × 14 figures (avg, min, max, sum, p1…p99, std) and 7 run figures.
    assert_eq!(compared, 9 * 14 + 7);
}

/// The summaries stay refused, each naming the per-request file to pass. The 2026 flat
/// AIPerf summary and GenAI-Perf's summary are not vendored: files with their top-level
/// keys (from `../shared/external/peers/`) stand in.
#[test]
fn summaries_are_refused_naming_the_per_request_file() {
    let mut all = String::new();
    for file in [RUN1_SUMMARY, RUN1_SUMMARY_CSV] {
        let e = fails(&["analyze", file]);
        assert!(
            e.contains("`tracediag analyze profile_export.jsonl`"),
            "{e}"
        );
        all.push_str(&format!("$ tracediag analyze {file}\n{e}\n"));
    }
    insta::assert_snapshot!(all);
    if shared_external("summaries_are_refused_naming_the_per_request_file (anud18)") {
        let e = fails(&["analyze", ANUD18_SUMMARY_CSV]);
        assert!(
            e.contains("`tracediag analyze profile_export.jsonl`"),
            "{e}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = |names: &[&str]| {
        let body: Vec<String> = names.iter().map(|k| format!("  \"{k}\": {{}}")).collect();
        format!("{{\n{}\n}}\n", body.join(",\n"))
    };
    for (name, text, says) in [
        (
            "profile_export_aiperf.json",
            keys(&[
                "request_throughput",
                "request_latency",
                "time_to_first_token",
                "inter_chunk_latency",
                "input_config",
                "was_cancelled",
                "error_summary",
            ]),
            "`tracediag analyze profile_export.jsonl`",
        ),
        (
            "profile_export_genai_perf.json",
            keys(&[
                "request_throughput",
                "request_latency",
                "time_to_first_token",
                "output_token_throughput_per_request",
                "input_config",
            ]),
            "perf_analyzer's `profile_export.json`",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let e = fails(&["analyze", path.to_str().unwrap()]);
        assert!(e.contains("cannot be used as a request log"), "{e}");
        assert!(e.contains(says), "{name}: {e}");
    }
}

#[test]
fn definitions_refuse_a_file_aiperf_did_not_write_and_a_window() {
    let e = fails(&[
        "analyze",
        "fixtures/external/azure/elastic_test-open-ai-request-response.log",
        "--definitions",
        "aiperf",
    ]);
    assert!(e.contains("--definitions aiperf: fixtures/external/azure/elastic_test-open-ai-request-response.log reads as azure RequestResponse log, not as a file AIPerf writes"), "{e}");
    let e = fails(&[
        "analyze",
        RUN1,
        "--definitions",
        "aiperf",
        "--since",
        "2025-10-03",
    ]);
    assert!(e.contains("whole run"), "{e}");
}

/// A file whose first record has no `metrics` (detection looks at the first line) reads
/// as plain JSON lines and is refused; `--input-format aiperf` reads it.
#[test]
fn a_forced_format_reads_what_detection_does_not_recognise() {
    let text = std::fs::read_to_string(root().join(RUN1)).unwrap();
    let mut lines = text.lines();
    let mut first: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    first.as_object_mut().unwrap().remove("metrics");
    let rest: Vec<&str> = lines.collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("records.jsonl");
    std::fs::write(&path, format!("{first}\n{}\n", rest.join("\n"))).unwrap();
    let path = path.to_str().unwrap();
    fails(&["analyze", path]);
    let j = json(&[
        "analyze",
        path,
        "--input-format",
        "aiperf",
        "--format",
        "json",
    ]);
    assert_eq!(j["rows"], 100);
    assert_eq!(measured(&j, "client_request_latency_ms"), 89);
    assert_eq!(j["inputs"][0]["format"], "AIPerf profile_export.jsonl");
}
