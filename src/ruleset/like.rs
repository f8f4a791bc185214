//! `rules --emit sql --like FILE`: the table read through a projection that turns its own
//! columns into the canonical ones exactly as `analyze` turns the sample FILE's: flat
//! names and aliases, paths into structs (`other.timing.x`), fields inside a JSON string
//! (`other` holding `timing`), Unix-time stamps, the user's `--map`, and a new-api log's
//! derivations (`source::newapi`). A canonical field the sample lacks is a typed NULL.
//!
//! Each value is converted as `source::canonical::select` converts it, so that an engine
//! classifies every request as `analyze` does:
//!
//! - text is trimmed of ASCII white space, and blank text is NULL;
//! - a number is read from text with `TRY_CAST` (NULL where it is not a number, as polars'
//!   cast gives), and NaN or ±infinity is NULL (`x - x = 0` holds for finite `x` alone);
//! - a count is a whole number (1.5 tokens is NULL, never 1);
//! - a flag from text is `true`/`1`/`yes` or `false`/`0`/`no` in any case, else NULL;
//! - an outcome is its word (`success` is `ok`, `canceled` is `cancelled`), else the
//!   HTTP status's;
//! - a Unix time's unit is told by its size, value by value (`source::timestamp`).
//!
//! Every value is read through a cast of the column as the sample has it typed, so a
//! table that types a column otherwise (an engine reads JSON numbers as BIGINT where the
//! new-api adapter reads text) gives the same values.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use polars::prelude::DataType;

use super::sql::{number, string_type, Dialect, Source};
use crate::catalogue::{self, Kind};
use crate::error::{Error, Result};
use crate::source::columns::Unit;
use crate::source::like::Sample;
use crate::source::{newapi, InputFormat, Origin, OUTCOME_WORDS};

/// The name of the expression that holds the canonical columns.
const CANONICAL: &str = "canonical";
/// The name of the expression that holds a new-api log's keys as text.
const NEWAPI_TEXT: &str = "newapi_text";

/// How a value is held in the sample, which decides how it is converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// Text (CSV cells, JSON strings, a value inside JSON text).
    Text,
    /// An integer type every value of which is a BIGINT.
    Int,
    /// Any other number (a float, a decimal, an unsigned 64-bit integer).
    Float,
    Bool,
    /// A date-time or a date.
    Time,
    /// A struct or a list: never read as a label (it may hold content).
    Nested,
    /// No value at all.
    Null,
}

impl Held {
    fn of(dtype: &DataType) -> Held {
        match dtype {
            DataType::String => Held::Text,
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32 => Held::Int,
            DataType::Boolean => Held::Bool,
            DataType::Datetime(_, _) | DataType::Date => Held::Time,
            DataType::Struct(_) | DataType::List(_) => Held::Nested,
            DataType::Null => Held::Null,
            d if d.is_primitive_numeric() || d.is_decimal() => Held::Float,
            _ => Held::Text,
        }
    }
}

/// One value of the sample's row, before it is converted to its field's type.
struct Cell {
    sql: String,
    held: Held,
}

/// The ASCII white space Rust's `trim` (and so `analyze`) removes around a cell.
fn white_space() -> String {
    let chars: Vec<String> = [9, 10, 11, 12, 13]
        .iter()
        .map(|c| format!("chr({c})"))
        .collect();
    format!("' ' || {}", chars.join(" || "))
}

/// Text as a cell reads: trimmed, blank as NULL, whatever type the column has.
fn text(d: Dialect, x: &str) -> String {
    format!(
        "NULLIF(TRIM(BOTH {} FROM CAST({x} AS {})), '')",
        white_space(),
        string_type(d)
    )
}

/// `v` where it is finite, else NULL.
fn finite(v: &str) -> String {
    format!("CASE WHEN {v} - {v} = 0e0 THEN {v} END")
}

