//! Azure OpenAI metric windows: each rule of `source::azure_windows` on small inline
//! exports (name families, units, nulls, the 429 rule, ratios, weighting, order), the
//! planted episodes of the generated exports in `fixtures/azure/generated/` (each shows in
//! the figure it changes, and only in its range), and the real samples in
//! `fixtures/external/azure/` (not Azure OpenAI: windows without figures).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use polars::prelude::*;
use serde_json::{json, Value};
use tracediag::source::azure::{parse_metrics, MetricValue};
use tracediag::source::azure_windows::{column_docs, windows};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

const ACCOUNT: &str =
    "/subscriptions/s/resourceGroups/g/providers/Microsoft.CognitiveServices/accounts/aoai-one";
/// 2026-01-01T00:00:00Z and the next minutes.
const T0: i64 = 1_767_225_600_000;
const MINUTE: i64 = 60_000;

fn stamp(minute: i64) -> String {
    format!("2026-01-01T00:{minute:02}:00Z")
}

/// A series: lower-cased dimension pairs, and points `(minute, [(aggregation, value)])`.
/// A point with no aggregation is written with only `timeStamp` (no data).
type Points<'a> = &'a [(i64, &'a [(&'a str, f64)])];

fn series(dims: &[(&str, &str)], points: Points) -> Value {
    let meta: Vec<Value> = dims
        .iter()
        .map(|(n, v)| json!({"name": {"value": n, "localizedValue": n}, "value": v}))
        .collect();
    let data: Vec<Value> = points
        .iter()
        .map(|(minute, aggs)| {
            let mut p = serde_json::Map::new();
            p.insert("timeStamp".into(), json!(stamp(*minute)));
            for (a, v) in aggs.iter() {
                p.insert((*a).into(), json!(v));
            }
            Value::Object(p)
        })
        .collect();
    json!({"metadatavalues": meta, "data": data})
}

fn metric(resource: &str, name: &str, unit: &str, timeseries: Vec<Value>) -> Value {
    json!({
        "id": format!("{resource}/providers/Microsoft.Insights/metrics/{name}"),
        "type": "Microsoft.Insights/metrics",
        "name": {"value": name, "localizedValue": name},
        "unit": unit,
        "timeseries": timeseries,
        "errorCode": "Success"
    })
}

fn body(metrics: Vec<Value>) -> String {
    json!({
        "cost": 0,
        "timespan": "2026-01-01T00:00:00Z/2026-01-01T01:00:00Z",
        "interval": "PT1M",
        "value": metrics,
        "namespace": "Microsoft.CognitiveServices/accounts",
        "resourceregion": "eastus"
    })
    .to_string()
}

fn values_of(bodies: &[String]) -> Vec<MetricValue> {
    bodies
        .iter()
        .flat_map(|b| parse_metrics(b, Path::new("inline.json")).unwrap().values)
        .collect()
}

fn frame(metrics: Vec<Value>) -> DataFrame {
    windows(&values_of(&[body(metrics)])).unwrap()
}

fn dep(name: &str) -> (&'static str, String) {
    ("modeldeploymentname", name.to_string())
}

/// One-deployment series shorthand.
fn on(deployment: &str, extra: &[(&str, &str)], points: Points) -> Value {
    let d = dep(deployment);
    let mut dims = vec![(d.0, d.1.as_str())];
    dims.extend_from_slice(extra);
    series(&dims, points)
}

fn f64s(df: &DataFrame, name: &str) -> Vec<Option<f64>> {
    let ca = df.column(name).unwrap().f64().unwrap().clone();
    (0..ca.len()).map(|i| ca.get(i)).collect()
}

fn texts(df: &DataFrame, name: &str) -> Vec<String> {
    let ca = df.column(name).unwrap().str().unwrap().clone();
    (0..ca.len())
        .map(|i| ca.get(i).unwrap().to_string())
        .collect()
}

fn starts(df: &DataFrame) -> Vec<i64> {
    let column = df
        .column("window_start")
        .unwrap()
        .cast(&DataType::Int64)
        .unwrap();
    let ca = column.i64().unwrap();
    (0..ca.len()).map(|i| ca.get(i).unwrap()).collect()
}

/// The one value of `column` in the row of `deployment` at `minute`.
fn at(df: &DataFrame, deployment: &str, minute: i64, column: &str) -> Option<f64> {
    let deps = texts(df, "deployment");
    let stamps = starts(df);
    let rows: Vec<usize> = (0..df.height())
        .filter(|&i| deps[i] == deployment && stamps[i] == T0 + minute * MINUTE)
        .collect();
    assert_eq!(rows.len(), 1, "{deployment} at minute {minute}: {rows:?}");
    f64s(df, column)[rows[0]]
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1.0))
}

const FIGURE_COLUMNS: [&str; 12] = [
    "ttlt_avg_ms",
    "time_to_response_avg_ms",
    "tbt_avg_ms",
    "normalized_ttft_avg_ms",
    "requests_total",
    "requests_429_total",
    "generated_tokens_total",
    "prompt_tokens_total",
    "tokens_per_request",
    "generated_tokens_per_request",
    "ptu_utilization_avg_pct",
    "ptu_utilization_max_pct",
];

// ---------------------------------------------------------------------------------------
// Inline exports: one rule each
// ---------------------------------------------------------------------------------------

