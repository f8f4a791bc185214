//! Source adapters: each input file becomes a polars `LazyFrame` with the canonical
//! columns of the field catalogue. Format detection lives here; the format-specific
//! readers are one file each; `canonical` maps whatever columns a file has (flat, dotted,
//! nested under `other.timing`, or inside `other` as a JSON string) onto canonical names.
//! Nothing downstream knows which file type a row came from.

pub mod azure;
pub mod azure_logs;
pub mod azure_requests;
pub mod azure_windows;
mod canonical;
mod csv;
mod json;
mod location;
mod parquet;
pub mod rowcheck;
mod timestamp;

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::catalogue;
use crate::error::{Error, Result};
pub use canonical::{dtype_of, Mapping, Origin, UNPARSED_PREFIX, UNREADABLE_COL};
pub use location::{LineMap, Locations};
pub use rowcheck::{BadKind, BadRow, BadRowPolicy};

/// Column holding the input path a row came from.
pub const SOURCE_COL: &str = "source_file";
/// Column holding the 1-based row within its file, as polars numbers them (blank lines and
/// a CSV header are not rows; `Locations` turns a row into the line it begins on).
pub const ROW_COL: &str = "source_row";
/// Column holding the position of a row's file among the run's inputs: what aggregates
/// per file group on (the path, `source_file`, is a string per request).
pub const FILE_INDEX: &str = "__file";
/// Column naming the line a request's row begins on in a CSV or JSON-lines input (null for
/// Parquet and JSON arrays, which have no lines); `source_row` counts rows.
pub const LINE_COL: &str = "source_line";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum InputFormat {
    Parquet,
    Csv,
    JsonLines,
    JsonArray,
    /// Azure OpenAI `RequestResponse` resource logs (JSON lines), read by `azure_requests`.
    AzureRequestLog,
}

impl fmt::Display for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputFormat::Parquet => "parquet",
            InputFormat::Csv => "csv",
            InputFormat::JsonLines => "jsonl",
            InputFormat::JsonArray => "json",
            InputFormat::AzureRequestLog => "azure RequestResponse log",
        })
    }
}

impl InputFormat {
    pub fn parse(s: &str) -> Option<InputFormat> {
        match s.to_ascii_lowercase().as_str() {
            "parquet" | "pq" => Some(InputFormat::Parquet),
            "csv" => Some(InputFormat::Csv),
            "jsonl" | "ndjson" => Some(InputFormat::JsonLines),
            "json" => Some(InputFormat::JsonArray),
            _ => None,
        }
    }
}

/// File contents held in memory, shared without copying (polars' own buffer type). Its
/// `Debug` shows only the length: the bytes may hold prompts and responses.
#[derive(Clone)]
pub struct Bytes(polars_buffer::Buffer<u8>);

impl Bytes {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bytes({} bytes)", self.0.len())
    }
}

/// One input file as read.
#[derive(Debug, Clone)]
pub struct Input {
    pub path: PathBuf,
    pub format: InputFormat,
    pub mapping: Mapping,
    /// Rows that could not be read whole (skipped or kept per the policy).
    pub bad_rows: Vec<BadRow>,
    /// The line each row begins on (CSV and JSON lines; empty for other formats).
    pub lines: LineMap,
    /// With `--on-bad-row error`: the rows polars read instead of the file, when the row
    /// check repaired it (blank CSV lines, a BOM, an unread field beyond 64 bits), so that
    /// the value the error quotes comes from the row polars numbered. Not kept under the
    /// other policies, which quote no value: a repaired copy is as large as its file.
    pub repaired: Option<Bytes>,
    /// JSON: the types of the values read (the schema polars reads the file with).
    pub types: rowcheck::Types,
}

/// Extensions of the files a directory contributes (other files in it are left alone).
const LOG_EXTENSIONS: [&str; 7] = ["parquet", "pq", "csv", "tsv", "jsonl", "ndjson", "json"];

