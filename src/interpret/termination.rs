//! How the run ended, from its signals: the first status an entry knows, the errors that ended
//! it, the harness's log lines, and, when none of them says, the shape of the last steps.
//!
//! A status says what the harness saw; an error or log line can say why. So a weak status —
//! nothing said, a crash no entry explains, a clock that fired — gives way to a specific cause
//! found beside it (a rate limit, a context-window error, a stuck-loop guard): the provider that
//! kept failing until the clock fired ended the run, not the clock.

use super::{Report, clip, first_line, hooks, limit_reached};
use crate::model::{Budget, Role, Signal, Termination, TerminationKind, Trajectory};
use crate::rules::Profile;
use crate::rules::meanings::{Entry, Hit, Meaning, Table};

/// Longest detail kept from an error text.
const DETAIL: usize = super::KEPT;

/// A termination one signal supports, with the entry behind it.
struct Candidate<'a> {
    meaning: Meaning,
    entry: Option<&'a Entry>,
    signal: &'a Signal,
    hit: Hit,
}

fn first_match<'a>(p: &'a Profile, table: Table, s: &'a Signal) -> Option<Candidate<'a>> {
    p.meanings.table(table).filter(|e| e.reads(&s.field)).find_map(|e| {
        let hit = e.find(&s.text)?;
        Some(Candidate { meaning: e.means?, entry: Some(e), signal: s, hit })
    })
}

/// Decides `t.termination`. A record with no signals keeps a termination that says anything
/// (one written by another tool, or interpreted before).
pub fn decide(t: &mut Trajectory, p: &Profile, report: &mut Report) {
    let sig = &t.signals;
    let said = t.termination.kind != TerminationKind::Unknown || t.termination.raw.is_some() || t.termination.detail.is_some();
    if sig.statuses.is_empty() && sig.errors.is_empty() && sig.log_lines.is_empty() && said {
        return;
    }
    let status = sig.statuses.iter().find_map(|s| first_match(p, Table::Status, s));
    // An error no entry explains is still an error that ended the run: a harness error.
    let errors: Vec<Candidate<'_>> = sig
        .errors
        .iter()
        .map(|s| {
            first_match(p, Table::Error, s).unwrap_or(Candidate {
                meaning: Meaning { kind: TerminationKind::HarnessError, budget: None },
                entry: None,
                signal: s,
                hit: Hit::default(),
            })
        })
        .collect();
    let logs: Vec<Candidate<'_>> = sig.log_lines.iter().filter_map(|s| first_match(p, Table::LogLine, s)).collect();

    let normal_end = |m: Meaning| matches!(m.kind, TerminationKind::AgentFinished | TerminationKind::AgentStoppedWithoutFinish);
    let strong_error = errors.iter().find(|c| !c.meaning.is_weak() && !normal_end(c.meaning));
    // A log says how the run went in order: its last line that names a cause or a normal end
    // is what happened last (a rate limit the run recovered from is followed by its finish).
    let last_log = logs.iter().rev().find(|c| !c.meaning.is_weak());
    let log_cause = last_log.filter(|c| !normal_end(c.meaning));
    let says_something = |c: &&Candidate<'_>| c.meaning.kind != TerminationKind::Unknown;
    // A runner's clock that fired while the agent went on, and the agent's own log then ending
    // normally: the runner waited for the agent (the entry's `waits`: Terminal-Bench 1 does, for
    // minutes; Harbor's clock cancels it), so the agent ended its run itself, as an exit status
    // of its own would say (`terminal_capture`). Not past an error that ended the run. The clock
    // stays in the detail.
    let own_end = last_log
        .filter(|c| normal_end(c.meaning) && c.signal.field != crate::model::AFTER_AGENT)
        .filter(|_| strong_error.is_none() && status.as_ref().is_some_and(|s| s.entry.is_some_and(|e| e.waits)));
    let chosen = match &status {
        Some(_) if own_end.is_some() => own_end,
        Some(s) if !s.meaning.is_weak() => Some(s),
        _ => strong_error
            .or(log_cause)
            .or(status.as_ref().filter(says_something))
            .or(errors.first())
            .or(last_log)
            .or(logs.iter().rev().find(says_something)),
    };
    let mut term = match chosen {
        Some(c) => {
            let mut term = from_candidate(c);
            if let (Some(_), Some(s)) = (own_end, &status) {
                term.detail = Some(format!(
                    "the runner's clock fired ({}) while the agent went on; the agent then ended on its own, and the runner waited for it",
                    first_line(&s.signal.text, DETAIL)
                ));
            }
            // A status says what ended the run; the error beside it, what went wrong.
            if term.detail.is_none()
                && std::ptr::eq(c.signal, status.as_ref().map_or(std::ptr::null(), |s| s.signal))
                && let Some(e) = sig.errors.first()
            {
                term.detail = Some(clip(&e.text, DETAIL));
            }
            term
        }
        None => {
            let mut s = from_steps(t, p);
            // A status that says nothing still names what the file said.
            if let Some(c) = &status
                && s.kind == TerminationKind::Unknown
            {
                s = from_candidate(c);
            }
            s
        }
    };
    // Another signal with the same meaning may carry the amounts the chosen one does not
    // (Harbor's `AgentTimeoutError` status, and its message "timed out after 600 seconds").
    if let Some(c) = chosen {
        let same = status.iter().chain(&errors).chain(&logs).filter(|o| o.meaning == c.meaning);
        for o in same {
            term.limit = term.limit.or(o.hit.limit);
            term.consumed = term.consumed.or(o.hit.consumed);
        }
    }
    if let Some(h) = chosen.and_then(|c| c.entry).and_then(|e| e.hook.as_deref()) {
        hooks::run(h, t, &mut term);
    }
    if let Some(id) = &term.rule {
        report.fired.push(id.clone());
    }
    answers_ran_out(t, &mut term);
    steps_ran_out(t, &mut term);
    fill_amounts(t, &mut term);
    stalled_past_clock(t, &mut term);
    t.termination = term;
}

