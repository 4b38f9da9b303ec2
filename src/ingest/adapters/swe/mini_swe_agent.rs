//! mini-swe-agent trajectories (`<instance>.traj.json`), both generations of the format.
//!
//! v1 (`trajectory_format: mini-swe-agent-1`, mini-swe-agent 1.x) keeps hand-formatted chat
//! messages: the action is the one fenced `bash` block of the assistant text, the next user
//! message is its observation (`<returncode>` + output), a timeout notice, or the harness's
//! format complaint. v2 (`mini-swe-agent-1.1`, mini-swe-agent 2.x) keeps the model's native
//! messages with an `extra` dict: tool calls answered by `tool` messages carrying
//! `extra.returncode`, format errors as user messages with `extra.interrupt_type: FormatError`
//! (the failed reply itself is kept only in `extra.response`, when at all), and a final `exit`
//! message with the exit status and submission. `info.exit_status` says how the run ended;
//! `info.model_stats` and `info.config` give what was consumed and the limits it ran under.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::common::{content_text, tool_call, uint};
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{
    Budget, CallRef, Enforcer, Reasoning, Role, Step, Termination, TerminationKind, Tokens, ToolCall, ToolResult, Trajectory,
};

/// The first line of a command's output that makes the harness end the run with a submission;
/// v1 also accepted the older marker.
const SUBMIT_MARKERS: &[&str] = &["COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT"];

/// v1's default `action_regex` (Python `re.DOTALL`).
const V1_ACTION_REGEX: &str = r"(?s)```bash\s*\n(.*?)\n```";

#[derive(Deserialize)]
struct RawDoc<'a> {
    #[serde(default)]
    info: RawInfo,
    #[serde(borrow)]
    messages: Vec<&'a RawValue>,
    #[serde(default)]
    trajectory_format: Option<String>,
    #[serde(default)]
    instance_id: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawInfo {
    exit_status: Option<String>,
    submission: Option<String>,
    model_stats: Option<RawStats>,
    mini_version: Option<String>,
    config: Option<RawConfig>,
    exception_str: Option<String>,
    traceback: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawStats {
    instance_cost: Option<f64>,
    api_calls: Option<u64>,
}

#[derive(Deserialize, Default)]
struct RawConfig {
    agent: Option<RawAgentConfig>,
    model: Option<RawModelConfig>,
}

/// Limits and templates; v2 moved the templates to the model config.
#[derive(Deserialize, Default, Clone)]
struct RawAgentConfig {
    step_limit: Option<f64>,
    cost_limit: Option<f64>,
    wall_time_limit_seconds: Option<f64>,
    max_consecutive_format_errors: Option<f64>,
    format_error_template: Option<String>,
    timeout_template: Option<String>,
    action_regex: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawModelConfig {
    model_name: Option<String>,
    format_error_template: Option<String>,
    action_regex: Option<String>,
}

/// One message; chat-completions, Responses-API items and hand-formatted v1 messages share it.
#[derive(Deserialize)]
struct RawMsg<'a> {
    role: Option<String>,
    #[serde(default)]
    content: Value,
    #[serde(rename = "type")]
    kind: Option<String>,
    tool_calls: Option<Vec<RawToolCall>>,
    tool_call_id: Option<String>,
    call_id: Option<String>,
    /// Responses API: the output items of an assistant response, or a function call's output.
    #[serde(default)]
    output: Value,
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Value,
    timestamp: Option<f64>,
    #[serde(borrow)]
    extra: Option<RawExtra<'a>>,
}

#[derive(Deserialize)]
struct RawToolCall {
    id: Option<String>,
    function: Option<RawFunction>,
}

#[derive(Deserialize)]
struct RawFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize, Default)]
struct RawExtra<'a> {
    actions: Option<Vec<Value>>,
    /// The raw API response; its shape depends on the provider (or is a `repr` string), so it
    /// is read leniently and only when needed.
    #[serde(borrow)]
    response: Option<&'a RawValue>,
    cost: Option<f64>,
    timestamp: Option<f64>,
    returncode: Option<i64>,
    /// Only whether it is there matters (it repeats the tool output), so it is skipped, not
    /// copied.
    raw_output: Option<serde::de::IgnoredAny>,
    exception_info: Option<String>,
    exception_type: Option<String>,
    interrupt_type: Option<String>,
    model_response: Option<String>,
    exit_status: Option<String>,
    submission: Option<String>,
    exception_str: Option<String>,
}

/// What `info` says about limits and consumption, for deciding which budget fired.
#[derive(Debug, Clone, Default)]
pub struct RunLimits {
    pub step_limit: Option<f64>,
    pub cost_limit: Option<f64>,
    pub wall_time_limit: Option<f64>,
    pub max_format_errors: Option<f64>,
    pub api_calls: Option<u64>,
    pub cost: Option<f64>,
    pub wall_seconds: Option<f64>,
    /// Format errors in a row at the end of the run.
    pub trailing_format_errors: u64,
    /// The exception message or traceback the harness kept, for telling environment failures
    /// from harness bugs.
    pub detail: Option<String>,
}

