//! Maps an input file's columns onto the canonical fields of the catalogue and builds the
//! projection that reads only those columns. Content columns (prompt, response, keys) are
//! never part of any mapping, so they are never read into a frame.
//!
//! Where a timing field is looked for, in order: a flat column with its name or an alias
//! (case-insensitive); a dotted column `timing.<name>` or `other.timing.<name>`; a struct
//! column `other` (or `timing`) holding it; and `other` as a JSON string, decoded with a
//! schema that lists only the timing fields.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use polars::chunked_array::ops::arity::unary_elementwise;
use polars::prelude::*;

use crate::catalogue::{Kind, FIELDS};
use crate::error::{Error, Result};

use super::timestamp;
use super::{ROW_COL, SOURCE_COL};

/// Where one canonical field comes from in a given file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A top-level column (flat, aliased or dotted name).
    Column(String),
    /// A path into a struct column: `other` → `timing` → name.
    Nested(Vec<String>),
    /// A field of `other.timing` inside a JSON string column `other`.
    JsonString(String),
    /// A path inside a column of JSON text (`--map`): the column, and the keys down to
    /// the value.
    JsonPath {
        column: String,
        path: Vec<String>,
    },
    Absent,
}

/// How the summary names a field's place: ``column `x` ``, ``nested `other.timing.x` ``.
impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Column(c) => write!(f, "column `{c}`"),
            Origin::Nested(p) => write!(f, "nested `{}`", p.join(".")),
            Origin::JsonString(n) => write!(f, "JSON string `other` → timing.{n}"),
            Origin::JsonPath { column, path } => {
                write!(f, "JSON string `{column}` → {}", path.join("."))
            }
            Origin::Absent => f.write_str("absent"),
        }
    }
}

/// The canonical fields found in one file.
#[derive(Debug, Clone, Default)]
pub struct Mapping {
    /// (canonical name, where it comes from, source dtype) in catalogue order.
    pub fields: Vec<(String, Origin, DataType)>,
    /// Timing fields the file holds in more than one place, e.g. a flat
    /// `upstream_headers_ms` and `other.timing.upstream_headers_ms`: (field, the place
    /// read, the places not read), in catalogue order. The lookup order decides; the
    /// summary says so, because the two may disagree.
    pub shadowed: Vec<(String, Origin, Vec<Origin>)>,
    /// The timestamp holds Unix times (numbers, or text of numbers), read with the unit
    /// each value's size tells (`timestamp::unix_time`); the summary says so.
    pub unix_time: bool,
    /// The fields the user mapped (`--map`, `--schema`), in catalogue order.
    pub by_user: Vec<String>,
    /// Of them, those whose numbers are in a unit of the user's: a time is converted to
    /// milliseconds, a timestamp read as Unix time in that unit.
    pub units: Vec<(String, super::columns::Unit)>,
}

impl Mapping {
    /// The unit the user gave `field`'s numbers in (`--map FIELD=COLUMN:UNIT`).
    pub fn unit_of(&self, field: &str) -> Option<super::columns::Unit> {
        self.units.iter().find(|(f, _)| f == field).map(|(_, u)| *u)
    }

    pub fn found(&self) -> impl Iterator<Item = (&str, &Origin)> {
        self.fields
            .iter()
            .filter(|(_, o, _)| *o != Origin::Absent)
            .map(|(n, o, _)| (n.as_str(), o))
    }
}

const JSON_COL: &str = "__other_decoded";
/// A timestamp's text taken out of a struct or a JSON string (`--map`) to be parsed.
const USER_TIMESTAMP: &str = "__user_timestamp";

/// Prefix of the per-field flag columns marking values that did not parse.
pub const UNPARSED_PREFIX: &str = "__unparsed_";
/// Prefix of the columns carried through from the file as they are (`select`'s `carried`).
pub const CARRIED_PREFIX: &str = "__carried_";
/// Flag column marking rows kept although they could not be read whole (`rowcheck`).
pub const UNREADABLE_COL: &str = "__unreadable";

/// The dtype each canonical column has after mapping.
pub fn dtype_of(kind: Kind) -> DataType {
    match kind {
        Kind::Point { .. }
        | Kind::Phase
        | Kind::Rate
        | Kind::Duration
        | Kind::Percent
        | Kind::Ratio => DataType::Float64,
        Kind::Count | Kind::Code => DataType::Int64,
        Kind::Label => DataType::String,
        Kind::Flag => DataType::Boolean,
        Kind::Timestamp => DataType::Datetime(TimeUnit::Milliseconds, None),
    }
}

fn struct_path<'a>(schema: &'a Schema, path: &[&str]) -> Option<&'a DataType> {
    let (first, rest) = path.split_first()?;
    let mut dt = schema.get(first)?;
    for name in rest {
        match dt {
            DataType::Struct(fields) => dt = fields.iter().find(|f| f.name() == *name)?.dtype(),
            _ => return None,
        }
    }
    Some(dt)
}

/// Whether a column of this type can hold the field's values. A type that cannot (a
/// boolean latency, a struct token count) is a fault of the whole column, not of rows.
pub(super) fn readable_as(kind: Kind, dtype: &DataType) -> bool {
    let numeric = dtype.is_primitive_numeric() || dtype.is_decimal();
    let text_or_null = matches!(dtype, DataType::String | DataType::Null);
    match kind {
        Kind::Label => true,
        Kind::Flag => numeric || text_or_null || *dtype == DataType::Boolean,
        Kind::Timestamp => {
            numeric || text_or_null || matches!(dtype, DataType::Datetime(_, _) | DataType::Date)
        }
        _ => numeric || text_or_null,
    }
}

