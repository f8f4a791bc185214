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
            write!(f, "\n{pad} |\n{num} | {src}\n{pad} | ")?;
            write!(
                f,
                "{}{}",
                " ".repeat(self.column.saturating_sub(1)),
                "^".repeat(self.width.max(1))
            )?;
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
