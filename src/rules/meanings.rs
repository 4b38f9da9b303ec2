//! What a harness's words mean: the interpretation tables of a profile (`[[status]]`,
//! `[[error]]`, `[[log_line]]`, `[[unknown_tool]]`, `[[format_error]]`), read from TOML and
//! compiled once. The interpretation pass (`crate::interpret`) applies them; every entry has an
//! id, so a termination can name the entry that decided it and a fixture can test each one.
//!
//! ```toml
//! [[status]]
//! id = "mini-limits-exceeded"
//! field = "info.exit_status"    # optional: only statuses read from this field (`x.*` for a
//!                               # prefix, `*stop_reason` for a suffix)
//! value = "LimitsExceeded"      # the exact string; or `pattern = "..."`, a regex
//! means = "budget:steps"        # agent_finished | agent_stopped_without_finish | harness_error
//!                               # | infrastructure | unknown | budget:<kind>
//! by = "harness"                # who enforced a budget: harness | benchmark | provider | caller
//! hook = "limits-reached"      # optional: a named Rust hook settles what data cannot
//! detail = "..."                # optional: said in the termination's detail
//! gave_up = true                # optional: the status says the agent itself gave up
//! waits = true                  # optional, with budget:wall_time: the runner's clock fired but
//!                               # the runner waited for the agent, so an end of the agent's own
//!                               # in its log (before the phase ended) is what ended the run
//! ```
//!
//! A pattern's named groups `consumed` and `limit` give the amounts, and an `[[unknown_tool]]`
//! pattern's group `name` the tool it rejected. An `[[unknown_tool]]` entry reads a result's
//! output, or its error type with `field = "error_type"`; `errors_only = true` limits it to
//! results the format marked as errors. A `[[format_error]]` entry with `in_call_results = true`
//! also reads the results of calls: the harness answered a reply it refused in the result of a
//! call it had parsed from it, so that call never ran.

use serde::Deserialize;
use toml::Spanned;

use super::load::RulesError;
use crate::model::{Budget, Enforcer, TerminationKind};

/// Named hooks for decisions data cannot express; `crate::interpret::hooks` implements each.
pub const HOOKS: &[&str] = &["limits-reached"];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEntry {
    pub id: Spanned<String>,
    #[serde(default)]
    pub field: Option<String>,
    #[serde(default)]
    pub value: Option<Spanned<String>>,
    #[serde(default)]
    pub pattern: Option<Spanned<String>>,
    #[serde(default)]
    pub means: Option<Spanned<String>>,
    #[serde(default)]
    pub by: Option<Spanned<String>>,
    #[serde(default)]
    pub hook: Option<Spanned<String>>,
    #[serde(default)]
    pub detail: Option<String>,
    #[serde(default)]
    pub gave_up: bool,
    #[serde(default)]
    pub waits: Option<Spanned<bool>>,
    #[serde(default)]
    pub errors_only: bool,
    #[serde(default)]
    pub in_call_results: Option<Spanned<bool>>,
}

/// Which table an entry belongs to, and so which raw facts it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Table {
    Status,
    Error,
    LogLine,
    UnknownTool,
    FormatError,
}

impl Table {
    pub const ALL: [Self; 5] = [Self::Status, Self::Error, Self::LogLine, Self::UnknownTool, Self::FormatError];

    /// The TOML array the table is written as.
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            Self::Status => "status",
            Self::Error => "error",
            Self::LogLine => "log_line",
            Self::UnknownTool => "unknown_tool",
            Self::FormatError => "format_error",
        }
    }

    /// Whether its entries say what a termination is (the other two mark tool results and steps).
    #[must_use]
    pub fn ends_runs(self) -> bool {
        matches!(self, Self::Status | Self::Error | Self::LogLine)
    }
}

/// A termination an entry gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meaning {
    pub kind: TerminationKind,
    pub budget: Option<Budget>,
}

