//! Verdict files given with `--verdicts`: the sb-cli run report and `results_summary.csv`-style
//! tables, joined to the SWE-agent and mini-swe-agent samples by instance id.

use std::collections::BTreeMap;

use coroner::ingest::IngestOptions;
use coroner::model::OutcomeStatus;

use crate::common::{ingest_with, root, samples};

fn outcomes(verdicts: &str) -> BTreeMap<String, (OutcomeStatus, String, Option<String>)> {
    let inputs = vec![samples("swe-agent/text"), samples("swe-agent/fc"), samples("mini-swe-agent/swebench-run")];
    let (ts, summary) = ingest_with(IngestOptions { inputs, verdicts: vec![samples(verdicts)], ..IngestOptions::default() });
    assert_eq!(summary.quarantined_files(), 0);
    ts.into_iter()
        .map(|t| {
            let root = format!("{}/", root().display());
            let field = t.outcome.source.as_ref().map(|s| format!("{}#{}", s.file.trim_start_matches(&root), s.field)).unwrap_or_default();
            (t.task_id, (t.outcome.status, field, t.outcome.detail))
        })
        .collect()
}

#[test]
fn an_sb_cli_report_gives_each_listed_instance_its_result() {
    let got = outcomes("verdicts/sb-cli-report.json");
    let f = |list: &str| format!("samples/verdicts/sb-cli-report.json#{list}");
    assert_eq!(got["pallets__flask-4935"], (OutcomeStatus::Passed, f("resolved_ids"), None));
    assert_eq!(got["tablib__tablib-csv-append"], (OutcomeStatus::Failed, f("unresolved_ids"), None));
    assert_eq!(got["pylint-dev__pylint-7080"], (OutcomeStatus::Failed, f("empty_patch_ids"), Some("empty patch".into())));
    assert_eq!(got["astropy__astropy-14365"], (OutcomeStatus::Errored, f("error_ids"), None));
    // Not in the report: the run's own report.json still decides.
    assert_eq!(got["sympy__sympy-24152"].0, OutcomeStatus::Passed);
    assert!(got["sympy__sympy-24152"].1.ends_with("logs/sympy__sympy-24152/report.json#sympy__sympy-24152.resolved"));
}

#[test]
fn a_results_summary_table_is_read_by_its_instance_and_resolved_columns() {
    let got = outcomes("verdicts/results_summary.csv");
    let f = "samples/verdicts/results_summary.csv#resolved".to_string();
    assert_eq!(got["pallets__flask-4935"], (OutcomeStatus::Failed, f.clone(), None));
    assert_eq!(got["tablib__tablib-csv-append"], (OutcomeStatus::Passed, f.clone(), None));
    assert_eq!(got["pylint-dev__pylint-7080"], (OutcomeStatus::Failed, f, None));
    assert_eq!(got["astropy__astropy-14365"].0, OutcomeStatus::Unknown, "an instance the table does not list stays unknown");
}

/// A leaderboard submission's results.json names the resolved instances; the others of the
/// submission failed, in its folder or given with --verdicts.
#[test]
fn a_submissions_results_json_fails_what_it_does_not_resolve() {
    let dir = samples("swebench-experiments/evaluation/verified/20260301_sample-agent");
    let (ts, summary) = ingest_with(IngestOptions { inputs: vec![dir.clone()], ..IngestOptions::default() });
    assert_eq!(summary.quarantined_files(), 0);
    let by: BTreeMap<String, (OutcomeStatus, String, Option<String>)> = ts
        .into_iter()
        .map(|t| (t.task_id, (t.outcome.status, t.outcome.source.map(|s| s.field).unwrap_or_default(), t.outcome.detail)))
        .collect();
    assert_eq!(by["pallets__flask-4935"], (OutcomeStatus::Passed, "resolved".into(), None));
    assert_eq!(
        by["tablib__tablib-csv-append"],
        (OutcomeStatus::Failed, "resolved".into(), Some("not among the resolved instances".into()))
    );

    let got = outcomes("swebench-experiments/evaluation/verified/20260301_sample-agent/results/results.json");
    assert_eq!(got["pallets__flask-4935"].0, OutcomeStatus::Passed);
    assert_eq!(got["tablib__tablib-csv-append"].0, OutcomeStatus::Failed);
    // The run's own per-instance report.json still decides what it names.
    assert_eq!(got["sympy__sympy-24152"].0, OutcomeStatus::Passed);
}
