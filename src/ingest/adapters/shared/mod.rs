//! Readers and helpers the adapters share: content parts, JSON-in-string arguments, numbers,
//! and line-by-line JSON streams.

pub mod build;
pub mod common;
pub mod json_walk;
pub mod lines;
pub mod xml_call;
