//! mini-swe-agent trajectories (`<instance>.traj.json`), both generations of the format.
//!
//! v1 (`trajectory_format: mini-swe-agent-1`, mini-swe-agent 1.x) keeps hand-formatted chat
//! messages with text actions (`v1`); v2 (`mini-swe-agent-1.1`, mini-swe-agent 2.x) keeps the
//! model's native messages with an `extra` dict (`v2`). `info.exit_status` (or the `exit`
//! message's) says how the run ended, `info.exception_str` / `info.traceback` what crashed it,
//! and `info.model_stats` and `info.config` what was consumed and the limits it ran under: all
//! recorded as signals, for the profile (`rules/harnesses/mini-swe-agent.toml`) to interpret.

mod raw;
mod steps;
mod v1;
mod v2;

/// mini-swe-agent's submit protocol, which its runs inside Terminal-Bench captures follow too.
pub(crate) use steps::submits;

use std::ops::Range;
use std::path::Path;

use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::Trajectory;

use self::raw::{RawDoc, RawExtra, RawInfo, RawMsg, message_time, sum_tokens};
use self::steps::Builder;
use self::v1::Templates;
use super::common::batch_status;
use crate::ingest::adapters::shared::json_walk::{GiveUp, JsonWalk, document, each_at};

/// mini-swe-agent `.traj.json` files.
pub struct MiniSweAgent;

impl Adapter for MiniSweAgent {
    fn name(&self) -> &'static str {
        "mini-swe-agent"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "mini-swe-agent trajectory (*.traj.json, v1 text actions and v2 tool calls)"
    }

    fn versions(&self) -> &'static str {
        "1.x text actions, 2.x tool calls"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if let Some(f) = j.str("trajectory_format") {
            return if f.starts_with("mini-swe-agent") {
                marker(format!("trajectory_format {f}"))
            } else {
                Err(format!("trajectory_format {f} is not mini-swe-agent"))
            };
        }
        // `trajectory_format` is written last, beyond the probe in large files; `info` comes first.
        if let Some(v) = j.str("info.mini_version") {
            return marker(format!("info.mini_version {v}"));
        }
        let swe_agent = j.has("trajectory") || j.has("history");
        if !swe_agent && j.has("info.exit_status") && j.has("info.model_stats") && (j.has("messages") || p.name.ends_with(".traj.json")) {
            return structure("info.exit_status, info.model_stats and messages");
        }
        Err("no trajectory_format, info.mini_version or info.exit_status + messages".into())
    }

    fn parse(&self, unit: &Unit, ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let doc = read_doc(&src)?;
        let msgs = &doc.messages;

        let task = task_id(&unit.primary.path, doc.instance_id.as_deref());
        let mut t = Trajectory::new(task.clone(), "mini-swe-agent", self.name(), self.version(), vec![src.provenance("transcript")]);
        let info = &doc.info;
        t.harness_version = info.mini_version.clone();
        t.provenance.format_version = doc.trajectory_format.clone();
        let config = info.config.as_ref();
        let agent_cfg = config.and_then(|c| c.agent.clone()).unwrap_or_default();
        let model_cfg = config.and_then(|c| c.model.as_ref());
        t.model = model_cfg.and_then(|m| m.model_name.clone());

        let v2 = doc.trajectory_format.as_deref().is_some_and(|f| f != "mini-swe-agent-1")
            || msgs.iter().any(|(_, m)| {
                m.role.as_deref() == Some("exit")
                    || m.role.as_deref() == Some("tool")
                    || m.extra.as_ref().is_some_and(|e| e.actions.is_some() || e.interrupt_type.is_some())
            });
        let templates = Templates::new(&agent_cfg, model_cfg, v2, &mut t.notes);
        let mut b = Builder::new(&src, &templates);
        for (at, m) in msgs {
            if v2 {
                b.v2_message(at, m);
            } else {
                b.v1_message(at, m);
            }
        }
        let submitted_output = b.submitted.take();

        // Usage: the harness's own counts, tokens summed over the replies that report them.
        let stats = info.model_stats.as_ref();
        t.usage.api_calls = stats.and_then(|s| s.api_calls);
        t.usage.cost_usd = stats.and_then(|s| s.instance_cost);
        let times: Vec<jiff::Timestamp> = msgs.iter().filter_map(|(_, m)| message_time(m)).collect();
        if let (Some(first), Some(last)) = (times.iter().min(), times.iter().max()) {
            t.started_at = Some(first.to_string());
            t.ended_at = Some(last.to_string());
            t.usage.wall_seconds = Some(last.duration_since(*first).as_secs_f64());
        }
        b.steps.finish(&mut t);
        sum_tokens(&mut t);

        // The limits the run was configured with and what it used of them.
        #[expect(clippy::cast_precision_loss, reason = "a count of model calls")]
        let calls = t.usage.api_calls.map(|c| c as f64);
        t.signals.limits.steps = agent_cfg.step_limit;
        t.signals.limits.cost_usd = agent_cfg.cost_limit;
        t.signals.limits.wall_seconds = agent_cfg.wall_time_limit_seconds;
        t.signals.limits.format_errors = agent_cfg.max_consecutive_format_errors;
        t.signals.consumed.steps = calls;
        t.signals.consumed.cost_usd = t.usage.cost_usd;
        t.signals.consumed.wall_seconds = t.usage.wall_seconds;

        let last_extra = msgs.last().and_then(|(_, m)| m.extra.as_ref());
        end_of_run(&mut t, info, last_extra, submitted_output, ctx, &unit.primary.path);
        out.emit(t);
        Ok(())
    }
}

