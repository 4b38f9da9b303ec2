//! Reading a file by its mapping: records, then each record's steps, each step read where it
//! lies so evidence points at its bytes.

use std::collections::HashMap;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::build::StepBuilder;
use crate::ingest::adapters::shared::common::{content_text, declared_tool, num, tool_call, uint};
use crate::ingest::adapters::shared::{json_walk, lines};
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Output, Unit};
use crate::ingest::source::Source;
use crate::model::{CallRef, DeclaredTool, Outcome, OutcomeStatus, Role, Signals, Step, Tokens, ToolCall, ToolResult, Trajectory};
use crate::rules::formats::{FormatMapping, JsonPath, Layout, LinesAre, Paths, ResultsMap, RoleFrom, StepMap, TaskFrom, role_named};

/// Bumped when the reading of mappings changes.
const VERSION: u32 = 1;

/// One record before it is built: its own fields (without its steps) and its steps with the
/// byte range each spans.
struct RawRecord {
    fields: Value,
    steps: Vec<(std::ops::Range<usize>, Value)>,
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn parse(m: &FormatMapping, name: &str, unit: &Unit, out: &mut Output<'_>) -> Result<(), InputError> {
    let src = Source::read(&unit.primary.path, &unit.primary.display)?;
    let what = format!("{name} document");
    match m.layout {
        Layout::Json => {
            let top: &RawValue = json_walk::document(&src, &what)?;
            for raw in records_at(&src, m, top, &what)? {
                match split_record(&src, m, raw) {
                    Ok(r) => out.emit(build(&src, m, name, r)),
                    Err(e) => out.diagnostics.push(e),
                }
            }
        }
        Layout::Jsonl => {
            let lines = lines::split(&src, &mut out.diagnostics);
            if m.records.lines == LinesAre::Steps {
                let mut fields = serde_json::Map::new();
                let mut steps = Vec::new();
                for l in &lines {
                    match lines::parse::<Value>(&src, l, &format!("{name} line")) {
                        Ok(v) => {
                            // A record field is read from the first line that has it.
                            for p in record_paths(m) {
                                if let Some(x) = p.get(&v).filter(|x| !x.is_null())
                                    && !fields.contains_key(p.as_str())
                                {
                                    fields.insert(p.as_str().to_string(), x.clone());
                                }
                            }
                            steps.push((l.start..l.start + l.text.len(), v));
                        }
                        Err(e) => out.diagnostics.push(e),
                    }
                }
                if steps.is_empty() {
                    return Err(lines::nothing_readable(&src, &format!("{name} line"), "every line must be one JSON value"));
                }
                out.emit(build(&src, m, name, RawRecord { fields: flat_fields(m, &fields), steps }));
            } else {
                for l in &lines {
                    let raw: &RawValue = match lines::parse(&src, l, &format!("{name} record")) {
                        Ok(r) => r,
                        Err(e) => {
                            out.diagnostics.push(e);
                            continue;
                        }
                    };
                    match split_record(&src, m, raw) {
                        Ok(r) => out.emit(build(&src, m, name, r)),
                        Err(e) => out.diagnostics.push(e.on_line(l.no, l.start)),
                    }
                }
            }
        }
    }
    Ok(())
}

/// Every record path of the mapping (for lines that are steps, whose record fields are spread
/// over the lines).
fn record_paths(m: &FormatMapping) -> impl Iterator<Item = &JsonPath> {
    let r = &m.records;
    [
        &r.task,
        &r.session,
        &r.model,
        &r.harness,
        &r.trial,
        &r.submission,
        &r.resolved,
        &r.reward,
        &r.cost,
        &r.prompt_tokens,
        &r.completion_tokens,
        &r.started_at,
        &r.ended_at,
        &r.tools,
        &r.step_limit,
        &r.cost_limit,
        &r.prompt,
    ]
    .into_iter()
    .flat_map(|p| p.0.iter())
    .chain(r.statuses.iter())
    .chain(r.errors.iter())
}

/// The record fields found on the lines, put back at their paths so the record's paths read them.
fn flat_fields(m: &FormatMapping, found: &serde_json::Map<String, Value>) -> Value {
    let mut root = Value::Object(serde_json::Map::new());
    for p in record_paths(m) {
        if let Some(v) = found.get(p.as_str()) {
            put(&mut root, p, v.clone());
        }
    }
    root
}

fn put(root: &mut Value, path: &JsonPath, v: Value) {
    let mut cur = root;
    let segs: Vec<&str> = path.segments().collect();
    for (i, s) in segs.iter().enumerate() {
        let Value::Object(map) = cur else { return };
        if i + 1 == segs.len() {
            map.entry((*s).to_string()).or_insert(v);
            return;
        }
        cur = map.entry((*s).to_string()).or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
}

/// The records of a document: the value at `records.at` (the whole document when unset), an
/// array of records or one.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn records_at<'a>(src: &Source, m: &FormatMapping, top: &'a RawValue, what: &str) -> Result<Vec<&'a RawValue>, InputError> {
    let at = match &m.records.at {
        None => top,
        Some(p) => raw_at(src, top, p.segments(), what)?.ok_or_else(|| {
            InputError::new(InputErrorKind::Schema, &src.display, format!("read {what}: no `{}` (the mapping's records.at)", p.as_str()))
                .with_help(format!("the mapping {} says the records are there; is this the right format?", m.file))
        })?,
    };
    if at.get().trim_start().starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(at.get()).map_err(|e| from_json(src, at, what, &e))?;
        Ok(items)
    } else {
        Ok(vec![at])
    }
}

