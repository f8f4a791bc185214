//! What one JSON row may hold: the serde visitors shared by JSON lines and JSON arrays
//! (objects with unique keys, `other`/`timing`/`ai_log` objects, catalogue fields of a usable
//! JSON type, no integer beyond 64 bits, no nesting beyond 128 levels), the repair of a
//! faulty row, and the names of the catalogue fields (also used by the CSV header check).
//! The same pass notes the JSON type of every value the mapping can read (`Types`), so
//! polars is given a schema instead of inferring one.

use std::borrow::Cow;
use std::fmt;
use std::hash::BuildHasher;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::gather::{Gather, Scalar};
use super::types::{self, Place, Types};
use super::BadKind;

/// A fault found while deserializing, with the field it concerns.
pub(super) struct Fault {
    /// The keys leading to the value at fault, from the row down (a key may hold a dot).
    pub(super) path: Vec<String>,
    pub(super) message: String,
    pub(super) kind: BadKind,
    /// With `BadKind::Value`: the text kept in the value's place (what was found).
    pub(super) found: &'static str,
}

impl Fault {
    /// The field as a message names it: `other.timing.upstream_headers_ms`.
    pub(super) fn field(&self) -> String {
        self.path.join(".")
    }

    /// As a serde error (JSON arrays stop at the first fault, where serde_json gives the
    /// line and column).
    fn to_serde<E: de::Error>(&self) -> E {
        E::custom(format!("field `{}`: {}", self.field(), self.message))
    }
}

/// serde_json's message without its own " at line 1 column N" (the line is the file's).
pub(super) fn json_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let s = match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    };
    if s.contains("recursion limit") {
        "nesting deeper than 128 levels".into()
    } else {
        s
    }
}

/// The line as polars should read it, every fault repaired: the field at fault dropped
/// (`other`, a duplicated key at any level, an unread field), or, for a wrong-typed value,
/// replaced by text saying what was found (so the mapping counts it as unparsed).
pub(super) fn salvage(text: &str, faults: &[Fault]) -> String {
    let Ok(serde_json::Value::Object(mut obj)) = serde_json::from_str::<serde_json::Value>(text)
    else {
        return "{}".into();
    };
    for fault in faults {
        repair(&mut obj, fault);
    }
    serde_json::Value::Object(obj).to_string()
}

fn repair(obj: &mut serde_json::Map<String, serde_json::Value>, fault: &Fault) {
    use serde_json::Value;
    let Some((last, parents)) = fault.path.split_last() else {
        return;
    };
    // A fault inside `other` as a string is the fault of `other` itself (its path ends
    // there), so every object on the path is an object of the row; if one is gone, an
    // earlier repair dropped it, value and all.
    let mut target = obj;
    for p in parents {
        let Some(Value::Object(inner)) = target.get_mut(p) else {
            return;
        };
        target = inner;
    }
    if fault.kind == BadKind::Value {
        target.insert(last.clone(), Value::String(fault.found.into()));
    } else {
        target.remove(last);
    }
}

/// An object given as a JSON string (new-api stores `other` so, Higress's plugin `ai_log`):
/// it must hold a JSON object with unique keys, or the fields in it cannot be read. The
/// types of the timing fields in `other` go to `types`. `path` is the string's key (`["other"]`
/// or `["ai_log"]`).
pub(super) fn check_json_string(
    path: &'static [&'static str],
    s: &str,
    types: Option<&mut Types>,
) -> Option<Fault> {
    let key = path.last().copied().unwrap_or_default();
    if s.trim().is_empty() {
        return None;
    }
    let mut inner = vec![];
    let mut de = serde_json::Deserializer::from_str(s);
    let parsed = de
        .deserialize_any(ObjectCheck {
            path,
            raw: s,
            fail_fast: false,
            faults: &mut inner,
            types,
            // A copy reads such an `other` as its text.
            gather: None,
            shapes: None,
        })
        .and_then(|()| de.end());
    let path = vec![key.to_string()];
    match parsed {
        Err(e) => Some(Fault {
            path,
            message: format!(
                "`{key}` is a string but not a JSON object: {} at character {}",
                json_message(&e),
                e.column()
            ),
            kind: BadKind::Unreadable,
            found: "",
        }),
        // Anything wrong inside the string costs the whole of it (it is decoded whole).
        Ok(()) => inner.into_iter().next().map(|f| Fault {
            path,
            message: format!("in the JSON string `{key}`: {}", f.message),
            kind: BadKind::Unreadable,
            found: "",
        }),
    }
}

