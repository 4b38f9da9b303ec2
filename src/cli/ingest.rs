//! `coroner ingest`: normalize transcripts into one record per trajectory.

use std::path::PathBuf;

use clap::Args;

use super::{CliError, Done};
use crate::ingest::writer::TrajectoryWriter;
use crate::ingest::{FileStatus, IngestOptions, Summary};
use crate::model::Trajectory;

/// Normalize transcripts into one record per trajectory (JSONL or Parquet).
///
/// Walks files and directories, detects each file's format, parses it, joins outcome files
/// (SWE-bench reports, trial results, verdict files) and prints an accounting of every input:
/// ingested, read as a companion or an outcome file, skipped, or quarantined with a diagnostic.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Transcript files or run directories.
    #[arg(required_unless_present_any = ["list_formats", "manifest"])]
    pub paths: Vec<PathBuf>,
    /// List the formats coroner reads (name, role, versions read, description) and exit.
    #[arg(long)]
    pub list_formats: bool,
    /// Parse every transcript as this format instead of detecting it (see --list-formats).
    #[arg(long, visible_alias = "input-format", value_name = "NAME")]
    pub format: Option<String>,
    /// A verdict file (CSV or JSON `task_id,outcome`, SWE-bench report) applied to every
    /// trajectory; wins over outcomes found beside the transcripts. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub verdicts: Vec<PathBuf>,
    /// A rules directory whose harness profiles say what statuses, errors and log lines mean
    /// (`harnesses/*.toml`) and whose format mappings teach coroner a JSON shape
    /// (`formats/*.toml`), added to or replacing the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// Output file: `.jsonl` (default, lossless) or `.parquet`; `-` or absent for stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub scale: ScaleArgs,
    /// Also write the accounting of every input as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,
    /// Print the summary only, not one diagnostic per quarantined input.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The formats table `--list-formats` prints: a header, then one row per format with its name,
/// role, the versions it reads (`-` when it reads none) and its description; the built-in
/// adapters, then the format mappings of `rules`. The description comes last so that its length
/// never moves the other columns.
#[must_use]
pub fn formats_table(rules: &crate::rules::Rules) -> String {
    use std::fmt::Write as _;
    // A mapping that takes a built-in name is refused when ingesting; here it is simply not shown.
    let mapped = crate::ingest::adapters::mapped::adapters(&rules.formats).unwrap_or_default();
    let rows: Vec<[&str; 4]> = crate::ingest::adapters::all()
        .iter()
        .chain(mapped.iter())
        .map(|ad| {
            let role = match ad.role() {
                crate::ingest::format::FileRole::Transcript => "transcript",
                crate::ingest::format::FileRole::Outcome => "outcome",
                crate::ingest::format::FileRole::Metadata => "metadata",
            };
            let versions = if ad.versions().is_empty() { "-" } else { ad.versions() };
            [ad.name(), role, versions, ad.describe()]
        })
        .collect();
    let header = ["FORMAT", "ROLE", "VERSIONS", "DESCRIPTION"];
    // Widths in characters, as `{:<w$}` pads: versions may hold `–` or `≥`.
    let width = |i: usize| rows.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut out = String::new();
    for [name, role, versions, describe] in std::iter::once(&header).chain(&rows) {
        let _ = writeln!(out, "{name:<w0$}  {role:<w1$}  {versions:<w2$}  {describe}");
    }
    out
}

/// A record ready for the writer.
enum Ready {
    Line(Vec<u8>),
    Record(Box<Trajectory>),
}

pub fn run(a: &IngestArgs) -> Result<Done, CliError> {
    let rules = crate::rules::Rules::load(a.rules.as_deref()).map_err(CliError::invalid)?;
    if a.list_formats {
        super::output::print_stdout(&formats_table(&rules)).map_err(|e| CliError::write("the formats", e))?;
        return Ok(Done::Success);
    }
    let mut writer = match a.output.as_deref() {
        None => TrajectoryWriter::jsonl(Box::new(super::output::json_stdout())),
        Some(p) if p.as_os_str() == "-" => TrajectoryWriter::jsonl(Box::new(super::output::json_stdout())),
        Some(p) => TrajectoryWriter::create(Some(p)).map_err(|e| CliError::io(format!("failed to create {}: {e}", p.display())))?,
    };
    let opts = a.scale.apply(IngestOptions {
        inputs: a.paths.clone(),
        format: a.format.clone(),
        verdicts: a.verdicts.clone(),
        ..IngestOptions::default()
    });
    let mut broken_pipe = false;
    // JSON lines are serialized on the parsing threads; only the writing is in order.
    let jsonl = writer.is_jsonl();
    let prepare = |t: Trajectory| -> Ready {
        if jsonl && let Ok(v) = serde_json::to_vec(&t) {
            return Ready::Line(v);
        }
        Ready::Record(Box::new(t))
    };
    let summary = crate::pipeline::run_map(&opts, &rules, &prepare, &mut |r| {
        if broken_pipe {
            return Ok(());
        }
        let written = match r {
            Ready::Line(v) => writer.write_line(&v),
            Ready::Record(t) => writer.write(*t),
        };
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                broken_pipe = true;
                Ok(())
            }
            r => r,
        }
    })
    .map_err(CliError::ingest)?;
    writer.finish().map_err(|e| CliError::write("the output", e))?;
    if !a.quiet {
        super::output::print_diagnostics(&summary.diagnostics);
    }
    super::output::print_stderr(&render_summary(&summary));
    if let Some(p) = &a.summary_json {
        write_summary_json(p, &summary)?;
    }
    Ok(Done::partial_if(summary.is_partial()))
}

