//! `coroner predict`: seal predictions before a run, check them after it, retract one.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::report::{ReportFormat, StudyArgs};
use super::{CliError, Done};
use crate::predict::{self, DesignInfo, Loaded, Lock};
use crate::report::render::Fit;
use crate::rules::Rules;
use crate::study::Study;

/// Pre-registered predictions: seal them before a run, check them after it in CI.
#[derive(Debug, Args)]
pub struct PredictArgs {
    #[command(subcommand)]
    pub command: PredictCommand,
}

#[derive(Debug, Subcommand)]
pub enum PredictCommand {
    Seal(SealArgs),
    Check(CheckArgs),
    Retract(RetractArgs),
}

/// Seal a predictions file before the run: write a lock with sha256 of the predictions
/// (retractions left out), the rules in force and every registry, the coroner version, the time
/// and the git commit, and print what each prediction's design can detect.
#[derive(Debug, Args)]
pub struct SealArgs {
    /// The predictions file (`predictions.toml`).
    pub predictions: PathBuf,
    /// The study the predictions are about: its arms are checked, its registries sealed, and
    /// its transcripts, if they exist already, counted for n.
    #[arg(long, value_name = "STUDY.toml")]
    pub study: Option<PathBuf>,
    /// A directory with `taxonomy.toml`, `harnesses/*.toml` and/or `formats/*.toml` overriding
    /// or adding to the built-ins (all sealed in the rules digest).
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// A tool registry applied to every arm (sealed as well). Repeatable.
    #[arg(long, value_name = "FILE")]
    pub registry: Vec<PathBuf>,
    /// Where to write the lock (default: the predictions file with extension `.lock`).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Tasks per arm, for the power figures when the study's transcripts do not exist yet.
    #[arg(long)]
    pub n: Option<u64>,
    /// The seal's time (RFC 3339) instead of the clock; `COR_NOW` does the same.
    #[arg(long, value_name = "TIME")]
    pub now: Option<String>,
    /// Replace an existing lock (the old one stays in git history).
    #[arg(long)]
    pub force: bool,
    /// Seal although the study's transcripts already exist. The lock records how many did, and
    /// `check` reports the seal as late: its claims could have been written from the outcomes.
    #[arg(long)]
    pub allow_late: bool,
}

/// Check sealed predictions against a run: refuse a tampered or late seal, judge every claim
/// (confirmed, refuted, inconclusive; Holm across claims), print each refuted claim's escape
/// clause. Exit 0 when none is refuted, 1 when one is, 2 when the seal or the file is broken.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The predictions file.
    pub predictions: PathBuf,
    #[command(flatten)]
    pub study: StudyArgs,
    /// The lock (default: the predictions file with extension `.lock`).
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
    /// Check a seal made after the run's first trajectory, reporting it as late.
    #[arg(long)]
    pub allow_late: bool,
    /// Write JUnit XML here (one testcase per prediction; refuted ones fail).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the Markdown report here (for a pull-request comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t)]
    pub format: ReportFormat,
}

/// Retract a prediction: record `retracted = { note, at }` beside its claim, keeping the rest of
/// the file as it is. The seal stays valid; the prediction is reported as retracted.
#[derive(Debug, Args)]
pub struct RetractArgs {
    /// The prediction's id.
    pub id: String,
    /// Why it is withdrawn.
    #[arg(long)]
    pub note: String,
    /// The predictions file.
    #[arg(default_value = "predictions.toml")]
    pub predictions: PathBuf,
    /// The retraction's time (RFC 3339) instead of the clock; `COR_NOW` does the same.
    #[arg(long, value_name = "TIME")]
    pub now: Option<String>,
}

pub fn run(a: &PredictArgs) -> Result<Done, CliError> {
    match &a.command {
        PredictCommand::Seal(s) => seal(s),
        PredictCommand::Check(c) => check(c),
        PredictCommand::Retract(r) => retract(r),
    }
}

/// The claim in words, marked when retracted (its design is still shown: a retraction does not
/// change what was sealed).
fn claim_text(p: &predict::Prediction) -> String {
    let c = predict::check::describe(&p.claim);
    if p.retracted.is_some() { format!("{c} (retracted)") } else { c }
}

