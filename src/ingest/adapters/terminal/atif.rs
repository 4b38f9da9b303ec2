//! ATIF (Agent Trajectory Interchange Format) v1.0–v1.8, Harbor's trajectory format.
//!
//! Each ATIF step becomes one step here; observation results are paired with the step's
//! calls by `source_call_id`, else by position. Observations on a step without calls are the
//! environment talking (terminus's "Previous response had parsing errors"); they become an
//! environment step after the reply, where interpretation finds a parse complaint, unless each
//! names a call of an earlier step (OpenClaw writes every tool result as a step of its own, its
//! call named in `extra.tool_call_id`): then they are that call's results. ATIF records
//! no end status: how the run ended is the shape of its last steps, or the Harbor trial's.
//! `continued_trajectory_ref` files are appended and subagent trajectories are inlined after
//! the step that delegated, with `agent` naming the subagent: a file a ref's `trajectory_path`
//! names, or (v1.7) an entry of `subagent_trajectories` embedded in the same file, which a
//! ref's `trajectory_id` names (`subagent:<trajectory_id>`); an embedded one no ref names
//! follows the steps of the trajectory that embeds it.
//!
//! Also v1.7: without `session_id`, `trajectory_id` is the record's session id; steps marked
//! `is_copied_context` (copied from a prior trajectory, not new interactions) are left out, with
//! a note; `llm_call_count` 0 on an agent step (calls dispatched without a model inference) and
//! above 1 (metrics summed over several inferences) are notes, as is `reasoning_effort`. Message
//! and result content may be a list of parts (v1.6): text parts give the text, an image (v1.6)
//! or audio part (v1.8) a placeholder (`[image]`, `[audio]`). `extra` on calls and results
//! (v1.7) is free-form and kept nowhere.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::build::to_u32;
use crate::ingest::adapters::shared::common::{content_text, declared_tool, tool_call, uint};
use crate::ingest::adapters::shared::json_walk::{GiveUp, JsonWalk, document, each_at};
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{CallRef, Reasoning, Role, Step, Tokens, ToolResult, Trajectory};

/// How many steps back a result step looks for the call it names (parallel calls answered one
/// step each stay well inside it).
const MAX_RESULT_DISTANCE: usize = 256;

/// How many continuation and subagent files one record may follow (a reference loop ends here).
const MAX_LINKED_FILES: usize = 64;

#[derive(Deserialize)]
struct RawDoc<'a> {
    schema_version: String,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    trajectory_id: Option<String>,
    #[serde(default)]
    agent: RawAgent,
    #[serde(borrow)]
    steps: Vec<&'a RawValue>,
    #[serde(default)]
    final_metrics: Option<RawFinal>,
    #[serde(default)]
    continued_trajectory_ref: Option<String>,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default, borrow)]
    subagent_trajectories: Option<Vec<&'a RawValue>>,
}

/// A trajectory embedded in another's `subagent_trajectories` (v1.7): the fields read of it.
/// Its `schema_version` is not required here, its totals and continuation are not read (those of
/// a linked subagent file are not either).
#[derive(Deserialize)]
struct RawEmbedded<'a> {
    #[serde(default)]
    schema_version: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    trajectory_id: Option<String>,
    #[serde(default)]
    agent: RawAgent,
    #[serde(borrow)]
    steps: Vec<&'a RawValue>,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default, borrow)]
    subagent_trajectories: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize, Default)]
