//! The field catalogue: the single place that lists every canonical field of a gateway
//! request log — its name, kind, origin, unit, accepted source names and meaning.
//!
//! Source adapters map input columns onto these names; the rule compiler types every
//! identifier from here (so the same-origin check knows that `upstream_headers_ms` counts
//! from t1 while `first_response_ms` counts from t0); the README's schema table is
//! generated from it by `tracediag fields`.

use std::fmt;

/// A point on the request timeline (README.md, "The timeline and the metric names"). All
/// gateway timestamps (t0 … t7) share one clock. The events after t7 are the origins and
/// marks of clocks other tools keep: a figure counted from one of them is never subtracted
/// from a t0 or t1 figure (the rule checker refuses it), because nothing in those logs says
/// where that clock starts on the gateway's.
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
    /// A relay's own clock start: new-api's `StartTime`, set after token authentication and
    /// channel selection, before the upstream request (somewhere between t0 and t1).
    R0,
    /// A benchmark client's send (AIPerf, GenAI-Perf, vLLM bench, LLMPerf): before t0, on
    /// the client's clock, with the network to the gateway in between.
    C0,
    /// The first token as the client saw it, by the benchmark tool's own first-token rule.
    C1,
    /// The request's end as the client saw it, by the benchmark tool's own end rule.
    C2,
    /// An inference server's arrival of the request at its engine (vLLM's `arrival_time`,
    /// the start of its OpenTelemetry `llm_request` span): on the server's clock, after the
    /// gateway's t1 and the network to the server.
    E0,
    /// The first output token as the inference server's engine produced it.
    E1,
    /// The request's end in the inference server's engine (its last token).
    E2,
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
            Event::R0 => "r0 (relay start, after auth and channel selection)",
            Event::C0 => "c0 (client send)",
            Event::C1 => "c1 (first token at the client)",
            Event::C2 => "c2 (request end at the client)",
            Event::E0 => "e0 (engine arrival, the inference server's clock)",
            Event::E1 => "e1 (first token in the engine)",
            Event::E2 => "e2 (request end in the engine)",
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
            Event::R0 => "r0",
            Event::C0 => "c0",
            Event::C1 => "c1",
            Event::C2 => "c2",
            Event::E0 => "e0",
            Event::E1 => "e1",
            Event::E2 => "e2",
        }
    }
}

/// A clock events are timed on. Points of different clocks are never combined or ordered
/// against each other: nothing in a log says where one clock starts on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Clock {
    /// The gateway's: t0 … t7 (and its local phases).
    Gateway,
    /// A relay's own: r0.
    Relay,
    /// A benchmark client's: c0 … c2.
    Client,
    /// An inference server's engine: e0 … e2.
    Engine,
}

impl Event {
    /// The clock the event is on.
    pub fn clock(self) -> Clock {
        match self {
            Event::T0
            | Event::T1
            | Event::T2
            | Event::T3
            | Event::T4
            | Event::T5
            | Event::T6
            | Event::T7 => Clock::Gateway,
            Event::R0 => Clock::Relay,
            Event::C0 | Event::C1 | Event::C2 => Clock::Client,
            Event::E0 | Event::E1 | Event::E2 => Clock::Engine,
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
    /// A latency in milliseconds measured elsewhere, not a point on any timeline: an Azure
    /// Monitor window average, a phase an inference server timed on its own clock.
    Duration,
    /// A percentage, 0–100 (utilization).
    Percent,
    /// A fraction or probability, 0–1.
    Ratio,
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
            Kind::Duration => "latency, ms".into(),
            Kind::Percent => "percentage".into(),
            Kind::Ratio => "ratio, 0–1".into(),
            Kind::Rate => "rate, tokens/s".into(),
            Kind::Count => "count".into(),
            Kind::Code => "code".into(),
            Kind::Label => "label".into(),
            Kind::Flag => "flag".into(),
            Kind::Timestamp => "timestamp".into(),
        }
    }

