//! vLLM `benchmarks/benchmark_serving.py --save-result` / `vllm bench serve --save-result
//! --save-detailed` JSON → a raw polars frame with canonical column names, one row per
//! request. The file is one JSON document: run-level figures, then per-request arrays of
//! equal length (index i is request i), then vLLM's own mean/median/std/p<P> per metric.
//! Read by polars with a schema that lists only the arrays below, then exploded together;
//! `generated_texts` (and every prompt-derived field) is never a column.
//!
//! | column | from | unit |
//! |---|---|---|
//! | `client_ttft_ms` (c0→c1) | `ttfts[i]` | s → ms |
//! | `client_latency_ms` (c0→c2) | `latencies[i]`; without it `ttfts[i] + Σ itls[i]` (below) | s → ms |
//! | `input_tokens` | `input_lens[i]` | count |
//! | `output_tokens` | `output_lens[i]` | count |
//! | `outcome` | `errors[i]`: empty → ok, other text → error (the text itself is not kept) | |
//!
//! What the figures mean:
//! - **Origin c0** is the client's `time.perf_counter()` just before it sends the request;
//!   no gateway point (t0…t7) is known, so the client table (`rules/client.toml`) judges
//!   the requests on this clock.
//! - **First token (c1), vLLM's rule:** the first streamed chunk whose `choices` array is
//!   non-empty, even when its text is empty (current `endpoint_request_func.py`; the 2024
//!   script took the first non-empty text). The summary names the rule.
//! - **`itls[i]`** are the gaps between successive chunks with choices after the first;
//!   `latency` is the last such chunk's arrival minus c0. So `ttft + Σ itls` is the last
//!   chunk's arrival: in the current code exactly vLLM's own latency (the sum telescopes).
//!   Older scripts (the 2025-04 sample) have no `latencies` array, read the first token's
//!   time with a second clock call (`ttft = time.perf_counter() - st` after taking the
//!   chunk's timestamp) and, in 2024, took the latency at `[DONE]`: there `ttft + Σ itls`
//!   misses what the tool's own latency adds after the last chunk. Without `latencies` the
//!   reader writes `ttft + Σ itls` into `client_latency_ms` and a note naming the file says
//!   what is rebuilt and how far it was off on the public sample ([`REBUILT_GAP`]);
//!   `--definitions vllm` measures it on each file against the file's own TPOT figures
//!   ([`own_figures`]).
//! - A failed request has `ttft` 0, `latency` 0, no gaps and `output_lens` 0 in vLLM's
//!   output: defaults, not measurements. Such rows keep their `error` outcome and have null
//!   timings and output tokens.
//! - A successful request with `output_lens` 0 has no first token: its `client_ttft_ms` is
//!   null (vLLM's `ttfts` entry is the 0.0 it starts from, or the arrival of a chunk with
//!   empty text), and so its inter-token latency; where no chunk was timed at all (`ttfts`
//!   0.0, no gap) its latency is that default too and null. A note counts such requests.
//!   vLLM's own summary counts them, and `--definitions vllm` reads them as written
//!   ([`peer_frame`]).
//! - `start_times` (newer versions) is not read: nothing in the file ties its clock to
//!   wall-clock time. No timestamp is read, so `--since`/`--until` select nothing here.
//! - Arrays of different lengths, or a document that is not one JSON object, are errors
//!   naming the file and the array; nothing here panics on any input.

use std::path::Path;

use polars::prelude::*;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::recognise;
use super::sniff::Content;
use super::{polars_message, FILE_INDEX, ROW_COL};
use crate::error::{Error, Result};

/// The per-request arrays that make a file a vLLM result.
const REQUIRED: [&str; 3] = ["ttfts", "itls", "output_lens"];

/// Per-request arrays read when present, with their element types.
fn arrays() -> [(&'static str, DataType); 6] {
    let list = |t| DataType::List(Box::new(t));
    [
        ("ttfts", list(DataType::Float64)),
        ("itls", list(list(DataType::Float64))),
        ("latencies", list(DataType::Float64)),
        ("input_lens", list(DataType::Int64)),
        ("output_lens", list(DataType::Int64)),
        ("errors", list(DataType::String)),
    ]
}

/// Column of [`chunk_gaps`]: one gap between successive chunks, in ms.
pub const GAP_COL: &str = "chunk_gap_ms";

/// What a vLLM result holds besides its arrays: read from its top-level key names only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// It has a `latencies` array (vLLM's own end per request).
    pub latencies: bool,
    /// The percentiles vLLM reported (`p99_ttft_ms` → `"99"`, `p99.9_…` → `"99.9"`), in
    /// the file's order.
    pub percentiles: Vec<String>,
}

