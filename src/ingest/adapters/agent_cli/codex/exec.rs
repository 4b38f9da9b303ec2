//! `codex exec --json` event streams: thread/turn/item events, and the raw protocol events
//! `--json` printed before 0.44.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::steps::{Builder, Last};
use super::{HARNESS, mcp_name, objects, task_id};
use crate::ingest::adapters::shared::common::{content_text, tool_call, uint};
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{CallRef, Role, SourceSpan, ToolResult, Trajectory};

/// `codex exec --json` output.
pub struct CodexExec;

impl Adapter for CodexExec {
    fn name(&self) -> &'static str {
        "codex-exec"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "codex exec --json event stream (thread/turn/item events; before 0.44, protocol events)"
    }

    fn versions(&self) -> &'static str {
        "<0.44 protocol, 0.44–0.45, 0.46+ items"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shape = p.jsonl.as_ref().or(p.json.as_ref().filter(|j| !j.top_is_array)).ok_or("not JSON Lines")?;
        let kind = shape.str("type").unwrap_or_default();
        if matches!(kind, "thread.started" | "session.created" | "turn.started" | "item.started" | "item.completed") {
            return marker(format!("exec event {kind}"));
        }
        if shape.has("msg") && shape.str("msg.type").is_some() && shape.has("id") {
            return marker("protocol event {id, msg}");
        }
        if shape.has("sandbox") && shape.has("approval") {
            return structure("exec configuration summary (pre-0.44 --json)");
        }
        Err("no thread/turn/item events".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let mut diags = Vec::new();
        let objs = objects(&src, &mut diags, "codex exec event");
        let bad = diags.len();
        out.diagnostics.extend(diags);
        if objs.is_empty() {
            return Err(lines::nothing_readable(
                &src,
                "codex exec event",
                "each line is one event: {\"type\": \"item.completed\", \"item\": {...}}",
            ));
        }
        let mut b = Builder::default();
        let mut legacy = false;
        // Item id → (step, call): an item's call is made when it starts, its result when it ends.
        let mut item_calls: HashMap<String, CallRef> = HashMap::new();
        let mut done: HashSet<String> = HashSet::new();
        for (line, v) in &objs {
            let span = Some(line.span(0));
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            if let Some(msg) = v.get("msg").filter(|m| m.is_object()) {
                legacy = true;
                b.event(msg, span, None, true, true);
                continue;
            }
            match kind {
                "thread.started" | "session.created" | "session.resumed" => {
                    let id = v.get("thread_id").or_else(|| v.get("session_id")).and_then(Value::as_str).map(ToString::to_string);
                    if let Some(id) = id {
                        b.threads.insert(id.clone());
                        b.session = b.session.take().or(Some(id));
                    }
                }
                "turn.started" => b.turns += 1,
                "turn.completed" => {
                    if let Some(u) = v.get("usage") {
                        let n = |k: &str| uint(u.get(k)).unwrap_or(0);
                        b.totals.add([n("input_tokens"), n("cached_input_tokens"), n("output_tokens"), n("reasoning_output_tokens")]);
                    }
                    b.last = Some(Last::Status("type", kind.to_string(), span));
                }
                "turn.failed" => {
                    let msg = v.pointer("/error/message").and_then(Value::as_str).unwrap_or("turn failed").to_string();
                    b.other(Role::Environment, format!("turn failed: {msg}"), span, None);
                    b.last = Some(Last::Error("turn.failed.error.message", msg, span));
                }
                "error" => {
                    let msg = v.get("message").and_then(Value::as_str).unwrap_or("error").to_string();
                    b.other(Role::Environment, format!("error: {msg}"), span, None);
                    b.last = Some(Last::Error("error.message", msg, span));
                }
                "item.started" | "item.updated" | "item.completed" => {
                    let Some(item) = v.get("item").filter(|i| i.is_object()) else {
                        out.diagnostics.push(lines::schema_error(&src, line, "a codex exec event", "`item` is missing or not an object"));
                        continue;
                    };
                    exec_item(&mut b, item, kind == "item.completed", span, &mut item_calls, &mut done);
                }
                "" if v.get("prompt").and_then(Value::as_str).is_some() => {
                    let p = v.get("prompt").and_then(Value::as_str).unwrap_or_default().to_string();
                    b.other(Role::User, p, span, None);
                }
                "" if v.get("sandbox").is_some() => {
                    legacy = true;
                    if let Some(m) = v.get("model").and_then(Value::as_str) {
                        b.models.insert(m.to_string());
                        b.last_model = Some(m.to_string());
                    }
                }
                other => b.sb.ignore(&format!("event/{other}")),
            }
        }
        let task = task_id(&unit.primary.path, None);
        let mut t = Trajectory::new(task, HARNESS, self.name(), self.version(), vec![src.provenance("transcript")]);
        t.provenance.format_version = Some(if legacy { "codex-exec-json-legacy" } else { "codex-exec-json" }.into());
        if bad > 0 {
            t.notes.push(format!("{bad} unreadable line(s) skipped (see the diagnostics)"));
        }
        let unfinished = item_calls.keys().filter(|k| !done.contains(*k)).count();
        if unfinished > 0 {
            t.notes.push(format!("{unfinished} item(s) started and never completed"));
        }
        b.finish(&mut t);
        out.emit(t);
        Ok(())
    }
}

