//! A source file read into memory once, with its digest, for one adapter to parse.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

use super::diag::{InputError, InputErrorKind};
use crate::model::SourceFile;

/// Files larger than this are refused rather than read whole (a run of one bad file must not
/// take the machine's memory). Formats that stream (ZIP, JSON Lines) are not bound by it.
pub const MAX_DOCUMENT_BYTES: u64 = 1 << 30;

/// A file's bytes, its shown path and its sha256.
#[derive(Debug)]
pub struct Source {
    pub path: PathBuf,
    pub display: String,
    pub bytes: Vec<u8>,
    pub sha256: String,
    /// Offsets of every newline, built on first use, so spans cost a binary search each.
    newlines: std::sync::OnceLock<Vec<usize>>,
    /// Read from `path` on disk (not a ZIP member or test bytes): its bytes may be lent to the
    /// next reader of that file on this thread (`take_recent`).
    from_disk: bool,
}

thread_local! {
    /// The bytes of the last file a `Source` read from disk on this thread, kept when it was
    /// dropped: the ingest searches the file again for a status's span right after the adapter
    /// that read it is done, and reading it a third time (after the probe and the parse) was a
    /// copy of every input for nothing. One file per thread: memory stays bounded by the
    /// largest input.
    static RECENT: std::cell::RefCell<Option<(PathBuf, Vec<u8>)>> = const { std::cell::RefCell::new(None) };
}

impl Drop for Source {
    fn drop(&mut self) {
        if self.from_disk {
            let kept = (std::mem::take(&mut self.path), std::mem::take(&mut self.bytes));
            RECENT.with(|r| *r.borrow_mut() = Some(kept));
        }
    }
}

/// The bytes of `path` as the last `Source` read on this thread held them, if it read that
/// file; taken, so a file is lent once.
pub fn take_recent(path: &Path) -> Option<Vec<u8>> {
    RECENT.with(|r| {
        let mut r = r.borrow_mut();
        if r.as_ref().is_some_and(|(p, _)| p == path) { r.take().map(|(_, b)| b) } else { None }
    })
}

impl Source {
    /// Reads `path` whole.
    ///
    /// # Errors
    /// An I/O failure, an empty file, or a file over [`MAX_DOCUMENT_BYTES`].
    pub fn read(path: &Path, display: &str) -> Result<Self, InputError> {
        let meta = std::fs::metadata(path).map_err(|e| io_error(display, &e))?;
        if meta.len() > MAX_DOCUMENT_BYTES {
            return Err(InputError::new(InputErrorKind::TooLarge, display, format!("read a {} byte document", meta.len()))
                .with_help("documents over 1 GiB are refused; split the file or use a streaming format (JSON Lines)"));
        }
        let bytes = std::fs::read(path).map_err(|e| io_error(display, &e))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(InputError::new(InputErrorKind::Empty, display, "read a transcript: the file is empty")
                .with_help("an empty file usually means the harness crashed before writing; rerun the trial or remove the file"));
        }
        let sha256 = digest(&bytes);
        Ok(Self {
            path: path.to_path_buf(),
            display: display.to_string(),
            bytes,
            sha256,
            newlines: std::sync::OnceLock::new(),
            from_disk: true,
        })
    }

    /// An in-memory source (tests, ZIP members).
    #[must_use]
    pub fn from_bytes(path: &Path, display: &str, bytes: Vec<u8>) -> Self {
        let sha256 = digest(&bytes);
        Self {
            path: path.to_path_buf(),
            display: display.to_string(),
            bytes,
            sha256,
            newlines: std::sync::OnceLock::new(),
            from_disk: false,
        }
    }

    /// The bytes as text.
    ///
    /// # Errors
    /// When they are not UTF-8, pointing at the first bad byte.
    pub fn text(&self) -> Result<&str, InputError> {
        std::str::from_utf8(&self.bytes).map_err(|e| InputError::invalid_utf8(&self.display, &self.bytes, &e))
    }

    /// Parses the whole file as JSON into `T`; `what` names the format for the message.
    ///
    /// # Errors
    /// Invalid UTF-8, invalid JSON, or JSON that does not fit `T`, with line and column.
    pub fn json<T: DeserializeOwned>(&self, what: &str) -> Result<T, InputError> {
        self.text()?;
        serde_json::from_slice(&self.bytes).map_err(|e| InputError::from_json(&self.display, &self.bytes, what, &e))
    }

    /// The record for `provenance.files`.
    #[must_use]
    pub fn provenance(&self, role: &str) -> SourceFile {
        SourceFile { path: self.display.clone(), sha256: self.sha256.clone(), role: role.to_string() }
    }

    /// Byte offset of a sub-slice of `self.bytes` (for spans of borrowed raw JSON values).
    #[must_use]
    pub fn offset_of(&self, part: &str) -> Option<usize> {
        let base = self.bytes.as_ptr() as usize;
        let p = part.as_ptr() as usize;
        (p >= base && p + part.len() <= base + self.bytes.len()).then(|| p - base)
    }

    /// A span over a sub-slice of this file; `file` indexes `provenance.files`.
    #[must_use]
    pub fn span_of(&self, file: u32, part: &str) -> Option<crate::model::SourceSpan> {
        let off = self.offset_of(part)?;
        Some(self.span(file, off, part.len()))
    }

    #[must_use]
    pub fn span(&self, file: u32, offset: usize, len: usize) -> crate::model::SourceSpan {
        crate::model::SourceSpan { file, offset: offset as u64, len: len as u64, line: self.line_of(offset) as u64 }
    }

    /// 1-based line of byte `offset`.
    #[must_use]
    pub fn line_of(&self, offset: usize) -> usize {
        let nl = self.newlines.get_or_init(|| memchr::memchr_iter(b'\n', &self.bytes).collect());
        nl.partition_point(|&p| p < offset) + 1
    }
}

