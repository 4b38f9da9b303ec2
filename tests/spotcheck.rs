//! `coroner spotcheck`: seeded, stratified, blind samples; scores against the kappa reference
//! vectors; audits of human labels.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use coroner::model::{OutcomeStatus, TerminationKind, Trajectory, Verdict};
use coroner::spotcheck::sample::{Key, KeyItem, SHEET_COLUMNS};
use coroner::stats::{ConfusionMatrix, cohen_kappa};

use crate::common::{builtin, classified, coroner, samples, shared, tempdir};

/// The tolerance `tests/stats.rs` uses for closed forms.
const CLOSED: f64 = 1e-9;

fn ok(args: &[&str]) -> std::process::Output {
    let r = coroner(args);
    assert_eq!(r.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&r.stderr));
    r
}

/// Runs `spotcheck sample` over `input` into `dir`; returns the sheet and key bytes.
fn sample(input: &Path, dir: &Path, name: &str, extra: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let sheet = dir.join(format!("{name}.csv"));
    let key = dir.join(format!("{name}.key.json"));
    let (s, k) = (sheet.display().to_string(), key.display().to_string());
    let mut args = vec!["spotcheck", "sample", "-q", "-o", &s, "--key", &k];
    args.extend(extra);
    let i = input.display().to_string();
    args.push(&i);
    ok(&args);
    (std::fs::read(&sheet).unwrap(), std::fs::read(&key).unwrap())
}

fn sheet_rows(bytes: &[u8]) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_reader(bytes);
    let h = r.headers().unwrap().clone();
    r.records().map(|rec| h.iter().zip(rec.unwrap().iter()).map(|(a, b)| (a.to_string(), b.to_string())).collect()).collect()
}

fn key_of(bytes: &[u8]) -> Key {
    serde_json::from_slice(bytes).expect("the key reads back")
}

/// Writes a sheet with these labels for items 1..=n.
fn write_sheet(path: &Path, key: &Key, labels: &[&str]) {
    let mut w = csv::Writer::from_path(path).unwrap();
    w.write_record(SHEET_COLUMNS).unwrap();
    for (i, l) in key.items.iter().zip(labels) {
        w.write_record([i.item.to_string().as_str(), &i.trajectory_id, &i.task_id, "", "", "", l, ""]).unwrap();
    }
    w.flush().unwrap();
}

fn score_json(sheet: &Path, key: &Path) -> serde_json::Value {
    let r = ok(&["spotcheck", "score", &sheet.display().to_string(), "--key", &key.display().to_string(), "--format", "json"]);
    serde_json::from_slice(&r.stdout).expect("score JSON")
}

fn num(v: &serde_json::Value, path: &str) -> f64 {
    v.pointer(path).and_then(serde_json::Value::as_f64).unwrap_or_else(|| panic!("no number at {path} in {v}"))
}

