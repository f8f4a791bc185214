//! The bad-input corpus (issue 5): fixtures/bad/ holds one file per way an input can be
//! wrong, and fixtures/bad/cases.toml the exact outcome each must produce (see the key list
//! at the top of the manifest). Every case runs the binary in a temporary directory that
//! holds only the case's inputs, so messages name the file as the manifest does and no
//! output can land in the repository.
//!
//! - `every_case_has_its_outcome`: exit code, stderr/stdout substrings, request count,
//!   data-quality counts, the --out file (written only on success, nothing left behind on
//!   failure); never a panic, a signal or an exit code of 100 or more.
//! - `every_bad_file_is_used_by_a_case`: no file in fixtures/bad/ without a case.
//! - `no_file_panics_whatever_the_options`: every file, every policy, every forced input
//!   format, table and JSON output, and `throughput`: no panic, no signal.
//!
//! A case with `known_bug` describes behaviour the tool does not have yet: the test asserts
//! that it still fails (so a fix is noticed and the marker removed). Set
//! TRACEDIAG_BAD_STRICT=1 to check those cases as ordinary ones.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    case: Vec<Case>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default)]
    files: Vec<String>,
    generated: Option<String>,
    #[serde(default = "analyze")]
    command: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    rules: Option<String>,
    out: Option<String>,
    exit: i32,
    #[serde(default)]
    stderr: Vec<String>,
    #[serde(default)]
    stdout: Vec<String>,
    #[serde(default)]
    stderr_absent: Vec<String>,
    #[serde(default)]
    stdout_absent: Vec<String>,
    requests: Option<u64>,
    quality: Option<BTreeMap<String, u64>>,
    #[serde(default)]
    out_contains: Vec<String>,
    #[serde(default)]
    out_absent: Vec<String>,
    known_bug: Option<String>,
    #[serde(default)]
    known_panic: bool,
    why: String,
}

fn analyze() -> Vec<String> {
    vec!["analyze".into()]
}

fn bad_dir() -> PathBuf {
    fixture("bad")
}

fn manifest() -> Vec<Case> {
    let path = bad_dir().join("cases.toml");
    let text = std::fs::read_to_string(&path).expect("fixtures/bad/cases.toml is readable");
    let m: Manifest = toml::from_str(&text).unwrap_or_else(|e| panic!("cases.toml: {e}"));
    m.case
}

fn strict() -> bool {
    std::env::var_os("TRACEDIAG_BAD_STRICT").is_some_and(|v| v != "0")
}

/// Run `f` over `items` on a few threads; results in input order.
fn parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .clamp(1, 8);
    let chunk = items.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a worker thread does not panic"))
            .collect()
    })
}

// ---------------------------------------------------------------------------------------
// Generated cases: too large to commit, or derived from another fixture.

const GOOD_ROW: &str = r#"{"request_id":"r1","timestamp":"2026-11-02T10:00:01Z","model":"gpt-4.1","channel":"ch-east","is_stream":true,"status":200,"output_tokens":100,"other":{"timing":{"upstream_headers_ms":240,"first_sse_event_ms":310,"first_response_ms":400,"first_text_delta_ms":420,"upstream_done_ms":2420,"total_handler_ms":2430}}}"#;

fn good_row(i: u32) -> String {
    GOOD_ROW
        .replace("\"r1\"", &format!("\"r{i}\""))
        .replace("10:00:01Z", &format!("10:00:{i:02}Z"))
}

/// A row whose `other.messages` holds 5 MiB of text.
fn five_mb_row() -> String {
    let mut v: serde_json::Value = serde_json::from_str(&good_row(2)).unwrap();
    v["other"]["messages"] = serde_json::Value::String("x".repeat(5 << 20));
    v.to_string()
}

fn deep_row() -> String {
    let n = 100_000;
    format!(
        r#"{{"request_id":"deep","other":{}{}}}"#,
        "[".repeat(n),
        "]".repeat(n)
    )
}

