//! Detection of chat-API logs, and the two adapters (one reader, two provider names).

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
    Some(match (anthropic, openai) {
        (true, false) => Some(Provider::Anthropic),
        (false, true) => Some(Provider::OpenAi),
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
            None => Err("a VCR cassette, but not of the OpenAI or Anthropic chat APIs".into()),
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
        }
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        match (self.0, sniff_chat(p)?) {
            (Provider::OpenAi, (Some(Provider::OpenAi), why)) => marker(format!("{why} (OpenAI)")),
            // Nothing in the prefix names the provider: parsing decides from the bodies.
            (Provider::OpenAi, (None, why)) => structure(format!("{why} (provider decided from the bodies)")),
            (Provider::OpenAi, (Some(Provider::Anthropic), _)) => Err("an Anthropic Messages log".into()),
            (Provider::Anthropic, (Some(Provider::Anthropic), why)) => marker(format!("{why} (Anthropic)")),
            (Provider::Anthropic, _) => Err("no Anthropic Messages marker".into()),
        }
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        parse_log(unit, out)
    }
}
