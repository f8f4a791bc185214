//! `--definitions PEER`: a benchmark tool's own figures, computed from its per-request
//! export as that tool defines them (its first-token rule, its ITL, its std flavour, which
//! requests it leaves out), so they can be set beside the tool's own summary. tracediag's
//! figures are not changed by it: these are reported in their own block
//! ([`PeerFigures`], `peer` in `analyze --format json`).
//!
//! Each peer is one variant of [`Definitions`] and one module here, which reads the
//! plan (and the side frames its adapter provides, e.g. pooled chunk gaps) with polars
//! aggregates. A new peer is a variant, its `name`, its input format and one arm in
//! [`figures`].

pub mod llmperf;
pub mod vllm;

use polars::prelude::*;
use serde::ser::SerializeMap;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::source::InputFormat;

/// The peer whose definitions the figures follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Definitions {
    /// vLLM `benchmark_serving.py` / `vllm bench serve` (`--save-result` JSON).
    Vllm,
    /// Ray LLMPerf (`*_individual_responses.json`).
    Llmperf,
}

impl Definitions {
    pub const ALL: [Definitions; 2] = [Definitions::Vllm, Definitions::Llmperf];

    /// The name on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Definitions::Vllm => "vllm",
            Definitions::Llmperf => "llmperf",
        }
    }

    pub fn parse(s: &str) -> Option<Definitions> {
        Definitions::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s))
    }

    /// The input format the peer's figures are computed from.
    fn format(self) -> InputFormat {
        match self {
            Definitions::Vllm => InputFormat::Vllm,
            Definitions::Llmperf => InputFormat::Llmperf,
        }
    }
}

/// A peer's own figures over the requests of a run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PeerFigures {
    /// `vllm`, `llmperf`.
    pub definitions: &'static str,
    /// The tool, and the code its definitions were read from.
    pub tool: &'static str,
    pub first_token_rule: &'static str,
    pub std: &'static str,
    pub percentile_method: &'static str,
    /// Requests in the run (after `--since`/`--until`).
    pub requests: u64,
    /// Of them, the requests the peer's statistics are over.
    pub counted: u64,
    /// Which requests the peer leaves out of its statistics.
    pub left_out: &'static str,
    /// Run-level counts, for a peer that reports them (LLMPerf).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunCounts>,
    /// Requests per error code, by code (LLMPerf's `error_code_frequency`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub error_codes: Vec<ErrorCode>,
    pub metrics: Vec<PeerMetric>,
    /// Figures of the peer's own summary these inputs cannot give, each with why.
    pub not_computed: Vec<String>,
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
    let wanted = definitions.format();
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
        Definitions::Vllm => vllm::figures(plan),
        Definitions::Llmperf => llmperf::figures(plan),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Definitions::ALL {
            assert_eq!(Definitions::parse(d.name()), Some(d));
        }
        assert_eq!(Definitions::parse("VLLM"), Some(Definitions::Vllm));
        assert_eq!(Definitions::parse("genai-perf"), None);
    }

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
