//! The lists behind the overview's counts: for each arm, every trajectory, each outcome group,
//! each failure class and flag, and each mechanics measure. The rows come from the report's
//! own `members`, so a list holds exactly what its count counted.

use std::fmt::Write as _;
use std::path::Path;

use super::page::{badge, shell};
use super::{slug, trajectory_href};
use crate::report::sanitize::html;
use crate::report::tables::{Report, arm_groups};
use crate::study::{ArmRun, StudyRun};

/// The list of every trajectory of an arm.
#[must_use]
pub fn arm_href(arm: &str) -> String {
    list_href(arm, "all")
}

/// The list `key` (`passed`, `class:NAME`, `flag:NAME`, `mechanic:NAME`) of an arm.
#[must_use]
pub fn list_href(arm: &str, key: &str) -> String {
    format!("l/{}--{}.html", slug(arm), slug(key))
}

/// A count as a link to its list, or plain when nothing is behind it.
#[must_use]
pub fn count_link(arm: &str, key: &str, text: &str, n: usize) -> String {
    if n == 0 { html(text) } else { format!("<a class=\"count\" href=\"{}\">{}</a>", list_href(arm, key), html(text)) }
}

fn list_page(a: &ArmRun, title: &str, who: &[usize]) -> String {
    let mut rows: Vec<usize> = who.to_vec();
    rows.sort_by(|x, y| {
        let (vx, vy) = (&a.verdicts[*x], &a.verdicts[*y]);
        (vx.task_id.as_str(), vx.trial, *x).cmp(&(vy.task_id.as_str(), vy.trial, *y))
    });
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<p class=\"crumbs\"><a href=\"../index.html\">overview</a> › <a href=\"../{}\">{}</a></p>\n<h1>{} <span class=\"sub\">{} trajectories</span></h1>",
        arm_href(&a.name),
        html(&a.name),
        html(title),
        rows.len()
    );
    b.push_str(
        "<table class=\"list sortable\">\n<thead><tr><th>task</th><th>trial</th><th>verdict</th><th>flags</th><th class=\"num\">steps</th><th>ended</th><th>reason</th></tr></thead>\n<tbody>\n",
    );
    for i in rows {
        let v = &a.verdicts[i];
        let verdict = v.primary.as_deref().map_or_else(|| badge(v.outcome.as_str()), badge);
        let reason: String = v.reason.as_deref().unwrap_or("").chars().take(160).collect();
        let _ = writeln!(
            b,
            "<tr><td><a href=\"../{}\">{}</a></td><td class=\"num\">{}</td><td>{verdict}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"reason\">{}</td></tr>",
            trajectory_href(&a.name, i),
            html(&v.task_id),
            v.trial,
            html(&v.flags.join(", ")),
            v.mechanics.steps,
            crate::util::snake(&v.mechanics.termination),
            html(&reason)
        );
    }
    b.push_str("</tbody>\n</table>\n");
    shell(&format!("{} · {}", a.name, title), 1, &b)
}

/// Writes every list the overview links to.
///
/// # Errors
/// On I/O failure.
pub fn write_all(dir: &Path, run: &StudyRun, r: &Report) -> std::io::Result<()> {
    for (ai, a) in run.arms.iter().enumerate() {
        let mut lists: Vec<(String, String, Vec<usize>)> = vec![("all".into(), "all trajectories".into(), (0..a.verdicts.len()).collect())];
        for (g, who) in arm_groups(&r.arms[ai]) {
            lists.push((g.to_string(), g.to_string(), who.clone()));
        }
        for c in &r.classes {
            lists.push((format!("class:{}", c.class), c.class.clone(), c.members.get(ai).cloned().unwrap_or_default()));
            for ((flag, _), who) in c.sub.iter().zip(&c.sub_members) {
                lists.push((format!("flag:{flag}"), format!("{} · {flag}", c.class), who.get(ai).cloned().unwrap_or_default()));
            }
        }
        for m in &r.mechanics {
            lists.push((format!("mechanic:{}", m.metric), m.metric.clone(), m.members.get(ai).cloned().unwrap_or_default()));
        }
        for (key, title, who) in lists {
            std::fs::write(dir.join(list_href(&a.name, &key)), list_page(a, &title, &who))?;
        }
    }
    Ok(())
}
