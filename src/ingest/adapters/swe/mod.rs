//! SWE-bench harnesses: mini-swe-agent, SWE-agent, OpenHands, and the side files of their runs.

pub mod common;
pub mod mini_swe_agent;
pub mod openhands;
pub mod openhands_completions;
pub mod openhands_sdk;
pub mod openhands_sdk_eval;
pub mod sidecar;
pub mod swe_agent;
