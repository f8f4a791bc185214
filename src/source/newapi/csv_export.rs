//! A CSV export of new-api's `logs` table read in its row check's own reading, straight
//! into its typed copy: the check hands over each good record (`rowcheck::Records`), its
//! fields of [`super::KEYS`] become a row as a JSON line's do (every value text, as polars
//! reads a CSV export's columns), `other` is decoded once, and the adapter's columns are
//! built as in `lines` and handed to the copy's writer. The rows are built on a thread of
//! their own, beside the check (which runs on one thread), a batch of records at a time.
//!
//! This replaces polars' reading of the file beside the check, the count of the rows left
//! out and the decoding of `other` in the projection. The copy is used only when the check
//! found every record good (a bad record, a blank line or a header it cannot read sends
//! the file through polars' reader, which the check's repaired copy feeds).

use std::borrow::Cow;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::lines::{Copying, Part, Read};
use super::row::{self, Cell, Row, OTHER, REQUEST_TIMING};
use super::KEYS;
use crate::error::{Error, Result};
use crate::source::copy::PART_ROWS;
use crate::source::rowcheck::Records;

/// Records handed to the builder at a time.
const BATCH: usize = 4096;

/// Where each key of [`KEYS`] is in a record.
type Places = [Option<usize>; KEYS.len()];

/// What the builder made: the copy, and whether a record spoiled it.
type Built = Result<(Copying, bool)>;

/// The copy being made; see the module documentation.
pub struct CsvCopy {
    name: std::path::PathBuf,
    /// The copy, until the header says where the keys are and the builder takes it.
    copying: Option<Copying>,
    batch: Vec<::csv::ByteRecord>,
    batches: Option<SyncSender<Vec<::csv::ByteRecord>>>,
    builder: Option<JoinHandle<Built>>,
    /// Records handed over so far.
    rows: u64,
    /// A record out of turn (one the check left to the slow reading).
    spoiled: bool,
}

impl CsvCopy {
    /// Start a copy of the CSV export at `path` (named `name` in messages); none where its
    /// projection cannot be planned here.
    pub fn start(path: &Path, name: &Path) -> Result<Option<CsvCopy>> {
        let Some(copying) = Copying::start(path, name)? else {
            return Ok(None);
        };
        Ok(Some(CsvCopy {
            name: name.to_path_buf(),
            copying: Some(copying),
            batch: Vec::with_capacity(BATCH),
            batches: None,
            builder: None,
            rows: 0,
            spoiled: false,
        }))
    }

    /// The copy, once the check has handed over every record and found them all good.
    pub fn finish(mut self) -> Result<Option<Read>> {
        self.hand_over();
        self.batches = None;
        let Some(builder) = self.builder.take() else {
            return Ok(None);
        };
        let (copying, spoiled) = builder.join().map_err(|_| {
            Error::input(&self.name, "the typed copy's builder stopped unexpectedly")
        })??;
        if spoiled || self.spoiled || self.rows == 0 {
            return Ok(None);
        }
        copying.finish(self.rows).map(Some)
    }

    /// Hand the batch held to the builder.
    fn hand_over(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        if let Some(b) = &self.batches {
            // A builder that stopped has its error, which `finish` returns.
            let _ = b.send(batch);
        }
    }
}

impl Records for CsvCopy {
    fn header(&mut self, header: &[String]) -> bool {
        let mut places: Places = [None; KEYS.len()];
        for (i, key) in KEYS.iter().enumerate() {
            places[i] = header.iter().position(|h| h == key);
        }
        let Some(copying) = self.copying.take() else {
            return false;
        };
        // Two batches wait at most: the check does not run ahead of the builder by more.
        let (batches, received) = sync_channel(2);
        self.batches = Some(batches);
        self.builder = Some(std::thread::spawn(move || build(received, places, copying)));
        true
    }

    fn vouches_for_other(&mut self, other: &str) -> bool {
        super::scan::other_string(other).is_some()
    }

    fn record(&mut self, row: u64, record: &::csv::ByteRecord) -> Result<()> {
        // Records come one after the other; a gap is a record the check left to the slow
        // reading.
        if row != self.rows + 1 {
            self.spoiled = true;
        }
        if self.spoiled {
            return Ok(());
        }
        self.batch.push(record.clone());
        self.rows += 1;
        if self.batch.len() >= BATCH {
            self.hand_over();
        }
        Ok(())
    }
}

/// The builder's thread: each record's row pushed onto a part, every `PART_ROWS` rows
/// handed to the writer (the rows numbered from 1, in the order received).
fn build(batches: Receiver<Vec<::csv::ByteRecord>>, places: Places, mut copying: Copying) -> Built {
    let mut part = Part::new(PART_ROWS);
    let mut first = 1u64;
    for batch in batches {
        for record in &batch {
            let Some(parsed) = row_of(&places, record) else {
                // The rest is not read: the copy will not be used.
                return Ok((copying, true));
            };
            part.push(&parsed);
            if part.kept.len() >= PART_ROWS {
                let full = std::mem::replace(&mut part, Part::new(PART_ROWS));
                first = copying.send(first, full)?;
            }
        }
    }
    if !part.kept.is_empty() {
        copying.send(first, part)?;
    }
    Ok((copying, false))
}

/// The record's row as a JSON line's: its fields as text, `other` and the bare
/// `request_timing` decoded; none where one is not UTF-8 or `other` not a JSON object.
fn row_of<'a>(places: &Places, record: &'a ::csv::ByteRecord) -> Option<Row<'a>> {
    let text = |i: usize| -> Option<Option<&'a str>> {
        match places[i].and_then(|p| record.get(p)) {
            None => Some(None),
            Some(bytes) => std::str::from_utf8(bytes).ok().map(Some),
        }
    };
    let mut row = Row::default();
    for i in 0..OTHER {
        if let Some(t) = text(i)? {
            row.cells[i] = Cell::Text(Cow::Borrowed(t));
        }
    }
    row.other = match text(OTHER)? {
        Some(t) => row::parse_other(t).ok()?,
        None => None,
    };
    row.bare = text(REQUEST_TIMING)?.and_then(row::parse_timing);
    Some(row)
}
