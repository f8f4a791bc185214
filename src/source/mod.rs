//! Source adapters: each input file becomes a polars `LazyFrame` with the canonical
//! columns of the field catalogue. Format detection lives here; the format-specific
//! readers are one file each; `canonical` maps whatever columns a file has (flat, dotted,
//! nested under `other.timing`, or inside `other` as a JSON string) onto canonical names.
//! Nothing downstream knows which file type a row came from.

pub mod aiperf;
pub mod azure;
pub mod azure_logs;
pub mod azure_requests;
pub mod azure_windows;
mod canonical;
pub mod columns;
mod copy;
mod csv;
pub mod genaiperf;
pub mod higress;
mod json;
pub mod like;
pub mod litellm;
pub mod llmperf;
mod location;
pub mod newapi;
pub mod otel;
mod parquet;
mod recognise;
pub mod rowcheck;
mod sniff;
pub mod spool;
mod timestamp;
pub mod vllm;

use std::fmt;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::catalogue;
use crate::error::{Error, Refusal, Result};
pub use canonical::{
    dtype_of, Mapping, Origin, CARRIED_PREFIX, OUTCOME_WORDS, UNPARSED_PREFIX, UNREADABLE_COL,
};
pub use location::{line_and_column, LineMap, Locations};
pub use rowcheck::{BadKind, BadRow, BadRowPolicy};
pub use sniff::Content;

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
    /// new-api / one-api `logs` rows (API JSON, JSON lines, CSV, Parquet), read by `newapi`.
    NewApi,
    /// Higress ai-statistics access logs (`ai_log`), read by `higress`.
    Higress,
    /// LiteLLM spend-log rows (JSON or CSV), read by `litellm`.
    LiteLlm,
    /// OpenTelemetry OTLP JSON span exports (GenAI spans), read by `otel`.
    Otlp,
    /// NVIDIA AIPerf `profile_export.jsonl` records (2025 and 2026 schemas), read by `aiperf`.
    Aiperf,
    /// AIPerf's per-request figures as a CSV (`request_start_ns, time_to_first_token_ms,
    /// request_latency_ms, …`), read by `aiperf`.
    AiperfCsv,
    /// vLLM `benchmark_serving.py --save-result` JSON (per-request arrays), read by `vllm`.
    Vllm,
    /// LLMPerf individual responses (a JSON array), read by `llmperf`.
    Llmperf,
    /// GenAI-Perf's per-request input, perf_analyzer's `profile_export.json`, read by
    /// `genaiperf`.
    GenaiPerf,
}

impl fmt::Display for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputFormat::Parquet => "parquet",
            InputFormat::Csv => "csv",
            InputFormat::JsonLines => "jsonl",
            InputFormat::JsonArray => "json",
            InputFormat::AzureRequestLog => "azure RequestResponse log",
            InputFormat::NewApi => "new-api",
            InputFormat::Higress => "higress",
            InputFormat::LiteLlm => "litellm",
            InputFormat::Otlp => "otlp",
            InputFormat::Aiperf => "AIPerf profile_export.jsonl",
            InputFormat::AiperfCsv => "AIPerf per-request CSV",
            InputFormat::Vllm => "vllm save-result",
            InputFormat::Llmperf => "llmperf individual responses",
            InputFormat::GenaiPerf => "GenAI-Perf profile_export.json",
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
            "new-api" | "newapi" | "one-api" | "oneapi" => Some(InputFormat::NewApi),
            "higress" => Some(InputFormat::Higress),
            "litellm" => Some(InputFormat::LiteLlm),
            "otlp" | "otel" => Some(InputFormat::Otlp),
            "aiperf" => Some(InputFormat::Aiperf),
            "aiperf-csv" => Some(InputFormat::AiperfCsv),
            "vllm" => Some(InputFormat::Vllm),
            "llmperf" => Some(InputFormat::Llmperf),
            "genai-perf" | "genaiperf" => Some(InputFormat::GenaiPerf),
            _ => None,
        }
    }
}

/// One input file as read.
#[derive(Debug, Clone)]
pub struct Input {
    /// The input as named on the command line (`<stdin>` for `-`): what messages and the
    /// `source_file` column say.
    pub path: PathBuf,
    /// The file actually read: the input itself, or its decompressed temporary copy
    /// (kept alive as long as the input is).
    pub read_from: spool::Opened,
    pub format: InputFormat,
    pub mapping: Mapping,
    /// Rows that could not be read whole (skipped or kept per the policy).
    pub bad_rows: Vec<BadRow>,
    /// The line each row begins on, for a file whose rows are its lines (CSV, JSON lines);
    /// `None` for other forms.
    pub lines: Option<LineMap>,
    /// The temporary file of rows polars reads instead of the file, when the row check
    /// repaired it (bad rows, blank CSV lines, a BOM, an unread field beyond 64 bits): kept
    /// alive while the input is, and read again when an error quotes a row's value.
    pub repaired: Option<Arc<spool::Spooled>>,
    /// CSV and JSON lines read for the whole log: the canonical rows, parsed once and
    /// written to a temporary Parquet file that every pass reads (`typed_copy`), instead
    /// of parsing the text again in each.
    pub typed: Option<Arc<spool::Spooled>>,
    /// JSON: the types of the values read (the schema polars reads the file with).
    pub types: rowcheck::Types,
    /// What a tool's adapter says about the file (rows it left out, the clock its figures
    /// count from), for the run's notes.
    pub notes: Vec<String>,
}

/// A tool's log as its adapter read it: a raw frame whose columns carry canonical names,
/// and what the run should note about it.
pub struct Adapted {
    pub frame: LazyFrame,
    pub notes: Vec<String>,
}

/// The row check of a tool's log, by the file's physical form: JSON lines and CSV are
/// checked row by row as any log is; an array or a document is parsed whole when read (a
/// Higress one checked first, as a gateway's JSON array is, so that an `ai_log` that is
/// not an object is an error at its line and column).
fn check_adapted(
    path: &Path,
    format: InputFormat,
    physical: Content,
    policy: BadRowPolicy,
    records: Option<&mut dyn rowcheck::Records>,
) -> Result<rowcheck::Checked> {
    match physical {
        Content::Log(InputFormat::JsonLines) => rowcheck::check_json_lines(path, policy, None),
        Content::Log(InputFormat::Csv) => {
            rowcheck::check_csv(path, csv::separator(path), policy, records)
        }
        Content::Log(InputFormat::JsonArray) | Content::JsonObject
            if format == InputFormat::Higress =>
        {
            rowcheck::check_json_document(path).map(|()| rowcheck::Checked::default())
        }
        _ => Ok(rowcheck::Checked::default()),
    }
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
        if p == spool::STDIN_ARG {
            // Standard input: spooled to a temporary file when it is read.
            out.push(PathBuf::from(p));
        } else if p.contains(['*', '?', '[']) {
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
            } else if time_of_day(p) {
                return Err(Error::input(
                    &path,
                    "no such file; it looks like the time of a --since or --until that the shell \
                     split from its date: quote the two, e.g. --since '2026-11-02 10:00'",
                ));
            } else {
                return Err(Error::input(&path, "no such file"));
            }
        }
    }
    Ok(out)
}