#[test]
fn columns_are_the_documented_contract_in_order_and_typed() {
    let docs: Vec<&str> = column_docs().iter().map(|(n, _)| *n).collect();
    let mut expected = vec!["resource", "deployment", "window_start"];
    expected.extend(FIGURE_COLUMNS);
    assert_eq!(docs, expected);
    assert!(column_docs().iter().all(|(_, meaning)| !meaning.is_empty()));

    // Even an empty input gives the contract, with no rows.
    for df in [
        windows(&[]).unwrap(),
        frame(vec![metric(
            ACCOUNT,
            "AzureOpenAIRequests",
            "Count",
            vec![on("d", &[], &[(0, &[("total", 3.0)])])],
        )]),
    ] {
        let names: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(names, expected);
        assert_eq!(df.column("resource").unwrap().dtype(), &DataType::String);
        assert_eq!(df.column("deployment").unwrap().dtype(), &DataType::String);
        assert_eq!(
            df.column("window_start").unwrap().dtype(),
            &DataType::Datetime(TimeUnit::Milliseconds, None)
        );
        for c in FIGURE_COLUMNS {
            assert_eq!(df.column(c).unwrap().dtype(), &DataType::Float64, "{c}");
        }
    }
}

/// Every mapped metric, one point, for deployment `d`, under the names given in order:
/// TTLT, Time to Response, TBT, normalized TTFT, requests, generated, prompt, PTU.
fn all_metrics(names: [&str; 8], d: &str) -> Vec<Value> {
    let avg = |name: &str, unit: &str, v: f64| {
        metric(
            ACCOUNT,
            name,
            unit,
            vec![on(d, &[], &[(0, &[("average", v)])])],
        )
    };
    let total = |name: &str, v: f64| {
        metric(
            ACCOUNT,
            name,
            "Count",
            vec![on(d, &[], &[(0, &[("total", v)])])],
        )
    };
    vec![
        avg(names[0], "MilliSeconds", 5000.0),
        avg(names[1], "MilliSeconds", 400.0),
        avg(names[2], "MilliSeconds", 20.0),
        avg(names[3], "MilliSeconds", 0.5),
        total(names[4], 10.0),
        total(names[5], 2300.0),
        total(names[6], 8000.0),
        metric(
            ACCOUNT,
            names[7],
            "Percent",
            vec![on(d, &[], &[(0, &[("average", 61.0), ("maximum", 72.0)])])],
        ),
    ]
}

#[test]
fn both_name_families_fill_the_same_columns_without_case() {
    let mut metrics = all_metrics(
        [
            "AzureOpenAITTLTInMS",
            "AzureOpenAITimeToResponse",
            "AzureOpenAINormalizedTBTInMS",
            "AzureOpenAINormalizedTTFTInMS",
            "AzureOpenAIRequests",
            "GeneratedTokens",
            "ProcessedPromptTokens",
            "AzureOpenAIProvisionedManagedUtilizationV2",
        ],
        "old",
    );
    metrics.extend(all_metrics(
        [
            "TimeToLastByte",
            "TimeToResponse",
            "NormalizedTimeBetweenTokens",
            "NormalizedTimeToFirstToken",
            "ModelRequests",
            "OutputTokens",
            "InputTokens",
            "ProvisionedUtilization",
        ],
        "new",
    ));
    metrics.extend(all_metrics(
        [
            "azureopenaittltinms",
            "TIMETORESPONSE",
            "azureOpenAINormalizedTbtInMs",
            "normalizedtimetofirsttoken",
            "MODELREQUESTS",
            "generatedtokens",
            "INPUTTOKENS",
            "azureopenaiprovisionedmanagedutilizationv2",
        ],
        "cased",
    ));
    let df = frame(metrics);
    assert_eq!(df.height(), 3);
    assert_eq!(texts(&df, "deployment"), ["cased", "new", "old"]);
    let expected = [
        5000.0,
        400.0,
        20.0,
        0.5,
        10.0,
        f64::NAN, // no StatusCode split: checked below
        2300.0,
        8000.0,
        1030.0,
        230.0,
        61.0,
        72.0,
    ];
    for (column, want) in FIGURE_COLUMNS.iter().zip(expected) {
        let got = f64s(&df, column);
        if want.is_nan() {
            assert_eq!(got, [None, None, None], "{column}");
        } else {
            assert!(got.iter().all(|g| close(*g, want)), "{column}: {got:?}");
        }
    }
}

#[test]
fn the_deprecated_v1_utilization_and_other_metrics_make_rows_but_no_figures() {
    let df = frame(vec![
        metric(
            ACCOUNT,
            "AzureOpenAIProvisionedManagedUtilization",
            "Percent",
            vec![on("d", &[], &[(0, &[("average", 50.0)])])],
        ),
        metric(
            ACCOUNT,
            "AzureOpenAIAvailabilityRate",
            "Percent",
            vec![on("d", &[], &[(1, &[("average", 100.0)])])],
        ),
    ]);
    assert_eq!(df.height(), 2);
    for c in FIGURE_COLUMNS {
        assert_eq!(df.column(c).unwrap().null_count(), 2, "{c}");
    }
}

#[test]
fn both_families_in_one_window_count_once_preferring_the_azure_openai_names() {
    let df = frame(vec![
        metric(
            ACCOUNT,
            "AzureOpenAIRequests",
            "Count",
            vec![on("d", &[], &[(0, &[("total", 10.0)]), (1, &[])])],
        ),
        metric(
            ACCOUNT,
            "ModelRequests",
            "Count",
            vec![on(
                "d",
                &[],
                &[(0, &[("total", 12.0)]), (1, &[("total", 7.0)])],
            )],
        ),
    ]);
    assert_eq!(at(&df, "d", 0, "requests_total"), Some(10.0));
    // Where only the newer name has a point, it is used.
    assert_eq!(at(&df, "d", 1, "requests_total"), Some(7.0));
}

