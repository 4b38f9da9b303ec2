//! SWE-agent tool bundles: `tools/<bundle>/config.yaml` declares its commands as the keys of
//! a `tools:` mapping, and the agent offers exactly those names to the model.

use std::sync::Arc;

use serde_yaml_ng::Value;

use super::diag::SourceError;
use super::extract::FileOut;
use super::literal::is_tool_name;
use super::model::{Confidence, Tool};

/// Reads one bundle config into `out` (tools, or a diagnostic when it is not valid YAML).
pub(crate) fn read_bundle(rel: &str, text: &Arc<String>, out: &mut FileOut) {
    if let Some(at) = crate::util::yaml_too_deep(text) {
        let what = format!("parse a tool bundle config: nested deeper than {} levels", crate::util::YAML_MAX_DEPTH);
        out.error =
            Some(SourceError::at(rel, text, at, 1, what, "too deep".to_string()).with_help("the bundle was skipped without being parsed"));
        return;
    }
    let doc: Value = match serde_yaml_ng::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let offset = e.location().map_or(0, |l| l.index());
            let msg = e.to_string();
            let short = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            out.error = Some(
                SourceError::at(rel, text, offset, 1, format!("parse a tool bundle config: {short}"), short)
                    .with_help("the bundle was skipped; SWE-agent reads the same file, so it would fail too"),
            );
            return;
        }
    };
    let Some(tools) = doc.get("tools").and_then(Value::as_mapping) else { return };
    let lines = key_lines(text);
    for key in tools.keys() {
        let Some(name) = key.as_str() else { continue };
        if !is_tool_name(name) {
            continue;
        }
        let line = lines.iter().find(|(k, _)| k == name).map_or(1, |(_, l)| *l);
        out.tools.push(Tool {
            name: name.to_string(),
            file: rel.to_string(),
            line,
            shape: "yaml.bundle-tools".into(),
            confidence: Confidence::High,
            conditional: None,
            via: None,
            occurrences: 1,
        });
    }
}

/// Lines of the keys one level below the top-level `tools:` key (serde's YAML values carry
/// no positions, and the layout of these files is simple enough to find them by indent).
fn key_lines(text: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut indent = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let depth = line.len() - trimmed.len();
        if depth == 0 {
            inside = trimmed.starts_with("tools:");
            indent = None;
            continue;
        }
        if !inside {
            continue;
        }
        let d = *indent.get_or_insert(depth);
        if depth == d
            && let Some((key, _)) = trimmed.split_once(':')
        {
            let key = key.trim().trim_matches(['"', '\'']);
            out.push((key.to_string(), u32::try_from(i + 1).unwrap_or(u32::MAX)));
        }
    }
    out
}
