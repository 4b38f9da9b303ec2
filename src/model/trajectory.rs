//! The normalized trajectory: one attempt of one task by one arm, whatever harness wrote it.
//!
//! Every later stage (classify, report, stats, spotcheck) reads only these types, so a format
//! quirk is resolved once, in its adapter, and never leaks downstream.
//!
//! # Format
//!
//! Serialized as one JSON object per line (JSONL) by `coroner ingest`; the JSON Schema is
//! `schemas/trajectory.schema.json`, generated from these types. Fields that a format does not
//! carry are omitted (`null` never means "zero"). Step indices are 0-based positions in `steps`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::signals::Signals;

/// Version of the normalized record; bumped when a field changes meaning.
pub const RECORD_VERSION: u32 = 1;

/// One attempt of one task by one arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Trajectory {
    /// Version of this record's layout ([`RECORD_VERSION`]).
    pub record_version: u32,
    /// Stable id: the task id and a short hash of the source path (relative to the input root)
    /// and the record's index in that file, so reruns on another machine give the same id.
    pub id: String,
    /// The benchmark task (SWE-bench instance id, Terminal-Bench task, sample id, ...).
    pub task_id: String,
    /// Harness + model configuration this attempt belongs to; from a study file, or derived
    /// from metadata as `harness/model` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    /// Attempt index of this task within its arm (0-based).
    #[serde(default)]
    pub trial: u32,
    /// Harness that produced the run (`mini-swe-agent`, `openhands`, `terminus-2`, ...).
    pub harness: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A harness-level session id when the format has one (ATIF `session_id`, Claude Code
    /// `sessionId`); verdict files are joined by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The directory the agent worked in, when the format records it (Claude Code `cwd`, Codex
    /// `session_meta.cwd`): writes under it are workspace changes even when it lies in `/tmp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// Ordered steps; `Step::index` equals the position.
    #[serde(default)]
    pub steps: Vec<Step>,
    pub termination: Termination,
    pub outcome: Outcome,
    /// The tool registry the transcript itself declares (run-time registry), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_tools: Option<Vec<DeclaredTool>>,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// What the agent submitted for grading (a patch, an answer), when the verifier grades a
    /// submission; `Some("")` is an empty one. Runs graded on their workspace (Harbor,
    /// Terminal-Bench) have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission: Option<String>,
    /// What the format said about how the run ended, before interpretation gave it meaning.
    #[serde(default, skip_serializing_if = "Signals::is_empty")]
    pub signals: Signals,
    /// Tool results no call could be paired with; kept, never dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpaired_results: Vec<UnpairedResult>,
    /// Facts about how the record was built that a reader must know (a trial with only a
    /// terminal capture, a continued trajectory that was not found, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub provenance: Provenance,
}

/// Who speaks in a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
    /// Output of the environment that is not the answer to one tool call (harness messages,
    /// terminal screens, hook feedback).
    Environment,
}

/// One message or event of the trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    pub index: u32,
    pub role: Role,
    /// The acting agent in multi-agent or sub-agent transcripts (Magentic-One `Coder`, a
    /// Claude Code sidechain, an ATIF subagent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_results: Vec<ToolResult>,
    /// Set when an assistant reply could not be turned into an action (format error); the
    /// value is the harness's complaint or the parse error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_span: Option<SourceSpan>,
}

impl Step {
    /// Whether the step belongs to the main agent: not a sub-agent, a sidechain or a branch the
    /// transcript abandoned.
    #[must_use]
    pub fn is_main_agent(&self) -> bool {
        self.agent.as_deref().is_none_or(|a| !["sidechain", "subagent", "branch:"].iter().any(|p| a.starts_with(p)))
    }

    /// A step with only a role and text; adapters fill the rest.
    #[must_use]
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        Self {
            index: 0,
            role,
            agent: None,
            text: text.into(),
            reasoning: None,
            tool_calls: Vec::new(),
            tool_results: Vec::new(),
            format_error: None,
            tokens: None,
            cost_usd: None,
            timestamp: None,
            source_span: None,
        }
    }
}

/// Reasoning may be visible text, only a token count, or both.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Reasoning {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

/// A tool invocation requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    /// Arguments as JSON; `null` when they did not parse (see `raw_arguments`).
    #[serde(default)]
    pub arguments: Value,
    /// The arguments as the model wrote them, kept when they were not valid JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
}

