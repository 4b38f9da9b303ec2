//! `coroner show`: evidence marked, long blocks folded, trajectories chosen by id, task or
//! index, and a hostile transcript's escape sequences neutralized.

use coroner::rules::Rules;
use coroner::spotcheck::render::{Format, ShowOptions, render};

use crate::common::{classified, coroner, root, samples, tempdir};

const HOSTILE: &str = "hostile/hostile__h0st1le";

fn stdout(args: &[&str]) -> String {
    let r = coroner(args);
    assert_eq!(r.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&r.stderr));
    assert_inert(&r.stderr, &format!("{args:?} stderr"));
    assert_inert(&r.stdout, &format!("{args:?} stdout"));
    String::from_utf8(r.stdout).expect("utf-8 output")
}

/// No byte or character that a terminal would act on: C0 controls other than newline and
/// tab (ESC, BEL, BS, CR, NUL), DEL, C1 controls (the 8-bit CSI/OSC/DCS introducers), bidi
/// embeddings, overrides and isolates.
fn assert_inert(bytes: &[u8], ctx: &str) {
    assert!(!bytes.contains(&0x1b), "{ctx}: a raw ESC reached the output");
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| panic!("{ctx}: not UTF-8: {e}"));
    for (i, c) in text.char_indices() {
        let u = u32::from(c);
        let bad = (u < 0x20 && c != '\n' && c != '\t') || (0x7f..=0x9f).contains(&u) || matches!(u, 0x202A..=0x202E | 0x2066..=0x2069);
        assert!(!bad, "{ctx}: U+{u:04X} at byte {i}: {:?}", &text[i.saturating_sub(40)..(i + 40).min(text.len())]);
    }
}

/// The raw text of the hostile ATIF file, to show the test is not vacuous.
fn hostile_json() -> serde_json::Value {
    let text = std::fs::read_to_string(samples(HOSTILE).join("agent/trajectory.json")).expect("hostile sample");
    serde_json::from_str(&text).expect("hostile sample is JSON")
}

#[test]
fn a_hostile_transcript_cannot_drive_the_terminal() {
    let dir = samples(HOSTILE).display().to_string();
    // The sample really carries the sequences (decoded from its JSON escapes).
    let steps = &hostile_json()["steps"];
    let all_text: String = [
        steps[0]["message"].as_str().unwrap(),
        steps[1]["message"].as_str().unwrap(),
        steps[1]["reasoning_content"].as_str().unwrap(),
        steps[1]["observation"]["results"][0]["content"].as_str().unwrap(),
        steps[3]["message"].as_str().unwrap(),
    ]
    .concat();
    for needle in [
        "\x1b]0;", "\x1b]2;", "\x1b[2J", "\x1b[H", "\x1b[8m", "\x1b[5A", "\x07", "\u{9b}", "\u{9d}", "\x1bP", "\x1b]8;;", "\u{202e}",
        "\u{2066}", "\r", "\x08",
    ] {
        assert!(all_text.contains(needle), "the hostile sample lacks {needle:?}");
    }

    let folded = stdout(&["show", &dir]);
    for visible in ["task-title-pwned", "window-title-pwned", "final-title-pwned", "␛]0;", "␛]2;", "␛[2J␛[H", "Fix the bug", "<b>bold</b>"]
    {
        assert!(folded.contains(visible), "`{visible}` is not visible:\n{folded}");
    }
    // The evidence excerpt quoted in the header is neutralized too.
    assert!(folded.lines().any(|l| l.contains("resign-explicit") && l.contains("␛]0;final-title-pwned␇I'm unable")), "{folded}");

    let full = stdout(&["show", &dir, "--step", "1"]);
    for visible in [
        "␛[8mconcealed-secret␛[0m",
        "line 20: ␛[31m8bit-csi-red␛[0m",
        "␛P1$rdcs-payload␛\\",
        "␛]8;;https://evil.example/␛\\click-me␛]8;;␛\\",
        "bell␇␇ and backspace␈␈ and carriage␍overwrite",
        "<U+202E>evil-rtl-txt.exe<U+202C>",
        "<U+2066>iso<U+2069>",
        "␛]0;c1-osc-title␛\\",
        "cat src/calc.py␛[5A",
        "note␛]0;key-title␇: x",
    ] {
        assert!(full.contains(visible), "`{visible}` is not visible in --step 1:\n{full}");
    }

    for args in [vec!["--format", "markdown"], vec!["--format", "markdown", "--step", "1"], vec!["--blind"], vec!["--step", "3", "--blind"]]
    {
        let mut a = vec!["show", dir.as_str()];
        a.extend(args);
        let out = stdout(&a);
        assert!(out.contains("final-title-pwned") || out.contains("final\\-title\\-pwned"), "{a:?}");
    }
    let md = stdout(&["show", &dir, "--format", "markdown", "--step", "1"]);
    // Markup in the task id is escaped; the output with a run of four backticks sits in a
    // fence of five, so it cannot close its block.
    assert!(md.starts_with("# Trajectory calc\\-add␛\\]0;task\\-title\\-pwned␇&lt;b&gt;bold&lt;/b&gt;"), "{md}");
    assert!(!md.contains("<b>"), "{md}");
    assert!(md.contains("`````text\n$ cat src/calc.py␛[5A\n"), "{md}");
    let in_fence = md.split("`````text\n").nth(1).and_then(|s| s.split("\n`````\n").next()).unwrap_or_default();
    assert!(in_fence.contains("line 25: ```` four backticks and <script>alert(1)</script>"), "{in_fence}");

    // The listing shown when the choice is ambiguous or wrong is neutralized as well.
    let r = coroner(&["show", &dir, "--task", "no-such-task"]);
    assert_eq!(r.status.code(), Some(2));
    assert_inert(&r.stderr, "listing");
    assert!(String::from_utf8_lossy(&r.stderr).contains("calc-add␛]0;task-title-pwned␇<b>bold</b>#"));
}

