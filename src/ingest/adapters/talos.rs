//! talos (a Rust agent harness) run records: its SQLite store and the one-line JSON summary
//! `talos run` prints.
//!
//! The store (`harness::store::SqliteRunStore`) has two tables: `events(run_id, seq, ts, kind,
//! payload)`, the append-only log, and `runs(run_id, schema_version, state_blob, updated_at)`,
//! the latest `RunRecord` snapshot. Event payloads are serde's externally tagged `Event`:
//! `ModelCall {model, prompt_tokens, completion_tokens}` after each model turn,
//! `ToolCallStarted {name, args, call_id}` / `ToolCallResult {name, is_error, summary}` around
//! every call except `finish`, `BudgetTick {consumed}`, `PhaseTransition`, and
//! `DispositionSet {disposition}` at the end. The snapshot's `messages` hold the model's text,
//! its `finish` calls and full tool outputs, but a fresh-context restart drops them; the
//! record then comes from the log alone. One record per `run_id` (`{task_id}:{attempt_n}`).
//!
//! The summary (`RunSummary` in `crates/talos/src/main.rs`) is `{outcome, disposition, run_id,
//! record_path, iterations}`, `outcome` being the loop's exit: `Finished`,
//! `StoppedWithoutFinish`, `MaxIterations`, `BudgetExhausted` (the wall-clock budget) or
//! `BackendError`. A summary beside its store refines the store's record; alone it gives a
//! record without steps.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use crate::ingest::adapters::shared::common::{tool_call, uint};
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, FileSet, Output, Sniff, Unit, file_name, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{
    Budget, CallRef, Enforcer, Outcome, OutcomeStatus, Reasoning, Role, Step, Termination, TerminationKind, TestResult, Tokens, ToolResult,
    Trajectory,
};
use crate::util::parse_time;

const STORE: &str = "talos";
const SUMMARY: &str = "talos-summary";
const HARNESS: &str = "talos";
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
/// The registry's answer to an unregistered name (`ToolRegistry::invoke`).
const UNKNOWN_TOOL: &str = "unknown tool `";

/// `{task_id}:{attempt_n}` → (task, 0-based trial).
fn split_run_id(run_id: &str) -> (String, u32) {
    match run_id.rsplit_once(':') {
        Some((task, n)) => match n.parse::<u32>() {
            Ok(n) => (task.to_string(), n.saturating_sub(1)),
            Err(_) => (run_id.to_string(), 0),
        },
        None => (run_id.to_string(), 0),
    }
}

fn to_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// The variant and body of an externally tagged serde enum value (`{"Done": {...}}`), or of a
/// unit variant written as a string (`"NoChecksConfigured"`).
fn tagged(v: &Value) -> Option<(&str, &Value)> {
    match v {
        Value::String(s) => Some((s.as_str(), &Value::Null)),
        Value::Object(o) if o.len() == 1 => o.iter().next().map(|(k, v)| (k.as_str(), v)),
        _ => None,
    }
}

/// Budgets from the snapshot: (consumed iterations, limit iterations, wall-clock limit).
#[derive(Default, Clone, Copy)]
struct Budgets {
    iterations: Option<f64>,
    iteration_limit: Option<f64>,
    wall_clock_limit: Option<f64>,
}

/// How a talos run ended, from the loop's exit (`outcome`, when the summary is at hand) and the
/// disposition the store keeps. The disposition alone tells every exit apart except by its
/// summary text (`MaxIterations` and `BudgetExhausted` are both `Failed{BudgetExhausted}`).
#[must_use]
pub fn termination_for(outcome: Option<&str>, disposition: Option<&Value>) -> Termination {
    termination_with(outcome, disposition, Budgets::default())
}

