//! The shapes of a mini-swe-agent `.traj.json` as serde reads them: `info` (status, submission,
//! stats, config), the messages of both generations, and the raw API responses kept in
//! `extra.response`, read leniently because providers differ.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::common::uint;
use crate::model::{Tokens, Trajectory};

#[derive(Deserialize)]
pub(super) struct RawDoc<'a> {
    #[serde(default)]
    pub info: RawInfo,
    #[serde(borrow)]
    pub messages: Vec<&'a RawValue>,
    #[serde(default)]
    pub trajectory_format: Option<String>,
    #[serde(default)]
    pub instance_id: Option<String>,
}

#[derive(Deserialize, Default)]
pub(super) struct RawInfo {
    pub exit_status: Option<String>,
    pub submission: Option<String>,
    pub model_stats: Option<RawStats>,
    pub mini_version: Option<String>,
    pub config: Option<RawConfig>,
    pub exception_str: Option<String>,
    pub traceback: Option<String>,
}

#[derive(Deserialize, Default)]
pub(super) struct RawStats {
    pub instance_cost: Option<f64>,
    pub api_calls: Option<u64>,
}

#[derive(Deserialize, Default)]
pub(super) struct RawConfig {
    pub agent: Option<RawAgentConfig>,
    pub model: Option<RawModelConfig>,
}

/// Limits and templates; v2 moved the templates to the model config.
#[derive(Deserialize, Default, Clone)]
pub(super) struct RawAgentConfig {
    pub step_limit: Option<f64>,
    pub cost_limit: Option<f64>,
    pub wall_time_limit_seconds: Option<f64>,
    pub max_consecutive_format_errors: Option<f64>,
    pub format_error_template: Option<String>,
    pub timeout_template: Option<String>,
    pub action_regex: Option<String>,
}

#[derive(Deserialize, Default)]
pub(super) struct RawModelConfig {
    pub model_name: Option<String>,
    pub format_error_template: Option<String>,
    pub action_regex: Option<String>,
}

/// One message; chat-completions, Responses-API items and hand-formatted v1 messages share it.
#[derive(Deserialize)]
pub(super) struct RawMsg<'a> {
    pub role: Option<String>,
    #[serde(default)]
    pub content: Value,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub tool_calls: Option<Vec<RawToolCall>>,
    pub tool_call_id: Option<String>,
    pub call_id: Option<String>,
    /// Responses API: the output items of an assistant response, or a function call's output.
    #[serde(default)]
    pub output: Value,
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub reasoning: Value,
    pub timestamp: Option<f64>,
    #[serde(borrow)]
    pub extra: Option<RawExtra<'a>>,
}

#[derive(Deserialize)]
pub(super) struct RawToolCall {
    pub id: Option<String>,
    pub function: Option<RawFunction>,
}

#[derive(Deserialize)]
pub(super) struct RawFunction {
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
}

#[derive(Deserialize, Default)]
pub(super) struct RawExtra<'a> {
    pub actions: Option<Vec<Value>>,
    /// The raw API response; its shape depends on the provider (or is a `repr` string), so it
    /// is read leniently and only when needed.
    #[serde(borrow)]
    pub response: Option<&'a RawValue>,
    pub cost: Option<f64>,
    pub timestamp: Option<f64>,
    pub returncode: Option<i64>,
    /// Only whether it is there matters (it repeats the tool output), so it is skipped, not
    /// copied.
    pub raw_output: Option<serde::de::IgnoredAny>,
    pub exception_info: Option<String>,
    pub exception_type: Option<String>,
    pub interrupt_type: Option<String>,
    pub model_response: Option<String>,
    pub exit_status: Option<String>,
    pub submission: Option<String>,
    pub exception_str: Option<String>,
    pub traceback: Option<String>,
}

