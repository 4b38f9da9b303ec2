//! OpenHands (V0): saved event lists and evaluation `output.jsonl`.
//!
//! OpenHands records a run as a stream of events serialized by `event_to_dict`: actions
//! (`action`, `args`, `tool_call_metadata`) and observations (`observation`, `content`,
//! `extras`, and `cause`, the id of the action they answer). A saved trajectory is a JSON list
//! of those events; an evaluation writes one `EvalOutput` per line of `output.jsonl`
//! (`instance_id`, `history` of events, `metrics`, `error`, `test_result`). Observations are
//! paired to actions by `cause`, so pairing never guesses. A call to an unregistered tool
//! never becomes an action event: the harness only records an error observation in its own
//! template (`Tool X is not registered. (arguments: ...)`), so the call is rebuilt from it; the
//! profile's `[[unknown_tool]]` entries say it was a rejection.
//!
//! How the run ended is left to `rules/harnesses/openhands.toml`: the controller's last error
//! (`EvalOutput.error`, or the `reason` of an `agent_state_changed` to `error`) is an error
//! signal, and the agent's last action, when it was `finish` or `reject`, a status (with its
//! `task_completed` before it). Iteration and budget limits are read from the metadata.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::build::{StepBuilder, to_u32};
use crate::ingest::adapters::shared::common::{content_text, declared_tool, num, tool_call, uint};
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::{JsonShape, Probe};
use crate::ingest::source::{Source, sha256_file};
use crate::model::{
    CallRef, DeclaredTool, Outcome, OutcomeStatus, Reasoning, Role, SourceFile, SourceSpan, Step, Tokens, ToolResult, Trajectory,
};

const HARNESS: &str = "openhands";

/// One serialized event. Fields are loose on purpose: V0 changed them over time (`id` dropped
/// when -1, `exit_code` moved into `extras.metadata`, `task_completed` added then removed).
#[derive(Deserialize)]
struct RawEvent {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    cause: Option<Value>,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    observation: Option<String>,
    #[serde(default)]
    tool_call_metadata: Option<RawToolMeta>,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    extras: Option<Value>,
    #[serde(default)]
    llm_metrics: Option<Value>,
}

#[derive(Deserialize)]
struct RawToolMeta {
    #[serde(default)]
    function_name: Option<String>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    model_response: Option<Value>,
}

/// One line of an evaluation `output.jsonl` (`EvalOutput`).
#[derive(Deserialize)]
struct RawEvalOutput<'a> {
    instance_id: Value,
    #[serde(default)]
    test_result: Option<Value>,
    #[serde(default)]
    metadata: Option<Value>,
    #[serde(borrow, default)]
    history: Option<Vec<&'a RawValue>>,
    #[serde(default)]
    metrics: Option<Value>,
    /// Kept raw, so the error signal points at its bytes.
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// Actions that are the harness's bookkeeping, not the agent acting.
const BOOKKEEPING_ACTIONS: &[&str] =
    &["change_agent_state", "null", "pause", "resume", "stop", "recall", "condensation", "condensation_request", "start"];

/// The agent's last action, when it ended the conversation (`finish` or `reject`).
struct Finish {
    action: &'static str,
    task_completed: Option<String>,
    reason: Option<String>,
    step: usize,
    span: Option<SourceSpan>,
}

/// Turns events into steps, in order, pairing observations to actions by `cause`.
#[derive(Default)]
struct Events {
    b: StepBuilder,
    /// Action event id → the call it became.
    calls_by_event: BTreeMap<i64, CallRef>,
    seen_responses: BTreeSet<String>,
    declared: Option<Vec<DeclaredTool>>,
    version: Option<String>,
    agent_class: Option<String>,
    model: Option<String>,
    prompt: Option<u64>,
    completion: Option<u64>,
    cached: Option<u64>,
    reasoning: Option<u64>,
    cost: Option<f64>,
    finish: Option<Finish>,
    /// `reason` of the last `agent_state_changed` to `error`, with the event's span.
    state_error: Option<(String, Option<SourceSpan>)>,
    rebuilt_calls: usize,
}

