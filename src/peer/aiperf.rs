//! AIPerf's figures, as AIPerf computes them (ai-dynamo/aiperf, `metrics/types/*.py`,
//! `metric_dicts.py`; research notes peers.md §1), from its per-request file:
//!
//! - **Records**: only valid records (no `error`, not cancelled) enter the metric
//!   statistics; error records are counted in `error_request_count` alone. (AIPerf run1:
//!   100 records, 89 in every `count`, `error_request_count` 11.)
//! - **Metrics** per record: `time_to_first_token`, `time_to_second_token`,
//!   `request_latency`, the token counts, as recorded; `inter_token_latency` =
//!   (request_latency − time_to_first_token) / (output_sequence_length − 1) for OSL ≥ 2
//!   (computed here, not read); `output_token_throughput_per_user` = 1 / ITL in seconds;
//!   the 2026 schema's `e2e_output_token_throughput` = OSL / request_latency in seconds and
//!   `prefill_throughput_per_user` = ISL / TTFT in seconds. `inter_chunk_latency` pools
//!   every record's gaps into one sample.
//! - **Statistics**: count, sum, mean, population std (`np.std`, ddof 0), min, max and
//!   p1, p5, p10, p25, p50, p75, p90, p95, p99 by linear interpolation (type 7,
//!   `np.percentile`), unrounded.
//! - **Run figures**: `min_request_timestamp` = the earliest valid record's start (wall
//!   clock ns), `max_response_timestamp` = the latest start + request_latency,
//!   `benchmark_duration` their difference in seconds (in integer ns, as AIPerf: a float
//!   of 1.8e18 ns holds 256 ns steps); request and output-token throughputs over it; the
//!   totals of ISL, OSL, output and reasoning tokens.
//!
//! A metric no valid record has (reasoning tokens of a non-reasoning model, every metric
//! of the CSV it lacks) is left out, as AIPerf leaves it out. The percentiles need every
//! value of a metric in memory: a benchmark file holds thousands of records, not millions.

use polars::prelude::*;

use super::{PeerAggregate, PeerFigures, PeerMetric, PeerRun};
use crate::error::{Error, Result};
use crate::source::aiperf::*;
use crate::source::{polars_message, Input, InputFormat};
use crate::stats;
use crate::summary::PERCENTILE_METHOD;

/// The input formats AIPerf writes.
pub fn reads(format: InputFormat) -> bool {
    matches!(format, InputFormat::Aiperf | InputFormat::AiperfCsv)
}

pub const FIRST_TOKEN_RULE: &str = "AIPerf's: the first SSE message whose content or reasoning is non-empty (role-only and usage-only chunks and [DONE] are not responses), from the client's send";

/// One per-record metric: AIPerf's tag, header, unit, and its value per record.
struct Def {
    tag: &'static str,
    header: &'static str,
    unit: &'static str,
    value: fn() -> Expr,
    /// Written by AIPerf's 2026 exports only.
    new_only: bool,
}

fn itl() -> Expr {
    let osl = col(OSL);
    when(osl.clone().gt_eq(lit(2.0)))
        .then((col(LATENCY) - col(TTFT)) / (osl - lit(1.0)))
        .otherwise(lit(NULL).cast(DataType::Float64))
}

/// A count per second of a duration in ms (null for a zero or missing duration).
fn per_second(count: Expr, ms: Expr) -> Expr {
    when(ms.clone().gt(lit(0.0)))
        .then(count / (ms / lit(1000.0)))
        .otherwise(lit(NULL).cast(DataType::Float64))
}

const METRICS: [Def; 11] = [
    Def {
        tag: "time_to_first_token",
        header: "Time to First Token",
        unit: "ms",
        value: || col(TTFT),
        new_only: false,
    },
    Def {
        tag: "time_to_second_token",
        header: "Time to Second Token",
        unit: "ms",
        value: || col(TTST),
        new_only: false,
    },
    Def {
        tag: "request_latency",
        header: "Request Latency",
        unit: "ms",
        value: || col(LATENCY),
        new_only: false,
    },
    Def {
        tag: "inter_token_latency",
        header: "Inter Token Latency",
        unit: "ms",
        value: itl,
        new_only: false,
    },
    Def {
        tag: "output_token_throughput_per_user",
        header: "Output Token Throughput Per User",
        unit: "tokens/sec/user",
        value: || per_second(lit(1.0), itl()),
        new_only: false,
    },
    Def {
        tag: "output_sequence_length",
        header: "Output Sequence Length",
        unit: "tokens",
        value: || col(OSL),
        new_only: false,
    },
    Def {
        tag: "input_sequence_length",
        header: "Input Sequence Length",
        unit: "tokens",
        value: || col(ISL),
        new_only: false,
    },
    Def {
        tag: "output_token_count",
        header: "Output Token Count",
        unit: "tokens",
        value: || col(OUTPUT_TOKENS),
        new_only: false,
    },
    Def {
        tag: "reasoning_token_count",
        header: "Reasoning Token Count",
        unit: "tokens",
        value: || col(REASONING_TOKENS),
        new_only: false,
    },
    Def {
        tag: "e2e_output_token_throughput",
        header: "E2E Output Token Throughput",
        unit: "tokens/sec/user",
        value: || per_second(col(OSL), col(LATENCY)),
        new_only: true,
    },
    Def {
        tag: "prefill_throughput_per_user",
        header: "Prefill Throughput Per User",
        unit: "tokens/sec/user",
        value: || per_second(col(ISL), col(TTFT)),
        new_only: true,
    },
];

