//! Inspect `.json` logs too large to hold whole: the `EvalLog` document is scanned at the byte
//! level, without building values, to find the header fields and where each element of
//! `samples` begins and ends; then each sample is read alone and parsed. Memory holds one
//! sample (and the small header), not the file.
//!
//! Two passes over the file: the first hashes every byte (the provenance digest), keeps the
//! header values (`version`, `status`, `eval`, `plan`, wherever they sit) and records each
//! sample's byte range and first line; the second seeks to each range. A sample's spans and
//! diagnostics are moved from the sample's own bytes to where they sit in the file, so they
//! match what the whole-document reader gives.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::source::Source;
use crate::model::Trajectory;

/// Files above this size are streamed; smaller ones are read whole (exact excerpts, one pass).
pub const STREAM_ABOVE: u64 = 64 << 20;

/// A top-level value of interest: its bytes (header fields) or, for samples, where they are.
#[derive(Debug, Default)]
pub struct Scanned {
    pub sha256: String,
    /// `(key, raw JSON value)` of the header fields, in file order.
    pub header: Vec<(String, Vec<u8>)>,
    /// Each sample: first byte, length, 1-based line of its first byte.
    pub samples: Vec<(u64, u64, u64)>,
}

/// Header keys kept from the first pass; everything else (results, stats, reductions) is
/// skipped without being held.
const HEADER_KEYS: &[&str] = &["version", "status", "eval", "plan"];
/// Largest header value kept (the `eval` spec and `plan` are a few KB; anything bigger is not
/// a header).
const HEADER_MAX: usize = 16 << 20;

/// A reader that counts bytes and lines and hashes everything it reads, a buffer at a time.
struct Scan<R: Read> {
    r: R,
    buf: Vec<u8>,
    at: usize,
    filled: usize,
    pos: u64,
    line: u64,
    hash: Sha256,
    display: String,
}

impl<R: Read> Scan<R> {
    fn new(r: R, display: &str) -> Self {
        Self { r, buf: vec![0; 1 << 20], at: 0, filled: 0, pos: 0, line: 1, hash: Sha256::new(), display: display.to_string() }
    }

    fn next(&mut self) -> Result<Option<u8>, InputError> {
        if self.at == self.filled {
            let n = loop {
                match self.r.read(&mut self.buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(InputError::new(InputErrorKind::Io, &self.display, format!("read the file: {e}"))),
                }
            };
            if n == 0 {
                return Ok(None);
            }
            self.hash.update(&self.buf[..n]);
            (self.at, self.filled) = (0, n);
        }
        let b = self.buf[self.at];
        self.at += 1;
        self.pos += 1;
        if b == b'\n' {
            self.line += 1;
        }
        Ok(Some(b))
    }

    fn need(&mut self) -> Result<u8, InputError> {
        self.next()?.ok_or_else(|| {
            InputError::new(InputErrorKind::Truncated, &self.display, "parse Inspect eval log: EOF while parsing")
                .with_help("the file ends in the middle of a value; it was probably cut off while being written")
                .on_line(usize::try_from(self.line).unwrap_or(usize::MAX), 0)
        })
    }

    fn syntax(&self, what: &str) -> InputError {
        InputError::new(InputErrorKind::Syntax, &self.display, format!("parse Inspect eval log: {what}"))
            .with_help("the file is not valid JSON here")
            .on_line(usize::try_from(self.line).unwrap_or(usize::MAX), 0)
    }

    fn skip_ws(&mut self) -> Result<u8, InputError> {
        loop {
            let b = self.need()?;
            if !b.is_ascii_whitespace() {
                return Ok(b);
            }
        }
    }

    /// The delimiter after a value: the byte that ended a scalar, else the next non-space byte.
    fn delimiter(&mut self, after: Option<u8>) -> Result<u8, InputError> {
        match after {
            Some(d) if !d.is_ascii_whitespace() => Ok(d),
            _ => self.skip_ws(),
        }
    }

    /// The rest of a string whose opening quote was read, appended to `keep` when given.
    fn string(&mut self, mut keep: Option<&mut Vec<u8>>) -> Result<(), InputError> {
        loop {
            let b = self.need()?;
            if let Some(k) = keep.as_deref_mut() {
                k.push(b);
            }
            match b {
                b'"' => return Ok(()),
                b'\\' => {
                    let e = self.need()?;
                    if let Some(k) = keep.as_deref_mut() {
                        k.push(e);
                    }
                }
                _ => {}
            }
        }
    }

