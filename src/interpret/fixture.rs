//! Fixtures of the interpretation tables (`rules/fixtures/harnesses/<profile>.toml`): small
//! sets of raw facts, each saying which entry must decide them (`fire`), must not (`no-fire`),
//! or should and does not yet (`todo`), like the class rules' fixtures.
//!
//! ```toml
//! profile = "mini-swe-agent"
//! [[case]]
//! name = "the step limit fired"
//! entry = "mini-limits-exceeded"
//! expect = "fire"
//! means = "budget:steps"                 # with `fire`: the termination it must give
//! statuses = [{ field = "info.exit_status", text = "LimitsExceeded" }]
//! limits = { steps = 250, cost_usd = 3.0 }
//! consumed = { steps = 250, cost_usd = 0.4 }
//! ```
//!
//! Tool-result entries read `outputs` (each a result answering a call named `call`) or
//! `error_type`; format-error entries read a reply without an action followed by `complaint`.

use serde::Deserialize;

use super::apply;
use crate::model::{Amounts, CallRef, DeclaredTool, Role, Signal, Signals, Step, ToolCall, ToolResult, Trajectory};
use crate::rules::Rules;
use crate::rules::meanings::Meaning;

pub use crate::rules::Expect;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureFile {
    pub profile: String,
    #[serde(rename = "case")]
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    pub entry: String,
    pub expect: Expect,
    #[serde(default)]
    pub means: Option<String>,
    #[serde(default)]
    pub statuses: Vec<RawSignal>,
    #[serde(default)]
    pub errors: Vec<RawSignal>,
    #[serde(default)]
    pub log_lines: Vec<RawSignal>,
    #[serde(default)]
    pub limits: Amounts,
    #[serde(default)]
    pub consumed: Amounts,
    #[serde(default)]
    pub outputs: Vec<String>,
    #[serde(default)]
    pub error_type: Option<String>,
    /// The results are errors (as the format marked them).
    #[serde(default)]
    pub is_error: bool,
    #[serde(default = "default_call")]
    pub call: String,
    #[serde(default)]
    pub complaint: Option<String>,
    #[serde(default)]
    pub declared_tools: Vec<String>,
}

fn default_call() -> String {
    "tool".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSignal {
    #[serde(default)]
    pub field: String,
    pub text: String,
}

impl Case {
    /// The case as a record of the profile's harness.
    #[must_use]
    pub fn trajectory(&self, harness: &str) -> Trajectory {
        let signals = |v: &[RawSignal]| v.iter().map(|s| Signal::new(s.field.clone(), s.text.clone())).collect::<Vec<_>>();
        let mut t = Trajectory::new(self.name.clone(), harness, "fixture", 1, Vec::new());
        t.id = format!("fixture:{}", self.name);
        t.declared_tools = (!self.declared_tools.is_empty())
            .then(|| self.declared_tools.iter().map(|n| DeclaredTool { name: n.clone(), description: None }).collect());
        t.signals = Signals {
            statuses: signals(&self.statuses),
            errors: signals(&self.errors),
            log_lines: signals(&self.log_lines),
            limits: self.limits.clone(),
            consumed: self.consumed.clone(),
            last_result_unrecorded: false,
        };
        if !self.outputs.is_empty() || self.error_type.is_some() {
            let outputs = if self.outputs.is_empty() { vec![String::new()] } else { self.outputs.clone() };
            for out in outputs {
                let mut call = Step::new(Role::Assistant, "");
                call.tool_calls.push(ToolCall {
                    id: None,
                    name: self.call.clone(),
                    arguments: serde_json::Value::Null,
                    raw_arguments: None,
                });
                t.steps.push(call);
                let mut res = ToolResult::new(out);
                res.error_type.clone_from(&self.error_type);
                res.is_error = self.is_error;
                res.call = Some(CallRef { step: u32::try_from(t.steps.len() - 1).unwrap_or(u32::MAX), call: 0 });
                let mut step = Step::new(Role::Tool, "");
                step.tool_results.push(res);
                t.steps.push(step);
            }
        }
        if let Some(c) = &self.complaint {
            t.steps.push(Step::new(Role::Assistant, "I will now fix it."));
            t.steps.push(Step::new(Role::Environment, c.clone()));
        }
        crate::model::pair_results(&mut t);
        t
    }
}

/// What one case did.
#[derive(Debug)]
pub struct CaseOutcome {
    pub name: String,
    pub entry: String,
    pub expect: Expect,
    pub fired: bool,
    /// With `fire` and `means`: the termination given, when it is another.
    pub wrong_meaning: Option<String>,
}

impl CaseOutcome {
    #[must_use]
    pub fn ok(&self) -> bool {
        self.expect.met(self.fired) && self.wrong_meaning.is_none()
    }
}

/// Runs every case of a fixture file against the profile it names.
///
/// # Errors
/// A profile that is not loaded, a case naming an entry the profile does not have, or a
/// `means` that is not a termination.
pub fn run(rules: &Rules, file: &FixtureFile) -> Result<Vec<CaseOutcome>, String> {
    let p = rules.profiles.get(&file.profile).ok_or_else(|| format!("no profile `{}`", file.profile))?;
    let harness = p.harnesses.first().cloned().unwrap_or_else(|| p.name.clone());
    file.cases
        .iter()
        .map(|case| {
            if p.meanings.get(&case.entry).is_none() {
                return Err(format!("{}: profile `{}` has no entry `{}`", case.name, p.name, case.entry));
            }
            let mut t = case.trajectory(&harness);
            let report = apply(&mut t, p);
            let fired = report.fired.contains(&case.entry);
            let wrong_meaning = match &case.means {
                Some(m) if case.expect == Expect::Fire => {
                    let want = Meaning::parse(m).ok_or_else(|| format!("{}: `{m}` is not a termination", case.name))?;
                    let got = Meaning { kind: t.termination.kind, budget: t.termination.budget };
                    (got != want).then(|| got.name())
                }
                _ => None,
            };
            Ok(CaseOutcome { name: case.name.clone(), entry: case.entry.clone(), expect: case.expect, fired, wrong_meaning })
        })
        .collect()
}
