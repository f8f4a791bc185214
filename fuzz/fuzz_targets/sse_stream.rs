//! `tracediag sse` on any bytes: the capture reader, the WHATWG wire parser, the per-API
//! classifier and the timeline (`fuzz/oracle/sse_stream.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../oracle/sse_stream.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| oracle::check(data));
