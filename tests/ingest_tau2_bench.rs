//! tau2-bench results: both layouts from samples, real runs from the mirror, classification, detection beside tau-bench v1, bad input.

use std::path::{Path, PathBuf};

use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, Enforcer, OutcomeStatus, Role, TerminationKind, Trajectory};
use serde_json::Value;

use crate::common::{classified, ingest, samples, tempdir};

const RUN: &str = "tau2-bench/gpt-4.1-mini_retail_default_gpt-4.1_2trials.json";

fn one<'a>(ts: &'a [Trajectory], task: &str, trial: u32) -> &'a Trajectory {
    ts.iter().find(|t| t.task_id == task && t.trial == trial).unwrap_or_else(|| panic!("no record for task {task} trial {trial}"))
}

fn roles(t: &Trajectory, role: Role) -> usize {
    t.steps.iter().filter(|s| s.role == role).count()
}

fn called(t: &Trajectory) -> Vec<&str> {
    t.calls().map(|(_, c)| c.name.as_str()).collect()
}

/// The sample's simulation for `task`/`trial`, as tau2 wrote it.
fn raw_sim(file: &Path, task: &str, trial: u64) -> Value {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["simulations"].as_array().unwrap().iter().find(|s| s["task_id"] == task && s["trial"].as_u64() == Some(trial)).cloned().unwrap()
}

/// What the agent's messages say they used: prompt and completion tokens.
fn agent_tokens(sim: &Value) -> (u64, u64) {
    let msgs = sim["messages"].as_array().unwrap();
    let sum = |k: &str| msgs.iter().filter(|m| m["role"] == "assistant").filter_map(|m| m["usage"][k].as_u64()).sum();
    (sum("prompt_tokens"), sum("completion_tokens"))
}

