//! `tracediag explain`: whole-output snapshots of one request (table and JSON) and of a
//! class's worst requests, and the contract: missing points say `missing`, estimates say
//! `estimated`, the evidence names values and thresholds, errors exit 2.

mod common;

use common::*;

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    serde_json::from_str(&ok(&a)).unwrap()
}

/// The waterfall line of a phase (`t5→t6`, or `local` + name).
fn phase_line<'a>(text: &'a str, span: &str, name: &str) -> &'a str {
    text.lines()
        .find(|l| {
            let t = l.trim_start();
            t.starts_with(span) && t[span.len()..].trim_start().starts_with(name)
        })
        .unwrap_or_else(|| panic!("no phase line {span} {name} in\n{text}"))
}

/// A rule's block in the evidence section: its header line and the indented lines below.
fn rule_block(text: &str, order: u32, class: &str) -> String {
    let head = format!("{order:>4} {class} ");
    let mut lines = text.lines().skip_while(|l| !l.starts_with(&head));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no rule {order} {class} in\n{text}"));
    let mut block = vec![first];
    block.extend(lines.take_while(|l| l.starts_with("       ")));
    block.join("\n")
}

#[test]
fn trace_b_table() {
    insta::assert_snapshot!(ok(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b"
    ]));
}

#[test]
fn trace_b_json() {
    insta::assert_snapshot!(ok(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b",
        "--format",
        "json"
    ]));
}

#[test]
fn trace_b_markdown() {
    insta::assert_snapshot!(ok(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b",
        "--format",
        "markdown"
    ]));
}

#[test]
fn generated_worst_action_text_gap_markdown() {
    insta::assert_snapshot!(ok(&[
        "explain",
        "fixtures/generated/gateway.parquet",
        "--class",
        "action_text_gap",
        "--limit",
        "5",
        "--format",
        "markdown"
    ]));
}

#[test]
fn generated_worst_action_text_gap() {
    insta::assert_snapshot!(ok(&[
        "explain",
        "fixtures/generated/gateway.parquet",
        "--class",
        "action_text_gap",
        "--limit",
        "5"
    ]));
}

/// An exact t1 offset (upstream_start_ms) and a slow local phase, visible in the waterfall.
#[test]
fn auth_slow_exact_offset_and_local_phase() {
    let text = ok(&[
        "explain",
        "fixtures/classes/auth_slow.jsonl",
        "--request-id",
        "auth_slow-fire-slow-token-store",
    ]);
    assert!(
        text.contains("t1 offset (t0→t1): 2510 ms, exact (upstream_start_ms)"),
        "{text}"
    );
    let auth = phase_line(&text, "local", "auth");
    assert!(auth.contains(" 2500 "), "{auth}");
    assert!(
        auth.contains("████"),
        "the slow phase has a visible bar: {auth}"
    );
    // The rule table's metric for t0→t1, exact here: its first argument was logged.
    let offset = phase_line(&text, "t0→t1", "t1_offset_ms");
    assert!(
        offset.contains("t1_offset_ms = coalesce(upstream_start_ms, "),
        "{offset}"
    );
    // Nothing rests on an estimate here.
    assert!(!text.contains("· estimated"), "{text}");
    assert!(text.contains("Class: auth_slow (rule 6)"), "{text}");
    insta::assert_snapshot!(text);
}

/// Trace B has no t6 (upstream_done_ms): its phases say `missing`, never 0, and the JSON
/// has null durations; the span across the gap is shown from the points that exist.
#[test]
fn a_missing_point_is_missing_not_zero() {
    let text = ok(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b",
    ]);
    for (span, name) in [
        ("t5→t6", "generation_window_ms"),
        ("t6→t7", "post_upstream_ms"),
    ] {
        let line = phase_line(&text, span, name);
        assert!(line.contains("missing"), "{line}");
        assert!(line.contains("t6 not logged (upstream_done_ms)"), "{line}");
        let ms = line.split('│').next().unwrap();
        assert!(
            !ms.split_whitespace().any(|w| w == "0" || w == "0.0"),
            "{line}"
        );
    }
    let bridge = phase_line(&text, "t5→t7", "(across t6)");
    assert!(bridge.contains(" 1500 "), "{bridge}");

    let v = json(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b",
    ]);
    let phases = v["requests"][0]["timeline"]["phases"].as_array().unwrap();
    let t56 = phases.iter().find(|p| p["span"] == "t5→t6").unwrap();
    assert!(t56["duration_ms"].is_null(), "{t56}");
    assert_eq!(t56["missing"], "t6 not logged (upstream_done_ms)");
}