fn from_json(src: &Source, raw: &RawValue, what: &str, e: &serde_json::Error) -> InputError {
    InputError::from_json_at(&src.display, &src.bytes, src.offset_of(raw.get()).unwrap_or(0), what, e)
}

/// The raw value at the path `segs` below `raw`, each level read as a map of raw values.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn raw_at<'a, 's>(
    src: &Source,
    raw: &'a RawValue,
    segs: impl Iterator<Item = &'s str>,
    what: &str,
) -> Result<Option<&'a RawValue>, InputError> {
    let mut cur = raw;
    for seg in segs {
        let t = cur.get().trim_start();
        cur = if t.starts_with('{') {
            let m: HashMap<String, &'a RawValue> = serde_json::from_str(cur.get()).map_err(|e| from_json(src, cur, what, &e))?;
            match m.get(seg) {
                Some(v) => v,
                None => return Ok(None),
            }
        } else if t.starts_with('[') {
            let a: Vec<&'a RawValue> = serde_json::from_str(cur.get()).map_err(|e| from_json(src, cur, what, &e))?;
            match seg.parse::<usize>().ok().and_then(|i| a.get(i)) {
                Some(v) => v,
                None => return Ok(None),
            }
        } else {
            return Ok(None);
        };
    }
    Ok(Some(cur))
}

/// A record's own fields as a value (its steps left out, so they are read once, in place) and
/// its steps with their spans.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn split_record(src: &Source, m: &FormatMapping, raw: &RawValue) -> Result<RawRecord, InputError> {
    let what = format!("{} record", m.name);
    let steps_path = m.records.steps.as_ref().expect("checked at load: a JSON record has a steps path");
    let steps_key = steps_path.segments().next().unwrap_or_default();
    let fields: HashMap<String, &RawValue> = serde_json::from_str(raw.get()).map_err(|e| {
        InputError::new(InputErrorKind::Schema, &src.display, format!("read {what}: a record is not a JSON object ({e})"))
            .with_help(format!("the mapping {} reads records as objects", m.file))
            .at_offset(&src.bytes, src.offset_of(raw.get()).unwrap_or(0), "this record")
    })?;
    // One reading of the record's keys serves both: its own fields as values, and the raw value
    // its steps start in.
    let mut top = serde_json::Map::new();
    let mut steps_raw = None;
    for (k, v) in fields {
        if k == steps_key {
            steps_raw = Some(v);
        } else {
            top.insert(k, serde_json::from_str(v.get()).map_err(|e| from_json(src, v, &what, &e))?);
        }
    }
    let steps_at = match steps_raw {
        Some(r) => raw_at(src, r, steps_path.segments().skip(1), &what)?,
        None => None,
    };
    let steps = match steps_at {
        None => Vec::new(),
        Some(s) if s.get().trim_start().starts_with('[') => {
            let items: Vec<&RawValue> = serde_json::from_str(s.get()).map_err(|e| from_json(src, s, &what, &e))?;
            json_walk::each_at::<Value>(src, &items, &format!("{} step", m.name))?
        }
        Some(s) => {
            return Err(InputError::new(
                InputErrorKind::Schema,
                &src.display,
                format!("read {what}: `{}` is not an array", steps_path.as_str()),
            )
            .with_help(format!("the mapping {} says each record's steps are there", m.file))
            .at_offset(&src.bytes, src.offset_of(s.get()).unwrap_or(0), "not an array of steps"));
        }
    };
    Ok(RawRecord { fields: Value::Object(top), steps })
}

