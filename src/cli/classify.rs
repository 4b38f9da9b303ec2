//! `coroner classify`: one verdict per trajectory, with evidence.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::ingest::ScaleArgs;
use super::{CliError, Done};
use crate::classify::emit::{Emit, atif, scout};
use crate::classify::{Classifier, Options};
use crate::ingest::IngestOptions;
use crate::model::{OutcomeStatus, Trajectory, Verdict};
use crate::rules::Rules;
use crate::util::display_path;

/// Classify every failed trajectory into a failure mode, with evidence a person can check.
///
/// INPUT is anything `coroner ingest` reads, or its JSONL. Passed trajectories get mechanics and
/// flags but no class; trajectories without a verdict are counted as unknown, not guessed.
#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// Transcript files, run directories, or coroner JSONL.
    #[arg(required_unless_present = "manifest")]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub classify: ClassifyOptions,
    /// Output: `.jsonl` (default; one verdict per line), `.csv` or `.parquet`; `-` or absent
    /// for JSONL on stdout; a directory (`DIR/`) for a dataset: `DIR/arm=…/part-K-of-N.parquet`
    /// (hive-partitioned by arm; K/N from `--shard`, else 1/1) with the accounting in
    /// `DIR/_accounting/`, which `report DIR` and `compare A B DIR` read.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub scale: ScaleArgs,
    /// Write the accounting of every input (ingested, skipped, quarantined, with diagnostics)
    /// as JSON here, as `ingest --summary-json` does.
    #[arg(long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,
    /// Print the class summary only, not the ingest diagnostics.
    #[arg(short, long)]
    pub quiet: bool,
    /// Also write the verdicts back where other tools show transcripts: `atif` writes each
    /// ATIF trajectory again with its verdict in `extra.coroner`; `scout` writes an Inspect
    /// Scout scan. Both go below --emit-dir. Repeatable.
    #[arg(long, value_enum, value_name = "FORMAT", requires = "emit_dir")]
    pub emit: Vec<crate::classify::emit::Emit>,
    /// The directory --emit writes into (created if absent).
    #[arg(long, value_name = "DIR", requires = "emit")]
    pub emit_dir: Option<PathBuf>,
}

/// The options that decide how trajectories are read and classified, shared by every command
/// that classifies (`classify`, `show`, `spotcheck`) so that they cannot drift apart.
#[derive(Debug, Clone, Default, Args)]
pub struct ClassifyOptions {
    /// A tool registry (`coroner registry extract` / `import`), or a harness source directory
    /// to extract one from; matched to trajectories by harness name. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub registry: Vec<PathBuf>,
    /// A directory with `taxonomy.toml`, `harnesses/*.toml` and/or `formats/*.toml` overriding
    /// or adding to the built-ins.
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// A verdict file joined to every trajectory (as for `ingest`). Repeatable.
    #[arg(long, value_name = "FILE")]
    pub verdicts: Vec<PathBuf>,
    /// Parse every transcript as this format instead of detecting it (`ingest --list-formats`),
    /// as `ingest --format` does.
    #[arg(long = "input-format", value_name = "NAME")]
    pub input_format: Option<String>,
    /// The step limit the runs were given, to infer budget exhaustion without a status.
    #[arg(long, value_name = "N")]
    pub step_limit: Option<u32>,
    /// The wall-clock limit the runs were given, in seconds (as `step_limit`).
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
    /// The cost limit the runs were given, in US dollars (as `step_limit`).
    #[arg(long, value_name = "USD")]
    pub cost_limit: Option<f64>,
    /// The token limit the runs were given, prompt plus completion (as `step_limit`).
    #[arg(long, value_name = "N")]
    pub token_limit: Option<u64>,
}

impl ClassifyOptions {
    pub fn classifier(&self) -> Result<Classifier, CliError> {
        let limits = Options {
            step_limit: self.step_limit,
            time_limit_seconds: self.time_limit,
            cost_limit_usd: self.cost_limit,
            token_limit: self.token_limit,
        };
        classifier(self.rules.as_deref(), &self.registry, limits)
    }

