//! Inputs: every format and layout gives the same frame; missing stays null; content never
//! reaches an output.

mod common;

use common::*;
use polars::prelude::*;
use tracediag::ruleset::RuleSet;

fn gateway() -> RuleSet {
    RuleSet::gateway().unwrap()
}

/// The comparable part of an analysis: everything but where the row came from.
fn comparable(files: &[&str]) -> DataFrame {
    let paths: Vec<_> = files.iter().map(|f| fixture(f)).collect();
    let a = run(&gateway(), &paths);
    a.frame
        .drop_many(["source_file"])
        .select(
            tracediag::output::columns(&gateway())
                .into_iter()
                .filter(|c| c != "source_file" && c != tracediag::source::LINE_COL)
                // Looked up from the class when written, not columns of the frame.
                .filter(|c| {
                    !tracediag::output::RULE_COLUMNS
                        .iter()
                        .any(|(n, _)| *n == c.as_str())
                }),
        )
        .unwrap()
}

#[test]
fn the_four_layouts_give_the_same_classes_metrics_and_flags() {
    // Parquet with a nested struct, flat CSV, JSON lines with `other` as an object and as
    // a JSON string.
    let reference = comparable(&["generated/gateway.jsonl"]);
    assert_eq!(reference.height(), 3000);
    for other in [
        "generated/gateway.parquet",
        "generated/gateway.csv",
        "generated/gateway_other_string.jsonl",
    ] {
        let df = comparable(&[other]);
        assert!(
            df.equals_missing(&reference),
            "{other} differs from generated/gateway.jsonl"
        );
    }
}

#[test]
fn missing_points_stay_null_and_out_of_the_percentiles() {
    let a = run(&gateway(), &[fixture("traces/traces.jsonl")]);
    // The article gives no upstream end: the window is null, never 0.
    assert_eq!(f64_col(&a, "upstream_done_ms"), vec![None, None, None]);
    assert_eq!(f64_col(&a, "generation_window_ms"), vec![None, None, None]);
    // No input has t6, so no request can have a window: the summary leaves the metric
    // out and names it, rather than show a row of nulls (or zeros).
    assert!(!a
        .summary
        .metrics
        .iter()
        .any(|m| m.name == "generation_window_ms"));
    let left_out = a
        .summary
        .metrics_left_out
        .iter()
        .find(|m| m.name == "generation_window_ms")
        .unwrap();
    assert!(
        !left_out.other_logs,
        "t6 is a field of the canonical schema the traces are in"
    );

    // An empty CSV cell is null too.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("gaps.csv");
    std::fs::write(
        &csv,
        "request_id,upstream_headers_ms,first_sse_event_ms,first_response_ms,first_text_delta_ms,total_handler_ms,is_stream\n\
         r1,200,300,400,,1000,true\n\
         r2,200,300,400,500,3000,true\n",
    )
    .unwrap();
    let a = run(&gateway(), &[csv]);
    assert_eq!(f64_col(&a, "first_text_delta_ms"), vec![None, Some(500.0)]);
    let ttfvt = a
        .summary
        .metrics
        .iter()
        .find(|m| m.name == "time_to_first_visible_text_ms")
        .unwrap();
    assert_eq!((ttfvt.pct.n, ttfvt.pct.p50), (1, Some(500.0)));
}

#[test]
fn zeros_that_mean_missing_are_reported_not_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("zeros.csv");
    std::fs::write(
        &csv,
        "request_id,upstream_headers_ms,first_sse_event_ms,first_response_ms,first_text_delta_ms,upstream_done_ms,total_handler_ms\n\
         z1,200,300,400,0,5000,5010\n\
         ok1,200,300,400,420,5000,5010\n",
    )
    .unwrap();
    let a = run(&gateway(), &[csv]);
    assert_eq!(
        f64_col(&a, "first_text_delta_ms"),
        vec![Some(0.0), Some(420.0)]
    );
    let q = a
        .summary
        .quality
        .iter()
        .find(|q| q.check == "zero_as_missing")
        .unwrap();
    assert_eq!((q.count, q.examples.clone()), (1, vec!["z1".to_string()]));
    let q = a
        .summary
        .quality
        .iter()
        .find(|q| q.check == "out_of_order")
        .unwrap();
    assert_eq!(q.examples, vec!["z1".to_string()]);
}

