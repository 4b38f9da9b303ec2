//! mini-swe-agent trajectories: the real v1 run with its SWE-bench report, v2 samples, exit statuses, a batch run layout.

use coroner::ingest::FileStatus;
use coroner::ingest::adapters::swe::mini_swe_agent::MiniSweAgent;
use coroner::ingest::format::{Adapter, Strength};
use coroner::ingest::probe::Probe;
use coroner::model::{Amounts, Budget, CallRef, Enforcer, OutcomeStatus, Role, Signal, Termination, TerminationKind, Trajectory};

use crate::common::{builtin, by_task, corpus, ingest, samples};

fn commands(t: &Trajectory) -> Vec<String> {
    t.calls().map(|(_, c)| c.arguments["command"].as_str().unwrap_or("").to_string()).collect()
}

fn exit_codes(t: &Trajectory) -> Vec<Option<i64>> {
    t.steps.iter().flat_map(|s| s.tool_results.iter()).map(|r| r.exit_code).collect()
}

#[test]
fn v1_real_run_pairs_text_actions_with_return_codes_and_joins_its_report() {
    let Some(dir) = corpus("mini-swe-agent/django__django-16255") else { return };
    let (ts, summary) = ingest(&[&dir]);
    assert_eq!(summary.quarantined_files(), 0);
    assert_eq!(ts.len(), 1);
    let t = &ts[0];
    assert_eq!(t.task_id, "django__django-16255");
    assert_eq!(t.harness, "mini-swe-agent");
    assert_eq!(t.harness_version.as_deref(), Some("1.15.0"));
    assert_eq!(t.model.as_deref(), Some("google/gemini-3-pro-preview"));
    assert_eq!(t.provenance.format_version.as_deref(), Some("mini-swe-agent-1"));
    // 36 messages: system, task, then 17 replies each answered by one user message.
    assert_eq!(t.steps.len(), 36);
    assert_eq!(t.steps.iter().filter(|s| s.role == Role::Assistant).count(), 17);
    assert_eq!(t.usage.api_calls, Some(17));
    assert!((t.usage.cost_usd.unwrap() - 0.089_348_4).abs() < 1e-9);
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens), (Some(61_068), Some(2_317), Some(33_662)));
    // Every reply's fenced bash block is one `bash` call.
    assert!(t.calls().all(|(_, c)| c.name == "bash"));
    let cmds = commands(t);
    assert_eq!(cmds.len(), 17);
    assert_eq!(cmds[0], "ls -R django/contrib/sitemaps");
    assert_eq!(cmds[16], "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached");
    // Each call is answered by the next message: 16 observations with <returncode>0, then the
    // submission (no return code in it).
    assert!(t.calls().all(|(r, _)| t.result_of(r).is_some()));
    let codes = exit_codes(t);
    assert_eq!(codes.len(), 17);
    assert!(codes[..16].iter().all(|c| *c == Some(0)));
    assert_eq!(codes[16], None);
    assert_eq!(t.steps[3].tool_results[0].call, Some(CallRef { step: 2, call: 0 }));
    assert!(t.unpaired_results.is_empty());
    assert!(t.steps.iter().all(|s| s.format_error.is_none()));
    // Reasoning the provider returned, with its token count.
    let r = t.steps[2].reasoning.as_ref().unwrap();
    assert!(r.text.as_deref().unwrap().starts_with("**Diagnosing the Sitemap Issue**"));
    assert_eq!(r.tokens, Some(164));
    // Ended by the submission; the patch is info.submission.
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.termination.raw.as_deref(), Some("Submitted"));
    assert!(t.termination.source.as_deref().unwrap().ends_with("info.exit_status"));
    let sub = t.submission.as_deref().unwrap();
    assert!(sub.starts_with("diff --git a/django/contrib/sitemaps/__init__.py"));
    assert!(sub.contains("+            except (TypeError, ValueError):"));
    assert_eq!(t.steps[35].tool_results[0].output, sub);
    // The report.json beside the trajectory resolves it.
    assert_eq!(t.outcome.status, OutcomeStatus::Passed);
    assert_eq!(t.outcome.reward, Some(1.0));
    let src = t.outcome.source.as_ref().unwrap();
    assert!(src.file.ends_with("django__django-16255/report.json"));
    assert_eq!(src.field, "resolved");
    assert!(
        t.outcome
            .tests
            .iter()
            .any(|x| x.name == "FAIL_TO_PASS: test_callable_sitemod_no_items (sitemaps_tests.test_http.HTTPSitemapTests)")
    );
    assert!(t.provenance.files.iter().any(|f| f.role == "outcome" && f.path.ends_with("report.json")));
    // Spans point at the message objects.
    let span = t.steps[2].source_span.unwrap();
    let bytes = std::fs::read(dir.join("django__django-16255.traj.json")).unwrap();
    let text = std::str::from_utf8(&bytes[span.offset as usize..(span.offset + span.len) as usize]).unwrap();
    assert!(text.starts_with('{') && text.contains("ls -R django/contrib/sitemaps"));
    assert_eq!(span.line, 61);
}