fn termination_with(outcome: Option<&str>, disposition: Option<&Value>, b: Budgets) -> Termination {
    let (variant, body) = disposition.and_then(tagged).unwrap_or(("", &Value::Null));
    let summary = body.get("summary").and_then(Value::as_str).unwrap_or("");
    let mode = body.get("mode").and_then(Value::as_str).unwrap_or("");
    let raw = match (outcome, variant) {
        (Some(o), "") => o.to_string(),
        (Some(o), v) if mode.is_empty() => format!("{o}({v})"),
        (Some(o), v) => format!("{o}({v}: {mode})"),
        (None, "") => String::new(),
        (None, v) if mode.is_empty() => v.to_string(),
        (None, v) => format!("{v}({mode})"),
    };
    let steps = || {
        let mut t = Termination::budget(Budget::Steps, Enforcer::Harness);
        t.limit = b.iteration_limit.filter(|l| *l > 0.0);
        t.consumed = b.iterations;
        t
    };
    let wall = || {
        let mut t = Termination::budget(Budget::WallTime, Enforcer::Harness);
        t.limit = b.wall_clock_limit.filter(|l| *l > 0.0);
        t
    };
    let backend = |s: &str| {
        if s.contains("ContextLengthExceeded") {
            Termination::budget(Budget::Context, Enforcer::Provider)
        } else if s.contains("Protocol") {
            // The provider answered with a shape the backend could not parse.
            Termination::of(TerminationKind::HarnessError)
        } else {
            Termination::of(TerminationKind::Infrastructure)
        }
    };
    let mut t = match (outcome, variant, mode) {
        (_, "Done", _) => Termination::of(TerminationKind::AgentFinished),
        (_, "Blocked", _) => Termination {
            detail: body.get("decision_needed").and_then(Value::as_str).map(|d| format!("blocked: {d}")),
            ..Termination::of(TerminationKind::AgentFinished)
        },
        // finish(failed): the agent gave up through the finish protocol.
        (_, "Failed", "Loop") => Termination::of(TerminationKind::AgentFinished),
        (Some("MaxIterations"), _, _) => steps(),
        (Some("BudgetExhausted"), _, _) => wall(),
        (Some("StoppedWithoutFinish"), _, _) | (_, "Failed", "StoppedWithoutFinish") => {
            Termination::of(TerminationKind::AgentStoppedWithoutFinish)
        }
        (_, "Failed", "FinishDiscipline") => Termination {
            detail: Some("the gates were green but the agent never called finish; the harness ended the run after its nudges".into()),
            ..Termination::of(TerminationKind::AgentStoppedWithoutFinish)
        },
        (_, "Failed", "BudgetExhausted") if summary.starts_with("iteration cap") => steps(),
        (_, "Failed", "BudgetExhausted") if summary.starts_with("wall-clock") => wall(),
        (_, "Failed", "BudgetExhausted") => Termination::budget(Budget::Other, Enforcer::Harness),
        (Some("BackendError"), _, _) | (_, "Failed", "TransientInfra" | "PersistentToolError") => backend(summary),
        (Some("Finished"), _, _) => Termination::of(TerminationKind::AgentFinished),
        _ => Termination::unknown(),
    };
    if t.detail.is_none() && !summary.is_empty() && variant != "Done" {
        t.detail = Some(summary.lines().next().unwrap_or("").chars().take(300).collect());
    }
    if !raw.is_empty() {
        t.raw = Some(raw);
        t.source = Some(if outcome.is_some() { "talos run summary outcome + disposition".into() } else { "DispositionSet event".into() });
    }
    t
}

/// The harness's own verdict: a `Done` it verified by running the configured checks passes;
/// `Blocked` and `Failed` say the task was not done; a `Done` accepted without checks is a
/// claim nobody verified.
fn outcome_for(disposition: Option<&Value>, gates: Option<&Value>, shown: &str) -> Outcome {
    let Some((variant, body)) = disposition.and_then(tagged) else { return Outcome::unknown() };
    let mut o = match variant {
        "Done" => match body.get("verification").and_then(tagged) {
            Some(("Checks", report)) => {
                let passed = report.get("passed").and_then(Value::as_bool).unwrap_or(false);
                let mut o = Outcome::from_reward(if passed { 1.0 } else { 0.0 }, shown, "disposition.Done.verification.Checks.passed");
                o.detail = Some("the harness re-ran its checks and accepted finish(done)".into());
                o
            }
            _ => {
                let mut o = Outcome::new(OutcomeStatus::Unknown, shown, "disposition.Done.verification");
                o.detail = Some("finish(done) accepted without checks (NoChecksConfigured): nothing verified it".into());
                o
            }
        },
        "Blocked" | "Failed" => {
            let mut o = Outcome::from_reward(0.0, shown, format!("disposition.{variant}"));
            o.detail = body.get("summary").or_else(|| body.get("decision_needed")).and_then(Value::as_str).map(ToString::to_string);
            o
        }
        _ => return Outcome::unknown(),
    };
    for (name, g) in gates.and_then(|g| g.get("gates")).and_then(Value::as_object).into_iter().flatten() {
        let ok = g.get("passed").and_then(Value::as_bool).unwrap_or(false);
        o.tests.push(TestResult { name: name.clone(), status: if ok { "passed".into() } else { "failed".into() } });
    }
    o
}