/// Whether these top-level keys are those of a vLLM result with per-request arrays.
pub fn looks_like(keys: &[String]) -> bool {
    REQUIRED.iter().all(|k| keys.iter().any(|c| c == k))
}

/// Run-level keys every vLLM result has, with or without its per-request arrays.
pub const SUMMARY_KEYS: [&str; 3] = ["completed", "request_throughput", "total_token_throughput"];

/// What a refusal says of a vLLM result without per-request arrays: the commonest vLLM
/// result file, since current `vllm bench serve` writes them only with --save-detailed.
pub const SUMMARY_ONLY: &str = "this is a vLLM --save-result summary without per-request arrays (no `ttfts`, `itls`, `output_lens`): vLLM's figures over the run, not its requests; rerun the benchmark with `--save-result --save-detailed` (current `vllm bench serve` leaves the arrays out without it) and pass that file";

/// The layout of the vLLM result at `path` (its key names, no values).
pub fn layout(path: &Path) -> Layout {
    let keys = recognise::json_keys(path, Content::JsonObject);
    let percentiles = keys
        .iter()
        .filter_map(|k| {
            let p = k.strip_prefix('p')?.strip_suffix("_ttft_ms")?;
            p.parse::<f64>().is_ok().then(|| p.to_string())
        })
        .collect();
    Layout {
        latencies: keys.iter().any(|k| k == "latencies"),
        percentiles,
    }
}

/// The arrays of the document at `path` named in `wanted` (those it has), as one row.
fn read_arrays(path: &Path, wanted: &[&str]) -> Result<(DataFrame, Vec<String>)> {
    let keys = recognise::json_keys(path, Content::JsonObject);
    if !looks_like(&keys) && SUMMARY_KEYS.iter().all(|k| keys.iter().any(|c| c == k)) {
        return Err(Error::input(path, SUMMARY_ONLY));
    }
    if !looks_like(&keys) {
        return Err(Error::input(
            path,
            format!(
                "not a vLLM --save-result JSON with per-request arrays: expected the keys {}",
                REQUIRED.map(|k| format!("`{k}`")).join(", ")
            ),
        ));
    }
    let present: Vec<String> = arrays()
        .into_iter()
        .filter(|(n, _)| wanted.contains(n) && keys.iter().any(|k| k == n))
        .map(|(n, _)| n.to_string())
        .collect();
    let schema: Schema = arrays()
        .into_iter()
        .filter(|(n, _)| present.iter().any(|p| p == n))
        .map(|(n, t)| Field::new(n.into(), t))
        .collect();
    let df = super::json::read_with_schema(
        path,
        schema,
        "a vLLM result (one JSON document of per-request arrays)",
    )?;
    if df.height() != 1 {
        return Err(Error::input(
            path,
            format!(
                "a vLLM result is one JSON document; this file holds {} (an --append-result file: split it into one file per run)",
                df.height()
            ),
        ));
    }
    // Index i is request i in every array: they must agree on the number of requests.
    let lengths = df
        .clone()
        .lazy()
        .select(
            present
                .iter()
                .map(|n| col(n.as_str()).list().len().alias(n.as_str()))
                .collect::<Vec<_>>(),
        )
        .collect()
        .map_err(|e| Error::input(path, polars_message(&e)))?;
    let length = |n: &str| {
        lengths
            .column(n)
            .ok()
            .and_then(|c| c.cast(&DataType::Int64).ok())
            .and_then(|c| c.i64().ok()?.get(0))
    };
    let first = length(&present[0]);
    if let Some(other) = present.iter().find(|n| length(n) != first) {
        let count = |n: &str| length(n).map_or("no".to_string(), |l| l.to_string());
        return Err(Error::input(
            path,
            format!(
                "the per-request arrays disagree on the number of requests: `{}` holds {} entries, `{other}` {}",
                present[0],
                count(&present[0]),
                count(other)
            ),
        ));
    }
    Ok((df, present))
}

