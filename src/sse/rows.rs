//! The gateway rows of timed captures: one row per stream in the canonical field names
//! of the catalogue, so `tracediag analyze` reads them as a request log. The capture's
//! send time stands for t0; no gateway sat between client and API, so t1, t2 and t7 are
//! absent (null), never guessed.

use polars::prelude::*;

use super::timeline::Stream;
use crate::catalogue;
use crate::error::{Error, Result};

/// The columns written, in order; each is a catalogue field.
pub const COLUMNS: [&str; 13] = [
    "request_id",
    "timestamp",
    "model",
    "outcome",
    "is_stream",
    "input_tokens",
    "output_tokens",
    "stream_event_count",
    "text_delta_count",
    "first_sse_event_ms",
    "first_response_ms",
    "first_text_delta_ms",
    "upstream_done_ms",
];

/// The send time as the `timestamp` field writes it: ISO 8601, UTC, milliseconds.
fn iso(ns: i64) -> Option<String> {
    let t = chrono::DateTime::from_timestamp(
        ns.div_euclid(1_000_000_000),
        ns.rem_euclid(1_000_000_000) as u32,
    )?;
    Some(t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

/// The rows of `streams`, every one of which must be timed.
pub fn frame(streams: &[Stream]) -> Result<DataFrame> {
    debug_assert!(COLUMNS.iter().all(|c| catalogue::field(c).is_some()));
    let timed: Vec<_> = streams
        .iter()
        .map(|s| {
            s.timing.map(|t| (s, t)).ok_or_else(|| {
                Error::Usage(format!(
                    "{}: has no receive times: no gateway row can be built",
                    s.file
                ))
            })
        })
        .collect::<Result<_>>()?;
    let text = |f: &dyn Fn(&Stream) -> Option<String>| -> Vec<Option<String>> {
        timed.iter().map(|(s, _)| f(s)).collect()
    };
    let count = |f: &dyn Fn(&Stream) -> Option<u64>| -> Vec<Option<u64>> {
        timed.iter().map(|(s, _)| f(s)).collect()
    };
    let ms = |f: &dyn Fn(&super::Timing) -> Option<f64>| -> Vec<Option<f64>> {
        timed.iter().map(|(_, t)| f(t)).collect()
    };
    let columns: Vec<Column> = vec![
        Column::new("request_id".into(), text(&|s| s.request_id.clone())),
        Column::new(
            "timestamp".into(),
            timed
                .iter()
                .map(|(_, t)| iso(t.sent_ns))
                .collect::<Vec<_>>(),
        ),
        Column::new("model".into(), text(&|s| s.model.clone())),
        Column::new(
            "outcome".into(),
            text(&|s| Some(s.outcome.name().to_string())),
        ),
        Column::new(
            "is_stream".into(),
            timed.iter().map(|_| true).collect::<Vec<bool>>(),
        ),
        Column::new("input_tokens".into(), count(&|s| s.input_tokens)),
        Column::new("output_tokens".into(), count(&|s| s.output_tokens)),
        Column::new(
            "stream_event_count".into(),
            count(&|s| Some(s.events as u64)),
        ),
        Column::new(
            "text_delta_count".into(),
            count(&|s| Some(s.kinds.visible_text as u64)),
        ),
        Column::new("first_sse_event_ms".into(), ms(&|t| t.first_sse_event_ms)),
        Column::new("first_response_ms".into(), ms(&|t| t.first_response_ms)),
        Column::new("first_text_delta_ms".into(), ms(&|t| t.first_text_delta_ms)),
        Column::new("upstream_done_ms".into(), ms(&|t| t.upstream_done_ms)),
    ];
    DataFrame::new(timed.len(), columns)
        .map_err(|e| Error::Usage(format!("internal: cannot build the gateway rows: {e}")))
}

/// The rows as JSON lines (what stdout gets).
pub fn json_lines(df: &mut DataFrame) -> Result<String> {
    let mut buf = Vec::new();
    JsonWriter::new(&mut buf)
        .with_json_format(JsonFormat::JsonLines)
        .finish(df)
        .map_err(|e| Error::Usage(format!("internal: cannot write the gateway rows: {e}")))?;
    String::from_utf8(buf)
        .map_err(|e| Error::Usage(format!("internal: the gateway rows are not UTF-8: {e}")))
}
