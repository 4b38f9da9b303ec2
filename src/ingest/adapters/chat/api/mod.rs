//! Logs of raw chat-API traffic: OpenAI Chat Completions, Anthropic Messages, and Gemini
//! `generateContent` / `streamGenerateContent` (the Gemini API and Vertex AI).
//!
//! Harnesses built directly on a provider API leave no transcript of their own, only the
//! requests and responses: a JSON document or JSON Lines of `{"request", "response"}` pairs,
//! OpenAI batch output lines (`{"custom_id", "response": {"status_code", "body"}}`), Anthropic
//! batch results (`{"custom_id", "result": {"type", "message"}}`), or a VCR cassette (YAML
//! `interactions: [{request: {body | parsed_body}, response: {body | parsed_body, status}}]`,
//! streamed bodies included). Every request repeats the whole history, so a conversation is
//! built once from the last request's messages plus its response; earlier responses only add
//! what the history drops (token counts, the reasoning of that turn). Usage is summed over all
//! responses. Consecutive exchanges belong to one conversation while each request extends the
//! previous one (same opening message, at least as many messages); a `metadata.task_id` or
//! `custom_id` keys conversations explicitly. These logs carry no verdict: the task id is the
//! key or the file stem, which a `--verdicts` file joins on.

mod detect;
mod exchange;
mod read;
mod record;
mod stream;

use serde_json::Value;

pub use detect::{AnthropicMessages, ChatLog, GeminiGenerateContent, OpenAiChat};
use exchange::Exchange;
pub use record::sum_usage;

use super::anthropic as chat_anthropic;
use super::gemini as chat_gemini;
use super::openai as chat_openai;
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Output, Unit};
use crate::ingest::source::Source;
use crate::model::{DeclaredTool, Step, Tokens};

/// The conversation a request carries, and where each of its messages starts among the steps.
#[derive(Debug, Default)]
pub struct History {
    pub steps: Vec<Step>,
    /// `msg_step[i]`: the step holding message `i` of the request.
    pub msg_step: Vec<usize>,
}

/// What one response says.
#[derive(Debug, Default)]
pub struct Reply {
    pub step: Option<Step>,
    /// `finish_reason` / `stop_reason` / `finishReason`.
    pub finish: Option<String>,
    pub tokens: Option<Tokens>,
    pub model: Option<String>,
    pub refusal: Option<String>,
    /// Unix seconds (OpenAI `created`, Vertex AI `createTime`).
    pub created: Option<i64>,
    /// Why the provider refused the prompt itself (Gemini `promptFeedback.blockReason`).
    pub blocked: Option<String>,
    /// What the provider said beside the finish reason (Gemini `finishMessage`, the safety
    /// categories that blocked the reply), for the notes.
    pub finish_message: Option<String>,
}

/// Whose API the log records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Provider {
    /// Harness and adapter name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai-chat",
            Self::Anthropic => "anthropic-messages",
            Self::Gemini => "gemini-generate-content",
        }
    }

    fn history(self, req: &Value) -> History {
        match self {
            Self::OpenAi => chat_openai::history(req),
            Self::Anthropic => chat_anthropic::history(req),
            Self::Gemini => chat_gemini::history(req),
        }
    }

    fn reply(self, body: &Value) -> Reply {
        match self {
            Self::OpenAi => chat_openai::reply(body),
            Self::Anthropic => chat_anthropic::reply(body),
            Self::Gemini => chat_gemini::reply(body),
        }
    }

    /// The tools a request declares.
    fn declared_tools(self, req: &Value) -> Option<Vec<DeclaredTool>> {
        match self {
            Self::Gemini => chat_gemini::declared_tools(chat_gemini::setting(req, "tools", "tools")?),
            _ => declared_tools(req.get("tools")?),
        }
    }
}

/// Declared tools of a request (`tools`: OpenAI functions, Anthropic tools and server tools).
#[must_use]
pub fn declared_tools(tools: &Value) -> Option<Vec<DeclaredTool>> {
    let list = tools.as_array()?;
    Some(
        list.iter()
            .filter_map(|t| {
                if let Some(name) = t.as_str() {
                    return Some(DeclaredTool { name: name.to_string(), description: None });
                }
                let f = t.get("function").filter(|f| f.is_object()).unwrap_or(t);
                let name = f.get("name")?.as_str()?.to_string();
                let description = f
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|d| d.lines().next().unwrap_or_default().to_string())
                    .filter(|d| !d.is_empty());
                Some(DeclaredTool { name, description })
            })
            .collect(),
    )
}

fn stem(path: &std::path::Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for ext in [".jsonl", ".json", ".yaml", ".yml"] {
        if let Some(s) = name.strip_suffix(ext) {
            return s.to_string();
        }
    }
    name
}

/// Parses a chat log into one record per conversation.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn parse_log(unit: &Unit, adapter: Provider, out: &mut Output<'_>) -> Result<(), InputError> {
    let src = Source::read(&unit.primary.path, &unit.primary.display)?;
    let mut diags = Vec::new();
    let exchanges = read::read_exchanges(&src, &mut diags)?;
    let had_diags = !diags.is_empty();
    out.diagnostics.extend(diags);
    if exchanges.is_empty() {
        return Err(if had_diags {
            lines::nothing_readable(&src, "chat log entry", "each line is one {\"request\", \"response\"} pair or a batch line")
        } else {
            InputError::new(InputErrorKind::Schema, &src.display, "read any request or response from the chat log")
                .with_help("the file holds no exchanges")
        });
    }
    // Entries that say nothing of their provider (a failed batch item) take the file's.
    let file_provider = exchanges.iter().find_map(Exchange::provider);
    let convs = read::conversations(exchanges);
    let base = stem(&unit.primary.path);
    let n = convs.len();
    for (k, conv) in convs.into_iter().enumerate() {
        // Bodies that name no provider: the Gemini adapter was chosen for its marker (or by
        // `--format`); the others read them as OpenAI's, as they always have.
        let fallback = if adapter == Provider::Gemini { Provider::Gemini } else { Provider::OpenAi };
        let provider = conv.iter().find_map(Exchange::provider).or(file_provider).unwrap_or(fallback);
        let key = conv.iter().find_map(|e| e.key.clone());
        let task = match (&key, n) {
            (Some(key), _) => key.clone(),
            (None, 1) => base.clone(),
            (None, _) => format!("{base}-{}", k + 1),
        };
        let mut t = record::build(&conv, provider, task, &src);
        t.session_id = key;
        out.emit(t);
    }
    Ok(())
}
