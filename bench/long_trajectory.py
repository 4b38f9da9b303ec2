#!/usr/bin/env python3
"""Writes one mini-swe-agent v1 trajectory of N steps (default 5,000) for the HTML report's
long-page benchmark: bench/long_trajectory.py OUT_DIR [N]. Generated, not a real transcript;
its outputs vary in length (some long enough to fold) so the page is like a real long run."""
import json
import os
import sys

out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5000
task = "long__run-5000"
msgs = [
    {"role": "system", "content": "You are a helpful assistant that can interact multiple times with a computer shell."},
    {"role": "user", "content": "<pr_description>\nFix the flaky parser in src/parse.py.\n</pr_description>"},
]
turns = (n - 2) // 2
for i in range(turns):
    cmd = f"sed -n '{i},{i + 40}p' src/parse.py" if i % 3 else f"python -m pytest tests/test_parse.py -k case_{i} -q"
    msgs.append({"role": "assistant", "content": f"THOUGHT: look at part {i} of the parser.\n\n```bash\n{cmd}\n```"})
    lines = 3 + (i * 7919) % 60
    body = "\n".join(f"{i}.{j}: def parse_{j}(tokens): return tokens[{j}:]" for j in range(lines))
    msgs.append({"role": "user", "content": f"<returncode>{1 if i % 5 == 0 else 0}</returncode>\n<output>\n{body}\n</output>"})
msgs.append({"role": "assistant", "content": "THOUGHT: done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"})
d = {
    "info": {"exit_status": "Submitted", "submission": "", "model_stats": {"instance_cost": 3.2, "api_calls": turns + 1}, "mini_version": "1.9.1"},
    "messages": msgs,
    "trajectory_format": "mini-swe-agent-1",
    "instance_id": task,
}
os.makedirs(os.path.join(out, task), exist_ok=True)
with open(os.path.join(out, task, f"{task}.traj.json"), "w") as f:
    json.dump(d, f)
