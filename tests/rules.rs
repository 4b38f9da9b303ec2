//! `coroner rules`: the list, and `explain` for classes, harness profiles (their tools and their
//! interpretation tables in the order they are tried) and single interpretation entries; a bad
//! rules directory is one diagnostic and exit code 2.

use coroner::rules::meanings::Table;

use crate::common::{builtin, coroner, stdout, tempdir};

fn ok(args: &[&str]) -> String {
    let r = coroner(args);
    assert_eq!(r.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&r.stderr));
    stdout(&r)
}

/// The line that starts an entry's block in `rules explain PROFILE`.
fn entry_line<'t>(text: &'t str, id: &str) -> Option<&'t str> {
    text.lines()
        .find(|l| l.strip_prefix("  ").and_then(|l| l.strip_prefix(id)).is_some_and(|rest| rest.is_empty() || rest.starts_with("   (")))
}

/// The block of an entry: its line and the indented lines under it.
fn entry_block(text: &str, id: &str) -> String {
    let first = entry_line(text, id).unwrap_or_else(|| panic!("no entry {id}:\n{text}"));
    let start = text.find(&format!("{first}\n")).expect("the line is in the text");
    text[start..].lines().enumerate().take_while(|(i, l)| *i == 0 || l.starts_with("      ")).map(|(_, l)| format!("{l}\n")).collect()
}

#[test]
fn explain_a_profile_shows_its_tools_and_its_tables() {
    let out = ok(&["rules", "explain", "mini-swe-agent"]);
    assert!(out.starts_with("profile mini-swe-agent\n"), "{out}");
    assert!(out.contains("mini-swe-agent: one bash action per reply"), "the description: {out}");
    assert!(out.contains("  file                 rules/harnesses/mini-swe-agent.toml\n"), "{out}");
    assert!(out.contains("  merged over          default (rules/harnesses/default.toml),\n"), "{out}");
    assert!(out.contains("runner terminal-bench (rules/harnesses/terminal-bench.toml)"), "runners lend their tables: {out}");
    // Tools: the profile's own and default's lists together.
    let tool_line = |k: &str| out.lines().find(|l| l.starts_with(&format!("  {k:<20} "))).unwrap_or_else(|| panic!("no {k}: {out}"));
    assert!(tool_line("shell").contains("bash"), "{out}");
    assert!(tool_line("finishing").contains("submit") && out.contains("final_answer, exit\n"), "{out}");
    assert!(tool_line("finishing commands").contains("~ (?m)^\\s*echo\\s+['\"]?(?:COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"), "{out}");
    assert!(tool_line("mutating").contains("str_replace_editor:command=create|str_replace|insert|undo_edit"), "{out}");
    assert!(tool_line("escalating").contains("ask_user"), "{out}");
    assert!(tool_line("verifying").contains("run_tests"), "{out}");

    // Its own entry: value, meaning, the enforcer a budget gets by default; no origin.
    assert_eq!(entry_line(&out, "mini-limits-exceeded"), Some("  mini-limits-exceeded"), "{out}");
    let own = entry_block(&out, "mini-limits-exceeded");
    assert!(own.contains("      = LimitsExceeded\n"), "{own}");
    assert!(own.contains("      means     budget:steps\n"), "{own}");
    assert!(own.contains("      enforcer  harness (the default for this budget)\n"), "{own}");
    // default's entries say so, with their pattern, field, enforcer and detail.
    let timed_out = entry_block(&out, "timed-out");
    assert!(timed_out.starts_with("  timed-out   (from default.toml)\n"), "{timed_out}");
    assert!(timed_out.contains("      ~ (?i)\\btimed out\\b|\\btimeout\\b\n"), "{timed_out}");
    assert!(timed_out.contains("      means     budget:wall_time\n"), "{timed_out}");
    let request = entry_block(&out, "request-timeout");
    assert!(request.contains("      enforcer  caller\n"), "an enforcer the entry names: {request}");
    let filter = entry_block(&out, "reason-content-filter");
    assert!(
        filter.contains("      field     *_reason\n")
            && filter.contains("      detail    the provider's content filter stopped the reply\n")
    );
    let phrase = entry_block(&out, "unknown-tool-phrase");
    assert!(phrase.contains("      reads     only results the format marked as errors\n"), "{phrase}");
    // The tables come in the order they are tried, under their TOML names.
    let heads: Vec<usize> = Table::ALL.iter().map(|t| out.find(&format!("\n[[{}]] — ", t.key())).expect("every table is shown")).collect();
    assert!(heads.windows(2).all(|w| w[0] < w[1]), "{out}");
    assert!(out.find("  mini-submitted\n") < out.find("  finish-reason-length   (from default.toml)\n"), "own entries first: {out}");
}

