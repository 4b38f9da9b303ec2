//! Diagnostics for bad input: which file, which line, what is wrong, how to fix it.
//!
//! A transcript can be huge and a broken one can be a single 50 MB line, so a diagnostic never
//! holds the whole file: it keeps a window of at most a few hundred bytes around the error and
//! reports it with the line and column it has in the real file.

use std::fmt;

use miette::{Diagnostic, LabeledSpan, MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

/// Bytes of context kept on each side of an error.
const WINDOW: usize = 120;

/// What kind of problem an input has; counted in the ingest summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InputErrorKind {
    Io,
    Empty,
    Binary,
    InvalidUtf8,
    /// The document ends before it is complete.
    Truncated,
    /// Not valid JSON/YAML/CSV at all.
    Syntax,
    /// Valid syntax, but a field has the wrong type or a required field is missing.
    Schema,
    TooDeep,
    TooLarge,
    UnknownFormat,
    /// The archive or container is damaged (ZIP member, SQLite page).
    Corrupt,
}

impl InputErrorKind {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Io => "io",
            Self::Empty => "empty",
            Self::Binary => "binary",
            Self::InvalidUtf8 => "invalid-utf8",
            Self::Truncated => "truncated",
            Self::Syntax => "syntax",
            Self::Schema => "schema",
            Self::TooDeep => "too-deep",
            Self::TooLarge => "too-large",
            Self::UnknownFormat => "unknown-format",
            Self::Corrupt => "corrupt",
        }
    }
}

/// A problem with one input file (or one record of it).
#[derive(Debug)]
pub struct InputError {
    pub kind: InputErrorKind,
    /// The path as shown to the user.
    pub path: String,
    /// 1-based line, when the problem has a position.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Reads after "failed to ...".
    pub message: String,
    pub help: Option<String>,
    excerpt: Option<Excerpt>,
    label: Option<(SourceSpan, String)>,
}

impl InputError {
    #[must_use]
    pub fn new(kind: InputErrorKind, path: &str, message: impl Into<String>) -> Self {
        Self { kind, path: path.to_string(), line: None, column: None, message: message.into(), help: None, excerpt: None, label: None }
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Points the diagnostic at byte `offset` of `bytes` (the whole file), with a label.
    #[must_use]
    pub fn at_offset(mut self, bytes: &[u8], offset: usize, label: impl Into<String>) -> Self {
        let offset = offset.min(bytes.len());
        let (line, col) = line_col(bytes, offset);
        self.line = Some(line);
        self.column = Some(col);
        let ex = Excerpt::around(&self.path, bytes, offset);
        let rel = String::from_utf8_lossy(&bytes[ex.start..offset]).len();
        let len = usize::from(offset < bytes.len());
        self.label = Some((SourceSpan::new((ex.start + rel).into(), len), label.into()));
        self.excerpt = Some(ex);
        self
    }

    /// Points the diagnostic at a 1-based line and column, as serde_json reports them.
    #[must_use]
    pub fn at_line_col(self, bytes: &[u8], line: usize, column: usize, label: impl Into<String>) -> Self {
        let off = offset_of(bytes, line, column);
        self.at_offset(bytes, off, label)
    }

    /// From a serde_json error over the whole file.
    #[must_use]
    pub fn from_json(path: &str, bytes: &[u8], what: &str, e: &serde_json::Error) -> Self {
        Self::from_json_at(path, bytes, 0, what, e)
    }

    /// From a serde_json error over `bytes[base..]` (one record of a JSON Lines file).
    #[must_use]
    pub fn from_json_at(path: &str, bytes: &[u8], base: usize, what: &str, e: &serde_json::Error) -> Self {
        let full = e.to_string();
        let msg = full.split(" at line ").next().unwrap_or(&full).to_string();
        let (kind, help) = if e.is_eof() {
            (InputErrorKind::Truncated, "the file ends in the middle of a value; it was probably cut off while being written")
        } else if msg.contains("recursion limit") {
            (InputErrorKind::TooDeep, "the JSON nests deeper than 128 levels; no transcript format does that")
        } else if e.is_data() {
            (
                InputErrorKind::Schema,
                "a field has the wrong type or a required field is missing; check the file against the format's schema",
            )
        } else {
            (InputErrorKind::Syntax, "the file is not valid JSON here")
        };
        let record = &bytes[base.min(bytes.len())..];
        let off = base + offset_of(record, e.line().max(1), e.column());
        Self::new(kind, path, format!("parse {what}: {msg}")).with_help(help).at_offset(bytes, off, msg)
    }

    /// Moves a diagnostic made over one line read on its own (a JSON Lines record) to where
    /// that line sits in its file: `line` is the line's 1-based number, `offset` its first byte.
    /// Without this the location would say line 1 and the excerpt would show the wrong line.
    #[must_use]
    pub fn on_line(mut self, line: usize, offset: usize) -> Self {
        let inner = self.line.unwrap_or(1);
        self.line = Some(line + inner.saturating_sub(1));
        if let Some(ex) = self.excerpt.as_mut() {
            ex.start += offset;
            ex.line += line.saturating_sub(1);
        }
        if let Some((span, _)) = self.label.as_mut() {
            *span = SourceSpan::new((span.offset() + offset).into(), span.len());
        }
        self
    }

    /// The first invalid UTF-8 sequence of `bytes`, if any, as a diagnostic.
    #[must_use]
    pub fn invalid_utf8(path: &str, bytes: &[u8], e: &std::str::Utf8Error) -> Self {
        Self::new(InputErrorKind::InvalidUtf8, path, "read the file as UTF-8 text")
            .with_help("transcripts are UTF-8; this file holds bytes that are not (a different encoding, or binary data)")
            .at_offset(bytes, e.valid_up_to(), "invalid UTF-8 starts here")
    }

    /// `path:line:` — the location prefix used in summaries.
    #[must_use]
    pub fn location(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}", self.path),
            None => self.path.clone(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: failed to {}", self.location(), self.message)
    }
}

impl std::error::Error for InputError {}

impl Diagnostic for InputError {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(format!("coroner::input::{}", self.kind.as_str())))
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.excerpt.as_ref().map(|e| e as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (span, text) = self.label.as_ref()?;
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(Some(text.clone()), *span))))
    }
}

