//! A study: the arms being compared, where their transcripts are, and how they were run.
//!
//! # Format
//!
//! `study.toml` (schema: `schemas/study.schema.json`):
//!
//! ```toml
//! title = "mini-swe-agent vs terminus-2"
//! [[arm]]
//! name = "mini-swe-agent, think"
//! inputs = ["runs/a/**/result.json", "runs/a-extra"]   # paths or globs, relative to the file
//! harness = "mini-swe-agent"       # optional: overrides what the transcripts say
//! registry = "registries/mini.json" # optional: a registry file, or a source directory to extract
//! verdicts = "verdicts/a.csv"       # optional: a verdict file joined to every trajectory
//! [arm.budget]
//! step_limit = 250
//! time_limit_seconds = 900
//! ```
//!
//! Without a study file, arms come from the transcripts' metadata (`harness/model`), or from
//! `--arm NAME=PATH` on the command line.

use std::path::{Path, PathBuf};

use miette::{Diagnostic, NamedSource, SourceSpan};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A study file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Study {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(rename = "arm")]
    pub arms: Vec<ArmSpec>,
}

/// One arm: a harness + model configuration and its transcripts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArmSpec {
    pub name: String,
    /// Files, directories or glob patterns, relative to the study file.
    pub inputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    /// A registry JSON file, or a harness source directory to extract one from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    /// A verdict file (CSV/JSON `task_id,outcome`, SWE-bench report) for this arm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdicts: Option<String>,
    #[serde(default)]
    pub budget: BudgetSpec,
}

/// The limits an arm ran under, when known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_limit_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_limit: Option<u64>,
}

/// A study file that does not load.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("failed to load the study {file}: {message}")]
#[diagnostic(code(coroner::study::invalid))]
pub struct StudyError {
    pub file: String,
    pub message: String,
    #[source_code]
    src: Option<NamedSource<String>>,
    #[label("here")]
    span: Option<SourceSpan>,
    #[help]
    help: Option<String>,
}

impl StudyError {
    fn new(file: &str, message: impl Into<String>) -> Self {
        Self { file: file.into(), message: message.into(), src: None, span: None, help: None }
    }
}

/// A study with its paths resolved.
#[derive(Debug, Clone)]
pub struct ResolvedArm {
    pub spec: ArmSpec,
    pub inputs: Vec<PathBuf>,
    pub registry: Option<PathBuf>,
    pub verdicts: Option<PathBuf>,
}

impl Study {
    /// Reads and checks a study file, resolving inputs against its directory.
    ///
    /// # Errors
    /// Invalid TOML (with a span), no arms, duplicate arm names, inputs that match nothing.
    pub fn load(path: &Path) -> Result<(Self, Vec<ResolvedArm>), StudyError> {
        let shown = crate::util::display_path(path);
        let text = std::fs::read_to_string(path).map_err(|e| StudyError::new(&shown, format!("cannot read it: {e}")))?;
        let study: Study = toml::from_str(&text).map_err(|e| StudyError {
            file: shown.clone(),
            message: e.message().to_string(),
            src: Some(NamedSource::new(&shown, text.clone())),
            span: e.span().map(|r| SourceSpan::new(r.start.into(), r.end - r.start)),
            help: Some("see the study format in the README (`[[arm]]` with `name` and `inputs`)".into()),
        })?;
        if study.arms.is_empty() {
            return Err(StudyError::new(&shown, "it names no arm"));
        }
        let base = path.parent().unwrap_or(Path::new(""));
        let mut names = std::collections::BTreeSet::new();
        let mut resolved = Vec::new();
        for arm in &study.arms {
            if !names.insert(arm.name.clone()) {
                return Err(StudyError::new(&shown, format!("arm `{}` is named twice", arm.name)));
            }
            let mut inputs = Vec::new();
            for pattern in &arm.inputs {
                let matched = expand(base, pattern);
                if matched.is_empty() {
                    return Err(StudyError {
                        help: Some("paths and globs are relative to the study file".into()),
                        ..StudyError::new(&shown, format!("input `{pattern}` of arm `{}` matches nothing", arm.name))
                    });
                }
                inputs.extend(matched);
            }
            resolved.push(ResolvedArm {
                spec: arm.clone(),
                inputs,
                registry: arm.registry.as_ref().map(|r| base.join(r)),
                verdicts: arm.verdicts.as_ref().map(|r| base.join(r)),
            });
        }
        Ok((study, resolved))
    }
}

/// A path or a glob, relative to `base`, in sorted order.
fn expand(base: &Path, pattern: &str) -> Vec<PathBuf> {
    let full = if Path::new(pattern).is_absolute() { PathBuf::from(pattern) } else { base.join(pattern) };
    if !pattern.contains(['*', '?', '[']) {
        return if full.exists() { vec![full] } else { Vec::new() };
    }
    let mut v: Vec<PathBuf> = glob::glob(&full.to_string_lossy()).map(|g| g.filter_map(Result::ok).collect()).unwrap_or_default();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_study_points_at_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("study.toml");
        std::fs::write(&p, "[[arm]]\nname = \"a\"\ninputs = \"not-a-list\"\n").unwrap();
        let e = Study::load(&p).unwrap_err();
        assert!(e.span.is_some(), "{e:?}");
        std::fs::write(&p, "[[arm]]\nname = \"a\"\ninputs = [\"missing/*\"]\n").unwrap();
        assert!(Study::load(&p).unwrap_err().message.contains("matches nothing"));
    }
}

pub mod dataset;
pub mod run;
pub use run::{Also, ArmRun, StudyRun, run_inputs, run_study};
