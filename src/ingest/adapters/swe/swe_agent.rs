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
//! message of the next entry's `query`, when the file keeps queries. `info.exit_status` (or the
//! batch's `run_batch_exit_statuses.yaml`) and the limits of the replay config are recorded as
//! signals, for the profile (`rules/harnesses/swe-agent.toml`) to interpret.

use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::common::{batch_status, complaint_summary};
use crate::ingest::adapters::shared::build::{StepBuilder, to_u32};
use crate::ingest::adapters::shared::common::{content_text, tool_call};
use crate::ingest::adapters::shared::json_walk::{GiveUp, JsonWalk, document, each_at};
use crate::ingest::adapters::shared::xml_call;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, file_name, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{CallRef, DeclaredTool, Reasoning, Role, Step, ToolCall, ToolResult, Trajectory};

/// How SWE-agent's thought (or response) for a step it wrote itself to end the run begins
/// (`Exit due to cost limit`, `Exit due to context window`, ...): such an entry is the harness
/// speaking, not a model reply.
const HARNESS_EXIT: &str = "Exit due to";

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

/// A `.traj` with its history and trajectory typed, each item with the bytes it spans.
struct Doc<'a> {
    trajectory: Vec<(Range<usize>, RawStep<'a>)>,
    history: Vec<(Range<usize>, RawHistory)>,
    info: RawInfo,
    replay_config: Value,
    attempts: Option<Vec<serde::de::IgnoredAny>>,
}

/// Reads the document in one pass over its bytes, or, when that gives up, as [`RawDoc`] and then
/// each item again, which also words the diagnostic of a file that does not read.
fn read_doc(src: &Source) -> Result<Doc<'_>, InputError> {
    match one_pass(src.text()?) {
        Ok(doc) => Ok(doc),
        Err(GiveUp) => two_pass(src),
    }
}

/// The document as [`RawDoc`] reads it, then each item again.
fn two_pass(src: &Source) -> Result<Doc<'_>, InputError> {
    let doc: RawDoc<'_> = document(src, "SWE-agent trajectory")?;
    let history = each_at(src, &doc.history, "SWE-agent history message")?;
    let trajectory = each_at(src, &doc.trajectory, "SWE-agent trajectory step")?;
    Ok(Doc { trajectory, history, info: doc.info, replay_config: doc.replay_config, attempts: doc.attempts })
}

/// The fields [`RawDoc`] reads, with the items typed where they lie.
fn one_pass(text: &str) -> Result<Doc<'_>, GiveUp> {
    let mut w = JsonWalk::new(text);
    let mut doc = Doc { trajectory: Vec::new(), history: Vec::new(), info: RawInfo::default(), replay_config: Value::Null, attempts: None };
    let mut has_trajectory = false;
    w.object(|w, key| {
        match key {
            "trajectory" => {
                has_trajectory = true;
                doc.trajectory = w.items()?;
            }
            "history" => doc.history = w.items()?,
            "info" => doc.info = w.value()?,
            "replay_config" => doc.replay_config = w.value()?,
            "attempts" => doc.attempts = w.value()?,
            _ => w.skip()?,
        }
        Ok(())
    })?;
    w.end()?;
    if has_trajectory { Ok(doc) } else { Err(GiveUp) }
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
    /// The environment after the action: `{"open_file", "working_dir"}`, a JSON string in 0.x.
    #[serde(default)]
    state: Value,
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

    fn versions(&self) -> &'static str {
        "0.x text actions, ≥1.0 calls (JSON, XML)"
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
        let doc = read_doc(&src)?;
        let (history, entries) = (&doc.history, &doc.trajectory);

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

        let declared = t.declared_tools.iter().flatten().map(|d| d.name.clone()).collect();
        let mut b = Builder { src: &src, steps: StepBuilder::new(), declared, timeouts_in_a_row: 0 };
        let function_calling = b.build(history, entries);
        let trailing_timeouts = b.timeouts_in_a_row;
        b.steps.finish(&mut t);
        // The two generations of `.traj` differ in how actions are written, which decides how
        // calls are read back; the record says which one it was.
        t.provenance.format_version =
            Some(if function_calling { "swe-agent traj (function calling)" } else { "swe-agent traj (text actions)" }.into());

        let stats = doc.info.model_stats.as_ref();
        t.usage.api_calls = stats.and_then(|s| s.api_calls);
        t.usage.cost_usd = stats.and_then(|s| s.instance_cost);
        t.usage.prompt_tokens = stats.and_then(|s| s.tokens_sent);
        t.usage.completion_tokens = stats.and_then(|s| s.tokens_received);
        let exec: Vec<f64> = entries.iter().filter_map(|(_, e)| e.execution_time).collect();
        limits(&mut t, agent, trailing_timeouts, (!exec.is_empty()).then(|| exec.iter().sum()));

        // The harness's own exit as the run's last entry (`exit_cost` with "Exit due to cost
        // limit"): what stopped the run, said before the status of the submission that followed
        // it (a fork that writes only `submitted` there leaves this the one record of the cause).
        if let Some((_, e)) = entries.last()
            && (e.thought.starts_with(HARNESS_EXIT) || e.response.starts_with(HARNESS_EXIT))
            && let Some(exit) = Some(e.action.trim()).filter(|a| a.starts_with("exit_") && !a.contains(char::is_whitespace))
        {
            t.signals.status("trajectory[-1].action", exit);
        }
        let own = match &doc.info.exit_status {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let status = match &own {
            Some(s) => {
                t.signals.status("info.exit_status", s.clone());
                // A file with an exit status submitted what `info.submission` says (`None` there
                // is an empty patch); otherwise predictions may say.
                t.submission = Some(doc.info.submission.clone().unwrap_or_default());
                Some(s.clone())
            }
            // A file saved before the run ended: the batch's run_batch_exit_statuses.yaml may know.
            None => {
                batch_status(&mut t, ctx, &task, &unit.primary.path).then(|| t.signals.statuses.last().map(|x| x.text.clone())).flatten()
            }
        };
        match status {
            // `submitted (X)`: X stopped the run, then the harness submitted the workspace diff.
            Some(s) if s.starts_with("submitted (") => {
                t.notes.push(format!("the run was stopped ({s}) and its workspace diff auto-submitted"));
            }
            Some(_) => {}
            None => t.notes.push("the trajectory has no exit status (the run was probably killed while running)".into()),
        }
        out.emit(t);
        Ok(())
    }
}

