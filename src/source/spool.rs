//! Inputs that cannot be scanned where they are: gzip-compressed files and standard input
//! (`-`). Each is copied as a stream (never held in memory whole) into a temporary file,
//! decompressed on the way, and read from there like any file; the temporary file is
//! removed when the run drops its inputs (and by the CLI's interrupt handler). The input
//! itself is never changed, and every error names it, not the copy.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tempfile::TempPath;

use crate::error::{Error, Result};

/// The argument that stands for standard input.
pub const STDIN_ARG: &str = "-";
/// How standard input is named in messages and in the `source_file` column.
pub const STDIN_NAME: &str = "<stdin>";

/// The two magic bytes a gzip member starts with (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Temporary copies alive in this process, for the interrupt handler (a signal exits
/// without running destructors).
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(vec![]);

/// A temporary copy, removed when the last handle to it is dropped.
#[derive(Debug)]
pub struct Spooled(TempPath);

impl Drop for Spooled {
    fn drop(&mut self) {
        // Removed here, under the lock the signal handler takes (`TempPath`'s own removal
        // after it finds nothing): an interrupt in between cannot leave it on disk.
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|p| p.as_path() != self.0.as_ref() as &Path);
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A temporary file made by `create` and recorded in `LIVE` under its lock, so that an
/// interrupt between the two cannot leave it on disk unrecorded.
fn created_live(
    create: impl FnOnce() -> std::io::Result<tempfile::NamedTempFile>,
) -> std::io::Result<tempfile::NamedTempFile> {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = create()?;
    live.push(tmp.path().to_path_buf());
    Ok(tmp)
}

impl Spooled {
    /// Where the copy is.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// Remove every temporary copy still on disk. Called from the CLI's signal handler.
pub fn remove_all() {
    if let Ok(mut live) = LIVE.lock() {
        for p in live.drain(..) {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// An input as it is read: the file to read (`read`) and the name every message and the
/// `source_file` column use (`name`); `copy` keeps a temporary copy alive.
#[derive(Debug, Clone)]
pub struct Opened {
    pub name: PathBuf,
    pub read: PathBuf,
    pub copy: Option<Arc<Spooled>>,
    /// Whether the bytes were gzip-compressed.
    pub gzip: bool,
}

impl Opened {
    /// An error about the copy, rewritten to name the input (`Input` errors carry the
    /// path they were raised on; polars' messages may quote it too).
    pub fn rename(&self, e: Error) -> Error {
        if self.copy.is_none() {
            return e;
        }
        let copy = self.read.display().to_string();
        let name = self.name.display().to_string();
        match e {
            Error::Input { path, message } => Error::Input {
                path: if path == self.read {
                    self.name.clone()
                } else {
                    path
                },
                message: message.replace(&copy, &name),
            },
            Error::Unusable(mut r) => {
                if r.path == self.read {
                    r.path = self.name.clone();
                }
                Error::Unusable(r)
            }
            other => other,
        }
    }
}

/// Open one input: a plain file is read where it is; standard input and gzip-compressed
/// files are copied (decompressed) into a temporary file first.
pub fn open(path: &Path) -> Result<Opened> {
    if path.as_os_str() == STDIN_ARG {
        let name = PathBuf::from(STDIN_NAME);
        let stdin = std::io::stdin();
        return spool(&name, stdin.lock(), "");
    }
    let mut magic = [0u8; 2];
    let n = File::open(path)
        .and_then(|mut f| read_up_to(&mut f, &mut magic))
        .map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    if n == 2 && magic == GZIP_MAGIC {
        let file = File::open(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
        // `logs.tsv.gz` is read as a `.tsv`: the separator follows the inner extension.
        let inner = path
            .file_stem()
            .map(Path::new)
            .and_then(|s| s.extension())
            .and_then(|e| e.to_str())
            .map(|e| format!(".{e}"))
            .unwrap_or_default();
        return spool(path, BufReader::new(file), &inner);
    }
    Ok(Opened {
        name: path.to_path_buf(),
        read: path.to_path_buf(),
        copy: None,
        gzip: false,
    })
}

/// Copy `source` into a temporary file, decompressing it when it starts with the gzip
/// magic bytes. `suffix` keeps the extension the readers look at (`.tsv`).
fn spool(name: &Path, mut source: impl BufRead, suffix: &str) -> Result<Opened> {
    let fail = |what: &str, e: std::io::Error| Error::input(name, format!("{what}: {e}"));
    let mut tmp = created_live(|| {
        tempfile::Builder::new()
            .prefix(".tracediag-input-")
            .suffix(suffix)
            .tempfile()
    })
    .map_err(|e| fail("cannot create a temporary copy", e))?;
    let gzip = source
        .fill_buf()
        .map_err(|e| fail("cannot read", e))?
        .starts_with(&GZIP_MAGIC);
    {
        let mut out = std::io::BufWriter::new(tmp.as_file_mut());
        let copied = if gzip {
            // A file of several gzip members (`cat a.gz b.gz`) is one stream, as gunzip reads it.
            std::io::copy(&mut flate2::bufread::MultiGzDecoder::new(source), &mut out)
        } else {
            std::io::copy(&mut source, &mut out)
        };
        copied.map_err(|e| {
            if gzip {
                fail("cannot decompress (gzip)", e)
            } else {
                fail("cannot read", e)
            }
        })?;
        out.flush()
            .map_err(|e| fail("cannot write a temporary copy", e))?;
    }
    let path = tmp.into_temp_path();
    Ok(Opened {
        name: name.to_path_buf(),
        read: path.to_path_buf(),
        copy: Some(Arc::new(Spooled(path))),
        gzip,
    })
}

/// An empty temporary file for a copy of `name`'s rows that tracediag writes itself (the row
/// check's repaired rows), removed like a spooled copy; `suffix` keeps the extension the
/// readers look at. Returns the file open for writing and the handle that keeps it.
pub fn scratch(name: &Path, suffix: &str) -> Result<(File, Arc<Spooled>)> {
    let tmp = created_live(|| {
        tempfile::Builder::new()
            .prefix(".tracediag-rows-")
            .suffix(suffix)
            .tempfile()
    })
    .map_err(|e| Error::input(name, format!("cannot create a temporary copy: {e}")))?;
    let (file, path) = tmp.into_parts();
    Ok((file, Arc::new(Spooled(path))))
}

/// One JSON document (a pretty-printed object) rewritten as a single JSON line, so that
/// it is read as a one-row JSON-lines log. A document is parsed whole (as a JSON array is).
pub fn one_line(opened: &Opened) -> Result<Opened> {
    let name = opened.name.as_path();
    let file =
        File::open(&opened.read).map_err(|e| Error::input(name, format!("cannot read: {e}")))?;
    let mut reader = BufReader::new(file);
    if reader
        .fill_buf()
        .is_ok_and(|b| b.starts_with("\u{feff}".as_bytes()))
    {
        reader.consume(3);
    }
    let doc: serde_json::Value = serde_json::from_reader(reader).map_err(|e| {
        Error::input(
            name,
            format!("expected one JSON object, found invalid JSON: {e}"),
        )
    })?;
    let mut line = serde_json::to_vec(&doc)
        .map_err(|e| Error::input(name, format!("cannot rewrite the document: {e}")))?;
    line.push(b'\n');
    spool(name, &line[..], ".jsonl").map(|mut o| {
        o.gzip = opened.gzip;
        o
    })
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(vec![], flate2::Compression::default());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn a_gzip_file_is_decompressed_into_a_copy_that_goes_with_its_last_handle() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs.tsv.gz");
        std::fs::write(&path, gzip(b"a\tb\n1\t2\n")).unwrap();
        let opened = open(&path).unwrap();
        assert!(opened.gzip);
        assert_eq!(opened.name, path);
        assert_ne!(opened.read, path);
        assert_eq!(opened.read.extension().unwrap(), "tsv");
        assert_eq!(std::fs::read(&opened.read).unwrap(), b"a\tb\n1\t2\n");
        let copy = opened.read.clone();
        drop(opened);
        assert!(!copy.exists());
        // The input itself is untouched.
        assert_eq!(std::fs::read(&path).unwrap(), gzip(b"a\tb\n1\t2\n"));
    }

    #[test]
    fn a_plain_file_is_read_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs.csv");
        std::fs::write(&path, "a,b\n").unwrap();
        let opened = open(&path).unwrap();
        assert!(!opened.gzip && opened.copy.is_none());
        assert_eq!(opened.read, path);
    }

    #[test]
    fn a_broken_gzip_stream_is_an_error_naming_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs.jsonl.gz");
        let mut bytes = gzip(b"{\"a\":1}\n");
        bytes.truncate(bytes.len() / 2);
        std::fs::write(&path, bytes).unwrap();
        let e = open(&path).unwrap_err().to_string();
        assert!(e.starts_with(&path.display().to_string()), "{e}");
        assert!(e.contains("cannot decompress (gzip)"), "{e}");
    }
}
