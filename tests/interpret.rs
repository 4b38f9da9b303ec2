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
