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
    /// is read leniently, in the same pass as the message around it.
    #[serde(borrow, default)]
    pub response: Lenient<'a>,
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
/// reply that failed to parse (v2 format errors) needs it whole. Read by [`Lenient`].
pub(super) struct RawResponse<'a> {
    pub usage: Value,
    pub choices: Vec<RawChoice<'a>>,
    /// Responses API output items.
    pub output: Value,
}

pub(super) struct RawChoice<'a> {
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

pub(super) fn response_of<'e, 'a>(extra: Option<&'e RawExtra<'a>>) -> Option<&'e RawResponse<'a>> {
    extra?.response.0.as_ref()
}

/// `extra.response` when it has [`RawResponse`]'s shape, `None` for anything else (a `repr`
/// string, `null`, a `choices` that is not a list of objects, a repeated key): what reading its
/// raw text again with serde gave, without reading those bytes twice (it was a tenth of
/// mini-swe-agent's reading time). Never fails on well-formed JSON, so a strange response does
/// not cost the message.
#[derive(Default)]
pub(super) struct Lenient<'a>(pub Option<RawResponse<'a>>);

/// A `choices` list: `None` unless a list of objects.
#[derive(Default)]
struct Choices<'a>(Option<Vec<RawChoice<'a>>>);

/// One choice: `None` when it is not an object or repeats `message`.
#[derive(Default)]
struct Choice<'a>(Option<RawChoice<'a>>);

/// The visitor methods of a lenient reader for the scalars it does not read: each is read as
/// `Self::Value::default()`.
macro_rules! the_rest_is_default {
    () => {
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
    };
}

/// A visitor of `T` that borrows from the input.
struct Of<'a, T>(std::marker::PhantomData<&'a T>);

impl<'a, T> Of<'a, T> {
    const NEW: Self = Of(std::marker::PhantomData);
}

impl<'de: 'a, 'a> serde::de::Visitor<'de> for Of<'a, Lenient<'a>> {
    type Value = Lenient<'a>;
    the_rest_is_default!();
    /// serde's derived reading also takes a struct's fields as a list, in order.
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Lenient<'a>, A::Error> {
        let usage = seq.next_element::<Value>()?;
        let choices = if usage.is_some() { seq.next_element::<Choices<'a>>()? } else { None };
        let output = if choices.is_some() { seq.next_element::<Value>()? } else { None };
        let mut fits = true;
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
            fits = false;
        }
        let choices = choices.map_or(Some(Vec::new()), |c| c.0);
        Ok(Lenient(choices.filter(|_| fits).map(|choices| RawResponse {
            usage: usage.unwrap_or_default(),
            choices,
            output: output.unwrap_or_default(),
        })))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Lenient<'a>, A::Error> {
        let (mut usage, mut choices, mut output) = (None, None, None);
        let mut fits = true;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                "usage" => fits &= usage.replace(map.next_value::<Value>()?).is_none(),
                "output" => fits &= output.replace(map.next_value::<Value>()?).is_none(),
                "choices" => fits &= choices.replace(map.next_value::<Choices<'a>>()?).is_none(),
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        let choices = choices.map_or(Some(Vec::new()), |c| c.0);
        Ok(Lenient(choices.filter(|_| fits).map(|choices| RawResponse {
            usage: usage.unwrap_or_default(),
            choices,
            output: output.unwrap_or_default(),
        })))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Lenient<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Of::<Lenient<'a>>::NEW)
    }
}

impl<'de: 'a, 'a> serde::de::Visitor<'de> for Of<'a, Choices<'a>> {
    type Value = Choices<'a>;
    the_rest_is_default!();
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Choices<'a>, A::Error> {
        let mut out = Some(Vec::new());
        while let Some(Choice(c)) = seq.next_element::<Choice<'a>>()? {
            match (c, out.as_mut()) {
                (Some(c), Some(v)) => v.push(c),
                _ => out = None,
            }
        }
        Ok(Choices(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Choices<'a>, A::Error> {
        while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
        Ok(Choices(None))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Choices<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Of::<Choices<'a>>::NEW)
    }
}

