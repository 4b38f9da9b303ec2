//! Decisions the tables cannot express as data, each a small named function a profile entry
//! calls with `hook = "<name>"` (`crate::rules::meanings::HOOKS` lists the names).

use crate::model::{Budget, Termination, TerminationKind, Trajectory};

/// A hook's implementation; the one place a name meets its function, so `run` and the test that
/// every listed hook exists cannot disagree.
#[must_use]
pub fn get(name: &str) -> Option<fn(&Trajectory, &mut Termination)> {
    match name {
        "limits-reached" => Some(limits_reached),
        _ => None,
    }
}

/// Runs the hook `name` on the termination an entry gave (loading rejects unlisted names).
pub fn run(name: &str, t: &Trajectory, term: &mut Termination) {
    if let Some(hook) = get(name) {
        hook(t, term);
    }
}

/// The budgets a "limits exceeded" status can mean, in the order harnesses check them.
const CHECKED: [Budget; 4] = [Budget::Steps, Budget::Cost, Budget::WallTime, Budget::Tokens];

/// A status that says a limit was reached without saying which (mini-swe-agent's
/// `LimitsExceeded` covers its step and cost limits): the budget whose consumption reached its
/// configured limit fired. When both did, the first the harness checks; when neither, the only
/// one configured; when none is configured, the budget the status itself names (`other` if
/// none); otherwise `other`, with what was compared.
fn limits_reached(t: &Trajectory, term: &mut Termination) {
    let (lim, used) = (&t.signals.limits, &t.signals.consumed);
    let configured: Vec<Budget> = CHECKED.into_iter().filter(|b| lim.of(*b).is_some_and(|l| l > 0.0)).collect();
    let hit: Vec<Budget> = configured.iter().copied().filter(|b| super::limit_reached(t, *b)).collect();
    term.kind = TerminationKind::Budget;
    let budget = match (hit.as_slice(), configured.as_slice()) {
        ([one], _) => *one,
        ([first, second, ..], _) => {
            term.detail = Some(format!(
                "both the {} limit and the {} limit were reached; the harness checks {} first",
                crate::util::snake(first),
                crate::util::snake(second),
                crate::util::snake(first)
            ));
            *first
        }
        ([], [only]) => *only,
        // Nothing configured to compare: the status's own budget (`exit_cost` is the cost limit
        // by name), or `other` where it names none.
        ([], []) => term.budget.unwrap_or(Budget::Other),
        ([], _) => {
            let show = |v: Option<f64>| v.map_or_else(|| "unknown".into(), |x| x.to_string());
            term.detail = Some(format!(
                "no configured limit was reached by the recorded consumption: steps {} of {}, cost {} of {}",
                show(used.steps),
                show(lim.steps),
                show(used.cost_usd),
                show(lim.cost_usd)
            ));
            Budget::Other
        }
    };
    term.budget = Some(budget);
    // The amounts are those of the budget decided here, not of the text that said "limits";
    // interpretation fills them from the record.
    term.limit = None;
    term.consumed = None;
}