#[test]
fn v1_real_run_is_recognized_by_info_when_the_marker_is_past_the_probe() {
    let Some(dir) = corpus("mini-swe-agent/django__django-16255") else { return };
    let p = Probe::read(&dir.join("django__django-16255.traj.json")).unwrap();
    let j = p.json.as_ref().unwrap();
    // `trajectory_format` comes last, beyond the 64 KiB the probe reads.
    assert!(j.truncated && !j.has("trajectory_format"));
    let d = MiniSweAgent.sniff(&p).unwrap();
    assert_eq!(d.strength, Strength::Marker);
    assert!(d.reason.contains("info.mini_version"), "{}", d.reason);
}

#[test]
fn exit_statuses_beside_the_run_are_read_as_outcomes() {
    let Some(dir) = corpus("mini-swe-agent") else { return };
    let (ts, summary) = ingest(&[&dir]);
    assert_eq!(ts.len(), 1);
    assert_eq!(summary.quarantined_files(), 0);
    let yaml = summary.files.iter().find(|f| f.display.contains("exit_statuses_")).unwrap();
    assert!(matches!(yaml.status, FileStatus::Outcome { adapter: "mini-swe-agent-exit-statuses", entries: 26 }), "{:?}", yaml.status);
    // The file's own exit status wins over the batch's (which does not list this instance).
    assert!(ts[0].termination.source.as_deref().unwrap().ends_with("info.exit_status"));
}

