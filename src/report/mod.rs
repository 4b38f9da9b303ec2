//! Report: the study's tables (terminal, Markdown), exports (CSV, Parquet, JSON) and charts,
//! and the sanitizing of untrusted transcript text for every printer.
//! Reporting reads verdicts and never reaches back into ingest or classify.

pub mod chart;
pub mod compare;
pub mod export;
pub mod gate;
pub mod html;
pub mod render;
pub mod sanitize;
pub mod tables;
pub mod tally;
