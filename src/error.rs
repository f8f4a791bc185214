//! Typed errors for the library. Library code never prints or exits: it returns one of
//! these, and the CLI renders it once and maps it to an exit code.

use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong in a run. Each variant says what was expected and what
/// was found, and where (file, row or line, column).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A rule file that does not load or does not type-check (boxed: it carries the
    /// source line and notes, and errors travel through every `Result`).
    #[error("{0}")]
    Rule(Box<RuleError>),

    /// An input file that cannot be read as a request log.
    #[error("{path}: {message}", path = .path.display())]
    Input { path: PathBuf, message: String },

    /// An input that was read but cannot be used as a request log: no timing field maps,
    /// or no row can be read (boxed: it carries the columns found).
    #[error("{0}")]
    Unusable(Box<Refusal>),

    /// An output that must not or cannot be written.
    #[error("{path}: {message}", path = .path.display())]
    Output { path: PathBuf, message: String },

    /// Arguments that make no sense together (caught after clap parsed them).
    #[error("{0}")]
    Usage(String),
}

impl Error {
    pub fn input(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Error::Input {
            path: path.into(),
            message: message.into(),
        }
    }

    pub fn output(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Error::Output {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl From<RuleError> for Error {
    fn from(e: RuleError) -> Self {
        Error::Rule(Box::new(e))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an input was refused, with what was found in it: the format it was read as and
/// its column names (names only: values may hold prompts, responses or keys), and what it
/// looks like when it is recognisably another tool's file.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub path: PathBuf,
    /// The format the file was read as ("JSON lines", "CSV", …).
    pub read_as: String,
    /// What is missing: "no timing field can be mapped", "every row is unreadable", …
    pub reason: String,
    /// The column (or top-level key) names found, in file order.
    pub columns: Vec<String>,
    /// What the file looks like and what to pass instead, when it is recognised.
    pub looks_like: Option<String>,
}

/// The most column names a refusal lists (a wide export would fill the screen).
const LISTED_COLUMNS: usize = 30;
/// The most characters of one column name shown (a headerless CSV's "names" are values).
const NAME_CHARS: usize = 64;

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: cannot be used as a request log: {}",
            self.path.display(),
            self.reason
        )?;
        write!(f, "\n  read as: {}", self.read_as)?;
        if self.columns.is_empty() {
            write!(f, "\n  columns found: none")?;
        } else {
            let shown: Vec<String> = self
                .columns
                .iter()
                .take(LISTED_COLUMNS)
                .map(|c| short_name(c))
                .collect();
            write!(
                f,
                "\n  columns found ({}): {}",
                self.columns.len(),
                shown.join(", ")
            )?;
            if self.columns.len() > LISTED_COLUMNS {
                write!(f, ", … ({} more)", self.columns.len() - LISTED_COLUMNS)?;
            }
        }
        if let Some(hint) = &self.looks_like {
            write!(f, "\n  = help: {hint}")?;
        }
        write!(
            f,
            "\n  = note: tracediag reads per-request gateway logs with at least one timing field; `tracediag fields` lists the names it maps, and --map FIELD=COLUMN names a log's own columns"
        )
    }
}

/// A column name as a refusal shows it: control characters escaped, cut to
/// [`NAME_CHARS`] characters.
fn short_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .take(NAME_CHARS)
        .flat_map(char::escape_debug)
        .collect();
    if name.chars().count() > NAME_CHARS {
        s.push('…');
    }
    s
}

/// A rule-file error pointing at file:line:column, rendered with the offending line and a
/// caret under the span, in the manner of rustc and just.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleError {
    pub file: String,
    /// 1-based; 0 when the error concerns the whole file.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    /// Number of characters to underline (at least 1 when a line is known).
    pub width: usize,
    pub message: String,
    /// The source line, for the caret display.
    pub source_line: Option<String>,
    /// Extra notes: origins of the fields involved, how to convert.
    pub notes: Vec<String>,
    /// A suggestion, e.g. the nearest valid name.
    pub help: Option<String>,
}

impl std::error::Error for RuleError {}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: {}", self.message)?;
        if self.line == 0 {
            write!(f, "  --> {}", self.file)?;
        } else {
            write!(f, "  --> {}:{}:{}", self.file, self.line, self.column)?;
        }
        if let Some(src) = &self.source_line {
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            let (shown, caret, width) = excerpt(src, self.column, self.width);
            write!(f, "\n{pad} |\n{num} | {shown}\n{pad} | ")?;
            write!(f, "{}{}", " ".repeat(caret), "^".repeat(width))?;
        }
        for note in &self.notes {
            write!(f, "\n  = note: {note}")?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {help}")?;
        }
        Ok(())
    }
}

/// The most characters of a source line the caret display shows.
const SHOWN_CHARS: usize = 100;
/// How many of them come before the caret when a long line is cut.
const SHOWN_BEFORE: usize = 40;

/// The part of `line` to print under an error, the caret's offset in it and the number of
/// carets. A line longer than [`SHOWN_CHARS`] (a generated expression can be 17 KB on one
/// line) is cut to a window around `column`, each cut side marked `…`, so the error stays a
/// few lines long whatever the file holds.
fn excerpt(line: &str, column: usize, width: usize) -> (String, usize, usize) {
    let chars: Vec<char> = line.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    if chars.len() <= SHOWN_CHARS {
        return (line.to_string(), at, width.max(1));
    }
    let end = (at.saturating_sub(SHOWN_BEFORE) + SHOWN_CHARS).min(chars.len());
    let start = end - SHOWN_CHARS;
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.extend(&chars[start..end]);
    if end < chars.len() {
        shown.push('…');
    }
    let caret = at - start + usize::from(start > 0);
    (shown, caret, width.min(end - at).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_line_is_shown_whole() {
        assert_eq!(excerpt("a + b", 5, 1), ("a + b".to_string(), 4, 1));
        assert_eq!(excerpt("a + b", 1, 0), ("a + b".to_string(), 0, 1));
    }

    #[test]
    fn a_long_line_is_cut_around_the_column() {
        let line: String = (0..300)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        // Column 151 is index 150; the window starts 40 characters before it.
        let (shown, caret, width) = excerpt(&line, 151, 3);
        assert_eq!(shown.chars().count(), SHOWN_CHARS + 2);
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        assert_eq!(shown.chars().nth(caret), line.chars().nth(150));
        assert_eq!((caret, width), (41, 3));
    }

    #[test]
    fn a_cut_at_either_end_is_marked_only_there() {
        let line = "x".repeat(250) + "END";
        let (shown, caret, width) = excerpt(&line, 251, 10);
        assert!(shown.starts_with('…') && shown.ends_with("END"));
        assert_eq!(&shown[shown.len() - 3..], "END");
        assert_eq!(shown.chars().nth(caret), Some('E'));
        // The carets stop at the end of the line.
        assert_eq!(width, 3);
        let (shown, caret, _) = excerpt(&line, 1, 1);
        assert!(!shown.starts_with('…') && shown.ends_with('…'));
        assert_eq!(caret, 0);
    }

    #[test]
    fn the_caret_counts_characters_not_bytes() {
        let line = "é".repeat(200);
        let (shown, caret, _) = excerpt(&line, 120, 1);
        assert_eq!(shown.chars().count(), SHOWN_CHARS + 2);
        assert_eq!(caret, 41);
    }
}