pub(super) fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::Flag => "a boolean, 0/1 or text",
        Kind::Timestamp => "a date-time, a Unix time or ISO 8601 text",
        Kind::Count | Kind::Code => "an integer (or text holding one)",
        _ => "a number (or text holding one)",
    }
}

pub fn map(schema: &Schema, path: &Path) -> Result<Mapping> {
    let lower: BTreeMap<String, &str> = schema
        .iter_names()
        .map(|n| (n.to_ascii_lowercase(), n.as_str()))
        .collect();
    let other_is_string = matches!(schema.get("other"), Some(DataType::String));
    let mut fields = vec![];
    let mut shadowed = vec![];
    for f in FIELDS {
        let mut names: Vec<String> = std::iter::once(f.name)
            .chain(f.aliases.iter().copied())
            .map(String::from)
            .collect();
        if f.kind.is_timing() {
            names.push(format!("timing.{}", f.name));
            names.push(format!("other.timing.{}", f.name));
        }
        // Every place the file holds this field, in lookup order: the first one is read.
        let mut places: Vec<(Origin, DataType)> = vec![];
        for n in &names {
            if let Some(actual) = lower.get(&n.to_ascii_lowercase()) {
                let dtype = schema.get(actual).cloned().unwrap_or(DataType::Null);
                places.push((Origin::Column(actual.to_string()), dtype));
            }
        }
        if f.kind.is_timing() {
            for path in [vec!["other", "timing", f.name], vec!["timing", f.name]] {
                if let Some(dt) = struct_path(schema, &path) {
                    let path = path.iter().map(|s| s.to_string()).collect();
                    places.push((Origin::Nested(path), dt.clone()));
                }
            }
            if places.len() > 1 {
                let ignored = places[1..].iter().map(|(o, _)| o.clone()).collect();
                shadowed.push((f.name.to_string(), places[0].0.clone(), ignored));
            }
            if places.is_empty() && other_is_string {
                // Decoded as text: a JSON string holds timings of any JSON type.
                places.push((Origin::JsonString(f.name.to_string()), DataType::String));
            }
        }
        let (found, dtype) = places
            .into_iter()
            .next()
            .unwrap_or((Origin::Absent, DataType::Null));
        if found != Origin::Absent && !readable_as(f.kind, &dtype) {
            let column = match &found {
                Origin::Column(c) => c.clone(),
                Origin::Nested(p) => p.join("."),
                _ => f.name.to_string(),
            };
            return Err(Error::input(
                path,
                format!(
                    "column `{column}` ({}): expected {}, found {dtype}",
                    f.name,
                    expected(f.kind)
                ),
            ));
        }
        fields.push((f.name.to_string(), found, dtype));
    }
    let unix_time = fields
        .iter()
        .any(|(n, o, d)| n == "timestamp" && *o != Origin::Absent && d.is_primitive_numeric());
    Ok(Mapping {
        fields,
        shadowed,
        unix_time,
        ..Default::default()
    })
}

/// The file's columns, with those named like a column the projection adds renamed out of
/// the way.
fn renamed(raw: LazyFrame, schema: &Schema) -> LazyFrame {
    // A column of the file named like one of the columns added here (no catalogue field
    // is) would clash with it; the mapping never reads it, so it is renamed out of the way.
    // (Not dropped: a file whose only column it is would then have no rows.)
    let clashing: Vec<&str> = [ROW_COL, JSON_COL, USER_TIMESTAMP]
        .into_iter()
        .chain(timestamp::INTERNAL)
        .filter(|n| schema.contains(n))
        .collect();
    let free: Vec<String> = clashing
        .iter()
        .map(|n| {
            let mut free = format!("{n}_in_file");
            while schema.contains(&free) {
                free.push('_');
            }
            free
        })
        .collect();
    raw.rename(clashing, free, true)
}

/// Which rows of a file the projection reads.
#[derive(Clone, Copy)]
pub enum Rows<'a> {
    /// Every row.
    All,
    /// Every row, for a copy written once: values used several times are computed once
    /// into columns of their own (see `select`).
    Copy,
    /// Only these, 1-based and ascending (what `rows_holding` found), numbered with their
    /// places in the file. With `sliced`, each is read as a one-row slice, which the
    /// reader pushes down to the file (Parquet decodes only the row group holding it);
    /// without, they are picked by their row number from a scan of every row (see
    /// `load_one`: a reader whose slices count rows otherwise than its scan).
    Only { rows: &'a [IdxSize], sliced: bool },
    /// `len` rows from the 1-based `first` (fewer at the end of the file), numbered with
    /// their places in the file: one slice, pushed down to the file like `Only`'s, or
    /// without `sliced` picked from a scan of every row.
    Range {
        first: IdxSize,
        len: IdxSize,
        sliced: bool,
    },
    /// Every row of a part of the file handed over as a frame, for a copy written a part at
    /// a time (`copy`): its columns, but the numbers `parsed_in_part` names, which
    /// come parsed (`parsed`, `present`). `first` is the 1-based place in the file of its
    /// first row, and `forms` the timestamp's fast forms found in the whole file's first
    /// values (`timestamp_forms`), not in the part's.
    Part {
        first: IdxSize,
        forms: &'a [timestamp::Form],
    },
}

