//! Entry points for fuzzing: one function per fuzz target, each taking arbitrary bytes.
//!
//! `fuzz/` (cargo-fuzz, nightly) calls these from its targets, and `tests/fuzz_replay.rs`
//! (stable, `cargo test`) calls the same functions with every seed drawn from `samples/` and
//! every crash saved under `samples/hostile/fuzz/<target>/`, so a parser that loses its
//! robustness fails CI without a fuzzer. Each function runs the real code path on the bytes and
//! swallows its errors: an error is the right answer to hostile input, a panic is a bug.
//!
//! Deliberately, nothing here catches panics (the ingest pipeline does, to cost one file rather
//! than the run; these call the adapters directly so the fuzzer sees them).
//!
//! Inputs that name a file (`ingest`, `ingest_forced`, `classify`) are *framed*: a file name
//! hint, a newline, then the file's bytes (see [`frame`]). Detection reads the name, its
//! extension and its parent directories, so the hint (`agent/trajectory.json`) is part of
//! what is fuzzed. Inputs that need a file on disk are written to a per-thread directory under
//! the system temporary directory.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::ingest::adapters;
use crate::ingest::detect::{Detected, detect};
use crate::ingest::format::{Adapter, Ctx, FileEntry, FileRole, FileSet, Output, Unit};
use crate::ingest::join::JoinIndex;
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::Trajectory;

/// Every target, by the name of its file in `fuzz/fuzz_targets/` and its directory under
/// `samples/hostile/fuzz/`.
pub const TARGETS: &[&str] = &["ingest", "ingest_forced", "classify", "shell", "python", "study", "predictions", "lock"];

/// Runs `target` on `data`; false when there is no such target.
pub fn run(target: &str, data: &[u8]) -> bool {
    match target {
        "ingest" => ingest(data),
        "ingest_forced" => ingest_forced(data),
        "classify" => classify(data),
        "shell" => shell(data),
        "python" => python(data),
        "study" => study(data),
        "predictions" => predictions(data),
        "lock" => lock(data),
        _ => return false,
    }
    true
}

/// Longest name hint read from a framed input.
const MAX_HINT: usize = 256;

/// A framed input: `name` (a file name, or a short relative path), a newline, then `data`.
#[must_use]
pub fn frame(name: &str, data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(name.len() + 1 + data.len());
    v.extend_from_slice(name.replace('\n', "").as_bytes());
    v.push(b'\n');
    v.extend_from_slice(data);
    v
}

/// Splits a framed input into its name hint and the file's bytes. Without a newline in the
/// first [`MAX_HINT`] bytes the whole input is the file, named `input`.
fn unframe(data: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(b'\n', &data[..data.len().min(MAX_HINT)]) {
        Some(nl) => (&data[..nl], &data[nl + 1..]),
        None => (b"", data),
    }
}

/// A safe relative path from a hint: at most four components of `[A-Za-z0-9._-]`, none of
/// them `.` or `..`; `input` when nothing is left.
fn hint_path(hint: &[u8]) -> PathBuf {
    let hint = String::from_utf8_lossy(hint);
    let mut p = PathBuf::new();
    for comp in hint.split('/').take(4) {
        let c: String = comp.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')).take(64).collect();
        if c.is_empty() || c.chars().all(|ch| ch == '.') {
            continue;
        }
        p.push(c);
    }
    if p.as_os_str().is_empty() {
        p.push("input");
    }
    p
}

thread_local! {
    /// This thread's scratch directory, made on first use.
    static SCRATCH: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// Writes `files` (relative path, bytes) into this thread's empty scratch directory and calls
/// `f` with the directory. Nothing is done when the files cannot be written.
fn with_files<R: Default>(files: &[(&Path, &[u8])], f: impl FnOnce(&Path) -> R) -> R {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = SCRATCH.with(|s| {
        s.borrow_mut()
            .get_or_insert_with(|| {
                let n = NEXT.fetch_add(1, Ordering::Relaxed);
                std::env::temp_dir().join(format!("coroner-fuzz-{}-{n}", std::process::id()))
            })
            .clone()
    });
    let case = dir.join("case");
    if case.exists() && std::fs::remove_dir_all(&case).is_err() {
        return R::default();
    }
    for (rel, bytes) in files {
        let p = case.join(rel);
        if p.parent().is_some_and(|d| std::fs::create_dir_all(d).is_err()) || std::fs::write(&p, bytes).is_err() {
            return R::default();
        }
    }
    if std::fs::create_dir_all(&case).is_err() {
        return R::default();
    }
    f(&case)
}

/// Renders a diagnostic the way the CLI does: spans and labels built from hostile input must
/// render too.
fn render(d: &dyn miette::Diagnostic) {
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor()).with_width(100);
    let mut s = String::new();
    let _ = handler.render_report(&mut s, d);
}

