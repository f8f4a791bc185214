//! CSV and TSV: each record checked with the csv crate (quotes, CRLF, bare CR), because
//! polars' reader reports neither the line nor the field of a malformed record.

use std::io::Write;
use std::path::Path;

use super::json_row::{check_json_string, field_roles};
use super::{fill, first_error, BadKind, BadRow, BadRowPolicy, Checked, LineMap, BLOCK, BOM};
use crate::error::{Error, Result};

/// Check a CSV (or TSV) file record by record, quotes and all, a block of records at a time
/// (`BLOCK` bytes). A second pass writes the repaired copy (to a temporary file) only when a
/// bad record, a blank line or a bare CR was found.
///
/// `records`, when given, is handed the header and then every record as it is checked, as
/// long as the file is read as it is: until a bad record or a blank line. It has been handed
/// every record when the result has no bad row and no repaired copy.
pub fn check_csv(
    path: &Path,
    separator: u8,
    policy: BadRowPolicy,
    records: Option<&mut dyn Records>,
) -> Result<Checked> {
    check_in_blocks(path, separator, policy, BLOCK, records)
}

/// What the row check hands a CSV file's records to, so that the one reading of the file
/// that checks them also serves to copy them (`source::copy::csv`).
pub trait Records {
    /// The checked header (the record's fields, in order): whether to be handed the rows.
    fn header(&mut self, header: &[String]) -> bool;
    /// The good data record numbered `row` (1-based, as polars numbers the file's rows).
    fn record(&mut self, row: u64, record: &csv::ByteRecord) -> Result<()>;
    /// Whether `other`, the text of a record's `other` column, is one the reader knows to be
    /// a JSON object the check would find nothing wrong with (new-api's scanner reads it
    /// so): the check then does not parse it again.
    fn vouches_for_other(&mut self, _other: &str) -> bool {
        false
    }
}

