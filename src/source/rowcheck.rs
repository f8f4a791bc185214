//! The row check: every line of a JSON-lines log and every record of a CSV log is checked
//! before polars reads the file, because polars' readers stop at the first malformed line
//! without saying which one, silently pick one of two duplicated keys, and overflow the
//! stack on deeply nested objects. The check finds each bad row with its line and column;
//! the policy (`--on-bad-row`) then decides: stop with that error, leave the row out, or
//! keep it with its unreadable parts null. A file with no bad row is read by polars
//! directly (the fast path); otherwise polars reads a repaired copy held in memory.
//!
//! What makes a row bad:
//! - JSONL: not JSON, not an object, trailing text, nesting deeper than serde_json's 128
//!   levels, a key given twice (in the row, in `other` or in `other.timing`), or `other`
//!   as a string that is not a JSON object.
//! - CSV: a record with more or fewer fields than the header, a field that is not UTF-8
//!   (typically a Latin-1 export), a quote left open at the end of the file.
//!
//! Values that are well-formed but not of their field's type (`"abc"` in a timing column,
//! `NaN`) are not checked here: the canonical mapping turns them into nulls and counts them
//! (`dq_unparsed`), and the same policy applies to them in `analyze`.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::error::{Error, Result};

/// What to do with a row that cannot be read (`--on-bad-row`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BadRowPolicy {
    /// Stop at the first bad row: exit 2 with file, line and column.
    Error,
    /// Leave bad rows out of every figure; the summary counts them.
    Skip,
    /// Keep bad rows with their unreadable parts null, flagged `dq_unreadable` (default:
    /// an incident's log is read as far as it can be, and the report says what was lost).
    #[default]
    Keep,
}

impl BadRowPolicy {
    pub fn name(self) -> &'static str {
        match self {
            BadRowPolicy::Error => "error",
            BadRowPolicy::Skip => "skip",
            BadRowPolicy::Keep => "keep",
        }
    }
}

/// How bad a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadKind {
    /// The row cannot be read whole: not JSON, a duplicated key, `other` not an object.
    Unreadable,
    /// One catalogue field holds a value of the wrong JSON type (a list, an object, a
    /// boolean latency, an integer beyond 64 bits): with `keep` the value becomes text
    /// that the mapping counts as unparsed, like `abc` in a CSV.
    Value,
    /// A field tracediag never reads holds what polars cannot (an integer beyond 64 bits):
    /// it is dropped from the copy polars reads, and nothing is reported.
    Repair,
}

/// One row that could not be read as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRow {
    /// 1-based physical line in the file (for CSV, the line the record starts on).
    pub line: u64,
    /// 1-based character column within the line, when the fault has a position.
    pub column: Option<u64>,
    /// The field (key or CSV column) at fault, when there is one.
    pub field: Option<String>,
    pub message: String,
    pub kind: BadKind,
}

