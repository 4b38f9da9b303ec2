//! The `.eval` adapter: an archive's header (or journal start record), then its sample members,
//! each read on its own (in parallel by the pipeline), in archive order; samples the summaries
//! list but the archive lacks are reported. The container itself is read by [`super::eval`].

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use serde::Deserialize;
use serde_json::Value;

use super::eval::{self, EvalArchive, Limits, Member};
use super::header::{LogContext, RawHeader};
use super::sample::{SampleSource, sample, text_of};
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Records, Sniff, Unit, file_name, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::{Source, sha256_file};
use crate::model::{SourceFile, Trajectory};

/// Reads an `.eval` archive with the given bounds, member by member, in archive order on the
/// calling thread (the pipeline reads them in parallel through [`InspectEval`]'s records).
///
/// # Errors
/// When the file is not a readable ZIP archive; problems with single members are diagnostics.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn read_eval(unit: &Unit, limits: Limits, adapter: &'static str, out: &mut Output<'_>) -> Result<(), InputError> {
    let records = EvalRecords::open(unit, limits, adapter, &mut out.diagnostics)?;
    for i in 0..records.samples.len() {
        match records.read(i) {
            Ok(t) => out.emit(t),
            Err(e) => out.diagnostics.push(e),
        }
    }
    out.diagnostics.extend(records.finish());
    Ok(())
}

/// An archive's sample members, each inflated and parsed on its own by whichever thread asks,
/// with a handle on the archive per thread: the work of a large log spreads over every core
/// while memory holds only the samples in flight.
struct EvalRecords {
    path: std::path::PathBuf,
    limits: Limits,
    adapter: &'static str,
    archive: SourceFile,
    ctx: LogContext,
    samples: Vec<Member>,
    /// The archive as opened (forked for each thread, and read for its summaries at the end).
    zip: Mutex<EvalArchive>,
    /// Handles not in use, each with the file opened again.
    spare: Mutex<Vec<EvalArchive>>,
}

impl EvalRecords {
    /// One sample member into a record, or the diagnostic that stopped it.
    #[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
    fn sample(&self, zip: &mut EvalArchive, m: &Member) -> Result<Trajectory, InputError> {
        let bytes = zip.read(m, self.limits.member)?;
        let src = Source::from_bytes(&self.path, &zip.member_display(&m.name), bytes);
        let text = src.text()?;
        let at = SampleSource { src: &src, file_ix: 1, files: vec![self.archive.clone(), src.provenance("sample")] };
        sample(text, &at, &self.ctx, self.adapter).map_err(|e| {
            let base = at.src.offset_of(text).unwrap_or(0);
            InputError::from_json_at(&at.src.display, &at.src.bytes, base, "Inspect sample", &e)
        })
    }

    #[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
    fn open(unit: &Unit, limits: Limits, adapter: &'static str, diagnostics: &mut Vec<InputError>) -> Result<Self, InputError> {
        let shown = &unit.primary.display;
        let mut zip = EvalArchive::open(&unit.primary.path, shown)?;
        let archive = SourceFile { path: shown.clone(), sha256: sha256_file(&unit.primary.path, shown)?, role: "transcript".into() };
        let ctx = eval_context(&mut zip, limits, diagnostics);
        let samples: Vec<Member> =
            zip.members().iter().filter(|m| m.name.starts_with(eval::SAMPLES_DIR) && m.name.ends_with(".json")).cloned().collect();
        Ok(Self {
            path: unit.primary.path.clone(),
            limits,
            adapter,
            archive,
            ctx,
            samples,
            zip: Mutex::new(zip),
            spare: Mutex::new(Vec::new()),
        })
    }
}

impl Records for EvalRecords {
    /// A sample holds its inflated bytes while it is parsed: the size the archive declares,
    /// bounded as the read is.
    fn costs(&self) -> Vec<u64> {
        self.samples.iter().map(|m| m.size.min(self.limits.member).max(m.compressed)).collect()
    }

    fn read(&self, i: usize) -> Result<Trajectory, InputError> {
        let taken = self.spare.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let mut z = taken.unwrap_or_else(|| self.zip.lock().unwrap_or_else(PoisonError::into_inner).fork());
        let r = self.sample(&mut z, &self.samples[i]);
        // A handle that failed (a reopen that did not take, a damaged stream) is not handed to
        // the next sample, whichever thread reads it: that sample opens its own.
        if r.is_ok() {
            self.spare.lock().unwrap_or_else(PoisonError::into_inner).push(z);
        }
        r
    }

    fn finish(&self) -> Vec<InputError> {
        let present: BTreeSet<String> = self.samples.iter().map(|m| m.name.trim_start_matches(eval::SAMPLES_DIR).to_string()).collect();
        let mut zip = self.zip.lock().unwrap_or_else(PoisonError::into_inner);
        missing_from_summaries(&mut zip, self.limits, &present).into_iter().collect()
    }
}

