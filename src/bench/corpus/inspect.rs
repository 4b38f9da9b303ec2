//! Inspect AI `.eval` logs: one ZIP archive per eval of [`EVAL_SIZE`] samples, members in the
//! order Inspect writes them (`inspect_ai/log/_recorders/eval.py`): `_journal/start.json`,
//! then per sample `samples/<id>_epoch_<n>.json` and `_journal/summaries/<k>.json`, and at the
//! end `summaries.json`, `reductions.json` and `header.json`.
//!
//! Samples come from a `basic_agent` with `bash` and `submit` tools on a SWE-bench-style task:
//! messages, per-turn model and tool events, scores, `limit` when the message limit stopped
//! the sample and `error` when the environment failed (the eval runs with `score_on_error`, so
//! errored samples are still scored). Members are deflated; Inspect reads deflate and zstd.

use std::io::Write;
use std::path::PathBuf;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::script::{Act, End, Scenario, Script};
use super::text;
use super::{GenError, Out, Sink};

/// Samples per `.eval` archive.
pub const EVAL_SIZE: usize = 50;

const INSPECT_VERSION: &str = "0.3.285";
const SYSTEM: &str = "\nYou are a helpful assistant attempting to submit the correct answer. You have\nseveral functions available to help with finding the answer. Each message\nmay perform one function call. You will see the result of the function right\nafter sending the message. If you need to perform multiple actions, you can\nalways send more messages with subsequent function calls. Do some reasoning\nbefore your actions, describing what function calls you are going to use and\nhow they fit into your plan.\n\nWhen you have completed the task and have an answer, call the submit()\nfunction to report it.\n";
const CONTINUE: &str = "Please proceed to the next step using your best judgement.";
const SCORER: &str = "swe_bench_scorer";

/// One finished sample, for the summaries and the header.
struct Summary {
    row: Value,
    score: Option<f64>,
    id: String,
}

/// The archive being written.
struct Open {
    zip: zip::ZipWriter<std::fs::File>,
    rel: PathBuf,
    eval_id: String,
    run_id: String,
    task_id: String,
    model: &'static str,
    created: f64,
    last: f64,
    summaries: Vec<Summary>,
    usage: (u64, u64),
}

pub struct InspectSink {
    open: Option<Open>,
    evals: usize,
    /// Samples per archive.
    size: usize,
}

impl InspectSink {
    #[must_use]
    pub fn new(_seed: u64, size: usize) -> Self {
        Self { open: None, evals: 0, size }
    }

    fn start(&mut self, s: &Script, rng: &mut ChaCha8Rng, out: &mut Out) -> Result<(), GenError> {
        let task_id = text::mixed(rng, 22);
        let stamp = text::rfc3339(s.start).replace(':', "-");
        let stamp = stamp.split('.').next().unwrap_or_default().to_string();
        let rel = PathBuf::from(format!("logs-{:03}", self.evals / 20)).join(format!("{stamp}+00-00_swe-bench_{task_id}.eval"));
        let path = out.root.join(&rel);
        let io = |source| GenError::Io { path: path.display().to_string(), source };
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(io)?;
        }
        let file = std::fs::File::create(&path).map_err(io)?;
        let mut o = Open {
            zip: zip::ZipWriter::new(file),
            rel,
            eval_id: text::mixed(rng, 22),
            run_id: text::mixed(rng, 22),
            task_id,
            model: s.model,
            created: s.start,
            last: s.start,
            summaries: Vec::new(),
            usage: (0, 0),
        };
        let start = json!({ "version": 2, "eval": spec(&o, &[]), "plan": plan() });
        member(&mut o, "_journal/start.json", &start)?;
        self.open = Some(o);
        self.evals += 1;
        Ok(())
    }

    fn close(&mut self, out: &mut Out) -> Result<(), GenError> {
        let Some(mut o) = self.open.take() else { return Ok(()) };
        let rows: Vec<Value> = o.summaries.iter().map(|x| x.row.clone()).collect();
        member(&mut o, "summaries.json", &Value::Array(rows))?;
        let scores: Vec<f64> = o.summaries.iter().filter_map(|x| x.score).collect();
        #[expect(clippy::cast_precision_loss, reason = "a few dozen scores")]
        let mean = scores.iter().sum::<f64>() / scores.len().max(1) as f64;
        let reductions = json!([{ "scorer": SCORER, "samples": o.summaries.iter().map(|x| json!({ "value": x.score.unwrap_or(0.0), "sample_id": x.id })).collect::<Vec<_>>() }]);
        member(&mut o, "reductions.json", &reductions)?;
        let ids: Vec<&str> = o.summaries.iter().map(|x| x.id.as_str()).collect();
        let header = json!({
            "version": 2,
            "status": "success",
            "eval": spec(&o, &ids),
            "plan": plan(),
            "results": {
                "total_samples": o.summaries.len(),
                "completed_samples": o.summaries.len(),
                "scores": [{
                    "name": SCORER,
                    "scorer": SCORER,
                    "params": {},
                    "metrics": { "mean": { "name": "mean", "value": mean, "params": {} }, "std": { "name": "std", "value": 0.5, "params": {} } },
                }],
            },
            "stats": {
                "started_at": text::rfc3339(o.created),
                "completed_at": text::rfc3339(o.last),
                "model_usage": { o.model: { "input_tokens": o.usage.0, "output_tokens": o.usage.1, "total_tokens": o.usage.0 + o.usage.1 } },
            },
            "invalidated": false,
            "tags": [],
            "metadata": {},
        });
        member(&mut o, "header.json", &header)?;
        let path = out.root.join(&o.rel);
        o.zip.finish().map_err(|e| GenError::Io { path: path.display().to_string(), source: std::io::Error::other(e) })?;
        out.account(&o.rel)
    }
}