fn check_in_blocks(
    path: &Path,
    separator: u8,
    policy: BadRowPolicy,
    block: usize,
    mut records: Option<&mut dyn Records>,
) -> Result<Checked> {
    // polars reads a blank line as a row of nulls (one more "request"); the csv crate skips
    // it. Such a file is rewritten without them. Blank lines between records are the ones
    // the csv crate skipped (a blank line inside a quoted value is part of the value and
    // needs no rewrite); blank lines at the end come after the last record.
    let mut blank_line = false;
    let mut header: Vec<String> = vec![];
    // A column `other` holds JSON, checked in every record (`check_record`).
    let mut has_other = false;
    let mut bad: Vec<(u64, BadRow)> = vec![];
    // Where each record begins: the rows' lines when every record is read as it is.
    let mut lines = LineMap::default();
    let mut rows = 0;
    let ends = for_each_record(path, separator, block, |index, line, record| {
        blank_line |= line.after_blank;
        let line = line.number;
        if index > 0 {
            lines.record(index, line);
            rows = index;
        }
        if index == 0 {
            header = record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            has_other = header.iter().any(|h| h.eq_ignore_ascii_case("other"));
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
            if records.as_mut().is_some_and(|r| !r.header(&header)) {
                records = None;
            }
        } else if let Some(b) =
            check_record(record, &header, has_other, line, records.as_deref_mut())
        {
            bad.push((index, b));
            // From here on the rows are read from a repaired copy, not as they are.
            records = None;
        } else if blank_line {
            records = None;
        } else if let Some(r) = records.as_mut() {
            r.record(index, record)?;
        }
        Ok(())
    })?;
    // A header alone is no request: nothing can be made of the file, as of an empty one
    // (a run over it would report 0 requests and exit 0, as if it had been diagnosed).
    if rows == 0 && !header.is_empty() {
        return Err(Error::input(
            path,
            "the file holds a header and no row: expected a request log",
        ));
    }
    blank_line |= ends.trailing_blank;
    // Old Mac line ends (a CR alone): polars reads them as one line, so such a file is
    // rewritten with LF even when every record is good.
    if bad.is_empty() && !ends.bare_cr && !blank_line {
        return Ok(Checked {
            lines,
            rows,
            ..Checked::default()
        });
    }
    if policy == BadRowPolicy::Error && !bad.is_empty() {
        return Err(first_error(path, &bad[0].1));
    }
    let suffix = if separator == b'\t' { ".tsv" } else { ".csv" };
    let (file, copy) = super::super::spool::scratch(path, suffix)?;
    let mut writer = csv::WriterBuilder::new()
        .delimiter(separator)
        .from_writer(std::io::BufWriter::new(file));
    let write_err = |e: csv::Error| Error::input(path, format!("cannot repair the CSV rows: {e}"));
    let mut kept_rows = vec![];
    let mut row = 0u32;
    let mut lines = LineMap::default();
    let mut bad_at = bad.iter().map(|(i, _)| *i).peekable();
    for_each_record(path, separator, block, |index, line, record| {
        let line = line.number;
        let is_bad = bad_at.peek() == Some(&index);
        if is_bad {
            bad_at.next();
        }
        if !is_bad {
            writer.write_byte_record(record).map_err(write_err)?;
            if index > 0 {
                row += 1;
                lines.record(u64::from(row), line);
            }
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
                    let broken_other = header[k].eq_ignore_ascii_case("other")
                        && check_json_string(&["other"], &v, None).is_some();
                    if broken_other {
                        String::new()
                    } else {
                        v
                    }
                })
                .collect();
            writer.write_record(&fields).map_err(write_err)?;
            row += 1;
            lines.record(u64::from(row), line);
            kept_rows.push(row);
        }
        Ok(())
    })?;
    writer
        .into_inner()
        .map_err(|e| e.to_string())
        .and_then(|mut w| w.flush().map_err(|e| e.to_string()))
        .map_err(|e| Error::input(path, format!("cannot repair the CSV rows: {e}")))?;
    Ok(Checked {
        bad: bad.into_iter().map(|(_, b)| b).collect(),
        repaired: Some(copy),
        kept_rows,
        lines,
        rows,
        ..Checked::default()
    })
}

/// Where a record begins.
struct RecordLine {
    /// The line its first field is on.
    number: u64,
    /// Blank lines come before it (the csv crate skipped them).
    after_blank: bool,
}

/// What only the whole file shows: a bare CR somewhere, a blank line after the last record.
struct Ends {
    bare_cr: bool,
    trailing_blank: bool,
}

/// Calls `f` with (index, line, record) for every record; index 0 is the header. The file
/// is read in blocks of whole records of about `block` bytes (a record longer than that is
/// held whole), a byte-order mark left out: each block is parsed up to the start of its
/// last record, which may be cut off and begins the next block, so every block starts
/// where a record starts and the csv crate's quote state holds. The csv crate skips blank
/// lines itself. A block with no quote and no CR, the usual one, is read by its line ends
/// and separators instead (`plain_records`).
fn for_each_record(
    path: &Path,
    separator: u8,
    block: usize,
    mut f: impl FnMut(u64, RecordLine, &csv::ByteRecord) -> Result<()>,
) -> Result<Ends> {
    let fail = |e: std::io::Error| Error::input(path, format!("cannot read: {e}"));
    let mut file = std::fs::File::open(path).map_err(fail)?;
    let mut buf: Vec<u8> = vec![];
    // The first read holds at least a byte-order mark's length.
    let mut want = block.max(BOM.len());
    // Holding more doubles what is held; never less than a byte more (a first read that
    // was only a byte-order mark leaves nothing held).
    let grow = |held: usize| (held * 2).max(held + 1);
    let mut first = true;
    let mut index = 0u64;
    let mut lines_before = 0u64;
    let mut bare_cr = false;
    // The record the plain blocks' fields are put in, reused.
    let mut plain = csv::ByteRecord::new();
    loop {
        let eof = fill(&mut file, &mut buf, want).map_err(fail)?;
        if std::mem::take(&mut first) && buf.starts_with(BOM) {
            buf.drain(..BOM.len());
        }
        let body = &buf[..];
        // Without a quote or a CR, a block's records are its lines (`plain_records`).
        let cut = if memchr::memchr2(b'"', b'\r', body).is_none() {
            plain_records(
                body,
                eof,
                separator,
                lines_before,
                &mut plain,
                &mut index,
                &mut f,
            )?
        } else {
            csv_records(path, body, eof, separator, lines_before, &mut index, &mut f)?
        };
        let Some(cut) = cut else {
            // One record (perhaps cut off), or blank lines alone, fill the block: hold more
            // (after blank lines, so that the record after them says so).
            want = grow(buf.len());
            continue;
        };
        let done = &body[..cut];
        bare_cr |= memchr::memchr_iter(b'\r', done).any(|i| done.get(i + 1) != Some(&b'\n'));
        lines_before += memchr::memchr_iter(b'\n', done).count() as u64;
        if eof {
            return Ok(Ends {
                bare_cr,
                trailing_blank: trailing_blank_line(done),
            });
        }
        buf.drain(..cut);
        want = block.max(BOM.len());
    }
}

