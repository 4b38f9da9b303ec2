//! coroner's integration tests: one binary, one module per area.

mod common;

/// Aider benchmark exercise results and chat histories; the leaderboard YAML is skipped.
mod ingest_aider;
/// Broken, hostile and unknown inputs: quarantined with diagnostics, never a panic.
mod ingest_bad_input;
/// OpenAI Chat Completions and Anthropic Messages logs: cassettes, request/response JSONL, batches.
mod ingest_chat_api;
/// Claude Code session transcripts, stream-json output and tool list captures, on the real corpus and samples.
mod ingest_claude_code;
/// Codex CLI rollouts and `codex exec --json` streams of every era, on the real corpus and samples.
mod ingest_codex;
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
/// Generated schemas match the types.
mod schema;
/// The statistics library against every row of the reference vectors in ../shared/stats.
mod stats;
