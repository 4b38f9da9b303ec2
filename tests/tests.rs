//! coroner's integration tests: one binary, one module per area.

mod common;

/// Classification: fixtures and lint of the rules, the doubles, checkable evidence, corpus verdicts.
mod classify;

/// Aider benchmark exercise results and chat histories; the leaderboard YAML is skipped.
mod ingest_aider;
/// Broken, hostile and unknown inputs: quarantined with diagnostics, never a panic.
mod ingest_bad_input;
/// The same inputs give the same bytes, for any thread count; coroner JSONL round-trips.
mod ingest_determinism;
/// Harbor trial directories and ATIF trajectories, on the real corpus.
mod ingest_harbor;
/// mini-swe-agent trajectories: the real v1 run with its SWE-bench report, v2 samples, exit statuses, a batch run layout.
mod ingest_mini_swe_agent;
/// OpenHands V0 event lists (real corpus) and evaluation output.jsonl (samples).
mod ingest_openhands;
/// SWE-agent `.traj` files: the real text-action and function-calling runs, requeried replies, exit statuses, bad input.
mod ingest_swe_agent;
/// Terminal-Bench 1 trials, run metadata and run-level results, on the real corpus and samples.
mod ingest_terminal_bench;
/// The notebooks: the columns they read exist in coroner's outputs; no outputs committed.
mod notebooks;
/// Tool registries: extraction per language and shape, import, diff, bad sources and queries.
mod registry;
/// Study reports: tables against the reference statistics, Markdown, charts, determinism, compare.
mod report;
/// Generated schemas match the types.
mod schema;
/// The statistics library against every row of the reference vectors in ../shared/stats.
mod stats;
