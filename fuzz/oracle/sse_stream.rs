//! The `sse_stream` oracle, shared by the fuzz target and `tests/fuzz_regressions.rs`: the
//! bytes as a recorded stream through `sse::timeline::read`. It may refuse the file (an
//! error naming it), never panic; a stream it reads renders in both formats, and a timed
//! one becomes gateway rows.

use std::io::Write;

use tracediag::report::Width;
use tracediag::sse::{report, rows, timeline};

/// Panics when `data`, read as a recorded SSE stream, panics or does not render.
pub fn check(data: &[u8]) {
    let mut file = tempfile::Builder::new()
        .suffix(".sse")
        .tempfile()
        .expect("temp file");
    file.write_all(data).expect("write temp file");
    file.flush().expect("flush temp file");
    let Ok(stream) = timeline::read(file.path()) else {
        return;
    };
    let streams = [stream];
    let _ = report::terminal(&streams, Width::Fixed);
    let _ = report::json(&streams);
    if streams[0].timing.is_some() {
        let mut df = rows::frame(&streams).expect("a timed stream makes rows");
        rows::json_lines(&mut df).expect("its rows write");
    }
}
