//! An incident window (`--since`/`--until`) that holds nothing is an error, not an empty
//! report: a typo in a date would otherwise read as "0 requests". The error names the
//! window and the span the data does cover, so the typo shows. The span is asked of the
//! plan before the window only on this failure path.

use polars::prelude::*;

use crate::analyze::iso_ms;
use crate::error::Error;

/// What the data outside the window holds: its first and last timestamp (ms since the
/// epoch) and how many of its rows fall inside the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub first: Option<i64>,
    pub last: Option<i64>,
    pub in_window: u64,
}

/// The span of `column` in `lf` (not yet narrowed) and the rows in `[since, until)`: one
/// streaming aggregate.
pub fn span(
    lf: LazyFrame,
    column: &str,
    since: Option<i64>,
    until: Option<i64>,
) -> PolarsResult<Span> {
    let t = col(column).cast(DataType::Int64);
    let inside = crate::analyze::time_filter(column, since, until).unwrap_or(lit(true));
    let df = crate::stats::collect(
        lf.select([
            t.clone().min().alias("first"),
            t.max().alias("last"),
            inside
                .fill_null(lit(false))
                .cast(DataType::UInt64)
                .sum()
                .alias("in_window"),
        ]),
    )?;
    let get = |name: &str| -> PolarsResult<Option<i64>> { Ok(df.column(name)?.i64()?.get(0)) };
    Ok(Span {
        first: get("first")?,
        last: get("last")?,
        in_window: df.column("in_window")?.u64()?.get(0).unwrap_or(0),
    })
}

/// The window as the flags gave it: `--since 2026-11-02T10:00:00.000Z --until …`.
pub fn flags(since: Option<i64>, until: Option<i64>) -> String {
    let mut parts = vec![];
    if let Some(s) = since.and_then(iso_ms) {
        parts.push(format!("--since {s}"));
    }
    if let Some(u) = until.and_then(iso_ms) {
        parts.push(format!("--until {u}"));
    }
    parts.join(" ")
}

/// The error for a window that holds no `item` (`request`, `window`) of `source` (the
/// inputs as the message names them), or `None` when the window does hold some (the rows
/// were left out by something else, e.g. `--on-bad-row skip`).
pub fn empty(
    since: Option<i64>,
    until: Option<i64>,
    item: &str,
    source: &str,
    span: Span,
) -> Option<Error> {
    if (since.is_none() && until.is_none()) || span.in_window > 0 {
        return None;
    }
    let held = match (span.first.and_then(iso_ms), span.last.and_then(iso_ms)) {
        (Some(first), Some(last)) => {
            format!("the {item}s of {source} run from {first} to {last} (UTC)")
        }
        _ => format!("no {item} in {source} has a timestamp"),
    };
    Some(Error::Usage(format!(
        "the incident window {} holds no {item}: {held}",
        flags(since, until)
    )))
}

/// The inputs as a window error names them: up to three paths, or the first and a count.
pub fn source_name(paths: &[String]) -> String {
    match paths {
        [] => "the input".to_string(),
        [one] => one.clone(),
        few if few.len() <= 3 => few.join(", "),
        many => format!("{} and {} more inputs", many[0], many.len() - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_after_the_data_names_both() {
        let df = df!("t" => [1_000i64, 5_000]).unwrap();
        let s = span(df.lazy(), "t", Some(10_000), None).unwrap();
        assert_eq!(
            s,
            Span {
                first: Some(1_000),
                last: Some(5_000),
                in_window: 0
            }
        );
        let e = empty(Some(10_000), None, "request", "a.csv", s).unwrap();
        assert_eq!(
            e.to_string(),
            "the incident window --since 1970-01-01T00:00:10.000Z holds no request: the requests of a.csv run from 1970-01-01T00:00:01.000Z to 1970-01-01T00:00:05.000Z (UTC)"
        );
    }

    #[test]
    fn a_window_that_holds_rows_or_no_window_is_no_error() {
        let df = df!("t" => [Some(1_000i64), None]).unwrap();
        let s = span(df.clone().lazy(), "t", None, Some(2_000)).unwrap();
        assert_eq!(s.in_window, 1);
        assert!(empty(None, Some(2_000), "request", "a.csv", s).is_none());
        let s = span(df.lazy(), "t", None, None).unwrap();
        assert!(empty(None, None, "request", "a.csv", s).is_none());
    }

    #[test]
    fn data_without_timestamps_says_so() {
        let df = df!("t" => [None::<i64>, None]).unwrap();
        let s = span(df.lazy(), "t", Some(0), Some(1)).unwrap();
        let e = empty(Some(0), Some(1), "request", "a.csv", s).unwrap();
        assert!(
            e.to_string()
                .ends_with(": no request in a.csv has a timestamp"),
            "{e}"
        );
    }

    #[test]
    fn many_inputs_are_named_by_the_first() {
        let p: Vec<String> = (1..=5).map(|i| format!("{i}.csv")).collect();
        assert_eq!(source_name(&p), "1.csv and 4 more inputs");
        assert_eq!(source_name(&p[..2]), "1.csv, 2.csv");
    }
}
