//! Generates Azure Monitor metrics exports for one Azure OpenAI resource with planted
//! latency episodes, for fixtures and tests of `source::azure_windows`. Deterministic: the
//! same seed gives the same files.
//!
//!     cargo run --example generate_azure -- --out-dir fixtures/azure/generated
//!
//! Writes one Metrics REST response per metric (`<MetricName>.json`, the shape
//! `GET …/providers/Microsoft.Insights/metrics` returns and users save), 1-minute windows
//! over 6 hours, and `EPISODES.md`, the table of planted episodes (written from the same
//! constants the data come from, so the two cannot disagree).
//!
//! Two deployments, one per metric-name family, so that a reader must map both names onto
//! one figure: `gpt-4o-chat` is exported under the Azure OpenAI names
//! (`AzureOpenAITTLTInMS`, …), `gpt-4o-batch` under the newer Foundry "Models" names
//! (`TimeToLastByte`, …). Names, units and dimensions follow the metric catalogue in
//! docs/azure.md §4.
//!
//! Outside the unexplained-TTLT episode every window satisfies the latency formula within
//! noise: TTLT = Time to Response + TBT × generated tokens per request, where the averages
//! include throttled requests (a 429 answers fast and generates nothing), so the formula
//! holds with every request in the denominator.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

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
    /// `x` times a uniform factor in `[1 - spread, 1 + spread]`.
    fn jitter(&mut self, x: f64, spread: f64) -> f64 {
        x * self.range(1.0 - spread, 1.0 + spread)
    }
}

/// Number of 1-minute windows (6 hours).
const WINDOWS: usize = 360;
const MINUTE_MS: i64 = 60_000;
/// 2026-11-02T08:17:00Z: Azure aligns windows to the query start, not to the hour.
const START_MS: i64 = 1_793_607_420_000;
const RESOURCE: &str = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-tracediag-demo/providers/Microsoft.CognitiveServices/accounts/aoai-tracediag-demo";
const REGION: &str = "swedencentral";

const CHAT: &str = "gpt-4o-chat";
const BATCH: &str = "gpt-4o-batch";

/// A planted episode: windows `first..=last` (0-based) of `deployment`.
struct Episode {
    id: usize,
    name: &'static str,
    deployment: &'static str,
    first: usize,
    last: usize,
    change: &'static str,
}

const TOKEN_GROWTH: Episode = Episode {
    id: 1,
    name: "token_volume_growth",
    deployment: BATCH,
    first: 20,
    last: 59,
    change: "generated tokens per request ×2; TTLT rises as the formula predicts; Time to Response, TBT, requests flat",
};
const STORM_429: Episode = Episode {
    id: 2,
    name: "throttling_429_storm",
    deployment: CHAT,
    first: 75,
    last: 104,
    change: "40–60 % of requests answered 429 (the only 429s in the data); total requests flat; PTU utilization not raised (a rate limit, not capacity); 429s answer in 25–40 ms and generate nothing",
};
const PTU_PLATEAU: Episode = Episode {
    id: 3,
    name: "utilization_plateau",
    deployment: CHAT,
    first: 120,
    last: 159,
    change: "PTU utilization average 95.5–99.5 %, maximum 100 %, for 40 minutes (the only windows ≥ 95 %); Time to Response ramps from ×1 to ×2.5; requests, tokens, TBT flat",
};
const TBT_LOAD: Episode = Episode {
    id: 4,
    name: "tbt_rise_under_load",
    deployment: BATCH,
    first: 175,
    last: 214,
    change: "requests ×1.7, TBT ×1.6, PTU utilization 80–88 %; tokens per request and Time to Response flat",
};
const TTLT_STEP: Episode = Episode {
    id: 5,
    name: "unexplained_ttlt_step",
    deployment: CHAT,
    first: 230,
    last: 269,
    change: "TTLT ×1.5 while tokens, Time to Response, TBT and requests stay flat: the formula underestimates TTLT by a third",
};
const PROMPT_TTFT: Episode = Episode {
    id: 6,
    name: "prompt_driven_ttft_rise",
    deployment: BATCH,
    first: 285,
    last: 324,
    change: "prompt tokens per request ×3; Time to Response rises with them (300 ms + 0.2 ms per prompt token); normalized TTFT stays about flat",
};

