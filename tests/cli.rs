//! Whole-output snapshots of the command line, and its contract: exit codes, refusals,
//! byte-identical output for the same input.

mod common;

use common::*;

#[test]
fn analyze_traces_table() {
    insta::assert_snapshot!(ok(&["analyze", "fixtures/traces/traces.jsonl"]));
}

#[test]
fn analyze_traces_json() {
    insta::assert_snapshot!(ok(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--format",
        "json"
    ]));
}

#[test]
fn analyze_generated_by_model_and_channel() {
    insta::assert_snapshot!(ok(&[
        "analyze",
        "fixtures/generated/gateway.parquet",
        "--by",
        "model,channel"
    ]));
}

#[test]
fn analyze_several_files_and_globs() {
    let text = ok(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "fixtures/classes/*.jsonl",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["inputs"].as_array().unwrap().len(), 10);
    let rows = v["rows"].as_u64().unwrap();
    let classes: u64 = v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["count"].as_u64().unwrap())
        .sum();
    assert_eq!(rows, classes, "every row has exactly one class");
}

/// A directory is every log file below it; `key=value` folders (a hive-partitioned tree)
/// become label columns that `--by` can group on; other files and hidden ones are left out.
#[test]
fn a_hive_partitioned_directory_reads_as_one_source() {
    let dir = tempfile::tempdir().unwrap();
    let day1 = dir.path().join("logs/date=2026-11-01");
    let day2 = dir.path().join("logs/date=2026-11-02");
    std::fs::create_dir_all(&day1).unwrap();
    std::fs::create_dir_all(&day2).unwrap();
    std::fs::copy(fixture("traces/traces.jsonl"), day1.join("part-0.jsonl")).unwrap();
    std::fs::copy(
        fixture("classes/auth_slow.jsonl"),
        day2.join("part-0.jsonl"),
    )
    .unwrap();
    std::fs::write(day2.join("notes.txt"), "not a log").unwrap();
    std::fs::write(day2.join(".part-1.jsonl"), "{\"hidden\": true}\n").unwrap();
    // A link back up the tree is not followed (it would never end).
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path().join("logs"), day2.join("loop")).unwrap();
    let logs = dir.path().join("logs");
    let text = ok(&[
        "analyze",
        logs.to_str().unwrap(),
        "--by",
        "date",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["inputs"].as_array().unwrap().len(), 2);
    let groups = v["groups"]["groups"].as_array().unwrap();
    let keys: Vec<(String, u64)> = groups
        .iter()
        .map(|g| {
            (
                g["key"][0].as_str().unwrap().to_string(),
                g["rows"].as_u64().unwrap(),
            )
        })
        .collect();
    let auth_rows = std::fs::read_to_string(fixture("classes/auth_slow.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count() as u64;
    assert_eq!(
        keys,
        vec![
            ("2026-11-01".to_string(), 3),
            ("2026-11-02".to_string(), auth_rows)
        ]
    );
    // A key that is not there is refused, naming the partition key among the choices.
    let err = fails(&["analyze", logs.to_str().unwrap(), "--by", "day"]);
    assert!(err.contains("date"), "{err}");
    // A folder holding no log file is an error, not an empty analysis.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let err = fails(&["analyze", empty.to_str().unwrap()]);
    assert!(err.contains("holds no log file"), "{err}");
}

#[test]
fn rules_table() {
    insta::assert_snapshot!(ok(&["rules"]));
}

/// `rules --emit toml` prints the shipped table's source, so a user without a checkout
/// can copy and edit it. The snapshot is the output; the asserts pin what it must be: the
/// shipped file byte for byte, and a file that checks clean when written back.
#[test]
fn rules_emit_toml() {
    let text = ok(&["rules", "--emit", "toml"]);
    insta::assert_snapshot!(text);
    let shipped = std::fs::read_to_string(root().join("rules/gateway.toml")).unwrap();
    assert_eq!(text, shipped);
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("my_rules.toml");
    std::fs::write(&copy, &text).unwrap();
    let out = ok(&["rules", "check", copy.to_str().unwrap()]);
    assert!(
        out.ends_with(": ok — table `gateway`, 9 rules, 19 metrics, 12 parameters\n"),
        "{out}"
    );
}

#[test]
fn rules_emit_toml_prints_the_rules_file_given() {
    let text = ok(&["rules", "--rules", "rules/azure.toml", "--emit", "toml"]);
    let file = std::fs::read_to_string(root().join("rules/azure.toml")).unwrap();
    assert_eq!(text, file);
    // A file that does not check is not printed as a table: the usual pointed error.
    let err = fails(&[
        "rules",
        "--rules",
        "fixtures/rules/bad/scaled_point_multiply.toml",
        "--emit",
        "toml",
    ]);
    assert!(err.contains("scaled_point_multiply.toml:6:31"), "{err}");
}

#[test]
fn rules_emit_refuses_what_it_cannot_honour() {
    // --set would not be in the printed text, and --format is another output.
    let err = fails(&["rules", "--emit", "toml", "--set", "header_slow_ms=2500"]);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = fails(&["rules", "--emit", "toml", "--format", "json"]);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = fails(&["rules", "--emit", "toml", "check", "rules/gateway.toml"]);
    assert!(err.contains("--emit prints one table"), "{err}");
    let err = fails(&["rules", "--emit", "sql"]);
    assert!(
        err.contains("--emit sql needs --dialect duckdb, spark or trino"),
        "{err}"
    );
    let err = fails(&["rules", "--emit", "toml", "--dialect", "spark"]);
    assert!(err.contains("go with --emit sql"), "{err}");
    let err = fails(&["rules", "--emit", "csv"]);
    assert!(err.contains("[possible values: toml, sql]"), "{err}");
    let err = fails(&["rules", "--dialect", "spark"]);
    assert!(err.contains("--emit <LANGUAGE>"), "{err}");
    // The Azure table classifies windows tracediag builds itself: no SQL over a table.
    let err = fails(&[
        "rules",
        "--rules",
        "rules/azure.toml",
        "--emit",
        "sql",
        "--dialect",
        "duckdb",
    ]);
    assert!(err.contains("only gateway request-log tables"), "{err}");
}

/// `rules --emit sql`: the whole per-request query and the summary query of the shipped
/// table for each engine, with `--set` applied and a table expression as given.
#[test]
fn rules_emit_sql() {
    for dialect in ["duckdb", "spark", "trino"] {
        let rows = ok(&["rules", "--emit", "sql", "--dialect", dialect]);
        insta::assert_snapshot!(format!("rules_emit_sql_{dialect}"), rows);
        let summary = ok(&["rules", "--emit", "sql", "--dialect", dialect, "--summary"]);
        insta::assert_snapshot!(format!("rules_emit_sql_summary_{dialect}"), summary);
    }
    let set = ok(&[
        "rules",
        "--emit",
        "sql",
        "--dialect",
        "duckdb",
        "--set",
        "header_slow_ms=2500",
        "--table",
        "read_parquet('s3://bucket/logs/*.parquet')",
    ]);
    assert!(set.contains("2.5e3 /* header_slow_ms */"), "{set}");
    assert!(!set.contains("3e3 /* header_slow_ms */"), "{set}");
    assert!(
        set.contains("FROM read_parquet('s3://bucket/logs/*.parquet')\n"),
        "{set}"
    );
}

#[test]
fn rules_json_lists_every_class_in_order() {
    let v: serde_json::Value = serde_json::from_str(&ok(&["rules", "--format", "json"])).unwrap();
    let orders: Vec<i64> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["order"].as_i64().unwrap())
        .collect();
    assert_eq!(orders, (1..=9).collect::<Vec<_>>());
}

#[test]
fn fields_table() {
    insta::assert_snapshot!(ok(&["fields"]));
}

#[test]
fn fields_table_azure() {
    insta::assert_snapshot!(ok(&["fields", "--catalogue", "azure"]));
}

#[test]
fn same_input_gives_byte_identical_output() {
    for format in ["table", "json"] {
        let args = [
            "analyze",
            "fixtures/generated/gateway.jsonl",
            "--by",
            "channel,outcome",
            "--format",
            format,
        ];
        assert_eq!(ok(&args), ok(&args), "{format}");
    }
}

#[test]
fn out_writes_one_row_per_request_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    for ext in ["csv", "jsonl", "parquet"] {
        let out = dir.path().join(format!("tagged.{ext}"));
        let o = cli(&[
            "analyze",
            "fixtures/traces/traces.jsonl",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!("tracediag: wrote 3 rows to {}\n", out.display())
        );
        assert!(out.exists());
        // No temporary file left beside it.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| !n.starts_with(".tracediag-")),
            "{names:?}"
        );
    }
    let csv = std::fs::read_to_string(dir.path().join("tagged.csv")).unwrap();
    insta::assert_snapshot!("traces_out_csv", csv);
}

