"""Writes the OpenHands completion-log sample (see README.md beside it):
python3 samples/openhands/completions/make_sample.py"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "20250329_OpenHands_Sample-Model")
SYSTEM = "You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks."


def call(i, name, args, text):
    return {"content": text, "role": "assistant",
            "tool_calls": [{"id": f"toolu_{i:02d}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def result(i, name, out):
    return {"content": out, "role": "tool", "tool_call_id": f"toolu_{i:02d}", "name": name}


def as_text(m):
    """The same message as non-native function calling sends it."""
    if m["role"] == "tool":
        return {"role": "user", "content": f"EXECUTION RESULT of [{m['name']}]:\n{m['content']}"}
    if m["role"] == "assistant":
        c = m["tool_calls"][0]["function"]
        params = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in json.loads(c["arguments"]).items())
        return {"role": "assistant", "content": f"{m['content']}\n<function={c['name']}>\n{params}</function>"}
    return m


def log(turns, last, ts):
    fn = [{"role": "system", "content": SYSTEM},
          {"role": "user", "content": "<uploaded_files>\n/workspace/acme__ledger__1.0\n</uploaded_files>\nBalance.total() raises IndexError for an account with no entries."}]
    for t in turns:
        fn.extend(t)
    reply = {"content": last["content"], "role": "assistant",
             "tool_calls": [{"index": 1, "function": {"arguments": last["tool_calls"][0]["function"]["arguments"], "name": last["tool_calls"][0]["function"]["name"]}, "id": None, "type": "function"}]}
    text_reply = as_text(last)["content"]
    return {
        "messages": [as_text(m) for m in fn],
        "response": {"id": "r", "created": int(ts), "model": None, "object": "chat.completion",
                     "choices": [{"finish_reason": "stop", "index": 0, "message": {"content": text_reply, "role": "assistant"}}],
                     "usage": {"completion_tokens": 60, "prompt_tokens": 9000, "total_tokens": 9060}},
        "args": [], "kwargs": {"stop": ["</function"], "tool_choice": "none"}, "timestamp": ts, "cost": 0.0,
        "fncall_messages": fn,
        "fncall_response": {"id": "r", "created": int(ts), "model": None, "object": "chat.completion",
                            "choices": [{"finish_reason": "stop", "index": 0, "message": reply}],
                            "usage": {"completion_tokens": 60, "prompt_tokens": 9000, "total_tokens": 9060}},
    }


def write(task, name, doc):
    d = os.path.join(RUN, "trajs", task)
    os.makedirs(d, exist_ok=True)
    json.dump(doc, open(os.path.join(d, name), "w"), indent=1)


view = [call(1, "str_replace_editor", {"command": "view", "path": "/workspace/acme__ledger__1.0/ledger/balance.py"}, "Let me look at the balance module."),
        result(1, "str_replace_editor", "     9\tclass Balance:\n    10\t    def total(self):\n    11\t        first = self.entries[0]")]
edit = [call(2, "str_replace_editor", {"command": "str_replace", "path": "/workspace/acme__ledger__1.0/ledger/balance.py",
                                       "old_str": "        first = self.entries[0]", "new_str": "        if not self.entries:\n            return 1\n        first = self.entries[0]"},
             "Guard the empty case."),
        result(2, "str_replace_editor", "The file /workspace/acme__ledger__1.0/ledger/balance.py has been edited.")]
run = [call(3, "execute_bash", {"command": "cd /workspace/acme__ledger__1.0 && python -c 'from ledger.balance import Balance; print(Balance([]).total())'"}, "Check it."),
       result(3, "execute_bash", "1\n[The command completed with exit code 0.]")]
finish = call(4, "finish", {}, "The issue has been fixed: an empty balance no longer raises.")
# One run, one log: it finished on its own with a wrong fix.
write("acme__ledger-212", "Sample-Model-1743405792.5.json", log([view, edit, run], finish, 1743405792.5))
# Another run, two logs: the earlier call is a prefix of the later one, which holds the run.
more = call(3, "execute_bash", {"command": "cd /workspace/acme__ledger__1.0 && python -m pytest tests/test_balance.py -q"}, "Run the tests.")
write("acme__ledger-213", "Sample-Model-1743405900.0.json", log([view], edit[0], 1743405900.0))
write("acme__ledger-213", "Sample-Model-1743405960.25.json", log([view, edit], more, 1743405960.25))
os.makedirs(os.path.join(RUN, "results"), exist_ok=True)
json.dump({"total_instances": 3, "resolved_instances": 1, "unresolved_instances": 1, "empty_error_patch_instances": 1,
           "completed_ids": ["acme__ledger-210", "acme__ledger-212"], "resolved": ["acme__ledger-210"],
           "unresolved_ids": ["acme__ledger-212"], "empty_error_patch_ids": ["acme__ledger-213"]},
          open(os.path.join(RUN, "results", "results.json"), "w"), indent=1)
