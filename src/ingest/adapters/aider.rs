//! The Aider benchmark: one `.aider.results.json` per exercise, with the chat history beside it.
//!
//! `benchmark/benchmark.py` runs each exercise as up to `tries` rounds: aider replies with edits,
//! the benchmark runs the unit tests and, on failure, sends the test output back. The results
//! file records one boolean per round (`tests_outcomes`), the counters the leaderboard sums
//! (malformed responses, exhausted context windows, test timeouts, ...) and cost; a crash leaves
//! only `{"exception": traceback}`. `.aider.chat.history.md` holds the rounds as Markdown:
//! `#### ` lines are what was sent to the model, `> ` lines are aider's own output, and plain
//! text is the model's reply or, after aider's output, the test run the benchmark appended.
//! The leaderboard YAML (`polyglot_leaderboard.yml`) sums whole runs and is recognized and
//! skipped; so is each exercise's Exercism `.meta/config.json`.
//!
//! What the results say about the end is left to `rules/harnesses/aider.toml`: the crash's
//! exception line is an error signal; `tests_outcomes` (and, when no try passed,
//! `num_exhausted_context_windows`) are statuses. Aider's complaints about replies it could not
//! apply are the profile's `[[format_error]]` entries.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, FileSet, Output, Sniff, Unit, file_name, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Outcome, OutcomeStatus, Role, Step, TestResult, Trajectory};

const RESULTS: &str = "aider";
const HISTORY: &str = "aider-chat-history";
const RESULTS_FILE: &str = ".aider.results.json";
const HISTORY_FILE: &str = ".aider.chat.history.md";

/// The dict `run_test_real` writes, or the `{"exception": ...}` of `run_test`.
#[derive(Deserialize)]
struct RawResults {
    #[serde(default)]
    testdir: Option<String>,
    #[serde(default)]
    testcase: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    edit_format: Option<String>,
    #[serde(default)]
    tests_outcomes: Option<Vec<bool>>,
    #[serde(default)]
    cost: Option<f64>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    test_timeouts: Option<u64>,
    #[serde(default)]
    commit_hash: Option<String>,
    #[serde(default)]
    num_error_outputs: Option<u64>,
    #[serde(default)]
    num_user_asks: Option<u64>,
    #[serde(default)]
    num_exhausted_context_windows: Option<u64>,
    #[serde(default)]
    num_malformed_responses: Option<u64>,
    #[serde(default)]
    syntax_errors: Option<u64>,
    #[serde(default)]
    indentation_errors: Option<u64>,
    #[serde(default)]
    lazy_comments: Option<u64>,
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    chat_hashes: Option<Vec<Value>>,
    #[serde(default)]
    editor_model: Option<String>,
    #[serde(default)]
    exception: Option<String>,
}