#[test]
fn out_names_the_line_each_row_begins_on() {
    // A header, a blank line and a quoted newline: rows 1, 2, 3 begin on lines 2, 4, 6.
    // Parquet has no lines, so its rows have none.
    let dir = tempfile::tempdir().unwrap();
    let columns = |input: &str| -> String {
        let out = dir.path().join("rows.csv");
        let o = cli(&["analyze", input, "--out", out.to_str().unwrap(), "--force"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let mut reader = csv::Reader::from_path(&out).unwrap();
        let header = reader.headers().unwrap().clone();
        let at = |name: &str| header.iter().position(|c| c == name).unwrap();
        let (row, line) = (at("source_row"), at("source_line"));
        reader
            .records()
            .map(|r| {
                let r = r.unwrap();
                format!("{}:{}", &r[row], &r[line])
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        columns("fixtures/bad/csv_blank_multiline.csv"),
        "1:2 2:4 3:6"
    );
    assert_eq!(
        columns("fixtures/generated/gateway.parquet")
            .split(' ')
            .take(2)
            .collect::<Vec<_>>(),
        ["1:", "2:"]
    );
}

#[test]
fn out_parquet_timestamps_are_tagged_utc_as_csv_writes_them() {
    use polars::prelude::{
        col, DataType, IntoLazy, LazyFrame, PlRefPath, ScanArgsParquet, TimeUnit, TimeZone,
    };
    let dir = tempfile::tempdir().unwrap();
    let (pq, csv) = (dir.path().join("rows.parquet"), dir.path().join("rows.csv"));
    for out in [&pq, &csv] {
        let o = cli(&[
            "analyze",
            "fixtures/traces/traces.jsonl",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let df = LazyFrame::scan_parquet(
        PlRefPath::try_from_path(&pq).unwrap(),
        ScanArgsParquet::default(),
    )
    .unwrap()
    .collect()
    .unwrap();
    let ts = df.column("timestamp").unwrap();
    assert_eq!(
        ts.dtype(),
        &DataType::Datetime(TimeUnit::Milliseconds, Some(TimeZone::UTC))
    );
    // The same instants as the CSV's `…Z` text.
    let as_text = ts
        .as_materialized_series()
        .clone()
        .into_frame()
        .lazy()
        .select([col("timestamp").dt().strftime("%Y-%m-%dT%H:%M:%S%.3fZ")])
        .collect()
        .unwrap();
    let parquet_times: Vec<String> = as_text
        .column("timestamp")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap_or("").to_string())
        .collect();
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let at = reader
        .headers()
        .unwrap()
        .iter()
        .position(|c| c == "timestamp")
        .unwrap();
    let csv_times: Vec<String> = reader
        .records()
        .map(|r| r.unwrap()[at].to_string())
        .collect();
    assert_eq!(parquet_times, csv_times);
    assert!(csv_times.iter().all(|t| t.ends_with('Z')), "{csv_times:?}");
}

#[test]
fn out_rows_carry_their_class_rule_layer_look_at_and_next_check() {
    use polars::prelude::{col, lit, LazyFrame, PlRefPath, ScanArgsParquet};
    let rules = tracediag::ruleset::RuleSet::gateway().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (pq, csv) = (dir.path().join("rows.parquet"), dir.path().join("rows.csv"));
    for out in [&pq, &csv] {
        let o = cli(&[
            "analyze",
            "fixtures/generated/gateway.parquet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let header = reader.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|c| c == name).unwrap();
    let (class, layer, look_at, next) = (at("class"), at("layer"), at("look_at"), at("next_check"));
    assert_eq!(
        (layer, look_at, next),
        (at("classes") + 1, at("classes") + 2, at("classes") + 3)
    );
    let mut seen = std::collections::BTreeSet::new();
    for r in reader.records() {
        let r = r.unwrap();
        let got = [&r[layer], &r[look_at], &r[next]].map(String::from);
        let want = match rules.rule(&r[class]) {
            Some(rule) => [&rule.layer, &rule.look_at, &rule.next_check].map(|s| s.clone()),
            // The default class has no rule: empty (null) cells, never made-up text.
            None => [String::new(), String::new(), String::new()],
        };
        assert_eq!(got, want, "{}", &r[class]);
        seen.insert(r[class].to_string());
    }
    assert!(
        seen.len() > 3,
        "the generated log holds several classes: {seen:?}"
    );
    assert!(seen.contains(rules.default_class.as_str()), "{seen:?}");

    // Parquet holds the same text, and null for the default class.
    let df = LazyFrame::scan_parquet(
        PlRefPath::try_from_path(&pq).unwrap(),
        ScanArgsParquet::default(),
    )
    .unwrap()
    .filter(col("class").eq(lit(rules.default_class.as_str())))
    .select([col("layer"), col("look_at"), col("next_check")])
    .collect()
    .unwrap();
    assert!(df.height() > 0);
    for c in ["layer", "look_at", "next_check"] {
        assert_eq!(df.column(c).unwrap().null_count(), df.height(), "{c}");
    }
}

#[test]
fn out_refuses_an_input_and_an_existing_file() {
    let err = fails(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--out",
        "fixtures/traces/traces.jsonl",
    ]);
    assert!(
        err.contains("refusing to write over an input file"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.csv");
    std::fs::write(&out, "keep me").unwrap();
    let err = fails(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(err.contains("already exists; pass --force"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
    let o = cli(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with("request_id,"));

    let err = fails(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--out",
        dir.path().join("x.xlsx").to_str().unwrap(),
    ]);
    assert!(
        err.contains("expected a .parquet, .csv or .jsonl file"),
        "{err}"
    );
}

#[test]
fn errors_exit_2_and_name_the_problem() {
    assert_eq!(
        fails(&["analyze", "fixtures/nope.parquet"]),
        "tracediag: error: fixtures/nope.parquet: no such file\n"
    );
    assert_eq!(
        fails(&["analyze", "fixtures/nope/*.csv"]),
        "tracediag: error: fixtures/nope/*.csv: the pattern matches no file\n"
    );
    let err = fails(&["analyze", "fixtures/traces/traces.jsonl", "--by", "prompt"]);
    assert!(
        err.starts_with("tracediag: error: --by prompt: ") && err.contains("expected one of "),
        "{err}"
    );
    let err = fails(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--set",
        "header_slow_ms=fast",
    ]);
    assert_eq!(
        err,
        "tracediag: error: --set header_slow_ms=fast: `fast` is not a number\n"
    );
    let err = fails(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--rules",
        "fixtures/rules/bad/unknown_field.toml",
    ]);
    assert!(
        err.contains("fixtures/rules/bad/unknown_field.toml:7:9"),
        "{err}"
    );
    let err = fails(&["frobnicate"]);
    assert!(err.contains("unrecognized subcommand"), "{err}");
}

#[test]
fn set_changes_a_threshold() {
    // With a 7 s header bar, Trace A (6.1 s) is no longer slow before headers.
    let v: serde_json::Value = serde_json::from_str(&ok(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--set",
        "header_slow_ms=7000",
        "--format",
        "json",
    ]))
    .unwrap();
    let class = |name: &str| {
        v["classes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["class"] == name)
            .unwrap()["count"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(class("upstream_headers_slow"), 0);
    let p = v["rules"]["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "header_slow_ms")
        .unwrap();
    assert_eq!(p["value"], 7000.0);
}

#[test]
fn since_and_until_narrow_to_an_incident_window() {
    let v: serde_json::Value = serde_json::from_str(&ok(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--since",
        "2026-11-02T10:00:01Z",
        "--until",
        "2026-11-02 10:00:02",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(v["rows"], 1, "only Trace B falls in [10:00:01, 10:00:02)");
    assert_eq!(v["window"]["since"], "2026-11-02T10:00:01.000Z");
    let table = ok(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--since",
        "2026-11-02",
    ]);
    assert!(
        table.contains("window: 2026-11-02T00:00:00.000Z ≤ received < +∞"),
        "{table}"
    );
    let err = fails(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--since",
        "yesterday",
    ]);
    assert!(err.contains("`yesterday` is not a time"), "{err}");
    let err = fails(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--since",
        "2026-11-03",
        "--until",
        "2026-11-02",
    ]);
    assert!(
        err.contains("--since must be earlier than --until"),
        "{err}"
    );
    // Azure windows: the baseline still comes from before the window.
    let mut args = vec!["analyze".to_string()];
    for e in std::fs::read_dir(root().join("fixtures/azure/generated")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            args.push(p.strip_prefix(root()).unwrap().display().to_string());
        }
    }
    args.sort();
    args.extend(
        [
            "--since",
            "2026-11-02T12:07:00Z",
            "--until",
            "2026-11-02T12:47:00Z",
            "--format",
            "json",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let v: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(v["windows"], 80, "40 minutes × 2 deployments");
    let unexplained = v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == "latency_regression_unexplained")
        .unwrap();
    assert_eq!(unexplained["windows"], 40);
}

/// Inputs above the spinner's size threshold (8 × 2.3 MB here) still print nothing on a
/// stderr that is not a terminal, with or without --quiet.
#[test]
fn no_progress_output_when_stderr_is_not_a_terminal() {
    let mut args = vec!["analyze"];
    args.extend(["fixtures/generated/gateway.jsonl"; 8]);
    args.extend(["--format", "json"]);
    let out = cli(&args);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "");
    args.push("--quiet");
    let out = cli(&args);
    assert_eq!((out.status.code(), stderr(&out).as_str()), (Some(0), ""));
}

#[test]
fn strict_turns_data_quality_findings_into_exit_code_1() {
    // The seed traces are clean: 0 either way.
    let out = cli(&["analyze", "fixtures/traces/traces.jsonl", "--strict"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The generated log has planted findings: the report is printed, then exit 1.
    let out = cli(&[
        "analyze",
        "fixtures/generated/gateway.parquet",
        "--strict",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("\"quality\""));
    assert_eq!(
        stderr(&out),
        "tracediag: --strict: data-quality findings (out_of_order 2, zero_as_missing 1, tps_mismatch 1, duplicate_id 2): exit code 1\n"
    );
    let out = cli(&["analyze", "fixtures/generated/gateway.parquet"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_closed_stderr_is_not_a_panic() {
    // `tracediag … 2>&1 | head -2`: the reader is gone before the error is written. The
    // exit code stays the error's 2 (eprintln! panicked: 101).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = std::process::Command::new(bin())
        .args([
            "rules",
            "check",
            "fixtures/bad/rules/deep_operator_chain.toml",
        ])
        .current_dir(root())
        .stdout(std::process::Stdio::null())
        .stderr(writer)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
}

/// Percentiles ignored their sample size: a group of 3 requests printed a p99. Every
/// percentile now comes with its n, and one the sample cannot support is "n too small":
/// `n<20` / `n<100` in the table, null with the reason in JSON, the rule stated once.
#[test]
fn a_p99_of_three_requests_is_n_too_small() {
    let args = [
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--by",
        "model,channel",
    ];
    let text = ok(&args);
    assert_eq!(
        text.matches("percentile rule: p95 needs n ≥ 20, p99 n ≥ 100")
            .count(),
        1
    );
    assert!(text.contains("n too small"));
    let group = text
        .lines()
        .find(|l| l.starts_with("│ gpt-4.1 ┆ ch-east"))
        .unwrap();
    assert!(
        group.contains("┆     3 ┆   10200 ┆    n<20 ┆   n<100 │"),
        "{group}"
    );

    let json = ok(&[&args[..], &["--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let e2e = &v["groups"]["groups"][0]["end_to_end_ms"];
    assert_eq!(e2e["n"], 3);
    assert_eq!(e2e["p50"], 10200.0);
    assert_eq!(e2e["p95"], serde_json::Value::Null);
    assert_eq!(e2e["p95_withheld"], "n too small (n=3 < 20)");
    assert_eq!(e2e["p99"], serde_json::Value::Null);
    assert_eq!(e2e["p99_withheld"], "n too small (n=3 < 100)");
    assert!(e2e.get("p50_withheld").is_none());
}

#[test]
fn unix_time_stamps_are_read_by_their_size_and_said_so_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    // Seconds, milliseconds and nanoseconds of 2026-11-02T10:00:00Z, as CSV text and as
    // JSON numbers.
    let csv = dir.path().join("unix.csv");
    std::fs::write(
        &csv,
        "request_id,timestamp,total_handler_ms\nr1,1793613600,5\nr2,1793613600250,5\nr3,1793613600500000000,5\n",
    )
    .unwrap();
    let jsonl = dir.path().join("unix.jsonl");
    std::fs::write(
        &jsonl,
        "{\"request_id\":\"r1\",\"timestamp\":1793613600,\"total_handler_ms\":5}\n",
    )
    .unwrap();
    for (path, end) in [(&csv, "10:00:00.500Z"), (&jsonl, "10:00:00.000Z")] {
        let o = cli(&["analyze", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(
            stdout(&o).contains(&format!("2026-11-02T10:00:00.000Z → 2026-11-02T{end}")),
            "{}",
            stdout(&o)
        );
        assert!(
            stderr(&o).contains("timestamp holds numbers, read as Unix time"),
            "{}",
            stderr(&o)
        );
        assert!(!stdout(&o).contains("Unix time"), "a note on stdout");
    }
    // ISO text is not Unix time: no such note.
    let o = cli(&["analyze", "fixtures/traces/traces.jsonl"]);
    assert!(!stderr(&o).contains("Unix time"), "{}", stderr(&o));
}

/// Shell completions and manual pages come from the clap definitions, so they list every
/// command and option there is.
#[test]
fn completions_and_manual_pages_cover_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(&["completions", shell]);
        for command in [
            "analyze",
            "explain",
            "report",
            "rules",
            "completions",
            "man",
        ] {
            assert!(script.contains(command), "{shell}: {command}");
        }
    }
    let page = ok(&["man"]);
    assert!(page.starts_with(".ie"), "{page}");
    assert!(page.contains(".TH tracediag 1"), "{page}");
    let analyze = ok(&["man", "analyze"]);
    assert!(
        analyze.contains(".TH tracediag-analyze 1  \"tracediag-analyze 0.1.0\""),
        "{analyze}"
    );
    assert!(analyze.contains("\\-\\-rules"), "{analyze}");
    let err = fails(&["man", "analyse"]);
    assert!(err.contains("did you mean `analyze`?"), "{err}");
}
