//! Rule fixtures: small trajectories written in TOML beside the rules, each saying whether a
//! rule must fire on it, must not, or is a known miss (`todo`). The same reader serves the
//! test suite and users checking their own rules.
//!
//! ```toml
//! rule = "resign-silent"
//! [[case]]
//! name = "stops after a thought"
//! expect = "fire"            # fire | no-fire | todo
//! harness = "mini-swe-agent" # optional
//! outcome = "failed"         # passed | failed | partial | errored | unknown
//! termination = "agent_stopped_without_finish"   # or budget:steps, infrastructure, ...
//! tests = [{ name = "test_outputs.py::test_a", status = "failed" }]  # optional: the verifier's
//! [[case.step]]
//! role = "assistant"
//! text = "Let me think about this differently."
//! calls = [{ name = "bash", args = { command = "ls" } }]
//! [[case.step]]
//! role = "tool"
//! results = [{ output = "a.py", exit_code = 0 }]
//! ```

use serde::Deserialize;

use super::engine::{Classifier, Options};
use crate::model::{
    Budget, DeclaredTool, Outcome, OutcomeStatus, Role, Step, Termination, TerminationKind, ToolResult, Trajectory, pair_results,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureFile {
    pub rule: String,
    #[serde(rename = "case")]
    pub cases: Vec<Case>,
}

pub use crate::rules::Expect;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    pub expect: Expect,
    #[serde(default = "generic")]
    pub harness: String,
    #[serde(default = "failed")]
    pub outcome: String,
    #[serde(default)]
    pub termination: Option<String>,
    #[serde(default)]
    pub raw: Option<String>,
    /// The agent said it did not complete the task (`task_completed: false`, a forfeit).
    #[serde(default)]
    pub gave_up: bool,
    #[serde(default)]
    pub submission: Option<String>,
    #[serde(default)]
    pub declared_tools: Option<Vec<String>>,
    /// Budgets the case runs under, as a study file would give them.
    #[serde(default)]
    pub step_limit: Option<u32>,
    #[serde(default)]
    pub time_limit_seconds: Option<f64>,
    #[serde(default)]
    pub cost_limit_usd: Option<f64>,
    #[serde(default)]
    pub token_limit: Option<u64>,
    /// What the run consumed (`usage`), for the budget cases.
    #[serde(default)]
    pub wall_seconds: Option<f64>,
    #[serde(default)]
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub tokens: Option<[u64; 2]>,
    /// The verifier's per-test results, `{ name = "...", status = "failed" }`.
    #[serde(default)]
    pub tests: Vec<crate::model::TestResult>,
    #[serde(default, rename = "step")]
    pub steps: Vec<CaseStep>,
}

fn empty_table() -> toml::Value {
    toml::Value::Table(toml::map::Map::new())
}

fn generic() -> String {
    "generic".into()
}

