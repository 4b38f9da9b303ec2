//! Harbor job directories: `job-<k>/config.json` and `result.json` for the job, and one trial
//! directory per run, `<task>__<id>/result.json` (the TrialResult: rewards, the exception that
//! ended the trial, token counts, timings) with `agent/trajectory.json` (ATIF v1.6 from the
//! terminus-2 agent: `bash_command` keystrokes, `mark_task_complete` to finish).

use std::path::PathBuf;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::script::{Act, End, Scenario, Script};
use super::text;
use super::{GenError, Out, Sink};

/// Trials per job directory.
const JOB_SIZE: usize = 250;

const AGENT: &str = "terminus-2";

pub struct HarborSink {
    job: usize,
    trials: usize,
    errors: usize,
    rewards: Vec<f64>,
    first: f64,
    last: f64,
    model: &'static str,
}

impl HarborSink {
    #[must_use]
    pub fn new(_seed: u64) -> Self {
        Self { job: 0, trials: 0, errors: 0, rewards: Vec::new(), first: 0.0, last: 0.0, model: "" }
    }

    fn job_dir(&self) -> PathBuf {
        PathBuf::from(format!("job-{:03}", self.job))
    }

    fn flush(&mut self, out: &mut Out) -> Result<(), GenError> {
        if self.trials == 0 {
            return Ok(());
        }
        let dir = self.job_dir();
        let name = format!("job-{:03}", self.job);
        let config = json!({
            "job_name": name,
            "jobs_dir": "jobs",
            "n_attempts": 1,
            "timeout_multiplier": 1.0,
            "orchestrator": { "type": "local", "n_concurrent_trials": 8, "quiet": false },
            "agents": [{ "name": AGENT, "model_name": self.model, "kwargs": {} }],
            "datasets": [{ "name": "swebench-verified", "version": "1.0" }],
        });
        out.json(&dir.join("config.json"), &config, true)?;
        #[expect(clippy::cast_precision_loss, reason = "a few hundred rewards")]
        let mean = self.rewards.iter().sum::<f64>() / self.rewards.len().max(1) as f64;
        let result = json!({
            "id": format!("00000000-0000-4000-8000-{:012}", self.job),
            "started_at": text::rfc3339(self.first),
            "finished_at": text::rfc3339(self.last),
            "n_total_trials": self.trials,
            "stats": {
                "n_trials": self.trials,
                "n_errors": self.errors,
                "evals": { format!("{AGENT}__{}__swebench-verified", self.model.rsplit('/').next().unwrap_or(self.model)): {
                    "n_trials": self.trials,
                    "n_errors": self.errors,
                    "metrics": [{ "mean": mean }],
                } },
            },
        });
        out.json(&dir.join("result.json"), &result, true)?;
        self.job += 1;
        self.trials = 0;
        self.errors = 0;
        self.rewards.clear();
        Ok(())
    }
}

impl Sink for HarborSink {
    fn add(&mut self, s: &Script, rng: &mut ChaCha8Rng, out: &mut Out) -> Result<String, GenError> {
        if self.trials == 0 {
            self.model = s.model;
            self.first = s.start;
        }
        self.last = self.last.max(s.start + s.duration() + 60.0);
        // Harbor cuts long task names to 32 characters in the trial name.
        let stem: String = s.task.chars().take(32).collect();
        let trial_name = format!("{stem}__{}", text::mixed(rng, 7));
        let dir = self.job_dir().join(&trial_name);
        out.json(&dir.join("agent").join("trajectory.json"), &atif(s, self.model, rng), true)?;
        let (result, reward) = trial_result(s, self.model, &trial_name, rng);
        out.json(&dir.join("result.json"), &result, true)?;
        if let Some(r) = reward {
            self.rewards.push(r);
        } else {
            self.errors += 1;
        }
        self.trials += 1;
        if self.trials >= JOB_SIZE {
            self.flush(out)?;
        }
        Ok(s.task.clone())
    }

    fn finish(&mut self, out: &mut Out) -> Result<(), GenError> {
        self.flush(out)
    }
}

