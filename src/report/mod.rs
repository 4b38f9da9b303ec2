//! Report: the study's tables (terminal, Markdown), exports (CSV, Parquet, JSON) and charts.
//! Reporting reads verdicts and never reaches back into ingest or classify.

pub mod chart;
pub mod compare;
pub mod export;
pub mod render;
pub mod tables;