/// Probe and detect one file, then read it with the adapter detection chose (`forced` as
/// `ingest --format` does), as the ingest pipeline would, but without its panic guard. Returns
/// the records (paired, as the pipeline leaves them).
fn ingest_file(path: &Path, display: &str, forced: Option<&'static dyn Adapter>) -> Vec<Trajectory> {
    let Ok(probe) = Probe::read(path) else { return Vec::new() };
    ingest_probed(&probe, path, display, forced)
}

/// As [`ingest_file`], with the file probed already.
fn ingest_probed(probe: &Probe, path: &Path, display: &str, forced: Option<&'static dyn Adapter>) -> Vec<Trajectory> {
    match detect(probe, display, adapters::all(), forced) {
        Detected::Adapter { adapter, .. } => read_as(adapter, path, display),
        Detected::Skip(_) => Vec::new(),
        Detected::Quarantine(e) => {
            render(&e);
            Vec::new()
        }
    }
}

/// Reads one file as `adapter`: an outcome file into its entries, a transcript into records.
fn read_as(adapter: &'static dyn Adapter, path: &Path, display: &str) -> Vec<Trajectory> {
    let mut files = FileSet::new();
    files.insert(path.to_path_buf(), Some(adapter.name()));
    match adapter.role() {
        FileRole::Outcome => {
            match Source::read(path, display).and_then(|src| adapter.outcomes(&src)) {
                Ok(_) => {}
                Err(e) => render(&e),
            }
            Vec::new()
        }
        // Run metadata is read by the transcript that claims it, never on its own.
        FileRole::Metadata => Vec::new(),
        FileRole::Transcript => {
            let companions: Vec<FileEntry> = adapter
                .companions(path, &files)
                .into_iter()
                .filter(|p| p != path && p.is_file())
                .map(|p| FileEntry { display: p.display().to_string(), rel: p.display().to_string(), path: p })
                .collect();
            let unit = Unit {
                primary: FileEntry { path: path.to_path_buf(), display: display.to_string(), rel: display.to_string() },
                companions,
            };
            let _ = adapter.streams(&unit);
            let join = JoinIndex::default();
            let ctx = Ctx::new(&join, &files);
            let mut trajs = Vec::new();
            let mut sink = |t: Trajectory| trajs.push(t);
            let mut out = Output::new(&mut sink);
            let res = adapter.parse(&unit, &ctx, &mut out);
            let diags = std::mem::take(&mut out.diagnostics);
            drop(out);
            for d in &diags {
                render(d);
            }
            if let Err(e) = res {
                render(&e);
            }
            for t in &mut trajs {
                crate::model::pair_results(t);
                // What `ingest -o out.jsonl` writes.
                let _ = serde_json::to_vec(&*t);
            }
            trajs
        }
    }
}

/// A framed input written to disk, then read as ingest reads it (`display` as shown).
fn with_framed<R: Default>(data: &[u8], f: impl FnOnce(&Path, &str) -> R) -> R {
    let (hint, body) = unframe(data);
    let rel = hint_path(hint);
    let display = rel.display().to_string();
    with_files(&[(rel.as_path(), body)], |dir| f(&dir.join(&rel), &display))
}

/// Target `ingest`: probe, detection and the chosen adapter's parse (or outcome read) of one
/// framed file.
pub fn ingest(data: &[u8]) {
    with_framed(data, |path, display| {
        ingest_file(path, display, None);
    });
}

/// Target `ingest_forced`: the framed file read with every adapter in turn, as
/// `ingest --format NAME` would (an outcome file or run metadata with a marker stays what it
/// is, as detection decides).
pub fn ingest_forced(data: &[u8]) {
    with_framed(data, |path, display| {
        let Ok(probe) = Probe::read(path) else { return };
        for &a in adapters::all() {
            ingest_probed(&probe, path, display, Some(a));
        }
    });
}

/// The built-in rules and a classifier with no registry, loaded once.
fn classifier() -> Option<&'static crate::classify::Classifier> {
    static C: OnceLock<Option<crate::classify::Classifier>> = OnceLock::new();
    C.get_or_init(|| {
        crate::rules::Rules::builtin().ok().map(|r| crate::classify::Classifier::new(r, Vec::new(), crate::classify::Options::default()))
    })
    .as_ref()
}

/// Target `classify`: `ingest`, then every record interpreted with the built-in rules and
/// classified (mechanics, evidence), as `coroner classify` does.
pub fn classify(data: &[u8]) {
    let Some(c) = classifier() else { return };
    with_framed(data, |path, display| {
        for mut t in ingest_file(path, display, None) {
            let _ = crate::interpret::interpret(&mut t, &c.rules);
            let v = c.classify(&t);
            let _ = serde_json::to_vec(&v);
        }
    });
}

/// Target `shell`: the bytes as a command line (commands come out of JSON, so only UTF-8 is
/// read), with and without a working directory, and as a shell script run later.
pub fn shell(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let _ = crate::classify::shell::analyse(s);
    let _ = crate::classify::shell::analyse_in(s, Some("/tmp/work"));
    let _ = crate::classify::shell::script_effects("run.sh", s);
}

