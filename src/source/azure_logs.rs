//! Log Analytics `AzureMetrics` rows: reads the table that a diagnostic setting fills with
//! a resource's platform metrics, and turns each row into the same [`MetricValue`] records
//! [`super::azure`] reads from Metrics REST responses, so [`super::azure_windows`] and
//! everything after it need not know where the figures came from.
//!
//! Accepted shapes, all carrying the columns of docs/azure.md §3.1
//! (`TimeGenerated`, `_ResourceId`/`ResourceId`, `MetricName`, `Total`, `Count`, `Maximum`,
//! `Minimum`, `Average`, `TimeGrain`, `UnitName`; any other column is ignored):
//! - the portal's "Export to CSV" of a query result (UTF-8 BOM, CRLF, quoted fields, and a
//!   `TimeGenerated [UTC]` header are all fine);
//! - the Log Analytics query API body `{"tables": [{"name", "columns": [{"name", "type"}],
//!   "rows": [[…]]}]}` (docs/azure.md §3.1); tables without `TimeGenerated` and `MetricName` columns are
//!   not AzureMetrics rows and are skipped;
//! - `az monitor log-analytics query -o json`: an array of row objects whose values are all
//!   strings, plus `"TableName"` (§3.4).
//!
//! Why the rules are what they are:
//! - **No dimensions.** Diagnostic settings flatten multi-dimensional metrics (aggregated
//!   over every dimension value, §3.1), so the table has no dimension columns and every
//!   record has empty `dimensions`: there is no per-deployment figure in this table, and
//!   `azure_windows` rows it under the account name.
//! - **Missing is absent.** An empty cell, a JSON `null` and the string `""` give no record
//!   (Azure: NULL differs from zero), and so do `NaN` and infinities: a Kusto `real` can
//!   hold them, but they are no measurement. A row with nothing in any of the columns above
//!   (a blank CSV line) is no row.
//! - **Numbers may be strings** (the az CLI writes every value as one); anything else where
//!   a number is expected is an error naming the file, the row (1-based data row; for CSV
//!   also the line) and the column, rather than a guess.
//! - **Resource** is `_ResourceId`, else `ResourceId` (the table reference prefers the
//!   former; Azure writes the latter upper-cased), else the `Resource` name, else empty: the
//!   example query of Microsoft's Azure OpenAI monitoring doc projects no resource column at
//!   all, and its export should still load.
//! - **Metric names** are kept as written. The table reference calls `MetricName` the
//!   display name; nothing here maps display names to REST names.
//! - **Time.** `TimeGenerated` is ISO 8601 with `Z`, an offset, or nothing (taken as UTC),
//!   with up to 7 fractional digits. The portal CSV writes `11/29/2026, 1:05:00.000 PM`; that
//!   `M/D/YYYY, h:mm:ss[.fff] AM/PM` form is read as UTC, because the portal labels the
//!   column `TimeGenerated [UTC]` (docs/azure.md §2, third-party). A header naming any other zone (`[Local Time]`) is an
//!   error: those times are local and would silently shift every window. Day-first dates
//!   are not recognised.
//! - `intervals` are the distinct `TimeGrain` values; `errors` and `timespans` stay empty
//!   (the table has neither).
//! - Nothing here panics on any input; every failure is a typed [`Error`].

use std::cell::Cell as Flag;
use std::collections::BTreeSet;
use std::fmt;
use std::io::Cursor;
use std::path::Path;

use chrono::{DateTime, NaiveDateTime};
use polars::prelude::*;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserializer as _;
use serde_json::{Map, Value};

use super::azure::{Aggregation, MetricValue, MetricsExport};
use crate::error::{Error, Result};

/// What every "not this kind of file" message ends with.
const EXPECTED: &str = "expected Log Analytics AzureMetrics rows (a CSV export, the query \
                        API's {\"tables\": …} JSON, or `az monitor log-analytics query -o json` output)";