#[test]
fn json_layout_sample_gives_one_record_per_simulation_with_steps_ends_and_verdicts() {
    let path = samples(RUN);
    let (ts, s) = ingest(&[&path]);
    assert_eq!(ts.len(), 6);
    assert_eq!((s.quarantined_files(), s.quarantined_records), (0, 0));
    assert_eq!(s.per_adapter.get("tau2-bench"), Some(&6));
    assert!(ts.iter().all(|t| t.harness == "tau2-bench" && t.model.as_deref() == Some("gpt-4.1-mini")));
    assert!(ts.iter().all(|t| t.arm.as_deref() == Some("tau2-bench/gpt-4.1-mini") && t.unpaired_results.is_empty()));
    assert!(ts.iter().all(|t| t.notes.iter().any(|n| n == "agent llm_agent on gpt-4.1-mini; user simulator user_simulator on gpt-4.1")));
    assert!(ts.iter().all(|t| t.signals.limits.steps == Some(10.0)));

    // A pass: the user ends with ###STOP###.
    let pass = one(&ts, "0", 0);
    assert_eq!((pass.steps.len(), roles(pass, Role::Assistant), roles(pass, Role::User), roles(pass, Role::Tool)), (14, 7, 4, 3));
    assert_eq!(called(pass), ["find_user_id_by_name_zip", "get_order_details", "cancel_pending_order"]);
    let (at, call) = pass.calls().last().unwrap();
    assert_eq!((call.id.as_deref(), call.arguments["reason"].as_str()), (Some("call_0003"), Some("no longer needed")));
    let r = pass.result_of(at).unwrap();
    assert_eq!((r.name.as_deref(), r.is_error), (Some("cancel_pending_order"), false));
    assert!(r.output.contains("\"cancelled\""));
    assert_eq!((pass.termination.kind, pass.termination.raw.as_deref()), (TerminationKind::AgentFinished, Some("user_stop")));
    assert_eq!(pass.termination.rule.as_deref(), Some("tau2-user-stop"));
    assert_eq!(pass.signals.statuses[0].step, Some(13), "the user's last message");
    assert_eq!((pass.outcome.status, pass.outcome.reward), (OutcomeStatus::Passed, Some(1.0)));
    assert_eq!(pass.outcome.source.as_ref().unwrap().field, "reward_info.reward");
    let tests: Vec<(&str, &str)> = pass.outcome.tests.iter().map(|x| (x.name.as_str(), x.status.as_str())).collect();
    assert_eq!(
        tests,
        [("reward: COMMUNICATE", "passed"), ("reward: DB", "passed"), ("db_check", "passed"), ("action: cancel_pending_order", "passed")]
    );
    // Usage: the agent's tokens and cost, not the simulated user's.
    let sim = raw_sim(&path, "0", 0);
    let (p, c) = agent_tokens(&sim);
    assert_eq!((pass.usage.prompt_tokens, pass.usage.completion_tokens), (Some(p), Some(c)));
    assert_eq!(pass.usage.cost_usd, sim["agent_cost"].as_f64());
    assert_eq!(pass.usage.wall_seconds, sim["duration"].as_f64());
    assert_eq!(pass.usage.api_calls, Some(6), "the greeting made no model call");
    assert!(pass.notes.iter().any(|n| n.starts_with("user simulator cost 0.001600 USD")));
    assert_eq!(pass.steps[2].cost_usd, Some(0.002));
    assert_eq!(pass.steps[2].tokens.as_ref().unwrap().prompt, Some(1200));
    assert!(pass.steps[1].tokens.is_none(), "the user's tokens are the simulator's");
    assert_eq!(pass.started_at.as_deref(), sim["start_time"].as_str());
    assert_eq!(pass.session_id.as_deref(), sim["id"].as_str());

    // A fail: a tool error, then a cancellation the evaluator's database check rejects.
    let fail = one(&ts, "0", 1);
    assert_eq!((fail.steps.len(), called(fail).len()), (12, 3));
    assert_eq!(fail.outcome.status, OutcomeStatus::Failed);
    assert!(fail.outcome.tests.iter().any(|x| x.name == "db_check" && x.status == "failed"));
    let err = fail.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.is_error).unwrap();
    assert_eq!((err.output.as_str(), err.unknown_tool.as_deref()), ("Error: user not found", None));

    // The step limit: 11 orchestrator steps (the check waits for the environment) of 10.
    let steps = one(&ts, "1", 0);
    assert_eq!((steps.steps.len(), called(steps).len()), (12, 5));
    let term = &steps.termination;
    assert_eq!((term.kind, term.budget, term.enforced_by), (TerminationKind::Budget, Some(Budget::Steps), Some(Enforcer::Harness)));
    assert_eq!((term.limit, term.consumed, term.rule.as_deref()), (Some(10.0), Some(11.0), Some("tau2-max-steps")));
    assert_eq!(steps.outcome.status, OutcomeStatus::Failed);
    assert_eq!(steps.outcome.detail.as_deref(), Some("Simulation terminated prematurely. Termination reason: max_steps"));

    // Too many tool errors, the first a tool retail lacks.
    let errors = one(&ts, "1", 1);
    assert_eq!((errors.termination.kind, errors.termination.budget), (TerminationKind::Budget, Some(Budget::Other)));
    assert_eq!(errors.termination.raw.as_deref(), Some("too_many_errors"));
    let results: Vec<_> = errors.steps.iter().flat_map(|s| &s.tool_results).collect();
    assert_eq!((results.len(), results.iter().filter(|r| r.is_error).count()), (3, 3));
    assert_eq!(results[0].unknown_tool.as_deref(), Some("Error: Tool 'search_orders' not found."));
    assert!(errors.notes.iter().any(|n| n == "3 tool errors (max_errors 3)"));

    // The agent ends the conversation itself.
    let stop = one(&ts, "2", 0);
    assert_eq!((stop.termination.kind, stop.termination.rule.as_deref()), (TerminationKind::AgentFinished, Some("tau2-agent-stop")));
    assert_eq!(stop.signals.statuses[0].step, Some(6));
    assert_eq!(stop.outcome.status, OutcomeStatus::Passed);

    // The runner gave up: no steps, never evaluated.
    let infra = one(&ts, "2", 1);
    assert!(infra.steps.is_empty());
    assert_eq!(
        (infra.termination.kind, infra.termination.rule.as_deref()),
        (TerminationKind::Infrastructure, Some("tau2-infrastructure-error"))
    );
    assert_eq!(infra.outcome.status, OutcomeStatus::Errored);
    assert_eq!(infra.signals.errors[0].text, "APIConnectionError: Connection error.");
}