const EPISODES: [&Episode; 6] = [
    &TOKEN_GROWTH,
    &STORM_429,
    &PTU_PLATEAU,
    &TBT_LOAD,
    &TTLT_STEP,
    &PROMPT_TTFT,
];

/// Not an episode: minutes in which `gpt-4o-batch` served no request. Every metric but PTU
/// utilization (which reports 0) has points without data, so the windows exist with nulls.
const IDLE_DEPLOYMENT: &str = BATCH;
const IDLE_FIRST: usize = 340;
const IDLE_LAST: usize = 344;

/// The two name families.
#[derive(Clone, Copy, PartialEq)]
enum Family {
    AzureOpenAI,
    Models,
}

/// A figure the files carry; `names` gives its REST name in each family.
#[derive(Clone, Copy, PartialEq)]
enum Figure {
    Ttlt,
    TimeToResponse,
    Tbt,
    NormalizedTtft,
    Requests,
    GeneratedTokens,
    PromptTokens,
    PtuUtilization,
}

const FIGURES: [Figure; 8] = [
    Figure::Ttlt,
    Figure::TimeToResponse,
    Figure::Tbt,
    Figure::NormalizedTtft,
    Figure::Requests,
    Figure::GeneratedTokens,
    Figure::PromptTokens,
    Figure::PtuUtilization,
];

impl Figure {
    /// (REST name, display name) in a family. The catalogue gives display names for the
    /// Azure OpenAI family only; the newer family repeats the REST name.
    fn names(self, family: Family) -> (&'static str, &'static str) {
        match (family, self) {
            (Family::AzureOpenAI, Figure::Ttlt) => ("AzureOpenAITTLTInMS", "Time to Last Byte"),
            (Family::AzureOpenAI, Figure::TimeToResponse) => {
                ("AzureOpenAITimeToResponse", "Time to Response")
            }
            (Family::AzureOpenAI, Figure::Tbt) => {
                ("AzureOpenAINormalizedTBTInMS", "Time Between Token")
            }
            (Family::AzureOpenAI, Figure::NormalizedTtft) => (
                "AzureOpenAINormalizedTTFTInMS",
                "Normalized Time to First Byte",
            ),
            (Family::AzureOpenAI, Figure::Requests) => {
                ("AzureOpenAIRequests", "Azure OpenAI Requests")
            }
            (Family::AzureOpenAI, Figure::GeneratedTokens) => {
                ("GeneratedTokens", "Generated Completion Tokens")
            }
            (Family::AzureOpenAI, Figure::PromptTokens) => {
                ("ProcessedPromptTokens", "Processed Prompt Tokens")
            }
            (Family::AzureOpenAI, Figure::PtuUtilization) => (
                "AzureOpenAIProvisionedManagedUtilizationV2",
                "Provisioned-managed Utilization V2",
            ),
            (Family::Models, Figure::Ttlt) => ("TimeToLastByte", "TimeToLastByte"),
            (Family::Models, Figure::TimeToResponse) => ("TimeToResponse", "TimeToResponse"),
            (Family::Models, Figure::Tbt) => {
                ("NormalizedTimeBetweenTokens", "NormalizedTimeBetweenTokens")
            }
            (Family::Models, Figure::NormalizedTtft) => {
                ("NormalizedTimeToFirstToken", "NormalizedTimeToFirstToken")
            }
            (Family::Models, Figure::Requests) => ("ModelRequests", "ModelRequests"),
            (Family::Models, Figure::GeneratedTokens) => ("OutputTokens", "OutputTokens"),
            (Family::Models, Figure::PromptTokens) => ("InputTokens", "InputTokens"),
            (Family::Models, Figure::PtuUtilization) => {
                ("ProvisionedUtilization", "ProvisionedUtilization")
            }
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Figure::Ttlt | Figure::TimeToResponse | Figure::Tbt | Figure::NormalizedTtft => {
                "MilliSeconds"
            }
            Figure::Requests | Figure::GeneratedTokens | Figure::PromptTokens => "Count",
            Figure::PtuUtilization => "Percent",
        }
    }
}

