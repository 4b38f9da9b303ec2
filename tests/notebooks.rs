//! The notebooks in `notebooks/` against coroner's documented output schema: every column a
//! notebook declares in its `COLUMNS_USED` cell exists in the output it names (verdicts:
//! `Verdict::COLUMNS`; report tables: the frames the report writes for the sample study;
//! spot-check sheet and key: what `coroner spotcheck sample` writes, or the committed fixture
//! while this build has no such command), and the committed notebooks carry no outputs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use coroner::model::Verdict;
use coroner::report::tables;
use coroner::rules::Rules;
use coroner::study::{Study, run_study};
use serde_json::Value;

use crate::common::{coroner, coroner_in, root, tempdir};

fn notebooks() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("notebooks"))
        .expect("notebooks/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ipynb"))
        .collect();
    v.sort();
    v
}

fn read_notebook(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

fn cell_source(cell: &Value) -> String {
    match &cell["source"] {
        Value::String(s) => s.clone(),
        Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The `COLUMNS_USED = {...}` literal of the notebook's first code cell, parsed as JSON after
/// dropping comment lines and trailing commas (so ordinary Python formatting is accepted).
fn columns_used(path: &Path) -> BTreeMap<String, Vec<String>> {
    let nb = read_notebook(path);
    let first =
        nb["cells"].as_array().unwrap().iter().find(|c| c["cell_type"] == "code").unwrap_or_else(|| panic!("{}: no code cell", name(path)));
    let src = cell_source(first);
    let start = src
        .find("COLUMNS_USED = {")
        .unwrap_or_else(|| panic!("{}: the first code cell must declare COLUMNS_USED = {{...}}; it is:\n{src}", name(path)))
        + "COLUMNS_USED = ".len();
    let (mut depth, mut in_str, mut end) = (0usize, false, None);
    for (i, ch) in src[start..].char_indices() {
        match ch {
            '"' => in_str = !in_str,
            '{' | '[' if !in_str => depth += 1,
            '}' | ']' if !in_str => {
                depth -= 1;
                if depth == 0 {
                    end = Some(start + i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let literal = &src[start..end.unwrap_or_else(|| panic!("{}: COLUMNS_USED is not closed", name(path)))];
    let no_comments: String = literal.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
    let mut json = String::new();
    let chars: Vec<char> = no_comments.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ',' && chars[i + 1..].iter().find(|c| !c.is_whitespace()).is_some_and(|n| *n == ']' || *n == '}') {
            continue;
        }
        json.push(c);
    }
    serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("{}: COLUMNS_USED is not a JSON-compatible literal ({e}):\n{literal}", name(path)))
}

/// The documented schema of the report's tables: `schemas/report-tables.json`.
const REPORT_SCHEMA: &str = "schemas/report-tables.json";

/// The columns (name, type) of every table the report writes, built in-process from the
/// sample study, as `schemas/report-tables.json` documents them.
fn report_tables_schema() -> String {
    let rules = Rules::load(None).expect("built-in rules");
    let (study, arms) = Study::load(&root().join("samples/study/study.toml")).expect("sample study");
    let mut diagnostics = Vec::new();
    let run = run_study(study.title, &arms, &rules, &[], None, &mut diagnostics, None).expect("sample study runs");
    let r = tables::build(&run, &rules);
    let cols = |df: polars::prelude::DataFrame| -> Value {
        Value::Array(
            df.columns().iter().map(|c| serde_json::json!({ "name": c.name().to_string(), "type": c.dtype().to_string() })).collect(),
        )
    };
    let doc = serde_json::json!({
        "$comment": "The columns of the tables `coroner report --out DIR` writes as CSV, Parquet and JSON (arms, failure_modes, mechanics, per_task), in order, with their polars types. Generated from the types by `COR_UPDATE_SCHEMAS=1 cargo test schema`; tests/notebooks.rs fails when it is stale or a notebook uses a column it lacks.",
        "tables": {
            "arms": cols(r.arms_frame().unwrap()),
            "failure_modes": cols(r.failure_modes_frame().unwrap()),
            "mechanics": cols(r.mechanics_frame().unwrap()),
            "per_task": cols(r.tasks_frame().unwrap()),
        }
    });
    serde_json::to_string_pretty(&doc).unwrap() + "\n"
}

/// The columns of every report table, from the documented schema.
fn report_columns() -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(root().join(REPORT_SCHEMA)).expect("the report tables schema is committed");
    let doc: Value = serde_json::from_str(&text).expect("the report tables schema is JSON");
    doc["tables"]
        .as_object()
        .expect("tables")
        .iter()
        .map(|(t, cols)| (t.clone(), cols.as_array().into_iter().flatten().filter_map(|c| c["name"].as_str().map(String::from)).collect()))
        .collect()
}

#[test]
fn schema_of_the_report_tables_is_current() {
    let fresh = report_tables_schema();
    let path = root().join(REPORT_SCHEMA);
    if std::env::var_os("COR_UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(on_disk == fresh, "{REPORT_SCHEMA} is stale: run `COR_UPDATE_SCHEMAS=1 cargo test schema` and commit it");
}

/// Sheet columns, key item fields and key strata fields of a sheet and key.
fn spotcheck_columns(sheet: &Path, key: &Path) -> BTreeMap<String, Vec<String>> {
    let mut r = csv::Reader::from_path(sheet).unwrap_or_else(|e| panic!("{}: {e}", sheet.display()));
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let key: Value = serde_json::from_str(&std::fs::read_to_string(key).unwrap()).unwrap();
    let fields = |list: &Value| -> Vec<String> {
        let set: BTreeSet<String> =
            list.as_array().into_iter().flatten().filter_map(Value::as_object).flat_map(|o| o.keys().cloned()).collect();
        set.into_iter().collect()
    };
    BTreeMap::from([
        ("sheet".to_string(), header),
        ("key".to_string(), fields(&key["items"])),
        ("key_strata".to_string(), fields(&key["strata"])),
    ])
}

#[test]
fn committed_notebooks_carry_no_outputs() {
    let nbs = notebooks();
    assert!(nbs.len() >= 2, "expected the notebooks in notebooks/, found {nbs:?}");
    for path in &nbs {
        let nb = read_notebook(path);
        assert_eq!(nb["nbformat"], 4, "{}", name(path));
        let cells = nb["cells"].as_array().unwrap();
        assert!(cells.iter().any(|c| c["cell_type"] == "code"), "{}: no code cell", name(path));
        for (i, c) in cells.iter().enumerate() {
            if c["cell_type"] == "code" {
                assert_eq!(c["outputs"], Value::Array(vec![]), "{} cell {i}: outputs committed; clear them", name(path));
                assert_eq!(c["execution_count"], Value::Null, "{} cell {i}: execution count committed; clear it", name(path));
            }
            assert!(
                c.get("attachments").is_none_or(|a| a.as_object().is_some_and(serde_json::Map::is_empty)),
                "{} cell {i}: attachments",
                name(path)
            );
            assert!(c["metadata"].get("execution").is_none(), "{} cell {i}: execution timing committed", name(path));
        }
        assert!(nb["metadata"].get("widgets").is_none(), "{}: widget state committed", name(path));
    }
}

/// Where the columns of each output come from, for the comparison.
struct Schemas {
    report: BTreeMap<String, Vec<String>>,
    /// `(what, columns per output)` for each sheet-and-key source.
    spot: Vec<(String, BTreeMap<String, Vec<String>>)>,
}

impl Schemas {
    fn build(tmp: &Path) -> Self {
        let fixtures = root().join("notebooks/fixtures");
        let mut spot = vec![(
            "the committed fixture".to_string(),
            spotcheck_columns(&fixtures.join("spotcheck-sheet.csv"), &fixtures.join("spotcheck-key.json")),
        )];
        if coroner(&["spotcheck", "--help"]).status.success() {
            let (sheet, key) = (tmp.join("sheet.csv"), tmp.join("key.json"));
            let (sheet_arg, key_arg) = (sheet.display().to_string(), key.display().to_string());
            let out = coroner_in(
                &root(),
                &[
                    "spotcheck",
                    "sample",
                    "samples/study/arm-a",
                    "samples/study/arm-b",
                    "--per-class",
                    "2",
                    "--seed",
                    "1",
                    "-o",
                    &sheet_arg,
                    "--key",
                    &key_arg,
                    "-q",
                ],
            );
            assert!(out.status.success(), "coroner spotcheck sample: {}", String::from_utf8_lossy(&out.stderr));
            spot.push(("coroner spotcheck sample".to_string(), spotcheck_columns(&sheet, &key)));
        } else {
            eprintln!("SKIPPED: this coroner has no `spotcheck`; sheet and key columns are checked against the fixture only");
        }
        Self { report: report_columns(), spot }
    }

    /// Every declared column that an output lacks, and every declared output coroner does not
    /// write, as messages; with the number of (column, source) pairs checked.
    fn problems(&self, notebook: &str, used: &BTreeMap<String, Vec<String>>) -> (Vec<String>, usize) {
        let (mut problems, mut checked) = (Vec::new(), 0);
        for (output, cols) in used {
            let sources: Vec<(String, Vec<String>)> = match output.as_str() {
                "verdicts" => vec![("Verdict::COLUMNS".into(), Verdict::COLUMNS.iter().map(|s| (*s).to_string()).collect())],
                "arms" | "failure_modes" | "mechanics" | "per_task" => {
                    vec![(format!("{REPORT_SCHEMA} ({output})"), self.report[output.as_str()].clone())]
                }
                "sheet" | "key" | "key_strata" => self.spot.iter().map(|(from, m)| (from.clone(), m[output.as_str()].clone())).collect(),
                other => {
                    problems.push(format!("{notebook}: COLUMNS_USED names `{other}`, which is not one of coroner's outputs"));
                    continue;
                }
            };
            for (from, have) in sources {
                let missing: Vec<&String> = cols.iter().filter(|c| !have.contains(c)).collect();
                if !missing.is_empty() {
                    problems.push(format!("{notebook}: uses {output} columns {missing:?} that {from} does not have (it has {have:?})"));
                }
                checked += cols.len();
            }
        }
        (problems, checked)
    }
}

#[test]
fn the_columns_notebooks_use_exist_in_coroners_outputs() {
    let tmp = tempdir();
    let schemas = Schemas::build(tmp.path());
    let (mut problems, mut checked) = (Vec::new(), 0);
    for path in notebooks() {
        let used = columns_used(&path);
        assert!(!used.is_empty(), "{}: COLUMNS_USED is empty", name(&path));
        let (p, n) = schemas.problems(&name(&path), &used);
        problems.extend(p);
        checked += n;
    }
    assert!(problems.is_empty(), "coroner's output schema changed and the notebooks were not updated:\n{}", problems.join("\n"));
    assert!(checked > 40, "only {checked} columns checked");
}

#[test]
fn columns_used_accepts_python_formatting_and_the_check_names_what_is_missing() {
    let tmp = tempdir();
    let nb = tmp.path().join("x.ipynb");
    let cell = "# a comment\nCOLUMNS_USED = {\n    \"verdicts\": [\"trajectory_id\",\n                 \"primary_class\",],\n    # inside\n    \"arms\": [\"arm\", \"pass_rate\"],\n    \"runs\": [\"id\"],\n}\nprint(1)\n";
    let doc =
        serde_json::json!({"nbformat": 4, "cells": [{"cell_type": "markdown", "source": "# t"}, {"cell_type": "code", "source": cell}]});
    std::fs::write(&nb, doc.to_string()).unwrap();
    let used = columns_used(&nb);
    assert_eq!(used["verdicts"], ["trajectory_id", "primary_class"]);
    assert_eq!(used["arms"], ["arm", "pass_rate"]);
    let (problems, _) = Schemas::build(tmp.path()).problems("x.ipynb", &used);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems.iter().any(|p| p.contains("arms columns [\"pass_rate\"]")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.contains("verdicts columns [\"primary_class\"]")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.contains("`runs`")), "{problems:#?}");
}
