//! Samples shaped like real failed runs (mini-swe-agent on SWE-bench, tau-bench retail,
//! Terminal-Bench 1 trials of installed OpenHands), one per decision of DESIGN.md's "Decisions on
//! hard cases": each is ingested and classified in-process, and its primary class, the classes
//! and flags it must and must not have, and the evidence (rule and the steps it points at) are
//! checked. The samples' README lines say which real run each imitates.

use std::path::PathBuf;

use coroner::model::{Evidence, OutcomeStatus, Role, TerminationKind, Trajectory, Verdict};

use crate::common::{classified, samples};

const SWEBENCH: &str = "mini-swe-agent/swebench-results";
const TAU: &str = "tau-bench/tool-calling-gpt-4o-0.0_range_0-50_user-gpt-4o-llm_0702093000.json";
const OPENHANDS: &str = "terminal-bench/openhands";

/// The trajectory of `task` in `sample`, with its verdict.
fn one(sample: &str, task: &str) -> (Trajectory, Verdict) {
    let path: PathBuf = samples(sample);
    let got = classified(&[&path]);
    let ids: Vec<String> = got.iter().map(|(t, _)| t.task_id.clone()).collect();
    got.into_iter().find(|(t, _)| t.task_id == task).unwrap_or_else(|| panic!("no trajectory for {task} in {sample}: have {ids:?}"))
}

/// The evidence of `rule`, which must be there.
fn evidence<'a>(v: &'a Verdict, rule: &str) -> &'a Evidence {
    v.evidence.iter().find(|e| e.rule == rule).unwrap_or_else(|| {
        panic!("{}: no `{rule}` evidence; have {:?}", v.task_id, v.evidence.iter().map(|e| (&e.rule, &e.steps)).collect::<Vec<_>>())
    })
}

fn has_rule(v: &Verdict, rule: &str) -> bool {
    v.evidence.iter().any(|e| e.rule == rule)
}

/// The shell command of the call at `step`.
fn command(t: &Trajectory, step: u32) -> &str {
    let s = &t.steps[step as usize];
    s.tool_calls.first().and_then(|c| c.arguments["command"].as_str()).unwrap_or_else(|| panic!("step {step} issues no command: {s:?}"))
}

#[test]
fn swebench_fix_undone_with_git_checkout_then_an_empty_patch_is_early_resignation() {
    let (t, v) = one(SWEBENCH, "acme__pkgtools-412");
    // The run: v1 text actions, submitted, an empty patch, and the SWE-bench report beside it.
    assert_eq!(t.provenance.format_version.as_deref(), Some("mini-swe-agent-1"));
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.submission.as_deref(), Some(""));
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    assert!(t.outcome.source.as_ref().unwrap().file.ends_with("logs/acme__pkgtools-412/report.json"));
    assert!(command(&t, 6).starts_with("sed -i"), "the fix");
    assert!(command(&t, 8).starts_with("python -m pytest"), "the tests pass after it");
    assert!(t.steps[9].tool_results[0].output.contains("5 passed"));
    assert!(command(&t, 10).starts_with("git checkout pkg/discover.py"), "the fix undone");

    // Submitting nothing is the primary class, whatever hid the work.
    assert_eq!(v.primary.as_deref(), Some("early_resignation"));
    assert_eq!(v.classes, ["early_resignation"]);
    assert!(!v.classes.iter().any(|c| c == "worked_then_wrong"), "no change stayed, so no progress");
    let e = evidence(&v, "resign-empty-submission");
    assert_eq!(e.supports, "early_resignation");
    assert_eq!(e.steps, [12]);
    assert!(e.excerpt.starts_with("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"), "{}", e.excerpt);
    assert!(e.detail.as_deref().unwrap().contains("after 1 changes that did not stay"), "{:?}", e.detail);

    // It undid its own fix and never redid it; it claimed success.
    assert_eq!(v.flags, ["false_done", "regressed"]);
    let r = evidence(&v, "flag-regressed");
    assert_eq!(r.steps, [6, 10], "the fix and the checkout");
    assert!(r.excerpt.starts_with("git checkout pkg/discover.py"), "{}", r.excerpt);
    assert!(r.detail.as_deref().unwrap().contains("pkg/discover.py"), "{:?}", r.detail);
    let d = evidence(&v, "flag-false-done");
    assert_eq!(d.steps, [12]);
    assert!(d.excerpt.contains("with it all 5 tests passed"), "{}", d.excerpt);
    assert!(!v.flags.iter().any(|f| f == "unverified" || f == "edited_tests"));
}

#[test]
fn swebench_scratch_files_removed_and_a_wrong_fix_submitted_is_worked_then_wrong() {
    let (t, v) = one(SWEBENCH, "acme__pkgtools-433");
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    let patch = t.submission.as_deref().unwrap();
    assert!(patch.starts_with("diff --git a/pkg/core.py b/pkg/core.py"));
    assert_eq!(patch.matches("diff --git").count(), 1, "the patch holds pkg/core.py only");
    assert!(command(&t, 4).starts_with("cat <<'EOF' > reproduce_issue.py"));
    assert!(command(&t, 8).starts_with("python3 - <<'EOF'\npath = 'pkg/core.py'"), "the fix, an inline Python edit");
    assert!(command(&t, 12).contains("> test_fix.py"));
    assert!(command(&t, 14).starts_with("python -m pytest tests/test_core.py"));
    assert_eq!(command(&t, 16), "rm reproduce_issue.py test_fix.py");

    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.classes, ["worked_then_wrong"]);
    // Progress is the change that stayed (pkg/core.py), not the removal of the scratch files,
    // and the last check after it is the repository's tests, which passed.
    let e = evidence(&v, "worked-progress-then-failed");
    assert_eq!(e.steps, [8, 15], "the edit of pkg/core.py and the pytest run's result");
    assert!(!e.steps.contains(&16), "not the final rm");
    assert!(e.excerpt.contains("pkg/core.py"), "{}", e.excerpt);
    let detail = e.detail.as_deref().unwrap();
    assert!(detail.starts_with("changed pkg/core.py"), "{detail}");
    assert!(detail.contains("last check: python -m pytest at step 15, passed"), "{detail}");
    assert!(!detail.contains("reproduce_issue.py") && !detail.contains("test_fix.py"), "{detail}");

    // Checked after the last change, no repository test touched (test_fix.py was its own scratch
    // file), nothing undone; it claimed success.
    assert_eq!(v.flags, ["false_done"]);
    assert!(!has_rule(&v, "flag-unverified") && !has_rule(&v, "flag-edited-tests") && !has_rule(&v, "flag-regressed"));
    assert!(v.mechanics.test_files_changed.is_empty(), "{:?}", v.mechanics.test_files_changed);
    let d = evidence(&v, "flag-false-done");
    assert_eq!(d.steps, [18]);
    assert!(d.excerpt.contains("all tests pass"), "{}", d.excerpt);
}

