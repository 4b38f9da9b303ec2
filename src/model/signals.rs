//! Raw facts about how a run went, as the format wrote them: status strings, error texts,
//! harness log lines, and the limits and consumption it records. Adapters decode these; the
//! interpretation pass gives them meaning with the harness profile, so what a harness's words
//! mean lives once, in `rules/harnesses/`, not in the adapter that read them.
//!
//! # Format
//!
//! `signals` in the normalized record; every list is omitted when empty. A `field` names where
//! the text was read (`info.exit_status`, `failure_mode`, `finish_reason`, `agent.log`), so one
//! string can mean different things in different places.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::trajectory::SourceSpan;

/// The field of a log line the agent's capture recorded after the runner had taken the agent back
/// (its time is past the end of the agent phase): it cannot say how that phase ended.
pub const AFTER_AGENT: &str = "terminal_capture.after_agent";

/// Everything an adapter read about how the run ended, uninterpreted.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Signals {
    /// End-status strings (exit statuses, failure modes, finish and stop reasons, exception
    /// class names, result subtypes), most authoritative first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statuses: Vec<Signal>,
    /// Error texts that ended the run: exception messages, API error bodies, a crash's first line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Signal>,
    /// Lines of the harness's own log (a trial's `agent.log`, a capture's tail), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_lines: Vec<Signal>,
    /// Limits the run was configured with, when the format records them.
    #[serde(default, skip_serializing_if = "Amounts::is_empty")]
    pub limits: Amounts,
    /// What the run used of each, when the format records it.
    #[serde(default, skip_serializing_if = "Amounts::is_empty")]
    pub consumed: Amounts,
    /// The format never records the result of the run's last call (a log of model calls, each
    /// holding the conversation before it): a last call without a result is how every such
    /// record ends, not a sign that the log was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_result_unrecorded: bool,
}

impl Signals {
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.statuses.is_empty()
            && self.errors.is_empty()
            && self.log_lines.is_empty()
            && self.limits.is_empty()
            && self.consumed.is_empty()
            && !self.last_result_unrecorded
    }

    pub fn status(&mut self, field: impl Into<String>, text: impl Into<String>) -> &mut Signal {
        self.statuses.push(Signal::new(field, text));
        self.statuses.last_mut().expect("just pushed")
    }

    pub fn error(&mut self, field: impl Into<String>, text: impl Into<String>) -> &mut Signal {
        self.errors.push(Signal::new(field, text));
        self.errors.last_mut().expect("just pushed")
    }

    pub fn log_line(&mut self, field: impl Into<String>, text: impl Into<String>) -> &mut Signal {
        self.log_lines.push(Signal::new(field, text));
        self.log_lines.last_mut().expect("just pushed")
    }
}

/// One string read from the transcript or its run files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Signal {
    /// Where it was read: a field path or a file name.
    pub field: String,
    pub text: String,
    /// The step it belongs to, when it is tied to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<SourceSpan>,
}

impl Signal {
    #[must_use]
    pub fn new(field: impl Into<String>, text: impl Into<String>) -> Self {
        Self { field: field.into(), text: text.into(), step: None, span: None }
    }

    pub fn at_step(&mut self, step: usize) -> &mut Self {
        self.step = u32::try_from(step).ok();
        self
    }

    pub fn with_span(&mut self, span: Option<SourceSpan>) -> &mut Self {
        self.span = span;
        self
    }
}

/// An amount of each budget; absent fields were not recorded.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Amounts {
    /// Steps, turns, messages or model calls, as the harness counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<f64>,
    /// Unusable replies in a row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_errors: Option<f64>,
    /// Answer submissions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<f64>,
    /// Command timeouts in a row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_timeouts: Option<f64>,
}

impl Amounts {
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Fills the amounts this record has not recorded from another record of the same run (a
    /// native agent log beside its trial), keeping what it has.
    pub fn fill_from(&mut self, from: &Self) {
        let pairs = [
            (&mut self.steps, from.steps),
            (&mut self.cost_usd, from.cost_usd),
            (&mut self.wall_seconds, from.wall_seconds),
            (&mut self.tokens, from.tokens),
            (&mut self.output_tokens, from.output_tokens),
            (&mut self.context_tokens, from.context_tokens),
            (&mut self.format_errors, from.format_errors),
            (&mut self.attempts, from.attempts),
            (&mut self.command_timeouts, from.command_timeouts),
        ];
        for (a, b) in pairs {
            if a.is_none() {
                *a = b;
            }
        }
    }

    /// The amount of one budget.
    #[must_use]
    pub fn of(&self, b: super::Budget) -> Option<f64> {
        use super::Budget as B;
        match b {
            B::Steps => self.steps,
            B::Cost => self.cost_usd,
            B::WallTime => self.wall_seconds,
            B::Tokens => self.tokens,
            B::OutputTokens => self.output_tokens,
            B::Context => self.context_tokens,
            B::FormatErrors => self.format_errors,
            B::Attempts => self.attempts,
            B::CommandTimeout => self.command_timeouts,
            B::LoopGuard | B::Other => None,
        }
    }
}
