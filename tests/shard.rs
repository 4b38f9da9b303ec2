//! `--shard K/N`: the shards of a run union into the unsharded run, record for record and file
//! for file, whatever N; and the shard a file lands in does not depend on where the inputs are.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{coroner_in, root, tempdir};

/// classify's verdict lines (sorted) and accounting (files by path, diagnostics sorted).
fn classify(dir: &Path, inputs: &str, shard: Option<(u32, u32)>, out: &Path) -> (Vec<String>, BTreeMap<String, String>, Vec<String>) {
    let (lines, summary) = (out.join("v.jsonl"), out.join("s.json"));
    let mut args = vec!["classify", inputs, "-q", "-o", lines.to_str().unwrap(), "--summary-json", summary.to_str().unwrap()];
    let spec;
    if let Some((k, n)) = shard {
        spec = format!("{k}/{n}");
        args.extend(["--shard", spec.as_str()]);
    }
    let r = coroner_in(dir, &args);
    assert!(matches!(r.status.code(), Some(0 | 3)), "{args:?}: {}", String::from_utf8_lossy(&r.stderr));
    let mut records: Vec<String> = std::fs::read_to_string(&lines).unwrap().lines().map(String::from).collect();
    records.sort();
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let files = s["files"].as_array().unwrap().iter().map(|f| (f["path"].as_str().unwrap().to_string(), f.to_string())).collect();
    let mut diags: Vec<String> = s["diagnostics"].as_array().unwrap().iter().map(ToString::to_string).collect();
    diags.sort();
    (records, files, diags)
}

#[test]
fn the_shards_union_into_the_unsharded_run() {
    let tmp = tempdir();
    let whole = classify(&root(), "samples", None, tmp.path());
    assert!(whole.0.len() > 150 && whole.1.len() > 300 && !whole.2.is_empty(), "the samples hold records, files and diagnostics");
    for n in [1, 3, 7] {
        let mut records = Vec::new();
        let mut files = BTreeMap::new();
        let mut diags = Vec::new();
        let mut sizes = Vec::new();
        for k in 1..=n {
            let (r, f, d) = classify(&root(), "samples", Some((k, n)), tmp.path());
            sizes.push(r.len());
            records.extend(r);
            for (path, entry) in f {
                assert!(files.insert(path.clone(), entry).is_none(), "{path} accounted for by two shards of {n}");
            }
            diags.extend(d);
        }
        records.sort();
        diags.sort();
        assert_eq!(records, whole.0, "the verdicts of {n} shards are the unsharded verdicts");
        assert_eq!(files, whole.1, "the accounting of {n} shards is the unsharded accounting");
        assert_eq!(diags, whole.2, "the diagnostics of {n} shards are the unsharded ones");
        if n > 1 {
            assert!(sizes.iter().all(|&s| s > 0), "no shard of {n} is empty: {sizes:?}");
        }
    }
}

