//! Figures as a peer benchmark tool computes them (`analyze --definitions NAME`): the
//! peer's metrics by the peer's definitions (its first-token rule, its ITL, its std
//! flavour, the records it leaves out), from the peer's own per-request file, so they can
//! be set beside the peer's summary figure for figure. tracediag's own metrics stand
//! beside them unchanged. One file per peer; each is a few polars queries over the
//! adapter's scan of the file.

pub mod aiperf;
pub mod llmperf;
pub mod pooled;
pub mod vllm;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::plan::Plan;

/// Whose definitions the peer figures follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Definitions {
    /// NVIDIA AIPerf (`profile_export.jsonl`, the per-request scalars CSV): per run.
    Aiperf,
    /// vLLM `benchmark_serving.py` / `vllm bench serve` (`--save-result` JSON).
    Vllm,
    /// Ray LLMPerf (`*_individual_responses.json`).
    Llmperf,
}

impl Definitions {
    pub const ALL: [Definitions; 3] =
        [Definitions::Aiperf, Definitions::Vllm, Definitions::Llmperf];

    /// The name `--definitions` takes.
    pub fn name(self) -> &'static str {
        match self {
            Definitions::Aiperf => "aiperf",
            Definitions::Vllm => "vllm",
            Definitions::Llmperf => "llmperf",
        }
    }

    /// The tool, as its own documents name it.
    pub fn tool(self) -> &'static str {
        match self {
            Definitions::Aiperf => "AIPerf",
            Definitions::Vllm => "vLLM",
            Definitions::Llmperf => "LLMPerf",
        }
    }

    pub fn parse(s: &str) -> Option<Definitions> {
        Definitions::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s))
    }
}

/// A peer's own figures, one block per input file (a peer summarises one run per file):
/// AIPerf's, and vLLM's and LLMPerf's over each run's requests pooled. In JSON,
/// `peer_figures`.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Figures {
    Runs(PeerFigures),
    Pooled(pooled::PeerFigures),
}

/// The peer figures of a run: what the definitions are, then one block per input file (a
/// peer summarises one run per file).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PeerFigures {
    /// `--definitions` as given.
    pub definitions: &'static str,
    pub tool: &'static str,
    /// Which streamed message ends the time to first token.
    pub first_token_rule: &'static str,
    /// How the inter-token latency is defined.
    pub inter_token_latency: &'static str,
    pub percentile_method: &'static str,
    /// Population or sample standard deviation.
    pub std: &'static str,
    /// Which records the metric statistics are over.
    pub records_used: &'static str,
    pub runs: Vec<PeerRun>,
}

/// One input file's figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PeerRun {
    pub path: String,
    /// Which of the peer's file layouts the file is written in.
    pub schema: &'static str,
    /// Every record of the file.
    pub records: u64,
    /// Records the statistics leave out (errors and cancellations, for AIPerf).
    pub left_out: u64,
    /// Per-record metrics, in the peer's order.
    pub metrics: Vec<PeerMetric>,
    /// Run-level figures (counts, totals, throughputs over the benchmark duration).
    pub aggregates: Vec<PeerAggregate>,
}

/// Statistics of one per-record metric, unrounded (the peer's own figures, to be compared
/// digit for digit).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PeerMetric {
    /// The peer's tag (`time_to_first_token`).
    pub tag: &'static str,
    /// The peer's display name (`Time to First Token`): the row name of its CSV.
    pub header: &'static str,
    pub unit: &'static str,
    pub count: u64,
    pub sum: f64,
    pub avg: f64,
    pub std: f64,
    pub min: f64,
    pub max: f64,
    pub p1: f64,
    pub p5: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
}

impl PeerMetric {
    /// The statistics by the peer's key names, in its order.
    pub fn stats(&self) -> [(&'static str, f64); 15] {
        [
            ("avg", self.avg),
            ("min", self.min),
            ("max", self.max),
            ("sum", self.sum),
            ("p1", self.p1),
            ("p5", self.p5),
            ("p10", self.p10),
            ("p25", self.p25),
            ("p50", self.p50),
            ("p75", self.p75),
            ("p90", self.p90),
            ("p95", self.p95),
            ("p99", self.p99),
            ("std", self.std),
            ("count", self.count as f64),
        ]
    }
}

/// One run-level figure.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PeerAggregate {
    pub tag: &'static str,
    pub header: &'static str,
    pub unit: &'static str,
    pub value: f64,
}

/// The peer figures of the plan's inputs by `definitions`; an input the peer did not
/// write is a usage error (its figures would not be the peer's).
pub fn figures(definitions: Definitions, plan: &Plan) -> Result<Figures> {
    let inputs = plan.inputs.as_slice();
    match definitions {
        Definitions::Vllm | Definitions::Llmperf => {
            pooled::figures(definitions, plan).map(Figures::Pooled)
        }
        Definitions::Aiperf => {
            let runs = inputs
                .iter()
                .map(|i| {
                    if aiperf::reads(i.format) {
                        aiperf::run(i)
                    } else {
                        Err(Error::Usage(format!(
                            "--definitions {}: {} reads as {}, not as a file {} writes (`profile_export.jsonl` or its per-request CSV)",
                            definitions.name(),
                            i.path.display(),
                            i.format,
                            definitions.tool()
                        )))
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Figures::Runs(aiperf::figures(runs)))
        }
    }
}
