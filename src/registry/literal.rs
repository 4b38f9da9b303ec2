//! String literals across grammars: their value, whether they interpolate, and whether the
//! value can be a tool name.

use tree_sitter::Node;

/// A literal's value; `interpolated` is the byte length of the literal prefix before the first
/// interpolation (`f"mcp__{server}"`, `` `mcp__${s}` ``), `None` for a plain string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrLit {
    pub text: String,
    pub interpolated: Option<usize>,
}

/// Child kinds holding literal text.
const CONTENT: [&str; 4] = ["string_content", "string_fragment", "interpreted_string_literal_content", "raw_string_literal_content"];
/// Child kinds holding an interpolated expression.
const INTERPOLATION: [&str; 3] = ["interpolation", "template_substitution", "format_expression"];

/// The value of a string literal node of any supported grammar (or of a content node).
#[must_use]
pub fn string_value(node: Node, src: &[u8]) -> Option<StrLit> {
    let raw = node.utf8_text(src).ok()?;
    if CONTENT.contains(&node.kind()) {
        return Some(StrLit { text: raw.to_string(), interpolated: None });
    }
    if node.kind() == "concatenated_string" {
        let mut text = String::new();
        let mut interpolated = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let part = string_value(child, src)?;
            if interpolated.is_none() {
                interpolated = part.interpolated.map(|p| text.len() + p);
            }
            text.push_str(&part.text);
        }
        return Some(StrLit { text, interpolated });
    }
    if !matches!(node.kind(), "string" | "string_literal" | "interpreted_string_literal" | "raw_string_literal" | "template_string") {
        return None;
    }
    let mut text = String::new();
    let mut interpolated = None;
    let mut saw_content = false;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let kind = child.kind();
        if CONTENT.contains(&kind) {
            saw_content = true;
            text.push_str(child.utf8_text(src).ok()?);
        } else if kind == "escape_sequence" {
            saw_content = true;
            text.push_str(&unescape(child.utf8_text(src).ok()?));
        } else if INTERPOLATION.contains(&kind) {
            saw_content = true;
            interpolated.get_or_insert(text.len());
            text.push_str(child.utf8_text(src).ok()?);
        }
    }
    if !saw_content {
        // No content children: an empty string, or a grammar that keeps the text inline
        // (Go raw strings).
        text = strip_quotes(raw).to_string();
    }
    Some(StrLit { text, interpolated })
}

/// `"x"`, `'x'`, `` `x` ``, `r#"x"#`, `b"x"` → `x`.
fn strip_quotes(raw: &str) -> &str {
    let s = raw.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let s = s.trim_start_matches('#').trim_end_matches('#');
    for q in ["\"\"\"", "'''", "\"", "'", "`"] {
        if let Some(inner) = s.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

fn unescape(esc: &str) -> String {
    match esc {
        "\\n" => "\n".into(),
        "\\t" => "\t".into(),
        "\\\"" => "\"".into(),
        "\\'" => "'".into(),
        "\\\\" => "\\".into(),
        "\\`" => "`".into(),
        other => other.to_string(),
    }
}

/// Whether a string can be a tool name: what model APIs accept (letters, digits, `_`, `-`,
/// and the `.`/`:` some harnesses use), starting with a letter or `_`, at most 128 bytes.
/// Display names ("Read File") and sentences are not tool names.
#[must_use]
pub fn is_tool_name(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else { return false };
    s.len() <= 128
        && (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
}

/// The fixed prefix of a templated name (`mcp__` of `mcp__{server}__{tool}`), when it is a
/// namespace: a name-like prefix ending in a separator.
#[must_use]
pub fn namespace_prefix(s: &StrLit) -> Option<String> {
    let end = s.interpolated.or_else(|| s.text.find(['{', '%', '$']))?;
    let prefix = &s.text[..end];
    let ends_with_separator = prefix.ends_with("__") || prefix.ends_with('.') || prefix.ends_with(':');
    (is_tool_name(prefix) && ends_with_separator).then(|| prefix.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_prefixes() {
        assert_eq!(strip_quotes("r#\"bash\"#"), "bash");
        assert_eq!(strip_quotes("`read_file`"), "read_file");
        assert_eq!(strip_quotes("'''x'''"), "x");
        assert_eq!(strip_quotes("\"\""), "");
    }

    #[test]
    fn names() {
        assert!(is_tool_name("str_replace_based_edit_tool"));
        assert!(is_tool_name("developer__shell"));
        assert!(is_tool_name("Bash"));
        assert!(!is_tool_name("Read File"));
        assert!(!is_tool_name("read {path}"));
        assert!(!is_tool_name(""));
        assert!(!is_tool_name("1st"));
    }

    #[test]
    fn namespaces() {
        let s = StrLit { text: "mcp__{}__{}".into(), interpolated: None };
        assert_eq!(namespace_prefix(&s).as_deref(), Some("mcp__"));
        let s = StrLit { text: "{}__{}".into(), interpolated: None };
        assert_eq!(namespace_prefix(&s), None);
        let s = StrLit { text: "mcp__${server}".into(), interpolated: Some(5) };
        assert_eq!(namespace_prefix(&s).as_deref(), Some("mcp__"));
    }
}
