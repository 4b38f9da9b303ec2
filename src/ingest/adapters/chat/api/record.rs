//! One conversation's record: the last request's history with each earlier response's token
//! counts and reasoning, the last reply, usage summed over every call, and what the log says
//! about how it ended (the last call's error or the last reply's finish reason) as signals.

use std::collections::BTreeSet;

use serde_json::Value;

use super::exchange::Exchange;
use super::{Provider, Reply};
use crate::ingest::adapters::chat::gemini;
use crate::ingest::adapters::shared::common::num;
use crate::ingest::source::Source;
use crate::model::{Reasoning, Role, Step, Tokens, Trajectory, Usage};

/// Builds the record of one conversation.
pub fn build(conv: &[Exchange], provider: Provider, task_id: String, src: &Source) -> Trajectory {
    let mut t = crate::model::Trajectory::new(task_id, provider.name(), provider.name(), 1, vec![src.provenance("transcript")]);
    t.provenance.format_version = Some(
        match provider {
            Provider::OpenAi => "openai-chat-completions",
            Provider::Anthropic => "anthropic-messages",
            Provider::Gemini => "gemini-generate-content",
        }
        .into(),
    );
    // The record is the last request plus its response: the response's calls were never
    // answered in the log, however the conversation went on.
    t.signals.last_result_unrecorded = true;
    let last_req = conv.iter().rposition(|e| e.request.is_some());
    // Every answered call counts: its usage, its model, its time.
    let replies: Vec<(usize, &Exchange, Reply)> =
        conv.iter().enumerate().filter_map(|(i, ex)| Some((i, ex, provider.reply(ex.response.as_ref().filter(|_| ex.ok())?)))).collect();
    let mut usage = Usage::default();
    for (_, _, r) in &replies {
        sum_usage(&mut usage, r.tokens.as_ref());
    }
    let calls = replies.len() as u64;
    let models: BTreeSet<String> = replies.iter().filter_map(|(_, _, r)| r.model.clone()).collect();
    let created: Vec<i64> = replies.iter().filter_map(|(_, _, r)| r.created).collect();
    let mut last_reply: Option<Reply> = None;
    let push_reply = |t: &mut Trajectory, ex: &Exchange, reply: &Reply| {
        if let Some(mut step) = reply.step.clone() {
            step.source_span = ex.span;
            t.steps.push(step);
        }
    };
    if let Some(li) = last_req {
        let req = conv[li].request.as_ref().unwrap_or(&Value::Null);
        let h = provider.history(req);
        t.steps = h.steps;
        // Each message's steps take the span of the exchange that first carried the message.
        for (j, &si) in h.msg_step.iter().enumerate() {
            let first = conv.iter().find(|e| e.req_len() > j).and_then(|e| e.span);
            let end = h.msg_step.get(j + 1).copied().unwrap_or(t.steps.len());
            for step in t.steps.iter_mut().take(end.max(si + 1)).skip(si) {
                if step.source_span.is_none() {
                    step.source_span = first;
                }
            }
        }
        // A system prompt outside `messages` came with the first request.
        let first_span = conv.iter().find(|e| e.request.is_some()).and_then(|e| e.span);
        for s in t.steps.iter_mut().filter(|s| s.source_span.is_none()) {
            s.source_span = first_span;
        }
        t.declared_tools = provider.declared_tools(req);
        t.model = req
            .get("model")
            .and_then(Value::as_str)
            .map(ToString::to_string)
            .or_else(|| conv[li].uri.as_deref().filter(|_| provider == Provider::Gemini).and_then(gemini::model_in_uri));
        let mut mismatched = 0usize;
        for (i, ex, reply) in replies {
            if i == li {
                push_reply(&mut t, ex, &reply);
                last_reply = Some(reply);
            } else if i < li {
                // The reply to request i is message `req_len(i)` of the last request.
                let at = h.msg_step.get(ex.req_len()).copied();
                match at.and_then(|s| t.steps.get_mut(s)).filter(|s| s.role == Role::Assistant) {
                    Some(step) => {
                        enrich(step, &reply);
                        // The turn is evidence from the response that produced it.
                        step.source_span = ex.span.or(step.source_span);
                    }
                    None => mismatched += 1,
                }
            }
        }
        if mismatched > 0 {
            t.notes.push(format!("{mismatched} earlier response(s) are not in the last request's history (retried or rewritten turns); their usage is counted"));
        }
    } else {
        // Responses only (batch output): each reply is the whole conversation.
        for (_, ex, reply) in replies {
            push_reply(&mut t, ex, &reply);
            last_reply = Some(reply);
        }
        t.notes.push("the log holds responses without their requests: only the replies are steps".into());
    }
    if let Some(m) = models.iter().next_back() {
        t.model = Some(m.clone());
        if models.len() > 1 {
            t.notes.push(format!("responses came from several models: {}", models.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
    }
    usage.api_calls = Some(calls);
    t.usage = usage;
    if let (Some(a), Some(b)) = (created.iter().min(), created.iter().max()) {
        t.started_at = jiff::Timestamp::from_second(*a).ok().map(|x| x.to_string());
        t.ended_at = jiff::Timestamp::from_second(*b).ok().map(|x| x.to_string());
    }
    let last = conv.last().expect("a conversation has an exchange");
    end_signals(&mut t, last, if last.ok() { last_reply.as_ref() } else { None }, provider);
    for ex in conv {
        if let Some(u) = &ex.unreadable {
            t.notes.push(format!("an exchange has {u}; it was left out"));
        }
        if let (Some(e), false) = (&ex.error, std::ptr::eq(ex, last)) {
            t.notes.push(format!("a call failed and was retried or abandoned: {}", e.chars().take(200).collect::<String>()));
        }
    }
    if let Some(r) = last_reply.as_ref().and_then(|r| r.refusal.as_ref()) {
        t.notes.push(format!("the model refused: {}", r.chars().take(200).collect::<String>()));
    }
    t.notes.push("chat API logs carry no verdict: outcome comes from a verdict file keyed by the task id".into());
    t
}

/// Adds one call's token counts to the run's.
pub fn sum_usage(u: &mut Usage, k: Option<&Tokens>) {
    use crate::util::add_count as add;
    let Some(k) = k else { return };
    add(&mut u.prompt_tokens, k.prompt);
    add(&mut u.completion_tokens, k.completion);
    add(&mut u.reasoning_tokens, k.reasoning);
    add(&mut u.cached_tokens, k.cached);
}

/// Adds to a history step what only its response knew: token counts and reasoning.
fn enrich(step: &mut Step, reply: &Reply) {
    if step.tokens.is_none() {
        step.tokens.clone_from(&reply.tokens);
    }
    let from_reply = reply.step.as_ref().and_then(|s| s.reasoning.clone());
    match (&mut step.reasoning, from_reply) {
        (None, Some(r)) => step.reasoning = Some(r),
        (Some(mine), Some(r)) if mine.tokens.is_none() => mine.tokens = r.tokens,
        _ => {}
    }
    if let (Some(r), Some(n)) = (step.reasoning.as_mut(), reply.tokens.as_ref().and_then(|k| k.reasoning)) {
        r.tokens.get_or_insert(n);
    } else if let Some(n) = reply.tokens.as_ref().and_then(|k| k.reasoning) {
        step.reasoning = Some(Reasoning { text: None, tokens: Some(n) });
    }
}

/// What the log says about how the conversation ended, as it says it: the error of a last call
/// that failed (with its HTTP status), or the last reply's finish reason; an Anthropic batch
/// result's type; the output limit the last request set and what its reply used.
fn end_signals(t: &mut Trajectory, last: &Exchange, reply: Option<&Reply>, provider: Provider) {
    if let Some(kind) = &last.result_type {
        t.signals.status("result.type", kind.clone()).with_span(last.span);
    }
    let failed = last.status.filter(|s| *s >= 400);
    let message = last.error.as_deref().filter(|_| last.response.is_none() || failed.is_some());
    let said_error = failed.is_some() || message.is_some();
    match (failed, message) {
        (Some(s), m) => {
            let text = m.filter(|m| !m.is_empty()).map_or_else(|| format!("HTTP {s}"), |m| format!("HTTP {s}\n{m}"));
            t.signals.error("response.status", text).with_span(last.span);
        }
        (None, Some(m)) => {
            t.signals.error(last.error_field, m).with_span(last.span);
        }
        (None, None) => {}
    }
    let limit = last.request.as_ref().and_then(|r| {
        let gemini = || {
            let gen_config = r.get("generationConfig").or_else(|| r.get("generation_config")).unwrap_or(r);
            gemini::setting(gen_config, "maxOutputTokens", "max_output_tokens")
        };
        match provider {
            Provider::Gemini => num(gemini()),
            _ => num(r.get("max_completion_tokens")).or_else(|| num(r.get("max_tokens"))),
        }
    });
    t.signals.limits.output_tokens = limit;
    let Some(reply) = reply else {
        if !said_error && last.result_type.is_none() && last.unreadable.is_none() {
            t.notes.push("the log ends with a request that has no response".into());
        }
        return;
    };
    #[expect(clippy::cast_precision_loss, reason = "token counts are far below 2^52")]
    let used = reply.tokens.as_ref().and_then(|k| k.completion).map(|c| c as f64);
    t.signals.consumed.output_tokens = used;
    if let Some(b) = reply.blocked.as_deref().filter(|b| !b.is_empty()) {
        t.signals.status("promptFeedback.blockReason", b).with_span(last.span);
    }
    if let Some(f) = reply.finish.as_deref().filter(|f| !f.is_empty()) {
        let field = match provider {
            Provider::OpenAi => "choices[0].finish_reason",
            Provider::Anthropic => "stop_reason",
            Provider::Gemini => "candidates[0].finishReason",
        };
        t.signals.status(field, f).with_span(last.span);
    }
    if let Some(m) = &reply.finish_message {
        t.notes.push(format!("the last reply's finish: {}", m.chars().take(300).collect::<String>()));
    }
}
