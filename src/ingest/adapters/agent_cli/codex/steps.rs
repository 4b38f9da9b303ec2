//! Codex items and events into steps, whichever format they came in: calls with their outputs
//! (exit codes from the output's own templates or from the events), reasoning and token counts
//! on the response they belong to, and the event the log ended with.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::Value;

use crate::ingest::adapters::shared::build::StepBuilder;
use crate::ingest::adapters::shared::common::{content_text, tool_call, uint};
use crate::model::{CallRef, Reasoning, Role, SourceSpan, Step, Tokens, ToolCall, ToolResult, Trajectory};

use super::mcp_name;

/// What the log ended with: a reply, a call, an output, a user message, or an event that says
/// how the run ended (a status or an error, with where it was read).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Last {
    Message,
    Call,
    Output,
    User,
    Status(&'static str, String, Option<SourceSpan>),
    Error(&'static str, String, Option<SourceSpan>),
}

/// Cumulative token counters that may restart (a resumed session starts counting again).
#[derive(Default)]
pub(super) struct Totals {
    banked: [u64; 4],
    current: [u64; 4],
    seen: bool,
}

impl Totals {
    fn observe(&mut self, t: [u64; 4]) {
        if self.seen && t[0] < self.current[0] {
            for (b, c) in self.banked.iter_mut().zip(self.current) {
                *b = b.saturating_add(c);
            }
        }
        self.current = t;
        self.seen = true;
    }

    pub(super) fn add(&mut self, t: [u64; 4]) {
        for (c, n) in self.current.iter_mut().zip(t) {
            *c = c.saturating_add(n);
        }
        self.seen = true;
    }

    fn total(&self) -> Option<[u64; 4]> {
        self.seen.then(|| [0, 1, 2, 3].map(|i| self.banked[i].saturating_add(self.current[i])))
    }
}

/// Builds steps from items and events, whichever format they came in.
#[derive(Default)]
pub(super) struct Builder {
    pub(super) sb: StepBuilder,
    /// The assistant step that later items of the same model response join.
    open: Option<usize>,
    pending_reasoning: Option<Reasoning>,
    pending_tokens: Option<Tokens>,
    /// Exit codes and failures the events report for calls.
    exit_codes: HashMap<String, i64>,
    failed: HashSet<String>,
    pub(super) totals: Totals,
    pub(super) models: BTreeSet<String>,
    pub(super) last_model: Option<String>,
    pub(super) version: Option<String>,
    pub(super) session: Option<String>,
    pub(super) cwd: Option<String>,
    pub(super) threads: BTreeSet<String>,
    pub(super) last: Option<Last>,
    /// Turns started (`task_started`, `turn.started`).
    pub(super) turns: usize,
    aborted_turns: usize,
    stream_errors: usize,
    context_window: Option<u64>,
}

impl Builder {
    pub(super) fn ts(&mut self, ts: Option<&str>) {
        if let Some(ts) = ts {
            self.sb.saw_time(ts);
        }
    }

    fn push(&mut self, step: Step, span: Option<SourceSpan>, ts: Option<&str>) -> usize {
        self.sb.push(step, span, ts.map(ToString::to_string))
    }

    /// The assistant step of the current model response, opened on first use.
    fn assistant(&mut self, span: Option<SourceSpan>, ts: Option<&str>) -> usize {
        if let Some(i) = self.open {
            return i;
        }
        let mut step = Step::new(Role::Assistant, "");
        step.reasoning = self.pending_reasoning.take();
        step.tokens = self.pending_tokens.take();
        if let (Some(r), Some(n)) = (step.reasoning.as_mut(), step.tokens.as_ref().and_then(|t| t.reasoning).filter(|n| *n > 0)) {
            r.tokens = Some(n);
        }
        let i = self.push(step, span, ts);
        self.open = Some(i);
        i
    }

    pub(super) fn add_call(&mut self, call: ToolCall, span: Option<SourceSpan>, ts: Option<&str>) -> Option<CallRef> {
        let s = self.assistant(span, ts);
        self.last = Some(Last::Call);
        self.sb.add_call(s, call)
    }

    pub(super) fn add_text(&mut self, text: &str, span: Option<SourceSpan>, ts: Option<&str>) {
        let s = self.assistant(span, ts);
        let step = &mut self.sb.steps[s];
        if !step.text.is_empty() {
            step.text.push_str("\n\n");
        }
        step.text.push_str(text);
        self.last = Some(Last::Message);
    }

    pub(super) fn add_reasoning(&mut self, text: Option<String>) {
        // Reasoning opens a new model response.
        self.open = None;
        let r = self.pending_reasoning.get_or_insert_with(Reasoning::default);
        if let Some(t) = text.filter(|t| !t.is_empty()) {
            match &mut r.text {
                Some(x) => {
                    x.push_str("\n\n");
                    x.push_str(&t);
                }
                None => r.text = Some(t),
            }
        }
    }

    /// A result joins the tool step right before it (outputs of one turn), else starts one.
    pub(super) fn add_result(&mut self, r: ToolResult, span: Option<SourceSpan>, ts: Option<&str>) {
        self.open = None;
        match self.sb.last_mut() {
            Some(prev) if prev.role == Role::Tool => prev.tool_results.push(r),
            _ => {
                let mut step = Step::new(Role::Tool, "");
                step.tool_results.push(r);
                self.push(step, span, ts);
            }
        }
        self.last = Some(Last::Output);
    }

    pub(super) fn other(&mut self, role: Role, text: String, span: Option<SourceSpan>, ts: Option<&str>) {
        self.open = None;
        self.push(Step::new(role, text), span, ts);
    }

    fn token_count(&mut self, info: &Value) {
        let arr = |u: &Value| {
            [
                uint(u.get("input_tokens")).unwrap_or(0),
                uint(u.get("cached_input_tokens")).unwrap_or(0),
                uint(u.get("output_tokens")).unwrap_or(0),
                uint(u.get("reasoning_output_tokens")).unwrap_or(0),
            ]
        };
        let mut last = info.get("last_token_usage").filter(|t| t.is_object()).map(arr);
        if let Some(total) = info.get("total_token_usage").filter(|t| t.is_object()) {
            self.totals.observe(arr(total));
        } else if info.get("input_tokens").is_some() {
            // Before `info`, the event held one call's usage.
            self.totals.add(arr(info));
            last = Some(arr(info));
        }
        if let Some(w) = uint(info.get("model_context_window")) {
            self.context_window = Some(w);
        }
        if let Some([input, cached, output, reasoning]) = last {
            let t = Tokens {
                prompt: Some(input),
                completion: Some(output),
                reasoning: (reasoning > 0).then_some(reasoning),
                cached: (cached > 0).then_some(cached),
            };
            // Newer rollouts and the old exec stream count after the response's items (its
            // step has no count yet), 0.3x–0.40 rollouts before them (the count is for the next).
            let latest = self.sb.steps.iter().rposition(|s| s.role == Role::Assistant);
            match latest.filter(|&i| self.sb.steps[i].tokens.is_none()) {
                Some(i) => self.sb.steps[i].tokens = Some(t),
                None => self.pending_tokens = Some(t),
            }
        }
    }

    /// One Responses API item (a rollout `response_item`, or a line of an old rollout).
    pub(super) fn item(&mut self, p: &Value, span: Option<SourceSpan>, ts: Option<&str>) {
        let kind = p.get("type").and_then(Value::as_str).unwrap_or_default();
        let s = |k: &str| p.get(k).and_then(Value::as_str).map(ToString::to_string);
        match kind {
            "message" => {
                let text = content_text(p.get("content").unwrap_or(&Value::Null));
                match p.get("role").and_then(Value::as_str).unwrap_or_default() {
                    "assistant" => self.add_text(&text, span, ts),
                    "user" if text.trim_start().starts_with("<environment_context>") => self.other(Role::Environment, text, span, ts),
                    "user" if text.trim_start().starts_with("<user_instructions>") => self.other(Role::System, text, span, ts),
                    "user" => {
                        self.other(Role::User, text, span, ts);
                        self.last = Some(Last::User);
                    }
                    _ => self.other(Role::System, text, span, ts),
                }
            }
            "reasoning" => {
                let mut parts: Vec<String> = Vec::new();
                for key in ["summary", "content"] {
                    for x in p.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
                        if let Some(t) = x.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                            parts.push(t.to_string());
                        }
                    }
                }
                self.add_reasoning((!parts.is_empty()).then(|| parts.join("\n\n")));
            }
            "function_call" => {
                let id = s("call_id").or_else(|| s("id"));
                let name = s("name").unwrap_or_else(|| "unknown".into());
                self.add_call(tool_call(id, name, p.get("arguments").unwrap_or(&Value::Null)), span, ts);
            }
            "custom_tool_call" => {
                let id = s("call_id").or_else(|| s("id"));
                let name = s("name").unwrap_or_else(|| "unknown".into());
                let args = serde_json::json!({ "input": p.get("input").cloned().unwrap_or(Value::Null) });
                self.add_call(tool_call(id, name, &args), span, ts);
            }
            "local_shell_call" => {
                let id = s("call_id").or_else(|| s("id"));
                let args = p.get("action").cloned().unwrap_or(Value::Null);
                self.add_call(tool_call(id, "local_shell", &args), span, ts);
            }
            "web_search_call" => {
                let id = s("id");
                let args = p.get("action").cloned().unwrap_or(Value::Null);
                self.add_call(tool_call(id, "web_search", &args), span, ts);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let mut r = tool_output(p.get("output").unwrap_or(&Value::Null));
                r.call_id = s("call_id");
                self.add_result(r, span, ts);
            }
            other => self.sb.ignore(&format!("response_item/{other}")),
        }
    }

    /// One protocol event (a rollout `event_msg`, or a line of the pre-0.44 exec stream).
    /// `calls_from_events`: the stream has no items, so begin/end events are the calls.
    pub(super) fn event(
        &mut self,
        m: &Value,
        span: Option<SourceSpan>,
        ts: Option<&str>,
        calls_from_events: bool,
        messages_from_events: bool,
    ) {
        let kind = m.get("type").and_then(Value::as_str).unwrap_or_default();
        let s = |k: &str| m.get(k).and_then(Value::as_str).map(ToString::to_string);
        match kind {
            "token_count" => self.token_count(m.get("info").filter(|i| !i.is_null()).unwrap_or(m)),
            "user_message" if messages_from_events => {
                self.other(Role::User, s("message").unwrap_or_default(), span, ts);
                self.last = Some(Last::User);
            }
            "agent_message" if messages_from_events => self.add_text(&s("message").unwrap_or_default(), span, ts),
            "agent_reasoning" if messages_from_events => self.add_reasoning(s("text")),
            "user_message" | "agent_message" | "agent_reasoning" | "agent_reasoning_raw_content" | "agent_reasoning_section_break" => {}
            "task_started" => self.turns += 1,
            // The end of a turn the agent closed with a reply.
            "task_complete" => {
                if matches!(self.last, Some(Last::Message)) {
                    self.last = Some(Last::Status("event_msg.type", kind.to_string(), span));
                }
            }
            "turn_aborted" => {
                let reason = s("reason").unwrap_or_else(|| "aborted".into());
                self.aborted_turns += 1;
                self.other(Role::Environment, format!("turn aborted: {reason}"), span, ts);
                self.last = Some(Last::Status("turn_aborted.reason", reason, span));
            }
            "error" => {
                let msg = s("message").unwrap_or_default();
                self.other(Role::Environment, format!("error: {msg}"), span, ts);
                self.last = Some(Last::Error("error.message", msg, span));
            }
            "stream_error" => self.stream_errors += 1,
            "exec_command_begin" if calls_from_events => {
                let args = serde_json::json!({"command": m.get("command").cloned().unwrap_or(Value::Null), "workdir": m.get("cwd").cloned().unwrap_or(Value::Null)});
                self.add_call(tool_call(s("call_id"), "shell", &args), span, ts);
            }
            "exec_command_end" => {
                let id = s("call_id").unwrap_or_default();
                let code = m.get("exit_code").and_then(Value::as_i64);
                if calls_from_events {
                    let out = ["aggregated_output", "formatted_output"]
                        .iter()
                        .find_map(|k| m.get(*k).and_then(Value::as_str).filter(|x| !x.is_empty()).map(ToString::to_string))
                        .unwrap_or_else(|| {
                            [s("stdout"), s("stderr")].into_iter().flatten().filter(|x| !x.is_empty()).collect::<Vec<_>>().join("\n")
                        });
                    let mut r = ToolResult::new(out);
                    r.call_id = Some(id);
                    r.exit_code = code;
                    r.is_error = code.is_some_and(|c| c != 0);
                    self.add_result(r, span, ts);
                } else if let Some(c) = code {
                    self.exit_codes.insert(id, c);
                }
            }
            "patch_apply_begin" if calls_from_events => {
                let args = serde_json::json!({"changes": m.get("changes").cloned().unwrap_or(Value::Null)});
                self.add_call(tool_call(s("call_id"), "apply_patch", &args), span, ts);
            }
            "patch_apply_end" => {
                let id = s("call_id").unwrap_or_default();
                let ok = m.get("success").and_then(Value::as_bool).unwrap_or(true);
                if calls_from_events {
                    let out = [s("stdout"), s("stderr")].into_iter().flatten().filter(|x| !x.is_empty()).collect::<Vec<_>>().join("\n");
                    let mut r = ToolResult::new(out);
                    r.call_id = Some(id);
                    r.is_error = !ok;
                    self.add_result(r, span, ts);
                } else if !ok {
                    self.failed.insert(id);
                }
            }
            "mcp_tool_call_begin" if calls_from_events => {
                let inv = m.get("invocation").unwrap_or(&Value::Null);
                let name = mcp_name(inv.get("server"), inv.get("tool"));
                self.add_call(tool_call(s("call_id"), name, inv.get("arguments").unwrap_or(&Value::Null)), span, ts);
            }
            "mcp_tool_call_end" => {
                let id = s("call_id").unwrap_or_default();
                let res = m.get("result").unwrap_or(&Value::Null);
                let err = res.get("Err").or_else(|| res.get("err"));
                let ok_val = res.get("Ok").or_else(|| res.get("ok")).unwrap_or(res);
                let is_err =
                    err.is_some() || ok_val.get("isError").or_else(|| ok_val.get("is_error")).and_then(Value::as_bool) == Some(true);
                if calls_from_events {
                    let out = err.map_or_else(|| content_text(ok_val.get("content").unwrap_or(ok_val)), content_text);
                    let mut r = ToolResult::new(out);
                    r.call_id = Some(id);
                    r.is_error = is_err;
                    self.add_result(r, span, ts);
                } else if is_err {
                    self.failed.insert(id);
                }
            }
            "web_search_begin" if calls_from_events => {
                self.add_call(tool_call(s("call_id"), "web_search", &Value::Null), span, ts);
            }
            "web_search_end" if calls_from_events => {
                if let Some(c) = m.get("call_id").and_then(Value::as_str).and_then(|id| self.sb.call(id)) {
                    self.sb.steps[c.step as usize].tool_calls[c.call as usize].arguments = serde_json::json!({"query": s("query")});
                }
            }
            "session_configured" => {
                self.session = self.session.take().or_else(|| s("session_id"));
                if let Some(model) = s("model") {
                    self.models.insert(model.clone());
                    self.last_model = Some(model);
                }
            }
            "context_compacted" => self.sb.note("the context was compacted"),
            "entered_review_mode" | "exited_review_mode" => self.sb.note(kind),
            other => self.sb.ignore(&format!("event/{other}")),
        }
    }

    /// Applies what events said about calls the items made.
    fn settle(&mut self) {
        let by_id: HashMap<String, (usize, usize)> = self
            .sb
            .steps
            .iter()
            .enumerate()
            .flat_map(|(s, st)| st.tool_results.iter().enumerate().map(move |(r, res)| (res.call_id.clone(), (s, r))))
            .filter_map(|(id, at)| Some((id?, at)))
            .collect();
        for (id, code) in &self.exit_codes {
            if let Some(&(s, r)) = by_id.get(id) {
                let res = &mut self.sb.steps[s].tool_results[r];
                if res.exit_code.is_none() {
                    res.exit_code = Some(*code);
                    res.is_error |= *code != 0;
                }
            }
        }
        for id in &self.failed {
            if let Some(&(s, r)) = by_id.get(id) {
                self.sb.steps[s].tool_results[r].is_error = true;
            }
        }
    }

    /// The event the log ended with, when it says how the run ended. A log that ends with a
    /// reply, a call or an output says it by its shape alone.
    fn end_signals(&mut self, t: &mut Trajectory) {
        match self.last.take() {
            Some(Last::Status(field, text, span)) => {
                t.signals.status(field, text).with_span(span);
            }
            Some(Last::Error(field, text, span)) => {
                t.signals.error(field, text).with_span(span);
            }
            _ => {}
        }
        if let Some(w) = self.context_window {
            #[expect(clippy::cast_precision_loss, reason = "context windows are far below 2^52 tokens")]
            let w = w as f64;
            t.signals.limits.context_tokens = Some(w);
        }
    }

    pub(super) fn finish(self, t: &mut Trajectory) {
        let mut b = self;
        b.settle();
        b.end_signals(t);
        if let Some([input, cached, output, reasoning]) = b.totals.total() {
            t.usage.prompt_tokens = Some(input);
            t.usage.cached_tokens = (cached > 0).then_some(cached);
            t.usage.completion_tokens = Some(output);
            t.usage.reasoning_tokens = (reasoning > 0).then_some(reasoning);
        }
        t.model = b.last_model.clone();
        if b.models.len() > 1 {
            t.notes.push(format!("turns ran on several models: {}", b.models.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
        t.harness_version = b.version.clone();
        t.session_id = b.session.clone();
        t.workdir = b.cwd.clone();
        if b.threads.len() > 1 {
            t.notes.push(format!("the stream holds several threads: {}", b.threads.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
        if b.turns > 1 {
            t.notes.push(format!("{} turns", b.turns));
        }
        if b.aborted_turns > 0 {
            t.notes.push(format!("{} turn(s) aborted", b.aborted_turns));
        }
        if b.stream_errors > 0 {
            t.notes.push(format!("{} stream error(s) retried", b.stream_errors));
        }
        if let Some(w) = b.context_window {
            t.notes.push(format!("model context window: {w} tokens"));
        }
        b.sb.finish(t);
        t.notes.push("Codex logs carry no verdict: outcome comes from a verdict file keyed by the task id or session id".into());
    }
}

/// A `function_call_output` payload: JSON inside a string with `output` and
/// `metadata.exit_code` (0.3x–0.4x), formatted text (`Exit code: N`), a sandbox refusal, an
/// `{content, success}` object (older), or content items (newer).
fn tool_output(v: &Value) -> ToolResult {
    let mut r = match v {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(inner) if inner.get("output").is_some() => {
                let mut r = ToolResult::new(content_text(inner.get("output").unwrap_or(&Value::Null)));
                r.exit_code = inner.pointer("/metadata/exit_code").and_then(Value::as_i64);
                r
            }
            _ => ToolResult::new(s.clone()),
        },
        Value::Object(o) => {
            let mut r = ToolResult::new(content_text(o.get("content").or_else(|| o.get("output")).unwrap_or(&Value::Null)));
            r.is_error = o.get("success").and_then(Value::as_bool) == Some(false);
            r
        }
        other => ToolResult::new(content_text(other)),
    };
    if r.exit_code.is_none() {
        r.exit_code = exit_code_in(&r.output);
    }
    let lower = r.output.trim_start().to_ascii_lowercase();
    r.is_error |= r.exit_code.is_some_and(|c| c != 0)
        || lower.starts_with("failed in sandbox")
        || lower.starts_with("execution error")
        || lower == "aborted"
        || lower.starts_with("aborted by user");
    r
}

/// `Exit code: 1` at the start of formatted output, or `exit code: 1` inside a sandbox refusal
/// (`failed in sandbox ... exit code: 1, stdout: ...`); never from a command's own output.
fn exit_code_in(text: &str) -> Option<i64> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"(?i)\bexit code:? (-?\d+)").expect("static regex"));
    let t = text.trim_start();
    let lower = t.chars().take(40).collect::<String>().to_ascii_lowercase();
    let head = if lower.starts_with("exit code") {
        t.lines().next().unwrap_or_default()
    } else if lower.starts_with("failed in sandbox") || lower.starts_with("execution error") {
        t.get(..t.len().min(300)).unwrap_or(t)
    } else {
        return None;
    };
    re.captures(head)?.get(1)?.as_str().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_in_every_shape() {
        let r = tool_output(&Value::String(r#"{"output":"boom\n","metadata":{"exit_code":2,"duration_seconds":0.1}}"#.into()));
        assert_eq!((r.output.as_str(), r.exit_code, r.is_error), ("boom\n", Some(2), true));
        let r = tool_output(&Value::String(
            "failed in sandbox MacosSeatbelt with execution error: sandbox denied exec error, exit code: 1, stdout: ".into(),
        ));
        assert_eq!((r.exit_code, r.is_error), (Some(1), true));
        let r = tool_output(&Value::String("Exit code: 0\nWall time: 0.2 seconds\nOutput:\nok".into()));
        assert_eq!((r.exit_code, r.is_error), (Some(0), false));
        let r = tool_output(&serde_json::json!({"content": "denied", "success": false}));
        assert!(r.is_error);
        // Codex's answer to a call of a tool it lacks is an output like any other; the profile
        // says it is a rejection (`codex-unsupported-call`).
        let r = tool_output(&Value::String("unsupported call: search_repo".into()));
        assert_eq!((r.output.as_str(), r.unknown_tool.as_deref()), ("unsupported call: search_repo", None));
    }

    #[test]
    fn restarted_counters_are_added_not_lost() {
        let mut t = Totals::default();
        t.observe([100, 10, 5, 1]);
        t.observe([300, 20, 9, 2]);
        t.observe([40, 0, 3, 0]);
        assert_eq!(t.total(), Some([340, 20, 12, 2]));
    }
}
