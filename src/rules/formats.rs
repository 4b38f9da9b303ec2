//! Formats as data: a mapping file (`rules/formats/<name>.toml`) tells coroner how to read a
//! JSON shape no adapter was written for — how to recognize it, where its records and steps
//! are, and which field holds the role, the text, the tool name, the arguments, the result, the
//! exit code, the end status and the usage.
//!
//! Why data and not Rust: teams publish runs in their own JSON, one shape per team, and a
//! benchmark engineer must be able to read such a run today, without a release of coroner.
//! The mapping only decodes — which field is what. What a status string means stays with the
//! harness profile the mapping names, as for every built-in adapter.
//!
//! This module loads and checks the files (diagnostics point into the TOML); the reading itself
//! is the ingest adapter `ingest::adapters::mapped`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::load::{RulesError, is_kebab};
use crate::model::Role;

/// The version of the mapping schema this coroner reads.
pub const MAPPING_VERSION: u32 = 1;

/// Built-in mappings (`rules/formats/*.toml`).
pub const BUILTIN_FORMATS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_formats.rs"));

/// A dotted path into a JSON value: `info.exit_status`, `messages.0.content`. A segment of
/// digits indexes an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    segs: Vec<String>,
    shown: String,
}

impl JsonPath {
    fn parse(s: &str) -> Option<Self> {
        let segs: Vec<String> = s.split('.').map(str::to_string).collect();
        if s.is_empty() || segs.iter().any(String::is_empty) {
            return None;
        }
        Some(Self { segs, shown: s.to_string() })
    }

    /// The value at this path, if every segment is there.
    #[must_use]
    pub fn get<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        let mut cur = v;
        for s in &self.segs {
            cur = match cur {
                Value::Object(m) => m.get(s)?,
                Value::Array(a) => a.get(s.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    /// The field names (and array indexes) in order.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.segs.iter().map(String::as_str)
    }

    /// The path as written in the mapping, for notes and signal fields.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.shown
    }
}

/// Where a value may be: the first of these paths that is present and not null.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paths(pub Vec<JsonPath>);

impl Paths {
    /// The first present, non-null value and the path it was found at.
    #[must_use]
    pub fn find<'v>(&self, v: &'v Value) -> Option<(&'v Value, &JsonPath)> {
        self.0.iter().find_map(|p| p.get(v).filter(|x| !x.is_null()).map(|x| (x, p)))
    }

    #[must_use]
    pub fn get<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.find(v).map(|(x, _)| x)
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How the file is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// One JSON document: one record, or an array of records.
    Json,
    /// JSON Lines: one value per line.
    Jsonl,
}

/// In a JSON Lines file, what one line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LinesAre {
    /// Each line is a record with its own steps.
    #[default]
    Records,
    /// Each line is a step of the file's one record (an event stream).
    Steps,
}

/// How detection recognizes the format.
#[derive(Debug, Clone)]
pub struct Recognize {
    /// Keys the probe must see, as detection writes them (`trajectory`, `info.exit_status`).
    pub keys: Vec<String>,
    /// A key whose value names the format: a match is a marker, the strongest evidence.
    pub marker: Option<(String, String)>,
    /// The file name (lower-cased) must match this too.
    pub file_name: Option<regex::Regex>,
}

/// Where the role of a step comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleFrom {
    Fixed(Role),
    /// A field whose value (`user`, `assistant`, `tool`, ...) is the role.
    Field(Paths),
}

/// A list of tool calls inside a step (OpenAI's `tool_calls`).
#[derive(Debug, Clone, Default)]
pub struct CallsMap {
    pub at: Paths,
    pub name: Paths,
    pub arguments: Paths,
    pub id: Paths,
}

