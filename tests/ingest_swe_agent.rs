//! SWE-agent `.traj` files: the real text-action and function-calling runs, requeried replies, exit statuses, bad input.

use coroner::ingest::InputErrorKind;
use coroner::ingest::adapters::swe::swe_agent::SweAgent;
use coroner::ingest::format::{Adapter, Strength};
use coroner::ingest::probe::Probe;
use coroner::model::{Amounts, Budget, CallRef, Enforcer, OutcomeStatus, Role, Signal, Termination, TerminationKind, Trajectory};

use crate::common::{builtin, by_task, corpus, ingest, samples, tempdir};

#[test]
fn old_text_actions_become_shell_calls_paired_with_their_observations() {
    let Some(dir) = corpus("swe-agent") else { return };
    let path = dir.join("pydicom__pydicom-1458.traj");
    let (ts, summary) = ingest(&[&path]);
    assert_eq!(summary.quarantined_files(), 0);
    let t = &ts[0];
    assert_eq!(t.task_id, "pydicom__pydicom-1458");
    assert_eq!(t.harness, "swe-agent");
    assert_eq!(t.provenance.format_version.as_deref(), Some("swe-agent traj (text actions)"));
    assert_eq!(t.model, None);
    // System prompt, the demonstration, the issue; then 12 replies, each with its observation.
    assert_eq!(t.steps.len(), 27);
    assert_eq!([t.steps[0].role, t.steps[1].role, t.steps[2].role], [Role::System, Role::System, Role::User]);
    assert!(t.steps[1].text.starts_with("Here is a demonstration"));
    assert_eq!(t.steps.iter().filter(|s| s.role == Role::Assistant).count(), 12);
    assert_eq!(t.usage.api_calls, Some(12));
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens), (Some(122_612), Some(1_369)));
    assert!((t.usage.cost_usd.unwrap() - 1.267_19).abs() < 1e-9);
    let cmds: Vec<&str> = t.calls().map(|(_, c)| c.arguments["command"].as_str().unwrap()).collect();
    // SWE-agent's own file commands are calls of those commands on their file (`create` names
    // it, `edit` writes the file its window has open); the rest is shell input.
    for (_, c) in t.calls() {
        let cmd = c.arguments["command"].as_str().unwrap();
        match cmd.split_whitespace().next().unwrap() {
            "create" => assert_eq!((c.name.as_str(), c.arguments["path"].as_str()), ("create", Some("reproduce_bug.py"))),
            "edit" => {
                assert_eq!(c.name, "edit");
                assert!(c.arguments["path"].as_str().is_some_and(|p| p.ends_with(".py")), "{:?}", c.arguments);
            }
            _ => assert_eq!(c.name, "bash", "{cmd}"),
        }
    }
    assert!(t.calls().any(|(_, c)| c.name == "edit"));
    assert_eq!(cmds.len(), 12);
    assert_eq!(cmds[0], "create reproduce_bug.py");
    assert_eq!(cmds[2], "python reproduce_bug.py");
    assert_eq!(cmds[11], "submit");
    assert!(t.calls().all(|(r, _)| t.result_of(r).is_some()));
    assert_eq!(t.steps[4].tool_results[0].call, Some(CallRef { step: 3, call: 0 }));
    // The edit tool refused three edits that would not parse.
    let refused: Vec<u32> =
        t.steps.iter().flat_map(|s| s.tool_results.iter()).filter(|r| r.is_error).map(|r| r.call.unwrap().step).collect();
    assert_eq!(refused, [13, 15, 17]);
    assert!(t.steps[14].tool_results[0].output.starts_with("Your proposed edit has introduced new syntax error(s)"));
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.termination.raw.as_deref(), Some("submitted"));
    assert!(t.submission.as_deref().unwrap().starts_with("\ndiff --git a/pydicom/pixel_data_handlers/numpy_handler.py"));
    assert_eq!(t.steps[26].tool_results[0].output, t.submission.clone().unwrap());
    assert_eq!(t.outcome.status, OutcomeStatus::Unknown);
    // Spans: trajectory entries for the replies, history items for the opening messages.
    let bytes = std::fs::read(&path).unwrap();
    let span = t.steps[3].source_span.unwrap();
    let text = std::str::from_utf8(&bytes[span.offset as usize..(span.offset + span.len) as usize]).unwrap();
    assert!(text.starts_with('{') && text.contains("\"action\": \"create reproduce_bug.py\\n\""));
    assert_eq!(span.line, 4);
}

