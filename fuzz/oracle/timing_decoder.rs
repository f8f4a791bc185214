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
//! reader reads (`text_log`).

use tracediag::error::Error;
use tracediag::source::InputFormat;

use crate::text_log;

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
        // Binary frames of another stream format, told by their first bytes.
        || message.contains("an AWS event-stream body")
        // An Azure RequestResponse log (known by its first line) is read whole.
        || message.contains("not UTF-8 text (invalid byte at offset")
}

/// Panics when `data`, read as a JSON-lines log, is refused whole, does not collect, or
/// its copy disagrees with polars' reading of a request's rows.
pub fn check(data: &[u8]) {
    let Some(whole) = text_log::read_whole(data, ".jsonl", |e| acceptable(data, e)) else {
        return;
    };
    if whole
        .inputs
        .iter()
        .all(|i| i.format == InputFormat::JsonLines)
    {
        text_log::requests_read_alone_agree(&whole, |_| false);
    }
}
