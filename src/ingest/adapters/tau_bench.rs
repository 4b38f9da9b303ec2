//! tau-bench results: the list of `EnvRunResult`s `run.py` writes (or one result per file).
//!
//! Each result is `{task_id, reward, info, traj, trial}`. `traj` is the agent's message list:
//! OpenAI-style messages with `tool_calls` answered by `tool` messages (tool-calling agent), or
//! `Thought:/Action: {json}` text answered by `API output: ...` user messages (ReAct/Act
//! agents). `info.reward_info` is tau-bench's `RewardResult`: the expected actions, and either
//! `RewardActionInfo` (`r_actions`: the database ended in the expected state) or, when the task
//! also expects outputs, `RewardOutputInfo` (which output strings the agent told the user).
//! `info.error` marks a run that raised. The environment answers a tool that raised with
//! `Error: <message>` and an action it does not know with `Unknown action <name>`
//! (`tau_bench/envs/base.py`, `Env.step`; the profile recognizes the rejection).
//!
//! An episode ends when the simulated user says `###STOP###` or the agent calls a terminate
//! tool; only then does `Env.step` compute `info.reward_info`, so a result whose
//! `reward_info` is null and that did not raise ran out of the agent loop's steps. These facts
//! are the record's signals; `rules/harnesses/tau-bench.toml` says what they mean.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::build::{StepBuilder, to_u32};
use crate::ingest::adapters::shared::common::{content_text, task_string, test_status, tool_call};
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{CallRef, DeclaredTool, Outcome, OutcomeStatus, Role, Step, TestResult, ToolResult, Trajectory};

const NAME: &str = "tau-bench";

/// The pseudo-action that sends text to the user (`RESPOND_ACTION_NAME`).
const RESPOND: &str = "respond";
/// What the simulated user says to end the conversation (`Env.step`: `done = "###STOP###" in
/// observation`).
const STOP: &str = "###STOP###";

#[derive(Deserialize)]
struct RawResult<'a> {
    task_id: Value,
    #[serde(default)]
    reward: Option<f64>,
    #[serde(default)]
    info: Value,
    #[serde(borrow, default)]
    traj: Vec<&'a RawValue>,
    #[serde(default)]
    trial: Option<u32>,
}

#[derive(Deserialize)]
struct RawMsg {
    #[serde(default)]
    role: String,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    tool_calls: Option<Vec<RawToolCall>>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct RawToolCall {
    #[serde(default)]
    id: Option<String>,
    function: Option<RawFunction>,
}

#[derive(Deserialize)]
struct RawFunction {
    #[serde(default)]
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// tau-bench results files.
pub struct TauBench;

impl Adapter for TauBench {
    fn name(&self) -> &'static str {
        NAME
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "tau-bench results (EnvRunResult list or one result: task_id, reward, info.reward_info, traj)"
    }

    fn versions(&self) -> &'static str {
        "tau-bench 1 (tool-calling, ReAct, Act)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        let pre = if j.top_is_array { "[]." } else { "" };
        let has = |k: &str| j.has(&format!("{pre}{k}"));
        if !has("task_id") {
            return Err("no task_id".into());
        }
        if has("traj") && (has("reward") || has("info")) {
            return marker("tau-bench result (task_id, reward/info, traj)");
        }
        // The first result's `info` can be long; its keys one level down still say what it is.
        if has("reward") && (has("info.reward_info") || (has("info.task") && has("info.source"))) {
            return marker("tau-bench result (task_id, reward, info.task/reward_info)");
        }
        Err("no traj or info.reward_info beside task_id".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let text = src.text()?;
        let top: &RawValue =
            serde_json::from_str(text).map_err(|e| InputError::from_json(&src.display, &src.bytes, "tau-bench results", &e))?;
        let results: Vec<&RawValue> = if top.get().trim_start().starts_with('[') {
            serde_json::from_str(top.get()).map_err(|e| InputError::from_json(&src.display, &src.bytes, "tau-bench results", &e))?
        } else {
            vec![top]
        };
        let run = RunName::from_path(&unit.primary.path);
        for raw in results {
            let base = src.offset_of(raw.get()).unwrap_or(0);
            let r: RawResult<'_> = match serde_json::from_str(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    out.diagnostics.push(InputError::from_json_at(&src.display, &src.bytes, base, "tau-bench result", &e));
                    continue;
                }
            };
            match record(&src, &r, run.as_ref()) {
                Ok(t) => out.emit(t),
                Err(e) => out.diagnostics.push(e),
            }
        }
        Ok(())
    }
}