/// Adds one JSON member, deflated.
fn member(o: &mut Open, name: &str, v: &Value) -> Result<(), GenError> {
    let bytes = serde_json::to_vec(v).map_err(|e| GenError::Io { path: name.to_string(), source: e.into() })?;
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(bytes.len() > u32::MAX as usize);
    let err = |e: zip::result::ZipError| GenError::Io { path: format!("{}!{name}", o.rel.display()), source: std::io::Error::other(e) };
    o.zip.start_file(name, opts).map_err(err)?;
    o.zip.write_all(&bytes).map_err(|source| GenError::Io { path: format!("{}!{name}", o.rel.display()), source })?;
    Ok(())
}

fn plan() -> Value {
    json!({
        "name": "plan",
        "steps": [
            { "solver": "system_message", "params": { "template": SYSTEM } },
            { "solver": "basic_agent", "params": { "tools": [{ "name": "bash" }, { "name": "submit" }], "message_limit": 250 } },
        ],
        "config": {},
    })
}

fn spec(o: &Open, ids: &[&str]) -> Value {
    json!({
        "eval_id": o.eval_id,
        "run_id": o.run_id,
        "created": text::rfc3339(o.created).replace('Z', "+00:00"),
        "task": "swe_bench",
        "task_id": o.task_id,
        "task_version": 0,
        "task_display_name": "swe_bench",
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        "dataset": { "name": "princeton-nlp/SWE-bench_Verified", "location": "princeton-nlp/SWE-bench_Verified", "samples": ids.len(), "sample_ids": ids, "shuffled": false },
        "sandbox": { "type": "docker" },
        "model": o.model,
        "model_generate_config": {},
        "model_args": {},
        "config": {
            "epochs": 1,
            "fail_on_error": false,
            "continue_on_fail": false,
            "score_on_error": true,
            "message_limit": 250,
            "sandbox_cleanup": true,
            "log_samples": true,
            "log_realtime": true,
            "log_images": true,
            "score_display": true,
        },
        "packages": { "inspect_ai": INSPECT_VERSION },
        "scorers": [{ "name": SCORER, "options": {}, "metrics": [{ "name": "inspect_ai/mean", "options": {} }, { "name": "inspect_ai/std", "options": {} }], "metadata": {} }],
    })
}

