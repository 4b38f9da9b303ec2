//! Claude Code session JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`), one file per run,
//! gathered in batches of [`BATCH_SIZE`] with the verdict file a benchmark runner writes
//! beside them (`verdicts.csv`: `session_id,outcome`), since sessions carry no verdict.
//!
//! Each line is one event: the user prompt, one line per assistant content block (text, then
//! `tool_use`), and a user line per `tool_result` with its `toolUseResult`. The agent reads
//! with Read and Grep, edits with Edit and Write, runs commands with Bash; a tool it invents is
//! answered with Claude Code's `<tool_use_error>`; an overloaded API leaves an
//! `isApiErrorMessage` line; a run that answers in text ends the session there.

use std::path::PathBuf;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::script::{Act, End, Script};
use super::text;
use super::{GenError, Out, Sink};

/// Sessions per batch directory.
pub const BATCH_SIZE: usize = 250;

const VERSION: &str = "2.1.14";

pub struct ClaudeSink {
    batch: usize,
    rows: Vec<(String, &'static str)>,
}

impl ClaudeSink {
    #[must_use]
    pub fn new(_seed: u64) -> Self {
        Self { batch: 0, rows: Vec::new() }
    }

    fn dir(&self) -> PathBuf {
        PathBuf::from(format!("batch-{:03}", self.batch))
    }

    fn flush(&mut self, out: &mut Out) -> Result<(), GenError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let mut csv = String::from("session_id,outcome\n");
        for (id, o) in &self.rows {
            csv.push_str(&format!("{id},{o}\n"));
        }
        out.write(&self.dir().join("verdicts.csv"), csv.as_bytes())?;
        self.rows.clear();
        self.batch += 1;
        Ok(())
    }
}

impl Sink for ClaudeSink {
    fn add(&mut self, s: &Script, rng: &mut ChaCha8Rng, out: &mut Out) -> Result<String, GenError> {
        let session = text::uuid(rng);
        let lines = session_lines(s, &session, rng);
        let mut bytes = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for l in &lines {
            bytes.extend_from_slice(l.as_bytes());
            bytes.push(b'\n');
        }
        let project = format!("-testbed-{}", s.task.replace('_', "-"));
        out.write(&self.dir().join(project).join(format!("{session}.jsonl")), &bytes)?;
        let outcome = match (&s.end, s.passed) {
            (End::Infra { .. }, _) => "errored",
            (_, Some(true)) => "passed",
            _ => "failed",
        };
        self.rows.push((session.clone(), outcome));
        if self.rows.len() >= BATCH_SIZE {
            self.flush(out)?;
        }
        Ok(session)
    }

    fn finish(&mut self, out: &mut Out) -> Result<(), GenError> {
        self.flush(out)
    }
}

/// Writes the lines of one session, chaining `parentUuid`s.
struct Lines<'a> {
    session: &'a str,
    lines: Vec<String>,
    parent: Value,
    clock: f64,
}

impl Lines<'_> {
    fn push(&mut self, rng: &mut ChaCha8Rng, mut v: Value) -> String {
        let uuid = text::uuid(rng);
        let mut line = json!({
            "parentUuid": self.parent,
            "isSidechain": false,
            "userType": "external",
            "cwd": "/testbed",
            "sessionId": self.session,
            "version": VERSION,
            "gitBranch": "main",
        });
        if let (Value::Object(l), Value::Object(extra)) = (&mut line, v.take()) {
            l.extend(extra);
            l.insert("uuid".into(), json!(uuid));
            l.insert("timestamp".into(), json!(text::rfc3339(self.clock)));
        }
        self.lines.push(line.to_string());
        self.parent = json!(uuid);
        uuid
    }
}

fn usage(t: &super::script::Turn) -> Value {
    json!({
        "input_tokens": 4,
        "cache_creation_input_tokens": t.completion_tokens,
        "cache_read_input_tokens": t.prompt_tokens,
        "output_tokens": t.completion_tokens,
        "service_tier": "standard",
    })
}

