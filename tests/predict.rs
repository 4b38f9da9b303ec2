//! Pre-registered predictions over the sample study: each verdict and exit code, broken seals
//! (tampered predictions, changed rules, late), malformed files, retraction, Markdown and JUnit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use coroner::stats::{self, Proportion, ProportionMethod, Sides};

use crate::common::{coroner, coroner_in, root, stdout, tempdir};

const A: &str = "mini-swe-agent, think";
const B: &str = "terminus-2, no think";
/// Before the sample's first trajectory (2026-02-20T09:01:00Z).
const BEFORE: &str = "2026-02-19T12:00:00Z";

fn study() -> String {
    root().join("samples/study/study.toml").display().to_string()
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// stderr with miette's line wrapping undone (continuation lines joined with one space).
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(|l| l.trim_start_matches([' ', '│']).trim_end())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One `[[prediction]]` table.
fn prediction(id: &str, claim: &str, escape: &str) -> String {
    format!("[[prediction]]\nid = \"{id}\"\nclaim = {{ {claim} }}\nrationale = \"because\"\nescape_clause = \"{escape}\"\n\n")
}

/// Runs git in `dir` as a fixed committer at a fixed date (2026-03-01), and asserts it worked.
fn git_in(dir: &Path, args: &[&str]) {
    let r = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_COMMITTER_DATE", "2026-03-01T00:00:00Z")
        .env("GIT_AUTHOR_DATE", "2026-03-01T00:00:00Z")
        .output()
        .expect("git runs");
    assert!(r.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&r.stderr));
}

/// The sample study as it was before its run: the same arms, no transcripts yet (a copy in
/// `dir/planned`), which is what a seal is made against.
fn planned_study(dir: &Path) -> String {
    let planned = dir.join("planned");
    std::fs::create_dir_all(&planned).unwrap();
    std::fs::copy(study(), planned.join("study.toml")).unwrap();
    s(&planned.join("study.toml"))
}

/// Writes `predictions.toml` into `dir` and seals it at `now`, before the run.
fn write_and_seal(dir: &Path, body: &str, now: &str, extra: &[&str]) -> PathBuf {
    let p = dir.join("predictions.toml");
    std::fs::write(&p, format!("title = \"test predictions\"\nalpha = 0.05\n\n{body}")).unwrap();
    let st = planned_study(dir);
    let mut args = vec!["predict", "seal", "predictions.toml", "--study", &st, "--n", "34", "--now", now];
    args.extend_from_slice(extra);
    let r = coroner_in(dir, &args);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert!(dir.join("predictions.lock").exists());
    p
}

/// Runs `predict check` with JSON on stdout.
fn check(dir: &Path, extra: &[&str]) -> Output {
    let st = study();
    let mut args = vec!["predict", "check", "predictions.toml", &st, "-q", "--format", "json"];
    args.extend_from_slice(extra);
    coroner_in(dir, &args)
}

fn report(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(o), stderr(o)))
}

fn by_id(r: &serde_json::Value) -> BTreeMap<String, serde_json::Value> {
    r["predictions"].as_array().unwrap().iter().map(|e| (e["id"].as_str().unwrap().to_string(), e.clone())).collect()
}

/// The Wilson interval of k/n with ends at one-sided 95% (as the check reports).
fn bounds(k: u64, n: u64) -> (f64, f64) {
    let p = Proportion::new(k, n);
    let lo = stats::proportion_interval(p, 0.95, Sides::Lower, ProportionMethod::Wilson).lo;
    let hi = stats::proportion_interval(p, 0.95, Sides::Upper, ProportionMethod::Wilson).hi;
    (lo, hi)
}

