//! What a shell command does to the workspace, read with tree-sitter-bash.
//!
//! Agents act through shells more than through any other tool, so "did it change a file" and
//! "did it run the tests" must be answered from the command itself: redirections and here-docs
//! into files, `sed -i`/`perl -i`, `tee`, `patch`, `git apply`, `cp`/`mv` onto files and Python
//! (`-c`, here-docs, scripts saved by a here-doc in the same command, read with
//! tree-sitter-python) that opens files for writing are mutations; test runners are
//! verifications. `bash -c '...'` and shell here-docs are read recursively.
//!
//! The workspace is what is being judged, so writes outside it (`/tmp`, `/var/tmp`, `/dev`) are
//! not changes, and neither is saving the output of `git diff`/`git show`/`git format-patch`/
//! `git log` (or `diff`) to a patch file: that produces the submission, it does not change the
//! source.

use std::cell::RefCell;
use std::collections::HashMap;

use tree_sitter::{Node, Parser};

use super::python_calls::{self, GiveUp, PyNode};

/// The effects of one command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellEffects {
    /// Files written (paths as written in the command; `(git apply)` and the like when the
    /// files are not named).
    pub writes: Vec<String>,
    /// The test runner or check, when the command runs one (`pytest`, `cargo test`, ...).
    pub verification: Option<String>,
    /// Files written whole (`> f`, `tee f`, a here-doc saved to `f`), which makes them new when
    /// they are first written so; also in `writes`.
    pub whole: Vec<String>,
    /// Files removed (`rm`, `unlink`, `rmdir`, `git rm`); also in `writes`.
    pub deletes: Vec<String>,
    /// Files put back to an earlier state (`git checkout -- f`, `git restore f`, a backup moved or
    /// copied over `f`), or `*` for the whole tree (`git stash`, `git reset --hard`,
    /// `git checkout .`): an agent undoing its own change.
    pub reverts: Vec<String>,
    /// Scripts the command runs with an interpreter (`python x.py`, `bash run.sh`), and `-` for
    /// a program given inline (`python -c`, `python - <<EOF`).
    pub runs: Vec<String>,
    /// Here-doc bodies the command saves to files, for a script written now and run later.
    pub saved: Vec<(String, String)>,
    /// The command did not parse cleanly; effects were read from what did.
    pub partial: bool,
    /// Redirect targets a leaked escape mangled (`> app.py\\n`, a model's `\\n` written outside
    /// quotes): the shell writes `app.pyn`, a file nothing reads, so the write the agent meant
    /// never landed. Kept out of `writes`.
    pub misfired: Vec<String>,
    /// What the command's edits put in, when every write it makes is a `sed -i` of
    /// substitutions with literal replacements (no `&`, no escape): the texts to look for in a
    /// patch. None when any write is of another kind.
    pub put_in: Option<Vec<String>>,
    /// While reading: the literal replacements seen, and how many writes they account for.
    sed_texts: Vec<String>,
    literal_writes: usize,
    /// Files whose every edit in the command only swapped one quote character for the other
    /// (`sed -i "s/\"%s\"/'%s'/" f.py`): restyled, not changed. Also in `writes`.
    pub restyled: Vec<String>,
    /// Files whose every edit in the command only deleted the lines matching patterns
    /// (`sed -i '/DEBUG:/d' f.py`), with those patterns in `pruned_by`. Also in `writes`.
    pub pruned: Vec<String>,
    pub pruned_by: Vec<String>,
    /// `git stash` pushes less pops in the command: one that stashes and pops again
    /// (`git stash && pytest && git stash pop`) puts nothing back.
    pub stash_depth: i32,
    /// The command stashes and pops again: undone nothing if it ran to its end
    /// ([`ShellEffects::settle_round_trip`]).
    pub stash_round_trip: bool,
}

impl ShellEffects {
    #[must_use]
    pub fn mutates(&self) -> bool {
        !self.writes.is_empty()
    }
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static PY_PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    /// Effects of recent short commands: agents repeat `ls`, `git diff` and the same test run
    /// many times per run and across runs, and parsing is most of the cost of an action.
    static MEMO: RefCell<std::collections::HashMap<String, ShellEffects>> = RefCell::new(std::collections::HashMap::new());
}

/// Longest command analysed; longer inputs (pasted files) are cut here.
const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// Most simple commands read in one command line or script (a real one has tens).
const MAX_COMMANDS: usize = 512;
/// Commands up to this long are remembered (longer ones, here-docs of whole files, rarely
/// repeat).
const MEMO_KEY_BYTES: usize = 1024;
/// Remembered commands per thread before the memo starts over (bounds its memory to a few MB).
const MEMO_ENTRIES: usize = 8192;

/// Parses the first [`MAX_COMMAND_BYTES`] of `text` (cut on a character boundary) with this
/// thread's parser for `lang`, made on first use; returns the text parsed with its tree.
fn parse_bounded<'t>(
    parser: &'static std::thread::LocalKey<RefCell<Option<Parser>>>,
    lang: tree_sitter::Language,
    text: &'t str,
) -> (&'t str, Option<tree_sitter::Tree>) {
    let src = bounded(text);
    let tree = parser.with(|p| {
        let mut p = p.borrow_mut();
        let parser = p.get_or_insert_with(|| {
            let mut parser = Parser::new();
            parser.set_language(&lang).expect("a bundled tree-sitter grammar loads");
            parser
        });
        parser.parse(src, None)
    });
    (src, tree)
}

/// The first [`MAX_COMMAND_BYTES`] of `text`, cut on a character boundary.
fn bounded(text: &str) -> &str {
    let mut end = text.len().min(MAX_COMMAND_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Analyses one command line (or script) run in `workdir`, when known: writes outside the
/// workspace (scratch and device files) are dropped, except under `workdir` itself, which may
/// lie in `/tmp`.
#[must_use]
pub fn analyse_in(command: &str, workdir: Option<&str>) -> ShellEffects {
    let mut fx = analyse_all(command);
    let under = |w: &str| workdir.is_some_and(|d| is_under(w, d));
    fx.writes.retain(|w| !outside_workspace(w) || under(w));
    fx.misfired.retain(|w| !outside_workspace(w) || under(w));
    fx
}

/// What running a script saved earlier does: the files a Python program writes, or a shell
/// script's effects.
#[must_use]
pub fn script_effects(script: &str, body: &str) -> ShellEffects {
    let mut fx = ShellEffects::default();
    if script.ends_with(".py") {
        fx.writes = python_writes(body);
    } else if script.ends_with(".sh") {
        analyse_into(body, &mut fx, 1);
        settle_restyled(&mut fx);
    }
    fx.writes.retain(|w| !outside_workspace(w));
    fx
}

/// Analyses one command line (or script) whose working directory is not known.
#[must_use]
pub fn analyse(command: &str) -> ShellEffects {
    analyse_in(command, None)
}

/// Every write and the verification, before writes outside the workspace are dropped.
fn analyse_all(command: &str) -> ShellEffects {
    let memo = command.len() <= MEMO_KEY_BYTES;
    if memo && let Some(fx) = MEMO.with(|m| m.borrow().get(command).cloned()) {
        return fx;
    }
    let mut fx = ShellEffects::default();
    analyse_into(command, &mut fx, 0);
    settle_restyled(&mut fx);
    settle_stash(&mut fx);
    settle_cd(command, &mut fx);
    // Counted before duplicates go: `sed -i '/x/d' f && sed -i 's/a/b/' f` writes f twice, once
    // with a script that says nothing of what it leaves.
    let texts = std::mem::take(&mut fx.sed_texts);
    if !fx.writes.is_empty() && fx.writes.len() == fx.literal_writes && fx.whole.is_empty() {
        fx.put_in = Some(texts);
    }
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
    let src = bounded(command);
    if let Some(commands) = super::simple_command::split(src) {
        let mut walk = Walk::default();
        // In the order the tree-sitter walk visits them: its stack pops the last child first.
        for (k, words) in commands.iter().rev().enumerate() {
            if k >= MAX_COMMANDS {
                fx.partial = true;
                break;
            }
            let raw_name = unquote(words[0]);
            let name = raw_name.rsplit('/').next().unwrap_or(&raw_name).to_string();
            let args = words[1..].iter().map(|w| unquote(w)).collect();
            words_effects(name, raw_name, args, fx, depth, &mut walk);
        }
        finish(walk, fx, depth);
        return;
    }
    parse_tree(src, fx, depth);
}

/// [`analyse_into`] with tree-sitter, whatever the line.
///
/// The bodies of here-docs with a quoted delimiter (`cat <<'EOF' > fix.py`) are literal text
/// that no parse of the line looks into, yet they were nine tenths of the bytes tree-sitter-bash
/// read on a real SWE-bench run: the line is parsed with each such body replaced by a one-line
/// placeholder, and the body read back where the walk reads it. Where the placeholders do not
/// come back as those bodies exactly, the line is parsed whole.
fn parse_tree(src: &str, fx: &mut ShellEffects, depth: u8) {
    let src = bounded(src);
    if let Some((stripped, bodies)) = literal_heredocs(src) {
        let (short, tree) = parse_bounded(&PARSER, tree_sitter_bash::LANGUAGE.into(), &stripped);
        if let Some(tree) = tree.filter(|t| placeholders_come_back(t, short, &bodies)) {
            walk_tree(&tree, short, &bodies, fx, depth);
            return;
        }
    }
    parse_whole(src, fx, depth);
}

/// [`parse_tree`] with every here-doc body left in place.
fn parse_whole(src: &str, fx: &mut ShellEffects, depth: u8) {
    let (src, tree) = parse_bounded(&PARSER, tree_sitter_bash::LANGUAGE.into(), src);
    let Some(tree) = tree else { return };
    walk_tree(&tree, src, &[], fx, depth);
}

/// A here-doc body taken out of a line: its placeholder line and the body it stands for.
type Body<'s> = (String, &'s str);

/// `src` with the body of every here-doc whose delimiter is quoted (`<<'EOF'`, `<<"EOF"`)
/// replaced by a placeholder line, and those bodies; `None` when a line has any other `<<`
/// (`<<EOF`, whose body expands; `<<-`; a here-string; two operators on one line), when a body
/// has no end, or when there is no such body. A body line that is the delimiter but for
/// surrounding blanks also gives `None`: whether it ends the body is the parser's call.
fn literal_heredocs(src: &str) -> Option<(String, Vec<Body<'_>>)> {
    if !src.contains("<<") {
        return None;
    }
    let mut out = String::with_capacity(256);
    let mut bodies: Vec<Body<'_>> = Vec::new();
    let mut rest = src;
    while !rest.is_empty() {
        let line_end = rest.find('\n').map_or(rest.len(), |k| k + 1);
        let line = &rest[..line_end];
        out.push_str(line);
        rest = &rest[line_end..];
        let Some(at) = line.find("<<") else { continue };
        // Two operators, or one inside a command substitution, whose text an argument may hold.
        if line[at + 2..].contains("<<") || line[..at].contains("$(") || line[..at].contains('`') {
            return None;
        }
        let after = &line[at + 2..];
        let quote = after.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
        let close = after[1..].find(quote)?;
        let delim = &after[1..1 + close];
        if delim.is_empty() || !delim.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') || !line.ends_with('\n') {
            return None;
        }
        // The body: the lines up to the one that is the delimiter.
        let mut body_len = 0;
        loop {
            // The delimiter may be the last line, without its newline; a body line may not.
            let l_end = rest[body_len..].find('\n').map_or(rest.len(), |k| body_len + k);
            let l = &rest[body_len..l_end];
            if l == delim {
                break;
            }
            if l_end == rest.len() || l.trim() == delim {
                return None;
            }
            body_len = l_end + 1;
        }
        let placeholder = format!("coroner_heredoc_body_{}", bodies.len());
        // The parser's body starts at its first non-blank line, and a backslash that starts a
        // body it reads as an escape, where bash reads both as text: such a body is left to it.
        if body_len == 0 || placeholder == delim || rest.starts_with(char::is_whitespace) || rest.starts_with('\\') {
            return None;
        }
        out.push_str(&placeholder);
        out.push('\n');
        bodies.push((placeholder, &rest[..body_len]));
        rest = &rest[body_len..];
    }
    (!bodies.is_empty()).then_some((out, bodies))
}

