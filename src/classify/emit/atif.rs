//! `classify --emit atif`: the ATIF trajectory each verdict was read from, written again with
//! the verdict in its top-level `extra.coroner`, so Harbor's viewer (and anything else that
//! reads ATIF) can show coroner's label beside the transcript.
//!
//! Why `extra`: the spec gives every ATIF object a free `extra` dictionary and forbids unknown
//! keys elsewhere (its models are `extra = "forbid"`), so the annotated file still validates.
//! Evidence names the ATIF `step_id`s (and the `trajectory_id` of an embedded subagent), not
//! coroner's step indexes: a reader of the file has only the file's ids.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::model::{SourceSpan, Trajectory, Verdict};

/// What a record must keep for its ATIF file to be annotated once its verdict is known.
#[derive(Debug, Clone)]
pub struct AtifSource {
    /// The ATIF file as given on the command line (relative paths resolve from the current
    /// directory, as ingest read them).
    pub path: String,
    /// Which of the record's files it is.
    file_index: u32,
    /// Each coroner step's span, by step index.
    spans: Vec<Option<SourceSpan>>,
}

/// The record's ATIF file, when it was read from one (a standalone ATIF trajectory or a Harbor
/// trial's `agent/trajectory.json`): its first transcript file.
#[must_use]
pub fn source(t: &Trajectory) -> Option<AtifSource> {
    if !matches!(t.provenance.adapter.as_str(), "atif" | "harbor") {
        return None;
    }
    let (ix, f) = t.provenance.files.iter().enumerate().find(|(_, f)| f.role == "transcript")?;
    Some(AtifSource { path: f.path.clone(), file_index: u32::try_from(ix).ok()?, spans: t.steps.iter().map(|s| s.source_span).collect() })
}

#[derive(Deserialize)]
struct RawTrajectory<'a> {
    #[serde(default)]
    trajectory_id: Option<String>,
    #[serde(borrow, default)]
    steps: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    subagent_trajectories: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct RawStep {
    step_id: Value,
}

/// Where each ATIF step lies in the file: byte range, `step_id`, and the `trajectory_id` of the
/// embedded subagent it belongs to (none for the root's own steps).
type StepRange = (std::ops::Range<usize>, Value, Option<String>);

/// The steps of the trajectory `json` (a slice of `text`) and of the subagents embedded in it;
/// `embedded` when it is itself one.
fn step_ranges(text: &str, json: &str, embedded: bool, out: &mut Vec<StepRange>) -> Result<(), serde_json::Error> {
    let t: RawTrajectory<'_> = serde_json::from_str(json)?;
    let sub = embedded.then(|| t.trajectory_id.clone().unwrap_or_default());
    for s in &t.steps {
        let start = s.get().as_ptr() as usize - text.as_ptr() as usize;
        let id = serde_json::from_str::<RawStep>(s.get()).map(|r| r.step_id).unwrap_or(Value::Null);
        out.push((start..start + s.get().len(), id, sub.clone()));
    }
    for a in t.subagent_trajectories.iter().flatten() {
        step_ranges(text, a.get(), true, out)?;
    }
    Ok(())
}

/// The ATIF step a coroner step was read from.
fn atif_step(ranges: &[StepRange], span: SourceSpan) -> Option<&StepRange> {
    let at = usize::try_from(span.offset).ok()?;
    // The innermost: an embedded subagent's step lies inside no root step, but be exact anyway.
    ranges.iter().filter(|(r, _, _)| r.contains(&at)).min_by_key(|(r, _, _)| r.len())
}