/// Maps a mini-swe-agent exit status (`info.exit_status`, or an exception class name) to how
/// the run ended.
#[must_use]
pub fn termination_for_status(status: &str, lim: &RunLimits) -> Termination {
    let mut t = match status {
        "Submitted" => Termination::of(TerminationKind::AgentFinished),
        "LimitsExceeded" => limits_exceeded(lim),
        "TimeExceeded" => {
            let mut t = Termination::budget(Budget::WallTime, Enforcer::Harness);
            t.limit = lim.wall_time_limit.filter(|l| *l > 0.0);
            t.consumed = lim.wall_seconds;
            t
        }
        "RepeatedFormatError" => {
            let mut t = Termination::budget(Budget::FormatErrors, Enforcer::Harness);
            t.limit = lim.max_format_errors.filter(|l| *l > 0.0);
            #[expect(clippy::cast_precision_loss, reason = "a count of replies")]
            let n = lim.trailing_format_errors as f64;
            t.consumed = (lim.trailing_format_errors > 0).then_some(n);
            t
        }
        "ContextWindowExceededError" => Termination::budget(Budget::Context, Enforcer::Provider),
        other if is_infrastructure(other, lim.detail.as_deref().unwrap_or("")) => Termination::of(TerminationKind::Infrastructure),
        _ => Termination::of(TerminationKind::HarnessError),
    };
    t.raw = Some(status.to_string());
    if matches!(t.kind, TerminationKind::Infrastructure | TerminationKind::HarnessError) || status == "ContextWindowExceededError" {
        t.detail = lim.detail.as_ref().map(|d| d.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").chars().take(300).collect());
    }
    t
}

/// `LimitsExceeded` covers both the step and the cost limit; the harness checks
/// `0 < step_limit <= api_calls or 0 < cost_limit <= cost`, so the one that holds is the one
/// that fired.
fn limits_exceeded(lim: &RunLimits) -> Termination {
    let step_limit = lim.step_limit.filter(|l| *l > 0.0);
    let cost_limit = lim.cost_limit.filter(|l| *l > 0.0);
    #[expect(clippy::cast_precision_loss, reason = "a count of model calls")]
    let calls = lim.api_calls.map(|c| c as f64);
    let steps_hit = matches!((step_limit, calls), (Some(l), Some(c)) if c >= l);
    let cost_hit = matches!((cost_limit, lim.cost), (Some(l), Some(c)) if c >= l);
    let steps = || {
        let mut t = Termination::budget(Budget::Steps, Enforcer::Harness);
        t.limit = step_limit;
        t.consumed = calls;
        t
    };
    let cost = || {
        let mut t = Termination::budget(Budget::Cost, Enforcer::Harness);
        t.limit = cost_limit;
        t.consumed = lim.cost;
        t
    };
    match (steps_hit, cost_hit) {
        (true, false) => steps(),
        (false, true) => cost(),
        (true, true) => {
            let mut t = steps();
            t.detail = Some("both the step limit and the cost limit were reached; the harness checks steps first".into());
            t
        }
        (false, false) => match (step_limit, cost_limit) {
            (Some(_), None) => steps(),
            (None, Some(_)) => cost(),
            _ => {
                let mut t = Termination::budget(Budget::Other, Enforcer::Harness);
                t.detail = Some(format!(
                    "neither limit reached by info.model_stats: api_calls {} of step_limit {}, instance_cost {} of cost_limit {}",
                    show(calls),
                    show(step_limit),
                    show(lim.cost),
                    show(cost_limit)
                ));
                t
            }
        },
    }
}

fn show(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".into(), |x| x.to_string())
}

/// API and environment failures: outside the agent. `RuntimeError` is raised both by the
/// environments (a container that failed) and by the harness itself (cost tracking), so it
/// counts as infrastructure only when its message points at the environment.
fn is_infrastructure(name: &str, detail: &str) -> bool {
    const NAMES: &[&str] = &[
        "RetryError",
        "APIError",
        "APIConnectionError",
        "APITimeoutError",
        "Timeout",
        "TimeoutError",
        "TimeoutExpired",
        "RateLimitError",
        "ServiceUnavailableError",
        "InternalServerError",
        "BadGatewayError",
        "AuthenticationError",
        "PermissionDeniedError",
        "NotFoundError",
        "BadRequestError",
        "ConnectionError",
        "CalledProcessError",
        "DockerError",
        "DockerException",
    ];
    if NAMES.contains(&name) {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    if ["docker", "container", "sandbox", "modal", "swerex", "singularity", "connection"].iter().any(|k| lower.contains(k)) {
        return true;
    }
    if name == "RuntimeError" {
        static ENV: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let re = ENV.get_or_init(|| {
            regex::Regex::new(r"(?i)(docker|podman|container|environment|sandbox|singularity|swerex|modal|deployment|image)")
                .expect("static regex")
        });
        return re.is_match(detail);
    }
    false
}

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
        let text = src.text()?;
        let doc: RawDoc<'_> =
            serde_json::from_str(text).map_err(|e| InputError::from_json(&src.display, &src.bytes, "mini-swe-agent trajectory", &e))?;
        let mut msgs = Vec::with_capacity(doc.messages.len());
        for raw in &doc.messages {
            let m: RawMsg<'_> = serde_json::from_str(raw.get()).map_err(|e| {
                let base = src.offset_of(raw.get()).unwrap_or(0);
                InputError::from_json_at(&src.display, &src.bytes, base, "mini-swe-agent message", &e)
            })?;
            msgs.push((*raw, m));
        }

        let task = task_id(&unit.primary.path, doc.instance_id.as_deref());
        let mut t =
            crate::model::Trajectory::new(task.clone(), "mini-swe-agent", self.name(), self.version(), vec![src.provenance("transcript")]);
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
        let mut b = Builder {
            src: &src,
            t: &mut t,
            tpl: &templates,
            pending: None,
            unparsed: None,
            seen_assistant: false,
            submitted: None,
            noted_lost_replies: false,
        };
        for (raw, m) in &msgs {
            if v2 {
                b.v2_message(raw, m);
            } else {
                b.v1_message(raw, m);
            }
        }
        let submitted_output = b.submitted.take();

        // Usage: the harness's own counts, tokens summed over the replies that report them.
        let stats = info.model_stats.as_ref();
        t.usage.api_calls = stats.and_then(|s| s.api_calls);
        t.usage.cost_usd = stats.and_then(|s| s.instance_cost);
        sum_tokens(&mut t);
        let times: Vec<jiff::Timestamp> = msgs.iter().filter_map(|(_, m)| message_time(m)).collect();
        if let (Some(first), Some(last)) = (times.iter().min(), times.iter().max()) {
            t.started_at = Some(first.to_string());
            t.ended_at = Some(last.to_string());
            t.usage.wall_seconds = Some(last.duration_since(*first).as_secs_f64());
        }

        // How it ended: the file's own status, then the last message's (v2), then the batch's
        // exit_statuses_*.yaml.
        let last_extra = msgs.last().and_then(|(_, m)| m.extra.as_ref());
        let mut status = info.exit_status.clone().filter(|s| !s.is_empty()).map(|s| (s, format!("{} info.exit_status", src.display)));
        // Saved mid-run (empty status), the file's `submission` says nothing yet.
        let file_submission = if status.is_some() || last_extra.is_some_and(|e| e.exit_status.as_deref().is_some_and(|s| !s.is_empty())) {
            info.submission.clone().or_else(|| last_extra.and_then(|e| e.submission.clone()))
        } else {
            None
        };
        if status.is_none() {
            status = last_extra
                .and_then(|e| e.exit_status.clone())
                .filter(|s| !s.is_empty())
                .map(|s| (s, format!("{} messages[-1].extra.exit_status", src.display)));
        }
        if status.is_none()
            && let Some(j) = ctx.join.exit_status(&[task.as_str()], &unit.primary.path)
        {
            crate::ingest::pipeline::push_file(&mut t, j.file);
            status = Some((j.value.clone(), format!("{} instances_by_exit_status", j.file.path)));
        }
        let own_status = info.exit_status.as_deref().unwrap_or("");
        let detail = info
            .exception_str
            .clone()
            .or_else(|| last_extra.and_then(|e| e.exception_str.clone()))
            .or_else(|| info.traceback.as_deref().and_then(last_line))
            // v1 keeps an uncaught exception's message in `submission`.
            .or_else(|| info.submission.clone().filter(|s| !s.is_empty() && !matches!(own_status, "Submitted" | "LimitsExceeded" | "")));
        let lim = RunLimits {
            step_limit: agent_cfg.step_limit,
            cost_limit: agent_cfg.cost_limit,
            wall_time_limit: agent_cfg.wall_time_limit_seconds,
            max_format_errors: agent_cfg.max_consecutive_format_errors,
            api_calls: t.usage.api_calls,
            cost: t.usage.cost_usd,
            wall_seconds: t.usage.wall_seconds,
            trailing_format_errors: trailing_format_errors(&t),
            detail,
        };
        match status {
            Some((s, source)) => {
                let mut term = termination_for_status(&s, &lim);
                term.source = Some(source);
                t.submission = match term.kind {
                    TerminationKind::AgentFinished => file_submission.or(submitted_output),
                    // Stopped by the harness: nothing was submitted. v1 keeps an exception's
                    // message in `submission`, which is not a patch.
                    TerminationKind::Budget | TerminationKind::HarnessError | TerminationKind::Infrastructure
                        if file_submission.is_some() =>
                    {
                        if file_submission.as_deref().is_some_and(|s| !s.is_empty()) {
                            t.notes.push("info.submission holds the exception message, not a patch".into());
                        }
                        Some(String::new())
                    }
                    _ => None,
                };
                t.termination = term;
            }
            // The harness ends the run as soon as the submission appears, so the messages
            // alone say it finished.
            None if submitted_output.is_some() => {
                t.termination = Termination {
                    raw: Some("Submitted".into()),
                    source: Some(format!("{} submission message (no exit status in the file)", src.display)),
                    ..Termination::of(TerminationKind::AgentFinished)
                };
                t.submission = submitted_output;
            }
            None => t.notes.push("the trajectory has no exit status (the run was probably killed while running)".into()),
        }
        out.emit(t);
        Ok(())
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

