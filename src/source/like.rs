//! `rules --emit sql --like FILE`: a sample of a warehouse table (one Parquet part, a few
//! JSON lines) read the way `analyze` reads a log, so that the emitted query can map the
//! table's own columns onto the canonical fields exactly as `analyze` maps the file.
//!
//! The sample is loaded with the same code a log is (`load_mapped`: format detection, the
//! tool adapters, `map_columns`, the user's `--map`/`--schema`); what the SQL writer gets
//! is plain data: the format, the mapping, and the file's own top-level columns (which
//! the query passes through, and which a tool's adapter reads by name).

use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::{columns::ColumnMap, Content, InputFormat, Mapping};
use crate::error::{Error, Result};

/// A sample of a table, as `analyze` reads it.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The file as named on the command line.
    pub path: PathBuf,
    /// How it was read: a plain log (Parquet, CSV, JSON) or a tool's log.
    pub format: InputFormat,
    /// Where each canonical field is in the file, with the user's entries applied.
    pub mapping: Mapping,
    /// The file's own top-level columns, in its order (a JSON file's keys of its first
    /// rows).
    pub columns: Vec<String>,
    /// The columns of a JSON file that hold objects in its first rows. `analyze` reads a
    /// path the user maps into one (`--map output_tokens=usage.out`) from the object's
    /// JSON text; an engine reads such a column as a struct, so the query reads it there.
    pub objects: Vec<String>,
}

/// Read `path` as `analyze` would, with the user's `columns`: an unreadable file, or one
/// `analyze` would refuse, is an error naming it.
pub fn sample(path: &Path, columns: &ColumnMap) -> Result<Sample> {
    if path.as_os_str() == super::spool::STDIN_ARG {
        return Err(Error::Usage(
            "--like reads a file (a sample of the table), not standard input".into(),
        ));
    }
    let loaded = super::load_mapped(
        &[path.to_path_buf()],
        None,
        super::BadRowPolicy::Keep,
        &[],
        None,
        super::COHORT_ROWS,
        columns,
    )?;
    let input = loaded
        .inputs
        .into_iter()
        .next()
        .expect("one input read, one input described");
    let read = input.read_from.read.as_path();
    let names = top_level(read, &input.path)?;
    Ok(Sample {
        objects: objects(read),
        path: input.path,
        format: input.format,
        mapping: input.mapping,
        columns: names,
    })
}

/// The top-level columns of the file at `read` (named `name` in errors): a table's
/// schema, a JSON log's keys.
fn top_level(read: &Path, name: &Path) -> Result<Vec<String>> {
    let schema_of = |lf: Result<LazyFrame>| -> Result<Vec<String>> {
        let schema = lf?
            .collect_schema()
            .map_err(|e| Error::input(name, super::polars_message(&e)))?;
        Ok(schema.iter_names().map(|n| n.to_string()).collect())
    };
    Ok(match super::sniff::physical(read)? {
        Content::Log(InputFormat::Parquet) => schema_of(super::parquet::scan(read))?,
        Content::Log(InputFormat::Csv) => schema_of(super::csv::scan(read, None))?,
        c => super::recognise::json_keys(read, c),
    })
}

/// How many of a JSON file's first rows `objects` looks at.
const OBJECT_ROWS: usize = 100;

/// The keys whose values are JSON objects in the first rows of a JSON-lines file or a
/// JSON array (none for a table: its structs are in its schema).
fn objects(read: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(read) else {
        return vec![];
    };
    let text = text.trim_start_matches('\u{feff}');
    let rows: Vec<serde_json::Value> = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Array(rows)) => rows.into_iter().take(OBJECT_ROWS).collect(),
        _ => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(OBJECT_ROWS)
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
    };
    let mut keys: Vec<String> = vec![];
    for row in rows.iter().filter_map(serde_json::Value::as_object) {
        for (k, v) in row {
            if v.is_object() && !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys
}