impl ToolCall {
    /// The command a shell tool runs, read from the first of `names` it has: a string, an argv
    /// array (`["bash", "-lc", cmd]`), a list of commands; else arguments that are a bare
    /// string, or the raw arguments when they did not parse. Interpretation (a finish command)
    /// and classification (a command's effects) read commands the same way.
    #[must_use]
    pub fn shell_command(&self, names: &[String]) -> Option<String> {
        for n in names {
            match self.arguments.get(n) {
                Some(Value::String(s)) => return Some(s.clone()),
                Some(Value::Array(parts)) => {
                    let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
                    if words.len() >= 3 && words[0].ends_with("sh") && words[1].starts_with('-') && words[1].ends_with('c') {
                        return Some(words[2..].join(" "));
                    }
                    if !words.is_empty() {
                        // Commands given as a list of strings are separate commands.
                        return Some(words.join("\n"));
                    }
                }
                _ => {}
            }
        }
        if let Value::String(s) = &self.arguments {
            return Some(s.clone());
        }
        self.raw_arguments.clone()
    }
}

/// What came back for a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolResult {
    /// The call id the format gave this result, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool name the format gave this result, if any (used to pair when ids are absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub output: String,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The call this result answers, once paired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<CallRef>,
    /// The harness rejected the call because it named no known tool; the value is its message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_tool: Option<String>,
    /// The error kind the format attached to the result (`tool_not_registered`, `parsing`), as
    /// written; what it means is the profile's to say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
}

impl ToolResult {
    #[must_use]
    pub fn new(output: impl Into<String>) -> Self {
        Self {
            call_id: None,
            name: None,
            output: output.into(),
            is_error: false,
            exit_code: None,
            call: None,
            unknown_tool: None,
            error_type: None,
        }
    }
}

/// Points at one tool call: `steps[step].tool_calls[call]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
pub struct CallRef {
    pub step: u32,
    pub call: u32,
}

/// A result that stayed unpaired, with where it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnpairedResult {
    pub step: u32,
    pub result: u32,
}

/// Token counts; absent fields were not reported.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Tokens {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<u64>,
}

/// `Termination::rule` of a wall clock that fired on a run which had already stalled: an
/// infrastructure end, decided by the interpretation itself rather than by a profile entry.
pub const STALLED_PAST_CLOCK: &str = "stalled-past-clock";

/// `Termination::rule` of a log that stops on a call whose result never came, with no end, no
/// answer and no error recorded: a truncated log, an infrastructure end (DESIGN.md, "Decisions
/// on hard cases"), decided by the interpretation itself.
pub const TRUNCATED_LOG: &str = "truncated-log";

/// `Termination::rule` of a run that stopped on a wrong answer after the solver had taken
/// others: its answer limit ended it (budget `attempts`), decided by the interpretation itself.
pub const ANSWERS_RAN_OUT: &str = "answers-ran-out";

/// `Termination::rule` of a run with no recorded end that took as many steps as its recorded
/// step limit, decided by the interpretation itself.
pub const STEPS_RAN_OUT: &str = "steps-ran-out";

