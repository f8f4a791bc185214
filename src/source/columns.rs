//! The user's own column names: `--map FIELD=COLUMN[:UNIT]` and `--schema FILE.toml`.
//!
//! A log whose columns are named its own way (`ttft_ms`, `latency_s`, `other.ttft` inside
//! a JSON string) says here which catalogue field each one is. The mapping is checked
//! like a rule file before any log is read (a field the catalogue lacks, a unit its kind
//! cannot take, a column that holds content: exit 2 with the nearest name), then against
//! each file's columns (`resolve`: a column the file lacks, with the nearest of its
//! columns). The field keeps the catalogue's kind and origin, so the rule checker's
//! same-origin check covers mapped fields as it covers the automatic ones; the user's
//! entry replaces the automatic mapping of that field only.

use std::ops::Range;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::Deserialize;
use toml::Spanned;

use super::canonical::{self, Mapping, Origin};
use crate::catalogue::{self, Kind, CONTENT_COLUMNS, FIELDS};
use crate::error::{Error, Result, RuleError};

/// The unit a mapped column's numbers are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    S,
    Ms,
    Us,
    Ns,
}

/// Every unit, as written.
const UNITS: [(&str, Unit); 4] = [
    ("s", Unit::S),
    ("ms", Unit::Ms),
    ("us", Unit::Us),
    ("ns", Unit::Ns),
];

impl Unit {
    pub fn parse(text: &str) -> Option<Unit> {
        UNITS.iter().find(|(n, _)| *n == text).map(|(_, u)| *u)
    }

    pub fn name(self) -> &'static str {
        UNITS
            .iter()
            .find(|(_, u)| *u == self)
            .map_or("?", |(n, _)| n)
    }

    /// Milliseconds in one of this unit: the catalogue's times are milliseconds.
    pub fn in_ms(self) -> f64 {
        match self {
            Unit::S => 1e3,
            Unit::Ms => 1.0,
            Unit::Us => 1e-3,
            Unit::Ns => 1e-6,
        }
    }

    /// A number in this unit as milliseconds. Smaller units are divided, not multiplied
    /// by a fraction: 1500 us is then exactly 1.5 ms.
    pub fn to_ms(self, e: Expr) -> Expr {
        match self {
            Unit::S => e * lit(1e3),
            Unit::Ms => e,
            Unit::Us => e / lit(1e3),
            Unit::Ns => e / lit(1e6),
        }
    }
}

/// Where an entry was given: what the header names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Given {
    Flag,
    Schema(PathBuf),
}

impl std::fmt::Display for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Given::Flag => f.write_str("--map"),
            Given::Schema(p) => write!(f, "--schema {}", p.display()),
        }
    }
}

/// One field the user mapped.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// A catalogue field.
    pub field: &'static str,
    /// A column of the file: a name, a dotted path into a struct column, or a path inside
    /// a column of JSON text.
    pub column: String,
    pub unit: Option<Unit>,
    pub given: Given,
}

/// The user's mapping, one entry per field, in catalogue order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnMap {
    pub entries: Vec<Entry>,
}

/// The candidate closest to `name`, if it is close enough to be a likely typo (as the
/// rule checker's `nearest`, which sources do not import).
pub fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|(d, c)| *d <= 3.max(c.len() / 4))
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// What is wrong with an entry, and the nearest valid name.
struct Fault {
    message: String,
    help: Option<String>,
}

impl Fault {
    fn new(message: String) -> Fault {
        Fault {
            message,
            help: None,
        }
    }
}

/// The catalogue field `name`, or why not.
fn field(name: &str) -> std::result::Result<&'static str, Fault> {
    if let Some(f) = catalogue::field(name) {
        return Ok(f.name);
    }
    // A column name tracediag already reads as a field: say which.
    if let Some(f) = FIELDS
        .iter()
        .find(|f| f.aliases.iter().any(|a| a.eq_ignore_ascii_case(name)))
    {
        return Err(Fault {
            message: format!(
                "`{name}` is no catalogue field (it is a column name read as `{}`)",
                f.name
            ),
            help: Some(format!("did you mean `{}`?", f.name)),
        });
    }
    Err(Fault {
        message: format!("`{name}` is no catalogue field (`tracediag fields` lists them)"),
        help: nearest(name, FIELDS.iter().map(|f| f.name)).map(|s| format!("did you mean `{s}`?")),
    })
}