    pub fn is_timing(self) -> bool {
        matches!(
            self,
            Kind::Point { .. } | Kind::Phase | Kind::Duration | Kind::Rate
        )
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
    /// Whether a `<name>_baseline` companion exists (Azure windows only).
    pub baseline: bool,
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
        baseline: false,
    },
    Field {
        name: "distribution_ms",
        kind: Kind::Phase,
        aliases: &[],
        doc: "channel selection and routing policy",
        baseline: false,
    },
    Field {
        name: "body_read_ms",
        kind: Kind::Phase,
        aliases: &[],
        doc: "reading the downstream request body (slow uploads)",
        baseline: false,
    },
    Field {
        name: "upstream_start_ms",
        kind: point(Event::T0, Event::T1),
        aliases: &[],
        doc: "t0 → t1: when the upstream request started; makes the t1 offset exact",
        baseline: false,
    },
    Field {
        name: "upstream_headers_ms",
        kind: point(Event::T1, Event::T2),
        aliases: &[],
        doc: "t1 → t2: upstream response headers, counted from upstream start",
        baseline: false,
    },
    Field {
        name: "first_sse_event_ms",
        kind: point(Event::T0, Event::T3),
        aliases: &[],
        doc: "t0 → t3: first non-empty SSE event (may be metadata, not output)",
        baseline: false,
    },
    Field {
        name: "first_response_ms",
        kind: point(Event::T0, Event::T4),
        aliases: &[],
        doc: "t0 → t4: first effective content or action (text, reasoning summary, tool arguments)",
        baseline: false,
    },
    Field {
        name: "first_text_delta_ms",
        kind: point(Event::T0, Event::T5),
        aliases: &[],
        doc: "t0 → t5: first visible text delta, only if visible text was streamed",
        baseline: false,
    },
    Field {
        name: "upstream_done_ms",
        kind: point(Event::T0, Event::T6),
        aliases: &[],
        doc: "t0 → t6: upstream body completed or closed",
        baseline: false,
    },
    Field {
        name: "total_handler_ms",
        kind: point(Event::T0, Event::T7),
        aliases: &[],
        doc: "t0 → t7: gateway handler finished (end-to-end, gateway view)",
        baseline: false,
    },
    Field {
        name: "visible_output_tps",
        kind: Kind::Rate,
        aliases: &[],
        doc: "logged output tokens ÷ (t6 − t5) seconds; a visible-output diagnostic",
        baseline: false,
    },
    Field {
        name: "relay_first_response_ms",
        kind: point(Event::R0, Event::T3),
        aliases: &[],
        doc: "r0 → t3: new-api's `frt`, the first upstream `data:` line, counted from its relay start (after auth and channel selection), not from t0",
        baseline: false,
    },
    Field {
        name: "relay_total_ms",
        kind: point(Event::R0, Event::T7),
        aliases: &[],
        doc: "r0 → t7: new-api's `use_time`, whole seconds (± 1 s) written in ms, counted from its relay start",
        baseline: false,
    },
    Field {
        name: "client_ttft_ms",
        kind: point(Event::C0, Event::C1),
        aliases: &[],
        doc: "c0 → c1: a benchmark client's time to first token, by its tool's first-token rule (the output names the rule)",
        baseline: false,
    },
    Field {
        name: "client_latency_ms",
        kind: point(Event::C0, Event::C2),
        aliases: &[],
        doc: "c0 → c2: a benchmark client's request latency, send to its tool's request end",
        baseline: false,
    },
    Field {
        name: "engine_ttft_ms",
        kind: point(Event::E0, Event::E1),
        aliases: &[],
        doc: "e0 → e1: an inference server's time to first token (vLLM's `gen_ai.latency.time_to_first_token`, seconds written in ms), counted from the request's arrival at its engine",
        baseline: false,
    },
    Field {
        name: "engine_latency_ms",
        kind: point(Event::E0, Event::E2),
        aliases: &[],
        doc: "e0 → e2: an inference server's end-to-end time (vLLM's `gen_ai.latency.e2e`), arrival at its engine to the last token",
        baseline: false,
    },
    Field {
        name: "engine_queue_ms",
        kind: Kind::Duration,
        aliases: &[],
        doc: "time the request waited in the inference server's queue before its first scheduling (vLLM's `gen_ai.latency.time_in_queue`), timed by the server",
        baseline: false,
    },
    Field {
        name: "engine_prefill_ms",
        kind: Kind::Duration,
        aliases: &[],
        doc: "time in the model's prefill, first scheduling to the first token (vLLM's `gen_ai.latency.time_in_model_prefill`), timed by the server",
        baseline: false,
    },
    Field {
        name: "engine_decode_ms",
        kind: Kind::Duration,
        aliases: &[],
        doc: "time in the model's decode, first token to the last (vLLM's `gen_ai.latency.time_in_model_decode`), timed by the server",
        baseline: false,
    },
    Field {
        name: "span_duration_ms",
        kind: Kind::Duration,
        aliases: &[],
        doc: "an OpenTelemetry span's end − start, on the clock of the process that wrote it: a server span (vLLM's `llm_request`) from its arrival (e0) to the span's close after the last token; a client span from the client's call to its end",
        baseline: false,
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
        baseline: false,
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
        doc: "when the request was received (ISO 8601, or Unix time in s, ms, µs or ns)",
        baseline: false,
    },
    Field {
        name: "model",
        kind: Kind::Label,
        aliases: &["model_name", "model_id"],
        doc: "model id as requested",
        baseline: false,
    },
    Field {
        name: "group",
        kind: Kind::Label,
        aliases: &["user_group", "tenant_group"],
        doc: "group or tier",
        baseline: false,
    },
    Field {
        name: "channel",
        kind: Kind::Label,
        aliases: &["route", "channel_id", "channel_name", "upstream"],
        doc: "channel or route the gateway chose",
        baseline: false,
    },
    Field {
        name: "region",
        kind: Kind::Label,
        aliases: &["zone"],
        doc: "coarse region",
        baseline: false,
    },
    Field {
        name: "status",
        kind: Kind::Code,
        aliases: &["status_code", "http_status", "code"],
        doc: "HTTP status returned",
        baseline: false,
    },
    Field {
        name: "outcome",
        kind: Kind::Label,
        aliases: &["result"],
        doc: "ok, error, cancelled or timeout (derived from status when absent)",
        baseline: false,
    },
    Field {
        name: "is_stream",
        kind: Kind::Flag,
        aliases: &["stream", "streaming"],
        doc: "whether the response was streamed (SSE)",
        baseline: false,
    },
    Field {
        name: "input_tokens",
        kind: Kind::Count,
        aliases: &["prompt_tokens"],
        doc: "input tokens",
        baseline: false,
    },
    Field {
        name: "output_tokens",
        kind: Kind::Count,
        aliases: &["completion_tokens"],
        doc: "output tokens as recorded by the upstream usage",
        baseline: false,
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
        baseline: false,
    },
    Field {
        name: "stream_event_count",
        kind: Kind::Count,
        aliases: &["event_count", "sse_event_count"],
        doc: "SSE events received (never a token count)",
        baseline: false,
    },
    Field {
        name: "text_delta_count",
        kind: Kind::Count,
        aliases: &["delta_count"],
        doc: "visible text deltas received (never a token count)",
        baseline: false,
    },
    Field {
        name: "inflight",
        kind: Kind::Count,
        aliases: &["channel_inflight", "inflight_count"],
        doc: "requests in flight on the channel when this one started",
        baseline: false,
    },
    Field {
        name: "trace_id",
        kind: Kind::Label,
        aliases: &["network_trace_id"],
        doc: "network trace id",
        baseline: false,
    },
    Field {
        name: "user",
        kind: Kind::Label,
        aliases: &[
            "user_id",
            "username",
            "client_id",
            "request_user_id",
            "client",
        ],
        doc: "client or user id; an identifier: written as a salted hash unless --keep-ids",
        baseline: false,
    },
    Field {
        name: "token_name",
        kind: Kind::Label,
        aliases: &["token_id", "key_name", "api_key_name"],
        doc: "name or id of the API token used (never the key itself); an identifier: written as a salted hash unless --keep-ids",
        baseline: false,
    },
    Field {
        name: "client_ip",
        kind: Kind::Label,
        aliases: &["ip", "remote_addr", "client_address"],
        doc: "client address; an identifier: written as a salted hash unless --keep-ids",
        baseline: false,
    },
    Field {
        name: "upstream_first_chunk_ms",
        kind: point(Event::T1, Event::T3),
        aliases: &[],
        doc: "t1 → t3: first response chunk, counted from the upstream call's start (LiteLLM's completionStartTime − startTime), not from t0",
        baseline: false,
    },
    Field {
        name: "upstream_elapsed_ms",
        kind: point(Event::T1, Event::T6),
        aliases: &[],
        doc: "t1 → t6: the upstream call's end, counted from its start (LiteLLM's endTime − startTime), not from t0",
        baseline: false,
    },
    Field {
        name: "gateway_ms",
        kind: Kind::Duration,
        aliases: &[],
        doc: "new-api `request_timing` (PR 6755): gateway entry to the upstream attempt; which mark ends it (relay start or upstream start) the PR does not say",
        baseline: false,
    },
    Field {
        name: "upstream_first_data_ms",
        kind: Kind::Duration,
        aliases: &[],
        doc: "new-api `request_timing`: the span after gateway_ms up to the first upstream data (t3); gateway_ms + this is t0 → t3",
        baseline: false,
    },
    Field {
        name: "first_data_to_client_ms",
        kind: Kind::Duration,
        aliases: &[],
        doc: "new-api `request_timing`: first upstream data to its first write to the client",
        baseline: false,
    },
    Field {
        name: "client_stream_ms",
        kind: Kind::Duration,
        aliases: &[],
        doc: "new-api `request_timing`: first write to the client to the last",
        baseline: false,
    },
    Field {
        name: "finalize_ms",
        kind: Kind::Duration,
        aliases: &[],
        doc: "new-api `request_timing`: the last write to the client to the log record (billing, logging)",
        baseline: false,
    },
];

