//! A checked set of predictions as text: a terminal table (comfy-table) and Markdown for a
//! pull-request comment. Both say how the seal held, judge every claim, and print the escape
//! clause of each refuted prediction.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets};

use super::check::{CheckReport, Evaluation, Status, interval_text};
use super::power::Detectable;
use crate::report::render::Fit;
use crate::report::sanitize::markdown_line as md_cell;

fn safe_terminal(s: &str) -> String {
    crate::report::sanitize::terminal(s).into_owned()
}

fn p_text(p: Option<f64>, e: &Evaluation) -> String {
    match (e.status, p) {
        (Status::Retracted, _) | (_, None) => "-".into(),
        _ if e.exact => "exact".into(),
        (_, Some(p)) if p < 0.001 => "<0.001".into(),
        (_, Some(p)) => format!("{p:.3}"),
    }
}

fn row(e: &Evaluation) -> Vec<String> {
    vec![
        e.id.clone(),
        e.claim.clone(),
        e.observed.clone().unwrap_or_else(|| "-".into()),
        e.interval.map_or_else(|| "-".into(), |i| interval_text(e.metric, i)),
        p_text(e.p, e),
        p_text(e.p_holm, e),
        e.status.as_str().into(),
    ]
}

const HEADER: [&str; 7] = ["id", "claim", "observed", "interval", "p", "p (Holm)", "verdict"];
const RIGHT: [usize; 2] = [4, 5];

fn seal_lines(r: &CheckReport) -> Vec<String> {
    let s = &r.seal;
    let commit = s.git_commit.as_deref().map(|c| format!(", commit {}", c.get(..12).unwrap_or(c))).unwrap_or_default();
    let mut out = vec![format!(
        "sealed {} by coroner {}{commit} ({}); predictions, rules and {} {} unchanged since",
        s.sealed_at,
        s.coroner_version,
        s.lock,
        s.registries,
        if s.registries == 1 { "registry" } else { "registries" }
    )];
    if let Some(n) = s.sealed_over {
        out.push(format!("LATE: sealed when {n} of the study's trajectories already existed; checked only because of --allow-late"));
    }
    let after_first = s.earliest.as_deref().is_some_and(|e| {
        crate::util::parse_time(&s.sealed_at).zip(crate::util::parse_time(e)).is_none_or(|(sealed, first)| sealed > first)
    });
    out.push(match (&s.earliest, after_first) {
        (Some(e), true) => format!("LATE: sealed after the run's first trajectory ({e}); checked only because of --allow-late"),
        (Some(e), false) => format!("sealed before the run's first trajectory ({e})"),
        (None, _) => "no trajectory has a time: whether the seal preceded the run cannot be checked".into(),
    });
    if s.clock_given {
        out.push("the seal's time was given by hand (--now or COR_NOW), not read from the clock: it is the sealer's claim".into());
    }
    if let Some(t) = &s.commit_after_seal {
        out.push(format!("WARNING: the sealed commit is dated {t}, after the seal's time: the time was set back or the clock was wrong"));
    }
    out
}

fn method_line(r: &CheckReport) -> String {
    format!(
        "intervals: each end a one-sided {:.0}% bound; p: one-sided test of \"the claim is false\" (small p supports it), Holm-adjusted across the {} {} with sampling error at α = {}; counts are compared exactly",
        100.0 * (1.0 - r.alpha),
        r.family,
        if r.family == 1 { "claim" } else { "claims" },
        r.alpha
    )
}

/// The one-line tally.
#[must_use]
pub fn summary(r: &CheckReport) -> String {
    format!("{} confirmed, {} inconclusive, {} refuted, {} retracted", r.confirmed, r.inconclusive, r.refuted, r.retracted)
}

fn refuted_detail(e: &Evaluation) -> String {
    let mut s = format!("observed {}", e.observed.clone().unwrap_or_default());
    if let Some(i) = e.interval {
        let _ = write!(s, ", interval {}", interval_text(e.metric, i));
    }
    if !e.exact
        && let (Some(p), Some(h)) = (e.p_against, e.p_against_holm)
    {
        let _ = write!(s, "; p against the claim {} (Holm {})", p_text(Some(p), e), p_text(Some(h), e));
    }
    s
}