/// The columns read, spelled as the table reference does; matched without ASCII case and
/// without a ` [UTC]`-style suffix (see [`base_name`]). The aggregation columns are last,
/// in [`Aggregation::ALL`] order, so `AGGREGATIONS + i` is `Aggregation::ALL[i]`.
const FIELDS: [&str; 12] = [
    "TimeGenerated",
    "_ResourceId",
    "ResourceId",
    "Resource",
    "MetricName",
    "UnitName",
    "TimeGrain",
    "Average",
    "Minimum",
    "Maximum",
    "Total",
    "Count",
];
const TIME: usize = 0;
/// Resource columns, in order of preference.
const RESOURCES: [usize; 3] = [1, 2, 3];
const METRIC: usize = 4;
const UNIT: usize = 5;
const GRAIN: usize = 6;
const AGGREGATIONS: usize = 7;

/// Rows of the Log Analytics AzureMetrics table, exported as CSV (portal "Export to CSV" of
/// a query result), as the query API's JSON, or as `az monitor log-analytics query -o json`
/// output (module doc). One record per non-empty aggregation cell, in row order, then
/// [`Aggregation::ALL`] order; every record has empty `dimensions`, because the table has
/// no dimension columns. `path` only names the file in errors. Fails on an empty file, on
/// text that is none of the shapes, on a table without `TimeGenerated` or `MetricName`,
/// and on a cell that breaks its column's type (naming row, line for CSV, and column).
pub fn parse_azure_metrics_rows(text: &str, path: &Path) -> Result<MetricsExport> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(Error::input(path, format!("the file is empty: {EXPECTED}")));
    }
    let mut out = Collector::default();
    let read = if is_json(text) {
        read_json(text, &mut out)
    } else {
        read_csv(text, &mut out)
    };
    read.map_err(|message| Error::input(path, message))?;
    Ok(out.finish())
}

/// Whether `text` looks like `AzureMetrics` rows: a CSV whose header has `MetricName` and
/// `TimeGenerated` (any case, a `[UTC]`-style suffix and a UTF-8 BOM allowed), or JSON in
/// the query-API or az CLI shape whose columns (first row's keys) include both. Only the
/// header, or the JSON up to the column list or first row, is read; nothing is validated.
pub fn looks_like_azure_metrics_rows(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if is_json(text) {
        return sniff_json(text);
    }
    // The header is the first record; stop at the first line end outside quotes.
    let header = match scan_records(text, Some(1)) {
        Ok(records) => records.into_iter().next().map(|r| r.fields),
        // An unclosed quote in the header: read the header as far as it goes.
        Err(partial) => partial.into_iter().next().map(|r| r.fields),
    };
    header.is_some_and(|fields| has_required(fields.iter().map(String::as_str)))
}

// ---------------------------------------------------------------------------------------
// Rows, whatever their shape
// ---------------------------------------------------------------------------------------

/// Accumulates records; the set keeps intervals distinct and sorted.
#[derive(Default)]
struct Collector {
    values: Vec<MetricValue>,
    intervals: BTreeSet<String>,
}

impl Collector {
    fn finish(self) -> MetricsExport {
        MetricsExport {
            values: self.values,
            errors: vec![],
            intervals: self.intervals.into_iter().collect(),
            timespans: vec![],
        }
    }
}

/// Inner readers return a plain message; the entry point adds the file path once.
type Walk<T> = std::result::Result<T, String>;

