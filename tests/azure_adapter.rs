//! Azure Monitor metrics JSON: every real sample in `fixtures/external/azure/` parses to the
//! figures read off the file by hand; points without data give no value; the old CLI
//! style gives the same values as the wire style; bad input is an error that says what
//! is wrong, never a panic.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use tracediag::source::azure::*;
use tracediag::Error;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/external/azure")
        .join(name)
}

fn parse_sample(name: &str) -> MetricsExport {
    let path = sample(name);
    let text = std::fs::read_to_string(&path).unwrap();
    parse_metrics(&text, &path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn parse_inline(text: &str) -> tracediag::Result<MetricsExport> {
    parse_metrics(text, Path::new("inline.json"))
}

fn error_of(text: &str) -> String {
    match parse_inline(text) {
        Ok(m) => panic!("expected an error, parsed {} values", m.values.len()),
        Err(e @ Error::Input { .. }) => e.to_string(),
        Err(e) => panic!("expected an input error, got {e:?}"),
    }
}

fn distinct_timestamps(m: &MetricsExport) -> usize {
    m.values
        .iter()
        .map(|v| v.timestamp_ms)
        .collect::<BTreeSet<_>>()
        .len()
}

fn find<'a>(
    m: &'a MetricsExport,
    metric: &str,
    aggregation: Aggregation,
    timestamp_ms: i64,
) -> Vec<&'a MetricValue> {
    m.values
        .iter()
        .filter(|v| {
            v.metric == metric && v.aggregation == aggregation && v.timestamp_ms == timestamp_ms
        })
        .collect()
}

fn column_names(df: &DataFrame) -> Vec<String> {
    df.get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect()
}

