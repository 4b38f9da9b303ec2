#!/usr/bin/env python3
"""Writes the sample study: two arms over the same 34 tasks as Harbor job directories.

Arm A runs mini-swe-agent (bash actions, "think"), arm B terminus-2 (keystrokes, "no think").
Every failure class appears, with timings, tokens and costs. Deterministic: rerunning it
rewrites the same bytes. Run from the repository root: python3 samples/study/make_sample.py
"""
import json
import os
import random
import shutil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)))
TASKS = [
    "fix-git", "csv-to-parquet", "hello-world", "count-dataset-tokens", "fibonacci-server", "fix-permissions",
    "grid-pattern-transform", "jupyter-notebook-server", "nginx-request-logging", "simple-web-scraper", "sqlite-with-gcov",
    "password-recovery", "cron-broken-network", "git-multibranch", "pytorch-model-cli", "reshard-c4-data", "path-tracing",
    "heterogeneous-dates", "crack-7z-hash", "extract-moves-from-video", "organization-json-generator", "polyglot-c-py",
    "processing-pipeline", "raman-fitting", "sanitize-git-repo", "security-vulhub-minio", "solana-data", "tmux-advanced-workflow",
    "vim-terminal-task", "write-compressor", "decommissioning-service-with-sensitive-data", "incompatible-python-fasttext",
    "modernize-fortran-build", "openssl-selfsigned-cert",
]
assert len(TASKS) == 34


