//! Log Analytics `AzureMetrics` rows (`source::azure_logs`): the three hand-written shapes
//! in `fixtures/azure/logs/` give the same records and the same windows, the sniff routes
//! them and only them, and bad input gives typed errors that name row and column, never a
//! panic.

use std::path::{Path, PathBuf};

use polars::prelude::*;
use tracediag::source::azure::{Aggregation, MetricValue, MetricsExport};
use tracediag::source::azure_logs::{looks_like_azure_metrics_rows, parse_azure_metrics_rows};
use tracediag::source::azure_windows::windows;

const FILES: [&str; 3] = [
    "azuremetrics.csv",
    "azuremetrics_query_api.json",
    "azuremetrics_az_cli.json",
];

/// `_ResourceId` as the fixtures write it (preferred over the upper-cased `ResourceId`).
const RESOURCE: &str = "/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups/rg-llm/providers/microsoft.cognitiveservices/accounts/aoai-eastus";
/// 2026-11-29T12:59:00Z.
const T0: i64 = 1_795_957_140_000;
const MINUTE: i64 = 60_000;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

fn text(rel: &str) -> String {
    let path = fixture(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn logs(name: &str) -> String {
    text(&format!("azure/logs/{name}"))
}

fn parse(name: &str) -> MetricsExport {
    parse_azure_metrics_rows(&logs(name), Path::new(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn sorted(mut values: Vec<MetricValue>) -> Vec<MetricValue> {
    values.sort_by(|a, b| {
        (&a.metric, a.timestamp_ms, a.aggregation)
            .cmp(&(&b.metric, b.timestamp_ms, b.aggregation))
            .then_with(|| a.value.total_cmp(&b.value))
    });
    values
}

/// The figures of `fixtures/azure/logs/README.md`, sorted like [`sorted`].
fn expected() -> Vec<MetricValue> {
    use Aggregation::*;
    let value = |metric: &str, unit: &str, minute: i64, aggregation, value| MetricValue {
        resource: RESOURCE.to_string(),
        metric: metric.to_string(),
        unit: Some(unit.to_string()),
        aggregation,
        dimensions: vec![],
        timestamp_ms: T0 + minute * MINUTE,
        value,
    };
    let ttlt = |minute, aggregation, v| {
        value(
            "AzureOpenAITTLTInMS",
            "MilliSeconds",
            minute,
            aggregation,
            v,
        )
    };
    let requests =
        |minute, aggregation, v| value("AzureOpenAIRequests", "Count", minute, aggregation, v);
    sorted(vec![
        ttlt(0, Total, 25200.0),
        ttlt(0, Count, 12.0),
        ttlt(0, Maximum, 3900.0),
        ttlt(0, Minimum, 1200.0),
        ttlt(0, Average, 2100.0),
        ttlt(1, Total, 18002.0),
        ttlt(1, Count, 8.0),
        ttlt(1, Maximum, 4100.75),
        ttlt(1, Minimum, 850.5),
        ttlt(1, Average, 2250.25),
        // 12:59 has empty Maximum and Minimum cells: no record, not a zero.
        requests(0, Total, 12.0),
        requests(0, Count, 12.0),
        requests(0, Average, 1.0),
        requests(1, Total, 8.0),
        requests(1, Count, 8.0),
        requests(1, Maximum, 1.0),
        requests(1, Minimum, 1.0),
        requests(1, Average, 1.0),
        requests(2, Total, 3.0),
        requests(2, Count, 3.0),
        requests(2, Maximum, 1.0),
        requests(2, Minimum, 1.0),
        requests(2, Average, 1.0),
    ])
}

/// The message of a failed parse (the test fails if the parse succeeds).
fn error_of(text: &str, name: &str) -> String {
    match parse_azure_metrics_rows(text, Path::new(name)) {
        Ok(export) => panic!(
            "{name}: expected an error, got {} values",
            export.values.len()
        ),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "expected {part:?} in the message: {message}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The three shapes
// ---------------------------------------------------------------------------------------

#[test]
fn the_three_shapes_give_the_written_values() {
    let expected = expected();
    for name in FILES {
        let export = parse(name);
        assert_eq!(sorted(export.values), expected, "{name}");
        assert_eq!(export.intervals, ["PT1M"], "{name}");
        assert!(export.errors.is_empty(), "{name}");
        assert!(export.timespans.is_empty(), "{name}");
    }
}

#[test]
fn records_come_in_row_then_aggregation_order() {
    // Row 1 of every fixture is the 12:59 TTLT row; its five aggregations come first, in
    // the order `Aggregation::ALL` gives, whatever the column order of the file.
    for name in FILES {
        let values = parse(name).values;
        let first: Vec<Aggregation> = values.iter().take(5).map(|v| v.aggregation).collect();
        assert_eq!(first, Aggregation::ALL, "{name}");
        assert!(values[..5]
            .iter()
            .all(|v| v.metric == "AzureOpenAITTLTInMS" && v.timestamp_ms == T0));
    }
}

#[test]
fn windows_of_each_shape_keep_the_missing_minute_null() {
    for name in FILES {
        let df = windows(&parse(name).values).unwrap();
        assert_eq!(df.height(), 3, "{name}: {df}");
        let strings = |column: &str| -> Vec<Option<String>> {
            let ca = df.column(column).unwrap().str().unwrap().clone();
            (0..ca.len())
                .map(|i| ca.get(i).map(str::to_string))
                .collect()
        };
        let floats = |column: &str| -> Vec<Option<f64>> {
            let ca = df.column(column).unwrap().f64().unwrap().clone();
            (0..ca.len()).map(|i| ca.get(i)).collect()
        };
        assert_eq!(
            strings("resource"),
            vec![Some(RESOURCE.to_string()); 3],
            "{name}"
        );
        // No dimensions in the table: rows go under the account name.
        assert_eq!(
            strings("deployment"),
            vec![Some("aoai-eastus".to_string()); 3],
            "{name}"
        );
        let starts = df
            .column("window_start")
            .unwrap()
            .cast(&DataType::Int64)
            .unwrap();
        let starts = starts.i64().unwrap();
        let starts: Vec<Option<i64>> = (0..starts.len()).map(|i| starts.get(i)).collect();
        assert_eq!(
            starts,
            [Some(T0), Some(T0 + MINUTE), Some(T0 + 2 * MINUTE)],
            "{name}"
        );
        assert_eq!(
            floats("ttlt_avg_ms"),
            [Some(2100.0), Some(2250.25), None],
            "{name}"
        );
        assert_eq!(
            floats("requests_total"),
            [Some(12.0), Some(8.0), Some(3.0)],
            "{name}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Sniff
// ---------------------------------------------------------------------------------------

#[test]
fn sniff_accepts_the_three_shapes() {
    for name in FILES {
        assert!(looks_like_azure_metrics_rows(&logs(name)), "{name}");
    }
}

#[test]
fn sniff_rejects_a_gateway_csv_and_a_metrics_rest_response() {
    let gateway = text("generated/gateway.csv");
    let header = gateway.lines().next().unwrap();
    assert!(!looks_like_azure_metrics_rows(header));
    assert!(!looks_like_azure_metrics_rows(&gateway));
    let rest = text("external/azure/grafana_8-azure-monitor-response-unspecified-unit.json");
    assert!(!looks_like_azure_metrics_rows(&rest));
}

#[test]
fn sniff_reads_only_the_header_or_column_list() {
    // A file cut right after its header or first row keys still sniffs: only they count.
    assert!(looks_like_azure_metrics_rows(
        "\u{feff}\"TimeGenerated [UTC]\",MetricName"
    ));
    assert!(looks_like_azure_metrics_rows(
        "timegenerated,METRICNAME,Average\r\n\"1/"
    ));
    assert!(looks_like_azure_metrics_rows(
        r#"{"tables":[{"name":"PrimaryResult","columns":[{"name":"TimeGenerated","type":"datetime"},{"name":"MetricName","type":"string"}],"rows":[["#
    ));
    assert!(looks_like_azure_metrics_rows(
        r#"[{"MetricName":"AzureOpenAIRequests","TimeGenerated":"2026-"#
    ));
    // The query API's tables must list both columns; an az CLI row must have both keys.
    assert!(!looks_like_azure_metrics_rows(
        r#"{"tables":[{"name":"PrimaryResult","columns":[{"name":"TimeGenerated","type":"datetime"}],"rows":[]}]}"#
    ));
    assert!(!looks_like_azure_metrics_rows(
        r#"[{"TimeGenerated":"x","count_":"57"}]"#
    ));
    assert!(!looks_like_azure_metrics_rows("[]"));
    assert!(!looks_like_azure_metrics_rows(""));
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

#[test]
fn a_non_number_in_average_names_row_and_column() {
    // CSV: data row 2 is line 3 (the header is line 1).
    let csv = logs("azuremetrics.csv").replacen(",1,PT1M,Count", ",n/a,PT1M,Count", 1);
    let message = error_of(&csv, "bad.csv");
    assert_mentions(
        &message,
        &["bad.csv", "row 2 (line 3)", "column `Average`", "\"n/a\""],
    );

    let query = logs("azuremetrics_query_api.json").replacen("2250.25", "\"fast\"", 1);
    let message = error_of(&query, "bad_query.json");
    assert_mentions(
        &message,
        &[
            "bad_query.json",
            "table `PrimaryResult` row 3",
            "tables[0].rows[2]",
            "column `Average`",
            "\"fast\"",
        ],
    );

    let cli = logs("azuremetrics_az_cli.json").replacen("\"2250.25\"", "\"2,250.25\"", 1);
    let message = error_of(&cli, "bad_cli.json");
    assert_mentions(
        &message,
        &["bad_cli.json", "row 3", "column `Average`", "\"2,250.25\""],
    );

    let boolean = logs("azuremetrics_query_api.json").replacen("2250.25", "true", 1);
    assert_mentions(
        &error_of(&boolean, "bool.json"),
        &[
            "row 3",
            "column `Average`",
            "expected a number",
            "the boolean true",
        ],
    );
}

#[test]
fn a_csv_without_metricname_is_not_sniffed_and_not_read() {
    let csv = logs("azuremetrics.csv").replacen("MetricName", "Name", 1);
    assert!(!looks_like_azure_metrics_rows(&csv));
    assert_mentions(
        &error_of(&csv, "no_metric.csv"),
        &["no_metric.csv", "no `MetricName` column", "`Name`"],
    );
}

#[test]
fn an_empty_file_is_an_error() {
    for empty in ["", "\u{feff}", " \r\n\r\n"] {
        assert_mentions(
            &error_of(empty, "empty.csv"),
            &["empty.csv", "the file is empty"],
        );
    }
}

#[test]
fn malformed_rows_are_typed_errors() {
    let csv = |body: &str| format!("TimeGenerated,MetricName,Average\r\n{body}");
    assert_mentions(
        &error_of(&csv("2026-11-29T12:59:00Z,,5\r\n"), "a.csv"),
        &[
            "row 1 (line 2)",
            "column `MetricName`",
            "expected a metric name",
        ],
    );
    assert_mentions(
        &error_of(&csv("\r\nsoon,AzureOpenAIRequests,5\r\n"), "a.csv"),
        &["row 2 (line 3)", "column `TimeGenerated`", "\"soon\""],
    );
    // A line end inside quotes belongs to the field: the next row starts a line later.
    assert_mentions(
        &error_of(
            &csv("2026-11-29T12:59:00Z,\"Azure\r\nOpenAI\",1\r\n2026-11-29T13:00:00Z,X,fast\r\n"),
            "a.csv",
        ),
        &["row 2 (line 4)", "column `Average`", "\"fast\""],
    );
    assert_mentions(
        &error_of(
            &csv("2026-11-29T12:59:00Z,AzureOpenAIRequests,5,6\r\n"),
            "a.csv",
        ),
        &["row 1 (line 2)", "4 fields, but the header has 3"],
    );
    assert_mentions(
        &error_of(&csv("2026-11-29T12:59:00Z,\"Azure\r\nOpenAI"), "a.csv"),
        &[
            "record starting at line 2",
            "quoted field that is not closed",
        ],
    );
    assert_mentions(
        &error_of(
            "\"TimeGenerated [Local Time]\",MetricName,Average\r\n\"11/29/2026, 1:00:00.000 PM\",X,1\r\n",
            "local.csv",
        ),
        &["`TimeGenerated [Local Time]`", "not UTC"],
    );
    assert_mentions(
        &error_of(
            r#"{"tables":[{"name":"t","columns":[{"name":"Average"}],"rows":[]}]}"#,
            "q.json",
        ),
        &[
            "no table has both `TimeGenerated` and `MetricName`",
            "`Average`",
        ],
    );
    assert_mentions(
        &error_of(
            r#"{"tables":[{"name":"t","columns":[{"name":"TimeGenerated"},{"name":"MetricName"}],"rows":[["2026-11-29T12:59:00Z"]]}]}"#,
            "q.json",
        ),
        &["table `t` row 1", "1 cells, but the table has 2 columns"],
    );
    assert_mentions(
        &error_of(
            &text("external/azure/grafana_8-azure-monitor-response-unspecified-unit.json"),
            "rest.json",
        ),
        &["expected Log Analytics AzureMetrics rows", "cost"],
    );
    assert_mentions(
        &error_of(
            r#"[{"MetricName": "AzureOpenAIRequests", "Total": "1"}]"#,
            "a.json",
        ),
        &[
            "row 1 ([0])",
            "no `TimeGenerated` key",
            "`MetricName`, `Total`",
        ],
    );
    assert_mentions(
        &error_of("[1, 2]", "a.json"),
        &["row 1 ([0])", "expected a row object"],
    );
    assert_mentions(
        &error_of("{\"tables\": [", "a.json"),
        &["not valid JSON at line 1"],
    );
}

#[test]
fn rows_without_data_give_no_values() {
    // A blank CSV line, a row of nulls and an az CLI row of "" are no rows; a row whose
    // aggregations are all empty has a time and metric but gives no value (never a 0).
    let csv = "TimeGenerated,MetricName,Average,Total\r\n\r\n2026-11-29T12:59:00Z,AzureOpenAIRequests,,\r\n";
    assert!(parse_azure_metrics_rows(csv, Path::new("a.csv"))
        .unwrap()
        .values
        .is_empty());
    let query = r#"{"tables":[{"name":"t","columns":[{"name":"TimeGenerated"},{"name":"MetricName"},{"name":"Total"}],"rows":[[null,null,null],["2026-11-29T12:59:00Z","AzureOpenAIRequests","NaN"]]}]}"#;
    assert!(parse_azure_metrics_rows(query, Path::new("q.json"))
        .unwrap()
        .values
        .is_empty());
    let cli = r#"[{"TimeGenerated":"","MetricName":"","Total":"","TableName":"PrimaryResult"}]"#;
    assert!(parse_azure_metrics_rows(cli, Path::new("c.json"))
        .unwrap()
        .values
        .is_empty());
    // A header-only CSV and an empty az CLI result are empty exports, not errors.
    let export =
        parse_azure_metrics_rows("TimeGenerated,MetricName\r\n", Path::new("h.csv")).unwrap();
    assert_eq!(export, MetricsExport::default());
    assert_eq!(
        parse_azure_metrics_rows("[]", Path::new("e.json")).unwrap(),
        MetricsExport::default()
    );
}

#[test]
fn resource_falls_back_from_underscore_resourceid() {
    let csv = "TimeGenerated,ResourceId,_ResourceId,Resource,MetricName,Total\r\n\
               2026-11-29T12:59:00Z,/A/ACCOUNTS/ONE,,ONE,AzureOpenAIRequests,1\r\n\
               2026-11-29T12:59:00Z,,,TWO,AzureOpenAIRequests,2\r\n";
    let values = parse_azure_metrics_rows(csv, Path::new("r.csv"))
        .unwrap()
        .values;
    let resources: Vec<&str> = values.iter().map(|v| v.resource.as_str()).collect();
    assert_eq!(resources, ["/A/ACCOUNTS/ONE", "TWO"]);
    // The AOAI monitoring doc's example query projects no resource column at all.
    let csv = "TimeGenerated,MetricName,Total\r\n2026-11-29T12:59:00Z,AzureOpenAIRequests,1\r\n";
    let values = parse_azure_metrics_rows(csv, Path::new("r.csv"))
        .unwrap()
        .values;
    assert_eq!(values[0].resource, "");
    assert_eq!(values[0].unit, None);
}

#[test]
fn truncated_copies_never_panic() {
    for name in FILES {
        let full = logs(name);
        for end in (0..=full.len()).filter(|&end| full.is_char_boundary(end)) {
            let prefix = &full[..end];
            let _ = looks_like_azure_metrics_rows(prefix);
            let _ = parse_azure_metrics_rows(prefix, Path::new(name));
        }
    }
}
