//! One pass over an arm's verdicts that keeps everything the report, the comparison and the
//! gates read: counts, per-task tallies, a histogram of steps, exact sums. It is why a report
//! of a dataset of millions of verdicts holds no verdict: memory grows with the tasks and the
//! distinct step counts, not with the trajectories. A study of transcripts is tallied the same
//! way (and keeps the positions behind each count, for the HTML lists), so both give the same
//! tables by construction.
//!
//! Every result is independent of the order verdicts arrive in: counts, maps, a histogram, and
//! sums of floats that are exact (correctly rounded, `fsum`), so shards read in any order, or
//! on any number of threads, give the same bytes.

use std::collections::BTreeMap;

use fsum::FSum;

use crate::model::{Budget, OutcomeStatus, TerminationKind, Verdict};
use crate::stats::{ClassCounts, TaskTrials};
use crate::util::snake;

/// A count and, when the tally records them, the positions of the verdicts counted.
#[derive(Debug, Clone, Default)]
pub struct Count {
    pub n: u64,
    pub members: Vec<usize>,
}

/// One task's verdicts in one arm.
#[derive(Debug, Clone, Default)]
pub struct TaskTally {
    pub trials: u64,
    pub passed: u64,
    /// The matrix's label of each trial: its primary class, else its outcome.
    pub labels: BTreeMap<String, u64>,
    /// Trials neither lost to infrastructure nor of unknown outcome.
    pub evaluated: u64,
    pub evaluated_passed: u64,
    /// The comparison's label of each evaluated trial: its primary class, else `passed` or
    /// `unknown`.
    pub evaluated_labels: BTreeMap<String, u64>,
}

impl TaskTally {
    /// The matrix's label: `passed` when most trials passed, else the commonest label (ties to
    /// the first by name).
    #[must_use]
    pub fn label(&self) -> String {
        majority(self.passed, self.trials, &self.labels)
    }

    /// The comparison's label, over the evaluated trials.
    #[must_use]
    pub fn evaluated_label(&self) -> String {
        majority(self.evaluated_passed, self.evaluated, &self.evaluated_labels)
    }

    /// Most evaluated trials passed.
    #[must_use]
    pub fn evaluated_pass(&self) -> bool {
        self.evaluated_passed * 2 > self.evaluated
    }
}

fn majority(passed: u64, n: u64, labels: &BTreeMap<String, u64>) -> String {
    if passed * 2 > n {
        return "passed".into();
    }
    labels.iter().max_by_key(|(k, c)| (**c, std::cmp::Reverse(*k))).map(|(k, _)| k.clone()).unwrap_or_default()
}

/// Steps per trajectory as a histogram: its quantiles are those of the sorted values.
#[derive(Debug, Clone, Default)]
pub struct Steps(pub BTreeMap<u32, u64>);

impl Steps {
    #[must_use]
    pub fn len(&self) -> u64 {
        self.0.values().sum()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `k`-th smallest value (from 0).
    fn nth(&self, k: u64) -> f64 {
        let mut seen = 0;
        for (v, c) in &self.0 {
            seen += c;
            if k < seen {
                return f64::from(*v);
            }
        }
        0.0
    }

    /// The quantile `p` with linear interpolation between neighbours; 0 when empty.
    #[must_use]
    pub fn quantile(&self, p: f64) -> f64 {
        let n = self.len();
        if n == 0 {
            return 0.0;
        }
        let pos = p * (n - 1) as f64;
        let (lo, hi) = (self.nth(pos.floor() as u64), self.nth(pos.ceil() as u64));
        lo + (hi - lo) * (pos - pos.floor())
    }

    #[must_use]
    pub fn max(&self) -> f64 {
        self.0.keys().next_back().map_or(0.0, |v| f64::from(*v))
    }
}

/// Everything the report reads of one arm.
#[derive(Debug, Clone, Default)]
pub struct ArmTally {
    pub name: String,
    /// Keep the positions behind each count (a study of transcripts, for the HTML lists).
    record: bool,
    pub trials: u64,
    /// The arms row's groups: passed (of those evaluated), failed (classified, not
    /// infrastructure), infrastructure, unknown.
    pub groups: [Count; 4],
    pub evaluated: u64,
    pub tasks: BTreeMap<String, TaskTally>,
    pub steps: Steps,
    pub wall_seconds: FSum,
    pub cost_usd: FSum,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Every verdict by its primary class.
    pub primary: BTreeMap<String, Count>,
    /// Model failures (classified, not infrastructure) by primary class.
    pub failures: ClassCounts,
    /// Worked-then-wrong verdicts by flag.
    pub worked_flags: BTreeMap<String, Count>,
    /// Every verdict by flag.
    pub flags: BTreeMap<String, Count>,
    pub budget_ended: Count,
    pub budget_kinds: BTreeMap<String, u64>,
    pub wall_timeouts: Count,
    /// The most writes to one file: `(writes, task, position)`.
    pub peak_writes: Option<(u32, String, usize)>,
    pub format_errors: u32,
    pub format_recoveries: u32,
    pub format_error_runs: Count,
    pub suspect_calls: u64,
    pub suspect_runs: Count,
    pub command_timeouts: u32,
    pub timeout_runs: Count,
    pub test_edit_runs: Count,
}

/// The group names of [`ArmTally::groups`], in order.
pub const GROUPS: [&str; 4] = ["passed", "failed", "infrastructure", "unknown"];

impl ArmTally {
    /// An empty tally; `record` keeps the positions behind each count.
    #[must_use]
    pub fn new(name: &str, record: bool) -> Self {
        Self { name: name.to_string(), record, ..Self::default() }
    }

