//! A text log's typed copy made in the same reading of the file as its row check: a CSV
//! log's (`csv`) and a JSON-lines log's (`jsonl`). The check hands over the fields the
//! mapping reads, gathered into columns; a second thread applies the canonical projection
//! to each part of about `PART_ROWS` rows (`canonical::select`, the same projection a copy
//! read through polars' reader gets) and writes it to the temporary Parquet file as one
//! row group (`Writer`).
//!
//! The text is then tokenized once, not twice: polars' readers, left out, were most of a
//! 10M-request log's reading beside the check (CSV: its line search a byte at a time, built
//! without the nightly-only SIMD; JSON lines: a second parse of every line).
//!
//! A copy is used only when the check has handed over every row as the file is: a file
//! with a bad row is read from the check's repaired copy through polars' reader
//! (`typed_copy`), and what was written here is thrown away.

pub mod csv;
pub mod jsonl;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use polars::prelude::*;

use super::canonical::{self, Mapping, Rows};
use super::spool::{self, Spooled};
use super::timestamp::Form;
use super::{polars_message, SOURCE_COL};
use crate::error::{Error, Result};

/// Rows per row group of a copy: the row group the streaming engine's Parquet sink writes
/// by default, so that the copy is read back in morsels of the same size.
pub(crate) const PART_ROWS: usize = 122_880;

/// A part of the file's columns on its way to the writer: its first row's 1-based place in
/// the file, its columns, and which of its rows are written (all, without one).
type Part = (IdxSize, DataFrame, Option<BooleanChunked>);

/// What the writer applies to each part.
struct Projection {
    /// The columns a part has.
    schema: Arc<Schema>,
    mapping: Mapping,
    name: PathBuf,
    forms: Vec<Form>,
}

impl Projection {
    fn apply(&self, part: DataFrame, first: IdxSize) -> LazyFrame {
        canonical::select(
            part.lazy(),
            &self.schema,
            &self.mapping,
            &self.name,
            &[],
            &[],
            Rows::Part {
                first,
                forms: &self.forms,
            },
        )
    }
}

/// The thread writing a copy, and the file it writes.
pub(super) struct Writer {
    name: PathBuf,
    parts: Option<SyncSender<Part>>,
    thread: Option<JoinHandle<PolarsResult<()>>>,
    copy: Arc<Spooled>,
    /// The projection's columns, in order, to read the copy back with.
    order: Vec<Expr>,
}

impl Writer {
    /// Start writing the copy of the file named `name`, whose parts have the columns of
    /// `empty` (a part of no rows) and are projected with `mapping` and the timestamp's
    /// `forms` (`canonical::timestamp_forms` of the whole file). `None` where the
    /// projection of such parts cannot be planned, or no temporary file made.
    pub(super) fn start(
        name: &Path,
        empty: DataFrame,
        mapping: Mapping,
        forms: Vec<Form>,
    ) -> Option<Writer> {
        let project = Projection {
            schema: Arc::new(empty.schema().as_ref().clone()),
            mapping,
            name: name.to_path_buf(),
            forms,
        };
        // The projection's columns, from its plan over no rows.
        let order = project.apply(empty, 1).collect_schema().ok()?;
        let written: Schema = order
            .iter()
            .filter(|(n, _)| n.as_str() != SOURCE_COL)
            .map(|(n, d)| Field::new(n.clone(), d.clone()))
            .collect();
        let (file, copy) = spool::scratch(name, ".parquet").ok()?;
        let writer = ParquetWriter::new(file)
            // LZ4: fast to write and to read back; the copy lives for one run.
            .with_compression(ParquetCompression::Lz4Raw)
            .batched(&written)
            .ok()?;
        // Two parts wait at most: the check does not run ahead of the writer by more.
        let (parts, received) = sync_channel(2);
        let thread = std::thread::spawn(move || write_parts(received, project, writer));
        Some(Writer {
            name: name.to_path_buf(),
            parts: Some(parts),
            thread: Some(thread),
            copy,
            order: order.iter_names().map(|n| col(n.clone())).collect(),
        })
    }

