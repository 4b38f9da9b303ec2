"""Writes the two Harbor trials of this directory (run: python3 make_samples.py).

The shape of real trials from a job whose host lost its network (accuracy suite n=89, 99, 100):
Harbor's 600 s agent clock fired, but the agent had taken no step for longer than the whole
budget and the agent phase ended 1072 s after it began, because even the cancellation hung.
Beside it, a trial that was working until its clock fired, and was stopped on time.
"""
import json
import os
from datetime import datetime, timedelta, timezone

T0 = datetime(2026, 3, 5, 9, 0, 0, tzinfo=timezone.utc)


def iso(s):
    return (T0 + timedelta(seconds=s)).isoformat().replace("+00:00", "Z")


def trial(name, step_times, agent_secs):
    os.makedirs(f"{name}/agent", exist_ok=True)
    steps = [{"step_id": 1, "timestamp": iso(5), "source": "user", "message": "Fix the parser in src/parse.py so tests/test_parse.py passes."}]
    for i, t in enumerate(step_times):
        steps.append({
            "step_id": i + 2,
            "timestamp": iso(t),
            "source": "agent",
            "message": f"Analysis: step {i}. Plan: look at the parser.",
            "tool_calls": [{"tool_call_id": f"c{i}", "function_name": "bash_command", "arguments": {"keystrokes": f"sed -n {10 * i + 1},{10 * i + 10}p src/parse.py\n", "duration": 1.0}}],
            "observation": {"results": [{"source_call_id": f"c{i}", "content": "def parse(s):\n    return s.split(',')\n"}]},
        })
    traj = {"schema_version": "ATIF-v1.6", "session_id": f"{name}-session", "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-5-mini"}, "steps": steps}
    with open(f"{name}/agent/trajectory.json", "w") as f:
        json.dump(traj, f, indent=2)
    result = {
        "id": "00000000-0000-4000-8000-0000000000" + ("51" if "stalled" in name else "52"),
        "task_name": "fix-parser",
        "trial_name": name,
        "trial_uri": f"file:///jobs/outage/{name}",
        "task_id": {"path": "tasks/fix-parser"},
        "source": None,
        "task_checksum": "0" * 40,
        "config": {"agent": {"name": "terminus-2", "model_name": "openai/gpt-5-mini"}},
        "agent_info": {"name": "terminus-2", "version": "2.0.0", "model_info": {"name": "gpt-5-mini", "provider": "openai"}},
        "agent_result": {"n_input_tokens": 20000, "n_cache_tokens": 0, "n_output_tokens": 1500, "cost_usd": 0.01},
        "verifier_result": {"rewards": {"reward": 0.0}},
        "exception_info": {
            "exception_type": "AgentTimeoutError",
            "exception_message": "Agent execution timed out after 600.0 seconds",
            "exception_traceback": "Traceback (most recent call last):\n  ...\nasyncio.exceptions.CancelledError\n",
            "occurred_at": iso(3 + agent_secs),
        },
        "started_at": iso(0),
        "finished_at": iso(agent_secs + 30),
        "environment_setup": {"started_at": iso(0), "finished_at": iso(3)},
        "agent_setup": {"started_at": iso(3), "finished_at": iso(3)},
        "agent_execution": {"started_at": iso(3), "finished_at": iso(3 + agent_secs)},
        "verifier": {"started_at": iso(agent_secs + 5), "finished_at": iso(agent_secs + 30)},
    }
    with open(f"{name}/result.json", "w") as f:
        json.dump(result, f, indent=2)


# Steps until 130 s, then nothing until the agent phase ends at 1072 s: idle 945 s > 600 s.
trial("fix-parser__stalled", [20, 45, 70, 100, 130], 1072.0)
# Steps every 60 s until the clock: stopped on time (600.2 s), a budget.
trial("fix-parser__working", [20 + 60 * k for k in range(10)], 600.2)
