//! Finds one trajectory among those an input holds: by id, by task id, or by position.
//!
//! A trajectory id hashes the source path relative to the input it was reached from, so the
//! same file ingested as `run/` or as `run/trial/result.json` gives different ids. An id is
//! therefore also matched against every id the record would have had from another input root
//! (each trailing part of its source path, at its position in that file): an id copied from a
//! `classify` over a whole run finds its trajectory when `show` is pointed at the single file.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::model::{Trajectory, trajectory_id};
use crate::report::sanitize;

/// How a trajectory is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// The only one there is.
    Only,
    Id(String),
    Task(String),
    /// 0-based position in the listing.
    Index(usize),
    /// From `FILE#X`: an id, else a task id, else a position.
    Token(String),
}

impl Selector {
    fn describe(&self) -> String {
        match self {
            Self::Only => "the input".into(),
            Self::Id(s) => format!("id {s}"),
            Self::Task(s) => format!("task {s}"),
            Self::Index(i) => format!("index {i}"),
            Self::Token(s) => format!("`{s}` (as an id, a task id or an index)"),
        }
    }
}

/// Why no single trajectory was chosen; `candidates` are indices into the list searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectError {
    pub message: String,
    pub candidates: Vec<usize>,
}

/// What an id lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    None,
    One(usize),
    /// Several records answer to the id (only possible for ids from another input root, when
    /// two files share the trailing part of their paths and their task id).
    Many(Vec<usize>),
}

/// Ids of a list of records: their own, and those they would have had from another root.
#[derive(Debug, Default)]
pub struct IdIndex {
    exact: BTreeMap<String, Vec<usize>>,
    reached: BTreeMap<String, Vec<usize>>,
}

impl IdIndex {
    /// From `(id, task id, first source file)` of each record, in ingest order (the order
    /// gives each record's position within its file).
    pub fn new<'a>(records: impl IntoIterator<Item = (&'a str, &'a str, Option<&'a str>)>) -> Self {
        let mut ix = Self::default();
        let mut positions: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, (id, task, source)) in records.into_iter().enumerate() {
            ix.exact.entry(id.to_string()).or_default().push(i);
            let Some(source) = source else { continue };
            let pos = positions.entry(source).or_insert(0);
            for rel in suffixes(source) {
                let alt = trajectory_id(task, rel, *pos);
                if alt != id {
                    let v = ix.reached.entry(alt).or_default();
                    if v.last() != Some(&i) {
                        v.push(i);
                    }
                }
            }
            *pos += 1;
        }
        ix
    }

    /// The records of `trajs`, in order.
    #[must_use]
    pub fn of(trajs: &[Trajectory]) -> Self {
        Self::new(trajs.iter().map(|t| (t.id.as_str(), t.task_id.as_str(), t.provenance.files.first().map(|f| f.path.as_str()))))
    }

    /// The record with this id; an exact id wins over one from another root.
    #[must_use]
    pub fn lookup(&self, id: &str) -> Lookup {
        let found = self.exact.get(id).or_else(|| self.reached.get(id));
        match found.map(Vec::as_slice) {
            None | Some([]) => Lookup::None,
            Some([one]) => Lookup::One(*one),
            Some(many) => Lookup::Many(many.to_vec()),
        }
    }
}

/// Every trailing run of `/`-separated components of `path` (`a/b/c`, `b/c`, `c`).
fn suffixes(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once(path).chain(path.match_indices('/').map(move |(i, _)| &path[i + 1..])).filter(|s| !s.is_empty())
}