/// A compiled action regex. Every file of a batch run carries the same one in its config, so
/// each distinct pattern is compiled once per process (compiling it per file cost more than
/// parsing a small trajectory).
fn action_regex(pattern: &str) -> Result<regex::Regex, regex::Error> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, regex::Regex>>> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(r) = cache.lock().ok().and_then(|c| c.get(pattern).cloned()) {
        return Ok(r);
    }
    let r = regex::Regex::new(pattern)?;
    if let Ok(mut c) = cache.lock() {
        // Bounded: a corpus with ever-new patterns must not grow the cache without end.
        if c.len() >= 256 {
            c.clear();
        }
        c.insert(pattern.to_string(), r.clone());
    }
    Ok(r)
}

/// What the v1 harness's templates look like in this run, for recognizing its messages.
struct Templates {
    action_re: regex::Regex,
    format_prefix: Option<String>,
    timeout_prefix: Option<String>,
}

impl Templates {
    fn new(agent: &RawAgentConfig, model: Option<&RawModelConfig>, v2: bool, notes: &mut Vec<String>) -> Self {
        let default = || action_regex(V1_ACTION_REGEX).expect("static regex");
        let configured = agent.action_regex.clone().or_else(|| model.and_then(|m| m.action_regex.clone()));
        let action_re = match configured.filter(|_| !v2) {
            Some(r) => action_regex(&format!("(?s){r}")).unwrap_or_else(|_| {
                notes.push(format!("the configured action_regex {r:?} is not supported here; the default ```bash block was used"));
                default()
            }),
            None => default(),
        };
        let fmt = agent.format_error_template.clone().or_else(|| model.and_then(|m| m.format_error_template.clone()));
        Self {
            action_re,
            format_prefix: fmt.as_deref().and_then(static_prefix),
            timeout_prefix: agent.timeout_template.as_deref().and_then(static_prefix),
        }
    }

