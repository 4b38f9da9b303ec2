//! What classification says about one trajectory: its failure classes, flags, mechanics, and
//! the evidence a person can check.
//!
//! # Format
//!
//! Written one per line (JSONL) by `coroner classify`, or flattened into the columns of
//! [`Verdict::COLUMNS`] for CSV and Parquet. `primary` is absent for trajectories that did not
//! fail (passed) and for those without a verdict (outcome unknown): a missing verdict is never
//! guessed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::trajectory::{Budget, OutcomeStatus, SourceSpan, TerminationKind};

/// One trajectory's classification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    pub trajectory_id: String,
    pub task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    pub trial: u32,
    pub harness: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub outcome: OutcomeStatus,
    /// The class chosen by precedence among `classes`; absent unless the trajectory failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
    /// Every class whose rules matched, in precedence order.
    #[serde(default)]
    pub classes: Vec<String>,
    /// Sub-flags (`unverified`, `regressed`, `false_done`, `registry_suspect`, ...), sorted.
    #[serde(default)]
    pub flags: Vec<String>,
    pub mechanics: Mechanics,
    /// Which registry judged tool names: `registry:<file>`, `declared`, `profile:<harness>`,
    /// or `none` (only the harness's own rejections count).
    pub registry_source: String,
    /// For `unclassified`: what was checked and why nothing matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    /// The transcript's first source file, for `coroner show`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A fact that supports a class or a flag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    /// The rule that found it (kebab-case id from `rules/taxonomy.toml`).
    pub rule: String,
    /// The class or flag it supports.
    pub supports: String,
    /// Steps it points at (0-based indices into `steps`); empty when the evidence is the run's
    /// end status rather than a step.
    #[serde(default)]
    pub steps: Vec<u32>,
    /// A short quote: a substring of the step's text, of a call's name or arguments, or of a
    /// result's output (see `Step::evidence_texts`); for step-less evidence, of the status.
    pub excerpt: String,
    /// What the excerpt does not say: a near miss, the registry that judged, a limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_span: Option<SourceSpan>,
}

/// How the run went, in numbers: the mechanics columns of DESIGN.md.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Mechanics {
    pub steps: u32,
    pub assistant_turns: u32,
    pub tool_calls: u32,
    pub tool_calls_by_name: BTreeMap<String, u32>,
    /// Actions that changed the workspace (file writes, edits, patches), successful or not.
    pub mutations: u32,
    pub successful_mutations: u32,
    /// Test runs and checks.
    pub verifications: u32,
    pub verifications_passed: u32,
    pub verifications_failed: u32,
    /// Calls to names the registry does not know, or that the harness rejected as unknown.
    pub unknown_tool_calls: u32,
    pub tool_errors: u32,
    /// Replies that could not be turned into an action, and how many of them were followed by
    /// a working action.
    pub format_errors: u32,
    pub format_recoveries: u32,
    pub command_timeouts: u32,
    pub peak_writes: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_write_file: Option<String>,
    /// Longest run of identical consecutive actions (same tool, same arguments).
    pub longest_repeat: u32,
    pub reasoning_only_turns: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
    pub termination: TerminationKind,
    /// Which budget fired, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    pub final_message: FinalMessage,
    #[serde(default)]
    pub test_files_changed: Vec<String>,
    #[serde(default)]
    pub config_files_changed: Vec<String>,
}

/// What the agent's last reply says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinalMessage {
    ClaimsDone,
    GivesUp,
    Asks,
    #[default]
    None,
}

impl Verdict {
    /// The arm this verdict counts for when no study names arms: its own arm, else its harness
    /// (`harness/model` as the adapters set it).
    #[must_use]
    pub fn arm_or_harness(&self) -> String {
        self.arm.clone().unwrap_or_else(|| self.harness.clone())
    }

    /// Column names of the flat table (CSV, Parquet); part of coroner's documented output
    /// schema, which the notebooks read.
    pub const COLUMNS: &'static [&'static str] = &[
        "trajectory_id",
        "task_id",
        "arm",
        "trial",
        "harness",
        "model",
        "outcome",
        "primary",
        "classes",
        "flags",
        "registry_source",
        "steps",
        "assistant_turns",
        "tool_calls",
        "mutations",
        "successful_mutations",
        "verifications",
        "verifications_passed",
        "verifications_failed",
        "unknown_tool_calls",
        "tool_errors",
        "format_errors",
        "format_recoveries",
        "command_timeouts",
        "peak_writes",
        "peak_write_file",
        "longest_repeat",
        "reasoning_only_turns",
        "prompt_tokens",
        "completion_tokens",
        "reasoning_tokens",
        "cost_usd",
        "wall_seconds",
        "termination",
        "budget",
        "final_message",
        "test_files_changed",
        "config_files_changed",
        "evidence_steps",
        "reason",
        "evidence",
        "source",
    ];

    /// A failure of the infrastructure, not of the model: left out of pass rates and class
    /// shares, and counted on its own.
    #[must_use]
    pub fn is_infrastructure(&self) -> bool {
        self.primary.as_deref() == Some("infrastructure")
    }

    #[must_use]
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    #[must_use]
    pub fn is_failure(&self) -> bool {
        matches!(self.outcome, OutcomeStatus::Failed | OutcomeStatus::Partial | OutcomeStatus::Errored)
    }
}