/// One exec item event. Calls are made when an item first appears; a completed item gets its
/// result. Before 0.46 the type field was `item_type` and messages `assistant_message`.
fn exec_item(
    b: &mut Builder,
    item: &Value,
    completed: bool,
    span: Option<SourceSpan>,
    item_calls: &mut HashMap<String, CallRef>,
    done: &mut HashSet<String>,
) {
    let kind = item.get("type").or_else(|| item.get("item_type")).and_then(Value::as_str).unwrap_or_default();
    let id = item.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
    let s = |k: &str| item.get(k).and_then(Value::as_str).map(ToString::to_string);
    if done.contains(&id) {
        return;
    }
    match kind {
        "agent_message" | "assistant_message" | "plan" => {
            if completed {
                b.add_text(&s("text").unwrap_or_default(), span, None);
                done.insert(id);
            }
        }
        "reasoning" => {
            if completed {
                b.add_reasoning(s("text"));
                done.insert(id);
            }
        }
        "error" => {
            if completed {
                b.other(Role::Environment, format!("error: {}", s("message").unwrap_or_default()), span, None);
                done.insert(id);
            }
        }
        "command_execution" | "file_change" | "mcp_tool_call" | "web_search" | "todo_list" | "collab_tool_call" => {
            let (name, args) = match kind {
                "command_execution" => {
                    ("shell".to_string(), serde_json::json!({"command": item.get("command").cloned().unwrap_or(Value::Null)}))
                }
                "file_change" => {
                    ("apply_patch".to_string(), serde_json::json!({"changes": item.get("changes").cloned().unwrap_or(Value::Null)}))
                }
                "mcp_tool_call" => {
                    (mcp_name(item.get("server"), item.get("tool")), item.get("arguments").cloned().unwrap_or(serde_json::json!({})))
                }
                "web_search" => ("web_search".to_string(), serde_json::json!({"query": item.get("query").cloned().unwrap_or(Value::Null)})),
                "todo_list" => ("update_plan".to_string(), serde_json::json!({"plan": item.get("items").cloned().unwrap_or(Value::Null)})),
                _ => (
                    s("tool").unwrap_or_else(|| "collab".into()),
                    serde_json::json!({"prompt": item.get("prompt").cloned().unwrap_or(Value::Null), "receiver_thread_ids": item.get("receiver_thread_ids").cloned().unwrap_or(Value::Null)}),
                ),
            };
            match item_calls.get(&id) {
                Some(at) => b.sb.steps[at.step as usize].tool_calls[at.call as usize].arguments = args,
                None => {
                    if let Some(at) = b.add_call(tool_call(Some(id.clone()), name, &args), span, None) {
                        item_calls.insert(id.clone(), at);
                    }
                }
            }
            if !completed || matches!(kind, "web_search" | "todo_list") {
                if completed {
                    done.insert(id);
                }
                return;
            }
            let status = s("status").unwrap_or_default();
            let mut r = match kind {
                "command_execution" => {
                    let mut r = ToolResult::new(s("aggregated_output").unwrap_or_default());
                    r.exit_code = item.get("exit_code").and_then(Value::as_i64);
                    if status == "declined" && r.output.is_empty() {
                        r.output = "declined".into();
                    }
                    r
                }
                "file_change" => {
                    let changes: Vec<String> = item
                        .get("changes")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default()
                        .iter()
                        .map(|c| {
                            format!(
                                "{} {}",
                                c.get("kind").and_then(Value::as_str).unwrap_or("?"),
                                c.get("path").and_then(Value::as_str).unwrap_or("?")
                            )
                        })
                        .collect();
                    ToolResult::new(format!("{status}: {}", changes.join(", ")))
                }
                "mcp_tool_call" => {
                    let err = item.pointer("/error/message").and_then(Value::as_str);
                    let out =
                        err.map_or_else(|| content_text(item.pointer("/result/content").unwrap_or(&Value::Null)), ToString::to_string);
                    ToolResult::new(out)
                }
                _ => ToolResult::new(status.clone()),
            };
            r.call_id = Some(id.clone());
            r.is_error = matches!(status.as_str(), "failed" | "declined")
                || r.exit_code.is_some_and(|c| c != 0)
                || item.get("error").is_some_and(|e| !e.is_null());
            b.add_result(r, span, None);
            done.insert(id);
        }
        other => b.sb.ignore(&format!("item/{other}")),
    }
}
