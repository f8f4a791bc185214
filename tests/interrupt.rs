//! An interrupted run (SIGTERM, SIGINT) leaves neither a partial output nor a temporary
//! file: outputs are renamed into place only when complete, and the signal handler removes
//! the temporary file of a write in progress. Killed at many moments of a large run.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use polars::prelude::*;

#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_no_partial_output_or_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    // About 30 MB: the generated CSV's rows, forty times.
    let src = std::fs::read_to_string(fixture("generated/gateway.csv")).unwrap();
    let (header, body) = src.split_once('\n').unwrap();
    let big = dir.path().join("big.csv");
    let mut text = format!("{header}\n");
    for _ in 0..40 {
        text.push_str(body);
    }
    std::fs::write(&big, text).unwrap();
    let rows = 40 * 3000;

    let mut interrupted = 0;
    for (k, delay_ms) in [100u64, 300, 600, 900, 1300, 1800, 2500, 3500]
        .into_iter()
        .enumerate()
    {
        let signal = if k % 2 == 0 { "-TERM" } else { "-INT" };
        let out = dir.path().join("tagged.parquet");
        let _ = std::fs::remove_file(&out);
        let mut child = Command::new(bin())
            .args([
                "analyze",
                big.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--format",
                "json",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status();
        let status = child.wait().unwrap();
        let leftovers: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".tracediag-"))
            .collect();
        assert!(
            leftovers.is_empty(),
            "{signal} after {delay_ms} ms left {leftovers:?}"
        );
        if status.success() {
            // Finished before the signal: the output is whole.
            let f = std::fs::File::open(&out).unwrap();
            assert_eq!(ParquetReader::new(f).finish().unwrap().height(), rows);
        } else {
            interrupted += 1;
            // The shell's code for the signal: 128 + its number.
            let code = if signal == "-TERM" { 143 } else { 130 };
            assert_eq!(status.code(), Some(code), "{signal} after {delay_ms} ms");
            assert!(
                !out.exists(),
                "{signal} after {delay_ms} ms left a partial {}",
                out.display()
            );
        }
    }
    assert!(
        interrupted > 0,
        "no run was interrupted: the input is too small to test this"
    );
}
