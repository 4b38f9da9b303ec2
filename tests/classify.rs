//! Classification: the rules' fixtures and lint, the doubles, checkable evidence, and verdicts
//! on the real corpus.

use std::collections::BTreeSet;
use std::path::Path;

use coroner::classify::fixture::{self, Expect, FixtureFile};
use coroner::classify::{Classifier, Options};
use coroner::model::{Trajectory, Verdict};
use coroner::rules::Rules;

use crate::common::{classified, coroner, coroner_in, corpus, root, samples, tempdir};

fn classifier() -> Classifier {
    Classifier::new(Rules::builtin().expect("built-in rules load"), Vec::new(), Options::default())
}

#[test]
fn every_rule_has_docs_a_unique_id_and_a_fixture_with_both_kinds_of_case() {
    let rules = Rules::builtin().unwrap();
    let ids: BTreeSet<&str> = rules.taxonomy.rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), rules.taxonomy.rules.len(), "rule ids are unique");
    for r in &rules.taxonomy.rules {
        assert!(!r.message.is_empty() && !r.what.is_empty() && !r.why.is_empty() && !r.example.is_empty(), "{} lacks docs", r.id);
        let path = root().join("rules/fixtures").join(format!("{}.toml", r.id));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("rule {} has no fixture at {}", r.id, path.display()));
        let f: FixtureFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(f.rule, r.id, "{} names another rule", path.display());
        assert!(f.cases.iter().any(|c| c.expect != Expect::NoFire), "{}: no case where it must fire (or a known miss)", r.id);
        assert!(f.cases.iter().any(|c| c.expect == Expect::NoFire), "{}: no case where it must not fire", r.id);
    }
    for e in std::fs::read_dir(root().join("rules/fixtures")).unwrap().map(Result::unwrap).filter(|e| e.path().is_file()) {
        let name = e.file_name().to_string_lossy().trim_end_matches(".toml").to_string();
        assert!(ids.contains(name.as_str()), "fixture {name}.toml names no rule");
    }
    for c in &rules.taxonomy.classes {
        assert!(!c.what.is_empty() && !c.why.is_empty() && !c.example.is_empty());
    }
}