/// Expand globs and directories, and check that every path names a readable file. A
/// directory stands for every log file below it (by extension; hidden files and folders
/// and links to folders left out), in path order: a hive-partitioned tree
/// (`logs/date=2026-11-23/part-0.parquet`) reads as one source.
pub fn expand(patterns: &[String]) -> Result<Vec<PathBuf>> {
    let mut out = vec![];
    for p in patterns {
        if p.contains(['*', '?', '[']) {
            let mut matched: Vec<PathBuf> = glob::glob(p)
                .map_err(|e| Error::Usage(format!("bad glob `{p}`: {e}")))?
                .filter_map(|r| r.ok())
                .filter(|p| p.is_file())
                .collect();
            if matched.is_empty() {
                return Err(Error::input(p, "the pattern matches no file"));
            }
            matched.sort();
            out.extend(matched);
        } else {
            let path = PathBuf::from(p);
            if path.is_dir() {
                let mut found = vec![];
                walk(&path, &mut found)?;
                if found.is_empty() {
                    return Err(Error::input(
                        &path,
                        format!(
                            "the directory holds no log file (looked for .{} below it)",
                            LOG_EXTENSIONS.join(", .")
                        ),
                    ));
                }
                found.sort();
                out.extend(found);
            } else if path.is_file() {
                out.push(path);
            } else {
                return Err(Error::input(&path, "no such file"));
            }
        }
    }
    Ok(out)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::input(dir, format!("cannot list: {e}")))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::input(dir, format!("cannot list: {e}")))?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with(['.', '_']) {
            continue;
        }
        // The entry's own type: a link to a folder is not followed (a link back up the
        // tree would never end); a link to a file is read like the file.
        let kind = entry
            .file_type()
            .map_err(|e| Error::input(&path, format!("cannot read: {e}")))?;
        if kind.is_dir() {
            walk(&path, found)?;
        } else if (kind.is_file() || path.is_file())
            && path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| LOG_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        {
            found.push(path);
        }
    }
    Ok(())
}

/// The hive partition keys of a path: each `key=value` folder it sits in, outermost first.
pub fn partition_values(path: &Path) -> Vec<(String, String)> {
    let Some(parent) = path.parent() else {
        return vec![];
    };
    parent
        .components()
        .filter_map(|c| {
            let c = c.as_os_str().to_str()?;
            let (k, v) = c.split_once('=')?;
            (!k.is_empty()).then(|| (k.to_string(), v.to_string()))
        })
        .collect()
}

/// Every partition key of a run's inputs, sorted, each once.
pub fn partition_keys(paths: &[PathBuf]) -> Vec<String> {
    let mut keys: Vec<String> = paths
        .iter()
        .flat_map(|p| partition_values(p).into_iter().map(|(k, _)| k))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Decide a file's format: the override, else the extension, else its first bytes.
pub fn detect(path: &Path, forced: Option<InputFormat>) -> Result<InputFormat> {
    if let Some(f) = forced {
        return Ok(f);
    }
    let mut head = [0u8; 512];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    let head = &head[..n];
    if n == 0 {
        return Err(Error::input(
            path,
            "the file is empty: expected a request log",
        ));
    }
    if head.starts_with(b"PAR1") {
        return Ok(InputFormat::Parquet);
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("parquet") | Some("pq") => {
            return Err(Error::input(
                path,
                "expected a Parquet file (magic bytes PAR1), found other content",
            ))
        }
        Some("csv") | Some("tsv") => return Ok(InputFormat::Csv),
        _ => {}
    }
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if azure_requests::looks_like_request_response(first_line(path).as_deref().unwrap_or("")) {
        return Ok(InputFormat::AzureRequestLog);
    }
    if matches!(ext.as_deref(), Some("jsonl") | Some("ndjson")) {
        return Ok(InputFormat::JsonLines);
    }
    if trimmed.starts_with('[') {
        Ok(InputFormat::JsonArray)
    } else if trimmed.starts_with('{') {
        Ok(InputFormat::JsonLines)
    } else if ext.as_deref() == Some("json") {
        Err(Error::input(
            path,
            "expected a JSON array of objects or JSON lines, found neither",
        ))
    } else {
        Ok(InputFormat::Csv)
    }
}

/// The first non-empty line of a text file (at most 1 MiB of it), for content sniffing.
fn first_line(path: &Path) -> Option<String> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    let reader = std::io::BufReader::new(file.take(1 << 20));
    reader
        .lines()
        .map_while(|l| l.ok())
        .map(|l| l.trim_start_matches('\u{feff}').trim().to_string())
        .find(|l| !l.is_empty())
}

