//! `coroner registry`: extract a harness's tool registry from its source, import a captured
//! tool list, and compare a registry with what runs called.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};

use super::{CliError, Done};
use crate::registry::diff::{DiffReport, Verdict};
use crate::registry::{ExtractOptions, ImportOptions, Lang, QuerySet, Registry};

/// Read, import and compare declared tool registries.
///
/// "Hallucinated tool" means something only against what the harness really offered, so
/// the registry is read from the harness's source code, and a call the registry lacks that
/// executed without error is evidence about the registry, not the model.
#[derive(Debug, Args)]
pub struct RegistryArgs {
    #[command(subcommand)]
    pub command: RegistryCommand,
}

#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    Extract(ExtractArgs),
    Import(ImportArgs),
    Diff(DiffArgs),
}

/// Extract the tool registry from harness source code (Go, Python, Rust, TypeScript/TSX,
/// JavaScript, SWE-agent tool bundles).
///
/// Walks the sources (respecting .gitignore, skipping test files), parses them with
/// tree-sitter in parallel, runs the queries of `rules/registry/<lang>.scm` (built in) and of
/// `--queries DIR`, and resolves names given by constant across files. Files that do not
/// parse are reported and skipped (exit code 3).
#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// Source directories or files of one harness.
    #[arg(required = true, value_name = "SRC")]
    pub sources: Vec<PathBuf>,
    /// Languages to read, comma-separated: go, python, rust, ts, js, yaml (default: all).
    #[arg(long, value_delimiter = ',', value_name = "LANGS")]
    pub lang: Vec<String>,
    /// A directory of extra queries named `<lang>.scm`, run after the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
    /// Harness name recorded in the registry (default: the source directory's name).
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,
    /// Also read test files (`*_test.go`, `tests/`, `*.test.ts`, ...).
    #[arg(long)]
    pub include_tests: bool,
    /// A namespace filled at run time that the source does not spell out (`developer__*`).
    /// Repeatable.
    #[arg(long = "namespace", value_name = "PATTERN")]
    pub namespaces: Vec<String>,
    /// Output file; `-` or absent for stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the summary only, not one diagnostic per skipped file.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Read a captured tool list as a registry (a closed-source harness's `tools` array, an API
