//! Renderers: one trait, one file per format. Each turns a `Summary` into text; none of
//! them computes anything.

pub mod compare;
pub mod diagnostics;
pub mod explain;
pub mod html;
mod json;
pub mod markdown;
pub mod monitor;
pub mod rules;
mod terminal;
pub mod throughput;

pub use json::Json;
pub use terminal::Terminal;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use crate::summary::Summary;

/// Terminal tables have a fixed width, so output does not depend on the terminal it ran in.
pub const WIDTH: u16 = 120;

/// A terminal table with the given header; the columns in `right` are right-aligned (the
/// numeric ones).
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
