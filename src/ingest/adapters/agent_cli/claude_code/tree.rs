//! The lines of a Claude Code transcript or stream, and the shape of a session's tree: which
//! lines make the main line, which a rewound branch, which a sidechain.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::lines::{self, Line};
use crate::ingest::diag::InputError;
use crate::ingest::source::Source;
use crate::model::SourceSpan;

/// One line of a transcript or a stream. Loose on purpose: line types and fields came and went
/// across versions (`costUSD` until 1.0, `agentId` and `logicalParentUuid` later).
#[derive(Deserialize, Default)]
pub(super) struct RawLine {
    #[serde(rename = "type", default)]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) subtype: Option<String>,
    #[serde(default)]
    pub(super) uuid: Option<String>,
    #[serde(rename = "parentUuid", default)]
    pub(super) parent: Option<String>,
    #[serde(rename = "logicalParentUuid", default)]
    pub(super) logical_parent: Option<String>,
    #[serde(rename = "isSidechain", default)]
    pub(super) sidechain: Option<bool>,
    #[serde(rename = "agentId", default)]
    pub(super) agent_id: Option<String>,
    #[serde(rename = "sessionId", alias = "session_id", default)]
    pub(super) session_id: Option<String>,
    #[serde(default)]
    pub(super) cwd: Option<String>,
    #[serde(default)]
    pub(super) version: Option<String>,
    #[serde(default)]
    pub(super) timestamp: Option<String>,
    #[serde(rename = "isMeta", default)]
    pub(super) meta: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    pub(super) compact_summary: Option<bool>,
    #[serde(rename = "isApiErrorMessage", default)]
    pub(super) api_error: Option<bool>,
    #[serde(default)]
    pub(super) message: Option<RawMessage>,
    #[serde(rename = "toolUseResult", alias = "tool_use_result", default)]
    pub(super) tool_use_result: Option<Value>,
    #[serde(default)]
    pub(super) content: Option<Value>,
    #[serde(default)]
    pub(super) summary: Option<String>,
    #[serde(rename = "costUSD", default)]
    pub(super) cost: Option<f64>,
    #[serde(rename = "compactMetadata", default)]
    pub(super) compact: Option<Value>,
    #[serde(default)]
    pub(super) error: Option<Value>,
    // stream-json
    #[serde(default)]
    pub(super) tools: Option<Vec<Value>>,
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) claude_code_version: Option<String>,
    #[serde(default)]
    pub(super) parent_tool_use_id: Option<String>,
    #[serde(default)]
    pub(super) is_error: Option<bool>,
    #[serde(default)]
    pub(super) num_turns: Option<u64>,
    #[serde(default)]
    pub(super) total_cost_usd: Option<f64>,
    #[serde(default)]
    pub(super) duration_ms: Option<f64>,
    #[serde(default)]
    pub(super) usage: Option<Value>,
    #[serde(default)]
    pub(super) result: Option<Value>,
    #[serde(default)]
    pub(super) errors: Option<Value>,
    #[serde(default)]
    pub(super) mcp_servers: Option<Vec<Value>>,
}

#[derive(Deserialize, Default)]
pub(super) struct RawMessage {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) content: Option<RawContent>,
    #[serde(default)]
    pub(super) stop_reason: Option<String>,
    #[serde(default)]
    pub(super) usage: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawContent {
    Text(String),
    Blocks(Vec<Value>),
}

impl RawContent {
    pub(super) fn to_value(&self) -> Value {
        match self {
            Self::Text(s) => Value::String(s.clone()),
            Self::Blocks(b) => Value::Array(b.clone()),
        }
    }
}

/// A parsed line with where it came from.
pub(super) struct Entry {
    pub(super) line: usize,
    pub(super) span: SourceSpan,
    pub(super) raw: RawLine,
}

impl Entry {
    pub(super) fn kind(&self) -> &str {
        self.raw.kind.as_deref().unwrap_or_default()
    }

    /// A line of the tree: anything with a `uuid` (messages, and the progress and attachment
    /// lines newer versions thread into the chain); only messages become steps.
    pub(super) fn is_node(&self) -> bool {
        self.raw.uuid.is_some()
    }

    pub(super) fn sidechain(&self) -> bool {
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
pub(super) fn read_entries(src: &Source, file_ix: u32, diags: &mut Vec<InputError>, what: &str) -> Result<Vec<Entry>, InputError> {
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
pub(super) fn main_line(entries: &[Entry]) -> (Vec<usize>, Vec<String>, BTreeMap<usize, String>) {
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
pub(super) fn sidechain_labels(entries: &[Entry]) -> BTreeMap<usize, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Vec<Entry> {
        let src = Source::from_bytes(std::path::Path::new("s.jsonl"), "s.jsonl", text.as_bytes().to_vec());
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
}
