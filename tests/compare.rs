//! `tracediag compare`: the statistics against reference values, the bootstrap interval on
//! a known shift, failures kept in every figure, the workload-contract warnings, the
//! snapshots of both formats, and the exit codes.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use tracediag::compare::{
    self, bootstrap_shift, kolmogorov_sf, ks_two_sample, mann_whitney, CohortInput, Cohorts,
    Comparison, Options, SplitMix64,
};
use tracediag::ruleset::RuleSet;
use tracediag::summary::round3;

fn close(got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "got {got}, want {want} (± {tol})"
    );
}

// ---------------------------------------------------------------------------------------
// The tests themselves

/// Mann–Whitney U, two-sided, normal approximation with tie and continuity correction.
#[test]
fn mann_whitney_p_values_match_references() {
    // SciPy's documentation of `scipy.stats.mannwhitneyu` (the "males/females" example):
    // `mannwhitneyu(males, females, method="asymptotic").pvalue == 0.11134688653314041`,
    // with U1 = 17 for the males, so B (females) is above A in 20 − 17 = 3 pairs.
    let males = [19.0, 22.0, 16.0, 29.0, 24.0];
    let females = [20.0, 11.0, 17.0, 12.0];
    let r = mann_whitney(&males, &females).unwrap();
    assert_eq!(r.u, 3.0);
    close(r.b_above_a, 0.15, 1e-12);
    // statrs' normal tail agrees with SciPy's to about 1e-11 here.
    close(r.p_value, 0.111_346_886_533_140_41, 1e-10);
    assert!(r.z < 0.0, "B lies below A: {r:?}");

    // By hand: A = 1..5, B = 6..10 → every B above every A, U_B = 25, μ = 12.5,
    // σ² = 5·5·11/12 = 22.9167, z = (25 − 12.5 − 0.5)/σ = 2.50672, p = 2·(1 − Φ(z)) =
    // 0.0121858 (Φ from erfc in Python's math module: 0.012185780355344818).
    let a = [1.0, 2.0, 3.0, 4.0, 5.0];
    let b = [6.0, 7.0, 8.0, 9.0, 10.0];
    let r = mann_whitney(&a, &b).unwrap();
    assert_eq!(r.u, 25.0);
    assert_eq!(r.b_above_a, 1.0);
    close(r.z, 2.506_72, 1e-5);
    close(r.p_value, 0.012_185_780_355_344_818, 1e-10);

    // Ties, by hand: A = [1, 2, 2, 3], B = [2, 3, 3, 4]. Ranks: 1 → 1; the three 2s → 3;
    // the three 3s → 6; 4 → 8. R_B = 3 + 6 + 6 + 8 = 23, U_B = 23 − 4·5/2 = 13, μ = 8.
    // Tie term Σ(t³ − t) = 24 + 24 = 48; σ² = 4·4/12 · (9 − 48/(8·7)) = 10.857143;
    // z = (13 − 8 − 0.5)/√σ² = 1.365698; p = 0.17203370892182296.
    let r = mann_whitney(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 3.0, 4.0]).unwrap();
    assert_eq!(r.u, 13.0);
    close(r.z, 1.365_698_202, 1e-8);
    close(r.p_value, 0.172_033_708_921_822_96, 1e-10);

    // The same sample twice: U = μ, no evidence of a shift.
    let r = mann_whitney(&a, &a).unwrap();
    assert_eq!((r.u, r.z, r.p_value), (12.5, 0.0, 1.0));
    // All values tied: σ = 0, p = 1 (not NaN).
    assert_eq!(mann_whitney(&[5.0; 3], &[5.0; 4]).unwrap().p_value, 1.0);
    assert!(mann_whitney(&[], &a).is_none());
}