/// The numeric fields whose cells a part's frame (`Rows::Part`) holds parsed, not as text:
/// (field, the text column it is read from). Those whose text is a column of the file; a
/// number inside `other`'s JSON is parsed after the JSON is decoded.
pub fn parsed_in_part(mapping: &Mapping) -> Vec<(&str, &str)> {
    mapping
        .fields
        .iter()
        .filter_map(|(name, origin, dtype)| match origin {
            Origin::Column(c) if *dtype == DataType::String => {
                let kind = crate::catalogue::field(name)?.kind;
                is_number(kind).then_some((name.as_str(), c.as_str()))
            }
            _ => None,
        })
        .collect()
}

/// The column of a part's frame that says whether a parsed number's cell held text
/// (`parsed_in_part`; its value is in `parsed(field)`).
pub fn present(field: &str) -> String {
    format!("__present_{field}")
}

/// A number's cell as `text_cell` and polars' cast to a float read it: whether the trimmed
/// cell holds text, and the number it parses as (none where blank or not a number).
pub fn read_number(cell: &str) -> (bool, Option<f64>) {
    match cell_text(cell) {
        None => (false, None),
        // polars' String -> Float64 cast is `fast_float2::parse` of each value.
        Some(text) => (true, fast_float2::parse(text.as_bytes()).ok()),
    }
}

/// The fast forms of a text timestamp's first values (`timestamp::forms`); none when the
/// timestamp is not a text column.
pub fn timestamp_forms(raw: &LazyFrame, mapping: &Mapping) -> Vec<timestamp::Form> {
    match mapping.fields.iter().find(|(n, _, _)| n == "timestamp") {
        Some((_, Origin::Column(c), DataType::String)) => timestamp::forms(raw, c),
        _ => vec![],
    }
}

fn one_row_slices(raw: &LazyFrame, rows: &[IdxSize]) -> LazyFrame {
    let slice = |r: IdxSize, len: IdxSize| {
        raw.clone()
            .slice(i64::from(r) - 1, len)
            .with_row_index(ROW_COL, Some(r))
    };
    match rows {
        // No row: the file's columns, empty.
        [] => slice(1, 0),
        [r] => slice(*r, 1),
        _ => concat(
            rows.iter().map(|&r| slice(r, 1)).collect::<Vec<_>>(),
            UnionArgs::default(),
        )
        .expect("two or more frames of the same schema concatenate"),
    }
}

/// The 1-based rows of the file whose label `field` (an identifier, such as `request_id`)
/// reads as `value`, in file order: one query over that column alone. `None` when the
/// field is not one a row lookup can read (inside a JSON string); an empty list when the
/// file does not map it.
pub fn rows_holding(
    raw: &LazyFrame,
    schema: &Schema,
    mapping: &Mapping,
    field: &str,
    value: &str,
) -> PolarsResult<Option<Vec<IdxSize>>> {
    let Some((_, origin, dtype)) = mapping.fields.iter().find(|(n, _, _)| n == field) else {
        return Ok(Some(vec![]));
    };
    let source = match origin {
        Origin::Absent => return Ok(Some(vec![])),
        Origin::JsonString(_) => return Ok(None),
        o => source_expr(o),
    };
    let source = if *dtype == DataType::String {
        text_cell(source)
    } else {
        source
    };
    let read = label(source, dtype);
    let found = crate::stats::collect(
        renamed(raw.clone(), schema)
            .with_row_index(ROW_COL, Some(1))
            .filter(read.eq(lit(value)).fill_null(lit(false)))
            .select([col(ROW_COL)]),
    )?;
    Ok(Some(
        found.column(ROW_COL)?.idx()?.into_no_null_iter().collect(),
    ))
}

/// A flat or nested column of the file as an expression.
pub(super) fn source_expr(origin: &Origin) -> Expr {
    match origin {
        Origin::Column(c) => col(c.as_str()),
        Origin::Nested(path) => {
            let mut e = col(path[0].as_str());
            for p in &path[1..] {
                e = e.struct_().field_by_name(p);
            }
            e
        }
        Origin::JsonString(n) => col(JSON_COL)
            .struct_()
            .field_by_name("timing")
            .struct_()
            .field_by_name(n),
        // The matched value as text (a number as its JSON text), parsed as a CSV cell is.
        Origin::JsonPath { column, path } => text_cell(col(column.as_str()))
            .str()
            .json_path_match(lit(json_path(path))),
        Origin::Absent => lit(NULL),
    }
}

/// A JSONPath to `keys`, each quoted so that any key reads (`$['other']['ttft']`).
pub(super) fn json_path(keys: &[String]) -> String {
    let mut p = String::from("$");
    for k in keys {
        p.push_str(&format!(
            "['{}']",
            k.replace('\\', "\\\\").replace('\'', "\\'")
        ));
    }
    p
}