/// Whether a field of this kind takes a unit: a time in milliseconds, or a timestamp (Unix
/// time in that unit).
fn takes_unit(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Point { .. } | Kind::Phase | Kind::Duration | Kind::Timestamp
    )
}

/// The unit `text` of `field`, or why not.
fn unit(field: &'static str, text: &str) -> std::result::Result<Unit, Fault> {
    let Some(unit) = Unit::parse(text) else {
        return Err(Fault {
            message: format!("`{text}` is no unit (s, ms, us or ns)"),
            help: nearest(text, UNITS.iter().map(|(n, _)| *n))
                .map(|s| format!("did you mean `{s}`?")),
        });
    };
    let kind = catalogue::field(field).map(|f| f.kind);
    match kind {
        Some(k) if takes_unit(k) => Ok(unit),
        Some(k) => Err(Fault::new(format!(
            "`{field}` is a {}: a unit goes with a time in ms or a timestamp",
            k.describe()
        ))),
        None => Err(Fault::new(format!("`{field}` is no catalogue field"))),
    }
}

/// The column `text`, or why not: never one holding content or secrets (a prompt, a
/// response, a key), nor anything inside one.
fn column(text: &str) -> std::result::Result<String, Fault> {
    if text.is_empty() || text.split('.').any(str::is_empty) {
        return Err(Fault::new(format!(
            "`{text}` is no column: expected a name or a dotted path (`other.timing.ttft`)"
        )));
    }
    if let Some(part) = text
        .split('.')
        .find(|p| CONTENT_COLUMNS.contains(&p.to_ascii_lowercase().as_str()))
    {
        let what = if part == text {
            format!("`{text}`")
        } else {
            format!("`{text}`: `{part}`")
        };
        return Err(Fault::new(format!(
            "{what} holds content or secrets (prompts, responses, keys), which tracediag never reads"
        )));
    }
    Ok(text.to_string())
}

impl ColumnMap {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The mapping of `--schema` (if given) and `--map` flags, a flag replacing the schema
    /// file's entry for its field.
    pub fn from_args(flags: &[String], schema: Option<&Path>) -> Result<ColumnMap> {
        let mut entries = match schema {
            Some(p) => parse_schema(p)?,
            None => vec![],
        };
        let mut flagged: Vec<&'static str> = vec![];
        for text in flags {
            let e = parse_flag(text)?;
            if flagged.contains(&e.field) {
                return Err(Error::Usage(format!(
                    "--map {text}: `{}` is mapped twice on the command line",
                    e.field
                )));
            }
            flagged.push(e.field);
            entries.retain(|x| x.field != e.field);
            entries.push(e);
        }
        let order = |f: &str| FIELDS.iter().position(|x| x.name == f);
        entries.sort_by_key(|e| order(e.field));
        Ok(ColumnMap { entries })
    }

    /// The header's line: "mapped by --map: first_sse_event_ms ← ttft_ms, total_handler_ms
    /// ← latency_s (s)", one clause per place the entries were given.
    pub fn describe(&self) -> Option<String> {
        describe(self.entries.iter().map(|e| {
            (
                e.given.to_string(),
                e.field.to_string(),
                e.column.clone(),
                e.unit.map(Unit::name),
            )
        }))
    }

    /// The entry for `field`.
    pub fn get(&self, field: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.field == field)
    }
}

