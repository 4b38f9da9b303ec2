//! Near misses: a called name that is a declared name spelled with other separators, case or
//! a typo (`developer.shell` for `developer__shell`, `read-file` for `read_file`).
//!
//! A near miss is evidence of its own: the model reached for a real tool and the harness's
//! naming (or a provider's rewriting of it) got in the way.

/// The declared name `called` most probably means, if any.
///
/// First a declared name equal after [`normalize`]; then one whose last segment (after a
/// namespace separator) equals the called name or the other way round; then the closest
/// declared name within a small edit distance of the normalized forms (at most 2, and less
/// than a third of the name's length, so short names need an exact normal form). Ties go to the
/// lexicographically first name, for deterministic output.
#[must_use]
pub fn near_miss<'a>(called: &str, declared: impl Iterator<Item = &'a str> + Clone) -> Option<&'a str> {
    let n = normalize(called);
    if n.is_empty() {
        return None;
    }
    let best = |it: &mut dyn Iterator<Item = &'a str>| it.min();
    if let Some(d) = best(&mut declared.clone().filter(|d| *d != called && normalize(d) == n)) {
        return Some(d);
    }
    let tail = normalize(namespace_tail(called));
    if let Some(d) =
        best(&mut declared.clone().filter(|d| *d != called && (normalize(namespace_tail(d)) == n || (tail != n && tail == normalize(d)))))
    {
        return Some(d);
    }
    let limit = (n.chars().count().saturating_sub(1) / 3).min(2);
    if limit == 0 {
        return None;
    }
    declared
        .filter(|d| *d != called)
        .filter_map(|d| {
            let dist = levenshtein(&n, &normalize(d));
            (dist <= limit).then_some((dist, d))
        })
        .min()
        .map(|(_, d)| d)
}

/// Lower case, with every run of separators (`_ - . : / space`) as one `_`.
#[must_use]
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.' | ':' | '/' | ' ') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('_');
            }
            sep = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The name after its last namespace separator (`__`, `.`, `:`, `/`); a single `_` is part
/// of a name (`read_file`), not a namespace.
fn namespace_tail(name: &str) -> &str {
    ["__", ".", ":", "/"].iter().filter_map(|sep| name.rfind(sep).map(|i| i + sep.len())).max().map_or(name, |i| &name[i..])
}

/// Edit distance over chars (insert, delete, substitute); names are short.
#[must_use]
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLARED: [&str; 5] = ["developer__shell", "read_file", "str_replace_editor", "bash", "developer__text_editor"];

    fn nm(called: &str) -> Option<&'static str> {
        near_miss(called, DECLARED.iter().copied())
    }

    #[test]
    fn separators_and_case() {
        assert_eq!(nm("developer.shell"), Some("developer__shell"));
        assert_eq!(nm("read-file"), Some("read_file"));
        assert_eq!(nm("Read_File"), Some("read_file"));
        assert_eq!(nm("developer:text-editor"), Some("developer__text_editor"));
    }

    #[test]
    fn namespace_dropped_or_added() {
        assert_eq!(nm("shell"), Some("developer__shell"));
        assert_eq!(nm("tools.bash"), Some("bash"));
    }

    #[test]
    fn small_typos_only() {
        assert_eq!(nm("str_replace_edtor"), Some("str_replace_editor"));
        assert_eq!(nm("read_fil"), Some("read_file"));
        assert_eq!(nm("bsh"), None, "short names need an exact normal form");
        assert_eq!(nm("search_web"), None);
        assert_eq!(nm("bash"), None, "a declared name is not its own near miss");
    }

    #[test]
    fn distance() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "ab"), 2);
        assert_eq!(normalize("developer__shell"), normalize("developer.shell"));
    }
}
