//! The Inspect `.eval` container: a ZIP archive read one member at a time.
//!
//! An `.eval` log can be gigabytes, so the archive is never loaded: the central directory is
//! read, then each member is decompressed on its own through a reader that stops one byte past
//! a bound. A member over its bound (a ZIP bomb, or a log far larger than any real sample) is
//! reported and skipped without being decompressed further; a damaged member (bad deflate or
//! zstd stream, CRC mismatch) is reported and the others are still read. Inspect writes
//! `_journal/start.json` first, one `samples/<id>_epoch_<n>.json` per finished sample, and
//! `summaries.json`, `reductions.json` and `header.json` when the eval ends; a re-logged sample
//! repeats its member name and the last one wins (`inspect_ai/log/_recorders/eval.py`).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::source::io_error;

pub const HEADER_JSON: &str = "header.json";
pub const START_JSON: &str = "_journal/start.json";
pub const SUMMARIES_JSON: &str = "summaries.json";
pub const JOURNAL_SUMMARIES: &str = "_journal/summaries/";
pub const SAMPLES_DIR: &str = "samples/";

/// Decompressed-size bounds, per member kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `header.json`, `_journal/start.json` and sample summaries: the eval spec, plan, results
    /// and per-sample score rows. Real ones are kilobytes to a few megabytes.
    pub header: u64,
    /// One sample (`samples/<id>_epoch_<n>.json`): its messages, events and attachments. Long
    /// agent runs reach hundreds of megabytes; past 1 GiB a member is refused like any
    /// document over [`MAX_DOCUMENT_BYTES`](crate::ingest::source::MAX_DOCUMENT_BYTES).
    pub member: u64,
}

impl Limits {
    pub const DEFAULT: Self = Self { header: 64 << 20, member: 1 << 30 };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One member as the central directory lists it.
#[derive(Debug, Clone)]
pub struct Member {
    pub index: usize,
    pub name: String,
    /// Uncompressed size the archive declares (not trusted: reads are bounded regardless).
    pub size: u64,
    /// Compressed size in the archive (what the file really holds for it).
    pub compressed: u64,
}

/// The most a member may inflate per compressed byte, past the first [`RATIO_FREE_BYTES`]. Real
/// samples are JSON that deflates 5-30×; a ZIP bomb approaches deflate's 1032×. Without it, a
/// few hundred kilobytes could make every thread hold up to a 1 GiB member at once.
pub const MAX_RATIO: u64 = 128;
/// Inflated bytes allowed whatever the ratio (small, highly repetitive members are normal).
pub const RATIO_FREE_BYTES: u64 = 16 << 20;

/// The archive file, buffered; a clone opens the file again, so clones of one archive (which
/// share its parsed central directory) can be read on several threads at once.
struct ArchiveFile {
    path: std::sync::Arc<Path>,
    /// `None` when reopening failed; reads then report that error.
    file: Option<BufReader<File>>,
}

impl ArchiveFile {
    fn open(path: &Path) -> std::io::Result<Self> {
        Ok(Self { path: path.into(), file: Some(BufReader::with_capacity(1 << 16, File::open(path)?)) })
    }

    fn file(&mut self) -> std::io::Result<&mut BufReader<File>> {
        self.file.as_mut().ok_or_else(|| std::io::Error::other(format!("failed to reopen {}", self.path.display())))
    }
}

impl Clone for ArchiveFile {
    fn clone(&self) -> Self {
        Self { path: self.path.clone(), file: File::open(&self.path).ok().map(|f| BufReader::with_capacity(1 << 16, f)) }
    }
}

impl Read for ArchiveFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.file()?.read(buf)
    }
}

impl std::io::Seek for ArchiveFile {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.file()?.seek(pos)
    }
}

/// An open `.eval` archive.
pub struct EvalArchive {
    zip: zip::ZipArchive<ArchiveFile>,
    display: String,
    /// Members in central-directory order.
    members: Vec<Member>,
}

impl EvalArchive {
    /// Opens the archive and reads its central directory (not its members).
    ///
    /// # Errors
    /// When the file cannot be opened or is not a readable ZIP archive.
    #[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
    pub fn open(path: &Path, display: &str) -> Result<Self, InputError> {
        let f = ArchiveFile::open(path).map_err(|e| io_error(display, &e))?;
        let zip = zip::ZipArchive::new(f).map_err(|e| {
            InputError::new(InputErrorKind::Corrupt, display, format!("open the Inspect .eval archive: {e}"))
                .with_help("an .eval log is a ZIP archive; this one has no readable central directory (cut off while being written, or not an .eval log)")
        })?;
        // A repeated member name (a re-logged sample) resolves to its last entry in the zip
        // crate's index, as it does in Inspect's own readers.
        let mut zip = zip;
        let mut members = Vec::with_capacity(zip.len());
        for index in 0..zip.len() {
            let Some(name) = zip.name_for_index(index).map(ToString::to_string) else { continue };
            // `by_index_raw` reads only the local header: nothing is decompressed here.
            let (size, compressed) = zip.by_index_raw(index).map(|m| (m.size(), m.compressed_size())).unwrap_or((0, 0));
            members.push(Member { index, name, size, compressed });
        }
        Ok(Self { zip, display: display.to_string(), members })
    }

