//! `coroner report`: the study's tables, exports and charts.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::{CliError, Done};
use crate::report::export::ChartFormats;
use crate::report::html::Pages;
use crate::report::render::Fit;
use crate::report::tally::ArmTally;
use crate::rules::Rules;
use crate::study::{Also, Study, StudyRun};

/// The sample study `coroner report` runs with no arguments, from a checkout.
pub const DEFAULT_STUDY: &str = "samples/study/study.toml";

#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub enum ReportFormat {
    #[default]
    Table,
    Markdown,
    Json,
}

/// Where arms come from, shared by `report`, `compare`, `predict` and `spotcheck`.
#[derive(Debug, Args, Clone)]
pub struct StudyArgs {
    /// A study file (`study.toml`), or transcript files and run directories. With no argument,
    /// the sample study of a checkout (`samples/study/study.toml`).
    pub study_or_inputs: Vec<PathBuf>,
    /// The study file, named explicitly (the same as giving it as the only argument).
    #[arg(long, value_name = "STUDY.toml")]
    pub study: Option<PathBuf>,
    /// An arm from a path: `--arm "mini, think=runs/a"`. Repeatable; replaces arms taken from
    /// metadata.
    #[arg(long, value_name = "NAME=PATH")]
    pub arm: Vec<String>,
    /// A directory with `taxonomy.toml`, `harnesses/*.toml` and/or `formats/*.toml` overriding
    /// or adding to the built-ins.
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// A tool registry applied to every arm (study arms may name their own). Repeatable.
    #[arg(long, value_name = "FILE")]
    pub registry: Vec<PathBuf>,
    /// Parse every transcript as this format instead of detecting it (`ingest --list-formats`),
    /// as `ingest --format` does.
    #[arg(long = "input-format", value_name = "NAME")]
    pub input_format: Option<String>,
    /// Print the tables only, not the ingest diagnostics.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Report on a study: arms, failure modes, mechanics, per task; Markdown, CSV, Parquet, JSON, charts.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub study: StudyArgs,
    /// Write every table (CSV, Parquet, JSON), the verdicts, the Markdown, the charts and the
    /// HTML report (in `DIR/html`) here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write the HTML report here (a static site: open `DIR/index.html`); instead of
    /// `--out`'s `html/` when both are given.
    #[arg(long, value_name = "DIR")]
    pub html: Option<PathBuf>,
    /// With `--out`, leave the HTML report out.
    #[arg(long, conflicts_with = "html")]
    pub no_html: bool,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t)]
    pub format: ReportFormat,
    /// Fail (exit 1) when a threshold is crossed: `"infrastructure > 5%"`,
    /// `"pass_rate('arm a') < 0.40"`, `"unclassified > 3%"`. Repeatable; each is checked for
    /// every arm unless it names one. The checks are listed in the tables, the Markdown and
    /// `--junit`.
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,
    /// Write the `--fail-if` checks as JUnit XML here (one testcase per threshold and arm).
    #[arg(long, value_name = "FILE", requires = "fail_if")]
    pub junit: Option<PathBuf>,
    /// Chart formats to write into --out: `svg`, `png`, or both (`svg,png`, the default).
    #[arg(long, value_delimiter = ',', default_value = "svg,png")]
    pub charts: Vec<String>,
}

/// What `report` and `compare` read: each arm's tally, and the study of transcripts behind
/// them (`None` for a dataset of verdicts, which is tallied as it is read and never held).
pub struct Tallied {
    pub run: Option<StudyRun>,
    pub title: Option<String>,
    pub arms: Vec<ArmTally>,
    pub quarantined: usize,
    pub rules: Rules,
}

impl Tallied {
    #[must_use]
    pub fn arm(&self, name: &str) -> Option<&ArmTally> {
        self.arms.iter().find(|x| x.name == name).or_else(|| self.arms.iter().find(|x| x.name.eq_ignore_ascii_case(name)))
    }
}

