//! Terminal captures: cleaning, mini-swe-agent CLI steps in Terminal-Bench trials (real and samples), cut captures.

use coroner::ingest::FileStatus;
use coroner::ingest::adapters::terminal::terminal_capture::{EXIT_STATUS, STARTUP, TAIL, clean, parse};
use coroner::model::{Budget, Enforcer, OutcomeStatus, Role, TerminationKind, Trajectory};

use crate::common::{corpus, ingest, samples, statuses, tempdir};

fn by_trial<'a>(ts: &'a [Trajectory], trial_name: &str) -> &'a Trajectory {
    ts.iter().find(|t| t.session_id.as_deref() == Some(trial_name)).unwrap_or_else(|| panic!("no record for trial {trial_name}"))
}

#[test]
fn real_captures_show_the_agent_never_ran() {
    let Some(dir) = corpus("terminal-bench-agent-log") else { return };
    // The cleaned capture holds the harness's install output, then the agent's command line.
    let raw = std::fs::read(dir.join("fix-permissions.1-of-1.2025-08-14__19-39-35/sessions/agent.log")).unwrap();
    let text = clean(&raw);
    assert!(!text.contains('\x1b') && !text.contains('\r'));
    assert_eq!(text, clean(&raw), "cleaning is deterministic");
    assert!(text.contains("INSTALL_SUCCESS\n"));
    assert!(text.contains("error: externally-managed-environment"));
    let cap = parse(&text);
    assert_eq!(cap.agent, Some("mini-swe-agent"));
    assert_eq!(cap.model.as_deref(), Some("anthropic/claude-sonnet-4-0"));
    assert!(cap.steps.is_empty());

    let (ts, s) = ingest(&[&dir]);
    assert_eq!(ts.len(), 3);
    assert!(
        s.files
            .iter()
            .filter(|f| f.display.ends_with("agent.log"))
            .all(|f| matches!(f.status, FileStatus::Companion { adapter: "terminal-bench-capture" }))
    );
    for t in &ts {
        assert!(t.steps.is_empty());
        assert_eq!(t.harness, "mini-swe-agent");
        assert_eq!(t.model.as_deref(), Some("anthropic/claude-sonnet-4-0"));
        assert!(t.provenance.files.iter().any(|f| f.role == "terminal_capture" && f.path.ends_with("sessions/agent.log")));
        // What the shell answered to the agent's command line is kept, whatever decides.
        let startup: Vec<&str> = t.signals.log_lines.iter().filter(|s| s.field == STARTUP).map(|s| s.text.as_str()).collect();
        assert_eq!(startup.first(), Some(&"mini: command not found"), "{startup:?}");
    }
    // "unset" said nothing; the capture says why the trial failed.
    let perms = by_trial(&ts, "fix-permissions.1-of-1.2025-08-14__19-39-35");
    assert_eq!(
        (perms.termination.kind, perms.termination.raw.as_deref()),
        (TerminationKind::Infrastructure, Some("mini: command not found"))
    );
    assert_eq!(perms.termination.rule.as_deref(), Some("tb-capture-not-installed"));
    assert!(perms.termination.detail.as_deref().unwrap().contains("never installed"));
    assert_eq!(perms.outcome.status, OutcomeStatus::Failed);
    let fib = by_trial(&ts, "fibonacci-server.1-of-1.2025-08-14__19-39-35");
    assert_eq!(fib.termination.raw.as_deref(), Some("mini: command not found"));
    // A failure mode the trial result names is kept; the capture's finding stays a signal.
    let csv = by_trial(&ts, "csv-to-parquet.1-of-1.2025-08-14__19-39-35");
    assert_eq!(csv.termination.raw.as_deref(), Some("test_timeout"));
    assert_eq!(csv.termination.rule.as_deref(), Some("tb-test-timeout"));
}

