//! The row check: every line of a JSON-lines log, every element of a JSON array and every
//! record of a CSV log is checked before polars reads the file, because polars' readers
//! stop at the first malformed line without saying which one, silently pick one of two
//! duplicated keys, fail a whole file over one row whose value has another JSON type, panic
//! on integers beyond 64 bits, and overflow the stack on deeply nested objects. The check
//! finds each bad row with its line and column; the policy (`--on-bad-row`) then decides:
//! stop with that error, leave the row out, or keep it with its unreadable parts null. A
//! file with no bad row is read by polars directly (the fast path; a CSV or JSON-lines log
//! read whole is copied in the check's own reading, `source::copy`); otherwise polars reads
//! a repaired copy written to a temporary file. JSON lines are checked block by block
//! (`BLOCK` bytes of whole lines at a time), so the check holds one block, not the file.
//! For JSON the same pass notes the JSON type of every value
//! the mapping can read (`types`), and polars reads with the schema made from them instead
//! of inferring one, which fails the whole file where rows disagree on a type.
//!
//! What makes a row bad:
//! - JSON (`jsonl`, `array`, the value rules in `json_row`): not JSON, not an object,
//!   trailing text, nesting deeper than serde_json's 128 levels, a key given twice (in the
//!   row, in `other` or in `other.timing`), `other`/`timing` that are not objects (`other`
//!   may be a JSON string of one), a catalogue field holding a list, an object, a boolean
//!   latency or an integer beyond 64 bits.
//! - CSV (`csv`): a record with more or fewer fields than the header, a field that is not
//!   UTF-8 (typically a Latin-1 export), an `other` that is not JSON.
//!
//! Values that are well-formed text but not of their field's type (`"abc"` in a timing
//! column, `NaN`) are not checked here: the canonical mapping turns them into nulls and
//! counts them (`dq_unparsed`), and the same policy applies to them in `analyze`.

mod array;
mod csv;
mod gather;
mod json_row;
mod jsonl;
mod types;

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::spool::Spooled;
use super::LineMap;
use crate::error::{Error, Result};

pub use array::{check_json_array, check_json_document};
pub use csv::{check_csv, Records};
pub use gather::{Gather, Want, Wanted};
pub(crate) use json_row::catalogue_kind;
pub use jsonl::{check_json_lines, head_types, JsonRows};
pub use types::{Place, Types};

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
    /// When there is a bad row: a temporary file of the rows as polars should read them
    /// (bad rows repaired or left out per the policy; blank lines dropped).
    pub repaired: Option<Arc<Spooled>>,
    /// With `Keep`: 1-based data rows of `repaired` that were bad (for `dq_unreadable`).
    pub kept_rows: Vec<u32>,
    /// The line each row polars reads begins on.
    pub lines: LineMap,
    /// JSON: the type of every value the mapping can read, for the schema polars reads with.
    pub types: Types,
    /// The data rows the file holds (lines or records, good and bad; not a CSV header or
    /// blank lines): with `bad`, whether any row can be read at all.
    pub rows: u64,
}

pub(super) const BOM: &[u8] = "\u{feff}".as_bytes();

pub(super) fn read_all(path: &Path) -> Result<Vec<u8>> {
    let mut bytes = vec![];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    Ok(bytes)
}

/// How much of a JSON-lines file the row check holds at once: whole lines up to this size
/// (a longer line is held whole).
pub(crate) const BLOCK: usize = 16 << 20;

/// Read from `file` onto the end of `buf` until `buf` holds `want` bytes or the file ends;
/// returns whether it ended. What `buf` held already stays in front.
pub(super) fn fill(file: &mut impl Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let mut filled = buf.len();
    buf.resize(want.max(filled), 0);
    let eof = loop {
        if filled == buf.len() {
            break false;
        }
        match file.read(&mut buf[filled..]) {
            Ok(0) => break true,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                buf.truncate(filled);
                return Err(e);
            }
        }
    };
    buf.truncate(filled);
    Ok(eof)
}

