//! Inspect AI logs: the real `.json` log, `.eval` archives (deflate, zstd, a killed run), and damaged archives.

use std::io::Read;
use std::path::Path;

use coroner::ingest::adapters::inspect::eval::Limits;
use coroner::ingest::adapters::inspect::read_eval;
use coroner::ingest::format::{FileEntry, Output, Unit};
use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, CallRef, Enforcer, OutcomeStatus, Role, TerminationKind, Trajectory};

use crate::common::{corpus, ingest, samples, statuses, tempdir};

const EVAL: &str = "inspect/2026-03-01T10-00-00+00-00_shell-puzzles.eval";

fn find<'a>(ts: &'a [Trajectory], task: &str, trial: u32) -> &'a Trajectory {
    ts.iter().find(|t| t.task_id == task && t.trial == trial).unwrap_or_else(|| {
        panic!("no record for {task} trial {trial}: have {:?}", ts.iter().map(|t| (&t.task_id, t.trial)).collect::<Vec<_>>())
    })
}

#[test]
fn real_json_log_turns_calls_pairing_and_score() {
    let Some(dir) = corpus("inspect-eval-log") else { return };
    let path = dir.join("2025-05-12T20-27-36-04-00_browser.json");
    let (ts, s) = ingest(&[&path]);
    assert_eq!(ts.len(), 1);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert_eq!(s.per_adapter.get("inspect-json"), Some(&1));
    let t = &ts[0];
    assert_eq!((t.task_id.as_str(), t.trial), ("1", 0));
    assert_eq!(t.session_id.as_deref(), Some("ATYFNjyWUz4mZ5Dgj6yd4f"), "the sample uuid");
    assert_eq!(t.harness, "inspect");
    assert_eq!(t.harness_version.as_deref(), Some("0.3.95.dev16+g6527d0861"));
    assert_eq!(t.model.as_deref(), Some("openai/gpt-4o-mini"));
    assert_eq!(t.provenance.format_version.as_deref(), Some("inspect-json-v2"));
    assert!(t.notes.iter().any(|n| n.contains("task `browser`")));

    // 10 messages: the user's prompt, 5 model turns, 4 tool results.
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    use Role::{Assistant as A, Tool as T, User as U};
    assert_eq!(roles, [U, A, T, A, T, A, T, A, T, A]);
    let calls: Vec<(&str, &str)> = t.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref().unwrap())).collect();
    assert_eq!(
        calls,
        [
            ("web_browser_go", "call_35FTpd6shR9efioDgeEBZ33s"),
            ("web_browser_click", "call_O6fzXOPUvPtYflWdOH94RTWy"),
            ("web_browser_click", "call_53eNweGanOHt6jGWAo2UuNCG"),
            ("web_browser_click", "call_C0cGhnh5y5RCIBs9vTJCLgxW"),
        ]
    );
    assert_eq!(t.steps[1].tool_calls[0].arguments["url"], "https://www.aisi.gov.uk/");
    assert_eq!(t.steps[3].tool_calls[0].arguments["element_id"], 151);
    // Every call has its result, by id, in the next step; none failed.
    for (r, c) in t.calls() {
        let res = t.result_of(r).unwrap_or_else(|| panic!("{} unpaired", c.name));
        assert_eq!(res.call_id, c.id);
        assert_eq!(res.name.as_deref(), Some(c.name.as_str()));
        assert!(!res.is_error && res.unknown_tool.is_none());
    }
    assert_eq!(t.steps[2].tool_results[0].call, Some(CallRef { step: 1, call: 0 }));
    assert!(t.steps[2].tool_results[0].output.starts_with("[132] link \"We are now the AI Security Institute\""));
    assert!(t.unpaired_results.is_empty());

    // The tools offered on the model events: 8 web_browser_* tools, in the order offered.
    let declared: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(declared.len(), 8);
    assert_eq!(declared[..2], ["web_browser_go", "web_browser_click"]);
    assert_eq!(declared[7], "web_browser_refresh");
    assert_eq!(t.declared_tools.as_ref().unwrap()[0].description.as_deref(), Some("Navigate the web browser to a URL."));

    // Per-turn usage and times come from the model events; totals from model_usage.
    let tok = t.steps[1].tokens.as_ref().unwrap();
    assert_eq!((tok.prompt, tok.completion, tok.cached), (Some(1124), Some(23), None));
    assert_eq!(t.steps[9].tokens.as_ref().unwrap().completion, Some(207));
    assert_eq!(t.steps[1].timestamp.as_deref(), Some("2025-05-12T20:27:39.697159-04:00"));
    assert_eq!(t.steps[2].timestamp.as_deref(), Some("2025-05-12T20:27:39.762878-04:00"));
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens), (Some(15_235), Some(281), Some(9088)));
    assert_eq!((t.usage.wall_seconds, t.usage.api_calls), (Some(18.517), Some(5)));
    assert_eq!(t.started_at.as_deref(), Some("2025-05-12T20:27:36.997226-04:00"));

    // The final reply ended with stop_reason "stop", and no finish tool was offered: the
    // profile says the final reply is the answer.
    assert_eq!(statuses(t), [("output.choices[0].stop_reason", "stop")]);
    assert!(t.signals.errors.is_empty() && t.signals.limits.is_empty());
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.termination.source.as_deref(), Some("last agent step"));
    assert!(t.steps[9].text.starts_with("The AI Security Institute (AISI) is the premier governmental organization"));

    // Score "C" from the `includes` scorer.
    assert_eq!(t.outcome.status, OutcomeStatus::Passed);
    assert_eq!(t.outcome.reward, Some(1.0));
    assert_eq!(t.outcome.source.as_ref().unwrap().field, "scores.includes.value");
    assert!(t.submission.as_deref().unwrap().starts_with("the ai security institute (aisi)"));

    // Spans point at each message in the file.
    let bytes = std::fs::read(&path).unwrap();
    let sp = t.steps[1].source_span.unwrap();
    let text = std::str::from_utf8(&bytes[sp.offset as usize..(sp.offset + sp.len) as usize]).unwrap();
    assert!(text.starts_with('{') && text.contains("call_35FTpd6shR9efioDgeEBZ33s") && text.ends_with('}'));
    assert_eq!(sp.line, 193);
}