impl<'de: 'a, 'a> serde::de::Visitor<'de> for Of<'a, Choice<'a>> {
    type Value = Choice<'a>;
    the_rest_is_default!();
    /// As a list, as serde's derived reading takes it: `[message]`.
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Choice<'a>, A::Error> {
        let message = seq.next_element::<Option<&'a RawValue>>()?;
        let mut fits = true;
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
            fits = false;
        }
        Ok(Choice(fits.then(|| RawChoice { message: message.flatten() })))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Choice<'a>, A::Error> {
        let mut message: Option<Option<&'a RawValue>> = None;
        let mut fits = true;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "message" {
                fits &= message.replace(map.next_value::<Option<&'a RawValue>>()?).is_none();
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(Choice(fits.then(|| RawChoice { message: message.flatten() })))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Choice<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Of::<Choice<'a>>::NEW)
    }
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

    /// Reads `extra.response` as it was read before [`Lenient`]: its raw text again, with
    /// serde's derived reading of the same fields, `None` on any error.
    fn read_twice(raw: &str) -> Option<(String, String, Vec<String>)> {
        #[derive(Deserialize)]
        struct Old<'a> {
            #[serde(default)]
            usage: Value,
            #[serde(borrow, default)]
            choices: Vec<OldChoice<'a>>,
            #[serde(default)]
            output: Value,
        }
        #[derive(Deserialize)]
        struct OldChoice<'a> {
            #[serde(borrow, default)]
            message: Option<&'a RawValue>,
        }
        let r: Old<'_> = serde_json::from_str(raw).ok()?;
        Some((
            r.usage.to_string(),
            r.output.to_string(),
            r.choices.iter().map(|c| c.message.map(|m| m.get().to_string()).unwrap_or_default()).collect(),
        ))
    }

    #[test]
    fn a_response_read_in_one_pass_is_what_reading_it_again_gave() {
        let cases = [
            r#"{"usage": {"prompt_tokens": 3}, "choices": [{"index": 0, "message": {"content": "x", "reasoning_content": "r"}}]}"#,
            r#"{"output": [{"type": "message"}], "usage": null}"#,
            r#"{}"#,
            r#""ModelResponse(id='x')""#,
            "null",
            "12",
            "-1.5",
            "true",
            r#"[{"usage": 1}, [], "x"]"#,
            r#"[{"usage": 1}, [[{"a": 1}], []], "x"]"#,
            r#"[{"usage": 1}, [[1, 2]]]"#,
            r#"[1]"#,
            r#"[]"#,
            r#"[1, [], 2, 3]"#,
            r#"{"choices": null}"#,
            r#"{"choices": {}}"#,
            r#"{"choices": "x"}"#,
            r#"{"choices": [null]}"#,
            r#"{"choices": [{"message": null}, {"finish_reason": "stop"}]}"#,
            r#"{"choices": [{"message": 1, "message": 2}]}"#,
            r#"{"choices": [[], {"message": {}}]}"#,
            r#"{"usage": 1, "usage": 2}"#,
            r#"{"choices": [], "choices": []}"#,
            r#"{"us\u0061ge": {"input_tokens": 7}, "x": {"usage": [1]}}"#,
        ];
        for raw in cases {
            #[derive(Deserialize)]
            struct Holder<'a> {
                #[serde(borrow)]
                response: Lenient<'a>,
                after: u8,
            }
            let doc = format!(r#"{{"response": {raw}, "after": 1}}"#);
            let h: Holder<'_> = serde_json::from_str(&doc).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(h.after, 1, "{raw}: the reading goes on after the response");
            let one = h.response.0.map(|r| {
                (
                    r.usage.to_string(),
                    r.output.to_string(),
                    r.choices.iter().map(|c| c.message.map(|m| m.get().to_string()).unwrap_or_default()).collect(),
                )
            });
            assert_eq!(one, read_twice(raw), "{raw}");
        }
    }

    #[test]
    fn unix_times_are_rounded_to_microseconds() {
        assert_eq!(unix_time(1_706_000_000.5).unwrap().to_string(), "2024-01-23T08:53:20.5Z");
    }
}
