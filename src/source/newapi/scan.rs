//! A new-api row read by a scanner of its own, before serde is asked: the lines of a
//! new-api log are flat objects of numbers and plain text, with `other` a JSON string of
//! one more flat object, and reading them byte by byte here costs a fraction of serde's
//! visitors (whose string scanning starts over at every escaped quote of `other`).
//!
//! The scanner reads only what it is sure of, and leaves the rest to serde: a key with an
//! escape, a `\u` escape, an object or array where a scalar is read (values not read may
//! be any JSON, to a depth of 16), a key given twice anywhere, a number serde_json would
//! read otherwise (a leading zero, 19 digits or more, a negative zero, a float out of
//! range), anything the generic check could object to. Then the row is read by serde
//! ([`super::row`]), which decides: the scanner never accepts a row serde would not read,
//! nor reads one otherwise (the differential tests in `lines` and `one_parse_fuzz` check
//! both).

use std::borrow::Cow;

use super::row::{
    cell_of_float, faulty, find, has_long_digit_run, key_kinds, meet, Cell, KeyCache, Other, Row,
    Seen, Slot, OTHER, OTHER_KEYS,
};

/// Whether the scanner read `line` into `row` (cleared first) as serde would; false when
/// serde must read it (and `row` holds anything).
pub(super) fn scan_into<'a>(line: &'a str, row: &mut Row<'a>, keys: &mut KeyCache) -> bool {
    row.clear();
    let mut s = Scanner { text: line, at: 0 };
    scan_row(&mut s, row, keys).is_some() && s.rest_is_blank()
}

/// The scanner's reading of `line`, if it reads it (the tests' view).
#[cfg(test)]
pub(super) fn scanned(line: &str) -> Option<Row<'_>> {
    let mut row = Row::default();
    scan_into(line, &mut row, &mut KeyCache::default()).then_some(row)
}

/// The text being read and the place reached.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

/// A value as the scanner reads it.
enum Value<'a> {
    Cell(Cell<'a>),
    /// An object, its opening brace taken: read into (`other.stream_status`) or skipped.
    Object,
    /// An array, its opening bracket taken: skipped.
    Array,
}

/// The error type the shared checks (`meet`, `Seen`) are asked in: only whether they
/// pass is read.
type NoError = serde::de::value::Error;

/// How deep the scanner skips nested values; deeper ones are serde's (whose limit is 128).
const DEPTH: u32 = 16;