#[test]
fn eval_archive_samples_epochs_limits_errors_and_scores() {
    let path = samples(EVAL);
    let (ts, s) = ingest(&[&path]);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert!(matches!(s.files[0].status, FileStatus::Ingested { adapter: "inspect-eval", trajectories: 6 }));
    // Records of an .eval are streamed to the output one by one, finalized as they go, in
    // member order.
    let order: Vec<(&str, u32)> = ts.iter().map(|t| (t.task_id.as_str(), t.trial)).collect();
    assert_eq!(order, [("count-lines", 0), ("count-lines", 1), ("find-flag", 0), ("find-flag", 1), ("3", 0), ("3", 1)]);
    let ids: std::collections::BTreeSet<&str> = ts.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), 6);
    assert!(ts.iter().all(|t| t.arm.as_deref() == Some("inspect/anthropic/claude-3-5-haiku-20241022")));
    for t in &ts {
        assert_eq!(t.model.as_deref(), Some("anthropic/claude-3-5-haiku-20241022"));
        assert_eq!(t.harness_version.as_deref(), Some("0.3.130"));
        assert_eq!(t.provenance.files.len(), 2);
        assert_eq!(t.provenance.files[1].role, "sample");
        let tools: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
        assert_eq!(tools, ["bash", "python", "submit"]);
    }

    // Solved: bash then submit; two scorers, the first decides.
    let ok = find(&ts, "count-lines", 0);
    assert_eq!(ok.session_id.as_deref(), Some("uuid-count-lines-1"));
    assert!(ok.provenance.files[1].path.ends_with(".eval!samples/count-lines_epoch_1.json"));
    assert_eq!(ok.calls().map(|(_, c)| c.name.as_str()).collect::<Vec<_>>(), ["bash", "submit"]);
    assert_eq!(ok.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(ok.termination.raw.as_deref(), Some("tool:submit"));
    assert_eq!(ok.outcome.status, OutcomeStatus::Passed);
    assert_eq!(ok.outcome.source.as_ref().unwrap().field, "scores.match.value");
    assert_eq!(ok.outcome.tests.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["match", "model_graded_fact"]);
    assert_eq!(ok.submission.as_deref(), Some("42"));
    assert_eq!(ok.steps[2].tokens.as_ref().unwrap().prompt, Some(900));
    // A span points into the decompressed member.
    let member = member_bytes(&path, "samples/count-lines_epoch_1.json");
    let sp = ok.steps[2].source_span.unwrap();
    assert_eq!(sp.file, 1);
    let text = std::str::from_utf8(&member[sp.offset as usize..(sp.offset + sp.len) as usize]).unwrap();
    assert!(text.contains("\"toolu_01\"") && text.contains("wc -l /data/log.txt"));

    // Arguments that did not parse: kept raw, the reply is a format error, the result an error.
    let bad = find(&ts, "count-lines", 1);
    let call = &bad.steps[2].tool_calls[0];
    assert!(call.arguments.is_null());
    assert_eq!(call.raw_arguments.as_deref(), Some("{\"cmd\": \"wc -l /data/log.txt"));
    assert!(bad.steps[2].format_error.as_deref().unwrap().starts_with("Error parsing the following tool call arguments:"));
    let r = &bad.steps[3].tool_results[0];
    assert!(r.is_error && r.unknown_tool.is_none());
    assert_eq!(r.call, Some(CallRef { step: 2, call: 0 }));
    // ... then a reply cut by the output limit.
    assert_eq!((bad.termination.budget, bad.termination.enforced_by), (Some(Budget::OutputTokens), Some(Enforcer::Provider)));
    assert_eq!(bad.termination.raw.as_deref(), Some("max_tokens"));
    assert_eq!(bad.termination.source.as_deref(), Some("output.choices[0].stop_reason"));
    assert_eq!(bad.termination.rule.as_deref(), Some("stop-reason-max-tokens"));
    assert_eq!(r.error_type.as_deref(), Some("parsing"));
    assert_eq!(bad.outcome.status, OutcomeStatus::Failed);

    // The message limit (12) ended the first epoch of find-flag.
    let lim = find(&ts, "find-flag", 0);
    assert_eq!((lim.termination.kind, lim.termination.budget), (TerminationKind::Budget, Some(Budget::Steps)));
    assert_eq!((lim.termination.limit, lim.termination.consumed), (Some(12.0), Some(12.0)));
    assert_eq!(lim.termination.raw.as_deref(), Some("message"));
    assert_eq!(lim.termination.source.as_deref(), Some("sample.limit"));
    assert_eq!(lim.termination.rule.as_deref(), Some("inspect-limit-steps"));
    assert_eq!((lim.signals.limits.steps, lim.signals.consumed.steps), (Some(12.0), Some(12.0)));
    // The status points at the limit's bytes in the sample member.
    let sp = lim.signals.statuses[0].span.unwrap();
    let member = member_bytes(&path, "samples/find-flag_epoch_1.json");
    assert_eq!(&member[sp.offset as usize..(sp.offset + sp.len) as usize], br#"{"type":"message","limit":12}"#);
    assert_eq!(lim.steps.len(), 12);
    assert_eq!(lim.outcome.status, OutcomeStatus::Failed);

    // A tool the model was not given: Inspect rejects it as "Tool browse not found".
    let unk = find(&ts, "find-flag", 1);
    let rejected = unk.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.unknown_tool.is_some()).unwrap();
    assert_eq!(rejected.unknown_tool.as_deref(), Some("Tool browse not found"));
    assert!(rejected.is_error);
    assert_eq!(rejected.error_type.as_deref(), Some("parsing"));
    let c = rejected.call.unwrap();
    assert_eq!(unk.steps[c.step as usize].tool_calls[c.call as usize].name, "browse");
    // A dict score: two metrics pass, one is partial.
    assert_eq!(unk.outcome.status, OutcomeStatus::Partial);
    assert!((unk.outcome.reward.unwrap() - 2.5 / 3.0).abs() < 1e-9);
    assert_eq!(unk.outcome.tests.len(), 3);
    assert_eq!(unk.termination.raw.as_deref(), Some("tool:submit"));

    // A numeric sample id, a token limit and a numeric score.
    let tok = find(&ts, "3", 0);
    assert_eq!(tok.termination.budget, Some(Budget::Tokens));
    assert_eq!((tok.termination.limit, tok.termination.consumed), (Some(4000.0), Some(4140.0)));
    assert_eq!(tok.termination.rule.as_deref(), Some("inspect-limit-tokens"));
    assert_eq!((tok.outcome.status, tok.outcome.reward), (OutcomeStatus::Partial, Some(0.75)));
    assert_eq!(tok.outcome.source.as_ref().unwrap().field, "scores.rubric.value");

    // The provider failed: infrastructure, and no verdict.
    let err = find(&ts, "3", 1);
    assert_eq!(err.termination.kind, TerminationKind::Infrastructure);
    assert!(err.termination.raw.as_deref().unwrap().starts_with("RateLimitError: Error code: 429"));
    assert_eq!(err.termination.source.as_deref(), Some("sample.error"));
    assert_eq!(err.termination.rule.as_deref(), Some("provider-rate-limit"));
    assert_eq!(err.outcome.status, OutcomeStatus::Unknown);
}

