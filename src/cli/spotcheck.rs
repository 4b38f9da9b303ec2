//! `coroner spotcheck`: draw a blind sample to label by hand, score the labels against the
//! classifier, audit a set of human labels.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::classify::ClassifyOptions;
use super::{CliError, Done};
use crate::classify::Classifier;
use crate::ingest::IngestOptions;
use crate::model::Verdict;
use crate::report::sanitize;
use crate::spotcheck::audit::{self, Facts};
use crate::spotcheck::labels::Vocabulary;
use crate::spotcheck::sample::{self, Key, KeyItem, SampleOptions, SheetRow};
use crate::spotcheck::score;
use crate::util::display_path;

/// Spot-check the classifier by hand: sample, label, score; audit existing labels.
#[derive(Debug, Args)]
pub struct SpotcheckArgs {
    #[command(subcommand)]
    pub command: SpotcheckCommand,
}

#[derive(Debug, Subcommand)]
pub enum SpotcheckCommand {
    Sample(SampleArgs),
    Score(ScoreArgs),
    Audit(AuditArgs),
}

/// Draw a stratified, blind sample of classified trajectories for a person to label.
///
/// Up to N failed trajectories per primary class (and --passed N that passed), chosen with a
/// seeded generator and listed in random order. The sheet (CSV) says where to look — the
/// evidence steps and a `coroner show --blind` command — but not what the classifier said;
/// its labels go to the key, which the labeller must not see. The same seed and inputs give
/// byte-identical files. Fill in `human_label` with a class of the taxonomy (`coroner rules
/// list`) or `passed`, then run `coroner spotcheck score`.
#[derive(Debug, Args)]
pub struct SampleArgs {
    /// Transcript files, run directories or coroner JSONL (classified as by `classify`), or a
    /// study file: its arms' inputs, each classified with the arm's registry, verdicts and budgets.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Failed trajectories per primary class, at most.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub per_class: usize,
    /// Also draw up to N trajectories that passed.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub passed: usize,
    /// Seed of the ChaCha8 generator that draws and orders the sample.
    #[arg(long, value_name = "S", default_value_t = crate::stats::DEFAULT_SEED)]
    pub seed: u64,
    /// The sheet to write (CSV).
    #[arg(short, long, value_name = "SHEET.csv")]
    pub output: PathBuf,
    /// The key to write (JSON); default: the sheet's name with `.key.json`.
    #[arg(long, value_name = "KEY.json")]
    pub key: Option<PathBuf>,
    #[command(flatten)]
    pub classify: ClassifyOptions,
    /// Print the summary only, not the ingest diagnostics.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ScoreFormat {
    #[default]
    Table,
    Markdown,
    Json,
}

/// Score a labelled sheet against the classifier's labels in the key.
///
/// Prints the confusion matrix (human × machine, classes in precedence order), raw agreement,
/// Cohen's kappa with its 95% interval and its Landis–Koch reading, per-class precision and
/// recall with Wilson intervals, and the majority-class baseline. Rows without a label are
/// skipped and counted; labels outside the taxonomy are listed with their rows.
#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// The sheet from `spotcheck sample`, with `human_label` filled in.
    pub sheet: PathBuf,
    /// The key written with the sheet.
    #[arg(long, value_name = "KEY.json")]
    pub key: PathBuf,
    #[arg(long, value_enum, default_value_t = ScoreFormat::Table)]
    pub format: ScoreFormat,
    /// A rules directory whose taxonomy gives the labels and their order.
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum AuditFormat {
    #[default]
    Text,
    Json,
}

/// Check human labels against the structure of the trajectories; a gate for CI.
///
/// LABELS is a CSV with `trajectory_id` or `task_id`, `label`, and optionally `steps`. Reports,
/// with its row, every label outside the taxonomy, id that names no trajectory, failure class
/// on a trajectory that passed (and `passed` on one that failed), `budget_exhausted` on a run
/// that ended with budget left, and step beyond the end. Exits 1 when it finds a problem,
/// 0 when the labels are clean.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The labels (CSV).
    pub labels: PathBuf,
    /// The runs the labels describe.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    #[command(flatten)]
    pub classify: ClassifyOptions,
    #[arg(long, value_enum, default_value_t = AuditFormat::Text)]
    pub format: AuditFormat,
}