/// The verdict as it goes into `extra.coroner`.
fn annotation(v: &Verdict, src: &AtifSource, ranges: &[StepRange], rules_digest: &str) -> Value {
    let evidence: Vec<Value> = v
        .evidence
        .iter()
        .map(|e| {
            let mut steps: Vec<Value> = Vec::new();
            for &i in &e.steps {
                let Some(span) = src.spans.get(i as usize).copied().flatten().filter(|s| s.file == src.file_index) else { continue };
                let Some((_, id, sub)) = atif_step(ranges, span) else { continue };
                let step = match sub {
                    None => json!({ "step_id": id }),
                    Some(t) => json!({ "step_id": id, "trajectory_id": t }),
                };
                if !steps.contains(&step) {
                    steps.push(step);
                }
            }
            let mut o = json!({ "rule": e.rule, "supports": e.supports, "steps": steps, "excerpt": e.excerpt });
            if let Some(d) = &e.detail {
                o["detail"] = json!(d);
            }
            o
        })
        .collect();
    json!({
        "tool": "coroner",
        "version": env!("CARGO_PKG_VERSION"),
        "rules_digest": rules_digest,
        "trajectory_id": v.trajectory_id,
        "task_id": v.task_id,
        "outcome": v.outcome.as_str(),
        "primary": v.primary,
        "classes": v.classes,
        "flags": v.flags,
        "reason": v.reason,
        "evidence": evidence,
    })
}

/// Where the annotated copy of `shown` goes below `dir`: the same relative path, with only its
/// plain components (no root, no `..`), so no input path can write outside `dir`.
#[must_use]
pub fn out_path(dir: &Path, shown: &str) -> PathBuf {
    let mut p = dir.to_path_buf();
    for c in Path::new(shown).components() {
        if let Component::Normal(n) = c {
            p.push(n);
        }
    }
    p
}

/// Writes the annotated copy of `src`'s file for verdict `v` below `dir`; returns where.
///
/// # Errors
/// The file cannot be read again or is no longer the ATIF it was, or the copy cannot be written.
pub fn write(dir: &Path, src: &AtifSource, v: &Verdict, rules_digest: &str) -> std::io::Result<PathBuf> {
    let bad = |e: serde_json::Error| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", src.path));
    let text = std::fs::read_to_string(&src.path)?;
    let mut ranges = Vec::new();
    step_ranges(&text, &text, false, &mut ranges).map_err(bad)?;
    let mut doc: Value = serde_json::from_str(&text).map_err(bad)?;
    let Some(obj) = doc.as_object_mut() else {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: not an ATIF trajectory object", src.path)));
    };
    let extra = obj.entry("extra").or_insert_with(|| json!({}));
    if !extra.is_object() {
        *extra = json!({});
    }
    extra["coroner"] = annotation(v, src, &ranges, rules_digest);
    let out = out_path(dir, &src.path);
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut bytes = serde_json::to_vec_pretty(&doc).map_err(bad)?;
    bytes.push(b'\n');
    std::fs::write(&out, bytes)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_paths_stay_below_the_directory() {
        let d = Path::new("/out");
        assert_eq!(out_path(d, "../../etc/passwd"), Path::new("/out/etc/passwd"));
        assert_eq!(out_path(d, "/abs/run/t.json"), Path::new("/out/abs/run/t.json"));
        assert_eq!(out_path(d, "./run/t.json"), Path::new("/out/run/t.json"));
    }

    #[test]
    fn a_span_finds_the_innermost_step_and_its_subagent() {
        let text = r#"{"steps":[{"step_id":1,"source":"user","message":"a"},{"step_id":2,"source":"agent","message":"b"}],
            "subagent_trajectories":[{"trajectory_id":"s1","steps":[{"step_id":1,"source":"agent","message":"c"}]}]}"#;
        let mut r = Vec::new();
        step_ranges(text, text, false, &mut r).unwrap();
        assert_eq!(r.len(), 3);
        let at = |needle: &str| {
            let off = text.find(needle).unwrap() as u64;
            atif_step(&r, SourceSpan { file: 0, offset: off, len: 1, line: 1 }).map(|(_, id, sub)| (id.clone(), sub.clone()))
        };
        assert_eq!(at("\"b\""), Some((json!(2), None)));
        assert_eq!(at("\"c\""), Some((json!(1), Some("s1".to_string()))));
    }
}
