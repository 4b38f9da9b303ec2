//! A stratified, blind sample of classified trajectories for a person to label.
//!
//! Up to N failed trajectories per primary class (and optionally N that passed) are drawn with
//! a seeded ChaCha8 generator and listed in random order. The sheet says where to look (the
//! evidence steps, without which class they support, and a `coroner show --blind` command),
//! never what the machine said; the machine's labels go to a separate key. Strata are sorted
//! by trajectory id before shuffling, so one seed and the same inputs give the same bytes on
//! every machine, whatever the thread count.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::labels::PASSED;
use crate::model::{OutcomeStatus, Verdict};
use crate::report::sanitize;

/// How many to draw, and the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleOptions {
    /// Failed trajectories per primary class, at most.
    pub per_class: usize,
    /// Passed trajectories, at most.
    pub passed: usize,
    pub seed: u64,
}

/// One stratum: how many the inputs held and how many were drawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stratum {
    /// A primary class, or `passed`.
    pub class: String,
    pub population: usize,
    pub sampled: usize,
}

/// Draws the sample: indices into `vs`, in the order the sheet lists them.
///
/// Strata follow `precedence` (a primary class outside it comes last, by name); each is
/// sorted by trajectory id, shuffled, and cut to the size asked; then the union is shuffled.
#[must_use]
pub fn draw(vs: &[Verdict], precedence: &[String], o: &SampleOptions) -> (Vec<usize>, Vec<Stratum>) {
    let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
    let mut strata: BTreeMap<(usize, String), Vec<usize>> = BTreeMap::new();
    for (i, v) in vs.iter().enumerate() {
        let key = match (&v.primary, v.outcome) {
            (Some(p), _) => (precedence.iter().position(|c| c == p).unwrap_or(precedence.len()), p.clone()),
            (None, OutcomeStatus::Passed) => (usize::MAX, PASSED.to_string()),
            (None, _) => continue,
        };
        strata.entry(key).or_default().push(i);
    }
    let mut chosen = Vec::new();
    let mut report = Vec::new();
    for ((_, class), mut members) in strata {
        let want = if class == PASSED { o.passed } else { o.per_class };
        members.sort_by(|&a, &b| vs[a].trajectory_id.cmp(&vs[b].trajectory_id).then(vs[a].source.cmp(&vs[b].source)).then(a.cmp(&b)));
        members.shuffle(&mut rng);
        members.truncate(want);
        report.push(Stratum { class, population: 0, sampled: members.len() });
        chosen.extend(members);
    }
    // Population counts after the loop (the members were consumed).
    for s in &mut report {
        s.population = vs
            .iter()
            .filter(|v| match &v.primary {
                Some(p) => *p == s.class,
                None => s.class == PASSED && v.outcome == OutcomeStatus::Passed,
            })
            .count();
    }
    report.retain(|s| s.class != PASSED || o.passed > 0);
    chosen.shuffle(&mut rng);
    (chosen, report)
}

/// The evidence steps of a verdict, all classes and flags together, sorted.
#[must_use]
pub fn evidence_steps(v: &Verdict) -> Vec<u32> {
    let mut s: Vec<u32> = v.evidence.iter().flat_map(|e| e.steps.iter().copied()).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Where the sheet sends the labeller: the evidence steps, and the run's last step when some
/// evidence rests on its end status rather than on steps. Without the last step, an empty cell
/// would tell the labeller the machine said infrastructure or budget.
#[must_use]
pub fn sheet_steps(v: &Verdict) -> Vec<u32> {
    let mut s = evidence_steps(v);
    if v.evidence.iter().any(|e| e.steps.is_empty())
        && let Some(last) = v.mechanics.steps.checked_sub(1)
    {
        s.push(last);
        s.sort_unstable();
        s.dedup();
    }
    s
}

/// Columns of the sheet, in order. None of them says what the machine decided.
pub const SHEET_COLUMNS: &[&str] = &["item", "trajectory_id", "task_id", "file", "steps", "show", "human_label", "notes"];

/// One row of the sheet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SheetRow {
    pub item: u32,
    pub trajectory_id: String,
    pub task_id: String,
    pub file: String,
    pub steps: Vec<u32>,
    pub show: String,
}

