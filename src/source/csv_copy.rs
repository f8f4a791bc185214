//! A CSV log's typed copy made in the same reading of the file as its row check. The check
//! hands over each good record (`rowcheck::Records`); the fields the mapping reads are
//! gathered into columns (numbers parsed as polars' cast parses them, the rest as text),
//! and every `PART_ROWS` rows a second thread applies the canonical projection to them
//! (`canonical::select`, the same projection a copy read through polars' CSV reader gets)
//! and writes them to the temporary Parquet file.
//!
//! The text is then tokenized once, not twice. polars' CSV reader, left out, also finds
//! the line ends of its chunks a byte at a time (its SIMD search needs a nightly compiler):
//! with the row check, it was most of a 10M-request CSV's reading.
//!
//! The copy is used only when the check has handed over every record, as the file is: a
//! file with a bad record, a blank line or a bare CR is read from the check's repaired copy
//! through polars' reader (`typed_copy`), and what was written here is thrown away.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use polars::prelude::*;

use super::canonical::{self, Mapping, Origin, Rows};
use super::rowcheck::Records;
use super::spool::{self, Spooled};
use super::timestamp::Form;
use super::{polars_message, SOURCE_COL};
use crate::error::{Error, Result};

/// Rows per part: the row group the streaming engine's Parquet sink writes by default, so
/// that the copy is read back in morsels of the same size.
pub(super) const PART_ROWS: usize = 122_880;

/// A part of the file's text columns on its way to the writer: its first row's 1-based
/// place in the file, and its columns.
type Part = (IdxSize, DataFrame);

/// The copy being made; see the module doc.
pub struct CsvCopy {
    name: PathBuf,
    /// The fields each record must have (the header's, as polars reads it).
    width: usize,
    /// The record's fields the projection reads as text: their places in the record, and
    /// their columns so far.
    places: Vec<usize>,
    columns: Vec<StringChunkedBuilder>,
    names: Vec<PlSmallStr>,
    /// The numbers it reads parsed (`canonical::parsed_in_part`): their places, and their
    /// values and whether their cells held text, so far.
    numbers: Vec<Number>,
    /// The row of the first record held, and how many are held.
    first: u64,
    held: usize,
    parts: Option<SyncSender<Part>>,
    writer: Option<JoinHandle<PolarsResult<()>>>,
    copy: Arc<Spooled>,
    /// The projection's columns, in order, to read the copy back with.
    order: Vec<Expr>,
}

impl CsvCopy {
    /// Start a copy of the CSV file at `path` (named `name` in messages), whose columns
    /// polars reads as `raw`. `None` where the file is not one this copy serves: a schema
    /// or mapping that cannot be read here (the rest of the run reports why), no timing
    /// field, a column read from inside another.
    pub fn start(path: &Path, name: &Path, raw: &LazyFrame) -> Option<CsvCopy> {
        let schema = raw.clone().collect_schema().ok()?;
        let mapping = super::map_columns(raw, &schema, path).ok()?;
        let parsed = canonical::parsed_in_part(&mapping);
        let mut numbers = vec![];
        for (field, column) in &parsed {
            numbers.push(Number::new(schema.index_of(column)?, field));
        }
        let mut read: BTreeMap<usize, PlSmallStr> = BTreeMap::new();
        let mut timing = false;
        for (field, origin) in mapping.found() {
            timing |= crate::catalogue::field(field).is_some_and(|f| f.kind.is_timing());
            if parsed.iter().any(|(f, _)| *f == field) {
                continue;
            }
            let column = match origin {
                Origin::Column(c) => c.as_str(),
                Origin::JsonString(_) => "other",
                Origin::Nested(_) | Origin::Absent => return None,
            };
            let (place, column, _) = schema.get_full(column)?;
            read.insert(place, column.clone());
        }
        if !timing {
            return None;
        }
        let forms = canonical::timestamp_forms(raw, &mapping);
        let (places, names): (Vec<usize>, Vec<PlSmallStr>) = read.into_iter().unzip();
        let text = Schema::from_iter(
            names
                .iter()
                .map(|n| Field::new(n.clone(), DataType::String)),
        );
        let part = DataFrame::new(
            0,
            text.iter_fields()
                .map(|f| Column::new_empty(f.name, &DataType::String))
                .chain(numbers.iter_mut().flat_map(Number::take))
                .collect(),
        )
        .ok()?;
        let project = Projection {
            text: Arc::new(text),
            mapping,
            name: name.to_path_buf(),
            forms,
        };
        // The projection's columns, from its plan over no rows.
        let order = project.apply(part, 1).collect_schema().ok()?;
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
        let writer = std::thread::spawn(move || write_parts(received, project, writer));
        Some(CsvCopy {
            name: name.to_path_buf(),
            width: schema.len(),
            columns: names
                .iter()
                .map(|n| StringChunkedBuilder::new(n.clone(), PART_ROWS))
                .collect(),
            places,
            names,
            numbers,
            first: 1,
            held: 0,
            parts: Some(parts),
            writer: Some(writer),
            copy,
            order: order.iter_names().map(|n| col(n.clone())).collect(),
        })
    }

