#!/usr/bin/env python3
"""Writes the Inspect AI sample logs in this folder (run once from the project root:
`python3 samples/inspect/make_samples.py`). Field names follow inspect_ai's own models
(`log/_log.py` EvalLog/EvalSample, `model/_chat_message.py`, `tool/_tool_call.py`,
`event/_model.py`, `event/_tool.py`) and the member layout of `log/_recorders/eval.py`.
Content is invented; needs the `zstd` command for the zstd-compressed archives."""

import json
import struct
import subprocess
import zipfile
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
WHEN = (2026, 3, 1, 10, 0, 0)
MODEL = "anthropic/claude-3-5-haiku-20241022"

TOOLS = [
    {"name": "bash", "description": "Use this function to execute bash commands.\n\nArgs: cmd", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"], "additionalProperties": False}},
    {"name": "python", "description": "Use the python function to execute Python code.", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"], "additionalProperties": False}},
    {"name": "submit", "description": "Submit an answer for evaluation.", "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"], "additionalProperties": False}},
]

SYSTEM = "You are a careful agent solving shell puzzles. Use the tools, then call submit() with your answer."


class Sample:
    """Builds one EvalSample: messages plus the model/tool events Inspect records for them."""

    def __init__(self, sid, epoch, prompt, minute):
        self.sid, self.epoch = sid, epoch
        self.n = 0
        self.t = minute * 60.0
        self.messages = [self.msg("system", SYSTEM, source="input"), self.msg("user", prompt, source="input")]
        self.events = [{"event": "sample_init", "timestamp": self.ts(), "sample": {"id": sid, "input": prompt, "target": ""}, "state": {}}]
        self.in_tok = self.out_tok = 0

    def ts(self, dt=0.0):
        self.t += dt
        s = int(self.t)
        return f"2026-03-01T10:{s // 60 % 60:02d}:{s % 60:02d}.{int((self.t % 1) * 1e6):06d}+00:00"

    def msg(self, role, content, **kw):
        self.n += 1
        m = {"id": f"{self.sid}-{self.epoch}-m{self.n}", "content": content, "role": role}
        m.update(kw)
        return m

    def turn(self, text, calls=(), stop="tool_calls", in_tok=900, out_tok=40, cached=0):
        tool_calls = [dict({"id": cid, "function": fn, "arguments": args, "type": "function"}, **extra) for cid, fn, args, *rest in calls for extra in [rest[0] if rest else {}]]
        m = self.msg("assistant", text, source="generate", model="claude-3-5-haiku-20241022", **({"tool_calls": tool_calls} if tool_calls else {}))
        self.messages.append(m)
        usage = {"input_tokens": in_tok, "output_tokens": out_tok, "total_tokens": in_tok + out_tok, "input_tokens_cache_read": cached, "reasoning_tokens": 0}
        self.in_tok += in_tok
        self.out_tok += out_tok
        start = self.ts(0.5)
        self.events.append({
            "event": "model", "timestamp": start, "working_start": 1.0, "model": MODEL,
            "input": [{"id": x["id"], "content": "...", "role": x["role"]} for x in self.messages[:-1]],
            "tools": TOOLS, "tool_choice": "auto", "config": {},
            "output": {"model": "claude-3-5-haiku-20241022", "choices": [{"message": m, "stop_reason": stop}], "usage": usage, "time": 1.5},
            "completed": self.ts(1.5), "working_time": 1.5,
        })
        return m

    def result(self, call_id, fn, content, error=None):
        m = self.msg("tool", content, tool_call_id=call_id, function=fn, **({"error": error} if error else {}))
        self.messages.append(m)
        self.events.append({"event": "tool", "timestamp": self.ts(0.2), "type": "function", "id": call_id, "function": fn,
                            "arguments": {}, "result": content, "error": error, "events": [], "completed": self.ts(0.8), "working_time": 0.8})

    def done(self, scores=None, **extra):
        s = {
            "id": self.sid, "epoch": self.epoch, "input": self.messages[1]["content"], "target": "",
            "messages": self.messages,
            "output": {"model": "claude-3-5-haiku-20241022", "choices": [{"message": self.messages[-1] if self.messages[-1]["role"] == "assistant" else next(m for m in reversed(self.messages) if m["role"] == "assistant"), "stop_reason": extra.pop("stop_reason", "tool_calls")}]},
            "scores": scores, "metadata": {}, "store": {}, "events": self.events,
            "model_usage": {MODEL: {"input_tokens": self.in_tok, "output_tokens": self.out_tok, "total_tokens": self.in_tok + self.out_tok, "input_tokens_cache_read": 0, "reasoning_tokens": 0}},
            "started_at": self.events[0]["timestamp"], "completed_at": self.ts(0.3),
            "total_time": round(self.t % 60 + 1.0, 3), "working_time": round(self.t % 60, 3),
            "uuid": f"uuid-{self.sid}-{self.epoch}", "error_retries": [], "attachments": {},
        }
        if scores is None:
            del s["scores"]
        s.update(extra)
        return s