#[test]
fn latency_in_seconds_becomes_milliseconds_and_unknown_units_are_left_out() {
    let one = |name: &str, unit: &str, d: &str, aggs: &'static [(&'static str, f64)]| {
        metric(ACCOUNT, name, unit, vec![on(d, &[], &[(0, aggs)])])
    };
    let df = frame(vec![
        one(
            "AzureOpenAITTLTInMS",
            "Seconds",
            "s",
            &[("average", 1.5), ("count", 4.0)],
        ),
        one(
            "AzureOpenAITimeToResponse",
            "Seconds",
            "s",
            &[("average", 0.25)],
        ),
        one(
            "NormalizedTimeBetweenTokens",
            "seconds",
            "s",
            &[("average", 0.02)],
        ),
        one(
            "NormalizedTimeToFirstToken",
            "Seconds",
            "s",
            &[("average", 0.0004)],
        ),
        one(
            "TimeToLastByte",
            "MilliSeconds",
            "ms",
            &[("average", 1500.0)],
        ),
        one(
            "TimeToLastByte",
            "Unspecified",
            "unspecified",
            &[("average", 1500.0)],
        ),
        one("TimeToLastByte", "Count", "count", &[("average", 1500.0)]),
        // Percent and counts are never scaled.
        one(
            "ProvisionedUtilization",
            "Percent",
            "s",
            &[("average", 0.5)],
        ),
        one("ModelRequests", "Count", "s", &[("total", 4.0)]),
    ]);
    assert!(close(at(&df, "s", 0, "ttlt_avg_ms"), 1500.0));
    assert!(close(at(&df, "s", 0, "time_to_response_avg_ms"), 250.0));
    assert!(close(at(&df, "s", 0, "tbt_avg_ms"), 20.0));
    assert!(close(at(&df, "s", 0, "normalized_ttft_avg_ms"), 0.4));
    assert_eq!(at(&df, "s", 0, "ptu_utilization_avg_pct"), Some(0.5));
    assert_eq!(at(&df, "s", 0, "requests_total"), Some(4.0));
    assert_eq!(at(&df, "ms", 0, "ttlt_avg_ms"), Some(1500.0));
    assert_eq!(at(&df, "unspecified", 0, "ttlt_avg_ms"), Some(1500.0));
    // A latency in `Count` cannot be converted: null, not 1500 ms.
    assert_eq!(at(&df, "count", 0, "ttlt_avg_ms"), None);
}

#[test]
fn points_without_data_stay_null_and_real_zeros_stay_zero() {
    let df = frame(vec![
        metric(
            ACCOUNT,
            "AzureOpenAITTLTInMS",
            "MilliSeconds",
            vec![on(
                "d",
                &[],
                &[(0, &[("average", 900.0)]), (1, &[]), (2, &[])],
            )],
        ),
        metric(
            ACCOUNT,
            "AzureOpenAIRequests",
            "Count",
            vec![on(
                "d",
                &[],
                &[(0, &[("total", 3.0)]), (1, &[("total", 0.0)]), (2, &[])],
            )],
        ),
        metric(
            ACCOUNT,
            "GeneratedTokens",
            "Count",
            vec![on(
                "d",
                &[],
                &[(0, &[("total", 30.0)]), (1, &[("total", 0.0)])],
            )],
        ),
    ]);
    // Minute 2 has no point of any metric: no row. Minute 1 has zeros only.
    assert_eq!(df.height(), 2);
    assert_eq!(starts(&df), [T0, T0 + MINUTE]);
    assert_eq!(f64s(&df, "ttlt_avg_ms"), [Some(900.0), None]);
    assert_eq!(f64s(&df, "requests_total"), [Some(3.0), Some(0.0)]);
    assert_eq!(f64s(&df, "generated_tokens_total"), [Some(30.0), Some(0.0)]);
    assert_eq!(f64s(&df, "prompt_tokens_total"), [None, None]);
    assert_eq!(
        f64s(&df, "generated_tokens_per_request"),
        [Some(10.0), None]
    );
    // No prompt tokens: the sum is unknown, so is its ratio.
    assert_eq!(f64s(&df, "tokens_per_request"), [None, None]);
    assert_eq!(f64s(&df, "ptu_utilization_avg_pct"), [None, None]);
}

#[test]
fn requests_429_are_null_without_a_status_split_and_zero_with_one() {
    let df = frame(vec![
        metric(
            ACCOUNT,
            "AzureOpenAIRequests",
            "Count",
            vec![
                // `unsplit`: no StatusCode dimension at all.
                on("unsplit", &[], &[(0, &[("total", 50.0)])]),
                // `split`: StatusCode × StreamType; 429s only at minute 1.
                on(
                    "split",
                    &[("statuscode", "200"), ("streamtype", "Streaming")],
                    &[(0, &[("total", 40.0)]), (1, &[("total", 30.0)])],
                ),
                on(
                    "split",
                    &[("statuscode", "200"), ("streamtype", "Non-Streaming")],
                    &[(0, &[("total", 8.0)]), (1, &[("total", 6.0)])],
                ),
                on(
                    "split",
                    &[("statuscode", "429"), ("streamtype", "Streaming")],
                    &[(0, &[]), (1, &[("total", 9.0)])],
                ),
                on(
                    "split",
                    &[("statuscode", "429"), ("streamtype", "Non-Streaming")],
                    &[(0, &[]), (1, &[("total", 2.0)])],
                ),
                on(
                    "split",
                    &[("statuscode", "500"), ("streamtype", "Streaming")],
                    &[(1, &[("total", 1.0)])],
                ),
            ],
        ),
        // Minute 2 of `split` has a latency but no request point at all.
        metric(
            ACCOUNT,
            "AzureOpenAITTLTInMS",
            "MilliSeconds",
            vec![on("split", &[], &[(2, &[("average", 800.0)])])],
        ),
    ]);
    assert_eq!(at(&df, "unsplit", 0, "requests_total"), Some(50.0));
    assert_eq!(at(&df, "unsplit", 0, "requests_429_total"), None);
    assert_eq!(at(&df, "split", 0, "requests_total"), Some(48.0));
    assert_eq!(at(&df, "split", 0, "requests_429_total"), Some(0.0));
    assert_eq!(at(&df, "split", 1, "requests_total"), Some(48.0));
    assert_eq!(at(&df, "split", 1, "requests_429_total"), Some(11.0));
    assert_eq!(at(&df, "split", 2, "requests_total"), None);
    assert_eq!(at(&df, "split", 2, "requests_429_total"), None);
}