fn default_lock(predictions: &Path) -> PathBuf {
    predictions.with_extension("lock")
}

fn fit() -> Fit {
    if std::io::stdout().is_terminal() { Fit::Terminal } else { Fit::None }
}

/// `path` relative to `dir` (`../study/study.toml` from `samples/predictions`), so a lock names
/// its study the same way from any working directory; `path` as given when either is missing.
fn relative_to(path: &Path, dir: &Path) -> PathBuf {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let (Ok(p), Ok(d)) = (path.canonicalize(), dir.canonicalize()) else { return path.to_path_buf() };
    let (pc, dc): (Vec<_>, Vec<_>) = (p.components().collect(), d.components().collect());
    let common = pc.iter().zip(&dc).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..dc.len() {
        out.push("..");
    }
    for c in &pc[common..] {
        out.push(c);
    }
    out
}

/// Writes `text` to `path` through a temporary file beside it, so a failure never leaves half a file.
fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.coroner-tmp"));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn seal(a: &SealArgs) -> Result<Done, CliError> {
    let loaded = Loaded::read(&a.predictions).map_err(CliError::invalid)?;
    let rules = Rules::load(a.rules.as_deref()).map_err(CliError::invalid)?;
    loaded.check_classes(&rules.taxonomy.precedence).map_err(CliError::invalid)?;
    let sealed_at = predict::seal::now(a.now.as_deref()).map_err(now_error)?;
    let mut registries = std::collections::BTreeMap::new();
    let mut registry_paths: Vec<PathBuf> = Vec::new();
    let mut design = DesignInfo { n: a.n, ..DesignInfo::default() };
    let mut existing = 0;
    if let Some(study_path) = &a.study {
        // The transcripts usually do not exist yet: the arms and registries are read from the
        // file itself, and n from the transcripts only when they are there.
        let base = study_path.parent().unwrap_or(Path::new(""));
        let (arm_names, arms) = match Study::load(study_path) {
            Ok((s, arms)) => (s.arms.iter().map(|x| x.name.clone()).collect::<Vec<_>>(), Some(arms)),
            Err(e) => match std::fs::read_to_string(study_path).ok().and_then(|t| toml::from_str::<Study>(&t).ok()) {
                Some(s) if !s.arms.is_empty() => {
                    super::output::note(&format!("{e} (n comes from --n until the transcripts exist)"));
                    registry_paths.extend(s.arms.iter().filter_map(|x| x.registry.as_ref()).map(|r| base.join(r)));
                    (s.arms.iter().map(|x| x.name.clone()).collect(), None)
                }
                _ => return Err(CliError::invalid(e)),
            },
        };
        loaded.check_arms(&arm_names).map_err(CliError::invalid)?;
        if let Some(arms) = arms {
            registry_paths.extend(arms.iter().filter_map(|x| x.registry.clone()));
            (design, existing) = design_of(&arms, a.n, &rules).map_err(CliError::invalid)?;
        }
    }
    registry_paths.extend(a.registry.iter().cloned());
    for r in &registry_paths {
        let reg = crate::study::run::load_registry(r).map_err(CliError::invalid)?;
        registries.insert(reg.file, reg.registry.content_digest());
    }
    if existing > 0 && !a.allow_late {
        return Err(CliError::usage(format!(
            "failed to seal: the study's transcripts already exist ({existing} {}), so these claims could have been written from their outcomes",
            if existing == 1 { "trajectory" } else { "trajectories" }
        ))
        .with_help(
            "seal before the run, or give --n instead of a study whose transcripts exist; `--allow-late` seals anyway and `check` reports it as late",
        ));
    }
    let out = a.output.clone().unwrap_or_else(|| default_lock(&a.predictions));
    if out.exists() && !a.force {
        return Err(CliError::usage(format!("failed to seal: {} exists", out.display()))
            .with_help("a seal is made once, before the run; `--force` replaces it (the old one stays in git history)"));
    }
    let Ok(digest) = predict::predictions_digest(&loaded.text) else {
        return Err(CliError::usage(format!("failed to digest {}: it is not TOML", loaded.shown)));
    };
    let alpha = loaded.file.alpha;
    let rows: Vec<(String, predict::Detectable)> =
        loaded.file.predictions.iter().map(|p| (claim_text(p), predict::detectable(p, &design, alpha))).collect();
    let dir = a.predictions.parent().unwrap_or(Path::new(""));
    let lock = Lock {
        format: predict::seal::LOCK_FORMAT,
        coroner_version: env!("CARGO_PKG_VERSION").into(),
        sealed_at: sealed_at.clone(),
        clock: predict::seal::time_given(a.now.as_deref()).then(|| "given".to_string()),
        git_commit: predict::seal::git_commit(dir),
        predictions_file: a.predictions.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        predictions_sha256: digest,
        rules_sha256: rules.digest.clone(),
        study: a.study.as_ref().map(|s| crate::util::display_path(&relative_to(s, out.parent().unwrap_or(Path::new(""))))),
        registries,
        design: rows.iter().map(|(_, d)| d.clone()).collect(),
        sealed_over: (existing > 0).then_some(existing),
        seal_sha256: String::new(),
    };
    let text = lock.to_toml().map_err(|e| CliError::write("the lock", e))?;
    write_file(&out, &text).map_err(|e| CliError::write(out.display(), e))?;
    if existing > 0 {
        super::output::warning(&format!(
            "sealed over {existing} existing trajectories: `predict check` refuses this seal as late without --allow-late"
        ));
    }
    let mut msg = format!(
        "sealed {} into {} at {sealed_at} (coroner {}{})\n",
        loaded.shown,
        crate::util::display_path(&out),
        lock.coroner_version,
        lock.git_commit.as_deref().map(|c| format!(", commit {}", c.get(..12).unwrap_or(c))).unwrap_or_default()
    );
    msg.push_str(&format!(
        " predictions {}, rules {}, {} {}\n",
        &lock.predictions_sha256[..12.min(lock.predictions_sha256.len())],
        &lock.rules_sha256[..12.min(lock.rules_sha256.len())],
        lock.registries.len(),
        if lock.registries.len() == 1 { "registry" } else { "registries" }
    ));
    let n_from = if a.n.is_some() {
        "n from --n".to_string()
    } else if design.tasks.is_empty() {
        "n unknown: pass --n, or seal with a study whose transcripts exist".to_string()
    } else {
        format!(
            "n from the study: {}",
            design.tasks.iter().map(|(arm, t)| format!("{arm} {} tasks", t.len())).collect::<Vec<_>>().join(", ")
        )
    };
    msg.push_str(&format!("\nWhat this design can detect ({n_from}; one-sided α = {alpha}, 80% power)\n"));
    msg.push_str(&predict::render::design(&rows, fit()));
    let under = rows.iter().filter(|(_, d)| d.underpowered).count();
    if under > 0 {
        msg.push_str(&format!(
            "{under} {} underpowered: this design can never confirm or never refute {}; widen the claim, add tasks, or retract it before the run\n",
            if under == 1 { "prediction is" } else { "predictions are" },
            if under == 1 { "it" } else { "them" }
        ));
    }
    super::output::print_stdout(&msg).map_err(|e| CliError::io(format!("failed to print: {e}")))?;
    Ok(Done::Success)
}