/// Write the inputs of a generated case into `dir`; returns their names.
fn generate(kind: &str, dir: &Path) -> Vec<String> {
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).unwrap();
        vec![name.to_string()]
    };
    match kind {
        "jsonl_5mb_line" => {
            let text = format!("{}\n{}\n{}\n", good_row(1), five_mb_row(), good_row(3));
            assert!(text.len() > 5 << 20);
            write("jsonl_5mb_line.jsonl", text.as_bytes())
        }
        "jsonl_5mb_broken_line" => {
            let big = five_mb_row();
            let cut = &big[..big.len() - 3];
            let text = format!("{}\n{cut}\n{}\n", good_row(1), good_row(3));
            write("jsonl_5mb_broken_line.jsonl", text.as_bytes())
        }
        "jsonl_deep_100k" => {
            let text = format!("{}\n{}\n{}\n", good_row(1), deep_row(), good_row(3));
            write("jsonl_deep_100k.jsonl", text.as_bytes())
        }
        "json_array_deep_100k" => {
            let text = format!("[{}]\n", deep_row());
            write("json_array_deep_100k.json", text.as_bytes())
        }
        "parquet_gateway_truncated" => {
            let bytes = std::fs::read(fixture("generated/gateway.parquet")).unwrap();
            write("gateway_truncated.parquet", &bytes[..bytes.len() / 2])
        }
        "jsonl_bad_lines_both_halves" => {
            // Rows 1-10 separated by blank lines, so line = row + 9 from row 11 on. Row 100
            // (line 109) has trailing text, row 8000 (line 8009) is cut after 50 bytes; the
            // file is over 1 MiB, so the two are found by different threads.
            let rows: Vec<String> = (1..=10_000)
                .map(|i| {
                    let row = format!(
                        r#"{{"request_id": "r{i}", "timestamp": "2026-11-02T10:00:00Z", "status": 200, "other": {{"timing": {{"upstream_headers_ms": 240, "total_handler_ms": 2430}}}}}}"#
                    );
                    match i {
                        100 => format!("{row}x"),
                        8000 => row[..50].to_string(),
                        _ => row,
                    }
                })
                .collect();
            let text = format!("{}\n{}\n", rows[..10].join("\n\n"), rows[10..].join("\n"));
            assert!(text.len() > 1 << 20, "the file must be split in two");
            write("jsonl_bad_lines_both_halves.jsonl", text.as_bytes())
        }
        other => panic!("unknown generated case kind `{other}`"),
    }
}

// ---------------------------------------------------------------------------------------
// Reading the summary