/// A cell as a DOUBLE: NULL where it is no number, NaN or infinite.
fn double(d: Dialect, c: &Cell) -> String {
    match c.held {
        Held::Text => finite(&format!("TRY_CAST({} AS DOUBLE)", text(d, &c.sql))),
        Held::Int | Held::Float => finite(&format!("TRY_CAST({} AS DOUBLE)", c.sql)),
        _ => "CAST(NULL AS DOUBLE)".into(),
    }
}

/// A number in `unit` as milliseconds (`Unit::to_ms`: smaller units are divided).
fn in_ms(v: String, unit: Option<Unit>) -> String {
    match unit {
        None | Some(Unit::Ms) => v,
        Some(Unit::S) => format!("({v}) * 1e3"),
        Some(Unit::Us) => format!("({v}) / 1e3"),
        Some(Unit::Ns) => format!("({v}) / 1e6"),
    }
}

/// Milliseconds since 1970 (a whole DOUBLE) as each engine's timestamp.
fn from_ms(d: Dialect, ms: &str) -> String {
    match d {
        Dialect::DuckDb => format!("epoch_ms(CAST({ms} AS BIGINT))"),
        Dialect::Spark => format!("timestamp_millis(CAST({ms} AS BIGINT))"),
        Dialect::Trino => format!("from_unixtime({ms} / 1e3)"),
    }
}

/// A Unix time of unknown unit, told by its size as `timestamp::unix_time` tells it.
fn unix_time(d: Dialect, v: &str) -> String {
    let ms = format!(
        "FLOOR(CASE WHEN ABS({v}) < 1e11 THEN {v} * 1e3 WHEN ABS({v}) < 1e14 THEN {v} \
         WHEN ABS({v}) < 1e17 THEN {v} / 1e3 ELSE {v} / 1e6 END)"
    );
    from_ms(d, &ms)
}

/// ISO 8601 text as a timestamp: an offset is converted to UTC; text without one is read
/// in the engine's session time zone (UTC in `analyze`).
fn iso(d: Dialect, t: &str) -> String {
    match d {
        Dialect::DuckDb => format!("timezone('UTC', TRY_CAST({t} AS TIMESTAMPTZ))"),
        Dialect::Spark => format!("try_to_timestamp({t})"),
        Dialect::Trino => format!("TRY(from_iso8601_timestamp({t}))"),
    }
}

fn typed_null(d: Dialect, kind: Kind) -> String {
    let ty = match kind {
        Kind::Count | Kind::Code => "BIGINT",
        Kind::Label => string_type(d),
        Kind::Flag => "BOOLEAN",
        Kind::Timestamp => "TIMESTAMP",
        _ => "DOUBLE",
    };
    format!("CAST(NULL AS {ty})")
}

/// A cell as its field's value, as `canonical::normalize` reads it (with the unit the
/// user gave, `--map FIELD=COLUMN:UNIT`).
fn value(d: Dialect, kind: Kind, c: &Cell, unit: Option<Unit>) -> String {
    match kind {
        Kind::Point { .. }
        | Kind::Phase
        | Kind::Rate
        | Kind::Duration
        | Kind::Percent
        | Kind::Ratio => in_ms(double(d, c), unit),
        Kind::Count | Kind::Code if c.held == Held::Int => format!("CAST({} AS BIGINT)", c.sql),
        Kind::Count | Kind::Code => {
            // A count of 1.5 is not a count; one beyond BIGINT is none either.
            let v = double(d, c);
            format!("CASE WHEN {v} % 1e0 = 0e0 THEN TRY_CAST({v} AS BIGINT) END")
        }
        Kind::Label => match c.held {
            Held::Text => text(d, &c.sql),
            Held::Nested | Held::Null => typed_null(d, kind),
            _ => format!("CAST({} AS {})", c.sql, string_type(d)),
        },
        Kind::Flag => match c.held {
            Held::Bool => c.sql.clone(),
            Held::Text => {
                let t = format!("LOWER({})", text(d, &c.sql));
                format!(
                    "CASE WHEN {t} IN ('true', '1', 'yes') THEN TRUE \
                     WHEN {t} IN ('false', '0', 'no') THEN FALSE END"
                )
            }
            Held::Int | Held::Float => format!("{} <> 0e0", double(d, c)),
            _ => typed_null(d, kind),
        },
        Kind::Timestamp => match (c.held, unit) {
            (Held::Time, _) => format!("CAST({} AS TIMESTAMP)", c.sql),
            (Held::Text | Held::Int | Held::Float, Some(u)) => {
                from_ms(d, &format!("FLOOR({})", in_ms(double(d, c), Some(u))))
            }
            (Held::Int | Held::Float, None) => unix_time(d, &double(d, c)),
            (Held::Text, None) => {
                let t = text(d, &c.sql);
                let n = finite(&format!("TRY_CAST({t} AS DOUBLE)"));
                format!("COALESCE({}, {})", iso(d, &t), unix_time(d, &n))
            }
            _ => typed_null(d, kind),
        },
    }
}

