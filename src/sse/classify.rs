//! The per-API event classifier: which API a stream speaks (told from its events, not
//! from the file name), and what each event is — envelope, heartbeat, effective output,
//! visible text or error — with the usage, model and id it carries.
//!
//! The taxonomy per API is the one the SDKs define (OpenAI's chunk and `*_event.py`
//! types, Anthropic's raw stream events, Gemini's `GenerateContentResponse`). An event
//! whose delta is empty carries nothing the user or a tool gets, so it is envelope.

use serde::Serialize;
use serde_json::Value;

/// The streaming APIs tracediag reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// OpenAI Chat Completions (`data:` chunks, `data: [DONE]`), and the many servers that
    /// speak it (OpenRouter, vLLM, DeepSeek).
    ChatCompletions,
    /// OpenAI's legacy Completions (`/v1/completions`: `"object": "text_completion"`,
    /// `choices[].text`, `data: [DONE]`): what vLLM's own benchmark streams.
    Completions,
    /// OpenAI Responses (`event: response.*`).
    Responses,
    /// Anthropic Messages (`event: message_start` … `message_stop`).
    AnthropicMessages,
    /// Gemini `:streamGenerateContent?alt=sse` (`data:` `GenerateContentResponse`s).
    Gemini,
}

impl Api {
    pub const ALL: [Api; 5] = [
        Api::ChatCompletions,
        Api::Completions,
        Api::Responses,
        Api::AnthropicMessages,
        Api::Gemini,
    ];

    /// Every API's name, as a refusal lists them: `a, b, … or e`.
    pub fn all_names() -> String {
        let names = Api::ALL.map(Api::name);
        let (last, rest) = names.split_last().expect("several APIs");
        format!("{} or {last}", rest.join(", "))
    }

    pub fn name(self) -> &'static str {
        match self {
            Api::ChatCompletions => "OpenAI Chat Completions",
            Api::Completions => "OpenAI Completions (legacy)",
            Api::Responses => "OpenAI Responses",
            Api::AnthropicMessages => "Anthropic Messages",
            Api::Gemini => "Gemini alt=sse",
        }
    }

    /// The event that ends a stream of this API, as a refusal or note names it.
    pub fn terminal(self) -> &'static str {
        match self {
            Api::ChatCompletions | Api::Completions => "`data: [DONE]` or a `finish_reason`",
            Api::Responses => "`response.completed`, `response.incomplete` or `response.failed`",
            Api::AnthropicMessages => "`message_stop`",
            Api::Gemini => "a candidate's `finishReason`",
        }
    }
}

/// What an event (or a comment) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Lifecycle and metadata: start, stop, role, empty deltas, usage, `[DONE]`.
    Envelope,
    /// Comments, pings and keep-alives: sent on a timer, they say nothing of the model.
    Heartbeat,
    /// Output the user does not read as text: reasoning or its summary, function-call or
    /// tool-input arguments.
    EffectiveOutput,
    /// Text the user reads (and a refusal's text).
    VisibleText,
    /// An error event, or an error object in a stream sent with HTTP 200.
    Error,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Envelope,
        Kind::Heartbeat,
        Kind::EffectiveOutput,
        Kind::VisibleText,
        Kind::Error,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Envelope => "envelope",
            Kind::Heartbeat => "heartbeat",
            Kind::EffectiveOutput => "effective output",
            Kind::VisibleText => "visible text",
            Kind::Error => "error",
        }
    }
}

/// Usage figures an event carries; `None` where it says nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

