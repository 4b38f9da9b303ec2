//! Readers for outcome files: verdicts and statuses joined to trajectories by task id.

pub mod ctrf;
pub mod pytest;
pub mod swebench;
pub mod table;
