//! Turns tool calls into actions the rules reason about: did it change the workspace, did it
//! run a check and did the check pass, did it finish or escalate, what came back.

use std::collections::HashMap;

use serde_json::Value;

use super::{changes, shell};
use crate::model::{CallRef, ToolResult, Trajectory};
use crate::rules::profile::Profile;

/// One tool call, interpreted.
#[derive(Debug, Clone)]
pub struct Action<'t> {
    pub at: CallRef,
    pub name: &'t str,
    /// Tool name and canonical arguments: equal keys are the same action.
    pub key: String,
    /// The shell command, for shell tools.
    pub command: Option<String>,
    /// Files this action writes; non-empty means it is a mutation.
    pub writes: Vec<String>,
    /// Files it removes (also in `writes`).
    pub deletes: Vec<String>,
    /// Files it puts back to an earlier state (`*`: the whole tree).
    pub reverts: Vec<String>,
    /// Its revert swaps back the text of its own earlier edit: an edit it chose to withdraw (a
    /// shim it tried), which leaves the file as it was, rather than work lost to a blunt
    /// `git checkout` or stash; not a regression.
    pub withdraws: bool,
    /// Writes that went to a name a leaked escape mangled (`> app.py\\n`): meant, never landed.
    pub misfired: Vec<String>,
    /// The terminal took its keystrokes as more input to a here-doc or quote an earlier command
    /// left open: it never ran.
    pub swallowed: bool,
    /// Its reply was refused by the harness (a format error) and it got no successful result:
    /// it never ran.
    pub refused: bool,
    /// Every file it writes it only restyled (swapped quote characters) or pruned of debug output
    /// it had put in itself (`sed -i '/DEBUG:/d'` after adding `print(f"DEBUG: ...")`): no
    /// check is owed after it.
    pub cosmetic: bool,
    /// The texts its edits put in, when they are all known (an editor's new text, the literal
    /// replacements of `sed -i` substitutions): a patch without them holds nothing of the edit.
    pub puts_in: Option<Vec<String>>,
    /// Scripts it runs (`-`: a program given inline).
    pub runs: Vec<String>,
    /// It creates a file whole (a `create` command), rather than editing one.
    pub creates: bool,
    /// The check it runs, for verifications.
    pub verification: Option<String>,
    pub finish: bool,
    pub escalate: bool,
    pub result: Option<&'t ToolResult>,
    /// Step of the result.
    pub result_step: Option<u32>,
    /// The result came back without error (`None`: no result).
    pub ok: Option<bool>,
    /// For verifications: whether the check passed (`None`: cannot tell).
    pub passed: Option<bool>,
    pub timed_out: bool,
    /// The top-level modules its programs import, when every program it runs is Python whose
    /// text is known and runs nothing else (no subprocess, `exec`, `__import__`): a program
    /// that imports only the standard library cannot reach the repository's code (a script of
    /// `print` calls that "demonstrates" the fix, a regex over the source, a copy of the
    /// function). `None`: unknown.
    pub imports: Option<Vec<String>>,
}

impl<'t> Action<'t> {
    #[must_use]
    pub fn mutates(&self) -> bool {
        !self.writes.is_empty()
    }

    /// The step that shows what it did: its result's, or its own when it got none.
    #[must_use]
    pub fn shown_at(&self) -> u32 {
        self.result_step.unwrap_or(self.at.step)
    }

    /// What its result showed (empty when it got none).
    #[must_use]
    pub fn output(&self) -> &'t str {
        self.result.map_or("", |r| r.output.as_str())
    }

    /// A mutation that went through (its result is not an error).
    #[must_use]
    pub fn mutated(&self) -> bool {
        self.mutates() && self.ok != Some(false)
    }
}

/// What the programs a command runs import (`Action::imports`): each is an inline Python program
/// (the command's own text) or a Python script saved in the same command (`same_command`) or,
/// through `saved`, earlier; `None` when one is neither, when one may run other code, or when
/// the command also runs a test runner (`pytest && python -c …`), which runs what it collects.
fn run_imports<'a>(
    runs: &[String],
    same_command: &'a [(String, String)],
    verification: Option<&str>,
    cmd: &'a str,
    saved: impl Fn(&str) -> Option<&'a str>,
) -> Option<Vec<String>> {
    let runner = verification.is_some_and(|v| !runs.iter().any(|r| v.ends_with(r.as_str())));
    if runs.is_empty() || runner {
        return None;
    }
    let mut all = Vec::new();
    for r in runs {
        let key = script_key(r);
        let text = match r.as_str() {
            "-" => cmd.contains("python").then_some(cmd),
            _ if key.ends_with(".py") => {
                same_command.iter().rev().find(|(p, _)| script_key(p) == key).map(|(_, b)| b.as_str()).or_else(|| saved(key))
            }
            _ => None,
        }?;
        all.extend(super::python_modules::imports(text)?);
    }
    Some(all)
}

