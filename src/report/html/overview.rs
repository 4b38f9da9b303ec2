//! The overview (`index.html`): the arms, the comparison's verdict, the failure modes and the
//! mechanics with every count a link to the runs behind it, the charts, and the per-task
//! matrix with every cell a link.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::lists::{arm_href, count_link};
use super::page::{label_class, shell};
use super::{task_href, trajectory_href};
use crate::report::render::{hours, pct, tokens};
use crate::report::sanitize::html;
use crate::report::tables::{Report, arm_groups, interval_pct};
use crate::study::StudyRun;

fn arms_table(run: &StudyRun, r: &Report) -> String {
    let mut b = String::from(
        "<table class=\"arms\">\n<thead><tr><th>arm</th><th class=\"num\">tasks / trials</th><th class=\"num\">pass@1</th><th class=\"num\">95% interval</th>\
         <th class=\"num\">passed</th><th class=\"num\">failed</th><th class=\"num\">infrastructure</th><th class=\"num\">unknown</th>\
         <th class=\"num\">steps (median)</th><th class=\"num\">wall clock</th><th class=\"num\">tokens in / out</th><th class=\"num\">cost</th></tr></thead>\n<tbody>\n",
    );
    for (a, row) in run.arms.iter().zip(&r.arms) {
        let _ = write!(
            b,
            "<tr><td><a href=\"{}\">{}</a></td><td class=\"num\">{} / {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            arm_href(&a.name),
            html(&a.name),
            row.tasks,
            row.trials,
            pct(row.pass_at_1.estimate),
            interval_pct(row.pass_at_1.interval)
        );
        for (g, who) in arm_groups(row) {
            let _ = write!(b, "<td class=\"num\">{}</td>", count_link(&a.name, g, &who.len().to_string(), who.len()));
        }
        let _ = writeln!(
            b,
            "<td class=\"num\">{:.0}</td><td class=\"num\">{}</td><td class=\"num\">{} / {}</td><td class=\"num\">${:.2}</td></tr>",
            row.steps_median,
            hours(row.wall_seconds_sum),
            tokens(row.prompt_tokens),
            tokens(row.completion_tokens),
            row.cost_usd
        );
    }
    b.push_str("</tbody>\n</table>\n");
    b
}

fn task_links(tasks: &[String]) -> String {
    tasks.iter().map(|t| format!("<a href=\"{}\">{}</a>", task_href(t), html(t))).collect::<Vec<_>>().join(", ")
}

fn comparison(r: &Report) -> String {
    let Some(c) = &r.comparison else { return String::new() };
    let mut b = String::from("<section id=\"comparison\"><h2>Comparison</h2>\n");
    let _ = writeln!(b, "<p class=\"sentence\"><b>{} vs {}</b>: {}</p>", html(&c.a), html(&c.b), html(&c.verdict));
    let _ = writeln!(
        b,
        "<p class=\"muted\">{} on {} tasks: difference {:+.1} pp {}, p = {:.3}.</p>",
        html(&c.test_name),
        c.n,
        100.0 * c.difference.estimate,
        interval_pct(c.difference.interval),
        c.test.p_value
    );
    if c.paired {
        b.push_str("<dl class=\"flips\">\n");
        let _ = writeln!(b, "<dt>only {} passed ({})</dt><dd>{}</dd>", html(&c.a), c.only_a.len(), task_links(&c.only_a));
        let _ = writeln!(b, "<dt>only {} passed ({})</dt><dd>{}</dd>", html(&c.b), c.only_b.len(), task_links(&c.only_b));
        for (move_, tasks) in &c.transitions {
            let _ = writeln!(b, "<dt>{} ({})</dt><dd>{}</dd>", html(move_), tasks.len(), task_links(tasks));
        }
        b.push_str("</dl>\n");
    }
    b.push_str("</section>\n");
    b
}

fn arm_header(run: &StudyRun, first: &str) -> String {
    let mut h = format!("<thead><tr><th>{first}</th>");
    for a in &run.arms {
        let _ = write!(h, "<th class=\"num\">{}</th>", html(&a.name));
    }
    h.push_str("</tr></thead>\n");
    h
}

fn failure_modes(run: &StudyRun, r: &Report) -> String {
    let mut b = format!("<table class=\"modes\">\n{}<tbody>\n", arm_header(run, "failure mode (share of model failures, 95% interval)"));
    for c in &r.classes {
        let _ = write!(b, "<tr><td><span class=\"swatch {}\"></span> {}</td>", label_class(&c.class), html(&c.class.replace('_', " ")));
        for (a, (n, est)) in run.arms.iter().zip(&c.per_arm) {
            let n = *n as usize;
            let text = match est {
                None => format!("{n} (excluded)"),
                Some(_) if n == 0 => "0".into(),
                Some(e) => format!("{n} ({:.0}%, {:.0}–{:.0})", 100.0 * e.estimate, 100.0 * e.interval.lo, 100.0 * e.interval.hi),
            };
            let _ = write!(b, "<td class=\"num\">{}</td>", count_link(&a.name, &format!("class:{}", c.class), &text, n));
        }
        b.push_str("</tr>\n");
        for (flag, per) in &c.sub {
            let _ = write!(b, "<tr class=\"sub\"><td>of which {}</td>", html(&flag.replace('_', " ")));
            for (a, n) in run.arms.iter().zip(per) {
                let n = *n as usize;
                let _ = write!(b, "<td class=\"num\">{}</td>", count_link(&a.name, &format!("flag:{flag}"), &n.to_string(), n));
            }
            b.push_str("</tr>\n");
        }
    }
    b.push_str("</tbody>\n</table>\n");
    b
}