struct RawAgent {
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    model_name: Option<String>,
    #[serde(default)]
    tool_definitions: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct RawFinal {
    total_prompt_tokens: Option<u64>,
    total_completion_tokens: Option<u64>,
    total_cached_tokens: Option<u64>,
    total_cost_usd: Option<f64>,
    #[serde(default)]
    extra: Option<Value>,
}

#[derive(Deserialize)]
struct RawStep {
    #[serde(default)]
    timestamp: Option<String>,
    source: String,
    #[serde(default)]
    message: Value,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<RawCall>>,
    #[serde(default)]
    observation: Option<RawObservation>,
    #[serde(default)]
    metrics: Option<RawMetrics>,
    /// v1.7: how many model inferences the step stands for; 0 on an agent step is a
    /// deterministic dispatch.
    #[serde(default)]
    llm_call_count: Option<u64>,
    /// A string (`low`) or a number.
    #[serde(default)]
    reasoning_effort: Option<Value>,
    /// v1.7: copied from a prior trajectory for context, not a new interaction.
    #[serde(default)]
    is_copied_context: Option<bool>,
    /// Free-form. Read for one thing: a producer that writes each tool result as a step of its
    /// own (OpenClaw) names the call it answers here (`tool_call_id`), with its exit status.
    #[serde(default)]
    extra: Option<Value>,
}

#[derive(Deserialize)]
struct RawCall {
    #[serde(default)]
    tool_call_id: Option<String>,
    function_name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct RawObservation {
    #[serde(default)]
    results: Vec<RawResult>,
}

#[derive(Deserialize)]
struct RawResult {
    #[serde(default)]
    source_call_id: Option<String>,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    subagent_trajectory_ref: Option<Vec<RawSubRef>>,
}

#[derive(Deserialize)]
struct RawSubRef {
    #[serde(default)]
    session_id: Option<String>,
    /// v1.7: names an entry of the embedding trajectory's `subagent_trajectories`.
    #[serde(default)]
    trajectory_id: Option<String>,
    #[serde(default)]
    trajectory_path: Option<String>,
}

#[derive(Deserialize)]
struct RawMetrics {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    cached_tokens: Option<u64>,
    cost_usd: Option<f64>,
    #[serde(default)]
    extra: Option<Value>,
}

/// An ATIF document with its steps typed, each with the bytes it spans; an embedded subagent
/// trajectory is one too (its `schema_version` may be empty, its totals and continuation absent).
struct Doc {
    schema_version: String,
    session_id: Option<String>,
    trajectory_id: Option<String>,
    agent: RawAgent,
    steps: Vec<(Range<usize>, RawStep)>,
    final_metrics: Option<RawFinal>,
    continued_trajectory_ref: Option<String>,
    notes: Option<String>,
    subagents: Vec<Doc>,
}

/// Reads an ATIF file in one pass over its bytes, or, when that gives up, as [`RawDoc`] and then
/// each step again, which also words the diagnostic (`what` names the document) of a file that
/// does not read.
fn read_doc(src: &Source, what: &str) -> Result<Doc, InputError> {
    match one_pass(src.text()?) {
        Ok(doc) => Ok(doc),
        Err(GiveUp) => two_pass(src, what),
    }
}

/// The document as [`RawDoc`] reads it, then each step and embedded subagent again.
fn two_pass(src: &Source, what: &str) -> Result<Doc, InputError> {
    let doc: RawDoc<'_> = document(src, what)?;
    let steps = each_at(src, &doc.steps, "ATIF step")?;
    Ok(Doc {
        schema_version: doc.schema_version,
        session_id: doc.session_id,
        trajectory_id: doc.trajectory_id,
        agent: doc.agent,
        steps,
        final_metrics: doc.final_metrics,
        continued_trajectory_ref: doc.continued_trajectory_ref,
        notes: doc.notes,
        subagents: embedded_two_pass(src, doc.subagent_trajectories.as_deref())?,
    })
}

/// Each embedded subagent trajectory as [`RawEmbedded`] reads it, then its steps again.
fn embedded_two_pass(src: &Source, raws: Option<&[&RawValue]>) -> Result<Vec<Doc>, InputError> {
    each_at::<RawEmbedded<'_>>(src, raws.unwrap_or_default(), "ATIF subagent trajectory")?
        .into_iter()
        .map(|(_, d)| {
            Ok(Doc {
                schema_version: d.schema_version.unwrap_or_default(),
                session_id: d.session_id,
                trajectory_id: d.trajectory_id,
                agent: d.agent,
                steps: each_at(src, &d.steps, "ATIF step")?,
                final_metrics: None,
                continued_trajectory_ref: None,
                notes: d.notes,
                subagents: embedded_two_pass(src, d.subagent_trajectories.as_deref())?,
            })
        })
        .collect()
}

/// The fields [`RawDoc`] reads, with the steps typed where they lie.
fn one_pass(text: &str) -> Result<Doc, GiveUp> {
    let mut w = JsonWalk::new(text);
    let doc = walk_doc(&mut w, true)?;
    w.end()?;
    Ok(doc)
}

/// The document at the cursor: the root (the fields [`RawDoc`] reads) or, not `root`, an
/// embedded subagent trajectory (those [`RawEmbedded`] reads).
fn walk_doc<'a>(w: &mut JsonWalk<'a>, root: bool) -> Result<Doc, GiveUp> {
    let (mut schema_version, mut steps) = (None, None);
    let mut doc = Doc {
        schema_version: String::new(),
        session_id: None,
        trajectory_id: None,
        agent: RawAgent::default(),
        steps: Vec::new(),
        final_metrics: None,
        continued_trajectory_ref: None,
        notes: None,
        subagents: Vec::new(),
    };
    w.object(|w, key| {
        match key {
            "schema_version" if root => schema_version = Some(w.value::<String>()?),
            "schema_version" => schema_version = w.value::<Option<String>>()?,
            "session_id" => doc.session_id = w.value()?,
            "trajectory_id" => doc.trajectory_id = w.value()?,
            "agent" => doc.agent = w.value()?,
            "steps" => steps = Some(w.items()?),
            "final_metrics" if root => doc.final_metrics = w.value()?,
            "continued_trajectory_ref" if root => doc.continued_trajectory_ref = w.value()?,
            "notes" => doc.notes = w.value()?,
            "subagent_trajectories" if w.at_null() => w.skip()?,
            "subagent_trajectories" => w.array(|w| {
                doc.subagents.push(walk_doc(w, false)?);
                Ok(())
            })?,
            _ => w.skip()?,
        }
        Ok(())
    })?;
    doc.schema_version = if root { schema_version.ok_or(GiveUp)? } else { schema_version.unwrap_or_default() };
    doc.steps = steps.ok_or(GiveUp)?;
    Ok(doc)
}

/// Parses one ATIF file (and the files it links) into a record. `files` starts the
/// provenance list; the ATIF files read are appended to it.
///
/// # Errors
/// When the primary ATIF file cannot be read or parsed; problems with linked files are notes.
pub fn parse_file(path: &Path, display: &str, mut files: Vec<crate::model::SourceFile>, adapter: &str) -> Result<Trajectory, InputError> {
    let src = Source::read(path, display)?;
    let doc = read_doc(&src, "ATIF trajectory")?;
    files.push(src.provenance("transcript"));
    let file_ix = to_u32(files.len() - 1);

    let harness = if doc.agent.name.is_empty() { "unknown".to_string() } else { doc.agent.name.clone() };
    let mut t = crate::model::Trajectory::new(String::new(), harness, adapter, 1, Vec::new());
    t.provenance.files = files;
    t.provenance.format_version = Some(doc.schema_version.clone());
    t.harness_version = doc.agent.version.clone().filter(|v| !v.is_empty() && v != "unknown");
    t.model = doc.agent.model_name.clone();
    // v1.7 made `session_id` optional; `trajectory_id` names the document.
    t.session_id = doc.session_id.clone().or_else(|| doc.trajectory_id.clone());
    t.declared_tools = doc.agent.tool_definitions.as_ref().map(|defs| defs.iter().filter_map(declared_tool).collect());
    if let Some(notes) = doc.notes.as_ref().filter(|n| !n.is_empty()) {
        t.notes.push(format!("ATIF notes: {notes}"));
    }
    let mut budget = MAX_LINKED_FILES;
    let mut marks = Marks::default();
    append_steps(&mut t, &src, file_ix, doc.steps, doc.subagents, None, &mut budget, &mut marks)?;
    if let Some(fm) = &doc.final_metrics {
        t.usage.prompt_tokens = fm.total_prompt_tokens;
        t.usage.completion_tokens = fm.total_completion_tokens;
        t.usage.cached_tokens = fm.total_cached_tokens;
        t.usage.cost_usd = fm.total_cost_usd;
        t.usage.reasoning_tokens = fm.extra.as_ref().and_then(|e| uint(e.get("total_reasoning_tokens")));
    }
    // Continuations: the same session split over several files.
    let mut next = doc.continued_trajectory_ref.clone();
    let mut seen = vec![path.to_path_buf()];
    while let Some(rel) = next.take() {
        let p = resolve(path, &rel);
        if seen.contains(&p) || budget == 0 {
            t.notes.push(format!("continued trajectory {rel} not followed: reference loop or too many linked files"));
            break;
        }
        budget -= 1;
        seen.push(p.clone());
        match read_linked(&p) {
            Ok((csrc, _)) => {
                let cdoc = read_doc(&csrc, "ATIF continuation")?;
                t.provenance.files.push(csrc.provenance("transcript_continuation"));
                let ix = to_u32(t.provenance.files.len() - 1);
                append_steps(&mut t, &csrc, ix, cdoc.steps, cdoc.subagents, None, &mut budget, &mut marks)?;
                next = cdoc.continued_trajectory_ref.clone();
            }
            Err(e) => t.notes.push(format!("continued trajectory {rel} could not be read: {e}")),
        }
    }
    marks.note(&mut t);
    Ok(t)
}

/// What the steps said of themselves that the record keeps as notes.
#[derive(Default)]
struct Marks {
    /// Steps left out: `is_copied_context`.
    copied: usize,
    /// Agent steps with `llm_call_count` 0, by record index.
    dispatched: Vec<usize>,
    /// Steps with `llm_call_count` above 1, by record index, with the count.
    aggregated: Vec<(usize, u64)>,
    /// Each `reasoning_effort` written, in order of first use.
    efforts: Vec<String>,
}

impl Marks {
    fn note(self, t: &mut Trajectory) {
        if self.copied > 0 {
            t.notes.push(format!(
                "ATIF: {} step(s) marked is_copied_context (copied from a prior trajectory for context, not new interactions) left out",
                self.copied
            ));
        }
        if !self.dispatched.is_empty() {
            t.notes.push(format!(
                "ATIF: agent steps {:?} are deterministic dispatch (llm_call_count 0): their calls were issued without a model inference",
                self.dispatched
            ));
        }
        if !self.aggregated.is_empty() {
            let each: Vec<String> = self.aggregated.iter().map(|(i, n)| format!("step {i}: {n}")).collect();
            t.notes.push(format!("ATIF: metrics summed over several model inferences (llm_call_count): {}", each.join(", ")));
        }
        if !self.efforts.is_empty() {
            t.notes.push(format!("ATIF reasoning_effort: {}", self.efforts.join(", ")));
        }
    }
}

fn read_linked(p: &Path) -> Result<(Source, ()), String> {
    let shown = crate::util::display_path(p);
    Source::read(p, &shown).map(|s| (s, ())).map_err(|e| e.to_string())
}

/// The files `path` links with `continued_trajectory_ref` and `subagent_trajectory_ref`, as the
/// walk names them. A file that cannot be read or parsed links nothing here; parsing reports it.
fn linked_files(path: &Path) -> Vec<PathBuf> {
    fn walk(v: &Value, base: &Path, out: &mut Vec<PathBuf>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("continued_trajectory_ref", Value::String(r)) => out.push(resolve(base, r)),
                        ("subagent_trajectory_ref", Value::Array(refs)) => {
                            out.extend(refs.iter().filter_map(|r| r.get("trajectory_path")?.as_str()).map(|r| resolve(base, r)));
                        }
                        _ => walk(x, base, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, base, out)),
            _ => {}
        }
    }
    let Ok(bytes) = std::fs::read(path) else { return Vec::new() };
    if memchr::memmem::find(&bytes, b"_trajectory_ref").is_none() {
        return Vec::new();
    }
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else { return Vec::new() };
    let mut out = Vec::new();
    walk(&v, path, &mut out);
    out
}

