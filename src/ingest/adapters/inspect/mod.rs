//! Inspect AI logs: the sample reader shared by the `.eval` archive and the `.json` log.

pub mod eval;
pub mod json;
pub mod log;
