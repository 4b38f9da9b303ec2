//! Formats as data: the shipped mappings read their fixtures (detected, not forced), a user's
//! mapping in `--rules DIR` is detected or named with `--format`, a bad mapping is a diagnostic
//! into its TOML, and the real public files each shipped mapping was written for.

use std::path::{Path, PathBuf};

use coroner::model::{Role, TerminationKind, Trajectory};

use crate::common::{builtin, classified, coroner, ingest, root, statuses, stdout, tempdir};

fn counts(ts: &[Trajectory]) -> (usize, usize, usize) {
    let steps = ts.iter().map(|t| t.steps.len()).sum();
    let calls = ts.iter().map(|t| t.calls().count()).sum();
    let results = ts.iter().flat_map(|t| &t.steps).map(|s| s.tool_results.len()).sum();
    (steps, calls, results)
}

fn roles(t: &Trajectory) -> Vec<Role> {
    t.steps.iter().map(|s| s.role).collect()
}

#[test]
fn every_shipped_mapping_reads_its_fixture_as_it_says() {
    let rules = builtin();
    assert!(rules.formats.len() >= 2, "the shipped mappings load: {:?}", rules.formats.iter().map(|m| &m.name).collect::<Vec<_>>());
    for m in &rules.formats {
        let f = m.fixture.as_ref().unwrap_or_else(|| panic!("{} has no [fixture]", m.file));
        let path = root().join("rules/formats").join(&f.file);
        let (ts, s) = ingest(&[&path]);
        // Detected by its own recognition rule, not forced.
        assert_eq!(s.per_adapter.get(m.name.as_str()), Some(&f.records), "{}: {:?} {:?}", m.name, s.per_adapter, s.diagnostics);
        assert_eq!(counts(&ts), (f.steps, f.calls, f.results), "{}: (steps, calls, results)", m.name);
        assert_eq!(ts[0].task_id, f.task.clone().unwrap_or_default(), "{}", m.name);
        assert!(ts.iter().all(|t| t.notes.iter().any(|n| n.contains(&m.file))), "{}: the record names its mapping", m.name);
    }
}

fn fixture(name: &str) -> PathBuf {
    let m = builtin().formats.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no mapping {name}"));
    root().join("rules/formats").join(&m.fixture.as_ref().unwrap().file)
}

#[test]
fn vorflux_spans_read_replies_as_text_and_executed_tools_with_their_results() {
    let (ts, _) = ingest(&[&fixture("vorflux-spans")]);
    let t = &ts[0];
    assert_eq!((t.harness.as_str(), t.provenance.adapter.as_str()), ("vorflux", "vorflux-spans"));
    assert_eq!(t.session_id.as_deref(), Some("5b0e7c1e-2f0a-4d43-9c55-0a7d3e1f0c11"));
    use Role::{Assistant as A, Tool as T, User as U};
    // The task prompt of the first reply, the reply; four executed calls each with its result;
    // the judge's call counted, not read.
    assert_eq!(roles(t), [U, A, A, T, A, T, A, A, T, A, T, A]);
    assert!(t.steps[0].text.starts_with("Fix the bug in django/utils/text.py"));
    let calls: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(calls, ["bash_execute", "read_text_file", "edit_file", "bash_execute"]);
    assert!(t.notes.iter().any(|n| n == "entries not turned into steps: 1 × judge_call"), "{:?}", t.notes);
    // A command's result: stdout, then stderr, with its exit code; a file read's text as it is.
    let test_run = &t.steps[10].tool_results[0];
    assert_eq!(test_run.exit_code, Some(1));
    assert!(
        test_run.output.starts_with("FAIL: test_slugify") && test_run.output.ends_with("AssertionError: 'a-1' != 'a1'"),
        "{}",
        test_run.output
    );
    assert_eq!(test_run.call.map(|c| c.step), Some(9));
    assert!(t.steps[5].tool_results[0].output.starts_with("def slugify(value"));
    assert_eq!(t.steps[2].tool_calls[0].arguments["command"], "grep -n 'def slugify' -r django/utils");
    // Times with a space and nanoseconds, no zone, bound the record.
    assert_eq!(t.started_at.as_deref(), Some("2026-05-05 12:13:43.317824909"));
    assert_eq!(t.usage.wall_seconds.map(f64::round), Some(48.0));
}

