//! The rules: from a trajectory, its mechanics and its registry, which classes and flags hold,
//! each with evidence that points at steps and quotes them.

use std::collections::BTreeSet;

use super::actions::{Action, actions};
use super::changes::{self, Changes};
use super::dialogue;
use super::mechanics::{self, final_reply, final_text};
use super::oracle::{LoadedRegistry, Oracle};
use crate::model::{Evidence, FinalMessage, Mechanics, OutcomeStatus, Role, TerminationKind, Trajectory, Verdict};
use crate::registry::Knowledge;
use crate::rules::Rules;
use crate::rules::profile::Profile;

/// Settings that are not rules: limits from a study file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// The configured step limit, when known (infers budget exhaustion without a status).
    pub step_limit: Option<u32>,
    /// The configured wall-clock limit, in seconds; compared with `usage.wall_seconds`.
    pub time_limit_seconds: Option<f64>,
    /// The configured cost limit, in US dollars; compared with `usage.cost_usd`.
    pub cost_limit_usd: Option<f64>,
    /// The configured token limit; compared with prompt + completion tokens.
    pub token_limit: Option<u64>,
}

/// A classifier with its rules and registries loaded once.
pub struct Classifier {
    pub rules: Rules,
    pub registries: Vec<LoadedRegistry>,
    pub options: Options,
}

/// Longest excerpt quoted as evidence.
const EXCERPT: usize = 160;
/// Consecutive identical actions that count as a loop.
const LOOP_RUN: u32 = 3;
/// Command timeouts in a row at the end that count as a budget.
const TIMEOUT_RUN: usize = 3;

impl Classifier {
    #[must_use]
    pub fn new(rules: Rules, registries: Vec<LoadedRegistry>, options: Options) -> Self {
        Self { rules, registries, options }
    }

    /// Classifies one trajectory.
    #[must_use]
    pub fn classify(&self, t: &Trajectory) -> Verdict {
        let p = self.rules.profile_for_record(&t.harness, &t.provenance.adapter);
        let oracle = Oracle::for_trajectory(t, p, &self.registries);
        let acts = actions(t, p);
        let changes = changes::analyse(&acts, t.submission.as_deref(), |f| p.test_files.is_match(f) || p.doc_files.is_match(f));
        let mut f = Findings::default();
        let unknown = tool_findings(t, &acts, &oracle, &mut f);
        let mut m = mechanics::compute(t, &acts, &changes, p, unknown);
        let failed = matches!(t.outcome.status, OutcomeStatus::Failed | OutcomeStatus::Partial | OutcomeStatus::Errored);
        let limits = Options { step_limit: self.options.step_limit.or(p.step_limit), ..self.options.clone() };
        // A log cut on an unanswered call when the run had used its configured limit was cut by
        // the limit: the interpretation, which does not see limits given on the command line,
        // could only call it truncated.
        if t.termination.rule.as_deref() == Some(crate::model::TRUNCATED_LOG) && consumed_limit(t, &m, &limits).is_some() {
            m.termination = TerminationKind::Unknown;
        }

        flags(t, &acts, &m, &mut f);
        if failed {
            infrastructure(t, &acts, &m, p, &mut f);
            tests_broken_in_image(t, &acts, &m, p, &mut f);
            budget(t, &acts, &m, p, &limits, &mut f);
            plan(t, &acts, &m, p, &mut f);
            resignation(t, &acts, &changes, &m, p, &mut f);
            worked(t, &acts, &changes, &m, p, &mut f);
            if f.classes.is_empty() {
                worked_unseen(t, &m, &mut f);
            }
        } else {
            // Hallucination and resignation describe failures only.
            f.classes.clear();
        }
        let mut classes: Vec<String> = f.classes.iter().cloned().collect();
        classes.sort_by_key(|c| self.rules.taxonomy.rank(c));
        let mut reason = None;
        if failed && classes.is_empty() {
            classes.push("unclassified".into());
            reason = Some(unclassified_reason(t, &m, &changes, &oracle));
        }
        if !failed {
            f.evidence.retain(|e| !self.rules.taxonomy.precedence.contains(&e.supports));
        }
        let primary = classes.first().cloned().filter(|_| failed);
        // A class's sub-flags describe it only when it is the run's primary class.
        let owns = |flag: &str| match flag {
            "unverified" | "edited_tests" => primary.as_deref() == Some("worked_then_wrong"),
            "regressed" | "false_done" => matches!(primary.as_deref(), Some("worked_then_wrong" | "early_resignation")),
            _ => true,
        };
        f.flags.retain(|fl| owns(fl));
        f.evidence.retain(|e| owns(&e.supports));
        let mut evidence = f.evidence;
        evidence.sort_by(|a, b| {
            let rank = |e: &Evidence| self.rules.taxonomy.precedence.iter().position(|c| *c == e.supports).unwrap_or(usize::MAX);
            rank(a).cmp(&rank(b)).then_with(|| a.rule.cmp(&b.rule)).then_with(|| a.steps.cmp(&b.steps))
        });
        Verdict {
            trajectory_id: t.id.clone(),
            task_id: t.task_id.clone(),
            arm: t.arm.clone(),
            trial: t.trial,
            harness: t.harness.clone(),
            model: t.model.clone(),
            outcome: t.outcome.status,
            primary,
            classes: if failed { classes } else { Vec::new() },
            flags: f.flags.into_iter().collect(),
            mechanics: m,
            registry_source: oracle.source.clone(),
            reason,
            evidence,
            source: t.provenance.files.first().map(|f| f.path.clone()),
        }
    }
}

#[derive(Default)]
struct Findings {
    classes: BTreeSet<String>,
    flags: BTreeSet<String>,
    evidence: Vec<Evidence>,
}

impl Findings {
    fn class(&mut self, class: &str, e: Evidence) {
        self.classes.insert(class.to_string());
        self.evidence.push(e);
    }

    fn flag(&mut self, flag: &str, e: Evidence) {
        self.flags.insert(flag.to_string());
        self.evidence.push(e);
    }
}

/// Evidence on steps, quoting `excerpt` (which must be a substring of one of the step's
/// evidence texts).
fn on_steps(t: &Trajectory, rule: &str, supports: &str, steps: Vec<u32>, excerpt: &str) -> Evidence {
    let span = steps.first().and_then(|s| t.steps.get(*s as usize)).and_then(|s| s.source_span);
    Evidence { rule: rule.into(), supports: supports.into(), steps, excerpt: excerpt.to_string(), detail: None, source_span: span }
}

/// Evidence resting on the run's end status rather than on steps; it points at the status's
/// bytes when the ingest found them.
fn on_status(t: &Trajectory, rule: &str, supports: &str, excerpt: &str, detail: Option<String>) -> Evidence {
    let source_span = t.termination.span;
    Evidence { rule: rule.into(), supports: supports.into(), steps: Vec::new(), excerpt: excerpt.to_string(), detail, source_span }
}

/// A window of `text` around `range`, at most [`EXCERPT`] bytes, on character boundaries.
fn window(text: &str, range: std::ops::Range<usize>) -> &str {
    let mut start = range.start.saturating_sub(40);
    let mut end = (range.end + 80).min(text.len()).min(start + EXCERPT).max(range.end.min(text.len()));
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    text[start..end].trim()
}

/// The start of a text, as an excerpt.
fn head(text: &str) -> &str {
    let t = text.trim();
    let mut end = t.len().min(EXCERPT);
    while !t.is_char_boundary(end) {
        end -= 1;
    }
    &t[..end]
}

fn status_excerpt(t: &Trajectory) -> Option<&str> {
    t.termination.raw.as_deref().or(t.termination.detail.as_deref()).map(head)
}