#[test]
fn colour_is_the_only_escape_and_only_when_asked() {
    let got = classified(&[&samples(HOSTILE)]);
    let (t, v) = &got[0];
    let sgr = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    for step in [None, Some(1), Some(3)] {
        let plain = render(t, v, &ShowOptions { step, ..ShowOptions::default() }).unwrap();
        assert_inert(plain.as_bytes(), "no colour");
        // Colour is asked for with markers; only the output path turns them into escapes.
        let coloured =
            coroner::report::sanitize::emit(&render(t, v, &ShowOptions { color: true, step, ..ShowOptions::default() }).unwrap())
                .into_owned();
        // The evidence (step 3) is in view unless --step 1 hides it.
        assert_eq!(coloured.contains("\x1b[1;33m▶\x1b[0m"), step != Some(1), "the margin mark is coloured");
        assert!(coloured.contains("\x1b[1m"));
        let stripped = sgr.replace_all(&coloured, "");
        assert_inert(stripped.as_bytes(), "colour stripped");
        assert_eq!(stripped, plain);
    }
    let md = render(t, v, &ShowOptions { color: true, format: Format::Markdown, ..ShowOptions::default() }).unwrap();
    assert_inert(md.as_bytes(), "markdown ignores colour");
}

#[test]
fn evidence_steps_are_marked_with_the_rule_that_fired() {
    let dir = samples("doubles");
    let got = classified(&[&dir]);
    // The command prints what the library renders.
    let (t, v) = got.iter().find(|(t, _)| t.provenance.files[0].path.contains("/looping__")).unwrap();
    assert_eq!(stdout(&["show", &dir.display().to_string(), "--id", &t.id]), render(t, v, &ShowOptions::default()).unwrap());
    let mut marked = 0;
    for (t, v) in got {
        if v.evidence.iter().all(|e| e.steps.is_empty()) {
            continue;
        }
        let out = render(&t, &v, &ShowOptions::default()).unwrap();
        let steps: std::collections::BTreeSet<u32> = v.evidence.iter().flat_map(|e| e.steps.iter().copied()).collect();
        for s in &t.steps {
            let header = out.lines().find(|l| l[l.char_indices().nth(2).map_or(0, |(i, _)| i)..].starts_with(&format!("#{} ", s.index)));
            let header = header.unwrap_or_else(|| panic!("{}: no line for step {}:\n{out}", t.id, s.index));
            assert_eq!(header.starts_with("▶ "), steps.contains(&s.index), "{}: step {}: {header}", t.id, s.index);
        }
        for e in v.evidence.iter().filter(|e| !e.steps.is_empty()) {
            for s in &e.steps {
                let line = out.lines().find(|l| l.starts_with(&format!("▶ #{s} "))).unwrap();
                assert!(line.contains(&format!("{} → {}", e.rule, e.supports)), "{}: {line}", t.id);
                marked += 1;
            }
        }
        // Blind: the same marks, no rule and no class.
        let blind = render(&t, &v, &ShowOptions { blind: true, ..ShowOptions::default() }).unwrap();
        // The doubles' directories are named after their class; paths aside, nothing may say it.
        let blind: String = blind.lines().filter(|l| !l.contains("samples/doubles/")).collect::<Vec<_>>().join("\n");
        assert_eq!(blind.lines().filter(|l| l.starts_with("▶ ")).count(), steps.len(), "{}", t.id);
        let rules = Rules::builtin().unwrap();
        for word in rules
            .taxonomy
            .precedence
            .iter()
            .chain(v.flags.iter())
            .map(String::as_str)
            .chain(rules.taxonomy.rules.iter().map(|r| r.id.as_str()))
        {
            assert!(!blind.contains(word), "{}: --blind names `{word}`:\n{blind}", t.id);
        }
    }
    assert!(marked > 15, "only {marked} evidence steps checked");
}

