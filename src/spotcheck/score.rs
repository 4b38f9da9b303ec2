//! Agreement between a person's labels (a filled-in sheet) and the machine's (the key): the
//! confusion matrix, raw agreement, Cohen's kappa with its interval and its Landis–Koch
//! reading, per-class precision and recall with Wilson intervals, and the majority-class
//! baseline. Rows without a label are skipped and counted; labels outside the taxonomy are
//! listed with their rows and left out of the figures, never dropped silently.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::SpotcheckError;
use super::labels::{LabelKind, PASSED, Vocabulary};
use super::sample::{Key, uncell};
use crate::report::sanitize;
use crate::stats::{ConfusionMatrix, DEFAULT_CONFIDENCE, Interval, Kappa, Proportion, cohen_kappa, wilson};

/// One labelled row of a sheet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SheetLabel {
    /// Line of the row in the file (the header is line 1).
    pub row: u64,
    pub item: String,
    pub trajectory_id: Option<String>,
    pub label: String,
}

/// Reads a sheet: columns `item` and `human_label` (or `label`) by name; `trajectory_id`,
/// when present, is checked against the key.
///
/// # Errors
/// When the file cannot be read or lacks the columns.
pub fn read_sheet(path: &Path) -> Result<Vec<SheetLabel>, SpotcheckError> {
    let shown = crate::util::display_path(path);
    let (headers, rows) = super::labels::read_rows(path)?;
    let col = |names: &[&str]| headers.iter().position(|h| names.contains(&h.as_str()));
    let item = col(&["item"]).ok_or_else(|| SpotcheckError::columns(&shown, "item", "a sheet from `coroner spotcheck sample`"))?;
    let label = col(&["human_label", "label"])
        .ok_or_else(|| SpotcheckError::columns(&shown, "human_label", "a sheet from `coroner spotcheck sample`"))?;
    let id = col(&["trajectory_id"]);
    Ok(rows
        .into_iter()
        .map(|(row, rec)| {
            let get = |i: usize| rec.get(i).unwrap_or("").trim().to_string();
            SheetLabel {
                row,
                item: get(item),
                trajectory_id: id.map(get).filter(|s| !s.is_empty()).map(|s| uncell(&s).to_string()),
                label: get(label),
            }
        })
        .collect())
}

/// Reads a key written by `coroner spotcheck sample`.
///
/// # Errors
/// When the file cannot be read or is not a key.
pub fn read_key(path: &Path) -> Result<Key, SpotcheckError> {
    let shown = crate::util::display_path(path);
    let text = std::fs::read_to_string(path).map_err(|e| SpotcheckError::read(&shown, &e))?;
    serde_json::from_str(&text).map_err(|e| SpotcheckError::read(&shown, &e))
}

/// A row that was not scored, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowNote {
    pub row: u64,
    pub item: String,
    pub label: String,
    pub problem: String,
}

/// Raw agreement with its Wilson interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Agreement {
    pub agreed: u64,
    pub n: u64,
    pub rate: f64,
    pub interval: Interval,
}

/// What a labeller who always gave the most common human label would score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Baseline {
    pub label: String,
    pub count: u64,
    /// Its raw agreement with the human labels (its kappa is 0 by construction).
    pub agreement: f64,
}

