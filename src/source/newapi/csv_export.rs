//! A CSV export of new-api's `logs` table read in its row check's own reading, straight
//! into its typed copy: the check hands over each good record (`rowcheck::Records`), its
//! fields of [`super::KEYS`] become a row as a JSON line's do (every value text, as polars
//! reads a CSV export's columns), `other` is decoded once, and the adapter's columns are
//! built as in `lines` and handed to the copy's writer.
//!
//! This replaces polars' reading of the file beside the check, the count of the rows left
//! out and the decoding of `other` in the projection. The copy is used only when the check
//! found every record good (a bad record, a blank line or a header it cannot read sends
//! the file through polars' reader, which the check's repaired copy feeds).

use std::borrow::Cow;
use std::path::Path;

use polars::prelude::*;

use super::lines::{adapter_mapping, present_only, Part, Read, Tally};
use super::row::{self, Cell, Row, OTHER, REQUEST_TIMING};
use super::KEYS;
use crate::error::Result;
use crate::source::copy::{Writer, PART_ROWS};
use crate::source::rowcheck::Records;

/// The copy being made; see the module documentation.
pub struct CsvCopy {
    /// Where each key of [`KEYS`] is in a record.
    places: [Option<usize>; KEYS.len()],
    part: Part,
    /// The row of the part's first record, and the rows handed over so far.
    first: u64,
    rows: u64,
    tally: Tally,
    /// A record it cannot read as the slow reading does: the copy will not be used.
    spoiled: bool,
    writer: Writer,
    mapping: crate::source::canonical::Mapping,
}

impl CsvCopy {
    /// Start a copy of the CSV export at `path` (named `name` in messages); none where its
    /// projection cannot be planned here.
    pub fn start(path: &Path, name: &Path) -> Result<Option<CsvCopy>> {
        let Some(mapping) = adapter_mapping(path)? else {
            return Ok(None);
        };
        let Some(writer) = Writer::start(name, Part::new(0).frame()?, mapping.clone(), vec![])
        else {
            return Ok(None);
        };
        Ok(Some(CsvCopy {
            places: [None; KEYS.len()],
            part: Part::new(PART_ROWS),
            first: 1,
            rows: 0,
            tally: Tally::default(),
            spoiled: false,
            writer,
            mapping,
        }))
    }

    /// Hand the rows held to the writer.
    fn send(&mut self) -> Result<()> {
        let part = std::mem::replace(&mut self.part, Part::new(PART_ROWS));
        if part.kept.is_empty() {
            return Ok(());
        }
        self.tally.add(&part.tally);
        let kept =
            (part.tally.left_out > 0).then(|| BooleanChunked::from_slice("".into(), &part.kept));
        let first = self.first;
        self.first += part.kept.len() as u64;
        self.writer.send_kept(first, part.frame()?, kept)
    }

    /// The copy, once the check has handed over every record and found them all good.
    pub fn finish(mut self) -> Result<Option<Read>> {
        if self.spoiled || self.rows == 0 {
            return Ok(None);
        }
        self.send()?;
        let (lf, copy) = self.writer.finish()?;
        Ok(Some(Read {
            lf,
            copy,
            mapping: present_only(self.mapping, self.tally.present),
            rows: self.rows,
            notes: super::notes(self.tally.left_out, self.tally.logged, self.tally.relay),
        }))
    }

    /// The record's row as a JSON line's: its fields as text, `other` and the bare
    /// `request_timing` decoded; none where one is not UTF-8 or `other` not a JSON object.
    fn row<'a>(&self, record: &'a ::csv::ByteRecord) -> Option<Row<'a>> {
        let text = |i: usize| -> Option<Option<&'a str>> {
            match self.places[i].and_then(|p| record.get(p)) {
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
}

impl Records for CsvCopy {
    fn header(&mut self, header: &[String]) -> bool {
        for (i, key) in KEYS.iter().enumerate() {
            self.places[i] = header.iter().position(|h| h == key);
        }
        true
    }

    fn record(&mut self, row: u64, record: &::csv::ByteRecord) -> Result<()> {
        if self.spoiled {
            return Ok(());
        }
        // Records come one after the other; a gap is a record the check left to the slow
        // reading.
        if row != self.rows + 1 {
            self.spoiled = true;
            return Ok(());
        }
        let Some(parsed) = self.row(record) else {
            self.spoiled = true;
            return Ok(());
        };
        self.part.push(&parsed);
        self.rows += 1;
        if self.part.kept.len() >= PART_ROWS {
            self.send()?;
        }
        Ok(())
    }
}