/// `<run>/<lang>/exercises/practice/<exercise>` → `<lang>/<exercise>` (polyglot exercises share
/// names across languages); otherwise the exercise name.
fn task_id(testdir: Option<&str>, path: &Path, testcase: Option<&str>) -> String {
    let from = |s: &str| -> Option<String> {
        let s = s.replace('\\', "/");
        let (left, ex) = s.split_once("/exercises/practice/")?;
        let lang = left.rsplit('/').next().filter(|l| !l.is_empty())?;
        let ex = ex.trim_end_matches('/').split('/').next()?;
        Some(format!("{lang}/{ex}"))
    };
    let dir = path.parent().map(crate::util::display_path);
    testdir
        .and_then(from)
        .or_else(|| dir.as_deref().and_then(from))
        .or_else(|| testcase.map(ToString::to_string))
        .or_else(|| path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "unknown".into())
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn build(r: &RawResults, path: &Path, shown: &str, files: Vec<crate::model::SourceFile>, adapter: &str) -> Trajectory {
    let task = task_id(r.testdir.as_deref(), path, r.testcase.as_deref());
    let mut t = crate::model::Trajectory::new(task, "aider", adapter, 1, files);
    t.provenance.format_version = Some("aider-benchmark-results".into());
    t.model = r.model.clone();
    t.harness_version = r.commit_hash.clone().filter(|c| !c.is_empty());
    t.usage.cost_usd = r.cost;
    t.usage.wall_seconds = r.duration;
    t.usage.prompt_tokens = r.prompt_tokens;
    t.usage.completion_tokens = r.completion_tokens;
    t.usage.api_calls = r.chat_hashes.as_ref().map(|h| h.len() as u64);
    if let Some(f) = &r.edit_format {
        t.notes.push(match &r.editor_model {
            Some(e) => format!("edit format {f} (editor model {e})"),
            None => format!("edit format {f}"),
        });
    }

    if let Some(ex) = &r.exception {
        // A Python traceback ends with the exception that stopped the benchmark.
        let last = ex.lines().rev().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
        t.signals.error("exception", last);
        let mut o = Outcome::new(OutcomeStatus::Errored, shown, "exception");
        o.detail = Some("the benchmark crashed on this exercise; no tests ran".into());
        t.outcome = o;
        return t;
    }

    let outcomes = r.tests_outcomes.clone().unwrap_or_default();
    let Some(&last) = outcomes.last() else {
        let mut o = Outcome::new(OutcomeStatus::Unknown, shown, "tests_outcomes");
        o.detail = Some("tests_outcomes is empty: no tests ran".into());
        t.outcome = o;
        return t;
    };
    let mut o = Outcome::from_reward(if last { 1.0 } else { 0.0 }, shown, "tests_outcomes (last try)");
    o.tests = outcomes
        .iter()
        .enumerate()
        .map(|(i, ok)| TestResult::new(format!("try {}", i + 1), if *ok { "passed" } else { "failed" }))
        .collect();
    t.outcome = o;

    // The benchmark stops at the first passing try, so the count of exhausted context windows
    // speaks of the run's end only when no try passed.
    let windows = r.num_exhausted_context_windows.unwrap_or(0);
    if !last && windows > 0 {
        t.signals.status("num_exhausted_context_windows", windows.to_string());
    }
    let shown: Vec<&str> = outcomes.iter().map(|ok| if *ok { "true" } else { "false" }).collect();
    t.signals.status("tests_outcomes", format!("[{}]", shown.join(", ")));
    // Each try is the solution handed to the tests; the benchmark's `--tries` is not recorded.
    #[expect(clippy::cast_precision_loss, reason = "a count of tries")]
    let tries = outcomes.len() as f64;
    t.signals.consumed.attempts = Some(tries);

    let counters = [
        (
            r.num_malformed_responses,
            "malformed response (a reply whose edits did not apply as written)",
            "malformed responses (replies whose edits did not apply as written)",
        ),
        (r.test_timeouts, "test run timed out", "test runs timed out"),
        (Some(windows), "exhausted context window", "exhausted context windows"),
        (r.num_user_asks, "question aider asked the user", "questions aider asked the user"),
        (r.num_error_outputs, "error output from aider", "error outputs from aider"),
        (r.syntax_errors, "SyntaxError in the test output", "SyntaxErrors in the test output"),
        (r.indentation_errors, "IndentationError in the test output", "IndentationErrors in the test output"),
        (r.lazy_comments, "lazy comment (`# ...` elision) in the replies", "lazy comments (`# ...` elisions) in the replies"),
    ];
    for (n, one, many) in counters {
        if let Some(n) = n.filter(|n| *n > 0) {
            t.notes.push(plural(n, one, many));
        }
    }
    t
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Quote,
    Plain,
}

/// Steps from `.aider.chat.history.md`, by its line markers.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn chat_steps(src: &Source, file_ix: u32) -> Result<Vec<Step>, InputError> {
    let text = src.text()?;
    let mut steps = Vec::new();
    // (kind, first byte, end byte, lines)
    let mut block: Option<(Kind, usize, usize, Vec<&str>)> = None;
    // Aider spoke after the model's last reply; a fenced block now is the test run the
    // benchmark appended, anything else is the model answering aider's reflection.
    let mut after_aider = false;
    let flush = |block: &mut Option<(Kind, usize, usize, Vec<&str>)>, after_aider: &mut bool, steps: &mut Vec<Step>| {
        let Some((kind, start, end, lines)) = block.take() else { return };
        let body = lines.join("\n").trim_end().to_string();
        let role = match kind {
            Kind::User => {
                *after_aider = false;
                Role::User
            }
            Kind::Quote => {
                *after_aider = true;
                Role::Environment
            }
            Kind::Plain if *after_aider && body.starts_with("```") => Role::Environment,
            Kind::Plain => {
                *after_aider = false;
                Role::Assistant
            }
        };
        let mut step = Step::new(role, body);
        step.source_span = Some(src.span(file_ix, start, end - start));
        steps.push(step);
    };
    let mut offset = 0usize;
    for raw in text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.starts_with("# aider chat started at") {
            flush(&mut block, &mut after_aider, &mut steps);
            after_aider = false;
            continue;
        }
        if line.trim().is_empty() {
            if let Some(b) = block.as_mut() {
                b.3.push("");
            }
            continue;
        }
        // `#### ` and `> ` need their space: `####` alone is a blank sent line, `>` alone a blank
        // aider line, and `>>>>>>> REPLACE` is the model's edit block.
        let bare = line.trim_end();
        let (kind, content) = if let Some(rest) = line.strip_prefix("#### ") {
            (Kind::User, rest.trim_end())
        } else if bare == "####" {
            (Kind::User, "")
        } else if let Some(rest) = line.strip_prefix("> ") {
            (Kind::Quote, rest.trim_end())
        } else if bare == ">" {
            (Kind::Quote, "")
        } else {
            (Kind::Plain, line)
        };
        match block.as_mut() {
            Some(b) if b.0 == kind => {
                b.2 = offset;
                b.3.push(content);
            }
            _ => {
                flush(&mut block, &mut after_aider, &mut steps);
                block = Some((kind, start, offset, vec![content]));
            }
        }
    }
    flush(&mut block, &mut after_aider, &mut steps);
    Ok(steps)
}

