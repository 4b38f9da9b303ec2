//! `coroner rules`: the taxonomy and its documentation.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{CliError, Done};
use crate::rules::Rules;

/// Show the failure taxonomy, its rules and the harness profiles.
#[derive(Debug, Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    pub command: RulesCommand,
    /// A directory with `taxonomy.toml` and/or `harnesses/*.toml` overriding the built-ins.
    #[arg(long, value_name = "DIR", global = true)]
    pub rules: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// List the classes in precedence order, the rules for each, the flags and the profiles.
    List,
    /// Explain a class, a rule or a flag: what it detects, why it matters, an example.
    Explain {
        /// A class (`budget_exhausted`), a rule (`resign-silent`) or a flag (`unverified`).
        name: String,
    },
}

pub fn run(a: &RulesArgs) -> Result<Done, CliError> {
    let rules = Rules::load(a.rules.as_deref()).map_err(CliError::invalid)?;
    let text = match &a.command {
        RulesCommand::List => list(&rules),
        RulesCommand::Explain { name } => explain(&rules, name).ok_or_else(|| {
            CliError::usage(format!("failed to find a class, rule or flag named `{name}`")).with_help("`coroner rules list` shows them all")
        })?,
    };
    super::output::print_stdout(&text).map_err(|e| CliError::write("the rules", e))?;
    Ok(Done::Success)
}

#[must_use]
pub fn list(rules: &Rules) -> String {
    use std::fmt::Write as _;
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
    out.push_str("\nHarness profiles:\n");
    for p in rules.profiles.values() {
        let _ = writeln!(out, "  {:<16} {}", p.name, p.description);
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
    None
}