/// Unknown-tool calls: hallucinations (rejected) and registry suspects (executed). Returns the
/// number of calls the registry does not know or the harness rejected.
fn tool_findings(t: &Trajectory, acts: &[Action<'_>], oracle: &Oracle<'_>, f: &mut Findings) -> u32 {
    // One piece of evidence per rule and tool name, pointing at its first few calls:
    // (rule, tool) -> (steps, calls, detail).
    type Found<'a> = std::collections::BTreeMap<(&'static str, &'a str), (Vec<u32>, u32, Option<String>)>;
    let mut found: Found<'_> = Found::new();
    let mut unknown = 0u32;
    for a in acts {
        let knowledge = oracle.knows(a.name);
        if matches!(knowledge, Knowledge::Dynamic(_)) {
            continue;
        }
        let rejected = a.result.is_some_and(|r| r.unknown_tool.is_some());
        let mut steps = vec![a.at.step];
        if let Some(s) = a.result_step.filter(|s| *s != a.at.step) {
            steps.push(s);
        }
        let rule = match &knowledge {
            Knowledge::Unknown { near_miss } => {
                unknown += 1;
                if rejected {
                    let d = match near_miss {
                        Some(n) => format!("not in {} (near miss of `{n}`)", oracle.source),
                        None => format!("not in {}", oracle.source),
                    };
                    Some(("hallucinated-unknown-tool", d))
                } else if a.ok == Some(true) {
                    Some((
                        "registry-suspect-call",
                        format!("not in {}, yet it executed without error: the registry is probably incomplete", oracle.source),
                    ))
                } else {
                    None
                }
            }
            Knowledge::Known | Knowledge::Dynamic(_) => {
                // The harness's own rejection decides when no real list contradicts it.
                let list_knows = oracle.has_list() && !oracle.source.starts_with("profile:");
                if rejected && !list_knows {
                    unknown += 1;
                    let d = a
                        .result
                        .and_then(|r| r.unknown_tool.clone())
                        .unwrap_or_else(|| format!("rejected by the harness; judged by {}", oracle.source));
                    Some(("hallucinated-rejected-by-harness", d))
                } else {
                    None
                }
            }
        };
        if let Some((rule, detail)) = rule {
            let entry = found.entry((rule, a.name)).or_insert_with(|| (Vec::new(), 0, Some(detail)));
            entry.1 += 1;
            if entry.0.len() < 6 {
                entry.0.extend(steps);
            }
        }
    }
    for ((rule, name), (mut steps, count, detail)) in found {
        steps.sort_unstable();
        steps.dedup();
        let supports = if rule == "registry-suspect-call" { "registry_suspect" } else { "hallucinated_tool" };
        let mut e = on_steps(t, rule, supports, steps, name);
        e.detail = detail.map(|d| if count > 1 { format!("{d}; {count} calls") } else { d });
        if supports == "registry_suspect" {
            f.flag(supports, e);
        } else {
            f.class(supports, e);
        }
    }
    unknown
}

fn flags(t: &Trajectory, acts: &[Action<'_>], m: &Mechanics, f: &mut Findings) {
    if m.longest_repeat >= LOOP_RUN {
        // The first run of that length.
        let mut run = 1usize;
        for i in 1..acts.len() {
            run = if acts[i].key == acts[i - 1].key { run + 1 } else { 1 };
            if run == m.longest_repeat as usize {
                let first = &acts[i + 1 - run];
                let steps: Vec<u32> = acts[i + 1 - run..=i].iter().map(|a| a.at.step).collect::<BTreeSet<_>>().into_iter().collect();
                let excerpt = first.command.as_deref().map_or(first.name, head);
                let mut e = on_steps(t, "flag-looping", "looping", steps, excerpt);
                e.detail = Some(format!("the same action {} times in a row", m.longest_repeat));
                f.flag("looping", e);
                break;
            }
        }
    }
    if t.outcome.status == OutcomeStatus::Passed && m.termination == TerminationKind::Budget {
        let ex = status_excerpt(t).unwrap_or("");
        f.flag(
            "passed_after_timeout",
            on_status(
                t,
                "flag-passed-after-timeout",
                "passed_after_timeout",
                ex,
                m.budget.map(|b| format!("budget: {}", crate::util::snake(&b))),
            ),
        );
    }
    if m.format_errors > 0 {
        let steps: Vec<u32> = t.steps.iter().filter(|s| s.format_error.is_some()).map(|s| s.index).take(5).collect();
        let first = &t.steps[steps[0] as usize];
        let e = on_steps(t, "flag-format-errors", "format_errors", steps, head(first.format_error.as_deref().unwrap_or("")));
        f.flag("format_errors", e);
    }
}

fn infrastructure(t: &Trajectory, acts: &[Action<'_>], m: &Mechanics, p: &Profile, f: &mut Findings) {
    if m.termination == TerminationKind::Infrastructure {
        let ex = status_excerpt(t).unwrap_or("");
        // What the interpretation found beyond the status (a stall behind a clock) is what a
        // reader checks; the field the status came from otherwise.
        let detail = match (&t.termination.rule, &t.termination.detail) {
            (Some(r), Some(d)) if r == crate::model::STALLED_PAST_CLOCK || r == crate::model::TRUNCATED_LOG => Some(d.clone()),
            _ => t.termination.source.clone(),
        };
        // A truncated log has no status to point at: its last step is what a reader checks.
        let cut = t.termination.rule.as_deref() == Some(crate::model::TRUNCATED_LOG);
        let e = match final_reply(t).filter(|_| cut) {
            Some(step) => {
                let mut e = on_steps(
                    t,
                    "infra-termination",
                    "infrastructure",
                    vec![step.index],
                    step.tool_calls.first().map_or("", |c| c.name.as_str()),
                );
                e.detail = detail;
                e
            }
            None => on_status(t, "infra-termination", "infrastructure", ex, detail),
        };
        f.class("infrastructure", e);
    }
    // A harness that crashed on its own bug ended the run from outside the model as much as a
    // failed container did.
    if m.termination == TerminationKind::HarnessError {
        let ex = status_excerpt(t).unwrap_or("");
        let mut e = on_status(t, "infra-termination", "infrastructure", ex, t.termination.source.clone());
        e.detail =
            Some(format!("the harness itself failed{}", t.termination.source.as_ref().map(|s| format!(" ({s})")).unwrap_or_default()));
        f.class("infrastructure", e);
    }
    if let Some(u) = dialogue::ended_on_consent(t, acts, p) {
        let mut e = on_steps(t, "infra-user-ended-on-consent", "infrastructure", vec![u.index], head(&u.text));
        e.detail = Some("the simulated user ended the episode in the turn it consented: the agent never had a turn to act".into());
        f.class("infrastructure", e);
    }
    if let Some((name, file)) = broken_verifier(t, acts, p) {
        // The verdict's own test list, not the end status, is the evidence here.
        let detail = format!("the verifier could not collect its own tests ({file}): no work of the agent's could pass them");
        let e = Evidence { source_span: None, ..on_status(t, "infra-verifier-broken", "infrastructure", name, Some(detail)) };
        f.class("infrastructure", e);
    }
    if let Some(e) = super::empty_inputs::empty_inputs(t, acts, p) {
        let mut ev = on_steps(t, "infra-empty-inputs", "infrastructure", vec![e.step], head(e.row));
        ev.detail = Some(format!(
            "{} was empty when the agent listed it and the agent never wrote it; the verifier's {} read empty content: {}",
            e.file,
            e.test,
            head(e.read)
        ));
        f.class("infrastructure", ev);
    }
    if t.outcome.status == OutcomeStatus::Errored {
        let ex = t.outcome.detail.as_deref().map(head).or(t.outcome.source.as_ref().map(|s| s.field.as_str())).unwrap_or("");
        // The verdict, not the end status, is the evidence here.
        let e = Evidence {
            source_span: None,
            ..on_status(t, "infra-verifier-errored", "infrastructure", ex, Some("the verifier gave no verdict".into()))
        };
        f.class("infrastructure", e);
    }
    if matches!(m.termination, TerminationKind::Unknown | TerminationKind::HarnessError) {
        // The last environment or tool output, if it is an API or container error.
        let last = t.steps.iter().rev().take(3).find_map(|s| {
            s.tool_results
                .iter()
                .map(|r| r.output.as_str())
                .chain(std::iter::once(s.text.as_str()).filter(|_| s.role != Role::Assistant))
                .find_map(|o| p.api_error.find(o).map(|mm| (s.index, o, mm.range())))
        });
        if let Some((step, text, range)) = last {
            f.class("infrastructure", on_steps(t, "infra-api-error-at-end", "infrastructure", vec![step], window(text, range)));
        }
    }
}

/// A benchmark defect the agent's own test runs show (DESIGN.md, decisions on hard cases: the
/// verifier cannot run for reasons outside the agent's change): every test the verdict failed
/// lies in a test file that errored at collection in the agent's runs, or in a class of it whose
/// tests all errored at setup (`test_errors::broken`), with a traceback that names no file the
/// agent wrote, and the agent changed neither those test files nor any configuration. Pass-to-pass tests failing
/// the same way are the tell: they pass on the benchmark's reference by definition.
fn tests_broken_in_image(t: &Trajectory, acts: &[Action<'_>], m: &Mechanics, p: &Profile, f: &mut Findings) {
    use super::test_errors::{broken, covers, names, ran, ran_later, test_id};
    let failing: Vec<&str> = t.outcome.tests.iter().filter(|r| r.status != "passed").map(|r| test_id(&r.name)).collect();
    if failing.is_empty() || !m.config_files_changed.is_empty() || !matches!(t.outcome.status, OutcomeStatus::Failed) {
        return;
    }
    // Every write it attempted, whatever its command's exit code said (`sed -i … && pytest`
    // fails as a whole when the tests do, yet the edit landed), removals included. A change it
    // made that cannot be named (`(git mv)`, a script's unknown writes) could be the cause; putting
    // the repository back (`git checkout`, `git stash`) cannot.
    let written: Vec<&str> = acts.iter().filter(|a| a.mutates()).flat_map(|a| &a.writes).map(String::as_str).collect();
    let unnamed = acts.iter().filter(|a| a.mutates() && a.reverts.is_empty()).flat_map(|a| &a.writes).any(|w| changes::opaque(w));
    if unnamed || written.iter().any(|w| p.config_files.is_match(w)) {
        return;
    }
    if failing.iter().any(|id| {
        let file = id.split("::").next().unwrap_or(id);
        written.iter().any(|w| changes::same_file(w, file))
    }) {
        return;
    }
    // (step, error) for every error its checks printed in code it did not write, and that no
    // later run of its own contradicts (the same file or class running its tests). Latest first,
    // gathering what the later runs ran as it goes: linear in the outputs.
    let mut later_ran = std::collections::HashSet::new();
    let mut seen = Vec::new();
    for a in acts.iter().rev().filter(|a| a.verification.is_some()) {
        let (Some(r), Some(step)) = (a.result, a.result_step) else { continue };
        for b in broken(&r.output) {
            if !ran_later(&b, &later_ran) && !written.iter().any(|w| names(b.text, w) || names(b.file, w)) {
                seen.push((step, b));
            }
        }
        later_ran.extend(ran(&r.output));
    }
    // Earliest first, so the evidence is the first run that showed the error.
    seen.reverse();
    if seen.is_empty() || !failing.iter().all(|id| seen.iter().any(|(_, b)| covers(b, id))) {
        return;
    }
    let (step, b) = seen.iter().find(|(_, b)| covers(b, failing[0])).expect("every failing test is covered");
    let unit = b.class.map_or_else(|| b.file.to_string(), |c| format!("test class {c} of {}", b.file));
    let mut e = on_steps(t, "infra-tests-broken-in-image", "infrastructure", vec![*step], b.header);
    e.detail = Some(format!(
        "the agent's own run showed {unit} erroring before any test ran{}, in code it never changed, and no later run of its own collected it; all {} tests the verifier failed are there",
        b.raised.map(|r| format!(" ({})", head(r))).unwrap_or_default(),
        failing.len()
    ));
    f.class("infrastructure", e);
}

/// A benchmark defect the verdict itself shows: every failing result the verifier gave is an
/// error of its own test code before any test ran (the profile's `broken_verifier`), in a test
/// file the agent never wrote and naming no file it wrote, and no test passed. Gives the first
/// such result and its test file.
fn broken_verifier<'t>(t: &'t Trajectory, acts: &[Action<'_>], p: &Profile) -> Option<(&'t str, &'t str)> {
    let tests = &t.outcome.tests;
    if tests.is_empty() || tests.iter().any(|r| r.status == "passed") {
        return None;
    }
    let written: Vec<&str> = acts
        .iter()
        .filter(|a| a.mutated())
        .flat_map(|a| &a.writes)
        .map(|w| w.trim_end_matches('/').rsplit('/').next().unwrap_or(w))
        .filter(|n| n.len() > 2)
        .collect();
    let mut first = None;
    for r in tests {
        let caps = p.broken_verifier.list.iter().find_map(|pat| pat.try_get()?.captures(&r.name))?;
        if written.iter().any(|w| r.name.contains(w)) {
            return None;
        }
        first.get_or_insert((r.name.as_str(), caps.name("file").map_or(r.name.as_str(), |m| m.as_str())));
    }
    first
}

fn budget(t: &Trajectory, acts: &[Action<'_>], m: &Mechanics, p: &Profile, limits: &Options, f: &mut Findings) {
    if m.termination == TerminationKind::Budget {
        let b = m.budget.map_or_else(|| "unspecified".to_string(), |b| crate::util::snake(&b));
        let ex = status_excerpt(t).unwrap_or("");
        let mut detail = format!("budget: {b}");
        if let Some(by) = t.termination.enforced_by {
            detail.push_str(&format!(", enforced by {}", crate::util::snake(&by)));
        }
        if let (Some(l), Some(c)) = (t.termination.limit, t.termination.consumed) {
            detail.push_str(&format!(", {c} of {l}"));
        }
        let mut e = on_status(t, "budget-termination", "budget_exhausted", ex, Some(detail));
        // Answers that ran out are the answers: each a step a reader can check.
        if m.budget == Some(crate::model::Budget::Attempts) {
            let answers: Vec<&Action<'_>> = acts.iter().filter(|a| a.finish).collect();
            e.steps = answers.iter().map(|a| a.at.step).collect();
            // The last answer as the call gave it, or its tool where it gave no text.
            if let Some(a) = answers.last() {
                let call = t.steps.get(a.at.step as usize).and_then(|s| s.tool_calls.get(a.at.call as usize));
                let answer = call.and_then(|c| c.arguments.as_object()).and_then(|o| o.values().find_map(serde_json::Value::as_str));
                e.excerpt = head(answer.filter(|x| !x.trim().is_empty()).unwrap_or(a.name)).to_string();
            }
        }
        f.class("budget_exhausted", e);
        return;
    }
    if m.termination != TerminationKind::Unknown {
        return;
    }
    if let Some(detail) = consumed_limit(t, m, limits)
        && let Some(last) = final_reply(t)
    {
        let ex = if last.text.trim().is_empty() { last.tool_calls.first().map_or("", |c| c.name.as_str()) } else { head(&last.text) };
        let mut e = on_steps(t, "budget-consumed-limit", "budget_exhausted", vec![last.index], ex);
        e.detail = Some(detail);
        f.class("budget_exhausted", e);
        return;
    }
    let tail: Vec<&Action<'_>> = acts.iter().rev().take_while(|a| a.timed_out).collect();
    if tail.len() >= TIMEOUT_RUN && !acts.iter().any(|a| a.finish) {
        let a = tail[0];
        if let (Some(r), Some(rs)) = (a.result, a.result_step)
            && let Some(mm) = p.command_timeout.find(&r.output)
        {
            let mut e = on_steps(t, "budget-command-timeouts", "budget_exhausted", vec![rs], window(&r.output, mm.range()));
            e.detail = Some(format!("{} command timeouts in a row at the end", tail.len()));
            f.class("budget_exhausted", e);
        }
    }
}

/// Which configured budget the run used up, when the record has no end status to say so:
/// steps first (the most common limit), then wall clock, cost and tokens.
fn consumed_limit(t: &Trajectory, m: &Mechanics, limits: &Options) -> Option<String> {
    if let Some(limit) = limits.step_limit
        && m.assistant_turns >= limit
    {
        return Some(format!("budget: steps; {} assistant turns of a {limit}-step budget", m.assistant_turns));
    }
    let u = &t.usage;
    if let (Some(limit), Some(used)) = (limits.time_limit_seconds, u.wall_seconds)
        && limit > 0.0
        && used >= limit
    {
        return Some(format!("budget: wall_time; {used:.0} s of a {limit:.0} s limit"));
    }
    if let (Some(limit), Some(used)) = (limits.cost_limit_usd, u.cost_usd)
        && limit > 0.0
        && used >= limit
    {
        return Some(format!("budget: cost; ${used:.4} of a ${limit:.4} limit"));
    }
    let tokens = u.prompt_tokens.zip(u.completion_tokens).map(|(p, c)| p.saturating_add(c));
    if let (Some(limit), Some(used)) = (limits.token_limit, tokens)
        && limit > 0
        && used >= limit
    {
        return Some(format!("budget: tokens; {used} of a {limit}-token limit"));
    }
    None
}

fn plan(t: &Trajectory, acts: &[Action<'_>], m: &Mechanics, p: &Profile, f: &mut Findings) {
    if m.termination == TerminationKind::Infrastructure || f.classes.contains("infrastructure") {
        return;
    }
    // The user consented to a change the agent proposed, and the agent never made it (even if it
    // then handed the user over).
    if let Some((u, proposal)) = dialogue::last_consent(t, p)
        && !dialogue::changed_after(acts, u.index)
        && !dialogue::consents_to_a_hand_over(&u.text, &proposal.text, p)
        && !dialogue::declined_after(t, u.index, p)
    {
        let mut e = on_steps(t, "plan-consented-not-done", "plan_without_execution", vec![proposal.index, u.index], head(&u.text));
        e.detail = Some("the user consented to the change the agent proposed; no change followed".into());
        f.class("plan_without_execution", e);
    }
    // A write that ran but landed on a mangled name was executed, not only described.
    if m.successful_mutations > 0 || p.task_kind != "code" || acts.iter().any(|a| !a.misfired.is_empty() && a.ok != Some(false)) {
        return;
    }
    if let Some((step, ex)) = announced_at_end(t, m, p) {
        let mut e = on_steps(t, "plan-announced-at-end", "plan_without_execution", vec![step], ex);
        e.detail = Some("the run ended on this reply, which announces a change and makes no call; nothing was changed before it".into());
        f.class("plan_without_execution", e);
    }
    let plans: Vec<(u32, &str)> = t
        .steps
        .iter()
        .filter(|s| s.role == Role::Assistant)
        .filter_map(|s| {
            p.plan
                .find_iter(&s.text)
                .into_iter()
                .find(|mm| !conditional(&s.text, mm.start()))
                .map(|mm| (s.index, window(&s.text, mm.range())))
        })
        .collect();
    if let Some((step, ex)) = plans.first() {
        let mut e = on_steps(t, "plan-in-text", "plan_without_execution", plans.iter().map(|(s, _)| *s).take(5).collect(), ex);
        e.detail = Some(format!("{} replies describe a change; no successful mutation", plans.len()));
        let _ = step;
        f.class("plan_without_execution", e);
    }
    if m.format_errors > 0 && m.format_errors * 2 >= m.assistant_turns.max(1) {
        let steps: Vec<u32> = t.steps.iter().filter(|s| s.format_error.is_some()).map(|s| s.index).take(5).collect();
        let first = &t.steps[steps[0] as usize];
        let mut e =
            on_steps(t, "plan-replies-never-parsed", "plan_without_execution", steps, head(first.format_error.as_deref().unwrap_or("")));
        e.detail = Some(format!("{} of {} replies did not parse into an action", m.format_errors, m.assistant_turns));
        f.class("plan_without_execution", e);
    }
}

/// The run ended on a reply without a call whose last sentence announces the change the agent
/// is about to make ("Now I have all the information I need. Let me create the MIPS interpreter
/// in JavaScript:"): the change was announced and never issued. Only in a run that changed
/// nothing (the caller's condition, as for every plan without execution); not a reply that
/// claims it is done, and not an offer on a condition.
fn announced_at_end<'t>(t: &'t Trajectory, m: &Mechanics, p: &Profile) -> Option<(u32, &'t str)> {
    if m.termination != TerminationKind::AgentStoppedWithoutFinish || m.final_message == FinalMessage::ClaimsDone {
        return None;
    }
    let step = mechanics::final_reply(t).filter(|s| s.tool_calls.is_empty())?;
    let text = step.text.trim_end();
    let mm = p.announces.find_iter(text).into_iter().last()?;
    // Nothing but the sentence's own end after it: no further sentence, line or question (a
    // `.` inside a file name, "Let me create vm.js:", ends nothing).
    let rest = text[mm.end()..].trim_end_matches([':', '.', '!', '…', ' ']);
    let ends_a_sentence = rest.contains(['?', '\n']) || [". ", "! ", ".\t", "!\t"].iter().any(|e| rest.contains(e));
    // "Let me make sure ..." checks; it changes nothing.
    let checks =
        text[mm.start()..mm.end()].ends_with("make") && rest.split_whitespace().next().is_some_and(|w| matches!(w, "sure" | "certain"));
    if ends_a_sentence || checks || conditional(text, mm.start()) {
        return None;
    }
    Some((step.index, window(text, mm.range())))
}

/// Whether the sentence holding `at` opens with a condition on the user or on what the agent is
/// waiting for ("If you can share the address, I'll update it"; "Once I have that, I will change
/// it"): an offer, not a plan the agent then failed to carry out. "When n is None it crashes, so
/// I will modify ..." is still a plan.
fn conditional(text: &str, at: usize) -> bool {
    static IF: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)^\W*(?:if|once|as soon as|when) (?:you|I (?:have|get|receive|know)|I've|we have)\b").expect("valid regex")
    });
    IF.is_match(super::mechanics::sentence_before(text, at))
}

/// Explicit give-ups and escalations, silent stops, empty submissions.
fn resignation(t: &Trajectory, acts: &[Action<'_>], changes: &Changes, m: &Mechanics, p: &Profile, f: &mut Findings) {
    if matches!(m.termination, TerminationKind::Budget | TerminationKind::Infrastructure) {
        return;
    }
    let last = final_reply(t);
    // A hand-over the user asked for is the end the user wanted, not a give-up.
    if let Some(a) = acts.iter().rev().find(|a| a.escalate && !dialogue::user_asked_for_human(t, a.at.step, p)) {
        let mut e = on_steps(t, "resign-explicit", "early_resignation", vec![a.at.step], a.name);
        e.detail = Some("escalated instead of finishing".into());
        f.class("early_resignation", e);
        return;
    }
    if t.termination.gave_up {
        let raw = t.termination.raw.as_deref().unwrap_or("");
        f.class(
            "early_resignation",
            on_status(t, "resign-explicit", "early_resignation", raw, Some("the agent reported it did not complete the task".into())),
        );
        return;
    }
    if let Some(step) = last {
        let text = &step.text;
        if let Some(mm) = p.resignation.find(text) {
            f.class("early_resignation", on_steps(t, "resign-explicit", "early_resignation", vec![step.index], window(text, mm.range())));
            return;
        }
        for c in &step.tool_calls {
            for v in c.arguments.as_object().into_iter().flat_map(|o| o.values()).filter_map(serde_json::Value::as_str) {
                if let Some(mm) = p.resignation.find(v) {
                    f.class(
                        "early_resignation",
                        on_steps(t, "resign-explicit", "early_resignation", vec![step.index], window(v, mm.range())),
                    );
                    return;
                }
            }
        }
    }
    let finished = acts.iter().any(|a| a.finish) || m.termination == TerminationKind::AgentFinished;
    if m.termination == TerminationKind::AgentStoppedWithoutFinish
        && !finished
        && m.final_message != FinalMessage::ClaimsDone
        && let Some(step) = last
    {
        let ex = if step.text.trim().is_empty() { "" } else { head(&step.text) };
        let mut e = on_steps(t, "resign-silent", "early_resignation", vec![step.index], ex);
        e.detail = Some("stopped without the finish protocol and without claiming completion".into());
        f.class("early_resignation", e);
        f.flags.insert("silent_give_up".into());
        return;
    }
    // An empty submission is nothing submitted, whatever hid the work (changes undone,
    // committed away, never written): when the run submits a patch, only what the patch holds
    // stays; when the workspace is the deliverable, nothing is empty unless nothing changed.
    let image_only = image_changes_only(acts, changes, p);
    let empty = t.submission.as_deref().is_some_and(|s| s.trim().is_empty()) || image_only.is_some();
    if finished && empty && changes.last().is_none() {
        let fin = acts.iter().rev().find(|a| a.finish);
        let e = match fin {
            Some(a) => {
                on_steps(t, "resign-empty-submission", "early_resignation", vec![a.at.step], a.command.as_deref().map_or(a.name, head))
            }
            None => on_status(t, "resign-empty-submission", "early_resignation", status_excerpt(t).unwrap_or(""), None),
        };
        let mut e = e;
        e.detail = Some(match (image_only, m.successful_mutations) {
            (Some(files), 0) => {
                format!("finished with a patch of {} alone, which it never wrote (the image's own changes)", files.join(", "))
            }
            (Some(files), n) => format!(
                "finished with a patch of {} alone, which it never wrote (the image's own changes), after {n} changes that did not stay",
                files.join(", ")
            ),
            (None, 0) => "finished with an empty patch or answer".into(),
            (None, n) => format!("finished with an empty patch or answer after {n} changes that did not stay"),
        });
        submitted_nothing(t, acts, changes, p, f, e, true);
        return;
    }
    // Its commands never ran: the terminal took them as the body of a here-doc or quote an
    // earlier command left open, and nothing it changed stayed. What it meant to do never reached
    // the workspace, which DESIGN.md counts as nothing submitted.
    if finished
        && changes.last().is_none()
        && let Some(first) = acts.iter().position(|a| a.swallowed)
        // From that call on, every command was swallowed: the terminal never came back.
        && acts[first..].iter().all(|a| a.swallowed || !p.is_shell(a.name) || a.command.as_deref().is_some_and(|c| c.trim().is_empty()))
    {
        let a = &acts[first];
        let keys = t.steps[a.at.step as usize].tool_calls.get(a.at.call as usize).and_then(|c| c.shell_command(&p.shell_arguments));
        let ex = keys.as_deref().map_or(a.name, |k| head(k).lines().next().unwrap_or(a.name));
        let mut e = on_steps(t, "resign-empty-submission", "early_resignation", vec![a.at.step], ex);
        e.detail = Some(format!(
            "from step {} the terminal took its commands as input to a here-doc or quote left open (its screen shows them after the continuation prompt), so they never ran, and nothing it changed stayed",
            a.at.step
        ));
        submitted_nothing(t, acts, changes, p, f, e, false);
        return;
    }
    // No patch to read, but every change it made was put back (`git checkout -- f`, a stash
    // never popped, a backup restored) and none was redone: the workspace it finished with holds
    // none of its work, which DESIGN.md counts as nothing submitted (changes undone).
    if finished
        && t.submission.is_none()
        && changes.last().is_none()
        && let Some((_, revert, file)) = &changes.undone
    {
        let a = &acts[*revert];
        let mut e = on_steps(t, "resign-empty-submission", "early_resignation", vec![a.at.step], a.command.as_deref().map_or(a.name, head));
        e.detail =
            Some(format!("finished with none of its {} changes in place: it put {file} back and never redid it", m.successful_mutations));
        submitted_nothing(t, acts, changes, p, f, e, true);
        return;
    }
    // It finished having only looked: every call a shell command of programs that only look,
    // no patch, no change; the workspace is the deliverable and it is as it was, which
    // DESIGN.md counts as nothing submitted (never written to the workspace).
    let typed = |a: &&Action<'_>| !a.finish && a.command.as_deref().is_some_and(|c| !c.trim().is_empty());
    if finished
        && p.task_kind == "code"
        && t.submission.is_none()
        && m.successful_mutations == 0
        && changes.last().is_none()
        && acts.iter().any(|a| typed(&a))
        && acts.iter().all(|a| a.finish || only_looks(a, p))
    {
        let a = acts.iter().rev().find(|a| a.finish).unwrap_or(&acts[acts.len() - 1]);
        let looked = acts.iter().filter(typed).count();
        let mut e = on_steps(t, "resign-empty-submission", "early_resignation", vec![a.at.step], a.command.as_deref().map_or(a.name, head));
        e.detail = Some(format!(
            "finished with everything as it was: {} only looked (read, listed, searched)",
            if looked == 1 { "its one command".to_string() } else { format!("its {looked} commands") }
        ));
        submitted_nothing(t, acts, changes, p, f, e, false);
        return;
    }
    // Every write it meant went to a name a leaked escape mangled, and it finished: nothing it
    // meant to change changed, which DESIGN.md counts as an empty submission (never written to
    // the workspace).
    if finished
        && changes.last().is_none()
        && let Some(a) = acts.iter().find(|a| !a.misfired.is_empty() && a.ok != Some(false))
    {
        let target = &a.misfired[0];
        let ex = if t.steps[a.at.step as usize].evidence_texts().iter().any(|x| x.contains(target.as_str())) { target } else { a.name };
        let mut e = on_steps(t, "resign-empty-submission", "early_resignation", vec![a.at.step], ex);
        e.detail = Some(format!(
            "its write went to `{target}`, which the shell reads as `{}` (an escape written outside quotes): nothing it meant to change changed",
            super::shell::unquote(target)
        ));
        submitted_nothing(t, acts, changes, p, f, e, false);
        return;
    }
    // With a user in the loop: it told the user it cannot do what was just asked, with no call
    // since the request (without trying), and changed nothing in the whole run.
    if !acts.iter().any(Action::mutates)
        && let Some(s) = declined_without_trying(t, p)
    {
        let mm = p.declines.find(&s.text).expect("matched");
        let mut e = on_steps(t, "resign-declined", "early_resignation", vec![s.index], window(&s.text, mm.range()));
        e.detail = Some("declined what the user asked, with no call since the request, and changed nothing".into());
        f.class("early_resignation", e);
    }
}

/// A shell command, or an empty keystroke call, that only looks: no write, no script run, no
/// check, and every simple command one of the profile's `look_commands` used only to look, with
/// no redirection or substitution (the plain-words split refuses those). A call of a reply the
/// harness refused (a format error) never ran, so it changed nothing either.
fn only_looks(a: &Action<'_>, p: &Profile) -> bool {
    if !p.is_shell(a.name) || a.mutates() || !a.runs.is_empty() || a.verification.is_some() {
        return false;
    }
    if a.refused {
        return true;
    }
    let Some(cmd) = a.command.as_deref() else { return false };
    if cmd.trim().is_empty() {
        return true;
    }
    let Some(commands) = super::simple_command::split(cmd) else { return false };
    commands.iter().all(|words| {
        let Some(prog) = words.first().map(|w| w.rsplit('/').next().unwrap_or(w)) else { return true };
        p.look_commands.iter().any(|l| l == prog) && used_to_look(prog, &words[1..])
    })
}

/// Whether a looking program's arguments keep it to looking: the options and forms by which
/// these programs write a file, run another program or change the system are refused (`env CMD`,
/// `su -c`, `sort -o`, `find -exec`, `git branch -D`, `date -s`, `sed` other than `-n …p`).
fn used_to_look(prog: &str, args: &[&str]) -> bool {
    const GIT_LOOKS: &[&str] = &["status", "log", "diff", "show", "grep", "ls-files", "blame", "rev-parse"];
    let operands = || args.iter().filter(|a| !a.starts_with('-'));
    let has = |f: &dyn Fn(&str) -> bool| args.iter().any(|a| f(a.trim_matches(['\'', '"'])));
    match prog {
        // Runs its operand as a program: only a bare `env` lists the environment.
        "env" => args.is_empty(),
        // A login shell as another user, not a command run as one.
        "su" => !has(&|a| a == "-c" || a.starts_with("--command") || a == "-s" || a.starts_with("--session-command")),
        "sort" => !has(&|a| a == "-o" || a.starts_with("-o") || a.starts_with("--output")),
        "uniq" => operands().count() <= 1,
        "xxd" => !has(&|a| a == "-r" || a == "-revert") && operands().count() <= 1,
        "tree" => !has(&|a| a == "-o"),
        "date" => !has(&|a| a == "-s" || a.starts_with("--set")) && operands().all(|o| o.starts_with('+')),
        "hostname" => operands().next().is_none() && !has(&|a| a == "-F" || a.starts_with("--file")),
        "find" => !has(&|a| a.starts_with("-exec") || a.starts_with("-ok") || a == "-delete" || a.starts_with("-fprint") || a == "-fls"),
        "git" => args.first().is_some_and(|sub| GIT_LOOKS.contains(sub)) && !has(&|a| a.starts_with("--output") || a == "-o"),
        // `sed -n '10,20p' f`: printing lines by number or pattern, nothing else.
        "sed" => {
            static PRINTS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
                regex::Regex::new(r"^(?:(?:\$|\d+|/[^/]*/)(?:,(?:\$|\d+|/[^/]*/))?p;?)+$").expect("valid regex")
            });
            args.contains(&"-n") && operands().next().is_some_and(|script| PRINTS.is_match(script.trim_matches(['\'', '"'])))
        }
        _ => true,
    }
}

/// The files of a patch that holds none of the agent's work: every one a configuration file of
/// the repository (the profile's `config_files`) that no action of its wrote, and nothing it ran
/// wrote files that cannot be named. SWE-bench images carry their own edits to `setup.py` and
/// `tox.ini` (pinned dependencies), which a `git diff` submission picks up; a patch of those
/// alone submits nothing of the agent's (DESIGN.md: an empty submission, whatever hid the work).
fn image_changes_only<'c>(acts: &[Action<'_>], changes: &'c Changes, p: &Profile) -> Option<Vec<&'c str>> {
    let files = changes.patch.as_ref().filter(|f| !f.is_empty())?;
    // Any write it attempted: a `sed -i … setup.py && pytest` whose tests failed still wrote.
    let wrote =
        |path: &str| acts.iter().filter(|a| a.mutates()).flat_map(|a| &a.writes).any(|w| changes::opaque(w) || changes::same_file(w, path));
    files
        .iter()
        .all(|f| !f.new && p.config_files.is_match(&f.path) && !wrote(&f.path))
        .then(|| files.iter().map(|f| f.path.as_str()).collect())
}

/// An empty submission's class and the flags that go with it: `regressed` when it undid its
/// own checked work (`undone`: where that can be the cause), `false_done` when it claimed success.
fn submitted_nothing(t: &Trajectory, acts: &[Action<'_>], changes: &Changes, p: &Profile, f: &mut Findings, e: Evidence, undone: bool) {
    f.class("early_resignation", e);
    if undone {
        undone_flag(t, acts, changes, f, false);
    }
    claimed_done(t, acts, changes, p, f);
}

/// The first reply that declines the user's request straight after it (the step before is the
/// user's message: no call was tried in between). Only where a simulated user is in the loop
/// (the profile knows its end-of-episode marker), not in the harness's own "please continue"
/// turns; and not the answer to a go-ahead, which says a consented change is blocked.
fn declined_without_trying<'t>(t: &'t Trajectory, p: &Profile) -> Option<&'t crate::model::Step> {
    if p.user_ends.list.is_empty() {
        return None;
    }
    t.steps.windows(2).find_map(|w| {
        let (u, a) = (&w[0], &w[1]);
        (u.role == Role::User
            && !p.consent.is_match(&u.text)
            && a.role == Role::Assistant
            && a.tool_calls.is_empty()
            && dialogue::declines(&a.text, p))
        .then_some(a)
    })
}