/// Every built-in profile shows every one of its entries, table by table in the order they are
/// tried, each marked with where it comes from.
#[test]
fn explain_shows_every_entry_of_every_profile_in_order() {
    let rules = builtin();
    for p in rules.profiles.values() {
        let out = ok(&["rules", "explain", &p.name]);
        let mut at = 0;
        for t in Table::ALL {
            for e in p.meanings.table(t) {
                let line = entry_line(&out, &e.id).unwrap_or_else(|| panic!("{}: no {}:\n{out}", p.name, e.id));
                let pos = out.find(&format!("\n{line}\n")).expect("the line is in the text");
                assert!(pos > at, "{}: {} is out of order", p.name, e.id);
                at = pos;
                let from_default = e.file.ends_with("/default.toml") && p.name != "default";
                assert_eq!(line.ends_with("(from default.toml)"), from_default, "{}: {line}", p.name);
                assert!(out[pos..].contains(&e.shown()), "{}: {} lacks {}", p.name, e.id, e.shown());
            }
        }
    }
}

#[test]
fn explain_finds_a_profile_by_harness_name() {
    let out = ok(&["rules", "explain", "terminus-2"]);
    assert!(out.starts_with("profile terminus\n") && out.contains("rules/harnesses/terminus.toml"), "{out}");
    assert!(out.contains("mark_task_complete"), "{out}");
    let default = ok(&["rules", "explain", "default"]);
    assert!(default.starts_with("profile default\n") && !default.contains("(from default.toml)"), "{default}");
    assert!(default.contains("  timed-out\n      ~ (?i)\\btimed out\\b|\\btimeout\\b\n"), "{default}");
    // Classes, rules and flags are explained as before.
    assert!(ok(&["rules", "explain", "budget_exhausted"]).contains("What it detects"));
    assert!(ok(&["rules", "explain", "resign-silent"]).starts_with("resign-silent (supports "));
    assert!(ok(&["rules", "explain", "unverified"]).starts_with("flag unverified"));
}

#[test]
fn explain_an_entry_names_its_profiles() {
    let out = ok(&["rules", "explain", "mini-limits-exceeded"]);
    assert!(out.starts_with("interpretation entry mini-limits-exceeded — [[status]] of rules/harnesses/mini-swe-agent.toml\n"), "{out}");
    assert!(out.contains("\n  = LimitsExceeded\n") && out.contains("\n  means     budget:steps\n"), "{out}");
    assert!(out.contains("defined in profile mini-swe-agent\n  in force in profile: mini-swe-agent\n"), "{out}");

    // An entry of default holds in every profile.
    let out = ok(&["rules", "explain", "provider-rate-limit"]);
    assert!(out.starts_with("interpretation entry provider-rate-limit — [[error]] of rules/harnesses/default.toml\n"), "{out}");
    assert!(out.contains("  ~ (?i)rate[ _-]?limit|\\b429\\b|too many requests"), "{out}");
    assert!(out.contains("  means     infrastructure\n  detail    the provider's rate limit or quota\n"), "{out}");
    assert!(out.contains("defined in default, so it holds in every profile"), "{out}");
    let joined = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for p in builtin().profiles.keys() {
        assert!(
            joined.contains(&format!(" {p},")) || joined.contains(&format!(" {p} ")) || joined.ends_with(&format!(" {p}")),
            "{p}: {out}"
        );
    }
}

#[test]
fn list_counts_each_profiles_entries() {
    let out = ok(&["rules", "list"]);
    let rules = builtin();
    for p in rules.profiles.values() {
        let line = out.lines().find(|l| l.starts_with(&format!("  {:<16} ", p.name))).unwrap_or_else(|| panic!("no {}: {out}", p.name));
        let n = p.meanings.entries.len();
        assert!(line.contains(&format!(" {n} entries")), "{line}");
        // A built-in profile's file is named after it; entries from default or a runner are lent.
        let own = p.meanings.entries.iter().filter(|e| e.file.ends_with(&format!("/{}.toml", p.name))).count();
        if own == n {
            assert!(!line.contains(" own)"), "{line}");
        } else {
            assert!(line.contains(&format!("({own} own)")), "{line}");
        }
    }
    let mini = out.lines().find(|l| l.starts_with("  mini-swe-agent ")).expect("mini-swe-agent is listed");
    assert!(mini.contains(" own)") && mini.contains("mini-swe-agent: one bash action per reply"), "{mini}");
}