/// A trajectory file with its messages typed, each with the bytes it spans.
struct Doc<'a> {
    info: RawInfo,
    messages: Vec<(Range<usize>, RawMsg<'a>)>,
    trajectory_format: Option<String>,
    instance_id: Option<String>,
}

/// Reads the document in one pass over its bytes (the messages are most of them), or, when
/// that gives up, the old way: raw slices, then each message again, which is also what words
/// the diagnostic of a file that does not read.
fn read_doc(src: &Source) -> Result<Doc<'_>, InputError> {
    match one_pass(src.text()?) {
        Ok(doc) => Ok(doc),
        Err(GiveUp) => two_pass(src),
    }
}

/// The document as [`RawDoc`] reads it, then each message again.
fn two_pass(src: &Source) -> Result<Doc<'_>, InputError> {
    let doc: RawDoc<'_> = document(src, "mini-swe-agent trajectory")?;
    let messages = each_at(src, &doc.messages, "mini-swe-agent message")?;
    Ok(Doc { info: doc.info, messages, trajectory_format: doc.trajectory_format, instance_id: doc.instance_id })
}

/// The fields [`RawDoc`] reads, with the messages typed where they lie.
fn one_pass(text: &str) -> Result<Doc<'_>, GiveUp> {
    let mut w = JsonWalk::new(text);
    let mut doc = Doc { info: RawInfo::default(), messages: Vec::new(), trajectory_format: None, instance_id: None };
    let mut has_messages = false;
    w.object(|w, key| {
        match key {
            "info" => doc.info = w.value()?,
            "messages" => {
                has_messages = true;
                doc.messages = w.items()?;
            }
            "trajectory_format" => doc.trajectory_format = w.value()?,
            "instance_id" => doc.instance_id = w.value()?,
            _ => w.skip()?,
        }
        Ok(())
    })?;
    w.end()?;
    if has_messages { Ok(doc) } else { Err(GiveUp) }
}

/// How the run ended, as the file (or its batch) wrote it: the exit status, the exception that
/// crashed it, and the submission.
fn end_of_run(t: &mut Trajectory, info: &RawInfo, last: Option<&RawExtra<'_>>, submitted: Option<String>, ctx: &Ctx<'_>, path: &Path) {
    // The file's own status, then the last message's (v2), then the batch's exit_statuses_*.yaml.
    let own =
        info.exit_status.as_deref().filter(|s| !s.is_empty()).map(|s| ("info.exit_status", s)).or_else(|| {
            last.and_then(|e| e.exit_status.as_deref()).filter(|s| !s.is_empty()).map(|s| ("messages[-1].extra.exit_status", s))
        });
    // Saved mid-run (empty status), the file's `submission` says nothing yet.
    let file_submission = own.and_then(|_| info.submission.clone().or_else(|| last.and_then(|e| e.submission.clone())));
    let task = t.task_id.clone();
    let has_status = match own {
        Some((field, s)) => {
            t.signals.status(field, s);
            true
        }
        None => batch_status(t, ctx, &task, path),
    };

    // An uncaught exception: its message, or the last line of its traceback.
    let error = info
        .exception_str
        .as_deref()
        .map(|e| ("info.exception_str", e.to_string()))
        .or_else(|| last.and_then(|e| e.exception_str.as_deref()).map(|e| ("messages[-1].extra.exception_str", e.to_string())))
        .or_else(|| info.traceback.as_deref().and_then(last_line).map(|l| ("info.traceback", l)))
        .filter(|(_, e)| !e.trim().is_empty());
    let crashed = error.is_some() || info.traceback.is_some();
    if let Some((field, e)) = error {
        t.signals.error(field, e);
    }

    // `info.submission` is the harness's result: the patch, or "" when a limit stopped the run.
    // After an exception v1 keeps the exception's message there, which is not a patch.
    t.submission = match file_submission {
        Some(s) if crashed => {
            if !s.is_empty() {
                t.notes.push("info.submission holds the exception message, not a patch".into());
            }
            Some(String::new())
        }
        Some(s) => Some(s),
        None => submitted.clone(),
    };
    if !has_status {
        t.notes.push(match submitted {
            Some(_) => "the trajectory has no exit status; its messages end with the submission".into(),
            None => "the trajectory has no exit status (the run was probably killed while running)".into(),
        });
    }
}

