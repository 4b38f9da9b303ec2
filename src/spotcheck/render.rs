//! One trajectory for a person to read (`coroner show`): its steps, calls with their
//! arguments, results folded when long, reasoning collapsed, and the steps its verdict rests
//! on marked in the margin with the rule that fired.
//!
//! Everything quoted from the transcript goes through [`crate::report::sanitize`] (terminal
//! text, or Markdown escapes and fenced blocks), so a hostile transcript cannot drive the
//! reader's terminal or inject markup. Colour, when asked for, is added by this module around
//! sanitized text and is the only escape sequence in the output.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::model::{Evidence, Role, Step, ToolCall, ToolResult, Trajectory, Verdict};
use crate::report::sanitize;

/// Output format of `coroner show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Markdown,
}

/// How to show a trajectory.
#[derive(Debug, Clone, Default)]
pub struct ShowOptions {
    pub format: Format,
    /// ANSI colour for the margin marks (text format only; the CLI sets it on a terminal).
    pub color: bool,
    /// Show this step in full with its neighbours, instead of every step folded.
    pub step: Option<u32>,
    /// Mark the evidence steps without naming rules or classes (for blind spot-checks).
    pub blind: bool,
}

/// A step that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed to show step {step}: the trajectory has {len} steps (0 to {last})", last = len.saturating_sub(1))]
pub struct StepOutOfRange {
    pub step: u32,
    pub len: usize,
}

/// Blocks longer than this many lines are folded.
const FOLD_LINES: usize = 14;
const HEAD_LINES: usize = 8;
const TAIL_LINES: usize = 4;
/// Lines longer than this many characters are cut.
const LINE_CHARS: usize = 300;
const LINE_HEAD_CHARS: usize = 240;
/// Neighbours shown on each side of `--step N`.
const CONTEXT: u32 = 1;
/// Argument values shorter than this, on one line, are shown inline.
const INLINE_ARG: usize = 120;

const MARK: &str = "▶";
const BAR: &str = "┃";

/// Renders `t` with `v`'s evidence marked.
///
/// # Errors
/// When `--step` names a step the trajectory does not have.
pub fn render(t: &Trajectory, v: &Verdict, o: &ShowOptions) -> Result<String, StepOutOfRange> {
    if let Some(s) = o.step
        && s as usize >= t.steps.len()
    {
        return Err(StepOutOfRange { step: s, len: t.steps.len() });
    }
    let mut by_step: BTreeMap<u32, Vec<&Evidence>> = BTreeMap::new();
    for e in &v.evidence {
        for s in &e.steps {
            by_step.entry(*s).or_default().push(e);
        }
    }
    let shown: Vec<&Step> = match o.step {
        Some(n) => t.steps.iter().filter(|s| s.index + CONTEXT >= n && s.index <= n + CONTEXT).collect(),
        None => t.steps.iter().collect(),
    };
    Ok(match o.format {
        Format::Text => Text { t, v, o, by_step: &by_step }.render(&shown),
        Format::Markdown => Markdown { t, v, o, by_step: &by_step }.render(&shown),
    })
}

// ---- shared pieces (raw, untrusted text; each writer sanitizes) ------------------------------

/// Folds long text: head and tail lines with the count between, and long lines cut.
fn fold(text: &str, full: bool) -> String {
    if full {
        return text.to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    if lines.len() > FOLD_LINES {
        out.extend(lines[..HEAD_LINES].iter().map(|l| cut(l)));
        out.push(format!("… {} lines folded …", lines.len() - HEAD_LINES - TAIL_LINES));
        out.extend(lines[lines.len() - TAIL_LINES..].iter().map(|l| cut(l)));
    } else {
        out.extend(lines.iter().map(|l| cut(l)));
    }
    out.join("\n")
}

fn cut(line: &str) -> String {
    let n = line.chars().count();
    if n <= LINE_CHARS {
        return line.to_string();
    }
    let end = line.char_indices().nth(LINE_HEAD_CHARS).map_or(line.len(), |(i, _)| i);
    format!("{} … {} chars folded …", &line[..end], n - LINE_HEAD_CHARS)
}

pub(crate) fn role(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        Role::Environment => "environment",
    }
}