/// The records of a block as the csv crate reads them, handed to `f` from `index` on, but
/// its last record: that one may be cut off by the block's end, so it begins the next
/// block. Returns where the next block begins, or `None` when the block holds no record
/// whose end is known (one record, perhaps cut off, or blank lines alone).
fn csv_records(
    path: &Path,
    body: &[u8],
    eof: bool,
    separator: u8,
    lines_before: u64,
    index: &mut u64,
    f: &mut impl FnMut(u64, RecordLine, &csv::ByteRecord) -> Result<()>,
) -> Result<Option<usize>> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(separator)
        .has_headers(false)
        .flexible(true)
        .from_reader(body);
    // A record is handed on when the next one has been read.
    // Two records swap places instead of one being copied per record.
    let mut last = csv::ByteRecord::new();
    let mut record = csv::ByteRecord::new();
    let mut have_last = false;
    let mut handed = 0;
    while reader
        .read_byte_record(&mut record)
        .map_err(|e| Error::input(path, format!("cannot read as CSV: {e}")))?
    {
        if have_last {
            f(*index, first_line(body, &last, lines_before), &last)?;
            *index += 1;
            handed += 1;
        }
        std::mem::swap(&mut last, &mut record);
        have_last = true;
    }
    let pending = have_last.then_some(&last);
    Ok(match (pending, eof) {
        (Some(last), false) => {
            let start = last.position().map_or(0, |p| p.byte() as usize);
            // Never between the CR and LF of a line end (the csv crate's position after a
            // CRLF is its LF).
            let start = if start > 0 && body[start - 1] == b'\r' && body.get(start) == Some(&b'\n')
            {
                start + 1
            } else {
                start
            };
            (handed > 0 && start > 0).then_some(start)
        }
        (Some(last), true) => {
            f(*index, first_line(body, last, lines_before), last)?;
            *index += 1;
            Some(body.len())
        }
        (None, false) => None,
        (None, true) => Some(body.len()),
    })
}