/// A provider's own timing of the request, as its last chunk reports it (Groq's
/// `x_groq.usage`): seconds measured on the provider's clock, from when it took the
/// request in. No point of the stream's timeline (t0 is the client's send, and the two
/// clocks share no origin), so they are reported beside it, as the provider's figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ServerTiming {
    /// Where the figures were read.
    pub source: &'static str,
    /// Time the request waited in the provider's queue.
    pub queue_time_s: Option<f64>,
    /// Time the provider spent on the prompt (prefill).
    pub prompt_time_s: Option<f64>,
    /// Time the provider spent generating the output.
    pub completion_time_s: Option<f64>,
    /// The provider's total for the request (its prompt and completion times; Groq's
    /// figures leave the queue out).
    pub total_time_s: Option<f64>,
}

/// One event, classified.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Classified {
    pub kind: Option<Kind>,
    /// The event ends the stream.
    pub terminal: bool,
    pub usage: Usage,
    /// The provider's own timings, when the event carries them.
    pub server: Option<ServerTiming>,
    pub model: Option<String>,
    /// The response's id (`chatcmpl-…`, `resp_…`, `msg_…`, Gemini's `responseId`).
    pub id: Option<String>,
}

/// An event's payload: `[DONE]`, or a JSON object.
pub enum Payload<'a> {
    Done,
    Json(&'a Value),
}

/// Event names (or `type`s) that are keep-alives whatever the API.
fn is_keepalive(name: &str) -> bool {
    matches!(name, "ping" | "keepalive" | "keep-alive" | "heartbeat")
}

/// The type an event declares: its `event` field, else its payload's `type`.
fn event_type<'a>(name: Option<&'a str>, v: &'a Value) -> Option<&'a str> {
    name.map(str::trim)
        .filter(|n| !n.is_empty() && *n != "message")
        .or_else(|| v.get("type").and_then(Value::as_str))
}

/// The API an event belongs to, when it tells (a ping or a bare error does not).
pub fn detect(name: Option<&str>, v: &Value) -> Option<Api> {
    let ty = event_type(name, v).unwrap_or("");
    if ty.starts_with("response.") {
        return Some(Api::Responses);
    }
    if matches!(
        ty,
        "message_start"
            | "content_block_start"
            | "content_block_delta"
            | "content_block_stop"
            | "message_delta"
            | "message_stop"
    ) {
        return Some(Api::AnthropicMessages);
    }
    if ty == "error" {
        // Anthropic nests the error ({"type":"error","error":{"type":…}}); the Responses
        // error event carries `code` and `message` itself.
        if v.get("error").and_then(|e| e.get("type")).is_some() {
            return Some(Api::AnthropicMessages);
        }
        if v.get("message").is_some() && v.get("error").is_none() {
            return Some(Api::Responses);
        }
        return None;
    }
    // Told before Chat Completions, whose test below (any `choices` array) would take it:
    // a legacy chunk's choices carry `text` where a chat chunk's carry `delta`.
    let choices = v.get("choices").and_then(Value::as_array);
    if v.get("object").and_then(Value::as_str) == Some("text_completion")
        || choices.is_some_and(|c| {
            c.iter()
                .any(|c| c.get("text").is_some() && c.get("delta").is_none())
        })
    {
        return Some(Api::Completions);
    }
    if v.get("object").and_then(Value::as_str) == Some("chat.completion.chunk") || choices.is_some()
    {
        return Some(Api::ChatCompletions);
    }
    // Google's error body carries a `status` name (`RESOURCE_EXHAUSTED`).
    if v.get("candidates").is_some()
        || v.get("usageMetadata").is_some()
        || v.get("modelVersion").is_some()
        || v.get("error").and_then(|e| e.get("status")).is_some()
    {
        return Some(Api::Gemini);
    }
    None
}

/// Classify one event of a stream of `api`.
pub fn classify(api: Api, name: Option<&str>, payload: Payload<'_>) -> Classified {
    let v = match payload {
        Payload::Done => {
            return Classified {
                kind: Some(Kind::Envelope),
                terminal: matches!(api, Api::ChatCompletions | Api::Completions),
                ..Default::default()
            }
        }
        Payload::Json(v) => v,
    };
    if event_type(name, v).is_some_and(is_keepalive) {
        return Classified {
            kind: Some(Kind::Heartbeat),
            ..Default::default()
        };
    }
    match api {
        Api::ChatCompletions => chat(v),
        Api::Completions => completions(v),
        Api::Responses => responses(name, v),
        Api::AnthropicMessages => anthropic(name, v),
        Api::Gemini => gemini(v),
    }
}

