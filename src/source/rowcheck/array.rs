//! JSON arrays: one document, read whole or not at all.

use std::fmt;
use std::path::Path;

use serde::de::{self, DeserializeSeed, Deserializer, Visitor};

use super::json_row::{json_message, Fault, ObjectCheck};
use super::types::Types;
use super::{read_all, BOM};
use crate::error::{Error, Result};

/// A JSON array is one document: it is read whole or not at all, so any fault is an error
/// with its line and column; each element is checked as a JSON line is. (Checked first
/// because polars' reader overflows the stack on deep nesting.) Returns the types of the
/// values the mapping may read, for the schema polars reads with, and the number of
/// elements.
pub fn check_json_array(path: &Path) -> Result<(Types, usize)> {
    let mut types = Types::default();
    let mut elements = 0;
    check_whole(path, "a JSON array", |text, de| {
        de.deserialize_seq(ArrayCheck {
            raw: text,
            types: &mut types,
            elements: &mut elements,
        })
    })?;
    Ok((types, elements))
}

/// A tool's log read as one JSON document (a Higress access-log entry or an array of
/// them): checked as `check_json_array` checks an array, one object standing for itself.
pub fn check_json_document(path: &Path) -> Result<()> {
    let mut types = Types::default();
    let mut elements = 0;
    check_whole(path, "a JSON document", |text, de| {
        de.deserialize_any(DocumentCheck(ArrayCheck {
            raw: text,
            types: &mut types,
            elements: &mut elements,
        }))
    })
}

/// The file as UTF-8 text (a byte-order mark dropped) through `check`, then to its end; a
/// fault is an error at serde_json's line and column, saying that `what` is read whole.
fn check_whole(
    path: &Path,
    what: &str,
    check: impl FnOnce(
        &str,
        &mut serde_json::Deserializer<serde_json::de::StrRead<'_>>,
    ) -> serde_json::Result<()>,
) -> Result<()> {
    let bytes = read_all(path)?;
    let bytes = bytes.strip_prefix(BOM).unwrap_or(&bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        // At the line and column of the first byte that is not UTF-8, as a syntax error is.
        let (line, column) = crate::source::line_and_column(bytes, e.valid_up_to());
        Error::input(
            path,
            format!(
                "line {line}, column {column}: not UTF-8 (JSON must be UTF-8; {what} is read whole)"
            ),
        )
    })?;
    let mut de = serde_json::Deserializer::from_str(text);
    check(text, &mut de).and_then(|()| de.end()).map_err(|e| {
        Error::input(
            path,
            format!(
                "line {}, column {}: {} ({what} is read whole; JSON lines can skip a bad row)",
                e.line(),
                e.column(),
                json_message(&e)
            ),
        )
    })
}

/// One object, or an array of them.
struct DocumentCheck<'a>(ArrayCheck<'a>);

impl<'de> Visitor<'de> for DocumentCheck<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object or an array of objects")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> std::result::Result<(), A::Error> {
        self.0.visit_seq(seq)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> std::result::Result<(), A::Error> {
        ObjectCheck {
            path: &[],
            raw: self.0.raw,
            fail_fast: true,
            faults: &mut vec![],
            types: Some(self.0.types),
            gather: None,
            shapes: None,
        }
        .visit_map(map)
    }
}

/// The elements of a JSON array, each an object checked like a JSON line; a fault becomes
/// an error at the element's end, so serde_json gives it a line and column.
struct ArrayCheck<'a> {
    raw: &'a str,
    /// The types of the values read, over every element.
    types: &'a mut Types,
    elements: &'a mut usize,
}

impl<'de> Visitor<'de> for ArrayCheck<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of objects")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let mut faults = vec![];
        while seq
            .next_element_seed(ElementCheck {
                raw: self.raw,
                faults: &mut faults,
                types: &mut *self.types,
            })?
            .is_some()
        {
            *self.elements += 1;
            // One column cannot hold both; a JSON array is not rewritten row by row as JSON
            // lines are, so this is an error at the element's end.
            if self.types.other_is_mixed() {
                return Err(de::Error::custom(
                    "field `other`: an object in some elements and a JSON string in others",
                ));
            }
        }
        Ok(())
    }
}

struct ElementCheck<'f> {
    raw: &'f str,
    faults: &'f mut Vec<Fault>,
    types: &'f mut Types,
}

impl<'de> DeserializeSeed<'de> for ElementCheck<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        // `deserialize_any`, not `deserialize_map`: serde_json answers a string given to
        // `deserialize_map` itself, quoting it; `ObjectCheck` names only its type.
        d.deserialize_any(ObjectCheck {
            path: &[],
            raw: self.raw,
            fail_fast: true,
            faults: self.faults,
            types: Some(self.types),
            gather: None,
            shapes: None,
        })
    }
}
