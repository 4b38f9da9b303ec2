//! Joins verdicts and statuses from outcome files to the trajectories they describe.
//!
//! An outcome file applies to the trajectories below its scope directory, so two arms in
//! sibling directories with the same task ids never borrow each other's verdicts; when several
//! apply, the nearest (deepest scope) wins, and files given with `--verdicts` win over all.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::model::{Outcome, SourceFile};

/// What an outcome file says about one task (or trial).
#[derive(Debug, Clone, Default)]
pub struct JoinEntry {
    /// Task id, instance id, trial name or session id the entry is keyed by.
    pub key: String,
    pub outcome: Option<Outcome>,
    /// The harness's exit status for the task (`Submitted`, `LimitsExceeded`, ...).
    pub exit_status: Option<String>,
    /// The submitted patch or answer.
    pub submission: Option<String>,
}

/// Where an outcome file applies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Scope {
    /// The directory of the file (the default).
    #[default]
    FileDir,
    /// A given directory and everything below it.
    Dir(PathBuf),
    /// Every trajectory of the run (`--verdicts`).
    Global,
}

#[derive(Debug, Clone, Default)]
pub struct OutcomeFile {
    pub scope: Scope,
    pub entries: Vec<JoinEntry>,
    /// The verdict of a trajectory in scope that no entry names: a file that lists only the
    /// resolved instances (SWE-bench experiments' `results.json`) fails the rest.
    pub otherwise: Option<Outcome>,
}

#[derive(Debug)]
struct Scoped {
    dir: Option<PathBuf>,
    depth: usize,
    file: SourceFile,
    entry: JoinEntry,
}

impl Scoped {
    /// How near its scope is to a trajectory read from `path` (a `--verdicts` file nearest of
    /// all), or `None` when the trajectory is outside it.
    fn rank(&self, path: &Path) -> Option<usize> {
        match &self.dir {
            None => Some(usize::MAX),
            Some(d) if path.starts_with(d) => Some(self.depth),
            Some(_) => None,
        }
    }
}

/// Outcome entries by key.
#[derive(Debug, Default)]
pub struct JoinIndex {
    by_key: HashMap<String, Vec<Scoped>>,
    /// Files' verdicts for what they do not name (the entry's outcome; its key is empty).
    otherwise: Vec<Scoped>,
}

/// One joined fact with the file it came from.
#[derive(Debug, Clone, Copy)]
pub struct Joined<'a, T> {
    pub value: &'a T,
    pub file: &'a SourceFile,
}

impl JoinIndex {
    /// Adds the entries of one file, read from `path`.
    pub fn add(&mut self, path: &Path, file: SourceFile, of: OutcomeFile) {
        let dir = match of.scope {
            Scope::Global => None,
            Scope::FileDir => Some(path.parent().map(Path::to_path_buf).unwrap_or_default()),
            Scope::Dir(d) => Some(d),
        };
        let depth = dir.as_ref().map_or(0, |d| d.components().count());
        if let Some(o) = of.otherwise {
            let entry = JoinEntry { outcome: Some(o), ..JoinEntry::default() };
            self.otherwise.push(Scoped { dir: dir.clone(), depth, file: file.clone(), entry });
        }
        for entry in of.entries {
            self.by_key.entry(entry.key.clone()).or_default().push(Scoped { dir: dir.clone(), depth, file: file.clone(), entry });
        }
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty() && self.otherwise.is_empty()
    }

    fn best<'a, T>(&'a self, keys: &[&str], path: &Path, get: impl Fn(&'a JoinEntry) -> Option<&'a T>) -> Option<Joined<'a, T>> {
        keys.iter().find_map(|key| nearest(self.by_key.get(*key).into_iter().flatten(), path, &get))
    }

    /// A verdict from a `--verdicts` file (global scope) for the first of `keys` that has one.
    #[must_use]
    pub fn global_outcome(&self, keys: &[&str]) -> Option<Joined<'_, Outcome>> {
        keys.iter().find_map(|k| {
            self.by_key
                .get(*k)?
                .iter()
                .find(|s| s.dir.is_none())
                .and_then(|s| s.entry.outcome.as_ref().map(|o| Joined { value: o, file: &s.file }))
        })
    }

    /// The verdict for the first of `keys` that has one, for a trajectory read from `path`; else
    /// the nearest file's verdict for what it does not name.
    #[must_use]
    pub fn outcome(&self, keys: &[&str], path: &Path) -> Option<Joined<'_, Outcome>> {
        self.best(keys, path, |e| e.outcome.as_ref()).or_else(|| nearest(&self.otherwise, path, |e| e.outcome.as_ref()))
    }

    #[must_use]
    pub fn exit_status(&self, keys: &[&str], path: &Path) -> Option<Joined<'_, String>> {
        self.best(keys, path, |e| e.exit_status.as_ref())
    }

    #[must_use]
    pub fn submission(&self, keys: &[&str], path: &Path) -> Option<Joined<'_, String>> {
        self.best(keys, path, |e| e.submission.as_ref())
    }
}

