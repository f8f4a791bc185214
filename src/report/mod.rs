//! Renderers: one file per format or command. Each turns a result into text (`json` any
//! result, the others their command's); none of them computes anything.

pub mod compare;
pub mod diagnostics;
pub mod explain;
pub mod html;
pub mod json;
pub mod markdown;
pub mod monitor;
pub mod rules;
mod terminal;
pub mod throughput;

pub use terminal::Terminal;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table};

use crate::summary::Summary;

/// Terminal tables of the fixed layout are this wide.
pub const WIDTH: u16 = 120;

/// The narrowest layout: below it tables cannot hold a name beside its figures, so a
/// narrower terminal gets this width's text (lines then wrap in the terminal).
pub const MIN_FIT: u16 = 40;

/// How wide terminal text may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Width {
    /// Files and pipes: tables fit 120 columns and prose lines are as long as they are, so
    /// the output does not depend on where it is written.
    #[default]
    Fixed,
    /// A terminal this many columns wide: tables and prose lines fit in it.
    Fit(u16),
}

impl Width {
    /// `Fit` at `columns` (at least `MIN_FIT`).
    pub fn fit(columns: u16) -> Width {
        Width::Fit(columns.max(MIN_FIT))
    }

    /// The width of the terminal stdout writes to, as comfy-table detects it; `Fixed` when
    /// stdout is not a terminal (or its size is unknown).
    pub fn of_stdout() -> Width {
        Table::new().width().map(Width::fit).unwrap_or(Width::Fixed)
    }

    fn columns(self) -> Option<usize> {
        match self {
            Width::Fixed => None,
            Width::Fit(n) => Some(n as usize),
        }
    }
}

