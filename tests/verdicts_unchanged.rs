//! Classification of every sample and every corpus file, trajectory by trajectory, against the
//! verdicts recorded before the "adapters decode, profiles interpret" redesign
//! (`tests/baseline/verdicts.tsv`). A trajectory may differ only when
//! `tests/baseline/changes.toml` lists it with its new line and the reason the old one was wrong
//! (a sample added since is listed the same way, with what shape it adds).
//!
//! The baseline is never rewritten: it was written before the redesign (commit `70b6437`), and
//! a change since is a line in `changes.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use coroner::model::{Trajectory, Verdict};
use coroner::util::snake;
use serde::Deserialize;

use crate::common::{classified_with, corpus, root, samples};

/// Sample directories whose records are not trajectories to compare (predictions, registries).
const SKIP: &[&str] = &["predictions", "registries", "invalid", "verdicts"];

/// One verdict reduced to what a change of interpretation could move.
fn line(t: &Trajectory, v: &Verdict) -> String {
    let m = &v.mechanics;
    let mut ev: Vec<String> = v.evidence.iter().map(|e| format!("{}@{:?}", e.rule, e.steps)).collect();
    ev.sort();
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:?}/{:?}\t{}",
        snake(&v.outcome),
        v.primary.as_deref().unwrap_or("-"),
        v.classes.join(","),
        v.flags.join(","),
        snake(&m.termination),
        m.budget.as_ref().map_or_else(|| "-".to_string(), snake),
        m.unknown_tool_calls,
        t.termination.enforced_by.as_ref().map_or_else(|| "-".to_string(), snake),
        t.termination.consumed,
        t.termination.limit,
        ev.join(" ")
    )
}

/// `key -> line` for every trajectory of one input set; the key is the input set, the source
/// file relative to the root, and the trajectory id.
fn verdicts(set: &str, inputs: &[PathBuf], verdict_files: &[PathBuf], out: &mut BTreeMap<String, String>) {
    let paths: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    for (t, v) in classified_with(&paths, verdict_files) {
        let src = t.provenance.files.first().map(|f| f.path.clone()).unwrap_or_default();
        let src = src.replace(&root().display().to_string(), "").replace("/../shared/", "shared/");
        out.insert(format!("{set}\t{src}\t{}", t.id), line(&t, &v));
    }
}

fn current() -> (BTreeMap<String, String>, bool) {
    let mut out = BTreeMap::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(samples("")).unwrap().filter_map(Result::ok).map(|e| e.path()).collect();
    dirs.sort();
    for d in dirs {
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        if !d.is_dir() || SKIP.contains(&name.as_str()) {
            continue;
        }
        verdicts(&format!("samples/{name}"), &[d], &[], &mut out);
    }
    let have_corpus = match corpus("") {
        Some(c) => {
            verdicts("corpus", &[c], &[samples("magentic-one/verdicts.csv")], &mut out);
            true
        }
        None => false,
    };
    (out, have_corpus)
}

#[derive(Deserialize)]
struct Changes {
    #[serde(default, rename = "change")]
    changes: Vec<Change>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    key: String,
    now: String,
    why: String,
}

fn parse(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let mut parts = l.splitn(4, '\t');
            let key = format!("{}\t{}\t{}", parts.next()?, parts.next()?, parts.next()?);
            Some((key, parts.next()?.to_string()))
        })
        .collect()
}

#[test]
fn every_verdict_is_as_before_or_a_listed_change() {
    let base_path = root().join("tests/baseline/verdicts.tsv");
    let (now, have_corpus) = current();
    let base = parse(&std::fs::read_to_string(&base_path).unwrap());
    let changes: Changes = toml::from_str(&std::fs::read_to_string(root().join("tests/baseline/changes.toml")).unwrap()).unwrap();
    let mut listed: BTreeMap<&str, &Change> = BTreeMap::new();
    for c in &changes.changes {
        assert!(!c.why.trim().is_empty(), "change {} has no reason", c.key);
        assert!(listed.insert(c.key.as_str(), c).is_none(), "change {} listed twice", c.key);
    }
    let mut problems = Vec::new();
    for (k, old) in &base {
        if k.starts_with("corpus\t") && !have_corpus {
            continue;
        }
        let Some(new) = now.get(k) else {
            problems.push(format!("gone: {k}"));
            continue;
        };
        match listed.get(k.as_str()) {
            Some(c) if c.now == *new => {}
            Some(c) => problems.push(format!("{k}\n  listed as: {}\n  now:       {new}", c.now)),
            None if new != old => problems.push(format!("{k}\n  before: {old}\n  now:    {new}")),
            None => {}
        }
    }
    // A sample added since the baseline is listed with its line, like a change.
    for (k, new) in now.iter().filter(|(k, _)| !base.contains_key(*k)) {
        match listed.get(k.as_str()) {
            Some(c) if c.now == *new => {}
            Some(c) => problems.push(format!("{k}\n  listed as: {}\n  now:       {new}", c.now)),
            None => problems.push(format!("new trajectory neither in the baseline nor listed: {k}\n  now: {new}")),
        }
    }
    for k in listed.keys().filter(|k| !base.contains_key(**k) && !now.contains_key(**k)) {
        problems.push(format!("listed change for a trajectory that does not exist: {k}"));
    }
    assert!(problems.is_empty(), "{} verdicts differ from the baseline:\n{}", problems.len(), problems.join("\n"));
}
