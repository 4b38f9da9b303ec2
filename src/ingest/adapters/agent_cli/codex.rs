//! Codex CLI: session rollouts (`~/.codex/sessions/.../rollout-*.jsonl`) and
//! `codex exec --json` event streams.
//!
//! A rollout line is `{timestamp, type, payload}`: `session_meta` (id, `cli_version`),
//! `turn_context` (model), `response_item` (the Responses API items the model saw: `message`,
//! `reasoning`, `function_call` with JSON arguments inside a string, `function_call_output`
//! whose `output` is often JSON inside a string holding `output` and `metadata.exit_code`,
//! `custom_tool_call` for `apply_patch`, `local_shell_call`, `web_search_call`), `event_msg`
//! (`token_count` usage, `turn_aborted`, `error`, `exec_command_end`, ...) and `compacted`.
//! Older rollouts, from before `RolloutLine`, put the session meta on the first line and the
//! items themselves on the others. `event_msg` user and agent messages repeat the items, so they
//! are read only from rollouts that have no items.
//!
//! `codex exec --json` prints `thread.started`, `turn.started`, `item.started` /
//! `item.updated` / `item.completed` (`agent_message`, `reasoning`, `command_execution`,
//! `file_change`, `mcp_tool_call`, `web_search`, `todo_list`, `collab_tool_call`, `error`),
//! `turn.completed` with usage, `turn.failed` and `error`. Versions 0.44–0.45 wrote
//! `item_type` and `assistant_message`, the experimental stream `session.created`; before 0.44
//! `--json` printed the raw protocol events (`{"id", "msg": {"type": ...}}`), read here too.
//! A call's tool name is Codex's own (`shell`, `apply_patch`, `update_plan`, `server__tool`)
//! because the exec stream names items, not tools. Neither format carries a verdict.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

use crate::ingest::adapters::chat::api::is_unknown_tool_message;
use crate::ingest::adapters::shared::common::{content_text, tool_call, uint};
use crate::ingest::adapters::shared::lines::{self, Line};
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, file_name, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{
    Budget, Enforcer, Reasoning, Role, SourceSpan, Step, Termination, TerminationKind, Tokens, ToolCall, ToolResult, Trajectory,
};
use crate::util::seconds_between;

const HARNESS: &str = "codex";

/// What happened last, for how the run ended.
#[derive(Debug, Clone, PartialEq)]
enum Last {
    Message,
    TaskComplete,
    Call,
    Output,
    User,
    Aborted(String),
    Error(String),
    TurnCompleted,
}

/// Cumulative token counters that may restart (a resumed session starts counting again).
#[derive(Default)]
struct Totals {
    banked: [u64; 4],
    current: [u64; 4],
    seen: bool,
}

impl Totals {
    fn observe(&mut self, t: [u64; 4]) {
        if self.seen && t[0] < self.current[0] {
            for (b, c) in self.banked.iter_mut().zip(self.current) {
                *b += c;
            }
        }
        self.current = t;
        self.seen = true;
    }

    fn add(&mut self, t: [u64; 4]) {
        for (c, n) in self.current.iter_mut().zip(t) {
            *c += n;
        }
        self.seen = true;
    }

    fn total(&self) -> Option<[u64; 4]> {
        self.seen.then(|| [0, 1, 2, 3].map(|i| self.banked[i] + self.current[i]))
    }
}

/// Builds steps from items and events, whichever format they came in.
#[derive(Default)]
struct Builder {
    steps: Vec<Step>,
    /// The assistant step that later items of the same model response join.
    open: Option<usize>,
    pending_reasoning: Option<Reasoning>,
    pending_tokens: Option<Tokens>,
    calls: HashMap<String, (usize, usize)>,
    /// Exit codes and failures the events report for calls.
    exit_codes: HashMap<String, i64>,
    failed: HashSet<String>,
    totals: Totals,
    models: BTreeSet<String>,
    last_model: Option<String>,
    version: Option<String>,
    session: Option<String>,
    cwd: Option<String>,
    threads: BTreeSet<String>,
    first_ts: Option<String>,
    last_ts: Option<String>,
    last: Option<Last>,
    /// Turns started (`task_started`, `turn.started`).
    turns: usize,
    aborted_turns: usize,
    stream_errors: usize,
    context_window: Option<u64>,
    notes: Vec<String>,
    ignored: BTreeMap<String, usize>,
}