/// A window of a file that reports spans with the file's real offsets, lines and columns.
#[derive(Debug, Clone)]
struct Excerpt {
    name: String,
    text: String,
    /// Byte offset of `text` in the file.
    start: usize,
    /// 0-based line and column of `text` in the file.
    line: usize,
    col: usize,
}

impl Excerpt {
    fn around(name: &str, bytes: &[u8], offset: usize) -> Self {
        let line_start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |p| p + 1);
        let mut start = line_start.max(offset.saturating_sub(WINDOW));
        // One line of context above when the line is short enough to show it.
        if start == line_start && line_start > 0 {
            let prev = memchr::memrchr(b'\n', &bytes[..line_start - 1]).map_or(0, |p| p + 1);
            if line_start - prev <= WINDOW {
                start = prev;
            }
        }
        let line_end = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |p| offset + p);
        let end = line_end.min(offset + WINDOW).max(offset.min(bytes.len()));
        while start > 0 && start < bytes.len() && (bytes[start] & 0xC0) == 0x80 {
            start -= 1;
        }
        let (l, _) = line_col(bytes, start);
        let col = start - memchr::memrchr(b'\n', &bytes[..start]).map_or(0, |p| p + 1);
        let text = String::from_utf8_lossy(&bytes[start..end]).into_owned();
        Self { name: name.to_string(), text: strip_controls(&text), start, line: l - 1, col }
    }
}

/// Control characters in a window would act on the terminal that shows the diagnostic.
fn strip_controls(s: &str) -> String {
    s.chars().map(|c| if c.is_control() && c != '\n' && c != '\t' { '\u{FFFD}' } else { c }).collect()
}

impl SourceCode for Excerpt {
    fn read_span<'a>(&'a self, span: &SourceSpan, before: usize, after: usize) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let rel_off = span.offset().saturating_sub(self.start).min(self.text.len());
        let rel_len = span.len().min(self.text.len() - rel_off);
        let rel = SourceSpan::new(rel_off.into(), rel_len);
        let inner = self.text.as_str().read_span(&rel, before, after)?;
        let abs = SourceSpan::new((inner.span().offset() + self.start).into(), inner.span().len());
        let column = if inner.line() == 0 { inner.column() + self.col } else { inner.column() };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            abs,
            inner.line() + self.line,
            column,
            inner.line_count(),
        )))
    }
}

/// 1-based line and column of byte `offset`.
#[must_use]
pub fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(bytes.len());
    let line = memchr::memchr_iter(b'\n', &bytes[..offset]).count() + 1;
    let col = offset - memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |p| p + 1) + 1;
    (line, col)
}

/// Byte offset of a 1-based line and column (serde_json counts columns in bytes).
#[must_use]
pub fn offset_of(bytes: &[u8], line: usize, column: usize) -> usize {
    let start = if line <= 1 { 0 } else { memchr::memchr_iter(b'\n', bytes).nth(line - 2).map_or(bytes.len(), |p| p + 1) };
    (start + column.saturating_sub(1)).min(bytes.len())
}

/// Renders a diagnostic the way the CLI prints it, without colour, for logs and snapshots.
#[must_use]
pub fn render_plain(d: &dyn Diagnostic) -> String {
    let mut s = String::new();
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor()).with_width(100);
    if handler.render_report(&mut s, d).is_err() {
        s = d.to_string();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_offset_agree() {
        let b = b"ab\ncd\nef";
        assert_eq!(line_col(b, 4), (2, 2));
        assert_eq!(offset_of(b, 2, 2), 4);
        assert_eq!(offset_of(b, 3, 1), 6);
    }

    #[test]
    fn a_line_read_on_its_own_reports_its_place_in_the_file() {
        let line = b"{\"a\": 1,, \"b\": 2}\n";
        let e = serde_json::from_slice::<serde_json::Value>(line).unwrap_err();
        let d = InputError::from_json("out.jsonl", line, "record", &e).on_line(7, 500);
        assert_eq!((d.line, d.column), (Some(7), Some(9)));
        assert_eq!(d.location(), "out.jsonl:7");
        let out = render_plain(&d);
        assert!(out.contains("out.jsonl:7:9"), "{out}");
    }

    #[test]
    fn a_giant_line_renders_a_small_window_with_real_position() {
        let mut big = vec![b'x'; 5_000_000];
        big.extend_from_slice(b"\x1b]0;pwned\x07");
        let e = InputError::new(InputErrorKind::Syntax, "big.json", "parse JSON").at_offset(&big, 4_999_990, "here");
        let out = render_plain(&e);
        assert!(out.len() < 2_000, "rendered {} bytes", out.len());
        assert!(out.contains("big.json:1:4999991"), "{out}");
        assert!(!out.contains('\x1b'));
    }
}