/// What a row's value must be, by the key it is under.
#[derive(Clone, Copy)]
pub(super) enum Role {
    /// `other` or `ai_log` (an object, a JSON string of one, or null) or `timing` (an
    /// object or null), at `path` (the keys leading to it).
    Nested {
        string_allowed: bool,
        path: &'static [&'static str],
    },
    /// A catalogue field: a scalar; a number or text unless the field is a label or flag.
    Field(crate::catalogue::Kind),
    /// Anything else: not read, but an integer beyond 64 bits still breaks the reader.
    Other,
}

/// The hash an object's keys are sorted by to find a duplicate (`ObjectCheck::visit_map`).
static KEY_HASH: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0);

/// Looked up for every key of every row: hashed with foldhash (see `types::Keys`).
type Roles = std::collections::HashMap<String, crate::catalogue::Kind, foldhash::fast::FixedState>;

/// Catalogue names and aliases (lower case), flat and dotted, with their kind; and the
/// timing names as keys of a nested `timing` object (matched exactly, as the mapping does).
fn roles() -> &'static (Roles, Roles) {
    use crate::catalogue::FIELDS;
    static ROLES: std::sync::OnceLock<(Roles, Roles)> = std::sync::OnceLock::new();
    ROLES.get_or_init(|| {
        let (mut flat, mut nested) = (Roles::default(), Roles::default());
        for f in FIELDS {
            for n in std::iter::once(f.name).chain(f.aliases.iter().copied()) {
                flat.insert(n.to_ascii_lowercase(), f.kind);
            }
            if f.kind.is_timing() {
                flat.insert(format!("timing.{}", f.name), f.kind);
                flat.insert(format!("other.timing.{}", f.name), f.kind);
                nested.insert(f.name.to_string(), f.kind);
            }
        }
        (flat, nested)
    })
}

/// The flat (top-level or CSV header) names, lower case.
pub(super) fn field_roles() -> &'static Roles {
    &roles().0
}

/// The catalogue kind of a row's top-level key, as the check looks it up (case-insensitive).
pub(crate) fn catalogue_kind(key: &str) -> Option<crate::catalogue::Kind> {
    if key.bytes().any(|b| b.is_ascii_uppercase()) {
        field_roles().get(&key.to_ascii_lowercase()).copied()
    } else {
        field_roles().get(key).copied()
    }
}

/// Where an object sits in a row, which says what its keys are: found once per object
/// from the keys leading to it, not once per key.
#[derive(Clone, Copy)]
pub(super) enum Here {
    /// The row itself.
    Row,
    /// `other`.
    Other,
    /// `other.timing` (`other` an object or a JSON string of one).
    OtherTiming,
    /// A top-level `timing`.
    Timing,
    /// Anywhere else: nothing in it is read.
    Unread,
}

impl Here {
    /// The object reached by the keys `parents` (`[]` for the row).
    pub(super) fn of(parents: &[&str]) -> Here {
        match parents {
            [] => Here::Row,
            ["other"] => Here::Other,
            ["timing"] => Here::Timing,
            ["other", "timing"] => Here::OtherTiming,
            _ => Here::Unread,
        }
    }

    /// Where the types of the object's keys are noted, when the mapping can read any.
    fn place(self) -> Option<Place> {
        match self {
            Here::Row => Some(Place::Top),
            Here::OtherTiming => Some(Place::OtherTiming),
            Here::Timing => Some(Place::Timing),
            Here::Other | Here::Unread => None,
        }
    }
}

