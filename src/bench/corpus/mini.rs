//! mini-swe-agent batch runs as `mini-extra swebench` leaves them, plus the SWE-bench
//! harness's verdicts: `run-<k>/trajs/<id>/<id>.traj.json`, `exit_statuses_<time>.yaml`,
//! `preds.json`, per-instance `logs/<id>/report.json` for evaluated patches and the harness's
//! run report (`<model>.run-<k>.json`, with `empty_patch_ids` for runs that submitted nothing).
//!
//! v1 (`mini-swe-agent-1`, 1.x) writes hand-formatted chat messages with one ```bash block
//! per reply; v2 (`mini-swe-agent-1.1`, 2.x) native tool calls, `tool` messages with
//! `extra.returncode`, `FormatError` interrupts and a final `exit` message.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::script::{Act, End, Script};
use super::text;
use super::{GenError, Out, Sink};

/// Instances per batch-run directory.
const RUN_SIZE: usize = 250;

const SUBMIT: &str = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached";

const SYSTEM_V1: &str = "You are a helpful assistant that can interact multiple times with a computer shell to solve programming tasks.\nYour response must contain exactly ONE bash code block with ONE command (or commands connected with && or ||).\n\nInclude a THOUGHT section before your command where you explain your reasoning process.\nFormat your response as shown in <format_example>.\n\n<format_example>\nTHOUGHT: Your reasoning and analysis here\n\n```bash\nyour_command_here\n```\n</format_example>\n\nFailure to follow these rules will cause your response to be rejected.";
const SYSTEM_V2: &str = "You are a helpful assistant that can interact with a computer shell to solve programming tasks.\n";
const INSTRUCTIONS: &str = "<instructions>\n# Task Instructions\n\n## Overview\nYou're a software engineer interacting continuously with a computer by submitting commands.\nYou'll be helping implement necessary changes to meet requirements in the PR description.\nYour task is specifically to make changes to non-test files in the current directory in order to fix the issue described in the PR description in a way that is general and consistent with the codebase.\n\nIMPORTANT: This is an interactive process where you will think and issue ONE command, see its result, then think and issue your next command.\n\n## Recommended Workflow\n1. Analyze the codebase by finding and reading relevant files\n2. Create a script to reproduce the issue\n3. Edit the source code to resolve the issue\n4. Verify your fix works by running your script again\n5. Test edge cases to ensure your fix is robust\n\n## Submission\nWhen you've completed your work, you cannot continue working on this task after submitting.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached\n```\n</instructions>";
const FORMAT_ERROR_V1: &str = "Please always provide EXACTLY ONE action in triple backticks, found {{actions|length}} actions.\n\nPlease format your action in triple backticks as shown in <response_example>.\n\n<response_example>\nHere are some thoughts about why you want to perform the action.\n\n```bash\n<action>\n```\n</response_example>\n\nIf you have completed your assignment, please consult the first message about how to\nsubmit your solution (you will not be able to continue working on this task after that).";
const TIMEOUT_V1: &str = "The last command <command>{{action['action']}}</command> timed out and has been killed.\nThe output of the command was:\n{% if output | length < 10000 -%}\n<output>\n{{output}}\n</output>\n{%- endif %}\nPlease try another command and make sure to avoid those requiring interactive input.";
const OBSERVATION: &str = "<returncode>{{output.returncode}}</returncode>\n{% if output.output | length < 10000 -%}\n<output>\n{{ output.output -}}\n</output>\n{%- endif -%}";
const FORMAT_ERROR_V2: &str = "Tool call error:\n\n<error>\n{{error}}\n</error>\n\nHere is general guidance on how to submit correct toolcalls:\n\nEvery response needs to use the 'bash' tool at least once to execute commands.\n\nCall the bash tool with your command as the argument:\n- Tool: bash\n- Arguments: {\"command\": \"your_command_here\"}\n\nIf you want to end the task, please issue the following command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`\nwithout any other command.\n";

/// One instance as the batch files record it.
struct Entry {
    id: String,
    status: String,
    patch: String,
    resolved: bool,
}

pub struct MiniSink {
    v2: bool,
    run: usize,
    model: &'static str,
    start: f64,
    entries: Vec<Entry>,
}

impl MiniSink {
    #[must_use]
    pub fn new(v2: bool, _seed: u64) -> Self {
        Self { v2, run: 0, model: "", start: 0.0, entries: Vec::new() }
    }

    fn run_dir(&self) -> PathBuf {
        PathBuf::from(format!("run-{:03}", self.run))
    }

