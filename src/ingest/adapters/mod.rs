//! One adapter per format, and the ordered list detection walks.

pub mod aider;
pub mod atif;
pub mod chat_anthropic;
pub mod chat_api;
pub mod chat_openai;
pub mod claude_code;
pub mod codex;
pub mod common;
pub mod coroner_jsonl;
pub mod gemini_cli;
pub mod harbor;
pub mod inspect;
pub mod inspect_eval;
pub mod inspect_json;
pub mod lines;
pub mod magentic_one;
pub mod mini_swe_agent;
pub mod openhands;
pub mod otel;
pub mod sidecar;
pub mod swe_agent;
pub mod talos;
pub mod tau_bench;
pub mod terminal_bench;
pub mod terminal_capture;

use super::format::Adapter;
use super::outcomes::{swebench, table};

/// Every adapter, in the order detection prefers them on equal evidence.
#[must_use]
pub fn all() -> &'static [&'static dyn Adapter] {
    &[
        &coroner_jsonl::CoronerJsonl,
        &harbor::HarborTrial,
        &atif::Atif,
        &mini_swe_agent::MiniSweAgent,
        &swe_agent::SweAgent,
        &harbor::HarborJob,
        &sidecar::LiteLlmLog,
        &sidecar::SweAgentConfig,
        // Before the SWE-bench run report: a small Terminal-Bench run-level results.json also
        // has `resolved_ids`, and equal evidence goes to the earlier adapter.
        &terminal_bench::TerminalBenchTrial,
        &terminal_bench::TerminalBenchRun,
        &terminal_bench::TerminalBenchRunMetadata,
        &terminal_bench::TerminalBenchCapture,
        &terminal_capture::TerminalCapture,
        &tau_bench::TauBench,
        &gemini_cli::GeminiSession,
        &gemini_cli::GeminiHeadless,
        &gemini_cli::GeminiStream,
        &magentic_one::MagenticOne,
        &talos::TalosStore,
        &talos::TalosSummary,
        &openhands::OpenHandsEvents,
        &openhands::OpenHandsEval,
        &inspect::InspectEval,
        &inspect::InspectJson,
        &otel::OtelSpans,
        &aider::AiderResults,
        &aider::AiderChatHistory,
        &aider::ExercismConfig,
        &aider::AiderLeaderboard,
        &claude_code::ClaudeCodeSession,
        &claude_code::ClaudeCodeStream,
        &claude_code::ClaudeCodeSubagentMeta,
        &claude_code::ToolsCapture,
        &codex::CodexRollout,
        &codex::CodexExec,
        &chat_api::OpenAiChat,
        &chat_api::AnthropicMessages,
        &swebench::SweBenchReport,
        &swebench::SweBenchRunReport,
        &swebench::Predictions,
        &swebench::ExitStatuses,
        &table::VerdictTable,
    ]
}

#[must_use]
pub fn by_name(name: &str) -> Option<&'static dyn Adapter> {
    all().iter().copied().find(|a| a.name() == name)
}

#[must_use]
pub fn names() -> Vec<&'static str> {
    all().iter().map(|a| a.name()).collect()
}
