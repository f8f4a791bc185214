//! One new-api row parsed once, for the reading that makes a JSON-lines log's typed copy
//! (`lines`): the keys the adapter reads ([`super::KEYS`]), each value as the JSON type
//! it has, and `other` (an object, or a JSON string of one) down to `frt`,
//! `cache_tokens`, `stream_status.status` and `request_timing`. Every other key, `content`
//! among them, is skipped as it is parsed: its text is never copied.
//!
//! A row is read here only when the generic JSON-lines check (`rowcheck`) would find
//! nothing wrong with it; anything it could object to (a key given twice, a catalogue field
//! holding an object or a boolean, an `other` string that is not a JSON object, a `timing`
//! object inside `other`, a number beyond 64 bits) makes [`parse`] give up on the row, and
//! the caller reads the file through the check and polars' reader instead, which say what
//! is wrong and apply `--on-bad-row`. So the fast reading never decides a row's fate
//! differently from the slow one.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{KEYS, SPANS};
use crate::catalogue::Kind;

/// The indices of the scalar keys in [`KEYS`].
pub mod key {
    pub const ID: usize = 0;
    pub const REQUEST_ID: usize = 1;
    pub const CREATED_AT: usize = 2;
    pub const TYPE: usize = 3;
    pub const USERNAME: usize = 4;
    pub const USER_ID: usize = 5;
    pub const TOKEN_NAME: usize = 6;
    pub const MODEL_NAME: usize = 7;
    pub const PROMPT_TOKENS: usize = 8;
    pub const COMPLETION_TOKENS: usize = 9;
    pub const USE_TIME: usize = 10;
    pub const ELAPSED_TIME: usize = 11;
    pub const IS_STREAM: usize = 12;
    pub const CHANNEL: usize = 13;
    pub const CHANNEL_ID: usize = 14;
    pub const CHANNEL_NAME: usize = 15;
    pub const GROUP: usize = 16;
    pub const IP: usize = 17;
}

/// The index of `other` in [`KEYS`]; the keys before it are scalars.
pub const OTHER: usize = 18;
/// The index of the bare `request_timing` record in [`KEYS`].
pub const REQUEST_TIMING: usize = 19;
/// `request_timing`'s figures: `total_ms`, then the spans.
pub const TIMING_KEYS: usize = 1 + SPANS.len();

/// A scalar value as a row holds it.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Cell<'a> {
    #[default]
    Null,
    Text(Cow<'a, str>),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Cell<'_> {
    /// As polars' reader puts the value into a text column, trimmed, blank as none (the
    /// adapter's `text`).
    pub fn text(&self) -> Option<Cow<'_, str>> {
        let t: Cow<'_, str> = match self {
            Cell::Null => return None,
            Cell::Text(s) => Cow::Borrowed(s.trim()),
            Cell::Int(i) => Cow::Owned(i.to_string()),
            Cell::Float(f) => Cow::Owned(f.to_string()),
            Cell::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        };
        (!t.is_empty()).then_some(t)
    }

    /// As `json_decode` puts the value into a text field: a string as it is, a number or
    /// a boolean as its JSON text.
    pub fn raw_text(&self) -> Option<Cow<'_, str>> {
        match self {
            Cell::Null => None,
            Cell::Text(s) => Some(Cow::Borrowed(s)),
            Cell::Int(i) => Some(Cow::Owned(i.to_string())),
            Cell::Float(f) => Some(Cow::Owned(f.to_string())),
            Cell::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
        }
    }

    /// Whether the value holds anything, and the number it reads as: the adapter's text
    /// cast to a float (`canonical::read_number`).
    pub fn number(&self) -> (bool, Option<f64>) {
        match self {
            Cell::Null => (false, None),
            Cell::Int(i) => (true, Some(*i as f64)),
            Cell::Float(f) => (true, Some(*f)),
            Cell::Bool(_) => (true, None),
            Cell::Text(s) => crate::source::canonical::read_number(s),
        }
    }

    /// As text cast to a 64-bit integer (the log type).
    pub fn integer(&self) -> Option<i64> {
        match self {
            Cell::Int(i) => Some(*i),
            Cell::Text(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// The value, its text copied out of the line.
    pub(super) fn owned(self) -> Cell<'static> {
        match self {
            Cell::Null => Cell::Null,
            Cell::Text(s) => Cell::Text(Cow::Owned(s.into_owned())),
            Cell::Int(i) => Cell::Int(i),
            Cell::Float(f) => Cell::Float(f),
            Cell::Bool(b) => Cell::Bool(b),
        }
    }
}

/// A `request_timing` record: `total_ms` and the spans, in [`SPANS`] order after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timing(pub [Cell<'static>; TIMING_KEYS]);

/// What the adapter reads of `other`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Other {
    pub frt: Cell<'static>,
    pub cache_tokens: Cell<'static>,
    /// `stream_status.status`.
    pub status: Cell<'static>,
    pub request_timing: Option<Timing>,
}

