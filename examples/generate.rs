//! Generates a realistic gateway request log with planted episodes, for fixtures and the
//! benchmark. Deterministic: the same seed and row count give the same files.
//!
//!     cargo run --release --example generate -- --rows 3000 --out-dir fixtures/generated
//!     cargo run --release --example generate -- --rows 1000000 --out-dir /tmp/big --formats parquet
//!
//! Formats: `parquet` (timing nested in `other.timing`), `parquet-flat` (flat timing
//! columns, `gateway_flat.parquet`), `csv`, `jsonl`, `jsonl-string` (`other` a JSON string),
//! `newapi` (the same requests as new-api's own log items, `newapi.jsonl`, on its relay
//! clock), `newapi-csv` (the same as an export of its `logs` table, `newapi.csv`).
//!
//! Writes `gateway.parquet` (timing nested in a struct `other.timing`), `gateway.csv`
//! (flat columns), `gateway.jsonl` (`other` as a JSON object) and
//! `gateway_other_string.jsonl` (`other` as a JSON string, as new-api stores it). Every
//! row also carries content columns (`prompt`, `response`, `api_key`, and `other.messages`)
//! holding canary strings that must never reach any tracediag output.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde_json::{json, Map, Value};

/// SplitMix64: small, fast, and the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[(self.next() % xs.len() as u64) as usize]
    }
    /// Log-normal-ish positive value around `median`.
    fn around(&mut self, median: f64, spread: f64) -> f64 {
        let g = (0..4).map(|_| self.unit()).sum::<f64>() - 2.0; // ~N(0, 0.58)
        median * (g * spread).exp()
    }
}

pub const CANARY_PROMPT: &str = "CANARY-PROMPT-do-not-leak";
pub const CANARY_RESPONSE: &str = "CANARY-RESPONSE-do-not-leak";
pub const CANARY_KEY: &str = "sk-CANARY-KEY-do-not-leak";
pub const CANARY_MESSAGES: &str = "CANARY-MESSAGES-do-not-leak";

const TIMING: [&str; 11] = [
    "auth_ms",
    "distribution_ms",
    "body_read_ms",
    "upstream_start_ms",
    "upstream_headers_ms",
    "first_sse_event_ms",
    "first_response_ms",
    "first_text_delta_ms",
    "upstream_done_ms",
    "total_handler_ms",
    "visible_output_tps",
];

#[derive(Default, Clone)]
struct Row {
    request_id: String,
    timestamp: String,
    model: String,
    group: String,
    channel: String,
    region: String,
    is_stream: bool,
    status: i64,
    outcome: String,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    cached_tokens: Option<i64>,
    stream_event_count: Option<i64>,
    text_delta_count: Option<i64>,
    inflight: Option<i64>,
    /// Indexed like TIMING.
    timing: [Option<f64>; 11],
    /// What the row was generated as (ground truth for the tests).
    scenario: &'static str,
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn iso(epoch_ms: i64) -> String {
    tracediag::analyze::iso_ms(epoch_ms).expect("generated times are in range")
}

fn generate(rows: usize, seed: u64) -> Vec<Row> {
    let mut g = Generator::new(rows, seed);
    let mut out = Vec::with_capacity(rows);
    while let Some(chunk) = g.next_chunk(CHUNK) {
        out.extend(chunk);
    }
    out
}

/// Rows made a chunk at a time, so that a log larger than memory (the benchmark's 100M)
/// can be written as it is made. The rows are the same however they are chunked.
struct Generator {
    rng: Rng,
    next: usize,
    rows: usize,
}

/// Rows per chunk: a Parquet row group, and more than the planted rows' positions.
const CHUNK: usize = ROW_GROUP;

impl Generator {
    fn new(rows: usize, seed: u64) -> Generator {
        Generator {
            rng: Rng(seed),
            next: 0,
            rows,
        }
    }

