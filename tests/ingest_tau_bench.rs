//! tau-bench results: the real retail subset (14 results) and a ReAct sample; bad results cost only themselves.

use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, OutcomeStatus, Role, TerminationKind, Trajectory};

use crate::common::{by_task, corpus, ingest, samples, tempdir};

fn called(t: &Trajectory) -> Vec<&str> {
    t.calls().map(|(_, c)| c.name.as_str()).collect()
}

#[test]
fn real_retail_results_give_steps_pairing_tests_and_outcomes() {
    let Some(dir) = corpus("tau-bench") else { return };
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(ts.len(), 14);
    assert_eq!(s.quarantined_files(), 0);
    assert_eq!(s.per_adapter.get("tau-bench"), Some(&14));
    assert_eq!(ts.iter().filter(|t| t.outcome.status == OutcomeStatus::Passed).count(), 6);
    assert_eq!(ts.iter().filter(|t| t.outcome.status == OutcomeStatus::Failed).count(), 8);
    assert!(ts.iter().all(|t| t.harness == "tau-bench" && t.unpaired_results.is_empty()));
    // Every episode ended with the simulated user's stop word.
    assert!(ts.iter().all(|t| t.termination.kind == TerminationKind::AgentFinished && t.termination.raw.as_deref() == Some("###STOP###")));
    assert!(ts.iter().all(|t| t.notes.iter().any(|n| n == "domain retail (from the policy's title)")));

    let t0 = by_task(&ts, "0");
    assert_eq!((t0.trial, t0.steps.len()), (0, 28));
    assert_eq!(t0.steps.iter().filter(|s| s.role == Role::Assistant).count(), 13);
    assert_eq!(t0.steps.iter().filter(|s| s.role == Role::Tool).count(), 8);
    assert_eq!(
        called(t0),
        [
            "find_user_id_by_name_zip",
            "get_user_details",
            "get_order_details",
            "get_product_details",
            "get_product_details",
            "think",
            "calculate",
            "exchange_delivered_order_items"
        ]
    );
    // Calls and results pair by tool_call_id.
    let first = t0.calls().next().unwrap();
    assert_eq!(first.1.id.as_deref(), Some("call_OEikVFXK8h7goki7yiodLeIo"));
    assert_eq!(first.1.arguments["zip"], "19122");
    let r = t0.result_of(first.0).unwrap();
    assert_eq!(r.output, "yusuf_rossi_9620");
    assert_eq!(r.name.as_deref(), Some("find_user_id_by_name_zip"));
    assert_eq!(t0.outcome.reward, Some(1.0));
    assert_eq!(t0.outcome.tests.len(), 1);
    assert_eq!((t0.outcome.tests[0].name.as_str(), t0.outcome.tests[0].status.as_str()), ("r_actions", "passed"));
    assert!(t0.outcome.detail.as_deref().unwrap().starts_with("expected actions (5): find_user_id_by_name_zip, get_order_details"));

    // A task with expected outputs: RewardOutputInfo replaces the action check's info.
    let t3 = by_task(&ts, "3");
    assert_eq!(t3.outcome.status, OutcomeStatus::Failed);
    assert_eq!(t3.outcome.tests.iter().map(|x| (x.name.as_str(), x.status.as_str())).collect::<Vec<_>>(), [("output: 10", "failed")]);
    // Output told to the user, reward still 0: the database check failed.
    let t38 = by_task(&ts, "38");
    let tests: Vec<(&str, &str)> = t38.outcome.tests.iter().map(|x| (x.name.as_str(), x.status.as_str())).collect();
    assert_eq!(tests, [("r_actions (inferred from reward)", "failed"), ("output: camera", "passed"), ("output: 481.5", "passed")]);

    let t55 = by_task(&ts, "55");
    assert_eq!(t55.trial, 55);
    assert_eq!(t55.outcome.tests[0].status, "failed");
    assert_eq!(called(t55).iter().filter(|n| **n == "cancel_pending_order").count(), 2);
    // A tool that raised answers "Error: ..." (Env.step); it is an error, not an unknown tool.
    let err = t55.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.is_error).unwrap();
    assert_eq!(err.output, "Error: user not found");
    assert!(err.unknown_tool.is_none());

    // The names the agent called come through exactly, for the retail registry.
    let mut names: Vec<&str> = ts.iter().flat_map(called).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(
        names,
        [
            "calculate",
            "cancel_pending_order",
            "exchange_delivered_order_items",
            "find_user_id_by_email",
            "find_user_id_by_name_zip",
            "get_order_details",
            "get_product_details",
            "get_user_details",
            "list_all_product_types",
            "modify_pending_order_items",
            "return_delivered_order_items",
            "think"
        ]
    );
}

