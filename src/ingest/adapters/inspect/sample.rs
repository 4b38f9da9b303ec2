//! One Inspect sample (`EvalSample` in `inspect_ai/log/_log.py`) into one record.
//!
//! Steps come from the sample's final `messages` (`inspect_ai/model/_chat_message.py`); the
//! `events` add what messages lack: per-turn usage (model events, joined by output message id),
//! tool timestamps (tool events, by call id), and the tools offered to the model (each model
//! event's `tools`, the run-time registry). How the sample ended is read by [`super::ended`],
//! its verdict by [`super::score`].

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::header::LogContext;
use crate::ingest::adapters::shared::build::StepBuilder;
use crate::ingest::adapters::shared::common::{num, tool_call, uint};
use crate::ingest::source::Source;
use crate::model::{DeclaredTool, Reasoning, Role, SourceFile, Step, Tokens, ToolCall, Trajectory};

pub const HARNESS: &str = "inspect";

/// One sample. Messages and events are kept as raw slices so each step can point at its bytes;
/// so are the facts of its end, so their signals can.
#[derive(Deserialize)]
pub struct RawSample<'a> {
    id: Value,
    #[serde(default)]
    epoch: Option<u64>,
    #[serde(borrow, default)]
    pub messages: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    pub output: Option<RawOutput<'a>>,
    #[serde(default)]
    pub scores: Option<serde_json::Map<String, Value>>,
    /// Logs before `scores` existed had a single `score`.
    #[serde(default)]
    pub score: Option<Value>,
    #[serde(borrow, default)]
    events: Vec<&'a RawValue>,
    #[serde(default)]
    pub model_usage: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub total_time: Option<f64>,
    #[serde(default)]
    pub working_time: Option<f64>,
    #[serde(default)]
    uuid: Option<String>,
    /// `EvalError`: `message`, `traceback`.
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
    /// `EvalSampleLimit`: `type`, `limit` (a bare type string in older logs).
    #[serde(borrow, default)]
    pub limit: Option<&'a RawValue>,
    #[serde(default)]
    started_at: Option<String>,
    #[serde(default)]
    completed_at: Option<String>,
    #[serde(default)]
    pub turn_count: Option<u64>,
    #[serde(default)]
    pub token_limit_usage: Option<u64>,
    #[serde(borrow, default)]
    attachments: Attachments<'a>,
}

#[derive(Deserialize, Default)]
pub struct RawOutput<'a> {
    #[serde(default)]
    model: Option<String>,
    #[serde(borrow, default)]
    pub choices: Vec<RawChoice<'a>>,
    #[serde(default)]
    usage: Option<Value>,
}

