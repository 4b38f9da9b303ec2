//! Registries declared outside source code: a captured `tools` array (what a closed-source
//! harness such as Claude Code sent to the model API), an API request body, a `system/init`
//! line's tool names, or another `registry.json`; and loading `registry.json` itself.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{Confidence, Namespace, REGISTRY_VERSION, Registry, Tool, ToolSet};
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::source::Source;
use crate::util::display_path;

/// How an imported list is filed.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Harness name; defaults to the existing registry's, else the file's stem.
    pub harness: Option<String>,
    /// Files the list under this harness version instead of as the unversioned list.
    pub version: Option<String>,
}

/// Reads a `registry.json` written by `coroner registry extract` or `import`.
///
/// # Errors
/// An unreadable file, invalid JSON, or a record of another layout version, as a diagnostic
/// with line and column.
#[expect(clippy::result_large_err, reason = "InputError is the ingest diagnostic, returned the same way there")]
pub fn load(path: &Path) -> Result<Registry, InputError> {
    let shown = display_path(path);
    let src = Source::read(path, &shown)?;
    let reg: Registry = src.json("a registry")?;
    if reg.registry_version != REGISTRY_VERSION {
        return Err(InputError::new(InputErrorKind::Schema, &shown, format!("read registry layout version {}", reg.registry_version))
            .with_help(format!("this coroner reads version {REGISTRY_VERSION}; extract the registry again")));
    }
    Ok(reg)
}

/// Imports the tool list in `path` into `into` (or a new registry).
///
/// # Errors
/// An unreadable file, invalid JSON, or JSON holding no tool list.
#[expect(clippy::result_large_err, reason = "InputError is the ingest diagnostic, returned the same way there")]
pub fn import(path: &Path, opts: &ImportOptions, into: Option<Registry>) -> Result<Registry, InputError> {
    let shown = display_path(path);
    let src = Source::read(path, &shown)?;
    let text = src.text()?;
    let file_name = path.file_name().map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
    let raw_tools = tool_values(text).ok_or_else(|| match serde_json::from_str::<&RawValue>(text) {
        Err(e) => InputError::from_json(&shown, &src.bytes, "a tool list", &e),
        Ok(_) => InputError::new(InputErrorKind::Schema, &shown, "find a tool list in the file").with_help(
            "import reads a JSON array of tools ({\"name\": …} or {\"function\": {\"name\": …}} or names), an object with a `tools` array, or JSON Lines whose first record with `tools` has one",
        ),
    })?;
    let mut tools: Vec<Tool> = Vec::new();
    let mut seen = BTreeSet::new();
    for raw in raw_tools {
        let Some(name) = tool_name(raw.get()) else { continue };
        if !seen.insert(name.clone()) {
            continue;
        }
        let line = src.offset_of(raw.get()).map_or(1, |o| u32::try_from(src.line_of(o)).unwrap_or(u32::MAX));
        tools.push(Tool {
            name,
            file: file_name.clone(),
            line,
            shape: "import".into(),
            confidence: Confidence::High,
            conditional: None,
            via: None,
            occurrences: 1,
        });
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let namespaces = mcp_namespaces(&tools, &file_name);
    let mut reg = into.unwrap_or_else(|| {
        let stem = path.file_stem().map_or_else(|| "unknown".into(), |s| s.to_string_lossy().into_owned());
        Registry::new(opts.harness.clone().unwrap_or(stem), shown.clone())
    });
    if let Some(h) = &opts.harness {
        reg.harness.clone_from(h);
    }
    *reg.files.entry("json".into()).or_default() += 1;
    match &opts.version {
        Some(v) => {
            reg.versions.insert(v.clone(), ToolSet { tools, namespaces, source: Some(shown), sha256: Some(src.sha256.clone()) });
            if reg.sha256.is_empty() || reg.tools.is_empty() {
                // The digest of a versions-only registry covers every imported file.
                let all: Vec<String> = reg.versions.values().filter_map(|s| s.sha256.clone()).collect();
                reg.sha256 = crate::util::sha256_hex(all.join("\n").as_bytes());
            }
        }
        None => {
            reg.tools = tools;
            reg.namespaces = namespaces;
            reg.sha256.clone_from(&src.sha256);
            reg.root = shown;
        }
    }
    Ok(reg)
}

/// The raw tool entries of a document, whatever wraps them.
fn tool_values(text: &str) -> Option<Vec<&RawValue>> {
    #[derive(Deserialize)]
    struct WithTools<'a> {
        #[serde(borrow)]
        tools: Vec<&'a RawValue>,
    }
    if let Ok(list) = serde_json::from_str::<Vec<&RawValue>>(text) {
        return Some(list);
    }
    if let Ok(w) = serde_json::from_str::<WithTools<'_>>(text) {
        return Some(w.tools);
    }
    // JSON Lines (a stream-json log): the first record that carries a tool list.
    text.lines().find_map(|line| serde_json::from_str::<WithTools<'_>>(line).ok().map(|w| w.tools))
}

/// `"Bash"`, `{"name": "Bash", …}` or `{"type": "function", "function": {"name": …}}`.
fn tool_name(raw: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Named {
        name: Option<String>,
        function: Option<Function>,
    }
    #[derive(Deserialize)]
    struct Function {
        name: String,
    }
    if let Ok(s) = serde_json::from_str::<String>(raw) {
        return Some(s);
    }
    let n: Named = serde_json::from_str(raw).ok()?;
    n.name.or(n.function.map(|f| f.name))
}

/// `mcp__<server>__<tool>` names mean the harness attaches MCP servers at run time: each
/// server seen is a namespace, and so is `mcp__*` itself.
fn mcp_namespaces(tools: &[Tool], file: &str) -> Vec<Namespace> {
    let mut patterns = BTreeSet::new();
    for t in tools {
        if let Some(rest) = t.name.strip_prefix("mcp__") {
            patterns.insert("mcp__*".to_string());
            if let Some((server, _)) = rest.split_once("__") {
                patterns.insert(format!("mcp__{server}__*"));
            }
        }
    }
    let line_of = |p: &str| tools.iter().find(|t| t.name.starts_with(p.trim_end_matches('*'))).map(|t| t.line);
    patterns
        .into_iter()
        .map(|p| Namespace { line: line_of(&p), file: Some(file.to_string()), pattern: p, shape: "import".into() })
        .collect()
}
