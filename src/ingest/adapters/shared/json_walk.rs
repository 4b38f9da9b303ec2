//! A JSON document's top-level fields and array items, each deserialized once where it lies,
//! with the byte range it spans.
//!
//! Evidence points at the bytes of each message, so adapters used to read a document twice:
//! once into borrowed `&RawValue` slices (a skip pass over every byte, for the spans) and once
//! more into typed structs. Here serde reads each item in place from a stream deserializer,
//! whose `byte_offset` gives the span, and the walk itself only steps over the few bytes of
//! punctuation between items.
//!
//! The walk is a fast path, not a second parser with its own opinions: any input it does not
//! accept in full (bad syntax, a duplicate or missing field, trailing bytes) makes it give up,
//! and the adapter reads the document the old way, which either yields the same result or the
//! same diagnostic as before. That old reading is here too ([`document`], then [`each_at`]),
//! so both give items in the same shape and one step builder serves either.

use std::ops::Range;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::ingest::diag::InputError;
use crate::ingest::source::Source;

/// The whole file as one JSON document `T` that borrows from it (`Source::json` owns), named
/// `what` in errors: the slow path's first pass.
///
/// # Errors
/// The file is not UTF-8 text or not such a document.
pub fn document<'a, T: Deserialize<'a>>(src: &'a Source, what: &str) -> Result<T, InputError> {
    serde_json::from_str(src.text()?).map_err(|e| InputError::from_json(&src.display, &src.bytes, what, &e))
}

/// Every raw item of a document's array read as `T`, with the bytes it spans: the slow path's
/// second pass. An item that does not fit is an error at its own bytes, named `what`.
///
/// # Errors
/// The first item that does not deserialize.
pub fn each_at<'a, T: Deserialize<'a>>(src: &Source, items: &[&'a RawValue], what: &str) -> Result<Vec<(Range<usize>, T)>, InputError> {
    items
        .iter()
        .map(|raw| {
            let start = src.offset_of(raw.get()).unwrap_or(0);
            let item = serde_json::from_str(raw.get()).map_err(|e| InputError::from_json_at(&src.display, &src.bytes, start, what, &e))?;
            Ok((start..start + raw.get().len(), item))
        })
        .collect()
}

/// The walk met something it does not decide on: the caller reads the document the slow way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GiveUp;

/// A cursor over one JSON document.
pub struct JsonWalk<'a> {
    text: &'a str,
    pos: usize,
}

/// What serde_json takes for whitespace between tokens.
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a> JsonWalk<'a> {
    #[must_use]
    pub fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    fn skip_ws(&mut self) {
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() && is_ws(bytes[self.pos]) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.text.as_bytes().get(self.pos).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), GiveUp> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// The value at the cursor as `T`, read once, with the byte range it spans.
    fn spanned<T: Deserialize<'a>>(&mut self) -> Result<(Range<usize>, T), GiveUp> {
        self.skip_ws();
        let start = self.pos;
        let mut stream = serde_json::Deserializer::from_str(&self.text[start..]).into_iter::<T>();
        let v = stream.next().ok_or(GiveUp)?.map_err(|_| GiveUp)?;
        let end = start + stream.byte_offset();
        self.pos = end;
        Ok((start..end, v))
    }

    /// The value at the cursor as `T`, read once.
    ///
    /// # Errors
    /// The value is not valid JSON or does not fit `T`.
    pub fn value<T: Deserialize<'a>>(&mut self) -> Result<T, GiveUp> {
        self.spanned().map(|(_, v)| v)
    }

    /// Steps over the value at the cursor.
    ///
    /// # Errors
    /// The value is not valid JSON.
    pub fn skip(&mut self) -> Result<(), GiveUp> {
        self.value::<IgnoredAny>().map(|_| ())
    }

    /// Calls `field` with each key of the object at the cursor, in order; `field` must read or
    /// skip the key's value. A key written twice gives up (serde's derived structs refuse
    /// duplicate fields; a map would keep the last: either way the slow path decides).
    ///
    /// # Errors
    /// Not an object, bad syntax, a repeated key, or an error from `field`.
    pub fn object(&mut self, mut field: impl FnMut(&mut Self, &str) -> Result<(), GiveUp>) -> Result<(), GiveUp> {
        self.expect(b'{')?;
        let mut seen: Vec<std::borrow::Cow<'a, str>> = Vec::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(GiveUp);
            }
            let key = self.value::<std::borrow::Cow<'a, str>>()?;
            if seen.contains(&key) {
                return Err(GiveUp);
            }
            self.expect(b':')?;
            field(self, &key)?;
            seen.push(key);
            if !self.more(b'}')? {
                return Ok(());
            }
        }
    }

    /// After a field or an item: a comma (more follow) or `close` (the end), stepped over.
    fn more(&mut self, close: u8) -> Result<bool, GiveUp> {
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(GiveUp),
        }
    }

    /// The array at the cursor, each item read once as `T`, with the bytes it spans.
    ///
    /// # Errors
    /// Not an array, bad syntax, or an item that does not fit `T`.
    pub fn items<T: Deserialize<'a>>(&mut self) -> Result<Vec<(Range<usize>, T)>, GiveUp> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(items);
        }
        loop {
            items.push(self.spanned()?);
            if !self.more(b']')? {
                return Ok(items);
            }
        }
    }

    /// Calls `item` with the cursor at each item of the array at the cursor, in order; `item`
    /// must read or skip the item (an array of objects walked field by field).
    ///
    /// # Errors
    /// Not an array, bad syntax, or an error from `item`.
    pub fn array(&mut self, mut item: impl FnMut(&mut Self) -> Result<(), GiveUp>) -> Result<(), GiveUp> {
        self.expect(b'[')?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            if !self.more(b']')? {
                return Ok(());
            }
        }
    }

    /// Whether the value at the cursor is `null` (then read it with [`Self::skip`]).
    pub fn at_null(&mut self) -> bool {
        self.peek() == Some(b'n')
    }

    /// Nothing but whitespace is left (serde refuses trailing characters).
    ///
    /// # Errors
    /// Bytes remain after the document.
    pub fn end(mut self) -> Result<(), GiveUp> {
        if self.peek().is_none() { Ok(()) } else { Err(GiveUp) }
    }
}

