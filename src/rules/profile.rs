//! Harness profiles: which tools mutate, verify, finish or escalate, what its status strings
//! mean, and the phrase lists the rules match. Each profile is merged over `default`: lists are
//! added to, scalars overridden, regexes compiled once at load time.

pub use super::pattern::Pattern;
use serde::Deserialize;
use toml::Spanned;

use super::load::RulesError;
use super::meanings::{Meanings, RawEntry, Table};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    pub name: String,
    #[serde(default)]
    pub harnesses: Vec<String>,
    /// A runner's profile (Harbor, Terminal-Bench): its interpretation tables apply to every
    /// harness it runs, not only to records whose harness it names.
    #[serde(default)]
    pub runner: bool,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub task_kind: Option<String>,
    #[serde(default)]
    pub shell_tools: Vec<String>,
    #[serde(default)]
    pub shell_arguments: Vec<String>,
    #[serde(default)]
    pub path_arguments: Vec<String>,
    #[serde(default)]
    pub replace_arguments: Vec<String>,
    #[serde(default)]
    pub content_arguments: Vec<String>,
    #[serde(default)]
    pub mutate_tools: Vec<String>,
    #[serde(default)]
    pub create_tools: Vec<String>,
    #[serde(default)]
    pub revert_tools: Vec<String>,
    #[serde(default)]
    pub verify_tools: Vec<String>,
    #[serde(default)]
    pub finish_tools: Vec<String>,
    #[serde(default)]
    pub escalate_tools: Vec<String>,
    #[serde(default)]
    pub finish_commands: Vec<Spanned<String>>,
    #[serde(default)]
    pub dynamic_namespaces: Vec<String>,
    #[serde(default)]
    pub outside_dirs: Vec<String>,
    /// Agents whose turns relay outside content (a page, a file, a command's output) rather
    /// than the team's reasoning: Magentic-One's WebSurfer quotes papers that "assume" things.
    #[serde(default)]
    pub relay_agents: Vec<String>,
    /// Programs that only look (`cat`, `grep`, `ls`): a run of nothing else changed nothing,
    /// not even outside the files (a service started, a bucket made).
    #[serde(default)]
    pub look_commands: Vec<String>,
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default)]
    pub step_limit: Option<u32>,
    /// A reply without an action ends the run with its answer unless the run offered a finish
    /// tool (Inspect's `generate()`, OpenTelemetry-traced agents); otherwise it is a stop.
    #[serde(default)]
    pub final_reply_is_answer: Option<bool>,
    #[serde(default)]
    pub writes_show_their_effect: Option<bool>,
    /// The shell's continuation prompt as the harness's terminal shows it (bash's PS2, `> `),
    /// for harnesses that type keystrokes into a live terminal and show its screen back.
    #[serde(default)]
    pub continuation_prompt: Option<String>,
    #[serde(default)]
    pub phrases: RawPhrases,
    #[serde(default)]
    pub status: Vec<RawEntry>,
    #[serde(default)]
    pub error: Vec<RawEntry>,
    #[serde(default)]
    pub log_line: Vec<RawEntry>,
    #[serde(default)]
    pub unknown_tool: Vec<RawEntry>,
    #[serde(default)]
    pub format_error: Vec<RawEntry>,
}

impl RawProfile {
    /// Whether the file says nothing but what words mean (as a runner's profile must).
    #[must_use]
    pub fn only_meanings(&self) -> bool {
        let lists = [
            &self.shell_tools,
            &self.shell_arguments,
            &self.path_arguments,
            &self.replace_arguments,
            &self.content_arguments,
            &self.mutate_tools,
            &self.create_tools,
            &self.revert_tools,
            &self.verify_tools,
            &self.finish_tools,
            &self.escalate_tools,
            &self.dynamic_namespaces,
            &self.outside_dirs,
            &self.relay_agents,
            &self.look_commands,
            &self.tools,
        ];
        lists.iter().all(|l| l.is_empty())
            && self.finish_commands.is_empty()
            && self.task_kind.is_none()
            && self.step_limit.is_none()
            && self.final_reply_is_answer.is_none()
            && self.writes_show_their_effect.is_none()
            && self.continuation_prompt.is_none()
    }