impl Meaning {
    /// Parses `agent_finished`, `budget:steps`, ...
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        let kind = |k| Some(Self { kind: k, budget: None });
        match s {
            "agent_finished" => kind(TerminationKind::AgentFinished),
            "agent_stopped_without_finish" => kind(TerminationKind::AgentStoppedWithoutFinish),
            "harness_error" => kind(TerminationKind::HarnessError),
            "infrastructure" => kind(TerminationKind::Infrastructure),
            "unknown" => kind(TerminationKind::Unknown),
            _ => {
                let b = s.strip_prefix("budget:")?;
                let budget: Budget = serde_json::from_value(serde_json::Value::String(b.to_string())).ok()?;
                Some(Self { kind: TerminationKind::Budget, budget: Some(budget) })
            }
        }
    }

    /// A meaning that a more specific cause found beside it replaces: nothing said, a harness
    /// crash no entry explains, or a clock that fired after whatever really stopped the run.
    #[must_use]
    pub fn is_weak(self) -> bool {
        matches!(self.kind, TerminationKind::Unknown | TerminationKind::HarnessError)
            || (self.kind == TerminationKind::Budget && matches!(self.budget, Some(Budget::WallTime | Budget::Other) | None))
    }

    /// Who enforces a budget when the entry does not say: the provider for its own windows,
    /// the harness otherwise.
    #[must_use]
    pub fn default_enforcer(self) -> Option<Enforcer> {
        match self.budget? {
            Budget::Context | Budget::OutputTokens => Some(Enforcer::Provider),
            _ => Some(Enforcer::Harness),
        }
    }

    #[must_use]
    pub fn name(self) -> String {
        match self.budget {
            Some(b) => format!("budget:{}", crate::util::snake(&b)),
            None => crate::util::snake(&self.kind),
        }
    }
}

/// How an entry recognizes its text.
#[derive(Debug, Clone)]
pub enum Matcher {
    Exact(String),
    Pattern(super::pattern::Pattern),
}

/// One compiled entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub id: String,
    pub table: Table,
    /// The profile file it came from, for `rules explain`.
    pub file: String,
    pub field: Option<String>,
    pub matcher: Matcher,
    pub means: Option<Meaning>,
    pub by: Option<Enforcer>,
    pub hook: Option<String>,
    pub detail: Option<String>,
    pub gave_up: bool,
    /// A wall clock after which the runner waited for the agent (Terminal-Bench 1): the clock
    /// fired, but the agent's own end in its log, logged before the phase ended, ended the run.
    pub waits: bool,
    /// `[[unknown_tool]]`: reads only results the format marked as errors (for phrases that
    /// ordinary tool output can contain).
    pub errors_only: bool,
    /// `[[format_error]]`: the complaint can stand in a call's result (a harness that keeps the
    /// call it parsed from a refused reply and answers it with the complaint, as Harbor's ATIF
    /// of mini-swe-agent does): such a call never ran. Opt-in, because ordinary tool output says
    /// "parse error" too.
    pub in_call_results: bool,
}

/// What an entry found in a text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hit {
    /// The matched part of the text.
    pub matched: String,
    pub name: Option<String>,
    pub consumed: Option<f64>,
    pub limit: Option<f64>,
}

impl Entry {
    /// Whether the entry reads facts from `field` (`None`: any field).
    #[must_use]
    pub fn reads(&self, field: &str) -> bool {
        match self.field.as_deref() {
            None => true,
            Some(f) => match (f.strip_prefix('*'), f.strip_suffix('*')) {
                (Some(suffix), _) => field.ends_with(suffix),
                (None, Some(prefix)) => field.starts_with(prefix),
                (None, None) => f == field,
            },
        }
    }

    /// Matches `text`: the whole string for `value`, a search for `pattern`.
    #[must_use]
    pub fn find(&self, text: &str) -> Option<Hit> {
        match &self.matcher {
            Matcher::Exact(v) => (v == text.trim()).then(|| Hit { matched: v.clone(), ..Hit::default() }),
            Matcher::Pattern(re) => {
                if !re.may_match(text) {
                    return None;
                }
                let c = re.captures(text)?;
                let num = |g: &str| c.name(g).and_then(|m| m.as_str().trim_end_matches('.').parse::<f64>().ok());
                Some(Hit {
                    matched: c.get(0).map_or("", |m| m.as_str()).to_string(),
                    name: c.name("name").map(|m| m.as_str().to_string()),
                    consumed: num("consumed"),
                    limit: num("limit"),
                })
            }
        }
    }

    /// Whether it matches `text`, without the captures [`Entry::find`] builds: a search over a
    /// long tool output stops at its first match.
    #[must_use]
    pub fn matches(&self, text: &str) -> bool {
        match &self.matcher {
            Matcher::Exact(v) => v == text.trim(),
            Matcher::Pattern(re) => re.may_match(text) && re.is_match(text),
        }
    }

    /// The pattern or value as written, for `rules explain`.
    #[must_use]
    pub fn shown(&self) -> String {
        match &self.matcher {
            Matcher::Exact(v) => format!("= {v}"),
            Matcher::Pattern(re) => format!("~ {}", re.as_str()),
        }
    }
}

/// A profile's entries, table by table; the harness's own entries before `default`'s, so a
/// harness can say what a common string means for it.
#[derive(Debug, Clone, Default)]
pub struct Meanings {
    pub entries: Vec<Entry>,
}