/// The dataset directory the arguments name, if they name one (and no `--arm`).
fn dataset_dir(a: &StudyArgs) -> Option<PathBuf> {
    let named: Vec<&PathBuf> = a.study_or_inputs.iter().chain(&a.study).collect();
    match named.as_slice() {
        [dir] if a.arm.is_empty() && !crate::study::dataset::parts(dir).is_empty() => Some((*dir).clone()),
        _ => None,
    }
}

/// [`load_study_with`], tallied; a dataset is tallied part by part instead.
pub fn load_tallies(a: &StudyArgs, also: Option<&mut Also<'_>>) -> Result<Tallied, CliError> {
    if let Some(dir) = dataset_dir(a)
        && also.is_none()
    {
        let rules = Rules::load(a.rules.as_deref()).map_err(CliError::invalid)?;
        // Each arm tallied as its verdicts are read, none held; the order of the parts does not
        // change a tally.
        let mut arms: std::collections::BTreeMap<String, ArmTally> = std::collections::BTreeMap::new();
        let (quarantined, unread) = crate::study::dataset::for_each(&dir, &mut |v| {
            let t = arms.entry(v.arm_or_harness()).or_insert_with_key(|name| ArmTally::new(name, false));
            let at = t.trials as usize;
            t.add(&v, at);
        });
        if !a.quiet {
            super::output::print_diagnostics(&unread);
        }
        return Ok(Tallied { run: None, title: None, arms: arms.into_values().collect(), quarantined, rules });
    }
    let (run, rules, _) = load_study_with(a, also)?;
    let arms = run.arms.iter().map(|x| ArmTally::of(&x.name, &x.verdicts)).collect();
    Ok(Tallied { title: run.title.clone(), quarantined: run.quarantined(), arms, run: Some(run), rules })
}

/// Loads the rules and runs the study (or the inputs) the arguments name.
pub fn load_study(a: &StudyArgs) -> Result<(StudyRun, Rules, Option<PathBuf>), CliError> {
    load_study_with(a, None)
}

/// [`load_study`], with [`Also`] applied to every trajectory as it is classified.
pub fn load_study_with(a: &StudyArgs, also: Option<&mut Also<'_>>) -> Result<(StudyRun, Rules, Option<PathBuf>), CliError> {
    let rules = Rules::load(a.rules.as_deref()).map_err(CliError::invalid)?;
    let mut inputs = a.study_or_inputs.clone();
    if let Some(s) = &a.study {
        if !inputs.is_empty() {
            return Err(CliError::usage("failed to read the arguments: --study and inputs were both given")
                .with_help("give --study or inputs, not both"));
        }
        inputs.push(s.clone());
    }
    if inputs.is_empty() && a.arm.is_empty() {
        if Path::new(DEFAULT_STUDY).exists() {
            inputs.push(PathBuf::from(DEFAULT_STUDY));
        } else {
            return Err(CliError::usage("failed to find a study: name a study file or transcripts")
                .with_help(format!("from a coroner checkout, `coroner report` runs {DEFAULT_STUDY}")));
        }
    }
    // A dataset of verdicts (the Parquet parts of a sharded run) stands for its transcripts.
    if let Some(dir) = dataset_dir(a) {
        if also.is_some() {
            return Err(CliError::usage(format!(
                "failed to write the HTML report of {}: a dataset holds verdicts, not the trajectories its pages show",
                dir.display()
            ))
            .with_help("give the transcripts (or the study file) for --html, or leave it out (--no-html with --out)"));
        }
        let (run, unread) = crate::study::dataset::study(&dir, &rules.digest);
        if !a.quiet {
            super::output::print_diagnostics(&unread);
        }
        return Ok((run, rules, None));
    }
    let mut diagnostics = Vec::new();
    let study_file = (inputs.len() == 1 && inputs[0].extension().is_some_and(|e| e == "toml")).then(|| inputs[0].clone());
    let result = if let Some(path) = &study_file {
        let (study, arms) = Study::load(path).map_err(CliError::invalid)?;
        crate::study::run_study(study.title, &arms, &rules, &a.registry, a.input_format.as_deref(), &mut diagnostics, also)
    } else {
        let mut named = Vec::new();
        for s in &a.arm {
            match s.rsplit_once('=') {
                Some((n, p)) if !n.is_empty() && !p.is_empty() => named.push((n.to_string(), PathBuf::from(p))),
                _ => {
                    return Err(CliError::usage(format!("failed to read --arm `{s}`: expected NAME=PATH"))
                        .with_help("name the arm and its path: --arm \"mini, think=runs/a\""));
                }
            }
        }
        crate::study::run_inputs(&inputs, &named, &rules, &a.registry, a.input_format.as_deref(), &mut diagnostics, also)
    };
    let run = result.map_err(CliError::invalid)?;
    if !a.quiet {
        super::output::print_diagnostics(&diagnostics);
    }
    Ok((run, rules, study_file))
}

