//! Broken, hostile and unknown inputs: quarantined with diagnostics, never a panic.

use std::path::Path;

use crate::common::{coroner, coroner_in, samples, tempdir};

/// Copies `samples/invalid` into a fresh `bad/` directory and adds the inputs too large to
/// commit: a 50 MB single line.
fn bad_dir(tmp: &Path) {
    let dst = tmp.join("bad");
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(samples("invalid")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    let mut giant = br#"{"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "x", "version": "1"}, "steps": [{"step_id": 1, "source": "agent", "message": ""#.to_vec();
    giant.extend(std::iter::repeat_n(b'x', 50 * 1024 * 1024));
    std::fs::write(dst.join("giant-line.trajectory.json"), giant).unwrap();
}

#[test]
fn good_files_ingest_and_every_bad_one_is_quarantined_with_file_and_line() {
    let tmp = tempdir();
    bad_dir(tmp.path());
    let out = coroner_in(tmp.path(), &["ingest", "bad", "-o", "out.jsonl", "--summary-json", "summary.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "partial exit code; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"));

    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(tmp.path().join("summary.json")).unwrap()).unwrap();
    let status_of = |name: &str| {
        summary["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(name))
            .map(|f| (f["status"].as_str().unwrap().to_string(), f["detail"].clone()))
            .unwrap_or_else(|| panic!("{name} not accounted for"))
    };
    assert_eq!(status_of("good.trajectory.json").0, "ingested");
    let expected = [
        ("truncated.trajectory.json", "truncated", Some(18)),
        ("invalid-utf8.trajectory.json", "invalid-utf8", Some(18)),
        ("wrong-type.trajectory.json", "schema", Some(9)),
        ("wrong-type-in-step.trajectory.json", "schema", Some(22)),
        ("empty.json", "empty", None),
        ("giant-line.trajectory.json", "truncated", Some(1)),
        ("deep.json", "too-deep", Some(1)),
        ("unknown-format.json", "unknown-format", None),
        ("blob.dat", "binary", Some(1)),
    ];
    for (name, kind, line) in expected {
        let (status, detail) = status_of(name);
        assert_eq!(status, "quarantined", "{name}");
        assert_eq!(detail["kind"], kind, "{name}");
        let diag = summary["diagnostics"].as_array().unwrap().iter().find(|d| d["path"].as_str().unwrap().ends_with(name)).unwrap();
        assert_eq!(diag["line"].as_u64(), line.map(|l: u64| l), "{name}: {diag}");
        assert!(stderr.contains(&format!("bad/{name}")), "stderr names {name}");
    }
    assert_eq!(summary["files"].as_array().unwrap().len(), expected.len() + 1, "every input is counted once");
    assert_eq!(summary["quarantined_files"], expected.len());
    let records = std::fs::read_to_string(tmp.path().join("out.jsonl")).unwrap();
    assert_eq!(records.lines().count(), 1, "the good file's record is written");

    // One block per diagnostic, each starting at its code line.
    let diagnostics = stderr.split("coroner ingest:").next().unwrap();
    let blocks: Vec<String> = diagnostics.split("coroner::input::").skip(1).map(|b| format!("coroner::input::{}", b.trim_end())).collect();
    assert_eq!(blocks.len(), expected.len());
    // The giant line's diagnostic shows a small window with its real position.
    let giant = blocks.iter().find(|b| b.contains("giant-line")).unwrap();
    assert!(giant.len() < 2_000, "giant-line diagnostic is {} bytes", giant.len());
    assert!(giant.contains("giant-line.trajectory.json:1:"));

    // The rendered diagnostics of the committed fixtures are stable.
    // The list of formats tried grows with every adapter, and the help after it wraps wherever
    // the list ends; the snapshot keeps the list's place and the help on one line.
    let tried =
        regex::Regex::new(r"(?s)formats tried: .*?Name\s+one\s+with\s+--format,\s+or\s+convert\s+the\s+file\s+to\s+coroner\s+JSONL")
            .unwrap();
    let stable: Vec<String> = blocks
        .iter()
        .filter(|b| !b.contains("giant-line"))
        .map(|b| tried.replace(b, "formats tried: [...] Name one with --format, or convert the file to coroner JSONL").into_owned())
        .collect();
    assert!(blocks.iter().any(|b| b.contains("atif: no schema_version")), "the unknown-format help lists each format with its reason");
    insta::assert_snapshot!("bad_input_diagnostics", stable.join("\n\n"));
}

#[test]
fn a_missing_input_is_counted_as_lost_and_a_bad_invocation_is_a_usage_error() {
    let tmp = tempdir();
    let out = coroner_in(tmp.path(), &["ingest", "does-not-exist"]);
    assert_eq!(out.status.code(), Some(3), "a named input that is not there is an input lost, as for an unreadable file");
    let out = coroner_in(tmp.path(), &["ingest"]);
    assert_eq!(out.status.code(), Some(2), "no input argument is a usage error");
    let out = coroner_in(tmp.path(), &["ingest", "--format", "nope", "."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("known formats"));
}

#[test]
fn list_formats_names_the_versions_each_format_reads() {
    let out = coroner(&["ingest", "--list-formats"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    let header = table.lines().next().unwrap_or_default();
    assert!(header.split_whitespace().eq(["FORMAT", "ROLE", "VERSIONS", "DESCRIPTION"]), "{header}");
    let row = |name: &str| table.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_default().to_string();
    for (name, versions) in [
        ("atif", "  1.0–1.8  "),
        ("mini-swe-agent", "  1.x text actions, 2.x tool calls  "),
        ("openhands", "  V0 events  "),
        ("inspect-json", "  log version 2  "),
        ("harbor-job", "  -  "),
    ] {
        assert!(row(name).contains(versions), "{name} should list {versions:?}: {:?}", row(name));
    }
}

#[test]
fn coroners_own_registry_and_verdict_files_beside_a_run_are_skipped_not_quarantined() {
    let tmp = tempdir();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::copy(samples("registries/tau-bench-retail.registry.json"), run.join("tools.registry.json")).unwrap();
    let out = coroner_in(tmp.path(), &["classify", &samples("doubles").display().to_string(), "-q", "-o", "run/verdicts.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = coroner_in(tmp.path(), &["ingest", "run", "-q", "-o", "out.jsonl"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("1 coroner tool registry (pass it with --registry)"), "{err}");
    assert!(err.contains("1 coroner verdicts (classify output)"), "{err}");
    assert!(err.contains("ingested     0 files -> 0 trajectories\n"), "no empty per-format list: {err}");
}

#[test]
fn a_file_cut_before_anything_names_its_format_is_reported_as_truncated() {
    let tmp = tempdir();
    // A Magentic-One log cut before its first Orchestrator message: nothing says what it is.
    std::fs::write(tmp.path().join("cut.json"), "[\n  {\"role\": \"human\", \"content\": \"Find the paper and report its first au")
        .unwrap();
    let out = coroner_in(tmp.path(), &["ingest", "cut.json", "-o", "out.jsonl"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("coroner::input::truncated"), "{err}");
    assert!(err.contains("cut.json:2"), "the diagnostic points at the line where it ends: {err}");
    assert!(err.contains("cut off while being written"), "{err}");
}

/// A panic in the stage after parsing (finalize, or the caller's stage: classify) costs the
/// record it happened on, with a diagnostic naming the file, and never the run: neither for
/// files parsed in parallel batches nor for a streamed container (an Inspect `.eval` log).
#[test]
fn a_panic_after_parsing_costs_one_record_not_the_run() {
    let inputs = vec![samples("harbor"), samples("inspect/2026-03-01T10-00-00+00-00_shell-puzzles.eval")];
    let opts = coroner::ingest::IngestOptions { inputs: inputs.clone(), ..Default::default() };
    let mut all = Vec::new();
    let mut from_eval = Vec::new();
    coroner::ingest::run(&opts, &mut |t| {
        let eval = t.provenance.files.iter().any(|f| f.path.contains(".eval"));
        if eval {
            from_eval.push(t.id.to_string());
        }
        all.push(t.id.to_string());
        Ok(())
    })
    .unwrap();
    assert!(all.len() >= 4 && from_eval.len() >= 2, "enough records to lose one of each kind: {all:?}");
    // The victims: the first record of a batched file and the second of the streamed log.
    let harbor = all.iter().find(|i| !from_eval.contains(i)).cloned().unwrap();
    let inspect = from_eval[1].clone();
    let mut got = Vec::new();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let summary = coroner::ingest::run_map(
        &opts,
        &|t| {
            let id = t.id.to_string();
            assert!(id != harbor && id != inspect, "a bug in a later stage");
            id
        },
        &mut |id| {
            got.push(id);
            Ok(())
        },
    );
    std::panic::set_hook(prev);
    let summary = summary.expect("the run goes on");
    let expected: Vec<String> = all.iter().filter(|i| **i != harbor && **i != inspect).cloned().collect();
    assert_eq!(got, expected, "every other record, in the same order");
    assert_eq!(summary.quarantined_records, 2);
    assert!(summary.is_partial(), "the exit code says records were lost");
    let msgs: Vec<String> = summary.diagnostics.iter().map(|d| format!("{}: {} / {:?}", d.path, d.message, d.help)).collect();
    assert_eq!(
        msgs.iter().filter(|m| m.contains("internal error: a bug in a later stage") && m.contains("a bug in coroner")).count(),
        2,
        "{msgs:#?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("shell-puzzles.eval") && m.contains(&format!("record 1 (task {})", inspect.split('#').next().unwrap()))),
        "{msgs:#?}"
    );
}

/// Token counts are the transcript's to choose: two steps and two records of `u64::MAX` each must
/// saturate in the sums (mechanics, the report's totals), not panic (debug) or wrap (release).
#[test]
fn huge_token_counts_saturate_instead_of_overflowing() {
    let tmp = tempdir();
    let mut t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(samples("invalid/good.trajectory.json")).unwrap()).unwrap();
    let max = serde_json::json!(u64::MAX);
    for i in 1..=2 {
        t["session_id"] = format!("big-{i}").into();
        for s in t["steps"].as_array_mut().unwrap() {
            if s["source"] == "agent" {
                s["metrics"] = serde_json::json!({"prompt_tokens": max, "completion_tokens": max});
            }
        }
        t["final_metrics"] = serde_json::json!({"total_prompt_tokens": max, "total_completion_tokens": max});
        std::fs::write(tmp.path().join(format!("big-{i}.trajectory.json")), t.to_string()).unwrap();
    }
    let out = coroner_in(tmp.path(), &["report", ".", "--format", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&u64::MAX.to_string()), "the totals saturate at u64::MAX: {text}");
}
