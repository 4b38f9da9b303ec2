//! The languages the extractor reads: file extensions, tree-sitter grammars and the built-in
//! query file of each, in one table so adding a language touches one place.

use std::path::Path;

use tree_sitter::Language;

/// A source language the registry extractor parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lang {
    Go,
    Python,
    Rust,
    TypeScript,
    /// TypeScript with JSX: its own grammar, but the TypeScript queries.
    Tsx,
    JavaScript,
    /// SWE-agent tool bundles (`tools/<bundle>/config.yaml`), read without tree-sitter.
    Yaml,
}

impl Lang {
    /// Every language, in the order summaries list them.
    pub const ALL: [Self; 7] = [Self::Go, Self::Python, Self::Rust, Self::TypeScript, Self::Tsx, Self::JavaScript, Self::Yaml];

    /// The name used in summaries and in `registry.json`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Go => "go",
            Self::Python => "python",
            Self::Rust => "rust",
            Self::TypeScript => "typescript",
            Self::Tsx => "tsx",
            Self::JavaScript => "javascript",
            Self::Yaml => "yaml",
        }
    }

    /// The `rules/registry/<stem>.scm` file whose queries this language runs (TSX shares the
    /// TypeScript queries); `None` for YAML.
    #[must_use]
    pub fn query_stem(self) -> Option<&'static str> {
        match self {
            Self::Go => Some("go"),
            Self::Python => Some("python"),
            Self::Rust => Some("rust"),
            Self::TypeScript | Self::Tsx => Some("typescript"),
            Self::JavaScript => Some("javascript"),
            Self::Yaml => None,
        }
    }

    /// The built-in queries, embedded so the binary needs no files beside it.
    #[must_use]
    pub fn builtin_query(self) -> Option<&'static str> {
        match self.query_stem()? {
            "go" => Some(include_str!("../../rules/registry/go.scm")),
            "python" => Some(include_str!("../../rules/registry/python.scm")),
            "rust" => Some(include_str!("../../rules/registry/rust.scm")),
            "typescript" => Some(include_str!("../../rules/registry/typescript.scm")),
            "javascript" => Some(include_str!("../../rules/registry/javascript.scm")),
            _ => None,
        }
    }

    /// The tree-sitter grammar; `None` for YAML.
    #[must_use]
    pub fn grammar(self) -> Option<Language> {
        Some(match self {
            Self::Go => tree_sitter_go::LANGUAGE.into(),
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::Rust => tree_sitter_rust::LANGUAGE.into(),
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::Yaml => return None,
        })
    }

    /// The language of a file, from its name. YAML is only a tool bundle's `config.yaml`
    /// directly under `tools/<bundle>/`: other YAML holds no tool registry.
    #[must_use]
    pub fn of_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_str()?;
        if name.ends_with(".d.ts") || name.ends_with(".min.js") {
            return None;
        }
        let ext = path.extension()?.to_str()?;
        Some(match ext {
            "go" => Self::Go,
            "py" | "pyi" => Self::Python,
            "rs" => Self::Rust,
            "ts" | "mts" | "cts" => Self::TypeScript,
            "tsx" => Self::Tsx,
            "js" | "mjs" | "cjs" | "jsx" => Self::JavaScript,
            "yaml" | "yml" if is_tool_bundle_config(path) => Self::Yaml,
            _ => return None,
        })
    }

    /// Parses a `--lang` value: `go`, `python`/`py`, `rust`/`rs`, `ts`/`typescript` (with TSX),
    /// `js`/`javascript`, `yaml`.
    #[must_use]
    pub fn parse_selector(s: &str) -> Option<&'static [Self]> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "go" => &[Self::Go],
            "python" | "py" => &[Self::Python],
            "rust" | "rs" => &[Self::Rust],
            "ts" | "typescript" | "tsx" => &[Self::TypeScript, Self::Tsx],
            "js" | "javascript" | "jsx" => &[Self::JavaScript],
            "yaml" | "yml" => &[Self::Yaml],
            _ => return None,
        })
    }

    /// The language a `--queries DIR` file adds to, from its stem.
    #[must_use]
    pub fn of_query_stem(stem: &str) -> Option<&'static [Self]> {
        match stem {
            "typescript" => Some(&[Self::TypeScript, Self::Tsx]),
            "go" | "python" | "rust" | "javascript" => Self::parse_selector(stem),
            _ => None,
        }
    }
}

/// `…/tools/<bundle>/config.yaml`, the layout of SWE-agent tool bundles.
fn is_tool_bundle_config(path: &Path) -> bool {
    let stem = path.file_stem().and_then(|s| s.to_str());
    let grandparent = path.parent().and_then(Path::parent).and_then(Path::file_name).and_then(|s| s.to_str());
    stem == Some("config") && grandparent == Some("tools")
}

/// Test files register fake tools (mock models, fixtures); the extractor leaves them out
/// unless asked, since the registry is what the harness offers a model.
#[must_use]
pub fn is_test_path(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let in_test_dir = rel.split('/').rev().skip(1).any(|d| {
        matches!(d, "test" | "tests" | "__tests__" | "testdata" | "test_data" | "fixtures" | "__mocks__" | "e2e" | "spec" | "mocks")
    });
    in_test_dir
        || name.ends_with("_test.go")
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || name.ends_with("_tests.rs")
        || name == "tests.rs"
        || [".test.", ".spec.", ".stories."].iter().any(|m| name.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_bundle_yaml_only() {
        assert_eq!(Lang::of_path(Path::new("repo/tools/search/config.yaml")), Some(Lang::Yaml));
        assert_eq!(Lang::of_path(Path::new("repo/config/default.yaml")), None);
        assert_eq!(Lang::of_path(Path::new("a/b.d.ts")), None);
        assert_eq!(Lang::of_path(Path::new("a/b.tsx")), Some(Lang::Tsx));
    }

    #[test]
    fn test_paths() {
        assert!(is_test_path("pkg/tools/bash_test.go"));
        assert!(is_test_path("tests/unit/test_tools.py"));
        assert!(is_test_path("src/tool/bash.test.ts"));
        assert!(!is_test_path("src/tool/bash.ts"));
    }
}
