//! Inspect AI eval logs: `.eval` archives and `.json` logs, one record per sample and epoch.
//!
//! A log holds one task run against one model (`eval.task`, `eval.model`); each sample
//! (`EvalSample` in `inspect_ai/log/_log.py`) is one attempt, epoch `n` being trial `n - 1`.
//! Both containers share the sample reader: [`header`] (what every record of a log shares),
//! [`sample`] (messages and events into steps), [`ended`] (how the sample ended, as signals the
//! `inspect` profile interprets) and [`score`] (the verdict from `scores`).

mod ended;
pub mod eval;
mod eval_log;
mod header;
pub mod json;
mod json_log;
mod sample;
mod score;

pub use eval_log::{InspectEval, read_eval};
pub use json_log::InspectJson;
pub use sample::HARNESS;
