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
    scan_lines_with(path, repaired, types.schema())
}

/// `scan_lines` with the schema given (the row check's, widened by the user's columns:
/// `columns::json_schema`).
pub fn scan_lines_with(
    path: &Path,
    repaired: Option<&super::spool::Spooled>,
    schema: Schema,
) -> Result<LazyFrame> {
    if repaired.is_some_and(|r| std::fs::metadata(r.path()).is_ok_and(|m| m.len() == 0)) {
        // Every row was bad and skipped: no rows, no columns.
        return Ok(DataFrame::empty().lazy());
    }
    LazyJsonLineReader::new_with_sources(super::scan_sources(path, repaired)?)
        .with_schema(Some(Arc::new(schema)))
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as JSON lines: {}", super::polars_message(&e)),
            )
        })
}

/// A JSON array of `elements` objects, read with `schema`: the row check's (`Types`: the
/// keys the mapping may read, typed by what they hold), widened by the user's columns
/// (`columns::json_schema`). Content keys never become columns.
pub fn read_array(path: &Path, schema: Schema, elements: usize) -> Result<LazyFrame> {
    if schema.is_empty() {
        // No key the mapping reads: the requests are still there, each with nothing known.
        return Ok(DataFrame::empty_with_height(elements).lazy());
    }
    Ok(read_with_schema(path, schema, "a JSON array")?.lazy())
}

/// A JSON document (an array of objects, or one object) read whole with `schema`: only
/// its keys become columns. `what` names the form in the error.
pub fn read_with_schema(path: &Path, schema: Schema, what: &str) -> Result<DataFrame> {
    let file =
        std::fs::File::open(path).map_err(|e| Error::input(path, format!("cannot open: {e}")))?;
    JsonReader::new(file)
        .with_json_format(JsonFormat::Json)
        .with_schema(Arc::new(schema))
        .finish()
        .map_err(|e| {
            Error::input(
                path,
                format!("cannot read as {what}: {}", super::polars_message(&e)),
            )
        })
}

/// The rows of a tool's own JSON log with only `keys` read, each as text (numbers and
/// booleans as their JSON text, objects as JSON text): the adapters' reader. JSON lines
/// are scanned lazily (from the row check's repaired copy when there is one); a JSON array
/// or one document is parsed whole, as any array is, its rows being the array at `inside`
/// (e.g. new-api's `{"data": {"items": […]}}` page), else the array or the document itself.
/// Keys not listed never become columns, so content is never read into a frame.
pub fn read_keys(
    path: &Path,
    lines: bool,
    repaired: Option<&super::spool::Spooled>,
    keys: &[&str],
    inside: &[&str],
) -> Result<LazyFrame> {
    if lines {
        let schema: Schema = keys
            .iter()
            .map(|k| Field::new((*k).into(), DataType::String))
            .collect();
        return LazyJsonLineReader::new_with_sources(super::scan_sources(path, repaired)?)
            .with_schema(Some(Arc::new(schema)))
            .finish()
            .map_err(|e| {
                Error::input(
                    path,
                    format!("cannot read as JSON lines: {}", super::polars_message(&e)),
                )
            });
    }
    let file =
        std::fs::File::open(path).map_err(|e| Error::input(path, format!("cannot open: {e}")))?;
    let mut doc: serde_json::Value = serde_json::from_reader(std::io::BufReader::new(file))
        .map_err(|e| Error::input(path, format!("not valid JSON: {e}")))?;
    let nested = if inside.is_empty() {
        None
    } else {
        inside
            .iter()
            .try_fold(&mut doc, |v, k| v.get_mut(*k))
            .filter(|v| v.is_array())
            .map(std::mem::take)
    };
    let rows = match nested {
        Some(serde_json::Value::Array(rows)) => rows,
        _ => match doc {
            serde_json::Value::Array(rows) => rows,
            one => vec![one],
        },
    };
    let mut columns: Vec<Vec<Option<String>>> = vec![Vec::with_capacity(rows.len()); keys.len()];
    for (i, row) in rows.iter().enumerate() {
        let serde_json::Value::Object(row) = row else {
            return Err(Error::input(
                path,
                format!("element {}: expected a JSON object", i + 1),
            ));
        };
        for (k, column) in keys.iter().zip(columns.iter_mut()) {
            column.push(match row.get(*k) {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                Some(v) => Some(v.to_string()),
            });
        }
    }
    let columns: Vec<Column> = keys
        .iter()
        .zip(columns)
        .map(|(k, v)| Column::new((*k).into(), v))
        .collect();
    DataFrame::new(rows.len(), columns)
        .map(|df| df.lazy())
        .map_err(|e| Error::input(path, super::polars_message(&e)))
}
