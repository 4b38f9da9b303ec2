//! The fuzz targets' inputs replayed on stable: every seed (drawn from `samples/` and
//! `fuzz/seeds/`) and every crash the fuzzers found (`samples/hostile/fuzz/<target>/`) goes
//! through the same `coroner::fuzzing` function the target calls, and must return: an error
//! is the right answer to hostile input, a panic is a bug. `fuzz/run.sh SECONDS` runs the
//! fuzzers themselves (nightly).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use coroner::fuzzing::{self, TARGETS};

use crate::common::root;

/// Targets whose fuzzers found crashes: their crash directories must not be empty, so the
/// replay of a fixed crash cannot go vacuous by losing its samples.
const CRASHED: &[&str] = &[];

/// Crash samples whose panic is not fixed yet, by `<target>/<file>`, with where it panics. Each
/// is replayed and must still panic: when one is fixed, this list must shrink (the test says so).
const KNOWN_PANICS: &[(&str, &str)] = &[];

fn crashes(target: &str) -> Vec<PathBuf> {
    let dir = root().join("samples").join("hostile").join("fuzz").join(target);
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(&dir).map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect()).unwrap_or_default();
    v.sort();
    v
}

/// Runs `target` on `data`; the panic message when it panics.
fn replay(target: &str, data: &[u8]) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| assert!(fuzzing::run(target, data), "unknown fuzz target {target}")))
        .map_err(|p| p.downcast_ref::<&str>().map(ToString::to_string).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default())
}

fn shown(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// Every target has a fuzz target file, a seed corpus and, where crashes were found, crashes.
#[test]
fn every_target_is_fuzzed_and_seeded() {
    for t in TARGETS {
        assert!(root().join("fuzz").join("fuzz_targets").join(format!("{t}.rs")).is_file(), "fuzz/fuzz_targets/{t}.rs is missing");
        assert!(!fuzzing::seeds(t, &root()).is_empty(), "no seed for fuzz target {t}");
    }
    for t in CRASHED {
        assert!(TARGETS.contains(t), "{t} is not a fuzz target");
        assert!(!crashes(t).is_empty(), "samples/hostile/fuzz/{t}/ lost its crash samples");
    }
    for (k, _) in KNOWN_PANICS {
        assert!(root().join("samples/hostile/fuzz").join(k).is_file(), "known panic {k} has no sample");
    }
}

fn replay_target(target: &str) {
    let mut failures = Vec::new();
    for (path, data) in fuzzing::seeds(target, &root()) {
        if let Err(msg) = replay(target, &data) {
            failures.push(format!("seed {}: panicked: {msg}", shown(&path)));
        }
    }
    for path in crashes(target) {
        let data = std::fs::read(&path).unwrap();
        let key = format!("{target}/{}", path.file_name().unwrap().to_string_lossy());
        let known = KNOWN_PANICS.iter().find(|(k, _)| *k == key);
        match (replay(target, &data), known) {
            (Ok(()), None) | (Err(_), Some(_)) => {}
            (Err(msg), None) => failures.push(format!("crash {}: panicked: {msg}", shown(&path))),
            (Ok(()), Some(_)) => failures.push(format!("crash {}: no longer panics; remove it from KNOWN_PANICS", shown(&path))),
        }
    }
    assert!(failures.is_empty(), "fuzz target {target}:\n{}", failures.join("\n"));
}

#[test]
fn ingest() {
    replay_target("ingest");
}

#[test]
fn ingest_forced() {
    replay_target("ingest_forced");
}

#[test]
fn classify() {
    replay_target("classify");
}

#[test]
fn shell() {
    replay_target("shell");
}

#[test]
fn python() {
    replay_target("python");
}

#[test]
fn study() {
    replay_target("study");
}

#[test]
fn predictions() {
    replay_target("predictions");
}

#[test]
fn lock() {
    replay_target("lock");
}
