#!/usr/bin/env python3
"""Writes the OpenTelemetry GenAI span samples in this folder (run once from the project root:
`python3 samples/otel/make_samples.py`). Attribute names follow the GenAI semantic conventions
(docs/gen-ai/gen-ai-spans.md and gen-ai-agent-spans.md in open-telemetry/semantic-conventions;
message parts per gen-ai-input-messages.json / gen-ai-output-messages.json) and, for the
console-exporter file, the pre-1.37 names (gen_ai.system, gen_ai.prompt.N.*, gen_ai.usage.prompt_tokens,
gen_ai.content.prompt events). The OTLP files use the OTLP/JSON encoding (hex ids, string
int64s, attributes as key/value lists). Content is invented."""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
T0 = 1772359200_000_000_000  # 2026-03-01T10:00:00Z in ns


def av(v):
    """A value as an OTLP AnyValue."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [av(x) for x in v]}}
    if isinstance(v, (dict,)):
        return {"stringValue": json.dumps(v)}
    return {"stringValue": v}


def attrs(d):
    return [{"key": k, "value": av(json.dumps(v) if k in JSON_ATTRS else v)} for k, v in d.items()]


JSON_ATTRS = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.definitions",
              "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.memory.records"}


def span(trace, sid, parent, name, start_ms, end_ms, a, kind=1, status=None, events=()):
    s = {"traceId": trace, "spanId": sid, "parentSpanId": parent or "", "name": name, "kind": kind,
         "startTimeUnixNano": str(T0 + start_ms * 1_000_000), "endTimeUnixNano": str(T0 + end_ms * 1_000_000),
         "attributes": attrs(a), "events": list(events), "status": status or {}}
    return s


def text(role, t):
    return {"role": role, "parts": [{"type": "text", "content": t}]}


def calls(*cs, t=None, finish="tool_call"):
    parts = ([{"type": "text", "content": t}] if t else []) + [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in cs]
    return {"role": "assistant", "parts": parts, "finish_reason": finish}


def response(i, r):
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": i, "response": r}]}


TOOLS = [
    {"type": "function", "name": "get_order", "description": "Look up an order by id.", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
    {"type": "function", "name": "refund_order", "description": "Refund an order.", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
]


def support_trace():
    tr = "4bf92f3577b34da6a3ce929d0e0e4736"
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1-mini",
            "gen_ai.response.model": "gpt-4.1-mini-2025-04-14", "gen_ai.conversation.id": "conv_7f3a"}
    user = text("user", "Where is my order 1234? Refund it if it is late.")
    c1 = calls(("call_1", "get_order", {"order_id": "1234"}), t="Let me look up the order.")
    r1 = response("call_1", {"status": "late", "days_late": 5})
    c2 = calls(("call_2", "refund_order", {"order_id": "1234"}), ("call_3", "lookup_policy", {"topic": "late refunds"}))
    final = {"role": "assistant", "parts": [{"type": "text", "content": "Your order is 5 days late, but the refund service is down right now; please try again later."}], "finish_reason": "stop"}
    return [
        span(tr, "00f067aa0ba902b7", None, "invoke_agent Triage", 0, 9000, {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai", "gen_ai.agent.name": "Triage",
            "gen_ai.agent.id": "asst_triage_01", "gen_ai.conversation.id": "conv_7f3a", "gen_ai.request.model": "gpt-4.1-mini",
            "gen_ai.tool.definitions": TOOLS}),
        span(tr, "a1b2c3d4e5f60001", "00f067aa0ba902b7", "chat gpt-4.1-mini", 100, 1500, dict(chat, **{
            "gen_ai.system_instructions": [{"type": "text", "content": "You are a support agent for an online shop."}],
            "gen_ai.input.messages": [user], "gen_ai.output.messages": [c1], "gen_ai.response.finish_reasons": ["tool_call"],
            "gen_ai.usage.input_tokens": 320, "gen_ai.usage.output_tokens": 25, "gen_ai.tool.definitions": TOOLS}), kind=3),
        span(tr, "a1b2c3d4e5f60002", "00f067aa0ba902b7", "execute_tool get_order", 1600, 1900, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order", "gen_ai.tool.call.id": "call_1", "gen_ai.tool.type": "function",
            "gen_ai.tool.call.arguments": {"order_id": "1234"}, "gen_ai.tool.call.result": {"status": "late", "days_late": 5}}),
        span(tr, "a1b2c3d4e5f60003", "00f067aa0ba902b7", "chat gpt-4.1-mini", 2000, 3500, dict(chat, **{
            "gen_ai.input.messages": [user, c1, r1], "gen_ai.output.messages": [c2], "gen_ai.response.finish_reasons": ["tool_call"],
            "gen_ai.usage.input_tokens": 410, "gen_ai.usage.output_tokens": 48}), kind=3),
        span(tr, "a1b2c3d4e5f60004", "00f067aa0ba902b7", "execute_tool refund_order", 3600, 6600, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund_order", "gen_ai.tool.call.id": "call_2",
            "gen_ai.tool.call.arguments": {"order_id": "1234"}, "error.type": "PaymentGatewayError"},
            status={"code": 2, "message": "refund service returned 503 Service Unavailable"},
            events=[{"timeUnixNano": str(T0 + 6_600_000_000), "name": "exception", "attributes": attrs({"exception.type": "PaymentGatewayError", "exception.message": "refund service returned 503 Service Unavailable"})}]),
        span(tr, "a1b2c3d4e5f60005", "00f067aa0ba902b7", "execute_tool lookup_policy", 6700, 6710, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_policy", "gen_ai.tool.call.id": "call_3", "error.type": "ToolNotFoundError"},
            status={"code": "STATUS_CODE_ERROR", "message": "Tool lookup_policy not found in agent Triage"}),
        span(tr, "a1b2c3d4e5f60006", "00f067aa0ba902b7", "chat gpt-4.1-mini", 6800, 8900, dict(chat, **{
            "gen_ai.input.messages": [user, c1, r1, c2, response("call_2", "error: refund service returned 503"), response("call_3", "error: Tool lookup_policy not found")],
            "gen_ai.output.messages": [final], "gen_ai.response.finish_reasons": ["stop"],
            "gen_ai.usage.input_tokens": 530, "gen_ai.usage.output_tokens": 31}), kind=3),
    ]


def research_trace():
    """Content capture off (the default): only usage and tool spans; the agent hit its turn limit."""
    tr = "5cf92f3577b34da6a3ce929d0e0e9999"
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4"}
    spans = [span(tr, "b000000000000001", None, "invoke_agent Researcher", 0, 20000, {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Researcher", "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4"}, status={"code": 2, "message": "Max turns (3) exceeded"}),
    ]
    spans[0]["attributes"] += attrs({"error.type": "MaxTurnsExceeded"})
    spans.append(span(tr, "b000000000000002", "b000000000000001", "invoke_agent WebSearcher", 500, 12000, {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "WebSearcher"}))
    t = 600
    for i in range(3):
        parent = "b000000000000002" if i < 2 else "b000000000000001"
        spans.append(span(tr, f"b0000000000001{i}0", parent, "chat claude-sonnet-4", t, t + 1000, dict(chat, **{
            "gen_ai.usage.input_tokens": 800 + 100 * i, "gen_ai.usage.output_tokens": 60, "gen_ai.response.finish_reasons": ["tool_use"]}), kind=3))
        spans.append(span(tr, f"b0000000000001{i}1", parent, "execute_tool web_search", t + 1100, t + 2500, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "web_search", "gen_ai.tool.call.id": f"toolu_r{i}"}))
        t += 4000
    return spans


def otlp_file():
    doc = {"resourceSpans": [
        {"resource": {"attributes": attrs({"service.name": "support-desk", "telemetry.sdk.language": "python"})},
         "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_agents", "version": "0.1.0"},
                         "spans": support_trace()}]},
        {"resource": {"attributes": attrs({"service.name": "research-bot"})},
         "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.anthropic", "version": "0.40.0"}, "spans": research_trace()}]},
    ]}
    (HERE / "agent-runs.otlp.json").write_text(json.dumps(doc, indent=2) + "\n")


def console_file():
    """The Python SDK's ConsoleSpanExporter shape, collected into a list; pre-1.37 attribute names."""
    tr = "0x6e0c63257de34c926f9efcd03927272e"
    def cspan(sid, parent, name, start, end, a, events=()):
        return {"name": name, "context": {"trace_id": tr, "span_id": sid, "trace_state": "[]"}, "kind": "SpanKind.CLIENT",
                "parent_id": parent, "start_time": start, "end_time": end, "status": {"status_code": "UNSET"},
                "attributes": a, "events": list(events), "links": [],
                "resource": {"attributes": {"service.name": "code-helper"}, "schema_url": ""}}
    prompt = [{"role": "user", "content": "Explain what main.py does."},
              {"role": "assistant", "content": "", "tool_calls": [{"id": "toolu_9", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"main.py\"}"}}]},
              {"role": "tool", "tool_call_id": "toolu_9", "content": "import sys\nprint(sys.argv)\n"}]
    spans = [
        cspan("0x1000000000000001", None, "anthropic.chat", "2026-03-01T10:00:00.000000Z", "2026-03-01T10:00:02.000000Z", {
            "gen_ai.system": "anthropic", "gen_ai.request.model": "claude-3-5-sonnet-20241022", "gen_ai.response.model": "claude-3-5-sonnet-20241022",
            "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Explain what main.py does.",
            "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "", "gen_ai.completion.0.finish_reason": "tool_use",
            "gen_ai.completion.0.tool_calls.0.id": "toolu_9", "gen_ai.completion.0.tool_calls.0.name": "read_file",
            "gen_ai.completion.0.tool_calls.0.arguments": "{\"path\": \"main.py\"}",
            "gen_ai.usage.prompt_tokens": 210, "gen_ai.usage.completion_tokens": 30}),
        cspan("0x1000000000000002", None, "anthropic.chat", "2026-03-01T10:00:03.000000Z", "2026-03-01T10:00:09.000000Z", {
            "gen_ai.system": "anthropic", "gen_ai.request.model": "claude-3-5-sonnet-20241022",
            "gen_ai.usage.prompt_tokens": 260, "gen_ai.usage.completion_tokens": 1024},
            events=[{"name": "gen_ai.content.prompt", "timestamp": "2026-03-01T10:00:03.000000Z", "attributes": {"gen_ai.prompt": json.dumps(prompt)}},
                    {"name": "gen_ai.content.completion", "timestamp": "2026-03-01T10:00:09.000000Z",
                     "attributes": {"gen_ai.completion": json.dumps([{"role": "assistant", "content": "main.py imports sys and prints the command line arguments, then it", "finish_reason": "length"}])}}]),
    ]
    (HERE / "console-spans.json").write_text(json.dumps(spans, indent=2) + "\n")


