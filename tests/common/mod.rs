//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use polars::prelude::*;
use tracediag::analyze::{self, Collected, Options};
use tracediag::ruleset::RuleSet;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether the real files of `../shared/external/` (beside the checkout) are there. Those
/// whose repository states no licence are not vendored into `fixtures/external/`; the
/// tests that read them say so on stderr and check nothing when the folder is absent.
pub fn shared_external(test: &str) -> bool {
    let dir = root().join("../shared/external");
    let there = dir.is_dir();
    if !there {
        eprintln!(
            "{test}: not run: {} is not beside the checkout (its files are not vendored: no licence stated)",
            dir.display()
        );
    }
    there
}

pub fn fixture(rel: &str) -> PathBuf {
    root().join("fixtures").join(rel)
}

/// The analysis with its per-request frame collected, so tests can look at every row.
pub fn run(rules: &RuleSet, files: &[PathBuf]) -> Collected {
    analyze::run(
        rules,
        &Options {
            inputs: files.to_vec(),
            ..Default::default()
        },
    )
    .and_then(|a| a.collected())
    .unwrap_or_else(|e| panic!("analysis failed: {e}"))
}

/// (request_id, class, classes) for every row, in input order.
pub fn classes(a: &Collected) -> Vec<(String, String, String)> {
    let df = &a.frame;
    let ids = df.column("request_id").unwrap().str().unwrap().clone();
    let cls = df.column("class").unwrap().str().unwrap().clone();
    let tags = df.column("classes").unwrap().str().unwrap().clone();
    (0..df.height())
        .map(|i| {
            (
                ids.get(i).unwrap_or("").to_string(),
                cls.get(i).unwrap().to_string(),
                tags.get(i).unwrap().to_string(),
            )
        })
        .collect()
}

pub fn f64_col(a: &Collected, name: &str) -> Vec<Option<f64>> {
    let c = a
        .frame
        .column(name)
        .unwrap()
        .cast(&DataType::Float64)
        .unwrap();
    let ca = c.f64().unwrap();
    (0..ca.len()).map(|i| ca.get(i)).collect()
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tracediag"))
}

/// Run the binary from the project root (so fixture paths in output are relative), with
/// the fixed layout of a pipe whatever `COLUMNS` the test runner has.
pub fn cli(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(root())
        .env_remove("COLUMNS")
        .output()
        .expect("the tracediag binary runs")
}

/// Run the binary as on a terminal `columns` wide (`COLUMNS` set).
pub fn cli_at(columns: u16, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(root())
        .env("COLUMNS", columns.to_string())
        .output()
        .expect("the tracediag binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Run the binary, expect exit 0, return stdout.
pub fn ok(args: &[&str]) -> String {
    let out = cli(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// Run the binary, expect exit 2 without a panic, return stderr.
pub fn fails(args: &[&str]) -> String {
    let out = cli(args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} should fail: {}",
        stdout(&out)
    );
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    err
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}
