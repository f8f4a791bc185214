//! CSV decoder: the oracle in `fuzz/oracle/csv_decoder.rs` (load, collect, no whole-file
//! error for what one row holds, and the copy made in the row check's reading equal to
//! polars' reading of a request's rows) on every input.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../oracle/csv_decoder.rs"]
mod oracle;
// What the oracle shares with another (`crate::text_log`).
#[path = "../oracle/text_log.rs"]
mod text_log;

fuzz_target!(|data: &[u8]| oracle::check(data));
