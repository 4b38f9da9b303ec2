//! Command lines of plain words joined by list operators (`ls -la`,
//! `cd /testbed && python -m pytest tests/test_x.py -q | tail -20`), split without a parser.
//!
//! Three in four distinct commands a real agent runs have this form (11,793 of the 15,442 of a
//! real 500-trajectory SWE-bench run), and a tree-sitter parse costs most for being a parse (a
//! parser reset, a tree of small allocations built and freed), not for its bytes. The words
//! found here are the ones the tree-sitter walk in `shell` reads from such a line, as source
//! slices; a differential test holds the two to the same effects. Anything else (`$`, a
//! redirection, an escape, a keyword, a subshell, a group, a comment, a line continuation,
//! non-ASCII outside quotes) is left to tree-sitter: `None`.

/// Words that make a line more than a list of simple commands when they come first: tree-sitter
/// reads them as statements or declarations, not as a command's name.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in", "function", "select", "coproc",
    "time", "export", "declare", "local", "readonly", "typeset", "unset",
];

/// The simple commands of `line` in source order, each its words as written (quotes kept), or
/// `None` when the line is not only plain words and `;`, `&&`, `||`, `|` and newlines.
#[must_use]
pub fn split(line: &str) -> Option<Vec<Vec<&str>>> {
    let b = line.as_bytes();
    let mut commands: Vec<Vec<&str>> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    // After `&&`, `||` or `|` a command must follow on the same line.
    let mut owed = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' => i += 1,
            b'\n' => {
                if current.is_empty() {
                    if owed {
                        return None;
                    }
                } else {
                    commands.push(std::mem::take(&mut current));
                }
                i += 1;
            }
            b';' | b'&' | b'|' => {
                let op = match (b[i], b.get(i + 1)) {
                    (b'&', Some(b'&')) | (b'|', Some(b'|')) => 2,
                    (b'|', Some(b'&')) | (b'&', _) | (b';', Some(b';' | b'&')) => return None,
                    _ => 1,
                };
                if current.is_empty() {
                    return None;
                }
                commands.push(std::mem::take(&mut current));
                owed = b[i] != b';';
                i += op;
            }
            _ => {
                let start = i;
                while i < b.len() && !matches!(b[i], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|') {
                    match b[i] {
                        b'\'' => i += 1 + line[i + 1..].find('\'')? + 1,
                        b'"' => {
                            let len = line[i + 1..].find('"')?;
                            if line[i + 1..i + 1 + len].bytes().any(|c| matches!(c, b'$' | b'`' | b'\\')) {
                                return None;
                            }
                            i += len + 2;
                        }
                        c if c.is_ascii_alphanumeric() || b"_@%+=:,./~*?^-".contains(&c) => i += 1,
                        _ => return None,
                    }
                }
                let word = &line[start..i];
                if current.is_empty() && (KEYWORDS.contains(&word) || word.contains('=')) {
                    return None;
                }
                current.push(word);
                owed = false;
            }
        }
    }
    if owed {
        return None;
    }
    if !current.is_empty() {
        commands.push(current);
    }
    Some(commands)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn plain_words_and_list_operators_split() {
        assert_eq!(split("ls -la"), Some(vec![vec!["ls", "-la"]]));
        assert_eq!(
            split("cd /testbed && python -m pytest 'tests/a b.py' -q | tail -20"),
            Some(vec![vec!["cd", "/testbed"], vec!["python", "-m", "pytest", "'tests/a b.py'", "-q"], vec!["tail", "-20"]])
        );
        assert_eq!(split("a;b\n\nc || \"d e\"f"), Some(vec![vec!["a"], vec!["b"], vec!["c"], vec!["\"d e\"f"]]));
        assert_eq!(split("grep -n 'x = $1' f.py;"), Some(vec![vec!["grep", "-n", "'x = $1'", "f.py"]]));
        assert_eq!(split(""), Some(vec![]));
    }

    #[test]
    fn anything_more_is_left_to_the_parser() {
        for line in [
            "echo $HOME",
            "echo x > f",
            "cat < f",
            "echo \"a\\\"b\"",
            "echo \"$x\"",
            "ls && ",
            "ls &&\nls",
            "&& ls",
            "sleep 1 &",
            "a |& b",
            "(cd x && ls)",
            "{ ls; }",
            "if true; then ls; fi",
            "X=1 pytest",
            "export X=1",
            "ls # comment",
            "ls \\\n -la",
            "echo 'unterminated",
            "echo [a]",
            "echo café",
            "! ls",
            "ls\r",
            "case x in",
        ] {
            assert_eq!(split(line), None, "{line:?}");
        }
    }
}