/// The header, else the journal's start record (a run in progress or killed), else nothing:
/// the samples are complete records on their own, so they are still read, each with a note,
/// and the missing header is reported once.
fn eval_context(zip: &mut EvalArchive, limits: Limits, diagnostics: &mut Vec<InputError>) -> LogContext {
    for (name, note) in [
        (eval::HEADER_JSON, None),
        (
            eval::START_JSON,
            Some(
                "the log has no header.json (the eval was still running or was killed): eval facts come from _journal/start.json, and only the samples finished by then are present",
            ),
        ),
    ] {
        let Some(m) = zip.find(name).cloned() else { continue };
        let bytes = match zip.read(&m, limits.header) {
            Ok(b) => b,
            Err(e) => {
                diagnostics.push(e);
                continue;
            }
        };
        let src = Source::from_bytes(std::path::Path::new(name), &zip.member_display(name), bytes);
        match serde_json::from_slice::<RawHeader>(&src.bytes) {
            Ok(h) => {
                let mut ctx = LogContext::from_header(h, "eval");
                ctx.notes.extend(note.map(ToString::to_string));
                return ctx;
            }
            Err(e) => diagnostics.push(InputError::from_json(&src.display, &src.bytes, "Inspect log header", &e)),
        }
    }
    let has_header = zip.find(eval::HEADER_JSON).is_some() || zip.find(eval::START_JSON).is_some();
    if !has_header {
        diagnostics.push(
            InputError::new(InputErrorKind::Schema, zip.display(), "find header.json or _journal/start.json in the .eval archive")
                .with_help("without the header the task name and the model are unknown; the samples were still read (model from their usage), each with a note"),
        );
    }
    let mut ctx = LogContext { format_version: "inspect-eval".into(), ..LogContext::default() };
    ctx.notes.push("the .eval archive has no readable header: the task name and model come from the sample itself".into());
    ctx
}

#[derive(Deserialize)]
struct RawSummary {
    id: Value,
    #[serde(default)]
    epoch: Option<u64>,
}

/// Samples that `summaries.json` (or the journal's summaries) lists but that have no member
/// at all: reported once, so a lost sample is never silent. (A member that is present but
/// unreadable already has its own diagnostic.)
fn missing_from_summaries(zip: &mut EvalArchive, limits: Limits, present: &BTreeSet<String>) -> Option<InputError> {
    let names: Vec<Member> = match zip.find(eval::SUMMARIES_JSON) {
        Some(m) => vec![m.clone()],
        None => zip.members().iter().filter(|m| m.name.starts_with(eval::JOURNAL_SUMMARIES)).cloned().collect(),
    };
    let mut listed: BTreeSet<String> = BTreeSet::new();
    for m in names {
        let Ok(bytes) = zip.read(&m, limits.header) else { continue };
        let Ok(rows) = serde_json::from_slice::<Vec<RawSummary>>(&bytes) else { continue };
        listed.extend(rows.iter().map(|r| format!("{}_epoch_{}.json", text_of(&r.id), r.epoch.unwrap_or(1))));
    }
    let missing: Vec<&String> = listed.iter().filter(|n| !present.contains(*n)).collect();
    if missing.is_empty() {
        return None;
    }
    let shown: Vec<&str> = missing.iter().take(10).map(|s| s.as_str()).collect();
    Some(
        InputError::new(
            InputErrorKind::Corrupt,
            zip.member_display(eval::SUMMARIES_JSON).as_str(),
            format!("find {} sample(s) the summaries list: {}", missing.len(), shown.join(", ")),
        )
        .with_help("these samples are listed as finished but the archive has no member for them (it was cut or rewritten)"),
    )
}

/// Inspect `.eval` logs (ZIP).
pub struct InspectEval;

impl Adapter for InspectEval {
    fn name(&self) -> &'static str {
        "inspect-eval"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Inspect AI .eval log (ZIP: header.json + samples/<id>_epoch_<n>.json), read member by member"
    }

    /// The header's `version` is read as 2 when absent (`header.rs`); members may be deflate or zstd.
    fn versions(&self) -> &'static str {
        "log version 2 (deflate or zstd)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let zip = p.prefix.starts_with(b"PK\x03\x04");
        // The first local header's file name sits at byte 30; Inspect writes the journal first.
        let first = p.prefix.get(30..).map(|b| &b[..b.len().min(64)]).unwrap_or_default();
        let inspect_member = [b"_journal/".as_slice(), b"header.json", b"samples/", b"summaries.json"].iter().any(|m| first.starts_with(m));
        match (zip, p.ext() == "eval", inspect_member) {
            (true, true, _) => marker("ZIP archive named .eval"),
            (true, false, true) => marker("ZIP archive with Inspect log members"),
            (false, true, _) => file_name(".eval name (but not a ZIP archive)"),
            _ => Err("not an .eval ZIP archive".into()),
        }
    }

    /// An `.eval` holds any number of samples: records go out one at a time.
    fn streams(&self, _unit: &Unit) -> bool {
        true
    }

    fn records(&self, unit: &Unit, diagnostics: &mut Vec<InputError>) -> Option<Result<Box<dyn Records>, InputError>> {
        Some(EvalRecords::open(unit, Limits::DEFAULT, self.name(), diagnostics).map(|r| Box::new(r) as Box<dyn Records>))
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        read_eval(unit, Limits::DEFAULT, self.name(), out)
    }
}
