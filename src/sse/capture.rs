//! The capture format: an SSE body as `curl -sN … | ts '%.s'` writes it. Each line may
//! begin with the Unix time (seconds, with a fraction) it was received at and one space;
//! the time the request was sent is an SSE comment `: sent <unix seconds>` in the body, so
//! a capture is still a valid SSE body once the prefixes are taken off.
//!
//! This file splits the text into lines (LF, CRLF or CR end a line, as the SSE grammar
//! says) and takes each line's receive time off. Times are kept as integer nanoseconds so
//! differences are exact and the same on every machine.

/// One line of the body, without its line end and without its receive-time prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based, counting every line end (LF, CRLF, CR): the line an editor shows.
    pub number: usize,
    /// Unix time in nanoseconds; a line ended by a lone CR shares the time of the line it
    /// follows (`ts` stamps LF-ended lines only).
    pub received_ns: Option<i64>,
    pub text: &'a str,
}

/// The lines of a capture, and whether it carries receive times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines<'a> {
    pub lines: Vec<Line<'a>>,
    pub timed: bool,
}

/// Why a capture's lines cannot be read: the 1-based line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub message: String,
}

/// Split `text` into lines. The capture is timed when its first line begins with a receive
/// time; then every line after a line feed must (a line without one would have no time
/// to count from, and a guess would move t3..t6).
pub fn lines(text: &str) -> Result<Lines<'_>, LineError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let raw = split(text);
    let timed = raw
        .first()
        .is_some_and(|(s, _)| receive_time(s.strip_prefix('\u{feff}').unwrap_or(s)).is_some());
    let mut out = Vec::with_capacity(raw.len());
    let mut last_time = None;
    for (i, (s, after_lf)) in raw.into_iter().enumerate() {
        let number = i + 1;
        let s = if i == 0 {
            s.strip_prefix('\u{feff}').unwrap_or(s)
        } else {
            s
        };
        if !timed {
            out.push(Line {
                number,
                received_ns: None,
                text: s,
            });
            continue;
        }
        let (received_ns, text) = if after_lf {
            match receive_time(s) {
                Some((ns, rest)) => {
                    // `ts` writes a blank line as the time and one space; the BOM of a
                    // body captured with one sits after the first prefix.
                    let rest = if i == 0 {
                        rest.strip_prefix('\u{feff}').unwrap_or(rest)
                    } else {
                        rest
                    };
                    (ns, rest)
                }
                None => {
                    return Err(LineError {
                        line: number,
                        message: "carries no receive time, while the capture's first line does (expected `<unix seconds> ` before each line, as `ts '%.s'` writes)".into(),
                    })
                }
            }
        } else {
            (last_time.unwrap_or_default(), s)
        };
        last_time = Some(received_ns);
        out.push(Line {
            number,
            received_ns: Some(received_ns),
            text,
        });
    }
    Ok(Lines { lines: out, timed })
}

/// The lines of `text` and, for each, whether it starts the text or follows a line feed
/// (CRLF counts as one line end; a final line end adds no empty line).
fn split(text: &str) -> Vec<(&str, bool)> {
    let bytes = text.as_bytes();
    let mut out = vec![];
    let mut start = 0;
    let mut after_lf = true;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push((&text[start..i], after_lf));
                after_lf = true;
                i += 1;
                start = i;
            }
            b'\r' => {
                out.push((&text[start..i], after_lf));
                if bytes.get(i + 1) == Some(&b'\n') {
                    after_lf = true;
                    i += 2;
                } else {
                    after_lf = false;
                    i += 1;
                }
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < bytes.len() {
        out.push((&text[start..], after_lf));
    }
    out
}

/// A leading receive time (`1733000000.123456 `, or the time alone for a blank line):
/// nanoseconds and the rest of the line.
fn receive_time(s: &str) -> Option<(i64, &str)> {
    let end = s.find(' ').unwrap_or(s.len());
    let ns = unix_ns(&s[..end])?;
    Some((ns, s.get(end + 1..).unwrap_or("")))
}