/// Every array the reader reads.
const READ: [&str; 6] = [
    "ttfts",
    "itls",
    "latencies",
    "input_lens",
    "output_lens",
    "errors",
];

/// The file's arrays exploded to one row per request (`FILE_INDEX` = `file`, `ROW_COL`
/// the 1-based request), and the names of the arrays it has.
fn requests(path: &Path, file: u32) -> Result<(LazyFrame, Vec<String>)> {
    let (df, present) = read_arrays(path, &READ)?;
    let names: Vec<&str> = present.iter().map(String::as_str).collect();
    let rows = df
        .lazy()
        .explode(
            cols(names),
            ExplodeOptions {
                empty_as_null: false,
                keep_nulls: true,
            },
        )
        .with_row_index(ROW_COL, Some(1))
        .with_columns([
            lit(file).alias(FILE_INDEX),
            col(ROW_COL).cast(DataType::Int64),
        ]);
    Ok((rows, present))
}

/// vLLM's `success`: an empty `errors` entry (every request, in a file without `errors`).
fn failed(present: &[String]) -> Expr {
    if present.iter().any(|p| p == "errors") {
        col("errors").str().len_bytes().gt(lit(0))
    } else {
        lit(false)
    }
}

/// vLLM's end of a request, in seconds: `latencies`, else ttft + Σ itls.
fn end_s(present: &[String]) -> Expr {
    if present.iter().any(|p| p == "latencies") {
        col("latencies")
    } else {
        col("ttfts") + col("itls").list().sum()
    }
}

/// vLLM times no chunk of a request that got none: its `ttft` stays the 0.0 it starts at
/// and it has no gap, so its latency is that default too.
fn no_chunk_timed() -> Expr {
    col("ttfts")
        .eq(lit(0.0))
        .and(col("itls").list().len().eq(lit(0)))
        .fill_null(lit(false))
}

/// One row per request, with the canonical columns of the module documentation, and what
/// the run should note about the file.
pub fn read(path: &Path) -> Result<super::Adapted> {
    let (rows, present) = requests(path, 0)?;
    let has = |n: &str| present.iter().any(|p| p == n);
    let failed = failed(&present);
    let outcome = if has("errors") {
        when(col("errors").is_null())
            .then(lit(NULL).cast(DataType::String))
            .when(failed.clone())
            .then(lit("error"))
            .otherwise(lit("ok"))
    } else {
        lit(NULL).cast(DataType::String)
    };
    let unless = |null_when: Expr, e: Expr| {
        when(null_when.fill_null(lit(false)))
            .then(lit(NULL).cast(DataType::Float64))
            .otherwise(e)
    };
    // A request without an output token has no first token; vLLM's 0.0 (or the arrival of
    // a chunk whose text was empty) is no such time.
    let no_output = col("output_lens").eq(lit(0));
    let mut columns = vec![
        unless(
            failed.clone().or(no_output.clone()),
            col("ttfts") * lit(1000.0),
        )
        .alias("client_ttft_ms"),
        unless(
            failed.clone().or(no_chunk_timed()),
            end_s(&present) * lit(1000.0),
        )
        .alias("client_latency_ms"),
        when(failed.clone())
            .then(lit(NULL).cast(DataType::Int64))
            .otherwise(col("output_lens"))
            .alias("output_tokens"),
        outcome.alias("outcome"),
    ];
    if has("input_lens") {
        columns.push(col("input_lens").alias("input_tokens"));
    }
    let counts = rows
        .clone()
        .select([
            len().cast(DataType::UInt64).alias("requests"),
            failed
                .not()
                .and(no_output.fill_null(lit(false)))
                .sum()
                .cast(DataType::UInt64)
                .alias("without_output"),
        ])
        .collect()
        .map_err(|e| Error::input(path, polars_message(&e)))?;
    let count = |c: &str| {
        counts
            .column(c)
            .ok()
            .and_then(|c| c.u64().ok()?.get(0))
            .unwrap_or(0)
    };
    if count("requests") == 0 {
        return Err(Error::input(
            path,
            "a vLLM result whose per-request arrays are empty: no request",
        ));
    }
    let mut notes = vec![note(path)];
    let without = count("without_output");
    if without > 0 {
        notes.push(format!(
            "{without} of {} requests vLLM counted as successful have no output token (`output_lens` 0): their client_ttft_ms is null (vLLM's own TTFT counts their `ttfts` entry, a 0.0 when no chunk came), so they have no inter-token latency, and client_latency_ms is null where no chunk was timed; --definitions vllm counts them as vLLM does",
            count("requests")
        ));
    }
    Ok(super::Adapted {
        frame: rows.select(columns),
        notes,
    })
}