/// Baseline behaviour of one deployment.
struct Profile {
    deployment: &'static str,
    family: Family,
    requests_per_minute: f64,
    generated_per_request: f64,
    prompt_per_request: f64,
    /// Time to Response = overhead + per-prompt-token cost × prompt tokens.
    ttr_overhead_ms: f64,
    ttr_ms_per_prompt_token: f64,
    tbt_ms: f64,
    ptu_pct: f64,
    /// Whether requests are also split by StreamType (80 % streaming).
    split_stream_type: bool,
}

const PROFILES: [Profile; 2] = [
    Profile {
        deployment: CHAT,
        family: Family::AzureOpenAI,
        requests_per_minute: 120.0,
        generated_per_request: 280.0,
        prompt_per_request: 1200.0,
        ttr_overhead_ms: 200.0,
        ttr_ms_per_prompt_token: 0.2,
        tbt_ms: 24.0,
        ptu_pct: 55.0,
        split_stream_type: true,
    },
    Profile {
        deployment: BATCH,
        family: Family::Models,
        requests_per_minute: 40.0,
        generated_per_request: 600.0,
        prompt_per_request: 3000.0,
        ttr_overhead_ms: 300.0,
        ttr_ms_per_prompt_token: 0.2,
        tbt_ms: 16.0,
        ptu_pct: 45.0,
        split_stream_type: false,
    },
];

/// Stream-type values as the request metric writes them (docs/azure.md §4.2).
const STREAM_TYPES: [&str; 2] = ["Streaming", "Non-Streaming"];

/// What one deployment did in one window. `None` everywhere but PTU in idle windows.
#[derive(Default)]
struct Minute {
    /// Requests answered 200 and 429, by stream type (index into `STREAM_TYPES`; only
    /// index 0 is used, without a StreamType dimension, when the profile does not split).
    ok: [u64; 2],
    throttled: [u64; 2],
    ttr_ok_ms: Option<f64>,
    ttr_429_ms: Option<f64>,
    tbt_ms: Option<f64>,
    normalized_ttft_ms: Option<f64>,
    generated: Option<u64>,
    prompt: Option<u64>,
    ttlt_ms: Option<f64>,
    ptu_avg: f64,
    ptu_max: f64,
}

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn r4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

fn within(e: &Episode, deployment: &str, w: usize) -> bool {
    e.deployment == deployment && (e.first..=e.last).contains(&w)
}

