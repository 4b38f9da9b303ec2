//! Claude Code session transcripts, with the sub-agent transcripts written beside them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::HARNESS;
use super::steps::Builder;
use super::tree::{Entry, main_line, read_entries, sidechain_labels};
use crate::ingest::adapters::agent_cli::task_from_path;
use crate::ingest::adapters::shared::build::to_u32;
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, FileSet, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{SourceFile, Step, Trajectory};

/// A sub-agent transcript claimed by its session: its steps, to go in before the result that
/// names the agent.
struct SubAgent {
    id: String,
    steps: Vec<Step>,
    notes: Vec<String>,
    /// Its usage, cost and models, to add to the session's.
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
        b.sb.note(format!("sub-agent {id}: {} unreadable line(s) skipped", diags.len()));
    }
    if let Some(kind) = meta.and_then(|m| m.get("agentType")).and_then(Value::as_str) {
        b.sb.note(format!("sub-agent {id} is a {kind} agent"));
    }
    let (steps, notes) = std::mem::take(&mut b.sb).into_parts();
    let notes = notes.into_iter().map(|n| if n.starts_with("sub-agent") { n } else { format!("sub-agent {id}: {n}") }).collect();
    Ok((SubAgent { id, steps, notes, builder: b }, src.provenance("subagent_transcript")))
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

    /// Samples and corpus span 1.0.51 to 2.1.14; `costUSD` lines from before 1.0 are read too (`tree.rs`).
    fn versions(&self) -> &'static str {
        "CLI 1.0–2.1 (+ pre-1.0 costUSD)"
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
        let mut t =
            Trajectory::new(task_from_path(&unit.primary.path), HARNESS, self.name(), self.version(), vec![src.provenance("transcript")]);
        t.provenance.format_version = Some("claude-code-session-jsonl".into());
        b.end_signals(&mut t);

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
            let ix = to_u32(t.provenance.files.len());
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
                let at = b.agent_links.iter().find(|(a, _)| *a == s.id).map_or(b.sb.len(), |(_, ix)| *ix);
                (at, s)
            })
            .collect();
        inserts.sort_by(|x, y| y.0.cmp(&x.0).then(y.1.id.cmp(&x.1.id)));
        for (at, s) in inserts {
            let n = s.steps.len();
            b.sb.steps.splice(at..at, s.steps);
            b.bookkeeping.splice(at..at, std::iter::repeat_n(false, n));
            for (k, v) in s.builder.usage {
                b.usage.entry(format!("{}:{k}", s.id)).or_insert(v);
            }
            for n in s.notes {
                b.sb.note(n);
            }
            b.cost = match (b.cost, s.builder.cost) {
                (Some(x), Some(y)) => Some(x + y),
                (x, y) => x.or(y),
            };
            for (m, c) in s.builder.models {
                *b.models.entry(m).or_default() += c;
            }
        }
        b.finish(&mut t);
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

    fn versions(&self) -> &'static str {
        "CLI 2.x subagents/ layout"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        if p.name.starts_with("agent-") && p.name.ends_with(".meta.json") {
            return marker("agent-<id>.meta.json");
        }
        Err("not an agent-<id>.meta.json".into())
    }
}