/// What `run.py`'s checkpoint name says about the run:
/// `{agent_strategy}-{model}-{temperature}_range_{start}-{end}_user-{user_model}-{user_strategy}_{time}.json`.
struct RunName {
    strategy: String,
    model: String,
    user_model: String,
}

impl RunName {
    fn from_path(p: &Path) -> Option<Self> {
        static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let re = RE.get_or_init(|| {
            regex::Regex::new(r"^(tool-calling|act|react|few-shot)-(.+)-(\d+(?:\.\d+)?)_range_-?\d+--?\d+_user-(.+)-([a-z]+)_[^/]*\.json$")
                .expect("static regex")
        });
        let name = p.file_name()?.to_string_lossy().into_owned();
        let c = re.captures(&name)?;
        Some(Self { strategy: c[1].to_string(), model: c[2].to_string(), user_model: c[4].to_string() })
    }
}

/// `Action: {"name": ..., "arguments": ...}` at the end of a ReAct/Act reply.
fn react_action(text: &str) -> Option<(String, Value)> {
    let (_, after) = text.rsplit_once("Action:")?;
    let v: Value = serde_json::from_str(after.trim()).ok()?;
    let name = v.get("name")?.as_str()?.to_string();
    Some((name, v.get("arguments").cloned().unwrap_or(Value::Null)))
}

/// The tools a ReAct/Act system prompt lists after `#Available tools`.
fn declared_from_prompt(system: &str) -> Option<Vec<DeclaredTool>> {
    let (_, rest) = system.split_once("#Available tools\n")?;
    let mut de = serde_json::Deserializer::from_str(rest).into_iter::<Vec<Value>>();
    let tools = de.next()?.ok()?;
    let out: Vec<DeclaredTool> = tools.iter().filter_map(crate::ingest::adapters::shared::common::declared_tool).collect();
    (!out.is_empty()).then_some(out)
}

/// The domain named by the wiki's title (`# Retail agent policy`, `# Airline Agent Policy`).
fn domain_of(system: &str) -> Option<String> {
    let first = system.lines().find(|l| !l.trim().is_empty())?.trim().trim_start_matches('#').trim();
    let lower = first.to_ascii_lowercase();
    let d = lower.strip_suffix("agent policy")?.trim();
    (!d.is_empty()).then(|| d.to_string())
}

