//! JSON input: JSON lines (one object per line, scanned lazily) and a JSON array of
//! objects (read at once: an array has to be parsed whole).

use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};

pub fn scan_lines(path: &Path) -> Result<LazyFrame> {
    let p = PlRefPath::try_from_path(path)
        .map_err(|e| Error::input(path, super::polars_message(&e)))?;
    LazyJsonLineReader::new(p)
        .with_infer_schema_length(None)
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as JSON lines: {}", super::polars_message(&e)),
            )
        })
}

/// JSON lines held in memory (a repaired copy, see `rowcheck`), scanned lazily like a
/// file so that only the mapped columns are ever materialised.
pub fn scan_lines_from(path: &Path, bytes: Vec<u8>) -> Result<LazyFrame> {
    if bytes.is_empty() {
        // Every row was bad and skipped: no rows, no columns.
        return Ok(DataFrame::empty().lazy());
    }
    let sources = ScanSources::Buffers([polars_buffer::Buffer::from(bytes)].into());
    LazyJsonLineReader::new_with_sources(sources)
        .with_infer_schema_length(None)
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as JSON lines: {}", super::polars_message(&e)),
            )
        })
}

/// A JSON array of objects, keeping only `keys` (the top-level keys the mapping may
/// read, from `rowcheck::check_json_array`): content keys never become columns.
pub fn read_array(path: &Path, keys: Vec<String>) -> Result<LazyFrame> {
    if keys.is_empty() {
        return Ok(DataFrame::empty().lazy());
    }
    let file =
        std::fs::File::open(path).map_err(|e| Error::input(path, format!("cannot open: {e}")))?;
    let df = JsonReader::new(file)
        .with_json_format(JsonFormat::Json)
        .infer_schema_len(None)
        .with_projection(Some(keys.into_iter().map(PlSmallStr::from).collect()))
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as a JSON array: {}", super::polars_message(&e)),
            )
        })?;
    Ok(df.lazy())
}
