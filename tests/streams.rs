//! Streams and exits: results on stdout, diagnostics (notes, warnings, the bad-row list) on
//! stderr in every command; an incident window that holds no request is exit 2 naming the
//! window and the data's span; overlapping inputs and a `--by` column no input has are
//! said on stderr.

mod common;

use common::*;

const GATEWAY: &str = "fixtures/generated/gateway.parquet";
const TRACES: &str = "fixtures/traces/traces.jsonl";
/// A broken line (a bad row) …
const BROKEN: &str = "fixtures/bad/jsonl_broken_line.jsonl";
/// … and a timing both flat and nested (a note), sharing its two ids with `BROKEN`.
const SHADOWED: &str = "fixtures/bad/jsonl_flat_and_nested_timing.jsonl";

/// Run, expect `code`, return (stdout, stderr).
fn run(args: &[&str], code: i32) -> (String, String) {
    let o = cli(args);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(
        o.status.code(),
        Some(code),
        "{args:?}\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    (out, err)
}

/// The error of a window after the generated log's data.
const GATEWAY_SPAN: &str = "the requests of fixtures/generated/gateway.parquet run from 2026-11-02T00:00:00.078Z to 2026-11-02T01:39:58.947Z (UTC)";

#[test]
fn an_empty_window_is_exit_2_naming_the_window_and_the_span_in_every_command() {
    let since =
        "tracediag: error: the incident window --since 2027-11-02T00:00:00.000Z holds no request: ";
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let csv = dir.path().join("rows.csv");
    for (args, prefix) in [
        (vec!["analyze", GATEWAY], ""),
        (vec!["analyze", GATEWAY, "--format", "json"], ""),
        (vec!["analyze", GATEWAY, "--out", csv.to_str().unwrap()], ""),
        (vec!["throughput", GATEWAY], ""),
        (vec!["explain", GATEWAY, "--request-id", "req-0000018"], ""),
        (vec!["explain", GATEWAY, "--class", "auth_slow"], ""),
        (vec!["report", GATEWAY, "--out", html.to_str().unwrap()], ""),
        (vec!["compare", GATEWAY, GATEWAY], "cohort A: "),
        (
            vec!["compare", GATEWAY, "--split", "channel=ch-east,ch-west"],
            "",
        ),
    ] {
        let mut args = args;
        args.extend(["--since", "2027-11-02"]);
        let (out, err) = run(&args, 2);
        let want = if prefix.is_empty() {
            format!("{since}{GATEWAY_SPAN}\n")
        } else {
            format!(
                "tracediag: error: {prefix}{}{GATEWAY_SPAN}\n",
                &since["tracediag: error: ".len()..]
            )
        };
        assert_eq!(err, want, "{args:?}");
        assert_eq!(out, "", "{args:?}: nothing on stdout");
    }
    // No output file is written.
    assert!(!html.exists() && !csv.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // Both bounds, before the data.
    let (_, err) = run(
        &[
            "analyze",
            TRACES,
            "--since",
            "2020-01-01",
            "--until",
            "2020-01-02",
        ],
        2,
    );
    assert_eq!(
        err,
        "tracediag: error: the incident window --since 2020-01-01T00:00:00.000Z --until 2020-01-02T00:00:00.000Z holds no request: the requests of fixtures/traces/traces.jsonl run from 2026-11-02T10:00:00.000Z to 2026-11-02T10:00:02.000Z (UTC)\n"
    );
    // A window that holds requests, but not the one asked for, keeps its own error.
    let (_, err) = run(
        &[
            "explain",
            TRACES,
            "--request-id",
            "trace-a",
            "--since",
            "2026-11-02T10:00:01Z",
        ],
        2,
    );
    assert!(err.contains("no request `trace-a`"), "{err}");
}

/// Azure Monitor exports: a window with none of their windows is the same error.
#[test]
fn an_empty_window_over_azure_exports_is_exit_2() {
    let tokens = "fixtures/azure/generated/GeneratedTokens.json";
    let want = "tracediag: error: the incident window --until 2020-01-01T00:00:00.000Z holds no window: the windows of fixtures/azure/generated/GeneratedTokens.json run from 2026-11-02T08:17:00.000Z to 2026-11-02T14:16:00.000Z (UTC)\n";
    for command in ["analyze", "throughput"] {
        let (out, err) = run(&[command, tokens, "--until", "2020-01-01"], 2);
        assert_eq!(err, want, "{command}");
        assert_eq!(out, "");
    }
}

/// Notes, the bad-row list and the overlap warning are on stderr and not in the tables;
/// JSON keeps them as fields.
#[test]
fn analyze_prints_diagnostics_on_stderr_only() {
    let (out, err) = run(&["analyze", BROKEN, SHADOWED], 0);
    insta::assert_snapshot!("analyze_diagnostics_stdout", out);
    insta::assert_snapshot!("analyze_diagnostics_stderr", err);
    for diagnostic in ["note:", "warning:", "Bad rows", "line 3, column 99"] {
        assert!(!out.contains(diagnostic), "{diagnostic} on stdout:\n{out}");
    }
    assert!(
        err.contains("tracediag: warning: Bad rows (--on-bad-row keep)"),
        "{err}"
    );
    assert!(err.contains("tracediag: note: fixtures/bad/jsonl_flat_and_nested_timing.jsonl: upstream_headers_ms is both"), "{err}");

    let (json, _) = run(&["analyze", BROKEN, SHADOWED, "--format", "json"], 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["bad_rows"]["unreadable"], 1);
    assert!(v["notes"].as_array().unwrap().len() >= 2);
    assert_eq!(v["overlapping_inputs"]["whole_file_ids"], 2);

    // A report file keeps its notes inside; stderr says them too.
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("r.md");
    let (out, err) = run(
        &["report", BROKEN, SHADOWED, "--out", md.to_str().unwrap()],
        0,
    );
    assert_eq!(out, "");
    assert!(err.contains("tracediag: note: "), "{err}");
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("upstream_headers_ms is both"), "{text}");
}

#[test]
fn throughput_notes_are_on_stderr() {
    let (out, err) = run(&["throughput", TRACES], 0);
    assert!(!out.contains("note:"), "{out}");
    insta::assert_snapshot!("throughput_notes_stderr", err);
}

/// Compare's contract warnings: on stderr; the table on stdout marks the rows.
#[test]
fn compare_warnings_are_on_stderr() {
    let (out, err) = run(&["compare", TRACES, "fixtures/classes/auth_slow.jsonl"], 0);
    assert!(!out.contains("warning:"), "{out}");
    assert!(out.contains("WARNING"), "{out}");
    insta::assert_snapshot!("compare_warnings_stderr", err);
}

#[test]
fn explain_and_azure_diagnostics_are_on_stderr() {
    let (out, err) = run(&["explain", BROKEN, "--request-id", "r1"], 0);
    assert!(!out.contains("Bad rows"), "{out}");
    assert_eq!(
        err,
        "tracediag: warning: Bad rows (--on-bad-row keep): 1 row could not be read whole; kept, their unreadable parts null (dq_unreadable)\n  fixtures/bad/jsonl_broken_line.jsonl: line 3, column 99: EOF while parsing a value\n"
    );
    let cpu = "fixtures/external/azure/grafana_8-azure-monitor-response-unspecified-unit.json";
    let (out, err) = run(
        &[
            "analyze",
            "fixtures/azure/generated/AzureOpenAITTLTInMS.json",
            cpu,
        ],
        0,
    );
    assert!(!out.contains("note:"), "{out}");
    assert_eq!(
        err,
        format!("tracediag: note: {cpu}: holds no metric tracediag reads (metrics found: Percentage CPU); its windows have no figure and are insufficient_data\n")
    );
}

/// The same requests in two files: stderr names the pair; one file alone, or files that
/// share only a few ids, say nothing of it.
#[test]
fn overlapping_inputs_are_named_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.parquet");
    std::fs::copy(root().join(GATEWAY), &copy).unwrap();
    let copy = copy.to_str().unwrap();
    let want = format!(
        "tracediag: warning: 2999 of 2999 duplicate ids are whole-file copies: {GATEWAY} and {copy} hold the same requests; every figure counts those requests once per file\n"
    );
    let (out, err) = run(&["analyze", GATEWAY, copy], 0);
    assert!(out.contains("requests: 6000"), "{out}");
    assert_eq!(err, want);
    let (_, err) = run(&["throughput", GATEWAY, copy], 0);
    assert!(err.starts_with(&want), "{err}");
    let (_, err) = run(&["analyze", GATEWAY, GATEWAY], 0);
    assert!(
        err.contains(&format!(
            "2999 of 2999 duplicate ids are whole-file copies: {GATEWAY} is read twice"
        )),
        "{err}"
    );
    let (json, _) = run(&["analyze", GATEWAY, copy, "--format", "json"], 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["overlapping_inputs"],
        serde_json::json!({
            "duplicate_ids": 2999,
            "whole_file_ids": 2999,
            "pairs": [{"a": GATEWAY, "b": copy, "shared_ids": 2999, "a_ids": 2999, "b_ids": 2999}],
        })
    );
    // One file with a duplicate id of its own: no overlap.
    let (_, err) = run(&["analyze", GATEWAY], 0);
    assert!(!err.contains("whole-file"), "{err}");
    let (json, _) = run(&["analyze", GATEWAY, "--format", "json"], 0);
    assert!(!json.contains("overlapping_inputs"));
}