fn table(header: &[&str], rows: &[Vec<String>], right: &[usize], fit: Fit) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    match fit {
        Fit::Terminal => {
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        Fit::Width(w) => {
            t.force_no_tty().set_content_arrangement(ContentArrangement::Dynamic).set_width(w);
        }
        Fit::None => {
            t.force_no_tty().set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    t.set_header(header.iter().map(|h| Cell::new(*h)));
    for r in rows {
        t.add_row(r.iter().enumerate().map(|(j, c)| {
            let cell = Cell::new(safe_terminal(c));
            if right.contains(&j) { cell.set_alignment(CellAlignment::Right) } else { cell }
        }));
    }
    t
}

/// The check for a terminal.
#[must_use]
pub fn terminal(r: &CheckReport, fit: Fit) -> String {
    let mut out = format!("Predictions: {}\n", safe_terminal(&r.title));
    for l in seal_lines(r) {
        let _ = writeln!(out, " {l}");
    }
    let rows: Vec<Vec<String>> = r.predictions.iter().map(row).collect();
    let _ = writeln!(out, "{}", table(&HEADER, &rows, &RIGHT, fit));
    let _ = writeln!(out, " {}", method_line(r));
    let refuted: Vec<&Evaluation> = r.predictions.iter().filter(|e| e.status == Status::Refuted).collect();
    if !refuted.is_empty() {
        let _ = writeln!(out, "\nRefuted");
        for e in refuted {
            let _ = writeln!(out, " {}: {}", safe_terminal(&e.id), safe_terminal(&e.claim));
            let _ = writeln!(out, "   {}", safe_terminal(&refuted_detail(e)));
            let _ = writeln!(out, "   escape clause: {}", safe_terminal(&e.escape_clause));
        }
    }
    let retracted: Vec<&Evaluation> = r.predictions.iter().filter(|e| e.status == Status::Retracted).collect();
    if !retracted.is_empty() {
        let _ = writeln!(out, "\nRetracted (not evaluated)");
        for e in retracted {
            if let Some(x) = &e.retracted {
                let _ = writeln!(out, " {}: {} (at {})", safe_terminal(&e.id), safe_terminal(&x.note), safe_terminal(&x.at));
            }
        }
    }
    let notes: Vec<&Evaluation> = r.predictions.iter().filter(|e| e.note.is_some()).collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "\nNotes");
        for e in notes {
            let _ = writeln!(out, " {}: {}", safe_terminal(&e.id), safe_terminal(e.note.as_deref().unwrap_or_default()));
        }
    }
    if r.quarantined > 0 {
        let _ =
            writeln!(out, "\n{} inputs were quarantined (see the diagnostics above); the claims were judged on the rest.", r.quarantined);
    }
    let _ = writeln!(out, "\n{}", summary(r));
    out
}

/// The check as GitHub Markdown.
#[must_use]
pub fn markdown(r: &CheckReport) -> String {
    let mut out = format!("## Predictions: {}\n\n", md_cell(&r.title));
    for l in seal_lines(r) {
        let _ = writeln!(out, "- {}", md_cell(&l));
    }
    let _ = writeln!(out, "\n**{}**\n", summary(r));
    let _ = writeln!(out, "| {} |", HEADER.join(" | "));
    let _ = writeln!(out, "|{}|", (0..HEADER.len()).map(|j| if RIGHT.contains(&j) { "---:" } else { "---" }).collect::<Vec<_>>().join("|"));
    for e in &r.predictions {
        let mut cells: Vec<String> = row(e).iter().map(|c| md_cell(c)).collect();
        if e.status == Status::Refuted {
            cells[6] = "**refuted**".into();
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let _ = writeln!(out, "\n_{}_", md_cell(&method_line(r)));
    let refuted: Vec<&Evaluation> = r.predictions.iter().filter(|e| e.status == Status::Refuted).collect();
    if !refuted.is_empty() {
        let _ = writeln!(out, "\n### Refuted\n");
        for e in refuted {
            let _ = writeln!(out, "- **{}**: {} — {}", md_cell(&e.id), md_cell(&e.claim), md_cell(&refuted_detail(e)));
            let _ = writeln!(out, "  - escape clause: {}", md_cell(&e.escape_clause));
        }
    }
    let retracted: Vec<&Evaluation> = r.predictions.iter().filter(|e| e.status == Status::Retracted).collect();
    if !retracted.is_empty() {
        let _ = writeln!(out, "\n### Retracted (not evaluated)\n");
        for e in retracted {
            if let Some(x) = &e.retracted {
                let _ = writeln!(out, "- **{}**: {} (at {})", md_cell(&e.id), md_cell(&x.note), md_cell(&x.at));
            }
        }
    }
    let notes: Vec<&Evaluation> = r.predictions.iter().filter(|e| e.note.is_some()).collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "\n### Notes\n");
        for e in notes {
            let _ = writeln!(out, "- **{}**: {}", md_cell(&e.id), md_cell(e.note.as_deref().unwrap_or_default()));
        }
    }
    if r.quarantined > 0 {
        let _ = writeln!(out, "\n_{} inputs were quarantined; the claims were judged on the rest._", r.quarantined);
    }
    out
}

/// What each prediction's design can detect, as printed by `predict seal`.
#[must_use]
pub fn design(rows: &[(String, Detectable)], fit: Fit) -> String {
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|(claim, d)| {
            vec![
                d.id.clone(),
                claim.clone(),
                d.n.map_or_else(|| "-".into(), |n| n.to_string()),
                d.detectable.map_or_else(|| "-".into(), |x| format!("{:.1} pp", 100.0 * x)),
                if d.underpowered { format!("UNDERPOWERED: {}", d.note) } else { d.note.clone() },
            ]
        })
        .collect();
    table(&["id", "claim", "n", "detectable", "what this design can tell (80% power)"], &body, &[2, 3], fit).to_string() + "\n"
}