#[test]
fn v2_tool_calls_pair_by_id_and_keep_unknown_tools_timeouts_and_the_submission() {
    let path = samples("mini-swe-agent/v2/sympy__sympy-20590/sympy__sympy-20590.traj.json");
    let (ts, summary) = ingest(&[&path]);
    assert_eq!(summary.quarantined_files(), 0);
    let t = &ts[0];
    assert_eq!(t.task_id, "sympy__sympy-20590");
    assert_eq!(t.provenance.format_version.as_deref(), Some("mini-swe-agent-1.1"));
    assert_eq!(t.harness_version.as_deref(), Some("2.2.1"));
    assert_eq!(t.model.as_deref(), Some("anthropic/claude-sonnet-4-5-20250929"));
    assert_eq!(t.steps.len(), 19);
    // The rejected reply lives only in the complaint's extra.response; it is rebuilt as the
    // assistant step it was, and its call is answered by the harness's "Unknown tool".
    let bad = &t.steps[4];
    assert_eq!(bad.role, Role::Assistant);
    assert_eq!(bad.format_error.as_deref(), Some("Unknown tool 'str_replace_editor'."));
    assert_eq!(bad.tool_calls[0].name, "str_replace_editor");
    assert_eq!(bad.tool_calls[0].arguments["path"], "/testbed/sympy/core/_print_helpers.py");
    let rejected = &t.steps[5].tool_results[0];
    assert_eq!(rejected.unknown_tool.as_deref(), Some("Unknown tool 'str_replace_editor'."));
    assert!(rejected.is_error);
    assert_eq!(rejected.call, Some(CallRef { step: 4, call: 0 }));
    assert_eq!(rejected.call_id.as_deref(), Some("toolu_04z"));
    // Two calls in one reply, answered by two tool messages by id.
    assert_eq!(t.steps[6].tool_calls.len(), 2);
    assert_eq!(t.steps[7].tool_results[0].call, Some(CallRef { step: 6, call: 0 }));
    assert_eq!(t.steps[8].tool_results[0].call, Some(CallRef { step: 6, call: 1 }));
    assert_eq!(t.steps[8].tool_results[0].call_id.as_deref(), Some("toolu_05b"));
    // extra.returncode: 0, the rejection (none), 0, 0, timeout (-1), 0, 1, 0; then the submission.
    assert_eq!(exit_codes(t), [Some(0), None, Some(0), Some(0), Some(-1), Some(0), Some(1), Some(0), None]);
    let timeout = &t.steps[10].tool_results[0];
    assert!(timeout.is_error && timeout.output.contains("timed out after 60 seconds"));
    assert_eq!(timeout.error_type.as_deref(), Some("TimeoutExpired"));
    assert!(t.notes.iter().any(|n| n.starts_with("command raised TimeoutExpired at step 10: cd /testbed && python -m pytest")));
    assert!(t.steps[14].tool_results[0].is_error);
    // The exit message answers the submitting command.
    let (last_ref, last_call) = t.calls().last().unwrap();
    assert!(last_call.arguments["command"].as_str().unwrap().starts_with("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"));
    let submitted = t.result_of(last_ref).unwrap();
    assert_eq!(Some(submitted.output.as_str()), t.submission.as_deref());
    assert!(t.submission.as_deref().unwrap().starts_with("diff --git a/sympy/core/_print_helpers.py"));
    assert!(t.unpaired_results.is_empty());
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.usage.api_calls, Some(8));
    assert_eq!(t.usage.prompt_tokens, Some(24_880));
    assert!((t.usage.wall_seconds.unwrap() - 97.2).abs() < 1e-6);
    assert_eq!(t.steps[2].timestamp.as_deref(), Some("2025-01-16T15:06:44Z"));
}

#[test]
fn v2_text_based_format_errors_end_in_a_format_error_budget() {
    let path = samples("mini-swe-agent/v2/django__django-14017/django__django-14017.traj.json");
    let (ts, _) = ingest(&[&path]);
    let t = &ts[0];
    // A text-based model: the harness's parsed action is the call.
    assert_eq!(commands(t), ["grep -n 'def _combine' -A 15 django/db/models/query_utils.py"]);
    assert_eq!(t.steps[3].tool_results[0].exit_code, Some(0));
    let errors: Vec<&str> = t.steps.iter().filter_map(|s| s.format_error.as_deref()).collect();
    assert_eq!(
        errors,
        ["Expected exactly 1 action, found 0.", "Expected exactly 1 action, found 2.", "Expected exactly 1 action, found 0."]
    );
    // The failed reply's text comes from extra.model_response.
    assert!(t.steps[4].text.starts_with("I think the fix belongs in `_combine`"));
    assert_eq!(t.steps[5].role, Role::Environment);
    let term = &t.termination;
    assert_eq!((term.kind, term.budget, term.enforced_by), (TerminationKind::Budget, Some(Budget::FormatErrors), Some(Enforcer::Harness)));
    assert_eq!((term.limit, term.consumed), (Some(3.0), Some(3.0)));
    assert_eq!(term.raw.as_deref(), Some("RepeatedFormatError"));
    assert_eq!(t.submission.as_deref(), Some(""));
}

#[test]
fn limits_exceeded_is_decided_as_steps_or_cost_from_model_stats_and_config() {
    let (ts, _) = ingest(&[
        &samples("mini-swe-agent/v2/limits-steps/limits-steps.traj.json"),
        &samples("mini-swe-agent/v2/limits-cost/limits-cost.traj.json"),
        &samples("mini-swe-agent/v2/time-exceeded/time-exceeded.traj.json"),
    ]);
    let steps = &by_task(&ts, "limits-steps").termination;
    assert_eq!((steps.kind, steps.budget, steps.enforced_by), (TerminationKind::Budget, Some(Budget::Steps), Some(Enforcer::Harness)));
    assert_eq!((steps.limit, steps.consumed), (Some(3.0), Some(3.0)));
    assert_eq!(steps.raw.as_deref(), Some("LimitsExceeded"));
    let cost = &by_task(&ts, "limits-cost").termination;
    assert_eq!((cost.budget, cost.limit, cost.consumed), (Some(Budget::Cost), Some(0.45), Some(0.495)));
    let time = &by_task(&ts, "time-exceeded").termination;
    assert_eq!((time.budget, time.limit, time.consumed), (Some(Budget::WallTime), Some(60.0), Some(72.0)));
    // The final `exit` message is kept as the harness speaking.
    let last = by_task(&ts, "limits-steps").steps.last().unwrap();
    assert_eq!((last.role, last.text.as_str()), (Role::Environment, "LimitsExceeded"));
}