    /// The next `len` rows (fewer at the end), or `None` when all are made.
    fn next_chunk(&mut self, len: usize) -> Option<Vec<Row>> {
        if self.next >= self.rows {
            return None;
        }
        let first = self.next;
        let end = (first + len).min(self.rows);
        self.next = end;
        let mut out = make(&mut self.rng, first..end);
        if first == 0 {
            plant(&mut out);
        }
        Some(out)
    }
}

fn make(rng: &mut Rng, range: std::ops::Range<usize>) -> Vec<Row> {
    let models = ["gpt-4.1", "claude-sonnet-4", "gemini-2.5-pro"];
    let channels = ["ch-east", "ch-west", "ch-eu"];
    let regions = ["us-east", "us-west", "eu-west"];
    let groups = ["default", "premium"];
    // 2026-11-02T00:00:00Z
    let start_ms: i64 = 1_793_577_600_000;
    let mut out = Vec::with_capacity(range.len());
    for i in range {
        let mut r = Row {
            request_id: format!("req-{:07}", i + 1),
            timestamp: iso(start_ms + (i as i64) * 2_000 + (rng.next() % 1000) as i64),
            model: rng.pick(&models).to_string(),
            group: rng.pick(&groups).to_string(),
            channel: rng.pick(&channels).to_string(),
            region: rng.pick(&regions).to_string(),
            is_stream: true,
            status: 200,
            outcome: "ok".into(),
            ..Default::default()
        };
        let roll = rng.unit();
        let scenario = match roll {
            x if x < 0.58 => "normal_text",
            x if x < 0.68 => "normal_non_stream",
            x if x < 0.73 => "tool_only",
            x if x < 0.78 => "upstream_headers_slow",
            x if x < 0.81 => "prefill_slow",
            x if x < 0.83 => "effective_after_events_slow",
            x if x < 0.87 => "action_text_gap",
            x if x < 0.91 => "generation_slow_tps",
            x if x < 0.92 => "auth_slow",
            x if x < 0.93 => "distribution_slow",
            x if x < 0.94 => "body_read_slow",
            x if x < 0.96 => "cancelled",
            x if x < 0.98 => "error",
            x if x < 0.99 => "timeout",
            _ => "missing_fields",
        };
        r.scenario = scenario;

        let mut auth = rng.around(6.0, 0.5);
        let mut dist = rng.around(2.0, 0.5);
        let mut body = rng.around(4.0, 0.8);
        // Planted episodes are unambiguous: the slow phase dominates its request (short
        // outputs), so every planted row has exactly one right class.
        let planted = !matches!(
            scenario,
            "normal_text"
                | "normal_non_stream"
                | "tool_only"
                | "cancelled"
                | "error"
                | "timeout"
                | "missing_fields"
        );
        match scenario {
            "auth_slow" => auth = rng.range(2000.0, 4000.0),
            "distribution_slow" => dist = rng.range(2000.0, 4000.0),
            "body_read_slow" => body = rng.range(2500.0, 5000.0),
            _ => {}
        }
        let t1 = auth + dist + body + rng.range(0.0, 1.0);
        let exact_t1 = rng.unit() < 0.5;
        let input = rng.around(1800.0, 1.0).max(5.0) as i64;
        let output = if planted {
            rng.range(20.0, 60.0) as i64
        } else {
            rng.around(300.0, 0.8).max(2.0) as i64
        };
        r.input_tokens = Some(input);
        r.output_tokens = Some(output);
        r.cached_tokens = Some((input as f64 * rng.range(0.0, 0.6)) as i64);
        r.inflight = Some(rng.around(8.0, 0.6) as i64);

        let mut headers = rng.around(250.0, 0.4);
        let mut to_event = rng.around(60.0, 0.5);
        let mut event_to_eff = rng.around(80.0, 0.5);
        let mut eff_to_text = rng.around(20.0, 0.5);
        let mut tps = rng.around(60.0, 0.3);
        let post = rng.around(3.0, 0.5);
        match scenario {
            "upstream_headers_slow" => headers = rng.range(4000.0, 15000.0),
            "prefill_slow" => to_event = rng.range(4000.0, 12000.0),
            "effective_after_events_slow" => event_to_eff = rng.range(4000.0, 10000.0),
            "action_text_gap" => eff_to_text = rng.range(4000.0, 12000.0),
            "generation_slow_tps" => {
                tps = rng.range(4.0, 12.0);
                r.output_tokens = Some(rng.range(100.0, 300.0) as i64);
            }
            _ => {}
        }
        let output = r.output_tokens.unwrap_or(output);
        let gen_ms = output as f64 / tps * 1000.0;
        let t2 = t1 + headers;
        let t3 = t2 + to_event;
        let t4 = t3 + event_to_eff;
        let t5 = t4 + eff_to_text;
        let t6 = t5 + gen_ms;
        let t7 = t6 + post;

        let mut tm: [Option<f64>; 11] = [None; 11];
        tm[0] = Some(r1(auth));
        tm[1] = Some(r1(dist));
        tm[2] = Some(r1(body));
        tm[3] = exact_t1.then(|| r1(t1));
        tm[4] = Some(r1(headers));
        tm[5] = Some(r1(t3));
        tm[6] = Some(r1(t4));
        tm[7] = Some(r1(t5));
        tm[8] = Some(r1(t6));
        tm[9] = Some(r1(t7));
        tm[10] = Some((output as f64 / (gen_ms / 1000.0) * 100.0).round() / 100.0);
        r.stream_event_count = Some(output / 3 + 4);
        r.text_delta_count = Some(output / 3);

        match scenario {
            "normal_non_stream" => {
                r.is_stream = false;
                // Non-streaming: headers arrive with the whole body.
                let h = headers + gen_ms;
                tm[4] = Some(r1(h));
                tm[5] = None;
                tm[6] = None;
                tm[7] = None;
                tm[8] = Some(r1(t1 + h));
                tm[9] = Some(r1(t1 + h + post));
                tm[10] = None;
                r.stream_event_count = None;
                r.text_delta_count = None;
            }
            "tool_only" => {
                // Function-call arguments stream, no visible text ever.
                tm[7] = None;
                tm[10] = None;
                r.text_delta_count = Some(0);
            }
            "cancelled" => {
                // The client went away mid-stream: no upstream end.
                let cut = t5 + gen_ms * rng.range(0.1, 0.5);
                tm[8] = None;
                tm[9] = Some(r1(cut));
                tm[10] = None;
                r.status = 499;
                r.outcome = "cancelled".into();
            }
            "error" => {
                // A 5xx after a header wait, half of them long.
                let h = if rng.unit() < 0.5 {
                    rng.range(5000.0, 9000.0)
                } else {
                    rng.range(100.0, 600.0)
                };
                tm[4] = Some(r1(h));
                tm[5..=8].fill(None);
                tm[9] = Some(r1(t1 + h + post));
                tm[10] = None;
                r.status = *rng.pick(&[500i64, 502, 503]);
                r.outcome = "error".into();
                r.output_tokens = None;
                r.stream_event_count = Some(0);
                r.text_delta_count = Some(0);
            }
            "timeout" => {
                tm[4] = None;
                tm[5..=8].fill(None);
                tm[9] = Some(r1(t1 + 30000.0));
                tm[10] = None;
                r.status = 504;
                r.outcome = "timeout".into();
                r.output_tokens = None;
            }
            "missing_fields" => {
                // The gateway lost the handler time (e.g. a crash before logging it).
                tm[9] = None;
            }
            _ => {}
        }
        r.timing = tm;
        out.push(r);
    }
    out
}

/// Planted data-quality problems, at fixed positions (in the first chunk) so tests can
/// name them.
fn plant(out: &mut [Row]) {
    let n = out.len();
    if n >= 100 {
        // "missing" written as 0.
        for i in [17, 517] {
            if i < n && out[i].timing[7].is_some() {
                out[i].timing[7] = Some(0.0);
            }
        }
        // Out of order: first effective after first text.
        if let (Some(t5), Some(_)) = (out[33].timing[7], out[33].timing[6]) {
            out[33].timing[6] = Some(t5 + 50.0);
        }
        // Logged TPS disagreeing with tokens ÷ window.
        if let Some(tps) = out[44].timing[10] {
            out[44].timing[10] = Some(tps * 3.0);
        }
        // A duplicated request id.
        let dup = out[55].request_id.clone();
        out[56].request_id = dup;
    }
}

fn timing_map(r: &Row) -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in TIMING.iter().zip(r.timing.iter()) {
        if let Some(v) = v {
            m.insert(k.to_string(), json!(v));
        }
    }
    m
}

