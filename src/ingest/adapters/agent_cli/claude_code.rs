//! Claude Code: session transcripts, `claude -p --output-format stream-json` output, and
//! captures of the tool list it sends to the API.
//!
//! A session transcript (`~/.claude/projects/<project>/<sessionId>.jsonl`) is a tree, not a
//! list: every line has a `uuid` and a `parentUuid`, one assistant message is streamed over
//! several lines (one content block each, sharing `message.id`), parallel tool results hang off
//! the line of the call they answer, a rewind or retry starts a branch, and sub-agents write
//! sidechains (`isSidechain`, `agentId`) into the same file or, in newer versions, into
//! `<sessionId>/subagents/agent-<id>.jsonl` beside it. The main line is the parent chain from the
//! last line back to the root (across compaction boundaries via `logicalParentUuid`); lines
//! hanging off it that are not a new prompt or a new reply (parallel results, harness events)
//! are folded in; true branches (a rewind, a retried reply) are kept in file order as steps with
//! `agent` = `branch:<uuid of the branch's first line>` and named in the notes, so what the
//! session abandoned stays visible without being taken for its main line. Sidechain steps are
//! kept, with `agent` = `sidechain:<agentId or root uuid>`. Transcripts carry no verdict: the task id
//! is the file stem (the session id in Claude Code's own layout) or, for a generic name like
//! `transcript.jsonl`, the directory; `sessionId` is the session id a verdict file may key on.
//! The tool list differs by version, so `version` is kept as the harness version.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::chat::anthropic::{self as chat_anthropic, first_line};
use crate::ingest::adapters::chat::api::{self as chat_api, is_unknown_tool_message};
use crate::ingest::adapters::shared::lines::{self, Line};
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, FileSet, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Budget, DeclaredTool, Enforcer, Role, SourceFile, SourceSpan, Step, Termination, TerminationKind, Tokens, Trajectory};
use crate::util::seconds_between;

const HARNESS: &str = "claude-code";

/// One line of a transcript or a stream. Loose on purpose: line types and fields came and went
/// across versions (`costUSD` until 1.0, `agentId` and `logicalParentUuid` later).
#[derive(Deserialize, Default)]
struct RawLine {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(default)]
    uuid: Option<String>,
    #[serde(rename = "parentUuid", default)]
    parent: Option<String>,
    #[serde(rename = "logicalParentUuid", default)]
    logical_parent: Option<String>,
    #[serde(rename = "isSidechain", default)]
    sidechain: Option<bool>,
    #[serde(rename = "agentId", default)]
    agent_id: Option<String>,
    #[serde(rename = "sessionId", alias = "session_id", default)]
    session_id: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(rename = "isMeta", default)]
    meta: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    compact_summary: Option<bool>,
    #[serde(rename = "isApiErrorMessage", default)]
    api_error: Option<bool>,
    #[serde(default)]
    message: Option<RawMessage>,
    #[serde(rename = "toolUseResult", alias = "tool_use_result", default)]
    tool_use_result: Option<Value>,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(rename = "costUSD", default)]
    cost: Option<f64>,
    #[serde(rename = "compactMetadata", default)]
    compact: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
    // stream-json
    #[serde(default)]
    tools: Option<Vec<Value>>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    claude_code_version: Option<String>,
    #[serde(default)]
    parent_tool_use_id: Option<String>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(default)]
    num_turns: Option<u64>,
    #[serde(default)]
    total_cost_usd: Option<f64>,
    #[serde(default)]
    duration_ms: Option<f64>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    errors: Option<Value>,
    #[serde(default)]
    mcp_servers: Option<Vec<Value>>,
}

#[derive(Deserialize, Default)]
struct RawMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    content: Option<RawContent>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawContent {
    Text(String),
    Blocks(Vec<Value>),
}

impl RawContent {
    fn to_value(&self) -> Value {
        match self {
            Self::Text(s) => Value::String(s.clone()),
            Self::Blocks(b) => Value::Array(b.clone()),
        }
    }
}

/// A parsed line with where it came from.
struct Entry {
    line: usize,
    span: SourceSpan,
    raw: RawLine,
}

impl Entry {
    fn kind(&self) -> &str {
        self.raw.kind.as_deref().unwrap_or_default()
    }

    /// A line of the tree: anything with a `uuid` (messages, and the progress and attachment
    /// lines newer versions thread into the chain); only messages become steps.
    fn is_node(&self) -> bool {
        self.raw.uuid.is_some()
    }

    fn sidechain(&self) -> bool {
        self.raw.sidechain.unwrap_or(false)
    }

    fn msg_id(&self) -> Option<&str> {
        self.raw.message.as_ref().and_then(|m| m.id.as_deref())
    }

    /// A new prompt or a new reply: where a real branch starts. Tool results, harness lines and
    /// more blocks of a message already on the line are not.
    fn starts_branch(&self, msg_ids: &HashSet<String>) -> bool {
        match self.kind() {
            "assistant" => self.msg_id().is_none_or(|id| !msg_ids.contains(id)),
            "user" => {
                if self.raw.meta == Some(true) {
                    return false;
                }
                match self.raw.message.as_ref().and_then(|m| m.content.as_ref()) {
                    Some(RawContent::Text(_)) => true,
                    Some(RawContent::Blocks(b)) => !b.iter().any(|x| x.get("type").and_then(Value::as_str) == Some("tool_result")),
                    None => false,
                }
            }
            _ => false,
        }
    }
}

