//! The emitted SQL on real engines (issue 18): DuckDB and Spark in local mode run `rules
//! --emit sql` over tracediag's own canonical columns, and every request's metrics, flags,
//! class and tags, and the summary's counts and percentiles, must equal tracediag's. Trino
//! (no server here): the queries must parse with sqlglot's Trino dialect. The engines run
//! in one Python process (tests/sql/engines.py, one Spark session for every case).
//!
//! The Python is `$TRACEDIAG_PYTHON` (set by .ci/run); without it, tests/sql/venv.sh makes
//! (or reuses) the cached virtualenv. If neither works the test fails, saying why.

mod common;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, fixture, root};
use serde_json::{json, Value};
use tracediag::catalogue::FIELDS;
use tracediag::quality;
use tracediag::ruleset::compile::{estimated_metrics, ESTIMATED_SUFFIX};
use tracediag::ruleset::sql::{summary_figures, SQL_QUALITY_CHECKS};
use tracediag::ruleset::{tables, RuleSet};

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("TRACEDIAG_PYTHON") {
        return PathBuf::from(p);
    }
    let out = Command::new(root().join("tests/sql/venv.sh"))
        .output()
        .expect("tests/sql/venv.sh runs");
    assert!(
        out.status.success(),
        "the SQL engine tests need DuckDB, PySpark and sqlglot in a virtualenv, and Java 17; \
         tests/sql/venv.sh could not provide them (set TRACEDIAG_PYTHON to a python that has them):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn run(args: &[&str]) -> String {
    let out = Command::new(bin())
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A small deterministic stream (no dependency for it).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// A log of `n` requests where every field is independently missing, zero, negative, at a
/// threshold or far beyond one: every null pattern, division by zero, out-of-order and
/// implausible times, duplicate and missing ids, every outcome.
fn null_patterns(n: usize, path: &Path) {
    let mut r = Lcg(18);
    let times = [
        "null",
        "null",
        "null",
        "0.0",
        "-3.0",
        "1.5",
        "10.0",
        "100.0",
        "250.0",
        "499.9",
        "500.0",
        "1000.0",
        "2000.0",
        "3000.0",
        "4500.5",
        "6000.0",
        "9000.0",
        "20000.0",
        "90000000.0",
    ];
    let tokens = ["null", "0", "1", "2", "9", "10", "11", "50", "400", "5000"];
    let mut text = String::new();
    for i in 0..n {
        let id = match i % 41 {
            0 => "null".to_string(),
            7 => format!("\"s-{}\"", i - 1),
            _ => format!("\"s-{i}\""),
        };
        let _ = write!(
            text,
            "{{\"request_id\":{id},\"timestamp\":\"2026-11-02T10:{:02}:{:02}Z\",\"model\":{},\"is_stream\":{},\"status\":{},\"outcome\":{},\"input_tokens\":{},\"output_tokens\":{}",
            (i / 60) % 60,
            i % 60,
            r.pick(&["\"m-a\"", "\"m-b\"", "null"]),
            r.pick(&["true", "false", "null"]),
            r.pick(&["200", "201", "429", "500", "null"]),
            r.pick(&["\"ok\"", "\"ok\"", "\"error\"", "\"timeout\"", "\"cancelled\"", "\"it's\"", "null"]),
            r.pick(&tokens),
            r.pick(&tokens),
        );
        // The canonical columns a gateway table has (not the adapter-only ones).
        for f in FIELDS
            .iter()
            .filter(|f| f.kind.is_timing() && !tracediag::catalogue::is_adapter_field(f.name))
        {
            let _ = write!(text, ",\"{}\":{}", f.name, r.pick(&times));
        }
        text.push_str("}\n");
    }
    std::fs::write(path, text).unwrap();
}

/// Every class fixture of the gateway table, as paths.
fn class_fixtures() -> Vec<String> {
    fixtures_in("classes")
}

/// The JSON-lines fixtures of a folder of `fixtures/`, as paths.
fn fixtures_in(dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

struct Case {
    name: &'static str,
    /// A rule file, or a shipped table's name; the gateway table when absent.
    rules: Option<&'static str>,
    inputs: Vec<String>,
    /// Whether every class of the table must occur.
    every_class: bool,
}

#[test]
fn duckdb_and_spark_reproduce_tracediag_row_for_row() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let synthetic = dir.path().join("null_patterns.jsonl");
    null_patterns(3000, &synthetic);
    let synthetic = synthetic.display().to_string();
    let mut all = class_fixtures();
    all.push(synthetic.clone());
    let cases = vec![
        Case {
            name: "traces",
            rules: None,
            inputs: vec!["fixtures/traces/traces.jsonl".into()],
            every_class: false,
        },
        Case {
            name: "generated",
            rules: None,
            inputs: vec!["fixtures/generated/gateway.parquet".into()],
            every_class: false,
        },
        Case {
            name: "classes",
            rules: None,
            inputs: class_fixtures(),
            every_class: true,
        },
        Case {
            name: "null_patterns",
            rules: None,
            inputs: all,
            every_class: true,
        },
        Case {
            name: "semantics",
            rules: Some("fixtures/rules/sql_semantics.toml"),
            inputs: vec![synthetic],
            every_class: true,
        },
    ];
    // Each table of a coarser clock on its class fixtures, over the columns of its clock.
    let mut cases = cases;
    for t in ["relay", "gateway_coarse", "upstream", "engine", "client"] {
        cases.push(Case {
            name: t,
            rules: Some(t),
            inputs: fixtures_in(&format!("classes/{t}")),
            every_class: true,
        });
    }

    let mut manifest = vec![];
    let mut expected_lines = vec![];
    for case in &cases {
        let rules = match case.rules {
            Some(p) if p.ends_with(".toml") => RuleSet::load(&root().join(p)).unwrap(),
            Some(name) => tables::shipped_table(name).unwrap(),
            None => RuleSet::gateway().unwrap(),
        };
        let mut rule_args: Vec<&str> = vec![];
        if let Some(p) = case.rules {
            rule_args.extend(["--rules", p]);
        }
        let reference = dir.path().join(format!("{}.parquet", case.name));
        let summary = dir.path().join(format!("{}.json", case.name));
        let mut args: Vec<&str> = vec!["analyze"];
        args.extend(case.inputs.iter().map(String::as_str));
        args.extend(&rule_args);
        let mut with_out = args.clone();
        let out = reference.display().to_string();
        with_out.extend(["--out", &out, "--quiet"]);
        run(&with_out);
        let mut with_json = args.clone();
        with_json.extend(["--format", "json"]);
        let json_text = run(&with_json);
        std::fs::write(&summary, &json_text).unwrap();
        let td: Value = serde_json::from_str(&json_text).unwrap();
        let rows = td["rows"].as_u64().unwrap();
        assert!(rows > 0, "{}", case.name);
        if case.every_class {
            let seen: BTreeSet<&str> = td["classes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["count"].as_u64().unwrap() > 0)
                .map(|c| c["class"].as_str().unwrap())
                .collect();
            for class in rules.class_order() {
                assert!(seen.contains(class), "{}: no request is {class}", case.name);
            }
        }

        let sql = emit_queries(dir.path(), case.name, &rule_args);
        let (inputs, compared) = engine_columns(&rules);
        let n_cols = compared.len();
        manifest.push(json!({
            "name": case.name,
            "reference": reference,
            "summary_json": summary,
            "sql": sql,
            "input_columns": inputs,
            "compared_columns": compared,
            "class_order": rules.class_order(),
            "figures": summary_figures(&rules),
        }));
        let classes = rules.class_order().len() + 1;
        expected_lines.extend(expected_report(case.name, rows, n_cols, classes));
    }
    run_engines(&python, dir.path(), manifest, expected_lines);
}

/// Every dialect's rows and summary queries, emitted with `args` after `rules --emit sql
/// --dialect D`, written to files: {"duckdb_rows": path, …}.
fn emit_queries(dir: &Path, name: &str, args: &[&str]) -> serde_json::Map<String, Value> {
    let mut sql = serde_json::Map::new();
    for dialect in ["duckdb", "spark", "trino"] {
        for (what, extra) in [("rows", None), ("summary", Some("--summary"))] {
            let mut a = vec!["rules", "--emit", "sql", "--dialect", dialect];
            a.extend(args);
            a.extend(extra);
            let path = dir.join(format!("{name}_{dialect}_{what}.sql"));
            std::fs::write(&path, run(&a)).unwrap();
            sql.insert(format!("{dialect}_{what}"), json!(path));
        }
    }
    sql
}

/// The canonical columns a table for `rules` has (the query needs none of the adapter-only
/// fields of another clock, and leaves out the metrics built on them; a table of a tool's
/// clock reads that tool's fields), and the columns compared with tracediag's.
fn engine_columns(rules: &RuleSet) -> (Vec<&'static str>, serde_json::Map<String, Value>) {
    let left_out = rules.adapter_metrics();
    let own: BTreeSet<&str> = rules
        .parts
        .iter()
        .flat_map(|p| p.applies_to.iter())
        .filter_map(|f| tracediag::catalogue::adapter_of(f))
        .collect();
    let mut inputs: Vec<&str> = FIELDS
        .iter()
        .map(|f| f.name)
        .filter(|f| tracediag::catalogue::adapter_of(f).is_none_or(|t| own.contains(t)))
        .collect();
    inputs.extend(["source_file", "source_row"]);
    let mut compared = serde_json::Map::new();
    let est = estimated_metrics(rules);
    for m in rules.metrics.iter().filter(|m| !left_out.contains(&m.name)) {
        compared.insert(m.name.clone(), json!("float"));
        if est[&m.name] {
            compared.insert(format!("{}{ESTIMATED_SUFFIX}", m.name), json!("exact"));
        }
    }
    compared.insert("class".into(), json!("exact"));
    compared.insert("classes".into(), json!("exact"));
    for c in SQL_QUALITY_CHECKS {
        compared.insert(quality::column(&c), json!("exact"));
    }
    (inputs, compared)
}

/// Run tests/sql/engines.py on the cases of `manifest`; its report must be `expected`.
fn run_engines(python: &Path, dir: &Path, manifest: Vec<Value>, expected: Vec<String>) {
    let manifest_path = dir.join("manifest.json");
    std::fs::write(
        &manifest_path,
        serde_json::to_string(&json!({ "cases": manifest })).unwrap(),
    )
    .unwrap();
    let out = Command::new(python)
        .arg(root().join("tests/sql/engines.py"))
        .arg(&manifest_path)
        .output()
        .expect("the engines script runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mismatches: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("MISMATCH") || l.contains("Error"))
        .collect();
    assert!(
        out.status.success(),
        "the engines disagree with tracediag (or did not run):\n{}\n{stderr}",
        mismatches.join("\n")
    );
    // What was checked, for a run with --nocapture.
    eprintln!("{stdout}");
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got, expected, "every case checked on every engine");
}

/// The lines engines.py prints for a case that passes.
fn expected_report(name: &str, rows: u64, n_cols: usize, classes: usize) -> Vec<String> {
    let mut lines = vec![];
    for engine in ["duckdb", "spark"] {
        lines.push(format!(
            "rows {name} {engine}: {rows} rows equal in {n_cols} columns"
        ));
        lines.push(format!("summary {name} {engine}: {classes} rows equal"));
    }
    for which in ["trino_rows", "trino_summary"] {
        lines.push(format!("parse {name} {which}: one statement"));
    }
    lines
}

fn run_failing(args: &[&str]) -> (i32, String) {
    let out = Command::new(bin())
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `--from-sql-result`: what DuckDB wrote from the emitted query over the generated log
/// reads back as tracediag's own analysis of the raw log. The outputs name the file they
/// read, and the summary's input line says it is a query's result; everything else is
/// byte for byte the same. A class moved in the result moves in the summary (the classes
/// are read, not computed again), and a file that is not such a result is an error
/// naming the file, the row and the class, or the missing columns.
#[test]
fn duckdb_result_reads_back_with_from_sql_result() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let raw = "fixtures/generated/gateway.parquet";
    let salt = ["--salt", "sql-result"];
    let canonical = dir.path().join("canonical.parquet");
    let c = canonical.display().to_string();
    run(&[
        "analyze",
        raw,
        "--out",
        &c,
        "--quiet",
        "--salt",
        "sql-result",
    ]);
    // The warehouse table: the fields the log holds, flat, as `--out` writes them (a
    // field the log lacks is not in the table, so the result maps the same fields).
    let summary: Value = serde_json::from_str(&run(&[
        "analyze", raw, "--format", "json", salt[0], salt[1],
    ]))
    .unwrap();
    let columns: Vec<&str> = summary["inputs"][0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    let query = run(&["rules", "--emit", "sql", "--dialect", "duckdb"]);
    let file = |name: &str| dir.path().join(name).display().to_string();
    let (result, csv) = (file("result.parquet"), file("result.csv"));
    let (moved, unknown, missing) = (
        file("moved.parquet"),
        file("unknown.parquet"),
        file("missing.csv"),
    );
    let first_normal =
        format!("(SELECT min(request_id) FROM read_parquet('{result}') WHERE class = 'normal')");
    let manifest = json!({
        "canonical": canonical,
        "columns": columns,
        "writes": [
            {"query": query, "out": result},
            {"query": query, "out": csv},
            {"query": format!("SELECT * REPLACE (CASE WHEN request_id = {first_normal} THEN 'prefill_slow' ELSE class END AS class, CASE WHEN request_id = {first_normal} THEN 'prefill_slow' ELSE classes END AS classes) FROM read_parquet('{result}')"), "out": moved},
            {"query": format!("SELECT * REPLACE (CASE WHEN request_id = 'req-0000100' THEN 'prefil_slow' ELSE class END AS class) FROM read_parquet('{result}')"), "out": unknown},
            {"query": format!("SELECT * EXCLUDE (classes, prefill_ms) FROM read_parquet('{result}')"), "out": missing},
        ],
        "find": [{"file": unknown, "column": "class", "value": "prefil_slow"}],
    });
    let manifest_path = dir.path().join("result.json");
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    let out = Command::new(&python)
        .arg(root().join("tests/sql/result.py"))
        .arg(&manifest_path)
        .output()
        .expect("the result script runs");
    assert!(
        out.status.success(),
        "DuckDB did not write the results:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found = String::from_utf8(out.stdout).unwrap();
    let unknown_row = found
        .trim()
        .strip_prefix(&format!("row {unknown} "))
        .expect("the row of the unknown class");

    // The same summary: the input line names the result, read as one.
    let expected = run(&["analyze", raw, salt[0], salt[1]]);
    for (path, format) in [(&result, "parquet"), (&csv, "csv")] {
        let want = expected.replace(
            &format!("input: {raw} (parquet, "),
            &format!("input: {path} ({format}, a result of rules --emit sql, "),
        );
        assert_ne!(want, expected, "the input line is there to replace");
        let got = run(&["analyze", path, "--from-sql-result", salt[0], salt[1]]);
        assert_eq!(got, want, "analyze --from-sql-result {path}");
    }
    let json_of = |args: &[&str]| -> Value { serde_json::from_str(&run(args)).unwrap() };
    let mut want = json_of(&["analyze", raw, "--format", "json", salt[0], salt[1]]);
    let mut got = json_of(&[
        "analyze",
        &result,
        "--from-sql-result",
        "--format",
        "json",
        salt[0],
        salt[1],
    ]);
    // The fields come from flat columns of the result, not from the log's nesting.
    want["inputs"] = Value::Null;
    got["inputs"] = Value::Null;
    assert_eq!(got, want, "the JSON summary");

    // report and explain on the result: the raw log's, naming the result.
    let (report_raw, report_sql) = (file("raw.md"), file("sql.md"));
    run(&["report", raw, "--out", &report_raw, salt[0], salt[1]]);
    run(&[
        "report",
        &result,
        "--from-sql-result",
        "--out",
        &report_sql,
        salt[0],
        salt[1],
    ]);
    let want = std::fs::read_to_string(&report_raw).unwrap().replace(
        &format!("`{raw}` (parquet, "),
        &format!("`{result}` (parquet, a result of rules --emit sql, "),
    );
    assert_eq!(std::fs::read_to_string(&report_sql).unwrap(), want);
    for id in ["req-0000100", "req-0000056"] {
        let want =
            run(&["explain", raw, "--request-id", id, salt[0], salt[1]]).replace(raw, &result);
        let got = run(&[
            "explain",
            &result,
            "--from-sql-result",
            "--request-id",
            id,
            salt[0],
            salt[1],
        ]);
        assert_eq!(got, want, "explain --request-id {id}");
    }

    // The classes are the file's: one request moved from normal to prefill_slow.
    let count = |s: &Value, class: &str| -> u64 {
        s["classes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["class"] == class)
            .unwrap()["count"]
            .as_u64()
            .unwrap()
    };
    let moved_summary = json_of(&[
        "analyze",
        &moved,
        "--from-sql-result",
        "--format",
        "json",
        salt[0],
        salt[1],
    ]);
    assert_eq!(
        count(&moved_summary, "prefill_slow"),
        count(&summary, "prefill_slow") + 1
    );
    assert_eq!(
        count(&moved_summary, "normal"),
        count(&summary, "normal") - 1
    );

    // Not such a result.
    let (code, stderr) = run_failing(&["analyze", &unknown, "--from-sql-result"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "tracediag: error: {unknown}: row {unknown_row}, column `class`: `prefil_slow` is not a class of rule table `gateway` (rules/gateway.toml) (its classes: upstream_headers_slow, prefill_slow,"
        )),
        "{stderr}"
    );
    let (code, stderr) = run_failing(&[
        "report",
        &missing,
        "--from-sql-result",
        "--out",
        &file("r.md"),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        format!("tracediag: error: {missing}: not a result of the emitted SQL for this rule table (--from-sql-result): missing the columns `prefill_ms`, `classes` (`tracediag rules --emit sql` with the same --rules and --set writes them)\n")
    ); // A JSON log cannot carry the query's columns (it is read with the fields' schema).
    let (code, stderr) = run_failing(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--from-sql-result",
        "--request-id",
        "x",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        "tracediag: error: fixtures/traces/traces.jsonl: --from-sql-result reads Parquet or CSV (what an engine writes from the emitted query); this file reads as JSON lines\n"
    );
}

/// tracediag's reference for a case: `analyze --out` (the canonical rows, with class and
/// metrics) and `analyze --format json`, written to `dir`; returns their paths and the
/// summary's request count.
fn analyze_reference(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, PathBuf, u64) {
    let reference = dir.join(format!("{name}.parquet"));
    let summary = dir.join(format!("{name}.json"));
    let out = reference.display().to_string();
    let mut with_out = vec!["analyze"];
    with_out.extend(args);
    with_out.extend(["--out", &out, "--quiet"]);
    run(&with_out);
    let mut with_json = vec!["analyze"];
    with_json.extend(args);
    with_json.extend(["--format", "json"]);
    let json_text = run(&with_json);
    std::fs::write(&summary, &json_text).unwrap();
    let td: Value = serde_json::from_str(&json_text).unwrap();
    (reference, summary, td["rows"].as_u64().unwrap())
}

/// The generated log with its own names, as a warehouse table has them: aliases
/// (`model_name`, `status_code`, `result`, `stream`, `prompt_tokens`), dotted timing
/// columns (`timing.auth_ms`), a Unix-time `timestamp` in seconds or milliseconds by row,
/// and text where numbers and flags are expected (padded, blank, `NaN`, `1.5` tokens,
/// `yes`/`0` flags, outcome words such as `Success` and `canceled`).
fn own_names_log(path: &Path) {
    let text = std::fs::read_to_string(fixture("generated/gateway.jsonl")).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        let mut row = serde_json::Map::new();
        row.insert("request_id".into(), v["request_id"].clone());
        let ms = 1_793_577_600_000u64 + i as u64 * 1537;
        row.insert(
            "timestamp".into(),
            if i % 2 == 0 {
                json!(ms / 1000)
            } else {
                json!(ms)
            },
        );
        for (from, to) in [
            ("model", "model_name"),
            ("group", "group"),
            ("channel", "channel"),
            ("status", "status_code"),
            ("output_tokens", "completion_tokens"),
        ] {
            row.insert(to.into(), v[from].clone());
        }
        let outcome = v["outcome"].as_str().map(|o| match (o, i % 3) {
            ("ok", 0) => "Success".to_string(),
            ("ok", 1) => " OK ".to_string(),
            ("cancelled", _) => "canceled".to_string(),
            ("timeout", _) => "Timed_Out".to_string(),
            (o, _) => o.to_string(),
        });
        row.insert("result".into(), json!(outcome));
        let stream = match (v["is_stream"].as_bool(), i % 2) {
            (Some(true), 0) => "yes",
            (Some(true), _) => "TRUE",
            (Some(false), 0) => "0",
            (Some(false), _) => "no",
            (None, _) => "",
        };
        row.insert("stream".into(), json!(stream));
        let tokens = match (&v["input_tokens"], i % 17) {
            (_, 3) => json!("1.5"),
            (_, 5) => json!(" "),
            (Value::Null, _) => Value::Null,
            (t, _) => json!(format!(" {t} ")),
        };
        row.insert("prompt_tokens".into(), tokens);
        for (name, value) in v["other"]["timing"].as_object().unwrap() {
            let value = match (name.as_str(), i % 29) {
                ("total_handler_ms", 4) => json!("NaN"),
                ("total_handler_ms", 6) => json!(""),
                ("total_handler_ms", _) => json!(format!(" {value} ")),
                _ => value.clone(),
            };
            row.insert(format!("timing.{name}"), value);
        }
        row.insert("scenario".into(), v["scenario"].clone());
        out.push_str(&Value::Object(row).to_string());
        out.push('\n');
    }
    std::fs::write(path, out).unwrap();
}

/// `--like` (issue 51, part 5): a table with its own names, read by DuckDB and Spark as
/// they read the file (no canonical copy), through the query emitted `--like` the file;
/// every request's metrics, flags, class and classes, and the summary, must equal what
/// `tracediag analyze` gives on the file: a nested log (Parquet with an `other.timing`
/// struct, JSON lines with `other` an object), `other` as a JSON string, a log of aliases,
/// dotted columns, Unix times and text numbers, and a new-api log (its adapter's
/// derivations, classified by the relay table `analyze` picks for it).
#[test]
fn duckdb_and_spark_read_a_table_like_its_sample() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("own_names.jsonl");
    own_names_log(&own);
    let generated = |f: &str| fixture(&format!("generated/{f}"));
    // The fixture of part 3, its names given with --map: a path inside the JSON string
    // `other` and one inside the object `usage` (a struct to the engines).
    let mapped: Vec<&str> = [
        "request_id=req",
        "timestamp=started_ms:ms",
        "model=llm",
        "first_sse_event_ms=other.ttft",
        "total_handler_ms=latency_s:s",
        "output_tokens=usage.out",
        "status=http",
    ]
    .iter()
    .flat_map(|m| ["--map", m])
    .collect();
    let cases: [(&str, PathBuf, &str, &[&str]); 6] = [
        (
            "nested_parquet",
            generated("gateway.parquet"),
            "gateway",
            &[],
        ),
        ("nested_jsonl", generated("gateway.jsonl"), "gateway", &[]),
        (
            "json_string",
            generated("gateway_other_string.jsonl"),
            "gateway",
            &[],
        ),
        ("own_names", own, "gateway", &[]),
        (
            "mapped",
            fixture("own_names/requests.jsonl"),
            "gateway_coarse",
            &mapped,
        ),
        ("newapi", generated("newapi.jsonl"), "relay", &[]),
    ];
    let mut manifest = vec![];
    let mut expected = vec![];
    for (name, file, table, map) in &cases {
        let path = file.display().to_string();
        let mut args = vec![path.as_str()];
        args.extend(map.iter());
        let (reference, summary, rows) = analyze_reference(dir.path(), name, &args);
        args[0] = "--like";
        args.insert(1, &path);
        let sql = emit_queries(dir.path(), name, &args);
        let rows_sql = std::fs::read_to_string(sql["duckdb_rows"].as_str().unwrap()).unwrap();
        assert!(
            rows_sql.contains(&format!("rule table `{table}`")),
            "{name}: the table analyze picks\n{rows_sql}"
        );
        let rules = tables::shipped_table(table).unwrap();
        let (_, mut compared) = engine_columns(&rules);
        // And every canonical value the projection gives (not the client identifiers,
        // which analyze hashes): what the rules read, and what they do not.
        for f in FIELDS
            .iter()
            .filter(|f| !tracediag::catalogue::is_identifier(f.name))
        {
            let kind = match tracediag::source::dtype_of(f.kind) {
                polars::prelude::DataType::Float64 => "float",
                polars::prelude::DataType::Datetime(..) => "instant",
                _ => "exact",
            };
            compared.insert(f.name.into(), json!(kind));
        }
        let (duckdb, spark) = if path.ends_with(".parquet") {
            (format!("read_parquet('{path}')"), "parquet")
        } else {
            (
                format!("read_json('{path}', format = 'newline_delimited')"),
                "json",
            )
        };
        expected.extend(expected_report(
            name,
            rows,
            compared.len(),
            rules.class_order().len() + 1,
        ));
        manifest.push(json!({
            "name": name,
            "reference": reference,
            "summary_json": summary,
            "sql": sql,
            "tables": {"duckdb": duckdb, "spark": {"format": spark, "path": path}},
            "key": "request_id",
            "input_columns": [],
            "compared_columns": compared,
            "class_order": rules.class_order(),
            "figures": summary_figures(&rules),
        }));
    }
    run_engines(&python, dir.path(), manifest, expected);
}