/// The sheet as CSV. Text from transcripts (task ids, paths) is sanitized for terminals, and a
/// cell a spreadsheet would read as a formula (`=`, `+`, `-`, `@`) is prefixed with `'`.
#[must_use]
pub fn sheet_csv(rows: &[SheetRow]) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    let _ = w.write_record(SHEET_COLUMNS);
    for r in rows {
        let steps = r.steps.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ");
        let _ = w.write_record([
            r.item.to_string(),
            cell(&r.trajectory_id),
            cell(&r.task_id),
            cell(&r.file),
            steps,
            cell(&r.show),
            String::new(),
            String::new(),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A CSV cell safe in a terminal and in a spreadsheet.
#[must_use]
pub fn cell(s: &str) -> String {
    let s = sanitize::terminal(s);
    if s.starts_with(['=', '+', '-', '@', '\t']) { format!("'{s}") } else { s.into_owned() }
}

/// Undoes [`cell`]'s formula guard (for comparing a sheet's id with the key's).
#[must_use]
pub fn uncell(s: &str) -> &str {
    match s.strip_prefix('\'') {
        Some(rest) if rest.starts_with(['=', '+', '-', '@', '\t']) => rest,
        _ => s,
    }
}

/// The machine's labels for the sheet, and what the sample was drawn from.
///
/// # Format
///
/// JSON, written by `coroner spotcheck sample --key` and read by `spotcheck score`. `items`
/// lists every sheet item with the machine's verdict; `strata` how many trajectories each
/// primary class had and how many were drawn. No timestamp: the same seed and inputs give
/// the same bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Key {
    pub coroner_version: String,
    pub seed: u64,
    pub per_class: usize,
    pub passed: usize,
    /// sha256 of the rules that classified (`Rules::digest`).
    pub rules_digest: String,
    /// The inputs as given on the command line.
    pub inputs: Vec<String>,
    pub strata: Vec<Stratum>,
    pub items: Vec<KeyItem>,
}

/// One item of the key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyItem {
    pub item: u32,
    pub trajectory_id: String,
    pub task_id: String,
    pub outcome: OutcomeStatus,
    /// The machine's primary class; absent for a trajectory that passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
    #[serde(default)]
    pub classes: Vec<String>,
    #[serde(default)]
    pub flags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl KeyItem {
    /// The label the machine gave: its primary class, or `passed`.
    #[must_use]
    pub fn machine_label(&self) -> &str {
        self.primary.as_deref().unwrap_or(PASSED)
    }

    #[must_use]
    pub fn of(item: u32, v: &Verdict) -> Self {
        Self {
            item,
            trajectory_id: v.trajectory_id.clone(),
            task_id: v.task_id.clone(),
            outcome: v.outcome,
            primary: v.primary.clone(),
            classes: v.classes.clone(),
            flags: v.flags.clone(),
            source: v.source.clone(),
        }
    }
}

/// The key as pretty JSON with a final newline.
#[must_use]
pub fn key_json(k: &Key) -> String {
    serde_json::to_string_pretty(k).unwrap_or_default() + "\n"
}

/// A word for a POSIX shell: as is when it holds only safe characters, else single-quoted.
#[must_use]
pub fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c)) {
        return s.to_string();
    }
    let mut out = String::from("'");
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// `coroner show INPUT --id ID --blind` plus the options the sample was classified with.
#[must_use]
pub fn show_command(input: &str, id: &str, extra: &[String]) -> String {
    let mut s = format!("coroner show {} --id {} --blind", shell_word(input), shell_word(id));
    for e in extra {
        let _ = write!(s, " {}", shell_word(e));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_and_words_are_safe() {
        assert_eq!(cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(uncell(&cell("-x")), "-x");
        assert_eq!(uncell("'plain"), "'plain");
        assert_eq!(cell("a\x1b[2Jb"), "a␛[2Jb");
        assert_eq!(shell_word("runs/a b"), "'runs/a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("calc-add#47f4"), "'calc-add#47f4'");
        assert_eq!(shell_word("samples/doubles"), "samples/doubles");
    }
}