#[test]
fn every_fixture_case_behaves_as_it_says() {
    let c = classifier();
    let mut failures = Vec::new();
    for e in std::fs::read_dir(root().join("rules/fixtures")).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let f: FixtureFile = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for o in fixture::run(&c, &f).unwrap() {
            if !o.ok() {
                let why = match o.expect {
                    Expect::Fire => "should fire and did not",
                    Expect::NoFire => "fired and should not",
                    Expect::Todo => "now fires: promote this known miss to `fire`",
                };
                failures.push(format!("{}: {}: {why}", f.rule, o.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[derive(serde::Deserialize)]
struct Manifest {
    double: Vec<Double>,
}

#[derive(serde::Deserialize)]
struct Double {
    trial: String,
    outcome: String,
    primary: Option<String>,
    classes: Vec<String>,
    flags: Vec<String>,
}

#[test]
fn each_double_lands_in_its_own_class_with_its_own_flag_and_nothing_else() {
    let dir = samples("doubles");
    let m: Manifest = toml::from_str(&std::fs::read_to_string(dir.join("manifest.toml")).unwrap()).unwrap();
    let got = classified(&[&dir]);
    assert_eq!(got.len(), m.double.len(), "one record per double");
    let mut seen_classes = BTreeSet::new();
    let mut seen_flags = BTreeSet::new();
    for d in &m.double {
        let (_, v) = got
            .iter()
            .find(|(t, _)| t.provenance.files[0].path.contains(&format!("/{}/", d.trial)))
            .unwrap_or_else(|| panic!("no verdict for {}", d.trial));
        assert_eq!(v.outcome.as_str(), d.outcome, "{}", d.trial);
        assert_eq!(v.primary, d.primary, "{}: primary", d.trial);
        assert_eq!(v.classes, d.classes, "{}: classes", d.trial);
        assert_eq!(v.flags, d.flags, "{}: flags", d.trial);
        // The class is backed by evidence from one of its rules.
        for c in &v.classes {
            assert!(v.evidence.iter().any(|e| &e.supports == c), "{}: class {c} has no evidence", d.trial);
        }
        seen_classes.extend(d.classes.iter().cloned());
        seen_flags.extend(d.flags.iter().cloned());
    }
    let rules = Rules::builtin().unwrap();
    for c in rules.taxonomy.precedence.iter().filter(|c| *c != "unclassified") {
        assert!(seen_classes.contains(c), "no double for class {c}");
    }
    for f in coroner::rules::FLAGS {
        assert!(seen_flags.contains(*f), "no double for flag {f}");
    }
}

/// Every evidence step exists and every excerpt quotes it.
fn check_evidence(t: &Trajectory, v: &Verdict) -> Result<(), String> {
    for e in &v.evidence {
        if e.steps.is_empty() {
            if !e.excerpt.is_empty() && !t.status_texts().iter().any(|s| s.contains(&e.excerpt)) {
                return Err(format!("{}: {} quotes `{}`, not in the end status", t.id, e.rule, e.excerpt));
            }
            continue;
        }
        for s in &e.steps {
            if *s as usize >= t.steps.len() {
                return Err(format!("{}: {} points at step {s} of {}", t.id, e.rule, t.steps.len()));
            }
        }
        let quoted = e.steps.iter().any(|s| t.steps[*s as usize].evidence_texts().iter().any(|x| x.contains(&e.excerpt)));
        if !quoted {
            return Err(format!("{}: {} quotes `{}`, which none of steps {:?} says", t.id, e.rule, e.excerpt, e.steps));
        }
    }
    Ok(())
}

#[test]
fn evidence_is_checkable_on_every_sample_and_corpus_trajectory() {
    let mut inputs = vec![samples("")];
    inputs.extend(corpus(""));
    let refs: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    let got = classified(&refs);
    assert!(got.len() > 40);
    let errors: Vec<String> = got.iter().filter_map(|(t, v)| check_evidence(t, v).err()).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // Failed trajectories always carry a class, and classes other than unclassified always
    // carry evidence.
    for (t, v) in &got {
        if v.is_failure() {
            assert!(v.primary.is_some(), "{} failed without a class", t.id);
            if v.primary.as_deref() == Some("unclassified") {
                assert!(v.reason.is_some());
            } else {
                assert!(v.evidence.iter().any(|e| Some(&e.supports) == v.primary.as_ref()), "{}: primary without evidence", t.id);
            }
        } else {
            assert!(v.primary.is_none() && v.classes.is_empty(), "{}: class on a run that did not fail", t.id);
        }
    }
}

#[test]
fn verdicts_on_every_real_failed_trajectory() {
    let Some(dir) = corpus("") else { return };
    let got = classified(&[&dir]);
    let mut view: Vec<serde_json::Value> = got
        .iter()
        .filter(|(_, v)| v.is_failure())
        .map(|(t, v)| {
            serde_json::json!({
                "source": t.provenance.files[0].path.split("/corpus/").nth(1).unwrap_or_default(),
                "task": v.task_id,
                "outcome": v.outcome.as_str(),
                "primary": v.primary,
                "classes": v.classes,
                "flags": v.flags,
                "registry": v.registry_source,
                "evidence": v.evidence.iter().map(|e| serde_json::json!({"rule": e.rule, "steps": e.steps, "excerpt": e.excerpt})).collect::<Vec<_>>(),
                "reason": v.reason,
            })
        })
        .collect();
    view.sort_by(|a, b| a["source"].as_str().cmp(&b["source"].as_str()).then(a["task"].as_str().cmp(&b["task"].as_str())));
    assert!(!view.is_empty());
    insta::assert_json_snapshot!("corpus_failed_verdicts", view);
}

#[test]
fn classify_writes_the_documented_columns() {
    let tmp = tempdir();
    for ext in ["csv", "parquet", "jsonl"] {
        let out = tmp.path().join(format!("v.{ext}"));
        let r = coroner(&["classify", "-q", "-o", &out.display().to_string(), &samples("doubles").display().to_string()]);
        assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
        if ext == "parquet" {
            use polars::prelude::*;
            let df = ParquetReader::new(std::fs::File::open(&out).unwrap()).finish().unwrap();
            let names: Vec<String> = df.get_column_names().iter().map(ToString::to_string).collect();
            assert_eq!(names, Verdict::COLUMNS);
            assert_eq!(df.height(), 16);
        } else if ext == "csv" {
            let text = std::fs::read_to_string(&out).unwrap();
            assert_eq!(text.lines().next().unwrap(), Verdict::COLUMNS.join(","));
        } else {
            let vs = coroner::classify::table::read_verdicts(&out).unwrap();
            assert_eq!(vs.iter().filter(|v| v.primary.as_deref() == Some("worked_then_wrong")).count(), 8);
        }
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(stderr.contains("16 trajectories: 2 passed, 14 failed"), "{stderr}");
    }
}

#[test]
fn rules_list_and_explain_print_the_taxonomy() {
    let r = coroner(&["rules", "list"]);
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(out.find("1. infrastructure").unwrap() < out.find("6. worked_then_wrong").unwrap());
    assert!(out.contains("resign-silent") && out.contains("mini-swe-agent"));
    let r = coroner(&["rules", "explain", "worked_then_wrong"]);
    let out = String::from_utf8_lossy(&r.stdout);
    for heading in ["What it detects", "Why it matters", "Example"] {
        assert!(out.contains(heading), "{out}");
    }
    assert_eq!(coroner(&["rules", "explain", "no-such-class"]).status.code(), Some(2));
}

#[test]
fn an_invalid_user_rule_fails_at_load_time_pointing_into_the_toml() {
    let tmp = tempdir();
    let h = tmp.path().join("rules/harnesses");
    std::fs::create_dir_all(&h).unwrap();
    std::fs::write(h.join("mine.toml"), "name = \"mine\"\nharnesses = [\"my-agent\"]\n\n[phrases]\nresignation = [\"(unclosed\"]\n")
        .unwrap();
    let r = coroner_in(tmp.path(), &["classify", "--rules", "rules", &samples("doubles").display().to_string()]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("mine.toml") && err.contains("invalid regex"), "{err}");
    insta::assert_snapshot!("invalid_user_rule", err);
}

#[test]
fn tau_bench_classified_against_the_retail_registry_from_source_has_no_invented_hallucinations() {
    let Some(dir) = corpus("tau-bench") else { return };
    let reg = coroner::classify::LoadedRegistry {
        file: "tau-bench-retail".into(),
        registry: coroner::registry::load(&samples("registries/tau-bench-retail.registry.json")).unwrap(),
    };
    let known: BTreeSet<String> = reg.registry.tools.iter().map(|t| t.name.clone()).collect();
    let c = Classifier::new(Rules::builtin().unwrap(), vec![reg], Options::default());
    let (ts, _) = crate::common::ingest(&[&dir]);
    assert_eq!(ts.len(), 14);
    let mut called = BTreeSet::new();
    for t in &ts {
        let v = c.classify(t);
        assert_eq!(v.registry_source, "registry:tau-bench-retail");
        assert!(!v.classes.contains(&"hallucinated_tool".to_string()), "{}: {:?}", t.task_id, v.evidence);
        assert!(!v.has_flag("registry_suspect"), "{}", t.task_id);
        assert_eq!(v.mechanics.unknown_tool_calls, 0);
        called.extend(t.calls().map(|(_, call)| call.name.clone()));
        check_evidence(t, &v).unwrap();
        if v.is_failure() {
            // The deliverable is the database: the failed runs wrote to it and ended normally.
            assert_eq!(v.primary.as_deref(), Some("worked_then_wrong"), "{}", t.task_id);
        }
    }
    assert!(called.len() >= 10 && called.is_subset(&known), "called {called:?}");
    // Without the registry, nothing judges the names, and still nothing is invented.
    let bare = classifier();
    assert!(ts.iter().all(|t| !bare.classify(t).classes.contains(&"hallucinated_tool".to_string())));
}

/// Plain-text `gemini -p` output is recognizable by no content: every command that reads
/// transcripts takes the format by name, as `ingest --format` does.
#[test]
fn classify_show_report_and_ingest_take_the_input_format() {
    let file = samples("gemini-cli/headless-run.txt").display().to_string();
    let skipped = coroner(&["classify", "-q", "-o", "-", &file]);
    assert!(String::from_utf8_lossy(&skipped.stdout).trim().is_empty(), "without it the text file is skipped");
    let r = coroner(&["classify", "-q", "-o", "-", "--input-format", "gemini-cli-headless", &file]);
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    let v: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&r.stdout).lines().next().expect("a verdict")).unwrap();
    assert_eq!(v["harness"], "gemini-cli");
    let shown = coroner(&["show", "--input-format", "gemini-cli-headless", &file]);
    assert_eq!(shown.status.code(), Some(0), "{}", String::from_utf8_lossy(&shown.stderr));
    let report = coroner(&["report", "-q", "--format", "json", "--input-format", "gemini-cli-headless", &file]);
    assert_eq!(report.status.code(), Some(0), "{}", String::from_utf8_lossy(&report.stderr));
    assert!(String::from_utf8_lossy(&report.stdout).contains("gemini-cli"));
    let ingest = coroner(&["ingest", "--input-format", "gemini-cli-headless", &file]);
    assert_eq!(ingest.status.code(), Some(0), "{}", String::from_utf8_lossy(&ingest.stderr));
}

/// An answer task's answer is evidence at the reply that gave it: a short answer ("4") where it
/// ends a line (`FINAL ANSWER: 4`), not at a later reply that only mentions the number.
#[test]
fn a_short_answer_is_evidence_where_it_is_given_not_where_it_is_mentioned() {
    let f: FixtureFile = toml::from_str(
        r#"
rule = "worked-progress-then-failed"
[[case]]
name = "a short answer, mentioned again later"
expect = "fire"
harness = "magentic-one"
termination = "agent_finished"
submission = "4"
[[case.step]]
role = "assistant"
text = "FINAL ANSWER: 4"
[[case.step]]
role = "assistant"
text = "I looked at 4 pages in total."
"#,
    )
    .expect("the case parses");
    let t = f.cases[0].trajectory().expect("a trajectory");
    let v = classifier().classify(&t);
    let e = v.evidence.iter().find(|e| e.rule == "worked-progress-then-failed").expect("worked_then_wrong");
    assert_eq!(e.steps, [0]);
    assert_eq!(e.excerpt, "4");
    assert_eq!(e.detail.as_deref(), Some("submitted an answer; no check ran"));
}
