//! Reading a log file into exchanges (JSON, JSON Lines, YAML or JSON cassettes), and splitting
//! them into conversations.

use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::value::RawValue;

use super::exchange::{Exchange, body_of, exchange_from, key_of, turns};
use crate::ingest::adapters::shared::common::content_text;
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::source::Source;

/// The top-level list items of a YAML cassette's `interactions`, as byte ranges, for spans.
fn yaml_item_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut in_list = false;
    let mut indent: Option<usize> = None;
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start_matches(' ');
        let ind = line.len() - trimmed.len();
        if trimmed.trim().is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if !in_list {
            if trimmed.starts_with("interactions:") {
                in_list = true;
            }
            continue;
        }
        match indent {
            None if trimmed.starts_with("- ") || trimmed.trim_end() == "-" => {
                indent = Some(ind);
                out.push((start, offset));
            }
            Some(i) if ind == i && (trimmed.starts_with("- ") || trimmed.trim_end() == "-") => out.push((start, offset)),
            Some(i) if ind <= i => break,
            _ => {
                if let Some(last) = out.last_mut() {
                    last.1 = offset;
                }
            }
        }
    }
    out
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn cassette(src: &Source, doc: &Value, item_spans: &[(usize, usize)]) -> Result<Vec<Exchange>, InputError> {
    let items = doc.get("interactions").and_then(Value::as_array).ok_or_else(|| {
        InputError::new(InputErrorKind::Schema, &src.display, "read the cassette: no `interactions` list")
            .with_help("a VCR cassette holds `interactions: [{request, response}]`")
    })?;
    let mut out = Vec::new();
    for (i, it) in items.iter().enumerate() {
        let mut ex = Exchange { key: key_of(it), ..Exchange::default() };
        if let Some(r) = it.get("request") {
            body_of(r, &mut ex, false);
        }
        if let Some(r) = it.get("response") {
            body_of(r, &mut ex, true);
        }
        ex.span = item_spans.get(i).map(|&(s, e)| src.span(0, s, e - s));
        out.push(ex);
    }
    Ok(out)
}

/// Reads every exchange of a file; bad JSON Lines records go to `diags`.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
pub fn read_exchanges(src: &Source, diags: &mut Vec<InputError>) -> Result<Vec<Exchange>, InputError> {
    let ext = src.path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if matches!(ext.as_str(), "yaml" | "yml") {
        let text = src.text()?;
        if let Some(at) = crate::util::yaml_too_deep(text) {
            return Err(crate::ingest::outcomes::swebench::too_deep(src, at));
        }
        let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| {
            let err = InputError::new(InputErrorKind::Syntax, &src.display, format!("parse the YAML cassette: {e}"))
                .with_help("the file is not valid YAML here");
            match e.location() {
                Some(l) => err.at_offset(&src.bytes, l.index(), "here"),
                None => err,
            }
        })?;
        return cassette(src, &yaml_to_json(doc), &yaml_item_ranges(text));
    }
    let text = src.text()?;
    let whole = serde_json::from_str::<&RawValue>(text);
    let jsonl = ext == "jsonl" || whole.as_ref().err().is_some_and(|e| e.to_string().starts_with("trailing characters"));
    if !jsonl {
        let raw = whole.map_err(|e| InputError::from_json(&src.display, &src.bytes, "chat log", &e))?;
        let doc: Value = serde_json::from_str(raw.get()).map_err(|e| InputError::from_json(&src.display, &src.bytes, "chat log", &e))?;
        if doc.get("interactions").is_some() {
            return cassette(src, &doc, &[]);
        }
        let items: Vec<&RawValue> = if raw.get().trim_start().starts_with('[') {
            serde_json::from_str(raw.get()).map_err(|e| InputError::from_json(&src.display, &src.bytes, "chat log", &e))?
        } else {
            vec![raw]
        };
        let mut out = Vec::new();
        for item in items {
            let v: Value =
                serde_json::from_str(item.get()).map_err(|e| InputError::from_json(&src.display, &src.bytes, "chat log entry", &e))?;
            let mut ex = exchange_from(&v).map_err(|problem| {
                let at = src.offset_of(item.get()).unwrap_or(0);
                InputError::new(InputErrorKind::Schema, &src.display, format!("read a chat log entry: {problem}"))
                    .with_help("each entry is {\"request\": {...}, \"response\": {...}} or an OpenAI/Anthropic batch line")
                    .at_offset(&src.bytes, at, problem.clone())
            })?;
            ex.span = src.span_of(0, item.get());
            out.push(ex);
        }
        return Ok(out);
    }
    let mut out: Vec<Exchange> = Vec::new();
    for line in lines::split(src, diags) {
        let v: Value = match lines::parse(src, &line, "chat log line") {
            Ok(v) => v,
            Err(e) => {
                diags.push(e);
                continue;
            }
        };
        match exchange_from(&v) {
            Ok(mut ex) => {
                ex.span = Some(line.span(0));
                if let Some(prev) = out.last_mut().filter(|p| p.key == ex.key && continues(p, &ex)) {
                    prev.forget_history();
                }
                out.push(ex);
            }
            Err(problem) => diags.push(lines::schema_error(src, &line, "a chat log line", &problem)),
        }
    }
    Ok(out)
}