/// The outcome as `canonical::outcome_expr` gives it: its word (`OUTCOME_WORDS`) or the
/// text in lower case, else the word of the HTTP status.
fn outcome(d: Dialect, label: &str, status: &str) -> String {
    let o = format!("LOWER({label})");
    let mut case = String::from("CASE");
    for (word, words) in OUTCOME_WORDS {
        let list: Vec<String> = words.iter().map(|w| d.string(w)).collect();
        let _ = write!(
            case,
            " WHEN {o} IN ({}) THEN {}",
            list.join(", "),
            d.string(word)
        );
    }
    let _ = write!(case, " ELSE {o} END");
    // `canonical::status_word`.
    format!(
        "COALESCE({case}, CASE WHEN {status} = 499 THEN 'cancelled' \
         WHEN {status} IN (408, 504) THEN 'timeout' WHEN {status} BETWEEN 200 AND 399 THEN 'ok' \
         WHEN {status} IS NOT NULL THEN 'error' END)"
    )
}

/// A JSONPath to `keys` in the dialect's syntax; a key it cannot quote is refused.
fn json_path(d: Dialect, keys: &[String]) -> Result<String> {
    let mut p = String::from("$");
    for k in keys {
        let plain = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let (open, close, bad) = match d {
            Dialect::DuckDb => (".\"", "\"", ['"', '\\']),
            Dialect::Spark => ("['", "']", ['\'', ']']),
            Dialect::Trino => ("[\"", "\"]", ['"', '\\']),
        };
        if plain {
            let _ = write!(p, ".{k}");
        } else if k.contains(bad) {
            return Err(Error::Usage(format!(
                "--like: the JSON key `{k}` cannot be written in a {} JSONPath (it holds {}): map another column with --map, or emit for another dialect",
                d.name(),
                bad.map(|c| format!("`{c}`")).join(" or ")
            )));
        } else {
            let _ = write!(p, "{open}{k}{close}");
        }
    }
    Ok(p)
}

/// The text at `keys` inside the JSON text `json` (NULL where it is not JSON).
fn json_text(d: Dialect, json: &str, keys: &[String]) -> Result<String> {
    let path = d.string(&json_path(d, keys)?);
    Ok(match d {
        // DuckDB raises an error on malformed JSON where the others give NULL.
        Dialect::DuckDb => {
            format!("CASE WHEN json_valid({json}) THEN json_extract_string({json}, {path}) END")
        }
        Dialect::Spark => format!("get_json_object({json}, {path})"),
        Dialect::Trino => format!("json_extract_scalar({json}, {path})"),
    })
}