impl fmt::Display for BadRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(c) = self.column {
            write!(f, ", column {c}")?;
        }
        if let Some(k) = &self.field {
            write!(f, " (field `{k}`)")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The outcome of checking one file.
#[derive(Debug, Default)]
pub struct Checked {
    /// Every bad row, in line order.
    pub bad: Vec<BadRow>,
    /// When there is a bad row: the file's rows as polars should read them (bad rows
    /// repaired or left out per the policy; blank lines dropped).
    pub repaired: Option<Vec<u8>>,
    /// With `Keep`: 1-based data rows of `repaired` that were bad (for `dq_unreadable`).
    pub kept_rows: Vec<u32>,
}

const BOM: &[u8] = "\u{feff}".as_bytes();

fn read_all(path: &Path) -> Result<Vec<u8>> {
    let mut bytes = vec![];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    Ok(bytes)
}

fn first_error(path: &Path, bad: &BadRow) -> Error {
    Error::input(
        path,
        format!("{bad} (--on-bad-row skip or keep reads the rest of the file)"),
    )
}

// ---------------------------------------------------------------------------------------
// JSON lines

/// Check a JSON-lines file. With `Error`, the first bad row is the error.
pub fn check_json_lines(path: &Path, policy: BadRowPolicy) -> Result<Checked> {
    let all = read_all(path)?;
    // A byte-order mark is not JSON; polars' reader would choke on it.
    let bom = all.starts_with(BOM);
    let bytes = if bom { &all[BOM.len()..] } else { &all[..] };
    if lines(bytes).all(is_blank) {
        return Err(Error::input(
            path,
            "the file has no rows (only blank lines): expected a request log",
        ));
    }
    let bad = find_bad_lines(bytes);
    if bad.is_empty() {
        return Ok(Checked {
            repaired: bom.then(|| bytes.to_vec()),
            ..Checked::default()
        });
    }
    if policy == BadRowPolicy::Error {
        if let Some((b, _)) = bad.iter().find(|(b, _)| b.kind != BadKind::Repair) {
            return Err(first_error(path, b));
        }
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut kept_rows = vec![];
    let mut next_bad = bad.iter().peekable();
    let mut row = 0u32;
    for (i, line) in lines(bytes).enumerate() {
        let lineno = i as u64 + 1;
        if is_blank(line) {
            continue;
        }
        match next_bad.peek() {
            Some((b, repair)) if b.line == lineno => {
                if policy == BadRowPolicy::Keep || b.kind == BadKind::Repair {
                    out.extend_from_slice(repair.as_bytes());
                    out.push(b'\n');
                    row += 1;
                    if b.kind == BadKind::Unreadable {
                        kept_rows.push(row);
                    }
                }
                next_bad.next();
            }
            _ => {
                out.extend_from_slice(line);
                out.push(b'\n');
                row += 1;
            }
        }
    }
    // Reported: what was left out, and what was kept unreadable. A wrong-typed value kept
    // as text is reported by the mapping (`dq_unparsed`), like any unparsed value.
    let reported = bad
        .into_iter()
        .map(|(b, _)| b)
        .filter(|b| match b.kind {
            BadKind::Repair => false,
            BadKind::Value => policy == BadRowPolicy::Skip,
            BadKind::Unreadable => true,
        })
        .collect();
    Ok(Checked {
        bad: reported,
        repaired: Some(out),
        kept_rows,
    })
}

/// Lines without their terminator (`\n` or `\r\n`).
fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(move |_| !bytes.is_empty())
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

/// Every bad line with the text that replaces it when kept. The file is split in two at a
/// line boundary and checked on two threads (the check is about as costly as a parse).
fn find_bad_lines(bytes: &[u8]) -> Vec<(BadRow, String)> {
    let half = bytes.len() / 2;
    let split = match bytes[half..].iter().position(|b| *b == b'\n') {
        Some(p) if bytes.len() > 1 << 20 => half + p + 1,
        _ => bytes.len(),
    };
    let (a, b) = bytes.split_at(split);
    let first_lines = a.iter().filter(|c| **c == b'\n').count() as u64;
    let (mut bad, rest) = std::thread::scope(|s| {
        let h = s.spawn(|| check_lines(b, first_lines));
        let bad = check_lines(a, 0);
        (bad, h.join().expect("the line check does not panic"))
    });
    bad.extend(rest);
    bad
}

fn check_lines(bytes: &[u8], offset: u64) -> Vec<(BadRow, String)> {
    let mut bad = vec![];
    for (i, line) in lines(bytes).enumerate() {
        if is_blank(line) {
            continue;
        }
        if let Err((mut b, repair)) = check_json_line(line) {
            b.line = offset + i as u64 + 1;
            bad.push((b, repair));
        }
    }
    bad
}

/// A fault found while deserializing, with the field it concerns.
struct Fault {
    field: String,
    message: String,
    kind: BadKind,
    /// With `BadKind::Value`: the text kept in the value's place (what was found).
    found: &'static str,
}

/// Check one line; on failure, the bad row (line 0, set by the caller) and the JSON to
/// keep in its place: the readable fields, or `{}` when nothing is readable.
fn check_json_line(line: &[u8]) -> std::result::Result<(), (BadRow, String)> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            let column = String::from_utf8_lossy(&line[..e.valid_up_to()])
                .chars()
                .count() as u64
                + 1;
            return Err((
                BadRow {
                    line: 0,
                    column: Some(column),
                    field: None,
                    message: "not UTF-8 (JSON lines must be UTF-8)".into(),
                    kind: BadKind::Unreadable,
                },
                "{}".into(),
            ));
        }
    };
    let mut fault = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = de
        .deserialize_any(ObjectCheck {
            prefix: String::new(),
            raw: text,
            fail_fast: false,
            fault: &mut fault,
        })
        .and_then(|()| de.end());
    if let Err(e) = parsed {
        let message = json_message(&e);
        return Err((
            BadRow {
                line: 0,
                column: (e.column() > 0).then_some(e.column() as u64),
                field: None,
                message,
                kind: BadKind::Unreadable,
            },
            "{}".into(),
        ));
    }
    if let Some(f) = fault {
        let repair = salvage(text, &f);
        return Err((
            BadRow {
                line: 0,
                column: None,
                field: Some(f.field),
                message: f.message,
                kind: f.kind,
            },
            repair,
        ));
    }
    Ok(())
}

