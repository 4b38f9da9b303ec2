//! Benchmarks support: a reproducible corpus generator for scale tests (`coroner gen-corpus`)
//! and the parse floor that coroner's throughput is measured against (`benches/parse_floor.rs`).
//!
//! Nothing here runs in `cargo test` beyond a small generated corpus; `bench/run.sh` drives
//! the 2 GB runs and writes BENCHMARKS.md.

pub mod corpus;
pub mod floor;
pub mod typed;
