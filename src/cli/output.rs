//! Printing for the CLI: diagnostics to stderr, colour only on a terminal.

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
