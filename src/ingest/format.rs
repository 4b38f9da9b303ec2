//! The adapter contract: one implementation per file format.
//!
//! Detection asks every adapter to `sniff` a [`Probe`]; the strongest evidence wins (see
//! `detect`). Transcript adapters then `parse` a [`Unit`] (a primary file plus the companion
//! files it claims) and emit trajectories; outcome adapters read verdict files into the
//! [`JoinIndex`](super::join::JoinIndex) that transcripts are joined with.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::diag::InputError;
use super::join::{JoinIndex, OutcomeFile};
use super::probe::Probe;
use super::source::Source;
use crate::model::Trajectory;

/// What a file contributes to ingest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileRole {
    /// Holds trajectories.
    Transcript,
    /// Holds verdicts or statuses joined to trajectories by task id.
    Outcome,
    /// Describes a run (metadata); read by the adapter that claims it, never on its own.
    Metadata,
}

/// How strong a detection is, weakest first; the cascade of STYLE.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strength {
    /// Only the file name fits.
    FileName,
    /// The structure fits (field names), without a format marker.
    Structure,
    /// An explicit marker field names the format (`schema_version: ATIF-v1.6`).
    Marker,
}

#[derive(Debug, Clone)]
pub struct Detection {
    pub strength: Strength,
    pub reason: String,
}

/// An adapter's answer to a probe: a detection, or why the file is not its format.
pub type Sniff = Result<Detection, String>;

pub fn marker(reason: impl Into<String>) -> Sniff {
    Ok(Detection { strength: Strength::Marker, reason: reason.into() })
}

pub fn structure(reason: impl Into<String>) -> Sniff {
    Ok(Detection { strength: Strength::Structure, reason: reason.into() })
}

pub fn file_name(reason: impl Into<String>) -> Sniff {
    Ok(Detection { strength: Strength::FileName, reason: reason.into() })
}

/// A file as the pipeline knows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileEntry {
    pub path: PathBuf,
    /// As shown to users: the input as given, then the path below it.
    pub display: String,
    /// Relative to the parent of the input it was found under; stable across machines, used
    /// for ids.
    pub rel: String,
}

/// Every file of the run with the format detection chose for it (`None`: no format), for
/// adapters that look for companions (a Harbor trial's `agent/trajectory.json`).
pub type FileSet = BTreeMap<PathBuf, Option<&'static str>>;

/// What one transcript adapter parses: a primary file and the companions it claimed.
#[derive(Debug, Clone)]
pub struct Unit {
    pub primary: FileEntry,
    pub companions: Vec<FileEntry>,
}

/// Where adapters put what they produce.
pub struct Output<'a> {
    emit: &'a mut dyn FnMut(Trajectory),
    /// Problems with parts of the input (one bad line of a JSONL file) that did not stop the
    /// rest of the file; each counts as a quarantined record.
    pub diagnostics: Vec<InputError>,
    pub emitted: usize,
}

impl<'a> Output<'a> {
    pub fn new(emit: &'a mut dyn FnMut(Trajectory)) -> Self {
        Self { emit, diagnostics: Vec::new(), emitted: 0 }
    }

    pub fn emit(&mut self, t: Trajectory) {
        self.emitted += 1;
        (self.emit)(t);
    }
}

/// What adapters may consult while parsing.
pub struct Ctx<'a> {
    pub join: &'a JoinIndex,
    pub files: &'a FileSet,
    /// The harness the caller says every record was run with.
    pub harness: Option<&'a str>,
    /// Where a file is opened, by the path it is shown as, for the files shown otherwise (a
    /// manifest's `--shown-as`): provenance names files as shown.
    pub opened_as: Option<&'a std::collections::HashMap<String, PathBuf>>,
    /// Sources are read without their sha256 (`IngestOptions::unhashed`).
    pub unhashed: bool,
    /// Files by adapter and grandparent directory, built on first use.
    siblings: std::sync::OnceLock<std::collections::HashMap<(&'static str, PathBuf), Vec<PathBuf>>>,
}

impl<'a> Ctx<'a> {
    #[must_use]
    pub fn new(join: &'a JoinIndex, files: &'a FileSet) -> Self {
        Self { join, files, harness: None, opened_as: None, unhashed: false, siblings: std::sync::OnceLock::new() }
    }