/// The pooled metric: every record's list of gaps.
const ICL_DEF: (&str, &str, &str) = ("inter_chunk_latency", "Inter Chunk Latency", "ms");

/// The statistics' names, in the order `stat_exprs` computes them.
const STATS: [&str; 15] = [
    "count", "sum", "avg", "std", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90",
    "p95", "p99",
];
const QUANTILES: [f64; 9] = [0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99];

fn stat_name(tag: &str, stat: &str) -> String {
    format!("{tag}|{stat}")
}

/// Every statistic of the column `c`, over its non-null values, named `tag|stat`.
fn stat_exprs(c: &str, tag: &str) -> Vec<Expr> {
    let v = col(c).cast(DataType::Float64);
    let mut out = vec![
        v.clone().count().cast(DataType::Float64),
        v.clone().sum(),
        v.clone().mean(),
        v.clone().std(0),
        v.clone().min(),
        v.clone().max(),
    ];
    out.extend(
        QUANTILES
            .iter()
            .map(|q| v.clone().quantile(lit(*q), QuantileMethod::Linear)),
    );
    out.into_iter()
        .zip(STATS)
        .map(|(e, s)| e.cast(DataType::Float64).alias(stat_name(tag, s)))
        .collect()
}

fn valid() -> Expr {
    outcome().eq(lit("ok")).fill_null(lit(false))
}

/// The latest response of a valid record, wall-clock ns: its start plus its latency,
/// both in integer ns.
fn response_ns() -> Expr {
    col(START_NS)
        + (col(LATENCY) * lit(1e6))
            .round(0, RoundMode::HalfToEven)
            .cast(DataType::Int64)
}