/// The projection: canonical columns only, typed per the catalogue, plus the source file
/// and row number. Values that cannot be read as their type become null (and are
/// counted by the data-quality checks through `__unparsed_<field>` columns).
///
/// `kept_rows` are the 1-based rows that could not be read whole and were kept with
/// their unreadable parts null; they are flagged in `__unreadable`. `carried` columns of
/// the file come along as they are, as `CARRIED_PREFIX<name>`.
pub fn select(
    raw: LazyFrame,
    schema: &Schema,
    mapping: &Mapping,
    path: &Path,
    kept_rows: &[u32],
    carried: &[String],
    rows: Rows,
) -> LazyFrame {
    let raw = renamed(raw, schema);
    let staged = match rows {
        Rows::Copy => Staging::Columns,
        Rows::Part { .. } => Staging::Parsed,
        _ => Staging::Inline,
    };
    // The fields whose numbers come parsed in the frame (`Staging::Parsed`).
    let pre_parsed: Vec<&str> = match staged {
        Staging::Parsed => parsed_in_part(mapping)
            .into_iter()
            .map(|(f, _)| f)
            .collect(),
        _ => vec![],
    };
    let mut lf = match rows {
        Rows::All | Rows::Copy => raw.clone().with_row_index(ROW_COL, Some(1)),
        Rows::Part { first, .. } => raw.clone().with_row_index(ROW_COL, Some(first)),
        Rows::Only { rows, sliced: true } => one_row_slices(&raw, rows),
        Rows::Only { rows, .. } => {
            let picked = rows
                .iter()
                .fold(lit(false), |any, &r| any.or(col(ROW_COL).eq(lit(r))));
            raw.clone().with_row_index(ROW_COL, Some(1)).filter(picked)
        }
        Rows::Range {
            first,
            len,
            sliced: true,
        } => raw
            .clone()
            .slice(i64::from(first) - 1, len)
            .with_row_index(ROW_COL, Some(first)),
        Rows::Range { first, len, .. } => {
            let row = || col(ROW_COL);
            raw.clone().with_row_index(ROW_COL, Some(1)).filter(
                row()
                    .gt_eq(lit(first))
                    .and(row().lt(lit(first.saturating_add(len)))),
            )
        }
    };
    let needs_json = mapping
        .fields
        .iter()
        .any(|(_, o, _)| matches!(o, Origin::JsonString(_)));
    if needs_json {
        // Every timing field as text: a number, a string (`""`, `"120"`, `"abc"`) and null
        // all decode so (rows disagreeing on the type would fail the whole column), and the
        // mapping parses the text and counts what is not a number, as for a CSV cell.
        let timing: Vec<Field> = FIELDS
            .iter()
            .filter(|f| f.kind.is_timing())
            .map(|f| Field::new(f.name.into(), DataType::String))
            .collect();
        let dtype = DataType::Struct(vec![Field::new("timing".into(), DataType::Struct(timing))]);
        // Blank strings are "no object", not malformed JSON.
        let cleaned = text_cell(col("other"));
        lf = lf.with_column(cleaned.str().json_decode(dtype).alias(JSON_COL));
    }
    // A timestamp of text is parsed before the projection; one in a unit of the user's is
    // a number (Unix time), read in the projection.
    match mapping.fields.iter().find(|(n, _, _)| n == "timestamp") {
        _ if mapping.unit_of("timestamp").is_some() => {}
        Some((_, Origin::Column(c), DataType::String)) => {
            let forms = match rows {
                Rows::Part { forms, .. } => forms.to_vec(),
                _ => timestamp::forms(&raw, c),
            };
            lf = timestamp::parse_text_column(lf, c, &forms);
        }
        // Text inside a struct or a JSON string (`--map`): taken out into a column first.
        Some((_, origin @ (Origin::Nested(_) | Origin::JsonPath { .. }), DataType::String)) => {
            lf = lf.with_column(source_expr(origin).alias(USER_TIMESTAMP));
            let forms = timestamp::forms(&lf, USER_TIMESTAMP);
            lf = timestamp::parse_text_column(lf, USER_TIMESTAMP, &forms);
        }
        _ => {}
    }
    let kinds: BTreeMap<&str, Kind> = FIELDS.iter().map(|f| (f.name, f.kind)).collect();
    // For a copy, each text cell is trimmed once and each number parsed once, into columns
    // of their own that the projection then reads: an expression written several times
    // over one value (is it finite? then it) is evaluated as often as it is written. Only
    // for a copy written once (`Rows::Copy`, `Rows::Part`): in a plan that several queries
    // share, the extra columns made polars' shared scan buffer far more (analyze on 100M
    // Parquet requests: 10.9 GB of anonymous memory instead of 3.0 GB).
    let mapped = || {
        mapping.fields.iter().filter(|(name, origin, _)| {
            *origin != Origin::Absent && kinds[name.as_str()] != Kind::Timestamp
        })
    };
    let cell = |name: &str, dtype: &DataType, origin: &Origin| match (dtype, staged) {
        // A parsed number's text is not in the frame; a number's value is read from
        // `number`, and whether its cell held text from `present`.
        (DataType::String, Staging::Parsed) if pre_parsed.contains(&name) => {
            lit(NULL).cast(DataType::String)
        }
        (DataType::String, Staging::Columns | Staging::Parsed) => col(trimmed(name)),
        (DataType::String, Staging::Inline) => text_cell(source_expr(origin)),
        _ => source_expr(origin),
    };
    let number = |name: &str, dtype: &DataType, origin: &Origin| match staged {
        Staging::Columns | Staging::Parsed => col(parsed(name)),
        Staging::Inline => cell(name, dtype, origin).cast(DataType::Float64),
    };
    if matches!(staged, Staging::Columns | Staging::Parsed) {
        lf = lf.with_columns(
            mapped()
                .filter(|(name, _, dtype)| {
                    *dtype == DataType::String && !pre_parsed.contains(&name.as_str())
                })
                .map(|(name, origin, _)| text_cell(source_expr(origin)).alias(trimmed(name)))
                .collect::<Vec<_>>(),
        );
        lf = lf.with_columns(
            mapped()
                .filter(|(name, _, dtype)| {
                    let kind = kinds[name.as_str()];
                    is_number(kind)
                        && !count_as_is(kind, dtype)
                        && !pre_parsed.contains(&name.as_str())
                })
                .map(|(name, origin, dtype)| {
                    cell(name, dtype, origin)
                        .cast(DataType::Float64)
                        .alias(parsed(name))
                })
                .collect::<Vec<_>>(),
        );
    }
    let mut exprs = vec![];
    for (name, origin, dtype) in &mapping.fields {
        let kind = kinds[name.as_str()];
        let target = dtype_of(kind);
        if *origin == Origin::Absent {
            if !matches!(kind, Kind::Label) {
                exprs.push(lit(false).alias(format!("{UNPARSED_PREFIX}{name}").as_str()));
            }
            exprs.push(lit(NULL).cast(target).alias(name.as_str()));
            continue;
        }
        let unit = mapping.unit_of(name);
        let source = match kind {
            Kind::Timestamp if unit.is_some() && *dtype == DataType::String => {
                text_cell(source_expr(origin))
            }
            Kind::Timestamp => source_expr(origin),
            _ => cell(name, dtype, origin),
        };
        let value = match unit {
            // Unix time in the user's unit.
            Some(u) if kind == Kind::Timestamp => unix_time_in(source.clone(), u),
            Some(u) => u.to_ms(normalize(
                source.clone(),
                kind,
                dtype,
                number(name, dtype, origin),
            )),
            None => normalize(source.clone(), kind, dtype, number(name, dtype, origin)),
        };
        if !matches!(kind, Kind::Label) {
            // A value present in the file that did not survive as the field's type (text
            // that is not a number, NaN, an infinity): a data-quality finding.
            let present = if pre_parsed.contains(&name.as_str()) {
                col(present(name))
            } else if *dtype == DataType::String && kind == Kind::Timestamp {
                text_cell(source).is_not_null()
            } else {
                // A text cell is already trimmed, blank made null.
                source.is_not_null()
            };
            let unparsed = if count_as_is(kind, dtype) {
                // Every value reads: the flag is a constant, and no query that asks only
                // for it reads the column.
                lit(false)
            } else {
                present.and(value.clone().is_null())
            };
            exprs.push(unparsed.alias(format!("{UNPARSED_PREFIX}{name}").as_str()));
        }
        exprs.push(value.alias(name.as_str()));
    }
    exprs.push(lit(path.display().to_string()).alias(SOURCE_COL));
    exprs.push(col(ROW_COL).cast(DataType::Int64));
    let unreadable = if kept_rows.is_empty() {
        lit(false)
    } else {
        let rows = Series::new("kept".into(), kept_rows);
        crate::stats::member_of(col(ROW_COL), &rows)
    };
    exprs.push(unreadable.alias(UNREADABLE_COL));
    for c in carried {
        exprs.push(col(c.as_str()).alias(format!("{CARRIED_PREFIX}{c}").as_str()));
    }
    lf.select(exprs).with_column(outcome_expr(col("outcome")))
}