/// The place a field of a plain log comes from, as a cell.
fn cell_of(d: Dialect, sample: &Sample, origin: &Origin, dtype: &DataType) -> Result<Option<Cell>> {
    let path = |parts: &[String]| -> String {
        parts
            .iter()
            .map(|p| d.ident(p))
            .collect::<Vec<_>>()
            .join(".")
    };
    let json = |column: &str, keys: &[String]| -> Result<Cell> {
        Ok(Cell {
            sql: json_text(d, &text(d, &d.ident(column)), keys)?,
            held: Held::Text,
        })
    };
    Ok(Some(match origin {
        Origin::Absent => return Ok(None),
        Origin::Column(c) => Cell {
            sql: d.ident(c),
            held: Held::of(dtype),
        },
        Origin::Nested(parts) => Cell {
            sql: path(parts),
            held: Held::of(dtype),
        },
        Origin::JsonString(name) => json("other", &["timing".to_string(), name.clone()])?,
        // A path into a JSON object, which `analyze` reads as the object's text: an engine
        // holds the object as a struct.
        Origin::JsonPath { column, path: keys } if sample.objects.contains(column) => {
            let parts: Vec<String> = std::iter::once(column.clone())
                .chain(keys.iter().cloned())
                .collect();
            Cell {
                sql: path(&parts),
                held: Held::Text,
            }
        }
        Origin::JsonPath { column, path } => json(column, path)?,
    }))
}

/// The source of the emitted query: `table` read through the projection that maps the
/// sample's columns as `analyze` maps them.
pub fn source(d: Dialect, table: &str, sample: &Sample, added: &[String]) -> Result<Source> {
    let (mut ctes, cells, filter, reads) = match sample.format {
        InputFormat::Parquet | InputFormat::Csv | InputFormat::JsonLines | InputFormat::JsonArray => {
            let mut cells = vec![];
            for (name, origin, dtype) in &sample.mapping.fields {
                cells.push((name.clone(), cell_of(d, sample, origin, dtype)?));
            }
            (vec![], cells, None, plain_reads(sample))
        }
        InputFormat::NewApi => {
            let n = newapi_cells(d, table, sample)?;
            (vec![n.cte], n.cells, Some(n.filter), newapi_reads(sample))
        }
        other => {
            return Err(Error::input(
                &sample.path,
                format!(
                    "--like: this file reads as {}, whose adapter's derivations tracediag does not write in SQL; --like takes a table read as it is (Parquet, CSV, JSON lines or a JSON array) or a new-api / one-api log",
                    crate::source::Content::Log(other).read_as()
                ),
            ))
        }
    };
    let from = ctes
        .last()
        .map_or_else(|| table.to_string(), |(n, _): &(String, String)| n.clone());
    let mut cols = pass_through(d, sample, added);
    let status = cells
        .iter()
        .find(|(n, _)| n == "status")
        .and_then(|(_, c)| c.as_ref())
        .map(|c| value(d, Kind::Code, c, None))
        .unwrap_or_else(|| typed_null(d, Kind::Code));
    for (name, cell) in &cells {
        let kind = catalogue::field(name).map_or(Kind::Label, |f| f.kind);
        let unit = sample.mapping.unit_of(name);
        let v = match cell {
            None if name == "outcome" => outcome(d, &typed_null(d, Kind::Label), &status),
            None => typed_null(d, kind),
            Some(c) if name == "outcome" => outcome(d, &value(d, kind, c, None), &status),
            Some(c) => value(d, kind, c, unit),
        };
        cols.push(format!("{v} AS {}", d.ident(name)));
    }
    let mut select = format!("SELECT\n    {}\n  FROM {from}", cols.join(",\n    "));
    if let Some(f) = filter {
        let _ = write!(select, "\n  WHERE {f}");
    }
    ctes.push((CANONICAL.to_string(), select));
    Ok(Source {
        table: table.to_string(),
        ctes,
        reads: Some(reads),
    })
}

/// The sample's columns that pass through as they are: none named like a canonical field
/// (the projection writes those) or like a column the query adds.
fn pass_through(d: Dialect, sample: &Sample, added: &[String]) -> Vec<String> {
    let taken: BTreeSet<String> = catalogue::FIELDS
        .iter()
        .map(|f| f.name.to_string())
        .chain(added.iter().cloned())
        .map(|n| n.to_ascii_lowercase())
        .collect();
    sample
        .columns
        .iter()
        .filter(|c| !taken.contains(&c.to_ascii_lowercase()))
        .map(|c| d.ident(c))
        .collect()
}

