//! `--format json`: the summary as stable, pretty-printed JSON (fields in declaration
//! order, lists pre-sorted by the summary builder).

use super::Renderer;
use crate::summary::Summary;

pub struct Json;

impl Renderer for Json {
    fn render(&self, summary: &Summary) -> String {
        let mut s = serde_json::to_string_pretty(summary).expect("a summary always serializes");
        s.push('\n');
        s
    }
}
