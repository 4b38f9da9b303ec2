//! Tool results the harness rejected because they named no tool it has, and replies it could
//! not turn into an action: read from the `[[unknown_tool]]` and `[[format_error]]` tables.

use super::{Report, first_line};
use crate::model::{Role, Trajectory};
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
/// entry recognizes.
pub fn mark_format_errors(t: &mut Trajectory, p: &Profile, report: &mut Report) {
    let mut marks = Vec::new();
    for (i, step) in t.steps.iter().enumerate() {
        if step.role != Role::Assistant || step.format_error.is_some() || !step.tool_calls.is_empty() {
            continue;
        }
        let own = step.tool_results.iter().map(|r| r.output.as_str());
        let next = t.steps.get(i + 1).filter(|n| n.role != Role::Assistant);
        let answer =
            next.into_iter().flat_map(|n| std::iter::once(n.text.as_str()).chain(n.tool_results.iter().map(|r| r.output.as_str())));
        let found =
            own.chain(answer).find_map(|text| p.meanings.table(Table::FormatError).find(|e| e.find(text).is_some()).map(|e| (text, e)));
        if let Some((text, e)) = found {
            let complaint: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).take(3).collect();
            marks.push((i, complaint.join("\n"), e.id.clone()));
        }
    }
    for (i, complaint, id) in marks {
        t.steps[i].format_error = Some(complaint);
        report.fired.push(id);
    }
}
