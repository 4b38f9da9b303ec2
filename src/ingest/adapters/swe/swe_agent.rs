//! SWE-agent trajectories (`<instance>.traj`), old text actions (0.x) and function calling (≥1.0).
//!
//! A `.traj` holds `trajectory` (one entry per model reply: `response`, `thought`, `action`,
//! `observation`), `history` (the messages the model saw) and `info` (exit status, submission,
//! `model_stats`). The trajectory is the complete record: a reply the harness rejected and
//! requeried (format error, blocked command, bash syntax error) is an entry there but never
//! reaches the history, and the final step is often missing from the history. So steps come
//! from the trajectory, and the history adds what only it has: the opening messages and, for
//! function calling, the tool calls with their ids. Text actions are shell input (SWE-agent runs
//! them in its bash session, where its tools are installed as commands), so they become `bash`
//! calls with `{"command": action}`. The complaint that follows a rejected reply is the last
//! message of the next entry's `query`, when the file keeps queries.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::common::{content_text, tool_call};
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, file_name, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{
    Budget, CallRef, DeclaredTool, Enforcer, Reasoning, Role, Step, Termination, TerminationKind, ToolCall, ToolResult, Trajectory,
};

/// Actions SWE-agent 0.x records for steps the harness itself ended (no model action).
/// (`exit_forfeit` is not among them: the model issues it.)
const EXIT_ACTIONS: &[&str] =
    &["exit_cost", "exit_context", "exit_format", "exit_api", "exit_error", "exit_command_timeout", "skip", "early_exit"];

#[derive(Deserialize)]
struct RawDoc<'a> {
    #[serde(borrow)]
    trajectory: Vec<&'a RawValue>,
    #[serde(default, borrow)]
    history: Vec<&'a RawValue>,
    #[serde(default)]
    info: RawInfo,
    /// A dict in some versions, its JSON dump in others.
    #[serde(default)]
    replay_config: Value,
    #[serde(default)]
    attempts: Option<Vec<serde::de::IgnoredAny>>,
}