/// One row of `events`.
struct EventRow {
    ts: String,
    kind: String,
    payload: Value,
}

fn corrupt(display: &str, what: &str, e: &rusqlite::Error) -> InputError {
    InputError::new(InputErrorKind::Corrupt, display, format!("{what}: {e}"))
        .with_help("the SQLite file is damaged or not a talos run store; copy it again from the run, or check it with `sqlite3 FILE 'PRAGMA integrity_check'`")
}

/// Opens the store read-only: ingest must never write to (or journal beside) a run's record.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn open(path: &Path, display: &str) -> Result<Connection, InputError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| corrupt(display, "open the SQLite store", &e))?;
    // Opening is lazy; the first read finds a damaged header or page.
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut st| st.query_map([], |r| r.get::<_, String>(0))?.collect())
        .map_err(|e| corrupt(display, "read the SQLite schema", &e))?;
    if !tables.iter().any(|t| t == "events") {
        return Err(InputError::new(InputErrorKind::Schema, display, format!("find talos's events table (tables: {})", tables.join(", ")))
            .with_help("a talos run store has the tables events(run_id, seq, ts, kind, payload) and runs(run_id, schema_version, state_blob, updated_at)"));
    }
    Ok(conn)
}

/// Every run id of the store, in order.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn run_ids(conn: &Connection, display: &str, has_runs: bool) -> Result<Vec<String>, InputError> {
    let sql = if has_runs {
        "SELECT run_id FROM events UNION SELECT run_id FROM runs ORDER BY run_id"
    } else {
        "SELECT DISTINCT run_id FROM events ORDER BY run_id"
    };
    conn.prepare(sql)
        .and_then(|mut st| st.query_map([], |r| r.get::<_, String>(0))?.collect())
        .map_err(|e| corrupt(display, "read the run ids", &e))
}

/// A `talos run` summary line, read from its file.
#[derive(Clone)]
struct SummaryLine {
    outcome: Option<String>,
    disposition: Option<Value>,
    run_id: String,
    record_path: Option<String>,
    iterations: Option<u64>,
    file: crate::model::SourceFile,
    display: String,
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn read_summaries(path: &Path, display: &str, out: &mut Output<'_>) -> Result<Vec<SummaryLine>, InputError> {
    let src = Source::read(path, display)?;
    let text = src.text()?;
    let mut lines = Vec::new();
    let docs: Vec<(usize, usize, &str)> = if text.trim_start().starts_with('{') && serde_json::from_str::<Value>(text).is_ok() {
        vec![(1, 0, text)]
    } else {
        let mut off = 0;
        text.split_inclusive('\n')
            .enumerate()
            .map(|(i, l)| {
                let start = off;
                off += l.len();
                (i + 1, start, l)
            })
            .filter(|(_, _, l)| !l.trim().is_empty())
            .collect()
    };
    for (line, start, body) in docs {
        let v: Value = match serde_json::from_str(body.trim_end()) {
            Ok(v) => v,
            Err(e) => {
                let d = InputError::from_json(display, body.as_bytes(), "talos run summary", &e);
                let d = if start == 0 && line == 1 { d } else { d.on_line(line, start) };
                if lines.is_empty() && start == 0 {
                    return Err(d);
                }
                out.diagnostics.push(d);
                continue;
            }
        };
        let Some(run_id) = v.get("run_id").and_then(Value::as_str) else {
            out.diagnostics.push(InputError::new(InputErrorKind::Schema, display, "read a talos run summary: no run_id").at_offset(
                &src.bytes,
                start,
                "this summary",
            ));
            continue;
        };
        lines.push(SummaryLine {
            outcome: v.get("outcome").and_then(Value::as_str).map(ToString::to_string),
            disposition: v.get("disposition").cloned(),
            run_id: run_id.to_string(),
            record_path: v.get("record_path").and_then(Value::as_str).map(ToString::to_string),
            iterations: uint(v.get("iterations")),
            file: src.provenance("run_summary"),
            display: display.to_string(),
        });
    }
    Ok(lines)
}

/// talos's SQLite run store.
pub struct TalosStore;

impl Adapter for TalosStore {
    fn name(&self) -> &'static str {
        STORE
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "talos run store (SQLite: events + runs), one record per run_id"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        if !p.prefix.starts_with(SQLITE_MAGIC) {
            return Err("not a SQLite file".into());
        }
        let has = |needle: &[u8]| memchr::memmem::find(&p.prefix, needle).is_some();
        if has(b"CREATE TABLE events") && (has(b"state_blob") || has(b"payload")) {
            return marker("SQLite store with talos's events/runs tables");
        }
        if p.name == "run.sqlite" {
            return file_name("SQLite file named run.sqlite (talos's store name), schema not seen");
        }
        Err("a SQLite file without talos's events table".into())
    }

