//! Claude Code lines into steps: streamed messages joined by id, tool results with the exit
//! codes the harness recorded, harness lines as environment steps, usage per message; and the
//! raw facts the main line's last dialogue step gives about how the run ended.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::Value;

use super::tree::{Entry, RawContent};
use crate::ingest::adapters::chat::anthropic::{self as chat_anthropic, first_line};
use crate::ingest::adapters::shared::build::StepBuilder;
use crate::ingest::adapters::shared::common::content_text;
use crate::model::{Role, Step, Tokens, ToolResult, Trajectory};

/// Turns entries into steps.
#[derive(Default)]
pub(super) struct Builder {
    pub(super) sb: StepBuilder,
    /// Steps made from `system` lines and init events: harness bookkeeping, not the dialogue.
    pub(super) bookkeeping: Vec<bool>,
    /// (agent, message id) → step.
    by_msg: HashMap<(Option<String>, String), usize>,
    /// Per message id, the largest count seen for each field (a streamed message repeats its
    /// usage on every line, growing).
    pub(super) usage: BTreeMap<String, Tokens>,
    stop_reasons: HashMap<String, String>,
    /// Sub-agent ids named by a result (`toolUseResult.agentId`), with the step holding it.
    pub(super) agent_links: Vec<(String, usize)>,
    /// Messages Claude Code wrote itself for a failed API call (`isApiErrorMessage`).
    api_error_steps: HashSet<usize>,
    pub(super) models: BTreeMap<String, usize>,
    versions: BTreeSet<String>,
    /// The first working directory a line names.
    cwd: Option<String>,
    pub(super) session_ids: BTreeSet<String>,
    pub(super) cost: Option<f64>,
}

impl Builder {
    fn push(&mut self, step: Step, bookkeeping: bool) -> usize {
        self.bookkeeping.push(bookkeeping);
        self.sb.push(step, None, None)
    }

    pub(super) fn entry(&mut self, e: &Entry, agent: Option<&str>) {
        let raw = &e.raw;
        if let Some(ts) = &raw.timestamp {
            self.sb.saw_time(ts);
        }
        if let Some(v) = &raw.version {
            self.versions.insert(v.clone());
        }
        if let Some(s) = &raw.session_id {
            self.session_ids.insert(s.clone());
        }
        if self.cwd.is_none() {
            self.cwd.clone_from(&raw.cwd);
        }
        if let Some(c) = raw.cost {
            self.cost = Some(self.cost.unwrap_or(0.0) + c);
        }
        let agent = agent.map(ToString::to_string).or_else(|| raw.parent_tool_use_id.as_ref().map(|p| format!("sidechain:{p}")));
        match e.kind() {
            "assistant" => self.assistant(e, agent),
            "user" => self.user(e, agent),
            "system" => self.system(e, agent),
            "summary" => {
                if let Some(s) = &raw.summary {
                    self.sb.note(format!("summary line {}: {}", e.line, s.chars().take(200).collect::<String>()));
                }
            }
            other => self.sb.ignore(if other.is_empty() { "untyped" } else { other }),
        }
    }

    fn assistant(&mut self, e: &Entry, agent: Option<String>) {
        let Some(msg) = &e.raw.message else { return };
        let content = msg.content.as_ref().map_or(Value::Null, RawContent::to_value);
        let key = msg.id.clone().map(|id| (agent.clone(), id));
        let ix = match key.as_ref().and_then(|k| self.by_msg.get(k)) {
            Some(&i) => i,
            None => {
                let mut step = Step::new(Role::Assistant, "");
                step.agent.clone_from(&agent);
                step.timestamp.clone_from(&e.raw.timestamp);
                step.source_span = Some(e.span);
                let i = self.push(step, false);
                if let Some(k) = key {
                    self.by_msg.insert(k, i);
                }
                i
            }
        };
        chat_anthropic::add_assistant_content(&mut self.sb.steps[ix], &content);
        let synthetic = msg.model.as_deref() == Some("<synthetic>");
        if e.raw.api_error == Some(true) || (synthetic && self.sb.steps[ix].text.starts_with("API Error")) {
            self.api_error_steps.insert(ix);
        }
        if let Some(m) = msg.model.as_ref().filter(|_| !synthetic) {
            *self.models.entry(m.clone()).or_default() += 1;
        }
        if let (Some(id), Some(stop)) = (&msg.id, &msg.stop_reason) {
            self.stop_reasons.insert(id.clone(), stop.clone());
        }
        // A synthetic message (an API error Claude Code wrote itself) made no model call.
        if let (Some(id), Some(t), false) = (&msg.id, msg.usage.as_ref().and_then(chat_anthropic::tokens), synthetic) {
            let cur = self.usage.entry(id.clone()).or_default();
            for (mine, new) in [(&mut cur.prompt, t.prompt), (&mut cur.completion, t.completion), (&mut cur.cached, t.cached)] {
                if let Some(n) = new {
                    *mine = Some(mine.unwrap_or(0).max(n));
                }
            }
        }
    }