fn text(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

fn count(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64)
}

fn string(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

fn has_error(v: &Value) -> bool {
    v.get("error").is_some_and(|e| !e.is_null())
}

/// A Chat Completions chunk. Visible: `content` or `refusal`; effective: reasoning
/// (`reasoning_content` of DeepSeek and vLLM, `reasoning` and `reasoning_details` of
/// OpenRouter) and tool-call or function-call arguments. A tool call's id and name
/// without arguments is envelope: nothing of the call is produced yet.
fn chat(v: &Value) -> Classified {
    let choices = v.get("choices").and_then(Value::as_array);
    let deltas = || choices.into_iter().flatten().filter_map(|c| c.get("delta"));
    let visible =
        deltas().any(|d| !text(d.get("content")).is_empty() || !text(d.get("refusal")).is_empty());
    let effective = deltas().any(|d| {
        !text(d.get("reasoning_content")).is_empty()
            || !text(d.get("reasoning")).is_empty()
            || d.get("reasoning_details")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|r| !text(r.get("text")).is_empty() || !text(r.get("summary")).is_empty())
            || d.get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|t| !text(t.get("function").and_then(|f| f.get("arguments"))).is_empty())
            || !text(d.get("function_call").and_then(|f| f.get("arguments"))).is_empty()
    });
    choices_chunk(v, visible, effective)
}