fn member_bytes(archive: &Path, name: &str) -> Vec<u8> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(archive).unwrap()).unwrap();
    let mut out = Vec::new();
    z.by_name(name).unwrap().read_to_end(&mut out).unwrap();
    out
}

#[test]
fn zstd_members_and_a_killed_run_are_read() {
    let (ts, s) = ingest(&[&samples("inspect/2026-04-10T09-00-00+00-00_shell-puzzles-zstd.eval")]);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].outcome.status, OutcomeStatus::Passed);
    assert_eq!(ts[0].steps.len(), 6);

    // No header.json: the journal's start record gives the eval facts, and each record says so.
    let (ts, s) = ingest(&[&samples("inspect/2026-03-01T11-00-00+00-00_shell-puzzles-killed.eval")]);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert_eq!(ts.len(), 2);
    assert!(ts.iter().all(|t| t.model.as_deref() == Some("anthropic/claude-3-5-haiku-20241022")));
    assert!(ts.iter().all(|t| t.notes.iter().any(|n| n.contains("_journal/start.json"))));
}

#[test]
fn damaged_archives_keep_their_good_members() {
    // No header and no journal: samples are still read, with a note, and the gap is reported.
    let (ts, s) = ingest(&[&samples("inspect/invalid/no-header.eval")]);
    assert_eq!(ts.len(), 2);
    assert_eq!(s.quarantined_records, 1);
    let d = &s.diagnostics[0];
    assert_eq!(d.kind, InputErrorKind::Schema);
    assert!(d.path.ends_with("invalid/no-header.eval"));
    assert!(d.message.contains("header.json"));
    assert!(ts.iter().all(|t| t.notes.iter().any(|n| n.contains("no readable header"))));
    assert_eq!(ts[0].model.as_deref(), Some("anthropic/claude-3-5-haiku-20241022"), "from the sample's model_usage");

    // One damaged member: reported by name; the other two samples are ingested.
    let (ts, s) = ingest(&[&samples("inspect/invalid/corrupt-member.eval")]);
    assert_eq!(ts.iter().map(|t| (t.task_id.as_str(), t.trial)).collect::<Vec<_>>(), [("count-lines", 0), ("find-flag", 0)]);
    assert_eq!(s.diagnostics.len(), 1, "{:?}", s.diagnostics);
    assert_eq!(s.diagnostics[0].kind, InputErrorKind::Corrupt);
    assert!(s.diagnostics[0].path.ends_with("corrupt-member.eval!samples/count-lines_epoch_2.json"));
    assert!(matches!(s.files[0].status, FileStatus::Ingested { trajectories: 2, .. }));
    // An id counts its member's place among the samples (third here), so a damaged member
    // before it, which yields no record, does not change it.
    assert_eq!(ts[1].id, coroner::model::trajectory_id("find-flag", "corrupt-member.eval", 2));

    // A header that decompresses past the 64 MiB bound is refused unread; the sample is kept.
    let (ts, s) = ingest(&[&samples("inspect/invalid/oversized-header.eval")]);
    assert_eq!(ts.len(), 1);
    assert_eq!(s.diagnostics.len(), 1);
    assert_eq!(s.diagnostics[0].kind, InputErrorKind::TooLarge);
    assert!(s.diagnostics[0].path.ends_with("oversized-header.eval!header.json"));
    assert!(s.diagnostics[0].message.contains("over the 67108864 byte bound"));
}