/// The header's line from (given by, field, column, unit) in order, as `describe`.
pub fn describe(
    entries: impl Iterator<Item = (String, String, String, Option<&'static str>)>,
) -> Option<String> {
    let mut clauses: Vec<(String, Vec<String>)> = vec![];
    for (given, field, column, unit) in entries {
        let text = match unit {
            Some(u) => format!("{field} ← {column} ({u})"),
            None => format!("{field} ← {column}"),
        };
        match clauses.iter_mut().find(|(g, _)| *g == given) {
            Some((_, v)) => v.push(text),
            None => clauses.push((given, vec![text])),
        }
    }
    if clauses.is_empty() {
        return None;
    }
    let clauses: Vec<String> = clauses
        .into_iter()
        .map(|(g, v)| format!("mapped by {g}: {}", v.join(", ")))
        .collect();
    Some(clauses.join("; "))
}

/// One `--map FIELD=COLUMN[:UNIT]`. The unit is what follows the last `:` (a column whose
/// name holds a `:` is mapped in a `--schema` file, where the unit has a key of its own).
pub fn parse_flag(text: &str) -> Result<Entry> {
    let usage = |f: Fault| {
        let mut msg = format!("--map {text}: {}", f.message);
        if let Some(h) = f.help {
            msg.push_str(&format!("; {h}"));
        }
        Error::Usage(msg)
    };
    let Some((name, rest)) = text.split_once('=') else {
        return Err(usage(Fault::new(
            "expected FIELD=COLUMN[:UNIT], e.g. first_sse_event_ms=ttft_ms or total_handler_ms=latency_s:s".into(),
        )));
    };
    let field = field(name.trim()).map_err(usage)?;
    let (col, unit_text) = match rest.rsplit_once(':') {
        Some((c, u)) => (c, Some(u)),
        None => (rest, None),
    };
    let column = column(col.trim()).map_err(usage)?;
    let unit = unit_text
        .map(|u| unit(field, u.trim()))
        .transpose()
        .map_err(usage)?;
    Ok(Entry {
        field,
        column,
        unit,
        given: Given::Flag,
    })
}

/// A `--schema` file: a `[map]` table of `field = "column"` or `field = { column = "…",
/// unit = "s" }`, each key and value with where it is written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SchemaFile {
    map: std::collections::BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// Errors in a `--schema` file, pointing at its line and column as a rule file's do.
struct SchemaText<'a> {
    file: String,
    src: &'a str,
}

impl SchemaText<'_> {
    fn error(&self, span: Option<Range<usize>>, fault: Fault) -> Error {
        let (line, column, width, source_line) = match span {
            Some(span) => {
                let (line, column) = super::line_and_column(self.src.as_bytes(), span.start);
                let source_line = self.src.lines().nth(line - 1).map(str::to_string);
                let text = &self.src[span.clone()];
                let width = if text.contains('\n') {
                    1
                } else {
                    text.chars().count().max(1)
                };
                (line, column, width, source_line)
            }
            None => (0, 0, 0, None),
        };
        Error::Rule(Box::new(RuleError {
            file: self.file.clone(),
            line,
            column,
            width,
            message: fault.message,
            source_line,
            notes: vec![],
            help: fault.help,
        }))
    }
}

/// The entries of a `--schema` file.
pub fn parse_schema(path: &Path) -> Result<Vec<Entry>> {
    let src = std::fs::read_to_string(path)
        .map_err(|e| Error::input(path, format!("cannot read the --schema file: {e}")))?;
    let text = SchemaText {
        file: path.display().to_string(),
        src: &src,
    };
    let file: SchemaFile = toml::from_str(&src).map_err(|e| {
        let message = e.message().trim_end().to_string();
        text.error(e.span(), Fault::new(message))
    })?;
    let given = Given::Schema(path.to_path_buf());
    let mut entries = vec![];
    for (name, value) in &file.map {
        let field = field(name.get_ref()).map_err(|f| text.error(Some(name.span()), f))?;
        let at = Some(value.span());
        let (col, unit_text) = target(value.get_ref())
            .map_err(|m| text.error(at.clone(), Fault::new(format!("`{field}`: {m}"))))?;
        let column = column(&col).map_err(|f| text.error(at.clone(), f))?;
        let unit = match unit_text {
            Some(u) => Some(unit(field, &u).map_err(|f| text.error(at.clone(), f))?),
            None => None,
        };
        entries.push(Entry {
            field,
            column,
            unit,
            given: given.clone(),
        });
    }
    Ok(entries)
}

/// An entry's value: its column, and its unit when it has one.
fn target(value: &toml::Value) -> std::result::Result<(String, Option<String>), String> {
    const SHAPE: &str = r#"expected "column" or { column = "…", unit = "s" }"#;
    match value {
        toml::Value::String(c) => Ok((c.clone(), None)),
        toml::Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| !["column", "unit"].contains(&k.as_str())) {
                let near = nearest(k, ["column", "unit"].into_iter())
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                return Err(format!("unknown key `{k}`{near}: {SHAPE}"));
            }
            let text = |key: &str| match t.get(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                Some(v) => Err(format!("`{key}` is {}: {SHAPE}", article(v.type_str()))),
            };
            match text("column")? {
                Some(c) => Ok((c, text("unit")?)),
                None => Err(format!("no `column`: {SHAPE}")),
            }
        }
        v => Err(format!("found {}: {SHAPE}", article(v.type_str()))),
    }
}