fn worked(t: &Trajectory, acts: &[Action<'_>], changes: &Changes, m: &Mechanics, p: &Profile, f: &mut Findings) {
    if f.classes.contains("early_resignation")
        || matches!(m.termination, TerminationKind::Budget | TerminationKind::Infrastructure | TerminationKind::HarnessError)
    {
        return;
    }
    let normal_end = match m.termination {
        TerminationKind::AgentFinished | TerminationKind::Unknown => true,
        TerminationKind::AgentStoppedWithoutFinish => m.final_message == FinalMessage::ClaimsDone,
        _ => false,
    };
    if !normal_end {
        return;
    }
    // Progress is a change to the repository's own files that stays in the final state; on
    // answer tasks, a submitted answer.
    // The last change the submission still holds (not one that put text back as it was).
    let last_mut = changes.last_kept(acts);
    let answered =
        p.task_kind == "answer" && (t.submission.as_deref().is_some_and(|s| !s.trim().is_empty()) || acts.iter().any(|a| a.finish));
    let last_check = acts.iter().rposition(|b| checks(b) || runs_the_package(b, &changes.files));
    let evidence = match last_mut {
        Some(i) => {
            let a = &acts[i];
            let ex = call_excerpt(t, a);
            let mut steps = vec![a.at.step];
            if let Some(c) = last_check.filter(|c| *c > i) {
                steps.push(acts[c].shown_at());
            }
            on_steps(t, "worked-progress-then-failed", "worked_then_wrong", steps, ex)
        }
        None if answered => match acts.iter().rev().find(|a| a.finish) {
            Some(a) => on_steps(t, "worked-progress-then-failed", "worked_then_wrong", vec![a.at.step], a.name),
            // The submission, not the end status, is the evidence here: at the agent's reply
            // that gave it (a final reply taken as the answer), where one holds it.
            None => {
                let answer = t.submission.as_deref().unwrap_or("");
                // The reply holds the whole answer; a short one ("4", "Yes") also ends a line
                // of it (`FINAL ANSWER: 4`), not just any number in any reply.
                let whole = answer.trim();
                let gave = |text: &str| text.contains(whole) && (whole.len() >= 20 || text.lines().any(|l| l.trim_end().ends_with(whole)));
                let said = (!whole.is_empty())
                    .then(|| t.steps.iter().rposition(|s| s.role == Role::Assistant && gave(&s.text)))
                    .flatten()
                    .and_then(|k| u32::try_from(k).ok());
                match said {
                    Some(k) => on_steps(t, "worked-progress-then-failed", "worked_then_wrong", vec![k], head(answer)),
                    None => Evidence {
                        source_span: None,
                        ..on_status(t, "worked-progress-then-failed", "worked_then_wrong", head(answer), Some("submitted an answer".into()))
                    },
                }
            }
        },
        None => return,
    };
    let mut evidence = evidence;
    let files = &changes.files;
    let kept = match &changes.patch {
        Some(p) => format!(" (the submitted patch holds {} files)", p.len()),
        None => String::new(),
    };
    let check = match last_check {
        Some(c) if last_mut.is_some_and(|i| c < i) => {
            let a = &acts[c];
            format!("; no check after it (the last one ran before it, at step {})", a.shown_at())
        }
        Some(c) => {
            let a = &acts[c];
            let what = a
                .verification
                .clone()
                .or_else(|| a.runs.first().map(|r| if r == "-" { "an inline program".to_string() } else { format!("running {r}") }))
                .or_else(|| a.command.as_deref().map(|c| format!("`{}`", head(c).lines().next().unwrap_or(""))))
                .unwrap_or_default();
            let result = match a.passed {
                Some(true) => "passed",
                Some(false) => "failed",
                None => "ran",
            };
            format!("; last check: {what} at step {}, {result}", a.shown_at())
        }
        None => "; no check ran".to_string(),
    };
    evidence.detail = Some(if last_mut.is_none() {
        format!("submitted an answer{check}")
    } else if files.is_empty() {
        format!("{} successful changes{kept}{check}", m.successful_mutations)
    } else {
        format!("changed {}{kept}{check}", files.iter().take(6).cloned().collect::<Vec<_>>().join(", "))
    });
    f.class("worked_then_wrong", evidence);

    if last_mut.is_none()
        && answered
        && let Some((step, said)) = answer_assumed(t, p)
    {
        let mut e = on_steps(t, "flag-unverified", "unverified", vec![step], said);
        e.detail = Some("the answer rests on a value it assumed or estimated here, and nothing was looked up after".into());
        f.flag("unverified", e);
    }
    if last_mut.is_some() {
        let code = changes.last_code(acts, |w| p.doc_files.is_match(w));
        if let Some(c) = code.filter(|_| !p.writes_show_their_effect) {
            let a = &acts[c];
            if !checks_itself(a)
                && !restores_checked(acts, c)
                && !acts[c + 1..]
                    .iter()
                    .any(|b| ((checks(b) || runs_the_package(b, &changes.files)) && may_reach(b, &changes.files, p)) || reads_back(b, a))
            {
                let mut e = on_steps(t, "flag-unverified", "unverified", vec![a.at.step], call_excerpt(t, a));
                e.detail = Some("no check ran after this last change to the repository's code".into());
                f.flag("unverified", e);
            } else if let Some((step, said)) = said_unchecked(t, acts, a.at.step, p) {
                let mut e = on_steps(t, "flag-unverified", "unverified", vec![a.at.step, step], said);
                e.detail = Some(format!(
                    "after its last change to the repository's code (step {}) it said it could not check it, and ran no check after saying so",
                    a.at.step
                ));
                f.flag("unverified", e);
            }
        }
        if !undone_flag(t, acts, changes, f, true) && !regressed_check(t, acts, changes, p, f) {
            fitted_to_old_tests(t, acts, changes, p, f);
        }
    }
    claimed_done(t, acts, changes, p, f);
    if let Some(file) = m.test_files_changed.first()
        && let Some(a) = acts
            .iter()
            .zip(&changes.matters)
            .filter(|(_, k)| **k)
            .map(|(a, _)| a)
            .find(|a| a.writes.iter().any(|w| changes::same_file(w, file)))
    {
        let ex =
            if t.steps[a.at.step as usize].evidence_texts().iter().any(|x| x.contains(file.as_str())) { file.as_str() } else { a.name };
        let mut e = on_steps(t, "flag-edited-tests", "edited_tests", vec![a.at.step], ex);
        e.detail = Some(format!("changed the repository's test files: {}", m.test_files_changed.join(", ")));
        f.flag("edited_tests", e);
    }
}

/// A run with no agent steps to read (the source kept only the trial's result, or a capture
/// without the agent's turns) whose harness timed the agent phase to its own end, with no failure
/// and no limit, and whose verifier then failed the result. A normal end followed by a failing
/// verdict is what `worked_then_wrong` describes; what the agent changed cannot be read, so the
/// evidence says the class is inferred from the end and the verdict, not seen in the steps. Only
/// when no other rule found a class: anything the record does show outranks the inference.
fn worked_unseen(t: &Trajectory, m: &Mechanics, f: &mut Findings) {
    let timed = t.usage.wall_seconds.filter(|s| *s > 0.0);
    let ran = timed.is_some() || t.usage.prompt_tokens.is_some_and(|n| n > 0) || m.termination == TerminationKind::AgentFinished;
    // An empty submission is nothing submitted, whatever the end: not this inference.
    let empty = t.submission.as_deref().is_some_and(|s| s.trim().is_empty());
    if m.assistant_turns > 0
        || empty
        || m.tool_calls > 0
        || !matches!(t.outcome.status, OutcomeStatus::Failed | OutcomeStatus::Partial)
        || !matches!(m.termination, TerminationKind::AgentFinished | TerminationKind::Unknown)
        || !ran
    {
        return;
    }
    let failing: Vec<&str> = t.outcome.tests.iter().filter(|r| r.status != "passed").map(|r| r.name.as_str()).collect();
    let excerpt = failing.first().map_or_else(|| t.outcome.source.as_ref().map_or("", |s| s.field.as_str()), |n| head(n));
    let ended = match timed {
        Some(s) => format!("the harness timed the agent's own end after {s:.0} s, with no failure and no limit"),
        None => "the harness recorded the agent's own end, with no failure and no limit".to_string(),
    };
    let verdict = if failing.is_empty() {
        "the verifier failed the result".to_string()
    } else {
        format!("the verifier failed {} of {} tests", failing.len(), t.outcome.tests.len())
    };
    // The verdict, not the end status, is what the excerpt quotes.
    let e = Evidence {
        source_span: None,
        ..on_status(
            t,
            "worked-ended-unseen",
            "worked_then_wrong",
            excerpt,
            Some(format!("no agent steps to read: {ended}, and {verdict}; the class is inferred from the end and the verdict, not seen")),
        )
    };
    f.class("worked_then_wrong", e);
}

/// What a person checking a change looks for at its step: the command's head, or the file an
/// editing tool wrote, where the step shows it; else the tool's name.
fn call_excerpt<'t>(t: &Trajectory, a: &'t Action<'_>) -> &'t str {
    let ex = a.command.as_deref().map_or_else(|| a.writes.first().map_or(a.name, String::as_str), head);
    if t.steps[a.at.step as usize].evidence_texts().iter().any(|x| x.contains(ex)) { ex } else { a.name }
}

/// The agent's last word, from the step of its last change on, that it cannot check that change
/// ("I cannot run the macOS backend here, so I cannot verify the fix directly"), when no check
/// ran after it: the checks before it did not cover the change, by the agent's own account.
fn said_unchecked<'t>(t: &'t Trajectory, acts: &[Action<'_>], from: u32, p: &Profile) -> Option<(u32, &'t str)> {
    // Not when the sentence goes on to a check that did run ("..., but the unit tests pass").
    let contrasted = |text: &str, end: usize| {
        let rest = &text[end..];
        let rest = &rest[..rest.find(['.', '!', '?', '\n']).unwrap_or(rest.len())];
        rest.contains(" but ") || rest.contains("however")
    };
    let (step, said) = t.steps.iter().enumerate().skip(from as usize).rev().find_map(|(i, s)| {
        (s.role == Role::Assistant).then(|| {
            p.cannot_check
                .find(&s.text)
                .filter(|m| !contrasted(&s.text, m.end()))
                .map(|m| (u32::try_from(i).unwrap_or(u32::MAX), window(&s.text, m.range())))
        })?
    })?;
    (!acts.iter().any(|b| b.at.step >= step && checks(b))).then_some((step, said))
}

/// The step where an answer task's agent said it assumed or estimated what it could not find,
/// in its reasoning after the last thing it looked up (a tool's result, a user's message, a
/// relaying agent's page): nothing checked the assumption afterwards. The earliest such saying
/// in that stretch, where the assumption was made, not the ledger repeating it.
fn answer_assumed<'t>(t: &'t Trajectory, p: &Profile) -> Option<(u32, &'t str)> {
    // A finish call's result (`submit(...)` answered "submitted") is no source.
    let finishes: BTreeSet<&str> =
        t.steps.iter().flat_map(|s| &s.tool_calls).filter(|c| p.is_finish(&c.name)).filter_map(|c| c.id.as_deref()).collect();
    let sourced = |s: &crate::model::Step| {
        s.role == Role::Environment
            || s.agent.as_ref().is_some_and(|a| p.relay_agents.contains(a))
            || s.tool_results.iter().any(|r| r.call_id.as_deref().is_none_or(|id| !finishes.contains(id)))
    };
    // Only a run that looked something up: pure reasoning ("we can assume a <= b") takes its
    // premises from the question, which is not an unchecked source.
    let last_source = t.steps.iter().rposition(sourced)?;
    let from = t.steps.iter().rposition(|s| s.role == Role::User).map_or(last_source, |u| u.max(last_source)) + 1;
    t.steps.iter().enumerate().skip(from).filter(|(_, s)| s.role == Role::Assistant).find_map(|(i, s)| {
        let m = p.assumed.find(&s.text)?;
        Some((u32::try_from(i).unwrap_or(u32::MAX), window(&s.text, m.range())))
    })
}

