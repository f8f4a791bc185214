//! The JSON types each key tracediag reads held across a file's rows, and the polars
//! schema made from them. polars' own inference reads the whole file once more and then
//! fails the whole file where rows disagree in ways no single row shows: a boolean in one
//! row and a number in another, a list in one row and a number in another (even under a
//! key tracediag never reads), an object with a key given twice anywhere. Given a schema
//! that names only the keys the mapping can read, polars reads those and ignores the rest.

use std::collections::HashMap;

use polars::prelude::{DataType, Field, Schema};

/// One bit per JSON type a key was seen holding.
pub(super) const NULL: u8 = 1;
pub(super) const BOOL: u8 = 2;
pub(super) const INT: u8 = 4;
pub(super) const FLOAT: u8 = 8;
pub(super) const TEXT: u8 = 16;
pub(super) const OBJECT: u8 = 32;

/// Where a key sits in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A top-level key (as the file spells it: polars matches column names exactly).
    Top,
    /// A key of `other.timing`, whether `other` is an object or a JSON string of one.
    OtherTiming,
    /// A key of a top-level `timing` object.
    Timing,
}

/// The JSON types seen per key, for the keys the mapping can read: catalogue fields and
/// their aliases, `other`, `timing`, and the timing fields nested in them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Types {
    top: Keys,
    other_timing: Keys,
    timing: Keys,
}

/// Types by key. Looked up for every read key of every row, so hashed with foldhash (keys
/// are short; SipHash was 9 % of the JSON-lines check); sorted where the schema is made.
type Keys = HashMap<String, u8, foldhash::fast::FixedState>;

/// A map's keys in order, for a schema the same on every run.
fn sorted(map: &Keys) -> Vec<(&String, &u8)> {
    let mut keys: Vec<_> = map.iter().collect();
    keys.sort_unstable();
    keys
}

impl Types {
    fn map(&mut self, place: Place) -> &mut Keys {
        match place {
            Place::Top => &mut self.top,
            Place::OtherTiming => &mut self.other_timing,
            Place::Timing => &mut self.timing,
        }
    }

    /// Note that `key` held a value of the types in `bits`.
    pub(super) fn record(&mut self, place: Place, key: &str, bits: u8) {
        let map = self.map(place);
        // Called for every read key of every row: allocate only for a key not seen yet.
        match map.get_mut(key) {
            Some(b) => *b |= bits,
            None => {
                map.insert(key.to_string(), bits);
            }
        }
    }

    /// The types a top-level key was seen holding (0: never seen).
    fn top(&self, key: &str) -> u8 {
        self.top.get(key).copied().unwrap_or(0)
    }

    pub(super) fn merge(&mut self, other: Types) {
        for (place, map) in [
            (Place::Top, other.top),
            (Place::OtherTiming, other.other_timing),
            (Place::Timing, other.timing),
        ] {
            for (k, bits) in map {
                self.record(place, &k, bits);
            }
        }
    }

    /// `other` is an object in some rows and a JSON string in others: one column cannot be
    /// both, so the rows holding a string are rewritten to hold the object it encodes.
    /// (When no row's `other` holds a timing field, polars never reads it: no rewrite.)
    pub fn other_is_mixed(&self) -> bool {
        let bits = self.top("other");
        bits & OBJECT != 0 && bits & TEXT != 0 && !self.other_timing.is_empty()
    }

    /// The schema polars reads with: one column per key seen, typed by what it held
    /// (mixed types read as text, which the mapping parses and counts where it cannot).
    /// `other` is a string column when it only ever held strings, else a struct of its
    /// `timing`; a `timing` or `other` that never held a timing field is left out.
    pub fn schema(&self) -> Schema {
        let nested = |map: &Keys| {
            DataType::Struct(
                sorted(map)
                    .into_iter()
                    .map(|(k, bits)| Field::new(k.as_str().into(), scalar(*bits)))
                    .collect(),
            )
        };
        let mut fields = vec![];
        for (key, bits) in sorted(&self.top) {
            let dtype = match key.as_str() {
                "other" if bits & TEXT != 0 && bits & OBJECT == 0 => DataType::String,
                "other" if self.other_timing.is_empty() => continue,
                "other" => DataType::Struct(vec![Field::new(
                    "timing".into(),
                    nested(&self.other_timing),
                )]),
                "timing" if self.timing.is_empty() => continue,
                "timing" => nested(&self.timing),
                _ => scalar(*bits),
            };
            fields.push(Field::new(key.as_str().into(), dtype));
        }
        Schema::from_iter(fields)
    }
}

/// The column type for a scalar key: its one type, a float for integers mixed with floats,
/// and text for any other mix (polars writes numbers and booleans as their JSON text).
fn scalar(bits: u8) -> DataType {
    match bits & !NULL {
        0 => DataType::Null,
        BOOL => DataType::Boolean,
        INT => DataType::Int64,
        b if b & !(INT | FLOAT) == 0 => DataType::Float64,
        _ => DataType::String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_types_read_as_text_and_numbers_as_numbers() {
        let mut t = Types::default();
        t.record(Place::Top, "is_stream", BOOL);
        t.record(Place::Top, "is_stream", INT);
        t.record(Place::Top, "status", INT | NULL);
        t.record(Place::Top, "first_response_ms", INT);
        t.record(Place::Top, "first_response_ms", FLOAT);
        t.record(Place::Top, "model", NULL);
        let s = t.schema();
        assert_eq!(s.get("is_stream"), Some(&DataType::String));
        assert_eq!(s.get("status"), Some(&DataType::Int64));
        assert_eq!(s.get("first_response_ms"), Some(&DataType::Float64));
        assert_eq!(s.get("model"), Some(&DataType::Null));
    }

    #[test]
    fn other_is_a_struct_of_its_timing_or_a_string() {
        let mut t = Types::default();
        t.record(Place::Top, "other", OBJECT);
        assert!(t.schema().is_empty(), "no timing field: nothing to read");
        let mut inner = Types::default();
        inner.record(Place::OtherTiming, "upstream_headers_ms", TEXT);
        t.merge(inner);
        let timing = Field::new("upstream_headers_ms".into(), DataType::String);
        assert_eq!(
            t.schema().get("other"),
            Some(&DataType::Struct(vec![Field::new(
                "timing".into(),
                DataType::Struct(vec![timing])
            )]))
        );
        assert!(!t.other_is_mixed());
        t.record(Place::Top, "other", TEXT);
        assert!(t.other_is_mixed());
        let mut s = Types::default();
        s.record(Place::Top, "other", TEXT | NULL);
        assert_eq!(s.schema().get("other"), Some(&DataType::String));
    }
}