#[test]
fn tokens_per_request_divides_both_token_counts_by_all_requests() {
    let tokens = |minute: i64, requests: f64, generated: f64, prompt: f64| {
        vec![
            metric(
                ACCOUNT,
                "AzureOpenAIRequests",
                "Count",
                vec![on("d", &[], &[(minute, &[("total", requests)])])],
            ),
            metric(
                ACCOUNT,
                "GeneratedTokens",
                "Count",
                vec![on("d", &[], &[(minute, &[("total", generated)])])],
            ),
            metric(
                ACCOUNT,
                "ProcessedPromptTokens",
                "Count",
                vec![on("d", &[], &[(minute, &[("total", prompt)])])],
            ),
        ]
    };
    let mut metrics = tokens(0, 4.0, 1000.0, 3000.0);
    metrics.extend(tokens(1, 0.0, 0.0, 0.0));
    let df = windows(&values_of(
        &metrics
            .into_iter()
            .map(|m| body(vec![m]))
            .collect::<Vec<_>>(),
    ))
    .unwrap();
    assert_eq!(f64s(&df, "tokens_per_request"), [Some(1000.0), None]);
    assert_eq!(
        f64s(&df, "generated_tokens_per_request"),
        [Some(250.0), None]
    );
}

#[test]
fn split_averages_are_weighted_by_own_count_else_by_matching_requests() {
    let df = frame(vec![
        // Time to Response by StatusCode, average only: weighted by the requests of each
        // status (summed over stream type): (90 × 500 + 10 × 30) / 100 = 453.
        metric(
            ACCOUNT,
            "AzureOpenAITimeToResponse",
            "MilliSeconds",
            vec![
                on("d", &[("statuscode", "200")], &[(0, &[("average", 500.0)])]),
                on("d", &[("statuscode", "429")], &[(0, &[("average", 30.0)])]),
            ],
        ),
        metric(
            ACCOUNT,
            "AzureOpenAIRequests",
            "Count",
            vec![
                on(
                    "d",
                    &[("statuscode", "200"), ("streamtype", "Streaming")],
                    &[(0, &[("total", 60.0)])],
                ),
                on(
                    "d",
                    &[("statuscode", "200"), ("streamtype", "Non-Streaming")],
                    &[(0, &[("total", 30.0)])],
                ),
                on(
                    "d",
                    &[("statuscode", "429"), ("streamtype", "Streaming")],
                    &[(0, &[("total", 10.0)])],
                ),
            ],
        ),
        // TTLT by region with its own count: the count wins over requests (none by region
        // anyway): (1 × 1000 + 3 × 2000) / 4 = 1750.
        metric(
            ACCOUNT,
            "AzureOpenAITTLTInMS",
            "MilliSeconds",
            vec![
                on(
                    "d",
                    &[("region", "eastus")],
                    &[(0, &[("average", 1000.0), ("count", 1.0)])],
                ),
                on(
                    "d",
                    &[("region", "westus")],
                    &[(0, &[("average", 2000.0), ("count", 3.0)])],
                ),
            ],
        ),
        // TBT by region, no count and no request split by region: a plain mean (the
        // documented limitation).
        metric(
            ACCOUNT,
            "AzureOpenAINormalizedTBTInMS",
            "MilliSeconds",
            vec![
                on("d", &[("region", "eastus")], &[(0, &[("average", 10.0)])]),
                on("d", &[("region", "westus")], &[(0, &[("average", 30.0)])]),
            ],
        ),
        // PTU by stream type: average weighted by requests of that stream type
        // ((60 + 10) × 90 + 30 × 40) / 100 = 75; maximum is the largest.
        metric(
            ACCOUNT,
            "AzureOpenAIProvisionedManagedUtilizationV2",
            "Percent",
            vec![
                on(
                    "d",
                    &[("streamtype", "Streaming")],
                    &[(0, &[("average", 90.0), ("maximum", 99.0)])],
                ),
                on(
                    "d",
                    &[("streamtype", "Non-Streaming")],
                    &[(0, &[("average", 40.0), ("maximum", 55.0)])],
                ),
            ],
        ),
    ]);
    assert!(close(at(&df, "d", 0, "time_to_response_avg_ms"), 453.0));
    assert!(close(at(&df, "d", 0, "ttlt_avg_ms"), 1750.0));
    assert!(close(at(&df, "d", 0, "tbt_avg_ms"), 20.0));
    assert!(close(at(&df, "d", 0, "ptu_utilization_avg_pct"), 75.0));
    assert_eq!(at(&df, "d", 0, "ptu_utilization_max_pct"), Some(99.0));
    assert_eq!(at(&df, "d", 0, "requests_total"), Some(100.0));
    assert_eq!(at(&df, "d", 0, "requests_429_total"), Some(10.0));
}

