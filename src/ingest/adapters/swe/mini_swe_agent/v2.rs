//! v2 (`mini-swe-agent-1.1`): the model's native messages with an `extra` dict. Tool calls are
//! answered by `tool` messages carrying `extra.returncode`; a reply the harness rejected is a
//! user message with `extra.interrupt_type: FormatError` (the reply itself survives only in
//! `extra.response` or `extra.model_response`, when at all); the run ends with an `exit`
//! message carrying `extra.exit_status` and `extra.submission`.

use serde_json::Value;
use std::ops::Range;

use super::raw::{RawMsg, response_of};
use super::steps::{Builder, Pending, PendingCall, bash_call, submits};
use crate::ingest::adapters::shared::common::{content_text, tool_call};
use crate::ingest::adapters::swe::common::complaint_summary;
use crate::model::{Role, ToolCall, ToolResult};

/// The `extra.interrupt_type` of a reply the harness could not turn into actions.
const FORMAT_ERROR: &str = "FormatError";

impl Builder<'_> {
    pub(super) fn v2_message(&mut self, at: &Range<usize>, m: &RawMsg<'_>) {
        let extra = m.extra.as_ref();
        if m.role.as_deref() == Some("exit") || extra.is_some_and(|e| e.exit_status.is_some()) {
            self.v2_exit(at, m);
            return;
        }
        let responses_item = m.output.is_array() && m.role.is_none();
        match m.role.as_deref() {
            Some("system") => {
                self.push_text(at, Role::System, content_text(&m.content), m);
            }
            Some("assistant") => self.v2_assistant(at, m),
            None if responses_item => self.v2_assistant(at, m),
            Some("tool") => self.v2_tool(at, m),
            None if m.kind.as_deref() == Some("function_call_output") => self.v2_tool(at, m),
            _ => {
                let text = content_text(&m.content);
                if extra.and_then(|e| e.interrupt_type.as_deref()) == Some(FORMAT_ERROR) {
                    self.v2_format_error(at, m, text);
                } else if extra.is_some_and(|e| e.raw_output.is_some() || e.returncode.is_some()) {
                    self.v2_tool(at, m);
                } else if !self.seen_assistant {
                    self.push_text(at, Role::User, text, m);
                } else {
                    self.push_text(at, Role::Environment, text, m);
                }
            }
        }
    }

    /// Text and calls of a reply: chat-completions (`content`, `tool_calls`) or a Responses
    /// API response (`output` items).
    fn reply_parts(message: &Value) -> (String, Vec<ToolCall>) {
        if let Some(items) = message.get("output").and_then(Value::as_array) {
            let mut text = Vec::new();
            let mut calls = Vec::new();
            for it in items {
                match it.get("type").and_then(Value::as_str) {
                    Some("function_call") => {
                        let id = it.get("call_id").or_else(|| it.get("id")).and_then(Value::as_str).map(ToString::to_string);
                        let name = it.get("name").and_then(Value::as_str).unwrap_or("");
                        calls.push(tool_call(id, name, it.get("arguments").unwrap_or(&Value::Null)));
                    }
                    Some("message") => text.push(content_text(it.get("content").unwrap_or(&Value::Null))),
                    _ => {}
                }
            }
            return (text.join("\n"), calls);
        }
        let text = content_text(message.get("content").unwrap_or(&Value::Null));
        let calls = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                let id = c.get("id").and_then(Value::as_str).map(ToString::to_string);
                let f = c.get("function").unwrap_or(c);
                let name = f.get("name").and_then(Value::as_str).unwrap_or("");
                tool_call(id, name, f.get("arguments").unwrap_or(&Value::Null))
            })
            .collect();
        (text, calls)
    }

    fn pending_of(step: usize, calls: &[ToolCall]) -> Pending {
        let calls = calls
            .iter()
            .enumerate()
            .map(|(k, c)| PendingCall {
                call: k,
                id: c.id.clone(),
                command: c.arguments.get("command").and_then(Value::as_str).unwrap_or("").to_string(),
                answered: false,
            })
            .collect();
        Pending { step, calls }
    }

    fn v2_assistant(&mut self, at: &Range<usize>, m: &RawMsg<'_>) {
        let response = response_of(m.extra.as_ref());
        let (text, mut calls) = if m.role.is_none() {
            let as_value = serde_json::json!({ "output": m.output });
            Self::reply_parts(&as_value)
        } else {
            let text = content_text(&m.content);
            let calls: Vec<ToolCall> = m
                .tool_calls
                .iter()
                .flatten()
                .filter_map(|c| c.function.as_ref().map(|f| tool_call(c.id.clone(), &f.name, &f.arguments)))
                .collect();
            (text, calls)
        };
        // Text-based models: the harness's parsed actions are the calls.
        if calls.is_empty() {
            for a in m.extra.as_ref().and_then(|e| e.actions.as_ref()).into_iter().flatten() {
                if let Some(cmd) = a.get("command").and_then(Value::as_str) {
                    let id = a.get("tool_call_id").and_then(Value::as_str).map(ToString::to_string);
                    calls.push(bash_call(id, cmd));
                }
            }
        }
        let mut step = Self::assistant(m, text, response);
        step.tool_calls = calls;
        self.seen_assistant = true;
        let pending = Self::pending_of(0, &step.tool_calls);
        let ix = self.push(at, step);
        self.pending = Some(Pending { step: ix, ..pending });
    }

    fn v2_tool(&mut self, at: &Range<usize>, m: &RawMsg<'_>) {
        let extra = m.extra.as_ref();
        let call_id = m.tool_call_id.clone().or_else(|| m.call_id.clone());
        let text = if m.output.is_string() { content_text(&m.output) } else { content_text(&m.content) };
        let mut p = self.pending.take().unwrap_or(Pending { step: usize::MAX, calls: Vec::new() });
        let k = match &call_id {
            Some(id) => p.calls.iter().position(|c| c.id.as_deref() == Some(id.as_str()) && !c.answered),
            None => p.calls.iter().position(|c| !c.answered),
        };
        let command = k.map(|k| p.calls[k].command.clone()).unwrap_or_default();
        let mut r = match k {
            Some(k) => Self::result_for(&mut p, k, text),
            None => ToolResult::new(text),
        };
        if r.call_id.is_none() {
            r.call_id = call_id;
        }
        r.exit_code = extra.and_then(|e| e.returncode);
        let exception = extra.and_then(|e| e.exception_info.as_deref()).filter(|s| !s.is_empty());
        r.is_error = r.exit_code.is_some_and(|c| c != 0) || exception.is_some();
        r.error_type = extra.and_then(|e| e.exception_type.clone()).filter(|s| !s.is_empty());
        if let Some(kind) = r.error_type.clone() {
            let at = self.steps.len();
            self.note_command(&format!("raised {kind}"), at, &command);
        }
        if p.step != usize::MAX {
            self.pending = Some(p);
        }
        self.push_result(at, r, Some(m));
    }

    /// v2 keeps a failed reply only inside the complaint (`extra.response`, or
    /// `extra.model_response` for text-based models); it becomes the assistant step it was,
    /// and the complaint answers the calls it made (the harness ran none of them). What the
    /// complaint says about them is for the profile to read.
    fn v2_format_error(&mut self, at: &Range<usize>, m: &RawMsg<'_>, complaint: String) {
        let extra = m.extra.as_ref();
        let response = response_of(extra);
        let reply = response.map(|r| match r.choices.first() {
            Some(c) => Self::reply_parts(&c.message()),
            None => Self::reply_parts(&serde_json::json!({ "output": r.output })),
        });
        let (text, calls) = match (reply, extra.and_then(|e| e.model_response.clone())) {
            (Some(parts), _) => parts,
            (None, Some(text)) => (text, Vec::new()),
            (None, None) => {
                if !self.noted_lost_replies {
                    self.noted_lost_replies = true;
                    self.steps.note(
                        "replies that failed to parse are not in the file (this mini-swe-agent version keeps only the complaint); each stands as an empty assistant step",
                    );
                }
                (String::new(), Vec::new())
            }
        };
        let mut step = Self::assistant(m, text, response);
        step.format_error = Some(complaint_summary(&complaint));
        let names: Vec<String> = calls.iter().map(|c| c.name.clone()).collect();
        step.tool_calls = calls;
        self.seen_assistant = true;
        self.pending = None;
        let mut p = Self::pending_of(0, &step.tool_calls);
        p.step = self.push(at, step);
        if p.calls.is_empty() {
            self.push_text(at, Role::Environment, complaint, m);
            return;
        }
        // The complaint's error is the harness's answer to each call.
        let answer = complaint_summary(&complaint);
        for (k, name) in names.into_iter().enumerate() {
            let mut r = Self::result_for(&mut p, k, answer.clone());
            r.name = Some(name);
            r.is_error = true;
            self.push_result(at, r, None);
        }
    }

    /// The final message. When the last reply's submitting command is still unanswered and no
    /// exception ended the run, this message carries that command's output: the submission.
    fn v2_exit(&mut self, at: &Range<usize>, m: &RawMsg<'_>) {
        let extra = m.extra.as_ref();
        let text = content_text(&m.content);
        let crashed = extra.is_some_and(|e| e.exception_str.is_some() || e.traceback.is_some());
        if !crashed
            && let Some(mut p) = self.pending.take()
            && let Some(k) = p.calls.iter().position(|c| !c.answered && submits(&c.command))
        {
            let output = extra.and_then(|e| e.submission.clone()).unwrap_or_else(|| text.clone());
            self.submitted = Some(output.clone());
            let r = Self::result_for(&mut p, k, output);
            self.push_result(at, r, Some(m));
            return;
        }
        self.push_text(at, Role::Environment, text, m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_of_both_apis_give_text_and_calls() {
        let chat = serde_json::json!({"content": "hi", "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]});
        let (text, calls) = Builder::reply_parts(&chat);
        assert_eq!((text.as_str(), calls[0].name.as_str(), calls[0].arguments["command"].as_str()), ("hi", "bash", Some("ls")));
        let responses = serde_json::json!({"output": [{"type": "message", "content": [{"type": "output_text", "text": "ok"}]}, {"type": "function_call", "call_id": "c2", "name": "bash", "arguments": "{}"}]});
        let (text, calls) = Builder::reply_parts(&responses);
        assert_eq!((text.as_str(), calls[0].id.as_deref()), ("ok", Some("c2")));
    }
}