/// One cell as found, before its column's type is applied.
#[derive(Clone, Copy)]
enum Cell<'a> {
    /// No such column, an empty CSV cell, or JSON `null`.
    Absent,
    Text(&'a str),
    /// A JSON value other than a string or null.
    Json(&'a Value),
}

impl<'a> Cell<'a> {
    fn json(v: &'a Value) -> Self {
        match v {
            Value::Null => Cell::Absent,
            Value::String(s) => Cell::Text(s),
            other => Cell::Json(other),
        }
    }

    fn is_absent(&self) -> bool {
        match self {
            Cell::Absent => true,
            Cell::Text(s) => s.trim().is_empty(),
            Cell::Json(_) => false,
        }
    }

    /// "found …" in messages.
    fn describe(&self) -> String {
        match self {
            Cell::Absent => "an empty cell".to_string(),
            Cell::Text(s) if s.trim().is_empty() => "an empty cell".to_string(),
            Cell::Text(s) => {
                let mut shown: String = s.chars().take(40).collect();
                if shown.len() < s.len() {
                    shown.push('…');
                }
                format!("{shown:?}")
            }
            Cell::Json(Value::Bool(b)) => format!("the boolean {b}"),
            Cell::Json(Value::Number(n)) => format!("the number {n}"),
            Cell::Json(Value::Array(_)) => "a JSON array".to_string(),
            Cell::Json(Value::Object(_)) => "a JSON object".to_string(),
            Cell::Json(other) => other.to_string(),
        }
    }
}

/// Where a row is, for messages: `row 3 (line 4)`, `table `PrimaryResult` row 3
/// (tables[0].rows[2])`, `row 3 ([2])`.
struct At<'a> {
    /// 1-based data row.
    row: usize,
    table: Option<&'a str>,
    /// For CSV: the line the record starts on.
    line: Option<usize>,
    /// For JSON: the row's JSON path.
    json: Option<String>,
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(table) = self.table {
            write!(f, "table `{table}` ")?;
        }
        write!(f, "row {}", self.row)?;
        match (&self.line, &self.json) {
            (Some(line), _) => write!(f, " (line {line})"),
            (None, Some(json)) => write!(f, " ({json})"),
            (None, None) => Ok(()),
        }
    }
}

/// One row: a cell and the column's name as the file spells it, per entry of [`FIELDS`].
struct Row<'a> {
    cells: [Cell<'a>; FIELDS.len()],
    names: [&'a str; FIELDS.len()],
}

impl<'a> Row<'a> {
    fn error(&self, at: &At, field: usize, what: &str) -> String {
        format!(
            "{at}, column `{}`: {what}, found {}",
            self.names[field],
            self.cells[field].describe()
        )
    }

    /// A text cell; absent (or blank) is `None`, a non-string JSON value an error.
    fn text(&self, at: &At, field: usize) -> Walk<Option<&'a str>> {
        match self.cells[field] {
            Cell::Absent => Ok(None),
            Cell::Text(s) => Ok(Some(s.trim()).filter(|s| !s.is_empty())),
            Cell::Json(_) => Err(self.error(at, field, "expected text")),
        }
    }

    /// A number cell: a JSON number or a string holding one. Absent, blank, `NaN` and
    /// infinities are `None` (module doc).
    fn number(&self, at: &At, field: usize) -> Walk<Option<f64>> {
        let value = match self.cells[field] {
            Cell::Absent => return Ok(None),
            Cell::Text(s) if s.trim().is_empty() => return Ok(None),
            Cell::Text(s) => s.trim().parse::<f64>().ok(),
            Cell::Json(Value::Number(n)) => n.as_f64(),
            Cell::Json(_) => None,
        };
        match value {
            Some(v) => Ok(Some(v).filter(|v| v.is_finite())),
            None => Err(self.error(at, field, "expected a number")),
        }
    }
}

/// Turn one row into records (one per aggregation with a value, in [`Aggregation::ALL`]
/// order).
fn read_row(row: &Row, at: &At, out: &mut Collector) -> Walk<()> {
    if row.cells.iter().all(Cell::is_absent) {
        return Ok(());
    }
    let Some(stamp) = row.text(at, TIME)? else {
        return Err(row.error(at, TIME, "expected the time of the metric point"));
    };
    let Some(timestamp_ms) = parse_time(stamp) else {
        return Err(row.error(
            at,
            TIME,
            "expected an ISO 8601 date-time or M/D/YYYY, h:mm:ss AM/PM",
        ));
    };
    let Some(metric) = row.text(at, METRIC)? else {
        return Err(row.error(at, METRIC, "expected a metric name"));
    };
    let mut resource = "";
    for field in RESOURCES {
        if let Some(r) = row.text(at, field)? {
            resource = r;
            break;
        }
    }
    let unit = row.text(at, UNIT)?;
    if let Some(grain) = row.text(at, GRAIN)? {
        out.intervals.insert(grain.to_string());
    }
    for (i, aggregation) in Aggregation::ALL.into_iter().enumerate() {
        if let Some(value) = row.number(at, AGGREGATIONS + i)? {
            out.values.push(MetricValue {
                resource: resource.to_string(),
                metric: metric.to_string(),
                unit: unit.map(str::to_string),
                aggregation,
                // The table has no dimension columns (module doc).
                dimensions: vec![],
                timestamp_ms,
                value,
            });
        }
    }
    Ok(())
}