impl<'a> Scanner<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn skip_blank(&mut self) {
        let b = self.bytes();
        while matches!(b.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The next byte after white space, taken.
    fn next(&mut self) -> Option<u8> {
        self.skip_blank();
        let c = *self.bytes().get(self.at)?;
        self.at += 1;
        Some(c)
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_blank();
        self.bytes().get(self.at).copied()
    }

    fn rest_is_blank(&mut self) -> bool {
        self.skip_blank();
        self.at == self.text.len()
    }

    /// A string's text, its opening quote taken: borrowed where it has no escape, none
    /// where it has an escape the scanner leaves to serde (or is not ended, or holds a
    /// control character).
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let b = self.bytes();
        let start = self.at;
        let end = stop(b, start)?;
        match b[end] {
            b'"' => {
                self.at = end + 1;
                Some(Cow::Borrowed(&self.text[start..end]))
            }
            b'\\' => self.escaped(start).map(Cow::Owned),
            // A control character, which JSON does not allow in a string.
            _ => None,
        }
    }

    /// A string with an escape, decoded: the simple escapes only.
    fn escaped(&mut self, start: usize) -> Option<String> {
        let b = self.bytes();
        let mut out = String::with_capacity(64);
        let mut from = start;
        loop {
            let at = stop(b, from)?;
            if b[at] < 0x20 {
                return None;
            }
            out.push_str(&self.text[from..at]);
            if b[at] == b'"' {
                self.at = at + 1;
                return Some(out);
            }
            out.push(match b.get(at + 1)? {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                _ => return None,
            });
            from = at + 2;
        }
    }

    /// The entries of an object, its opening brace taken: `each` is handed each key (its
    /// colon taken) and reads the value; none where `each` gives up or the object is not
    /// well formed.
    fn entries(
        &mut self,
        mut each: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            if self.next()? != b'"' {
                return None;
            }
            let key = self.string()?;
            if self.next()? != b':' {
                return None;
            }
            each(self, key)?;
            match self.next()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// A scalar value, or an object (not read: its opening brace taken).
    fn value(&mut self) -> Option<Value<'a>> {
        let c = self.next()?;
        let literal = |s: &mut Self, rest: &[u8], cell: Cell<'a>| {
            let b = s.bytes();
            (b.get(s.at..s.at + rest.len()) == Some(rest)).then(|| {
                s.at += rest.len();
                Value::Cell(cell)
            })
        };
        match c {
            b'"' => self.string().map(|s| Value::Cell(Cell::Text(s))),
            b'{' => Some(Value::Object),
            b'[' => Some(Value::Array),
            b't' => literal(self, b"rue", Cell::Bool(true)),
            b'f' => literal(self, b"alse", Cell::Bool(false)),
            b'n' => literal(self, b"ull", Cell::Null),
            b'-' | b'0'..=b'9' => {
                self.at -= 1;
                self.number().map(Value::Cell)
            }
            _ => None,
        }
    }

    /// A number as serde_json reads it: a whole number of up to 18 digits as an integer,
    /// one with a fraction or an exponent as the nearest float; none for what serde reads
    /// otherwise or refuses.
    fn number(&mut self) -> Option<Cell<'a>> {
        let b = self.bytes();
        let start = self.at;
        let mut i = start;
        let negative = b.get(i) == Some(&b'-');
        i += usize::from(negative);
        let digits = |i: &mut usize| {
            let from = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - from
        };
        let whole = digits(&mut i);
        // JSON has no leading zero, and no number without a digit.
        if whole == 0 || (whole > 1 && b[i - whole] == b'0') {
            return None;
        }
        let mut float = false;
        if b.get(i) == Some(&b'.') {
            i += 1;
            if digits(&mut i) == 0 {
                return None;
            }
            float = true;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if digits(&mut i) == 0 {
                return None;
            }
            float = true;
        }
        let text = &self.text[start..i];
        self.at = i;
        if !float {
            // 19 digits may be beyond 64 bits, which serde reads as a float; a negative
            // zero serde may read as a float.
            if whole > 18 || (negative && b[i - 1] == b'0' && whole == 1) {
                return None;
            }
            return text.parse().ok().map(Cell::Int);
        }
        let v: f64 = text.parse().ok()?;
        if !v.is_finite() {
            return None;
        }
        cell_of_float(v)
    }
}

impl Scanner<'_> {
    /// A value not read, as serde's `Skip` reads it (every string decoded), and stricter:
    /// a key given twice in an object skipped is left to serde (and the check).
    fn skip(&mut self, depth: u32) -> Option<()> {
        match self.value()? {
            Value::Cell(_) => Some(()),
            Value::Object => self.skip_object(depth + 1),
            Value::Array => self.skip_array(depth + 1),
        }
    }

    /// The rest of an object skipped, its opening brace taken.
    fn skip_object(&mut self, depth: u32) -> Option<()> {
        if depth > DEPTH {
            return None;
        }
        let mut seen = Seen::default();
        self.entries(|s, key| {
            seen.meet::<NoError>(&key).ok()?;
            s.skip(depth)
        })
    }

    /// The rest of an array skipped, its opening bracket taken.
    fn skip_array(&mut self, depth: u32) -> Option<()> {
        if depth > DEPTH {
            return None;
        }
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.skip(depth)?;
            match self.next()? {
                b',' => {}
                b']' => return Some(()),
                _ => return None,
            }
        }
    }
}

/// Where a string's text from `from` on stops: at its closing quote, a backslash or a
/// control character; none where the text ends first. Eight bytes are looked at a time.
fn stop(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte of `w` is zero: its high bit set in the result (and perhaps a false one above
    // a true one, never below: the first set bit is right).
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let mut i = from;
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().ok()?);
        let quote = zero(w ^ (ONES * u64::from(b'"')));
        let slash = zero(w ^ (ONES * u64::from(b'\\')));
        // Below 0x20: its high bit clear, and still clear once 0x60 is added to its low
        // seven bits (which carries into no other byte).
        let control = !((w & !HIGH) + ONES * 0x60) & !w & HIGH;
        let found = quote | slash | control;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    (i..b.len()).find(|&j| matches!(b[j], b'"' | b'\\' | 0..=0x1f))
}