pub fn run(a: &SpotcheckArgs) -> Result<Done, CliError> {
    match &a.command {
        SpotcheckCommand::Sample(s) => run_sample(s),
        SpotcheckCommand::Score(s) => run_score(s),
        SpotcheckCommand::Audit(s) => run_audit(s),
    }
}

/// Classifies `inputs`; returns the pairs `map` makes of each trajectory and its verdict.
fn classify_all<T: Send>(
    c: &Classifier,
    o: &ClassifyOptions,
    inputs: &[PathBuf],
    quiet: bool,
    map: &(dyn Fn(&crate::model::Trajectory, Verdict) -> T + Sync),
) -> Result<(Vec<T>, bool), CliError> {
    let opts =
        IngestOptions { inputs: inputs.to_vec(), verdicts: o.verdicts.clone(), format: o.input_format.clone(), ..IngestOptions::default() };
    let mut out = Vec::new();
    let summary = crate::pipeline::run_map(
        &opts,
        &c.rules,
        &|t| {
            let v = c.classify(&t);
            map(&t, v)
        },
        &mut |x| {
            out.push(x);
            Ok(())
        },
    )
    .map_err(CliError::invalid)?;
    if !quiet {
        super::output::print_diagnostics(&summary.diagnostics);
    }
    Ok((out, summary.is_partial()))
}

/// The inputs to classify, each with the options it is classified with: a study file stands for
/// its arms' inputs, each with the arm's registry, verdicts and budgets added to the command
/// line's.
fn input_groups(inputs: &[PathBuf], o: &ClassifyOptions) -> Result<Vec<(PathBuf, ClassifyOptions)>, CliError> {
    let mut out = Vec::new();
    for input in inputs {
        if !(input.is_file() && input.extension().is_some_and(|e| e == "toml")) {
            out.push((input.clone(), o.clone()));
            continue;
        }
        let (_, arms) = crate::study::Study::load(input).map_err(CliError::invalid)?;
        for arm in arms {
            let b = &arm.spec.budget;
            let mut opts = o.clone();
            opts.registry.extend(arm.registry.clone());
            opts.verdicts.extend(arm.verdicts.clone());
            opts.step_limit = o.step_limit.or(b.step_limit);
            opts.time_limit = o.time_limit.or(b.time_limit_seconds);
            opts.cost_limit = o.cost_limit.or(b.cost_limit_usd);
            opts.token_limit = o.token_limit.or(b.token_limit);
            out.extend(arm.inputs.iter().map(|p| (p.clone(), opts.clone())));
        }
    }
    Ok(out)
}