fn as_i64(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

use crate::util::add_count as add;

/// The call an unpaired error observation is about, read from the harness's templates for a
/// call it could not dispatch: `Tool X is not registered. (arguments: ...)` (function calling)
/// or `X is not a valid tool` (older prompts). Only the name and arguments are decoded; what
/// the message means is the profile's `[[unknown_tool]]` entries.
fn undispatched_call(content: &str) -> Option<(String, Option<String>)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"(?:Tool ([^\s.()]+) is not registered|([^\s'`]+)`?'? is not a valid tool)").expect("static regex")
    });
    let c = re.captures(content)?;
    let name = c.get(1).or_else(|| c.get(2))?.as_str().trim_matches(['\'', '"', '`']).to_string();
    let args = content.split_once("(arguments: ").map(|(_, rest)| rest.rsplit_once(')').map_or(rest, |(a, _)| a).to_string());
    Some((name, args))
}

impl Events {
    fn push(&mut self, e: RawEvent, span: Option<SourceSpan>) {
        if let Some(ts) = &e.timestamp {
            self.b.saw_time(ts);
        }
        if let Some(m) = &e.llm_metrics {
            self.cost = num(m.get("accumulated_cost")).or(self.cost);
        }
        if let Some(action) = e.action.clone() {
            self.action(&action, e, span);
        } else if let Some(obs) = e.observation.clone() {
            self.observation(&obs, e, span);
        }
    }

    fn role_of(source: Option<&str>) -> Role {
        match source {
            Some("user") => Role::User,
            Some("agent") => Role::Assistant,
            _ => Role::Environment,
        }
    }

    fn action(&mut self, action: &str, e: RawEvent, span: Option<SourceSpan>) {
        let args = e.args.unwrap_or(Value::Null);
        let arg_str = |k: &str| args.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(ToString::to_string);
        if BOOKKEEPING_ACTIONS.contains(&action) {
            self.b.ignore(&format!("{action} action"));
            return;
        }
        if action == "system" {
            let step = Step::new(Role::System, arg_str("content").unwrap_or_default());
            if let Some(tools) = args.get("tools").and_then(Value::as_array) {
                self.declared = Some(tools.iter().filter_map(declared_tool).collect());
            }
            self.version = arg_str("openhands_version").or(self.version.take());
            self.agent_class = arg_str("agent_class").or(self.agent_class.take());
            self.b.push(step, span, e.timestamp);
            return;
        }
        let role = Self::role_of(e.source.as_deref());
        let message = e.message.as_ref().map(content_text).unwrap_or_default();
        let text = match action {
            "message" => arg_str("content").unwrap_or(message),
            "finish" => arg_str("thought").or_else(|| arg_str("final_thought")).unwrap_or(message),
            _ => arg_str("thought").unwrap_or_default(),
        };
        let mut step = Step::new(role, text);
        if let Some(meta) = &e.tool_call_metadata {
            self.usage_of(meta, &mut step);
        }
        if action != "message" {
            let name = e.tool_call_metadata.as_ref().and_then(|m| m.function_name.clone()).unwrap_or_else(|| action.to_string());
            let id = e.tool_call_metadata.as_ref().and_then(|m| m.tool_call_id.clone());
            let model_args = e.tool_call_metadata.as_ref().and_then(|m| model_arguments(m, id.as_deref()));
            let call = match model_args {
                Some(a) => tool_call(id, name, &a),
                None => {
                    let mut a = args.clone();
                    if let Some(o) = a.as_object_mut() {
                        o.remove("thought");
                    }
                    tool_call(id, name, &a)
                }
            };
            step.tool_calls.push(call);
            if let Some(ev) = as_i64(e.id.as_ref()) {
                self.calls_by_event.insert(ev, CallRef { step: to_u32(self.b.len()), call: 0 });
            }
        }
        if role == Role::Assistant {
            let step = self.b.len();
            self.finish = match action {
                "finish" => {
                    let task_completed = args.get("task_completed").and_then(|v| match v {
                        Value::String(s) => Some(s.clone()),
                        Value::Bool(b) => Some(b.to_string()),
                        _ => None,
                    });
                    Some(Finish { action: "finish", task_completed, reason: None, step, span })
                }
                "reject" => {
                    let reason = args.pointer("/outputs/reason").and_then(Value::as_str).map(ToString::to_string);
                    Some(Finish { action: "reject", task_completed: None, reason, step, span })
                }
                _ => None,
            };
        }
        self.b.push(step, span, e.timestamp);
    }