#[derive(Deserialize, Default)]
struct RawInfo {
    /// `int | str | None` in SWE-agent's own types.
    #[serde(default)]
    exit_status: Value,
    submission: Option<String>,
    model_stats: Option<RawStats>,
    swe_agent_version: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawStats {
    instance_cost: Option<f64>,
    tokens_sent: Option<u64>,
    tokens_received: Option<u64>,
    api_calls: Option<u64>,
}

#[derive(Deserialize)]
struct RawStep<'a> {
    #[serde(default)]
    action: String,
    /// `None` when an empty submission ended a 0.x run.
    observation: Option<String>,
    #[serde(default)]
    response: String,
    #[serde(default)]
    thought: String,
    execution_time: Option<f64>,
    #[serde(default, borrow)]
    query: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct RawHistory {
    role: String,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    is_demo: bool,
    thought: Option<String>,
    action: Option<String>,
    agent: Option<String>,
    tool_calls: Option<Vec<RawToolCall>>,
    tool_call_ids: Option<Vec<String>>,
    thinking_blocks: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct RawToolCall {
    id: Option<String>,
    function: RawFunction,
}

#[derive(Deserialize)]
struct RawFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// One message of a requery, read only for its role, kind and text.
#[derive(Deserialize)]
struct RawQueryMsg {
    role: Option<String>,
    #[serde(default)]
    content: Value,
    message_type: Option<String>,
}

/// Limits from the run's configuration and what the run consumed.
#[derive(Debug, Clone, Default)]
pub struct RunLimits {
    pub cost_limit: Option<f64>,
    pub call_limit: Option<f64>,
    pub api_calls: Option<u64>,
    pub cost: Option<f64>,
    pub max_requeries: Option<f64>,
    /// Rejected replies in a row at the end of the run.
    pub trailing_requeries: u64,
    pub max_consecutive_timeouts: Option<f64>,
    pub trailing_timeouts: u64,
    pub total_execution_timeout: Option<f64>,
    /// Sum of the steps' `execution_time`.
    pub execution_seconds: Option<f64>,
}

/// Maps a SWE-agent `info.exit_status` to how the run ended. `submitted (X)` is a run that X
/// stopped and whose workspace diff the harness then submitted: it ended as X did.
#[must_use]
pub fn termination_for_status(status: &str, lim: &RunLimits) -> Termination {
    let s = status.trim();
    let (inner, autosubmitted) = match s.strip_prefix("submitted (").and_then(|r| r.strip_suffix(')')) {
        Some(inner) => (inner.trim(), true),
        None => (s, false),
    };
    #[expect(clippy::cast_precision_loss, reason = "counts of calls and replies")]
    let count = |n: u64| n as f64;
    let mut t = match inner {
        "submitted" => Termination::of(TerminationKind::AgentFinished),
        "exit_cost" => {
            // The per-instance call limit raises the same error as the cost limit.
            let cost_hit = matches!((lim.cost_limit, lim.cost), (Some(l), Some(c)) if l > 0.0 && c >= l);
            let calls_hit = matches!((lim.call_limit, lim.api_calls), (Some(l), Some(c)) if l > 0.0 && count(c) >= l);
            if calls_hit && !cost_hit {
                let mut t = Termination::budget(Budget::Steps, Enforcer::Harness);
                t.limit = lim.call_limit;
                t.consumed = lim.api_calls.map(count);
                t
            } else {
                let mut t = Termination::budget(Budget::Cost, Enforcer::Harness);
                t.limit = lim.cost_limit.filter(|l| *l > 0.0);
                t.consumed = lim.cost;
                t
            }
        }
        "exit_context" => Termination::budget(Budget::Context, Enforcer::Provider),
        "exit_format" => {
            let mut t = Termination::budget(Budget::FormatErrors, Enforcer::Harness);
            t.limit = lim.max_requeries;
            t.consumed = (lim.trailing_requeries > 0).then(|| count(lim.trailing_requeries));
            t
        }
        "exit_command_timeout" => {
            let mut t = Termination::budget(Budget::CommandTimeout, Enforcer::Harness);
            t.limit = lim.max_consecutive_timeouts;
            t.consumed = (lim.trailing_timeouts > 0).then(|| count(lim.trailing_timeouts));
            t
        }
        "exit_total_execution_time" => {
            let mut t = Termination::budget(Budget::WallTime, Enforcer::Harness);
            t.limit = lim.total_execution_timeout;
            t.consumed = lim.execution_seconds;
            t
        }
        "exit_forfeit" => {
            let mut t = Termination::of(TerminationKind::AgentStoppedWithoutFinish);
            t.detail = Some("the agent forfeited (exit_forfeit)".into());
            t
        }
        "exit_command" => {
            let mut t = Termination::of(TerminationKind::AgentStoppedWithoutFinish);
            t.detail = Some("the agent ran `exit` without submitting".into());
            t
        }
        "exit_api" | "exit_environment_error" | "early_exit" => Termination::of(TerminationKind::Infrastructure),
        _ => Termination::of(TerminationKind::HarnessError),
    };
    if autosubmitted {
        let why = t.detail.take().map(|d| format!("{d}; ")).unwrap_or_default();
        t.detail = Some(format!("{why}stopped by {inner}, then the workspace diff was auto-submitted"));
    }
    t.raw = Some(s.to_string());
    t
}

/// SWE-agent `.traj` files.
pub struct SweAgent;

impl Adapter for SweAgent {
    fn name(&self) -> &'static str {
        "swe-agent"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "SWE-agent trajectory (*.traj: trajectory, history, info; text actions or function calling)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        let traj_name = p.name.ends_with(".traj");
        if traj_name && (j.has("trajectory") || j.has("history") || j.has("info")) {
            return structure(".traj with trajectory/history/info");
        }
        if j.has("trajectory") && j.has("history") && j.has("info") {
            return structure("trajectory, history and info");
        }
        if traj_name && j.error.is_none() {
            return file_name(".traj");
        }
        Err("no trajectory/history keys".into())
    }

    fn parse(&self, unit: &Unit, ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let text = src.text()?;
        let doc: RawDoc<'_> =
            serde_json::from_str(text).map_err(|e| InputError::from_json(&src.display, &src.bytes, "SWE-agent trajectory", &e))?;
        let at = |raw: &RawValue, what: &str, e: &serde_json::Error| {
            let base = src.offset_of(raw.get()).unwrap_or(0);
            InputError::from_json_at(&src.display, &src.bytes, base, what, e)
        };
        let mut history = Vec::with_capacity(doc.history.len());
        for raw in &doc.history {
            let h: RawHistory = serde_json::from_str(raw.get()).map_err(|e| at(raw, "SWE-agent history message", &e))?;
            history.push((*raw, h));
        }
        let mut entries = Vec::with_capacity(doc.trajectory.len());
        for raw in &doc.trajectory {
            let s: RawStep<'_> = serde_json::from_str(raw.get()).map_err(|e| at(raw, "SWE-agent trajectory step", &e))?;
            entries.push((*raw, s));
        }

        let task = task_id(&unit.primary.path);
        let mut t =
            crate::model::Trajectory::new(task.clone(), "swe-agent", self.name(), self.version(), vec![src.provenance("transcript")]);
        t.harness_version = doc.info.swe_agent_version.clone();
        let config = match &doc.replay_config {
            Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
            v => v.clone(),
        };
        // A retry agent keeps one config per attempt; the first stands for the run.
        let agent = config.get("agent").map(|a| a.pointer("/agent_configs/0").unwrap_or(a)).unwrap_or(&Value::Null);
        t.model = agent.pointer("/model/name").and_then(Value::as_str).map(ToString::to_string);
        t.declared_tools = agent.pointer("/tools/command_docs").and_then(Value::as_str).map(declared_tools).filter(|d| !d.is_empty());
        if let Some(id) = config.pointer("/problem_statement/id").and_then(Value::as_str).filter(|id| *id != task) {
            t.notes.push(format!("replay_config names the problem `{id}`; the task id comes from the file name"));
        }
        if let Some(n) = doc.attempts.as_ref().map(Vec::len).filter(|n| *n > 1) {
            t.notes.push(format!("the file holds {n} attempts of a retry agent; the chosen one (top level) is read"));
        }

        let mut b = Builder { src: &src, t: &mut t, declared: Vec::new(), timeouts_in_a_row: 0 };
        b.declared = b.t.declared_tools.iter().flatten().map(|d| d.name.clone()).collect();
        b.build(&history, &entries);
        let trailing_timeouts = b.timeouts_in_a_row;

        let stats = doc.info.model_stats.as_ref();
        t.usage.api_calls = stats.and_then(|s| s.api_calls);
        t.usage.cost_usd = stats.and_then(|s| s.instance_cost);
        t.usage.prompt_tokens = stats.and_then(|s| s.tokens_sent);
        t.usage.completion_tokens = stats.and_then(|s| s.tokens_received);
        let exec: Vec<f64> = entries.iter().filter_map(|(_, e)| e.execution_time).collect();
        let num = |p: &str| agent.pointer(p).and_then(Value::as_f64);
        let lim = RunLimits {
            cost_limit: num("/model/per_instance_cost_limit"),
            call_limit: num("/model/per_instance_call_limit"),
            api_calls: t.usage.api_calls,
            cost: t.usage.cost_usd,
            max_requeries: num("/max_requeries"),
            trailing_requeries: trailing_format_errors(&t),
            max_consecutive_timeouts: num("/tools/max_consecutive_execution_timeouts"),
            trailing_timeouts,
            total_execution_timeout: num("/tools/total_execution_timeout"),
            execution_seconds: (!exec.is_empty()).then(|| exec.iter().sum()),
        };
        let own = match &doc.info.exit_status {
            Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let from_file = own.is_some();
        let mut status = own.map(|s| (s, format!("{} info.exit_status", src.display)));
        // A file saved before the run ended: the batch's run_batch_exit_statuses.yaml may know.
        if status.is_none()
            && let Some(j) = ctx.join.exit_status(&[task.as_str()], &unit.primary.path)
        {
            crate::ingest::pipeline::push_file(&mut t, j.file);
            status = Some((j.value.clone(), format!("{} instances_by_exit_status", j.file.path)));
        }
        match status {
            Some((s, source)) => {
                let mut term = termination_for_status(&s, &lim);
                term.source = Some(source);
                if term.raw.as_deref().is_some_and(|r| r.contains("exit_forfeit")) {
                    t.notes.push("the agent forfeited (exit_forfeit)".into());
                }
                if s.starts_with("submitted (") {
                    t.notes.push(format!("the run was stopped ({s}) and its workspace diff auto-submitted"));
                }
                // A file with an exit status submitted what `info.submission` says (`None` there
                // is an empty patch); otherwise predictions may say.
                if from_file {
                    t.submission = Some(doc.info.submission.clone().unwrap_or_default());
                }
                t.termination = term;
            }
            None => t.notes.push("the trajectory has no exit status (the run was probably killed while running)".into()),
        }
        out.emit(t);
        Ok(())
    }
}

/// `<instance>.traj` → `<instance>`; the batch runner writes `<instance>/<instance>.traj`.
fn task_id(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.strip_suffix(".traj").or_else(|| name.strip_suffix(".json")).unwrap_or(&name);
    if stem.is_empty() { "unknown".into() } else { stem.to_string() }
}

/// Tool names and first docstring lines from the `command_docs` the harness showed the model
/// (`name:` at the start of a line, `  docstring: ...` below it).
fn declared_tools(docs: &str) -> Vec<DeclaredTool> {
    let mut out: Vec<DeclaredTool> = Vec::new();
    for line in docs.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            let name = line.trim_end_matches(':');
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                out.push(DeclaredTool { name: name.to_string(), description: None });
            }
        } else if let (Some(last), Some(doc)) = (out.last_mut(), line.trim_start().strip_prefix("docstring:"))
            && last.description.is_none()
        {
            last.description = Some(doc.trim().to_string());
        }
    }
    out
}