fn str_column(df: &DataFrame, name: &str) -> Vec<Option<String>> {
    let ca = df.column(name).unwrap().str().unwrap().clone();
    (0..ca.len())
        .map(|i| ca.get(i).map(str::to_string))
        .collect()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const COWS_WORKSPACE: &str = "/subscriptions/faa080af-c1d8-40ad-9cce-e1a450ca5b57/resourceGroups/rg-pakrymmon2/providers/Microsoft.OperationalInsights/workspaces/pakrymmon2-logs";

// 2021-04-29T17:30:00Z etc., computed outside chrono.
const T_17_30: i64 = 1_619_717_400_000;
const T_17_36: i64 = 1_619_717_760_000;
const T_17_44: i64 = 1_619_718_240_000;
const MINUTE: i64 = 60_000;

// ---------------------------------------------------------------------------------------
// Real files
// ---------------------------------------------------------------------------------------

#[test]
fn sdk_recording_no_timespan_keeps_only_the_15_points_with_data() {
    // 60 one-minute points 16:51..17:50; only 17:30..17:44 carry `average`.
    let m = parse_sample("azure-sdk-for-net_CanQueryMetricsNoTimespan.json");
    assert_eq!(m.values.len(), 15);
    assert_eq!(distinct_timestamps(&m), 15);
    assert!(m.errors.is_empty());
    assert!(m
        .values
        .iter()
        .all(|v| v.aggregation == Aggregation::Average));
    let stamps: Vec<i64> = m.values.iter().map(|v| v.timestamp_ms).collect();
    let expected: Vec<i64> = (0..15).map(|i| T_17_30 + i * MINUTE).collect();
    assert_eq!(
        stamps, expected,
        "16:51..17:29 and 17:45..17:50 have no data"
    );
    // The first point with data is a real zero, kept as a value.
    assert_eq!(m.values[0].value, 0.0);
    let at_17_36 = find(&m, "CowsHappiness", Aggregation::Average, T_17_36);
    assert_eq!(at_17_36.len(), 1);
    assert_eq!(at_17_36[0].value, 25.714285714285715);
    let v = &m.values[0];
    assert_eq!(v.resource, COWS_WORKSPACE);
    assert_eq!(v.metric, "CowsHappiness");
    assert_eq!(v.unit.as_deref(), Some("Unspecified"));
    assert!(v.dimensions.is_empty());
    // The service chose the span (last hour) and grain itself.
    assert_eq!(m.intervals, strs(&["PT1M"]));
    assert_eq!(
        m.timespans,
        strs(&["2021-04-29T16:51:40Z/2021-04-29T17:51:40Z"])
    );
}

#[test]
fn sdk_recording_all_aggregations_gives_five_values_per_point() {
    let m = parse_sample("azure-sdk-for-net_CanQueryMetricsAllAggregations.json");
    assert_eq!(m.values.len(), 75);
    assert_eq!(distinct_timestamps(&m), 15);
    for aggregation in Aggregation::ALL {
        assert_eq!(
            m.values
                .iter()
                .filter(|v| v.aggregation == aggregation)
                .count(),
            15,
            "{aggregation}"
        );
    }
    // 17:36: total 360, count 14, average 25.714…, minimum 30 (> average), maximum 120.
    let at = |a| find(&m, "CowsHappiness", a, T_17_36)[0].value;
    assert_eq!(at(Aggregation::Total), 360.0);
    assert_eq!(at(Aggregation::Count), 14.0);
    assert_eq!(at(Aggregation::Average), 25.714285714285715);
    assert_eq!(at(Aggregation::Minimum), 30.0);
    assert_eq!(at(Aggregation::Maximum), 120.0);
    // 17:30 is all zeros except count 2: zeros are values, not gaps.
    assert_eq!(
        find(&m, "CowsHappiness", Aggregation::Total, T_17_30)[0].value,
        0.0
    );
    assert_eq!(
        find(&m, "CowsHappiness", Aggregation::Count, T_17_30)[0].value,
        2.0
    );
    assert_eq!(
        m.timespans,
        strs(&["2021-04-29T17:30:00Z/2021-04-29T17:45:00Z"])
    );
}

#[test]
fn sdk_recording_filter_lowercases_the_dimension_name_and_keeps_the_value() {
    // `$filter=Name eq 'Guinness'`, `aggregation=Count`.
    let m = parse_sample("azure-sdk-for-net_CanQueryMetricsFilter.json");
    assert_eq!(m.values.len(), 15);
    assert_eq!(distinct_timestamps(&m), 15);
    assert!(m.values.iter().all(|v| v.aggregation == Aggregation::Count));
    assert!(m
        .values
        .iter()
        .all(|v| v.dimensions == vec![("name".to_string(), "Guinness".to_string())]));
    assert_eq!(
        find(&m, "CowsHappiness", Aggregation::Count, T_17_30)[0].value,
        1.0
    );
    assert_eq!(
        find(&m, "CowsHappiness", Aggregation::Count, T_17_44)[0].value,
        15.0
    );
    let sum: f64 = m.values.iter().map(|v| v.value).sum();
    assert_eq!(sum, 120.0);
}

#[test]
fn grafana_multi_dimension_gives_three_series_at_58_past() {
    let m = parse_sample("grafana_7-azure-monitor-response-multi-dimension.json");
    assert_eq!(m.values.len(), 9);
    assert_eq!(distinct_timestamps(&m), 3);
    assert_eq!(m.intervals, strs(&["PT1H"]));
    // Buckets are aligned to the query start (09:58), not to the hour.
    let first = m.values.iter().map(|v| v.timestamp_ms).min().unwrap();
    assert_eq!(first, 1_593_511_080_000); // 2020-06-30T09:58:00Z
    let names: BTreeSet<&str> = m
        .values
        .iter()
        .flat_map(|v| v.dimensions.iter().map(|(n, _)| n.as_str()))
        .collect();
    assert_eq!(names, BTreeSet::from(["blobtype", "tier"]));
    let page_blob: Vec<&MetricValue> = m
        .values
        .iter()
        .filter(|v| {
            v.dimensions
                == vec![
                    ("blobtype".to_string(), "PageBlob".to_string()),
                    ("tier".to_string(), "Standard".to_string()),
                ]
        })
        .collect();
    assert_eq!(page_blob.len(), 3);
    assert!(page_blob.iter().all(|v| v.value == 675530.0));
    assert_eq!(
        m.values[0].resource,
        "/subscriptions/12345678-aaaa-bbbb-cccc-123456789abc/resourceGroups/grafanatest/providers/Microsoft.Storage/storageAccounts/testblobaccount/blobServices/default"
    );
    assert_eq!(m.values[0].metric, "BlobCapacity");
    assert_eq!(m.values[0].unit.as_deref(), Some("Bytes"));
}

#[test]
fn grafana_multi_dimension_frame_is_long_sorted_and_typed() {
    let m = parse_sample("grafana_7-azure-monitor-response-multi-dimension.json");
    let df = to_frame(&m.values).unwrap();
    assert_eq!(
        column_names(&df),
        [
            "resource",
            "metric",
            "unit",
            "aggregation",
            "blobtype",
            "tier",
            "timestamp",
            "value"
        ]
    );
    assert_eq!(df.height(), 9);
    assert_eq!(
        df.column("timestamp").unwrap().dtype(),
        &DataType::Datetime(TimeUnit::Milliseconds, None)
    );
    assert_eq!(df.column("value").unwrap().dtype(), &DataType::Float64);
    // Sorted by dimension values: "Azure Data Lake Storage" < "BlockBlob" < "PageBlob".
    let order: Vec<String> = str_column(&df, "blobtype")
        .into_iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(
        order,
        [
            "Azure Data Lake Storage",
            "Azure Data Lake Storage",
            "Azure Data Lake Storage",
            "BlockBlob",
            "BlockBlob",
            "BlockBlob",
            "PageBlob",
            "PageBlob",
            "PageBlob"
        ]
    );
    let ts = df
        .column("timestamp")
        .unwrap()
        .cast(&DataType::Int64)
        .unwrap();
    let ts: Vec<i64> = ts.i64().unwrap().into_no_null_iter().collect();
    assert_eq!(
        &ts[..3],
        [1_593_511_080_000, 1_593_514_680_000, 1_593_518_280_000]
    );
    let values: Vec<f64> = df
        .column("value")
        .unwrap()
        .f64()
        .unwrap()
        .into_no_null_iter()
        .collect();
    assert_eq!(values[8], 675530.0);
    // Sorting is deterministic whatever the input order.
    let mut reversed = m.values.clone();
    reversed.reverse();
    assert!(to_frame(&reversed).unwrap().equals_missing(&df));
}

#[test]
fn grafana_unspecified_unit_reads_escaped_slashes_and_a_spaced_metric_name() {
    let m = parse_sample("grafana_8-azure-monitor-response-unspecified-unit.json");
    assert_eq!(m.values.len(), 1);
    assert_eq!(distinct_timestamps(&m), 1);
    let v = &m.values[0];
    assert_eq!(
        v.resource,
        "/subscriptions/xxx/resourceGroups/grafanastaging/providers/Microsoft.Compute/virtualMachines/grafana"
    );
    assert_eq!(v.metric, "Percentage CPU");
    assert_eq!(v.unit.as_deref(), Some("Unspecified"));
    assert_eq!(v.aggregation, Aggregation::Average);
    assert_eq!(v.value, 2.0875);
    assert_eq!(v.timestamp_ms, 1_549_620_780_000); // 2019-02-08T10:13:00Z
    assert!(v.dimensions.is_empty());
    assert!(m.errors.is_empty(), "no errorCode means no error");
    assert_eq!(
        m.timespans,
        strs(&["2019-02-08T10:13:50Z/2019-02-08T16:13:50Z"])
    );
}

#[test]
fn spec_example_get_metric_error_reports_one_metric_and_reads_the_other() {
    let m = parse_sample("rest-api-specs_2023-10-01_GetMetricError.json");
    let resource = "/subscriptions/ac41e21f-afd6-4a79-8070-f01eba278f97/resourceGroups/todking/providers/Microsoft.DocumentDb/databaseAccounts/tk-cosmos-mongo";
    assert_eq!(
        m.errors,
        vec![MetricError {
            resource: resource.to_string(),
            metric: "MongoRequestsCount".to_string(),
            code: "InvalidSamplingType".to_string(),
            message: "Sampling type is not found. Metric:CosmosDBCustomer,AzureMonitor,MongoRequests, SamplingType:NullableAverage.".to_string(),
        }]
    );
    assert_eq!(
        m.values,
        vec![MetricValue {
            resource: resource.to_string(),
            metric: "MongoRequests".to_string(),
            unit: Some("Count".to_string()),
            aggregation: Aggregation::Average,
            dimensions: vec![],
            timestamp_ms: 1_623_102_660_000, // 2021-06-07T21:51:00Z
            value: 0.0,
        }]
    );
    // Requested `interval=FULL`, the response says PT4H: the response wins.
    assert_eq!(m.intervals, strs(&["PT4H"]));
    assert_eq!(interval_ms(&m.intervals[0]), Some(4 * 3_600_000));
    assert_eq!(
        m.timespans,
        strs(&["2021-06-07T21:51:00Z/2021-06-08T01:51:00Z"])
    );
}

#[test]
fn spec_example_get_batch_gives_both_resources() {
    let m = parse_sample("rest-api-specs_2024-02-01_MetricBatchExample.json");
    let storage = |n: u8| {
        format!("/subscriptions/12345678-abcd-1234-abcd-123456789abc/resourceGroups/TestGroup/providers/Microsoft.Storage/storageAccounts/TestStorage{n}")
    };
    // 72 points, 44 carry only `timeStamp`; 28 × (average, minimum, maximum) = 84.
    assert_eq!(m.values.len(), 84);
    assert_eq!(distinct_timestamps(&m), 12);
    assert!(m.errors.is_empty());
    let per = |r: &str| m.values.iter().filter(|v| v.resource == r).count();
    assert_eq!(per(&storage(1)), 78);
    assert_eq!(per(&storage(2)), 6);
    let aggregations: BTreeSet<Aggregation> = m.values.iter().map(|v| v.aggregation).collect();
    assert_eq!(
        aggregations,
        BTreeSet::from([
            Aggregation::Average,
            Aggregation::Minimum,
            Aggregation::Maximum
        ])
    );
    let names: BTreeSet<&str> = m
        .values
        .iter()
        .flat_map(|v| v.dimensions.iter().map(|(n, _)| n.as_str()))
        .collect();
    assert_eq!(names, BTreeSet::from(["apiname", "authentication"]));

    // TestStorage2 has data at 22:00 only: Ingress 330, Egress 880.
    let t_22_00 = 1_675_288_800_000; // 2023-02-01T22:00:00Z
    let at = |resource: &str, metric: &str| -> Vec<(i64, f64)> {
        m.values
            .iter()
            .filter(|v| {
                v.resource == resource
                    && v.metric == metric
                    && v.aggregation == Aggregation::Average
            })
            .map(|v| (v.timestamp_ms, v.value))
            .collect()
    };
    assert_eq!(at(&storage(2), "Ingress"), vec![(t_22_00, 330.0)]);
    assert_eq!(at(&storage(2), "Egress"), vec![(t_22_00, 880.0)]);
    // The GetBlobServiceProperties/AccountKey series of TestStorage1 Ingress: 12 points,
    // one with data.
    let sparse: Vec<&MetricValue> = m
        .values
        .iter()
        .filter(|v| {
            v.resource == storage(1)
                && v.metric == "Ingress"
                && v.dimensions
                    == vec![
                        (
                            "apiname".to_string(),
                            "GetBlobServiceProperties".to_string(),
                        ),
                        ("authentication".to_string(), "AccountKey".to_string()),
                    ]
        })
        .collect();
    assert_eq!(sparse.len(), 3);
    assert!(sparse
        .iter()
        .all(|v| v.timestamp_ms == t_22_00 && v.value == 342.0));
    // 20:15 of the GetBlob/SAS series: average 438.07…, maximum 583.
    let t_20_15 = 1_675_282_500_000;
    let ingress_20_15: Vec<(Aggregation, f64)> = m
        .values
        .iter()
        .filter(|v| v.resource == storage(1) && v.metric == "Ingress" && v.timestamp_ms == t_20_15)
        .map(|v| (v.aggregation, v.value))
        .collect();
    assert_eq!(
        ingress_20_15,
        vec![
            (Aggregation::Average, 438.0735294117647),
            (Aggregation::Minimum, 437.0),
            (Aggregation::Maximum, 583.0)
        ]
    );
    assert_eq!(m.intervals, strs(&["PT15M"]));
    assert_eq!(
        m.timespans,
        strs(&["2023-02-01T20:00:00.123Z/2023-02-01T23:00:00.345Z"])
    );

    let df = to_frame(&m.values).unwrap();
    assert_eq!(df.height(), 84);
    assert_eq!(
        column_names(&df),
        [
            "resource",
            "metric",
            "unit",
            "aggregation",
            "apiname",
            "authentication",
            "timestamp",
            "value"
        ]
    );
}

#[test]
fn every_real_json_sample_is_covered_above() {
    // A new sample file must get its own test with figures.
    let mut names: Vec<String> = std::fs::read_dir(sample(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        strs(&[
            "azure-sdk-for-net_CanQueryMetricsAllAggregations.json",
            "azure-sdk-for-net_CanQueryMetricsFilter.json",
            "azure-sdk-for-net_CanQueryMetricsNoTimespan.json",
            "grafana_7-azure-monitor-response-multi-dimension.json",
            "grafana_8-azure-monitor-response-unspecified-unit.json",
            "rest-api-specs_2023-10-01_GetMetricError.json",
            "rest-api-specs_2024-02-01_MetricBatchExample.json",
        ])
    );
}

// ---------------------------------------------------------------------------------------
// Inline shapes
// ---------------------------------------------------------------------------------------

const REST_BODY: &str = r#"{
  "cost": 59,
  "timespan": "2024-10-01T00:00:00Z/2024-10-01T00:03:00Z",
  "interval": "PT1M",
  "value": [{
    "id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.CognitiveServices/accounts/aoai/providers/Microsoft.Insights/metrics/TimeToResponse",
    "type": "Microsoft.Insights/metrics",
    "name": {"value": "TimeToResponse", "localizedValue": "Time to Response"},
    "unit": "MilliSeconds",
    "timeseries": [{
      "metadatavalues": [{"name": {"value": "modeldeploymentname", "localizedValue": "modeldeploymentname"}, "value": "gpt-4o-Prod"}],
      "data": [
        {"timeStamp": "2024-10-01T00:00:00Z", "average": 812.5, "maximum": 1900},
        {"timeStamp": "2024-10-01T00:01:00Z"},
        {"timeStamp": "2024-10-01T00:02:00Z", "average": 0, "maximum": 0}
      ]
    }],
    "errorCode": "Success"
  }],
  "namespace": "Microsoft.CognitiveServices/accounts",
  "resourceregion": "eastus"
}"#;

/// The same data as `az monitor metrics list -o json` printed it in older CLI builds.
const OLD_CLI_BODY: &str = r#"{
  "cost": 0.0,
  "interval": "0:01:00",
  "namespace": "Microsoft.CognitiveServices/accounts",
  "resourceregion": "eastus",
  "timespan": "2024-10-01T00:00:00Z/2024-10-01T00:03:00Z",
  "value": [{
    "displayDescription": null,
    "errorCode": "Success",
    "errorMessage": null,
    "id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.CognitiveServices/accounts/aoai/providers/Microsoft.Insights/metrics/TimeToResponse",
    "name": {"localizedValue": "Time to Response", "value": "TimeToResponse"},
    "resourceGroup": "g",
    "timeseries": [{
      "data": [
        {"average": 812.5, "count": null, "maximum": 1900.0, "minimum": null, "timeStamp": "2024-10-01T00:00:00+00:00", "total": null},
        {"average": null, "count": null, "maximum": null, "minimum": null, "timeStamp": "2024-10-01T00:01:00+00:00", "total": null},
        {"average": 0.0, "count": null, "maximum": 0.0, "minimum": null, "timeStamp": "2024-10-01T00:02:00+00:00", "total": null}
      ],
      "metadatavalues": [{"name": {"localizedValue": "ModelDeploymentName", "value": "ModelDeploymentName"}, "value": "gpt-4o-Prod"}]
    }],
    "type": "Microsoft.Insights/metrics",
    "unit": "MilliSeconds"
  }]
}"#;