#[test]
fn members_over_a_configured_bound_are_refused_and_the_rest_read() {
    let path = samples(EVAL);
    let sizes: Vec<(String, u64)> = {
        let mut z = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
        let mut v = Vec::new();
        for i in 0..z.len() {
            let m = z.by_index_raw(i).unwrap();
            if m.name().starts_with("samples/") {
                v.push((m.name().to_string(), m.size()));
            }
        }
        v
    };
    let bound = 6000;
    let over = sizes.iter().filter(|(_, n)| *n > bound).count();
    assert!(over > 0 && over < sizes.len(), "the bound splits the samples: {sizes:?}");
    let unit = Unit { primary: FileEntry { path: path.clone(), display: "x.eval".into(), rel: "x.eval".into() }, companions: Vec::new() };
    let mut got = Vec::new();
    let mut sink = |t| got.push(t);
    let mut out = Output::new(&mut sink);
    read_eval(&unit, Limits { header: Limits::DEFAULT.header, member: bound }, "inspect-eval", &mut out).unwrap();
    let diags = std::mem::take(&mut out.diagnostics);
    drop(out);
    assert_eq!(got.len(), sizes.len() - over);
    assert_eq!(diags.len(), over);
    assert!(diags.iter().all(|d| d.kind == InputErrorKind::TooLarge && d.message.contains("over the 6000 byte bound")));
}