/// A run with no recorded end that took as many steps as its recorded step limit: the limit
/// ended it (a solver's own loop cap, which leaves no sample limit, no event and no error behind,
/// only the turns it allowed).
fn steps_ran_out(t: &Trajectory, term: &mut Termination) {
    if term.kind != TerminationKind::Unknown {
        return;
    }
    let (Some(limit), Some(used)) = (t.signals.limits.steps, t.signals.consumed.steps) else { return };
    if !limit_reached(t, Budget::Steps) {
        return;
    }
    let detail = format!("no end was recorded, and the run took {used} steps of its {limit}-step limit");
    harness_budget(term, Budget::Steps, limit, used, detail, crate::model::STEPS_RAN_OUT);
}

/// The run ended on `budget`, which the harness enforced, as the interpretation itself decided
/// (`rule`): the agent did not give up, the limit stopped it.
fn harness_budget(term: &mut Termination, budget: Budget, limit: f64, used: f64, detail: String, rule: &str) {
    term.kind = TerminationKind::Budget;
    term.budget = Some(budget);
    term.enforced_by = Some(crate::model::Enforcer::Harness);
    term.limit = Some(limit);
    term.consumed = Some(used);
    term.detail = Some(detail);
    term.rule = Some(rule.into());
    term.gave_up = false;
}

/// A solver that takes several answers goes on after a wrong one while it has answers left
/// (Inspect's `basic_agent` and `react`), so a run that ended on its answer, failed, after
/// taking at least two, ended because it had none left: the answer limit, a budget (DESIGN.md,
/// "an answer-submission limit ended the run"). Where the log does not say the limit, the
/// answers taken are it. One answer of one allowed is the agent's own end.
fn answers_ran_out(t: &Trajectory, term: &mut Termination) {
    // Only a wrong last answer says the answers ran out: an unscored or errored run says nothing.
    if term.kind != TerminationKind::AgentFinished || t.outcome.status != crate::model::OutcomeStatus::Failed {
        return;
    }
    let Some(used) = t.signals.consumed.attempts else { return };
    let limit = t.signals.limits.attempts.unwrap_or(used);
    if limit < 2.0 || used < limit {
        return;
    }
    let said =
        if t.signals.limits.attempts.is_some() { "its limit" } else { "as many as it was allowed (the record does not say the limit)" };
    let detail = format!("the run handed in {used} answers, {said}, and stopped on the last, which failed");
    harness_budget(term, Budget::Attempts, limit, used, detail, crate::model::ANSWERS_RAN_OUT);
}

/// How far past its limit a wall clock must have run before the overrun says the harness
/// could not stop the run (cancelling a working agent takes seconds, not minutes).
const OVERRUN: f64 = 1.25;