    fn flush(&mut self, out: &mut Out) -> Result<(), GenError> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let dir = self.run_dir();
        let mut by_status: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for e in &self.entries {
            by_status.entry(e.status.as_str()).or_default().push(&e.id);
        }
        let mut yaml = String::from("instances_by_exit_status:\n");
        for (status, ids) in &by_status {
            yaml.push_str(&format!("  {status}:\n"));
            for id in ids {
                yaml.push_str(&format!("  - {id}\n"));
            }
        }
        #[expect(clippy::cast_possible_truncation, reason = "a generated Unix time")]
        let stamp = self.start as i64;
        out.write(&dir.join(format!("exit_statuses_{stamp}.{:07}.yaml", self.run)), yaml.as_bytes())?;

        let mut preds = serde_json::Map::new();
        for e in &self.entries {
            preds.insert(e.id.clone(), json!({ "model_name_or_path": self.model, "instance_id": e.id, "model_patch": e.patch }));
        }
        out.json(&dir.join("preds.json"), &Value::Object(preds), true)?;

        let ids = |f: &dyn Fn(&Entry) -> bool| -> Vec<&str> { self.entries.iter().filter(|e| f(e)).map(|e| e.id.as_str()).collect() };
        let resolved = ids(&|e| !e.patch.is_empty() && e.resolved);
        let unresolved = ids(&|e| !e.patch.is_empty() && !e.resolved);
        let empty = ids(&|e| e.patch.is_empty());
        let submitted = ids(&|_| true);
        let completed = ids(&|e| !e.patch.is_empty());
        let report = json!({
            "total_instances": submitted.len(),
            "submitted_instances": submitted.len(),
            "completed_instances": completed.len(),
            "resolved_instances": resolved.len(),
            "unresolved_instances": unresolved.len(),
            "empty_patch_instances": empty.len(),
            "error_instances": 0,
            "completed_ids": completed,
            "incomplete_ids": [],
            "empty_patch_ids": empty,
            "submitted_ids": submitted,
            "resolved_ids": resolved,
            "unresolved_ids": unresolved,
            "error_ids": [],
            "schema_version": 2,
        });
        let model = self.model.replace('/', "__");
        out.json(&dir.join(format!("{model}.run-{:03}.json", self.run)), &report, true)?;
        self.entries.clear();
        self.run += 1;
        Ok(())
    }
}

impl Sink for MiniSink {
    fn add(&mut self, s: &Script, rng: &mut ChaCha8Rng, out: &mut Out) -> Result<String, GenError> {
        if self.entries.is_empty() {
            self.model = s.model;
            self.start = s.start;
        }
        let status = match &s.end {
            End::Submitted => "Submitted".to_string(),
            End::StepLimit => "LimitsExceeded".to_string(),
            End::Infra { kind, .. } => (*kind).to_string(),
        };
        // A batch runs one model; the run's first instance names it.
        let mut run_script = s.clone();
        run_script.model = self.model;
        let s = &run_script;
        let doc = if self.v2 { v2(s, rng) } else { v1(s, rng) };
        let dir = self.run_dir();
        out.json(&dir.join("trajs").join(&s.task).join(format!("{}.traj.json", s.task)), &doc, true)?;
        let resolved = s.passed == Some(true);
        if !s.patch.is_empty() {
            out.json(&dir.join("logs").join(&s.task).join("report.json"), &report(s, resolved, rng), true)?;
        }
        self.entries.push(Entry { id: s.task.clone(), status, patch: s.patch.clone(), resolved });
        if self.entries.len() >= RUN_SIZE {
            self.flush(out)?;
        }
        Ok(s.task.clone())
    }

    fn finish(&mut self, out: &mut Out) -> Result<(), GenError> {
        self.flush(out)
    }
}

/// The SWE-bench harness's per-instance report.
fn report(s: &Script, resolved: bool, rng: &mut ChaCha8Rng) -> Value {
    let tests: Vec<String> = (0..rng.random_range(1..8)).map(|k| format!("test_case_{k} ({}.tests.Case)", s.repo.package)).collect();
    let (f2p_ok, f2p_bad): (Vec<&String>, Vec<&String>) =
        if resolved { (tests.iter().collect(), Vec::new()) } else { (Vec::new(), tests.iter().collect()) };
    json!({
        s.task.clone(): {
            "patch_is_None": false,
            "patch_exists": true,
            "patch_successfully_applied": true,
            "resolved": resolved,
            "tests_status": {
                "FAIL_TO_PASS": { "success": f2p_ok, "failure": f2p_bad },
                "PASS_TO_PASS": { "success": ["test_existing_behaviour"], "failure": [] },
                "FAIL_TO_FAIL": { "success": [], "failure": [] },
                "PASS_TO_FAIL": { "success": [], "failure": [] },
            }
        }
    })
}

