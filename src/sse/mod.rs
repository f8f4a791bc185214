//! Recorded SSE streams (`tracediag sse`): a response body as an API sent it, optionally
//! with the time each line was received, turned into a classified event list and, when
//! timed, a gateway row (t3..t6, usage) that `analyze` reads.
//!
//! `capture` takes the receive times off the lines; `wire` parses the SSE fields into
//! comments and events (the WHATWG rules); `classify` tells the API and what each event
//! is; `timeline` builds the stream's counts, usage, outcome and points; `rows` writes
//! the gateway rows; `report` renders the untimed summary. Content (text, arguments,
//! reasoning) is read only to tell whether a delta is empty and never leaves this module.

pub mod capture;
pub mod classify;
pub mod eventstream;
pub mod report;
pub mod rows;
pub mod timeline;
pub mod wire;

pub use classify::{Api, Kind};
pub use timeline::{read, Counts, Outcome, Stream, Timing};
