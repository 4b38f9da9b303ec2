//! The typed floor: serde_json reading every document into structs that hold what a
//! trajectory record needs from it (roles, texts, tool calls with their arguments, results,
//! usage, end status), owned, and skipping the rest as serde skips unknown fields. This is
//! what a reader written for one format costs at best, so coroner, which reads the same fields
//! and then analyses them, is measured against it as well as against `serde_json::Value`.
//!
//! One schema per family of the generated corpus: chat messages (mini-swe-agent, Inspect
//! samples), ATIF steps (Harbor), Claude Code JSONL lines. A document is read by the schema its
//! kind of file implies (`.json`: the chat or ATIF fields, whichever it has; `.jsonl`: Claude
//! Code lines; `.eval` members: Inspect samples and headers).

use serde::Deserialize;
use serde::de::{self, IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;

/// Message content: a string, or a list of content blocks (texts, tool uses, tool results).
#[derive(Debug, Default)]
pub struct Text {
    pub text: String,
    pub blocks: Vec<Block>,
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Text, E> {
                Ok(Text { text: s.to_string(), blocks: Vec::new() })
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Text, E> {
                Ok(Text { text: s, blocks: Vec::new() })
            }
            fn visit_unit<E: de::Error>(self) -> Result<Text, E> {
                Ok(Text::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
                let mut blocks = Vec::new();
                while let Some(b) = seq.next_element::<Block>()? {
                    blocks.push(b);
                }
                Ok(Text { text: String::new(), blocks })
            }
        }
        d.deserialize_any(V)
    }
}

/// One content block, of any of the chat APIs' kinds.
#[derive(Debug, Deserialize)]
pub struct Block {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub text: Option<String>,
    pub thinking: Option<String>,
    pub id: Option<String>,
    pub name: Option<String>,
    pub input: Option<Value>,
    pub tool_use_id: Option<String>,
    pub content: Option<Text>,
    pub is_error: Option<bool>,
}

/// Token counts under the names the formats use.
#[derive(Debug, Deserialize)]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
}

/// A tool call as the chat-completions API (`function` an object) or Inspect (`function` the
/// name) writes it.
#[derive(Debug, Deserialize)]
pub struct ToolCall {
    pub id: Option<String>,
    pub function: Option<Function>,
    pub arguments: Option<Value>,
}

#[derive(Debug)]
pub enum Function {
    Name(String),
    Call { name: String, arguments: Value },
}

