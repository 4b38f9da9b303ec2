//! Interpretation: every entry of every harness profile has fixture cases and behaves as they
//! say; the hooks the profiles may name exist.

use std::collections::BTreeSet;

use coroner::interpret::fixture::{self, Expect, FixtureFile};
use coroner::rules::Rules;
use coroner::rules::meanings::HOOKS;

use crate::common::root;

fn fixture_files() -> Vec<(String, FixtureFile)> {
    let dir = root().join("rules/fixtures/harnesses");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let f: FixtureFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(f.profile, stem, "{} names profile {}", path.display(), f.profile);
        out.push((stem, f));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_entry_has_a_case_that_fires_and_every_profile_one_that_must_not() {
    let rules = Rules::builtin().unwrap();
    let files = fixture_files();
    // (profile, entry): ids are unique within one profile's layers, not across profiles.
    let mut covered: BTreeSet<(String, String)> = BTreeSet::new();
    for (_, f) in &files {
        assert!(f.cases.iter().any(|c| c.expect == Expect::NoFire), "{}: no case where an entry must not fire", f.profile);
        covered.extend(f.cases.iter().filter(|c| c.expect != Expect::NoFire).map(|c| (f.profile.clone(), c.entry.clone())));
    }
    let mut missing = Vec::new();
    for p in rules.profiles.values() {
        for e in &p.meanings.entries {
            if e.file == p.file && !covered.contains(&(p.name.clone(), e.id.clone())) {
                missing.push(format!("{}: {} ({})", p.name, e.id, e.file));
            }
        }
    }
    assert!(missing.is_empty(), "entries without a case that fires (or a known miss):\n{}", missing.join("\n"));
}

#[test]
fn every_interpretation_case_behaves_as_it_says() {
    let rules = Rules::builtin().unwrap();
    let mut failures = Vec::new();
    for (_, f) in fixture_files() {
        for o in fixture::run(&rules, &f).unwrap_or_else(|e| panic!("{}: {e}", f.profile)) {
            if !o.ok() {
                let why = match (o.expect, &o.wrong_meaning) {
                    (Expect::Fire, Some(m)) if o.fired => format!("fired, but gave {m}"),
                    (Expect::Fire, _) => "should fire and did not".to_string(),
                    (Expect::NoFire, _) => "fired and should not".to_string(),
                    (Expect::Todo, _) => "now fires: promote this known miss to `fire`".to_string(),
                };
                failures.push(format!("{}: {} ({}): {why}", f.profile, o.name, o.entry));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_hook_a_profile_may_name_is_implemented() {
    for h in HOOKS {
        assert!(coroner::interpret::hooks::get(h).is_some(), "hook {h} has no implementation");
    }
}

/// A wall clock that fired on a run which had already stopped moving (no step for longer than
/// the whole budget, a cancellation that took minutes) is the environment's stall, not a budget;
/// the same clock on a run that was working until it fired stays a budget.
#[test]
fn a_clock_that_fired_on_a_stalled_run_is_infrastructure() {
    let got = crate::common::classified(&[&root().join("samples/harbor-stalled")]);
    let by_trial = |name: &str| {
        got.iter()
            .find(|(t, _)| t.provenance.files.iter().any(|f| f.path.contains(name)))
            .unwrap_or_else(|| panic!("no trajectory from {name}"))
    };
    let (t, v) = by_trial("fix-parser__stalled");
    assert_eq!(t.termination.kind, coroner::model::TerminationKind::Infrastructure);
    assert_eq!(t.termination.rule.as_deref(), Some(coroner::model::STALLED_PAST_CLOCK));
    assert_eq!(v.primary.as_deref(), Some("infrastructure"));
    let e = v.evidence.iter().find(|e| e.rule == "infra-termination").expect("evidence");
    let detail = e.detail.as_deref().unwrap_or_default();
    assert!(detail.contains("no step for 972 s after step 5") && detail.contains("472 s more"), "{detail}");
    let (t, v) = by_trial("fix-parser__working");
    assert_eq!(t.termination.budget, Some(coroner::model::Budget::WallTime));
    assert_eq!(v.primary.as_deref(), Some("budget_exhausted"), "working until the clock fired: a budget");
}
