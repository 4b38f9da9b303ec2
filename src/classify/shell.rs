//! What a shell command does to the workspace, read with tree-sitter-bash.
//!
//! Agents act through shells more than through any other tool, so "did it change a file" and
//! "did it run the tests" must be answered from the command itself: redirections and here-docs
//! into files, `sed -i`, `tee`, `patch`, `git apply`, `cp`/`mv` onto files and interpreter
//! one-liners that open files for writing are mutations; test runners are verifications.
//! `bash -c '...'` and friends are read recursively.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

/// The effects of one command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellEffects {
    /// Files written (paths as written in the command; `(git apply)` and the like when the
    /// files are not named).
    pub writes: Vec<String>,
    /// The test runner or check, when the command runs one (`pytest`, `cargo test`, ...).
    pub verification: Option<String>,
    /// The command did not parse cleanly; effects were read from what did.
    pub partial: bool,
}

impl ShellEffects {
    #[must_use]
    pub fn mutates(&self) -> bool {
        !self.writes.is_empty()
    }
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    /// Effects of recent short commands: agents repeat `ls`, `git diff` and the same test run
    /// many times per run and across runs, and parsing is most of the cost of an action.
    static MEMO: RefCell<std::collections::HashMap<String, ShellEffects>> = RefCell::new(std::collections::HashMap::new());
}

/// Longest command analysed; longer inputs (pasted files) are cut here.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Commands up to this long are remembered (longer ones, here-docs of whole files, rarely
/// repeat).
const MEMO_KEY_BYTES: usize = 1024;
/// Remembered commands per thread before the memo starts over (bounds its memory to a few MB).
const MEMO_ENTRIES: usize = 8192;

/// Analyses one command line (or script).
#[must_use]
pub fn analyse(command: &str) -> ShellEffects {
    let memo = command.len() <= MEMO_KEY_BYTES;
    if memo && let Some(fx) = MEMO.with(|m| m.borrow().get(command).cloned()) {
        return fx;
    }
    let mut fx = ShellEffects::default();
    analyse_into(command, &mut fx, 0);
    fx.writes.dedup();
    if memo {
        MEMO.with(|m| {
            let mut m = m.borrow_mut();
            if m.len() >= MEMO_ENTRIES {
                m.clear();
            }
            m.insert(command.to_string(), fx.clone());
        });
    }
    fx
}

fn analyse_into(command: &str, fx: &mut ShellEffects, depth: u8) {
    if depth > 3 || command.trim().is_empty() {
        return;
    }
    let mut end = command.len().min(MAX_COMMAND_BYTES);
    while !command.is_char_boundary(end) {
        end -= 1;
    }
    let src = &command[..end];
    let tree = PARSER.with(|p| {
        let mut p = p.borrow_mut();
        let parser = p.get_or_insert_with(|| {
            let mut parser = Parser::new();
            parser.set_language(&tree_sitter_bash::LANGUAGE.into()).expect("tree-sitter-bash loads");
            parser
        });
        parser.parse(src, None)
    });
    let Some(tree) = tree else { return };
    if tree.root_node().has_error() {
        fx.partial = true;
    }
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "command" => command_effects(node, src, fx, depth),
            "file_redirect" => redirect_effects(node, src, fx),
            _ => {}
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            stack.push(child);
        }
    }
}

fn text<'a>(node: Node<'_>, src: &'a str) -> &'a str {
    src.get(node.byte_range()).unwrap_or("")
}

/// A word as the shell would see it: quotes removed.
fn unquote(s: &str) -> String {
    let t = s.trim();
    if t.len() >= 2 && ((t.starts_with('"') && t.ends_with('"')) || (t.starts_with('\'') && t.ends_with('\''))) {
        return t[1..t.len() - 1].to_string();
    }
    if let Some(inner) = t.strip_prefix("$'").and_then(|x| x.strip_suffix('\'')) {
        return inner.to_string();
    }
    t.to_string()
}

fn redirect_effects(node: Node<'_>, src: &str, fx: &mut ShellEffects) {
    let mut cursor = node.walk();
    let mut writes = false;
    for child in node.children(&mut cursor) {
        if !child.is_named() {
            let op = text(child, src);
            // `>`, `>>`, `&>`, `&>>`, `>|`; not `<` nor fd duplication `>&`.
            if op.contains('>') && !op.ends_with('&') {
                writes = true;
            }
        }
    }
    if !writes {
        return;
    }
    let mut cursor = node.walk();
    for dest in node.children_by_field_name("destination", &mut cursor) {
        let d = unquote(text(dest, src));
        if d.is_empty() || d.starts_with("/dev/") || d.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        fx.writes.push(d);
    }
}