/// A row's values of [`KEYS`]: the scalars by their index, `other` and the bare record.
#[derive(Debug, Default, PartialEq)]
pub struct Row<'a> {
    pub cells: [Cell<'a>; OTHER],
    pub other: Option<Other>,
    pub bare: Option<Timing>,
}

impl Row<'_> {
    /// Every value taken out, for the next line to be read into.
    pub(super) fn clear(&mut self) {
        self.cells.iter_mut().for_each(|c| *c = Cell::Null);
        self.other = None;
        self.bare = None;
    }
}

/// The row on `line`, or none when the line is anything the generic check could find at
/// fault (see the module documentation).
pub fn parse(line: &str) -> Option<Row<'_>> {
    let mut row = Row::default();
    parse_into(line, &mut row, &mut KeyCache::default())?;
    Some(row)
}

/// The row on `line` as serde alone reads it (the scanner's reference).
#[cfg(test)]
pub(super) fn parse_by_serde(line: &str) -> Option<Row<'_>> {
    let mut row = Row::default();
    let mut de = serde_json::Deserializer::from_str(line);
    RowSeed {
        row: &mut row,
        keys: &mut KeyCache::default(),
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    Some(row)
}

/// Each row of `text` (whole lines, the last one's line end optional) handed to `each`;
/// none, and no more rows, at the first line that is not one row of its own (a blank line,
/// a row over two lines, two on one) or that the generic check could find at fault.
///
/// Every line is parsed into the same `Row`, cleared between lines, and its keys looked up
/// through a cache of the keys the lines before had at each place: a log's rows have the
/// same keys in the same order, so a key costs one comparison, not a search.
pub fn parse_lines<'a>(text: &'a str, mut each: impl FnMut(&Row<'a>)) -> Option<()> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() {
        // Nothing, or a blank line.
        return text.is_empty().then_some(());
    }
    let mut row = Row::default();
    let mut keys = KeyCache::default();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', body.as_bytes()).chain([body.len()]) {
        parse_into(&body[start..end], &mut row, &mut keys)?;
        each(&row);
        start = end + 1;
    }
    Some(())
}

/// `line` as one row into `row`, its earlier values cleared; none as [`parse`] says. The
/// scanner reads the usual row (`scan`); serde the rest, and decides.
fn parse_into<'a>(line: &'a str, row: &mut Row<'a>, keys: &mut KeyCache) -> Option<()> {
    if super::scan::scan_into(line, row, keys) {
        return Some(());
    }
    let mut de = serde_json::Deserializer::from_str(line);
    RowSeed { row, keys }.deserialize(&mut de).ok()?;
    // The row ends its line, followed by white space at most.
    de.end().ok()
}
/// `other` given as text (a CSV or Parquet export's column): none when blank; an error
/// when it is not a JSON object the adapter can read.
pub fn parse_other(text: &str) -> Result<Option<Other>, serde_json::Error> {
    if let Some(other) = super::scan::other_string(text) {
        return Ok(other);
    }
    parse_other_as(text, OtherVisitor { strict: false })
}

/// `request_timing` given as text: none when blank or not a JSON object of figures.
pub fn parse_timing(text: &str) -> Option<Timing> {
    TimingSeed(true).visit_str::<serde_json::Error>(text).ok()?
}

fn parse_other_as(text: &str, visitor: OtherVisitor) -> Result<Option<Other>, serde_json::Error> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let other = de.deserialize_map(visitor)?;
    de.end()?;
    Ok(Some(other))
}

/// Why a row is not read here; never shown (the fallback's check says what is wrong).
#[derive(Debug)]
struct GiveUp;