/// A terminal table with the given header; the columns in `right` are right-aligned (the
/// numeric ones). Turn it into text with `render`.
pub fn table<S: ToString>(header: &[S], right: impl IntoIterator<Item = usize>) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(WIDTH)
        .set_header(header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    for i in right {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// Lines per row beyond which a table fitted to the width is shown as records instead.
const TALL: usize = 2;

/// A table with only the rule under its header, for a terminal too narrow for borders.
const COMPACT: &str = "     ═             ";

/// Display columns of a piece of text (every glyph used here is one column wide).
fn cols(s: &str) -> usize {
    s.chars().count()
}

/// A table as text. `Fixed`: the table as built. `Fit(n)`: the same table in n columns,
/// every column at least as wide as its longest word so names and figures never split,
/// with borders or else in the compact style; when even that does not fit, a record per
/// row instead (`stacked`).
pub fn render(mut t: Table, width: Width) -> String {
    let Some(n) = width.columns() else {
        return t.to_string();
    };
    let header: Vec<String> = t
        .header()
        .map(|h| h.cell_iter().map(|c| c.content()).collect())
        .unwrap_or_default();
    let rows: Vec<Vec<String>> = t
        .row_iter()
        .map(|r| r.cell_iter().map(|c| c.content()).collect())
        .collect();
    let count = t.column_count();
    let longest_word = |i: usize| {
        header
            .get(i)
            .into_iter()
            .chain(rows.iter().filter_map(|r| r.get(i)))
            .flat_map(|c| c.split_whitespace())
            .map(cols)
            .max()
            .unwrap_or(0)
    };
    let least: Vec<usize> = (0..count).map(longest_word).collect();
    let words: usize = least.iter().sum();
    // First the usual table (`│ a ┆ b │`: a space either side of each column, a rule
    // between and around them), then a compact one with only the header rule and two
    // spaces between columns.
    let compact = (words + 2 * count.saturating_sub(1) <= n).then(|| {
        let mut c = t.clone();
        c.load_preset(COMPACT);
        for i in 0..count {
            if let Some(col) = c.column_mut(i) {
                col.set_padding((0, if i + 1 == count { 0 } else { 2 }));
            }
        }
        c
    });
    let full = (words + 3 * count < n).then_some(t);
    for (mut t, open) in [(full, false), (compact, true)]
        .into_iter()
        .filter_map(|(t, open)| t.map(|t| (t, open)))
    {
        t.set_width(n as u16);
        for (i, w) in least.iter().enumerate() {
            if let Some(c) = t.column_mut(i) {
                // The boundary counts the padding.
                let pad = c.padding_width();
                c.set_constraint(ColumnConstraint::LowerBoundary(comfy_table::Width::Fixed(
                    *w as u16 + pad,
                )));
            }
        }
        let mut text = t.to_string();
        if open {
            // No right border: the padding of the last column is trailing space.
            text = text
                .lines()
                .map(str::trim_end)
                .collect::<Vec<_>>()
                .join("\n");
        }
        // A table squeezed to a few words a line reads worse than records.
        let tall = text.lines().count() > TALL * (rows.len() + 1) + 4;
        if text.lines().all(|l| cols(l) <= n) && !tall {
            return text;
        }
    }
    stacked(&header, &rows, n)
}

/// A table too wide for the terminal, as one record per row: a rule naming the row by its
/// first cell (its number and name in a numbered table), then each other column as
/// `header  value`, values wrapped at spaces. A row whose first cell is empty continues the
/// record above (a table's continuation line). Like a table's text, no final line break.
fn stacked(header: &[String], rows: &[Vec<String>], n: usize) -> String {
    // A numbered table's records are titled by number and name (`── 3 prefill_slow ──`).
    let title_cells = if header.first().map(String::as_str) == Some("#") {
        2
    } else {
        1
    };
    let key = header
        .iter()
        .skip(title_cells)
        .map(|h| cols(h))
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for row in rows {
        let title: Vec<String> = row
            .iter()
            .take(title_cells)
            .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        let title_empty = title.iter().all(|c| c.is_empty());
        if !title_empty {
            // A column without a heading (a verdict such as `ok`) joins the title.
            let mut title = title.join(" ");
            for (h, v) in header.iter().zip(row).skip(title_cells) {
                if h.is_empty() && !v.trim().is_empty() {
                    title.push_str(&format!(" · {}", v.trim()));
                }
            }
            let title = match header.first().map(|h| h.as_str()) {
                Some("#") | None | Some("") => format!("── {title} "),
                Some(h) => format!("── {h}: {title} "),
            };
            let rule = n.saturating_sub(cols(&title));
            out.push(format!("{title}{}", "─".repeat(rule)));
        }
        for (h, v) in header.iter().zip(row).skip(title_cells) {
            if v.trim().is_empty() || (h.is_empty() && !title_empty) {
                continue;
            }
            let head = format!("{h:<key$}  ");
            let indent = if cols(&head) * 2 > n { 2 } else { cols(&head) };
            for (k, part) in v.lines().enumerate() {
                let lead = if k == 0 {
                    head.clone()
                } else {
                    " ".repeat(indent)
                };
                out.extend(wrap(&lead, part, indent, n));
            }
        }
    }
    out.join("\n")
}

/// `lead` then the words of `text`, in lines of at most `n` columns (a word longer than a
/// line stands alone: names are never split), continuation lines indented by `indent`.
fn wrap(lead: &str, text: &str, indent: usize, n: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = lead.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && cols(&line) + 1 + cols(word) > n {
            lines.push(std::mem::replace(&mut line, " ".repeat(indent)));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line.trim_end().to_string());
    lines
}

/// Prose lines fitted to the width: `Fixed` leaves the text as it is; `Fit(n)` wraps each
/// longer line at spaces, continuing under its value (after a `label  ` column when the
/// line has one, else two columns in). Tables rendered for the width are left alone.
pub fn fit(text: &str, width: Width) -> String {
    let Some(n) = width.columns() else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if cols(body) <= n {
            out.push_str(line);
            continue;
        }
        let lead = body.len() - body.trim_start().len();
        // The value column: after the first run of two or more spaces past the label.
        let label_end = body[lead..].find("  ").map(|i| lead + i).and_then(|i| {
            let value = i + body[i..].len() - body[i..].trim_start().len();
            (cols(&body[..value]) * 2 <= n).then_some(value)
        });
        let (head, rest, indent) = match label_end {
            Some(v) => (&body[..v], &body[v..], cols(&body[..v])),
            None => (&body[..lead], &body[lead..], cols(&body[..lead]) + 2),
        };
        out.push_str(&wrap(head, rest, indent, n).join("\n"));
        out.push_str(end);
    }
    out
}

pub trait Renderer {
    fn render(&self, summary: &Summary) -> String;
}

/// A figure for display: `—` for missing, no decimals from 100 up, one below.
pub fn fmt_num(x: Option<f64>) -> String {
    match x {
        None => "—".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// The q-quantile of n values for display: `n<100` when the sample cannot support it
/// (`stats::support`), else as `fmt_num`.
pub fn fmt_q(q: f64, n: u64, x: Option<f64>) -> String {
    crate::stats::support::cell(q, n).unwrap_or_else(|| fmt_num(x))
}

/// p50, p95 and p99 of a `Pct` for display, each as `fmt_q`.
pub fn fmt_pct(p: &crate::summary::Pct) -> [String; 3] {
    p.quantiles().map(|(_, q, v)| fmt_q(q, p.n, v))
}

pub fn fmt_share(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

pub use crate::words::plural;