/// A legacy Completions chunk: a choice's non-empty `text` is visible text (the endpoint
/// has no reasoning or tool-call fields); an empty one, a usage chunk (`choices: []`) and
/// the finish chunk without text are envelope.
fn completions(v: &Value) -> Classified {
    let visible = v
        .get("choices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| !text(c.get("text")).is_empty());
    choices_chunk(v, visible, false)
}

/// What Chat Completions and legacy Completions chunks share: an `error` object, a
/// choice's `finish_reason` ending the stream, `usage` with OpenAI's token names, the
/// model and the id. Groq puts its usage in its own `x_groq.usage` (OpenAI's token names
/// beside its timings, in the last chunk): read where the chunk has no `usage` of its own.
fn choices_chunk(v: &Value, visible: bool, effective: bool) -> Classified {
    let finished = v
        .get("choices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c.get("finish_reason").is_some_and(|f| !f.is_null()));
    let groq = v
        .get("x_groq")
        .and_then(|x| x.get("usage"))
        .filter(|u| u.is_object());
    let usage = v.get("usage").filter(|u| u.is_object()).or(groq);
    let seconds = |k: &str| {
        groq.and_then(|u| u.get(k))
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite())
    };
    let server = groq
        .map(|_| ServerTiming {
            source: "x_groq.usage",
            queue_time_s: seconds("queue_time"),
            prompt_time_s: seconds("prompt_time"),
            completion_time_s: seconds("completion_time"),
            total_time_s: seconds("total_time"),
        })
        .filter(|t| {
            t.queue_time_s.is_some()
                || t.prompt_time_s.is_some()
                || t.completion_time_s.is_some()
                || t.total_time_s.is_some()
        });
    Classified {
        kind: Some(if has_error(v) {
            Kind::Error
        } else if visible {
            Kind::VisibleText
        } else if effective {
            Kind::EffectiveOutput
        } else {
            Kind::Envelope
        }),
        terminal: finished,
        usage: Usage {
            input_tokens: count(usage.and_then(|u| u.get("prompt_tokens"))),
            output_tokens: count(usage.and_then(|u| u.get("completion_tokens"))),
        },
        server,
        model: string(v.get("model")),
        id: string(v.get("id")),
    }
}

/// A Responses event. Every `*.delta` (and `partial_image`) is model output; of those,
/// output text and refusal text are visible. `error` and `response.failed` are errors.
fn responses(name: Option<&str>, v: &Value) -> Classified {
    let ty = event_type(name, v).unwrap_or("");
    let response = v.get("response");
    let usage = response
        .and_then(|r| r.get("usage"))
        .filter(|u| u.is_object());
    let produced = if ty == "response.image_generation_call.partial_image" {
        !text(v.get("partial_image_b64")).is_empty()
    } else {
        ty.ends_with(".delta") && !text(v.get("delta")).is_empty()
    };
    let kind = if ty == "error" || ty == "response.failed" {
        Kind::Error
    } else if produced && matches!(ty, "response.output_text.delta" | "response.refusal.delta") {
        Kind::VisibleText
    } else if produced {
        Kind::EffectiveOutput
    } else {
        Kind::Envelope
    };
    Classified {
        kind: Some(kind),
        terminal: matches!(
            ty,
            "response.completed" | "response.incomplete" | "response.failed" | "error"
        ),
        usage: Usage {
            input_tokens: count(usage.and_then(|u| u.get("input_tokens"))),
            output_tokens: count(usage.and_then(|u| u.get("output_tokens"))),
        },
        server: None,
        model: string(response.and_then(|r| r.get("model"))),
        id: string(response.and_then(|r| r.get("id"))),
    }
}

/// An Anthropic Messages event. `message_delta.usage` is cumulative (the SDK's
/// `MessageDeltaUsage`: "the cumulative number of output tokens"), so the last one is the
/// figure; `message_start`'s `output_tokens` is a placeholder (1) taken before any output,
/// so only its input count is read.
fn anthropic(name: Option<&str>, v: &Value) -> Classified {
    let ty = event_type(name, v).unwrap_or("");
    let mut c = Classified {
        kind: Some(Kind::Envelope),
        ..Default::default()
    };
    match ty {
        "error" => {
            c.kind = Some(Kind::Error);
            c.terminal = true;
        }
        "message_start" => {
            let m = v.get("message");
            c.model = string(m.and_then(|m| m.get("model")));
            c.id = string(m.and_then(|m| m.get("id")));
            c.usage.input_tokens = count(
                m.and_then(|m| m.get("usage"))
                    .and_then(|u| u.get("input_tokens")),
            );
        }
        "content_block_delta" => {
            let d = v.get("delta");
            let field = |k: &str| text(d.and_then(|d| d.get(k)));
            c.kind = Some(match text(d.and_then(|d| d.get("type"))) {
                "text_delta" if !field("text").is_empty() => Kind::VisibleText,
                "thinking_delta" if !field("thinking").is_empty() => Kind::EffectiveOutput,
                "input_json_delta" if !field("partial_json").is_empty() => Kind::EffectiveOutput,
                // signature_delta, citations_delta and empty deltas.
                _ => Kind::Envelope,
            });
        }
        "message_delta" => {
            let u = v.get("usage");
            c.usage = Usage {
                input_tokens: count(u.and_then(|u| u.get("input_tokens"))),
                output_tokens: count(u.and_then(|u| u.get("output_tokens"))),
            };
        }
        "message_stop" => c.terminal = true,
        _ => {}
    }
    c
}

/// A Gemini `GenerateContentResponse`. A part's text is visible unless the part is a
/// thought (`"thought": true`: effective); a function call is effective. `usageMetadata`
/// is cumulative and on every event; output counts thought tokens with candidate tokens,
/// as OpenAI's and Anthropic's output counts include reasoning.
fn gemini(v: &Value) -> Classified {
    let candidates = v.get("candidates").and_then(Value::as_array);
    let parts = || {
        candidates
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("content").and_then(|c| c.get("parts")))
            .filter_map(Value::as_array)
            .flatten()
    };
    let thought = |p: &Value| p.get("thought").and_then(Value::as_bool) == Some(true);
    let visible = parts().any(|p| !thought(p) && !text(p.get("text")).is_empty());
    let effective = parts().any(|p| {
        (thought(p) && !text(p.get("text")).is_empty())
            || p.get("functionCall").is_some()
            || p.get("executableCode").is_some()
    });
    let finished = candidates
        .into_iter()
        .flatten()
        .any(|c| c.get("finishReason").is_some_and(|f| !f.is_null()));
    let u = v.get("usageMetadata");
    let candidates_tokens = count(u.and_then(|u| u.get("candidatesTokenCount")));
    let thoughts_tokens = count(u.and_then(|u| u.get("thoughtsTokenCount")));
    let output_tokens = match (candidates_tokens, thoughts_tokens) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    Classified {
        kind: Some(if has_error(v) {
            Kind::Error
        } else if visible {
            Kind::VisibleText
        } else if effective {
            Kind::EffectiveOutput
        } else {
            Kind::Envelope
        }),
        terminal: finished || has_error(v),
        usage: Usage {
            input_tokens: count(u.and_then(|u| u.get("promptTokenCount"))),
            output_tokens,
        },
        server: None,
        model: string(v.get("modelVersion")),
        id: string(v.get("responseId")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(api: Api, name: Option<&str>, v: Value) -> Kind {
        classify(api, name, Payload::Json(&v)).kind.unwrap()
    }

    #[test]
    fn chat_chunks_by_what_their_delta_holds() {
        let k = |v| kind(Api::ChatCompletions, None, v);
        let chunk =
            |d: Value| json!({"object": "chat.completion.chunk", "choices": [{"delta": d}]});
        assert_eq!(
            k(chunk(json!({"role": "assistant", "content": ""}))),
            Kind::Envelope
        );
        assert_eq!(k(chunk(json!({"content": "Hi"}))), Kind::VisibleText);
        assert_eq!(k(chunk(json!({"refusal": "No"}))), Kind::VisibleText);
        assert_eq!(
            k(chunk(json!({"reasoning_content": "so"}))),
            Kind::EffectiveOutput
        );
        assert_eq!(
            k(chunk(json!({"reasoning": "so", "content": ""}))),
            Kind::EffectiveOutput
        );
        let call = |args: &str| {
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": args}}]}),
            )
        };
        assert_eq!(k(call("")), Kind::Envelope);
        assert_eq!(k(call("{\"")), Kind::EffectiveOutput);
        assert_eq!(
            k(
                json!({"choices": [{"delta": {"content": ""}}], "error": {"code": 400, "message": "m"}})
            ),
            Kind::Error
        );
    }

    /// The legacy `/v1/completions` stream vLLM's benchmark reads was taken for Chat
    /// Completions, every chunk an envelope: its text is in `choices[].text`, not a delta.
    #[test]
    fn legacy_completions_text_is_visible_output() {
        let chunk = |text: &str, finish: Value| {
            json!({"id": "cmpl-1", "object": "text_completion", "model": "m",
                   "choices": [{"index": 0, "text": text, "logprobs": null, "finish_reason": finish}],
                   "usage": null})
        };
        assert_eq!(
            detect(None, &chunk(" the", Value::Null)),
            Some(Api::Completions)
        );
        // Without `object` (some servers leave it out), a choice's `text` still tells.
        assert_eq!(
            detect(None, &json!({"choices": [{"text": "a", "index": 0}]})),
            Some(Api::Completions)
        );
        assert_eq!(
            detect(None, &json!({"choices": [{"delta": {"content": "a"}}]})),
            Some(Api::ChatCompletions)
        );
        let k = |v: Value| kind(Api::Completions, None, v);
        assert_eq!(k(chunk(" the", Value::Null)), Kind::VisibleText);
        assert_eq!(k(chunk("", Value::Null)), Kind::Envelope);
        let last = classify(
            Api::Completions,
            None,
            Payload::Json(&chunk(".", json!("length"))),
        );
        assert_eq!((last.kind, last.terminal), (Some(Kind::VisibleText), true));
        assert_eq!(
            (last.model.as_deref(), last.id.as_deref()),
            (Some("m"), Some("cmpl-1"))
        );
        let usage = json!({"object": "text_completion", "choices": [],
                           "usage": {"prompt_tokens": 12, "completion_tokens": 25}});
        let u = classify(Api::Completions, None, Payload::Json(&usage));
        assert_eq!(u.kind, Some(Kind::Envelope));
        assert_eq!(
            u.usage,
            Usage {
                input_tokens: Some(12),
                output_tokens: Some(25)
            }
        );
        assert!(classify(Api::Completions, None, Payload::Done).terminal);
    }

    /// Groq's last chunk carries its usage in `x_groq.usage`, beside its own timings in
    /// seconds; neither was read.
    #[test]
    fn groq_x_groq_usage_is_the_usage_and_its_timings_the_providers() {
        let last = json!({"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "x_groq": {"id": "req_1", "usage": {"queue_time": 0.061348671, "prompt_tokens": 18,
                "prompt_time": 0.000211569, "completion_tokens": 439,
                "completion_time": 0.798181818, "total_tokens": 457, "total_time": 0.798393387}}});
        let c = classify(Api::ChatCompletions, None, Payload::Json(&last));
        assert_eq!(
            c.usage,
            Usage {
                input_tokens: Some(18),
                output_tokens: Some(439)
            }
        );
        assert_eq!(
            c.server,
            Some(ServerTiming {
                source: "x_groq.usage",
                queue_time_s: Some(0.061348671),
                prompt_time_s: Some(0.000211569),
                completion_time_s: Some(0.798181818),
                total_time_s: Some(0.798393387),
            })
        );
        // The first chunk's `x_groq` holds an id alone: no usage, no timing.
        let first = json!({"choices": [{"delta": {"role": "assistant", "content": ""}}],
                           "x_groq": {"id": "req_1"}});
        let c = classify(Api::ChatCompletions, None, Payload::Json(&first));
        assert_eq!((c.usage, c.server), (Usage::default(), None));
        // A top-level `usage` is the chunk's own and wins.
        let both = json!({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2},
                          "x_groq": {"usage": {"prompt_tokens": 18, "completion_tokens": 439}}});
        let c = classify(Api::ChatCompletions, None, Payload::Json(&both));
        assert_eq!(c.usage.output_tokens, Some(2));
    }

    #[test]
    fn chat_usage_and_the_end() {
        let v = json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 7}});
        let c = classify(Api::ChatCompletions, None, Payload::Json(&v));
        assert_eq!(
            c.usage,
            Usage {
                input_tokens: Some(9),
                output_tokens: Some(7)
            }
        );
        assert!(classify(Api::ChatCompletions, None, Payload::Done).terminal);
    }

    #[test]
    fn responses_deltas_and_errors() {
        let k = |ty: &str, v: Value| kind(Api::Responses, Some(ty), v);
        assert_eq!(
            k("response.output_text.delta", json!({"delta": "a"})),
            Kind::VisibleText
        );
        assert_eq!(
            k("response.output_text.delta", json!({"delta": ""})),
            Kind::Envelope
        );
        assert_eq!(
            k(
                "response.reasoning_summary_text.delta",
                json!({"delta": "a"})
            ),
            Kind::EffectiveOutput
        );
        assert_eq!(
            k(
                "response.function_call_arguments.delta",
                json!({"delta": "{"})
            ),
            Kind::EffectiveOutput
        );
        assert_eq!(k("response.output_item.added", json!({})), Kind::Envelope);
        assert_eq!(k("error", json!({"code": "server_error"})), Kind::Error);
        assert_eq!(k("response.failed", json!({})), Kind::Error);
    }

    #[test]
    fn anthropic_deltas_pings_and_errors() {
        let k = |ty: &str, v: Value| kind(Api::AnthropicMessages, Some(ty), v);
        let delta = |d: Value| json!({"type": "content_block_delta", "delta": d});
        assert_eq!(
            k(
                "content_block_delta",
                delta(json!({"type": "text_delta", "text": "a"}))
            ),
            Kind::VisibleText
        );
        assert_eq!(
            k(
                "content_block_delta",
                delta(json!({"type": "thinking_delta", "thinking": ""}))
            ),
            Kind::Envelope
        );
        assert_eq!(
            k(
                "content_block_delta",
                delta(json!({"type": "thinking_delta", "thinking": "a"}))
            ),
            Kind::EffectiveOutput
        );
        assert_eq!(
            k(
                "content_block_delta",
                delta(json!({"type": "input_json_delta", "partial_json": ""}))
            ),
            Kind::Envelope
        );
        assert_eq!(
            k(
                "content_block_delta",
                delta(json!({"type": "signature_delta", "signature": "s"}))
            ),
            Kind::Envelope
        );
        assert_eq!(k("ping", json!({"type": "ping"})), Kind::Heartbeat);
        assert_eq!(
            k(
                "error",
                json!({"type": "error", "error": {"type": "overloaded_error"}})
            ),
            Kind::Error
        );
    }

    #[test]
    fn anthropic_message_start_output_is_not_read() {
        let v = json!({"type": "message_start", "message": {"model": "m", "id": "msg_1", "usage": {"input_tokens": 11, "output_tokens": 1}}});
        let c = classify(
            Api::AnthropicMessages,
            Some("message_start"),
            Payload::Json(&v),
        );
        assert_eq!(
            c.usage,
            Usage {
                input_tokens: Some(11),
                output_tokens: None
            }
        );
        assert_eq!(
            (c.model.as_deref(), c.id.as_deref()),
            (Some("m"), Some("msg_1"))
        );
    }

    #[test]
    fn gemini_parts_and_cumulative_usage() {
        let k = |v| kind(Api::Gemini, None, v);
        let part = |p: Value| json!({"candidates": [{"content": {"parts": [p]}}]});
        assert_eq!(k(part(json!({"text": "a"}))), Kind::VisibleText);
        assert_eq!(
            k(part(json!({"text": "a", "thought": true}))),
            Kind::EffectiveOutput
        );
        assert_eq!(
            k(part(json!({"functionCall": {"name": "f", "args": {}}}))),
            Kind::EffectiveOutput
        );
        assert_eq!(k(part(json!({"text": ""}))), Kind::Envelope);
        let v = json!({"candidates": [{"finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 8, "thoughtsTokenCount": 2}});
        let c = classify(Api::Gemini, None, Payload::Json(&v));
        assert!(c.terminal);
        assert_eq!(c.usage.output_tokens, Some(10));
    }

    #[test]
    fn the_api_is_told_by_content() {
        let d = |name: Option<&str>, v: Value| detect(name, &v);
        assert_eq!(
            d(
                None,
                json!({"object": "chat.completion.chunk", "choices": []})
            ),
            Some(Api::ChatCompletions)
        );
        assert_eq!(d(Some("response.created"), json!({})), Some(Api::Responses));
        assert_eq!(
            d(None, json!({"type": "response.created"})),
            Some(Api::Responses)
        );
        assert_eq!(
            d(Some("message_start"), json!({})),
            Some(Api::AnthropicMessages)
        );
        assert_eq!(d(None, json!({"candidates": []})), Some(Api::Gemini));
        assert_eq!(d(Some("ping"), json!({"type": "ping"})), None);
        assert_eq!(d(None, json!({"a": 1})), None);
    }
}