const TEST_RUNNERS: &[&str] =
    &["pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "nosetests", "ava", "karma", "trial"];

fn command_effects(node: Node<'_>, src: &str, fx: &mut ShellEffects, depth: u8) {
    let Some(name_node) = node.child_by_field_name("name") else { return };
    let raw_name = unquote(text(name_node, src));
    let name = raw_name.rsplit('/').next().unwrap_or(&raw_name).to_string();
    let mut cursor = node.walk();
    let args: Vec<String> = node.children_by_field_name("argument", &mut cursor).map(|a| unquote(text(a, src))).collect();
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);

    // Shells and wrappers: read the script they run.
    if matches!(name.as_str(), "bash" | "sh" | "zsh" | "dash") {
        if let Some(i) = args
            .iter()
            .position(|a| a == "-c" || a == "-lc" || a == "-ic" || (a.starts_with('-') && a.ends_with('c') && !a.starts_with("--")))
        {
            if let Some(script) = args.get(i + 1) {
                analyse_into(script, fx, depth + 1);
            }
            return;
        }
        if let Some(script) = positional.first()
            && is_test_script(script)
        {
            fx.verification = Some(format!("{name} {script}"));
        }
        return;
    }
    if matches!(
        name.as_str(),
        "timeout" | "time" | "nice" | "env" | "sudo" | "xargs" | "nohup" | "stdbuf" | "uv" | "poetry" | "pipenv" | "conda"
    ) {
        // `timeout 60 pytest`, `env X=1 pytest`, `uv run pytest`, `poetry run pytest`.
        let rest: Vec<&str> = args
            .iter()
            .map(String::as_str)
            .skip_while(|a| {
                a.starts_with('-')
                    || a.contains('=')
                    || a.parse::<f64>().is_ok()
                    || *a == "run"
                    || a.ends_with('s') && a[..a.len() - 1].parse::<f64>().is_ok()
            })
            .collect();
        if !rest.is_empty() {
            analyse_into(&rest.join(" "), fx, depth + 1);
        }
        return;
    }

    match name.as_str() {
        "sed" | "perl"
            if args.iter().any(|a| {
                a == "-i"
                    || a.starts_with("-i") && !a.starts_with("-in")
                    || a == "--in-place"
                    || a.starts_with("--in-place=")
                    || (name == "perl" && a.starts_with("-p") && a.contains('i'))
            }) =>
        {
            let script_given = has("-e") || has("-f") || args.iter().any(|a| a.starts_with("--expression"));
            // Positionals that are not the value of -e/-f.
            let operands: Vec<&String> = args
                .iter()
                .enumerate()
                .filter(|(i, a)| !a.starts_with('-') && (*i == 0 || !matches!(args[i - 1].as_str(), "-e" | "-f")))
                .map(|(_, a)| a)
                .collect();
            let files: Vec<&String> = operands.into_iter().skip(usize::from(!script_given)).collect();
            if files.is_empty() {
                fx.writes.push(format!("({name} -i)"));
            }
            fx.writes.extend(files.into_iter().cloned());
        }
        "tee" => fx.writes.extend(positional.iter().map(|s| (*s).clone())),
        "cp" | "mv" | "install" | "rsync" | "ln" => {
            if let Some(dst) = positional.last().filter(|_| positional.len() >= 2) {
                fx.writes.push((*dst).clone());
            }
        }
        "rm" | "touch" | "truncate" | "unlink" | "mkdir" | "rmdir" | "chmod" | "chown" => {
            // chmod/chown's first positional is the mode/owner, not a file.
            let skip = usize::from(matches!(name.as_str(), "chmod" | "chown"));
            fx.writes.extend(positional.iter().skip(skip).map(|s| (*s).clone()));
        }
        "unzip" | "tar" if name == "unzip" || args.iter().any(|a| a.starts_with('-') && a.contains('x') || a.starts_with('x')) => {
            fx.writes.push(format!("({name})"))
        }
        "pip" | "pip3" | "apt" | "apt-get" | "conda" | "brew" | "gem" | "cargo-install"
            if positional.first().is_some_and(|s| *s == "install" || *s == "uninstall") =>
        {
            fx.writes.push(format!("({name} {})", positional[0]));
        }
        "sqlite3" | "psql" | "mysql" => {
            static SQL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            let re =
                SQL.get_or_init(|| regex::Regex::new(r"(?i)\b(insert|update|delete|create|drop|alter|replace)\b").expect("static regex"));
            if args.iter().any(|a| re.is_match(a)) {
                fx.writes.push(format!("({name})"));
            }
        }
        "dd" => fx.writes.extend(args.iter().filter_map(|a| a.strip_prefix("of=")).map(ToString::to_string)),
        "patch" => fx.writes.push(
            args.iter()
                .position(|a| a == "-i")
                .and_then(|i| args.get(i + 1))
                .map_or_else(|| "(patch)".to_string(), |p| format!("(patch {p})")),
        ),
        "git" => match positional.first().map(|s| s.as_str()) {
            Some("apply" | "am" | "cherry-pick" | "revert" | "merge" | "rebase" | "init" | "clone" | "commit" | "mv" | "rm") => {
                fx.writes.push(format!("(git {})", positional[0]))
            }
            Some("checkout" | "restore") if has("--") || positional.len() >= 2 => fx.writes.push(format!("(git {})", positional[0])),
            Some("stash") if positional.get(1).is_some_and(|s| *s == "pop" || *s == "apply") => fx.writes.push("(git stash)".into()),
            Some("reset") if has("--hard") => fx.writes.push("(git reset --hard)".into()),
            _ => {}
        },
        "python" | "python3" | "python2" | "pypy" | "pypy3" => python_effects(&args, fx),
        "node" | "ruby" => {
            if let Some(code) = args.iter().position(|a| a == "-e").and_then(|i| args.get(i + 1))
                && (code.contains("writeFile") || code.contains("File.write"))
            {
                fx.writes.push(format!("({name} -e)"));
            }
        }
        "cargo" if positional.first().is_some_and(|s| *s == "test" || *s == "nextest") => {
            fx.verification = Some(format!("cargo {}", positional[0]));
        }
        "go" if positional.first().is_some_and(|s| *s == "test") => fx.verification = Some("go test".into()),
        "npm" | "yarn" | "pnpm" | "bun" => {
            let sub: Vec<&str> = positional.iter().map(|s| s.as_str()).collect();
            if matches!(sub.first(), Some(&("install" | "i" | "add" | "remove" | "uninstall"))) {
                fx.writes.push(format!("({name} {})", sub[0]));
            }
            if sub.first() == Some(&"test")
                || sub.first() == Some(&"t")
                || (sub.first() == Some(&"run") && sub.get(1).is_some_and(|s| s.contains("test")))
                || sub.first().is_some_and(|s| s.contains("test"))
            {
                fx.verification = Some(format!("{name} test"));
            }
        }
        "npx" | "bunx" => {
            if let Some(tool) = positional.first()
                && TEST_RUNNERS.contains(&tool.as_str())
            {
                fx.verification = Some((*tool).clone());
            }
        }
        "make" | "gmake" if positional.iter().any(|t| matches!(t.as_str(), "test" | "tests" | "check" | "unittest" | "test-all")) => {
            fx.verification = Some("make test".into());
        }
        "mvn" | "gradle" | "gradlew" | "sbt" | "dotnet" | "mix" | "swift"
            if positional.iter().any(|t| t.as_str() == "test" || t.as_str() == "verify" || t.as_str() == "check") =>
        {
            fx.verification = Some(format!("{name} test"));
        }
        "bundle" | "rake" if positional.iter().any(|t| t.as_str() == "rspec" || t.as_str() == "test" || t.as_str() == "spec") => {
            fx.verification = Some(format!("{name} test"));
        }
        n if TEST_RUNNERS.contains(&n) => fx.verification = Some(n.to_string()),
        n if is_test_script(n) && raw_name.contains('/') => fx.verification = Some(raw_name.clone()),
        _ => {}
    }
}

