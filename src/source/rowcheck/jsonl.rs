//! JSON lines: each line checked as one row, a block of lines at a time (on two threads for
//! blocks over 1 MiB), then the bad ones left out or rewritten for polars per the policy.

use super::gather::{Gather, Wanted};
use super::json_row::{json_message, salvage, ObjectCheck, Shapes};
use super::types::Types;
use super::{first_error, for_each_block, BadKind, BadRow, BadRowPolicy, Checked, LineMap, BLOCK};
use crate::error::{Error, Result};
use crate::source::spool;
use serde::de::Deserializer;
use std::borrow::Cow;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// A copy made in the JSON-lines check's own reading (`source::copy::jsonl`): the check
/// hands it the values it wants, a run of rows at a time, in file order.
pub trait JsonRows {
    /// The keys it reads; none once it has given up (it will not be used).
    fn wanted(&self) -> Option<Arc<Wanted>>;
    /// The wanted values of the rows after those handed over so far.
    fn rows(&mut self, gather: Gather) -> Result<()>;
}

/// Check a JSON-lines file, one block of lines at a time. With `Error`, the first bad row
/// is the error. A second pass writes the repaired copy (to a temporary file) only when a
/// row is bad, `other` is mixed or the file has a byte-order mark. A `copy` is handed each
/// row's wanted values as the row is checked.
pub fn check_json_lines(
    path: &Path,
    policy: BadRowPolicy,
    copy: Option<&mut dyn JsonRows>,
) -> Result<Checked> {
    check_in_blocks(path, policy, BLOCK, copy)
}

fn check_in_blocks(
    path: &Path,
    policy: BadRowPolicy,
    block: usize,
    mut copy: Option<&mut dyn JsonRows>,
) -> Result<Checked> {
    let mut bad = vec![];
    let mut types = Types::default();
    let mut has_blank = false;
    let mut rows = 0u64;
    // The line each row begins on (where blank lines make them differ).
    let mut lines_at = LineMap::default();
    let bom = for_each_block(path, block, |bytes, before| {
        let wanted = copy.as_ref().and_then(|c| c.wanted());
        let (b, blank, t, gathered) = find_bad_lines(bytes, before, wanted.as_ref());
        if let Some(copy) = copy.as_deref_mut() {
            for g in gathered {
                copy.rows(g)?;
            }
        }
        bad.extend(b);
        types.merge(t);
        has_blank |= blank;
        if blank {
            for (i, line) in lines(bytes).enumerate() {
                if !is_blank(line) {
                    rows += 1;
                    lines_at.record(rows, before + i as u64 + 1);
                }
            }
        } else {
            // Every line a row: its rows follow its first one line for line.
            let n = lines(bytes).count() as u64;
            if n > 0 {
                lines_at.record(rows + 1, before + 1);
                rows += n;
            }
        }
        Ok(())
    })?;
    if rows == 0 {
        return Err(Error::input(
            path,
            "the file has no rows (only blank lines): expected a request log",
        ));
    }
    let mixed = types.other_is_mixed();
    if bad.is_empty() && !mixed && !bom {
        return Ok(Checked {
            lines: if has_blank {
                lines_at
            } else {
                LineMap::default()
            },
            types,
            rows,
            ..Checked::default()
        });
    }
    if policy == BadRowPolicy::Error {
        if let Some((b, _)) = bad.iter().find(|(b, _)| b.kind != BadKind::Repair) {
            return Err(first_error(path, b));
        }
    }
    let (file, copy) = spool::scratch(path, ".jsonl")?;
    let mut out = std::io::BufWriter::new(file);
    let write_fail =
        |e: std::io::Error| Error::input(path, format!("cannot write the repaired rows: {e}"));
    let mut kept_rows = vec![];
    let mut rows_at = LineMap::default();
    let mut next_bad = bad.iter().peekable();
    let mut row = 0u32;
    for_each_block(path, block, |bytes, before| {
        for (i, line) in lines(bytes).enumerate() {
            let lineno = before + i as u64 + 1;
            if is_blank(line) {
                continue;
            }
            let written = match next_bad.peek() {
                Some((b, repair)) if b.line == lineno => {
                    let keep = policy == BadRowPolicy::Keep || b.kind == BadKind::Repair;
                    let unreadable = b.kind == BadKind::Unreadable;
                    let text = keep.then(|| embed_other(repair.as_bytes(), mixed));
                    next_bad.next();
                    text.map(|t| (t, unreadable))
                }
                _ => Some((embed_other(line, mixed), false)),
            };
            if let Some((text, unreadable)) = written {
                out.write_all(&text).map_err(write_fail)?;
                out.write_all(b"\n").map_err(write_fail)?;
                row += 1;
                rows_at.record(u64::from(row), lineno);
                if unreadable {
                    kept_rows.push(row);
                }
            }
        }
        Ok(())
    })?;
    out.flush().map_err(write_fail)?;
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
        repaired: Some(copy),
        kept_rows,
        lines: rows_at,
        types,
        rows,
    })
}

