//! The values a copy made beside the JSON-lines check reads (`source::copy::jsonl`): the
//! check hands each value of a wanted key to a `Gather` as it parses the row, so the row
//! is parsed once for both.
//!
//! Each wanted key has the column type polars would read it as (`Want`), from the types the
//! copy expects. A value of another JSON type spoils the gather: polars would read such a
//! column otherwise (a number in a text column as its JSON text), and the copy is then not
//! used. The check's own types say so too, so the copy is also checked against them at the
//! end.

use std::collections::HashMap;
use std::sync::Arc;

use polars::prelude::*;

use super::types::Place;

/// The column type a wanted key is gathered as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// JSON integers (an `Int64` column).
    Int,
    /// JSON numbers, integers converted (a `Float64` column).
    Float,
    /// JSON booleans.
    Bool,
    /// JSON strings, unescaped.
    Text,
    /// Nothing but nulls (a `Null` column).
    Null,
}

/// The keys a copy reads, where each sits in a row, and the column each is gathered into.
#[derive(Debug, Clone, Default)]
pub struct Wanted {
    keys: [Keys; 3],
    /// Each column's type, in column order.
    wants: Vec<Want>,
}

type Keys = HashMap<String, usize, foldhash::fast::FixedState>;

fn slot(place: Place) -> usize {
    match place {
        Place::Top => 0,
        Place::OtherTiming => 1,
        Place::Timing => 2,
    }
}

impl Wanted {
    /// Gather `key` at `place` as `want`; returns its column.
    pub fn add(&mut self, place: Place, key: &str, want: Want) -> usize {
        let column = self.wants.len();
        self.keys[slot(place)].insert(key.to_string(), column);
        self.wants.push(want);
        column
    }

    fn column(&self, place: Place, key: &str) -> Option<usize> {
        let keys = &self.keys[slot(place)];
        if keys.is_empty() {
            return None;
        }
        keys.get(key).copied()
    }
}

/// One column's values so far.
enum Values {
    Int(PrimitiveChunkedBuilder<Int64Type>),
    Float(PrimitiveChunkedBuilder<Float64Type>),
    Bool(BooleanChunkedBuilder),
    Text(StringChunkedBuilder),
    Null,
}

/// The wanted values of a run of rows, as columns.
pub struct Gather {
    wanted: Arc<Wanted>,
    columns: Vec<(Values, usize)>,
    /// Rows begun.
    rows: usize,
    /// A value polars would read otherwise than gathered: the gather cannot be used.
    spoiled: bool,
}

/// A JSON scalar as the check meets it.
pub(super) enum Scalar<'a> {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(&'a str),
}

impl Gather {
    pub fn new(wanted: &Arc<Wanted>, capacity: usize) -> Gather {
        let columns = wanted
            .wants
            .iter()
            .map(|w| {
                let values = match w {
                    Want::Int => Values::Int(PrimitiveChunkedBuilder::new("".into(), capacity)),
                    Want::Float => Values::Float(PrimitiveChunkedBuilder::new("".into(), capacity)),
                    Want::Bool => Values::Bool(BooleanChunkedBuilder::new("".into(), capacity)),
                    Want::Text => Values::Text(StringChunkedBuilder::new("".into(), capacity)),
                    Want::Null => Values::Null,
                };
                (values, 0)
            })
            .collect();
        Gather {
            wanted: wanted.clone(),
            columns,
            rows: 0,
            spoiled: false,
        }
    }

    /// The column `key` at `place` is gathered into, if it is wanted.
    pub(super) fn column(&self, place: Place, key: &str) -> Option<usize> {
        self.wanted.column(place, key)
    }

    /// A new row begins: the values given next are its own.
    pub(super) fn begin_row(&mut self) {
        self.rows += 1;
    }

    /// The row's value of `column`.
    pub(super) fn value(&mut self, column: usize, value: Scalar<'_>) {
        let row = self.rows;
        let (values, len) = &mut self.columns[column];
        if *len + 1 != row {
            if *len >= row {
                // A second value in one row: a key given twice, a row the check finds bad.
                self.spoiled = true;
                return;
            }
            // Rows without a value before this one.
            pad(values, len, row - 1);
        }
        let fits = match (&mut *values, value) {
            (Values::Int(b), Scalar::Int(v)) => {
                b.append_value(v);
                true
            }
            (Values::Float(b), Scalar::Int(v)) => {
                // As polars' reader converts an integer into a float column.
                b.append_value(v as f64);
                true
            }
            (Values::Float(b), Scalar::Float(v)) => {
                b.append_value(v);
                true
            }
            (Values::Bool(b), Scalar::Bool(v)) => {
                b.append_value(v);
                true
            }
            (Values::Text(b), Scalar::Text(v)) => {
                b.append_value(v);
                true
            }
            _ => false,
        };
        if fits {
            *len += 1;
        } else {
            self.spoiled = true;
        }
    }

    /// A value polars would read otherwise than the gather can (an object where text is
    /// gathered, say).
    pub(super) fn spoil(&mut self) {
        self.spoiled = true;
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn spoiled(&self) -> bool {
        self.spoiled
    }

    /// The columns, in the order they were wanted, each `rows` long (null where a row had
    /// no value).
    pub fn finish(self) -> Vec<Series> {
        let rows = self.rows;
        self.columns
            .into_iter()
            .map(|(mut values, mut len)| {
                pad(&mut values, &mut len, rows);
                match values {
                    Values::Int(b) => b.finish().into_series(),
                    Values::Float(b) => b.finish().into_series(),
                    Values::Bool(b) => b.finish().into_series(),
                    Values::Text(b) => b.finish().into_series(),
                    Values::Null => Series::full_null("".into(), rows, &DataType::Null),
                }
            })
            .collect()
    }
}

/// Nulls until the column holds `to` values.
fn pad(values: &mut Values, len: &mut usize, to: usize) {
    while *len < to {
        match values {
            Values::Int(b) => b.append_null(),
            Values::Float(b) => b.append_null(),
            Values::Bool(b) => b.append_null(),
            Values::Text(b) => b.append_null(),
            Values::Null => {}
        }
        *len += 1;
    }
}