/// A wall clock that fired on a run which had stopped moving: no step for longer than the whole
/// budget, and a phase that ran far past its limit because even the cancellation hung. The
/// environment stalled (a network outage, a hung sandbox call) and the clock fired afterwards,
/// which does not make it a budget (DESIGN, "Decisions on hard cases").
fn stalled_past_clock(t: &Trajectory, term: &mut Termination) {
    let (Some(Budget::WallTime), Some(limit), Some(consumed)) = (term.budget, term.limit, term.consumed) else { return };
    if term.kind != TerminationKind::Budget || limit <= 0.0 || consumed < limit * OVERRUN {
        return;
    }
    let times: Vec<(usize, jiff::Timestamp)> = t
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.timestamp.as_deref().and_then(crate::util::parse_time).map(|ts| (i, ts)))
        .collect();
    let secs = |a: jiff::Timestamp, b: jiff::Timestamp| (b.as_millisecond() - a.as_millisecond()) as f64 / 1000.0;
    let mut idle: Option<(f64, usize)> = times.windows(2).map(|w| (secs(w[0].1, w[1].1), w[0].0)).max_by(|a, b| a.0.total_cmp(&b.0));
    if let (Some(&(i, last)), Some(end)) = (times.last(), t.ended_at.as_deref().and_then(crate::util::parse_time)) {
        let tail = secs(last, end);
        if idle.is_none_or(|(g, _)| tail > g) {
            idle = Some((tail, i));
        }
    }
    let Some((gap, after)) = idle.filter(|(g, _)| *g > limit) else { return };
    term.kind = TerminationKind::Infrastructure;
    term.detail = Some(format!(
        "stalled: no step for {gap:.0} s after step {after}, longer than the whole {limit:.0} s clock, which fired and then took {:.0} s more to stop the run{}",
        consumed - limit,
        term.detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
    ));
    term.rule = Some(crate::model::STALLED_PAST_CLOCK.into());
}

fn from_candidate(c: &Candidate<'_>) -> Termination {
    let m = c.meaning;
    let mut term = Termination::of(m.kind);
    term.budget = m.budget;
    term.enforced_by = c.entry.and_then(|e| e.by).or_else(|| m.default_enforcer());
    term.raw = Some(first_line(&c.signal.text, DETAIL));
    term.source = Some(c.signal.field.clone());
    term.span = c.signal.span;
    term.rule = c.entry.map(|e| e.id.clone());
    term.gave_up = c.entry.is_some_and(|e| e.gave_up);
    term.detail = match c.entry.and_then(|e| e.detail.clone()) {
        Some(d) => Some(d),
        // What an error said is the detail a reader needs; a status string is its own.
        None if c.signal.text.trim() != first_line(&c.signal.text, DETAIL) || m.kind == TerminationKind::HarnessError => {
            Some(clip(&c.signal.text, DETAIL))
        }
        None => None,
    };
    term.consumed = c.hit.consumed;
    term.limit = c.hit.limit;
    term
}

/// The run's end from its last steps when no signal says: the main agent's finish call, or a
/// reply without an action. A run whose harness offers no finish tool ends with its answer.
fn from_steps(t: &Trajectory, p: &Profile) -> Termination {
    let last = t.steps.iter().rposition(|s| s.is_main_agent() && s.role == Role::Assistant);
    let Some(i) = last else { return Termination::unknown() };
    let s = &t.steps[i];
    if let Some(c) = s.tool_calls.iter().find(|c| p.is_finish(&c.name) || finishes_by_command(c, p)) {
        let mut term = Termination::of(TerminationKind::AgentFinished);
        term.raw = Some(format!("tool:{}", c.name));
        term.source = Some("last agent step".into());
        return term;
    }
    if s.format_error.is_some() {
        return Termination::unknown();
    }
    if !s.tool_calls.is_empty() {
        return cut_mid_call(t, i).unwrap_or_else(Termination::unknown);
    }
    // A message after the last reply that the agent never answered: the run was cut.
    if t.steps[i + 1..].iter().any(|x| x.is_main_agent() && x.role == Role::User) {
        let mut term = Termination::unknown();
        term.detail = Some("the transcript ends with a message the agent did not answer".into());
        return term;
    }
    let offered = t.declared_tools.as_ref().is_some_and(|d| d.iter().any(|d| p.is_finish(&d.name)));
    let mut term = if p.final_reply_is_answer && !offered {
        let mut term = Termination::of(TerminationKind::AgentFinished);
        term.detail = Some("the final reply is the answer: no finish tool was offered".into());
        term
    } else {
        Termination::of(TerminationKind::AgentStoppedWithoutFinish)
    };
    term.source = Some("last agent step".into());
    term
}

