//! The query loader: built-in `rules/registry/<lang>.scm` and user `--queries DIR` files go
//! through the same code, and a bad query fails here, at load time, pointing into its file.
//!
//! Captures (the tree-sitter tags convention, documented at the top of every `.scm`):
//! - `@definition.tool` the registration node: its line is the tool's line, and a condition
//!   around it makes the tool conditional;
//! - `@name` a string literal holding the tool's name; `@name.ref` an identifier (or a path
//!   such as `tools.BashToolName`) resolved to a string constant; `@name.ident` an identifier
//!   whose own text is the name (a function decorated `@tool`);
//! - `@constant.name` + `@constant.value` a string constant, collected across files;
//!   `@constant.scope` qualifies it (`ClineDefaultTool` for `ClineDefaultTool.ASK`);
//! - `@namespace` a name template filled at run time (`format!("mcp__{}__{}", …)`);
//! - captures starting with `_` serve predicates only.
//!
//! Every pattern sets `(#set! shape "<name>")`; `(#set! confidence "high|medium|low")` is
//! optional (default `high`). Besides tree-sitter's own predicates, `(#has-key? @cap "k" …)`
//! (and `#not-has-key?`) holds when the captured object, dict, call or struct literal has a
//! key, keyword argument or field named one of the strings: one pass over the node's
//! children, where two sibling-pair patterns would try every pair of pairs.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use miette::{NamedSource, SourceSpan};
use tree_sitter::{CaptureQuantifier, Query};

use super::lang::Lang;
use super::model::Confidence;

/// Capture names the extractor understands.
const KNOWN_CAPTURES: [&str; 8] =
    ["definition.tool", "name", "name.ref", "name.ident", "constant.name", "constant.value", "constant.scope", "namespace"];

/// What a pattern contributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternKind {
    Tool,
    Constant,
    Namespace,
}

/// A pattern's checked metadata.
#[derive(Debug, Clone)]
pub struct PatternMeta {
    pub kind: PatternKind,
    pub shape: String,
    pub confidence: Confidence,
    /// `#has-key?` / `#not-has-key?` predicates, checked by the extractor.
    pub has_key: Vec<HasKey>,
}

/// `(#has-key? @capture "k1" "k2" …)`: the captured node has one of these keys.
#[derive(Debug, Clone)]
pub struct HasKey {
    pub capture: u32,
    pub keys: Vec<String>,
    /// `#not-has-key?`: none of these keys.
    pub negate: bool,
}

/// Capture indices, looked up once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Captures {
    pub definition: Option<u32>,
    pub name: Option<u32>,
    pub name_ref: Option<u32>,
    pub name_ident: Option<u32>,
    pub const_name: Option<u32>,
    pub const_value: Option<u32>,
    pub const_scope: Option<u32>,
    pub namespace: Option<u32>,
}

/// One compiled query file.
#[derive(Debug)]
pub struct CompiledQuery {
    /// Where it came from (`rules/registry/go.scm` for built-ins, the path for user files).
    pub origin: String,
    pub query: Query,
    pub patterns: Vec<PatternMeta>,
    pub captures: Captures,
}

/// The queries every language runs: built-ins first, then user files.
#[derive(Debug, Default)]
pub struct QuerySet {
    by_lang: BTreeMap<Lang, Vec<Arc<CompiledQuery>>>,
}

/// A query that cannot be used, or a `--queries` directory that cannot be read.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum QueryError {
    #[error("failed to load registry query {origin}: {message}")]
    #[diagnostic(code(coroner::registry::query))]
    Invalid {
        origin: String,
        message: String,
        #[source_code]
        src: NamedSource<Arc<String>>,
        #[label("{label}")]
        span: SourceSpan,
        label: String,
        #[help]
        help: Option<String>,
    },
    #[error("failed to read registry queries from {path}: {source}")]
    #[diagnostic(code(coroner::registry::query_io))]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to tell which language {path} is for")]
    #[diagnostic(
        code(coroner::registry::query_name),
        help("name query files after their language: go.scm, python.scm, rust.scm, typescript.scm, javascript.scm")
    )]
    UnknownLanguage { path: String },
}

impl QuerySet {
    /// The built-in queries of `langs`.
    ///
    /// # Errors
    /// A built-in query that does not compile (a bug, caught by the tests).
    #[expect(clippy::result_large_err, reason = "a load error is built once, on the way out; boxing it would only move the allocation")]
    pub fn builtin(langs: &[Lang]) -> Result<Self, QueryError> {
        let mut set = Self::default();
        for &lang in langs {
            if let (Some(text), Some(stem)) = (lang.builtin_query(), lang.query_stem()) {
                let q = compile(lang, &format!("rules/registry/{stem}.scm"), text)?;
                set.by_lang.entry(lang).or_default().push(Arc::new(q));
            }
        }
        Ok(set)
    }