    /// The tally of `verdicts`, positions recorded.
    #[must_use]
    pub fn of(name: &str, verdicts: &[Verdict]) -> Self {
        let mut t = Self::new(name, true);
        for (i, v) in verdicts.iter().enumerate() {
            t.add(v, i);
        }
        t
    }

    fn hit(record: bool, c: &mut Count, at: usize) {
        c.n += 1;
        if record {
            c.members.push(at);
        }
    }

    /// Counts `v`, at position `at` of its arm.
    pub fn add(&mut self, v: &Verdict, at: usize) {
        let r = self.record;
        let m = &v.mechanics;
        let infra = v.is_infrastructure();
        let evaluated = !infra && v.outcome != OutcomeStatus::Unknown;
        let passed = v.outcome == OutcomeStatus::Passed;
        self.trials += 1;
        if evaluated && passed {
            Self::hit(r, &mut self.groups[0], at);
        }
        if v.primary.is_some() && !infra {
            Self::hit(r, &mut self.groups[1], at);
            self.failures.failures += 1;
            *self.failures.by_class.entry(v.primary.clone().unwrap_or_default()).or_default() += 1;
        }
        if infra {
            Self::hit(r, &mut self.groups[2], at);
        }
        if v.outcome == OutcomeStatus::Unknown {
            Self::hit(r, &mut self.groups[3], at);
        }
        self.evaluated += u64::from(evaluated);

        let t = self.tasks.entry(v.task_id.clone()).or_default();
        t.trials += 1;
        t.passed += u64::from(passed);
        *t.labels.entry(v.primary.clone().unwrap_or_else(|| v.outcome.as_str().to_string())).or_default() += 1;
        if evaluated {
            t.evaluated += 1;
            t.evaluated_passed += u64::from(passed);
            let label = v.primary.as_deref().unwrap_or(if passed { "passed" } else { "unknown" });
            *t.evaluated_labels.entry(label.to_string()).or_default() += 1;
        }

        *self.steps.0.entry(m.steps).or_default() += 1;
        if let Some(w) = m.wall_seconds {
            self.wall_seconds += w;
        }
        if let Some(c) = m.cost_usd {
            self.cost_usd += c;
        }
        self.prompt_tokens = self.prompt_tokens.saturating_add(m.prompt_tokens.unwrap_or(0));
        self.completion_tokens = self.completion_tokens.saturating_add(m.completion_tokens.unwrap_or(0));

        if let Some(p) = &v.primary {
            Self::hit(r, self.primary.entry(p.clone()).or_default(), at);
        }
        for (i, f) in v.flags.iter().enumerate() {
            if v.flags[..i].contains(f) {
                continue;
            }
            Self::hit(r, self.flags.entry(f.clone()).or_default(), at);
            if v.primary.as_deref() == Some("worked_then_wrong") {
                Self::hit(r, self.worked_flags.entry(f.clone()).or_default(), at);
            }
        }

        if m.termination == TerminationKind::Budget {
            Self::hit(r, &mut self.budget_ended, at);
            *self.budget_kinds.entry(m.budget.map_or_else(|| "unspecified".into(), |b| snake(&b))).or_default() += 1;
        }
        if m.budget == Some(Budget::WallTime) {
            Self::hit(r, &mut self.wall_timeouts, at);
        }
        // The most writes; among equals the task first by name (a fact of the verdicts, not of
        // the order they came in), and of its trials the last (the run the list links).
        let better = match &self.peak_writes {
            None => true,
            Some((w, task, _)) => (m.peak_writes, std::cmp::Reverse(&v.task_id)) >= (*w, std::cmp::Reverse(task)),
        };
        if better {
            self.peak_writes = Some((m.peak_writes, v.task_id.clone(), at));
        }
        self.format_errors = self.format_errors.saturating_add(m.format_errors);
        self.format_recoveries = self.format_recoveries.saturating_add(m.format_recoveries);
        if m.format_errors > 0 {
            Self::hit(r, &mut self.format_error_runs, at);
        }
        let suspect = v.evidence.iter().filter(|e| e.rule == "registry-suspect-call").count() as u64;
        self.suspect_calls += suspect;
        if suspect > 0 {
            Self::hit(r, &mut self.suspect_runs, at);
        }
        self.command_timeouts = self.command_timeouts.saturating_add(m.command_timeouts);
        if m.command_timeouts > 0 {
            Self::hit(r, &mut self.timeout_runs, at);
        }
        if !m.test_files_changed.is_empty() {
            Self::hit(r, &mut self.test_edit_runs, at);
        }
    }