#[test]
fn old_cli_output_gives_the_same_values_as_the_rest_body() {
    let rest = parse_inline(REST_BODY).unwrap();
    let old = parse_inline(OLD_CLI_BODY).unwrap();
    assert_eq!(rest.values.len(), 4, "the empty minute gives nothing");
    assert_eq!(old.values, rest.values);
    assert!(
        old.errors.is_empty(),
        "`errorMessage: null` with Success is no error"
    );
    assert_eq!(old.intervals, strs(&["0:01:00"]), "kept as given");
    assert_eq!(
        interval_ms(&old.intervals[0]),
        interval_ms(&rest.intervals[0])
    );
    let v = &rest.values[0];
    assert_eq!(
        v.resource,
        "/subscriptions/s/resourceGroups/g/providers/Microsoft.CognitiveServices/accounts/aoai"
    );
    assert_eq!(
        v.dimensions,
        vec![("modeldeploymentname".to_string(), "gpt-4o-Prod".to_string())]
    );
    assert_eq!(v.unit.as_deref(), Some("MilliSeconds"));
    let zeros: Vec<f64> = rest.values[2..].iter().map(|v| v.value).collect();
    assert_eq!(zeros, [0.0, 0.0], "explicit zeros stay values");
}

#[test]
fn empty_timeseries_is_no_values_and_no_error() {
    let m = parse_inline(
        r#"{"cost": 0, "timespan": "2024-12-01T00:00:00Z/2025-01-01T00:00:00Z", "interval": "PT1M",
            "value": [{"id": "/subscriptions/s/providers/Microsoft.Insights/metrics/Requests",
                       "name": {"value": "Requests"}, "unit": "Count", "timeseries": [],
                       "errorCode": "Success"}]}"#,
    )
    .unwrap();
    assert!(m.values.is_empty());
    assert!(m.errors.is_empty());
    assert_eq!(m.intervals, strs(&["PT1M"]));
    let df = to_frame(&m.values).unwrap();
    assert_eq!(df.height(), 0);
    assert_eq!(
        column_names(&df),
        [
            "resource",
            "metric",
            "unit",
            "aggregation",
            "timestamp",
            "value"
        ]
    );
}

