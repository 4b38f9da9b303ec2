//! Extraction in two passes: every file is parsed once, in parallel, and its queries yield
//! string constants and candidate registrations; then the registrations that name a tool by
//! identifier are resolved against the constants of every file (a tool name is often defined
//! in one file and registered in another).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor};

use super::diag::SourceError;
use super::lang::{Lang, is_test_path};
use super::literal::{StrLit, is_tool_name, namespace_prefix, string_value};
use super::model::{Confidence, Namespace, Registry, Skipped, Tool, Unresolved};
use super::query::{PatternKind, QuerySet};
use super::yaml;
use crate::util::display_path;
use crate::util::sha256_hex;

/// Source files larger than this are generated or bundled code, not a registry; skipping
/// them keeps one minified bundle from dominating the run.
pub const MAX_SOURCE_BYTES: u64 = 1 << 20;

/// What to extract.
#[derive(Debug, Clone, Default)]
pub struct ExtractOptions {
    pub sources: Vec<PathBuf>,
    /// Languages to read; empty means all.
    pub langs: Vec<Lang>,
    /// The harness name; defaults to the root's directory name.
    pub harness: Option<String>,
    /// Read test files too (`*_test.go`, `tests/`, `*.test.ts`, ...).
    pub include_tests: bool,
    /// Namespace patterns to add (`developer__*`), for names filled at run time that the
    /// source does not spell out.
    pub namespaces: Vec<String>,
}

/// The registry and the problems met on the way.
#[derive(Debug)]
pub struct Extraction {
    pub registry: Registry,
    /// One per skipped file, in path order.
    pub diagnostics: Vec<SourceError>,
}

/// Errors that stop extraction before any file is read.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ExtractError {
    #[error("failed to read source {path}: {source}")]
    #[diagnostic(code(coroner::registry::source_io))]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to find any source file to read under {0}")]
    #[diagnostic(
        code(coroner::registry::no_source),
        help(
            "the extractor reads .go, .py, .rs, .ts/.tsx, .js and tools/<bundle>/config.yaml files, test files excluded (--include-tests)"
        )
    )]
    NoFiles(String),
}

/// One file to read.
#[derive(Debug, Clone)]
struct SourceFile {
    path: PathBuf,
    rel: String,
    lang: Lang,
}

/// How a registration names its tool.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NameCap {
    /// An identifier whose own text is the name.
    Ident(String),
    /// An identifier resolved through a string constant.
    Ref(String),
    /// A string literal.
    Literal(String),
}

/// A registration before resolution.
#[derive(Debug, Clone)]
struct RawReg {
    /// Byte range of `@definition.tool`: two patterns matching one node are one registration.
    def: (usize, usize),
    name: NameCap,
    line: u32,
    shape: String,
    confidence: Confidence,
    conditional: Option<String>,
}

/// A string constant.
#[derive(Debug, Clone)]
pub(crate) struct ConstDef {
    pub name: String,
    pub scope: Option<String>,
    pub value: String,
}

/// What one file gave.
#[derive(Debug, Default)]
pub(crate) struct FileOut {
    pub sha256: Option<String>,
    pub constants: Vec<ConstDef>,
    regs: Vec<RawReg>,
    /// Tools read without tree-sitter (YAML bundles): already resolved.
    pub tools: Vec<Tool>,
    pub namespaces: Vec<Namespace>,
    pub error: Option<SourceError>,
}

