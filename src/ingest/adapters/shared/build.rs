//! The step builder every adapter uses: push a step with its span and time, find the call a
//! result answers by id, tally what was skipped, and hand the steps, notes and time bounds to
//! the record in one place — so no adapter keeps a private copy of this bookkeeping.

use std::collections::{BTreeMap, HashMap};

use crate::model::{CallRef, SourceSpan, Step, ToolResult, Trajectory};

/// Steps under construction, with the indexes adapters need while reading.
#[derive(Debug, Default)]
pub struct StepBuilder {
    pub steps: Vec<Step>,
    calls: HashMap<String, CallRef>,
    notes: Vec<String>,
    ignored: BTreeMap<String, usize>,
    first_time: Option<(jiff::Timestamp, String)>,
    last_time: Option<(jiff::Timestamp, String)>,
}

/// A step index as the model stores it.
#[must_use]
pub fn to_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

impl StepBuilder {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `step` with where it was read and when; indexes its call ids. Returns its index.
    pub fn push(&mut self, mut step: Step, span: Option<SourceSpan>, time: Option<String>) -> usize {
        let ix = self.steps.len();
        step.index = to_u32(ix);
        if step.source_span.is_none() {
            step.source_span = span;
        }
        if step.timestamp.is_none() {
            step.timestamp = time;
        }
        if let Some(ts) = &step.timestamp {
            self.saw_time(ts);
        }
        for (c, call) in step.tool_calls.iter().enumerate() {
            if let Some(id) = &call.id {
                self.index_call(id, CallRef { step: to_u32(ix), call: to_u32(c) });
            }
        }
        self.steps.push(step);
        ix
    }

    /// Adds a call to an existing step (a reply streamed over several lines) and indexes it.
    pub fn add_call(&mut self, step: usize, call: crate::model::ToolCall) -> Option<CallRef> {
        let s = self.steps.get_mut(step)?;
        let r = CallRef { step: to_u32(step), call: to_u32(s.tool_calls.len()) };
        if let Some(id) = &call.id {
            let id = id.clone();
            s.tool_calls.push(call);
            self.index_call(&id, r);
        } else {
            s.tool_calls.push(call);
        }
        Some(r)
    }

    /// Indexes a call by its id. A later step's call with an id seen before takes it over: some
    /// models reuse ids (Inspect logs where every call's id is its function's name), and a
    /// result answers the latest call with its id. Within one step the first keeps it.
    fn index_call(&mut self, id: &str, r: CallRef) {
        match self.calls.get_mut(id) {
            Some(old) if old.step < r.step => *old = r,
            Some(_) => {}
            None => {
                self.calls.insert(id.to_string(), r);
            }
        }
    }

    /// The call with this id, if one was pushed.
    #[must_use]
    pub fn call(&self, id: &str) -> Option<CallRef> {
        self.calls.get(id).copied()
    }

    /// A result that answers the call `id`, paired now when the call is known.
    #[must_use]
    pub fn result_for(&self, id: Option<&str>, output: impl Into<String>) -> ToolResult {
        let mut r = ToolResult::new(output);
        r.call = id.and_then(|i| self.call(i));
        r.call_id = id.map(ToString::to_string);
        r
    }

    /// A time the transcript shows outside a step (an event's timestamp).
    pub fn saw_time(&mut self, ts: &str) {
        // Formats that time their events also time the step made of them: the same string
        // again changes neither bound, so it is not parsed again.
        if [&self.first_time, &self.last_time].iter().any(|b| b.as_ref().is_some_and(|(_, s)| s == ts)) {
            return;
        }
        let Some(t) = crate::util::parse_time(ts) else { return };
        if self.first_time.as_ref().is_none_or(|(f, _)| t < *f) {
            self.first_time = Some((t, ts.to_string()));
        }
        if self.last_time.as_ref().is_none_or(|(l, _)| t > *l) {
            self.last_time = Some((t, ts.to_string()));
        }
    }

    /// A note a reader of the record must see.
    pub fn note(&mut self, note: impl Into<String>) {
        let n = note.into();
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// Counts an entry of a kind the adapter does not turn into steps.
    pub fn ignore(&mut self, kind: &str) {
        *self.ignored.entry(kind.to_string()).or_default() += 1;
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The steps so far.
    #[must_use]
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The last step, to extend.
    pub fn last_mut(&mut self) -> Option<&mut Step> {
        self.steps.last_mut()
    }

    /// The steps and the notes (the tally of entries not turned into steps last), for steps that
    /// join another record (a sub-agent's, inside its session).
    #[must_use]
    pub fn into_parts(self) -> (Vec<Step>, Vec<String>) {
        let mut notes = self.notes;
        if !self.ignored.is_empty() {
            let list: Vec<String> = self.ignored.iter().map(|(k, n)| format!("{n} × {k}")).collect();
            notes.push(format!("entries not turned into steps: {}", list.join(", ")));
        }
        (self.steps, notes)
    }

    /// Moves the steps into `t`, with the notes, a note of what was skipped, and the time bounds
    /// where `t` has none.
    pub fn finish(mut self, t: &mut Trajectory) {
        let times = (self.first_time.take(), self.last_time.take());
        let (steps, notes) = self.into_parts();
        t.steps.extend(steps);
        t.notes.extend(notes);
        if let (Some((a, a_s)), Some((b, b_s))) = times {
            if t.started_at.is_none() {
                t.started_at = Some(a_s);
            }
            if t.ended_at.is_none() {
                t.ended_at = Some(b_s);
            }
            if t.usage.wall_seconds.is_none() {
                t.usage.wall_seconds = Some(b.duration_since(a).as_secs_f64());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, ToolCall};

    #[test]
    fn pushes_index_calls_and_bound_times() {
        let mut b = StepBuilder::new();
        let mut a = Step::new(Role::Assistant, "run it");
        a.tool_calls.push(ToolCall { id: Some("c1".into()), name: "bash".into(), arguments: serde_json::Value::Null, raw_arguments: None });
        let ix = b.push(a, None, Some("2026-01-01T00:00:10Z".into()));
        assert_eq!(ix, 0);
        let r = b.result_for(Some("c1"), "ok");
        assert_eq!(r.call, Some(CallRef { step: 0, call: 0 }));
        assert_eq!(b.call("c1"), Some(CallRef { step: 0, call: 0 }));
        b.push(Step::new(Role::Tool, ""), None, Some("2026-01-01T00:00:00Z".into()));
        b.ignore("progress");
        b.ignore("progress");
        let mut t = Trajectory::new("t", "h", "test", 1, Vec::new());
        b.finish(&mut t);
        assert_eq!(t.started_at.as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(t.usage.wall_seconds, Some(10.0));
        assert_eq!(t.notes, vec!["entries not turned into steps: 2 × progress".to_string()]);
    }
}
