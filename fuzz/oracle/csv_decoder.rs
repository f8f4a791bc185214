//! The `csv_decoder` oracle, shared by the fuzz target and `tests/fuzz_regressions.rs`
//! (both include this file with `#[path]`): the bytes as a `.csv` file through
//! `source::load` (the row check, and the copy made in its reading, `source::copy::csv`,
//! or polars' reader on the repaired rows), the canonical frame collected.
//!
//! Not only "no panic". As for JSON lines, with `--on-bad-row keep` the only errors
//! allowed are those of the whole file or one naming its line, the frame must collect, and
//! when rows were bad `--on-bad-row error` must stop, naming a line. And the copy made in
//! the check's reading must hold what polars' CSV reader reads (`text_log`).

use tracediag::error::Error;

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
        || matches!(e, Error::Unusable(_))
        || message.contains("the file is empty")
        || message.contains("only blank lines")
        // A byte-order mark alone: polars finds no header.
        || message.contains("no data: empty CSV")
        // A header and no row: no request, as an empty file.
        || message.contains("holds a header and no row")
        // Binary frames of another stream format, told by their first bytes.
        || message.contains("an AWS event-stream body")
        // Another format's magic bytes first (Parquet, gzip): read as that, failing whole.
        || data.starts_with(b"PAR1")
        || data.starts_with(&[0x1f, 0x8b])
}

/// Panics when `data`, read as a CSV log, is refused whole, does not collect, or its copy
/// disagrees with polars' reading of a request's rows.
pub fn check(data: &[u8]) {
    let Some(whole) = text_log::read_whole(data, ".csv", |e| acceptable(data, e)) else {
        return;
    };
    // Known and left: quotes the csv crate reads as text (one inside a field that does not
    // begin with one, text after a closing quote) are read so by the row check and so by the
    // copy, but polars' reader, which reads one request's rows, refuses the file over them
    // (fuzz/regressions/csv_decoder-quote-*.csv).
    let quotes_polars_refuses =
        |e: &str| e.contains("CSV malformed") || e.contains("is not properly escaped");
    text_log::requests_read_alone_agree(&whole, quotes_polars_refuses);
}
