//! new-api (QuantumNous/new-api, formerly Calcium-Ion/new-api) and one-api
//! (songquanpeng/one-api) request logs → a raw frame whose columns carry canonical names.
//! Read from what a user has: the `GET /api/log/` JSON (the `{"data": {"items": […]}}`
//! page, its items as a JSON array or as JSON lines) or an export of the `logs` table
//! (CSV, Parquet). Fields as in new-api's `model/log.go` and one-api's (research notes,
//! gateway.md §1.1–1.2); a real sample is `fixtures/external/newapi_yushow1024_items.jsonl`.
//!
//! Which points are filled, and from which clock:
//! - **new-api's clock starts at r0**, its relay `StartTime`, set in
//!   `middleware/distributor.go` after token authentication and channel selection, before
//!   the upstream request: between the gateway's t0 and t1. So `other.frt` (ms, float: the
//!   first upstream `data:` line, t3) is `relay_first_response_ms` (r0→t3) and `use_time`
//!   (whole seconds of truncated Unix times, so ± 1 s) ×1000 is `relay_total_ms` (r0→t7);
//!   one-api's `elapsed_time` (ms, from its relay meta's start, also after auth and
//!   distribution) is `relay_total_ms` too. None of them is a t0 point: the relay table
//!   (`rules/relay.toml`) classifies such requests on their own clock.
//! - `frt = -1000` is new-api's sentinel (its first-response time starts at StartTime − 1 s
//!   and is only moved when a `data:` line arrives): non-streamed requests and streams that
//!   never produced one. It is null, never a value. Another negative `frt` is kept, so
//!   the data-quality checks can flag it.
//! - The proposed `other.request_timing` (open PR 6755: "timing starts when the request
//!   enters the gateway"; milestones it cannot take are omitted): `total_ms` is the
//!   gateway's end-to-end time, `total_handler_ms` (t0→t7). Its other figures are
//!   consecutive spans, not points (the PR's example adds up: 24 + 411 + 2 + 862 + 21 =
//!   1320 = `total_ms`). `upstream_first_data_ms` counts from the end of `gateway_ms`, not
//!   from entry, and the PR does not say whether `gateway_ms` ends at the relay start (r0)
//!   or at the upstream request (t1); so it is no t1 point either. Their sum is counted
//!   from entry whichever it is: `gateway_ms + upstream_first_data_ms` is
//!   `first_sse_event_ms` (t0→t3, the first upstream data, the mark `frt` also takes). The
//!   five spans are kept as the catalogue's `gateway_ms`, `upstream_first_data_ms`,
//!   `first_data_to_client_ms`, `client_stream_ms`, `finalize_ms`.
//! - The PR's example is a bare `{"request_timing": {…}}` object, what one row's `other`
//!   holds. It is read as one request with those figures and no labels, rather than
//!   refused: someone passing it wants its figures, and nothing in it is ambiguous.
//!
//! Rows and labels:
//! - Consume rows (`type` 2) and new-api's error rows (`type` 5 with a `use_time`: a failed
//!   request) are requests; top-up (1), manage (3), system (4), refund (6) rows and
//!   one-api's test rows (its `type` 5, without `use_time`) are left out and counted in a
//!   note. A row without `type` (the bare `request_timing` object) is kept.
//! - Outcome: a consume row is written once the relay has billed the request, so it is
//!   `ok` unless `other.stream_status.status` says `error` or `canceled`; an error row is
//!   `error`.
//! - `created_at` (Unix seconds: when the log row was written, which for a consume row
//!   is not the request's arrival) → timestamp; `model_name` → model; `group`; `channel` (its id; the `logs`
//!   table calls it `channel_id`) with `channel_name` when the log has it (admin queries
//!   only) → channel, as `24 (llm-default-claude)`; `prompt_tokens`, `completion_tokens`;
//!   `other.cache_tokens` → cached_tokens; `is_stream`; `request_id`, else the row `id`
//!   (which `/api/log/self` reduces modulo 1024); `other.stream_status.status` (`ok`,
//!   `error`, `canceled`) → outcome where present.
//! - `username` (else `user_id`), `token_name` and `ip` are identifiers: the canonical
//!   identifier fields, hashed after the projection. `content` (free text) is never read,
//!   nor any other key: only the keys in [`KEYS`] become columns.
//! - Every value is read as text (JSON numbers and booleans as their text) and parsed
//!   here: a value that is not a number is null.

