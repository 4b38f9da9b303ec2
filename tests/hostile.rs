//! The hostile-input suite: inputs an attacker or a broken harness can hand over, each beside a
//! good transcript. Every one: no panic, no hang, peak memory under 1 GiB, the good file still
//! ingested, and the documented exit code (3: something was quarantined).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{samples, tempdir};

/// What a bounded run of coroner did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Peak resident memory (VmHWM), in KiB, as last read before the process ended.
    peak_kib: u64,
}

/// The high-water mark of a live process's resident memory, in KiB.
fn vm_hwm(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs coroner in `dir`, killing it (and failing the test) after `timeout`; output goes to
/// files, so a large one cannot block the pipe.
fn run_bounded(dir: &Path, args: &[&str], timeout: Duration) -> Run {
    let (out, err) = (dir.join(".stdout"), dir.join(".stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_coroner"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("coroner runs");
    let start = Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Some(h) = vm_hwm(child.id()) {
            peak = peak.max(h);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!("coroner {args:?} hung for {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    Run { code: status.code(), stdout: read(&out), stderr: read(&err), peak_kib: peak }
}

/// A directory `in/` holding the good sample, to which a case adds its hostile input.
fn input_dir(tmp: &Path) -> PathBuf {
    let dir = tmp.join("in");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(samples("invalid/good.trajectory.json"), dir.join("good.trajectory.json")).unwrap();
    dir
}

/// Ingests `in/` and checks the suite's promises; returns the run and the summary JSON.
fn survives(tmp: &Path, case: &str, expected: i32) -> (Run, serde_json::Value) {
    let r = run_bounded(tmp, &["ingest", "in", "-o", "out.jsonl", "--summary-json", "summary.json"], Duration::from_secs(120));
    assert!(!r.stderr.contains("panicked"), "{case}: a panic\n{}", r.stderr);
    assert_eq!(r.code, Some(expected), "{case}: exit code\n{}", r.stderr);
    assert!(r.peak_kib < 1 << 20, "{case}: peak memory {} MiB", r.peak_kib >> 10);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.join("summary.json")).unwrap()).unwrap_or_else(|e| panic!("{case}: {e}"));
    let good =
        summary["files"].as_array().unwrap().iter().find(|f| f["path"].as_str().is_some_and(|p| p.ends_with("good.trajectory.json")));
    assert_eq!(good.map(|f| f["status"].as_str()), Some(Some("ingested")), "{case}: the good file beside it\n{summary:#}");
    let out = std::fs::read_to_string(tmp.join("out.jsonl")).unwrap();
    assert!(out.lines().any(|l| l.contains("\"good-1\"") || l.contains("good.trajectory.json")), "{case}: the good record is written");
    (r, summary)
}

/// The status coroner gave the file whose path ends with `name`.
fn status_of(summary: &serde_json::Value, name: &str) -> String {
    summary["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().is_some_and(|p| p.ends_with(name)))
        .and_then(|f| f["status"].as_str())
        .unwrap_or_else(|| panic!("{name} is not accounted for: {summary:#}"))
        .to_string()
}

/// An Inspect `.eval` archive: the shipped sample's members, plus `extra` (name, bytes).
fn eval_with(path: &Path, extra: &[(&str, Vec<u8>)]) {
    use std::io::Write as _;
    let src = samples("inspect/2026-03-01T10-00-00+00-00_shell-puzzles.eval");
    let mut zin = zip::ZipArchive::new(std::fs::File::open(src).unwrap()).unwrap();
    let mut zout = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated).large_file(true);
    for i in 0..zin.len() {
        let f = zin.by_index_raw(i).unwrap();
        zout.raw_copy_file(f).unwrap();
    }
    for (name, bytes) in extra {
        zout.start_file(*name, opts).unwrap();
        zout.write_all(bytes).unwrap();
    }
    zout.finish().unwrap();
}

#[test]
fn a_zip_bomb_member_is_refused_while_inflating() {
    let tmp = tempdir();
    let dir = input_dir(tmp.path());
    // 256 MiB of one byte deflates to about 250 KiB: a ratio no real sample has.
    let bomb = vec![b' '; 256 << 20];
    eval_with(&dir.join("bomb.eval"), &[("samples/bomb_epoch_1.json", bomb)]);
    let (r, summary) = survives(tmp.path(), "zip bomb", 3);
    assert_eq!(status_of(&summary, "bomb.eval"), "ingested", "the archive's real samples are still read");
    assert!(r.stderr.contains("samples/bomb_epoch_1.json") && r.stderr.contains("compression ratio"), "{}", r.stderr);
}

#[test]
fn archive_members_named_outside_the_archive_are_only_names() {
    let tmp = tempdir();
    let dir = input_dir(tmp.path());
    let victim = tmp.path().join("pwned-by-member");
    let name = format!("samples/../../../../..{}_epoch_1.json", victim.display());
    eval_with(&dir.join("traversal.eval"), &[(&name, b"{}".to_vec()), ("../../outside.json", b"{}".to_vec())]);
    let (r, summary) = survives(tmp.path(), "path traversal", 3);
    assert!(r.stderr.contains("pwned-by-member"), "the member is reported by its name: {}", r.stderr);
    assert!(!victim.exists() && !tmp.path().join("outside.json").exists(), "nothing is extracted");
    assert_eq!(status_of(&summary, "traversal.eval"), "ingested");
}

#[test]
fn deeply_nested_json_is_quarantined_without_overflow() {
    let tmp = tempdir();
    let dir = input_dir(tmp.path());
    let depth = 1_000_000;
    std::fs::write(dir.join("deep.trajectory.json"), format!("{}{}", "[".repeat(depth), "]".repeat(depth))).unwrap();
    // Deep inside a transcript the probe recognizes, past the keys it reads.
    let atif = format!(
        r#"{{"schema_version": "ATIF-v1.6", "session_id": "deep", "agent": {{"name": "x", "version": "1"}}, "extra": {}1{}, "steps": []}}"#,
        "{\"a\":[".repeat(depth / 10),
        "]}".repeat(depth / 10)
    );
    std::fs::write(dir.join("deep-extra.trajectory.json"), atif).unwrap();
    let (_, summary) = survives(tmp.path(), "deep JSON", 3);
    assert_eq!(status_of(&summary, "deep.trajectory.json"), "quarantined");
    // A field nothing reads may nest as deep as it likes: skipped over, never recursed into.
    assert_eq!(status_of(&summary, "deep-extra.trajectory.json"), "ingested");
}

#[test]
fn yaml_bombs_and_deep_yaml_are_refused() {
    let tmp = tempdir();
    let dir = input_dir(tmp.path());
    // mini-swe-agent's exit statuses are YAML: the billion-laughs shape, and deep nesting.
    let mut laughs = String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for (i, c) in "bcdefghij".chars().enumerate() {
        let prev = "abcdefghij".chars().nth(i).unwrap();
        laughs.push_str(&format!("{c}: &{c} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
    }
    laughs.push_str("instances_by_exit_status:\n  Submitted: *j\n");
    std::fs::write(dir.join("exit_statuses_1.yaml"), laughs).unwrap();
    let depth = 200_000;
    std::fs::write(dir.join("exit_statuses_2.yaml"), format!("instances_by_exit_status: {}{}\n", "[".repeat(depth), "]".repeat(depth)))
        .unwrap();
    let (_, summary) = survives(tmp.path(), "YAML bombs", 3);
    for name in ["exit_statuses_1.yaml", "exit_statuses_2.yaml"] {
        assert_eq!(status_of(&summary, name), "quarantined", "{name}");
    }
}

#[test]
fn a_two_gigabyte_single_line_is_refused_without_reading_it() {
    let tmp = tempdir();
    let dir = input_dir(tmp.path());
    // Sparse: 2 GiB on paper, a few bytes on disk; the line never ends.
    let p = dir.join("huge.trajectory.json");
    std::fs::write(
        &p,
        br#"{"schema_version": "ATIF-v1.6", "session_id": "huge", "agent": {"name": "x", "version": "1"}, "steps": [{"message": ""#,
    )
    .unwrap();
    std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(2 << 30).unwrap();
    let (_, summary) = survives(tmp.path(), "2 GiB line", 3);
    assert_eq!(status_of(&summary, "huge.trajectory.json"), "quarantined");
}

#[cfg(unix)]
#[test]
fn symlink_loops_fifos_and_unreadable_directories_cost_only_themselves() {
    let tmp = tempdir();
    let dir = input_dir(tmp.path());
    std::os::unix::fs::symlink("loop", dir.join("loop")).unwrap();
    std::os::unix::fs::symlink("..", dir.join("up")).unwrap();
    std::os::unix::fs::symlink(dir.join("a"), dir.join("b")).unwrap();
    std::os::unix::fs::symlink(dir.join("b"), dir.join("a")).unwrap();
    let fifo = dir.join("fifo.trajectory.json");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success(), "mkfifo");
    let locked = dir.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::copy(samples("invalid/good.trajectory.json"), locked.join("inside.trajectory.json")).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let root_reads_anyway = std::fs::read_dir(&locked).is_ok();
    let r = run_bounded(tmp.path(), &["ingest", "in", "-o", "out.jsonl", "--summary-json", "summary.json"], Duration::from_secs(60));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(matches!(r.code, Some(0 | 3)), "{:?}\n{}", r.code, r.stderr);
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(tmp.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(status_of(&summary, "in/good.trajectory.json"), "ingested");
    assert_ne!(status_of(&summary, "fifo.trajectory.json"), "ingested", "a FIFO is not read (it would block)");
    if root_reads_anyway {
        eprintln!("note: running as root, so the unreadable directory was readable; that part is not checked");
    } else {
        assert_eq!(r.code, Some(3), "{}", r.stderr);
        assert!(r.stderr.contains("locked"), "the unreadable directory is named: {}", r.stderr);
    }
}

#[test]
fn invalid_utf8_inside_strings_costs_only_its_file() {
    let tmp = tempdir();
    let dir = input_dir(tmp.path());
    std::fs::copy(samples("invalid/invalid-utf8.trajectory.json"), dir.join("invalid-utf8.trajectory.json")).unwrap();
    let (r, summary) = survives(tmp.path(), "invalid UTF-8", 3);
    assert_eq!(status_of(&summary, "invalid-utf8.trajectory.json"), "quarantined");
    assert!(r.stderr.contains("invalid-utf8.trajectory.json"), "{}", r.stderr);
}

/// Markup and control sequences in every field that reaches a file a person opens: the
/// Markdown report and the charts (SVG); JUnit is checked in `predict`. Data files (CSV, JSON,
/// Parquet) keep the text as it was.
#[test]
fn injection_in_transcript_fields_is_escaped_in_every_written_file() {
    let tmp = tempdir();
    let evil = "<script>alert(1)</script>|[x](javascript:alert(1))\u{1b}]0;t\u{7}";
    let arm = tmp.path().join("arm");
    let trial = arm.join("hostile__h0st1le");
    std::fs::create_dir_all(trial.join("agent")).unwrap();
    let mut result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(samples("hostile/hostile__h0st1le/result.json")).unwrap()).unwrap();
    result["task_name"] = format!("calc{evil}").into();
    std::fs::write(trial.join("result.json"), result.to_string()).unwrap();
    std::fs::copy(samples("hostile/hostile__h0st1le/agent/trajectory.json"), trial.join("agent/trajectory.json")).unwrap();
    let name = format!("arm{evil}");
    let spec = format!("{name}={}", arm.display());
    let r = run_bounded(tmp.path(), &["report", "--arm", &spec, "--out", "out", "--format", "markdown"], Duration::from_secs(120));
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(matches!(r.code, Some(0 | 3)), "{:?}\n{}", r.code, r.stderr);
    assert!(!r.stdout.contains("<script>") && !r.stdout.contains('\u{1b}'), "stdout Markdown: {}", r.stdout);
    let mut checked = 0;
    for e in std::fs::read_dir(tmp.path().join("out")).unwrap() {
        let p = e.unwrap().path();
        // Data files (CSV, JSON, Parquet) keep the text as it was; files a person opens as a
        // document are escaped.
        if !p.extension().is_some_and(|x| x == "md" || x == "svg" || x == "xml") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        checked += 1;
        assert!(!text.contains("<script>"), "{}: raw markup", p.display());
        assert!(!text.contains('\u{1b}'), "{}: a raw ESC", p.display());
        if p.extension().is_some_and(|x| x == "md") {
            assert!(!text.contains("](javascript:"), "{}: a live link", p.display());
        }
    }
    assert!(checked >= 3, "the report wrote its files");
}