/// One label's precision (how often the machine is right when it says it) and recall (how
/// many of the human's it finds), each with a Wilson interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassScore {
    pub label: String,
    pub human: u64,
    pub machine: u64,
    pub agreed: u64,
    pub precision: f64,
    pub precision_interval: Interval,
    pub recall: f64,
    pub recall_interval: Interval,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    pub confidence: f64,
    /// Rows in the sheet (not counting blank lines).
    pub rows: usize,
    /// Rows compared.
    pub scored: usize,
    /// Rows with an empty label.
    pub unlabelled: Vec<u64>,
    /// Labels that are not a class of the taxonomy nor `passed`.
    pub outside_taxonomy: Vec<RowNote>,
    /// Rows that do not belong to the key (unknown or repeated item, another trajectory id).
    pub mismatched: Vec<RowNote>,
    /// Key items no row of the sheet holds.
    pub missing_items: Vec<u32>,
    /// Rows: the human's label; columns: the machine's; labels in taxonomy precedence order,
    /// then `passed`, limited to those either gave.
    pub confusion: ConfusionMatrix,
    pub agreement: Agreement,
    pub kappa: Kappa,
    /// Landis–Koch reading of kappa, and of its interval's ends.
    pub strength: String,
    pub strength_interval: (String, String),
    pub baseline: Option<Baseline>,
    pub per_class: Vec<ClassScore>,
    pub notes: Vec<String>,
}

/// Landis & Koch (1977): below 0 poor, to 0.20 slight, 0.40 fair, 0.60 moderate, 0.80
/// substantial, above almost perfect.
#[must_use]
pub fn landis_koch(kappa: f64) -> &'static str {
    if kappa < 0.0 {
        "poor"
    } else if kappa <= 0.20 {
        "slight"
    } else if kappa <= 0.40 {
        "fair"
    } else if kappa <= 0.60 {
        "moderate"
    } else if kappa <= 0.80 {
        "substantial"
    } else {
        "almost perfect"
    }
}

