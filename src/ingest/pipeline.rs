//! The ingest run: walk, detect, read outcome files, group units, parse in parallel, emit in
//! order.
//!
//! Units are parsed by rayon in bounded batches and written in input order, so memory holds at
//! most one batch of trajectories and the output bytes do not depend on the thread count.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use rayon::prelude::*;

use super::adapters;
use super::detect::{Detected, detect};
use super::diag::{InputError, InputErrorKind};
use super::format::{Adapter, Ctx, FileEntry, FileRole, FileSet, Output, Unit};
use super::join::{JoinIndex, Scope};
use super::probe::Probe;
use super::source::Source;
use super::walk;
use crate::model::{RECORD_VERSION, Trajectory, pair_results, trajectory_id};
use crate::util::display_path;

/// What to ingest and how.
#[derive(Debug, Clone, Default)]
pub struct IngestOptions {
    pub inputs: Vec<PathBuf>,
    /// `--format`: an adapter name that overrides detection.
    pub format: Option<String>,
    /// `--verdicts`: outcome files that apply to every trajectory.
    pub verdicts: Vec<PathBuf>,
    /// The harness every record was run with, when the caller knows it better than the files
    /// (a study arm's `harness`).
    pub harness: Option<String>,
    /// Format mappings (`rules/formats/*.toml`) read besides the built-in adapters, after them
    /// on equal evidence.
    pub formats: Vec<std::sync::Arc<crate::rules::FormatMapping>>,
    /// `--shard K/N`: only the transcripts (and the accounting) of this shard.
    pub shard: Option<super::shard::Shard>,
    /// `--manifest`: the files and their formats from `coroner manifest` instead of a walk.
    pub manifest: Option<PathBuf>,
    /// The caller writes nothing that names a file's sha256 (verdicts, not records): the files
    /// read are not hashed (`source::hashing`).
    pub unhashed: bool,
}