/// A number of Unix time in `unit` as a timestamp (ms); null where it is not a finite
/// number.
fn unix_time_in(e: Expr, unit: super::columns::Unit) -> Expr {
    unit.to_ms(finite_values(e.cast(DataType::Float64)))
        .floor()
        .cast(DataType::Int64)
        .cast(DataType::Datetime(TimeUnit::Milliseconds, None))
}

/// How `select` evaluates a value used several times (a cell's trimmed text, its number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Staging {
    /// Once, into a column of its own: for a plan run once, such as a copy.
    Columns,
    /// As `Columns`, but the numbers `parsed_in_part` names are parsed already: a part of
    /// a copy made beside the row check (`Rows::Part`).
    Parsed,
    /// Written out where it is used: for a plan several queries share.
    Inline,
}

/// A label from its cell (`text_cell` when it is text).
fn label(e: Expr, dtype: &DataType) -> Expr {
    match dtype {
        // Never stringify nested values: they may hold content.
        DataType::Struct(_) | DataType::List(_) => lit(NULL).cast(DataType::String),
        DataType::String => e,
        _ => e.cast(DataType::String),
    }
}

/// A text cell as every field reads it: trimmed, and null where nothing is left.
///
/// One function over the values rather than `strip_chars` and a test for blank: those
/// built a new column of text (twice where the cell was used twice) for every text field
/// of every request in every scan. The usual log's cells need neither, and a morsel whose
/// cells all read as they are is passed on without a copy.
fn text_cell(e: Expr) -> Expr {
    e.map(
        |c: Column| Ok(text_cells(c.str()?).into_column()),
        |_, f| Ok(Field::new(f.name().clone(), DataType::String)),
    )
}

