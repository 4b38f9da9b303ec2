//! The mechanics of a run: counts the report tables print and the rules read.

use std::collections::BTreeMap;

use super::actions::Action;
use super::changes::Changes;
use crate::model::{FinalMessage, Mechanics, Role, Step, Trajectory};
use crate::rules::profile::Profile;

/// The main agent's last reply (sub-agents, sidechains and abandoned branches excluded).
#[must_use]
pub fn final_reply(t: &Trajectory) -> Option<&Step> {
    reply_before(t, t.steps.len())
}

/// The main agent's last reply before step `end`.
#[must_use]
pub fn reply_before(t: &Trajectory, end: usize) -> Option<&Step> {
    t.steps[..end.min(t.steps.len())].iter().rev().find(|s| s.role == Role::Assistant && s.is_main_agent())
}

/// A reply of one line that introduces what follows ("Now let me submit it:") but says
/// something first ("Good! The patch looks correct. Now let me submit it:"): not a closing reply
/// of its own, but its first sentences can still claim success.
#[must_use]
pub fn says_before_introducing(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    match (lines.next(), lines.next()) {
        (Some(one), None) if !one.starts_with("```") => one.strip_suffix(':').is_some_and(|head| head.contains(['.', '!', '?'])),
        _ => false,
    }
}

/// Whether `text` says something outside its fenced code blocks, beyond one line that only
/// introduces them ("Here's the final diff:").
pub fn has_prose(text: &str) -> bool {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && !line.trim().is_empty() {
            lines.push(line.trim());
        }
    }
    match lines.as_slice() {
        [] => false,
        [one] => !one.ends_with(':'),
        _ => true,
    }
}

/// The text a final reply says things with: its text and the message of a finish call.
#[must_use]
pub fn final_text(step: &Step) -> String {
    let mut s = step.text.clone();
    for c in &step.tool_calls {
        for key in ["message", "result", "answer", "summary", "final_answer", "content"] {
            if let Some(m) = c.arguments.get(key).and_then(serde_json::Value::as_str) {
                s.push('\n');
                s.push_str(m);
            }
        }
    }
    s
}

/// The first claim of success in `text` that the words before it in its sentence do not hedge:
/// "I could not make sure all tests pass" and "let me check whether all tests pass" claim
/// nothing.
#[must_use]
pub fn claim<'t>(p: &Profile, text: &'t str) -> Option<regex::Match<'t>> {
    static HEDGE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)\b(?:not|never|no longer|cannot|can't|couldn't|didn't|won't|make sure|ensure|verify|confirm|check(?:ing)? (?:that|if|whether)|whether|if|until|once|to see)\b|n't\b")
            .expect("valid regex")
    });
    p.claims_done.find_iter(text).into_iter().find(|m| !HEDGE.is_match(sentence_before(text, m.start())))
}

/// The words of `text` before byte `at` in the sentence that holds it: what qualifies a phrase
/// found there (a hedge before a claim, a condition before a plan).
#[must_use]
pub fn sentence_before(text: &str, at: usize) -> &str {
    let start = text[..at].rfind(['.', '!', '?', '\n', '…']).map_or(0, |i| i + text[i..].chars().next().map_or(1, char::len_utf8));
    &text[start..at]
}

#[must_use]
pub fn final_message(t: &Trajectory, p: &Profile) -> FinalMessage {
    let Some(step) = final_reply(t) else { return FinalMessage::None };
    let text = final_text(step);
    if p.resignation.is_match(&text) {
        FinalMessage::GivesUp
    } else if claim(p, &text).is_some() {
        FinalMessage::ClaimsDone
    } else if p.asks.is_match(text.trim_end()) {
        FinalMessage::Asks
    } else {
        FinalMessage::None
    }
}