/// What happened to one input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// Parsed as a transcript into this many trajectories.
    Ingested { adapter: &'static str, trajectories: usize },
    /// Read as part of another file's record (a trial's trajectory, a run's metadata).
    Companion { adapter: &'static str },
    /// Read as an outcome file and joined by task id.
    Outcome { adapter: &'static str, entries: usize },
    /// Understood and not a transcript.
    Skipped { reason: String },
    /// Could not be used; its diagnostic is in `Summary::diagnostics`.
    Quarantined { kind: InputErrorKind },
}

#[derive(Debug, Clone)]
pub struct FileReport {
    pub display: String,
    pub status: FileStatus,
}

/// The accounting of one run: every input appears in `files` exactly once.
#[derive(Debug, Default)]
pub struct Summary {
    pub files: Vec<FileReport>,
    /// Every problem, quarantined files and bad records alike, in input order.
    pub diagnostics: Vec<InputError>,
    pub trajectories: usize,
    pub per_adapter: BTreeMap<&'static str, usize>,
    /// Records dropped from files that were otherwise ingested (one bad JSONL line).
    pub quarantined_records: usize,
}

impl Summary {
    #[must_use]
    pub fn quarantined_files(&self) -> usize {
        self.files.iter().filter(|f| matches!(f.status, FileStatus::Quarantined { .. })).count()
    }

    /// Anything was quarantined: the run is partial.
    #[must_use]
    pub fn is_partial(&self) -> bool {
        self.quarantined_files() > 0 || self.quarantined_records > 0
    }
}

/// Errors that stop a run before any input is read.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum IngestError {
    #[error("failed to find a format named `{0}`")]
    #[diagnostic(code(coroner::usage::format), help("known formats: {1}"))]
    UnknownFormatName(String, String),
    #[error("failed to use the format mapping {1}: `{0}` is the name of a built-in format")]
    #[diagnostic(code(coroner::rules::format_name), help("rename the mapping; `coroner ingest --list-formats` lists the built-in formats"))]
    FormatNameTaken(String, String),
    #[error("failed to {0}")]
    #[diagnostic(code(coroner::usage::manifest), help("write one with `coroner manifest INPUT... -o manifest.jsonl`"))]
    Manifest(String),
    #[error("failed to read any input: no files were found")]
    #[diagnostic(code(coroner::usage::no_input), help("name a transcript file or a run directory"))]
    NoInput,
    #[error("failed to write the output")]
    #[diagnostic(code(coroner::io::write))]
    Write(#[source] std::io::Error),
}

/// Units parsed and not yet written, per thread (the window of the ordered parse; also the
/// batch of a streamed unit's records).
const BATCH_PER_THREAD: usize = 8;

/// Bytes of input parsed at once across all threads. Parsed units are held until they are
/// written in order, so a count of files alone would let threads × 8 files of up to 1 GiB each
/// be in memory; a file larger than this is parsed alone, so memory stays bounded by the
/// largest single input.
const IN_FLIGHT_BYTES: u64 = 256 << 20;

/// Every adapter a run may use, and the one `--format` forces.
type Adapters = (Vec<&'static dyn Adapter>, Option<&'static dyn Adapter>);

/// The adapters a run uses (the built-in ones and the rules' format mappings) and the one
/// `--format` forces.
fn adapters_for(opts: &IngestOptions) -> Result<Adapters, IngestError> {
    let mapped = adapters::mapped::adapters(&opts.formats).map_err(|(name, file)| IngestError::FormatNameTaken(name, file))?;
    let all: Vec<&'static dyn Adapter> = adapters::all().iter().copied().chain(mapped).collect();
    let forced =
        match &opts.format {
            None => None,
            Some(name) => Some(all.iter().copied().find(|a| a.name() == name).ok_or_else(|| {
                IngestError::UnknownFormatName(name.clone(), all.iter().map(|a| a.name()).collect::<Vec<_>>().join(", "))
            })?),
        };
    Ok((all, forced))
}

/// The manifest of `opts.inputs` (see [`super::manifest`]): every file with its detection.
///
/// # Errors
/// As [`run`], before any input is read.
pub fn manifest(opts: &IngestOptions) -> Result<Vec<super::manifest::Entry>, IngestError> {
    let (all, forced) = adapters_for(opts)?;
    let entries = super::manifest::build(&opts.inputs, &all, forced, opts.shard);
    if entries.is_empty() && opts.shard.is_none() {
        return Err(IngestError::NoInput);
    }
    Ok(entries)
}

/// Runs ingest, handing every trajectory to `sink` in a deterministic order.
///
/// # Errors
/// Usage errors, and failures of `sink`; bad inputs are never errors (see [`Summary`]).
pub fn run(opts: &IngestOptions, sink: &mut dyn FnMut(Trajectory) -> std::io::Result<()>) -> Result<Summary, IngestError> {
    run_map(opts, &|t| t, sink)
}

/// Runs ingest and applies `map` to every trajectory inside the parallel parse (classify
/// uses it so per-record work scales with the threads), handing the results to `sink` in
/// the same deterministic order as [`run`].
///
/// # Errors
/// As [`run`].
pub fn run_map<T: Send>(
    opts: &IngestOptions,
    map: &(dyn Fn(Trajectory) -> T + Sync),
    sink: &mut dyn FnMut(T) -> std::io::Result<()>,
) -> Result<Summary, IngestError> {
    let (all, forced) = adapters_for(opts)?;
    let all = all.as_slice();
    let mut summary = Summary::default();
    let listed = match &opts.manifest {
        Some(m) => Some(super::manifest::read(m).map_err(IngestError::Manifest)?),
        None => None,
    };
    if listed.iter().flatten().any(|e| e.at.is_some()) {
        return Err(IngestError::Manifest(
            "this is one shard's part of a manifest (`manifest --shard`): join the parts with `coroner manifest --merge PART... -o FILE`"
                .into(),
        ));
    }
    let walk::Walked { files, errors: walk_errors, skipped: walk_skipped } = match &listed {
        Some(entries) => from_manifest(entries),
        None => walk::collect(&opts.inputs),
    };
    // With a shard, a file is accounted for (and a transcript parsed) by one shard only.
    let mine = |key: &str| opts.shard.is_none_or(|s| s.holds(key));
    for e in walk_errors.into_iter().filter(|e| mine(&e.path)) {
        summary.files.push(FileReport { display: e.path.clone(), status: FileStatus::Quarantined { kind: e.kind } });
        summary.diagnostics.push(e);
    }
    for (display, reason) in walk_skipped.into_iter().filter(|(d, _)| mine(d)) {
        summary.files.push(FileReport { display, status: FileStatus::Skipped { reason } });
    }
    if files.is_empty() && summary.files.is_empty() {
        return Err(IngestError::NoInput);
    }

    // Detect every file (parallel, ordered). From a manifest, a file this shard does not own
    // keeps the detection written there and is not opened; the shard's own files are probed
    // again, so their diagnostics are an unsharded run's.
    let known: std::collections::HashMap<&str, (&str, u64)> =
        listed.iter().flatten().filter_map(|e| e.adapter.as_deref().map(|a| (e.path.as_str(), (a, e.size)))).collect();
    let (detected, sizes): (Vec<(FileEntry, Detected)>, Vec<u64>) = files
        .into_par_iter()
        .map(|f| {
            if listed.is_some()
                && !mine(&f.rel)
                && let Some((name, size)) = f.path.to_str().and_then(|p| known.get(p))
                && let Some(adapter) = all.iter().copied().find(|a| a.name() == *name)
            {
                let detection = super::format::Detection { strength: super::format::Strength::Marker, reason: "the manifest".into() };
                return ((f, Detected::Adapter { adapter, detection }), *size);
            }
            let (d, size) = match Probe::read(&f.path) {
                Ok(p) => (detect(&p, &f.display, all, forced), p.size),
                Err(e) => (Detected::Quarantine(super::source::io_error(&f.display, &e)), 0),
            };
            ((f, d), size)
        })
        .unzip();
    let fileset: FileSet = detected
        .iter()
        .map(|(f, d)| match d {
            Detected::Adapter { adapter, .. } => (f.path.clone(), Some(adapter.name())),
            _ => (f.path.clone(), None),
        })
        .collect();

    let opened_as: HashMap<String, PathBuf> = detected
        .iter()
        .filter(|(f, _)| f.path.to_str() != Some(f.display.as_str()))
        .map(|(f, _)| (f.display.clone(), f.path.clone()))
        .collect();
    // Outcome files first: the join index must be complete before any transcript is parsed.
    let mut join = JoinIndex::default();
    let mut statuses: BTreeMap<usize, FileStatus> = BTreeMap::new();
    let mut diags: BTreeMap<usize, Vec<InputError>> = BTreeMap::new();
    let outcome_ix: Vec<usize> = detected
        .iter()
        .enumerate()
        .filter(|(_, (_, d))| matches!(d, Detected::Adapter { adapter, .. } if adapter.role() == FileRole::Outcome))
        .map(|(i, _)| i)
        .collect();
    let read: Vec<_> = outcome_ix
        .par_iter()
        .map(|&i| {
            let (f, Detected::Adapter { adapter, .. }) = &detected[i] else { unreachable!("filtered above") };
            let r = super::source::hashing(!opts.unhashed, || {
                Source::read(&f.path, &f.display).and_then(|src| Ok((adapter.outcomes(&src)?, src.provenance("outcome"))))
            });
            (i, *adapter, r)
        })
        .collect();
    for (i, adapter, r) in read {
        match r {
            Ok((of, file)) => {
                statuses.insert(i, FileStatus::Outcome { adapter: adapter.name(), entries: of.entries.len() });
                join.add(&detected[i].0.path, file, of);
            }
            Err(e) => {
                statuses.insert(i, FileStatus::Quarantined { kind: e.kind });
                diags.entry(i).or_default().push(e);
            }
        }
    }
    // Verdict files apply to every shard; the first one accounts for them.
    let verdicts_counted = opts.shard.is_none_or(|s| s.k == 1);
    for v in &opts.verdicts {
        let shown = display_path(v);
        let r = Probe::read(v)
            .map_err(|e| super::source::io_error(&shown, &e))
            .and_then(|p| {
                let a = all.iter().find(|a| a.role() == FileRole::Outcome && a.sniff(&p).is_ok()).ok_or_else(|| {
                    InputError::new(InputErrorKind::UnknownFormat, &shown, "recognize the verdict file")
                        .with_help("verdict files are CSV or JSON mapping task ids to outcomes (task_id,outcome), a SWE-bench report.json, or an sb-cli report")
                })?;
                let src = Source::read(v, &shown)?;
                let mut of = a.outcomes(&src)?;
                of.scope = Scope::Global;
                Ok((of, src.provenance("verdicts"), a.name()))
            });
        match r {
            Ok((of, file, name)) => {
                if verdicts_counted {
                    summary
                        .files
                        .push(FileReport { display: shown, status: FileStatus::Outcome { adapter: name, entries: of.entries.len() } });
                }
                join.add(v, file, of);
            }
            Err(e) => {
                if verdicts_counted {
                    summary.files.push(FileReport { display: shown, status: FileStatus::Quarantined { kind: e.kind } });
                    summary.diagnostics.push(e);
                }
            }
        }
    }

    // Group transcripts into units: companions are claimed by their primary file.
    let index_of: BTreeMap<PathBuf, usize> = detected.iter().enumerate().map(|(i, (f, _))| (f.path.clone(), i)).collect();
    let mut claimed: HashSet<usize> = HashSet::new();
    let mut units: Vec<(usize, &'static dyn Adapter, Unit)> = Vec::new();
    let mut companions_of: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, (f, d)) in detected.iter().enumerate() {
        if let Detected::Adapter { adapter, .. } = d
            && adapter.role() == FileRole::Transcript
        {
            let comps: Vec<usize> = adapter
                .companions(&f.path, &fileset)
                .iter()
                .filter_map(|p| index_of.get(p).copied())
                .filter(|&c| c != i && !statuses.contains_key(&c))
                .collect();
            claimed.extend(comps.iter().copied());
            companions_of.push((i, comps));
        }
    }
    // Which files this shard accounts for: a unit's files by its primary's path, every other
    // file by its own.
    let in_shard: Vec<bool> = detected.iter().map(|(f, _)| mine(&f.rel)).collect();
    let mut accounted = in_shard.clone();
    for (i, comps) in companions_of {
        if claimed.contains(&i) {
            continue;
        }
        let Detected::Adapter { adapter, .. } = &detected[i].1 else { continue };
        for &c in &comps {
            accounted[c] = in_shard[i];
        }
        let unit = Unit { primary: detected[i].0.clone(), companions: comps.iter().map(|&c| detected[c].0.clone()).collect() };
        units.push((i, *adapter, unit));
    }

    // Everything else: companions, skipped, quarantined, or metadata nobody claimed.
    let unit_ix: HashSet<usize> = units.iter().map(|(u, _, _)| *u).collect();
    for (i, (_, d)) in detected.into_iter().enumerate() {
        if statuses.contains_key(&i) || unit_ix.contains(&i) {
            continue;
        }
        if claimed.contains(&i) {
            // Read (or deliberately passed over) by the transcript that claimed it; its own
            // detection does not matter.
            let adapter = match &d {
                Detected::Adapter { adapter, .. } => adapter.name(),
                _ => "-",
            };
            statuses.insert(i, FileStatus::Companion { adapter });
            continue;
        }
        match d {
            Detected::Adapter { adapter, .. } => {
                statuses.insert(i, FileStatus::Skipped { reason: format!("{} ({})", adapter.describe(), adapter.name()) });
            }
            Detected::Skip(reason) => {
                statuses.insert(i, FileStatus::Skipped { reason });
            }
            Detected::Quarantine(e) => {
                statuses.insert(i, FileStatus::Quarantined { kind: e.kind });
                diags.entry(i).or_default().push(e);
            }
        }
    }

    // Another shard parses the units it does not hold (their files were marked Ingested or
    // Companion above only to keep them out of the "nobody claimed" accounting).
    units.retain(|(i, _, _)| in_shard[*i]);

    // Parse units in parallel, written in input order (`ordered`). A unit whose adapter streams
    // (one container of many records) is parsed alone, between the others, and its records are
    // written as they come, so memory holds one of its records rather than all of them.
    let mut ctx = Ctx::new(&join, &fileset);
    ctx.harness = opts.harness.as_deref();
    ctx.opened_as = Some(&opened_as);
    ctx.unhashed = opts.unhashed;
    let batch = rayon::current_num_threads().max(1) * BATCH_PER_THREAD;
    let mut account = |i: usize, adapter: &'static dyn Adapter, n: usize, errs: Vec<InputError>, fatal: Option<InputError>| {
        summary.trajectories += n;
        *summary.per_adapter.entry(adapter.name()).or_default() += n;
        summary.quarantined_records += errs.len();
        let d = diags.entry(i).or_default();
        d.extend(errs);
        match fatal {
            // Records already written by a streamed unit stay: the failure costs the rest.
            Some(e) if n > 0 => {
                summary.quarantined_records += 1;
                d.push(e);
                statuses.insert(i, FileStatus::Ingested { adapter: adapter.name(), trajectories: n });
            }
            Some(e) => {
                statuses.insert(i, FileStatus::Quarantined { kind: e.kind });
                d.push(e);
            }
            None => {
                statuses.insert(i, FileStatus::Ingested { adapter: adapter.name(), trajectories: n });
            }
        }
    };
    let unit_bytes: Vec<u64> = units
        .iter()
        .map(|(i, _, u)| {
            let companions = u.companions.iter().filter_map(|c| index_of.get(&c.path)).map(|&c| sizes[c]);
            crate::util::sat_sum(std::iter::once(sizes[*i]).chain(companions))
        })
        .collect();
    let mut start = 0;
    while start < units.len() {
        let (i, adapter, unit) = &units[start];
        if adapter.streams(unit) {
            let (n, errs, fatal) = stream_unit(*adapter, unit, &ctx, batch, map, sink)?;
            account(*i, *adapter, n, errs, fatal);
            start += 1;
            continue;
        }
        let end = units[start..].iter().position(|(_, a, u)| a.streams(u)).map_or(units.len(), |p| start + p);
        let segment = &units[start..end];
        let work = |k: usize| {
            let (_, adapter, unit) = &segment[k];
            parse_unit(*adapter, unit, &ctx, map)
        };
        let mut take = |k: usize, (trajs, errs, fatal): Parsed<T>| {
            let (i, adapter, _) = &segment[k];
            let n = trajs.len();
            for t in trajs {
                sink(t).map_err(IngestError::Write)?;
            }
            account(*i, *adapter, n, errs, fatal);
            Ok(())
        };
        super::ordered::map_in_order(rayon::current_num_threads(), &unit_bytes[start..end], batch, IN_FLIGHT_BYTES, &work, &mut take)?;
        start = end;
    }

    let mut ordered: Vec<(usize, FileStatus)> = statuses.into_iter().filter(|(i, _)| accounted[*i]).collect();
    ordered.sort_by_key(|(i, _)| *i);
    diags.retain(|i, _| accounted[*i]);
    let names: BTreeMap<usize, String> = index_of.iter().map(|(p, i)| (*i, display_path(p))).collect();
    for (i, status) in ordered {
        let display = names.get(&i).cloned().unwrap_or_default();
        summary.files.push(FileReport { display, status });
    }
    for (_, ds) in diags {
        summary.diagnostics.extend(ds);
    }
    Ok(summary)
}

/// A manifest's entries as the walk would have found them.
fn from_manifest(entries: &[super::manifest::Entry]) -> walk::Walked {
    let mut w = walk::Walked::default();
    for e in entries {
        match (e.walk.as_deref(), &e.reason) {
            (Some("quarantined"), Some(r)) => w.errors.push(InputError::new(InputErrorKind::Io, &e.display, r.clone())),
            (Some(_), r) => w.skipped.push((e.display.clone(), r.clone().unwrap_or_default())),
            (None, _) => w.files.push(e.file()),
        }
    }
    w
}

type Parsed<T> = (Vec<T>, Vec<InputError>, Option<InputError>);

fn parse_unit<T>(adapter: &'static dyn Adapter, unit: &Unit, ctx: &Ctx<'_>, map: &(dyn Fn(Trajectory) -> T + Sync)) -> Parsed<T> {
    let mut trajs = Vec::new();
    let mut sink = |t: Trajectory| trajs.push(t);
    let mut out = Output::new(&mut sink);
    // A bug in one adapter must cost one file, not the run.
    let res = super::source::hashing(!ctx.unhashed, || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| adapter.parse(unit, ctx, &mut out)))
    });
    let mut errs = std::mem::take(&mut out.diagnostics);
    drop(out);
    let fatal = fatal_of(res, adapter, unit);
    if fatal.is_some() {
        trajs.clear();
    }
    let mut mapped = Vec::with_capacity(trajs.len());
    for (k, t) in trajs.into_iter().enumerate() {
        match finalize_and_map(t, adapter, unit, k, ctx, map) {
            Ok(x) => mapped.push(x),
            Err(e) => errs.push(e),
        }
    }
    (mapped, errs, fatal)
}

