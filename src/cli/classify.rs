//! `coroner classify`: one verdict per trajectory, with evidence.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::classify::{Classifier, LoadedRegistry, Options, Rules};
use crate::exit;
use crate::ingest::IngestOptions;
use crate::model::{OutcomeStatus, Verdict};

/// Classify every failed trajectory into a failure mode, with evidence a person can check.
///
/// INPUT is anything `coroner ingest` reads, or its JSONL. Passed trajectories get mechanics and
/// flags but no class; trajectories without a verdict are counted as unknown, not guessed.
#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// Transcript files, run directories, or coroner JSONL.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// A tool registry (`coroner registry extract` / `import`); matched to trajectories by
    /// harness name. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub registry: Vec<PathBuf>,
    /// A directory with `taxonomy.toml` and/or `harnesses/*.toml` overriding the built-ins.
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// A verdict file joined to every trajectory (as for `ingest`). Repeatable.
    #[arg(long, value_name = "FILE")]
    pub verdicts: Vec<PathBuf>,
    /// The step limit the runs were given, to infer budget exhaustion without a status.
    #[arg(long, value_name = "N")]
    pub step_limit: Option<u32>,
    /// Output: `.jsonl` (default; one verdict per line), `.csv` or `.parquet`; `-` or absent
    /// for JSONL on stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Print the class summary only, not the ingest diagnostics.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Loads rules and registries the way every command that classifies does.
pub fn classifier(rules: Option<&std::path::Path>, registries: &[PathBuf], step_limit: Option<u32>) -> Result<Classifier, u8> {
    let rules = match Rules::load(rules) {
        Ok(r) => r,
        Err(e) => {
            super::print_diagnostic(&e);
            return Err(exit::USAGE);
        }
    };
    let mut loaded = Vec::new();
    for p in registries {
        match crate::registry::load(p) {
            Ok(r) => loaded.push(LoadedRegistry { file: crate::ingest::diag::display_path(p), registry: r }),
            Err(e) => {
                super::print_diagnostic(&e);
                return Err(exit::USAGE);
            }
        }
    }
    Ok(Classifier::new(rules, loaded, Options { step_limit }))
}

pub fn run(a: &ClassifyArgs) -> u8 {
    let c = match classifier(a.rules.as_deref(), &a.registry, a.step_limit) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let opts = IngestOptions { inputs: a.inputs.clone(), format: None, verdicts: a.verdicts.clone() };
    let mut verdicts: Vec<Verdict> = Vec::new();
    let result = crate::ingest::run_map(&opts, &|t| c.classify(&t), &mut |v| {
        verdicts.push(v);
        Ok(())
    });
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            super::print_diagnostic(&e);
            return exit::USAGE;
        }
    };
    if !a.quiet {
        for d in &summary.diagnostics {
            super::print_diagnostic(d);
        }
    }
    let write = match a.output.as_deref() {
        Some(p) if p.as_os_str() != "-" => crate::classify::table::write_verdicts(p, &verdicts),
        _ => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let r = verdicts.iter().try_for_each(|v| {
                serde_json::to_writer(&mut out, v)?;
                out.write_all(b"\n")
            });
            match r.and_then(|()| out.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r,
            }
        }
    };
    if let Err(e) = write {
        eprintln!("error: failed to write verdicts: {e}");
        return exit::IO;
    }
    let _ = write!(
        std::io::stderr().lock(),
        "{}",
        render_summary(&verdicts, &c.rules, summary.quarantined_files(), summary.quarantined_records)
    );
    if summary.is_partial() { exit::PARTIAL } else { exit::SUCCESS }
}

/// Verdicts by outcome and primary class, in precedence order.
#[must_use]
pub fn render_summary(vs: &[Verdict], rules: &Rules, quarantined_files: usize, quarantined_records: usize) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let count = |s: OutcomeStatus| vs.iter().filter(|v| v.outcome == s).count();
    let failed: Vec<&Verdict> = vs.iter().filter(|v| v.primary.is_some()).collect();
    let _ = writeln!(
        out,
        "coroner classify: {} trajectories: {} passed, {} failed, {} unknown outcome (not classified){}",
        vs.len(),
        count(OutcomeStatus::Passed),
        failed.len(),
        count(OutcomeStatus::Unknown),
        if quarantined_files + quarantined_records > 0 {
            format!("; {quarantined_files} files and {quarantined_records} records quarantined")
        } else {
            String::new()
        }
    );
    let mut by: BTreeMap<usize, (&str, usize)> = BTreeMap::new();
    for v in &failed {
        let c = v.primary.as_deref().unwrap_or("unclassified");
        by.entry(rules.taxonomy.rank(c)).or_insert((c, 0)).1 += 1;
    }
    for (c, n) in by.values() {
        #[expect(clippy::cast_precision_loss, reason = "counts of trajectories")]
        let pct = 100.0 * *n as f64 / failed.len().max(1) as f64;
        let _ = writeln!(out, "  {c:<24} {n:>6}  ({pct:.0}% of failures)");
    }
    out
}
