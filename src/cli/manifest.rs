//! `coroner manifest`: the inputs of a run listed once, with their formats, for sharded runs.

use std::path::PathBuf;

use clap::Args;

use super::{CliError, Done};
use crate::ingest::IngestOptions;
use crate::rules::Rules;

/// List the inputs of a run once (path, size, SHA-256, detected format), so the shards of a
/// large run (`classify --shard K/N --manifest FILE`) read only their own files instead of each
/// walking and probing every input.
#[derive(Debug, Args)]
pub struct ManifestArgs {
    /// Transcript files and run directories, as `ingest` takes them.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write the manifest (JSON Lines) here.
    #[arg(short, long, value_name = "manifest.jsonl")]
    pub output: PathBuf,
    /// Detect every transcript as this format (as `ingest --format`).
    #[arg(long, visible_alias = "input-format", value_name = "NAME")]
    pub format: Option<String>,
    /// A rules directory whose format mappings (`formats/*.toml`) detection should know.
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
}

pub fn run(a: &ManifestArgs) -> Result<Done, CliError> {
    let rules = Rules::load(a.rules.as_deref()).map_err(CliError::invalid)?;
    let opts =
        IngestOptions { inputs: a.inputs.clone(), format: a.format.clone(), formats: rules.formats.clone(), ..IngestOptions::default() };
    let entries = crate::ingest::pipeline::manifest(&opts).map_err(CliError::ingest)?;
    let f = std::fs::File::create(&a.output).map_err(|e| CliError::write(a.output.display(), e))?;
    crate::ingest::manifest::write(&entries, std::io::BufWriter::new(f)).map_err(|e| CliError::write(a.output.display(), e))?;
    let detected = entries.iter().filter(|e| e.adapter.is_some()).count();
    super::output::print_stderr(&format!(
        "coroner manifest: {} entries ({detected} with a detected format) written to {}\n",
        entries.len(),
        a.output.display()
    ));
    Ok(Done::Success)
}