/// `--summary-json`: the accounting of every input, for `ingest` and `classify`.
pub(crate) fn write_summary_json(p: &std::path::Path, summary: &Summary) -> Result<(), CliError> {
    let json = serde_json::to_string_pretty(&summary_json(summary)).unwrap_or_default();
    std::fs::write(p, json + "\n").map_err(|e| CliError::write(p.display(), e))
}

/// Where the inputs come from and which share of them to do, for `ingest` and `classify`.
#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// Read the inputs from a manifest (`coroner manifest`) instead of walking them: with
    /// `--shard`, only the shard's own files, their companions and the outcome files are opened.
    #[arg(long, value_name = "manifest.jsonl")]
    pub manifest: Option<PathBuf>,
    /// Only shard K of N (`--shard 2/8`): a deterministic 1/N of the transcripts, chosen by a
    /// hash of each one's path relative to its input root, with the accounting of the files
    /// that shard owns. The outputs of shards 1/N .. N/N union into the unsharded output.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<crate::ingest::shard::Shard>,
}

impl ScaleArgs {
    /// The options these flags set, on top of `o`: one place, so a flag cannot be parsed by a
    /// command and never reach the ingest (as `ingest --manifest` once was).
    #[must_use]
    pub fn apply(&self, o: IngestOptions) -> IngestOptions {
        IngestOptions { shard: self.shard, manifest: self.manifest.clone(), ..o }
    }
}

/// Quarantined inputs listed by name in the summary; the rest are counted.
const LISTED: usize = 20;

