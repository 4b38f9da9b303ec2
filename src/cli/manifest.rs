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
    /// Show the files under PATH as under SHOWN instead (`/stage/ab12/runs=s3://bucket/runs`):
    /// in the manifest's displayed paths, and so in the diagnostics, the verdicts' `source` and
    /// the evidence of the runs that read it. Files are still opened at PATH; ids and shards
    /// do not change (they hash the path relative to the input). Repeatable.
    #[arg(long = "shown-as", value_name = "PATH=SHOWN")]
    pub shown_as: Vec<String>,
}

/// `--shown-as PATH=SHOWN` pairs, the longest PATH first.
fn shown_as(pairs: &[String]) -> Result<Vec<(String, String)>, CliError> {
    let mut out = Vec::new();
    for p in pairs {
        match p.split_once('=') {
            Some((from, to)) if !from.is_empty() && !to.is_empty() => {
                out.push((from.trim_end_matches('/').to_string(), to.trim_end_matches('/').to_string()));
            }
            _ => return Err(CliError::usage(format!("failed to read --shown-as `{p}`: expected PATH=SHOWN"))),
        }
    }
    out.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    Ok(out)
}

/// `display` with the first `--shown-as` prefix it starts with (a whole path component) replaced.
fn shown(display: &str, pairs: &[(String, String)]) -> Option<String> {
    pairs.iter().find_map(|(from, to)| {
        let rest = display.strip_prefix(from.as_str())?;
        (rest.is_empty() || rest.starts_with('/')).then(|| format!("{to}{rest}"))
    })
}

pub fn run(a: &ManifestArgs) -> Result<Done, CliError> {
    let pairs = shown_as(&a.shown_as)?;
    let mut entries = if a.merge {
        let mut parts = Vec::new();
        for p in &a.inputs {
            let part = crate::ingest::manifest::read(p).map_err(|e| CliError::usage(format!("failed to {e}")))?;
            if part.iter().any(|e| e.at.is_none()) {
                return Err(CliError::usage(format!("failed to merge {}: it is not a part written by `manifest --shard`", p.display())));
            }
            parts.push(part);
        }
        crate::ingest::manifest::merge(parts).map_err(|e| CliError::usage(format!("failed to merge the parts: {e}")))?
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
    for e in &mut entries {
        if let Some(d) = shown(&e.display, &pairs) {
            e.display = d;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::{shown, shown_as};

    #[test]
    fn a_prefix_is_shown_as_another_on_whole_components() {
        let pairs = shown_as(&["/stage/ab/runs=s3://b/runs/".into(), "/stage=file:///s".into()]).unwrap();
        assert_eq!(shown("/stage/ab/runs/t/a.json", &pairs).as_deref(), Some("s3://b/runs/t/a.json"));
        assert_eq!(shown("/stage/ab/runs", &pairs).as_deref(), Some("s3://b/runs"));
        // The longest prefix wins; a prefix must end on a component.
        assert_eq!(shown("/stage/other/x.json", &pairs).as_deref(), Some("file:///s/other/x.json"));
        assert_eq!(shown("/stage/ab/runs2/x.json", &pairs).as_deref(), Some("file:///s/ab/runs2/x.json"));
        assert_eq!(shown("/elsewhere/x.json", &pairs), None);
        assert!(shown_as(&["no-equals".into()]).is_err());
    }
}
