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

pub fn scan(path: &Path) -> Result<LazyFrame> {
    let p = PlRefPath::try_from_path(path)
        .map_err(|e| Error::input(path, super::polars_message(&e)))?;
    let sep = separator(path);
    LazyCsvReader::new(p)
        .with_has_header(true)
        .with_separator(sep)
        .with_infer_schema_length(Some(0))
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as CSV: {}", super::polars_message(&e)),
            )
        })
}

/// CSV held in memory (a repaired copy, see `rowcheck`), scanned lazily like a file so
/// that only the mapped columns are ever materialised.
pub fn scan_from(path: &Path, bytes: Vec<u8>) -> Result<LazyFrame> {
    let sources = ScanSources::Buffers([polars_buffer::Buffer::from(bytes)].into());
    LazyCsvReader::new_with_sources(sources)
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
