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
use tracediag::ruleset::RuleSet;

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
        for f in FIELDS.iter().filter(|f| f.kind.is_timing()) {
            let _ = write!(text, ",\"{}\":{}", f.name, r.pick(&times));
        }
        text.push_str("}\n");
    }
    std::fs::write(path, text).unwrap();
}

/// Every class fixture, as paths.
fn class_fixtures() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture("classes"))
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

    let mut manifest = vec![];
    let mut expected_lines = vec![];
    for case in &cases {
        let rules = match case.rules {
            Some(p) => RuleSet::load(&root().join(p)).unwrap(),
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

        let mut sql = serde_json::Map::new();
        for dialect in ["duckdb", "spark", "trino"] {
            for (what, extra) in [("rows", None), ("summary", Some("--summary"))] {
                let mut a = vec!["rules", "--emit", "sql", "--dialect", dialect];
                a.extend(&rule_args);
                a.extend(extra);
                let path = dir
                    .path()
                    .join(format!("{}_{dialect}_{what}.sql", case.name));
                std::fs::write(&path, run(&a)).unwrap();
                sql.insert(format!("{dialect}_{what}"), json!(path));
            }
        }
        let mut inputs: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
        inputs.extend(["source_file", "source_row"]);
        let mut compared = serde_json::Map::new();
        let est = estimated_metrics(&rules);
        for m in &rules.metrics {
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
        for engine in ["duckdb", "spark"] {
            expected_lines.push(format!(
                "rows {} {engine}: {rows} rows equal in {n_cols} columns",
                case.name
            ));
            expected_lines.push(format!(
                "summary {} {engine}: {classes} rows equal",
                case.name
            ));
        }
        for which in ["trino_rows", "trino_summary"] {
            expected_lines.push(format!("parse {} {which}: one statement", case.name));
        }
    }
    let manifest_path = dir.path().join("manifest.json");
    std::fs::write(
        &manifest_path,
        serde_json::to_string(&json!({ "cases": manifest })).unwrap(),
    )
    .unwrap();
    let out = Command::new(&python)
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
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got, expected_lines, "every case checked on every engine");
}