/// Reads the lines of a transcript or stream (JSON Lines, or a JSON array of events).
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn read_entries(src: &Source, file_ix: u32, diags: &mut Vec<InputError>, what: &str) -> Result<Vec<Entry>, InputError> {
    let mut out = Vec::new();
    let first = src.bytes.iter().find(|b| !b.is_ascii_whitespace() && **b != 0xEF && **b != 0xBB && **b != 0xBF).copied();
    if first == Some(b'[') {
        let text = src.text()?;
        let items: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| InputError::from_json(&src.display, &src.bytes, what, &e))?;
        for item in items {
            let base = src.offset_of(item.get()).unwrap_or(0);
            match serde_json::from_str::<RawLine>(item.get()) {
                Ok(raw) => {
                    let span = src.span(file_ix, base, item.get().len());
                    out.push(Entry { line: src.line_of(base), span, raw });
                }
                Err(e) => diags.push(InputError::from_json_at(&src.display, &src.bytes, base, what, &e)),
            }
        }
        return Ok(out);
    }
    for line in lines::split(src, diags) {
        match lines::parse::<RawLine>(src, &line, what) {
            Ok(raw) => out.push(Entry { line: line.no, span: Line::span(&line, file_ix), raw }),
            Err(e) => diags.push(e),
        }
    }
    Ok(out)
}

/// Which entries make the main line (file order), and notes on what was left out.
fn main_line(entries: &[Entry]) -> (Vec<usize>, Vec<String>, BTreeMap<usize, String>) {
    let mut notes = Vec::new();
    let by_uuid: HashMap<&str, usize> =
        entries.iter().enumerate().filter(|(_, e)| e.is_node()).filter_map(|(i, e)| Some((e.raw.uuid.as_deref()?, i))).collect();
    let main_nodes: Vec<usize> = entries.iter().enumerate().filter(|(_, e)| e.is_node() && !e.sidechain()).map(|(i, _)| i).collect();
    let mut missing: BTreeSet<String> = BTreeSet::new();
    // A parent that is not in the file (an unreadable line) is replaced by the line before.
    let parent_of = |i: usize, missing: &mut BTreeSet<String>| -> Option<usize> {
        let e = &entries[i];
        match e.raw.parent.as_deref() {
            Some(p) => by_uuid.get(p).copied().or_else(|| {
                missing.insert(p.to_string());
                main_nodes.iter().rev().copied().find(|&j| j < i)
            }),
            None => e.raw.logical_parent.as_deref().and_then(|p| by_uuid.get(p).copied()),
        }
    };
    let Some(&leaf) = main_nodes.last() else { return (Vec::new(), notes, BTreeMap::new()) };
    let mut included: HashSet<usize> = HashSet::new();
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        if !included.insert(i) {
            break;
        }
        cur = parent_of(i, &mut missing);
    }
    let mut msg_ids: HashSet<String> = included.iter().filter_map(|&i| entries[i].msg_id().map(ToString::to_string)).collect();
    let mut left_out: Vec<usize> = Vec::new();
    for &i in &main_nodes {
        if included.contains(&i) {
            continue;
        }
        let attached = parent_of(i, &mut missing).is_some_and(|p| included.contains(&p));
        if attached && !entries[i].starts_branch(&msg_ids) {
            included.insert(i);
            if let Some(id) = entries[i].msg_id() {
                msg_ids.insert(id.to_string());
            }
        } else {
            left_out.push(i);
        }
    }
    if !missing.is_empty() {
        notes.push(format!(
            "{} parent uuid(s) are not in the file (an unreadable line, or a session resumed from another file); those lines were joined to the line before them",
            missing.len()
        ));
    }
    // Name each left-out branch by its first line (parents come before children).
    let left: HashSet<usize> = left_out.iter().copied().collect();
    let mut root_of: HashMap<usize, usize> = HashMap::new();
    let mut roots: BTreeMap<usize, usize> = BTreeMap::new();
    for &i in &left_out {
        let root = parent_of(i, &mut missing).filter(|p| left.contains(p)).and_then(|p| root_of.get(&p).copied()).unwrap_or(i);
        root_of.insert(i, root);
        *roots.entry(root).or_default() += 1;
    }
    let label =
        |root: usize| format!("branch:{}", entries[root].raw.uuid.clone().unwrap_or_else(|| format!("line-{}", entries[root].line)));
    for (&root, n) in &roots {
        let fork = parent_of(root, &mut missing).map_or_else(|| "the root".to_string(), |p| format!("line {}", entries[p].line));
        notes.push(format!(
            "branch from line {} ({n} line(s), forking at {fork}) is not on the main line (a rewind or a retried reply); its steps are kept with agent `{}`",
            entries[root].line,
            label(root)
        ));
    }
    let branches: BTreeMap<usize, String> = root_of.iter().map(|(&i, &root)| (i, label(root))).collect();
    let mut order: Vec<usize> = included.into_iter().collect();
    order.sort_unstable();
    (order, notes, branches)
}