fn python_effects(args: &[String], fx: &mut ShellEffects) {
    if let Some(i) = args.iter().position(|a| a == "-m") {
        if let Some(m) = args.get(i + 1)
            && matches!(m.as_str(), "pytest" | "unittest" | "nose" | "nose2" | "tox" | "doctest")
        {
            fx.verification = Some(format!("python -m {m}"));
        }
        return;
    }
    if let Some(code) = args.iter().position(|a| a == "-c").and_then(|i| args.get(i + 1)) {
        static WRITE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let re = WRITE.get_or_init(|| {
            regex::Regex::new(r#"open\(\s*(?:r|f)?['"]([^'"]+)['"]\s*,\s*(?:mode\s*=\s*)?['"][^'"]*[wax+][^'"]*['"]|\.write_(?:text|bytes)\(|shutil\.(?:copy|move)|os\.(?:rename|replace|remove)"#).expect("static regex")
        });
        if let Some(c) = re.captures(code) {
            fx.writes.push(c.get(1).map_or_else(|| "(python -c)".to_string(), |m| m.as_str().to_string()));
        }
        return;
    }
    if let Some(script) = args.iter().find(|a| !a.starts_with('-'))
        && is_test_script(script)
    {
        fx.verification = Some(format!("python {script}"));
    }
}

/// Scripts named like tests or checks (`run_tests.sh`, `tests/runtests.py`, `reproduce.py`).
fn is_test_script(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let stem = file.split('.').next().unwrap_or(&file);
    stem.starts_with("test")
        || stem.ends_with("test")
        || stem.ends_with("tests")
        || stem.contains("runtests")
        || stem.contains("run_test")
        || stem.starts_with("reproduce")
        || stem.starts_with("repro")
        || stem.starts_with("check")
        || stem.starts_with("verify")
        || (file.ends_with(".py") && path.contains("tests/"))
}

#[cfg(test)]
mod tests {
    use super::analyse;

    fn writes(c: &str) -> Vec<String> {
        analyse(c).writes
    }

    #[test]
    fn redirections_and_heredocs_write_files() {
        assert_eq!(writes("echo hi > out.txt"), ["out.txt"]);
        assert_eq!(writes("printf 'x' >> log/a.log 2>&1"), ["log/a.log"]);
        assert_eq!(writes("cat <<'EOF' > src/app.py\nprint(1)\nEOF"), ["src/app.py"]);
        assert!(writes("ls -la 2>/dev/null").is_empty());
        assert!(writes("grep -r foo . > /dev/null").is_empty());
    }

    #[test]
    fn editing_commands_write_their_targets() {
        assert_eq!(writes("sed -i 's/a/b/' src/x.py"), ["src/x.py"]);
        assert_eq!(writes("sed -i.bak -e 's/a/b/' x.py y.py"), ["x.py", "y.py"]);
        assert!(writes("sed -n '1,10p' x.py").is_empty());
        assert_eq!(writes("echo x | tee -a notes.md"), ["notes.md"]);
        assert_eq!(writes("cp a.py b.py"), ["b.py"]);
        assert_eq!(writes("git apply fix.patch"), ["(git apply)"]);
        assert_eq!(writes("patch -p1 -i fix.diff"), ["(patch fix.diff)"]);
        assert_eq!(writes("python3 -c \"open('a.txt', 'w').write('x')\""), ["a.txt"]);
        assert_eq!(writes("bash -lc \"sed -i 's/1/2/' m.py\""), ["m.py"]);
        assert!(writes("git diff && git status").is_empty());
    }

    #[test]
    fn test_runners_are_verifications() {
        for (c, v) in [
            ("pytest -q tests/", "pytest"),
            ("cd repo && python -m pytest -x", "python -m pytest"),
            ("cargo test --all", "cargo test"),
            ("go test ./...", "go test"),
            ("npm test", "npm test"),
            ("yarn run test:unit", "yarn test"),
            ("make test", "make test"),
            ("timeout 60 pytest tests/test_a.py", "pytest"),
            ("python tests/runtests.py admin_views", "python tests/runtests.py"),
            ("python reproduce_issue.py", "python reproduce_issue.py"),
            ("bash run_tests.sh", "bash run_tests.sh"),
            ("npx jest src", "jest"),
        ] {
            assert_eq!(analyse(c).verification.as_deref(), Some(v), "{c}");
        }
        assert_eq!(analyse("python setup.py install").verification, None);
        assert_eq!(analyse("ls tests").verification, None);
    }

    #[test]
    fn a_remembered_command_has_the_same_effects() {
        for c in ["sed -i 's/a/b/' src/x.py && pytest -q", "cat <<'EOF' > a.py\nx\nEOF", "ls"] {
            let first = analyse(c);
            assert_eq!(analyse(c), first, "{c}");
        }
        // The memo starts over when full; answers do not change.
        for i in 0..super::MEMO_ENTRIES + 10 {
            let _ = analyse(&format!("echo {i} > f{i}.txt"));
        }
        assert_eq!(writes("echo 3 > f3.txt"), ["f3.txt"]);
        assert_eq!(writes("sed -i 's/a/b/' src/x.py && pytest -q"), ["src/x.py"]);
    }

    #[test]
    fn broken_and_huge_commands_do_not_panic() {
        let fx = analyse("echo 'unterminated > x");
        assert!(fx.partial || fx.writes.is_empty());
        let huge = "echo ".to_string() + &"a".repeat(200_000) + " > f";
        let _ = analyse(&huge);
        let _ = analyse("é".repeat(40_000).as_str());
    }
}
