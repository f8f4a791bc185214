//! The timeline builder: one recorded stream read whole — its API, every record
//! classified, the counts per kind, where output and text begin, the usage, the outcome —
//! and, for a timed capture, t3..t6 counted from the send time.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::capture::{self, Line};
use super::classify::{self, Api, Classified, Kind, Payload, ServerTiming};
use super::wire::{self, Body, Record};
use crate::error::{Error, Result};

/// Records of each kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub envelope: usize,
    pub heartbeat: usize,
    pub effective_output: usize,
    pub visible_text: usize,
    pub error: usize,
}

impl Counts {
    pub fn get(&self, k: Kind) -> usize {
        match k {
            Kind::Envelope => self.envelope,
            Kind::Heartbeat => self.heartbeat,
            Kind::EffectiveOutput => self.effective_output,
            Kind::VisibleText => self.visible_text,
            Kind::Error => self.error,
        }
    }

    fn add(&mut self, k: Kind) {
        *match k {
            Kind::Envelope => &mut self.envelope,
            Kind::Heartbeat => &mut self.heartbeat,
            Kind::EffectiveOutput => &mut self.effective_output,
            Kind::VisibleText => &mut self.visible_text,
            Kind::Error => &mut self.error,
        } += 1;
    }
}

/// How the stream ended, in the gateway log's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The API's terminal event arrived and no error did.
    Ok,
    /// An error event, or an error object after HTTP 200.
    Error,
    /// No terminal event: the body stops short (the client or a proxy closed it).
    Cancelled,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// The timeline points of a timed capture, in milliseconds since the send time (which
/// stands for t0: the capture has no gateway, so the client's send is the origin).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// The send time, Unix nanoseconds.
    pub sent_ns: i64,
    /// t3: the first event that is not a heartbeat.
    pub first_sse_event_ms: Option<f64>,
    /// t4: the first effective output or visible text.
    pub first_response_ms: Option<f64>,
    /// t5: the first visible text (none when the stream had no text).
    pub first_text_delta_ms: Option<f64>,
    /// t6: the last line received (the body's end).
    pub upstream_done_ms: Option<f64>,
}

/// One recorded stream, classified. Never holds content: counts, positions, usage, the
/// model and the response id only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stream {
    pub file: String,
    pub api: Api,
    pub outcome: Outcome,
    /// Whether the API's terminal event arrived.
    pub complete: bool,
    /// Comments and events, in file order (the `: sent` line of a capture is not one).
    pub records: usize,
    /// Dispatched events (records less comments): `stream_event_count`.
    pub events: usize,
    pub kinds: Counts,
    /// The 1-based record number of the first effective output or visible text (t4's
    /// event).
    pub first_effective_output: Option<usize>,
    /// The 1-based record number of the first visible text (t5's event).
    pub first_visible_text: Option<usize>,
    /// From the stream's usage (the last figure a stream carries: usage is cumulative
    /// where it repeats); never a count of events.
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// The provider's own timings of the request (Groq's `x_groq.usage`), the last a
    /// stream carries: on its clock, never a point of this stream's timeline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_timing: Option<ServerTiming>,
    pub model: Option<String>,
    pub request_id: Option<String>,
    /// What a reader should know: a missing terminal event, a cut-off last event.
    pub notes: Vec<String>,
    #[serde(skip)]
    pub timing: Option<Timing>,
}

/// Read and classify the stream in `path`.
pub fn read(path: &Path) -> Result<Stream> {
    let bytes = std::fs::read(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    // Told before the UTF-8 check: a frame's bytes may happen to be valid UTF-8.
    if super::eventstream::looks_like(&bytes) {
        return Err(Error::input(
            path,
            format!("not an SSE stream: {}", super::eventstream::REFUSAL),
        ));
    }
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        Err(e) => {
            return Err(Error::input(
                path,
                format!(
                    "not an SSE stream: it is not UTF-8 text (byte {}); it looks like {}",
                    e.valid_up_to(),
                    binary_kind(&bytes)
                ),
            ))
        }
    };
    build(path, text)
}

/// What a binary file looks like, by its magic bytes.
fn binary_kind(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"PAR1") {
        "Parquet"
    } else if bytes.starts_with(&[0x1f, 0x8b]) {
        "gzip-compressed data (decompress it first)"
    } else {
        "binary data"
    }
}

