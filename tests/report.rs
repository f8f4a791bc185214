//! `tracediag report`: the weekly latency report as Markdown (snapshot) and as one
//! self-contained HTML file (sections, charts with data, nothing external, no content
//! field), its determinism, its period and trend, and the `--out` contract.

mod common;

use std::path::Path;

use common::*;
use tracediag::ruleset::RuleSet;
use tracediag::weekly::{self, Period};

const GENERATED: &str = "fixtures/generated/gateway.parquet";

/// The content strings `examples/generate.rs` writes into the prompt, response, api_key and
/// `other.messages` columns of the generated fixtures (its CANARY_* constants).
const CANARIES: [&str; 5] = [
    "CANARY-PROMPT-do-not-leak",
    "CANARY-RESPONSE-do-not-leak",
    "sk-CANARY-KEY-do-not-leak",
    "CANARY-MESSAGES-do-not-leak",
    "CANARY",
];

/// Every section heading, in page order (both formats).
const SECTIONS: [&str; 10] = [
    "What was analysed",
    "Diagnosis by class",
    "Class share over time",
    "p95 end-to-end over time per channel",
    "Median timeline per class",
    "Latency distributions",
    "Named metrics by model",
    "Named metrics by channel",
    "Data quality",
    "Rules and thresholds",
];

/// The charts of the generated log's report.
const CHARTS: [&str; 6] = [
    "class-share",
    "p95-by-channel",
    "waterfall",
    "cdf-time-to",
    "cdf-phases",
    "cdf-rates",
];

/// Run `tracediag report ARGS… --out DIR/NAME` (from the project root) and return the file.
fn report(dir: &Path, name: &str, args: &[&str]) -> String {
    let out = dir.join(name);
    let mut all: Vec<&str> = vec!["report"];
    all.extend(args);
    let target = out.to_str().unwrap().to_string();
    all.extend(["--out", &target]);
    let o = cli(&all);
    assert_eq!(o.status.code(), Some(0), "{all:?}: {}", stderr(&o));
    assert!(stdout(&o).is_empty(), "the report goes to --out only");
    std::fs::read_to_string(&out).unwrap()
}

/// (chart name, number of `data-series` marks) for every `<svg data-chart=…>`.
fn charts(html: &str) -> Vec<(String, usize)> {
    html.split("</svg>")
        .filter_map(|part| {
            let i = part.find("<svg data-chart=\"")?;
            let rest = &part[i + "<svg data-chart=\"".len()..];
            let name = rest[..rest.find('"')?].to_string();
            Some((name, rest.matches("data-series=\"").count()))
        })
        .collect()
}

fn series_of<'a>(html: &'a str, chart: &str) -> &'a str {
    let start = html
        .find(&format!("<svg data-chart=\"{chart}\""))
        .unwrap_or_else(|| panic!("no chart {chart}"));
    let end = start + html[start..].find("</svg>").unwrap();
    &html[start..end]
}

#[test]
fn markdown_report_of_the_generated_log() {
    let dir = tempfile::tempdir().unwrap();
    let md = report(dir.path(), "report.md", &[GENERATED]);
    for s in SECTIONS {
        assert!(md.contains(&format!("\n## {s}\n")), "missing section {s}");
    }
    insta::assert_snapshot!("markdown_generated", md);
}