#[test]
fn batch_with_a_throttled_metric_keeps_the_other_metric() {
    let m = parse_inline(
        r#"{"values": [{
            "starttime": "2025-01-01T00:00:00Z", "endtime": "2025-01-01T01:00:00Z", "interval": "PT1H",
            "resourceid": "/subscriptions/s/resourceGroups/g/providers/Microsoft.CognitiveServices/accounts/a",
            "value": [
              {"name": {"value": "TimeToResponse"}, "unit": "MilliSeconds", "timeseries": [],
               "errorCode": "Throttled", "errorMessage": "Query was throttled with reason: ServerBusy"},
              {"name": {"value": "AzureOpenAIRequests"}, "unit": "Count",
               "timeseries": [{"metadatavalues": [], "data": [{"timeStamp": "2025-01-01T00:00:00Z", "total": 7}]}]}
            ]}]}"#,
    )
    .unwrap();
    let resource =
        "/subscriptions/s/resourceGroups/g/providers/Microsoft.CognitiveServices/accounts/a";
    assert_eq!(
        m.errors,
        vec![MetricError {
            resource: resource.to_string(),
            metric: "TimeToResponse".to_string(),
            code: "Throttled".to_string(),
            message: "Query was throttled with reason: ServerBusy".to_string(),
        }]
    );
    assert_eq!(m.values.len(), 1);
    assert_eq!(
        m.values[0].resource, resource,
        "from `resourceid` (no metric id)"
    );
    assert_eq!(m.values[0].value, 7.0);
    assert_eq!(m.values[0].aggregation, Aggregation::Total);
    assert_eq!(
        m.timespans,
        strs(&["2025-01-01T00:00:00Z/2025-01-01T01:00:00Z"])
    );
}