/// The two-sample Kolmogorov–Smirnov test with its asymptotic p-value (R's
/// `ks.test(a, b, exact = FALSE)`).
#[test]
fn kolmogorov_smirnov_p_values_match_references() {
    // The Kolmogorov distribution: SciPy's `scipy.stats.kstwobign.sf(1.0)` is
    // 0.26999967167735456; the classical critical values (Smirnov 1948; e.g. Massey 1951,
    // table 1): Q(1.3581) = 0.05 and Q(1.6276) = 0.01.
    close(kolmogorov_sf(1.0), 0.269_999_671_677_354_56, 1e-12);
    close(kolmogorov_sf(1.3581), 0.05, 1e-5);
    close(kolmogorov_sf(1.6276), 0.01, 1e-5);
    // The two series meet at λ = 1.18 without a step.
    close(
        kolmogorov_sf(1.18 - 1e-12),
        kolmogorov_sf(1.18 + 1e-12),
        1e-11,
    );
    assert_eq!(kolmogorov_sf(0.0), 1.0);
    assert_eq!(kolmogorov_sf(0.01), 1.0);
    assert!(kolmogorov_sf(10.0) < 1e-80);

    // By hand: a = 1..10, b = 6..15. The distance peaks at 5 (F_a = 0.5, F_b = 0): D = 0.5.
    // √(10·10/20) · D = √5/2 = 1.118034; Q = 2(e^{−2.5} − e^{−10} + e^{−22.5} − …) =
    // 0.1640791977266521.
    let a: Vec<f64> = (1..=10).map(f64::from).collect();
    let b: Vec<f64> = (6..=15).map(f64::from).collect();
    let t = ks_two_sample(&a, &b).unwrap();
    assert_eq!(t.statistic, 0.5);
    close(t.p_value, 0.164_079_197_726_652_1, 1e-12);

    // Ties (token counts are integers), by hand: a = [1, 1, 2, 2], b = [1, 2, 2, 3].
    // After 1: F_a = 0.5, F_b = 0.25; after 2: 1.0 and 0.75; after 3: 1 and 1 → D = 0.25
    // (stepping through a tied value one element at a time would wrongly find 0.5).
    let t = ks_two_sample(&[1.0, 1.0, 2.0, 2.0], &[1.0, 2.0, 2.0, 3.0]).unwrap();
    assert_eq!(t.statistic, 0.25);
    // Identical samples: D = 0, p = 1.
    let t = ks_two_sample(&a, &a).unwrap();
    assert_eq!((t.statistic, t.p_value), (0.0, 1.0));
    assert!(ks_two_sample(&a, &[]).is_none());
}