/// The role of `key` in an object that sits `here`.
pub(super) fn role(here: Here, key: &str) -> Role {
    match (here, key) {
        (Here::Row, "other") => Role::Nested {
            string_allowed: true,
            path: &["other"],
        },
        (Here::Row, "ai_log") => Role::Nested {
            string_allowed: true,
            path: &["ai_log"],
        },
        (Here::Row, "timing") => Role::Nested {
            string_allowed: false,
            path: &["timing"],
        },
        (Here::Other, "timing") => Role::Nested {
            string_allowed: false,
            path: &["other", "timing"],
        },
        // Called for every key of every row: no allocation unless the key has capitals.
        (Here::Row, _) => {
            let found = if key.bytes().any(|b| b.is_ascii_uppercase()) {
                field_roles().get(&key.to_ascii_lowercase())
            } else {
                field_roles().get(key)
            };
            found.map_or(Role::Other, |kind| Role::Field(*kind))
        }
        (Here::Timing | Here::OtherTiming, _) => roles()
            .1
            .get(key)
            .map_or(Role::Other, |kind| Role::Field(*kind)),
        _ => Role::Other,
    }
}

/// Visits a row: it must be an object; keys must be unique in it and in the objects the
/// timing fields are read from (`other`, `other.timing`, `timing`, Higress's `ai_log`);
/// those must be objects (`other` and `ai_log` may be a JSON string of one); catalogue fields must be scalars of a usable
/// kind. Any of these in one row only would otherwise make polars fail the whole file (it
/// reads one type per column) or lose every row's timings. The rest is skipped unkept.
pub(super) struct ObjectCheck<'f> {
    /// The keys leading here: `[]` for the row, `["other"]` …
    pub(super) path: &'static [&'static str],
    /// The row's text (or `other`'s), to tell a huge integer from a huge float.
    pub(super) raw: &'f str,
    /// Stop at the first fault with a serde error (JSON arrays: serde_json then gives the
    /// line and column of the fault).
    pub(super) fail_fast: bool,
    /// Every fault found, in the order met.
    pub(super) faults: &'f mut Vec<Fault>,
    /// Where to note the JSON type of each value the mapping can read.
    pub(super) types: Option<&'f mut Types>,
    /// Where to hand the values a copy reads (JSON lines read whole).
    pub(super) gather: Option<&'f mut Gather>,
    /// The keys of the objects last read (JSON lines).
    pub(super) shapes: Option<&'f mut Shapes>,
}

impl ObjectCheck<'_> {
    fn fault(&self, key: &str, message: String, kind: BadKind, found: &'static str) -> Fault {
        let path = self.path.iter().copied().chain([key]);
        Fault {
            path: path.map(String::from).collect(),
            message,
            kind,
            found,
        }
    }
}

impl<'de> Visitor<'de> for ObjectCheck<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    // serde's own message quotes the string (`invalid type: string "…"`); a line, an array
    // element or an `other` that is a string may be prompt text, which no output may hold.
    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<(), E> {
        Err(E::invalid_type(de::Unexpected::Other("a string"), &self))
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> std::result::Result<(), A::Error> {
        let here = Here::of(self.path);
        // The keys known here, taken out while this object is read (so the objects inside
        // it can take theirs), and put back with the types noted in them, whether or not
        // it reads.
        let mut known = match self.shapes.as_deref_mut().and_then(|s| s.at(here)) {
            Some(known) => std::mem::take(known),
            None => vec![],
        };
        let read = self.read_object(&mut map, here, &mut known);
        if let Some(at) = self.shapes.as_deref_mut().and_then(|s| s.at(here)) {
            *at = known;
        }
        read
    }
}