    fn is_timeout(&self, text: &str) -> bool {
        static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let re = RE.get_or_init(|| regex::Regex::new(r"(?s)^\s*The last command <command>.*</command> timed out").expect("static regex"));
        self.timeout_prefix.as_deref().is_some_and(|p| text.trim_start().starts_with(p)) || re.is_match(text)
    }

    /// The harness's format complaint: its template's literal start, or the default wording.
    /// Output phrases ("parse error") are not enough here, since observations are full of them.
    fn is_format_complaint(&self, text: &str) -> bool {
        let t = text.trim_start();
        self.format_prefix.as_deref().is_some_and(|p| t.starts_with(p)) || text.contains("EXACTLY ONE action")
    }
}

/// The literal start of a Jinja template, up to its first tag; `None` when too short to tell
/// the template's messages from anything else.
fn static_prefix(template: &str) -> Option<String> {
    let end = [template.find("{{"), template.find("{%")].into_iter().flatten().min().unwrap_or(template.len());
    let p = template[..end].trim();
    (p.len() >= 12).then(|| p.to_string())
}

/// The exit code an observation reports: `<returncode>N</returncode>` (the default templates)
/// or the raw dict of the bare `Observation: {{output}}` template.
fn returncode(text: &str) -> Option<i64> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"<returncode>\s*(-?\d+)\s*</returncode>|['"]returncode['"]\s*:\s*(-?\d+)"#).expect("static regex")
    });
    let c = re.captures(text)?;
    c.get(1).or_else(|| c.get(2))?.as_str().parse().ok()
}

fn submits(command: &str) -> bool {
    SUBMIT_MARKERS.iter().any(|m| command.contains(m))
}

/// The harness's complaint reduced to what went wrong: the `<error>` of v2 templates, else the
/// first lines.
fn complaint_summary(text: &str) -> String {
    if let (Some(a), Some(b)) = (text.find("<error>"), text.find("</error>"))
        && a + 7 <= b
    {
        let inner = text[a + 7..b].trim();
        if !inner.is_empty() {
            return inner.chars().take(500).collect();
        }
    }
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).take(3).collect();
    lines.join("\n").chars().take(500).collect()
}

/// The name in v2's "Unknown tool 'X'." complaint, with the sentence.
fn unknown_tool(text: &str) -> Option<(String, String)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"Unknown tool '([^']*)'\.?").expect("static regex"));
    let c = re.captures(text)?;
    Some((c.get(1)?.as_str().to_string(), c.get(0)?.as_str().to_string()))
}

fn bash_call(id: Option<String>, command: &str) -> ToolCall {
    ToolCall { id, name: "bash".into(), arguments: serde_json::json!({ "command": command }), raw_arguments: None }
}

fn unix_time(secs: f64) -> Option<jiff::Timestamp> {
    if !secs.is_finite() {
        return None;
    }
    #[expect(clippy::cast_possible_truncation, reason = "microseconds since 1970 fit i128")]
    let micros = (secs * 1e6).round() as i128;
    jiff::Timestamp::from_nanosecond(micros * 1000).ok()
}

fn message_time(m: &RawMsg<'_>) -> Option<jiff::Timestamp> {
    m.extra.as_ref().and_then(|e| e.timestamp).or(m.timestamp).and_then(unix_time)
}