    /// Per-step tokens from the model response an action came from, counted once per response
    /// (one response with several tool calls becomes several actions).
    fn usage_of(&mut self, meta: &RawToolMeta, step: &mut Step) {
        let Some(resp) = &meta.model_response else { return };
        if self.model.is_none() {
            self.model = resp.get("model").and_then(Value::as_str).map(ToString::to_string);
        }
        let rid = resp.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        if let Some(r) = resp.pointer("/choices/0/message/reasoning_content").and_then(Value::as_str).filter(|r| !r.is_empty()) {
            step.reasoning = Some(Reasoning { text: Some(r.to_string()), tokens: None });
        }
        if !rid.is_empty() && !self.seen_responses.insert(rid) {
            return;
        }
        let Some(u) = resp.get("usage").filter(|u| u.is_object()) else { return };
        let cached = uint(u.pointer("/prompt_tokens_details/cached_tokens")).or_else(|| uint(u.get("cache_read_input_tokens")));
        let reasoning = uint(u.pointer("/completion_tokens_details/reasoning_tokens"));
        let tokens = Tokens { prompt: uint(u.get("prompt_tokens")), completion: uint(u.get("completion_tokens")), reasoning, cached };
        add(&mut self.prompt, tokens.prompt);
        add(&mut self.completion, tokens.completion);
        add(&mut self.cached, tokens.cached);
        add(&mut self.reasoning, tokens.reasoning);
        if let (Some(r), Some(reason)) = (reasoning.filter(|r| *r > 0), step.reasoning.as_mut()) {
            reason.tokens = Some(r);
        }
        step.tokens = Some(tokens);
    }

    fn observation(&mut self, obs: &str, e: RawEvent, span: Option<SourceSpan>) {
        let extras = e.extras.unwrap_or(Value::Null);
        match obs {
            "agent_state_changed" => {
                let state = extras.get("agent_state").and_then(Value::as_str).unwrap_or_default();
                if state == "error" {
                    let reason = extras.get("reason").and_then(Value::as_str).filter(|r| !r.is_empty());
                    self.state_error = reason.map(|r| (r.to_string(), span));
                }
                self.b.ignore("agent_state_changed observation");
                return;
            }
            "null" => {
                self.b.ignore("null observation");
                return;
            }
            _ => {}
        }
        let content = e.content.as_ref().map(content_text).unwrap_or_default();
        let paired = as_i64(e.cause.as_ref()).and_then(|c| self.calls_by_event.get(&c).copied());
        if let Some((name, args)) = undispatched_call(&content).filter(|_| obs == "error" && paired.is_none()) {
            self.undispatched(name, args, content, e.timestamp, span);
            return;
        }
        let Some(call) = paired else {
            // The environment talking on its own (recalled knowledge, an error with no action).
            self.b.push(Step::new(Role::Environment, content), span, e.timestamp);
            return;
        };
        let exit_code =
            extras.pointer("/metadata/exit_code").and_then(Value::as_i64).or_else(|| extras.get("exit_code").and_then(Value::as_i64));
        let mut r = ToolResult::new(content);
        r.exit_code = exit_code;
        r.is_error = matches!(obs, "error" | "user_rejected") || exit_code.is_some_and(|c| c != 0);
        r.call_id = e.tool_call_metadata.as_ref().and_then(|m| m.tool_call_id.clone());
        r.name = e.tool_call_metadata.as_ref().and_then(|m| m.function_name.clone());
        r.call = Some(call);
        let mut step = Step::new(Role::Tool, String::new());
        step.tool_results.push(r);
        self.b.push(step, span, e.timestamp);
    }

    /// The model called a tool the harness could not dispatch; OpenHands records only the
    /// error, so the call is rebuilt from it (with the arguments as the message printed them).
    fn undispatched(&mut self, name: String, args: Option<String>, content: String, ts: Option<String>, span: Option<SourceSpan>) {
        let mut call = tool_call(None, name.clone(), &Value::Null);
        call.raw_arguments = args;
        let mut asked = Step::new(Role::Assistant, String::new());
        asked.tool_calls.push(call);
        let here = self.b.push(asked, span, ts.clone());
        let mut r = ToolResult::new(content);
        r.is_error = true;
        r.name = Some(name);
        r.call = Some(CallRef { step: to_u32(here), call: 0 });
        let mut step = Step::new(Role::Tool, String::new());
        step.tool_results.push(r);
        self.b.push(step, span, ts);
        self.rebuilt_calls += 1;
        self.finish = None;
    }

