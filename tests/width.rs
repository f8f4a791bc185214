//! Terminal width: with `COLUMNS` (or a terminal) every terminal output fits the width,
//! tables and prose lines alike, and names are never split; without it (a file or a pipe)
//! the fixed layout the other snapshots hold.

mod common;

use common::*;

/// Every command's terminal output, by name.
fn outputs() -> Vec<(&'static str, Vec<String>)> {
    let mut azure = vec!["analyze".to_string()];
    let mut files: Vec<String> = std::fs::read_dir(fixture("azure/generated"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    files.sort();
    azure.extend(files);
    let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    vec![
        (
            "analyze",
            words("analyze fixtures/generated/gateway.parquet"),
        ),
        (
            "analyze_by",
            words("analyze fixtures/generated/gateway.parquet --by model,channel"),
        ),
        (
            "analyze_traces",
            words("analyze fixtures/traces/traces.jsonl"),
        ),
        ("rules", words("rules")),
        ("rules_azure", words("rules --rules rules/azure.toml")),
        ("fields", words("fields")),
        ("fields_azure", words("fields --catalogue azure")),
        (
            "explain_request",
            words("explain fixtures/traces/traces.jsonl --request-id trace-b"),
        ),
        (
            "explain_class",
            words("explain fixtures/generated/gateway.parquet --class action_text_gap --limit 5"),
        ),
        (
            "compare",
            words("compare fixtures/generated/gateway.parquet --split channel=ch-east,ch-west"),
        ),
        (
            "throughput",
            words("throughput fixtures/generated/gateway.parquet --by channel"),
        ),
        ("azure_analyze", azure),
    ]
}

fn at(columns: u16, args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = cli_at(columns, &args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// Every class, metric and field name the outputs can show: none may be cut in two.
fn names() -> Vec<String> {
    let mut names = vec![];
    for rules in [
        tracediag::ruleset::RuleSet::gateway().unwrap(),
        tracediag::ruleset::RuleSet::azure().unwrap(),
    ] {
        names.extend(rules.class_order().iter().map(|c| c.to_string()));
        names.extend(rules.metrics.iter().map(|m| m.name.clone()));
        names.extend(rules.params.iter().map(|p| p.name.clone()));
    }
    for f in tracediag::catalogue::FIELDS {
        names.push(f.name.to_string());
        names.extend(f.aliases.iter().map(|a| a.to_string()));
    }
    names.extend(
        tracediag::catalogue::Catalogue::Azure
            .fields()
            .iter()
            .map(|f| f.name.to_string()),
    );
    names.sort();
    names.dedup();
    names
}

#[test]
fn at_80_columns_no_line_is_longer_than_80_and_no_name_is_split() {
    let names = names();
    for (name, args) in outputs() {
        let text = at(80, &args);
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{name}: a line of {} columns:\n{line}",
                line.chars().count()
            );
        }
        // A name cut by a line break leaves a piece with an underscore at the end of a
        // line or of a table cell that begins a name without being one.
        for piece in text.lines().flat_map(|l| l.split(['│', '┆'])) {
            let Some(word) = piece
                .trim_end()
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .filter(|w| w.contains('_') && w.trim_matches('_').len() > 1)
            else {
                continue;
            };
            if names.iter().any(|n| n == word) {
                continue;
            }
            if let Some(n) = names
                .iter()
                .find(|n| n.len() > word.len() && n.starts_with(word))
            {
                panic!("{name}: `{n}` split, `{word}` ends a line:\n{text}");
            }
        }
    }
}

#[test]
fn at_120_columns_and_wider_every_line_fits_too() {
    for (name, args) in outputs() {
        let text = at(132, &args);
        assert!(
            text.lines().all(|l| l.chars().count() <= 132),
            "{name}:\n{text}"
        );
    }
}

#[test]
fn snapshots_at_80_columns() {
    for (name, args) in outputs() {
        if matches!(
            name,
            "analyze_traces" | "rules" | "explain_request" | "compare"
        ) {
            insta::assert_snapshot!(format!("{name}_at_80"), at(80, &args));
        }
    }
}

#[test]
fn without_columns_a_pipe_gets_the_fixed_layout() {
    // The same text as the fixed-layout snapshots in tests/cli.rs.
    let args = ["analyze", "fixtures/traces/traces.jsonl"];
    let fixed = stdout(&cli(&args));
    assert_ne!(fixed, at(80, &words(&args)));
    assert!(fixed.lines().any(|l| l.chars().count() > 80), "{fixed}");
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}
