//! Study reports on the sample study: table contents checked against ../shared/stats, the
//! Markdown snapshot, readable charts, deterministic files, and `coroner compare`.

use coroner::report::tally::ArmTally;
use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{coroner_env, coroner_in, root, shared, tempdir};

fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records().map(|rec| headers.iter().cloned().zip(rec.unwrap().iter().map(String::from)).collect()).collect()
}

fn sample_report(out: &Path, threads: &str) -> std::process::Output {
    let r = coroner_env(
        &[
            "report",
            "-q",
            "--out",
            &out.display().to_string(),
            "--format",
            "markdown",
            &root().join("samples/study/study.toml").display().to_string(),
        ],
        &[("RAYON_NUM_THREADS", threads)],
    );
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    r
}

#[test]
fn the_arms_table_matches_the_reference_intervals() {
    let tmp = tempdir();
    sample_report(tmp.path(), "2");
    let arms = csv_rows(&tmp.path().join("arms.csv"));
    assert_eq!(arms.len(), 2);
    let a = &arms[0];
    assert_eq!(
        (
            a["arm"].as_str(),
            a["tasks"].as_str(),
            a["trials"].as_str(),
            a["passed"].as_str(),
            a["evaluated"].as_str(),
            a["infrastructure"].as_str()
        ),
        ("mini-swe-agent, think", "34", "35", "8", "34", "1")
    );
    let b = &arms[1];
    assert_eq!((b["passed"].as_str(), b["evaluated"].as_str(), b["infrastructure"].as_str()), ("7", "34", "1"));
    let Some(vectors) = shared("stats/vectors_ci.csv") else { return };
    let reference = csv_rows(&vectors);
    for row in [a, b] {
        let k = &row["passed"];
        let r = reference
            .iter()
            .find(|x| x["k"] == *k && x["n"] == "34" && x["method"] == "wilson" && x["confidence"] == "0.95" && x["sides"] == "two-sided")
            .expect("reference row");
        for (mine, theirs) in [("ci_low", "lower"), ("ci_high", "upper")] {
            let (m, t): (f64, f64) = (row[mine].parse().unwrap(), r[theirs].parse().unwrap());
            assert!((m - t).abs() < 1e-9, "{}: {mine} {m} vs reference {t}", row["arm"]);
        }
    }
}

#[test]
fn the_comparison_matches_the_reference_paired_case() {
    let tmp = tempdir();
    sample_report(tmp.path(), "1");
    let c: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(tmp.path().join("comparison.json")).unwrap()).unwrap();
    assert_eq!(c["paired"], true);
    assert_eq!(c["n"], 34);
    assert_eq!(c["only_a"].as_array().unwrap().len(), 3);
    assert_eq!(c["only_b"].as_array().unwrap().len(), 2);
    assert_eq!(c["verdict"], "no detectable difference at n=34 (smallest difference this design can detect: ~22 pp)");
    let Some(vectors) = shared("stats/vectors_compare.csv") else { return };
    let rows = csv_rows(&vectors);
    let p1 = |m: &str| rows.iter().find(|r| r["case"] == "P1" && r["method"] == m).unwrap().clone();
    let midp: f64 = p1("mcnemar_midp")["p_value"].parse().unwrap();
    assert!((c["test"]["p_value"].as_f64().unwrap() - midp).abs() < 1e-9);
    let nc = p1("diff_ci_newcombe");
    for (mine, theirs) in [("lo", "ci_lower"), ("hi", "ci_upper")] {
        let t: f64 = nc[theirs].parse().unwrap();
        assert!((c["difference"]["interval"][mine].as_f64().unwrap() - t).abs() < 1e-9, "{mine}");
    }
}

