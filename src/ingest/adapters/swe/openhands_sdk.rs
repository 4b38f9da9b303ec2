//! OpenHands agent SDK ("V1", OpenHands/software-agent-sdk): a saved list of events.
//!
//! Read from the SDK's event models (openhands-sdk/openhands/sdk/event/ at commit 611629e6 of
//! OpenHands/software-agent-sdk). Every event carries a `kind` discriminator (the class
//! name), `id`, `timestamp` and `source` (`agent`, `user`, `environment`):
//! `SystemPromptEvent` (`system_prompt`, `tools`: dumped `ToolDefinition`s, which carry their
//! name as `title`), `MessageEvent` (`llm_message` with `role` and `content`), `ActionEvent`
//! (`thought`, `action`, `tool_name`, `tool_call_id`, `tool_call` {`id`,`name`,`arguments`},
//! `llm_response_id`), `ObservationEvent`
//! (`observation` {`content`, `is_error`}, `tool_call_id`, `action_id`),
//! `UserRejectObservation` (`rejection_reason`), `AgentErrorEvent` (`error`, answering a call
//! by `tool_call_id`), `ConversationErrorEvent` (`code`, `detail`), `PauseEvent`,
//! `ConversationStateUpdateEvent` (`key`, `value`; `execution_status` or a `full_state`
//! snapshot that also holds `stats`). Results pair to calls by `tool_call_id`.
//!
//! How the run ended is left to `rules/harnesses/openhands.toml`: the last
//! `execution_status` seen is a status signal, the `finish` tool call a status `action`, and a
//! conversation error an error signal. Usage comes from `stats.usage_to_metrics` of the last
//! full state (accumulated cost and token usage), else from `llm_metrics` where an event has it.

use std::path::{Path, PathBuf};

use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::build::StepBuilder;
use crate::ingest::adapters::shared::common::{content_text, declared_tool, num, tool_call, uint};
use crate::ingest::adapters::shared::json_walk::{document, each_at};
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, FileSet, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Reasoning, Role, SourceSpan, Step, ToolResult, Trajectory};

const HARNESS: &str = "openhands";

#[derive(Default)]
struct Usage {
    cost: Option<f64>,
    prompt: Option<u64>,
    completion: Option<u64>,
    cached: Option<u64>,
    reasoning: Option<u64>,
    calls: Option<u64>,
    model: Option<String>,
}

/// Accumulated usage from a `Metrics` dump (`accumulated_cost`, `accumulated_token_usage`).
fn usage_from_metrics(metrics: &[&Value]) -> Option<Usage> {
    if metrics.is_empty() {
        return None;
    }
    use crate::util::add_count as add_u;
    let mut u = Usage::default();
    for m in metrics {
        if let Some(c) = num(m.get("accumulated_cost")) {
            u.cost = Some(u.cost.unwrap_or(0.0) + c);
        }
        if let Some(t) = m.get("accumulated_token_usage").filter(|t| t.is_object()) {
            add_u(&mut u.prompt, uint(t.get("prompt_tokens")));
            add_u(&mut u.completion, uint(t.get("completion_tokens")));
            add_u(&mut u.cached, uint(t.get("cache_read_tokens")));
            add_u(&mut u.reasoning, uint(t.get("reasoning_tokens")));
        }
        if let Some(n) = m.get("token_usages").and_then(Value::as_array).map(Vec::len).filter(|n| *n > 0) {
            add_u(&mut u.calls, Some(n as u64));
        }
        if u.model.is_none() {
            u.model = m.get("model_name").and_then(Value::as_str).filter(|s| !s.is_empty() && *s != "default").map(String::from);
        }
    }
    Some(u)
}

fn text_of(v: Option<&Value>) -> String {
    v.map(content_text).unwrap_or_default()
}

/// A tool the conversation offered. A dumped `ToolDefinition` has no `name` (a class attribute
/// in the SDK); its computed `title` is the annotations' title, else that name.
fn offered_tool(v: &Value) -> Option<crate::model::DeclaredTool> {
    declared_tool(v).or_else(|| {
        let name = v.get("title").and_then(Value::as_str).filter(|n| !n.is_empty())?.to_string();
        let description = v.get("description").and_then(Value::as_str).map(|d| d.lines().next().unwrap_or("").to_string());
        Some(crate::model::DeclaredTool { name, description })
    })
}