/// Column name as matched: trimmed, without a ` [UTC]`-style suffix.
fn base_name(name: &str) -> &str {
    let name = name.trim_start_matches('\u{feff}').trim();
    match annotation(name) {
        Some((base, _)) => base,
        None => name,
    }
}

/// The entry of [`FIELDS`] a column name is, if any.
fn field_of(name: &str) -> Option<usize> {
    let name = base_name(name);
    FIELDS.iter().position(|f| f.eq_ignore_ascii_case(name))
}

/// `("TimeGenerated", "UTC")` for `TimeGenerated [UTC]`.
fn annotation(name: &str) -> Option<(&str, &str)> {
    let inner = name.trim().strip_suffix(']')?;
    let (base, note) = inner.rsplit_once('[')?;
    Some((base.trim_end(), note.trim()))
}

/// Whether column names include the two every row needs.
fn has_required<'a>(names: impl IntoIterator<Item = &'a str>) -> bool {
    missing_required(names).is_empty()
}

/// Which of the two columns every row needs are not among `names`, as "`A`" or
/// "`A` and `B`".
fn missing_required<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let (mut time, mut metric) = (false, false);
    for name in names {
        match field_of(name) {
            Some(TIME) => time = true,
            Some(METRIC) => metric = true,
            _ => {}
        }
    }
    let missing: Vec<String> = [(time, TIME), (metric, METRIC)]
        .iter()
        .filter(|(present, _)| !present)
        .map(|&(_, f)| format!("`{}`", FIELDS[f]))
        .collect();
    missing.join(" and ")
}

/// For each entry of [`FIELDS`], the index of the first column with that name.
fn locate<'a>(names: impl IntoIterator<Item = &'a str>) -> [Option<usize>; FIELDS.len()] {
    let mut found = [None; FIELDS.len()];
    for (i, name) in names.into_iter().enumerate() {
        if let Some(f) = field_of(name) {
            found[f].get_or_insert(i);
        }
    }
    found
}

/// A `TimeGenerated` header labelled with a zone other than UTC holds local times.
fn check_time_zone(header: &str) -> Walk<()> {
    match annotation(header) {
        Some((_, zone)) if !zone.eq_ignore_ascii_case("UTC") => Err(format!(
            "column `{header}`: the times are in {zone}, not UTC, and would shift every \
             window; set the portal's display time zone to UTC and export again"
        )),
        _ => Ok(()),
    }
}

/// `TimeGenerated` in milliseconds since the epoch (forms in the module doc).
fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%m/%d/%Y, %I:%M:%S%.f %p",
        "%m/%d/%Y %I:%M:%S%.f %p",
    ]
    .iter()
    .find_map(|format| NaiveDateTime::parse_from_str(s, format).ok())
    .map(|t| t.and_utc().timestamp_millis())
}

// ---------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------

/// One CSV record as the line scan sees it.
struct Record {
    /// Line the record starts on (1-based).
    line: usize,
    /// Field texts, unquoted; kept for the first record (the header) only.
    fields: Vec<String>,
    /// Number of fields.
    count: usize,
}