#[test]
fn html_report_has_every_section_and_a_chart_with_data_for_each_figure() {
    let dir = tempfile::tempdir().unwrap();
    let html = report(dir.path(), "report.html", &[GENERATED]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    for s in SECTIONS {
        assert!(html.contains(&format!(">{s}</h2>")), "missing section {s}");
    }
    assert!(html.contains("UTC"), "the time zone is said");
    let found = charts(&html);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, CHARTS, "charts in page order");
    for (name, marks) in &found {
        assert!(*marks > 0, "chart {name} has no data-series mark");
        let svg = series_of(&html, name);
        assert!(svg.contains("<title>"), "chart {name} has a title");
        assert!(svg.contains("data-legend"), "chart {name} has a legend");
        assert!(
            svg.contains("(ms") || svg.contains("(%)") || svg.contains("tokens/s"),
            "chart {name} has axis units"
        );
    }
    // The CDFs: one line per named metric.
    let m = charts(&html);
    let count = |n: &str| m.iter().find(|(c, _)| c == n).unwrap().1;
    assert_eq!(
        count("cdf-time-to"),
        6,
        "time to headers … end-to-end, and to the upstream's end"
    );
    assert_eq!(count("cdf-phases") + count("cdf-rates"), 7);
    // Three channels, one line each.
    assert_eq!(count("p95-by-channel"), 3);
    for ch in ["ch-east", "ch-eu", "ch-west"] {
        assert!(series_of(&html, "p95-by-channel").contains(&format!("data-series=\"{ch}\"")));
    }
    // Class share: every class of the generated log appears in some period.
    let share = series_of(&html, "class-share");
    for class in RuleSet::gateway().unwrap().class_order() {
        assert!(
            share.contains(&format!("data-series=\"{class}\"")),
            "class {class} missing from the class-share chart"
        );
    }
    // The waterfall: one end-to-end marker per class with an end-to-end time, phases as bars.
    let wf = series_of(&html, "waterfall");
    assert!(wf.matches("data-series=\"end_to_end_p50\"").count() >= 9);
    assert!(wf.contains("<rect data-series=\"t1_t2\""));
    assert!(wf.contains("<rect data-series=\"t5_t6\""));
}

#[test]
fn html_report_is_self_contained_and_carries_no_content() {
    let dir = tempfile::tempdir().unwrap();
    // The generated fixtures carry canary strings in prompt, response, api_key and (as a
    // JSON string) other.messages; make sure they are there to be leaked.
    for f in ["gateway.jsonl", "gateway_other_string.jsonl"] {
        let text = std::fs::read_to_string(fixture(&format!("generated/{f}"))).unwrap();
        assert!(text.contains(CANARIES[0]) && text.contains(CANARIES[2]));
    }
    for (i, input) in [
        GENERATED,
        "fixtures/generated/gateway.jsonl",
        "fixtures/generated/gateway_other_string.jsonl",
    ]
    .iter()
    .enumerate()
    {
        let html = report(dir.path(), &format!("r{i}.html"), &[input]);
        let lower = html.to_lowercase();
        for bad in [
            "http", "<script", "<img", "<link", "<iframe", "url(", "@import", "src=", "href=",
        ] {
            assert!(!lower.contains(bad), "{input}: the HTML contains `{bad}`");
        }
        for c in CANARIES {
            assert!(!html.contains(c), "{input}: the HTML leaks {c}");
        }
        assert!(!lower.contains("api_key") && !lower.contains("messages"));
        let md = report(dir.path(), &format!("r{i}.md"), &[input]);
        for c in CANARIES {
            assert!(!md.contains(c), "{input}: the Markdown leaks {c}");
        }
        assert!(!md.contains("http"));
    }
}

#[test]
fn reports_are_byte_identical_on_two_runs() {
    let dir = tempfile::tempdir().unwrap();
    for ext in ["html", "md"] {
        let a = report(dir.path(), &format!("a.{ext}"), &[GENERATED]);
        let b = report(dir.path(), &format!("b.{ext}"), &[GENERATED]);
        assert!(a == b, "two runs of the {ext} report differ");
    }
}