#[test]
fn a_zero_is_judged_against_later_points_of_its_own_clock_only() {
    // z1's first event is 0 while its end (same clock) is positive: probably "missing".
    // c1's is 0 too, but the only later figure is a benchmark client's, on another clock.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("clocks.csv");
    std::fs::write(
        &csv,
        "request_id,first_sse_event_ms,total_handler_ms,client_ttft_ms\n\
         z1,0,900,\n\
         c1,0,,500\n",
    )
    .unwrap();
    let a = run(&gateway(), &[csv]);
    let q = a
        .summary
        .quality
        .iter()
        .find(|q| q.check == "zero_as_missing")
        .unwrap();
    assert_eq!((q.count, q.examples.clone()), (1, vec!["z1".to_string()]));
}

#[test]
fn planted_data_quality_problems_are_found() {
    let a = run(&gateway(), &[fixture("generated/gateway.parquet")]);
    let found = |check: &str| {
        let q = a.summary.quality.iter().find(|q| q.check == check).unwrap();
        (q.count, q.examples.clone())
    };
    assert_eq!(found("duplicate_id"), (2, vec!["req-0000056".to_string()]));
    assert_eq!(found("tps_mismatch"), (1, vec!["req-0000045".to_string()]));
    assert!(found("zero_as_missing")
        .1
        .contains(&"req-0000018".to_string()));
    assert!(found("out_of_order").1.contains(&"req-0000034".to_string()));
    assert_eq!(found("negative").0, 0);
}

#[test]
fn numbers_as_text_are_read_and_garbage_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("text.jsonl");
    std::fs::write(
        &jsonl,
        "{\"request_id\":\"t1\",\"other\":{\"timing\":{\"upstream_headers_ms\":\"250\",\"total_handler_ms\":\"900\"}}}\n\
         {\"request_id\":\"t2\",\"other\":{\"timing\":{\"upstream_headers_ms\":\"fast\",\"total_handler_ms\":\"900\"}}}\n",
    )
    .unwrap();
    let a = run(&gateway(), &[jsonl]);
    assert_eq!(f64_col(&a, "upstream_headers_ms"), vec![Some(250.0), None]);
    let q = a
        .summary
        .quality
        .iter()
        .find(|q| q.check == "unparsed")
        .unwrap();
    assert_eq!((q.count, q.examples.clone()), (1, vec!["t2".to_string()]));
}

/// A count written as a whole number is read as it is, not through a float: a value above
/// 2^53 keeps its last digit, and an integer column is never "unparsed". Where the count is
/// text or a float, a fraction is still refused (null, and counted).
#[test]
fn whole_number_counts_are_read_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let big: i64 = (1 << 53) + 1;
    let mut df = df!(
        "request_id" => ["i1", "i2"],
        "input_tokens" => [big, 7],
        "total_handler_ms" => [900.0, 800.0],
    )
    .unwrap();
    let parquet = dir.path().join("ints.parquet");
    ParquetWriter::new(std::fs::File::create(&parquet).unwrap())
        .finish(&mut df)
        .unwrap();
    let jsonl = dir.path().join("ints.jsonl");
    std::fs::write(
        &jsonl,
        format!(
            "{{\"request_id\":\"i1\",\"input_tokens\":{big},\"total_handler_ms\":900}}\n\
             {{\"request_id\":\"i2\",\"input_tokens\":7.5,\"total_handler_ms\":800}}\n"
        ),
    )
    .unwrap();
    let tokens = |a: &tracediag::analyze::Collected| -> Vec<Option<i64>> {
        a.frame
            .column("input_tokens")
            .unwrap()
            .i64()
            .unwrap()
            .iter()
            .collect()
    };
    let unparsed = |a: &tracediag::analyze::Collected| {
        a.summary
            .quality
            .iter()
            .find(|q| q.check == "unparsed")
            .map(|q| q.count)
    };
    let a = run(&gateway(), &[parquet]);
    assert_eq!(tokens(&a), vec![Some(big), Some(7)]);
    assert_eq!(unparsed(&a), Some(0));
    // JSON lines: one value is a fraction, so the column is read as floats and the
    // fraction refused; 2^53 + 1 as a float is 2^53.
    let a = run(&gateway(), &[jsonl]);
    assert_eq!(tokens(&a), vec![Some(1 << 53), None]);
    assert_eq!(unparsed(&a), Some(1));
}

#[test]
fn failures_stay_in_every_statistic() {
    let a = run(&gateway(), &[fixture("generated/gateway.jsonl")]);
    let s = &a.summary;
    assert_eq!(s.rows, 3000);
    assert_eq!(s.classes.iter().map(|c| c.count).sum::<u64>(), 3000);
    let outcomes: u64 = s.outcomes.iter().map(|o| o.count).sum();
    assert_eq!(outcomes, 3000);
    assert_eq!(s.failures, 60 + 68 + 39);
    // End-to-end percentiles count every row that has a handler time, failures included.
    let e2e = s
        .metrics
        .iter()
        .find(|m| m.name == "end_to_end_ms")
        .unwrap();
    assert_eq!(e2e.pct.n + e2e.nulls, 3000);
    assert_eq!(e2e.nulls, 30, "only the rows that lost their handler time");
}

