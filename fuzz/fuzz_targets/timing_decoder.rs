//! JSONL + `other` timing decoder: the oracle in `fuzz/oracle/timing_decoder.rs` (load,
//! collect, and no whole-file error for what one row holds) on every input.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../oracle/timing_decoder.rs"]
mod oracle;
// What the oracle shares with another (`crate::text_log`).
#[path = "../oracle/text_log.rs"]
mod text_log;

fuzz_target!(|data: &[u8]| oracle::check(data));