/// The limits of the run's config and what it used of them: the model's per-instance cost and
/// call limits, the requery limit (format errors), the limit on command timeouts in a row, and
/// the total execution time.
fn limits(t: &mut Trajectory, agent: &Value, trailing_timeouts: u64, execution_seconds: Option<f64>) {
    let num = |p: &str| agent.pointer(p).and_then(Value::as_f64);
    #[expect(clippy::cast_precision_loss, reason = "counts of calls and timeouts")]
    let count = |n: u64| n as f64;
    let lim = &mut t.signals.limits;
    lim.cost_usd = num("/model/per_instance_cost_limit");
    lim.steps = num("/model/per_instance_call_limit");
    lim.format_errors = num("/max_requeries");
    lim.command_timeouts = num("/tools/max_consecutive_execution_timeouts");
    lim.wall_seconds = num("/tools/total_execution_timeout");
    let used = &mut t.signals.consumed;
    used.cost_usd = t.usage.cost_usd;
    used.steps = t.usage.api_calls.map(count);
    used.command_timeouts = (trailing_timeouts > 0).then(|| count(trailing_timeouts));
    // A sum of many step times carries float noise that would not survive a JSON round trip
    // exactly; milliseconds are what the steps were timed to.
    used.wall_seconds = execution_seconds.map(|s| (s * 1000.0).round() / 1000.0);
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

/// The name of the call a function-calling reply made, when the file lost the reply and only
/// the parser's complaint keeps it: SWE-agent's `FunctionCallingFormatError` template for an
/// `invalid_command` (`Command 'X' not found in list of available commands.`). This only
/// restores the call; whether the harness rejected it as an unknown tool is for the profile.
fn lost_call_name(complaint: &str) -> Option<String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"Command '([^']*)' not found in list of available commands").expect("static regex"));
    Some(re.captures(complaint)?.get(1)?.as_str().to_string())
}

/// The call of an `xml_function_calling` reply, which keeps no structured call: the reply's
/// `<function=…>` block, when the action the harness built from it starts with that tool's name
/// (a `bash` call's action is the bare command, already the call as `call_from_action` makes it).
/// SWE-agent renames SWE-gym's `finish` to `submit`.
fn text_call(response: &str, action: &str) -> Option<ToolCall> {
    let (name, mut args) = xml_call::first_call(response)?;
    let name = if name == "finish" { "submit".to_string() } else { name };
    if name == "bash" || name == "execute_bash" || action.split_whitespace().next() != Some(name.as_str()) {
        return None;
    }
    // The editor's `view_range` is a JSON list the harness parses.
    if let Some(v) = args.get("view_range").and_then(Value::as_str).and_then(|v| serde_json::from_str::<Value>(v).ok()) {
        args.insert("view_range".into(), v);
    }
    Some(ToolCall { id: None, name, arguments: Value::Object(args), raw_arguments: None })
}