#[test]
fn broken_logs_are_quarantined_with_a_position() {
    let tmp = tempdir();
    // Not a ZIP at all, despite its name.
    let fake = tmp.path().join("fake.eval");
    std::fs::write(&fake, "this is not an archive\n").unwrap();
    // A .json log cut off mid-sample.
    let cut = tmp.path().join("cut.json");
    let mut body = br#"{"version": 2, "status": "success", "eval": {"run_id": "r", "created": "2026-03-01T10:00:00+00:00", "task": "t", "model": "m", "dataset": {}, "config": {}},
"samples": [{"id": 1, "epoch": 1, "messages": [{"role": "user", "content": "hi"}"#
        .to_vec();
    body.push(b'\n');
    std::fs::write(&cut, body).unwrap();
    let (ts, s) = ingest(&[&fake, &cut]);
    assert!(ts.is_empty());
    let kinds: Vec<(String, InputErrorKind, Option<usize>)> =
        s.diagnostics.iter().map(|d| (d.path.rsplit('/').next().unwrap().to_string(), d.kind, d.line)).collect();
    assert!(kinds.contains(&("fake.eval".into(), InputErrorKind::Corrupt, None)), "{kinds:?}");
    assert!(kinds.contains(&("cut.json".into(), InputErrorKind::Truncated, Some(3))), "{kinds:?}");
    assert_eq!(s.quarantined_files(), 2);
}

#[test]
fn damaged_archive_diagnostics_render_stably() {
    let names = ["inspect/invalid/no-header.eval", "inspect/invalid/corrupt-member.eval", "inspect/invalid/oversized-header.eval"];
    // Relative to the package root (the tests' working directory), so the wrapping of the
    // rendered paths does not depend on where the checkout lives.
    let paths: Vec<std::path::PathBuf> = names.iter().map(|n| Path::new("samples").join(n)).collect();
    let refs: Vec<&Path> = paths.iter().map(std::path::PathBuf::as_path).collect();
    let (_, s) = ingest(&refs);
    let rendered: Vec<String> = s.diagnostics.iter().map(|d| coroner::ingest::diag::render_plain(d)).collect();
    assert_eq!(rendered.len(), 3);
    insta::assert_snapshot!("inspect_damaged_archives", rendered.join("\n"));
}

#[test]
fn a_json_log_whose_sample_ids_outgrow_the_probe_is_still_recognized() {
    let tmp = tempdir();
    // Inspect writes `eval.dataset` (with every sample id) before `eval.model`.
    let ids: Vec<String> = (0..20_000).map(|i| format!("\"task-{i:05}\"")).collect();
    let body = format!(
        r#"{{"version": 2, "status": "success", "eval": {{"run_id": "r", "created": "2026-03-01T10:00:00+00:00", "task": "t", "dataset": {{"samples": 20000, "sample_ids": [{}]}}, "model": "m", "config": {{}}}},
"samples": [{{"id": "task-00000", "epoch": 1, "messages": [{{"role": "user", "content": "hi"}}, {{"role": "assistant", "content": "done"}}], "scores": {{"s": {{"value": "C"}}}}}}]}}"#,
        ids.join(", ")
    );
    assert!(body.len() > 64 * 1024, "the header alone is longer than the probe");
    let p = tmp.path().join("big-header.json");
    std::fs::write(&p, body).unwrap();
    let (ts, s) = ingest(&[&p]);
    assert_eq!(s.per_adapter.get("inspect-json"), Some(&1), "{:?}", s.diagnostics);
    assert_eq!(ts[0].model.as_deref(), Some("m"));
    assert_eq!(ts[0].outcome.status, coroner::model::OutcomeStatus::Passed);
}

#[test]
fn a_json_log_records_submissions_working_limits_and_timeouts() {
    let tmp = tempdir();
    let call = |id: &str, answer: &str| {
        format!(
            r#"{{"role": "assistant", "content": "", "tool_calls": [{{"id": "{id}", "function": "submit", "arguments": {{"answer": "{answer}"}}}}]}},
    {{"role": "tool", "content": "{answer}", "tool_call_id": "{id}", "function": "submit"}},
    {{"role": "user", "content": "Your submission was incorrect. Please proceed and attempt to find the correct answer."}}"#
        )
    };
    // basic_agent with three submissions allowed: all three used, each wrong.
    let used_up = format!(
        r#"{{"id": "guess", "epoch": 1, "messages": [{{"role": "user", "content": "guess"}}, {}, {}, {}],
  "scores": {{"match": {{"value": "I"}}}}}}"#,
        call("c1", "1"),
        call("c2", "2"),
        call("c3", "3")
    );
    let unscored = format!(
        r#"{{"id": "unscored", "epoch": 1, "messages": [{{"role": "user", "content": "guess"}}, {}, {}, {}]}}"#,
        call("u1", "1"),
        call("u2", "2"),
        call("u3", "3")
    );
    let working = r#"{"id": "slow", "epoch": 1, "messages": [{"role": "user", "content": "go"}], "working_time": 61.5, "total_time": 300.0,
  "limit": {"type": "working", "limit": 60}, "scores": {"match": {"value": "I"}}}"#;
    let timeout = r#"{"id": "stuck", "epoch": 1, "messages": [{"role": "user", "content": "go"}],
  "error": {"message": "TimeoutError: sandbox exec timed out", "traceback": ""}}"#;
    let body = format!(
        r#"{{"version": 2, "status": "success", "eval": {{"run_id": "r", "created": "2026-03-01T10:00:00+00:00", "task": "t", "model": "m", "dataset": {{}}, "config": {{}}}},
 "plan": {{"name": "plan", "steps": [{{"solver": "basic_agent", "params": {{"max_attempts": 3}}}}], "config": {{}}}},
 "samples": [{used_up}, {unscored}, {working}, {timeout}]}}"#
    );
    let p = tmp.path().join("attempts.json");
    std::fs::write(&p, body).unwrap();
    let (ts, s) = ingest(&[&p]);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);

    // The submission limit and the answers taken are recorded for the interpretation.
    let g = find(&ts, "guess", 0);
    assert_eq!((g.signals.limits.attempts, g.signals.consumed.attempts), (Some(3.0), Some(3.0)));
    assert_eq!(g.termination.raw.as_deref(), Some("tool:submit"));
    // Three answers of three, the last wrong: the answer limit ended the run (DESIGN.md). The same
    // answers with no score say nothing of the last one: not a budget.
    let unscored = find(&ts, "unscored", 0);
    assert_eq!(unscored.termination.kind, TerminationKind::AgentFinished, "{:?}", unscored.termination);
    assert_eq!((g.termination.kind, g.termination.budget), (TerminationKind::Budget, Some(Budget::Attempts)));
    assert_eq!((g.termination.limit, g.termination.consumed), (Some(3.0), Some(3.0)));

    // Working time, not the clock: the limit and what was used of it.
    let w = find(&ts, "slow", 0);
    assert_eq!((w.termination.budget, w.termination.enforced_by), (Some(Budget::WallTime), Some(Enforcer::Harness)));
    assert_eq!((w.termination.limit, w.termination.consumed), (Some(60.0), Some(61.5)));
    assert!(w.termination.detail.as_deref().unwrap().contains("working"));

    // A timeout that escaped as the sample's error is the environment's, not a budget.
    let e = find(&ts, "stuck", 0);
    assert_eq!((e.termination.kind, e.termination.rule.as_deref()), (TerminationKind::Infrastructure, Some("inspect-error-timeout")));
    let sp = e.signals.errors[0].span.unwrap();
    assert_eq!(&std::fs::read(&p).unwrap()[sp.offset as usize..(sp.offset + sp.len) as usize], b"TimeoutError: sandbox exec timed out");
}