/// A change that checks itself in the same command: `sed -i … && pytest`, or a script written
/// and then run (`cat <<EOF > check.py … EOF && python check.py`). Not a program run to make the
/// change (`python - <<EOF … open(p, 'w') … EOF`, `python /tmp/fix.py`): what it wrote is
/// unchecked.
fn checks_itself(a: &Action<'_>) -> bool {
    a.verification.is_some()
        || (a.runs.iter().any(|r| r != "-")
            && a.writes.iter().all(|w| a.runs.iter().any(|r| r != "-" && changes::same_file(w, r.trim_start_matches("./")))))
}

/// A check: a test runner, a test script, or a program it ran to see what its change does.
fn checks(a: &Action<'_>) -> bool {
    // A check the harness killed for time gave no result: it checked nothing. One whose output
    // says it passed or failed did check, whatever else its output mentions timing out.
    !(a.timed_out && a.passed.is_none()) && (a.verification.is_some() || a.runs.iter().any(|r| !r.ends_with("setup.py")))
}

/// A check that may run the repository's changed code: not a Python program that imports only
/// the standard library (a script of `print` calls, a regex over the source, a copy of the
/// function to try), unless the repository's own package shares a standard name; not one whose
/// output says it stopped before running anything (its runner missing, an import or setup
/// error) raised outside the changed files.
fn may_reach(a: &Action<'_>, files: &[String], p: &Profile) -> bool {
    let out = a.output();
    if p.never_reached.is_match(out) {
        // Where the error was raised: a traceback's innermost frame (an import of the changed
        // module that failed in another file never ran the change), else anywhere in the output.
        let raised_in = match out.rfind("File \"") {
            Some(i) => out[i + 6..].split('"').next().unwrap_or(""),
            None => out,
        };
        if !files.iter().any(|f| raised_in.contains(f.trim_start_matches("./").trim_start_matches('/'))) {
            return false;
        }
    }
    let Some(imports) = &a.imports else { return true };
    // Only a change to Python code is out of reach of a program that imports none of it (a
    // standard-library client reaches a changed server over HTTP), and running the changed
    // script itself (`python /app/solution.py`) runs the change.
    if files.is_empty()
        || !files.iter().all(|f| f.ends_with(".py"))
        || a.runs.iter().any(|r| files.iter().any(|f| changes::same_file(f, r)))
    {
        return true;
    }
    imports.iter().any(|m| {
        !super::python_modules::stdlib(m) || files.iter().any(|f| f.trim_start_matches("./").split('/').next() == Some(m.as_str()))
    })
}