    /// The raw entries of one interpretation table.
    #[must_use]
    pub fn entries(&self, table: Table) -> &[RawEntry] {
        match table {
            Table::Status => &self.status,
            Table::Error => &self.error,
            Table::LogLine => &self.log_line,
            Table::UnknownTool => &self.unknown_tool,
            Table::FormatError => &self.format_error,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawPhrases {
    #[serde(default)]
    pub resignation: Vec<Spanned<String>>,
    #[serde(default)]
    pub claims_done: Vec<Spanned<String>>,
    #[serde(default)]
    pub asks: Vec<Spanned<String>>,
    #[serde(default)]
    pub consent: Vec<Spanned<String>>,
    #[serde(default)]
    pub asks_for_human: Vec<Spanned<String>>,
    #[serde(default)]
    pub asks_for_details: Vec<Spanned<String>>,
    #[serde(default)]
    pub declines: Vec<Spanned<String>>,
    #[serde(default)]
    pub cannot_check: Vec<Spanned<String>>,
    #[serde(default)]
    pub assumed: Vec<Spanned<String>>,
    #[serde(default)]
    pub confirms_finish: Vec<Spanned<String>>,
    #[serde(default)]
    pub own_commands: Vec<Spanned<String>>,
    #[serde(default)]
    pub debug_output: Vec<Spanned<String>>,
    #[serde(default)]
    pub proposes: Vec<Spanned<String>>,
    #[serde(default)]
    pub user_ends: Vec<Spanned<String>>,
    #[serde(default)]
    pub doc_files: Vec<Spanned<String>>,
    #[serde(default)]
    pub broken_verifier: Vec<Spanned<String>>,
    #[serde(default)]
    pub read_empty: Vec<Spanned<String>>,
    #[serde(default)]
    pub empty_file: Vec<Spanned<String>>,
    #[serde(default)]
    pub empty_by_design: Vec<Spanned<String>>,
    #[serde(default)]
    pub system_dirs: Vec<Spanned<String>>,
    #[serde(default)]
    pub plan: Vec<Spanned<String>>,
    #[serde(default)]
    pub announces: Vec<Spanned<String>>,
    #[serde(default)]
    pub never_reached: Vec<Spanned<String>>,
    #[serde(default)]
    pub command_timeout: Vec<Spanned<String>>,
    #[serde(default)]
    pub api_error: Vec<Spanned<String>>,
    #[serde(default)]
    pub test_files: Vec<Spanned<String>>,
    #[serde(default)]
    pub config_files: Vec<Spanned<String>>,
}

/// A tool name, optionally restricted to calls whose argument has one of some values.
#[derive(Debug, Clone)]
pub struct ToolMatcher {
    pub name: String,
    pub arg: Option<(String, Vec<String>)>,
}

impl ToolMatcher {
    fn parse(s: &str) -> Self {
        match s.split_once(':') {
            Some((name, cond)) => match cond.split_once('=') {
                Some((arg, vals)) => {
                    Self { name: name.to_string(), arg: Some((arg.to_string(), vals.split('|').map(ToString::to_string).collect())) }
                }
                None => Self { name: s.to_string(), arg: None },
            },
            None => Self { name: s.to_string(), arg: None },
        }
    }

    #[must_use]
    pub fn matches(&self, name: &str, args: &serde_json::Value) -> bool {
        if self.name != name {
            return false;
        }
        match &self.arg {
            None => true,
            Some((arg, vals)) => args.get(arg).and_then(serde_json::Value::as_str).is_some_and(|v| vals.iter().any(|x| x == v)),
        }
    }
}

/// A named list of patterns.
#[derive(Debug, Clone)]
pub struct Phrases {
    pub list: Vec<Pattern>,
    /// The patterns as one alternation, for "does any match": one pass over a long tool
    /// output instead of one per pattern, with one literal prefilter for all of them. `None`
    /// when they cannot be joined (verbose-mode comments would swallow the joints).
    pub any: Option<Pattern>,
    /// A literal each pattern needs, all in one test (`crate::rules::required`), built on first
    /// use and shared by clones: a text with none of them matches no pattern.
    gate: std::sync::Arc<std::sync::OnceLock<Option<regex::Regex>>>,
}

impl Phrases {
    /// Joins compiled patterns.
    #[must_use]
    pub fn from_list(list: Vec<Pattern>) -> Self {
        let joinable = !list.is_empty() && list.iter().all(|r| !r.as_str().contains("(?x") && !r.as_str().contains('#'));
        let any = joinable.then(|| shared(&list.iter().map(|r| format!("(?:{})", r.as_str())).collect::<Vec<_>>().join("|")));
        Self { list, any, gate: std::sync::Arc::default() }
    }

    /// False when `text` lacks every literal the patterns need, so none can match it.
    fn may_match(&self, text: &str) -> bool {
        let gate = self.gate.get_or_init(|| super::required::gate(&self.list.iter().map(Pattern::as_str).collect::<Vec<_>>()));
        gate.as_ref().is_none_or(|g| g.is_match(text))
    }

    /// Compiles the patterns; `Err` carries the index of a bad pattern and its error.
    ///
    /// # Errors
    /// A pattern that is not a valid regex.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Self, (usize, regex::Error)> {
        let list = patterns.iter().enumerate().map(|(i, p)| compiled(p.as_ref()).map_err(|e| (i, e))).collect::<Result<Vec<_>, _>>()?;
        Ok(Self::from_list(list))
    }

    /// No patterns: nothing can match, so callers skip building what they would test.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    #[must_use]
    pub fn is_match(&self, text: &str) -> bool {
        if !self.may_match(text) {
            return false;
        }
        // An alternation too big to compile is read pattern by pattern.
        match self.any.as_ref().and_then(Pattern::try_get) {
            Some(any) => any.is_match(text),
            None => self.list.iter().any(|r| r.is_match(text)),
        }
    }

    /// Every match of every pattern, earliest first.
    #[must_use]
    pub fn find_iter<'t>(&self, text: &'t str) -> Vec<regex::Match<'t>> {
        if !self.may_match(text) {
            return Vec::new();
        }
        let mut all: Vec<regex::Match<'t>> = self.list.iter().flat_map(|r| r.get().find_iter(text)).collect();
        all.sort_by_key(|m| (m.start(), m.end()));
        all
    }