#[test]
fn score_reproduces_every_kappa_vector() {
    let Some(path) = shared("stats/vectors_kappa.csv") else { return };
    let mut r = csv::Reader::from_path(&path).unwrap();
    let rows: Vec<(String, String, String, String)> =
        r.records().map(|x| x.unwrap()).map(|x| (x[0].to_string(), x[1].to_string(), x[2].to_string(), x[3].to_string())).collect();
    let examples: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(examples.len(), 4);
    let precedence = builtin().taxonomy.precedence.clone();
    let tmp = tempdir();
    let mut checked = 0;
    for ex in examples {
        let these: Vec<&(String, String, String, String)> = rows.iter().filter(|r| r.0 == ex).collect();
        // The vectors' labels (yes/no, a/b/c, ...) become taxonomy classes in order of first
        // appearance; kappa, agreement and per-class figures do not depend on the names.
        let mut map: BTreeMap<String, String> = BTreeMap::new();
        let mut items: Vec<(String, String)> = Vec::new();
        for r in these.iter().filter(|r| r.1 == "confusion") {
            let (truth, pred) = r.2.split_once('|').unwrap();
            for l in [truth, pred] {
                let n = map.len();
                map.entry(l.to_string()).or_insert_with(|| precedence[n].clone());
            }
            for _ in 0..r.3.parse::<u64>().unwrap() {
                items.push((map[truth].clone(), map[pred].clone()));
            }
        }
        let key = Key {
            coroner_version: "test".into(),
            seed: 0,
            per_class: 0,
            passed: 0,
            rules_digest: builtin().digest.clone(),
            inputs: Vec::new(),
            strata: Vec::new(),
            items: items
                .iter()
                .enumerate()
                .map(|(i, (_, machine))| KeyItem {
                    item: u32::try_from(i + 1).unwrap(),
                    trajectory_id: format!("{ex}#{i:04}"),
                    task_id: format!("task-{i}"),
                    outcome: OutcomeStatus::Failed,
                    primary: Some(machine.clone()),
                    classes: vec![machine.clone()],
                    flags: Vec::new(),
                    source: None,
                })
                .collect(),
        };
        let (sheet, key_path) = (tmp.path().join(format!("{ex}.csv")), tmp.path().join(format!("{ex}.key.json")));
        std::fs::write(&key_path, coroner::spotcheck::sample::key_json(&key)).unwrap();
        let humans: Vec<&str> = items.iter().map(|(h, _)| h.as_str()).collect();
        write_sheet(&sheet, &key, &humans);
        let s = score_json(&sheet, &key_path);
        assert_eq!(s["scored"], items.len(), "{ex}");
        assert!(s["notes"].as_array().unwrap().is_empty(), "{ex}: {}", s["notes"]);
        let class = |label: &str| -> serde_json::Value {
            s["per_class"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["label"] == map[label])
                .cloned()
                .unwrap_or_else(|| panic!("{ex}: no {label}"))
        };
        for (_, q, label, value) in &these {
            let want: f64 = value.parse().unwrap();
            let got = match q.as_str() {
                "kappa" => num(&s, "/kappa/kappa"),
                "p_observed" | "accuracy" => num(&s, "/agreement/rate"),
                "p_expected" => num(&s, "/kappa/p_expected"),
                "se_fleiss_cohen_everitt" => num(&s, "/kappa/se"),
                "ci95_lower" => num(&s, "/kappa/interval/lo"),
                "ci95_upper" => num(&s, "/kappa/interval/hi"),
                "n" => num(&s, "/agreement/n"),
                "precision" => num(&class(label), "/precision"),
                "recall" => num(&class(label), "/recall"),
                "support" => num(&class(label), "/human"),
                "recall_wilson95_lower" => num(&class(label), "/recall_interval/lo"),
                "recall_wilson95_upper" => num(&class(label), "/recall_interval/hi"),
                "confusion" => {
                    let (t, p) = label.split_once('|').unwrap();
                    let labels = s["confusion"]["labels"].as_array().unwrap();
                    let i = labels.iter().position(|l| *l == map[t]).unwrap();
                    let j = labels.iter().position(|l| *l == map[p]).unwrap();
                    num(&s, &format!("/confusion/counts/{i}/{j}"))
                }
                _ => continue, // null-hypothesis SEs, F1 and averages: the statistics tests check them
            };
            assert!((got - want).abs() <= CLOSED, "{ex} {q} {label}: got {got}, want {want}");
            checked += 1;
        }
        // The agreement's Wilson interval and the rows/columns in taxonomy order.
        let labels: Vec<String> = s["confusion"]["labels"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()).collect();
        let mut sorted = labels.clone();
        sorted.sort_by_key(|l| precedence.iter().position(|p| p == l));
        assert_eq!(labels, sorted, "{ex}: classes in precedence order");
        let words = coroner::spotcheck::score::landis_koch(num(&s, "/kappa/kappa"));
        assert_eq!(s["strength"], words);
    }
    assert!(checked > 100, "only {checked} values checked");
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_another_order() {
    let tmp = tempdir();
    let input = samples("doubles");
    let a = sample(&input, tmp.path(), "a", &["--per-class", "3", "--passed", "2", "--seed", "7"]);
    let b = sample(&input, tmp.path(), "b", &["--per-class", "3", "--passed", "2", "--seed", "7"]);
    assert!(a.0 == b.0 && a.1 == b.1, "same seed, different bytes");
    // The key records the sheet's file nowhere, so the bytes match across output names too.
    let c = sample(&input, tmp.path(), "c", &["--per-class", "3", "--passed", "2", "--seed", "8"]);
    let ids = |s: &[u8]| sheet_rows(s).into_iter().map(|r| r["trajectory_id"].clone()).collect::<Vec<_>>();
    assert_ne!(ids(&a.0), ids(&c.0), "another seed, the same order");
    assert_eq!(key_of(&a.1).seed, 7);
    assert_eq!(key_of(&c.1).seed, 8);
    // Thread count does not matter.
    let sheet = tmp.path().join("t1.csv");
    let key = tmp.path().join("t1.key.json");
    let r = crate::common::coroner_env(
        &[
            "spotcheck",
            "sample",
            "-q",
            "--per-class",
            "3",
            "--passed",
            "2",
            "--seed",
            "7",
            "-o",
            &sheet.display().to_string(),
            "--key",
            &key.display().to_string(),
            &input.display().to_string(),
        ],
        &[("RAYON_NUM_THREADS", "1")],
    );
    assert_eq!(r.status.code(), Some(0));
    assert_eq!(std::fs::read(&sheet).unwrap(), a.0);
    assert_eq!(std::fs::read(&key).unwrap(), a.1);
}

#[test]
fn the_sample_is_stratified_by_primary_class() {
    let input = samples("doubles");
    let got = classified(&[&input]);
    let mut population: BTreeMap<String, usize> = BTreeMap::new();
    for (_, v) in &got {
        let k = match (&v.primary, v.outcome) {
            (Some(p), _) => p.clone(),
            (None, OutcomeStatus::Passed) => "passed".into(),
            _ => continue,
        };
        *population.entry(k).or_default() += 1;
    }
    assert!(population.get("worked_then_wrong").copied().unwrap_or(0) > 3, "the doubles have more than 3 of one class: {population:?}");
    let by_id: BTreeMap<&str, &Verdict> = got.iter().map(|(t, v)| (t.id.as_str(), v)).collect();
    let tmp = tempdir();
    for (n, passed) in [(1usize, 0usize), (3, 1), (100, 100)] {
        let (sheet, key) =
            sample(&input, tmp.path(), &format!("n{n}"), &["--per-class", &n.to_string(), "--passed", &passed.to_string(), "--seed", "11"]);
        let key = key_of(&key);
        let rows = sheet_rows(&sheet);
        assert_eq!(rows.len(), key.items.len());
        let mut drawn: BTreeMap<String, usize> = BTreeMap::new();
        for (row, item) in rows.iter().zip(&key.items) {
            assert_eq!(row["item"], item.item.to_string());
            assert_eq!(row["trajectory_id"], item.trajectory_id);
            let v = by_id[item.trajectory_id.as_str()];
            assert_eq!(item.primary, v.primary, "the key holds the machine's verdict");
            assert_eq!(item.flags, v.flags);
            *drawn.entry(item.machine_label().to_string()).or_default() += 1;
        }
        for (class, &pop) in &population {
            let want = if class == "passed" { pop.min(passed) } else { pop.min(n) };
            assert_eq!(drawn.get(class).copied().unwrap_or(0), want, "--per-class {n} --passed {passed}: {class}");
            let stratum = key.strata.iter().find(|s| s.class == *class);
            if class != "passed" || passed > 0 {
                let s = stratum.unwrap_or_else(|| panic!("no stratum {class}"));
                assert_eq!((s.population, s.sampled), (pop, want));
            }
        }
        // Items are numbered 1..n in sheet order, and the order is not grouped by class.
        assert_eq!(key.items.iter().map(|i| i.item).collect::<Vec<_>>(), (1..=u32::try_from(rows.len()).unwrap()).collect::<Vec<_>>());
    }
}

/// Copies the doubles under neutral names, so file paths cannot give the class away.
fn neutral_doubles(into: &Path) -> PathBuf {
    let run = into.join("run");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(samples("doubles")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    for (i, d) in dirs.iter().enumerate() {
        let to = run.join(format!("trial-{i:02}"));
        std::fs::create_dir_all(to.join("agent")).unwrap();
        std::fs::copy(d.join("result.json"), to.join("result.json")).unwrap();
        if d.join("agent/trajectory.json").exists() {
            std::fs::copy(d.join("agent/trajectory.json"), to.join("agent/trajectory.json")).unwrap();
        }
    }
    run
}

/// Splits a `coroner show ...` command of the sheet into arguments (single quotes only).
fn words(cmd: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in cmd.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

#[test]
fn the_sheet_is_blind() {
    let tmp = tempdir();
    let run = neutral_doubles(tmp.path());
    let (sheet, key) = sample(&run, tmp.path(), "blind", &["--per-class", "3", "--passed", "2", "--seed", "5"]);
    let text = String::from_utf8(sheet.clone()).unwrap();
    let rules = builtin();
    let mut forbidden: Vec<String> = Vec::new();
    for c in &rules.taxonomy.precedence {
        forbidden.extend([c.clone(), c.replace('_', "-"), c.replace('_', " ")]);
    }
    for f in coroner::rules::FLAGS {
        forbidden.extend([f.to_string(), f.replace('_', "-")]);
    }
    forbidden.extend(rules.taxonomy.rules.iter().map(|r| r.id.clone()));
    forbidden.push("passed".into());
    for w in &forbidden {
        assert!(!text.to_lowercase().contains(w.as_str()), "the sheet says `{w}`:\n{text}");
    }
    assert!(text.starts_with(&format!("{}\n", SHEET_COLUMNS.join(","))));
    let key = key_of(&key);
    assert!(key.items.iter().any(|i| i.primary.is_some()), "the key has the machine's labels");
    let rows = sheet_rows(&sheet);
    assert_eq!(rows.len(), key.items.len());
    for r in &rows {
        assert!(r["human_label"].is_empty() && r["notes"].is_empty());
        assert!(r["show"].starts_with("coroner show ") && r["show"].ends_with(" --blind"), "{}", r["show"]);
    }
    // The show command of an item opens its trajectory, blind, with its evidence steps marked.
    for (r, item) in rows.iter().zip(&key.items).filter(|(r, _)| !r["steps"].is_empty()).take(2) {
        let args = words(&r["show"]);
        let args: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
        let out = String::from_utf8(ok(&args).stdout).unwrap();
        assert!(out.starts_with(&format!("{}\n", item.trajectory_id)), "{out}");
        for s in r["steps"].split(' ').filter(|s| !s.is_empty()) {
            assert!(out.lines().any(|l| l.starts_with(&format!("▶ #{s} "))), "step {s} is not marked:\n{out}");
        }
        for w in &forbidden {
            assert!(!out.contains(&format!(" {w}")) || w == "passed", "`coroner show --blind` says `{w}`:\n{out}");
        }
    }
}

#[test]
fn score_counts_unlabelled_rows_and_names_labels_outside_the_taxonomy() {
    let tmp = tempdir();
    let (_, key_bytes) = sample(&samples("doubles"), tmp.path(), "s", &["--per-class", "2", "--passed", "1", "--seed", "3"]);
    let key = key_of(&key_bytes);
    assert!(key.items.len() >= 6);
    let mut labels: Vec<String> = key.items.iter().map(|i| i.machine_label().to_string()).collect();
    labels[0] = String::new();
    labels[1] = "made_up_class".into();
    labels[2] = "Worked then wrong".into(); // a forgiven spelling, maybe a disagreement
    let other = if key.items[3].machine_label() == "infrastructure" { "early_resignation" } else { "infrastructure" };
    labels[3] = other.into();
    let sheet = tmp.path().join("labelled.csv");
    write_sheet(&sheet, &key, &labels.iter().map(String::as_str).collect::<Vec<_>>());
    let key_path = tmp.path().join("s.key.json");
    let s = score_json(&sheet, &key_path);
    assert_eq!(s["rows"], key.items.len());
    assert_eq!(s["scored"], key.items.len() - 2);
    assert_eq!(s["unlabelled"], serde_json::json!([2]), "row 2 is the first item");
    assert_eq!(s["outside_taxonomy"][0]["row"], 3);
    assert_eq!(s["outside_taxonomy"][0]["label"], "made_up_class");
    // Kappa is the statistics library's on the pairs this test knows.
    let pairs: Vec<(String, String)> = key
        .items
        .iter()
        .zip(&labels)
        .skip(2)
        .map(|(i, l)| (coroner::spotcheck::labels::normalize(l), i.machine_label().to_string()))
        .collect();
    let cm = ConfusionMatrix::from_pairs(pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())));
    let k = cohen_kappa(&cm, 0.95);
    assert!((num(&s, "/kappa/kappa") - k.kappa).abs() < CLOSED);
    assert!((num(&s, "/kappa/interval/lo") - k.interval.lo).abs() < CLOSED);
    assert_eq!(num(&s, "/agreement/agreed") as u64, cm.agreed());
    assert!(num(&s, "/agreement/n") as usize == pairs.len());
    // The majority baseline: the most common human label's share.
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (h, _) in &pairs {
        *counts.entry(h.as_str()).or_default() += 1;
    }
    let top = counts.values().max().copied().unwrap();
    assert_eq!(s["baseline"]["count"], top);
    assert!((num(&s, "/baseline/agreement") - top as f64 / pairs.len() as f64).abs() < CLOSED);

    let key_arg = key_path.display().to_string();
    let table = String::from_utf8(ok(&["spotcheck", "score", &sheet.display().to_string(), "--key", &key_arg]).stdout).unwrap();
    for want in [
        "Confusion matrix",
        "Cohen's kappa",
        &format!("{:.3}", k.kappa),
        s["strength"].as_str().unwrap(),
        "Baseline",
        "row 3 (item 2): `made_up_class`",
        "Rows without a label (skipped): 2",
    ] {
        assert!(table.contains(want), "table lacks `{want}`:\n{table}");
    }
    let md = String::from_utf8(ok(&["spotcheck", "score", &sheet.display().to_string(), "--key", &key_arg, "--format", "markdown"]).stdout)
        .unwrap();
    assert!(md.contains("| human \\\\ machine |") && md.contains("|---|") && md.contains("made\\_up\\_class"), "{md}");

    // A sheet paired with another sample's key is refused row by row, not scored.
    sample(&samples("doubles"), tmp.path(), "o", &["--per-class", "2", "--passed", "1", "--seed", "4"]);
    let s = score_json(&sheet, &tmp.path().join("o.key.json"));
    assert!(!s["mismatched"].as_array().unwrap().is_empty(), "{s}");
}

#[test]
fn audit_reports_each_problem_with_its_row_and_gates() {
    let dir = samples("doubles");
    let shown = dir.display().to_string();
    let got = classified(&[&dir]);
    let id = |name: &str| -> (&Trajectory, &Verdict) {
        got.iter().find(|(t, _)| t.provenance.files[0].path.contains(&format!("/{name}__"))).map(|(t, v)| (t, v)).unwrap()
    };
    let (budget, bv) = id("budget-exhausted");
    let (resigned, _) = id("early-resignation");
    let (passing, _) = id("passing");
    let (wtw, wv) = id("worked-then-wrong");
    assert_eq!(bv.primary.as_deref(), Some("budget_exhausted"));
    assert_eq!(passing.outcome.status, OutcomeStatus::Passed);
    assert!(resigned.termination.kind != TerminationKind::Budget && resigned.termination.kind != TerminationKind::Unknown);
    let tmp = tempdir();
    let write = |name: &str, body: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    };
    // Clean labels, one by an id from another input root (the trial read on its own).
    let alone = classified(&[&dir.join("worked-then-wrong__d0uble0")]);
    assert_ne!(alone[0].0.id, wtw.id);
    let clean = write(
        "clean.csv",
        &format!(
            "trajectory_id,label,steps\n{},budget_exhausted,\n{},{},{}\n{},passed,\n",
            budget.id,
            alone[0].0.id,
            wv.primary.as_deref().unwrap(),
            wtw.steps.len() - 1,
            passing.id
        ),
    );
    let r = coroner(&["spotcheck", "audit", &clean, &shown]);
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stdout));
    assert!(String::from_utf8_lossy(&r.stdout).contains("no problems"));

    let n = resigned.steps.len();
    let bad = write(
        "bad.csv",
        &format!(
            "trajectory_id,label,steps\n{r},budget_exhausted,\n{p},worked_then_wrong,\n{w},worked_then_wrong,1 {n}\n{w},timeout,\ncalc-add#000000000000,early_resignation,\n{r},passed,x\n{w},unverified,\n{b},,\n",
            r = resigned.id,
            p = passing.id,
            w = wtw.id,
            b = budget.id,
            n = wtw.steps.len() + 5,
        ),
    );
    let _ = n;
    let r = coroner(&["spotcheck", "audit", &bad, &shown, "--format", "json"]);
    assert_eq!(r.status.code(), Some(1), "problems gate");
    let rep: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let problems: Vec<(u64, String)> =
        rep["problems"].as_array().unwrap().iter().map(|p| (p["row"].as_u64().unwrap(), p["kind"].as_str().unwrap().to_string())).collect();
    let want: Vec<(u64, &str)> = vec![
        (2, "budget-left"),
        (3, "failure-label-on-passed"),
        (4, "step-beyond-end"),
        (5, "outside-taxonomy"),
        (6, "unknown-id"),
        (7, "passed-label-on-failure"),
        (7, "bad-step"),
        (8, "outside-taxonomy"),
    ];
    assert_eq!(problems, want.iter().map(|(r, k)| (*r, (*k).to_string())).collect::<Vec<_>>());
    assert_eq!(rep["unlabelled"], serde_json::json!([9]));
    let text = String::from_utf8(coroner(&["spotcheck", "audit", &bad, &shown]).stdout).unwrap();
    assert!(text.contains("8 problems in 7 rows"), "{text}");
    assert!(
        text.contains(&format!("step {} is past the end: the trajectory has {} steps", wtw.steps.len() + 5, wtw.steps.len())),
        "{text}"
    );

    // By task id: every double has task calc-add, so the task names no single trajectory.
    let by_task = write("task.csv", "task_id,label\ncalc-add,worked_then_wrong\nno-such-task,worked_then_wrong\n");
    let rep: serde_json::Value =
        serde_json::from_slice(&coroner(&["spotcheck", "audit", &by_task, &shown, "--format", "json"]).stdout).unwrap();
    assert_eq!(rep["problems"][0]["kind"], "ambiguous-id");
    assert_eq!(rep["problems"][1]["kind"], "unknown-id");
    // A file without the columns is a usage error.
    let r = coroner(&["spotcheck", "audit", &write("cols.csv", "who,what\na,b\n"), &shown]);
    assert_eq!(r.status.code(), Some(2));
}