const CANARIES: [&str; 4] = [
    "CANARY-PROMPT",
    "CANARY-RESPONSE",
    "CANARY-KEY",
    "CANARY-MESSAGES",
];

#[test]
fn content_never_reaches_any_output() {
    let dir = tempfile::tempdir().unwrap();
    for input in [
        "fixtures/generated/gateway.parquet",
        "fixtures/generated/gateway.csv",
        "fixtures/generated/gateway.jsonl",
        "fixtures/generated/gateway_other_string.jsonl",
    ] {
        for ext in ["csv", "jsonl", "parquet"] {
            let out = dir.path().join(format!("out.{ext}"));
            for format in ["table", "json"] {
                let o = cli(&[
                    "analyze",
                    input,
                    "--by",
                    "model,channel",
                    "--format",
                    format,
                    "--out",
                    out.to_str().unwrap(),
                    "--force",
                ]);
                assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
                let bytes = std::fs::read(&out).unwrap();
                let written = String::from_utf8_lossy(&bytes);
                for c in CANARIES {
                    assert!(!stdout(&o).contains(c), "{c} in stdout for {input}");
                    assert!(!stderr(&o).contains(c), "{c} in stderr for {input}");
                    assert!(!written.contains(c), "{c} in {ext} output for {input}");
                }
            }
        }
    }
    // The content columns are not even part of the frame.
    let a = run(&gateway(), &[fixture("generated/gateway.jsonl")]);
    for name in [
        "prompt", "response", "api_key", "other", "messages", "scenario",
    ] {
        assert!(
            a.frame.column(name).is_err(),
            "{name} was read into the frame"
        );
    }
}

