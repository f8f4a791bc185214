//! The Azure Monitor job end to end: the planted episodes of the generated exports get
//! exactly their classes, the real exports go through, and the CLI output is snapshotted.

mod common;

use common::*;
use tracediag::monitor::{self, Options};
use tracediag::ruleset::RuleSet;

fn generated() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(fixture("azure/generated"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

/// (deployment, first window, last window, class) — from fixtures/azure/generated/EPISODES.md.
const EPISODES: [(&str, usize, usize, &str); 8] = [
    ("gpt-4o-batch", 20, 59, "token_volume_explained"),
    ("gpt-4o-chat", 75, 104, "throttled_429"),
    ("gpt-4o-chat", 120, 159, "capacity_saturated"),
    ("gpt-4o-batch", 175, 214, "tbt_under_load"),
    ("gpt-4o-chat", 230, 269, "latency_regression_unexplained"),
    ("gpt-4o-batch", 285, 324, "ttft_prompt_driven"),
    // The idle minutes have no TTLT at all.
    ("gpt-4o-batch", 340, 344, "insufficient_data"),
    // The first ten windows of each deployment have no baseline yet (warm-up);
    // the chat deployment's are listed here, the batch one's below.
    ("gpt-4o-chat", 0, 9, "insufficient_data"),
];

fn expected(deployment: &str, window: usize) -> &'static str {
    if deployment == "gpt-4o-batch" && window <= 9 {
        return "insufficient_data";
    }
    EPISODES
        .iter()
        .find(|(d, a, b, _)| *d == deployment && (*a..=*b).contains(&window))
        .map(|e| e.3)
        .unwrap_or("normal")
}

fn windows_by_deployment(a: &monitor::Analysis) -> Vec<(String, usize, String)> {
    let df = &a.frame;
    let dep = df.column("deployment").unwrap().str().unwrap().clone();
    let cls = df.column("class").unwrap().str().unwrap().clone();
    let mut out = vec![];
    let mut counter = std::collections::BTreeMap::new();
    for i in 0..df.height() {
        let d = dep.get(i).unwrap().to_string();
        let k = counter.entry(d.clone()).or_insert(0usize);
        out.push((d, *k, cls.get(i).unwrap().to_string()));
        *k += 1;
    }
    out
}

#[test]
fn every_planted_episode_gets_exactly_its_class() {
    let a = monitor::run(
        &RuleSet::azure().unwrap(),
        &Options {
            inputs: generated(),
            ..Default::default()
        },
    )
    .unwrap();
    let rows = windows_by_deployment(&a);
    assert_eq!(rows.len(), 720);
    let mut wrong = vec![];
    for (d, w, c) in &rows {
        if c != expected(d, *w) {
            wrong.push(format!("{d} window {w}: {c}, expected {}", expected(d, *w)));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} windows misclassified:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // Every class of the table is exercised by the generated data.
    for r in &RuleSet::azure().unwrap().rules {
        assert!(
            rows.iter().any(|(_, _, c)| c == &r.class),
            "{} never fires",
            r.class
        );
    }
}

#[test]
fn a_baseline_export_replaces_the_trailing_baseline() {
    // The same export as its own baseline: per-deployment medians over six hours, which the
    // 40-minute episodes barely move; no warm-up windows any more.
    let files = generated();
    let a = monitor::run(
        &RuleSet::azure().unwrap(),
        &Options {
            inputs: files.clone(),
            baseline: files,
            ..Default::default()
        },
    )
    .unwrap();
    for (d, w, c) in windows_by_deployment(&a) {
        let want = match expected(&d, w) {
            "insufficient_data" if w <= 9 => "normal",
            other => other,
        };
        assert_eq!(c, want, "{d} window {w}");
    }
    assert!(a
        .summary
        .baseline
        .starts_with("per-deployment medians of every window in "));
}

#[test]
fn the_latency_formula_fits_both_deployments() {
    let a = monitor::run(
        &RuleSet::azure().unwrap(),
        &Options {
            inputs: generated(),
            ..Default::default()
        },
    )
    .unwrap();
    let fit = |name: &str| {
        a.summary
            .deployments
            .iter()
            .find(|d| d.deployment == name)
            .and_then(|d| d.formula.clone())
            .unwrap_or_else(|| panic!("{name} has no fit"))
    };
    // The batch deployment follows TTLT = TTFT + TBT × tokens throughout (token growth
    // included: that is what the formula explains).
    let batch = fit("gpt-4o-batch");
    assert!(
        batch.r_squared > 0.9 && (0.9..1.1).contains(&batch.slope),
        "{batch:?}"
    );
    // The chat deployment's unexplained step sits above the formula: a worse fit and a
    // positive mean residual.
    let chat = fit("gpt-4o-chat");
    assert!(
        chat.r_squared < batch.r_squared && chat.residual_mean_ms > 0.0,
        "{chat:?}"
    );
    // Inside the unexplained step the residual is significant; in token growth it is not.
    let p = f64s(&a, "ttlt_residual_p");
    let rows = windows_by_deployment(&a);
    let median_p = |dep: &str, from: usize, to: usize| {
        let mut v: Vec<f64> = rows
            .iter()
            .zip(&p)
            .filter(|((d, w, _), _)| d == dep && (from..=to).contains(w))
            .filter_map(|(_, p)| *p)
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    assert!(median_p("gpt-4o-chat", 230, 269) < 0.001);
    assert!(median_p("gpt-4o-batch", 20, 59) > 0.05);
}

/// Issue 19: the "Deployments — medians" table showed the total request count under
/// `requests` (15,326) and prompt + generated tokens under `tokens/req` (3,634), where
/// the medians per window are 41 requests and 601 generated tokens (the tokens of the
/// formula). Each figure is checked against the windows it summarises.
#[test]
fn deployments_table_shows_medians_per_window_not_totals() {
    let a = monitor::run(
        &RuleSet::azure().unwrap(),
        &Options {
            inputs: generated(),
            ..Default::default()
        },
    )
    .unwrap();
    let rows = windows_by_deployment(&a);
    let median_of = |dep: &str, name: &str| {
        let mut v: Vec<f64> = rows
            .iter()
            .zip(f64s(&a, name))
            .filter(|((d, _, _), _)| d == dep)
            .filter_map(|(_, x)| x)
            .collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    for d in &a.summary.deployments {
        let near = |x: Option<f64>, y: f64| (x.unwrap() - y).abs() < 1e-3;
        assert!(
            near(
                d.median_requests,
                median_of(&d.deployment, "requests_total")
            ),
            "{d:?}"
        );
        assert!(
            near(
                d.median_generated_tokens_per_request,
                median_of(&d.deployment, "generated_tokens_per_request")
            ),
            "{d:?}"
        );
    }
    let batch = &a.summary.deployments[0];
    assert_eq!(batch.deployment, "gpt-4o-batch");
    assert_eq!(
        (batch.median_requests, batch.requests),
        (Some(41.0), Some(15326.0))
    );
    let text = tracediag::report::monitor::terminal(&a.summary, tracediag::report::Width::Fixed);
    let row = text
        .lines()
        .find(|l| l.contains("gpt-4o-batch ┆     360"))
        .unwrap();
    let cells: Vec<&str> = row.split('┆').map(str::trim).collect();
    // deployment, windows, TTLT, TTFT, TBT, tokens/req, requests, 429s total, …
    assert_eq!(cells[5], "601", "{row}");
    assert_eq!(cells[6], "41.0", "{row}");
}

/// The table names the export's interval: exports at PT1H and PT15M are not "deployment ×
/// minute" (the generated TTLT export, re-labelled with each interval).
#[test]
fn windows_are_named_by_the_exports_interval() {
    let dir = tempfile::tempdir().unwrap();
    let ttlt =
        std::fs::read_to_string(fixture("azure/generated/AzureOpenAITTLTInMS.json")).unwrap();
    assert_eq!(ttlt.matches("\"interval\": \"PT1M\"").count(), 1);
    for (interval, window) in [
        ("PT1H", "hour"),
        ("PT15M", "15 minutes"),
        ("PT1M", "minute"),
    ] {
        let path = dir.path().join(format!("ttlt_{interval}.json"));
        let text = ttlt.replace(
            "\"interval\": \"PT1M\"",
            &format!("\"interval\": \"{interval}\""),
        );
        std::fs::write(&path, text).unwrap();
        let text = ok(&["analyze", path.to_str().unwrap()]);
        assert!(
            text.contains(&format!(" (deployment × {window})   span: ")),
            "{interval}: {text}"
        );
        assert!(
            text.contains(&format!("Deployments — medians per deployment × {window},")),
            "{interval}: {text}"
        );
    }
}

fn f64s(a: &monitor::Analysis, name: &str) -> Vec<Option<f64>> {
    let c = a
        .frame
        .column(name)
        .unwrap()
        .cast(&polars::prelude::DataType::Float64)
        .unwrap();
    let ca = c.f64().unwrap();
    (0..ca.len()).map(|i| ca.get(i)).collect()
}

/// The real exports hold storage, CPU and custom metrics, no Azure OpenAI latency: each
/// is refused (exit 2) naming the file, what it was read as, the metrics it holds and the
/// metrics the diagnosis reads; beside an export with a latency it is read, with a note.
#[test]
fn real_exports_without_a_latency_are_refused_saying_what_they_hold() {
    let reads = "the Azure diagnosis reads AzureOpenAITTLTInMS / TimeToLastByte, AzureOpenAITimeToResponse / TimeToResponse, AzureOpenAINormalizedTBTInMS / NormalizedTimeBetweenTokens, AzureOpenAINormalizedTTFTInMS / NormalizedTimeToFirstToken\n";
    for (name, found) in [
        (
            "azure-sdk-for-net_CanQueryMetricsAllAggregations.json",
            "CowsHappiness",
        ),
        (
            "azure-sdk-for-net_CanQueryMetricsFilter.json",
            "CowsHappiness",
        ),
        (
            "azure-sdk-for-net_CanQueryMetricsNoTimespan.json",
            "CowsHappiness",
        ),
        (
            "grafana_7-azure-monitor-response-multi-dimension.json",
            "BlobCapacity",
        ),
        (
            "grafana_8-azure-monitor-response-unspecified-unit.json",
            "Percentage CPU",
        ),
        (
            "rest-api-specs_2023-10-01_GetMetricError.json",
            "MongoRequests",
        ),
        (
            "rest-api-specs_2024-02-01_MetricBatchExample.json",
            "Egress, Ingress",
        ),
    ] {
        let file = format!("fixtures/external/azure/{name}");
        let e = fails(&["analyze", &file]);
        assert_eq!(
            e,
            format!("tracediag: error: {file}: read as an Azure Monitor metrics export, it holds no Azure OpenAI latency metric (metrics found: {found}); {reads}"),
        );
        let e = fails(&["throughput", &file]);
        assert!(
            e.contains(&format!("{file}: read as an Azure Monitor metrics export, it holds no Azure OpenAI request or token metric (metrics found: {found}); throughput reads AzureOpenAIRequests / ModelRequests, GeneratedTokens / OutputTokens, ProcessedPromptTokens / InputTokens")),
            "{e}"
        );
    }
    // Several files: each named with its metrics.
    let cows = "fixtures/external/azure/azure-sdk-for-net_CanQueryMetricsAllAggregations.json";
    let cpu = "fixtures/external/azure/grafana_8-azure-monitor-response-unspecified-unit.json";
    let e = fails(&["analyze", cows, cpu]);
    assert_eq!(
        e,
        format!("tracediag: error: no input holds an Azure OpenAI latency metric; each was read as an Azure Monitor metrics export:\n  {cows}: metrics found: CowsHappiness\n  {cpu}: metrics found: Percentage CPU\n  {reads}")
    );
    // Beside a latency export: read, and the other file's metrics noted on stderr.
    let out = cli(&[
        "analyze",
        "fixtures/azure/generated/AzureOpenAITTLTInMS.json",
        cpu,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("tracediag: note: {cpu}: holds no metric tracediag reads (metrics found: Percentage CPU); its windows have no figure and are insufficient_data\n")
    );
    // An export of token counts only is used beside a latency, without a note.
    let out = cli(&[
        "analyze",
        "fixtures/azure/generated/AzureOpenAITTLTInMS.json",
        "fixtures/azure/generated/GeneratedTokens.json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn azure_table_is_documented_and_checks_clean() {
    let rules = RuleSet::azure().unwrap();
    let doc = std::fs::read_to_string(root().join("rules/README.md")).unwrap();
    for r in &rules.rules {
        assert!(
            doc.contains(&format!("`{}`", r.class)),
            "{} is not in rules/README.md",
            r.class
        );
        assert!(
            !r.detects.trim().is_empty() && !r.why.trim().is_empty(),
            "{}",
            r.class
        );
    }
    let out = cli(&["rules", "check", "rules/azure.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn cli_azure_table() {
    let mut args = vec!["analyze".to_string()];
    args.extend(
        generated()
            .iter()
            .map(|p| p.strip_prefix(root()).unwrap().display().to_string()),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = cli(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn cli_azure_json_and_out() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("windows.csv");
    let out = cli(&[
        "analyze",
        "fixtures/azure/generated/AzureOpenAITTLTInMS.json",
        "fixtures/azure/generated/AzureOpenAITimeToResponse.json",
        "fixtures/azure/generated/AzureOpenAINormalizedTBTInMS.json",
        "fixtures/azure/generated/AzureOpenAIRequests.json",
        "fixtures/azure/generated/GeneratedTokens.json",
        "fixtures/azure/generated/ProcessedPromptTokens.json",
        "--format",
        "json",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("resource,deployment,window_start,class,classes,ttlt_avg_ms,"),
        "{header}"
    );
    assert!(header.contains("ttlt_avg_ms_baseline"), "{header}");
    assert_eq!(
        lines.count(),
        360,
        "one row per window of the chat deployment"
    );
    assert!(text.contains(",2026-11-02T12:07:00.000Z,latency_regression_unexplained,"));
}

#[test]
fn mixing_metric_exports_and_gateway_logs_is_refused() {
    let out = cli(&[
        "analyze",
        "fixtures/azure/generated/TimeToLastByte.json",
        "fixtures/traces/traces.jsonl",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("mix Azure Monitor metric exports and gateway request logs"),
        "{}",
        stderr(&out)
    );
    let out = cli(&[
        "analyze",
        "fixtures/azure/generated/TimeToLastByte.json",
        "--by",
        "model",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = cli(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--rules",
        "rules/azure.toml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("written for the azure catalogue"),
        "{}",
        stderr(&out)
    );
}

/// Azure OpenAI RequestResponse resource logs feed the request pipeline: one timing
/// (durationMs), so insufficient_data, but end-to-end percentiles and data quality hold.
#[test]
fn request_response_logs_feed_the_request_pipeline() {
    let a = run(
        &RuleSet::gateway().unwrap(),
        &[fixture(
            "external/azure/elastic_test-open-ai-request-response.log",
        )],
    );
    assert_eq!(a.summary.rows, 3);
    assert_eq!(a.summary.inputs[0].format, "azure RequestResponse log");
    let e2e = a
        .summary
        .metrics
        .iter()
        .find(|m| m.name == "end_to_end_ms")
        .unwrap();
    assert_eq!((e2e.pct.n, e2e.pct.p50), (3, Some(102.0)));
    let negative = a
        .summary
        .quality
        .iter()
        .find(|q| q.check == "negative")
        .unwrap();
    assert_eq!(negative.count, 1, "the test-edited durationMs: -1021");
    assert!(
        a.summary.notes.iter().any(|n| n.contains("durationMs")),
        "{:?}",
        a.summary.notes
    );
}

/// Log Analytics `AzureMetrics` rows (portal CSV, query API JSON, az CLI JSON) take the
/// Azure path; a gateway CSV does not.
#[test]
fn log_analytics_rows_route_to_the_monitor_pipeline() {
    for f in [
        "azuremetrics.csv",
        "azuremetrics_query_api.json",
        "azuremetrics_az_cli.json",
    ] {
        let path = fixture(&format!("azure/logs/{f}"));
        assert!(monitor::is_metrics_export(&path), "{f}");
        let out = cli(&[
            "analyze",
            &format!("fixtures/azure/logs/{f}"),
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{f}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["windows"], 3, "{f}");
        assert_eq!(v["inputs"][0]["values"], 23, "{f}");
    }
    assert!(!monitor::is_metrics_export(&fixture(
        "generated/gateway.csv"
    )));
    assert!(!monitor::is_metrics_export(&fixture(
        "generated/gateway.jsonl"
    )));
}

/// An export with a byte that is not UTF-8 (a Latin-1 `é` in a resource group's name) is
/// refused at its line and column, not with "stream did not contain valid UTF-8".
#[test]
fn an_export_that_is_not_utf8_is_refused_at_its_line_and_column() {
    let text = std::fs::read(fixture(
        "azure/generated/AzureOpenAINormalizedTTFTInMS.json",
    ))
    .unwrap();
    let at = text
        .windows(b"rg-tracediag".len())
        .position(|w| w == b"rg-tracediag")
        .unwrap();
    let mut bad = text.clone();
    bad[at + 3] = 0xE9;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ttft.json");
    std::fs::write(&path, &bad).unwrap();
    let e = monitor::run(
        &RuleSet::azure().unwrap(),
        &Options {
            inputs: vec![path.clone()],
            ..Default::default()
        },
    )
    .err()
    .expect("refused")
    .to_string();
    let line = text[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let column = at + 3 - text[..at].iter().rposition(|&b| b == b'\n').unwrap();
    assert!(
        e.contains(&format!("line {line}, column {column}: not UTF-8")),
        "{e}"
    );
    assert!(e.starts_with(&path.display().to_string()), "{e}");
}