/// Computes the mechanics; `unknown_calls` is the number of calls the registry does not know
/// or the harness rejected as unknown.
#[must_use]
pub fn compute(t: &Trajectory, acts: &[Action<'_>], changes: &Changes, p: &Profile, unknown_calls: u32) -> Mechanics {
    let n = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
    let mut by_name: BTreeMap<String, u32> = BTreeMap::new();
    for a in acts {
        *by_name.entry(a.name.to_string()).or_default() += 1;
    }
    let mut writes: BTreeMap<&str, u32> = BTreeMap::new();
    for a in acts.iter().filter(|a| a.mutated()) {
        for f in &a.writes {
            *writes.entry(f.as_str()).or_default() += 1;
        }
    }
    // Ties go to the first file in path order, so the column is stable.
    let peak = writes.iter().fold(None::<(&str, u32)>, |best, (f, c)| match best {
        Some((_, b)) if b >= *c => best,
        _ => Some((f, *c)),
    });
    let mut longest = 0u32;
    let mut run = 0u32;
    for (i, a) in acts.iter().enumerate() {
        run = if i > 0 && acts[i - 1].key == a.key { run + 1 } else { 1 };
        longest = longest.max(run);
    }
    let (kind, budget) = (t.termination.kind, t.termination.budget);
    let format_steps: Vec<usize> = t.steps.iter().enumerate().filter(|(_, s)| s.format_error.is_some()).map(|(i, _)| i).collect();
    let recoveries = format_steps
        .iter()
        .enumerate()
        .filter(|&(k, &s)| {
            let next_error = format_steps.get(k + 1).copied().unwrap_or(usize::MAX);
            acts.iter().any(|a| (a.at.step as usize) > s && (a.at.step as usize) < next_error && a.ok == Some(true))
        })
        .count();
    // The repository's own files among the changes that stay (not scratch files it made).
    let kept = &changes.files;
    // Without a patch to show it was the repository's, a file the run only removed (one made
    // before the record starts, like a scratch test a previous session left at the top of the
    // tree) is not shown changed.
    // Only outside a test directory (the profile's `test_files` read on the file's directory):
    // `rm tests/test_models.py` removes a repository test.
    let only_removed = |f: &str| {
        changes.patch.is_none()
            && !f.rfind('/').is_some_and(|k| p.test_files.is_match(&f[..=k]))
            && acts
                .iter()
                .filter(|a| a.writes.iter().any(|w| super::changes::same_file(w, f)))
                .all(|a| a.deletes.iter().any(|d| super::changes::same_file(d, f)))
    };
    let changed = |pats: &crate::rules::profile::Phrases| -> Vec<String> {
        let mut v: Vec<String> =
            kept.iter().filter(|f| pats.is_match(f) && changes.is_repository_file(f) && !only_removed(f)).cloned().collect();
        v.sort();
        v
    };
    let step_tokens = |f: fn(&crate::model::Tokens) -> Option<u64>| -> Option<u64> {
        let v: Vec<u64> = t.steps.iter().filter_map(|s| s.tokens.as_ref().and_then(f)).collect();
        (!v.is_empty()).then(|| crate::util::sat_sum(v))
    };
    Mechanics {
        steps: n(t.steps.len()),
        assistant_turns: n(t.steps.iter().filter(|s| s.role == Role::Assistant).count()),
        tool_calls: n(acts.len()),
        tool_calls_by_name: by_name,
        mutations: n(acts.iter().filter(|a| a.mutates()).count()),
        successful_mutations: n(acts.iter().filter(|a| a.mutated()).count()),
        verifications: n(acts.iter().filter(|a| a.verification.is_some()).count()),
        verifications_passed: n(acts.iter().filter(|a| a.verification.is_some() && a.passed == Some(true)).count()),
        verifications_failed: n(acts.iter().filter(|a| a.verification.is_some() && a.passed == Some(false)).count()),
        unknown_tool_calls: unknown_calls,
        tool_errors: n(t.steps.iter().flat_map(|s| &s.tool_results).filter(|r| r.is_error).count()),
        format_errors: n(format_steps.len()),
        format_recoveries: n(recoveries),
        command_timeouts: n(acts.iter().filter(|a| a.timed_out).count()),
        peak_writes: peak.map_or(0, |(_, c)| c),
        peak_write_file: peak.map(|(f, _)| f.to_string()),
        longest_repeat: longest,
        reasoning_only_turns: n(t
            .steps
            .iter()
            .filter(|s| {
                s.role == Role::Assistant
                    && s.text.trim().is_empty()
                    && s.tool_calls.is_empty()
                    && s.reasoning.as_ref().is_some_and(|r| r.text.as_deref().is_some_and(|x| !x.is_empty()) || r.tokens.unwrap_or(0) > 0)
            })
            .count()),
        prompt_tokens: t.usage.prompt_tokens.or_else(|| step_tokens(|k| k.prompt)),
        completion_tokens: t.usage.completion_tokens.or_else(|| step_tokens(|k| k.completion)),
        reasoning_tokens: t.usage.reasoning_tokens.or_else(|| step_tokens(|k| k.reasoning)),
        cost_usd: t.usage.cost_usd,
        wall_seconds: t.usage.wall_seconds,
        termination: kind,
        budget,
        final_message: final_message(t, p),
        test_files_changed: changed(&p.test_files),
        config_files_changed: changed(&p.config_files),
    }
}
