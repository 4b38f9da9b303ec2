//! talos (a Rust agent harness) run records: its SQLite store and the one-line JSON summary
//! `talos run` prints.
//!
//! The store (`harness::store::SqliteRunStore`) has two tables: `events(run_id, seq, ts, kind,
//! payload)`, the append-only log, and `runs(run_id, schema_version, state_blob, updated_at)`,
//! the latest `RunRecord` snapshot. Event payloads are serde's externally tagged `Event`:
//! `ModelCall {model, prompt_tokens, completion_tokens}` after each model turn,
//! `ToolCallStarted {name, args, call_id}` / `ToolCallResult {name, is_error, summary}` around
//! every call except `finish`, `BudgetTick {consumed}`, `PhaseTransition`, and
//! `DispositionSet {disposition}` at the end. The snapshot's `messages` hold the model's text,
//! its `finish` calls and full tool outputs, but a fresh-context restart drops them; the
//! record then comes from the log alone. One record per `run_id` (`{task_id}:{attempt_n}`).
//!
//! The summary (`RunSummary` in `crates/talos/src/main.rs`) is `{outcome, disposition, run_id,
//! record_path, iterations}`, `outcome` being the loop's exit: `Finished`,
//! `StoppedWithoutFinish`, `MaxIterations`, `BudgetExhausted` (the wall-clock budget) or
//! `BackendError`. A summary beside its store refines the store's record; alone it gives a
//! record without steps.
//!
//! The adapters decode only. How the run ended is left as signals: a failure's summary, the
//! loop's exit, the disposition's variant or failure mode (most specific first), with the
//! budgets' limits and consumption; `rules/harnesses/talos.toml` says what they mean.

mod steps;
mod store;
mod summary;

use serde_json::Value;

use crate::ingest::adapters::shared::common::{test_status, uint};
use crate::model::{Amounts, Outcome, OutcomeStatus, TestResult, Trajectory};

pub use store::TalosStore;
pub use summary::TalosSummary;

const HARNESS: &str = "talos";

/// `{task_id}:{attempt_n}` → (task, 0-based trial).
fn split_run_id(run_id: &str) -> (String, u32) {
    match run_id.rsplit_once(':') {
        Some((task, n)) => match n.parse::<u32>() {
            Ok(n) => (task.to_string(), n.saturating_sub(1)),
            Err(_) => (run_id.to_string(), 0),
        },
        None => (run_id.to_string(), 0),
    }
}

/// The variant and body of an externally tagged serde enum value (`{"Done": {...}}`), or of a
/// unit variant written as a string (`"NoChecksConfigured"`).
fn tagged(v: &Value) -> Option<(&str, &Value)> {
    match v {
        Value::String(s) => Some((s.as_str(), &Value::Null)),
        Value::Object(o) if o.len() == 1 => o.iter().next().map(|(k, v)| (k.as_str(), v)),
        _ => None,
    }
}

/// How the run ended, as talos recorded it: `outcome` is the summary's loop exit, `disposition`
/// the terminal `Disposition` with the field it was read from. A failure's summary is the most
/// specific (talos pins the iteration-cap and wall-clock literals that tell its two budgets
/// apart, and writes backend errors there); the loop's exit tells more than the disposition of
/// a budget, less than it of a finish.
fn end_signals(t: &mut Trajectory, outcome: Option<&str>, disposition: Option<(&str, &Value)>) {
    let d = disposition.and_then(|(at, v)| Some((at, tagged(v)?)));
    if let Some((at, ("Failed", body))) = d
        && let Some(summary) = body.get("summary").and_then(Value::as_str)
    {
        t.signals.status(format!("{at}.Failed.summary"), summary);
    }
    if let Some(o) = outcome {
        t.signals.status("summary.outcome", o);
    }
    match d {
        Some((at, ("Failed", body))) => {
            if let Some(mode) = body.get("mode").and_then(Value::as_str) {
                t.signals.status(format!("{at}.Failed.mode"), mode);
            }
        }
        Some((at, (variant, _))) => {
            t.signals.status(at, variant);
        }
        None => {}
    }
}