#[test]
fn sample_trials_read_mini_swe_agent_steps_from_the_capture() {
    let (ts, s) = ingest(&[&samples("terminal-capture")]);
    assert_eq!(s.quarantined_files(), 0);
    assert_eq!(ts.len(), 3);

    let words = by_trial(&ts, "count-words.1-of-1.2025-09-12__09-00-00");
    assert_eq!(words.harness, "mini-swe-agent");
    let roles: Vec<Role> = words.steps.iter().map(|s| s.role).collect();
    assert_eq!(
        roles,
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant,
            Role::Tool,
            Role::Assistant,
            Role::Environment,
            Role::Assistant,
            Role::Tool
        ]
    );
    let commands: Vec<&str> = words.calls().map(|(_, c)| c.arguments["command"].as_str().unwrap()).collect();
    assert_eq!(
        commands,
        [
            "ls -la /app && head -5 /app/input.txt",
            "wc -w < /app/input.txt > /app/count.txt && cat /app/count.txt",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
        ]
    );
    let (second, _) = words.calls().nth(1).unwrap();
    let r = words.result_of(second).unwrap();
    assert_eq!(r.exit_code, Some(0));
    assert!(r.output.contains("<output>\n42\n</output>"));
    assert!(words.steps[6].format_error.as_deref().unwrap().starts_with("Please always provide EXACTLY ONE action"));
    assert!(words.steps[2].text.starts_with("THOUGHT: Let me look at the input file"));
    assert_eq!((words.usage.api_calls, words.usage.cost_usd), (Some(4), Some(0.04)));
    assert_eq!(words.termination.kind, TerminationKind::AgentFinished);
    // mini's exit status, from its protocol, speaks before the trial's failure mode.
    assert_eq!(statuses(words), [(EXIT_STATUS, "Submitted"), ("failure_mode", "unset")]);
    // Terminal-Bench grades the container, so the trial records no submission (mini printed none).
    assert_eq!(words.submission, None);
    assert_eq!(words.outcome.status, OutcomeStatus::Passed);

    // The agent's cost limit fired; its CLI waited for new limits until the benchmark's timeout.
    let health = by_trial(&ts, "health-endpoint.1-of-1.2025-09-12__09-00-00");
    assert_eq!((health.termination.budget, health.termination.enforced_by), (Some(Budget::Cost), Some(Enforcer::Harness)));
    assert_eq!((health.termination.limit, health.termination.consumed), (Some(3.0), Some(3.05)));
    assert!(health.termination.detail.as_deref().unwrap().contains("agent_timeout"));
    assert_eq!(health.termination.rule.as_deref(), Some("tb-capture-limits-exceeded"));
    let tail: Vec<&str> = health.signals.log_lines.iter().filter(|s| s.field == TAIL).map(|s| s.text.as_str()).collect();
    assert_eq!(tail, ["Limits exceeded. Limits: 0 steps, $3.0.", "Current spend: 2 steps, $3.05.", "New step limit:"]);
    assert_eq!(health.usage.cost_usd, Some(3.05));
    let failed_test = health.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.is_error).unwrap();
    assert_eq!(failed_test.exit_code, Some(1));

    // A capture on its own.
    let alone = ts.iter().find(|t| t.task_id == "fix-typo").unwrap();
    assert_eq!(alone.provenance.adapter, "terminal-capture");
    assert_eq!(alone.model.as_deref(), Some("openai/gpt-5-mini"));
    assert_eq!(alone.calls().count(), 3);
    assert!(alone.submission.as_deref().unwrap().contains("+def receive(sock):"));
}

#[test]
fn other_agents_keep_the_cleaned_screen_as_one_environment_step() {
    let (ts, _) = ingest(&[&samples("terminal-bench/runs")]);
    let t = by_trial(&ts, "hello-world.1-of-2.2025-09-10__12-00-00");
    assert_eq!(t.steps.len(), 1);
    assert_eq!(t.steps[0].role, Role::Environment);
    assert!(t.steps[0].text.contains("printf 'Hello, world!\\n' > hello.txt"));
    assert!(t.notes.iter().any(|n| n.contains("the trajectory is unstructured")));
}

#[test]
fn a_capture_cut_mid_escape_sequence_cleans_without_panicking() {
    let dir = tempdir();
    let trial = dir.path().join("t.1-of-1.run");
    std::fs::create_dir_all(trial.join("sessions")).unwrap();
    std::fs::write(
        trial.join("results.json"),
        r#"{"trial_name": "t.1-of-1.run", "task_id": "t", "is_resolved": false, "failure_mode": "unset", "parser_results": null}"#,
    )
    .unwrap();
    let mut log =
        b"root@h:/app# mini -m m1 -t 'x' -y\r\n\r\n\x1b[1;32mSystem\x1b[0m:\r\nsys\r\n\r\n\x1b[1;32mUser\x1b[0m:\r\ntask\r\n".to_vec();
    log.extend_from_slice(b"\r\n\x1b[1;31mmini-swe-agent\x1b[0m\x1b[31m (step \x1b[0m\x1b[1;31m1\x1b[0m\x1b[31m, $0.01):\x1b[0m\r\nTHOUGHT: t\r\n\r\n```bash\r\nls\r\n```\r\n\r\n\x1b[1;32mUser\x1b[0m:\r\n<returncode>0</returncode>\r\n<output>\r\na\r\n</output>\r\n\x1b]0;ti");
    for cut in [log.len(), log.len() - 3, log.len() - 6] {
        std::fs::write(trial.join("sessions/agent.log"), &log[..cut]).unwrap();
        let (ts, s) = ingest(&[dir.path()]);
        assert_eq!(s.quarantined_files(), 0);
        assert_eq!(ts[0].calls().count(), 1, "cut at {cut}");
        assert_eq!(ts[0].model.as_deref(), Some("m1"));
        let again = ingest(&[dir.path()]).0;
        assert_eq!(ts[0].steps, again[0].steps, "deterministic");
    }
    // Every prefix of a capture cleans without panicking, the same way twice.
    for n in 0..log.len() {
        assert_eq!(clean(&log[..n]), clean(&log[..n]));
    }
}