    /// Fills the record and its signals; `error` is the run's final error (`EvalOutput.error`)
    /// with its span, when the format keeps one.
    fn finish_into(self, t: &mut Trajectory, error: Option<(&str, Option<SourceSpan>)>) {
        t.declared_tools = self.declared;
        t.harness_version = self.version;
        t.model = t.model.take().or(self.model);
        t.usage.prompt_tokens = self.prompt;
        t.usage.completion_tokens = self.completion;
        t.usage.cached_tokens = self.cached;
        t.usage.reasoning_tokens = self.reasoning.filter(|r| *r > 0);
        t.usage.cost_usd = self.cost;
        if let Some(c) = &self.agent_class {
            t.notes.push(format!("agent class {c}"));
        }
        if self.rebuilt_calls > 0 {
            t.notes.push(format!(
                "{} tool call(s) rebuilt from the harness's errors for calls it could not dispatch (OpenHands makes no action event for them)",
                self.rebuilt_calls
            ));
        }
        self.b.finish(t);
        if let Some((err, span)) = error.filter(|(e, _)| !e.trim().is_empty()) {
            t.signals.error("error", err).with_span(span);
        }
        if let Some((reason, span)) = self.state_error.filter(|(r, _)| error.is_none_or(|(e, _)| e.trim() != r.trim())) {
            t.signals.error("agent_state_changed.extras.reason", reason).with_span(span);
        }
        if let Some(f) = self.finish {
            if let Some(tc) = f.task_completed {
                t.signals.status("args.task_completed", tc).with_span(f.span).at_step(f.step);
            }
            t.signals.status("action", f.action).with_span(f.span).at_step(f.step);
            if let Some(r) = f.reason {
                t.notes.push(format!("the agent's reject action gave the reason: {r}"));
            }
        }
    }
}

/// The arguments exactly as the model wrote them, from the response the action came from.
fn model_arguments(meta: &RawToolMeta, id: Option<&str>) -> Option<Value> {
    let calls = meta.model_response.as_ref()?.pointer("/choices/0/message/tool_calls")?.as_array()?;
    let call = calls.iter().find(|c| id.is_some() && c.get("id").and_then(Value::as_str) == id).or(if calls.len() == 1 {
        calls.first()
    } else {
        None
    })?;
    call.pointer("/function/arguments").cloned()
}

fn span_within(line: &str, part: &str, file: u32, line_start: usize, lineno: usize) -> Option<SourceSpan> {
    let base = line.as_ptr() as usize;
    let p = part.as_ptr() as usize;
    (p >= base && p + part.len() <= base + line.len()).then(|| SourceSpan {
        file,
        offset: (line_start + p - base) as u64,
        len: part.len() as u64,
        line: lineno as u64,
    })
}

/// The events of a history: a list of events, or (the old evaluation format) a list of
/// `[action, observation]` pairs.
fn events<'a>(items: &[&'a RawValue]) -> Result<Vec<&'a RawValue>, (&'a RawValue, serde_json::Error)> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        if item.get().trim_start().starts_with('[') {
            let pair: Vec<&'a RawValue> = serde_json::from_str(item.get()).map_err(|e| (*item, e))?;
            out.extend(pair);
        } else {
            out.push(*item);
        }
    }
    Ok(out)
}

/// A saved OpenHands event list (a trajectory file, a replay file).
pub struct OpenHandsEvents;