impl Sink for InspectSink {
    fn add(&mut self, s: &Script, rng: &mut ChaCha8Rng, out: &mut Out) -> Result<String, GenError> {
        if self.open.is_none() {
            self.start(s, rng, out)?;
        }
        let Some(o) = self.open.as_mut() else { return Ok(s.task.clone()) };
        // An eval runs one model; its first sample names it.
        let model = o.model;
        let (sample, summary) = sample(s, model, rng);
        o.usage.0 += s.turns.iter().map(|t| t.prompt_tokens).sum::<u64>();
        o.usage.1 += s.turns.iter().map(|t| t.completion_tokens).sum::<u64>();
        o.last = o.last.max(s.start + s.duration());
        let name = format!("samples/{}_epoch_1.json", s.task);
        member(o, &name, &sample)?;
        let k = o.summaries.len() + 1;
        member(o, &format!("_journal/summaries/{k}.json"), &json!([summary.row]))?;
        o.summaries.push(summary);
        if o.summaries.len() >= self.size {
            self.close(out)?;
        }
        Ok(s.task.clone())
    }

    fn finish(&mut self, out: &mut Out) -> Result<(), GenError> {
        self.close(out)
    }
}

fn usage(input: u64, output: u64) -> Value {
    json!({ "input_tokens": input, "output_tokens": output, "total_tokens": input + output })
}