/// A saved script's key: its path as written, without a leading `./` (`./fix.py` and `fix.py`
/// are one script to `python fix.py` and `./fix.py`).
fn script_key(path: &str) -> &str {
    path.trim_start_matches("./")
}

/// Every call of the trajectory as an action, in order.
#[must_use]
pub fn actions<'t>(t: &'t Trajectory, p: &Profile) -> Vec<Action<'t>> {
    let mut results: HashMap<CallRef, (u32, &ToolResult)> = HashMap::new();
    for (s, step) in t.steps.iter().enumerate() {
        for r in &step.tool_results {
            if let Some(c) = r.call {
                results.entry(c).or_insert((u32::try_from(s).unwrap_or(u32::MAX), r));
            }
        }
    }
    // Scripts saved so far (by a here-doc, or whole by an editing tool), by `script_key`: a
    // script written in one step and run in a later one changes what it writes. What a script
    // writes is worked out the first time it runs (agents run `python reproduce.py` many times)
    // and kept until the file is saved again.
    let mut saved: HashMap<String, (String, Option<Vec<String>>)> = HashMap::new();
    // Saved scripts a later command changed in place (`>>`, `sed -i`): their text is no longer
    // the saved one, so what they import is unknown.
    let mut changed_since_saved: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut debug = DebugLines::default();
    let mut ps2_screens: HashMap<u32, bool> = HashMap::new();
    let mut swaps = Swaps::default();
    agent_calls(t, p)
        .enumerate()
        .map(|(k, (at, call))| {
            let (result_step, result) = match results.get(&at) {
                Some((s, r)) => (Some(*s), Some(*r)),
                None => (None, None),
            };
            let mut a = Action {
                at,
                name: call.name.as_str(),
                key: format!("{}\u{1f}{}", call.name, call.raw_arguments.clone().unwrap_or_else(|| call.arguments.to_string())),
                command: None,
                writes: Vec::new(),
                deletes: Vec::new(),
                reverts: Vec::new(),
                withdraws: false,
                misfired: Vec::new(),
                cosmetic: false,
                puts_in: None,
                swallowed: false,
                refused: false,
                runs: Vec::new(),
                creates: false,
                verification: None,
                finish: p.is_finish(&call.name),
                escalate: p.is_escalate(&call.name),
                result,
                result_step,
                ok: result.map(|r| !r.is_error && r.unknown_tool.is_none() && r.exit_code.is_none_or(|c| c == 0)),
                passed: None,
                timed_out: result.is_some_and(|r| p.command_timeout.is_match(&r.output)),
                imports: None,
            };
            // A call in a reply the harness refused (a format error) that got no successful
            // result never ran: neither a change, nor a check, nor the end. It stays an action,
            // so the tool it named is still judged against the registry.
            let refused = t.steps[at.step as usize].format_error.is_some() && a.ok != Some(true);
            // Keystrokes the terminal took as more input to a construct an earlier command left
            // open never ran either. A screen with no line after the continuation prompt swallowed
            // nothing: most screens, searched once per step, not once per call.
            let swallowed = p.continuation_prompt.as_deref().is_some_and(|ps2| {
                let step = &t.steps[at.step as usize];
                *ps2_screens.entry(at.step).or_insert_with(|| {
                    let at_ps2 = format!("\n{ps2}");
                    step.tool_results.iter().any(|r| r.output.contains(&at_ps2) || r.output.starts_with(ps2))
                }) && call.shell_command(&p.shell_arguments).is_some_and(|cmd| typed_after(&cmd, step, ps2))
            });
            if refused || swallowed {
                a.swallowed = swallowed;
                a.refused = refused;
                a.finish = false;
                a.escalate = false;
                a.ok = Some(false);
                return a;
            }
            if p.is_shell(&call.name) {
                if let Some(cmd) = call.shell_command(&p.shell_arguments) {
                    let mut fx = shell::analyse_in(&cmd, t.workdir.as_deref());
                    fx.settle_round_trip(a.ok != Some(false));
                    let mut writes = fx.writes;
                    let own_writes = writes.len();
                    for script in &fx.runs {
                        let key = script_key(script);
                        if fx.saved.iter().all(|(p, _)| script_key(p) != key)
                            && let Some((body, effects)) = saved.get_mut(key)
                        {
                            writes.extend(effects.get_or_insert_with(|| shell::script_effects(key, body).writes).iter().cloned());
                        }
                    }
                    for w in writes.iter().take(own_writes) {
                        let key = script_key(w);
                        if fx.saved.iter().any(|(p, _)| script_key(p) == key) {
                            changed_since_saved.remove(key);
                        } else {
                            changed_since_saved.insert(key.to_string());
                        }
                    }
                    a.imports = run_imports(&fx.runs, &fx.saved, fx.verification.as_deref(), &cmd, |key| {
                        saved.get(key).filter(|_| !changed_since_saved.contains(key)).map(|(b, _)| b.as_str())
                    });
                    for (p, body) in &fx.saved {
                        saved.insert(script_key(p).to_string(), (body.clone(), None));
                    }
                    let own_debug = !fx.pruned_by.is_empty() && {
                        debug.read_to(t, k, p);
                        fx.pruned_by.iter().all(|pat| debug.has(pat, p))
                    };
                    // Whether or not the command failed: a failing `sed -i … && pytest` wrote.
                    swaps.touched(&writes);
                    a.cosmetic =
                        !writes.is_empty() && writes.iter().all(|w| fx.restyled.contains(w) || (own_debug && fx.pruned.contains(w)));
                    // Only a command whose every write is a literal `sed` edit says all it put in
                    // (not one that also runs a script that writes).
                    if writes.len() == own_writes {
                        a.puts_in = fx.put_in;
                    }
                    a.writes = writes;
                    a.deletes = fx.deletes;
                    // Every file it writes is written whole: a count would let `> a.py` twice
                    // and `sed -i … b.py` pass b.py off as created.
                    a.creates = !a.writes.is_empty() && a.writes.iter().all(|w| fx.whole.contains(w));
                    a.reverts = fx.reverts;
                    a.misfired = fx.misfired;
                    a.runs = fx.runs;
                    a.verification = fx.verification;
                    if p.finish_commands.is_match(&cmd) {
                        a.finish = true;
                    }
                    a.command = Some(cmd);
                }
            } else if p.mutate_tools.iter().any(|m| m.matches(&call.name, &call.arguments)) {
                let paths = edited_paths(&call.arguments, call.raw_arguments.as_deref(), &p.path_arguments);
                // A file an editor writes under /tmp is as much scratch as one a command writes.
                a.writes = paths
                    .iter()
                    .filter(|w| !shell::outside_workspace(w) || t.workdir.as_deref().is_some_and(|d| shell::is_under(w, d)))
                    .cloned()
                    .collect();
                if a.writes.is_empty() && !paths.is_empty() {
                    return a;
                }
                if a.writes.is_empty() {
                    a.writes.push(format!("({})", call.name));
                }
                a.creates = p.create_tools.iter().any(|m| m.matches(&call.name, &call.arguments));
                // A script an editor wrote whole is a script a later command may run, as one a
                // here-doc saved; an edit leaves its text unknown, so it is forgotten.
                for w in &a.writes {
                    saved.remove(script_key(w));
                }
                if let ([w], true, false) = (a.writes.as_slice(), a.creates, a.ok == Some(false))
                    && let Some(text) = p.content_arguments.iter().find_map(|k| call.arguments.get(k)?.as_str())
                {
                    saved.insert(script_key(w).to_string(), (text.to_string(), None));
                }
                if p.revert_tools.iter().any(|m| m.matches(&call.name, &call.arguments)) {
                    a.reverts.clone_from(&a.writes);
                } else if a.ok != Some(false) {
                    let replaced = replacement(&call.arguments, p);
                    // The lines its new text adds, not the context it keeps (a deletion adds none,
                    // and says nothing a patch would show).
                    a.puts_in = replaced
                        .filter(|_| !a.creates)
                        .map(|(old, new)| {
                            new.lines().filter(|l| !old.lines().any(|o| o == *l)).map(ToString::to_string).collect::<Vec<_>>()
                        })
                        .filter(|added| !added.is_empty());
                    match (replaced, a.writes.as_slice()) {
                        (Some(r), [w]) if !a.creates => {
                            if swaps.swap(w, r) {
                                a.reverts.clone_from(&a.writes);
                                a.withdraws = true;
                            }
                        }
                        _ => swaps.touched(&a.writes),
                    }
                }
            } else if p.verify_tools.iter().any(|v| v == &call.name) {
                a.verification = Some(call.name.clone());
            }
            if a.verification.is_some() {
                a.passed = result.and_then(check_passed);
            }
            if !p.outside_dirs.is_empty() {
                let outside = |w: &String| p.outside_dirs.iter().any(|d| shell::is_under(w, d));
                a.writes.retain(|w| !outside(w));
                a.deletes.retain(|w| !outside(w));
                a.reverts.retain(|w| !outside(w));
                a.misfired.retain(|w| !outside(w));
            }
            a
        })
        .collect()
}

