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
/// Inspect AI logs: the real `.json` log, `.eval` archives (deflate, zstd, a killed run), and damaged archives.
mod ingest_inspect;
/// mini-swe-agent trajectories: the real v1 run with its SWE-bench report, v2 samples, exit statuses, a batch run layout.
mod ingest_mini_swe_agent;
/// OpenHands V0 event lists (real corpus) and evaluation output.jsonl (samples).
mod ingest_openhands;
/// OpenTelemetry GenAI spans: OTLP JSON, a console-exporter list with pre-1.37 names, JSONL with a broken line, verdict joins.
mod ingest_otel;
/// SWE-agent `.traj` files: the real text-action and function-calling runs, requeried replies, exit statuses, bad input.
mod ingest_swe_agent;
/// Terminal-Bench 1 trials, run metadata and run-level results, on the real corpus and samples.
mod ingest_terminal_bench;
/// Generated schemas match the types.
mod schema;
/// The statistics library against every row of the reference vectors in ../shared/stats.
mod stats;