fn give_up<E: de::Error>() -> E {
    E::custom(GiveUp)
}

impl fmt::Display for GiveUp {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("read by the generic check instead")
    }
}

/// A key: the index of one of a known list, or another key's text (kept to find one
/// given twice).
enum Key<'de> {
    Known(usize),
    Other(Cow<'de, str>),
}

struct KeySeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key<'de>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(match find(self.0, v) {
            Some(i) => Key::Known(i),
            None => Key::Other(Cow::Borrowed(v)),
        })
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(match find(self.0, v) {
            Some(i) => Key::Known(i),
            None => Key::Other(Cow::Owned(v.to_string())),
        })
    }
}

/// The place of `key` among `keys`: compared by length and first byte before the text
/// (called for every key of every row).
pub(super) fn find(keys: &[&str], key: &str) -> Option<usize> {
    let b = key.as_bytes();
    let first = *b.first()?;
    keys.iter()
        .position(|k| k.len() == b.len() && k.as_bytes()[0] == first && k.as_bytes() == b)
}

/// Marks `i` met, or gives up on a key met twice.
pub(super) fn meet<E: de::Error>(met: &mut u32, i: usize) -> Result<(), E> {
    if *met & (1 << i) != 0 {
        return Err(give_up());
    }
    *met |= 1 << i;
    Ok(())
}

/// The other keys of an object, by their hashes, to find one given twice without an
/// allocation per row. Two keys of equal hash count as the same: a false match only sends
/// the row to the slow reading, which judges it.
#[derive(Default)]
pub(super) struct Seen {
    hashes: [u64; 32],
    len: usize,
}

impl Seen {
    /// Note `key`; gives up on a key met before, or on more keys than are held.
    pub(super) fn meet<E: de::Error>(&mut self, key: &str) -> Result<(), E> {
        self.meet_hash(key_hash(key))
    }

    /// As `meet`, for the key of hash `h`.
    pub(super) fn meet_hash<E: de::Error>(&mut self, h: u64) -> Result<(), E> {
        if self.len == self.hashes.len() || self.hashes[..self.len].contains(&h) {
            return Err(give_up());
        }
        self.hashes[self.len] = h;
        self.len += 1;
        Ok(())
    }
}

/// The hash [`Seen`] tells keys apart by.
fn key_hash(key: &str) -> u64 {
    use std::hash::BuildHasher;
    static HASH: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(7);
    HASH.hash_one(key)
}

/// The catalogue kind of a top-level key, as the generic check looks it up.
fn catalogue_kind(key: &str) -> Option<Kind> {
    crate::source::rowcheck::catalogue_kind(key)
}

/// Whether the generic check would find `cell` at fault under a catalogue field of `kind`:
/// a boolean outside labels and flags, or a whole number beyond 64 bits (which serde
/// reads as a float).
pub(super) fn faulty(kind: Kind, cell: &Cell<'_>) -> bool {
    match cell {
        Cell::Bool(_) => !matches!(kind, Kind::Label | Kind::Flag),
        Cell::Float(f) => f.fract() == 0.0 && f.abs() >= 9.2e18,
        _ => false,
    }
}

/// The kinds of [`KEYS`] in the catalogue, looked up once.
pub(super) fn key_kinds() -> &'static [Option<Kind>; OTHER] {
    static KINDS: std::sync::OnceLock<[Option<Kind>; OTHER]> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| std::array::from_fn(|i| catalogue_kind(KEYS[i])))
}

/// What a top-level key is, worked out once per place in the row (see [`KeyCache`]).
#[derive(Clone, Copy)]
pub(super) enum Slot {
    /// One of [`KEYS`].
    Known(usize),
    /// Another key: its catalogue kind, whether it is named like a nested timing object
    /// (the check's to judge), and its hash for [`Seen`].
    Other {
        kind: Option<Kind>,
        nested_timing: bool,
        hash: u64,
    },
}

impl Slot {
    fn of(key: &str) -> Slot {
        match find(KEYS, key) {
            Some(i) => Slot::Known(i),
            None => Slot::Other {
                kind: catalogue_kind(key),
                nested_timing: key == "timing" || key == "ai_log",
                hash: key_hash(key),
            },
        }
    }
}