/// How much of a JSON-lines file `head_types` reads.
const HEAD: usize = 1 << 20;

/// The types of the values in the file's first lines (its first `HEAD` bytes of whole
/// lines), when each of those lines is good and the file has no byte-order mark: the
/// schema a copy made beside the check expects the whole file to have.
pub fn head_types(path: &Path) -> Option<Types> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut buf = vec![];
    let eof = super::fill(&mut file, &mut buf, HEAD).ok()?;
    if buf.starts_with(super::BOM) {
        return None;
    }
    let end = if eof {
        buf.len()
    } else {
        memchr::memrchr(b'\n', &buf)? + 1
    };
    let (bad, _, types, _) = check_lines(&buf[..end], 0, None);
    bad.is_empty().then_some(types)
}

/// With `mixed` (`other` is an object in some rows, a JSON string in others): the row with
/// its `other` string replaced by the object it encodes (a blank string by null), so that
/// `other` is one column of one type. Otherwise, or when the row has no `other` string,
/// the row as it is.
fn embed_other(row: &[u8], mixed: bool) -> Cow<'_, [u8]> {
    use serde_json::Value;
    let embedded = || {
        let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(row) else {
            return None;
        };
        let Some(Value::String(text)) = obj.get("other") else {
            return None;
        };
        // The row check has parsed this string as an object (or found it blank); a string
        // it could not parse cost the row its `other` already.
        let inner = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(text).ok()?
        };
        obj.insert("other".into(), inner);
        serde_json::to_vec(&Value::Object(obj)).ok()
    };
    match mixed.then(embedded).flatten() {
        Some(rewritten) => Cow::Owned(rewritten),
        None => Cow::Borrowed(row),
    }
}

/// Lines without their terminator (`\n` or `\r\n`).
fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let mut start = 0;
    // memchr finds the line ends many bytes at a time; a split compares every byte.
    memchr::memchr_iter(b'\n', body)
        .chain(std::iter::once(body.len()))
        .map(move |end| {
            let line = &body[start..end];
            start = end + 1;
            line.strip_suffix(b"\r").unwrap_or(line)
        })
        .filter(move |_| !bytes.is_empty())
}

/// A line of JSON whitespace alone (the `\r` of a CRLF is already gone). Not
/// `is_ascii_whitespace`: its form feed is not JSON whitespace, and polars' reader fails the
/// whole file on a line holding one; such a line is a bad row like any other.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// What checking some lines found: every bad line with the text that replaces it when
/// kept, whether there is a blank line, the types of the values read, and the values a
/// copy wants (one gather per run of lines checked on its own).
type Found = (Vec<(BadRow, String)>, bool, Types, Vec<Gather>);

/// Check a block (its lines numbered after the `before` lines of the blocks before it),
/// gathering the `wanted` values. The block is split in two at a line boundary and checked
/// on two threads (the check is about as costly as a parse).
fn find_bad_lines(bytes: &[u8], before: u64, wanted: Option<&Arc<Wanted>>) -> Found {
    let half = bytes.len() / 2;
    let split = match bytes[half..].iter().position(|b| *b == b'\n') {
        Some(p) if bytes.len() > 1 << 20 => half + p + 1,
        _ => bytes.len(),
    };
    let (a, b) = bytes.split_at(split);
    let first_lines = memchr::memchr_iter(b'\n', a).count() as u64;
    let ((mut bad, blank_a, mut types, mut gathered), (rest, blank_b, types_b, gathered_b)) =
        std::thread::scope(|s| {
            let h = s.spawn(|| check_lines(b, before + first_lines, wanted));
            let first = check_lines(a, before, wanted);
            (first, h.join().expect("the line check does not panic"))
        });
    bad.extend(rest);
    types.merge(types_b);
    gathered.extend(gathered_b);
    (bad, blank_a || blank_b, types, gathered)
}

fn check_lines(bytes: &[u8], offset: u64, wanted: Option<&Arc<Wanted>>) -> Found {
    let mut bad = vec![];
    let mut has_blank = false;
    let mut types = Types::default();
    // Room for the rows of lines of about 512 bytes; the columns grow if there are more.
    let mut gather = wanted.map(|w| Gather::new(w, bytes.len() / 512 + 1));
    let mut shapes = Shapes::default();
    for (i, line) in lines(bytes).enumerate() {
        if is_blank(line) {
            has_blank = true;
            continue;
        }
        if let Some(g) = gather.as_mut() {
            g.begin_row();
        }
        if let Err((mut b, repair)) =
            check_json_line(line, &mut types, gather.as_mut(), Some(&mut shapes))
        {
            b.line = offset + i as u64 + 1;
            bad.push((b, repair));
        }
    }
    shapes.flush(&mut types);
    (bad, has_blank, types, gather.into_iter().collect())
}

