//! Higress ai-statistics plugin logs → a raw frame whose columns carry canonical names.
//! The plugin (alibaba/higress `plugins/wasm-go/extensions/ai-statistics`) writes one
//! `ai_log` field into each Envoy access-log entry: a JSON string whose values are
//! strings of numbers (`"llm_service_duration":"1955"`). Read from JSON lines of access
//! logs, a JSON array of them, or one entry (the plugin README's "#### Log" examples,
//! `fixtures/external/gateway/higress_ai_statistics_doc_example_log*.json`).
//!
//! Which points are filled, and from which clock (research notes, gateway.md §1.3, read in
//! the plugin's `main.go`): both durations count from the time the plugin stamps in
//! `onHttpRequestHeaders`, when the proxy has received the request's headers: the
//! gateway's receive, t0.
//! - `llm_first_token_duration` (ms) is stamped at the first streamed response body chunk
//!   the plugin sees (`onHttpStreamingBody`): the first SSE event, not necessarily a token
//!   (a role-only chunk counts) → `first_sse_event_ms` (t0→t3). A non-streamed response
//!   has none: null.
//! - `llm_service_duration` (ms) is stamped when the response body has passed the plugin
//!   in full: the upstream body's end as the proxy sees it → `upstream_done_ms` (t0→t6).
//!   The proxy's own finish (t7) is not in `ai_log`, so `total_handler_ms` stays null.
//! - `input_token`, `output_token` → input/output tokens; `model` → model.
//!
//! Nothing else is read: not the access log's other fields (whose names the deployment's
//! log format decides), nor any other key of `ai_log` (the plugin can be configured to log
//! questions and answers there).

use std::path::Path;

use polars::prelude::*;

use super::sniff::{self, Content};
use super::{json, Adapted, InputFormat};
use crate::error::{Error, Result};

const KEYS: &[&str] = &["ai_log"];
/// The keys of `ai_log` read, in the order of `AiLog`'s fields.
const AI_LOG: [&str; 5] = [
    "model",
    "input_token",
    "output_token",
    "llm_first_token_duration",
    "llm_service_duration",
];

/// `ai_log` as a struct of the keys read, each as text.
fn ai_log_type() -> DataType {
    DataType::Struct(
        AI_LOG
            .iter()
            .map(|k| Field::new((*k).into(), DataType::String))
            .collect(),
    )
}

/// The keys of one `ai_log` read (any other key skipped unkept: it may hold prompt text).
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct AiLog {
    model: Value,
    input_token: Value,
    output_token: Value,
    llm_first_token_duration: Value,
    llm_service_duration: Value,
}