/// The lines of debug output (a `print(`, `console.log(`, ...: the profile's `debug_output`) the
/// agent typed in its calls so far: where debug output it takes out again was put in. Read only
/// when a command prunes lines, and each call at most once, so a long record is read once.
#[derive(Default)]
struct DebugLines<'t> {
    lines: Vec<String>,
    calls: Option<Vec<&'t crate::model::ToolCall>>,
    read: usize,
}

impl<'t> DebugLines<'t> {
    /// Reads the calls before the `k`th (of the ones `actions` keeps) not read yet.
    fn read_to(&mut self, t: &'t Trajectory, k: usize, p: &Profile) {
        let calls = self.calls.get_or_insert_with(|| agent_calls(t, p).map(|(_, c)| c).collect());
        for call in calls.iter().take(k).skip(self.read) {
            // The argument values as typed (a command, an editor's new text), not their JSON, whose
            // escaped quotes would hide `print(f"DEBUG:`.
            let values: Vec<&str> = match &call.arguments {
                Value::Object(m) => m.values().filter_map(Value::as_str).collect(),
                Value::String(v) => vec![v.as_str()],
                _ => call.raw_arguments.as_deref().into_iter().collect(),
            };
            for v in values {
                self.lines.extend(v.lines().filter(|l| p.debug_output.is_match(l)).map(ToString::to_string));
            }
        }
        self.read = self.read.max(k);
    }

