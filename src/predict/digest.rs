//! The digest a seal records for a predictions file, and retraction, which must leave it
//! unchanged.
//!
//! The digest is sha256 of the file as `toml_edit` renders it after removing the `retracted`
//! entry of every prediction, together with the comments and blank lines attached in front of
//! that entry. Everything else — claims, rationales, escape clauses, comments, layout — is
//! covered byte for byte, since `toml_edit` renders an unedited document exactly as it read
//! it. `coroner predict retract` adds the entry at the end of its prediction's table, so removing
//! it restores the sealed bytes, and a retraction made by hand in the same place does too.

use toml_edit::{DocumentMut, Item, Value};

use super::load::PREDICTION_KEYS;
use crate::util::sha256_hex;

/// sha256 (hex) of `text` with retractions left out.
///
/// # Errors
/// Text that is not TOML.
pub fn predictions_digest(text: &str) -> Result<String, toml_edit::TomlError> {
    let mut doc: DocumentMut = text.parse()?;
    for_each_prediction(&mut doc, &mut |t| {
        t.remove("retracted");
    });
    Ok(sha256_hex(doc.to_string().as_bytes()))
}

/// Why a retraction could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum RetractError {
    #[error("failed to parse the predictions file: {0}")]
    Toml(#[from] toml_edit::TomlError),
    #[error("failed to find a prediction with id `{id}` (the ids are: {known})")]
    UnknownId { id: String, known: String },
    #[error("failed to retract `{id}`: it was already retracted at {at}")]
    AlreadyRetracted { id: String, at: String },
    #[error("failed to retract `{0}`: the edit would change the sealed digest")]
    WouldBreakSeal(String),
}

/// `text` with `retracted = { note, at }` added to the prediction `id`, everything else kept
/// as it was. The digest of the result equals the digest of `text` (checked).
///
/// # Errors
/// Not TOML, no such id, already retracted.
pub fn retract(text: &str, id: &str, note: &str, at: &str) -> Result<String, RetractError> {
    let mut doc: DocumentMut = text.parse()?;
    let mut ids = Vec::new();
    let mut outcome: Option<Result<(), RetractError>> = None;
    for_each_prediction(&mut doc, &mut |t| {
        let this = t.get("id").and_then(Item::as_str).unwrap_or_default().to_string();
        ids.push(this.clone());
        if this != id || outcome.is_some() {
            return;
        }
        if let Some(r) = t.get("retracted") {
            let at = r.as_table_like().and_then(|r| r.get("at")).and_then(Item::as_str).unwrap_or("an unknown time").to_string();
            outcome = Some(Err(RetractError::AlreadyRetracted { id: id.into(), at }));
            return;
        }
        let mut entry = toml_edit::InlineTable::new();
        entry.insert("note", note.into());
        entry.insert("at", at.into());
        t.insert("retracted", Item::Value(Value::InlineTable(entry)));
        outcome = Some(Ok(()));
    });
    match outcome {
        None => Err(RetractError::UnknownId { id: id.into(), known: ids.join(", ") }),
        Some(Err(e)) => Err(e),
        Some(Ok(())) => {
            let out = doc.to_string();
            if predictions_digest(&out)? != predictions_digest(text)? {
                return Err(RetractError::WouldBreakSeal(id.into()));
            }
            Ok(out)
        }
    }
}

/// Calls `f` on each prediction's table, whether written as `[[prediction]]` or inline.
fn for_each_prediction(doc: &mut DocumentMut, f: &mut dyn FnMut(&mut dyn toml_edit::TableLike)) {
    for key in PREDICTION_KEYS {
        match doc.get_mut(key) {
            Some(Item::ArrayOfTables(a)) => {
                for t in a.iter_mut() {
                    f(t);
                }
            }
            Some(Item::Value(Value::Array(a))) => {
                for v in a.iter_mut() {
                    if let Some(t) = v.as_inline_table_mut() {
                        f(t);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"# my predictions
title = "t"   # a title

[[prediction]]
id = "a"
claim = { metric = "timeouts", arm = "x", comparator = "<=", value = 3 }
rationale = "r"
escape_clause = "e"

[[prediction]]
id = "b"
rationale = "r2"
escape_clause = "e2"
[prediction.claim]
metric = "looping_runs"
arm = "x"
comparator = ">="
value = 1
"#;

    #[test]
    fn a_retraction_keeps_the_digest_and_the_rest_of_the_file() {
        let before = predictions_digest(FILE).unwrap();
        assert_eq!(before, sha256_hex(FILE.as_bytes()), "an unedited file is hashed as it is");
        let once = retract(FILE, "a", "the limit changed", "2026-02-19T10:00:00Z").unwrap();
        assert!(
            once.contains("escape_clause = \"e\"\nretracted = { note = \"the limit changed\", at = \"2026-02-19T10:00:00Z\" }\n"),
            "{once}"
        );
        assert_eq!(predictions_digest(&once).unwrap(), before);
        let twice = retract(&once, "b", "n", "2026-02-19T11:00:00Z").unwrap();
        assert_eq!(predictions_digest(&twice).unwrap(), before);
        assert!(twice.contains("[prediction.claim]"), "{twice}");
        // The only lines added are the two retractions.
        let added: Vec<&str> = twice.lines().filter(|l| !FILE.lines().any(|o| o == *l)).collect();
        assert_eq!(added.len(), 2, "{added:?}");
        assert!(matches!(retract(&once, "a", "n", "t"), Err(RetractError::AlreadyRetracted { .. })));
        assert!(matches!(retract(FILE, "zz", "n", "t"), Err(RetractError::UnknownId { .. })));
    }

    #[test]
    fn a_hand_written_retraction_with_a_comment_keeps_it_too() {
        let by_hand = FILE.replace(
            "escape_clause = \"e\"\n",
            "escape_clause = \"e\"\n# withdrawn: the arm was dropped\nretracted = { note = \"dropped\", at = \"2026-02-19T10:00:00Z\" }\n",
        );
        assert_eq!(predictions_digest(&by_hand).unwrap(), predictions_digest(FILE).unwrap());
        let changed = FILE.replace("value = 3", "value = 4");
        assert_ne!(predictions_digest(&changed).unwrap(), predictions_digest(FILE).unwrap());
        let comment = FILE.replace("# my predictions", "# my revised predictions");
        assert_ne!(predictions_digest(&comment).unwrap(), predictions_digest(FILE).unwrap());
    }
}