/// request body, a stream-json `system/init` line).
#[derive(Debug, Args)]
#[command(disable_version_flag = true)]
pub struct ImportArgs {
    /// The file holding the tool list (JSON, or JSON Lines).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Harness name (default: the file's stem, or the `--into` registry's).
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,
    /// File the list under this harness version (a registry holds one list per version).
    #[arg(long, value_name = "V")]
    pub version: Option<String>,
    /// Add to this existing registry instead of starting a new one.
    #[arg(long, value_name = "REGISTRY")]
    pub into: Option<PathBuf>,
    /// Output file; `-` or absent for stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Compare a registry with the tools runs called and the tool lists transcripts declare.
///
/// Lists tools offered and exercised, offered and unused, and called but absent, each absent
/// one judged: dynamic (a run-time namespace), registry_suspect (executed without error: the
/// registry is incomplete), near_miss (spelled like a declared tool), rejected, unanswered.
#[derive(Debug, Args)]
#[command(disable_version_flag = true)]
pub struct DiffArgs {
    /// A registry.json from `registry extract` or `registry import`.
    #[arg(value_name = "REGISTRY")]
    pub registry: PathBuf,
    /// Runs: anything `coroner ingest` reads, or coroner JSONL.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// Judge every call against this harness version (default: each run's own version).
    #[arg(long, value_name = "V")]
    pub version: Option<String>,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &RegistryArgs) -> Result<Done, CliError> {
    match &a.command {
        RegistryCommand::Extract(e) => run_extract(e),
        RegistryCommand::Import(i) => run_import(i),
        RegistryCommand::Diff(d) => run_diff(d),
    }
}

fn run_extract(a: &ExtractArgs) -> Result<Done, CliError> {
    let mut langs = Vec::new();
    for l in &a.lang {
        let ls = Lang::parse_selector(l)
            .ok_or_else(|| CliError::usage(format!("failed to understand --lang {l}")).with_help("use go, python, rust, ts, js or yaml"))?;
        langs.extend_from_slice(ls);
    }
    if langs.is_empty() {
        langs = Lang::ALL.to_vec();
    }
    let mut queries = QuerySet::builtin(&langs).map_err(CliError::invalid)?;
    if let Some(dir) = &a.queries {
        queries.add_dir(dir, &langs).map_err(CliError::invalid)?;
    }
    let opts = ExtractOptions {
        sources: a.sources.clone(),
        langs,
        harness: a.harness.clone(),
        include_tests: a.include_tests,
        namespaces: a.namespaces.clone(),
    };
    let started = Instant::now();
    let extraction = crate::registry::extract(&opts, &queries).map_err(CliError::invalid)?;
    let elapsed = started.elapsed();
    if !a.quiet {
        super::output::print_diagnostics(&extraction.diagnostics);
    }
    let r = &extraction.registry;
    let files: Vec<String> = r.files.iter().map(|(l, n)| format!("{l} {n}")).collect();
    let conditional = r.tools.iter().filter(|t| t.conditional.is_some()).count();
    let mut summary = format!(
        "coroner registry extract: {} files ({}) in {:.2} s\n  tools        {} ({conditional} conditional)\n",
        r.files.values().sum::<u64>(),
        files.join(", "),
        elapsed.as_secs_f64(),
        r.tools.len(),
    );
    if !r.namespaces.is_empty() {
        let ns: Vec<&str> = r.namespaces.iter().map(|n| n.pattern.as_str()).collect();
        summary.push_str(&format!("  namespaces   {}\n", ns.join(", ")));
    }
    summary.push_str(&format!("  unresolved   {} registrations named by an unknown identifier\n", r.unresolved.len()));
    summary.push_str(&format!("  skipped      {} files\n", r.skipped.len()));
    super::output::print_stderr(&summary);
    write_registry(r, a.output.as_deref())?;
    Ok(Done::partial_if(!r.skipped.is_empty()))
}

fn run_import(a: &ImportArgs) -> Result<Done, CliError> {
    let into = a.into.as_deref().map(crate::registry::load).transpose().map_err(CliError::invalid)?;
    let opts = ImportOptions { harness: a.harness.clone(), version: a.version.clone() };
    let reg = crate::registry::import(&a.file, &opts, into).map_err(CliError::invalid)?;
    let (tools, ns) = reg.view(a.version.as_deref());
    super::output::print_stderr(&format!(
        "coroner registry import: {} tools, {} namespaces{}\n",
        tools.len(),
        ns.len(),
        a.version.as_ref().map(|v| format!(" (version {v})")).unwrap_or_default()
    ));
    write_registry(&reg, a.output.as_deref())?;
    Ok(Done::Success)
}

fn run_diff(a: &DiffArgs) -> Result<Done, CliError> {
    let registry = crate::registry::load(&a.registry).map_err(CliError::invalid)?;
    let opts = crate::ingest::IngestOptions { inputs: a.runs.clone(), ..Default::default() };
    let mut trajectories = Vec::new();
    let rules = crate::rules::Rules::builtin().map_err(CliError::invalid)?;
    // Nothing is written while reading, so any failure here is about the input.
    let summary = crate::pipeline::run(&opts, &rules, &mut |t| {
        trajectories.push(t);
        Ok(())
    })
    .map_err(CliError::invalid)?;
    super::output::print_diagnostics(&summary.diagnostics);
    let report = crate::registry::diff(&registry, &trajectories, a.version.as_deref());
    let text = if a.json { super::output::json_text(&report) } else { render_diff(&report) };
    super::output::print_stdout(&text).map_err(|e| CliError::write("the output", e))?;
    Ok(Done::partial_if(summary.is_partial()))
}

/// Writes `registry.json` (pretty, with a final newline) to `path` or stdout.
fn write_registry(r: &Registry, path: Option<&Path>) -> Result<(), CliError> {
    let json = super::output::json_text(r);
    match path {
        Some(p) if p != Path::new("-") => std::fs::write(p, json).map_err(|e| CliError::write(p.display(), e)),
        _ => super::output::print_stdout(&json).map_err(|e| CliError::write("the output", e)),
    }
}

/// The human form of a diff: one table of tools, and one of declared lists when runs carry
/// them.
#[must_use]
pub fn render_diff(r: &DiffReport) -> String {
    use comfy_table::{Table, presets};
    // Tool names and versions come from transcripts: made inert before the table measures them.
    let safe = |x: &str| crate::report::sanitize::terminal(x).into_owned();
    let mut out = format!(
        "registry {} ({} tools offered{}, sha256 {}) vs {} trajectories, {} calls\n",
        safe(&r.harness),
        r.offered,
        r.version.as_ref().map(|v| format!(", version {}", safe(v))).unwrap_or_default(),
        r.registry_sha256.get(..12).unwrap_or(&r.registry_sha256),
        r.trajectories,
        r.calls
    );
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_header(["tool", "registry", "calls", "ok", "errors", "rejected", "unanswered", "verdict"]);
    for a in &r.absent {
        let note = match (a.verdict, &a.near_miss, &a.namespace) {
            (Verdict::Dynamic, _, Some(ns)) => format!("dynamic ({})", safe(ns)),
            (v, Some(nm), _) => format!("{} (near {})", v.as_str(), safe(nm)),
            (v, _, _) => v.as_str().to_string(),
        };
        let u = &a.usage;
        t.add_row([
            safe(&u.name),
            "absent".into(),
            u.calls.to_string(),
            u.ok.to_string(),
            u.errors.to_string(),
            u.rejected.to_string(),
            u.unanswered.to_string(),
            note,
        ]);
    }
    for u in &r.exercised {
        t.add_row([
            safe(&u.name),
            "offered".into(),
            u.calls.to_string(),
            u.ok.to_string(),
            u.errors.to_string(),
            u.rejected.to_string(),
            u.unanswered.to_string(),
            "exercised".into(),
        ]);
    }
    for n in &r.unused {
        t.add_row([safe(n), "offered".into(), "0".into(), String::new(), String::new(), String::new(), String::new(), "unused".into()]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    let suspects = r.absent.iter().filter(|a| a.verdict == Verdict::RegistrySuspect).count();
    if suspects > 0 {
        out.push_str(&format!(
            "{suspects} called tools are absent from the registry yet executed without error: the registry is incomplete, not the model wrong\n"
        ));
    }
    if let Some(d) = &r.declared {
        out.push_str(&format!(
            "\ndeclared by {} transcripts: {} in both, {} only declared, {} only in source\n",
            d.trajectories,
            d.in_both.len(),
            d.declared_only.len(),
            d.source_only.len()
        ));
        let mut t = Table::new();
        t.load_preset(presets::UTF8_FULL_CONDENSED);
        t.set_header(["tool", "declared by transcripts", "source registry", "note"]);
        for x in &d.declared_only {
            let note = match (&x.near_miss, &x.namespace) {
                (_, Some(ns)) => format!("dynamic ({})", safe(ns)),
                (Some(nm), _) => format!("near {}", safe(nm)),
                _ => "registry_suspect".into(),
            };
            t.add_row([safe(&x.name), x.trajectories.to_string(), "absent".into(), note]);
        }
        for n in &d.source_only {
            t.add_row([safe(n), "0".into(), "offered".into(), "not declared at run time".into()]);
        }
        if !d.declared_only.is_empty() || !d.source_only.is_empty() {
            out.push_str(&t.to_string());
            out.push('\n');
        }
    }
    out
}