/// Fields that only a tool's adapter fills (`src/source/<tool>.rs`), each with the tool:
/// figures of that tool's own clock or spans, which a log in the canonical schema (and a
/// warehouse table of it) has no column for. The emitted SQL leaves out the metrics
/// built on them (`RuleSet::adapter_metrics`).
pub static ADAPTER_FIELDS: &[(&str, &str)] = &[
    ("relay_first_response_ms", "new-api"),
    ("relay_total_ms", "new-api"),
    ("client_ttft_ms", "benchmark clients"),
    ("client_latency_ms", "benchmark clients"),
    ("upstream_first_chunk_ms", "LiteLLM"),
    ("upstream_elapsed_ms", "LiteLLM"),
    ("gateway_ms", "new-api"),
    ("upstream_first_data_ms", "new-api"),
    ("first_data_to_client_ms", "new-api"),
    ("client_stream_ms", "new-api"),
    ("finalize_ms", "new-api"),
    ("engine_ttft_ms", "OpenTelemetry spans"),
    ("engine_latency_ms", "OpenTelemetry spans"),
    ("engine_queue_ms", "OpenTelemetry spans"),
    ("engine_prefill_ms", "OpenTelemetry spans"),
    ("engine_decode_ms", "OpenTelemetry spans"),
    ("span_duration_ms", "OpenTelemetry spans"),
];

