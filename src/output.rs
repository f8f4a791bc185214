//! `--out FILE`: one row per request, written to a temporary file beside the target and
//! renamed into place, so a failed run never leaves a partial output. Refuses to write
//! over an input, and over an existing file unless forced.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use polars::prelude::*;

use crate::catalogue::{Kind, FIELDS};
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::quality;
use crate::ruleset::compile::{chain, estimated_metrics, CLASS_INDEX, ESTIMATED_SUFFIX};
use crate::ruleset::{Rule, RuleSet};
use crate::source::{self, LINE_COL, ROW_COL, SOURCE_COL};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    Parquet,
    Csv,
    JsonLines,
}

impl OutFormat {
    pub fn from_path(path: &Path) -> Result<OutFormat> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref()
        {
            Some("parquet") | Some("pq") => Ok(OutFormat::Parquet),
            Some("csv") => Ok(OutFormat::Csv),
            Some("jsonl") | Some("ndjson") => Ok(OutFormat::JsonLines),
            other => Err(Error::Usage(format!(
                "--out {}: expected a .parquet, .csv or .jsonl file, found {}",
                path.display(),
                other
                    .map(|e| format!("`.{e}`"))
                    .unwrap_or_else(|| "no extension".into())
            ))),
        }
    }
}

/// One text of a rule (its layer, look_at or next check).
pub type RuleText = fn(&Rule) -> &str;

/// The columns taken from the rule that gave a request its class, so an output row says
/// where to look next without the rule table beside it: null for the default class.
pub const RULE_COLUMNS: [(&str, RuleText); 3] = [
    ("layer", |r| r.layer.as_str()),
    ("look_at", |r| r.look_at.as_str()),
    ("next_check", |r| r.next_check.as_str()),
];

/// The per-request columns, in output order: labels, class, the class's rule columns,
/// timing fields, metrics, estimate flags, data-quality flags. Nothing else (and never
/// content) is written.
pub fn columns(rules: &RuleSet) -> Vec<String> {
    let mut out: Vec<String> = vec![
        "request_id".into(),
        "timestamp".into(),
        SOURCE_COL.into(),
        ROW_COL.into(),
        LINE_COL.into(),
    ];
    for f in FIELDS {
        if !f.kind.is_timing()
            && f.name != "request_id"
            && f.name != "timestamp"
            && !matches!(f.kind, Kind::Timestamp)
        {
            out.push(f.name.into());
        }
    }
    out.push("class".into());
    out.push("classes".into());
    out.extend(RULE_COLUMNS.iter().map(|(name, _)| name.to_string()));
    out.extend(
        FIELDS
            .iter()
            .filter(|f| f.kind.is_timing())
            .map(|f| f.name.to_string()),
    );
    out.extend(rules.metrics.iter().map(|m| m.name.clone()));
    let est = estimated_metrics(rules);
    out.extend(
        rules
            .metrics
            .iter()
            .filter(|m| est.get(&m.name).copied().unwrap_or(false))
            .map(|m| format!("{}{ESTIMATED_SUFFIX}", m.name)),
    );
    out.extend(quality::ALL.iter().map(quality::column));
    out
}

/// Check the target before any work is done.
pub fn check_target(path: &Path, inputs: &[PathBuf], force: bool) -> Result<OutFormat> {
    let format = OutFormat::from_path(path)?;
    check_path(path, inputs, force)?;
    Ok(format)
}

/// Whatever the format: never an input, never a directory, an existing file only with
/// `force`.
pub fn check_path(path: &Path, inputs: &[PathBuf], force: bool) -> Result<()> {
    let target = std::path::absolute(path).map_err(|e| Error::output(path, e.to_string()))?;
    for input in inputs {
        let same = match (std::fs::canonicalize(input), std::fs::canonicalize(path)) {
            (Ok(a), Ok(b)) => a == b,
            _ => std::path::absolute(input).ok().as_deref() == Some(target.as_path()),
        };
        if same {
            return Err(Error::output(path, "refusing to write over an input file"));
        }
    }
    if path.is_dir() {
        return Err(Error::output(path, "is a directory"));
    }
    if path.exists() && !force {
        return Err(Error::output(
            path,
            "already exists; pass --force to replace it",
        ));
    }
    Ok(())
}

/// The temporary file being written right now, so an interrupt can remove it.
static IN_PROGRESS: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Remove the temporary file of a write that an interrupt (SIGINT, SIGTERM) cuts short.
/// Called from the CLI's signal handler; the target itself is only ever renamed into
/// place complete, so nothing else can be partial.
pub fn remove_partial() {
    if let Ok(mut current) = IN_PROGRESS.lock() {
        if let Some(p) = current.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn in_progress(path: Option<PathBuf>) {
    if let Ok(mut current) = IN_PROGRESS.lock() {
        *current = path;
    }
}

/// Write `path` atomically: `fill` writes into a temporary file in the same directory,
/// which is synced and renamed over `path` only when complete. On an error the
/// temporary file is removed (dropped); on an interrupt, by `remove_partial`.
pub fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&File>) -> std::result::Result<(), String>,
) -> Result<()> {
    write_atomic_at(path, |file| {
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        w.flush().map_err(|e| e.to_string())
    })
}

