//! `coroner rules`: the taxonomy, the harness profiles and their interpretation tables, and
//! the documentation of each.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{CliError, Done};
use crate::rules::meanings::{Entry, Table};
use crate::rules::{Profile, Rules};

/// Show the failure taxonomy, its rules and the harness profiles.
#[derive(Debug, Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    pub command: RulesCommand,
    /// A directory with `taxonomy.toml`, `harnesses/*.toml` and/or `formats/*.toml` overriding
    /// or adding to the built-ins.
    #[arg(long, value_name = "DIR", global = true)]
    pub rules: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// List the classes in precedence order, the rules for each, the flags, and the profiles
    /// with how many interpretation entries each has.
    List,
    /// Explain a class, a rule or a flag (what it detects, why it matters, an example); a
    /// harness profile (its tools and its interpretation tables in the order they are tried);
    /// or one interpretation entry (and the profiles it belongs to).
    Explain {
        /// A class (`budget_exhausted`), a rule (`resign-silent`), a flag (`unverified`), a
        /// profile or harness name (`mini-swe-agent`, `terminus-2`, `default`), or an
        /// interpretation entry (`mini-limits-exceeded`).
        name: String,
    },
}

pub fn run(a: &RulesArgs) -> Result<Done, CliError> {
    let rules = Rules::load(a.rules.as_deref()).map_err(CliError::invalid)?;
    let text = match &a.command {
        RulesCommand::List => list(&rules),
        RulesCommand::Explain { name } => explain(&rules, name).ok_or_else(|| {
            CliError::usage(format!("failed to find a class, rule, flag, profile or interpretation entry named `{name}`"))
                .with_help("`coroner rules list` shows them all")
        })?,
    };
    super::output::print_stdout(&text).map_err(|e| CliError::write("the rules", e))?;
    Ok(Done::Success)
}

#[must_use]
pub fn list(rules: &Rules) -> String {
    let mut out = String::from("Classes, in precedence order (the first that matches is the primary class):\n");
    for (i, id) in rules.taxonomy.precedence.iter().enumerate() {
        let c = rules.taxonomy.class(id).expect("precedence lists classes");
        let _ = writeln!(out, "  {}. {:<24} {}", i + 1, c.id, c.name);
        for r in rules.taxonomy.rules.iter().filter(|r| r.supports == c.id) {
            let _ = writeln!(out, "       {:<34} {}", r.id, r.message);
        }
    }
    out.push_str("\nFlags:\n");
    for f in crate::rules::FLAGS {
        let rs: Vec<&str> = rules.taxonomy.rules.iter().filter(|r| r.supports == *f).map(|r| r.id.as_str()).collect();
        let _ = writeln!(out, "  {:<24} {}", f, if rs.is_empty() { "(set by the class rules)".to_string() } else { rs.join(", ") });
    }
    out.push_str("\nHarness profiles (`coroner rules explain NAME` shows one, its interpretation entries in order):\n");
    for p in rules.profiles.values() {
        let total = p.meanings.entries.len();
        let own = p.meanings.entries.iter().filter(|e| e.file == p.file).count();
        let entries = if own == total { format!("{total} entries") } else { format!("{total} entries ({own} own)") };
        let _ = writeln!(out, "  {:<16} {:<20} {}", p.name, entries, p.description);
    }
    if !rules.formats.is_empty() {
        out.push_str("\nFormat mappings (read like built-in formats; `coroner ingest --format NAME` forces one):\n");
        for m in &rules.formats {
            let _ = writeln!(out, "  {:<16} harness {:<14} {}", m.name, m.harness, m.file);
        }
    }
    out
}

#[must_use]
pub fn explain(rules: &Rules, name: &str) -> Option<String> {
    if let Some(c) = rules.taxonomy.class(name) {
        let rs: Vec<String> =
            rules.taxonomy.rules.iter().filter(|r| r.supports == c.id).map(|r| format!("  {} — {}", r.id, r.message)).collect();
        return Some(format!(
            "{} ({})\n\n{}\n\nWhat it detects\n  {}\n\nWhy it matters\n  {}\n\nExample\n  {}\n\nRules\n{}\n",
            c.name,
            c.id,
            c.definition,
            c.what,
            c.why,
            c.example,
            rs.join("\n")
        ));
    }
    if let Some(r) = rules.taxonomy.rule(name) {
        return Some(format!(
            "{} (supports {})\n\n{}\n\nWhat it detects\n  {}\n\nWhy it matters\n  {}\n\nExample\n  {}\n",
            r.id, r.supports, r.message, r.what, r.why, r.example
        ));
    }
    if crate::rules::FLAGS.contains(&name) {
        let rs: Vec<String> = rules
            .taxonomy
            .rules
            .iter()
            .filter(|r| r.supports == name)
            .map(|r| {
                format!("{} — {}\n  What it detects: {}\n  Why it matters: {}\n  Example: {}", r.id, r.message, r.what, r.why, r.example)
            })
            .collect();
        return Some(format!(
            "flag {name}\n\n{}\n",
            if rs.is_empty() {
                "set by the class rules (see `coroner rules explain early_resignation`)".to_string()
            } else {
                rs.join("\n\n")
            }
        ));
    }
    if let Some(p) = rules.find_profile(name) {
        return Some(explain_profile(rules, p));
    }
    explain_entry(rules, name)
}