/// Check one line, noting the types of its values in `types`; on failure, the bad row
/// (line 0, set by the caller) and the JSON to keep in its place: the readable fields with
/// every fault repaired, or `{}` when nothing is readable.
fn check_json_line(
    line: &[u8],
    types: &mut Types,
    gather: Option<&mut Gather>,
    shapes: Option<&mut Shapes>,
) -> std::result::Result<(), (BadRow, String)> {
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
    let mut faults = vec![];
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = de
        .deserialize_any(ObjectCheck {
            path: &[],
            raw: text,
            fail_fast: false,
            faults: &mut faults,
            types: Some(types),
            gather,
            shapes,
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
    // The row is named by its worst fault (unreadable, then a wrong-typed value, then an
    // unread field repaired); every fault is repaired in what polars reads.
    let worst = [BadKind::Unreadable, BadKind::Value, BadKind::Repair]
        .iter()
        .find_map(|k| faults.iter().find(|f| f.kind == *k));
    if let Some(f) = worst {
        let repair = salvage(text, &faults);
        return Err((
            BadRow {
                line: 0,
                column: None,
                field: Some(f.field()),
                message: f.message.clone(),
                kind: f.kind,
            },
            repair,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::json_row::has_big_integer_literal;
    use super::*;
    use polars::prelude::{DataType, Field};

    fn bad(line: &str) -> Option<(BadRow, String)> {
        check_json_line(line.as_bytes(), &mut Types::default(), None, None).err()
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
    fn every_fault_of_a_row_is_repaired_and_the_worst_named() {
        let (b, keep) = bad(
            r#"{"request_id":"a","first_response_ms":{"x":1},"total_handler_ms":[1],"model":[2]}"#,
        )
        .unwrap();
        assert_eq!(b.kind, BadKind::Unreadable, "a label holding a list");
        assert_eq!(b.field.as_deref(), Some("model"));
        assert_eq!(
            keep,
            r#"{"request_id":"a","first_response_ms":"an object","total_handler_ms":"an array"}"#
        );
    }

    #[test]
    fn a_key_holding_a_dot_is_repaired_where_it_is() {
        let line = r#"{"request_id":"a","x.y":18446744073709551615,"other":{"timing":{"first_response_ms":1}}}"#;
        let (b, keep) = bad(line).unwrap();
        assert_eq!(b.kind, BadKind::Repair);
        assert_eq!(
            keep,
            r#"{"request_id":"a","other":{"timing":{"first_response_ms":1}}}"#
        );
    }

    #[test]
    fn the_types_read_are_noted_per_row() {
        let mut types = Types::default();
        for line in [
            r#"{"request_id":"a","is_stream":true,"prompt":"x","other":{"timing":{"first_response_ms":1}}}"#,
            r#"{"request_id":7,"is_stream":1,"other":"{\"timing\":{\"first_response_ms\":\"\"}}"}"#,
        ] {
            check_json_line(line.as_bytes(), &mut types, None, None).unwrap();
        }
        let schema = types.schema();
        let names: Vec<&str> = schema.iter_names().map(|n| n.as_str()).collect();
        assert_eq!(
            names,
            ["is_stream", "other", "request_id"],
            "no content key"
        );
        assert_eq!(schema.get("is_stream"), Some(&DataType::String));
        assert!(types.other_is_mixed());
        let timing = Field::new("first_response_ms".into(), DataType::String);
        let other = DataType::Struct(vec![Field::new(
            "timing".into(),
            DataType::Struct(vec![timing]),
        )]);
        assert_eq!(schema.get("other"), Some(&other));
    }

    #[test]
    fn a_mixed_other_is_embedded_as_the_object_it_holds() {
        let row = br#"{"request_id":"a","other":"{\"timing\":{\"first_response_ms\":5}}"}"#;
        assert_eq!(
            String::from_utf8_lossy(&embed_other(row, true)),
            r#"{"request_id":"a","other":{"timing":{"first_response_ms":5}}}"#
        );
        assert_eq!(
            &*embed_other(br#"{"other":" "}"#, true),
            br#"{"other":null}"#
        );
        assert!(matches!(
            embed_other(br#"{"other":{}}"#, true),
            Cow::Borrowed(_)
        ));
        assert!(matches!(embed_other(row, false), Cow::Borrowed(_)));
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

    fn file(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f.flush().unwrap();
        f
    }

    #[test]
    fn rows_after_blank_lines_name_their_line() {
        let f = file(b"{\"a\":1}\n\n  \n{\"a\":2}\r\n{\"a\":3}\n");
        let m = check_json_lines(f.path(), BadRowPolicy::Keep, None)
            .unwrap()
            .lines;
        assert_eq!([1, 2, 3].map(|r| m.line(r)), [1, 4, 5]);
    }

    /// What a check finds, with the repaired copy's bytes, for comparing block sizes.
    #[derive(Debug, PartialEq)]
    struct Outcome {
        bad: Vec<BadRow>,
        repaired: Option<Vec<u8>>,
        kept_rows: Vec<u32>,
        lines: Vec<u64>,
        rows: u64,
    }

    fn outcome(c: Checked) -> Outcome {
        Outcome {
            repaired: c.repaired.map(|s| std::fs::read(s.path()).unwrap()),
            lines: (1..=c.rows).map(|r| c.lines.line(r)).collect(),
            bad: c.bad,
            kept_rows: c.kept_rows,
            rows: c.rows,
        }
    }

    #[test]
    fn blocks_of_any_size_find_what_one_block_finds() {
        let good = r#"{"request_id":"a","upstream_headers_ms":1}"#;
        let long = format!(
            r#"{{"request_id":"{}","upstream_headers_ms":2}}"#,
            "x".repeat(300)
        );
        let cases: Vec<Vec<u8>> = vec![
            format!("{good}\n{{broken\n\n{long}\r\n  \n{good}\n").into(),
            format!("\u{feff}{good}\n{long}\n{good}").into(),
            format!(
                "{good}\n{}\n{}\n",
                r#"{"request_id":"b","other":"{\"timing\":{\"upstream_headers_ms\":3}}"}"#,
                r#"{"request_id":"c","other":{"timing":{"upstream_headers_ms":4}}}"#
            )
            .into(),
            format!("\n\n{long}\n{{\"request_id\":1}}{{}}\n{good}\r\n").into(),
        ];
        for (k, text) in cases.iter().enumerate() {
            let f = file(text);
            for policy in [BadRowPolicy::Keep, BadRowPolicy::Skip] {
                let whole = outcome(check_in_blocks(f.path(), policy, 1 << 20, None).unwrap());
                for block in [1, 2, 3, 7, 40, 64, 333] {
                    let got = outcome(check_in_blocks(f.path(), policy, block, None).unwrap());
                    assert_eq!(got, whole, "case {k}, {policy:?}, blocks of {block}");
                }
            }
        }
        // The cases exercise what they are meant to: a bad row, a byte-order mark, a mixed
        // `other`, blank lines.
        let f = file(&cases[0]);
        assert_eq!(
            outcome(check_json_lines(f.path(), BadRowPolicy::Keep, None).unwrap())
                .bad
                .len(),
            1
        );
        let f = file(&cases[1]);
        let c = check_json_lines(f.path(), BadRowPolicy::Keep, None).unwrap();
        let copy = std::fs::read(c.repaired.unwrap().path()).unwrap();
        assert!(copy.starts_with(b"{"), "the mark is left out");
        let f = file(&cases[2]);
        assert!(check_json_lines(f.path(), BadRowPolicy::Keep, None)
            .unwrap()
            .repaired
            .is_some());
    }

    #[test]
    fn blocks_hold_whole_lines_and_count_them() {
        let text = b"\xef\xbb\xbfab\ncdefgh\n\nij\r\nk";
        let f = file(text);
        for block in [1, 2, 4, 5, 100] {
            let mut seen = vec![];
            let bom = for_each_block(f.path(), block, |b, before| {
                let lines_in = b.iter().filter(|c| **c == b'\n').count() as u64;
                assert!(
                    b.ends_with(b"\n") || b == b"k" || b.ends_with(b"\nk"),
                    "{b:?}"
                );
                seen.push((before, lines_in, b.to_vec()));
                Ok(())
            })
            .unwrap();
            assert!(bom);
            let all: Vec<u8> = seen.iter().flat_map(|(_, _, b)| b.clone()).collect();
            assert_eq!(all, text[3..].to_vec(), "blocks of {block}");
            let mut n = 0;
            for (before, lines_in, _) in &seen {
                assert_eq!(*before, n);
                n += lines_in;
            }
        }
    }

    #[test]
    fn only_json_whitespace_makes_a_blank_line() {
        let (bad, has_blank, _, _) =
            find_bad_lines(b"{\"a\":1}\n \t\r\n\x0c\n{\"a\":2}\n", 0, None);
        assert!(has_blank, "line 2 is blank");
        let lines: Vec<u64> = bad.into_iter().map(|(b, _)| b.line).collect();
        assert_eq!(lines, vec![3], "a form feed is not JSON whitespace");
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
        let (bad, has_blank, _, _) = find_bad_lines(text.as_bytes(), 0, None);
        assert!(has_blank, "line 3 is blank");
        let lines: Vec<u64> = bad.into_iter().map(|(b, _)| b.line).collect();
        assert_eq!(lines, vec![7, 45_000]);
    }
}
