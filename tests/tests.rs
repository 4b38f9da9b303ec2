//! coroner's integration tests: one binary, one module per area.

mod common;

/// Harbor trial directories and ATIF trajectories, on the real corpus.
mod ingest_harbor;
/// Broken, hostile and unknown inputs: quarantined with diagnostics, never a panic.
mod ingest_bad_input;
/// The same inputs give the same bytes, for any thread count; coroner JSONL round-trips.
mod ingest_determinism;
/// Generated schemas match the types.
mod schema;
/// The statistics library against every row of the reference vectors in ../shared/stats.
mod stats;