    /// Trials and passes per evaluated task, in task order, when some task was evaluated more
    /// than once: pass@1 is then the mean over tasks, with an interval clustered by task (the
    /// report and the predictions must agree on it).
    #[must_use]
    pub fn clustered_trials(&self) -> Option<Vec<TaskTrials>> {
        let per_task: Vec<&TaskTally> = self.tasks.values().filter(|t| t.evaluated > 0).collect();
        per_task
            .iter()
            .any(|t| t.evaluated > 1)
            .then(|| per_task.iter().map(|t| TaskTrials::new(t.evaluated, t.evaluated_passed)).collect())
    }

    /// Whether positions are kept.
    #[must_use]
    pub fn records(&self) -> bool {
        self.record
    }

    /// A count of verdicts by flag (0 when none carries it).
    #[must_use]
    pub fn flag(&self, flag: &str) -> &Count {
        static NONE: Count = Count { n: 0, members: Vec::new() };
        self.flags.get(flag).unwrap_or(&NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(task: &str, outcome: OutcomeStatus, primary: Option<&str>) -> Verdict {
        Verdict {
            trajectory_id: task.into(),
            task_id: task.into(),
            arm: None,
            trial: 1,
            harness: "h".into(),
            model: None,
            outcome,
            primary: primary.map(String::from),
            classes: Vec::new(),
            flags: Vec::new(),
            mechanics: crate::model::Mechanics::default(),
            registry_source: "declared".into(),
            reason: None,
            evidence: Vec::new(),
            source: None,
        }
    }

    #[test]
    fn quantiles_of_the_histogram_are_those_of_the_sorted_values() {
        let values = [3u32, 9, 1, 4, 4, 10, 2];
        let mut s = Steps::default();
        for v in values {
            *s.0.entry(v).or_default() += 1;
        }
        let mut sorted: Vec<f64> = values.iter().map(|v| f64::from(*v)).collect();
        sorted.sort_by(f64::total_cmp);
        for p in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let pos = p * (sorted.len() - 1) as f64;
            let (lo, hi) = (sorted[pos.floor() as usize], sorted[pos.ceil() as usize]);
            assert_eq!(s.quantile(p), lo + (hi - lo) * (pos - pos.floor()), "p = {p}");
        }
        assert_eq!(s.quantile(0.5), 4.0);
        assert_eq!(s.max(), 10.0);
        assert_eq!(Steps::default().quantile(0.5), 0.0);
    }

    #[test]
    fn the_sums_do_not_depend_on_the_order() {
        let costs = [0.1, 1e16, 0.3, -1e16, 0.2, 1e-9];
        let sum = |order: &[usize]| {
            let mut t = ArmTally::new("a", false);
            for &i in order {
                let mut v = verdict(&format!("t{i}"), OutcomeStatus::Failed, None);
                v.mechanics.cost_usd = Some(costs[i]);
                t.add(&v, i);
            }
            t.cost_usd.value()
        };
        let forward = sum(&[0, 1, 2, 3, 4, 5]);
        assert_eq!(forward.to_bits(), sum(&[5, 4, 3, 2, 1, 0]).to_bits());
        assert_eq!(forward.to_bits(), sum(&[3, 0, 5, 1, 4, 2]).to_bits());
        assert!((forward - 0.600_000_001).abs() < 1e-12, "{forward}");
    }

    #[test]
    fn labels_and_groups_follow_the_verdicts() {
        let v = verdict;
        let vs = [
            v("x", OutcomeStatus::Failed, Some("early_resignation")),
            v("x", OutcomeStatus::Failed, Some("infrastructure")),
            v("x", OutcomeStatus::Passed, None),
            v("y", OutcomeStatus::Unknown, None),
        ];
        let t = ArmTally::of("a", &vs);
        assert_eq!(t.groups.iter().map(|g| g.members.clone()).collect::<Vec<_>>(), vec![vec![2], vec![0], vec![1], vec![3]]);
        assert_eq!(t.evaluated, 2);
        let x = &t.tasks["x"];
        // Two of three trials did not pass: the matrix names the commonest failure (a tie, by name).
        assert_eq!(x.label(), "early_resignation");
        // Of the evaluated two, one passed: no majority either way.
        assert_eq!((x.evaluated, x.evaluated_passed, x.evaluated_label()), (2, 1, "early_resignation".to_string()));
        assert_eq!(t.tasks["y"].label(), "unknown");
        assert_eq!(t.failures.failures, 1);
        assert_eq!(t.clustered_trials().map(|c| c.len()), Some(1));
    }
}
