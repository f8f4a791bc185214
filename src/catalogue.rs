//! The field catalogue: the single place that lists every canonical field of a gateway
//! request log — its name, kind, origin, unit, accepted source names and meaning.
//!
//! Source adapters map input columns onto these names; the rule compiler types every
//! identifier from here (so the same-origin check knows that `upstream_headers_ms` counts
//! from t1 while `first_response_ms` counts from t0); the README's schema table is
//! generated from it by `tracediag fields`.

use std::fmt;

/// A point on the request timeline (SPEC §1). All gateway timestamps share one clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Event {
    T0,
    T1,
    T2,
    T3,
    T4,
    T5,
    T6,
    T7,
}

impl Event {
    pub fn describe(self) -> &'static str {
        match self {
            Event::T0 => "t0 (gateway receive)",
            Event::T1 => "t1 (upstream start)",
            Event::T2 => "t2 (upstream headers)",
            Event::T3 => "t3 (first SSE event)",
            Event::T4 => "t4 (first effective output)",
            Event::T5 => "t5 (first visible text)",
            Event::T6 => "t6 (upstream done)",
            Event::T7 => "t7 (handler done)",
        }
    }

    pub fn short(self) -> &'static str {
        match self {
            Event::T0 => "t0",
            Event::T1 => "t1",
            Event::T2 => "t2",
            Event::T3 => "t3",
            Event::T4 => "t4",
            Event::T5 => "t5",
            Event::T6 => "t6",
            Event::T7 => "t7",
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// What a field measures, which decides how it may be combined with others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Milliseconds from `origin` to the event `marks`.
    Point { origin: Event, marks: Event },
    /// Duration of a local gateway phase, in milliseconds (no origin: a span on its own).
    Phase,
    /// Tokens per second.
    Rate,
    /// A count (tokens, events, requests in flight).
    Count,
    /// A numeric code compared with numbers but never added (HTTP status).
    Code,
    /// A text label (model, channel, outcome).
    Label,
    /// A true/false flag.
    Flag,
    /// A wall-clock timestamp (UTC).
    Timestamp,
}

impl Kind {
    pub fn describe(self) -> String {
        match self {
            Kind::Point { origin, marks } => {
                format!(
                    "time point {}→{}, ms since {}",
                    origin.short(),
                    marks.short(),
                    origin
                )
            }
            Kind::Phase => "local phase duration, ms".into(),
            Kind::Rate => "rate, tokens/s".into(),
            Kind::Count => "count".into(),
            Kind::Code => "code".into(),
            Kind::Label => "label".into(),
            Kind::Flag => "flag".into(),
            Kind::Timestamp => "timestamp".into(),
        }
    }

    pub fn is_timing(self) -> bool {
        matches!(self, Kind::Point { .. } | Kind::Phase | Kind::Rate)
    }
}

/// One canonical field.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    /// Other names accepted in input files (flat columns). Timing fields are also found
    /// as `timing.<name>`, `other.timing.<name>` and nested under `other.timing`.
    pub aliases: &'static [&'static str],
    pub doc: &'static str,
}

const fn point(origin: Event, marks: Event) -> Kind {
    Kind::Point { origin, marks }
}