/// Whether `text` is a time of day (`10:00`, `10:00:30.5`, `10:00Z`, `10:00+08:00`), as the
/// shell leaves it after splitting `--since 2026-11-02 10:00`.
fn time_of_day(text: &str) -> bool {
    let t = text.trim_end_matches(['Z', 'z']);
    let t = match t.find(['+', '-']) {
        Some(i) => &t[..i],
        None => t,
    };
    let parts: Vec<&str> = t.split(':').collect();
    (2..=3).contains(&parts.len())
        && parts.iter().enumerate().all(|(i, p)| {
            let digits = if i == 2 {
                p.split('.')
                    .all(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            } else {
                !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit())
            };
            digits
        })
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

/// Decide a file's format: the override, else its content (see `sniff`). A file that is
/// not a request log format (an SSE body, one JSON document) is an error here; `load`
/// reads and refuses those with what they hold.
pub fn detect(path: &Path, forced: Option<InputFormat>) -> Result<InputFormat> {
    match sniff::detect(path, forced)? {
        Content::Log(f) => Ok(f),
        other => Err(Error::input(
            path,
            format!("expected a request log, found {}", other.read_as()),
        )),
    }
}

/// Read every input into one canonical lazy frame (rows of all files, in file order).
///
/// Text logs are checked row by row first (`rowcheck`): `policy` says what happens to a
/// row that cannot be read whole.
///
/// `carried` are columns every input must hold besides the canonical ones (the class and
/// metrics a query wrote, `--from-sql-result`): read as they are into
/// `CARRIED_PREFIX<name>`; an input without one of them is an error listing what is missing.
pub fn load(
    paths: &[PathBuf],
    forced: Option<InputFormat>,
    policy: BadRowPolicy,
    carried: &[String],
) -> Result<(LazyFrame, Vec<Input>)> {
    let loaded = load_for(paths, forced, policy, carried, None, COHORT_ROWS)?;
    Ok((loaded.lf, loaded.inputs))
}

/// Above this many rows holding one request id, `load_for` reads the id's rows by a
/// filter over the whole file rather than a slice per row.
const MAX_REQUEST_SLICES: usize = 64;

/// A request's cohort on a log of more rows than this is read from the rows of its file
/// around it (`Around`), not from the whole log: explain's cost is then bounded by it, not
/// by the log.
pub const COHORT_ROWS: u64 = 1_000_000;

/// The rows of one file around a request (its first row with the id), read as one slice:
/// where explain looks for the request's cohort on a large log.
pub struct Around {
    /// Those rows, canonical, the same columns as `Loaded::lf`.
    pub lf: LazyFrame,
    pub extent: AroundRows,
}

/// Which rows `Around` holds, for the output to say.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AroundRows {
    /// The file, as messages name it.
    pub file: String,
    /// 1-based, inclusive.
    pub first: u64,
    pub last: u64,
    /// Rows in the whole log (every input).
    pub log_rows: u64,
}

/// The `len` rows of a file of `file_rows` centred on the 1-based `row` (as far as the
/// file allows): (first, last), 1-based and inclusive.
fn rows_around(row: u64, file_rows: u64, len: u64) -> (u64, u64) {
    let last_start = file_rows.saturating_sub(len) + 1;
    let first = row.saturating_sub(len / 2).clamp(1, last_start.max(1));
    (first, (first + len - 1).min(file_rows.max(first)))
}

/// What `load_for` read.
pub struct Loaded {
    /// Every row of every input, canonical.
    pub lf: LazyFrame,
    /// With a request id: only the rows holding it, the same columns (each row with its
    /// place in its file), found by a lookup of the id column alone and read as one-row
    /// slices, so the rest of the log is never decoded.
    pub request: Option<LazyFrame>,
    /// With a request id, on a log of more than `cohort_rows` rows: the `cohort_rows` rows
    /// of its file around its first row, where its cohort is looked for.
    pub around: Option<Around>,
    pub inputs: Vec<Input>,
}

/// `load`, and with `request` also the frame of the rows holding that request id, and on
/// a log of more than `cohort_rows` rows the rows around it.
pub fn load_for(
    paths: &[PathBuf],
    forced: Option<InputFormat>,
    policy: BadRowPolicy,
    carried: &[String],
    request: Option<&str>,
    cohort_rows: u64,
) -> Result<Loaded> {
    let none = columns::ColumnMap::default();
    load_mapped(paths, forced, policy, carried, request, cohort_rows, &none)
}

/// `load_for`, with the user's `columns` (`--map`, `--schema`) read as the fields they
/// name.
pub fn load_mapped(
    paths: &[PathBuf],
    forced: Option<InputFormat>,
    policy: BadRowPolicy,
    carried: &[String],
    request: Option<&str>,
    cohort_rows: u64,
    columns: &columns::ColumnMap,
) -> Result<Loaded> {
    let mut frames = vec![];
    let mut requests = vec![];
    let mut inputs = vec![];
    let mut log_rows = 0;
    let mut around = None;
    let keys = partition_keys(paths);
    for key in &keys {
        if catalogue::field(key).is_some() || key.starts_with("__") {
            return Err(Error::Usage(format!(
                "the partition key `{key}` (a `{key}=…` folder) names a column tracediag reads; rename the folders (e.g. `{key}_part=…`)"
            )));
        }
    }
    if paths
        .iter()
        .filter(|p| p.as_os_str() == spool::STDIN_ARG)
        .count()
        > 1
    {
        return Err(Error::Usage(
            "`-` (standard input) can be read once per run".into(),
        ));
    }
    for path in paths {
        let opened = spool::open(path)?;
        let (opened, content) = match sniff::detect(&opened.read, forced) {
            Ok(Content::JsonObject) => (spool::one_line(&opened)?, Content::JsonObject),
            Ok(c) => (opened, c),
            Err(e) => return Err(opened.rename(e)),
        };
        let one = load_one(
            &opened,
            content,
            Reading {
                policy,
                index: inputs.len(),
                keys: &keys,
                carried,
                request: request.map(|id| (id, cohort_rows)),
                columns,
            },
        )
        .map_err(|e| opened.rename(e))?;
        frames.push(one.lf);
        if let Some(found) = one.request {
            log_rows += found.file_rows;
            requests.push(found.rows);
            around = around.or(found.around);
        }
        inputs.push(one.input);
    }
    let one = |mut frames: Vec<LazyFrame>| {
        if frames.len() == 1 {
            Ok(frames.pop().expect("one frame"))
        } else {
            concat(frames, UnionArgs::default()).map_err(|e| Error::Usage(polars_message(&e)))
        }
    };
    let request = match request {
        Some(_) => Some(one(requests)?),
        None => None,
    };
    Ok(Loaded {
        lf: one(frames)?,
        request,
        around: around
            .filter(|_| log_rows > cohort_rows)
            .map(|(lf, file, (first, last))| Around {
                lf,
                extent: AroundRows {
                    file,
                    first,
                    last,
                    log_rows,
                },
            }),
        inputs,
    })
}

/// One input as `load_one` read it.
struct One {
    lf: LazyFrame,
    request: Option<Found>,
    input: Input,
}

/// With a request id: its rows in one input, the input's rows, and the rows around the
/// first of them (the file's name and which rows).
struct Found {
    rows: LazyFrame,
    file_rows: u64,
    around: Option<(LazyFrame, String, (u64, u64))>,
}

/// A Parquet file's rows, from its metadata: none is an error, as a CSV header alone is (a
/// schema is no request).
fn parquet_rows(raw: &LazyFrame, name: &Path) -> Result<()> {
    let n = raw
        .clone()
        .select([len().cast(DataType::UInt64).alias("n")])
        .collect()
        .map_err(|e| Error::input(name, polars_message(&e)))?;
    if n.column("n").ok().and_then(|c| c.u64().ok()?.get(0)) == Some(0) {
        return Err(Error::input(
            name,
            "the file holds a schema and no row: expected a request log",
        ));
    }
    Ok(())
}

