//! One `SimulationRun` as one record.
//!
//! Half-duplex (text) runs store `messages`: the agent's and the simulated user's turns, each
//! with its own `cost` and `usage`, and `tool` messages answering calls by `id`. Calls carry a
//! `requestor`: in telecom the user works its own device with tools, so a user turn can call
//! tools too, and those calls stay on the user's step. Full-duplex (voice) runs store `ticks`
//! instead, each holding both speakers' chunk for that tick; a speaker's chunks from the tick it
//! starts speaking to the tick it stops are one utterance, so they make one step.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{NAME, Run};
use crate::ingest::adapters::chat::api::sum_usage;
use crate::ingest::adapters::shared::build::StepBuilder;
use crate::ingest::adapters::shared::common::{task_string, tool_call, uint};
use crate::ingest::adapters::shared::json_walk::each_at;
use crate::ingest::diag::InputError;
use crate::ingest::source::Source;
use crate::model::{Reasoning, Role, SourceFile, Step, Tokens, ToolResult, Trajectory, Usage};

/// A field whose value is of another type than tau2 writes reads as absent: metadata (a cost,
/// a time) is not worth the whole simulation.
fn lenient<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

#[derive(Deserialize)]
pub(super) struct RawSim<'a> {
    #[serde(default, deserialize_with = "lenient")]
    pub id: Option<String>,
    #[serde(default)]
    pub task_id: Value,
    #[serde(default)]
    pub trial: Option<u32>,
    #[serde(default, deserialize_with = "lenient")]
    pub start_time: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub end_time: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub duration: Option<f64>,
    #[serde(default)]
    pub termination_reason: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub agent_cost: Option<f64>,
    #[serde(default, deserialize_with = "lenient")]
    pub user_cost: Option<f64>,
    #[serde(default)]
    pub reward_info: Option<Value>,
    #[serde(borrow, default)]
    pub messages: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    pub ticks: Option<Vec<&'a RawValue>>,
    #[serde(default)]
    pub info: Option<Value>,
    #[serde(default, deserialize_with = "lenient")]
    pub mode: Option<String>,
}

#[derive(Deserialize)]
struct RawMsg {
    #[serde(default)]
    role: String,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    tool_calls: Option<Vec<RawCall>>,
    #[serde(default, deserialize_with = "lenient")]
    id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    error: Option<bool>,
    #[serde(default, deserialize_with = "lenient")]
    timestamp: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    cost: Option<f64>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    raw_data: Option<Value>,
    #[serde(default, deserialize_with = "lenient")]
    is_audio: Option<bool>,
    #[serde(default, deserialize_with = "lenient")]
    contains_speech: Option<bool>,
    /// A `MultiToolMessage`'s results.
    #[serde(default)]
    tool_messages: Option<Vec<RawMsg>>,
}

#[derive(Deserialize)]
struct RawCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct RawTick {
    #[serde(default, deserialize_with = "lenient")]
    timestamp: Option<String>,
    #[serde(default)]
    agent_chunk: Option<RawMsg>,
    #[serde(default)]
    user_chunk: Option<RawMsg>,
    #[serde(default)]
    agent_tool_calls: Vec<RawCall>,
    #[serde(default)]
    user_tool_calls: Vec<RawCall>,
    #[serde(default)]
    agent_tool_results: Vec<RawMsg>,
    #[serde(default)]
    user_tool_results: Vec<RawMsg>,
}

/// What the messages add up to, beside the steps.
#[derive(Default)]
struct Tally {
    /// The agent's token counts, summed over its replies.
    usage: Usage,
    agent_cost: Option<f64>,
    agent_calls: u64,
    /// The orchestrator's steps: every turn after the agent's opening one, and every batch of
    /// tool results (`Orchestrator.step` counts one per message sent); ticks in full duplex.
    orchestrator_steps: u64,
    tool_errors: u64,
}

