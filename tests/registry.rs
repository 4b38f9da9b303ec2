//! Registry extraction on the fixtures of every language and shape, import of a real captured
//! tool list, diff against runs, and the diagnostics for bad sources and bad queries.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use coroner::registry::diff::Verdict;
use coroner::registry::{ExtractOptions, Extraction, ImportOptions, Knowledge, Lang, QuerySet, Registry};

use crate::common::{coroner, corpus, root, tempdir};

fn fixture(lang: &str) -> PathBuf {
    // Relative, so the registry's `root` is the same on every machine.
    Path::new("rules/registry/fixtures").join(lang)
}

fn extract_dir(dir: &Path) -> Extraction {
    let queries = QuerySet::builtin(&Lang::ALL).expect("built-in queries load");
    let opts = ExtractOptions { sources: vec![dir.to_path_buf()], ..ExtractOptions::default() };
    coroner::registry::extract(&opts, &queries).expect("extraction runs")
}

/// The markers fixtures carry: `expect: NAME [(conditional)]` on the line a tool is
/// registered, `expect-namespace: PATTERN`, `expect-unresolved: REF`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Expected {
    tools: BTreeSet<(String, u32, String, bool)>,
    namespaces: BTreeSet<String>,
    unresolved: BTreeSet<String>,
}

fn markers(dir: &Path) -> Expected {
    let mut e = Expected::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("fixture dir") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(dir).expect("below").to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(&p).expect("fixture text");
            for (i, line) in text.lines().enumerate() {
                let n = u32::try_from(i + 1).expect("line");
                if let Some(rest) = line.split("expect: ").nth(1) {
                    let name = rest.split_whitespace().next().expect("marker name").to_string();
                    e.tools.insert((rel.clone(), n, name, rest.contains("(conditional)")));
                }
                if let Some(rest) = line.split("expect-namespace: ").nth(1) {
                    e.namespaces.insert(rest.trim().to_string());
                }
                if let Some(rest) = line.split("expect-unresolved: ").nth(1) {
                    e.unresolved.insert(rest.trim().to_string());
                }
            }
        }
    }
    e
}

fn found(r: &Registry) -> Expected {
    Expected {
        tools: r.tools.iter().map(|t| (t.file.clone(), t.line, t.name.clone(), t.conditional.is_some())).collect(),
        namespaces: r.namespaces.iter().map(|n| n.pattern.clone()).collect(),
        unresolved: r.unresolved.iter().map(|u| u.reference.clone()).collect(),
    }
}

/// Every `expect:` marker is found at its line, and nothing else is (`ok:` lines, test files,
/// types that are not tools, enums that are not tool enums).
fn check_fixture(lang: &str) -> Registry {
    let dir = fixture(lang);
    let x = extract_dir(&dir);
    assert!(x.diagnostics.is_empty(), "{lang} fixtures parse: {:?}", x.diagnostics);
    let expected = markers(&root().join(&dir));
    assert!(expected.tools.len() >= 3, "{lang} fixtures carry markers");
    assert_eq!(found(&x.registry), expected, "{lang}: extracted registry vs the fixture's markers");
    x.registry
}

#[test]
fn go_fixture() {
    let r = check_fixture("go");
    // const in names.go, registered in view.go and (qualified) in agent/coordinator.go.
    let bash = r.tools.iter().find(|t| t.name == "bash").expect("bash");
    assert_eq!((bash.file.as_str(), bash.via.as_deref()), ("internal/agent/coordinator.go", Some("tools.BashToolName")));
    assert_eq!(r.files.get("go"), Some(&3), "the _test.go file is not read");
    insta::assert_json_snapshot!("registry_go", r);
}

#[test]
fn python_fixture() {
    let r = check_fixture("python");
    let think = r.tools.iter().find(|t| t.name == "think").expect("think");
    assert_eq!(think.via.as_deref(), Some("ToolNames.THINK"), "class constants resolve by Class.NAME across files");
    let browser = r.tools.iter().find(|t| t.name == "browser").expect("browser");
    assert_eq!(browser.conditional.as_deref(), Some("if enable_browsing:"));
    insta::assert_json_snapshot!("registry_python", r);
}

#[test]
fn rust_fixture() {
    let r = check_fixture("rust");
    let image = r.tools.iter().find(|t| t.name == "view_image").expect("view_image");
    assert_eq!(image.via.as_deref(), Some("crate::names::VIEW_IMAGE"), "a static in names.rs, used by path in spec.rs");
    insta::assert_json_snapshot!("registry_rust", r);
}

#[test]
fn typescript_fixture() {
    let r = check_fixture("typescript");
    assert_eq!(r.files.get("tsx"), Some(&1), "the .tsx file is parsed with the TSX grammar");
    let read = r.tools.iter().find(|t| t.name == "read_file").expect("read_file");
    assert_eq!((read.shape.as_str(), read.occurrences), ("typescript.tool-enum", 2), "enum member and its use are one tool");
    insta::assert_json_snapshot!("registry_typescript", r);
}