thread_local! {
    static HASHING: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Runs `f` with the sources it reads on this thread hashed (`hash`) or not. A command whose
/// output names no file's sha256 (`classify` writes verdicts, not records) leaves out the
/// SHA-256 of every byte it reads, a tenth of its time on a real run; `ingest`, whose records
/// carry the hashes as provenance, always hashes. Scoped to the thread that reads, so two
/// pipelines in one process (tests) do not see each other's choice. Work `f` hands to other
/// threads carries the choice itself (`hashes()` read before, `hashing` in each task): a task
/// runs on whatever thread steals it, inside whatever scope that thread is in.
pub fn hashing<R>(hash: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            HASHING.with(|h| h.set(self.0));
        }
    }
    let _restore = Restore(HASHING.with(|h| h.replace(hash)));
    f()
}

/// Whether sources read on this thread now are hashed (see [`hashing`]).
#[must_use]
pub fn hashes() -> bool {
    HASHING.with(std::cell::Cell::get)
}

/// The sha256 of bytes read, or nothing where [`hashing`] says no one will read it.
fn digest(bytes: &[u8]) -> String {
    if hashes() { crate::util::sha256_hex(bytes) } else { String::new() }
}

/// sha256 of a file read in chunks, for files too large to hold (archives, event streams).
///
/// # Errors
/// When the file cannot be opened or read.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn sha256_file(path: &Path, shown: &str) -> Result<String, InputError> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| io_error(shown, &e))?;
    let mut h = Sha256::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut chunk).map_err(|e| io_error(shown, &e))?;
        if n == 0 {
            break;
        }
        h.update(&chunk[..n]);
    }
    Ok(crate::util::hex(&h.finalize()))
}

#[must_use]
pub fn io_error(display: &str, e: &std::io::Error) -> InputError {
    InputError::new(InputErrorKind::Io, display, format!("read the file: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_hashed_unless_the_reader_says_no_one_reads_the_hash() {
        let p = Path::new("t.json");
        let hashed = Source::from_bytes(p, "t.json", b"{}".to_vec());
        assert_eq!(hashed.sha256, crate::util::sha256_hex(b"{}"));
        let bare = hashing(false, || Source::from_bytes(p, "t.json", b"{}".to_vec()));
        assert_eq!(bare.sha256, "");
        // The choice ends with the scope, also when the scope panics.
        let _ = std::panic::catch_unwind(|| hashing(false, || panic!("an adapter bug")));
        assert_eq!(Source::from_bytes(p, "t.json", b"{}".to_vec()).sha256, hashed.sha256);
    }

    #[test]
    fn a_file_read_whole_is_lent_once_to_the_next_reader_on_its_thread() {
        let dir = std::env::temp_dir().join(format!("coroner-recent-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("run.json");
        std::fs::write(&f, b"{\"status\": \"Submitted\"}").unwrap();
        drop(Source::read(&f, "run.json").unwrap());
        assert_eq!(take_recent(&dir.join("other.json")), None, "another file");
        assert_eq!(take_recent(&f).as_deref(), Some(&b"{\"status\": \"Submitted\"}"[..]));
        assert_eq!(take_recent(&f), None, "taken");
        // Bytes that did not come from that file on disk are never lent as its bytes.
        drop(Source::from_bytes(&f, "run.json", b"{}".to_vec()));
        assert_eq!(take_recent(&f), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