/// Turns SDK events into steps and signals; shared by every format that holds them.
#[derive(Default)]
pub(super) struct Conv {
    b: StepBuilder,
    declared: Option<Vec<crate::model::DeclaredTool>>,
    status: Option<(String, Option<SourceSpan>, &'static str)>,
    finish: Option<(usize, Option<SourceSpan>)>,
    errors: Vec<(String, Option<SourceSpan>)>,
    usage: Option<Usage>,
    event_cost: Option<f64>,
    paused: usize,
    rejected: usize,
}

impl Conv {
    pub(super) fn push(&mut self, e: &Value, span: Option<SourceSpan>) {
        let kind = e.get("kind").and_then(Value::as_str).unwrap_or_default();
        let ts = e.get("timestamp").and_then(Value::as_str).map(String::from);
        if let Some(t) = &ts {
            self.b.saw_time(t);
        }
        if let Some(m) = e.get("llm_metrics") {
            self.event_cost = num(m.get("accumulated_cost")).or(self.event_cost);
        }
        let source = e.get("source").and_then(Value::as_str).unwrap_or_default();
        let s = |k: &str| e.get(k).and_then(Value::as_str).map(String::from);
        match kind {
            "SystemPromptEvent" => {
                let text = e.pointer("/system_prompt/text").and_then(Value::as_str).unwrap_or_default().to_string();
                if let Some(tools) = e.get("tools").and_then(Value::as_array) {
                    self.declared = Some(tools.iter().filter_map(offered_tool).collect());
                }
                self.b.push(Step::new(Role::System, text), span, ts);
            }
            "MessageEvent" => {
                let m = e.get("llm_message").unwrap_or(&Value::Null);
                let role = match (source, m.get("role").and_then(Value::as_str)) {
                    ("user", _) | (_, Some("user")) => Role::User,
                    ("agent", _) | (_, Some("assistant")) => Role::Assistant,
                    _ => Role::Environment,
                };
                let mut step = Step::new(role, text_of(m.get("content")));
                if let Some(r) = m.get("reasoning_content").and_then(Value::as_str).filter(|r| !r.is_empty()) {
                    step.reasoning = Some(Reasoning { text: Some(r.to_string()), tokens: None });
                }
                self.b.push(step, span, ts);
            }
            "ActionEvent" => {
                let tc = e.get("tool_call").unwrap_or(&Value::Null);
                let name = s("tool_name").or_else(|| tc.get("name").and_then(Value::as_str).map(String::from)).unwrap_or_default();
                let id = s("tool_call_id").or_else(|| tc.get("id").and_then(Value::as_str).map(String::from));
                let args = match tc.get("arguments") {
                    Some(a) => a.clone(),
                    None => {
                        let mut a = e.get("action").cloned().unwrap_or(Value::Null);
                        if let Some(o) = a.as_object_mut() {
                            o.remove("kind");
                        }
                        a
                    }
                };
                let mut step = Step::new(Role::Assistant, text_of(e.get("thought")));
                if let Some(r) = e.get("reasoning_content").and_then(Value::as_str).filter(|r| !r.is_empty()) {
                    step.reasoning = Some(Reasoning { text: Some(r.to_string()), tokens: None });
                }
                let finish = name == "finish" || e.pointer("/action/kind").and_then(Value::as_str) == Some("FinishAction");
                if finish && step.text.is_empty() {
                    step.text = e.pointer("/action/message").and_then(Value::as_str).unwrap_or_default().to_string();
                }
                let at = self.b.push(step, span, ts);
                self.b.add_call(at, tool_call(id, name, &args));
                self.finish = if finish { Some((at, span)) } else { None };
            }
            "ObservationEvent" | "UserRejectObservation" | "AgentErrorEvent" => {
                let id = s("tool_call_id");
                let (out, is_error) = match kind {
                    "ObservationEvent" => {
                        let o = e.get("observation").unwrap_or(&Value::Null);
                        (text_of(o.get("content")), o.get("is_error").and_then(Value::as_bool).unwrap_or(false))
                    }
                    "UserRejectObservation" => {
                        self.rejected += 1;
                        (format!("Action rejected: {}", s("rejection_reason").unwrap_or_default()), true)
                    }
                    _ => (s("error").unwrap_or_default(), true),
                };
                let mut r: ToolResult = self.b.result_for(id.as_deref(), out);
                r.is_error = is_error;
                r.name = s("tool_name");
                let mut step = Step::new(Role::Tool, String::new());
                step.tool_results.push(r);
                self.b.push(step, span, ts);
                if kind == "AgentErrorEvent" && self.finish.is_some() {
                    self.finish = None;
                }
            }
            "ConversationErrorEvent" => {
                let text = format!("{}: {}", s("code").unwrap_or_default(), s("detail").unwrap_or_default());
                self.errors.push((text, span));
            }
            "PauseEvent" | "InterruptEvent" => {
                self.paused += 1;
                self.b.ignore(kind);
            }
            "ConversationStateUpdateEvent" => {
                let key = s("key").unwrap_or_default();
                let v = e.get("value").unwrap_or(&Value::Null);
                let state = if key == "full_state" { v } else { &Value::Null };
                if key == "execution_status" {
                    if let Some(st) = v.as_str() {
                        self.status = Some((st.to_string(), span, "execution_status"));
                    }
                } else if let Some(st) = state.get("execution_status").and_then(Value::as_str) {
                    self.status = Some((st.to_string(), span, "execution_status"));
                }
                let stats = if key == "stats" { Some(v) } else { state.get("stats") };
                if let Some(m) = stats.and_then(|st| st.get("usage_to_metrics")).and_then(Value::as_object) {
                    self.usage = usage_from_metrics(&m.values().collect::<Vec<_>>()).or(self.usage.take());
                }
                self.b.ignore(kind);
            }
            other => self.b.ignore(if other.is_empty() { "event without kind" } else { other }),
        }
    }