/// A solver's own loop cap (`max_steps` among its plan arguments, ControlArena's control loop)
/// stops a sample with no sample limit, event or error: the run that took as many turns as the
/// cap and ended on a tool result ran out of steps; one that ended on its own reply before the
/// cap did not (real shape: ControlArena bash runs of inspect-evals-log-viewer, n=395-404).
#[test]
fn a_solvers_step_cap_reached_with_no_recorded_end_is_the_steps_budget() {
    let tmp = tempdir();
    let turn = |i: usize| {
        format!(
            r#"{{"role": "assistant", "content": "", "tool_calls": [{{"id": "c{i}", "function": "bash", "arguments": {{"cmd": "make test"}}}}]}},
    {{"role": "tool", "content": "FAILED", "tool_call_id": "c{i}", "function": "bash"}}"#
        )
    };
    let capped = format!(
        r#"{{"id": "capped", "epoch": 1, "messages": [{{"role": "user", "content": "fix it"}}, {}, {}, {}], "scores": {{"main_task_correctness": {{"value": "I"}}}}}}"#,
        turn(1),
        turn(2),
        turn(3)
    );
    let early = format!(
        r#"{{"id": "early", "epoch": 1, "messages": [{{"role": "user", "content": "fix it"}}, {}, {{"role": "assistant", "content": "I could not fix it."}}], "scores": {{"main_task_correctness": {{"value": "I"}}}}}}"#,
        turn(1)
    );
    let body = format!(
        r#"{{"version": 2, "status": "success", "eval": {{"run_id": "r", "created": "2026-03-01T10:00:00+00:00", "task": "bash_task", "model": "m", "dataset": {{}}, "config": {{}}}},
 "plan": {{"name": "plan", "steps": [{{"solver": "control_arena/control_loop", "params": {{"protocol": "SimpleProtocol", "max_steps": 3}}}}], "config": {{}}}},
 "samples": [{capped}, {early}]}}"#
    );
    let p = tmp.path().join("capped.json");
    std::fs::write(&p, body).unwrap();
    let (ts, s) = ingest(&[&p]);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    let c = find(&ts, "capped", 0);
    assert_eq!((c.signals.limits.steps, c.signals.consumed.steps), (Some(3.0), Some(3.0)));
    assert_eq!((c.termination.kind, c.termination.budget), (TerminationKind::Budget, Some(Budget::Steps)));
    assert_eq!(c.termination.rule.as_deref(), Some(coroner::model::STEPS_RAN_OUT));
    let e = find(&ts, "early", 0);
    assert_ne!(e.termination.kind, TerminationKind::Budget, "an end of its own before the cap");
}