def jsonl_file():
    """One span per line, and one line holding a whole export request (the collector's file
    exporter writes those); line 3 was cut off while being written."""
    tr = "7a0c63257de34c926f9efcd039270001"
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o"}
    user = text("user", "Find TODOs in the repo.")
    c1 = calls(("call_d1", "grep", {"pattern": "TODO"}))
    lines = [
        json.dumps(span(tr, "d000000000000001", None, "invoke_agent Coder", 0, 5000, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Coder"})),
        json.dumps(span(tr, "d000000000000002", "d000000000000001", "chat gpt-4o", 10, 900, dict(chat, **{
            "gen_ai.input.messages": [user], "gen_ai.output.messages": [c1], "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 12}))),
        json.dumps(span(tr, "d000000000000003", "d000000000000001", "execute_tool grep", 1000, 1200, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep", "gen_ai.tool.call.id": "call_d1",
            "gen_ai.tool.call.result": "src/a.py:3: # TODO"}))[:150],
        json.dumps({"resourceSpans": [{"resource": {"attributes": attrs({"service.name": "coder"})}, "scopeSpans": [{"scope": {"name": "manual"}, "spans": [
            span(tr, "d000000000000004", "d000000000000001", "chat gpt-4o", 1300, 2000, dict(chat, **{
                "gen_ai.input.messages": [user, c1, response("call_d1", "src/a.py:3: # TODO")],
                "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": "One TODO, in src/a.py line 3."}], "finish_reason": "stop"}],
                "gen_ai.usage.input_tokens": 140, "gen_ai.usage.output_tokens": 15}))]}]}]}),
    ]
    (HERE / "spans.jsonl").write_text("\n".join(lines) + "\n")


GENAI_SCHEMA = "https://opentelemetry.io/schemas/gen-ai/1.42.0"

TRIP_TOOLS = [
    {"type": "function", "name": "search_flights", "description": "Find flights between two airports on a date.",
     "parameters": {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "date": {"type": "string"}}}},
    {"type": "function", "name": "get_weather", "description": "Weather forecast for a city and date.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "date": {"type": "string"}}}},
]


def trip_trace():
    """The names of the conventions' own repository (open-telemetry/semantic-conventions-genai):
    an `invoke_workflow` span around the agent, a `plan` span whose child `chat` span writes the
    plan, memory operations (`search_memory`, `upsert_memory`), reasoning and cache-write token
    counts, and finish reasons only in `gen_ai.response.finish_reasons` (the output message's
    `finish_reason` is deprecated there)."""
    tr = "6d0f1e2a3b4c5d6e7f8091a2b3c4d5e6"
    wf, ag, pl = "c000000000000001", "c000000000000002", "c000000000000003"
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
            "gen_ai.response.model": "claude-sonnet-4-5-20250929", "gen_ai.conversation.id": "conv_trip_42"}
    user = text("user", "Find me a flight from Lisbon to Oslo on 12 June and tell me the weather there.")
    c1 = {"role": "assistant", "parts": [
        {"type": "text", "content": "Plan: 1. search flights LIS-OSL for 12 June; 2. check the Oslo forecast; 3. answer."},
        {"type": "tool_call", "id": "toolu_01", "name": "search_flights", "arguments": {"from": "LIS", "to": "OSL", "date": "2026-06-12"}},
        {"type": "tool_call", "id": "toolu_02", "name": "get_weather", "arguments": {"city": "Oslo", "date": "2026-06-12"}}]}
    flights = [{"flight": "TP1192", "departs": "07:05", "price_eur": 189}, {"flight": "SK1716", "departs": "13:40", "price_eur": 214}]
    r1 = response("toolu_01", flights)
    r2 = response("toolu_02", "error: weather service timed out after 10s")
    final = {"role": "assistant", "parts": [{"type": "text", "content": "TP1192 leaves Lisbon at 07:05 for 189 EUR (SK1716 at 13:40 for 214 EUR). The forecast for Oslo was not available."}]}
    records = [{"id": "mem_7", "content": "Prefers morning flights", "score": 0.91}, {"id": "mem_9", "content": "Home airport LIS", "score": 0.74}]
    return [
        span(tr, wf, None, "invoke_workflow travel_desk", 0, 12000, {
            "gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "travel_desk"}),
        span(tr, ag, wf, "invoke_agent TripPlanner", 50, 11900, {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "anthropic", "gen_ai.agent.name": "TripPlanner",
            "gen_ai.conversation.id": "conv_trip_42", "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.tool.definitions": TRIP_TOOLS}),
        span(tr, "c000000000000010", ag, "search_memory", 100, 300, {
            "gen_ai.operation.name": "search_memory", "gen_ai.memory.store.id": "traveler-prefs",
            "gen_ai.memory.query.text": "flight preferences", "gen_ai.memory.record.count": 2, "gen_ai.memory.records": records}, kind=3),
        span(tr, pl, ag, "plan TripPlanner", 400, 2600, {"gen_ai.operation.name": "plan", "gen_ai.agent.name": "TripPlanner"}),
        span(tr, "c000000000000011", pl, "chat claude-sonnet-4-5", 450, 2500, dict(chat, **{
            "gen_ai.system_instructions": [{"type": "text", "content": "You are a travel desk agent. Plan first, then use tools."}],
            "gen_ai.input.messages": [user], "gen_ai.output.messages": [c1], "gen_ai.response.finish_reasons": ["tool_use"],
            "gen_ai.usage.input_tokens": 612, "gen_ai.usage.output_tokens": 140, "gen_ai.usage.reasoning.output_tokens": 64,
            "gen_ai.usage.cache_read.input_tokens": 0, "gen_ai.usage.cache_write.input_tokens": 512,
            "gen_ai.usage.text.input_tokens": 612, "gen_ai.tool.definitions": TRIP_TOOLS}), kind=3),
        span(tr, "c000000000000012", ag, "execute_tool search_flights", 2700, 4200, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_flights", "gen_ai.tool.call.id": "toolu_01", "gen_ai.tool.type": "function",
            "gen_ai.tool.call.arguments": {"from": "LIS", "to": "OSL", "date": "2026-06-12"}, "gen_ai.tool.call.result": flights}),
        span(tr, "c000000000000013", ag, "execute_tool get_weather", 2750, 7750, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "toolu_02", "gen_ai.tool.type": "function",
            "gen_ai.tool.call.arguments": {"city": "Oslo", "date": "2026-06-12"}, "error.type": "TimeoutError"},
            status={"code": 2, "message": "weather service timed out after 10s"}),
        span(tr, "c000000000000014", ag, "chat claude-sonnet-4-5", 7900, 11000, dict(chat, **{
            "gen_ai.input.messages": [user, c1, r1, r2], "gen_ai.output.messages": [final], "gen_ai.response.finish_reasons": ["end_turn"],
            "gen_ai.usage.input_tokens": 1030, "gen_ai.usage.output_tokens": 88, "gen_ai.usage.reasoning.output_tokens": 20,
            "gen_ai.usage.cache_read.input_tokens": 512}), kind=3),
        span(tr, "c000000000000015", ag, "upsert_memory", 11100, 11400, {
            "gen_ai.operation.name": "upsert_memory", "gen_ai.memory.store.id": "traveler-prefs", "gen_ai.memory.record.count": 1}, kind=3),
    ]


def genai_latest_file():
    doc = {"resourceSpans": [
        {"resource": {"attributes": attrs({"service.name": "travel-desk", "telemetry.sdk.language": "python"})},
         "schemaUrl": GENAI_SCHEMA,
         "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.genai", "version": "0.3.0"}, "schemaUrl": GENAI_SCHEMA,
                         "spans": trip_trace()}]},
    ]}
    (HERE / "genai-latest.otlp.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    otlp_file()
    console_file()
    jsonl_file()
    genai_latest_file()
