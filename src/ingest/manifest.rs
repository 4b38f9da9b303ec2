//! `coroner manifest`: the walk and the format detection of a run, done once and written down,
//! so the shards of a large run do not each walk and probe every input again.
//!
//! One JSON line per file the walk found: its path (as given), its display and root-relative
//! paths, size, SHA-256, and the adapter detection chose (or none: a file to skip or quarantine,
//! which the shard that owns it probes again to give the same diagnostic as an unsharded run).
//! The walk's own refusals (a FIFO, a broken link, a link to a directory) are lines too. With
//! `--manifest`, ingest reads this list instead of walking, and trusts its detection for every
//! file it does not own, so a shard reads only its own files, their companions and the outcome
//! files every join needs.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::Digest;

use super::detect::{Detected, detect};
use super::format::{Adapter, FileEntry};
use super::probe::Probe;
use super::walk;

/// One line of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The path to open, as the walk reached it.
    pub path: String,
    pub display: String,
    /// Relative to the input root (what shards hash).
    pub rel: String,
    pub size: u64,
    pub sha256: String,
    /// The adapter detection chose; `None` for a file to skip or quarantine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// The walk refused the entry (`quarantined`) or passed over it (`skipped`), with why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// In one shard's part of a manifest (`manifest --shard`): the entry's position in the
    /// whole manifest, so the parts of all shards merge back into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<usize>,
    /// With `at`: the walk the part was cut from, `ENTRIES:DIGEST` (how many entries the whole
    /// manifest has, and a hash of what the walk found, in order), so parts of different walks
    /// are never joined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_of: Option<String>,
}

impl Entry {
    #[must_use]
    pub fn file(&self) -> FileEntry {
        FileEntry { path: PathBuf::from(&self.path), display: self.display.clone(), rel: self.rel.clone() }
    }
}

/// Walks `inputs` and detects every file, in the walk's order. With a shard, only the entries
/// it owns (as `--shard` accounts for them: a file by its root-relative path, a refusal by its
/// path as shown) are read and listed, each with its position in the whole manifest (`at`):
/// the walk is cheap, reading and hashing every byte is not, so shards can share that work.
#[must_use]
pub fn build(
    inputs: &[PathBuf],
    adapters: &[&'static dyn Adapter],
    forced: Option<&'static dyn Adapter>,
    shard: Option<super::shard::Shard>,
) -> Vec<Entry> {
    let walk::Walked { files, errors, skipped } = walk::collect(inputs);
    let mine = |key: &str| shard.is_none_or(|s| s.holds(key));
    let at = |i: usize| shard.map(|_| i);
    let walk_of = shard.map(|_| {
        let mut h = sha2::Sha256::new();
        for key in files
            .iter()
            .map(|f| f.rel.as_str())
            .chain(errors.iter().map(|e| e.path.as_str()))
            .chain(skipped.iter().map(|(d, _)| d.as_str()))
        {
            h.update(key.as_bytes());
            h.update(b"\n");
        }
        format!("{}:{}", files.len() + errors.len() + skipped.len(), &crate::util::hex(&h.finalize())[..16])
    });
    let n_files = files.len();
    let n_errors = errors.len();
    let mut out: Vec<Entry> = files
        .into_par_iter()
        .enumerate()
        .filter(|(_, f)| mine(&f.rel))
        .map(|(i, f)| {
            let (adapter, size) = match Probe::read(&f.path) {
                Ok(p) => match detect(&p, &f.display, adapters, forced) {
                    Detected::Adapter { adapter, .. } => (Some(adapter.name().to_string()), p.size),
                    _ => (None, p.size),
                },
                Err(_) => (None, 0),
            };
            Entry {
                path: f.path.display().to_string(),
                display: f.display.clone(),
                rel: f.rel.clone(),
                size,
                sha256: super::source::sha256_file(&f.path, &f.display).unwrap_or_default(),
                adapter,
                walk: None,
                reason: None,
                at: at(i),
                walk_of: walk_of.clone(),
            }
        })
        .collect();
    let refused = |display: String, walk: &str, reason: String, i: usize| Entry {
        path: display.clone(),
        rel: display.clone(),
        display,
        size: 0,
        sha256: String::new(),
        adapter: None,
        walk: Some(walk.to_string()),
        reason: Some(reason),
        at: at(i),
        walk_of: walk_of.clone(),
    };
    out.extend(
        errors
            .into_iter()
            .enumerate()
            .filter(|(_, e)| mine(&e.path))
            .map(|(i, e)| refused(e.path.clone(), "quarantined", e.message, n_files + i)),
    );
    out.extend(
        skipped.into_iter().enumerate().filter(|(_, (d, _))| mine(d)).map(|(i, (d, r))| refused(d, "skipped", r, n_files + n_errors + i)),
    );
    out
}

/// The parts of a manifest (`manifest --shard K/N` for every K) as the one manifest they
/// split: entries in the order of their positions, without them.
///
/// # Errors
/// Parts that do not make one walk exactly: of different walks (other inputs, a tree that
/// changed between them), a position twice (a part given twice, or parts of different splits),
/// a position missing (a part left out), or nothing at all.
pub fn merge(parts: Vec<Vec<Entry>>) -> Result<Vec<Entry>, String> {
    let mut all: Vec<Entry> = parts.into_iter().flatten().collect();
    let Some(walk) = all.first().and_then(|e| e.walk_of.clone()) else {
        return Err("the parts list no file".into());
    };
    if all.iter().any(|e| e.walk_of.as_deref() != Some(&walk) || e.at.is_none()) {
        return Err("the parts are of different walks (other inputs, or a tree that changed between them)".into());
    }
    let total: usize = walk.split(':').next().and_then(|n| n.parse().ok()).unwrap_or(0);
    all.sort_by_key(|e| e.at);
    for (i, e) in all.iter().enumerate() {
        match e.at {
            Some(at) if at < i => {
                return Err(format!("entry {at} ({}) is listed twice: a part given twice, or parts of different splits", e.display));
            }
            Some(at) if at > i => return Err(format!("entries {i}..{at} are missing: a part is missing")),
            _ => {}
        }
    }
    if all.len() != total {
        return Err(format!("entries {}..{total} are missing: a part is missing", all.len()));
    }
    for e in &mut all {
        e.at = None;
        e.walk_of = None;
    }
    Ok(all)
}

/// Writes a manifest as JSON Lines.
///
/// # Errors
/// On I/O failure.
pub fn write(entries: &[Entry], mut to: impl Write) -> std::io::Result<()> {
    for e in entries {
        serde_json::to_writer(&mut to, e)?;
        to.write_all(b"\n")?;
    }
    to.flush()
}

/// Reads a manifest.
///
/// # Errors
/// An unreadable file or a line that is not an entry, with its line number.
pub fn read(path: &Path) -> Result<Vec<Entry>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("read the manifest {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| format!("read the manifest {}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(&line).map_err(|e| format!("read line {} of the manifest {}: {e}", i + 1, path.display()))?);
    }
    Ok(out)
}