impl<'de> Deserialize<'de> for Function {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Call {
            name: String,
            #[serde(default)]
            arguments: Value,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Function;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a function name or {name, arguments}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Function, E> {
                Ok(Function::Name(s.to_string()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Function, A::Error> {
                let c = Call::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Function::Call { name: c.name, arguments: c.arguments })
            }
        }
        d.deserialize_any(V)
    }
}

/// A chat message: mini-swe-agent, Inspect, a provider response's reply.
#[derive(Debug, Deserialize)]
pub struct Message {
    pub role: Option<String>,
    pub content: Option<Text>,
    pub tool_calls: Option<Vec<ToolCall>>,
    pub tool_call_id: Option<String>,
    pub id: Option<String>,
    pub extra: Option<Extra>,
}

/// mini-swe-agent's `extra`: the provider's response, the command's exit code.
#[derive(Debug, Deserialize)]
pub struct Extra {
    pub response: Option<Response>,
    pub returncode: Option<i64>,
    pub timestamp: Option<f64>,
}

#[derive(Debug, Deserialize)]
pub struct Response {
    #[serde(default)]
    pub choices: Vec<Choice>,
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub struct Choice {
    pub finish_reason: Option<String>,
    pub message: Option<Message>,
}

/// A `.json` document: mini-swe-agent's `{info, messages}` or ATIF's `{agent, steps}`.
#[derive(Debug, Deserialize)]
pub struct JsonDoc {
    pub info: Option<Info>,
    pub messages: Option<Vec<Message>>,
    pub trajectory_format: Option<String>,
    pub instance_id: Option<String>,
    /// ATIF writes a string; SWE-bench reports beside the trajectories an integer.
    pub schema_version: Option<Value>,
    pub session_id: Option<String>,
    pub agent: Option<Value>,
    pub steps: Option<Vec<Step>>,
    pub final_metrics: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub struct Info {
    pub exit_status: Option<String>,
    pub submission: Option<String>,
    pub model_stats: Option<Value>,
    pub config: Option<Value>,
}

/// One ATIF step.
#[derive(Debug, Deserialize)]
pub struct Step {
    pub step_id: Option<u64>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub model_name: Option<String>,
    pub message: Option<Text>,
    pub reasoning_content: Option<String>,
    pub tool_calls: Option<Vec<AtifCall>>,
    pub observation: Option<Observation>,
    pub metrics: Option<Usage>,
    pub extra: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub struct AtifCall {
    pub tool_call_id: Option<String>,
    pub function_name: Option<String>,
    pub arguments: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub struct Observation {
    #[serde(default)]
    pub results: Vec<ObservationResult>,
}

#[derive(Debug, Deserialize)]
pub struct ObservationResult {
    pub source_call_id: Option<String>,
    pub content: Option<Text>,
}

/// One Claude Code JSONL line.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaudeLine {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub uuid: Option<String>,
    pub parent_uuid: Option<String>,
    pub session_id: Option<String>,
    pub timestamp: Option<String>,
    pub cwd: Option<String>,
    pub version: Option<String>,
    pub is_sidechain: Option<bool>,
    pub message: Option<ClaudeMessage>,
}

#[derive(Debug, Deserialize)]
pub struct ClaudeMessage {
    pub role: Option<String>,
    pub model: Option<String>,
    pub content: Option<Text>,
    pub stop_reason: Option<String>,
    pub usage: Option<Usage>,
}

/// An Inspect sample (`samples/*.json` in an `.eval`); other members are read as [`Value`]-free
/// skips.
#[derive(Debug, Deserialize)]
pub struct Sample {
    pub id: Option<Value>,
    pub epoch: Option<u64>,
    #[serde(default)]
    pub messages: Vec<Message>,
    pub output: Option<Value>,
    pub scores: Option<Value>,
    pub error: Option<Value>,
    pub limit: Option<Value>,
    #[serde(default)]
    pub events: Vec<Event>,
    pub model_usage: Option<Value>,
    pub total_time: Option<f64>,
}

/// An Inspect event: the model and tool events a reader looks into; the rest are skipped.
#[derive(Debug, Deserialize)]
pub struct Event {
    pub event: Option<String>,
    pub timestamp: Option<String>,
    pub id: Option<String>,
    pub function: Option<String>,
    pub output: Option<EventOutput>,
    pub tools: Option<Vec<EventTool>>,
}

#[derive(Debug, Deserialize)]
pub struct EventOutput {
    #[serde(default)]
    pub choices: Vec<Choice>,
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub struct EventTool {
    pub name: Option<String>,
}

/// Which schema a document is read with.
#[derive(Debug, Clone, Copy)]
pub enum Schema {
    Json,
    ClaudeLine,
    EvalSample,
    EvalOther,
}

/// Reads `bytes` with `schema`; `Err` when they do not fit it.
///
/// # Errors
/// The serde error when the document is not JSON or does not have the schema's shape.
pub fn parse(schema: Schema, bytes: &[u8]) -> Result<(), serde_json::Error> {
    match schema {
        Schema::Json => std::hint::black_box(serde_json::from_slice::<JsonDoc>(bytes).map(drop)),
        Schema::ClaudeLine => std::hint::black_box(serde_json::from_slice::<ClaudeLine>(bytes).map(drop)),
        Schema::EvalSample => std::hint::black_box(serde_json::from_slice::<Sample>(bytes).map(drop)),
        Schema::EvalOther => serde_json::from_slice::<IgnoredAny>(bytes).map(drop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_schema_reads_the_fields_of_its_format() {
        let mini: JsonDoc = serde_json::from_str(
            r#"{"info": {"exit_status": "Submitted"}, "messages": [{"role": "assistant", "content": "x",
                "extra": {"response": {"choices": [{"message": {"content": [{"type": "text", "text": "x"}]}}],
                "usage": {"prompt_tokens": 3}}}}]}"#,
        )
        .unwrap();
        let m = &mini.messages.unwrap()[0];
        assert_eq!(m.content.as_ref().unwrap().text, "x");
        let r = m.extra.as_ref().unwrap().response.as_ref().unwrap();
        assert_eq!(r.usage.as_ref().unwrap().prompt_tokens, Some(3));
        assert_eq!(r.choices[0].message.as_ref().unwrap().content.as_ref().unwrap().blocks[0].text.as_deref(), Some("x"));

        let atif: JsonDoc = serde_json::from_str(
            r#"{"steps": [{"step_id": 1, "source": "agent", "tool_calls": [{"function_name": "bash", "arguments": {"c": 1}}],
                "observation": {"results": [{"content": "out"}]}}]}"#,
        )
        .unwrap();
        let s = &atif.steps.unwrap()[0];
        assert_eq!(s.tool_calls.as_ref().unwrap()[0].function_name.as_deref(), Some("bash"));
        assert_eq!(s.observation.as_ref().unwrap().results[0].content.as_ref().unwrap().text, "out");

        let inspect: Sample = serde_json::from_str(
            r#"{"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": "bash", "arguments": {}}]},
                {"role": "assistant", "tool_calls": [{"function": {"name": "bash", "arguments": "{}"}}]}],
                "events": [{"event": "model", "output": {"usage": {"input_tokens": 5}}}]}"#,
        )
        .unwrap();
        assert!(matches!(inspect.messages[0].tool_calls.as_ref().unwrap()[0].function, Some(Function::Name(ref n)) if n == "bash"));
        assert!(
            matches!(inspect.messages[1].tool_calls.as_ref().unwrap()[0].function, Some(Function::Call { ref name, .. }) if name == "bash")
        );
        assert_eq!(inspect.events[0].output.as_ref().unwrap().usage.as_ref().unwrap().input_tokens, Some(5));

        let line: ClaudeLine = serde_json::from_str(
            r#"{"type": "assistant", "parentUuid": "p", "message": {"role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "a"}}]}}"#,
        )
        .unwrap();
        assert_eq!(line.parent_uuid.as_deref(), Some("p"));
        assert_eq!(line.message.unwrap().content.unwrap().blocks[0].name.as_deref(), Some("Read"));

        assert!(parse(Schema::Json, b"[1, 2]").is_err());
        assert!(parse(Schema::EvalOther, b"[1, 2]").is_ok());
    }
}