fn base_json(r: &Row) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("request_id".into(), json!(r.request_id));
    m.insert("timestamp".into(), json!(r.timestamp));
    m.insert("model".into(), json!(r.model));
    m.insert("group".into(), json!(r.group));
    m.insert("channel".into(), json!(r.channel));
    m.insert("region".into(), json!(r.region));
    m.insert("is_stream".into(), json!(r.is_stream));
    m.insert("status".into(), json!(r.status));
    m.insert("outcome".into(), json!(r.outcome));
    for (k, v) in [
        ("input_tokens", r.input_tokens),
        ("output_tokens", r.output_tokens),
        ("cached_tokens", r.cached_tokens),
        ("stream_event_count", r.stream_event_count),
        ("text_delta_count", r.text_delta_count),
        ("inflight", r.inflight),
    ] {
        m.insert(k.into(), v.map(|x| json!(x)).unwrap_or(Value::Null));
    }
    m.insert("prompt".into(), json!(CANARY_PROMPT));
    m.insert("response".into(), json!(CANARY_RESPONSE));
    m.insert("api_key".into(), json!(CANARY_KEY));
    m.insert("scenario".into(), json!(r.scenario));
    m
}

fn write_jsonl(rows: &[Row], path: &PathBuf, other_as_string: bool) -> std::io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    for r in rows {
        let mut m = base_json(r);
        let other = json!({"timing": timing_map(r), "messages": [{"role": "user", "content": CANARY_MESSAGES}]});
        if other_as_string {
            m.insert("other".into(), json!(other.to_string()));
        } else {
            m.insert("other".into(), other);
        }
        writeln!(w, "{}", Value::Object(m))?;
    }
    w.flush()
}