#[test]
fn recorder_envelope_with_a_string_body_and_other_calls() {
    let body = serde_json::to_string(REST_BODY).unwrap();
    let text = format!(
        r#"{{"Entries": [
              {{"RequestUri": "https://login", "StatusCode": 200, "ResponseBody": {{"access_token": "Sanitized"}}}},
              {{"RequestUri": "https://management.azure.com/...", "StatusCode": 200, "ResponseBody": {body}}}
           ], "Variables": {{}}}}"#
    );
    let m = parse_inline(&text).unwrap();
    assert_eq!(m.values, parse_inline(REST_BODY).unwrap().values);

    let none = error_of(r#"{"Entries": [{"ResponseBody": {"access_token": "x"}}]}"#);
    assert!(none.contains("test-recorder envelope"), "{none}");
}

#[test]
fn bad_input_is_an_error_that_says_what_was_found() {
    let garbage = error_of("timestamp,latency_ms\n2024-01-01,12\n");
    assert!(garbage.starts_with("inline.json: "), "{garbage}");
    assert!(
        garbage.contains("not valid JSON at line 1, column 2"),
        "{garbage}"
    );
    assert!(
        garbage.contains("starts with \"timestamp,latency_ms\""),
        "{garbage}"
    );

    let array = error_of(r#"[{"value": []}]"#);
    assert!(
        array.contains(
            "expected an Azure Monitor metrics response (value[] or values[]), found a JSON array"
        ),
        "{array}"
    );

    let truncated = error_of("{\n  \"cost\": 0,\n  \"value\": [\n    {\"id\": \"x\"");
    assert!(truncated.contains("line 4, column 14"), "{truncated}");
    assert!(truncated.contains("EOF while parsing"), "{truncated}");

    let other_object = error_of(r#"{"requests": [], "model": "gpt-4o"}"#);
    assert!(
        other_object.contains("found an object with keys requests, model"),
        "{other_object}"
    );

    let empty = error_of(" \n");
    assert!(empty.contains("empty"), "{empty}");

    let error_body = error_of(
        r#"{"error": {"code": "BadRequest", "message": "Query endTime is out of the Max metrics retention period"}}"#,
    );
    assert!(
        error_body.contains("Azure error response: BadRequest"),
        "{error_body}"
    );

    // Metric definitions are the other `value[]` list: not metrics.
    let definitions = error_of(
        r#"{"value": [{"name": {"value": "TimeToResponse"}, "primaryAggregationType": "Average"}]}"#,
    );
    assert!(
        definitions.contains("value[0]: expected a metric"),
        "{definitions}"
    );

    let bad_time = error_of(
        r#"{"value": [{"id": "x", "name": {"value": "M"}, "timeseries": [{"data": [{"timeStamp": "yesterday", "average": 1}]}]}]}"#,
    );
    assert!(
        bad_time.contains("value[0].timeseries[0].data[0].timeStamp: expected an ISO-8601 date-time, found the string \"yesterday\""),
        "{bad_time}"
    );

    let bad_number = error_of(
        r#"{"value": [{"id": "x", "name": {"value": "M"}, "timeseries": [{"data": [{"timeStamp": "2024-01-01T00:00:00Z", "average": "1.5"}]}]}]}"#,
    );
    assert!(
        bad_number.contains("data[0].average: expected a number or null"),
        "{bad_number}"
    );
}

#[test]
fn no_prefix_or_mangling_of_a_real_file_panics() {
    for name in [
        "rest-api-specs_2024-02-01_MetricBatchExample.json",
        "azure-sdk-for-net_CanQueryMetricsFilter.json",
        "rest-api-specs_2023-10-01_GetMetricError.json",
    ] {
        let text = std::fs::read_to_string(sample(name)).unwrap();
        let mut cut = 0;
        while cut < text.len() {
            if text.is_char_boundary(cut) {
                assert!(parse_inline(&text[..cut]).is_err(), "{name} cut at {cut}");
            }
            cut += 37;
        }
        // Every value of one kind replaced by another kind: an error or a result, no panic.
        for (from, to) in [
            ("\"timeStamp\": \"", "\"timeStamp\": 1, \"x\": \""),
            ("\"name\": {", "\"name\": 3, \"n\": {"),
            ("\"timeseries\": [", "\"timeseries\": {}, \"t\": ["),
            ("\"data\": [", "\"data\": null, \"d\": ["),
            ("\"average\": ", "\"average\": null, \"a\": "),
            ("\"value\": ", "\"value\": true, \"v\": "),
            ("\"id\": ", "\"id\": [], \"i\": "),
        ] {
            let _ = parse_inline(&text.replace(from, to));
        }
    }
}

#[test]
fn to_frame_keeps_a_dimension_named_like_a_fixed_column() {
    let v = |dims: &[(&str, &str)], value: f64| MetricValue {
        resource: "r".to_string(),
        metric: "m".to_string(),
        unit: None,
        aggregation: Aggregation::Count,
        dimensions: dims
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        timestamp_ms: 0,
        value,
    };
    let df = to_frame(&[v(&[("value", "b")], 2.0), v(&[("region", "x")], 1.0)]).unwrap();
    assert_eq!(
        column_names(&df),
        [
            "resource",
            "metric",
            "unit",
            "aggregation",
            "region",
            "dimension_value",
            "timestamp",
            "value"
        ]
    );
    // Absent dimensions are null and sort first.
    assert_eq!(str_column(&df, "region"), [None, Some("x".to_string())]);
    let values: Vec<f64> = df
        .column("value")
        .unwrap()
        .f64()
        .unwrap()
        .into_no_null_iter()
        .collect();
    assert_eq!(values, [2.0, 1.0]);
}

#[test]
fn interval_lengths() {
    let h = 3_600_000;
    for (text, expected) in [
        ("PT1M", Some(60_000)),
        ("PT5M", Some(300_000)),
        ("PT15M", Some(900_000)),
        ("PT30M", Some(1_800_000)),
        ("PT1H", Some(h)),
        ("PT4H", Some(4 * h)),
        ("PT6H", Some(6 * h)),
        ("PT12H", Some(12 * h)),
        ("P1D", Some(24 * h)),
        ("P1W", Some(7 * 24 * h)),
        ("P1DT12H", Some(36 * h)),
        ("PT1H30M", Some(90 * 60_000)),
        ("PT0.5S", Some(500)),
        ("pt1m", Some(60_000)),
        // Old CLI: Python timedelta strings.
        ("0:01:00", Some(60_000)),
        ("0:05:00", Some(300_000)),
        ("1:00:00", Some(h)),
        ("12:00:00", Some(12 * h)),
        ("1 day, 0:00:00", Some(24 * h)),
        ("7 days, 0:00:00", Some(7 * 24 * h)),
        ("0:00:00.500000", Some(500)),
        // Not a fixed positive length.
        ("FULL", None),
        ("P1M", None),
        ("P1Y", None),
        ("PT", None),
        ("P", None),
        ("PT0S", None),
        ("0:00:00", None),
        ("-1 day, 23:59:00", None),
        ("PT1M1H", None),
        ("PT5", None),
        ("P1H", None),
        ("1:2:3", None),
        ("0:61:00", None),
        ("", None),
        ("PT99999999999999999999H", None),
    ] {
        assert_eq!(interval_ms(text), expected, "{text:?}");
    }
}

#[test]
fn aggregation_names() {
    let names: Vec<String> = Aggregation::ALL.iter().map(|a| a.to_string()).collect();
    assert_eq!(names, ["average", "minimum", "maximum", "total", "count"]);
}