#[test]
fn the_sample_predictions_pass_the_ci_gate() {
    let dir = root().join("samples/predictions");
    let r = coroner_in(
        &root(),
        &[
            "predict",
            "check",
            "samples/predictions/predictions.toml",
            "samples/study/study.toml",
            "--lock",
            "samples/predictions/predictions.lock",
            "-q",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}\n{}\nafter a change to rules/, re-seal the sample as samples/predictions/README.md says",
        stdout(&r),
        stderr(&r)
    );
    let rep = report(&r);
    assert_eq!(
        (rep["confirmed"].as_u64(), rep["inconclusive"].as_u64(), rep["refuted"].as_u64(), rep["retracted"].as_u64()),
        (Some(4), Some(1), Some(0), Some(1))
    );
    assert_eq!(rep["seal"]["sealed_at"], "2026-02-19T12:00:00Z");
    assert_eq!(rep["seal"]["earliest"], "2026-02-20T09:01:00Z");
    assert_eq!(rep["seal"]["late"], false);
    let e = by_id(&rep);
    // 8 of the thinking arm's 26 model failures are budget exhaustion (the report's table).
    let budget = &e["think-exhausts-budget"];
    assert_eq!((budget["status"].as_str(), budget["observed"].as_str()), (Some("confirmed"), Some("8/26 (30.8%)")));
    let (lo, hi) = bounds(8, 26);
    assert!(
        (budget["interval"]["lo"].as_f64().unwrap() - lo).abs() < 1e-12 && (budget["interval"]["hi"].as_f64().unwrap() - hi).abs() < 1e-12
    );
    // 8/34 vs 7/34 on the same tasks: +1/34.
    let diff = &e["harness-makes-no-big-difference"];
    assert_eq!(diff["status"], "confirmed");
    assert!((diff["estimate"].as_f64().unwrap() - 1.0 / 34.0).abs() < 1e-12);
    // 21 of 27: above 70%, but its interval reaches below.
    let wtw = &e["small-models-fail-by-working-then-wrong"];
    assert_eq!((wtw["status"].as_str(), wtw["observed"].as_str()), (Some("inconclusive"), Some("21/27 (77.8%)")));
    assert!(wtw["interval"]["lo"].as_f64().unwrap() < 0.70 && wtw["p"].as_f64().unwrap() > 0.05);
    assert_eq!(
        (e["few-wall-clock-timeouts"]["status"].as_str(), e["few-wall-clock-timeouts"]["estimate"].as_f64()),
        (Some("confirmed"), Some(3.0))
    );
    assert_eq!(e["no-write-storms"]["estimate"].as_f64(), Some(6.0));
    assert_eq!(e["harness-within-five-points"]["status"], "retracted");
    // Holm: three claims with sampling error; the smallest p is multiplied by 3.
    assert_eq!(rep["family"], 3);
    let p = budget["p"].as_f64().unwrap();
    assert!((budget["p_holm"].as_f64().unwrap() - (3.0 * p).min(1.0)).abs() < 1e-12, "{budget}");
    assert!(dir.join("predictions.lock").exists());
}

#[test]
fn confirmed_refuted_and_inconclusive_claims_and_their_exit_codes() {
    let tmp = tempdir();
    let body = [
        prediction("a-passes-some", &format!("metric = \"pass_rate\", arm = \"{A}\", comparator = \">=\", value = 0.10"), "ok"),
        prediction(
            "a-passes-most",
            &format!("metric = \"pass_rate\", arm = \"{A}\", comparator = \">=\", value = 0.60"),
            "If A passes under 60%, A is weaker than I think.",
        ),
        prediction("b-passes-a-quarter", &format!("metric = \"pass_rate\", arm = \"{B}\", comparator = \">=\", value = 0.25"), "unsure"),
        prediction(
            "a-rarely-times-out",
            &format!("metric = \"timeouts\", arm = \"{A}\", comparator = \"<=\", value = 2"),
            "If A times out more than twice, its budget is too tight.",
        ),
    ]
    .concat();
    write_and_seal(tmp.path(), &body, BEFORE, &[]);
    let junit = tmp.path().join("out.xml");
    let md = tmp.path().join("out.md");
    let r = check(tmp.path(), &["--junit", &s(&junit), "--markdown", &s(&md)]);
    assert_eq!(r.status.code(), Some(1), "a refuted prediction gates: {}", stderr(&r));
    let rep = report(&r);
    let e = by_id(&rep);
    let status = |id: &str| e[id]["status"].as_str().unwrap().to_string();
    // 8/34 = 23.5%: its lower bound (13.8%) clears 10%, its upper bound (36.7%) misses 60%.
    assert_eq!(status("a-passes-some"), "confirmed");
    assert_eq!(status("a-passes-most"), "refuted");
    // 7/34 = 20.6% against 25%: the interval straddles it.
    assert_eq!(status("b-passes-a-quarter"), "inconclusive");
    // 6 runs of A end at the wall clock: an exact count, no interval.
    assert_eq!(status("a-rarely-times-out"), "refuted");
    assert_eq!(e["a-rarely-times-out"]["estimate"].as_f64(), Some(6.0));
    assert!(e["a-rarely-times-out"]["interval"].is_null());
    let (lo, hi) = bounds(8, 34);
    assert!(lo > 0.10 && hi < 0.60, "{lo} {hi}");
    assert!(e["a-passes-most"]["p_against_holm"].as_f64().unwrap() <= 0.05);
    // The table and the escape clauses of refuted predictions.
    let st = study();
    let t = coroner_in(tmp.path(), &["predict", "check", "predictions.toml", &st, "-q"]);
    assert_eq!(t.status.code(), Some(1));
    let text = stdout(&t);
    assert!(text.contains("escape clause: If A passes under 60%, A is weaker than I think."), "{text}");
    assert!(text.contains("escape clause: If A times out more than twice, its budget is too tight."), "{text}");
    assert!(!text.contains("escape clause: unsure"), "only refuted predictions print their escape clause");
    assert!(text.contains("1 confirmed, 1 inconclusive, 2 refuted, 0 retracted"), "{text}");
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(
        // Ids and clauses are the author's text: escaped for Markdown.
        markdown.contains("| a\\-passes\\-most |")
            && markdown.contains("**refuted**")
            && markdown.contains("escape clause: If A passes under 60%"),
        "{markdown}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    let cases = junit_cases(&xml);
    assert_eq!(cases.len(), 4);
    let failed: Vec<&str> = cases.iter().filter(|c| c.failure.is_some()).map(|c| c.name.as_str()).collect();
    assert_eq!(failed, ["a-passes-most", "a-rarely-times-out"]);
}

#[test]
fn a_tampered_predictions_file_breaks_the_seal() {
    let tmp = tempdir();
    let p = write_and_seal(
        tmp.path(),
        &prediction("t", &format!("metric = \"timeouts\", arm = \"{A}\", comparator = \"<=\", value = 6"), "e"),
        BEFORE,
        &[],
    );
    assert_eq!(check(tmp.path(), &[]).status.code(), Some(0));
    // Sealing again over an existing lock is refused.
    let st = planned_study(tmp.path());
    let again = coroner_in(tmp.path(), &["predict", "seal", "predictions.toml", "--study", &st, "--now", BEFORE]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("--force"));
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replace("value = 6", "value = 7")).unwrap();
    let junit = tmp.path().join("seal.xml");
    let r = check(tmp.path(), &["--junit", &s(&junit)]);
    assert_eq!(r.status.code(), Some(2));
    let err = stderr(&r);
    assert!(err.contains("the predictions file changed since sealing (predictions_sha256"), "{err}");
    assert!(!err.contains("rules in force differ"), "only the predictions changed: {err}");
    assert!(r.stdout.is_empty(), "nothing is judged under a broken seal");
    let cases = junit_cases(&std::fs::read_to_string(&junit).unwrap());
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].name, "seal");
    assert!(cases[0].error.as_deref().unwrap_or_default().contains("predictions file changed"));
}