/// `requests: N` of the table, or `rows` of the JSON summary.
fn requests_of(stdout: &str) -> Option<u64> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(stdout) {
        return v.get("rows")?.as_u64();
    }
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("requests: "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// Data-quality counts by check, from the table or the JSON summary.
fn quality_of(stdout: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(stdout) {
        for q in v
            .get("quality")
            .and_then(|q| q.as_array())
            .into_iter()
            .flatten()
        {
            if let (Some(c), Some(n)) = (q["check"].as_str(), q["count"].as_u64()) {
                out.insert(c.to_string(), n);
            }
        }
        return out;
    }
    let mut in_table = false;
    for line in stdout.lines() {
        if line.starts_with("Data quality") {
            in_table = true;
            continue;
        }
        if !in_table {
            continue;
        }
        if line.starts_with('└') {
            break;
        }
        let Some(body) = line.strip_prefix('│') else {
            continue;
        };
        let cells: Vec<&str> = body.split('┆').map(str::trim).collect();
        if cells.len() >= 2 && !cells[0].is_empty() {
            if let Ok(n) = cells[1].parse::<u64>() {
                out.insert(cells[0].to_string(), n);
            }
        }
    }
    out
}

/// Every file under `dir`, relative to it, with `/` separators.
fn files_under(dir: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap();
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.insert(parts.join("/"));
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

/// A panic, an abort, a signal or an exit code of 100 or more (Rust panics exit 101).
fn crash(out: &Output) -> Option<String> {
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        None => Some(format!("killed by a signal ({:?})", out.status)),
        Some(c) if c >= 100 => Some(format!("exit code {c}: {}", first_lines(&err, 4))),
        _ if err.contains("panicked") || err.contains("stack overflow") => {
            Some(format!("panic: {}", first_lines(&err, 4)))
        }
        _ => None,
    }
}

fn first_lines(s: &str, n: usize) -> String {
    s.lines().take(n).collect::<Vec<_>>().join(" | ")
}

// ---------------------------------------------------------------------------------------
// Running one case

struct Outcome {
    /// Failures the case is about (expected to exist while `known_bug` is set).
    soft: Vec<String>,
    /// Failures never allowed: crash, files left behind, a broken manifest entry.
    hard: Vec<String>,
}

/// The case's files (and rule file) copied into `dir`, and those it generates there: the
/// inputs, as paths relative to `dir`.
fn inputs_in(case: &Case, dir: &Path) -> Result<Vec<String>, String> {
    for f in case.files.iter().chain(case.rules.iter()) {
        let src = bad_dir().join(f);
        let dst = dir.join(f);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(&src, &dst).map_err(|e| format!("cannot copy fixtures/bad/{f}: {e}"))?;
    }
    let mut inputs = case.files.clone();
    if let Some(kind) = &case.generated {
        inputs.extend(generate(kind, dir));
    }
    Ok(inputs)
}

/// The binary run with `argv` in `dir`, with a salt of its own drawing.
fn run_in(dir: &Path, argv: &[String]) -> Output {
    Command::new(bin())
        .args(argv)
        .current_dir(dir)
        .env_remove("TRACEDIAG_SALT")
        .output()
        .expect("the tracediag binary runs")
}

fn run_case(case: &Case) -> Outcome {
    let mut soft = vec![];
    let mut hard = vec![];
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let inputs = match inputs_in(case, dir) {
        Ok(inputs) => inputs,
        Err(e) => {
            hard.push(e);
            return Outcome { soft, hard };
        }
    };
    let before = files_under(dir);

    let mut argv: Vec<String> = case.command.clone();
    argv.extend(inputs.iter().cloned());
    argv.extend(case.args.iter().cloned());
    if let Some(r) = &case.rules {
        argv.extend(["--rules".to_string(), r.clone()]);
    }
    if let Some(o) = &case.out {
        argv.extend(["--out".to_string(), o.clone()]);
    }
    let out = run_in(dir, &argv);
    let so = stdout(&out);
    let se = stderr(&out);

    if let Some(c) = crash(&out) {
        if case.known_panic && case.known_bug.is_some() && !strict() {
            soft.push(c);
        } else {
            hard.push(c);
        }
    }
    let code = out.status.code();
    if code != Some(case.exit) {
        soft.push(format!(
            "exit code {code:?}, expected {} (stderr: {})",
            case.exit,
            first_lines(&se, 3)
        ));
    }
    for s in &case.stderr {
        if !se.contains(s.as_str()) {
            soft.push(format!("stderr lacks {s:?}"));
        }
    }
    for s in &case.stderr_absent {
        if se.contains(s.as_str()) {
            soft.push(format!("stderr holds {s:?}"));
        }
    }
    for s in &case.stdout {
        if !so.contains(s.as_str()) {
            soft.push(format!("stdout lacks {s:?}"));
        }
    }
    for s in &case.stdout_absent {
        if so.contains(s.as_str()) {
            soft.push(format!("stdout holds {s:?}"));
        }
    }
    if let Some(n) = case.requests {
        let got = requests_of(&so);
        if got != Some(n) {
            soft.push(format!("requests {got:?}, expected {n}"));
        }
    }
    if let Some(expected) = &case.quality {
        let got = quality_of(&so);
        if got.is_empty() {
            soft.push("no data-quality table in stdout".into());
        }
        for k in expected.keys() {
            if !got.contains_key(k) {
                soft.push(format!("data-quality check `{k}` not in the output"));
            }
        }
        for (k, n) in &got {
            let want = expected.get(k).copied().unwrap_or(0);
            if *n != want {
                soft.push(format!("data quality `{k}` = {n}, expected {want}"));
            }
        }
    }

    // The run directory holds the inputs, plus the --out file when the run succeeded.
    let after = files_under(dir);
    let mut expected_files = before.clone();
    let succeeded = matches!(code, Some(0) | Some(1));
    if let (Some(o), true) = (&case.out, succeeded) {
        expected_files.insert(o.clone());
    }
    let left: Vec<&String> = after.difference(&expected_files).collect();
    if !left.is_empty() {
        hard.push(format!("files left in the run directory: {left:?}"));
    }
    let missing: Vec<&String> = expected_files.difference(&after).collect();
    if !missing.is_empty() {
        soft.push(format!("files missing after the run: {missing:?}"));
    }
    if let Some(o) = &case.out {
        let text = std::fs::read(dir.join(o))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        for s in &case.out_contains {
            if !text.contains(s.as_str()) {
                soft.push(format!("{o} lacks {s:?}"));
            }
        }
        for s in &case.out_absent {
            if text.contains(s.as_str()) {
                soft.push(format!("{o} holds {s:?}"));
            }
        }
    }
    Outcome { soft, hard }
}

// ---------------------------------------------------------------------------------------
// Tests

#[test]
fn manifest_is_well_formed() {
    let cases = manifest();
    let mut names = BTreeSet::new();
    let mut problems = vec![];
    for c in &cases {
        if !names.insert(c.name.clone()) {
            problems.push(format!("{}: the name is used twice", c.name));
        }
        if c.why.trim().is_empty() {
            problems.push(format!("{}: no `why`", c.name));
        }
        if c.files.is_empty() && c.generated.is_none() && c.args.is_empty() {
            problems.push(format!("{}: no input", c.name));
        }
        let checks = c.stderr.len()
            + c.stdout.len()
            + c.stderr_absent.len()
            + c.stdout_absent.len()
            + c.out_contains.len()
            + c.out_absent.len()
            + usize::from(c.requests.is_some())
            + usize::from(c.quality.is_some());
        if checks == 0 && c.out.is_none() {
            problems.push(format!("{}: checks nothing but the exit code", c.name));
        }
        if c.known_panic && c.known_bug.is_none() {
            problems.push(format!("{}: known_panic without known_bug", c.name));
        }
        // An error must name what it is about: the file (or the argument) at fault.
        if c.exit == 2 {
            let mut names: Vec<String> = c
                .files
                .iter()
                .chain(c.rules.iter())
                .chain(c.args.iter())
                .map(|f| f.rsplit('/').next().unwrap_or(f).to_string())
                .collect();
            if let Some(kind) = &c.generated {
                names.extend(generate_names(kind));
            }
            let named = c
                .stderr
                .iter()
                .any(|s| names.iter().any(|n| s.contains(n.as_str())));
            if !named {
                problems.push(format!(
                    "{}: exit 2 but no stderr substring names the file or argument",
                    c.name
                ));
            }
        }
    }
    let distinct_inputs: BTreeSet<String> = cases
        .iter()
        .flat_map(|c| c.files.iter().chain(c.rules.iter()).cloned())
        .chain(cases.iter().filter_map(|c| c.generated.clone()))
        .collect();
    if distinct_inputs.len() < 40 {
        problems.push(format!(
            "only {} distinct bad inputs (files and generated kinds); the issue asks for 40",
            distinct_inputs.len()
        ));
    }
    assert!(problems.is_empty(), "cases.toml:\n{}", problems.join("\n"));
}

/// The file names a generated case writes (without writing them).
fn generate_names(kind: &str) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    generate(kind, tmp.path())
}

