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
    /// Read and list only the files shard K of N owns (the walk is whole; reading and hashing
    /// is the work), each with its position, so N processes share the listing of a large run.
    /// Join the parts with `--merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<crate::ingest::shard::Shard>,
    /// The inputs are the parts `--shard 1/N` .. `N/N` wrote: join them into the manifest one
    /// process would have written.
    #[arg(long, conflicts_with_all = ["shard", "format", "rules"])]
    pub merge: bool,
}

pub fn run(a: &ManifestArgs) -> Result<Done, CliError> {
    let entries = if a.merge {
        let mut parts = Vec::new();
        for p in &a.inputs {
            let part = crate::ingest::manifest::read(p).map_err(|e| CliError::usage(format!("failed to {e}")))?;
            if part.iter().any(|e| e.at.is_none()) {
                return Err(CliError::usage(format!("failed to merge {}: it is not a part written by `manifest --shard`", p.display())));
            }
            parts.push(part);
        }
        crate::ingest::manifest::merge(parts)
    } else {
        let rules = Rules::load(a.rules.as_deref()).map_err(CliError::invalid)?;
        let opts = IngestOptions {
            inputs: a.inputs.clone(),
            format: a.format.clone(),
            formats: rules.formats.clone(),
            shard: a.shard,
            ..IngestOptions::default()
        };
        crate::ingest::pipeline::manifest(&opts).map_err(CliError::ingest)?
    };
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