/// What aider wrote to a file: its own line `Applied edit to <file>` after a reply. The reply's
/// edits (a whole file, SEARCH/REPLACE blocks, a diff) are text in the model's answer; aider's
/// line is the record that they landed, and of which file. Each becomes an `edit` call of the
/// reply it follows, answered by aider's line, so the change is a change like any tool's.
fn applied_edits(steps: &mut [Step]) {
    let mut reply: Option<usize> = None;
    let mut n = 0usize;
    for i in 0..steps.len() {
        match steps[i].role {
            Role::Assistant => reply = Some(i),
            Role::User => reply = None,
            _ => {}
        }
        if steps[i].role != Role::Environment {
            continue;
        }
        let Some(r) = reply else { continue };
        let files: Vec<String> = steps[i]
            .text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("Applied edit to "))
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect();
        for f in files {
            n += 1;
            let id = format!("aider-edit-{n}");
            steps[r].tool_calls.push(crate::model::ToolCall {
                id: Some(id.clone()),
                name: "edit".into(),
                arguments: serde_json::json!({ "path": f }),
                raw_arguments: None,
            });
            let mut res = crate::model::ToolResult::new(format!("Applied edit to {f}"));
            res.call_id = Some(id);
            steps[i].tool_results.push(res);
        }
    }
}

/// An exercise's `.aider.results.json`, with its chat history.
pub struct AiderResults;

impl Adapter for AiderResults {
    fn name(&self) -> &'static str {
        RESULTS
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Aider benchmark exercise (.aider.results.json + .aider.chat.history.md)"
    }

    fn versions(&self) -> &'static str {
        "polyglot and older flat layouts"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.has("tests_outcomes") && (j.has("testcase") || j.has("testdir")) {
            return marker("exercise results (testcase, tests_outcomes)");
        }
        if p.name == RESULTS_FILE && j.has("exception") {
            return structure(".aider.results.json of a crashed exercise (exception)");
        }
        Err("no testcase/tests_outcomes".into())
    }

    fn companions(&self, primary: &Path, files: &FileSet) -> Vec<PathBuf> {
        let Some(dir) = primary.parent() else { return Vec::new() };
        files.range(dir.to_path_buf()..).take_while(|(p, _)| p.starts_with(dir)).map(|(p, _)| p.clone()).filter(|p| p != primary).collect()
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let r: RawResults = src.json("Aider benchmark results")?;
        let mut t = build(&r, &unit.primary.path, &unit.primary.display, vec![src.provenance("results")], self.name());
        let history = unit.primary.path.with_file_name(HISTORY_FILE);
        match unit.companions.iter().find(|c| c.path == history) {
            Some(c) => {
                let hsrc = Source::read(&c.path, &c.display)?;
                t.provenance.files.push(hsrc.provenance("transcript"));
                t.steps = chat_steps(&hsrc, 1)?;
                applied_edits(&mut t.steps);
            }
            None => t.notes.push("no .aider.chat.history.md beside the results: the record has no steps".into()),
        }
        out.emit(t);
        Ok(())
    }
}