#[test]
fn changed_rules_break_the_seal() {
    let tmp = tempdir();
    write_and_seal(
        tmp.path(),
        &prediction("t", &format!("metric = \"looping_runs\", arm = \"{A}\", comparator = \">=\", value = 1"), "e"),
        BEFORE,
        &[],
    );
    let rules = tmp.path().join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    let taxonomy = std::fs::read_to_string(root().join("rules/taxonomy.toml")).unwrap();
    // The same taxonomy from another directory is the same rules.
    std::fs::write(rules.join("taxonomy.toml"), &taxonomy).unwrap();
    assert_eq!(check(tmp.path(), &["--rules", "rules"]).status.code(), Some(0));
    // Reordering the precedence changes which class is primary: other rules.
    let changed = taxonomy.replacen(
        "\"plan_without_execution\",\n  \"early_resignation\"",
        "\"early_resignation\",\n  \"plan_without_execution\"",
        1,
    );
    assert_ne!(changed, taxonomy, "the precedence was found in rules/taxonomy.toml");
    std::fs::write(rules.join("taxonomy.toml"), changed).unwrap();
    let r = check(tmp.path(), &["--rules", "rules"]);
    assert_eq!(r.status.code(), Some(2));
    let err = stderr(&r);
    assert!(err.contains("the rules in force differ from the sealed rules (rules_sha256"), "{err}");
    assert!(!err.contains("predictions file changed"), "{err}");
}