#[test]
fn out_refuses_an_input_an_existing_file_and_other_formats() {
    let dir = tempfile::tempdir().unwrap();
    // An input that has a report's extension (read with --input-format).
    let input = dir.path().join("log.md");
    std::fs::copy(fixture("traces/traces.jsonl"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let p = input.to_str().unwrap();
    let err = fails(&[
        "report",
        p,
        "--input-format",
        "jsonl",
        "--out",
        p,
        "--force",
    ]);
    assert!(
        err.contains("refusing to write over an input file"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&input).unwrap(),
        before,
        "the input is untouched"
    );

    // An existing file: refused without --force, replaced with it.
    let out = dir.path().join("report.html");
    std::fs::write(&out, "keep me").unwrap();
    let o = out.to_str().unwrap();
    let err = fails(&["report", "fixtures/traces/traces.jsonl", "--out", o]);
    assert!(err.contains("already exists; pass --force"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
    let ok = cli(&[
        "report",
        "fixtures/traces/traces.jsonl",
        "--out",
        o,
        "--force",
    ]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    // No temporary file is left beside the target.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tracediag-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // Neither .html nor .md.
    let txt = dir.path().join("report.txt");
    let err = fails(&[
        "report",
        "fixtures/traces/traces.jsonl",
        "--out",
        txt.to_str().unwrap(),
    ]);
    assert!(err.contains("expected a .html or .md file"), "{err}");
    assert!(!txt.exists());
    // --out is required.
    fails(&["report", "fixtures/traces/traces.jsonl"]);
}

#[test]
fn period_hour_gives_two_periods_and_the_trend_columns() {
    let dir = tempfile::tempdir().unwrap();
    let md = report(dir.path(), "hour.md", &[GENERATED, "--period", "hour"]);
    // The log starts 78 ms into its first hour and ends at 01:39:58.947: both are partial.
    assert!(
        md.contains("| 2026-11-02 00:00 (partial) | 1800 |"),
        "first hour"
    );
    assert!(
        md.contains("| 2026-11-02 01:00 (partial) | 1200 |"),
        "second hour"
    );
    assert!(
        md.contains("| requests per hour, previous → last hour | share, previous → last hour |")
    );
    assert!(md.contains("Trend: the last hour (2026-11-02 01:00 UTC, partial: data until 2026-11-02T01:39:58.947Z, 1200 requests, 1801 per hour)"));
    // The default class's row carries its rate in both hours.
    assert!(md.contains("| 1370 → 1342 (-28.4) | 76.1% → 74.5% (-1.6 pp) |"));
    let html = report(dir.path(), "hour.html", &[GENERATED, "--period", "hour"]);
    assert!(html.contains("requests per hour, previous → last hour"));
    assert_eq!(
        series_of(&html, "class-share")
            .matches("data-series=\"normal\"")
            .count(),
        2,
        "one bar per hour"
    );

    // A day holds the whole log: one period, no trend columns.
    let md = report(dir.path(), "day.md", &[GENERATED, "--period", "day"]);
    assert!(md.contains("No trend: the requests fall in one day (UTC)."));
    assert!(!md.contains("previous → last"));
    assert!(md.contains("| 2026-11-02 (partial) | 3000 |"));
    // The default period for 100 minutes is the hour.
    let md = report(dir.path(), "auto.md", &[GENERATED]);
    assert!(md.contains("2 periods of one hour (chosen from the span"));
}

/// A log of no request (a JSON array of none) holds nothing a report can be made of: it is
/// refused naming the file (exit 2, no report written), where it was a report of 0
/// requests.
#[test]
fn an_empty_array_is_refused_not_reported() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("none.json");
    std::fs::write(&input, "[]").unwrap();
    let out = dir.path().join("w.md");
    let o = cli(&[
        "report",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("none.json: the file holds an empty JSON array (`[]`) and no row"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn since_and_until_narrow_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let md = report(
        dir.path(),
        "w.md",
        &[GENERATED, "--since", "2026-11-02T01:00:00Z"],
    );
    assert!(md.contains("- **Requests:** 1200\n"));
    assert!(md.contains("- **Window:** 2026-11-02T01:00:00.000Z ≤ received < +∞"));
    assert!(md.contains("No trend: the requests fall in one hour (UTC)."));
}

#[test]
fn the_median_timeline_skips_missing_phases() {
    // The article's traces log no local phases and no upstream end (t6): those phases are
    // null, never 0, and are not drawn.
    let rules = RuleSet::gateway().unwrap();
    let (_, w) = weekly::run(
        &rules,
        &tracediag::analyze::Options {
            inputs: vec![fixture("traces/traces.jsonl")],
            ..Default::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(w.period, Period::Hour);
    let idx = |n: &str| w.phases.iter().position(|p| p.name == n).unwrap();
    assert_eq!(w.waterfall.len(), 3);
    for row in &w.waterfall {
        for missing in ["auth", "other_before_t1", "t5_t6", "t6_t7"] {
            assert_eq!(row.phases[idx(missing)].median, None, "{}", row.class);
            assert_eq!(row.phases[idx(missing)].n, 0);
        }
        assert!(row.phases[idx("t1_t2")].median.is_some());
    }
    let b = w
        .waterfall
        .iter()
        .find(|r| r.class == "action_text_gap")
        .unwrap();
    assert_eq!(
        b.phases[idx("t4_t5")].median,
        Some(5800.0),
        "Trace B waits 5.8 s for text"
    );
    assert_eq!(b.phases[idx("t4_t5")].estimated, 0);
    // t2→t3 needs the t1 offset, which these traces cannot give.
    assert_eq!(b.phases[idx("t2_t3")].median, None);

    let dir = tempfile::tempdir().unwrap();
    let html = report(dir.path(), "t.html", &["fixtures/traces/traces.jsonl"]);
    let wf = series_of(&html, "waterfall");
    assert!(!wf.contains("data-series=\"t5_t6\""));
    assert!(!wf.contains("data-series=\"auth\""));
    assert!(wf.contains("data-series=\"t4_t5\""));
}

#[test]
fn the_thresholds_used_are_listed_after_set() {
    let dir = tempfile::tempdir().unwrap();
    let md = report(
        dir.path(),
        "set.md",
        &[
            "fixtures/traces/traces.jsonl",
            "--set",
            "header_slow_ms=2500",
        ],
    );
    assert!(md.contains("| `header_slow_ms` | 2500 | ms |"), "{md}");
    assert!(md.contains("| 1 | `upstream_headers_slow` | `header_wait_ms >= header_slow_ms AND"));
}

/// The whole HTML of the seed traces' report, snapshotted like every other format (small
/// input, so the file stays readable in review).
#[test]
fn html_report_of_the_seed_traces() {
    let dir = tempfile::tempdir().unwrap();
    let html = report(dir.path(), "traces.html", &["fixtures/traces/traces.jsonl"]);
    insta::assert_snapshot!(html);
}

/// The trend compared a partial last period with a whole one by request count
/// (`60 → 30 -30` read as traffic halving). A whole first hour of one request a minute
/// and a last hour that ends at :29 compare per hour of data; the partial one is marked,
/// and the verdict at the top says so, from the same figures.
#[test]
fn a_partial_last_hour_is_compared_per_hour_of_data() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("log.csv");
    let mut text =
        String::from("request_id,timestamp,upstream_headers_ms,total_handler_ms,outcome\n");
    for i in 0..90i64 {
        // From 2026-11-02T10:00:00Z, one a minute; every tenth a slow header wait.
        let t = 1_793_613_600_000i64 + i * 60_000;
        let headers = if i % 10 == 0 { 9000 } else { 200 };
        text.push_str(&format!("r{i},{t},{headers},{},ok\n", headers + 800));
    }
    std::fs::write(&csv, text).unwrap();
    let md = report(dir.path(), "r.md", &[csv.to_str().unwrap()]);
    assert!(md.contains("Trend: the last hour (2026-11-02 11:00 UTC, partial: data until 2026-11-02T11:29:00.000Z, 30 requests, 62.1 per hour) against the previous hour (2026-11-02 10:00 UTC, 60 requests, 60.0 per hour)"), "{md}");
    assert!(
        md.contains("| 2026-11-02 10:00 | 60 |"),
        "a whole hour is not marked"
    );
    assert!(md.contains("| 2026-11-02 11:00 (partial) | 30 |"));
    // 54 → 27 normal requests: 54.0 → 55.9 per hour, not -27.
    assert!(
        md.contains("| 54.0 → 55.9 (+1.9) | 90.0% → 90.0% (0.0 pp) |"),
        "{md}"
    );
    assert!(md.contains("**Verdict:** Last hour (2026-11-02 11:00 UTC, partial: data until 2026-11-02T11:29:00.000Z): upstream_headers_slow, the largest class other than normal, was 10.0% of requests, the same as 10.0% in the previous hour; no share of a class other than normal changed by 0.1 pp or more.\n"), "{md}");
}

/// The median timeline is the rule table's: a metric that spans t1→t2 placed before the
/// shipped one becomes that phase (named after it), and a table without a metric for
/// t6→t7 has no such phase; `explain`'s waterfall follows the same table.
#[test]
fn the_timeline_follows_the_rule_table() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = std::fs::read_to_string(root().join("rules/gateway.toml")).unwrap();
    let first_metric = shipped.find("[[metrics]]").unwrap();
    let mut edited = shipped[..first_metric].to_string();
    edited.push_str(
        "[[metrics]]\nname = \"header_arrival_ms\"\nexpr = \"upstream_headers_ms\"\ndoc = \"t1→t2 again\"\n\n",
    );
    edited.push_str(&shipped[first_metric..]);
    let post = "[[metrics]]\nname = \"post_upstream_ms\"";
    let at = edited.find(post).unwrap();
    let end = at + edited[at..].find("\n\n").unwrap();
    edited.replace_range(at..end, "");
    let rules = dir.path().join("edited.toml");
    std::fs::write(&rules, edited).unwrap();
    let rules = rules.to_str().unwrap();

    let md = report(dir.path(), "report.md", &[GENERATED, "--rules", rules]);
    let header = md
        .lines()
        .find(|l| l.starts_with("| class | requests | auth (local)"))
        .unwrap();
    assert!(header.contains("| header_arrival_ms (t1→t2) |"), "{header}");
    assert!(!header.contains("Time to Headers"), "{header}");
    assert!(!header.contains("t6→t7"), "{header}");
    assert!(
        header.contains("Visible Generation Window (t5→t6)"),
        "{header}"
    );

    let text = ok(&[
        "explain",
        GENERATED,
        "--rules",
        rules,
        "--request-id",
        "req-0000002",
    ]);
    let t12 = text
        .lines()
        .find(|l| l.trim_start().starts_with("t1→t2"))
        .unwrap();
    assert!(t12.contains("header_arrival_ms"), "{t12}");
    // Without a metric for t6→t7, the difference of its two t0-origin points.
    let t67 = text
        .lines()
        .find(|l| l.trim_start().starts_with("t6→t7"))
        .unwrap();
    assert!(
        t67.contains("total_handler_ms - upstream_done_ms (both ms since t0)"),
        "{t67}"
    );
}

/// A log large enough to be sampled (786,432 requests or more: its first rows guess where
/// every figure's ranks are, and pass 1 keeps the values there) gives the report it gives
/// unsampled: a window holding every request turns the sample off, and the values pass
/// reads every figure. The Markdown differs only in the line naming the window.
#[test]
fn a_sampled_report_equals_the_unsampled_one() {
    use polars::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let path = PlRefPath::try_from_path(Path::new(GENERATED)).unwrap();
    let base = LazyFrame::scan_parquet(path, ScanArgsParquet::default())
        .unwrap()
        .collect()
        .unwrap();
    // 267 copies of the generated log's 3,000 requests, each copy's ids its own.
    let copies: Vec<LazyFrame> = (0..267)
        .map(|k| {
            base.clone().lazy().with_column(
                concat_str([col("request_id"), lit(format!("-{k}"))], "", false)
                    .alias("request_id"),
            )
        })
        .collect();
    let mut big = concat(copies, UnionArgs::default())
        .unwrap()
        .collect()
        .unwrap();
    assert!(big.height() >= 786_432, "{}", big.height());
    let file = dir.path().join("big.parquet");
    ParquetWriter::new(std::fs::File::create(&file).unwrap())
        .finish(&mut big)
        .unwrap();
    let input = file.to_str().unwrap();
    let sampled = report(dir.path(), "sampled.md", &[input]);
    let unsampled = report(
        dir.path(),
        "unsampled.md",
        &[input, "--since", "1970-01-01T00:00:00Z"],
    );
    let without_window = |md: &str| -> String {
        md.lines()
            .filter(|l| !l.starts_with("- **Window:**"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(unsampled.contains("- **Window:**"));
    assert_eq!(without_window(&sampled), without_window(&unsampled));
}