/// Cohort B = cohort A + 100 ms: the shift of every percentile is exactly +100, and the
/// bootstrap interval contains it; the same seed gives the same interval.
#[test]
fn bootstrap_interval_contains_a_known_shift() {
    let a = lognormal_ms(1500, 7);
    let b: Vec<f64> = a.iter().map(|x| x + 100.0).collect();
    let qs = [0.5, 0.95, 0.99];
    let cis = bootstrap_shift(&a, &b, &qs, 1000, 0.95, &mut SplitMix64::new(42));
    for (q, ci) in qs.iter().zip(&cis) {
        let (lo, hi) = ci.unwrap();
        assert!(lo < 100.0 && 100.0 < hi, "p{q}: [{lo}, {hi}] misses +100");
        assert!(lo < hi);
    }
    // The p50 interval is narrow around the shift; p99 (the tail) is wider.
    let width = |k: usize| cis[k].unwrap().1 - cis[k].unwrap().0;
    assert!(width(0) < width(2), "{cis:?}");
    assert_eq!(
        cis,
        bootstrap_shift(&a, &b, &qs, 1000, 0.95, &mut SplitMix64::new(42))
    );
    assert_ne!(
        cis,
        bootstrap_shift(&a, &b, &qs, 1000, 0.95, &mut SplitMix64::new(43))
    );

    // The same through the whole pipeline (files → analysis → comparison).
    let dir = tempfile::tempdir().unwrap();
    let rows_a: Vec<Row> = a
        .iter()
        .enumerate()
        .map(|(i, e2e)| Row::new(i, *e2e))
        .collect();
    let rows_b: Vec<Row> = rows_a
        .iter()
        .map(|r| Row {
            e2e: r.e2e + 100.0,
            ..r.clone()
        })
        .collect();
    let c = pair(dir.path(), &rows_a, &rows_b);
    let e2e = c
        .metrics
        .iter()
        .find(|m| m.name == "end_to_end_ms")
        .unwrap();
    assert_eq!(e2e.a.pct.n, 1500);
    for s in &e2e.shift {
        assert_eq!(s.estimate, Some(100.0), "{s:?}");
        let (lo, hi) = (s.ci_low.unwrap(), s.ci_high.unwrap());
        assert!(lo < 100.0 && 100.0 < hi, "{s:?}");
    }
    // Read from the files in two streaming passes (pass 2 keeping only the values at the
    // ranks the draws read), the intervals are those of the bootstrap over all the values
    // in memory: the same draws (the metric's stream is the seed + its index) and the same
    // values at them.
    let written = |v: &[Row]| -> Vec<f64> {
        v.iter()
            .map(|r| format!("{:.3}", r.e2e).parse().unwrap())
            .collect()
    };
    let i = c.metrics.iter().position(|m| m.name == "end_to_end_ms");
    let mut rng = SplitMix64::new(compare::DEFAULT_SEED + i.unwrap() as u64);
    let in_memory = bootstrap_shift(
        &written(&rows_a),
        &written(&rows_b),
        &qs,
        1000,
        0.95,
        &mut rng,
    );
    for (s, ci) in e2e.shift.iter().zip(in_memory) {
        let (lo, hi) = ci.unwrap();
        assert_eq!((s.ci_low, s.ci_high), (Some(round3(lo)), Some(round3(hi))));
    }
    let mw = e2e.mann_whitney.unwrap();
    assert!(mw.b_above_a > 0.5, "{mw:?}");
    assert_eq!(c.bootstrap.resamples, 1000);
    assert_eq!(c.bootstrap.seed, compare::DEFAULT_SEED);
    assert!(c.contract.warnings.is_empty(), "{:?}", c.contract.warnings);
}

/// Failed, cancelled and timed-out requests stay in every figure: `n` counts them and the
/// percentiles include their values.
#[test]
fn failures_are_counted_and_included() {
    let dir = tempfile::tempdir().unwrap();
    let rows_a: Vec<Row> = (0..200).map(|i| Row::new(i, 1000.0 + i as f64)).collect();
    let mut rows_b = rows_a.clone();
    // Ten slow failures in B: three timeouts, three errors, four cancellations.
    for (k, r) in rows_b.iter_mut().take(10).enumerate() {
        r.outcome = ["timeout", "error", "cancelled", "cancelled"][k % 4].into();
        r.e2e = 30_000.0;
    }
    let c = pair(dir.path(), &rows_a, &rows_b);
    assert_eq!((c.cohorts[0].failures, c.cohorts[1].failures), (0, 10));
    let e2e = c
        .metrics
        .iter()
        .find(|m| m.name == "end_to_end_ms")
        .unwrap();
    assert_eq!((e2e.a.pct.n, e2e.a.failures), (200, 0));
    assert_eq!((e2e.b.pct.n, e2e.b.failures, e2e.b.nulls), (200, 10, 0));
    // B's p99 is one of the 30 s failures: dropping them would have hidden it.
    assert_eq!(e2e.b.pct.p99, Some(30_000.0));
    assert!(e2e.shift[2].estimate.unwrap() > 28_000.0);
    // 10 of 200 = 5 points more failures than A: beyond the 2-point tolerance.
    let fields: Vec<&str> = c
        .contract
        .warnings
        .iter()
        .map(|w| w.field.as_str())
        .collect();
    assert_eq!(fields, ["failure rates"]);
    assert_eq!(
        c.contract.warnings[0].message,
        "failure rates: A 0.0% (0 of 200) vs B 5.0% (10 of 200) — +5.0 points (tolerance: within 2 points)"
    );
}