/// vLLM's per-request figures as the file holds them, for `--definitions vllm`: one row
/// per request (`FILE_INDEX` = `file`, `ROW_COL` the 1-based request, as in the canonical
/// frame) with [`PEER_SUCCESS`], [`PEER_TTFT_MS`], [`PEER_LATENCY_MS`] and
/// [`PEER_OUTPUT_LEN`], unchanged: vLLM's summary counts a successful request's
/// `ttfts` entry whatever it holds, where tracediag's own figures have none.
pub fn peer_frame(path: &Path, file: u32) -> Result<LazyFrame> {
    let (rows, present) = requests(path, file)?;
    Ok(rows.select([
        col(FILE_INDEX),
        col(ROW_COL),
        failed(&present).not().alias(PEER_SUCCESS),
        (col("ttfts") * lit(1000.0)).alias(PEER_TTFT_MS),
        (end_s(&present) * lit(1000.0)).alias(PEER_LATENCY_MS),
        col("output_lens").alias(PEER_OUTPUT_LEN),
    ]))
}

/// Columns of [`peer_frame`].
pub const PEER_SUCCESS: &str = "vllm_success";
pub const PEER_TTFT_MS: &str = "vllm_ttft_ms";
pub const PEER_LATENCY_MS: &str = "vllm_latency_ms";
pub const PEER_OUTPUT_LEN: &str = "vllm_output_len";

/// Every gap between successive chunks (`itls`), in ms, one row per gap: `FILE_INDEX` =
/// `file`, `ROW_COL` = the 1-based request it belongs to (the row the canonical frame gives
/// that request), and [`GAP_COL`]. What vLLM pools for its ITL.
pub fn chunk_gaps(path: &Path, file: u32) -> Result<LazyFrame> {
    let (df, _) = read_arrays(path, &["itls"])?;
    Ok(df
        .lazy()
        .explode(
            cols(["itls"]),
            ExplodeOptions {
                empty_as_null: false,
                keep_nulls: false,
            },
        )
        .with_row_index(ROW_COL, Some(1))
        .explode(
            cols(["itls"]),
            ExplodeOptions {
                empty_as_null: false,
                keep_nulls: false,
            },
        )
        .select([
            lit(file).alias(FILE_INDEX),
            col(ROW_COL).cast(DataType::Int64),
            (col("itls") * lit(1000.0)).alias(GAP_COL),
        ]))
}

/// What a run notes about a vLLM result: the clock and rules its figures follow, and
/// what was derived.
pub fn note(path: &Path) -> String {
    let latency = if layout(path).latencies {
        "client_latency_ms is vLLM's `latencies` (its last chunk with choices)".to_string()
    } else {
        format!("the file has no `latencies`, so client_latency_ms is rebuilt as ttft + Σ itls: the arrival of the last chunk with choices, missing any time vLLM's own latency adds between that chunk and the request's end (none in current vLLM, whose latency is that arrival; a second clock read for the TTFT in 2025 scripts; the wait for `[DONE]` in 2024 ones); {REBUILT_GAP}; --definitions vllm measures the gap on this file against its own TPOT figures")
    };
    format!(
        "vLLM benchmark client figures, counted from the client's send (c0): client_ttft_ms follows vLLM's first-token rule (the first chunk with a non-empty `choices`, even when its text is empty); {latency}; the client table (rules/client.toml) classifies the requests on that clock (--definitions vllm gives vLLM's own figures)"
    )
}

/// How far a TPOT from the rebuilt latency was from vLLM's own, measured on the one public
/// result without `latencies` (`tests/bench_exports.rs` checks the figures). A file whose
/// script ended its latency at `[DONE]` was not found, so its gap is not known.
pub const REBUILT_GAP: &str = "on a public vLLM 2025-04 result (benchmark_serving.py, 200 requests) the TPOT from this latency was 1.9e-8 to 7.8e-7 relative off vLLM's own (median, mean, p99, std: at most 0.00008 %); a script that ends the latency at `[DONE]` would be off by that wait over (output tokens − 1), not measured on any public file";