    fn user(&mut self, e: &Entry, agent: Option<String>) {
        let Some(msg) = &e.raw.message else { return };
        let meta = e.raw.meta == Some(true) || e.raw.compact_summary == Some(true);
        let content = msg.content.as_ref().map_or(Value::Null, RawContent::to_value);
        let uc = chat_anthropic::user_content(&content);
        let step_of = |b: &mut Self, mut step: Step| {
            step.agent.clone_from(&agent);
            step.timestamp.clone_from(&e.raw.timestamp);
            step.source_span = Some(e.span);
            b.push(step, false)
        };
        if !uc.results.is_empty() {
            let mut results = uc.results;
            let extra = e.raw.tool_use_result.as_ref();
            for r in &mut results {
                unwrap_tool_use_error(r);
                r.exit_code = extra.and_then(exit_code_of).or_else(|| r.is_error.then(|| exit_code_in(&r.output)).flatten());
            }
            if extra.and_then(|x| x.get("interrupted")).and_then(Value::as_bool) == Some(true) {
                self.sb.note(format!("line {}: the command was interrupted", e.line));
            }
            let mut step = Step::new(Role::Tool, "");
            step.tool_results = results;
            let ix = step_of(self, step);
            if let Some(a) = extra.and_then(|x| x.get("agentId")).and_then(Value::as_str) {
                self.agent_links.push((a.to_string(), ix));
            }
        }
        if !uc.text.is_empty() {
            let role = if meta { Role::Environment } else { Role::User };
            step_of(self, Step::new(role, uc.text));
        }
        if e.raw.compact_summary == Some(true) {
            self.sb.note(format!(
                "line {}: the conversation was compacted; the summary the agent continued from is an environment step",
                e.line
            ));
        }
    }

    fn system(&mut self, e: &Entry, agent: Option<String>) {
        let raw = &e.raw;
        let sub = raw.subtype.as_deref().unwrap_or_default();
        if sub == "init" {
            return;
        }
        let mut text = raw.content.as_ref().map(content_text).unwrap_or_default();
        if sub == "compact_boundary" {
            let trigger = raw.compact.as_ref().and_then(|c| c.get("trigger")).and_then(Value::as_str).unwrap_or("?");
            let pre = raw.compact.as_ref().and_then(|c| c.get("preTokens").or_else(|| c.get("pre_tokens"))).and_then(Value::as_u64);
            self.sb.note(format!(
                "line {}: conversation compacted (trigger {trigger}{})",
                e.line,
                pre.map(|p| format!(", {p} tokens before")).unwrap_or_default()
            ));
            if text.is_empty() {
                text = "Conversation compacted".into();
            }
        }
        if sub == "api_error" {
            let err = raw.error.as_ref().map(|x| x.to_string()).unwrap_or_default();
            text = format!("API error (retried): {}", if text.is_empty() { err } else { text });
        }
        if text.is_empty() {
            self.sb.ignore(&format!("system/{sub}"));
            return;
        }
        let mut step = Step::new(Role::Environment, text);
        step.agent = agent;
        step.timestamp.clone_from(&raw.timestamp);
        step.source_span = Some(e.span);
        self.push(step, true);
    }

    /// Per-step tokens once every line of every message is in.
    pub(super) fn settle_tokens(&mut self) {
        for (k, &ix) in &self.by_msg {
            if let Some(t) = self.usage.get(&k.1) {
                self.sb.steps[ix].tokens = Some(t.clone());
            }
        }
    }

    fn last_stop_reason(&self, step: usize) -> Option<&str> {
        self.by_msg.iter().filter(|(_, i)| **i == step).find_map(|((_, id), _)| self.stop_reasons.get(id)).map(String::as_str)
    }