/// The generated log assigns the channel uniformly at random, independently of model,
/// streaming, tokens, inflight and time (examples/generate.rs), so ch-east and ch-west share
/// one workload contract: no check fires. The figures asserted here are the log's own
/// (1016 and 1012 requests; 915 and 913 streamed; 50 and 58 failed).
#[test]
fn split_channel_of_the_generated_log_has_no_contract_warning() {
    let c = split_gateway();
    assert_eq!(c.split.as_deref(), Some("channel"));
    assert_eq!(c.cohorts[0].name, "channel=ch-east");
    assert_eq!(c.cohorts[1].name, "channel=ch-west");
    assert_eq!((c.cohorts[0].requests, c.cohorts[1].requests), (1016, 1012));
    assert_eq!((c.cohorts[0].streamed, c.cohorts[1].streamed), (915, 913));
    assert_eq!((c.cohorts[0].failures, c.cohorts[1].failures), (50, 58));
    assert!(c.contract.warnings.is_empty(), "{:?}", c.contract.warnings);
    let fields: Vec<&str> = c.contract.checks.iter().map(|k| k.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "model ids",
            "groups",
            "regions",
            "streaming share",
            "input tokens",
            "output tokens",
            "concurrency (inflight)",
            "arrival rate",
            "time windows",
            "sample counts",
            "failure rates"
        ]
    );
    assert!(c.contract.checks.iter().all(|k| k.within));
    // The token tests ran and found nothing (the same generator for every channel).
    let (ti, to) = (
        c.contract.input_tokens_test.unwrap(),
        c.contract.output_tokens_test.unwrap(),
    );
    assert!(ti.p_value > 0.5 && to.p_value > 0.1, "{ti:?} {to:?}");
    assert!(c
        .contract
        .not_checked
        .iter()
        .any(|n| n.starts_with("channel: the split column")));
    // Every named metric of the rule table the log can compute, in its order; those built
    // on figures only other tools' adapters read are not in the log, so they are left
    // out, and named.
    let rules = RuleSet::gateway().unwrap();
    let off = rules.adapter_metrics();
    let names: Vec<String> = rules
        .reported_metrics()
        .iter()
        .map(|m| m.name.clone())
        .filter(|n| !off.contains(n))
        .collect();
    let got: Vec<String> = c.metrics.iter().map(|m| m.name.clone()).collect();
    assert_eq!(got, names);
    let left_out: Vec<String> = c.metrics_left_out.iter().map(|m| m.name.clone()).collect();
    assert_eq!(left_out, off);
    // The class mix sums to each cohort's requests.
    let total_a: u64 = c.classes.iter().map(|k| k.a).sum();
    let total_b: u64 = c.classes.iter().map(|k| k.b).sum();
    assert_eq!((total_a, total_b), (1016, 1012));
}

/// Comparing a log with itself: the percentiles are those `analyze` reports, every shift
/// is zero, and the tests see no difference.
#[test]
fn a_log_against_itself_matches_analyze_and_shifts_nothing() {
    let rules = RuleSet::gateway().unwrap();
    let path = fixture("generated/gateway.parquet");
    let input = CohortInput {
        name: "gateway".into(),
        inputs: vec![path.clone()],
    };
    let c = compare::run(&rules, &options(Cohorts::Pair(input.clone(), input))).unwrap();
    let analysis = run(&rules, &[path]);
    for (m, want) in c.metrics.iter().zip(&analysis.summary.metrics) {
        assert_eq!(m.a.pct, want.pct, "{}", m.name);
        assert_eq!(m.a.nulls, want.nulls);
        assert!(m.shift.iter().all(|s| s.estimate == Some(0.0)), "{m:?}");
        assert_eq!(m.mann_whitney.unwrap().p_value, 1.0);
    }
    assert!(c.contract.warnings.is_empty(), "{:?}", c.contract.warnings);
}