/// A value under a key read, as the mapping is given it: a string as it is, a number as
/// written; for a boolean, an object or an array, what was found, which does not parse as
/// a number (so a count or a duration counts as unparsed, as in any log), and no model.
#[derive(Default)]
enum Value {
    #[default]
    Null,
    Text(String),
    Other(&'static str),
}

impl Value {
    fn text(&self, is_label: bool) -> Option<&str> {
        match self {
            Value::Null => None,
            Value::Text(t) => Some(t),
            Value::Other(found) => (!is_label).then_some(*found),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> serde::de::Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, s: &str) -> std::result::Result<Value, E> {
        Ok(Value::Text(s.to_string()))
    }
    fn visit_i64<E>(self, n: i64) -> std::result::Result<Value, E> {
        Ok(Value::Text(n.to_string()))
    }
    fn visit_u64<E>(self, n: u64) -> std::result::Result<Value, E> {
        Ok(Value::Text(n.to_string()))
    }
    fn visit_f64<E>(self, n: f64) -> std::result::Result<Value, E> {
        Ok(Value::Text(n.to_string()))
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Value, E> {
        Ok(Value::Other("a boolean"))
    }
    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(Value::Other("an object"))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Value::Other("an array"))
    }
}

/// Each row's `ai_log` (the text of an object, whether the log held it as an object or as
/// a JSON string of one) decoded into the keys read. Decoded here rather than by polars'
/// `json_decode`, which fails the whole column on one value of another shape (a number
/// where text is expected, an array); an `ai_log` that is not an object (the row check
/// has flagged its row) or is blank reads as nothing.
fn decode(texts: &StringChunked) -> PolarsResult<StructChunked> {
    let logs: Vec<Option<AiLog>> = texts
        .iter()
        // An object only: serde's derive would also read an array as the fields in order.
        .map(|t| t.filter(|t| t.trim_start().starts_with('{')))
        .map(|t| t.and_then(|t| serde_json::from_str::<AiLog>(t).ok()))
        .collect();
    let column = |i: usize, is_label: bool, get: fn(&AiLog) -> &Value| {
        let values = logs
            .iter()
            .map(|l| l.as_ref().and_then(|l| get(l).text(is_label)));
        StringChunked::from_iter_options(AI_LOG[i].into(), values).into_series()
    };
    let fields = [
        column(0, true, |l| &l.model),
        column(1, false, |l| &l.input_token),
        column(2, false, |l| &l.output_token),
        column(3, false, |l| &l.llm_first_token_duration),
        column(4, false, |l| &l.llm_service_duration),
    ];
    StructChunked::from_series(texts.name().clone(), texts.len(), fields.iter())
}

/// An access-log entry holding the plugin's `ai_log`.
pub fn recognises(columns: &[String]) -> bool {
    columns.iter().any(|c| c == "ai_log")
}

/// Read the file's entries (see the module documentation).
pub fn scan(path: &Path, repaired: Option<&super::spool::Spooled>) -> Result<Adapted> {
    let raw = match sniff::physical(path)? {
        Content::Log(InputFormat::JsonLines) => json::read_keys(path, true, repaired, KEYS, &[])?,
        Content::Log(InputFormat::JsonArray) | Content::JsonObject => {
            json::read_keys(path, false, None, KEYS, &[])?
        }
        other => {
            return Err(Error::input(
                path,
                format!(
                    "expected Higress access logs (JSON with an `ai_log` field), found {}",
                    other.read_as()
                ),
            ))
        }
    };
    let log = col("ai_log").map(
        |c: Column| decode(c.str()?).map(IntoColumn::into_column),
        |_, f| Ok(Field::new(f.name().clone(), ai_log_type())),
    );
    let field = |k: &str| log.clone().struct_().field_by_name(k);
    Ok(Adapted {
        frame: raw.select([
            field("model").alias("model"),
            field("input_token").alias("input_tokens"),
            field("output_token").alias("output_tokens"),
            // As text, parsed by the mapping, which counts what is not a number.
            field("llm_first_token_duration").alias("first_sse_event_ms"),
            field("llm_service_duration").alias("upstream_done_ms"),
        ]),
        notes: vec!["Higress ai-statistics logs a first chunk (t0→t3) and the upstream body's end (t0→t6), not the proxy's finish (t7) or the upstream headers: the gateway_coarse table (rules/gateway_coarse.toml) classifies the requests with those two points".to_string()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(df: &DataFrame, c: &str) -> Vec<Option<f64>> {
        let numbers = df.column(c).unwrap().cast(&DataType::Float64).unwrap();
        numbers.f64().unwrap().to_vec()
    }

    #[test]
    fn string_numbers_are_ms_from_the_request_headers_and_non_streamed_has_no_first_chunk() {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let df = scan(
            &root.join("fixtures/external/gateway/higress_ai_statistics_doc_example_log.json"),
            None,
        )
        .unwrap()
        .frame
        .collect()
        .unwrap();
        assert_eq!(floats(&df, "first_sse_event_ms"), [Some(309.0)]);
        assert_eq!(floats(&df, "upstream_done_ms"), [Some(1955.0)]);
        let out = df.column("output_tokens").unwrap().str().unwrap().get(0);
        assert_eq!(out, Some("69"));
        let df = scan(
            &root.join(
                "fixtures/external/gateway/higress_ai_statistics_doc_example_log_nonstream.json",
            ),
            None,
        )
        .unwrap()
        .frame
        .collect()
        .unwrap();
        assert_eq!(floats(&df, "first_sse_event_ms"), [None]);
        assert_eq!(floats(&df, "upstream_done_ms"), [Some(19110.0)]);
    }

    #[test]
    fn json_lines_with_ai_log_as_an_object_or_a_string() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.jsonl");
        std::fs::write(
            &path,
            "{\"ai_log\":{\"model\":\"m\",\"llm_service_duration\":\"12\"},\"path\":\"/v1\"}\n\
             {\"ai_log\":\"{\\\"llm_first_token_duration\\\":\\\"3\\\",\\\"llm_service_duration\\\":\\\"\\\"}\"}\n",
        )
        .unwrap();
        let df = scan(&path, None).unwrap().frame.collect().unwrap();
        assert_eq!(floats(&df, "upstream_done_ms"), [Some(12.0), None]);
        assert_eq!(floats(&df, "first_sse_event_ms"), [None, Some(3.0)]);
    }

    /// Every shape an `ai_log` or a value in it may take decodes without failing the
    /// column: numbers as written, a boolean, object or array as what was found (not a
    /// number, so the mapping counts it unparsed; no model), and an `ai_log` that is not
    /// an object, is blank or repeats a key, as nothing.
    #[test]
    fn every_shape_decodes_and_what_is_not_an_object_is_nothing() {
        let texts = StringChunked::from_iter_options(
            "ai_log".into(),
            [
                Some(r#"{"model":"m","input_token":12,"llm_service_duration":19.5,"question":"hi"}"#),
                Some(r#"{"model":{"a":1},"output_token":true,"llm_service_duration":[1],"llm_first_token_duration":{"b":[2]}}"#),
                Some(r#"{"model":"m","llm_service_duration":"3","llm_service_duration":"4"}"#),
                Some(r#"{"model":"m","llm_service_duration":"3"?}"#),
                Some("[1,2]"),
                Some(""),
                Some("null"),
                None,
            ]
            .into_iter(),
        );
        let decoded = decode(&texts).unwrap().into_series();
        let field = |k: &str| -> Vec<Option<String>> {
            let s = decoded.struct_().unwrap().field_by_name(k).unwrap();
            s.str()
                .unwrap()
                .iter()
                .map(|v| v.map(String::from))
                .collect()
        };
        let some = |v: &str| Some(v.to_string());
        let none = [None, None, None, None, None];
        let mut want: Vec<Option<String>> = vec![some("m"), None];
        want.extend(none.clone());
        want.push(None);
        assert_eq!(field("model"), want);
        let mut want = vec![some("19.5"), some("an array")];
        want.extend(none.clone());
        want.push(None);
        assert_eq!(field("llm_service_duration"), want);
        let mut want = vec![None, some("an object")];
        want.extend(none.clone());
        want.push(None);
        assert_eq!(field("llm_first_token_duration"), want);
        assert_eq!(field("input_token")[0], some("12"));
        assert_eq!(field("output_token")[1], some("a boolean"));
    }
}