/// The header's paragraph for a plain log: where each field is read from.
fn plain_reads(sample: &Sample) -> String {
    let mut h = format!(
        "-- Reads the table through `{CANONICAL}`, which maps its columns as `tracediag analyze`\n\
         -- maps those of the sample {} ({}):\n\
         -- each canonical field from the place below, converted and typed as analyze reads it;\n\
         -- a field the sample lacks is NULL. The sample's other columns pass through.\n",
        sample.path.display(),
        sample.format
    );
    for (name, origin) in sample.mapping.found() {
        let unit = sample
            .mapping
            .unit_of(name)
            .map(|u| format!(" ({})", u.name()))
            .unwrap_or_default();
        let _ = writeln!(h, "--   {name} ← {origin}{unit}");
    }
    if sample.mapping.found().any(|(n, _)| n == "timestamp") {
        h.push_str(
            "-- A timestamp of text without an offset is read in the session's time zone (UTC in\n\
             -- tracediag): run the query with the session set to UTC.\n",
        );
    }
    h.push_str("-- Client identifiers are used as they are in the table (no rule may use them).\n");
    h
}

/// The header's paragraph for a new-api log.
fn newapi_reads(sample: &Sample) -> String {
    format!(
        "-- Reads the table through `{NEWAPI_TEXT}` and `{CANONICAL}`, which read it as tracediag's\n\
         -- new-api adapter reads the sample {}:\n\
         -- consume rows (type {}) and error rows (type {} with a use_time) only; other.frt is\n\
         -- relay_first_response_ms ({} is NULL); use_time (s) x 1000, else elapsed_time (ms), is\n\
         -- relay_total_ms; created_at is Unix seconds; the outcome is error for an error row,\n\
         -- else other.stream_status.status, else ok. A key the sample lacks is NULL; its other\n\
         -- columns pass through. `other` is JSON text.\n\
         -- Client identifiers are used as they are in the table (no rule may use them).\n",
        sample.path.display(),
        newapi::CONSUME,
        newapi::ERROR,
        newapi::NO_FIRST_RESPONSE
    )
}

/// A new-api log's derivation: the expression holding its keys as text (`NEWAPI_TEXT`),
/// each canonical field's cell, and which rows are requests.
struct Derived {
    cte: (String, String),
    cells: Vec<(String, Option<Cell>)>,
    filter: String,
}

/// The name of a new-api key's text in `NEWAPI_TEXT`.
fn newapi_key(d: Dialect, k: &str) -> String {
    d.ident(&format!("__{k}"))
}

/// `NEWAPI_TEXT`: the table with every key of `newapi::KEYS` as text, as the adapter reads
/// it (JSON numbers and booleans as their text); a key the sample lacks is NULL.
fn newapi_text(d: Dialect, table: &str, sample: &Sample) -> (String, String) {
    let keys: Vec<String> = newapi::KEYS
        .iter()
        .map(|k| {
            let v = if sample.columns.iter().any(|c| c == k) {
                text(d, &d.ident(k))
            } else {
                format!("CAST(NULL AS {})", string_type(d))
            };
            format!("{v} AS {}", newapi_key(d, k))
        })
        .collect();
    (
        NEWAPI_TEXT.to_string(),
        format!("SELECT *,\n    {}\n  FROM {table}", keys.join(",\n    ")),
    )
}

/// A new-api log's canonical fields, as the adapter's frame holds them: the mapping of
/// the sample says which the adapter maps, and one with no derivation here is refused
/// rather than left NULL.
fn newapi_cells(d: Dialect, table: &str, sample: &Sample) -> Result<Derived> {
    let (derived, filter) = newapi_derived(d)?;
    let mut cells = vec![];
    for (name, origin, _) in &sample.mapping.fields {
        let cell = match derived.iter().find(|(n, _, _)| n == name) {
            _ if *origin == Origin::Absent => None,
            Some((_, sql, held)) => Some(Cell {
                sql: sql.clone(),
                held: *held,
            }),
            None => {
                return Err(Error::input(
                    &sample.path,
                    format!("--like: the new-api adapter maps `{name}`, which tracediag does not write in SQL"),
                ))
            }
        };
        cells.push((name.clone(), cell));
    }
    Ok(Derived {
        cte: newapi_text(d, table, sample),
        cells,
        filter,
    })
}