/// One sample and its summary row.
fn sample(s: &Script, model: &'static str, rng: &mut ChaCha8Rng) -> (Value, Summary) {
    let bash_info = json!({ "name": "bash", "description": "Use this function to execute bash commands.", "parameters": { "type": "object", "properties": { "cmd": { "type": "string", "description": "The bash command to execute." } }, "required": ["cmd"], "additionalProperties": false } });
    let submit_info = json!({ "name": "submit", "description": "Submit an answer for evaluation.", "parameters": { "type": "object", "properties": { "answer": { "type": "string", "description": "Submitted answer" } }, "required": ["answer"], "additionalProperties": false } });
    let mut messages = vec![
        json!({ "id": text::mixed(rng, 22), "content": SYSTEM, "role": "system" }),
        json!({ "id": text::mixed(rng, 22), "content": s.issue, "source": "input", "role": "user" }),
    ];
    let mut events: Vec<Value> = Vec::new();
    let mut clock = s.start;
    let mut working = 0.0f64;
    let span = text::mixed(rng, 22);
    let (mut tin, mut tout) = (0u64, 0u64);
    let mut last_output = json!({ "model": model, "choices": [], "completion": "" });
    for (k, t) in s.turns.iter().enumerate() {
        let last = k + 1 == s.turns.len();
        let infra_cut = last && matches!(s.end, End::Infra { .. });
        let call_id = format!("call_{}", text::mixed(rng, 24));
        let (function, arguments) = match &t.act {
            Act::Shell { cmd, .. } => ("bash", json!({ "cmd": cmd })),
            Act::Unknown { tool, args } => (*tool, args.clone()),
            Act::Submit { output } => ("submit", json!({ "answer": output })),
            Act::NoAction => ("", Value::Null),
        };
        let mut assistant = json!({ "id": text::mixed(rng, 22), "content": t.thought, "source": "generate", "role": "assistant" });
        if !function.is_empty() {
            assistant["tool_calls"] = json!([{ "id": call_id, "function": function, "arguments": arguments, "type": "function" }]);
        }
        assistant["model"] = json!(model.rsplit('/').next().unwrap_or(model));
        tin += t.prompt_tokens;
        tout += t.completion_tokens;
        let gen_secs = (t.secs * 0.6 * 1000.0).round() / 1000.0;
        let output = json!({
            "model": model,
            "choices": [{ "message": assistant, "stop_reason": if function.is_empty() { "stop" } else { "tool_calls" } }],
            "completion": t.thought,
            "usage": usage(t.prompt_tokens, t.completion_tokens),
            "time": gen_secs,
        });
        events.push(json!({
            "uuid": text::mixed(rng, 22),
            "span_id": span,
            "timestamp": text::rfc3339(clock).replace('Z', "+00:00"),
            "working_start": working,
            "event": "model",
            "model": model,
            "input": [],
            "tools": [bash_info, submit_info],
            "tool_choice": "auto",
            "config": {},
            "output": output,
            "completed": text::rfc3339(clock + gen_secs).replace('Z', "+00:00"),
            "working_time": gen_secs,
        }));
        last_output = output;
        messages.push(assistant);
        clock += gen_secs;
        working += gen_secs;
        if infra_cut {
            break;
        }
        let tool_secs = t.secs - gen_secs;
        let (content, error) = match &t.act {
            Act::Shell { output, .. } => (output.clone(), Value::Null),
            Act::Unknown { tool, .. } => (String::new(), json!({ "type": "parsing", "message": format!("Tool {tool} not found") })),
            Act::Submit { output } => (output.clone(), Value::Null),
            Act::NoAction => {
                messages.push(json!({ "id": text::mixed(rng, 22), "content": CONTINUE, "source": "input", "role": "user" }));
                clock += tool_secs;
                continue;
            }
        };
        let mut tool_event = json!({
            "uuid": text::mixed(rng, 22),
            "span_id": span,
            "timestamp": text::rfc3339(clock).replace('Z', "+00:00"),
            "working_start": working,
            "event": "tool",
            "type": "function",
            "id": call_id,
            "function": function,
            "arguments": arguments,
            "result": content,
            "events": [],
            "completed": text::rfc3339(clock + tool_secs).replace('Z', "+00:00"),
            "working_time": tool_secs,
        });
        if !error.is_null() {
            tool_event["error"] = error.clone();
        }
        events.push(tool_event);
        let mut tool_msg =
            json!({ "id": text::mixed(rng, 22), "content": content, "role": "tool", "tool_call_id": call_id, "function": function });
        if !error.is_null() {
            tool_msg["error"] = error;
        }
        messages.push(tool_msg);
        clock += tool_secs;
        working += tool_secs;
    }
    let n_messages = messages.len();
    let (limit, error) = match &s.end {
        End::StepLimit => (json!({ "type": "message", "limit": n_messages }), Value::Null),
        End::Infra { kind, message } => {
            let msg = if *kind == "RetryError" {
                format!(
                    "RateLimitError: Error code: 429 - {{'error': {{'message': 'Rate limit reached for {model}', 'type': 'rate_limit_exceeded'}}}} ({message})"
                )
            } else {
                format!("RuntimeError: {message}")
            };
            let tb = text::traceback(rng, s.repo, &msg);
            (Value::Null, json!({ "message": msg, "traceback": tb, "traceback_ansi": tb }))
        }
        End::Submitted => (Value::Null, Value::Null),
    };
    let value = if s.passed == Some(true) { 1.0 } else { 0.0 };
    let explanation = if matches!(s.end, End::Infra { .. }) {
        "The sample errored before the tests ran.".to_string()
    } else if s.patch.is_empty() {
        "No patch was submitted.".to_string()
    } else if value > 0.0 {
        "All FAIL_TO_PASS and PASS_TO_PASS tests passed.".to_string()
    } else {
        format!("{} FAIL_TO_PASS tests failed.", rng.random_range(1..5))
    };
    let scores = json!({ SCORER: { "value": value, "answer": s.patch, "explanation": explanation, "metadata": {} } });
    let uuid = text::mixed(rng, 22);
    let total = (clock - s.start).max(0.0);
    let model_usage = json!({ model: usage(tin, tout) });
    let mut sample = json!({
        "id": s.task,
        "epoch": 1,
        "input": s.issue,
        "target": "",
        "messages": messages,
        "output": last_output,
        "scores": scores,
        "metadata": { "repo": s.repo.slug, "instance_id": s.task },
        "store": {},
        "events": events,
        "model_usage": model_usage,
        "started_at": text::rfc3339(s.start).replace('Z', "+00:00"),
        "completed_at": text::rfc3339(clock).replace('Z', "+00:00"),
        "total_time": (total * 1000.0).round() / 1000.0,
        "working_time": (working * 1000.0).round() / 1000.0,
        "uuid": uuid,
        "error": error,
        "attachments": {},
        "limit": limit,
        "message_limit": 250,
    });
    if s.scenario == Scenario::Budget {
        sample["message_limit"] = json!(n_messages);
    }
    let row = json!({
        "id": s.task,
        "epoch": 1,
        "input": s.issue.chars().take(200).collect::<String>(),
        "target": "",
        "metadata": {},
        "scores": scores,
        "model_usage": model_usage,
        "started_at": sample["started_at"],
        "completed_at": sample["completed_at"],
        "total_time": sample["total_time"],
        "working_time": sample["working_time"],
        "uuid": uuid,
        "error": error.get("message").cloned().unwrap_or(Value::Null),
        "limit": if limit.is_null() { Value::Null } else { json!("message") },
        "retries": 0,
        "completed": true,
        "message_count": n_messages,
    });
    (sample, Summary { row, score: Some(value), id: s.task.clone() })
}
