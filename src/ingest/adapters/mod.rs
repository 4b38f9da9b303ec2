//! One adapter per format, and the ordered list detection walks.

pub mod agent_cli;
pub mod aider;
pub mod chat;
pub mod coroner_jsonl;
pub mod inspect;
pub mod magentic_one;
pub mod mapped;
pub mod otel;
pub mod shared;
pub mod swe;
pub mod talos;
pub mod tau2_bench;
pub mod tau_bench;
pub mod terminal;

use super::format::Adapter;
use super::outcomes::{swebench, table};

/// Every adapter, in the order detection prefers them on equal evidence.
#[must_use]
pub fn all() -> &'static [&'static dyn Adapter] {
    &[
        &coroner_jsonl::CoronerJsonl,
        &terminal::harbor::HarborTrial,
        &terminal::atif::Atif,
        &swe::mini_swe_agent::MiniSweAgent,
        &swe::swe_agent::SweAgent,
        &terminal::harbor::HarborJob,
        &swe::sidecar::LiteLlmLog,
        &swe::sidecar::SweAgentConfig,
        // Before the SWE-bench run report: a small Terminal-Bench run-level results.json also
        // has `resolved_ids`, and equal evidence goes to the earlier adapter.
        &terminal::terminal_bench::TerminalBenchTrial,
        &terminal::terminal_bench::TerminalBenchRun,
        &terminal::terminal_bench::TerminalBenchRunMetadata,
        &terminal::terminal_bench::TerminalBenchCapture,
        &terminal::terminal_capture::TerminalCapture,
        &tau_bench::TauBench,
        &tau2_bench::Tau2Bench,
        &agent_cli::gemini_cli::GeminiSession,
        &agent_cli::gemini_cli::GeminiHeadless,
        &agent_cli::gemini_cli::GeminiStream,
        &magentic_one::MagenticOne,
        &talos::TalosStore,
        &talos::TalosSummary,
        &swe::openhands::OpenHandsEvents,
        // Before V0's: an agent-SDK evaluation output.jsonl also has V0's shape, and equal
        // evidence goes to the earlier adapter.
        &swe::openhands_sdk_eval::OpenHandsSdkEval,
        &swe::openhands::OpenHandsEval,
        &swe::openhands_sdk::OpenHandsSdk,
        &swe::openhands_sdk::OpenHandsSdkConversation,
        &inspect::InspectEval,
        &inspect::InspectJson,
        &otel::OtelSpans,
        &aider::AiderResults,
        &aider::AiderChatHistory,
        &aider::ExercismConfig,
        &aider::AiderLeaderboard,
        &agent_cli::claude_code::ClaudeCodeSession,
        &agent_cli::claude_code::ClaudeCodeStream,
        &agent_cli::claude_code::ClaudeCodeSubagentMeta,
        &agent_cli::claude_code::ToolsCapture,
        &agent_cli::codex::CodexRollout,
        &agent_cli::codex::CodexExec,
        // Before the OpenAI chat log, which its prompt and reply also look like.
        &swe::openhands_completions::OpenHandsCompletions,
        &chat::api::OpenAiChat,
        &chat::api::AnthropicMessages,
        &chat::api::GeminiGenerateContent,
        &swebench::SweBenchReport,
        &swebench::SweBenchRunReport,
        &swebench::SweBenchExperimentsResults,
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
