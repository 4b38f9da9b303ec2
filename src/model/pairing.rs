//! Pairs tool results with the calls they answer.
//!
//! Formats differ: most carry call ids, some only tool names, some neither (text actions). One
//! routine serves them all so the rule is the same everywhere: ids first (the latest open call
//! with the id, where ids are reused); then, for results
//! without an id, the earliest open call with the same name; then, for results with neither, the
//! earliest open call before them. A result whose id matches no call stays unpaired and is listed
//! in `Trajectory::unpaired_results`, because guessing would invent evidence.

use std::collections::HashMap;

use super::trajectory::{CallRef, Trajectory, UnpairedResult};

/// Renumbers steps and pairs every result that is not paired yet.
pub fn pair_results(t: &mut Trajectory) {
    for (i, step) in t.steps.iter_mut().enumerate() {
        step.index = to_u32(i);
    }

    let mut open: Vec<CallRef> = Vec::new();
    // Every call of an id, in order: ids are reused (a model that names each call after its
    // function), and a result answers the latest open call with its id before it.
    let mut by_id: HashMap<&str, Vec<CallRef>> = HashMap::new();
    let mut taken: std::collections::HashSet<CallRef> = std::collections::HashSet::new();
    for step in &t.steps {
        for r in &step.tool_results {
            if let Some(c) = r.call {
                taken.insert(c);
            }
        }
    }
    for (s, step) in t.steps.iter().enumerate() {
        for (c, call) in step.tool_calls.iter().enumerate() {
            let r = CallRef { step: to_u32(s), call: to_u32(c) };
            if let Some(id) = call.id.as_deref() {
                by_id.entry(id).or_default().push(r);
            }
            if !taken.contains(&r) {
                open.push(r);
            }
        }
    }

    // Decide pairings first (immutable borrow), then apply them.
    let mut assignments: Vec<(usize, usize, CallRef)> = Vec::new();
    for (s, step) in t.steps.iter().enumerate() {
        for (ri, result) in step.tool_results.iter().enumerate() {
            if result.call.is_some() {
                continue;
            }
            let found = if let Some(id) = result.call_id.as_deref() {
                by_id.get(id).and_then(|calls| {
                    // The latest step before the result with an open call of this id, and in it
                    // the first open one (parallel calls are answered in order).
                    let upto = calls.partition_point(|c| c.step as usize <= s);
                    let step = calls[..upto].iter().rev().find(|c| !taken.contains(c))?.step;
                    calls[..upto].iter().copied().find(|c| c.step == step && !taken.contains(c))
                })
            } else {
                let name = result.name.as_deref();
                open.iter().copied().filter(|c| c.step as usize <= s && !taken.contains(c)).find(|c| match name {
                    Some(n) => t.steps[c.step as usize].tool_calls[c.call as usize].name == n,
                    None => true,
                })
            };
            if let Some(c) = found {
                taken.insert(c);
                assignments.push((s, ri, c));
            }
        }
    }
    for (s, ri, c) in assignments {
        t.steps[s].tool_results[ri].call = Some(c);
    }

    t.unpaired_results = t
        .steps
        .iter()
        .enumerate()
        .flat_map(|(s, step)| {
            step.tool_results
                .iter()
                .enumerate()
                .filter(|(_, r)| r.call.is_none())
                .map(move |(ri, _)| UnpairedResult { step: to_u32(s), result: to_u32(ri) })
        })
        .collect();
}

/// Calls that no result answers.
#[must_use]
pub fn unanswered_calls(t: &Trajectory) -> Vec<CallRef> {
    let answered: std::collections::HashSet<CallRef> = t.steps.iter().flat_map(|s| s.tool_results.iter().filter_map(|r| r.call)).collect();
    t.calls().map(|(r, _)| r).filter(|r| !answered.contains(r)).collect()
}