/// The row's object into `row`; none where serde must read it.
fn scan_row<'a>(s: &mut Scanner<'a>, row: &mut Row<'a>, keys: &mut KeyCache) -> Option<()> {
    if s.next()? != b'{' {
        return None;
    }
    let kinds = key_kinds();
    let mut met = 0u32;
    let mut others = Seen::default();
    let mut place = 0;
    s.entries(|s, key| {
        let slot = keys.slot(place, &plain(key)?);
        place += 1;
        if let Slot::Other {
            kind: None,
            nested_timing: false,
            hash,
        } = slot
        {
            s.skip(0)?;
            return others.meet_hash::<NoError>(hash).ok();
        }
        let Value::Cell(cell) = s.value()? else {
            return None;
        };
        match slot {
            Slot::Known(OTHER) => {
                meet::<NoError>(&mut met, OTHER).ok()?;
                row.other = match cell {
                    Cell::Null => None,
                    Cell::Text(text) => other_string(&text)?,
                    _ => return None,
                };
            }
            Slot::Known(i) if i < OTHER => {
                meet::<NoError>(&mut met, i).ok()?;
                if kinds[i].is_some_and(|k| faulty(k, &cell)) {
                    return None;
                }
                row.cells[i] = cell;
            }
            // The bare `request_timing`: left to serde.
            Slot::Known(_) => return None,
            Slot::Other {
                kind,
                nested_timing,
                hash,
            } => {
                if nested_timing || kind.is_some_and(|k| faulty(k, &cell)) {
                    return None;
                }
                others.meet_hash::<NoError>(hash).ok()?;
            }
        }
        Some(())
    })
}

/// `other` given as a JSON string, as serde's reading decodes it (`OtherSeed`, and
/// `row::parse_other`, which reads a `timing` object the scanner leaves to it); none where
/// serde must read it.
pub(super) fn other_string(text: &str) -> Option<Option<Other>> {
    if has_long_digit_run(text) {
        return None;
    }
    if text.trim().is_empty() {
        return Some(None);
    }
    let mut s = Scanner { text, at: 0 };
    let other = scan_other(&mut s)?;
    s.rest_is_blank().then_some(Some(other))
}

/// `other`'s object: `frt`, `cache_tokens`, `stream_status.status`; `request_timing` and
/// a `timing` object are left to serde.
fn scan_other(s: &mut Scanner<'_>) -> Option<Other> {
    let mut other = Other::default();
    let mut met = 0u32;
    let mut others = Seen::default();
    if s.next()? != b'{' {
        return None;
    }
    s.entries(|s, key| {
        let key = plain(key)?;
        match find(OTHER_KEYS, &key) {
            Some(i @ (0 | 1)) => {
                meet::<NoError>(&mut met, i).ok()?;
                let Value::Cell(cell) = s.value()? else {
                    return None;
                };
                let cell = cell.owned();
                if i == 0 {
                    other.frt = cell;
                } else {
                    other.cache_tokens = cell;
                }
            }
            Some(2) => {
                meet::<NoError>(&mut met, 2).ok()?;
                other.status = match s.value()? {
                    Value::Cell(Cell::Null) => Cell::Null,
                    Value::Object => status(s)?,
                    _ => return None,
                };
            }
            Some(_) => return None,
            None if key == "timing" => return None,
            None => {
                s.skip(1)?;
                others.meet::<NoError>(&key).ok()?;
            }
        }
        Some(())
    })?;
    Some(other)
}

