//! Format detection by content: the first bytes of a file decide what it is, the extension
//! only where the content leaves it open (`.tsv`'s separator, a `.json` that is neither JSON
//! form). A `.csv` holding JSON lines is read as JSON lines; a pretty-printed JSON object
//! is one document, not JSON lines; an SSE body is recognised as such and refused.

use std::io::{BufRead, Read};
use std::path::Path;

use super::{
    aiperf, azure_requests, genaiperf, higress, litellm, llmperf, newapi, otel, recognise, vllm,
    InputFormat,
};
use crate::error::{Error, Result};

/// How many bytes of a file are looked at.
const HEAD: usize = 64 * 1024;
/// The longest first line parsed to tell JSON lines from a pretty-printed document; a
/// longer one is taken for a JSON line (a pretty-printed document's first line is short).
const FIRST_LINE: u64 = 1 << 20;

/// What a file holds, as far as its first bytes tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// A format the request-log readers read.
    Log(InputFormat),
    /// One JSON object spread over several lines (a summary, a config, a single record).
    JsonObject,
    /// A server-sent-events body (`data:` / `event:` lines).
    Sse,
}

impl Content {
    /// How a refusal names what the file was read as.
    pub fn read_as(self) -> &'static str {
        match self {
            Content::Log(InputFormat::Parquet) => "Parquet",
            Content::Log(InputFormat::Csv) => "CSV",
            Content::Log(InputFormat::JsonLines) => "JSON lines",
            Content::Log(InputFormat::JsonArray) => "a JSON array",
            Content::Log(InputFormat::AzureRequestLog) => "Azure OpenAI RequestResponse log",
            Content::Log(InputFormat::NewApi) => "new-api / one-api log",
            Content::Log(InputFormat::Higress) => "Higress ai-statistics log",
            Content::Log(InputFormat::LiteLlm) => "LiteLLM spend log",
            Content::Log(InputFormat::Otlp) => "OpenTelemetry OTLP JSON spans",
            Content::Log(InputFormat::Aiperf) => "AIPerf records (JSON lines)",
            Content::Log(InputFormat::AiperfCsv) => "AIPerf per-request CSV",
            Content::Log(InputFormat::Vllm) => "a vLLM --save-result JSON",
            Content::Log(InputFormat::Llmperf) => "LLMPerf individual responses",
            Content::Log(InputFormat::GenaiPerf) => "GenAI-Perf profile_export.json",
            Content::JsonObject => "a JSON object (one document)",
            Content::Sse => "an SSE stream (`event:`/`data:` lines)",
        }
    }
}

/// Decide what `path` holds: `forced` if given, else by its content.
pub fn detect(path: &Path, forced: Option<InputFormat>) -> Result<Content> {
    if let Some(f) = forced {
        return Ok(Content::Log(f));
    }
    let form = physical(path)?;
    Ok(adapter(path, form).map_or(form, Content::Log))
}

/// The log of a tool tracediag has an adapter for, known by its column names (JSON keys,
/// a CSV header, a Parquet schema), whatever the file's physical form.
fn adapter(path: &Path, form: Content) -> Option<InputFormat> {
    let columns: Vec<String> = match form {
        Content::Log(InputFormat::JsonLines) => {
            let line = first_line(path)?;
            let row: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&line).ok()?;
            let mut keys: Vec<String> = row.into_iter().map(|(k, _)| k).collect();
            // A new-api page written on one line.
            if keys.iter().any(|k| k == "data") {
                keys.extend(newapi::page_columns(path));
            }
            keys
        }
        Content::Log(InputFormat::JsonArray) | Content::JsonObject => {
            let mut keys = recognise::json_keys(path, form);
            if form == Content::JsonObject && keys.iter().any(|k| k == "data") {
                keys.extend(newapi::page_columns(path));
            }
            keys
        }
        Content::Log(InputFormat::Csv) => {
            let sep = super::csv::separator(path) as char;
            first_line(path)?
                .split(sep)
                .map(|c| c.trim().trim_matches('"').to_string())
                .collect()
        }
        Content::Log(InputFormat::Parquet) => super::parquet::scan(path)
            .ok()?
            .collect_schema()
            .ok()?
            .iter_names()
            .map(|n| n.to_string())
            .collect(),
        _ => return None,
    };
    if newapi::recognises(&columns) {
        Some(InputFormat::NewApi)
    } else if higress::recognises(&columns) {
        Some(InputFormat::Higress)
    } else if litellm::recognises(&columns) {
        Some(InputFormat::LiteLlm)
    } else {
        None
    }
}