/// Read `path` in blocks of whole lines, a byte-order mark left out, calling
/// `f(block, lines_before)`: every block but the last ends with a line end. Returns whether
/// the file began with a byte-order mark. The next block is read on a thread of its own
/// while `f` works on this one.
pub(crate) fn for_each_block(
    path: &Path,
    block: usize,
    mut f: impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<bool> {
    let fail = |e: std::io::Error| Error::input(path, format!("cannot read: {e}"));
    let file = std::fs::File::open(path).map_err(fail)?;
    // One block waits read while `f` works; the blocks `f` is done with go back to be
    // read into again.
    let (blocks, received) = std::sync::mpsc::sync_channel(1);
    let (spent, returned) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(move || read_blocks(file, block.max(1), &blocks, &returned));
        let mut lines_before = 0u64;
        let mut bom = false;
        for read in received {
            let (bytes, starts_with_bom): (Vec<u8>, bool) = read.map_err(fail)?;
            bom |= starts_with_bom;
            if !bytes.is_empty() {
                f(&bytes, lines_before)?;
                lines_before += memchr::memchr_iter(b'\n', &bytes).count() as u64;
            }
            // The reader may have ended: then the block is not needed.
            let _ = spent.send(bytes);
        }
        Ok(bom)
    })
}

/// A block of whole lines, and whether it is the file's first and began with a byte-order
/// mark (left out of it).
type Block = std::io::Result<(Vec<u8>, bool)>;

/// `for_each_block`'s reader: the file's blocks in order, each `block` bytes of whole lines
/// (a longer line whole), until the file ends, a read fails or no one receives them.
fn read_blocks(
    mut file: std::fs::File,
    block: usize,
    blocks: &std::sync::mpsc::SyncSender<Block>,
    returned: &std::sync::mpsc::Receiver<Vec<u8>>,
) {
    let mut buf: Vec<u8> = Vec::with_capacity(block);
    let mut first = true;
    // The file began with a mark not yet said so.
    let mut bom = false;
    let mut want = block.max(BOM.len());
    loop {
        let eof = match read_to(&mut file, &mut buf, want) {
            Ok(eof) => eof,
            Err(e) => {
                let _ = blocks.send(Err(e));
                return;
            }
        };
        // The first read fills the buffer (or holds the whole file): a mark is there whole.
        if first && buf.starts_with(BOM) {
            buf.drain(..BOM.len());
            bom = true;
        }
        first = false;
        let end = match memchr::memrchr(b'\n', &buf) {
            _ if eof => buf.len(),
            Some(i) => i + 1,
            None => {
                // A line longer than the block: hold more of it.
                want = buf.len().max(1) * 2;
                continue;
            }
        };
        // The start of the next line goes to the front of the next buffer.
        let mut next = returned.try_recv().unwrap_or_default();
        next.clear();
        next.extend_from_slice(&buf[end..]);
        buf.truncate(end);
        if (!buf.is_empty() || bom) && blocks.send(Ok((buf, bom))).is_err() {
            return;
        }
        bom = false;
        if eof {
            return;
        }
        buf = next;
        want = block;
    }
}

/// Read from `file` onto the end of `buf` until it holds `want` bytes or the file ends;
/// returns whether it ended. Read into the buffer's spare room, which is not zeroed first.
fn read_to(file: &mut impl Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let missing = want.saturating_sub(buf.len());
    if missing == 0 {
        return Ok(false);
    }
    buf.reserve(missing);
    let read = file.take(missing as u64).read_to_end(buf)?;
    Ok(read < missing)
}

pub(super) fn first_error(path: &Path, bad: &BadRow) -> Error {
    Error::input(
        path,
        format!("{bad} (--on-bad-row skip or keep reads the rest of the file)"),
    )
}