/// SWE-agent 0.x's file commands, which its shell defines and which write a file: `create
/// PATH`, and `edit N:M` (with `insert N` and `append` in later bundles) on the file its window
/// has open, which the entry's `state` names. As a call of that command with the file as `path`,
/// the profile's editing tools take them for what they are; as shell input they were a program
/// nobody knows.
fn window_edit(action: &str, state: &Value) -> Option<ToolCall> {
    let first_line = action.lines().next().unwrap_or("");
    let mut words = first_line.split_whitespace();
    let command = words.next()?;
    let path = match command {
        "create" => words.next()?.trim_matches(['"', '\'']).to_string(),
        "edit" | "insert" | "append" => {
            let state: Value = match state {
                Value::String(s) => serde_json::from_str(s).ok()?,
                other => other.clone(),
            };
            state.get("open_file").and_then(Value::as_str).filter(|f| !f.is_empty() && *f != "n/a")?.to_string()
        }
        _ => return None,
    };
    Some(ToolCall {
        id: None,
        name: command.to_string(),
        arguments: serde_json::json!({ "path": path, "command": action }),
        raw_arguments: None,
    })
}

/// Observations of a command the harness killed for running too long: its timeout templates
/// (0.x and ≥1.0 wording). The harness counts these toward `exit_command_timeout`.
fn is_timeout(observation: &str) -> bool {
    observation.contains("EXECUTION TIMED OUT") || observation.contains("was cancelled because it took more than")
}

/// SWE-agent's edit tools refuse an edit that leaves the file with syntax errors (their fixed
/// reply); the edit was not applied, so the call failed.
fn is_rejected_edit(observation: &str) -> bool {
    observation.trim_start().starts_with("Your proposed edit has introduced new syntax error")
}

/// Turns trajectory entries (and the history around them) into steps.
struct Builder<'b> {
    src: &'b Source,
    steps: StepBuilder,
    declared: Vec<String>,
    /// Command timeouts in a row at the end of the run.
    timeouts_in_a_row: u64,
}