/// `write_atomic` for a writer that buffers itself: `fill` gets the temporary file's open
/// handle (kept, so the file is synced and renamed after).
fn write_atomic_at(
    path: &Path,
    fill: impl FnOnce(&File) -> std::result::Result<(), String>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tracediag-").suffix(".tmp");
    // Outputs are for reading: the usual file mode (0666 less the umask), not the
    // owner-only mode of a temporary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    // Created and recorded under the lock the signal handler takes, so that an interrupt
    // between the two cannot leave the file behind unrecorded.
    let tmp = {
        let mut current = IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner());
        let tmp = builder.tempfile_in(&dir).map_err(|e| {
            Error::output(
                path,
                format!("cannot create a temporary file in {}: {e}", dir.display()),
            )
        })?;
        *current = Some(tmp.path().to_path_buf());
        tmp
    };
    let fail = |e: String| Error::output(path, e);
    let written = fill(tmp.as_file())
        .map_err(fail)
        .and_then(|()| tmp.as_file().sync_all().map_err(|e| fail(e.to_string())));
    let result = written.and_then(|()| {
        // Dropping `tmp` on an error removes the temporary file.
        tmp.persist(path)
            .map(|_| ())
            .map_err(|e| fail(e.error.to_string()))
    });
    in_progress(None);
    result
}

/// Write `df` (already projected to `columns`) to `path` atomically.
pub fn write(df: &mut DataFrame, path: &Path, format: OutFormat) -> Result<()> {
    write_atomic(path, |w| {
        let r = match format {
            OutFormat::Parquet => ParquetWriter::new(w).finish(df).map(|_| ()),
            OutFormat::Csv => CsvWriter::new(w).include_header(true).finish(df),
            OutFormat::JsonLines => JsonWriter::new(w)
                .with_json_format(JsonFormat::JsonLines)
                .finish(df),
        };
        r.map_err(|e| e.to_string())
    })
}

/// Stream the plan's output rows (rows in input order, the output columns only) to `path`
/// with polars' streaming sink, atomically: the per-request frame is never collected, and
/// a failed or interrupted run leaves no output.
pub fn sink(plan: &Plan, rules: &RuleSet, path: &Path, format: OutFormat) -> Result<()> {
    let exprs: Vec<Expr> = columns(rules)
        .iter()
        .map(
            |c| match RULE_COLUMNS.iter().find(|(name, _)| *name == c.as_str()) {
                Some((name, pick)) => rule_column(rules, name, *pick),
                None => output_expr(c, "timestamp", format),
            },
        )
        .collect();
    let lf = plan.lf.clone().select(exprs);
    write_atomic_at(path, |file| {
        // The open handle, not the path: polars opening the path itself could create the
        // file again after an interrupt had removed it, just before the process exits.
        let handle = file.try_clone().map_err(|e| e.to_string())?;
        let target = SpecialEq::new(Arc::new(std::sync::Mutex::new(Some(
            polars::io::utils::file::Writable::Local(handle),
        ))));
        let file_format = match format {
            OutFormat::Parquet => {
                FileWriteFormat::Parquet(Arc::new(ParquetWriteOptions::default()))
            }
            // The temporary file's name is not the target's: no extension check.
            OutFormat::Csv => FileWriteFormat::Csv(CsvWriterOptions {
                check_extension: false,
                ..Default::default()
            }),
            OutFormat::JsonLines => FileWriteFormat::NDJson(NDJsonWriterOptions {
                compression: Default::default(),
                check_extension: false,
            }),
        };
        lf.sink(
            SinkDestination::File {
                target: SinkTarget::Dyn(target),
            },
            file_format,
            UnifiedSinkArgs::default(),
        )
        .and_then(|q| q.collect_with_engine(Engine::Streaming))
        .map(|_| ())
        .map_err(|e| source::polars_message(&e))
    })
}

/// A rule's text for each request, looked up from the class index: one when/then per rule
/// (a handful), evaluated by polars, never a loop over rows.
fn rule_column(rules: &RuleSet, name: &str, pick: RuleText) -> Expr {
    chain(
        rules
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| (col(CLASS_INDEX).eq(lit(i as u32)), lit(pick(r)))),
        lit(NULL).cast(DataType::String),
    )
    .alias(name)
}

/// An output column; in text formats the timestamp column `time_col` becomes ISO 8601
/// with the zone spelled out (`Z`), while Parquet keeps a timestamp tagged UTC (the frame's
/// timestamps are UTC instants held without a zone).
fn output_expr(c: &str, time_col: &str, format: OutFormat) -> Expr {
    if c != time_col {
        col(c)
    } else if format != OutFormat::Parquet {
        col(c).dt().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").alias(c)
    } else {
        col(c)
            .dt()
            .replace_time_zone(Some(TimeZone::UTC), lit("raise"), NonExistent::Raise)
            .alias(c)
    }
}

/// Select `columns` of `frame`; in text formats the timestamp column `time_col` becomes
/// ISO 8601 with the zone spelled out, while Parquet keeps a timestamp.
pub fn select(
    frame: &DataFrame,
    columns: &[String],
    time_col: &str,
    format: OutFormat,
) -> Result<DataFrame> {
    frame
        .clone()
        .lazy()
        .select(
            columns
                .iter()
                .map(|c| output_expr(c, time_col, format))
                .collect::<Vec<_>>(),
        )
        .collect()
        .map_err(|e| Error::Usage(format!("internal: cannot project the output columns: {e}")))
}