fn info(s: &Script, v2: bool) -> Value {
    let (status, submission) = match &s.end {
        End::Submitted => ("Submitted".to_string(), s.patch.clone()),
        End::StepLimit => ("LimitsExceeded".to_string(), String::new()),
        // v1 keeps an uncaught exception's message in `submission`.
        End::Infra { kind, message } => ((*kind).to_string(), if v2 { String::new() } else { message.clone() }),
    };
    let agent = if v2 {
        json!({
            "system_template": SYSTEM_V2,
            "instance_template": "<pr_description>\nConsider the following PR description:\n{{task}}\n</pr_description>\n\n",
            "step_limit": s.step_limit,
            "cost_limit": 3.0,
            "wall_time_limit_seconds": 0,
            "max_consecutive_format_errors": 3,
            "output_path": null,
        })
    } else {
        json!({
            "system_template": SYSTEM_V1,
            "instance_template": "<pr_description>\nConsider the following PR description:\n{{task}}\n</pr_description>\n\n",
            "timeout_template": TIMEOUT_V1,
            "format_error_template": FORMAT_ERROR_V1,
            "action_observation_template": OBSERVATION,
            "step_limit": s.step_limit,
            "cost_limit": 3.0,
        })
    };
    let mut model_cfg = json!({
        "model_name": s.model,
        "model_kwargs": { "drop_params": true, "temperature": 0.0 },
        "litellm_model_registry": null,
        "set_cache_control": null,
        "cost_tracking": "default",
    });
    if v2 {
        model_cfg["format_error_template"] = json!(FORMAT_ERROR_V2);
        model_cfg["observation_template"] = json!(OBSERVATION);
    }
    let image = format!("docker.io/swebench/sweb.eval.x86_64.{}:latest", s.task.replace("__", "_1776_"));
    let mut info = json!({
        "model_stats": { "instance_cost": s.cost(), "api_calls": s.turns.len() },
        "config": {
            "agent": agent,
            "agent_type": "minisweagent.run.benchmarks.swebench.ProgressTrackingAgent",
            "model": model_cfg,
            "model_type": "minisweagent.models.litellm_model.LitellmModel",
            "environment": { "image": image, "cwd": "/testbed", "timeout": 60, "executable": "docker", "run_args": ["--rm"], "container_timeout": "2h" },
            "environment_type": "minisweagent.environments.docker.DockerEnvironment",
        },
        "mini_version": if v2 { "2.2.1" } else { "1.15.0" },
        "exit_status": status,
        "submission": submission,
    });
    if let End::Infra { message, .. } = &s.end {
        let tb = format!(
            "Traceback (most recent call last):\n  File \"/usr/local/lib/python3.11/site-packages/minisweagent/run/extra/swebench.py\", line 141, in process_instance\n    exit_status, result = agent.run(task)\n  File \"/usr/local/lib/python3.11/site-packages/minisweagent/agents/default.py\", line 77, in run\n    self.step()\n{message}\n"
        );
        info["traceback"] = json!(tb);
        if v2 {
            info["exception_str"] = json!(message);
        }
    }
    info
}

/// A chat-completions response as LiteLLM dumps it.
fn response(s: &Script, k: usize, message: Value, finish: &str) -> Value {
    let t = &s.turns[k];
    json!({
        "id": format!("chatcmpl-{:04}", k + 1),
        "created": (s.start + s.turns[..k].iter().map(|t| t.secs).sum::<f64>()).floor(),
        "model": s.model.rsplit('/').next().unwrap_or(s.model),
        "object": "chat.completion",
        "system_fingerprint": null,
        "choices": [{ "finish_reason": finish, "index": 0, "message": message }],
        "usage": {
            "completion_tokens": t.completion_tokens,
            "prompt_tokens": t.prompt_tokens,
            "total_tokens": t.prompt_tokens + t.completion_tokens,
            "completion_tokens_details": { "reasoning_tokens": 0 },
            "prompt_tokens_details": { "cached_tokens": t.prompt_tokens / 2 },
        },
    })
}

fn observation(code: i32, output: &str) -> String {
    format!("<returncode>{code}</returncode>\n<output>\n{output}</output>")
}

fn task_prompt(s: &Script) -> String {
    format!("<pr_description>\nConsider the following PR description:\n{}\n</pr_description>\n\n{INSTRUCTIONS}\n", s.issue)
}

