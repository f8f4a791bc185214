//! JSON arrays: one document, read whole or not at all.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use serde::de::{self, DeserializeSeed, Deserializer, Visitor};

use super::json_row::{json_message, Fault, ObjectCheck};
use super::{read_all, BOM};
use crate::error::{Error, Result};

/// A JSON array is one document: it is read whole or not at all, so any fault is an error
/// with its line and column; each element is checked as a JSON line is. (Checked first
/// because polars' reader overflows the stack on deep nesting.) Returns the top-level keys
/// the mapping may read, in order, so that polars keeps only those columns.
pub fn check_json_array(path: &Path) -> Result<Vec<String>> {
    let bytes = read_all(path)?;
    let bytes = bytes.strip_prefix(BOM).unwrap_or(&bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Error::input(
            path,
            format!(
                "byte {} is not UTF-8 (JSON must be UTF-8)",
                e.valid_up_to() + 1
            ),
        )
    })?;
    let mut keys = BTreeSet::new();
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_seq(ArrayCheck {
        raw: text,
        keys: &mut keys,
    })
    .and_then(|()| de.end())
    .map(|()| keys.into_iter().collect())
        .map_err(|e| {
            Error::input(
                path,
                format!(
                    "line {}, column {}: {} (a JSON array is read whole; JSON lines can skip a bad row)",
                    e.line(),
                    e.column(),
                    json_message(&e)
                ),
            )
        })
}

/// The elements of a JSON array, each an object checked like a JSON line; a fault becomes
/// an error at the element's end, so serde_json gives it a line and column.
struct ArrayCheck<'a> {
    raw: &'a str,
    /// The catalogue keys of every element.
    keys: &'a mut BTreeSet<String>,
}

impl<'de> Visitor<'de> for ArrayCheck<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of objects")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let mut fault = None;
        while seq
            .next_element_seed(ElementCheck {
                raw: self.raw,
                fault: &mut fault,
                keys: &mut *self.keys,
            })?
            .is_some()
        {}
        Ok(())
    }
}

struct ElementCheck<'f> {
    raw: &'f str,
    fault: &'f mut Option<Fault>,
    keys: &'f mut BTreeSet<String>,
}

impl<'de> DeserializeSeed<'de> for ElementCheck<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(ObjectCheck {
            prefix: String::new(),
            raw: self.raw,
            fail_fast: true,
            fault: self.fault,
            keys_out: Some(self.keys),
        })
    }
}