/// Unix seconds with an optional fraction (`1733000000`, `1733000000.5`) as nanoseconds;
/// digits past the ninth decimal are dropped. Nothing else is a time.
pub fn unix_ns(s: &str) -> Option<i64> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    if secs.is_empty()
        || secs.len() > 11
        || !secs.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || (s.contains('.') && frac.is_empty())
    {
        return None;
    }
    let mut nanos: i64 = 0;
    for k in 0..9 {
        let d = frac.as_bytes().get(k).map_or(0, |b| i64::from(b - b'0'));
        nanos = nanos * 10 + d;
    }
    secs.parse::<i64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(nanos)
}

/// The send time of a `: sent <unix seconds>` comment (the comment's text after the colon
/// and its one optional space), in nanoseconds.
pub fn sent_ns(comment: &str) -> Option<Option<i64>> {
    let rest = comment.strip_prefix("sent")?;
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    Some(unix_ns(rest.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<&str> {
        lines(s).unwrap().lines.iter().map(|l| l.text).collect()
    }

    #[test]
    fn lf_crlf_and_cr_each_end_a_line() {
        assert_eq!(texts("a\nb\r\nc\rd"), ["a", "b", "c", "d"]);
        assert_eq!(texts("a\r\n\r\nb\n"), ["a", "", "b"]);
        assert_eq!(texts("a\r\r"), ["a", ""]);
        assert_eq!(texts(""), Vec::<&str>::new());
    }

    #[test]
    fn a_bom_is_not_part_of_the_first_line() {
        assert_eq!(texts("\u{feff}data: x\n"), ["data: x"]);
    }

    #[test]
    fn receive_times_are_taken_off_each_line() {
        let l = lines("1733000000.25 data: x\n1733000000.5 \n1733000001\n").unwrap();
        assert!(l.timed);
        let got: Vec<(Option<i64>, &str)> =
            l.lines.iter().map(|l| (l.received_ns, l.text)).collect();
        assert_eq!(
            got,
            [
                (Some(1_733_000_000_250_000_000), "data: x"),
                (Some(1_733_000_000_500_000_000), ""),
                (Some(1_733_000_001_000_000_000), ""),
            ]
        );
    }

    #[test]
    fn a_line_after_a_lone_cr_shares_the_time_before_it() {
        let l = lines("1.5 data: a\rdata: b\r\n2 \n").unwrap();
        let got: Vec<(Option<i64>, &str)> =
            l.lines.iter().map(|l| (l.received_ns, l.text)).collect();
        assert_eq!(
            got,
            [
                (Some(1_500_000_000), "data: a"),
                (Some(1_500_000_000), "data: b"),
                (Some(2_000_000_000), "")
            ]
        );
    }

    #[test]
    fn a_timed_capture_with_a_line_without_time_is_refused_at_that_line() {
        let e = lines("1.0 data: a\ndata: b\n").unwrap_err();
        assert_eq!(e.line, 2);
    }

    #[test]
    fn an_untimed_body_keeps_its_lines_whole() {
        let l = lines("data: 1.5 x\n").unwrap();
        assert!(!l.timed);
        assert_eq!(l.lines[0].text, "data: 1.5 x");
    }

    #[test]
    fn unix_times_parse_to_nanoseconds() {
        assert_eq!(
            unix_ns("1733000000.123456"),
            Some(1_733_000_000_123_456_000)
        );
        assert_eq!(unix_ns("0.0000000019"), Some(1));
        assert_eq!(unix_ns("12"), Some(12_000_000_000));
        for bad in ["", ".5", "5.", "1e9", "-1", "1.2.3", "data:"] {
            assert_eq!(unix_ns(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_sent_comment_names_the_send_time() {
        assert_eq!(
            sent_ns("sent 1733000000.5"),
            Some(Some(1_733_000_000_500_000_000))
        );
        assert_eq!(sent_ns("sent soon"), Some(None));
        assert_eq!(sent_ns("sentinel"), None);
        assert_eq!(sent_ns("OPENROUTER PROCESSING"), None);
    }
}
