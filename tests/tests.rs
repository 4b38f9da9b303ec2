//! coroner's integration tests: one binary, one module per area.

mod common;

/// The benchmark corpus generator: each format ingests whole and classifies as built; same seed, same bytes.
#[cfg(feature = "bench")]
mod bench_gen;
/// Classification: fixtures and lint of the rules, the doubles, checkable evidence, corpus verdicts.
mod classify;
/// Formats as data: shipped mappings on their fixtures, a user's mapping, bad mappings, real files.
mod formats;
/// The fuzz targets' seeds and saved crashes replayed through `coroner::fuzzing`: never a panic.
mod fuzz_replay;
/// The hostile-input suite: ZIP bombs, traversal members, deep JSON and YAML, a 2 GiB line, symlink loops, FIFOs, injection.
mod hostile;
/// The HTML report: complete, linked, deterministic, inert on hostile text, and clicked through in Chromium.
mod html_report;
/// Aider benchmark exercise results and chat histories; the leaderboard YAML is skipped.
mod ingest_aider;
/// ATIF v1.7/v1.8 samples: embedded subagents, trajectory_id, llm_call_count, copied context, multimodal parts.
mod ingest_atif;
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
/// Gemini API / Vertex AI generateContent logs: cassettes (plain, SSE, JSON-array streams), batch lines, finish reasons, a real cassette.
mod ingest_gemini_api;
/// Gemini CLI chat sessions (real corpus), the JSONL record stream, headless JSON and text output.
mod ingest_gemini_cli;
/// Harbor trial directories and ATIF trajectories, on the real corpus.
mod ingest_harbor;
/// Inspect AI logs: the real `.json` log, `.eval` archives (deflate, zstd, a killed run), and damaged archives.
mod ingest_inspect;
/// AutoGen Magentic-One logs on the real corpus with a verdict file, a wrapped sample, bad input.
mod ingest_magentic_one;
/// mini-swe-agent trajectories: the real v1 run with its SWE-bench report, v2 samples, exit statuses, a batch run layout.
mod ingest_mini_swe_agent;
/// OpenHands V0 event lists (real corpus) and evaluation output.jsonl (samples).
mod ingest_openhands;
mod ingest_openhands_sdk;
/// OpenTelemetry GenAI spans: OTLP JSON, a console-exporter list with pre-1.37 names, JSONL with a broken line, verdict joins.
mod ingest_otel;
/// SWE-agent `.traj` files: the real text-action and function-calling runs, requeried replies, exit statuses, bad input.
mod ingest_swe_agent;
/// talos SQLite run stores and run summaries (samples written from its source), corrupt stores.
mod ingest_talos;
/// tau2-bench results: both layouts from samples, real runs from the mirror, classification, detection beside tau-bench v1, bad input.
mod ingest_tau2_bench;
/// tau-bench results: the real retail subset and a ReAct sample; bad results cost only themselves.
mod ingest_tau_bench;
/// Terminal-Bench 1 trials, run metadata and run-level results, on the real corpus and samples.
mod ingest_terminal_bench;
/// Terminal captures: cleaning, mini-swe-agent CLI steps in Terminal-Bench trials (real and samples), cut captures.
mod ingest_terminal_capture;
/// Verdict files given with `--verdicts`: the sb-cli run report, `results_summary.csv`-style tables.
mod ingest_verdicts;
/// Interpretation: the harness profiles' tables, their fixtures and lint, the hooks.
mod interpret;
/// The notebooks: the columns they read exist in coroner's outputs; no outputs committed.
mod notebooks;
/// Pre-registered predictions: verdicts, exit codes, broken and late seals, retraction, JUnit.
mod predict;
/// Samples shaped like real failed runs, one per hard-case decision: class, flags and evidence steps.
mod real_shapes;
/// Tool registries: extraction per language and shape, import, diff, bad sources and queries.
mod registry;
/// Study reports: tables against the reference statistics, Markdown, charts, determinism, compare.
mod report;
/// `coroner rules`: the list, and explain for classes, harness profiles with their interpretation tables, single entries.
mod rules;
/// Generated schemas match the types.
mod schema;
/// `--shard K/N`: shards union into the unsharded run, records and accounting alike.
mod shard;
/// `coroner show`: evidence marked, folding, choosing a trajectory, a hostile transcript neutralized.
mod show;
/// `coroner spotcheck`: seeded stratified blind samples, scores against the kappa vectors, audits of labels.
mod spotcheck;
/// The statistics library against every row of the reference vectors in ../shared/stats.
mod stats;
/// Every sample and corpus verdict is as before the interpretation redesign, or a listed change with its reason.
mod verdicts_unchanged;
/// Write-back: --emit atif round trip (still valid ATIF, same verdict) and --emit scout's scan.
mod write_back;