/// The same requests as new-api's `GET /api/log/` items (JSON lines), with new-api's own
/// clock: its relay start (r0) comes after auth and channel selection, `frt` is r0 → the
/// first SSE event in ms (-1000 for a response that is not streamed or never sent one),
/// `use_time` whole seconds of truncated Unix times (r0 → the handler's end) and
/// `created_at` the Unix second the row was written. A failed or timed-out request is an
/// error row (type 5), the rest consume rows (type 2); `other` is a JSON string, as
/// new-api stores it; `content` holds a canary. Rows without an end time are not logged
/// (new-api writes a row once the request is done).
///
/// With `csv`, the same rows as an export of new-api's `logs` table: a header, one record
/// per row, the channel under its table column `channel_id`, `other` its JSON text.
fn write_newapi<C: AsRef<[Row]>>(
    path: &Path,
    chunks: impl Iterator<Item = C>,
    csv: bool,
) -> std::io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    let mut id = 0u64;
    for chunk in chunks {
        for r in chunk.as_ref() {
            let t = |name: &str| {
                TIMING
                    .iter()
                    .position(|n| *n == name)
                    .and_then(|i| r.timing[i])
            };
            let Some(end) = t("total_handler_ms") else {
                continue;
            };
            let received = chrono_ms(&r.timestamp);
            let r0 = t("auth_ms").unwrap_or(0.0) + t("distribution_ms").unwrap_or(0.0);
            let start_s = (received as f64 + r0) / 1000.0;
            let end_s = (received as f64 + end) / 1000.0;
            let frt = match (r.is_stream, t("first_sse_event_ms")) {
                (true, Some(first)) => r1(first - r0),
                _ => -1000.0,
            };
            let failed = matches!(r.outcome.as_str(), "error" | "timeout");
            let mut other = json!({
                "frt": frt,
                "cache_tokens": r.cached_tokens.unwrap_or(0),
                "model_ratio": 1.25,
                "group_ratio": 1,
            });
            if r.outcome == "cancelled" {
                other["stream_status"] = json!({"status": "canceled", "end_reason": "client_gone"});
            }
            id += 1;
            let row = json!({
                "id": id,
                "user_id": 1,
                "created_at": end_s.floor() as i64,
                "type": if failed { 5 } else { 2 },
                "content": CANARY_RESPONSE,
                "username": "admin",
                "token_name": CANARY_KEY,
                "model_name": r.model,
                "quota": 100,
                "prompt_tokens": r.input_tokens.unwrap_or(0),
                "completion_tokens": r.output_tokens.unwrap_or(0),
                "use_time": end_s.floor() as i64 - start_s.floor() as i64,
                "is_stream": r.is_stream,
                "channel": channel_id(&r.channel),
                "group": r.group,
                "request_id": r.request_id,
                "other": other.to_string(),
                "scenario": r.scenario,
            });
            if !csv {
                writeln!(w, "{row}")?;
                continue;
            }
            let Value::Object(m) = row else { continue };
            if id == 1 {
                let header: Vec<&str> = m
                    .keys()
                    .map(|k| {
                        if k == "channel" {
                            "channel_id"
                        } else {
                            k.as_str()
                        }
                    })
                    .collect();
                writeln!(w, "{}", header.join(","))?;
            }
            let cells: Vec<String> = m
                .values()
                .map(|v| match v {
                    Value::String(s) => csv_cell(s),
                    v => v.to_string(),
                })
                .collect();
            writeln!(w, "{}", cells.join(","))?;
        }
    }
    w.flush()
}

