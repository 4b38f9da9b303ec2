//! Turns the inputs named on the command line into a sorted list of files.
//!
//! Transcripts live in hidden files (`.aider.results.json`) and in directories a `.gitignore`
//! may exclude (`runs/`), so the walk reads everything except `.git` itself, never follows
//! links to directories (a link loop must not hang a run), and sorts by name so the order, and
//! with it every output, is the same on every machine. Every entry is accounted for: a link to a
//! file is read, a link to a directory is skipped, and a broken or looping link, a FIFO, a socket
//! or a device is quarantined (reading a FIFO would block the run).

use std::path::{Path, PathBuf};

use super::diag::{InputError, InputErrorKind};
use super::format::FileEntry;
use crate::util::display_path;

/// What the walk found: the files to read, the entries it refused (quarantined), and those it
/// passed over on purpose, with the reason (skipped).
#[derive(Debug, Default)]
pub struct Walked {
    pub files: Vec<FileEntry>,
    pub errors: Vec<InputError>,
    pub skipped: Vec<(String, String)>,
}

/// Why an entry that is neither a regular file nor a directory is not read.
fn not_regular(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO (reading it would block until something writes to it)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    let _ = t;
    "not a regular file"
}

/// Every file under `inputs`, in a stable order, and the problems met while walking.
#[must_use]
pub fn collect(inputs: &[PathBuf]) -> Walked {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let mut skipped = Vec::new();
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
        if !meta.is_dir() {
            errors.push(InputError::new(InputErrorKind::Io, &shown, format!("read the input: it is {}", not_regular(meta.file_type()))));
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
                Ok(e) => {
                    let Some(t) = e.file_type() else { continue };
                    let path = e.into_path();
                    let shown = display_path(&path);
                    // A link is judged by what it points to, without following directories.
                    let target = if t.is_symlink() { std::fs::metadata(&path).map(|m| m.file_type()) } else { Ok(t) };
                    match target {
                        Ok(k) if k.is_file() => {
                            let below = path.strip_prefix(input).unwrap_or(&path);
                            let rel =
                                if root_name.is_empty() { display_path(below) } else { format!("{root_name}/{}", display_path(below)) };
                            if seen.insert(path.clone()) {
                                files.push(FileEntry { display: shown, rel, path });
                            }
                        }
                        Ok(k) if k.is_dir() && t.is_symlink() => {
                            skipped.push((shown, "a link to a directory (not followed: links can loop)".to_string()));
                        }
                        Ok(k) if k.is_dir() => {}
                        Ok(k) => {
                            errors.push(InputError::new(InputErrorKind::Io, &shown, format!("read the input: it is {}", not_regular(k))))
                        }
                        Err(e) => errors.push(InputError::new(
                            InputErrorKind::Io,
                            &shown,
                            format!("follow the link: {e} (a broken or looping link)"),
                        )),
                    }
                }
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
    Walked { files, errors, skipped }
}

/// The last component of an input, which starts every relative path found under it.
fn root_name(input: &Path) -> String {
    let clean: PathBuf = input.components().collect();
    clean.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