impl<'f> ObjectCheck<'f> {
    /// `visit_map`'s reading of an object at `here`, whose keys are likely among `known`
    /// (which the keys met are added to).
    fn read_object<'de, A: MapAccess<'de>>(
        &mut self,
        map: &mut A,
        here: Here,
        known: &mut Vec<Known>,
    ) -> std::result::Result<(), A::Error> {
        let raw = self.raw;
        let place = here.place();
        // A float that is a whole number beyond i64 may be an integer literal polars
        // cannot hold (serde_json reads those as f64): the text decides.
        let big = |shape: Shape| {
            holds_big(shape)
                || (matches!(shape, Shape::MaybeBig | Shape::HoldsMaybeBig)
                    && has_big_integer_literal(raw))
        };
        let caching = self.shapes.is_some();
        // The known keys met so far, one bit each: a key met twice is a duplicate.
        let mut met: u64 = 0;
        let mut known_twice: Vec<usize> = vec![];
        // Where the next key likely is among the known ones.
        let mut next = 0;
        // The keys not known (beyond `MAX_KNOWN`, or without `Shapes`), searched for a
        // duplicate among themselves.
        let mut keys: Vec<Cow<'de, str>> = vec![];
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let index = match known.get(next) {
                Some(k) if *k.key == *key => Some(next),
                _ => known.iter().position(|k| *k.key == *key),
            };
            let index = match index {
                None if caching && known.len() < MAX_KNOWN => {
                    known.push(Known {
                        key: key.as_ref().into(),
                        role: role(here, &key),
                        column: self.column(place, &key),
                        bits: 0,
                    });
                    Some(known.len() - 1)
                }
                found => found,
            };
            let (key_role, column) = match index {
                Some(i) => {
                    if met & (1 << i) != 0 {
                        known_twice.push(i);
                    }
                    met |= 1 << i;
                    next = i + 1;
                    (known[i].role, known[i].column)
                }
                None => (role(here, &key), self.column(place, &key)),
            };
            // (JSON type bits to note for the key, a fault)
            let (bits, found) = match key_role {
                Role::Nested {
                    string_allowed,
                    path,
                } => {
                    let mut inner = vec![];
                    let text_column = column;
                    let nested = map.next_value_seed(NestedCheck {
                        path,
                        raw,
                        fail_fast: self.fail_fast,
                        string_allowed,
                        faults: &mut inner,
                        types: self.types.as_deref_mut(),
                        gather: self.gather.as_deref_mut(),
                        text_column,
                        shapes: self.shapes.as_deref_mut(),
                    })?;
                    self.faults.extend(inner);
                    match nested {
                        Ok(bits) => (bits, None),
                        Err(found) => (
                            0,
                            Some(self.fault(
                                &key,
                                format!(
                                    "expected an object{}, found {found}",
                                    if string_allowed {
                                        " or a JSON string of one"
                                    } else {
                                        ""
                                    }
                                ),
                                BadKind::Unreadable,
                                "",
                            )),
                        ),
                    }
                }
                Role::Field(kind) => {
                    use crate::catalogue::Kind;
                    let shape = match (column, self.gather.as_deref_mut()) {
                        (Some(column), Some(gather)) => {
                            map.next_value_seed(Capture { gather, column })?
                        }
                        _ => map.next_value::<Shape>()?,
                    };
                    let found = match shape {
                        s if big(s) && s != Shape::HoldsBigInteger && s != Shape::HoldsMaybeBig => {
                            Some("an integer beyond the 64-bit range")
                        }
                        Shape::Boolean if !matches!(kind, Kind::Label | Kind::Flag) => {
                            Some("a boolean")
                        }
                        Shape::Object | Shape::HoldsBigInteger | Shape::HoldsMaybeBig => {
                            Some("an object")
                        }
                        Shape::Array => Some("an array"),
                        _ => None,
                    };
                    match found {
                        None => (shape.bits(), None),
                        Some(found) => {
                            let expected = if matches!(kind, Kind::Label | Kind::Flag) {
                                "text, a number or a boolean"
                            } else {
                                "a number or text holding one"
                            };
                            let message = format!("expected {expected}, found {found}");
                            // A label cannot hold "an array" as its value: it is dropped,
                            // and the row counts as unreadable. Any other field keeps text
                            // saying what was found.
                            let (bits, bad) = if kind == Kind::Label {
                                (0, BadKind::Unreadable)
                            } else {
                                (types::TEXT, BadKind::Value)
                            };
                            (bits, Some(self.fault(&key, message, bad, found)))
                        }
                    }
                }
                Role::Other => {
                    let shape = map.next_value::<Shape>()?;
                    let found = big(shape).then(|| {
                        self.fault(
                            &key,
                            "an integer beyond the 64-bit range, which the reader cannot hold"
                                .into(),
                            BadKind::Repair,
                            "",
                        )
                    });
                    (0, found)
                }
            };
            if let (Some(place), true) = (place, bits != 0) {
                match index {
                    Some(i) => known[i].bits |= bits,
                    None => {
                        if let Some(types) = self.types.as_deref_mut() {
                            types.record(place, &key, bits);
                        }
                    }
                }
            }
            self.faults.extend(found);
            if let (true, Some(f)) = (self.fail_fast, self.faults.first()) {
                return Err(f.to_serde());
            }
            if index.is_none() {
                keys.push(key);
            }
        }
        // Duplicated keys: sorted, a duplicate sits next to its twin (O(n log n), where a
        // search per key would cost O(n²) on every row). Sorted by their hash first, so
        // that keys are compared as text only where the hashes are equal (text comparisons,
        // here and in finding the place, were 14 % of the JSON-lines check's samples on the
        // 10M benchmark file, 7 % after); the few duplicates then in text order.
        let mut hashed: Vec<(u64, &str)> = keys
            .iter()
            .map(|k| (KEY_HASH.hash_one(k.as_ref()), k.as_ref()))
            .collect();
        hashed.sort_unstable();
        let mut twice: Vec<&str> = hashed
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0].1)
            .chain(known_twice.iter().map(|i| &*known[*i].key))
            .collect();
        twice.sort_unstable();
        twice.dedup();
        for key in twice {
            let message = format!("the key `{key}` appears twice: which value holds is unknown");
            let fault = self.fault(key, message, BadKind::Unreadable, "");
            if self.fail_fast {
                return Err(fault.to_serde());
            }
            self.faults.push(fault);
        }
        Ok(())
    }

    /// The column a copy gathers `key` at `place` into.
    fn column(&self, place: Option<Place>, key: &str) -> Option<usize> {
        match (place, &self.gather) {
            (Some(place), Some(g)) => g.column(place, key),
            _ => None,
        }
    }
}