/// Find the records of an RFC 4180 text (quotes open only at a field start, `""` inside
/// quotes is a quote, line ends inside quotes belong to the field) and the line each
/// starts on. Polars does the real reading; this pass gives line numbers for messages,
/// which polars does not report, and catches what polars reports badly (an unclosed quote,
/// a row longer than the header). Stops after `limit` records; fields' text is kept for the
/// first record (the header) only. On an unclosed quote, the `Err` holds the records read
/// so far, the open one included.
fn scan_records(text: &str, limit: Option<usize>) -> std::result::Result<Vec<Record>, Vec<Record>> {
    let bytes = text.as_bytes();
    let limit = limit.unwrap_or(usize::MAX);
    let mut records: Vec<Record> = vec![];
    let mut line = 1;
    let mut current = Record {
        line: 1,
        fields: vec![],
        count: 1,
    };
    // The header field being read (data fields are only counted).
    let mut field: Vec<u8> = vec![];
    let mut field_start = true;
    // Whether anything but `\r` was seen since the last record ended.
    let mut pending = false;
    let mut i = 0;
    while i < bytes.len() {
        let keeping = records.is_empty();
        match bytes[i] {
            b'"' if field_start => {
                field_start = false;
                pending = true;
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => {
                            if keeping {
                                current.fields.push(lossy(&field));
                            }
                            records.push(current);
                            return Err(records);
                        }
                        Some(b'"') if bytes.get(i + 1) == Some(&b'"') => {
                            if keeping {
                                field.push(b'"');
                            }
                            i += 2;
                        }
                        Some(b'"') => break,
                        Some(&b) => {
                            if b == b'\n' {
                                line += 1;
                            }
                            if keeping {
                                field.push(b);
                            }
                            i += 1;
                        }
                    }
                }
            }
            b',' => {
                if keeping {
                    current.fields.push(lossy(&field));
                }
                field.clear();
                current.count += 1;
                field_start = true;
                pending = true;
            }
            b'\n' => {
                if keeping {
                    current.fields.push(lossy(&field));
                }
                field.clear();
                line += 1;
                records.push(std::mem::replace(
                    &mut current,
                    Record {
                        line,
                        fields: vec![],
                        count: 1,
                    },
                ));
                field_start = true;
                pending = false;
                if records.len() >= limit {
                    return Ok(records);
                }
            }
            b'\r' => {}
            b => {
                if keeping {
                    field.push(b);
                }
                field_start = false;
                pending = true;
            }
        }
        i += 1;
    }
    if pending {
        if records.is_empty() {
            current.fields.push(lossy(&field));
        }
        records.push(current);
    }
    Ok(records)
}

/// Field bytes back to text; splits only ever happen at ASCII bytes, so this is exact.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read_csv(text: &str, out: &mut Collector) -> Walk<()> {
    let records = match scan_records(text, None) {
        Ok(records) => records,
        Err(partial) => {
            let line = partial.last().map_or(1, |r| r.line);
            return Err(format!(
                "the record starting at line {line} has a quoted field that is not closed \
                 before the end of the file; {EXPECTED}"
            ));
        }
    };
    let header_count = records.first().map_or(0, |r| r.count);
    for (i, r) in records.iter().enumerate().skip(1) {
        if r.count > header_count {
            return Err(format!(
                "row {i} (line {}): {} fields, but the header has {header_count}",
                r.line, r.count
            ));
        }
    }

    let df = CsvReadOptions::default()
        .with_has_header(true)
        // Every column as text: cells are typed per column below, with messages that
        // name the row, which polars' own casting would not.
        .with_infer_schema_length(Some(0))
        .with_raise_if_empty(false)
        .into_reader_with_file_handle(Cursor::new(text.as_bytes()))
        .finish()
        .map_err(|e| {
            let message = super::polars_message(&e);
            let first = message.lines().next().unwrap_or("").trim().to_string();
            format!("cannot read as CSV: {first}; {EXPECTED}")
        })?;

    let names: Vec<&str> = df.get_column_names().iter().map(|n| n.as_str()).collect();
    let missing = missing_required(names.iter().copied());
    if !missing.is_empty() {
        return Err(format!(
            "the CSV header has no {missing} column (found {}); {EXPECTED}",
            list(&names)
        ));
    }
    let found = locate(names.iter().copied());
    if let Some(t) = found[TIME] {
        check_time_zone(names[t])?;
    }
    let mut columns: Vec<Option<&StringChunked>> = Vec::with_capacity(FIELDS.len());
    for index in found {
        columns.push(match index {
            Some(i) => Some(df.columns()[i].str().map_err(|e| {
                format!(
                    "column `{}`: cannot read as text: {}",
                    names[i],
                    super::polars_message(&e)
                )
            })?),
            None => None,
        });
    }
    let mut column_names = [""; FIELDS.len()];
    for (f, index) in found.iter().enumerate() {
        column_names[f] = index.map_or(FIELDS[f], |i| names[i]);
    }
    // Line numbers only when the scan and polars agree on the records.
    let lines = records.get(1..).filter(|data| data.len() == df.height());
    for r in 0..df.height() {
        let mut cells = [Cell::Absent; FIELDS.len()];
        for (cell, column) in cells.iter_mut().zip(&columns) {
            if let Some(text) = column.and_then(|c| c.get(r)) {
                *cell = Cell::Text(text);
            }
        }
        let at = At {
            row: r + 1,
            table: None,
            line: lines.and_then(|l| l.get(r)).map(|rec| rec.line),
            json: None,
        };
        let row = Row {
            cells,
            names: column_names,
        };
        read_row(&row, &at, out)?;
    }
    Ok(())
}