/// The tool Claude Code would use for a shell-level action, with its input and the text the
/// tool returns.
fn tool_for(cmd: &str, output: &str) -> (&'static str, Value, String) {
    let path = |p: &str| format!("/testbed/{p}");
    if let Some(f) = cmd.strip_prefix("cat ").filter(|f| !f.contains(['>', '<', '|', ' '])) {
        let numbered: String = output.lines().enumerate().map(|(i, l)| format!("{:>6}→{l}\n", i + 1)).collect();
        return ("Read", json!({ "file_path": path(f) }), numbered);
    }
    if let Some(rest) = cmd.strip_prefix("sed -n '")
        && let Some((range, f)) = rest.split_once("p' ")
    {
        let (a, b) = range.split_once(',').unwrap_or((range, range));
        let a: u64 = a.parse().unwrap_or(1);
        let b: u64 = b.parse().unwrap_or(a);
        return ("Read", json!({ "file_path": path(f), "offset": a, "limit": b.saturating_sub(a) + 1 }), output.to_string());
    }
    if let Some(rest) = cmd.strip_prefix("grep -rn '")
        && let Some((pat, tail)) = rest.split_once("' ")
    {
        let dir = tail.split_whitespace().next().unwrap_or(".");
        return ("Grep", json!({ "pattern": pat, "path": path(dir), "output_mode": "content", "-n": true }), output.to_string());
    }
    if let Some(rest) = cmd.strip_prefix("sed -i 's/") {
        let mut parts = rest.splitn(3, '/');
        let old = parts.next().unwrap_or_default();
        let new = parts.next().unwrap_or_default();
        let f = parts.next().and_then(|x| x.split_once("' ")).map_or("", |(_, f)| f);
        let result = format!(
            "The file {} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n   41→        if not other:\n   42→            {new}\n",
            path(f)
        );
        return ("Edit", json!({ "file_path": path(f), "old_string": old, "new_string": new, "replace_all": false }), result);
    }
    if let Some(rest) = cmd.strip_prefix("cat > ") {
        let f = rest.split_once(".new").map_or(rest, |(f, _)| f);
        let content = rest.split_once("<<'EOF'\n").and_then(|(_, c)| c.split_once("EOF\n")).map_or("", |(c, _)| c);
        return (
            "Write",
            json!({ "file_path": path(f), "content": content }),
            format!("The file {} has been updated successfully.", path(f)),
        );
    }
    ("Bash", json!({ "command": cmd, "description": "Run a shell command" }), output.to_string())
}

fn session_lines(s: &Script, session: &str, rng: &mut ChaCha8Rng) -> Vec<String> {
    let mut l = Lines { session, lines: Vec::new(), parent: Value::Null, clock: s.start };
    l.push(rng, json!({ "type": "user", "message": { "role": "user", "content": s.issue } }));
    let model = "claude-sonnet-4-5-20250929";
    for (k, t) in s.turns.iter().enumerate() {
        let last = k + 1 == s.turns.len();
        l.clock += t.secs * 0.6;
        let msg_id = format!("msg_{}", text::mixed(rng, 24));
        let req = format!("req_{}", text::mixed(rng, 24));
        let assistant = |content: Value, stop: Value| {
            json!({
                "message": { "model": model, "id": msg_id, "type": "message", "role": "assistant", "content": [content], "stop_reason": stop, "stop_sequence": null, "usage": usage(t) },
                "requestId": req,
                "type": "assistant",
            })
        };
        // A reply in text only ends a headless session: the plan, the give-up, the claim.
        let final_text = matches!(t.act, Act::NoAction | Act::Submit { .. });
        if final_text {
            l.push(rng, assistant(json!({ "type": "text", "text": t.thought }), json!("end_turn")));
            break;
        }
        l.push(rng, assistant(json!({ "type": "text", "text": t.thought }), Value::Null));
        let call_id = format!("toolu_{}", text::mixed(rng, 24));
        let (name, input, result, is_error, tool_result) = match &t.act {
            Act::Shell { cmd, output, code } => {
                let (name, input, result) = tool_for(cmd, output);
                let tur = if name == "Bash" {
                    json!({ "stdout": output, "stderr": "", "interrupted": false, "isImage": false })
                } else {
                    json!({ "type": "text", "file": { "filePath": input.get("file_path").cloned().unwrap_or(Value::Null), "numLines": output.lines().count() } })
                };
                let result = if *code != 0 { format!("Error: Exit code {code}\n{result}") } else { result };
                (name, input, result, *code != 0, tur)
            }
            Act::Unknown { tool, args } => {
                let msg = format!("Error: No such tool available: {tool}");
                (*tool, args.clone(), format!("<tool_use_error>{msg}</tool_use_error>"), true, json!(msg))
            }
            Act::NoAction | Act::Submit { .. } => unreachable!("handled above"),
        };
        let assistant_uuid =
            l.push(rng, assistant(json!({ "type": "tool_use", "id": call_id, "name": name, "input": input }), json!("tool_use")));
        if last && matches!(s.end, End::Infra { .. }) {
            break;
        }
        l.clock += t.secs * 0.4;
        let mut block = json!({ "tool_use_id": call_id, "type": "tool_result", "content": result });
        if is_error {
            block["is_error"] = json!(true);
        }
        l.push(
            rng,
            json!({ "type": "user", "message": { "role": "user", "content": [block] }, "toolUseResult": tool_result, "sourceToolAssistantUUID": assistant_uuid }),
        );
    }
    if let End::Infra { .. } = &s.end {
        l.clock += rng.random_range(30.0..300.0);
        let text = if rng.random_bool(0.5) {
            "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}".to_string()
        } else {
            "API Error: Request timed out. Retried 10 times: RetryError (APIConnectionError: Connection error.)".to_string()
        };
        let id = text::uuid(rng);
        l.push(
            rng,
            json!({
                "message": { "id": id, "model": "<synthetic>", "role": "assistant", "stop_reason": "stop_sequence", "stop_sequence": "", "type": "message", "usage": { "input_tokens": 0, "output_tokens": 0 }, "content": [{ "type": "text", "text": text }] },
                "type": "assistant",
                "isApiErrorMessage": true,
            }),
        );
    }
    l.lines
}