/// The top-level keys of the rows read before, by their place in the row, with what each
/// is: a key found at the place it held in the row before is not looked up again.
#[derive(Default)]
pub(super) struct KeyCache(Vec<(Box<str>, Slot)>);

impl KeyCache {
    /// What `key`, the row's key at `place`, is.
    pub(super) fn slot(&mut self, place: usize, key: &str) -> Slot {
        if let Some((k, slot)) = self.0.get(place) {
            if **k == *key {
                return *slot;
            }
        }
        let slot = Slot::of(key);
        if place < self.0.len() {
            self.0[place] = (key.into(), slot);
        } else if place == self.0.len() {
            self.0.push((key.into(), slot));
        }
        slot
    }
}

/// A top-level key, looked up through the cache.
struct RowKey<'c> {
    keys: &'c mut KeyCache,
    place: usize,
}

impl<'de> DeserializeSeed<'de> for RowKey<'_> {
    type Value = Slot;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Slot, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for RowKey<'_> {
    type Value = Slot;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Slot, E> {
        Ok(self.keys.slot(self.place, v))
    }
}

/// A row parsed into `row`, whose values of the row before are cleared first.
struct RowSeed<'r, 'a, 'c> {
    row: &'r mut Row<'a>,
    keys: &'c mut KeyCache,
}

impl<'a> DeserializeSeed<'a> for RowSeed<'_, 'a, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'a>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'a> Visitor<'a> for RowSeed<'_, 'a, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'a>>(self, mut map: A) -> Result<(), A::Error> {
        let row = self.row;
        row.clear();
        let mut met = 0u32;
        let mut others = Seen::default();
        let kinds = key_kinds();
        let mut place = 0;
        while let Some(slot) = map.next_key_seed(RowKey {
            keys: &mut *self.keys,
            place,
        })? {
            place += 1;
            match slot {
                Slot::Known(i) => {
                    meet(&mut met, i)?;
                    match i {
                        OTHER => row.other = map.next_value_seed(OtherSeed)?,
                        REQUEST_TIMING => row.bare = map.next_value_seed(TimingSeed(true))?,
                        _ => {
                            let cell: Cell<'a> = map.next_value_seed(CellSeed)?;
                            if kinds[i].is_some_and(|k| faulty(k, &cell)) {
                                return Err(give_up());
                            }
                            row.cells[i] = cell;
                        }
                    }
                }
                Slot::Other {
                    kind,
                    nested_timing,
                    hash,
                } => {
                    match kind {
                        Some(kind) => {
                            let cell = map.next_value_seed(CellSeed)?;
                            if faulty(kind, &cell) {
                                return Err(give_up());
                            }
                        }
                        None if nested_timing => return Err(give_up()),
                        None => {
                            map.next_value::<Skip>()?;
                        }
                    }
                    others.meet_hash(hash)?;
                }
            }
        }
        Ok(())
    }
}

/// A value not read, parsed as the check parses it: serde's `IgnoredAny` skips a string
/// without decoding its escapes, and so would accept a lone surrogate (`\ud800`) the
/// check finds at fault.
struct Skip;

impl<'de> serde::Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
        d.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Skip)
    }
}

/// A scalar; an object or an array gives up.
struct CellSeed;