#[test]
fn each_item_opens_from_its_own_input_and_hostile_text_stays_inert() {
    let tmp = tempdir();
    // coroner JSONL records keep their original source paths; the show command must still
    // name the JSONL it came from.
    let jsonl = tmp.path().join("doubles.jsonl");
    ok(&["ingest", "-q", "-o", &jsonl.display().to_string(), &samples("doubles").display().to_string()]);
    let sheet = tmp.path().join("mixed.csv");
    let hostile = samples("hostile");
    ok(&[
        "spotcheck",
        "sample",
        "-q",
        "--per-class",
        "20",
        "--seed",
        "1",
        "-o",
        &sheet.display().to_string(),
        &jsonl.display().to_string(),
        &hostile.display().to_string(),
    ]);
    let bytes = std::fs::read(&sheet).unwrap();
    assert!(!bytes.contains(&0x1b) && !bytes.contains(&0x07), "the sheet carries raw control bytes");
    let rows = sheet_rows(&bytes);
    let hostile_row = rows.iter().find(|r| r["file"].contains("hostile__")).expect("the hostile trajectory failed and is drawn");
    assert!(hostile_row["task_id"].contains("␛]0;task-title-pwned␇"), "{}", hostile_row["task_id"]);
    assert!(hostile_row["show"].contains(&format!("coroner show {} ", hostile.display())), "{}", hostile_row["show"]);
    let from_jsonl = rows.iter().find(|r| r["file"].contains("doubles/") && !r["steps"].is_empty()).unwrap();
    assert!(from_jsonl["show"].starts_with(&format!("coroner show {} --id ", jsonl.display())), "{}", from_jsonl["show"]);
    let args = words(&from_jsonl["show"]);
    let out = String::from_utf8(ok(&args.iter().skip(1).map(String::as_str).collect::<Vec<_>>()).stdout).unwrap();
    assert!(out.starts_with(&format!("{}\n", from_jsonl["trajectory_id"])), "{out}");
    assert!(out.lines().any(|l| l.starts_with("▶ #")), "{out}");
}

