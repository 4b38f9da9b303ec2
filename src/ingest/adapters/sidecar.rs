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