#[test]
fn every_case_has_its_outcome() {
    let cases = manifest();
    let outcomes = parallel(&cases, run_case);
    let mut report = vec![];
    let mut still_known = 0;
    for (case, o) in cases.iter().zip(outcomes) {
        for h in &o.hard {
            report.push(format!("{}: {h}", case.name));
        }
        match (&case.known_bug, strict()) {
            (Some(_), false) => {
                if o.soft.is_empty() {
                    report.push(format!(
                        "{}: passes now: the known bug is fixed, remove `known_bug` from cases.toml",
                        case.name
                    ));
                } else {
                    still_known += 1;
                }
            }
            _ => {
                for s in &o.soft {
                    report.push(format!("{}: {s}   [why: {}]", case.name, case.why));
                }
            }
        }
    }
    if still_known > 0 {
        eprintln!(
            "bad_inputs: {still_known} case(s) marked known_bug still fail as described \
             (TRACEDIAG_BAD_STRICT=1 shows them)"
        );
    }
    assert!(
        report.is_empty(),
        "{} problem(s) in the bad-input corpus:\n{}",
        report.len(),
        report.join("\n")
    );
}

/// Every `analyze` case's inputs given to `report` too (its own arguments aside, its rule
/// file kept): a report or an error, never a crash. `report` asks the plan for more than
/// `analyze` does (its periods, families of percentiles and CDFs), and a JSON array of no
/// request once panicked there alone.
#[test]
fn no_case_crashes_the_report() {
    let cases: Vec<Case> = manifest()
        .into_iter()
        .filter(|c| c.command == analyze() && !(c.known_panic && c.known_bug.is_some()))
        .collect();
    let crashes = parallel(&cases, |case| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut argv = vec!["report".to_string()];
        argv.extend(inputs_in(case, dir).map_err(|e| format!("{}: {e}", case.name))?);
        if let Some(r) = &case.rules {
            argv.extend(["--rules".to_string(), r.clone()]);
        }
        argv.extend(["--out".to_string(), "report.md".to_string()]);
        let out = run_in(dir, &argv);
        match crash(&out) {
            Some(c) => Err(format!("{}: {c}", case.name)),
            None => Ok(()),
        }
    });
    let crashes: Vec<String> = crashes.into_iter().filter_map(Result::err).collect();
    assert!(cases.len() >= 30, "only {} cases", cases.len());
    assert!(
        crashes.is_empty(),
        "report crashed:\n{}",
        crashes.join("\n")
    );
}

