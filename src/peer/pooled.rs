//! The figures of the peers that summarise a run's requests pooled (vLLM, LLMPerf): the
//! shared shape ([`PeerFigures`], one [`Run`] per input file) and statistics (`describe`),
//! read from the plan (and the side frames an adapter provides, e.g. vLLM's pooled chunk
//! gaps) with polars aggregates. `peer::vllm` and `peer::llmperf` compute each tool's
//! figures.
//!
//! Each input file is one run of the peer, summarised apart: the peer writes one summary
//! per run, and two runs pooled (their requests in one sample) give percentiles, means and
//! counts that neither run has and no summary of the peer can be set beside.

use polars::prelude::*;
use serde::ser::SerializeMap;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::source::{InputFormat, FILE_INDEX};

use super::Definitions;

/// What the output says of several input files.
pub const PER_FILE: &str = "one block per input file: each file is one run, summarised apart as the tool summarises it (runs are never pooled: their requests in one sample would give figures neither run has)";

/// A peer's own figures, one block per run (input file).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PeerFigures {
    /// `vllm`, `llmperf`.
    pub definitions: &'static str,
    /// The tool, and the code its definitions were read from.
    pub tool: &'static str,
    pub first_token_rule: &'static str,
    pub std: &'static str,
    pub percentile_method: &'static str,
    /// Which requests the peer leaves out of its statistics.
    pub left_out: &'static str,
    /// That each file is summarised apart ([`PER_FILE`]).
    pub runs_apart: &'static str,
    pub runs: Vec<Run>,
}

/// One input file's figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Run {
    pub path: String,
    /// Requests in the file (after `--since`/`--until`).
    pub requests: u64,
    /// Of them, the requests the peer's statistics are over.
    pub counted: u64,
    /// Run-level counts, for a peer that reports them (LLMPerf).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunCounts>,
    /// Requests per error code, by code (LLMPerf's `error_code_frequency`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub error_codes: Vec<ErrorCode>,
    pub metrics: Vec<PeerMetric>,
    /// Figures of the peer's own summary this file cannot give, each with why.
    pub not_computed: Vec<String>,
    /// What a reader should know of these figures (how far a rebuilt one was from the
    /// peer's own, measured on this file).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The plan's rows of its `file`-th input.
pub fn of_file(plan: &Plan, file: usize) -> LazyFrame {
    plan.lf.clone().filter(col(FILE_INDEX).eq(lit(file as u32)))
}

/// One metric as the peer defines it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PeerMetric {
    /// The peer's name for it (`ttft`, `inter_token_latency_s`).
    pub name: String,
    pub unit: &'static str,
    pub definition: &'static str,
    /// Values the statistics are over.
    pub n: u64,
    /// The peer's statistics, under the peer's names, in its order; null over no value.
    pub stats: Stats,
}

/// LLMPerf's run-level counts, under its names.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunCounts {
    pub num_requests_started: u64,
    /// number_errors ÷ num_requests_started; null over no request.
    pub error_rate: Option<f64>,
    pub number_errors: u64,
    pub num_completed_requests: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ErrorCode {
    pub code: f64,
    pub requests: u64,
}

/// Named figures in a fixed order, serialized as a JSON object in that order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats(pub Vec<(String, Option<f64>)>);

impl Stats {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| n == name).and_then(|(_, v)| *v)
    }
}