/// `text_cell` of one morsel's values.
fn text_cells(ca: &StringChunked) -> StringChunked {
    // Array by array: the column's own iterator costs more than the test of a value.
    if ca
        .downcast_iter()
        .all(|a| a.non_null_values_iter().all(reads_as_is))
    {
        return ca.clone();
    }
    ca.apply(|v| v.and_then(cell_text).map(Cow::Borrowed))
}

/// A text cell's text: trimmed, none where nothing is left.
fn cell_text(s: &str) -> Option<&str> {
    Some(s.trim()).filter(|t| !t.is_empty())
}

/// Whether a text cell reads as it is: not blank, and nothing to trim. Its first and last
/// bytes say so when they are ASCII (the usual cell), without `trim`'s decoding; the
/// ASCII characters `trim` removes are those `char::is_whitespace` calls white space,
/// vertical tab included.
fn reads_as_is(s: &str) -> bool {
    let trimmed = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r');
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(&first), Some(&last)) if first.is_ascii() && last.is_ascii() => {
            !trimmed(first) && !trimmed(last)
        }
        (None, _) | (_, None) => false,
        _ => s.trim().len() == s.len(),
    }
}

/// A float column with NaN and ±inf made null.
///
/// One function over a morsel, not `when(is_finite)…otherwise(null)`: polars builds
/// `is_finite`'s mask value by value and then a new column, for every timing field of
/// every request; here a morsel whose values are all finite (nearly every one) is
/// returned as it is after one pass over its values.
fn finite_values(number: Expr) -> Expr {
    number.map(
        |c: Column| {
            let ca = c.f64()?;
            // Null slots are looked at too: whatever they hold, they stay null.
            if ca
                .downcast_iter()
                .all(|a| a.values().iter().all(|x| x.is_finite()))
            {
                return Ok(c);
            }
            let out: Float64Chunked = unary_elementwise(ca, |v| v.filter(|x| x.is_finite()));
            Ok(out.with_name(c.name().clone()).into_column())
        },
        |_, f| Ok(Field::new(f.name().clone(), DataType::Float64)),
    )
}

/// A text field's cell as `text_cell` reads it (`select`'s first stage).
fn trimmed(name: &str) -> String {
    format!("__trimmed_{name}")
}

/// A numeric field's cell as a float, before the checks (`select`'s second stage).
pub fn parsed(name: &str) -> String {
    format!("__parsed_{name}")
}

/// Whether every value of a column of this type is an `Int64` as it is: an integer
/// column is a count or a code without the float round trip (which would also round a
/// value above 2^53), and none of its values can fail to be read.
fn fits_i64(dtype: &DataType) -> bool {
    matches!(
        dtype,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
    )
}

/// Whether a count or code is read from its column as it is (an integer column).
fn count_as_is(kind: Kind, dtype: &DataType) -> bool {
    matches!(kind, Kind::Count | Kind::Code) && fits_i64(dtype)
}

/// Whether a field of this kind is read as a number (a float, or a whole number).
fn is_number(kind: Kind) -> bool {
    matches!(dtype_of(kind), DataType::Float64 | DataType::Int64)
}

/// The field's value from its cell `e` (already trimmed when it is text); a number from
/// `number`, the cell as a float.
fn normalize(e: Expr, kind: Kind, dtype: &DataType, number: Expr) -> Expr {
    match kind {
        Kind::Point { .. }
        | Kind::Phase
        | Kind::Rate
        | Kind::Duration
        | Kind::Percent
        | Kind::Ratio => {
            // NaN and ±inf are not measurements: null, and counted as unparsed.
            finite_values(number)
        }
        Kind::Count | Kind::Code if count_as_is(kind, dtype) => e.cast(DataType::Int64),
        Kind::Count | Kind::Code => {
            // A count of 1.5 is not a count: null and unparsed, never truncated to 1.
            let v = number;
            when(v.clone().is_finite().and(v.clone().floor().eq(v.clone())))
                .then(v.cast(DataType::Int64))
                .otherwise(lit(NULL).cast(DataType::Int64))
        }
        Kind::Label => label(e, dtype),
        Kind::Flag => match dtype {
            DataType::Boolean => e,
            DataType::String => e.map(
                |c: Column| {
                    let flags: BooleanChunked =
                        c.str()?.iter().map(|v| v.and_then(flag_word)).collect();
                    Ok(flags.with_name(c.name().clone()).into_column())
                },
                |_, f| Ok(Field::new(f.name().clone(), DataType::Boolean)),
            ),
            _ => e.cast(DataType::Float64).neq(lit(0.0)),
        },
        Kind::Timestamp => match dtype {
            DataType::Datetime(_, _) | DataType::Date => {
                e.cast(DataType::Datetime(TimeUnit::Milliseconds, None))
            }
            // Parsed before the projection (see `timestamp`).
            DataType::String => col(timestamp::PARSED),
            _ => timestamp::unix_time(e),
        },
    }
}

/// A flag written as text: `true`, `1`, `yes` or `false`, `0`, `no` in any case, else
/// none. One function over the values: as `when`/`then` over the text in lower case,
/// polars lowered the whole column once for each of the six comparisons.
///
/// Compared without regard to ASCII case, which is comparing the text in lower case: the
/// only other character whose lower case is an ASCII letter is the Kelvin sign (`k`),
/// which none of the words has.
fn flag_word(text: &str) -> Option<bool> {
    let is = |word: &str| text.eq_ignore_ascii_case(word);
    if is("true") || is("1") || is("yes") {
        Some(true)
    } else if is("false") || is("0") || is("no") {
        Some(false)
    } else {
        None
    }
}