/// The file's instance id: `<id>.traj.json` names it (the batch runner writes
/// `<id>/<id>.traj.json`); otherwise the `instance_id` field or the directory.
fn task_id(path: &Path, instance_id: Option<&str>) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(stem) = name.strip_suffix(".traj.json").filter(|s| !s.is_empty()) {
        return stem.to_string();
    }
    if let Some(id) = instance_id.filter(|s| !s.is_empty()) {
        return id.to_string();
    }
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    if !stem.is_empty() {
        return stem.to_string();
    }
    path.parent().and_then(Path::file_name).map_or_else(|| "unknown".into(), |n| n.to_string_lossy().into_owned())
}

fn last_line(s: &str) -> Option<String> {
    s.lines().rev().map(str::trim).find(|l| !l.is_empty()).map(ToString::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(name: &str, text: &str, size: u64) -> Probe {
        Probe::from_prefix(Path::new(name), size, text.as_bytes().to_vec())
    }

    #[test]
    fn sniffs_the_marker_then_info_then_structure() {
        let v2 = probe("x.traj.json", r#"{"info": {}, "messages": [], "trajectory_format": "mini-swe-agent-1.1"}"#, 70);
        assert_eq!(MiniSweAgent.sniff(&v2).unwrap().strength, crate::ingest::format::Strength::Marker);
        let cut =
            probe("a.traj.json", r#"{"info": {"model_stats": {"api_calls": 3}, "config": {}, "mini_version": "2.0.0", "exit_s"#, 1 << 20);
        assert!(MiniSweAgent.sniff(&cut).unwrap().reason.contains("mini_version"));
        let bare =
            probe("a.traj.json", r#"{"info": {"exit_status": "Submitted", "model_stats": {}}, "messages": [{"role": "system"#, 1 << 20);
        assert_eq!(MiniSweAgent.sniff(&bare).unwrap().strength, crate::ingest::format::Strength::Structure);
        // SWE-agent's info has the same keys; its trajectory/history say it is not this format.
        let swe = probe("a.traj", r#"{"trajectory": [], "history": [], "info": {"exit_status": "submitted", "model_stats": {}}}"#, 90);
        assert!(MiniSweAgent.sniff(&swe).is_err());
        let other = probe("x.json", r#"{"trajectory_format": "something-else"}"#, 38);
        assert!(MiniSweAgent.sniff(&other).is_err());
    }

    #[test]
    fn one_pass_reads_every_sample_as_the_two_pass_reading_does() {
        let files = crate::ingest::adapters::shared::json_walk::sample_files(&["samples/mini-swe-agent"], ".traj.json");
        assert!(files.len() >= 10, "the samples hold mini-swe-agent trajectories");
        let sketch = |d: &Doc<'_>| {
            let messages: Vec<String> = d
                .messages
                .iter()
                .map(|(at, m)| {
                    let response = raw::response_of(m.extra.as_ref()).map(|r| {
                        (r.usage.to_string(), r.output.to_string(), r.choices.iter().map(|c| c.message().to_string()).collect::<Vec<_>>())
                    });
                    format!("{at:?} {:?} {} {response:?}", m.role, m.content)
                })
                .collect();
            (messages, d.info.exit_status.clone(), d.info.submission.clone(), d.trajectory_format.clone(), d.instance_id.clone())
        };
        for f in files {
            let src = Source::read(&f, &f.to_string_lossy()).expect("a sample reads");
            let one = one_pass(src.text().expect("UTF-8")).expect("a well-formed sample takes the one-pass path");
            let two = two_pass(&src).expect("a sample reads the old way too");
            assert_eq!(sketch(&one), sketch(&two), "{}", f.display());
        }
    }

    #[test]
    fn task_ids_come_from_the_file_name() {
        assert_eq!(task_id(Path::new("run/a__b-1/a__b-1.traj.json"), Some("other")), "a__b-1");
        assert_eq!(task_id(Path::new("run/last_run.json"), Some("a__b-2")), "a__b-2");
    }
}