/// Finalizes one record and runs the caller's stage on it (classify), so that a bug in either
/// costs that record, with a diagnostic naming its file, and not the run.
fn finalize_and_map<T>(
    mut t: Trajectory,
    adapter: &'static dyn Adapter,
    unit: &Unit,
    index: usize,
    ctx: &Ctx<'_>,
    map: &(dyn Fn(Trajectory) -> T + Sync),
) -> Result<T, InputError> {
    let task = t.task_id.to_string();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        finalize(&mut t, adapter, unit, index, ctx);
        map(t)
    }))
    .map_err(|p| internal_error(&unit.primary.display, &format!("record {index} (task {task}) as {}", adapter.name()), p.as_ref()))
}

/// A panic caught at a unit's or a record's edge, as the quarantine diagnostic of that input.
fn internal_error(display: &str, what: &str, payload: &(dyn std::any::Any + Send)) -> InputError {
    let msg =
        payload.downcast_ref::<&str>().map(ToString::to_string).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_default();
    InputError::new(InputErrorKind::Corrupt, display, format!("process {what}: internal error: {msg}"))
        .with_help("this is a bug in coroner, not in the file; please report it with the file. The rest of the run is unaffected")
}

type ParseResult = std::thread::Result<Result<(), InputError>>;

/// The error that stopped a unit: the adapter's, or its panic as an internal error.
fn fatal_of(res: ParseResult, adapter: &'static dyn Adapter, unit: &Unit) -> Option<InputError> {
    match res {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(p) => Some(internal_error(&unit.primary.display, &format!("it as {}", adapter.name()), p.as_ref())),
    }
}