    /// Whether `pat` sits on one of those lines within its debug call: the call starts before
    /// the pattern ends (`/DEBUG:/d`, or `/print(f"DEBUG:/d` naming the call itself). A pattern
    /// shorter than 4 characters names too little to say which lines it takes out.
    fn has(&self, pat: &str, p: &Profile) -> bool {
        pat.chars().count() >= 4
            && self.lines.iter().any(|l| l.match_indices(pat).any(|(i, _)| p.debug_output.is_match(&l[..i + pat.len()])))
    }
}

/// An editing call's text replacement (the profile's `replace_arguments`), when it replaces one
/// occurrence: `replace_all` may have changed more than the swap back restores.
fn replacement<'a>(args: &'a Value, p: &Profile) -> Option<(&'a str, &'a str)> {
    if args.get("replace_all").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    p.replace_arguments.iter().find_map(|(o, n)| Some((args.get(o)?.as_str()?, args.get(n)?.as_str()?)))
}

/// Per file, the text replacements an editing tool made that no later one swapped back, and
/// whether anything else wrote the file: an edit that swaps back an earlier one's text
/// (`old`/`new` exchanged), leaving no other change to the file, put the file back as it was
/// (a compatibility shim tried and taken out). Kept in buckets by file name, so a command's
/// relative path and an editor's absolute one meet, and paired only when [`changes::same_file`]
/// says they are one file (`pkg/a/__init__.py` is not `pkg/b/__init__.py`). A write whose files
/// cannot be named (`xargs sed -i`) may have changed any of them.
#[derive(Default)]
struct Swaps {
    files: HashMap<String, Vec<SwapFile>>,
}

/// One file's open replacements, and whether anything else wrote it since the first.
struct SwapFile {
    path: String,
    open: Vec<(String, String)>,
    other: bool,
}