fn str_of(p: &Paths, v: &Value) -> Option<String> {
    p.get(v).map(|x| match x {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// A time written as text, or as seconds (milliseconds past 1e12) since the epoch.
fn time_of(p: &Paths, v: &Value) -> Option<String> {
    match p.get(v)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => {
            let f = n.as_f64()?;
            let secs = if f > 1e12 { f / 1000.0 } else { f };
            #[expect(clippy::cast_possible_truncation, reason = "whole seconds of a plausible time")]
            let ts = jiff::Timestamp::from_second(secs.trunc() as i64).ok()?;
            Some(ts.to_string())
        }
        _ => None,
    }
}

fn flag(p: &Paths, v: &Value) -> Option<bool> {
    match p.get(v)? {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|f| f != 0.0),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "resolved" | "passed" | "pass" | "success" => Some(true),
            "false" | "no" | "0" | "unresolved" | "failed" | "fail" | "failure" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn tokens_of(m: &StepMap, v: &Value) -> Option<Tokens> {
    let prompt = uint(m.prompt_tokens.get(v));
    let completion = uint(m.completion_tokens.get(v));
    (prompt.is_some() || completion.is_some()).then(|| Tokens { prompt, completion, ..Tokens::default() })
}

/// The calls an entry makes: its one `tool`, or each of its `calls`.
fn calls_of(m: &StepMap, v: &Value) -> Vec<ToolCall> {
    let mut out = Vec::new();
    if let Some(name) = str_of(&m.tool, v) {
        let args = m.arguments.get(v).cloned().unwrap_or(Value::Null);
        out.push(tool_call(str_of(&m.call_id, v), name, &args));
    }
    if let Some(c) = &m.calls
        && let Some(Value::Array(list)) = c.at.get(v)
    {
        for item in list {
            let Some(name) = str_of(&c.name, item) else { continue };
            let args = c.arguments.get(item).cloned().unwrap_or(Value::Null);
            out.push(tool_call(str_of(&c.id, item), name, &args));
        }
    }
    out
}

fn exit_code_of(p: &Paths, v: &Value) -> Option<i64> {
    p.get(v).and_then(|x| x.as_i64().or_else(|| x.as_str().and_then(|s| s.trim().parse().ok())))
}

/// Adds an error text to a result's output (unless it is there already) and marks it an error.
fn add_error(r: &mut ToolResult, e: &str) {
    if e.trim().is_empty() {
        return;
    }
    r.is_error = true;
    if !r.output.contains(e.trim()) {
        if !r.output.is_empty() {
            r.output.push('\n');
        }
        r.output.push_str(e);
    }
}

/// Appends `extra` (a command's stderr) to `output` on its own line.
fn append(output: &mut String, extra: Option<String>) {
    if let Some(e) = extra.filter(|e| !e.trim().is_empty()) {
        if !output.is_empty() {
            output.push('\n');
        }
        output.push_str(&e);
    }
}

/// The results an entry lists (trae-agent's `tool_results`), each paired by its call id.
fn listed_results(b: &StepBuilder, rm: &ResultsMap, v: &Value) -> Vec<ToolResult> {
    let Some(Value::Array(list)) = rm.at.get(v) else { return Vec::new() };
    list.iter()
        .map(|item| {
            let id = str_of(&rm.call_id, item);
            let mut r = b.result_for(id.as_deref(), rm.output.get(item).map(content_text).unwrap_or_default());
            r.name = str_of(&rm.name, item);
            r.exit_code = exit_code_of(&rm.exit_code, item);
            if let Some(e) = str_of(&rm.error, item) {
                add_error(&mut r, &e);
            }
            if flag(&rm.is_error, item) == Some(true) || flag(&rm.ok, item) == Some(false) {
                r.is_error = true;
            }
            r
        })
        .collect()
}

/// Turns one entry into steps: a reply (with its calls), a result, or both when the entry is a
/// call with its answer.
fn push_entry(b: &mut StepBuilder, signals: &mut Signals, m: &StepMap, v: &Value, span: crate::model::SourceSpan) {
    let role = match &m.role {
        RoleFrom::Fixed(r) => *r,
        RoleFrom::Field(p) => match str_of(p, v) {
            Some(word) => match role_named(&word) {
                Some(r) => r,
                None => {
                    b.ignore(&format!("role {word}"));
                    return;
                }
            },
            None => {
                b.ignore("entry without a role");
                return;
            }
        },
    };
    let text = m.text.get(v).map(content_text).unwrap_or_default();
    let time = time_of(&m.timestamp, v);
    if let Some(p) = m.prompt.get(v).map(content_text).filter(|p| !p.trim().is_empty()) {
        b.push(Step::new(Role::User, p), Some(span), time.clone());
    }
    let calls = calls_of(m, v);
    let result = m.result.get(v).map(content_text).or_else(|| (role == Role::Tool && calls.is_empty()).then(|| text.clone()));
    let finish_result = |r: &mut ToolResult| {
        append(&mut r.output, str_of(&m.stderr, v));
        r.exit_code = exit_code_of(&m.exit_code, v);
        if let Some(e) = str_of(&m.error, v) {
            add_error(r, &e);
        }
        if let Some(e) = flag(&m.is_error, v) {
            r.is_error |= e;
        }
    };
    let mut step = Step::new(if role == Role::Tool && !calls.is_empty() { Role::Assistant } else { role }, String::new());
    step.tokens = tokens_of(m, v);
    step.cost_usd = num(m.cost.get(v));
    if let Some(r) = str_of(&m.reasoning, v).filter(|r| !r.trim().is_empty()) {
        step.reasoning = Some(crate::model::Reasoning { text: Some(r), tokens: None });
    }
    let here = b.len();
    match (calls.is_empty(), result) {
        (false, Some(output)) => {
            // A call logged with its answer: the call, then its result, paired by place.
            let name = calls[0].name.clone();
            let id = calls[0].id.clone();
            step.text = if role == Role::Tool { String::new() } else { text };
            step.tool_calls = calls;
            let ix = b.push(step, Some(span), time.clone());
            let mut r = ToolResult::new(output);
            r.call = Some(CallRef { step: crate::ingest::adapters::shared::build::to_u32(ix), call: 0 });
            r.call_id = id;
            r.name = Some(name);
            finish_result(&mut r);
            let mut s = Step::new(Role::Tool, String::new());
            s.tool_results.push(r);
            b.push(s, Some(span), time);
        }
        (true, Some(output)) => {
            let id = str_of(&m.result_call_id, v).or_else(|| str_of(&m.call_id, v));
            let mut r = b.result_for(id.as_deref(), output);
            r.name = str_of(&m.result_tool, v);
            finish_result(&mut r);
            step.role = Role::Tool;
            step.tool_results.push(r);
            b.push(step, Some(span), time);
        }
        (_, None) => {
            step.text = text;
            step.tool_calls = calls;
            b.push(step, Some(span), time.clone());
            // Results the entry lists beside its calls answer them, in a step of their own.
            if let Some(rm) = &m.results {
                let results = listed_results(b, rm, v);
                if !results.is_empty() {
                    let mut s = Step::new(Role::Tool, String::new());
                    s.tool_results = results;
                    b.push(s, Some(span), time);
                }
            }
        }
    }
    for p in &m.errors {
        if let Some(e) = p.get(v).map(content_text).filter(|e| !e.trim().is_empty()) {
            signals.error(p.as_str(), e).at_step(here).with_span(Some(span));
        }
    }
}

fn build(src: &Source, m: &FormatMapping, name: &str, r: RawRecord) -> Trajectory {
    let rm = &m.records;
    let f = &r.fields;
    let task = str_of(&rm.task, f);
    let harness = str_of(&rm.harness, f).unwrap_or_else(|| m.harness.clone());
    let from_path = match rm.task_from {
        TaskFrom::FileStem => src.path.file_stem(),
        TaskFrom::ParentDir => src.path.parent().and_then(std::path::Path::file_name),
    }
    .map(|s| s.to_string_lossy().into_owned())
    .unwrap_or_default();
    let mut t =
        Trajectory::new(task.clone().unwrap_or_else(|| from_path.clone()), harness, name, VERSION, vec![src.provenance("transcript")]);
    if task.is_none() {
        let by = match rm.task_from {
            TaskFrom::FileStem => "the file's name",
            TaskFrom::ParentDir => "its directory's name",
        };
        t.notes.push(format!("task id `{from_path}` from {by} (the record has no records.task)"));
    }
    t.notes.push(format!("read by the format mapping {}", m.file));
    if !m.versions.is_empty() {
        t.provenance.format_version = Some(m.versions.clone());
    }
    t.session_id = str_of(&rm.session, f);
    t.model = str_of(&rm.model, f);
    t.trial = uint(rm.trial.get(f)).and_then(|n| u32::try_from(n).ok()).unwrap_or(0);
    t.submission = str_of(&rm.submission, f);
    t.started_at = time_of(&rm.started_at, f);
    t.ended_at = time_of(&rm.ended_at, f);
    t.usage.cost_usd = num(rm.cost.get(f));
    t.signals.limits.steps = num(rm.step_limit.get(f)).filter(|n| *n > 0.0);
    t.signals.limits.cost_usd = num(rm.cost_limit.get(f)).filter(|n| *n > 0.0);
    t.usage.prompt_tokens = uint(rm.prompt_tokens.get(f));
    t.usage.completion_tokens = uint(rm.completion_tokens.get(f));
    if let Some(Value::Array(list)) = rm.tools.get(f) {
        let tools: Vec<DeclaredTool> = list
            .iter()
            .filter_map(|x| match x {
                Value::String(s) => Some(DeclaredTool { name: s.clone(), description: None }),
                other => declared_tool(other),
            })
            .collect();
        if !tools.is_empty() {
            t.declared_tools = Some(tools);
        }
    }
    for p in &rm.statuses {
        if let Some(v) = p.get(f).filter(|v| !v.is_null()) {
            t.signals.status(p.as_str(), content_text(v));
        }
    }
    for p in &rm.errors {
        if let Some(e) = p.get(f).map(content_text).filter(|e| !e.trim().is_empty()) {
            t.signals.error(p.as_str(), e);
        }
    }
    let display = src.display.clone();
    if let Some(ok) = flag(&rm.resolved, f)
        && let Some((_, p)) = rm.resolved.find(f)
    {
        t.outcome = Outcome::new(if ok { OutcomeStatus::Passed } else { OutcomeStatus::Failed }, display.clone(), p.as_str());
    }
    if let Some((v, p)) = rm.reward.find(f)
        && let Some(reward) = num(Some(v))
    {
        if t.outcome.status == OutcomeStatus::Unknown {
            t.outcome = Outcome::from_reward(reward, display, p.as_str());
        }
        t.outcome.reward = Some(reward);
    }
    let mut b = StepBuilder::new();
    if let Some(v) = rm.prompt.get(f) {
        b.push(Step::new(Role::User, content_text(v)), None, None);
    }
    for (range, v) in &r.steps {
        let span = src.span(0, range.start, range.len());
        match m.step_map(v) {
            Ok(sm) => push_entry(&mut b, &mut t.signals, sm, v, span),
            Err(kind) => b.ignore(&kind),
        }
    }
    b.finish(&mut t);
    t
}