mod csv_export;
mod lines;
mod row;
mod scan;

use std::path::Path;

use polars::prelude::*;

pub use csv_export::CsvCopy;
pub use lines::{locate, read as read_lines, read_rows, Located, Read};
use serde_json::Value;

use super::sniff::{self, Content};
use super::{csv, json, parquet, Adapted, InputFormat};
use crate::error::{Error, Result};

/// The keys (columns) read; nothing else of a row reaches a frame.
pub const KEYS: &[&str] = &[
    "id",
    "request_id",
    "created_at",
    "type",
    "username",
    "user_id",
    "token_name",
    "model_name",
    "prompt_tokens",
    "completion_tokens",
    "use_time",
    "elapsed_time",
    "is_stream",
    "channel",
    "channel_id",
    "channel_name",
    "group",
    "ip",
    "other",
    "request_timing",
];

/// The column of an adapted frame that marks the rows that are requests.
pub const REQUEST: &str = "__newapi_request";

/// new-api's log type of a request ("consume").
pub const CONSUME: i64 = 2;
/// new-api's log type of a failed request ("error"; one-api's 5 is a "test" row, which has
/// no `use_time`).
pub const ERROR: i64 = 5;
/// `frt` of a request that never had a first `data:` line.
pub const NO_FIRST_RESPONSE: f64 = -1000.0;
/// The spans of `other.request_timing`, in their order.
pub const SPANS: [&str; 5] = [
    "gateway_ms",
    "upstream_first_data_ms",
    "first_data_to_client_ms",
    "client_stream_ms",
    "finalize_ms",
];

/// A new-api / one-api log row's columns (model, a duration, the log type or `other`), or
/// the bare `request_timing` record.
pub fn recognises(columns: &[String]) -> bool {
    let has = |k: &str| columns.iter().any(|c| c == k);
    (has("model_name") && (has("use_time") || has("elapsed_time")) && (has("type") || has("other")))
        || (has("request_timing") && !has("model_name"))
}