#[test]
fn tau_user_consents_and_stops_in_one_message_is_infrastructure() {
    let (t, v) = one(TAU, "11");
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    assert_eq!(t.termination.rule.as_deref(), Some("tau-user-stop"));
    let last = t.steps.last().unwrap();
    assert_eq!((last.index, last.role), (13, Role::User));
    assert!(t.steps[12].text.trim_end().ends_with("Would you like me to proceed?"));
    assert!(!t.calls().any(|(_, c)| c.name == "exchange_delivered_order_items"));

    assert_eq!(v.primary.as_deref(), Some("infrastructure"));
    assert_eq!(v.classes, ["infrastructure"]);
    let e = evidence(&v, "infra-user-ended-on-consent");
    assert_eq!(e.steps, [13], "the user's message");
    assert_eq!(e.excerpt, "Yes, please go ahead. ###STOP###");
    // The agent never had a turn: no unexecuted plan is held against it.
    assert!(!has_rule(&v, "plan-consented-not-done"));
    assert!(v.flags.is_empty(), "{:?}", v.flags);
}

#[test]
fn tau_consent_never_acted_on_then_a_transfer_is_plan_without_execution() {
    let (t, v) = one(TAU, "23");
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    assert_eq!(t.steps[13].text, "Yes, please proceed with the return. Can the refund reach my card by this Friday?");
    assert!(!t.calls().any(|(_, c)| c.name == "return_delivered_order_items"));
    let (_, last_call) = t.calls().last().unwrap();
    assert_eq!(last_call.name, "transfer_to_human_agents");

    assert_eq!(v.primary.as_deref(), Some("plan_without_execution"));
    let e = evidence(&v, "plan-consented-not-done");
    assert_eq!(e.supports, "plan_without_execution");
    assert_eq!(e.steps, [12, 13], "the proposal and the consent");
    assert!(e.excerpt.starts_with("Yes, please proceed with the return."), "{}", e.excerpt);
    // The user asked to be escalated before the transfer: a hand-over the user asked for is no
    // resignation, and no change was made, so no progress either.
    assert_eq!(v.classes, ["plan_without_execution"]);
    assert!(!has_rule(&v, "resign-explicit") && !has_rule(&v, "worked-progress-then-failed"));
}

#[test]
fn tau_change_made_then_a_transfer_the_user_asked_for_is_worked_then_wrong() {
    let (t, v) = one(TAU, "37");
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    let modify = &t.steps[14];
    assert_eq!(modify.tool_calls[0].name, "modify_pending_order_items");
    assert!(t.steps[15].tool_results[0].output.contains("pending (item modified)"));
    assert!(t.steps[17].text.contains("Can you transfer me to a human agent?"));
    assert_eq!(t.steps[18].tool_calls[0].name, "transfer_to_human_agents");

    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.classes, ["worked_then_wrong"], "the transfer the user asked for is a normal end");
    assert!(!v.classes.iter().any(|c| c == "early_resignation"));
    assert!(!has_rule(&v, "resign-explicit"));
    let e = evidence(&v, "worked-progress-then-failed");
    assert_eq!(e.steps, [14], "the state-changing call");
    assert_eq!(e.excerpt, "modify_pending_order_items");
    // The write answered with the order it left: no check is owed after it.
    assert!(!has_rule(&v, "flag-unverified"));
}

