//! Printing for the CLI: results to stdout, diagnostics and notes to stderr, colour only on a
//! terminal. Errors come here only through `CliError::render`, once, from `cli::run`.

use std::io::Write;

/// Prints one diagnostic to stderr the way miette renders it, without colour: its messages,
/// labels and source excerpts quote transcripts, and the whole rendering goes through the same
/// sanitizing path as every other output, which miette's own escape sequences would not survive.
pub fn print_diagnostic(d: &dyn miette::Diagnostic) {
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor()).with_width(100);
    let mut s = String::new();
    if handler.render_report(&mut s, d).is_err() {
        s = d.to_string();
    }
    s.push('\n');
    print_stderr(&s);
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

/// Prints a summary or progress text to stderr, sanitized; a closed stderr is ignored.
pub fn print_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(crate::report::sanitize::emit(text).as_bytes());
}

/// stdout for JSON lines: every complete UTF-8 run written goes through
/// [`crate::report::sanitize::json`], so a record's text cannot drive a terminal and still reads
/// back the same; an incomplete character at the end of one write waits for the next.
pub struct JsonStdout {
    out: std::io::Stdout,
    pending: Vec<u8>,
}

/// [`JsonStdout`] for a command's JSON lines.
#[must_use]
pub fn json_stdout() -> JsonStdout {
    JsonStdout { out: std::io::stdout(), pending: Vec::new() }
}

impl Write for JsonStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Nearly every write starts on a character boundary: it is checked where it lies, and
        // only an incomplete character at its end is kept for the next one.
        if self.pending.is_empty() {
            let used = write_complete(&mut self.out, buf)?;
            self.pending.extend_from_slice(&buf[used..]);
        } else {
            self.pending.extend_from_slice(buf);
            let used = write_complete(&mut self.out, &self.pending)?;
            self.pending.drain(..used);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let p = std::mem::take(&mut self.pending);
            self.out.write_all(&p)?;
        }
        self.out.flush()
    }
}

/// Writes the complete characters of `bytes`, made safe by [`crate::report::sanitize::json`],
/// and returns how many bytes that was: all but an incomplete character at the end. Bytes that
/// are not UTF-8 (serde_json never writes them) are passed on as they are.
fn write_complete(out: &mut impl Write, bytes: &[u8]) -> std::io::Result<usize> {
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
        Err(_) => {
            out.write_all(bytes)?;
            return Ok(bytes.len());
        }
    };
    out.write_all(crate::report::sanitize::json(text).as_bytes())?;
    Ok(text.len())
}

/// A value as pretty JSON for stdout, with a newline, made terminal-safe by
/// [`crate::report::sanitize::json`] without changing what it says.
pub fn json_text<T: serde::Serialize + ?Sized>(v: &T) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    crate::report::sanitize::json(&text).into_owned() + "\n"
}

/// Prints to stdout, sanitized (the one path every command's output takes: no byte from a
/// transcript reaches the terminal as a control); a closed pipe (`| head`) is success. JSON is
/// made safe before it gets here, by [`crate::report::sanitize::json`], which keeps its meaning.
///
/// # Errors
/// Any other write failure.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(crate::report::sanitize::emit(text).as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::write_complete;

    /// A character cut by the end of a write waits; controls go out escaped; bytes that are not
    /// UTF-8 go out as they are.
    #[test]
    fn only_complete_characters_are_written_and_they_are_made_safe() {
        let mut out = Vec::new();
        let bytes = "{\"t\":\"a\u{9b}b\u{e9}\"}".as_bytes();
        let cut = bytes.len() - 3; // inside the two bytes of é
        assert_eq!(write_complete(&mut out, &bytes[..cut]).unwrap(), cut - 1);
        assert_eq!(String::from_utf8(out.clone()).unwrap(), "{\"t\":\"a\\u009bb");
        out.clear();
        assert_eq!(write_complete(&mut out, b"\xff\xfe").unwrap(), 2);
        assert_eq!(out, b"\xff\xfe");
    }
}