impl Meanings {
    /// The entries of one table, in the order they are tried.
    pub fn table(&self, table: Table) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(move |e| e.table == table)
    }

    #[must_use]
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }
}

/// Compiles the tables of `layers` (default first); the last layer's entries come first.
///
/// # Errors
/// A bad id, regex, meaning, enforcer or hook, pointing into its file.
pub fn compile(layers: &[(&str, &str, &super::profile::RawProfile)]) -> Result<Meanings, RulesError> {
    let mut entries: Vec<Entry> = Vec::new();
    for (file, text, raw) in layers.iter().rev() {
        for table in Table::ALL {
            for r in raw.entries(table) {
                let e = compile_entry(file, text, table, r)?;
                if entries.iter().any(|x| x.id == e.id) {
                    return Err(RulesError::at(
                        file,
                        text,
                        Some(r.id.span()),
                        format!("interpretation entry `{}` is defined twice", e.id),
                        Some("entry ids are unique across a profile and `default`".into()),
                    ));
                }
                entries.push(e);
            }
        }
    }
    Ok(Meanings { entries })
}

fn compile_entry(file: &str, text: &str, table: Table, r: &RawEntry) -> Result<Entry, RulesError> {
    let err = |span: std::ops::Range<usize>, msg: String, help: &str| RulesError::at(file, text, Some(span), msg, Some(help.to_string()));
    let id = r.id.get_ref();
    if !super::load::is_kebab(id) {
        return Err(err(r.id.span(), format!("entry id `{id}` is not kebab-case"), "ids are lower-case words joined by `-`"));
    }
    let matcher = match (&r.value, &r.pattern) {
        (Some(v), None) => Matcher::Exact(v.get_ref().clone()),
        (None, Some(p)) => Matcher::Pattern(super::profile::compiled(p.get_ref()).map_err(|e| {
            err(p.span(), format!("invalid regex: {e}"), "patterns use the Rust `regex` syntax; escape backslashes in TOML strings")
        })?),
        _ => {
            return Err(err(
                r.id.span(),
                format!("entry `{id}` needs exactly one of `value` and `pattern`"),
                "`value` matches the whole string, `pattern` searches it",
            ));
        }
    };
    let means = match (&r.means, table.ends_runs()) {
        (Some(m), true) => Some(Meaning::parse(m.get_ref()).ok_or_else(|| {
            err(
                m.span(),
                format!("`{}` is not a termination", m.get_ref()),
                "use agent_finished, agent_stopped_without_finish, harness_error, infrastructure, unknown, or budget:<steps|tokens|context|output_tokens|cost|wall_time|command_timeout|attempts|loop_guard|format_errors|other>",
            )
        })?),
        (None, true) => return Err(err(r.id.span(), format!("entry `{id}` says nothing: it needs `means`"), "say what the run's end was")),
        (Some(m), false) => {
            return Err(err(m.span(), format!("`means` has no place in [[{}]]", table.key()), "these entries mark tool results and replies"));
        }
        (None, false) => None,
    };
    let by =
        match &r.by {
            None => None,
            Some(b) => Some(serde_json::from_value::<Enforcer>(serde_json::Value::String(b.get_ref().clone())).map_err(|_| {
                err(b.span(), format!("`{}` is not an enforcer", b.get_ref()), "use harness, benchmark, provider or caller")
            })?),
        };
    if let Some(w) = &r.waits
        && (table != Table::Status || means != Some(Meaning { kind: TerminationKind::Budget, budget: Some(Budget::WallTime) }))
    {
        return Err(err(
            w.span(),
            "`waits` belongs to a [[status]] that means budget:wall_time".to_string(),
            "only a runner's wall clock can have waited for the agent",
        ));
    }
    if let Some(f) = &r.in_call_results
        && table != Table::FormatError
    {
        return Err(err(
            f.span(),
            format!("`in_call_results` has no place in [[{}]]", table.key()),
            "only [[format_error]] entries read the results of refused calls",
        ));
    }
    if let Some(h) = &r.hook
        && !HOOKS.contains(&h.get_ref().as_str())
    {
        return Err(err(h.span(), format!("no hook `{}` in this coroner", h.get_ref()), &format!("hooks: {}", HOOKS.join(", "))));
    }
    Ok(Entry {
        id: id.clone(),
        table,
        file: file.to_string(),
        field: r.field.clone(),
        matcher,
        means,
        by,
        hook: r.hook.as_ref().map(|h| h.get_ref().clone()),
        detail: r.detail.clone(),
        gave_up: r.gave_up,
        waits: r.waits.as_ref().is_some_and(|w| *w.get_ref()),
        errors_only: r.errors_only,
        in_call_results: r.in_call_results.as_ref().is_some_and(|f| *f.get_ref()),
    })
}