/// The evidence of Trace B's class: the gap against its threshold, and the dominance check.
#[test]
fn trace_b_evidence_names_values_and_thresholds() {
    let text = ok(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b",
    ]);
    let block = rule_block(&text, 4, "action_text_gap");
    assert!(block.contains("MATCH — gives the class"), "{block}");
    assert!(block.contains("action_text_gap_ms = 5800"), "{block}");
    assert!(block.contains("action_gap_slow_ms = 2000 ms"), "{block}");
    assert!(
        block.contains("action_text_gap_ms >= action_gap_slow_ms")
            && block.contains("5800 >= 2000 → true"),
        "{block}"
    );
    assert!(block.contains("5800 >= 5100 → true"), "{block}");
    // A rule that did not match shows the failing comparison.
    let first = rule_block(&text, 1, "upstream_headers_slow");
    assert!(first.contains("no match"), "{first}");
    assert!(first.contains("240 >= 3000 → false"), "{first}");
    assert!(text.contains("next check  check the requested tools and the output mode"));

    let v = json(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b",
    ]);
    let r = &v["requests"][0];
    assert_eq!(r["class"], "action_text_gap");
    let rule = r["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["class"] == "action_text_gap")
        .unwrap();
    assert_eq!(rule["matched"], true);
    assert_eq!(rule["gives_class"], true);
    let value = |name: &str| {
        rule["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap()["value"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(value("action_text_gap_ms"), 5800.0);
    let threshold = rule["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "action_gap_slow_ms")
        .unwrap();
    assert_eq!(threshold["value"], 2000.0);
    assert_eq!(threshold["unit"], "ms");
    // The cohort is the three traces (same model and channel).
    assert_eq!(r["cohort"]["model"], "gpt-4.1");
    assert_eq!(r["cohort"]["channel"], "ch-east");
    assert_eq!(r["cohort"]["requests"], 3);
    let gap = r["cohort"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "action_text_gap_ms")
        .unwrap();
    assert_eq!(gap["rank_pct"], 100.0, "{gap}");
    assert_eq!(gap["cohort"]["n"], 3);
}

/// A request without upstream_start_ms: the t1 offset is the sum of the local phases, and
/// every phase built on it says `estimated`.
#[test]
fn an_estimated_offset_says_estimated() {
    let args = [
        "explain",
        "fixtures/generated/gateway.parquet",
        "--request-id",
        "req-0000002",
    ];
    let text = ok(&args);
    assert!(
        text.contains("t1 offset (t0→t1): 15 ms, estimated"),
        "{text}"
    );
    let offset = phase_line(&text, "t0→t1", "t1_offset_ms");
    assert!(
        offset.contains("auth_ms + distribution_ms + body_read_ms) · estimated"),
        "{offset}"
    );
    let t23 = phase_line(&text, "t2→t3", "headers_to_first_event_ms");
    assert!(t23.contains("estimated"), "{t23}");
    assert!(t23.contains('▒'), "estimated bars are drawn apart: {t23}");
    // Same-origin deltas do not rest on it.
    let t34 = phase_line(&text, "t3→t4", "events_to_effective_ms");
    assert!(!t34.contains("estimated"), "{t34}");

    let v = json(&args);
    let phases = v["requests"][0]["timeline"]["phases"].as_array().unwrap();
    let est = |span: &str| phases.iter().find(|p| p["span"] == span).unwrap()["estimated"].clone();
    assert_eq!(est("t0→t1"), true);
    assert_eq!(est("t2→t3"), true);
    assert_eq!(est("t1→t2"), false);
    assert_eq!(v["requests"][0]["timeline"]["t1_offset_estimated"], true);
}

/// A duplicated id: each row explained, in input order, and said to be duplicated.
#[test]
fn a_duplicate_id_is_explained_once_per_row() {
    let args = [
        "explain",
        "fixtures/generated/gateway.parquet",
        "--request-id",
        "req-0000056",
    ];
    let text = ok(&args);
    assert!(
        text.contains("request `req-0000056` appears 2 times (a duplicate id)"),
        "{text}"
    );
    let a = text.find("══ 1 of 2").unwrap();
    let b = text.find("══ 2 of 2").unwrap();
    assert!(a < b);
    assert!(text.contains("gateway.parquet, row 56,"));
    assert!(text.contains("gateway.parquet, row 57,"));
    assert!(text.contains("flagged: duplicate_id"));
    let v = json(&args);
    assert_eq!(v["occurrences"], 2);
    let rows: Vec<i64> = v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["source_row"].as_i64().unwrap())
        .collect();
    assert_eq!(rows, [56, 57]);
}

/// The worst of a class: sorted by its look_at figure (a rate: lowest first), limited.
#[test]
fn class_listing_is_sorted_and_limited() {
    let v = json(&[
        "explain",
        "fixtures/generated/gateway.parquet",
        "--class",
        "action_text_gap",
        "--limit",
        "5",
    ]);
    assert_eq!(v["explain"], "class");
    assert_eq!(v["requests_in_class"], 133);
    assert_eq!(v["layer"], "tool / reasoning phase, answer composition");
    let vals: Vec<f64> = v["worst"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["look_at_value"].as_f64().unwrap())
        .collect();
    assert_eq!(vals.len(), 5);
    assert!(vals.windows(2).all(|w| w[0] >= w[1]), "{vals:?}");

    let v = json(&[
        "explain",
        "fixtures/generated/gateway.parquet",
        "--class",
        "generation_slow_tps",
    ]);
    assert_eq!(v["look_at"], "visible_output_tps");
    assert_eq!(v["worst_is"], "lowest");
    let vals: Vec<f64> = v["worst"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["look_at_value"].as_f64())
        .collect();
    assert_eq!(
        v["worst"].as_array().unwrap().len(),
        10,
        "--limit defaults to 10"
    );
    assert!(vals.windows(2).all(|w| w[0] <= w[1]), "{vals:?}");
}

/// --since/--until narrow what is explained.
#[test]
fn the_incident_window_applies() {
    let err = fails(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b",
        "--until",
        "2026-11-02T10:00:01Z",
    ]);
    assert!(
        err.contains("no request `trace-b` in fixtures/traces/traces.jsonl received before 2026-11-02T10:00:01.000Z"),
        "{err}"
    );
    let v = json(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b",
        "--since",
        "2026-11-02T10:00:01Z",
    ]);
    // The cohort is the window's: trace-a is outside it.
    assert_eq!(v["requests"][0]["cohort"]["requests"], 2);
    assert_eq!(v["window"]["since"], "2026-11-02T10:00:01.000Z");
}

