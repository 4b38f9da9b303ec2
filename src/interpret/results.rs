//! Tool results the harness rejected because they named no tool it has, and replies it could
//! not turn into an action: read from the `[[unknown_tool]]` and `[[format_error]]` tables.

use super::{Report, first_line};
use std::collections::HashMap;

use crate::model::{CallRef, Role, Trajectory};
use crate::rules::Profile;
use crate::rules::meanings::Table;

/// Longest rejection message kept.
const MESSAGE: usize = super::KEPT;

/// Marks each result whose output (or error type) an `[[unknown_tool]]` entry recognizes. A
/// message naming another tool than the call's, or a call to a tool the run itself declared,
/// is not a rejection of that call.
pub fn mark_unknown_tools(t: &mut Trajectory, p: &Profile, report: &mut Report) {
    let declared: Vec<&str> = t.declared_tools.iter().flatten().map(|d| d.name.as_str()).collect();
    let mut marks = Vec::new();
    for (s, step) in t.steps.iter().enumerate() {
        for (r, res) in step.tool_results.iter().enumerate() {
            if res.unknown_tool.is_some() {
                continue;
            }
            let call_name = res.call.and_then(|c| t.steps.get(c.step as usize)?.tool_calls.get(c.call as usize)).map(|c| c.name.as_str());
            if call_name.is_some_and(|n| declared.contains(&n)) {
                continue;
            }
            for e in p.meanings.table(Table::UnknownTool).filter(|e| res.is_error || !e.errors_only) {
                let text = if e.reads("error_type") && e.field.is_some() { res.error_type.as_deref() } else { Some(res.output.as_str()) };
                let Some(hit) = text.and_then(|x| e.find(x)) else { continue };
                if let (Some(named), Some(call)) = (hit.name.as_deref(), call_name.or(res.name.as_deref()))
                    && named != call
                {
                    continue;
                }
                let first = first_line(&res.output, MESSAGE);
                let message = if first.is_empty() { hit.matched.clone() } else { first };
                marks.push((s, r, message, e.id.clone()));
                break;
            }
        }
    }
    for (s, r, message, id) in marks {
        let res = &mut t.steps[s].tool_results[r];
        res.unknown_tool = Some(message);
        res.is_error = true;
        report.fired.push(id);
    }
}

/// Marks an assistant reply without an action as a format error when the harness's answer to
/// it (the reply's own observation, or the next message) is a complaint a `[[format_error]]`
/// entry recognizes; and a reply with calls when every call was answered by a complaint of an
/// entry with `in_call_results`: those calls never ran, so their results become errors.
pub fn mark_format_errors(t: &mut Trajectory, p: &Profile, report: &mut Report) {
    // Where each call was answered; only profiles whose harness answers a refused reply in a
    // call's result need it.
    let mut results: HashMap<CallRef, Vec<(usize, usize)>> = HashMap::new();
    if p.meanings.table(Table::FormatError).any(|e| e.in_call_results) {
        for (s, step) in t.steps.iter().enumerate() {
            for (r, res) in step.tool_results.iter().enumerate() {
                if let Some(c) = res.call {
                    results.entry(c).or_default().push((s, r));
                }
            }
        }
    }
    let mut marks = Vec::new();
    let mut refused = Vec::new();
    for (i, step) in t.steps.iter().enumerate() {
        if step.role != Role::Assistant || step.format_error.is_some() {
            continue;
        }
        if !step.tool_calls.is_empty() {
            let mut answers = Vec::new();
            let all_refused = (0..step.tool_calls.len()).all(|c| {
                let at = CallRef { step: u32::try_from(i).unwrap_or(u32::MAX), call: u32::try_from(c).unwrap_or(u32::MAX) };
                let rs = results.get(&at).map_or(&[][..], Vec::as_slice);
                !rs.is_empty()
                    && rs.iter().all(|&(s, r)| {
                        let text = t.steps[s].tool_results[r].output.as_str();
                        match p.meanings.table(Table::FormatError).find(|e| e.in_call_results && e.matches(text)) {
                            Some(e) => {
                                answers.push((s, r, text, e.id.clone()));
                                true
                            }
                            None => false,
                        }
                    })
            });
            if all_refused && let Some(&(_, _, text, ref id)) = answers.first() {
                marks.push((i, complaint_of(text), id.clone()));
                refused.extend(answers.iter().map(|&(s, r, _, _)| (s, r)));
            }
            continue;
        }
        let own = step.tool_results.iter().map(|r| r.output.as_str());
        let next = t.steps.get(i + 1).filter(|n| n.role != Role::Assistant);
        let answer =
            next.into_iter().flat_map(|n| std::iter::once(n.text.as_str()).chain(n.tool_results.iter().map(|r| r.output.as_str())));
        let found = own.chain(answer).find_map(|text| p.meanings.table(Table::FormatError).find(|e| e.matches(text)).map(|e| (text, e)));
        if let Some((text, e)) = found {
            marks.push((i, complaint_of(text), e.id.clone()));
        }
    }
    for (i, complaint, id) in marks {
        t.steps[i].format_error = Some(complaint);
        report.fired.push(id);
    }
    for (s, r) in refused {
        t.steps[s].tool_results[r].is_error = true;
    }
}

/// The complaint as kept: its first three non-blank lines.
fn complaint_of(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).take(3).collect();
    lines.join("\n")
}
