use std::collections::BTreeMap;
use std::path::Path;

use coroner::bench::corpus::{Format, FormatReport, GenOptions, Scenario, generate};
use coroner::ingest::FileStatus;

use crate::common::{coroner, ingest, tempdir};

/// Runs per format: the first runs cycle through every scenario a format supports, the rest
/// follow the corpus mix.
const COUNT: usize = 21;

fn write_corpus(dir: &Path, formats: &[Format], count: usize, seed: u64) -> Vec<FormatReport> {
    let opts =
        GenOptions { out: dir.to_path_buf(), seed, formats: formats.to_vec(), count: Some(count), target_bytes: None, eval_samples: None };
    generate(&opts, &mut |_| {}).expect("the corpus is written")
}

/// Task id → primary class from `coroner classify` JSONL (`passed` for passing runs).
fn classify(dir: &Path, step_limit: Option<u32>) -> BTreeMap<String, String> {
    // Beside the format's directory, not in it: classify must not read its own output.
    let out = dir.with_extension("verdicts.jsonl");
    let limit = step_limit.map(|l| l.to_string());
    let mut args = vec!["classify", "-q", dir.to_str().unwrap(), "-o", out.to_str().unwrap()];
    if let Some(l) = &limit {
        args.extend(["--step-limit", l.as_str()]);
    }
    let o = coroner(&args);
    assert!(o.status.success(), "classify failed: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let class = match v["primary"].as_str() {
                Some(c) => c.to_string(),
                None => v["outcome"].as_str().unwrap().to_string(),
            };
            (v["task_id"].as_str().unwrap().to_string(), class)
        })
        .collect()
}

/// The class `coroner classify` gives a run built as `scenario` in format `f`: the scenario's
/// own, except where a harness profile decides otherwise. Inspect's profile treats every task
/// as an answer task (`task_kind = "answer"`), so a run that only describes a code change and
/// submits nothing is an early resignation there, not a plan without execution.
fn expected(f: Format, scenario: &str) -> &str {
    match (f, scenario) {
        (_, "passing") => "passed",
        (Format::Inspect, "plan_without_execution") => "early_resignation",
        (_, s) => s,
    }
}

/// Generates one format, ingests and classifies it, and checks every run against the class it
/// was built to have.
fn check_format(f: Format) {
    let tmp = tempdir();
    let reports = write_corpus(tmp.path(), &[f], COUNT, 7);
    let r = &reports[0];
    assert_eq!(r.trajectories, COUNT);

    let (ts, summary) = ingest(&[&r.dir]);
    assert_eq!(ts.len(), COUNT, "{}: every generated run is one trajectory", f.name());
    assert_eq!(summary.quarantined_files(), 0, "{}: nothing quarantined: {:?}", f.name(), summary.diagnostics);
    assert_eq!(summary.quarantined_records, 0);
    let ingested = summary.files.iter().filter(|x| matches!(x.status, FileStatus::Ingested { .. })).count();
    assert!(ingested > 0);

    let got = classify(&r.dir, f.fixed_step_limit());
    assert_eq!(got.len(), COUNT);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (id, scenario) in &r.runs {
        let want = expected(f, scenario);
        assert_eq!(got.get(id).map(String::as_str), Some(want), "{}: run {id} was built as {scenario}", f.name());
        *seen.entry(want).or_default() += 1;
    }
    for s in f.scenarios() {
        let want = expected(f, s.name());
        assert!(seen.get(want).copied().unwrap_or(0) >= 1, "{}: {want} appears in the classify output: {seen:?}", f.name());
    }
}

#[test]
fn mini_swe_agent_v1_runs_ingest_and_classify_as_built() {
    check_format(Format::MiniV1);
}

#[test]
fn mini_swe_agent_v2_runs_ingest_and_classify_as_built() {
    check_format(Format::MiniV2);
}

#[test]
fn harbor_jobs_ingest_and_classify_as_built() {
    check_format(Format::Harbor);
}

#[test]
fn inspect_eval_archives_ingest_and_classify_as_built() {
    check_format(Format::Inspect);
}

#[test]
fn claude_code_sessions_ingest_and_classify_as_built_given_the_max_turns() {
    check_format(Format::ClaudeCode);
}

#[test]
fn mini_swe_agent_v1_cannot_express_a_hallucinated_tool() {
    assert!(!Format::MiniV1.scenarios().contains(&Scenario::HallucinatedTool));
    assert_eq!(Format::MiniV2.scenarios().len(), Scenario::ALL.len());
}

/// Every file of a directory with its bytes, by relative path.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::common::files_under(dir)
}

#[test]
fn the_same_seed_writes_the_same_bytes_and_another_seed_does_not() {
    let (a, b, c) = (tempdir(), tempdir(), tempdir());
    let formats = Format::ALL;
    write_corpus(a.path(), &formats, 4, 11);
    write_corpus(b.path(), &formats, 4, 11);
    write_corpus(c.path(), &formats, 4, 12);
    let (sa, sb, sc) = (snapshot(a.path()), snapshot(b.path()), snapshot(c.path()));
    assert!(sa.len() > 20);
    assert_eq!(sa.keys().collect::<Vec<_>>(), sb.keys().collect::<Vec<_>>());
    for (k, v) in &sa {
        assert!(sb[k] == *v, "{k} differs between two runs with the same seed");
    }
    assert_ne!(sa, sc);
}

#[test]
fn a_byte_target_bounds_the_corpus() {
    let tmp = tempdir();
    let opts = GenOptions {
        out: tmp.path().to_path_buf(),
        seed: 3,
        formats: vec![Format::Harbor],
        count: None,
        target_bytes: Some(2_000_000),
        eval_samples: None,
    };
    let r = &generate(&opts, &mut |_| {}).unwrap()[0];
    assert!(r.bytes >= 2_000_000, "reaches the target: {}", r.bytes);
    // It stops at the first run past the target; one run is at most a few MB.
    assert!(r.bytes < 12_000_000, "stops near the target: {}", r.bytes);
    let manifest = std::fs::read_to_string(tmp.path().join("corpus.toml")).unwrap();
    assert!(manifest.contains(&format!("trajectories = {}", r.trajectories)), "{manifest}");
}

#[test]
fn gen_corpus_is_a_hidden_command() {
    let help = coroner(&["--help"]);
    assert!(!String::from_utf8_lossy(&help.stdout).contains("gen-corpus"));
    let tmp = tempdir();
    let o = coroner(&["gen-corpus", "--out", tmp.path().to_str().unwrap(), "--count", "2", "--formats", "mini-v2,harbor", "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(tmp.path().join("mini-v2/run-000/preds.json").exists());
    assert!(tmp.path().join("harbor/job-000/result.json").exists());
    assert!(!tmp.path().join("inspect").exists());
    let bad = coroner(&["gen-corpus", "--out", tmp.path().to_str().unwrap(), "--count", "1", "--formats", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn eval_samples_sets_how_many_samples_one_archive_holds() {
    let tmp = tempdir();
    let opts = GenOptions {
        out: tmp.path().to_path_buf(),
        seed: 4,
        formats: vec![Format::Inspect],
        count: Some(10),
        target_bytes: None,
        eval_samples: Some(10),
    };
    let reports = generate(&opts, &mut |_| {}).expect("the corpus is written");
    assert_eq!(reports[0].files, 1, "one archive of every sample");
    let (ts, s) = ingest(&[&reports[0].dir]);
    assert_eq!(ts.len(), 10);
    assert_eq!(s.quarantined_files(), 0);
}
