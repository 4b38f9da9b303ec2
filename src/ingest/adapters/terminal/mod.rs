//! Terminal-task harnesses: Harbor trials and ATIF trajectories, Terminal-Bench 1 trials, and
//! the terminal captures of agent CLIs.

pub mod atif;
pub mod harbor;
pub mod terminal_bench;
pub mod terminal_capture;