    /// Usage from one accumulated `Metrics` dump, in place of what the events said.
    pub(super) fn use_metrics(&mut self, metrics: &Value) {
        if metrics.is_object() {
            self.usage = usage_from_metrics(&[metrics]).or(self.usage.take());
        }
    }

    pub(super) fn finish_into(self, t: &mut Trajectory) {
        t.declared_tools = self.declared;
        if let Some(u) = self.usage {
            t.usage.prompt_tokens = u.prompt;
            t.usage.completion_tokens = u.completion;
            t.usage.cached_tokens = u.cached.filter(|n| *n > 0);
            t.usage.reasoning_tokens = u.reasoning.filter(|n| *n > 0);
            t.usage.cost_usd = u.cost;
            t.usage.api_calls = u.calls;
            t.model = t.model.take().or(u.model);
        } else {
            t.usage.cost_usd = self.event_cost;
        }
        if self.paused > 0 {
            t.notes.push(format!("{} pause/interrupt event(s)", self.paused));
        }
        if self.rejected > 0 {
            t.notes.push(format!("{} action(s) rejected by the user or a hook", self.rejected));
        }
        self.b.finish(t);
        for (e, span) in self.errors {
            t.signals.error("ConversationErrorEvent", e).with_span(span);
        }
        if let Some((step, span)) = self.finish {
            t.signals.status("action", "finish").with_span(span).at_step(step);
        }
        if let Some((st, span, field)) = self.status {
            t.signals.status(field, st).with_span(span);
        }
    }
}

/// A saved OpenHands agent-SDK event list (the SDK's `events/` as one JSON list).
pub struct OpenHandsSdk;

impl Adapter for OpenHandsSdk {
    fn name(&self) -> &'static str {
        "openhands-sdk"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "OpenHands agent SDK (V1) event list (events with kind, paired by tool_call_id)"
    }