    /// The same options as command-line arguments, to print a command a person can re-run.
    pub fn as_args(&self) -> Vec<String> {
        use crate::util::display_path;
        let mut v = Vec::new();
        for r in &self.registry {
            v.extend(["--registry".to_string(), display_path(r)]);
        }
        if let Some(r) = &self.rules {
            v.extend(["--rules".to_string(), display_path(r)]);
        }
        for f in &self.verdicts {
            v.extend(["--verdicts".to_string(), display_path(f)]);
        }
        if let Some(f) = &self.input_format {
            v.extend(["--input-format".to_string(), f.clone()]);
        }
        if let Some(n) = self.step_limit {
            v.extend(["--step-limit".to_string(), n.to_string()]);
        }
        if let Some(n) = self.time_limit {
            v.extend(["--time-limit".to_string(), n.to_string()]);
        }
        if let Some(n) = self.cost_limit {
            v.extend(["--cost-limit".to_string(), n.to_string()]);
        }
        if let Some(n) = self.token_limit {
            v.extend(["--token-limit".to_string(), n.to_string()]);
        }
        v
    }
}

/// A verdict with what `--emit` needs of its record.
type Emitted = (Verdict, Option<atif::AtifSource>, Option<scout::ScoutSource>);

/// Loads rules and registries the way every command that classifies does.
pub fn classifier(rules: Option<&std::path::Path>, registries: &[PathBuf], limits: Options) -> Result<Classifier, CliError> {
    let rules = Rules::load(rules).map_err(CliError::invalid)?;
    // A registry file, or a source directory to extract one from (as in a study file).
    let loaded =
        registries.iter().map(|p| crate::study::run::load_registry(p).map_err(CliError::invalid)).collect::<Result<Vec<_>, _>>()?;
    Ok(Classifier::new(rules, loaded, limits))
}

pub fn run(a: &ClassifyArgs) -> Result<Done, CliError> {
    let c = a.classify.classifier()?;
    let opts = a.scale.apply(IngestOptions {
        inputs: a.inputs.clone(),
        verdicts: a.classify.verdicts.clone(),
        format: a.classify.input_format.clone(),
        // Verdicts name their source file, never its sha256.
        unhashed: true,
        ..IngestOptions::default()
    });
    // JSONL streams: each verdict is written as it comes, so memory holds one batch. CSV and
    // Parquet are columnar and written at the end; so is a dataset (`-o DIR/`: hive-partitioned
    // Parquet parts, one per arm, named after the shard).
    let dataset = a.output.as_deref().filter(|p| p.to_string_lossy().ends_with('/') || p.is_dir()).map(std::path::Path::to_path_buf);
    let columnar = a
        .output
        .as_deref()
        .filter(|p| dataset.is_none() && p.as_os_str() != "-" && matches!(p.extension().and_then(|e| e.to_str()), Some("csv" | "parquet")))
        .map(std::path::Path::to_path_buf);
    let mut jsonl: Option<std::io::BufWriter<Box<dyn Write>>> = match (&columnar, a.output.as_deref()) {
        (Some(_), _) => None,
        (None, _) if dataset.is_some() => None,
        (None, Some(p)) if p.as_os_str() != "-" => {
            let f = std::fs::File::create(p).map_err(|e| CliError::io(format!("failed to create {}: {e}", p.display())))?;
            Some(std::io::BufWriter::new(Box::new(f)))
        }
        (None, _) => Some(std::io::BufWriter::new(Box::new(super::output::json_stdout()))),
    };
    let mut kept: Vec<Verdict> = Vec::new();
    let mut tally = Tally::default();
    let mut broken_pipe = false;
    let emit_atif = a.emit.contains(&Emit::Atif);
    let emit_scout = a.emit.contains(&Emit::Scout);
    let mut atif_written = 0usize;
    let mut atif_failures: Vec<String> = Vec::new();
    let mut scout_rows: Vec<(Verdict, scout::ScoutSource)> = Vec::new();
    let classify = |t: Trajectory| {
        let at = if emit_atif { atif::source(&t) } else { None };
        let sc = emit_scout.then(|| scout::source(&t));
        (c.classify(&t), at, sc)
    };
    let summary = crate::pipeline::run_map(&opts, &c.rules, &classify, &mut |(v, at, sc): Emitted| {
        tally.add(&v);
        if let (Some(src), Some(dir)) = (&at, &a.emit_dir) {
            match atif::write(dir, src, &v, &c.rules.digest) {
                Ok(_) => atif_written += 1,
                Err(e) => atif_failures.push(format!("{}: {e}", src.path)),
            }
        }
        if let Some(sc) = sc {
            scout_rows.push((v.clone(), sc));
        }
        match jsonl.as_mut() {
            Some(w) if !broken_pipe => {
                let r = serde_json::to_writer(&mut *w, &v).map_err(std::io::Error::from).and_then(|()| w.write_all(b"\n"));
                match r {
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => broken_pipe = true,
                    r => r?,
                }
            }
            Some(_) => {}
            None => kept.push(v),
        }
        Ok(())
    })
    .map_err(CliError::ingest)?;
    if !a.quiet {
        super::output::print_diagnostics(&summary.diagnostics);
    }
    let write = match (&columnar, jsonl.as_mut()) {
        (Some(p), _) => crate::classify::table::write_verdicts(p, &kept.iter().collect::<Vec<_>>()),
        (None, Some(w)) => match w.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => r,
        },
        (None, None) => Ok(()),
    };
    write.map_err(|e| CliError::write("verdicts", e))?;
    if let Some(dir) = &dataset {
        let (k, n) = a.scale.shard.map_or((1, 1), |s| (s.k, s.n));
        crate::study::dataset::write_shard(dir, k, n, &kept).map_err(|e| CliError::write(format!("the dataset {}", dir.display()), e))?;
        let acct = dir.join("_accounting");
        std::fs::create_dir_all(&acct).map_err(|e| CliError::write(acct.display(), e))?;
        super::ingest::write_summary_json(&acct.join(format!("part-{k:05}-of-{n:05}.json")), &summary)?;
    }
    if let (true, Some(dir)) = (emit_scout, &a.emit_dir) {
        let scan = scout::write(dir, &scout_rows, &c.rules.digest).map_err(|e| CliError::write("the Scout scan", e))?;
        super::output::print_stderr(&format!("wrote {} verdicts as the Scout scan {}\n", scout_rows.len(), display_path(&scan)));
    }
    if let (true, Some(dir)) = (emit_atif, &a.emit_dir) {
        super::output::print_stderr(&format!(
            "wrote {atif_written} annotated ATIF trajectories below {} ({} records were not read from ATIF)\n",
            display_path(dir),
            tally.total().saturating_sub(atif_written + atif_failures.len())
        ));
        if !atif_failures.is_empty() {
            return Err(CliError::write("annotated ATIF trajectories", std::io::Error::other(atif_failures.join("; "))));
        }
    }
    super::output::print_stderr(&tally.render(&c.rules, summary.quarantined_files(), summary.quarantined_records));
    if let Some(p) = &a.summary_json {
        super::ingest::write_summary_json(p, &summary)?;
    }
    Ok(Done::partial_if(summary.is_partial()))
}