/// A runner's entries join every profile and say where they come from; an unknown name is a
/// usage error with a help line.
#[test]
fn runner_entries_and_unknown_names() {
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("harnesses")).unwrap();
    std::fs::write(
        dir.path().join("harnesses/test-runner.toml"),
        "name = \"test-runner\"\nrunner = true\ndescription = \"a runner\"\n\n[[status]]\nid = \"test-runner-cancelled\"\nfield = \"result.status\"\nvalue = \"Cancelled\"\nmeans = \"infrastructure\"\n",
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    let out = ok(&["rules", "--rules", d, "explain", "mini-swe-agent"]);
    let block = entry_block(&out, "test-runner-cancelled");
    assert!(block.starts_with("  test-runner-cancelled   (from runner test-runner, test-runner.toml)\n"), "{block}");
    assert!(block.contains("      = Cancelled\n      field     result.status\n      means     infrastructure\n"), "{block}");
    assert!(
        out.find("  mini-submitted\n") < out.find("  test-runner-cancelled")
            && out.find("  test-runner-cancelled") < out.find("  finish-reason-length")
    );
    let entry = ok(&["rules", "--rules", d, "explain", "test-runner-cancelled"]);
    assert!(entry.contains("defined in runner profile test-runner, so it holds for every harness the runner runs"), "{entry}");

    let r = coroner(&["rules", "explain", "no-such-thing"]);
    assert_eq!(r.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&r.stderr),
        "error: failed to find a class, rule, flag, profile or interpretation entry named `no-such-thing`\n  help: `coroner rules list` shows them all\n"
    );
    assert!(r.stdout.is_empty());
}

/// `waits` is shown by `rules explain`, and refused on anything but a status meaning a wall clock.
#[test]
fn waits_is_explained_and_only_a_wall_clock_status_may_say_it() {
    let out = ok(&["rules", "explain", "tb-agent-timeout"]);
    assert!(out.contains("waits     the runner waited for the agent"), "{out}");
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("harnesses")).unwrap();
    std::fs::write(
        dir.path().join("harnesses/bad.toml"),
        "name = \"bad\"\n\n[[status]]\nid = \"bad-steps\"\nvalue = \"x\"\nmeans = \"budget:steps\"\nwaits = true\n",
    )
    .unwrap();
    let r = coroner(&["rules", "--rules", dir.path().to_str().unwrap(), "list"]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("`waits` belongs to a [[status]] that means budget:wall_time"), "{err}");
}

/// A rules file that does not load stops every command with its diagnostic, printed once.
#[test]
fn a_bad_rules_directory_is_one_diagnostic() {
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("harnesses")).unwrap();
    std::fs::write(
        dir.path().join("harnesses/bad.toml"),
        "name = \"bad\"\n\n[[status]]\nid = \"Bad_Id\"\nvalue = \"x\"\nmeans = \"agent_finished\"\n",
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    for args in [vec!["rules", "--rules", d, "list"], vec!["classify", "--rules", d, "samples/doubles"]] {
        let r = coroner(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.matches("failed to load rules from").count(), 1, "{args:?}: {err}");
        assert!(err.contains("bad.toml") && err.contains("Bad_Id") && err.contains("kebab-case"), "{err}");
        assert!(r.stdout.is_empty(), "{args:?}");
    }
}

/// Every built-in pattern list, and every entry's pattern, gated by the literals it needs
/// (`rules::required`): over every text the fixtures and samples hold, the gate never turns away
/// a text one of the patterns matches. The gate is a necessary condition; this is where a wrong
/// one would show.
#[test]
fn a_gate_never_turns_away_a_text_its_patterns_match() {
    fn strings(v: &toml::Value, out: &mut Vec<String>) {
        match v {
            toml::Value::String(s) => out.push(s.clone()),
            toml::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            toml::Value::Table(t) => t.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let root = crate::common::root();
    let read = |dir: &str| -> Vec<toml::Value> {
        let mut v: Vec<_> = std::fs::read_dir(root.join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        v.sort();
        v.into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .map(|p| toml::Value::Table(toml::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()))
            .collect()
    };
    let mut texts = Vec::new();
    for f in read("rules/fixtures").iter().chain(&read("rules/fixtures/harnesses")) {
        strings(f, &mut texts);
    }
    let mut lists: Vec<Vec<String>> = Vec::new();
    for h in read("rules/harnesses") {
        if let Some(toml::Value::Table(ph)) = h.get("phrases") {
            for v in ph.values() {
                let mut l = Vec::new();
                strings(v, &mut l);
                lists.push(l);
            }
        }
        for table in ["status", "error", "log_line", "unknown_tool", "format_error"] {
            for e in h.get(table).and_then(toml::Value::as_array).into_iter().flatten() {
                if let Some(p) = e.get("pattern").and_then(toml::Value::as_str) {
                    lists.push(vec![p.to_string()]);
                }
            }
        }
    }
    texts.extend(lists.iter().flatten().cloned());
    let mut gated = 0;
    for list in &lists {
        let Some(gate) = coroner::rules::required::gate(list) else { continue };
        gated += 1;
        let res: Vec<regex::Regex> = list.iter().map(|p| regex::Regex::new(p).unwrap()).collect();
        for t in &texts {
            if res.iter().any(|r| r.is_match(t)) {
                assert!(gate.is_match(t), "the gate {gate} of {list:?} turned away {t:?}");
            }
        }
    }
    assert!(gated > 20, "only {gated} lists have a gate");
}
