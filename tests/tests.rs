//! coroner's integration tests: one binary, one module per area.

mod common;

/// Aider benchmark exercise results and chat histories; the leaderboard YAML is skipped.
mod ingest_aider;
/// Broken, hostile and unknown inputs: quarantined with diagnostics, never a panic.
mod ingest_bad_input;
/// The same inputs give the same bytes, for any thread count; coroner JSONL round-trips.
mod ingest_determinism;
/// Harbor trial directories and ATIF trajectories, on the real corpus.
mod ingest_harbor;
/// OpenHands V0 event lists (real corpus) and evaluation output.jsonl (samples).
mod ingest_openhands;
/// Terminal-Bench 1 trials, run metadata and run-level results, on the real corpus and samples.
mod ingest_terminal_bench;
/// Generated schemas match the types.
mod schema;
/// The statistics library against every row of the reference vectors in ../shared/stats.
mod stats;