/// Each field's (name, value, how it is held), and the condition of a request row.
type Derivations = (Vec<(&'static str, String, Held)>, String);

/// `source::newapi::columns` in SQL over `NEWAPI_TEXT`, with `newapi::scan`'s row filter.
fn newapi_derived(d: Dialect) -> Result<Derivations> {
    let key = |k: &str| newapi_key(d, k);
    let num = |e: &str| format!("TRY_CAST({e} AS DOUBLE)");
    let other = |path: &[&str]| -> Result<String> {
        let keys: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        json_text(d, &key("other"), &keys)
    };
    let bare = |f: &str| json_text(d, &key("request_timing"), &[f.to_string()]);
    let kind = format!("TRY_CAST({} AS BIGINT)", key("type"));
    // `newapi::failed`: an error row with a use_time (one-api's type 5 is a test row).
    let failed = format!(
        "COALESCE({kind} = {} AND {} IS NOT NULL, FALSE)",
        newapi::ERROR,
        key("use_time")
    );
    let filter = format!("{kind} IS NULL OR {kind} = {} OR {failed}", newapi::CONSUME);
    let rt = |f: &str| -> Result<String> {
        Ok(num(&format!(
            "COALESCE({}, {})",
            other(&["request_timing", f])?,
            bare(f)?
        )))
    };
    let id = format!("COALESCE({}, {})", key("channel"), key("channel_id"));
    let name = key("channel_name");
    let frt = num(&other(&["frt"])?);
    let derived: Vec<(&'static str, String, Held)> = vec![
        (
            "request_id",
            format!("COALESCE({}, {})", key("request_id"), key("id")),
            Held::Text,
        ),
        (
            "timestamp",
            from_ms(d, &format!("FLOOR({} * 1e3)", num(&key("created_at")))),
            Held::Time,
        ),
        ("model", key("model_name"), Held::Text),
        ("group", key("group"), Held::Text),
        (
            "channel",
            format!("CASE WHEN {name} IS NOT NULL THEN COALESCE({id}, '?') || ' (' || {name} || ')' ELSE {id} END"),
            Held::Text,
        ),
        (
            "outcome",
            format!(
                "COALESCE(CASE WHEN {failed} THEN 'error' END, {}, CASE WHEN {kind} = {} THEN 'ok' END)",
                other(&["stream_status", "status"])?,
                newapi::CONSUME
            ),
            Held::Text,
        ),
        ("is_stream", key("is_stream"), Held::Text),
        ("input_tokens", key("prompt_tokens"), Held::Text),
        ("output_tokens", key("completion_tokens"), Held::Text),
        ("cached_tokens", other(&["cache_tokens"])?, Held::Text),
        (
            "user",
            format!("COALESCE({}, {})", key("username"), key("user_id")),
            Held::Text,
        ),
        ("token_name", key("token_name"), Held::Text),
        ("client_ip", key("ip"), Held::Text),
        (
            "relay_first_response_ms",
            format!(
                "CASE WHEN {frt} = {} THEN NULL ELSE {frt} END",
                number(newapi::NO_FIRST_RESPONSE)
            ),
            Held::Float,
        ),
        (
            "relay_total_ms",
            format!(
                "COALESCE({} * 1e3, {})",
                num(&key("use_time")),
                num(&key("elapsed_time"))
            ),
            Held::Float,
        ),
        ("total_handler_ms", rt("total_ms")?, Held::Float),
        (
            "first_sse_event_ms",
            format!("{} + {}", rt("gateway_ms")?, rt("upstream_first_data_ms")?),
            Held::Float,
        ),
    ]
    .into_iter()
    .chain(
        newapi::SPANS
            .iter()
            .map(|s| Ok((*s, rt(s)?, Held::Float)))
            .collect::<Result<Vec<_>>>()?,
    )
    .collect();
    Ok((derived, filter))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ruleset::sql::{rows_query_from, summary_query_from};
    use crate::ruleset::RuleSet;
    use crate::source::columns::ColumnMap;
    use sqlparser::dialect::{DuckDbDialect, GenericDialect, SparkSqlDialect};
    use sqlparser::parser::Parser;

    const DIALECTS: [Dialect; 3] = [Dialect::DuckDb, Dialect::Spark, Dialect::Trino];

    fn fixture(name: &str) -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/generated")
            .join(name)
    }

    fn sample_of(path: &std::path::Path) -> Sample {
        crate::source::like::sample(path, &ColumnMap::default()).unwrap()
    }

    /// The `canonical` expression's text: the projection alone.
    fn projection(d: Dialect, sample: &Sample) -> String {
        let rules = RuleSet::gateway().unwrap();
        let added = crate::ruleset::sql::added_columns(&rules);
        let s = source(d, "logs", sample, &added).unwrap();
        s.ctes
            .iter()
            .map(|(_, q)| q.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A log of aliases, a Unix-time stamp and a JSON string holding only some timings.
    fn aliases_log(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("aliases.jsonl");
        std::fs::write(
            &path,
            "{\"request_id\":\"a\",\"timestamp\":1793577608,\"prompt_tokens\":12,\"model_name\":\"m\",\"result\":\"Success\",\"other\":\"{\\\"timing\\\":{\\\"total_handler_ms\\\":900}}\"}\n\
             {\"request_id\":\"b\",\"timestamp\":1793577609000,\"prompt_tokens\":7,\"model_name\":\"m\",\"result\":\"failed\",\"other\":\"\"}\n",
        )
        .unwrap();
        path
    }

    /// Every query over every kind of sample parses in its engine's grammar (the engines
    /// run them in tests/sql_engines.rs).
    #[test]
    fn like_queries_parse_in_each_dialect() {
        let dir = tempfile::tempdir().unwrap();
        let samples = [
            fixture("gateway.parquet"),
            fixture("gateway_other_string.jsonl"),
            fixture("newapi.jsonl"),
            aliases_log(dir.path()),
        ];
        let gateway = RuleSet::gateway().unwrap();
        let relay = crate::ruleset::tables::shipped_table("relay").unwrap();
        for path in &samples {
            let sample = sample_of(path);
            for d in DIALECTS {
                let parser: Box<dyn sqlparser::dialect::Dialect> = match d {
                    Dialect::DuckDb => Box::new(DuckDbDialect {}),
                    Dialect::Spark => Box::new(SparkSqlDialect {}),
                    Dialect::Trino => Box::new(GenericDialect {}),
                };
                for rules in [&gateway, &relay] {
                    let added = crate::ruleset::sql::added_columns(rules);
                    let s = source(d, "logs", &sample, &added).unwrap();
                    for q in [
                        rows_query_from(rules, d, &s).unwrap(),
                        summary_query_from(rules, d, &s).unwrap(),
                    ] {
                        let parsed = Parser::parse_sql(parser.as_ref(), &q).unwrap_or_else(|e| {
                            panic!("{} {}: {e}\n{q}", path.display(), d.name())
                        });
                        assert_eq!(parsed.len(), 1);
                    }
                }
            }
        }
    }

    /// Aliases read under their canonical names, a Unix time by its size, `other`'s JSON
    /// text in each dialect's function, a field the sample lacks as a typed NULL, the
    /// outcome through its words; the sample's other columns pass through.
    #[test]
    fn a_plain_sample_maps_aliases_json_text_and_unix_time() {
        let dir = tempfile::tempdir().unwrap();
        let sample = sample_of(&aliases_log(dir.path()));
        let duck = projection(Dialect::DuckDb, &sample);
        assert!(
            duck.contains("CAST(\"prompt_tokens\" AS BIGINT) AS \"input_tokens\""),
            "{duck}"
        );
        assert!(
            duck.contains("CAST(NULL AS BIGINT) AS \"output_tokens\""),
            "{duck}"
        );
        assert!(
            duck.contains("CAST(NULL AS VARCHAR) AS \"channel\""),
            "{duck}"
        );
        assert!(
            duck.contains("json_extract_string(NULLIF(TRIM(BOTH ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13) FROM CAST(\"other\" AS VARCHAR)), ''), '$.timing.total_handler_ms')"),
            "{duck}"
        );
        assert!(
            duck.contains("epoch_ms(CAST(FLOOR(CASE WHEN ABS("),
            "{duck}"
        );
        assert!(
            duck.contains("IN ('ok', 'success', 'succeeded', 'completed', 'done') THEN 'ok'"),
            "{duck}"
        );
        // Passed through as they are: the columns not named like a field (an alias's
        // column too, as `SELECT *` keeps it); one named like a field is that field.
        assert!(
            duck.contains("\n    \"other\",\n    \"prompt_tokens\",\n")
                || duck.contains("\n    \"prompt_tokens\",\n"),
            "{duck}"
        );
        assert!(duck.contains("\n    \"other\",\n"), "{duck}");
        assert!(!duck.contains("\n    \"timestamp\",\n"), "{duck}");
        let spark = projection(Dialect::Spark, &sample);
        assert!(
            spark.contains("get_json_object(") && spark.contains("timestamp_millis("),
            "{spark}"
        );
        assert!(
            spark.contains("CAST(`prompt_tokens` AS BIGINT) AS `input_tokens`"),
            "{spark}"
        );
        let trino = projection(Dialect::Trino, &sample);
        assert!(
            trino.contains("json_extract_scalar(") && trino.contains("from_unixtime("),
            "{trino}"
        );
    }

    /// A struct path in each dialect's syntax.
    #[test]
    fn a_nested_sample_reads_struct_paths() {
        let sample = sample_of(&fixture("gateway.parquet"));
        let duck = projection(Dialect::DuckDb, &sample);
        assert!(
            duck.contains("TRY_CAST(\"other\".\"timing\".\"auth_ms\" AS DOUBLE)"),
            "{duck}"
        );
        let spark = projection(Dialect::Spark, &sample);
        assert!(
            spark.contains("TRY_CAST(`other`.`timing`.`auth_ms` AS DOUBLE)"),
            "{spark}"
        );
    }

    /// The new-api adapter's derivations: only request rows, `frt` −1000 as NULL,
    /// `use_time` seconds as ms, `created_at` Unix seconds, the outcome from the row type.
    #[test]
    fn a_newapi_sample_is_derived_as_its_adapter_derives_it() {
        let sample = sample_of(&fixture("newapi.jsonl"));
        let duck = projection(Dialect::DuckDb, &sample);
        assert!(
            duck.contains("newapi_text") || duck.contains("\"__type\""),
            "{duck}"
        );
        assert!(duck.contains("= (-1e3) THEN NULL ELSE"), "{duck}");
        assert!(
            duck.contains("TRY_CAST(\"__use_time\" AS DOUBLE) * 1e3"),
            "{duck}"
        );
        assert!(duck.contains("WHERE TRY_CAST(\"__type\" AS BIGINT) IS NULL OR TRY_CAST(\"__type\" AS BIGINT) = 2 OR"), "{duck}");
        assert!(duck.contains("'$.stream_status.status'"), "{duck}");
        // A key the sample lacks is NULL, never a column the engine would not find.
        assert!(
            duck.contains("CAST(NULL AS VARCHAR) AS \"__elapsed_time\""),
            "{duck}"
        );
    }

    #[test]
    fn a_json_key_a_dialect_cannot_quote_is_refused() {
        let keys = ["timing".to_string(), "it's".to_string()];
        let e = json_path(Dialect::Spark, &keys).unwrap_err().to_string();
        assert!(e.contains("cannot be written in a spark JSONPath"), "{e}");
        assert_eq!(
            json_path(Dialect::DuckDb, &keys).unwrap(),
            "$.timing.\"it's\""
        );
        assert_eq!(
            json_path(Dialect::Trino, &["a b".to_string()]).unwrap(),
            "$[\"a b\"]"
        );
    }
}