/// The main agent's last reply (step `i`) made calls that never got a result, in a record that
/// pairs results with calls elsewhere, and nothing follows it: the log stops mid-run, with no
/// end, no answer and no error recorded (DESIGN.md: infrastructure, a truncated log). A record
/// that pairs no result at all, or never records its last call's, says nothing by a missing one.
fn cut_mid_call(t: &Trajectory, i: usize) -> Option<Termination> {
    let paired_before = t.steps[..i].iter().flat_map(|s| &s.tool_results).any(|r| r.call.is_some());
    let answered = t.steps[i..].iter().flat_map(|s| &s.tool_results).any(|r| r.call.is_some_and(|c| c.step as usize == i));
    // A recorded limit the run used up ended it (`steps_ran_out` and the like decide which).
    if [Budget::Steps, Budget::Cost, Budget::WallTime].into_iter().any(|b| limit_reached(t, b)) {
        return None;
    }
    if t.signals.last_result_unrecorded || !paired_before || answered || t.steps[i + 1..].iter().any(|s| s.role != Role::Tool) {
        return None;
    }
    let calls = t.steps[i].tool_calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
    let mut term = Termination::of(TerminationKind::Infrastructure);
    term.rule = Some(crate::model::TRUNCATED_LOG.into());
    term.source = Some("last agent step".into());
    term.detail = Some(format!(
        "the log stops at step {i}: its call ({calls}) never got a result, and no end, answer or error was recorded (a truncated log)"
    ));
    Some(term)
}

/// A shell call whose command is the harness's finish protocol (mini-swe-agent echoes its
/// submit marker).
fn finishes_by_command(c: &crate::model::ToolCall, p: &Profile) -> bool {
    p.is_shell(&c.name) && c.shell_command(&p.shell_arguments).is_some_and(|cmd| p.finish_commands.is_match(&cmd))
}

/// Limit and consumption of the budget that fired, from what the format recorded, when the
/// deciding text did not give them.
fn fill_amounts(t: &Trajectory, term: &mut Termination) {
    let Some(b) = term.budget else { return };
    if term.limit.is_none() {
        term.limit = t.signals.limits.of(b).filter(|l| *l > 0.0);
    }
    if term.consumed.is_none() {
        term.consumed = t.signals.consumed.of(b).or_else(|| match b {
            Budget::FormatErrors => {
                let n = trailing_format_errors(t);
                #[expect(clippy::cast_precision_loss, reason = "a count of replies")]
                (n > 0).then_some(n as f64)
            }
            _ => None,
        });
    }
}

/// Unusable replies in a row at the end of the run.
#[must_use]
pub fn trailing_format_errors(t: &Trajectory) -> u64 {
    t.steps.iter().rev().filter(|s| s.role == Role::Assistant).take_while(|s| s.format_error.is_some()).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Step, ToolCall};

    fn call(args: serde_json::Value) -> ToolCall {
        ToolCall { id: Some("c".into()), name: "bash".into(), arguments: args, raw_arguments: None }
    }

    /// The finish protocol given as an argv array (`["bash", "-lc", "echo COMPLETE_…"]`) ends
    /// the run as the same command given as a string does: only strings were read before.
    #[test]
    fn a_finish_command_given_as_argv_is_a_finish() {
        let rules = crate::rules::Rules::load(None).expect("built-in rules");
        let p = rules.profile_for("mini-swe-agent");
        for args in [
            serde_json::json!({"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}),
            serde_json::json!({"command": ["bash", "-lc", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]}),
        ] {
            let mut step = Step::new(Role::Assistant, "done");
            step.tool_calls.push(call(args.clone()));
            let mut t = Trajectory::new("task", "mini-swe-agent", "mini-swe-agent", 1, Vec::new());
            t.steps.push(step);
            assert_eq!(from_steps(&t, p).kind, TerminationKind::AgentFinished, "{args}");
        }
    }
}
