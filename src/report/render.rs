//! The report as text: terminal tables (comfy-table, fitted to the terminal, no colour off a
//! terminal) and Markdown for pull-request comments. Cells hold untrusted text (task names,
//! arm names from transcripts): control characters are neutralized for the terminal and
//! Markdown specials are escaped.

use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets};

use super::tables::{Report, interval_pct};

pub(crate) fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

pub(crate) fn hours(secs: f64) -> String {
    let m = (secs / 60.0).round() as u64;
    if m >= 60 { format!("{} h {:02}", m / 60, m % 60) } else { format!("{m} min") }
}

pub(crate) fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// Untrusted text (task and arm names come from transcripts) for a terminal.
fn safe_terminal(s: &str) -> String {
    super::sanitize::terminal(s).into_owned()
}

/// Untrusted text for a Markdown table cell.
fn md_cell(s: &str) -> String {
    super::sanitize::markdown_line(s)
}

/// coroner's own text (numbers, labels) for a Markdown cell: only a cell boundary needs care.
fn md_own(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A row of (header, rows) tables in the order the report prints them.
struct Tab {
    title: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Columns aligned right (numbers).
    right: Vec<usize>,
    /// Columns holding text from transcripts or the study file (names), escaped in Markdown.
    untrusted: Vec<usize>,
    /// Header cells from index 1 on are arm names (untrusted).
    arm_header: bool,
}

fn tabs(r: &Report) -> Vec<Tab> {
    let mut out = Vec::new();
    let tasks: std::collections::BTreeSet<_> = r.arms.iter().map(|a| a.tasks).collect();
    let same = match (tasks.len(), tasks.first()) {
        (1, Some(n)) => format!("{n} tasks each; "),
        _ => String::new(),
    };
    out.push(Tab {
        title: format!("Arms ({same}pass@1 with 95% intervals; infrastructure failures excluded and counted)"),
        header: [
            "arm",
            "tasks / trials",
            "pass@1",
            "interval",
            "infra",
            "unknown",
            "steps (median)",
            "wall clock",
            "per task",
            "tokens in/out",
            "cost",
        ]
        .map(String::from)
        .to_vec(),
        rows: r
            .arms
            .iter()
            .map(|a| {
                vec![
                    a.arm.clone(),
                    format!("{} / {}", a.tasks, a.trials),
                    format!("{}/{}  {}", a.passed, a.evaluated, pct(a.pass_at_1.estimate)),
                    interval_pct(a.pass_at_1.interval),
                    a.infrastructure.to_string(),
                    a.unknown.to_string(),
                    format!("{:.0}", a.steps_median),
                    hours(a.wall_seconds_sum),
                    hours(a.wall_seconds_per_task),
                    format!("{} / {}", tokens(a.prompt_tokens), tokens(a.completion_tokens)),
                    format!("${:.2}", a.cost_usd),
                ]
            })
            .collect(),
        right: vec![1, 2, 4, 5, 6, 7, 8, 9, 10],
        untrusted: vec![0],
        arm_header: false,
    });
    let mut header = vec!["failure mode (share of model failures, 95% interval)".to_string()];
    header.extend(r.arms.iter().map(|a| a.arm.clone()));
    let mut rows = Vec::new();
    for c in &r.classes {
        let mut row = vec![c.class.replace('_', " ")];
        for (n, est) in &c.per_arm {
            row.push(match est {
                None => format!("{n} (excluded)"),
                Some(_) if *n == 0 => "0".into(),
                Some(e) => format!("{n} ({:.0}%, {:.0}–{:.0})", 100.0 * e.estimate, 100.0 * e.interval.lo, 100.0 * e.interval.hi),
            });
        }
        rows.push(row);
        for (flag, per) in &c.sub {
            let mut row = vec![format!("  of which {}", flag.replace('_', " "))];
            row.extend(per.iter().map(ToString::to_string));
            rows.push(row);
        }
    }
    out.push(Tab {
        title: "Failure modes per arm".into(),
        header,
        rows,
        right: (1..=r.arms.len()).collect(),
        untrusted: Vec::new(),
        arm_header: true,
    });
    let mut header = vec!["mechanics".to_string()];
    header.extend(r.arms.iter().map(|a| a.arm.clone()));
    out.push(Tab {
        title: "Mechanics per arm".into(),
        header,
        rows: r.mechanics.iter().map(|m| std::iter::once(m.metric.clone()).chain(m.per_arm.iter().cloned()).collect()).collect(),
        right: (1..=r.arms.len()).collect(),
        // Peak writes name the task they happened in.
        untrusted: (1..=r.arms.len()).collect(),
        arm_header: true,
    });
    let mut header = vec!["task".to_string()];
    header.extend(r.arms.iter().map(|a| a.arm.clone()));
    out.push(Tab {
        title: "Per task (outcome or primary class)".into(),
        header,
        rows: r
            .tasks
            .iter()
            .map(|t| {
                std::iter::once(t.task.clone())
                    .chain(
                        t.per_arm
                            .iter()
                            .map(|(n, p, l)| if *n > 1 { format!("{p}/{n} passed; {}", l.replace('_', " ")) } else { l.replace('_', " ") }),
                    )
                    .collect()
            })
            .collect(),
        right: Vec::new(),
        untrusted: vec![0],
        arm_header: true,
    });
    if !r.gates.is_empty() {
        out.push(Tab {
            title: "Thresholds (--fail-if: a crossed one fails the run)".into(),
            header: ["threshold", "arm", "value", "result"].map(String::from).to_vec(),
            rows: r
                .gates
                .iter()
                .map(|g| {
                    let result = if g.crossed { "CROSSED" } else { "held" };
                    vec![g.threshold.clone(), g.arm.clone(), format!("{:.4} ({})", g.value, pct(g.value)), result.into()]
                })
                .collect(),
            right: vec![2],
            // The threshold is the user's text; the arm a study's or a transcript's.
            untrusted: vec![0, 1],
            arm_header: false,
        });
    }
    out
}

/// How terminal tables are fitted.
#[derive(Debug, Clone, Copy)]
pub enum Fit {
    /// To the terminal stdout is (comfy-table asks it for its width).
    Terminal,
    /// To a given width.
    Width(u16),
    /// Not at all (pipes, files).
    None,
}

/// Terminal tables.
#[must_use]
pub fn terminal(r: &Report, fit: Fit) -> String {
    let mut out = format!("{}\n", safe_terminal(&r.title));
    for (i, t) in tabs(r).into_iter().enumerate() {
        let mut table = Table::new();
        table.load_preset(presets::UTF8_FULL_CONDENSED);
        match fit {
            Fit::Terminal => {
                table.set_content_arrangement(ContentArrangement::Dynamic);
            }
            Fit::Width(w) => {
                table.force_no_tty().set_content_arrangement(ContentArrangement::Dynamic).set_width(w);
            }
            Fit::None => {
                table.force_no_tty().set_content_arrangement(ContentArrangement::Disabled);
            }
        }
        table.set_header(t.header.iter().map(|h| Cell::new(safe_terminal(h))));
        for row in &t.rows {
            table.add_row(row.iter().enumerate().map(|(j, c)| {
                let cell = Cell::new(safe_terminal(c));
                if t.right.contains(&j) { cell.set_alignment(CellAlignment::Right) } else { cell }
            }));
        }
        out.push_str(&format!("\n{}\n{table}\n", t.title));
        if i == 0
            && let Some(c) = &r.comparison
        {
            out.push_str(&format!(" {}\n", safe_terminal(&format!("{} vs {}: {}", c.a, c.b, c.verdict))));
            if c.paired {
                out.push_str(&format!(
                    " flipped tasks: {} passed only in {}, {} only in {}\n",
                    c.only_a.len(),
                    safe_terminal(&c.a),
                    c.only_b.len(),
                    safe_terminal(&c.b)
                ));
            }
        }
    }
    if r.quarantined > 0 {
        out.push_str(&format!("\n{} inputs were quarantined (see the diagnostics above); the tables cover the rest.\n", r.quarantined));
    }
    out
}

/// The same tables as GitHub Markdown.
#[must_use]
pub fn markdown(r: &Report) -> String {
    let mut out = format!("## {}\n", md_cell(&r.title));
    for (i, t) in tabs(r).into_iter().enumerate() {
        out.push_str(&format!("\n### {}\n\n", md_own(&t.title)));
        out.push_str(&format!(
            "| {} |\n",
            t.header
                .iter()
                .enumerate()
                .map(|(j, h)| if t.arm_header && j > 0 { md_cell(h) } else { md_own(h) })
                .collect::<Vec<_>>()
                .join(" | ")
        ));
        out.push_str(&format!(
            "|{}|\n",
            (0..t.header.len()).map(|j| if t.right.contains(&j) { "---:" } else { "---" }).collect::<Vec<_>>().join("|")
        ));
        for row in &t.rows {
            out.push_str(&format!(
                "| {} |\n",
                row.iter()
                    .enumerate()
                    .map(|(j, c)| if t.untrusted.contains(&j) { md_cell(c) } else { md_own(c) })
                    .collect::<Vec<_>>()
                    .join(" | ")
            ));
        }
        if i == 0
            && let Some(c) = &r.comparison
        {
            out.push_str(&format!("\n**{} vs {}: {}**", md_cell(&c.a), md_cell(&c.b), md_own(&c.verdict)));
            if c.paired {
                out.push_str(&format!(
                    " Flipped tasks: {} passed only in {}, {} only in {}.",
                    c.only_a.len(),
                    md_cell(&c.a),
                    c.only_b.len(),
                    md_cell(&c.b)
                ));
            }
            out.push('\n');
        }
    }
    if r.quarantined > 0 {
        out.push_str(&format!("\n_{} inputs were quarantined; the tables cover the rest._\n", r.quarantined));
    }
    out
}