    /// Summaries `talos run` printed, saved beside the store, describe its runs.
    fn companions(&self, primary: &Path, files: &FileSet) -> Vec<PathBuf> {
        let Some(dir) = primary.parent() else { return Vec::new() };
        files
            .range(dir.to_path_buf()..)
            .take_while(|(p, _)| p.starts_with(dir))
            .filter(|(p, a)| p.parent() == Some(dir) && **a == Some(SUMMARY))
            .map(|(p, _)| p.clone())
            .collect()
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let display = &unit.primary.display;
        let bytes_meta = std::fs::metadata(&unit.primary.path).map_err(|e| crate::ingest::source::io_error(display, &e))?;
        if bytes_meta.len() == 0 {
            return Err(InputError::new(InputErrorKind::Empty, display, "read the run store: the file is empty"));
        }
        let sha = {
            let bytes = std::fs::read(&unit.primary.path).map_err(|e| crate::ingest::source::io_error(display, &e))?;
            crate::util::sha256_hex(&bytes)
        };
        let store_file = crate::model::SourceFile { path: display.clone(), sha256: sha, role: "run_store".into() };
        let conn = open(&unit.primary.path, display)?;
        let has_runs: bool = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'", [], |r| r.get::<_, i64>(0))
            .map_err(|e| corrupt(display, "read the SQLite schema", &e))?
            > 0;
        let mut summaries: Vec<SummaryLine> = Vec::new();
        for c in &unit.companions {
            match read_summaries(&c.path, &c.display, out) {
                Ok(s) => summaries.extend(s),
                Err(e) => out.diagnostics.push(e),
            }
        }
        let ids = run_ids(&conn, display, has_runs)?;
        let mut records = Vec::with_capacity(ids.len());
        for id in &ids {
            let events = read_events(&conn, display, id, out)?;
            let snapshot: Option<Value> = if has_runs {
                let blob: Option<String> = conn
                    .query_row("SELECT state_blob FROM runs WHERE run_id = ?1", [id], |r| r.get::<_, String>(0))
                    .map(Some)
                    .or_else(|e| if matches!(e, rusqlite::Error::QueryReturnedNoRows) { Ok(None) } else { Err(e) })
                    .map_err(|e| corrupt(display, &format!("read the snapshot of run {id}"), &e))?;
                match blob.map(|b| serde_json::from_str::<Value>(&b)) {
                    Some(Ok(v)) => Some(v),
                    Some(Err(e)) => {
                        out.diagnostics.push(InputError::new(
                            InputErrorKind::Schema,
                            display,
                            format!("parse the snapshot (runs.state_blob) of run {id}: {e}"),
                        ));
                        None
                    }
                    None => None,
                }
            } else {
                None
            };
            let summary = summaries.iter().find(|s| s.run_id == *id);
            records.push(record(id, &events, snapshot.as_ref(), summary, &store_file));
        }
        for t in records {
            out.emit(t);
        }
        // Summaries of runs this store does not hold still describe a run.
        for s in summaries.iter().filter(|s| !ids.contains(&s.run_id)) {
            out.emit(summary_record(s, Some(display)));
        }
        Ok(())
    }
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn read_events(conn: &Connection, display: &str, run_id: &str, out: &mut Output<'_>) -> Result<Vec<EventRow>, InputError> {
    let rows: Vec<(i64, String, String, String)> = conn
        .prepare("SELECT seq, ts, kind, payload FROM events WHERE run_id = ?1 ORDER BY seq")
        .and_then(|mut st| {
            st.query_map([run_id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?)))?
                .collect()
        })
        .map_err(|e| corrupt(display, &format!("read the events of run {run_id}"), &e))?;
    let mut events = Vec::with_capacity(rows.len());
    for (seq, ts, kind, payload) in rows {
        match serde_json::from_str::<Value>(&payload) {
            Ok(v) => {
                let body = v.get(&kind).cloned().unwrap_or(v);
                events.push(EventRow { ts, kind, payload: body });
            }
            Err(e) => out.diagnostics.push(
                InputError::new(InputErrorKind::Schema, display, format!("parse event {seq} ({kind}) of run {run_id}: {e}"))
                    .with_help("the event's payload is not JSON; the rest of the run is kept"),
            ),
        }
    }
    Ok(events)
}

