//! How a sample ended, as the log wrote it, for the interpretation pass
//! (`rules/harnesses/inspect.toml` says what it means): the limit that halted the sample
//! (`sample.limit`, its type as the status), the error that stopped it (`sample.error`), the
//! final output's stop reason; and the amounts Inspect records for the limit that fired and
//! for the answers a solver with a submission limit took.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::header::LogContext;
use super::sample::{RawSample, SampleSource, total_tokens};
use crate::ingest::adapters::shared::common::num;
use crate::model::{Role, Trajectory};

#[derive(Deserialize)]
struct RawEvalError<'a> {
    #[serde(borrow, default)]
    message: std::borrow::Cow<'a, str>,
}

/// Records the sample's end statuses (limit first, then stop reason), the error that ended
/// it, and limits with consumption.
pub fn record(t: &mut Trajectory, s: &RawSample<'_>, at: &SampleSource<'_>, ctx: &LogContext, ran: &BTreeMap<String, u64>) {
    if let Some(raw) = s.limit {
        limit(t, raw, s, at);
    }
    let stop = s.output.as_ref().and_then(|o| o.choices.first()).and_then(|c| c.stop_reason.as_deref());
    if let Some(stop) = stop {
        t.signals.status("output.choices[0].stop_reason", stop).with_span(at.span_of(stop));
    }
    if let Some(raw) = s.error
        && let Ok(e) = serde_json::from_str::<RawEvalError<'_>>(raw.get())
        && !e.message.is_empty()
    {
        let span = at.span_of(&e.message).or_else(|| at.span_of(raw.get()));
        t.signals.error("sample.error", e.message.as_ref()).with_span(span);
    }
    if let Some(cap) = ctx.max_steps
        && t.signals.limits.steps.is_none()
    {
        #[expect(clippy::cast_precision_loss, reason = "a count of turns")]
        let turns = t.steps.iter().filter(|x| x.role == Role::Assistant && x.is_main_agent()).count() as f64;
        t.signals.limits.steps = Some(cap);
        t.signals.consumed.steps = Some(turns);
    }
    if let Some(sub) = &ctx.submissions {
        // The messages lose the answer that ended a react loop (its text is moved into the
        // reply); the tool events keep every answer that ran.
        let in_messages =
            t.steps.iter().filter(|x| x.role == Role::Assistant).flat_map(|x| &x.tool_calls).filter(|c| c.name == sub.tool).count();
        let answers = in_messages.max(ran.get(&sub.tool).map_or(0, |&n| usize::try_from(n).unwrap_or(usize::MAX)));
        t.signals.limits.attempts = sub.limit;
        #[expect(clippy::cast_precision_loss, reason = "a count of answers")]
        let answers = answers as f64;
        t.signals.consumed.attempts = Some(answers);
    }
}

/// `EvalSampleLimit` (`type`, `limit`): the type is the status; the limit and what the sample
/// used go to the amount they count (messages and turns are steps; `working` is the time spent
/// working, not waiting on retries or rate limits).
#[expect(clippy::cast_precision_loss, reason = "counts of messages, turns and tokens are small")]
fn limit(t: &mut Trajectory, raw: &RawValue, s: &RawSample<'_>, at: &SampleSource<'_>) {
    let Ok(v) = serde_json::from_str::<Value>(raw.get()) else { return };
    let (kind, value) = match &v {
        Value::String(k) => (k.clone(), None),
        Value::Object(o) => {
            (o.get("type").and_then(Value::as_str).map_or_else(|| raw.get().trim().to_string(), ToString::to_string), num(o.get("limit")))
        }
        _ => (raw.get().trim().to_string(), None),
    };
    let (lim, used) = (&mut t.signals.limits, &mut t.signals.consumed);
    match kind.as_str() {
        "message" => (lim.steps, used.steps) = (value, Some(s.messages.len() as f64)),
        "turn" => {
            let turns = s.turn_count.unwrap_or_else(|| t.steps.iter().filter(|x| x.role == Role::Assistant).count() as u64);
            (lim.steps, used.steps) = (value, Some(turns as f64));
        }
        "token" => (lim.tokens, used.tokens) = (value, s.token_limit_usage.map(|n| n as f64).or_else(|| total_tokens(s))),
        "time" => (lim.wall_seconds, used.wall_seconds) = (value, s.total_time),
        "working" => (lim.wall_seconds, used.wall_seconds) = (value, s.working_time),
        "cost" => (lim.cost_usd, used.cost_usd) = (value, t.usage.cost_usd),
        "context" => lim.context_tokens = value,
        // `operator`, `custom` and types newer than this reader measure nothing the record has.
        _ => {}
    }
    t.signals.status("sample.limit", kind).with_span(at.span_of(raw.get()));
}
