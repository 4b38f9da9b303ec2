//! A task whose image left its inputs empty (DESIGN.md, decisions on hard cases: the task's
//! environment lacks what the task and its verifier need).
//!
//! Two sightings, from the two sides, make the case: the agent's own listing showed a file of
//! 0 bytes that it had not written (and never wrote after), and a failing test says that what it
//! read was empty. Either alone is common and innocent: tasks ship empty placeholders the agent
//! is meant to fill, and a verifier reads an empty output whenever the agent wrote nothing. An
//! input the agent only looked at, empty from the start, behind a verifier that found emptiness,
//! is a task nobody could pass. A placeholder the agent should have filled and never touched can
//! still pass for one; the evidence names the file so a reader can tell.

use crate::model::{OutcomeStatus, Trajectory};
use crate::rules::Profile;

use super::actions::Action;

/// What was found: where the agent saw the empty file, and the test that read emptiness.
pub struct EmptyInputs<'t> {
    /// The step whose output shows the listing.
    pub step: u32,
    /// The listing's row for the empty file (a substring of that output).
    pub row: &'t str,
    pub file: &'t str,
    pub test: &'t str,
    /// The failing test's line that shows the empty read.
    pub read: &'t str,
}

pub fn empty_inputs<'t>(t: &'t Trajectory, acts: &[Action<'t>], p: &Profile) -> Option<EmptyInputs<'t>> {
    if t.outcome.status != OutcomeStatus::Failed {
        return None;
    }
    // Every file the agent wrote or tried to, at any point: an empty file it wrote is its own.
    let written: Vec<&str> = acts.iter().flat_map(|a| &a.writes).map(|w| base(w)).collect();
    // A test that names a file the agent wrote read the agent's output, and an empty output is
    // the agent's to answer for, whatever its inputs held.
    let (test, read) = t.outcome.tests.iter().filter(|r| r.status != "passed").find_map(|r| {
        let msg = r.message.as_deref()?;
        let m = p.read_empty.find(msg)?;
        let names_own = written.iter().any(|w| names(msg, w) || names(&r.name, w));
        (!names_own).then(|| (r.name.as_str(), line_around(msg, m.start())))
    })?;
    acts.iter().filter(|a| !lists_system_dir(a, p)).find_map(|a| {
        let out = a.output();
        p.empty_file.list.iter().filter_map(|pat| pat.try_get()).find_map(|re| {
            re.captures_iter(out).find_map(|c| {
                let file = base(c.name("file")?.as_str());
                (!p.empty_by_design.is_match(file) && !written.contains(&file)).then(|| EmptyInputs {
                    step: a.shown_at(),
                    row: c.get(0).map_or("", |m| m.as_str()),
                    file,
                    test,
                    read,
                })
            })
        })
    })
}

/// Whether the action listed (or moved into) a directory of the system rather than of the task
/// (`/var/log`, `/etc`, `/tmp`: profile `system_dirs`), where empty files are the rule (`btmp`,
/// `.pwd.lock`, the agent's own scratch) and say nothing of the task's inputs.
fn lists_system_dir(a: &Action<'_>, p: &Profile) -> bool {
    let Some(cmd) = a.command.as_deref() else { return false };
    cmd.split(['\n', ';', '&', '|']).any(|segment| {
        let mut words = segment.split_whitespace().skip_while(|w| *w == "sudo");
        matches!(words.next(), Some("ls" | "ll" | "cd"))
            && words.filter(|w| !w.starts_with('-')).any(|w| p.system_dirs.is_match(w.trim_matches(['"', '\''])))
    })
}

/// Whether `name` appears in `text` as a name of its own, not inside a longer one (`out` is not
/// in `test_outputs.py`, `backups` not in `test_backups_hold`).
fn names(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
    name.len() > 2
        && text.match_indices(name).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + name.len()..].chars().next();
            // A name may end a sentence: a dot after it is not part of it.
            !before.is_some_and(word) && !after.is_some_and(|c| word(c) && c != '.')
        })
}

/// A path's last part, a directory's too (`mkdir -p out/` wrote `out`).
fn base(path: &str) -> &str {
    super::changes::file_name(path.trim_end_matches('/'))
}

fn line_around(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    &text[start..end]
}