/// Every file under the repository's `roots` whose path ends with `suffix`, for the tests that
/// hold an adapter's one-pass reading to its two-pass one on the samples.
#[cfg(test)]
pub(crate) fn sample_files(roots: &[&str], suffix: &str) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut dirs: Vec<std::path::PathBuf> = roots.iter().map(|r| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(r)).collect();
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("samples are readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                files.push(p);
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items and spans of `doc.messages`, by the walk.
    fn walked(doc: &str) -> Result<Vec<(serde_json::Value, Range<usize>)>, GiveUp> {
        let mut w = JsonWalk::new(doc);
        let mut items = None;
        w.object(|w, key| match key {
            "messages" => {
                items = Some(w.items()?.into_iter().map(|(at, v)| (v, at)).collect());
                Ok(())
            }
            _ => w.skip(),
        })?;
        w.end()?;
        items.ok_or(GiveUp)
    }

    #[derive(serde::Deserialize)]
    struct Doc<'a> {
        #[serde(borrow)]
        messages: Vec<&'a RawValue>,
    }

    /// The same, the old way: borrowed raw slices, then each parsed again.
    fn two_pass(doc: &str) -> Option<Vec<(serde_json::Value, Range<usize>)>> {
        let d: Doc<'_> = serde_json::from_str(doc).ok()?;
        let base = doc.as_ptr() as usize;
        Some(
            d.messages
                .iter()
                .map(|r| {
                    let start = r.get().as_ptr() as usize - base;
                    (serde_json::from_str(r.get()).expect("valid"), start..start + r.get().len())
                })
                .collect(),
        )
    }

    #[test]
    fn items_and_spans_are_those_of_the_two_pass_reading() {
        let docs = [
            r#"{"info": {"a": [1, 2, {"b": "}]"}]}, "messages": [ {"role": "user", "content": "a \"quoted\" ]"} ,{"n": -1.5e3} , 7, "s", null, [] ], "x": true}"#,
            "{\"messages\":[]}",
            "\n {\r\n\t\"mess\\u0061ges\" : [ {} ,\n{\"k\":\"\\u00e9\"} ] }\n ",
            r#"{"messages": [12, 0, -3, 4.5]}"#,
        ];
        for doc in docs {
            assert_eq!(walked(doc).ok(), two_pass(doc), "{doc}");
            let spans = walked(doc).expect("walks");
            for (v, span) in spans {
                assert_eq!(serde_json::from_str::<serde_json::Value>(&doc[span]).expect("a span is one value"), v);
            }
        }
    }

    #[test]
    fn arrays_of_objects_walk_item_by_item_and_null_is_seen() {
        let doc = r#"{"subs": [ {"steps": [1, {"a": "]"}]}, {"steps": []} ], "none": null}"#;
        let mut w = JsonWalk::new(doc);
        let (mut spans, mut nulls) = (Vec::new(), 0);
        w.object(|w, key| match key {
            "subs" => w.array(|w| {
                w.object(|w, key| match key {
                    "steps" => {
                        spans.push(w.items::<serde_json::Value>()?.into_iter().map(|(at, _)| &doc[at]).collect::<Vec<_>>());
                        Ok(())
                    }
                    _ => w.skip(),
                })
            }),
            _ if w.at_null() => {
                nulls += 1;
                w.skip()
            }
            _ => w.skip(),
        })
        .expect("walks");
        w.end().expect("ends");
        assert_eq!(spans, [vec!["1", r#"{"a": "]"}"#], vec![]]);
        assert_eq!(nulls, 1);
        for bad in [r#"{"subs": [{}, ]}"#, r#"{"subs": {}}"#, r#"{"subs": [{} {}]}"#] {
            let mut w = JsonWalk::new(bad);
            let r = w.object(|w, _| w.array(|w| w.object(|w, _| w.skip())));
            assert_eq!(r, Err(GiveUp), "{bad}");
        }
    }

    #[test]
    fn anything_serde_would_refuse_or_read_otherwise_gives_up() {
        let docs = [
            r#"{"messages": [1, 2,]}"#,
            r#"{"messages": [1 2]}"#,
            r#"{"messages": [1], "messages": [2]}"#,
            r#"{"messages": [1]} x"#,
            r#"{"messages": [1]"#,
            r#"{"messages": [{"a": }]}"#,
            r#"{"other": 1}"#,
            r#"["messages"]"#,
            r#"{"messages": [1],}"#,
            r#"{messages: [1]}"#,
            "",
        ];
        for doc in docs {
            assert_eq!(walked(doc), Err(GiveUp), "{doc}");
        }
    }
}
