//! LLMPerf's figures (`metrics_summary` of `token_benchmark_ray.py`), over the requests of
//! each input file (one run, one summary, as LLMPerf writes one per run):
//! - statistics over the rows whose `error_code` is null; errored rows are counted in the
//!   run figures only;
//! - per metric, pandas' `quantile([.25, .5, .75, .9, .95, .99])` (type 7), `mean`, `min`,
//!   `max` and `std` (SAMPLE, ddof 1), on LLMPerf's own per-request figures as written
//!   (seconds, tokens/s, tokens), under LLMPerf's names;
//! - run figures: `num_requests_started`, `number_errors`, `error_rate`,
//!   `num_completed_requests`, and the requests per error code.
//!
//! `inter_token_latency_s` is LLMPerf's: the time to the last content chunk, TTFT
//! included, over the output tokens. It is named as LLMPerf names it and never stands for
//! tracediag's inter-token latency.

use polars::prelude::*;

use super::pooled::{
    describe, described, of_file, ErrorCode, PeerFigures, PeerMetric, Run, RunCounts, Stat,
    PER_FILE,
};
use crate::error::Result;
use crate::plan::Plan;
use crate::source::llmperf::{self as adapter, ERROR_CODE, METRICS};
use crate::source::{FILE_INDEX, ROW_COL};
use crate::summary::PERCENTILE_METHOD;

fn stats() -> Vec<(String, Stat)> {
    let mut out: Vec<(String, Stat)> = [25, 50, 75, 90, 95, 99]
        .iter()
        .map(|p| {
            (
                format!("quantiles_p{p}"),
                Stat::Quantile(f64::from(*p) / 100.0),
            )
        })
        .collect();
    out.extend([
        ("mean".to_string(), Stat::Mean),
        ("min".to_string(), Stat::Min),
        ("max".to_string(), Stat::Max),
        ("stddev".to_string(), Stat::Std(1)),
    ]);
    out
}

fn about(metric: &str) -> (&'static str, &'static str) {
    match metric {
        "inter_token_latency_s" => ("s", "LLMPerf's inter-token latency: send to the last content chunk, TTFT included, ÷ output tokens (not tracediag's inter-token latency, which leaves the first token out)"),
        "ttft_s" => ("s", "send to the first chunk with a non-empty `delta.content`"),
        "end_to_end_latency_s" => ("s", "send to the end of the stream"),
        "request_output_throughput_token_per_s" => ("tokens/s", "LLMPerf's per-request output throughput, as written (its token count over the end-to-end time)"),
        "number_input_tokens" => ("tokens", "LLMPerf's tokenizer count of the prompt"),
        _ => ("tokens", "LLMPerf's tokenizer count of the generated text"),
    }
}

pub fn figures(plan: &Plan) -> Result<PeerFigures> {
    let runs = (0..plan.inputs.len())
        .map(|i| run(plan, i))
        .collect::<Result<Vec<_>>>()?;
    Ok(PeerFigures {
        definitions: "llmperf",
        tool: "Ray LLMPerf token_benchmark_ray.py (metrics_summary)",
        first_token_rule: "the first chunk with a non-empty `delta.content`",
        std: "sample (pandas Series.std, ddof 1)",
        percentile_method: PERCENTILE_METHOD,
        left_out: "errored requests (`error_code` set), counted in number_errors and error_rate",
        runs_apart: PER_FILE,
        runs,
    })
}

/// The figures of the plan's `file`-th input.
fn run(plan: &Plan, file: usize) -> Result<Run> {
    let input = &plan.inputs[file];
    let peer = adapter::peer_frame(input.read_from.read.as_path(), file as u32)?;
    // The file's requests in the plan (after any window) with LLMPerf's figures for them.
    let keys = [col(FILE_INDEX), col(ROW_COL)];
    let rows = of_file(plan, file).select(keys.clone()).join(
        peer,
        keys.clone(),
        keys,
        JoinArgs::new(JoinType::Inner),
    );
    let ok = rows.clone().filter(col(ERROR_CODE).is_null());
    let stats = stats();
    let mut queries: Vec<LazyFrame> = METRICS
        .iter()
        .map(|m| describe(ok.clone(), col(*m), &stats))
        .collect();
    queries.push(
        rows.clone().select([
            len().cast(DataType::UInt64).alias("started"),
            col(ERROR_CODE)
                .count()
                .cast(DataType::UInt64)
                .alias("errors"),
        ]),
    );
    queries.push(
        rows.filter(col(ERROR_CODE).is_not_null())
            .group_by([col(ERROR_CODE)])
            .agg([len().cast(DataType::UInt64).alias("requests")])
            .sort([ERROR_CODE], SortMultipleOptions::default()),
    );
    let mut out = crate::stats::collect_all(queries).map_err(|e| plan.read_error(&e))?;
    let codes = out.pop().expect("codes");
    let run = out.pop().expect("run");
    let read = || -> PolarsResult<_> {
        let started = run.column("started")?.u64()?.get(0).unwrap_or(0);
        let errors = run.column("errors")?.u64()?.get(0).unwrap_or(0);
        let code = codes.column(ERROR_CODE)?.f64()?;
        let requests = codes.column("requests")?.u64()?;
        let error_codes = code
            .iter()
            .zip(requests.iter())
            .filter_map(|(c, n)| {
                Some(ErrorCode {
                    code: c?,
                    requests: n?,
                })
            })
            .collect();
        let metrics = METRICS
            .iter()
            .zip(&out)
            .map(|(m, df)| {
                let (n, stats) = described(df, &stats)?;
                let (unit, definition) = about(m);
                Ok(PeerMetric {
                    name: m.to_string(),
                    unit,
                    definition,
                    n,
                    stats,
                })
            })
            .collect::<PolarsResult<Vec<_>>>()?;
        Ok((started, errors, error_codes, metrics))
    };
    let (started, errors, error_codes, metrics) = read().map_err(|e| plan.read_error(&e))?;
    let rate = (started > 0).then(|| errors as f64 / started as f64);
    Ok(Run {
        path: input.path.display().to_string(),
        requests: started,
        counted: started - errors,
        run: Some(RunCounts {
            num_requests_started: started,
            error_rate: rate,
            number_errors: errors,
            num_completed_requests: started - errors,
        }),
        error_codes,
        metrics,
        not_computed: vec![
            "mean_output_throughput_token_per_s and num_completed_requests_per_min: they divide by the run's wall-clock duration, which the individual responses do not hold".into(),
        ],
        notes: vec![],
    })
}
