//! Interpretation: the one pass between decoding and classification that gives the raw facts
//! an adapter read (status strings, error texts, log lines, tool outputs) their meaning, with
//! the harness profile's tables (`rules/harnesses/*.toml`). It decides the termination (kind,
//! budget, enforcer, limit, consumption), marks calls the harness rejected as unknown tools and
//! replies it could not parse, and names the entry behind every decision.
//!
//! ```text
//!  ingest (decode) ──► Trajectory + signals ──► interpret (profile tables) ──► classify
//! ```

pub mod fixture;
pub mod hooks;
mod results;
mod termination;

use crate::model::Trajectory;
use crate::rules::{Profile, Rules};

/// What interpretation decided, entry by entry, for fixtures and `rules explain`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Ids of the entries that marked something or decided the termination, in order.
    pub fired: Vec<String>,
}

/// Interprets one trajectory with the profile of its harness.
pub fn interpret(t: &mut Trajectory, rules: &Rules) -> Report {
    let p = rules.profile_for_record(&t.harness, &t.provenance.adapter);
    apply(t, p)
}

/// Interprets one trajectory with `p`. Running it twice gives the same record.
pub fn apply(t: &mut Trajectory, p: &Profile) -> Report {
    let mut report = Report::default();
    results::mark_unknown_tools(t, p, &mut report);
    results::mark_format_errors(t, p, &mut report);
    termination::decide(t, p, &mut report);
    report
}

/// Longest text kept from a signal or a tool output in a termination or a mark.
const KEPT: usize = 300;

/// The run's recorded consumption of budget `b` reached its recorded (positive) limit: the one
/// comparison the hooks and the interpretation's own end rules make.
fn limit_reached(t: &Trajectory, b: crate::model::Budget) -> bool {
    matches!((t.signals.limits.of(b), t.signals.consumed.of(b)), (Some(l), Some(c)) if l > 0.0 && c >= l)
}

/// The first non-blank line of `text`, trimmed, at most `max` characters.
fn first_line(text: &str, max: usize) -> String {
    text.trim().lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").chars().take(max).collect()
}

/// `text` trimmed, at most `max` characters.
fn clip(text: &str, max: usize) -> String {
    text.trim().chars().take(max).collect()
}
