//! `--format json`, for every command: the command's result as stable, pretty-printed JSON
//! (fields in declaration order, lists pre-sorted by the builders), one trailing newline.

use serde::Serialize;

/// `value` as the JSON every command prints.
pub fn render<T: Serialize + ?Sized>(value: &T) -> String {
    // The results are plain structs, lists, strings and numbers (maps keyed by strings),
    // which serde_json always writes.
    let mut s = serde_json::to_string_pretty(value).expect("a result always serializes");
    s.push('\n');
    s
}