pub fn run(a: &ReportArgs) -> Result<Done, CliError> {
    // Thresholds are read before anything runs: a typo should not cost a study's run.
    let thresholds = a.fail_if.iter().map(|t| crate::report::gate::parse(t)).collect::<Result<Vec<_>, _>>().map_err(CliError::invalid)?;
    let site = a.html.clone().or_else(|| a.out.as_ref().filter(|_| !a.no_html).map(|o| o.join("html")));
    let site_error = |dir: &Path, e: std::io::Error| CliError::write(format!("the HTML report to {}", dir.display()), e);
    // Trajectory pages are written while each trajectory is in memory, as the study runs.
    let mut pages = match &site {
        Some(dir) => Some(Pages::create(dir).map_err(|e| site_error(dir, e))?),
        None => None,
    };
    let t = match pages.as_mut() {
        Some(p) => {
            let mut sink = |arm: &str, i: usize, parts: Vec<String>| p.write(arm, i, parts);
            let mut also = Also { map: &Pages::render, sink: &mut sink };
            load_tallies(&a.study, Some(&mut also))?
        }
        None => load_tallies(&a.study, None)?,
    };
    let mut report = crate::report::tables::build_from(t.title.as_deref(), &t.arms, t.quarantined, &t.rules);
    drop(t.arms);
    report.gates = crate::report::gate::check(&thresholds, &report, &t.rules).map_err(CliError::invalid)?;
    let text = match a.format {
        ReportFormat::Table => {
            let fit = if std::io::stdout().is_terminal() { Fit::Terminal } else { Fit::None };
            crate::report::render::terminal(&report, fit)
        }
        ReportFormat::Markdown => crate::report::render::markdown(&report),
        ReportFormat::Json => super::output::json_text(&report),
    };
    super::output::print_stdout(&text).map_err(|e| CliError::write("the report", e))?;
    if let Some(dir) = &a.out {
        let charts = ChartFormats { svg: a.charts.iter().any(|c| c == "svg"), png: a.charts.iter().any(|c| c == "png") };
        let files = crate::report::export::write_all(dir, t.run.as_ref(), &report, charts)
            .map_err(|e| CliError::write(format!("the report to {}", dir.display()), e))?;
        super::output::print_stderr(&format!("coroner report: wrote {} files to {}\n", files.len(), dir.display()));
    }
    if let (Some(dir), Some(pages), Some(run)) = (&site, pages, &t.run) {
        let s = crate::report::html::finish(pages, run, &report).map_err(|e| site_error(dir, e))?;
        super::output::print_stderr(&format!(
            "coroner report: wrote the HTML report ({} pages, {:.1} MB) to {}; open {}\n",
            s.pages,
            s.bytes as f64 / 1e6,
            dir.display(),
            dir.join("index.html").display()
        ));
    }
    if let Some(path) = &a.junit {
        std::fs::write(path, crate::report::gate::junit(&report.title, &report.gates)).map_err(|e| CliError::write(path.display(), e))?;
    }
    let crossed: Vec<String> = report
        .gates
        .iter()
        .filter(|g| g.crossed)
        .map(|g| format!("`{}` for arm {} ({:.1}%)", g.threshold, g.arm, 100.0 * g.value))
        .collect();
    if !crossed.is_empty() {
        super::output::print_stderr(&format!("coroner report: threshold crossed: {}\n", crossed.join("; ")));
        return Ok(Done::Gate);
    }
    Ok(Done::partial_if(report.quarantined > 0))
}
