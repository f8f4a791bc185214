//! JSON input: JSON lines (one object per line, scanned lazily) and a JSON array of
//! objects (read at once: an array has to be parsed whole).

use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};

/// Scan JSON lines lazily: the file itself, or (when the row check repaired it) the
/// repaired copy held in memory, read the same way so only the mapped columns are ever
/// materialised.
pub fn scan_lines(path: &Path, repaired: Option<super::Bytes>) -> Result<LazyFrame> {
    if repaired.as_ref().is_some_and(|b| b.is_empty()) {
        // Every row was bad and skipped: no rows, no columns.
        return Ok(DataFrame::empty().lazy());
    }
    LazyJsonLineReader::new_with_sources(super::scan_sources(path, repaired)?)
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
