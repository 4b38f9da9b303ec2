//! Search over the study in the page: task ids, arms, classes, flags and the words of the
//! steps, from an index built here and embedded in `search.html` as JSON data (read with
//! `JSON.parse`, never run). The words of a trajectory are its distinct words of 3 to 40
//! letters, digits or `_`, lowercased, in order of first use, at most [`MAX_WORDS`], so the
//! index of a 10,000-trajectory study stays a few megabytes.

use std::collections::HashSet;
use std::fmt::Write as _;

use super::page::shell;
use super::{Parts, trajectory_href};
use crate::model::Trajectory;
use crate::report::sanitize::json_in_html;
use crate::study::StudyRun;

/// Words kept per trajectory.
pub const MAX_WORDS: usize = 400;

/// A trajectory's searchable words, space-separated.
#[must_use]
pub fn words(t: &Trajectory) -> String {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out: Vec<String> = Vec::new();
    let mut take = |text: &str, out: &mut Vec<String>| {
        for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if out.len() >= MAX_WORDS {
                return;
            }
            let n = w.chars().count();
            if (3..=40).contains(&n) {
                let w = w.to_lowercase();
                if seen.insert(w.clone()) {
                    out.push(w);
                }
            }
        }
    };
    for s in &t.steps {
        take(&s.text, &mut out);
        for c in &s.tool_calls {
            take(&c.name, &mut out);
            take(&c.arguments.to_string(), &mut out);
        }
        for r in &s.tool_results {
            take(&r.output, &mut out);
        }
    }
    out.join(" ")
}

/// The search page with its index.
///
/// # Errors
/// On I/O failure reading the parts.
pub fn page(parts: &mut Parts, run: &StudyRun) -> std::io::Result<String> {
    let mut entries = Vec::new();
    for a in &run.arms {
        for (i, v) in a.verdicts.iter().enumerate() {
            let words = parts.words(&a.name, i)?;
            let label = v.primary.clone().unwrap_or_else(|| v.outcome.as_str().to_string());
            entries.push(serde_json::json!([trajectory_href(&a.name, i), v.task_id, a.name, v.trial, label, v.flags.join(" "), words]));
        }
    }
    let json = serde_json::to_string(&entries).map_err(std::io::Error::other)?;
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1>Search</h1>\n<p class=\"muted\">Task ids, arms, classes, flags and words in the steps (up to {MAX_WORDS} distinct words per trajectory). \
         Every word must match; <code>class:NAME</code>, <code>arm:NAME</code> and <code>task:NAME</code> narrow to a field.</p>\n\
         <p><input type=\"search\" id=\"q\" placeholder=\"task id, class, flag, or words from the steps\" autofocus> <span id=\"count\" class=\"muted\"></span></p>\n\
         <table class=\"list\" id=\"results\"><thead><tr><th>task</th><th>arm</th><th class=\"num\">trial</th><th>verdict</th><th>flags</th></tr></thead><tbody></tbody></table>\n\
         <script type=\"application/json\" id=\"search-index\">{}</script>",
        json_in_html(&json)
    );
    Ok(shell("search", 0, &b))
}
