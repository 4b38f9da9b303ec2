//! OpenHands LLM-completion logs (`log_completions=True`): one JSON file per model call, under
//! `llm_completions/<instance>/<model>-<unix time>.json`, holding the prompt as sent (`messages`,
//! and in non-native function calling `fncall_messages`, the same conversation with its calls as
//! tool calls), the reply (`response`, `fncall_response`), `kwargs`, `timestamp` and `cost`.
//! Multi-SWE-bench publishes exactly these, one per instance, as its trajectories.
//!
//! Every call repeats the whole conversation, so the run is the last call's prompt plus its
//! reply: the directory's latest file is read and the earlier ones are its companions. The
//! latest reply's action was never answered, and nothing records how the run ended, its total
//! usage or its cost: the last call's action and its text are all there is, and the profile
//! (`rules/harnesses/openhands.toml`) reads a `finish` call as the agent's own end.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::ingest::adapters::chat::openai as chat_openai;
use crate::ingest::adapters::shared::build::StepBuilder;
use crate::ingest::adapters::shared::xml_call;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, FileSet, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Role, ToolCall, Trajectory};

const NAME: &str = "openhands-completions";
const HARNESS: &str = "openhands";

#[derive(Deserialize)]
struct RawCompletion {
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    fncall_messages: Option<Vec<Value>>,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    fncall_response: Option<Value>,
    #[serde(default)]
    timestamp: Option<f64>,
}

pub struct OpenHandsCompletions;

/// The unix time a completion file is named for (`<model>-<time>.json`), which orders a
/// directory's calls.
fn call_time(path: &Path) -> Option<f64> {
    let stem = path.file_stem()?.to_str()?;
    stem.rsplit_once('-')?.1.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// The model a completion file is named for.
fn model_of(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let (model, time) = stem.rsplit_once('-')?;
    time.parse::<f64>().ok().filter(|x| x.is_finite()).map(|_| model.to_string()).filter(|m| !m.is_empty())
}

/// The directory's completion files, latest last (by the time in the name, then the name).
fn calls_in(dir: &Path, files: &FileSet) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = files.iter().filter(|(p, a)| *a == &Some(NAME) && p.parent() == Some(dir)).map(|(p, _)| p.clone()).collect();
    // Finite times only (`call_time`), so this is a total order whatever the names say.
    v.sort_by(|a, b| {
        call_time(a).unwrap_or(f64::NEG_INFINITY).total_cmp(&call_time(b).unwrap_or(f64::NEG_INFINITY)).then_with(|| a.cmp(b))
    });
    v
}

impl Adapter for OpenHandsCompletions {
    fn name(&self) -> &'static str {
        NAME
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "OpenHands LLM-completion log (llm_completions/<instance>/<model>-<time>.json: one call's prompt and reply; the latest holds the run)"
    }

    fn versions(&self) -> &'static str {
        "native and non-native (fncall_) calls"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = p.json.as_ref().filter(|j| !j.top_is_array) else { return Err("not a JSON object".into()) };
        if !(j.has("messages") && j.has("response")) {
            return Err("no `messages` with a `response`".into());
        }
        if j.has("fncall_messages") {
            return marker("`messages`, `response` and `fncall_messages` (an OpenHands completion log)");
        }
        if j.has("kwargs") && j.has("timestamp") && j.has("cost") {
            return marker("`messages`, `response`, `kwargs`, `timestamp` and `cost` (an OpenHands completion log)");
        }
        Err("a chat request and response, without the fields OpenHands logs with them".into())
    }

    /// The directory's earlier calls belong to its latest one, which repeats them.
    fn companions(&self, primary: &Path, files: &FileSet) -> Vec<PathBuf> {
        let Some(dir) = primary.parent() else { return Vec::new() };
        let calls = calls_in(dir, files);
        if calls.last().map(PathBuf::as_path) != Some(primary) {
            return Vec::new();
        }
        calls[..calls.len() - 1].to_vec()
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let c: RawCompletion = src.json("OpenHands completion log")?;
        let path = &unit.primary.path;
        let task = path.parent().and_then(Path::file_name).map_or_else(|| "unknown".to_string(), |d| d.to_string_lossy().into_owned());
        let mut t = Trajectory::new(task.clone(), HARNESS, NAME, 1, vec![src.provenance("transcript")]);
        t.model = model_of(path);
        t.session_id = Some(task);
        let native = c.fncall_messages.is_none();
        t.provenance.format_version =
            Some(if native { "openhands llm_completions (native calls)" } else { "openhands llm_completions (fncall_)" }.into());
        let messages = c.fncall_messages.unwrap_or(c.messages);
        let history = chat_openai::history(&serde_json::json!({ "messages": messages }));
        let mut b = StepBuilder::new();
        for step in history.steps {
            b.push(step, None, None);
        }
        let reply = c.fncall_response.as_ref().or(c.response.as_ref()).map(chat_openai::reply);
        if let Some(mut step) = reply.and_then(|r| r.step) {
            // A reply converted back from text calls can keep the call only in its text.
            if step.tool_calls.is_empty()
                && let Some((name, args)) = xml_call::first_call(&step.text)
            {
                step.tool_calls.push(ToolCall { id: None, name, arguments: Value::Object(args), raw_arguments: None });
            }
            step.tokens = None;
            b.push(step, None, None);
        }
        b.note("an OpenHands completion log holds the run up to its last model call: that call's action was never answered, and the log records no end, total usage or cost");
        if let Some(ts) = c.timestamp {
            t.notes.push(format!("last model call at unix time {ts}"));
        }
        b.finish(&mut t);
        t.signals.last_result_unrecorded = true;
        if t.steps.iter().all(|s| s.role != Role::Assistant) {
            t.notes.push("the log holds no reply of the agent".into());
        }
        out.emit(t);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directorys_latest_call_is_the_run_and_claims_the_others() {
        let dir = Path::new("llm_completions/django__django-1");
        let f = |name: &str| dir.join(name);
        let mut files = FileSet::new();
        for n in ["m-1743405792.5.json", "m-1743405800.25.json", "m-1743405799.json"] {
            files.insert(f(n), Some(NAME));
        }
        files.insert(f("notes.json"), None);
        let a = OpenHandsCompletions;
        assert_eq!(a.companions(&f("m-1743405800.25.json"), &files), vec![f("m-1743405792.5.json"), f("m-1743405799.json")]);
        assert!(a.companions(&f("m-1743405799.json"), &files).is_empty(), "an earlier call claims nothing");
        assert_eq!(model_of(&f("Claude-3.5-Sonnet(Oct)-1743405792.1166046.json")).as_deref(), Some("Claude-3.5-Sonnet(Oct)"));
        // Names a hostile run could choose: no time, not a number, not finite.
        let mut odd = FileSet::new();
        for n in ["a-2.json", "z-1.json", "m-NaN.json", "q-inf.json", "plain.json"] {
            odd.insert(f(n), Some(NAME));
        }
        assert_eq!(calls_in(dir, &odd).last(), Some(&f("a-2.json")), "the latest finite time, the rest in a total order");
    }
}