#[test]
fn dir_layout_sample_reads_ticks_and_messages_from_the_simulation_files() {
    let dir = samples("tau2-bench/voice-run");
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(ts.len(), 2);
    assert_eq!(s.quarantined_files(), 0);
    let companions = s.files.iter().filter(|f| matches!(f.status, FileStatus::Companion { adapter: "tau2-bench" })).count();
    assert_eq!(companions, 2);
    assert!(ts.iter().all(|t| t.model.as_deref() == Some("openai:gpt-realtime-2") && t.task_id == "3"));
    assert!(ts.iter().all(|t| t.provenance.files.len() == 2 && t.provenance.files[1].role == "run_metadata"));

    // Full duplex: word chunks joined into utterances; a call and its result in one tick.
    let voice = one(&ts, "3", 0);
    assert_eq!(voice.provenance.format_version.as_deref(), Some("tau2-bench Results (dir layout, full_duplex)"));
    let shape: Vec<(Role, &str)> = voice.steps.iter().map(|s| (s.role, s.text.as_str())).collect();
    assert_eq!(
        shape,
        [
            (Role::Assistant, "Hello, how can I help?"),
            (Role::User, "Hi, I want to check my account."),
            (Role::Assistant, "Sure, your name?"),
            (Role::Assistant, ""),
            (Role::Tool, ""),
            (Role::User, "Ana Lima, zip 10001. ###STOP###"),
        ]
    );
    assert_eq!(called(voice), ["find_user_id_by_name_zip"]);
    assert_eq!(voice.result_of(voice.calls().next().unwrap().0).unwrap().output, "ana_lima_1001");
    assert_eq!((voice.signals.limits.steps, voice.signals.consumed.steps), (Some(6000.0), Some(12.0)), "ticks");
    assert_eq!((voice.termination.raw.as_deref(), voice.outcome.status), (Some("user_stop"), OutcomeStatus::Passed));

    // Half duplex in the dir layout: the agent's reply broke the protocol.
    let bad = one(&ts, "3", 1);
    assert_eq!((bad.steps.len(), called(bad)), (3, vec!["find_user_id_by_name_zip"]));
    assert_eq!((bad.termination.kind, bad.termination.budget), (TerminationKind::Budget, Some(Budget::FormatErrors)));
    assert_eq!(bad.signals.statuses[0].step, Some(2));
    assert_eq!(bad.outcome.status, OutcomeStatus::Failed);
}

#[test]
fn a_simulation_file_named_alone_still_reads_its_run_beside_it() {
    let file = samples("tau2-bench/voice-run/simulations/0c6f3d1e-0000-4000-8000-00000000000b.json");
    let (ts, s) = ingest(&[&file]);
    assert_eq!((ts.len(), s.quarantined_files()), (1, 0));
    assert_eq!(ts[0].model.as_deref(), Some("openai:gpt-realtime-2"));
    assert_eq!(ts[0].signals.limits.steps, Some(6000.0));
    // And the run's results.json named alone reads the simulations on disk.
    let (ts, _) = ingest(&[&samples("tau2-bench/voice-run/results.json")]);
    assert_eq!(ts.len(), 2);
}

#[test]
fn classified_by_how_the_simulation_ended() {
    let got = classified(&[&samples(RUN)]);
    let v = |task: &str, trial: u32| &got.iter().find(|(t, _)| t.task_id == task && t.trial == trial).unwrap().1;

    let steps = v("1", 0);
    assert_eq!(steps.primary.as_deref(), Some("budget_exhausted"));
    let e = steps.evidence.iter().find(|e| e.rule == "budget-termination").unwrap();
    assert_eq!(e.excerpt, "max_steps");
    assert_eq!(e.detail.as_deref(), Some("budget: steps, enforced by harness, 11 of 10"));
    assert!(e.source_span.is_some(), "the termination_reason's bytes");

    let errors = v("1", 1);
    assert_eq!(errors.primary.as_deref(), Some("budget_exhausted"));
    assert!(errors.classes.contains(&"hallucinated_tool".to_string()));
    let h = errors.evidence.iter().find(|e| e.rule == "hallucinated-rejected-by-harness").unwrap();
    assert_eq!((h.excerpt.as_str(), h.steps.as_slice()), ("search_orders", &[2, 3][..]));

    // Wrote to the database and still failed.
    let wrong = v("0", 1);
    assert_eq!(wrong.primary.as_deref(), Some("worked_then_wrong"));
    assert!(wrong.evidence.iter().any(|e| e.rule == "worked-progress-then-failed" && e.excerpt == "cancel_pending_order"));

    let infra = v("2", 1);
    assert_eq!(infra.primary.as_deref(), Some("infrastructure"));
    assert!(infra.evidence.iter().any(|e| e.rule == "infra-termination" && e.excerpt == "infrastructure_error"));
    assert!(v("0", 0).primary.is_none() && v("2", 0).primary.is_none(), "passed runs get no class");
}

