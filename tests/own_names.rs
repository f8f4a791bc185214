//! Logs whose columns are named their own way (issue 51, part 3): refused without a
//! mapping, classified with `--map` or `--schema` (CSV, JSON lines with a path inside a
//! JSON string and inside an object, Parquet with a struct), the mapping in every header,
//! and each mistake in it an exit 2 with the nearest name.

mod common;

use common::*;
use polars::prelude::*;
use tracediag::analyze;
use tracediag::ruleset::tables;
use tracediag::source::columns::ColumnMap;

const CSV: &str = "fixtures/own_names/requests.csv";
const JSONL: &str = "fixtures/own_names/requests.jsonl";
const SCHEMA: &str = "fixtures/own_names/schema.toml";

/// The JSON-lines log's columns: the first output inside the JSON string `other`, the
/// output tokens inside the object `usage`, the end in seconds, Unix milliseconds.
const JSONL_MAP: [&str; 7] = [
    "request_id=req",
    "timestamp=started_ms:ms",
    "model=llm",
    "first_sse_event_ms=other.ttft",
    "total_handler_ms=latency_s:s",
    "output_tokens=usage.out",
    "status=http",
];

/// What each request of the fixture is (fixtures/own_names/README.md).
const EXPECTED: [(&str, &str); 4] = [
    ("own-1", "first_output_slow"),
    ("own-2", "generation_slow_for_length"),
    ("own-3", "normal"),
    ("own-4", "insufficient_data"),
];

