//! OpenHands agent SDK (V1) evaluation output: the `output.jsonl` of OpenHands/benchmarks.
//!
//! Read from OpenHands/benchmarks at commit 4e5469e0 (`benchmarks/utils/models.py`,
//! `evaluation.py`, `iterative.py`, `evaluation_utils.py`, `swebench/run_infer.py`) and the SDK it
//! pins (software-agent-sdk 43376f18: `Metrics`, the events). Each line is one `EvalOutput` as
//! pydantic's `model_dump_json` writes it: `instance_id`; `attempt` (the critic attempt, from 1);
//! `test_result` (the benchmark's own: SWE-bench's `git_patch`, `proxy_cost` when a LiteLLM proxy
//! counted the spend, `git_patch_captured_on_error` when the patch was taken after a failure);
//! `instruction`; `metadata` (`EvalMetadata`: `llm` with its `model`, `max_iterations`, `dataset`,
//! `critic`, ...); `history` (the conversation's SDK events, each with `kind`); `metrics` (the
//! SDK's `Metrics` of every LLM of the conversation combined); `error`; `instance`;
//! `runtime_runs`.
//!
//! Which file a line is in: the default result writer appends a result to `output.jsonl`, or to
//! `output_errors.jsonl` when it carries an `error`, and every result of critic attempt n goes to
//! `output.critic_attempt_<n>.jsonl`; at the end `output.jsonl` is rewritten from the attempt
//! files, best attempt per instance, rows with an `error` left out. An error row is made after the
//! last retry: `history` empty, `error` = `Instance failed after N retries. Last error: ...` cut
//! to 200 characters, with the metrics and the patch recovered from the workspace when it was
//! still there.
//!
//! The events become steps exactly as the SDK event list reader makes them
//! ([`super::openhands_sdk`]); usage is the line's `metrics`; `error` is an error signal, left to
//! `rules/harnesses/openhands.toml` like V0's. The verdict is not in the file (`swebench-eval`
//! writes it to `output.report.json`, a SWE-bench run report, joined by instance id). V0
//! evaluation outputs (events without `kind`) are `openhands-eval`.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::openhands_sdk::Conv;
use crate::ingest::adapters::shared::common::num;
use crate::ingest::adapters::shared::lines::Line;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::{JsonShape, Probe};
use crate::model::{SourceFile, Trajectory};

const HARNESS: &str = "openhands";

/// One line (`EvalOutput`); `instruction`, `instance` and `runtime_runs` are not read.
#[derive(Deserialize)]
struct RawEvalOutput<'a> {
    instance_id: Value,
    #[serde(default)]
    attempt: Option<Value>,
    #[serde(default)]
    test_result: Option<Value>,
    #[serde(default)]
    metadata: Option<Value>,
    #[serde(borrow, default)]
    history: Option<Vec<&'a RawValue>>,
    #[serde(default)]
    metrics: Option<Value>,
    /// Kept raw, so the error signal points at its bytes.
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// What says a line of `EvalOutput` is the SDK's rather than V0's, seen in the probe.
fn sdk_evidence(shape: &JsonShape, p: &Probe) -> Option<&'static str> {
    static KIND: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    if shape.has("attempt") {
        return Some("EvalOutput lines with attempt (agent-SDK benchmarks)");
    }
    if shape.has("metadata.llm") || shape.has("metadata.critic") {
        return Some("EvalOutput lines whose metadata has the SDK's llm/critic");
    }
    // `kind` is a computed field, dumped after an event's own fields: it is seen only when the
    // first events fit in the probe.
    let kind = KIND.get_or_init(|| regex::Regex::new(r#""kind"\s*:\s*"[A-Za-z]+(?:Event|Observation)""#).expect("static regex"));
    kind.is_match(p.text()).then_some("EvalOutput lines whose history events have kind")
}

/// An agent-SDK evaluation `output.jsonl` (also `output_errors.jsonl`, `output.critic_attempt_<n>.jsonl`).
pub struct OpenHandsSdkEval;

impl Adapter for OpenHandsSdkEval {
    fn name(&self) -> &'static str {
        "openhands-sdk-eval"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "OpenHands agent SDK (V1) evaluation output.jsonl (OpenHands/benchmarks EvalOutput per line, history of SDK events)"
    }

    fn versions(&self) -> &'static str {
        "benchmarks EvalOutput (SDK events, kind)"
    }

    /// An evaluation output holds every instance of a run; records go out as read.
    fn streams(&self, _unit: &Unit) -> bool {
        true
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shape = super::openhands::eval_output_shape(p)?;
        match sdk_evidence(shape, p) {
            Some(why) => marker(why),
            None => Err("EvalOutput lines without attempt, SDK metadata or events with kind (V0 output)".into()),
        }
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        super::openhands::read_eval_output(unit, out, "OpenHands SDK evaluation record", |at, file| {
            instance(at, file, self.name(), self.version())
        })
    }
}