    /// The rest of a value whose first byte `first` was read, appended to `keep` when given
    /// (bounded by `max`); returns the byte after a scalar, which ends it, when it read one.
    fn value(&mut self, first: u8, mut keep: Option<&mut Vec<u8>>, max: usize) -> Result<Option<u8>, InputError> {
        if let Some(k) = keep.as_deref_mut() {
            k.push(first);
        }
        match first {
            b'"' => self.string(keep).map(|()| None),
            b'{' | b'[' => {
                let mut depth = 1usize;
                while depth > 0 {
                    let b = self.need()?;
                    if let Some(k) = keep.as_deref_mut() {
                        if k.len() >= max {
                            return Err(InputError::new(InputErrorKind::TooLarge, &self.display, format!("read a value over {max} bytes"))
                                .on_line(usize::try_from(self.line).unwrap_or(usize::MAX), 0));
                        }
                        k.push(b);
                    }
                    match b {
                        b'"' => self.string(keep.as_deref_mut())?,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                }
                Ok(None)
            }
            _ => loop {
                // A number, true, false or null: it ends at the first delimiter.
                match self.next()? {
                    None => return Ok(None),
                    Some(b) if b == b',' || b == b'}' || b == b']' || b.is_ascii_whitespace() => return Ok(Some(b)),
                    Some(b) => {
                        if let Some(k) = keep.as_deref_mut() {
                            k.push(b);
                        }
                    }
                }
            },
        }
    }
}

/// The first pass: header fields, sample ranges and the digest.
///
/// # Errors
/// Unreadable, not a JSON object, or cut off.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn scan(path: &Path, display: &str) -> Result<Scanned, InputError> {
    let file = File::open(path).map_err(|e| InputError::new(InputErrorKind::Io, display, format!("open the file: {e}")))?;
    let mut s = Scan::new(file, display);
    let mut out = Scanned::default();
    if s.skip_ws()? != b'{' {
        return Err(s.syntax("expected an object"));
    }
    let mut b = s.skip_ws()?;
    while b != b'}' {
        if b != b'"' {
            return Err(s.syntax("expected a key"));
        }
        let mut key = vec![b'"'];
        s.string(Some(&mut key))?;
        let key: String = serde_json::from_slice(&key).map_err(|_| s.syntax("a key is not a JSON string"))?;
        if s.skip_ws()? != b':' {
            return Err(s.syntax("expected `:`"));
        }
        let first = s.skip_ws()?;
        let after = if key == "samples" && first == b'[' {
            let mut c = s.skip_ws()?;
            while c != b']' {
                let (start, line) = (s.pos - 1, s.line);
                let end_byte = s.value(c, None, 0)?;
                let end = if end_byte.is_some() { s.pos - 1 } else { s.pos };
                out.samples.push((start, end - start, line));
                c = s.delimiter(end_byte)?;
                if c == b',' {
                    c = s.skip_ws()?;
                } else if c != b']' {
                    return Err(s.syntax("expected `,` or `]` after a sample"));
                }
            }
            None
        } else if HEADER_KEYS.contains(&key.as_str()) {
            let mut v = Vec::new();
            let after = s.value(first, Some(&mut v), HEADER_MAX)?;
            out.header.push((key, v));
            after
        } else {
            s.value(first, None, 0)?
        };
        b = s.delimiter(after)?;
        if b == b',' {
            b = s.skip_ws()?;
        } else if b != b'}' {
            return Err(s.syntax("expected `,` or `}`"));
        }
    }
    // Whatever follows the object is hashed too: the digest is the file's.
    while s.next()?.is_some() {}
    out.sha256 = crate::util::hex(&s.hash.finalize());
    Ok(out)
}

/// Reads one sample's bytes (the second pass) as a source named like the file.
///
/// # Errors
/// When the bytes cannot be read.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn read_range(file: &mut File, path: &Path, display: &str, start: u64, len: u64) -> Result<Source, InputError> {
    let io = |e: std::io::Error| InputError::new(InputErrorKind::Io, display, format!("read a sample: {e}"));
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
    file.read_exact(&mut bytes).map_err(io)?;
    Ok(Source::from_bytes(path, display, bytes))
}

/// Moves the spans of a record made from one sample's bytes to where the sample sits in the
/// file (`file_ix` is the file's index in the record's provenance).
pub fn shift_spans(t: &mut Trajectory, file_ix: u32, start: u64, line: u64) {
    let shift = |s: &mut crate::model::SourceSpan| {
        if s.file == file_ix {
            s.offset += start;
            s.line += line - 1;
        }
    };
    for step in &mut t.steps {
        if let Some(s) = step.source_span.as_mut() {
            shift(s);
        }
    }
    let sig = &mut t.signals;
    for s in sig.statuses.iter_mut().chain(&mut sig.errors).chain(&mut sig.log_lines).filter_map(|s| s.span.as_mut()) {
        shift(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_finds_the_header_and_every_sample_wherever_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log.json");
        let body = "{\"samples\": [ {\"id\": 1, \"s\": \"a]}\\\"\"} ,\n {\"id\": 2} ],\n \"version\": 2, \"status\": \"success\", \"results\": {\"x\": [1, 2]},\n \"eval\": {\"task\": \"t\"}, \"n\": null}\n";
        std::fs::write(&p, body).unwrap();
        let s = scan(&p, "log.json").unwrap();
        let keys: Vec<&str> = s.header.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["version", "status", "eval"]);
        assert_eq!(s.header[0].1, b"2");
        assert_eq!(s.header[2].1, b"{\"task\": \"t\"}");
        let got: Vec<&str> = s.samples.iter().map(|&(a, n, _)| &body[a as usize..(a + n) as usize]).collect();
        assert_eq!(got, ["{\"id\": 1, \"s\": \"a]}\\\"\"}", "{\"id\": 2}"]);
        assert_eq!(s.samples.iter().map(|x| x.2).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(s.sha256, crate::util::sha256_hex(body.as_bytes()));
    }

    #[test]
    fn a_cut_log_is_truncated_at_its_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cut.json");
        std::fs::write(&p, "{\"version\": 2,\n \"samples\": [{\"id\": 1, \"messages\": [\n").unwrap();
        let e = scan(&p, "cut.json").unwrap_err();
        assert_eq!((e.kind, e.line), (InputErrorKind::Truncated, Some(3)));
    }
}