/// The label of each sidechain entry: its `agentId`, else the uuid of its sidechain's root.
fn sidechain_labels(entries: &[Entry]) -> BTreeMap<usize, String> {
    let by_uuid: HashMap<&str, usize> =
        entries.iter().enumerate().filter(|(_, e)| e.is_node()).filter_map(|(i, e)| Some((e.raw.uuid.as_deref()?, i))).collect();
    let mut out = BTreeMap::new();
    // Parents come before children, so one pass in file order finds every root.
    let mut root_of: HashMap<usize, usize> = HashMap::new();
    for (i, e) in entries.iter().enumerate().filter(|(_, e)| e.is_node() && e.sidechain()) {
        let parent = e.raw.parent.as_deref().and_then(|p| by_uuid.get(p).copied()).filter(|&p| entries[p].sidechain());
        let root = parent.and_then(|p| root_of.get(&p).copied()).unwrap_or(i);
        root_of.insert(i, root);
        let label = e.raw.agent_id.clone().unwrap_or_else(|| entries[root].raw.uuid.clone().unwrap_or_default());
        out.insert(i, format!("sidechain:{label}"));
    }
    out
}

/// Turns entries into steps.
#[derive(Default)]
struct Builder {
    steps: Vec<Step>,
    /// Steps made from `system` lines and init events: harness bookkeeping, not the dialogue.
    bookkeeping: Vec<bool>,
    /// (agent, message id) → step.
    by_msg: HashMap<(Option<String>, String), usize>,
    /// Per message id, the largest count seen for each field (a streamed message repeats its
    /// usage on every line, growing).
    usage: BTreeMap<String, Tokens>,
    stop_reasons: HashMap<String, String>,
    /// Sub-agent ids named by a result (`toolUseResult.agentId`), with the step holding it.
    agent_links: Vec<(String, usize)>,
    api_error_steps: HashSet<usize>,
    interrupted_steps: HashSet<usize>,
    models: BTreeMap<String, usize>,
    versions: BTreeSet<String>,
    /// The first working directory a line names.
    cwd: Option<String>,
    session_ids: BTreeSet<String>,
    cost: Option<f64>,
    first_ts: Option<String>,
    last_ts: Option<String>,
    notes: Vec<String>,
    ignored: BTreeMap<String, usize>,
}

impl Builder {
    fn push(&mut self, step: Step, bookkeeping: bool) -> usize {
        self.steps.push(step);
        self.bookkeeping.push(bookkeeping);
        self.steps.len() - 1
    }

