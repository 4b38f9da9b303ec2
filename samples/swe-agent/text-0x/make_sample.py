"""Writes the SWE-agent 0.x text-action samples (windowed `open`/`edit N:M ... end_of_edit`,
`state` as a JSON string, the harness's `exit_cost` entry) and the run's old-style
results.json: python3 samples/swe-agent/text-0x/make_sample.py"""
import json
import os

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "20240604_sample-0x")
REPO = "/acme__ledger"


def state(open_file="n/a"):
    return json.dumps({"open_file": open_file, "working_dir": REPO}) + "\n"


def entry(thought, action, observation, open_file="n/a"):
    return {"response": f"{thought}\n\n```\n{action}\n```", "thought": thought, "action": action + "\n",
            "observation": observation, "state": state(open_file)}


EDIT = "edit 11:11\n        if not self.entries:\n            return 1\n        first = self.entries[0]\nend_of_edit"
OPENED = f"[File: {REPO}/ledger/balance.py (30 lines total)]\n9:class Balance:\n10:    def total(self):\n11:        first = self.entries[0]"
common = [
    entry("Let me open the balance module.", "open ledger/balance.py", OPENED, f"{REPO}/ledger/balance.py"),
    entry("Guard the empty case.", EDIT, f"[File: {REPO}/ledger/balance.py (32 lines total)]\n10:    def total(self):\n11:        if not self.entries:\n12:            return 1", f"{REPO}/ledger/balance.py"),
    entry("Run the reproduction.", "python reproduce.py", "1", f"{REPO}/ledger/balance.py"),
]
runs = {
    # The cost limit stopped the run: its last entry is the harness's exit, and this fork writes
    # only `submitted` as the exit status.
    "acme__ledger-301": common + [
        entry("Let me look at the callers too.", "search_dir total", "Found 3 matches for \"total\" in /acme__ledger", f"{REPO}/ledger/balance.py"),
        {"response": "Exit due to cost limit", "thought": "Exit due to cost limit", "action": "exit_cost", "observation": "", "state": state()},
    ],
    # The team submits what it could not make work, and says so.
    "acme__ledger-302": common + [
        entry("The reproduction still fails for negative entries. We have tried several approaches.", "fail", ""),
        entry("The Programmer reports the issue persists. It seems we have reached an impasse with the current approach; submitting the attempt.", "submit",
              "\ndiff --git a/ledger/balance.py b/ledger/balance.py\n--- a/ledger/balance.py\n+++ b/ledger/balance.py\n@@ -11 +11,3 @@\n+        if not self.entries:\n+            return 1\n"),
    ],
}
os.makedirs(os.path.join(RUN, "trajs"), exist_ok=True)
for task, traj in runs.items():
    history = [{"role": "system", "content": "SETTING: You are an autonomous programmer.", "agent": "primary"},
               {"role": "user", "content": "Balance.total() raises IndexError for an account with no entries.", "agent": "primary"}]
    for e in traj:
        history.append({"role": "assistant", "content": e["response"], "agent": "primary"})
    doc = {"environment": "swe_main", "trajectory": traj, "history": history,
           "info": {"exit_status": "submitted", "submission": "diff --git a/ledger/balance.py b/ledger/balance.py\n",
                    "model_stats": {"total_cost": 8.0, "instance_cost": 8.0, "tokens_sent": 790000, "tokens_received": 4000, "api_calls": len(traj)}}}
    json.dump(doc, open(os.path.join(RUN, "trajs", f"{task}.traj"), "w"), indent=1)
json.dump({"no_generation": [], "generated": ["acme__ledger-301", "acme__ledger-302"], "with_logs": ["acme__ledger-301", "acme__ledger-302"],
           "install_fail": [], "reset_failed": [], "no_apply": [], "applied": ["acme__ledger-301", "acme__ledger-302"],
           "test_errored": [], "test_timeout": [], "resolved": []}, open(os.path.join(RUN, "results.json"), "w"), indent=4)
