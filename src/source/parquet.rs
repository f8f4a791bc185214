//! Parquet input: a lazy scan, so only the projected columns are ever decoded.

use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};

pub fn scan(path: &Path) -> Result<LazyFrame> {
    let p = super::read_path(path).map_err(|e| Error::input(path, super::polars_message(&e)))?;
    LazyFrame::scan_parquet(p, ScanArgsParquet::default()).map_err(|e| {
        Error::input(
            path,
            format!("cannot read as Parquet: {}", super::polars_message(&e)),
        )
    })
}