impl Builder {
    fn ts(&mut self, ts: Option<&str>) {
        if let Some(ts) = ts {
            if self.first_ts.is_none() {
                self.first_ts = Some(ts.to_string());
            }
            self.last_ts = Some(ts.to_string());
        }
    }

    fn push(&mut self, mut step: Step, span: Option<SourceSpan>, ts: Option<&str>) -> usize {
        step.source_span = span;
        step.timestamp = ts.map(ToString::to_string);
        self.steps.push(step);
        self.steps.len() - 1
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

    fn add_call(&mut self, call: ToolCall, span: Option<SourceSpan>, ts: Option<&str>) {
        let s = self.assistant(span, ts);
        if let Some(id) = &call.id {
            self.calls.insert(id.clone(), (s, self.steps[s].tool_calls.len()));
        }
        self.steps[s].tool_calls.push(call);
        self.last = Some(Last::Call);
    }

    fn add_text(&mut self, text: &str, span: Option<SourceSpan>, ts: Option<&str>) {
        let s = self.assistant(span, ts);
        let step = &mut self.steps[s];
        if !step.text.is_empty() {
            step.text.push_str("\n\n");
        }
        step.text.push_str(text);
        self.last = Some(Last::Message);
    }

    fn add_reasoning(&mut self, text: Option<String>) {
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
    fn add_result(&mut self, r: ToolResult, span: Option<SourceSpan>, ts: Option<&str>) {
        self.open = None;
        match self.steps.last_mut() {
            Some(prev) if prev.role == Role::Tool => prev.tool_results.push(r),
            _ => {
                let mut step = Step::new(Role::Tool, "");
                step.tool_results.push(r);
                self.push(step, span, ts);
            }
        }
        self.last = Some(Last::Output);
    }

    fn other(&mut self, role: Role, text: String, span: Option<SourceSpan>, ts: Option<&str>) {
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
            let latest = self.steps.iter().rposition(|s| s.role == Role::Assistant);
            match latest.filter(|&i| self.steps[i].tokens.is_none()) {
                Some(i) => self.steps[i].tokens = Some(t),
                None => self.pending_tokens = Some(t),
            }
        }
    }

    /// One Responses API item (a rollout `response_item`, or a line of an old rollout).
    fn item(&mut self, p: &Value, span: Option<SourceSpan>, ts: Option<&str>) {
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
            other => *self.ignored.entry(format!("response_item/{other}")).or_default() += 1,
        }
    }

    /// One protocol event (a rollout `event_msg`, or a line of the pre-0.44 exec stream).
    /// `calls_from_events`: the stream has no items, so begin/end events are the calls.
    fn event(&mut self, m: &Value, span: Option<SourceSpan>, ts: Option<&str>, calls_from_events: bool, messages_from_events: bool) {
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
            "task_complete" => {
                if matches!(self.last, Some(Last::Message)) {
                    self.last = Some(Last::TaskComplete);
                }
            }
            "turn_aborted" => {
                let reason = s("reason").unwrap_or_else(|| "aborted".into());
                self.aborted_turns += 1;
                self.other(Role::Environment, format!("turn aborted: {reason}"), span, ts);
                self.last = Some(Last::Aborted(reason));
            }
            "error" => {
                let msg = s("message").unwrap_or_default();
                self.other(Role::Environment, format!("error: {msg}"), span, ts);
                self.last = Some(Last::Error(msg));
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
            "web_search_begin" if calls_from_events => self.add_call(tool_call(s("call_id"), "web_search", &Value::Null), span, ts),
            "web_search_end" if calls_from_events => {
                if let Some(&(st, c)) = m.get("call_id").and_then(Value::as_str).and_then(|id| self.calls.get(id)) {
                    self.steps[st].tool_calls[c].arguments = serde_json::json!({"query": s("query")});
                }
            }
            "session_configured" => {
                self.session = self.session.take().or_else(|| s("session_id"));
                if let Some(model) = s("model") {
                    self.models.insert(model.clone());
                    self.last_model = Some(model);
                }
            }
            "context_compacted" => self.notes.push("the context was compacted".into()),
            "entered_review_mode" | "exited_review_mode" => self.notes.push(kind.to_string()),
            other => *self.ignored.entry(format!("event/{other}")).or_default() += 1,
        }
    }