/// Parses a streaming unit: records are finalized as the adapter emits them and mapped in
/// parallel batches of `batch`, so memory holds one batch and the map still uses every thread.
/// A unit whose records can be read on their own ([`Adapter::records`]) is read, finalized and
/// mapped record by record in one ordered window instead.
fn stream_unit<T: Send>(
    adapter: &'static dyn Adapter,
    unit: &Unit,
    ctx: &Ctx<'_>,
    batch: usize,
    map: &(dyn Fn(Trajectory) -> T + Sync),
    sink: &mut dyn FnMut(T) -> std::io::Result<()>,
) -> Result<(usize, Vec<InputError>, Option<InputError>), IngestError> {
    let mut errs = Vec::new();
    let opened = super::source::hashing(!ctx.unhashed, || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| adapter.records(unit, &mut errs)))
    });
    let records = match opened {
        Ok(None) => return stream_emitted(adapter, unit, ctx, batch, map, sink),
        Ok(Some(Ok(r))) => r,
        Ok(Some(Err(e))) => return Ok((0, errs, Some(e))),
        Err(p) => return Ok((0, errs, fatal_of(Err(p), adapter, unit))),
    };
    let hash = !ctx.unhashed;
    // A bug in one record's reading costs that record, not the unit.
    let work = |k: usize| -> Result<T, InputError> {
        let read = super::source::hashing(hash, || std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| records.read(k))));
        match read {
            Ok(Ok(t)) => finalize_and_map(t, adapter, unit, k, ctx, map),
            Ok(Err(e)) => Err(e),
            Err(p) => Err(internal_error(&unit.primary.display, &format!("record {k} as {}", adapter.name()), p.as_ref())),
        }
    };
    let mut written = 0usize;
    let mut take = |_k: usize, r: Result<T, InputError>| -> Result<(), IngestError> {
        match r {
            Ok(x) => {
                sink(x).map_err(IngestError::Write)?;
                written += 1;
            }
            Err(e) => errs.push(e),
        }
        Ok(())
    };
    super::ordered::map_in_order(rayon::current_num_threads(), &records.costs(), batch, IN_FLIGHT_BYTES, &work, &mut take)?;
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| records.finish())) {
        Ok(late) => errs.extend(late),
        Err(p) => errs.extend(fatal_of(Err(p), adapter, unit)),
    }
    Ok((written, errs, None))
}