    fn entry(&mut self, e: &Entry, agent: Option<&str>) {
        let raw = &e.raw;
        if let Some(ts) = &raw.timestamp {
            if self.first_ts.is_none() {
                self.first_ts = Some(ts.clone());
            }
            self.last_ts = Some(ts.clone());
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
                    self.notes.push(format!("summary line {}: {}", e.line, s.chars().take(200).collect::<String>()));
                }
            }
            other => *self.ignored.entry(if other.is_empty() { "untyped".into() } else { other.to_string() }).or_default() += 1,
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
        chat_anthropic::add_assistant_content(&mut self.steps[ix], &content);
        let synthetic = msg.model.as_deref() == Some("<synthetic>");
        if e.raw.api_error == Some(true) || (synthetic && self.steps[ix].text.starts_with("API Error")) {
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
                r.exit_code = extra.and_then(exit_code_of).or_else(|| r.is_error.then(|| exit_code_in(&r.output)).flatten());
                if r.unknown_tool.is_none() && r.is_error && is_unknown_tool_message(&r.output) {
                    r.unknown_tool = Some(first_line(&r.output));
                }
            }
            if extra.and_then(|x| x.get("interrupted")).and_then(Value::as_bool) == Some(true) {
                self.notes.push(format!("line {}: the command was interrupted", e.line));
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
            let interrupted = uc.text.starts_with("[Request interrupted by user");
            let ix = step_of(self, Step::new(role, uc.text));
            if interrupted {
                self.interrupted_steps.insert(ix);
            }
        }
        if e.raw.compact_summary == Some(true) {
            self.notes.push(format!(
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
        let mut text = raw.content.as_ref().map(crate::ingest::adapters::shared::common::content_text).unwrap_or_default();
        if sub == "compact_boundary" {
            let trigger = raw.compact.as_ref().and_then(|c| c.get("trigger")).and_then(Value::as_str).unwrap_or("?");
            let pre = raw.compact.as_ref().and_then(|c| c.get("preTokens").or_else(|| c.get("pre_tokens"))).and_then(Value::as_u64);
            self.notes.push(format!(
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
            *self.ignored.entry(format!("system/{sub}")).or_default() += 1;
            return;
        }
        let mut step = Step::new(Role::Environment, text);
        step.agent = agent;
        step.timestamp.clone_from(&raw.timestamp);
        step.source_span = Some(e.span);
        self.push(step, true);
    }

    /// Per-step tokens once every line of every message is in.
    fn settle_tokens(&mut self) {
        for (k, &ix) in &self.by_msg {
            if let Some(t) = self.usage.get(&k.1) {
                self.steps[ix].tokens = Some(t.clone());
            }
        }
    }

    fn last_stop_reason(&self, step: usize) -> Option<&str> {
        self.by_msg.iter().filter(|(_, i)| **i == step).find_map(|((_, id), _)| self.stop_reasons.get(id)).map(String::as_str)
    }

    fn ignored_note(&self) -> Option<String> {
        (!self.ignored.is_empty()).then(|| {
            let parts: Vec<String> = self.ignored.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
            format!("lines kept out of the steps (bookkeeping): {}", parts.join(", "))
        })
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

/// How a failed API call ended the run (Claude Code writes it as an assistant message).
fn api_error_termination(text: &str) -> Termination {
    let lower = text.to_ascii_lowercase();
    let mut t = if lower.contains("prompt is too long") || lower.contains("context") && lower.contains("exceed") {
        Termination::budget(Budget::Context, Enforcer::Provider)
    } else {
        Termination::of(TerminationKind::Infrastructure)
    };
    // `API Error: 400 {"type":"error",...}`: the status is the raw value, the body the detail.
    let head = first_line(text);
    let head = head.split_once(" {").map_or(head.as_str(), |(h, _)| h).trim();
    t.raw = Some(head.chars().take(200).collect());
    t.source = Some("API error message".into());
    t.detail = Some(text.chars().take(300).collect());
    t
}

/// How the run ended, read from the main line's last dialogue step.
fn termination_from_steps(b: &Builder) -> Termination {
    let answered: HashSet<&str> = b.steps.iter().flat_map(|s| s.tool_results.iter().filter_map(|r| r.call_id.as_deref())).collect();
    let last = b.steps.iter().enumerate().rev().find(|(i, s)| s.agent.is_none() && !b.bookkeeping[*i]);
    let unknown = |detail: &str| {
        let mut t = Termination::unknown();
        t.detail = Some(detail.to_string());
        t
    };
    let Some((i, s)) = last else { return unknown("the transcript has no messages on its main line") };
    match s.role {
        Role::Assistant if b.api_error_steps.contains(&i) => api_error_termination(&s.text),
        Role::Assistant if s.tool_calls.iter().any(|c| c.id.as_deref().is_none_or(|id| !answered.contains(id))) => {
            unknown("the transcript ends with a tool call that has no result (the run was cut off)")
        }
        Role::Assistant => {
            let stop = b.last_stop_reason(i);
            if stop == Some("max_tokens") {
                return Termination::budget(Budget::OutputTokens, Enforcer::Provider).with_raw("max_tokens", "message.stop_reason");
            }
            Termination::of(TerminationKind::AgentStoppedWithoutFinish)
                .with_raw(stop.unwrap_or("final assistant message"), "last assistant message (Claude Code has no finish tool)")
        }
        Role::User if b.interrupted_steps.contains(&i) => {
            let mut t = unknown("the user interrupted the agent");
            t.raw = Some("interrupted".into());
            t
        }
        Role::Tool => unknown("the transcript ends after a tool result, before the agent replied (the run was cut off)"),
        Role::Environment => unknown("the transcript ends with harness feedback (a hook) the agent never answered"),
        _ => unknown("the transcript ends with a message the agent never answered"),
    }
}

/// Names that say nothing about the task: the directory does.
const GENERIC_STEMS: &[&str] =
    &["transcript", "session", "trajectory", "log", "output", "stream", "events", "conversation", "chat", "main", "claude", "agent"];

fn task_from_path(p: &Path) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.split_once('.').map_or(name.as_str(), |(s, _)| s).to_string();
    if GENERIC_STEMS.contains(&stem.to_ascii_lowercase().as_str())
        && let Some(dir) = p.parent().and_then(Path::file_name)
    {
        return dir.to_string_lossy().into_owned();
    }
    stem
}

/// Fills usage, model, version, session and time from a builder.
fn finish_record(t: &mut Trajectory, b: &Builder) {
    let mut u = t.usage.clone();
    for k in b.usage.values() {
        for (total, n) in [(&mut u.prompt_tokens, k.prompt), (&mut u.completion_tokens, k.completion), (&mut u.cached_tokens, k.cached)] {
            if let Some(n) = n {
                *total = Some(total.unwrap_or(0) + n);
            }
        }
    }
    if !b.usage.is_empty() {
        u.api_calls = Some(b.usage.len() as u64);
    }
    if u.cost_usd.is_none() {
        u.cost_usd = b.cost;
    }
    if let (Some(a), Some(z)) = (&b.first_ts, &b.last_ts) {
        u.wall_seconds = u.wall_seconds.or_else(|| seconds_between(a, z));
        t.started_at = Some(a.clone());
        t.ended_at = Some(z.clone());
    }
    t.usage = u;
    if t.model.is_none() {
        // The model that wrote most messages; ties go to the name that sorts first.
        t.model = b.models.iter().max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0))).map(|(m, _)| m.clone());
    }
    if b.models.len() > 1 {
        t.notes.push(format!("messages from several models: {}", b.models.keys().cloned().collect::<Vec<_>>().join(", ")));
    }
    if t.harness_version.is_none() {
        t.harness_version = b.versions.iter().next_back().cloned();
    }
    if b.versions.len() > 1 {
        t.notes.push(format!("lines from several Claude Code versions: {}", b.versions.iter().cloned().collect::<Vec<_>>().join(", ")));
    }
    if t.session_id.is_none() {
        t.session_id = b.session_ids.iter().next().cloned();
        t.workdir = b.cwd.clone();
    }
    t.notes.extend(b.notes.iter().cloned());
    t.notes.extend(b.ignored_note());
}

/// A sub-agent transcript claimed by its session: its steps, to go in before the result that
/// names the agent.
struct SubAgent {
    id: String,
    steps: Vec<Step>,
    builder: Builder,
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn read_subagent(path: &Path, display: &str, file_ix: u32, meta: Option<&Value>) -> Result<(SubAgent, SourceFile), InputError> {
    let src = Source::read(path, display)?;
    let mut diags = Vec::new();
    let entries = read_entries(&src, file_ix, &mut diags, "Claude Code sub-agent line")?;
    let from_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let from_name = from_name.trim_start_matches("agent-").trim_end_matches(".jsonl").to_string();
    let id = entries.iter().find_map(|e| e.raw.agent_id.clone()).unwrap_or(from_name);
    let label = format!("sidechain:{id}");
    let mut b = Builder::default();
    for e in &entries {
        b.entry(e, Some(&label));
    }
    b.settle_tokens();
    if !diags.is_empty() {
        b.notes.push(format!("sub-agent {id}: {} unreadable line(s) skipped", diags.len()));
    }
    if let Some(kind) = meta.and_then(|m| m.get("agentType")).and_then(Value::as_str) {
        b.notes.push(format!("sub-agent {id} is a {kind} agent"));
    }
    Ok((SubAgent { id, steps: std::mem::take(&mut b.steps), builder: b }, src.provenance("subagent_transcript")))
}

/// Claude Code session transcripts.
pub struct ClaudeCodeSession;

impl Adapter for ClaudeCodeSession {
    fn name(&self) -> &'static str {
        HARNESS
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Claude Code session transcript (JSONL: uuid/parentUuid tree, streamed messages, sidechains, subagents/)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shape = p.jsonl.as_ref().or(p.json.as_ref().filter(|j| !j.top_is_array)).ok_or("not JSON Lines")?;
        let kind = shape.str("type").unwrap_or_default();
        if shape.has("parentUuid") && shape.has("sessionId") {
            return marker("Claude Code session lines (sessionId, parentUuid)");
        }
        if shape.has("sessionId")
            && matches!(kind, "user" | "assistant" | "system" | "summary" | "queue-operation" | "file-history-snapshot" | "progress")
        {
            return marker(format!("Claude Code session line (sessionId, type {kind})"));
        }
        if (kind == "summary" && shape.has("leafUuid")) || (kind == "file-history-snapshot" && shape.has("snapshot")) {
            return marker(format!("Claude Code session line (type {kind})"));
        }
        Err("no sessionId/parentUuid lines".into())
    }

    /// Sub-agent transcripts and their metadata in `<sessionId>/subagents/` beside the session.
    fn companions(&self, primary: &Path, files: &FileSet) -> Vec<PathBuf> {
        let Some(stem) = primary.file_name().map(|n| n.to_string_lossy().into_owned()) else { return Vec::new() };
        let stem = stem.strip_suffix(".jsonl").unwrap_or(&stem);
        let dir = primary.with_file_name(stem).join("subagents");
        files
            .range(dir.clone()..)
            .take_while(|(p, _)| p.starts_with(&dir))
            .map(|(p, _)| p.clone())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("agent-")))
            .collect()
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let mut diags = Vec::new();
        let entries = read_entries(&src, 0, &mut diags, "Claude Code transcript line")?;
        let bad = diags.len();
        out.diagnostics.extend(diags);
        if entries.is_empty() {
            return Err(if bad > 0 {
                lines::nothing_readable(
                    &src,
                    "Claude Code transcript line",
                    "each line is one JSON object with type, uuid, parentUuid and message",
                )
            } else {
                InputError::new(InputErrorKind::Schema, &src.display, "read any line of the Claude Code transcript")
            });
        }
        let (main, mut notes, branches) = main_line(&entries);
        let mut labels = sidechain_labels(&entries);
        labels.extend(branches);
        let mut order: Vec<usize> = main.iter().copied().chain(labels.keys().copied()).collect();
        // Lines that are not messages (summaries, snapshots) are read for their notes.
        order.extend(entries.iter().enumerate().filter(|(_, e)| !e.is_node()).map(|(i, _)| i));
        order.sort_unstable();
        order.dedup();
        let mut b = Builder::default();
        for i in order {
            b.entry(&entries[i], labels.get(&i).map(String::as_str));
        }
        b.settle_tokens();
        let mut t = crate::model::Trajectory::new(
            task_from_path(&unit.primary.path),
            HARNESS,
            self.name(),
            self.version(),
            vec![src.provenance("transcript")],
        );
        t.provenance.format_version = Some("claude-code-session-jsonl".into());
        t.termination = termination_from_steps(&b);

        // Sub-agent files, each before the result that names its agent.
        let mut metas: BTreeMap<String, Value> = BTreeMap::new();
        for c in unit.companions.iter().filter(|c| c.path.to_string_lossy().ends_with(".meta.json")) {
            let name = c.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let id = name.trim_start_matches("agent-").trim_end_matches(".meta.json").to_string();
            let read = match Source::read(&c.path, &c.display) {
                Ok(m) => m.json::<Value>("sub-agent metadata").map(|v| (v, m.provenance("subagent_meta"))),
                Err(e) => Err(e),
            };
            match read {
                Ok((v, file)) => {
                    t.provenance.files.push(file);
                    metas.insert(id, v);
                }
                Err(e) => notes.push(format!("sub-agent metadata {} could not be read: {e}", c.display)),
            }
        }
        let mut subs = Vec::new();
        for c in unit.companions.iter().filter(|c| c.path.extension().is_some_and(|e| e == "jsonl")) {
            let ix = u32::try_from(t.provenance.files.len()).unwrap_or(u32::MAX);
            let name = c.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let id = name.trim_start_matches("agent-").trim_end_matches(".jsonl");
            match read_subagent(&c.path, &c.display, ix, metas.get(id)) {
                Ok((s, file)) => {
                    t.provenance.files.push(file);
                    subs.push(s);
                }
                Err(e) => notes.push(format!("sub-agent transcript {} could not be read: {e}", c.display)),
            }
        }
        let mut inserts: Vec<(usize, SubAgent)> = subs
            .into_iter()
            .map(|s| {
                let at = b.agent_links.iter().find(|(a, _)| *a == s.id).map_or(b.steps.len(), |(_, ix)| *ix);
                (at, s)
            })
            .collect();
        inserts.sort_by(|x, y| y.0.cmp(&x.0).then(y.1.id.cmp(&x.1.id)));
        for (at, s) in inserts {
            let n = s.steps.len();
            b.steps.splice(at..at, s.steps);
            b.bookkeeping.splice(at..at, std::iter::repeat_n(false, n));
            for (k, v) in s.builder.usage {
                b.usage.entry(format!("{}:{k}", s.id)).or_insert(v);
            }
            b.notes.extend(s.builder.notes);
            b.cost = match (b.cost, s.builder.cost) {
                (Some(x), Some(y)) => Some(x + y),
                (x, y) => x.or(y),
            };
            for (m, c) in s.builder.models {
                *b.models.entry(m).or_default() += c;
            }
        }
        finish_record(&mut t, &b);
        t.steps = b.steps;
        t.notes.extend(notes);
        if entries.iter().all(Entry::sidechain) && entries.iter().any(Entry::is_node) {
            t.notes.push("every line is a sidechain: a sub-agent transcript read without its session".into());
        }
        if bad > 0 {
            t.notes.push(format!("{bad} unreadable line(s) skipped (see the diagnostics)"));
        }
        t.notes
            .push("Claude Code transcripts carry no verdict: outcome comes from a verdict file keyed by the task id or session id".into());
        out.emit(t);
        Ok(())
    }
}

