//! One trace into one record: model spans become the turns (their new input messages, then the
//! reply), `execute_tool` spans the results of the calls they answer (by call id, else by tool
//! name), and the root agent span's failure or the last reply's finish reason the signals of
//! how the run ended.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::ADAPTER;
use super::messages::{Message, message, model_messages, parts_text, text_of, usage_of};
use super::spans::{Edition, Span, error_text, failure, is_memory, is_model_call, iso, operation, str_attr};
use crate::ingest::adapters::chat::api::{declared_tools, sum_usage};
use crate::ingest::adapters::shared::build::{StepBuilder, to_u32};
use crate::ingest::adapters::shared::common::tool_call;
use crate::model::{CallRef, DeclaredTool, Reasoning, Role, SourceFile, SourceSpan, Step, Tokens, ToolResult, Trajectory, Usage};

/// Builds one trajectory from the spans of one trace.
struct Builder<'a> {
    spans: &'a [Span],
    by_id: BTreeMap<&'a str, usize>,
    steps: StepBuilder,
    /// Calls without a result yet: id, name, where.
    pending: Vec<(Option<String>, String, CallRef)>,
    answered: BTreeSet<String>,
    declared: Vec<DeclaredTool>,
    declared_names: BTreeSet<String>,
    usage: Usage,
    model_calls: u64,
    model: Option<String>,
    /// The last reply's finish reason, the field it was read from, and its span.
    last_finish: Option<(String, String, Option<SourceSpan>)>,
    rebuilt_calls: usize,
    uncaptured_turns: usize,
    /// `plan` spans, and memory operations by name, in order of first use.
    plans: usize,
    memory_ops: Vec<(String, usize)>,
}

impl<'a> Builder<'a> {
    fn new(spans: &'a [Span]) -> Self {
        let by_id = spans.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
        Self {
            spans,
            by_id,
            steps: StepBuilder::new(),
            pending: Vec::new(),
            answered: BTreeSet::new(),
            declared: Vec::new(),
            declared_names: BTreeSet::new(),
            usage: Usage::default(),
            model_calls: 0,
            model: None,
            last_finish: None,
            rebuilt_calls: 0,
            uncaptured_turns: 0,
            plans: 0,
            memory_ops: Vec::new(),
        }
    }

