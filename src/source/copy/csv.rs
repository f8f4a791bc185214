//! A CSV log's copy made in its row check's reading: the check hands over each good record
//! (`rowcheck::Records`), and the fields the mapping reads are gathered into columns
//! (numbers parsed as polars' cast parses them, the rest as text), handed to the writer
//! every `PART_ROWS` rows.

use std::collections::BTreeMap;
use std::path::Path;

use polars::prelude::*;

use super::{Writer, PART_ROWS};
use crate::error::Result;
use crate::source::canonical::{self, Origin};
use crate::source::rowcheck::Records;

/// The copy being made; see the module doc.
pub struct CsvCopy {
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
    writer: Writer,
}

impl CsvCopy {
    /// Start a copy of the CSV file at `path` (named `name` in messages), whose columns
    /// polars reads as `raw`. `None` where the file is not one this copy serves: a schema
    /// or mapping that cannot be read here (the rest of the run reports why), no timing
    /// field, a column read from inside another.
    pub fn start(path: &Path, name: &Path, raw: &LazyFrame) -> Option<CsvCopy> {
        let schema = raw.clone().collect_schema().ok()?;
        let mapping = crate::source::map_columns(raw, &schema, path).ok()?;
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
                Origin::Nested(_) | Origin::JsonPath { .. } | Origin::Absent => return None,
            };
            let (place, column, _) = schema.get_full(column)?;
            read.insert(place, column.clone());
        }
        if !timing {
            return None;
        }
        let forms = canonical::timestamp_forms(raw, &mapping);
        let (places, names): (Vec<usize>, Vec<PlSmallStr>) = read.into_iter().unzip();
        let empty = DataFrame::new(
            0,
            names
                .iter()
                .map(|n| Column::new_empty(n.clone(), &DataType::String))
                .chain(numbers.iter_mut().flat_map(Number::take))
                .collect(),
        )
        .ok()?;
        let writer = Writer::start(name, empty, mapping, forms)?;
        Some(CsvCopy {
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
            writer,
        })
    }

    /// The copy, once the check has handed over every record: read back as the canonical
    /// rows, with the temporary file that holds them.
    pub fn finish(mut self) -> Result<(LazyFrame, std::sync::Arc<crate::source::spool::Spooled>)> {
        self.send()?;
        self.writer.finish()
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
        let part = DataFrame::new(self.held, columns).map_err(|e| self.writer.error(&e))?;
        self.held = 0;
        self.writer.send(self.first, part)
    }
}

impl Records for CsvCopy {
    fn header(&mut self, header: &[String]) -> bool {
        // Its fields are the columns polars names, place for place.
        header.len() == self.width
    }

    fn record(&mut self, row: u64, record: &::csv::ByteRecord) -> Result<()> {
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