/// Whether every placeholder came back as a here-doc body of its own, exactly (then the line
/// parsed as it would have with the bodies in place).
fn placeholders_come_back(tree: &tree_sitter::Tree, src: &str, bodies: &[Body<'_>]) -> bool {
    let mut found = 0;
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "heredoc_body" {
            let t = text(node, src);
            if !bodies.iter().any(|(p, _)| t.strip_suffix('\n') == Some(p.as_str())) {
                return false;
            }
            found += 1;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    found == bodies.len()
}

/// The walk of [`parse_tree`] over a parsed line; `bodies` are the here-doc bodies its
/// placeholders stand for.
fn walk_tree(tree: &tree_sitter::Tree, src: &str, bodies: &[Body<'_>], fx: &mut ShellEffects, depth: u8) {
    if tree.root_node().has_error() {
        fx.partial = true;
    }
    let mut walk = Walk { bodies, ..Walk::default() };
    let mut stack = vec![tree.root_node()];
    let mut commands = 0usize;
    while let Some(node) = stack.pop() {
        match node.kind() {
            // Each command reads its arguments' whole text, and `$($($(…)))` nests a command in
            // every argument: past this many, the rest of the line is not read (quadratic
            // otherwise: 8,000 levels took seconds).
            "command" if commands >= MAX_COMMANDS => {
                fx.partial = true;
                break;
            }
            "command" => {
                commands += 1;
                command_effects(node, src, fx, depth, &mut walk);
            }
            "file_redirect" => redirect_effects(node, src, fx),
            "heredoc_redirect" | "herestring_redirect" => heredoc_effects(node, src, fx, depth, &mut walk),
            _ => {}
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            stack.push(child);
        }
    }
    finish(walk, fx, depth);
}

/// What a walk saw besides effects: the scripts it ran, and the effects of those it also saved.
fn finish(walk: Walk<'_>, fx: &mut ShellEffects, depth: u8) {
    fx.runs.extend(walk.run.iter().map(|(_, s)| s.clone()));
    fx.saved.extend(walk.saved.iter().cloned());
    // `cat > fix.py <<EOF ... EOF; python3 fix.py`: the script's effects are the command's.
    for (lang, script) in &walk.run {
        let script = script.trim_start_matches("./");
        let Some((_, body)) = walk.saved.iter().find(|(p, _)| p.trim_start_matches("./") == script) else { continue };
        match lang {
            Lang::Python => fx.writes.extend(python_writes(body)),
            Lang::Shell => analyse_into(body, fx, depth + 1),
        }
    }
}

/// What a walk over one command line saw besides its effects: here-doc bodies saved to files
/// and scripts run, to read a script written and run in the same command.
#[derive(Default)]
struct Walk<'b> {
    /// (path, body) of each here-doc saved to a file.
    saved: Vec<(String, String)>,
    /// Scripts run by an interpreter.
    run: Vec<(Lang, String)>,
    /// Here-doc bodies the parsed line holds placeholders for.
    bodies: &'b [Body<'b>],
}

#[derive(Clone, Copy)]
enum Lang {
    Python,
    Shell,
}

/// Writes that leave the workspace alone: scratch and device files.
pub(crate) fn outside_workspace(path: &str) -> bool {
    ["/tmp", "/var/tmp", "/dev", "$TMPDIR", "${TMPDIR}"].iter().any(|dir| is_under(path, dir))
}

/// Whether `path` is `dir` or lies under it (at a `/`, so `/tmpfoo` is not under `/tmp`).
pub(crate) fn is_under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir.trim_end_matches('/')).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// A file that holds a patch: `fix.patch`, `changes.diff`, `patch.txt`, `model_patch`.
fn is_patch_file(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let (stem, ext) = file.rsplit_once('.').unwrap_or((&file, ""));
    matches!(ext, "patch" | "diff") || (matches!(ext, "" | "txt") && (stem.contains("patch") || stem.contains("diff")))
}

/// The simple command a redirection or here-doc attached to `node` applies to: the last one of
/// a list (tree-sitter-bash hangs `a && b > f` on the whole list; bash, on `b`).
fn last_command(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "command" => Some(node),
        "redirected_statement" => node.child_by_field_name("body").and_then(last_command),
        "list" | "compound_statement" | "subshell" => {
            let mut cursor = node.walk();
            let last = node.named_children(&mut cursor).filter(|c| c.kind() != "comment").last();
            last.and_then(last_command)
        }
        _ => None,
    }
}

/// The statement a redirection belongs to (directly, or through the here-doc it follows).
fn redirected_statement(redirect: Node<'_>) -> Option<Node<'_>> {
    let mut n = redirect.parent()?;
    if n.kind() == "heredoc_redirect" {
        n = n.parent()?;
    }
    (n.kind() == "redirected_statement").then_some(n)
}

/// A command's name (without its directory), its name as written and its arguments, unquoted.
fn command_words(node: Node<'_>, src: &str) -> Option<(String, String, Vec<String>)> {
    let name_node = node.child_by_field_name("name")?;
    let raw_name = unquote(text(name_node, src));
    let name = raw_name.rsplit('/').next().unwrap_or(&raw_name).to_string();
    let mut cursor = node.walk();
    let args: Vec<String> = node.children_by_field_name("argument", &mut cursor).map(|a| unquote(text(a, src))).collect();
    Some((name, raw_name, args))
}

fn is_python(name: &str) -> bool {
    matches!(name, "python" | "python3" | "python2" | "pypy" | "pypy3") || name.starts_with("python3.")
}

fn is_shell(name: &str) -> bool {
    matches!(name, "bash" | "sh" | "zsh" | "dash")
}

/// Whether an interpreter reads its program from standard input: no script, `-c` or `-m`.
fn reads_program_from_stdin(args: &[String]) -> bool {
    !args.iter().any(|a| a == "-m" || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('c')))
        && args.iter().find(|a| !a.starts_with('-') || *a == "-").is_none_or(|a| a == "-")
}

/// The index of git's subcommand, past global options (`git -C repo --no-pager diff`).
fn git_subcommand(args: &[String]) -> Option<usize> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if matches!(a.as_str(), "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace") {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            return Some(i);
        }
    }
    None
}

/// Commands that only read the repository and print a patch or history.
fn prints_patch(node: Node<'_>, src: &str) -> bool {
    let Some((name, _, args)) = command_words(node, src) else { return false };
    match name.as_str() {
        "git" => git_subcommand(&args).is_some_and(|i| match args[i].as_str() {
            "diff" | "show" | "format-patch" | "log" => true,
            "stash" => args.get(i + 1).is_some_and(|s| s == "show"),
            _ => false,
        }),
        "diff" => true,
        _ => false,
    }
}

fn text<'a>(node: Node<'_>, src: &'a str) -> &'a str {
    src.get(node.byte_range()).unwrap_or("")
}

/// A word as the shell would see it: quotes removed, and the escapes double quotes and `$'...'`
/// allow read.
pub(crate) fn unquote(s: &str) -> String {
    let t = s.trim();
    if t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'') {
        return t[1..t.len() - 1].to_string();
    }
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        return unescape(&t[1..t.len() - 1], |c| matches!(c, '"' | '\\' | '$' | '`' | '\n'), |_| None);
    }
    if let Some(inner) = t.strip_prefix("$'").and_then(|x| x.strip_suffix('\'')) {
        let named = |c| match c {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            _ => None,
        };
        return unescape(inner, |c| matches!(c, '\'' | '"' | '\\' | '?'), named);
    }
    // Outside quotes a backslash keeps the next character as itself and is removed: a model's
    // literal `\n` in `> app.py\n` names the file `app.pyn`, not `app.py`.
    if t.contains('\\') && !t.contains(['\'', '"']) {
        return unescape(t, |_| true, |_| None);
    }
    t.to_string()
}

/// A bare word holding a JSON or C escape (`\\n`, `\\t`, `\\r`) outside quotes: what a model
/// meant as a line break or tab, which the shell reads as the letter (`app.py\\n` is `app.pyn`).
fn leaked_escape(word: &str) -> bool {
    let w = word.trim();
    !w.contains(['\'', '"']) && ["\\n", "\\t", "\\r"].iter().any(|e| w.contains(e))
}

/// Reads backslash escapes: `\c` is `c` when `literal(c)`, `named(c)` when that is some, and
/// stays as written otherwise.
fn unescape(s: &str, literal: impl Fn(char) -> bool, named: impl Fn(char) -> Option<char>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
        {
            if literal(next) {
                out.push(next);
                chars.next();
                continue;
            }
            if let Some(r) = named(next) {
                out.push(r);
                chars.next();
                continue;
            }
        }
        out.push(c);
    }
    out
}

