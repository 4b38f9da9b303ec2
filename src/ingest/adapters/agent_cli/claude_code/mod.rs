//! Claude Code: session transcripts, `claude -p --output-format stream-json` output, and
//! captures of the tool list it sends to the API.
//!
//! A session transcript (`~/.claude/projects/<project>/<sessionId>.jsonl`) is a tree, not a
//! list: every line has a `uuid` and a `parentUuid`, one assistant message is streamed over
//! several lines (one content block each, sharing `message.id`), parallel tool results hang off
//! the line of the call they answer, a rewind or retry starts a branch, and sub-agents write
//! sidechains (`isSidechain`, `agentId`) into the same file or, in newer versions, into
//! `<sessionId>/subagents/agent-<id>.jsonl` beside it. The main line is the parent chain from the
//! last line back to the root (across compaction boundaries via `logicalParentUuid`); lines
//! hanging off it that are not a new prompt or a new reply (parallel results, harness events)
//! are folded in; true branches (a rewind, a retried reply) are kept in file order as steps with
//! `agent` = `branch:<uuid of the branch's first line>` and named in the notes, so what the
//! session abandoned stays visible without being taken for its main line. Sidechain steps are
//! kept, with `agent` = `sidechain:<agentId or root uuid>`. Transcripts carry no verdict: the task id
//! is the file stem (the session id in Claude Code's own layout) or, for a generic name like
//! `transcript.jsonl`, the directory; `sessionId` is the session id a verdict file may key on.
//! The tool list differs by version, so `version` is kept as the harness version.
//!
//! Reading is split by what it does: `tree` parses the lines and finds the main line, branches
//! and sidechains; `steps` turns lines into steps and reads what the last one says about the
//! end; `session` and `stream` are the two transcript adapters; `capture` reads tool lists.
//! How the run ended is left to interpretation: the adapters record the stream-json `result`
//! subtype, the last reply's stop reason, an API error Claude Code wrote as the last message
//! and a user interrupt as signals, and `rules/harnesses/claude-code.toml` says what they mean.

mod capture;
mod session;
mod steps;
mod stream;
mod tree;

pub use capture::{ToolsCapture, tools_capture};
pub use session::{ClaudeCodeSession, ClaudeCodeSubagentMeta};
pub use stream::ClaudeCodeStream;

const HARNESS: &str = "claude-code";
