//! Which tool names a run really offered, and where that knowledge comes from.
//!
//! In order of authority: a registry extracted from the harness's source (`--registry`), the
//! tools the transcript itself declares, the harness profile's list, nothing. The verdict
//! records which one judged, because "hallucinated" means something only against a real list.

use std::collections::BTreeSet;

use crate::model::Trajectory;
use crate::registry::near::near_miss;
use crate::registry::{Knowledge, Registry};
use crate::rules::profile::Profile;

/// A registry given on the command line, with the file it came from.
#[derive(Debug, Clone)]
pub struct LoadedRegistry {
    pub file: String,
    pub registry: Registry,
}

/// The tool list one trajectory is judged against.
pub struct Oracle<'a> {
    registry: Option<&'a Registry>,
    version: Option<&'a str>,
    names: BTreeSet<&'a str>,
    profile: &'a Profile,
    /// `registry:<file>`, `declared`, `profile:<name>` or `none`.
    pub source: String,
}

impl<'a> Oracle<'a> {
    #[must_use]
    pub fn for_trajectory(t: &'a Trajectory, profile: &'a Profile, registries: &'a [LoadedRegistry]) -> Self {
        let harness = t.harness.to_ascii_lowercase();
        let matches = |r: &LoadedRegistry| {
            let h = r.registry.harness.to_ascii_lowercase();
            h == harness || h == profile.name || profile.harnesses.iter().any(|a| a.eq_ignore_ascii_case(&h))
        };
        if let Some(r) = registries.iter().find(|r| matches(r)).or_else(|| (registries.len() == 1).then(|| &registries[0])) {
            return Self {
                registry: Some(&r.registry),
                version: t.harness_version.as_deref(),
                names: BTreeSet::new(),
                profile,
                source: format!("registry:{}", r.file),
            };
        }
        if let Some(d) = t.declared_tools.as_ref().filter(|d| !d.is_empty()) {
            return Self {
                registry: None,
                version: None,
                names: d.iter().map(|x| x.name.as_str()).collect(),
                profile,
                source: "declared".into(),
            };
        }
        if !profile.tools.is_empty() {
            return Self {
                registry: None,
                version: None,
                names: profile.tools.iter().map(String::as_str).collect(),
                profile,
                source: format!("profile:{}", profile.name),
            };
        }
        Self { registry: None, version: None, names: BTreeSet::new(), profile, source: "none".into() }
    }

    /// Whether a real list (not only the harness's rejections) judges names.
    #[must_use]
    pub fn has_list(&self) -> bool {
        self.source != "none"
    }

    /// What the list says of `name`.
    #[must_use]
    pub fn knows(&self, name: &str) -> Knowledge {
        if self.profile.is_dynamic(name) {
            let p = self
                .profile
                .dynamic_namespaces
                .iter()
                .find(|p| p.strip_suffix('*').is_some_and(|x| name.starts_with(x)))
                .cloned()
                .unwrap_or_default();
            return Knowledge::Dynamic(p);
        }
        if let Some(r) = self.registry {
            return r.knows(name, self.version);
        }
        if !self.has_list() || self.names.contains(name) {
            return Knowledge::Known;
        }
        Knowledge::Unknown { near_miss: near_miss(name, self.names.iter().copied()).map(ToString::to_string) }
    }
}
