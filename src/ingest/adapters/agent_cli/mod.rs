//! Agent command-line tools' own session files: Claude Code, Codex CLI, Gemini CLI.

use std::path::Path;

pub mod claude_code;
pub mod codex;
pub mod gemini_cli;

/// File names that say nothing about the task (`transcript.jsonl`, `rollout.jsonl`): the
/// directory does.
const GENERIC_STEMS: &[&str] = &[
    "transcript",
    "session",
    "trajectory",
    "log",
    "output",
    "stream",
    "events",
    "conversation",
    "chat",
    "main",
    "claude",
    "agent",
    "rollout",
];

/// The task a session file is for: its name up to the first dot, or its directory's name when
/// the file's name is a generic one.
fn task_from_path(p: &Path) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.split_once('.').map_or(name.as_str(), |(s, _)| s).to_string();
    if GENERIC_STEMS.contains(&stem.to_ascii_lowercase().as_str())
        && let Some(dir) = p.parent().and_then(Path::file_name)
    {
        return dir.to_string_lossy().into_owned();
    }
    stem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_file_names_take_the_directory() {
        assert_eq!(task_from_path(Path::new("runs/fix-bug/transcript.jsonl")), "fix-bug");
        assert_eq!(task_from_path(Path::new("runs/fix-bug/rollout.jsonl")), "fix-bug");
        assert_eq!(task_from_path(Path::new("p/de3b8b19-5bc0.jsonl")), "de3b8b19-5bc0");
    }
}