fn simulate(p: &Profile, rng: &mut Rng) -> Vec<Minute> {
    let d = p.deployment;
    (0..WINDOWS)
        .map(|w| {
            if d == IDLE_DEPLOYMENT && (IDLE_FIRST..=IDLE_LAST).contains(&w) {
                return Minute::default();
            }
            let load = if within(&TBT_LOAD, d, w) { 1.7 } else { 1.0 };
            let total = (rng.jitter(p.requests_per_minute * load, 0.08).round() as u64).max(1);
            let throttled_share = if within(&STORM_429, d, w) {
                rng.range(0.4, 0.6)
            } else {
                0.0
            };
            let n429 = (total as f64 * throttled_share).round() as u64;
            let nok = total - n429;
            let split = |n: u64| {
                if p.split_stream_type {
                    let streaming = (n as f64 * 0.8).round() as u64;
                    [streaming, n - streaming]
                } else {
                    [n, 0]
                }
            };

            let generated_mult = if within(&TOKEN_GROWTH, d, w) {
                2.0
            } else {
                1.0
            };
            let prompt_mult = if within(&PROMPT_TTFT, d, w) { 3.0 } else { 1.0 };
            let generated_per = rng.jitter(p.generated_per_request * generated_mult, 0.04);
            let prompt_per = rng.jitter(p.prompt_per_request * prompt_mult, 0.04);
            // Throttled requests are rejected before any prompt is processed.
            let generated = (nok as f64 * generated_per).round() as u64;
            let prompt = (nok as f64 * prompt_per).round() as u64;

            let ttr_mult = if within(&PTU_PLATEAU, d, w) {
                let span = (PTU_PLATEAU.last - PTU_PLATEAU.first) as f64;
                1.0 + 1.5 * (w - PTU_PLATEAU.first) as f64 / span
            } else {
                1.0
            };
            let ttr_ok = r2(rng.jitter(
                (p.ttr_overhead_ms + p.ttr_ms_per_prompt_token * prompt_per) * ttr_mult,
                0.03,
            ));
            let ttr_429 = (n429 > 0).then(|| r2(rng.range(25.0, 40.0)));
            let tbt_mult = if within(&TBT_LOAD, d, w) { 1.6 } else { 1.0 };
            let tbt = r2(rng.jitter(p.tbt_ms * tbt_mult, 0.03));
            let normalized_ttft = (nok > 0).then(|| r4(ttr_ok / (prompt as f64 / nok as f64)));

            // Averages over every request: a 429 has TTLT = Time to Response and no tokens.
            let ttr_all =
                (nok as f64 * ttr_ok + n429 as f64 * ttr_429.unwrap_or(0.0)) / total as f64;
            let ttlt_mult = if within(&TTLT_STEP, d, w) { 1.5 } else { 1.0 };
            let ttlt = r2(rng.jitter(
                (ttr_all + tbt * generated as f64 / total as f64) * ttlt_mult,
                0.015,
            ));

            let (ptu_avg, ptu_max) = if within(&PTU_PLATEAU, d, w) {
                (r2(rng.range(95.5, 99.5)), 100.0)
            } else {
                let avg = if within(&TBT_LOAD, d, w) {
                    rng.range(80.0, 88.0)
                } else {
                    rng.jitter(p.ptu_pct, 0.1)
                };
                (r2(avg), r2((avg + rng.range(2.0, 8.0)).min(100.0)))
            };

            Minute {
                ok: split(nok),
                throttled: split(n429),
                ttr_ok_ms: Some(ttr_ok),
                ttr_429_ms: ttr_429,
                tbt_ms: Some(tbt),
                normalized_ttft_ms: normalized_ttft,
                generated: Some(generated),
                prompt: Some(prompt),
                ttlt_ms: Some(ttlt),
                ptu_avg,
                ptu_max,
            }
        })
        .collect()
}

