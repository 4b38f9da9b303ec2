//! AutoGen Magentic-One message logs: a list of `{role, content}` where the role names the
//! speaker as AutoGen's console log does (`human`, `Orchestrator (thought)`,
//! `Orchestrator (-> WebSurfer)`, `Orchestrator (termination condition)`, `WebSurfer`,
//! `Coder`, `ComputerTerminal`, ...), or the same list under `history` in an object that also
//! holds the question and its verdict (the Who&When layout).
//!
//! How a run ended is the orchestrator's own words (`autogen_magentic_one` `BaseOrchestrator`
//! and `LedgerOrchestrator`): `Request satisfied.` then `No agent selected.` (finished),
//! `Replan counter exceeded... Terminating.` (its stall detector gave up), `Max rounds (N)
//! reached.`, `Max time (Ts) reached.`, `<agent> requested halt.`. A log that stops on a
//! traceback crashed. The answer is the scenario's `FINAL ANSWER:` line. The task id is the
//! file's stem; verdicts come from a verdict file keyed by it.
//!
//! What those words mean is `rules/harnesses/magentic-one.toml`: the termination condition's
//! first line is a status, preceded by the orchestrator's last thought before it (which says
//! why no agent was selected); a traceback the log stops on is an error, its exception line.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::common::content_text;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Outcome, OutcomeStatus, Role, Step, Trajectory};

const NAME: &str = "magentic-one";

#[derive(Deserialize)]
struct RawMsg {
    #[serde(default)]
    role: String,
    #[serde(default)]
    content: Value,
    /// AG2-style group chats name the agent here and keep `role` generic.
    #[serde(default)]
    name: Option<String>,
}

/// The Who&When wrapper: the log plus what is known about the task.
#[derive(Deserialize)]
struct RawWrapped<'a> {
    #[serde(borrow)]
    history: Vec<&'a RawValue>,
    #[serde(default)]
    is_correct: Option<bool>,
    #[serde(default)]
    ground_truth: Option<Value>,
    #[serde(default)]
    question: Option<String>,
    #[serde(default, rename = "question_ID")]
    question_id: Option<String>,
}

/// Magentic-One logs.
pub struct MagenticOne;

impl Adapter for MagenticOne {
    fn name(&self) -> &'static str {
        NAME
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "AutoGen Magentic-One message log (list of {role: agent, content}, or wrapped under history)"
    }

    fn versions(&self) -> &'static str {
        "autogen_magentic_one; Who&When wrapped"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        // The structure first: looking for the roles in the text costs a scan of the prefix.
        let orchestrator = || {
            let text = p.text();
            text.contains("\"Orchestrator (") || text.contains("\"Orchestrator\"")
        };
        if j.top_is_array {
            if j.has("[].role") && j.has("[].content") && orchestrator() {
                return marker("message list with Orchestrator roles");
            }
            return Err("no {role, content} list with Orchestrator roles".into());
        }
        if j.keys.get("history") == Some(&crate::ingest::probe::Scalar::Array) && orchestrator() {
            return marker("history list with Orchestrator roles");
        }
        Err("no Orchestrator message list".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let text = src.text()?;
        let wrapped: Option<RawWrapped<'_>> = if text.trim_start().starts_with('{') {
            Some(serde_json::from_str(text).map_err(|e| InputError::from_json(&src.display, &src.bytes, "Magentic-One log", &e))?)
        } else {
            None
        };
        let list: Vec<&RawValue> = match &wrapped {
            Some(w) => w.history.clone(),
            None => serde_json::from_str(text).map_err(|e| InputError::from_json(&src.display, &src.bytes, "Magentic-One log", &e))?,
        };
        let mut msgs = Vec::with_capacity(list.len());
        for raw in &list {
            let m: RawMsg = serde_json::from_str(raw.get()).map_err(|e| {
                let base = src.offset_of(raw.get()).unwrap_or(0);
                InputError::from_json_at(&src.display, &src.bytes, base, "Magentic-One message", &e)
            })?;
            msgs.push((*raw, m));
        }
        let stem = stem(&unit.primary.path);
        let mut t = crate::model::Trajectory::new(stem.clone(), NAME, NAME, 1, vec![src.provenance("transcript")]);
        t.session_id = Some(stem);
        t.provenance.format_version = Some(if wrapped.is_some() { "magentic-one log (wrapped)".into() } else { "magentic-one log".into() });
        for (raw, m) in &msgs {
            let mut s = step(m);
            s.source_span = src.span_of(0, raw.get());
            t.steps.push(s);
        }
        t.submission = final_answer(&t.steps);
        if t.submission.is_none() {
            t.notes.push("no FINAL ANSWER line: the run produced no answer".into());
        }
        signals(&msgs, &mut t);
        if let Some(w) = &wrapped {
            if let Some(ok) = w.is_correct {
                let mut o = Outcome::from_reward(if ok { 1.0 } else { 0.0 }, &src.display, "is_correct");
                o.detail = w.ground_truth.as_ref().map(|g| format!("ground truth: {}", content_text(g)));
                t.outcome = o;
            } else if w.ground_truth.is_some() {
                t.outcome = Outcome {
                    detail: w.ground_truth.as_ref().map(|g| format!("ground truth: {}", content_text(g))),
                    ..Outcome::new(OutcomeStatus::Unknown, &src.display, "ground_truth")
                };
            }
            if let Some(q) = &w.question_id {
                t.notes.push(format!("question id {q}"));
            }
            if w.question.is_some() && t.steps.first().is_none_or(|s| s.role != Role::User) {
                t.notes.push("the question is in the wrapper, not in the log".into());
            }
        }
        out.emit(t);
        Ok(())
    }
}