/// Extracts the registry of the harness whose source is under `opts.sources`.
///
/// # Errors
/// A source that cannot be read at all, or no source file found. Files that do not parse are
/// not errors: they are skipped and reported in [`Extraction::diagnostics`].
pub fn extract(opts: &ExtractOptions, queries: &QuerySet) -> Result<Extraction, ExtractError> {
    let langs: Vec<Lang> = if opts.langs.is_empty() { Lang::ALL.to_vec() } else { opts.langs.clone() };
    let (root, files) = walk(&opts.sources, &langs, opts.include_tests)?;
    if files.is_empty() {
        return Err(ExtractError::NoFiles(root));
    }

    // Pass 1, per file in parallel: constants and candidate registrations.
    let outs: Vec<FileOut> = files.par_iter().map(|f| read_file(f, queries, opts.include_tests)).collect();

    // Pass 2: resolve identifiers against the constants of every file.
    let consts = ConstIndex::build(&files, &outs);
    let mut registry = Registry::new(opts.harness.clone().unwrap_or_else(|| default_harness(&opts.sources)), root);
    let mut digest = String::new();
    let mut found: Vec<Tool> = Vec::new();
    let mut diagnostics = Vec::new();
    for (ix, (f, out)) in files.iter().zip(outs).enumerate() {
        if let Some(sha) = &out.sha256 {
            digest.push_str(&format!("{}\t{sha}\n", f.rel));
            *registry.files.entry(f.lang.as_str().to_string()).or_default() += 1;
        }
        if let Some(e) = out.error {
            registry.skipped.push(Skipped { file: f.rel.clone(), line: e.line, reason: e.message.clone() });
            diagnostics.push(e);
            continue;
        }
        registry.namespaces.extend(out.namespaces);
        found.extend(out.tools);
        for reg in group(out.regs) {
            let (name, via, confidence) = match reg.name {
                NameCap::Literal(s) | NameCap::Ident(s) => (s, None, reg.confidence),
                NameCap::Ref(r) => match consts.resolve(&r, ix, &files) {
                    Some((value, ambiguous)) => {
                        let c = if ambiguous { lower(reg.confidence) } else { reg.confidence };
                        (value, Some(r), c)
                    }
                    None => {
                        registry.unresolved.push(Unresolved { reference: r, file: f.rel.clone(), line: reg.line, shape: reg.shape });
                        continue;
                    }
                },
            };
            if !is_tool_name(&name) {
                continue;
            }
            found.push(Tool {
                name,
                file: f.rel.clone(),
                line: reg.line,
                shape: reg.shape,
                confidence,
                conditional: reg.conditional,
                via,
                occurrences: 1,
            });
        }
    }
    for p in &opts.namespaces {
        let pattern = if p.ends_with('*') { p.clone() } else { format!("{p}*") };
        registry.namespaces.push(Namespace { pattern, file: None, line: None, shape: "option".into() });
    }
    registry.tools = merge(found);
    registry.namespaces = dedup_namespaces(std::mem::take(&mut registry.namespaces));
    registry.unresolved.sort();
    registry.unresolved.dedup();
    registry.sha256 = sha256_hex(digest.as_bytes());
    Ok(Extraction { registry, diagnostics })
}

/// One tool per name: the most confident registration, first in path order; conditional
/// only when every registration is.
fn merge(found: Vec<Tool>) -> Vec<Tool> {
    let mut by_name: BTreeMap<String, Tool> = BTreeMap::new();
    for t in found {
        match by_name.get_mut(&t.name) {
            None => {
                by_name.insert(t.name.clone(), t);
            }
            Some(kept) => {
                let occurrences = kept.occurrences + 1;
                let conditional = if t.conditional.is_none() { None } else { kept.conditional.take() };
                if t.confidence > kept.confidence {
                    *kept = t;
                }
                kept.occurrences = occurrences;
                kept.conditional = conditional;
            }
        }
    }
    by_name.into_values().collect()
}

/// First occurrence of each pattern, in path order.
fn dedup_namespaces(mut ns: Vec<Namespace>) -> Vec<Namespace> {
    let mut seen = std::collections::BTreeSet::new();
    ns.retain(|n| seen.insert(n.pattern.clone()));
    ns.sort_by(|a, b| a.pattern.cmp(&b.pattern));
    ns
}

fn lower(c: Confidence) -> Confidence {
    match c {
        Confidence::High => Confidence::Medium,
        _ => Confidence::Low,
    }
}

/// Registrations of one file, one per definition node, the strongest name winning.
fn group(regs: Vec<RawReg>) -> Vec<RawReg> {
    let mut by_def: BTreeMap<(usize, usize), RawReg> = BTreeMap::new();
    for r in regs {
        match by_def.get(&r.def) {
            Some(kept) if (rank(&kept.name), kept.confidence) >= (rank(&r.name), r.confidence) => {}
            _ => {
                by_def.insert(r.def, r);
            }
        }
    }
    by_def.into_values().collect()
}

fn rank(n: &NameCap) -> u8 {
    match n {
        NameCap::Ident(_) => 0,
        NameCap::Ref(_) => 1,
        NameCap::Literal(_) => 2,
    }
}

/// The directory name of the first source, as the default harness name.
fn default_harness(sources: &[PathBuf]) -> String {
    sources
        .first()
        .and_then(|p| std::fs::canonicalize(p).ok().or_else(|| Some(p.clone())))
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "unknown".into())
}