    /// The first match (earliest in the text) of any pattern.
    #[must_use]
    pub fn find<'t>(&self, text: &'t str) -> Option<regex::Match<'t>> {
        if !self.may_match(text) {
            return None;
        }
        self.list.iter().filter_map(|r| r.find(text)).min_by_key(regex::Match::start)
    }
}

/// Every profile repeats `default`'s patterns, so each distinct pattern is checked once per
/// process, compiled at most once, and shared (a [`Pattern`] clone is a reference count).
///
/// # Errors
/// A pattern that is not a valid regex.
pub(crate) fn compiled(pattern: &str) -> Result<Pattern, regex::Error> {
    if let Some(r) = cached(pattern) {
        return Ok(r);
    }
    let r = Pattern::new(pattern)?;
    Ok(remember(pattern, r))
}

/// [`compiled`] for a pattern made of checked ones (an alternation of them), not checked again.
fn shared(pattern: &str) -> Pattern {
    cached(pattern).unwrap_or_else(|| remember(pattern, Pattern::unchecked(pattern)))
}

static CACHE: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, Pattern>>> = std::sync::OnceLock::new();

fn cached(pattern: &str) -> Option<Pattern> {
    CACHE.get_or_init(Default::default).lock().ok().and_then(|c| c.get(pattern).cloned())
}

fn remember(pattern: &str, r: Pattern) -> Pattern {
    let cache = CACHE.get_or_init(Default::default);
    if let Ok(mut c) = cache.lock() {
        c.insert(pattern.to_string(), r.clone());
    }
    r
}