fn to_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, Step, ToolCall, ToolResult};

    fn traj(steps: Vec<Step>) -> Trajectory {
        Trajectory { steps, ..Trajectory::new("t", "h", "test", 1, Vec::new()) }
    }

    fn call(id: Option<&str>, name: &str) -> ToolCall {
        ToolCall { id: id.map(Into::into), name: name.into(), arguments: serde_json::Value::Null, raw_arguments: None }
    }

    #[test]
    fn pairs_by_id_then_by_name_then_by_order_and_keeps_strays() {
        let mut a = Step::new(Role::Assistant, "");
        a.tool_calls = vec![call(Some("x"), "bash"), call(None, "read"), call(None, "edit")];
        let mut tool = Step::new(Role::Tool, "");
        let mut by_id = ToolResult::new("1");
        by_id.call_id = Some("x".into());
        let mut by_name = ToolResult::new("2");
        by_name.name = Some("edit".into());
        let by_order = ToolResult::new("3");
        let mut stray = ToolResult::new("4");
        stray.call_id = Some("nope".into());
        tool.tool_results = vec![by_name, by_id, by_order, stray];
        let mut t = traj(vec![a, tool]);
        pair_results(&mut t);
        let r = &t.steps[1].tool_results;
        assert_eq!(r[0].call, Some(CallRef { step: 0, call: 2 }));
        assert_eq!(r[1].call, Some(CallRef { step: 0, call: 0 }));
        assert_eq!(r[2].call, Some(CallRef { step: 0, call: 1 }));
        assert_eq!(r[3].call, None);
        assert_eq!(t.unpaired_results, vec![UnpairedResult { step: 1, result: 3 }]);
        assert!(unanswered_calls(&t).is_empty());
    }

    /// Inspect logs where every call's id is its function's name: each result answers the
    /// latest call with its id, so the last call's own result is found and none is left over.
    #[test]
    fn a_reused_id_pairs_each_result_with_the_latest_call_before_it() {
        let mut steps = Vec::new();
        for k in 0..3 {
            let mut a = Step::new(Role::Assistant, "");
            a.tool_calls = vec![call(Some("python_exec"), "python_exec")];
            let mut tool = Step::new(Role::Tool, "");
            let mut r = ToolResult::new(k.to_string());
            r.call_id = Some("python_exec".into());
            tool.tool_results = vec![r];
            steps.extend([a, tool]);
        }
        let mut t = traj(steps);
        pair_results(&mut t);
        let paired: Vec<Option<CallRef>> = (0..3).map(|k| t.steps[2 * k + 1].tool_results[0].call).collect();
        assert_eq!(paired, (0..3).map(|k| Some(CallRef { step: 2 * k, call: 0 })).collect::<Vec<_>>());
        assert!(unanswered_calls(&t).is_empty());

        // Two calls of one reply under the same id are answered in order.
        let mut a = Step::new(Role::Assistant, "");
        a.tool_calls = vec![call(Some("python_exec"), "python_exec"), call(Some("python_exec"), "python_exec")];
        let mut tool = Step::new(Role::Tool, "");
        tool.tool_results = (0..2)
            .map(|k| {
                let mut r = ToolResult::new(k.to_string());
                r.call_id = Some("python_exec".into());
                r
            })
            .collect();
        let mut t = traj(vec![a, tool]);
        pair_results(&mut t);
        let paired: Vec<Option<CallRef>> = t.steps[1].tool_results.iter().map(|r| r.call).collect();
        assert_eq!(paired, [Some(CallRef { step: 0, call: 0 }), Some(CallRef { step: 0, call: 1 })]);
    }

    #[test]
    fn a_result_never_pairs_with_a_later_call() {
        let tool = {
            let mut s = Step::new(Role::Tool, "");
            s.tool_results = vec![ToolResult::new("early")];
            s
        };
        let mut a = Step::new(Role::Assistant, "");
        a.tool_calls = vec![call(None, "bash")];
        let mut t = traj(vec![tool, a]);
        pair_results(&mut t);
        assert_eq!(t.steps[0].tool_results[0].call, None);
        assert_eq!(unanswered_calls(&t), vec![CallRef { step: 1, call: 0 }]);
    }
}
