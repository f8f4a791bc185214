//! vLLM's figures (`calculate_metrics` of `benchmark_serving.py` / `vllm/benchmarks/
//! serve.py`), over the requests of each input file (one run, one summary, as vLLM writes
//! one result per run):
//! - only successful requests count (`errors[i]` empty); the others are left out, as vLLM
//!   leaves them out;
//! - TTFT per request; TPOT = (latency − ttft) / (output_len − 1) per request with
//!   output_len > 1; ITL = every gap between chunks, POOLED over the requests (not one value
//!   per request); E2EL = latency, when the file has `latencies`;
//! - each as `np.mean`, `np.median`, `np.std` (population, ddof 0) and `np.percentile`
//!   (type 7) at the percentiles the file reports (`p99_ttft_ms` → 99), all in ms.
//!
//! Where vLLM writes 0 for a metric over no value (`np.mean(x or 0)`), this writes null.

use polars::prelude::*;

use super::pooled::{describe, described, of_file, PeerFigures, PeerMetric, Run, Stat, PER_FILE};
use crate::error::Result;
use crate::plan::Plan;
use crate::source::vllm::{
    self as adapter, GAP_COL, PEER_LATENCY_MS, PEER_OUTPUT_LEN, PEER_SUCCESS, PEER_TTFT_MS,
};
use crate::source::Input;
use crate::source::{FILE_INDEX, ROW_COL};
use crate::summary::PERCENTILE_METHOD;

/// vLLM's default `--metric-percentiles`, for a file that reports none.
const DEFAULT_PERCENTILES: [&str; 1] = ["99"];

fn stats(percentiles: &[String]) -> Vec<(String, Stat)> {
    let mut out = vec![
        ("mean".to_string(), Stat::Mean),
        ("median".to_string(), Stat::Median),
        ("std".to_string(), Stat::Std(0)),
    ];
    for p in percentiles {
        let q = p.parse::<f64>().unwrap_or(99.0) / 100.0;
        out.push((format!("p{p}"), Stat::Quantile(q)));
    }
    out
}

pub fn figures(plan: &Plan) -> Result<PeerFigures> {
    let runs = plan
        .inputs
        .iter()
        .enumerate()
        .map(|(i, input)| run(plan, i, input))
        .collect::<Result<Vec<_>>>()?;
    Ok(PeerFigures {
        definitions: "vllm",
        tool: "vLLM benchmark_serving.py / vllm bench serve (calculate_metrics)",
        first_token_rule:
            "the first streamed chunk with a non-empty `choices` array, even when its text is empty",
        std: "population (np.std, ddof 0)",
        percentile_method: PERCENTILE_METHOD,
        left_out: "failed requests (a non-empty `errors` entry)",
        runs_apart: PER_FILE,
        runs,
    })
}

/// One metric: its name, its definition, the rows it is over and its value per row.
type Metric = (&'static str, &'static str, LazyFrame, Expr);

/// vLLM's metrics over a file's successful requests (`ok`) and their chunk gaps (`gaps`).
fn metrics(ok: &LazyFrame, gaps: LazyFrame, latencies: bool) -> Vec<Metric> {
    let latency = "latency: vLLM's `latencies` (send to the last chunk with choices)";
    let derived = "latency rebuilt as ttft + Σ itls (the file has no `latencies`): the arrival of the last chunk with choices, missing any time vLLM's own latency adds between that chunk and the request's end (a second clock read for the TTFT in 2025 scripts, the wait for `[DONE]` in 2024 ones), which moves each TPOT by that time over (output tokens − 1); the run's note gives the gap measured against the file's own TPOT figures";
    let mut out: Vec<Metric> = vec![
        (
            "ttft",
            "send to the first chunk with a non-empty `choices`, per successful request",
            ok.clone(),
            col(PEER_TTFT_MS),
        ),
        (
            "tpot",
            if latencies { latency } else { derived },
            ok.clone().filter(col(PEER_OUTPUT_LEN).gt(lit(1))),
            (col(PEER_LATENCY_MS) - col(PEER_TTFT_MS))
                / (col(PEER_OUTPUT_LEN).cast(DataType::Float64) - lit(1.0)),
        ),
        (
            "itl",
            "every gap between successive chunks with choices, pooled over the successful requests",
            gaps,
            col(GAP_COL),
        ),
    ];
    if latencies {
        out.push((
            "e2el",
            "send to the last chunk with choices (`latencies`), per successful request",
            ok.clone(),
            col(PEER_LATENCY_MS),
        ));
    }
    out
}