/// `a string`, `an integer`.
fn article(noun: &str) -> String {
    match noun.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {noun}"),
        _ => format!("a {noun}"),
    }
}

/// Rows looked at first for a column's values (the whole file only when none has one).
const HEAD_ROWS: IdxSize = 1000;

/// Whether any row has a value in `e`: the first rows, then (only if none has) every row.
fn any_value(raw: &LazyFrame, e: Expr, name: &Path) -> Result<bool> {
    let any = |lf: LazyFrame| -> Result<bool> {
        let df = lf
            .select([e.clone().is_not_null().any(true).alias("any")])
            .collect()
            .map_err(|err| Error::input(name, super::polars_message(&err)))?;
        Ok(df
            .column("any")
            .ok()
            .and_then(|c| c.bool().ok()?.get(0))
            .unwrap_or(false))
    };
    Ok(any(raw.clone().slice(0, HEAD_ROWS))? || any(raw.clone())?)
}

/// Where `column` is in a file of `schema`: a column (its name as written, else in another
/// case), a path into a struct column, or a path inside a column of text (read as JSON).
pub(crate) fn locate(schema: &Schema, column: &str) -> Option<(Origin, DataType)> {
    if let Some(dt) = schema.get(column) {
        return Some((Origin::Column(column.to_string()), dt.clone()));
    }
    if let Some((n, dt)) = schema.iter().find(|(n, _)| n.eq_ignore_ascii_case(column)) {
        return Some((Origin::Column(n.to_string()), dt.clone()));
    }
    let parts: Vec<&str> = column.split('.').collect();
    // The longest leading part that is a column: a name may itself hold dots.
    for i in (1..parts.len()).rev() {
        let head = parts[..i].join(".");
        let Some(dt) = schema.get(&head) else {
            continue;
        };
        let rest: Vec<String> = parts[i..].iter().map(|p| p.to_string()).collect();
        return match dt {
            DataType::Struct(_) => {
                let mut dt = dt;
                for p in &rest {
                    match dt {
                        DataType::Struct(fields) => {
                            dt = fields.iter().find(|f| f.name() == p.as_str())?.dtype()
                        }
                        _ => return None,
                    }
                }
                let path = std::iter::once(head).chain(rest).collect();
                Some((Origin::Nested(path), dt.clone()))
            }
            DataType::String => Some((
                Origin::JsonPath {
                    column: head,
                    path: rest,
                },
                DataType::String,
            )),
            _ => None,
        };
    }
    None
}

/// Every name `locate` finds in `schema`: its columns and the paths into its structs.
fn names(schema: &Schema) -> Vec<String> {
    fn walk(prefix: &str, dt: &DataType, out: &mut Vec<String>) {
        out.push(prefix.to_string());
        if let DataType::Struct(fields) = dt {
            for f in fields {
                walk(&format!("{prefix}.{}", f.name()), f.dtype(), out);
            }
        }
    }
    let mut out = vec![];
    for (n, dt) in schema.iter() {
        walk(n, dt, &mut out);
    }
    out
}