/// serde_json's message without its own " at line 1 column N" (the line is the file's).
fn json_message(e: &serde_json::Error) -> String {
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

/// The line as polars should read it: the field at fault dropped (`other`, a duplicated
/// key at any level, an unread field), or, for a wrong-typed value, replaced by text
/// saying what was found (so the mapping counts it as unparsed).
fn salvage(text: &str, fault: &Fault) -> String {
    let field = fault.field.as_str();
    let Ok(serde_json::Value::Object(mut obj)) = serde_json::from_str::<serde_json::Value>(text)
    else {
        return "{}".into();
    };
    let mut path: Vec<&str> = field.split('.').collect();
    let last = path.pop().unwrap_or(field);
    let mut target = &mut obj;
    for p in path {
        match target.get_mut(p) {
            Some(serde_json::Value::Object(o)) => target = o,
            _ => {
                // `other` as a string: drop it whole.
                obj.remove("other");
                return serde_json::Value::Object(obj).to_string();
            }
        }
    }
    if fault.kind == BadKind::Value {
        target.insert(
            last.to_string(),
            serde_json::Value::String(fault.found.into()),
        );
    } else {
        target.remove(last);
    }
    serde_json::Value::Object(obj).to_string()
}

/// `other` given as a string (new-api stores it so): it must hold a JSON object with
/// unique keys, or the timing fields in it cannot be read.
fn check_other_string(s: &str) -> Option<Fault> {
    if s.trim().is_empty() {
        return None;
    }
    let mut inner = None;
    let mut de = serde_json::Deserializer::from_str(s);
    let parsed = de
        .deserialize_any(ObjectCheck {
            prefix: "other.".into(),
            raw: s,
            fail_fast: false,
            fault: &mut inner,
        })
        .and_then(|()| de.end());
    match parsed {
        Err(e) => Some(Fault {
            field: "other".into(),
            message: format!(
                "`other` is a string but not a JSON object: {} at character {}",
                json_message(&e),
                e.column()
            ),
            kind: BadKind::Unreadable,
            found: "",
        }),
        // Anything wrong inside the string costs the whole of it (it is decoded whole).
        Ok(()) => inner.map(|f| Fault {
            field: "other".into(),
            message: format!("in the JSON string `other`: {}", f.message),
            kind: BadKind::Unreadable,
            found: "",
        }),
    }
}

/// What a row's value must be, by the key it is under.
#[derive(Clone, Copy)]
enum Role {
    /// `other` (an object, a JSON string of one, or null) or `timing` (an object or null).
    Nested { string_allowed: bool },
    /// A catalogue field: a scalar; a number or text unless the field is a label or flag.
    Field(crate::catalogue::Kind),
    /// Anything else: not read, but an integer beyond 64 bits still breaks the reader.
    Other,
}

type Roles = std::collections::HashMap<String, crate::catalogue::Kind>;

/// Catalogue names and aliases (lower case), flat and dotted, with their kind; and the
/// timing names as keys of a nested `timing` object (matched exactly, as the mapping does).
fn roles() -> &'static (Roles, Roles) {
    use crate::catalogue::FIELDS;
    static ROLES: std::sync::OnceLock<(Roles, Roles)> = std::sync::OnceLock::new();
    ROLES.get_or_init(|| {
        let (mut flat, mut nested) = (Roles::new(), Roles::new());
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
fn field_roles() -> &'static Roles {
    &roles().0
}

fn role(prefix: &str, key: &str) -> Role {
    match (prefix, key) {
        ("", "other") => Role::Nested {
            string_allowed: true,
        },
        ("", "timing") | ("other.", "timing") => Role::Nested {
            string_allowed: false,
        },
        // Called for every key of every row: no allocation unless the key has capitals.
        ("", _) => {
            let found = if key.bytes().any(|b| b.is_ascii_uppercase()) {
                field_roles().get(&key.to_ascii_lowercase())
            } else {
                field_roles().get(key)
            };
            found.map_or(Role::Other, |kind| Role::Field(*kind))
        }
        ("timing.", _) | ("other.timing.", _) => roles()
            .1
            .get(key)
            .map_or(Role::Other, |kind| Role::Field(*kind)),
        _ => Role::Other,
    }
}

/// Visits a row: it must be an object; keys must be unique in it and in the objects the
/// timing fields are read from (`other`, `other.timing`, `timing`); those must be objects
/// (`other` may be a JSON string of one); catalogue fields must be scalars of a usable
/// kind. Any of these in one row only would otherwise make polars fail the whole file (it
/// infers one type per column) or lose every row's timings. The rest is skipped unkept.
struct ObjectCheck<'f> {
    /// The keys leading here, each followed by a dot: "" for the row, "other." …
    prefix: String,
    /// The row's text (or `other`'s), to tell a huge integer from a huge float.
    raw: &'f str,
    /// Stop at the first fault with a serde error (JSON arrays: serde_json then gives the
    /// line and column of the fault).
    fail_fast: bool,
    fault: &'f mut Option<Fault>,
}

impl<'de> Visitor<'de> for ObjectCheck<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let prefix = self.prefix;
        let raw = self.raw;
        // A float that is a whole number beyond i64 may be an integer literal polars
        // cannot hold (serde_json reads those as f64): the text decides.
        let big = |shape: Shape| {
            holds_big(shape)
                || (matches!(shape, Shape::MaybeBig | Shape::HoldsMaybeBig)
                    && has_big_integer_literal(raw))
        };
        let mut keys: Vec<Cow<'de, str>> = vec![];
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let field = || format!("{prefix}{key}");
            let found = match role(&prefix, &key) {
                Role::Nested { string_allowed } => {
                    let mut inner = None;
                    let shape = map.next_value_seed(NestedCheck {
                        prefix: format!("{prefix}{key}."),
                        raw,
                        fail_fast: self.fail_fast,
                        string_allowed,
                        fault: &mut inner,
                    })?;
                    inner.or_else(|| {
                        shape.map(|found| Fault {
                            field: field(),
                            message: format!(
                                "expected an object{}, found {found}",
                                if string_allowed {
                                    " or a JSON string of one"
                                } else {
                                    ""
                                }
                            ),
                            kind: BadKind::Unreadable,
                            found: "",
                        })
                    })
                }
                Role::Field(kind) => {
                    use crate::catalogue::Kind;
                    let shape = map.next_value::<Shape>()?;
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
                    found.map(|found| Fault {
                        field: field(),
                        message: format!(
                            "expected {}, found {found}",
                            if matches!(kind, Kind::Label | Kind::Flag) {
                                "text, a number or a boolean"
                            } else {
                                "a number or text holding one"
                            }
                        ),
                        // A label cannot hold "an array" as its value: it is dropped, and
                        // the row counts as unreadable.
                        kind: if kind == Kind::Label {
                            BadKind::Unreadable
                        } else {
                            BadKind::Value
                        },
                        found,
                    })
                }
                Role::Other => {
                    let shape = map.next_value::<Shape>()?;
                    big(shape).then(|| Fault {
                        field: field(),
                        message: "an integer beyond the 64-bit range, which the reader cannot hold"
                            .into(),
                        kind: BadKind::Repair,
                        found: "",
                    })
                }
            };
            if self.fault.is_none() {
                *self.fault = found;
            }
            if let (true, Some(f)) = (self.fail_fast, self.fault.as_ref()) {
                return Err(de::Error::custom(format!(
                    "field `{}`: {}",
                    f.field, f.message
                )));
            }
            keys.push(key);
        }
        // Duplicated keys: sorted, a duplicate sits next to its twin (O(n log n), where a
        // search per key would cost O(n²) on every row).
        if self.fault.is_none() {
            keys.sort_unstable();
            if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
                let key = &w[0];
                *self.fault = Some(Fault {
                    field: format!("{prefix}{key}"),
                    message: format!("the key `{key}` appears twice: which value holds is unknown"),
                    kind: BadKind::Unreadable,
                    found: "",
                });
                if self.fail_fast {
                    return Err(de::Error::custom(format!(
                        "field `{prefix}{key}`: the key `{key}` appears twice: which value holds is unknown"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The value of `other` or `timing`: an object (checked in turn), a string holding one
/// (`other` only), or null; anything else is returned as what was found.
struct NestedCheck<'f> {
    prefix: String,
    raw: &'f str,
    fail_fast: bool,
    string_allowed: bool,
    fault: &'f mut Option<Fault>,
}

impl<'de> DeserializeSeed<'de> for NestedCheck<'_> {
    type Value = Option<&'static str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NestedCheck<'_> {
    type Value = Option<&'static str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
        ObjectCheck {
            prefix: self.prefix,
            raw: self.raw,
            fail_fast: self.fail_fast,
            fault: self.fault,
        }
        .visit_map(map)?;
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<Self::Value, E> {
        if !self.string_allowed {
            return Ok(Some("a string"));
        }
        *self.fault = check_other_string(s);
        Ok(None)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        while seq.next_element::<Shape>()?.is_some() {}
        Ok(Some("an array"))
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(Some("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(Some("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(Some("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(Some("a number"))
    }
    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
}

/// Any JSON value, read, dropped and described by its shape. Unlike `IgnoredAny` (which
/// serde_json skips with a loop, without its depth limit) this goes through
/// `deserialize_any`, so nesting deeper than 128 levels is an error here instead of a
/// stack overflow in polars later; and it notices integers polars' reader cannot hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Scalar,
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
        Ok(Shape::Scalar)
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Shape, E> {
        Ok(Shape::Boolean)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Shape, E> {
        Ok(if v > i64::MAX as u64 {
            Shape::BigInteger
        } else {
            Shape::Scalar
        })
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Shape, E> {
        Ok(if v.fract() == 0.0 && v.abs() >= 9.223_372_036_854_775e18 {
            Shape::MaybeBig
        } else {
            Shape::Scalar
        })
    }
    fn visit_unit<E>(self) -> std::result::Result<Shape, E> {
        Ok(Shape::Scalar)
    }
}

impl Shape {
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
fn has_big_integer_literal(text: &str) -> bool {
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

// ---------------------------------------------------------------------------------------
// JSON arrays

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
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_seq(ArrayCheck { raw: text })
        .and_then(|()| de.end())
        .and_then(|()| {
            let rows: Vec<std::collections::BTreeMap<String, IgnoredAny>> =
                serde_json::from_str(text)?;
            let keys: std::collections::BTreeSet<String> = rows
                .into_iter()
                .flat_map(|r| r.into_keys())
                .filter(|k| !matches!(role("", k), Role::Other))
                .collect();
            Ok(keys.into_iter().collect())
        })
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
            })?
            .is_some()
        {}
        Ok(())
    }
}

struct ElementCheck<'f> {
    raw: &'f str,
    fault: &'f mut Option<Fault>,
}

impl<'de> DeserializeSeed<'de> for ElementCheck<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(ObjectCheck {
            prefix: String::new(),
            raw: self.raw,
            fail_fast: true,
            fault: self.fault,
        })
    }
}

// ---------------------------------------------------------------------------------------
// CSV

/// Check a CSV (or TSV) file record by record, quotes and all. A second pass writes the
/// repaired copy only when a bad record was found, so a clean file is never held twice.
pub fn check_csv(path: &Path, separator: u8, policy: BadRowPolicy) -> Result<Checked> {
    let bytes = read_all(path)?;
    let body = bytes.strip_prefix(BOM).unwrap_or(&bytes);
    // Old Mac line ends (a CR alone): polars reads them as one line, so such a file is
    // rewritten with LF even when every record is good.
    let bare_cr = body
        .iter()
        .enumerate()
        .any(|(i, b)| *b == b'\r' && body.get(i + 1) != Some(&b'\n'));
    let mut header: Vec<String> = vec![];
    let mut bad: Vec<(u64, BadRow)> = vec![];
    for_each_record(path, body, separator, |index, record| {
        let line = record.position().map_or(0, |p| p.line());
        if index == 0 {
            header = record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
            for (i, name) in header.iter().enumerate() {
                let key = name.trim().to_ascii_lowercase();
                if let Some(first) = seen.insert(key.clone(), i + 1) {
                    if field_roles().contains_key(&key) {
                        return Err(Error::input(
                            path,
                            format!(
                                "line {line}: the column `{name}` appears twice in the header (columns {first} and {}): which one holds the value is unknown",
                                i + 1
                            ),
                        ));
                    }
                }
            }
            if let Some(i) = record.iter().position(|f| std::str::from_utf8(f).is_err()) {
                return Err(Error::input(
                    path,
                    format!(
                        "line {line}, column {}: the header is not UTF-8 (a Latin-1 export? convert it with `iconv -f latin1 -t utf-8`)",
                        i + 1
                    ),
                ));
            }
        } else if let Some(b) = check_record(record, &header, line) {
            bad.push((index, b));
        }
        Ok(())
    })?;
    if bad.is_empty() && !bare_cr {
        return Ok(Checked::default());
    }
    if policy == BadRowPolicy::Error && !bad.is_empty() {
        return Err(first_error(path, &bad[0].1));
    }
    let mut writer = csv::WriterBuilder::new()
        .delimiter(separator)
        .from_writer(vec![]);
    let write_err = |e: csv::Error| Error::input(path, format!("cannot repair the CSV rows: {e}"));
    let mut kept_rows = vec![];
    let mut row = 0u32;
    let mut bad_at = bad.iter().map(|(i, _)| *i).peekable();
    for_each_record(path, body, separator, |index, record| {
        let is_bad = bad_at.peek() == Some(&index);
        if is_bad {
            bad_at.next();
        }
        if !is_bad {
            writer.write_byte_record(record).map_err(write_err)?;
            row += u32::from(index > 0);
        } else if policy == BadRowPolicy::Keep {
            // A record with too many or too few fields cannot say which value belongs to
            // which column (the extra or missing one may be anywhere): all of it is null.
            // Otherwise bytes that are not UTF-8 become U+FFFD (and then fail to parse as
            // numbers), and an unreadable `other` JSON string is dropped.
            let shifted = record.len() != header.len();
            let fields: Vec<String> = (0..header.len())
                .map(|k| {
                    if shifted {
                        return String::new();
                    }
                    let v = String::from_utf8_lossy(record.get(k).unwrap_or(b"")).into_owned();
                    let broken_other =
                        header[k].eq_ignore_ascii_case("other") && check_other_string(&v).is_some();
                    if broken_other {
                        String::new()
                    } else {
                        v
                    }
                })
                .collect();
            writer.write_record(&fields).map_err(write_err)?;
            row += 1;
            kept_rows.push(row);
        }
        Ok(())
    })?;
    let repaired = writer
        .into_inner()
        .map_err(|e| Error::input(path, format!("cannot repair the CSV rows: {e}")))?;
    Ok(Checked {
        bad: bad.into_iter().map(|(_, b)| b).collect(),
        repaired: Some(repaired),
        kept_rows,
    })
}

/// Calls `f` with (index, record) for every record; index 0 is the header. The csv crate
/// skips blank lines itself.
fn for_each_record(
    path: &Path,
    body: &[u8],
    separator: u8,
    mut f: impl FnMut(u64, &csv::ByteRecord) -> Result<()>,
) -> Result<()> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(separator)
        .has_headers(false)
        .flexible(true)
        .from_reader(body);
    let mut record = csv::ByteRecord::new();
    let mut index = 0u64;
    while reader
        .read_byte_record(&mut record)
        .map_err(|e| Error::input(path, format!("cannot read as CSV: {e}")))?
    {
        f(index, &record)?;
        index += 1;
    }
    Ok(())
}

fn check_record(record: &csv::ByteRecord, header: &[String], line: u64) -> Option<BadRow> {
    if record.len() != header.len() {
        return Some(BadRow {
            line,
            column: None,
            field: None,
            message: format!(
                "expected {} fields as in the header, found {}{}",
                header.len(),
                record.len(),
                if record.len() < header.len() {
                    " (a truncated or half-written row?)"
                } else {
                    " (an unquoted separator inside a value?)"
                }
            ),
            kind: BadKind::Unreadable,
        });
    }
    for (k, field) in record.iter().enumerate() {
        let text = std::str::from_utf8(field);
        if let (Ok(t), true) = (text, header[k].eq_ignore_ascii_case("other")) {
            if let Some(f) = check_other_string(t) {
                return Some(BadRow {
                    line,
                    column: Some(k as u64 + 1),
                    field: Some(header[k].clone()),
                    message: f.message,
                    kind: BadKind::Unreadable,
                });
            }
        }
        if let Err(e) = text {
            let bad_byte = field[e.valid_up_to()];
            return Some(BadRow {
                line,
                column: Some(k as u64 + 1),
                field: Some(header[k].clone()),
                message: format!(
                    "byte 0x{bad_byte:02X} is not UTF-8 (a Latin-1 export? convert it with `iconv -f latin1 -t utf-8`)"
                ),
                kind: BadKind::Unreadable,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(line: &str) -> Option<(BadRow, String)> {
        check_json_line(line.as_bytes()).err()
    }

    #[test]
    fn good_rows_pass() {
        for line in [
            r#"{"request_id":"a","upstream_headers_ms":120}"#,
            r#"{"request_id":"a","other":{"timing":{"upstream_headers_ms":1}}}"#,
            r#"{"request_id":"a","other":"{\"timing\":{\"upstream_headers_ms\":1}}"}"#,
            r#"{"request_id":"a","other":""}"#,
            r#"{"request_id":"a","messages":[{"role":"user","content":"x"},{"role":"user","content":"x"}]}"#,
        ] {
            assert!(bad(line).is_none(), "{line}");
        }
    }

    #[test]
    fn duplicate_keys_are_found_at_every_level_read() {
        let (b, keep) = bad(r#"{"a":1,"upstream_headers_ms":1,"upstream_headers_ms":2}"#).unwrap();
        assert_eq!(b.field.as_deref(), Some("upstream_headers_ms"));
        assert_eq!(keep, r#"{"a":1}"#);
        let (b, keep) = bad(r#"{"a":1,"other":{"timing":{"x":1,"x":2,"y":3}}}"#).unwrap();
        assert_eq!(b.field.as_deref(), Some("other.timing.x"));
        assert_eq!(keep, r#"{"a":1,"other":{"timing":{"y":3}}}"#);
        let (b, keep) = bad(r#"{"a":1,"other":"{\"timing\":{\"x\":1,\"x\":2}}"}"#).unwrap();
        assert_eq!(b.field.as_deref(), Some("other"));
        assert_eq!(keep, r#"{"a":1}"#);
    }

    #[test]
    fn broken_lines_have_a_column_and_keep_nothing() {
        let (b, keep) = bad(r#"{"request_id":"r2","model":"#).unwrap();
        assert_eq!(b.column, Some(27));
        assert_eq!(keep, "{}");
        assert!(bad("[1,2]").is_some());
        assert!(bad(r#"{"a":1} trailing"#).is_some());
        let deep = format!("{{\"other\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        let (b, _) = bad(&deep).unwrap();
        assert_eq!(b.message, "nesting deeper than 128 levels");
    }

    #[test]
    fn integers_beyond_i64_are_found_outside_strings_only() {
        assert!(has_big_integer_literal(r#"{"a":99999999999999999999999}"#));
        assert!(has_big_integer_literal(r#"{"a":9223372036854775808}"#));
        assert!(!has_big_integer_literal(r#"{"a":9223372036854775807}"#));
        assert!(!has_big_integer_literal(
            r#"{"a":"99999999999999999999999"}"#
        ));
        assert!(!has_big_integer_literal(
            r#"{"a":1e23,"b":1.99999999999999999999}"#
        ));
        assert!(!has_big_integer_literal(
            r#"{"a":"x\"99999999999999999999999"}"#
        ));
        // A catalogue count: a wrong-typed value, kept as text so it is counted unparsed.
        let (b, keep) =
            bad(r#"{"request_id":"a","output_tokens":99999999999999999999999}"#).unwrap();
        assert_eq!(b.kind, BadKind::Value);
        assert_eq!(
            keep,
            r#"{"request_id":"a","output_tokens":"an integer beyond the 64-bit range"}"#
        );
        // A field never read: dropped from the copy polars reads, nothing reported.
        let (b, keep) = bad(r#"{"request_id":"a","quota":18446744073709551615}"#).unwrap();
        assert_eq!(b.kind, BadKind::Repair);
        assert_eq!(keep, r#"{"request_id":"a"}"#);
        // A float of that size is a float.
        assert!(bad(r#"{"request_id":"a","quota":1e30}"#).is_none());
    }

    #[test]
    fn other_strings_that_are_not_objects_are_bad() {
        for other in [r#""{not json""#, r#""[1,2]""#, r#""42""#] {
            let line = format!(r#"{{"request_id":"a","other":{other}}}"#);
            let (b, keep) = bad(&line).unwrap();
            assert_eq!(b.field.as_deref(), Some("other"), "{line}");
            assert_eq!(keep, r#"{"request_id":"a"}"#);
        }
    }

    #[test]
    fn line_numbers_count_blank_lines_and_cross_the_thread_split() {
        let good = r#"{"request_id":"a","upstream_headers_ms":1}"#;
        let mut text = String::new();
        let n = 60_000; // > 1 MiB, so two threads check it
        for i in 1..=n {
            match i {
                3 => text.push_str("\r\n"),
                7 | 45_000 => text.push_str("{broken\n"),
                _ => {
                    text.push_str(good);
                    text.push_str("\r\n");
                }
            }
        }
        assert!(text.len() > 1 << 20);
        let lines: Vec<u64> = find_bad_lines(text.as_bytes())
            .into_iter()
            .map(|(b, _)| b.line)
            .collect();
        assert_eq!(lines, vec![7, 45_000]);
    }
}