/// Token counts of one API response, chat-completions or Responses API.
fn tokens_of(usage: &Value) -> Option<Tokens> {
    let first = |paths: &[&str]| paths.iter().find_map(|p| uint(usage.pointer(p)));
    let t = Tokens {
        prompt: first(&["/prompt_tokens", "/input_tokens"]),
        completion: first(&["/completion_tokens", "/output_tokens"]),
        reasoning: first(&["/completion_tokens_details/reasoning_tokens", "/output_tokens_details/reasoning_tokens"]),
        cached: first(&["/prompt_tokens_details/cached_tokens", "/input_tokens_details/cached_tokens"]),
    };
    (t.prompt.is_some() || t.completion.is_some()).then_some(t)
}

fn sum_tokens(t: &mut Trajectory) {
    let mut any = false;
    let (mut p, mut c, mut r, mut k) = (0u64, 0u64, 0u64, 0u64);
    for tok in t.steps.iter().filter_map(|s| s.tokens.as_ref()) {
        any = true;
        p += tok.prompt.unwrap_or(0);
        c += tok.completion.unwrap_or(0);
        r += tok.reasoning.unwrap_or(0);
        k += tok.cached.unwrap_or(0);
    }
    if any {
        t.usage.prompt_tokens = Some(p);
        t.usage.completion_tokens = Some(c);
        t.usage.reasoning_tokens = Some(r);
        t.usage.cached_tokens = Some(k);
    }
}

/// Unusable replies in a row at the end of the run.
fn trailing_format_errors(t: &Trajectory) -> u64 {
    let mut n = 0;
    for s in t.steps.iter().rev().filter(|s| s.role == Role::Assistant) {
        if s.format_error.is_none() {
            break;
        }
        n += 1;
    }
    n
}

/// The raw API response, read leniently: providers differ and a failed dump is a string.
/// The reply message is kept raw: it repeats the message's own text and calls, and only a
/// reply that failed to parse (v2 format errors) needs it whole.
#[derive(Deserialize)]
struct RawResponse<'a> {
    #[serde(default)]
    usage: Value,
    #[serde(borrow, default)]
    choices: Vec<RawChoice<'a>>,
    /// Responses API output items.
    #[serde(default)]
    output: Value,
}

#[derive(Deserialize)]
struct RawChoice<'a> {
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

impl RawChoice<'_> {
    /// The whole reply message (`Null` when absent or unreadable).
    fn message(&self) -> Value {
        self.message.and_then(|m| serde_json::from_str(m.get()).ok()).unwrap_or(Value::Null)
    }

    /// The reply's `reasoning_content` (or, when that key is absent, `reasoning`) when it is a
    /// string, read without building the rest of the message.
    fn reasoning(&self) -> Option<String> {
        /// `Some` whenever the key is present, `Some(Null)` for an explicit null.
        fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
            Value::deserialize(d).map(Some)
        }
        #[derive(Deserialize)]
        struct Reasoning {
            #[serde(default, deserialize_with = "present")]
            reasoning_content: Option<Value>,
            #[serde(default, deserialize_with = "present")]
            reasoning: Option<Value>,
        }
        let r: Reasoning = serde_json::from_str(self.message?.get()).ok()?;
        r.reasoning_content.or(r.reasoning).and_then(|v| v.as_str().map(ToString::to_string))
    }
}

fn response_of<'a>(extra: Option<&RawExtra<'a>>) -> Option<RawResponse<'a>> {
    serde_json::from_str(extra?.response?.get()).ok()
}

/// A call the model made that the harness has not answered yet.
struct PendingCall {
    call: usize,
    id: Option<String>,
    command: String,
    answered: bool,
}

struct Pending {
    step: usize,
    calls: Vec<PendingCall>,
}

/// Turns messages into steps, one message at a time.
struct Builder<'b> {
    src: &'b Source,
    t: &'b mut Trajectory,
    tpl: &'b Templates,
    /// The last reply's actions, until their observations arrive.
    pending: Option<Pending>,
    /// v1: the last reply had no single action; the next user message is the complaint.
    unparsed: Option<usize>,
    seen_assistant: bool,
    /// The output of the submitting command, when the messages show it.
    submitted: Option<String>,
    noted_lost_replies: bool,
}