    /// The `invoke_agent` spans above `s`, nearest first.
    fn agents_above(&self, s: &Span) -> Vec<&'a Span> {
        let mut out = Vec::new();
        let mut cur = s.parent.as_deref();
        let mut guard = 0;
        while let Some(p) = cur.and_then(|p| self.by_id.get(p)).map(|&i| &self.spans[i]) {
            if operation(p) == Some("invoke_agent") {
                out.push(p);
            }
            cur = p.parent.as_deref();
            guard += 1;
            if guard > 1000 {
                break;
            }
        }
        out
    }

    /// The sub-agent a span acts for: `None` for the top agent.
    fn agent_of(&self, s: &Span) -> Option<String> {
        let above = self.agents_above(s);
        if above.len() < 2 {
            return None;
        }
        let a = above[0];
        Some(str_attr(&a.attrs, "gen_ai.agent.name").map_or_else(|| a.name.clone(), ToString::to_string))
    }

    fn declare(&mut self, v: &Value) {
        for d in declared_tools(v).unwrap_or_default() {
            if self.declared_names.insert(d.name.clone()) {
                self.declared.push(d);
            }
        }
    }

    fn here(&self) -> u32 {
        to_u32(self.steps.len())
    }

    fn push_result(&mut self, id: Option<String>, name: Option<String>, mut r: ToolResult, step: Step) {
        let pos = self.pending.iter().position(|(pid, _, _)| id.is_some() && pid == &id).or_else(|| {
            name.as_ref().and_then(|n| self.pending.iter().position(|(pid, pn, _)| pn == n && (id.is_none() || pid.is_none())))
        });
        let mut id = id;
        if let Some(p) = pos {
            let (pid, _, at) = self.pending.remove(p);
            r.call = Some(at);
            // A tool span without a call id answers the call it matched by name: take its id,
            // so the next turn's replayed tool message is not counted again.
            if id.is_none() {
                id = pid;
            }
        }
        if let Some(id) = &id {
            self.answered.insert(id.clone());
        }
        r.call_id = id;
        r.name = name;
        let mut step = step;
        step.tool_results.push(r);
        self.steps.push(step, None, None);
    }

    fn model_span(&mut self, s: &Span) {
        self.model_calls += 1;
        let agent = self.agent_of(s);
        if let Some(defs) = s.attrs.get("gen_ai.tool.definitions").cloned() {
            self.declare(&defs);
        }
        if self.model.is_none() {
            self.model =
                str_attr(&s.attrs, "gen_ai.response.model").or_else(|| str_attr(&s.attrs, "gen_ai.request.model")).map(ToString::to_string);
        }
        let first_turn = !self.steps.steps.iter().any(|x| x.role == Role::Assistant);
        if first_turn && let Some(sys) = s.attrs.get("gen_ai.system_instructions").and_then(Value::as_array) {
            let mut step = Step::new(Role::System, parts_text(sys).0);
            step.agent.clone_from(&agent);
            self.steps.push(step, s.span, None);
        }
        let (input, output, output_field) = model_messages(s);
        // What is new in this turn's input: everything on the first turn, then what follows
        // the last assistant message (tool results, a user's reply). Robust to histories
        // that instrumentations truncate.
        let new_from = if first_turn {
            0
        } else {
            input.iter().rposition(|m| m.get("role").and_then(Value::as_str) == Some("assistant")).map_or(0, |i| i + 1)
        };
        for m in &input[new_from.min(input.len())..] {
            self.input_message(&message(m), s, agent.as_ref());
        }
        let tokens = usage_of(&s.attrs);
        sum_usage(&mut self.usage, Some(&tokens));
        let reasons: Vec<String> = s
            .attrs
            .get("gen_ai.response.finish_reasons")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(ToString::to_string).collect())
            .or_else(|| str_attr(&s.attrs, "gen_ai.response.finish_reasons").map(|r| vec![r.to_string()]))
            .unwrap_or_default();
        let out = output.first().map(message);
        let mut step = match &out {
            Some(m) => {
                let mut step = Step::new(Role::Assistant, m.text.clone());
                step.reasoning = m.reasoning.clone().map(|r| Reasoning { text: Some(r), tokens: None });
                let here = self.here();
                self.add_calls(&mut step, m, here);
                step
            }
            None => {
                self.uncaptured_turns += 1;
                Step::new(Role::Assistant, String::new())
            }
        };
        let from_message = || out.as_ref().and_then(|m| m.finish_reason.clone()).map(|f| (f, format!("{output_field}[0].finish_reason")));
        let from_attr = || reasons.first().map(|f| (f.clone(), "gen_ai.response.finish_reasons[0]".to_string()));
        // The GenAI repository deprecates the output message's `finish_reason` for
        // `gen_ai.response.finish_reasons`: under its conventions the attribute comes first.
        let finish = if s.latest { from_attr().or_else(from_message) } else { from_message().or_else(from_attr) };
        self.last_finish = finish.map(|(f, field)| (f, field, s.span));
        step.agent = agent;
        step.tokens = (tokens != Tokens::default()).then_some(tokens);
        let time = s.end.or(s.start).and_then(iso);
        if s.error {
            let mut env = Step::new(Role::Environment, failure("model call failed: ", s));
            env.agent.clone_from(&step.agent);
            if out.is_none() {
                self.uncaptured_turns -= 1;
            } else {
                self.steps.push(step, s.span, time.clone());
            }
            self.steps.push(env, s.span, time);
            return;
        }
        self.steps.push(step, s.span, time);
    }

    /// Adds a message's calls to its step, each waiting for its result.
    fn add_calls(&mut self, step: &mut Step, m: &Message, here: u32) {
        for (i, (id, name, args)) in m.calls.iter().enumerate() {
            step.tool_calls.push(tool_call(id.clone(), name, args));
            self.pending.push((id.clone(), name.clone(), CallRef { step: here, call: to_u32(i) }));
        }
    }

    fn input_message(&mut self, m: &Message, s: &Span, agent: Option<&String>) {
        let ts = s.start.and_then(iso);
        if !m.responses.is_empty() {
            for (id, out) in &m.responses {
                if id.as_ref().is_some_and(|i| self.answered.contains(i)) {
                    continue;
                }
                let mut step = Step::new(Role::Tool, String::new());
                step.agent = agent.cloned();
                step.source_span = s.span;
                step.timestamp.clone_from(&ts);
                let name = id.as_ref().and_then(|i| self.pending.iter().find(|(p, _, _)| p.as_ref() == Some(i))).map(|(_, n, _)| n.clone());
                self.push_result(id.clone(), name, ToolResult::new(out.clone()), step);
            }
            return;
        }
        let role = match m.role.as_str() {
            "system" | "developer" => Role::System,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => Role::User,
        };
        let mut step = Step::new(role, m.text.clone());
        step.reasoning = m.reasoning.clone().map(|r| Reasoning { text: Some(r), tokens: None });
        step.agent = agent.cloned();
        let here = self.here();
        self.add_calls(&mut step, m, here);
        self.steps.push(step, s.span, ts);
    }

    /// A `plan` span: the model call that writes the plan is its child `chat` span, so the plan
    /// adds a step only when it failed.
    fn plan_span(&mut self, s: &Span) {
        self.plans += 1;
        if s.error || s.attrs.contains_key("error.type") {
            let mut env = Step::new(Role::Environment, failure("planning failed: ", s));
            env.agent = self.agent_of(s);
            self.steps.push(env, s.span, s.end.or(s.start).and_then(iso));
        }
    }

    /// A memory operation (`search_memory`, `upsert_memory`, ...): what the agent's memory store
    /// did, as an environment step: the store, the query, the record count, the records when
    /// captured, and the failure.
    fn memory_span(&mut self, s: &Span, op: &str) {
        match self.memory_ops.iter_mut().find(|(o, _)| o == op) {
            Some((_, n)) => *n += 1,
            None => self.memory_ops.push((op.to_string(), 1)),
        }
        let mut text = op.to_string();
        if let Some(store) = str_attr(&s.attrs, "gen_ai.memory.store.id") {
            text.push_str(&format!(" {store}"));
        }
        if let Some(q) = str_attr(&s.attrs, "gen_ai.memory.query.text") {
            text.push_str(&format!(" query={q:?}"));
        }
        if let Some(id) = str_attr(&s.attrs, "gen_ai.memory.record.id") {
            text.push_str(&format!(" record={id}"));
        }
        if let Some(n) = s.attrs.get("gen_ai.memory.record.count").and_then(Value::as_u64) {
            text.push_str(&format!(": {n} record(s)"));
        }
        if let Some(records) = s.attrs.get("gen_ai.memory.records") {
            text.push('\n');
            text.push_str(&text_of(records));
        }
        if s.error || s.attrs.contains_key("error.type") {
            text.push_str(&failure("\nfailed: ", s));
        }
        let mut env = Step::new(Role::Environment, text);
        env.agent = self.agent_of(s);
        self.steps.push(env, s.span, s.end.or(s.start).and_then(iso));
    }

    fn tool_span(&mut self, s: &Span) {
        let agent = self.agent_of(s);
        let name = str_attr(&s.attrs, "gen_ai.tool.name")
            .map(ToString::to_string)
            .or_else(|| s.name.strip_prefix("execute_tool ").map(|n| n.trim().to_string()))
            .unwrap_or_else(|| s.name.clone());
        let id = str_attr(&s.attrs, "gen_ai.tool.call.id").map(ToString::to_string);
        let known = self.pending.iter().any(|(pid, pn, _)| (id.is_some() && pid == &id) || (pid.is_none() || id.is_none()) && pn == &name);
        if !known {
            // Content capture was off (or the tool ran outside a model turn): the call is
            // rebuilt from the span onto the model turn it followed.
            let args = s.attrs.get("gen_ai.tool.call.arguments").cloned().unwrap_or(Value::Null);
            let call = tool_call(id.clone(), &name, &args);
            let target = self.steps.steps.iter().rposition(|x| x.role == Role::Assistant && x.agent == agent && x.tool_results.is_empty());
            let at = match target.and_then(|ix| self.steps.add_call(ix, call.clone())) {
                Some(at) => at,
                None => {
                    let mut step = Step::new(Role::Assistant, String::new());
                    step.agent.clone_from(&agent);
                    step.tool_calls.push(call);
                    let here = self.here();
                    self.steps.push(step, s.span, s.start.and_then(iso));
                    CallRef { step: here, call: 0 }
                }
            };
            self.pending.push((id.clone(), name.clone(), at));
            self.rebuilt_calls += 1;
        }
        let result = s.attrs.get("gen_ai.tool.call.result").map(text_of).unwrap_or_default();
        let mut r = ToolResult::new(result);
        if s.error || s.attrs.contains_key("error.type") {
            r.is_error = true;
            r.error_type = str_attr(&s.attrs, "error.type").map(ToString::to_string);
            let msg = error_text(s).map(|(_, m)| m).or_else(|| r.error_type.clone()).unwrap_or_default();
            if !msg.is_empty() && !r.output.contains(&msg) {
                if !r.output.is_empty() {
                    r.output.push('\n');
                }
                r.output.push_str(&msg);
            }
        }
        let mut step = Step::new(Role::Tool, String::new());
        step.agent = agent;
        step.source_span = s.span;
        step.timestamp = s.end.or(s.start).and_then(iso);
        self.push_result(id, Some(name), r, step);
    }
}