pub(crate) fn reasoning_summary(s: &Step) -> Option<String> {
    let r = s.reasoning.as_ref()?;
    let chars = r.text.as_ref().map(|t| t.chars().count());
    Some(match (chars, r.tokens) {
        (Some(c), Some(k)) => format!("reasoning: {c} chars, {k} tokens (collapsed)"),
        (Some(c), None) => format!("reasoning: {c} chars (collapsed)"),
        (None, Some(k)) => format!("reasoning: {k} tokens (text not recorded)"),
        (None, None) => "reasoning: empty".to_string(),
    })
}

/// A call's arguments as `key: value` lines; long or multi-line values as indented blocks.
pub(crate) fn arguments(c: &ToolCall, full: bool) -> String {
    if let Some(raw) = &c.raw_arguments {
        return format!("(arguments are not JSON)\n{}", fold(raw, full));
    }
    let mut out = String::new();
    match &c.arguments {
        Value::Object(m) => {
            for (k, v) in m {
                let text = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                // A single trailing newline (a command's Enter) stays inline, shown as ↵.
                let one_line = text.strip_suffix('\n').map_or((text.as_str(), ""), |t| (t, "↵"));
                if !one_line.0.contains('\n') && one_line.0.chars().count() <= INLINE_ARG {
                    let _ = writeln!(out, "{k}: {}{}", one_line.0, one_line.1);
                } else {
                    let _ = writeln!(out, "{k}:");
                    for l in fold(&text, full).lines() {
                        let _ = writeln!(out, "  {l}");
                    }
                }
            }
        }
        Value::Null => {}
        other => {
            let _ = writeln!(out, "{}", fold(&other.to_string(), full));
        }
    }
    out.trim_end().to_string()
}

pub(crate) fn result_label(t: &Trajectory, here: u32, r: &ToolResult) -> String {
    let mut s = "result".to_string();
    if let Some(c) = r.call {
        let name = t.steps.get(c.step as usize).and_then(|st| st.tool_calls.get(c.call as usize)).map_or("?", |x| x.name.as_str());
        if c.step == here {
            let _ = write!(s, " of {name}");
        } else {
            let _ = write!(s, " of {name} (#{}.{})", c.step, c.call);
        }
    } else if let Some(n) = &r.name {
        let _ = write!(s, " of {n} (unpaired)");
    } else {
        s.push_str(" (unpaired)");
    }
    if let Some(code) = r.exit_code {
        let _ = write!(s, ", exit {code}");
    }
    if r.is_error {
        s.push_str(", error");
    }
    if let Some(u) = &r.unknown_tool {
        let _ = write!(s, ", rejected as an unknown tool: {u}");
    }
    s
}

pub(crate) fn call_label(c: &ToolCall) -> String {
    match &c.id {
        Some(id) => format!("call {} [{id}]", c.name),
        None => format!("call {}", c.name),
    }
}