/// How many keys `Shapes` knows at one place (one bit each in a `u64`); the keys met
/// after them are looked up and searched for duplicates as without `Shapes`.
const MAX_KNOWN: usize = 64;

/// A key met at one place of a row: its role, the column a copy gathers it into, and the
/// types it has held (noted in `Types` by `Shapes::flush`).
pub(super) struct Known {
    key: Box<str>,
    role: Role,
    column: Option<usize>,
    bits: u8,
}

/// Note the types `known`'s keys at `place` have held.
fn flush(known: &mut [Known], place: Place, types: &mut Types) {
    for k in known.iter_mut().filter(|k| k.bits != 0) {
        types.record(place, &k.key, k.bits);
        k.bits = 0;
    }
}

/// The keys met at each place whose keys are read (the row, `other`, `other.timing`,
/// `timing`), in the order first met. Rows of a log hold the same few keys, nearly always
/// in the same order, so a key is compared with the one after the last key's among the
/// known ones (else with each) instead of being looked up (its role, its column, its
/// types), and a duplicate is a known key met twice in one object, one bit each: the
/// lookups were a hash and a comparison per key of every row, and the search for
/// duplicates a sort per object, most of the JSON-lines check.
#[derive(Default)]
pub(super) struct Shapes {
    row: Vec<Known>,
    other: Vec<Known>,
    other_timing: Vec<Known>,
    timing: Vec<Known>,
}

impl Shapes {
    fn at(&mut self, here: Here) -> Option<&mut Vec<Known>> {
        match here {
            Here::Row => Some(&mut self.row),
            Here::Other => Some(&mut self.other),
            Here::OtherTiming => Some(&mut self.other_timing),
            Here::Timing => Some(&mut self.timing),
            Here::Unread => None,
        }
    }