impl Serialize for Stats {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// One statistic of a peer's summary.
#[derive(Debug, Clone)]
pub enum Stat {
    Mean,
    Median,
    /// Standard deviation with this many degrees of freedom removed (0: population).
    Std(u8),
    Min,
    Max,
    /// A type-7 (linear) quantile, q in 0…1.
    Quantile(f64),
}

impl Stat {
    fn expr(&self, value: Expr) -> Expr {
        let v = value.cast(DataType::Float64);
        match self {
            Stat::Mean => v.mean(),
            Stat::Median => v.median(),
            Stat::Std(ddof) => v.std(*ddof),
            Stat::Min => v.min(),
            Stat::Max => v.max(),
            Stat::Quantile(q) => v.quantile(lit(*q), QuantileMethod::Linear),
        }
    }
}

/// The query for `value` over `rows`: its non-null count and each of `stats` (named).
pub fn describe(rows: LazyFrame, value: Expr, stats: &[(String, Stat)]) -> LazyFrame {
    let v = value.alias("__value");
    let mut aggs = vec![col("__value").count().cast(DataType::UInt64).alias("__n")];
    aggs.extend(
        stats
            .iter()
            .enumerate()
            .map(|(i, (_, s))| s.expr(col("__value")).alias(format!("__s{i}").as_str())),
    );
    rows.select([v]).select(aggs)
}

/// Read back what [`describe`] computed.
pub fn described(df: &DataFrame, stats: &[(String, Stat)]) -> PolarsResult<(u64, Stats)> {
    let n = df.column("__n")?.u64()?.get(0).unwrap_or(0);
    let mut out = vec![];
    for (i, (name, _)) in stats.iter().enumerate() {
        let c = df
            .column(format!("__s{i}").as_str())?
            .cast(&DataType::Float64)?;
        let v = c.f64()?.get(0).filter(|v| v.is_finite());
        out.push((name.clone(), v));
    }
    Ok((n, Stats(out)))
}

/// The peer's figures over the plan's requests. Every input must be of the peer's format:
/// another file's rows have no such figures.
pub fn figures(definitions: Definitions, plan: &Plan) -> Result<PeerFigures> {
    let wanted = match definitions {
        Definitions::Vllm => InputFormat::Vllm,
        Definitions::Llmperf => InputFormat::Llmperf,
        Definitions::Aiperf => unreachable!("AIPerf's figures are per run (`peer::aiperf`)"),
    };
    if let Some(other) = plan.inputs.iter().find(|i| i.format != wanted) {
        return Err(Error::Usage(format!(
            "--definitions {} computes {}'s figures from its {wanted} files; {} reads as {}",
            definitions.name(),
            definitions.name(),
            other.path.display(),
            other.format
        )));
    }
    match definitions {
        Definitions::Vllm => super::vllm::figures(plan),
        _ => super::llmperf::figures(plan),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_numpy_and_pandas_flavoured() {
        let df = df!("x" => [1.0, 2.0, 3.0, 4.0, f64::NAN]).unwrap();
        // NaN is not a value (pandas skips it; polars nulls are what the frames hold).
        let lf = df.lazy().with_column(
            when(col("x").is_nan())
                .then(lit(NULL))
                .otherwise(col("x"))
                .alias("x"),
        );
        let stats = vec![
            ("mean".to_string(), Stat::Mean),
            ("median".to_string(), Stat::Median),
            ("std".to_string(), Stat::Std(0)),
            ("stddev".to_string(), Stat::Std(1)),
            ("p25".to_string(), Stat::Quantile(0.25)),
            ("min".to_string(), Stat::Min),
            ("max".to_string(), Stat::Max),
        ];
        let out = describe(lf, col("x"), &stats).collect().unwrap();
        let (n, s) = described(&out, &stats).unwrap();
        assert_eq!(n, 4);
        assert_eq!(s.get("mean"), Some(2.5));
        assert_eq!(s.get("median"), Some(2.5));
        assert_eq!(s.get("std"), Some(1.25f64.sqrt()));
        assert_eq!(s.get("stddev"), Some((5.0f64 / 3.0).sqrt()));
        // numpy.percentile([1, 2, 3, 4], 25) = 1.75 (type 7).
        assert_eq!(s.get("p25"), Some(1.75));
        assert_eq!((s.get("min"), s.get("max")), (Some(1.0), Some(4.0)));
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            format!(
                "{{\"mean\":2.5,\"median\":2.5,\"std\":{},\"stddev\":{},\"p25\":1.75,\"min\":1.0,\"max\":4.0}}",
                1.25f64.sqrt(),
                (5.0f64 / 3.0).sqrt()
            )
        );
    }
}