#[test]
fn failure_modes_and_mechanics_count_what_the_sample_holds() {
    let tmp = tempdir();
    sample_report(tmp.path(), "2");
    let fm = csv_rows(&tmp.path().join("failure_modes.csv"));
    let get = |arm: &str, class: &str| {
        fm.iter()
            .find(|r| r["arm"].starts_with(arm) && r["class"] == class)
            .map(|r| (r["count"].clone(), r["share_of_failures"].clone()))
            .unwrap()
    };
    assert_eq!(get("mini", "budget_exhausted").0, "8");
    assert_eq!(get("terminus", "budget_exhausted").0, "2");
    assert_eq!(get("mini", "worked_then_wrong").0, "15");
    assert_eq!(get("terminus", "worked_then_wrong").0, "21");
    // Shares are of model failures (26 and 27; infrastructure excluded).
    let share: f64 = get("mini", "worked_then_wrong").1.parse().unwrap();
    assert!((share - 15.0 / 26.0).abs() < 1e-12);
    assert_eq!(get("mini", "infrastructure"), ("1".into(), String::new()));
    assert_eq!(get("mini", "worked_then_wrong:unverified").0, "5");
    assert_eq!(get("terminus", "worked_then_wrong:false_done").0, "7");
    let mech = csv_rows(&tmp.path().join("mechanics.csv"));
    let m = |arm: &str, metric: &str| mech.iter().find(|r| r["arm"].starts_with(arm) && r["metric"] == metric).unwrap()["value"].clone();
    assert_eq!(m("mini", "runs ended by wall-clock timeout"), "6.0");
    assert_eq!(m("mini", "looping runs"), "6.0");
    assert_eq!(m("terminus", "silent give-ups"), "1.0");
    assert_eq!(m("terminus", "peak writes to a single file"), "6.0");
    let tasks = csv_rows(&tmp.path().join("per_task.csv"));
    assert_eq!(tasks.len(), 68);
    assert!(tasks.iter().any(|r| r["task_id"] == "fix-git" && r["arm"].starts_with("mini") && r["result"] == "passed"));
    let verdicts = csv_rows(&tmp.path().join("verdicts.csv"));
    assert_eq!(verdicts.len(), 70);
}

#[test]
fn the_markdown_report_is_stable() {
    let tmp = tempdir();
    let r = sample_report(tmp.path(), "2");
    let md = String::from_utf8(r.stdout).unwrap();
    assert_eq!(md, std::fs::read_to_string(tmp.path().join("report.md")).unwrap());
    insta::assert_snapshot!("sample_study_markdown", md);
}

