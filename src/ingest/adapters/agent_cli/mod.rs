//! Agent command-line tools' own session files: Claude Code, Codex CLI, Gemini CLI.

pub mod claude_code;
pub mod codex;
pub mod gemini_cli;