fn redirect_effects(node: Node<'_>, src: &str, fx: &mut ShellEffects) {
    let mut cursor = node.walk();
    let mut writes = false;
    let mut appends = false;
    for child in node.children(&mut cursor) {
        if !child.is_named() {
            let op = text(child, src);
            // `>`, `>>`, `&>`, `&>>`, `>|`; not `<` nor fd duplication `>&`.
            if op.contains('>') && !op.ends_with('&') {
                writes = true;
                appends = op.contains(">>");
            }
        }
    }
    if !writes {
        return;
    }
    // `git diff > patch.txt` produces the submission; it does not change the source.
    let producer = redirected_statement(node).and_then(|s| s.child_by_field_name("body")).and_then(last_command);
    let prints_patch = producer.is_some_and(|c| prints_patch(c, src));
    let mut cursor = node.walk();
    for dest in node.children_by_field_name("destination", &mut cursor) {
        let raw = text(dest, src);
        if leaked_escape(raw) {
            fx.misfired.push(raw.trim().to_string());
            continue;
        }
        let d = unquote(raw);
        if d.is_empty() || d.chars().all(|c| c.is_ascii_digit()) || (prints_patch && is_patch_file(&d)) {
            continue;
        }
        if !appends {
            fx.whole.push(d.clone());
        }
        fx.writes.push(d);
    }
}

/// A here-doc or here-string: a program for the interpreter that reads it, or content saved to
/// the files its `cat`/`tee` writes.
fn heredoc_effects(node: Node<'_>, src: &str, fx: &mut ShellEffects, depth: u8, walk: &mut Walk<'_>) {
    let (body, owner) = if node.kind() == "herestring_redirect" {
        let mut cursor = node.walk();
        let Some(word) = node.named_children(&mut cursor).next() else { return };
        (unquote(text(word, src)), node.parent().filter(|p| p.kind() == "command"))
    } else {
        let mut cursor = node.walk();
        let Some(b) = node.named_children(&mut cursor).find(|c| c.kind() == "heredoc_body") else { return };
        let owner =
            node.parent().filter(|p| p.kind() == "redirected_statement").and_then(|s| s.child_by_field_name("body")).and_then(last_command);
        let t = text(b, src);
        let body = walk.bodies.iter().find(|(p, _)| t.strip_suffix('\n') == Some(p.as_str())).map_or(t, |(_, body)| body);
        (body.to_string(), owner)
    };
    let Some((name, _, args)) = owner.and_then(|o| command_words(o, src)) else { return };
    // `cat <<EOF | python3`: the program goes down the pipe.
    let (reader, reader_args) = if name == "cat" && args.is_empty() {
        let mut cursor = node.walk();
        let piped = node.named_children(&mut cursor).find(|c| c.kind() == "pipeline").and_then(|p| {
            let mut c = p.walk();
            p.named_children(&mut c).find(|n| n.kind() == "command")
        });
        match piped.and_then(|c| command_words(c, src)) {
            Some((n, _, a)) => (n, a),
            None => (name, args),
        }
    } else {
        (name, args)
    };
    if is_python(&reader) && reads_program_from_stdin(&reader_args) {
        fx.writes.extend(python_writes(&body));
        walk.run.push((Lang::Python, "-".into()));
    } else if is_shell(&reader) && reads_program_from_stdin(&reader_args) {
        analyse_into(&body, fx, depth + 1);
    } else if reader == "cat" || reader == "tee" {
        // The files it is saved to, for a later `python3 file` in the same command. Not a file
        // it is appended to (`>>`, `tee -a`): the body is then only the file's end.
        let appends = reader == "tee" && reader_args.iter().any(|a| a == "-a" || a == "--append");
        let mut targets: Vec<String> = reader_args.iter().filter(|a| reader == "tee" && !appends && !a.starts_with('-')).cloned().collect();
        if let Some(stmt) = node.parent() {
            let mut cursor = stmt.walk();
            let mut cursor2 = node.walk();
            for r in stmt
                .named_children(&mut cursor)
                .chain(node.named_children(&mut cursor2))
                .filter(|r| r.kind() == "file_redirect" && !text(*r, src).trim_start().starts_with(">>"))
            {
                let mut c = r.walk();
                targets.extend(r.children_by_field_name("destination", &mut c).map(|d| unquote(text(d, src))));
            }
        }
        walk.saved.extend(targets.into_iter().map(|t| (t, body.clone())));
    }
}