/// The words logs write for an outcome, by the outcome they mean (compared in lower case).
pub const OUTCOME_WORDS: [(&str, &[&str]); 4] = [
    ("ok", &["ok", "success", "succeeded", "completed", "done"]),
    ("error", &["error", "failed", "failure", "fail"]),
    (
        "cancelled",
        &["cancelled", "canceled", "cancel", "client_gone", "aborted"],
    ),
    (
        "timeout",
        &["timeout", "timed_out", "timedout", "deadline_exceeded"],
    ),
];

/// One outcome as written → the outcome it means, else the text in lower case (Rust's
/// `to_lowercase`, as polars' is). Text already in ASCII lower case is not copied.
fn outcome_word(text: &str) -> Cow<'_, str> {
    let lower = if text
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.to_lowercase())
    };
    match OUTCOME_WORDS
        .iter()
        .find(|(_, words)| words.contains(&lower.as_ref()))
    {
        Some((word, _)) => Cow::Borrowed(word),
        None => lower,
    }
}

/// `outcome` normalised to ok / error / cancelled / timeout (other values kept, lower
/// case); when the log has no outcome, derived from the HTTP status.
///
/// One function over both columns, a morsel at a time (`outcome_of`), rather than
/// polars expressions: lower-casing the column and comparing it with each of the 18 words,
/// then choosing between it and the status's word, built a new column of text per step,
/// for every request in every scan (about a tenth of `analyze`'s time on 10M requests).
fn outcome_expr(o: Expr) -> Expr {
    o.map_many(
        |cols: &mut [Column]| outcome_of(&cols[0], &cols[1]),
        &[col("status")],
        |_, f| Ok(Field::new(f[0].name().clone(), DataType::String)),
    )
    .alias("outcome")
}

/// `outcome_expr` of one morsel: each outcome as `outcome_word` reads it, else the word of
/// its status. A morsel whose outcomes are all already the words they mean (the usual
/// log) is passed on without a copy.
fn outcome_of(outcome: &Column, status: &Column) -> PolarsResult<Column> {
    let height = outcome.len().max(status.len());
    let outcome = crate::stats::at_height(outcome, height);
    let text = outcome.str()?;
    let words = if text.iter().flatten().all(|s| outcome_word(s) == s) {
        text.clone()
    } else {
        text.apply_values(outcome_word)
    };
    if words.null_count() == 0 {
        return Ok(words.into_column());
    }
    let status = crate::stats::at_height(status, height).cast(&DataType::Int64)?;
    let out: StringChunked = words
        .iter()
        .zip(status.i64()?.iter())
        .map(|(word, status)| word.or_else(|| status.map(status_word)))
        .collect();
    Ok(out.with_name(words.name().clone()).into_column())
}

