//! CSV input: a lazy scan with a header row. Types are inferred from the whole file so a
//! timing column that is empty for the first rows is not guessed as text; the canonical
//! mapping casts what remains.

use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};

pub fn scan(path: &Path) -> Result<LazyFrame> {
    let p = PlRefPath::try_from_path(path)
        .map_err(|e| Error::input(path, super::polars_message(&e)))?;
    let sep = if path.extension().and_then(|e| e.to_str()) == Some("tsv") {
        b'\t'
    } else {
        b','
    };
    LazyCsvReader::new(p)
        .with_has_header(true)
        .with_separator(sep)
        .with_infer_schema_length(None)
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as CSV: {}", super::polars_message(&e)),
            )
        })
}