/// Two cohorts that differ in model and streaming: one warning each, naming both values.
#[test]
fn differing_model_and_streaming_are_warnings_naming_both_values() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = differing_pair(dir.path());
    let rules = RuleSet::gateway().unwrap();
    let c = compare::run(
        &rules,
        &options(Cohorts::Pair(
            CohortInput {
                name: "a.csv".into(),
                inputs: vec![a],
            },
            CohortInput {
                name: "b.csv".into(),
                inputs: vec![b],
            },
        )),
    )
    .unwrap();
    let w: Vec<(&str, &str)> = c
        .contract
        .warnings
        .iter()
        .map(|w| (w.field.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        w,
        [
            (
                "model ids",
                "model ids: A gpt-4.1 100.0% vs B claude-sonnet-4 100.0% — different sets: only in A: gpt-4.1; only in B: claude-sonnet-4 (tolerance: same set; shares within 10 points)"
            ),
            (
                "streaming share",
                "streaming share: A 100.0% (120 of 120) vs B 50.0% (60 of 120) — -50.0 points (tolerance: within 5 points)"
            ),
        ]
    );
}

#[test]
fn cli_split_channel_table() {
    insta::assert_snapshot!(ok(&[
        "compare",
        "fixtures/generated/gateway.parquet",
        "--split",
        "channel=ch-east,ch-west"
    ]));
}

