//! CSV input: a lazy scan with a header row, every column read as text. The canonical
//! mapping casts each field to its type, so a stray `n/a` deep in a timing column becomes
//! a counted unparsed value instead of failing the whole read, and no pass over the file
//! is spent guessing types.

use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};

/// The separator: tab for `.tsv`, else comma.
pub fn separator(path: &Path) -> u8 {
    if path.extension().and_then(|e| e.to_str()) == Some("tsv") {
        b'\t'
    } else {
        b','
    }
}

/// Scan a CSV lazily: the file itself, or (when the row check repaired it) the repaired
/// copy, read the same way so only the mapped columns are ever
/// materialised.
pub fn scan(path: &Path, repaired: Option<&super::spool::Spooled>) -> Result<LazyFrame> {
    LazyCsvReader::new_with_sources(super::scan_sources(path, repaired)?)
        .with_has_header(true)
        .with_separator(separator(path))
        .with_infer_schema_length(Some(0))
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as CSV: {}", super::polars_message(&e)),
            )
        })
}
