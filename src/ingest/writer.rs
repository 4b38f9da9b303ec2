//! Writes normalized trajectories as JSONL (lossless) or Parquet (one row per trajectory:
//! summary columns for analysis plus the full record as JSON, so nothing is lost).
//!
//! Both stream: JSONL line by line, Parquet in row groups of [`PARQUET_BATCH`] records, so
//! memory holds one batch, not the run.

use crate::util::snake;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use polars::prelude::*;

use crate::model::{Trajectory, unanswered_calls};

pub const PARQUET_BATCH: usize = 2048;

/// The Parquet output's state: the writer once the schema is known, the file until then, and
/// the rows of the batch being filled.
pub struct ParquetState {
    writer: Option<polars::io::parquet::write::BatchedWriter<File>>,
    file: Option<File>,
    rows: Vec<Trajectory>,
}

/// Where `ingest` writes.
pub enum TrajectoryWriter {
    Jsonl(BufWriter<Box<dyn Write + Send>>),
    /// Boxed: the batched Parquet writer is large and there is one writer per run.
    Parquet(Box<ParquetState>),
}

impl TrajectoryWriter {
    /// Picks the format from the extension; `-` or no path writes JSONL to stdout.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create(path: Option<&Path>) -> std::io::Result<Self> {
        match path {
            None => Ok(Self::Jsonl(BufWriter::new(Box::new(std::io::stdout())))),
            Some(p) if p.as_os_str() == "-" => Ok(Self::Jsonl(BufWriter::new(Box::new(std::io::stdout())))),
            Some(p) if p.extension().is_some_and(|e| e == "parquet") => {
                Ok(Self::Parquet(Box::new(ParquetState { writer: None, file: Some(File::create(p)?), rows: Vec::new() })))
            }
            Some(p) => Ok(Self::Jsonl(BufWriter::new(Box::new(File::create(p)?)))),
        }
    }

    /// Whether records go out as JSON lines (which callers may serialize ahead, in parallel,
    /// and hand over with [`Self::write_line`]).
    #[must_use]
    pub fn is_jsonl(&self) -> bool {
        matches!(self, Self::Jsonl(_))
    }

    /// JSON lines to `w` (the CLI's stdout, which sanitizes what passes).
    #[must_use]
    pub fn jsonl(w: Box<dyn Write + Send>) -> Self {
        Self::Jsonl(BufWriter::new(w))
    }

    /// Writes one record already serialized as JSON, without its newline.
    ///
    /// # Errors
    /// On write failure, or when the output is not JSONL.
    pub fn write_line(&mut self, json: &[u8]) -> std::io::Result<()> {
        match self {
            Self::Jsonl(w) => {
                w.write_all(json)?;
                w.write_all(b"\n")
            }
            Self::Parquet { .. } => Err(std::io::Error::other("a serialized record cannot go to Parquet")),
        }
    }

    /// # Errors
    /// On write failure.
    pub fn write(&mut self, t: Trajectory) -> std::io::Result<()> {
        match self {
            Self::Jsonl(w) => {
                serde_json::to_writer(&mut *w, &t)?;
                w.write_all(b"\n")
            }
            Self::Parquet(state) => {
                state.rows.push(t);
                if state.rows.len() >= PARQUET_BATCH {
                    self.flush_batch()?;
                }
                Ok(())
            }
        }
    }

    fn flush_batch(&mut self) -> std::io::Result<()> {
        let Self::Parquet(state) = self else { return Ok(()) };
        let ParquetState { writer, file, rows } = &mut **state;
        if rows.is_empty() && writer.is_some() {
            return Ok(());
        }
        let mut df = summary_frame(rows).map_err(std::io::Error::other)?;
        rows.clear();
        if writer.is_none() {
            let f = file.take().ok_or_else(|| std::io::Error::other("parquet file already closed"))?;
            *writer = Some(ParquetWriter::new(f).batched(df.schema()).map_err(std::io::Error::other)?);
        }
        if let Some(w) = writer.as_mut() {
            df.rechunk_mut();
            w.write_batch(&df).map_err(std::io::Error::other)?;
        }
        Ok(())
    }

    /// Flushes and closes.
    ///
    /// # Errors
    /// On write failure.
    pub fn finish(mut self) -> std::io::Result<()> {
        match &mut self {
            Self::Jsonl(w) => match w.flush() {
                // A closed pipe (`| head`) is success.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r,
            },
            Self::Parquet(_) => {
                self.flush_batch()?;
                if let Self::Parquet(state) = &self
                    && let Some(w) = &state.writer
                {
                    w.finish().map_err(std::io::Error::other)?;
                }
                Ok(())
            }
        }
    }
}

