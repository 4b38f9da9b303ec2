//! Writes a report to a directory: every table as CSV, Parquet and JSON (through polars), the
//! verdicts beside them, the Markdown, and the charts.

use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use super::tables::Report;
use crate::study::StudyRun;

/// Which chart formats to write.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChartFormats {
    pub svg: bool,
    pub png: bool,
}

fn write_frame(dir: &Path, stem: &str, df: &mut DataFrame) -> std::io::Result<()> {
    let err = std::io::Error::other;
    CsvWriter::new(File::create(dir.join(format!("{stem}.csv")))?).finish(df).map_err(err)?;
    ParquetWriter::new(File::create(dir.join(format!("{stem}.parquet")))?).finish(df).map_err(err)?;
    JsonWriter::new(File::create(dir.join(format!("{stem}.json")))?).with_json_format(JsonFormat::Json).finish(df).map_err(err)?;
    Ok(())
}

/// Writes everything under `dir`; returns the files written, in order. The verdicts are
/// written when the report is of transcripts (`run`); a dataset is its own verdicts.
///
/// # Errors
/// On I/O, polars or drawing failure.
pub fn write_all(dir: &Path, run: Option<&StudyRun>, r: &Report, charts: ChartFormats) -> std::io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let err = |e: PolarsError| std::io::Error::other(e);
    let mut written = Vec::new();
    for (stem, mut df) in [
        ("arms", r.arms_frame().map_err(err)?),
        ("failure_modes", r.failure_modes_frame().map_err(err)?),
        ("mechanics", r.mechanics_frame().map_err(err)?),
        ("per_task", r.tasks_frame().map_err(err)?),
    ] {
        write_frame(dir, stem, &mut df)?;
        written.extend(["csv", "parquet", "json"].iter().map(|e| format!("{stem}.{e}")));
    }
    if let Some(run) = run {
        let all: Vec<&crate::model::Verdict> = run.arms.iter().flat_map(|a| a.verdicts.iter()).collect();
        let mut df = crate::classify::table::verdict_frame(&all).map_err(err)?;
        write_frame(dir, "verdicts", &mut df)?;
        written.extend(["verdicts.csv", "verdicts.parquet", "verdicts.json"].map(String::from));
        crate::classify::table::write_verdicts(&dir.join("verdicts.jsonl"), &all)?;
        written.push("verdicts.jsonl".into());
    }
    std::fs::write(dir.join("report.md"), super::render::markdown(r))?;
    written.push("report.md".into());
    if let Some(c) = &r.comparison {
        std::fs::write(dir.join("comparison.json"), serde_json::to_string_pretty(c).unwrap_or_default() + "\n")?;
        written.push("comparison.json".into());
    }
    for (name, _) in super::chart::CHARTS {
        if charts.svg {
            let s = super::chart::svg(name, r).map_err(|e| std::io::Error::other(e.to_string()))?;
            std::fs::write(dir.join(format!("{name}.svg")), s)?;
            written.push(format!("{name}.svg"));
        }
        if charts.png {
            super::chart::png(name, r, &dir.join(format!("{name}.png"))).map_err(|e| std::io::Error::other(e.to_string()))?;
            written.push(format!("{name}.png"));
        }
    }
    Ok(written)
}