#[test]
fn totals_sum_other_dimensions_and_an_overlapping_coarser_export_counts_once() {
    let split = metric(
        ACCOUNT,
        "AzureOpenAIRequests",
        "Count",
        vec![
            on(
                "d",
                &[("region", "eastus"), ("statuscode", "200")],
                &[(0, &[("total", 5.0)])],
            ),
            on(
                "d",
                &[("region", "westus"), ("statuscode", "200")],
                &[(0, &[("total", 7.0)])],
            ),
            on(
                "d",
                &[("region", "westus"), ("statuscode", "429")],
                &[(0, &[("total", 3.0)])],
            ),
        ],
    );
    let alone = windows(&values_of(&[body(vec![split.clone()])])).unwrap();
    assert_eq!(at(&alone, "d", 0, "requests_total"), Some(15.0));
    assert_eq!(at(&alone, "d", 0, "requests_429_total"), Some(3.0));

    // The same metric also exported unsplit, in another file: not 30.
    let unsplit = metric(
        ACCOUNT,
        "AzureOpenAIRequests",
        "Count",
        vec![on("d", &[], &[(0, &[("total", 15.0)])])],
    );
    let both = windows(&values_of(&[body(vec![split]), body(vec![unsplit])])).unwrap();
    assert_eq!(at(&both, "d", 0, "requests_total"), Some(15.0));
    // The 429 count still comes from the StatusCode split.
    assert_eq!(at(&both, "d", 0, "requests_429_total"), Some(3.0));
}

#[test]
fn other_aggregations_stand_in_only_where_they_mean_the_same() {
    let one = |name: &str, unit: &str, aggs: &'static [(&'static str, f64)]| {
        metric(ACCOUNT, name, unit, vec![on("d", &[], &[(0, aggs)])])
    };
    let df = frame(vec![
        // Requests as `count` only: each request is one sample of 1, so count = total.
        one("AzureOpenAIRequests", "Count", &[("count", 8.0)]),
        // Tokens with `count` only: a count of samples, not of tokens — null.
        one("GeneratedTokens", "Count", &[("count", 8.0)]),
        // Tokens as average and count: total = average × count.
        one(
            "ProcessedPromptTokens",
            "Count",
            &[("average", 100.0), ("count", 8.0)],
        ),
        // A latency with total and count but no average: average = total ÷ count.
        one(
            "AzureOpenAITTLTInMS",
            "MilliSeconds",
            &[("total", 8000.0), ("count", 8.0)],
        ),
        // A latency with minimum and maximum only: no average.
        one(
            "AzureOpenAITimeToResponse",
            "MilliSeconds",
            &[("minimum", 100.0), ("maximum", 900.0)],
        ),
        // Utilization without `maximum`: the maximum stays null.
        one(
            "AzureOpenAIProvisionedManagedUtilizationV2",
            "Percent",
            &[("average", 50.0)],
        ),
    ]);
    assert_eq!(at(&df, "d", 0, "requests_total"), Some(8.0));
    assert_eq!(at(&df, "d", 0, "generated_tokens_total"), None);
    assert_eq!(at(&df, "d", 0, "prompt_tokens_total"), Some(800.0));
    assert_eq!(at(&df, "d", 0, "ttlt_avg_ms"), Some(1000.0));
    assert_eq!(at(&df, "d", 0, "time_to_response_avg_ms"), None);
    assert_eq!(at(&df, "d", 0, "ptu_utilization_avg_pct"), Some(50.0));
    assert_eq!(at(&df, "d", 0, "ptu_utilization_max_pct"), None);
}

#[test]
fn a_metric_without_a_deployment_dimension_is_rowed_under_the_account_name() {
    let df = frame(vec![
        metric(
            ACCOUNT,
            "AzureOpenAIRequests",
            "Count",
            vec![series(&[], &[(0, &[("total", 20.0)])])],
        ),
        metric(
            ACCOUNT,
            "AzureOpenAIRequests",
            "Count",
            vec![on("gpt-4o", &[], &[(0, &[("total", 12.0)])])],
        ),
    ]);
    assert_eq!(texts(&df, "deployment"), ["aoai-one", "gpt-4o"]);
    assert_eq!(texts(&df, "resource"), [ACCOUNT, ACCOUNT]);
    assert_eq!(f64s(&df, "requests_total"), [Some(20.0), Some(12.0)]);
}

#[test]
fn rows_are_sorted_and_do_not_depend_on_input_order_or_repeats() {
    let other = ACCOUNT.replace("aoai-one", "aoai-two");
    let df_metrics = |resource: &str| {
        metric(
            resource,
            "AzureOpenAIRequests",
            "Count",
            vec![
                on(
                    "zeta",
                    &[],
                    &[(3, &[("total", 1.0)]), (1, &[("total", 2.0)])],
                ),
                on(
                    "alpha",
                    &[],
                    &[(2, &[("total", 3.0)]), (0, &[("total", 4.0)])],
                ),
            ],
        )
    };
    let mut values = values_of(&[body(vec![df_metrics(&other), df_metrics(ACCOUNT)])]);
    let df = windows(&values).unwrap();
    assert_eq!(df.height(), 8);
    let resources = texts(&df, "resource");
    let deployments = texts(&df, "deployment");
    let stamps = starts(&df);
    let keys: Vec<(&String, &String, i64)> = (0..df.height())
        .map(|i| (&resources[i], &deployments[i], stamps[i]))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(deployments[..4], ["alpha", "alpha", "zeta", "zeta"]);
    assert_eq!(stamps[..2], [T0, T0 + 2 * MINUTE]);

    // Reversed input, and every point given twice (overlapping exports): same frame.
    values.reverse();
    let twice: Vec<MetricValue> = values.iter().chain(values.iter()).cloned().collect();
    assert!(windows(&twice).unwrap().equals_missing(&df));
}

// ---------------------------------------------------------------------------------------
// Generated exports with planted episodes (`examples/generate_azure.rs`)
// ---------------------------------------------------------------------------------------

