//! `tracediag throughput`: tokens and requests per minute from gateway logs (every minute of
//! the span, empty minutes as zero) and from Azure Monitor exports (windows with data only).

mod common;

use common::*;
use tracediag::analyze;
use tracediag::throughput::{self, Stat};

#[test]
fn gateway_minutes_sum_tokens_and_count_empty_minutes_as_zero() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(
        &csv,
        "request_id,timestamp,model,input_tokens,output_tokens,cached_tokens,total_handler_ms\n\
         a,2026-11-02T10:00:05Z,m,100,10,,900\n\
         b,2026-11-02T10:00:30Z,m,200,20,50,900\n\
         c,2026-11-02T10:00:59.999Z,m,300,30,,900\n\
         d,2026-11-02T10:02:00Z,m,400,,,900\n\
         e,2026-11-02T10:01:10Z,n,1000,100,,900\n",
    )
    .unwrap();
    let t = throughput::run(&analyze::Options {
        inputs: vec![csv],
        by: vec!["model".to_string()],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(t.first_minute.as_deref(), Some("2026-11-02T10:00:00.000Z"));
    assert_eq!(t.last_minute.as_deref(), Some("2026-11-02T10:02:00.000Z"));
    let m = &t.rows[0];
    assert_eq!(m.key, vec![Some("m".to_string())]);
    assert_eq!(m.minutes, 3);
    // Minutes: 600, 0, 400 input tokens. p95 (type 7) of [0, 400, 600] = 580.
    assert_eq!(
        m.input_tpm,
        Stat {
            n: 3,
            min: Some(0.0),
            mean: Some(333.333),
            p95: Some(580.0),
            max: Some(600.0)
        }
    );
    // A request without an output count adds nothing to the sum, and the report says so.
    assert_eq!(m.output_tpm.max, Some(60.0));
    assert!(
        t.notes.iter().any(|n| n.contains("0 requests have no input token count and 1 no output token count")),
        "{:?}",
        t.notes
    );
    // Requests per minute 3, 0, 1: p95 of [0, 1, 3] = 1 + 0.9 × 2 = 2.8.
    assert_eq!(
        m.rpm,
        Stat {
            n: 3,
            min: Some(0.0),
            mean: Some(1.333),
            p95: Some(2.8),
            max: Some(3.0)
        }
    );
    assert_eq!(m.cached_tpm.as_ref().unwrap().max, Some(50.0));
    let n = &t.rows[1];
    assert_eq!((n.key.clone(), n.minutes), (vec![Some("n".to_string())], 3));
    assert_eq!(n.input_tpm.max, Some(1000.0));
    assert_eq!(n.input_tpm.min, Some(0.0));
}

#[test]
fn azure_throughput_uses_windows_with_data_only() {
    let mut files: Vec<_> = std::fs::read_dir(fixture("azure/generated"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let t = throughput::run(&analyze::Options {
        inputs: files,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(t.source, "azure monitor");
    let chat = t
        .rows
        .iter()
        .find(|r| r.key == vec![Some("gpt-4o-chat".to_string())])
        .unwrap();
    let batch = t
        .rows
        .iter()
        .find(|r| r.key == vec![Some("gpt-4o-batch".to_string())])
        .unwrap();
    // 360 minutes; the batch deployment's five idle minutes have no data and are left out.
    assert_eq!((chat.minutes, batch.minutes), (360, 355));
    // EPISODES.md: chat serves 120 requests/min (±8 %), batch 40 (×1.7 in its load episode).
    let mean = |s: &Stat| s.mean.unwrap();
    assert!((115.0..125.0).contains(&mean(&chat.rpm)), "{:?}", chat.rpm);
    assert!((40.0..47.0).contains(&mean(&batch.rpm)), "{:?}", batch.rpm);
    assert!(batch.rpm.max.unwrap() > 1.5 * 40.0);
    assert!(chat.cached_tpm.is_none());
}

#[test]
fn cli_throughput_outputs() {
    let out = cli(&[
        "throughput",
        "fixtures/generated/gateway.parquet",
        "--by",
        "channel",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("gateway_by_channel", stdout(&out));
    let out = cli(&[
        "throughput",
        "fixtures/azure/generated/ModelRequests.json",
        "fixtures/azure/generated/AzureOpenAIRequests.json",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("azure_requests_json", stdout(&out));
    let out = cli(&[
        "throughput",
        "fixtures/azure/generated/ModelRequests.json",
        "--by",
        "model",
    ]);
    assert_eq!(out.status.code(), Some(2));
}
