//! The `timing_decoder` oracle, shared by the fuzz target and `tests/fuzz_regressions.rs`
//! (both include this file with `#[path]`): the bytes as a `.jsonl` file through
//! `source::load` (row check, the copy made in its reading, `source::copy::jsonl`, or
//! polars' reader, the canonical mapping), the canonical frame collected.
//!
//! Not only "no panic": a JSON-lines file is read row by row, so with the default
//! `--on-bad-row keep` the only errors allowed are those of the whole file (empty, blank
//! lines only, not the format its first bytes claim) or one naming its line; the frame must
//! collect; and when rows were bad, `--on-bad-row error` must stop, naming a line. Any other
//! outcome panics: the file would have been refused whole for what one row holds. And for a
//! file read as JSON lines, the copy made in the check's reading must hold what polars'
//! reader reads (`alone`).

use std::io::Write;

use tracediag::error::Error;
use tracediag::source::{self, BadRowPolicy, InputFormat};

use crate::alone;

/// An error that may end the read of a whole file: it names a line, or the file as a whole
/// is not a request log.
fn acceptable(data: &[u8], e: &Error) -> bool {
    let message = e.to_string();
    let names_a_line = message
        .split("line ")
        .skip(1)
        .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    names_a_line
        // Refused for what the whole file lacks: no timing field in any row, or no row
        // that can be read (never for what one row holds).
        || matches!(e, Error::Unusable(_))
        || message.contains("the file is empty")
        || message.contains("only blank lines")
        // Parquet's magic bytes first: read as Parquet, which fails as a whole.
        || data.starts_with(b"PAR1")
        // An Azure RequestResponse log (known by its first line) is read whole.
        || message.contains("not UTF-8 text (invalid byte at offset")
}

/// Panics when `data`, read as a JSON-lines log, is refused whole or does not collect.
pub fn check(data: &[u8]) {
    let mut file = tempfile::Builder::new()
        .suffix(".jsonl")
        .tempfile()
        .expect("temp file");
    file.write_all(data).expect("write temp file");
    file.flush().expect("flush temp file");
    let paths = vec![file.path().to_path_buf()];
    let (lf, inputs) = match source::load(&paths, None, BadRowPolicy::Keep, &[]) {
        Err(e) => {
            assert!(acceptable(data, &e), "the whole file refused: {e}");
            return;
        }
        Ok(loaded) => loaded,
    };
    let all = match lf.collect() {
        Ok(all) => all,
        Err(e) => panic!("the canonical frame does not collect: {e}"),
    };
    if inputs.iter().any(|i| !i.bad_rows.is_empty()) {
        match source::load(&paths, None, BadRowPolicy::Error, &[]) {
            Ok(_) => panic!("bad rows under keep, none under error"),
            Err(e) => assert!(acceptable(data, &e), "--on-bad-row error: {e}"),
        }
    }
    if inputs.iter().all(|i| i.format == InputFormat::JsonLines) {
        alone::requests_read_alone_agree(&paths, &all, |_| false);
    }
}