/// Why the run ended and who ended it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Termination {
    pub kind: TerminationKind,
    /// Which budget fired, when `kind` is `budget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforced_by: Option<Enforcer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumed: Option<f64>,
    /// The original status string (`LimitsExceeded`, `exit_cost`, `agent_timeout`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// Where the status came from (file and field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The status string's bytes in its file, so evidence resting on it can be checked there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<SourceSpan>,
    /// Free text the harness attached (an exception message, an error string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The agent said it did not complete the task when it ended (`task_completed: false`, a
    /// forfeit): it finished, but gave up.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gave_up: bool,
    /// The interpretation entry (`rules/harnesses/*.toml`) that decided this termination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl Termination {
    #[must_use]
    pub fn unknown() -> Self {
        Self::of(TerminationKind::Unknown)
    }

    #[must_use]
    pub fn of(kind: TerminationKind) -> Self {
        Self {
            kind,
            budget: None,
            enforced_by: None,
            limit: None,
            consumed: None,
            raw: None,
            source: None,
            span: None,
            detail: None,
            gave_up: false,
            rule: None,
        }
    }

    #[must_use]
    pub fn budget(budget: Budget, enforced_by: Enforcer) -> Self {
        Self { budget: Some(budget), enforced_by: Some(enforced_by), ..Self::of(TerminationKind::Budget) }
    }

    #[must_use]
    pub fn with_raw(mut self, raw: impl Into<String>, source: impl Into<String>) -> Self {
        self.raw = Some(raw.into());
        self.source = Some(source.into());
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TerminationKind {
    /// The agent called its finish/submit protocol.
    AgentFinished,
    /// The agent stopped (final reply, no more actions) without the finish protocol.
    AgentStoppedWithoutFinish,
    /// A limit ended the run.
    Budget,
    /// The harness itself failed (its own bug, repeated unusable replies it gave up on).
    HarnessError,
    /// Outside the agent: API retries exhausted, environment or verifier failure.
    Infrastructure,
    #[default]
    Unknown,
}

/// Which limit ended a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// Steps, turns, messages or iterations.
    Steps,
    Tokens,
    Context,
    OutputTokens,
    Cost,
    WallTime,
    CommandTimeout,
    /// Answer submissions.
    Attempts,
    /// A harness's stuck-loop detector.
    LoopGuard,
    /// Repeated unusable replies (format errors) up to the harness's limit.
    FormatErrors,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Enforcer {
    Harness,
    Benchmark,
    Provider,
    /// Whoever ran a headless agent (a per-request or per-prompt timeout of the caller).
    Caller,
}

/// The verifier's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    pub status: OutcomeStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
    /// Per-test results when the verifier reports them, in a stable order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<TestResult>,
    /// Where the verdict came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<OutcomeSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Outcome {
    #[must_use]
    pub fn unknown() -> Self {
        Self { status: OutcomeStatus::Unknown, reward: None, tests: Vec::new(), source: None, detail: None }
    }

    #[must_use]
    pub fn new(status: OutcomeStatus, file: impl Into<String>, field: impl Into<String>) -> Self {
        Self {
            status,
            reward: None,
            tests: Vec::new(),
            source: Some(OutcomeSource { file: file.into(), field: field.into() }),
            detail: None,
        }
    }

    /// Outcome from a reward in [0, 1]: 1 passes, 0 fails, anything between is partial.
    #[must_use]
    pub fn from_reward(reward: f64, file: impl Into<String>, field: impl Into<String>) -> Self {
        let status = if reward >= 1.0 {
            OutcomeStatus::Passed
        } else if reward <= 0.0 {
            OutcomeStatus::Failed
        } else {
            OutcomeStatus::Partial
        };
        Self { reward: Some(reward), ..Self::new(status, file, field) }
    }

    #[must_use]
    pub fn is_known(&self) -> bool {
        self.status != OutcomeStatus::Unknown
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    Passed,
    Failed,
    Partial,
    Unknown,
    /// The verifier itself failed, so there is no verdict on the agent's work.
    Errored,
}

impl OutcomeStatus {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Partial => "partial",
            Self::Unknown => "unknown",
            Self::Errored => "errored",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OutcomeSource {
    pub file: String,
    pub field: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestResult {
    pub name: String,
    /// As the verifier wrote it (`passed`, `failed`, `PASS`, ...), lower-cased.
    pub status: String,
    /// The verifier's own account of a failure (pytest's `E` lines), where its output was read:
    /// what the test saw is how a reader tells a broken task from broken work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl TestResult {
    /// A verdict with no account of what the test saw.
    #[must_use]
    pub fn new(name: impl Into<String>, status: impl Into<String>) -> Self {
        Self { name: name.into(), status: status.into(), message: None }
    }
}

/// A tool the harness offered in this run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeclaredTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Resource use of the whole trajectory.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
    /// Model calls made, when the harness counts them (mini-swe-agent `api_calls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_calls: Option<u64>,
}

/// Where a record came from, so every claim can be traced to bytes on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    /// Adapter that parsed the transcript (`harbor`, `mini-swe-agent`, ...).
    pub adapter: String,
    pub adapter_version: u32,
    /// The format's own version marker (`ATIF-v1.6`, `mini-swe-agent-1`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_version: Option<String>,
    /// Every file that contributed; `SourceSpan::file` indexes this list.
    pub files: Vec<SourceFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceFile {
    /// The path as reached from the inputs given on the command line.
    pub path: String,
    pub sha256: String,
    /// What the file contributed (`transcript`, `trial_result`, `outcome`, `exit_status`, ...).
    pub role: String,
}

/// A region of a source file, for evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceSpan {
    /// Index into `provenance.files`.
    pub file: u32,
    /// Byte offset of the first byte.
    pub offset: u64,
    pub len: u64,
    /// 1-based line of the first byte.
    pub line: u64,
}

impl Trajectory {
    /// A record with identity and provenance only; an adapter fills in the rest.
    #[must_use]
    pub fn new(task_id: impl Into<String>, harness: impl Into<String>, adapter: &str, version: u32, files: Vec<SourceFile>) -> Self {
        Self {
            record_version: RECORD_VERSION,
            id: String::new(),
            task_id: task_id.into(),
            arm: None,
            trial: 0,
            harness: harness.into(),
            harness_version: None,
            model: None,
            session_id: None,
            workdir: None,
            steps: Vec::new(),
            termination: Termination::unknown(),
            outcome: Outcome::unknown(),
            declared_tools: None,
            usage: Usage::default(),
            started_at: None,
            ended_at: None,
            submission: None,
            signals: Signals::default(),
            unpaired_results: Vec::new(),
            notes: Vec::new(),
            provenance: Provenance { adapter: adapter.to_string(), adapter_version: version, format_version: None, files },
        }
    }

    /// The result paired with a call, if any.
    #[must_use]
    pub fn result_of(&self, call: CallRef) -> Option<&ToolResult> {
        // Results answer calls in the same or a later step; scan forward from the call.
        self.steps.iter().skip(call.step as usize).flat_map(|s| s.tool_results.iter()).find(|r| r.call == Some(call))
    }

    /// Iterates over every tool call with its reference.
    pub fn calls(&self) -> impl Iterator<Item = (CallRef, &ToolCall)> {
        self.steps.iter().enumerate().flat_map(|(s, step)| {
            step.tool_calls.iter().enumerate().map(move |(c, call)| {
                (CallRef { step: u32::try_from(s).unwrap_or(u32::MAX), call: u32::try_from(c).unwrap_or(u32::MAX) }, call)
            })
        })
    }
}

impl Step {
    /// The texts evidence may quote from this step: its text, its reasoning, each call's name
    /// and arguments (as written, or as compact JSON), and each result's output.
    #[must_use]
    pub fn evidence_texts(&self) -> Vec<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow;
        let mut v: Vec<Cow<'_, str>> = vec![Cow::Borrowed(self.text.as_str())];
        if let Some(r) = self.reasoning.as_ref().and_then(|r| r.text.as_deref()) {
            v.push(Cow::Borrowed(r));
        }
        if let Some(f) = &self.format_error {
            v.push(Cow::Borrowed(f.as_str()));
        }
        for c in &self.tool_calls {
            v.push(Cow::Borrowed(c.name.as_str()));
            match &c.raw_arguments {
                Some(raw) => v.push(Cow::Borrowed(raw.as_str())),
                None => v.push(Cow::Owned(c.arguments.to_string())),
            }
            if let Some(s) = c.arguments.as_object() {
                for val in s.values() {
                    if let Some(t) = val.as_str() {
                        v.push(Cow::Borrowed(t));
                    }
                }
            }
        }
        for r in &self.tool_results {
            v.push(Cow::Borrowed(r.output.as_str()));
            if let Some(u) = &r.unknown_tool {
                v.push(Cow::Borrowed(u.as_str()));
            }
        }
        v
    }
}

