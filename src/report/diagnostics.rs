//! Diagnostics for stderr: notes, warnings and the bad-row list of a run. The terminal
//! renderers leave them out of the results (stdout holds results only, so a pipe gets
//! the tables and nothing else); the CLI prints these lines, each heading after
//! `tracediag: `. JSON keeps the same facts as fields, and report files keep their notes.

use crate::analyze::absent_column_sentence;
use crate::compare::Comparison;
use crate::explain::Explanation;
use crate::monitor;
use crate::summary::{BadRows, Summary};
use crate::throughput::Throughput;

/// One diagnostic: a `note:` or `warning:` heading and the lines that detail it (the
/// bad-row examples), printed indented under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub heading: String,
    pub detail: Vec<String>,
}

impl Diagnostic {
    pub fn note(text: impl std::fmt::Display) -> Self {
        Diagnostic {
            heading: format!("note: {text}"),
            detail: vec![],
        }
    }

    pub fn warning(text: impl std::fmt::Display) -> Self {
        Diagnostic {
            heading: format!("warning: {text}"),
            detail: vec![],
        }
    }
}

fn bad_rows(b: &Option<BadRows>) -> Vec<Diagnostic> {
    b.iter()
        .map(|b| Diagnostic {
            heading: format!("warning: {}", b.sentence()),
            detail: b.examples.iter().map(|e| format!("  {e}")).collect(),
        })
        .collect()
}

fn absent<'a>(flag: &'a str, columns: &'a [String]) -> impl Iterator<Item = Diagnostic> + 'a {
    columns.iter().map(move |c| {
        Diagnostic::warning(format!(
            "{}: every request is in its (none) group",
            absent_column_sentence(&format!("{flag} {c}"), c)
        ))
    })
}

fn notes(notes: &[String]) -> impl Iterator<Item = Diagnostic> + '_ {
    notes.iter().map(Diagnostic::note)
}

/// `analyze` and `report` on gateway logs.
pub fn summary(s: &Summary) -> Vec<Diagnostic> {
    let mut out = bad_rows(&s.bad_rows);
    out.extend(s.groups.iter().flat_map(|g| absent("--by", &g.absent)));
    out.extend(
        s.overlapping_inputs
            .iter()
            .map(|o| Diagnostic::warning(o.sentence())),
    );
    out.extend(notes(&s.notes));
    out
}

pub fn throughput(t: &Throughput) -> Vec<Diagnostic> {
    absent("--by", &t.absent)
        .chain(
            t.overlapping_inputs
                .iter()
                .map(|o| Diagnostic::warning(o.sentence())),
        )
        .chain(notes(&t.notes))
        .collect()
}

/// The contract warnings (the table on stdout marks their rows) and the bad rows.
pub fn compare(c: &Comparison) -> Vec<Diagnostic> {
    let mut out = bad_rows(&c.bad_rows);
    out.extend(
        c.overlapping_inputs
            .iter()
            .map(|o| Diagnostic::warning(o.sentence())),
    );
    out.extend(
        c.contract
            .warnings
            .iter()
            .map(|w| Diagnostic::warning(&w.message)),
    );
    out
}

pub fn explain(e: &Explanation) -> Vec<Diagnostic> {
    bad_rows(match e {
        Explanation::Request(r) => &r.bad_rows,
        Explanation::Class(c) => &c.bad_rows,
    })
}

/// `analyze` on Azure Monitor exports.
pub fn monitor(s: &monitor::Summary) -> Vec<Diagnostic> {
    notes(&s.notes).collect()
}