/// The human summary: every input counted once.
#[must_use]
pub fn render_summary(s: &Summary) -> String {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    let mut ingested = 0;
    let mut companions = 0;
    let mut outcomes = 0;
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    let mut quarantined = 0;
    for f in &s.files {
        match &f.status {
            FileStatus::Ingested { .. } => ingested += 1,
            FileStatus::Companion { .. } => companions += 1,
            FileStatus::Outcome { .. } => outcomes += 1,
            FileStatus::Skipped { reason } => *skipped.entry(reason.as_str()).or_default() += 1,
            FileStatus::Quarantined { .. } => quarantined += 1,
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "coroner ingest: {} files seen", s.files.len());
    let per: Vec<String> = s.per_adapter.iter().filter(|(_, n)| **n > 0).map(|(a, n)| format!("{a} {n}")).collect();
    let per = if per.is_empty() { String::new() } else { format!(" ({})", per.join(", ")) };
    let _ = writeln!(out, "  ingested     {ingested} files -> {} trajectories{per}", s.trajectories);
    if companions > 0 {
        let _ = writeln!(out, "  companions   {companions} files read with the transcript they belong to");
    }
    if outcomes > 0 {
        let _ = writeln!(out, "  outcomes     {outcomes} files joined by task id");
    }
    let n_skipped: usize = skipped.values().sum();
    let _ = writeln!(out, "  skipped      {n_skipped} files (not transcripts)");
    for (reason, n) in &skipped {
        let _ = writeln!(out, "                 {n} {reason}");
    }
    let _ = writeln!(out, "  quarantined  {quarantined} files, {} records", s.quarantined_records);
    for d in s.diagnostics.iter().take(LISTED) {
        let _ = writeln!(out, "                 {d}");
    }
    if s.diagnostics.len() > LISTED {
        let _ = writeln!(out, "                 ... and {} more (all are in --summary-json)", s.diagnostics.len() - LISTED);
    }
    out
}

fn summary_json(s: &Summary) -> serde_json::Value {
    let files: Vec<serde_json::Value> = s
        .files
        .iter()
        .map(|f| {
            let (status, detail) = match &f.status {
                FileStatus::Ingested { adapter, trajectories } => {
                    ("ingested", serde_json::json!({"adapter": adapter, "trajectories": trajectories}))
                }
                FileStatus::Companion { adapter } => ("companion", serde_json::json!({"adapter": adapter})),
                FileStatus::Outcome { adapter, entries } => ("outcome", serde_json::json!({"adapter": adapter, "entries": entries})),
                FileStatus::Skipped { reason } => ("skipped", serde_json::json!({"reason": reason})),
                FileStatus::Quarantined { kind } => ("quarantined", serde_json::json!({"kind": kind.as_str()})),
            };
            serde_json::json!({"path": f.display, "status": status, "detail": detail})
        })
        .collect();
    let diagnostics: Vec<serde_json::Value> = s
        .diagnostics
        .iter()
        .map(|d| serde_json::json!({"path": d.path, "line": d.line, "column": d.column, "kind": d.kind.as_str(), "message": format!("failed to {}", d.message), "help": d.help}))
        .collect();
    serde_json::json!({
        "files": files,
        "trajectories": s.trajectories,
        "per_adapter": s.per_adapter,
        "quarantined_files": s.quarantined_files(),
        "quarantined_records": s.quarantined_records,
        "diagnostics": diagnostics,
    })
}

#[cfg(test)]
mod tests {
    use super::formats_table;
    use crate::ingest::adapters::all;

    /// Formats whose versions may be `-`, and why.
    const NO_VERSIONS: &[(&str, &str)] = &[
        // Recognized only to keep them out of quarantine; nothing reads them.
        ("harbor-job", "recognized, never read"),
        ("litellm-log", "recognized, never read"),
        ("swe-agent-config", "recognized, never read"),
        ("exercism-config", "recognized, never read"),
        ("aider-leaderboard", "recognized, never read"),
    ];

    #[test]
    fn every_format_states_the_versions_it_reads() {
        for ad in all() {
            let v = ad.versions();
            assert!(v.chars().count() <= 40, "{}: versions too long for the table: {v:?}", ad.name());
            assert_eq!(v, v.trim(), "{}: versions with stray whitespace", ad.name());
            assert!(!v.contains('\n'), "{}: versions on more than one line", ad.name());
            if v.is_empty() {
                assert!(
                    NO_VERSIONS.iter().any(|(n, _)| *n == ad.name()),
                    "{} states no versions: add them, or say why not in NO_VERSIONS",
                    ad.name()
                );
            }
        }
        for (name, _) in NO_VERSIONS {
            assert!(all().iter().any(|a| a.name() == *name), "NO_VERSIONS names {name}, which is no format");
        }
    }

    #[test]
    fn the_formats_table_shows_versions_in_aligned_columns() {
        let rules = crate::rules::Rules::builtin().unwrap();
        let table = formats_table(&rules);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), all().len() + rules.formats.len() + 1, "a header and one row per format and mapping");
        // The mappings follow the adapters, each with its versions and file.
        for (line, m) in lines[all().len() + 1..].iter().zip(&rules.formats) {
            assert!(line.starts_with(&m.name) && line.contains(&m.versions) && line.ends_with(&format!("(mapping {})", m.file)), "{line}");
        }
        let header = lines[0];
        assert!(header.starts_with("FORMAT ") && header.contains("  ROLE ") && header.contains("  VERSIONS "), "{header}");
        // Every row's description starts where the header's does, with each format's own.
        let col = header.chars().count() - "DESCRIPTION".len();
        assert!(header.ends_with("  DESCRIPTION"), "{header}");
        for (line, ad) in lines[1..].iter().zip(all()) {
            let (cells, describe): (String, String) = (line.chars().take(col).collect(), line.chars().skip(col).collect());
            assert_eq!(describe, ad.describe(), "{line}");
            assert!(cells.ends_with("  "), "{line}");
            let versions = if ad.versions().is_empty() { "-" } else { ad.versions() };
            let mut parts = cells.split("  ").map(str::trim).filter(|c| !c.is_empty());
            assert_eq!(parts.next(), Some(ad.name()), "{line}");
            assert!(parts.next().is_some_and(|r| ["transcript", "outcome", "metadata"].contains(&r)), "{line}");
            assert_eq!(parts.collect::<Vec<_>>().join("  "), versions, "{line}");
        }
        let row = |name: &str| lines.iter().find(|l| l.split_whitespace().next() == Some(name)).copied().unwrap_or_default();
        for (name, versions) in [
            ("atif", "1.0–1.8"),
            ("mini-swe-agent", "1.x text actions, 2.x tool calls"),
            ("openhands", "V0 events"),
            ("terminal-bench", "Terminal-Bench 1"),
            ("inspect-eval", "log version 2"),
            ("codex-exec", "<0.44 protocol, 0.44–0.45"),
            ("harbor-job", "  -  "),
        ] {
            assert!(row(name).contains(versions), "{name} should show {versions:?}: {}", row(name));
        }
    }
}