/// One trace into a record; `None` when it holds no GenAI span.
pub fn trace_record(trace: &str, mut spans: Vec<Span>, file: &SourceFile) -> Option<Trajectory> {
    spans.sort_by_key(|s| (s.start.unwrap_or(i128::MAX), s.seq));
    let edition = Edition::of(&spans);
    edition.mark(&mut spans);
    let ops: Vec<Option<&str>> = spans.iter().map(operation).collect();
    if ops.iter().all(Option::is_none) {
        return None;
    }
    let mut b = Builder::new(&spans);
    // Definitions on the agent span apply before its first turn.
    for s in &spans {
        if operation(s) == Some("invoke_agent")
            && let Some(defs) = s.attrs.get("gen_ai.tool.definitions").cloned()
        {
            b.declare(&defs);
        }
    }
    for s in &spans {
        match operation(s) {
            Some(op) if is_model_call(op) => b.model_span(s),
            Some("execute_tool") => b.tool_span(s),
            Some("plan") if s.latest => b.plan_span(s),
            Some(op) if s.latest && is_memory(op) => b.memory_span(s, op),
            _ => {}
        }
    }
    let root_agent = spans.iter().find(|s| operation(s) == Some("invoke_agent") && b.agents_above(s).is_empty());
    let root = root_agent.or_else(|| spans.iter().find(|s| s.parent.as_ref().is_none_or(|p| !b.by_id.contains_key(p.as_str()))));
    let harness = root_agent
        .and_then(|a| str_attr(&a.attrs, "gen_ai.agent.name"))
        .map(ToString::to_string)
        .or_else(|| {
            // A workflow (`invoke_workflow`) that runs no agent span is named by its workflow.
            spans
                .iter()
                .filter(|s| root_agent.is_none() && operation(s) == Some("invoke_workflow"))
                .find_map(|s| str_attr(&s.attrs, "gen_ai.workflow.name"))
                .map(ToString::to_string)
        })
        .or_else(|| spans.iter().find_map(|s| s.service.clone()))
        .unwrap_or_else(|| "otel".to_string());
    let conversation = spans.iter().find_map(|s| str_attr(&s.attrs, "gen_ai.conversation.id")).map(ToString::to_string);
    let mut t =
        crate::model::Trajectory::new(conversation.clone().unwrap_or_else(|| trace.to_string()), harness, ADAPTER, 1, vec![file.clone()]);
    t.session_id = Some(trace.to_string());
    t.provenance.format_version = Some(match (&edition.latest, &edition.label) {
        (true, Some(label)) => format!("otel-genai {label}"),
        _ => "otel-genai".into(),
    });
    t.model = b.model.clone().or_else(|| root.and_then(|r| str_attr(&r.attrs, "gen_ai.request.model")).map(ToString::to_string));
    if let Some(c) = &conversation {
        t.notes.push(format!("trace {trace}, conversation {c}"));
    }
    // `gen_ai.provider.name` since v1.37, `gen_ai.system` before.
    let provider = spans.iter().find_map(|s| str_attr(&s.attrs, "gen_ai.provider.name").or_else(|| str_attr(&s.attrs, "gen_ai.system")));
    if let Some(p) = provider {
        t.notes.push(format!("provider: {p}"));
    }
    let (start, end) = match root {
        Some(r) if r.start.is_some() && r.end.is_some() => (r.start, r.end),
        _ => (spans.iter().filter_map(|s| s.start).min(), spans.iter().filter_map(|s| s.end).max()),
    };
    t.started_at = start.and_then(iso);
    t.ended_at = end.and_then(iso);
    if let (Some(a), Some(z)) = (start, end) {
        #[expect(clippy::cast_precision_loss, reason = "durations in nanoseconds fit f64 to well under a microsecond")]
        let secs = (z - a) as f64 / 1e9;
        t.usage.wall_seconds = Some(secs);
    }
    let mut tok = std::mem::take(&mut b.usage);
    if (b.model_calls == 0 || (tok.prompt_tokens.is_none() && tok.completion_tokens.is_none()))
        && let Some(r) = root
    {
        tok = Usage::default();
        sum_usage(&mut tok, Some(&usage_of(&r.attrs)));
    }
    t.usage.prompt_tokens = tok.prompt_tokens;
    t.usage.completion_tokens = tok.completion_tokens;
    t.usage.cached_tokens = tok.cached_tokens;
    t.usage.reasoning_tokens = tok.reasoning_tokens;
    t.usage.api_calls = (b.model_calls > 0).then_some(b.model_calls);
    if b.rebuilt_calls > 0 {
        t.notes.push(format!("{} tool call(s) rebuilt from execute_tool spans (the model's output was not captured)", b.rebuilt_calls));
    }
    if b.plans > 0 {
        t.notes.push(format!("{} plan span(s): the agent's planning phase", b.plans));
    }
    if !b.memory_ops.is_empty() {
        let ops: Vec<String> = b.memory_ops.iter().map(|(op, n)| format!("{op} x{n}")).collect();
        t.notes.push(format!("memory operations: {}", ops.join(", ")));
    }
    if b.uncaptured_turns > 0 {
        t.notes.push(format!("{} model turn(s) without captured content (gen_ai content capture is opt-in)", b.uncaptured_turns));
    }
    t.notes.push(
        "OpenTelemetry spans carry no verdict: outcome comes from a verdict file keyed by trace id (session_id) or conversation id".into(),
    );
    if !b.declared.is_empty() {
        t.declared_tools = Some(std::mem::take(&mut b.declared));
    }
    end_signals(&mut t, root, b.last_finish.take());
    b.steps.finish(&mut t);
    Some(t)
}