/// vLLM's own figures of `metric` in the file at `path` (`mean_tpot_ms`, `median_tpot_ms`,
/// `std_tpot_ms`, `p99_tpot_ms` for `tpot`), by statistic (`mean`, `p99`), in the file's
/// order: the top-level numbers keyed `<stat>_<metric>_ms`. The arrays are skipped unread.
pub fn own_figures(path: &Path, metric: &str) -> Vec<(String, f64)> {
    let Ok(file) = std::fs::File::open(path) else {
        return vec![];
    };
    let mut numbers = vec![];
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(file));
    // A document cut short keeps what was read before the cut.
    let _ = de.deserialize_map(TopNumbers(&mut numbers));
    let suffix = format!("_{metric}_ms");
    numbers
        .into_iter()
        .filter_map(|(k, v)| Some((k.strip_suffix(&suffix)?.to_string(), v)))
        .collect()
}

/// Collects the top-level keys of an object whose values are numbers.
struct TopNumbers<'a>(&'a mut Vec<(String, f64)>);

impl<'de> Visitor<'de> for TopNumbers<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(k) = map.next_key::<String>()? {
            if let MaybeNumber(Some(v)) = map.next_value()? {
                self.0.push((k, v));
            }
        }
        Ok(())
    }
}

/// A value that is a number, or any other value skipped as it is parsed (an array of
/// generated texts is never held).
struct MaybeNumber(Option<f64>);

impl<'de> Deserialize<'de> for MaybeNumber {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(MaybeNumberVisitor)
    }
}

struct MaybeNumberVisitor;