/// The tool whose adapter alone fills `name` (`ADAPTER_FIELDS`).
pub fn adapter_of(name: &str) -> Option<&'static str> {
    ADAPTER_FIELDS
        .iter()
        .find(|(f, _)| *f == name)
        .map(|(_, tool)| *tool)
}

/// What carries a timing field: the tool whose adapter alone fills it, or, for the
/// canonical schema's own timing fields, a gateway log (`GATEWAY_LOG`); `None` for a field
/// that is no timing (a count, a label).
pub fn carried_by(name: &str) -> Option<&'static str> {
    let f = field(name)?;
    f.kind
        .is_timing()
        .then(|| adapter_of(name).unwrap_or(GATEWAY_LOG))
}

/// How `carried_by` names the canonical schema's timeline (t0 … t7 and the local phases).
pub const GATEWAY_LOG: &str = "a gateway log's t0 … t7";

/// Whether only a tool's adapter fills `name` (`ADAPTER_FIELDS`).
pub fn is_adapter_field(name: &str) -> bool {
    adapter_of(name).is_some()
}

/// The label fields that identify a client or user. `ids::apply` replaces their values
/// with salted hashes right after the projection (unless `--keep-ids`), so raw values
/// never reach the rules, the summaries or any output.
pub const IDENTIFIERS: [&str; 3] = ["user", "token_name", "client_ip"];

/// Whether `name` is one of the [`IDENTIFIERS`].
pub fn is_identifier(name: &str) -> bool {
    IDENTIFIERS.contains(&name)
}

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

/// The field sets a rule table can be written against: a table names its catalogue
/// (`catalogue = "azure"`; gateway when absent), and every name in its expressions is
/// typed from that catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Catalogue {
    /// Per-request gateway logs (`FIELDS`).
    Gateway,
    /// Azure Monitor windows, one row per (deployment, window) (`AZURE_FIELDS`).
    Azure,
}

/// Suffix of the per-window baseline columns of the Azure catalogue: `<field>_baseline`
/// holds the same deployment's earlier windows' median of `<field>`, of the same type.
pub const BASELINE_SUFFIX: &str = "_baseline";

impl Catalogue {
    pub fn parse(name: &str) -> Option<Catalogue> {
        match name {
            "gateway" => Some(Catalogue::Gateway),
            "azure" => Some(Catalogue::Azure),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Catalogue::Gateway => "gateway",
            Catalogue::Azure => "azure",
        }
    }

