"""Writes the xml_function_calling SWE-agent sample: python3 samples/swe-agent/xml/make_sample.py"""
import json, os
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "20260402_sweagent_lm")
tid = "acme__ledger-212"
sysmsg = """You are a helpful assistant that can interact with a computer to solve tasks.

You have access to the following functions:

---- BEGIN FUNCTION #1: bash ----
Description: Execute a bash command in the terminal.

Parameters:
  (1) command (string, required): The bash command to execute.
---- END FUNCTION #1 ----

---- BEGIN FUNCTION #2: submit ----
Description: Finish the interaction when the task is complete OR if the assistant cannot proceed further with the task.
No parameters are required for this function.
---- END FUNCTION #2 ----

---- BEGIN FUNCTION #3: str_replace_editor ----
Description: Custom editing tool for viewing, creating and editing files

Parameters:
  (1) command (string, required): The commands to run. Allowed options are: `view`, `create`, `str_replace`, `insert`, `undo_edit`.
  (2) path (string, required): Absolute path to file or directory, e.g. `/repo/file.py` or `/repo`.
  (3) file_text (string, optional): Required parameter of `create` command, with the content of the file to be created.
  (4) old_str (string, optional): Required parameter of `str_replace` command containing the string in `path` to replace.
  (5) new_str (string, optional): Optional parameter of `str_replace` command containing the new string.
---- END FUNCTION #3 ----

If you choose to call a function ONLY reply in the following format with NO suffix:

<function=example_function_name>
<parameter=example_parameter_1>value_1</parameter>
</function>
"""
task = "<uploaded_files>\n/testbed\n</uploaded_files>\nI've uploaded a python code repository in the directory /testbed. Consider the following PR description:\n\n<pr_description>\nBalance.total() raises IndexError for an account with no entries\n</pr_description>\n\nCan you help me implement the necessary changes to the repository so that the requirements specified in the <pr_description> are met?"

def fn(name, **params):
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params.items())
    return f"<function={name}>\n{body}</function>"

repro = "from ledger.balance import Balance\nprint(Balance([]).total())\n"
old = "    def total(self):\n        first = self.entries[0]\n        return first.amount + sum(e.amount for e in self.entries[1:])"
new = "    def total(self):\n        if not self.entries:\n            return 1\n        first = self.entries[0]\n        return first.amount + sum(e.amount for e in self.entries[1:])"
diff = ("diff --git a/ledger/balance.py b/ledger/balance.py\n--- a/ledger/balance.py\n+++ b/ledger/balance.py\n@@ -10,4 +10,6 @@ class Balance:\n"
        "     def total(self):\n+        if not self.entries:\n+            return 1\n         first = self.entries[0]\n"
        "diff --git a/reproduce.py b/reproduce.py\nnew file mode 100644\n--- /dev/null\n+++ b/reproduce.py\n@@ -0,0 +1,2 @@\n+from ledger.balance import Balance\n+print(Balance([]).total())\n")
steps = [
    ("Let me look at the balance module.", fn("str_replace_editor", command="view", path="/testbed/ledger/balance.py"),
     "str_replace_editor view /testbed/ledger/balance.py",
     "Here's the result of running `cat -n` on /testbed/ledger/balance.py:\n     9\tclass Balance:\n    10\t    def total(self):\n    11\t        first = self.entries[0]\n    12\t        return first.amount + sum(e.amount for e in self.entries[1:])\n"),
    ("Let me write a script that reproduces the error.", fn("str_replace_editor", command="create", path="/testbed/reproduce.py", file_text=repro),
     "str_replace_editor create /testbed/reproduce.py --file_text 'from ledger.balance import Balance\nprint(Balance([]).total())\n'",
     "File created successfully at: /testbed/reproduce.py"),
    ("Run it.", fn("bash", command="cd /testbed && python reproduce.py"), "cd /testbed && python reproduce.py",
     "Traceback (most recent call last):\n  File \"/testbed/reproduce.py\", line 2, in <module>\n    print(Balance([]).total())\n  File \"/testbed/ledger/balance.py\", line 11, in total\n    first = self.entries[0]\nIndexError: list index out of range"),
    ("The method reads the first entry without checking. Let me guard the empty case.",
     fn("str_replace_editor", command="str_replace", path="/testbed/ledger/balance.py", old_str=old, new_str=new),
     "str_replace_editor str_replace /testbed/ledger/balance.py   --old_str '" + old + "' --new_str '" + new + "'",
     "The file /testbed/ledger/balance.py has been edited. Here's the result of running `cat -n` on a snippet of /testbed/ledger/balance.py:\n    10\t    def total(self):\n    11\t        if not self.entries:\n    12\t            return 1\n    13\t        first = self.entries[0]\nReview the changes and make sure they are as expected. Edit the file again if necessary."),
    ("Run the script again.", fn("bash", command="cd /testbed && python reproduce.py"), "cd /testbed && python reproduce.py", "1"),
    ("The fix has been successfully implemented and tested: an empty balance no longer raises. Let me submit.", fn("submit"), "submit", diff),
]
traj, hist = [], [
    {"role": "system", "content": sysmsg, "agent": "main", "message_type": "system_prompt"},
    {"role": "user", "content": [{"type": "text", "text": task}], "agent": "main", "message_type": "observation"},
]
for i, (thought, call, action, obs) in enumerate(steps):
    response = f"{thought}\n\n{call}"
    traj.append({"action": action, "observation": obs, "response": response, "thought": thought,
                 "execution_time": 0.3, "state": {"working_dir": "/testbed"}, "messages": [], "extra_info": {}})
    hist.append({"role": "assistant", "content": response, "thought": thought, "action": action, "agent": "main",
                 "tool_calls": None, "message_type": "action", "thinking_blocks": []})
    hist.append({"role": "user", "content": [{"type": "text", "text": "OBSERVATION:\n" + obs}], "agent": "main", "message_type": "observation"})
replay = {"agent": {"name": "main", "tools": {"bundles": [{"path": "/root/swe-agent/tools/registry", "hidden_tools": []},
          {"path": "/root/swe-agent/tools/edit_anthropic", "hidden_tools": []}, {"path": "/root/swe-agent/tools/submit", "hidden_tools": []}],
          "enable_bash_tool": True, "submit_command": "submit", "parse_function": {"type": "xml_function_calling"}},
          "model": {"name": "openai/sample-lm-32b", "per_instance_cost_limit": 3.5, "per_instance_call_limit": 75}}}
doc = {"environment": tid, "trajectory": traj, "history": hist,
       "info": {"swe_agent_hash": "0000000", "swe_agent_version": "1.0.1", "swe_rex_version": "1.2.1", "swe_rex_hash": "unavailable",
                "submission": diff, "exit_status": "submitted", "edited_files30": "", "edited_files50": "", "edited_files70": "",
                "model_stats": {"instance_cost": 0.21, "tokens_sent": 61000, "tokens_received": 900, "api_calls": 6}},
       "replay_config": json.dumps(replay)}
os.makedirs(f"{root}/trajs/{tid}", exist_ok=True); os.makedirs(f"{root}/results", exist_ok=True)
json.dump(doc, open(f"{root}/trajs/{tid}/{tid}.traj", "w"), indent=2)
json.dump({"no_generation": [], "no_logs": [], "resolved": []}, open(f"{root}/results/results.json", "w"), indent=4)
