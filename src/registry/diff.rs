//! Offered versus exercised: the registry against the calls runs made and the tool lists
//! transcripts declare.
//!
//! A call the registry does not know is not yet a hallucination. When the harness executed it
//! without error, the harness knew the tool and the registry did not: it is `registry_suspect`,
//! evidence about the registry, never about the model.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::model::{Knowledge, Registry};
use crate::model::Trajectory;

/// What the runs did with one tool name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Usage {
    pub name: String,
    pub calls: u64,
    /// Calls whose result came back without error.
    pub ok: u64,
    /// Calls whose result was an error (the harness ran the tool, or refused it).
    pub errors: u64,
    /// Calls the harness answered with "no such tool".
    pub rejected: u64,
    /// Calls no result was paired with.
    pub unanswered: u64,
    /// Where it was first called: trajectory id and step index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<(String, u32)>,
}

/// Why a called name is absent from the registry, in the order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// In a namespace filled at run time (`mcp__*`).
    Dynamic,
    /// Executed without error at least once: the registry is incomplete.
    RegistrySuspect,
    /// Never executed, and spelled like a declared tool.
    NearMiss,
    /// Refused or failed every time, and like no declared tool: a hallucination candidate.
    Rejected,
    /// No result tells what the harness did with it.
    Unanswered,
}

impl Verdict {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dynamic => "dynamic",
            Self::RegistrySuspect => "registry_suspect",
            Self::NearMiss => "near_miss",
            Self::Rejected => "rejected",
            Self::Unanswered => "unanswered",
        }
    }
}

/// A called name the registry does not declare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Absent {
    #[serde(flatten)]
    pub usage: Usage,
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near_miss: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// A name that transcripts declared (their run-time registry) and the source registry lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DeclaredOnly {
    pub name: String,
    /// Trajectories that declared it.
    pub trajectories: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near_miss: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// The run-time registries of the transcripts against the source registry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DeclaredComparison {
    /// Trajectories that carry a declared tool list.
    pub trajectories: u64,
    /// Names both declare.
    pub in_both: Vec<String>,
    /// Declared at run time, absent from the source registry: evidence the registry is
    /// incomplete (or that the runs used another version).
    pub declared_only: Vec<DeclaredOnly>,
    /// In the source registry, declared by no transcript: conditional or disabled tools.
    pub source_only: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DiffReport {
    pub harness: String,
    pub registry_sha256: String,
    /// The version every call was judged against, when one was forced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub offered: u64,
    pub trajectories: u64,
    pub calls: u64,
    /// Declared and called.
    pub exercised: Vec<Usage>,
    /// Declared and never called.
    pub unused: Vec<String>,
    /// Called and not declared.
    pub absent: Vec<Absent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared: Option<DeclaredComparison>,
}

/// Compares `registry` with the calls and declared tools of `trajectories`.
///
/// Each trajectory is judged against `version` when given, else its own `harness_version`
/// (see [`Registry::view`] for versions the registry lacks).
#[must_use]
pub fn diff(registry: &Registry, trajectories: &[Trajectory], version: Option<&str>) -> DiffReport {
    let mut known: BTreeMap<String, Usage> = BTreeMap::new();
    let mut absent: BTreeMap<String, (Usage, Knowledge)> = BTreeMap::new();
    let mut calls = 0;
    let mut declared: BTreeMap<String, u64> = BTreeMap::new();
    let mut declaring = 0;
    for t in trajectories {
        let v = version.or(t.harness_version.as_deref());
        for (cref, call) in t.calls() {
            calls += 1;
            let k = registry.knows(&call.name, v);
            let usage = if k == Knowledge::Known {
                known.entry(call.name.clone()).or_default()
            } else {
                &mut absent.entry(call.name.clone()).or_insert_with(|| (Usage::default(), k)).0
            };
            usage.name.clone_from(&call.name);
            usage.calls += 1;
            usage.first.get_or_insert_with(|| (t.id.clone(), cref.step));
            match t.result_of(cref) {
                None => usage.unanswered += 1,
                Some(r) if r.unknown_tool.is_some() => usage.rejected += 1,
                Some(r) if r.is_error => usage.errors += 1,
                Some(_) => usage.ok += 1,
            }
        }
        if let Some(tools) = &t.declared_tools {
            declaring += 1;
            let mut names: Vec<&str> = tools.iter().map(|d| d.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            for n in names {
                *declared.entry(n.to_string()).or_default() += 1;
            }
        }
    }
    let (offered, _) = registry.view(version);
    let unused: Vec<String> = {
        let mut u: Vec<String> = offered.iter().filter(|t| !known.contains_key(&t.name)).map(|t| t.name.clone()).collect();
        u.sort();
        u.dedup();
        u
    };
    let mut absent: Vec<Absent> = absent
        .into_values()
        .map(|(usage, k)| {
            let (near_miss, namespace) = match k {
                Knowledge::Unknown { near_miss } => (near_miss, None),
                Knowledge::Dynamic(ns) => (None, Some(ns)),
                Knowledge::Known => (None, None),
            };
            let verdict = if namespace.is_some() {
                Verdict::Dynamic
            } else if usage.ok > 0 {
                Verdict::RegistrySuspect
            } else if near_miss.is_some() {
                Verdict::NearMiss
            } else if usage.rejected + usage.errors > 0 {
                Verdict::Rejected
            } else {
                Verdict::Unanswered
            };
            Absent { usage, verdict, near_miss, namespace }
        })
        .collect();
    absent.sort_by(|a, b| (a.verdict, &a.usage.name).cmp(&(b.verdict, &b.usage.name)));
    let declared = (declaring > 0).then(|| {
        let mut cmp = DeclaredComparison { trajectories: declaring, ..DeclaredComparison::default() };
        for (name, n) in &declared {
            match registry.knows(name, version) {
                Knowledge::Known => cmp.in_both.push(name.clone()),
                Knowledge::Dynamic(ns) => {
                    cmp.declared_only.push(DeclaredOnly { name: name.clone(), trajectories: *n, near_miss: None, namespace: Some(ns) });
                }
                Knowledge::Unknown { near_miss } => {
                    cmp.declared_only.push(DeclaredOnly { name: name.clone(), trajectories: *n, near_miss, namespace: None });
                }
            }
        }
        cmp.source_only = offered.iter().filter(|t| !declared.contains_key(&t.name)).map(|t| t.name.clone()).collect();
        cmp.source_only.sort();
        cmp.source_only.dedup();
        cmp
    });
    DiffReport {
        harness: registry.harness.clone(),
        registry_sha256: registry.sha256.clone(),
        version: version.map(str::to_string),
        offered: offered.len() as u64,
        trajectories: trajectories.len() as u64,
        calls,
        exercised: known.into_values().collect(),
        unused,
        absent,
        declared,
    }
}