/// Messages compared without the prompt-caching markers harnesses move from call to call.
fn same_message(a: &Value, b: &Value) -> bool {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                Value::Object(o.iter().filter(|(k, _)| *k != "cache_control").map(|(k, v)| (k.clone(), strip(v))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    a == b || strip(a) == strip(b)
}

/// Whether `next` continues the conversation `prev` belongs to.
fn continues(prev: &Exchange, next: &Exchange) -> bool {
    let (Some(p), Some(n)) = (&prev.request, &next.request) else {
        // Responses without requests (batch output) are each their own conversation.
        return false;
    };
    let system =
        |r: &Value| r.get("system").or_else(|| r.get("systemInstruction")).or_else(|| r.get("system_instruction")).map(content_text);
    match (turns(p), turns(n)) {
        (Some(pm), Some(nm)) => {
            !pm.is_empty() && next.req_len() >= prev.req_len() && same_message(&pm[0], &nm[0]) && system(p) == system(n)
        }
        _ => false,
    }
}

/// A YAML document as JSON. Cassettes recorded through aiohttp write header names as tagged
/// `multidict.istr` sequences (`? !!python/object/apply:multidict._multidict.istr [Accept]`),
/// keys JSON cannot have: a key that is not a string is written as its first scalar.
fn yaml_to_json(v: serde_yaml_ng::Value) -> Value {
    use serde_yaml_ng::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(m) => Value::Object(m.into_iter().map(|(k, v)| (yaml_key(k), yaml_to_json(v))).collect()),
        Y::Tagged(t) => yaml_to_json(t.value),
    }
}

fn yaml_key(k: serde_yaml_ng::Value) -> String {
    use serde_yaml_ng::Value as Y;
    match k {
        Y::String(s) => s,
        Y::Tagged(t) => yaml_key(t.value),
        Y::Sequence(items) if !items.is_empty() => items.into_iter().next().map(yaml_key).unwrap_or_default(),
        Y::Null => "null".into(),
        other => match yaml_to_json(other) {
            Value::String(s) => s,
            v => v.to_string(),
        },
    }
}

/// Splits exchanges into conversations: by key when entries carry one, else by continuation.
pub fn conversations(exchanges: Vec<Exchange>) -> Vec<Vec<Exchange>> {
    let mut out: Vec<Vec<Exchange>> = Vec::new();
    if exchanges.iter().any(|e| e.key.is_some()) {
        let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
        for ex in exchanges {
            let k = ex.key.clone().unwrap_or_default();
            match by_key.get(&k) {
                Some(&i) => out[i].push(ex),
                None => {
                    by_key.insert(k, out.len());
                    out.push(vec![ex]);
                }
            }
        }
        return out;
    }
    for ex in exchanges {
        match out.last_mut() {
            Some(conv) if conv.last().is_some_and(|prev| continues(prev, &ex)) => conv.push(ex),
            _ => out.push(vec![ex]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aiohttp_header_keys_become_json_keys() {
        let text = "headers:\n  ? !!python/object/apply:multidict._multidict.istr\n  - Accept\n  : - '*/*'\n  ? [a, b]\n  : 1\n  7: x\n";
        let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).unwrap();
        let v = yaml_to_json(doc);
        assert_eq!(v["headers"]["Accept"][0], "*/*");
        assert_eq!((&v["headers"]["a"], &v["headers"]["7"]), (&serde_json::json!(1), &serde_json::json!("x")));
    }

    #[test]
    fn cassette_items_have_byte_ranges() {
        let text = "interactions:\n- request:\n    body: a\n  response:\n    body: b\n- request:\n    body: c\nversion: 1\n";
        let r = yaml_item_ranges(text);
        assert_eq!(r.len(), 2);
        assert!(text[r[0].0..r[0].1].starts_with("- request:") && text[r[0].0..r[0].1].ends_with("body: b\n"));
        assert_eq!(&text[r[1].0..r[1].1], "- request:\n    body: c\n");
    }
}