/// The keys found at `path` inside the first rows' JSON text in `column` (for the nearest
/// key of a path no row holds).
fn keys_at(raw: &LazyFrame, column: &str, path: &[String]) -> Vec<String> {
    let Ok(df) = raw
        .clone()
        .slice(0, HEAD_ROWS)
        .select([col(column)])
        .collect()
    else {
        return vec![];
    };
    let Ok(texts) = df.column(column).and_then(|c| c.str().cloned()) else {
        return vec![];
    };
    let mut keys: Vec<String> = vec![];
    for text in texts.iter().flatten() {
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(text) else {
            continue;
        };
        for p in &path[..path.len().saturating_sub(1)] {
            v = v.get(p).cloned().unwrap_or_default();
        }
        if let serde_json::Value::Object(o) = v {
            for k in o.keys() {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
    }
    keys
}

/// The error for an entry whose column `name`'s file lacks, with the nearest of `names`.
fn unknown(e: &Entry, name: &Path, what: String, names: &[String]) -> Error {
    let mut msg = format!("{} {}={}: {what}", e.given, e.field, e.column);
    let last = e.column.rsplit('.').next().unwrap_or(&e.column);
    let near = nearest(&e.column, names.iter().map(String::as_str))
        .or_else(|| nearest(last, names.iter().map(String::as_str)));
    if let Some(n) = near {
        msg.push_str(&format!("; did you mean `{n}`?"));
    }
    Error::input(name, msg)
}

/// Put the user's entries into a file's automatic `mapping`: each field is read from the
/// user's column instead (checked: the file has it, of a type the field can be read
/// from), and a field the automatic mapping read from a column the user named is not
/// read (the user said what that column is). `keys` are a JSON log's top-level keys
/// (what polars reads of it is only what the mapping asks for); `json` says it is one.
pub(crate) fn apply(
    map: &ColumnMap,
    mapping: &mut Mapping,
    raw: &LazyFrame,
    schema: &Schema,
    name: &Path,
    keys: Option<&[String]>,
) -> Result<()> {
    let mut claimed = vec![];
    for e in &map.entries {
        let Some((origin, dtype)) = locate(schema, &e.column) else {
            let mut all = names(schema);
            all.extend(keys.unwrap_or_default().iter().cloned());
            return Err(unknown(e, name, format!("no column `{}`", e.column), &all));
        };
        check_values(e, &origin, raw, name, keys)?;
        let kind = catalogue::field(e.field)
            .map(|f| f.kind)
            .unwrap_or(Kind::Label);
        if !canonical::readable_as(kind, &dtype) {
            return Err(Error::input(
                name,
                format!(
                    "{} {}={}: expected {}, found {dtype}",
                    e.given,
                    e.field,
                    e.column,
                    canonical::expected(kind)
                ),
            ));
        }
        if let Some(slot) = mapping.fields.iter_mut().find(|(n, _, _)| n == e.field) {
            *slot = (e.field.to_string(), origin.clone(), dtype.clone());
        }
        mapping.shadowed.retain(|(f, _, _)| f != e.field);
        mapping.by_user.push(e.field.to_string());
        if let Some(u) = e.unit {
            mapping.units.push((e.field.to_string(), u));
        }
        if e.field == "timestamp" {
            mapping.unix_time = e.unit.is_none()
                && match (&origin, &dtype) {
                    (_, d) if d.is_primitive_numeric() => true,
                    (Origin::Column(c), DataType::String) => {
                        super::timestamp::holds_numbers(raw, c)
                    }
                    _ => false,
                };
        }
        claimed.push(origin);
    }
    for (field, origin, dtype) in mapping.fields.iter_mut() {
        if !mapping.by_user.contains(field) && claimed.iter().any(|c| claims(c, origin)) {
            *origin = Origin::Absent;
            *dtype = DataType::Null;
        }
    }
    let by_user = &mapping.by_user;
    let fields = &mapping.fields;
    mapping.shadowed.retain(|(f, _, _)| {
        by_user.contains(f)
            || fields
                .iter()
                .any(|(n, o, _)| n == f && *o != Origin::Absent)
    });
    Ok(())
}

/// Whether the user's `claimed` place is where the automatic mapping found `origin`: the
/// same place, or (for a path inside JSON text) anything else inside the same text, which
/// the user has said what it holds.
fn claims(claimed: &Origin, origin: &Origin) -> bool {
    match (claimed, origin) {
        (Origin::JsonPath { column, .. }, Origin::JsonString(_)) => column == "other",
        (Origin::JsonPath { column, .. }, Origin::Column(c)) => column == c,
        (a, b) => a == b,
    }
}

/// Refuse a column no row has a value in, where the schema cannot tell: a key of a JSON
/// log that its first rows do not hold (polars reads whatever key it is asked for), and a
/// path inside JSON text.
fn check_values(
    e: &Entry,
    origin: &Origin,
    raw: &LazyFrame,
    name: &Path,
    keys: Option<&[String]>,
) -> Result<()> {
    match (origin, keys) {
        (Origin::JsonPath { column, path }, _)
            if !any_value(raw, canonical::source_expr(origin), name)? =>
        {
            Err(unknown(
                e,
                name,
                format!(
                    "no row's `{column}` holds `{}` (read as JSON text)",
                    path.join(".")
                ),
                &keys_at(raw, column, path),
            ))
        }
        (Origin::Column(c), Some(keys))
            if !keys.contains(c) && !any_value(raw, col(c.as_str()), name)? =>
        {
            Err(unknown(e, name, format!("no row has `{c}`"), keys))
        }
        _ => Ok(()),
    }
}

/// A JSON log's schema widened by the user's columns: a key it does not read yet, read as
/// text (polars writes a number or an object as its JSON text); a key holding an object
/// the path goes into, read as text when the path is not in the object's schema (the
/// schema lists only the timing fields; `other` as text still gives them).
pub(crate) fn json_schema(map: &ColumnMap, mut schema: Schema, keys: &[String]) -> Schema {
    for e in &map.entries {
        if schema.contains(&e.column) || locate(&schema, &e.column).is_some() {
            continue;
        }
        let top = if keys.contains(&e.column) {
            e.column.as_str()
        } else {
            e.column.split('.').next().unwrap_or(&e.column)
        };
        schema.with_column(top.into(), DataType::String);
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(text: &str) -> std::result::Result<Entry, String> {
        parse_flag(text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_flag_is_field_column_and_unit() {
        let e = flag("total_handler_ms=latency_s:s").unwrap();
        assert_eq!(
            (e.field, e.column.as_str(), e.unit),
            ("total_handler_ms", "latency_s", Some(Unit::S))
        );
        let e = flag("first_sse_event_ms=other.timing.ttft").unwrap();
        assert_eq!((e.column.as_str(), e.unit), ("other.timing.ttft", None));
        assert_eq!(flag("timestamp=ts_ns:ns").unwrap().unit, Some(Unit::Ns));
    }

    #[test]
    fn a_flag_names_what_is_wrong_and_the_nearest_name() {
        let err = flag("first_sse_evnt_ms=x").unwrap_err();
        assert!(err.contains("did you mean `first_sse_event_ms`?"), "{err}");
        // An alias is a column name, not a field: the field it is read as is suggested.
        let err = flag("prompt_tokens=x").unwrap_err();
        assert!(err.contains("did you mean `input_tokens`?"), "{err}");
        let err = flag("total_handler_ms=x:sec").unwrap_err();
        assert!(err.contains("did you mean `s`?"), "{err}");
        for (text, says) in [
            ("output_tokens=x:s", "a unit goes with a time"),
            ("visible_output_tps=x:ms", "a unit goes with a time"),
            (
                "first_sse_event_ms=response.usage.ttft",
                "`response` holds content",
            ),
            ("first_sse_event_ms=Authorization", "holds content"),
            ("first_sse_event_ms=", "is no column"),
            ("first_sse_event_ms=a..b", "is no column"),
            ("first_sse_event_ms", "expected FIELD=COLUMN"),
        ] {
            let err = flag(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn a_flag_replaces_the_schema_files_entry() {
        let dir = tempfile::tempdir().unwrap();
        let schema = dir.path().join("s.toml");
        std::fs::write(
            &schema,
            "[map]\nmodel = \"llm\"\ntotal_handler_ms = { column = \"latency_s\", unit = \"s\" }\n",
        )
        .unwrap();
        let map = ColumnMap::from_args(&["total_handler_ms=end_ms".into()], Some(&schema)).unwrap();
        // Catalogue order, the flag's entry in place of the file's.
        let got: Vec<(&str, &str, Option<Unit>)> = map
            .entries
            .iter()
            .map(|e| (e.field, e.column.as_str(), e.unit))
            .collect();
        assert_eq!(
            got,
            [("total_handler_ms", "end_ms", None), ("model", "llm", None)]
        );
        assert_eq!(
            map.describe().unwrap(),
            format!(
                "mapped by --map: total_handler_ms ← end_ms; mapped by --schema {}: model ← llm",
                schema.display()
            )
        );
        let twice = ColumnMap::from_args(&["model=a".into(), "model=b".into()], None);
        assert!(twice.unwrap_err().to_string().contains("mapped twice"));
        assert_eq!(ColumnMap::default().describe(), None);
    }

    #[test]
    fn schema_errors_point_at_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let at = |text: &str| {
            let p = dir.path().join("s.toml");
            std::fs::write(&p, text).unwrap();
            match parse_schema(&p) {
                Err(Error::Rule(e)) => (e.line, e.message.clone(), e.help.clone()),
                other => panic!("{text}: {other:?}"),
            }
        };
        let (line, msg, help) = at("[map]\nmodel = \"llm\"\nmodle = \"x\"\n");
        assert_eq!(
            (line, help.as_deref()),
            (3, Some("did you mean `model`?")),
            "{msg}"
        );
        let (line, msg, _) = at("[map]\n\nmodel = { column = \"llm\", units = \"s\" }\n");
        assert_eq!(line, 3);
        assert!(
            msg.contains("unknown key `units` (did you mean `unit`?)"),
            "{msg}"
        );
        let (line, msg, _) = at("[map]\nmodel = 3\n");
        assert_eq!(line, 2);
        assert!(msg.contains("found an integer"), "{msg}");
        let (_, msg, _) = at("[map]\nmodel = { unit = \"s\" }\n");
        assert!(msg.contains("no `column`"), "{msg}");
    }

    #[test]
    fn a_column_is_found_flat_nested_or_in_json_text() {
        let timing = DataType::Struct(vec![Field::new("ttft".into(), DataType::Int64)]);
        let schema = Schema::from_iter([
            Field::new("Latency_S".into(), DataType::Float64),
            Field::new("a.b".into(), DataType::String),
            Field::new(
                "meta".into(),
                DataType::Struct(vec![Field::new("timing".into(), timing)]),
            ),
            Field::new("other".into(), DataType::String),
            Field::new("n".into(), DataType::Int64),
        ]);
        let found = |c: &str| locate(&schema, c).map(|(o, _)| o);
        assert_eq!(found("latency_s"), Some(Origin::Column("Latency_S".into())));
        assert_eq!(found("a.b"), Some(Origin::Column("a.b".into())));
        assert_eq!(
            found("meta.timing.ttft"),
            Some(Origin::Nested(vec![
                "meta".into(),
                "timing".into(),
                "ttft".into()
            ]))
        );
        assert_eq!(
            found("other.x.y"),
            Some(Origin::JsonPath {
                column: "other".into(),
                path: vec!["x".into(), "y".into()]
            })
        );
        assert_eq!(
            found("a.b.c"),
            Some(Origin::JsonPath {
                column: "a.b".into(),
                path: vec!["c".into()]
            })
        );
        assert_eq!(found("meta.timing.tft"), None);
        assert_eq!(found("n.x"), None);
        assert_eq!(found("missing"), None);
        assert!(names(&schema).contains(&"meta.timing.ttft".to_string()));
    }

    /// A path inside JSON text reads any key, and units convert exactly.
    #[test]
    fn json_paths_and_units_read_as_written() {
        let df = df!(
            "j" => [r#"{"it's": {"a.b": 1500}}"#, r#"{"it's": {}}"#, "  "],
            "s" => [1.5f64, 2.0, 0.25],
        )
        .unwrap();
        let path = Origin::JsonPath {
            column: "j".into(),
            path: vec!["it's".into(), "a.b".into()],
        };
        let out = df
            .lazy()
            .select([
                canonical::source_expr(&path).alias("v"),
                Unit::S.to_ms(col("s")).alias("ms"),
                Unit::Us.to_ms(lit(1500.0)).alias("us"),
                Unit::Ns.to_ms(lit(2_500_000.0)).alias("ns"),
            ])
            .collect()
            .unwrap();
        let v: Vec<Option<&str>> = out.column("v").unwrap().str().unwrap().iter().collect();
        assert_eq!(v, [Some("1500"), None, None]);
        let ms: Vec<Option<f64>> = out.column("ms").unwrap().f64().unwrap().iter().collect();
        assert_eq!(ms, [Some(1500.0), Some(2000.0), Some(250.0)]);
        assert_eq!(out.column("us").unwrap().f64().unwrap().get(0), Some(1.5));
        assert_eq!(out.column("ns").unwrap().f64().unwrap().get(0), Some(2.5));
    }
}