/// `2026-11-02T08:17:00Z` for a window index.
fn stamp(w: usize) -> String {
    let ms = START_MS + w as i64 * MINUTE_MS;
    chrono::DateTime::from_timestamp_millis(ms)
        .expect("generated times are in range")
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn dimension(name: &str, value: &str) -> Value {
    // Azure answers with lower-cased dimension names, in `value` and `localizedValue`.
    json!({"name": {"value": name, "localizedValue": name}, "value": value})
}

/// One point: `aggregations` with a value, or only `timeStamp` when none has one.
fn point(w: usize, aggregations: &[(&str, Option<Value>)]) -> Value {
    let mut obj = serde_json::Map::new();
    obj.insert("timeStamp".into(), json!(stamp(w)));
    for (name, value) in aggregations {
        if let Some(value) = value {
            obj.insert((*name).into(), value.clone());
        }
    }
    Value::Object(obj)
}

/// The aggregations one minute contributes to a point: `(name, value)`, absent as `None`.
type PointFn<'a> = &'a dyn Fn(&Minute) -> Vec<(&'static str, Option<Value>)>;

/// The series of one figure for one deployment: `(dimensions, points)`.
fn series(figure: Figure, p: &Profile, minutes: &[Minute]) -> Vec<(Vec<Value>, Vec<Value>)> {
    let deployment = dimension("modeldeploymentname", p.deployment);
    let each = |f: PointFn| -> Vec<Value> {
        minutes
            .iter()
            .enumerate()
            .map(|(w, m)| point(w, &f(m)))
            .collect()
    };
    let average = |x: Option<f64>| vec![("average", x.map(|x| json!(x)))];
    let total = |x: Option<u64>| vec![("total", x.map(|x| json!(x)))];
    match figure {
        Figure::Ttlt => vec![(vec![deployment], each(&|m| average(m.ttlt_ms)))],
        Figure::Tbt => vec![(vec![deployment], each(&|m| average(m.tbt_ms)))],
        Figure::NormalizedTtft => {
            vec![(vec![deployment], each(&|m| average(m.normalized_ttft_ms)))]
        }
        Figure::TimeToResponse if p.split_stream_type => vec![
            // Split by StatusCode, average only: a reader must weight the two series by
            // the requests of each status to get the deployment's average.
            (
                vec![deployment.clone(), dimension("statuscode", "200")],
                each(&|m| average(m.ttr_ok_ms)),
            ),
            (
                vec![deployment, dimension("statuscode", "429")],
                each(&|m| average(m.ttr_429_ms)),
            ),
        ],
        Figure::TimeToResponse => vec![(vec![deployment], each(&|m| average(m.ttr_ok_ms)))],
        Figure::Requests => {
            let mut out = vec![];
            for (status, pick) in [("200", false), ("429", true)] {
                let streams = if p.split_stream_type { 2 } else { 1 };
                for (i, stream_type) in STREAM_TYPES.iter().enumerate().take(streams) {
                    let mut dims = vec![deployment.clone(), dimension("statuscode", status)];
                    if p.split_stream_type {
                        dims.push(dimension("streamtype", stream_type));
                    }
                    let points = each(&|m| {
                        let n = if pick { m.throttled[i] } else { m.ok[i] };
                        // No request of this kind, no point: Azure writes none.
                        total((n > 0).then_some(n))
                    });
                    out.push((dims, points));
                }
            }
            out
        }
        Figure::GeneratedTokens => vec![(vec![deployment], each(&|m| total(m.generated)))],
        Figure::PromptTokens => vec![(vec![deployment], each(&|m| total(m.prompt)))],
        Figure::PtuUtilization => vec![(
            vec![deployment],
            each(&|m| {
                vec![
                    ("average", Some(json!(m.ptu_avg))),
                    ("maximum", Some(json!(m.ptu_max))),
                ]
            }),
        )],
    }
}

/// A Metrics REST response for one metric of one deployment.
fn response(figure: Figure, p: &Profile, minutes: &[Minute]) -> Value {
    let (name, display) = figure.names(p.family);
    let timeseries: Vec<Value> = series(figure, p, minutes)
        .into_iter()
        .map(|(dims, data)| json!({"metadatavalues": dims, "data": data}))
        .collect();
    let points: usize = timeseries
        .iter()
        .map(|s| s["data"].as_array().map_or(0, Vec::len))
        .sum();
    json!({
        "cost": points,
        "timespan": format!("{}/{}", stamp(0), stamp(WINDOWS)),
        "interval": "PT1M",
        "value": [{
            "id": format!("{RESOURCE}/providers/Microsoft.Insights/metrics/{name}"),
            "type": "Microsoft.Insights/metrics",
            "name": {"value": name, "localizedValue": display},
            "unit": figure.unit(),
            "timeseries": timeseries,
            "errorCode": "Success",
        }],
        "namespace": "Microsoft.CognitiveServices/accounts",
        "resourceregion": REGION,
    })
}

fn episodes_md() -> String {
    let mut s = String::new();
    s.push_str(
        "# Planted episodes in the generated Azure Monitor exports\n\n\
         Written by `cargo run --example generate_azure` from the constants in\n\
         `examples/generate_azure.rs`; do not edit by hand.\n\n",
    );
    s.push_str(&format!(
        "One Azure OpenAI resource (`{}`), {WINDOWS} one-minute windows from {} to {} \
         (window *i* starts at {} + *i* minutes). Windows are 0-based and both ends are \
         included.\n\n",
        RESOURCE.rsplit('/').next().unwrap_or(RESOURCE),
        stamp(0),
        stamp(WINDOWS),
        stamp(0),
    ));
    s.push_str(
        "| # | episode | deployment | first window | last window | first (UTC) | last (UTC) | what changes |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for e in EPISODES {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            e.id,
            e.name,
            e.deployment,
            e.first,
            e.last,
            stamp(e.first),
            stamp(e.last),
            e.change
        ));
    }
    s.push_str(&format!(
        "| – | idle_gap (not an episode) | {IDLE_DEPLOYMENT} | {IDLE_FIRST} | {IDLE_LAST} | {} | {} | \
         no requests: every metric but PTU utilization has points with only `timeStamp`; \
         utilization reports 0 |\n\n",
        stamp(IDLE_FIRST),
        stamp(IDLE_LAST),
    ));
    s.push_str("## Baseline\n\n");
    s.push_str(
        "| deployment | name family | requests/min | generated tokens/request | prompt tokens/request | Time to Response | TBT | PTU utilization |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for p in &PROFILES {
        s.push_str(&format!(
            "| {} | {} | {} (±8 %) | {} (±4 %) | {} (±4 %) | {} ms + {} ms × prompt tokens (±3 %) | {} ms (±3 %) | {} % (±10 %) |\n",
            p.deployment,
            match p.family {
                Family::AzureOpenAI => "Azure OpenAI (`AzureOpenAI…`, `GeneratedTokens`, `ProcessedPromptTokens`)",
                Family::Models => "Foundry Models (`TimeToLastByte`, `ModelRequests`, `OutputTokens`, `InputTokens`, …)",
            },
            p.requests_per_minute,
            p.generated_per_request,
            p.prompt_per_request,
            p.ttr_overhead_ms,
            p.ttr_ms_per_prompt_token,
            p.tbt_ms,
            p.ptu_pct,
        ));
    }
    s.push_str(
        "\nTTLT = (Time to Response + TBT × generated tokens ÷ requests) × (1 ± 1.5 %) in \
         every window with requests, except episode 5 where it is ×1.5. Time to Response and \
         TTLT are averages over all requests, 429s included (a 429 answers in 25–40 ms and \
         generates nothing), so the formula holds with all requests in the denominator.\n\n",
    );
    s.push_str("## Files\n\n");
    s.push_str(
        "One Metrics REST response per metric (`<REST name>.json`), as users save them: \
         `{cost, timespan, interval: \"PT1M\", value, namespace, resourceregion}`, dimension \
         names lower-cased, windows without data written with only `timeStamp`. The \
         `gpt-4o-chat` files use the Azure OpenAI names, the `gpt-4o-batch` files the newer \
         names, so each deployment's figures come from a different family. All series are \
         split by `modeldeploymentname`; request counts also by `statuscode` (`200`, `429`; \
         `gpt-4o-chat` also by `streamtype`); `gpt-4o-chat`'s Time to Response by \
         `statuscode`, with `average` only, so a reader must weight the two series by the \
         requests of each status. Latency units are `MilliSeconds`, counts `Count`, \
         utilization `Percent`. The catalogue gives display names (`localizedValue`) for \
         the Azure OpenAI names only; the newer names repeat the REST name there.\n",
    );
    s
}

fn write_json(path: &Path, value: &Value) -> std::io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    serde_json::to_writer_pretty(&mut w, value)?;
    writeln!(w)?;
    w.flush()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut seed = 20261102u64;
    let mut dir = PathBuf::from("fixtures/azure/generated");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--seed" => seed = val()?.parse()?,
            "--out-dir" => dir = PathBuf::from(val()?),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    std::fs::create_dir_all(&dir)?;
    let mut rng = Rng(seed);
    let mut files = 0;
    for p in &PROFILES {
        let minutes = simulate(p, &mut rng);
        for figure in FIGURES {
            let (name, _) = figure.names(p.family);
            write_json(
                &dir.join(format!("{name}.json")),
                &response(figure, p, &minutes),
            )?;
            files += 1;
        }
    }
    std::fs::write(dir.join("EPISODES.md"), episodes_md())?;
    eprintln!(
        "wrote {files} metric files and EPISODES.md to {}",
        dir.display()
    );
    Ok(())
}