/// The keys of the items of a `{"data": {"items": […]}}` page (empty for any other
/// document): what makes the page recognisable.
pub fn page_columns(path: &Path) -> Vec<String> {
    let Ok(file) = std::fs::File::open(path) else {
        return vec![];
    };
    let Ok(doc) = serde_json::from_reader::<_, Value>(std::io::BufReader::new(file)) else {
        return vec![];
    };
    let mut keys: Vec<String> = vec![];
    if let Some(items) = doc.pointer("/data/items").and_then(Value::as_array) {
        for item in items.iter().take(1000).filter_map(Value::as_object) {
            for k in item.keys() {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
    }
    keys
}

/// Read the file's rows (see the module documentation).
pub fn scan(path: &Path, repaired: Option<&super::spool::Spooled>) -> Result<Adapted> {
    let raw = match sniff::physical(path)? {
        // A `{"data": {"items": […]}}` page written on one line is one document.
        Content::Log(InputFormat::JsonLines) if !page_columns(path).is_empty() => {
            json::read_keys(path, false, None, KEYS, &["data", "items"])?
        }
        Content::Log(InputFormat::JsonLines) => json::read_keys(path, true, repaired, KEYS, &[])?,
        Content::Log(InputFormat::JsonArray) | Content::JsonObject => {
            json::read_keys(path, false, None, KEYS, &["data", "items"])?
        }
        Content::Log(InputFormat::Csv) => as_text(csv::scan(path, repaired)?, path)?,
        Content::Log(InputFormat::Parquet) => as_text(parquet::scan(path)?, path)?,
        other => {
            return Err(Error::input(
                path,
                format!("expected a new-api log, found {}", other.read_as()),
            ))
        }
    };
    let kind = text("type").cast(DataType::Int64);
    let request = kind
        .clone()
        .is_null()
        .or(kind.clone().eq(lit(CONSUME)))
        .or(failed());
    let counts = raw
        .clone()
        .select([
            request.clone().not().sum().alias("left_out"),
            kind.clone()
                .eq(lit(CONSUME))
                .or(failed())
                .fill_null(lit(false))
                .sum()
                .alias("logged"),
            use_time().is_not_null().sum().alias("relay"),
        ])
        .collect()
        .map_err(|e| Error::input(path, super::polars_message(&e)))?;
    let count = |c: &str| {
        counts
            .column(c)
            .ok()
            .and_then(|c| c.cast(&DataType::UInt64).ok())
            .and_then(|c| c.u64().ok().and_then(|v| v.get(0)))
            .unwrap_or(0)
    };
    // Not filtered here: the rows left out still count in the places of the rows after
    // them (`source_row`, the line), so the projection numbers every row and `load_one`
    // keeps those this column marks.
    let mut frame = columns();
    frame.push(request.alias(REQUEST));
    Ok(Adapted {
        frame: decoded(raw).select(frame),
        notes: notes(count("left_out"), count("logged"), count("relay")),
    })
}

/// What a reading says of the rows: how many were left out (not requests), how the
/// outcome of the `logged` consume and error rows is decided, and which clock the `relay`
/// rows' figures are on.
fn notes(left_out: u64, logged: u64, relay: u64) -> Vec<String> {
    let mut notes = vec![];
    if left_out > 0 {
        notes.push(format!(
            "left out {left_out} top-up/manage/system row{} (type other than 2 consume and 5 error): only consume and error rows are requests",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    if logged > 0 {
        notes.push("outcome: new-api writes a consume row (type 2) once it has billed the request, so such a row is `ok` unless other.stream_status says `error` or `canceled`; an error row (type 5) is a failed request, `error`".to_string());
    }
    if relay > 0 {
        notes.push("new-api's `frt` and `use_time` count from its relay start (r0, after auth and channel selection), not from the gateway's receive: never combined with t0 figures, they are classified by the relay table (rules/relay.toml)".to_string());
    }
    notes
}

/// A new-api error row: a failed request (type 5 with a `use_time`; one-api's type 5 is
/// a test row, without one).
fn failed() -> Expr {
    text("type")
        .cast(DataType::Int64)
        .eq(lit(ERROR))
        .and(text("use_time").is_not_null())
        .fill_null(lit(false))
}

/// A table's columns of [`KEYS`] as text (absent ones null), like the JSON reader's.
fn as_text(lf: LazyFrame, path: &Path) -> Result<LazyFrame> {
    let mut lf = lf;
    let schema = lf
        .collect_schema()
        .map_err(|e| Error::input(path, super::polars_message(&e)))?;
    Ok(lf.select(
        KEYS.iter()
            .map(|k| {
                if schema.contains(k) {
                    col(*k).cast(DataType::String)
                } else {
                    lit(NULL).cast(DataType::String).alias(*k)
                }
            })
            .collect::<Vec<_>>(),
    ))
}

/// A text column trimmed, blank as null.
fn text(c: &str) -> Expr {
    let t = col(c).str().strip_chars(lit(NULL));
    when(t.clone().eq(lit("")))
        .then(lit(NULL).cast(DataType::String))
        .otherwise(t)
}

fn number(e: Expr) -> Expr {
    e.str().strip_chars(lit(NULL)).cast(DataType::Float64)
}

/// `use_time` (seconds) in ms, else one-api's `elapsed_time` (ms).
fn use_time() -> Expr {
    coalesce(&[
        number(text("use_time")) * lit(1000.0),
        number(text("elapsed_time")),
    ])
}

/// `other` as the struct `columns` reads: each field the adapter reads as the text
/// `json_decode` would give it; null where blank; an error where it is not a JSON object
/// (the read fails, as `json_decode`'s did). Decoded by serde (`row`), which reads the
/// few fields wanted and skips the rest unkept: several times faster than polars'
/// `json_decode` of the whole object.
fn decode_other(texts: &StringChunked) -> PolarsResult<StructChunked> {
    let others = texts
        .iter()
        .map(|t| match t.map(row::parse_other) {
            None => Ok(None),
            Some(Ok(other)) => Ok(other),
            Some(Err(e)) => Err(polars_err!(
                ComputeError: "`other` is not a JSON object: {e} (new-api writes one there)"
            )),
        })
        .collect::<PolarsResult<Vec<Option<row::Other>>>>()?;
    let len = texts.len();
    let field = |name: &str, get: &dyn Fn(&row::Other) -> Option<&row::Cell<'static>>| {
        let values = others
            .iter()
            .map(|o| o.as_ref().and_then(get).and_then(row::Cell::raw_text));
        StringChunked::from_iter_options(name.into(), values).into_series()
    };
    let status = StructChunked::from_series(
        "stream_status".into(),
        len,
        [field("status", &|o| Some(&o.status))].iter(),
    )?
    .into_series();
    let timing = timing_struct(
        others
            .iter()
            .map(|o| o.as_ref().and_then(|o| o.request_timing.as_ref()))
            .collect(),
    )?;
    let fields = [
        field("frt", &|o| Some(&o.frt)),
        field("cache_tokens", &|o| Some(&o.cache_tokens)),
        status,
        timing,
    ];
    StructChunked::from_series(texts.name().clone(), len, fields.iter())
}

/// A bare `request_timing` record given as text, as `columns` reads it.
fn decode_timing(texts: &StringChunked) -> PolarsResult<StructChunked> {
    let timings: Vec<Option<row::Timing>> = texts
        .iter()
        .map(|t| t.and_then(row::parse_timing))
        .collect();
    let series = timing_struct(timings.iter().map(Option::as_ref).collect())?;
    Ok(series.struct_()?.clone().with_name(texts.name().clone()))
}

/// `request_timing` records as a struct of text fields (`total_ms`, then the spans).
fn timing_struct(timings: Vec<Option<&row::Timing>>) -> PolarsResult<Series> {
    let names = std::iter::once("total_ms").chain(SPANS);
    let fields: Vec<Series> = names
        .enumerate()
        .map(|(i, name)| {
            let values = timings.iter().map(|t| t.and_then(|t| t.0[i].raw_text()));
            StringChunked::from_iter_options(name.into(), values).into_series()
        })
        .collect();
    Ok(
        StructChunked::from_series("request_timing".into(), timings.len(), fields.iter())?
            .into_series(),
    )
}

/// The columns `other` and the bare `request_timing` decoded into, once per row: each
/// decoding is written once here, where the projection's many uses of them would each run
/// it again (polars does not share a function's result between expressions).
const OTHER_DECODED: &str = "__other_decoded";
const TIMING_DECODED: &str = "__request_timing_decoded";

/// `raw` with `other` and the bare `request_timing` decoded (see `columns`).
fn decoded(raw: LazyFrame) -> LazyFrame {
    let span_fields = |names: &[&str]| -> Vec<Field> {
        names
            .iter()
            .map(|n| Field::new((*n).into(), DataType::String))
            .collect()
    };
    let mut timing = vec!["total_ms"];
    timing.extend(SPANS);
    let request_timing = DataType::Struct(span_fields(&timing));
    let other_type = DataType::Struct(vec![
        Field::new("frt".into(), DataType::String),
        Field::new("cache_tokens".into(), DataType::String),
        Field::new(
            "stream_status".into(),
            DataType::Struct(span_fields(&["status"])),
        ),
        Field::new("request_timing".into(), request_timing.clone()),
    ]);
    let other = col("other").map(
        |c: Column| decode_other(c.str()?).map(IntoColumn::into_column),
        move |_, f| Ok(Field::new(f.name().clone(), other_type.clone())),
    );
    let bare = col("request_timing").map(
        |c: Column| decode_timing(c.str()?).map(IntoColumn::into_column),
        move |_, f| Ok(Field::new(f.name().clone(), request_timing.clone())),
    );
    raw.with_columns([other.alias(OTHER_DECODED), bare.alias(TIMING_DECODED)])
}

/// The canonical columns of a row, from a frame `decoded` made. `ruleset::like` writes the
/// same derivations in SQL (`rules --emit sql --like`): a change here is a change there.
fn columns() -> Vec<Expr> {
    let other = col(OTHER_DECODED);
    let bare = col(TIMING_DECODED);
    let rt = |f: &str| {
        number(coalesce(&[
            other
                .clone()
                .struct_()
                .field_by_name("request_timing")
                .struct_()
                .field_by_name(f),
            bare.clone().struct_().field_by_name(f),
        ]))
    };
    let frt = number(other.clone().struct_().field_by_name("frt"));
    let id = coalesce(&[text("channel"), text("channel_id")]);
    let name = text("channel_name");
    let channel = when(name.clone().is_not_null())
        .then(concat_str(
            [id.clone().fill_null(lit("?")), lit(" ("), name, lit(")")],
            "",
            false,
        ))
        .otherwise(id);
    let mut out = vec![
        coalesce(&[text("request_id"), text("id")]).alias("request_id"),
        (number(text("created_at")) * lit(1000.0))
            .cast(DataType::Int64)
            .cast(DataType::Datetime(TimeUnit::Milliseconds, None))
            .alias("timestamp"),
        text("model_name").alias("model"),
        text("group").alias("group"),
        channel.alias("channel"),
        // A consume row is written once the request is billed: `ok`, unless the stream's
        // own status says otherwise; an error row is a failed request.
        coalesce(&[
            when(failed())
                .then(lit("error"))
                .otherwise(lit(NULL).cast(DataType::String)),
            other
                .clone()
                .struct_()
                .field_by_name("stream_status")
                .struct_()
                .field_by_name("status"),
            when(text("type").cast(DataType::Int64).eq(lit(CONSUME)))
                .then(lit("ok"))
                .otherwise(lit(NULL).cast(DataType::String)),
        ])
        .alias("outcome"),
        text("is_stream").alias("is_stream"),
        text("prompt_tokens").alias("input_tokens"),
        text("completion_tokens").alias("output_tokens"),
        other
            .clone()
            .struct_()
            .field_by_name("cache_tokens")
            .alias("cached_tokens"),
        coalesce(&[text("username"), text("user_id")]).alias("user"),
        text("token_name").alias("token_name"),
        text("ip").alias("client_ip"),
        when(frt.clone().eq(lit(NO_FIRST_RESPONSE)))
            .then(lit(NULL).cast(DataType::Float64))
            .otherwise(frt)
            .alias("relay_first_response_ms"),
        use_time().alias("relay_total_ms"),
        rt("total_ms").alias("total_handler_ms"),
        (rt("gateway_ms") + rt("upstream_first_data_ms")).alias("first_sse_event_ms"),
    ];
    out.extend(SPANS.iter().map(|s| rt(s).alias(*s)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, text: &str) -> (DataFrame, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let a = scan(&path, None).unwrap();
        (requests(a.frame), a.notes)
    }

    /// The adapted rows that are requests, as `load_one` keeps them.
    fn requests(frame: LazyFrame) -> DataFrame {
        frame
            .filter(col(REQUEST))
            .drop(by_name([REQUEST], true, false))
            .collect()
            .unwrap()
    }

    fn floats(df: &DataFrame, c: &str) -> Vec<Option<f64>> {
        df.column(c).unwrap().f64().unwrap().to_vec()
    }

    fn strings(df: &DataFrame, c: &str) -> Vec<Option<String>> {
        df.column(c)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|v| v.map(String::from))
            .collect()
    }

    /// The real sample: two consume rows of four; `frt` −1000 is null, 26912 ms stays;
    /// `use_time` seconds become ms; cache tokens come out of the `other` string.
    #[test]
    fn real_rows_map_frt_use_time_and_leave_out_non_requests() {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/external/newapi_yushow1024_items.jsonl");
        let a = scan(&path, None).unwrap();
        let df = requests(a.frame);
        assert_eq!(df.height(), 2);
        assert_eq!(
            floats(&df, "relay_first_response_ms"),
            [None, Some(26912.0)]
        );
        assert_eq!(floats(&df, "relay_total_ms"), [Some(7000.0), Some(28000.0)]);
        assert_eq!(
            strings(&df, "cached_tokens"),
            [Some("164411".into()), Some("5368".into())]
        );
        // A consume row is a billed request: `ok` where the stream says nothing.
        assert_eq!(
            strings(&df, "outcome"),
            [Some("ok".into()), Some("ok".into())]
        );
        assert_eq!(
            strings(&df, "channel"),
            [
                Some("1 (MiniMax)".into()),
                Some("24 (llm-default-claude)".into())
            ]
        );
        assert_eq!(floats(&df, "total_handler_ms"), [None, None]);
        assert!(
            a.notes[0].starts_with("left out 2 top-up/manage/system rows"),
            "{:?}",
            a.notes
        );
        let ts = df
            .column("timestamp")
            .unwrap()
            .cast(&DataType::Int64)
            .unwrap();
        assert_eq!(ts.i64().unwrap().get(0), Some(1_781_100_011_000));
        // Never content.
        assert!(df.column("content").is_err());
    }

    /// The PR 6755 record, bare or inside `other` of a page: total_ms is t0→t7; the first
    /// two spans add up to t0→t3; the spans stay spans.
    #[test]
    fn request_timing_total_is_t7_and_the_first_two_spans_make_t3() {
        let rt = r#"{"total_ms":1320,"gateway_ms":24,"upstream_first_data_ms":411,"first_data_to_client_ms":2,"client_stream_ms":862,"finalize_ms":21}"#;
        let (df, notes) = read("rt.json", &format!("{{\n  \"request_timing\": {rt}\n}}\n"));
        assert_eq!(df.height(), 1);
        assert_eq!(floats(&df, "total_handler_ms"), [Some(1320.0)]);
        assert_eq!(floats(&df, "first_sse_event_ms"), [Some(435.0)]);
        assert_eq!(floats(&df, "client_stream_ms"), [Some(862.0)]);
        assert_eq!(floats(&df, "relay_total_ms"), [None]);
        assert!(notes.is_empty(), "{notes:?}");

        let other =
            serde_json::to_string(&format!(r#"{{"frt":-1000,"request_timing":{rt}}}"#)).unwrap();
        let page = format!(
            r#"{{"success":true,"data":{{"items":[{{"type":2,"model_name":"m","use_time":1,"other":{other},"content":"secret"}},{{"type":"1","model_name":"","use_time":0,"other":""}}],"total":2}}}}"#
        );
        let (df, notes) = read("page.json", &page);
        assert_eq!(df.height(), 1);
        assert_eq!(floats(&df, "total_handler_ms"), [Some(1320.0)]);
        assert_eq!(floats(&df, "relay_first_response_ms"), [None]);
        assert_eq!(floats(&df, "relay_total_ms"), [Some(1000.0)]);
        assert!(
            notes[0].starts_with("left out 1 top-up/manage/system row "),
            "{notes:?}"
        );
        // A span the PR omits stays null, and so does the sum it is part of.
        let (df, _) = read(
            "partial.jsonl",
            "{\"request_timing\":{\"total_ms\":5,\"upstream_first_data_ms\":3}}\n",
        );
        assert_eq!(floats(&df, "first_sse_event_ms"), [None]);
        assert_eq!(floats(&df, "gateway_ms"), [None]);
    }

    /// A `logs` table export: CSV with the DB's `channel_id`, one-api's `elapsed_time` in
    /// ms, a negative `frt` that is not the sentinel kept.
    #[test]
    fn a_csv_export_reads_the_same_columns() {
        let csv = "id,created_at,type,model_name,use_time,elapsed_time,channel_id,other,content\n\
                   7,1781100011,2,m,,1534,3,\"{\"\"frt\"\":-5}\",hello\n\
                   8,1781100012,4,m,,0,3,,system\n";
        let (df, notes) = read("logs.csv", csv);
        assert_eq!(df.height(), 1);
        assert_eq!(floats(&df, "relay_total_ms"), [Some(1534.0)]);
        assert_eq!(floats(&df, "relay_first_response_ms"), [Some(-5.0)]);
        assert_eq!(strings(&df, "channel"), [Some("3".into())]);
        assert_eq!(strings(&df, "request_id"), [Some("7".into())]);
        assert_eq!(notes.len(), 3, "{notes:?}");
    }

    /// new-api's error rows (type 5) are its failed requests: kept, outcome `error`; a
    /// one-api type-5 row (a test, without `use_time`) is left out; a stream that ended
    /// in an error keeps its stream status.
    #[test]
    fn error_rows_are_failed_requests_and_consume_rows_are_ok() {
        let status =
            serde_json::to_string(r#"{"frt":800,"stream_status":{"status":"error"}}"#).unwrap();
        let rows = format!(
            "{{\"type\":2,\"model_name\":\"m\",\"use_time\":3,\"is_stream\":true,\"other\":{status}}}\n\
             {{\"type\":5,\"model_name\":\"m\",\"use_time\":1,\"is_stream\":true,\"other\":\"\"}}\n\
             {{\"type\":5,\"model_name\":\"m\",\"elapsed_time\":10,\"other\":\"\"}}\n\
             {{\"type\":2,\"model_name\":\"m\",\"use_time\":2,\"is_stream\":false,\"other\":\"\"}}\n"
        );
        let (df, notes) = read("logs.jsonl", &rows);
        assert_eq!(
            strings(&df, "outcome"),
            [
                Some("error".into()),
                Some("error".into()),
                Some("ok".into())
            ]
        );
        assert!(notes[0].starts_with("left out 1 "), "{notes:?}");
        assert!(notes[1].starts_with("outcome: "), "{notes:?}");
    }

    #[test]
    fn recognised_by_its_columns() {
        let cols = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(recognises(&cols(&["model_name", "use_time", "type"])));
        assert!(recognises(&cols(&["model_name", "elapsed_time", "type"])));
        assert!(recognises(&cols(&["request_timing"])));
        assert!(!recognises(&cols(&["model_name", "total_handler_ms"])));
    }
}