/// A compiled, merged profile.
#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    /// The file it was read from (its own layer; `default` and the runners are merged under it).
    pub file: String,
    /// A runner's profile: its tables join every other profile.
    pub runner: bool,
    pub harnesses: Vec<String>,
    pub description: String,
    /// `code` (the workspace is the deliverable) or `answer` (a submitted answer is).
    pub task_kind: String,
    pub shell_tools: Vec<String>,
    pub shell_arguments: Vec<String>,
    pub path_arguments: Vec<String>,
    /// An editing tool's text replacement, as `old=new` argument names (`old_str=new_str`): an
    /// edit that swaps back an earlier one's text puts the file back.
    pub replace_arguments: Vec<(String, String)>,
    /// The argument that holds the whole text a creating tool writes: a script written so and
    /// run later writes what its text says.
    pub content_arguments: Vec<String>,
    pub mutate_tools: Vec<ToolMatcher>,
    /// Mutating tools that write a file whole (a new file, not an edit of one).
    pub create_tools: Vec<ToolMatcher>,
    /// Mutating tools that undo an earlier edit.
    pub revert_tools: Vec<ToolMatcher>,
    pub verify_tools: Vec<String>,
    pub finish_tools: Vec<String>,
    pub escalate_tools: Vec<String>,
    pub finish_commands: Phrases,
    pub dynamic_namespaces: Vec<String>,
    /// Directories outside the task's workspace in this harness (vorflux's `/memory` store):
    /// writing there changes nothing the task is judged on, as writing to `/tmp` does not.
    pub outside_dirs: Vec<String>,
    /// Agents that relay outside content; their turns are sources, not the team's reasoning.
    pub relay_agents: Vec<String>,
    /// Programs that only look: a command of nothing else has no effect at all.
    pub look_commands: Vec<String>,
    pub tools: Vec<String>,
    pub step_limit: Option<u32>,
    pub final_reply_is_answer: bool,
    pub resignation: Phrases,
    pub claims_done: Phrases,
    pub asks: Phrases,
    /// A user's go-ahead to a change the agent proposed.
    pub consent: Phrases,
    /// A user asking to be handed to a person.
    pub asks_for_human: Phrases,
    /// The agent asking the user for details (who they are, which order, the new address): a
    /// question, but no change proposed, so a "sure" after it is an answer, not a go-ahead.
    pub asks_for_details: Phrases,
    /// The agent telling the user it will not or cannot do what was asked.
    pub declines: Phrases,
    /// The agent saying it cannot check its change (the check needs a platform, a service or a
    /// backend it does not have): a check it ran before saying so did not cover the change.
    pub cannot_check: Phrases,
    /// The agent saying it assumed or estimated a value instead of finding it: an answer
    /// resting on it was never checked against a source.
    pub assumed: Phrases,
    /// The harness asking the agent to confirm that its task is complete before it ends the run
    /// (terminus: "Are you sure you want to mark the task as complete?"): finishing after it is
    /// the agent declaring the task complete, not a bare hand-in.
    pub confirms_finish: Phrases,
    /// Shell commands the harness runs by itself between the agent's turns (vorflux's memory
    /// flush): not the agent's actions, so neither its work, nor its checks, nor its loops.
    pub own_commands: Phrases,
    /// The start of a line of debug output (`print(`, `console.log(`): lines an agent puts in to
    /// watch its code and takes out again.
    pub debug_output: Phrases,
    /// The agent asking for a go-ahead to a change ("would you like me to", "shall I proceed"),
    /// which a request for details in the same reply does not undo.
    pub proposes: Phrases,
    /// A simulated user's marker that it ends the episode (tau-bench's `###STOP###`).
    pub user_ends: Phrases,
    /// Documentation files: changing them is progress, but no check is owed after it.
    pub doc_files: Phrases,
    /// A verifier's test result that is an error of its own test code, found before any test
    /// ran: no agent's work can pass such a verifier. The named group `file` is the test file.
    pub broken_verifier: Phrases,
    /// A failing test's own words showing that what it read was empty (`assert 'x' in ''`).
    pub read_empty: Phrases,
    /// A listing row of a regular file of 0 bytes (`ls -l`); the group `file` is its name.
    pub empty_file: Phrases,
    /// Names of files that are empty by convention (`__init__.py`, `py.typed`, `.gitkeep`):
    /// an empty one says nothing about the task's inputs.
    pub empty_by_design: Phrases,
    /// Directories of the system, not of a task (`/etc`, `/var`, `/tmp`): a path that matches.
    pub system_dirs: Phrases,
    /// Every mutating call's result shows the state it left (tool-calling domains): a change is
    /// checked by its own result, so `unverified` does not apply.
    pub writes_show_their_effect: bool,
    /// A command the terminal echoes after this prompt, and never after the shell's own prompt,
    /// was typed into a construct left open (a here-doc without its end, an open quote): it
    /// never ran as a command.
    pub continuation_prompt: Option<String>,
    pub plan: Phrases,
    /// A reply announcing the change it is about to make ("Let me create the interpreter:"):
    /// as the last words of a run that then ended, a change never issued.
    pub announces: Phrases,
    /// A check's output that says it stopped before running any code it was to check: its
    /// runner is not installed, or it failed to import or set up (an import or configuration
    /// error; the classifier reads it only where it was raised outside the changed files).
    pub never_reached: Phrases,
    pub command_timeout: Phrases,
    pub api_error: Phrases,
    pub test_files: Phrases,
    pub config_files: Phrases,
    /// What the harness's statuses, errors, log lines and rejections mean.
    pub meanings: Meanings,
}

