//! JSON Lines as the agent CLIs and API loggers write them: one record per line, where one bad
//! line (cut off while the harness was writing, or corrupted) must cost that line only.
//!
//! The Claude Code, Codex and chat-log adapters read the whole file once (for its digest and
//! for spans) and walk it here line by line; a line that is not UTF-8 or not JSON becomes a
//! diagnostic at its real line and column, and the good lines around it are kept.

use serde::Deserialize;

use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::source::Source;
use crate::model::SourceSpan;

/// One non-blank line of a file.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// 1-based line number.
    pub no: usize,
    /// Byte offset of the line's first byte in the file.
    pub start: usize,
    /// The line without its line break.
    pub text: &'a str,
}

impl Line<'_> {
    /// The span of the whole line; `file` indexes `provenance.files`.
    #[must_use]
    pub fn span(&self, file: u32) -> SourceSpan {
        SourceSpan { file, offset: self.start as u64, len: self.text.len() as u64, line: self.no as u64 }
    }

    /// The span of `part`, a slice of this line's text (in the first file), or `None` when it
    /// is not one.
    #[must_use]
    pub fn span_of(&self, part: &str) -> Option<SourceSpan> {
        let base = self.text.as_ptr() as usize;
        let p = part.as_ptr() as usize;
        (p >= base && p + part.len() <= base + self.text.len()).then(|| SourceSpan {
            file: 0,
            offset: (self.start + p - base) as u64,
            len: part.len() as u64,
            line: self.no as u64,
        })
    }
}

/// The non-blank lines of the file at `path`, read as a stream (evaluation outputs hold a whole
/// run: one record in memory at a time), each handed to `each` in order; a line that is not
/// UTF-8 is handed over as its diagnostic.
///
/// # Errors
/// The file cannot be opened or read.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn stream(path: &std::path::Path, shown: &str, mut each: impl FnMut(Result<Line<'_>, InputError>)) -> Result<(), InputError> {
    use std::io::BufRead;
    let f = std::fs::File::open(path).map_err(|e| crate::ingest::source::io_error(shown, &e))?;
    let mut r = std::io::BufReader::with_capacity(1 << 16, f);
    let mut buf = Vec::new();
    let (mut no, mut start) = (0usize, 0usize);
    loop {
        buf.clear();
        let n = r.read_until(b'\n', &mut buf).map_err(|e| crate::ingest::source::io_error(shown, &e))?;
        if n == 0 {
            return Ok(());
        }
        no += 1;
        let line_start = start;
        start += n;
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // Without its line break, so a record cut off mid-line reads as truncated.
        let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        each(match std::str::from_utf8(body) {
            Ok(text) => Ok(Line { no, start: line_start, text }),
            Err(e) => Err(InputError::invalid_utf8(shown, body, &e).on_line(no, line_start)),
        });
    }
}

/// The non-blank lines of `src`; lines that are not UTF-8 go to `diags` instead.
pub fn split<'a>(src: &'a Source, diags: &mut Vec<InputError>) -> Vec<Line<'a>> {
    let bytes = src.bytes.as_slice();
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut no = 0usize;
    while start < bytes.len() {
        no += 1;
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p);
        let (mut s, mut e) = (start, end);
        if e > s && bytes[e - 1] == b'\r' {
            e -= 1;
        }
        // A byte-order mark is not part of the first record.
        if no == 1 && bytes[s..e].starts_with(b"\xEF\xBB\xBF") {
            s += 3;
        }
        let raw = &bytes[s..e];
        if !raw.iter().all(u8::is_ascii_whitespace) {
            match std::str::from_utf8(raw) {
                Ok(text) => out.push(Line { no, start: s, text }),
                Err(err) => diags.push(InputError::invalid_utf8(&src.display, raw, &err).on_line(no, s)),
            }
        }
        start = end + 1;
    }
    out
}

/// Parses one line into `T`; `what` names the record for the message.
///
/// # Errors
/// Invalid JSON or JSON that does not fit `T`, pointing at the line and column in the file.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn parse<'a, T: Deserialize<'a>>(src: &Source, line: &Line<'a>, what: &str) -> Result<T, InputError> {
    serde_json::from_str(line.text).map_err(|e| {
        let mut d = InputError::from_json_at(&src.display, &src.bytes, line.start, what, &e);
        d.message = format!("{} (line {})", d.message, line.no);
        d
    })
}

/// A record that parsed as JSON but has a field of the wrong shape, at the start of its line.
#[must_use]
pub fn schema_error(src: &Source, line: &Line<'_>, what: &str, problem: &str) -> InputError {
    InputError::new(InputErrorKind::Schema, &src.display, format!("read {what} on line {}: {problem}", line.no))
        .with_help("a field has the wrong type or a required field is missing; check the line against the format")
        .at_offset(&src.bytes, line.start, problem.to_string())
}

/// The error for a file none of whose lines could be read.
#[must_use]
pub fn nothing_readable(src: &Source, what: &str, help: &str) -> InputError {
    InputError::new(InputErrorKind::Schema, &src.display, format!("read any {what}: every line was bad")).with_help(help.to_string())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn lines_keep_their_numbers_and_offsets_and_bad_bytes_become_diagnostics() {
        let src = Source::from_bytes(Path::new("x.jsonl"), "x.jsonl", b"{\"a\":1}\r\n\n{\"b\":\xff}\n  \n{\"c\":3}".to_vec());
        let mut diags = Vec::new();
        let lines = split(&src, &mut diags);
        let got: Vec<(usize, usize, &str)> = lines.iter().map(|l| (l.no, l.start, l.text)).collect();
        assert_eq!(got, [(1, 0, "{\"a\":1}"), (5, 21, "{\"c\":3}")]);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].line, Some(3));
        assert_eq!(diags[0].kind, InputErrorKind::InvalidUtf8);
    }

    #[test]
    fn a_bad_line_is_reported_at_its_place() {
        let src = Source::from_bytes(Path::new("x.jsonl"), "x.jsonl", b"{\"a\":1}\n{\"b\": tru}\n".to_vec());
        let mut diags = Vec::new();
        let lines = split(&src, &mut diags);
        let e = parse::<serde_json::Value>(&src, &lines[1], "record").unwrap_err();
        assert_eq!((e.line, e.column), (Some(2), Some(10)));
        assert!(e.message.ends_with("(line 2)"), "{}", e.message);
    }
}