impl<'de> Visitor<'de> for MaybeNumberVisitor {
    type Value = MaybeNumber;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<MaybeNumber, E> {
        Ok(MaybeNumber(Some(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<MaybeNumber, E> {
        Ok(MaybeNumber(Some(v as f64)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<MaybeNumber, E> {
        Ok(MaybeNumber(Some(v as f64)))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<MaybeNumber, E> {
        Ok(MaybeNumber(None))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<MaybeNumber, E> {
        Ok(MaybeNumber(None))
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<MaybeNumber, E> {
        Ok(MaybeNumber(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<MaybeNumber, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(MaybeNumber(None))
    }
    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<MaybeNumber, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(MaybeNumber(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const RESULT: &str = r#"{"date": "20250414-141743", "completed": 2, "failed": 1,
        "input_lens": [10, 20, 30], "output_lens": [3, 1, 0],
        "ttfts": [0.25, 0.5, 0.0], "itls": [[0.01, 0.02], [], []],
        "generated_texts": ["SECRET-TEXT", "x", ""],
        "errors": ["", "", "Traceback SECRET-ERROR"],
        "mean_ttft_ms": 375.0, "p99_ttft_ms": 1.0, "p99.9_ttft_ms": 2.0}"#;

    fn frame(path: &Path) -> DataFrame {
        read(path).unwrap().frame.collect().unwrap()
    }

    #[test]
    fn one_row_per_request_in_ms_with_failures_null_and_no_text() {
        let (_d, path) = write(RESULT);
        let df = frame(&path);
        assert_eq!(
            df.get_column_names()
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>(),
            [
                "client_ttft_ms",
                "client_latency_ms",
                "output_tokens",
                "outcome",
                "input_tokens"
            ]
        );
        let f =
            |c: &str| -> Vec<Option<f64>> { df.column(c).unwrap().f64().unwrap().iter().collect() };
        assert_eq!(f("client_ttft_ms"), [Some(250.0), Some(500.0), None]);
        // No `latencies`: the last chunk's arrival, ttft + Σ itls.
        let latency = f("client_latency_ms");
        assert!((latency[0].unwrap() - 280.0).abs() < 1e-9, "{latency:?}");
        assert_eq!(latency[1..], [Some(500.0), None]);
        let out: Vec<Option<i64>> = df
            .column("output_tokens")
            .unwrap()
            .i64()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(out, [Some(3), Some(1), None]);
        let outcome: Vec<Option<&str>> = df
            .column("outcome")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(outcome, [Some("ok"), Some("ok"), Some("error")]);
        assert!(!format!("{df:?}").contains("SECRET"));
        assert_eq!(
            layout(&path),
            Layout {
                latencies: false,
                percentiles: vec!["99".into(), "99.9".into()]
            }
        );
    }

    #[test]
    fn latencies_when_the_file_has_them() {
        let (_d, path) = write(
            r#"{"ttfts": [0.25], "itls": [[0.01]], "latencies": [0.3], "output_lens": [2], "errors": [""]}"#,
        );
        let df = frame(&path);
        let v = df
            .column("client_latency_ms")
            .unwrap()
            .f64()
            .unwrap()
            .get(0);
        assert_eq!(v, Some(300.0));
        assert!(df.column("input_tokens").is_err());
        assert!(layout(&path).latencies);
    }

    /// vLLM writes a successful request that got no output token as `output_lens` 0,
    /// `ttfts` 0.0, `itls` []: it was read as a 0 ms first token and a 0 ms latency, whose
    /// inter-token latency came out as -0.0 ms. None of them is a measurement.
    #[test]
    fn output_len_0_has_no_first_token_and_no_latency() {
        let (_d, path) = write(
            r#"{"ttfts": [0.0, 0.2, 0.25], "itls": [[], [0.05], [0.01, 0.02]],
                "output_lens": [0, 0, 3], "errors": ["", "", ""]}"#,
        );
        let adapted = read(&path).unwrap();
        let df = adapted.frame.collect().unwrap();
        let f =
            |c: &str| -> Vec<Option<f64>> { df.column(c).unwrap().f64().unwrap().iter().collect() };
        assert_eq!(f("client_ttft_ms"), [None, None, Some(250.0)]);
        // The second got chunks (with empty text): its end is a measurement.
        let latency = f("client_latency_ms");
        assert_eq!(latency[0], None);
        assert!((latency[1].unwrap() - 250.0).abs() < 1e-9, "{latency:?}");
        let outcome: Vec<Option<&str>> = df
            .column("outcome")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(outcome, [Some("ok"); 3]);
        assert!(
            adapted.notes[1].starts_with(
                "2 of 3 requests vLLM counted as successful have no output token (`output_lens` 0)"
            ),
            "{:?}",
            adapted.notes
        );
        // vLLM's own figures keep what vLLM counts.
        let peer = peer_frame(&path, 0).unwrap().collect().unwrap();
        let ttft: Vec<Option<f64>> = peer
            .column(PEER_TTFT_MS)
            .unwrap()
            .f64()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(ttft, [Some(0.0), Some(200.0), Some(250.0)]);
    }

    /// A result of empty arrays holds no request: it was a run over 0 requests, exit 0.
    #[test]
    fn empty_arrays_are_no_request() {
        let (_d, path) = write(r#"{"ttfts": [], "itls": [], "output_lens": [], "errors": []}"#);
        let e = read(&path).err().unwrap().to_string();
        assert!(
            e.contains("per-request arrays are empty: no request"),
            "{e}"
        );
    }

    #[test]
    fn chunk_gaps_are_pooled_rows_keyed_by_request() {
        let (_d, path) = write(RESULT);
        let df = chunk_gaps(&path, 4).unwrap().collect().unwrap();
        assert_eq!(df.height(), 2);
        let rows: Vec<Option<i64>> = df.column(ROW_COL).unwrap().i64().unwrap().iter().collect();
        assert_eq!(rows, [Some(1), Some(1)]);
        let gaps: Vec<f64> = df
            .column(GAP_COL)
            .unwrap()
            .f64()
            .unwrap()
            .iter()
            .flatten()
            .collect();
        assert_eq!(gaps, [10.0, 20.0]);
    }

    #[test]
    fn arrays_of_different_lengths_are_an_error_naming_them() {
        let (_d, path) =
            write(r#"{"ttfts": [0.25, 0.3], "itls": [[0.01]], "output_lens": [2, 3]}"#);
        let e = read(&path).err().unwrap().to_string();
        assert!(e.contains("`ttfts` holds 2 entries, `itls` 1"), "{e}");
        let (_d, path) = write("{\"ttfts\": [1], \"itls\": [[]], \"output_lens\": [1]}\n{\"ttfts\": [1], \"itls\": [[]], \"output_lens\": [1]}\n");
        let e = read(&path).err().unwrap().to_string();
        assert!(e.contains("vLLM result"), "{e}");
    }
}
