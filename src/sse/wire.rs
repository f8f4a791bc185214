//! The SSE wire format, as the WHATWG HTML standard ("Server-sent events", "Interpreting
//! an event stream") defines it: lines of `field: value`, a blank line dispatching the
//! event; `data` lines joined with `\n`; `event` naming the type; `id` setting the last
//! event id; a line starting with `:` a comment; a field without a colon a field with an
//! empty value; one space after the colon dropped; a block without `data` not dispatched.
//!
//! One departure: the block still open at the end of the file is dispatched (marked
//! `at_eof`). The standard discards it, but recorded bodies are routinely saved without
//! their final blank line, and dropping the last event (`message_stop`) would make every
//! such recording look cut off; the caller decides whether that event is whole.

use super::capture::Line;

/// One event as dispatched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event` field, or `None` for the default type (`message`).
    pub name: Option<String>,
    /// The `data` lines joined with `\n`.
    pub data: String,
    /// The last event id at dispatch (the `id` field persists across events).
    pub id: Option<String>,
    /// Dispatched by the end of the file instead of a blank line.
    pub at_eof: bool,
}

/// What a record is: a comment line, or a dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// The text after the colon (and its one optional space).
    Comment(String),
    Event(Event),
}

/// A comment or an event, where it is in the file and when it was received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The line it begins on (1-based).
    pub line: usize,
    /// When the line that completed it was received (the blank line that dispatched an
    /// event: only then can a client act on it), in Unix nanoseconds.
    pub received_ns: Option<i64>,
    pub body: Body,
}

/// The comments and events of a body, in file order.
pub fn parse(lines: &[Line<'_>]) -> Vec<Record> {
    let mut out = vec![];
    let mut name: Option<String> = None;
    let mut data = String::new();
    let mut has_data = false;
    let mut last_id: Option<String> = None;
    // The line the open block began on.
    let mut begun: Option<usize> = None;
    for l in lines {
        let text = l.text;
        if text.is_empty() {
            if has_data {
                out.push(Record {
                    line: begun.unwrap_or(l.number),
                    received_ns: l.received_ns,
                    body: Body::Event(Event {
                        name: name.take(),
                        data: std::mem::take(&mut data),
                        id: last_id.clone(),
                        at_eof: false,
                    }),
                });
            }
            name = None;
            data.clear();
            has_data = false;
            begun = None;
            continue;
        }
        if let Some(comment) = text.strip_prefix(':') {
            out.push(Record {
                line: l.number,
                received_ns: l.received_ns,
                body: Body::Comment(comment.strip_prefix(' ').unwrap_or(comment).to_string()),
            });
            continue;
        }
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text, ""),
        };
        begun.get_or_insert(l.number);
        match field {
            "event" => name = Some(value.to_string()),
            "data" => {
                if has_data {
                    data.push('\n');
                }
                data.push_str(value);
                has_data = true;
            }
            // An id holding NUL is ignored, as the standard says.
            "id" if !value.contains('\0') => last_id = Some(value.to_string()),
            // `retry` sets the client's reconnection delay; other fields are ignored.
            _ => {}
        }
    }
    if has_data {
        let last = lines.last();
        out.push(Record {
            line: begun.unwrap_or_default(),
            received_ns: last.and_then(|l| l.received_ns),
            body: Body::Event(Event {
                name,
                data,
                id: last_id,
                at_eof: true,
            }),
        });
    }
    out
}