/// `.aider.chat.history.md`, read with the results beside it.
pub struct AiderChatHistory;

impl Adapter for AiderChatHistory {
    fn name(&self) -> &'static str {
        HISTORY
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "Aider chat history (read with the .aider.results.json beside it)"
    }

    fn versions(&self) -> &'static str {
        "benchmark .aider.chat.history.md"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        if p.name == HISTORY_FILE {
            return file_name(HISTORY_FILE);
        }
        Err(format!("not {HISTORY_FILE}"))
    }
}

/// An exercise's Exercism `.meta/config.json` (which files are solution, test, example).
pub struct ExercismConfig;

impl Adapter for ExercismConfig {
    fn name(&self) -> &'static str {
        "exercism-config"
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "Exercism exercise configuration (.meta/config.json of an Aider benchmark exercise)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        let in_meta = p.parents().next().is_some_and(|n| n == ".meta");
        if in_meta && p.name == "config.json" && (j.has("files.solution") || j.has("files.test")) {
            return marker(".meta/config.json with files.solution/test");
        }
        Err("not an Exercism .meta/config.json".into())
    }
}

/// Aider's leaderboard YAML: one summary per benchmark run, not a trajectory.
pub struct AiderLeaderboard;

impl Adapter for AiderLeaderboard {
    fn name(&self) -> &'static str {
        "aider-leaderboard"
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "Aider leaderboard summary (run-level pass rates; not a trajectory)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        if !matches!(p.ext(), "yml" | "yaml") {
            return Err("not YAML".into());
        }
        let text = p.text();
        if text.contains("pass_rate_1:") || (text.contains("dirname:") && text.contains("test_cases:") && text.contains("edit_format:")) {
            return marker("run summaries (dirname, pass_rate_1, test_cases)");
        }
        Err("no dirname/pass_rate_1".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_keep_the_language() {
        let p = Path::new("x/.aider.results.json");
        assert_eq!(
            task_id(Some("/b/tmp.benchmarks/2025-01-01--run/python/exercises/practice/bowling"), p, Some("bowling")),
            "python/bowling"
        );
        assert_eq!(task_id(None, Path::new("r/rust/exercises/practice/grep/.aider.results.json"), None), "rust/grep");
        assert_eq!(task_id(Some("/b/tmp.benchmarks/run/anagram"), p, Some("anagram")), "anagram");
    }

    #[test]
    fn history_markers_make_turns() {
        let text = "\n# aider chat started at 2025-01-01 10:00:00\n\n> Aider v0.70.0\n\n#### Fix it.  \n#### Please.  \n\nHere is the fix.\n\nbowling.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n\n> Applied edit to bowling.py\n```\nFAILED test_a\n```\n#### See the errors.  \n\nDone.\n";
        let src = Source::from_bytes(Path::new("h.md"), "h.md", text.as_bytes().to_vec());
        let steps = chat_steps(&src, 1).unwrap();
        let roles: Vec<Role> = steps.iter().map(|s| s.role).collect();
        assert_eq!(
            roles,
            [Role::Environment, Role::User, Role::Assistant, Role::Environment, Role::Environment, Role::User, Role::Assistant]
        );
        assert_eq!(steps[1].text, "Fix it.\nPlease.");
        assert!(steps[2].text.starts_with("Here is the fix.") && steps[2].text.ends_with(">>>>>>> REPLACE"));
        assert_eq!(steps[4].text, "```\nFAILED test_a\n```");
        let sp = steps[6].source_span.unwrap();
        assert_eq!(&text[sp.offset as usize..(sp.offset + sp.len) as usize], "Done.\n");
    }
}