const CHAT: &str = "gpt-4o-chat";
const BATCH: &str = "gpt-4o-batch";
const WINDOWS: usize = 360;
/// 2026-11-02T08:17:00Z, the first window.
const GEN_START_MS: i64 = 1_793_607_420_000;

struct Episode {
    id: usize,
    name: &'static str,
    deployment: &'static str,
    first: usize,
    last: usize,
}

impl Episode {
    fn range(&self) -> std::ops::RangeInclusive<usize> {
        self.first..=self.last
    }
}

// The same ranges as `fixtures/azure/generated/EPISODES.md` (checked below).
const TOKEN_GROWTH: Episode = Episode {
    id: 1,
    name: "token_volume_growth",
    deployment: BATCH,
    first: 20,
    last: 59,
};
const STORM_429: Episode = Episode {
    id: 2,
    name: "throttling_429_storm",
    deployment: CHAT,
    first: 75,
    last: 104,
};
const PTU_PLATEAU: Episode = Episode {
    id: 3,
    name: "utilization_plateau",
    deployment: CHAT,
    first: 120,
    last: 159,
};
const TBT_LOAD: Episode = Episode {
    id: 4,
    name: "tbt_rise_under_load",
    deployment: BATCH,
    first: 175,
    last: 214,
};
const TTLT_STEP: Episode = Episode {
    id: 5,
    name: "unexplained_ttlt_step",
    deployment: CHAT,
    first: 230,
    last: 269,
};
const PROMPT_TTFT: Episode = Episode {
    id: 6,
    name: "prompt_driven_ttft_rise",
    deployment: BATCH,
    first: 285,
    last: 324,
};
const EPISODES: [&Episode; 6] = [
    &TOKEN_GROWTH,
    &STORM_429,
    &PTU_PLATEAU,
    &TBT_LOAD,
    &TTLT_STEP,
    &PROMPT_TTFT,
];
const IDLE: Episode = Episode {
    id: 0,
    name: "idle_gap (not an episode)",
    deployment: BATCH,
    first: 340,
    last: 344,
};

fn generated_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/azure/generated")
}

/// Every generated file parsed, values concatenated, windows built (once per test run).
fn generated() -> &'static DataFrame {
    static FRAME: OnceLock<DataFrame> = OnceLock::new();
    FRAME.get_or_init(|| {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(generated_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        assert_eq!(paths.len(), 16, "8 metrics × 2 name families");
        let mut values = vec![];
        for path in &paths {
            let text = std::fs::read_to_string(path).unwrap();
            let export = parse_metrics(&text, path).unwrap();
            assert!(export.errors.is_empty(), "{}", path.display());
            assert_eq!(export.intervals, ["PT1M"]);
            values.extend(export.values);
        }
        windows(&values).unwrap()
    })
}

/// `column` of `deployment`, indexed by window (0..360).
fn by_window(deployment: &str, column: &str) -> Vec<Option<f64>> {
    let df = generated();
    let deps = texts(df, "deployment");
    let stamps = starts(df);
    let values = f64s(df, column);
    let mut out = vec![None; WINDOWS];
    let mut seen = vec![false; WINDOWS];
    for i in 0..df.height() {
        if deps[i] == deployment {
            let w = ((stamps[i] - GEN_START_MS) / MINUTE) as usize;
            assert!(!seen[w], "window {w} twice");
            seen[w] = true;
            out[w] = values[i];
        }
    }
    assert!(seen.iter().all(|s| *s), "{deployment}: a window has no row");
    out
}

/// Windows of `deployment` in no episode and not idle.
fn baseline_windows(deployment: &str) -> Vec<usize> {
    (0..WINDOWS)
        .filter(|w| {
            EPISODES
                .iter()
                .chain([&&IDLE])
                .all(|e| e.deployment != deployment || !e.range().contains(w))
        })
        .collect()
}