/// The figures of the plan's `file`-th input.
fn run(plan: &Plan, file: usize, input: &Input) -> Result<Run> {
    let path = input.read_from.read.as_path();
    let layout = adapter::layout(path);
    let mut percentiles = layout.percentiles.clone();
    if percentiles.is_empty() {
        percentiles = DEFAULT_PERCENTILES.map(String::from).to_vec();
    }
    let stats = stats(&percentiles);
    // The file's requests in the plan (after any window) with vLLM's own figures for them,
    // as the file holds them: tracediag's canonical columns null what vLLM counts (the 0.0
    // TTFT of a request without output), and vLLM's summary counts it.
    let keys = [col(FILE_INDEX), col(ROW_COL)];
    let join = |lf: LazyFrame, other: LazyFrame| {
        lf.join(
            other,
            keys.clone(),
            keys.clone(),
            JoinArgs::new(JoinType::Inner),
        )
    };
    let rows = join(
        of_file(plan, file).select(keys.clone()),
        adapter::peer_frame(path, file as u32)?,
    );
    // vLLM's `success`: no error text (every request, in a file without `errors`).
    let ok = rows.clone().filter(col(PEER_SUCCESS));
    let gaps = join(
        ok.clone().select(keys.clone()),
        adapter::chunk_gaps(path, file as u32)?,
    );
    let metrics = metrics(&ok, gaps, layout.latencies);
    let mut queries: Vec<LazyFrame> = metrics
        .iter()
        .map(|(_, _, rows, value)| describe(rows.clone(), value.clone(), &stats))
        .collect();
    let count = |lf: LazyFrame| lf.select([len().cast(DataType::UInt64).alias("n")]);
    queries.push(count(rows));
    queries.push(count(ok));
    let mut out = crate::stats::collect_all(queries).map_err(|e| plan.read_error(&e))?;
    let counted = first_u64(&out.pop().expect("counted"));
    let requests = first_u64(&out.pop().expect("requests"));
    let metrics = metrics
        .iter()
        .zip(&out)
        .map(|((name, definition, _, _), df)| {
            let (n, stats) = described(df, &stats)?;
            Ok(PeerMetric {
                name: name.to_string(),
                unit: "ms",
                definition,
                n,
                stats,
            })
        })
        .collect::<PolarsResult<Vec<_>>>()
        .map_err(|e| plan.read_error(&e))?;
    let mut not_computed = vec![];
    if !layout.latencies {
        not_computed.push(
            "e2el: the file has no `latencies` (vLLM writes them from --save-detailed in current versions)".to_string(),
        );
    }
    let notes = if layout.latencies {
        vec![]
    } else {
        let tpot = metrics.iter().find(|m| m.name == "tpot");
        vec![rebuilt_gap(&adapter::own_figures(path, "tpot"), tpot)]
    };
    Ok(Run {
        path: input.path.display().to_string(),
        requests,
        counted,
        run: None,
        error_codes: vec![],
        metrics,
        not_computed,
        notes,
    })
}

/// How far the TPOT from the rebuilt latency is from vLLM's own figures in the file
/// (`own`: `mean` → `mean_tpot_ms`, …), relative, over the statistics both have.
fn rebuilt_gap(own: &[(String, f64)], tpot: Option<&PeerMetric>) -> String {
    let gaps: Vec<(&str, f64)> = own
        .iter()
        .filter(|(_, theirs)| *theirs != 0.0 && theirs.is_finite())
        .filter_map(|(stat, theirs)| {
            let ours = tpot?.stats.get(stat)?;
            Some((stat.as_str(), ((ours - theirs) / theirs).abs()))
        })
        .collect();
    let (Some(low), Some(high)) = (
        gaps.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
        gaps.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
    ) else {
        return format!(
            "tpot rests on the rebuilt latency, and the file has none of vLLM's own TPOT figures to measure the gap against; {}",
            adapter::REBUILT_GAP
        );
    };
    let names: Vec<String> = gaps.iter().map(|(s, _)| format!("{s}_tpot_ms")).collect();
    format!(
        "tpot rests on the rebuilt latency: against vLLM's own figures in this file ({}) it is {:.1e} ({}) to {:.1e} ({}) relative off, at most {:.5} %",
        names.join(", "),
        low.1,
        low.0,
        high.1,
        high.0,
        high.1 * 100.0
    )
}

fn first_u64(df: &DataFrame) -> u64 {
    df.column("n")
        .ok()
        .and_then(|c| c.u64().ok()?.get(0))
        .unwrap_or(0)
}