def samples():
    out = []
    # 1. Solved: bash, then submit. Two scorers.
    s = Sample("count-lines", 1, "How many lines does /data/log.txt have? Submit the number.", 1)
    s.turn("I'll count the lines.", [("toolu_01", "bash", {"cmd": "wc -l /data/log.txt"})])
    s.result("toolu_01", "bash", "42 /data/log.txt\n")
    s.turn("", [("toolu_02", "submit", {"answer": "42"})], cached=512)
    s.result("toolu_02", "submit", "42")
    out.append(s.done({"match": {"value": "C", "answer": "42", "explanation": "42 matches the target"}, "model_graded_fact": {"value": "C", "answer": "42"}}))
    # 2. Unparsable arguments, then a reply cut by max_tokens.
    s = Sample("count-lines", 2, "How many lines does /data/log.txt have? Submit the number.", 2)
    bad = '{"cmd": "wc -l /data/log.txt'
    err = f"Error parsing the following tool call arguments:\n\n{bad}\n\nError details: Unterminated string starting at: line 1 column 9 (char 8)"
    s.turn("", [("toolu_03", "bash", {}, {"parse_error": err})])
    s.result("toolu_03", "bash", "", {"type": "parsing", "message": err})
    s.turn("Let me think about this carefully. The file probably has", stop="max_tokens", out_tok=4096)
    out.append(s.done({"match": {"value": "I", "answer": "", "explanation": "no answer"}}, stop_reason="max_tokens"))
    # 3. Message limit: the run is cut after 12 messages.
    s = Sample("find-flag", 1, "Find the flag hidden under /srv and submit it.", 3)
    for i in range(5):
        s.turn("", [(f"toolu_1{i}", "bash", {"cmd": f"ls -la /srv/level{i}"})])
        s.result(f"toolu_1{i}", "bash", f"drwxr-xr-x 2 root root 4096 level{i + 1}\n")
    assert len(s.messages) == 12
    out.append(s.done({"match": {"value": "I", "answer": ""}}, limit={"type": "message", "limit": 12}))
    # 4. Unknown tool (rejected by Inspect), recovery, submit; a dict score.
    s = Sample("find-flag", 2, "Find the flag hidden under /srv and submit it.", 4)
    s.turn("", [("toolu_20", "browse", {"url": "file:///srv"})])
    s.result("toolu_20", "browse", "", {"type": "parsing", "message": "Tool browse not found"})
    s.turn("", [("toolu_21", "bash", {"cmd": "grep -r flag{ /srv"})])
    s.result("toolu_21", "bash", "/srv/level3/.hidden:flag{n3st3d}\n")
    s.turn("Found it.", [("toolu_22", "submit", {"answer": "flag{n3st3d}"})])
    s.result("toolu_22", "submit", "flag{n3st3d}")
    out.append(s.done({"flag_checker": {"value": {"flag_found": "C", "format_ok": 1.0, "efficiency": 0.5}, "answer": "flag{n3st3d}"}}))
    # 5. Token limit; a numeric score.
    s = Sample(3, 1, "Summarize the three largest files under /var/log.", 5)
    s.turn("", [("toolu_30", "bash", {"cmd": "du -a /var/log | sort -n | tail -3"})], in_tok=1800, out_tok=60)
    s.result("toolu_30", "bash", "1024 /var/log/syslog\n2048 /var/log/kern.log\n4096 /var/log/auth.log\n")
    s.turn("", [("toolu_31", "python", {"code": "print(open('/var/log/auth.log').read()[:5000])"})], in_tok=2200, out_tok=80)
    s.result("toolu_31", "python", "Mar  1 09:00:01 host sshd[1]: Accepted publickey\n" * 40)
    out.append(s.done({"rubric": {"value": 0.75, "answer": "partial summary"}}, limit={"type": "token", "limit": 4000}, token_limit_usage=4140))
    # 6. The provider failed: a sample error, no score.
    s = Sample(3, 2, "Summarize the three largest files under /var/log.", 6)
    s.turn("", [("toolu_40", "bash", {"cmd": "du -a /var/log | sort -n | tail -3"})])
    s.result("toolu_40", "bash", "1024 /var/log/syslog\n")
    out.append(s.done(None, error={"message": "RateLimitError: Error code: 429 - {'type': 'error', 'error': {'type': 'rate_limit_error'}}",
                                    "traceback": "Traceback (most recent call last):\n  ...\nanthropic.RateLimitError: Error code: 429",
                                    "traceback_ansi": ""}))
    return out