    /// Applies what events said about calls the items made.
    fn settle(&mut self) {
        let by_id: HashMap<String, (usize, usize)> = self
            .steps
            .iter()
            .enumerate()
            .flat_map(|(s, st)| st.tool_results.iter().enumerate().map(move |(r, res)| (res.call_id.clone(), (s, r))))
            .filter_map(|(id, at)| Some((id?, at)))
            .collect();
        for (id, code) in &self.exit_codes {
            if let Some(&(s, r)) = by_id.get(id) {
                let res = &mut self.steps[s].tool_results[r];
                if res.exit_code.is_none() {
                    res.exit_code = Some(*code);
                    res.is_error |= *code != 0;
                }
            }
        }
        for id in &self.failed {
            if let Some(&(s, r)) = by_id.get(id) {
                self.steps[s].tool_results[r].is_error = true;
            }
        }
    }

    fn termination(&self) -> Termination {
        let unknown = |detail: &str| {
            let mut t = Termination::unknown();
            t.detail = Some(detail.to_string());
            t
        };
        match &self.last {
            Some(Last::Error(msg)) => error_termination(msg),
            Some(Last::Aborted(reason)) => {
                let mut t = unknown(match reason.as_str() {
                    "interrupted" => "the user interrupted the turn",
                    "replaced" => "a new user message replaced the turn",
                    _ => "the turn was aborted",
                });
                t.raw = Some(format!("turn_aborted: {reason}"));
                t.source = Some("event turn_aborted".into());
                t
            }
            Some(Last::Message) => {
                Termination::of(TerminationKind::AgentStoppedWithoutFinish).with_raw("final message", "last assistant message")
            }
            Some(Last::TaskComplete) => {
                Termination::of(TerminationKind::AgentStoppedWithoutFinish).with_raw("task_complete", "event task_complete")
            }
            Some(Last::TurnCompleted) => {
                let answered_last = self
                    .steps
                    .iter()
                    .rev()
                    .find(|s| s.role != Role::Environment)
                    .is_some_and(|s| s.role == Role::Assistant && s.tool_calls.is_empty());
                if answered_last {
                    Termination::of(TerminationKind::AgentStoppedWithoutFinish).with_raw("turn.completed", "exec event turn.completed")
                } else {
                    unknown("the turn completed without a final agent message")
                }
            }
            Some(Last::Call) => unknown("the log ends with a tool call that has no output (the run was cut off)"),
            Some(Last::Output) => unknown("the log ends after a tool output, before the model replied (the run was cut off)"),
            Some(Last::User) => unknown("the log ends with a user message nothing answered"),
            None => unknown("the log holds no turn"),
        }
    }

