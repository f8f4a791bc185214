//! What a refused file is: its column names (top-level keys of a JSON file, read without
//! keeping any value) and, when they match one of the signatures below, the tool that
//! wrote it and what to pass instead. The signatures are one table, checked in order.

use std::fmt;
use std::io::BufRead;
use std::path::Path;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::sniff::Content;
use super::{vllm, InputFormat};

/// A file another tool writes, known by its column names (or, for an SSE body, its form).
struct Signature {
    /// `Some`: only a file read as this.
    form: Option<Content>,
    /// Column names (exact) that must all be present.
    all_of: &'static [&'static str],
    /// What the file is and what to do instead.
    says: &'static str,
}

/// The known files, most specific first: the first match is the one named.
const SIGNATURES: &[Signature] = &[
    Signature {
        form: Some(Content::Sse),
        all_of: &[],
        says: "this is an SSE stream (a response body), not rows of requests: `tracediag sse FILE` classifies its events, and with a receive time per line writes its timeline as a row `analyze` reads",
    },
    Signature {
        form: Some(Content::JsonObject),
        all_of: &["metadata", "metrics"],
        says: "this looks like one AIPerf record, pretty-printed: tracediag reads AIPerf's `profile_export.jsonl` as written (one record per line; `tracediag analyze profile_export.jsonl`)",
    },
    Signature {
        form: None,
        all_of: &["records", "input_config"],
        says: "this looks like an AIPerf summary (`profile_export_aiperf.json`): figures over a run, not requests; pass the per-request records of the same run instead: `tracediag analyze profile_export.jsonl` (AIPerf writes it beside the summary)",
    },
    Signature {
        form: None,
        all_of: &["request_latency", "time_to_first_token", "was_cancelled"],
        says: "this looks like an AIPerf summary (`profile_export_aiperf.json`): figures over a run, not requests; pass the per-request records of the same run instead: `tracediag analyze profile_export.jsonl` (AIPerf writes it beside the summary)",
    },
    Signature {
        form: None,
        all_of: &["request_latency", "time_to_first_token", "input_config"],
        says: "this looks like a GenAI-Perf summary (`profile_export_genai_perf.json`): figures over a run, not requests; pass the run's per-request data instead, perf_analyzer's `profile_export.json` (GenAI-Perf writes it beside the summary): `tracediag analyze profile_export.json`",
    },
    Signature {
        form: Some(Content::Log(InputFormat::Csv)),
        all_of: &["Metric", "avg", "p50"],
        says: "this looks like an AIPerf summary CSV (`profile_export_aiperf.csv`): one row per metric, not per request; pass the per-request records of the same run instead: `tracediag analyze profile_export.jsonl` (AIPerf writes it beside the summary)",
    },
    Signature {
        form: None,
        all_of: &["ttfts", "itls", "output_lens"],
        says: "this looks like a vLLM `benchmark_serving.py --save-result` JSON (per-request arrays `ttfts`, `itls`): tracediag reads it as such when it is detected, or with `--input-format vllm`",
    },
    Signature {
        form: None,
        all_of: &vllm::SUMMARY_KEYS,
        says: vllm::SUMMARY_ONLY,
    },
    Signature {
        form: None,
        all_of: &["client_command"],
        says: "this looks like the command record of a vLLM benchmark run: commands, no measurements; pass the run's `--save-result` JSON (the `.json` of the same name)",
    },
    Signature {
        form: None,
        all_of: &["ttft_s", "end_to_end_latency_s", "inter_token_latency_s"],
        says: "this looks like LLMPerf individual responses: tracediag reads them as such when they are detected, or with `--input-format llmperf`",
    },
    Signature {
        form: None,
        all_of: &["num_concurrent_requests", "results_ttft_s_mean"],
        says: "this looks like an LLMPerf summary: figures over a run, not requests; pass the run's `*_individual_responses.json` (the per-request records) instead",
    },
    Signature {
        form: None,
        all_of: &["resourceMetrics"],
        says: "this looks like an OpenTelemetry OTLP JSON metrics export: aggregates, not requests; tracediag reads OTLP span exports (`resourceSpans`, e.g. the collector's file exporter for traces), one row per GenAI span",
    },
    Signature {
        form: None,
        all_of: &["average_ttft_ms", "average_local_extra_ttft_ms"],
        says: "this looks like an Atoapi live summary (averages and percentiles over a run), not per-request rows; Atoapi's per-request figures are the `recent_requests` of its `GET /admin/metrics`, which tracediag does not read",
    },
    Signature {
        form: None,
        all_of: &["verdict", "gzip_ab"],
        says: "this looks like Atoapi benchmark notes (a verdict and a few examples), not per-request rows; Atoapi's per-request figures are the `recent_requests` of its `GET /admin/metrics`, which tracediag does not read",
    },
    Signature {
        form: None,
        all_of: &["average_ttft_ms", "p95_ttft_ms"],
        says: "this looks like a latency summary (averages and percentiles over a run), not per-request rows",
    },
];