    /// What the main line's last dialogue step says about how the run ended: an API error
    /// Claude Code wrote as the last message (an error), the last reply's stop reason, or the
    /// first line of a user message nothing answered, such as an interrupt (statuses). A run
    /// that ends otherwise (a call without a result, a result before any reply) says it by its
    /// shape alone. Signals carry spans, not step indexes: sub-agent steps go in later.
    pub(super) fn end_signals(&self, t: &mut Trajectory) {
        let steps = &self.sb.steps;
        let last = steps.iter().enumerate().rev().find(|(i, s)| s.agent.is_none() && !self.bookkeeping[*i]);
        let Some((i, s)) = last else { return };
        match s.role {
            Role::Assistant if self.api_error_steps.contains(&i) => {
                let text = api_error_text(&s.text);
                // A stream's result repeats the error as its text.
                if !t.signals.errors.iter().any(|e| e.text == text) {
                    t.signals.error("isApiErrorMessage", text).with_span(s.source_span);
                }
            }
            Role::Assistant => {
                if let Some(stop) = self.last_stop_reason(i) {
                    t.signals.status("message.stop_reason", stop).with_span(s.source_span);
                }
            }
            Role::User => {
                t.signals.status("message.content", first_line(&s.text)).with_span(s.source_span);
            }
            _ => {}
        }
    }

    /// Fills usage, model, version, session, steps, notes and time bounds.
    pub(super) fn finish(self, t: &mut Trajectory) {
        let mut u = t.usage.clone();
        for k in self.usage.values() {
            for (total, n) in [(&mut u.prompt_tokens, k.prompt), (&mut u.completion_tokens, k.completion), (&mut u.cached_tokens, k.cached)]
            {
                if let Some(n) = n {
                    *total = Some(total.unwrap_or(0) + n);
                }
            }
        }
        if !self.usage.is_empty() {
            u.api_calls = Some(self.usage.len() as u64);
        }
        if u.cost_usd.is_none() {
            u.cost_usd = self.cost;
        }
        t.usage = u;
        if t.model.is_none() {
            // The model that wrote most messages; ties go to the name that sorts first.
            t.model = self.models.iter().max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0))).map(|(m, _)| m.clone());
        }
        if self.models.len() > 1 {
            t.notes.push(format!("messages from several models: {}", self.models.keys().cloned().collect::<Vec<_>>().join(", ")));
        }
        if t.harness_version.is_none() {
            t.harness_version = self.versions.iter().next_back().cloned();
        }
        if self.versions.len() > 1 {
            t.notes
                .push(format!("lines from several Claude Code versions: {}", self.versions.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
        if t.session_id.is_none() {
            t.session_id = self.session_ids.iter().next().cloned();
            t.workdir = self.cwd;
        }
        self.sb.finish(t);
    }
}

/// Claude Code wraps its own refusal of a call (an unknown tool, bad input, a denied
/// permission) in `<tool_use_error>`: the text inside is the output, the tag its error type.
fn unwrap_tool_use_error(r: &mut ToolResult) {
    let text = r.output.trim();
    if let Some(inner) = text.strip_prefix("<tool_use_error>") {
        r.output = inner.strip_suffix("</tool_use_error>").unwrap_or(inner).trim().to_string();
        r.error_type = Some("tool_use_error".into());
    }
}

/// An exit code the harness recorded beside a result (`toolUseResult`), when it did.
fn exit_code_of(extra: &Value) -> Option<i64> {
    ["exitCode", "exit_code", "returnCode", "code"].iter().find_map(|k| extra.get(*k).and_then(Value::as_i64))
}

/// `Exit code 1` at the start of a failed Bash result.
fn exit_code_in(output: &str) -> Option<i64> {
    let rest = output.trim_start().trim_start_matches("Error: ").strip_prefix("Exit code ")?;
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The text of an API error Claude Code wrote as a message, `API Error: 400 {"type":"error",...}`,
/// with the JSON body on a line of its own: the first line is the status, the rest the detail.
pub(super) fn api_error_text(text: &str) -> String {
    let text = text.trim();
    match text.split_once(" {") {
        Some((head, body)) if serde_json::from_str::<Value>(&format!("{{{body}")).is_ok() => format!("{head}\n{{{body}"),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_from_failed_bash_results() {
        assert_eq!(exit_code_in("Exit code 1\nOn branch master"), Some(1));
        assert_eq!(exit_code_in("Error: Exit code 127\nnot found"), Some(127));
        assert_eq!(exit_code_in("File not found"), None);
    }

    #[test]
    fn an_api_error_puts_its_json_body_under_the_status() {
        let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}"#;
        assert_eq!(api_error_text(&format!("API Error: 400 {body}")), format!("API Error: 400\n{body}"));
        assert_eq!(api_error_text("API Error: Connection error."), "API Error: Connection error.");
    }

    #[test]
    fn a_refusal_loses_its_wrapper_and_keeps_its_kind() {
        let mut r = ToolResult::new("<tool_use_error>Error: No such tool available: WebBrowse</tool_use_error>");
        unwrap_tool_use_error(&mut r);
        assert_eq!((r.output.as_str(), r.error_type.as_deref()), ("Error: No such tool available: WebBrowse", Some("tool_use_error")));
    }
}
