//! talos SQLite run stores and run summaries (samples written from its source), corrupt stores.

use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, Enforcer, OutcomeStatus, Role, TerminationKind};

use crate::common::{ingest, samples, tempdir};

#[test]
fn a_store_gives_one_record_per_run() {
    let (ts, s) = ingest(&[&samples("talos")]);
    assert_eq!(s.quarantined_files(), 0);
    assert_eq!(s.per_adapter.get("talos"), Some(&3));
    assert_eq!(s.per_adapter.get("talos-summary"), Some(&1));
    assert!(matches!(
        s.files.iter().find(|f| f.display.ends_with("broken-adder.summary.json")).unwrap().status,
        FileStatus::Companion { adapter: "talos-summary" }
    ));
    let run = |id: &str| ts.iter().find(|t| t.session_id.as_deref() == Some(id)).unwrap_or_else(|| panic!("{id}"));

    let done = run("broken-adder:1");
    assert_eq!((done.task_id.as_str(), done.trial), ("broken-adder", 0));
    assert_eq!(done.model.as_deref(), Some("claude-haiku-4-5"));
    assert_eq!(done.calls().map(|(_, c)| c.name.as_str()).collect::<Vec<_>>(), ["read_file", "edit_file", "run_checks", "finish"]);
    assert!(done.unpaired_results.is_empty());
    let (edit, _) = done.calls().nth(1).unwrap();
    assert_eq!(done.result_of(edit).unwrap().output, "edited src/lib.rs (1 replacement)");
    assert_eq!(done.steps[1].reasoning.as_ref().unwrap().text.as_deref(), Some("The test says add(2, 2) returned 0."));
    assert_eq!((done.usage.prompt_tokens, done.usage.completion_tokens, done.usage.api_calls), (Some(8650), Some(310), Some(4)));
    assert_eq!((done.termination.kind, done.termination.raw.as_deref()), (TerminationKind::AgentFinished, Some("Done")));
    assert_eq!(done.termination.source.as_deref(), Some("events.DispositionSet.disposition"));
    assert_eq!(done.outcome.status, OutcomeStatus::Passed);
    assert_eq!(done.outcome.tests[0].name, "test");
    assert!(done.provenance.files.iter().any(|f| f.role == "run_summary"));

    let capped = run("csv-ledger:1");
    assert_eq!(
        (capped.termination.kind, capped.termination.budget, capped.termination.enforced_by),
        (TerminationKind::Budget, Some(Budget::Steps), Some(Enforcer::Harness))
    );
    assert_eq!((capped.termination.limit, capped.termination.consumed), (Some(6.0), Some(6.0)));
    assert_eq!(capped.termination.rule.as_deref(), Some("talos-iteration-cap"));
    assert_eq!(capped.outcome.status, OutcomeStatus::Failed);
    // talos ticks no cost (`cost_micros` keeps its initial 0): none is reported.
    assert_eq!(capped.usage.cost_usd, None);
    // Rebuilt from the log: the unregistered tool is rejected by the registry.
    assert!(capped.notes.iter().any(|n| n.contains("cover 1 of 6 model turns")));
    assert_eq!(capped.steps.iter().filter(|s| s.role == Role::Assistant).count(), 6);
    let rejected = capped.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.unknown_tool.is_some()).unwrap();
    assert_eq!(rejected.name.as_deref(), Some("search_code"));
    assert!(rejected.unknown_tool.as_deref().unwrap().starts_with("unknown tool `search_code`: not registered"));
    assert_eq!(capped.steps[rejected.call.unwrap().step as usize].tool_calls[0].id.as_deref(), Some("toolu_11"));

    let cut = run("calc:2");
    assert_eq!((cut.task_id.as_str(), cut.trial), ("calc", 1));
    assert_eq!(cut.termination.kind, TerminationKind::Unknown);
    assert!(cut.notes.iter().any(|n| n.contains("1 tool call(s) have no result")));

    let alone = run("lru-cache:2");
    assert_eq!(alone.provenance.adapter, "talos-summary");
    assert_eq!((alone.termination.budget, alone.usage.api_calls), (Some(Budget::WallTime), Some(37)));
    assert!(alone.steps.is_empty());
}

#[test]
fn a_corrupt_or_foreign_store_is_a_diagnostic_not_a_panic() {
    let dir = tempdir();
    let good = std::fs::read(samples("talos/store/run.sqlite")).unwrap();
    // The header and schema page survive; every later page is overwritten.
    let mut broken = good.clone();
    for b in broken.iter_mut().skip(4096) {
        *b = 0xA5;
    }
    let a = dir.path().join("a");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::write(a.join("run.sqlite"), &broken).unwrap();
    // A SQLite header and nothing else.
    let b = dir.path().join("b");
    std::fs::create_dir_all(&b).unwrap();
    let mut header_only = good[..100].to_vec();
    header_only.extend(std::iter::repeat_n(0xFF_u8, 1000));
    std::fs::write(b.join("run.sqlite"), &header_only).unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert!(ts.is_empty());
    for f in ["a/run.sqlite", "b/run.sqlite"] {
        let st = &s.files.iter().find(|x| x.display.ends_with(f)).unwrap().status;
        assert!(matches!(st, FileStatus::Quarantined { kind: InputErrorKind::Corrupt }), "{f}: {st:?}");
    }
    assert!(s.diagnostics.iter().all(|d| d.help.as_deref().is_some_and(|h| h.contains("PRAGMA integrity_check"))));
}

#[test]
fn a_bad_event_payload_costs_that_event() {
    let dir = tempdir();
    let db = dir.path().join("run.sqlite");
    std::fs::copy(samples("talos/store/run.sqlite"), &db).unwrap();
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute("UPDATE events SET payload = '{not json' WHERE run_id = 'calc:2' AND seq = 1", []).unwrap();
        conn.execute("CREATE TABLE other (x)", []).unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert_eq!(ts.len(), 3);
    assert_eq!(s.quarantined_records, 1);
    assert!(s.diagnostics[0].message.contains("event 1 (BudgetTick) of run calc:2"), "{}", s.diagnostics[0].message);
    assert_eq!(std::fs::read(&db).unwrap(), before, "the store is opened read-only");
    // A SQLite file without talos's tables is not taken for a store unless it is named like one.
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other).unwrap().execute("CREATE TABLE t (x)", []).unwrap();
    let (_, s) = ingest(&[&other]);
    assert!(matches!(s.files[0].status, FileStatus::Quarantined { kind: InputErrorKind::Binary }));
}
