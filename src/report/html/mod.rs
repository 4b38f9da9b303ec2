//! The HTML report: a static site (no server, no network) from the overview's tables down to
//! the step a verdict rests on.
//!
//! Trajectory pages need steps, which a study does not keep (it keeps verdicts, so memory stays
//! bounded by the largest trajectory): they are rendered while each trajectory is in memory,
//! through the study's [`Also`](crate::study::Also) hook, and written at once. What later pages
//! need of the steps (the compact step lines a task page sets side by side, the words the search
//! index holds) is written beside them as parts and read back once the study is done.
//!
//! Safety: every string from a transcript or a study file goes through
//! [`sanitize::html`](super::sanitize::html); file names and URLs are coroner's own (slugs with
//! a hash); the search index is JSON data read with `JSON.parse`; every page carries a
//! Content-Security-Policy that allows only the site's own script and stylesheet.

mod lists;
mod overview;
mod page;
mod search;
mod task;
mod trajectory;

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::tables::Report;
use crate::model::{Trajectory, Verdict};
use crate::study::StudyRun;

/// The file the parts of every trajectory wait in for the pages that read them; removed at the end.
const PARTS: &str = ".parts";

/// A name safe in a file name and a URL for any text: its ASCII letters and digits (others
/// become `-`, at most 40 kept) and 8 hex digits of its SHA-256, so two texts never share a slug
/// by losing characters.
#[must_use]
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if out.len() >= 40 {
            break;
        }
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let h = Sha256::digest(s.as_bytes());
    let hex: String = h.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let trimmed = out.trim_end_matches('-');
    if trimmed.is_empty() { hex } else { format!("{trimmed}-{hex}") }
}

/// The page of the verdict at `index` in arm `arm`'s list, relative to the site root.
#[must_use]
pub fn trajectory_href(arm: &str, index: usize) -> String {
    format!("t/{}-{index}.html", slug(arm))
}

#[must_use]
pub fn task_href(task: &str) -> String {
    format!("task/{}.html", slug(task))
}

/// Where one trajectory's parts are in the parts file: its step lines, then its words.
#[derive(Debug, Clone, Copy, Default)]
struct Stored {
    offset: u64,
    lines: usize,
    words: usize,
}

/// The trajectory pages, written as the study runs, and the parts later pages read: appended
/// to one file (not a file per trajectory: creating and reading tens of thousands of small
/// files cost more than rendering them) and found again by (arm, index).
pub struct Pages {
    dir: PathBuf,
    parts: std::io::BufWriter<std::fs::File>,
    offset: u64,
    stored: HashMap<(String, usize), Stored>,
}

impl Pages {
    /// Creates the site's directories (clearing the pages of an earlier site there).
    ///
    /// # Errors
    /// On I/O failure.
    pub fn create(dir: &Path) -> std::io::Result<Self> {
        for sub in ["t", "task", "l"] {
            let d = dir.join(sub);
            if d.exists() {
                std::fs::remove_dir_all(&d)?;
            }
            std::fs::create_dir_all(&d)?;
        }
        std::fs::create_dir_all(dir.join("assets"))?;
        let parts = std::io::BufWriter::new(std::fs::File::create(dir.join(PARTS))?);
        Ok(Self { dir: dir.to_path_buf(), parts, offset: 0, stored: HashMap::new() })
    }

    /// Renders one trajectory (inside the parallel parse): its page, its compact step lines and
    /// its search words.
    #[must_use]
    pub fn render(arm: &str, t: &Trajectory, v: &Verdict) -> Vec<String> {
        vec![trajectory::page(arm, t, v), trajectory::step_lines(t, v), search::words(t)]
    }

    /// Writes what [`Pages::render`] made, named after the verdict's place in its arm.
    ///
    /// # Errors
    /// On I/O failure.
    pub fn write(&mut self, arm: &str, index: usize, parts: Vec<String>) -> std::io::Result<()> {
        let mut parts = parts.into_iter();
        if let Some(page) = parts.next() {
            std::fs::write(self.dir.join(trajectory_href(arm, index)), page)?;
        }
        let lines = parts.next().unwrap_or_default();
        let words = parts.next().unwrap_or_default();
        self.parts.write_all(lines.as_bytes())?;
        self.parts.write_all(words.as_bytes())?;
        self.stored.insert((arm.to_string(), index), Stored { offset: self.offset, lines: lines.len(), words: words.len() });
        self.offset += (lines.len() + words.len()) as u64;
        Ok(())
    }
}

/// The parts file, read back by position.
pub(crate) struct Parts {
    file: std::fs::File,
    stored: HashMap<(String, usize), Stored>,
}

impl Parts {
    fn read(&mut self, arm: &str, index: usize, words: bool) -> std::io::Result<String> {
        let Some(s) = self.stored.get(&(arm.to_string(), index)).copied() else { return Ok(String::new()) };
        let (at, len) = if words { (s.offset + s.lines as u64, s.words) } else { (s.offset, s.lines) };
        let mut buf = vec![0; len];
        self.file.seek(SeekFrom::Start(at))?;
        self.file.read_exact(&mut buf)?;
        String::from_utf8(buf).map_err(std::io::Error::other)
    }

    /// A trajectory's step lines, one per step.
    pub(crate) fn step_lines(&mut self, arm: &str, index: usize) -> std::io::Result<String> {
        self.read(arm, index, false)
    }

    /// A trajectory's search words.
    pub(crate) fn words(&mut self, arm: &str, index: usize) -> std::io::Result<String> {
        self.read(arm, index, true)
    }
}

/// What a site's writing made, for the command's summary line.
#[derive(Debug, Default, Clone, Copy)]
pub struct SiteSummary {
    pub pages: usize,
    pub bytes: u64,
}

/// Writes the overview, the lists, the task pages and the search page once the study has run
/// (its trajectory pages are written by [`Pages`]); removes the parts.
///
/// # Errors
/// On I/O failure or a chart that cannot be drawn.
pub fn finish(pages: Pages, run: &StudyRun, r: &Report) -> std::io::Result<SiteSummary> {
    let Pages { dir, parts, stored, .. } = pages;
    parts.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_data().ok();
    let parts_path = dir.join(PARTS);
    let mut parts = Parts { file: std::fs::File::open(&parts_path)?, stored };
    std::fs::write(dir.join("assets/site.css"), page::CSS)?;
    std::fs::write(dir.join("assets/site.js"), page::JS)?;
    std::fs::write(dir.join("assets/labels.css"), page::label_css(run))?;
    lists::write_all(&dir, run, r)?;
    std::fs::write(dir.join("index.html"), overview::page(run, r)?)?;
    task::write_all(&dir, &mut parts, run)?;
    std::fs::write(dir.join("search.html"), search::page(&mut parts, run)?)?;
    drop(parts);
    std::fs::remove_file(&parts_path)?;
    let mut s = SiteSummary::default();
    for e in ignore::WalkBuilder::new(&dir).standard_filters(false).build().flatten() {
        if e.file_type().is_some_and(|t| t.is_file()) {
            s.pages += usize::from(e.path().extension().is_some_and(|x| x == "html"));
            s.bytes += e.metadata().map_or(0, |m| m.len());
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe_and_distinct() {
        assert_eq!(slug("django__django-11099").split('-').count(), 4);
        assert!(slug("django__django-11099").starts_with("django-django-11099-"));
        let hostile = slug("../../<script>alert(1)</script>");
        assert!(hostile.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'), "{hostile}");
        assert_ne!(slug("a/b"), slug("a b"));
        assert_eq!(slug("").len(), 8);
        assert!(slug(&"x".repeat(500)).len() <= 49);
    }
}