/// How `load_one` reads an input: the run's options, and the input's place among them.
struct Reading<'a> {
    policy: BadRowPolicy,
    /// The input's position among the run's inputs.
    index: usize,
    /// The run's partition keys.
    keys: &'a [String],
    carried: &'a [String],
    request: Option<(&'a str, u64)>,
    columns: &'a columns::ColumnMap,
}

/// Read one opened input into its canonical lazy frame, or refuse it (`Error::Unusable`)
/// when it holds nothing tracediag can time: no timing field, or no readable row.
fn load_one(opened: &spool::Opened, content: Content, reading: Reading) -> Result<One> {
    let Reading {
        policy,
        index,
        keys,
        carried,
        request,
        columns,
    } = reading;
    let path = opened.read.as_path();
    let refuse = |reason: String, columns: Vec<String>| {
        let read_as = if opened.gzip {
            format!("{} (gzip-compressed)", content.read_as())
        } else {
            content.read_as().to_string()
        };
        Error::Unusable(Box::new(Refusal {
            path: opened.name.clone(),
            looks_like: recognise::looks_like(content, &columns),
            read_as,
            reason,
            columns,
        }))
    };
    // What the engines write is a table with named columns. JSON is read with the schema
    // of the canonical fields alone, so it cannot carry the query's columns.
    if !carried.is_empty()
        && !matches!(
            content,
            Content::Log(InputFormat::Csv | InputFormat::Parquet)
        )
    {
        return Err(Error::input(
            &opened.name,
            format!(
                "--from-sql-result reads Parquet or CSV (what an engine writes from the emitted query); this file reads as {}",
                content.read_as()
            ),
        ));
    }
    let format = match content {
        Content::Log(f) => f,
        Content::JsonObject => InputFormat::JsonLines,
        Content::Sse => {
            return Err(refuse(
                "no timing field can be mapped (a stream of events, not rows of requests)".into(),
                vec![],
            ))
        }
    };
    // The names a refusal lists: a JSON file's keys (the reader keeps only those the
    // mapping can read), a table's columns.
    let json_columns = || match content {
        Content::Log(InputFormat::Csv | InputFormat::Parquet | InputFormat::AiperfCsv) => None,
        Content::JsonObject => Some(recognise::json_keys(&opened.read, Content::Log(format))),
        c => Some(recognise::json_keys(&opened.read, c)),
    };
    let mut elements = 0;
    // A JSON log's top-level keys, where the user's columns are looked for (polars reads
    // only the keys it is asked for).
    let user_keys = match content {
        Content::Log(InputFormat::JsonLines | InputFormat::JsonArray) | Content::JsonObject
            if !columns.is_empty() =>
        {
            json_columns()
        }
        _ => None,
    };
    let json_schema = |types: &rowcheck::Types| -> Result<Schema> {
        Ok(match &user_keys {
            Some(k) => columns::json_schema(columns, types.schema(), k),
            None => types.schema(),
        })
    };
    // A tool's log in the form it is written in (JSON lines, CSV, an array, one document),
    // which says how it is checked and whether its rows are its lines.
    let physical = match format {
        InputFormat::NewApi | InputFormat::Higress | InputFormat::LiteLlm => {
            Some(sniff::physical(path)?)
        }
        _ => None,
    };
    // The user's columns are read from a table of the file's own columns, not from what
    // a tool's adapter made of them.
    if !columns.is_empty()
        && !matches!(
            content,
            Content::Log(
                InputFormat::Parquet
                    | InputFormat::Csv
                    | InputFormat::JsonLines
                    | InputFormat::JsonArray
            ) | Content::JsonObject
        )
    {
        return Err(Error::input(
            &opened.name,
            format!(
                "--map and --schema name the columns of a log read as parquet, csv, jsonl or json; this file reads as {} (--input-format jsonl, csv or json reads its own columns)",
                content.read_as()
            ),
        ));
    }
    // A CSV or JSON-lines log read whole is copied in the same reading as its check
    // (`copy`); one with the user's columns through polars' reader (`typed_copy`).
    let whole = request.is_none() && carried.is_empty() && columns.is_empty();
    if format == InputFormat::NewApi
        && carried.is_empty()
        && columns.is_empty()
        && physical == Some(Content::Log(InputFormat::JsonLines))
    {
        if let Some(one) = newapi_lines(opened, index, keys, request)? {
            return Ok(one);
        }
    }
    let mut csv_copy = match format {
        InputFormat::Csv if whole => csv::scan(path, None)
            .ok()
            .and_then(|raw| copy::csv::CsvCopy::start(path, &opened.name, &raw)),
        _ => None,
    };
    let mut jsonl_copy = match format {
        InputFormat::JsonLines if whole => copy::jsonl::JsonlCopy::start(path, &opened.name),
        _ => None,
    };
    let mut newapi_csv = match (format, physical) {
        (InputFormat::NewApi, Some(Content::Log(InputFormat::Csv))) if whole => {
            newapi::CsvCopy::start(path, &opened.name)?
        }
        _ => None,
    };
    let checked = match format {
        InputFormat::Csv => rowcheck::check_csv(
            path,
            csv::separator(path),
            policy,
            csv_copy.as_mut().map(|c| c as &mut dyn rowcheck::Records),
        )?,
        InputFormat::JsonLines | InputFormat::Aiperf => rowcheck::check_json_lines(
            path,
            policy,
            jsonl_copy
                .as_mut()
                .map(|c| c as &mut dyn rowcheck::JsonRows),
        )?,
        InputFormat::AiperfCsv => rowcheck::check_csv(path, csv::separator(path), policy, None)?,
        InputFormat::JsonArray => {
            let (types, n) = rowcheck::check_json_array(path)?;
            if n == 0 {
                return Err(Error::input(
                    &opened.name,
                    "the file holds an empty JSON array (`[]`) and no row: expected a request log",
                ));
            }
            elements = n;
            rowcheck::Checked {
                types,
                rows: n as u64,
                ..Default::default()
            }
        }
        _ => match physical {
            Some(physical) => check_adapted(
                path,
                format,
                physical,
                policy,
                newapi_csv.as_mut().map(|c| c as &mut dyn rowcheck::Records),
            )?,
            None => rowcheck::Checked::default(),
        },
    };
    // A new-api CSV export copied in its check's reading, when every record was good.
    if let Some(c) = newapi_csv.filter(|_| checked.bad.is_empty() && checked.repaired.is_none()) {
        if let Some(read) = c.finish()? {
            if read.mapping.found().any(|(n, _)| timing_field(n)) {
                return Ok(newapi_one(opened, index, keys, read, checked.lines, None));
            }
        }
    }
    // Rows with nothing left to read: unreadable ones, and with `skip` those left out for
    // a wrong-typed value.
    let lost = checked
        .bad
        .iter()
        .filter(|b| {
            b.kind == BadKind::Unreadable
                || (b.kind == BadKind::Value && policy == BadRowPolicy::Skip)
        })
        .count() as u64;
    if checked.rows > 0 && lost == checked.rows {
        return Err(refuse(
            format!(
                "no row can be read: all {lost} are unreadable or left out (--on-bad-row {}); the first on line {}",
                policy.name(),
                checked.bad.first().map_or(0, |b| b.line)
            ),
            json_columns().unwrap_or_default(),
        ));
    }
    let checked_whole = checked.bad.is_empty() && checked.repaired.is_none();
    let repaired = checked.repaired;
    let mut notes: Vec<String> = vec![];
    let adapted = |a: Adapted, notes: &mut Vec<String>| {
        notes.extend(a.notes);
        a.frame
    };
    let mut raw = match format {
        InputFormat::Parquet => parquet::scan(path)?,
        InputFormat::Csv => csv::scan(path, repaired.as_deref())?,
        InputFormat::JsonLines => {
            json::scan_lines_with(path, repaired.as_deref(), json_schema(&checked.types)?)?
        }
        InputFormat::JsonArray => json::read_array(path, json_schema(&checked.types)?, elements)?,
        InputFormat::AzureRequestLog => azure_requests::read(path)?.frame.lazy(),
        InputFormat::NewApi => adapted(newapi::scan(path, repaired.as_deref())?, &mut notes),
        InputFormat::Higress => adapted(higress::scan(path, repaired.as_deref())?, &mut notes),
        InputFormat::LiteLlm => adapted(litellm::scan(path, repaired.as_deref())?, &mut notes),
        InputFormat::Otlp => {
            let spans = otel::read(path)?;
            if spans.genai == 0 {
                return Err(refuse(
                    format!(
                        "no GenAI span: none of its {} spans has a `gen_ai.*` attribute",
                        spans.other
                    ),
                    json_columns().unwrap_or_default(),
                ));
            }
            notes.push(
                "OpenTelemetry GenAI spans carry no gateway point (t0 … t7): the engine table (rules/engine.toml) classifies them by the inference server's queue, prefill and decode times; the spans' own figures (an inference server's from its engine arrival e0, a client's from its call c0, each span's duration on its writer's clock) are reported as measured"
                    .to_string(),
            );
            if spans.other > 0 {
                notes.push(format!(
                    "{} of {} spans have no `gen_ai.*` attribute and are left out",
                    spans.other,
                    spans.genai + spans.other
                ));
            }
            spans.frame
        }
        InputFormat::Aiperf | InputFormat::AiperfCsv => {
            notes.push(aiperf::CLOCK_NOTE.to_string());
            aiperf::read(path, format, repaired.as_deref())?
        }
        InputFormat::Vllm => adapted(vllm::read(path)?, &mut notes),
        InputFormat::Llmperf => {
            notes.push(llmperf::NOTE.to_string());
            llmperf::read(path)?
        }
        InputFormat::GenaiPerf => adapted(genaiperf::read(path)?, &mut notes),
    };
    let schema = raw.collect_schema().map_err(|e| {
        Error::input(
            path,
            format!("cannot read the {format} schema: {}", polars_message(&e)),
        )
    })?;
    if format == InputFormat::Parquet {
        parquet_rows(&raw, &opened.name)?;
    }
    let mut mapping = map_columns(&raw, &schema, path)?;
    if !columns.is_empty() {
        columns::apply(
            columns,
            &mut mapping,
            &raw,
            &schema,
            &opened.name,
            user_keys.as_deref(),
        )?;
    }
    let missing: Vec<&str> = carried
        .iter()
        .filter(|c| !schema.contains(c))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(Error::input(
            &opened.name,
            format!(
                "not a result of the emitted SQL for this rule table (--from-sql-result): missing the column{} {} (`tracediag rules --emit sql` with the same --rules and --set writes them)",
                if missing.len() == 1 { "" } else { "s" },
                missing.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let columns =
        || json_columns().unwrap_or_else(|| schema.iter_names().map(|n| n.to_string()).collect());
    let timing_origins: Vec<&Origin> = mapping
        .fields
        .iter()
        .filter(|(n, o, _)| *o != Origin::Absent && timing_field(n))
        .map(|(_, o, _)| o)
        .collect();
    if timing_origins.is_empty() {
        return Err(refuse("no timing field can be mapped".into(), columns()));
    }
    // A text log read whole is copied once (`typed_copy`), so its values are staged; so is
    // a new-api log, so that its `other` strings are decoded once.
    let copied = matches!(
        format,
        InputFormat::Csv | InputFormat::JsonLines | InputFormat::NewApi
    ) && request.is_none();
    // new-api's rows that are not requests are numbered with the rest, then left out.
    let keep = (format == InputFormat::NewApi).then_some(newapi::REQUEST.to_string());
    let mut carried_here = carried.to_vec();
    carried_here.extend(keep.clone());
    let select = |rows| {
        let lf = canonical::select(
            raw.clone(),
            &schema,
            &mapping,
            &opened.name,
            &checked.kept_rows,
            &carried_here,
            rows,
        );
        match &keep {
            Some(k) => {
                let k = format!("{}{k}", canonical::CARRIED_PREFIX);
                lf.filter(col(k.as_str()))
                    .drop(by_name([k.as_str()], true, false))
            }
            None => lf,
        }
    };
    let lf = select(if copied {
        canonical::Rows::Copy
    } else {
        canonical::Rows::All
    });
    if timing_origins
        .iter()
        .all(|o| matches!(o, Origin::JsonString(_)))
        && !any_timing_value(&lf, &opened.name)?
    {
        // `other` is a JSON string, so every timing field may be inside it; none is in any row.
        return Err(refuse(
            "no timing field can be mapped: `other` is a JSON string, and no row's `other` holds a `timing` object".into(),
            columns(),
        ));
    }
    // A request's rows, looked up once the file is known to be read. Every row where the
    // id cannot be looked up alone (no such case among the formats read today: ids are
    // never inside a JSON string) or where it is in more rows than are worth a slice each
    // (an id column holding a placeholder).
    let found = match request {
        None => None,
        Some((id, cohort_rows)) => {
            let read_error = |what: &str, e: PolarsError| {
                Error::input(
                    &opened.name,
                    format!("cannot read the {what}: {}", polars_message(&e)),
                )
            };
            let rows = canonical::rows_holding(&raw, &schema, &mapping, "request_id", id)
                .map_err(|e| read_error("request ids", e))?;
            // The file's rows as polars reads them (Parquet: from its metadata).
            let file_rows = raw
                .clone()
                .select([len().cast(DataType::UInt64).alias("n")])
                .collect()
                .and_then(|df| Ok(df.column("n")?.u64()?.get(0).unwrap_or(0)))
                .map_err(|e| read_error("rows", e))?;
            // polars' JSON-lines reader counts a blank line (or one of spaces) before a
            // row as a row when it skips to a slice, but not when it reads every row (as
            // `rows_holding` does): in JSON lines whose rows are not each on the line
            // after the last, the rows are picked by number from a scan of every row.
            let json_lines = matches!(format, InputFormat::JsonLines | InputFormat::Aiperf)
                || physical == Some(Content::Log(InputFormat::JsonLines));
            let sliced = !json_lines || checked.lines.rows_are_lines();
            let around = rows.as_ref().and_then(|r| r.first()).map(|&row| {
                let (first, last) = rows_around(u64::from(row), file_rows, cohort_rows.max(1));
                let range = canonical::Rows::Range {
                    first: first as IdxSize,
                    len: (last + 1 - first) as IdxSize,
                    sliced,
                };
                (
                    select(range),
                    opened.name.display().to_string(),
                    (first, last),
                )
            });
            let rows = match &rows {
                Some(rows) if rows.len() <= MAX_REQUEST_SLICES => {
                    select(canonical::Rows::Only { rows, sliced })
                }
                _ => lf.clone(),
            };
            Some(Found {
                rows,
                file_rows,
                around,
            })
        }
    };
    // A row is named by its line where the file's rows are its lines: a log read as CSV or
    // JSON lines, a tool's own included.
    let lines = match format {
        InputFormat::Csv
        | InputFormat::JsonLines
        | InputFormat::Aiperf
        | InputFormat::AiperfCsv => Some(checked.lines),
        InputFormat::NewApi | InputFormat::Higress | InputFormat::LiteLlm => matches!(
            physical,
            Some(Content::Log(InputFormat::Csv | InputFormat::JsonLines))
        )
        .then_some(checked.lines),
        _ => None,
    };
    let extra = extra_columns(lines.as_ref(), &opened.name, index, keys);
    let request = found.map(|f| Found {
        rows: f.rows.with_columns(extra.clone()),
        around: f
            .around
            .map(|(lf, file, rows)| (lf.with_columns(extra.clone()), file, rows)),
        file_rows: f.file_rows,
    });
    // The copy made beside the check holds every row only when the file is read as it is.
    let csv_copy = csv_copy.filter(|_| checked_whole);
    let jsonl_copy = match jsonl_copy.filter(|_| checked_whole && copied) {
        Some(c) => c.finish(&mapping)?,
        None => None,
    };
    let (lf, typed) = match (csv_copy, jsonl_copy) {
        (Some(c), _) if copied => {
            let (lf, copy) = c.finish()?;
            (lf, Some(copy))
        }
        (_, Some((lf, copy))) => (lf, Some(copy)),
        _ if copied => {
            let (lf, copy) = typed_copy(lf, &opened.name)?;
            (lf, Some(copy))
        }
        _ => (lf, None),
    };
    // A log names the fields it has values for: a new-api log not all those its adapter
    // reads, a JSON-string `other` not every timing field it could hold.
    let mapping = match &typed {
        Some(_) => with_values(mapping, &lf, &opened.name, |o| {
            format == InputFormat::NewApi || matches!(o, Origin::JsonString(_))
        })?,
        None => mapping,
    };
    // Added after the copy: columns computed from the row number or the same in every row
    // need not be written into it.
    let lf = lf.with_columns(extra);
    Ok(One {
        lf,
        request,
        input: Input {
            path: opened.name.clone(),
            read_from: opened.clone(),
            format,
            mapping,
            bad_rows: checked.bad,
            lines,
            repaired,
            typed,
            types: checked.types,
            notes,
        },
    })
}

/// The columns added to a file's canonical rows: the line each row begins on (where its
/// rows are lines), the file's index, and its partition keys as text labels (null where
/// this file's path has no such folder).
fn extra_columns(lines: Option<&LineMap>, name: &Path, index: usize, keys: &[String]) -> Vec<Expr> {
    let line = match lines {
        Some(lines) => lines.expr(col(ROW_COL)),
        None => lit(NULL).cast(DataType::Int64),
    };
    let values = partition_values(name);
    let mut extra = vec![line.alias(LINE_COL), lit(index as u32).alias(FILE_INDEX)];
    for key in keys {
        let v = values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str());
        extra.push(match v {
            Some(v) => lit(v).alias(key.as_str()),
            None => lit(NULL).cast(DataType::String).alias(key.as_str()),
        });
    }
    extra
}

/// A new-api JSON-lines log read in one parse (`newapi::read_lines`), its rows its lines;
/// none where the slow reading must read it. With a `request` id on a log of more rows
/// than a cohort's, only the rows around its first row are read (`newapi::read_rows`),
/// found by a search for the id in the log's text (`newapi::locate`); its rows and those
/// around it are picked from the copy.
fn newapi_lines(
    opened: &spool::Opened,
    index: usize,
    keys: &[String],
    request: Option<(&str, u64)>,
) -> Result<Option<One>> {
    let path = opened.read.as_path();
    if !newapi::page_columns(path).is_empty() {
        return Ok(None);
    }
    // (the rows read: all, or those around the request; the file's rows)
    let (read, around) = match request {
        None => (newapi::read_lines(path, &opened.name)?, None),
        Some((id, cohort_rows)) => {
            let Some(located) = newapi::locate(path, id)? else {
                return Ok(None);
            };
            if located.rows <= cohort_rows {
                (newapi::read_lines(path, &opened.name)?, None)
            } else {
                let (first, last) = rows_around(located.hits[0], located.rows, cohort_rows);
                // Its rows beyond those around it are the slow reading's to find.
                if located.hits.iter().any(|r| *r > last) {
                    return Ok(None);
                }
                let read = newapi::read_rows(path, &opened.name, &located, first, last)?;
                (read, Some((first, last, located.rows)))
            }
        }
    };
    let Some(read) = read else {
        return Ok(None);
    };
    // A log without a timing value is the slow reading's to refuse, as it would.
    if !read.mapping.found().any(|(n, _)| timing_field(n)) {
        return Ok(None);
    }
    let request = request.map(|(id, _)| (id, around));
    Ok(Some(newapi_one(
        opened,
        index,
        keys,
        read,
        LineMap::default(),
        request,
    )))
}

/// Where only the rows around a request were read: the first and last of them, and the
/// file's rows.
type AroundRead = (u64, u64, u64);

/// A new-api log read into its typed copy (`read`) as an input, its rows on the `lines`
/// given; with a request id, its rows and, where only the rows around it were read, those.
fn newapi_one(
    opened: &spool::Opened,
    index: usize,
    keys: &[String],
    read: newapi::Read,
    lines: LineMap,
    request: Option<(&str, Option<AroundRead>)>,
) -> One {
    let extra = extra_columns(Some(&lines), &opened.name, index, keys);
    let lf = read.lf.with_columns(extra);
    let request = request.map(|(id, around)| {
        let rows = lf.clone().filter(col("request_id").eq(lit(id)));
        let name = opened.name.display().to_string();
        let (around, file_rows) = match around {
            Some((first, last, rows)) => (Some((lf.clone(), name, (first, last))), rows),
            None => (None, read.rows),
        };
        Found {
            rows,
            file_rows,
            around,
        }
    });
    One {
        lf,
        request,
        input: Input {
            path: opened.name.clone(),
            read_from: opened.clone(),
            format: InputFormat::NewApi,
            mapping: read.mapping,
            bad_rows: vec![],
            lines: Some(lines),
            repaired: None,
            typed: Some(read.copy),
            types: rowcheck::Types::default(),
            notes: read.notes,
        },
    }
}

/// A text log's canonical rows, parsed once: streamed into a temporary Parquet file (never
/// held in memory), which is then scanned in their place. A summary reads the log in
/// several passes; each pass then decodes typed columns instead of parsing text. (A CSV or
/// JSON-lines log read as it is, with no bad row, is copied by `copy` instead, in the
/// reading that checks it.)
///
/// The source file's name, the same in every row, is not written into the copy but added
/// back when it is read (a text column of the path per row would be most of the copy's
/// writing).
fn typed_copy(mut lf: LazyFrame, name: &Path) -> Result<(LazyFrame, Arc<spool::Spooled>)> {
    let (file, copy) = spool::scratch(name, ".parquet")?;
    drop(file);
    let read_error = |e: PolarsError| {
        Error::input(
            name,
            format!("cannot read the request log: {}", polars_message(&e)),
        )
    };
    let order: Vec<Expr> = lf
        .collect_schema()
        .map_err(read_error)?
        .iter_names()
        .map(|n| col(n.clone()))
        .collect();
    let target = PlRefPath::try_from_path(copy.path()).map_err(read_error)?;
    lf.drop(by_name([SOURCE_COL], true, false))
        .sink(
            SinkDestination::File {
                target: SinkTarget::Path(target.clone()),
            },
            // LZ4: fast to write and to read back; the copy lives for one run.
            FileWriteFormat::Parquet(Arc::new(ParquetWriteOptions {
                compression: ParquetCompression::Lz4Raw,
                ..Default::default()
            })),
            UnifiedSinkArgs::default(),
        )
        .and_then(|q| q.collect_with_engine(Engine::Streaming))
        .map_err(read_error)?;
    Ok((scan_copy(&copy, name, order)?, copy))
}

/// A typed copy of `name`'s canonical rows read back in their place: its columns, with the
/// source file's name added back, in the projection's `order`.
pub(crate) fn scan_copy(copy: &spool::Spooled, name: &Path, order: Vec<Expr>) -> Result<LazyFrame> {
    let read_error = |e: PolarsError| {
        Error::input(
            name,
            format!("cannot read the request log: {}", polars_message(&e)),
        )
    };
    Ok(LazyFrame::scan_parquet(
        read_path(copy.path()).map_err(read_error)?,
        ScanArgsParquet::default(),
    )
    .map_err(read_error)?
    .with_column(lit(name.display().to_string()).alias(SOURCE_COL))
    .select(order))
}

/// `mapping` with the fields of the places `which` picks absent where no row of the log's
/// typed copy (`lf`) has a value: the header then counts the fields the log has, not
/// those its reading could find. One aggregate over the copy's columns.
fn with_values(
    mut mapping: canonical::Mapping,
    lf: &LazyFrame,
    name: &Path,
    which: impl Fn(&Origin) -> bool,
) -> Result<canonical::Mapping> {
    let asked: Vec<String> = mapping
        .found()
        .filter(|(_, o)| which(o))
        .map(|(n, _)| n.to_string())
        .collect();
    if asked.is_empty() {
        return Ok(mapping);
    }
    let any: Vec<Expr> = asked
        .iter()
        .map(|f| col(f.as_str()).is_not_null().any(true).alias(f.as_str()))
        .collect();
    let df = lf
        .clone()
        .select(any)
        .collect()
        .map_err(|e| Error::input(name, polars_message(&e)))?;
    for (field, origin, _) in &mut mapping.fields {
        let held = || df.column(field).ok()?.bool().ok()?.get(0);
        if asked.contains(field) && held() == Some(false) {
            *origin = Origin::Absent;
        }
    }
    Ok(mapping)
}

/// Where each canonical field is in a file's columns (`canonical::map`), with whether a
/// text timestamp holds Unix times, which its first value says.
pub(crate) fn map_columns(
    raw: &LazyFrame,
    schema: &Schema,
    path: &Path,
) -> Result<canonical::Mapping> {
    let mut mapping = canonical::map(schema, path)?;
    if let Some((_, Origin::Column(c), DataType::String)) =
        mapping.fields.iter().find(|(n, _, _)| n == "timestamp")
    {
        mapping.unix_time = timestamp::holds_numbers(raw, c);
    }
    Ok(mapping)
}

fn timing_field(name: &str) -> bool {
    catalogue::field(name).is_some_and(|f| f.kind.is_timing())
}

/// Whether any row of a file holds a value in any timing field (one pass over the mapped
/// timing columns only; run for files whose timings can only be inside a JSON string).
fn any_timing_value(lf: &LazyFrame, name: &Path) -> Result<bool> {
    let timing: Vec<Expr> = catalogue::FIELDS
        .iter()
        .filter(|f| f.kind.is_timing())
        .map(|f| col(f.name).is_not_null())
        .collect();
    let df = lf
        .clone()
        .select([any_horizontal(timing)
            .map_err(|e| Error::input(name, polars_message(&e)))?
            .any(true)
            .alias("any")])
        .collect()
        .map_err(|e| Error::input(name, polars_message(&e)))?;
    Ok(df
        .column("any")
        .ok()
        .and_then(|c| c.bool().ok()?.get(0))
        .unwrap_or(false))
}

/// What polars scans: the file at `path`, or the row check's repaired copy of its rows.
fn scan_sources(path: &Path, repaired: Option<&spool::Spooled>) -> Result<ScanSources> {
    let read = repaired.map_or(path, |r| r.path());
    let p = read_path(read).map_err(|e| Error::input(path, polars_message(&e)))?;
    Ok(ScanSources::Paths(vec![p].into()))
}

/// The path polars is given to read the file at `path`. Given a local path, polars maps
/// the file into memory, and every page it has read stays resident until the run ends
/// (3.5 GB of a 100M-request Parquet file beside 1.5 GB of the queries' own memory; most
/// of a JSON-lines file). Given a `file://` URL, it reads byte ranges into buffers it
/// frees, as for a remote file: the same rows, in about the same time. A URL reads `%`,
/// `?`, `#` and the like otherwise than a path does, so a path holding any character but
/// letters, digits and `/._-=` is given as it is (and the file mapped).
pub fn read_path(path: &Path) -> PolarsResult<PlRefPath> {
    let plain = || PlRefPath::try_from_path(path);
    let Ok(abs) = std::fs::canonicalize(path) else {
        // Not there: polars says so, naming the path as given.
        return plain();
    };
    match abs.to_str() {
        Some(s)
            if s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-=".contains(&b)) =>
        {
            Ok(PlRefPath::new(format!("file://{s}")))
        }
        _ => plain(),
    }
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
    let path = input.read_from.read.as_path();
    let raw = match input.format {
        InputFormat::Parquet => parquet::scan(path).ok()?,
        InputFormat::Csv => csv::scan(path, input.repaired.as_deref()).ok()?,
        InputFormat::JsonLines => {
            json::scan_lines(path, input.repaired.as_deref(), &input.types).ok()?
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
    }

    /// A request's rows read alone (a lookup of the id column, then one-row slices) are the
    /// rows of the whole log holding that id: the same values, the same places in their
    /// files. Across formats, several files at once, rows that cannot be read whole, and
    /// file columns named like the ones the projection adds.
    /// The time the shell split from `--since 2026-11-02 10:00` is named as such.
    #[test]
    fn a_time_of_day_left_as_an_input_says_to_quote_it() {
        for t in ["10:00", "10:00:30", "10:00:30.5", "10:00Z", "10:00+08:00"] {
            assert!(time_of_day(t), "{t}");
            let e = expand(&[t.to_string()]).unwrap_err().to_string();
            assert!(e.contains("quote the two"), "{e}");
        }
        for t in ["logs.csv", "10", "a:b", "2026-11-02", "1:2:3:4"] {
            assert!(!time_of_day(t), "{t}");
        }
    }

    #[test]
    fn a_request_read_alone_equals_its_rows_in_the_log() {
        let runs: [&[&str]; 5] = [
            &[
                "fixtures/generated/gateway.parquet",
                "fixtures/generated/gateway.csv",
                "fixtures/generated/gateway.jsonl",
                "fixtures/generated/gateway_other_string.jsonl",
            ],
            &["fixtures/bad/csv_short_row.csv"],
            &["fixtures/bad/jsonl_broken_line.jsonl"],
            &["fixtures/bad/csv_internal_column_names.csv"],
            &["fixtures/bad/jsonl_internal_column_names.jsonl"],
        ];
        for files in runs {
            let paths: Vec<PathBuf> = files.iter().map(|f| fixture(f)).collect();
            // The inputs hold the row check's repaired copies, which polars reads.
            let (lf, _inputs) = load(&paths, None, BadRowPolicy::Keep, &[]).unwrap();
            let all = crate::stats::collect(lf.select([col("request_id")])).unwrap();
            let ids: Vec<String> = all
                .column("request_id")
                .unwrap()
                .str()
                .unwrap()
                .iter()
                .flatten()
                .map(str::to_string)
                .collect();
            assert!(!ids.is_empty(), "{files:?}");
            let mut asked: Vec<&str> = ids
                .iter()
                .step_by(ids.len() / 3 + 1)
                .map(|s| s.as_str())
                .collect();
            asked.extend([ids[ids.len() - 1].as_str(), "no-such-id"]);
            for id in asked {
                let loaded =
                    load_for(&paths, None, BadRowPolicy::Keep, &[], Some(id), COHORT_ROWS).unwrap();
                let whole =
                    crate::stats::collect(loaded.lf.filter(col("request_id").eq(lit(id)))).unwrap();
                let alone = crate::stats::collect(loaded.request.unwrap()).unwrap();
                assert!(
                    whole.equals_missing(&alone),
                    "{files:?} {id}:\n{whole}\n{alone}"
                );
                assert_eq!(whole.height() == 0, id == "no-such-id", "{files:?} {id}");
            }
        }
    }

    /// A CSV log copied in the reading that checks it (`copy::csv`) holds what its copy
    /// through polars' CSV reader holds (`typed_copy`), value for value: quoted fields with
    /// separators, quotes and line ends, padded and empty cells, text that is not a number,
    /// flags and outcomes in any case, two timestamp forms, a JSON `other`, more rows than
    /// a part, with LF and with CRLF line ends.
    #[test]
    fn a_csv_copied_in_its_check_equals_its_copy_through_polars() {
        let dir = tempfile::tempdir().unwrap();
        let header = "request_id,timestamp,model,is_stream,status,outcome,output_tokens,upstream_headers_ms,first_sse_event_ms,total_handler_ms,other";
        let variants = [
            "r{i},2026-11-02T00:00:00.078Z,gpt-4.1,true,200,ok,{i},12.5,30,{i}.25,",
            "r{i},2026-11-02 00:00:01,\"gpt, \"\"quoted\"\"\",TRUE,200,Success, 7 , 1e3 ,,40,",
            "r{i},,\"two\nlines\",no,499,,,n/a,NaN,inf,\"{\"\"timing\"\":{\"\"auth_ms\"\":3.5}}\"",
            " r{i} ,2026-11-02T00:00:02.5Z,模型,maybe,,TIMEOUT,1.5,-0,+4,\"5\",",
            "r{i},2026-11-02T00:00:03.000Z,é,1,500,error,x,\"\",  ,9,\"{}\"",
        ];
        let rows = copy::PART_ROWS * 2 + 17;
        for eol in ["\n", "\r\n"] {
            let mut text = format!("{header}{eol}");
            for i in 0..rows {
                text.push_str(&variants[i % variants.len()].replace("{i}", &i.to_string()));
                text.push_str(eol);
            }
            let path = dir.path().join("log.csv");
            std::fs::write(&path, text).unwrap();
            let (lf, _inputs) =
                load(std::slice::from_ref(&path), None, BadRowPolicy::Error, &[]).unwrap();
            let raw = csv::scan(&path, None).unwrap();
            let schema = raw.clone().collect_schema().unwrap();
            let mapping = map_columns(&raw, &schema, &path).unwrap();
            let through_polars = canonical::select(
                raw,
                &schema,
                &mapping,
                &path,
                &[],
                &[],
                canonical::Rows::Copy,
            );
            let (through_polars, _copy) = typed_copy(through_polars, &path).unwrap();
            let expected = crate::stats::collect(through_polars).unwrap();
            let names: Vec<Expr> = expected
                .get_column_names()
                .into_iter()
                .map(|n| col(n.clone()))
                .collect();
            let got = crate::stats::collect(lf.select(names)).unwrap();
            assert_eq!(got.height(), rows, "{eol:?}");
            assert!(got.equals_missing(&expected), "{eol:?}:\n{got}\n{expected}");
        }
    }

    /// A JSON-lines log's canonical rows, read through polars' reader with the schema its
    /// row check found and copied (`typed_copy`): what a copy made in the check must hold.
    fn jsonl_through_polars(path: &Path) -> DataFrame {
        let checked = rowcheck::check_json_lines(path, BadRowPolicy::Error, None).unwrap();
        let raw = json::scan_lines(path, None, &checked.types).unwrap();
        let schema = checked.types.schema();
        let mapping = map_columns(&raw, &schema, path).unwrap();
        let lf = canonical::select(
            raw,
            &schema,
            &mapping,
            path,
            &[],
            &[],
            canonical::Rows::Copy,
        );
        let (lf, _copy) = typed_copy(lf, path).unwrap();
        crate::stats::collect(lf).unwrap()
    }

    /// The copy a JSON-lines log gets in its check's reading (`copy::jsonl`), if it is
    /// used, with the file's rows as `load` reads them.
    fn jsonl_copied(path: &Path) -> (Option<DataFrame>, DataFrame) {
        let mut copy = copy::jsonl::JsonlCopy::start(path, path);
        let checked = rowcheck::check_json_lines(
            path,
            BadRowPolicy::Error,
            copy.as_mut().map(|c| c as &mut dyn rowcheck::JsonRows),
        )
        .unwrap();
        let raw = json::scan_lines(path, None, &checked.types).unwrap();
        let mapping = map_columns(&raw, &checked.types.schema(), path).unwrap();
        let copied = copy.and_then(|c| c.finish(&mapping).unwrap());
        let copied = copied.map(|(lf, _copy)| crate::stats::collect(lf).unwrap());
        let (lf, _inputs) = load(&[path.to_path_buf()], None, BadRowPolicy::Error, &[]).unwrap();
        (copied, crate::stats::collect(lf).unwrap())
    }

    /// `got`'s columns named as `expected`'s, in its order, equal `expected`'s.
    fn assert_same_rows(got: &DataFrame, expected: &DataFrame, what: &str) {
        let got = got.select(expected.get_column_names_owned()).unwrap();
        assert_eq!(got.height(), expected.height(), "{what}");
        assert!(got.equals_missing(expected), "{what}:\n{got}\n{expected}");
    }

    /// A JSON-lines log copied in the reading that checks it (`copy::jsonl`) holds what its
    /// copy through polars' reader holds, value for value: keys in any order and missing,
    /// nulls, escapes and characters beyond ASCII, floats hard to round (nineteen digits)
    /// and integers in a float column, numbers as text, `other.timing` and a top-level `timing`, or `other`
    /// as a JSON string; more rows than a part. A file whose values change type after its
    /// first lines is not copied so, and reads the same.
    #[test]
    fn a_jsonl_copied_in_its_check_equals_its_copy_through_polars() {
        let dir = tempfile::tempdir().unwrap();
        let nested = [
            r#"{"request_id":"r{i}","timestamp":"2026-11-02T00:00:00.078Z","model":"gpt-4.1","is_stream":true,"status":200,"outcome":"ok","output_tokens":{i},"upstream_headers_ms":12.5,"total_handler_ms":" 42 ","other":{"timing":{"auth_ms":3.5,"first_sse_event_ms":30}},"prompt":"x"}"#,
            r#"{"model":"gpt \"quoted\" \u00e9 \ud83d\ude00 模型","request_id":"r{i}","status":null,"is_stream":false,"timestamp":"2026-11-02T00:00:01.5Z","upstream_headers_ms":1e3,"output_tokens":7,"other":{"messages":[{"role":"user","content":"x"}],"timing":{"auth_ms":0.1}},"outcome":"TIMEOUT"}"#,
            r#"{"request_id":"r{i}","timestamp":null,"upstream_headers_ms":null,"other":null,"total_handler_ms":"n/a"}"#,
            r#"{"request_id":"r{i}","timestamp":"2026-11-02T00:00:02Z","upstream_headers_ms":2.2250738585072014e-308,"output_tokens":0,"other":{"timing":{"auth_ms":0.30000000000000004,"first_sse_event_ms":-0.0}},"is_stream":true,"total_handler_ms":""}"#,
            r#"{"request_id":"r{i}","upstream_headers_ms":123456789012345678,"other":{"timing":{"auth_ms":1.7976931348623157e308,"first_sse_event_ms":5e-324}},"timing":{"upstream_done_ms":99.5}}"#,
            r#"{"request_id":"r{i}","upstream_headers_ms":9007199254740993,"timing":{"upstream_done_ms":7},"other":{}}"#,
            // Nineteen digits after the point: read as polars reads them, correctly rounded.
            r#"{"request_id":"r{i}","upstream_headers_ms":{long},"other":{"timing":{"auth_ms":-{long}e-3}}}"#,
        ];
        let as_string = [
            r#"{"request_id":"r{i}","other":"{\"timing\":{\"auth_ms\":3.5,\"first_sse_event_ms\":\"12\"}}","upstream_headers_ms":5}"#,
            r#"{"request_id":"r{i}","other":"","upstream_headers_ms":6.5}"#,
            r#"{"other":null,"request_id":"r{i}"}"#,
            r#"{"request_id":"r{i}","other":"  {\"timing\":{}} ","upstream_headers_ms":1}"#,
        ];
        let rows = copy::PART_ROWS + 1017;
        for (name, variants) in [("nested", &nested[..]), ("as_string", &as_string[..])] {
            let mut text = String::new();
            for i in 0..rows {
                let long = format!(
                    "{}.{:019}",
                    i % 10_000,
                    (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) % 10_000_000_000_000_000_000
                );
                let row = variants[i % variants.len()].replace("{i}", &i.to_string());
                text.push_str(&row.replace("{long}", &long));
                text.push('\n');
            }
            let path = dir.path().join(format!("{name}.jsonl"));
            std::fs::write(&path, text).unwrap();
            let expected = jsonl_through_polars(&path);
            let (copied, loaded) = jsonl_copied(&path);
            let copied = copied.unwrap_or_else(|| panic!("{name}: not copied in its check"));
            assert_same_rows(&copied, &expected, name);
            assert_same_rows(&loaded, &expected, name);
        }
        // After the first lines: a float where there were integers (polars reads a float
        // column, not the integer column the first lines map), a number where there was
        // text (the column is text either way, but polars writes the number's JSON text).
        for (name, first, last) in [("float", "7", "2.5"), ("number", r#""7""#, "7")] {
            let mut text = String::new();
            for i in 0..60_000 {
                let value = if i == 59_999 { last } else { first };
                text.push_str(&format!(
                    r#"{{"request_id":"r{i}","upstream_headers_ms":{value}}}"#
                ));
                text.push('\n');
            }
            let path = dir.path().join(format!("{name}.jsonl"));
            std::fs::write(&path, text).unwrap();
            let (copied, loaded) = jsonl_copied(&path);
            assert!(
                copied.is_none(),
                "{name}: a file whose types change is not copied so"
            );
            assert_same_rows(&loaded, &jsonl_through_polars(&path), name);
        }
    }

    /// An id in more rows than are worth a slice each is read by a filter over the file:
    /// the same rows.
    #[test]
    fn an_id_in_many_rows_is_read_by_a_filter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("placeholder.csv");
        let mut text = String::from("request_id,total_handler_ms\n");
        for i in 0..(MAX_REQUEST_SLICES + 6) {
            text.push_str(&format!("-,{i}\nr{i},{i}\n"));
        }
        std::fs::write(&path, text).unwrap();
        let loaded = load_for(
            &[path],
            None,
            BadRowPolicy::Keep,
            &[],
            Some("-"),
            COHORT_ROWS,
        )
        .unwrap();
        let is = || col("request_id").eq(lit("-"));
        let whole = crate::stats::collect(loaded.lf.filter(is())).unwrap();
        let read = crate::stats::collect(loaded.request.unwrap().filter(is())).unwrap();
        assert_eq!(whole.height(), MAX_REQUEST_SLICES + 6);
        assert!(whole.equals_missing(&read));
    }

    /// The rows around a request: `len` rows centred on it, as far as the file allows.
    #[test]
    fn rows_around_are_centred_within_the_file() {
        assert_eq!(rows_around(500, 3000, 100), (450, 549));
        assert_eq!(rows_around(10, 3000, 100), (1, 100));
        assert_eq!(rows_around(2990, 3000, 100), (2901, 3000));
        assert_eq!(rows_around(3, 5, 100), (1, 5));
        assert_eq!(rows_around(1, 1, 1), (1, 1));
    }

    /// On a log of more rows than the cohort's, the rows around a request (its first row)
    /// are those rows of its file, the same as the log's (values and places), in every
    /// format and with several inputs; on a smaller log there are none (the cohort is the
    /// whole log).
    #[test]
    fn the_rows_around_a_request_equal_those_rows_of_its_file() {
        let runs: [(&[&str], u64); 3] = [
            (&["fixtures/generated/gateway.parquet"], 101),
            (
                &[
                    "fixtures/generated/gateway.csv",
                    "fixtures/generated/gateway.jsonl",
                ],
                100,
            ),
            // A row kept with its unreadable part null; 2 rows around, of 3.
            (&["fixtures/bad/csv_short_row.csv"], 2),
        ];
        for (files, len) in runs {
            let paths: Vec<PathBuf> = files.iter().map(|f| fixture(f)).collect();
            let (lf, _inputs) = load(&paths, None, BadRowPolicy::Keep, &[]).unwrap();
            let all = crate::stats::collect(lf).unwrap();
            let file_of = all
                .column(SOURCE_COL)
                .unwrap()
                .cast(&DataType::String)
                .unwrap();
            let file_of = file_of.str().unwrap();
            let row_of = all.column(ROW_COL).unwrap().cast(&DataType::Int64).unwrap();
            let row_of = row_of.i64().unwrap();
            let ids = all.column("request_id").unwrap().str().unwrap();
            // A request four fifths into the log.
            let candidates: Vec<usize> = (0..all.height())
                .filter(|&i| ids.get(i).is_some())
                .collect();
            let id = ids.get(candidates[candidates.len() * 4 / 5]).unwrap();
            // Its first row in the log, which the rows around are centred on (the
            // generated files hold the same requests).
            let i = (0..all.height()).find(|&i| ids.get(i) == Some(id)).unwrap();
            let (holding, row) = (file_of.get(i).unwrap(), row_of.get(i).unwrap() as u64);
            let loaded = load_for(&paths, None, BadRowPolicy::Keep, &[], Some(id), len).unwrap();
            let around = loaded.around.expect("a log of more rows than the cohort's");
            assert_eq!(around.extent.file, holding, "{files:?}");
            assert_eq!(around.extent.log_rows, all.height() as u64, "{files:?}");
            let (first, last) = (around.extent.first, around.extent.last);
            assert!(
                first <= row && row <= last && last + 1 - first == len,
                "{files:?}"
            );
            let want = crate::stats::collect(
                all.clone().lazy().filter(
                    col(SOURCE_COL)
                        .cast(DataType::String)
                        .eq(lit(holding))
                        .and(col(ROW_COL).cast(DataType::Int64).gt_eq(lit(first as i64)))
                        .and(col(ROW_COL).cast(DataType::Int64).lt_eq(lit(last as i64))),
                ),
            )
            .unwrap();
            let got = crate::stats::collect(around.lf).unwrap();
            assert!(want.equals_missing(&got), "{files:?}:\n{want}\n{got}");
            let small =
                load_for(&paths, None, BadRowPolicy::Keep, &[], Some(id), COHORT_ROWS).unwrap();
            assert!(small.around.is_none());
        }
    }
}
