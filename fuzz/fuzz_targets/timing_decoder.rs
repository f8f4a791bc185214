//! JSONL + `other` timing decoder, end to end through `analyze::run` with the shipped
//! gateway table: an Err is fine, a panic is not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Write;
use tracediag::analyze::{run, Options};
use tracediag::ruleset::RuleSet;

fuzz_target!(|data: &[u8]| {
    let rules = RuleSet::gateway().expect("the shipped gateway table loads");
    let mut file = tempfile::Builder::new()
        .suffix(".jsonl")
        .tempfile()
        .expect("temp file");
    file.write_all(data).expect("write temp file");
    file.flush().expect("flush temp file");
    let opts = Options {
        inputs: vec![file.path().to_path_buf()],
        ..Default::default()
    };
    let _ = run(&rules, &opts);
});