def w(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


class Arm:
    def __init__(self, dirname, agent, model, tool, rng):
        self.dir = os.path.join(ROOT, dirname, "job-2026-02-20__09-00-00")
        self.agent, self.model, self.tool, self.rng = agent, model, tool, rng
        self.trials = []

    def act(self, cmd, out=""):
        if self.tool == "bash":
            return ("bash", {"command": cmd}, f"<returncode>0</returncode>\n<output>\n{out}</output>")
        return ("bash_command", {"keystrokes": cmd + "\n", "duration": 1.0}, f"New Terminal Output:\n$ {cmd}\n{out}")

    def finish(self):
        if self.tool == "bash":
            return ("bash", {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"}, "<returncode>0</returncode>\n<output>\n</output>")
        return ("mark_task_complete", {}, "Task marked complete.")

    def trial(self, i, task, reward, steps, exc=None, minutes=None):
        name = f"{task}__{self.rng.choice('ABCDEFGH')}{i:03d}{self.rng.choice('xyzw')}Q"
        d = os.path.join(self.dir, name)
        minutes = minutes if minutes is not None else self.rng.randint(2, 14)
        n = len(steps) if steps else 0
        tok_in = 4000 * max(n, 1) + self.rng.randint(0, 3000)
        tok_out = 350 * max(n, 1) + self.rng.randint(0, 200)
        start = 60 + 15 * i
        res = {
            "id": f"{self.rng.getrandbits(128):032x}", "task_name": task, "trial_name": name,
            "trial_uri": f"file:///jobs/{name}", "task_id": {"path": f"tasks/{task}"}, "source": "terminal-bench-core", "task_checksum": f"{self.rng.getrandbits(160):040x}",
            "config": {"agent": {"name": self.agent, "model_name": self.model}},
            "agent_info": {"name": self.agent, "version": "1.0.0", "model_info": {"name": self.model.split("/")[1], "provider": self.model.split("/")[0]}},
            "agent_result": {"n_input_tokens": tok_in, "n_cache_tokens": tok_in // 3, "n_output_tokens": tok_out, "cost_usd": round(tok_in * 1.25e-6 + tok_out * 1e-5, 6)},
            "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
            "exception_info": None if exc is None else {"exception_type": exc[0], "exception_message": exc[1], "exception_traceback": "", "occurred_at": "2026-02-20T10:00:00"},
            "started_at": ts(start), "finished_at": ts(start + minutes * 60 + 90),
            "agent_execution": {"started_at": ts(start + 30), "finished_at": ts(start + 30 + minutes * 60)},
        }
        w(os.path.join(d, "result.json"), res)
        if steps is not None:
            atif = {"schema_version": "ATIF-v1.6", "session_id": f"{name}-session", "agent": {"name": self.agent, "version": "1.0.0", "model_name": self.model},
                    "steps": [{"step_id": 1, "source": "user", "message": f"Solve the task `{task}` in /app. The tests in /tests check the result."}]}
            for k, s in enumerate(steps):
                st = {"step_id": k + 2, "timestamp": ts(start + 30 + 20 * k), "source": "agent", "message": s.get("text", ""),
                      "metrics": {"prompt_tokens": 4000, "completion_tokens": 350, "cost_usd": 0.0085}}
                if "think" in s:
                    st["reasoning_content"] = s["think"]
                calls = s.get("calls", [])
                if calls:
                    st["tool_calls"] = [{"tool_call_id": f"call_{k}_{j}", "function_name": n, "arguments": a} for j, (n, a, _) in enumerate(calls)]
                    st["observation"] = {"results": [{"source_call_id": f"call_{k}_{j}", "content": o} for j, (_, _, o) in enumerate(calls) if o is not None]}
                if "env" in s:
                    st["observation"] = {"results": [{"content": s["env"]}]}
                atif["steps"].append(st)
            w(os.path.join(d, "agent", "trajectory.json"), atif)
        self.trials.append((name, reward, exc))

    def job_result(self):
        w(os.path.join(self.dir, "result.json"), {"id": f"{self.rng.getrandbits(128):032x}", "started_at": "2026-02-20T09:00:00", "finished_at": "2026-02-20T18:00:00",
          "n_total_trials": len(self.trials), "stats": {"n_trials": len(self.trials), "n_errors": sum(1 for t in self.trials if t[2]), "evals": {}}})
        w(os.path.join(self.dir, "config.json"), {"job_name": os.path.basename(self.dir), "jobs_dir": "jobs", "n_attempts": 1, "agents": [{"name": self.agent, "model_name": self.model}]})


def ts(seconds):
    h, rem = divmod(9 * 3600 + seconds, 3600)
    m, s = divmod(rem, 60)
    return f"2026-02-20T{h:02d}:{m:02d}:{s:02d}Z"


def scenarios(arm, plan):
    """Writes one trial per task following `plan`: task index -> kind."""
    for i, task in enumerate(TASKS):
        kind = plan[i]
        a, fin = arm.act, arm.finish()
        edit = a(f"sed -i 's/TODO/done/' /app/{task}.py")
        test_ok = a("pytest -q /tests", "...\n3 passed in 0.41s\n")
        test_bad = a("pytest -q /tests", "F..\nFAILED /tests/test_outputs.py::test_result\n1 failed, 2 passed in 0.52s\n")
        look = a(f"ls /app && cat /app/{task}.py", "def main():\n    pass  # TODO\n")
        think = "Reasoning about the task before acting." if arm.tool == "bash" else None
        def st(calls=None, text="", **kw):
            s = {"calls": calls or [], "text": text, **kw}
            if think:
                s["think"] = think
            return s
        if kind == "pass":
            arm.trial(i, task, 1.0, [st([look]), st([edit]), st([test_ok]), st([fin])])
        elif kind == "pass-timeout":
            arm.trial(i, task, 1.0, [st([look]), st([edit]), st([test_ok]), st([a("sleep 900")])], exc=("AgentTimeoutError", "Agent execution timed out after 900.0 seconds"), minutes=15)
        elif kind == "budget-time":
            loops = [st([a(f"cat /app/{task}.py", "def main():\n    pass  # TODO\n")]) for _ in range(4)]
            arm.trial(i, task, 0.0, [st([look])] + loops + [st([a("make -j1 all", "compiling...\n")])], exc=("AgentTimeoutError", "Agent execution timed out after 900.0 seconds"), minutes=15)
        elif kind == "budget-context":
            arm.trial(i, task, 0.0, [st([look]), st([a("cat /var/log/big.log", "line\n" * 200)])], exc=("ContextLengthExceededError", "Context length exceeded: 131072 tokens"), minutes=6)
        elif kind == "hallucinated":
            arm.trial(i, task, 0.0, [st([look]), st([("search_files", {"pattern": "TODO"}, "Unknown tool: search_files")]), st([fin])])
        elif kind == "plan":
            arm.trial(i, task, 0.0, [st([look]), st(text=f"I will change /app/{task}.py:\n```diff\n-    pass  # TODO\n+    run()\n```\nThat completes the fix."), st([fin])])
        elif kind == "resign":
            arm.trial(i, task, 0.0, [st([look]), st(text="I'm unable to complete this task: the required service cannot be reached from this container.")])
        elif kind == "silent":
            arm.trial(i, task, 0.0, [st([look]), st(text="Let me reconsider the approach to this problem.")])
        elif kind == "infra":
            arm.trial(i, task, None, None, exc=("RuntimeError", f"Docker compose command failed for environment {task}. Command: docker compose up -d"), minutes=0)
        elif kind == "wtw":
            arm.trial(i, task, 0.0, [st([look]), st([edit]), st([test_ok]), st([fin])])
        elif kind == "wtw-unverified":
            arm.trial(i, task, 0.0, [st([look]), st([edit]), st([fin])])
        elif kind == "wtw-regressed":
            arm.trial(i, task, 0.0, [st([look]), st([edit]), st([test_ok]), st([a(f"sed -i 's/done/done2/' /app/{task}.py")]), st([test_bad]), st([fin])])
        elif kind == "wtw-false-done":
            arm.trial(i, task, 0.0, [st([look]), st([edit]), st([test_bad]), st([fin], text="I have fixed the issue; the task is complete.")])
        elif kind == "wtw-edited-tests":
            arm.trial(i, task, 0.0, [st([look]), st([a("sed -i 's/assert result == 42/assert result == 41/' /tests/test_outputs.py")]), st([test_ok]), st([fin])])
        elif kind == "wtw-writes":
            edits = [st([a(f"echo '# attempt {n}' >> /app/{task}.py")]) for n in range(6)]
            arm.trial(i, task, 0.0, [st([look])] + edits + [st([test_bad]), st([fin])])
        elif kind == "wtw-format":
            arm.trial(i, task, 0.0, [st([look]), st(text="Editing the file now.", env="Previous response had parsing errors:\nERROR: Missing required fields: analysis, plan"), st([edit]), st([test_ok]), st([fin])])
        else:
            raise ValueError(kind)


def main():
    for d in ("arm-a", "arm-b"):
        shutil.rmtree(os.path.join(ROOT, d), ignore_errors=True)
    # Each arm: 34 tasks with one verdict each, plus one retried trial lost to infrastructure
    # (excluded from pass rates, counted). The paired table is 5 both / 3 only A / 2 only B /
    # 24 neither: case P1 of ../shared/stats/vectors_compare.csv (8/34 vs 7/34).
    # Arm A: 8 passed; 8 budget (6 wall clock, 2 context); 1 hallucinated; 1 plan; 1 resignation;
    # 15 worked-then-wrong.
    plan_a = (["pass"] * 8 + ["budget-time"] * 6 + ["budget-context"] * 2 + ["hallucinated", "plan", "resign"]
              + ["wtw-unverified"] * 5 + ["wtw-regressed"] * 2 + ["wtw-false-done"] * 4 + ["wtw-edited-tests", "wtw", "wtw", "wtw-writes"])
    # Arm B: 7 passed (one after a timeout); 2 budget; 1 hallucinated; 1 plan; 2 resignations (one
    # silent); 21 worked-then-wrong.
    plan_b = (["wtw-false-done"] * 3 + ["pass"] * 4 + ["pass-timeout", "pass", "pass"] + ["budget-time"] * 2 + ["hallucinated", "plan", "resign", "silent"]
              + ["wtw-unverified"] * 6 + ["wtw-regressed"] + ["wtw-false-done"] * 4 + ["wtw"] * 5 + ["wtw-writes", "wtw-format"])
    assert len(plan_a) == 34 and len(plan_b) == 34, (len(plan_a), len(plan_b))
    for arm, plan in ((Arm("arm-a", "mini-swe-agent", "anthropic/claude-sonnet-4", "bash", random.Random(1)), plan_a),
                      (Arm("arm-b", "terminus-2", "anthropic/claude-sonnet-4", "bash_command", random.Random(2)), plan_b)):
        scenarios(arm, plan)
        # The retried trial: the first attempt at the last task died before the agent started.
        task = TASKS[-1]
        arm.trial(99, task, None, None, exc=("RuntimeError", f"Docker compose command failed for environment {task}. Command: docker compose up -d"), minutes=0)
        arm.job_result()


if __name__ == "__main__":
    main()