#[test]
fn a_study_file_is_sampled_arm_by_arm_with_each_arms_settings() {
    let tmp = tempdir();
    let (sheet, key) = sample(&samples("study/study.toml"), tmp.path(), "study", &["--per-class", "2", "--seed", "5"]);
    let key = key_of(&key);
    let population: usize = key.strata.iter().map(|s| s.population).sum();
    let (_, dir_key) = sample(&samples("study"), tmp.path(), "dir", &["--per-class", "2", "--seed", "5"]);
    let dir_population: usize = key_of(&dir_key).strata.iter().map(|s| s.population).sum();
    assert!(population > 0, "the study's arms were read");
    assert_eq!(population, dir_population, "the same failed trajectories as the study's directory");
    let rows = sheet_rows(&sheet);
    assert!(!rows.is_empty());
    for r in &rows {
        let show = &r["show"];
        assert!(show.starts_with("coroner show ") && show.contains("samples/study/arm-"), "each item names its arm's input: {show}");
        assert!(show.contains("--time-limit 900"), "the arm's budget is part of how it was classified: {show}");
    }
}

#[test]
fn an_item_resting_on_the_end_status_still_names_a_step_to_look_at() {
    let tmp = tempdir();
    let (sheet, key) = sample(&samples("doubles"), tmp.path(), "s", &["--per-class", "5", "--seed", "3"]);
    let rows = sheet_rows(&sheet);
    let key = key_of(&key);
    let budget: Vec<&BTreeMap<String, String>> =
        rows.iter().zip(&key.items).filter(|(_, k)| k.primary.as_deref() == Some("budget_exhausted")).map(|(r, _)| r).collect();
    assert!(!budget.is_empty(), "the doubles hold budget runs ended by their status");
    // An empty cell would tell the labeller the machine chose a status-based class: only a run
    // with no steps at all (the infrastructure double never started its agent) has one.
    assert!(budget.iter().all(|r| !r["steps"].is_empty()), "{budget:?}");
    for (r, k) in rows.iter().zip(&key.items).filter(|(r, _)| r["steps"].is_empty()) {
        let (ts, _) = crate::common::ingest(&[Path::new(&r["file"])]);
        assert!(ts[0].steps.is_empty(), "item {} ({:?}) has steps but the sheet names none", k.item, k.primary);
    }
}