#[test]
fn react_sample_escalation_unknown_action_and_a_run_that_raised() {
    let (ts, s) = ingest(&[&samples("tau-bench/react-gpt-4o-mini-0.0_range_0-2_user-gpt-4o-llm_0701120000.json")]);
    assert_eq!(ts.len(), 3);
    assert_eq!(s.quarantined_files(), 0);
    assert!(ts.iter().all(|t| t.model.as_deref() == Some("gpt-4o-mini")));

    let escalated = ts.iter().find(|t| t.task_id == "0").unwrap();
    // The terminate tool is the profile's finish tool: the last agent step ends the episode.
    assert_eq!(escalated.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(escalated.termination.raw.as_deref(), Some("tool:transfer_to_human_agents"));
    assert_eq!(escalated.declared_tools.as_ref().unwrap().len(), 6);
    assert_eq!(called(escalated), ["find_user_id_by_email", "search_orders", "transfer_to_human_agents"]);
    let unknown = escalated.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.unknown_tool.is_some()).unwrap();
    assert_eq!(unknown.unknown_tool.as_deref(), Some("Unknown action search_orders"));
    assert_eq!(escalated.steps[unknown.call.unwrap().step as usize].tool_calls[0].name, "search_orders");
    assert!(escalated.outcome.detail.as_deref().unwrap().contains("not made with the same arguments: cancel_pending_order"));

    let raised = ts.iter().find(|t| t.task_id == "1" && t.trial == 0).unwrap();
    assert_eq!(raised.outcome.status, OutcomeStatus::Errored);
    assert_eq!(raised.termination.kind, TerminationKind::Infrastructure);
    assert!(raised.steps.is_empty());

    let stopped = ts.iter().find(|t| t.task_id == "1" && t.trial == 1).unwrap();
    assert_eq!(stopped.outcome.status, OutcomeStatus::Passed);
    assert_eq!(stopped.outcome.tests[1].name, "output: delivered");
    assert_eq!(stopped.termination.raw.as_deref(), Some("###STOP###"));
    assert_eq!(stopped.termination.rule.as_deref(), Some("tau-user-stop"));
}

#[test]
fn an_episode_that_never_reached_done_ran_out_of_steps() {
    let dir = tempdir();
    let msg = |role: &str, content: &str| format!("{{\"role\": \"{role}\", \"content\": \"{content}\"}}");
    let traj = [msg("user", "hi"), msg("assistant", "How can I help?"), msg("user", "cancel my order"), msg("assistant", "Which one?")];
    std::fs::write(
        dir.path().join("results.json"),
        format!(
            "[{{\"task_id\": 7, \"reward\": 0.0, \"info\": {{\"source\": \"user\", \"reward_info\": null}}, \"traj\": [{}], \"trial\": 0}}]",
            traj.join(", ")
        ),
    )
    .unwrap();
    let (ts, _) = ingest(&[dir.path()]);
    let t = &ts[0];
    assert_eq!((t.termination.kind, t.termination.budget), (TerminationKind::Budget, Some(Budget::Steps)));
    assert_eq!((t.termination.consumed, t.termination.limit), (Some(2.0), None));
    assert_eq!(t.termination.rule.as_deref(), Some("tau-episode-not-done"));
}

#[test]
fn a_bad_result_costs_only_itself_and_a_cut_file_is_quarantined_at_its_line() {
    let dir = tempdir();
    std::fs::write(
        dir.path().join("results.json"),
        "[\n  {\"task_id\": 1, \"reward\": 1.0, \"info\": {}, \"traj\": [{\"role\": \"user\", \"content\": \"hi\"}], \"trial\": 0},\n  {\"task_id\": 2, \"reward\": 0.0, \"info\": {}, \"traj\": \"none\", \"trial\": 0}\n]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("cut.json"),
        "[\n  {\"task_id\": 1, \"reward\": 1.0, \"info\": {}, \"traj\": [{\"role\": \"user\", \"con",
    )
    .unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].task_id, "1");
    assert_eq!(s.quarantined_records, 1);
    let bad = s.diagnostics.iter().find(|d| d.path.ends_with("results.json")).unwrap();
    assert_eq!((bad.kind, bad.line), (InputErrorKind::Schema, Some(3)));
    let cut = s.files.iter().find(|f| f.display.ends_with("cut.json")).unwrap();
    assert!(matches!(cut.status, FileStatus::Quarantined { kind: InputErrorKind::Truncated }), "{:?}", cut.status);
    let d = s.diagnostics.iter().find(|d| d.path.ends_with("cut.json")).unwrap();
    assert_eq!(d.line, Some(2));
}