#[test]
fn every_bad_file_is_used_by_a_case() {
    let cases = manifest();
    let used: BTreeSet<String> = cases
        .iter()
        .flat_map(|c| c.files.iter().chain(c.rules.iter()).cloned())
        .collect();
    let on_disk = files_under(&bad_dir());
    let unused: Vec<&String> = on_disk
        .iter()
        .filter(|f| f.as_str() != "cases.toml" && !used.contains(*f))
        .collect();
    assert!(
        unused.is_empty(),
        "files in fixtures/bad/ without a case: {unused:?}"
    );
    let absent: Vec<&String> = used.difference(&on_disk).collect();
    assert!(
        absent.is_empty(),
        "cases name files that do not exist: {absent:?}"
    );
}

#[test]
fn no_file_panics_whatever_the_options() {
    let cases = manifest();
    let known_panics: BTreeSet<String> = if strict() {
        BTreeSet::new()
    } else {
        cases
            .iter()
            .filter(|c| c.known_panic && c.known_bug.is_some())
            .flat_map(|c| c.files.iter().cloned())
            .collect()
    };
    // A copy of the whole folder, so nothing can be written into the repository.
    let tmp = tempfile::tempdir().unwrap();
    let files: Vec<String> = files_under(&bad_dir())
        .into_iter()
        .filter(|f| f != "cases.toml")
        .collect();
    for f in &files {
        let dst = tmp.path().join(f);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(bad_dir().join(f), dst).unwrap();
    }
    let mut runs: Vec<(String, Vec<String>)> = vec![];
    for f in &files {
        let s = |x: &str| x.to_string();
        if f.starts_with("rules/") {
            runs.push((f.clone(), vec![s("rules"), s("check"), f.clone()]));
            runs.push((
                f.clone(),
                vec![
                    s("analyze"),
                    s("good_baseline.jsonl"),
                    s("--rules"),
                    f.clone(),
                ],
            ));
            continue;
        }
        for policy in ["error", "skip", "keep"] {
            runs.push((
                f.clone(),
                vec![s("analyze"), f.clone(), s("--on-bad-row"), s(policy)],
            ));
        }
        runs.push((
            f.clone(),
            vec![s("analyze"), f.clone(), s("--format"), s("json")],
        ));
        for format in ["parquet", "csv", "jsonl", "json"] {
            runs.push((
                f.clone(),
                vec![s("analyze"), f.clone(), s("--input-format"), s(format)],
            ));
        }
        runs.push((f.clone(), vec![s("throughput"), f.clone()]));
    }
    assert!(runs.len() > 300, "the sweep runs every file many ways");
    let dir = tmp.path().to_path_buf();
    let results = parallel(&runs, |(file, argv)| {
        let out = Command::new(bin())
            .args(argv)
            .current_dir(&dir)
            .output()
            .expect("the tracediag binary runs");
        crash(&out).map(|c| (file.clone(), format!("{}: {c}", argv.join(" "))))
    });
    let crashes: Vec<String> = results
        .into_iter()
        .flatten()
        .filter(|(file, _)| !known_panics.contains(file))
        .map(|(_, msg)| msg)
        .collect();
    assert!(
        crashes.is_empty(),
        "{} run(s) crashed:\n{}",
        crashes.len(),
        crashes.join("\n")
    );
    let left: Vec<String> = files_under(tmp.path())
        .into_iter()
        .filter(|f| !files.contains(f))
        .collect();
    assert!(left.is_empty(), "the sweep left files behind: {left:?}");
}