#[test]
fn terminal_bench_openhands_never_installed_is_infrastructure() {
    let (t, v) = one(OPENHANDS, "unpack-release");
    assert_eq!(t.harness, "openhands");
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    assert!(t.signals.statuses.iter().any(|s| s.field == "failure_mode" && s.text == "unset"));
    assert_eq!(t.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(t.termination.rule.as_deref(), Some("tb-capture-not-installed"));
    assert_eq!(t.termination.raw.as_deref(), Some("/usr/local/bin/openhands: line 2: /app/.venv/bin/python: No such file or directory"));
    // No model step: the capture is kept whole as one environment step.
    assert_eq!(t.steps.len(), 1);
    assert_eq!(t.steps[0].role, Role::Environment);
    assert!(t.submission.is_none(), "Terminal-Bench grades the workspace");

    assert_eq!(v.primary.as_deref(), Some("infrastructure"));
    assert_eq!(v.classes, ["infrastructure"]);
    let e = evidence(&v, "infra-termination");
    assert!(e.steps.is_empty(), "the end status is the evidence");
    assert!(e.excerpt.ends_with("/app/.venv/bin/python: No such file or directory"), "{}", e.excerpt);
    assert_eq!(e.detail.as_deref(), Some("terminal_capture.startup"));
}

#[test]
fn terminal_bench_openhands_rate_limited_until_the_clock_is_infrastructure_not_a_budget() {
    let (t, v) = one(OPENHANDS, "ledger-api");
    assert_eq!(t.harness, "openhands");
    assert!(t.signals.statuses.iter().any(|s| s.field == "failure_mode" && s.text == "agent_timeout"));
    // The provider, not Terminal-Bench's clock, ended it.
    assert_eq!(t.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(t.termination.rule.as_deref(), Some("openhands-rate-limited-state"));
    assert_eq!(t.termination.budget, None);
    assert!(t.termination.raw.as_deref().unwrap().ends_with("from AgentState.RUNNING to AgentState.RATE_LIMITED"));

    assert_eq!(v.primary.as_deref(), Some("infrastructure"));
    assert_eq!(v.classes, ["infrastructure"]);
    assert!(!v.classes.iter().any(|c| c == "budget_exhausted"));
    let e = evidence(&v, "infra-termination");
    assert!(e.steps.is_empty());
    assert!(e.excerpt.contains("openhands:INFO: agent_controller.py:574 - [Agent Controller"), "{}", e.excerpt);
    assert_eq!(e.detail.as_deref(), Some("terminal_capture.log"));
}

/// Terminal-Bench 1's clock fired (`agent_timeout`) while OpenHands went on, and OpenHands then
/// finished on its own: the runner waits for the agent's thread, and tested what the agent left
/// (five of ten leaderboard trials drawn at stop 38). The agent ended its run, not the clock.
#[test]
fn terminal_bench_openhands_that_finished_after_the_clock_fired_ended_itself() {
    let (t, v) = one(OPENHANDS, "recover-pin");
    assert!(t.signals.statuses.iter().any(|s| s.field == "failure_mode" && s.text == "agent_timeout"));
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.termination.rule.as_deref(), Some("openhands-finished-state"));
    assert_eq!(t.termination.budget, None);
    assert!(t.termination.detail.as_deref().unwrap().contains("clock fired (agent_timeout)"), "{:?}", t.termination.detail);

    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.classes, ["worked_then_wrong"]);
    assert!(!v.classes.iter().any(|c| c == "budget_exhausted"));
    let e = evidence(&v, "worked-ended-unseen");
    assert_eq!(e.excerpt, "test_pin_matches", "the failed test is what can be seen of the work");
}

/// The verifier's own test file fails at collection (the leaderboard's build-linux-kernel-qemu
/// trials): no agent could pass, so the failure is the benchmark's.
#[test]
fn terminal_bench_verifier_that_cannot_collect_its_tests_is_infrastructure() {
    let (t, v) = one(OPENHANDS, "build-kernel");
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.outcome.tests.len(), 1);
    assert_eq!(v.primary.as_deref(), Some("infrastructure"));
    assert_eq!(v.classes, ["infrastructure"]);
    let e = evidence(&v, "infra-verifier-broken");
    assert!(e.steps.is_empty());
    assert_eq!(e.excerpt, "../tests/test_outputs.py - TypeError: bad operand type for unary -: 'str'");
    assert!(e.detail.as_deref().unwrap().contains("could not collect its own tests (../tests/test_outputs.py)"), "{:?}", e.detail);
}

/// A server configured and then checked as an operator checks it: `nginx -t`, then a request to
/// the page on localhost (a real mini-swe-agent trial on Terminal-Bench did this). Those are
/// checks of what it wrote, so the run is not unverified; the evidence names the last one.
#[test]
fn harbor_server_checked_with_its_config_test_and_a_local_request_is_verified() {
    let (_, v) = one("harbor-keystrokes", "web-logging");
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done"]);
    assert!(!has_rule(&v, "flag-unverified"));
    let e = evidence(&v, "worked-progress-then-failed");
    assert!(e.detail.as_deref().unwrap().contains("last check: curl localhost"), "{:?}", e.detail);
}

/// terminus-2's only edit ended in a literal `\n` instead of a newline (real trials in public
/// Harbor jobs): the shell wrote `cli.pyn`, the stub stayed, and the agent marked the task
/// complete. Work never written to the workspace is an empty submission (DESIGN.md).
#[test]
fn harbor_write_to_a_name_a_literal_newline_mangled_is_early_resignation() {
    let (t, v) = one("harbor-keystrokes", "greet-cli");
    assert_eq!(t.harness, "terminus-2");
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    let keys = t.steps[2].tool_calls[0].arguments["keystrokes"].as_str().unwrap();
    assert!(keys.ends_with("> cli.py\\n"), "{keys}");

    assert_eq!(v.primary.as_deref(), Some("early_resignation"));
    assert_eq!(v.classes, ["early_resignation"]);
    assert_eq!(v.mechanics.successful_mutations, 0, "the write never reached cli.py");
    let e = evidence(&v, "resign-empty-submission");
    assert_eq!(e.steps, [2]);
    assert_eq!(e.excerpt, "cli.py\\n");
    assert!(e.detail.as_deref().unwrap().contains("reads as `cli.pyn`"), "{:?}", e.detail);
    assert!(!has_rule(&v, "plan-in-text"), "it issued the write; it did not only describe it");
    let f = evidence(&v, "flag-false-done");
    assert_eq!(f.steps, [4]);
    assert_eq!(v.flags, ["false_done"]);
}

/// terminus-2 typed a here-doc whose `EOF` lost its newline, so the shell stayed in the here-doc:
/// the test runs it typed afterwards are echoed after the continuation prompt `> ` and never ran.
/// The bump of release.py was never checked (unverified, at the bump); the claim is false_done.
#[test]
fn harbor_checks_typed_into_an_open_here_doc_never_ran_so_the_change_is_unverified() {
    let (t, v) = one("harbor-keystrokes", "release-bump");
    assert_eq!(t.harness, "terminus-2");
    let screen = &t.steps[3].tool_results[0].output;
    assert!(screen.contains("\n> python -m pytest -q tests"), "{screen}");

    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done", "unverified"]);
    let e = evidence(&v, "flag-unverified");
    assert_eq!(e.steps, [2]);
    assert_eq!(e.excerpt, "sed -i 's/1.5.3/1.5.4/' release.py");
    let w = evidence(&v, "worked-progress-then-failed");
    assert!(w.detail.as_deref().unwrap().ends_with("no check ran"), "{:?}", w.detail);
}