    /// Another handle on the same archive, for reading members on another thread: the central
    /// directory is shared, the file is opened again.
    #[must_use]
    pub fn fork(&self) -> Self {
        Self { zip: self.zip.clone(), display: self.display.clone(), members: self.members.clone() }
    }

    #[must_use]
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    #[must_use]
    pub fn find(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }

    /// The archive as shown to the user.
    #[must_use]
    pub fn display(&self) -> &str {
        &self.display
    }

    /// How a member is shown in diagnostics and provenance: `<archive>!<member>`.
    #[must_use]
    pub fn member_display(&self, member: &str) -> String {
        format!("{}!{member}", self.display)
    }

    /// Decompresses one member, refusing it past `bound` bytes.
    ///
    /// # Errors
    /// `TooLarge` when the declared or the actual size exceeds `bound`; `Corrupt` when the
    /// member cannot be decompressed or fails its checksum.
    #[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
    pub fn read(&mut self, member: &Member, bound: u64) -> Result<Vec<u8>, InputError> {
        let shown = self.member_display(&member.name);
        if member.size > bound {
            return Err(too_large(&shown, member.size, bound, "declares"));
        }
        let by_ratio = member.compressed.saturating_mul(MAX_RATIO).max(RATIO_FREE_BYTES);
        let file = self.zip.by_index(member.index).map_err(|e| corrupt(&shown, &e.to_string()))?;
        read_bounded(file, bound.min(by_ratio), member.size).map_err(|e| match e {
            Bounded::TooLarge if by_ratio < bound => InputError::new(
                InputErrorKind::TooLarge,
                &shown,
                format!(
                    "read the member: its {} compressed bytes inflate past {by_ratio} bytes, a compression ratio over {MAX_RATIO}:1",
                    member.compressed
                ),
            )
            .with_help("no real sample compresses this well (a ZIP bomb); it was not inflated further, and the other members of the archive were still read"),
            Bounded::TooLarge => too_large(&shown, bound + 1, bound, "decompresses to at least"),
            Bounded::Io(msg) => corrupt(&shown, &msg),
        })
    }
}

/// Why a bounded read stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Bounded {
    TooLarge,
    Io(String),
}

/// Reads `r` to its end unless it yields more than `bound` bytes; `hint` (a declared size)
/// only sizes the first allocation.
///
/// # Errors
/// [`Bounded::TooLarge`] past `bound`, [`Bounded::Io`] when the stream fails.
pub fn read_bounded(r: impl Read, bound: u64, hint: u64) -> Result<Vec<u8>, Bounded> {
    let cap = usize::try_from(hint.min(bound).min(64 << 20)).unwrap_or(0);
    let mut buf = Vec::with_capacity(cap);
    r.take(bound.saturating_add(1)).read_to_end(&mut buf).map_err(|e| Bounded::Io(e.to_string()))?;
    if buf.len() as u64 > bound {
        return Err(Bounded::TooLarge);
    }
    Ok(buf)
}

fn too_large(shown: &str, size: u64, bound: u64, how: &str) -> InputError {
    InputError::new(InputErrorKind::TooLarge, shown, format!("read the member: it {how} {size} bytes, over the {bound} byte bound"))
        .with_help("members this large are refused (a ZIP bomb, or a corrupt size); the other members of the archive were still read")
}

fn corrupt(shown: &str, msg: &str) -> InputError {
    InputError::new(InputErrorKind::Corrupt, shown, format!("decompress the member: {msg}"))
        .with_help("this member of the archive is damaged; the other members were still read. Re-copy the log if it came over a network")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_read_stops_one_byte_past_the_bound() {
        let data = vec![b' '; 1000];
        assert_eq!(read_bounded(&data[..], 1000, 10).unwrap().len(), 1000);
        assert_eq!(read_bounded(&data[..], 999, 10), Err(Bounded::TooLarge));
        // A lying declared size only sizes the first allocation.
        assert_eq!(read_bounded(&data[..], 5000, u64::MAX).unwrap().len(), 1000);
    }

    /// A reader that never ends, like a decompressor fed a bomb: the bound still stops it.
    #[test]
    fn an_endless_stream_is_refused_at_the_bound() {
        let endless = std::io::repeat(b'x');
        assert_eq!(read_bounded(endless, 1 << 20, 0), Err(Bounded::TooLarge));
    }
}