fn failed() -> String {
    "failed".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseStep {
    pub role: String,
    /// The acting agent of a multi-agent transcript (Magentic-One's `WebSurfer`).
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub format_error: Option<String>,
    #[serde(default)]
    pub calls: Vec<CaseCall>,
    #[serde(default)]
    pub results: Vec<CaseResult>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseCall {
    pub name: String,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default = "empty_table")]
    pub args: toml::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseResult {
    #[serde(default)]
    pub output: String,
    #[serde(default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub unknown_tool: Option<String>,
}

impl Case {
    /// The case as a trajectory.
    ///
    /// # Errors
    /// An unknown role, outcome or termination.
    pub fn trajectory(&self) -> Result<Trajectory, String> {
        let mut t = crate::model::Trajectory::new(self.name.clone(), self.harness.clone(), "fixture", 1, Vec::new());
        t.id = format!("fixture:{}", self.name);
        t.outcome = match self.outcome.as_str() {
            "passed" => Outcome::from_reward(1.0, "fixture", "outcome"),
            "failed" => Outcome::from_reward(0.0, "fixture", "outcome"),
            "partial" => Outcome::from_reward(0.5, "fixture", "outcome"),
            "errored" => Outcome::new(OutcomeStatus::Errored, "fixture", "outcome"),
            "unknown" => Outcome::unknown(),
            o => return Err(format!("unknown outcome `{o}`")),
        };
        t.termination = match self.termination.as_deref() {
            None | Some("unknown") => Termination::unknown(),
            Some("agent_finished") => Termination::of(TerminationKind::AgentFinished),
            Some("agent_stopped_without_finish") => Termination::of(TerminationKind::AgentStoppedWithoutFinish),
            Some("infrastructure") => Termination::of(TerminationKind::Infrastructure),
            Some("harness_error") => Termination::of(TerminationKind::HarnessError),
            Some(b) => {
                let name = b.strip_prefix("budget:").ok_or_else(|| format!("unknown termination `{b}`"))?;
                let budget: Budget = serde_json::from_value(serde_json::Value::String(name.into())).map_err(|e| e.to_string())?;
                Termination::budget(budget, crate::model::Enforcer::Harness)
            }
        };
        t.outcome.tests.clone_from(&self.tests);
        t.termination.raw = self.raw.clone();
        t.termination.gave_up = self.gave_up;
        t.submission = self.submission.clone();
        t.usage.wall_seconds = self.wall_seconds;
        t.usage.cost_usd = self.cost_usd;
        if let Some([p, c]) = self.tokens {
            (t.usage.prompt_tokens, t.usage.completion_tokens) = (Some(p), Some(c));
        }
        t.declared_tools =
            self.declared_tools.as_ref().map(|d| d.iter().map(|n| DeclaredTool { name: n.clone(), description: None }).collect());
        for s in &self.steps {
            let role = match s.role.as_str() {
                "system" => Role::System,
                "user" => Role::User,
                "assistant" => Role::Assistant,
                "tool" => Role::Tool,
                "environment" => Role::Environment,
                r => return Err(format!("unknown role `{r}`")),
            };
            let mut step = Step::new(role, s.text.clone());
            step.format_error = s.format_error.clone();
            step.agent = s.agent.clone();
            for c in &s.calls {
                let args = serde_json::to_value(&c.args).map_err(|e| e.to_string())?;
                step.tool_calls.push(crate::model::ToolCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: args,
                    raw_arguments: None,
                });
            }
            for r in &s.results {
                let mut res = ToolResult::new(r.output.clone());
                res.call_id = r.call_id.clone();
                res.exit_code = r.exit_code;
                res.is_error = r.is_error;
                res.unknown_tool = r.unknown_tool.clone();
                step.tool_results.push(res);
            }
            t.steps.push(step);
        }
        pair_results(&mut t);
        Ok(t)
    }
}

/// What one case did.
#[derive(Debug)]
pub struct CaseOutcome {
    pub name: String,
    pub expect: Expect,
    pub fired: bool,
}

impl CaseOutcome {
    /// Whether the rule behaved as the case says (a `todo` is satisfied by not firing).
    #[must_use]
    pub fn ok(&self) -> bool {
        self.expect.met(self.fired)
    }
}

/// Runs every case of a fixture file.
///
/// # Errors
/// A case that does not build.
pub fn run(c: &Classifier, file: &FixtureFile) -> Result<Vec<CaseOutcome>, String> {
    file.cases
        .iter()
        .map(|case| {
            let t = case.trajectory().map_err(|e| format!("{}: {e}", case.name))?;
            let limits = Options {
                step_limit: case.step_limit,
                time_limit_seconds: case.time_limit_seconds,
                cost_limit_usd: case.cost_limit_usd,
                token_limit: case.token_limit,
            };
            let v = if limits == Options::default() {
                c.classify(&t)
            } else {
                Classifier::new(c.rules.clone(), c.registries.clone(), limits).classify(&t)
            };
            Ok(CaseOutcome { name: case.name.clone(), expect: case.expect, fired: v.evidence.iter().any(|e| e.rule == file.rule) })
        })
        .collect()
}