#[test]
fn trae_agent_steps_pair_listed_results_and_the_end_is_the_profiles_to_say() {
    let (ts, _) = ingest(&[&fixture("trae-agent")]);
    let t = &ts[0];
    assert_eq!(t.task_id, "vllm_core-9999");
    assert_eq!(t.model.as_deref(), Some("gpt-5"));
    use Role::{Assistant as A, Tool as T, User as U};
    assert_eq!(roles(t), [U, A, T, A, T, A]);
    // `task_done` lives only in the reply's calls: the step's own `tool_calls` is null there.
    let calls: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(calls, ["bash", "str_replace_based_edit_tool", "task_done"]);
    let failed = &t.steps[4].tool_results[0];
    assert!(failed.is_error && failed.output.contains("old_str did not appear verbatim"), "{failed:?}");
    assert_eq!(failed.call.map(|c| (c.step, c.call)), Some((3, 0)));
    assert_eq!(t.steps[3].tokens.as_ref().and_then(|k| k.prompt), Some(10400));
    assert_eq!(t.signals.limits.steps, Some(120.0));
    let declared: Vec<&str> = t.declared_tools.iter().flatten().map(|d| d.name.as_str()).collect();
    assert_eq!(declared, ["bash", "str_replace_based_edit_tool", "sequentialthinking", "task_done"]);
    assert_eq!(statuses(t), [("success", "true"), ("final_result", "")]);
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.termination.rule.as_deref(), Some("trae-task-done"));
}

/// The fixture with its end rewritten: `success`, `final_result` and the last step's `error`.
fn trae_variant(dir: &Path, task: &str, success: bool, final_result: &str, last_error: Option<&str>) -> PathBuf {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(fixture("trae-agent")).unwrap()).unwrap();
    v["success"] = success.into();
    v["final_result"] = final_result.into();
    if let Some(e) = last_error {
        let steps = v["agent_steps"].as_array_mut().unwrap();
        steps.pop();
        let last = steps.last_mut().unwrap();
        last["error"] = e.into();
        last["tool_results"] = serde_json::Value::Null;
    }
    let p = dir.join(task).join("trajectory.json");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p
}

#[test]
fn trae_agent_ends_at_the_step_limit_or_on_a_providers_refusal() {
    let tmp = tempdir();
    let limit = trae_variant(tmp.path(), "limit", false, "Task execution exceeded maximum steps without completion.", None);
    let sso =
        trae_variant(tmp.path(), "sso", false, "", Some("Error when retrieving token from sso: Token has expired and refresh failed"));
    let got = classified(&[&limit, &sso]);
    let by = |task: &str| got.iter().find(|(t, _)| t.task_id == task).unwrap();
    let (t, _) = by("limit");
    assert_eq!((t.termination.kind, t.termination.rule.as_deref()), (TerminationKind::Budget, Some("trae-max-steps")));
    let (t, _) = by("sso");
    assert_eq!(t.signals.errors.len(), 1);
    assert_eq!(t.signals.errors[0].step, Some(3), "the error is at the step it cut short");
    assert_eq!((t.termination.kind, t.termination.rule.as_deref()), (TerminationKind::Infrastructure, Some("provider-auth-error")));
}

const ACME: &str = r#"
mapping = 1
name = "acme-events"
description = "ACME's agent event log"
versions = "acme 2"
harness = "acme"
layout = "jsonl"

[recognize]
keys = ["acme_run", "event"]