const TEST_RUNNERS: &[&str] =
    &["pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "nosetests", "ava", "karma", "trial"];

fn command_effects(node: Node<'_>, src: &str, fx: &mut ShellEffects, depth: u8, walk: &mut Walk<'_>) {
    let Some((name, raw_name, args)) = command_words(node, src) else { return };
    words_effects(name, raw_name, args, fx, depth, walk);
}

/// One simple command's effects from its name (without its directory), its name as written and
/// its arguments, unquoted.
fn words_effects(name: String, raw_name: String, args: Vec<String>, fx: &mut ShellEffects, depth: u8, walk: &mut Walk<'_>) {
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);

    // Shells and wrappers: read the script they run.
    if is_shell(&name) {
        if let Some(i) = args
            .iter()
            .position(|a| a == "-c" || a == "-lc" || a == "-ic" || (a.starts_with('-') && a.ends_with('c') && !a.starts_with("--")))
        {
            if let Some(script) = args.get(i + 1) {
                analyse_into(script, fx, depth + 1);
            }
            return;
        }
        if let Some(script) = positional.first() {
            walk.run.push((Lang::Shell, (*script).clone()));
            if is_test_script(script) {
                fx.verification = Some(format!("{name} {script}"));
            }
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
        "sed" | "perl" => {
            let edit = if name == "sed" { sed_in_place(&args) } else { perl_in_place(&args).map(|f| (f, vec![None])) };
            if let Some((files, scripts)) = edit {
                if files.is_empty() {
                    fx.writes.push(format!("({name} -i)"));
                }
                let deletes: Option<Vec<String>> =
                    scripts.iter().map(|s| s.as_deref().and_then(deletes_lines)).collect::<Option<Vec<_>>>().map(|v| v.concat());
                if !files.is_empty() && !scripts.is_empty() && scripts.iter().all(|s| s.as_deref().is_some_and(swaps_quotes)) {
                    fx.restyled.extend(files);
                } else if let Some(pats) = deletes.filter(|p| !files.is_empty() && !p.is_empty()) {
                    fx.pruned.extend(files);
                    fx.pruned_by.extend(pats);
                } else {
                    if let Some(texts) = scripts.iter().map(|s| s.as_deref().and_then(literal_replacements)).collect::<Option<Vec<_>>>() {
                        fx.literal_writes += files.len();
                        fx.sed_texts.extend(texts.into_iter().flatten());
                    }
                    fx.writes.extend(files);
                }
            }
        }
        "tee" => {
            if !has("-a") && !has("--append") {
                fx.whole.extend(positional.iter().map(|s| (*s).clone()));
            }
            fx.writes.extend(positional.iter().map(|s| (*s).clone()));
        }
        "cp" | "mv" | "install" | "rsync" | "ln" => {
            if let Some(dst) = positional.last().filter(|_| positional.len() >= 2) {
                fx.writes.push((*dst).clone());
                // Restoring a backup over the file it was taken from undoes the changes since.
                if matches!(name.as_str(), "cp" | "mv")
                    && positional.len() == 2
                    && [".bak", ".orig", ".backup", ".old", "~"].iter().any(|x| positional[0].strip_suffix(x) == Some(dst.as_str()))
                {
                    fx.reverts.push((*dst).clone());
                }
                // Moving a file out of the workspace changes it too.
                if name == "mv" && outside_workspace(dst) {
                    fx.writes.extend(positional[..positional.len() - 1].iter().map(|s| (*s).clone()));
                }
            }
        }
        "rm" | "touch" | "truncate" | "unlink" | "mkdir" | "rmdir" | "chmod" | "chown" => {
            // chmod/chown's first positional is the mode/owner, not a file.
            let skip = usize::from(matches!(name.as_str(), "chmod" | "chown"));
            fx.writes.extend(positional.iter().skip(skip).map(|s| (*s).clone()));
            if matches!(name.as_str(), "rm" | "unlink" | "rmdir") {
                fx.deletes.extend(positional.iter().map(|s| (*s).clone()));
            }
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
        "git" => {
            let sub = git_subcommand(&args).map_or(&[][..], |i| &args[i..]);
            let positional: Vec<&str> = sub.iter().map(String::as_str).filter(|a| !a.starts_with('-')).collect();
            match positional.first() {
                Some(&("apply" | "am" | "cherry-pick" | "revert" | "merge" | "rebase" | "init" | "clone" | "commit" | "mv" | "rm")) => {
                    fx.writes.push(format!("(git {})", positional[0]));
                    if positional[0] == "rm" {
                        fx.deletes.extend(positional[1..].iter().map(|s| (*s).to_string()));
                    }
                }
                Some(&("checkout" | "restore")) if has("--") || positional.len() >= 2 => {
                    fx.writes.push(format!("(git {})", positional[0]));
                    // `git checkout -- f`, `git checkout HEAD f`, `git restore f`: the files
                    // after a `--`, or every name but a revision for restore.
                    let files: Vec<&str> = match sub.iter().position(|a| a == "--") {
                        Some(i) => sub[i + 1..].iter().map(String::as_str).collect(),
                        None if positional[0] == "restore" => positional[1..].iter().copied().filter(|a| !a.starts_with("--")).collect(),
                        None => positional[1..].iter().copied().filter(|a| a.contains('.') || a.contains('/')).collect(),
                    };
                    if files.contains(&".") {
                        fx.reverts.push("*".into());
                    } else {
                        fx.reverts.extend(files.iter().map(|f| (*f).to_string()));
                    }
                }
                Some(&"stash") if positional.get(1).is_some_and(|s| *s == "pop" || *s == "apply") => {
                    fx.writes.push("(git stash)".into());
                    fx.stash_depth -= 1;
                }
                Some(&"stash") if positional.get(1).is_none_or(|s| *s == "push" || *s == "save") => {
                    fx.reverts.push("*".into());
                    fx.stash_depth += 1;
                }
                Some(&"reset") if has("--hard") => {
                    fx.writes.push("(git reset --hard)".into());
                    fx.reverts.push("*".into());
                }
                _ => {}
            }
        }
        n if is_python(n) => python_effects(&args, fx, walk),
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
        // A server's own test of the configuration the agent wrote.
        "nginx" | "sshd" if has("-t") || has("-T") => fx.verification = Some(format!("{name} -t")),
        "apachectl" | "apache2ctl" | "httpd" if has("-t") || positional.iter().any(|a| a.as_str() == "configtest") => {
            fx.verification = Some(format!("{name} configtest"));
        }
        "haproxy" | "visudo" if has("-c") => fx.verification = Some(format!("{name} -c")),
        "named-checkconf" | "named-checkzone" => fx.verification = Some(name.clone()),
        // A request to a service on this machine: the agent exercising what it set up.
        "curl" | "wget" | "http" | "https" if positional.iter().any(|a| local_url(a)) => {
            fx.verification = Some(format!("{name} localhost"))
        }
        n if TEST_RUNNERS.contains(&n) => fx.verification = Some(n.to_string()),
        n if is_test_script(n) && raw_name.contains('/') => fx.verification = Some(raw_name.clone()),
        _ => {}
    }
}

/// A URL (or bare host:port) of this machine: `http://localhost:8080/`, `127.0.0.1:5000/api`.
fn local_url(a: &str) -> bool {
    let rest = a.split_once("://").map_or(a, |(_, r)| r);
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = if host.starts_with('[') { host.split(']').next().map_or(host, |h| &h[1..]) } else { host.split(':').next().unwrap_or("") };
    matches!(host, "localhost" | "127.0.0.1" | "0.0.0.0" | "::1")
}

fn python_effects(args: &[String], fx: &mut ShellEffects, walk: &mut Walk<'_>) {
    if let Some(i) = args.iter().position(|a| a == "-m") {
        if let Some(m) = args.get(i + 1)
            && matches!(m.as_str(), "pytest" | "unittest" | "nose" | "nose2" | "tox" | "doctest")
        {
            fx.verification = Some(format!("python -m {m}"));
        }
        return;
    }
    if let Some(code) = args.iter().position(|a| a == "-c").and_then(|i| args.get(i + 1)) {
        fx.writes.extend(python_writes(code));
        walk.run.push((Lang::Python, "-".into()));
        return;
    }
    if let Some(script) = args.iter().find(|a| !a.starts_with('-')) {
        walk.run.push((Lang::Python, script.clone()));
        if is_test_script(script) {
            fx.verification = Some(format!("python {script}"));
        }
    }
}

/// Whether `code` has what a call [`python_writes`] reads needs in its text: the method's name,
/// or for the calls only a module has (`shutil.*`, `fileinput.*`) the module's; an `open` also
/// needs a write mode, which is a short string literal (or an `os.O_*` flag). Code without any
/// writes nothing it can see and is not parsed: parsing every inline program and script was a
/// third of classify's time on a real SWE-bench run, where most scripts only import, call,
/// print and read files.
fn may_name_a_writer(code: &str) -> bool {
    static NAMES: std::sync::OnceLock<(regex::Regex, regex::Regex)> = std::sync::OnceLock::new();
    let (names, mode) = NAMES.get_or_init(|| {
        // `link` covers `unlink`, `symlink`, `symlink_to`, `hardlink_to`; `remove` `removedirs`.
        let names =
            ["remove", "link", "rmdir", "mkdir", "makedirs", "truncate", "rename", "replace", "shutil", "fileinput", "write_", "touch"];
        (
            regex::Regex::new(&names.join("|")).expect("a literal alternation"),
            // What `is_write_mode` accepts between a literal's quotes (a superset), or an
            // `os.open` flag.
            regex::Regex::new(r#"['"][rbtU]{0,3}[wax+][rwaxbtU+]{0,3}['"]|O_"#).expect("a static regex"),
        )
    });
    names.is_match(code) || (code.contains("open") && mode.is_match(code))
}

/// Files a Python program writes: `open(path, 'w'|'a'|'x'|'+')` (also `io.open`,
/// `Path(path).open('w')`), `Path(path).write_text(...)`/`write_bytes`/`touch`/`unlink`,
/// `os.remove`/`rename`/..., `shutil.copy`/`move`/`rmtree` and `fileinput` in place. A path is
/// recorded when it is a string literal, or a name bound to one (or to `Path(literal)`) and to
/// nothing else; `(python)` otherwise.
fn python_writes(code: &str) -> Vec<String> {
    if !may_name_a_writer(code) {
        return Vec::new();
    }
    python_writes_read(bounded(code)).unwrap_or_else(|_| python_writes_parsed(code))
}

/// [`python_writes`] of the nodes [`python_calls::read`] finds without tree-sitter: most
/// programs, at a fraction of a parse's cost.
///
/// # Errors
/// [`GiveUp`] when the reader is not sure to find the nodes tree-sitter does.
pub(crate) fn python_writes_read(src: &str) -> Result<Vec<String>, GiveUp> {
    let read = python_calls::read(src)?;
    Ok(writes_of(&read.nodes()))
}

/// [`python_writes`] of tree-sitter's tree of the first [`MAX_COMMAND_BYTES`] of `code`.
pub(crate) fn python_writes_parsed(code: &str) -> Vec<String> {
    let (src, tree) = parse_bounded(&PY_PARSER, tree_sitter_python::LANGUAGE.into(), code);
    let Some(tree) = tree else { return Vec::new() };
    writes_of(&python_calls::tree_nodes(&tree, src))
}

/// The writes of a program's assignments and calls (other nodes are skipped), the calls in
/// source order: one reading of either tree, so that the fast reader can differ from
/// tree-sitter only in which nodes it finds, which its tests compare.
pub(crate) fn writes_of<'s, N: PyNode<'s>>(nodes: &[N]) -> Vec<String> {
    // Names bound to a path: `p = 'src/a.py'`, `p = Path('src/a.py')`; None when bound to
    // anything else or to two different things.
    let mut names: PyNames<'s> = HashMap::new();
    // Names bound only to `Path(...)` calls (true), or also to something else (false).
    let mut path_names: HashMap<&str, bool> = HashMap::new();
    for n in nodes.iter().filter(|n| n.kind() == "assignment") {
        let (Some(left), Some(right)) = (n.field("left"), n.field("right")) else { continue };
        if left.kind() != "identifier" {
            continue;
        }
        *path_names.entry(left.text()).or_insert(true) &= is_path_call(right);
        let value = py_path(right, &HashMap::new());
        let bound = names.entry(left.text()).or_insert_with(|| value.clone());
        if *bound != value {
            *bound = None;
        }
    }
    let mut writes = Vec::new();
    let mut push = |path: Option<String>| writes.push(path.unwrap_or_else(|| "(python)".into()));
    for call in nodes.iter().filter(|n| n.kind() == "call") {
        let Some(func) = call.field("function") else { continue };
        let Some(arg_list) = call.field("arguments") else { continue };
        let all: Vec<N> = arg_list.named_children().into_iter().filter(|a| a.kind() != "comment").collect();
        let positional: Vec<N> =
            all.iter().copied().filter(|a| !matches!(a.kind(), "keyword_argument" | "list_splat" | "dictionary_splat")).collect();
        let keyword = |k: &str| {
            all.iter()
                .filter(|a| a.kind() == "keyword_argument")
                .find(|a| a.field("name").is_some_and(|n| n.text() == k))
                .and_then(|a| a.field("value"))
        };
        let arg = |i: usize, k: &str| positional.get(i).copied().or_else(|| keyword(k));
        let path = |n: Option<N>| n.and_then(|n| py_path(n, &names));
        let writes_mode = |n: Option<N>| n.and_then(py_string).is_some_and(|m| is_write_mode(&m));
        let (object, method) = match func.kind() {
            "identifier" => (None, func.text()),
            "attribute" => (func.field("object"), func.field("attribute").map_or("", PyNode::text)),
            _ => continue,
        };
        let module = object.filter(|o| o.kind() == "identifier").map(PyNode::text);
        let is_path = object.is_some_and(|o| is_path_object(o, &names));
        match (module, method) {
            // `open(file, mode)`, and the modules whose `open` reads its arguments so.
            (None, "open") if object.is_none() && writes_mode(arg(1, "mode")) => push(path(arg(0, "file"))),
            (Some("io" | "codecs" | "builtins" | "gzip" | "bz2" | "lzma" | "tarfile"), "open") if writes_mode(arg(1, "mode")) => {
                push(path(arg(0, "file").or_else(|| keyword("name"))));
            }
            (Some("os"), "open") => {
                let flags = arg(1, "flags").map_or("", PyNode::text);
                if ["O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"].iter().any(|f| flags.contains(f)) {
                    push(path(arg(0, "path")));
                }
            }
            (Some("os"), "remove" | "unlink" | "rmdir" | "removedirs" | "mkdir" | "makedirs" | "truncate") => push(path(arg(0, "path"))),
            (Some("os"), "rename" | "replace" | "renames" | "symlink" | "link") => push(path(arg(1, "dst"))),
            (Some("shutil"), "copy" | "copy2" | "copyfile" | "copytree" | "move" | "copymode" | "copystat") => push(path(arg(1, "dst"))),
            (Some("shutil"), "rmtree") => push(path(arg(0, "path"))),
            (Some("fileinput"), "input" | "FileInput") if keyword("inplace").is_some_and(|v| !matches!(v.text(), "False" | "0")) => {
                push(path(arg(0, "files")));
            }
            // Methods only pathlib has.
            (_, "write_text" | "write_bytes" | "touch" | "symlink_to" | "hardlink_to") => push(object.and_then(|o| py_path(o, &names))),
            // Method names other types share: on something known to be a path.
            (_, "open") if is_path && writes_mode(arg(0, "mode")) => push(object.and_then(|o| py_path(o, &names))),
            (_, "unlink" | "mkdir" | "rmdir") if is_path => push(object.and_then(|o| py_path(o, &names))),
            // `replace` is a str method too: only on what is surely a Path, not a name bound to
            // a string.
            (_, "rename") if is_path => push(path(arg(0, "target"))),
            (_, "replace") if object.is_some_and(|o| is_path_call(o) || path_names.get(o.text()) == Some(&true)) => {
                push(path(arg(0, "target")));
            }
            _ => {}
        }
    }
    writes
}

/// Names a Python program binds to a path literal (None: bound to something else too).
type PyNames<'a> = HashMap<&'a str, Option<String>>;

/// A mode string that writes: `w`, `a`, `x` or `+` among the mode letters.
fn is_write_mode(mode: &str) -> bool {
    !mode.is_empty() && mode.len() <= 4 && mode.chars().all(|c| "rwaxbtU+".contains(c)) && mode.chars().any(|c| "wax+".contains(c))
}

/// The value of a Python string literal without interpolation.
fn py_string<'s, N: PyNode<'s>>(node: N) -> Option<String> {
    if node.kind() != "string" || node.has_interpolation() {
        return None;
    }
    let t = node.text();
    let body = &t[t.find(['\'', '"'])?..];
    let q = if body.starts_with("'''") || body.starts_with(r#"""""#) { 3 } else { 1 };
    body.get(q..body.len().checked_sub(q)?).map(ToString::to_string)
}

/// `Path(...)`, `pathlib.Path(...)` and the like.
fn is_path_call<'s, N: PyNode<'s>>(node: N) -> bool {
    node.kind() == "call"
        && node.field("function").is_some_and(|f| {
            let name = f.text();
            matches!(name.rsplit('.').next().unwrap_or(name), "Path" | "PosixPath" | "PurePath" | "PurePosixPath")
        })
}

/// `Path(...)`, or a name bound to a path.
fn is_path_object<'s, N: PyNode<'s>>(node: N, names: &PyNames<'_>) -> bool {
    is_path_call(node) || (node.kind() == "identifier" && names.get(node.text()).is_some_and(Option::is_some))
}

/// The path an expression names, when it is a literal: `'a.py'`, `Path('a.py')`, or a name
/// bound to one of these.
fn py_path<'s, N: PyNode<'s>>(node: N, names: &PyNames<'_>) -> Option<String> {
    // `Path(Path(…))` nests as deep as the (untrusted) command does: a loop, not recursion.
    let mut node = node;
    loop {
        match node.kind() {
            "string" => return py_string(node),
            "identifier" => return names.get(node.text()).cloned().flatten(),
            "call" if is_path_call(node) => {
                let args = node.field("arguments")?;
                let parts: Vec<N> = args.named_children().into_iter().filter(|a| a.kind() != "comment").collect();
                match parts.as_slice() {
                    [one] => node = *one,
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
}

/// `sed`'s files when it edits in place (GNU `-i[SUFFIX]`, `--in-place[=SUFFIX]`, BSD
/// `-i SUFFIX` with the suffix its own word, `''` included), with its scripts (`None`: a script
/// file); None when it does not edit in place.
fn sed_in_place(args: &[String]) -> Option<(Vec<String>, Vec<Option<String>>)> {
    let (mut in_place, mut options) = (false, true);
    let mut scripts: Vec<Option<String>> = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if !options || a == "-" || !a.starts_with('-') {
            operands.push(a.clone());
            continue;
        }
        if a == "--" {
            options = false;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "in-place" => in_place = true,
                "expression" | "file" => {
                    let script = value.map(ToString::to_string).or_else(|| args.get(i).cloned());
                    scripts.push(script.filter(|_| name == "expression"));
                    i += usize::from(value.is_none());
                }
                "line-length" => i += usize::from(value.is_none()),
                _ => {}
            }
            continue;
        }
        let flags = &a[1..];
        for (k, c) in flags.char_indices() {
            let last = k + c.len_utf8() == flags.len();
            match c {
                // GNU takes the rest of the word as the backup suffix; BSD the next word, which
                // a script never is: empty or like `.bak`.
                'i' | 'I' => {
                    in_place = true;
                    if last && args.get(i).is_some_and(|n| is_backup_suffix(n)) {
                        i += 1;
                    }
                    break;
                }
                'e' | 'f' => {
                    let script = if last { args.get(i).cloned() } else { Some(flags[k + 1..].to_string()) };
                    scripts.push(script.filter(|_| c == 'e'));
                    i += usize::from(last);
                    break;
                }
                'l' => {
                    i += usize::from(last);
                    break;
                }
                _ => {}
            }
        }
    }
    if scripts.is_empty() && !operands.is_empty() {
        scripts.push(Some(operands.remove(0)));
    }
    in_place.then_some((operands, scripts))
}

/// The replacement texts of a `sed` script made only of substitutions (`s/a/b/g`, one per line
/// or `;`), each replacement literal: no `&`, no backslash, no newline. None for anything else
/// (a delete, an append, a back-reference), whose result the script does not spell out.
fn literal_replacements(script: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for sub in script.split([';', '\n']).map(str::trim).filter(|c| !c.is_empty()) {
        // An address before the command (`232s/a/b/`, `/x/s/a/b/`): a plain line number only.
        let sub = sub.trim_start_matches(|c: char| c.is_ascii_digit());
        let mut chars = sub.chars();
        let (Some('s'), Some(d)) = (chars.next(), chars.next()) else { return None };
        if d.is_alphanumeric() || d == '\\' || d.is_whitespace() {
            return None;
        }
        let body = chars.as_str();
        if body.contains('\\') {
            return None;
        }
        let parts: Vec<&str> = body.split(d).collect();
        let [_, to, flags] = parts.as_slice() else { return None };
        // `e` runs the pattern space, `w` writes a file: more than a substitution.
        if to.contains('&') || !flags.chars().all(|f| f.is_ascii_digit() || matches!(f, 'g' | 'i' | 'I' | 'p' | 'm' | 'M')) {
            return None;
        }
        out.push((*to).to_string());
    }
    (!out.is_empty()).then_some(out)
}

/// A `sed` script of substitutions that each only swap `'` and `"`, character for character
/// (`s/"%s"/'%s'/g`; not `s/'None'/None/`, which makes a string a value): in Python and
/// JavaScript, which most SWE tasks are, a change of quoting style, not of behaviour.
fn swaps_quotes(script: &str) -> bool {
    let subs: Vec<&str> = script.split([';', '\n']).map(str::trim).filter(|c| !c.is_empty()).collect();
    !subs.is_empty()
        && subs.iter().all(|sub| {
            let mut chars = sub.chars();
            let (Some('s'), Some(d)) = (chars.next(), chars.next()) else { return false };
            if d.is_alphanumeric() || d == '\\' || d.is_whitespace() {
                return false;
            }
            let parts: Vec<&str> = chars.as_str().split(d).collect();
            let swapped = |a: &str, b: &str| {
                a != b
                    && a.chars().count() == b.chars().count()
                    && a.chars().zip(b.chars()).all(|(x, y)| x == y || (matches!(x, '\'' | '"') && matches!(y, '\'' | '"')))
            };
            matches!(parts.as_slice(), [from, to, flags] if swapped(from, to) && flags.chars().all(|f| f.is_ascii_alphanumeric()))
        })
}

/// A command that starts by going out of the workspace (`cd /var/tmp/t && rm -f out.dot`) and
/// goes nowhere else writes its relative names there.
fn settle_cd(command: &str, fx: &mut ShellEffects) {
    let Some(rest) = command.trim_start().strip_prefix("cd ") else { return };
    let Some(end) = rest.find(['&', ';', '\n']) else { return };
    let dir = unquote(rest[..end].trim());
    if !outside_workspace(&dir) || rest[end..].contains("cd ") {
        return;
    }
    for w in fx.writes.iter_mut().chain(fx.deletes.iter_mut()).filter(|w| !w.starts_with(['/', '(', '~', '$'])) {
        *w = format!("{dir}/{w}");
    }
}

/// A command that stashes its changes and pops them again (to compare a test run on the
/// original code) leaves the tree as it was, if it ran to its end: neither an undo nor a change.
fn settle_stash(fx: &mut ShellEffects) {
    let pushes = fx.reverts.iter().filter(|r| *r == "*").count();
    fx.stash_round_trip = fx.stash_depth <= 0 && pushes > 0 && fx.writes.iter().any(|w| w == "(git stash)");
}

impl ShellEffects {
    /// Drops a stash and its pop from one command that ran to its end: the pop ran, and the tree
    /// is as it was. A command that failed may have stopped before its pop (`git stash && pytest
    /// && git stash pop` with failing tests leaves the tree stashed), so its stash stands.
    pub fn settle_round_trip(&mut self, ran_to_end: bool) {
        if self.stash_round_trip && ran_to_end {
            let mut popped = 0;
            self.reverts.retain(|r| {
                r != "*" || {
                    popped += 1;
                    popped > 1
                }
            });
            self.writes.retain(|w| w != "(git stash)");
        }
        self.stash_round_trip = false;
    }
}

/// The patterns of a `sed` script that only deletes the lines matching them (`/DEBUG:/d`,
/// `/print(f"x=/d; /pdb/d`); None for anything else. Patterns without regex syntax only, read
/// as the text they match.
fn deletes_lines(script: &str) -> Option<Vec<String>> {
    let mut pats = Vec::new();
    for cmd in script.split([';', '\n']).map(str::trim).filter(|c| !c.is_empty()) {
        let body = cmd.strip_prefix('/')?.strip_suffix("/d")?;
        if body.is_empty() || body.contains('/') && !body.contains("\\/") {
            return None;
        }
        let text =
            body.replace("\\/", "/").replace("\\(", "(").replace("\\)", ")").replace("\\.", ".").replace("\\[", "[").replace("\\]", "]");
        if text.contains(['*', '^', '$', '\\']) {
            return None;
        }
        pats.push(text);
    }
    (!pats.is_empty()).then_some(pats)
}

/// Files only restyled or pruned that nothing else in the command wrote are writes too; one
/// written otherwise as well was changed.
fn settle_restyled(fx: &mut ShellEffects) {
    if fx.pruned.iter().any(|r| fx.writes.contains(r) || fx.restyled.contains(r)) {
        fx.writes.append(&mut fx.pruned);
        fx.pruned_by.clear();
    }
    fx.restyled.retain(|r| !fx.writes.contains(r));
    fx.restyled.dedup();
    fx.pruned.dedup();
    fx.writes.extend(fx.pruned.iter().cloned());
    fx.writes.extend(fx.restyled.iter().cloned());
}

fn is_backup_suffix(word: &str) -> bool {
    word.is_empty()
        || (word.len() <= 12 && word.starts_with('.') && word[1..].chars().all(|c| c.is_ascii_alphanumeric() || "_~.-".contains(c)))
}

/// `perl`'s files when it edits in place (`-i[SUFFIX]`, bundled as in `-pi`, `-0pi`, `-i.bak`);
/// None when it does not. Switches end at the first word that is not one; without `-e` that
/// word is the program file.
fn perl_in_place(args: &[String]) -> Option<Vec<String>> {
    let (mut in_place, mut code_given) = (false, false);
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        i += 1;
        let flags: Vec<char> = a[1..].chars().collect();
        let mut k = 0;
        while let Some(&c) = flags.get(k) {
            k += 1;
            match c {
                'i' => {
                    in_place = true;
                    break;
                }
                'e' | 'E' => {
                    code_given = true;
                    i += usize::from(k == flags.len());
                    break;
                }
                // Switches with a number: -0777, -0x1ff, -l0, -C7.
                '0' | 'l' | 'C' => {
                    while flags.get(k).is_some_and(|d| d.is_ascii_hexdigit() || *d == 'x') {
                        k += 1;
                    }
                }
                // Switches whose value is the rest of the word.
                'I' | 'M' | 'm' | 'F' | 'x' | 'd' | 'D' | 'V' => break,
                _ => {}
            }
        }
    }
    let operands = args.get(i..).unwrap_or_default();
    in_place.then(|| operands.iter().skip(usize::from(!code_given)).cloned().collect())
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
    use super::{analyse, analyse_in, local_url, may_name_a_writer, python_writes};

    /// A server's configuration test and a request to this machine are checks; a remote fetch
    /// is not.
    #[test]
    fn configuration_tests_and_local_requests_are_checks() {
        for cmd in [
            "nginx -t",
            "sshd -t",
            "apachectl configtest",
            "haproxy -c -f /etc/haproxy/haproxy.cfg",
            "visudo -c",
            "curl -s http://localhost:8080/",
            "curl -I 127.0.0.1:5000/health",
            "wget -qO- http://[::1]:9000/x",
            "curl -u a:b http://user@localhost/",
        ] {
            assert!(analyse(cmd).verification.is_some(), "{cmd}");
        }
        for cmd in ["nginx", "curl -s https://example.com/a", "curl -o out.html http://localhost.example.com/", "wget http://10.0.0.5/x"] {
            assert!(analyse(cmd).verification.is_none(), "{cmd}");
        }
        assert!(local_url("localhost:8080") && !local_url("http://localhostx/"));
    }

    #[test]
    fn the_prefilter_lets_through_every_call_python_writes_reads() {
        let calls = [
            "open('a', 'w')",
            "open(file='a', mode=\"a+\")",
            "f = open('a', '''wb''')",
            "import io\nio.open('a', 'w')",
            "import codecs\ncodecs.open('a', 'w')",
            "import gzip\ngzip.open('a', 'wb')",
            "import os\nos.open('a', os.O_WRONLY)",
            "import os\nos.remove('a')",
            "import os\nos.unlink('a')",
            "import os\nos.rmdir('a')",
            "import os\nos.removedirs('a')",
            "import os\nos.mkdir('a')",
            "import os\nos.makedirs('a')",
            "import os\nos.truncate('a', 0)",
            "import os\nos.rename('b', 'a')",
            "import os\nos.replace('b', 'a')",
            "import os\nos.renames('b', 'a')",
            "import os\nos.symlink('b', 'a')",
            "import os\nos.link('b', 'a')",
            "import shutil\nshutil.copy('b', 'a')",
            "import shutil\nshutil.copy2('b', 'a')",
            "import shutil\nshutil.copyfile('b', 'a')",
            "import shutil\nshutil.copytree('b', 'a')",
            "import shutil\nshutil.move('b', 'a')",
            "import shutil\nshutil.copymode('b', 'a')",
            "import shutil\nshutil.copystat('b', 'a')",
            "import shutil\nshutil.rmtree('a')",
            "import fileinput\nfileinput.input('a', inplace=True)",
            "import fileinput\nfileinput.FileInput('a', inplace=True)",
            "Path('a').write_text('x')",
            "Path('a').write_bytes(b'x')",
            "Path('a').touch()",
            "Path('a').symlink_to('b')",
            "Path('a').hardlink_to('b')",
            "Path('a').open('w')",
            "Path('a').unlink()",
            "Path('a').mkdir()",
            "Path('a').rmdir()",
            "Path('b').rename('a')",
            "Path('b').replace('a')",
        ];
        for call in calls {
            let code = format!("from pathlib import Path\n{call}\n");
            assert!(may_name_a_writer(&code), "{call}");
            assert_eq!(python_writes(&code), vec!["a".to_string()], "{call}");
        }
        // What most reproduction scripts look like: nothing to parse.
        for script in [
            "from sympy import symbols, simplify\nx = symbols('x')\nprint(simplify(x**2 - x*x))\n",
            "import json\nwith open('data.json') as f:\n    print(json.load(f))\n",
            "import os\nprint(os.getcwd(), open(os.path.join('src', 'setup.cfg'), 'r').read())\n",
        ] {
            assert!(!may_name_a_writer(script), "{script}");
            assert!(python_writes(script).is_empty());
        }
    }

    #[test]
    fn a_workdir_in_tmp_is_the_workspace() {
        let w = |c: &str, d: Option<&str>| analyse_in(c, d).writes;
        assert!(w("chmod +x /tmp/tmp74wiyiny/hello.sh", None).is_empty());
        assert_eq!(w("chmod +x /tmp/tmp74wiyiny/hello.sh", Some("/tmp/tmp74wiyiny")), ["/tmp/tmp74wiyiny/hello.sh"]);
        assert_eq!(w("chmod +x /tmp/tmp74wiyiny/hello.sh", Some("/tmp/tmp74wiyiny/")), ["/tmp/tmp74wiyiny/hello.sh"]);
        assert!(w("cp x /tmp/tmp74wiyinyz/y", Some("/tmp/tmp74wiyiny")).is_empty(), "a sibling directory is still scratch");
        assert!(w("cat a > /tmp/scratch.txt", Some("/tmp/tmp74wiyiny")).is_empty());
    }

    fn writes(c: &str) -> Vec<String> {
        analyse(c).writes
    }

    #[test]
    fn a_sed_of_literal_substitutions_says_what_it_put_in() {
        let fx = analyse("sed -i '232s/\"a\", \"b\"/\"c\", \"b\"/; s/x = 1/x = 2/g' pkg/m.py");
        assert_eq!(fx.writes, ["pkg/m.py"]);
        assert_eq!(fx.put_in, Some(vec!["\"c\", \"b\"".to_string(), "x = 2".to_string()]));
        for unknown in [
            "sed -i 's/x/&y/' m.py",
            "sed -i 's/x/a\\nb/' m.py",
            "sed -i '/x/d' m.py",
            "sed -i '3a foo' m.py",
            "sed -i -f fix.sed m.py",
            "sed -i 's/x/y/w out.txt' m.py",
            "sed -i '/x/d' m.py && sed -i 's/a/b/' m.py",
            "echo z >> m.py && sed -i 's/a/b/' m.py",
        ] {
            let fx = analyse(unknown);
            assert!(fx.put_in.is_none() && fx.writes.iter().any(|w| w == "m.py"), "{unknown}: {fx:?}");
        }
    }

    /// `echo "$("$("$(…)")")"` nested to the 64 KiB bound: each command reads its arguments'
    /// whole text, so without a bound on the commands read this took seconds per command line.
    #[test]
    fn deeply_nested_substitutions_are_read_in_bounded_work() {
        let depth = 8_000;
        let cmd = format!("echo {}x{} > out.txt", "\"$(".repeat(depth), ")\"".repeat(depth));
        let fx = analyse(&cmd);
        assert!(fx.partial, "the rest of the line is reported as not read");
        assert!(fx.writes.is_empty() || fx.writes == ["out.txt"], "{:?}", fx.writes);
    }

    /// `Path(Path(…('a.py')…))` nested far deeper than a thread's stack allows recursion; on a
    /// 256 KiB stack a recursive walk overflows and aborts the process.
    #[test]
    fn deeply_nested_python_paths_do_not_overflow_the_stack() {
        let depth = 5_000;
        let cmd =
            format!("python3 -c \"from pathlib import Path; {}'deep.py'{}.write_text('x')\"", "Path(".repeat(depth), ")".repeat(depth));
        let got = std::thread::Builder::new().stack_size(256 << 10).spawn(move || analyse(&cmd).writes).unwrap().join();
        let writes = got.expect("no stack overflow");
        assert!(writes.is_empty() || writes == ["deep.py"], "{writes:?}");
    }

    #[test]
    fn redirections_and_heredocs_write_files() {
        assert_eq!(writes("echo hi > out.txt"), ["out.txt"]);
        assert_eq!(writes("printf 'x' >> log/a.log 2>&1"), ["log/a.log"]);
        assert_eq!(writes("cat <<'EOF' > src/app.py\nprint(1)\nEOF"), ["src/app.py"]);
        assert!(writes("ls -la 2>/dev/null").is_empty());
        assert!(writes("grep -r foo . > /dev/null").is_empty());
    }

    /// A model's `\\n` written outside quotes is a letter to the shell: the redirect names
    /// another file, so the write the agent meant never lands; quoted, it is only content.
    #[test]
    fn a_leaked_escape_in_a_redirect_target_misfires() {
        let fx = analyse("echo 'def f():\\n    return 1' > cli.py\\n");
        assert!(fx.writes.is_empty(), "{:?}", fx.writes);
        assert_eq!(fx.misfired, ["cli.py\\n"]);
        // A log sent to /tmp is no deliverable, mangled or not.
        assert!(analyse("pytest -q > /tmp/log.txt\\n").misfired.is_empty());
        let fx = analyse("printf 'a\\nb' > out.txt");
        assert_eq!(fx.writes, ["out.txt"]);
        assert!(fx.misfired.is_empty());
        assert_eq!(analyse("echo x > 'odd\\name'").writes, ["odd\\name"]);
        // Outside quotes a backslash is removed and keeps the next character.
        assert_eq!(writes("echo x > my\\ notes.txt"), ["my notes.txt"]);
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
    fn writes_outside_the_workspace_are_not_changes() {
        assert!(writes("cat src/x.py > /tmp/backup.py").is_empty());
        assert!(writes("echo x >> /var/tmp/run.log 2>&1").is_empty());
        assert!(writes("cp src/x.py /tmp/x.py.orig").is_empty());
        assert!(writes("echo x | tee /tmp/notes.md").is_empty());
        assert!(writes("sed -i 's/a/b/' /tmp/scratch.py").is_empty());
        // Into the workspace from outside is a change; so is moving a file out of it.
        assert_eq!(writes("cp /tmp/x.py.orig src/x.py"), ["src/x.py"]);
        assert_eq!(writes("mv src/old.py /tmp/"), ["src/old.py"]);
        assert_eq!(writes("echo x > tmp/out.txt"), ["tmp/out.txt"]);
    }

    #[test]
    fn git_output_saved_as_a_patch_is_not_a_change() {
        assert!(writes("git diff > patch.txt && cat patch.txt").is_empty());
        assert!(writes("cd /repo && git --no-pager diff HEAD > model.patch").is_empty());
        assert!(writes("git -C repo diff --cached >> changes.diff").is_empty());
        assert!(writes("git format-patch -1 --stdout > fix.patch").is_empty());
        assert!(writes("git show HEAD > last.diff; git log -p -1 > log.patch").is_empty());
        // A source file written from git, other producers and other targets still count.
        assert_eq!(writes("git show HEAD:src/x.py > src/x.py"), ["src/x.py"]);
        assert_eq!(writes("git diff > src/x.py"), ["src/x.py"]);
        assert_eq!(writes("git log > history.txt"), ["history.txt"]);
        assert_eq!(writes("echo x > patch.txt"), ["patch.txt"]);
    }

    #[test]
    fn inline_python_that_opens_files_for_writing_changes_them() {
        let heredoc =
            "python3 - <<'EOF'\nimport re\ns = open('src/calc.py').read()\nopen('src/calc.py', 'w').write(s.replace('+', '-'))\nEOF";
        assert_eq!(writes(heredoc), ["src/calc.py"]);
        assert_eq!(writes("python - <<EOF\nfrom pathlib import Path\nPath(\"src/calc.py\").write_text('x')\nEOF"), ["src/calc.py"]);
        assert_eq!(writes("python3 <<'PY'\np = 'src/a.py'\nwith open(p, mode='a') as f:\n    f.write('x')\nPY"), ["src/a.py"]);
        assert_eq!(writes("cat <<'EOF' | python3\nimport json\nwith open(cfg_path(), 'w') as f:\n    json.dump({}, f)\nEOF"), ["(python)"]);
        assert_eq!(writes(r#"python -c "open(\"a.txt\", \"x\").write('1')""#), ["a.txt"]);
        assert_eq!(writes("python3 -c \"from pathlib import Path; Path('b.py').write_bytes(b'')\""), ["b.py"]);
        // A script written by a here-doc and run in the same command.
        assert_eq!(writes("cat > /tmp/fix.py <<'EOF'\nopen('src/m.py', 'w').write('')\nEOF\npython3 /tmp/fix.py"), ["src/m.py"]);
        assert_eq!(writes("python3 -c \"import shutil; shutil.copy('a.py', 'b.py')\""), ["b.py"]);
        assert_eq!(writes("python3 -c \"import os; os.remove('old.py')\""), ["old.py"]);
        assert_eq!(writes("python3 -c \"from pathlib import Path; f = Path('p.txt').open('a')\""), ["p.txt"]);
        assert_eq!(writes("python3 <<< \"open('h.py', 'w')\""), ["h.py"]);
        assert_eq!(writes("bash <<'EOF'\nsed -i 's/a/b/' m.py\nEOF"), ["m.py"]);
        assert!(writes("python3 -c \"import gzip; gzip.open('a.gz').read(); 'ab'.replace('a', 'b')\"").is_empty());
        // A name bound to a string is a string: its `replace` is str.replace, not Path.replace.
        assert!(writes("python3 -c \"s = 'src/a.py'; print(s.replace('a', 'b'))\"").is_empty());
        assert_eq!(writes("python3 -c \"from pathlib import Path; p = Path('a.py'); p.replace('b.py')\""), ["b.py"]);
        assert_eq!(writes("python3 -c \"import os; p = 'a.py'; os.replace(p, 'b.py'); open(p, 'w')\""), ["b.py", "a.py"]);
        // Reading is not writing, nor is a string that mentions open; a here-doc saved to a
        // file is content, not code that runs.
        assert!(writes("python3 - <<'EOF'\nprint(open('src/calc.py').read())\nEOF").is_empty());
        assert!(writes("python3 -c \"print('open(x, w)')\"").is_empty());
        assert_eq!(writes("cat <<'EOF' > gen.py\nopen('src/m.py', 'w')\nEOF"), ["gen.py"]);
    }

    #[test]
    fn perl_and_sed_in_place_edit_their_file_operands() {
        assert_eq!(writes("perl -0pi -e 's/a/b/' src/calc.py"), ["src/calc.py"]);
        assert_eq!(writes("perl -i -pe 's/a/b/' src/calc.py"), ["src/calc.py"]);
        assert_eq!(writes("perl -pi.bak -e 's/a/b/g' a.py b.py"), ["a.py", "b.py"]);
        assert_eq!(writes("perl -i -0777 -pe 's/a/b/' -- x.py"), ["x.py"]);
        assert_eq!(writes("perl -i fix.pl src/a.py"), ["src/a.py"]);
        assert!(writes("perl -ne 'print if /x/' src/calc.py").is_empty());
        assert!(writes("perl -pe 's/a/b/' src/calc.py").is_empty());
        assert_eq!(writes("sed -i '' 's/a/b/' src/calc.py"), ["src/calc.py"]);
        assert_eq!(writes("sed -i '' -e 's/a/b/' src/calc.py"), ["src/calc.py"]);
        assert_eq!(writes("sed -i .orig 's/a/b/' src/calc.py"), ["src/calc.py"]);
        assert_eq!(writes("sed -E -i 's/a/b/' src/calc.py"), ["src/calc.py"]);
        assert_eq!(writes("sed -ni 's/a/b/p' src/calc.py"), ["src/calc.py"]);
        assert_eq!(writes("sed --in-place=.bak --expression='s/a/b/' src/calc.py"), ["src/calc.py"]);
        assert_eq!(writes("sed -i -f fix.sed src/calc.py"), ["src/calc.py"]);
        assert_eq!(writes("sed -i"), ["(sed -i)"]);
    }

    #[test]
    fn a_sed_that_only_deletes_lines_prunes_its_file() {
        let fx = analyse("sed -i '/print(f\"DEBUG:/d; /pdb.set_trace()/d' src/m.py");
        assert_eq!(fx.writes, ["src/m.py"]);
        assert_eq!(fx.pruned, ["src/m.py"]);
        assert_eq!(fx.pruned_by, ["print(f\"DEBUG:", "pdb.set_trace()"]);
        plain_edits_of(
            "src/m.py",
            &[
                "sed -i '/^x/d' src/m.py",
                "sed -i '3d' src/m.py",
                "sed -i '/a/d; s/x/y/' src/m.py",
                "sed -i '/a/d' src/m.py && echo 1 >> src/m.py",
            ],
        );
    }

    /// Each command writes `file` as a plain change: neither restyled nor pruned.
    fn plain_edits_of(file: &str, commands: &[&str]) {
        for c in commands {
            let fx = analyse(c);
            assert_eq!(fx.writes, [file], "{c}");
            assert!(fx.restyled.is_empty() && fx.pruned.is_empty() && fx.pruned_by.is_empty(), "{c}");
        }
    }

    #[test]
    fn relative_writes_after_a_cd_out_of_the_workspace_are_outside_it() {
        assert!(writes("cd /var/tmp/pyreverse_test && rm -f classes.dot").is_empty());
        assert!(writes("cd /tmp/t && python gen.py > out.txt").is_empty());
        // Gone elsewhere again: where each name lands is not followed.
        assert_eq!(writes("cd /tmp/t && rm a.txt; cd /repo && rm b.py"), ["b.py", "a.txt"]);
        assert_eq!(writes("cd src && sed -i 's/a/b/' m.py"), ["m.py"]);
    }

    #[test]
    fn a_stash_popped_again_in_a_command_that_ran_to_its_end_undoes_nothing() {
        let fx = analyse("git stash && python -m pytest tests/test_x.py -q && git stash pop");
        assert!(fx.stash_round_trip);
        let mut ran = fx.clone();
        ran.settle_round_trip(true);
        assert!(ran.reverts.is_empty(), "{:?}", ran.reverts);
        assert!(ran.writes.is_empty(), "{:?}", ran.writes);
        // The tests failed, so `&&` never reached the pop: the tree stays stashed.
        let mut failed = fx;
        failed.settle_round_trip(false);
        assert_eq!(failed.reverts, ["*"]);
        assert_eq!(analyse("git stash").reverts, ["*"]);
        assert_eq!(analyse("git stash pop").writes, ["(git stash)"]);
    }

    #[test]
    fn an_edit_that_only_swaps_quote_characters_restyles_its_file() {
        let fx = analyse("sed -i \"s/\\\"%s__pk\\\"/'%s__pk'/\" a/filters.py\nsed -i -e \"s/{'x': 1}/{\\\"x\\\": 1}/g\" a/filters.py");
        assert_eq!(fx.writes, ["a/filters.py"]);
        assert_eq!(fx.restyled, ["a/filters.py"]);
        // Anything else in the script, or another edit of the file, is a change.
        plain_edits_of(
            "f.py",
            &[
                "sed -i \"s/'a'/'b'/\" f.py",
                "sed -i \"s/'a'/\\\"a\\\"/; s/x/y/\" f.py",
                "sed -i 's/  x/x/' f.py",
                "sed -i -f fix.sed f.py",
                "sed -i \"s/'a'/\\\"a\\\"/\" f.py && echo 1 >> f.py",
                "sed -i 's/\\/a/\\/b/' f.py",
                "sed -i \"s/return 'None'/return None/\" f.py",
                "sed -i 's/\"%s\"/%s/g' f.py",
            ],
        );
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

#[cfg(test)]
mod change_kinds {
    use super::*;

    #[test]
    fn deletions_reverts_and_runs() {
        let fx = analyse("rm -f reproduce.py check.py && git checkout -- src/a.py");
        assert_eq!(fx.deletes, vec!["reproduce.py", "check.py"]);
        assert_eq!(fx.reverts, vec!["src/a.py"]);
        assert_eq!(analyse("git stash").reverts, vec!["*"]);
        assert!(analyse("git stash pop").reverts.is_empty());
        assert_eq!(analyse("git reset --hard HEAD").reverts, vec!["*"]);
        assert_eq!(analyse("git checkout .").reverts, vec!["*"]);
        assert!(analyse("git checkout -b fix").reverts.is_empty());
        assert_eq!(analyse("mv src/a.py.bak src/a.py").reverts, vec!["src/a.py"]);
        assert!(analyse("mv a.py b.py").reverts.is_empty());
        assert_eq!(analyse("cd /testbed && python reproduce_issue.py").runs, vec!["reproduce_issue.py"]);
        assert_eq!(analyse("python -c 'import x; print(x.f())'").runs, vec!["-"]);
        assert_eq!(analyse("python3 - <<'EOF'\nimport x\nEOF").runs, vec!["-"]);
    }
}

/// The lines `simple_command` splits are read as tree-sitter reads them: the same effects, in
/// the same order, on generated lines of the words and operators real agents use.
#[cfg(test)]
mod simple_lines_read_as_the_parser_reads_them {
    use super::{ShellEffects, analyse_into, literal_heredocs, parse_tree, parse_whole};

    const NAMES: &[&str] = &[
        "ls",
        "cat",
        "sed",
        "rm",
        "git",
        "python",
        "python3",
        "/usr/bin/python3",
        "pytest",
        "cp",
        "mv",
        "tee",
        "touch",
        "mkdir",
        "chmod",
        "timeout",
        "env",
        "bash",
        "sh",
        "npm",
        "cargo",
        "make",
        "go",
        "grep",
        "echo",
        "cd",
        "xargs",
        "uv",
        "patch",
        "dd",
        "sqlite3",
        "tar",
        "unzip",
        "pip",
        "perl",
        "./run_tests.sh",
        "'python'",
        "rsync",
        "truncate",
        "git",
        "diff",
        "node",
        "poetry",
        "npx",
        "tox",
    ];
    const ARGS: &[&str] = &[
        "-i",
        "-n",
        "-la",
        "'1,20p'",
        "\"s/a/b/\"",
        "'s/x/y/g'",
        "src/a.py",
        "tests/test_a.py",
        "-c",
        "'import os; os.remove(\"a\")'",
        "\"print(1)\"",
        "--",
        ".",
        "HEAD",
        "checkout",
        "stash",
        "pop",
        "apply",
        "diff",
        "test",
        "run",
        "install",
        "x.py",
        "of=out.bin",
        "*.py",
        "a?c",
        "~/x",
        "a=b",
        "--opt=1",
        "60",
        "1.5s",
        "-m",
        "pytest",
        "unittest",
        "\"a b\"",
        "'c d'e",
        "%s",
        "^x",
        "@x",
        "+x",
        "a:b",
        "a,b",
        "restore",
        "reset",
        "--hard",
        "-e",
        "'writeFile(1)'",
        "-a",
        "-f",
        "reproduce.py",
        "a.py.bak",
        "a.py",
        "/tmp/x",
        "\"insert into t values (1)\"",
        "-x",
        "xf",
        "f.tar",
        "-p",
        "755",
        "commit",
        "-am",
        "\"msg\"",
        "show",
        "log",
        "--stat",
        "''",
        "\"\"",
    ];
    const OPS: &[&str] = &[" && ", " || ", " | ", "; ", "\n", ";", "&&", "|", " ;\n"];

    /// A seeded xorshift: `next(n)` draws in `0..n`, the same sequence on every run.
    fn xorshift(mut state: u64) -> impl FnMut(usize) -> usize {
        move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % n as u64).unwrap_or(0)
        }
    }

    /// `line` read with its here-doc bodies taken out gives the whole parse's effects.
    fn read_alike(line: &str) {
        let (mut fast, mut whole) = (ShellEffects::default(), ShellEffects::default());
        parse_tree(line, &mut fast, 0);
        parse_whole(line, &mut whole, 0);
        assert_eq!(fast, whole, "{line:?}");
    }

    #[test]
    fn generated_lines() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut read = 0;
        for _ in 0..20_000 {
            let mut line = String::new();
            for c in 0..1 + next(4) {
                if c > 0 {
                    line.push_str(OPS[next(OPS.len())]);
                }
                line.push_str(NAMES[next(NAMES.len())]);
                for _ in 0..next(5) {
                    line.push(' ');
                    line.push_str(ARGS[next(ARGS.len())]);
                }
            }
            if super::super::simple_command::split(&line).is_none() {
                continue;
            }
            read += 1;
            let (mut fast, mut tree) = (ShellEffects::default(), ShellEffects::default());
            analyse_into(&line, &mut fast, 0);
            parse_tree(&line, &mut tree, 0);
            assert_eq!(fast, tree, "{line:?}");
        }
        assert!(read > 15_000, "{read} lines read without the parser");
    }

    /// Here-docs with a quoted delimiter, parsed with their bodies taken out, give what the
    /// whole line gives: bodies that write, run, expand or look like delimiters, lines before
    /// and after, and operators the fast path leaves to the whole parse.
    #[test]
    fn heredoc_bodies_taken_out_give_the_same_effects() {
        const HEADS: &[&str] = &[
            "cat <<'EOF' > fix.py",
            "cat <<\"EOF\" > src/a.py",
            "cat > fix.py <<'EOF'",
            "cat <<'EOF' >> tests/test_a.py",
            "python3 - <<'EOF'",
            "python <<'PY'",
            "bash <<'EOF'",
            "cat <<'EOF' | python3",
            "tee notes.md <<'EOF'",
            "cd /testbed && cat <<'EOF' > reproduce.py",
            "cat <<EOF > expands.py",
            "cat <<-'EOF' > dash.py",
            "cat <<'A' > a.py; cat <<'B' > b.py",
            "echo \"<<'EOF'\" > x.txt",
            "# cat <<'EOF' > commented.py",
            "bash -c 'cat <<\"EOF\" > q.py",
            "python3 -c \"$(cat <<'EOF'",
            "x=$(python3 - <<'EOF'",
            "git commit -m \"$(cat <<'EOF'",
        ];
        const BODIES: &[&str] = &[
            "import os\nopen('out.txt', 'w').write('x')\n",
            "from pathlib import Path\nPath('src/b.py').write_text(s.replace('a', 'b'))\n",
            "rm -f src/a.py\nsed -i 's/a/b/' src/c.py\n",
            "x = \"$(rm -rf /)\"\necho `touch y`\n",
            "EOF \nstill body\n",
            "  EOF\n",
            "cat <<'INNER' > inner.py\nINNER\n",
            "\n\nprint('blank lines')\n",
            "    indented = 1\nprint(indented)\n",
            "\tx = 1\n",
            "é = 'ü'\nprint(é)\n",
            "a = 1\r\nEOF\r\nb = 2\r\n",
            "print(\"unclosed\n",
            "coroner_heredoc_body_0\n",
            "\\EOFX\nrm -rf d\n",
            "\\\nimport os; os.remove('z.py')\n",
        ];
        const ENDS: &[&str] = &[
            "EOF\n",
            "EOF",
            "PY\n",
            "A\nB\n",
            "EOF\npython3 fix.py\n",
            "EOF\npytest tests -q && git diff\n",
            "EOF\n'\n",
            "EOF\n)\n",
            "EOF\n)\"\n",
            "",
        ];
        let mut checked = 0;
        for head in HEADS {
            for body in BODIES {
                for end in ENDS {
                    let line = format!("{head}\n{body}{end}");
                    read_alike(&line);
                    checked += usize::from(literal_heredocs(&line).is_some());
                }
            }
        }
        assert!(checked > 200, "only {checked} lines had a body taken out");
    }

    /// Generated here-doc lines (pieces of commands, quotes, escapes, expansions and delimiters
    /// in random order around a head and a delimiter line) read through the fast path give the
    /// whole parse's effects, but where a body line starts with the delimiter (the parser's
    /// quirk, below).
    #[test]
    fn random_heredoc_lines_read_as_the_whole_parse_reads_them() {
        const PIECES: &[&str] = &[
            "cat ",
            " > f.py",
            " >> g.py",
            "python3 - ",
            "$(",
            ")",
            "`",
            "'",
            "\"",
            "open('a.py','w').write('x')",
            "é",
            "\t",
            "x = 1",
            "&& pytest",
            "; rm b.py",
            "| python3",
            "bash -c ",
            "# c ",
            "\\",
            "sed -i s/a/b/ c.py",
            "<<<",
            "  ",
            "EOFX",
            "$HOME",
            "${x}",
            "rm -rf d",
            "print(1)",
            "import os; os.remove('z.py')",
            "{",
            "}",
            "<",
            ">",
            "EOF",
            "PY",
            "\r",
            "\\n",
            "\\\\",
        ];
        const HEADS: &[&str] = &[
            "cat <<'EOF' > f.py",
            "cat > f.py <<'EOF'",
            "python3 - <<'EOF'",
            "cat <<\"PY\" | python3",
            "bash <<'EOF'",
            "tee a.sh <<'EOF'",
            "cd /w && cat <<'EOF' >> t.py",
        ];
        let mut next = xorshift(0x2234_5678_9abc_def1);
        let mut fast_path = 0;
        for _ in 0..5_000 {
            let head = HEADS[next(HEADS.len())];
            let delim = if head.contains("PY") { "PY" } else { "EOF" };
            let mut line = String::new();
            for _ in 0..next(3) {
                line.push_str(PIECES[next(PIECES.len())]);
            }
            line.push_str(head);
            line.push('\n');
            for _ in 0..1 + next(5) {
                for _ in 0..1 + next(4) {
                    line.push_str(PIECES[next(PIECES.len())]);
                }
                line.push('\n');
            }
            line.push_str(delim);
            if next(3) > 0 {
                line.push('\n');
            }
            for _ in 0..next(4) {
                line.push_str(PIECES[next(PIECES.len())]);
            }
            let Some((_, bodies)) = literal_heredocs(&line) else { continue };
            fast_path += 1;
            if bodies.iter().any(|(_, b)| b.lines().any(|l| l.trim_start().starts_with(delim))) {
                continue;
            }
            read_alike(&line);
        }
        assert!(fast_path > 2_000, "only {fast_path} lines went through the fast path");
    }

    /// tree-sitter-bash ends a here-doc at a line that only starts with its delimiter
    /// (`    EOF = "end of input"` in a tokenizer written with `cat <<'EOF'`) and reads the rest
    /// of the file as commands (`-> None:` became a write of `None:` on a real run); bash ends it
    /// only at the delimiter alone, and so does the body taken out.
    #[test]
    fn a_body_line_that_starts_with_the_delimiter_does_not_end_it() {
        let body = "class TokenType:\n    EOF = \"end of input\"\n\ndef parse(s) -> None:\n    pass\n";
        let line = format!("cat <<'EOF' > src/expression.py\n{body}EOF\n");
        let mut fast = ShellEffects::default();
        parse_tree(&line, &mut fast, 0);
        assert_eq!(fast.writes, ["src/expression.py"]);
        assert_eq!(fast.saved, [("src/expression.py".to_string(), body.to_string())]);
        let mut whole = ShellEffects::default();
        parse_whole(&line, &mut whole, 0);
        assert_ne!(whole.saved, fast.saved, "the parser's reading, which this guards against");
    }

    #[test]
    fn written_lines() {
        for line in [
            "rm -f reproduce.py check.py && git checkout -- src/a.py",
            "cd /testbed && python reproduce_issue.py",
            "python -c 'import x; print(x.f())'",
            "timeout 60 pytest tests/test_a.py -q | tail -20",
            "bash -c 'sed -i s/a/b/ f.py && pytest'",
            "git stash && pytest tests/ ; git stash pop",
            "cp a.py.bak a.py; mv x /tmp/y",
            "python3 -m pytest -x tests/test_m.py::test_a -q",
            "npm run test && npx jest",
            "sed -n '1,20p' a.py | grep -n 'def ' | head",
            "git diff\ngit status\n",
            "echo done",
            "\"python3\" setup.py install",
        ] {
            assert!(super::super::simple_command::split(line).is_some(), "{line:?}");
            let (mut fast, mut tree) = (ShellEffects::default(), ShellEffects::default());
            analyse_into(line, &mut fast, 0);
            parse_tree(line, &mut tree, 0);
            assert_eq!(fast, tree, "{line:?}");
        }
    }
}