/// The profile whose file defines `entry`.
fn owner<'r>(rules: &'r Rules, entry: &Entry) -> Option<&'r Profile> {
    rules.profiles.values().find(|p| p.file == entry.file)
}

/// Where an entry of `p` comes from when not from `p`'s own file: "from default.toml", "from
/// runner harbor, harbor.toml".
fn origin(rules: &Rules, p: &Profile, entry: &Entry) -> Option<String> {
    if p.file == entry.file {
        return None;
    }
    let base = entry.file.rsplit('/').next().unwrap_or(&entry.file);
    Some(match owner(rules, entry) {
        Some(o) if o.name == "default" => format!("from {base}"),
        Some(o) if o.runner => format!("from runner {}, {base}", o.name),
        Some(o) => format!("from {}, {base}", o.name),
        None => format!("from {}", entry.file),
    })
}

/// What a table's entries read, in one line.
fn table_purpose(t: Table) -> &'static str {
    match t {
        Table::Status => "a status string the harness recorded as how the run ended",
        Table::Error => "an error text that ended the run; an error no entry explains is a harness error",
        Table::LogLine => "a line of the harness's own log that says what stopped the run",
        Table::UnknownTool => "a tool result rejecting a call as naming no tool",
        Table::FormatError => "what the harness says when a reply did not parse into an action",
    }
}

/// The width lists are wrapped to.
const WIDTH: usize = 100;

/// `items` joined with commas and wrapped to `WIDTH`, the lines after the first indented by
/// `indent` (where the first one starts).
fn wrapped(items: &[String], indent: usize) -> String {
    let mut lines = vec![String::new()];
    for (i, item) in items.iter().enumerate() {
        let sep = if i + 1 < items.len() { "," } else { "" };
        if lines.last().is_some_and(|l| !l.is_empty() && indent + l.len() + 1 + item.len() + sep.len() > WIDTH) {
            lines.push(String::new());
        }
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(item);
        line.push_str(sep);
    }
    lines.join(&format!("\n{:indent$}", ""))
}

fn explain_profile(rules: &Rules, p: &Profile) -> String {
    let mut out = format!("profile {}\n\n{}\n\n", p.name, p.description);
    let field = |out: &mut String, k: &str, v: &str| {
        let _ = writeln!(out, "  {k:<20} {v}");
    };
    let list = |out: &mut String, k: &str, items: &[String]| {
        field(out, k, &if items.is_empty() { "—".to_string() } else { wrapped(items, 23) });
    };
    field(&mut out, "file", &p.file);
    if p.runner {
        field(&mut out, "runner", "yes: its tables hold for every harness it runs");
    }
    if !p.harnesses.is_empty() {
        list(&mut out, "harness names", &p.harnesses);
    }
    if p.name != "default" {
        let mut over = vec![format!("default ({})", rules.profiles.get("default").map_or("(unknown)", |d| d.file.as_str()))];
        over.extend(rules.profiles.values().filter(|r| r.runner && r.name != p.name).map(|r| format!("runner {} ({})", r.name, r.file)));
        list(&mut out, "merged over", &over);
    }
    field(&mut out, "task kind", &p.task_kind);
    if let Some(n) = p.step_limit {
        field(&mut out, "step limit", &n.to_string());
    }
    if p.final_reply_is_answer {
        field(&mut out, "final reply", "a reply without an action is the answer");
    }

    out.push_str(if p.name == "default" { "\nTools\n" } else { "\nTools (this profile's and default's lists together)\n" });
    list(&mut out, "shell", &p.shell_tools);
    let mutating: Vec<String> = p
        .mutate_tools
        .iter()
        .map(|m| match &m.arg {
            Some((arg, vals)) => format!("{}:{arg}={}", m.name, vals.join("|")),
            None => m.name.clone(),
        })
        .collect();
    list(&mut out, "mutating", &mutating);
    list(&mut out, "verifying", &p.verify_tools);
    list(&mut out, "finishing", &p.finish_tools);
    if !p.finish_commands.list.is_empty() {
        let cmds: Vec<String> = p.finish_commands.list.iter().map(|r| format!("~ {}", r.as_str())).collect();
        field(&mut out, "finishing commands", &cmds.join("\n                       "));
    }
    list(&mut out, "escalating", &p.escalate_tools);
    if !p.dynamic_namespaces.is_empty() {
        list(&mut out, "dynamic namespaces", &p.dynamic_namespaces);
    }
    if !p.tools.is_empty() {
        list(&mut out, "registry", &p.tools);
    }

    let _ = writeln!(
        out,
        "\nInterpretation tables: {} entries, each table in the order its entries are tried (this profile's own, then the runners', then default's)",
        p.meanings.entries.len()
    );
    for t in Table::ALL {
        let entries: Vec<&Entry> = p.meanings.table(t).collect();
        let _ = writeln!(
            out,
            "\n[[{}]] — {} ({} {})",
            t.key(),
            table_purpose(t),
            entries.len(),
            if entries.len() == 1 { "entry" } else { "entries" }
        );
        for e in entries {
            let origin = origin(rules, p, e).map(|o| format!("   ({o})")).unwrap_or_default();
            let _ = writeln!(out, "  {}{origin}", e.id);
            for line in entry_lines(e) {
                let _ = writeln!(out, "      {line}");
            }
        }
    }
    out
}

