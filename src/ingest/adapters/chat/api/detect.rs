//! Detection of chat-API logs, and the three adapters (one reader, three provider names).

use super::{Provider, parse_log};
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::{JsonShape, Probe};

/// Which provider the file's prefix names, if any.
fn provider_in_text(p: &Probe) -> Option<Provider> {
    let text = p.text();
    if text.contains("api.anthropic.com") || text.contains("/v1/messages") || text.contains("anthropic-version") {
        return Some(Provider::Anthropic);
    }
    if text.contains("/chat/completions") || text.contains("api.openai.com") || text.contains("chat.completion") {
        return Some(Provider::OpenAi);
    }
    // After OpenAI's: Google's hosts serve an OpenAI-compatible `/chat/completions` too.
    if text.contains(":generateContent")
        || text.contains(":streamGenerateContent")
        || text.contains("generativelanguage.googleapis.com")
        || text.contains("publishers/google/models/")
    {
        return Some(Provider::Gemini);
    }
    None
}

/// What detection knows about a JSON(L) chat log from its first entry.
fn json_provider(j: &JsonShape) -> Option<Option<Provider>> {
    let pre = if j.top_is_array { "[]." } else { "" };
    let has = |k: &str| j.has(&format!("{pre}{k}"));
    let pair = has("request") || has("response");
    let batch_out = has("custom_id") && (has("response") || has("result"));
    let batch_in = has("custom_id") && (has("body") || has("params"));
    if !(pair || batch_out || batch_in) {
        return None;
    }
    if j.top_is_array && !pair {
        return None;
    }
    let anthropic = has("response.stop_reason")
        || has("request.system")
        || has("request.anthropic_version")
        || has("result")
        || has("params")
        || j.str(&format!("{pre}response.type")) == Some("message");
    let openai = has("response.choices") || has("response.body") || has("response.status_code") || has("body");
    let gemini = has("request.contents")
        || has("response.candidates")
        || has("response.usageMetadata")
        || has("response.promptFeedback")
        || has("request.systemInstruction")
        || has("request.system_instruction");
    Some(match (anthropic, openai, gemini) {
        (true, false, false) => Some(Provider::Anthropic),
        (false, true, false) => Some(Provider::OpenAi),
        (false, false, true) => Some(Provider::Gemini),
        _ => None,
    })
}

/// Detection shared by both adapters: `Some(provider)` when the prefix names one.
fn sniff_chat(p: &Probe) -> Result<(Option<Provider>, &'static str), String> {
    if matches!(p.ext(), "yaml" | "yml") {
        let text = p.text();
        if !text.lines().any(|l| l.trim_start().starts_with("interactions:")) {
            return Err("YAML without `interactions:` (not a VCR cassette)".into());
        }
        return match provider_in_text(p) {
            Some(pr) => Ok((Some(pr), "VCR cassette of chat API calls")),
            None => Err("a VCR cassette, but not of the OpenAI, Anthropic or Gemini chat APIs".into()),
        };
    }
    let shape = p.jsonl.as_ref().or(p.json.as_ref()).ok_or("not JSON or a YAML cassette")?;
    if shape.has("interactions") && !shape.top_is_array {
        return provider_in_text(p)
            .map(|pr| (Some(pr), "JSON cassette of chat API calls"))
            .ok_or_else(|| "a cassette of another API".into());
    }
    match json_provider(shape) {
        Some(found) => Ok((found.or_else(|| provider_in_text(p)), "request/response pairs or batch lines")),
        None => Err("no request/response pair or batch line".into()),
    }
}

/// A chat-API log of one provider's traffic.
pub struct ChatLog(Provider);

/// OpenAI Chat Completions logs: request/response pairs, batch output, cassettes.
#[expect(non_upper_case_globals, reason = "named like the other adapters, which are unit structs")]
pub const OpenAiChat: ChatLog = ChatLog(Provider::OpenAi);

/// Anthropic Messages logs: request/response pairs, batch results, cassettes.
#[expect(non_upper_case_globals, reason = "named like the other adapters, which are unit structs")]
pub const AnthropicMessages: ChatLog = ChatLog(Provider::Anthropic);

/// Gemini API and Vertex AI `generateContent` / `streamGenerateContent` logs.
#[expect(non_upper_case_globals, reason = "named like the other adapters, which are unit structs")]
pub const GeminiGenerateContent: ChatLog = ChatLog(Provider::Gemini);

impl Adapter for ChatLog {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        match self.0 {
            Provider::OpenAi => "OpenAI Chat Completions log: request/response pairs (JSON, JSONL), batch output, VCR cassettes",
            Provider::Anthropic => "Anthropic Messages log: request/response pairs (JSON, JSONL), batch results, VCR cassettes",
            Provider::Gemini => {
                "Gemini API / Vertex AI generateContent log: request/response pairs (JSON, JSONL), batch lines, VCR cassettes, streamed chunks"
            }
        }
    }

    fn versions(&self) -> &'static str {
        // The wire formats as the API versions in their paths name them; every field the
        // readers use has kept its meaning across those versions.
        match self.0 {
            Provider::OpenAi => "/v1/chat/completions, batch, streamed",
            Provider::Anthropic => "/v1/messages, batches, streamed",
            Provider::Gemini => "API v1/v1beta, Vertex AI v1, streamed",
        }
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        match (self.0, sniff_chat(p)?) {
            (Provider::OpenAi, (Some(Provider::OpenAi), why)) => marker(format!("{why} (OpenAI)")),
            // Nothing in the prefix names the provider: parsing decides from the bodies.
            (Provider::OpenAi, (None, why)) => structure(format!("{why} (provider decided from the bodies)")),
            (Provider::OpenAi, (Some(Provider::Anthropic), _)) => Err("an Anthropic Messages log".into()),
            (Provider::OpenAi, (Some(Provider::Gemini), _)) => Err("a Gemini generateContent log".into()),
            (Provider::Anthropic, (Some(Provider::Anthropic), why)) => marker(format!("{why} (Anthropic)")),
            (Provider::Anthropic, _) => Err("no Anthropic Messages marker".into()),
            (Provider::Gemini, (Some(Provider::Gemini), why)) => marker(format!("{why} (Gemini)")),
            (Provider::Gemini, _) => Err("no Gemini generateContent marker".into()),
        }
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        parse_log(unit, self.0, out)
    }
}