fn result_step(output: String, call: Option<CallRef>, call_id: Option<String>, name: Option<String>) -> Step {
    let mut r = ToolResult::new(output);
    r.call = call;
    r.call_id = call_id;
    r.name = name;
    // `Env.step`'s observation when the tool raised.
    r.is_error = r.output.starts_with("Error: ");
    let mut s = Step::new(Role::Tool, String::new());
    s.tool_results.push(r);
    s
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn record(src: &Source, r: &RawResult<'_>, run: Option<&RunName>) -> Result<Trajectory, InputError> {
    let task = task_string(&r.task_id);
    let mut t = crate::model::Trajectory::new(task, NAME, NAME, 1, vec![src.provenance("transcript")]);
    t.trial = r.trial.unwrap_or(0);
    t.provenance.format_version = Some("tau-bench EnvRunResult".into());
    if let Some(run) = run {
        t.model = Some(run.model.clone());
        t.notes.push(format!("agent strategy {}, user simulator {} (from the results file name)", run.strategy, run.user_model));
    }

    // Steps. A ReAct/Act action is answered by the next user message ("API output: ...").
    let mut b = StepBuilder::new();
    let mut pending_react: Option<CallRef> = None;
    for raw in &r.traj {
        let m: RawMsg = serde_json::from_str(raw.get()).map_err(|e| {
            let base = src.offset_of(raw.get()).unwrap_or(0);
            InputError::from_json_at(&src.display, &src.bytes, base, "tau-bench message", &e)
        })?;
        let text = content_text(&m.content);
        let here = to_u32(b.len());
        let step = match m.role.as_str() {
            "system" => {
                if t.declared_tools.is_none() {
                    t.declared_tools = declared_from_prompt(&text);
                }
                if let Some(d) = domain_of(&text).filter(|_| !t.notes.iter().any(|n| n.starts_with("domain "))) {
                    t.notes.push(format!("domain {d} (from the policy's title)"));
                }
                Step::new(Role::System, text)
            }
            "assistant" => {
                let mut s = Step::new(Role::Assistant, text.clone());
                for c in m.tool_calls.iter().flatten() {
                    if let Some(f) = &c.function {
                        s.tool_calls.push(tool_call(c.id.clone(), &f.name, &f.arguments));
                    }
                }
                pending_react = None;
                if s.tool_calls.is_empty()
                    && let Some((name, args)) = react_action(&text).filter(|(n, _)| n != RESPOND)
                {
                    s.tool_calls.push(tool_call(None, name, &args));
                    pending_react = Some(CallRef { step: here, call: 0 });
                }
                s
            }
            "tool" => {
                pending_react = None;
                result_step(text, None, m.tool_call_id.clone(), m.name.clone())
            }
            _ => match (pending_react.take(), text.strip_prefix("API output: ")) {
                (Some(call), Some(obs)) => {
                    let name = b.steps.get(call.step as usize).and_then(|s| s.tool_calls.first()).map(|c| c.name.clone());
                    result_step(obs.to_string(), Some(call), None, name)
                }
                _ => Step::new(Role::User, text),
            },
        };
        b.push(step, src.span_of(0, raw.get()), None);
    }
    b.finish(&mut t);

    let info = &r.info;
    end_signals(&mut t, info);
    t.outcome = outcome(&t, r.reward, info, &src.display);
    Ok(t)
}

/// How the episode ended, as the result shows it: the exception `run.py` caught, the user's
/// stop word, or a `reward_info` left null (the episode never reached `done`). A terminate
/// tool's call is the last agent step, which the profile's finish tools recognize.
fn end_signals(t: &mut Trajectory, info: &Value) {
    if let Some(err) = info.get("error").and_then(Value::as_str) {
        t.signals.error("info.error", err);
    }
    if let Some(i) = t.steps.iter().rposition(|s| s.role == Role::User).filter(|i| t.steps[*i].text.contains(STOP)) {
        let span = t.steps[i].source_span;
        t.signals.status("traj (last user message)", STOP).at_step(i).with_span(span);
    }
    if info.get("error").is_none_or(Value::is_null) && info.get("reward_info").is_some_and(Value::is_null) {
        t.signals.status("info.reward_info", "null");
    }
    // Every agent message is one action of the loop's `max_num_steps`.
    let actions = t.steps.iter().filter(|s| s.role == Role::Assistant).count();
    #[expect(clippy::cast_precision_loss, reason = "a count of agent actions")]
    if actions > 0 {
        t.signals.consumed.steps = Some(actions as f64);
    }
}

/// Whether the agent made this call: same name and arguments, each call counted once.
fn take_call(calls: &mut Vec<(&str, &Value)>, name: &str, kwargs: &Value) -> bool {
    let empty = kwargs.as_object().is_some_and(serde_json::Map::is_empty);
    match calls.iter().position(|(n, a)| *n == name && (*a == kwargs || (empty && a.is_null()))) {
        Some(i) => {
            calls.remove(i);
            true
        }
        None => false,
    }
}

fn outcome(t: &Trajectory, reward: Option<f64>, info: &Value, shown: &str) -> Outcome {
    if info.get("error").is_some_and(|e| !e.is_null()) {
        let mut o = Outcome::new(OutcomeStatus::Errored, shown, "info.error");
        o.reward = reward;
        o.detail = Some("the run raised before the episode ended; its reward says nothing about the agent".into());
        return o;
    }
    let Some(reward) = reward else { return Outcome::unknown() };
    let mut o = Outcome::from_reward(reward, shown, "reward");
    let ri = info.get("reward_info").filter(|v| !v.is_null());
    let judged = ri.and_then(|r| r.get("info"));
    if let Some(j) = judged {
        if let Some(ra) = j.get("r_actions").and_then(Value::as_f64) {
            o.tests.push(TestResult::new("r_actions", test_status(ra >= 1.0)));
        } else if let Some(ro) = j.get("r_outputs").and_then(Value::as_f64) {
            // RewardOutputInfo replaces the action check's info; the reward still includes it.
            if reward >= 1.0 {
                o.tests.push(TestResult::new("r_actions (inferred from reward)", "passed"));
            } else if ro >= 1.0 {
                o.tests.push(TestResult::new("r_actions (inferred from reward)", "failed"));
            }
        }
        if let Some(outputs) = j.get("outputs").and_then(Value::as_object) {
            for (k, v) in outputs {
                o.tests.push(TestResult::new(format!("output: {k}"), test_status(v.as_bool() == Some(true))));
            }
        }
    }
    let expected = ri
        .and_then(|r| r.get("actions"))
        .or_else(|| info.pointer("/task/actions"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if !expected.is_empty() {
        let mut made: Vec<(&str, &Value)> = t.calls().map(|(_, c)| (c.name.as_str(), &c.arguments)).collect();
        let missing: Vec<String> = expected
            .iter()
            .filter_map(|a| Some((a.get("name")?.as_str()?, a.get("kwargs").unwrap_or(&Value::Null))))
            .filter(|(n, kw)| *n != RESPOND && !take_call(&mut made, n, kw))
            .map(|(n, _)| n.to_string())
            .collect();
        let names: Vec<&str> = expected.iter().filter_map(|a| a.get("name")?.as_str()).collect();
        let mut d = format!("expected actions ({}): {}", names.len(), names.join(", "));
        if missing.is_empty() {
            d.push_str("; the agent made each with the same arguments");
        } else {
            d.push_str(&format!("; not made with the same arguments: {}", missing.join(", ")));
        }
        o.detail = Some(d);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_names_give_strategy_model_and_user() {
        let r = RunName::from_path(Path::new("results/tool-calling-gpt-4o-0.0_range_0--1_user-gpt-4o-llm_0105153325.json")).unwrap();
        assert_eq!((r.strategy.as_str(), r.model.as_str(), r.user_model.as_str()), ("tool-calling", "gpt-4o", "gpt-4o"));
        assert!(RunName::from_path(Path::new("retail-subset.json")).is_none());
    }

    #[test]
    fn react_actions_and_declared_tools_from_text() {
        let (n, a) =
            react_action("Thought:\nlook it up\nAction:\n{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"u1\"}}").unwrap();
        assert_eq!((n.as_str(), a["user_id"].as_str()), ("get_user_details", Some("u1")));
        let tools = declared_from_prompt("# Retail agent policy\n#Available tools\n[{\"type\": \"function\", \"function\": {\"name\": \"think\", \"description\": \"Think.\"}}]\n# Instruction").unwrap();
        assert_eq!(tools[0].name, "think");
        assert_eq!(domain_of("# Retail agent policy\n\nAs a retail agent").as_deref(), Some("retail"));
        assert_eq!(domain_of("# Airline Agent Policy\n").as_deref(), Some("airline"));
    }
}