/// How the run ended, as the trace says it: the root agent span's failure (its `error.type`,
/// then its message), else the last reply's finish reason.
fn end_signals(t: &mut Trajectory, root: Option<&Span>, last_finish: Option<(String, String, Option<SourceSpan>)>) {
    if let Some(r) = root.filter(|r| r.error || r.attrs.contains_key("error.type")) {
        let kind = str_attr(&r.attrs, "error.type");
        if let Some(k) = kind {
            t.signals.status("error.type", k).with_span(r.span);
        }
        // A failure with no message is told by its type, or by its status code alone.
        let (field, text) = error_text(r)
            .or_else(|| kind.map(|k| ("error.type", k.to_string())))
            .unwrap_or_else(|| ("status.code", r.status_code.clone().unwrap_or_else(|| "ERROR".into())));
        t.signals.error(field, text).with_span(r.span);
        return;
    }
    if let Some((reason, field, span)) = last_finish {
        t.signals.status(field, reason).with_span(span);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::adapters::otel::spans::span_from;

    fn spans(v: &Value) -> Vec<Span> {
        v.as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, s)| span_from(serde_json::from_value(s.clone()).unwrap(), None, None, None, i).unwrap())
            .collect()
    }

    #[test]
    fn a_tool_span_without_call_id_answers_once() {
        let user = serde_json::json!({"role": "user", "parts": [{"type": "text", "content": "go"}]});
        let call = serde_json::json!({"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "ls", "arguments": {}}]});
        let reply = serde_json::json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "a b"}]});
        let done = serde_json::json!({"role": "assistant", "parts": [{"type": "text", "content": "done"}], "finish_reason": "stop"});
        let chat = |id: &str, t: &str, input: Value, output: Value| {
            serde_json::json!({"traceId": "t", "spanId": id, "name": "chat m", "startTimeUnixNano": t, "attributes": {
                "gen_ai.operation.name": "chat", "gen_ai.input.messages": input.to_string(), "gen_ai.output.messages": output.to_string()}})
        };
        let v = serde_json::json!([
            chat("1", "1", serde_json::json!([user]), serde_json::json!([call])),
            {"traceId": "t", "spanId": "2", "name": "execute_tool ls", "startTimeUnixNano": "2",
             "attributes": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ls", "gen_ai.tool.call.result": "a b"}},
            chat("3", "3", serde_json::json!([user, call, reply]), serde_json::json!([done])),
        ]);
        let file = SourceFile { path: "f".into(), sha256: String::new(), role: "transcript".into() };
        let t = trace_record("t", spans(&v), &file).unwrap();
        let results: Vec<&ToolResult> = t.steps.iter().flat_map(|s| &s.tool_results).collect();
        assert_eq!(results.len(), 1, "{:?}", t.steps);
        assert_eq!(results[0].call_id.as_deref(), Some("c1"));
        assert_eq!(results[0].call, Some(CallRef { step: 1, call: 0 }));
        let end: Vec<(&str, &str)> = t.signals.statuses.iter().map(|s| (s.field.as_str(), s.text.as_str())).collect();
        assert_eq!(end, [("gen_ai.output.messages[0].finish_reason", "stop")]);
    }

    #[test]
    fn a_failed_agent_span_says_its_type_then_its_message() {
        let v = serde_json::json!([
            {"traceId": "t", "spanId": "1", "name": "invoke_agent A", "status": {"code": 2, "message": "Max turns (3) exceeded"},
             "attributes": {"gen_ai.operation.name": "invoke_agent", "error.type": "MaxTurnsExceeded"}},
            {"traceId": "t", "spanId": "2", "parentSpanId": "1", "name": "invoke_agent B", "status": {"code": "STATUS_CODE_ERROR"},
             "attributes": {"gen_ai.operation.name": "invoke_agent"}},
        ]);
        let file = SourceFile { path: "f".into(), sha256: String::new(), role: "transcript".into() };
        let t = trace_record("t", spans(&v), &file).unwrap();
        assert_eq!((t.signals.statuses[0].field.as_str(), t.signals.statuses[0].text.as_str()), ("error.type", "MaxTurnsExceeded"));
        assert_eq!((t.signals.errors[0].field.as_str(), t.signals.errors[0].text.as_str()), ("status.message", "Max turns (3) exceeded"));
        let bare = trace_record("t", spans(&v).into_iter().skip(1).collect(), &file).unwrap();
        assert!(bare.signals.statuses.is_empty());
        assert_eq!((bare.signals.errors[0].field.as_str(), bare.signals.errors[0].text.as_str()), ("status.code", "STATUS_CODE_ERROR"));
    }
}