    /// Adds every `<lang>.scm` in `dir` to the languages it names (for the languages in
    /// `langs`; others are still compiled, so a broken file is reported whatever is selected).
    ///
    /// # Errors
    /// An unreadable directory or file, a file named after no language, or a bad query.
    #[expect(clippy::result_large_err, reason = "a load error is built once, on the way out; boxing it would only move the allocation")]
    pub fn add_dir(&mut self, dir: &Path, langs: &[Lang]) -> Result<(), QueryError> {
        let shown = crate::util::display_path(dir);
        let read = std::fs::read_dir(dir).map_err(|source| QueryError::Io { path: shown.clone(), source })?;
        let mut files: Vec<_> =
            read.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "scm")).collect();
        files.sort();
        for path in files {
            let shown = crate::util::display_path(&path);
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            let targets = Lang::of_query_stem(stem).ok_or_else(|| QueryError::UnknownLanguage { path: shown.clone() })?;
            let text = std::fs::read_to_string(&path).map_err(|source| QueryError::Io { path: shown.clone(), source })?;
            for &lang in targets {
                let q = compile(lang, &shown, &text)?;
                if langs.contains(&lang) {
                    self.by_lang.entry(lang).or_default().push(Arc::new(q));
                }
            }
        }
        Ok(())
    }

    /// The queries `lang` runs.
    #[must_use]
    pub fn for_lang(&self, lang: Lang) -> &[Arc<CompiledQuery>] {
        self.by_lang.get(&lang).map_or(&[], Vec::as_slice)
    }
}