#[test]
fn a_changed_or_missing_registry_breaks_the_seal() {
    let tmp = tempdir();
    let import = |tools: &str| {
        std::fs::write(tmp.path().join("tools.json"), tools).unwrap();
        let r = coroner_in(tmp.path(), &["registry", "import", "tools.json", "--harness", "terminus-2", "-o", "reg.json"]);
        assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    };
    import(r#"["bash", "submit"]"#);
    write_and_seal(
        tmp.path(),
        &prediction("t", &format!("metric = \"looping_runs\", arm = \"{A}\", comparator = \">=\", value = 0"), "e"),
        BEFORE,
        &["--registry", "reg.json"],
    );
    let lock = std::fs::read_to_string(tmp.path().join("predictions.lock")).unwrap();
    assert!(lock.contains("[registries]\n\"reg.json\" = \""), "{lock}");
    assert_eq!(check(tmp.path(), &["--registry", "reg.json"]).status.code(), Some(0));
    let r = check(tmp.path(), &[]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("the sealed registry reg.json (sha256"), "{}", stderr(&r));
    import(r#"["bash", "submit", "python"]"#);
    let r = check(tmp.path(), &["--registry", "reg.json"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("the registry reg.json changed since sealing"), "{}", stderr(&r));
    // A tool renamed by hand keeps the registry's source digest; the seal still sees it.
    import(r#"["bash", "submit"]"#);
    assert_eq!(check(tmp.path(), &["--registry", "reg.json"]).status.code(), Some(0), "re-importing the sealed list restores the seal");
    let reg = std::fs::read_to_string(tmp.path().join("reg.json")).unwrap();
    assert!(reg.contains("\"submit\""), "{reg}");
    std::fs::write(tmp.path().join("reg.json"), reg.replace("\"submit\"", "\"submit_x\"")).unwrap();
    let r = check(tmp.path(), &["--registry", "reg.json"]);
    assert_eq!(r.status.code(), Some(2), "a hand-edited registry breaks the seal");
    assert!(stderr(&r).contains("the registry reg.json changed since sealing"), "{}", stderr(&r));
}

#[test]
fn a_late_seal_is_refused_unless_allowed() {
    let tmp = tempdir();
    let body = prediction("t", &format!("metric = \"pass_rate\", arm = \"{B}\", comparator = \"<=\", value = 0.9"), "e");
    let p = tmp.path().join("predictions.toml");
    std::fs::write(&p, &body).unwrap();
    let st = study();
    // The study's transcripts exist: sealing now could copy their outcomes into the claims.
    let refused = coroner_in(tmp.path(), &["predict", "seal", "predictions.toml", "--study", &st, "--now", "2026-03-01T00:00:00Z"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("the study's transcripts already exist (70 trajectories)"), "{}", stderr(&refused));
    assert!(!tmp.path().join("predictions.lock").exists());
    let seal =
        coroner_in(tmp.path(), &["predict", "seal", "predictions.toml", "--study", &st, "--now", "2026-03-01T00:00:00Z", "--allow-late"]);
    assert_eq!(seal.status.code(), Some(0), "{}", stderr(&seal));
    assert!(stderr(&seal).contains("sealed over 70 existing trajectories"), "{}", stderr(&seal));
    let r = check(tmp.path(), &[]);
    assert_eq!(r.status.code(), Some(2));
    assert!(
        stderr(&r).contains("the seal (2026-03-01T00:00:00Z) is later than the run's first trajectory (2026-02-20T09:01:00Z)"),
        "{}",
        stderr(&r)
    );
    assert!(stderr(&r).contains("70 of the study's trajectories already existed"), "{}", stderr(&r));
    let allowed = check(tmp.path(), &["--allow-late"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    assert_eq!((report(&allowed)["seal"]["late"].as_bool(), report(&allowed)["seal"]["sealed_over"].as_u64()), (Some(true), Some(70)));
    let text = coroner_in(tmp.path(), &["predict", "check", "predictions.toml", &st, "-q", "--allow-late"]);
    assert!(stdout(&text).contains("LATE: sealed after the run's first trajectory"), "{}", stdout(&text));
    // A seal over existing outcomes with its time set back is still late.
    let backdated =
        coroner_in(tmp.path(), &["predict", "seal", "predictions.toml", "--study", &st, "--now", BEFORE, "--allow-late", "--force"]);
    assert_eq!(backdated.status.code(), Some(0), "{}", stderr(&backdated));
    let r = check(tmp.path(), &[]);
    assert_eq!(r.status.code(), Some(2), "{}", stdout(&r));
    assert!(stderr(&r).contains("it was sealed when 70 of the study's trajectories already existed"), "{}", stderr(&r));
    assert!(!stderr(&r).contains("is later than the run's first"), "its time precedes the run: {}", stderr(&r));
    let text = coroner_in(tmp.path(), &["predict", "check", "predictions.toml", &st, "-q", "--allow-late"]);
    assert!(stdout(&text).contains("LATE: sealed when 70 of the study's trajectories already existed"), "{}", stdout(&text));
    // `COR_NOW` seals at a given time too, before the run.
    std::fs::remove_file(tmp.path().join("predictions.lock")).unwrap();
    let planned = planned_study(tmp.path());
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_coroner"))
        .current_dir(tmp.path())
        .env("COR_NOW", BEFORE)
        .args(["predict", "seal", "predictions.toml", "--study", &planned, "--n", "34"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert_eq!(check(tmp.path(), &[]).status.code(), Some(0));
}

/// A lock arrives in a pull request: a commit that is an option, or any field edited by hand,
/// is refused before git or the check ever reads it.
#[test]
fn a_hostile_lock_never_reaches_git() {
    let tmp = tempdir();
    // In a repository with a commit, where `git show --output=FILE` would write FILE.
    let git = |args: &[&str]| git_in(tmp.path(), args);
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "start"]);
    write_and_seal(
        tmp.path(),
        &prediction("t", &format!("metric = \"timeouts\", arm = \"{A}\", comparator = \"<=\", value = 6"), "e"),
        BEFORE,
        &[],
    );
    let lock_path = tmp.path().join("predictions.lock");
    let lock = std::fs::read_to_string(&lock_path).unwrap();
    assert!(lock.contains("format = 2") && lock.contains("seal_sha256 = \""), "{lock}");
    // The attack: git reads the value as `--output=FILE` and writes the file.
    assert!(lock.contains("git_commit = "), "sealed in a repository: {lock}");
    let attack =
        regex::Regex::new(r#"git_commit = "[0-9a-f]+""#).unwrap().replace(&lock, r#"git_commit = "--output=pwned.md""#).into_owned();
    std::fs::write(&lock_path, &attack).unwrap();
    let r = check(tmp.path(), &[]);
    assert_eq!(r.status.code(), Some(2), "{}", stdout(&r));
    assert!(stderr(&r).contains("git_commit is not a commit id"), "{}", stderr(&r));
    assert!(!tmp.path().join("pwned.md").exists(), "git never saw the value");
    // A valid-looking edit of a field the hashes do not cover is caught by seal_sha256.
    let edited = lock.replace("sealed_at = \"2026-02-19T12:00:00Z\"", "sealed_at = \"2026-02-18T12:00:00Z\"");
    assert_ne!(edited, lock);
    std::fs::write(&lock_path, &edited).unwrap();
    let r = check(tmp.path(), &[]);
    assert_eq!(r.status.code(), Some(2), "{}", stdout(&r));
    assert!(stderr(&r).contains("the lock was edited after sealing (seal_sha256"), "{}", stderr(&r));
    // A lock of the old format, which had no seal_sha256, is refused with a way forward.
    std::fs::write(&lock_path, lock.replace("format = 2", "format = 1")).unwrap();
    let r = check(tmp.path(), &[]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("lock format 1 is not 2") && stderr(&r).contains("seal again"), "{}", stderr(&r));
}

/// Regression: the seal counted a study's transcripts with the built-in adapters only, so an arm
/// of a shape only a format mapping reads looked empty and a late seal went through.
#[test]
fn a_late_seal_counts_transcripts_only_a_mapping_reads() {
    let tmp = tempdir();
    let runs = tmp.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let mapped = root().join("rules/formats/vorflux-spans/django__django-99999.json");
    std::fs::copy(&mapped, runs.join("django__django-99999.json")).unwrap();
    std::fs::write(tmp.path().join("study.toml"), "title = \"mapped\"\n\n[[arm]]\nname = \"vorflux\"\ninputs = [\"runs\"]\n").unwrap();
    std::fs::write(
        tmp.path().join("predictions.toml"),
        prediction("t", "metric = \"pass_rate\", arm = \"vorflux\", comparator = \"<=\", value = 0.9", "e"),
    )
    .unwrap();
    let st = s(&tmp.path().join("study.toml"));
    let refused = coroner_in(tmp.path(), &["predict", "seal", "predictions.toml", "--study", &st, "--now", "2026-03-01T00:00:00Z"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("the study's transcripts already exist (1 trajectory)"), "{}", stderr(&refused));
    assert!(!tmp.path().join("predictions.lock").exists());
}

/// Regression: arms taken from transcript metadata (no study file) carried no first-trajectory
/// time, so a late seal over plain run directories went unnoticed.
#[test]
fn a_late_seal_over_run_directories_is_refused_too() {
    let tmp = tempdir();
    let arm = "terminus-2/anthropic/claude-sonnet-4";
    std::fs::write(
        tmp.path().join("predictions.toml"),
        prediction("t", &format!("metric = \"looping_runs\", arm = \"{arm}\", comparator = \"<=\", value = 2"), "e"),
    )
    .unwrap();
    let seal = coroner_in(tmp.path(), &["predict", "seal", "predictions.toml", "--now", "2026-03-01T00:00:00Z"]);
    assert_eq!(seal.status.code(), Some(0), "{}", stderr(&seal));
    let (a, b) = (s(&root().join("samples/study/arm-a")), s(&root().join("samples/study/arm-b")));
    let r = coroner_in(tmp.path(), &["predict", "check", "predictions.toml", &a, &b, "-q"]);
    assert_eq!(r.status.code(), Some(2), "{}", stdout(&r));
    assert!(stderr(&r).contains("is later than the run's first trajectory (2026-02-20T09:"), "{}", stderr(&r));
    let r = coroner_in(tmp.path(), &["predict", "check", "predictions.toml", &a, &b, "-q", "--allow-late", "--format", "json"]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let rep = report(&r);
    assert_eq!((rep["seal"]["late"].as_bool(), by_id(&rep)["t"]["estimate"].as_f64()), (Some(true), Some(2.0)));
}

#[test]
fn malformed_predictions_are_diagnosed_with_a_span() {
    for (name, needle) in [("syntax", "missing comma"), ("claims", "a rate of 15 is")] {
        let file = format!("samples/predictions/invalid/{name}.toml");
        let r = coroner_in(&root(), &["predict", "check", &file, "samples/study/study.toml"]);
        assert_eq!(r.status.code(), Some(2), "{name}");
        let err = stderr(&r);
        assert!(err.contains(needle) && err.contains(&format!("[{file}:")), "{err}");
        insta::assert_snapshot!(format!("invalid_{name}"), String::from_utf8_lossy(&r.stderr));
        // Sealing refuses it the same way.
        assert_eq!(coroner_in(&root(), &["predict", "seal", &file, "-o", "/dev/null/never"]).status.code(), Some(2));
    }
    // A class the taxonomy lacks and an arm the study lacks, with the known names.
    let tmp = tempdir();
    std::fs::write(
        tmp.path().join("predictions.toml"),
        prediction("x", "metric = \"class_count\", arm = \"nobody\", class = \"budget_exhausted\", comparator = \">=\", value = 1", "e"),
    )
    .unwrap();
    let st = study();
    let r = coroner_in(tmp.path(), &["predict", "seal", "predictions.toml", "--study", &st]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("`nobody` is not an arm of this run") && stderr(&r).contains(A), "{}", stderr(&r));
    std::fs::write(
        tmp.path().join("predictions.toml"),
        prediction("x", &format!("metric = \"class_count\", arm = \"{A}\", class = \"gave_up\", comparator = \">=\", value = 1"), "e"),
    )
    .unwrap();
    let r = coroner_in(tmp.path(), &["predict", "seal", "predictions.toml"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("`gave_up` is not a class of the taxonomy in force"), "{}", stderr(&r));
    // No lock at all: not pre-registered.
    let r = coroner(&[
        "predict",
        "check",
        &s(&root().join("samples/predictions/predictions.toml")),
        &st,
        "--lock",
        &s(&tmp.path().join("none.lock")),
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("it does not exist"), "{}", stderr(&r));
}

#[test]
fn a_retraction_keeps_the_seal_valid() {
    let tmp = tempdir();
    let body = [
        prediction("keep", &format!("metric = \"peak_writes\", arm = \"{B}\", comparator = \"<=\", value = 10"), "e"),
        prediction(
            "drop",
            &format!("metric = \"pass_rate\", arm = \"{A}\", comparator = \">=\", value = 0.6"),
            "If A passes under 60%, A is weaker.",
        ),
    ]
    .concat();
    let p = write_and_seal(tmp.path(), &body, BEFORE, &[]);
    assert_eq!(check(tmp.path(), &[]).status.code(), Some(1), "`drop` is refuted while it stands");
    let before = std::fs::read_to_string(&p).unwrap();
    let r = coroner_in(
        tmp.path(),
        &["predict", "retract", "drop", "--note", "the 60% came from another benchmark", "--now", "2026-02-19T13:00:00Z"],
    );
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let after = std::fs::read_to_string(&p).unwrap();
    let added: Vec<&str> = after.lines().filter(|l| !before.lines().any(|b| b == *l)).collect();
    assert_eq!(added, ["retracted = { note = \"the 60% came from another benchmark\", at = \"2026-02-19T13:00:00Z\" }"]);
    assert_eq!(after.lines().count(), before.lines().count() + 1, "nothing else changed");
    let c = check(tmp.path(), &[]);
    assert_eq!(c.status.code(), Some(0), "the seal holds and the retracted claim is not judged: {}", stderr(&c));
    let rep = report(&c);
    let e = by_id(&rep);
    assert_eq!(e["drop"]["status"], "retracted");
    assert_eq!(e["drop"]["retracted"]["note"], "the 60% came from another benchmark");
    assert!(e["drop"]["note"].is_null(), "retracted before the run");
    assert_eq!(e["keep"]["status"], "confirmed");
    // Retracting twice, or an unknown id, is refused.
    assert_eq!(coroner_in(tmp.path(), &["predict", "retract", "drop", "--note", "again"]).status.code(), Some(2));
    assert_eq!(coroner_in(tmp.path(), &["predict", "retract", "nope", "--note", "n"]).status.code(), Some(2));
    // A retraction after the run began is reported as such.
    std::fs::write(&p, &before).unwrap();
    assert_eq!(
        coroner_in(tmp.path(), &["predict", "retract", "drop", "--note", "hm", "--now", "2026-03-01T00:00:00Z"]).status.code(),
        Some(0)
    );
    let rep = report(&check(tmp.path(), &[]));
    assert!(by_id(&rep)["drop"]["note"].as_str().unwrap_or_default().contains("after the run's first trajectory"), "{rep}");
}

#[test]
fn sealing_prints_what_the_design_can_detect() {
    let tmp = tempdir();
    let lock = tmp.path().join("p.lock");
    let r = coroner_in(
        &root(),
        &[
            "predict",
            "seal",
            "samples/predictions/predictions.toml",
            "--study",
            "samples/study/study.toml",
            "--now",
            BEFORE,
            "--allow-late",
            "-o",
            &s(&lock),
        ],
    );
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let out = stdout(&r);
    assert!(out.contains("n from the study: mini-swe-agent, think 34 tasks, terminus-2, no think 34 tasks"), "{out}");
    assert!(out.contains("UNDERPOWERED: cannot be confirmed at n=34"), "{out}");
    let sealed: toml::Value = toml::from_str(&std::fs::read_to_string(&lock).unwrap()).unwrap();
    assert_eq!(sealed["sealed_over"].as_integer(), Some(70), "the transcripts existed: the lock says so");
    let committed: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("samples/predictions/predictions.lock")).unwrap()).unwrap();
    for key in ["predictions_sha256", "rules_sha256", "sealed_at", "coroner_version"] {
        assert_eq!(sealed[key], committed[key], "{key}: the committed lock is current");
    }
    let design = sealed["design"].as_array().unwrap();
    let five = design.iter().find(|d| d["id"].as_str() == Some("harness-within-five-points")).unwrap();
    assert_eq!((five["n"].as_integer(), five["underpowered"].as_bool()), (Some(34), Some(true)));
    // Without transcripts, `--n` gives the figures.
    let r = coroner_in(
        tmp.path(),
        &["predict", "seal", &s(&root().join("samples/predictions/predictions.toml")), "--n", "100", "-o", "n.lock"],
    );
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert!(stdout(&r).contains("n from --n") && !stdout(&r).contains("UNDERPOWERED: cannot be confirmed at n=100"), "{}", stdout(&r));
}

#[test]
fn junit_is_well_formed_and_escapes_what_it_quotes() {
    let tmp = tempdir();
    let tricky = "If <A> & \\\"B\\\" don't pass ]]> 60%, I'm wrong";
    let body = [
        prediction("refuted.one", &format!("metric = \"pass_rate\", arm = \"{A}\", comparator = \">=\", value = 0.6"), tricky),
        prediction("fine", &format!("metric = \"looping_runs\", arm = \"{A}\", comparator = \"==\", value = 6"), "e"),
        prediction("gone", &format!("metric = \"looping_runs\", arm = \"{B}\", comparator = \"==\", value = 6"), "e"),
    ]
    .concat();
    write_and_seal(tmp.path(), &body, BEFORE, &[]);
    assert_eq!(
        coroner_in(tmp.path(), &["predict", "retract", "gone", "--note", "<why> & \"how\"", "--now", BEFORE]).status.code(),
        Some(0)
    );
    let junit = tmp.path().join("j.xml");
    assert_eq!(check(tmp.path(), &["--junit", &s(&junit)]).status.code(), Some(1));
    let xml = std::fs::read_to_string(&junit).unwrap();
    let cases = junit_cases(&xml);
    assert_eq!(cases.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["refuted.one", "fine", "gone"]);
    let refuted = &cases[0];
    let failure = refuted.failure.as_deref().unwrap();
    assert!(failure.contains("escape clause: If <A> & \"B\" don't pass ]]> 60%, I'm wrong"), "{failure}");
    assert!(refuted.failure_message.starts_with("refuted: pass rate of \"mini-swe-agent, think\" ≥ 60%"), "{}", refuted.failure_message);
    assert!(cases[1].failure.is_none() && !cases[1].skipped);
    assert!(cases[2].skipped && cases[2].failure.is_none());
    assert!(cases[2].skipped_message.contains("<why> & \"how\""), "{}", cases[2].skipped_message);
    let totals = junit_totals(&xml);
    assert_eq!(totals, (3, 1, 1));
}

/// One `<testcase>` read back from JUnit XML.
#[derive(Debug, Default)]
struct Case {
    name: String,
    failure: Option<String>,
    failure_message: String,
    error: Option<String>,
    skipped: bool,
    skipped_message: String,
}

fn attr(e: &quick_xml::events::BytesStart, name: &str) -> String {
    e.attributes()
        .map(|a| a.expect("well-formed attribute"))
        .find(|a| a.key.as_ref() == name.as_bytes())
        .map(|a| a.unescape_value().expect("escaped attribute").into_owned())
        .unwrap_or_default()
}

/// Parses JUnit XML strictly (matched end tags, valid entities) into its testcases.
fn junit_cases(xml: &str) -> Vec<Case> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut cases = Vec::new();
    let mut current: Option<Case> = None;
    let mut text_of: Option<&'static str> = None;
    loop {
        match reader.read_event().unwrap_or_else(|e| panic!("malformed JUnit at {}: {e}\n{xml}", reader.buffer_position())) {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testcase" => {
                if let Some(c) = current.take() {
                    cases.push(c);
                }
                current = Some(Case { name: attr(&e, "name"), ..Case::default() });
            }
            Event::Start(e) if e.name().as_ref() == b"failure" => {
                let c = current.as_mut().expect("failure inside a testcase");
                c.failure = Some(String::new());
                c.failure_message = attr(&e, "message");
                text_of = Some("failure");
            }
            Event::Start(e) if e.name().as_ref() == b"error" => {
                current.as_mut().expect("error inside a testcase").error = Some(String::new());
                text_of = Some("error");
            }
            Event::Empty(e) if e.name().as_ref() == b"skipped" => {
                let c = current.as_mut().expect("skipped inside a testcase");
                c.skipped = true;
                c.skipped_message = attr(&e, "message");
            }
            Event::Text(t) => {
                let s = t.decode().expect("utf-8").into_owned();
                if let (Some(which), Some(c)) = (text_of, current.as_mut()) {
                    let slot = if which == "failure" { c.failure.as_mut() } else { c.error.as_mut() };
                    if let Some(slot) = slot {
                        slot.push_str(&s);
                    }
                }
            }
            Event::GeneralRef(r) => {
                let name = r.decode().expect("utf-8").into_owned();
                let s = quick_xml::escape::unescape(&format!("&{name};")).expect("valid entity").into_owned();
                if let (Some(which), Some(c)) = (text_of, current.as_mut()) {
                    let slot = if which == "failure" { c.failure.as_mut() } else { c.error.as_mut() };
                    if let Some(slot) = slot {
                        slot.push_str(&s);
                    }
                }
            }
            Event::End(e) if matches!(e.name().as_ref(), b"failure" | b"error") => text_of = None,
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(c) = current.take() {
        cases.push(c);
    }
    cases
}

/// `(tests, failures, skipped)` of the outer `<testsuites>`.
fn junit_totals(xml: &str) -> (u64, u64, u64) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) if e.name().as_ref() == b"testsuites" => {
                let n = |k: &str| attr(&e, k).parse::<u64>().unwrap();
                return (n("tests"), n("failures"), n("skipped"));
            }
            Event::Eof => panic!("no <testsuites>"),
            _ => {}
        }
    }
}

#[test]
fn a_seal_time_given_by_hand_is_reported_and_one_before_its_own_commit_is_flagged() {
    let tmp = tempdir();
    let git = |args: &[&str]| git_in(tmp.path(), args);
    git(&["init", "-q"]);
    std::fs::write(tmp.path().join("README"), "x").unwrap();
    git(&["add", "README"]);
    git(&["commit", "-q", "-m", "init"]);
    // Sealed "on 19 February" at a commit made on 1 March: the time was set back.
    write_and_seal(
        tmp.path(),
        &prediction("t", &format!("metric = \"pass_rate\", arm = \"{B}\", comparator = \"<=\", value = 0.9"), "e"),
        BEFORE,
        &[],
    );
    let lock = std::fs::read_to_string(tmp.path().join("predictions.lock")).unwrap();
    assert!(lock.contains("clock = \"given\""), "{lock}");
    assert!(lock.contains("git_commit = "), "{lock}");
    let r = check(tmp.path(), &[]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let seal = &report(&r)["seal"];
    assert_eq!(seal["clock_given"], true);
    assert_eq!(seal["commit_after_seal"].as_str().map(|t| t.starts_with("2026-03-01")), Some(true), "{seal}");
    let st = study();
    let table = coroner_in(tmp.path(), &["predict", "check", "predictions.toml", &st, "-q"]);
    let out = stdout(&table);
    assert!(out.contains("given by hand (--now or COR_NOW)"), "{out}");
    assert!(out.contains("WARNING: the sealed commit is dated 2026-03-01"), "{out}");
}