/// A command that looks at what `change` wrote (`cat out.txt`, `ls /app/out`): in a workspace
/// task, the agent's check of its own result. Reading back program source is not: `grep` or
/// `sed -n` over a module shows the text, not what the code does.
fn reads_back(b: &Action<'_>, change: &Action<'_>) -> bool {
    let Some(cmd) = b.command.as_deref() else { return false };
    b.writes.is_empty()
        && change.writes.iter().filter(|w| !changes::opaque(w) && !program_source(w)).any(|w| {
            let name = w.trim_end_matches('/').rsplit('/').next().unwrap_or(w);
            name.len() > 2 && cmd.contains(name)
        })
}

/// The change at `c` puts back a state the agent had already checked: the same change made
/// again after a temporary revert (`git checkout f`, tests, the identical `sed` again), or a
/// backup of its changed file moved back (`cp f f.bak && git checkout f`, tests, `mv f.bak f`),
/// with a check between the state's own change and the revert. Comparing against the old code
/// is not a new change that owes a new check.
fn restores_checked(acts: &[Action<'_>], c: usize) -> bool {
    let a = &acts[c];
    // The first action in `from..c` that puts `file` back.
    let revert = |from: usize, file: &str| (from..c).find(|&i| acts[i].reverts.iter().any(|r| r == "*" || changes::same_file(r, file)));
    if let Some(e) = acts[..c].iter().rposition(|b| b.key == a.key && b.mutated()) {
        // Checked before it was put back (a check in the reverting command ran on the old code).
        return a
            .writes
            .iter()
            .filter(|w| !changes::opaque(w))
            .all(|w| revert(e + 1, w).is_some_and(|r| acts[e + 1..r].iter().any(checks)));
    }
    let Some(commands) = a.command.as_deref().and_then(super::simple_command::split) else { return false };
    // `mv BACKUP FILE` or `cp BACKUP FILE`, the whole command.
    let [words] = commands.as_slice() else { return false };
    let (Some(&prog), Some(&dst), Some(&src)) = (words.first(), words.last(), words.len().checked_sub(2).and_then(|i| words.get(i))) else {
        return false;
    };
    if !matches!(prog, "mv" | "cp") || words.len() < 3 || src == prog {
        return false;
    }
    // The backup: an earlier copy of `dst` named after it, then a revert of `dst`, then the
    // state it saved is the last change to `dst` before the copy, checked before the copy.
    let Some(k) = acts[..c].iter().rposition(|b| b.mutates() && b.writes.iter().any(|w| w == src)) else { return false };
    if !src.starts_with(dst) || revert(k, dst).is_none() || !copies(&acts[k], dst, src) {
        return false;
    }
    let saved = acts[..k].iter().rposition(|b| b.mutated() && b.writes.iter().any(|w| changes::same_file(w, dst)));
    saved.is_some_and(|m| acts[m + 1..k].iter().any(checks))
}

/// `b` is a copy of `from` to `to` (`cp f f.bak`): a backup of the file's state, not a new
/// version written beside it (`f.final` from a script that edits a copy).
fn copies(b: &Action<'_>, from: &str, to: &str) -> bool {
    let Some(commands) = b.command.as_deref().and_then(super::simple_command::split) else { return false };
    commands.iter().any(|words| {
        matches!(words.first(), Some(&"cp") | Some(&"mv"))
            && words.len() >= 3
            && words[words.len() - 1] == to
            && words[1..words.len() - 1].contains(&from)
    })
}

/// A command that runs the tool of the package it changed (`sphinx-build` or `python -m
/// sphinx.cmd.build` after a change to `sphinx/writers/latex.py`, `pylint` after
/// `pylint/lint/run.py`): the agent looking at what its
/// change does through the program's own entry point.
fn runs_the_package(b: &Action<'_>, files: &[String]) -> bool {
    const GENERIC: &[&str] = &["src", "lib", "libs", "app", "bin", "scripts", "tests", "test", "docs", "doc", "tools", "pkg"];
    let Some(cmd) = b.command.as_deref().filter(|_| !(b.timed_out && b.passed.is_none())) else { return false };
    let Some(commands) = super::simple_command::split(cmd) else { return false };
    let packages: Vec<&str> = files
        .iter()
        .filter_map(|f| f.trim_start_matches("./").split_once('/').map(|(top, _)| top))
        .filter(|top| top.len() >= 3 && !GENERIC.contains(top))
        .collect();
    commands.iter().any(|words| {
        let Some(w) = words.first() else { return false };
        let prog = w.rsplit('/').next().unwrap_or(w);
        // `python -m sphinx.cmd.build`: the package's module run as a program.
        // `-m` among the interpreter's own options, before any script it runs.
        let module = prog
            .starts_with("python")
            .then(|| {
                let mut args = words[1..].iter();
                // Options up to `-m`; a word that is no option is the script, and ends them.
                while let Some(a) = args.next() {
                    if *a == "-m" {
                        return args.next();
                    }
                    if !a.starts_with('-') {
                        return None;
                    }
                }
                None
            })
            .flatten()
            .map(|m| m.split('.').next().unwrap_or(m));
        packages.iter().any(|p| prog == *p || prog.strip_prefix(p).is_some_and(|rest| rest.starts_with(['-', '_'])) || module == Some(*p))
    })
}

/// A file of program source, whose check is running it or its tests.
fn program_source(path: &str) -> bool {
    const EXT: &[&str] = &[
        "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "rs", "c", "h", "cc", "cpp", "hpp", "java", "kt", "rb", "php", "cs", "swift",
        "scala",
    ];
    path.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && !stem.ends_with('/') && EXT.contains(&ext))
}