fn resolve(base: &Path, rel: &str) -> PathBuf {
    let r = Path::new(rel);
    if r.is_absolute() {
        // Absolute paths from another machine: look for the file name beside this one.
        return base.with_file_name(r.file_name().unwrap_or_default());
    }
    base.parent().unwrap_or(Path::new("")).join(r)
}

/// Adds the tools a subagent declares to the run's declared tools: they were offered in this
/// run, and a subagent's call is judged against that list (its steps are the record's steps).
/// Only where the root declares a list too: without one, a subagent's list would be taken for
/// everything the root could call.
fn offer_tools(t: &mut Trajectory, agent: &RawAgent) {
    let (Some(declared), Some(defs)) = (t.declared_tools.as_mut(), agent.tool_definitions.as_ref()) else { return };
    for tool in defs.iter().filter_map(declared_tool) {
        if !declared.iter().any(|d| d.name == tool.name) {
            declared.push(tool);
        }
    }
}

/// Appends one trajectory's steps, each delegation followed by the subagent's steps: a linked
/// file, or one of `embedded` (the trajectory's `subagent_trajectories`) a ref names by
/// `trajectory_id`. The embedded ones no ref names follow the steps.
#[allow(clippy::too_many_arguments)]
fn append_steps(
    t: &mut Trajectory,
    src: &Source,
    file_ix: u32,
    steps: Vec<(Range<usize>, RawStep)>,
    embedded: Vec<Doc>,
    agent: Option<&str>,
    budget: &mut usize,
    marks: &mut Marks,
) -> Result<(), InputError> {
    let mut embedded: Vec<Option<Doc>> = embedded.into_iter().map(Some).collect();
    for (at, s) in steps {
        if s.is_copied_context == Some(true) {
            marks.copied += 1;
            continue;
        }
        match (s.source.as_str(), s.llm_call_count) {
            ("agent", Some(0)) => marks.dispatched.push(t.steps.len()),
            (_, Some(n)) if n > 1 => marks.aggregated.push((t.steps.len(), n)),
            _ => {}
        }
        let effort = match &s.reasoning_effort {
            Some(Value::String(e)) => Some(e.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        if let Some(e) = effort.filter(|e| !e.is_empty() && !marks.efforts.contains(e)) {
            marks.efforts.push(e);
        }
        let role = match s.source.as_str() {
            "agent" => Role::Assistant,
            "user" => Role::User,
            _ => Role::System,
        };
        let mut step = Step::new(role, content_text(&s.message));
        step.agent = agent.map(ToString::to_string);
        step.timestamp = s.timestamp.clone();
        step.source_span = Some(src.span(file_ix, at.start, at.len()));
        step.reasoning = s.reasoning_content.as_ref().filter(|r| !r.is_empty()).map(|r| Reasoning { text: Some(r.clone()), tokens: None });
        if let Some(m) = &s.metrics {
            let reasoning = m.extra.as_ref().and_then(|e| uint(e.get("reasoning_tokens")));
            step.tokens = Some(Tokens { prompt: m.prompt_tokens, completion: m.completion_tokens, reasoning, cached: m.cached_tokens });
            step.cost_usd = m.cost_usd;
            if let (Some(r), Some(reason)) = (reasoning, step.reasoning.as_mut()) {
                reason.tokens = Some(r);
            }
        }
        let calls = s.tool_calls.unwrap_or_default();
        for c in &calls {
            step.tool_calls.push(tool_call(c.tool_call_id.clone(), &c.function_name, &c.arguments));
        }
        let here = to_u32(t.steps.len());
        let mut env_text: Vec<String> = Vec::new();
        let mut subagents: Vec<Delegated> = Vec::new();
        let results = s.observation.map(|o| o.results).unwrap_or_default();
        if calls.is_empty()
            && let Some(answers) = answers_to_earlier_calls(t, &results, s.extra.as_ref())
        {
            // The step is the results, whatever its `source` says: its message repeats them and
            // is no reply of the agent's.
            let mut step = Step::new(Role::Tool, "");
            step.agent = agent.map(ToString::to_string);
            step.timestamp = s.timestamp.clone();
            step.source_span = Some(src.span(file_ix, at.start, at.len()));
            step.tool_results = answers;
            t.steps.push(step);
            continue;
        }
        for (pos, r) in results.iter().enumerate() {
            let output = content_text(&r.content);
            for sub in r.subagent_trajectory_ref.iter().flatten() {
                // The embedded form first (v1.7); a path the ref also gives is the same trajectory.
                let found = sub.trajectory_id.as_deref().and_then(|id| {
                    embedded.iter_mut().find(|d| d.as_ref().is_some_and(|d| d.trajectory_id.as_deref() == Some(id)))?.take()
                });
                match (found, &sub.trajectory_id, &sub.trajectory_path) {
                    (Some(doc), Some(id), _) => subagents.push(Delegated::Embedded(id.clone(), Box::new(doc))),
                    (_, _, Some(p)) => {
                        let name = sub.session_id.clone().or_else(|| sub.trajectory_id.clone()).unwrap_or_else(|| p.clone());
                        subagents.push(Delegated::File(name, resolve(&src.path, p)));
                    }
                    (_, Some(id), None) => {
                        t.notes.push(format!("subagent trajectory {id} not followed: no embedded trajectory has that trajectory_id, or an earlier ref took it"));
                    }
                    _ => {}
                }
            }
            if calls.is_empty() {
                env_text.push(output);
                continue;
            }
            let mut res = ToolResult::new(output);
            res.call_id = r.source_call_id.clone();
            if r.source_call_id.is_none() && pos < calls.len() && results.len() == calls.len() {
                // No ids: results answer the step's calls in order.
                res.call = Some(CallRef { step: here, call: to_u32(pos) });
            }
            step.tool_results.push(res);
        }
        let span = step.source_span;
        t.steps.push(step);
        if !env_text.is_empty() {
            let mut env = Step::new(Role::Environment, env_text.join("\n"));
            env.agent = agent.map(ToString::to_string);
            env.source_span = span;
            t.steps.push(env);
        }
        for sub in subagents {
            let (session, p) = match sub {
                Delegated::Embedded(id, doc) => {
                    let name = format!("subagent:{id}");
                    offer_tools(t, &doc.agent);
                    append_steps(t, src, file_ix, doc.steps, doc.subagents, Some(&name), budget, marks)?;
                    continue;
                }
                Delegated::File(session, p) => (session, p),
            };
            if *budget == 0 {
                t.notes.push(format!("subagent trajectory {} not followed: too many linked files", p.display()));
                continue;
            }
            *budget -= 1;
            match read_linked(&p) {
                Ok((ssrc, ())) => {
                    let sdoc = read_doc(&ssrc, "ATIF subagent trajectory")?;
                    offer_tools(t, &sdoc.agent);
                    t.provenance.files.push(ssrc.provenance("subagent_transcript"));
                    let ix = to_u32(t.provenance.files.len() - 1);
                    let name = format!("subagent:{session}");
                    append_steps(t, &ssrc, ix, sdoc.steps, sdoc.subagents, Some(&name), budget, marks)?;
                }
                Err(e) => t.notes.push(format!("subagent trajectory {} could not be read: {e}", p.display())),
            }
        }
    }
    for (n, doc) in embedded.into_iter().enumerate().filter_map(|(n, d)| Some((n, d?))) {
        let id = doc.trajectory_id.clone().unwrap_or_else(|| format!("#{n}"));
        t.notes.push(format!("embedded subagent trajectory {id} is named by no subagent_trajectory_ref: its steps follow those of the trajectory embedding it"));
        let name = format!("subagent:{id}");
        offer_tools(t, &doc.agent);
        append_steps(t, src, file_ix, doc.steps, doc.subagents, Some(&name), budget, marks)?;
    }
    Ok(())
}

/// The results of a step without calls as the answers to calls of earlier steps, when every
/// result names one (`source_call_id`, or, for a step holding one result, the step's
/// `extra.tool_call_id`): a producer that writes each tool result as a step of its own. `None`
/// when any result names no earlier call: that step is the environment talking.
fn answers_to_earlier_calls(t: &Trajectory, results: &[RawResult], extra: Option<&Value>) -> Option<Vec<ToolResult>> {
    if results.is_empty() || results.iter().any(|r| r.subagent_trajectory_ref.is_some()) {
        return None;
    }
    let step_id = extra.and_then(|e| e.get("tool_call_id")?.as_str()).filter(|_| results.len() == 1);
    results
        .iter()
        .map(|r| {
            let id = r.source_call_id.as_deref().or(step_id)?;
            // The call is nearly always in the last agent step or two: search from the end, and
            // only so far back (a file of results naming no call must not cost a scan each).
            let call = t.steps.iter().enumerate().rev().take(MAX_RESULT_DISTANCE).find_map(|(s, step)| {
                let k = step.tool_calls.iter().position(|c| c.id.as_deref() == Some(id))?;
                Some(CallRef { step: to_u32(s), call: to_u32(k) })
            })?;
            let mut res = ToolResult::new(content_text(&r.content));
            res.call_id = Some(id.to_string());
            res.call = Some(call);
            if let Some(e) = extra.filter(|_| step_id.is_some()) {
                res.exit_code = ["exit_code", "exec_exit_code"].iter().find_map(|k| e.get(*k)?.as_i64());
                res.is_error = e.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            }
            Some(res)
        })
        .collect()
}

/// A subagent trajectory a step delegated to, with the name its steps take.
enum Delegated {
    /// Embedded in the same file (v1.7), by `trajectory_id`.
    Embedded(String, Box<Doc>),
    /// Another file, by `trajectory_path`, named by the ref's `session_id` or the path.
    File(String, PathBuf),
}

/// A standalone ATIF file (no Harbor trial result beside it).
pub struct Atif;

impl Adapter for Atif {
    fn name(&self) -> &'static str {
        "atif"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "ATIF trajectory (Harbor agent/trajectory.json, v1.0-1.8)"
    }

    fn versions(&self) -> &'static str {
        "1.0–1.8"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        match j.str("schema_version") {
            Some(v) if v.starts_with("ATIF-") => marker(format!("schema_version {v}")),
            Some(v) => Err(format!("schema_version {v} is not ATIF")),
            None => Err("no schema_version".into()),
        }
    }

    /// The continuation and subagent files this one links: they are read into its record, so a
    /// walk that also finds them must not count them as trajectories of their own.
    fn companions(&self, primary: &Path, files: &crate::ingest::format::FileSet) -> Vec<PathBuf> {
        // In a Harbor trial (`<trial>/agent/trajectory.json` beside `<trial>/result.json`) the
        // trial's reader follows the links; reading the file here too would only cost time.
        let trial_result = primary.parent().and_then(Path::parent).map(|t| t.join("result.json"));
        if trial_result.is_some_and(|r| files.contains_key(&r)) {
            return Vec::new();
        }
        linked_files(primary)
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let mut t = parse_file(&unit.primary.path, &unit.primary.display, Vec::new(), self.name())?;
        t.task_id = task_from_path(&unit.primary.path).or_else(|| t.session_id.clone()).unwrap_or_else(|| "unknown".into());
        t.notes.push("no Harbor trial result.json beside this trajectory: outcome comes from a verdict file, if any".into());
        out.emit(t);
        Ok(())
    }
}