impl Builder<'_> {
    fn push(&mut self, raw: &RawValue, mut step: Step) -> usize {
        if step.source_span.is_none() {
            step.source_span = self.src.span_of(0, raw.get());
        }
        self.t.steps.push(step);
        self.t.steps.len() - 1
    }

    fn push_text(&mut self, raw: &RawValue, role: Role, text: String, m: &RawMsg<'_>) -> usize {
        let mut step = Step::new(role, text);
        step.timestamp = message_time(m).map(|t| t.to_string());
        self.push(raw, step)
    }

    fn mark_format_error(&mut self, ix: usize, complaint: &str) {
        if let Some(s) = self.t.steps.get_mut(ix) {
            s.format_error = Some(complaint_summary(complaint));
        }
    }

    /// An assistant step with what every generation records: reasoning, tokens, cost, time.
    fn assistant(m: &RawMsg<'_>, text: String, response: Option<&RawResponse<'_>>) -> Step {
        let mut step = Step::new(Role::Assistant, text);
        step.timestamp = message_time(m).map(|t| t.to_string());
        let reasoning = m
            .reasoning_content
            .clone()
            .or_else(|| m.reasoning.as_str().map(ToString::to_string))
            .or_else(|| response.and_then(|r| r.choices.first()).and_then(RawChoice::reasoning))
            .filter(|r| !r.trim().is_empty());
        step.tokens = response.and_then(|r| tokens_of(&r.usage));
        let reasoning_tokens = step.tokens.as_ref().and_then(|t| t.reasoning).filter(|n| *n > 0);
        if reasoning.is_some() || reasoning_tokens.is_some() {
            step.reasoning = Some(Reasoning { text: reasoning, tokens: reasoning_tokens });
        }
        step.cost_usd = m.extra.as_ref().and_then(|e| e.cost);
        step
    }

    fn result_for(&mut self, p: &mut Pending, k: usize, output: String) -> ToolResult {
        let mut r = ToolResult::new(output);
        r.name = Some("bash".into());
        if let Some(c) = p.calls.get_mut(k) {
            c.answered = true;
            r.call_id.clone_from(&c.id);
            r.call = Some(CallRef { step: to_u32(p.step), call: to_u32(c.call) });
        }
        r
    }

    fn note_timeout(&mut self, at: usize, command: &str) {
        let cmd: String = command.lines().next().unwrap_or("").chars().take(120).collect();
        self.t.notes.push(format!("command timed out at step {at}: {cmd}"));
    }

    // ---- v1: hand-formatted messages, text actions ----

    fn v1_message(&mut self, raw: &RawValue, m: &RawMsg<'_>) {
        let text = content_text(&m.content);
        match m.role.as_deref().unwrap_or("") {
            "system" => {
                self.push_text(raw, Role::System, text, m);
            }
            "assistant" => {
                let response = response_of(m.extra.as_ref());
                let mut step = Self::assistant(m, text.clone(), response.as_ref());
                let actions: Vec<String> =
                    self.tpl.action_re.captures_iter(&text).filter_map(|c| c.get(1)).map(|a| a.as_str().trim().to_string()).collect();
                self.seen_assistant = true;
                self.unparsed = None;
                self.pending = None;
                if let [command] = actions.as_slice() {
                    step.tool_calls.push(bash_call(None, command));
                    let ix = self.push(raw, step);
                    self.pending = Some(Pending {
                        step: ix,
                        calls: vec![PendingCall { call: 0, id: None, command: command.clone(), answered: false }],
                    });
                } else {
                    let ix = self.push(raw, step);
                    self.unparsed = Some(ix);
                }
            }
            _ => self.v1_user(raw, m, text),
        }
    }

    fn v1_user(&mut self, raw: &RawValue, m: &RawMsg<'_>, text: String) {
        if !self.seen_assistant {
            self.push_text(raw, Role::User, text, m);
            return;
        }
        if let Some(mut p) = self.pending.take() {
            let command = p.calls[0].command.clone();
            if self.tpl.is_timeout(&text) {
                let mut r = self.result_for(&mut p, 0, text);
                r.is_error = true;
                let at = self.t.steps.len();
                self.note_timeout(at, &command);
                let mut step = Step::new(Role::Tool, String::new());
                step.tool_results.push(r);
                self.push(raw, step);
            } else if let Some(code) = returncode(&text) {
                let mut r = self.result_for(&mut p, 0, text);
                r.exit_code = Some(code);
                r.is_error = code != 0;
                let mut step = Step::new(Role::Tool, String::new());
                step.tool_results.push(r);
                self.push(raw, step);
            } else if self.tpl.is_format_complaint(&text) {
                // The harness did not take the reply as an action after all.
                if let Some(s) = self.t.steps.get_mut(p.step) {
                    s.tool_calls.clear();
                }
                self.mark_format_error(p.step, &text);
                self.push_text(raw, Role::Environment, text, m);
            } else {
                if submits(&command) {
                    self.submitted = Some(text.clone());
                }
                let r = self.result_for(&mut p, 0, text);
                let mut step = Step::new(Role::Tool, String::new());
                step.tool_results.push(r);
                self.push(raw, step);
            }
            return;
        }
        if let Some(ix) = self.unparsed.take() {
            if let Some(code) = returncode(&text) {
                // The harness ran an action this run's action_regex did not find.
                self.t.notes.push(format!("the action of step {ix} was not found in its text; its observation is kept unpaired"));
                let mut r = ToolResult::new(text);
                r.exit_code = Some(code);
                r.is_error = code != 0;
                let mut step = Step::new(Role::Tool, String::new());
                step.tool_results.push(r);
                self.push(raw, step);
                return;
            }
            self.mark_format_error(ix, &text);
        }
        self.push_text(raw, Role::Environment, text, m);
    }

    // ---- v2: native model messages with `extra` ----

    fn v2_message(&mut self, raw: &RawValue, m: &RawMsg<'_>) {
        let extra = m.extra.as_ref();
        if m.role.as_deref() == Some("exit") || extra.is_some_and(|e| e.exit_status.is_some()) {
            self.v2_exit(raw, m);
            return;
        }
        let responses_item = m.output.is_array() && m.role.is_none();
        match m.role.as_deref() {
            Some("system") => {
                self.push_text(raw, Role::System, content_text(&m.content), m);
            }
            Some("assistant") => self.v2_assistant(raw, m),
            None if responses_item => self.v2_assistant(raw, m),
            Some("tool") => self.v2_tool(raw, m),
            None if m.kind.as_deref() == Some("function_call_output") => self.v2_tool(raw, m),
            _ => {
                let text = content_text(&m.content);
                if extra.and_then(|e| e.interrupt_type.as_deref()) == Some("FormatError") {
                    self.v2_format_error(raw, m, text);
                } else if extra.is_some_and(|e| e.raw_output.is_some() || e.returncode.is_some()) {
                    self.v2_tool(raw, m);
                } else if !self.seen_assistant {
                    self.push_text(raw, Role::User, text, m);
                } else {
                    self.push_text(raw, Role::Environment, text, m);
                }
            }
        }
    }

    /// Text and calls of a reply: chat-completions (`content`, `tool_calls`) or a Responses
    /// API response (`output` items).
    fn reply_parts(message: &Value) -> (String, Vec<ToolCall>) {
        if let Some(items) = message.get("output").and_then(Value::as_array) {
            let mut text = Vec::new();
            let mut calls = Vec::new();
            for it in items {
                match it.get("type").and_then(Value::as_str) {
                    Some("function_call") => {
                        let id = it.get("call_id").or_else(|| it.get("id")).and_then(Value::as_str).map(ToString::to_string);
                        let name = it.get("name").and_then(Value::as_str).unwrap_or("");
                        calls.push(tool_call(id, name, it.get("arguments").unwrap_or(&Value::Null)));
                    }
                    Some("message") => text.push(content_text(it.get("content").unwrap_or(&Value::Null))),
                    _ => {}
                }
            }
            return (text.join("\n"), calls);
        }
        let text = content_text(message.get("content").unwrap_or(&Value::Null));
        let calls = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                let id = c.get("id").and_then(Value::as_str).map(ToString::to_string);
                let f = c.get("function").unwrap_or(c);
                let name = f.get("name").and_then(Value::as_str).unwrap_or("");
                tool_call(id, name, f.get("arguments").unwrap_or(&Value::Null))
            })
            .collect();
        (text, calls)
    }

    fn v2_assistant(&mut self, raw: &RawValue, m: &RawMsg<'_>) {
        let response = response_of(m.extra.as_ref());
        let (text, mut calls) = if m.role.is_none() {
            let as_value = serde_json::json!({ "output": m.output });
            Self::reply_parts(&as_value)
        } else {
            let text = content_text(&m.content);
            let calls: Vec<ToolCall> = m
                .tool_calls
                .iter()
                .flatten()
                .filter_map(|c| c.function.as_ref().map(|f| tool_call(c.id.clone(), &f.name, &f.arguments)))
                .collect();
            (text, calls)
        };
        // Text-based models: the harness's parsed actions are the calls.
        if calls.is_empty() {
            for a in m.extra.as_ref().and_then(|e| e.actions.as_ref()).into_iter().flatten() {
                if let Some(cmd) = a.get("command").and_then(Value::as_str) {
                    let id = a.get("tool_call_id").and_then(Value::as_str).map(ToString::to_string);
                    calls.push(bash_call(id, cmd));
                }
            }
        }
        let mut step = Self::assistant(m, text, response.as_ref());
        let pending: Vec<PendingCall> = calls
            .iter()
            .enumerate()
            .map(|(k, c)| PendingCall {
                call: k,
                id: c.id.clone(),
                command: c.arguments.get("command").and_then(Value::as_str).unwrap_or("").to_string(),
                answered: false,
            })
            .collect();
        step.tool_calls = calls;
        self.seen_assistant = true;
        let ix = self.push(raw, step);
        self.pending = Some(Pending { step: ix, calls: pending });
    }

    fn v2_tool(&mut self, raw: &RawValue, m: &RawMsg<'_>) {
        let extra = m.extra.as_ref();
        let call_id = m.tool_call_id.clone().or_else(|| m.call_id.clone());
        let text = if m.output.is_string() { content_text(&m.output) } else { content_text(&m.content) };
        let mut p = self.pending.take().unwrap_or(Pending { step: usize::MAX, calls: Vec::new() });
        let k = match &call_id {
            Some(id) => p.calls.iter().position(|c| c.id.as_deref() == Some(id.as_str()) && !c.answered),
            None => p.calls.iter().position(|c| !c.answered),
        };
        let command = k.map(|k| p.calls[k].command.clone()).unwrap_or_default();
        let mut r = match k {
            Some(k) => self.result_for(&mut p, k, text),
            None => ToolResult::new(text),
        };
        if r.call_id.is_none() {
            r.call_id = call_id;
        }
        r.exit_code = extra.and_then(|e| e.returncode);
        let exception = extra.and_then(|e| e.exception_info.as_deref()).filter(|s| !s.is_empty());
        r.is_error = r.exit_code.is_some_and(|c| c != 0) || exception.is_some();
        let timed_out =
            extra.and_then(|e| e.exception_type.as_deref()) == Some("TimeoutExpired") || exception.is_some_and(|e| e.contains("timed out"));
        if timed_out {
            let at = self.t.steps.len();
            self.note_timeout(at, &command);
        }
        if p.step != usize::MAX {
            self.pending = Some(p);
        }
        let mut step = Step::new(Role::Tool, String::new());
        step.timestamp = message_time(m).map(|t| t.to_string());
        step.tool_results.push(r);
        self.push(raw, step);
    }

    /// v2 keeps a failed reply only inside the complaint (`extra.response`, or
    /// `extra.model_response` for text-based models); it becomes the assistant step it was.
    fn v2_format_error(&mut self, raw: &RawValue, m: &RawMsg<'_>, complaint: String) {
        let extra = m.extra.as_ref();
        let response = response_of(extra);
        let reply = response.as_ref().map(|r| match r.choices.first() {
            Some(c) => Self::reply_parts(&c.message()),
            None => Self::reply_parts(&serde_json::json!({ "output": r.output })),
        });
        let (text, mut calls) = match (reply, extra.and_then(|e| e.model_response.clone())) {
            (Some(parts), _) => parts,
            (None, Some(text)) => (text, Vec::new()),
            (None, None) => {
                if !self.noted_lost_replies {
                    self.noted_lost_replies = true;
                    self.t.notes.push(
                        "replies that failed to parse are not in the file (this mini-swe-agent version keeps only the complaint); each stands as an empty assistant step".into(),
                    );
                }
                (String::new(), Vec::new())
            }
        };
        let unknown = unknown_tool(&complaint);
        let mut unknown_call = None;
        if let Some((name, _)) = &unknown {
            let k = calls.iter().position(|c| &c.name == name).unwrap_or_else(|| {
                calls.push(ToolCall { id: None, name: name.clone(), arguments: Value::Null, raw_arguments: None });
                calls.len() - 1
            });
            unknown_call = Some(k);
        }
        let mut step = Self::assistant(m, text, response.as_ref());
        step.format_error = Some(complaint_summary(&complaint));
        let call_id = unknown_call.and_then(|k| calls[k].id.clone());
        step.tool_calls = calls;
        self.seen_assistant = true;
        self.pending = None;
        let ix = self.push(raw, step);
        match (unknown, unknown_call) {
            (Some((name, sentence)), Some(k)) => {
                let mut r = ToolResult::new(complaint);
                r.name = Some(name);
                r.call_id = call_id;
                r.call = Some(CallRef { step: to_u32(ix), call: to_u32(k) });
                r.is_error = true;
                r.unknown_tool = Some(sentence);
                let mut s = Step::new(Role::Tool, String::new());
                s.tool_results.push(r);
                self.push(raw, s);
            }
            _ => {
                self.push_text(raw, Role::Environment, complaint, m);
            }
        }
    }

    /// The final message: the submission answers the command that produced it.
    fn v2_exit(&mut self, raw: &RawValue, m: &RawMsg<'_>) {
        let extra = m.extra.as_ref();
        let text = content_text(&m.content);
        if extra.and_then(|e| e.exit_status.as_deref()) == Some("Submitted") {
            let output = extra.and_then(|e| e.submission.clone()).unwrap_or_else(|| text.clone());
            self.submitted = Some(output.clone());
            if let Some(mut p) = self.pending.take()
                && let Some(k) = p.calls.iter().position(|c| !c.answered && submits(&c.command))
            {
                let r = self.result_for(&mut p, k, output);
                let mut step = Step::new(Role::Tool, String::new());
                step.timestamp = message_time(m).map(|t| t.to_string());
                step.tool_results.push(r);
                self.push(raw, step);
                return;
            }
        }
        self.push_text(raw, Role::Environment, text, m);
    }
}

