//! Ingest: walk inputs, detect each file's format, parse it with its adapter, join outcome
//! files, and account for every input (ingested, skipped, quarantined).

pub mod adapters;
pub mod detect;
pub mod diag;
pub mod format;
pub mod join;
pub mod manifest;
pub mod ordered;
pub mod outcomes;
pub mod pipeline;
pub mod probe;
pub mod shard;
pub mod source;
pub mod walk;
pub mod writer;

pub use diag::{InputError, InputErrorKind};
pub use pipeline::{FileReport, FileStatus, IngestError, IngestOptions, Summary, run, run_map};