impl Trajectory {
    /// The texts step-less evidence may quote: the end status, the verdict's detail and its test
    /// names.
    #[must_use]
    pub fn status_texts(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        v.extend(self.termination.raw.as_deref());
        v.extend(self.termination.detail.as_deref());
        v.extend(self.outcome.detail.as_deref());
        v.extend(self.outcome.source.as_ref().map(|s| s.field.as_str()));
        v.extend(self.outcome.tests.iter().map(|r| r.name.as_str()));
        v.extend(self.submission.as_deref());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: Value, raw: Option<&str>) -> ToolCall {
        ToolCall { id: Some("c".into()), name: "bash".into(), arguments: args, raw_arguments: raw.map(String::from) }
    }

    #[test]
    fn commands_are_read_from_strings_argv_arrays_and_raw_arguments() {
        let names = vec!["command".to_string()];
        let argv = call(serde_json::json!({"command": ["bash", "-lc", "ls -la"]}), None);
        assert_eq!(argv.shell_command(&names).as_deref(), Some("ls -la"));
        assert_eq!(call(serde_json::json!({"command": "pytest"}), None).shell_command(&names).as_deref(), Some("pytest"));
        assert_eq!(call(serde_json::Value::Null, Some("echo hi")).shell_command(&names).as_deref(), Some("echo hi"));
    }
}