#[test]
fn old_text_trajectory_larger_than_the_probe_is_still_recognized() {
    let Some(dir) = corpus("swe-agent") else { return };
    let p = Probe::read(&dir.join("pydicom__pydicom-1458.traj")).unwrap();
    let j = p.json.as_ref().unwrap();
    assert!(j.truncated && !j.has("info"));
    assert_eq!(SweAgent.sniff(&p).unwrap().strength, Strength::Structure);
}

#[test]
fn function_calling_takes_tool_calls_and_ids_from_the_history() {
    let Some(dir) = corpus("swe-agent") else { return };
    let (ts, _) = ingest(&[&dir.join("6e44b9__sweagenttestrepo-1c2844.traj")]);
    let t = &ts[0];
    assert_eq!(t.task_id, "6e44b9__sweagenttestrepo-1c2844");
    assert_eq!(t.model.as_deref(), Some("gpt-4o"));
    assert_eq!(t.provenance.format_version.as_deref(), Some("swe-agent traj (function calling)"));
    assert_eq!(t.steps.len(), 12);
    let names: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(names, ["find_file", "open", "edit", "bash", "submit"]);
    let first = &t.steps[2].tool_calls[0];
    assert_eq!(first.id.as_deref(), Some("call_fJuazlMUN5fQDQ73G6XSpYpx"));
    assert_eq!(first.arguments["file_name"], "missing_colon.py");
    assert_eq!(t.steps[6].tool_calls[0].arguments["replace-all"], false);
    // Results carry the history's tool_call_ids.
    let r = &t.steps[3].tool_results[0];
    assert_eq!(r.call_id.as_deref(), Some("call_fJuazlMUN5fQDQ73G6XSpYpx"));
    assert_eq!(r.call, Some(CallRef { step: 2, call: 0 }));
    assert_eq!(t.steps[9].tool_results[0].output, "8.2");
    assert!(t.calls().all(|(r, _)| t.result_of(r).is_some()));
    // The submit step is not in the history; its call is rebuilt from the action and the
    // declared tools (command_docs of the replay config).
    assert_eq!(t.steps[10].tool_calls[0].id, None);
    assert!(t.notes.iter().any(|n| n.contains("missing from the history")));
    let declared: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(declared.len(), 12);
    assert!(declared.contains(&"find_file") && declared.contains(&"submit") && declared.contains(&"edit"));
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!((t.usage.api_calls, t.usage.prompt_tokens, t.usage.completion_tokens), (Some(5), Some(7_141), Some(243)));
    assert!(t.submission.as_deref().unwrap().contains("-def division(a: float, b: float) -> float\r\n"));
    assert!(t.notes.iter().any(|n| n.contains("`SWE-agent__test-repo-i1`")));
}

#[test]
fn requeried_replies_are_format_errors_and_unknown_commands_are_named() {
    let path = samples("swe-agent/fc/tablib__tablib-csv-append/tablib__tablib-csv-append.traj");
    let (ts, summary) = ingest(&[&path]);
    assert_eq!(summary.quarantined_files(), 0);
    let t = &ts[0];
    assert_eq!(t.harness_version.as_deref(), Some("1.1.0"));
    assert_eq!(t.model.as_deref(), Some("claude-3-7-sonnet-20250219"));
    assert_eq!(t.steps.len(), 13);
    // The rejected reply is in the trajectory but not the history; the next entry's query holds
    // the complaint.
    let bad = &t.steps[4];
    assert_eq!(bad.role, Role::Assistant);
    assert!(bad.format_error.as_deref().unwrap().contains("Command 'find_file' not found in list of available commands"));
    assert_eq!(bad.tool_calls[0].name, "find_file");
    let r = &t.steps[5].tool_results[0];
    // The call survives only in the parser's complaint, which the profile reads as the rejection.
    assert_eq!(
        r.unknown_tool.as_deref(),
        Some("Your action could not be parsed properly: Command 'find_file' not found in list of available commands..")
    );
    assert!(r.is_error);
    assert_eq!(r.call, Some(CallRef { step: 4, call: 0 }));
    // Later replies still line up with the history (ids from it).
    assert_eq!(t.steps[6].tool_calls[0].id.as_deref(), Some("call_03"));
    assert_eq!(t.steps[7].tool_results[0].call_id.as_deref(), Some("call_03"));
    // A cancelled command.
    assert!(t.steps[9].tool_results[0].is_error);
    assert!(t.notes.iter().any(|n| n.starts_with("command timed out at step 9")));
    // The cost limit stopped it and the diff was auto-submitted.
    let last = t.steps.last().unwrap();
    assert_eq!((last.role, last.text.as_str()), (Role::Environment, "Exit due to cost limit\nExited (autosubmitted)"));
    let term = &t.termination;
    assert_eq!((term.kind, term.budget, term.enforced_by), (TerminationKind::Budget, Some(Budget::Cost), Some(Enforcer::Harness)));
    assert_eq!((term.limit, term.consumed), (Some(0.05), Some(0.0537)));
    assert_eq!(term.raw.as_deref(), Some("submitted (exit_cost)"));
    assert!(t.notes.iter().any(|n| n == "the run was stopped (submitted (exit_cost)) and its workspace diff auto-submitted"));
    assert!(t.submission.as_deref().unwrap().starts_with("diff --git a/tablib/formats/_csv.py"));
    let declared: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(declared, ["bash", "str_replace_editor", "submit"]);
}