/// [`stream_unit`] for adapters that emit their records as they parse them.
fn stream_emitted<T: Send>(
    adapter: &'static dyn Adapter,
    unit: &Unit,
    ctx: &Ctx<'_>,
    batch: usize,
    map: &(dyn Fn(Trajectory) -> T + Sync),
    sink: &mut dyn FnMut(T) -> std::io::Result<()>,
) -> Result<(usize, Vec<InputError>, Option<InputError>), IngestError> {
    let mut written = 0usize;
    let mut emitted = 0usize;
    let mut write_err: Option<std::io::Error> = None;
    let mut failed: Vec<InputError> = Vec::new();
    let mut pending: Vec<(usize, Trajectory)> = Vec::with_capacity(batch);
    let mut flush = |pending: &mut Vec<(usize, Trajectory)>, write_err: &mut Option<std::io::Error>, failed: &mut Vec<InputError>| {
        let mapped: Vec<Result<T, InputError>> =
            std::mem::take(pending).into_par_iter().map(|(k, t)| finalize_and_map(t, adapter, unit, k, ctx, map)).collect();
        let mut n = 0;
        for x in mapped {
            match x {
                Ok(x) => {
                    n += 1;
                    if write_err.is_none()
                        && let Err(e) = sink(x)
                    {
                        *write_err = Some(e);
                    }
                }
                Err(e) => failed.push(e),
            }
        }
        n
    };
    let mut emit = |t: Trajectory| {
        if write_err.is_some() {
            return;
        }
        pending.push((emitted, t));
        emitted += 1;
        if pending.len() >= batch {
            written += flush(&mut pending, &mut write_err, &mut failed);
        }
    };
    let mut out = Output::new(&mut emit);
    // A bug in one adapter must cost one file, not the run.
    let res = super::source::hashing(!ctx.unhashed, || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| adapter.parse(unit, ctx, &mut out)))
    });
    let mut errs = std::mem::take(&mut out.diagnostics);
    drop(out);
    written += flush(&mut pending, &mut write_err, &mut failed);
    if let Some(e) = write_err {
        return Err(IngestError::Write(e));
    }
    errs.extend(failed);
    Ok((written, errs, fatal_of(res, adapter, unit)))
}