/// Whether a text opens like an SSE body: its first line that is neither blank nor a
/// comment is one of the standard's fields.
pub fn looks_like_sse(lines: &[Line<'_>]) -> bool {
    lines
        .iter()
        .map(|l| l.text)
        .find(|t| !t.trim().is_empty() && !t.starts_with(':'))
        .is_some_and(|t| {
            let field = t.split_once(':').map_or(t, |(f, _)| f);
            matches!(field, "data" | "event" | "id" | "retry")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::capture::lines;

    fn records(text: &str) -> Vec<Record> {
        parse(&lines(text).unwrap().lines)
    }

    fn events(text: &str) -> Vec<Event> {
        records(text)
            .into_iter()
            .filter_map(|r| match r.body {
                Body::Event(e) => Some(e),
                Body::Comment(_) => None,
            })
            .collect()
    }

    fn ev(name: Option<&str>, data: &str, at_eof: bool) -> Event {
        Event {
            name: name.map(String::from),
            data: data.into(),
            id: None,
            at_eof,
        }
    }

    #[test]
    fn lf_crlf_and_cr_separators_give_the_same_events() {
        let want = vec![ev(Some("a"), "1", false), ev(None, "2", false)];
        assert_eq!(events("event: a\ndata: 1\n\ndata: 2\n\n"), want);
        assert_eq!(events("event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n"), want);
        assert_eq!(events("event: a\rdata: 1\r\rdata: 2\r\r"), want);
        // Gemini's bodies: LF after the data line, CRLF CRLF between events.
        assert_eq!(events("event: a\ndata: 1\r\n\r\ndata: 2\r\n\r\n"), want);
    }

    #[test]
    fn multi_line_data_is_joined_with_line_feeds() {
        assert_eq!(
            events("data: {\"a\":\ndata: 1}\ndata:\n\n"),
            [ev(None, "{\"a\":\n1}\n", false)]
        );
    }

    #[test]
    fn comments_are_records_not_events() {
        let r = records(": OPENROUTER PROCESSING\n\n:no space\n\ndata: x\n\n");
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].body, Body::Comment("OPENROUTER PROCESSING".into()));
        assert_eq!(r[1].body, Body::Comment("no space".into()));
        assert_eq!(r[1].line, 3);
        assert_eq!(r[2].line, 5);
    }

    #[test]
    fn only_one_space_after_the_colon_is_dropped_and_trailing_padding_is_kept() {
        assert_eq!(events("data:  x  \n\n"), [ev(None, " x  ", false)]);
        assert_eq!(events("data:x\n\n"), [ev(None, "x", false)]);
    }

    #[test]
    fn done_is_an_ordinary_data_event_on_the_wire() {
        assert_eq!(events("data: [DONE]\n\n"), [ev(None, "[DONE]", false)]);
    }

    #[test]
    fn a_block_without_data_is_not_dispatched() {
        assert_eq!(events("event: ping\n\nid: 7\n\n"), []);
        // …but its id persists to the next event.
        assert_eq!(events("id: 7\n\ndata: x\n\n")[0].id.as_deref(), Some("7"));
    }

    #[test]
    fn a_field_without_colon_has_an_empty_value() {
        assert_eq!(events("data\n\n"), [ev(None, "", false)]);
    }

    #[test]
    fn the_block_open_at_the_end_of_the_file_is_dispatched_and_marked() {
        assert_eq!(
            events("data: 1\n\nevent: message_stop\ndata: {}"),
            [ev(None, "1", false), ev(Some("message_stop"), "{}", true)]
        );
        assert_eq!(events("data: 1\n"), [ev(None, "1", true)]);
    }

    #[test]
    fn an_event_is_received_when_its_blank_line_is() {
        let r = records("1 data: x\n2 \n3 data: y");
        assert_eq!(r[0].received_ns, Some(2_000_000_000));
        assert_eq!(r[1].received_ns, Some(3_000_000_000));
        assert_eq!((r[0].line, r[1].line), (1, 3));
    }

    #[test]
    fn sse_is_told_by_its_first_field() {
        let is = |t: &str| looks_like_sse(&lines(t).unwrap().lines);
        assert!(is(": hi\n\nevent: x\ndata: 1\n"));
        assert!(is("\r\ndata: 1"));
        assert!(is("1733000000.1 data: 1\n"));
        assert!(!is("id,model\n1,a\n"));
        assert!(!is("{\"a\": 1}\n"));
        assert!(!is(": only a comment\n"));
    }
}