/// `stream_status`'s object, its opening brace taken: its `status`.
fn status(s: &mut Scanner<'_>) -> Option<Cell<'static>> {
    let mut status = Cell::Null;
    let mut met = 0u32;
    let mut others = Seen::default();
    s.entries(|s, key| {
        let key = plain(key)?;
        if key == "status" {
            meet::<NoError>(&mut met, 0).ok()?;
            let Value::Cell(cell) = s.value()? else {
                return None;
            };
            status = cell.owned();
        } else {
            s.skip(2)?;
            others.meet::<NoError>(&key).ok()?;
        }
        Some(())
    })?;
    Some(status)
}

/// A key of an object the scanner reads into: one without an escape (the others are
/// serde's).
fn plain(key: Cow<'_, str>) -> Option<Cow<'_, str>> {
    matches!(key, Cow::Borrowed(_)).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the scanner reads a line, serde reads it the same.
    fn agrees(line: &str) {
        if let Some(row) = scanned(line) {
            let serde = super::super::row::parse_by_serde(line);
            assert_eq!(Some(&row), serde.as_ref(), "{line}");
        }
    }

    #[test]
    fn a_plain_row_is_read_as_serde_reads_it() {
        let line = r#"{"id":1,"user_id":1,"created_at":1793577608,"type":2,"content":"x","username":"admin","token_name":"sk-x","model_name":"gpt-4.1","quota":100,"prompt_tokens":1490,"completion_tokens":383,"use_time":8,"is_stream":true,"channel":2,"group":"default","request_id":"req-1","other":"{\"frt\":216.2,\"cache_tokens\":779,\"model_ratio\":1.25,\"stream_status\":{\"status\":\"canceled\",\"n\":[1]}}","scenario":"s"}"#;
        let row = scanned(line).expect("scanned");
        assert_eq!(row.cells[super::super::row::key::ID], Cell::Int(1));
        assert_eq!(
            row.other.as_ref().unwrap().status,
            Cell::Text("canceled".into())
        );
        agrees(line);
    }

    #[test]
    fn real_new_api_rows_are_scanned() {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let text =
            std::fs::read_to_string(root.join("fixtures/external/newapi_yushow1024_items.jsonl"))
                .unwrap();
        for line in text.lines() {
            assert!(scanned(line).is_some(), "{line}");
            agrees(line);
        }
    }

    #[test]
    fn what_serde_would_read_otherwise_is_left_to_it() {
        for line in [
            r#"{"id":01}"#,
            r#"{"id":1234567890123456789}"#,
            r#"{"id":-0}"#,
            r#"{"id":1e999}"#,
            r#"{"id":1.}"#,
            r#"{"id":"a\u0041"}"#,
            r#"{"i\"d":1}"#,
            r#"{"id":1,}"#,
            r#"{"id":1} x"#,
            r#"{"type":2,"type":2}"#,
            r#"{"other":{"frt":1}}"#,
            r#"{"other":"{\"timing\":{}}"}"#,
            r#"{"request_timing":{"total_ms":1}}"#,
            r#"{"other":"{\"admin_info\":{\"a\":1,\"a\":2}}"}"#,
            r#"{"extra":{"a":1,"a":2}}"#,
            "{\"content\":\"a\u{1}b\"}",
            r#"{"prompt_tokens":true}"#,
        ] {
            assert!(scanned(line).is_none(), "{line}");
        }
    }

    #[test]
    fn escapes_numbers_and_blanks_agree_with_serde() {
        for line in [
            r#"{}"#,
            r#" { "id" : -12 , "content" : "a\n\"b\"\\/\t" } "#,
            r#"{"frt_x":1.5e3,"use_time":0,"elapsed_time":-1.25E-2,"model_name":null}"#,
            r#"{"other":"  ","is_stream":false}"#,
            r#"{"other":"{}","ip":"1.2.3.4"}"#,
            r#"{"other":"{\"frt\":-1000,\"cache_tokens\":\"12\",\"x\":\"a\\\\b\"}"}"#,
            r#"{"other":"{\"stream_status\":null}"}"#,
            r#"{"other":"{\"stream_status\":{}}"}"#,
            r#"{"use_time":123456789012345678}"#,
            r#"{"extra":{"a":[1,{"b":null},[]],"c":"d"},"id":3}"#,
            r#"{"other":"{\"admin_info\":{\"use_channel\":[\"1\"],\"x\":{}},\"request_conversion\":[\"A\",[],{}],\"frt\":-1000}"}"#,
        ] {
            assert!(scanned(line).is_some(), "{line}");
            agrees(line);
        }
    }
}