/// Verdicts counted by outcome and primary class, as they stream past.
#[derive(Debug, Default)]
pub struct Tally {
    total: usize,
    by_outcome: BTreeMap<&'static str, usize>,
    by_primary: BTreeMap<String, usize>,
}

impl Tally {
    #[must_use]
    pub fn total(&self) -> usize {
        self.total
    }

    pub fn add(&mut self, v: &Verdict) {
        self.total += 1;
        *self.by_outcome.entry(v.outcome.as_str()).or_default() += 1;
        if let Some(p) = &v.primary {
            *self.by_primary.entry(p.clone()).or_default() += 1;
        }
    }

    /// Verdicts by outcome and primary class, in precedence order.
    #[must_use]
    pub fn render(&self, rules: &Rules, quarantined_files: usize, quarantined_records: usize) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let count = |s: OutcomeStatus| self.by_outcome.get(s.as_str()).copied().unwrap_or(0);
        let failed: usize = self.by_primary.values().sum();
        let _ = writeln!(
            out,
            "coroner classify: {} trajectories: {} passed, {} failed, {} unknown outcome (not classified){}",
            self.total,
            count(OutcomeStatus::Passed),
            failed,
            count(OutcomeStatus::Unknown),
            if quarantined_files + quarantined_records > 0 {
                format!("; {quarantined_files} files and {quarantined_records} records quarantined")
            } else {
                String::new()
            }
        );
        let mut ordered: Vec<(&String, &usize)> = self.by_primary.iter().collect();
        ordered.sort_by_key(|(c, _)| rules.taxonomy.rank(c));
        for (c, n) in ordered {
            #[expect(clippy::cast_precision_loss, reason = "counts of trajectories")]
            let pct = 100.0 * *n as f64 / failed.max(1) as f64;
            let _ = writeln!(out, "  {c:<24} {n:>6}  ({pct:.0}% of failures)");
        }
        out
    }
}