#[test]
fn cli_split_channel_json() {
    let text = ok(&[
        "compare",
        "fixtures/generated/gateway.parquet",
        "--split",
        "channel=ch-east,ch-west",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["contract"]["warnings"], serde_json::json!([]));
    insta::assert_snapshot!(text);
}

#[test]
fn cli_split_channel_markdown() {
    insta::assert_snapshot!(ok(&[
        "compare",
        "fixtures/generated/gateway.parquet",
        "--split",
        "channel=ch-east,ch-west",
        "--format",
        "markdown",
    ]));
}

/// Contract warnings in Markdown: bold, naming the field and both values.
#[test]
fn cli_markdown_shows_the_contract_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = differing_pair(dir.path());
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = cli(&["compare", a, b, "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("- **warning**: model ids: A gpt-4.1 100.0% vs B claude-sonnet-4 100.0%"),
        "{text}"
    );
    assert!(text.contains("| **WARNING** |"), "{text}");
}

/// `--strict`: exit 1 when the contract differs (the comparison is still printed), 0 when
/// it does not; without `--strict` a difference is only a warning.
#[test]
fn cli_strict_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = differing_pair(dir.path());
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());

    let out = cli(&["compare", a, b, "--strict"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    // The warning is a diagnostic: on stderr, not in the comparison on stdout.
    let warning = "tracediag: warning: model ids: A gpt-4.1 100.0% vs B claude-sonnet-4 100.0%";
    assert!(stderr(&out).contains(warning), "{}", stderr(&out));
    assert!(!text.contains("warning: model ids"), "{text}");
    assert!(
        text.contains("Named metrics"),
        "the comparison is still printed: {text}"
    );
    assert!(stderr(&out).contains("--strict"), "{}", stderr(&out));

    let out = cli(&["compare", a, b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let out = cli(&["compare", a, b, "--strict", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["contract"]["warnings"].as_array().unwrap().len(), 2);

    // Nothing differs: exit 0 with --strict.
    ok(&[
        "compare",
        "fixtures/generated/gateway.parquet",
        "--split",
        "channel=ch-east,ch-west",
        "--strict",
    ]);
    ok(&[
        "compare",
        "fixtures/generated/gateway.parquet",
        "fixtures/generated/gateway.csv",
        "--strict",
    ]);
}

/// The same input and seed give byte-identical output; another seed moves only the
/// intervals.
#[test]
fn cli_output_is_deterministic_and_the_seed_only_moves_intervals() {
    let args = [
        "compare",
        "fixtures/generated/gateway.parquet",
        "--split",
        "channel=ch-east,ch-eu",
        "--format",
        "json",
    ];
    assert_eq!(ok(&args), ok(&args));
    let mut seeded = args.to_vec();
    seeded.extend(["--seed", "7"]);
    let (x, y): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(&ok(&args)).unwrap(),
        serde_json::from_str(&ok(&seeded)).unwrap(),
    );
    assert_eq!(x["contract"], y["contract"]);
    assert_eq!(y["bootstrap"]["seed"], 7);
    let (mx, my) = (&x["metrics"][0], &y["metrics"][0]);
    assert_eq!(mx["a"], my["a"]);
    assert_eq!(mx["shift"][0]["estimate"], my["shift"][0]["estimate"]);
    assert_ne!(mx["shift"], my["shift"]);
}

/// Bad cohorts are errors (exit 2) that say what there is.
#[test]
fn cli_unknown_split_column_or_value_exits_2() {
    let gw = "fixtures/generated/gateway.parquet";
    let err = fails(&["compare", gw, "--split", "nosuch=a,b"]);
    assert!(
        err.contains("`nosuch` is not a label column") && err.contains("channel"),
        "{err}"
    );
    let err = fails(&["compare", gw, "--split", "total_handler_ms=1,2"]);
    assert!(err.contains("not a label column"), "{err}");
    let err = fails(&["compare", gw, "--split", "channel=ch-east,ch-north"]);
    assert!(
        err.contains("no request has channel = `ch-north`")
            && err.contains("ch-east (1016), ch-eu (972), ch-west (1012)"),
        "{err}"
    );
    let err = fails(&["compare", gw, "--split", "channel=ch-east"]);
    assert!(err.contains("expected COLUMN=A,B"), "{err}");
    let err = fails(&["compare", gw, "--split", "channel=ch-east,ch-east"]);
    assert!(err.contains("the same"), "{err}");
    let err = fails(&["compare", gw]);
    assert!(err.contains("two inputs A and B"), "{err}");
    let err = fails(&["compare", gw, gw, gw]);
    assert!(err.contains("got 3 inputs"), "{err}");
    let err = fails(&["compare", gw, "fixtures/nosuch/*.parquet"]);
    assert!(err.contains("matches no file"), "{err}");
    // An empty cohort in the window.
    let err = fails(&["compare", gw, gw, "--since", "2030-01-01"]);
    assert!(
        err.contains("cohort A: the incident window --since 2030-01-01T00:00:00.000Z holds no request: the requests of "),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------
// Helpers

fn options(cohorts: Cohorts) -> Options {
    Options {
        cohorts,
        read: Default::default(),
        seed: compare::DEFAULT_SEED,
        resamples: compare::DEFAULT_RESAMPLES,
    }
}

fn split_gateway() -> Comparison {
    compare::run(
        &RuleSet::gateway().unwrap(),
        &options(Cohorts::Split {
            inputs: vec![fixture("generated/gateway.parquet")],
            column: "channel".into(),
            values: ["ch-east".into(), "ch-west".into()],
        }),
    )
    .unwrap()
}

/// A split by one of the labels the comparison itself counts (the streaming flag, the
/// model, the class, the outcome) is read like any other: each cohort holds that one value
/// only, and its counts say so.
#[test]
fn a_split_by_a_counted_label_counts_each_cohort_as_that_value() {
    let rules = RuleSet::gateway().unwrap();
    let split = |column: &str, a: &str, b: &str| {
        compare::run(
            &rules,
            &options(Cohorts::Split {
                inputs: vec![fixture("generated/gateway.parquet")],
                column: column.into(),
                values: [a.into(), b.into()],
            }),
        )
        .unwrap()
    };
    let c = split("is_stream", "true", "false");
    let (a, b) = (&c.cohorts[0], &c.cohorts[1]);
    assert_eq!((a.streamed, a.not_streamed), (a.requests, 0));
    assert_eq!((b.streamed, b.not_streamed), (0, b.requests));

    let c = split("model", "gpt-4.1", "claude-sonnet-4");
    for (cohort, model) in c.cohorts.iter().zip(["gpt-4.1", "claude-sonnet-4"]) {
        let names: Vec<(&str, u64)> = cohort
            .models
            .iter()
            .map(|m| (m.name.as_str(), m.count))
            .collect();
        assert_eq!(names, vec![(model, cohort.requests)]);
    }

    let c = split("class", "normal", "prefill_slow");
    let normal = c.classes.iter().find(|m| m.class == "normal").unwrap();
    let prefill = c
        .classes
        .iter()
        .find(|m| m.class == "prefill_slow")
        .unwrap();
    assert_eq!((normal.a, normal.b), (c.cohorts[0].requests, 0));
    assert_eq!((prefill.a, prefill.b), (0, c.cohorts[1].requests));

    let c = split("outcome", "ok", "error");
    assert_eq!(c.cohorts[0].failures, 0);
    assert_eq!(c.cohorts[1].failures, c.cohorts[1].requests);
}

/// Log-normal latencies around e^7.5 ≈ 1800 ms (Box–Muller on SplitMix64), deterministic.
fn lognormal_ms(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    let mut unit = || ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    (0..n)
        .map(|_| {
            let (u, v) = (unit(), unit());
            let z = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
            (7.5 + 0.6 * z).exp()
        })
        .collect()
}

/// One request of a constructed log.
#[derive(Clone)]
struct Row {
    id: usize,
    model: String,
    stream: bool,
    outcome: String,
    input_tokens: u64,
    output_tokens: u64,
    e2e: f64,
}

impl Row {
    fn new(i: usize, e2e: f64) -> Row {
        Row {
            id: i,
            model: "gpt-4.1".into(),
            stream: true,
            outcome: "ok".into(),
            input_tokens: 1000 + (i as u64 * 37) % 500,
            output_tokens: 100 + (i as u64 * 13) % 200,
            e2e,
        }
    }
}

/// A CSV log: one request every 30 s from 2026-11-02T10:00:00Z, inflight 8.
fn write_log(path: &Path, rows: &[Row]) {
    let mut text = String::from(
        "request_id,timestamp,model,channel,is_stream,outcome,input_tokens,output_tokens,inflight,upstream_headers_ms,total_handler_ms\n",
    );
    for r in rows {
        let t = 1_793_613_600_000i64 + r.id as i64 * 30_000; // 2026-11-02T10:00:00Z
        text.push_str(&format!(
            "r{},{},{},ch-1,{},{},{},{},8,{:.3},{:.3}\n",
            r.id,
            t,
            r.model,
            r.stream,
            r.outcome,
            r.input_tokens,
            r.output_tokens,
            r.e2e / 10.0,
            r.e2e
        ));
    }
    std::fs::write(path, text).unwrap();
}

fn pair(dir: &Path, a: &[Row], b: &[Row]) -> Comparison {
    let (pa, pb) = (dir.join("a.csv"), dir.join("b.csv"));
    write_log(&pa, a);
    write_log(&pb, b);
    compare::run(
        &RuleSet::gateway().unwrap(),
        &options(Cohorts::Pair(
            CohortInput {
                name: "a.csv".into(),
                inputs: vec![pa],
            },
            CohortInput {
                name: "b.csv".into(),
                inputs: vec![pb],
            },
        )),
    )
    .unwrap()
}

/// 120 requests each, the same times, tokens, inflight, latencies and failures; A is all
/// gpt-4.1 and streamed, B all claude-sonnet-4 and half streamed.
fn differing_pair(dir: &Path) -> (PathBuf, PathBuf) {
    let a: Vec<Row> = (0..120)
        .map(|i| {
            let mut r = Row::new(i, 800.0 + (i * 53 % 400) as f64);
            if i % 40 == 0 {
                r.outcome = "error".into();
            }
            r
        })
        .collect();
    let b: Vec<Row> = a
        .iter()
        .map(|r| Row {
            model: "claude-sonnet-4".into(),
            stream: r.id % 2 == 0,
            ..r.clone()
        })
        .collect();
    let (pa, pb) = (dir.join("a.csv"), dir.join("b.csv"));
    write_log(&pa, &a);
    write_log(&pb, &b);
    (pa, pb)
}

/// The bootstrap draws a resample's quantile through order statistics instead of building
/// the resample. Both ways must give the same distribution: over many draws from a small
/// sample, the mean and the spread of the drawn p50 and p95 agree with brute-force
/// resampling (an off-by-one rank in the Beta parameters moves the mean by a whole value).
#[test]
fn order_statistic_draws_match_brute_force_resampling() {
    let sorted: Vec<f64> = (0..40).map(|i| (i * i) as f64).collect();
    let n = sorted.len();
    let draws = 20_000;
    for q in [0.5, 0.95] {
        let quick = compare::OrderDraw::new(n, q);
        let mut rng = SplitMix64::new(7);
        let a: Vec<f64> = (0..draws).map(|_| quick.draw(&sorted, &mut rng)).collect();
        let mut rng = SplitMix64::new(8);
        let b: Vec<f64> = (0..draws)
            .map(|_| {
                let mut r: Vec<f64> = (0..n).map(|_| sorted[rng.below(n)]).collect();
                r.sort_by(f64::total_cmp);
                tracediag::stats::quantile7(&r, q).unwrap()
            })
            .collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let sd = |v: &[f64]| {
            let m = mean(v);
            (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
        };
        // Standard error of the difference of means: about sd·√(2/draws) ≈ 0.01·sd.
        let tolerance = 0.05 * sd(&b);
        assert!(
            (mean(&a) - mean(&b)).abs() < tolerance,
            "q {q}: mean {} vs {}",
            mean(&a),
            mean(&b)
        );
        assert!(
            (sd(&a) / sd(&b) - 1.0).abs() < 0.05,
            "q {q}: sd {} vs {}",
            sd(&a),
            sd(&b)
        );
    }
}

/// The verdict is written from the figures: no shift of identical latencies is
/// significant, and the two contract warnings are named.
#[test]
fn the_verdict_names_the_contract_warnings_and_no_shift() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = differing_pair(dir.path());
    let text = ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(
        text.lines().nth(1),
        Some("verdict: B against A: no percentile shift B − A has a 95% interval that excludes 0; the cohorts differ on the workload contract (2 warnings: model ids, streaming share).")
    );
}

/// A p99 of 10 requests is not shifted: both cohorts are too small for it (and for the
/// p95), so the shift is null with the reason, and the verdict cannot name it.
#[test]
fn percentiles_of_small_cohorts_are_not_shifted() {
    let dir = tempfile::tempdir().unwrap();
    let rows_a: Vec<Row> = (0..10)
        .map(|i| Row::new(i, 800.0 + (i * 53 % 400) as f64))
        .collect();
    let rows_b: Vec<Row> = rows_a
        .iter()
        .map(|r| Row {
            e2e: r.e2e + 100.0,
            ..r.clone()
        })
        .collect();
    let c = pair(dir.path(), &rows_a, &rows_b);
    let e2e = c
        .metrics
        .iter()
        .find(|m| m.name == "end_to_end_ms")
        .unwrap();
    assert_eq!(e2e.shift[0].estimate, Some(100.0));
    assert_eq!(e2e.shift[0].withheld, None);
    for (s, min) in e2e.shift[1..].iter().zip([20, 100]) {
        assert_eq!(s.estimate, None, "{s:?}");
        assert_eq!(s.ci_low, None, "{s:?}");
        assert_eq!(
            s.withheld.as_deref(),
            Some(format!("A: n too small (n=10 < {min}); B: n too small (n=10 < {min})").as_str())
        );
    }
    assert!(
        !c.verdict.contains(" p95") && !c.verdict.contains(" p99"),
        "{}",
        c.verdict
    );
    let json = serde_json::to_value(&c).unwrap();
    let m = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "end_to_end_ms")
        .unwrap();
    assert_eq!(m["a"]["p99"], serde_json::Value::Null);
    assert_eq!(m["a"]["p99_withheld"], "n too small (n=10 < 100)");
    assert_eq!(m["a"]["p50"], serde_json::json!(e2e.a.pct.p50.unwrap()));
}
