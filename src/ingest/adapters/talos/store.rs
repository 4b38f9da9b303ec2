//! talos's SQLite run store: `events(run_id, seq, ts, kind, payload)` and `runs(run_id,
//! schema_version, state_blob, updated_at)`, opened read-only, one record per `run_id`.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use super::steps::{steps_from_events, steps_from_messages};
use super::summary::{SUMMARY, SummaryLine, read_summaries, summary_record};
use super::{HARNESS, amounts, end_signals, outcome_for, split_run_id, tagged};
use crate::ingest::adapters::shared::build::StepBuilder;
use crate::ingest::adapters::shared::common::uint;
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, FileSet, Output, Sniff, Unit, file_name, marker};
use crate::ingest::probe::Probe;
use crate::model::Trajectory;
use crate::util::parse_time;

const STORE: &str = "talos";
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// One row of `events`.
pub(super) struct EventRow {
    pub(super) ts: String,
    pub(super) kind: String,
    pub(super) payload: Value,
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

    /// `runs.schema_version` is recorded, not checked; the samples, written from talos's source, are 2.
    fn versions(&self) -> &'static str {
        "SqliteRunStore, RunRecord schema 2"
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

pub(super) fn sql_time(ts: &str) -> Option<String> {
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
    let mut t = Trajectory::new(task, HARNESS, STORE, 1, vec![store.clone()]);
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
    let mut b = StepBuilder::new();
    if !messages.is_empty() && assistant_msgs == calls.len() {
        steps_from_messages(&mut b, &messages, &calls);
    } else {
        steps_from_events(&mut b, events);
        if !calls.is_empty() {
            b.note(format!(
                "the snapshot's messages cover {assistant_msgs} of {} model turns (a fresh-context restart drops them): steps come from the event log, whose tool results keep only each tool's summary and which does not record finish calls",
                calls.len()
            ));
        }
    }
    b.finish(&mut t);
    // Usage.
    if !calls.is_empty() {
        t.usage.prompt_tokens = Some(crate::util::sat_sum(calls.iter().filter_map(|e| uint(e.payload.get("prompt_tokens")))));
        t.usage.completion_tokens = Some(crate::util::sat_sum(calls.iter().filter_map(|e| uint(e.payload.get("completion_tokens")))));
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
    if let Some(l) = snap.and_then(|s| s.pointer("/budgets/limits")) {
        t.signals.limits = amounts(l);
    }
    t.signals.consumed = consumed.map(amounts).unwrap_or_default();
    if t.signals.consumed.steps.is_none() {
        #[expect(clippy::cast_precision_loss, reason = "model turns of one run")]
        {
            t.signals.consumed.steps = summary.and_then(|s| s.iterations).map(|n| n as f64);
        }
    }
    let disposition = events
        .iter()
        .rev()
        .find(|e| e.kind == "DispositionSet")
        .and_then(|e| Some(("events.DispositionSet.disposition", e.payload.get("disposition")?)))
        .or_else(|| Some(("runs.state_blob.disposition", snap?.get("disposition").filter(|d| !d.is_null())?)))
        .or_else(|| Some(("summary.disposition", summary?.disposition.as_ref()?)));
    end_signals(&mut t, summary.and_then(|s| s.outcome.as_deref()), disposition);
    let disposition = disposition.map(|(_, d)| d);
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