/// What a text that is not SSE looks like (never quoting it).
fn text_kind(lines: &[Line<'_>]) -> String {
    let first = lines.iter().map(|l| l.text.trim()).find(|t| !t.is_empty());
    match first {
        None => "an empty file".into(),
        Some(t) if t.starts_with('{') => "JSON (an object or JSON lines)".into(),
        Some(t) if t.starts_with('[') => "a JSON array".into(),
        Some(t) if t.starts_with(':') => "SSE comments only, with no event".into(),
        Some(t) if t.contains(',') || t.contains('\t') => {
            "CSV or other delimited text (its first line is not an SSE field)".into()
        }
        Some(_) => {
            "text whose first line is not an SSE field (`data:`, `event:`, `id:`, `retry:`)".into()
        }
    }
}

/// An event's payload as read: `[DONE]` (padding around it allowed), a JSON object, or
/// unreadable.
enum Read {
    Done,
    Json(Value),
    Unreadable,
}

fn read_payload(data: &str) -> Read {
    if data.trim() == "[DONE]" {
        return Read::Done;
    }
    match serde_json::from_str::<Value>(data) {
        Ok(v) if v.is_object() => Read::Json(v),
        _ => Read::Unreadable,
    }
}

/// How many distinct event names a refusal lists, and how much of each.
const NAMES_SHOWN: usize = 10;
const NAME_CHARS: usize = 40;

fn build(path: &Path, text: &str) -> Result<Stream> {
    let lines = capture::lines(text)
        .map_err(|e| Error::input(path, format!("line {}: {}", e.line, e.message)))?;
    if !wire::looks_like_sse(&lines.lines) {
        return Err(Error::input(
            path,
            format!(
                "not an SSE stream: it looks like {}",
                text_kind(&lines.lines)
            ),
        ));
    }
    let mut notes = vec![];
    let mut sent: Option<(usize, i64)> = None;
    // Records with their payloads read; the `: sent` line taken out.
    let mut kept: Vec<(Record, Option<Read>)> = vec![];
    for r in wire::parse(&lines.lines) {
        match &r.body {
            Body::Comment(c) => match capture::sent_ns(c) {
                Some(Some(ns)) => {
                    if sent.is_some() {
                        return Err(Error::input(
                            path,
                            format!("line {}: a second `: sent` line (one request per file)", r.line),
                        ));
                    }
                    sent = Some((r.line, ns));
                }
                Some(None) => {
                    return Err(Error::input(
                        path,
                        format!(
                            "line {}: a `: sent` line without a Unix time (expected `: sent <unix seconds>`, e.g. `: sent 1764633600.25`)",
                            r.line
                        ),
                    ))
                }
                None => kept.push((r, None)),
            },
            Body::Event(e) => {
                let p = read_payload(&e.data);
                if matches!(p, Read::Unreadable) {
                    if e.at_eof {
                        // A body cut mid-event: what arrived of it is not an event.
                        notes.push(format!(
                            "the last event (line {}) is cut off mid-payload: not counted",
                            r.line
                        ));
                        continue;
                    }
                    return Err(Error::input(
                        path,
                        format!(
                            "line {}: an event's data is not a JSON object or `[DONE]`",
                            r.line
                        ),
                    ));
                }
                kept.push((r, Some(p)));
            }
        }
    }
    let name_of = |r: &Record| match &r.body {
        Body::Event(e) => e.name.clone(),
        Body::Comment(_) => None,
    };
    let api =
        kept.iter()
            .find_map(|(r, p)| match p {
                Some(Read::Json(v)) => classify::detect(name_of(r).as_deref(), v),
                _ => None,
            })
            .ok_or_else(|| {
                let mut names: Vec<String> = kept.iter().filter_map(|(r, _)| name_of(r)).collect();
                names.sort();
                names.dedup();
                // Names only, and a few of them, cut short: a file of anything could name
                // its events anything.
                let more = names.len().saturating_sub(NAMES_SHOWN);
                names.truncate(NAMES_SHOWN);
                let mut names: Vec<String> = names
                    .iter()
                    .map(|n| {
                        let mut s: String = n
                            .chars()
                            .take(NAME_CHARS)
                            .flat_map(char::escape_debug)
                            .collect();
                        if n.chars().count() > NAME_CHARS {
                            s.push('…');
                        }
                        s
                    })
                    .collect();
                if more > 0 {
                    names.push(format!("… ({more} more)"));
                }
                let events = kept.iter().filter(|(_, p)| p.is_some()).count();
                Error::input(
                    path,
                    format!(
                    "an SSE stream, but none of its {events} events is one of {} (event names: {})",
                    Api::all_names(),
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ),
                )
            })?;

    let mut kinds = Counts::default();
    let mut first_effective_output = None;
    let mut first_visible_text = None;
    let (mut input_tokens, mut output_tokens) = (None, None);
    let mut server_timing = None;
    let (mut model, mut request_id, mut sse_id) = (None, None, None);
    let mut complete = false;
    let mut events = 0;
    // Receive times of t3, t4, t5.
    let (mut t3, mut t4, mut t5) = (None, None, None);
    let classified: Vec<(Record, Classified)> = kept
        .into_iter()
        .map(|(r, p)| {
            let c = match (&r.body, p) {
                (Body::Event(e), Some(Read::Done)) => {
                    classify::classify(api, e.name.as_deref(), Payload::Done)
                }
                (Body::Event(e), Some(Read::Json(v))) => {
                    classify::classify(api, e.name.as_deref(), Payload::Json(&v))
                }
                _ => Classified {
                    kind: Some(Kind::Heartbeat),
                    ..Default::default()
                },
            };
            (r, c)
        })
        .collect();
    for (i, (r, c)) in classified.iter().enumerate() {
        let number = i + 1;
        let kind = c.kind.unwrap_or(Kind::Envelope);
        kinds.add(kind);
        if let Body::Event(e) = &r.body {
            events += 1;
            if e.id.is_some() {
                sse_id.clone_from(&e.id);
            }
            if kind != Kind::Heartbeat && t3.is_none() {
                t3 = Some(r.received_ns);
            }
        }
        if matches!(kind, Kind::EffectiveOutput | Kind::VisibleText)
            && first_effective_output.is_none()
        {
            first_effective_output = Some(number);
            t4 = Some(r.received_ns);
        }
        if kind == Kind::VisibleText && first_visible_text.is_none() {
            first_visible_text = Some(number);
            t5 = Some(r.received_ns);
        }
        input_tokens = c.usage.input_tokens.or(input_tokens);
        output_tokens = c.usage.output_tokens.or(output_tokens);
        server_timing = c.server.or(server_timing);
        if model.is_none() {
            model.clone_from(&c.model);
        }
        if request_id.is_none() {
            request_id.clone_from(&c.id);
        }
        complete |= c.terminal;
    }
    let outcome = if kinds.error > 0 {
        Outcome::Error
    } else if complete {
        Outcome::Ok
    } else {
        Outcome::Cancelled
    };
    if !complete {
        notes.push(format!(
            "no terminal event (expected {}): the stream is incomplete, outcome {}",
            api.terminal(),
            outcome.name()
        ));
    }

    let timing = if lines.timed {
        let Some((_, sent_ns)) = sent else {
            return Err(Error::input(
                path,
                "has receive times but no `: sent <unix seconds>` line: the send time (t0) is unknown, so t3..t6 cannot be counted",
            ));
        };
        check_times(path, &lines.lines, sent_ns)?;
        if let Some(t) = &server_timing {
            notes.push(format!(
                "the provider's own timings (`{}`) are not in the row: they are on its clock, not counted from the send time",
                t.source
            ));
        }
        let ms = |t: Option<Option<i64>>| t.flatten().map(|ns| (ns - sent_ns) as f64 / 1e6);
        Some(Timing {
            sent_ns,
            first_sse_event_ms: ms(t3),
            first_response_ms: ms(t4),
            first_text_delta_ms: ms(t5),
            upstream_done_ms: ms(Some(lines.lines.last().and_then(|l| l.received_ns))),
        })
    } else {
        if let Some((line, _)) = sent {
            notes.push(format!(
                "a `: sent` time (line {line}) but no receive times: no timeline (see `tracediag sse --help` for the capture format)"
            ));
        }
        None
    };
    Ok(Stream {
        file: path.display().to_string(),
        api,
        outcome,
        complete,
        records: classified.len(),
        events,
        kinds,
        first_effective_output,
        first_visible_text,
        input_tokens,
        output_tokens,
        server_timing,
        model,
        request_id: request_id.or(sse_id),
        notes,
        timing,
    })
}

/// Receive times never run backwards and never come before the send time: either would
/// be a capture from two clocks, whose differences mean nothing.
fn check_times(path: &Path, lines: &[Line<'_>], sent_ns: i64) -> Result<()> {
    let mut last: Option<i64> = None;
    for l in lines {
        let Some(t) = l.received_ns else { continue };
        let what = match last {
            _ if t < sent_ns => "before the send time",
            Some(before) if t < before => "earlier than the line before it",
            _ => {
                last = Some(t);
                continue;
            }
        };
        return Err(Error::input(
            path,
            format!(
                "line {}: received {what}: receive times must come from the clock that stamped `: sent`, in order",
                l.number
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(text: &str) -> Stream {
        build(Path::new("t.sse"), text).unwrap()
    }

    const CHUNK: &str =
        r#"data: {"object":"chat.completion.chunk","choices":[{"delta":{"content":"a"}}]}"#;

    #[test]
    fn done_with_padding_and_no_trailing_newline_ends_the_stream() {
        let s = stream(&format!("{CHUNK}\n\ndata: [DONE]   "));
        assert_eq!((s.events, s.outcome, s.complete), (2, Outcome::Ok, true));
        assert_eq!(s.kinds.envelope, 1);
        assert!(s.notes.is_empty(), "{:?}", s.notes);
    }

    #[test]
    fn a_sent_line_without_receive_times_is_no_heartbeat_and_noted() {
        let s = stream(&format!(": sent 1764633600\n\n{CHUNK}\n\ndata: [DONE]\n\n"));
        assert_eq!((s.records, s.kinds.heartbeat), (2, 0));
        assert!(s.timing.is_none());
        assert!(s.notes[0].starts_with("a `: sent` time (line 1) but no receive times"));
    }

    #[test]
    fn the_last_usage_wins_and_is_never_summed() {
        let start = r#"data: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}"#;
        let delta =
            |n: u64| format!(r#"data: {{"type":"message_delta","usage":{{"output_tokens":{n}}}}}"#);
        let text = format!(
            "event: message_start\n{start}\n\nevent: message_delta\n{}\n\nevent: message_delta\n{}\n\nevent: message_stop\ndata: {{}}\n\n",
            delta(7),
            delta(9)
        );
        let s = stream(&text);
        assert_eq!((s.input_tokens, s.output_tokens), (Some(5), Some(9)));
    }

    /// Groq's timings are on its clock: a timed capture's row never holds them, and the
    /// note says where they went.
    #[test]
    fn groq_timings_stay_off_the_timeline_of_a_timed_capture() {
        let last = r#"data: {"object":"chat.completion.chunk","choices":[{"delta":{},"finish_reason":"stop"}],"x_groq":{"usage":{"queue_time":0.5,"prompt_tokens":3,"completion_tokens":1,"total_time":0.25}}}"#;
        let text = format!("10 : sent 10\n10 \n11 {CHUNK}\n11 \n12 {last}\n12 \n");
        let s = stream(&text);
        assert_eq!((s.input_tokens, s.output_tokens), (Some(3), Some(1)));
        let t = s.server_timing.unwrap();
        assert_eq!((t.queue_time_s, t.total_time_s), (Some(0.5), Some(0.25)));
        assert_eq!(s.timing.unwrap().upstream_done_ms, Some(2000.0));
        assert!(
            s.notes
                .iter()
                .any(|n| n
                    .contains("the provider's own timings (`x_groq.usage`) are not in the row")),
            "{:?}",
            s.notes
        );
    }

    #[test]
    fn a_keepalive_comment_is_not_t3() {
        let text = format!(
            "10 : sent 10\n10 \n11 : keep-alive\n11 \n12 {CHUNK}\n12.5 \n13 data: [DONE]\n13 \n"
        );
        let t = stream(&text).timing.unwrap();
        assert_eq!(t.first_sse_event_ms, Some(2500.0));
        assert_eq!(t.first_text_delta_ms, Some(2500.0));
        assert_eq!(t.upstream_done_ms, Some(3000.0));
    }
}