/// Largest file searched for a status string: status files are small, and a transcript that
/// holds its own status is read again only up to this size.
const STATUS_SEARCH_MAX: u64 = 16 << 20;

/// The record's files as searched for its status strings: each read at most once per record,
/// however many statuses it carries. Archives and their members (`x.eval`, `x.eval!member`),
/// databases and files over [`STATUS_SEARCH_MAX`] are not searched: their bytes are not where a
/// person would check the status.
struct StatusFiles<'a> {
    files: &'a [crate::model::SourceFile],
    opened_as: Option<&'a HashMap<String, PathBuf>>,
    read: Vec<Option<Option<Vec<u8>>>>,
}

impl<'a> StatusFiles<'a> {
    fn new(files: &'a [crate::model::SourceFile], opened_as: Option<&'a HashMap<String, PathBuf>>) -> Self {
        Self { files, opened_as, read: vec![None; files.len()] }
    }

    fn bytes(&mut self, i: usize) -> Option<&[u8]> {
        const BINARY: &[&str] = &["eval", "zip", "gz", "sqlite", "sqlite3", "db"];
        let f = &self.files[i];
        let opened_as = self.opened_as;
        self.read[i]
            .get_or_insert_with(|| {
                let p = opened_as.and_then(|m| m.get(&f.path)).map_or_else(|| std::path::Path::new(&f.path), PathBuf::as_path);
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
                if f.path.contains('!') || BINARY.contains(&ext.as_str()) {
                    return None;
                }
                if let Some(bytes) = super::source::take_recent(p) {
                    return (bytes.len() as u64 <= STATUS_SEARCH_MAX).then_some(bytes);
                }
                if std::fs::metadata(p).map_or(true, |m| !m.is_file() || m.len() > STATUS_SEARCH_MAX) {
                    return None;
                }
                std::fs::read(p).ok()
            })
            .as_deref()
    }