/// Compares a sheet's labels with the key.
#[must_use]
pub fn score(sheet: &[SheetLabel], key: &Key, vocab: &Vocabulary, rules_digest: &str) -> Score {
    let by_item: BTreeMap<u32, &super::sample::KeyItem> = key.items.iter().map(|i| (i.item, i)).collect();
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    let mut pairs: Vec<(String, String)> = Vec::new();
    let (mut unlabelled, mut outside, mut mismatched) = (Vec::new(), Vec::new(), Vec::new());
    let note = |r: &SheetLabel, problem: String| RowNote { row: r.row, item: r.item.clone(), label: r.label.clone(), problem };
    for r in sheet {
        let Some((n, k)) = r.item.parse::<u32>().ok().and_then(|n| by_item.get(&n).map(|k| (n, *k))) else {
            mismatched.push(note(r, format!("item `{}` is not in the key", r.item)));
            continue;
        };
        if let Some(id) = &r.trajectory_id {
            let expected = super::sample::cell(&k.trajectory_id);
            if id != uncell(&expected) && *id != k.trajectory_id {
                mismatched.push(note(
                    r,
                    format!("the sheet says trajectory {id}, the key {}: the sheet and the key do not belong together", k.trajectory_id),
                ));
                continue;
            }
        }
        if !seen.insert(n) {
            mismatched.push(note(r, format!("item {n} appears again; the first row was scored")));
            continue;
        }
        if r.label.is_empty() {
            unlabelled.push(r.row);
            continue;
        }
        let human = match vocab.kind(&r.label) {
            LabelKind::Class(c) => c,
            LabelKind::Passed => PASSED.to_string(),
            LabelKind::Flag(f) => {
                outside.push(note(
                    r,
                    format!("`{f}` is a flag, not a class; label the class (the flag's class is usually worked_then_wrong)"),
                ));
                continue;
            }
            LabelKind::Unknown { suggestion } => {
                let hint = suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                outside.push(note(r, format!("not a class of the taxonomy nor `passed`{hint}")));
                continue;
            }
        };
        pairs.push((human, k.machine_label().to_string()));
    }
    let missing_items: Vec<u32> = by_item.keys().copied().filter(|i| !seen.contains(i)).collect();

    let used: BTreeSet<&str> = pairs.iter().flat_map(|(h, m)| [h.as_str(), m.as_str()]).collect();
    let mut labels: Vec<String> = vocab.order().into_iter().filter(|l| used.contains(l.as_str())).collect();
    // A machine label the vocabulary does not know (a key made with other rules) still counts.
    for l in &used {
        if !labels.iter().any(|x| x == l) {
            labels.push((*l).to_string());
        }
    }
    let cm = ConfusionMatrix::with_labels(labels, pairs.iter().map(|(h, m)| (h.as_str(), m.as_str())));
    let (rate, interval) = cm.agreement(DEFAULT_CONFIDENCE);
    let agreement = Agreement { agreed: cm.agreed(), n: cm.total(), rate, interval };
    let kappa = cohen_kappa(&cm, DEFAULT_CONFIDENCE);
    let per_class: Vec<ClassScore> = cm
        .per_class(DEFAULT_CONFIDENCE)
        .into_iter()
        .enumerate()
        .map(|(j, m)| {
            let machine: u64 = cm.counts.iter().map(|row| row[j]).sum();
            let agreed = cm.counts[j][j];
            ClassScore {
                label: m.label,
                human: m.support,
                machine,
                agreed,
                precision: m.precision,
                precision_interval: wilson(Proportion::new(agreed, machine), DEFAULT_CONFIDENCE),
                recall: m.recall,
                recall_interval: m.recall_interval,
            }
        })
        .collect();
    let baseline = per_class
        .iter()
        .filter(|c| c.human > 0)
        .max_by(|a, b| a.human.cmp(&b.human).then(b.label.cmp(&a.label)))
        .map(|c| Baseline { label: c.label.clone(), count: c.human, agreement: Proportion::new(c.human, cm.total()).rate() });
    let mut notes = Vec::new();
    if key.rules_digest != rules_digest {
        notes.push(format!(
            "the key was made with rules {}, these are {}: labels and their order come from the rules in force",
            short(&key.rules_digest),
            short(rules_digest)
        ));
    }
    if key.per_class > 0 {
        notes.push(format!(
            "the sample is stratified (up to {} per machine class{}), so these figures describe the sample, not the run's mix of classes",
            key.per_class,
            if key.passed > 0 { format!(", {} passed", key.passed) } else { String::new() }
        ));
    }
    if !kappa.defined {
        notes.push("kappa is undefined: no items, or both raters gave one and the same label to every item".into());
    }
    Score {
        confidence: DEFAULT_CONFIDENCE,
        rows: sheet.len(),
        scored: pairs.len(),
        unlabelled,
        outside_taxonomy: outside,
        mismatched,
        missing_items,
        strength: landis_koch(kappa.kappa).to_string(),
        strength_interval: (landis_koch(kappa.interval.lo).to_string(), landis_koch(kappa.interval.hi).to_string()),
        confusion: cm,
        agreement,
        kappa,
        baseline,
        per_class,
        notes,
    }
}