/// `--now` or `COR_NOW` is not a time.
fn now_error(e: impl std::fmt::Display) -> CliError {
    CliError::usage(format!("failed to read --now or COR_NOW: {e}")).with_help("give an RFC 3339 time, such as 2026-02-19T12:00:00Z")
}

fn check(a: &CheckArgs) -> Result<Done, CliError> {
    let loaded = Loaded::read(&a.predictions).map_err(CliError::invalid)?;
    let lock_path = a.lock.clone().unwrap_or_else(|| default_lock(&a.predictions));
    let lock = Lock::read(&lock_path).map_err(CliError::invalid)?;
    let (run, rules, _) = super::report::load_study(&a.study)?;
    let lock_shown = crate::util::display_path(&lock_path);
    let title = loaded.file.title.clone().unwrap_or_else(|| loaded.shown.clone());
    let mut report = match predict::check(&loaded, &lock, &lock_shown, &run, &rules.taxonomy.precedence, a.allow_late) {
        Ok(r) => r,
        Err(e) => {
            // A broken seal is still one errored testcase for CI: the JUnit file says so.
            let junit = match (&a.junit, &e) {
                (Some(path), predict::check::CheckError::Seal(s)) => {
                    write_file(path, &predict::junit::seal_failure(&title, &lock_shown, &s.problems))
                        .err()
                        .map(|err| CliError::write(path.display(), err))
                }
                _ => None,
            };
            let broken = CliError::invalid(e);
            return Err(match junit {
                Some(j) => broken.also(j),
                None => broken,
            });
        }
    };
    // A seal cannot precede the commit it was made at: a commit dated later than the seal says
    // the seal's time was set back.
    let lock_dir = lock_path.parent().unwrap_or(Path::new(""));
    report.seal.commit_after_seal = lock
        .git_commit
        .as_deref()
        .and_then(|c| predict::seal::commit_time(lock_dir, c))
        .filter(|t| crate::util::parse_time(t).zip(crate::util::parse_time(&lock.sealed_at)).is_some_and(|(c, s)| c > s));
    let text = match a.format {
        ReportFormat::Table => predict::render::terminal(&report, fit()),
        ReportFormat::Markdown => predict::render::markdown(&report),
        ReportFormat::Json => super::output::json_text(&report),
    };
    super::output::print_stdout(&text).map_err(|e| CliError::io(format!("failed to print the check: {e}")))?;
    for (path, body) in [(&a.markdown, predict::render::markdown(&report)), (&a.junit, predict::junit::junit(&report))] {
        if let Some(path) = path {
            write_file(path, &body).map_err(|e| CliError::write(path.display(), e))?;
        }
    }
    Ok(if report.refuted_any() { Done::Gate } else { Done::partial_if(report.quarantined > 0) })
}