/// What the signature table says about a file read as `form` with these columns.
pub fn looks_like(form: Content, columns: &[String]) -> Option<String> {
    SIGNATURES
        .iter()
        .find(|s| {
            s.form.is_none_or(|f| f == form)
                && s.all_of.iter().all(|k| columns.iter().any(|c| c == k))
        })
        .map(|s| s.says.to_string())
}

/// How many rows (JSON lines, array elements) are looked at for their keys.
const KEYED_ROWS: usize = 1000;

/// The top-level keys of a JSON file, in first-seen order: of the object (one document),
/// of the first [`KEYED_ROWS`] elements of an array or lines of JSON lines. Values are
/// skipped as they are parsed, never kept. Empty when the file cannot be parsed so far.
pub fn json_keys(path: &Path, form: Content) -> Vec<String> {
    let Ok(file) = std::fs::File::open(path) else {
        return vec![];
    };
    let mut reader = std::io::BufReader::new(file);
    // A byte-order mark is not JSON.
    if reader
        .fill_buf()
        .is_ok_and(|b| b.starts_with("\u{feff}".as_bytes()))
    {
        reader.consume(3);
    }
    let mut keys = Keys::default();
    match form {
        Content::Log(InputFormat::JsonLines)
        | Content::Log(InputFormat::AzureRequestLog)
        | Content::Log(InputFormat::Aiperf) => {
            let mut line = Vec::new();
            let mut rows = 0;
            while rows < KEYED_ROWS {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                rows += 1;
                let mut de = serde_json::Deserializer::from_slice(&line);
                let _ = de.deserialize_any(ObjectKeys(&mut keys));
            }
        }
        Content::Log(InputFormat::JsonArray) => {
            let mut de = serde_json::Deserializer::from_reader(reader);
            let _ = de.deserialize_any(ArrayKeys(&mut keys));
        }
        _ => {
            let mut de = serde_json::Deserializer::from_reader(reader);
            let _ = de.deserialize_any(ObjectKeys(&mut keys));
        }
    }
    keys.0
}

#[derive(Default)]
struct Keys(Vec<String>);

impl Keys {
    fn add(&mut self, k: String) {
        if !self.0.contains(&k) {
            self.0.push(k);
        }
    }
}

/// Collects an object's keys, skipping its values; anything else is skipped.
struct ObjectKeys<'a>(&'a mut Keys);

impl<'de> Visitor<'de> for ObjectKeys<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key::<String>()? {
            map.next_value::<IgnoredAny>()?;
            self.0.add(k);
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for ObjectKeys<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// The keys of the first [`KEYED_ROWS`] objects of an array (the rest skipped).
struct ArrayKeys<'a>(&'a mut Keys);

impl<'de> Visitor<'de> for ArrayKeys<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut n = 0;
        while n < KEYED_ROWS {
            if seq.next_element_seed(ObjectKeys(self.0))?.is_none() {
                return Ok(());
            }
            n += 1;
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_signature_is_reachable_by_its_own_columns() {
        for (i, s) in SIGNATURES.iter().enumerate() {
            let form = s.form.unwrap_or(Content::JsonObject);
            let said = looks_like(form, &names(s.all_of));
            // An earlier, more general signature must not shadow a later one.
            let first = SIGNATURES
                .iter()
                .position(|t| t.says == said.clone().unwrap_or_default())
                .unwrap();
            assert!(
                SIGNATURES[first].says == s.says,
                "signature {i} is shadowed by {first}"
            );
        }
    }

    #[test]
    fn a_form_bound_signature_needs_its_form() {
        let cols = names(&["Metric", "avg", "p50"]);
        assert!(looks_like(Content::Log(InputFormat::Csv), &cols)
            .unwrap()
            .contains("AIPerf summary CSV"));
        assert_eq!(looks_like(Content::JsonObject, &cols), None);
        assert_eq!(looks_like(Content::JsonObject, &[]), None);
    }

    #[test]
    fn keys_are_read_in_order_without_values() {
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().join("o.json");
        std::fs::write(&obj, "\u{feff}{\n \"b\": {\"x\": 1},\n \"a\": [1, 2]\n}").unwrap();
        assert_eq!(json_keys(&obj, Content::JsonObject), names(&["b", "a"]));
        let arr = dir.path().join("a.json");
        std::fs::write(&arr, r#"[{"a":1},{"c":"x","a":2}]"#).unwrap();
        assert_eq!(
            json_keys(&arr, Content::Log(InputFormat::JsonArray)),
            names(&["a", "c"])
        );
        let lines = dir.path().join("l.jsonl");
        std::fs::write(&lines, "{\"a\":1}\n\nnot json\n{\"d\":1,\"a\":2}\n").unwrap();
        assert_eq!(
            json_keys(&lines, Content::Log(InputFormat::JsonLines)),
            names(&["a", "d"])
        );
    }
}