/// `claude -p --output-format stream-json` output (JSON Lines, or a JSON array of the events).
pub struct ClaudeCodeStream;

impl Adapter for ClaudeCodeStream {
    fn name(&self) -> &'static str {
        "claude-code-stream"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Claude Code stream-json output (system/init, assistant, user, result events)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let (shape, pre) = match (&p.jsonl, &p.json) {
            (Some(l), _) => (l, ""),
            (None, Some(j)) if j.top_is_array => (j, "[]."),
            (None, Some(j)) => (j, ""),
            _ => return Err("not JSON".into()),
        };
        let kind = shape.str(&format!("{pre}type")).unwrap_or_default();
        let sub = shape.str(&format!("{pre}subtype")).unwrap_or_default();
        if kind == "system" && sub == "init" && (shape.has(&format!("{pre}tools")) || shape.has(&format!("{pre}session_id"))) {
            return marker("stream-json system/init event");
        }
        if matches!(kind, "system" | "assistant" | "user" | "result")
            && shape.has(&format!("{pre}session_id"))
            && !shape.has(&format!("{pre}sessionId"))
        {
            return structure(format!("stream-json {kind} event with session_id"));
        }
        Err("no stream-json system/init event".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let mut diags = Vec::new();
        let entries = read_entries(&src, 0, &mut diags, "Claude Code stream-json event")?;
        let bad = diags.len();
        out.diagnostics.extend(diags);
        if entries.is_empty() {
            return Err(lines::nothing_readable(&src, "stream-json event", "each line is one event: system, assistant, user or result"));
        }
        let mut t = crate::model::Trajectory::new(
            task_from_path(&unit.primary.path),
            HARNESS,
            self.name(),
            self.version(),
            vec![src.provenance("transcript")],
        );
        t.provenance.format_version = Some("claude-code-stream-json".into());
        let mut b = Builder::default();
        let mut result: Option<&Entry> = None;
        for e in &entries {
            match (e.kind(), e.raw.subtype.as_deref()) {
                ("system", Some("init")) => {
                    if let Some(tools) = &e.raw.tools {
                        t.declared_tools = chat_api::declared_tools(&Value::Array(tools.clone()));
                    }
                    t.model = t.model.take().or_else(|| e.raw.model.clone());
                    t.harness_version = t.harness_version.take().or_else(|| e.raw.claude_code_version.clone());
                    t.session_id = t.session_id.take().or_else(|| e.raw.session_id.clone());
                    let failed: Vec<String> = e
                        .raw
                        .mcp_servers
                        .iter()
                        .flatten()
                        .filter(|s| s.get("status").and_then(Value::as_str).is_some_and(|st| st != "connected"))
                        .filter_map(|s| s.get("name").and_then(Value::as_str).map(ToString::to_string))
                        .collect();
                    if !failed.is_empty() {
                        t.notes.push(format!("MCP servers not connected at start: {}", failed.join(", ")));
                    }
                }
                ("result", _) => {
                    result = Some(e);
                    if let Some(s) = &e.raw.session_id {
                        b.session_ids.insert(s.clone());
                    }
                }
                _ => b.entry(e, None),
            }
        }
        b.settle_tokens();
        t.termination = match result {
            Some(r) => result_termination(&r.raw, &b),
            None => {
                let mut x = termination_from_steps(&b);
                if x.kind != TerminationKind::Unknown {
                    x.detail = Some("the stream has no result event; the end was read from the last message".into());
                } else {
                    x.detail = Some("the stream ended without a result event (the run was cut off)".into());
                }
                x
            }
        };
        finish_record(&mut t, &b);
        if let Some(r) = result {
            let raw = &r.raw;
            if let Some(c) = raw.total_cost_usd {
                t.usage.cost_usd = Some(c);
            }
            if let Some(ms) = raw.duration_ms {
                t.usage.wall_seconds = Some(ms / 1000.0);
            }
            // The result's usage is the run's total; it wins over the sum of messages.
            if let Some(k) = raw.usage.as_ref().and_then(chat_anthropic::tokens) {
                t.usage.prompt_tokens = k.prompt.or(t.usage.prompt_tokens);
                t.usage.completion_tokens = k.completion.or(t.usage.completion_tokens);
                t.usage.cached_tokens = k.cached.or(t.usage.cached_tokens);
            }
            if let Some(n) = raw.num_turns {
                t.notes.push(format!("result: num_turns {n}"));
            }
        }
        t.steps = b.steps;
        if bad > 0 {
            t.notes.push(format!("{bad} unreadable event(s) skipped (see the diagnostics)"));
        }
        t.notes.push("stream-json carries no verdict: outcome comes from a verdict file keyed by the task id or session id".into());
        out.emit(t);
        Ok(())
    }
}

