//! Printing for the CLI: results to stdout, diagnostics and notes to stderr, colour only on a
//! terminal. Errors come here only through `CliError::render`, once, from `cli::run`.

use std::io::{IsTerminal, Write};

/// Prints one diagnostic to stderr the way miette renders it.
pub fn print_diagnostic(d: &dyn miette::Diagnostic) {
    let theme = if std::io::stderr().is_terminal() { miette::GraphicalTheme::unicode() } else { miette::GraphicalTheme::unicode_nocolor() };
    let handler = miette::GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut s = String::new();
    if handler.render_report(&mut s, d).is_err() {
        s = d.to_string();
    }
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}

/// Prints the soft diagnostics of a run (inputs quarantined or skipped) as they were found:
/// they do not stop the command; its exit code counts them.
pub fn print_diagnostics<D: miette::Diagnostic>(diagnostics: &[D]) {
    for d in diagnostics {
        print_diagnostic(d);
    }
}

/// Prints a CLI error message: `error: {message}`, its `help:` line, then `after` as is.
pub(super) fn print_error(message: &str, help: Option<&str>, after: Option<&str>) {
    let mut s = format!("error: {message}\n");
    if let Some(h) = help {
        s.push_str(&format!("  help: {h}\n"));
    }
    s.push_str(after.unwrap_or_default());
    print_stderr(&s);
}

/// Prints a note (`note: …`) to stderr: something the reader should know that is not an error.
pub fn note(text: &str) {
    print_stderr(&format!("note: {text}\n"));
}

/// Prints a warning (`warning: …`) to stderr: the command goes on, but its result may mislead.
pub fn warning(text: &str) {
    print_stderr(&format!("warning: {text}\n"));
}

/// Prints a summary or progress text to stderr as is; a closed stderr is ignored.
pub fn print_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Prints to stdout; a closed pipe (`| head`) is success.
///
/// # Errors
/// Any other write failure.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}