    /// The copy, once the check has handed over every record: read back as the canonical
    /// rows, with the temporary file that holds them.
    pub fn finish(mut self) -> Result<(LazyFrame, Arc<Spooled>)> {
        self.send()?;
        self.parts = None;
        self.join()?;
        let lf = super::scan_copy(&self.copy, &self.name, std::mem::take(&mut self.order))?;
        Ok((lf, self.copy.clone()))
    }

    /// Hand the rows held to the writer.
    fn send(&mut self) -> Result<()> {
        if self.held == 0 {
            return Ok(());
        }
        let columns = self
            .columns
            .iter_mut()
            .zip(&self.names)
            .map(|(b, n)| {
                std::mem::replace(b, StringChunkedBuilder::new(n.clone(), PART_ROWS))
                    .finish()
                    .into_column()
            })
            .chain(self.numbers.iter_mut().flat_map(Number::take))
            .collect();
        let part = DataFrame::new(self.held, columns).map_err(|e| self.error(&e))?;
        let first = IdxSize::try_from(self.first).map_err(|_| {
            Error::input(
                &self.name,
                format!("more rows than polars numbers ({})", IdxSize::MAX),
            )
        })?;
        self.held = 0;
        let sent = self.parts.as_ref().map(|p| p.send((first, part)));
        if matches!(sent, Some(Err(_))) {
            // The writer stopped: its error says why.
            self.parts = None;
            return self.join();
        }
        Ok(())
    }

    /// Wait for the writer to end (every part sent has been written, and the footer).
    fn join(&mut self) -> Result<()> {
        match self.writer.take().map(JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(self.error(&e)),
            Some(Err(_)) => Err(Error::input(
                &self.name,
                "the typed copy's writer stopped unexpectedly".to_string(),
            )),
        }
    }

    fn error(&self, e: &PolarsError) -> Error {
        Error::input(
            &self.name,
            format!("cannot read the request log: {}", polars_message(e)),
        )
    }
}

impl Records for CsvCopy {
    fn header(&mut self, header: &[String]) -> bool {
        // Its fields are the columns polars names, place for place.
        header.len() == self.width
    }

    fn record(&mut self, row: u64, record: &csv::ByteRecord) -> Result<()> {
        if self.held == 0 {
            self.first = row;
        }
        // The check has found the record UTF-8, each field starting on a character.
        let text = std::str::from_utf8(record.as_slice()).ok();
        let cell = |place: usize| {
            record
                .range(place)
                .and_then(|r| text.and_then(|t| t.get(r)))
        };
        for (place, column) in self.places.iter().zip(&mut self.columns) {
            match cell(*place) {
                // An empty field is null, as polars' reader reads it.
                None | Some("") => column.append_null(),
                Some(v) => column.append_value(v),
            }
        }
        for number in &mut self.numbers {
            let (present, value) = cell(number.place).map_or((false, None), canonical::read_number);
            number.values.append_option(value);
            number.present.append_value(present);
        }
        self.held += 1;
        if self.held == PART_ROWS {
            self.send()?;
        }
        Ok(())
    }
}

impl Drop for CsvCopy {
    fn drop(&mut self) {
        // A copy not finished (the file needs its repaired copy, or the run stopped): the
        // writer is let go of before its file is removed.
        self.parts = None;
        let _ = self.writer.take().map(JoinHandle::join);
    }
}

/// A number the copy reads parsed: its place in the record, and its two columns so far.
struct Number {
    place: usize,
    field: String,
    values: PrimitiveChunkedBuilder<Float64Type>,
    present: BooleanChunkedBuilder,
}

impl Number {
    fn new(place: usize, field: &str) -> Number {
        Number {
            place,
            field: field.to_string(),
            values: PrimitiveChunkedBuilder::new(canonical::parsed(field).into(), PART_ROWS),
            present: BooleanChunkedBuilder::new(canonical::present(field).into(), PART_ROWS),
        }
    }

    /// Its columns so far, the builders left empty.
    fn take(&mut self) -> [Column; 2] {
        let Number {
            values, present, ..
        } = std::mem::replace(self, Number::new(self.place, &self.field));
        [
            values.finish().into_column(),
            present.finish().into_column(),
        ]
    }
}

/// What the writer applies to each part.
struct Projection {
    /// The text columns a part has.
    text: Arc<Schema>,
    mapping: Mapping,
    name: PathBuf,
    forms: Vec<Form>,
}

impl Projection {
    fn apply(&self, part: DataFrame, first: IdxSize) -> LazyFrame {
        canonical::select(
            part.lazy(),
            &self.text,
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

/// The writer's thread: each part projected and written as a row group, then the footer.
fn write_parts(
    parts: Receiver<Part>,
    project: Projection,
    mut writer: polars::io::parquet::write::BatchedWriter<File>,
) -> PolarsResult<()> {
    for (first, part) in parts {
        // In memory: a part is a few megabytes, and its plan runs once.
        let mut rows = project
            .apply(part, first)
            .drop(by_name([SOURCE_COL], true, false))
            .collect()?;
        // One row group per part: the writer writes each chunk as one.
        rows.rechunk_mut_par();
        writer.write_batch(&rows)?;
    }
    writer.finish()?;
    Ok(())
}