    /// Where the status string `raw` is written: its last occurrence as a JSON string (else as
    /// plain text, for YAML and logs), in the first file that has it.
    fn span(&mut self, raw: &str) -> Option<crate::model::SourceSpan> {
        if raw.trim().is_empty() {
            return None;
        }
        let quoted = serde_json::to_string(raw).ok()?;
        // A forward scan of every occurrence: memchr's reverse search has no vector prefilter,
        // and a status early in the file (mini-swe-agent's `info` comes first) made it three
        // times slower over the whole file.
        let last = |bytes: &[u8], needle: &[u8]| memchr::memmem::Finder::new(needle).find_iter(bytes).last();
        for i in 0..self.files.len() {
            let Some(bytes) = self.bytes(i) else { continue };
            let hit = last(bytes, quoted.as_bytes())
                .map(|at| (at + 1, quoted.len() - 2))
                .or_else(|| last(bytes, raw.as_bytes()).map(|at| (at, raw.len())));
            if let Some((at, len)) = hit {
                let line = memchr::memchr_iter(b'\n', &bytes[..at]).count() as u64 + 1;
                return Some(crate::model::SourceSpan { file: u32::try_from(i).ok()?, offset: at as u64, len: len as u64, line });
            }
        }
        None
    }
}

/// `rollout-….jsonl` and `rollout-…` for a file; nothing for the generic names many records
/// share (`trajectory.json`, `result.json`, ...), which would join the wrong verdict.
fn file_keys(path: &std::path::Path) -> Vec<String> {
    const GENERIC: &[&str] = &["trajectory", "result", "results", "output", "session", "events", "log", "transcript", "run", "chat"];
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return Vec::new() };
    let mut stem = name;
    for ext in [".gz", ".json", ".jsonl", ".traj", ".eval", ".txt", ".log", ".yaml"] {
        stem = stem.strip_suffix(ext).unwrap_or(stem);
    }
    if stem.is_empty() || GENERIC.contains(&stem.to_ascii_lowercase().as_str()) {
        return Vec::new();
    }
    if stem == name { vec![name.to_string()] } else { vec![name.to_string(), stem.to_string()] }
}