/// How a stream-json `result` event says the run ended.
#[expect(clippy::cast_precision_loss, reason = "turn counts are far below 2^52")]
fn result_termination(r: &RawLine, b: &Builder) -> Termination {
    let sub = r.subtype.as_deref().unwrap_or("result");
    let text = r.result.as_ref().map(crate::ingest::adapters::shared::common::content_text).unwrap_or_default();
    let errors = r.errors.as_ref().map(crate::ingest::adapters::shared::common::content_text).unwrap_or_default();
    let mut t = match sub {
        "error_max_turns" => {
            let mut t = Termination::budget(Budget::Steps, Enforcer::Harness);
            t.consumed = r.num_turns.map(|n| n as f64);
            t
        }
        "error_max_budget_usd" => {
            let mut t = Termination::budget(Budget::Cost, Enforcer::Harness);
            t.consumed = r.total_cost_usd;
            t
        }
        "error_max_structured_output_retries" => Termination::budget(Budget::FormatErrors, Enforcer::Harness),
        "error_during_execution" => {
            let mut t = Termination::of(TerminationKind::HarnessError);
            t.detail = Some(if errors.is_empty() { text.clone() } else { errors.clone() }.chars().take(300).collect());
            t
        }
        _ if r.is_error == Some(true) => api_error_termination(if text.is_empty() { &errors } else { &text }),
        _ => {
            let from_steps = termination_from_steps(b);
            if from_steps.kind == TerminationKind::AgentStoppedWithoutFinish || from_steps.kind == TerminationKind::Budget {
                from_steps
            } else {
                Termination::of(TerminationKind::AgentStoppedWithoutFinish)
            }
        }
    };
    t.raw = Some(sub.to_string());
    t.source = Some("stream-json result.subtype".into());
    t
}