    /// Files detected as `adapter` whose grandparent is `dir` (sibling trial directories of a
    /// job), in path order.
    #[must_use]
    pub fn cousins(&self, adapter: &'static str, dir: &Path) -> &[PathBuf] {
        let ix = self.siblings.get_or_init(|| {
            let mut m: std::collections::HashMap<(&'static str, PathBuf), Vec<PathBuf>> = std::collections::HashMap::new();
            for (p, a) in self.files {
                let Some(a) = a else { continue };
                if let Some(g) = p.parent().and_then(Path::parent) {
                    m.entry((a, g.to_path_buf())).or_default().push(p.clone());
                }
            }
            m
        });
        ix.get(&(adapter, dir.to_path_buf())).map_or(&[], Vec::as_slice)
    }
}

/// A container's records, each read on its own (see [`Adapter::records`]).
pub trait Records: Sync {
    /// Each record's input bytes in memory while it is read (what the parse window budgets).
    fn costs(&self) -> Vec<u64>;

    /// Record `i`, on any thread, in any order; `Err` costs that record alone.
    ///
    /// # Errors
    /// When the record cannot be read or parsed.
    #[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
    fn read(&self, i: usize) -> Result<Trajectory, InputError>;

    /// Problems seen only once every record was read (records the container's index lists but
    /// that it lacks).
    fn finish(&self) -> Vec<InputError>;
}

/// One file format.
pub trait Adapter: Sync + Send {
    /// Stable name, used by `--format` and in provenance.
    fn name(&self) -> &'static str;

    /// Bumped when the adapter's reading of the format changes.
    fn version(&self) -> u32 {
        1
    }

    fn role(&self) -> FileRole;

    /// One line for `coroner ingest --list-formats`.
    fn describe(&self) -> &'static str;

    /// Which versions or generations of the format this adapter reads, for
    /// `coroner ingest --list-formats` (`1.0–1.8`, `V0 events`, `Terminal-Bench 1`): short (at
    /// most 40 characters), and only what the code handles.
    ///
    /// Why: harnesses change their formats between releases, and a file of a version the adapter
    /// was not written for may parse with fields quietly missing; a user needs to see which
    /// versions are read before trusting the records of a run. `describe` says what a file is,
    /// this says which of them. Empty (shown as `-`) only for files recognized to keep them out
    /// of quarantine but never read, whose version cannot change a record.
    fn versions(&self) -> &'static str {
        ""
    }

    fn sniff(&self, probe: &Probe) -> Sniff;

    /// Files that belong to this primary file's record and must not be ingested on their own.
    fn companions(&self, _primary: &Path, _files: &FileSet) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Whether the unit's records are written as they are parsed rather than collected first:
    /// for containers of many records (a multi-gigabyte Inspect `.eval`), so memory holds one
    /// record instead of the whole file's. Such units are parsed one at a time, in input order,
    /// and a fatal error after some records keeps those records.
    fn streams(&self, _unit: &Unit) -> bool {
        false
    }

    /// A streaming unit's records as reads that are independent of each other, where the
    /// container allows it (an archive's members): the pipeline then reads, finalizes and
    /// classifies each record in one task on whichever thread is free. Emitting records and
    /// classifying them in a second parallel pass left a thread idle at every group's end.
    /// `None`: the unit is read by [`Adapter::parse`].
    ///
    /// # Errors
    /// As [`Adapter::parse`], when the container cannot be opened; problems found while opening
    /// it that do not stop it go to `diagnostics`.
    fn records(&self, _unit: &Unit, _diagnostics: &mut Vec<InputError>) -> Option<Result<Box<dyn Records>, InputError>> {
        None
    }

    /// Parses a unit into trajectories.
    ///
    /// # Errors
    /// When the primary file cannot be read at all; partial problems go to `out.diagnostics`.
    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, _out: &mut Output<'_>) -> Result<(), InputError> {
        Err(InputError::new(
            super::diag::InputErrorKind::UnknownFormat,
            &unit.primary.display,
            format!("parse a {} file on its own", self.name()),
        ))
    }

    /// Reads an outcome file.
    ///
    /// # Errors
    /// When the file does not parse.
    fn outcomes(&self, _src: &Source) -> Result<OutcomeFile, InputError> {
        Ok(OutcomeFile::default())
    }
}