/// One input's figures.
pub fn run(input: &Input) -> Result<PeerRun> {
    let path = input.path.as_path();
    let fail = |e: PolarsError| Error::input(path, polars_message(&e));
    let lf = scan(
        input.read_from.read.as_path(),
        input.format,
        input.repaired.as_deref(),
    )?;
    let ok = lf.clone().filter(valid());
    let metric_cols: Vec<Expr> = METRICS
        .iter()
        .map(|d| (d.value)().cast(DataType::Float64).alias(d.tag))
        .collect();
    let per_record = ok.clone().select(metric_cols).select(
        METRICS
            .iter()
            .flat_map(|d| stat_exprs(d.tag, d.tag))
            .collect::<Vec<_>>(),
    );
    let pooled = ok
        .clone()
        .select([col(ICL)
            .explode(ExplodeOptions {
                empty_as_null: false,
                keep_nulls: false,
            })
            .alias(ICL)])
        .select(stat_exprs(ICL, ICL_DEF.0));
    let sum = |c: &str| col(c).cast(DataType::Float64).sum();
    let counts = lf.select([
        len().cast(DataType::Float64).alias("records"),
        valid().cast(DataType::Float64).sum().alias("valid"),
        stats::member_of(
            outcome(),
            &Series::new("bad".into(), ["error", "cancelled"]),
        )
        .fill_null(lit(false))
        .cast(DataType::Float64)
        .sum()
        .alias("left_out"),
        col(START_NS).filter(valid()).min().alias("min_start"),
        response_ns().filter(valid()).max().alias("max_response"),
        sum(ISL).filter(valid()).alias("total_isl"),
        col(ISL)
            .filter(valid())
            .count()
            .cast(DataType::Float64)
            .alias("n_isl"),
        sum(OSL).filter(valid()).alias("total_osl"),
        col(OSL)
            .filter(valid())
            .count()
            .cast(DataType::Float64)
            .alias("n_osl"),
        sum(OUTPUT_TOKENS)
            .filter(valid())
            .alias("total_output_tokens"),
        col(OUTPUT_TOKENS)
            .filter(valid())
            .count()
            .cast(DataType::Float64)
            .alias("n_output_tokens"),
        sum(REASONING_TOKENS)
            .filter(valid())
            .alias("total_reasoning_tokens"),
        col(REASONING_TOKENS)
            .filter(valid())
            .count()
            .cast(DataType::Float64)
            .alias("n_reasoning_tokens"),
        col(NEW_SCHEMA).any(true).alias("new_schema"),
    ]);
    let mut frames = stats::collect_all(vec![per_record, pooled, counts]).map_err(fail)?;
    let counts = frames.pop().expect("three queries");
    let pooled = frames.pop().expect("three queries");
    let per_record = frames.pop().expect("three queries");
    let f = |df: &DataFrame, name: &str| -> Option<f64> {
        df.column(name)
            .ok()?
            .cast(&DataType::Float64)
            .ok()?
            .f64()
            .ok()?
            .get(0)
    };
    let new_schema = counts
        .column("new_schema")
        .ok()
        .and_then(|c| c.bool().ok()?.get(0))
        .unwrap_or(false);
    let block = |df: &DataFrame, tag: &'static str, header: &'static str, unit: &'static str| {
        let s = |stat: &str| f(df, &stat_name(tag, stat));
        let count = s("count").unwrap_or(0.0) as u64;
        (count > 0).then(|| PeerMetric {
            tag,
            header,
            unit,
            count,
            sum: s("sum").unwrap_or(f64::NAN),
            avg: s("avg").unwrap_or(f64::NAN),
            std: s("std").unwrap_or(f64::NAN),
            min: s("min").unwrap_or(f64::NAN),
            max: s("max").unwrap_or(f64::NAN),
            p1: s("p1").unwrap_or(f64::NAN),
            p5: s("p5").unwrap_or(f64::NAN),
            p10: s("p10").unwrap_or(f64::NAN),
            p25: s("p25").unwrap_or(f64::NAN),
            p50: s("p50").unwrap_or(f64::NAN),
            p75: s("p75").unwrap_or(f64::NAN),
            p90: s("p90").unwrap_or(f64::NAN),
            p95: s("p95").unwrap_or(f64::NAN),
            p99: s("p99").unwrap_or(f64::NAN),
        })
    };
    let mut metrics: Vec<PeerMetric> = METRICS
        .iter()
        .filter(|d| new_schema || !d.new_only)
        .filter_map(|d| block(&per_record, d.tag, d.header, d.unit))
        .collect();
    metrics.extend(block(&pooled, ICL_DEF.0, ICL_DEF.1, ICL_DEF.2));

    let c = |name: &str| f(&counts, name);
    let valid_n = c("valid").unwrap_or(0.0);
    let left_out = c("left_out").unwrap_or(0.0);
    let mut aggregates = vec![];
    let mut add = |tag: &'static str, header: &'static str, unit: &'static str, v: Option<f64>| {
        if let Some(value) = v {
            aggregates.push(PeerAggregate {
                tag,
                header,
                unit,
                value,
            });
        }
    };
    // Integer ns: the difference is exact before it becomes seconds.
    let (min_start, max_response) = (
        counts
            .column("min_start")
            .ok()
            .and_then(|c| c.i64().ok()?.get(0)),
        counts
            .column("max_response")
            .ok()
            .and_then(|c| c.i64().ok()?.get(0)),
    );
    let duration = match (min_start, max_response) {
        (Some(a), Some(b)) if b > a => Some((b - a) as f64 / 1e9),
        _ => None,
    };
    let total = |name: &str, n: &str| c(n).filter(|n| *n > 0.0).and(c(name));
    let per = |v: Option<f64>| v.zip(duration).map(|(v, d)| v / d);
    add("request_count", "Request Count", "requests", Some(valid_n));
    add(
        "error_request_count",
        "Error Request Count",
        "requests",
        Some(left_out).filter(|n| *n > 0.0),
    );
    add(
        "min_request_timestamp",
        "Minimum Request Timestamp",
        "ns",
        min_start.map(|v| v as f64),
    );
    add(
        "max_response_timestamp",
        "Maximum Response Timestamp",
        "ns",
        max_response.map(|v| v as f64),
    );
    add("benchmark_duration", "Benchmark Duration", "sec", duration);
    add(
        "request_throughput",
        "Request Throughput",
        "requests/sec",
        per(Some(valid_n)),
    );
    let total_osl = total("total_osl", "n_osl");
    let total_isl = total("total_isl", "n_isl");
    add(
        "output_token_throughput",
        "Output Token Throughput",
        "tokens/sec",
        per(total_osl),
    );
    if new_schema {
        add(
            "total_token_throughput",
            "Total Token Throughput",
            "tokens/sec",
            per(total_osl.zip(total_isl).map(|(o, i)| o + i)),
        );
    }
    add(
        "total_isl",
        "Total Input Sequence Length",
        "tokens",
        total_isl,
    );
    add(
        "total_osl",
        "Total Output Sequence Length",
        "tokens",
        total_osl,
    );
    add(
        "total_output_tokens",
        "Total Output Tokens",
        "tokens",
        total("total_output_tokens", "n_output_tokens"),
    );
    add(
        "total_reasoning_tokens",
        "Total Reasoning Tokens",
        "tokens",
        total("total_reasoning_tokens", "n_reasoning_tokens"),
    );
    Ok(PeerRun {
        path: input.path.display().to_string(),
        schema: if input.format == InputFormat::AiperfCsv {
            "per-request CSV (2026 column names: request_start_ns, time_to_first_token_ms)"
        } else if new_schema {
            "profile_export.jsonl, 2026 (time_to_first_token, request_start_ns)"
        } else {
            "profile_export.jsonl, 2025 (ttft, timestamp_ns)"
        },
        records: c("records").unwrap_or(0.0) as u64,
        left_out: left_out as u64,
        metrics,
        aggregates,
    })
}