fn retract(a: &RetractArgs) -> Result<Done, CliError> {
    if a.note.trim().is_empty() {
        return Err(
            CliError::usage(format!("failed to retract `{}`: the note is empty", a.id)).with_help("say why it is withdrawn: --note \"…\"")
        );
    }
    let shown = crate::util::display_path(&a.predictions);
    let text = std::fs::read_to_string(&a.predictions).map_err(|e| CliError::usage(format!("failed to read {shown}: {e}")))?;
    let at = predict::seal::now(a.now.as_deref()).map_err(now_error)?;
    let edited = predict::retract(&text, &a.id, a.note.trim(), &at).map_err(|e| CliError::usage(e.to_string()))?;
    write_file(&a.predictions, &edited).map_err(|e| CliError::write(&shown, e))?;
    let msg = format!(
        "retracted `{}` in {shown} at {at}: {}\n the seal stays valid: predictions_sha256 leaves out `retracted` entries; commit the file so its history records the retraction\n",
        a.id,
        a.note.trim()
    );
    super::output::print_stdout(&msg).map_err(|e| CliError::io(format!("failed to print: {e}")))?;
    Ok(Done::Success)
}

/// The tasks each arm's transcripts hold (ingested, not classified), and how many trajectories
/// exist already, so a seal made over them can say so. The rules' format mappings are read too:
/// a transcript only a mapping recognizes is a trajectory the study will classify.
fn design_of(arms: &[crate::study::ResolvedArm], n: Option<u64>, rules: &Rules) -> Result<(DesignInfo, u64), crate::ingest::IngestError> {
    let mut tasks = std::collections::BTreeMap::new();
    let mut existing = 0u64;
    for arm in arms {
        let opts = crate::ingest::IngestOptions {
            inputs: arm.inputs.clone(),
            verdicts: arm.verdicts.iter().cloned().collect(),
            formats: rules.formats.clone(),
            ..crate::ingest::IngestOptions::default()
        };
        let mut ids = std::collections::BTreeSet::new();
        crate::ingest::run(&opts, &mut |t| {
            existing += 1;
            ids.insert(t.task_id);
            Ok(())
        })?;
        tasks.insert(arm.spec.name.clone(), ids);
    }
    Ok((DesignInfo { tasks, n }, existing))
}