#[test]
fn charts_are_valid_and_labelled() {
    let tmp = tempdir();
    sample_report(tmp.path(), "2");
    for (name, labels) in [
        ("pass_rate", vec!["pass@1 (%)", "arm", "mini-swe-agent, think", "8/34 = 23.5%"]),
        ("failure_modes", vec!["failed runs", "worked then wrong", "budget exhausted", "terminus-2, no think"]),
        ("per_task", vec!["fix-git", "passed", "early resignation"]),
        ("steps", vec!["steps", "median"]),
    ] {
        let svg = std::fs::read_to_string(tmp.path().join(format!("{name}.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{name}.svg");
        for l in labels {
            assert!(svg.contains(&format!(">{l}<")) || svg.contains(l), "{name}.svg lacks the label {l}");
        }
        let png = std::fs::read(tmp.path().join(format!("{name}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}.png");
        let (w, h) = (u32::from_be_bytes(png[16..20].try_into().unwrap()), u32::from_be_bytes(png[20..24].try_into().unwrap()));
        let expect = match name {
            "per_task" => (900, 120 + 18 * 34),
            "failure_modes" => (900, 560),
            _ => (800, 500),
        };
        assert_eq!((w, h), expect, "{name}.png size");
    }
}

#[test]
fn report_files_are_byte_identical_across_thread_counts() {
    let (one, two) = (tempdir(), tempdir());
    sample_report(one.path(), "1");
    sample_report(two.path(), "2");
    // The files of the report; its html/ site is compared page by page in tests/html_report.rs.
    let mut names: Vec<String> = std::fs::read_dir(one.path())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 26);
    assert!(one.path().join("html/index.html").exists(), "--out writes the HTML report to html/");
    for n in names {
        assert!(
            std::fs::read(one.path().join(&n)).unwrap() == std::fs::read(two.path().join(&n)).unwrap(),
            "{n} differs between 1 and 2 threads"
        );
    }
}

#[test]
fn report_with_no_arguments_runs_the_sample_study_from_a_checkout() {
    let r = coroner_in(&root(), &["report", "-q"]);
    assert_eq!(r.status.code(), Some(0));
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(out.contains("8/34  23.5%") && out.contains("[12.4, 40.0]"), "{out}");
    let elsewhere = tempdir();
    assert_eq!(coroner_in(elsewhere.path(), &["report"]).status.code(), Some(2));
}

#[test]
fn compare_prints_the_verdict_first() {
    let r = coroner_in(&root(), &["compare", "mini-swe-agent, think", "terminus-2, no think", "-q"]);
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(
        out.lines().next().unwrap().ends_with("no detectable difference at n=34 (smallest difference this design can detect: ~22 pp)"),
        "{out}"
    );
    assert!(out.contains("budget_exhausted -> passed: 2"));
    let named = coroner_in(
        &root(),
        &["compare", "mini-swe-agent, think", "terminus-2, no think", "--study", "samples/study/study.toml", "-q", "--format", "json"],
    );
    let c: serde_json::Value = serde_json::from_slice(&named.stdout).unwrap();
    assert_eq!((c["paired"].as_bool(), c["n"].as_u64()), (Some(true), Some(34)));
    let bad = coroner_in(&root(), &["compare", "nope", "terminus-2, no think", "-q"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// A verdict of one task: passed, or failed as worked-then-wrong.
fn verdict(task: &str, passed: bool) -> coroner::model::Verdict {
    use coroner::model::{Mechanics, OutcomeStatus, Verdict};
    Verdict {
        trajectory_id: task.into(),
        task_id: task.into(),
        arm: None,
        trial: 0,
        harness: "h".into(),
        model: None,
        outcome: if passed { OutcomeStatus::Passed } else { OutcomeStatus::Failed },
        primary: (!passed).then(|| "worked_then_wrong".to_string()),
        classes: Vec::new(),
        flags: Vec::new(),
        mechanics: Mechanics::default(),
        registry_source: "none".into(),
        reason: None,
        evidence: Vec::new(),
        source: None,
    }
}

#[test]
fn unequal_unpaired_arms_are_reported_with_both_sizes_and_unshared_tasks_are_named() {
    let v = verdict;
    // Unpaired: 8 tasks against 24, no task in common.
    let a: Vec<_> = (0..8).map(|i| v(&format!("a{i}"), i < 4)).collect();
    let b: Vec<_> = (0..24).map(|i| v(&format!("b{i}"), i < 6)).collect();
    let c = coroner::report::compare::compare(&ArmTally::of("a", &a), &ArmTally::of("b", &b));
    assert!(!c.paired);
    assert_eq!((c.n_a, c.n_b), (8, 24));
    assert_eq!(c.n, 12, "the harmonic mean 2·8·24/32, not the smaller arm");
    let text = coroner::report::compare::render(&c, false);
    assert!(text.contains("unpaired design on 8 and 24 tasks (power as for 12 per arm)"), "{text}");
    let sd = (12.0_f64 * 0.25 * 0.75).sqrt();
    assert!(text.contains(&format!("({sd:.1} tasks)")), "the noise is also given in tasks: {text}");
    // Paired on the shared tasks; the ones only one arm ran are named, not dropped silently.
    let a: Vec<_> = (0..10).map(|i| v(&format!("t{i}"), i < 5)).collect();
    let b: Vec<_> = (2..12).map(|i| v(&format!("t{i}"), i < 4)).collect();
    let c = coroner::report::compare::compare(&ArmTally::of("a", &a), &ArmTally::of("b", &b));
    assert!(c.paired);
    assert_eq!(c.n, 8);
    assert_eq!(c.one_arm_only, ["t0", "t1", "t10", "t11"]);
    assert!(coroner::report::compare::render(&c, false).contains("left out (run by one arm only): t0, t1, t10, t11"));
}

#[test]
fn comparisons_of_degenerate_arms_stay_finite() {
    use coroner::model::Verdict;
    let v = verdict;
    let all_pass: Vec<Verdict> = (0..5).map(|i| v(&format!("t{i}"), true)).collect();
    let none_pass: Vec<Verdict> = (0..5).map(|i| v(&format!("t{i}"), false)).collect();
    for (a, b) in [(&all_pass, &all_pass), (&all_pass, &none_pass), (&none_pass, &Vec::new()), (&Vec::new(), &Vec::new())] {
        let c = coroner::report::compare::compare(&ArmTally::of("a", a), &ArmTally::of("b", b));
        for x in [
            c.difference.estimate,
            c.difference.interval.lo,
            c.difference.interval.hi,
            c.test.p_value,
            c.a_rate.interval.lo,
            c.b_rate.interval.hi,
            c.sigma_pp,
        ] {
            assert!(x.is_finite(), "{c:?}");
        }
        assert!(!coroner::report::compare::render(&c, false).contains("NaN"));
    }
}

#[test]
fn untrusted_names_are_escaped_in_markdown_and_neutralized_on_the_terminal() {
    let doubles = root().join("samples/doubles").display().to_string();
    let arm = format!("<b>evil|arm</b>\u{1b}]0;pwned\u{7}={doubles}");
    let r = coroner_in(&root(), &["report", "-q", "--format", "markdown", "--arm", &arm]);
    let md = String::from_utf8_lossy(&r.stdout);
    assert!(!md.contains("<b>") && md.contains("&lt;b&gt;evil\\|arm&lt;/b&gt;"), "{md}");
    assert!(!md.contains('\u{1b}') && !md.contains('\u{7}'));
    let r = coroner_in(&root(), &["report", "-q", "--arm", &arm]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && text.contains("evil|arm"), "{text}");
}

#[test]
fn compare_uses_the_methods_it_is_given_and_says_which() {
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["compare", "mini-swe-agent, think", "terminus-2, no think", "-q", "--format", "json"];
        args.extend_from_slice(extra);
        let r = coroner_in(&root(), &args);
        assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
        serde_json::from_slice(&r.stdout).unwrap()
    };
    // The sample's flips are 3 against 2: exact McNemar 2·P(X ≤ 2 | 5, ½) = 1, mid-p 1 − C(5,3)/32.
    let d = json(&[]);
    assert_eq!(d["test_name"], "McNemar mid-p");
    assert!((d["test"]["p_value"].as_f64().unwrap() - (1.0 - 10.0 / 32.0)).abs() < 1e-12);
    let e = json(&["--paired-test", "exact", "--rate-interval", "clopper-pearson"]);
    assert_eq!(e["test_name"], "McNemar exact");
    assert_eq!(e["methods"]["mcnemar"], "exact");
    assert!((e["test"]["p_value"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    let cp = coroner::stats::rate_estimate(coroner::stats::Proportion::new(8, 34), 0.95, coroner::stats::ProportionMethod::ClopperPearson);
    assert!((e["a_rate"]["interval"]["lo"].as_f64().unwrap() - cp.interval.lo).abs() < 1e-12);
    assert!((e["a_rate"]["interval"]["hi"].as_f64().unwrap() - cp.interval.hi).abs() < 1e-12);
    let text = coroner_in(&root(), &["compare", "mini-swe-agent, think", "terminus-2, no think", "-q", "--paired-test", "exact"]);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.contains("methods: --rate-interval wilson --paired-test exact"), "{text}");
    let bad = coroner_in(&root(), &["compare", "a", "b", "--paired-test", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_crossed_threshold_fails_the_run_and_names_itself() {
    let tmp = tempdir();
    let junit = tmp.path().join("gates.xml");
    let r = coroner_in(
        &root(),
        &[
            "report",
            "-q",
            "--format",
            "markdown",
            "--fail-if",
            "infrastructure > 2%",
            "--fail-if",
            "pass_rate('terminus-2, no think') < 0.20",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(r.status.code(), Some(1), "{}", String::from_utf8_lossy(&r.stderr));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("threshold crossed: `infrastructure > 2%` for arm mini-swe-agent, think (2.9%)"), "{err}");
    assert!(!err.contains("pass_rate"), "a threshold that held is not named as crossed: {err}");
    let md = String::from_utf8_lossy(&r.stdout);
    assert!(md.contains("### Thresholds") && md.contains("| CROSSED |") && md.contains("| held |"), "{md}");
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(x.contains("tests=\"3\" failures=\"2\""), "{x}");
    assert!(x.contains("<failure message=\"crossed: infrastructure &gt; 2%\">"), "{x}");
    // The same thresholds with room to spare pass.
    let ok = coroner_in(&root(), &["report", "-q", "--fail-if", "infrastructure > 5%", "--fail-if", "pass_rate < 10%"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
}

#[test]
fn a_malformed_threshold_is_a_usage_error_pointing_into_it() {
    for (expr, label) in [
        ("infrastructure >> 5%", "a number (0.40, or 40%) goes here"),
        ("infrastructure > 5", "a fraction or a percentage?"),
        ("pass_rate('no such arm') < 0.4", "unknown arm"),
        ("hallucinated > 1%", "unknown metric"),
    ] {
        let r = coroner_in(&root(), &["report", "-q", "--fail-if", expr]);
        assert_eq!(r.status.code(), Some(2), "{expr}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains("--fail-if") && err.contains(label) && err.contains(expr), "{expr}: {err}");
    }
}