fn mechanics(run: &StudyRun, r: &Report) -> String {
    let mut b = format!("<table class=\"mechanics\">\n{}<tbody>\n", arm_header(run, "mechanics"));
    for m in &r.mechanics {
        let _ = write!(b, "<tr><td>{}</td>", html(&m.metric));
        for ((a, cell), who) in run.arms.iter().zip(&m.per_arm).zip(&m.members) {
            let _ = write!(b, "<td class=\"num\">{}</td>", count_link(&a.name, &format!("mechanic:{}", m.metric), cell, who.len()));
        }
        b.push_str("</tr>\n");
    }
    b.push_str("</tbody>\n</table>\n");
    b
}

fn charts(r: &Report) -> std::io::Result<String> {
    let mut b = String::from("<div class=\"charts\">\n");
    for (name, _) in crate::report::chart::CHARTS {
        let svg = crate::report::chart::svg(name, r).map_err(|e| std::io::Error::other(e.to_string()))?;
        // plotters escapes its text; the XML declaration has no place inside HTML.
        let start = svg.find("<svg").unwrap_or(0);
        let _ = writeln!(b, "<figure class=\"chart\" id=\"chart-{name}\">{}</figure>", &svg[start..]);
    }
    b.push_str("</div>\n");
    Ok(b)
}

/// The matrix: a row per task, a cell per arm coloured by the task's label there, linking to
/// the trajectory when the arm ran the task once and to the task page when more often.
fn matrix(run: &StudyRun, r: &Report) -> String {
    let index: Vec<BTreeMap<&str, Vec<usize>>> = run
        .arms
        .iter()
        .map(|a| {
            let mut m: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for (i, v) in a.verdicts.iter().enumerate() {
                m.entry(v.task_id.as_str()).or_default().push(i);
            }
            m
        })
        .collect();
    let mut b = format!("<table class=\"matrix\">\n{}<tbody>\n", arm_header(run, "task"));
    for row in &r.tasks {
        let _ = write!(b, "<tr><td><a href=\"{}\">{}</a></td>", task_href(&row.task), html(&row.task));
        for ((a, idx), (trials, passed, label)) in run.arms.iter().zip(&index).zip(&row.per_arm) {
            let text = if *trials > 1 { format!("{label} {passed}/{trials}") } else { label.clone() };
            let href = match idx.get(row.task.as_str()).map(Vec::as_slice) {
                Some([one]) => Some(trajectory_href(&a.name, *one)),
                Some([_, ..]) => Some(task_href(&row.task)),
                _ => None,
            };
            match href {
                Some(h) => {
                    let _ = write!(b, "<td class=\"cell {}\"><a href=\"{h}\">{}</a></td>", label_class(label), html(&text));
                }
                None => {
                    let _ = write!(b, "<td class=\"cell {}\">{}</td>", label_class(label), html(&text));
                }
            }
        }
        b.push_str("</tr>\n");
    }
    b.push_str("</tbody>\n</table>\n");
    b
}

/// The overview page.
///
/// # Errors
/// A chart that cannot be drawn.
pub fn page(run: &StudyRun, r: &Report) -> std::io::Result<String> {
    let title = run.title.clone().unwrap_or_else(|| "coroner report".into());
    let n: usize = run.arms.iter().map(|a| a.verdicts.len()).sum();
    let mut b = String::new();
    let _ = writeln!(b, "<h1>{}</h1>", html(&title));
    let _ = writeln!(
        b,
        "<p class=\"muted\">{} arms, {n} trajectories, {} inputs quarantined. rules {}.</p>",
        run.arms.len(),
        run.quarantined(),
        html(&run.rules_digest.chars().take(12).collect::<String>())
    );
    let _ = writeln!(
        b,
        "<section id=\"arms\"><h2>Arms</h2>\n<p class=\"muted\">pass@1 excludes infrastructure failures and unknown outcomes; every count opens its runs.</p>\n{}</section>",
        arms_table(run, r)
    );
    b.push_str(&comparison(r));
    let _ = writeln!(b, "<section id=\"failure-modes\"><h2>Failure modes</h2>\n{}</section>", failure_modes(run, r));
    let _ = writeln!(b, "<section id=\"mechanics\"><h2>Mechanics</h2>\n{}</section>", mechanics(run, r));
    let _ = writeln!(b, "<section id=\"charts\"><h2>Charts</h2>\n{}</section>", charts(r)?);
    let _ = writeln!(
        b,
        "<section id=\"tasks\"><h2>Per task <span class=\"sub\">{} tasks</span></h2>\n{}</section>",
        r.tasks.len(),
        matrix(run, r)
    );
    Ok(shell(&title, 0, &b))
}