fn short(d: &str) -> &str {
    d.get(..12).unwrap_or(d)
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn ci(i: Interval) -> String {
    format!("[{:.1}, {:.1}]", 100.0 * i.lo, 100.0 * i.hi)
}

/// The kappa sentence shared by the table and Markdown forms.
fn kappa_sentence(s: &Score) -> String {
    let k = &s.kappa;
    if !k.defined {
        return "undefined (see notes)".into();
    }
    let (lo, hi) = &s.strength_interval;
    let span = if lo == hi { format!("the whole interval is {lo}") } else { format!("the interval reaches from {lo} to {hi}") };
    format!(
        "{:.3} [{:.3}, {:.3}] ({:.0}% interval, Fleiss–Cohen–Everitt SE {:.3}): {} agreement beyond chance (Landis–Koch); {span}",
        k.kappa,
        k.interval.lo,
        k.interval.hi,
        100.0 * s.confidence,
        k.se,
        s.strength
    )
}

fn baseline_sentence(s: &Score) -> String {
    match &s.baseline {
        Some(b) => format!(
            "a labeller who always said `{}` (the most common human label, {} of {}) would agree {} of the time, with kappa 0",
            b.label,
            b.count,
            s.agreement.n,
            pct(b.agreement)
        ),
        None => "no labelled items".into(),
    }
}

fn summary_line(s: &Score) -> String {
    let mut line = format!("{} rows, {} scored", s.rows, s.scored);
    if !s.unlabelled.is_empty() {
        let _ = write!(line, ", {} without a label (skipped)", s.unlabelled.len());
    }
    if !s.outside_taxonomy.is_empty() {
        let _ = write!(line, ", {} with a label outside the taxonomy (listed below, not scored)", s.outside_taxonomy.len());
    }
    if !s.mismatched.is_empty() {
        let _ = write!(line, ", {} that do not match the key (listed below)", s.mismatched.len());
    }
    if !s.missing_items.is_empty() {
        let _ = write!(line, "; {} key items have no row", s.missing_items.len());
    }
    line
}

/// Terminal tables (comfy-table).
#[must_use]
pub fn render_table(s: &Score) -> String {
    use comfy_table::{CellAlignment, Table, presets};
    let t = |x: &str| sanitize::terminal(x).into_owned();
    let mut out = format!("coroner spotcheck score: {}\n\n", t(&summary_line(s)));
    let cm = &s.confusion;
    out.push_str("Confusion matrix (rows: human label, columns: machine's primary class)\n");
    let mut m = Table::new();
    m.load_preset(presets::UTF8_FULL_CONDENSED);
    let mut header = vec!["human \\ machine".to_string()];
    header.extend(cm.labels.iter().map(|l| t(l)));
    header.push("total".into());
    m.set_header(header);
    for (i, l) in cm.labels.iter().enumerate() {
        let mut row = vec![t(l)];
        row.extend(cm.counts[i].iter().map(ToString::to_string));
        row.push(cm.counts[i].iter().sum::<u64>().to_string());
        m.add_row(row);
    }
    let mut total = vec!["total".to_string()];
    total.extend((0..cm.labels.len()).map(|j| cm.counts.iter().map(|r| r[j]).sum::<u64>().to_string()));
    total.push(cm.total().to_string());
    m.add_row(total);
    for c in 1..=cm.labels.len() + 1 {
        if let Some(col) = m.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let _ = writeln!(out, "{m}\n");
    let a = &s.agreement;
    let _ = writeln!(out, "Agreement     {}/{} = {} {} ({:.0}% Wilson)", a.agreed, a.n, pct(a.rate), ci(a.interval), 100.0 * s.confidence);
    let _ = writeln!(out, "Cohen's kappa {}", kappa_sentence(s));
    let _ = writeln!(out, "Baseline      {}\n", t(&baseline_sentence(s)));
    let mut p = Table::new();
    p.load_preset(presets::UTF8_FULL_CONDENSED);
    p.set_header(["class", "human", "machine", "agreed", "precision", "95% CI", "recall", "95% CI"]);
    for c in &s.per_class {
        p.add_row([
            t(&c.label),
            c.human.to_string(),
            c.machine.to_string(),
            c.agreed.to_string(),
            if c.machine == 0 { "-".into() } else { pct(c.precision) },
            if c.machine == 0 { "-".into() } else { ci(c.precision_interval) },
            if c.human == 0 { "-".into() } else { pct(c.recall) },
            if c.human == 0 { "-".into() } else { ci(c.recall_interval) },
        ]);
    }
    for c in 1..8 {
        if let Some(col) = p.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let _ = writeln!(
        out,
        "Per class (precision: of the machine's, how many the human agreed with; recall: of the human's, how many the machine found)\n{p}"
    );
    let listed = |out: &mut String, title: &str, rows: &[RowNote]| {
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{title}");
        for r in rows {
            let _ = writeln!(out, "  row {} (item {}): `{}`: {}", r.row, t(&r.item), t(&r.label), t(&r.problem));
        }
    };
    listed(&mut out, "Labels outside the taxonomy (not scored)", &s.outside_taxonomy);
    listed(&mut out, "Rows that do not match the key (not scored)", &s.mismatched);
    if !s.unlabelled.is_empty() {
        let rows: Vec<String> = s.unlabelled.iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "\nRows without a label (skipped): {}", rows.join(", "));
    }
    if !s.notes.is_empty() {
        let _ = writeln!(out, "\nNotes");
        for n in &s.notes {
            let _ = writeln!(out, "  - {}", t(n));
        }
    }
    out
}

/// Markdown tables.
#[must_use]
pub fn render_markdown(s: &Score) -> String {
    use sanitize::markdown_line as md;
    let mut out = format!("## Spot-check agreement\n\n{}\n\n", md(&summary_line(s)));
    let cm = &s.confusion;
    out.push_str("### Confusion matrix (rows: human label, columns: machine's primary class)\n\n");
    let _ = writeln!(out, "| human \\\\ machine | {} | total |", cm.labels.iter().map(|l| md(l)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|---|{}---:|", "---:|".repeat(cm.labels.len()));
    for (i, l) in cm.labels.iter().enumerate() {
        let cells: Vec<String> = cm.counts[i].iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "| {} | {} | {} |", md(l), cells.join(" | "), cm.counts[i].iter().sum::<u64>());
    }
    let totals: Vec<String> = (0..cm.labels.len()).map(|j| cm.counts.iter().map(|r| r[j]).sum::<u64>().to_string()).collect();
    let _ = writeln!(out, "| total | {} | {} |\n", totals.join(" | "), cm.total());
    let a = &s.agreement;
    let _ = writeln!(
        out,
        "- **Agreement:** {}/{} = {} {} ({:.0}% Wilson)",
        a.agreed,
        a.n,
        md(&pct(a.rate)),
        md(&ci(a.interval)),
        100.0 * s.confidence
    );
    let _ = writeln!(out, "- **Cohen's kappa:** {}", md(&kappa_sentence(s)));
    let _ = writeln!(out, "- **Baseline:** {}\n", md(&baseline_sentence(s)));
    out.push_str("### Per class\n\n| class | human | machine | agreed | precision | 95% CI | recall | 95% CI |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for c in &s.per_class {
        let (pp, pc) = if c.machine == 0 { ("-".into(), "-".into()) } else { (pct(c.precision), ci(c.precision_interval)) };
        let (rp, rc) = if c.human == 0 { ("-".into(), "-".into()) } else { (pct(c.recall), ci(c.recall_interval)) };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            md(&c.label),
            c.human,
            c.machine,
            c.agreed,
            md(&pp),
            md(&pc),
            md(&rp),
            md(&rc)
        );
    }
    for (title, rows) in
        [("Labels outside the taxonomy (not scored)", &s.outside_taxonomy), ("Rows that do not match the key (not scored)", &s.mismatched)]
    {
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {title}\n");
        for r in rows {
            let _ = writeln!(out, "- row {} (item {}): {}: {}", r.row, md(&r.item), md(&r.label), md(&r.problem));
        }
    }
    if !s.unlabelled.is_empty() {
        let rows: Vec<String> = s.unlabelled.iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "\nRows without a label (skipped): {}", rows.join(", "));
    }
    if !s.notes.is_empty() {
        out.push_str("\n### Notes\n\n");
        for n in &s.notes {
            let _ = writeln!(out, "- {}", md(n));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landis_koch_bands() {
        let words: Vec<&str> = [-0.1, 0.0, 0.2, 0.21, 0.4, 0.5, 0.6, 0.7, 0.8, 0.81, 1.0].iter().map(|&k| landis_koch(k)).collect();
        assert_eq!(
            words,
            [
                "poor",
                "slight",
                "slight",
                "fair",
                "fair",
                "moderate",
                "moderate",
                "substantial",
                "substantial",
                "almost perfect",
                "almost perfect"
            ]
        );
    }
}