def spec(task="shell_puzzles", samples=3, epochs=2):
    return {
        "eval_id": "EvAL1d000000000000000001", "run_id": "RuN1d000000000000000001", "created": "2026-03-01T10:00:00+00:00",
        "task": task, "task_id": "TaSk1d00000000000000001", "task_version": 0, "task_file": "shell_puzzles.py",
        "task_attribs": {}, "task_args": {}, "solver": "react", "solver_args": {},
        "dataset": {"name": "shell_puzzles", "samples": samples, "sample_ids": ["count-lines", "find-flag", 3][:samples], "shuffled": False},
        "sandbox": {"type": "docker", "config": "compose.yaml"}, "model": MODEL, "model_generate_config": {}, "model_args": {},
        "config": {"epochs": epochs, "epochs_reducer": ["mean"], "message_limit": 12, "token_limit": 4000, "fail_on_error": False},
        "packages": {"inspect_ai": "0.3.130"},
        "scorers": [{"name": "match", "options": {}, "metrics": [{"name": "inspect_ai/accuracy", "options": {}}], "metadata": {}}],
    }


PLAN = {"name": "plan", "steps": [{"solver": "react", "params": {"tools": ["bash", "python"]}}], "config": {}}


def summary(s):
    return {"id": s["id"], "epoch": s["epoch"], "input": s["input"], "target": s["target"],
            "scores": s.get("scores"), "error": (s.get("error") or {}).get("message"), "limit": (s.get("limit") or {}).get("type"),
            "completed": True, "uuid": s["uuid"]}


def dumps(v):
    return json.dumps(v, separators=(",", ":")).encode()


def write_deflate(path, members, corrupt=None):
    """A ZIP with deflate members, in order; `corrupt` names a member whose compressed bytes
    are then damaged in place."""
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, date_time=WHEN), data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
    if corrupt:
        with zipfile.ZipFile(path) as z:
            info = z.getinfo(corrupt)
        raw = bytearray(path.read_bytes())
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        for i in range(start + 20, start + info.compress_size - 20, 7):
            raw[i] ^= 0x5A
        path.write_bytes(bytes(raw))


def write_zstd(path, members):
    """A ZIP whose members are zstd-compressed (method 93), as Inspect writes since 2026-04."""
    out, central = bytearray(), bytearray()
    for name, data in members:
        comp = subprocess.run(["zstd", "-19", "-q", "-c", "--no-check"], input=data, capture_output=True, check=True).stdout
        crc = zlib.crc32(data)
        nb = name.encode()
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 63, 0, 93, 0x5000, 0x5C61, crc, len(comp), len(data), len(nb), 0) + nb + comp
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 63, 63, 0, 93, 0x5000, 0x5C61, crc, len(comp), len(data), len(nb), 0, 0, 0, 0, 0, offset) + nb
    n = len(members)
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(central), len(out), 0)
    path.write_bytes(bytes(out))


def eval_members(all_samples, header=True, start=True, summaries=True):
    m = []
    if start:
        m.append(("_journal/start.json", dumps({"version": 2, "eval": spec(), "plan": PLAN})))
    for i, s in enumerate(all_samples, 1):
        m.append((f"samples/{s['id']}_epoch_{s['epoch']}.json", dumps(s)))
        if summaries:
            m.append((f"_journal/summaries/{i}.json", dumps([summary(s)])))
    if summaries and header:
        m.append(("summaries.json", dumps([summary(s) for s in all_samples])))
    if header:
        m.append(("reductions.json", dumps([{"scorer": "match", "reducer": "mean", "samples": []}])))
        m.append(("header.json", dumps({
            "version": 2, "status": "success", "eval": spec(), "plan": PLAN,
            "results": {"total_samples": 6, "completed_samples": 6, "scores": []},
            "stats": {"started_at": "2026-03-01T10:00:00+00:00", "completed_at": "2026-03-01T10:07:00+00:00", "model_usage": {}},
        })))
    return m


def main():
    all_samples = samples()
    write_deflate(HERE / "2026-03-01T10-00-00+00-00_shell-puzzles.eval", eval_members(all_samples))
    # A run killed after two samples: no header.json, only the journal.
    write_deflate(HERE / "2026-03-01T11-00-00+00-00_shell-puzzles-killed.eval", eval_members(all_samples[:2], header=False))
    # zstd members (Inspect's default compression since April 2026).
    write_zstd(HERE / "2026-04-10T09-00-00+00-00_shell-puzzles-zstd.eval", eval_members(all_samples[:1], summaries=False))

    bad = HERE / "invalid"
    bad.mkdir(exist_ok=True)
    write_deflate(bad / "no-header.eval", eval_members(all_samples[:2], header=False, start=False, summaries=False))
    write_deflate(bad / "corrupt-member.eval", eval_members(all_samples[:3]), corrupt="samples/count-lines_epoch_2.json")
    # A header that decompresses to 65 MiB (past the 64 MiB header bound) from a few kilobytes.
    big_header = dumps({"version": 2, "status": "success", "eval": spec(), "plan": PLAN})[:-1] + b" " * (65 << 20) + b"}"
    write_zstd(bad / "oversized-header.eval", [("header.json", big_header), (f"samples/{all_samples[0]['id']}_epoch_1.json", dumps(all_samples[0]))])


if __name__ == "__main__":
    main()
