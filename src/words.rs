//! Wording shared by every layer that writes a message: a count with its noun.

/// `1 request`, `2 requests`: a count with its noun, singular for one.
pub fn plural(n: impl Into<u64>, noun: &str) -> String {
    match n.into() {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}