/// `<task>__<suffix>/agent/trajectory.json` → `<task>`; otherwise the file's stem
/// (`hello-world.trajectory.json` → `hello-world`).
fn task_from_path(p: &Path) -> Option<String> {
    let parent = p.parent()?;
    if parent.file_name().is_some_and(|n| n == "agent")
        && let Some(trial_dir) = parent.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned())
        && let Some((task, _)) = trial_dir.rsplit_once("__")
    {
        return Some(task.to_string());
    }
    let name = p.file_name()?.to_string_lossy().into_owned();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    let stem = stem.strip_suffix(".trajectory").unwrap_or(stem);
    (stem != "trajectory").then(|| stem.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_reads_every_sample_as_the_two_pass_reading_does() {
        let files = crate::ingest::adapters::shared::json_walk::sample_files(
            &["samples/atif", "samples/harbor", "samples/invalid"],
            "trajectory.json",
        );
        fn sketch(d: &Doc) -> String {
            let steps: Vec<String> = d
                .steps
                .iter()
                .map(|(at, s)| {
                    let refs: Vec<(Option<&str>, Option<&str>)> = s
                        .observation
                        .iter()
                        .flat_map(|o| &o.results)
                        .flat_map(|r| r.subagent_trajectory_ref.iter().flatten())
                        .map(|r| (r.trajectory_id.as_deref(), r.trajectory_path.as_deref()))
                        .collect();
                    format!(
                        "{at:?} {} {} {:?} {:?} {:?} {:?} {:?} {refs:?}",
                        s.source,
                        s.message,
                        s.timestamp,
                        s.tool_calls.as_ref().map(Vec::len),
                        s.llm_call_count,
                        s.reasoning_effort,
                        s.is_copied_context
                    )
                })
                .collect();
            let subs: Vec<String> = d.subagents.iter().map(sketch).collect();
            format!(
                "{} {:?} {:?} {} {steps:?} {:?} {:?} {:?} {subs:?}",
                d.schema_version,
                d.session_id,
                d.trajectory_id,
                d.agent.name,
                d.final_metrics.as_ref().map(|f| f.total_prompt_tokens),
                d.continued_trajectory_ref,
                d.notes,
            )
        }
        let (mut read, mut refused, mut embedded) = (0, 0, 0);
        for f in files {
            let src = Source::read(&f, &f.to_string_lossy()).expect("a sample reads");
            let Ok(text) = src.text() else { continue };
            match (one_pass(text), two_pass(&src, "ATIF trajectory")) {
                (Ok(one), Ok(two)) => {
                    assert_eq!(sketch(&one), sketch(&two), "{}", f.display());
                    read += 1;
                    embedded += usize::from(!one.subagents.is_empty());
                }
                (Err(GiveUp), Err(_)) => refused += 1,
                (one, two) => panic!("{}: one pass {:?}, two passes {:?}", f.display(), one.is_ok(), two.is_ok()),
            }
        }
        assert!(read >= 7 && refused >= 2, "samples read: {read}, refused: {refused}");
        assert!(embedded >= 2, "samples with embedded subagents read: {embedded}");
    }
}