/// Which fields of one kind of step hold what.
#[derive(Debug, Clone)]
pub struct StepMap {
    /// Entries of this kind are counted and not turned into steps (a judge's call).
    pub skip: bool,
    pub role: RoleFrom,
    pub text: Paths,
    pub reasoning: Paths,
    pub tool: Paths,
    pub arguments: Paths,
    pub call_id: Paths,
    pub calls: Option<CallsMap>,
    /// A list of results inside the entry (trae-agent's `tool_results`), each answering a call
    /// by id.
    pub results: Option<ResultsMap>,
    pub result: Paths,
    /// The name of the tool a result-only entry answers (paired by name when it has no id).
    pub result_tool: Paths,
    /// Appended to the result's output when not empty (a command's stderr beside its stdout).
    pub stderr: Paths,
    pub result_call_id: Paths,
    pub exit_code: Paths,
    pub is_error: Paths,
    /// A field whose presence marks the result an error; its text is added to the output.
    pub error: Paths,
    pub timestamp: Paths,
    pub prompt_tokens: Paths,
    pub completion_tokens: Paths,
    pub cost: Paths,
    /// Each present and not empty becomes an error signal at the entry's step, named by its
    /// path (an API failure logged on the step it cut short).
    pub errors: Vec<JsonPath>,
    /// The task as the user gave it, logged on an entry (the first model call's prompt): a user
    /// step before the entry's own.
    pub prompt: Paths,
}

/// A list of results inside an entry.
#[derive(Debug, Clone, Default)]
pub struct ResultsMap {
    pub at: Paths,
    pub output: Paths,
    pub call_id: Paths,
    pub name: Paths,
    pub exit_code: Paths,
    /// Text that marks the result an error (stderr, an exception message), added to the output.
    pub error: Paths,
    pub is_error: Paths,
    /// The inverse of `is_error` (`success: false` is an error).
    pub ok: Paths,
}

/// Where a record's task id comes from when `records.task` finds none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TaskFrom {
    /// The file name without its extension.
    #[default]
    FileStem,
    /// The name of the directory holding the file (runs that write `<task>/trajectory.json`).
    ParentDir,
}

/// Where a record's own facts are.
#[derive(Debug, Clone, Default)]
pub struct RecordMap {
    /// Path to the record or to an array of records; the whole document when empty.
    pub at: Option<JsonPath>,
    pub lines: LinesAre,
    pub task: Paths,
    pub session: Paths,
    pub model: Paths,
    pub harness: Paths,
    pub trial: Paths,
    /// The array of steps inside the record (none for JSONL whose lines are steps).
    pub steps: Option<JsonPath>,
    pub submission: Paths,
    /// Each present one becomes a status signal named by its path, for the profile to read.
    pub statuses: Vec<JsonPath>,
    pub errors: Vec<JsonPath>,
    /// A boolean (or 0/1) saying whether the task was solved.
    pub resolved: Paths,
    pub reward: Paths,
    pub cost: Paths,
    pub prompt_tokens: Paths,
    pub completion_tokens: Paths,
    pub started_at: Paths,
    pub ended_at: Paths,
    /// The tools the harness offered: names, or objects with a `name` (or `function.name`).
    pub tools: Paths,
    pub task_from: TaskFrom,
    /// The task as given to the agent: the record's first step, a user's.
    pub prompt: Paths,
    /// The run's limits, as the harness wrote them: budget signals for the profile.
    pub step_limit: Paths,
    pub cost_limit: Paths,
}

/// What the mapping's own fixture must read as (the test suite checks the shipped mappings'; a
/// user checks theirs with `coroner ingest --rules DIR FIXTURE`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// The fixture file, beside the mapping.
    pub file: String,
    pub records: usize,
    pub steps: usize,
    pub calls: usize,
    pub results: usize,
    /// The first record's task id.
    #[serde(default)]
    pub task: Option<String>,
}

/// One loaded mapping.
#[derive(Debug, Clone)]
pub struct FormatMapping {
    pub name: String,
    pub description: String,
    pub versions: String,
    /// The harness records are attributed to when `records.harness` finds nothing; its profile
    /// interprets them.
    pub harness: String,
    pub layout: Layout,
    pub recognize: Option<Recognize>,
    pub records: RecordMap,
    /// A field whose value picks one of `kinds`; steps of a kind not listed are counted, not
    /// read, when it is set.
    pub kind: Option<JsonPath>,
    pub default_step: StepMap,
    pub kinds: BTreeMap<String, StepMap>,
    pub fixture: Option<Fixture>,
    /// The file it was loaded from, as shown.
    pub file: String,
    /// sha256 of the file's text.
    pub digest: String,
}

