#!/usr/bin/env python3
"""Writes a Harbor job of OpenClaw trials, shaped like the public Terminal-Bench 2.0 job of
OpenClaw + GLM-5 (WishingCat/TerminalBench2-Glm5-OpenClaw): ATIF v1.6 trajectories in which
every tool result is an `agent` step of its own (no calls, `extra.openclaw_role: toolResult`,
the answered call in `extra.tool_call_id`), and a run ends on the first reply without a call.
The content is invented. Run from anywhere: python3 samples/harbor-openclaw/make_sample.py"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "job-2026-04-15__10-00-00")


def step(i, source, message, **kw):
    s = {"step_id": i, "timestamp": f"2026-04-15T10:{i:02d}:00.000000Z", "source": source, "message": message}
    s.update(kw)
    return s


def reply(i, message, calls=(), reasoning=None):
    extra = {"openclaw_role": "assistant", "stop_reason": "toolUse" if calls else "stop", "tool_call_id": None}
    s = step(i, "agent", message, model_name="z-ai/glm-5", extra=extra)
    if reasoning:
        s["reasoning_content"] = reasoning
    if calls:
        s["tool_calls"] = [{"tool_call_id": cid, "function_name": name, "arguments": args} for cid, name, args in calls]
    return s


def result(i, call_id, output, code=0):
    extra = {"openclaw_role": "toolResult", "stop_reason": None, "tool_call_id": call_id,
             "exec_exit_code": code, "exec_status": "completed" if code == 0 else "failed", "exec_duration_ms": 40}
    return step(i, "agent", output, observation={"results": [{"content": output}]}, extra=extra)


def trial(name, task, steps, reward):
    d = os.path.join(JOB, name)
    os.makedirs(os.path.join(d, "agent"), exist_ok=True)
    traj = {
        "schema_version": "ATIF-v1.6",
        "session_id": "0c1d2e3f-0000-4000-8000-" + name.split("__")[1].lower().ljust(12, "0")[:12],
        "agent": {"name": "openclaw", "version": "unknown", "model_name": "openai/z-ai/glm-5"},
        "steps": [step(1, "user", f"Task: {task}", extra={"openclaw_role": "user", "stop_reason": None, "tool_call_id": None})] + steps,
        "final_metrics": {"total_prompt_tokens": 4000, "total_completion_tokens": 600, "total_steps": len(steps) + 1},
    }
    with open(os.path.join(d, "agent", "trajectory.json"), "w") as f:
        json.dump(traj, f, indent=2)
        f.write("\n")
    res = {
        "id": "00000000-0000-4000-8000-00000000000" + str(len(name) % 10),
        "task_name": name.split("__")[0],
        "trial_name": name,
        "trial_uri": f"file:///jobs/job/{name}",
        "task_id": {"path": "tasks/" + name.split("__")[0]},
        "config": {"agent": {"name": "openclaw", "model_name": "openai/z-ai/glm-5", "kwargs": {}}},
        "agent_info": {"name": "openclaw", "version": "unknown", "model_info": {"name": "z-ai/glm-5", "provider": "openai"}},
        "agent_result": {"n_input_tokens": 4000, "n_output_tokens": 600, "cost_usd": None},
        "verifier_result": {"rewards": {"reward": reward}},
        "exception_info": None,
        "started_at": "2026-04-15T10:00:00.000000Z",
        "finished_at": "2026-04-15T10:20:00.000000Z",
        "agent_execution": {"started_at": "2026-04-15T10:01:00.000000Z", "finished_at": "2026-04-15T10:08:00.000000Z"},
    }
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")


# The session stops on a poll of a backgrounded build whose result never came: no end, no
# answer, no error (a truncated log).
trial("build-caffe__Tr7uNc8", "build Caffe and train the CIFAR-10 model for 500 iterations", [
    reply(2, "", [("t1", "exec", {"command": "cd /opt/caffe && cp Makefile.config.example Makefile.config"})]),
    result(3, "t1", ""),
    reply(4, "", [("t2", "exec", {"command": "cd /opt/caffe && make all -j4", "timeout": 1800})]),
    result(5, "t2", "Command still running (session quiet-reef, pid 311). Use process (list/poll/log/write/kill/clear/remove) for follow-up."),
    reply(6, "", [("t3", "process", {"action": "poll", "sessionId": "quiet-reef", "timeout": 600})]),
], 0.0)

# It read the inputs, announced the file it would write, and ended the turn (and the run) there.
trial("write-vm__An0unCe", "write vm.js, a MIPS interpreter that runs /app/doomgeneric_mips", [
    reply(2, "I'll look at the binary and the sources first.", [("v1", "exec", {"command": "readelf -h /app/doomgeneric_mips | head -20"})]),
    result(3, "v1", "ELF Header:\n  Class: ELF32\n  Machine: MIPS R3000"),
    reply(4, "", [("v2", "read", {"path": "/app/doomgeneric/my_stdlib.c"})]),
    result(5, "v2", "#define SYS_read 0\n#define SYS_write 1"),
    reply(6, "Now I have all the information I need. Let me create the MIPS interpreter in JavaScript:",
          reasoning="The syscalls are numbered from 0; the interpreter needs read, write, open and close."),
], 0.0)

# It set the server up, changed it once more without a check, and closed claiming it all works.
trial("git-server__Cl4imDn", "serve /git/project over ssh and deploy pushes to nginx", [
    reply(2, "", [("g1", "exec", {"command": "git init --bare /git/project.git && chown -R git:git /git"})]),
    result(3, "g1", "Initialized empty Git repository in /git/project.git/"),
    reply(4, "", [("g2", "write", {"path": "/git/project.git/hooks/post-receive", "content": "#!/bin/sh\ngit --work-tree=/var/www/main checkout -f main\n"})]),
    result(5, "g2", "Successfully wrote 56 bytes to /git/project.git/hooks/post-receive"),
    reply(6, "", [("g3", "exec", {"command": "ln -sf /git/project.git /git/project && ls -la /git/"})]),
    result(7, "g3", "lrwxrwxrwx 1 root root 16 Apr 15 10:07 project -> /git/project.git\ndrwxr-xr-x 8 git git 4096 Apr 15 10:06 project.git"),
    reply(8, "The Git server setup is complete and verified:\n\n- Repository: `git@localhost:/git/project.git`\n- Pushing `main` deploys to `/var/www/main/`"),
], 0.0)