fn trial_result(s: &Script, model: &str, trial_name: &str, rng: &mut ChaCha8Rng) -> (Value, Option<f64>) {
    let agent_start = s.start + 30.0;
    let agent_end = agent_start + s.duration();
    let (exception, reward) = match &s.end {
        End::Infra { kind, message } => (
            json!({
                "exception_type": kind,
                "exception_message": message,
                "exception_traceback": format!("Traceback (most recent call last):\n  File \"/harbor/trial/trial.py\", line 212, in run\n    await self._run_agent()\n{kind}: {message}\n"),
                "occurred_at": text::rfc3339(agent_end),
            }),
            None,
        ),
        End::StepLimit => (
            json!({
                "exception_type": "AgentTimeoutError",
                "exception_message": "Agent execution timed out after 900.0 seconds",
                "exception_traceback": "",
                "occurred_at": text::rfc3339(agent_end),
            }),
            Some(0.0),
        ),
        End::Submitted => (Value::Null, Some(if s.passed == Some(true) { 1.0 } else { 0.0 })),
    };
    let verifier = reward.map_or(Value::Null, |r| json!({ "rewards": { "reward": r } }));
    let prompt: u64 = s.turns.iter().map(|t| t.prompt_tokens).sum();
    let completion: u64 = s.turns.iter().map(|t| t.completion_tokens).sum();
    let (provider, name) = model.split_once('/').unwrap_or(("", model));
    let result = json!({
        "id": text::uuid(rng),
        "task_name": s.task,
        "trial_name": trial_name,
        "trial_uri": format!("file:///jobs/{trial_name}"),
        "task_id": { "path": format!("datasets/swebench-verified/{}", s.task) },
        "source": "swebench-verified",
        "task_checksum": text::alnum(rng, 40),
        "config": {
            "task": { "path": format!("datasets/swebench-verified/{}", s.task) },
            "trial_name": trial_name,
            "agent": { "name": AGENT, "model_name": model },
            "timeout_multiplier": 1.0,
        },
        "agent_info": { "name": AGENT, "version": "2.0.0", "model_info": { "name": name, "provider": provider } },
        "agent_result": { "n_input_tokens": prompt, "n_cache_tokens": prompt / 3, "n_output_tokens": completion, "cost_usd": s.cost() },
        "verifier_result": verifier,
        "exception_info": exception,
        "started_at": text::rfc3339(s.start),
        "finished_at": text::rfc3339(agent_end + 45.0),
        "environment_setup": { "started_at": text::rfc3339(s.start), "finished_at": text::rfc3339(s.start + 25.0) },
        "agent_setup": { "started_at": text::rfc3339(s.start + 25.0), "finished_at": text::rfc3339(agent_start) },
        "agent_execution": { "started_at": text::rfc3339(agent_start), "finished_at": text::rfc3339(agent_end) },
        "verifier": { "started_at": text::rfc3339(agent_end), "finished_at": text::rfc3339(agent_end + 45.0) },
    });
    (result, reward)
}

fn atif(s: &Script, model: &str, rng: &mut ChaCha8Rng) -> Value {
    let prompt = format!(
        "You are an AI assistant tasked with solving command-line tasks in a Linux environment. You will be given a task description and the output from previously executed commands.\n\nTask Description:\n{}\n\nCurrent terminal state:\nroot@{}:/testbed# ",
        s.issue,
        text::alnum(rng, 12)
    );
    let mut steps = vec![json!({ "step_id": 1, "timestamp": text::rfc3339(s.start + 30.0), "source": "user", "message": prompt })];
    let mut clock = s.start + 30.0;
    let (mut total_p, mut total_c) = (0u64, 0u64);
    for (k, t) in s.turns.iter().enumerate() {
        clock += t.secs;
        total_p += t.prompt_tokens;
        total_c += t.completion_tokens;
        let id = format!("call_{k}_1");
        let mut step = json!({
            "step_id": k + 2,
            "timestamp": text::rfc3339(clock),
            "source": "agent",
            "model_name": model,
            "message": t.thought,
        });
        let cost = (s.cost_per_turn * 1e6).round() / 1e6;
        step["metrics"] = json!({ "prompt_tokens": t.prompt_tokens, "completion_tokens": t.completion_tokens, "cached_tokens": t.prompt_tokens / 3, "cost_usd": cost });
        let last = k + 1 == s.turns.len();
        match &t.act {
            Act::Shell { cmd, output, .. } => {
                let duration = if rng.random_bool(0.7) { 1.0 } else { 10.0 };
                step["tool_calls"] = json!([{ "tool_call_id": id, "function_name": "bash_command", "arguments": { "keystrokes": format!("{cmd}\n"), "duration": duration } }]);
                // A trial killed by its environment never saw the last command's output.
                if !(last && matches!(s.end, End::Infra { .. } | End::StepLimit)) {
                    step["observation"] = json!({ "results": [{ "source_call_id": id, "content": format!("New Terminal Output:\n\nroot@testbed:/testbed# {cmd}\n{output}root@testbed:/testbed# ") }] });
                }
            }
            Act::Unknown { tool, args } => {
                step["tool_calls"] = json!([{ "tool_call_id": id, "function_name": tool, "arguments": args }]);
                step["observation"] = json!({ "results": [{ "source_call_id": id, "content": format!("Unknown tool: {tool}") }] });
            }
            Act::NoAction => {}
            Act::Submit { .. } if s.scenario == Scenario::Resignation => {
                // Giving up: a final reply with no call, as terminus-2 ends when the model stops.
            }
            Act::Submit { .. } => {
                step["tool_calls"] = json!([{ "tool_call_id": id, "function_name": "mark_task_complete", "arguments": {} }]);
                step["observation"] = json!({ "results": [{ "source_call_id": id, "content": "Task marked complete." }] });
            }
        }
        steps.push(step);
    }
    json!({
        "schema_version": "ATIF-v1.6",
        "session_id": text::uuid(rng),
        "agent": {
            "name": AGENT,
            "version": "2.0.0",
            "model_name": model,
            "tool_definitions": [
                { "type": "function", "function": { "name": "bash_command", "description": "Send keystrokes to the terminal.", "parameters": { "type": "object", "properties": { "keystrokes": { "type": "string" }, "duration": { "type": "number" } }, "required": ["keystrokes"] } } },
                { "type": "function", "function": { "name": "mark_task_complete", "description": "Mark the task complete.", "parameters": { "type": "object", "properties": {} } } },
            ],
        },
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": total_p,
            "total_completion_tokens": total_c,
            "total_cached_tokens": total_p / 3,
            "total_cost_usd": s.cost(),
            "total_steps": s.turns.len() + 1,
        },
    })
}