fn trailing_format_errors(t: &Trajectory) -> u64 {
    let mut n = 0;
    for s in t.steps.iter().rev().filter(|s| s.role == Role::Assistant) {
        if s.format_error.is_none() {
            break;
        }
        n += 1;
    }
    n
}

/// The complaint SWE-agent sent with a requery: the next entry's query ends with the rejected
/// reply (`message_type: assistant`) and the complaint (`message_type: user`).
fn requery_complaint(next: Option<&RawStep<'_>>) -> Option<String> {
    let q = next?.query.as_ref()?;
    let [.., reply, complaint] = q.as_slice() else { return None };
    let reply: RawQueryMsg = serde_json::from_str(reply.get()).ok()?;
    let complaint: RawQueryMsg = serde_json::from_str(complaint.get()).ok()?;
    let is_requery = reply.message_type.as_deref() == Some("assistant")
        && reply.role.as_deref() == Some("assistant")
        && complaint.message_type.as_deref() == Some("user");
    is_requery.then(|| content_text(&complaint.content))
}

/// The command the function-calling parser did not know ("Command 'X' not found in list of
/// available commands.").
fn unknown_command(text: &str) -> Option<(String, String)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"Command '([^']*)' not found in list of available commands\.?").expect("static regex"));
    let c = re.captures(text)?;
    Some((c.get(1)?.as_str().to_string(), c.get(0)?.as_str().to_string()))
}

