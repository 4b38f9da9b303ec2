//! coroner determines why AI-agent trajectories fail.
//!
//! ```text
//!  inputs ──► ingest ──► Trajectory ──► interpret ──► classify ──► Verdict ──► report / stats / predict / spotcheck
//!  (files,    (detect,     + signals    (harness       ▲
//!   dirs,      decode)                   profiles)     │
//!   zips)                                 ▲         registry
//!                                         └── rules ───┘
//! ```
//!
//! Data flows one way; each stage is a module with one job, and `model` is the contract
//! between them. Only `cli` prints.

#[cfg(feature = "bench")]
pub mod bench;
pub mod classify;
pub mod cli;
pub mod exit;
/// Entry points for the fuzz targets in `fuzz/` and their replay in `cargo test`.
pub mod fuzzing;
pub mod ingest;
pub mod interpret;
pub mod model;
pub mod pipeline;
pub mod predict;
pub mod registry;
pub mod report;
pub mod rules;
pub mod spotcheck;
pub mod stats;
pub mod study;
pub mod util;
