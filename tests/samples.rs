//! The sample pairs in fixtures/samples: the commands README.md shows on them run as
//! written (with this build's binary in place of the installed `tracediag`).

mod common;

use common::*;

/// README's indented command lines that call `tracediag` on a file in fixtures/samples.
fn readme_sample_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    readme
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("tracediag ") && l.contains("fixtures/samples/"))
        .map(String::from)
        .collect()
}

/// Split a command line as a shell would (single quotes only); a quoted glob stays one
/// word, as the shell passes it.
fn words(line: &str) -> Vec<String> {
    let mut out = vec![];
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

#[test]
fn readme_shows_compare_and_baseline_on_the_samples_and_both_run() {
    let commands = readme_sample_commands();
    assert!(
        commands
            .iter()
            .any(|c| c.starts_with("tracediag compare fixtures/samples/")),
        "{commands:?}"
    );
    assert!(
        commands
            .iter()
            .any(|c| c.starts_with("tracediag analyze ") && c.contains("--baseline")),
        "{commands:?}"
    );
    for command in &commands {
        let argv = words(command);
        let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
        let out = cli(&args);
        assert_eq!(out.status.code(), Some(0), "{command}: {}", stderr(&out));
        let text = stdout(&out);
        if args[0] == "compare" {
            assert!(
                text.contains("A: fixtures/samples/before/gateway.parquet — 600 requests"),
                "{text}"
            );
            assert!(
                text.contains("B: fixtures/samples/after/gateway.parquet — 600 requests"),
                "{text}"
            );
            assert!(text.contains("Named metrics"), "{text}");
        } else {
            // The baseline is the other export, not the run's own earlier windows.
            assert!(
                text.contains(
                    "baseline: per-deployment medians of every window in fixtures/samples/azure-baseline/"
                ),
                "{text}"
            );
        }
    }
}

#[test]
fn readme_shows_the_install_step_beside_the_set_up_commands() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let setup = readme
        .split("## Set-up")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap();
    assert!(setup.contains("    cargo install --path .\n"), "{setup}");
    // Every sample the README names is in the repository.
    for command in readme_sample_commands() {
        for w in words(&command)
            .iter()
            .filter(|w| w.starts_with("fixtures/"))
        {
            let found = glob::glob(&root().join(w).display().to_string())
                .unwrap()
                .count();
            assert!(found > 0, "{w} matches no file");
        }
    }
}
