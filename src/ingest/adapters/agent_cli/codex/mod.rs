//! Codex CLI: session rollouts (`~/.codex/sessions/.../rollout-*.jsonl`) and
//! `codex exec --json` event streams.
//!
//! A rollout line is `{timestamp, type, payload}`: `session_meta` (id, `cli_version`),
//! `turn_context` (model), `response_item` (the Responses API items the model saw: `message`,
//! `reasoning`, `function_call` with JSON arguments inside a string, `function_call_output`
//! whose `output` is often JSON inside a string holding `output` and `metadata.exit_code`,
//! `custom_tool_call` for `apply_patch`, `local_shell_call`, `web_search_call`), `event_msg`
//! (`token_count` usage, `turn_aborted`, `error`, `exec_command_end`, ...) and `compacted`.
//! Older rollouts, from before `RolloutLine`, put the session meta on the first line and the
//! items themselves on the others. `event_msg` user and agent messages repeat the items, so they
//! are read only from rollouts that have no items.
//!
//! `codex exec --json` prints `thread.started`, `turn.started`, `item.started` /
//! `item.updated` / `item.completed` (`agent_message`, `reasoning`, `command_execution`,
//! `file_change`, `mcp_tool_call`, `web_search`, `todo_list`, `collab_tool_call`, `error`),
//! `turn.completed` with usage, `turn.failed` and `error`. Versions 0.44–0.45 wrote
//! `item_type` and `assistant_message`, the experimental stream `session.created`; before 0.44
//! `--json` printed the raw protocol events (`{"id", "msg": {"type": ...}}`), read here too.
//! A call's tool name is Codex's own (`shell`, `apply_patch`, `update_plan`, `server__tool`)
//! because the exec stream names items, not tools. Neither format carries a verdict.
//!
//! `steps` turns items and events into steps; `rollout` and `exec` are the two adapters. How
//! the run ended is left to interpretation: the adapters record the event the log ended with
//! (`task_complete`, `turn.completed`, a `turn_aborted` reason, an error's message) and the
//! model's context window as signals, and `rules/harnesses/codex.toml` says what they mean.

use std::path::Path;

use serde_json::Value;

use crate::ingest::adapters::shared::lines::{self, Line};
use crate::ingest::diag::InputError;
use crate::ingest::source::Source;

mod exec;
mod rollout;
mod steps;

pub use exec::CodexExec;
pub use rollout::CodexRollout;

const HARNESS: &str = "codex";

/// An MCP tool as Codex names it to the model: `server__tool`.
fn mcp_name(server: Option<&Value>, tool: Option<&Value>) -> String {
    let s = server.and_then(Value::as_str).unwrap_or("mcp");
    let t = tool.and_then(Value::as_str).unwrap_or("unknown");
    format!("{s}__{t}")
}

/// Codex's own `rollout-<time>-<id>` names give way to the session id; other names are read
/// as any agent CLI's.
fn task_id(p: &Path, session: Option<&str>) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    match session {
        Some(s) if name.starts_with("rollout-") => s.to_string(),
        _ => super::task_from_path(p),
    }
}

/// Reads every line as a JSON object; bad lines become diagnostics.
fn objects<'a>(src: &'a Source, diags: &mut Vec<InputError>, what: &str) -> Vec<(Line<'a>, Value)> {
    let mut out = Vec::new();
    for line in lines::split(src, diags) {
        match lines::parse::<Value>(src, &line, what) {
            Ok(v) if v.is_object() => out.push((line, v)),
            Ok(_) => diags.push(lines::schema_error(src, &line, what, "expected a JSON object")),
            Err(e) => diags.push(e),
        }
    }
    out
}
