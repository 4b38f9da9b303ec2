//! One page per task: every arm's runs of it side by side, step by step, each with its verdict,
//! so two models on the same task can be read against each other (the comparison users ask
//! viewers for). The step lines were written beside each trajectory page as it was rendered.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::lists::arm_href;
use super::page::{badge, shell};
use super::{Parts, task_href, trajectory_href};
use crate::report::sanitize::html;
use crate::study::StudyRun;

/// Writes the page of every task any arm ran.
///
/// # Errors
/// On I/O failure.
pub fn write_all(dir: &Path, parts: &mut Parts, run: &StudyRun) -> std::io::Result<()> {
    let mut tasks: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    for (ai, a) in run.arms.iter().enumerate() {
        for (i, v) in a.verdicts.iter().enumerate() {
            tasks.entry(v.task_id.as_str()).or_default().push((ai, i));
        }
    }
    for (task, runs) in tasks {
        let mut b = String::new();
        let _ = writeln!(
            b,
            "<p class=\"crumbs\"><a href=\"../index.html\">overview</a></p>\n<h1>{} <span class=\"sub\">{} runs</span></h1>",
            html(task),
            runs.len()
        );
        let mut columns: Vec<Vec<String>> = Vec::new();
        b.push_str("<div class=\"side-scroll\"><table class=\"side\">\n<thead><tr><th class=\"num\">step</th>");
        for &(ai, i) in &runs {
            let a = &run.arms[ai];
            let v = &a.verdicts[i];
            let href = trajectory_href(&a.name, i);
            let verdict = v.primary.as_deref().map_or_else(|| badge(v.outcome.as_str()), badge);
            let _ = write!(
                b,
                "<th class=\"run\"><a href=\"../{}\">{}</a> · trial {} <a href=\"../{href}\">open</a><br>{verdict} <span class=\"flags\">{}</span></th>",
                arm_href(&a.name),
                html(&a.name),
                v.trial,
                html(&v.flags.join(", "))
            );
            let lines = parts.step_lines(&a.name, i)?;
            columns.push(lines.lines().enumerate().map(|(s, l)| format!("<a href=\"../{href}#s-{s}\">{l}</a>")).collect());
        }
        b.push_str("</tr></thead>\n<tbody>\n");
        let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
        for s in 0..rows {
            let _ = write!(b, "<tr><td class=\"num\">{s}</td>");
            for c in &columns {
                let _ = write!(b, "<td>{}</td>", c.get(s).map_or("", String::as_str));
            }
            b.push_str("</tr>\n");
        }
        b.push_str("</tbody>\n</table></div>\n");
        std::fs::write(dir.join(task_href(task)), shell(task, 1, &b))?;
    }
    Ok(())
}