/// Reads a tool list capture (the `tools` array a harness sent to the API, or an object holding
/// it) into declared tools: Anthropic `{name, description, input_schema}` and OpenAI
/// `{type: function, function: {name, description}}` entries alike.
///
/// # Errors
/// When the file cannot be read, is not JSON, or holds no tool list.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn tools_capture(path: &Path, display: &str) -> Result<Vec<DeclaredTool>, InputError> {
    let src = Source::read(path, display)?;
    let v: Value = src.json("tool list capture")?;
    let list = if v.is_array() { Some(&v) } else { v.get("tools") };
    list.and_then(chat_api::declared_tools).filter(|d| !d.is_empty()).ok_or_else(|| {
        InputError::new(InputErrorKind::Schema, display, "read a tool list: no `tools` array of named tools")
            .with_help("a capture is the `tools` array sent to the API: [{\"name\", \"description\", \"input_schema\"}, ...]")
    })
}

/// A tool list captured from a harness's API traffic (Claude Code's 33 built-ins plus MCP
/// tools, say): a declared registry for a closed-source harness, read by
/// `coroner registry import`, never a transcript.
pub struct ToolsCapture;

impl Adapter for ToolsCapture {
    fn name(&self) -> &'static str {
        "tools-capture"
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "tool registry capture (the `tools` array sent to the API); import it with `coroner registry import`, it is not a transcript"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let j = p.json.as_ref().ok_or("not JSON")?;
        if j.top_is_array && j.has("[].name") && (j.has("[].input_schema") || j.has("[].inputSchema")) {
            return marker("list of tools with name and input_schema");
        }
        if j.top_is_array && j.str("[].type") == Some("function") && j.has("[].function") {
            return marker("list of OpenAI function tools");
        }
        let top: Vec<&String> = j.keys.keys().filter(|k| !k.contains('.')).collect();
        if j.keys.get("tools") == Some(&crate::ingest::probe::Scalar::Array)
            && top.iter().all(|k| matches!(k.as_str(), "tools" | "model" | "version" | "tool_choice" | "captured_at" | "source"))
        {
            return structure("an object holding only a tools list");
        }
        Err("not a list of tool definitions".into())
    }
}

