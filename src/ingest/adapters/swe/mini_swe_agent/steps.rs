//! The state both generations share while messages become steps: the shared step builder, the
//! calls of the last reply still waiting for their observations, and the submission when the
//! messages show it.

use std::ops::Range;

use super::raw::{RawChoice, RawMsg, RawResponse, message_time, tokens_of};
use super::v1::Templates;
use crate::ingest::adapters::shared::build::{StepBuilder, to_u32};
use crate::ingest::adapters::swe::common::complaint_summary;
use crate::ingest::source::Source;
use crate::model::{CallRef, Reasoning, Role, Step, ToolCall, ToolResult};

/// The first line of a command's output that makes the harness end the run with a submission
/// (its submit protocol); v1 also accepted the older marker.
const SUBMIT_MARKERS: &[&str] = &["COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT"];

/// Whether `command` prints the submit marker.
pub(crate) fn submits(command: &str) -> bool {
    SUBMIT_MARKERS.iter().any(|m| command.contains(m))
}

pub(super) fn bash_call(id: Option<String>, command: &str) -> ToolCall {
    ToolCall { id, name: "bash".into(), arguments: serde_json::json!({ "command": command }), raw_arguments: None }
}

/// A call the model made that the harness has not answered yet.
pub(super) struct PendingCall {
    pub call: usize,
    pub id: Option<String>,
    pub command: String,
    pub answered: bool,
}

pub(super) struct Pending {
    pub step: usize,
    pub calls: Vec<PendingCall>,
}

/// Turns messages into steps, one message at a time.
pub(super) struct Builder<'b> {
    pub src: &'b Source,
    pub steps: StepBuilder,
    pub tpl: &'b Templates,
    /// The last reply's actions, until their observations arrive.
    pub pending: Option<Pending>,
    /// v1: the last reply had no single action; the next user message is the complaint.
    pub unparsed: Option<usize>,
    pub seen_assistant: bool,
    /// The output of the submitting command, when the messages show it.
    pub submitted: Option<String>,
    pub noted_lost_replies: bool,
}

impl<'b> Builder<'b> {
    pub fn new(src: &'b Source, tpl: &'b Templates) -> Self {
        Self {
            src,
            steps: StepBuilder::new(),
            tpl,
            pending: None,
            unparsed: None,
            seen_assistant: false,
            submitted: None,
            noted_lost_replies: false,
        }
    }

    /// Appends a step read from the message at bytes `at`.
    pub fn push(&mut self, at: &Range<usize>, step: Step) -> usize {
        let span = Some(self.src.span(0, at.start, at.len()));
        self.steps.push(step, span, None)
    }

    pub fn push_text(&mut self, at: &Range<usize>, role: Role, text: String, m: &RawMsg<'_>) -> usize {
        let mut step = Step::new(role, text);
        step.timestamp = message_time(m).map(|t| t.to_string());
        self.push(at, step)
    }

    /// A step holding one result.
    pub fn push_result(&mut self, at: &Range<usize>, r: ToolResult, m: Option<&RawMsg<'_>>) -> usize {
        let mut step = Step::new(Role::Tool, String::new());
        step.timestamp = m.and_then(message_time).map(|t| t.to_string());
        step.tool_results.push(r);
        self.push(at, step)
    }

    pub fn mark_format_error(&mut self, ix: usize, complaint: &str) {
        if let Some(s) = self.steps.steps.get_mut(ix) {
            s.format_error = Some(complaint_summary(complaint));
        }
    }

    /// An assistant step with what every generation records: reasoning, tokens, cost, time.
    pub fn assistant(m: &RawMsg<'_>, text: String, response: Option<&RawResponse<'_>>) -> Step {
        let mut step = Step::new(Role::Assistant, text);
        step.timestamp = message_time(m).map(|t| t.to_string());
        let reasoning = m
            .reasoning_content
            .clone()
            .or_else(|| m.reasoning.as_str().map(ToString::to_string))
            .or_else(|| response.and_then(|r| r.choices.first()).and_then(RawChoice::reasoning))
            .filter(|r| !r.trim().is_empty());
        step.tokens = response.and_then(|r| tokens_of(&r.usage));
        let reasoning_tokens = step.tokens.as_ref().and_then(|t| t.reasoning).filter(|n| *n > 0);
        if reasoning.is_some() || reasoning_tokens.is_some() {
            step.reasoning = Some(Reasoning { text: reasoning, tokens: reasoning_tokens });
        }
        step.cost_usd = m.extra.as_ref().and_then(|e| e.cost);
        step
    }

    /// A result answering the `k`-th pending call.
    pub fn result_for(p: &mut Pending, k: usize, output: String) -> ToolResult {
        let mut r = ToolResult::new(output);
        r.name = Some("bash".into());
        if let Some(c) = p.calls.get_mut(k) {
            c.answered = true;
            r.call_id.clone_from(&c.id);
            r.call = Some(CallRef { step: to_u32(p.step), call: to_u32(c.call) });
        }
        r
    }

    /// Notes what happened to a command, with the first line of it.
    pub fn note_command(&mut self, what: &str, at: usize, command: &str) {
        let cmd: String = command.lines().next().unwrap_or("").chars().take(120).collect();
        self.steps.note(format!("command {what} at step {at}: {cmd}"));
    }
}