impl Adapter for OpenHandsEvents {
    fn name(&self) -> &'static str {
        HARNESS
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "OpenHands V0 event list (actions and observations paired by cause)"
    }

    fn versions(&self) -> &'static str {
        "V0 events"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        // The agent SDK's events carry a `kind` discriminator: those are `openhands-sdk`.
        if j.top_is_array && j.has("[].source") && (j.has("[].action") || j.has("[].observation")) && !j.has("[].kind") {
            return marker("list of events with source and action/observation");
        }
        Err("not a list of events with source and action/observation".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let text = src.text()?;
        let items: Vec<&RawValue> =
            serde_json::from_str(text).map_err(|e| InputError::from_json(&src.display, &src.bytes, "OpenHands event list", &e))?;
        let mut b = Events::default();
        for raw in &items {
            let e: RawEvent = serde_json::from_str(raw.get()).map_err(|e| {
                let base = src.offset_of(raw.get()).unwrap_or(0);
                InputError::from_json_at(&src.display, &src.bytes, base, "OpenHands event", &e)
            })?;
            b.push(e, src.span_of(0, raw.get()));
        }
        let task = task_from_path(&unit.primary.path);
        let mut t = crate::model::Trajectory::new(task, HARNESS, self.name(), self.version(), vec![src.provenance("transcript")]);
        t.provenance.format_version = Some("openhands-v0-events".into());
        b.finish_into(&mut t, None);
        t.notes.push("a saved event list carries no verdict: outcome comes from a verdict file, if any".into());
        out.emit(t);
        Ok(())
    }
}

/// The file name without its extension (`.json`).
pub(super) fn task_from_path(p: &Path) -> String {
    p.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// An OpenHands evaluation `output.jsonl`: one instance per line.
pub struct OpenHandsEval;

impl Adapter for OpenHandsEval {
    fn name(&self) -> &'static str {
        "openhands-eval"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "OpenHands evaluation output.jsonl (EvalOutput per line: history, metrics, error, test_result)"
    }

    fn versions(&self) -> &'static str {
        "V0 EvalOutput (events or old pairs)"
    }

    /// An evaluation output.jsonl holds every instance of a run; records go out as read.
    fn streams(&self, _unit: &Unit) -> bool {
        true
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        eval_output_shape(p)?;
        marker("EvalOutput lines (instance_id, history/test_result)")
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        read_eval_output(unit, out, "OpenHands evaluation record", |at, file| instance(at.text, file, at.no, at.start, self.name()))
    }
}

/// The shape of the first line of an `EvalOutput` file, V0 or agent SDK (lines are often longer
/// than the probe, and then only the first line's start is seen); why not, otherwise.
pub(super) fn eval_output_shape(p: &Probe) -> Result<&JsonShape, String> {
    let shape = p.jsonl.as_ref().or(p.json.as_ref().filter(|j| !j.top_is_array)).ok_or("not JSON")?;
    let eval = shape.has("instance_id")
        && (shape.has("history") || (shape.has("test_result") && (shape.has("instruction") || shape.has("metadata") || shape.truncated)));
    if eval { Ok(shape) } else { Err("no instance_id with history/test_result".into()) }
}

