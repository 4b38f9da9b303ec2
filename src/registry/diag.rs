//! Diagnostics for harness source the extractor could not read: the file is skipped, the
//! rest of the tree is still read, and the problem is shown with its span.

use std::sync::Arc;

use miette::{NamedSource, SourceSpan};

/// Spans longer than this are cut: a syntax error in a minified line must not print the line.
const MAX_LABEL: usize = 200;

/// A source file that was skipped.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{file}{}: failed to {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
#[diagnostic(code(coroner::registry::source))]
pub struct SourceError {
    /// Relative to the registry root.
    pub file: String,
    pub line: Option<u32>,
    /// Reads after "failed to ...".
    pub message: String,
    #[source_code]
    src: Option<NamedSource<Arc<String>>>,
    #[label("{label}")]
    span: Option<SourceSpan>,
    label: String,
    #[help]
    pub help: Option<String>,
}

impl SourceError {
    /// A problem with the file as a whole (unreadable, too large, not UTF-8).
    #[must_use]
    pub fn whole(file: &str, message: impl Into<String>, help: Option<&str>) -> Self {
        Self {
            file: file.to_string(),
            line: None,
            message: message.into(),
            src: None,
            span: None,
            label: String::new(),
            help: help.map(str::to_string),
        }
    }

    /// A problem at `offset..offset+len` of `text`.
    #[must_use]
    pub fn at(file: &str, text: &Arc<String>, offset: usize, len: usize, message: impl Into<String>, label: impl Into<String>) -> Self {
        let offset = offset.min(text.len());
        let mut len = len.min(MAX_LABEL).min(text.len() - offset);
        while len > 0 && !text.is_char_boundary(offset + len) {
            len -= 1;
        }
        let line = u32::try_from(memchr::memchr_iter(b'\n', &text.as_bytes()[..offset]).count() + 1).unwrap_or(u32::MAX);
        Self {
            file: file.to_string(),
            line: Some(line),
            message: message.into(),
            src: Some(NamedSource::new(file, Arc::clone(text))),
            span: Some(SourceSpan::new(offset.into(), len)),
            label: label.into(),
            help: None,
        }
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}