impl Profile {
    /// Merges `layers` (default first) and compiles them; the profile is `layers[own]`'s (its
    /// name, file, harnesses, description and tool registry), the others lend their lists and
    /// tables (`default` is the first layer and its own, with the runners' tables after it).
    ///
    /// # Errors
    /// A regex that does not compile or a status meaning that is not one, pointing into the file.
    pub fn compile(layers: &[(&str, &str, &RawProfile)], own: usize) -> Result<Self, RulesError> {
        let (own_file, own) =
            layers.get(own).map_or_else(|| (String::new(), RawProfile::default()), |(f, _, r)| ((*f).to_string(), (*r).clone()));
        let cat = |f: &dyn Fn(&RawProfile) -> &Vec<String>| -> Vec<String> {
            let mut v: Vec<String> = Vec::new();
            for (_, _, r) in layers {
                for x in f(r) {
                    if !v.contains(x) {
                        v.push(x.clone());
                    }
                }
            }
            v
        };
        let phrases = |f: &dyn Fn(&RawProfile) -> &Vec<Spanned<String>>| -> Result<Phrases, RulesError> {
            let mut list = Vec::new();
            for (file, text, r) in layers {
                for s in f(r) {
                    let re = compiled(s.get_ref()).map_err(|e| {
                        RulesError::at(
                            file,
                            text,
                            Some(s.span()),
                            format!("invalid regex: {e}"),
                            Some("patterns use the Rust `regex` syntax; escape backslashes in TOML strings".into()),
                        )
                    })?;
                    list.push(re);
                }
            }
            Ok(Phrases::from_list(list))
        };
        for (file, text, r) in layers {
            if let Some(bad) =
                r.replace_arguments.iter().find(|s| s.split_once('=').is_none_or(|(o, n)| o.trim().is_empty() || n.trim().is_empty()))
            {
                return Err(RulesError::at(
                    file,
                    text,
                    None,
                    format!("replace_arguments entry {bad:?} is not `old=new`"),
                    Some("name the argument holding the replaced text and the one holding its replacement: \"old_str=new_str\"".into()),
                ));
            }
        }
        Ok(Self {
            name: own.name.clone(),
            file: own_file,
            runner: own.runner,
            harnesses: own.harnesses.clone(),
            description: own.description.clone(),
            task_kind: layers.iter().rev().find_map(|(_, _, r)| r.task_kind.clone()).unwrap_or_else(|| "code".into()),
            shell_tools: cat(&|r| &r.shell_tools),
            shell_arguments: cat(&|r| &r.shell_arguments),
            path_arguments: cat(&|r| &r.path_arguments),
            replace_arguments: cat(&|r| &r.replace_arguments)
                .iter()
                .filter_map(|s| s.split_once('=').map(|(o, n)| (o.trim().to_string(), n.trim().to_string())))
                .collect(),
            content_arguments: cat(&|r| &r.content_arguments),
            mutate_tools: cat(&|r| &r.mutate_tools).iter().map(|s| ToolMatcher::parse(s)).collect(),
            create_tools: cat(&|r| &r.create_tools).iter().map(|s| ToolMatcher::parse(s)).collect(),
            revert_tools: cat(&|r| &r.revert_tools).iter().map(|s| ToolMatcher::parse(s)).collect(),
            verify_tools: cat(&|r| &r.verify_tools),
            finish_tools: cat(&|r| &r.finish_tools),
            escalate_tools: cat(&|r| &r.escalate_tools),
            finish_commands: phrases(&|r| &r.finish_commands)?,
            dynamic_namespaces: cat(&|r| &r.dynamic_namespaces),
            outside_dirs: cat(&|r| &r.outside_dirs),
            relay_agents: cat(&|r| &r.relay_agents),
            look_commands: cat(&|r| &r.look_commands),
            tools: own.tools.clone(),
            step_limit: layers.iter().rev().find_map(|(_, _, r)| r.step_limit),
            final_reply_is_answer: layers.iter().rev().find_map(|(_, _, r)| r.final_reply_is_answer).unwrap_or(false),
            resignation: phrases(&|r| &r.phrases.resignation)?,
            claims_done: phrases(&|r| &r.phrases.claims_done)?,
            asks: phrases(&|r| &r.phrases.asks)?,
            consent: phrases(&|r| &r.phrases.consent)?,
            asks_for_human: phrases(&|r| &r.phrases.asks_for_human)?,
            asks_for_details: phrases(&|r| &r.phrases.asks_for_details)?,
            declines: phrases(&|r| &r.phrases.declines)?,
            cannot_check: phrases(&|r| &r.phrases.cannot_check)?,
            assumed: phrases(&|r| &r.phrases.assumed)?,
            confirms_finish: phrases(&|r| &r.phrases.confirms_finish)?,
            own_commands: phrases(&|r| &r.phrases.own_commands)?,
            debug_output: phrases(&|r| &r.phrases.debug_output)?,
            proposes: phrases(&|r| &r.phrases.proposes)?,
            user_ends: phrases(&|r| &r.phrases.user_ends)?,
            doc_files: phrases(&|r| &r.phrases.doc_files)?,
            broken_verifier: phrases(&|r| &r.phrases.broken_verifier)?,
            read_empty: phrases(&|r| &r.phrases.read_empty)?,
            empty_file: phrases(&|r| &r.phrases.empty_file)?,
            empty_by_design: phrases(&|r| &r.phrases.empty_by_design)?,
            system_dirs: phrases(&|r| &r.phrases.system_dirs)?,
            writes_show_their_effect: layers.iter().rev().find_map(|(_, _, r)| r.writes_show_their_effect).unwrap_or(false),
            continuation_prompt: layers.iter().rev().find_map(|(_, _, r)| r.continuation_prompt.clone()),
            plan: phrases(&|r| &r.phrases.plan)?,
            announces: phrases(&|r| &r.phrases.announces)?,
            never_reached: phrases(&|r| &r.phrases.never_reached)?,
            command_timeout: phrases(&|r| &r.phrases.command_timeout)?,
            api_error: phrases(&|r| &r.phrases.api_error)?,
            test_files: phrases(&|r| &r.phrases.test_files)?,
            config_files: phrases(&|r| &r.phrases.config_files)?,
            meanings: super::meanings::compile(layers)?,
        })
    }