/// Reads an evaluation output one line at a time, each line a record by `read`; a bad line
/// costs that line only, and a file of nothing but bad lines is an error.
pub(super) fn read_eval_output(
    unit: &Unit,
    out: &mut Output<'_>,
    what: &str,
    read: impl Fn(&lines::Line<'_>, &SourceFile) -> Result<Trajectory, serde_json::Error>,
) -> Result<(), InputError> {
    let shown = &unit.primary.display;
    let sha = sha256_file(&unit.primary.path, shown)?;
    let file = SourceFile { path: shown.clone(), sha256: sha, role: "transcript".into() };
    lines::stream(&unit.primary.path, shown, |at| {
        let at = match at {
            Ok(at) => at,
            Err(d) => return out.diagnostics.push(d),
        };
        match read(&at, &file) {
            Ok(t) => out.emit(t),
            Err(e) => {
                let mut d = InputError::from_json_at(shown, at.text.as_bytes(), 0, what, &e).on_line(at.no, at.start);
                d.message = format!("{} (instance on line {})", d.message, at.no);
                out.diagnostics.push(d);
            }
        }
    })?;
    if out.emitted == 0 && !out.diagnostics.is_empty() {
        return Err(InputError::new(InputErrorKind::Schema, shown, format!("read any {what}: every line was bad"))
            .with_help("each line must be one EvalOutput JSON object (instance_id, test_result, history, metrics, error)"));
    }
    Ok(())
}

/// One `EvalOutput` line into a record; errors carry positions within the line.
fn instance(line: &str, file: &SourceFile, lineno: usize, line_start: usize, adapter: &str) -> Result<Trajectory, serde_json::Error> {
    let rec: RawEvalOutput<'_> = serde_json::from_str(line)?;
    let task = match &rec.instance_id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut t = crate::model::Trajectory::new(task, HARNESS, adapter, 1, vec![file.clone()]);
    t.provenance.format_version = Some("openhands-eval-output".into());
    t.model = rec.metadata.as_ref().and_then(|m| m.pointer("/llm_config/model")).and_then(Value::as_str).map(ToString::to_string);
    let mut b = Events::default();
    let items = rec.history.unwrap_or_default();
    let evs = events(&items).map_err(|(_, e)| e)?;
    for raw in evs {
        let e: RawEvent = serde_json::from_str(raw.get())?;
        b.push(e, span_within(line, raw.get(), 0, line_start, lineno));
    }
    let error: Option<String> = match rec.error {
        Some(raw) => serde_json::from_str(raw.get())?,
        None => None,
    };
    let error_span = rec.error.and_then(|raw| span_within(line, raw.get(), 0, line_start, lineno));
    b.finish_into(&mut t, error.as_deref().map(|e| (e, error_span)));
    if let Some(m) = &rec.metrics {
        if let Some(c) = num(m.get("accumulated_cost")) {
            t.usage.cost_usd = Some(c);
        }
        if let Some(u) = m.get("accumulated_token_usage").filter(|u| u.is_object()) {
            t.usage.prompt_tokens = uint(u.get("prompt_tokens")).or(t.usage.prompt_tokens);
            t.usage.completion_tokens = uint(u.get("completion_tokens")).or(t.usage.completion_tokens);
            t.usage.cached_tokens = uint(u.get("cache_read_tokens")).filter(|n| *n > 0).or(t.usage.cached_tokens);
        }
        if let Some(n) = m.get("token_usages").and_then(Value::as_array).map(Vec::len).filter(|n| *n > 0) {
            t.usage.api_calls = Some(n as u64);
        }
        t.signals.limits.cost_usd = num(m.get("max_budget_per_task"));
        t.signals.consumed.cost_usd = num(m.get("accumulated_cost"));
    }
    t.signals.limits.steps = rec.metadata.as_ref().and_then(|m| num(m.get("max_iterations")));
    if let Some(tr) = &rec.test_result {
        t.submission = tr.get("git_patch").and_then(Value::as_str).map(ToString::to_string);
        t.outcome = eval_outcome(tr, &file.path, lineno);
    }
    Ok(t)
}

/// The verdict `eval_infer` writes into `test_result.report`.
fn eval_outcome(tr: &Value, file: &str, lineno: usize) -> Outcome {
    let at = file.to_string();
    let Some(report) = tr.get("report").filter(|r| r.is_object()) else {
        return match tr.get("resolved").and_then(Value::as_bool) {
            Some(r) => Outcome::from_reward(if r { 1.0 } else { 0.0 }, at, format!("test_result.resolved (line {lineno})")),
            None => Outcome::unknown(),
        };
    };
    let flag = |k: &str| report.get(k).and_then(Value::as_bool).unwrap_or(false);
    let resolved = report.get("resolved").and_then(Value::as_bool);
    let mut o = match resolved {
        Some(true) => Outcome::from_reward(1.0, at, format!("test_result.report.resolved (line {lineno})")),
        Some(false) if flag("error_eval") || flag("test_timeout") => {
            let mut o = Outcome::new(OutcomeStatus::Errored, at, format!("test_result.report.resolved (line {lineno})"));
            o.detail =
                Some(if flag("test_timeout") { "the tests timed out".into() } else { "the evaluation itself failed (error_eval)".into() });
            o
        }
        Some(false) => Outcome::from_reward(0.0, at, format!("test_result.report.resolved (line {lineno})")),
        None => return Outcome::unknown(),
    };
    if flag("empty_generation") {
        o.detail = Some("empty patch (empty_generation)".into());
    } else if flag("failed_apply_patch") {
        o.detail = Some("the patch did not apply (failed_apply_patch)".into());
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undispatched_calls_are_rebuilt_from_the_harness_template() {
        assert_eq!(
            undispatched_call(
                "Tool str_replace is not registered. (arguments: {'path': '/a'}). Please check the tool name and retry with an existing tool."
            ),
            Some(("str_replace".into(), Some("{'path': '/a'}".into())))
        );
        assert_eq!(undispatched_call("search_web is not a valid tool, try one of [execute_bash]"), Some(("search_web".into(), None)));
        assert_eq!(undispatched_call("Command failed"), None);
    }
}