#[test]
fn old_harness_exits_are_environment_steps() {
    let (ts, _) = ingest(&[&samples("swe-agent/text/pallets__flask-4935.traj")]);
    let t = by_task(&ts, "pallets__flask-4935");
    assert_eq!(t.steps.len(), 8);
    assert!(t.steps[6].tool_results[0].is_error, "EXECUTION TIMED OUT");
    let last = t.steps.last().unwrap();
    assert_eq!(last.role, Role::Environment);
    assert!(last.tool_calls.is_empty());
    let term = &t.termination;
    assert_eq!((term.kind, term.budget, term.enforced_by), (TerminationKind::Budget, Some(Budget::Context), Some(Enforcer::Provider)));
    assert_eq!(t.submission.as_deref(), Some(""));
}

/// How the SWE-agent profile reads an exit status, with the limits and consumption recorded.
fn ended(status: &str, limits: &Amounts, consumed: &Amounts) -> Termination {
    let mut t = Trajectory::new("t", "swe-agent", "test", 1, Vec::new());
    t.signals.statuses.push(Signal::new("info.exit_status", status));
    (t.signals.limits, t.signals.consumed) = (limits.clone(), consumed.clone());
    coroner::interpret::apply(&mut t, builtin().profile_for("swe-agent"));
    t.termination
}

#[test]
fn every_exit_status_maps_to_who_ended_the_run() {
    let lim = Amounts {
        cost_usd: Some(3.0),
        steps: Some(0.0),
        format_errors: Some(3.0),
        command_timeouts: Some(3.0),
        wall_seconds: Some(1800.0),
        ..Amounts::default()
    };
    let used =
        Amounts { cost_usd: Some(3.04), steps: Some(61.0), command_timeouts: Some(3.0), wall_seconds: Some(1812.5), ..Amounts::default() };
    let k = |s: &str| ended(s, &lim, &used);
    assert_eq!(k("submitted").kind, TerminationKind::AgentFinished);
    let cost = k("exit_cost");
    assert_eq!((cost.budget, cost.limit, cost.consumed), (Some(Budget::Cost), Some(3.0), Some(3.04)));
    let auto = k("submitted (exit_cost)");
    assert_eq!((auto.kind, auto.budget, auto.raw.as_deref()), (TerminationKind::Budget, Some(Budget::Cost), Some("submitted (exit_cost)")));
    // The per-instance call limit raises the cost error too.
    let calls = ended(
        "exit_cost",
        &Amounts { steps: Some(60.0), ..lim.clone() },
        &Amounts { cost_usd: Some(1.0), steps: Some(60.0), ..Amounts::default() },
    );
    assert_eq!((calls.budget, calls.limit, calls.consumed), (Some(Budget::Steps), Some(60.0), Some(60.0)));
    assert_eq!(k("exit_context").budget, Some(Budget::Context));
    assert_eq!(k("submitted (exit_context)").budget, Some(Budget::Context));
    let fmt = ended("exit_format", &lim, &Amounts { format_errors: Some(3.0), ..Amounts::default() });
    assert_eq!(
        (fmt.budget, fmt.enforced_by, fmt.limit, fmt.consumed),
        (Some(Budget::FormatErrors), Some(Enforcer::Harness), Some(3.0), Some(3.0))
    );
    let timeout = k("exit_command_timeout");
    assert_eq!((timeout.budget, timeout.limit, timeout.consumed), (Some(Budget::CommandTimeout), Some(3.0), Some(3.0)));
    let wall = k("exit_total_execution_time");
    assert_eq!((wall.budget, wall.limit, wall.consumed), (Some(Budget::WallTime), Some(1800.0), Some(1812.5)));
    assert_eq!(k("exit_forfeit").kind, TerminationKind::AgentStoppedWithoutFinish);
    assert_eq!(k("submitted (exit_forfeit)").kind, TerminationKind::AgentStoppedWithoutFinish);
    for infra in ["exit_api", "exit_environment_error", "submitted (exit_api)", "early_exit"] {
        assert_eq!(k(infra).kind, TerminationKind::Infrastructure, "{infra}");
    }
    assert_eq!(k("exit_error").kind, TerminationKind::HarnessError);
    assert_eq!(k("exit_error").raw.as_deref(), Some("exit_error"));
    assert_eq!(k("exit_something_new").kind, TerminationKind::HarnessError);
}

