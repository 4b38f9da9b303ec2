//! What the SWE-bench harness adapters (mini-swe-agent, SWE-agent) read the same way: the exit
//! status a batch run lists for a trajectory saved before it ended, and the first lines of a
//! harness's complaint about a reply.

use std::path::Path;

use crate::ingest::format::Ctx;
use crate::model::Trajectory;

/// The exit status the batch's `*exit_statuses*.yaml` gives `task`, as a status signal, for a
/// trajectory whose own file has none (saved mid-run). The field names the file it came from.
/// Returns whether the batch knew the task.
pub fn batch_status(t: &mut Trajectory, ctx: &Ctx<'_>, task: &str, path: &Path) -> bool {
    let Some(j) = ctx.join.exit_status(&[task], path) else { return false };
    crate::ingest::pipeline::push_file(t, j.file);
    let name = Path::new(&j.file.path).file_name().map_or_else(|| j.file.path.clone(), |n| n.to_string_lossy().into_owned());
    t.signals.status(format!("{name} instances_by_exit_status"), j.value.clone());
    true
}

/// A harness's complaint reduced to what went wrong: the `<error>` block of a template that has
/// one, else its first three non-empty lines.
#[must_use]
pub fn complaint_summary(text: &str) -> String {
    if let (Some(a), Some(b)) = (text.find("<error>"), text.find("</error>"))
        && a + 7 <= b
    {
        let inner = text[a + 7..b].trim();
        if !inner.is_empty() {
            return inner.chars().take(500).collect();
        }
    }
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).take(3).collect();
    lines.join("\n").chars().take(500).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complaints_reduce_to_their_error() {
        assert_eq!(
            complaint_summary("Tool call error:\n\n<error>\nUnknown tool 'str_replace'.\n</error>\nHere is"),
            "Unknown tool 'str_replace'."
        );
        assert_eq!(
            complaint_summary("\nYour action could not be parsed.\n\n Try again.\nMore\nAnd more"),
            "Your action could not be parsed.\nTry again.\nMore"
        );
    }
}