/// The records of a block that holds no quote and no CR, handed to `f` from `index` on:
/// there, a record is a line that is not empty, and its fields are what the separators
/// split it into, which is what the csv crate finds, at a fraction of its cost (the row
/// check of a 10M-request CSV spent most of its time in the crate). The line still
/// unended, with the blank lines before it, begins the next block. Returns where, or
/// `None` when the block ends no record.
fn plain_records(
    body: &[u8],
    eof: bool,
    separator: u8,
    lines_before: u64,
    record: &mut csv::ByteRecord,
    index: &mut u64,
    f: &mut impl FnMut(u64, RecordLine, &csv::ByteRecord) -> Result<()>,
) -> Result<Option<usize>> {
    let end = if eof {
        body.len()
    } else {
        let Some(last) = memchr::memrchr(b'\n', body) else {
            return Ok(None);
        };
        // Blank lines just before the unended one go with it: the record after them says so.
        let mut end = last + 1;
        while end >= 2 && body[end - 2] == b'\n' {
            end -= 1;
        }
        end
    };
    let mut line = lines_before;
    let mut after_blank = false;
    let mut handed = 0;
    let mut start = 0;
    while start < end {
        let stop = memchr::memchr(b'\n', &body[start..end]).map_or(end, |i| start + i);
        line += 1;
        let text = &body[start..stop];
        start = stop + 1;
        if text.is_empty() {
            after_blank = true;
            continue;
        }
        record.clear();
        let mut from = 0;
        for at in memchr::memchr_iter(separator, text) {
            record.push_field(&text[from..at]);
            from = at + 1;
        }
        record.push_field(&text[from..]);
        let at = RecordLine {
            number: line,
            after_blank,
        };
        f(*index, at, record)?;
        *index += 1;
        handed += 1;
        after_blank = false;
    }
    Ok((eof || handed > 0).then_some(end))
}

/// Where a record's first field is, counting `lines_before` the block. The csv crate's
/// position is where it began reading, which is a skipped blank line when one comes before
/// the record.
fn first_line(body: &[u8], record: &csv::ByteRecord, lines_before: u64) -> RecordLine {
    let Some(p) = record.position() else {
        return RecordLine {
            number: 0,
            after_blank: false,
        };
    };
    let start = usize::try_from(p.byte())
        .unwrap_or(usize::MAX)
        .min(body.len());
    let skipped = body[start..]
        .iter()
        .take_while(|b| matches!(b, b'\n' | b'\r'))
        .filter(|b| **b == b'\n')
        .count();
    // After a CRLF the csv crate stops at the CR: the LF it then skips ends the previous
    // record's line, not a blank one.
    let ends_crlf = start > 0 && body[start - 1] == b'\r' && body.get(start) == Some(&b'\n');
    RecordLine {
        number: lines_before + p.line() + skipped as u64,
        after_blank: skipped > usize::from(ends_crlf),
    }
}

/// The file ends in a blank line: at least two line ends in its last run of CR and LF
/// bytes (LF LF, CRLF CRLF, …).
fn trailing_blank_line(body: &[u8]) -> bool {
    body.iter()
        .rev()
        .take_while(|b| matches!(b, b'\n' | b'\r'))
        .filter(|b| **b == b'\n')
        .count()
        > 1
}