fn sql_time(ts: &str) -> Option<String> {
    parse_time(&ts.replacen(' ', "T", 1)).map(|t| t.to_string())
}

fn record(
    run_id: &str,
    events: &[EventRow],
    snap: Option<&Value>,
    summary: Option<&SummaryLine>,
    store: &crate::model::SourceFile,
) -> Trajectory {
    let (task, trial) = split_run_id(run_id);
    let mut t = crate::model::Trajectory::new(task, HARNESS, STORE, 1, vec![store.clone()]);
    t.trial = trial;
    t.session_id = Some(run_id.to_string());
    t.provenance.format_version =
        Some(snap.and_then(|s| s.get("schema_version")).map_or_else(|| "talos run store".into(), |v| format!("talos run record v{v}")));
    if let Some(s) = summary {
        t.provenance.files.push(s.file.clone());
    }
    let calls: Vec<&EventRow> = events.iter().filter(|e| e.kind == "ModelCall").collect();
    t.model = calls.iter().find_map(|e| e.payload.get("model").and_then(Value::as_str)).map(ToString::to_string);
    let messages: Vec<&Value> =
        snap.and_then(|s| s.get("messages")).and_then(Value::as_array).map(|m| m.iter().collect()).unwrap_or_default();
    let assistant_msgs = messages.iter().filter(|m| tagged(m).is_some_and(|(k, _)| k == "Assistant")).count();
    if !messages.is_empty() && assistant_msgs == calls.len() {
        steps_from_messages(&mut t, &messages, &calls);
    } else {
        steps_from_events(&mut t, events);
        if !calls.is_empty() {
            t.notes.push(format!(
                "the snapshot's messages cover {assistant_msgs} of {} model turns (a fresh-context restart drops them): steps come from the event log, whose tool results keep only each tool's summary and which does not record finish calls",
                calls.len()
            ));
        }
    }
    // Usage.
    if !calls.is_empty() {
        t.usage.prompt_tokens = Some(calls.iter().filter_map(|e| uint(e.payload.get("prompt_tokens"))).sum());
        t.usage.completion_tokens = Some(calls.iter().filter_map(|e| uint(e.payload.get("completion_tokens"))).sum());
        t.usage.api_calls = Some(calls.len() as u64);
    }
    let consumed = events
        .iter()
        .rev()
        .find(|e| e.kind == "BudgetTick")
        .and_then(|e| e.payload.get("consumed"))
        .or_else(|| snap?.pointer("/budgets/consumed"));
    if let Some(c) = consumed.and_then(|c| uint(c.get("cost_micros"))).filter(|c| *c > 0) {
        #[expect(clippy::cast_precision_loss, reason = "micro-dollars of one run")]
        let usd = c as f64 / 1e6;
        t.usage.cost_usd = Some(usd);
    }
    t.started_at = events.first().and_then(|e| sql_time(&e.ts));
    t.ended_at = events.last().and_then(|e| sql_time(&e.ts));
    if let (Some(a), Some(b)) = (&t.started_at, &t.ended_at) {
        t.usage.wall_seconds = crate::util::seconds_between(a, b);
    }
    // How it ended.
    #[expect(clippy::cast_precision_loss, reason = "iteration counts")]
    let budgets = Budgets {
        iterations: consumed.and_then(|c| uint(c.get("iterations"))).map(|n| n as f64),
        iteration_limit: snap.and_then(|s| uint(s.pointer("/budgets/limits/iterations"))).map(|n| n as f64),
        wall_clock_limit: snap.and_then(|s| uint(s.pointer("/budgets/limits/wall_clock_secs"))).map(|n| n as f64),
    };
    let disposition = events
        .iter()
        .rev()
        .find(|e| e.kind == "DispositionSet")
        .and_then(|e| e.payload.get("disposition"))
        .or_else(|| snap.and_then(|s| s.get("disposition")).filter(|d| !d.is_null()))
        .or_else(|| summary.and_then(|s| s.disposition.as_ref()));
    t.termination = termination_with(summary.and_then(|s| s.outcome.as_deref()), disposition, budgets);
    if disposition.is_none() {
        let open = t.calls().filter(|(c, _)| t.result_of(*c).is_none()).count();
        t.notes.push(if open > 0 {
            format!("the run has no disposition and {open} tool call(s) have no result: it was interrupted mid-step")
        } else {
            "the run has no disposition: it was interrupted or is still running".into()
        });
    }
    t.outcome = outcome_for(disposition, snap.and_then(|s| s.get("last_gate_result")).filter(|g| !g.is_null()), &store.path);
    if let Some(title) = snap.and_then(|s| s.pointer("/task/title")).and_then(Value::as_str).filter(|s| !s.is_empty()) {
        t.notes.push(format!("task: {title}"));
    }
    if let Some(rf) = snap.and_then(|s| s.get("recovery_facts")).filter(|r| !r.is_null()) {
        let green = rf.get("gates_green_at_exit").and_then(Value::as_bool).unwrap_or(false);
        let dirty = rf.get("tree_dirty").and_then(Value::as_bool).unwrap_or(false);
        t.notes.push(format!("recovery facts: gates green at exit {green}, tree changed {dirty}"));
    }
    t
}

