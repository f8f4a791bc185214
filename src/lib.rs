//! tracediag: offline diagnosis of LLM API latency.
//!
//! The pipeline runs one way: `source` (adapters → canonical frame) → `ids` (client
//! identifiers replaced with salted hashes) → `ruleset`
//! (derived metrics and the ordered rule table, compiled to polars expressions) →
//! `quality` (data-quality flags), assembled lazily by `plan`; `analyze` and the other
//! commands ask the plan for aggregates (`stats`) → `report` (render) and `output`
//! (per-request file). The field catalogue in `catalogue` is the one list
//! of fields, kinds and origins they all share. Azure Monitor exports take a parallel path
//! (`monitor`): windows instead of requests, the same rule language and compiler.

pub mod analyze;
pub mod catalogue;
pub mod compare;
pub mod error;
pub mod explain;
pub mod ids;
pub mod kernels;
pub mod monitor;
pub mod output;
pub mod peer;
pub mod plan;
pub mod quality;
pub mod report;
pub mod ruleset;
pub mod source;
pub mod sql_result;
pub mod sse;
pub mod stats;
pub mod summary;
pub mod throughput;
pub mod weekly;
pub mod window;
pub mod words;

pub use error::{Error, Result};