/// Every source file under `sources`, sorted, with paths relative to the shown root.
fn walk(sources: &[PathBuf], langs: &[Lang], include_tests: bool) -> Result<(String, Vec<SourceFile>), ExtractError> {
    let base = common_root(sources);
    let root = if sources.len() == 1 { display_path(&sources[0]) } else { display_path(&base) };
    let mut files = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for src in sources {
        let meta = std::fs::metadata(src).map_err(|source| ExtractError::Io { path: display_path(src), source })?;
        let mut push = |path: PathBuf, rel_base: &Path| {
            let below = path.strip_prefix(rel_base).unwrap_or(&path);
            let mut rel = display_path(below);
            if rel.is_empty() {
                rel = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            }
            let Some(lang) = Lang::of_path(&path) else { return };
            if !langs.contains(&lang) || (!include_tests && is_test_path(&rel)) {
                return;
            }
            if seen.insert(path.clone()) {
                files.push(SourceFile { path, rel, lang });
            }
        };
        if meta.is_file() {
            let parent = if sources.len() == 1 { src.parent().unwrap_or(Path::new("")).to_path_buf() } else { base.clone() };
            push(src.clone(), &parent);
            continue;
        }
        // .gitignore applies whether or not the tree is a git checkout (a fetched snapshot
        // has no .git); hidden directories hold no harness code worth reading.
        let walker = ignore::WalkBuilder::new(src).require_git(false).follow_links(false).sort_by_file_name(Ord::cmp).build();
        let rel_base = if sources.len() == 1 { src.clone() } else { base.clone() };
        for entry in walker.flatten() {
            if entry.file_type().is_some_and(|t| t.is_file()) {
                push(entry.into_path(), &rel_base);
            }
        }
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((root, files))
}

/// The deepest directory holding every source.
fn common_root(sources: &[PathBuf]) -> PathBuf {
    let dirs: Vec<PathBuf> =
        sources.iter().map(|s| if s.is_file() { s.parent().map(Path::to_path_buf).unwrap_or_default() } else { s.clone() }).collect();
    let Some(first) = dirs.first() else { return PathBuf::new() };
    let mut common: Vec<_> = first.components().collect();
    for d in &dirs[1..] {
        let n = common.iter().zip(d.components()).take_while(|(a, b)| **a == *b).count();
        common.truncate(n);
    }
    common.iter().collect()
}

/// Pass 1 for one file.
fn read_file(f: &SourceFile, queries: &QuerySet, include_tests: bool) -> FileOut {
    let mut out = FileOut::default();
    let too_big = std::fs::metadata(&f.path).map(|m| m.len() > MAX_SOURCE_BYTES);
    let bytes = match too_big {
        Ok(true) => {
            out.error = Some(SourceError::whole(
                &f.rel,
                "read a source file over 1 MiB",
                Some("files this large are generated or bundled code; the registry is read from the code they are built from"),
            ));
            return out;
        }
        Ok(false) => std::fs::read(&f.path),
        Err(e) => Err(e),
    };
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => {
            out.error = Some(SourceError::whole(&f.rel, format!("read the file: {e}"), None));
            return out;
        }
    };
    out.sha256 = Some(sha256_hex(&bytes));
    let text = match String::from_utf8(bytes) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            out.error = Some(SourceError::whole(
                &f.rel,
                format!("read the file as UTF-8 (bad byte at offset {})", e.utf8_error().valid_up_to()),
                None,
            ));
            return out;
        }
    };
    if f.lang == Lang::Yaml {
        yaml::read_bundle(&f.rel, &text, &mut out);
        return out;
    }
    parse_and_match(f, &text, queries, include_tests, &mut out);
    out
}