/// Column names for messages, at most eight.
fn list(names: &[&str]) -> String {
    if names.is_empty() {
        return "no columns".to_string();
    }
    let mut shown: Vec<String> = names.iter().take(8).map(|n| format!("`{n}`")).collect();
    if names.len() > shown.len() {
        shown.push("…".to_string());
    }
    shown.join(", ")
}

// ---------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------

fn is_json(text: &str) -> bool {
    text.trim_start().starts_with(['{', '['])
}

fn read_json(text: &str, out: &mut Collector) -> Walk<()> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let reason = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
        format!(
            "not valid JSON at line {}, column {}: {reason}; {EXPECTED}",
            e.line(),
            e.column()
        )
    })?;
    match &root {
        Value::Object(obj) if obj.contains_key("tables") => read_tables(&obj["tables"], out),
        Value::Array(rows) => read_row_objects(rows, out),
        other => Err(format!("{EXPECTED}, found {}", describe(other))),
    }
}

/// The query API's `tables`.
fn read_tables(tables: &Value, out: &mut Collector) -> Walk<()> {
    let Value::Array(tables) = tables else {
        return Err(format!(
            "`tables`: expected an array of tables, found {}; {EXPECTED}",
            describe(tables)
        ));
    };
    let mut read_any = false;
    let mut seen = vec![];
    for (t, table) in tables.iter().enumerate() {
        let at_table = format!("tables[{t}]");
        let Value::Object(table) = table else {
            return Err(format!(
                "{at_table}: expected a table object, found {}",
                describe(table)
            ));
        };
        let Some(Value::Array(columns)) = table.get("columns") else {
            return Err(format!(
                "{at_table}.columns: expected an array of columns, found {}",
                table.get("columns").map_or("nothing".to_string(), describe)
            ));
        };
        let mut names = Vec::with_capacity(columns.len());
        for (c, column) in columns.iter().enumerate() {
            match column.get("name") {
                Some(Value::String(name)) => names.push(name.as_str()),
                _ => {
                    return Err(format!(
                        "{at_table}.columns[{c}]: expected {{\"name\", \"type\"}}, found {}",
                        describe(column)
                    ))
                }
            }
        }
        if !has_required(names.iter().copied()) {
            // Not AzureMetrics rows (module doc); said in the error if no table is.
            seen.push(list(&names));
            continue;
        }
        read_any = true;
        let found = locate(names.iter().copied());
        if let Some(t) = found[TIME] {
            check_time_zone(names[t])?;
        }
        let mut column_names = [""; FIELDS.len()];
        for (f, index) in found.iter().enumerate() {
            column_names[f] = index.map_or(FIELDS[f], |i| names[i]);
        }
        let table_name = table.get("name").and_then(Value::as_str);
        let rows = match table.get("rows") {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(rows)) => rows.as_slice(),
            Some(other) => {
                return Err(format!(
                    "{at_table}.rows: expected an array of rows, found {}",
                    describe(other)
                ))
            }
        };
        for (r, row) in rows.iter().enumerate() {
            let at = At {
                row: r + 1,
                table: table_name,
                line: None,
                json: Some(format!("{at_table}.rows[{r}]")),
            };
            let Value::Array(cells_in) = row else {
                return Err(format!(
                    "{at}: expected an array of cells, found {}",
                    describe(row)
                ));
            };
            if cells_in.len() != names.len() {
                return Err(format!(
                    "{at}: {} cells, but the table has {} columns",
                    cells_in.len(),
                    names.len()
                ));
            }
            let mut cells = [Cell::Absent; FIELDS.len()];
            for (cell, index) in cells.iter_mut().zip(found) {
                if let Some(i) = index {
                    *cell = Cell::json(&cells_in[i]);
                }
            }
            let row = Row {
                cells,
                names: column_names,
            };
            read_row(&row, &at, out)?;
        }
    }
    if !read_any {
        let found = if seen.is_empty() {
            "no table".to_string()
        } else {
            format!("tables with columns {}", seen.join("; "))
        };
        return Err(format!(
            "no table has both `TimeGenerated` and `MetricName` columns (found {found}); \
             {EXPECTED}"
        ));
    }
    Ok(())
}

