//! Helpers shared by the test modules.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use coroner::classify::{Classifier, Options};
use coroner::ingest::{IngestOptions, Summary};
use coroner::model::{Trajectory, Verdict};
use coroner::rules::Rules;

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/corpus/<sub>`, or `None` (with a visible message) when `../shared` is absent, so
/// a fresh clone without it still passes.
pub fn corpus(sub: &str) -> Option<PathBuf> {
    let p = root().join("../shared/corpus").join(sub);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("SKIPPED: {} is absent (tests on the real corpus need ../shared)", p.display());
        None
    }
}

/// `../shared/<sub>` for non-corpus material (stats vectors).
pub fn shared(sub: &str) -> Option<PathBuf> {
    let p = root().join("../shared").join(sub);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("SKIPPED: {} is absent (this test needs ../shared)", p.display());
        None
    }
}

pub fn samples(sub: &str) -> PathBuf {
    root().join("samples").join(sub)
}

/// The built-in rules, loaded once for the whole test binary.
pub fn builtin() -> &'static Rules {
    static RULES: std::sync::LazyLock<Rules> = std::sync::LazyLock::new(|| Rules::builtin().expect("built-in rules load"));
    &RULES
}

/// A command's standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The end statuses an adapter read: field and text.
pub fn statuses(t: &Trajectory) -> Vec<(&str, &str)> {
    t.signals.statuses.iter().map(|s| (s.field.as_str(), s.text.as_str())).collect()
}

/// Ingests in-process and classifies with the built-in rules and no registry.
pub fn classified(paths: &[&Path]) -> Vec<(Trajectory, Verdict)> {
    classified_with(paths, &[])
}

/// Ingests in-process with `--verdicts` files and classifies with the built-in rules.
pub fn classified_with(paths: &[&Path], verdicts: &[PathBuf]) -> Vec<(Trajectory, Verdict)> {
    let rules = builtin();
    let c = Classifier::new(rules.clone(), Vec::new(), Options::default());
    let opts =
        IngestOptions { inputs: paths.iter().map(|p| p.to_path_buf()).collect(), verdicts: verdicts.to_vec(), ..IngestOptions::default() };
    let mut out = Vec::new();
    coroner::pipeline::run(&opts, rules, &mut |t| {
        let v = c.classify(&t);
        out.push((t, v));
        Ok(())
    })
    .expect("ingest runs");
    out
}

/// Ingests in-process and returns the records and the accounting.
pub fn ingest(paths: &[&Path]) -> (Vec<Trajectory>, Summary) {
    ingest_with(IngestOptions { inputs: paths.iter().map(|p| p.to_path_buf()).collect(), ..IngestOptions::default() })
}

pub fn ingest_with(opts: IngestOptions) -> (Vec<Trajectory>, Summary) {
    let mut out = Vec::new();
    let summary = coroner::pipeline::run(&opts, builtin(), &mut |t| {
        out.push(t);
        Ok(())
    })
    .expect("ingest runs");
    (out, summary)
}

/// Runs the built binary.
pub fn coroner(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coroner")).args(args).output().expect("coroner runs")
}

/// Runs the built binary with extra environment variables.
pub fn coroner_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_coroner"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("coroner runs")
}

pub fn by_task<'a>(ts: &'a [Trajectory], task: &str) -> &'a Trajectory {
    ts.iter()
        .find(|t| t.task_id == task)
        .unwrap_or_else(|| panic!("no trajectory for task {task}: have {:?}", ts.iter().map(|t| &t.task_id).collect::<Vec<_>>()))
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Runs the built binary in `dir`, so paths in its output are relative and stable.
pub fn coroner_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coroner")).current_dir(dir).args(args).output().expect("coroner runs")
}

/// Every file under `dir` with its bytes, by path relative to `dir`.
pub fn files_under(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}