/// Parses one simulation; `layout` names the results layout it came from.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub(super) fn record(src: &Source, raw: &RawValue, run: &Run, files: Vec<SourceFile>, layout: &str) -> Result<Trajectory, InputError> {
    let base = src.offset_of(raw.get()).unwrap_or(0);
    let sim: RawSim<'_> = serde_json::from_str(raw.get())
        .map_err(|e| InputError::from_json_at(&src.display, &src.bytes, base, "tau2-bench simulation", &e))?;
    let task = task_string(&sim.task_id);
    let mut t = Trajectory::new(task.clone(), NAME, NAME, 1, files);
    t.trial = sim.trial.unwrap_or(0);
    t.model.clone_from(&run.model);
    t.harness_version.clone_from(&run.git_commit);
    t.session_id.clone_from(&sim.id);
    t.declared_tools.clone_from(&run.declared);
    let mode = sim.mode.as_deref().unwrap_or("half_duplex");
    t.provenance.format_version = Some(format!("tau2-bench Results ({layout} layout, {mode})"));
    notes(&mut t, &sim, run);

    let mut b = StepBuilder::new();
    let tally = if let Some(ticks) = sim.ticks.as_ref().filter(|_| sim.messages.is_none()) {
        from_ticks(src, ticks, &mut b)?
    } else {
        from_messages(src, sim.messages.as_deref().unwrap_or_default(), &mut b)?
    };
    t.started_at.clone_from(&sim.start_time);
    t.ended_at.clone_from(&sim.end_time);
    t.usage.wall_seconds = sim.duration;
    b.finish(&mut t);
    t.usage.prompt_tokens = tally.usage.prompt_tokens;
    t.usage.completion_tokens = tally.usage.completion_tokens;
    t.usage.reasoning_tokens = tally.usage.reasoning_tokens;
    t.usage.cached_tokens = tally.usage.cached_tokens;
    t.usage.cost_usd = sim.agent_cost.or(tally.agent_cost);
    t.usage.api_calls = (tally.agent_calls > 0).then_some(tally.agent_calls);

    end_signals(&mut t, src, raw, &sim, run, &tally);
    t.outcome = super::outcome::outcome(&t, &sim, run, &src.display);
    Ok(t)
}

fn notes(t: &mut Trajectory, sim: &RawSim<'_>, run: &Run) {
    if let Some(d) = &run.domain {
        t.notes.push(format!("domain {d}"));
    }
    let who = |imp: &Option<String>, llm: &Option<String>| match (imp, llm) {
        (Some(i), Some(l)) => format!("{i} on {l}"),
        (Some(x), None) | (None, Some(x)) => x.clone(),
        (None, None) => "not recorded".into(),
    };
    if run.agent_impl.is_some() || run.user_impl.is_some() || run.user_model.is_some() {
        t.notes.push(format!("agent {}; user simulator {}", who(&run.agent_impl, &run.model), who(&run.user_impl, &run.user_model)));
    }
    // The simulated user's model calls are the benchmark's cost, not the agent's.
    if let Some(c) = sim.user_cost {
        t.notes.push(format!("user simulator cost {c:.6} USD (user_cost), not in usage"));
    }
}

/// Token counts of one model call: litellm's `prompt_tokens`/`completion_tokens`, with their
/// details when the provider gave them.
fn tokens(usage: Option<&Value>) -> Option<Tokens> {
    let u = usage?;
    let t = Tokens {
        prompt: uint(u.get("prompt_tokens")).or_else(|| uint(u.get("input_tokens"))),
        completion: uint(u.get("completion_tokens")).or_else(|| uint(u.get("output_tokens"))),
        reasoning: uint(u.pointer("/completion_tokens_details/reasoning_tokens")),
        cached: uint(u.pointer("/prompt_tokens_details/cached_tokens")),
    };
    (t != Tokens::default()).then_some(t)
}

