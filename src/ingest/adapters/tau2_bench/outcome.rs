//! The evaluator's verdict on one simulation (`RewardInfo`).
//!
//! The reward is the product of the rewards of its `reward_basis` (database state, environment
//! assertions, communicated information, natural-language assertions, actions), and tau2 counts
//! a simulation as solved only when it is 1 (`metrics/agent_metrics.py`, `is_successful`), so
//! anything less fails. A simulation that did not end with a stop is scored 0 without
//! evaluation (`evaluator/evaluator.py`), and says so in `reward_info.info.note`.

use serde_json::Value;

use super::Run;
use super::sim::RawSim;
use crate::ingest::adapters::shared::common::test_status;
use crate::model::{Outcome, OutcomeStatus, TestResult, Trajectory};

/// `is_successful`'s tolerance around a reward of 1.
const SOLVED: f64 = 1e-6;

pub(super) fn outcome(t: &Trajectory, sim: &RawSim<'_>, run: &Run, shown: &str) -> Outcome {
    // A simulation that raised after its retries (`runner/progress.py`) was never evaluated.
    if let Some(err) = sim.info.as_ref().and_then(|i| i.get("error")).filter(|e| !e.is_null()) {
        let mut o = Outcome::new(OutcomeStatus::Errored, shown, "info.error");
        let msg = err.as_str().map_or_else(|| err.to_string(), String::from);
        o.detail = Some(format!("the simulation raised and was never evaluated: {}", first_line(&msg)));
        return o;
    }
    let Some((ri, reward)) =
        sim.reward_info.as_ref().filter(|v| !v.is_null()).and_then(|ri| Some((ri, ri.get("reward").and_then(Value::as_f64)?)))
    else {
        let mut o = Outcome::unknown();
        o.detail = Some("no reward_info: the simulation was not evaluated".into());
        return o;
    };
    let status = if reward >= 1.0 - SOLVED { OutcomeStatus::Passed } else { OutcomeStatus::Failed };
    let mut o = Outcome::new(status, shown, "reward_info.reward");
    o.reward = Some(reward);
    o.tests = tests(ri);
    o.detail = ri.pointer("/info/note").and_then(Value::as_str).map(String::from).or_else(|| expected(t, ri, run));
    o
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// One test per reward basis, then the checks behind them, in the order tau2 wrote them.
fn tests(ri: &Value) -> Vec<TestResult> {
    let mut out = Vec::new();
    if let Some(b) = ri.get("reward_breakdown").and_then(Value::as_object) {
        let mut basis: Vec<(&String, f64)> = b.iter().filter_map(|(k, v)| Some((k, v.as_f64()?))).collect();
        basis.sort_by(|a, b| a.0.cmp(b.0));
        out.extend(basis.into_iter().map(|(k, v)| TestResult::new(format!("reward: {k}"), test_status(v >= 1.0 - SOLVED))));
    }
    if let Some(db) = ri.pointer("/db_check/db_match").and_then(Value::as_bool) {
        out.push(TestResult::new("db_check", test_status(db)));
    }
    let checks = |key: &str, name: &dyn Fn(&Value) -> Option<String>, ok: &str| -> Vec<TestResult> {
        ri.get(key)
            .and_then(Value::as_array)
            .map(|list| {
                list.iter().filter_map(|c| Some(TestResult::new(name(c)?, test_status(c.get(ok).and_then(Value::as_bool)?)))).collect()
            })
            .unwrap_or_default()
    };
    out.extend(checks("action_checks", &|c| Some(format!("action: {}", c.pointer("/action/name")?.as_str()?)), "action_match"));
    out.extend(checks("env_assertions", &|c| Some(format!("env: {}", c.pointer("/env_assertion/func_name")?.as_str()?)), "met"));
    out.extend(checks("communicate_checks", &|c| Some(format!("communicate: {}", c.get("info")?.as_str()?)), "met"));
    out.extend(checks("nl_assertions", &|c| Some(format!("nl: {}", c.get("nl_assertion")?.as_str()?)), "met"));
    out
}

/// The task's expected actions, and which of them the agent never called by name (the
/// evaluator compares arguments too; its `action_checks`, when present, are the tests).
fn expected(t: &Trajectory, ri: &Value, run: &Run) -> Option<String> {
    let from_checks: Vec<(String, String)> = ri
        .get("action_checks")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(|c| {
                    let a = c.get("action")?;
                    Some((
                        a.get("name")?.as_str()?.to_string(),
                        a.get("requestor").and_then(Value::as_str).unwrap_or("assistant").to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let list = if from_checks.is_empty() { run.expected.get(&t.task_id).cloned().unwrap_or_default() } else { from_checks };
    if list.is_empty() {
        return None;
    }
    let mut made: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    let mut missing = Vec::new();
    for (name, _) in &list {
        match made.iter().position(|m| m == name) {
            Some(i) => {
                made.remove(i);
            }
            None => missing.push(name.as_str()),
        }
    }
    let names: Vec<String> = list.iter().map(|(n, who)| if who == "user" { format!("{n} (by the user)") } else { n.clone() }).collect();
    let mut d = format!("expected actions ({}): {}", list.len(), names.join(", "));
    if missing.is_empty() {
        d.push_str("; the agent called each by name");
    } else {
        d.push_str(&format!("; never called: {}", missing.join(", ")));
    }
    Some(d)
}