/// The runs with what AIPerf's definitions are.
pub fn figures(runs: Vec<PeerRun>) -> PeerFigures {
    PeerFigures {
        definitions: "aiperf",
        tool: "AIPerf",
        first_token_rule: FIRST_TOKEN_RULE,
        inter_token_latency: "(request_latency − time_to_first_token) / (output_sequence_length − 1), per record with OSL ≥ 2 (vLLM's TPOT)",
        percentile_method: PERCENTILE_METHOD,
        std: "population (ddof = 0, NumPy's np.std)",
        records_used: "valid records only: error and cancelled records are left out of every metric, as AIPerf leaves them out, and counted in error_request_count",
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{self, BadRowPolicy};

    fn run_on(name: &str, text: &str) -> PeerRun {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let (_, inputs) =
            source::load(&[path], None, BadRowPolicy::Error, &[]).expect("an AIPerf file");
        run(&inputs[0]).unwrap()
    }

    #[test]
    fn itl_is_per_record_errors_are_left_out_and_std_is_population() {
        // Latency − TTFT over OSL − 1: (1100 − 100) / 10 = 100 and (2100 − 100) / 20 = 100
        // ... and a one-token record has none.
        let text = r#"{"metadata":{"x_request_id":"a","timestamp_ns":1000000000},"metrics":{"ttft":{"value":100.0},"request_latency":{"value":1100.0},"output_sequence_length":{"value":11},"input_sequence_length":{"value":5}},"error":null}
{"metadata":{"x_request_id":"b","timestamp_ns":2000000000},"metrics":{"ttft":{"value":300.0},"request_latency":{"value":2300.0},"output_sequence_length":{"value":21},"input_sequence_length":{"value":5}},"error":null}
{"metadata":{"x_request_id":"c","timestamp_ns":2500000000},"metrics":{"ttft":{"value":50.0},"request_latency":{"value":50.0},"output_sequence_length":{"value":1},"input_sequence_length":{"value":5}},"error":null}
{"metadata":{"x_request_id":"d","timestamp_ns":500000000},"metrics":{"error_request_count":{"value":1}},"error":{"code":499}}
"#;
        let r = run_on("p.jsonl", text);
        assert_eq!((r.records, r.left_out), (4, 1));
        let m = |tag: &str| r.metrics.iter().find(|m| m.tag == tag).unwrap();
        let itl = m("inter_token_latency");
        assert_eq!((itl.count, itl.avg, itl.std), (2, 100.0, 0.0));
        assert_eq!(m("output_token_throughput_per_user").avg, 10.0);
        let ttft = m("time_to_first_token");
        assert_eq!(ttft.count, 3);
        assert_eq!(ttft.avg, 150.0);
        // Population std of 100, 300, 50: sqrt(((−50)² + 150² + (−100)²) / 3).
        assert!((ttft.std - (35000.0f64 / 3.0).sqrt()).abs() < 1e-12);
        // p50 of 50, 100, 300 is 100; p25 interpolates 50 → 100 halfway.
        assert_eq!((ttft.p50, ttft.p25), (100.0, 75.0));
        // No reasoning tokens recorded: no such metric, as AIPerf.
        assert!(r.metrics.iter().all(|m| m.tag != "reasoning_token_count"));
        let a = |tag: &str| r.aggregates.iter().find(|a| a.tag == tag).map(|a| a.value);
        // From the first valid start (1 s) to the latest end (2 s + 2.3 s), not the error's.
        assert_eq!(a("benchmark_duration"), Some(3.3));
        assert_eq!(a("request_count"), Some(3.0));
        assert_eq!(a("error_request_count"), Some(1.0));
        assert_eq!(a("total_osl"), Some(33.0));
        assert_eq!(a("total_token_throughput"), None, "a 2026 figure");
    }
}
