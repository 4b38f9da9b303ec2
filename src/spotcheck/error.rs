//! Errors of the spot-check files (sheet, key, labels): they stop the command, with the file
//! and what is missing.

/// A spot-check file (sheet, key, labels) that cannot be used.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum SpotcheckError {
    #[error("failed to read {path}: {message}")]
    #[diagnostic(code(coroner::spotcheck::read))]
    Read { path: String, message: String },
    #[error("failed to find the column `{column}` in {path}")]
    #[diagnostic(code(coroner::spotcheck::columns), help("expected {expected}"))]
    Columns { path: String, column: String, expected: String },
}

impl SpotcheckError {
    pub(crate) fn read(path: &str, e: &dyn std::fmt::Display) -> Self {
        Self::Read { path: path.to_string(), message: crate::report::sanitize::terminal(&e.to_string()).into_owned() }
    }

    pub(crate) fn columns(path: &str, column: &str, expected: &str) -> Self {
        Self::Columns { path: path.to_string(), column: column.to_string(), expected: expected.to_string() }
    }
}
