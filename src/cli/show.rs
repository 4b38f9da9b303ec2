//! `coroner show`: one trajectory in the terminal, with the steps its verdict rests on marked.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;

use crate::exit;
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

pub fn run(a: &ShowArgs) -> u8 {
    let (path, token) = split_target(&a.trajectory);
    let selector = match (&a.id, &a.task, a.index, token) {
        (Some(id), _, _, _) => Selector::Id(id.clone()),
        (_, Some(t), _, _) => Selector::Task(t.clone()),
        (_, _, Some(i), _) => Selector::Index(i),
        (_, _, _, Some(tok)) => Selector::Token(tok),
        _ => Selector::Only,
    };
    let c = match a.classify.classifier() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let opts = IngestOptions { inputs: vec![PathBuf::from(&path)], verdicts: a.classify.verdicts.clone(), ..IngestOptions::default() };
    let mut trajs: Vec<Trajectory> = Vec::new();
    let summary = match crate::pipeline::run(&opts, &c.rules, &mut |t| {
        trajs.push(t);
        Ok(())
    }) {
        Ok(s) => s,
        Err(e) => {
            super::print_diagnostic(&e);
            return exit::USAGE;
        }
    };
    if trajs.is_empty() {
        for d in &summary.diagnostics {
            super::print_diagnostic(d);
        }
        eprintln!("error: failed to find a trajectory in {}", sanitize::terminal(&path));
        return if summary.is_partial() { exit::PARTIAL } else { exit::USAGE };
    }
    let i = match select(&trajs, &selector) {
        Ok(i) => i,
        Err(e) => {
            let _ = write!(
                std::io::stderr().lock(),
                "error: failed to choose a trajectory in {}: {}\n{}",
                sanitize::terminal(&path),
                sanitize::terminal(&e.message),
                listing(&trajs, &e.candidates)
            );
            return exit::USAGE;
        }
    };
    let t = &trajs[i];
    let v = c.classify(t);
    let color = a.format == Format::Text && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let text = match render(t, &v, &ShowOptions { format: a.format, color, step: a.step, blind: a.blind }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("error: failed to write: {e}");
            return exit::IO;
        }
        _ => {}
    }
    if summary.is_partial() {
        eprintln!(
            "note: {} files and {} records of {} were quarantined (`coroner ingest` says why)",
            summary.quarantined_files(),
            summary.quarantined_records,
            sanitize::terminal(&path)
        );
    }
    exit::SUCCESS
}