fn annotation(ev: &[&Evidence], blind: bool) -> String {
    if blind {
        return "evidence".to_string();
    }
    let mut seen: Vec<String> = Vec::new();
    for e in ev {
        let s = format!("{} → {}", e.rule, e.supports);
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    seen.join(", ")
}

/// Header facts as (key, value) pairs of raw text.
pub(crate) fn header(t: &Trajectory, v: &Verdict, o: &ShowOptions) -> Vec<(&'static str, String)> {
    let mut h: Vec<(&'static str, String)> = Vec::new();
    let mut task = t.task_id.clone();
    let _ = write!(task, ", trial {}", t.trial);
    if let Some(a) = &t.arm {
        let _ = write!(task, ", arm {a}");
    }
    h.push(("task", task));
    let mut harness = t.harness.clone();
    if let Some(hv) = &t.harness_version {
        let _ = write!(harness, " {hv}");
    }
    if let Some(m) = &t.model {
        let _ = write!(harness, ", model {m}");
    }
    h.push(("harness", harness));
    if let Some(f) = t.provenance.files.first() {
        let mut s = format!("{} ({}", f.path, t.provenance.adapter);
        if let Some(fv) = &t.provenance.format_version {
            let _ = write!(s, ", {fv}");
        }
        s.push(')');
        h.push(("source", s));
    }
    let mut outcome = t.outcome.status.as_str().to_string();
    if let Some(r) = t.outcome.reward {
        let _ = write!(outcome, ", reward {r}");
    }
    if let Some(src) = &t.outcome.source {
        let _ = write!(outcome, " ({} {})", src.file, src.field);
    }
    if let Some(d) = &t.outcome.detail {
        let _ = write!(outcome, ": {d}");
    }
    h.push(("outcome", outcome));
    let term = &t.termination;
    let mut ended = crate::util::snake(&term.kind);
    if let Some(b) = term.budget {
        let _ = write!(ended, ", budget {}", crate::util::snake(&b));
    }
    match (term.consumed, term.limit) {
        (Some(c), Some(l)) => {
            let _ = write!(ended, ", {c} of {l}");
        }
        (None, Some(l)) => {
            let _ = write!(ended, ", limit {l}");
        }
        _ => {}
    }
    if let Some(by) = term.enforced_by {
        let _ = write!(ended, ", enforced by {}", crate::util::snake(&by));
    }
    if let Some(r) = &term.raw {
        let _ = write!(ended, " (status {r})");
    }
    if let Some(d) = &term.detail {
        let _ = write!(ended, ": {d}");
    }
    h.push(("ended", ended));
    if o.blind {
        let steps = evidence_steps(v);
        let at_end = v.evidence.iter().any(|e| e.steps.is_empty());
        let mut s = match steps.as_slice() {
            [] if at_end => "the run's end status".to_string(),
            [] => "no step is evidence".to_string(),
            [one] => format!("step {one}"),
            many => format!("steps {}", join_u32(many)),
        };
        if at_end && !steps.is_empty() {
            s.push_str(", and the run's end status");
        }
        h.push(("look at", s));
    } else {
        let verdict = match &v.primary {
            Some(p) => format!("{p} (classes: {})", v.classes.join(", ")),
            None if v.outcome == crate::model::OutcomeStatus::Passed => "passed, no class".into(),
            None => "outcome unknown, not classified".into(),
        };
        h.push(("verdict", verdict));
        if !v.flags.is_empty() {
            h.push(("flags", v.flags.join(", ")));
        }
        if let Some(r) = &v.reason {
            h.push(("reason", r.clone()));
        }
        for e in &v.evidence {
            let at = if e.steps.is_empty() { "run end".to_string() } else { format!("step {}", join_u32(&e.steps)) };
            let mut s = format!("{at}: {} → {}: \"{}\"", e.rule, e.supports, e.excerpt);
            if let Some(d) = &e.detail {
                let _ = write!(s, " ({d})");
            }
            h.push(("evidence", s));
        }
    }
    for n in &t.notes {
        h.push(("note", n.clone()));
    }
    h
}

pub(crate) fn evidence_steps(v: &Verdict) -> Vec<u32> {
    let mut s: Vec<u32> = v.evidence.iter().flat_map(|e| e.steps.iter().copied()).collect();
    s.sort_unstable();
    s.dedup();
    s
}

fn join_u32(v: &[u32]) -> String {
    v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

fn span(a: u32, b: u32) -> String {
    if a == b { format!("step {a}") } else { format!("steps {a} to {b}") }
}

fn scope_line(t: &Trajectory, o: &ShowOptions) -> String {
    let n = t.steps.len();
    match o.step {
        Some(s) => format!("step {s} of {n} in full, with {CONTEXT} step of context on each side (steps are numbered from 0)"),
        None => format!("{n} steps (numbered from 0); {MARK} marks the evidence; long blocks are folded (--step N shows one in full)"),
    }
}

// ---- text -----------------------------------------------------------------------------------

struct Text<'a> {
    t: &'a Trajectory,
    v: &'a Verdict,
    o: &'a ShowOptions,
    by_step: &'a BTreeMap<u32, Vec<&'a Evidence>>,
}

use sanitize::style::{BOLD, BOLD_YELLOW, DIM, RED, RESET, YELLOW};

impl Text<'_> {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.o.color { format!("{code}{s}{RESET}") } else { s.to_string() }
    }

    fn render(&self, shown: &[&Step]) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.paint(BOLD, &sanitize::terminal(&self.t.id)));
        for (k, v) in header(self.t, self.v, self.o) {
            let key = self.paint(DIM, &format!("{k:<9}"));
            let mut lines = v.lines();
            let _ = writeln!(out, "  {key} {}", sanitize::terminal(lines.next().unwrap_or("")));
            for l in lines {
                let _ = writeln!(out, "  {:<9} {}", "", sanitize::terminal(l));
            }
        }
        let _ = writeln!(out, "  {}", self.paint(DIM, &scope_line(self.t, self.o)));
        if let (Some(first), Some(_)) = (shown.first(), self.o.step)
            && first.index > 0
        {
            let _ = writeln!(out, "\n  … {} not shown …", span(0, first.index - 1));
        }
        for s in shown {
            out.push('\n');
            self.step(&mut out, s);
        }
        if let (Some(last), Some(_)) = (shown.last(), self.o.step)
            && (last.index as usize) + 1 < self.t.steps.len()
        {
            let end = u32::try_from(self.t.steps.len() - 1).unwrap_or(u32::MAX);
            let _ = writeln!(out, "\n  … {} not shown …", span(last.index + 1, end));
        }
        out
    }

    fn step(&self, out: &mut String, s: &Step) {
        let ev = self.by_step.get(&s.index);
        let full = self.o.step == Some(s.index);
        let margin = if ev.is_some() { self.paint(BOLD_YELLOW, BAR) } else { " ".to_string() };
        let mark = if ev.is_some() { self.paint(BOLD_YELLOW, MARK) } else { " ".to_string() };
        let mut head = format!("#{} {}", s.index, role(s.role));
        if let Some(a) = &s.agent {
            let _ = write!(head, " ({})", sanitize::terminal(a));
        }
        if let Some(ts) = &s.timestamp {
            let _ = write!(head, "  {}", self.paint(DIM, &sanitize::terminal(ts)));
        }
        let _ = write!(out, "{mark} {}", self.paint(BOLD, &head));
        if let Some(ev) = ev {
            let _ = write!(out, "   {}", self.paint(YELLOW, &format!("◀ {}", sanitize::terminal(&annotation(ev, self.o.blind)))));
        }
        out.push('\n');
        let block = |out: &mut String, text: &str, indent: usize| {
            for l in text.lines() {
                let _ = writeln!(out, "{margin} {:indent$}{}", "", sanitize::terminal(l));
            }
        };
        if !s.text.trim().is_empty() {
            block(out, &fold(&s.text, full), 3);
        }
        if let Some(r) = &s.reasoning {
            match (&r.text, full) {
                (Some(text), true) => {
                    let _ = writeln!(out, "{margin}   {}", self.paint(DIM, "reasoning:"));
                    block(out, text, 5);
                }
                _ => {
                    let _ = writeln!(out, "{margin}   {}", self.paint(DIM, &reasoning_summary(s).unwrap_or_default()));
                }
            }
        }
        if let Some(f) = &s.format_error {
            let _ = writeln!(out, "{margin}   {}", self.paint(RED, "format error (the reply was not a usable action):"));
            block(out, &fold(f, full), 5);
        }
        for c in &s.tool_calls {
            let _ = writeln!(out, "{margin}   → {}", self.paint(BOLD, &sanitize::terminal(&call_label(c))));
            block(out, &arguments(c, full), 7);
        }
        for r in &s.tool_results {
            let label = sanitize::terminal(&result_label(self.t, s.index, r)).into_owned();
            let label = if r.is_error || r.unknown_tool.is_some() { self.paint(RED, &label) } else { label };
            let _ = writeln!(out, "{margin}   ← {label}");
            if r.output.trim().is_empty() {
                let _ = writeln!(out, "{margin}       {}", self.paint(DIM, "(no output)"));
            } else {
                block(out, &fold(&r.output, full), 7);
            }
        }
    }
}