/// A Vorflux session closes with its claim after the diff, pasted again after each reviewer
/// call, and the harness flushes its memory store between and after the agent's turns. The
/// memory flush is not the agent's (no looping, no change), a stash popped in the same command
/// undoes nothing (no regressed), and the closing reply's claim is false_done.
#[test]
fn vorflux_memory_flush_and_a_stash_round_trip_are_not_the_agents_work() {
    let (t, v) = one("vorflux", "acme__widgets-4021");
    assert_eq!(t.harness, "vorflux");
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    let flushes = t
        .steps
        .iter()
        .flat_map(|s| &s.tool_calls)
        .filter(|c| c.arguments["command"].as_str().is_some_and(|c| c.contains("/memory")))
        .count();
    assert_eq!(flushes, 10, "the sample holds the harness's memory flush");

    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done"]);
    let w = evidence(&v, "worked-progress-then-failed");
    assert_eq!(w.excerpt, "/code/acme/widgets/widgets/forms.py");
    assert!(w.detail.as_deref().unwrap().starts_with("changed /code/acme/widgets/widgets/forms.py;"), "{:?}", w.detail);
    let d = evidence(&v, "flag-false-done");
    assert!(d.excerpt.contains("all pass except 1 pre-existing"), "{}", d.excerpt);
    assert_eq!(t.steps[d.steps[0] as usize].role, Role::Assistant);
    assert!(t.steps[d.steps[0] as usize].text.starts_with("Here's the final diff:"));
}

/// Vorflux has no finish tool: a session whose export ends with the agent's final reply ended
/// normally (the profile's final_reply_is_answer), so it is worked_then_wrong, not a silent stop.
#[test]
fn vorflux_session_ending_on_its_final_reply_ended_normally() {
    let (t, v) = one("vorflux", "acme__widgets-4030");
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert!(t.steps.last().unwrap().tool_calls.is_empty(), "it ends on a reply");
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done"]);
    assert!(!has_rule(&v, "resign-silent"));
}

/// On an answer task the answer is the progress, and its evidence is the reply that gave it
/// (Magentic-One's `FINAL ANSWER:` step), so a person checking the label is taken to it.
#[test]
fn magentic_one_wrong_final_answer_is_evidence_at_its_step() {
    let (t, v) = one("magentic-one", "studio-albums");
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done"]);
    let w = evidence(&v, "worked-progress-then-failed");
    assert_eq!(w.excerpt, "4");
    assert_eq!(w.steps.len(), 1);
    assert!(t.steps[w.steps[0] as usize].text.contains("FINAL ANSWER: 4"), "{:?}", t.steps[w.steps[0] as usize].text);
    assert_eq!(w.detail.as_deref(), Some("submitted an answer; no check ran"));
    assert!(w.source_span.is_some(), "the step's bytes");
}

/// An answer that rests on a value the team assumed after its sources were blocked was never
/// checked: `unverified`, at the reasoning step that made the assumption, not at a quoted
/// page (real shape: a Who&When GAIA run whose density sources sat behind Cloudflare).
#[test]
fn magentic_one_an_answer_resting_on_an_assumed_value_is_unverified() {
    let (t, v) = one("magentic-one", "nitrogen-volume");
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done", "unverified"]);
    let u = evidence(&v, "flag-unverified");
    assert_eq!(u.steps.len(), 1);
    let at = &t.steps[u.steps[0] as usize];
    assert_eq!(at.agent.as_deref(), Some("Assistant"));
    assert!(at.text.contains("we can assume a density of about 0.8 g/mL"), "{:?}", at.text);
    assert!(u.excerpt.contains("we can assume"), "{:?}", u.excerpt);
    assert!(u.detail.as_deref().is_some_and(|d| d.contains("nothing was looked up after")), "{:?}", u.detail);
}

/// A first fix that broke the old version of a test the benchmark updated, reworked until that
/// test passed again, undid the fix: `regressed`, on the four steps that show it (real shape:
/// pytest-dev__pytest-7205 of the gemini-3-pro mini-swe-agent run).
#[test]
fn mini_swe_agent_a_fix_fitted_back_to_an_updated_tests_old_expectation_regressed() {
    let (t, v) = one("mini-swe-agent/swebench-results", "acme__reprs-205");
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done", "regressed"]);
    let r = evidence(&v, "flag-regressed");
    let text = |i: usize| t.steps[r.steps[i] as usize].evidence_texts().concat();
    assert_eq!(r.steps.len(), 4, "{:?}", r.steps);
    assert!(text(0).contains("safe_repr(param)))/' reprs/show.py"), "the first fix: {:?}", text(0));
    assert!(text(1).contains("FAILED tests/test_show.py::test_show_params[setup]"), "the run it broke: {:?}", text(1));
    assert!(text(2).contains("if isinstance(param, (bytes, bytearray))"), "the rework: {:?}", text(2));
    assert!(text(3).contains("6 passed"), "the run that passed again: {:?}", text(3));
    let d = r.detail.as_deref().unwrap_or("");
    assert!(d.contains("test_show_params[setup]") && d.contains("reprs/show.py"), "{d}");
}

/// A patch that holds only the image's own edits to configuration files submits nothing of the
/// agent's: its one change to the code matched nothing (a `sed` aimed at the wrong line), so it
/// finished with none of its work (real shape: sphinx-doc__sphinx-9602 of the gemini-3-pro
/// mini-swe-agent run, unclassified before).
#[test]
fn mini_swe_agent_a_patch_of_the_images_own_config_edits_is_an_empty_submission() {
    let (t, v) = one("mini-swe-agent/swebench-results", "acme__xrefs-87");
    assert_eq!(v.primary.as_deref(), Some("early_resignation"));
    assert_eq!(v.flags, ["false_done"]);
    let e = evidence(&v, "resign-empty-submission");
    assert_eq!(e.steps.len(), 1);
    assert!(t.steps[e.steps[0] as usize].evidence_texts().concat().contains("git diff --cached"), "at the submission");
    let d = e.detail.as_deref().unwrap_or("");
    assert!(d.contains("setup.py, tox.ini") && d.contains("never wrote"), "{d}");
    assert!(evidence(&v, "flag-false-done").excerpt.contains("Modified `xrefs/domain.py`"));
}

