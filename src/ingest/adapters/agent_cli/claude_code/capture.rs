//! Tool lists captured from a harness's API traffic: a declared registry, not a transcript.

use std::path::Path;

use serde_json::Value;

use crate::ingest::adapters::chat::api as chat_api;
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, FileRole, Sniff, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::DeclaredTool;

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

    fn versions(&self) -> &'static str {
        "Anthropic and OpenAI tool schemas"
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