/// Observations of a command the harness killed for running too long (0.x and ≥1.0 wording).
fn is_timeout(observation: &str) -> bool {
    observation.contains("EXECUTION TIMED OUT") || observation.contains("was cancelled because it took more than")
}

/// SWE-agent's edit tools refuse an edit that leaves the file with syntax errors; the edit was
/// not applied, so the call failed.
fn is_rejected_edit(observation: &str) -> bool {
    observation.trim_start().starts_with("Your proposed edit has introduced new syntax error")
}

fn complaint_summary(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).take(3).collect();
    lines.join("\n").chars().take(500).collect()
}

fn to_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// Turns trajectory entries (and the history around them) into steps.
struct Builder<'b> {
    src: &'b Source,
    t: &'b mut Trajectory,
    declared: Vec<String>,
    /// Command timeouts in a row at the end of the run.
    timeouts_in_a_row: u64,
}

impl Builder<'_> {
    fn push(&mut self, raw: &RawValue, mut step: Step) -> usize {
        step.source_span = self.src.span_of(0, raw.get());
        self.t.steps.push(step);
        self.t.steps.len() - 1
    }

    fn build(&mut self, history: &[(&RawValue, RawHistory)], entries: &[(&RawValue, RawStep<'_>)]) {
        // The opening messages: everything before the first real reply.
        let first_reply = history.iter().position(|(_, h)| h.role == "assistant" && !h.is_demo).unwrap_or(history.len());
        for (raw, h) in &history[..first_reply] {
            let role = match h.role.as_str() {
                // Demonstrations are prompt material, not the task.
                _ if h.is_demo => Role::System,
                "system" => Role::System,
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => Role::Environment,
            };
            let mut step = Step::new(role, content_text(&h.content));
            step.agent = h.agent.clone().filter(|a| a != "main" && a != "primary");
            self.push(raw, step);
        }
        // Replies the model saw, with the ids of the tool messages that answered them.
        let replies: Vec<(&RawHistory, Option<&Vec<String>>)> = history
            .iter()
            .enumerate()
            .filter(|(_, (_, h))| h.role == "assistant" && !h.is_demo)
            .map(|(i, (_, h))| (h, history.get(i + 1).and_then(|(_, n)| n.tool_call_ids.as_ref())))
            .collect();
        let function_calling = replies.iter().any(|(h, _)| h.tool_calls.is_some());
        // The two generations of `.traj` differ in how actions are written, which decides how
        // calls are read back; the record says which one it was.
        self.t.provenance.format_version =
            Some(if function_calling { "swe-agent traj (function calling)" } else { "swe-agent traj (text actions)" }.into());

        // Align entries with those replies, in order; an entry that is not among them was
        // rejected and requeried (or is the final step, which the history may lack).
        let mut matched: Vec<Option<usize>> = Vec::with_capacity(entries.len());
        let mut h = 0;
        for (_, e) in entries {
            let same = replies.get(h).is_some_and(|(r, _)| {
                r.action.as_deref().unwrap_or("").trim() == e.action.trim() && r.thought.as_deref().unwrap_or("").trim() == e.thought.trim()
            });
            if same {
                matched.push(Some(h));
                h += 1;
            } else {
                matched.push(None);
            }
        }
        let aligned = matched.iter().any(Option::is_some);

        for (i, (raw, e)) in entries.iter().enumerate() {
            let last = i + 1 == entries.len();
            let complaint = requery_complaint(entries.get(i + 1).map(|(_, n)| n));
            let requeried = complaint.is_some() || (aligned && matched[i].is_none() && !last);
            let action = e.action.trim();
            if last && (EXIT_ACTIONS.contains(&action) || (action.is_empty() && e.response.starts_with("Exit due to"))) {
                // The harness ended the run here; the entry is its message, not a model reply.
                let mut text = e.response.clone();
                if let Some(o) = e.observation.as_deref().filter(|o| !o.is_empty()) {
                    text = format!("{text}\n{o}");
                }
                self.push(raw, Step::new(Role::Environment, text));
                continue;
            }
            let reply = matched[i].and_then(|k| replies.get(k));
            let text = if e.response.is_empty() { e.thought.clone() } else { e.response.clone() };
            let mut step = Step::new(Role::Assistant, text);
            if let Some(tb) = reply.and_then(|(r, _)| r.thinking_blocks.as_ref()) {
                let thinking: Vec<&str> = tb.iter().filter_map(|b| b.get("thinking").and_then(Value::as_str)).collect();
                if !thinking.is_empty() {
                    step.reasoning = Some(Reasoning { text: Some(thinking.join("\n")), tokens: None });
                }
            }
            if requeried {
                self.rejected(raw, step, action, complaint);
                self.timeouts_in_a_row = 0;
                continue;
            }
            let calls: Vec<ToolCall> = match reply.and_then(|(r, _)| r.tool_calls.as_ref()) {
                Some(tcs) => tcs.iter().map(|c| tool_call(c.id.clone(), &c.function.name, &c.function.arguments)).collect(),
                None if action.is_empty() => Vec::new(),
                None => vec![self.call_from_action(action, function_calling, last)],
            };
            let ids: Vec<Option<String>> = match reply.and_then(|(_, ids)| *ids) {
                Some(ids) => ids.iter().cloned().map(Some).collect(),
                None => calls.iter().map(|c| c.id.clone()).collect(),
            };
            let n_calls = calls.len();
            step.tool_calls = calls;
            let ix = self.push(raw, step);
            let observation = e.observation.clone().unwrap_or_default();
            if n_calls == 0 {
                if !observation.is_empty() {
                    self.push(raw, Step::new(Role::Environment, observation));
                }
                continue;
            }
            let timed_out = is_timeout(&observation);
            let mut r = ToolResult::new(observation);
            r.call_id = ids.first().cloned().flatten();
            r.call = Some(CallRef { step: to_u32(ix), call: 0 });
            if timed_out {
                r.is_error = true;
                self.timeouts_in_a_row += 1;
                let cmd: String = action.lines().next().unwrap_or("").chars().take(120).collect();
                self.t.notes.push(format!("command timed out at step {}: {cmd}", ix + 1));
            } else {
                self.timeouts_in_a_row = 0;
                r.is_error = is_rejected_edit(&r.output);
            }
            let mut obs = Step::new(Role::Tool, String::new());
            obs.tool_results.push(r);
            self.push(raw, obs);
        }
    }

    /// A text action, or the final function call when the history lacks it: a declared tool
    /// when the first word names one (function calling), else shell input.
    fn call_from_action(&mut self, action: &str, function_calling: bool, last: bool) -> ToolCall {
        let first = action.split_whitespace().next().unwrap_or("");
        let args = serde_json::json!({ "command": action });
        if function_calling {
            if last {
                self.t.notes.push("the last step is missing from the history: its tool call was rebuilt from the action text".into());
            }
            if self.declared.iter().any(|d| d == first) && first != "bash" {
                return ToolCall { id: None, name: first.to_string(), arguments: args, raw_arguments: None };
            }
        }
        ToolCall { id: None, name: "bash".into(), arguments: args, raw_arguments: None }
    }

    /// A reply the harness rejected and asked again for: no action parsed (format error), or an
    /// action it refused to run (blocked command, bash syntax error). SWE-agent counts both
    /// toward its requery limit (`exit_format`), so both mark the reply as unusable.
    fn rejected(&mut self, raw: &RawValue, mut step: Step, action: &str, complaint: Option<String>) {
        step.format_error = Some(match &complaint {
            Some(c) => complaint_summary(c),
            None if action.is_empty() => "the reply could not be turned into an action; the harness asked again".into(),
            None => "the harness refused to run this action and asked again".into(),
        });
        let said = complaint.clone().unwrap_or_default();
        let unknown = unknown_command(&said).filter(|_| action.is_empty());
        let call = match (&unknown, action.is_empty()) {
            (Some((name, _)), _) => Some(ToolCall { id: None, name: name.clone(), arguments: Value::Null, raw_arguments: None }),
            (None, false) => {
                Some(ToolCall { id: None, name: "bash".into(), arguments: serde_json::json!({ "command": action }), raw_arguments: None })
            }
            (None, true) => None,
        };
        let has_call = call.is_some();
        step.tool_calls.extend(call);
        let ix = self.push(raw, step);
        if has_call {
            let mut r = ToolResult::new(complaint.unwrap_or_else(|| "the harness refused to run this action and asked again".into()));
            r.is_error = true;
            r.call = Some(CallRef { step: to_u32(ix), call: 0 });
            if let Some((name, sentence)) = unknown {
                r.name = Some(name);
                r.unknown_tool = Some(sentence);
            }
            let mut s = Step::new(Role::Tool, String::new());
            s.tool_results.push(r);
            self.push(raw, s);
        } else if let Some(c) = complaint {
            self.push(raw, Step::new(Role::Environment, c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(name: &str, text: &str, size: u64) -> Probe {
        Probe::from_prefix(Path::new(name), size, text.as_bytes().to_vec())
    }

    #[test]
    fn sniffs_traj_files_by_name_and_keys() {
        use crate::ingest::format::Strength;
        let cut = probe("x.traj", r#"{"environment": "swe_main", "trajectory": [{"action": "ls"#, 1 << 20);
        assert_eq!(SweAgent.sniff(&cut).unwrap().strength, Strength::Structure);
        let renamed = probe("x.json", r#"{"trajectory": [], "history": [], "info": {}}"#, 45);
        assert_eq!(SweAgent.sniff(&renamed).unwrap().strength, Strength::Structure);
        assert!(SweAgent.sniff(&probe("x.json", r#"{"info": {}, "messages": []}"#, 28)).is_err());
        assert_eq!(SweAgent.sniff(&probe("x.traj", r#"{"other": 1}"#, 12)).unwrap().strength, Strength::FileName);
    }

    #[test]
    fn command_docs_declare_tools() {
        let d = declared_tools(
            "bash:\n  docstring: runs the given command directly in bash\n  signature: <command>\n\nsubmit:\n  docstring: submits\n",
        );
        assert_eq!(d.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["bash", "submit"]);
        assert_eq!(d[0].description.as_deref(), Some("runs the given command directly in bash"));
    }

    #[test]
    fn unknown_commands_are_named() {
        let (name, _) = unknown_command("Your action could not be parsed properly: Command 'str_replace' not found in list of available commands.. [error_code=invalid_command]").unwrap();
        assert_eq!(name, "str_replace");
    }
}