/// `regressed`: it undid one of its own changes that mattered and never redid it. In a run that
/// still submitted work (`checked`), only a change a passing check had confirmed counts: "its own
/// check passed, and a later action undid it"; taking out debugging prints it never checked is
/// cleanup. An empty submission after undoing its change is a regression either way (DESIGN.md).
fn undone_flag(t: &Trajectory, acts: &[Action<'_>], changes: &Changes, f: &mut Findings, checked: bool) -> bool {
    let Some((change, revert, file)) = &changes.undone else { return false };
    if checked && !acts[*change + 1..*revert].iter().any(|c| c.verification.is_some() && c.passed == Some(true)) {
        return false;
    }
    let (a, b) = (&acts[*change], &acts[*revert]);
    let mut steps = vec![a.at.step, b.at.step];
    steps.dedup();
    let ex = b.command.as_deref().map_or(b.name, head);
    let mut e = on_steps(t, "flag-regressed", "regressed", steps, ex);
    e.detail = Some(format!("changed {file}, then put it back and never redid the change"));
    f.flag("regressed", e);
    true
}

/// `regressed`: the same check passed after a change and failed after a later one, and never
/// passed again.
fn regressed_check(t: &Trajectory, acts: &[Action<'_>], changes: &Changes, p: &Profile, f: &mut Findings) -> bool {
    let test = |a: &Action<'_>| a.verification.is_some();
    // A run that died setting up, before it reached the changed code, failed nothing of it; one
    // that ran tests besides (unittest goes on after a module that failed to import) did.
    static TESTS_RAN: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(?m)\b\d+ (?:passed|failed)\b|^Ran \d+ tests?\b").expect("valid regex"));
    for (i, a) in acts.iter().enumerate().filter(|(_, a)| test(a) && a.passed == Some(true)) {
        let Some(j) = acts[i + 1..]
            .iter()
            .position(|b| b.key == a.key && b.passed == Some(false) && (may_reach(b, &changes.files, p) || TESTS_RAN.is_match(b.output())))
            .map(|k| i + 1 + k)
        else {
            continue;
        };
        let changed_between = changes.matters[i + 1..j].iter().any(|m| *m);
        let passed_again = acts[j + 1..].iter().any(|b| b.key == a.key && b.passed == Some(true));
        // A check whose own script or test file was written in between is another check.
        let own_files_changed =
            || acts[i + 1..j].iter().filter(|c| c.mutated()).flat_map(|c| &c.writes).any(|w| names_file(&acts[j], w, p));
        if changed_between && !passed_again && !own_files_changed() {
            let b = &acts[j];
            let mut steps = vec![a.shown_at(), b.shown_at()];
            steps.dedup();
            let ex = a.command.as_deref().map_or(a.name, head);
            let mut e = on_steps(t, "flag-regressed", "regressed", steps, ex);
            e.detail = Some("the same check passed, then failed after a later change, and never passed again".into());
            f.flag("regressed", e);
            return true;
        }
    }
    false
}

/// `regressed`, a fix fitted back to a test's old expectation: a change to the repository's
/// code made a test fail in the agent's own run; it changed that code again, the new change
/// stays, a run of the test's file then passed, and the verifier's version of that very test
/// fails. Benchmarks update the tests a fix has to change (SWE-bench's FAIL_TO_PASS are often
/// existing tests given new expectations), so the change that broke the old test was the fix,
/// and the rework undid it. Only such tests (the verdict's `FAIL_TO_PASS` group): a test meant
/// to keep passing that fails at the end was broken later, which is the other `regressed`. Not
/// when the agent wrote the test's file (or another repository test file) before the passing
/// run: that is `edited_tests`; not when the test failed before the change, nor on an error of
/// the change itself (a NameError, an ImportError).
fn fitted_to_old_tests(t: &Trajectory, acts: &[Action<'_>], changes: &Changes, p: &Profile, f: &mut Findings) {
    use super::test_errors::{failed, failure_of, test_id, test_name};
    // A failure that is a bug of the change itself (a typo, a missing import), which the rework
    // fixed, is not an expectation the change went against.
    static OWN_BUG: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b(?:NameError|ImportError|ModuleNotFoundError|SyntaxError|IndentationError|AttributeError)\b")
            .expect("valid regex")
    });
    let verdict: Vec<(&str, String)> = t
        .outcome
        .tests
        .iter()
        .filter(|r| r.name.starts_with("FAIL_TO_PASS: ") && matches!(r.status.as_str(), "failed" | "fail" | "error"))
        .map(|r| (test_id(&r.name).split("::").next().unwrap_or(""), test_name(&r.name)))
        .collect();
    if verdict.is_empty() {
        return;
    }
    let code = |w: &String| !p.test_files.is_match(w) && !changes.created.contains(w) && !changes::opaque(w);
    // The tests each failing action's output shows failing, read once.
    let fails: Vec<BTreeSet<String>> =
        acts.iter().map(|a| if a.passed == Some(false) { failed(a.output()) } else { BTreeSet::new() }).collect();
    for (r, run) in acts.iter().enumerate().filter(|(_, a)| a.passed == Some(false) && checks(a)) {
        let Some((file, name)) = verdict.iter().find(|(_, n)| fails[r].contains(n)) else { continue };
        if failure_of(run.output(), name).is_some_and(|text| OWN_BUG.is_match(text)) {
            continue;
        }
        let Some(c) = acts[..r].iter().rposition(|b| b.mutated() && b.writes.iter().any(code)) else { continue };
        // The test failed before the change too: the change did not break it.
        if fails[..c].iter().any(|shown| shown.contains(name)) {
            continue;
        }
        let broke: BTreeSet<&String> = acts[..r].iter().filter(|b| b.mutated()).flat_map(|b| &b.writes).filter(|w| code(w)).collect();
        let runs_file = |b: &Action<'_>| {
            let base = file.rsplit('/').next().unwrap_or(file);
            !base.is_empty() && (b.command.as_deref().is_some_and(|c| c.contains(base)) || b.output().contains(*file))
        };
        for w in r + 1..acts.len() {
            let again = &acts[w];
            if !changes.matters[w] || !again.writes.iter().any(|x| broke.iter().any(|b| changes::same_file(b, x))) {
                continue;
            }
            let Some(k) = acts[w + 1..].iter().position(|b| b.passed == Some(true) && runs_file(b)).map(|k| w + 1 + k) else { break };
            // It wrote the test's file at any point before the passing run, or another of the
            // repository's test files (not a scratch test of its own).
            let wrote_test = acts[..k]
                .iter()
                .filter(|b| b.mutates())
                .flat_map(|b| &b.writes)
                .any(|x| changes::same_file(x, file) || (p.test_files.is_match(x) && !changes.created.contains(x)));
            if wrote_test || failed(acts[k].output()).contains(name) {
                break;
            }
            let mut e = on_steps(
                t,
                "flag-regressed",
                "regressed",
                vec![acts[c].at.step, run.shown_at(), again.at.step, acts[k].shown_at()],
                call_excerpt(t, again),
            );
            e.detail = Some(format!(
                "its change (step {}) made {name} fail in its own run (step {}); it changed {} again (step {}) until that test passed (step {}), and the verifier's {name} fails: the fix was fitted back to the test's old expectation",
                acts[c].at.step,
                run.shown_at(),
                again.writes.first().map_or("the code", String::as_str),
                again.at.step,
                acts[k].shown_at()
            ));
            f.flag("regressed", e);
            return;
        }
    }
}