/// The generic part of every record: id, pairing, joined outcome, provenance, status span.
fn finalize(t: &mut Trajectory, adapter: &'static dyn Adapter, unit: &Unit, index: usize, ctx: &Ctx<'_>) {
    t.record_version = RECORD_VERSION;
    if let Some(h) = ctx.harness {
        h.clone_into(&mut t.harness);
    }
    if t.id.is_empty() {
        t.id = trajectory_id(&t.task_id, &unit.primary.rel, index);
    }
    pair_results(t);
    if t.provenance.adapter.is_empty() {
        t.provenance.adapter = adapter.name().to_string();
        t.provenance.adapter_version = adapter.version();
    }
    let path = &unit.primary.path;
    // Agent-CLI sessions carry no verdict and are often known by their file: the file's name
    // (with and without its extensions) joins too, after the ids.
    let owned: Vec<String> = [Some(t.task_id.clone()), t.session_id.clone()].into_iter().flatten().chain(file_keys(path)).collect();
    let keys: Vec<&str> = owned.iter().map(String::as_str).collect();
    // `--verdicts` files win over what the transcript or its run directory says; the replaced
    // verdict is noted, never silently dropped.
    if let Some(j) = ctx.join.global_outcome(&keys) {
        if t.outcome.is_known() && t.outcome.status != j.value.status {
            let from = t.outcome.source.as_ref().map_or_else(String::new, |s| format!(" from {} ({})", s.file, s.field));
            t.notes.push(format!(
                "outcome {}{from} replaced by {} from --verdicts {}",
                t.outcome.status.as_str(),
                j.value.status.as_str(),
                j.file.path
            ));
        }
        t.outcome = j.value.clone();
        push_file(t, j.file);
    } else if !t.outcome.is_known()
        && let Some(j) = ctx.join.outcome(&keys, path)
    {
        t.outcome = j.value.clone();
        push_file(t, j.file);
    }
    if t.submission.is_none()
        && let Some(j) = ctx.join.submission(&keys, path)
    {
        t.submission = Some(j.value.clone());
        push_file(t, j.file);
    }
    // Evidence resting on how the run ended points at the status's bytes.
    let mut files = StatusFiles::new(&t.provenance.files, ctx.opened_as);
    for s in t.signals.statuses.iter_mut().filter(|s| s.span.is_none()) {
        s.span = files.span(&s.text);
    }
    if t.termination.span.is_none()
        && let Some(raw) = t.termination.raw.as_deref()
    {
        t.termination.span = files.span(raw);
    }
    if t.arm.is_none() {
        t.arm = Some(match &t.model {
            Some(m) => format!("{}/{m}", t.harness),
            None => t.harness.clone(),
        });
    }
}

/// Adds a contributing file to provenance once.
pub fn push_file(t: &mut Trajectory, f: &crate::model::SourceFile) {
    if !t.provenance.files.iter().any(|x| x.path == f.path && x.role == f.role) {
        t.provenance.files.push(f.clone());
    }
}
