//! `coroner show`: one trajectory in the terminal, with the steps its verdict rests on marked.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::{CliError, Done};
use crate::ingest::IngestOptions;
use crate::model::Trajectory;
use crate::report::sanitize;
use crate::spotcheck::render::{Format, ShowOptions, render};
use crate::spotcheck::select::{Selector, listing, select, split_target};

/// Show one trajectory: steps, tool calls and results, with its evidence marked.
///
/// Long blocks are folded (head and tail), reasoning is collapsed to one line, and the steps
/// the verdict rests on are marked in the margin with the rule that fired. Text from the
/// transcript is neutralized before printing: escape sequences and control characters are
/// shown as visible symbols (␛, ␇) instead of reaching the terminal. Steps are numbered from
/// 0, as in verdicts.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A transcript file or run directory (anything `coroner ingest` reads, including coroner
    /// JSONL), or `FILE#X` where X is a trajectory id, a task id or an index.
    pub trajectory: String,
    /// Choose the trajectory with this id (also an id from a run read from another root).
    #[arg(long, value_name = "ID", conflicts_with_all = ["task", "index"])]
    pub id: Option<String>,
    /// Choose the only trajectory of this task.
    #[arg(long, value_name = "TASK", conflicts_with = "index")]
    pub task: Option<String>,
    /// Choose by position in the listing shown when the input holds several.
    #[arg(long, value_name = "N")]
    pub index: Option<usize>,
    /// Show step N in full (nothing folded, reasoning expanded) with its neighbours.
    #[arg(long, value_name = "N")]
    pub step: Option<u32>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Mark the evidence steps without naming rules or classes (for blind spot-checks).
    #[arg(long)]
    pub blind: bool,
    #[command(flatten)]
    pub classify: super::classify::ClassifyOptions,
}

pub fn run(a: &ShowArgs) -> Result<Done, CliError> {
    let (path, token) = split_target(&a.trajectory);
    let selector = match (&a.id, &a.task, a.index, token) {
        (Some(id), _, _, _) => Selector::Id(id.clone()),
        (_, Some(t), _, _) => Selector::Task(t.clone()),
        (_, _, Some(i), _) => Selector::Index(i),
        (_, _, _, Some(tok)) => Selector::Token(tok),
        _ => Selector::Only,
    };
    let c = a.classify.classifier()?;
    let opts = IngestOptions {
        inputs: vec![PathBuf::from(&path)],
        verdicts: a.classify.verdicts.clone(),
        format: a.classify.input_format.clone(),
        ..IngestOptions::default()
    };
    let mut trajs: Vec<Trajectory> = Vec::new();
    // Nothing is written while reading, so any failure here is about the input.
    let summary = crate::pipeline::run(&opts, &c.rules, &mut |t| {
        trajs.push(t);
        Ok(())
    })
    .map_err(CliError::invalid)?;
    if trajs.is_empty() {
        super::output::print_diagnostics(&summary.diagnostics);
        let message = format!("failed to find a trajectory in {}", sanitize::terminal(&path));
        return Err(if summary.is_partial() {
            CliError::quarantined(message).with_help("every input that could hold one was quarantined; the diagnostics above say why")
        } else {
            CliError::usage(message).with_help("name a transcript file or run directory that `coroner ingest` reads")
        });
    }
    let i = select(&trajs, &selector).map_err(|e| {
        CliError::usage(format!("failed to choose a trajectory in {}: {}", sanitize::terminal(&path), sanitize::terminal(&e.message)))
            .with_after(listing(&trajs, &e.candidates))
    })?;
    let t = &trajs[i];
    let v = c.classify(t);
    let color = a.format == Format::Text && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let text = render(t, &v, &ShowOptions { format: a.format, color, step: a.step, blind: a.blind })
        .map_err(|e| CliError::usage(e.to_string()))?;
    super::output::print_stdout(&text).map_err(|e| CliError::io(format!("failed to write: {e}")))?;
    if summary.is_partial() {
        super::output::note(&format!(
            "{} files and {} records of {} were quarantined (`coroner ingest` says why)",
            summary.quarantined_files(),
            summary.quarantined_records,
            sanitize::terminal(&path)
        ));
    }
    // What is shown may be the wrong trajectory, or one of several, when inputs were lost.
    Ok(Done::partial_if(summary.is_partial()))
}