fn parse_and_match(f: &SourceFile, text: &Arc<String>, queries: &QuerySet, include_tests: bool, out: &mut FileOut) {
    let Some(grammar) = f.lang.grammar() else { return };
    let mut parser = Parser::new();
    if parser.set_language(&grammar).is_err() {
        out.error = Some(SourceError::whole(&f.rel, format!("load the {} grammar", f.lang.as_str()), None));
        return;
    }
    let Some(tree) = parser.parse(text.as_bytes(), None) else {
        out.error = Some(SourceError::whole(&f.rel, format!("parse {} source", f.lang.as_str()), None));
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        let bad = first_error(root).unwrap_or(root);
        let (what, label) = if bad.is_missing() {
            (format!("parse {} source: expected `{}`", f.lang.as_str(), bad.kind()), format!("missing `{}`", bad.kind()))
        } else {
            (format!("parse {} source: syntax error", f.lang.as_str()), "tree-sitter cannot parse this".to_string())
        };
        out.error =
            Some(SourceError::at(&f.rel, text, bad.start_byte(), (bad.end_byte() - bad.start_byte()).max(1), what, label).with_help(
                "the file was skipped; if it is valid source, the grammar does not know this syntax yet (a newer language version)",
            ));
        return;
    }
    let src = text.as_bytes();
    let line_of = |n: Node| u32::try_from(n.start_position().row + 1).unwrap_or(u32::MAX);
    for q in queries.for_lang(f.lang) {
        let c = q.captures;
        let mut cursor = QueryCursor::new();
        let mut matches = cursor.matches(&q.query, root, src);
        while let Some(m) = matches.next() {
            let Some(meta) = q.patterns.get(m.pattern_index) else { continue };
            let get = |ix: Option<u32>| ix.and_then(|i| m.captures().iter().find(|cap| cap.index == i).map(|cap| cap.node));
            let keys_hold = meta.has_key.iter().all(|h| {
                let found = get(Some(h.capture)).is_some_and(|n| key_names(n, src).iter().any(|k| h.keys.iter().any(|w| w == k)));
                found != h.negate
            });
            if !keys_hold {
                continue;
            }
            let text_of = |n: Node| n.utf8_text(src).unwrap_or_default().to_string();
            match meta.kind {
                PatternKind::Constant => {
                    let (Some(n), Some(v)) = (get(c.const_name), get(c.const_value)) else { continue };
                    if let Some(StrLit { text: value, interpolated: None }) = string_value(v, src) {
                        out.constants.push(ConstDef { name: text_of(n), scope: get(c.const_scope).map(text_of), value });
                    }
                }
                PatternKind::Namespace => {
                    let Some(n) = get(c.namespace) else { continue };
                    if let Some(prefix) = string_value(n, src).and_then(|s| namespace_prefix(&s)) {
                        out.namespaces.push(Namespace {
                            pattern: format!("{prefix}*"),
                            file: Some(f.rel.clone()),
                            line: Some(line_of(n)),
                            shape: meta.shape.clone(),
                        });
                    }
                }
                PatternKind::Tool => {
                    let Some(def) = get(c.definition) else { continue };
                    // Test doubles registered in test code are not the harness's tools.
                    if !include_tests && super::testcode::in_test_code(def, f.lang, src) {
                        continue;
                    }
                    let (name, at) = if let Some(n) = get(c.name) {
                        match string_value(n, src) {
                            Some(StrLit { text, interpolated: None }) => (NameCap::Literal(text), n),
                            Some(s) => {
                                // A templated name is a family of tools filled at run time.
                                if let Some(prefix) = namespace_prefix(&s) {
                                    out.namespaces.push(Namespace {
                                        pattern: format!("{prefix}*"),
                                        file: Some(f.rel.clone()),
                                        line: Some(line_of(n)),
                                        shape: meta.shape.clone(),
                                    });
                                }
                                continue;
                            }
                            None => continue,
                        }
                    } else if let Some(n) = get(c.name_ref) {
                        (NameCap::Ref(text_of(n)), n)
                    } else if let Some(n) = get(c.name_ident) {
                        (NameCap::Ident(text_of(n)), n)
                    } else {
                        continue;
                    };
                    out.regs.push(RawReg {
                        def: (def.start_byte(), def.end_byte()),
                        name,
                        line: line_of(at),
                        shape: meta.shape.clone(),
                        confidence: meta.confidence,
                        conditional: condition(def, src),
                    });
                }
            }
        }
    }
}

/// The keys a mapping-like node holds: object and dict pairs, keyword arguments (of a call or
/// its argument list), struct fields, Go keyed elements, and `"key":` inside a Rust macro's
/// token tree. Quotes are stripped.
fn key_names(node: Node, src: &[u8]) -> Vec<String> {
    let holder = node.child_by_field_name("arguments").or_else(|| node.child_by_field_name("body")).unwrap_or(node);
    let mut out = Vec::new();
    let mut cursor = holder.walk();
    let children: Vec<Node> = holder.children(&mut cursor).collect();
    for (i, child) in children.iter().enumerate() {
        let key = match child.kind() {
            "pair" => child.child_by_field_name("key"),
            "keyword_argument" => child.child_by_field_name("name"),
            "field_initializer" => child.child_by_field_name("field"),
            "keyed_element" => child.child_by_field_name("key"),
            "string_literal" if children.get(i + 1).is_some_and(|n| n.kind() == ":") => Some(*child),
            _ => None,
        };
        if let Some(k) = key.and_then(|k| k.utf8_text(src).ok()) {
            out.push(k.trim_matches(['"', '\'', '`']).to_string());
        }
    }
    out
}