[records]
lines = "steps"
task = "acme_run.task"
model = "acme_run.model"
statuses = ["acme_run.end"]
resolved = "acme_run.passed"
reward = "acme_run.score"

[steps]
kind = "event"
timestamp = "at"

[steps.kinds.message]
role_field = "who"
text = "text"

[steps.kinds.action]
role = "assistant"
tool = "action.tool"
arguments = "action.args"
result = "observation.text"
exit_code = "observation.code"
"#;

const ACME_RUN: &str = r#"{"acme_run": {"task": "t-7", "model": "m1"}, "event": "message", "who": "user", "text": "make the tests pass", "at": "2026-01-01T00:00:00Z"}
{"acme_run": {"task": "t-7"}, "event": "action", "action": {"tool": "shell", "args": {"command": "pytest -q"}}, "observation": {"text": "1 failed", "code": 1}, "at": "2026-01-01T00:00:05Z"}
{"acme_run": {"task": "t-7"}, "event": "heartbeat", "at": "2026-01-01T00:00:06Z"}
{"acme_run": {"task": "t-7", "end": "gave_up", "passed": false, "score": 0.25}, "event": "message", "who": "agent", "text": "I cannot fix this.", "at": "2026-01-01T00:00:09Z"}
"#;

fn rules_dir(mapping: &str) -> tempfile::TempDir {
    let d = tempdir();
    std::fs::create_dir_all(d.path().join("formats")).unwrap();
    std::fs::write(d.path().join("formats/acme.toml"), mapping).unwrap();
    d
}

