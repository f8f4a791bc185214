//! The renderers of `tracediag sse` on bodies without receive times: a block per stream
//! for the terminal (the counts per kind in a table) and the same facts as JSON. Kept
//! beside the command's other files; the table layout is the shared one of `report`.

use serde::Serialize;

use super::classify::{Kind, ServerTiming};
use super::timeline::Stream;
use crate::report::{fit, render, table, Width};

fn or_dash<T: ToString>(x: Option<T>) -> String {
    x.map(|v| v.to_string()).unwrap_or_else(|| "—".into())
}

fn record(n: Option<usize>) -> String {
    n.map(|n| format!("record {n}"))
        .unwrap_or_else(|| "none".into())
}

pub fn terminal(streams: &[Stream], width: Width) -> String {
    let mut out = String::new();
    for (i, s) in streams.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let comments = s.records - s.events;
        out.push_str(&format!(
            "{}\n  api           {}\n  model         {}\n  request id    {}\n  outcome       {}{}\n  records       {} ({} events, {} comments)\n",
            s.file,
            s.api.name(),
            or_dash(s.model.as_deref()),
            or_dash(s.request_id.as_deref()),
            s.outcome.name(),
            if s.complete { "" } else { " (incomplete: no terminal event)" },
            s.records,
            s.events,
            comments,
        ));
        out.push_str(&format!(
            "  first output  {} (effective output or visible text)\n  first text    {}\n  usage         input {} tokens, output {} tokens (from the stream's usage)\n",
            record(s.first_effective_output),
            record(s.first_visible_text),
            or_dash(s.input_tokens),
            or_dash(s.output_tokens),
        ));
        if let Some(t) = &s.server_timing {
            out.push_str(&format!(
                "  provider      {} (`{}`: the provider's own timings, on its clock; not on this stream's timeline)\n",
                server_timing(t),
                t.source
            ));
        }
        let mut t = table(&["kind", "records"], [1]);
        for k in Kind::ALL {
            t.add_row(vec![k.name().to_string(), s.kinds.get(k).to_string()]);
        }
        out.push_str(&render(t, width));
        out.push('\n');
    }
    fit(&out, width)
}

/// The provider's timings in ms (it writes seconds), those it gave.
fn server_timing(t: &ServerTiming) -> String {
    let parts: Vec<String> = [
        ("queue", t.queue_time_s),
        ("prompt", t.prompt_time_s),
        ("completion", t.completion_time_s),
        ("total", t.total_time_s),
    ]
    .into_iter()
    .filter_map(|(name, s)| s.map(|s| format!("{name} {:.3} ms", s * 1000.0)))
    .collect();
    parts.join(", ")
}

#[derive(Serialize)]
struct Doc<'a> {
    tool: &'static str,
    /// How records are numbered, so the JSON stands alone.
    numbering: &'static str,
    streams: &'a [Stream],
}

pub fn json(streams: &[Stream]) -> String {
    let doc = Doc {
        tool: concat!("tracediag ", env!("CARGO_PKG_VERSION")),
        numbering: "comments and events in file order, numbered from 1; first_effective_output is the first effective output or visible text",
        streams,
    };
    crate::report::json::render(&doc)
}
