//! The command line: the `Command` enum and dispatch; one file per subcommand.

mod classify;
mod compare;
mod error;
#[cfg(feature = "bench")]
mod gen_corpus;
mod ingest;
mod manifest;
mod output;
mod predict;
mod registry;
mod report;
mod rules;
pub mod schema;
mod show;
mod spotcheck;

use std::ffi::OsString;

use clap::{Parser, Subcommand};

pub use error::{CliError, Done};

/// Determines why AI-agent trajectories fail.
///
/// coroner reads the transcripts agent harnesses write (Harbor/ATIF, Terminal-Bench,
/// mini-swe-agent, SWE-agent, OpenHands, Aider, ...), normalizes them into one record per
/// trajectory, classifies every failure with evidence, and reports with honest statistics.
#[derive(Debug, Parser)]
#[command(name = "coroner", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Ingest(ingest::IngestArgs),
    Classify(classify::ClassifyArgs),
    Manifest(manifest::ManifestArgs),
    Rules(rules::RulesArgs),
    Report(report::ReportArgs),
    Compare(compare::CompareArgs),
    Registry(registry::RegistryArgs),
    Show(show::ShowArgs),
    Spotcheck(spotcheck::SpotcheckArgs),
    Predict(predict::PredictArgs),
    #[cfg(feature = "bench")]
    #[command(hide = true)]
    GenCorpus(gen_corpus::GenCorpusArgs),
}

/// Runs coroner with `args` (including the program name) and returns the exit code: the
/// outcome's, or the error's after rendering it (the one place a command's error is printed).
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { crate::exit::USAGE } else { crate::exit::SUCCESS };
            let _ = e.print();
            return code;
        }
    };
    let result = match cli.command {
        Command::Ingest(a) => ingest::run(&a),
        Command::Classify(a) => classify::run(&a),
        Command::Manifest(a) => manifest::run(&a),
        Command::Rules(a) => rules::run(&a),
        Command::Report(a) => report::run(&a),
        Command::Compare(a) => compare::run(&a),
        Command::Registry(a) => registry::run(&a),
        Command::Show(a) => show::run(&a),
        Command::Spotcheck(a) => spotcheck::run(&a),
        Command::Predict(a) => predict::run(&a),
        #[cfg(feature = "bench")]
        Command::GenCorpus(a) => gen_corpus::run(&a),
    };
    match result {
        Ok(done) => done.code(),
        Err(e) => {
            e.render();
            e.code()
        }
    }
}
