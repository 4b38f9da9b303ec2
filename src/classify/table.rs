//! Verdicts as a flat table (CSV, Parquet) and as JSONL, in the columns of
//! [`Verdict::COLUMNS`], which are coroner's documented output schema.

use std::io::Write;
use std::path::Path;

use polars::prelude::*;

use crate::model::Verdict;
use crate::util::snake;

/// One row per verdict.
///
/// # Errors
/// When polars cannot build the frame.
pub fn verdict_frame(vs: &[&Verdict]) -> PolarsResult<DataFrame> {
    let s = |f: &dyn Fn(&Verdict) -> String| vs.iter().map(|v| f(v)).collect::<Vec<String>>();
    let os = |f: &dyn Fn(&Verdict) -> Option<String>| vs.iter().map(|v| f(v)).collect::<Vec<Option<String>>>();
    let u = |f: &dyn Fn(&Verdict) -> u32| vs.iter().map(|v| f(v)).collect::<Vec<u32>>();
    let ou = |f: &dyn Fn(&Verdict) -> Option<u64>| vs.iter().map(|v| f(v)).collect::<Vec<Option<u64>>>();
    let of = |f: &dyn Fn(&Verdict) -> Option<f64>| vs.iter().map(|v| f(v)).collect::<Vec<Option<f64>>>();
    let cols = vec![
        Column::new("trajectory_id".into(), s(&|v| v.trajectory_id.clone())),
        Column::new("task_id".into(), s(&|v| v.task_id.clone())),
        Column::new("arm".into(), os(&|v| v.arm.clone())),
        Column::new("trial".into(), u(&|v| v.trial)),
        Column::new("harness".into(), s(&|v| v.harness.clone())),
        Column::new("model".into(), os(&|v| v.model.clone())),
        Column::new("outcome".into(), s(&|v| v.outcome.as_str().to_string())),
        Column::new("primary".into(), os(&|v| v.primary.clone())),
        Column::new("classes".into(), s(&|v| v.classes.join(";"))),
        Column::new("flags".into(), s(&|v| v.flags.join(";"))),
        Column::new("registry_source".into(), s(&|v| v.registry_source.clone())),
        Column::new("steps".into(), u(&|v| v.mechanics.steps)),
        Column::new("assistant_turns".into(), u(&|v| v.mechanics.assistant_turns)),
        Column::new("tool_calls".into(), u(&|v| v.mechanics.tool_calls)),
        Column::new("mutations".into(), u(&|v| v.mechanics.mutations)),
        Column::new("successful_mutations".into(), u(&|v| v.mechanics.successful_mutations)),
        Column::new("verifications".into(), u(&|v| v.mechanics.verifications)),
        Column::new("verifications_passed".into(), u(&|v| v.mechanics.verifications_passed)),
        Column::new("verifications_failed".into(), u(&|v| v.mechanics.verifications_failed)),
        Column::new("unknown_tool_calls".into(), u(&|v| v.mechanics.unknown_tool_calls)),
        Column::new("tool_errors".into(), u(&|v| v.mechanics.tool_errors)),
        Column::new("format_errors".into(), u(&|v| v.mechanics.format_errors)),
        Column::new("format_recoveries".into(), u(&|v| v.mechanics.format_recoveries)),
        Column::new("command_timeouts".into(), u(&|v| v.mechanics.command_timeouts)),
        Column::new("peak_writes".into(), u(&|v| v.mechanics.peak_writes)),
        Column::new("peak_write_file".into(), os(&|v| v.mechanics.peak_write_file.clone())),
        Column::new("longest_repeat".into(), u(&|v| v.mechanics.longest_repeat)),
        Column::new("reasoning_only_turns".into(), u(&|v| v.mechanics.reasoning_only_turns)),
        Column::new("prompt_tokens".into(), ou(&|v| v.mechanics.prompt_tokens)),
        Column::new("completion_tokens".into(), ou(&|v| v.mechanics.completion_tokens)),
        Column::new("reasoning_tokens".into(), ou(&|v| v.mechanics.reasoning_tokens)),
        Column::new("cost_usd".into(), of(&|v| v.mechanics.cost_usd)),
        Column::new("wall_seconds".into(), of(&|v| v.mechanics.wall_seconds)),
        Column::new("termination".into(), s(&|v| snake(&v.mechanics.termination))),
        Column::new("budget".into(), os(&|v| v.mechanics.budget.map(|b| snake(&b)))),
        Column::new("final_message".into(), s(&|v| snake(&v.mechanics.final_message))),
        Column::new("test_files_changed".into(), s(&|v| v.mechanics.test_files_changed.join(";"))),
        Column::new("config_files_changed".into(), s(&|v| v.mechanics.config_files_changed.join(";"))),
        Column::new(
            "evidence_steps".into(),
            s(&|v| {
                let mut steps: Vec<u32> = v.evidence.iter().flat_map(|e| e.steps.iter().copied()).collect();
                steps.sort_unstable();
                steps.dedup();
                steps.iter().map(ToString::to_string).collect::<Vec<_>>().join(";")
            }),
        ),
        Column::new("reason".into(), os(&|v| v.reason.clone())),
        Column::new("evidence".into(), s(&|v| serde_json::to_string(&v.evidence).unwrap_or_default())),
        Column::new("source".into(), os(&|v| v.source.clone())),
    ];
    debug_assert_eq!(cols.len(), Verdict::COLUMNS.len());
    DataFrame::new_infer_height(cols)
}

/// Writes verdicts by extension: `.jsonl`/`.json` (one per line), `.csv`, `.parquet`.
///
/// # Errors
/// On I/O or polars failure.
pub fn write_verdicts(path: &Path, vs: &[&Verdict]) -> std::io::Result<()> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("csv") => {
            let mut df = verdict_frame(vs).map_err(std::io::Error::other)?;
            let f = std::fs::File::create(path)?;
            CsvWriter::new(f).finish(&mut df).map_err(std::io::Error::other)
        }
        Some("parquet") => {
            let mut df = verdict_frame(vs).map_err(std::io::Error::other)?;
            let f = std::fs::File::create(path)?;
            ParquetWriter::new(f).finish(&mut df).map(|_| ()).map_err(std::io::Error::other)
        }
        _ => {
            let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
            for v in vs {
                serde_json::to_writer(&mut w, v)?;
                w.write_all(b"\n")?;
            }
            w.flush()
        }
    }
}

/// Reads verdicts written by [`write_verdicts`] as JSONL.
///
/// # Errors
/// On I/O failure or a line that is not a verdict.
pub fn read_verdicts(path: &Path) -> Result<Vec<Verdict>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1)))
        .collect()
}