    pub fn fields(self) -> &'static [Field] {
        match self {
            Catalogue::Gateway => FIELDS,
            Catalogue::Azure => AZURE_FIELDS,
        }
    }

    /// A field by name; in the Azure catalogue also `<numeric field>_baseline`.
    pub fn field(self, name: &str) -> Option<Field> {
        if let Some(f) = self.fields().iter().find(|f| f.name == name) {
            return Some(*f);
        }
        if self == Catalogue::Azure {
            let stem = name.strip_suffix(BASELINE_SUFFIX)?;
            let f = self
                .fields()
                .iter()
                .find(|f| f.name == stem && f.baseline)?;
            return Some(Field {
                doc: "the same deployment's earlier windows' median",
                ..*f
            });
        }
        None
    }

    /// Every name an expression may use from this catalogue (for "did you mean").
    pub fn names(self) -> Vec<String> {
        let mut v: Vec<String> = self.fields().iter().map(|f| f.name.to_string()).collect();
        v.extend(
            self.fields()
                .iter()
                .filter(|f| f.baseline && self == Catalogue::Azure)
                .map(|f| format!("{}{BASELINE_SUFFIX}", f.name)),
        );
        v
    }
}

const fn azure(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    Field {
        name,
        kind,
        aliases: &[],
        doc,
        baseline: !matches!(kind, Kind::Label | Kind::Timestamp),
    }
}

/// One row per (deployment, window) built from Azure Monitor metrics; each figure names
/// its aggregation. Built by `source::azure_windows`.
pub static AZURE_FIELDS: &[Field] = &[
    azure("resource", Kind::Label, "Azure resource id"),
    azure("deployment", Kind::Label, "model deployment name"),
    azure("window_start", Kind::Timestamp, "start of the window (UTC)"),
    azure(
        "ttlt_avg_ms",
        Kind::Duration,
        "time to last byte, average (AzureOpenAITTLTInMS / TimeToLastByte)",
    ),
    azure(
        "time_to_response_avg_ms",
        Kind::Duration,
        "time to first response chunk, average (AzureOpenAITimeToResponse / TimeToResponse)",
    ),
    azure(
        "tbt_avg_ms",
        Kind::Duration,
        "time between tokens, average (AzureOpenAINormalizedTBTInMS / NormalizedTimeBetweenTokens)",
    ),
    azure(
        "normalized_ttft_avg_ms",
        Kind::Duration,
        "first-byte latency ÷ prompt tokens, average (AzureOpenAINormalizedTTFTInMS / NormalizedTimeToFirstToken); only for comparing prompt sizes",
    ),
    azure("requests_total", Kind::Count, "requests, total (AzureOpenAIRequests / ModelRequests)"),
    azure(
        "requests_429_total",
        Kind::Count,
        "requests answered 429, total (null when the export has no StatusCode split)",
    ),
    azure(
        "generated_tokens_total",
        Kind::Count,
        "generated (output) tokens, total (GeneratedTokens / OutputTokens)",
    ),
    azure(
        "prompt_tokens_total",
        Kind::Count,
        "processed prompt (input) tokens, total (ProcessedPromptTokens / InputTokens)",
    ),
    azure(
        "tokens_per_request",
        Kind::Count,
        "(generated + prompt tokens) ÷ requests",
    ),
    azure(
        "generated_tokens_per_request",
        Kind::Count,
        "generated tokens ÷ requests",
    ),
    azure(
        "ptu_utilization_avg_pct",
        Kind::Percent,
        "provisioned-managed utilization, average (AzureOpenAIProvisionedManagedUtilizationV2 / ProvisionedUtilization)",
    ),
    azure(
        "ptu_utilization_max_pct",
        Kind::Percent,
        "provisioned-managed utilization, maximum",
    ),
    azure(
        "ttlt_predicted_ms",
        Kind::Duration,
        "the latency formula: time to response + TBT × generated tokens per request",
    ),
    azure("ttlt_residual_ms", Kind::Duration, "TTLT − the formula's prediction"),
    Field {
        name: "ttlt_residual_p",
        kind: Kind::Ratio,
        aliases: &[],
        doc: "two-sided p-value of the window's residual against the deployment's baseline residuals (Student's t)",
        baseline: false,
    },
];

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
    fn adapter_fields_are_gateway_fields() {
        for (name, _) in ADAPTER_FIELDS {
            assert!(field(name).is_some(), "{name} is not a field");
        }
    }

    #[test]
    fn identifiers_are_gateway_labels() {
        for name in IDENTIFIERS {
            let f = field(name).unwrap_or_else(|| panic!("{name} is not a field"));
            assert_eq!(f.kind, Kind::Label, "{name}");
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