#[test]
fn shards_from_a_manifest_union_into_the_walked_run() {
    let tmp = tempdir();
    let manifest = tmp.path().join("manifest.jsonl");
    let r = coroner_in(&root(), &["manifest", "samples", "-o", manifest.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    let lines = std::fs::read_to_string(&manifest).unwrap();
    assert!(lines.lines().count() > 300 && lines.contains("\"sha256\":\"") && lines.contains("\"adapter\":\"harbor\""));
    // Three processes each read and hash a third of the files; their parts join into the same
    // manifest, byte for byte.
    let mut parts = Vec::new();
    for k in 1..=3 {
        let part = tmp.path().join(format!("part-{k}.jsonl"));
        let spec = format!("{k}/3");
        let r = coroner_in(&root(), &["manifest", "samples", "-o", part.to_str().unwrap(), "--shard", &spec]);
        assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
        let n = std::fs::read_to_string(&part).unwrap().lines().count();
        assert!(n > 50 && n < 300, "shard {spec} lists a share of the entries: {n}");
        parts.push(part.to_str().unwrap().to_string());
    }
    let merged = tmp.path().join("merged.jsonl");
    let mut args = vec!["manifest", "--merge", "-o", merged.to_str().unwrap()];
    args.extend(parts.iter().map(String::as_str));
    let r = coroner_in(&root(), &args);
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(std::fs::read_to_string(&merged).unwrap(), lines, "the parts join into the manifest one process writes");
    // Parts that do not make one walk are refused, not joined: a part twice, a part missing,
    // parts of another split, a part of other inputs.
    let other = tmp.path().join("other-1.jsonl");
    let r = coroner_in(&root(), &["manifest", "samples", "-o", other.to_str().unwrap(), "--shard", "1/2"]);
    assert_eq!(r.status.code(), Some(0));
    let elsewhere = tmp.path().join("elsewhere-1.jsonl");
    let r = coroner_in(&root(), &["manifest", "samples/study", "-o", elsewhere.to_str().unwrap(), "--shard", "1/3"]);
    assert_eq!(r.status.code(), Some(0));
    for (bad, why) in [
        (vec![&parts[0], &parts[0], &parts[1], &parts[2]], "twice"),
        (vec![&parts[0], &parts[2]], "missing"),
        (vec![&parts[1], &parts[2], &other.to_str().unwrap().to_string()], "twice"),
        (vec![&parts[1], &parts[2], &elsewhere.to_str().unwrap().to_string()], "different walks"),
    ] {
        let mut args = vec!["manifest", "--merge", "-o", merged.to_str().unwrap()];
        args.extend(bad.iter().map(|p| p.as_str()));
        let r = coroner_in(&root(), &args);
        assert_eq!(r.status.code(), Some(2), "{why}: {}", String::from_utf8_lossy(&r.stderr));
        assert!(String::from_utf8_lossy(&r.stderr).contains(why), "{why}: {}", String::from_utf8_lossy(&r.stderr));
    }
    // `ingest` reads a manifest too, instead of walking: the same records as walking.
    let (walked, listed) = (tmp.path().join("walked.jsonl"), tmp.path().join("listed.jsonl"));
    let a = coroner_in(&root(), &["ingest", "samples/study", "-o", walked.to_str().unwrap()]);
    let small = tmp.path().join("study.jsonl");
    let m = coroner_in(&root(), &["manifest", "samples/study", "-o", small.to_str().unwrap()]);
    let b = coroner_in(&root(), &["ingest", "--manifest", small.to_str().unwrap(), "-o", listed.to_str().unwrap()]);
    assert_eq!((a.status.code(), m.status.code(), b.status.code()), (Some(0), Some(0), Some(0)), "{}", String::from_utf8_lossy(&b.stderr));
    assert_eq!(std::fs::read(&listed).unwrap(), std::fs::read(&walked).unwrap(), "ingest --manifest is ingest of the walk");
    // A part alone is not a manifest of the run.
    let r = coroner_in(&root(), &["classify", "--manifest", &parts[0], "-q"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--merge"), "{}", String::from_utf8_lossy(&r.stderr));
    let whole = classify(&root(), "samples", None, tmp.path());
    let (mut records, mut files, mut diags) = (Vec::new(), BTreeMap::new(), Vec::new());
    for k in 1..=3 {
        let (lines, summary) = (tmp.path().join("v.jsonl"), tmp.path().join("s.json"));
        let spec = format!("{k}/3");
        let args = [
            "classify",
            "--manifest",
            manifest.to_str().unwrap(),
            "--shard",
            &spec,
            "-q",
            "-o",
            lines.to_str().unwrap(),
            "--summary-json",
            summary.to_str().unwrap(),
        ];
        let r = coroner_in(&root(), &args);
        assert!(matches!(r.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&r.stderr));
        records.extend(std::fs::read_to_string(&lines).unwrap().lines().map(String::from));
        let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
        for f in s["files"].as_array().unwrap() {
            assert!(files.insert(f["path"].as_str().unwrap().to_string(), f.to_string()).is_none());
        }
        diags.extend(s["diagnostics"].as_array().unwrap().iter().map(ToString::to_string));
    }
    records.sort();
    diags.sort();
    assert_eq!(records, whole.0, "the verdicts of 3 shards read from a manifest are the walked run's");
    assert_eq!(files, whole.1, "and so is their accounting");
    assert_eq!(diags, whole.2, "and their diagnostics");
}

#[test]
fn a_shard_does_not_depend_on_where_the_inputs_are() {
    let tmp = tempdir();
    let copy = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&copy).unwrap();
    let status = std::process::Command::new("cp").arg("-r").arg(root().join("samples/study")).arg(&copy).status().unwrap();
    assert!(status.success());
    let ids = |dir: &Path| {
        let (records, _, _) = classify(dir, "study", Some((2, 3)), tmp.path());
        records.iter().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["trajectory_id"].to_string()).collect::<Vec<_>>()
    };
    let here = ids(&root().join("samples"));
    assert!(!here.is_empty());
    assert_eq!(here, ids(&copy), "the same shard holds the same trajectories from another place");
}

#[test]
fn a_malformed_shard_is_a_usage_error() {
    for bad in ["0/3", "4/3", "x"] {
        let r = coroner_in(&root(), &["classify", "samples/study", "--shard", bad]);
        assert_eq!(r.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&r.stderr).contains("K/N"), "{bad}");
    }
}

#[test]
fn a_report_of_the_shards_parquet_parts_is_the_report_of_the_transcripts() {
    let tmp = tempdir();
    let ds = tmp.path().join("dataset");
    std::fs::create_dir_all(&ds).unwrap();
    for k in 1..=3 {
        let part = ds.join(format!("part-{k}-of-3.parquet"));
        let spec = format!("{k}/3");
        let r = coroner_in(
            &root(),
            &["classify", "samples/study/arm-a", "samples/study/arm-b", "--shard", &spec, "-q", "-o", part.to_str().unwrap()],
        );
        assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    }
    for format in ["json", "markdown"] {
        let of_parts = coroner_in(&root(), &["report", ds.to_str().unwrap(), "--format", format, "-q"]);
        let of_transcripts = coroner_in(&root(), &["report", "samples/study/arm-a", "samples/study/arm-b", "--format", format, "-q"]);
        assert_eq!(of_parts.status.code(), Some(0), "{}", String::from_utf8_lossy(&of_parts.stderr));
        assert!(!of_parts.stdout.is_empty());
        assert_eq!(of_parts.stdout, of_transcripts.stdout, "the {format} report of the dataset is the transcripts' report");
    }
    // The parts read in another order (the first becomes the last) tally to the same bytes:
    // nothing of the report depends on the order verdicts arrive in, sums of floats included.
    let before = coroner_in(&root(), &["report", ds.to_str().unwrap(), "--format", "json", "-q"]);
    std::fs::rename(ds.join("part-1-of-3.parquet"), ds.join("part-4-of-3.parquet")).unwrap();
    let after = coroner_in(&root(), &["report", ds.to_str().unwrap(), "--format", "json", "-q"]);
    assert_eq!(after.stdout, before.stdout, "the report of the parts in another order");
    let named = coroner_in(&root(), &["report", "--study", ds.to_str().unwrap(), "--format", "json", "-q"]);
    assert_eq!(named.stdout, before.stdout, "a dataset named with --study is read the same way");
    // A part that does not read (truncated) is quarantined, named, and counted: the rest is
    // reported, and the exit code says some input was lost.
    let whole = std::fs::read(ds.join("part-2-of-3.parquet")).unwrap();
    std::fs::write(ds.join("part-2-of-3.parquet"), &whole[..whole.len() / 2]).unwrap();
    let cut = coroner_in(&root(), &["report", ds.to_str().unwrap(), "--format", "json"]);
    assert_eq!(cut.status.code(), Some(3), "{}", String::from_utf8_lossy(&cut.stderr));
    assert!(String::from_utf8_lossy(&cut.stderr).contains("part-2-of-3.parquet"), "{}", String::from_utf8_lossy(&cut.stderr));
    let rep: serde_json::Value = serde_json::from_slice(&cut.stdout).unwrap();
    let all: serde_json::Value = serde_json::from_slice(&before.stdout).unwrap();
    let trials = |r: &serde_json::Value| r["arms"].as_array().unwrap().iter().map(|a| a["trials"].as_u64().unwrap()).sum::<u64>();
    assert!(trials(&rep) < trials(&all) && trials(&rep) > 0, "the other parts are reported");
    assert_eq!(rep["quarantined"].as_u64(), Some(all["quarantined"].as_u64().unwrap() + 1));
    std::fs::write(ds.join("part-2-of-3.parquet"), &whole).unwrap();
    // A dataset is its own verdicts: `--out` writes the tables and charts, not the verdicts again.
    let out = tmp.path().join("out");
    let r = coroner_in(&root(), &["report", ds.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-html", "-q"]);
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(out.join("arms.csv").is_file() && out.join("steps.svg").is_file() && out.join("report.md").is_file());
    assert!(!out.join("verdicts.parquet").exists());
    let arms = ["mini-swe-agent/anthropic/claude-sonnet-4", "terminus-2/anthropic/claude-sonnet-4"];
    let c = coroner_in(&root(), &["compare", arms[0], arms[1], ds.to_str().unwrap()]);
    let t = coroner_in(&root(), &["compare", arms[0], arms[1], "samples/study/arm-a", "samples/study/arm-b"]);
    assert_eq!(c.status.code(), Some(0), "{}", String::from_utf8_lossy(&c.stderr));
    assert!(String::from_utf8_lossy(&c.stdout).contains("no detectable difference"));
    assert_eq!(c.stdout, t.stdout, "the comparison of the dataset is the transcripts' comparison");
    // The HTML report's pages need trajectories, which a dataset does not hold.
    let h = coroner_in(&root(), &["report", ds.to_str().unwrap(), "--html", tmp.path().join("site").to_str().unwrap()]);
    assert_eq!(h.status.code(), Some(2));
}

#[test]
fn a_sharded_dataset_is_hive_partitioned_by_arm_and_reruns_to_the_same_bytes() {
    let tmp = tempdir();
    let ds = tmp.path().join("ds");
    let out = format!("{}/", ds.display());
    let shard = |k: u32| {
        let spec = format!("{k}/2");
        let r = coroner_in(&root(), &["classify", "samples/study/arm-a", "samples/study/arm-b", "--shard", &spec, "-q", "-o", &out]);
        assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    };
    shard(1);
    shard(2);
    let files = crate::common::files_under(&ds);
    let names: Vec<&String> = files.keys().collect();
    for arm in ["arm=mini-swe-agent%2Fanthropic%2Fclaude-sonnet-4", "arm=terminus-2%2Fanthropic%2Fclaude-sonnet-4"] {
        for k in 1..=2 {
            let part = format!("{arm}/part-0000{k}-of-00002.parquet");
            assert!(files.contains_key(&part), "{part} in {names:?}");
        }
    }
    assert!(files.contains_key("_accounting/part-00001-of-00002.json") && files.contains_key("_accounting/part-00002-of-00002.json"));
    assert!(!names.iter().any(|n| n.contains("inflight")), "no temporary file left: {names:?}");
    // A shard run again (a retried task) leaves the same bytes.
    shard(2);
    assert_eq!(crate::common::files_under(&ds), files);
    let of_parts = coroner_in(&root(), &["report", ds.to_str().unwrap(), "--format", "json", "-q"]);
    let of_transcripts = coroner_in(&root(), &["report", "samples/study/arm-a", "samples/study/arm-b", "--format", "json", "-q"]);
    assert_eq!(of_parts.stdout, of_transcripts.stdout, "{}", String::from_utf8_lossy(&of_parts.stderr));
}