/// The raw API response, read leniently: providers differ and a failed dump is a string.
/// The reply message is kept raw: it repeats the message's own text and calls, and only a
/// reply that failed to parse (v2 format errors) needs it whole.
#[derive(Deserialize)]
pub(super) struct RawResponse<'a> {
    #[serde(default)]
    pub usage: Value,
    #[serde(borrow, default)]
    pub choices: Vec<RawChoice<'a>>,
    /// Responses API output items.
    #[serde(default)]
    pub output: Value,
}

#[derive(Deserialize)]
pub(super) struct RawChoice<'a> {
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

impl RawChoice<'_> {
    /// The whole reply message (`Null` when absent or unreadable).
    pub fn message(&self) -> Value {
        self.message.and_then(|m| serde_json::from_str(m.get()).ok()).unwrap_or(Value::Null)
    }

    /// The reply's `reasoning_content` (or, when that key is absent, `reasoning`) when it is a
    /// string, read without building the rest of the message.
    pub fn reasoning(&self) -> Option<String> {
        /// `Some` whenever the key is present, `Some(Null)` for an explicit null.
        fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
            Value::deserialize(d).map(Some)
        }
        #[derive(Deserialize)]
        struct Reasoning {
            #[serde(default, deserialize_with = "present")]
            reasoning_content: Option<Value>,
            #[serde(default, deserialize_with = "present")]
            reasoning: Option<Value>,
        }
        let r: Reasoning = serde_json::from_str(self.message?.get()).ok()?;
        r.reasoning_content.or(r.reasoning).and_then(|v| v.as_str().map(ToString::to_string))
    }
}

pub(super) fn response_of<'a>(extra: Option<&RawExtra<'a>>) -> Option<RawResponse<'a>> {
    serde_json::from_str(extra?.response?.get()).ok()
}

pub(super) fn unix_time(secs: f64) -> Option<jiff::Timestamp> {
    if !secs.is_finite() {
        return None;
    }
    #[expect(clippy::cast_possible_truncation, reason = "microseconds since 1970 fit i128")]
    let micros = (secs * 1e6).round() as i128;
    jiff::Timestamp::from_nanosecond(micros * 1000).ok()
}

pub(super) fn message_time(m: &RawMsg<'_>) -> Option<jiff::Timestamp> {
    m.extra.as_ref().and_then(|e| e.timestamp).or(m.timestamp).and_then(unix_time)
}

/// Token counts of one API response, chat-completions or Responses API.
pub(super) fn tokens_of(usage: &Value) -> Option<Tokens> {
    let first = |paths: &[&str]| paths.iter().find_map(|p| uint(usage.pointer(p)));
    let t = Tokens {
        prompt: first(&["/prompt_tokens", "/input_tokens"]),
        completion: first(&["/completion_tokens", "/output_tokens"]),
        reasoning: first(&["/completion_tokens_details/reasoning_tokens", "/output_tokens_details/reasoning_tokens"]),
        cached: first(&["/prompt_tokens_details/cached_tokens", "/input_tokens_details/cached_tokens"]),
    };
    (t.prompt.is_some() || t.completion.is_some()).then_some(t)
}

/// The run's token usage: the sum over the replies that report theirs.
pub(super) fn sum_tokens(t: &mut Trajectory) {
    let mut any = false;
    let (mut p, mut c, mut r, mut k) = (0u64, 0u64, 0u64, 0u64);
    for tok in t.steps.iter().filter_map(|s| s.tokens.as_ref()) {
        any = true;
        p += tok.prompt.unwrap_or(0);
        c += tok.completion.unwrap_or(0);
        r += tok.reasoning.unwrap_or(0);
        k += tok.cached.unwrap_or(0);
    }
    if any {
        t.usage.prompt_tokens = Some(p);
        t.usage.completion_tokens = Some(c);
        t.usage.reasoning_tokens = Some(r);
        t.usage.cached_tokens = Some(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times_are_rounded_to_microseconds() {
        assert_eq!(unix_time(1_706_000_000.5).unwrap().to_string(), "2024-01-23T08:53:20.5Z");
    }
}