/// Target `python`: the bytes as a Python program, saved and run later, given with `-c` and
/// as a here-doc.
pub fn python(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let _ = crate::classify::shell::script_effects("fix.py", s);
    let quoted = format!("'{}'", s.replace('\'', r"'\''"));
    let _ = crate::classify::shell::analyse(&format!("python3 -c {quoted}"));
    let _ = crate::classify::shell::analyse(&format!("python3 - <<'EOF'\n{s}\nEOF\n"));
}

/// Target `study`: the bytes as `study.toml`, loaded (TOML, arms, inputs resolved against an
/// empty directory). Inputs with a recursive glob (`**`) are passed over: resolving `/**`
/// walks the whole file system, which is slow, not wrong.
pub fn study(data: &[u8]) {
    if memchr::memmem::find(data, b"**").is_some() {
        return;
    }
    let name = Path::new("study.toml");
    with_files(&[(name, data)], |dir| {
        if let Err(e) = crate::study::Study::load(&dir.join(name)) {
            render(&e);
        }
    });
}

/// Target `predictions`: the bytes as a predictions file: parsed and checked, its classes and
/// arms checked, its digest taken, a retraction applied.
pub fn predictions(data: &[u8]) {
    // `Loaded::read` reads the file as a string: anything else fails there.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = crate::predict::predictions_digest(text);
    let _ = crate::predict::retract(text, "p1", "fuzz", "2026-01-01T00:00:00Z");
    match crate::predict::Loaded::parse(Path::new("predictions.toml"), "predictions.toml", text.to_string()) {
        Ok(l) => {
            if let Some(c) = classifier() {
                let classes: Vec<String> = c.rules.taxonomy.classes.iter().map(|k| k.id.clone()).collect();
                if let Err(e) = l.check_classes(&classes) {
                    render(&e);
                }
            }
            if let Err(e) = l.check_arms(&["arm-a".to_string(), "arm-b".to_string()]) {
                render(&e);
            }
        }
        Err(e) => render(&e),
    }
}

/// Target `lock`: the bytes as a predictions lock: read, written back, verified.
pub fn lock(data: &[u8]) {
    let name = Path::new("predictions.lock");
    with_files(&[(name, data)], |dir| match crate::predict::Lock::read(&dir.join(name)) {
        Ok(l) => {
            let _ = l.to_toml();
            let _ = l.digest();
            for p in crate::predict::seal::verify(&l, "", "", &std::collections::BTreeMap::new()) {
                let _ = p.describe();
            }
        }
        Err(e) => render(&e),
    });
}

/// Largest sample used as a seed (the fuzzers' `-max_len`).
pub const MAX_SEED_BYTES: u64 = 1 << 20;

/// The seed inputs of `target`, each with the file it came from: samples of its kind under
/// `root/samples/` (never the saved crashes in `samples/hostile/fuzz/`) and the hand-written
/// seeds in `root/fuzz/seeds/<target>/`, in path order. For the ingest targets every sample is
/// a seed, framed with its parent directory and name. `fuzz/run.sh` builds the fuzzers' seed
/// corpus by the same rules.
#[must_use]
pub fn seeds(target: &str, root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let framed = matches!(target, "ingest" | "ingest_forced" | "classify");
    let name_of = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let wanted = |p: &Path| {
        let name = name_of(p);
        match target {
            "ingest" | "ingest_forced" | "classify" => true,
            "shell" => name == "commands.txt" || name.ends_with(".sh"),
            "python" => name.ends_with(".py"),
            "study" => name.starts_with("study") && name.ends_with(".toml"),
            "predictions" => name.ends_with(".toml") && p.components().any(|c| c.as_os_str() == "predictions"),
            "lock" => name.ends_with(".lock"),
            _ => false,
        }
    };
    let mut files = Vec::new();
    let hostile = root.join("samples").join("hostile").join("fuzz");
    collect(&root.join("samples"), &mut |p| {
        if !p.starts_with(&hostile) && wanted(p) {
            files.push(p.to_path_buf());
        }
    });
    if TARGETS.contains(&target) {
        collect(&root.join("fuzz").join("seeds").join(target), &mut |p| files.push(p.to_path_buf()));
    }
    files.sort();
    files
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() <= MAX_SEED_BYTES))
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            let bytes = if framed {
                let parent = p.parent().map(name_of).unwrap_or_default();
                frame(&format!("{parent}/{}", name_of(&p)), &bytes)
            } else {
                bytes
            };
            Some((p, bytes))
        })
        .collect()
}

/// Every file below `dir` (links not followed).
fn collect(dir: &Path, f: &mut dyn FnMut(&Path)) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let Ok(ty) = e.file_type() else { continue };
        if ty.is_dir() {
            collect(&e.path(), f);
        } else if ty.is_file() {
            f(&e.path());
        }
    }
}