impl Builder<'_> {
    fn push(&mut self, at: &Range<usize>, step: Step) -> usize {
        let span = Some(self.src.span(0, at.start, at.len()));
        self.steps.push(step, span, None)
    }

    /// A step holding one result that answers the call at `step`.
    fn push_result(&mut self, at: &Range<usize>, mut r: ToolResult, step: usize) {
        r.call = Some(CallRef { step: to_u32(step), call: 0 });
        let mut s = Step::new(Role::Tool, String::new());
        s.tool_results.push(r);
        self.push(at, s);
    }

    /// Builds the steps; returns whether the run used function calling.
    fn build(&mut self, history: &[(Range<usize>, RawHistory)], entries: &[(Range<usize>, RawStep<'_>)]) -> bool {
        // The opening messages: everything before the first real reply.
        let first_reply = history.iter().position(|(_, h)| h.role == "assistant" && !h.is_demo).unwrap_or(history.len());
        for (at, h) in &history[..first_reply] {
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
            self.push(at, step);
        }
        // Replies the model saw, with the ids of the tool messages that answered them.
        let replies: Vec<(&RawHistory, Option<&Vec<String>>)> = history
            .iter()
            .enumerate()
            .filter(|(_, (_, h))| h.role == "assistant" && !h.is_demo)
            .map(|(i, (_, h))| (h, history.get(i + 1).and_then(|(_, n)| n.tool_call_ids.as_ref())))
            .collect();
        let function_calling = replies.iter().any(|(h, _)| h.tool_calls.is_some());

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

        for (i, (at, e)) in entries.iter().enumerate() {
            let last = i + 1 == entries.len();
            let complaint = requery_complaint(entries.get(i + 1).map(|(_, n)| n));
            let requeried = complaint.is_some() || (aligned && matched[i].is_none() && !last);
            let action = e.action.trim();
            if last && (e.thought.starts_with(HARNESS_EXIT) || e.response.starts_with(HARNESS_EXIT)) {
                // The harness ended the run here; the entry is its message, not a model reply.
                let mut text = e.response.clone();
                if let Some(o) = e.observation.as_deref().filter(|o| !o.is_empty()) {
                    text = format!("{text}\n{o}");
                }
                self.push(at, Step::new(Role::Environment, text));
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
                self.rejected(at, step, action, complaint);
                self.timeouts_in_a_row = 0;
                continue;
            }
            let calls: Vec<ToolCall> = match reply.and_then(|(r, _)| r.tool_calls.as_ref()) {
                Some(tcs) => tcs.iter().map(|c| tool_call(c.id.clone(), &c.function.name, &c.function.arguments)).collect(),
                None if action.is_empty() => Vec::new(),
                None => vec![
                    text_call(&e.response, action)
                        .or_else(|| (!function_calling).then(|| window_edit(action, &e.state)).flatten())
                        .unwrap_or_else(|| self.call_from_action(action, function_calling, last)),
                ],
            };
            let ids: Vec<Option<String>> = match reply.and_then(|(_, ids)| *ids) {
                Some(ids) => ids.iter().cloned().map(Some).collect(),
                None => calls.iter().map(|c| c.id.clone()).collect(),
            };
            let n_calls = calls.len();
            step.tool_calls = calls;
            let ix = self.push(at, step);
            let observation = e.observation.clone().unwrap_or_default();
            if n_calls == 0 {
                if !observation.is_empty() {
                    self.push(at, Step::new(Role::Environment, observation));
                }
                continue;
            }
            let timed_out = is_timeout(&observation);
            let mut r = ToolResult::new(observation);
            r.call_id = ids.first().cloned().flatten();
            if timed_out {
                r.is_error = true;
                self.timeouts_in_a_row += 1;
                let cmd: String = action.lines().next().unwrap_or("").chars().take(120).collect();
                self.steps.note(format!("command timed out at step {}: {cmd}", ix + 1));
            } else {
                self.timeouts_in_a_row = 0;
                r.is_error = is_rejected_edit(&r.output);
            }
            self.push_result(at, r, ix);
        }
        function_calling
    }

    /// A text action, or the final function call when the history lacks it: a declared tool
    /// when the first word names one (function calling), else shell input.
    fn call_from_action(&mut self, action: &str, function_calling: bool, last: bool) -> ToolCall {
        let first = action.split_whitespace().next().unwrap_or("");
        let args = serde_json::json!({ "command": action });
        if function_calling {
            if last {
                self.steps.note("the last step is missing from the history: its tool call was rebuilt from the action text");
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
    fn rejected(&mut self, at: &Range<usize>, mut step: Step, action: &str, complaint: Option<String>) {
        step.format_error = Some(match &complaint {
            Some(c) => complaint_summary(c),
            None if action.is_empty() => "the reply could not be turned into an action; the harness asked again".into(),
            None => "the harness refused to run this action and asked again".into(),
        });
        let lost = complaint.as_deref().filter(|_| action.is_empty()).and_then(lost_call_name);
        let call = match (lost, action.is_empty()) {
            (Some(name), _) => Some(ToolCall { id: None, name, arguments: Value::Null, raw_arguments: None }),
            (None, false) => {
                Some(ToolCall { id: None, name: "bash".into(), arguments: serde_json::json!({ "command": action }), raw_arguments: None })
            }
            (None, true) => None,
        };
        let name = call.as_ref().map(|c| c.name.clone());
        step.tool_calls.extend(call);
        let ix = self.push(at, step);
        if name.is_some() {
            // The complaint answers the call: the harness did not run it.
            let mut r = ToolResult::new(complaint.unwrap_or_else(|| "the harness refused to run this action and asked again".into()));
            r.is_error = true;
            r.name = name;
            self.push_result(at, r, ix);
        } else if let Some(c) = complaint {
            self.push(at, Step::new(Role::Environment, c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_reads_every_sample_as_the_two_pass_reading_does() {
        let files = crate::ingest::adapters::shared::json_walk::sample_files(&["samples/swe-agent"], ".traj");
        let sketch = |d: &Doc<'_>| {
            let history: Vec<String> = d.history.iter().map(|(at, h)| format!("{at:?} {} {} {:?}", h.role, h.content, h.action)).collect();
            let steps: Vec<String> = d.trajectory.iter().map(|(at, e)| format!("{at:?} {} {:?}", e.action, e.observation)).collect();
            (
                history,
                steps,
                d.info.exit_status.clone(),
                d.info.submission.clone(),
                d.replay_config.clone(),
                d.attempts.as_ref().map(Vec::len),
            )
        };
        let mut read = 0;
        for f in files {
            let src = Source::read(&f, &f.to_string_lossy()).expect("a sample reads");
            match (one_pass(src.text().expect("UTF-8")), two_pass(&src)) {
                (Ok(one), Ok(two)) => {
                    assert_eq!(sketch(&one), sketch(&two), "{}", f.display());
                    read += 1;
                }
                // A file the old reading refuses is one the walk gives up on.
                (Err(GiveUp), Err(_)) => {}
                (one, two) => panic!("{}: one pass {:?}, two passes {:?}", f.display(), one.is_ok(), two.is_ok()),
            }
        }
        assert!(read >= 2, "the samples hold SWE-agent trajectories");
    }

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
    fn lost_calls_are_named_by_the_parser_complaint() {
        let name = lost_call_name("Your action could not be parsed properly: Command 'str_replace' not found in list of available commands.. [error_code=invalid_command]").unwrap();
        assert_eq!(name, "str_replace");
    }
}