#[test]
fn detection_keeps_tau_bench_and_tau2_bench_apart() {
    let (ts, s) = ingest(&[&samples("tau-bench"), &samples("tau2-bench")]);
    assert_eq!(s.quarantined_files(), 0);
    assert_eq!(s.per_adapter.get("tau2-bench"), Some(&8));
    assert!(s.per_adapter.get("tau-bench").is_some_and(|n| *n > 0));
    for t in &ts {
        let v2 = t.provenance.files[0].path.contains("tau2-bench");
        assert_eq!(t.provenance.adapter, if v2 { "tau2-bench" } else { "tau-bench" }, "{}", t.provenance.files[0].path);
    }
}

#[test]
fn a_bad_simulation_costs_only_itself_and_a_cut_file_is_quarantined() {
    let dir = tempdir();
    let info = r#"{"git_commit": "x", "num_trials": 1, "max_steps": 100, "max_errors": 10, "user_info": {"implementation": "user_simulator"}, "agent_info": {"implementation": "llm_agent", "llm": "m"}, "environment_info": {"domain_name": "retail", "policy": "p"}}"#;
    let ok = r#"{"id": "a", "task_id": "1", "start_time": "s", "end_time": "e", "duration": 1.0, "termination_reason": "user_stop", "messages": [{"role": "user", "content": "hi ###STOP###"}], "trial": 0}"#;
    let bad = r#"{"id": "b", "task_id": "2", "start_time": "s", "end_time": "e", "duration": 1.0, "termination_reason": "user_stop", "messages": "none", "trial": 0}"#;
    let strange = r#"{"id": "c", "task_id": "3", "termination_reason": 7, "messages": [{"role": 1}], "ticks": [1]}"#;
    std::fs::write(
        dir.path().join("run.json"),
        format!("{{\"info\": {info},\n\"tasks\": [],\n\"simulations\": [{ok},\n{bad},\n{strange}]}}"),
    )
    .unwrap();
    std::fs::write(dir.path().join("cut.json"), format!("{{\"info\": {info}, \"tasks\": [], \"simulations\": [{{\"id\": \"a\", \"mess"))
        .unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].task_id, "1");
    assert_eq!(s.quarantined_records, 2);
    let d = s.diagnostics.iter().filter(|d| d.path.ends_with("run.json")).map(|d| (d.kind, d.line)).collect::<Vec<_>>();
    assert_eq!(d, [(InputErrorKind::Schema, Some(4)), (InputErrorKind::Schema, Some(5))]);
    let cut = s.files.iter().find(|f| f.display.ends_with("cut.json")).unwrap();
    assert!(matches!(cut.status, FileStatus::Quarantined { kind: InputErrorKind::Truncated }), "{:?}", cut.status);
}

/// The local mirror of sierra-research/tau2-bench, or `None` (with a visible message) when
/// `CORONER_MIRROR` is unset or lacks it.
fn mirror() -> Option<PathBuf> {
    let Some(root) = std::env::var_os("CORONER_MIRROR").filter(|r| !r.is_empty()) else {
        eprintln!("SKIPPED: CORONER_MIRROR is unset (the real tau2-bench runs are read from its git mirror)");
        return None;
    };
    let repo = PathBuf::from(root).join("sierra-research+tau2-bench/repo");
    if repo.exists() {
        Some(repo)
    } else {
        eprintln!("SKIPPED: {} is absent (the real tau2-bench runs are read from it)", repo.display());
        None
    }
}

/// `commit:path` of the mirror, written under `into` at the same path.
fn extract(repo: &Path, commit: &str, path: &str, into: &Path) -> PathBuf {
    let out = std::process::Command::new("git").arg("-C").arg(repo).args(["show", &format!("{commit}:{path}")]).output().expect("git runs");
    assert!(out.status.success(), "git show {commit}:{path}: {}", String::from_utf8_lossy(&out.stderr));
    let dest = into.join(path);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(&dest, out.stdout).unwrap();
    dest
}

