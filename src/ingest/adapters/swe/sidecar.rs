//! Files that sit beside transcripts and are understood but not transcripts themselves:
//! per-call LLM debug logs (LiteLLM's, which terminus writes as `episode-N/debug.json`).
//! Recognizing them keeps them out of quarantine without pretending they are trajectories.

use crate::ingest::format::{Adapter, FileRole, Sniff, marker};
use crate::ingest::probe::Probe;

pub struct LiteLlmLog;

impl Adapter for LiteLlmLog {
    fn name(&self) -> &'static str {
        "litellm-log"
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "LiteLLM per-call debug log (one model call, not a trajectory)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shape = p.json.as_ref().ok_or("not JSON")?;
        if shape.has("litellm_call_id") || (shape.has("litellm_params") && shape.has("call_type")) {
            return marker("litellm_call_id / litellm_params");
        }
        Err("no litellm_call_id".into())
    }
}

/// SWE-agent's per-run and per-instance `*.config.yaml` (the configuration it ran with).
pub struct SweAgentConfig;

impl Adapter for SweAgentConfig {
    fn name(&self) -> &'static str {
        "swe-agent-config"
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "SWE-agent run configuration (*.config.yaml)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        if p.name.ends_with(".config.yaml") || p.name.ends_with(".config.yml") {
            let text = p.text();
            if text.contains("agent:") || text.contains("env:") || text.contains("problem_statement:") {
                return marker("SWE-agent config (agent/env/problem_statement keys)");
            }
        }
        Err("not a *.config.yaml with SWE-agent keys".into())
    }
}
