//! Terminal-Bench 1 trials, run metadata and run-level results, on the real corpus and samples.

use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, Enforcer, OutcomeStatus, TerminationKind, Trajectory};

use crate::common::{corpus, ingest, samples, tempdir};

fn by_trial<'a>(ts: &'a [Trajectory], trial_name: &str) -> &'a Trajectory {
    ts.iter().find(|t| t.session_id.as_deref() == Some(trial_name)).unwrap_or_else(|| panic!("no record for trial {trial_name}"))
}

fn status_of<'a>(s: &'a coroner::ingest::Summary, suffix: &str) -> &'a FileStatus {
    &s.files.iter().find(|f| f.display.ends_with(suffix)).unwrap_or_else(|| panic!("no file ending in {suffix}")).status
}

#[test]
fn real_trials_map_failure_modes_outcomes_and_run_metadata() {
    let Some(dir) = corpus("terminal-bench") else { return };
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(ts.len(), 5);
    assert_eq!(s.quarantined_files(), 0);
    assert_eq!(s.per_adapter.get("terminal-bench"), Some(&5));

    // The older form: `uuid`, no timestamps; attempt 4 of 5.
    let old = by_trial(&ts, "build-initramfs-qemu.4-of-5");
    assert_eq!(old.task_id, "build-initramfs-qemu");
    assert_eq!(old.trial, 3);
    assert_eq!((old.usage.prompt_tokens, old.usage.completion_tokens), (Some(56_170), Some(7_744)));
    assert_eq!(old.usage.wall_seconds, None);
    assert_eq!(old.started_at, None);
    assert_eq!(old.outcome.status, OutcomeStatus::Failed);
    assert_eq!(old.outcome.source.as_ref().unwrap().field, "is_resolved");
    assert_eq!(old.outcome.tests.len(), 1);
    assert!(old.outcome.tests[0].name.starts_with("../tests/test_outputs.py - AssertionError"));
    assert_eq!(old.outcome.tests[0].status, "failed");
    assert_eq!((old.termination.kind, old.termination.raw.as_deref()), (TerminationKind::Unknown, Some("unset")));
    assert_eq!(old.harness, "unknown");

    // The run's metadata sits in a sibling directory; its run_id ends the trial name.
    let tcc = by_trial(&ts, "build-tcc-qemu.1-of-1.2025-08-07__20-46-16");
    assert_eq!(tcc.harness, "mini-swe-agent");
    assert_eq!(tcc.model.as_deref(), Some("anthropic/claude-sonnet-4-20250514"));
    assert!(tcc.provenance.files.iter().any(|f| f.role == "run_metadata" && f.path.ends_with("run_metadata.json")));
    assert!((tcc.usage.wall_seconds.unwrap() - 65.248_705).abs() < 1e-6);
    assert_eq!(tcc.usage.prompt_tokens, None, "0 tokens means the agent did not report them");
    assert!(tcc.steps.is_empty());
    assert!(tcc.notes.iter().any(|n| n.contains("only a terminal capture (commands.txt)")), "{:?}", tcc.notes);
    assert_eq!(tcc.started_at.as_deref(), Some("2025-08-08T07:12:37.644741+00:00"));

    // parse_error: the test output did not parse, so there is no verdict.
    let cron = by_trial(&ts, "cron-broken-network.1-of-1.openhands-sonnet2");
    assert_eq!(cron.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(cron.termination.raw.as_deref(), Some("parse_error"));
    assert_eq!(cron.outcome.status, OutcomeStatus::Errored);
    assert!(cron.outcome.tests.is_empty());

    // agent_timeout: a wall-clock budget enforced by the benchmark; the tests still ran.
    let oom = by_trial(&ts, "oom.1-of-1.2025-08-07__20-46-16");
    assert_eq!(
        (oom.termination.kind, oom.termination.budget, oom.termination.enforced_by),
        (TerminationKind::Budget, Some(Budget::WallTime), Some(Enforcer::Benchmark))
    );
    assert!((oom.termination.consumed.unwrap() - 561.693_808).abs() < 1e-6);
    assert_eq!(oom.outcome.status, OutcomeStatus::Failed);
    assert_eq!(oom.outcome.tests[0].name, "test_offline_model_load");
    assert_eq!(oom.usage.prompt_tokens, None);
    assert_eq!(oom.harness, "mini-swe-agent");

    let solved = by_trial(&ts, "oom.1-of-1.tb_rc2_g5_2");
    assert_eq!(solved.outcome.status, OutcomeStatus::Passed);
    assert_eq!(solved.outcome.reward, Some(1.0));
    assert_eq!(solved.outcome.tests[0].status, "passed");
    assert_eq!(solved.harness, "unknown");

    assert!(matches!(status_of(&s, "run_metadata.json"), FileStatus::Companion { adapter: "terminal-bench-run-metadata" }));
    assert!(matches!(status_of(&s, "commands.txt"), FileStatus::Companion { adapter: "terminal-bench-capture" }));
}

#[test]
fn real_trials_with_only_an_agent_log_have_no_steps_and_say_so() {
    let Some(dir) = corpus("terminal-bench-agent-log") else { return };
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(ts.len(), 3);
    // The three captures are read with their trials, not counted on their own.
    let logs: Vec<_> = s.files.iter().filter(|f| f.display.ends_with("sessions/agent.log")).collect();
    assert_eq!(logs.len(), 3);
    assert!(logs.iter().all(|f| matches!(f.status, FileStatus::Companion { adapter: "terminal-bench-capture" })));
    for t in &ts {
        assert!(t.steps.is_empty());
        // The capture is read (tests/ingest_terminal_capture.rs): mini-swe-agent never ran.
        assert!(t.notes.iter().any(|n| n.contains("read from the terminal capture (sessions/agent.log)")), "{:?}", t.notes);
        assert_eq!(t.trial, 0);
    }
    let csv = by_trial(&ts, "csv-to-parquet.1-of-1.2025-08-14__19-39-35");
    assert_eq!((csv.termination.kind, csv.termination.raw.as_deref()), (TerminationKind::Infrastructure, Some("test_timeout")));
    assert_eq!(csv.outcome.status, OutcomeStatus::Errored);
    assert!((csv.usage.wall_seconds.unwrap() - 204.308_972).abs() < 1e-6);

    let fib = by_trial(&ts, "fibonacci-server.1-of-1.2025-08-14__19-39-35");
    assert_eq!(fib.outcome.status, OutcomeStatus::Failed);
    let names: Vec<&str> = fib.outcome.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "test_server_running",
            "test_fibonacci_endpoint_small_numbers",
            "test_fibonacci_large_number",
            "test_negative_number",
            "test_missing_parameter",
            "test_non_integer_parameter"
        ]
    );
    assert!(fib.outcome.tests.iter().all(|t| t.status == "failed"));

    let perms = by_trial(&ts, "fix-permissions.1-of-1.2025-08-14__19-39-35");
    assert_eq!(perms.outcome.tests.len(), 1);
    // "unset" named no failure; the capture shows the agent's command was never found.
    assert_eq!(perms.termination.raw.as_deref(), Some("mini: command not found"));
}