/// An entry's facts, one per line: the matcher, the field it reads (any when none is given), what it means and who enforced
/// it, the hook, the detail.
fn entry_lines(e: &Entry) -> Vec<String> {
    let mut lines = vec![e.shown()];
    if let Some(f) = &e.field {
        lines.push(format!("field     {f}"));
    }
    match (e.means, e.table) {
        (Some(m), _) => lines.push(format!("means     {}", m.name())),
        (None, Table::UnknownTool) => lines.push("means     the call named no tool the harness has".into()),
        (None, _) => lines.push("means     the reply did not parse into an action".into()),
    }
    match (e.by, e.means.and_then(|m| m.default_enforcer())) {
        (Some(b), _) => lines.push(format!("enforcer  {}", crate::util::snake(&b))),
        (None, Some(d)) => lines.push(format!("enforcer  {} (the default for this budget)", crate::util::snake(&d))),
        (None, None) => {}
    }
    if let Some(h) = &e.hook {
        lines.push(format!("hook      {h}"));
    }
    if let Some(d) = &e.detail {
        lines.push(format!("detail    {d}"));
    }
    if e.gave_up {
        lines.push("gave up   the agent finished without completing the task".into());
    }
    if e.waits {
        lines.push("waits     the runner waited for the agent: its own end, logged before the phase ended, ends the run".into());
    }
    if e.errors_only {
        lines.push("reads     only results the format marked as errors".into());
    }
    lines
}

/// One interpretation entry: each definition of `id` (two harness profiles may each have one),
/// with the profiles it is in force in.
fn explain_entry(rules: &Rules, id: &str) -> Option<String> {
    // file → (the entry, the profiles holding it).
    let mut defs: BTreeMap<&str, (&Entry, Vec<&str>)> = BTreeMap::new();
    for p in rules.profiles.values() {
        if let Some(e) = p.meanings.get(id) {
            defs.entry(e.file.as_str()).or_insert_with(|| (e, Vec::new())).1.push(&p.name);
        }
    }
    if defs.is_empty() {
        return None;
    }
    let mut out = String::new();
    for (file, (e, profiles)) in defs {
        let owner = owner(rules, e);
        let _ = writeln!(out, "interpretation entry {} — [[{}]] of {file}", e.id, e.table.key());
        let _ = writeln!(out, "  {}\n", table_purpose(e.table));
        for line in entry_lines(e) {
            let _ = writeln!(out, "  {line}");
        }
        let defined = match owner {
            Some(o) if o.name == "default" => {
                "defined in default, so it holds in every profile, after the profile's own entries".to_string()
            }
            Some(r) if r.runner => format!("defined in runner profile {}, so it holds for every harness the runner runs", r.name),
            Some(o) => format!("defined in profile {}", o.name),
            None => format!("defined in {file}"),
        };
        let profiles: Vec<String> = profiles.iter().map(ToString::to_string).collect();
        let label = if profiles.len() == 1 { "in force in profile: " } else { "in force in profiles: " };
        let _ = writeln!(out, "\n  {defined}\n  {label}{}\n", wrapped(&profiles, 2 + label.len()));
    }
    Some(out)
}