fn run_sample(a: &SampleArgs) -> Result<Done, CliError> {
    let key_path = a.key.clone().unwrap_or_else(|| {
        let stem = a.output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "sheet".into());
        a.output.with_file_name(format!("{stem}.key.json"))
    });
    if key_path == a.output {
        return Err(CliError::usage(format!("failed to write the key: it would overwrite the sheet {}", a.output.display()))
            .with_help("give --key another file"));
    }
    let groups = input_groups(&a.inputs, &a.classify)?;
    // One input at a time, so each item's `show` command names the input it came from and
    // reads it the same way (a coroner JSONL's records carry their original source paths).
    let (mut verdicts, mut input_of, mut partial) = (Vec::new(), Vec::new(), false);
    let mut rules = None;
    for (k, (input, opts)) in groups.iter().enumerate() {
        let c = opts.classifier()?;
        let (vs, p) = classify_all(&c, opts, std::slice::from_ref(input), a.quiet, &|_, v| v)?;
        input_of.extend(std::iter::repeat_n(k, vs.len()));
        verdicts.extend(vs);
        partial |= p;
        rules.get_or_insert(c.rules);
    }
    let rules = rules.map_or_else(|| crate::rules::Rules::load(a.classify.rules.as_deref()), Ok).map_err(CliError::invalid)?;
    let o = SampleOptions { per_class: a.per_class, passed: a.passed, seed: a.seed };
    let (chosen, strata) = sample::draw(&verdicts, &rules.taxonomy.precedence, &o);
    let mut rows = Vec::new();
    let mut items = Vec::new();
    for (k, &i) in chosen.iter().enumerate() {
        let v = &verdicts[i];
        let item = u32::try_from(k + 1).unwrap_or(u32::MAX);
        let source = v.source.clone().unwrap_or_default();
        let (input, opts) = &groups[input_of[i]];
        let input = display_path(input);
        rows.push(SheetRow {
            item,
            trajectory_id: v.trajectory_id.clone(),
            task_id: v.task_id.clone(),
            file: source,
            steps: sample::sheet_steps(v),
            show: sample::show_command(&input, &v.trajectory_id, &opts.as_args()),
        });
        items.push(KeyItem::of(item, v));
    }
    let key = Key {
        coroner_version: env!("CARGO_PKG_VERSION").to_string(),
        seed: a.seed,
        per_class: a.per_class,
        passed: a.passed,
        rules_digest: rules.digest.clone(),
        inputs: a.inputs.iter().map(|p| display_path(p)).collect(),
        strata: strata.clone(),
        items,
    };
    for (path, text) in [(&a.output, sample::sheet_csv(&rows)), (&key_path, sample::key_json(&key))] {
        std::fs::write(path, text).map_err(|e| CliError::write(path.display(), e))?;
    }
    let mut msg = format!("coroner spotcheck sample: {} items from {} trajectories (seed {})\n", rows.len(), verdicts.len(), a.seed);
    for s in &strata {
        msg.push_str(&format!("  {:<24} {:>4} of {:>5}\n", sanitize::terminal(&s.class), s.sampled, s.population));
    }
    msg.push_str(&format!(
        "  sheet -> {}\n  key   -> {} (the machine's labels: keep it from the labeller)\n",
        sanitize::terminal(&display_path(&a.output)),
        sanitize::terminal(&display_path(&key_path))
    ));
    if rows.is_empty() {
        msg.push_str("  warning: nothing to sample: no failed trajectory (and no passed one asked for)\n");
    }
    super::output::print_stderr(&msg);
    Ok(Done::partial_if(partial))
}

fn run_score(a: &ScoreArgs) -> Result<Done, CliError> {
    let rules = crate::rules::Rules::load(a.rules.as_deref()).map_err(CliError::invalid)?;
    let (sheet, key) = match (score::read_sheet(&a.sheet), score::read_key(&a.key)) {
        (Ok(s), Ok(k)) => (s, k),
        (Err(e), _) | (_, Err(e)) => return Err(CliError::invalid(e)),
    };
    let s = score::score(&sheet, &key, &Vocabulary::new(&rules.taxonomy.precedence), &rules.digest);
    let text = match a.format {
        ScoreFormat::Table => score::render_table(&s),
        ScoreFormat::Markdown => score::render_markdown(&s),
        ScoreFormat::Json => super::output::json_text(&s),
    };
    print_out(&text)?;
    Ok(Done::Success)
}

fn run_audit(a: &AuditArgs) -> Result<Done, CliError> {
    let rows = audit::read_labels(&a.labels).map_err(CliError::invalid)?;
    let c = a.classify.classifier()?;
    let limit = a.classify.step_limit;
    let (facts, partial) = classify_all(&c, &a.classify, &a.runs, false, &|t, v| {
        let step_limit = limit.or(c.rules.profile_for(&t.harness).step_limit);
        Facts::of(t, &v, step_limit)
    })?;
    let report = audit::audit(&rows, &facts, &Vocabulary::new(&c.rules.taxonomy.precedence));
    let text = match a.format {
        AuditFormat::Text => audit::render_text(&report),
        AuditFormat::Json => super::output::json_text(&report),
    };
    print_out(&text)?;
    Ok(if report.is_clean() { Done::partial_if(partial) } else { Done::Gate })
}

/// Writes to stdout; a closed pipe is success.
fn print_out(text: &str) -> Result<(), CliError> {
    super::output::print_stdout(text).map_err(|e| CliError::io(format!("failed to write: {e}")))
}