#[test]
fn a_run_directory_counts_each_trial_once() {
    let (ts, s) = ingest(&[&samples("terminal-bench/runs")]);
    // Three trial directories, plus one run-level entry whose directory is absent.
    assert_eq!(ts.len(), 4);
    assert_eq!(s.quarantined_files(), 0);
    assert!(matches!(status_of(&s, "runs/2025-09-10__12-00-00/results.json"), FileStatus::Companion { adapter: "terminal-bench-run" }));
    assert!(matches!(status_of(&s, "2025-09-10__12-00-00/run_metadata.json"), FileStatus::Companion { .. }));
    let captures = s.files.iter().filter(|f| matches!(f.status, FileStatus::Companion { adapter: "terminal-bench-capture" })).count();
    assert_eq!(captures, 4, "commands.txt, panes/post-agent.txt, sessions/agent.cast, sessions/agent.log");
    assert!(ts.iter().all(|t| t.harness == "terminus" && t.model.as_deref() == Some("anthropic/claude-3-7-sonnet-20250219")));
    assert!(ts.iter().all(|t| t.arm.as_deref() == Some("terminus/anthropic/claude-3-7-sonnet-20250219")));

    let first = by_trial(&ts, "hello-world.1-of-2.2025-09-10__12-00-00");
    assert_eq!(first.trial, 0);
    assert_eq!(first.outcome.status, OutcomeStatus::Passed);
    assert_eq!(first.termination.raw.as_deref(), Some("none"));
    assert_eq!((first.usage.prompt_tokens, first.usage.completion_tokens), (Some(10_412), Some(388)));
    assert!((first.usage.wall_seconds.unwrap() - 45.5).abs() < 1e-9);
    assert!(
        first.notes.iter().any(|n| n.contains("commands.txt, panes/post-agent.txt, sessions/agent.cast, sessions/agent.log")),
        "{:?}",
        first.notes
    );

    let second = by_trial(&ts, "hello-world.2-of-2.2025-09-10__12-00-00");
    assert_eq!(second.trial, 1);
    assert_eq!((second.termination.budget, second.termination.enforced_by), (Some(Budget::Context), Some(Enforcer::Provider)));
    assert_eq!(second.outcome.tests.len(), 2);

    let git = by_trial(&ts, "fix-git.1-of-1.2025-09-10__12-00-00");
    assert_eq!((git.termination.budget, git.termination.enforced_by), (Some(Budget::FormatErrors), Some(Enforcer::Harness)));

    // Only in the run-level file: read from it, once.
    let missing = by_trial(&ts, "count-lines.1-of-1.2025-09-10__12-00-00");
    assert_eq!(missing.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(missing.outcome.status, OutcomeStatus::Errored);
    assert!(missing.outcome.source.as_ref().unwrap().file.ends_with("2025-09-10__12-00-00/results.json"));
    assert!(missing.notes.iter().any(|n| n.contains("run-level results.json")));
    assert_eq!(ts.iter().filter(|t| t.task_id == "hello-world").count(), 2);
}

#[test]
fn a_run_with_only_its_run_level_results_gives_one_record_per_trial() {
    let (ts, s) = ingest(&[&samples("terminal-bench/run-only")]);
    assert_eq!(ts.len(), 7);
    assert_eq!(s.per_adapter.get("terminal-bench-run"), Some(&7));
    let by = |task: &str| ts.iter().find(|t| t.task_id == task).unwrap_or_else(|| panic!("{task}"));
    let t = by("train-model");
    assert_eq!((t.termination.budget, t.termination.enforced_by), (Some(Budget::WallTime), Some(Enforcer::Benchmark)));
    assert!((t.termination.consumed.unwrap() - 900.0).abs() < 1e-9);
    assert_eq!(by("sqlite-repair").termination.kind, TerminationKind::Infrastructure);
    assert_eq!(by("sqlite-repair").outcome.status, OutcomeStatus::Errored);
    assert_eq!(by("compile-lua").termination.kind, TerminationKind::HarnessError);
    assert_eq!(by("compile-lua").outcome.status, OutcomeStatus::Failed);
    assert_eq!(by("write-essay").termination.budget, Some(Budget::OutputTokens));
    assert_eq!(by("regex-log").outcome.status, OutcomeStatus::Passed);
    assert_eq!(by("regex-log").termination.kind, TerminationKind::Unknown);
    assert_eq!(by("jq-filter").termination.raw.as_deref(), Some("unknown"));
    // A mode Terminal-Bench 1 does not define is kept as given.
    let odd = by("csv-merge");
    assert_eq!((odd.termination.kind, odd.termination.raw.as_deref()), (TerminationKind::Unknown, Some("sandbox_crashed")));
    assert!(odd.termination.detail.as_deref().unwrap().contains("not one Terminal-Bench 1 defines"));
    assert!(ts.iter().all(|t| t.harness == "unknown" && t.steps.is_empty()));
}

#[test]
fn every_failure_mode_has_a_termination() {
    let rules = coroner::rules::Rules::builtin().unwrap();
    let end = |mode: &str| {
        let mut t = Trajectory::new("t", "terminus", "terminal-bench", 1, Vec::new());
        t.signals.status("failure_mode", mode);
        coroner::interpret::interpret(&mut t, &rules);
        t.termination
    };
    let cases = [
        ("unset", TerminationKind::Unknown, None),
        ("none", TerminationKind::Unknown, None),
        ("unknown", TerminationKind::Unknown, None),
        ("test_timeout", TerminationKind::Infrastructure, None),
        ("agent_timeout", TerminationKind::Budget, Some(Budget::WallTime)),
        ("unknown_agent_error", TerminationKind::HarnessError, None),
        ("parse_error", TerminationKind::Infrastructure, None),
        ("fatal_llm_parse_error", TerminationKind::Budget, Some(Budget::FormatErrors)),
        ("context_length_exceeded", TerminationKind::Budget, Some(Budget::Context)),
        ("output_length_exceeded", TerminationKind::Budget, Some(Budget::OutputTokens)),
        ("agent_installation_failed", TerminationKind::Infrastructure, None),
        ("something_new", TerminationKind::Unknown, None),
    ];
    for (mode, kind, budget) in cases {
        let t = end(mode);
        assert_eq!((t.kind, t.budget), (kind, budget), "{mode}");
        assert_eq!(t.raw.as_deref(), Some(mode));
        assert_eq!(t.source.as_deref(), Some("failure_mode"));
    }
    assert_eq!(end("agent_timeout").enforced_by, Some(Enforcer::Benchmark));
}

#[test]
fn a_bad_trial_result_is_quarantined_at_its_line() {
    let dir = tempdir();
    let trial = dir.path().join("hello.1-of-1.run");
    std::fs::create_dir_all(&trial).unwrap();
    std::fs::write(
        trial.join("results.json"),
        "{\n    \"trial_name\": \"hello.1-of-1.run\",\n    \"task_id\": \"hello\",\n    \"is_resolved\": \"yes\",\n    \"failure_mode\": \"unset\"\n}\n",
    )
    .unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert!(ts.is_empty());
    assert!(matches!(status_of(&s, "results.json"), FileStatus::Quarantined { kind: InputErrorKind::Schema }));
    let d = &s.diagnostics[0];
    assert!(d.path.ends_with("hello.1-of-1.run/results.json"), "{}", d.path);
    assert_eq!(d.line, Some(4));
}

#[test]
fn a_bad_entry_of_a_run_level_file_costs_only_that_entry() {
    let dir = tempdir();
    let run = dir.path().join("2025-01-01__00-00-00");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("results.json"),
        "{\n  \"id\": \"r\",\n  \"results\": [\n    {\"trial_name\": \"a.1-of-1.r\", \"task_id\": \"a\", \"is_resolved\": true, \"failure_mode\": \"unset\"},\n    {\"trial_name\": \"b.1-of-1.r\", \"is_resolved\": false, \"failure_mode\": \"unset\"}\n  ],\n  \"n_resolved\": 1,\n  \"resolved_ids\": [\"a\"]\n}\n",
    )
    .unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].task_id, "a");
    assert_eq!(s.quarantined_records, 1);
    let d = &s.diagnostics[0];
    assert!(d.path.ends_with("2025-01-01__00-00-00/results.json"));
    assert_eq!(d.line, Some(5));
    assert!(d.message.contains("task_id"), "{}", d.message);
}

#[test]
fn a_run_level_file_longer_than_the_probe_is_still_recognized() {
    let dir = tempdir();
    let run = dir.path().join("2025-02-02__00-00-00");
    std::fs::create_dir_all(&run).unwrap();
    let long = "x".repeat(2_000);
    let entries: Vec<String> = (0..60)
        .map(|i| {
            format!(
                "{{\"id\": \"{i}\", \"trial_name\": \"t{i}.1-of-1.2025-02-02__00-00-00\", \"task_id\": \"t{i}\", \"instruction\": \"{long}\", \"is_resolved\": {}, \"failure_mode\": \"unset\", \"parser_results\": null}}",
                i % 3 == 0
            )
        })
        .collect();
    let body =
        format!("{{\"id\": \"r\", \"results\": [{}], \"n_resolved\": 20, \"resolved_ids\": [], \"accuracy\": 0.33}}", entries.join(", "));
    assert!(body.len() > 100_000);
    std::fs::write(run.join("results.json"), body).unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert_eq!(ts.len(), 60);
    assert_eq!(s.per_adapter.get("terminal-bench-run"), Some(&60));
    assert_eq!(ts.iter().filter(|t| t.outcome.status == OutcomeStatus::Passed).count(), 20);
}