/// One row per trajectory; the column names are part of coroner's documented output schema.
///
/// # Errors
/// When polars cannot build the frame (it cannot, for well-formed records).
pub fn summary_frame(rows: &[Trajectory]) -> PolarsResult<DataFrame> {
    let s = |f: &dyn Fn(&Trajectory) -> String| rows.iter().map(f).collect::<Vec<String>>();
    let os = |f: &dyn Fn(&Trajectory) -> Option<String>| rows.iter().map(f).collect::<Vec<Option<String>>>();
    let u = |f: &dyn Fn(&Trajectory) -> Option<u64>| rows.iter().map(f).collect::<Vec<Option<u64>>>();
    let fl = |f: &dyn Fn(&Trajectory) -> Option<f64>| rows.iter().map(f).collect::<Vec<Option<f64>>>();
    DataFrame::new_infer_height(vec![
        Column::new("id".into(), s(&|t| t.id.clone())),
        Column::new("task_id".into(), s(&|t| t.task_id.clone())),
        Column::new("arm".into(), os(&|t| t.arm.clone())),
        Column::new("trial".into(), rows.iter().map(|t| t.trial).collect::<Vec<u32>>()),
        Column::new("harness".into(), s(&|t| t.harness.clone())),
        Column::new("harness_version".into(), os(&|t| t.harness_version.clone())),
        Column::new("model".into(), os(&|t| t.model.clone())),
        Column::new("n_steps".into(), rows.iter().map(|t| t.steps.len() as u64).collect::<Vec<u64>>()),
        Column::new("n_tool_calls".into(), rows.iter().map(|t| t.calls().count() as u64).collect::<Vec<u64>>()),
        Column::new("n_unpaired_calls".into(), rows.iter().map(|t| unanswered_calls(t).len() as u64).collect::<Vec<u64>>()),
        Column::new("n_unpaired_results".into(), rows.iter().map(|t| t.unpaired_results.len() as u64).collect::<Vec<u64>>()),
        Column::new("termination".into(), s(&|t| snake(&t.termination.kind))),
        Column::new("budget".into(), os(&|t| t.termination.budget.map(|b| snake(&b)))),
        Column::new("termination_raw".into(), os(&|t| t.termination.raw.clone())),
        Column::new("outcome".into(), s(&|t| t.outcome.status.as_str().to_string())),
        Column::new("reward".into(), fl(&|t| t.outcome.reward)),
        Column::new("prompt_tokens".into(), u(&|t| t.usage.prompt_tokens)),
        Column::new("completion_tokens".into(), u(&|t| t.usage.completion_tokens)),
        Column::new("reasoning_tokens".into(), u(&|t| t.usage.reasoning_tokens)),
        Column::new("cached_tokens".into(), u(&|t| t.usage.cached_tokens)),
        Column::new("cost_usd".into(), fl(&|t| t.usage.cost_usd)),
        Column::new("wall_seconds".into(), fl(&|t| t.usage.wall_seconds)),
        Column::new("adapter".into(), s(&|t| t.provenance.adapter.clone())),
        Column::new("source".into(), os(&|t| t.provenance.files.first().map(|f| f.path.clone()))),
        Column::new("record".into(), s(&|t| serde_json::to_string(t).unwrap_or_default())),
    ])
}
