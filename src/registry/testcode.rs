//! Whether a registration sits in test code: a Rust `#[cfg(test)]` module or `#[test]`
//! function, a Python `test_*` function, `Test*` class or pytest fixture, a Go `Test*`
//! function, a JavaScript `describe`/`it`/`test` block. Tools registered there are test doubles,
//! not the harness's tools, and counting them would hide real hallucinated calls.

use tree_sitter::Node;

use super::lang::Lang;

/// Walks up from `node` (iteratively: trees from untrusted sources can be deep).
#[must_use]
pub fn in_test_code(node: Node<'_>, lang: Lang, src: &[u8]) -> bool {
    let mut cur = Some(node);
    while let Some(n) = cur {
        let is_test = match lang {
            Lang::Rust => matches!(n.kind(), "mod_item" | "function_item" | "impl_item") && rust_test_attribute(n, src),
            Lang::Python => python_test_scope(n, src),
            Lang::Go => n.kind() == "function_declaration" && name_of(n, src).is_some_and(|s| go_test_name(&s)),
            Lang::TypeScript | Lang::Tsx | Lang::JavaScript => js_test_block(n, src),
            Lang::Yaml => false,
        };
        if is_test {
            return true;
        }
        cur = n.parent();
    }
    false
}

fn text<'a>(n: Node<'_>, src: &'a [u8]) -> &'a str {
    n.utf8_text(src).unwrap_or_default()
}

fn name_of(n: Node<'_>, src: &[u8]) -> Option<String> {
    n.child_by_field_name("name").map(|x| text(x, src).to_string())
}

/// The attributes right before an item: `#[cfg(test)]`, `#[test]`, `#[tokio::test]`, ...
fn rust_test_attribute(item: Node<'_>, src: &[u8]) -> bool {
    let mut prev = item.prev_named_sibling();
    while let Some(p) = prev.filter(|p| p.kind() == "attribute_item") {
        let a: String = text(p, src).chars().filter(|c| !c.is_whitespace()).collect();
        if a.contains("cfg(test)") || a == "#[test]" || a.ends_with("::test]") || a.starts_with("#[rstest") || a.starts_with("#[test_case")
        {
            return true;
        }
        prev = p.prev_named_sibling();
    }
    false
}

fn python_test_scope(n: Node<'_>, src: &[u8]) -> bool {
    match n.kind() {
        "function_definition" => name_of(n, src).is_some_and(|s| s.starts_with("test_") || s == "setUp" || s == "setUpClass"),
        "class_definition" => name_of(n, src).is_some_and(|s| s.starts_with("Test")),
        "decorated_definition" => {
            let mut c = n.walk();
            n.named_children(&mut c).any(|d| d.kind() == "decorator" && text(d, src).contains("fixture"))
        }
        _ => false,
    }
}

fn go_test_name(name: &str) -> bool {
    ["Test", "Benchmark", "Example", "Fuzz"]
        .iter()
        .any(|p| name.strip_prefix(p).is_some_and(|rest| rest.is_empty() || rest.starts_with(|c: char| c.is_uppercase() || c == '_')))
}

fn js_test_block(n: Node<'_>, src: &[u8]) -> bool {
    if n.kind() != "call_expression" {
        return false;
    }
    let callee = n.child_by_field_name("function").map(|f| text(f, src)).unwrap_or_default();
    let head = callee.split('.').next().unwrap_or(callee);
    matches!(head, "describe" | "it" | "test" | "beforeEach" | "beforeAll" | "afterEach" | "afterAll" | "suite")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any_string_in_test(lang: Lang, code: &str, needle: &str) -> bool {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&lang.grammar().unwrap()).unwrap();
        let tree = p.parse(code, None).unwrap();
        let at = code.find(needle).unwrap();
        let node = tree.root_node().descendant_for_byte_range(at, at + needle.len()).unwrap();
        in_test_code(node, lang, code.as_bytes())
    }

    #[test]
    fn rust_test_modules_and_functions() {
        let code = "fn tools() { reg(\"real\"); }\n#[cfg(test)]\nmod tests {\n    fn double() { reg(\"fake\"); }\n}\n#[tokio::test]\nasync fn t() { reg(\"fake2\"); }\n";
        assert!(!any_string_in_test(Lang::Rust, code, "\"real\""));
        assert!(any_string_in_test(Lang::Rust, code, "\"fake\""));
        assert!(any_string_in_test(Lang::Rust, code, "\"fake2\""));
    }

    #[test]
    fn python_go_and_javascript_tests() {
        let py = "TOOLS = [tool('real')]\ndef test_x():\n    tool('fake')\n@pytest.fixture\ndef reg():\n    return tool('fix')\nclass TestTools:\n    X = tool('cls')\n";
        assert!(!any_string_in_test(Lang::Python, py, "'real'"));
        assert!(any_string_in_test(Lang::Python, py, "'fake'"));
        assert!(any_string_in_test(Lang::Python, py, "'fix'"));
        assert!(any_string_in_test(Lang::Python, py, "'cls'"));
        let go = "package x\nfunc Tools() { reg(\"real\") }\nfunc TestTools(t *testing.T) { reg(\"fake\") }\nfunc Testify() { reg(\"real2\") }\n";
        assert!(!any_string_in_test(Lang::Go, go, "\"real\""));
        assert!(any_string_in_test(Lang::Go, go, "\"fake\""));
        assert!(!any_string_in_test(Lang::Go, go, "\"real2\""));
        let js = "const tools = [tool('real')];\ndescribe('x', () => { it('y', () => { tool('fake'); }); });\n";
        assert!(!any_string_in_test(Lang::JavaScript, js, "'real'"));
        assert!(any_string_in_test(Lang::JavaScript, js, "'fake'"));
    }
}