/// The az CLI's array of row objects. Each row is matched by its own keys: nothing says
/// every object has the same ones.
fn read_row_objects(rows: &[Value], out: &mut Collector) -> Walk<()> {
    for (r, row) in rows.iter().enumerate() {
        let at = At {
            row: r + 1,
            table: None,
            line: None,
            json: Some(format!("[{r}]")),
        };
        let Value::Object(row) = row else {
            return Err(format!(
                "{at}: expected a row object, found {}; {EXPECTED}",
                describe(row)
            ));
        };
        let missing = missing_required(row.keys().map(String::as_str));
        if r == 0 && !missing.is_empty() {
            return Err(format!(
                "{at}: the row has no {missing} key (found {}); {EXPECTED}",
                describe_object(row)
            ));
        }
        let mut cells = [Cell::Absent; FIELDS.len()];
        let mut names = FIELDS;
        let mut seen = [false; FIELDS.len()];
        for (name, value) in row {
            // The first key of a name wins, as the first column does in a table.
            let Some(f) = field_of(name).filter(|&f| !seen[f]) else {
                continue;
            };
            if f == TIME {
                check_time_zone(name)?;
            }
            seen[f] = true;
            cells[f] = Cell::json(value);
            names[f] = name;
        }
        read_row(&Row { cells, names }, &at, out)?;
    }
    Ok(())
}

/// A short description of a JSON value for "found …" in messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Object(obj) => describe_object(obj),
        Value::Array(items) => format!(
            "a JSON array of {}",
            crate::words::plural(items.len() as u64, "item")
        ),
        other => Cell::json(other).describe(),
    }
}

fn describe_object(obj: &Map<String, Value>) -> String {
    if obj.is_empty() {
        return "an empty object".to_string();
    }
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    format!("an object with keys {}", list(&keys))
}

// ---------------------------------------------------------------------------------------
// JSON sniff
// ---------------------------------------------------------------------------------------
//
// The sniff walks the JSON with serde visitors that stop as soon as the column names (the
// query API's `columns`, or the az CLI's first row) are known: a large export is not read
// to its end, and a file cut short after its header still sniffs. The walk's own result
// is thrown away; only the flag it sets counts.

fn sniff_json(text: &str) -> bool {
    let found = Flag::new(false);
    let mut de = serde_json::Deserializer::from_str(text);
    let _ = de.deserialize_any(TopSniff { found: &found });
    found.get()
}

/// Stops a walk early (the error is discarded).
fn stop<E: de::Error>() -> E {
    E::custom("sniffed")
}

struct TopSniff<'f> {
    found: &'f Flag<bool>,
}

impl<'de> Visitor<'de> for TopSniff<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object with `tables` or an array of row objects")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "tables" {
                map.next_value_seed(TablesSniff { found: self.found })?;
                return Err(stop());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        seq.next_element_seed(KeysSniff { found: self.found })?;
        Err(stop())
    }
}

struct TablesSniff<'f> {
    found: &'f Flag<bool>,
}