/// A published leaderboard submission (json layout): claude-sonnet-4-5 on airline, 50 tasks.
#[test]
fn real_json_layout_run_from_the_mirror() {
    let Some(repo) = mirror() else { return };
    let dir = tempdir();
    let file = extract(
        &repo,
        "e8163a39d27782ce198010575fcdcacc0ebd7b87",
        "claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json",
        dir.path(),
    );
    let (ts, s) = ingest(&[&file]);
    assert_eq!((ts.len(), s.quarantined_files(), s.quarantined_records), (50, 0, 0));
    assert_eq!(ts.iter().filter(|t| t.outcome.status == OutcomeStatus::Passed).count(), 36);
    assert_eq!(ts.iter().filter(|t| t.outcome.status == OutcomeStatus::Failed).count(), 14);
    assert!(ts.iter().all(|t| t.termination.rule.as_deref() == Some("tau2-user-stop") && t.trial == 0));
    assert!(ts.iter().all(|t| t.model.as_deref() == Some("claude-sonnet-4-5") && t.unpaired_results.is_empty()));
    assert!(ts.iter().all(|t| t.notes.iter().any(|n| n == "domain airline")));
    assert!(ts.iter().all(|t| t.signals.limits.steps == Some(200.0)));
    let steps: usize = ts.iter().map(|t| t.steps.len()).sum();
    let calls: usize = ts.iter().map(|t| t.calls().count()).sum();
    assert_eq!((steps, calls), (1188, 371));

    let t13 = ts.iter().find(|t| t.task_id == "13").unwrap();
    assert_eq!((t13.steps.len(), roles(t13, Role::Assistant), roles(t13, Role::User), roles(t13, Role::Tool)), (12, 6, 4, 2));
    assert_eq!(called(t13), ["get_reservation_details", "transfer_to_human_agents"]);
    assert_eq!(t13.calls().next().unwrap().1.id.as_deref(), Some("toolu_01PnZGa7AyCW7W5zATLdqkYE"));
    assert_eq!((t13.usage.prompt_tokens, t13.usage.completion_tokens), (Some(31376), Some(1287)));
    assert!((t13.usage.cost_usd.unwrap() - 0.113433).abs() < 1e-9);
    assert_eq!(t13.steps.last().unwrap().text, "###TRANSFER###");
    // Passed on the database, though the transfer's arguments did not match.
    assert_eq!(t13.outcome.status, OutcomeStatus::Passed);
    assert!(t13.outcome.tests.iter().any(|x| x.name == "action: transfer_to_human_agents" && x.status == "failed"));

    let t25 = ts.iter().find(|t| t.task_id == "25").unwrap();
    assert_eq!((t25.steps.len(), called(t25).len()), (36, 12));
    assert_eq!(t25.outcome.status, OutcomeStatus::Passed);
    let err = t25.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.is_error).unwrap();
    assert_eq!(err.output, "Error: Payment amount does not add up, total price is 375, but paid 299");
    assert_eq!(err.name.as_deref(), Some("book_reservation"));
    // Claude's thinking blocks are the steps' reasoning.
    assert_eq!(t25.steps.iter().filter(|s| s.reasoning.as_ref().is_some_and(|r| r.text.is_some())).count(), 17);
}

/// The voice interaction-metrics test data (dir layout, full duplex, contents stripped).
#[test]
fn real_dir_layout_voice_run_from_the_mirror() {
    let Some(repo) = mirror() else { return };
    let dir = tempdir();
    let commit = "a2c024725189473d2d7cea3a5cfdbcc67478e41f";
    let base = "tests/test_voice/test_interaction_metrics/testdata/experiment";
    extract(&repo, commit, &format!("{base}/results.json"), dir.path());
    for id in ["49b22f0c-4a56-41c5-922f-bc2a56e53a23", "7c6a3e3e-ac3f-406f-aea9-8cacb0a2e680", "cd9c5ed2-9751-4c86-8dac-8a895a332e41"] {
        extract(&repo, commit, &format!("{base}/simulations/{id}.json"), dir.path());
    }
    let (ts, s) = ingest(&[dir.path()]);
    assert_eq!((ts.len(), s.quarantined_files()), (3, 0));
    assert_eq!(s.per_adapter.get("tau2-bench"), Some(&3));
    assert!(ts.iter().all(|t| t.model.as_deref() == Some("openai:gpt-realtime-2") && t.termination.raw.as_deref() == Some("user_stop")));
    // The test data keeps no reward_info: nothing to judge.
    assert!(ts.iter().all(|t| t.outcome.status == OutcomeStatus::Unknown));
    // (task, ticks, agent utterances, user utterances), counted from `contains_speech`.
    for (task, ticks, agent, user) in [("40", 973.0, 15, 11), ("98", 1810.0, 19, 16), ("20", 1340.0, 17, 16)] {
        let t = ts.iter().find(|t| t.task_id == task).unwrap();
        assert_eq!(t.signals.consumed.steps, Some(ticks), "task {task}");
        assert_eq!((roles(t, Role::Assistant), roles(t, Role::User), t.steps.len()), (agent, user, agent + user), "task {task}");
    }
}