fn unknown_tool_sentence(output: &str) -> Option<String> {
    output.starts_with(UNKNOWN_TOOL).then(|| output.lines().next().unwrap_or("").to_string())
}

/// Steps from the snapshot's `messages`, tokens from the `ModelCall` events in the same order.
fn steps_from_messages(t: &mut Trajectory, messages: &[&Value], calls: &[&EventRow]) {
    let mut turn = 0usize;
    for m in messages {
        let Some((role, body)) = tagged(m) else { continue };
        let blocks = body.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        match role {
            "Assistant" => {
                let mut text = Vec::new();
                let mut reasoning = Vec::new();
                let mut s = Step::new(Role::Assistant, String::new());
                for b in blocks {
                    match tagged(b) {
                        Some(("Text", v)) => text.push(v.as_str().unwrap_or("").to_string()),
                        Some(("Reasoning", v)) => reasoning.push(v.get("text").and_then(Value::as_str).unwrap_or("").to_string()),
                        Some(("ToolCall", v)) => s.tool_calls.push(tool_call(
                            v.get("id").and_then(Value::as_str).map(ToString::to_string),
                            v.get("name").and_then(Value::as_str).unwrap_or(""),
                            v.get("input").unwrap_or(&Value::Null),
                        )),
                        _ => {}
                    }
                }
                s.text = text.join("\n");
                if !reasoning.is_empty() {
                    s.reasoning = Some(Reasoning { text: Some(reasoning.join("\n")), tokens: None });
                }
                if let Some(e) = calls.get(turn) {
                    s.tokens = Some(Tokens {
                        prompt: uint(e.payload.get("prompt_tokens")),
                        completion: uint(e.payload.get("completion_tokens")),
                        ..Tokens::default()
                    });
                    s.timestamp = sql_time(&e.ts);
                }
                turn += 1;
                t.steps.push(s);
            }
            "User" => {
                let mut text = Vec::new();
                let mut results = Vec::new();
                for b in blocks {
                    match tagged(b) {
                        Some(("Text", v)) => text.push(v.as_str().unwrap_or("").to_string()),
                        Some(("ToolResult", v)) => {
                            let mut r = ToolResult::new(v.get("content").and_then(Value::as_str).unwrap_or(""));
                            r.call_id = v.get("call_id").and_then(Value::as_str).map(ToString::to_string);
                            r.is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                            r.unknown_tool = unknown_tool_sentence(&r.output);
                            results.push(r);
                        }
                        _ => {}
                    }
                }
                if !results.is_empty() {
                    let mut s = Step::new(Role::Tool, String::new());
                    s.tool_results = results;
                    t.steps.push(s);
                }
                if !text.is_empty() {
                    let role = if t.steps.iter().any(|s| s.role == Role::Assistant) { Role::Environment } else { Role::User };
                    t.steps.push(Step::new(role, text.join("\n")));
                }
            }
            _ => {}
        }
    }
}