/// A run whose every command only looked (read, listed, echoed) changed nothing, so the
/// workspace it handed in is the one it was given: an empty submission (real shapes: a
/// t-bench-ext terminus-2 trial that found its input empty and stopped, a mini-swe-agent trial
/// whose only commands were greps; both unclassified before).
#[test]
fn terminus_a_run_that_only_looked_submitted_nothing() {
    let (t, v) = one("harbor-keystrokes", "dns-hosts");
    assert_eq!(v.primary.as_deref(), Some("early_resignation"));
    assert_eq!(v.flags, ["false_done"]);
    let e = evidence(&v, "resign-empty-submission");
    assert_eq!(e.excerpt, "mark_task_complete");
    assert!(t.steps[e.steps[0] as usize].tool_calls.iter().any(|c| c.name == "mark_task_complete"));
    assert_eq!(e.detail.as_deref(), Some("finished with everything as it was: its 3 commands only looked (read, listed, searched)"));
}

/// A task whose image left its inputs empty is a benchmark defect, not wrong work: the agent's
/// own listing showed the drafts at 0 bytes and it never wrote them, and the verifier's report
/// says its tests read empty content (real shape: four terminus-2 trials of one t-bench-ext task
/// in a public Harbor job, and two more tasks of that job; worked_then_wrong before).
#[test]
fn terminus_inputs_the_image_left_empty_are_a_benchmark_defect() {
    let (t, v) = one("harbor-keystrokes", "drafts-tidy");
    assert_eq!(v.primary.as_deref(), Some("infrastructure"));
    assert_eq!(v.classes, ["infrastructure", "worked_then_wrong"]);
    let e = evidence(&v, "infra-empty-inputs");
    assert_eq!(e.excerpt, "-rw-rw-rw- 1 user user  0 Jan  1  2023 _notes.md");
    assert!(t.steps[e.steps[0] as usize].tool_results.iter().any(|r| r.output.contains(&e.excerpt)));
    let d = e.detail.as_deref().unwrap_or_default();
    assert!(d.starts_with("_notes.md was empty when the agent listed it"), "{d}");
    assert!(d.ends_with("test_ignored_file_untouched read empty content: AssertionError: assert 'TBD' in ''"), "{d}");
    // The verifier's report became per-test results, with what each failing test saw.
    let summary = t.outcome.tests.iter().find(|r| r.name.ends_with("::test_summary_counts")).expect("test_summary_counts");
    assert_eq!(summary.status, "failed");
    assert!(summary.message.as_deref().is_some_and(|m| m.contains("['intro.md: 0', 'setup.md: 0']")));
    assert_eq!(t.outcome.tests.iter().filter(|r| r.status == "passed").count(), 1);
}

/// Harbor's verifier writes a CTRF report beside its console output (`pytest --ctrf`): the
/// per-test results come from it, each failure with the `E` lines of its trace rather than
/// pytest's phase summary.
#[test]
fn harbor_per_test_results_come_from_the_verifiers_ctrf_report() {
    let (t, _) = one("harbor-keystrokes", "dns-hosts");
    assert_eq!(t.outcome.tests.len(), 1);
    let r = &t.outcome.tests[0];
    assert_eq!((r.name.as_str(), r.status.as_str()), ("test_final_state.py::test_mock_hosts", "failed"));
    assert_eq!(r.message.as_deref(), Some("AssertionError: assert '10.0.4.17 api.internal' in ['127.0.0.1 localhost']"));
    assert!(t.provenance.files.iter().any(|f| f.role == "verifier_output" && f.path.ends_with("verifier/ctrf.json")));
}

/// An installed agent under Harbor leaves no ATIF file: the steps are its own log (Claude Code's
/// stream-json in `agent/claude-code.txt`, as the public SkillsBench runs keep it), and the
/// record says where they came from, not that there are none.
#[test]
fn harbor_installed_claude_code_steps_come_from_its_own_log() {
    let (t, v) = one("harbor-installed", "citation-audit");
    assert_eq!(t.steps.len(), 7);
    assert!(t.notes.iter().any(|n| n.starts_with("signals, limits, steps taken from the native claude-code-stream log")), "{:?}", t.notes);
    assert!(!t.notes.iter().any(|n| n.contains("the record has no steps")), "{:?}", t.notes);
    assert_eq!(t.outcome.tests.iter().filter(|r| r.status == "failed").count(), 1);
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    let w = evidence(&v, "worked-progress-then-failed");
    assert!(t.steps[w.steps[0] as usize].tool_calls.iter().any(|c| c.name == "Write"));
    let d = evidence(&v, "flag-false-done");
    assert!(t.steps[d.steps[0] as usize].text.contains("The task is complete."));
}

/// A CLI agent that wrote its script with the editor tool (`write_file`), ran it, and let the
/// script rewrite the task's CSV made progress, and its closing report ("has been successfully
/// populated", "is ready") claims success. Before, the script's writes were unseen and the report
/// was no claim, so a run that did the work read as a silent give-up (real shape: a Gemini CLI
/// trial of the public SkillsBench Harbor runs, dapt-intrusion-detection).
#[test]
fn harbor_gemini_cli_a_script_the_editor_wrote_is_progress_and_its_report_a_claim() {
    let (t, v) = one("harbor-installed", "sensor-summary");
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"), "{:?}", v.evidence);
    let w = evidence(&v, "worked-progress-then-failed");
    let run = &t.steps[w.steps[0] as usize];
    assert!(run.tool_calls.iter().any(|c| c.name == "run_shell_command"), "the run of the script, not its writing");
    // The CSV alone: the removed script is scratch.
    assert_eq!(w.detail.as_deref().and_then(|d| d.split(';').next()), Some("changed /root/summary.csv"), "{:?}", w.detail);
    let d = evidence(&v, "flag-false-done");
    assert!(t.steps[d.steps[0] as usize].text.contains("is ready"));
    assert!(v.flags.iter().any(|f| f == "false_done"));
}