// ---- markdown -------------------------------------------------------------------------------

struct Markdown<'a> {
    t: &'a Trajectory,
    v: &'a Verdict,
    o: &'a ShowOptions,
    by_step: &'a BTreeMap<u32, Vec<&'a Evidence>>,
}

impl Markdown<'_> {
    fn render(&self, shown: &[&Step]) -> String {
        use sanitize::{code_block, markdown_line as md};
        let mut out = String::new();
        let _ = writeln!(out, "# Trajectory {}\n", md(&self.t.id));
        for (k, v) in header(self.t, self.v, self.o) {
            let _ = writeln!(out, "- **{k}:** {}", md(&v));
        }
        let _ = writeln!(out, "\n{}\n", md(&scope_line(self.t, self.o)));
        for s in shown {
            let ev = self.by_step.get(&s.index);
            let full = self.o.step == Some(s.index);
            let mut head = format!("#{} {}", s.index, role(s.role));
            if let Some(a) = &s.agent {
                let _ = write!(head, " ({a})");
            }
            match ev {
                Some(ev) => {
                    let _ = writeln!(out, "## {MARK} {} — {}\n", md(&head), md(&annotation(ev, self.o.blind)));
                }
                None => {
                    let _ = writeln!(out, "## {}\n", md(&head));
                }
            }
            if !s.text.trim().is_empty() {
                let _ = writeln!(out, "{}", code_block(&fold(&s.text, full), "text"));
            }
            if let Some(r) = &s.reasoning {
                match (&r.text, full) {
                    (Some(text), true) => {
                        let _ = writeln!(out, "*reasoning:*\n\n{}", code_block(text, "text"));
                    }
                    _ => {
                        let _ = writeln!(out, "*{}*\n", md(&reasoning_summary(s).unwrap_or_default()));
                    }
                }
            }
            if let Some(f) = &s.format_error {
                let _ = writeln!(out, "**format error** (the reply was not a usable action):\n\n{}", code_block(&fold(f, full), "text"));
            }
            for c in &s.tool_calls {
                let _ = writeln!(out, "**→ {}**\n", md(&call_label(c)));
                let args = arguments(c, full);
                if !args.is_empty() {
                    let _ = writeln!(out, "{}", code_block(&args, "text"));
                }
            }
            for r in &s.tool_results {
                let _ = writeln!(out, "**← {}**\n", md(&result_label(self.t, s.index, r)));
                if r.output.trim().is_empty() {
                    let _ = writeln!(out, "*(no output)*\n");
                } else {
                    let _ = writeln!(out, "{}", code_block(&fold(&r.output, full), "text"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_keeps_head_and_tail_and_counts_the_rest() {
        let text: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let f = fold(&text, false);
        assert!(f.contains("line 1\n") && f.contains("line 8\n") && !f.contains("line 9\n"));
        assert!(f.contains("… 28 lines folded …") && f.ends_with("line 40"));
        assert_eq!(fold(&text, true), text);
        let long = "é".repeat(1000);
        let c = cut(&long);
        assert!(c.starts_with(&"é".repeat(LINE_HEAD_CHARS)) && c.ends_with("… 760 chars folded …"));
        assert_eq!(fold("short\ntext", false), "short\ntext");
    }
}