#[test]
fn long_outputs_fold_and_reasoning_collapses_unless_the_step_is_asked_for() {
    let dir = samples(HOSTILE).display().to_string();
    let steps = &hostile_json()["steps"];
    let output = steps[1]["observation"]["results"][0]["content"].as_str().unwrap();
    let lines = output.lines().count();
    let reasoning = steps[1]["reasoning_content"].as_str().unwrap().chars().count();
    let out = stdout(&["show", &dir]);
    assert!(out.contains(&format!("… {} lines folded …", lines - 12)), "{out}");
    assert!(out.contains(&format!("reasoning: {reasoning} chars (collapsed)")), "{out}");
    assert!(!out.contains("line 30:") && out.contains("line 07:") && out.contains("line 60:"));
    let full = stdout(&["show", &dir, "--step", "1"]);
    assert!(!full.contains("lines folded") && full.contains("line 30:") && !full.contains("(collapsed)"));
    assert!(full.contains("… step 3 not shown …") && full.contains("#0 user") && full.contains("#2 assistant"));
    let r = coroner(&["show", &dir, "--step", "4"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("the trajectory has 4 steps (0 to 3)"));
}

#[test]
fn a_trajectory_is_chosen_by_id_task_index_or_file_hash() {
    let dir = samples("doubles");
    let shown = dir.display().to_string();
    let got = classified(&[&dir]);
    let r = coroner(&["show", &shown]);
    assert_eq!(r.status.code(), Some(2));
    let listing = String::from_utf8_lossy(&r.stderr);
    assert!(listing.contains(&format!("{} trajectories match the input", got.len())), "{listing}");
    for (t, _) in &got {
        assert!(listing.contains(&t.id), "{} not listed", t.id);
    }
    let (t, _) = got.iter().find(|(t, _)| t.provenance.files[0].path.contains("looping__")).unwrap();
    let by_id = stdout(&["show", &shown, "--id", &t.id]);
    assert!(by_id.starts_with(&format!("{}\n", t.id)));
    assert_eq!(stdout(&["show", &format!("{shown}#{}", t.id)]), by_id);
    let ix = got.iter().position(|(x, _)| x.id == t.id).unwrap();
    assert_eq!(stdout(&["show", &shown, "--index", &ix.to_string()]), by_id);
    assert_eq!(stdout(&["show", &format!("{shown}#{ix}")]), by_id);
    // Every double has task calc-add: the task does not choose.
    assert_eq!(coroner(&["show", &shown, "--task", "calc-add"]).status.code(), Some(2));
    assert_eq!(coroner(&["show", &shown, "--id", "calc-add#000000000000"]).status.code(), Some(2));
    // An id from the whole run finds the trial read on its own (a different input root).
    let trial = dir.join("looping__d0uble0").display().to_string();
    let alone = stdout(&["show", &trial, "--id", &t.id]);
    assert!(alone.contains("looping__d0uble0/result.json") && alone.contains("▶ #1 "), "{alone}");
    // coroner JSONL with an id.
    let tmp = tempdir();
    let jsonl = tmp.path().join("doubles.jsonl").display().to_string();
    assert_eq!(coroner(&["ingest", "-q", "-o", &jsonl, &shown]).status.code(), Some(0));
    let from_jsonl = stdout(&["show", &format!("{jsonl}#{}", t.id)]);
    let body = |s: &str| s.lines().filter(|l| l.starts_with("▶") || l.starts_with("┃")).map(String::from).collect::<Vec<_>>();
    assert_eq!(body(&from_jsonl), body(&by_id));
}

/// `show` over a directory where one input is quarantined still shows the trajectory it found,
/// but its exit code says an input was lost (the one shown may not be the one meant).
#[test]
fn show_exits_3_when_an_input_beside_it_was_quarantined() {
    let tmp = tempdir();
    std::fs::copy(samples("invalid/good.trajectory.json"), tmp.path().join("good.trajectory.json")).unwrap();
    std::fs::copy(samples("invalid/truncated.trajectory.json"), tmp.path().join("truncated.trajectory.json")).unwrap();
    let r = coroner(&["show", &tmp.path().display().to_string()]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(3), "{err}");
    assert!(String::from_utf8_lossy(&r.stdout).contains("good.trajectory.json"), "the good one is shown");
    assert!(err.contains("were quarantined"), "{err}");
}

/// Every command prints through one sanitizing path: `compare` (text and Markdown) and
/// `registry diff` quote task ids, arm names and tool names from transcripts.
#[test]
fn compare_and_registry_diff_cannot_drive_the_terminal() {
    let tmp = tempdir();
    let copy = |arm: &str, tool: &str| {
        let dst = tmp.path().join(arm).join("hostile__h0st1le");
        std::fs::create_dir_all(dst.join("agent")).unwrap();
        std::fs::copy(samples(HOSTILE).join("result.json"), dst.join("result.json")).unwrap();
        let mut t = hostile_json();
        t["steps"][1]["tool_calls"][0]["function_name"] = tool.into();
        std::fs::write(dst.join("agent/trajectory.json"), t.to_string()).unwrap();
    };
    copy("a", "bash_command");
    copy("b", "rm\u{1b}]0;tool-title\u{7}\u{9b}2J<img src=x>|");
    let (a, b) = (format!("evil\u{1b}[2J<b>x</b>|={}", tmp.path().join("a").display()), format!("b={}", tmp.path().join("b").display()));
    for format in ["table", "markdown", "json"] {
        let r = coroner(&["compare", "evil\u{1b}[2J<b>x</b>|", "b", "--arm", &a, "--arm", &b, "--format", format]);
        assert!(matches!(r.status.code(), Some(0 | 3)), "{format}: {}", String::from_utf8_lossy(&r.stderr));
        assert_inert(&r.stdout, &format!("compare --format {format}"));
        assert_inert(&r.stderr, &format!("compare --format {format} stderr"));
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(out.contains("evil"), "{format}: the hostile arm name is shown: {out}");
        if format == "markdown" {
            assert!(!out.contains("<b>") && !out.contains("<img") && out.contains("&lt;b&gt;"), "escaped for Markdown: {out}");
        }
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
            assert!(v.to_string().contains('\u{1b}') || v["a"].as_str().is_some_and(|s| s.contains('\u{1b}')), "JSON keeps the text: {v}");
        }
    }
    let reg = root().join("samples/registries/tau-bench-retail.registry.json");
    for json in [false, true] {
        let mut args = vec!["registry", "diff"];
        let (r_s, b_s) = (reg.display().to_string(), tmp.path().join("b").display().to_string());
        args.extend([r_s.as_str(), b_s.as_str()]);
        if json {
            args.push("--json");
        }
        let r = coroner(&args);
        assert!(matches!(r.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&r.stderr));
        assert_inert(&r.stdout, &format!("registry diff json={json}"));
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(out.contains("tool-title"), "the hostile tool name is shown, inert: {out}");
    }
}