/// Compiles and checks one query file for `lang`.
///
/// # Errors
/// tree-sitter's own errors (syntax, unknown node or field), and the extractor's rules: known
/// capture names, a `shape` on every pattern, a name capture beside `@definition.tool`.
#[expect(clippy::result_large_err, reason = "a load error is built once, on the way out; boxing it would only move the allocation")]
pub fn compile(lang: Lang, origin: &str, text: &str) -> Result<CompiledQuery, QueryError> {
    let src = Arc::new(text.to_string());
    let invalid = |offset: usize, len: usize, message: String, label: &str, help: Option<String>| QueryError::Invalid {
        origin: origin.to_string(),
        message,
        src: NamedSource::new(origin, Arc::clone(&src)),
        span: SourceSpan::new(offset.min(text.len()).into(), len),
        label: label.to_string(),
        help,
    };
    let Some(grammar) = lang.grammar() else {
        return Err(invalid(0, 0, format!("{} is not read with tree-sitter queries", lang.as_str()), "here", None));
    };
    let query = Query::new(&grammar, text).map_err(|e| {
        let len = text[e.offset.min(text.len())..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.').count().max(1);
        let help = match e.kind {
            tree_sitter::QueryErrorKind::NodeType | tree_sitter::QueryErrorKind::Field => {
                Some(format!("node kinds and fields are listed in the {} grammar's src/node-types.json", lang.as_str()))
            }
            _ => None,
        };
        invalid(
            e.offset,
            len,
            format!("{:?} error at line {}, column {}: {}", e.kind, e.row + 1, e.column + 1, e.message.trim()),
            "here",
            help,
        )
    })?;
    let names = query.capture_names();
    let index = |n: &str| query.capture_index_for_name(n);
    let captures = Captures {
        definition: index("definition.tool"),
        name: index("name"),
        name_ref: index("name.ref"),
        name_ident: index("name.ident"),
        const_name: index("constant.name"),
        const_value: index("constant.value"),
        const_scope: index("constant.scope"),
        namespace: index("namespace"),
    };
    let mut patterns = Vec::with_capacity(query.pattern_count());
    for p in 0..query.pattern_count() {
        let (start, end) = (query.start_byte_for_pattern(p), query.end_byte_for_pattern(p));
        let whole = end.saturating_sub(start);
        let quantifiers = query.capture_quantifiers(p);
        let has = |ix: Option<u32>| ix.is_some_and(|i| quantifiers.get(i as usize).is_some_and(|q| *q != CaptureQuantifier::Zero));
        for (i, n) in names.iter().enumerate() {
            if quantifiers.get(i).is_some_and(|q| *q != CaptureQuantifier::Zero) && !n.starts_with('_') && !KNOWN_CAPTURES.contains(n) {
                let at = text[start..end].find(&format!("@{n}")).map_or(start, |o| start + o);
                return Err(invalid(
                    at,
                    n.len() + 1,
                    format!("unknown capture @{n}"),
                    "not a registry capture",
                    Some(format!("use one of @{}, or start helper captures with `_`", KNOWN_CAPTURES.join(", @"))),
                ));
            }
        }
        let kind = if has(captures.definition) {
            if !(has(captures.name) || has(captures.name_ref) || has(captures.name_ident)) {
                return Err(invalid(
                    start,
                    whole,
                    "a pattern with @definition.tool captures no name".into(),
                    "this pattern",
                    Some("capture the name with @name (a string), @name.ref (a constant) or @name.ident (an identifier)".into()),
                ));
            }
            PatternKind::Tool
        } else if has(captures.const_name) || has(captures.const_value) {
            if !(has(captures.const_name) && has(captures.const_value)) {
                return Err(invalid(
                    start,
                    whole,
                    "a constant pattern needs both @constant.name and @constant.value".into(),
                    "this pattern",
                    None,
                ));
            }
            PatternKind::Constant
        } else if has(captures.namespace) {
            PatternKind::Namespace
        } else {
            return Err(invalid(
                start,
                whole,
                "a pattern captures nothing the extractor uses".into(),
                "this pattern",
                Some("capture @definition.tool with a name, @constant.name with @constant.value, or @namespace".into()),
            ));
        };
        let mut shape = None;
        let mut confidence = Confidence::High;
        for prop in query.property_settings(p) {
            match (&*prop.key, prop.value.as_deref()) {
                ("shape", Some(v)) => shape = Some(format!("{}.{v}", lang.query_stem().unwrap_or_default())),
                ("confidence", Some(v)) => {
                    confidence = Confidence::parse(v).ok_or_else(|| {
                        let at = text[start..end].find(v).map_or(start, |o| start + o);
                        invalid(
                            at,
                            v.len(),
                            format!("unknown confidence `{v}`"),
                            "not a confidence",
                            Some("use high, medium or low".into()),
                        )
                    })?;
                }
                (k, _) => {
                    let at = text[start..end].find(k).map_or(start, |o| start + o);
                    return Err(invalid(
                        at,
                        k.len(),
                        format!("unknown property `{k}`"),
                        "not a registry property",
                        Some("patterns set `shape` and optionally `confidence`".into()),
                    ));
                }
            }
        }
        let Some(shape) = shape else {
            return Err(invalid(
                start,
                whole,
                "a pattern sets no shape".into(),
                "this pattern",
                Some("add (#set! shape \"kebab-case-name\") so every tool says which shape found it".into()),
            ));
        };
        let mut has_key = Vec::new();
        for pred in query.general_predicates(p) {
            let op = &*pred.operator;
            let at = text[start..end].find(op).map_or(start, |o| start + o);
            if op != "has-key?" && op != "not-has-key?" {
                return Err(invalid(
                    at,
                    op.len(),
                    format!("unknown predicate #{op}"),
                    "not a predicate tree-sitter or the extractor knows",
                    Some("use #eq?, #match?, #any-of? (tree-sitter) or #has-key? (the extractor)".into()),
                ));
            }
            let mut args = pred.args.iter();
            let Some(tree_sitter::QueryPredicateArg::Capture(capture)) = args.next() else {
                return Err(invalid(at, op.len(), format!("#{op} needs a capture first"), "here", None));
            };
            let keys: Vec<String> = args
                .filter_map(|a| match a {
                    tree_sitter::QueryPredicateArg::String(k) => Some(k.to_string()),
                    tree_sitter::QueryPredicateArg::Capture(_) => None,
                })
                .collect();
            if keys.is_empty() || keys.len() + 1 != pred.args.len() {
                return Err(invalid(at, op.len(), format!("#{op} takes a capture and one or more key strings"), "here", None));
            }
            has_key.push(HasKey { capture: *capture, keys, negate: op == "not-has-key?" });
        }
        patterns.push(PatternMeta { kind, shape, confidence, has_key });
    }
    Ok(CompiledQuery { origin: origin.to_string(), query, patterns, captures })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_compile() {
        let set = QuerySet::builtin(&Lang::ALL).expect("built-in queries compile");
        for lang in Lang::ALL {
            if lang != Lang::Yaml {
                assert!(!set.for_lang(lang).is_empty(), "{lang:?} has queries");
            }
        }
    }

    #[test]
    fn errors_point_into_the_file() {
        let e = compile(Lang::Go, "bad.scm", "(call_expression (no_such_node) @name) @definition.tool").unwrap_err();
        let QueryError::Invalid { span, message, .. } = e else { panic!("{e:?}") };
        assert_eq!(span.offset(), 18, "{message}");
        let e = compile(Lang::Go, "bad.scm", "((identifier) @nme (#set! shape \"x\"))").unwrap_err();
        assert!(e.to_string().contains("unknown capture @nme"), "{e}");
        let e = compile(Lang::Go, "bad.scm", "((interpreted_string_literal) @name) @definition.tool").unwrap_err();
        assert!(e.to_string().contains("sets no shape"), "{e}");
        let e = compile(
            Lang::Python,
            "bad.scm",
            "((dictionary) @definition.tool (pair) @name (#has-keys? @definition.tool \"x\") (#set! shape \"x\"))",
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown predicate #has-keys?"), "{e}");
        let e = compile(
            Lang::Python,
            "bad.scm",
            "((dictionary) @definition.tool (pair) @name (#has-key? @definition.tool) (#set! shape \"x\"))",
        )
        .unwrap_err();
        assert!(e.to_string().contains("one or more key strings"), "{e}");
    }
}