// ---------------------------------------------------------------------------------------------
// The TOML as written.

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

type RawPaths = Option<Spanned<OneOrMany>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMapping {
    mapping: u32,
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    versions: String,
    harness: String,
    layout: Layout,
    #[serde(default)]
    recognize: Option<RawRecognize>,
    #[serde(default)]
    records: RawRecords,
    #[serde(default)]
    steps: RawStep,
    #[serde(default)]
    fixture: Option<Spanned<Fixture>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecognize {
    #[serde(default)]
    keys: Vec<String>,
    #[serde(default)]
    marker: Option<RawMarker>,
    #[serde(default)]
    file_name: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMarker {
    key: String,
    value: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRecords {
    #[serde(default)]
    at: RawPaths,
    #[serde(default)]
    lines: Option<Spanned<LinesAre>>,
    #[serde(default)]
    task: RawPaths,
    #[serde(default)]
    session: RawPaths,
    #[serde(default)]
    model: RawPaths,
    #[serde(default)]
    harness: RawPaths,
    #[serde(default)]
    trial: RawPaths,
    #[serde(default)]
    steps: RawPaths,
    #[serde(default)]
    submission: RawPaths,
    #[serde(default)]
    statuses: RawPaths,
    #[serde(default)]
    errors: RawPaths,
    #[serde(default)]
    resolved: RawPaths,
    #[serde(default)]
    reward: RawPaths,
    #[serde(default)]
    cost: RawPaths,
    #[serde(default)]
    prompt_tokens: RawPaths,
    #[serde(default)]
    completion_tokens: RawPaths,
    #[serde(default)]
    started_at: RawPaths,
    #[serde(default)]
    ended_at: RawPaths,
    #[serde(default)]
    tools: RawPaths,
    #[serde(default)]
    task_from: Option<TaskFrom>,
    #[serde(default)]
    prompt: RawPaths,
    #[serde(default)]
    step_limit: RawPaths,
    #[serde(default)]
    cost_limit: RawPaths,
}

/// `[steps]` (the defaults, which name the kind field and list the kinds) and each
/// `[steps.kinds.<kind>]` (which may not).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawStep {
    #[serde(default)]
    kind: RawPaths,
    #[serde(default)]
    kinds: Option<Spanned<BTreeMap<String, RawStep>>>,
    #[serde(default)]
    skip: Option<bool>,
    #[serde(default)]
    role: Option<Spanned<String>>,
    #[serde(default)]
    role_field: RawPaths,
    #[serde(default)]
    text: RawPaths,
    #[serde(default)]
    reasoning: RawPaths,
    #[serde(default)]
    tool: RawPaths,
    #[serde(default)]
    arguments: RawPaths,
    #[serde(default)]
    call_id: RawPaths,
    #[serde(default)]
    calls: Option<RawCalls>,
    #[serde(default)]
    results: Option<RawResults>,
    #[serde(default)]
    result: RawPaths,
    #[serde(default)]
    result_tool: RawPaths,
    #[serde(default)]
    stderr: RawPaths,
    #[serde(default)]
    errors: RawPaths,
    #[serde(default)]
    prompt: RawPaths,
    #[serde(default)]
    result_call_id: RawPaths,
    #[serde(default)]
    exit_code: RawPaths,
    #[serde(default)]
    is_error: RawPaths,
    #[serde(default)]
    error: RawPaths,
    #[serde(default)]
    timestamp: RawPaths,
    #[serde(default)]
    prompt_tokens: RawPaths,
    #[serde(default)]
    completion_tokens: RawPaths,
    #[serde(default)]
    cost: RawPaths,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCalls {
    at: RawPaths,
    #[serde(default)]
    name: RawPaths,
    #[serde(default)]
    arguments: RawPaths,
    #[serde(default)]
    id: RawPaths,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResults {
    at: RawPaths,
    #[serde(default)]
    output: RawPaths,
    #[serde(default)]
    call_id: RawPaths,
    #[serde(default)]
    name: RawPaths,
    #[serde(default)]
    exit_code: RawPaths,
    #[serde(default)]
    error: RawPaths,
    #[serde(default)]
    is_error: RawPaths,
    #[serde(default)]
    ok: RawPaths,
}

/// Checks the paths of one field; the error points at the field's value.
struct Check<'a> {
    file: &'a str,
    text: &'a str,
}

impl Check<'_> {
    fn err(&self, span: Option<std::ops::Range<usize>>, msg: impl Into<String>, help: impl Into<String>) -> RulesError {
        RulesError::at(self.file, self.text, span, msg, Some(help.into()))
    }

    fn paths(&self, raw: &RawPaths, field: &str) -> Result<Paths, RulesError> {
        let Some(raw) = raw else { return Ok(Paths::default()) };
        let list: Vec<&String> = match raw.get_ref() {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v.iter().collect(),
        };
        let mut out = Vec::new();
        for s in list {
            out.push(JsonPath::parse(s).ok_or_else(|| {
                self.err(
                    Some(raw.span()),
                    format!("`{field}`: `{s}` is not a path"),
                    "a path is field names joined by `.` (`info.exit_status`), a number indexing an array (`messages.0`)",
                )
            })?);
        }
        Ok(Paths(out))
    }

    fn one(&self, raw: &RawPaths, field: &str) -> Result<Option<JsonPath>, RulesError> {
        let p = self.paths(raw, field)?;
        if p.0.len() > 1 {
            let span = raw.as_ref().map(Spanned::span);
            return Err(self.err(span, format!("`{field}` takes one path"), "give the one path as a string"));
        }
        Ok(p.0.into_iter().next())
    }

    fn role(&self, raw: &Spanned<String>) -> Result<Role, RulesError> {
        role_named(raw.get_ref()).ok_or_else(|| {
            self.err(Some(raw.span()), format!("`{}` is not a role", raw.get_ref()), "roles: system, user, assistant, tool, environment")
        })
    }

    fn step(&self, raw: &RawStep, base: Option<&StepMap>, what: &str) -> Result<StepMap, RulesError> {
        let or = |p: Paths, f: fn(&StepMap) -> &Paths| if p.is_empty() { base.map(f).cloned().unwrap_or_default() } else { p };
        let role = match (&raw.role, &raw.role_field) {
            (Some(r), None) => RoleFrom::Fixed(self.role(r)?),
            (None, Some(_)) => RoleFrom::Field(self.paths(&raw.role_field, "role_field")?),
            (Some(r), Some(_)) => {
                return Err(self.err(Some(r.span()), format!("{what}: both `role` and `role_field`"), "a role is fixed or read, not both"));
            }
            (None, None) => base.map_or(RoleFrom::Fixed(Role::Assistant), |b| b.role.clone()),
        };
        let calls = match &raw.calls {
            Some(c) => {
                let at = self.paths(&c.at, "calls.at")?;
                Some(CallsMap {
                    at,
                    name: self.paths(&c.name, "calls.name")?,
                    arguments: self.paths(&c.arguments, "calls.arguments")?,
                    id: self.paths(&c.id, "calls.id")?,
                })
            }
            None => base.and_then(|b| b.calls.clone()),
        };
        let results = match &raw.results {
            Some(r) => Some(ResultsMap {
                at: self.paths(&r.at, "results.at")?,
                output: self.paths(&r.output, "results.output")?,
                call_id: self.paths(&r.call_id, "results.call_id")?,
                name: self.paths(&r.name, "results.name")?,
                exit_code: self.paths(&r.exit_code, "results.exit_code")?,
                error: self.paths(&r.error, "results.error")?,
                is_error: self.paths(&r.is_error, "results.is_error")?,
                ok: self.paths(&r.ok, "results.ok")?,
            }),
            None => base.and_then(|b| b.results.clone()),
        };
        let errors = self.paths(&raw.errors, "errors")?.0;
        Ok(StepMap {
            skip: raw.skip.unwrap_or_else(|| base.is_some_and(|b| b.skip)),
            role,
            text: or(self.paths(&raw.text, "text")?, |b| &b.text),
            reasoning: or(self.paths(&raw.reasoning, "reasoning")?, |b| &b.reasoning),
            tool: or(self.paths(&raw.tool, "tool")?, |b| &b.tool),
            arguments: or(self.paths(&raw.arguments, "arguments")?, |b| &b.arguments),
            call_id: or(self.paths(&raw.call_id, "call_id")?, |b| &b.call_id),
            calls,
            results,
            result: or(self.paths(&raw.result, "result")?, |b| &b.result),
            result_tool: or(self.paths(&raw.result_tool, "result_tool")?, |b| &b.result_tool),
            stderr: or(self.paths(&raw.stderr, "stderr")?, |b| &b.stderr),
            result_call_id: or(self.paths(&raw.result_call_id, "result_call_id")?, |b| &b.result_call_id),
            exit_code: or(self.paths(&raw.exit_code, "exit_code")?, |b| &b.exit_code),
            is_error: or(self.paths(&raw.is_error, "is_error")?, |b| &b.is_error),
            error: or(self.paths(&raw.error, "error")?, |b| &b.error),
            timestamp: or(self.paths(&raw.timestamp, "timestamp")?, |b| &b.timestamp),
            prompt_tokens: or(self.paths(&raw.prompt_tokens, "prompt_tokens")?, |b| &b.prompt_tokens),
            completion_tokens: or(self.paths(&raw.completion_tokens, "completion_tokens")?, |b| &b.completion_tokens),
            cost: or(self.paths(&raw.cost, "cost")?, |b| &b.cost),
            errors: if errors.is_empty() { base.map(|b| b.errors.clone()).unwrap_or_default() } else { errors },
            prompt: or(self.paths(&raw.prompt, "prompt")?, |b| &b.prompt),
        })
    }
}

/// The role a word names, as transcripts write roles.
#[must_use]
pub fn role_named(s: &str) -> Option<Role> {
    Some(match s.to_ascii_lowercase().as_str() {
        "system" | "developer" => Role::System,
        "user" | "human" => Role::User,
        "assistant" | "ai" | "model" | "agent" => Role::Assistant,
        "tool" | "function" | "ipython" | "observation" => Role::Tool,
        "environment" | "env" => Role::Environment,
        _ => return None,
    })
}

impl FormatMapping {
    /// Parses and checks a mapping file. (That its name is not a built-in adapter's is checked
    /// where the adapters are assembled, in ingest: the rules know no adapters.)
    ///
    /// # Errors
    /// TOML syntax and types, an unknown field, a path that is not one, a role that is not one,
    /// a layout without steps.
    pub fn parse(file: &str, text: &str) -> Result<Self, RulesError> {
        let raw: RawMapping = toml::from_str(text).map_err(|e| {
            RulesError::at(file, text, e.span(), e.message().to_string(), Some("fix the TOML syntax or the field's type".into()))
        })?;
        let c = Check { file, text };
        if raw.mapping != MAPPING_VERSION {
            return Err(c.err(None, format!("mapping version {} is not supported", raw.mapping), "this coroner reads `mapping = 1`"));
        }
        let name = raw.name.get_ref();
        if !is_kebab(name) {
            return Err(c.err(Some(raw.name.span()), format!("format name `{name}` is not kebab-case"), "lower-case words joined by `-`"));
        }
        if raw.harness.trim().is_empty() {
            return Err(c.err(None, "`harness` is empty", "name the harness whose profile interprets these records (or `default`)"));
        }
        let recognize = match &raw.recognize {
            None => None,
            Some(r) => {
                if r.keys.is_empty() && r.marker.is_none() {
                    return Err(c.err(
                        None,
                        "`[recognize]` has neither `keys` nor `marker`",
                        "list keys every file of the format has, or drop `[recognize]` to use the mapping with --format only",
                    ));
                }
                let file_name = match &r.file_name {
                    None => None,
                    Some(f) => Some(regex::Regex::new(f.get_ref()).map_err(|e| {
                        c.err(Some(f.span()), format!("`file_name` is not a regex: {e}"), "a regex over the lower-cased file name")
                    })?),
                };
                Some(Recognize { keys: r.keys.clone(), marker: r.marker.as_ref().map(|m| (m.key.clone(), m.value.clone())), file_name })
            }
        };
        let r = &raw.records;
        let lines = r.lines.as_ref().map_or(LinesAre::Records, |l| *l.get_ref());
        if let Some(l) = &r.lines
            && raw.layout == Layout::Json
        {
            return Err(c.err(Some(l.span()), "`records.lines` is for `layout = \"jsonl\"`", "remove it, or set the layout to jsonl"));
        }
        let steps = c.one(&r.steps, "records.steps")?;
        if steps.is_none() && !(raw.layout == Layout::Jsonl && lines == LinesAre::Steps) {
            return Err(c.err(
                None,
                "`records.steps` is missing",
                "say where each record's array of steps is (`records.steps = \"trajectory\"`), or use `layout = \"jsonl\"` with `records.lines = \"steps\"`",
            ));
        }
        if let (Some(s), true) = (&r.steps, raw.layout == Layout::Jsonl && lines == LinesAre::Steps) {
            return Err(c.err(Some(s.span()), "`records.steps` with lines that are steps", "each line is a step: remove `records.steps`"));
        }
        let records = RecordMap {
            at: c.one(&r.at, "records.at")?,
            lines,
            task: c.paths(&r.task, "records.task")?,
            session: c.paths(&r.session, "records.session")?,
            model: c.paths(&r.model, "records.model")?,
            harness: c.paths(&r.harness, "records.harness")?,
            trial: c.paths(&r.trial, "records.trial")?,
            steps,
            submission: c.paths(&r.submission, "records.submission")?,
            statuses: c.paths(&r.statuses, "records.statuses")?.0,
            errors: c.paths(&r.errors, "records.errors")?.0,
            resolved: c.paths(&r.resolved, "records.resolved")?,
            reward: c.paths(&r.reward, "records.reward")?,
            cost: c.paths(&r.cost, "records.cost")?,
            prompt_tokens: c.paths(&r.prompt_tokens, "records.prompt_tokens")?,
            completion_tokens: c.paths(&r.completion_tokens, "records.completion_tokens")?,
            started_at: c.paths(&r.started_at, "records.started_at")?,
            ended_at: c.paths(&r.ended_at, "records.ended_at")?,
            tools: c.paths(&r.tools, "records.tools")?,
            task_from: r.task_from.unwrap_or_default(),
            prompt: c.paths(&r.prompt, "records.prompt")?,
            step_limit: c.paths(&r.step_limit, "records.step_limit")?,
            cost_limit: c.paths(&r.cost_limit, "records.cost_limit")?,
        };
        let default_step = c.step(&raw.steps, None, "[steps]")?;
        let kind = c.one(&raw.steps.kind, "steps.kind")?;
        let mut kinds = BTreeMap::new();
        if let Some(listed) = &raw.steps.kinds {
            if kind.is_none() {
                return Err(c.err(
                    Some(listed.span()),
                    "`[steps.kinds.*]` without `steps.kind`",
                    "say which field names a step's kind (`kind = \"type\"`)",
                ));
            }
            for (k, s) in listed.get_ref() {
                if let Some(inner) = s.kind.as_ref().map(Spanned::span).or_else(|| s.kinds.as_ref().map(Spanned::span)) {
                    return Err(c.err(
                        Some(inner),
                        format!("`[steps.kinds.{k}]` names kinds itself"),
                        "`kind` and `kinds` belong to `[steps]`",
                    ));
                }
                kinds.insert(k.clone(), c.step(s, Some(&default_step), &format!("[steps.kinds.{k}]"))?);
            }
        }
        let fixture = raw.fixture.as_ref().map(|f| f.get_ref().clone());
        if let Some(f) = &raw.fixture {
            let p = std::path::Path::new(&f.get_ref().file);
            if p.is_absolute() || p.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
                return Err(c.err(
                    Some(f.span()),
                    "`fixture.file` must be a path below the mapping's directory",
                    "a relative path without `..` (`acme-runs.fixture.json`, `acme/task-1/run.json`)",
                ));
            }
        }
        let digest = {
            use sha2::{Digest, Sha256};
            crate::util::hex(&Sha256::digest(text.as_bytes()))
        };
        Ok(Self {
            name: name.clone(),
            description: raw.description.clone(),
            versions: raw.versions.clone(),
            harness: raw.harness.clone(),
            layout: raw.layout,
            recognize,
            records,
            kind,
            default_step,
            kinds,
            fixture,
            file: file.to_string(),
            digest,
        })
    }

    /// The step map for an entry, or `Err(kind)` when its kind is not listed (or is skipped).
    ///
    /// # Errors
    /// The kind's name, for the tally of entries not read.
    pub fn step_map(&self, entry: &Value) -> Result<&StepMap, String> {
        let Some(kind) = &self.kind else { return Ok(&self.default_step) };
        let k = match kind.get(entry) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => "(no kind)".to_string(),
            Some(other) => other.to_string(),
        };
        match self.kinds.get(&k) {
            Some(m) if !m.skip => Ok(m),
            _ => Err(k),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = r#"
mapping = 1
name = "acme-runs"
harness = "acme"
layout = "json"

[recognize]
keys = ["instance_id", "trajectory"]

[records]
task = "instance_id"
steps = "trajectory"

[steps]
kind = "type"

[steps.kinds.llm_call]
role = "assistant"
text = ["output", "content"]

[steps.kinds.tool_call]
tool = "tool"
arguments = "arguments"
result = "output"
"#;

    #[test]
    fn a_mapping_loads_and_kinds_inherit_the_defaults() {
        let m = FormatMapping::parse("f.toml", MIN).unwrap();
        assert_eq!(m.name, "acme-runs");
        assert_eq!(m.kinds.len(), 2);
        assert_eq!(m.kinds["tool_call"].role, RoleFrom::Fixed(Role::Assistant));
        assert_eq!(m.records.steps.as_ref().map(JsonPath::as_str), Some("trajectory"));
        let entry: Value = serde_json::json!({"type": "judge_call"});
        assert_eq!(m.step_map(&entry).unwrap_err(), "judge_call");
        let entry: Value = serde_json::json!({"type": "llm_call"});
        assert_eq!(m.step_map(&entry).unwrap().text.0.len(), 2);
    }

    #[test]
    fn a_bad_path_points_at_its_field() {
        let text = MIN.replace("task = \"instance_id\"", "task = \"info..id\"");
        let e = FormatMapping::parse("f.toml", &text).unwrap_err();
        assert!(e.message.contains("`info..id` is not a path"), "{}", e.message);
        let span = e.span.unwrap();
        assert_eq!(&text[span.offset()..span.offset() + span.len()], "\"info..id\"");
    }

    #[test]
    fn an_unknown_field_and_a_bad_role_are_errors_in_the_toml() {
        let e = FormatMapping::parse("f.toml", &MIN.replace("role = \"assistant\"", "role = \"robot\"")).unwrap_err();
        assert!(e.message.contains("`robot` is not a role"), "{}", e.message);
        let e = FormatMapping::parse("f.toml", &MIN.replace("text = [", "txt = [")).unwrap_err();
        assert!(e.message.contains("unknown field `txt`"), "{}", e.message);
    }

    #[test]
    fn a_mapping_without_steps_is_refused() {
        let e = FormatMapping::parse("f.toml", &MIN.replace("steps = \"trajectory\"", "")).unwrap_err();
        assert!(e.message.contains("`records.steps` is missing"), "{}", e.message);
    }

    #[test]
    fn paths_index_arrays_and_skip_nulls() {
        let v = serde_json::json!({"a": [{"b": 1}], "n": null, "s": "x"});
        let p = Paths(vec![JsonPath::parse("n").unwrap(), JsonPath::parse("a.0.b").unwrap()]);
        assert_eq!(p.find(&v).map(|(x, p)| (x.clone(), p.as_str().to_string())), Some((serde_json::json!(1), "a.0.b".to_string())));
        assert!(JsonPath::parse("a.9.b").unwrap().get(&v).is_none());
        assert!(JsonPath::parse("s.x").unwrap().get(&v).is_none());
    }
}