impl<'de> DeserializeSeed<'de> for CellSeed {
    type Value = Cell<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cell<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CellSeed {
    type Value = Cell<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("text, a number or a boolean")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Cell<'de>, E> {
        Ok(Cell::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Cell<'de>, E> {
        Ok(Cell::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Cell<'de>, E> {
        Ok(Cell::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Cell<'de>, E> {
        Ok(Cell::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Cell<'de>, E> {
        // Beyond i64: the check finds such a value at fault in a catalogue field.
        i64::try_from(v).map(Cell::Int).map_err(|_| give_up())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Cell<'de>, E> {
        cell_of_float(v).ok_or_else(give_up)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cell<'de>, E> {
        Ok(Cell::Text(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Cell<'de>, E> {
        Ok(Cell::Text(Cow::Owned(v.to_string())))
    }
}

/// A float as a cell; none for a whole number beyond 64 bits: serde reads an integer that
/// large as a float, and such a value the slow reading drops or reports, so it is left to it.
pub(super) fn cell_of_float<'a>(v: f64) -> Option<Cell<'a>> {
    (v.fract() != 0.0 || v.abs() < 9.2e18).then_some(Cell::Float(v))
}

/// Whether `text` holds 19 digits in a row (any integer beyond 64 bits does).
pub(super) fn has_long_digit_run(text: &str) -> bool {
    let mut run = 0;
    for b in text.bytes() {
        run = if b.is_ascii_digit() { run + 1 } else { 0 };
        if run >= 19 {
            return true;
        }
    }
    false
}

/// `other`: null, a blank string, an object or a JSON string of one.
struct OtherSeed;

impl<'de> DeserializeSeed<'de> for OtherSeed {
    type Value = Option<Other>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Other>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for OtherSeed {
    type Value = Option<Other>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object or a JSON string of one")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<Other>, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Option<Other>, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<Other>, E> {
        // An integer beyond 64 bits anywhere in the string costs the check the whole of
        // it; a run of 19 digits may be one (in text too: the slow reading then judges).
        if has_long_digit_run(v) {
            return Err(give_up());
        }
        parse_other_as(v, OtherVisitor { strict: true }).map_err(|_| give_up())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<Other>, A::Error> {
        OtherVisitor { strict: true }.visit_map(map).map(Some)
    }
}

pub(super) const OTHER_KEYS: &[&str] = &["frt", "cache_tokens", "stream_status", "request_timing"];

/// `other`'s fields; `strict` gives up where the generic check would judge the row (a
/// `timing` object inside: gateway timings the generic reading maps).
struct OtherVisitor {
    strict: bool,
}

impl<'de> Visitor<'de> for OtherVisitor {
    type Value = Other;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Other, A::Error> {
        let mut other = Other::default();
        let mut met = 0u32;
        let mut others = Seen::default();
        while let Some(key) = map.next_key_seed(KeySeed(OTHER_KEYS))? {
            match key {
                Key::Known(i) => {
                    meet(&mut met, i)?;
                    match i {
                        0 => other.frt = map.next_value_seed(CellSeed)?.owned(),
                        1 => other.cache_tokens = map.next_value_seed(CellSeed)?.owned(),
                        2 => other.status = map.next_value_seed(StatusSeed)?,
                        _ => other.request_timing = map.next_value_seed(TimingSeed(false))?,
                    }
                }
                Key::Other(k) if self.strict && k == "timing" => return Err(give_up()),
                Key::Other(k) => {
                    map.next_value::<Skip>()?;
                    others.meet(&k)?;
                }
            }
        }
        Ok(other)
    }
}

/// `stream_status`: null or an object; its `status`.
struct StatusSeed;

impl<'de> DeserializeSeed<'de> for StatusSeed {
    type Value = Cell<'static>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cell<'static>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StatusSeed {
    type Value = Cell<'static>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Cell<'static>, E> {
        Ok(Cell::Null)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cell<'static>, A::Error> {
        let mut status = Cell::Null;
        let mut met = 0u32;
        let mut others = Seen::default();
        while let Some(key) = map.next_key_seed(KeySeed(&["status"]))? {
            match key {
                Key::Known(i) => {
                    meet(&mut met, i)?;
                    status = map.next_value_seed(CellSeed)?.owned();
                }
                Key::Other(k) => {
                    map.next_value::<Skip>()?;
                    others.meet(&k)?;
                }
            }
        }
        Ok(status)
    }
}

/// `request_timing`: null or an object (at the top of a row also a JSON string of one).
struct TimingSeed(bool);

impl<'de> DeserializeSeed<'de> for TimingSeed {
    type Value = Option<Timing>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Timing>, D::Error> {
        d.deserialize_any(self)
    }
}

/// `total_ms` and the spans, in `Timing`'s order.
const TIMING_NAMES: [&str; TIMING_KEYS] =
    ["total_ms", SPANS[0], SPANS[1], SPANS[2], SPANS[3], SPANS[4]];

impl<'de> Visitor<'de> for TimingSeed {
    type Value = Option<Timing>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<Timing>, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<Timing>, E> {
        if !self.0 {
            return Err(give_up());
        }
        if v.trim().is_empty() {
            return Ok(None);
        }
        let mut de = serde_json::Deserializer::from_str(v);
        let timing = de
            .deserialize_map(TimingSeed(false))
            .and_then(|t| de.end().map(|()| t));
        timing.map_err(|_| give_up())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Timing>, A::Error> {
        let mut timing = Timing::default();
        let mut met = 0u32;
        let mut others = Seen::default();
        while let Some(key) = map.next_key_seed(KeySeed(&TIMING_NAMES))? {
            match key {
                Key::Known(i) => {
                    meet(&mut met, i)?;
                    timing.0[i] = map.next_value_seed(CellSeed)?.owned();
                }
                Key::Other(k) => {
                    map.next_value::<Skip>()?;
                    others.meet(&k)?;
                }
            }
        }
        Ok(Some(timing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_indices_name_the_keys() {
        use key::*;
        let named = [
            (ID, "id"),
            (REQUEST_ID, "request_id"),
            (CREATED_AT, "created_at"),
            (TYPE, "type"),
            (USERNAME, "username"),
            (USER_ID, "user_id"),
            (TOKEN_NAME, "token_name"),
            (MODEL_NAME, "model_name"),
            (PROMPT_TOKENS, "prompt_tokens"),
            (COMPLETION_TOKENS, "completion_tokens"),
            (USE_TIME, "use_time"),
            (ELAPSED_TIME, "elapsed_time"),
            (IS_STREAM, "is_stream"),
            (CHANNEL, "channel"),
            (CHANNEL_ID, "channel_id"),
            (CHANNEL_NAME, "channel_name"),
            (GROUP, "group"),
            (IP, "ip"),
            (OTHER, "other"),
            (REQUEST_TIMING, "request_timing"),
        ];
        for (i, name) in named {
            assert_eq!(KEYS[i], name);
        }
        assert_eq!(KEYS.len(), 20);
    }

    #[test]
    fn a_row_keeps_the_keys_read_and_decodes_other() {
        let line = r#"{"id":7,"type":2,"model_name":" m ","use_time":3,"content":"secret","is_stream":true,"other":"{\"frt\":216.2,\"cache_tokens\":\"12\",\"stream_status\":{\"status\":\"canceled\"},\"request_timing\":{\"total_ms\":30}}"}"#;
        let row = parse(line).unwrap();
        assert_eq!(row.cells[0], Cell::Int(7));
        assert_eq!(row.cells[7].text().as_deref(), Some("m"));
        assert_eq!(row.cells[12].text().as_deref(), Some("true"));
        let other = row.other.unwrap();
        assert_eq!(other.frt.number(), (true, Some(216.2)));
        assert_eq!(other.cache_tokens.number(), (true, Some(12.0)));
        assert_eq!(other.status.text().as_deref(), Some("canceled"));
        assert_eq!(
            other.request_timing.unwrap().0[0].number(),
            (true, Some(30.0))
        );
    }

    #[test]
    fn anything_the_check_could_object_to_is_given_up() {
        for line in [
            r#"{"type":2,"type":2}"#,
            r#"{"content":"a","content":"b"}"#,
            r#"{"model_name":{"a":1}}"#,
            r#"{"prompt_tokens":true}"#,
            r#"{"other":"not json"}"#,
            r#"{"other":3}"#,
            r#"{"other":{"timing":{}}}"#,
            r#"{"other":{"frt":1,"frt":2}}"#,
            r#"{"timing":{"total_handler_ms":1}}"#,
            r#"{"use_time":18446744073709551615}"#,
            r#"[1]"#,
            r#"{"type":2} x"#,
        ] {
            assert!(parse(line).is_none(), "{line}");
        }
        assert!(parse(r#"{"other":"  ","request_timing":"{\"total_ms\":5}"}"#).is_some());
    }

    #[test]
    fn lines_are_one_row_each() {
        let count = |text: &str| {
            let mut n = 0;
            parse_lines(text, |_| n += 1).map(|()| n)
        };
        assert_eq!(count(""), Some(0));
        assert_eq!(count("{\"type\":2}"), Some(1));
        assert_eq!(count("{\"type\":2}\n {\"type\":5} \r\n"), Some(2));
        for bad in [
            "\n",
            "{\"type\":2}\n\n{\"type\":2}\n",
            "{\"type\":2} {\"type\":2}\n",
            "{\"type\":\n2}\n",
            "{\"type\":2}\n{\"type\"",
        ] {
            assert_eq!(count(bad), None, "{bad:?}");
        }
    }
}