/// Chooses one trajectory of `trajs`.
///
/// # Errors
/// When nothing matches, or several do; the error lists the candidates.
pub fn select(trajs: &[Trajectory], sel: &Selector) -> Result<usize, SelectError> {
    let all: Vec<usize> = (0..trajs.len()).collect();
    let none = |what: &str| SelectError { message: format!("no trajectory matches {what}"), candidates: all.clone() };
    let many = |what: &str, c: Vec<usize>| SelectError {
        message: format!("{} trajectories match {what}; choose one with --id, --task or --index", c.len()),
        candidates: c,
    };
    let by_task = |task: &str| -> Vec<usize> { all.iter().copied().filter(|&i| trajs[i].task_id == task).collect() };
    match sel {
        Selector::Only => match trajs.len() {
            0 => Err(SelectError { message: "the input holds no trajectory".into(), candidates: Vec::new() }),
            1 => Ok(0),
            _ => Err(many("the input", all.clone())),
        },
        Selector::Id(id) => match IdIndex::of(trajs).lookup(id) {
            Lookup::One(i) => Ok(i),
            Lookup::Many(c) => Err(many(&sel.describe(), c)),
            Lookup::None => Err(none(&sel.describe())),
        },
        Selector::Task(task) => match by_task(task).as_slice() {
            [] => Err(none(&sel.describe())),
            [one] => Ok(*one),
            c => Err(many(&sel.describe(), c.to_vec())),
        },
        Selector::Index(i) => {
            if *i < trajs.len() {
                Ok(*i)
            } else {
                Err(SelectError {
                    message: format!("index {i} is past the last trajectory ({} in the input)", trajs.len()),
                    candidates: all,
                })
            }
        }
        Selector::Token(tok) => {
            match IdIndex::of(trajs).lookup(tok) {
                Lookup::One(i) => return Ok(i),
                Lookup::Many(c) => return Err(many(&sel.describe(), c)),
                Lookup::None => {}
            }
            match by_task(tok).as_slice() {
                [one] => return Ok(*one),
                [] => {}
                c => return Err(many(&sel.describe(), c.to_vec())),
            }
            match tok.parse::<usize>() {
                Ok(i) if i < trajs.len() => Ok(i),
                _ => Err(none(&sel.describe())),
            }
        }
    }
}

/// Most candidates a listing shows.
const LISTED: usize = 40;

/// The candidates as a table a person can choose from (sanitized for a terminal).
#[must_use]
pub fn listing(trajs: &[Trajectory], candidates: &[usize]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  index  id  task  outcome  steps  source");
    for &i in candidates.iter().take(LISTED) {
        let t = &trajs[i];
        let _ = writeln!(
            out,
            "  {i:>5}  {}  {}  {}  {}  {}",
            sanitize::terminal(&t.id),
            sanitize::terminal(&t.task_id),
            t.outcome.status.as_str(),
            t.steps.len(),
            sanitize::terminal(t.provenance.files.first().map_or("", |f| f.path.as_str()))
        );
    }
    if candidates.len() > LISTED {
        let _ = writeln!(out, "  ... and {} more", candidates.len() - LISTED);
    }
    out
}

/// Splits `FILE#X` when `FILE` exists and the whole argument does not (paths may hold `#`,
/// ids always do: the split is at the first `#` that leaves an existing path).
#[must_use]
pub fn split_target(arg: &str) -> (String, Option<String>) {
    if std::path::Path::new(arg).exists() {
        return (arg.to_string(), None);
    }
    for (i, _) in arg.match_indices('#') {
        let (path, rest) = (&arg[..i], &arg[i + 1..]);
        if !path.is_empty() && !rest.is_empty() && std::path::Path::new(path).exists() {
            return (path.to_string(), Some(rest.to_string()));
        }
    }
    (arg.to_string(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_another_root_are_found() {
        let deep = trajectory_id("t", "run/trial/result.json", 0);
        let here = trajectory_id("t", "result.json", 0);
        let ix = IdIndex::new([(here.as_str(), "t", Some("data/run/trial/result.json"))]);
        assert_eq!(ix.lookup(&here), Lookup::One(0));
        assert_eq!(ix.lookup(&deep), Lookup::One(0));
        assert_eq!(ix.lookup("t#000000000000"), Lookup::None);
    }

    #[test]
    fn shared_suffixes_are_ambiguous_and_positions_count_per_file() {
        let (a, b) = (trajectory_id("t", "a/result.json", 0), trajectory_id("t", "b/result.json", 0));
        let c = trajectory_id("t", "runs.jsonl", 1);
        let ix = IdIndex::new([
            (a.as_str(), "t", Some("a/result.json")),
            (b.as_str(), "t", Some("b/result.json")),
            ("x", "t", Some("runs.jsonl")),
            ("y", "t", Some("runs.jsonl")),
        ]);
        assert_eq!(ix.lookup(&trajectory_id("t", "result.json", 0)), Lookup::Many(vec![0, 1]));
        assert_eq!(ix.lookup(&a), Lookup::One(0));
        assert_eq!(ix.lookup(&c), Lookup::One(3));
    }

    #[test]
    fn suffixes_of_a_path() {
        assert_eq!(suffixes("a/b/c").collect::<Vec<_>>(), ["a/b/c", "b/c", "c"]);
        assert_eq!(suffixes("/x/y").collect::<Vec<_>>(), ["/x/y", "x/y", "y"]);
    }
}