/// What a file's bytes are (Parquet, CSV, JSON lines, an array, one document, SSE),
/// before any tool's adapter is recognised in them.
pub fn physical(path: &Path) -> Result<Content> {
    let mut head = Vec::with_capacity(HEAD);
    std::fs::File::open(path)
        .and_then(|f| f.take(HEAD as u64).read_to_end(&mut head))
        .map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    if head.is_empty() {
        return Err(Error::input(
            path,
            "the file is empty: expected a request log",
        ));
    }
    if head.starts_with(b"PAR1") {
        return Ok(Content::Log(InputFormat::Parquet));
    }
    if crate::sse::eventstream::looks_like(&head) {
        return Err(Error::input(
            path,
            format!(
                "expected a request log, found {}",
                crate::sse::eventstream::REFUSAL
            ),
        ));
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    if matches!(ext.as_deref(), Some("parquet") | Some("pq")) {
        return Err(Error::input(
            path,
            "expected a Parquet file (magic bytes PAR1), found other content",
        ));
    }
    let text = String::from_utf8_lossy(&head);
    let text = text.trim_start_matches('\u{feff}');
    if is_sse(text) {
        return Ok(Content::Sse);
    }
    let trimmed = text.trim_start();
    if otel::looks_like_otlp(trimmed) {
        return Ok(Content::Log(InputFormat::Otlp));
    }
    if trimmed.starts_with('{') {
        let line = first_line(path).unwrap_or_default();
        if azure_requests::looks_like_request_response(&line) {
            return Ok(Content::Log(InputFormat::AzureRequestLog));
        }
        if aiperf::looks_like_records(&line) {
            return Ok(Content::Log(InputFormat::Aiperf));
        }
        // A vLLM result is one document, on one line or pretty-printed: its keys decide.
        if vllm::looks_like(&recognise::json_keys(path, Content::JsonObject)) {
            return Ok(Content::Log(InputFormat::Vllm));
        }
        if genaiperf::looks_like_file(path) {
            return Ok(Content::Log(InputFormat::GenaiPerf));
        }
        return Ok(
            if line.len() as u64 >= FIRST_LINE
                || serde_json::from_str::<serde::de::IgnoredAny>(&line).is_ok()
            {
                Content::Log(InputFormat::JsonLines)
            } else {
                Content::JsonObject
            },
        );
    }
    if trimmed.starts_with('[') {
        // In a `.jsonl` file a line that is an array is a bad row of JSON lines (reported
        // by its line), not the start of one document.
        let lines = matches!(ext.as_deref(), Some("jsonl") | Some("ndjson"));
        return Ok(Content::Log(if lines {
            InputFormat::JsonLines
        } else if llmperf::looks_like_file(path) {
            InputFormat::Llmperf
        } else {
            InputFormat::JsonArray
        }));
    }
    match ext.as_deref() {
        // Lines that are not JSON in a JSON-lines file: each is reported as unreadable.
        Some("jsonl") | Some("ndjson") => Ok(Content::Log(InputFormat::JsonLines)),
        Some("json") => Err(Error::input(
            path,
            "expected a JSON array of objects or JSON lines, found neither",
        )),
        _ if first_line(path).is_some_and(|l| aiperf::looks_like_scalars(&l)) => {
            Ok(Content::Log(InputFormat::AiperfCsv))
        }
        _ => Ok(Content::Log(InputFormat::Csv)),
    }
}

/// Whether the text opens like a server-sent-events body: its first line that is neither
/// blank nor an SSE comment (`: …`) is an `event:` or `data:` field.
fn is_sse(text: &str) -> bool {
    text.lines()
        .map(str::trim_end)
        .find(|l| !l.is_empty() && !l.starts_with(':'))
        .is_some_and(|l| l.starts_with("data:") || l.starts_with("event:"))
}

/// The first non-empty line of a text file (at most [`FIRST_LINE`] bytes of it).
fn first_line(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut reader = std::io::BufReader::new(file.take(FIRST_LINE));
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let l = line.trim_start_matches('\u{feff}').trim();
        if !l.is_empty() {
            return Some(l.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect_text(name: &str, text: &[u8]) -> Result<Content> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        detect(&path, None)
    }

    #[test]
    fn content_decides_over_the_extension() {
        let line = b"{\"request_id\":\"a\",\"total_handler_ms\":1}\n";
        assert_eq!(
            detect_text("logs.csv", line).unwrap(),
            Content::Log(InputFormat::JsonLines)
        );
        assert_eq!(
            detect_text("logs.txt", b"request_id,total_handler_ms\na,1\n").unwrap(),
            Content::Log(InputFormat::Csv)
        );
        assert_eq!(
            detect_text("logs.csv", b"[{\"a\":1}]").unwrap(),
            Content::Log(InputFormat::JsonArray)
        );
        assert_eq!(
            detect_text("logs.jsonl", b"[1]\n{\"a\":1}\n").unwrap(),
            Content::Log(InputFormat::JsonLines)
        );
        assert_eq!(
            detect_text("x.bin", b"PAR1....").unwrap(),
            Content::Log(InputFormat::Parquet)
        );
    }

    #[test]
    fn a_pretty_printed_object_is_one_document_not_json_lines() {
        let text = b"{\n  \"records\": {\n    \"ttft\": 1\n  }\n}\n";
        assert_eq!(
            detect_text("summary.json", text).unwrap(),
            Content::JsonObject
        );
        assert_eq!(
            detect_text("summary.jsonl", b"{\"a\":1}\n{\"a\":2}\n").unwrap(),
            Content::Log(InputFormat::JsonLines)
        );
    }

    #[test]
    fn an_sse_body_is_recognised_with_or_without_comments_and_crlf() {
        for text in [
            &b"event: message_start\ndata: {}\n\n"[..],
            b"data: {\"id\":1}\r\n\r\ndata: [DONE]\r\n",
            b": OPENROUTER PROCESSING\n\ndata: {}\n\n",
        ] {
            assert_eq!(detect_text("s.csv", text).unwrap(), Content::Sse);
        }
        // A CSV whose header merely mentions data is a CSV.
        assert_eq!(
            detect_text("s.csv", b"data_source,total_handler_ms\n").unwrap(),
            Content::Log(InputFormat::Csv)
        );
    }

    #[test]
    fn a_forced_format_is_not_second_guessed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        std::fs::write(&path, b"data: {}\n").unwrap();
        assert_eq!(
            detect(&path, Some(InputFormat::Csv)).unwrap(),
            Content::Log(InputFormat::Csv)
        );
    }
}