/// On a log of more rows than `--cohort-rows`, the cohort is the requests of the same
/// model and channel among that many rows of the file around the request, and the output
/// says which; on a smaller log it is the whole log's.
#[test]
fn the_cohort_of_a_large_log_is_the_rows_around_the_request() {
    use polars::prelude::*;
    let file = "fixtures/generated/gateway.parquet";
    let path = PlRefPath::try_from_path(std::path::Path::new(file)).unwrap();
    let df = LazyFrame::scan_parquet(path, ScanArgsParquet::default())
        .unwrap()
        .select([col("request_id"), col("model"), col("channel")])
        .collect()
        .unwrap();
    let id = "req-0002100";
    let ids = df.column("request_id").unwrap().str().unwrap();
    let row = (0..df.height()).find(|&i| ids.get(i) == Some(id)).unwrap();
    let text = |c: &str, i: usize| df.column(c).unwrap().str().unwrap().get(i);
    // 500 rows centred on it (1-based rows 1851–2350), and in them its model and channel.
    let (first, last) = (row + 1 - 250, row + 250);
    let same = |lo: usize, hi: usize| {
        (lo..=hi)
            .filter(|&i| {
                text("model", i) == text("model", row) && text("channel", i) == text("channel", row)
            })
            .count()
    };
    let v = json(&["explain", file, "--request-id", id, "--cohort-rows", "500"]);
    let c = &v["requests"][0]["cohort"];
    assert_eq!(c["around"]["first"], first as u64);
    assert_eq!(c["around"]["last"], last as u64);
    assert_eq!(c["around"]["log_rows"], df.height() as u64);
    assert_eq!(c["around"]["file"], file);
    assert_eq!(c["requests"], same(first - 1, last - 1) as u64);
    let table = ok(&["explain", file, "--request-id", id, "--cohort-rows", "500"]);
    assert!(
        table.contains(&format!(
            "among rows {first}–{last} of {file} (the rows around it: the log has 3000 rows, more than --cohort-rows)"
        )),
        "{table}"
    );
    // The whole log's: no rows named.
    let v = json(&["explain", file, "--request-id", id]);
    let c = &v["requests"][0]["cohort"];
    assert!(c.get("around").is_none(), "{c}");
    assert_eq!(c["requests"], same(0, df.height() - 1) as u64);
}

#[test]
fn errors_exit_2() {
    let err = fails(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "nope",
    ]);
    assert!(
        err.contains("no request `nope` in fixtures/traces/traces.jsonl"),
        "{err}"
    );
    let err = fails(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--class",
        "action_txt_gap",
    ]);
    assert!(err.contains("unknown class `action_txt_gap`"), "{err}");
    assert!(err.contains("did you mean `action_text_gap`?"), "{err}");
    let err = fails(&[
        "explain",
        "fixtures/traces/traces.jsonl",
        "--request-id",
        "trace-b",
        "--class",
        "action_text_gap",
    ]);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = fails(&["explain", "fixtures/traces/traces.jsonl"]);
    assert!(err.contains("required"), "{err}");
    let err = fails(&[
        "explain",
        "fixtures/azure/generated/AzureOpenAINormalizedTBTInMS.json",
        "--request-id",
        "x",
    ]);
    assert!(err.contains("explain reads gateway request logs"), "{err}");
    let err = fails(&["explain", "no/such/file.jsonl", "--request-id", "x"]);
    assert!(err.contains("no such file"), "{err}");
}

#[test]
fn output_is_deterministic() {
    let args = [
        "explain",
        "fixtures/generated/gateway.parquet",
        "--request-id",
        "req-0000056",
        "--format",
        "json",
    ];
    assert_eq!(ok(&args), ok(&args));
}
