//! JSON input: JSON lines (one object per line, scanned lazily) and a JSON array of
//! objects (read at once: an array has to be parsed whole).

use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};

/// Scan JSON lines lazily: the file itself, or (when the row check repaired it) the
/// repaired copy, read the same way so only the mapped columns are ever
/// materialised. polars reads with the schema the row check found (`types`): it does not
/// infer one, and keys the mapping cannot read never become columns.
pub fn scan_lines(
    path: &Path,
    repaired: Option<&super::spool::Spooled>,
    types: &super::rowcheck::Types,
) -> Result<LazyFrame> {
    if repaired.is_some_and(|r| std::fs::metadata(r.path()).is_ok_and(|m| m.len() == 0)) {
        // Every row was bad and skipped: no rows, no columns.
        return Ok(DataFrame::empty().lazy());
    }
    LazyJsonLineReader::new_with_sources(super::scan_sources(path, repaired)?)
        .with_schema(Some(Arc::new(types.schema())))
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as JSON lines: {}", super::polars_message(&e)),
            )
        })
}

/// A JSON array of `elements` objects, read with the schema the row check found (`types`:
/// the keys the mapping may read, typed by what they hold): content keys never become
/// columns.
pub fn read_array(
    path: &Path,
    types: &super::rowcheck::Types,
    elements: usize,
) -> Result<LazyFrame> {
    let schema = types.schema();
    if schema.is_empty() {
        // No key the mapping reads: the requests are still there, each with nothing known.
        return Ok(DataFrame::empty_with_height(elements).lazy());
    }
    let file =
        std::fs::File::open(path).map_err(|e| Error::input(path, format!("cannot open: {e}")))?;
    let df = JsonReader::new(file)
        .with_json_format(JsonFormat::Json)
        .with_schema(Arc::new(schema))
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as a JSON array: {}", super::polars_message(&e)),
            )
        })?;
    Ok(df.lazy())
}