/// One `EvalOutput` line into a record; errors carry positions within the line.
fn instance(line: &Line<'_>, file: &SourceFile, adapter: &str, version: u32) -> Result<Trajectory, serde_json::Error> {
    let rec: RawEvalOutput<'_> = serde_json::from_str(line.text)?;
    let task = match &rec.instance_id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut t = Trajectory::new(task, HARNESS, adapter, version, vec![file.clone()]);
    t.provenance.format_version = Some("openhands-sdk-eval-output".into());
    // `attempt` counts critic attempts from 1; `trial` counts from 0.
    if let Some(a) = rec.attempt.as_ref().and_then(Value::as_u64).filter(|a| *a >= 1) {
        t.trial = u32::try_from(a - 1).unwrap_or(u32::MAX);
    }
    let meta = rec.metadata.as_ref().filter(|m| m.is_object());
    // `llm` since the harness's EvalMetadata took the SDK's LLM; `llm_config` before.
    t.model = meta
        .and_then(|m| m.pointer("/llm/model").or_else(|| m.pointer("/llm_config/model")))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(String::from);
    let mut c = Conv::default();
    for raw in rec.history.unwrap_or_default() {
        let e: Value = serde_json::from_str(raw.get())?;
        c.push(&e, line.span_of(raw.get()));
    }
    let metrics = rec.metrics.as_ref().filter(|m| m.is_object());
    if let Some(m) = metrics {
        c.use_metrics(m);
    }
    c.finish_into(&mut t);
    let error: Option<String> = match rec.error {
        Some(raw) => serde_json::from_str(raw.get())?,
        None => None,
    };
    if let Some(e) = error.filter(|e| !e.trim().is_empty()) {
        let span = rec.error.and_then(|raw| line.span_of(raw.get()));
        t.signals.error("error", e).with_span(span);
    }
    t.signals.limits.steps = meta.and_then(|m| num(m.get("max_iterations")));
    if let Some(m) = metrics {
        t.signals.limits.cost_usd = num(m.get("max_budget_per_task"));
        t.signals.consumed.cost_usd = num(m.get("accumulated_cost"));
    }
    if let Some(tr) = rec.test_result.as_ref().filter(|tr| tr.is_object()) {
        t.submission = tr.get("git_patch").and_then(Value::as_str).map(String::from);
        if tr.get("git_patch_captured_on_error").and_then(Value::as_bool) == Some(true) {
            t.notes.push("the patch was taken from the workspace after the run failed (git_patch_captured_on_error)".into());
        }
        if let Some(proxy) = num(tr.get("proxy_cost")) {
            if t.usage.cost_usd.is_none() {
                t.usage.cost_usd = Some(proxy);
            } else {
                t.notes.push(format!("the LiteLLM proxy counted a cost of {proxy} USD (test_result.proxy_cost)"));
            }
        }
    }
    t.notes.push(
        "an evaluation output carries no verdict: outcome comes from the SWE-bench report (output.report.json) or a verdict file, if any"
            .into(),
    );
    Ok(t)
}