#[derive(Deserialize)]
pub struct RawChoice<'a> {
    #[serde(default)]
    message: Option<RawMessageId>,
    /// Borrowed where the log has no escapes, so a signal can point at it.
    #[serde(borrow, default)]
    pub stop_reason: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct RawMessageId {
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
struct RawMessage {
    #[serde(default)]
    id: Option<String>,
    role: String,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    tool_calls: Option<Vec<RawToolCall>>,
    #[serde(default)]
    tool_call_id: Option<Value>,
    #[serde(default)]
    function: Option<String>,
    #[serde(default)]
    error: Option<RawToolError>,
}

#[derive(Deserialize)]
struct RawToolCall {
    #[serde(default)]
    id: Option<String>,
    function: String,
    #[serde(default)]
    arguments: Value,
    #[serde(default)]
    parse_error: Option<String>,
}

/// `ToolCallError`: a kind (`parsing`, `timeout`, `permission`, `approval`, ...) and a message.
#[derive(Deserialize)]
struct RawToolError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

/// An event, read lazily: only model and tool events are looked into.
#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(default)]
    event: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    completed: Option<String>,
    #[serde(borrow, default)]
    tools: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    /// A tool event's tool and its arguments.
    #[serde(default)]
    function: Option<String>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawToolInfo {
    name: String,
    #[serde(default)]
    description: Option<String>,
}

/// What the model events say about one assistant message.
struct Turn {
    tokens: Option<Tokens>,
    completed: Option<String>,
}

/// Facts gathered from the events.
#[derive(Default)]
struct EventFacts {
    turns: BTreeMap<String, Turn>,
    tool_times: BTreeMap<String, String>,
    declared: Vec<DeclaredTool>,
    model_calls: u64,
    /// Tool events by tool: every call that ran, including the one a solver took out of the
    /// messages (react puts its last accepted answer in the reply's text instead).
    pub calls: BTreeMap<String, u64>,
    /// The arguments of each tool's last call, as written.
    last_arguments: BTreeMap<String, String>,
}

/// Content Inspect moved out of messages and events (`attachment://<hash>`), kept raw so an
/// image-heavy sample is not copied: only what a step shows is decoded.
type Attachments<'a> = BTreeMap<String, &'a RawValue>;

fn attachment<'a>(text: &'a str, attachments: &Attachments<'_>) -> std::borrow::Cow<'a, str> {
    text.strip_prefix("attachment://")
        .and_then(|h| attachments.get(h))
        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
        .map_or(std::borrow::Cow::Borrowed(text), std::borrow::Cow::Owned)
}

/// The events' facts; every event's times bound the run.
fn events(raw: &[&RawValue], attachments: &Attachments<'_>, b: &mut StepBuilder) -> EventFacts {
    let mut f = EventFacts::default();
    let mut seen_tools: BTreeSet<String> = BTreeSet::new();
    for r in raw {
        // An event that does not parse costs only what it would have added.
        let Ok(e) = serde_json::from_str::<RawEvent<'_>>(r.get()) else { continue };
        for ts in e.timestamp.iter().chain(&e.completed) {
            b.saw_time(ts);
        }
        match e.event.as_str() {
            "model" => {
                f.model_calls += 1;
                if let Some(tools) = e.tools.and_then(|t| serde_json::from_str::<Vec<RawToolInfo>>(t.get()).ok()) {
                    for t in tools {
                        if seen_tools.insert(t.name.clone()) {
                            let description = t
                                .description
                                .as_deref()
                                .map(|d| attachment(d, attachments).lines().next().unwrap_or_default().to_string())
                                .filter(|d| !d.is_empty());
                            f.declared.push(DeclaredTool { name: t.name, description });
                        }
                    }
                }
                if let Some(out) = e.output.and_then(|o| serde_json::from_str::<RawOutput<'_>>(o.get()).ok()) {
                    let id = out.choices.first().and_then(|c| c.message.as_ref()).and_then(|m| m.id.clone());
                    if let Some(id) = id {
                        f.turns.insert(id, Turn { tokens: out.usage.as_ref().map(tokens_of), completed: e.completed.clone() });
                    }
                }
            }
            "tool" => {
                if let Some(name) = e.function.clone() {
                    if let Some(a) = e.arguments {
                        f.last_arguments.insert(name.clone(), a.get().to_string());
                    }
                    *f.calls.entry(name).or_default() += 1;
                }
                let id = e.id.and_then(|i| serde_json::from_str::<String>(i.get()).ok());
                if let (Some(id), Some(ts)) = (id, e.timestamp.clone()) {
                    f.tool_times.insert(id, ts);
                }
            }
            _ => {}
        }
    }
    f
}

fn tokens_of(u: &Value) -> Tokens {
    Tokens {
        prompt: uint(u.get("input_tokens")),
        completion: uint(u.get("output_tokens")),
        reasoning: uint(u.get("reasoning_tokens")).filter(|n| *n > 0),
        cached: uint(u.get("input_tokens_cache_read")).filter(|n| *n > 0),
    }
}

/// Text and reasoning of a message `content`: a string, or a list of content parts
/// (`text`, `reasoning`, `image`, `tool_use`, ...). Media parts are named, not dropped.
fn content(v: &Value, attachments: &Attachments<'_>) -> (String, Option<String>) {
    match v {
        Value::String(s) => (attachment(s, attachments).into_owned(), None),
        Value::Array(parts) => {
            let mut text: Vec<String> = Vec::new();
            let mut reasoning: Vec<String> = Vec::new();
            for p in parts {
                let kind = p.get("type").and_then(Value::as_str).unwrap_or("text");
                match kind {
                    "text" => {
                        if let Some(t) = p.get("text").and_then(Value::as_str) {
                            text.push(attachment(t, attachments).into_owned());
                        }
                    }
                    "reasoning" => {
                        let redacted = p.get("redacted").and_then(Value::as_bool).unwrap_or(false);
                        match p.get("reasoning").and_then(Value::as_str) {
                            Some(r) if !redacted => reasoning.push(attachment(r, attachments).into_owned()),
                            _ => reasoning.push("[redacted reasoning]".into()),
                        }
                    }
                    other => text.push(format!("[{other}]")),
                }
            }
            let reasoning = (!reasoning.is_empty()).then(|| reasoning.join("\n"));
            (text.join("\n"), reasoning)
        }
        Value::Null => (String::new(), None),
        other => (other.to_string(), None),
    }
}

/// `Error parsing the following tool call arguments:\n\n<raw>\n\nError details: <why>`
/// (`tool_parse_error_message`) → the raw arguments as the model wrote them.
fn raw_arguments_of(parse_error: &str) -> Option<String> {
    let rest = parse_error.strip_prefix("Error parsing the following tool call arguments:")?.trim_start_matches('\n');
    let raw = rest.rsplit_once("\n\nError details:").map_or(rest, |(a, _)| a);
    Some(raw.to_string())
}

/// A sample id, or a scalar score, as text.
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Where the sample's bytes live, for spans and for the outcome's source.
pub struct SampleSource<'a> {
    pub src: &'a Source,
    /// Index of `src` in the record's provenance files.
    pub file_ix: u32,
    pub files: Vec<SourceFile>,
}

