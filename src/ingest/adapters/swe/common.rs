//! What the SWE-bench harness adapters (mini-swe-agent, SWE-agent) read the same way: a JSON
//! document and its items one by one, the exit status a batch run lists for a trajectory saved
//! before it ended, and the first lines of a harness's complaint about a reply.

use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::ingest::diag::InputError;
use crate::ingest::format::Ctx;
use crate::ingest::source::Source;
use crate::model::Trajectory;

/// The whole file as one JSON document `T` that borrows from it (`Source::json` owns), named
/// `what` in errors.
///
/// # Errors
/// The file is not UTF-8 text or not such a document.
pub fn document<'a, T: Deserialize<'a>>(src: &'a Source, what: &str) -> Result<T, InputError> {
    serde_json::from_str(src.text()?).map_err(|e| InputError::from_json(&src.display, &src.bytes, what, &e))
}

/// Reads every item of a document's array as `T`; an item that does not fit is an error at its
/// own bytes, named `what`.
///
/// # Errors
/// The first item that does not deserialize.
pub fn each<'a, T: Deserialize<'a>>(src: &Source, items: &[&'a RawValue], what: &str) -> Result<Vec<(&'a RawValue, T)>, InputError> {
    items
        .iter()
        .map(|raw| {
            let item = serde_json::from_str(raw.get()).map_err(|e| {
                let base = src.offset_of(raw.get()).unwrap_or(0);
                InputError::from_json_at(&src.display, &src.bytes, base, what, &e)
            })?;
            Ok((*raw, item))
        })
        .collect()
}

/// [`each`], with each item's byte range in place of its raw slice (what the one-pass
/// readings of `json_walk` give, so one builder serves both).
///
/// # Errors
/// The first item that does not deserialize.
pub fn each_at<'a, T: Deserialize<'a>>(
    src: &Source,
    items: &[&'a RawValue],
    what: &str,
) -> Result<Vec<(std::ops::Range<usize>, T)>, InputError> {
    Ok(each(src, items, what)?
        .into_iter()
        .map(|(raw, item)| {
            let start = src.offset_of(raw.get()).unwrap_or(0);
            (start..start + raw.get().len(), item)
        })
        .collect())
}

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
