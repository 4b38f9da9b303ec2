//! Which of the agent's changes matter: changes to the repository's own files that stay in the
//! final state — the files of the submitted patch when the run submitted one, otherwise the
//! files it wrote and did not remove again. Scratch files it made and then removed are neither
//! progress, nor a test edit, nor a regression; an agent that put one of its own changes back
//! (`git checkout -- f`, `git stash`, a backup restored) and never redid it regressed.

use std::collections::{BTreeSet, HashMap};

use super::actions::Action;

/// A file of the submitted patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    pub path: String,
    /// The patch creates it (`new file mode`): it is not one of the repository's own files.
    pub new: bool,
}

/// The files of a unified diff (`diff --git a/x b/x`, or `--- a/x` / `+++ b/x` pairs).
#[must_use]
pub fn patch_files(text: &str) -> Vec<PatchFile> {
    let mut out: Vec<PatchFile> = Vec::new();
    let mut minus: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let b = rest.rsplit_once(" b/").map(|(_, b)| b.to_string());
            if let Some(b) = b.filter(|b| !out.iter().any(|f| f.path == *b)) {
                out.push(PatchFile { path: b, new: false });
            }
        } else if line.starts_with("new file mode") {
            if let Some(last) = out.last_mut() {
                last.new = true;
            }
        } else if let Some(a) = line.strip_prefix("--- ") {
            minus = Some(a.trim().to_string());
        } else if let Some(b) = line.strip_prefix("+++ ") {
            let b = b.trim();
            let path = if b == "/dev/null" { minus.as_deref().unwrap_or("") } else { b };
            let path = path.strip_prefix("b/").or_else(|| path.strip_prefix("a/")).unwrap_or(path).to_string();
            if !path.is_empty() && path != "/dev/null" && !out.iter().any(|f| f.path == path) {
                out.push(PatchFile { path, new: minus.as_deref() == Some("/dev/null") });
            }
        }
    }
    out
}

/// Whether a submission reads as a patch: an empty one counts (nothing submitted).
#[must_use]
pub fn is_patch(submission: &str) -> bool {
    let s = submission.trim();
    s.is_empty() || s.starts_with("diff --git ") || s.contains("\ndiff --git ") || (s.contains("\n--- ") && s.contains("\n+++ "))
}

/// A path as written (`/testbed/src/a.py`, `./src/a.py`) names the same file as a
/// repository-relative one (`src/a.py`) when one ends with the other at a `/`.
#[must_use]
pub fn same_file(written: &str, repo: &str) -> bool {
    let w = written.trim_start_matches("./");
    let r = repo.trim_start_matches("./");
    let ends_at_slash = |long: &str, short: &str| long.strip_suffix(short).is_some_and(|p| p.ends_with('/'));
    w == r || ends_at_slash(w, r) || ends_at_slash(r, w)
}

/// The last part of a path: names that [`same_file`] can match share it.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A write the command did not name a file for (`(sed -i)`, `(git apply)`).
pub(crate) fn opaque(w: &str) -> bool {
    w.starts_with('(')
}

/// Opaque writes that change packages or history, not the repository's files.
fn opaque_not_an_edit(w: &str) -> bool {
    ["install", "uninstall", "(git commit", "(git checkout", "(git restore", "(git stash", "(git reset", "(git init", "(git clone"]
        .iter()
        .any(|k| w.contains(k))
}

/// What the run's changes amount to.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// The submitted patch's files, when the run submitted a patch (empty: it submitted nothing).
    pub patch: Option<Vec<PatchFile>>,
    /// Per action: a successful change to a file that stays in the final state.
    pub matters: Vec<bool>,
    /// Files it created (written whole first, or new in the patch): not the repository's own.
    pub created: BTreeSet<String>,
    /// A change it undid and never redid: (the change's action, the undoing action, the file).
    pub undone: Option<(usize, usize, String)>,
    /// The repository files its changes that matter touched, in order of first change (as the
    /// patch names them, when there is one).
    pub files: Vec<String>,
    /// The lines the submitted patch adds (`+` lines, headers not), when it is a patch and an
    /// action says what it put in (`left_nothing` is the only reader).
    pub added: Vec<String>,
}

impl Changes {
    /// The last change that matters.
    #[must_use]
    pub fn last(&self) -> Option<usize> {
        self.matters.iter().rposition(|m| *m)
    }