#[test]
fn a_users_mapping_is_detected_with_rules_and_named_with_format() {
    let rules = rules_dir(ACME);
    let data = tempdir();
    let run = data.path().join("run.jsonl");
    std::fs::write(&run, ACME_RUN).unwrap();
    let out = data.path().join("out.jsonl");
    let o = coroner(&["ingest", "--rules", rules.path().to_str().unwrap(), run.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: Trajectory = serde_json::from_str(std::fs::read_to_string(&out).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!((t.task_id.as_str(), t.harness.as_str(), t.model.as_deref()), ("t-7", "acme", Some("m1")));
    assert_eq!(roles(&t), [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    assert_eq!(t.steps[2].tool_results[0].exit_code, Some(1));
    assert_eq!(statuses(&t), [("acme_run.end", "gave_up")]);
    // `resolved` decides the outcome; the reward is kept beside it.
    assert_eq!((t.outcome.status, t.outcome.reward), (coroner::model::OutcomeStatus::Failed, Some(0.25)));
    assert_eq!(t.outcome.source.as_ref().map(|s| s.field.as_str()), Some("acme_run.passed"));
    assert!(t.notes.iter().any(|n| n == "entries not turned into steps: 1 × heartbeat"), "{:?}", t.notes);
    // Without the rules it is no format coroner knows.
    let o = coroner(&["ingest", run.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("recognize the format"), "{}", String::from_utf8_lossy(&o.stderr));
    // A mapping without [recognize] is read only when named.
    let quiet = rules_dir(&ACME.replace("[recognize]\nkeys = [\"acme_run\", \"event\"]\n", ""));
    let q = quiet.path().to_str().unwrap();
    let o = coroner(&["ingest", "--rules", q, run.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(!o.status.success());
    let o = coroner(&["ingest", "--rules", q, "--format", "acme-events", run.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The formats list shows it with the shipped mappings, after the built-in adapters.
    let o = coroner(&["ingest", "--rules", q, "--list-formats"]);
    let list = stdout(&o);
    let row = list.lines().position(|l| l.starts_with("acme-events ")).unwrap_or_else(|| panic!("{list}"));
    let line = list.lines().nth(row).unwrap();
    assert!(line.contains("acme 2") && line.contains("formats/acme.toml"), "{line}");
    assert!(row > list.lines().position(|l| l.starts_with("verdicts ")).unwrap(), "{list}");
}

#[test]
fn a_bad_mapping_is_a_diagnostic_into_its_toml() {
    let rules = rules_dir(&ACME.replace("tool = \"action.tool\"", "tool = \"action..tool\""));
    let o = coroner(&["ingest", "--rules", rules.path().to_str().unwrap(), "--list-formats"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("acme.toml") && err.contains("`action..tool` is not a path"), "{err}");
    // The label points at the value in the file.
    assert!(err.contains("tool = \"action..tool\""), "{err}");
    // A mapping may not take a built-in format's name.
    let rules = rules_dir(&ACME.replace("name = \"acme-events\"", "name = \"atif\""));
    let run = rules.path().join("run.jsonl");
    std::fs::write(&run, ACME_RUN).unwrap();
    let o = coroner(&["ingest", "--rules", rules.path().to_str().unwrap(), run.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`atif` is the name of a") && err.contains("built-in format"), "{err}");
}

/// A file at a pinned commit of a mirrored repository (`CORONER_MIRROR`), or a visible skip.
fn mirrored(repo: &str, commit: &str, path: &str, dest: &Path) -> Option<PathBuf> {
    let Some(root) = std::env::var_os("CORONER_MIRROR").filter(|r| !r.is_empty()) else {
        eprintln!("SKIPPED: CORONER_MIRROR is unset (the test on {repo}:{path} needs the mirror)");
        return None;
    };
    let dir = Path::new(&root).join(repo.replace('/', "+")).join("repo");
    let out = std::process::Command::new("git").arg("-C").arg(&dir).arg("show").arg(format!("{commit}:{path}")).output().ok();
    let Some(o) = out.filter(|o| o.status.success()) else {
        eprintln!("SKIPPED: {commit}:{path} is not in {}", dir.display());
        return None;
    };
    let p = dest.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, o.stdout).unwrap();
    Some(p)
}

#[test]
fn real_vorflux_trajectory() {
    let tmp = tempdir();
    let Some(p) = mirrored(
        "piyushhhxyz/vorflux-swe-benchmarks",
        "9e2acad918d7c20f5114062614c88c32d5878980",
        "evaluation/verified/20250519_vorflux_opus46-code_gpt55h-review/trajs/django__django-14315.json",
        tmp.path(),
    ) else {
        return;
    };
    let (ts, s) = ingest(&[&p]);
    assert_eq!(s.per_adapter.get("vorflux-spans"), Some(&1), "{:?}", s.diagnostics);
    let t = &ts[0];
    assert_eq!(t.task_id, "django__django-14315");
    assert_eq!(t.steps[0].role, Role::User);
    assert!(t.calls().count() > 10);
    assert!(t.calls().all(|(r, _)| t.result_of(r).is_some()), "every executed call carries its result");
    assert!(t.notes.iter().any(|n| n.contains("× judge_call")), "{:?}", t.notes);
}

#[test]
fn real_trae_agent_run_ended_by_an_error() {
    let tmp = tempdir();
    let Some(p) = mirrored(
        "ISO-Bench/ISO-Bench",
        "9cc08ddd1011a34c49b43c22671ae639f16a21d3",
        "ISO-Bench/state/runs/sglan/trae/us-anthropic-claude-sonnet-4-5-20250929-v1-0/2025-12-24_07-41-47/sglang_sonnet45_rerun_021f76e4/trajectory.json",
        tmp.path(),
    ) else {
        return;
    };
    let (ts, s) = ingest(&[&p]);
    assert_eq!(s.per_adapter.get("trae-agent"), Some(&1), "{:?}", s.diagnostics);
    let t = &ts[0];
    assert_eq!(t.task_id, "sglang_sonnet45_rerun_021f76e4");
    assert!(!t.signals.errors.is_empty(), "the last step's error is a signal");
    assert_ne!(t.termination.kind, TerminationKind::Unknown, "{:?}", t.termination);
}
