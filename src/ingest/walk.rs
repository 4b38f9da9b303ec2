//! Turns the inputs named on the command line into a sorted list of files.
//!
//! Transcripts live in hidden files (`.aider.results.json`) and in directories a `.gitignore`
//! may exclude (`runs/`), so the walk reads everything except `.git` itself, never follows
//! links (a link loop must not hang a run), and sorts by name so the order, and with it every
//! output, is the same on every machine.

use std::path::{Path, PathBuf};

use super::diag::{InputError, InputErrorKind};
use super::format::FileEntry;
use crate::util::display_path;

/// Every file under `inputs`, in a stable order, and the problems met while walking.
#[must_use]
pub fn collect(inputs: &[PathBuf]) -> (Vec<FileEntry>, Vec<InputError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for input in inputs {
        let shown = display_path(input);
        let meta = match std::fs::metadata(input) {
            Ok(m) => m,
            Err(e) => {
                errors.push(InputError::new(InputErrorKind::Io, &shown, format!("read the input: {e}")));
                continue;
            }
        };
        let root_name = root_name(input);
        if meta.is_file() {
            if seen.insert(input.clone()) {
                files.push(FileEntry { path: input.clone(), display: shown, rel: root_name });
            }
            continue;
        }
        let walker = ignore::WalkBuilder::new(input)
            .standard_filters(false)
            .follow_links(false)
            .sort_by_file_name(std::cmp::Ord::cmp)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walker {
            match entry {
                Ok(e) if e.file_type().is_some_and(|t| t.is_file()) => {
                    let path = e.into_path();
                    let below = path.strip_prefix(input).unwrap_or(&path);
                    let rel = if root_name.is_empty() { display_path(below) } else { format!("{root_name}/{}", display_path(below)) };
                    if seen.insert(path.clone()) {
                        files.push(FileEntry { display: display_path(&path), rel, path });
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let path = match &e {
                        ignore::Error::WithPath { path, .. } => display_path(path),
                        _ => shown.clone(),
                    };
                    errors.push(InputError::new(InputErrorKind::Io, &path, format!("walk the directory: {e}")));
                }
            }
        }
    }
    (files, errors)
}

/// The last component of an input, which starts every relative path found under it.
fn root_name(input: &Path) -> String {
    let clean: PathBuf = input.components().collect();
    clean.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