#[test]
fn javascript_fixture() {
    let r = check_fixture("javascript");
    insta::assert_json_snapshot!("registry_javascript", r);
}

#[test]
fn yaml_bundle_fixture() {
    let r = check_fixture("yaml");
    assert!(r.tools.iter().all(|t| t.shape == "yaml.bundle-tools"));
    insta::assert_json_snapshot!("registry_yaml", r);
}

#[test]
fn several_sources_share_constants_and_a_root() {
    let queries = QuerySet::builtin(&Lang::ALL).expect("queries");
    let opts =
        ExtractOptions { sources: vec![fixture("go"), fixture("python")], harness: Some("mixed".into()), ..ExtractOptions::default() };
    let x = coroner::registry::extract(&opts, &queries).expect("extraction runs");
    assert_eq!(x.registry.root, "rules/registry/fixtures");
    assert!(x.registry.tools.iter().any(|t| t.file == "go/internal/tools/view.go"));
    assert!(x.registry.tools.iter().any(|t| t.file == "python/agent/tools/bash.py"));
}

#[test]
fn extraction_is_deterministic_across_thread_counts() {
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool").install(|| extract_dir(&fixture("rust")));
    let four = rayon::ThreadPoolBuilder::new().num_threads(4).build().expect("pool").install(|| extract_dir(&fixture("rust")));
    assert_eq!(serde_json::to_string(&one.registry).expect("json"), serde_json::to_string(&four.registry).expect("json"));
}

#[test]
fn a_file_that_does_not_parse_is_reported_with_its_span_and_skipped() {
    let x = extract_dir(&fixture("invalid/source"));
    let r = &x.registry;
    assert_eq!(r.skipped.len(), 1, "{:?}", r.skipped);
    assert_eq!((r.skipped[0].file.as_str(), r.skipped[0].line), ("broken.py", Some(7)));
    // The good file beside it is still read.
    assert_eq!(r.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["bash"]);
    let rendered = coroner::ingest::diag::render_plain(&x.diagnostics[0]);
    insta::assert_snapshot!("registry_invalid_source", rendered);

    let out = coroner(&["registry", "extract", "rules/registry/fixtures/invalid/source", "-o", "-"]);
    assert_eq!(out.status.code(), Some(3), "a skipped file makes the run partial");
    let reg: Registry = serde_json::from_slice(&out.stdout).expect("registry on stdout");
    assert_eq!(reg.tools.len(), 1);
}