impl Swaps {
    fn file(&mut self, path: &str) -> &mut SwapFile {
        let bucket = self.files.entry(changes::file_name(path).to_string()).or_default();
        let k = match bucket.iter().position(|f| changes::same_file(&f.path, path)) {
            Some(k) => k,
            None => {
                bucket.push(SwapFile { path: path.to_string(), open: Vec::new(), other: false });
                bucket.len() - 1
            }
        };
        &mut bucket[k]
    }

    /// Writes other than a replacement: the files they name, or every file when one is not named.
    fn touched(&mut self, writes: &[String]) {
        for w in writes {
            if changes::opaque(w) {
                // A package install leaves the repository's files alone.
                if !w.contains("install") {
                    self.files.values_mut().flatten().for_each(|f| f.other = true);
                }
            } else {
                self.file(w).other = true;
            }
        }
    }

    /// Records the replacement; true when it swapped back the last one left on a file nothing
    /// else wrote.
    fn swap(&mut self, path: &str, (old, new): (&str, &str)) -> bool {
        if old == new {
            return false;
        }
        let f = self.file(path);
        match f.open.iter().rposition(|(o, n)| o == new && n == old) {
            Some(k) => {
                f.open.remove(k);
                f.open.is_empty() && !f.other
            }
            None => {
                f.open.push((old.to_string(), new.to_string()));
                false
            }
        }
    }
}

/// The trajectory's calls but the commands its harness runs by itself (the profile's
/// `own_commands`, Vorflux's memory flush): those are not the agent's actions.
fn agent_calls<'t, 'p>(t: &'t Trajectory, p: &'p Profile) -> impl Iterator<Item = (CallRef, &'t crate::model::ToolCall)> + use<'t, 'p> {
    t.calls().filter(move |(_, call)| {
        p.own_commands.is_empty()
            || !(p.is_shell(&call.name) && call.shell_command(&p.shell_arguments).is_some_and(|c| p.own_commands.is_match(&c)))
    })
}

/// Lines of a terminal screen read for swallowed keystrokes.
const SCREEN_LINES: usize = 10_000;

/// Whether the terminal screen of `step` shows the first command line of `keystrokes` typed after the
/// continuation prompt `ps2` (or glued to the end of such a line, when the keystrokes before it
/// lacked their newline), and never after the shell's own prompt (`# ` or `$ `): the shell read
/// it as a line of a here-doc or quote an earlier command left open. The screen wraps long
/// lines, so only a prefix of the line is compared, shorter after the shell's prompt, which is
/// itself long (`root@host:/path# `).
fn typed_after(keystrokes: &str, step: &crate::model::Step, ps2: &str) -> bool {
    // Its first command line: a leading line that only closes the open here-doc (`EOF\npytest\n`,
    // a bare upper-case delimiter) lets what follows it run, echoed after the shell's own prompt.
    let delimiter = |l: &str| l.len() >= 2 && l.chars().all(|c| c.is_ascii_uppercase() || c == '_');
    let line = keystrokes.lines().map(str::trim_end).find(|l| !l.trim().is_empty() && !delimiter(l.trim())).unwrap_or("");
    let cut = |n: usize| line.char_indices().nth(n).map_or(line, |(i, _)| &line[..i]);
    let (long, short) = (cut(60), cut(12));
    if long.trim().is_empty() {
        return false;
    }
    // The lines read are bounded: a screen is at most a few thousand lines.
    let ran_at = [format!("# {short}"), format!("$ {short}")];
    let mut after_ps2 = false;
    for r in &step.tool_results {
        for l in r.output.lines().take(SCREEN_LINES) {
            if l.strip_prefix(ps2).is_some_and(|rest| rest.contains(long)) {
                after_ps2 = true;
            } else if ran_at.iter().any(|at| l.contains(at.as_str())) {
                return false;
            }
        }
    }
    after_ps2
}

/// Files an editing tool touches: its path argument, or the files named in an
/// `apply_patch` envelope.
fn edited_paths(args: &Value, raw: Option<&str>, names: &[String]) -> Vec<String> {
    for n in names {
        if let Some(p) = args.get(n).and_then(Value::as_str) {
            return vec![p.to_string()];
        }
    }
    let patch = args
        .get("input")
        .or_else(|| args.get("patch"))
        .and_then(Value::as_str)
        .map(ToString::to_string)
        .or_else(|| args.as_str().map(ToString::to_string))
        .or_else(|| raw.map(ToString::to_string));
    let mut files = Vec::new();
    if let Some(p) = patch {
        for line in p.lines() {
            for prefix in ["*** Update File: ", "*** Add File: ", "*** Delete File: ", "+++ b/"] {
                if let Some(f) = line.strip_prefix(prefix) {
                    files.push(f.trim().to_string());
                }
            }
        }
    }
    files
}

