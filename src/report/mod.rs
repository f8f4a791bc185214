//! Renderers: one trait, one file per format. Each turns a `Summary` into text; none of
//! them computes anything.

mod json;
pub mod monitor;
pub mod rules;
mod terminal;
pub mod throughput;

pub use json::Json;
pub use terminal::Terminal;

use crate::summary::Summary;

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

pub fn fmt_share(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}