    /// The last change that matters and that the submitted patch still holds something of (see
    /// `left_nothing`); the last change that matters when none does.
    #[must_use]
    pub fn last_kept(&self, acts: &[Action<'_>]) -> Option<usize> {
        (0..acts.len()).rev().find(|&i| self.matters[i] && !self.left_nothing(&acts[i])).or_else(|| self.last())
    }

    /// The last change a check is owed after: to the repository's own code when the run
    /// submitted a patch (not files it added, not documentation), to any file that stays when
    /// the workspace is the deliverable.
    #[must_use]
    pub fn last_code(&self, acts: &[Action<'_>], doc: impl Fn(&str) -> bool) -> Option<usize> {
        (0..acts.len()).rev().find(|&i| {
            self.matters[i]
                && !acts[i].cosmetic
                && !self.left_nothing(&acts[i])
                && acts[i]
                    .writes
                    .iter()
                    .any(|w| opaque(w) || (!doc(w) && self.stays(w) && (self.patch.is_none() || self.is_repository_file(w))))
        })
    }

    /// Whether the submitted patch holds none of what `a` put in: every text it put in is known
    /// and no added line of the patch holds a line of any of them (of four characters or more).
    /// Such an edit put text back as it was (a docstring a global `sed` had damaged) or was
    /// overwritten later: the submission does not carry it, so no check is owed after it.
    fn left_nothing(&self, a: &Action<'_>) -> bool {
        let Some(texts) = a.puts_in.as_ref().filter(|_| self.patch.as_ref().is_some_and(|p| !p.is_empty())) else { return false };
        let lines: Vec<&str> = texts.iter().flat_map(|t| t.lines()).map(str::trim).filter(|l| l.chars().count() >= 4).collect();
        !lines.is_empty() && !lines.iter().any(|l| self.added.iter().any(|a| a.contains(l)))
    }

    /// Whether a file it wrote stays in the final state (is in the patch, when there is one).
    fn stays(&self, w: &str) -> bool {
        self.patch.as_ref().is_none_or(|p| p.iter().any(|f| same_file(w, &f.path)))
    }

    /// `gone(i, k)`: action `i`'s `k`th write was put back and not redone.
    fn kept_files(&self, acts: &[Action<'_>], gone: impl Fn(usize, usize) -> bool) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (i, (a, _)) in acts.iter().zip(&self.matters).enumerate().filter(|(_, (_, m))| **m) {
            for (_, w) in a.writes.iter().enumerate().filter(|(k, w)| !opaque(w) && !self.created.contains(*w) && !gone(i, *k)) {
                let name = match &self.patch {
                    Some(p) => p.iter().find(|f| same_file(w, &f.path)).map_or_else(|| w.clone(), |f| f.path.clone()),
                    None => w.clone(),
                };
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        out
    }

    /// Whether a file it wrote is one of the repository's own (not one it created).
    #[must_use]
    pub fn is_repository_file(&self, file: &str) -> bool {
        match &self.patch {
            Some(p) => p.iter().any(|f| !f.new && same_file(file, &f.path)),
            None => !self.created.iter().any(|c| same_file(c, file)),
        }
    }
}

/// Works out which changes matter, from the actions and the submission; `aside` says which
/// files are not part of a fix (tests, documentation): putting them back is tidying, not a
/// regression.
#[must_use]
pub fn analyse(acts: &[Action<'_>], submission: Option<&str>, aside: impl Fn(&str) -> bool) -> Changes {
    let patch = submission.filter(|s| is_patch(s)).map(patch_files);
    // Files it wrote whole before anything else wrote them, and files it removed after writing.
    let mut created: BTreeSet<String> = BTreeSet::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut removed: BTreeSet<String> = BTreeSet::new();
    for a in acts.iter().filter(|a| a.mutated()) {
        for w in a.writes.iter().filter(|w| !opaque(w)) {
            let deleted = a.deletes.iter().any(|d| d == w);
            if deleted && seen.iter().any(|s| same_file(s, w)) {
                removed.insert(w.clone());
            }
            if !seen.iter().any(|s| same_file(s, w)) && !deleted {
                seen.insert(w.clone());
                if a.creates {
                    created.insert(w.clone());
                }
            }
        }
    }
    if let Some(p) = &patch {
        created.extend(p.iter().filter(|f| f.new).map(|f| f.path.clone()));
    }
    let scratch = |w: &str| removed.iter().any(|r| same_file(r, w));
    // Changes to files it did not make and remove, whether or not they stay: what a revert can
    // undo. Without a patch, these are the changes that stay.
    let changed: Vec<bool> =
        acts.iter().map(|a| a.mutated() && a.writes.iter().any(|w| if opaque(w) { !opaque_not_an_edit(w) } else { !scratch(w) })).collect();
    let gone =
        if patch.is_none() && acts.iter().any(|a| !a.reverts.is_empty()) { put_back_writes(acts, &changed, &created) } else { Vec::new() };
    let is_gone = |i: usize, k: usize| gone.get(i).and_then(|g| g.get(k)).copied().unwrap_or(false);
    let matters: Vec<bool> = match &patch {
        // Without a patch, a change stays unless a later action put its files back and nothing
        // changed them again.
        None => acts
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut named = a.writes.iter().enumerate().filter(|(_, w)| !opaque(w)).peekable();
                changed[i] && (named.peek().is_none() || named.any(|(k, _)| !is_gone(i, k)))
            })
            .collect(),
        Some(p) => acts
            .iter()
            .map(|a| {
                a.mutated()
                    && a.writes
                        .iter()
                        .any(|w| if opaque(w) { !p.is_empty() && !opaque_not_an_edit(w) } else { p.iter().any(|f| same_file(w, &f.path)) })
            })
            .collect(),
    };
    let undone = undone(acts, &changed, patch.as_deref(), &aside);
    // Read only where an edit says what it put in: most runs never ask.
    let added = match (&patch, submission) {
        (Some(_), Some(text)) if acts.iter().any(|a| a.puts_in.is_some()) => {
            text.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++ ")).map(|l| l[1..].to_string()).collect()
        }
        _ => Vec::new(),
    };
    let mut changes = Changes { patch, matters, created, undone, files: Vec::new(), added };
    changes.files = changes.kept_files(acts, is_gone);
    changes
}

/// Whether `a`'s reverts took effect: it did not fail, or it failed in what it ran after them (a
/// test run in `git stash && pytest && git stash pop`). A bare `git stash` that failed (no git
/// repository) put nothing back.
fn reverted(a: &Action<'_>) -> bool {
    a.ok != Some(false) || a.verification.is_some() || !a.runs.is_empty()
}

/// Whether, in `a`'s own command, putting `file` back comes after writing it: the last mention
/// of the file is in a command that restores it (`sed … f && pytest; git checkout -- f`), not in
/// one that writes it (`git checkout -- f && sed … f`). Without a command to read (an editing
/// tool), the revert is taken as last.
fn put_back_last(a: &Action<'_>, file: &str) -> bool {
    const RESTORES: &[&str] = &["git checkout", "git restore", "git stash", "git reset", "cp ", "mv "];
    let Some(cmd) = a.command.as_deref() else { return true };
    let Some(at) = cmd.rfind(file_name(file)) else { return true };
    // The simple command the last mention sits in.
    let start = cmd[..at].rfind(['&', '|', ';', '\n']).map_or(0, |k| k + 1);
    let revert_at = RESTORES.iter().filter_map(|r| cmd.rfind(r)).max();
    match revert_at {
        Some(r) if r >= start => true,
        Some(r) => r > at,
        None => true,
    }
}

/// Per action, per write: whether that action or a later one put the file back (`git checkout
/// -- f`, a stash never popped, a backup restored) and no change after that wrote it again. A
/// command that writes and puts back the same file is read in its own order (`put_back_last`);
/// a revert that failed put nothing back; a whole-tree revert leaves the files the run created
/// (git keeps untracked files). One pass from the end, keeping the latest event per file in
/// buckets by file name, so a long record costs a pass.
fn put_back_writes(acts: &[Action<'_>], changed: &[bool], created: &BTreeSet<String>) -> Vec<Vec<bool>> {
    type Event = (usize, bool);
    // Positions: an action's writes at 2i, its reverts at 2i + 1 (after them).
    let mut latest: HashMap<&str, Vec<(&str, Event)>> = HashMap::new();
    let mut whole: Option<Event> = None;
    let mut out: Vec<Vec<bool>> = vec![Vec::new(); acts.len()];
    let find = |latest: &HashMap<&str, Vec<(&str, Event)>>, w: &str| -> Option<Event> {
        latest.get(file_name(w)).and_then(|v| v.iter().find(|(g, _)| same_file(g, w)).map(|(_, e)| *e))
    };
    for (i, a) in acts.iter().enumerate().rev() {
        // What later actions did, before this one's own reverts are counted.
        let later: Vec<Option<Event>> = a.writes.iter().map(|w| find(&latest, w)).collect();
        let later_whole = whole;
        let ran = reverted(a);
        if ran {
            for f in &a.reverts {
                if f == "*" {
                    whole.get_or_insert((2 * i + 1, true));
                } else if find(&latest, f).is_none() {
                    // Put back and then written again in the same command: its last event is a
                    // change.
                    let rewritten = changed[i] && a.writes.iter().any(|w| same_file(w, f)) && !put_back_last(a, f);
                    latest.entry(file_name(f)).or_default().push((f.as_str(), (2 * i + 1, !rewritten)));
                }
            }
        }
        out[i] = a
            .writes
            .iter()
            .zip(&later)
            .map(|(w, later)| {
                let own = ran
                    && (a.reverts.iter().any(|f| f != "*" && same_file(f, w))
                        || (a.reverts.iter().any(|f| f == "*") && !created.contains(w)))
                    && put_back_last(a, w);
                let whole = later_whole.filter(|_| !created.contains(w));
                let last = match (*later, whole) {
                    (Some(f), Some(t)) => Some(if f.0 > t.0 { f } else { t }),
                    (one, None) | (None, one) => one,
                };
                // This action's own revert, when it came after its write, is the latest event
                // unless a later action did something to the file.
                match last {
                    Some((_, revert)) => revert,
                    None => own,
                }
            })
            .collect();
        if changed[i] {
            for w in a.writes.iter().filter(|w| !opaque(w)) {
                if find(&latest, w).is_none() {
                    latest.entry(file_name(w)).or_default().push((w.as_str(), (2 * i, false)));
                }
            }
        }
        // `git stash pop` brings a stashed tree back: a change to every file.
        if ran && a.writes.iter().any(|w| w == "(git stash)") {
            whole.get_or_insert((2 * i, false));
        }
    }
    out
}

/// The first change that a later action put back and nothing redid.
fn undone(
    acts: &[Action<'_>],
    changed: &[bool],
    patch: Option<&[PatchFile]>,
    aside: &dyn Fn(&str) -> bool,
) -> Option<(usize, usize, String)> {
    for (r, a) in acts.iter().enumerate().filter(|(_, a)| reverted(a) && !a.withdraws) {
        for f in a.reverts.iter().filter(|f| !aside(f)) {
            let all = f == "*";
            let Some(hit) = (0..r).rev().find(|&i| changed[i] && (all || acts[i].writes.iter().any(|w| same_file(w, f)))) else {
                continue;
            };
            let file = if all { acts[hit].writes.first().cloned().unwrap_or_default() } else { f.clone() };
            let redone = match patch {
                Some(p) => p.iter().any(|pf| same_file(&file, &pf.path)),
                // `git stash pop` / `apply` brings a stashed tree back.
                None => {
                    // The same command wrote it again after putting it back.
                    (changed[r] && a.writes.iter().any(|w| !opaque(w) && (all || same_file(w, f)) && !put_back_last(a, w)))
                        || (r + 1..acts.len()).any(|j| {
                            (changed[j] && acts[j].writes.iter().any(|w| all || same_file(w, f)))
                                || (all && acts[j].writes.iter().any(|w| w == "(git stash)"))
                        })
                }
            };
            if !redone {
                return Some((hit, r, file));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_files_and_new_ones() {
        let p = "diff --git a/src/a.py b/src/a.py\nindex 1..2 100644\n--- a/src/a.py\n+++ b/src/a.py\n@@\n-x\n+y\ndiff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_new.py\n";
        assert_eq!(
            patch_files(p),
            vec![PatchFile { path: "src/a.py".into(), new: false }, PatchFile { path: "tests/test_new.py".into(), new: true }]
        );
        assert!(is_patch(p) && is_patch("") && !is_patch("The answer is 42"));
    }

    #[test]
    fn paths_as_written_name_repository_files() {
        assert!(same_file("/testbed/src/a.py", "src/a.py"));
        assert!(same_file("./src/a.py", "src/a.py"));
        assert!(!same_file("/testbed/src/aa.py", "src/a.py"));
    }
}