    fn finish(self, t: &mut Trajectory) {
        let mut b = self;
        b.settle();
        t.termination = b.termination();
        if let Some([input, cached, output, reasoning]) = b.totals.total() {
            t.usage.prompt_tokens = Some(input);
            t.usage.cached_tokens = (cached > 0).then_some(cached);
            t.usage.completion_tokens = Some(output);
            t.usage.reasoning_tokens = (reasoning > 0).then_some(reasoning);
        }
        if let (Some(a), Some(z)) = (&b.first_ts, &b.last_ts) {
            t.usage.wall_seconds = seconds_between(a, z).filter(|_| a != z);
            t.started_at = Some(a.clone());
            t.ended_at = Some(z.clone());
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
        t.notes.append(&mut b.notes);
        if !b.ignored.is_empty() {
            let parts: Vec<String> = b.ignored.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
            t.notes.push(format!("records kept out of the steps (bookkeeping): {}", parts.join(", ")));
        }
        t.steps = b.steps;
        t.notes.push("Codex logs carry no verdict: outcome comes from a verdict file keyed by the task id or session id".into());
    }
}

fn mcp_name(server: Option<&Value>, tool: Option<&Value>) -> String {
    let s = server.and_then(Value::as_str).unwrap_or("mcp");
    let t = tool.and_then(Value::as_str).unwrap_or("unknown");
    format!("{s}__{t}")
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
    if is_unknown_tool_message(&r.output) && lower.starts_with("unsupported") {
        r.is_error = true;
        r.unknown_tool = Some(r.output.lines().next().unwrap_or_default().to_string());
    }
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

/// How an error that ended the run reads.
fn error_termination(msg: &str) -> Termination {
    let lower = msg.to_ascii_lowercase();
    let mut t = if lower.contains("context window") || lower.contains("context length") || lower.contains("context_length_exceeded") {
        Termination::budget(Budget::Context, Enforcer::Provider)
    } else if [
        "usage limit",
        "rate limit",
        "quota",
        "stream disconnected",
        "retry limit",
        "429",
        "500",
        "502",
        "503",
        "connection",
        "timed out",
        "unauthorized",
        "401",
    ]
    .iter()
    .any(|k| lower.contains(k))
    {
        Termination::of(TerminationKind::Infrastructure)
    } else {
        Termination::of(TerminationKind::HarnessError)
    };
    t.raw = Some(msg.lines().next().unwrap_or_default().chars().take(200).collect());
    t.source = Some("error event".into());
    t.detail = Some(msg.chars().take(300).collect());
    t
}

/// Generic names say nothing: the directory does; Codex's own `rollout-<time>-<id>` names
/// give way to the session id.
fn task_id(p: &Path, session: Option<&str>) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").or_else(|| name.strip_suffix(".json")).unwrap_or(&name).to_string();
    if stem.starts_with("rollout-")
        && let Some(s) = session
    {
        return s.to_string();
    }
    if matches!(stem.to_ascii_lowercase().as_str(), "rollout" | "session" | "transcript" | "events" | "output" | "stream" | "log")
        && let Some(d) = p.parent().and_then(Path::file_name)
    {
        return d.to_string_lossy().into_owned();
    }
    stem
}

/// Reads every line as a JSON object; bad lines become diagnostics.
fn objects<'a>(src: &'a Source, diags: &mut Vec<InputError>, what: &str) -> Vec<(Line<'a>, Value)> {
    let mut out = Vec::new();
    for line in lines::split(src, diags) {
        match lines::parse::<Value>(src, &line, what) {
            Ok(v) if v.is_object() => out.push((line, v)),
            Ok(_) => diags.push(lines::schema_error(src, &line, what, "expected a JSON object")),
            Err(e) => diags.push(e),
        }
    }
    out
}

const ROLLOUT_TYPES: &[&str] = &["session_meta", "response_item", "event_msg", "turn_context", "compacted"];

/// Codex session rollouts.
pub struct CodexRollout;