    fn versions(&self) -> &'static str {
        "agent SDK V1 events (kind)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        let kind_ok = j.str("[].kind").is_some_and(|k| k.ends_with("Event") || k.ends_with("Observation"));
        if j.top_is_array && j.has("[].source") && kind_ok {
            return marker("list of SDK events with kind and source");
        }
        Err("not a list of SDK events with kind and source".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let items: Vec<&RawValue> = document(&src, "OpenHands SDK event list")?;
        let mut c = Conv::default();
        for (at, e) in each_at::<Value>(&src, &items, "OpenHands SDK event")? {
            c.push(&e, Some(src.span(0, at.start, at.len())));
        }
        let task = super::openhands::task_from_path(&unit.primary.path);
        let mut t = Trajectory::new(task, HARNESS, self.name(), self.version(), vec![src.provenance("transcript")]);
        t.provenance.format_version = Some("openhands-sdk-events".into());
        c.finish_into(&mut t);
        t.notes.push("a saved event list carries no verdict: outcome comes from a verdict file, if any".into());
        out.emit(t);
        Ok(())
    }
}

/// A persisted agent-SDK conversation: `base_state.json` with its `events/event-<n>-<id>.json`.
pub struct OpenHandsSdkConversation;

fn event_files(primary: &Path, files: &FileSet) -> Vec<PathBuf> {
    let Some(dir) = primary.parent().map(|d| d.join("events")) else { return Vec::new() };
    let mut v: Vec<PathBuf> = files
        .range(dir.clone()..)
        .take_while(|(p, _)| p.starts_with(&dir))
        .filter(|(p, _)| {
            p.parent() == Some(dir.as_path())
                && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("event-") && n.ends_with(".json"))
        })
        .map(|(p, _)| p.clone())
        .collect();
    v.sort();
    v
}

impl Adapter for OpenHandsSdkConversation {
    fn name(&self) -> &'static str {
        "openhands-sdk-conversation"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "OpenHands agent SDK (V1) conversation directory (base_state.json and events/)"
    }

    fn versions(&self) -> &'static str {
        "agent SDK V1 persistence"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if p.name == "base_state.json" && !j.top_is_array && j.has("execution_status") {
            return marker("base_state.json with execution_status");
        }
        Err("not an SDK base_state.json".into())
    }

    fn companions(&self, primary: &Path, files: &FileSet) -> Vec<PathBuf> {
        event_files(primary, files)
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let state: Value = src.json("OpenHands SDK base_state.json")?;
        let mut c = Conv::default();
        let mut prov = vec![src.provenance("state")];
        let mut events: Vec<&crate::ingest::format::FileEntry> = unit.companions.iter().collect();
        events.sort_by(|a, b| a.path.cmp(&b.path));
        for (i, f) in events.iter().enumerate() {
            let es = Source::read(&f.path, &f.display)?;
            let e: Value = es.json("OpenHands SDK event")?;
            let file = u32::try_from(i + 1).unwrap_or(u32::MAX);
            c.push(&e, Some(es.span(file, 0, es.bytes.len())));
            prov.push(es.provenance("transcript"));
        }
        if let Some(st) = state.get("execution_status").and_then(Value::as_str) {
            c.status = Some((st.to_string(), None, "execution_status"));
        }
        if let Some(m) = state.pointer("/stats/usage_to_metrics").and_then(Value::as_object) {
            c.usage = usage_from_metrics(&m.values().collect::<Vec<_>>()).or(c.usage.take());
        }
        let task = state.get("id").and_then(Value::as_str).map(String::from).unwrap_or_else(|| {
            unit.primary.path.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        });
        let mut t = Trajectory::new(task, HARNESS, self.name(), self.version(), prov);
        t.provenance.format_version = Some("openhands-sdk-persistence".into());
        t.model = state.pointer("/agent/llm/model").and_then(Value::as_str).map(String::from);
        t.signals.limits.steps = num(state.get("max_iterations"));
        c.finish_into(&mut t);
        t.notes.push("a saved conversation carries no verdict: outcome comes from a verdict file, if any".into());
        out.emit(t);
        Ok(())
    }
}