/// Every canonical field, in timeline order first, then metadata.
pub static FIELDS: &[Field] = &[
    Field {
        name: "auth_ms",
        kind: Kind::Phase,
        aliases: &[],
        doc: "token and user authentication",
    },
    Field {
        name: "distribution_ms",
        kind: Kind::Phase,
        aliases: &[],
        doc: "channel selection and routing policy",
    },
    Field {
        name: "body_read_ms",
        kind: Kind::Phase,
        aliases: &[],
        doc: "reading the downstream request body (slow uploads)",
    },
    Field {
        name: "upstream_start_ms",
        kind: point(Event::T0, Event::T1),
        aliases: &[],
        doc: "t0 → t1: when the upstream request started; makes the t1 offset exact",
    },
    Field {
        name: "upstream_headers_ms",
        kind: point(Event::T1, Event::T2),
        aliases: &[],
        doc: "t1 → t2: upstream response headers, counted from upstream start",
    },
    Field {
        name: "first_sse_event_ms",
        kind: point(Event::T0, Event::T3),
        aliases: &[],
        doc: "t0 → t3: first non-empty SSE event (may be metadata, not output)",
    },
    Field {
        name: "first_response_ms",
        kind: point(Event::T0, Event::T4),
        aliases: &[],
        doc: "t0 → t4: first effective content or action (text, reasoning summary, tool arguments)",
    },
    Field {
        name: "first_text_delta_ms",
        kind: point(Event::T0, Event::T5),
        aliases: &[],
        doc: "t0 → t5: first visible text delta, only if visible text was streamed",
    },
    Field {
        name: "upstream_done_ms",
        kind: point(Event::T0, Event::T6),
        aliases: &[],
        doc: "t0 → t6: upstream body completed or closed",
    },
    Field {
        name: "total_handler_ms",
        kind: point(Event::T0, Event::T7),
        aliases: &[],
        doc: "t0 → t7: gateway handler finished (end-to-end, gateway view)",
    },
    Field {
        name: "visible_output_tps",
        kind: Kind::Rate,
        aliases: &[],
        doc: "logged output tokens ÷ (t6 − t5) seconds; a visible-output diagnostic",
    },
    Field {
        name: "request_id",
        kind: Kind::Label,
        aliases: &[
            "id",
            "requestid",
            "request-id",
            "x_request_id",
            "x-request-id",
        ],
        doc: "request identifier",
    },
    Field {
        name: "timestamp",
        kind: Kind::Timestamp,
        aliases: &[
            "ts",
            "time",
            "created_at",
            "start_time",
            "received_at",
            "@timestamp",
        ],
        doc: "when the request was received (ISO 8601, or Unix seconds or milliseconds)",
    },
    Field {
        name: "model",
        kind: Kind::Label,
        aliases: &["model_name", "model_id"],
        doc: "model id as requested",
    },
    Field {
        name: "group",
        kind: Kind::Label,
        aliases: &["user_group", "tenant_group"],
        doc: "group or tier",
    },
    Field {
        name: "channel",
        kind: Kind::Label,
        aliases: &["route", "channel_id", "channel_name", "upstream"],
        doc: "channel or route the gateway chose",
    },
    Field {
        name: "region",
        kind: Kind::Label,
        aliases: &["zone"],
        doc: "coarse region",
    },
    Field {
        name: "status",
        kind: Kind::Code,
        aliases: &["status_code", "http_status", "code"],
        doc: "HTTP status returned",
    },
    Field {
        name: "outcome",
        kind: Kind::Label,
        aliases: &["result"],
        doc: "ok, error, cancelled or timeout (derived from status when absent)",
    },
    Field {
        name: "is_stream",
        kind: Kind::Flag,
        aliases: &["stream", "streaming"],
        doc: "whether the response was streamed (SSE)",
    },
    Field {
        name: "input_tokens",
        kind: Kind::Count,
        aliases: &["prompt_tokens"],
        doc: "input tokens",
    },
    Field {
        name: "output_tokens",
        kind: Kind::Count,
        aliases: &["completion_tokens"],
        doc: "output tokens as recorded by the upstream usage",
    },
    Field {
        name: "cached_tokens",
        kind: Kind::Count,
        aliases: &[
            "cache_tokens",
            "cached_input_tokens",
            "cache_read_input_tokens",
        ],
        doc: "input tokens served from the prompt cache",
    },
    Field {
        name: "stream_event_count",
        kind: Kind::Count,
        aliases: &["event_count", "sse_event_count"],
        doc: "SSE events received (never a token count)",
    },
    Field {
        name: "text_delta_count",
        kind: Kind::Count,
        aliases: &["delta_count"],
        doc: "visible text deltas received (never a token count)",
    },
    Field {
        name: "inflight",
        kind: Kind::Count,
        aliases: &["channel_inflight", "inflight_count"],
        doc: "requests in flight on the channel when this one started",
    },
    Field {
        name: "trace_id",
        kind: Kind::Label,
        aliases: &["network_trace_id"],
        doc: "network trace id",
    },
];

/// Column names that hold content or secrets. They are never projected into a frame, so
/// they can never reach an output; an alias can never point at one.
pub static CONTENT_COLUMNS: &[&str] = &[
    "prompt",
    "messages",
    "response",
    "content",
    "completion",
    "api_key",
    "authorization",
    "key",
    "input",
    "output",
    "text",
    "body",
    "headers",
];

pub fn field(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// Fields that carry a point on the t0-origin timeline, in timeline order (t3 … t7):
/// the order the data-quality check expects them to be in.
pub fn t0_points_in_order() -> Vec<&'static Field> {
    let mut v: Vec<&Field> = FIELDS
        .iter()
        .filter(
            |f| matches!(f.kind, Kind::Point { origin: Event::T0, marks } if marks >= Event::T3),
        )
        .collect();
    v.sort_by_key(|f| match f.kind {
        Kind::Point { marks, .. } => marks,
        _ => Event::T0,
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique_and_never_content() {
        let mut seen = std::collections::BTreeSet::new();
        for f in FIELDS {
            assert!(seen.insert(f.name), "duplicate name {}", f.name);
            for a in f.aliases {
                assert!(seen.insert(a), "alias {a} used twice");
                assert!(
                    !CONTENT_COLUMNS.contains(a),
                    "alias {a} is a content column"
                );
            }
        }
    }

    #[test]
    fn t0_points_cover_t3_to_t7() {
        let names: Vec<_> = t0_points_in_order().iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            [
                "first_sse_event_ms",
                "first_response_ms",
                "first_text_delta_ms",
                "upstream_done_ms",
                "total_handler_ms"
            ]
        );
    }
}