fn to_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_prefixes_stop_at_the_first_tag() {
        assert_eq!(
            static_prefix("Please always provide EXACTLY ONE action in triple backticks, found {{actions|length}} actions.").as_deref(),
            Some("Please always provide EXACTLY ONE action in triple backticks, found")
        );
        assert_eq!(static_prefix("{{ error }}"), None);
    }

    #[test]
    fn return_codes_from_both_observation_templates() {
        assert_eq!(returncode("<returncode>2</returncode>\n<output>\nx</output>"), Some(2));
        assert_eq!(returncode("Observation: {'output': 'x', 'returncode': -1}"), Some(-1));
        assert_eq!(returncode("no code here"), None);
    }

    #[test]
    fn complaints_reduce_to_their_error() {
        assert_eq!(
            complaint_summary("Tool call error:\n\n<error>\nUnknown tool 'str_replace'.\n</error>\nHere is"),
            "Unknown tool 'str_replace'."
        );
        assert_eq!(unknown_tool("<error>\nUnknown tool 'str_replace'.\n</error>").unwrap().0, "str_replace");
    }

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
    fn task_ids_come_from_the_file_name() {
        assert_eq!(task_id(Path::new("run/a__b-1/a__b-1.traj.json"), Some("other")), "a__b-1");
        assert_eq!(task_id(Path::new("run/last_run.json"), Some("a__b-2")), "a__b-2");
    }

    #[test]
    fn unix_times_are_rounded_to_microseconds() {
        assert_eq!(unix_time(1_706_000_000.5).unwrap().to_string(), "2024-01-23T08:53:20.5Z");
    }
}
