//! coroner's integration tests: one binary, one module per area.

mod common;

/// Broken, hostile and unknown inputs: quarantined with diagnostics, never a panic.
mod ingest_bad_input;
/// The same inputs give the same bytes, for any thread count; coroner JSONL round-trips.
mod ingest_determinism;
/// Harbor trial directories and ATIF trajectories, on the real corpus.
mod ingest_harbor;
/// Tool registries: extraction per language and shape, import, diff, bad sources and queries.
mod registry;
/// Generated schemas match the types.
mod schema;
