//! The eval-level facts every sample record of one log carries, from the log's header
//! (`header.json`, `_journal/start.json` for a run still in progress, or the top of a `.json`
//! log): task, model, Inspect's version, the solver, and the answer-submission limit the solver
//! was configured with.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::ingest::adapters::shared::common::num;

#[derive(Deserialize, Default)]
pub struct RawHeader {
    #[serde(default)]
    pub version: Option<u32>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub eval: Option<RawSpec>,
    #[serde(default)]
    pub plan: Option<RawPlan>,
}

#[derive(Deserialize, Default)]
pub struct RawSpec {
    #[serde(default)]
    task: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    solver: Option<String>,
    /// The solver's arguments when it was named on the command line (`--solver x -S k=v`).
    #[serde(default)]
    solver_args: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    packages: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize, Default)]
pub struct RawPlan {
    #[serde(default)]
    steps: Vec<RawPlanStep>,
}

#[derive(Deserialize)]
struct RawPlanStep {
    solver: String,
    /// The arguments the solver was created with (only those passed, not its defaults).
    #[serde(default)]
    params: serde_json::Map<String, Value>,
}

/// An answer-submission limit: `basic_agent(max_attempts=n, submit_name=...)` or
/// `react(attempts=n | AgentAttempts(attempts=n), submit=AgentSubmit(name=...))`.
#[derive(Debug, Clone, PartialEq)]
pub struct Submissions {
    /// `None` when the log does not say: `react` run as a solver logs no arguments.
    pub limit: Option<f64>,
    /// The tool the answers are submitted with.
    pub tool: String,
}

impl Submissions {
    /// The plan logs only the arguments passed, and `react` run as a solver none at all, so
    /// their answer tool is known but a missing limit is not invented (the answers it took say
    /// how many it allowed when it stops on a wrong one).
    fn from_step(solver: &str, p: &serde_json::Map<String, Value>) -> Option<Self> {
        let limit = num(p.get("max_attempts")).or_else(|| match p.get("attempts") {
            Some(Value::Object(a)) => num(a.get("attempts")),
            other => num(other),
        });
        if limit.is_none() && !matches!(solver, "basic_agent" | "react") {
            return None;
        }
        let tool = p
            .get("submit_name")
            .and_then(Value::as_str)
            .or_else(|| p.get("submit").and_then(|s| s.get("name")).and_then(Value::as_str))
            .unwrap_or("submit");
        Some(Self { limit, tool: tool.to_string() })
    }
}

/// What every record of one log shares.
#[derive(Debug, Clone, Default)]
pub struct LogContext {
    pub task: Option<String>,
    pub model: Option<String>,
    pub inspect_version: Option<String>,
    pub format_version: String,
    pub solver: Option<String>,
    pub status: Option<String>,
    pub submissions: Option<Submissions>,
    /// A solver's own cap on its loop (`max_steps`, `max_turns`, `max_iterations` among a plan
    /// step's arguments), which stops it without a sample limit or any other record.
    pub max_steps: Option<f64>,
    /// Facts about the header every record must carry (missing, in progress, unreadable).
    pub notes: Vec<String>,
}

impl LogContext {
    pub fn from_header(h: RawHeader, container: &str) -> Self {
        let spec = h.eval.unwrap_or_default();
        let steps = h.plan.map(|p| p.steps).unwrap_or_default();
        let solver = spec.solver.clone().or_else(|| {
            let names: Vec<&str> = steps.iter().map(|s| s.solver.as_str()).collect();
            (!names.is_empty()).then(|| names.join(" → "))
        });
        let submissions = spec
            .solver_args
            .as_ref()
            .and_then(|a| Submissions::from_step(spec.solver.as_deref().unwrap_or_default(), a))
            .or_else(|| steps.iter().find_map(|s| Submissions::from_step(&s.solver, &s.params)));
        let max_steps = steps
            .iter()
            .find_map(|s| ["max_steps", "max_turns", "max_iterations"].iter().find_map(|k| num(s.params.get(*k))))
            .filter(|n| *n > 0.0);
        Self {
            max_steps,
            task: spec.task,
            model: spec.model,
            inspect_version: spec.packages.as_ref().and_then(|p| p.get("inspect_ai")).cloned(),
            format_version: format!("inspect-{container}-v{}", h.version.unwrap_or(2)),
            solver,
            status: h.status,
            submissions,
            notes: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(plan: &str) -> LogContext {
        let h: RawHeader = serde_json::from_str(&format!(r#"{{"version": 2, "eval": {{"task": "t"}}, "plan": {plan}}}"#)).unwrap();
        LogContext::from_header(h, "json")
    }

    #[test]
    fn the_submission_limit_comes_from_the_solver_arguments() {
        let c = context(r#"{"steps": [{"solver": "basic_agent", "params": {"max_attempts": 3, "submit_name": "answer"}}]}"#);
        assert_eq!(c.submissions, Some(Submissions { limit: Some(3.0), tool: "answer".into() }));
        assert_eq!(c.solver.as_deref(), Some("basic_agent"));
        let c = context(r#"{"steps": [{"solver": "react", "params": {"attempts": {"attempts": 2}}}]}"#);
        assert_eq!(c.submissions, Some(Submissions { limit: Some(2.0), tool: "submit".into() }));
        // Defaults are not in the log: no limit is invented, but the answer tool is known.
        let none = Some(Submissions { limit: None, tool: "submit".into() });
        assert_eq!(context(r#"{"steps": [{"solver": "basic_agent", "params": {}}]}"#).submissions, none);
        assert_eq!(context(r#"{"steps": [{"solver": "react", "params": {}}]}"#).submissions, none);
        assert_eq!(context(r#"{"steps": [{"solver": "generate", "params": {}}]}"#).submissions, None);
    }
}