/// The file a new-api format is written to.
fn newapi_file(format: &str) -> Option<&'static str> {
    match format {
        "newapi" => Some("newapi.jsonl"),
        "newapi-csv" => Some("newapi.csv"),
        _ => None,
    }
}

/// A CSV cell: quoted (quotes doubled) when it holds a comma, a quote or a line end.
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A generated timestamp (`iso`) back in milliseconds since the Unix epoch.
fn chrono_ms(iso: &str) -> i64 {
    tracediag::analyze::parse_instant(iso).expect("generated timestamps parse")
}

/// new-api numbers its channels.
fn channel_id(name: &str) -> u32 {
    match name {
        "ch-east" => 1,
        "ch-west" => 2,
        "ch-eu" => 3,
        _ => 9,
    }
}

fn frame(rows: &[Row]) -> PolarsResult<DataFrame> {
    let s = |f: fn(&Row) -> String| rows.iter().map(f).collect::<Vec<_>>();
    let oi = |f: fn(&Row) -> Option<i64>| rows.iter().map(f).collect::<Vec<_>>();
    let mut cols: Vec<Column> = vec![
        Column::new("request_id".into(), s(|r| r.request_id.clone())),
        Column::new("timestamp".into(), s(|r| r.timestamp.clone())),
        Column::new("model".into(), s(|r| r.model.clone())),
        Column::new("group".into(), s(|r| r.group.clone())),
        Column::new("channel".into(), s(|r| r.channel.clone())),
        Column::new("region".into(), s(|r| r.region.clone())),
        Column::new(
            "is_stream".into(),
            rows.iter().map(|r| r.is_stream).collect::<Vec<_>>(),
        ),
        Column::new(
            "status".into(),
            rows.iter().map(|r| r.status).collect::<Vec<_>>(),
        ),
        Column::new("outcome".into(), s(|r| r.outcome.clone())),
        Column::new("input_tokens".into(), oi(|r| r.input_tokens)),
        Column::new("output_tokens".into(), oi(|r| r.output_tokens)),
        Column::new("cached_tokens".into(), oi(|r| r.cached_tokens)),
        Column::new("stream_event_count".into(), oi(|r| r.stream_event_count)),
        Column::new("text_delta_count".into(), oi(|r| r.text_delta_count)),
        Column::new("inflight".into(), oi(|r| r.inflight)),
        Column::new("prompt".into(), vec![CANARY_PROMPT; rows.len()]),
        Column::new("response".into(), vec![CANARY_RESPONSE; rows.len()]),
        Column::new("api_key".into(), vec![CANARY_KEY; rows.len()]),
        Column::new(
            "scenario".into(),
            rows.iter().map(|r| r.scenario).collect::<Vec<_>>(),
        ),
    ];
    for (i, name) in TIMING.iter().enumerate() {
        cols.push(Column::new(
            (*name).into(),
            rows.iter().map(|r| r.timing[i]).collect::<Vec<_>>(),
        ));
    }
    DataFrame::new_infer_height(cols)
}