/// Whether a check passed, from its exit code or, failing that, from what test runners print.
#[must_use]
pub fn check_passed(r: &ToolResult) -> Option<bool> {
    if let Some(c) = r.exit_code {
        return Some(c == 0);
    }
    if r.is_error {
        return Some(false);
    }
    // ASCII digits: a Unicode `\d` after a Unicode `\b` pushes the regex off its lazy DFA,
    // and a 100 KB test log then takes tens of milliseconds instead of a fraction of one.
    static FAIL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static PASS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let fail = FAIL.get_or_init(|| {
        regex::Regex::new(r"(?m)\b[0-9]+ (failed|errors?)\b|^FAILED\b|^FAIL\b|\bFAILED \(|Traceback \(most recent call last\)|^E\s{3}|test result: FAILED|\bnot ok [0-9]+|\bAssertionError\b").expect("static regex")
    });
    let pass = PASS.get_or_init(|| {
        regex::Regex::new(
            r"(?m)\b[0-9]+ passed\b|^OK\b|^OK \(|test result: ok\.|^ok\s+\S+\s+[0-9.]+s$|\bTests?:\s+[0-9]+ passed|\bAll tests passed\b",
        )
        .expect("static regex")
    });
    if fail.is_match(&r.output) {
        Some(false)
    } else if pass.is_match(&r.output) {
        Some(true)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_back_puts_the_file_back_only_when_nothing_else_changed_it() {
        let mut s = Swaps::default();
        assert!(!s.swap("/repo/a.py", ("x", "y")));
        assert!(!s.swap("a.py", ("p", "q")));
        assert!(!s.swap("a.py", ("y", "x")), "q is still in place of p");
        assert!(s.swap("a.py", ("q", "p")));
        // A file a command also wrote is in a state the swaps cannot tell.
        assert!(!s.swap("b.py", ("x", "y")));
        s.touched(&["src/b.py".to_string()]);
        assert!(!s.swap("b.py", ("y", "x")));
        // Nor is any file after a write that names none (`xargs sed -i`), but an install.
        assert!(!s.swap("d.py", ("x", "y")));
        s.touched(&["(pip install)".to_string()]);
        assert!(s.swap("d.py", ("y", "x")));
        assert!(!s.swap("d.py", ("x", "y")));
        s.touched(&["(sed -i)".to_string()]);
        assert!(!s.swap("d.py", ("y", "x")));
        // Files of one name in two directories are two files.
        assert!(!s.swap("pkg/a/__init__.py", ("run", "run, stop")));
        assert!(!s.swap("pkg/b/__init__.py", ("run, stop", "run")));
        assert!(s.swap("/repo/pkg/a/__init__.py", ("run, stop", "run")));
        // An edit that changes nothing swaps nothing back.
        assert!(!s.swap("c.py", ("x", "x")));
        let p = crate::rules::Rules::builtin().expect("built-in rules").profile_for("vorflux").clone();
        assert_eq!(replacement(&serde_json::json!({"old_string": "a", "new_string": "b"}), &p), Some(("a", "b")));
        assert_eq!(replacement(&serde_json::json!({"old_string": "a", "new_string": "b", "replace_all": true}), &p), None);
    }

    #[test]
    fn apply_patch_names_its_files() {
        let p = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: b.rs\n*** End Patch";
        assert_eq!(edited_paths(&serde_json::json!({"input": p}), None, &[]), ["src/a.rs", "b.rs"]);
    }

    #[test]
    fn checks_pass_by_exit_code_or_runner_output() {
        let mut r = ToolResult::new("===== 3 passed in 0.2s =====");
        assert_eq!(check_passed(&r), Some(true));
        r.output = "FAILED tests/test_a.py::test_x\n1 failed, 2 passed".into();
        assert_eq!(check_passed(&r), Some(false));
        r.exit_code = Some(0);
        assert_eq!(check_passed(&r), Some(true));
        assert_eq!(check_passed(&ToolResult::new("hello")), None);
    }
}