impl<'de> DeserializeSeed<'de> for TablesSniff<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for TablesSniff<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of tables")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while seq
            .next_element_seed(TableSniff { found: self.found })?
            .is_some()
        {
            if self.found.get() {
                return Err(stop());
            }
        }
        Ok(())
    }
}

struct TableSniff<'f> {
    found: &'f Flag<bool>,
}

impl<'de> DeserializeSeed<'de> for TableSniff<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TableSniff<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a table object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "columns" {
                let columns: Vec<ColumnSniff> = map.next_value()?;
                if has_required(columns.iter().filter_map(|c| c.name.as_deref())) {
                    self.found.set(true);
                    return Err(stop());
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

#[derive(serde::Deserialize)]
struct ColumnSniff {
    name: Option<String>,
}

/// The keys of the first row object; sets the flag once they include both required ones.
struct KeysSniff<'f> {
    found: &'f Flag<bool>,
}

impl<'de> DeserializeSeed<'de> for KeysSniff<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for KeysSniff<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let (mut time, mut metric) = (false, false);
        while let Some(key) = map.next_key::<String>()? {
            match field_of(&key) {
                Some(TIME) => time = true,
                Some(METRIC) => metric = true,
                _ => {}
            }
            if time && metric {
                // Decided from the keys so far: a row cut short still sniffs.
                self.found.set(true);
                return Err(stop());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        let t = |s| parse_time(s);
        // 2026-11-29T13:05:00Z
        let base = 1_795_957_500_000;
        assert_eq!(t("2026-11-29T13:05:00Z"), Some(base));
        assert_eq!(t("2026-11-29T13:05:00.1234567Z"), Some(base + 123));
        assert_eq!(t("2026-11-29T13:05:00.000"), Some(base));
        assert_eq!(t("2026-11-29T13:05:00"), Some(base));
        assert_eq!(t("2026-11-29T14:05:00+01:00"), Some(base));
        assert_eq!(t("2026-11-29 13:05:00"), Some(base));
        assert_eq!(t("11/29/2026, 1:05:00.000 PM"), Some(base));
        assert_eq!(t("11/29/2026, 01:05:00 PM"), Some(base));
        assert_eq!(t("11/29/2026 1:05:00.000 pm"), Some(base));
        assert_eq!(
            t("11/29/2026, 12:05:00.000 AM"),
            Some(base - 13 * 3_600_000)
        );
        assert_eq!(t("11/29/2026, 12:05:00.000 PM"), Some(base - 3_600_000));
        assert_eq!(t("29/11/2026, 1:05:00.000 PM"), None);
        assert_eq!(t("11/29/2026, 13:05:00.000 PM"), None);
        assert_eq!(t("yesterday"), None);
        assert_eq!(t(""), None);
    }

    #[test]
    fn column_names() {
        assert_eq!(field_of("\u{feff}TimeGenerated [UTC]"), Some(TIME));
        assert_eq!(field_of(" _resourceid "), Some(1));
        assert_eq!(field_of("COUNT"), Some(AGGREGATIONS + 4));
        assert_eq!(field_of("count_"), None);
        assert_eq!(
            annotation("TimeGenerated [Local Time]"),
            Some(("TimeGenerated", "Local Time"))
        );
        assert!(check_time_zone("TimeGenerated [utc]").is_ok());
        assert!(check_time_zone("TimeGenerated").is_ok());
        assert!(check_time_zone("TimeGenerated [Local Time]").is_err());
    }

    #[test]
    fn record_scan() {
        let text = "a,\"b\r\nc\",d\r\n\r\n1,\"x,\"\"y\"\"\",3\r\nlast";
        let records = scan_records(text, None).ok().unwrap();
        let lines: Vec<usize> = records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [1, 3, 4, 5]);
        let counts: Vec<usize> = records.iter().map(|r| r.count).collect();
        assert_eq!(counts, [3, 1, 3, 1]);
        assert_eq!(records[0].fields, ["a", "b\r\nc", "d"]);
        let header = scan_records(text, Some(1)).ok().unwrap();
        assert_eq!(header.len(), 1);
        assert!(records[1].fields.is_empty());
        assert!(scan_records("a,\"b", None).is_err());
    }
}