/// The first ERROR or MISSING node, depth first.
fn first_error(node: Node) -> Option<Node> {
    // A loop, not recursion: the tree is as deep as the (untrusted) source nests, and a stack
    // overflow aborts the process where no diagnostic can be given.
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        // Descend only into subtrees that hold an error; otherwise move on to the next sibling,
        // climbing as far as needed, never above `node`.
        if n.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == node {
                return None;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

/// Node kinds that make what they contain happen only sometimes.
const CONDITIONAL_KINDS: [&str; 14] = [
    "if_statement",
    "if_expression",
    "elif_clause",
    "else_clause",
    "conditional_expression",
    "ternary_expression",
    "match_arm",
    "case_clause",
    "expression_case",
    "type_case",
    "default_case",
    "switch_case",
    "switch_default",
    "if_let_expression",
];

/// The first line of the nearest enclosing condition, if any.
fn condition(def: Node, src: &[u8]) -> Option<String> {
    let mut at = def.parent();
    while let Some(p) = at {
        if CONDITIONAL_KINDS.contains(&p.kind()) {
            let text = p.utf8_text(src).unwrap_or_default();
            let first = text.lines().next().unwrap_or_default().trim();
            let mut s: String = first.chars().take(80).collect();
            if first.chars().count() > 80 {
                s.push('…');
            }
            return Some(s);
        }
        at = p.parent();
    }
    None
}

/// String constants of every file, for pass 2.
struct ConstIndex {
    /// Constant name (and `scope.name`) → (value, file index), in file order.
    by_name: HashMap<String, Vec<(String, usize)>>,
}

impl ConstIndex {
    fn build(_files: &[SourceFile], outs: &[FileOut]) -> Self {
        let mut by_name: HashMap<String, Vec<(String, usize)>> = HashMap::new();
        for (ix, out) in outs.iter().enumerate() {
            for c in &out.constants {
                by_name.entry(c.name.clone()).or_default().push((c.value.clone(), ix));
                if let Some(scope) = &c.scope {
                    by_name.entry(format!("{scope}.{}", c.name)).or_default().push((c.value.clone(), ix));
                }
            }
        }
        Self { by_name }
    }

    /// The value `reference` (used in file `file`) names, and whether several different
    /// values competed for it. The qualified form wins over the bare name; then a
    /// definition in the same file, then in the same directory; elsewhere only names that can
    /// be imported (starting with an upper-case letter) resolve: to the only value, else to
    /// the definition whose path shares most with the user's.
    fn resolve(&self, reference: &str, file: usize, files: &[SourceFile]) -> Option<(String, bool)> {
        let cleaned = reference.replace("::", ".");
        let cleaned = cleaned.trim_start_matches("self.").trim_start_matches("Self.");
        let parts: Vec<&str> = cleaned.split('.').collect();
        let keys: Vec<String> = {
            let mut k = Vec::new();
            if parts.len() >= 2 {
                k.push(parts[parts.len() - 2..].join("."));
            }
            // `tool.name` is a property of a variable; only `mod.CONST` / `Enum.MEMBER` also
            // stand for the bare constant.
            if let Some(last) = parts.last().filter(|l| parts.len() == 1 || l.starts_with(|c: char| c.is_ascii_uppercase())) {
                k.push((*last).to_string());
            }
            k
        };
        let cands = keys.iter().find_map(|k| self.by_name.get(k))?;
        let dir = |i: usize| files[i].rel.rsplit_once('/').map_or("", |(d, _)| d);
        if let Some((v, _)) = cands.iter().find(|(_, i)| *i == file) {
            return Some((v.clone(), false));
        }
        let same_dir: Vec<_> = cands.iter().filter(|(_, i)| dir(*i) == dir(file)).collect();
        if let Some((v, _)) = same_dir.first() {
            return Some((v.clone(), same_dir.iter().any(|(w, _)| w != v)));
        }
        // Beyond its package, a name only reaches a constant it can import: an exported or
        // CONSTANT-cased one. `tool.name` or `fileName` elsewhere is a variable, not a constant.
        if !parts.last().is_some_and(|p| p.starts_with(|c: char| c.is_ascii_uppercase())) {
            return None;
        }
        let first = &cands[0].0;
        if cands.iter().all(|(v, _)| v == first) {
            return Some((first.clone(), false));
        }
        let shared = |i: usize| files[i].rel.chars().zip(files[file].rel.chars()).take_while(|(a, b)| a == b).count();
        let best = cands.iter().max_by_key(|(_, i)| (shared(*i), std::cmp::Reverse(*i)))?;
        Some((best.0.clone(), true))
    }
}