/// The outcome an HTTP status means: 499 cancelled (the client went away), 408 and 504
/// timeout, 2xx and 3xx ok, anything else an error. (`ruleset::like` writes the same in
/// SQL.)
fn status_word(status: i64) -> &'static str {
    match status {
        499 => "cancelled",
        408 | 504 => "timeout",
        200..=399 => "ok",
        _ => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `outcome_word` agrees with what polars' expressions gave: the column lower-cased
    /// by polars, then each word looked up; on ASCII, mixed case and text whose lower case
    /// is not ASCII (the Kelvin sign K lower-cases to `k`; a final Σ to ς).
    #[test]
    fn outcome_words_as_polars_lower_cases_them() {
        let texts = [
            "ok",
            "OK",
            "Success",
            "DONE",
            "Failed",
            "fail",
            "Canceled",
            "client_gone",
            "ABORTED",
            "Timed_Out",
            "DEADLINE_EXCEEDED",
            "\u{212A}",
            "O\u{212A}",
            "partial",
            "Rate_Limited",
            "ΟΔΟΣ",
            "Éxito",
            "",
        ];
        let lowered = Series::new("o".into(), texts).str().unwrap().to_lowercase();
        for (text, lower) in texts.iter().zip(lowered.iter()) {
            let lower = lower.unwrap();
            let expected = OUTCOME_WORDS
                .iter()
                .find(|(_, words)| words.contains(&lower))
                .map_or(lower, |(word, _)| word);
            assert_eq!(outcome_word(text), expected, "{text:?}");
        }
        assert_eq!(outcome_word("O\u{212A}"), "ok");
        assert_eq!(outcome_word("ΟΔΟΣ"), "οδος");
    }

    /// NaN and ±inf become null and every other value stays, as `when(is_finite)` made
    /// them, in a morsel of one chunk or several, with or without nulls; a morsel of
    /// finite values comes back as it was.
    #[test]
    fn finite_values_make_nan_and_infinities_null() {
        let finite = |cells: Vec<Option<f64>>, chunks: usize| {
            let mut s = Series::new("x".into(), &cells[..cells.len() / chunks]);
            for part in cells.chunks(cells.len() / chunks).skip(1) {
                s.append(&Series::new("x".into(), part)).unwrap();
            }
            let by_polars: Vec<Option<f64>> = s
                .clone()
                .into_frame()
                .lazy()
                .select([when(col("x").is_finite())
                    .then(col("x"))
                    .otherwise(lit(NULL).cast(DataType::Float64))])
                .collect()
                .unwrap()
                .column("x")
                .unwrap()
                .f64()
                .unwrap()
                .iter()
                .collect();
            let out = s
                .into_frame()
                .lazy()
                .select([finite_values(col("x"))])
                .collect()
                .unwrap();
            let got: Vec<Option<f64>> = out.column("x").unwrap().f64().unwrap().iter().collect();
            assert_eq!(
                got.iter().map(|v| v.map(f64::to_bits)).collect::<Vec<_>>(),
                by_polars
                    .iter()
                    .map(|v| v.map(f64::to_bits))
                    .collect::<Vec<_>>()
            );
            got
        };
        let cells = vec![
            Some(1.5),
            Some(f64::NAN),
            Some(f64::INFINITY),
            None,
            Some(f64::NEG_INFINITY),
            Some(-0.0),
            Some(-2.0),
            Some(1e300),
        ];
        for chunks in [1, 2, 4] {
            assert_eq!(
                finite(cells.clone(), chunks),
                [
                    Some(1.5),
                    None,
                    None,
                    None,
                    None,
                    Some(-0.0),
                    Some(-2.0),
                    Some(1e300)
                ]
            );
        }
        let clean = vec![Some(0.25), None, Some(-3.0), Some(7.0)];
        assert_eq!(finite(clean.clone(), 1), clean);
        assert_eq!(finite(clean.clone(), 2), clean);
    }

    /// A text cell is trimmed and a blank one null, as `strip_chars` and a test for blank
    /// made it; clean text comes back as it was.
    #[test]
    fn text_cells_are_trimmed_and_blank_is_null() {
        let cells = [
            Some("gpt-4.1"),
            Some("  padded\t"),
            Some(""),
            Some(" \u{3000} "),
            None,
            Some("a b"),
        ];
        let got = text_cells(&StringChunked::new("c".into(), cells));
        let got: Vec<Option<&str>> = got.iter().collect();
        assert_eq!(
            got,
            [
                Some("gpt-4.1"),
                Some("padded"),
                None,
                None,
                None,
                Some("a b")
            ]
        );
        let clean = StringChunked::new("c".into(), [Some("ok"), None, Some("x y")]);
        assert!(text_cells(&clean).equal_missing(&clean).all());
    }

    /// The byte test says what `trim` says, on ASCII ends and on others.
    #[test]
    fn a_cell_reads_as_is_as_trim_says() {
        let cells = [
            "gpt-4.1",
            "",
            " ",
            "a",
            " a",
            "a ",
            "\ta",
            "a\r",
            "\x0Ba",
            "a\x0C",
            "\u{85}a",
            "a\u{a0}",
            "\u{3000}",
            "é",
            "éa",
            "aé",
            "a\u{2003}",
            "-1",
            "\u{1F600}",
        ];
        for cell in cells {
            let by_trim = !cell.is_empty() && cell.trim().len() == cell.len();
            assert_eq!(reads_as_is(cell), by_trim, "{cell:?}");
        }
    }

    /// A flag's words are compared as polars' lower case compares them.
    #[test]
    fn a_flag_word_is_read_as_in_lower_case() {
        let texts = [
            "true",
            "TRUE",
            "True",
            "tRuE",
            "1",
            "yes",
            "YES",
            "false",
            "FALSE",
            "0",
            "no",
            "No",
            "01",
            " true",
            "t",
            "yes!",
            "ｔｒｕｅ",
            "\u{212A}",
            "İ",
            "ÿes",
            "",
        ];
        let lowered = Series::new("f".into(), texts).str().unwrap().to_lowercase();
        for (text, lower) in texts.iter().zip(lowered.iter()) {
            let lower = lower.unwrap();
            let expected = if ["true", "1", "yes"].contains(&lower) {
                Some(true)
            } else if ["false", "0", "no"].contains(&lower) {
                Some(false)
            } else {
                None
            };
            assert_eq!(flag_word(text), expected, "{text:?}");
        }
    }

    /// The outcome is its word where the log has one, else its status's; with neither,
    /// null. A status that is one literal value (no status column) stands for every row.
    #[test]
    fn an_outcome_is_its_word_else_its_status() {
        let outcome = Column::new(
            "outcome".into(),
            [
                Some("OK"),
                None,
                None,
                None,
                Some("Rate_Limited"),
                None,
                None,
            ],
        );
        let status = Column::new(
            "status".into(),
            [
                Some(500i64),
                Some(499),
                Some(504),
                Some(302),
                Some(200),
                Some(408),
                None,
            ],
        );
        let got = outcome_of(&outcome, &status).unwrap();
        let got: Vec<Option<&str>> = got.str().unwrap().iter().collect();
        assert_eq!(
            got,
            [
                Some("ok"),
                Some("cancelled"),
                Some("timeout"),
                Some("ok"),
                Some("rate_limited"),
                Some("timeout"),
                None
            ]
        );
        let one = Column::new("status".into(), [Some(404i64)]);
        let got = outcome_of(&outcome, &one).unwrap();
        assert_eq!(got.len(), 7);
        assert_eq!(got.str().unwrap().get(1), Some("error"));
        assert_eq!(got.str().unwrap().get(0), Some("ok"));
    }
}