fn v1(s: &Script, _rng: &mut ChaCha8Rng) -> Value {
    let mut msgs = vec![json!({ "role": "system", "content": SYSTEM_V1 }), json!({ "role": "user", "content": task_prompt(s) })];
    for (k, t) in s.turns.iter().enumerate() {
        let (content, after) = match &t.act {
            Act::Shell { cmd, output, code } => (format!("THOUGHT: {}\n\n```bash\n{cmd}\n```", t.thought), observation(*code, output)),
            Act::Submit { output } => (format!("THOUGHT: {}\n\n```bash\n{SUBMIT}\n```", t.thought), output.clone()),
            Act::NoAction | Act::Unknown { .. } => (t.thought.clone(), FORMAT_ERROR_V1.replace("{{actions|length}}", "0")),
        };
        let message = json!({ "role": "assistant", "content": content, "refusal": null });
        msgs.push(json!({ "role": "assistant", "content": content, "extra": { "response": response(s, k, message, "stop") } }));
        // A run stopped by an exception has no observation for its last action.
        let last = k + 1 == s.turns.len();
        if !(last && matches!(s.end, End::Infra { .. })) {
            msgs.push(json!({ "role": "user", "content": after }));
        }
    }
    json!({ "info": info(s, false), "messages": msgs, "trajectory_format": "mini-swe-agent-1", "instance_id": s.task })
}

/// A v2 assistant message calling bash, with the parsed action and the raw response.
fn assistant_call(s: &Script, k: usize, cmd: &str, call_id: &str, cost: f64, clock: f64) -> Value {
    let t = &s.turns[k];
    let call =
        json!({ "function": { "arguments": json!({ "command": cmd }).to_string(), "name": "bash" }, "id": call_id, "type": "function" });
    let message = json!({ "content": t.thought, "role": "assistant", "tool_calls": [call], "function_call": null });
    json!({
        "content": t.thought,
        "role": "assistant",
        "tool_calls": [call],
        "function_call": null,
        "extra": {
            "actions": [{ "command": cmd, "tool_call_id": call_id }],
            "response": response(s, k, message, "tool_calls"),
            "cost": cost,
            "timestamp": clock - 1.0,
        },
    })
}

fn v2(s: &Script, rng: &mut ChaCha8Rng) -> Value {
    let mut msgs = vec![json!({ "role": "system", "content": SYSTEM_V2 }), json!({ "role": "user", "content": task_prompt(s) })];
    let mut clock = s.start;
    for (k, t) in s.turns.iter().enumerate() {
        clock += t.secs;
        let cost = (s.cost_per_turn * 1e6).round() / 1e6;
        let call_id = format!("toolu_{}", text::mixed(rng, 24));
        let last = k + 1 == s.turns.len();
        match &t.act {
            Act::Shell { cmd, output, code } => {
                msgs.push(assistant_call(s, k, cmd, &call_id, cost, clock));
                if !(last && matches!(s.end, End::Infra { .. })) {
                    msgs.push(json!({
                        "content": observation(*code, output),
                        "extra": { "raw_output": output, "returncode": code, "timestamp": clock, "exception_info": "" },
                        "tool_call_id": call_id,
                        "role": "tool",
                    }));
                }
            }
            Act::Submit { output } => {
                msgs.push(assistant_call(s, k, SUBMIT, &call_id, cost, clock));
                msgs.push(json!({ "role": "exit", "content": output, "extra": { "exit_status": "Submitted", "submission": output } }));
            }
            Act::Unknown { tool, args } => {
                let bad = json!({ "function": { "arguments": args.to_string(), "name": tool }, "id": call_id, "type": "function" });
                let message = json!({ "content": t.thought, "role": "assistant", "tool_calls": [bad], "function_call": null });
                let error = format!("Unknown tool '{tool}'.");
                msgs.push(json!({
                    "role": "user",
                    "content": FORMAT_ERROR_V2.replace("{{error}}", &error),
                    "extra": { "interrupt_type": "FormatError", "response": response(s, k, message, "tool_calls"), "cost": cost, "timestamp": clock },
                }));
            }
            Act::NoAction => {
                let message = json!({ "content": t.thought, "role": "assistant", "tool_calls": null, "function_call": null });
                let error = "No tool calls found in the response. Every response MUST include at least one tool call.";
                msgs.push(json!({
                    "role": "user",
                    "content": FORMAT_ERROR_V2.replace("{{error}}", error),
                    "extra": { "interrupt_type": "FormatError", "response": response(s, k, message, "stop"), "cost": cost, "timestamp": clock },
                }));
            }
        }
    }
    match &s.end {
        End::Submitted => {}
        End::StepLimit => msgs
            .push(json!({ "role": "exit", "content": "LimitsExceeded", "extra": { "exit_status": "LimitsExceeded", "submission": "" } })),
        End::Infra { kind, message } => msgs.push(json!({
            "role": "exit",
            "content": message,
            "extra": { "exit_status": kind, "submission": "", "exception_str": message },
        })),
    }
    json!({ "info": info(s, true), "messages": msgs, "trajectory_format": "mini-swe-agent-1.1", "instance_id": s.task })
}