impl SampleSource<'_> {
    /// A span over a slice of the sample's bytes.
    pub fn span_of(&self, part: &str) -> Option<crate::model::SourceSpan> {
        self.src.span_of(self.file_ix, part)
    }
}

/// One sample into a record.
pub fn sample(raw: &str, at: &SampleSource<'_>, ctx: &LogContext, adapter: &str) -> Result<Trajectory, serde_json::Error> {
    let s: RawSample<'_> = serde_json::from_str(raw)?;
    let task = text_of(&s.id);
    let epoch = s.epoch.unwrap_or(1);
    let mut t = Trajectory::new(task.clone(), HARNESS, adapter, 1, at.files.clone());
    t.trial = u32::try_from(epoch.saturating_sub(1)).unwrap_or(u32::MAX);
    t.session_id = Some(s.uuid.clone().unwrap_or_else(|| format!("{task}_epoch_{epoch}")));
    t.harness_version.clone_from(&ctx.inspect_version);
    t.provenance.format_version = Some(ctx.format_version.clone());
    t.model = ctx
        .model
        .clone()
        .or_else(|| s.model_usage.as_ref().and_then(|m| m.keys().next().cloned()))
        .or_else(|| s.output.as_ref().and_then(|o| o.model.clone()));
    t.notes.extend(ctx.notes.iter().cloned());
    if let Some(task_name) = &ctx.task {
        t.notes.push(format!("Inspect task `{task_name}`, sample {task}, epoch {epoch}"));
    }
    if let Some(solver) = &ctx.solver {
        t.notes.push(format!("solver: {solver}"));
    }
    if let Some(st) = ctx.status.as_deref().filter(|s| *s != "success") {
        t.notes.push(format!("the eval's status is `{st}`"));
    }

    let mut b = StepBuilder::new();
    let facts = events(&s.events, &s.attachments, &mut b);
    for m in &s.messages {
        let msg: RawMessage = serde_json::from_str(m.get())?;
        let step = message_step(&msg, &facts, &s.attachments, &b);
        b.push(step, at.span_of(m.get()), None);
    }
    if let Some(sub) = &ctx.submissions {
        restore_final_answer(&mut b, &facts, &sub.tool);
    }
    if !facts.declared.is_empty() {
        t.declared_tools = Some(facts.declared.clone());
    }
    usage(&mut t, &s, &facts);
    t.started_at.clone_from(&s.started_at);
    t.ended_at.clone_from(&s.completed_at);
    b.finish(&mut t);
    super::ended::record(&mut t, &s, at, ctx, &facts.calls);
    let file = at.files.get(at.file_ix as usize).map(|f| f.path.clone()).unwrap_or_default();
    let (outcome, answer) = super::score::outcome(&s, &file);
    t.outcome = outcome;
    t.submission = answer;
    Ok(t)
}

/// `react` ends its loop on an accepted answer by taking the answer's call out of the reply and
/// appending the answer to its text, so the messages show a reply without an action where the
/// agent submitted. The tool events keep the call: put it back on that last reply, so the run
/// ends on its answer as it did.
fn restore_final_answer(b: &mut StepBuilder, facts: &EventFacts, tool: &str) {
    let ran = facts.calls.get(tool).copied().unwrap_or(0);
    let Some(args) = facts.last_arguments.get(tool) else { return };
    let in_messages = b.steps().iter().flat_map(|s| &s.tool_calls).filter(|c| c.name == tool).count() as u64;
    let last_is_bare_reply = b.steps().last().is_some_and(|s| s.role == Role::Assistant && s.tool_calls.is_empty());
    if ran <= in_messages || !last_is_bare_reply {
        return;
    }
    let ix = b.len() - 1;
    let arguments = serde_json::from_str::<Value>(args).unwrap_or(Value::Null);
    b.add_call(ix, ToolCall { id: None, name: tool.to_string(), arguments, raw_arguments: None });
    b.note(format!("the run's last `{tool}` call is only in its events (react moves an accepted answer into the reply's text); it was put back on the last reply"));
}