/// The file name without its extension (`.json`).
fn stem(p: &Path) -> String {
    p.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The speaking agent and what the parenthesis says: `Orchestrator (-> Coder)` →
/// (`Orchestrator`, `-> Coder`).
fn split_role(role: &str) -> (&str, Option<&str>) {
    match role.split_once(" (") {
        Some((agent, rest)) => (agent, rest.strip_suffix(')')),
        None => (role, None),
    }
}

fn step(m: &RawMsg) -> Step {
    let text = content_text(&m.content);
    let (agent, _) = split_role(&m.role);
    let role = match agent.to_ascii_lowercase().as_str() {
        "human" | "user" | "user_proxy" | "userproxy" => Role::User,
        "system" => Role::System,
        // The terminal runs the code blocks of the message before it; its output is the
        // environment talking, with no call of its own to answer.
        "computerterminal" | "computer_terminal" | "executor" | "tool" => Role::Environment,
        _ => Role::Assistant,
    };
    let mut s = Step::new(role, text);
    s.agent = Some(match (&m.name, role) {
        (Some(n), _) if !n.is_empty() => n.clone(),
        _ => m.role.clone(),
    });
    s
}

/// The last `FINAL ANSWER:` line of the log.
fn final_answer(steps: &[Step]) -> Option<String> {
    steps.iter().rev().find_map(|s| {
        let text = &s.text;
        let i = text.rfind("FINAL ANSWER:")?;
        let rest = &text[i + "FINAL ANSWER:".len()..];
        Some(rest.lines().next().unwrap_or("").trim().to_string())
    })
}

/// How the run ended, as the log says it: the orchestrator's termination condition and the
/// thought before it, or the traceback the log stops on; and the rounds it ran. Message `i`
/// is step `i`, whose text is the message's.
fn signals(msgs: &[(&RawValue, RawMsg)], t: &mut Trajectory) {
    let rounds = t.steps.iter().filter(|s| s.text.starts_with("Next speaker ")).count();
    #[expect(clippy::cast_precision_loss, reason = "a count of rounds")]
    {
        t.signals.consumed.steps = Some(rounds as f64);
    }
    let cond = msgs.iter().rposition(|(_, m)| split_role(&m.role).1 == Some("termination condition"));
    if let Some(i) = cond {
        if let Some(j) = msgs[..i].iter().rposition(|(_, m)| split_role(&m.role) == ("Orchestrator", Some("thought"))) {
            let (_, m) = &msgs[j];
            t.signals.status(m.role.clone(), t.steps[j].text.trim()).with_span(t.steps[j].source_span).at_step(j);
        }
        let (_, m) = &msgs[i];
        let first = t.steps[i].text.lines().next().unwrap_or("").trim();
        t.signals.status(m.role.clone(), first).with_span(t.steps[i].source_span).at_step(i);
        return;
    }
    // No termination condition: the log stops where the scenario died.
    let Some(at) = msgs.len().checked_sub(1) else { return };
    let last = &t.steps[at].text;
    if !(last.contains("Traceback (most recent call last)") || last.contains("Error processing publish message")) {
        return;
    }
    // The exception line of the traceback (`openai.BadRequestError: ...`), else the runtime's
    // complaint.
    static EXC: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let exc = EXC.get_or_init(|| regex::Regex::new(r"^[A-Za-z_][\w.]*(Error|Exception)\b").expect("static regex"));
    let line = last.lines().map(str::trim).rfind(|l| exc.is_match(l)).or_else(|| last.lines().map(str::trim).find(|l| l.contains("Error")));
    if let Some(l) = line {
        t.signals.error("last message", l).with_span(t.steps[at].source_span).at_step(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_split_into_agent_and_note() {
        assert_eq!(split_role("Orchestrator (-> WebSurfer)"), ("Orchestrator", Some("-> WebSurfer")));
        assert_eq!(split_role("Orchestrator (termination condition)"), ("Orchestrator", Some("termination condition")));
        assert_eq!(split_role("Coder"), ("Coder", None));
    }
}