    /// Note in `types` the types the known keys have held.
    pub(super) fn flush(&mut self, types: &mut Types) {
        for (known, place) in [
            (&mut self.row, Place::Top),
            (&mut self.other_timing, Place::OtherTiming),
            (&mut self.timing, Place::Timing),
        ] {
            flush(known, place, types);
        }
    }
}

/// The value of `other`, `ai_log` or `timing`: an object (checked in turn), a string
/// holding one (not `timing`), or null, as the JSON type bits to note for it; anything else is an error
/// saying what was found.
struct NestedCheck<'f> {
    path: &'static [&'static str],
    raw: &'f str,
    fail_fast: bool,
    string_allowed: bool,
    faults: &'f mut Vec<Fault>,
    types: Option<&'f mut Types>,
    gather: Option<&'f mut Gather>,
    /// The column a copy gathers the value into when it is a string (`other` read as a
    /// JSON string column).
    text_column: Option<usize>,
    shapes: Option<&'f mut Shapes>,
}

type Nested = std::result::Result<u8, &'static str>;

impl<'de> DeserializeSeed<'de> for NestedCheck<'_> {
    type Value = Nested;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Nested, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NestedCheck<'_> {
    type Value = Nested;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Nested, A::Error> {
        let mut gather = self.gather;
        if let (Some(g), Some(_)) = (gather.as_deref_mut(), self.text_column) {
            // Gathered as text, read by polars as a struct (or the file's `other` mixed).
            g.spoil();
        }
        ObjectCheck {
            path: self.path,
            raw: self.raw,
            fail_fast: self.fail_fast,
            faults: self.faults,
            types: self.types,
            gather,
            shapes: self.shapes,
        }
        .visit_map(map)?;
        Ok(Ok(types::OBJECT))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<Nested, E> {
        if !self.string_allowed {
            return Ok(Err("a string"));
        }
        if let (Some(g), Some(column)) = (self.gather, self.text_column) {
            g.value(column, Scalar::Text(s));
        }
        match check_json_string(self.path, s, self.types) {
            Some(f) => {
                self.faults.push(f);
                Ok(Ok(0))
            }
            // A blank string is no object, but still a string in the column.
            None => Ok(Ok(types::TEXT)),
        }
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Nested, A::Error> {
        while seq.next_element::<Shape>()?.is_some() {}
        Ok(Err("an array"))
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Nested, E> {
        Ok(Err("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Nested, E> {
        Ok(Err("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Nested, E> {
        Ok(Err("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Nested, E> {
        Ok(Err("a number"))
    }
    fn visit_unit<E>(self) -> std::result::Result<Nested, E> {
        Ok(Ok(types::NULL))
    }
}

/// Any JSON value, read, dropped and described by its shape. Unlike `IgnoredAny` (which
/// serde_json skips with a loop, without its depth limit) this goes through
/// `deserialize_any`, so nesting deeper than 128 levels is an error here instead of a
/// stack overflow in polars later; and it notices integers polars' reader cannot hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Null,
    Text,
    Integer,
    Float,
    Boolean,
    /// An integer above i64::MAX (serde_json reads it as u64).
    BigInteger,
    Object,
    Array,
    /// An object or array with such an integer somewhere inside.
    HoldsBigInteger,
    /// A whole number beyond i64 read as f64: an integer literal or `1e19`.
    MaybeBig,
    /// An object or array with such a number inside.
    HoldsMaybeBig,
}

fn holds_big(s: Shape) -> bool {
    matches!(s, Shape::BigInteger | Shape::HoldsBigInteger)
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Shape, D::Error> {
        d.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Shape, A::Error> {
        let mut inside = Shape::Object;
        while let Some((_, v)) = map.next_entry::<IgnoredAny, Shape>()? {
            inside = inside.holding(v);
        }
        Ok(inside)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Shape, A::Error> {
        let mut inside = Shape::Array;
        while let Some(v) = seq.next_element::<Shape>()? {
            inside = inside.holding(v);
        }
        Ok(inside)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<Shape, E> {
        Ok(Shape::Text)
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Shape, E> {
        Ok(Shape::Boolean)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Shape, E> {
        Ok(Shape::Integer)
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Shape, E> {
        Ok(if v > i64::MAX as u64 {
            Shape::BigInteger
        } else {
            Shape::Integer
        })
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Shape, E> {
        Ok(if v.fract() == 0.0 && v.abs() >= 9.223_372_036_854_775e18 {
            Shape::MaybeBig
        } else {
            Shape::Float
        })
    }
    fn visit_unit<E>(self) -> std::result::Result<Shape, E> {
        Ok(Shape::Null)
    }
}

impl Shape {
    /// The JSON type bits of a scalar (a float beyond i64 that is not an integer literal
    /// is a float).
    fn bits(self) -> u8 {
        match self {
            Shape::Null => types::NULL,
            Shape::Text => types::TEXT,
            Shape::Integer => types::INT,
            Shape::Float | Shape::MaybeBig => types::FLOAT,
            Shape::Boolean => types::BOOL,
            _ => 0,
        }
    }

    /// A container's shape after seeing one more element.
    fn holding(self, v: Shape) -> Shape {
        match (self, v) {
            (Shape::HoldsBigInteger, _) | (_, Shape::BigInteger | Shape::HoldsBigInteger) => {
                Shape::HoldsBigInteger
            }
            (_, Shape::MaybeBig | Shape::HoldsMaybeBig) => Shape::HoldsMaybeBig,
            (s, _) => s,
        }
    }
}

/// Whether the JSON text has an integer literal (outside strings) beyond the i64 range,
/// which polars' JSON reader turns into an Int128 column it then cannot hold.
pub(super) fn has_big_integer_literal(text: &str) -> bool {
    let b = text.as_bytes();
    let (mut i, mut in_string) = (0, false);
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let integer = !matches!(b.get(i), Some(b'.' | b'e' | b'E'))
                && !matches!(
                    start.checked_sub(1).map(|p| b[p]),
                    Some(b'.' | b'e' | b'E' | b'+')
                )
                && !matches!(start.checked_sub(2).map(|p| b[p]), Some(b'e' | b'E'));
            let digits = &text[start..i];
            let digits = digits.trim_start_matches('0');
            if integer
                && (digits.len() > 19 || (digits.len() == 19 && digits > "9223372036854775807"))
            {
                return true;
            }
            continue;
        }
        i += 1;
    }
    false
}

/// A wanted value, read as `Shape` reads it and handed to the gather.
struct Capture<'g> {
    gather: &'g mut Gather,
    column: usize,
}

impl<'de> DeserializeSeed<'de> for Capture<'_> {
    type Value = Shape;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Shape, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Capture<'_> {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Shape, A::Error> {
        self.gather.spoil();
        ShapeVisitor.visit_map(map)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> std::result::Result<Shape, A::Error> {
        self.gather.spoil();
        ShapeVisitor.visit_seq(seq)
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Shape, E> {
        self.gather.value(self.column, Scalar::Text(v));
        Ok(Shape::Text)
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Shape, E> {
        self.gather.value(self.column, Scalar::Bool(v));
        Ok(Shape::Boolean)
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Shape, E> {
        self.gather.value(self.column, Scalar::Int(v));
        Ok(Shape::Integer)
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Shape, E> {
        match i64::try_from(v) {
            Ok(v) => {
                self.gather.value(self.column, Scalar::Int(v));
                Ok(Shape::Integer)
            }
            Err(_) => {
                self.gather.spoil();
                Ok(Shape::BigInteger)
            }
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Shape, E> {
        self.gather.value(self.column, Scalar::Float(v));
        ShapeVisitor.visit_f64(v)
    }
    fn visit_unit<E>(self) -> std::result::Result<Shape, E> {
        Ok(Shape::Null)
    }
}