/// The duplicate-id check gives the same rows, examples and overlapping inputs whether its
/// confirmation rides on the summary's first pass (the whole log) or runs before it (an
/// incident window, here one holding every request, flags within it the ids the whole log
/// repeats).
#[test]
fn duplicates_confirmed_on_the_first_pass_are_those_confirmed_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.parquet");
    std::fs::copy(root().join(GATEWAY), &copy).unwrap();
    let copy = copy.to_str().unwrap();
    for inputs in [vec![GATEWAY], vec![GATEWAY, copy]] {
        let mut args = vec!["analyze"];
        args.extend(&inputs);
        args.extend(["--format", "json"]);
        let (json, _) = run(&args, 0);
        let whole: serde_json::Value = serde_json::from_str(&json).unwrap();
        args.extend(["--since", "1970-01-01T00:00:00Z"]);
        let (json, _) = run(&args, 0);
        let windowed: serde_json::Value = serde_json::from_str(&json).unwrap();
        let check = |v: &serde_json::Value| {
            v["quality"]
                .as_array()
                .unwrap()
                .iter()
                .find(|q| q["check"] == "duplicate_id")
                .cloned()
                .unwrap()
        };
        assert_eq!(check(&whole), check(&windowed), "{inputs:?}");
        assert_eq!(whole["overlapping_inputs"], windowed["overlapping_inputs"]);
        assert!(check(&whole)["count"].as_u64().unwrap() >= 2, "{whole}");
    }
}