    /// Hand the rows of `part`, the first of them the file's row `first` (1-based), to the
    /// writer.
    pub(super) fn send(&mut self, first: u64, part: DataFrame) -> Result<()> {
        self.send_kept(first, part, None)
    }

    /// As `send`, writing only the rows `kept` says: the rows left out still count in the
    /// places of the rows after them (a new-api log's top-up rows, say).
    pub(super) fn send_kept(
        &mut self,
        first: u64,
        part: DataFrame,
        kept: Option<BooleanChunked>,
    ) -> Result<()> {
        let first = IdxSize::try_from(first).map_err(|_| {
            Error::input(
                &self.name,
                format!("more rows than polars numbers ({})", IdxSize::MAX),
            )
        })?;
        let sent = self.parts.as_ref().map(|p| p.send((first, part, kept)));
        if matches!(sent, Some(Err(_))) {
            // The writer stopped: its error says why.
            self.parts = None;
            return self.join();
        }
        Ok(())
    }

    /// The copy, once every part is sent: read back as the canonical rows, with the
    /// temporary file that holds them.
    pub(super) fn finish(mut self) -> Result<(LazyFrame, Arc<Spooled>)> {
        self.parts = None;
        self.join()?;
        let lf = super::scan_copy(&self.copy, &self.name, std::mem::take(&mut self.order))?;
        Ok((lf, self.copy.clone()))
    }

    /// Wait for the writer to end (every part sent has been written, and the footer).
    fn join(&mut self) -> Result<()> {
        match self.thread.take().map(JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(self.error(&e)),
            Some(Err(_)) => Err(Error::input(
                &self.name,
                "the typed copy's writer stopped unexpectedly".to_string(),
            )),
        }
    }

    pub(super) fn error(&self, e: &PolarsError) -> Error {
        Error::input(
            &self.name,
            format!("cannot read the request log: {}", polars_message(e)),
        )
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // A copy not finished (the file needs its repaired copy, or the run stopped): the
        // writer is let go of before its file is removed.
        self.parts = None;
        let _ = self.thread.take().map(JoinHandle::join);
    }
}

/// Which rows of two parts stacked are written, from each part's (none: all of its
/// `rows`).
pub(super) fn stack_kept(
    a: Option<BooleanChunked>,
    a_rows: usize,
    b: Option<BooleanChunked>,
    b_rows: usize,
) -> PolarsResult<Option<BooleanChunked>> {
    if a.is_none() && b.is_none() {
        return Ok(None);
    }
    let all = |n: usize| BooleanChunked::full("".into(), true, n);
    let mut a = a.unwrap_or_else(|| all(a_rows));
    a.append(&b.unwrap_or_else(|| all(b_rows)))?;
    Ok(Some(a))
}

/// The writer's thread: parts gathered until they hold `PART_ROWS` rows, then projected
/// and written as one row group; the footer at the end.
fn write_parts(
    parts: Receiver<Part>,
    project: Projection,
    mut writer: polars::io::parquet::write::BatchedWriter<File>,
) -> PolarsResult<()> {
    let write = |writer: &mut polars::io::parquet::write::BatchedWriter<File>,
                 (first, part, kept): Part|
     -> PolarsResult<()> {
        // In memory: a part is a few megabytes, and its plan runs once.
        let mut rows = project
            .apply(part, first)
            .drop(by_name([SOURCE_COL], true, false))
            .collect()?;
        if let Some(kept) = kept {
            rows = rows.filter(&kept)?;
        }
        // One row group per part: the writer writes each chunk as one.
        rows.rechunk_mut_par();
        writer.write_batch(&rows)
    };
    let mut held: Option<Part> = None;
    for (first, part, kept) in parts {
        held = Some(match held.take() {
            None => (first, part, kept),
            Some((start, mut rows, held_kept)) => {
                let kept = stack_kept(held_kept, rows.height(), kept, part.height())?;
                rows.vstack_mut_owned(part)?;
                (start, rows, kept)
            }
        });
        if let Some(part) = held.take_if(|(_, rows, _)| rows.height() >= PART_ROWS) {
            write(&mut writer, part)?;
        }
    }
    if let Some(part) = held {
        write(&mut writer, part)?;
    }
    writer.finish()?;
    Ok(())
}