/// The fact `get` finds in the entry whose scope is nearest to `path`, of those that hold one.
fn nearest<'a, T>(
    entries: impl IntoIterator<Item = &'a Scoped>,
    path: &Path,
    get: impl Fn(&'a JoinEntry) -> Option<&'a T>,
) -> Option<Joined<'a, T>> {
    let mut best: Option<(usize, &Scoped, &T)> = None;
    for s in entries {
        let (Some(v), Some(rank)) = (get(&s.entry), s.rank(path)) else { continue };
        // Ties keep the first file in input order, so results never depend on threads.
        if best.as_ref().is_none_or(|(r, _, _)| rank > *r) {
            best = Some((rank, s, v));
        }
    }
    best.map(|(_, s, v)| Joined { value: v, file: &s.file })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OutcomeStatus;

    fn file(p: &str) -> SourceFile {
        SourceFile { path: p.into(), sha256: String::new(), role: "outcome".into() }
    }

    fn entry(key: &str, status: OutcomeStatus) -> JoinEntry {
        JoinEntry { key: key.into(), outcome: Some(Outcome::new(status, "f", "x")), ..JoinEntry::default() }
    }

    #[test]
    fn nearest_scope_wins_and_siblings_never_match() {
        let mut ix = JoinIndex::default();
        ix.add(
            Path::new("runs/a/report.json"),
            file("a"),
            OutcomeFile { scope: Scope::FileDir, entries: vec![entry("t1", OutcomeStatus::Passed)], otherwise: None },
        );
        ix.add(
            Path::new("runs/report.json"),
            file("root"),
            OutcomeFile { scope: Scope::FileDir, entries: vec![entry("t1", OutcomeStatus::Failed)], otherwise: None },
        );
        ix.add(
            Path::new("runs/b/report.json"),
            file("b"),
            OutcomeFile { scope: Scope::FileDir, entries: vec![entry("t2", OutcomeStatus::Passed)], otherwise: None },
        );
        let a = ix.outcome(&["t1"], Path::new("runs/a/x/t1.traj.json")).unwrap();
        assert_eq!(a.file.path, "a");
        let c = ix.outcome(&["t1"], Path::new("runs/c/t1.traj.json")).unwrap();
        assert_eq!(c.file.path, "root");
        assert!(ix.outcome(&["t2"], Path::new("runs/a/t2.traj.json")).is_none());
    }

    #[test]
    fn a_file_of_resolved_ids_fails_the_rest_of_its_scope_only() {
        let mut ix = JoinIndex::default();
        let mut failed = Outcome::new(OutcomeStatus::Failed, "r", "resolved");
        failed.detail = Some("not resolved".into());
        ix.add(
            Path::new("sub/results/results.json"),
            file("r"),
            OutcomeFile { scope: Scope::Dir("sub".into()), entries: vec![entry("t1", OutcomeStatus::Passed)], otherwise: Some(failed) },
        );
        ix.add(
            Path::new("sub/logs/t3/report.json"),
            file("t3"),
            OutcomeFile { scope: Scope::Dir("sub".into()), entries: vec![entry("t3", OutcomeStatus::Passed)], otherwise: None },
        );
        assert_eq!(ix.outcome(&["t1"], Path::new("sub/trajs/t1.traj")).unwrap().value.status, OutcomeStatus::Passed);
        let t2 = ix.outcome(&["t2"], Path::new("sub/trajs/t2.traj")).unwrap();
        assert_eq!((t2.value.status, t2.file.path.as_str()), (OutcomeStatus::Failed, "r"));
        // A named entry wins over a verdict for the unnamed; outside the scope nothing applies.
        assert_eq!(ix.outcome(&["t3"], Path::new("sub/trajs/t3.traj")).unwrap().value.status, OutcomeStatus::Passed);
        assert!(ix.outcome(&["t2"], Path::new("other/t2.traj")).is_none());
    }

    #[test]
    fn global_verdicts_win() {
        let mut ix = JoinIndex::default();
        ix.add(
            Path::new("runs/a/report.json"),
            file("a"),
            OutcomeFile { scope: Scope::FileDir, entries: vec![entry("t1", OutcomeStatus::Passed)], otherwise: None },
        );
        ix.add(
            Path::new("v.csv"),
            file("v"),
            OutcomeFile { scope: Scope::Global, entries: vec![entry("t1", OutcomeStatus::Failed)], otherwise: None },
        );
        assert_eq!(ix.outcome(&["t1"], Path::new("runs/a/t1.json")).unwrap().file.path, "v");
    }
}
