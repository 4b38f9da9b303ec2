//! The summary line `talos run` prints (`RunSummary`: `{outcome, disposition, run_id,
//! record_path, iterations}`), saved to a file: beside its store it refines that run's record;
//! alone it gives a record without steps.

use std::path::Path;

use serde_json::Value;

use super::{HARNESS, end_signals, outcome_for, split_run_id};
use crate::ingest::adapters::shared::common::uint;
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::Trajectory;

pub(super) const SUMMARY: &str = "talos-summary";

/// A `talos run` summary line, read from its file.
#[derive(Clone)]
pub(super) struct SummaryLine {
    pub(super) outcome: Option<String>,
    pub(super) disposition: Option<Value>,
    pub(super) run_id: String,
    pub(super) record_path: Option<String>,
    pub(super) iterations: Option<u64>,
    pub(super) file: crate::model::SourceFile,
    pub(super) display: String,
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub(super) fn read_summaries(path: &Path, display: &str, out: &mut Output<'_>) -> Result<Vec<SummaryLine>, InputError> {
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

/// A record from a summary alone.
pub(super) fn summary_record(s: &SummaryLine, store: Option<&str>) -> Trajectory {
    let (task, trial) = split_run_id(&s.run_id);
    let mut t = Trajectory::new(task, HARNESS, SUMMARY, 1, vec![s.file.clone()]);
    t.trial = trial;
    t.session_id = Some(s.run_id.clone());
    t.provenance.format_version = Some("talos run summary".into());
    t.usage.api_calls = s.iterations;
    #[expect(clippy::cast_precision_loss, reason = "model turns of one run")]
    {
        t.signals.consumed.steps = s.iterations.map(|n| n as f64);
    }
    end_signals(&mut t, s.outcome.as_deref(), s.disposition.as_ref().map(|d| ("summary.disposition", d)));
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

    fn versions(&self) -> &'static str {
        "RunSummary line of `talos run`"
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