    #[must_use]
    pub fn is_shell(&self, name: &str) -> bool {
        self.shell_tools.iter().any(|t| t == name)
    }

    #[must_use]
    pub fn is_finish(&self, name: &str) -> bool {
        self.finish_tools.iter().any(|t| t == name)
    }

    #[must_use]
    pub fn is_escalate(&self, name: &str) -> bool {
        self.escalate_tools.iter().any(|t| t == name)
    }

    #[must_use]
    pub fn is_dynamic(&self, name: &str) -> bool {
        self.dynamic_namespaces.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.len() > prefix.len() && name.starts_with(prefix),
            None => p == name,
        })
    }
}

#[cfg(test)]
mod phrase_tests {
    use super::*;

    /// The joined alternation answers "does any match" exactly as the patterns one by one do,
    /// whatever their own flags, and verbose patterns fall back to one by one.
    #[test]
    fn the_alternation_agrees_with_the_patterns() {
        let patterns = [r"(?i)\btimed out after \d+", r"(?m)^FAIL\b", r"(?s)begin.*end", r"exact$", r"\bx{2}\b"];
        let p = Phrases::new(&patterns).unwrap();
        assert!(p.any.is_some());
        let texts = [
            "",
            "TIMED OUT AFTER 30",
            "timed out after x",
            "ok\nFAIL: test",
            "okFAIL",
            "BEGIN\nEND",
            "begin\nend",
            "inexact",
            "exact\n",
            "a xx b",
            "a xxx b",
            "Timed out after 5 — é",
        ];
        for t in texts {
            assert_eq!(p.is_match(t), p.list.iter().any(|r| r.is_match(t)), "{t:?}");
        }
        // (?i) and (?m) stay inside their own pattern.
        assert!(!p.is_match("a FAIL in the middle"));
        assert!(!p.is_match("BEGIN and END"));
        let verbose = Phrases::new(&[r"(?x) a b # a comment", r"c"]).unwrap();
        assert!(verbose.any.is_none());
        assert!(verbose.is_match("ab") && verbose.is_match("c") && !verbose.is_match("a b"));
        assert!(!Phrases::new::<&str>(&[]).unwrap().is_match("anything"));
        assert_eq!(Phrases::new(&["ok", "("]).unwrap_err().0, 1);
    }
}