/// Whether check `a` names file `w` as its own: a script it runs, or a test file (the profile's
/// `test_files`) among its command's arguments (`pytest tests/test_m.py::test_a`). Not a file
/// it sends its output to (`| tee test_output.log`, `> log`), nor a module it tests
/// (`pytest --doctest-modules pkg/m.py`): changing that is changing the code under check.
fn names_file(a: &Action<'_>, w: &str, p: &Profile) -> bool {
    if a.runs.iter().any(|r| changes::same_file(w, r)) {
        return true;
    }
    if !p.test_files.is_match(w) {
        return false;
    }
    a.command.as_deref().is_some_and(|c| {
        c.split(['|', ';', '&', '\n'])
            .filter(|cmd| cmd.split_whitespace().next() != Some("tee"))
            .filter_map(|cmd| cmd.split(['<', '>']).next())
            .flat_map(|args| args.split(|ch: char| ch.is_whitespace() || matches!(ch, '\'' | '"' | '(' | ')')))
            .any(|word| changes::same_file(w, word.split("::").next().unwrap_or(word)))
    })
}

/// How many of its distinct closing replies are its last words.
const CLOSING_REPLIES: usize = 5;

/// `false_done`: its last words claim success: its closing replies (the replies with words in
/// them since its last change, latest first, the same reply pasted again counted once, at most
/// [`CLOSING_REPLIES`], up to one that claims or gives up: a harness may close with the diff
/// pasted again, or with housekeeping calls, after the words that claim),
/// with what it submitted on answer tasks; or it finished again after its harness asked it to
/// confirm that the task is complete (terminus's `mark_task_complete`).
fn claimed_done(t: &Trajectory, acts: &[Action<'_>], changes: &Changes, p: &Profile, f: &mut Findings) {
    let since = changes.last().map_or(0, |i| acts[i].at.step as usize);
    let mut seen: Vec<String> = Vec::new();
    // The closing replies, latest first; a one-line reply that says something before it
    // introduces what follows ("Good! The patch looks correct. Now let me submit it:") is read
    // too, without taking a closing reply's place.
    let replies = t.steps[since.min(t.steps.len())..].iter().rev().filter(|s| s.role == Role::Assistant && s.is_main_agent());
    for s in replies {
        let text = final_text(s);
        if !super::mechanics::says_before_introducing(&s.text) {
            // A reply pasted again (a harness that repeats its final message) is one reply.
            if !super::mechanics::has_prose(&text) || seen.iter().any(|x| x.trim() == text.trim()) {
                continue;
            }
            if seen.len() == CLOSING_REPLIES {
                break;
            }
            seen.push(text.clone());
        }
        if p.resignation.is_match(&text) {
            return;
        }
        if let Some(mm) = super::mechanics::claim(p, &text) {
            let ex = window(&text, mm.range());
            if s.evidence_texts().iter().any(|x| x.contains(ex)) {
                f.flag("false_done", on_steps(t, "flag-false-done", "false_done", vec![s.index], ex));
            }
            return;
        }
    }
    // The harness asked it to confirm that the task is complete, and it finished again: a
    // declaration, whatever its last words were.
    if let Some(a) = acts.last().filter(|a| a.finish && a.ok != Some(false))
        && let Some((asked, q)) = acts.iter().rev().skip(1).filter(|b| b.finish).find_map(|b| {
            let r = b.result_step.map_or(b.at.step, |s| s) as usize;
            t.steps.get(r).and_then(|s| s.tool_results.iter().find_map(|x| p.confirms_finish.find(&x.output).map(|m| (r, m.as_str()))))
        })
    {
        let mut e = on_steps(t, "flag-false-done", "false_done", vec![u32::try_from(asked).unwrap_or(u32::MAX), a.at.step], q);
        e.detail = Some(format!("asked to confirm that the task is complete, it called `{}` again", a.name));
        f.flag("false_done", e);
    }
}

fn unclassified_reason(t: &Trajectory, m: &Mechanics, changes: &Changes, oracle: &Oracle<'_>) -> String {
    // Changes made, a patch submitted, and none of them in it: the record and the submission
    // may not be of the same run (a published run whose files were swapped, or a placeholder).
    let apart = match &changes.patch {
        Some(p) if !p.is_empty() && m.successful_mutations > 0 && changes.last().is_none() => format!(
            " (the submitted patch changes {}, none of the files the record shows it changing: the record and the submission may not be of the same run)",
            p.iter().take(3).map(|f| f.path.as_str()).collect::<Vec<_>>().join(", ")
        ),
        _ => String::new(),
    };
    format!(
        "checked: termination {} (no infrastructure or budget), {} tool calls against {} (no rejected unknown tool), {} successful changes{apart} and no plan text, final message {:?}, {} steps{}",
        crate::util::snake(&m.termination),
        m.tool_calls,
        oracle.source,
        m.successful_mutations,
        m.final_message,
        m.steps,
        if t.steps.is_empty() { " (the record has no steps: nothing to read)" } else { "" }
    )
}