/// A last edit that put text back as it was (a docstring a global `sed` had changed) leaves
/// nothing in the submitted patch, so it owes no check and is not the change the evidence names
/// (real shape: pydata__xarray-7229 of the gemini-3-pro mini-swe-agent run, `unverified` before).
#[test]
fn mini_swe_agent_an_edit_the_patch_does_not_hold_owes_no_check() {
    let (t, v) = one("mini-swe-agent/swebench-results", "acme__attrs-72");
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done"], "no unverified");
    let w = evidence(&v, "worked-progress-then-failed");
    assert_eq!(w.steps.len(), 2, "{:?}", w.steps);
    assert!(t.steps[w.steps[0] as usize].text.contains(r#"s/"no_conflicts"/"drop_conflicts"/"#), "the last change the patch holds");
    assert!(w.detail.as_deref().is_some_and(|d| d.contains("last check: an inline program")), "{:?}", w.detail);
}

/// A check is the same check only while its own script is unchanged: the reproduction script
/// passed, was widened with a second case, and then failed. That is a new check failing, not the
/// fix regressing (real shape: django__django-12125 of the gemini-3-pro mini-swe-agent run).
#[test]
fn mini_swe_agent_a_widened_reproduction_script_failing_is_not_a_regression() {
    let (t, v) = one("mini-swe-agent/swebench-results", "acme__pkgtools-451");
    let runs: Vec<&str> = t
        .steps
        .iter()
        .flat_map(|s| &s.tool_calls)
        .filter_map(|c| c.arguments["command"].as_str())
        .filter(|c| *c == "python reproduce_issue.py")
        .collect();
    assert_eq!(runs.len(), 3, "failed, passed after the fix, failed after the script was widened");
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done"]);
    assert!(!has_rule(&v, "flag-regressed"));
    let w = evidence(&v, "worked-progress-then-failed");
    assert_eq!(w.steps, [12, 17]);
    assert!(w.detail.as_deref().unwrap().ends_with("last check: python reproduce_issue.py at step 17, failed"), "{:?}", w.detail);
}

/// A compatibility shim the agent tried and swapped back (the edit's old and new text exchanged,
/// as in a real Vorflux sphinx session) leaves its file as it was: the last change that stays is
/// the checked fix, so no `unverified`, and a withdrawn shim is not a `regressed` fix.
#[test]
fn vorflux_shim_swapped_back_is_neither_the_last_change_nor_a_regression() {
    let (t, v) = one("vorflux", "acme__widgets-4052");
    let shim: Vec<&str> = t
        .steps
        .iter()
        .flat_map(|s| &s.tool_calls)
        .filter(|c| c.arguments["filePath"].as_str().is_some_and(|p| p.ends_with("compat.py")))
        .map(|c| c.arguments["old_string"].as_str().unwrap())
        .collect();
    assert_eq!(shim.len(), 2, "the sample tries the shim and swaps it back");
    assert_ne!(shim[0], shim[1]);
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.flags, ["false_done"]);
    let w = evidence(&v, "worked-progress-then-failed");
    assert_eq!(w.excerpt, "/code/acme/widgets/widgets/forms.py");
    assert_eq!(
        w.detail.as_deref(),
        Some("changed /code/acme/widgets/widgets/forms.py; last check: python -m pytest at step 17, passed"),
        "compat.py is not among the changes that stay"
    );
}

/// terminus-2's only work was a script written with a here-doc that lost its newline: the shell
/// took the script's run and every later command as the here-doc's body, so nothing it meant to
/// make was made. Work never written to the workspace is an empty submission (DESIGN.md), and
/// finishing again after the harness asked to confirm is the claim.
#[test]
fn harbor_work_swallowed_by_an_open_here_doc_is_an_empty_submission() {
    let (t, v) = one("harbor-keystrokes", "capacity-report");
    assert!(t.steps[1].tool_results[0].output.contains("> EOFpython3 /tmp/work/report.py"));
    assert_eq!(v.primary.as_deref(), Some("early_resignation"));
    assert_eq!(v.classes, ["early_resignation"]);
    let e = evidence(&v, "resign-empty-submission");
    assert_eq!(e.steps, [1]);
    assert_eq!(e.excerpt, "python3 /tmp/work/report.py");
    assert!(e.detail.as_deref().unwrap().contains("never ran"), "{:?}", e.detail);
    assert_eq!(v.flags, ["false_done"]);
    let d = evidence(&v, "flag-false-done");
    assert_eq!(d.steps, [3, 4], "the question, and the finish after it");
    assert_eq!(d.excerpt, "Are you sure you want to mark the task as complete");
}

/// A Terminal-Bench run kept only its run-level results.json (real leaderboard submissions of
/// installed CLIs often do): csv-merge's agent phase ran 15 minutes to its own end with no
/// failure mode and failed its test. worked_then_wrong is inferred from the end and the verdict,
/// and the evidence says it was not seen; a trial the clock ended without a verdict keeps that.
#[test]
fn terminal_bench_results_only_normal_end_and_failing_verdict_is_inferred_worked_then_wrong() {
    let got = classified(&[&samples("terminal-bench/run-only")]);
    let (t, v) = got.iter().find(|(t, _)| t.task_id == "csv-merge").expect("csv-merge");
    assert!(t.steps.is_empty());
    assert_eq!(t.termination.kind, TerminationKind::Unknown);
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert_eq!(v.classes, ["worked_then_wrong"]);
    assert!(v.flags.is_empty(), "nothing to judge flags on: {:?}", v.flags);
    let e = evidence(v, "worked-ended-unseen");
    assert!(e.steps.is_empty());
    assert!(e.source_span.is_none());
    let d = e.detail.as_deref().unwrap();
    assert!(d.starts_with("no agent steps to read: the harness timed the agent's own end after"), "{d}");
    assert!(d.contains("the verifier failed 1 of 1 tests") && d.ends_with("inferred from the end and the verdict, not seen"), "{d}");
    assert_eq!(e.excerpt, t.outcome.tests[0].name);

    // Timed out with no verdict (is_resolved null): the trial's own end, not the inference.
    let (_, timed_out) = got.iter().find(|(t, _)| t.task_id == "train-model").expect("train-model");
    assert_eq!(timed_out.primary.as_deref(), Some("infrastructure"));
    assert!(!has_rule(timed_out, "worked-ended-unseen"));
}

/// The verifier's tests cannot be collected in the benchmark's image (SWE-bench astropy runs whose
/// test file calls `LooseVersion` under warnings-as-errors): the agent's own pytest run shows it,
/// every failing test of the report is in that file, and the traceback names none of its files.
#[test]
fn swebench_test_file_that_cannot_be_collected_in_the_image_is_infrastructure() {
    let (t, v) = one(SWEBENCH, "acme__units-118");
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert!(t.outcome.tests.iter().all(|r| r.status == "failed"), "{:?}", t.outcome.tests);
    assert!(command(&t, 6).starts_with("python -m pytest tests/test_convert.py"));

    assert_eq!(v.primary.as_deref(), Some("infrastructure"));
    assert_eq!(v.classes, ["infrastructure", "worked_then_wrong"]);
    let e = evidence(&v, "infra-tests-broken-in-image");
    assert_eq!(e.steps, [7], "the result of the first run that showed the error");
    assert_eq!(e.excerpt, "ERROR collecting tests/test_convert.py");
    assert!(t.steps[7].text.contains(&e.excerpt) || t.steps[7].tool_results.iter().any(|r| r.output.contains(&e.excerpt)));
    let d = e.detail.as_deref().unwrap();
    assert!(d.contains("(DeprecationWarning: distutils Version classes are deprecated."), "{d}");
    assert!(d.ends_with("all 4 tests the verifier failed are there"), "{d}");
    assert!(v.flags.is_empty(), "the sub-flags belong to worked_then_wrong, which is not primary: {:?}", v.flags);
}

/// tau-bench retail: asked to take the new address from the user's order, the agent declined at
/// once, without a lookup, and changed nothing (AgentRx task 39). "Sure thing! It's <email>"
/// answered a request for details, so there is no consent to a change, and "If you can share it,
/// I'll update it" is an offer, not a plan.
#[test]
fn tau_request_declined_without_trying_and_nothing_changed_is_early_resignation() {
    let (t, v) = one("tau-bench/tool-calling-gpt-4o-0.0_range_50-51_user-gpt-4o-llm_0703100000.json", "51");
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    assert!(t.steps[3].text.starts_with("Sure thing!"));
    assert_eq!(v.mechanics.mutations, 0);

    assert_eq!(v.primary.as_deref(), Some("early_resignation"));
    assert_eq!(v.classes, ["early_resignation"]);
    let e = evidence(&v, "resign-declined");
    assert_eq!(e.steps, [10]);
    assert_eq!(t.steps[9].role, Role::User, "the request came straight before the decline");
    assert!(e.excerpt.contains("Unfortunately, I can't look up your new address"), "{}", e.excerpt);
    assert!(!has_rule(&v, "plan-consented-not-done"), "an answer to a request for details is no consent");
    assert!(!has_rule(&v, "plan-in-text"), "a conditional offer is no plan");
}

/// SWE-agent 1.0 with `xml_function_calling` keeps no tool calls in its history: the call is the
/// `<function=…>` block of the reply, and `action` is what the harness typed into its shell
/// (`str_replace_editor str_replace PATH --old_str …`). The block is the call as the model made
/// it, so an edit through the editor is a change to the repository (real shape: the SWE-agent-LM-32B
/// run of SWE-bench Verified, sympy__sympy-17318 and others, which came out unclassified).
#[test]
fn swe_agent_xml_function_calls_are_the_editor_calls_they_name() {
    let (t, v) = one("swe-agent/xml", "acme__ledger-212");
    let edit = &t
        .steps
        .iter()
        .find(|s| s.tool_calls.first().is_some_and(|c| c.arguments["command"] == "str_replace"))
        .expect("an editor call")
        .tool_calls[0];
    assert_eq!(edit.name, "str_replace_editor");
    assert_eq!(edit.arguments["path"], "/testbed/ledger/balance.py");
    assert!(edit.arguments["new_str"].as_str().is_some_and(|s| s.contains("return 1")), "{:?}", edit.arguments);
    assert_eq!(command(&t, 6), "cd /testbed && python reproduce.py", "a bash call stays the shell command");
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert!(v.flags.iter().any(|f| f == "false_done"), "{:?}", v.flags);
    let w = evidence(&v, "worked-progress-then-failed");
    assert!(w.detail.as_deref().is_some_and(|d| d.contains("ledger/balance.py")), "{:?}", w.detail);
}

/// Inspect's `react` goes on after a wrong answer while it has answers left, and ends its loop on
/// the last one by moving that answer out of its call and into the reply's text, so the messages
/// show a bare reply where the agent submitted; the tool events keep the call. Three answers
/// taken and the run ended on the third, wrong: the answer limit ended it, though `react` run as
/// a solver logs no `attempts` (real shape: react(attempts=3) CTF runs of cyber-task-horizons,
/// n=346 and n=348, which came out early_resignation). One answer of one is the agent's own end.
#[test]
fn inspect_react_answers_that_ran_out_are_the_attempts_budget() {
    let (t, v) = one("inspect/react-answers", "vault/three-answers");
    let last = t.steps.iter().rev().find(|s| s.role == Role::Assistant).unwrap();
    assert_eq!(last.tool_calls.first().map(|c| c.name.as_str()), Some("submit"), "the answer only the events kept is put back");
    assert_eq!(last.tool_calls[0].arguments["answer"], "flag{guess3}");
    assert_eq!(v.primary.as_deref(), Some("budget_exhausted"));
    assert_eq!((t.termination.limit, t.termination.consumed), (Some(3.0), Some(3.0)));
    let b = evidence(&v, "budget-termination");
    assert!(b.detail.as_deref().is_some_and(|d| d.contains("attempts")), "{:?}", b.detail);
    assert_eq!(b.steps.len(), 3, "each answer is a step to check: {:?}", b.steps);
    assert_eq!(b.steps[2], last.index);

    let (_, single) = one("inspect/react-answers", "vault/one-answer");
    assert_eq!(single.primary.as_deref(), Some("worked_then_wrong"), "{:?}", single.evidence);
}

/// OpenHands' LLM-completion logs (`log_completions`), the trajectories Multi-SWE-bench publishes:
/// each file is one model call, whose prompt repeats the run so far, under a directory named for
/// the instance. The latest file is the run (its earlier calls are its companions), its reply is
/// the last step, and the instance is the directory's name, so the submission's sb-cli-style
/// `results/results.json` (`resolved`, `unresolved_ids`, `empty_error_patch_ids`) joins it
/// (real shape: MopenHands + Claude 3.5 Sonnet on SWE-bench Verified, n=335-344, read before as
/// one-step OpenAI chats with no verdict).
#[test]
fn openhands_completion_logs_are_the_run_up_to_its_last_call() {
    let (t, v) = one("openhands/completions", "acme__ledger-212");
    assert_eq!(t.harness, "openhands");
    assert_eq!(t.model.as_deref(), Some("Sample-Model"));
    assert_eq!(t.outcome.status, OutcomeStatus::Failed, "unresolved_ids joins the instance directory");
    let last = t.steps.last().unwrap();
    assert_eq!(last.tool_calls.first().map(|c| c.name.as_str()), Some("finish"), "the last call's reply is the last step");
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"));
    assert!(v.flags.iter().any(|f| f == "false_done"), "{:?}", v.flags);
    let w = evidence(&v, "worked-progress-then-failed");
    assert!(w.detail.as_deref().is_some_and(|d| d.contains("ledger/balance.py")), "{:?}", w.detail);

    // Two calls of one run: one record, from the later call, which holds the earlier one.
    let got = classified(&[&samples("openhands/completions")]);
    let runs: Vec<&str> = got.iter().map(|(t, _)| t.task_id.as_str()).filter(|id| *id == "acme__ledger-213").collect();
    assert_eq!(runs.len(), 1, "the earlier call is a companion, not a run");
    let (t13, _) = got.iter().find(|(t, _)| t.task_id == "acme__ledger-213").unwrap();
    assert!(t13.provenance.files.iter().any(|f| f.path.ends_with("1743405960.25.json")), "{:?}", t13.provenance.files);
    assert_eq!(t13.outcome.status, OutcomeStatus::Failed);
    assert_eq!(t13.outcome.detail.as_deref(), Some("an empty patch or one the evaluation could not apply"));
    assert_eq!(t13.submission, None, "that list does not say the patch was empty");
}

/// Aider's benchmark hands each try's code to the tests and, on failure, the test output back to
/// the model; both tries failing ends the exercise. The replies' edits are text; aider's own
/// `Applied edit to clock.py` says they landed. Each is an `edit` call of its reply, so the work
/// is a change, and the tries that ran out are the attempts budget (real shape: ten held-out
/// exercises of aorwall/aider and fantomechess/aider-benchmarks, n=365-374, which came out
/// plan_without_execution: no change seen).
#[test]
fn aider_tries_that_ran_out_are_the_attempts_budget_and_applied_edits_are_changes() {
    let (t, v) = one("aider-tries", "python/clock");
    let edits: Vec<&str> =
        t.steps.iter().flat_map(|s| &s.tool_calls).filter(|c| c.name == "edit").filter_map(|c| c.arguments["path"].as_str()).collect();
    assert_eq!(edits, ["clock.py", "clock.py"], "one edit per reply aider applied");
    assert_eq!(v.mechanics.successful_mutations, 2);
    assert_eq!(v.primary.as_deref(), Some("budget_exhausted"));
    assert_eq!((t.termination.limit, t.termination.consumed), (Some(2.0), Some(2.0)));
    let b = evidence(&v, "budget-termination");
    assert!(b.detail.as_deref().is_some_and(|d| d.contains("attempts")), "{:?}", b.detail);
}

/// SWE-agent 0.x text actions: `edit N:M ... end_of_edit` writes the file the window has open,
/// which only the entry's `state` names; as shell input it was a program nobody knows, so the
/// run changed nothing. The harness's own `exit_cost` entry is what stopped a run its fork
/// marked only `submitted`; and a submission that concedes an impasse is a give-up (real
/// shape: CodeR, SWE-agent 0.x's format, on SWE-bench Lite, n=375-384, 0 of 10 at first).
#[test]
fn swe_agent_0x_window_edits_are_changes_and_its_exit_entry_ends_the_run() {
    let (t, v) = one("swe-agent/text-0x", "acme__ledger-301");
    let edit = t.steps.iter().flat_map(|s| &s.tool_calls).find(|c| c.name == "edit").expect("the edit is a call of `edit`");
    assert_eq!(edit.arguments["path"], "/acme__ledger/ledger/balance.py", "the file the window had open");
    assert_eq!(v.mechanics.successful_mutations, 1);
    assert_eq!((t.termination.kind, t.termination.budget), (TerminationKind::Budget, Some(coroner::model::Budget::Cost)));
    assert_eq!(t.signals.statuses[0].text, "exit_cost", "the exit entry is read before `submitted`");
    assert_eq!(v.primary.as_deref(), Some("budget_exhausted"));

    let (t2, v2) = one("swe-agent/text-0x", "acme__ledger-302");
    assert_eq!(v2.primary.as_deref(), Some("early_resignation"));
    let r = evidence(&v2, "resign-explicit");
    assert!(t2.steps[r.steps[0] as usize].text.contains("reached an impasse"));
}