fn median(xs: &[f64]) -> f64 {
    assert!(!xs.is_empty());
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Median of `series` over the baseline windows of `deployment`.
fn baseline(deployment: &str, series: &[Option<f64>]) -> f64 {
    let xs: Vec<f64> = baseline_windows(deployment)
        .into_iter()
        .map(|w| series[w].unwrap())
        .collect();
    median(&xs)
}

/// `series` over an episode, divided by its baseline.
fn ratios(e: &Episode, series: &[Option<f64>]) -> Vec<f64> {
    let base = baseline(e.deployment, series);
    e.range().map(|w| series[w].unwrap() / base).collect()
}

fn all_within(xs: &[f64], lo: f64, hi: f64) -> bool {
    xs.iter().all(|x| (lo..=hi).contains(x))
}

/// Prompt tokens ÷ requests, per window.
fn prompt_per_request(deployment: &str) -> Vec<Option<f64>> {
    let prompt = by_window(deployment, "prompt_tokens_total");
    let requests = by_window(deployment, "requests_total");
    prompt
        .iter()
        .zip(&requests)
        .map(|(p, r)| Some((*p)? / (*r)?))
        .collect()
}

#[test]
fn generated_episodes_table_matches_the_ranges_tested_here() {
    let md = std::fs::read_to_string(generated_dir().join("EPISODES.md")).unwrap();
    for e in EPISODES {
        let row = format!(
            "| {} | {} | {} | {} | {} |",
            e.id, e.name, e.deployment, e.first, e.last
        );
        assert!(md.contains(&row), "EPISODES.md lacks {row}");
    }
    let idle = format!(
        "| – | {} | {} | {} | {} |",
        IDLE.name, IDLE.deployment, IDLE.first, IDLE.last
    );
    assert!(md.contains(&idle), "EPISODES.md lacks {idle}");
    // The ranges are distinct.
    for (i, a) in EPISODES.iter().enumerate() {
        for b in &EPISODES[i + 1..] {
            assert!(
                a.last < b.first || b.last < a.first,
                "{} / {}",
                a.name,
                b.name
            );
        }
    }
    let bytes: u64 = std::fs::read_dir(generated_dir())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(bytes < 3_000_000, "{bytes} bytes");
}

#[test]
fn generated_exports_give_one_row_per_deployment_and_minute_from_both_families() {
    let df = generated();
    assert_eq!(df.height(), 2 * WINDOWS);
    assert_eq!(
        texts(df, "resource")[0],
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-tracediag-demo/providers/Microsoft.CognitiveServices/accounts/aoai-tracediag-demo"
    );
    let deps = texts(df, "deployment");
    assert_eq!(deps.iter().filter(|d| *d == BATCH).count(), WINDOWS);
    assert_eq!(deps.iter().filter(|d| *d == CHAT).count(), WINDOWS);
    // `gpt-4o-chat` comes only from the Azure OpenAI names and `gpt-4o-batch` only from
    // the newer ones; both fill every column in every baseline window.
    for d in [CHAT, BATCH] {
        for c in FIGURE_COLUMNS {
            let series = by_window(d, c);
            for w in baseline_windows(d) {
                assert!(series[w].is_some(), "{d} {c} window {w}");
            }
        }
    }
}

#[test]
fn generated_429s_appear_only_in_the_storm_with_requests_flat() {
    for d in [CHAT, BATCH] {
        let throttled = by_window(d, "requests_429_total");
        let requests = by_window(d, "requests_total");
        for w in 0..WINDOWS {
            let storm = STORM_429.deployment == d && STORM_429.range().contains(&w);
            match (requests[w], throttled[w]) {
                (None, t) => assert_eq!(t, None, "{d} {w}: no requests, no 429 figure"),
                (Some(r), Some(t)) if storm => {
                    assert!((0.35..=0.65).contains(&(t / r)), "{d} {w}: {t}/{r}")
                }
                // The split exists, so a window without 429s says 0, not null.
                (Some(_), t) => assert_eq!(t, Some(0.0), "{d} {w}"),
            }
        }
    }
    let requests = by_window(CHAT, "requests_total");
    let r = ratios(&STORM_429, &requests);
    assert!(all_within(&r, 0.8, 1.2), "{r:?}");
    assert!((0.93..=1.07).contains(&median(&r)));
}

#[test]
fn generated_token_growth_doubles_tokens_and_ttlt_follows_with_ttft_and_tbt_flat() {
    let e = &TOKEN_GROWTH;
    let d = e.deployment;
    let per_request = ratios(e, &by_window(d, "generated_tokens_per_request"));
    assert!(all_within(&per_request, 1.8, 2.2), "{per_request:?}");
    for c in ["time_to_response_avg_ms", "tbt_avg_ms", "requests_total"] {
        let r = ratios(e, &by_window(d, c));
        assert!(all_within(&r, 0.85, 1.15), "{c}: {r:?}");
    }
    // 900 ms + 16 ms × 600 → 900 ms + 16 ms × 1200: TTLT ×1.9.
    let ttlt = ratios(e, &by_window(d, "ttlt_avg_ms"));
    assert!((1.8..=2.0).contains(&median(&ttlt)));
}

#[test]
fn generated_utilization_plateau_is_the_only_time_at_95_percent_and_ttft_climbs() {
    let e = &PTU_PLATEAU;
    assert!(e.last - e.first + 1 >= 30);
    for d in [CHAT, BATCH] {
        let avg = by_window(d, "ptu_utilization_avg_pct");
        let max = by_window(d, "ptu_utilization_max_pct");
        for w in 0..WINDOWS {
            let inside = e.deployment == d && e.range().contains(&w);
            let a = avg[w].unwrap();
            assert_eq!(a >= 95.0, inside, "{d} {w}: {a}");
            if inside {
                assert_eq!(max[w], Some(100.0));
            }
        }
    }
    let ttr = by_window(e.deployment, "time_to_response_avg_ms");
    let base = baseline(e.deployment, &ttr);
    let mean = |ws: std::ops::RangeInclusive<usize>| {
        let n = ws.clone().count() as f64;
        ws.map(|w| ttr[w].unwrap()).sum::<f64>() / n
    };
    assert!(mean(e.first..=e.first + 4) < 1.2 * base);
    assert!(mean(e.last - 4..=e.last) > 2.2 * base);
    for c in [
        "tbt_avg_ms",
        "requests_total",
        "generated_tokens_per_request",
    ] {
        let r = ratios(e, &by_window(e.deployment, c));
        assert!(all_within(&r, 0.85, 1.15), "{c}: {r:?}");
    }
}

#[test]
fn generated_tbt_rises_sixty_percent_under_higher_request_volume() {
    let e = &TBT_LOAD;
    let tbt = ratios(e, &by_window(e.deployment, "tbt_avg_ms"));
    assert!(all_within(&tbt, 1.5, 1.7), "{tbt:?}");
    assert!((1.55..=1.65).contains(&median(&tbt)));
    let requests = ratios(e, &by_window(e.deployment, "requests_total"));
    assert!(median(&requests) >= 1.5, "{requests:?}");
    for c in ["generated_tokens_per_request", "time_to_response_avg_ms"] {
        let r = ratios(e, &by_window(e.deployment, c));
        assert!(all_within(&r, 0.85, 1.15), "{c}: {r:?}");
    }
    let ptu = by_window(e.deployment, "ptu_utilization_avg_pct");
    assert!(e.range().all(|w| (80.0..95.0).contains(&ptu[w].unwrap())));
}

#[test]
fn generated_prompt_growth_triples_prompt_tokens_and_raises_ttft() {
    let e = &PROMPT_TTFT;
    let prompt = ratios(e, &prompt_per_request(e.deployment));
    assert!(all_within(&prompt, 2.7, 3.3), "{prompt:?}");
    // 300 ms + 0.2 ms × 3000 = 900 ms → 300 + 0.2 × 9000 = 2100 ms.
    let ttr = ratios(e, &by_window(e.deployment, "time_to_response_avg_ms"));
    assert!((2.1..=2.5).contains(&median(&ttr)), "{ttr:?}");
    // Normalized by prompt tokens, the rise is gone.
    let normalized = ratios(e, &by_window(e.deployment, "normalized_ttft_avg_ms"));
    assert!(median(&normalized) < 1.05, "{normalized:?}");
    for c in [
        "tbt_avg_ms",
        "generated_tokens_per_request",
        "requests_total",
    ] {
        let r = ratios(e, &by_window(e.deployment, c));
        assert!(all_within(&r, 0.85, 1.15), "{c}: {r:?}");
    }
}

#[test]
fn generated_ttlt_formula_holds_within_5_percent_except_in_the_unexplained_step() {
    let mut checked = 0;
    for d in [CHAT, BATCH] {
        let ttlt = by_window(d, "ttlt_avg_ms");
        let ttr = by_window(d, "time_to_response_avg_ms");
        let tbt = by_window(d, "tbt_avg_ms");
        let tokens = by_window(d, "generated_tokens_per_request");
        for w in 0..WINDOWS {
            let (Some(ttlt), Some(ttr), Some(tbt), Some(tokens)) =
                (ttlt[w], ttr[w], tbt[w], tokens[w])
            else {
                assert!(IDLE.deployment == d && IDLE.range().contains(&w), "{d} {w}");
                continue;
            };
            let ratio = ttlt / (ttr + tbt * tokens);
            if TTLT_STEP.deployment == d && TTLT_STEP.range().contains(&w) {
                assert!((1.4..=1.6).contains(&ratio), "{d} {w}: {ratio}");
            } else {
                assert!((0.95..=1.05).contains(&ratio), "{d} {w}: {ratio}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * WINDOWS - (IDLE.last - IDLE.first + 1));
    // In the step, nothing the formula uses moved.
    let e = &TTLT_STEP;
    for c in [
        "time_to_response_avg_ms",
        "tbt_avg_ms",
        "generated_tokens_per_request",
        "requests_total",
    ] {
        let r = ratios(e, &by_window(e.deployment, c));
        assert!(all_within(&r, 0.85, 1.15), "{c}: {r:?}");
    }
}

#[test]
fn generated_idle_minutes_keep_their_rows_with_nulls_not_zeros() {
    let d = IDLE.deployment;
    for c in FIGURE_COLUMNS {
        let series = by_window(d, c);
        for w in IDLE.range() {
            match c {
                "ptu_utilization_avg_pct" | "ptu_utilization_max_pct" => {
                    assert_eq!(series[w], Some(0.0), "{c} {w}")
                }
                _ => assert_eq!(series[w], None, "{c} {w}"),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Real samples (not Azure OpenAI)
// ---------------------------------------------------------------------------------------

#[test]
fn real_azure_samples_give_windows_without_figures() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/external/azure");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut rows: BTreeMap<(String, String), usize> = BTreeMap::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let export = parse_metrics(&text, path).unwrap();
        let df = windows(&export.values).unwrap();
        for c in FIGURE_COLUMNS {
            assert_eq!(
                df.column(c).unwrap().null_count(),
                df.height(),
                "{}: {c}",
                path.display()
            );
        }
        // None of them is split by deployment: every row is under the resource's name.
        let resources = texts(&df, "resource");
        let deployments = texts(&df, "deployment");
        for (r, d) in resources.iter().zip(&deployments) {
            assert_eq!(Some(d.as_str()), r.rsplit('/').next(), "{}", path.display());
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for d in deployments {
            *rows.entry((name.clone(), d)).or_insert(0) += 1;
        }
    }
    // (file, deployment = last segment of the resource id) → rows: one per window with data.
    let expected: BTreeMap<(String, String), usize> = [
        (
            "azure-sdk-for-net_CanQueryMetricsAllAggregations.json",
            "pakrymmon2-logs",
            15,
        ),
        // Split by the `name` dimension, which is not a deployment.
        (
            "azure-sdk-for-net_CanQueryMetricsFilter.json",
            "pakrymmon2-logs",
            15,
        ),
        // 60 points, 45 of them without data.
        (
            "azure-sdk-for-net_CanQueryMetricsNoTimespan.json",
            "pakrymmon2-logs",
            15,
        ),
        // Three series (blobtype × tier) over the same 3 hours: 3 rows, not 9.
        (
            "grafana_7-azure-monitor-response-multi-dimension.json",
            "default",
            3,
        ),
        (
            "grafana_8-azure-monitor-response-unspecified-unit.json",
            "grafana",
            1,
        ),
        // The failed metric gives nothing; the other has one point (FULL → PT4H).
        (
            "rest-api-specs_2023-10-01_GetMetricError.json",
            "tk-cosmos-mongo",
            1,
        ),
        // getBatch: two storage accounts, 12 windows with data and 1.
        (
            "rest-api-specs_2024-02-01_MetricBatchExample.json",
            "TestStorage1",
            12,
        ),
        (
            "rest-api-specs_2024-02-01_MetricBatchExample.json",
            "TestStorage2",
            1,
        ),
    ]
    .into_iter()
    .map(|(n, d, c): (&str, &str, usize)| ((n.to_string(), d.to_string()), c))
    .collect();
    assert_eq!(rows, expected);
}