impl Adapter for CodexRollout {
    fn name(&self) -> &'static str {
        HARNESS
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Codex CLI session rollout (JSONL: session_meta, turn_context, response_item, event_msg)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shape = p.jsonl.as_ref().or(p.json.as_ref().filter(|j| !j.top_is_array)).ok_or("not JSON Lines")?;
        let kind = shape.str("type").unwrap_or_default();
        if ROLLOUT_TYPES.contains(&kind) && shape.has("payload") {
            return marker(format!("rollout line (type {kind}, payload)"));
        }
        if !shape.has("type") && shape.has("id") && shape.has("timestamp") && (shape.has("instructions") || shape.has("git")) {
            return structure("pre-RolloutLine session meta (id, timestamp, instructions/git)");
        }
        if p.name.starts_with("rollout-") && p.ext() == "jsonl" && kind == "message" {
            return file_name("rollout-*.jsonl of response items");
        }
        Err("no session_meta/response_item lines".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let mut diags = Vec::new();
        let objs = objects(&src, &mut diags, "Codex rollout line");
        let mut good: Vec<(Line<'_>, Value)> = Vec::new();
        for (line, v) in objs {
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            if ROLLOUT_TYPES.contains(&kind) && !v.get("payload").is_some_and(Value::is_object) {
                diags.push(lines::schema_error(&src, &line, "a Codex rollout line", "`payload` is missing or not an object"));
                continue;
            }
            good.push((line, v));
        }
        let bad = diags.len();
        out.diagnostics.extend(diags);
        if good.is_empty() {
            return Err(lines::nothing_readable(&src, "Codex rollout line", "each line is {timestamp, type, payload}"));
        }
        let has_items = good.iter().any(|(_, v)| {
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            kind == "response_item" || (!ROLLOUT_TYPES.contains(&kind) && v.get("role").is_some())
        });
        let mut b = Builder::default();
        let mut format = "codex-rollout";
        for (line, v) in &good {
            let span = Some(line.span(0));
            let ts = v.get("timestamp").and_then(Value::as_str);
            b.ts(ts);
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            let payload = v.get("payload").unwrap_or(&Value::Null);
            match kind {
                "session_meta" => meta(&mut b, payload),
                "turn_context" => {
                    if let Some(m) = payload.get("model").and_then(Value::as_str) {
                        b.models.insert(m.to_string());
                        b.last_model = Some(m.to_string());
                    }
                }
                "response_item" => b.item(payload, span, ts),
                "event_msg" => b.event(payload, span, ts, false, !has_items),
                "compacted" => {
                    b.notes.push(format!("line {}: the history was compacted", line.no));
                    let text = payload.get("message").and_then(Value::as_str).unwrap_or("history compacted").to_string();
                    b.other(Role::Environment, text, span, ts);
                }
                _ if v.get("record_type").is_some() => *b.ignored.entry("record_type".into()).or_default() += 1,
                "" if v.get("id").is_some()
                    && (v.get("instructions").is_some() || v.get("git").is_some() || v.get("timestamp").is_some()) =>
                {
                    format = "codex-rollout-legacy";
                    meta(&mut b, v);
                }
                _ => {
                    format = "codex-rollout-legacy";
                    b.item(v, span, ts);
                }
            }
        }
        let task = task_id(&unit.primary.path, b.session.as_deref());
        let mut t = crate::model::Trajectory::new(task, HARNESS, self.name(), self.version(), vec![src.provenance("transcript")]);
        t.provenance.format_version = Some(format.into());
        if bad > 0 {
            t.notes.push(format!("{bad} unreadable line(s) skipped (see the diagnostics)"));
        }
        b.finish(&mut t);
        out.emit(t);
        Ok(())
    }
}

fn meta(b: &mut Builder, p: &Value) {
    let s = |k: &str| p.get(k).and_then(Value::as_str).map(ToString::to_string);
    b.session = b.session.take().or_else(|| s("id"));
    b.cwd = b.cwd.take().or_else(|| s("cwd"));
    b.version = b.version.take().or_else(|| s("cli_version"));
    if let Some(o) = s("originator") {
        b.notes.push(format!("originator: {o}"));
    }
    if let Some(m) = s("model") {
        b.models.insert(m.clone());
        b.last_model = Some(m);
    }
}

/// `codex exec --json` output.
pub struct CodexExec;

impl Adapter for CodexExec {
    fn name(&self) -> &'static str {
        "codex-exec"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "codex exec --json event stream (thread/turn/item events; before 0.44, protocol events)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shape = p.jsonl.as_ref().or(p.json.as_ref().filter(|j| !j.top_is_array)).ok_or("not JSON Lines")?;
        let kind = shape.str("type").unwrap_or_default();
        if matches!(kind, "thread.started" | "session.created" | "turn.started" | "item.started" | "item.completed") {
            return marker(format!("exec event {kind}"));
        }
        if shape.has("msg") && shape.str("msg.type").is_some() && shape.has("id") {
            return marker("protocol event {id, msg}");
        }
        if shape.has("sandbox") && shape.has("approval") {
            return structure("exec configuration summary (pre-0.44 --json)");
        }
        Err("no thread/turn/item events".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let mut diags = Vec::new();
        let objs = objects(&src, &mut diags, "codex exec event");
        let bad = diags.len();
        out.diagnostics.extend(diags);
        if objs.is_empty() {
            return Err(lines::nothing_readable(
                &src,
                "codex exec event",
                "each line is one event: {\"type\": \"item.completed\", \"item\": {...}}",
            ));
        }
        let mut b = Builder::default();
        let mut legacy = false;
        // Item id → (step, call): an item's call is made when it starts, its result when it ends.
        let mut item_calls: HashMap<String, (usize, usize)> = HashMap::new();
        let mut done: HashSet<String> = HashSet::new();
        for (line, v) in &objs {
            let span = Some(line.span(0));
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            if let Some(msg) = v.get("msg").filter(|m| m.is_object()) {
                legacy = true;
                b.event(msg, span, None, true, true);
                continue;
            }
            match kind {
                "thread.started" | "session.created" | "session.resumed" => {
                    let id = v.get("thread_id").or_else(|| v.get("session_id")).and_then(Value::as_str).map(ToString::to_string);
                    if let Some(id) = id {
                        b.threads.insert(id.clone());
                        b.session = b.session.take().or(Some(id));
                    }
                }
                "turn.started" => b.turns += 1,
                "turn.completed" => {
                    if let Some(u) = v.get("usage") {
                        let n = |k: &str| uint(u.get(k)).unwrap_or(0);
                        b.totals.add([n("input_tokens"), n("cached_input_tokens"), n("output_tokens"), n("reasoning_output_tokens")]);
                    }
                    b.last = Some(Last::TurnCompleted);
                }
                "turn.failed" => {
                    let msg = v.pointer("/error/message").and_then(Value::as_str).unwrap_or("turn failed").to_string();
                    b.other(Role::Environment, format!("turn failed: {msg}"), span, None);
                    b.last = Some(Last::Error(msg));
                }
                "error" => {
                    let msg = v.get("message").and_then(Value::as_str).unwrap_or("error").to_string();
                    b.other(Role::Environment, format!("error: {msg}"), span, None);
                    b.last = Some(Last::Error(msg));
                }
                "item.started" | "item.updated" | "item.completed" => {
                    let Some(item) = v.get("item").filter(|i| i.is_object()) else {
                        out.diagnostics.push(lines::schema_error(&src, line, "a codex exec event", "`item` is missing or not an object"));
                        continue;
                    };
                    exec_item(&mut b, item, kind == "item.completed", span, &mut item_calls, &mut done);
                }
                "" if v.get("prompt").and_then(Value::as_str).is_some() => {
                    let p = v.get("prompt").and_then(Value::as_str).unwrap_or_default().to_string();
                    b.other(Role::User, p, span, None);
                }
                "" if v.get("sandbox").is_some() => {
                    legacy = true;
                    if let Some(m) = v.get("model").and_then(Value::as_str) {
                        b.models.insert(m.to_string());
                        b.last_model = Some(m.to_string());
                    }
                }
                other => *b.ignored.entry(format!("event/{other}")).or_default() += 1,
            }
        }
        let task = task_id(&unit.primary.path, None);
        let mut t = crate::model::Trajectory::new(task, HARNESS, self.name(), self.version(), vec![src.provenance("transcript")]);
        t.provenance.format_version = Some(if legacy { "codex-exec-json-legacy" } else { "codex-exec-json" }.into());
        if bad > 0 {
            t.notes.push(format!("{bad} unreadable line(s) skipped (see the diagnostics)"));
        }
        let unfinished = item_calls.keys().filter(|k| !done.contains(*k)).count();
        if unfinished > 0 {
            t.notes.push(format!("{unfinished} item(s) started and never completed"));
        }
        b.finish(&mut t);
        out.emit(t);
        Ok(())
    }
}

/// One exec item event. Calls are made when an item first appears; a completed item gets its
/// result. Before 0.46 the type field was `item_type` and messages `assistant_message`.
fn exec_item(
    b: &mut Builder,
    item: &Value,
    completed: bool,
    span: Option<SourceSpan>,
    item_calls: &mut HashMap<String, (usize, usize)>,
    done: &mut HashSet<String>,
) {
    let kind = item.get("type").or_else(|| item.get("item_type")).and_then(Value::as_str).unwrap_or_default();
    let id = item.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
    let s = |k: &str| item.get(k).and_then(Value::as_str).map(ToString::to_string);
    if done.contains(&id) {
        return;
    }
    match kind {
        "agent_message" | "assistant_message" | "plan" => {
            if completed {
                b.add_text(&s("text").unwrap_or_default(), span, None);
                done.insert(id);
            }
        }
        "reasoning" => {
            if completed {
                b.add_reasoning(s("text"));
                done.insert(id);
            }
        }
        "error" => {
            if completed {
                b.other(Role::Environment, format!("error: {}", s("message").unwrap_or_default()), span, None);
                done.insert(id);
            }
        }
        "command_execution" | "file_change" | "mcp_tool_call" | "web_search" | "todo_list" | "collab_tool_call" => {
            let (name, args) = match kind {
                "command_execution" => {
                    ("shell".to_string(), serde_json::json!({"command": item.get("command").cloned().unwrap_or(Value::Null)}))
                }
                "file_change" => {
                    ("apply_patch".to_string(), serde_json::json!({"changes": item.get("changes").cloned().unwrap_or(Value::Null)}))
                }
                "mcp_tool_call" => {
                    (mcp_name(item.get("server"), item.get("tool")), item.get("arguments").cloned().unwrap_or(serde_json::json!({})))
                }
                "web_search" => ("web_search".to_string(), serde_json::json!({"query": item.get("query").cloned().unwrap_or(Value::Null)})),
                "todo_list" => ("update_plan".to_string(), serde_json::json!({"plan": item.get("items").cloned().unwrap_or(Value::Null)})),
                _ => (
                    s("tool").unwrap_or_else(|| "collab".into()),
                    serde_json::json!({"prompt": item.get("prompt").cloned().unwrap_or(Value::Null), "receiver_thread_ids": item.get("receiver_thread_ids").cloned().unwrap_or(Value::Null)}),
                ),
            };
            let at = match item_calls.get(&id) {
                Some(&at) => {
                    b.steps[at.0].tool_calls[at.1].arguments = args;
                    at
                }
                None => {
                    b.add_call(tool_call(Some(id.clone()), name, &args), span, None);
                    let at = b.calls.get(&id).copied().unwrap_or((b.steps.len() - 1, 0));
                    item_calls.insert(id.clone(), at);
                    at
                }
            };
            let _ = at;
            if !completed || matches!(kind, "web_search" | "todo_list") {
                if completed {
                    done.insert(id);
                }
                return;
            }
            let status = s("status").unwrap_or_default();
            let mut r = match kind {
                "command_execution" => {
                    let mut r = ToolResult::new(s("aggregated_output").unwrap_or_default());
                    r.exit_code = item.get("exit_code").and_then(Value::as_i64);
                    if status == "declined" && r.output.is_empty() {
                        r.output = "declined".into();
                    }
                    r
                }
                "file_change" => {
                    let changes: Vec<String> = item
                        .get("changes")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default()
                        .iter()
                        .map(|c| {
                            format!(
                                "{} {}",
                                c.get("kind").and_then(Value::as_str).unwrap_or("?"),
                                c.get("path").and_then(Value::as_str).unwrap_or("?")
                            )
                        })
                        .collect();
                    ToolResult::new(format!("{status}: {}", changes.join(", ")))
                }
                "mcp_tool_call" => {
                    let err = item.pointer("/error/message").and_then(Value::as_str);
                    let out =
                        err.map_or_else(|| content_text(item.pointer("/result/content").unwrap_or(&Value::Null)), ToString::to_string);
                    ToolResult::new(out)
                }
                _ => ToolResult::new(status.clone()),
            };
            r.call_id = Some(id.clone());
            r.is_error = matches!(status.as_str(), "failed" | "declined")
                || r.exit_code.is_some_and(|c| c != 0)
                || item.get("error").is_some_and(|e| !e.is_null());
            b.add_result(r, span, None);
            done.insert(id);
        }
        other => *b.ignored.entry(format!("item/{other}")).or_default() += 1,
    }
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
        let r = tool_output(&Value::String("unsupported call: search_repo".into()));
        assert_eq!(r.unknown_tool.as_deref(), Some("unsupported call: search_repo"));
    }

    #[test]
    fn restarted_counters_are_added_not_lost() {
        let mut t = Totals::default();
        t.observe([100, 10, 5, 1]);
        t.observe([300, 20, 9, 2]);
        t.observe([40, 0, 3, 0]);
        assert_eq!(t.total(), Some([340, 20, 12, 2]));
    }

    #[test]
    fn errors_name_who_ended_the_run() {
        assert_eq!(error_termination("Codex ran out of room in the model's context window.").budget, Some(Budget::Context));
        assert_eq!(error_termination("You've hit your usage limit.").kind, TerminationKind::Infrastructure);
        assert_eq!(error_termination("something odd").kind, TerminationKind::HarnessError);
    }
}