fn with_map(args: &[&str], map: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    for m in map {
        v.push("--map".into());
        v.push(m.to_string());
    }
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Each request's class, read with the library.
fn classified(file: &str, map: &ColumnMap) -> Vec<(String, String)> {
    let a = analyze::run(
        &tables::shipped().unwrap(),
        &analyze::Options {
            inputs: vec![root().join(file)],
            columns: map.clone(),
            ..Default::default()
        },
    )
    .and_then(|a| a.collected())
    .unwrap();
    classes(&a).into_iter().map(|(id, c, _)| (id, c)).collect()
}

fn expected() -> Vec<(String, String)> {
    EXPECTED
        .iter()
        .map(|(i, c)| (i.to_string(), c.to_string()))
        .collect()
}

#[test]
fn own_names_are_refused_without_a_mapping() {
    for file in [CSV, JSONL] {
        let err = fails(&["analyze", file]);
        assert!(err.contains("no timing field can be mapped"), "{err}");
        assert!(err.contains("--map FIELD=COLUMN"), "{err}");
    }
}

#[test]
fn own_names_are_classified_with_a_mapping() {
    let schema = ColumnMap::from_args(&[], Some(&root().join(SCHEMA))).unwrap();
    assert_eq!(classified(CSV, &schema), expected());
    let map: Vec<String> = JSONL_MAP.iter().map(|s| s.to_string()).collect();
    let flags = ColumnMap::from_args(&map, None).unwrap();
    assert_eq!(classified(JSONL, &flags), expected());
}

/// Units convert to the catalogue's (seconds to ms, Unix seconds and milliseconds to the
/// same instants), and a cell that is not a number is null, as any other cell.
#[test]
fn units_convert_to_the_catalogues() {
    let out = tempfile::tempdir().unwrap();
    let schema = vec!["--schema".to_string(), SCHEMA.to_string()];
    let flags = with_map(&[], &JSONL_MAP);
    for (file, map) in [(CSV, &schema), (JSONL, &flags)] {
        let rows = out.path().join("rows.csv");
        let mut args = with_map(
            &["analyze", file, "--out", rows.to_str().unwrap(), "--force"],
            &[],
        );
        args.extend(map.iter().cloned());
        ok(&strs(&args));
        let df = CsvReadOptions::default()
            .try_into_reader_with_file_path(Some(rows))
            .unwrap()
            .finish()
            .unwrap();
        let f64s = |c: &str| -> Vec<Option<f64>> {
            df.column(c)
                .unwrap()
                .cast(&DataType::Float64)
                .unwrap()
                .f64()
                .unwrap()
                .iter()
                .collect()
        };
        assert_eq!(
            f64s("total_handler_ms"),
            [Some(7500.0), Some(12300.0), Some(1900.0), None],
            "{file}"
        );
        assert_eq!(
            f64s("first_sse_event_ms"),
            [Some(6200.0), Some(300.0), Some(250.0), Some(410.0)],
            "{file}"
        );
        let ts: Vec<Option<&str>> = df
            .column("timestamp")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(ts[0], Some("2026-11-02T10:00:00.000Z"), "{file}");
        assert_eq!(ts[3], Some("2026-11-02T10:00:03.000Z"), "{file}");
        // Only the mapped columns are read: the prompt never reaches an output.
        let text = std::fs::read_to_string(out.path().join("rows.csv")).unwrap();
        assert!(!text.contains("poem"), "{file}: {text}");
    }
}

/// A Parquet log: a path into a struct column, and a path inside a JSON-string column.
#[test]
fn parquet_struct_and_json_string_paths() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("own.parquet");
    let ttft = Series::new("ttft".into(), [6200i64, 300]);
    let timing = StructChunked::from_series("timing".into(), 2, [ttft].iter())
        .unwrap()
        .into_series();
    let meta = StructChunked::from_series("meta".into(), 2, [timing].iter())
        .unwrap()
        .into_series();
    let mut df = DataFrame::new(
        2,
        vec![
            Column::new("id".into(), ["p-1", "p-2"]),
            meta.into(),
            Column::new(
                "extra".into(),
                [r#"{"end_us": 7500000}"#, r#"{"end_us": 12300000}"#],
            ),
        ],
    )
    .unwrap();
    ParquetWriter::new(std::fs::File::create(&path).unwrap())
        .finish(&mut df)
        .unwrap();
    let map = ColumnMap::from_args(
        &[
            "request_id=id".into(),
            "first_sse_event_ms=meta.timing.ttft".into(),
            "total_handler_ms=extra.end_us:us".into(),
        ],
        None,
    )
    .unwrap();
    let a = analyze::run(
        &tables::shipped().unwrap(),
        &analyze::Options {
            inputs: vec![path],
            columns: map,
            ..Default::default()
        },
    )
    .and_then(|a| a.collected())
    .unwrap();
    assert_eq!(
        f64_col(&a, "first_sse_event_ms"),
        [Some(6200.0), Some(300.0)]
    );
    assert_eq!(
        f64_col(&a, "total_handler_ms"),
        [Some(7500.0), Some(12300.0)]
    );
}

/// The whole terminal output names the mapping under the input, with the schema file's
/// entries apart from the flag that replaced one.
#[test]
fn the_header_names_the_mapping() {
    insta::assert_snapshot!(ok(&[
        "analyze",
        CSV,
        "--schema",
        SCHEMA,
        "--map",
        "total_handler_ms=latency_s:s",
    ]));
}

/// JSON output gains `mapped_columns` (nothing else changes shape).
#[test]
fn json_outputs_record_the_mapping() {
    let args = with_map(&["analyze", JSONL, "--format", "json"], &JSONL_MAP);
    let v: serde_json::Value = serde_json::from_str(&ok(&strs(&args))).unwrap();
    let mapped = v["mapped_columns"].as_array().unwrap();
    assert_eq!(mapped.len(), 7);
    assert_eq!(
        mapped[1],
        serde_json::json!({"field": "total_handler_ms", "column": "latency_s", "unit": "s", "given_by": "--map"})
    );
    // Without a mapping the key is absent.
    let plain: serde_json::Value = serde_json::from_str(&ok(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(plain.get("mapped_columns").is_none());
}

/// Every command that reads logs takes the mapping and says so in its header.
#[test]
fn every_command_that_reads_logs_takes_the_mapping() {
    let line = "mapped by --schema fixtures/own_names/schema.toml: first_sse_event_ms ← ttft_ms";
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.md");
    let runs: [&[&str]; 5] = [
        &["explain", CSV, "--request-id", "own-1"],
        &[
            "explain",
            CSV,
            "--class",
            "first_output_slow",
            "--format",
            "markdown",
        ],
        &["throughput", CSV],
        &["compare", CSV, "--split", "model=gpt-4.1,gpt-4.1-mini"],
        &["report", CSV, "--out", report.to_str().unwrap()],
    ];
    for args in runs {
        let mut args = args.to_vec();
        args.extend(["--schema", SCHEMA]);
        let out = ok(&args);
        let text = if args[0] == "report" {
            std::fs::read_to_string(&report).unwrap()
        } else {
            out
        };
        assert!(text.contains(line), "{args:?}:\n{text}");
    }
}

/// A mapped field keeps the catalogue's origin: a relay's first response (r0) is not
/// subtracted from a gateway time (t0), and the relay's table classifies such a log.
#[test]
fn a_mapped_field_keeps_its_origin() {
    let map = [
        "relay_first_response_ms=ttft_ms",
        "total_handler_ms=latency_s:s",
    ];
    let args = with_map(
        &[
            "analyze",
            CSV,
            "--rules",
            "fixtures/own_names/mixed_origins.toml",
        ],
        &map,
    );
    let err = fails(&strs(&args));
    assert!(
        err.contains("subtracting time points of different origins"),
        "{err}"
    );
    let args = with_map(&["analyze", CSV], &["relay_first_response_ms=ttft_ms"]);
    let out = ok(&strs(&args));
    assert!(
        out.starts_with("tracediag ") && out.contains("rules: relay"),
        "{out}"
    );
}

/// Each mistake in a mapping: exit 2, naming the file where it concerns one, with the
/// nearest valid name.
#[test]
fn mapping_errors_say_what_was_meant() {
    let mut all = String::new();
    let cases: [(&str, &[&str]); 12] = [
        (CSV, &["--map", "first_sse_evnt_ms=ttft_ms"]),
        (CSV, &["--map", "ttft_ms=ttft_ms"]),
        (CSV, &["--map", "first_sse_event_ms"]),
        (CSV, &["--map", "first_sse_event_ms=ttft_msx"]),
        (CSV, &["--map", "total_handler_ms=latency_s:sec"]),
        (CSV, &["--map", "model=llm:s"]),
        (CSV, &["--map", "first_sse_event_ms=prompt"]),
        (
            CSV,
            &[
                "--map",
                "first_sse_event_ms=ttft_ms",
                "--map",
                "first_sse_event_ms=ttft_ms",
            ],
        ),
        (JSONL, &["--map", "total_handler_ms=latency_z:s"]),
        (JSONL, &["--map", "first_sse_event_ms=other.ttf"]),
        (
            CSV,
            &["--schema", "fixtures/own_names/bad/unknown_field.toml"],
        ),
        (
            CSV,
            &["--schema", "fixtures/own_names/bad/unknown_unit.toml"],
        ),
    ];
    for (file, extra) in cases {
        let mut args = vec!["analyze", file];
        args.extend(extra);
        all.push_str(&format!("$ {}\n{}\n", args.join(" "), fails(&args)));
    }
    for bad in ["unknown_column", "not_toml", "no_map_table"] {
        let schema = format!("fixtures/own_names/bad/{bad}.toml");
        let args = ["analyze", CSV, "--schema", &schema];
        all.push_str(&format!("$ {}\n{}\n", args.join(" "), fails(&args)));
    }
    let args = ["rules", "--map", "first_sse_event_ms=ttft_ms"];
    all.push_str(&format!("$ {}\n{}\n", args.join(" "), fails(&args)));
    insta::assert_snapshot!(all);
}

/// `rules --emit sql` reads the mapped columns under the catalogue's names, converted.
#[test]
fn emitted_sql_reads_the_mapped_columns() {
    let q = ok(&[
        "rules",
        "--emit",
        "sql",
        "--dialect",
        "duckdb",
        "--table",
        "logs",
        "--schema",
        SCHEMA,
    ]);
    for part in [
        r#"CAST("latency_s" AS DOUBLE) * 1e3 AS "total_handler_ms""#,
        r#"to_timestamp(CAST("started" AS DOUBLE)) AS "timestamp""#,
        r#"CAST("out_tok" AS BIGINT) AS "output_tokens""#,
        r#""llm" AS "model""#,
        "FROM logs) AS mapped",
    ] {
        assert!(q.contains(part), "{part}:\n{q}");
    }
    let spark = ok(&[
        "rules",
        "--emit",
        "sql",
        "--dialect",
        "spark",
        "--map",
        "first_sse_event_ms=other.timing.ttft_us:us",
    ]);
    assert!(
        spark.contains("CAST(`other`.`timing`.`ttft_us` AS DOUBLE) / 1e3 AS `first_sse_event_ms`"),
        "{spark}"
    );
}

/// `rules --emit sql --like FILE` maps the sample's columns with the user's entries first,
/// as `analyze` does: a path inside the JSON string `other` (which `--map` alone cannot
/// tell from a struct) is read as JSON text, one inside the object `usage` as a struct
/// path, and the canonical fields the sample lacks are NULL.
#[test]
fn emitted_sql_like_a_sample_reads_its_json_text_and_structs() {
    let mut args: Vec<String> = [
        "rules",
        "--emit",
        "sql",
        "--dialect",
        "duckdb",
        "--like",
        JSONL,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(with_map(&[], &JSONL_MAP));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let q = ok(&args);
    for part in [
        "json_extract_string(",
        "'$.ttft')",
        r#"FROM CAST("usage"."out" AS VARCHAR)"#,
        r#"CAST(NULL AS DOUBLE) AS "upstream_headers_ms""#,
        "--   first_sse_event_ms ← JSON string `other` → ttft",
        "FROM requests\n",
    ] {
        assert!(q.contains(part), "{part}:\n{q}");
    }
}

/// A `--like` file that cannot be a sample is exit 2 naming it: missing, a log whose
/// adapter has no SQL, with --emit toml.
#[test]
fn like_errors_name_the_file() {
    let sql = ["rules", "--emit", "sql", "--dialect", "spark", "--like"];
    fn with<'a>(sql: &[&'a str], file: &'a str) -> Vec<&'a str> {
        let mut v = sql.to_vec();
        v.push(file);
        v
    }
    let missing = fails(&with(&sql, "fixtures/own_names/no_such.parquet"));
    assert!(
        missing.starts_with("tracediag: error: fixtures/own_names/no_such.parquet: cannot read"),
        "{missing}"
    );
    let litellm = fails(&with(&sql, "fixtures/litellm/synthetic_spend_logs.jsonl"));
    assert!(
        litellm.contains("fixtures/litellm/synthetic_spend_logs.jsonl: --like: this file reads as LiteLLM spend log, whose adapter's derivations tracediag does not write in SQL"),
        "{litellm}"
    );
    let toml = fails(&["rules", "--emit", "toml", "--like", JSONL]);
    assert!(toml.contains("--like goes with --emit sql"), "{toml}");
}