/// Budget amounts as talos writes them (`BudgetConsumed`, `BudgetLimits`): iterations, tokens,
/// micro-dollars, wall-clock seconds. A zero is a limit not set, or a spend never ticked.
fn amounts(v: &Value) -> Amounts {
    #[expect(clippy::cast_precision_loss, reason = "counts, tokens and micro-dollars of one run")]
    let n = |k: &str, scale: f64| uint(v.get(k)).filter(|n| *n > 0).map(|n| n as f64 / scale);
    Amounts {
        steps: n("iterations", 1.0),
        tokens: n("tokens", 1.0),
        cost_usd: n("cost_micros", 1e6),
        wall_seconds: n("wall_clock_secs", 1.0),
        ..Amounts::default()
    }
}

/// The harness's own verdict: a `Done` it verified by running the configured checks passes;
/// `Blocked` and `Failed` say the task was not done; a `Done` accepted without checks is a
/// claim nobody verified.
fn outcome_for(disposition: Option<&Value>, gates: Option<&Value>, shown: &str) -> Outcome {
    let Some((variant, body)) = disposition.and_then(tagged) else { return Outcome::unknown() };
    let mut o = match variant {
        "Done" => match body.get("verification").and_then(tagged) {
            Some(("Checks", report)) => {
                let passed = report.get("passed").and_then(Value::as_bool).unwrap_or(false);
                let mut o = Outcome::from_reward(if passed { 1.0 } else { 0.0 }, shown, "disposition.Done.verification.Checks.passed");
                o.detail = Some("the harness re-ran its checks and accepted finish(done)".into());
                o
            }
            _ => {
                let mut o = Outcome::new(OutcomeStatus::Unknown, shown, "disposition.Done.verification");
                o.detail = Some("finish(done) accepted without checks (NoChecksConfigured): nothing verified it".into());
                o
            }
        },
        "Blocked" | "Failed" => {
            let mut o = Outcome::from_reward(0.0, shown, format!("disposition.{variant}"));
            o.detail = body.get("summary").or_else(|| body.get("decision_needed")).and_then(Value::as_str).map(ToString::to_string);
            o
        }
        _ => return Outcome::unknown(),
    };
    for (name, g) in gates.and_then(|g| g.get("gates")).and_then(Value::as_object).into_iter().flatten() {
        let ok = g.get("passed").and_then(Value::as_bool).unwrap_or(false);
        o.tests.push(TestResult::new(name.clone(), test_status(ok)));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn run_ids_split_into_task_and_trial() {
        assert_eq!(split_run_id("task-42:1"), ("task-42".into(), 0));
        assert_eq!(split_run_id("a:b:3"), ("a:b".into(), 2));
        assert_eq!(split_run_id("talos-run"), ("talos-run".into(), 0));
    }

    #[test]
    fn a_failure_says_its_summary_then_the_loop_exit_then_its_mode() {
        let mut t = Trajectory::new("t", HARNESS, "test", 1, Vec::new());
        let d = json!({"Failed": {"mode": "BudgetExhausted", "summary": "iteration cap reached before the agent finished"}});
        end_signals(&mut t, Some("MaxIterations"), Some(("summary.disposition", &d)));
        let got: Vec<(&str, &str)> = t.signals.statuses.iter().map(|s| (s.field.as_str(), s.text.as_str())).collect();
        assert_eq!(
            got,
            [
                ("summary.disposition.Failed.summary", "iteration cap reached before the agent finished"),
                ("summary.outcome", "MaxIterations"),
                ("summary.disposition.Failed.mode", "BudgetExhausted"),
            ]
        );
        let mut done = Trajectory::new("t", HARNESS, "test", 1, Vec::new());
        end_signals(&mut done, None, Some(("events.DispositionSet.disposition", &json!({"Done": {"summary": "ok"}}))));
        assert_eq!(done.signals.statuses[0].text, "Done");
        let a = amounts(&json!({"iterations": 6, "tokens": 0, "cost_micros": 1500000, "wall_clock_secs": 0}));
        assert_eq!((a.steps, a.tokens, a.cost_usd, a.wall_seconds), (Some(6.0), None, Some(1.5), None));
    }
}