fn check_record(
    record: &csv::ByteRecord,
    header: &[String],
    has_other: bool,
    line: u64,
    records: Option<&mut (dyn Records + '_)>,
) -> Option<BadRow> {
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
    if !has_other && utf8_fields(record) {
        return None;
    }
    check_fields(record, header, line, records)
}

/// Whether every field of the record is UTF-8, checked on all its bytes at once (one check
/// per field cost a fifth of the row check). The fields put together are UTF-8; each one
/// is then too unless one begins inside a character (a continuation byte).
fn utf8_fields(record: &csv::ByteRecord) -> bool {
    std::str::from_utf8(record.as_slice()).is_ok()
        && record
            .iter()
            .all(|f| f.first().is_none_or(|b| (b & 0xC0) != 0x80))
}

/// The first field, in order, that is not UTF-8 or is an `other` that is not JSON (unless
/// `records` vouches for it).
fn check_fields(
    record: &csv::ByteRecord,
    header: &[String],
    line: u64,
    mut records: Option<&mut (dyn Records + '_)>,
) -> Option<BadRow> {
    for (k, field) in record.iter().enumerate() {
        let text = std::str::from_utf8(field);
        if let (Ok(t), true) = (text, header[k].eq_ignore_ascii_case("other")) {
            let vouched = records
                .as_deref_mut()
                .is_some_and(|r| r.vouches_for_other(t));
            if let Some(f) = (!vouched)
                .then(|| check_json_string(&["other"], t, None))
                .flatten()
            {
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
    use std::io::Write;

    /// Whether checking `text` as a CSV file rewrites it.
    fn rewritten(text: &str) -> bool {
        let mut file = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        check_csv(file.path(), b',', BadRowPolicy::Keep, None)
            .unwrap()
            .repaired
            .is_some()
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
        let long = "x".repeat(200);
        let cases = [
            format!("id,ttfb_ms,note\na,1,x\nb,2\n\nc,3,\"q\nq\"\r\nd,4,{long}\n"),
            "\u{feff}id,ttfb_ms\r\na,1\r\n\r\nb,\"2\r\n\r\n\"\r\nc,3\r\n\r\n".to_string(),
            format!("id,ttfb_ms\ra,1\rb,2\r\n\n{long},5\rc,3"),
            format!("\n\nid,note\n{long},\"a\"\"b\"\na,\"{long}\n\"\nb,1,2\n"),
            "id,ttfb_ms\na,1\nb,2".to_string(),
            // Plain blocks (no quote, no CR) before the quoted record that makes the whole
            // file the csv crate's: blank lines between and at the ends of blocks.
            format!("\nid,ttfb_ms\n\na,1\n\n\nb,2\n{long},3\n\n\"q\",4\n\n"),
        ];
        for (k, text) in cases.iter().enumerate() {
            let mut f = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
            f.write_all(text.as_bytes()).unwrap();
            for policy in [BadRowPolicy::Keep, BadRowPolicy::Skip] {
                let whole =
                    outcome(check_in_blocks(f.path(), b',', policy, 1 << 20, None).unwrap());
                for block in [1, 2, 3, 5, 8, 13, 40, 64, 250] {
                    let got =
                        outcome(check_in_blocks(f.path(), b',', policy, block, None).unwrap());
                    assert_eq!(got, whole, "case {k}, {policy:?}, blocks of {block}");
                }
            }
        }
        // The cases hold what they are meant to: bad records, blank lines, a bare CR.
        let mut f = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
        f.write_all(cases[0].as_bytes()).unwrap();
        let c = outcome(check_csv(f.path(), b',', BadRowPolicy::Keep, None).unwrap());
        assert_eq!(c.bad.iter().map(|b| b.line).collect::<Vec<_>>(), vec![3]);
        assert_eq!(c.lines, vec![2, 3, 5, 7]);
        assert!(rewritten(&cases[2]), "a bare CR");
        assert!(!rewritten(&cases[4]));
    }

    /// A block without a quote or a CR is read by its lines as the csv crate reads it: the
    /// same records, lines, blank lines before them and place where the next block begins.
    #[test]
    fn plain_blocks_are_read_as_the_csv_crate_reads_them() {
        type Seen = Vec<(u64, u64, bool, Vec<Vec<u8>>)>;
        let read = |plain: bool, body: &[u8], eof: bool| -> (Seen, Option<usize>) {
            let mut seen: Seen = vec![];
            let mut index = 5;
            let mut f = |i: u64, at: RecordLine, r: &csv::ByteRecord| {
                seen.push((
                    i,
                    at.number,
                    at.after_blank,
                    r.iter().map(<[u8]>::to_vec).collect(),
                ));
                Ok(())
            };
            let cut = if plain {
                let mut record = csv::ByteRecord::new();
                plain_records(body, eof, b',', 7, &mut record, &mut index, &mut f)
            } else {
                csv_records(Path::new("t.csv"), body, eof, b',', 7, &mut index, &mut f)
            };
            (seen, cut.unwrap())
        };
        let bodies = [
            "id,ttfb_ms\na,1\nb,2\n",
            "id,ttfb_ms\na,1\nb,2",
            "a,1\n\n\nb,,\n,\n\n",
            "\n\na,1\nb",
            "\n\n\n",
            "a\n\n\nb\n\n",
            "only",
            "",
            "a,\u{e9},\t x \n\u{1f600}\n",
        ];
        for body in bodies {
            let (plain, plain_cut) = read(true, body.as_bytes(), true);
            let (csv, csv_cut) = read(false, body.as_bytes(), true);
            assert_eq!((plain, plain_cut), (csv, csv_cut), "{body:?}");
            // Before the file's end, the csv crate holds its last record back for the next
            // block (it may be cut off); the plain reading hands it on when its line has
            // ended, and the next block begins after it.
            let (plain, plain_cut) = read(true, body.as_bytes(), false);
            let (csv, csv_cut) = read(false, body.as_bytes(), false);
            assert!(
                plain.starts_with(&csv) && plain.len() <= csv.len() + 1,
                "{body:?}"
            );
            assert!(plain_cut >= csv_cut, "{body:?}");
        }
    }

    #[test]
    fn the_whole_record_check_agrees_with_the_field_by_field_one() {
        // Fields of every kind of byte run: ASCII, whole characters of each width, a
        // character's lead or continuation bytes alone, bytes never in UTF-8.
        let parts: [&[u8]; 10] = [
            b"",
            b"a1",
            "\u{e9}".as_bytes(),
            "\u{20ac}".as_bytes(),
            "\u{1f600}".as_bytes(),
            b"\xC3",
            b"\xA9",
            b"\xE2\x82",
            b"\x82\xAC",
            b"\xFF",
        ];
        let header = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let mut record = csv::ByteRecord::new();
        for x in parts {
            for y in parts {
                for z in parts {
                    record.clear();
                    record.push_field(x);
                    record.push_field(y);
                    record.push_field(z);
                    let each = check_fields(&record, &header, 2, None).is_none();
                    assert_eq!(utf8_fields(&record), each, "{x:?} {y:?} {z:?}");
                }
            }
        }
    }

    #[test]
    fn a_character_split_across_two_fields_is_not_utf8() {
        // `é` is C3 A9: cut by the separator, neither field is UTF-8, although the record's
        // fields put together (the csv crate's one slice of them) are.
        let header = vec!["id".to_string(), "note".to_string()];
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(&b"a\xC3,\xA9b\n"[..]);
        let mut record = csv::ByteRecord::new();
        assert!(reader.read_byte_record(&mut record).unwrap());
        assert!(std::str::from_utf8(record.as_slice()).is_ok());
        let bad = check_record(&record, &header, false, 2, None).expect("a bad record");
        assert_eq!((bad.line, bad.column), (2, Some(1)));
        assert!(bad.message.contains("0xC3"), "{}", bad.message);
        // Whole characters in every field: a good record.
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader("a\u{e9},\u{e9}b\n".as_bytes());
        assert!(reader.read_byte_record(&mut record).unwrap());
        assert!(check_record(&record, &header, false, 2, None).is_none());
    }

    #[test]
    fn a_clean_file_is_not_rewritten() {
        assert!(!rewritten("id,ttfb_ms\na,1\nb,2\n"));
        assert!(!rewritten("id,ttfb_ms\r\na,1\r\nb,2\r\n"));
        assert!(!rewritten("id,ttfb_ms\na,1\nb,2"));
    }

    #[test]
    fn a_blank_line_inside_a_quoted_value_is_not_a_blank_line() {
        assert!(!rewritten("id,note\na,\"x\n\ny\"\nb,z\n"));
        assert!(!rewritten("id,note\r\na,\"x\r\n\r\ny\"\r\nb,z\r\n"));
    }

    #[test]
    fn a_blank_line_between_or_after_records_is_dropped() {
        for text in [
            "\nid,ttfb_ms\na,1\n",
            "id,ttfb_ms\n\na,1\n",
            "id,ttfb_ms\r\n\r\na,1\r\n",
            "id,ttfb_ms\na,1\n\n",
            "id,ttfb_ms\r\na,1\r\n\r\n",
        ] {
            assert!(rewritten(text), "{text:?}");
        }
    }
}