/// Visible reasoning in the provider's raw reply: Anthropic thinking blocks, or litellm's
/// `reasoning_content`.
fn reasoning(raw: Option<&Value>, tokens: Option<&Tokens>) -> Option<Reasoning> {
    let raw = raw?;
    let blocks: Vec<&str> = raw
        .get("thinking_blocks")
        .and_then(Value::as_array)
        .map(|b| b.iter().filter_map(|x| x.get("thinking").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    let text = if blocks.is_empty() {
        raw.get("reasoning_content").or_else(|| raw.pointer("/message/reasoning_content")).and_then(Value::as_str).map(String::from)
    } else {
        Some(blocks.join("\n"))
    }
    .filter(|s| !s.trim().is_empty());
    let n = tokens.and_then(|t| t.reasoning);
    (text.is_some() || n.is_some()).then_some(Reasoning { text, tokens: n })
}

/// A message's text. An audio message's `content` is base64 audio bytes, not words.
fn text_of(m: &RawMsg) -> String {
    let s = crate::ingest::adapters::shared::common::content_text(&m.content);
    let audio = m.is_audio == Some(true) && !s.contains(char::is_whitespace) && s.len() > 64;
    if audio {
        "[audio]".into()
    } else if m.role == "assistant" {
        crate::ingest::adapters::shared::common::unwrapped_reply(s)
    } else {
        s
    }
}

fn calls_step(role: Role, text: String, calls: &[RawCall]) -> Step {
    let mut s = Step::new(role, text);
    for c in calls {
        s.tool_calls.push(tool_call(c.id.clone().filter(|i| !i.is_empty()), &c.name, &c.arguments));
    }
    s
}

/// A step of the results of one batch of calls, paired by id.
fn results_step(b: &StepBuilder, results: &[&RawMsg], tally: &mut Tally) -> Step {
    let mut s = Step::new(Role::Tool, String::new());
    for m in results {
        let id = m.id.as_deref().filter(|i| !i.is_empty());
        let mut r: ToolResult = b.result_for(id, crate::ingest::adapters::shared::common::content_text(&m.content));
        r.name = r.call.and_then(|c| b.steps.get(c.step as usize)?.tool_calls.get(c.call as usize)).map(|c| c.name.clone());
        r.is_error = m.error == Some(true);
        tally.tool_errors += u64::from(r.is_error);
        s.tool_results.push(r);
    }
    s.timestamp = results.iter().find_map(|m| m.timestamp.clone());
    s
}

fn model_step(mut s: Step, m: &RawMsg, tally: &mut Tally, agent: bool) -> Step {
    s.timestamp.clone_from(&m.timestamp);
    if agent {
        let tok = tokens(m.usage.as_ref());
        s.reasoning = reasoning(m.raw_data.as_ref(), tok.as_ref());
        if tok.is_some() {
            sum_usage(&mut tally.usage, tok.as_ref());
            tally.agent_calls += 1;
        }
        if let Some(c) = m.cost {
            tally.agent_cost = Some(tally.agent_cost.unwrap_or(0.0) + c);
        }
        s.tokens = tok;
        s.cost_usd = m.cost;
    }
    s
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn from_messages(src: &Source, msgs: &[&RawValue], b: &mut StepBuilder) -> Result<Tally, InputError> {
    let mut tally = Tally::default();
    let mut after_tool = false;
    for (i, (at, m)) in each_at::<RawMsg>(src, msgs, "tau2-bench message")?.into_iter().enumerate() {
        let span = Some(src.span(0, at.start, at.len()));
        let tool = m.role == "tool";
        // The agent's opening message is set up before the orchestrator's first step.
        let opening = i == 0 && m.role == "assistant";
        if (tool && !after_tool) || (!tool && !opening && matches!(m.role.as_str(), "assistant" | "user")) {
            tally.orchestrator_steps += 1;
        }
        after_tool = tool;
        let step = match m.role.as_str() {
            "assistant" | "user" => {
                let (role, agent) = if m.role == "assistant" { (Role::Assistant, true) } else { (Role::User, false) };
                let s = calls_step(role, text_of(&m), m.tool_calls.as_deref().unwrap_or_default());
                model_step(s, &m, &mut tally, agent)
            }
            "tool" => {
                let parts: Vec<&RawMsg> = match &m.tool_messages {
                    Some(list) => list.iter().collect(),
                    None => vec![&m],
                };
                results_step(b, &parts, &mut tally)
            }
            "system" => {
                let mut s = Step::new(Role::System, text_of(&m));
                s.timestamp.clone_from(&m.timestamp);
                s
            }
            other => {
                b.ignore(&format!("{other:?} message"));
                continue;
            }
        };
        b.push(step, span, None);
    }
    Ok(tally)
}

/// The utterance a speaker is in, as the index of its step.
#[derive(Default)]
struct Open {
    agent: Option<usize>,
    user: Option<usize>,
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn from_ticks(src: &Source, ticks: &[&RawValue], b: &mut StepBuilder) -> Result<Tally, InputError> {
    let mut tally = Tally { orchestrator_steps: ticks.len() as u64, ..Tally::default() };
    let mut open = Open::default();
    for (at, tick) in each_at::<RawTick>(src, ticks, "tau2-bench tick")? {
        let span = Some(src.span(0, at.start, at.len()));
        for agent in [true, false] {
            let (chunk, calls, results) = if agent {
                (tick.agent_chunk.as_ref(), &tick.agent_tool_calls, &tick.agent_tool_results)
            } else {
                (tick.user_chunk.as_ref(), &tick.user_tool_calls, &tick.user_tool_results)
            };
            let slot = if agent { &mut open.agent } else { &mut open.user };
            let role = if agent { Role::Assistant } else { Role::User };
            let text = chunk.map(text_of).unwrap_or_default();
            let speaks = chunk.is_some_and(|c| c.contains_speech.unwrap_or(!text.trim().is_empty()));
            if !calls.is_empty() {
                *slot = None;
                let mut s = calls_step(role, text, calls);
                if let Some(c) = chunk {
                    s = model_step(s, c, &mut tally, agent);
                }
                b.push(s, span, tick.timestamp.clone());
            } else if speaks {
                match slot.and_then(|i| b.steps.get_mut(i)) {
                    Some(s) => {
                        join_words(&mut s.text, &text);
                        if let Some(c) = chunk.and_then(|c| c.cost).filter(|_| agent) {
                            s.cost_usd = Some(s.cost_usd.unwrap_or(0.0) + c);
                            tally.agent_cost = Some(tally.agent_cost.unwrap_or(0.0) + c);
                        }
                    }
                    None => {
                        let mut s = Step::new(role, text);
                        if let Some(c) = chunk {
                            s = model_step(s, c, &mut tally, agent);
                        }
                        *slot = Some(b.push(s, span, tick.timestamp.clone()));
                    }
                }
            } else {
                *slot = None;
            }
            if !results.is_empty() {
                let parts: Vec<&RawMsg> = results.iter().collect();
                let s = results_step(b, &parts, &mut tally);
                b.push(s, span, tick.timestamp.clone());
            }
        }
    }
    Ok(tally)
}

/// Appends a streamed chunk to an utterance; chunks cut at words carry no space between them.
fn join_words(text: &mut String, more: &str) {
    if more.is_empty() {
        return;
    }
    if !text.is_empty() && !text.ends_with(char::is_whitespace) && !more.starts_with(char::is_whitespace) {
        text.push(' ');
    }
    text.push_str(more);
}

/// How the simulation ended, as tau2 recorded it: the orchestrator's `termination_reason`,
/// the exception a run that never finished raised (`info.error`), the limits from the run's
/// `info`, and what the simulation used of them.
fn end_signals(t: &mut Trajectory, src: &Source, raw: &RawValue, sim: &RawSim<'_>, run: &Run, tally: &Tally) {
    if let Some(reason) = sim.termination_reason.as_deref() {
        let last = |role: Role| t.steps.iter().rposition(|s| s.role == role);
        let step = match reason {
            "user_stop" | "user_error" => last(Role::User),
            "agent_stop" | "agent_error" => last(Role::Assistant),
            _ => None,
        };
        let span = field_span(src, raw, reason);
        let s = t.signals.status("termination_reason", reason);
        s.with_span(span);
        if let Some(i) = step {
            s.at_step(i);
        }
    }
    if let Some(info) = sim.info.as_ref()
        && let Some(err) = info.get("error").filter(|e| !e.is_null())
    {
        let msg = err.as_str().map_or_else(|| err.to_string(), String::from);
        let text = match info.get("error_type").and_then(Value::as_str) {
            Some(kind) if !msg.starts_with(kind) => format!("{kind}: {msg}"),
            _ => msg,
        };
        t.signals.error("info.error", text);
    }
    t.signals.limits.steps = run.max_steps;
    #[expect(clippy::cast_precision_loss, reason = "counts of turns and tool errors")]
    {
        t.signals.consumed.steps = (tally.orchestrator_steps > 0).then_some(tally.orchestrator_steps as f64);
        if tally.tool_errors > 0 {
            t.notes.push(format!(
                "{} tool errors{}",
                tally.tool_errors,
                run.max_errors.map(|m| format!(" (max_errors {m})")).unwrap_or_default()
            ));
        }
    }
    t.signals.consumed.wall_seconds = sim.duration;
    t.signals.consumed.cost_usd = t.usage.cost_usd;
}

/// The bytes of `"termination_reason": "<reason>"` in the file, for evidence that rests on it.
fn field_span(src: &Source, raw: &RawValue, reason: &str) -> Option<crate::model::SourceSpan> {
    let text = raw.get();
    let at = text.find("\"termination_reason\"")?;
    let quoted = format!("\"{reason}\"");
    let end = at + text[at..].find(&quoted)? + quoted.len();
    let base = src.offset_of(text)?;
    Some(src.span(0, base + at, end - at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(v: serde_json::Value) -> RawMsg {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn word_chunks_join_into_an_utterance() {
        let mut s = String::new();
        for w in ["Hello,", "how can", " I", "help?"] {
            join_words(&mut s, w);
        }
        assert_eq!(s, "Hello, how can I help?");
    }

    #[test]
    fn audio_bytes_are_not_text_and_odd_metadata_reads_as_absent() {
        let audio = msg(serde_json::json!({"role": "user", "content": "UklGR".repeat(30), "is_audio": true}));
        assert_eq!(text_of(&audio), "[audio]");
        let words = msg(serde_json::json!({"role": "user", "content": "a spoken line", "is_audio": true, "cost": "free"}));
        assert_eq!((text_of(&words).as_str(), words.cost), ("a spoken line", None));
    }

    #[test]
    fn tokens_and_reasoning_from_usage_and_raw_data() {
        let u = serde_json::json!({"prompt_tokens": 10, "completion_tokens": 4, "completion_tokens_details": {"reasoning_tokens": 3}});
        let t = tokens(Some(&u)).unwrap();
        assert_eq!((t.prompt, t.completion, t.reasoning, t.cached), (Some(10), Some(4), Some(3), None));
        let raw = serde_json::json!({"thinking_blocks": [{"type": "thinking", "thinking": "look it up"}]});
        assert_eq!(reasoning(Some(&raw), Some(&t)).unwrap(), Reasoning { text: Some("look it up".into()), tokens: Some(3) });
        assert!(reasoning(Some(&serde_json::json!({})), None).is_none());
    }
}
