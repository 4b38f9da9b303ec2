//! The registry record: which tools a harness offers a model, and where each was found.
//!
//! # Format
//!
//! `registry.json` is one JSON object; its schema is `schemas/registry.schema.json`, generated
//! from these types. `tools` is the harness's list when it has one list; `versions` holds one
//! list per harness version when the list changes between versions (Claude Code's does). Every
//! tool and namespace says where it was found (file relative to `root`, 1-based line) and by
//! which query shape, so a disagreement with a transcript can be checked against the source.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::near::near_miss;

/// Version of this record's layout; bumped when a field changes meaning.
pub const REGISTRY_VERSION: u32 = 1;

/// The tools a harness offers, read from its source code or imported from a captured list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Registry {
    /// Version of this record's layout ([`REGISTRY_VERSION`]).
    pub registry_version: u32,
    /// The harness (`openhands`, `codex`, `claude-code`, ...).
    pub harness: String,
    /// What was read: the source directory as given (several are joined by their common
    /// parent), or the imported file.
    pub root: String,
    /// sha256 over the files read: each file's relative path and sha256, one per line, in
    /// path order. Equal digests mean the registry was extracted from the same bytes.
    pub sha256: String,
    /// Files read, by language.
    #[serde(default)]
    pub files: BTreeMap<String, u64>,
    /// The tool list when the registry holds one list (empty when it only has `versions`).
    #[serde(default)]
    pub tools: Vec<Tool>,
    /// Name patterns filled at run time (`mcp__*`, `<ext>__*`): a call inside one is neither
    /// known nor unknown to the source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<Namespace>,
    /// One tool list per harness version, when the list differs between versions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub versions: BTreeMap<String, ToolSet>,
    /// Registrations whose name is an identifier that no string constant defines: the tool
    /// exists, its name could not be read, so the list is incomplete by these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<Unresolved>,
    /// Files that were not read (syntax errors, too large), with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
}

/// One declared tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    pub name: String,
    /// File relative to the registry's `root`, with `/` separators.
    pub file: String,
    /// 1-based line of the registration.
    pub line: u32,
    /// The registration shape that matched (`go.struct-field`, `python.decorator`, ...), as
    /// the query's `#set! shape` names it; `import` for imported lists.
    pub shape: String,
    pub confidence: Confidence,
    /// The registration sits inside a condition (an `if`, a `match` arm, a ternary): the tool
    /// is offered only in some configurations. The value is the condition's first line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditional: Option<String>,
    /// The constant the name was resolved through, when the source names it by identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// How many registrations of this name were found (the first is reported).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub occurrences: u32,
}

fn one() -> u32 {
    1
}

#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's skip_serializing_if passes a reference")]
fn is_one(n: &u32) -> bool {
    *n == 1
}

/// How sure the extractor is that a match is a tool offered to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// A shape that other data has too (`{name: …, description: …}` alone).
    Low,
    /// A generic shape that tool lists usually have (`{"name": …, "parameters": …}`).
    Medium,
    /// A shape that only tool registrations have (`Tool.define`, `impl Tool`, `@tool`).
    High,
}

impl Confidence {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "low" => Some(Self::Low),
            "medium" => Some(Self::Medium),
            "high" => Some(Self::High),
            _ => None,
        }
    }
}

/// A name pattern whose tools are attached at run time (MCP servers, extensions).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Namespace {
    /// A prefix followed by `*` (`mcp__*`, `mcp__stitch__*`, `developer__*`).
    pub pattern: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// `<lang>.<shape>` when found in source, `import` when derived from an imported list,
    /// `option` when given on the command line.
    pub shape: String,
}

impl Namespace {
    /// The literal prefix of the pattern.
    #[must_use]
    pub fn prefix(&self) -> &str {
        self.pattern.strip_suffix('*').unwrap_or(&self.pattern)
    }

    #[must_use]
    pub fn matches(&self, name: &str) -> bool {
        let p = self.prefix();
        name.len() > p.len() && name.starts_with(p)
    }
}

/// The tool list of one harness version.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ToolSet {
    pub tools: Vec<Tool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<Namespace>,
    /// Where this version's list came from (the imported file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// A registration whose name could not be resolved to a string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Unresolved {
    /// The identifier or expression the source names the tool by.
    pub reference: String,
    pub file: String,
    pub line: u32,
    pub shape: String,
}

/// A file the extractor could not read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    pub file: String,
    /// 1-based line of the problem, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub reason: String,
}

/// What a registry says about a tool name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Knowledge {
    /// The registry declares it.
    Known,
    /// It falls in a namespace filled at run time; the value is the pattern.
    Dynamic(String),
    /// The registry does not declare it; `near_miss` is a declared name it is probably a
    /// misspelling of (`developer.shell` for `developer__shell`).
    Unknown { near_miss: Option<String> },
}

impl Registry {
    /// A digest of everything the registry says (tools, namespaces, versions, the source digest),
    /// for seals: `sha256` alone names the source the list was read from, so a list edited by
    /// hand afterwards would keep it.
    #[must_use]
    pub fn content_digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        crate::util::hex(&Sha256::digest(&bytes))
    }

    /// An empty registry for `harness`.
    #[must_use]
    pub fn new(harness: impl Into<String>, root: impl Into<String>) -> Self {
        Self {
            registry_version: REGISTRY_VERSION,
            harness: harness.into(),
            root: root.into(),
            sha256: String::new(),
            files: BTreeMap::new(),
            tools: Vec::new(),
            namespaces: Vec::new(),
            versions: BTreeMap::new(),
            unresolved: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// The tool list and namespaces for `version`.
    ///
    /// A version the registry holds gives its own list. Otherwise the unversioned list, and
    /// when there is none, the union of every version's list: a call is then judged against
    /// everything any known version offered, which can only make fewer calls unknown.
    #[must_use]
    pub fn view(&self, version: Option<&str>) -> (Vec<&Tool>, Vec<&Namespace>) {
        if let Some(set) = version.and_then(|v| self.versions.get(v)) {
            return (set.tools.iter().collect(), set.namespaces.iter().chain(&self.namespaces).collect());
        }
        if !self.tools.is_empty() || self.versions.is_empty() {
            return (self.tools.iter().collect(), self.namespaces.iter().collect());
        }
        let mut seen = BTreeSet::new();
        let tools = self.versions.values().flat_map(|s| &s.tools).filter(|t| seen.insert(t.name.as_str())).collect();
        let mut ns_seen = BTreeSet::new();
        let namespaces = self
            .namespaces
            .iter()
            .chain(self.versions.values().flat_map(|s| &s.namespaces))
            .filter(|n| ns_seen.insert(n.pattern.as_str()))
            .collect();
        (tools, namespaces)
    }

    /// What the registry says about `name` in `version` (see [`Registry::view`]).
    #[must_use]
    pub fn knows(&self, name: &str, version: Option<&str>) -> Knowledge {
        let (tools, namespaces) = self.view(version);
        if tools.iter().any(|t| t.name == name) {
            return Knowledge::Known;
        }
        // The longest matching prefix names the namespace most precisely.
        if let Some(ns) = namespaces.iter().filter(|n| n.matches(name)).max_by_key(|n| n.prefix().len()) {
            return Knowledge::Dynamic(ns.pattern.clone());
        }
        Knowledge::Unknown { near_miss: near_miss(name, tools.iter().map(|t| t.name.as_str())).map(str::to_string) }
    }

    /// Every version name, for messages.
    #[must_use]
    pub fn version_names(&self) -> Vec<&str> {
        self.versions.keys().map(String::as_str).collect()
    }
}