fn message_step(msg: &RawMessage, facts: &EventFacts, attachments: &Attachments<'_>, b: &StepBuilder) -> Step {
    let (text, reasoning) = content(&msg.content, attachments);
    let role = match msg.role.as_str() {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        _ => Role::Environment,
    };
    if role == Role::Tool {
        let call_id = msg.tool_call_id.as_ref().and_then(Value::as_str);
        let mut r = b.result_for(call_id, text);
        r.name.clone_from(&msg.function);
        if let Some(err) = &msg.error {
            r.is_error = true;
            r.error_type = Some(err.kind.clone()).filter(|k| !k.is_empty());
            if !err.message.is_empty() && !r.output.contains(&err.message) {
                if !r.output.is_empty() {
                    r.output.push('\n');
                }
                r.output.push_str(&err.message);
            }
        }
        let mut step = Step::new(Role::Tool, String::new());
        step.timestamp = call_id.and_then(|id| facts.tool_times.get(id)).cloned();
        step.tool_results.push(r);
        return step;
    }
    let mut step = Step::new(role, text);
    step.reasoning = reasoning.map(|r| Reasoning { text: Some(r), tokens: None });
    for c in msg.tool_calls.iter().flatten() {
        match &c.parse_error {
            Some(err) => {
                let mut call = tool_call(c.id.clone(), &c.function, &Value::Null);
                call.raw_arguments = raw_arguments_of(err).or_else(|| Some(c.arguments.to_string()));
                step.tool_calls.push(call);
                // The format's own field says the arguments did not parse.
                if step.format_error.is_none() {
                    step.format_error = Some(err.lines().filter(|l| !l.trim().is_empty()).take(3).collect::<Vec<_>>().join("\n"));
                }
            }
            None => step.tool_calls.push(tool_call(c.id.clone(), &c.function, &c.arguments)),
        }
    }
    if let Some(turn) = msg.id.as_ref().and_then(|id| facts.turns.get(id)) {
        step.tokens.clone_from(&turn.tokens);
        step.timestamp.clone_from(&turn.completed);
        if let (Some(r), Some(tok)) = (step.reasoning.as_mut(), turn.tokens.as_ref().and_then(|t| t.reasoning)) {
            r.tokens = Some(tok);
        }
    }
    step
}

fn usage(t: &mut Trajectory, s: &RawSample<'_>, facts: &EventFacts) {
    let add = crate::util::add_count;
    let mut cost: Option<f64> = None;
    for u in s.model_usage.iter().flat_map(|m| m.values()) {
        add(&mut t.usage.prompt_tokens, uint(u.get("input_tokens")));
        add(&mut t.usage.completion_tokens, uint(u.get("output_tokens")));
        add(&mut t.usage.cached_tokens, uint(u.get("input_tokens_cache_read")));
        add(&mut t.usage.reasoning_tokens, uint(u.get("reasoning_tokens")));
        if let Some(c) = num(u.get("total_cost")) {
            cost = Some(cost.unwrap_or(0.0) + c);
        }
    }
    t.usage.cost_usd = cost;
    t.usage.wall_seconds = s.total_time;
    t.usage.api_calls = (facts.model_calls > 0).then_some(facts.model_calls);
}

/// Tokens of every model the sample used, as `model_usage` totals them.
pub fn total_tokens(s: &RawSample<'_>) -> Option<f64> {
    let mut total = None;
    for u in s.model_usage.iter().flat_map(|m| m.values()) {
        if let Some(n) = num(u.get("total_tokens")) {
            total = Some(total.unwrap_or(0.0) + n);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_keep_the_raw_arguments() {
        let e = "Error parsing the following tool call arguments:\n\n{\"cmd\": \"ls\n\nError details: Unterminated string";
        assert_eq!(raw_arguments_of(e).as_deref(), Some("{\"cmd\": \"ls"));
    }
}