/// The `agent-<id>.meta.json` beside a sub-agent transcript (`agentType`, ...).
pub struct ClaudeCodeSubagentMeta;

impl Adapter for ClaudeCodeSubagentMeta {
    fn name(&self) -> &'static str {
        "claude-code-subagent-meta"
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "Claude Code sub-agent metadata (agent-<id>.meta.json; read with its session)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        if p.name.starts_with("agent-") && p.name.ends_with(".meta.json") {
            return marker("agent-<id>.meta.json");
        }
        Err("not an agent-<id>.meta.json".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Vec<Entry> {
        let src = Source::from_bytes(Path::new("s.jsonl"), "s.jsonl", text.as_bytes().to_vec());
        let mut d = Vec::new();
        let e = read_entries(&src, 0, &mut d, "line").unwrap();
        assert!(d.is_empty());
        e
    }

    #[test]
    fn the_main_line_folds_parallel_results_and_labels_a_rewound_branch() {
        let text = [
            r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"go"}}"#,
            r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}"#,
            r#"{"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":"s","message":{"id":"m1","content":[{"type":"tool_use","id":"t2","name":"Read","input":{}}]}}"#,
            r#"{"type":"user","uuid":"r1","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}"#,
            r#"{"type":"user","uuid":"r2","parentUuid":"a2","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"y"}]}}"#,
            r#"{"type":"user","uuid":"old","parentUuid":"r2","sessionId":"s","message":{"role":"user","content":"first try"}}"#,
            r#"{"type":"assistant","uuid":"oa","parentUuid":"old","sessionId":"s","message":{"id":"m2","content":[{"type":"text","text":"no"}]}}"#,
            r#"{"type":"user","uuid":"new","parentUuid":"r2","sessionId":"s","message":{"role":"user","content":"second try"}}"#,
            r#"{"type":"assistant","uuid":"na","parentUuid":"new","sessionId":"s","message":{"id":"m3","content":[{"type":"text","text":"yes"}]}}"#,
        ]
        .join("\n");
        let e = entries(&text);
        let (main, notes, branches) = main_line(&e);
        assert_eq!(main, [0, 1, 2, 3, 4, 7, 8]);
        assert!(notes.iter().any(|n| n.contains("branch from line 6 (2 line(s), forking at line 5)")), "{notes:?}");
        assert_eq!(
            branches,
            BTreeMap::from([(5, "branch:old".to_string()), (6, "branch:old".to_string())]),
            "both lines of the branch, by its root"
        );
    }

    #[test]
    fn sidechains_are_labelled_by_agent_or_root() {
        let text = [
            r#"{"type":"user","uuid":"s1","parentUuid":null,"isSidechain":true,"sessionId":"s","message":{"role":"user","content":"sub"}}"#,
            r#"{"type":"assistant","uuid":"s2","parentUuid":"s1","isSidechain":true,"sessionId":"s","message":{"id":"m","content":[]}}"#,
            r#"{"type":"user","uuid":"x1","parentUuid":null,"isSidechain":true,"agentId":"a9","sessionId":"s","message":{"role":"user","content":"sub2"}}"#,
        ]
        .join("\n");
        let labels = sidechain_labels(&entries(&text));
        assert_eq!(labels.values().collect::<Vec<_>>(), ["sidechain:s1", "sidechain:s1", "sidechain:a9"]);
    }

    #[test]
    fn exit_codes_from_failed_bash_results() {
        assert_eq!(exit_code_in("Exit code 1\nOn branch master"), Some(1));
        assert_eq!(exit_code_in("Error: Exit code 127\nnot found"), Some(127));
        assert_eq!(exit_code_in("File not found"), None);
    }

    #[test]
    fn generic_file_names_take_the_directory() {
        assert_eq!(task_from_path(Path::new("runs/fix-bug/transcript.jsonl")), "fix-bug");
        assert_eq!(task_from_path(Path::new("p/de3b8b19-5bc0.jsonl")), "de3b8b19-5bc0");
    }
}