/// Steps from the event log alone.
fn steps_from_events(t: &mut Trajectory, events: &[EventRow]) {
    let mut current: Option<usize> = None;
    for e in events {
        match e.kind.as_str() {
            "ModelCall" => {
                let mut s = Step::new(Role::Assistant, String::new());
                s.tokens = Some(Tokens {
                    prompt: uint(e.payload.get("prompt_tokens")),
                    completion: uint(e.payload.get("completion_tokens")),
                    ..Tokens::default()
                });
                s.timestamp = sql_time(&e.ts);
                current = Some(t.steps.len());
                t.steps.push(s);
            }
            "ToolCallStarted" => {
                let at = match current {
                    Some(i) => i,
                    None => {
                        t.steps.push(Step::new(Role::Assistant, String::new()));
                        current = Some(t.steps.len() - 1);
                        t.steps.len() - 1
                    }
                };
                let c = tool_call(
                    e.payload.get("call_id").and_then(Value::as_str).map(ToString::to_string),
                    e.payload.get("name").and_then(Value::as_str).unwrap_or(""),
                    e.payload.get("args").unwrap_or(&Value::Null),
                );
                t.steps[at].tool_calls.push(c);
            }
            "ToolCallResult" => {
                let name = e.payload.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                let mut r = ToolResult::new(e.payload.get("summary").and_then(Value::as_str).unwrap_or(""));
                r.is_error = e.payload.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                r.unknown_tool = unknown_tool_sentence(&r.output);
                // Started and Result are written around one call, so the result answers the
                // latest call of that name still open.
                if let Some(at) = current {
                    let answered: Vec<u32> = t
                        .steps
                        .iter()
                        .flat_map(|s| &s.tool_results)
                        .filter_map(|r| r.call)
                        .filter(|c| c.step as usize == at)
                        .map(|c| c.call)
                        .collect();
                    let k = t.steps[at].tool_calls.iter().enumerate().rposition(|(k, c)| c.name == name && !answered.contains(&to_u32(k)));
                    if let Some(k) = k {
                        r.call = Some(CallRef { step: to_u32(at), call: to_u32(k) });
                        r.call_id.clone_from(&t.steps[at].tool_calls[k].id);
                    }
                }
                r.name = Some(name);
                let mut s = Step::new(Role::Tool, String::new());
                s.timestamp = sql_time(&e.ts);
                s.tool_results.push(r);
                t.steps.push(s);
            }
            _ => {}
        }
    }
}