/// Read every input into one canonical lazy frame (rows of all files, in file order).
///
/// Text logs are checked row by row first (`rowcheck`): `policy` says what happens to a
/// row that cannot be read whole.
pub fn load(
    paths: &[PathBuf],
    forced: Option<InputFormat>,
    policy: BadRowPolicy,
) -> Result<(LazyFrame, Vec<Input>)> {
    let mut frames = vec![];
    let mut inputs = vec![];
    let keys = partition_keys(paths);
    for key in &keys {
        if catalogue::field(key).is_some() || key.starts_with("__") {
            return Err(Error::Usage(format!(
                "the partition key `{key}` (a `{key}=…` folder) names a column tracediag reads; rename the folders (e.g. `{key}_part=…`)"
            )));
        }
    }
    for path in paths {
        let format = detect(path, forced)?;
        let mut elements = 0;
        let checked = match format {
            InputFormat::Csv => rowcheck::check_csv(path, csv::separator(path), policy)?,
            InputFormat::JsonLines => rowcheck::check_json_lines(path, policy)?,
            InputFormat::JsonArray => {
                let (types, n) = rowcheck::check_json_array(path)?;
                elements = n;
                rowcheck::Checked {
                    types,
                    ..Default::default()
                }
            }
            _ => rowcheck::Checked::default(),
        };
        let repaired = checked.repaired.map(|b| Bytes(b.into()));
        let raw = match format {
            InputFormat::Parquet => parquet::scan(path)?,
            InputFormat::Csv => csv::scan(path, repaired.clone())?,
            InputFormat::JsonLines => json::scan_lines(path, repaired.clone(), &checked.types)?,
            InputFormat::JsonArray => json::read_array(path, &checked.types, elements)?,
            InputFormat::AzureRequestLog => azure_requests::read(path)?.frame.lazy(),
        };
        let mut raw = raw;
        let schema = raw.collect_schema().map_err(|e| {
            Error::input(
                path,
                format!("cannot read the {format} schema: {}", polars_message(&e)),
            )
        })?;
        let mapping = canonical::map(&schema, path)?;
        let lf = canonical::select(raw, &schema, &mapping, path, &checked.kept_rows);
        let line = match format {
            InputFormat::Csv | InputFormat::JsonLines => checked.lines.expr(col(ROW_COL)),
            _ => lit(NULL).cast(DataType::Int64),
        };
        // Partition keys as text labels (null where this file's path has no such folder).
        let values = partition_values(path);
        let mut extra = vec![
            line.alias(LINE_COL),
            lit(inputs.len() as u32).alias(FILE_INDEX),
        ];
        for key in &keys {
            let v = values
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str());
            extra.push(match v {
                Some(v) => lit(v).alias(key.as_str()),
                None => lit(NULL).cast(DataType::String).alias(key.as_str()),
            });
        }
        let lf = lf.with_columns(extra);
        frames.push(lf);
        inputs.push(Input {
            path: path.clone(),
            format,
            mapping,
            bad_rows: checked.bad,
            lines: checked.lines,
            repaired: repaired.filter(|_| policy == BadRowPolicy::Error),
            types: checked.types,
        });
    }
    let lf = if frames.len() == 1 {
        frames.pop().expect("one frame")
    } else {
        concat(frames, UnionArgs::default()).map_err(|e| Error::Usage(polars_message(&e)))?
    };
    Ok((lf, inputs))
}

/// What polars scans: the file at `path`, or a copy of its rows held in memory.
fn scan_sources(path: &Path, repaired: Option<Bytes>) -> Result<ScanSources> {
    Ok(match repaired {
        Some(Bytes(bytes)) => ScanSources::Buffers([bytes].into()),
        None => {
            let p = PlRefPath::try_from_path(path)
                .map_err(|e| Error::input(path, polars_message(&e)))?;
            ScanSources::Paths(vec![p].into())
        }
    })
}

/// A polars error without its backtrace hints, for user-facing messages.
pub fn polars_message(e: &PolarsError) -> String {
    let s = e.to_string();
    s.lines()
        .take_while(|l| {
            !l.trim_start()
                .starts_with("This error occurred with the following context stack")
        })
        .collect::<Vec<_>>()
        .join(" ")
        .trim()
        .to_string()
}

/// The text of one field as the file holds it, for an error message: row `row` (1-based)
/// of a flat or nested column. `None` for a JSON-string `other` or when the file cannot
/// be re-read.
pub fn raw_value(input: &Input, field: &str, row: i64) -> Option<String> {
    let (_, origin, _) = input.mapping.fields.iter().find(|(n, _, _)| n == field)?;
    let value = match origin {
        Origin::Column(c) => col(c.as_str()),
        Origin::Nested(path) => path[1..]
            .iter()
            .fold(col(path[0].as_str()), |e, p| e.struct_().field_by_name(p)),
        _ => return None,
    };
    let path = input.path.as_path();
    let raw = match input.format {
        InputFormat::Parquet => parquet::scan(path).ok()?,
        InputFormat::Csv => csv::scan(path, input.repaired.clone()).ok()?,
        InputFormat::JsonLines => {
            json::scan_lines(path, input.repaired.clone(), &input.types).ok()?
        }
        _ => return None,
    };
    // The whole column, then the row: a slice pushed down into polars' JSON-lines reader
    // counts blank lines as rows (the row after two blank lines came back as the second).
    // This runs once, for an error message.
    let df = raw
        .select([value.cast(DataType::String).alias("value")])
        .collect()
        .ok()?;
    let index = usize::try_from(row - 1).ok()?;
    let v = df.column("value").ok()?.str().ok()?.get(index)?.to_string();
    // Only timing, count and flag fields reach here: no content, but keep it short, and
    // show control bytes escaped (a NUL would otherwise vanish from the message).
    Some(v.chars().take(40).flat_map(char::escape_debug).collect())
}