/// `--by` a column no input has: a warning on stderr (one `(none)` group on stdout), exit
/// 2 under `analyze --strict`; `compare --split` on it is refused.
#[test]
fn a_by_column_no_input_has_is_said() {
    let warning = "tracediag: warning: --by user: no input has a `user` column (nor user_id, username, client_id, request_user_id, client): every request is in its (none) group\n";
    let (out, err) = run(&["analyze", TRACES, "--by", "user"], 0);
    assert!(out.contains("(none)"), "{out}");
    assert_eq!(err, warning);
    let (json, _) = run(
        &["analyze", TRACES, "--by", "model,user", "--format", "json"],
        0,
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["groups"]["absent"], serde_json::json!(["user"]));

    let (out, err) = run(&["analyze", TRACES, "--by", "model,user", "--strict"], 2);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "tracediag: error: --by user: no input has a `user` column (nor user_id, username, client_id, request_user_id, client): --strict refuses to group by it\n"
    );

    let (_, err) = run(&["throughput", TRACES, "--by", "user"], 0);
    assert!(err.starts_with(warning), "{err}");

    let (_, err) = run(&["compare", TRACES, "--split", "user=a,b"], 2);
    assert_eq!(
        err,
        "tracediag: error: --split user=a,b: no input has a `user` column (nor user_id, username, client_id, request_user_id, client): there is nothing to split\n"
    );

    // A column the input has, a partition key or `class`: no warning.
    let (_, err) = run(
        &[
            "analyze",
            "fixtures/ids/users.jsonl",
            "--by",
            "user,class",
            "--strict",
            "--salt",
            "s",
        ],
        0,
    );
    assert!(!err.contains("no input has"), "{err}");
    let (json, _) = run(&["analyze", TRACES, "--by", "model", "--format", "json"], 0);
    assert!(!json.contains("\"absent\""), "{json}");
}