/// Rows per Parquet row group: pyarrow's default. (polars' own default is one row group
/// for the whole file, which makes any reader hold whole columns.)
const ROW_GROUP: usize = 1 << 20;

/// `gateway_flat.parquet`: timing as flat columns, for the benchmark's side-by-side peers,
/// written a row group (a chunk of rows) at a time.
fn write_flat<C: AsRef<[Row]>>(dir: &Path, chunks: impl Iterator<Item = C>) -> PolarsResult<()> {
    let mut writer = None;
    for chunk in chunks {
        let df = frame(chunk.as_ref())?;
        if writer.is_none() {
            let file = File::create(dir.join("gateway_flat.parquet"))?;
            writer = Some(
                ParquetWriter::new(file)
                    .with_row_group_size(Some(ROW_GROUP))
                    .batched(df.schema())?,
            );
        }
        writer.as_mut().expect("made above").write_batch(&df)?;
    }
    if let Some(w) = writer {
        w.finish()?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rows = 3000usize;
    let mut seed = 20261129u64;
    let mut dir = PathBuf::from("fixtures/generated");
    let mut formats = vec![
        "parquet".to_string(),
        "csv".into(),
        "jsonl".into(),
        "jsonl-string".into(),
    ];
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--rows" => rows = val()?.parse()?,
            "--seed" => seed = val()?.parse()?,
            "--out-dir" => dir = PathBuf::from(val()?),
            "--formats" => formats = val()?.split(',').map(String::from).collect(),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    std::fs::create_dir_all(&dir)?;
    // Flat Parquet or new-api's JSON lines alone are written as they are made (the
    // benchmark's largest logs).
    if formats == ["parquet-flat"] {
        let mut g = Generator::new(rows, seed);
        write_flat(&dir, std::iter::from_fn(|| g.next_chunk(CHUNK)))?;
        eprintln!("wrote {rows} rows (parquet-flat) to {}", dir.display());
        return Ok(());
    }
    if let [f] = &formats[..] {
        if let Some(name) = newapi_file(f) {
            let mut g = Generator::new(rows, seed);
            let path = dir.join(name);
            write_newapi(
                &path,
                std::iter::from_fn(|| g.next_chunk(CHUNK)),
                f == "newapi-csv",
            )?;
            eprintln!("wrote {rows} requests ({f}) to {}", path.display());
            return Ok(());
        }
    }
    let data = generate(rows, seed);
    for f in &formats {
        match f.as_str() {
            "jsonl" => write_jsonl(&data, &dir.join("gateway.jsonl"), false)?,
            "jsonl-string" => write_jsonl(&data, &dir.join("gateway_other_string.jsonl"), true)?,
            "csv" => {
                let mut df = frame(&data)?;
                CsvWriter::new(File::create(dir.join("gateway.csv"))?).finish(&mut df)?;
            }
            "parquet-flat" => write_flat(&dir, data.chunks(CHUNK))?,
            "newapi" | "newapi-csv" => {
                let path = dir.join(newapi_file(f).unwrap_or_default());
                write_newapi(&path, data.chunks(CHUNK), f == "newapi-csv")?
            }
            "parquet" => {
                // Timing nested as other.timing, as a struct column.
                let df = frame(&data)?;
                let timing: Vec<Expr> = TIMING.iter().map(|n| col(*n)).collect();
                let mut df = df
                    .lazy()
                    .with_column(as_struct(vec![as_struct(timing).alias("timing")]).alias("other"))
                    .drop(by_name(TIMING, true, false))
                    .collect()?;
                ParquetWriter::new(File::create(dir.join("gateway.parquet"))?)
                    .with_row_group_size(Some(ROW_GROUP))
                    .finish(&mut df)?;
            }
            other => return Err(format!("unknown format {other}").into()),
        }
    }
    eprintln!(
        "wrote {rows} rows ({}) to {}",
        formats.join(", "),
        dir.display()
    );
    Ok(())
}