#[test]
fn json_arrays_json_strings_in_csv_and_dotted_columns_agree() {
    let src = std::fs::read_to_string(fixture("traces/traces.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = src
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();

    let array = dir.path().join("traces.json");
    std::fs::write(&array, serde_json::to_string(&rows).unwrap()).unwrap();

    // `other` as a JSON string in a CSV cell (a database dump of new-api's logs table).
    let quoted = |s: String| format!("\"{}\"", s.replace('"', "\"\""));
    let mut other_csv = String::from("request_id,is_stream,other\n");
    for r in &rows {
        other_csv += &format!(
            "{},true,{}\n",
            r["request_id"].as_str().unwrap(),
            quoted(r["other"].to_string())
        );
    }
    let other = dir.path().join("other.csv");
    std::fs::write(&other, other_csv).unwrap();

    // Dotted column names, and a header in another case.
    let keys: Vec<String> = rows[0]["other"]["timing"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut dotted_csv = format!(
        "Request_ID,IS_STREAM,{}\n",
        keys.iter()
            .map(|k| format!("other.timing.{k}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    for r in &rows {
        let vals: Vec<String> = keys
            .iter()
            .map(|k| r["other"]["timing"][k].to_string())
            .collect();
        dotted_csv += &format!(
            "{},true,{}\n",
            r["request_id"].as_str().unwrap(),
            vals.join(",")
        );
    }
    let dotted = dir.path().join("dotted.csv");
    std::fs::write(&dotted, dotted_csv).unwrap();

    let want = classes(&run(&gateway(), &[fixture("traces/traces.jsonl")]));
    for path in [array, other, dotted] {
        assert_eq!(
            classes(&run(&gateway(), std::slice::from_ref(&path))),
            want,
            "{}",
            path.display()
        );
    }
}

/// A real new-api `/api/log/` page (`other` is a JSON string holding pricing and `frt`):
/// read by the new-api adapter, its consume rows only, as the format it was detected as.
#[test]
fn real_new_api_rows_are_read_by_their_adapter() {
    let a = tracediag::analyze::run(
        &gateway(),
        &tracediag::analyze::Options {
            inputs: vec![fixture("external/newapi_yushow1024_items.jsonl")],
            ..Default::default()
        },
    )
    .expect("a new-api log is read");
    assert_eq!(
        a.plan.inputs[0].format,
        tracediag::source::InputFormat::NewApi
    );
    let notes = &a.summary.notes;
    assert!(
        notes.iter().any(|n| n.contains(
            "left out 2 top-up/manage/system rows (type other than 2 consume and 5 error)"
        )),
        "{notes:?}"
    );
}

/// Every command that reads logs, in every output format, on a log whose content columns
/// (and bad rows) hold canaries: none reaches stdout or stderr. `analyze` and `report`
/// are covered above and in tests/report.rs.
#[test]
fn content_never_reaches_any_command() {
    let dir = tempfile::tempdir().unwrap();
    // Bad rows full of content: a broken line, a duplicated key, a wrong-typed value, an
    // `other` that is not JSON, a line that is a string, an `other` that is a JSON string of
    // a string, and an authorization header.
    let good = r#"{"request_id":"ok-1","upstream_headers_ms":120,"total_handler_ms":900,"prompt":"CANARY-PROMPT","authorization":"Bearer CANARY-KEY"}"#;
    let bad = [
        r#"{"request_id":"b-1","prompt":"CANARY-PROMPT","response":"CANARY-RESPONSE"#,
        r#"{"request_id":"b-2","prompt":"CANARY-PROMPT","prompt":"CANARY-PROMPT","messages":[{"content":"CANARY-MESSAGES"}]}"#,
        r#"{"request_id":"b-3","upstream_headers_ms":["CANARY-RESPONSE"],"api_key":"CANARY-KEY"}"#,
        r#"{"request_id":"b-4","other":"{CANARY-MESSAGES","api_key":"CANARY-KEY"}"#,
        r#""a line that is only a string: CANARY-PROMPT""#,
        r#"{"request_id":"b-5","other":"\"CANARY-RESPONSE\""}"#,
    ];
    let log = dir.path().join("bad.jsonl");
    std::fs::write(&log, format!("{good}\n{}\n{good}\n", bad.join("\n"))).unwrap();
    let log = log.to_str().unwrap();
    let array = dir.path().join("rows.json");
    std::fs::write(&array, format!("[{good},{good}]")).unwrap();
    let array = array.to_str().unwrap();
    // A JSON array is read whole: an element that is a string is an error (exit 2).
    let bad_array = dir.path().join("bad_rows.json");
    std::fs::write(&bad_array, format!("[{good},\"CANARY-MESSAGES\"]")).unwrap();
    let bad_array = bad_array.to_str().unwrap();

    let generated = "fixtures/generated/gateway.jsonl";
    let mut runs: Vec<Vec<&str>> = vec![];
    for format in ["table", "json"] {
        runs.push(vec![
            "explain",
            generated,
            "--request-id",
            "req-0000001",
            "--format",
            format,
        ]);
        runs.push(vec![
            "explain",
            generated,
            "--class",
            "upstream_headers_slow",
            "--limit",
            "3",
            "--format",
            format,
        ]);
        runs.push(vec![
            "compare",
            generated,
            "--split",
            "channel=ch-east,ch-west",
            "--format",
            format,
        ]);
        runs.push(vec![
            "throughput",
            generated,
            "--by",
            "model,channel",
            "--format",
            format,
        ]);
        for policy in ["error", "skip", "keep"] {
            runs.push(vec![
                "analyze",
                log,
                "--on-bad-row",
                policy,
                "--format",
                format,
            ]);
            runs.push(vec![
                "explain",
                log,
                "--request-id",
                "b-3",
                "--on-bad-row",
                policy,
                "--format",
                format,
            ]);
            runs.push(vec![
                "throughput",
                log,
                "--on-bad-row",
                policy,
                "--format",
                format,
            ]);
        }
        runs.push(vec!["analyze", array, "--format", format]);
        runs.push(vec!["analyze", bad_array, "--format", format]);
    }
    for args in &runs {
        let o = cli(args);
        assert!(
            matches!(o.status.code(), Some(0..=2)),
            "{args:?}: {}",
            stderr(&o)
        );
        for c in CANARIES {
            assert!(!stdout(&o).contains(c), "{c} in stdout of {args:?}");
            assert!(!stderr(&o).contains(c), "{c} in stderr of {args:?}");
        }
    }
    // The bad rows were really read and reported (the test can fail).
    let o = cli(&["analyze", log, "--on-bad-row", "skip"]);
    assert!(
        stderr(&o).contains("left out of every figure"),
        "{}",
        stderr(&o)
    );
    let o = cli(&["analyze", log, "--on-bad-row", "error"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
}

/// The same requests with `other` an object and `other` a JSON string map the same
/// fields: the header counts the timing fields a JSON string holds values for, not every
/// one it could hold.
#[test]
fn a_json_string_other_maps_the_fields_it_has() {
    let mapped = |file: &str| {
        let out = cli(&[
            "analyze",
            fixture(file).to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let fields = v["inputs"][0]["fields"].as_array().unwrap().clone();
        let mut names: Vec<String> = fields
            .iter()
            .map(|f| f["field"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    let object = mapped("generated/gateway.jsonl");
    assert_eq!(object.len(), 26);
    assert_eq!(mapped("generated/gateway_other_string.jsonl"), object);
}