#[test]
fn an_invalid_query_fails_at_load_time_pointing_into_the_scm() {
    // Relative to the package root (the tests' working directory), so the rendering does not
    // depend on where the checkout lives.
    let dir = std::path::Path::new("rules/registry/fixtures/invalid/queries");
    let mut set = QuerySet::builtin(&[Lang::Python]).expect("built-ins");
    let err = set.add_dir(dir, &[Lang::Python]).expect_err("the bad query is refused");
    let rendered = coroner::ingest::diag::render_plain(&err);
    assert!(rendered.contains("python.scm:6:"), "{rendered}");
    insta::assert_snapshot!("registry_invalid_query", rendered);

    let out = coroner(&["registry", "extract", "rules/registry/fixtures/python", "--queries", "rules/registry/fixtures/invalid/queries"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("failed to load registry query"));
}

#[test]
fn user_queries_add_to_the_builtins() {
    let dir = tempdir();
    std::fs::write(
        dir.path().join("python.scm"),
        "; a house style: register_tool(\"name\", fn)\n((call function: (identifier) @_f arguments: (argument_list . (string) @name)) @definition.tool\n  (#eq? @_f \"register_tool\")\n  (#set! shape \"house-register\"))\n",
    )
    .expect("write query");
    let src = tempdir();
    std::fs::write(src.path().join("agent.py"), "register_tool(\"deploy\", deploy)\nX = {\"name\": \"bash\", \"parameters\": {}}\n")
        .expect("write");
    let mut set = QuerySet::builtin(&[Lang::Python]).expect("built-ins");
    set.add_dir(dir.path(), &[Lang::Python]).expect("user queries load");
    let opts = ExtractOptions { sources: vec![src.path().to_path_buf()], ..ExtractOptions::default() };
    let x = coroner::registry::extract(&opts, &set).expect("runs");
    let names: Vec<(&str, &str)> = x.registry.tools.iter().map(|t| (t.name.as_str(), t.shape.as_str())).collect();
    assert_eq!(names, [("bash", "python.dict"), ("deploy", "python.house-register")]);
}

#[test]
fn claude_code_capture_imports_as_a_versioned_registry() {
    let Some(file) = corpus("claude-code-tools-capture/tools_2.1.144.json") else { return };
    let opts = ImportOptions { harness: Some("claude-code".into()), version: Some("2.1.144".into()) };
    let r = coroner::registry::import(&file, &opts, None).expect("imports");
    let set = &r.versions["2.1.144"];
    assert_eq!(set.tools.len(), 47);
    assert_eq!(set.tools.iter().filter(|t| t.name.starts_with("mcp__stitch__")).count(), 14);
    assert_eq!(set.tools.iter().filter(|t| !t.name.starts_with("mcp__")).count(), 33);
    let agent = set.tools.iter().find(|t| t.name == "Agent").expect("Agent");
    assert_eq!(agent.line, 2, "each tool keeps the line of its object in the capture");
    let v = Some("2.1.144");
    assert_eq!(r.knows("Bash", v), Knowledge::Known);
    assert_eq!(r.knows("mcp__stitch__get_project", v), Knowledge::Known);
    assert_eq!(r.knows("mcp__stitch__delete_everything", v), Knowledge::Dynamic("mcp__stitch__*".into()));
    assert_eq!(r.knows("mcp__github__create_issue", v), Knowledge::Dynamic("mcp__*".into()));
    assert_eq!(r.knows("bash", v), Knowledge::Unknown { near_miss: Some("Bash".into()) });
    assert_eq!(r.knows("web-fetch", v), Knowledge::Unknown { near_miss: Some("WebFetch".into()) });
    assert_eq!(r.knows("LS", v), Knowledge::Unknown { near_miss: None }, "LS left Claude Code's list before 2.1.144");
    // Without a version, a versions-only registry judges by every version it holds.
    assert_eq!(r.knows("Bash", None), Knowledge::Known);

    // A second version goes into the same registry; each version keeps its own list.
    let dir = tempdir();
    let older = dir.path().join("init.json");
    std::fs::write(&older, r#"{"type":"system","subtype":"init","tools":["Bash","LS","Read"]}"#).expect("write");
    let opts = ImportOptions { harness: None, version: Some("1.0.0".into()) };
    let both = coroner::registry::import(&older, &opts, Some(r)).expect("merges");
    assert_eq!(both.version_names(), ["1.0.0", "2.1.144"]);
    assert_eq!(both.knows("LS", Some("1.0.0")), Knowledge::Known);
    assert!(matches!(both.knows("LS", Some("2.1.144")), Knowledge::Unknown { .. }));
    assert_eq!(both.harness, "claude-code");
}

#[test]
fn import_cli_writes_a_loadable_registry() {
    let Some(file) = corpus("claude-code-tools-capture/tools_2.1.144.json") else { return };
    let dir = tempdir();
    let out_path = dir.path().join("registry.json");
    let f = file.to_string_lossy().into_owned();
    let o = out_path.to_string_lossy().into_owned();
    let out = coroner(&["registry", "import", &f, "--harness", "claude-code", "--version", "2.1.144", "-o", &o]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r = coroner::registry::load(&out_path).expect("loads");
    assert_eq!(r.versions["2.1.144"].tools.len(), 47);
}

/// A coroner JSONL run with the cases `diff` tells apart.
fn sample_run(dir: &Path) -> PathBuf {
    use coroner::model::{DeclaredTool, Role, Step, ToolCall, ToolResult, Trajectory};
    let call =
        |id: &str, name: &str| ToolCall { id: Some(id.into()), name: name.into(), arguments: serde_json::json!({}), raw_arguments: None };
    let result = |id: &str, is_error: bool, unknown: Option<&str>| ToolResult {
        call_id: Some(id.into()),
        is_error,
        unknown_tool: unknown.map(str::to_string),
        ..ToolResult::new("output")
    };
    let mut a = Step::new(Role::Assistant, "");
    a.tool_calls = vec![
        call("1", "execute_bash"),
        call("2", "execute_ipython_cell"),
        call("3", "str-replace-editor"),
        call("4", "mcp__github__create_issue"),
        call("5", "search_the_web"),
    ];
    let mut t = Step::new(Role::Tool, "");
    t.tool_results = vec![
        result("1", false, None),
        result("2", false, None),
        result("3", true, Some("Tool str-replace-editor is not registered")),
        result("4", false, None),
        result("5", true, Some("Tool search_the_web is not registered")),
    ];
    let traj = Trajectory {
        id: "run-1".into(),
        steps: vec![a, t],
        declared_tools: Some(
            ["execute_bash", "execute_ipython_cell", "finish"]
                .iter()
                .map(|n| DeclaredTool { name: (*n).into(), description: None })
                .collect(),
        ),
        ..Trajectory::new("task-1", "openhands", "coroner", 1, Vec::new())
    };
    let path = dir.join("run.jsonl");
    std::fs::write(&path, serde_json::to_string(&traj).expect("json") + "\n").expect("write run");
    path
}

#[test]
fn diff_tells_registry_suspects_from_near_misses_and_rejections() {
    let mut registry = extract_dir(&fixture("python")).registry;
    registry.namespaces.push(coroner::registry::Namespace { pattern: "mcp__*".into(), file: None, line: None, shape: "option".into() });
    let dir = tempdir();
    let run = sample_run(dir.path());
    let (trajs, _) = crate::common::ingest(&[run.as_path()]);
    let d = coroner::registry::diff(&registry, &trajs, None);
    assert_eq!((d.trajectories, d.calls), (1, 5));
    let verdicts: Vec<(&str, Verdict, Option<&str>)> =
        d.absent.iter().map(|a| (a.usage.name.as_str(), a.verdict, a.near_miss.as_deref())).collect();
    assert_eq!(
        verdicts,
        [
            ("mcp__github__create_issue", Verdict::Dynamic, None),
            ("execute_ipython_cell", Verdict::RegistrySuspect, None),
            ("str-replace-editor", Verdict::NearMiss, Some("str_replace_editor")),
            ("search_the_web", Verdict::Rejected, None),
        ]
    );
    assert_eq!(d.exercised.iter().map(|u| (u.name.as_str(), u.ok)).collect::<Vec<_>>(), [("execute_bash", 1)]);
    assert!(d.unused.contains(&"finish".to_string()));
    let declared = d.declared.as_ref().expect("the run declares tools");
    assert_eq!(declared.in_both, ["execute_bash", "finish"]);
    assert_eq!(declared.declared_only.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(), ["execute_ipython_cell"]);

    // The same through the CLI, as a person reads it.
    let reg = dir.path().join("registry.json");
    std::fs::write(&reg, serde_json::to_string(&registry).expect("json")).expect("write registry");
    let out = coroner(&["registry", "diff", &reg.to_string_lossy(), &run.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    insta::assert_snapshot!("registry_diff_table", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn diff_cli_on_a_real_openhands_trajectory() {
    let Some(traj) = corpus("harbor-atif/hello-world.trajectory.json") else { return };
    let dir = tempdir();
    let reg = dir.path().join("registry.json");
    let r = reg.to_string_lossy().into_owned();
    let out = coroner(&["registry", "extract", "rules/registry/fixtures/python", "--harness", "openhands", "-o", &r]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj.to_string_lossy().into_owned();
    let out = coroner(&["registry", "diff", &r, &t, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    // The real trajectory calls str_replace_editor then finish, and declares six tools.
    let exercised: Vec<&str> = d["exercised"].as_array().expect("list").iter().map(|u| u["name"].as_str().unwrap_or("")).collect();
    assert_eq!(exercised, ["finish", "str_replace_editor"]);
    assert_eq!(d["absent"].as_array().map(Vec::len), Some(0));
    let declared_only: Vec<&str> =
        d["declared"]["declared_only"].as_array().expect("list").iter().map(|x| x["name"].as_str().unwrap_or("")).collect();
    assert_eq!(declared_only, ["execute_ipython_cell", "task_tracker"], "declared at run time, absent from this source");
    let out = coroner(&["registry", "diff", &r, &t]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("execute_ipython_cell") && table.contains("exercised"), "{table}");
}

#[test]
fn schema_is_current() {
    let path = root().join("schemas/registry.schema.json");
    let fresh = coroner::registry::schema();
    if std::env::var_os("COR_UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &fresh).expect("write schema");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == fresh,
        "schemas/registry.schema.json is stale: rerun with COR_UPDATE_SCHEMAS=1 cargo test --test tests registry::schema"
    );
}

/// A harness source nested deeper than a thread's stack allows recursion, with a syntax error at
/// the bottom: the error is found and reported with its place, and the process does not abort.
#[test]
fn a_deeply_nested_source_with_an_error_is_diagnosed_without_overflow() {
    let src = tempdir();
    let depth = 50_000;
    std::fs::write(
        src.path().join("deep.py"),
        format!("X = {}1 +{}\nTOOLS = [{{\"name\": \"bash\"}}]\n", "[".repeat(depth), "]".repeat(depth)),
    )
    .expect("write");
    let path = src.path().to_path_buf();
    let got = std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || {
            let set = QuerySet::builtin(&[Lang::Python]).expect("built-ins");
            let opts = ExtractOptions { sources: vec![path], ..ExtractOptions::default() };
            coroner::registry::extract(&opts, &set).map(|x| x.diagnostics.iter().map(|e| e.to_string()).collect::<Vec<_>>())
        })
        .unwrap()
        .join()
        .expect("no stack overflow");
    let errors = got.expect("runs");
    assert!(errors.iter().any(|e| e.contains("deep.py") && e.contains("syntax error")), "{errors:?}");
}