#[test]
fn a_forfeit_is_noted() {
    let dir = tempdir();
    let path = dir.path().join("task-1.traj");
    let doc = serde_json::json!({
        "trajectory": [{"action": "exit_forfeit", "observation": "", "response": "I cannot solve this.\n```\nexit_forfeit\n```", "thought": "I cannot solve this.\n", "state": {}}],
        "history": [],
        "info": {"exit_status": "exit_forfeit", "submission": null, "model_stats": {"instance_cost": 0.1, "tokens_sent": 10, "tokens_received": 5, "api_calls": 1}}
    });
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let (ts, _) = ingest(&[&path]);
    let t = &ts[0];
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    assert_eq!(t.termination.detail.as_deref(), Some("the agent forfeited (exit_forfeit)"));
    assert!(t.termination.gave_up);
    // The model issued the forfeit itself.
    assert_eq!(t.calls().map(|(_, c)| c.arguments["command"].as_str().unwrap()).collect::<Vec<_>>(), ["exit_forfeit"]);
}

#[test]
fn a_wrong_type_in_a_step_quarantines_the_file_at_that_line() {
    let path = samples("swe-agent/invalid/wrong-type-action.traj");
    let (ts, summary) = ingest(&[&path]);
    assert!(ts.is_empty());
    assert_eq!(summary.quarantined_files(), 1);
    assert!(summary.is_partial());
    let d = &summary.diagnostics[0];
    assert_eq!(d.kind, InputErrorKind::Schema);
    assert!(d.path.ends_with("samples/swe-agent/invalid/wrong-type-action.traj"), "{}", d.path);
    assert_eq!(d.line, Some(12));
    assert!(d.message.contains("SWE-agent trajectory step") && d.message.contains("invalid type: integer `42`"), "{}", d.message);
}

#[test]
fn a_trajectory_saved_mid_run_takes_its_status_from_the_batch() {
    let dir = tempdir();
    let inst = dir.path().join("django__django-11133");
    std::fs::create_dir_all(&inst).unwrap();
    let doc = serde_json::json!({
        "trajectory": [{"action": "ls", "observation": "setup.py\n", "response": "Looking.\n```\nls\n```", "thought": "Looking.\n", "state": {}}],
        "history": [],
        "info": {"model_stats": {"instance_cost": 0.02, "tokens_sent": 800, "tokens_received": 30, "api_calls": 1}}
    });
    std::fs::write(inst.join("django__django-11133.traj"), serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    std::fs::write(
        dir.path().join("run_batch_exit_statuses.yaml"),
        "instances_by_exit_status:\n  exit_environment_error:\n  - django__django-11133\n",
    )
    .unwrap();
    let (ts, summary) = ingest(&[dir.path()]);
    assert_eq!(summary.quarantined_files(), 0);
    let t = &ts[0];
    assert_eq!(t.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(t.termination.raw.as_deref(), Some("exit_environment_error"));
    assert!(t.termination.source.as_deref().unwrap().contains("run_batch_exit_statuses.yaml"));
    assert_eq!(t.submission, None);
}