#[test]
fn environment_failures_are_infrastructure_and_the_interrupted_call_stays_unanswered() {
    let (ts, _) = ingest(&[&samples("mini-swe-agent/v2/env-error/env-error.traj.json")]);
    let t = &ts[0];
    // The exception class is the status; its message says the environment failed, and decides.
    assert_eq!(t.signals.statuses[0].text, "RuntimeError");
    assert_eq!(t.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(t.termination.rule.as_deref(), Some("mini-environment-error"));
    assert_eq!(t.termination.source.as_deref(), Some("info.exception_str"));
    assert!(t.termination.raw.as_deref().unwrap().starts_with("Docker container 3f2a9c1b7e44 is not running"));
    assert_eq!(t.submission.as_deref(), Some(""));
    let (r, c) = t.calls().last().unwrap();
    assert_eq!(c.arguments["command"], "sed -n '1,40p' app/pages.py");
    assert!(t.result_of(r).is_none());
}

#[test]
fn v1_format_errors_timeouts_and_retry_errors() {
    let (ts, _) = ingest(&[&samples("mini-swe-agent/v1/psf__requests-2317/psf__requests-2317.traj.json")]);
    let t = &ts[0];
    assert_eq!(t.provenance.format_version.as_deref(), Some("mini-swe-agent-1"));
    // The reply with two bash blocks is not an action; the complaint after it is the harness's.
    let bad = &t.steps[4];
    assert!(bad.tool_calls.is_empty());
    assert!(
        bad.format_error.as_deref().unwrap().starts_with("Please always provide EXACTLY ONE action in triple backticks, found 2 actions.")
    );
    assert_eq!(t.steps[5].role, Role::Environment);
    // The timeout notice answers the command: an error with no exit code, and a note.
    let timeout = &t.steps[7].tool_results[0];
    assert!(timeout.is_error);
    assert_eq!(timeout.exit_code, None);
    assert_eq!(timeout.call, Some(CallRef { step: 6, call: 0 }));
    assert!(t.notes.iter().any(|n| n == "command timed out at step 7: python -m pytest tests/test_requests.py -k redirect -q"));
    assert_eq!(exit_codes(t), [Some(0), None, Some(1)]);
    assert!(t.steps[9].tool_results[0].is_error);
    // RetryError: the API gave out. v1 keeps the exception text in `submission`; it is no patch.
    assert_eq!(t.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(t.termination.raw.as_deref(), Some("RetryError"));
    assert_eq!(t.termination.rule.as_deref(), Some("provider-exception"));
    // The exception's message is the last line of info.traceback.
    assert_eq!(t.signals.errors[0].field, "info.traceback");
    assert!(t.signals.errors[0].text.contains("raised RateLimitError"));
    assert_eq!(t.submission.as_deref(), Some(""));
    assert!(t.notes.iter().any(|n| n.contains("exception message, not a patch")));
}

#[test]
fn a_swebench_run_directory_joins_reports_predictions_and_exit_statuses() {
    let run = samples("mini-swe-agent/swebench-run");
    let (ts, summary) = ingest(&[&run]);
    assert_eq!(summary.quarantined_files(), 0);
    assert_eq!(ts.len(), 4);
    let outcomes = summary.files.iter().filter(|f| matches!(f.status, FileStatus::Outcome { .. })).count();
    assert_eq!(outcomes, 4, "two reports, preds.json and the exit statuses");
    // logs/<id>/report.json applies to the whole run, so trajs/<id>/<id>.traj.json gets it.
    let pass = by_task(&ts, "sympy__sympy-24152");
    assert_eq!(pass.outcome.status, OutcomeStatus::Passed);
    let src = pass.outcome.source.as_ref().unwrap();
    assert!(src.file.ends_with("logs/sympy__sympy-24152/report.json"));
    assert_eq!(src.field, "sympy__sympy-24152.resolved");
    let fail = by_task(&ts, "django__django-15851");
    assert_eq!(fail.outcome.status, OutcomeStatus::Failed);
    assert!(fail.outcome.tests.iter().any(|x| x.status == "failed" && x.name.starts_with("FAIL_TO_PASS: test_parameters")));
    // No report for the others: the run stopped them.
    let steps = by_task(&ts, "astropy__astropy-14365");
    assert_eq!(steps.outcome.status, OutcomeStatus::Unknown);
    assert_eq!(
        (steps.termination.budget, steps.termination.limit, steps.termination.consumed),
        (Some(Budget::Steps), Some(2.0), Some(2.0))
    );
    assert_eq!(steps.submission.as_deref(), Some(""));
    // <run>/<id>/<id>.traj.json saved mid-run has no exit status: the batch's yaml says how it ended.
    let killed = by_task(&ts, "pylint-dev__pylint-7080");
    assert_eq!(killed.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(killed.termination.raw.as_deref(), Some("RetryError"));
    assert!(killed.termination.source.as_deref().unwrap().contains("exit_statuses_1737101500.2219453.yaml"));
    assert!(killed.provenance.files.iter().any(|f| f.path.ends_with("exit_statuses_1737101500.2219453.yaml")));
    // Its file says nothing about a submission yet; preds.json does (an empty patch).
    assert_eq!(killed.submission.as_deref(), Some(""));
    assert!(killed.provenance.files.iter().any(|f| f.path.ends_with("swebench-run/preds.json")));
}

/// How the mini-swe-agent profile reads an exit status, with the limits and consumption the
/// file recorded (and an exception message, when there is one).
fn ended(status: &str, limits: Amounts, consumed: Amounts, error: Option<&str>) -> Termination {
    let mut t = Trajectory::new("t", "mini-swe-agent", "test", 1, Vec::new());
    t.signals.statuses.push(Signal::new("info.exit_status", status));
    t.signals.errors.extend(error.map(|e| Signal::new("info.exception_str", e)));
    (t.signals.limits, t.signals.consumed) = (limits, consumed);
    coroner::interpret::apply(&mut t, builtin().profile_for("mini-swe-agent"));
    t.termination
}

#[test]
fn every_exit_status_maps_to_who_ended_the_run() {
    let lim = Amounts { steps: Some(250.0), cost_usd: Some(3.0), ..Amounts::default() };
    let used = |steps: f64, cost: f64| Amounts { steps: Some(steps), cost_usd: Some(cost), ..Amounts::default() };
    assert_eq!(ended("Submitted", lim.clone(), used(250.0, 1.2), None).kind, TerminationKind::AgentFinished);
    let s = ended("LimitsExceeded", lim.clone(), used(250.0, 1.2), None);
    assert_eq!((s.budget, s.limit, s.consumed, s.enforced_by), (Some(Budget::Steps), Some(250.0), Some(250.0), Some(Enforcer::Harness)));
    let c = ended("LimitsExceeded", lim.clone(), used(40.0, 3.02), None);
    assert_eq!((c.budget, c.limit, c.consumed), (Some(Budget::Cost), Some(3.0), Some(3.02)));
    assert_eq!(ended("LimitsExceeded", lim.clone(), used(250.0, 3.5), None).budget, Some(Budget::Steps));
    assert_eq!(ended("LimitsExceeded", lim.clone(), used(10.0, 0.1), None).budget, Some(Budget::Other));
    let wall = Amounts { wall_seconds: Some(3600.0), ..Amounts::default() };
    let t = ended("TimeExceeded", wall, Amounts::default(), None);
    assert_eq!((t.budget, t.limit), (Some(Budget::WallTime), Some(3600.0)));
    let fmt = Amounts { format_errors: Some(3.0), ..Amounts::default() };
    let f = ended("RepeatedFormatError", fmt, Amounts { format_errors: Some(3.0), ..Amounts::default() }, None);
    assert_eq!((f.budget, f.enforced_by, f.limit, f.consumed), (Some(Budget::FormatErrors), Some(Enforcer::Harness), Some(3.0), Some(3.0)));
    let ctx = ended("ContextWindowExceededError", Amounts::default(), Amounts::default(), None);
    assert_eq!((ctx.budget, ctx.enforced_by), (Some(Budget::Context), Some(Enforcer::Provider)));
    for infra in ["RetryError", "APIError", "RateLimitError", "Timeout", "APIConnectionError", "DockerError", "CalledProcessError"] {
        let t = ended(infra, Amounts::default(), Amounts::default(), None);
        assert_eq!(t.kind, TerminationKind::Infrastructure, "{infra}");
        assert_eq!(t.raw.as_deref(), Some(infra));
    }
    let env = ended("RuntimeError", Amounts::default(), Amounts::default(), Some("Container 1a2b is not running"));
    assert_eq!(env.kind, TerminationKind::Infrastructure);
    let own = ended("RuntimeError", Amounts::default(), Amounts::default(), Some("Error calculating cost for model x: not registered"));
    assert_eq!((own.kind, own.raw.as_deref()), (TerminationKind::HarnessError, Some("RuntimeError")));
    let other = ended("ValueError", Amounts::default(), Amounts::default(), None);
    assert_eq!((other.kind, other.raw.as_deref()), (TerminationKind::HarnessError, Some("ValueError")));
}

/// The one-pass reading gives up on a file it cannot read whole, and the two-pass reading words
/// the diagnostic: the message that does not fit is named at its own line, a file cut short is
/// truncated where it ends, a syntax error past a bad message is reported before it.
#[test]
fn a_file_that_does_not_read_is_quarantined_at_the_right_line() {
    let tmp = crate::common::tempdir();
    let head = "{\n  \"info\": {\"exit_status\": \"Submitted\", \"model_stats\": {\"api_calls\": 1}},\n  \"messages\": [\n";
    let files = [
        // A message whose role is a number: line 5.
        (
            "wrong.traj.json",
            format!(
                "{head}    {{\"role\": \"system\", \"content\": \"s\"}},\n    {{\"role\": 7, \"content\": \"u\"}}\n  ],\n  \"trajectory_format\": \"mini-swe-agent-1\"\n}}\n"
            ),
        ),
        // Cut inside the third line of messages.
        ("cut.traj.json", format!("{head}    {{\"role\": \"system\", \"content\": \"s\"}},\n    {{\"role\": \"user\", \"content\": \"u")),
        // A bad message on line 4, and broken syntax on line 5: the syntax error wins, as it
        // did when the whole document was checked first.
        (
            "both.traj.json",
            format!(
                "{head}    {{\"role\": 7, \"content\": \"s\"}},\n    {{\"role\": \"user\" \"content\": \"u\"}}\n  ],\n  \"trajectory_format\": \"mini-swe-agent-1\"\n}}\n"
            ),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(tmp.path().join(name), text).unwrap();
    }
    let (ts, summary) = ingest(&[tmp.path()]);
    assert!(ts.is_empty());
    assert_eq!(summary.quarantined_files(), 3);
    let diag =
        |name: &str| summary.diagnostics.iter().find(|d| d.path.ends_with(name)).unwrap_or_else(|| panic!("{name} has a diagnostic"));
    let wrong = diag("wrong.traj.json");
    assert_eq!((wrong.kind.as_str(), wrong.line), ("schema", Some(5)), "{}", wrong.message);
    assert!(wrong.message.contains("mini-swe-agent message"), "{}", wrong.message);
    let cut = diag("cut.traj.json");
    assert_eq!((cut.kind.as_str(), cut.line), ("truncated", Some(5)), "{}", cut.message);
    let both = diag("both.traj.json");
    assert_eq!((both.kind.as_str(), both.line), ("syntax", Some(5)), "{}", both.message);
    assert!(both.message.contains("mini-swe-agent trajectory"), "{}", both.message);
}
