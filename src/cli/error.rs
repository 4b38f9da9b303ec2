//! What a command comes to: `Done` when it ran to the end (the outcome of an analysis, which
//! may gate), `CliError` when something stopped it. Every command's `run` returns
//! `Result<Done, CliError>`; `cli::run` renders an error once and maps both to the codes of
//! `crate::exit`, so no command prints its own error or chooses a number.

use std::fmt;

use crate::exit;

/// How a command that ran to the end came out. These are outcomes, not errors: a gate or a
/// quarantined input still leaves the command's output written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Done {
    /// It did what was asked and found nothing it gates on (`exit::SUCCESS`).
    Success,
    /// It found what it gates on: a refuted prediction, a problem in a label set (`exit::GATE`).
    Gate,
    /// Some inputs were quarantined, each with a diagnostic; the rest were written
    /// (`exit::PARTIAL`).
    Partial,
}

impl Done {
    /// `Partial` when some inputs were quarantined, `Success` otherwise.
    pub fn partial_if(quarantined: bool) -> Self {
        if quarantined { Self::Partial } else { Self::Success }
    }

    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            Self::Success => exit::SUCCESS,
            Self::Gate => exit::GATE,
            Self::Partial => exit::PARTIAL,
        }
    }
}

/// Which row of the exit-code table an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad arguments, an invalid rules, study, predictions, labels or registry file, a broken
    /// seal: nothing was analysed (`exit::USAGE`).
    Usage,
    /// What the command needed was in inputs that were quarantined (their diagnostics were
    /// printed), so there was nothing left to work on (`exit::PARTIAL`).
    Quarantined,
    /// Writing an output failed (`exit::IO`).
    Io,
}

impl ErrorKind {
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            Self::Usage => exit::USAGE,
            Self::Quarantined => exit::PARTIAL,
            Self::Io => exit::IO,
        }
    }
}

/// What stopped a command: a diagnostic from the library (rendered by miette, with its source
/// span and help), or a message of the CLI's own — a lower-case fragment that reads after
/// "error: " and starts with "failed to …", with a help line suggesting the fix.
#[derive(Debug)]
pub struct CliError {
    kind: ErrorKind,
    body: Body,
    /// Errors met while handling this one (a JUnit file for a broken seal that could not be
    /// written); rendered after it, and the code is still this one's.
    also: Vec<CliError>,
}

#[derive(Debug)]
enum Body {
    Diagnostic(Box<dyn miette::Diagnostic>),
    Message {
        message: String,
        help: Option<String>,
        /// Printed as is after the message: a listing to choose from.
        after: Option<String>,
    },
}

impl CliError {
    fn message(kind: ErrorKind, message: String) -> Self {
        Self { kind, body: Body::Message { message, help: None, after: None }, also: Vec::new() }
    }

    /// A usage or configuration error: `message` is "failed to …".
    pub fn usage(message: impl Into<String>) -> Self {
        Self::message(ErrorKind::Usage, message.into())
    }

    /// An output that could not be written: `message` is "failed to …".
    pub fn io(message: impl Into<String>) -> Self {
        Self::message(ErrorKind::Io, message.into())
    }

    /// Writing `what` ("the report", "out.csv") failed with `e`.
    pub fn write(what: impl fmt::Display, e: impl fmt::Display) -> Self {
        Self::io(format!("failed to write {what}: {e}"))
    }

    /// Nothing to work on was left once the quarantined inputs were set aside.
    pub fn quarantined(message: impl Into<String>) -> Self {
        Self::message(ErrorKind::Quarantined, message.into())
    }

    /// An input or configuration that is not valid, said by its own diagnostic.
    pub fn invalid(d: impl miette::Diagnostic + 'static) -> Self {
        Self { kind: ErrorKind::Usage, body: Body::Diagnostic(Box::new(d)), also: Vec::new() }
    }

    /// A failed ingest: writing its output is an I/O error, anything else (no such input, an
    /// unknown `--format`, a bad verdict file) a usage error.
    pub fn ingest(e: crate::ingest::IngestError) -> Self {
        let kind = if matches!(e, crate::ingest::IngestError::Write(_)) { ErrorKind::Io } else { ErrorKind::Usage };
        Self { kind, body: Body::Diagnostic(Box::new(e)), also: Vec::new() }
    }

    /// Adds the help line that suggests the fix (messages only; a diagnostic has its own).
    #[must_use]
    pub fn with_help(mut self, text: impl Into<String>) -> Self {
        if let Body::Message { help, .. } = &mut self.body {
            *help = Some(text.into());
        }
        self
    }

    /// Adds text printed as is after the message (messages only).
    #[must_use]
    pub fn with_after(mut self, text: impl Into<String>) -> Self {
        if let Body::Message { after, .. } = &mut self.body {
            *after = Some(text.into());
        }
        self
    }

    /// Adds an error met while handling this one; it is rendered after this one.
    #[must_use]
    pub fn also(mut self, other: Self) -> Self {
        self.also.push(other);
        self
    }

    /// The exit code this error maps to.
    #[must_use]
    pub fn code(&self) -> u8 {
        self.kind.code()
    }

    /// Prints the error to stderr: a diagnostic the way miette renders it, a message as
    /// `error: …` with its `help:` line.
    pub fn render(&self) {
        match &self.body {
            Body::Diagnostic(d) => super::output::print_diagnostic(d.as_ref()),
            Body::Message { message, help, after } => super::output::print_error(message, help.as_deref(), after.as_deref()),
        }
        for e in &self.also {
            e.render();
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.body {
            Body::Diagnostic(d) => write!(f, "{d}"),
            Body::Message { message, .. } => f.write_str(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_and_error_has_its_code() {
        assert_eq!(Done::Success.code(), exit::SUCCESS);
        assert_eq!(Done::Gate.code(), exit::GATE);
        assert_eq!(Done::Partial.code(), exit::PARTIAL);
        assert_eq!(Done::partial_if(false), Done::Success);
        assert_eq!(Done::partial_if(true), Done::Partial);
        assert_eq!(CliError::usage("failed to x").code(), exit::USAGE);
        assert_eq!(CliError::write("the report", "disk full").code(), exit::IO);
        assert_eq!(CliError::quarantined("failed to find a trajectory").code(), exit::PARTIAL);
        assert_eq!(CliError::write("out.csv", "disk full").to_string(), "failed to write out.csv: disk full");
        // A follow-up error keeps the first one's code.
        assert_eq!(CliError::usage("failed to x").also(CliError::io("failed to y")).code(), exit::USAGE);
    }
}