/// A record from a summary alone.
fn summary_record(s: &SummaryLine, store: Option<&str>) -> Trajectory {
    let (task, trial) = split_run_id(&s.run_id);
    let mut t = crate::model::Trajectory::new(task, HARNESS, SUMMARY, 1, vec![s.file.clone()]);
    t.trial = trial;
    t.session_id = Some(s.run_id.clone());
    t.provenance.format_version = Some("talos run summary".into());
    t.usage.api_calls = s.iterations;
    t.termination = termination_with(s.outcome.as_deref(), s.disposition.as_ref(), Budgets::default());
    t.outcome = outcome_for(s.disposition.as_ref(), None, &s.display);
    t.notes.push(match store {
        Some(st) => format!("run {} is not in the store beside the summary ({st}): the record has no steps", s.run_id),
        None => format!(
            "no run store beside the summary (record_path {}): the record has no steps",
            s.record_path.as_deref().unwrap_or("not given")
        ),
    });
    t
}

/// The JSON line `talos run` prints, saved to a file.
pub struct TalosSummary;

impl Adapter for TalosSummary {
    fn name(&self) -> &'static str {
        SUMMARY
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "talos run summary (outcome, disposition, run_id, record_path, iterations)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shape = p.jsonl.as_ref().or(p.json.as_ref()).ok_or("not JSON")?;
        let outcome = shape.str("outcome");
        let known = matches!(outcome, Some("Finished" | "StoppedWithoutFinish" | "MaxIterations" | "BudgetExhausted" | "BackendError"));
        if known && shape.has("run_id") && shape.has("disposition") {
            return marker(format!("talos run summary (outcome {})", outcome.unwrap_or_default()));
        }
        Err("no talos outcome/run_id/disposition".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        for s in read_summaries(&unit.primary.path, &unit.primary.display, out)? {
            out.emit(summary_record(&s, None));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn run_ids_split_into_task_and_trial() {
        assert_eq!(split_run_id("task-42:1"), ("task-42".into(), 0));
        assert_eq!(split_run_id("a:b:3"), ("a:b".into(), 2));
        assert_eq!(split_run_id("talos-run"), ("talos-run".into(), 0));
    }

    #[test]
    fn every_loop_exit_has_a_termination() {
        let failed = |mode: &str, summary: &str| json!({"Failed": {"mode": mode, "summary": summary}});
        let cases = [
            (
                Some("Finished"),
                json!({"Done": {"summary": "ok", "verification": "NoChecksConfigured"}}),
                TerminationKind::AgentFinished,
                None,
            ),
            (Some("Finished"), json!({"Blocked": {"decision_needed": "which API?"}}), TerminationKind::AgentFinished, None),
            (Some("Finished"), failed("Loop", "gave up"), TerminationKind::AgentFinished, None),
            (Some("StoppedWithoutFinish"), failed("StoppedWithoutFinish", "x"), TerminationKind::AgentStoppedWithoutFinish, None),
            (
                Some("MaxIterations"),
                failed("BudgetExhausted", "iteration cap reached before the agent finished"),
                TerminationKind::Budget,
                Some(Budget::Steps),
            ),
            (
                None,
                failed("BudgetExhausted", "iteration cap reached before the agent finished"),
                TerminationKind::Budget,
                Some(Budget::Steps),
            ),
            (
                Some("BudgetExhausted"),
                failed("BudgetExhausted", "wall-clock budget exhausted"),
                TerminationKind::Budget,
                Some(Budget::WallTime),
            ),
            (None, failed("BudgetExhausted", "wall-clock budget exhausted"), TerminationKind::Budget, Some(Budget::WallTime)),
            (
                Some("BackendError"),
                failed("TransientInfra", "backend error: Transient { kind: RateLimited, retry_after: None }"),
                TerminationKind::Infrastructure,
                None,
            ),
            (
                Some("BackendError"),
                failed("PersistentToolError", "backend error: ContextLengthExceeded"),
                TerminationKind::Budget,
                Some(Budget::Context),
            ),
            (
                None,
                failed("PersistentToolError", "backend error: Protocol { message: \"bad\", raw: None }"),
                TerminationKind::HarnessError,
                None,
            ),
            (None, failed("FinishDiscipline", "gates green"), TerminationKind::AgentStoppedWithoutFinish, None),
        ];
        for (outcome, d, kind, budget) in cases {
            let t = termination_for(outcome, Some(&d));
            assert_eq!((t.kind, t.budget), (kind, budget), "{outcome:?} {d}");
            assert!(t.raw.is_some());
        }
        assert_eq!(termination_for(None, None).kind, TerminationKind::Unknown);
    }
}
