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
//! same diagnostic as before.

use std::ops::Range;

use serde::Deserialize;
use serde::de::IgnoredAny;

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
    ///
    /// # Errors
    /// The value is not valid JSON or does not fit `T`.
    pub fn value<T: Deserialize<'a>>(&mut self) -> Result<(T, Range<usize>), GiveUp> {
        self.skip_ws();
        let start = self.pos;
        let mut stream = serde_json::Deserializer::from_str(&self.text[start..]).into_iter::<T>();
        let v = stream.next().ok_or(GiveUp)?.map_err(|_| GiveUp)?;
        let end = start + stream.byte_offset();
        self.pos = end;
        Ok((v, start..end))
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
            let (key, _) = self.value::<std::borrow::Cow<'a, str>>()?;
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

    /// Calls `item` for each element of the array at the cursor; `item` must read or skip it.
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

    /// The array at the cursor, each item read once as `T`, with the bytes it spans.
    ///
    /// # Errors
    /// Not an array, bad syntax, or an item that does not fit `T`.
    pub fn items<T: Deserialize<'a>>(&mut self) -> Result<Vec<(Range<usize>, T)>, GiveUp> {
        let mut items = Vec::new();
        self.array(|w| {
            let (item, at) = w.value()?;
            items.push((at, item));
            Ok(())
        })?;
        Ok(items)
    }

    /// Nothing but whitespace is left (serde refuses trailing characters).
    ///
    /// # Errors
    /// Bytes remain after the document.
    pub fn end(mut self) -> Result<(), GiveUp> {
        if self.peek().is_none() { Ok(()) } else { Err(GiveUp) }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    /// Items and spans of `doc.messages`, by the walk.
    fn walked(doc: &str) -> Result<Vec<(serde_json::Value, Range<usize>)>, GiveUp> {
        let mut w = JsonWalk::new(doc);
        let mut items = Vec::new();
        let mut seen = false;
        w.object(|w, key| match key {
            "messages" => {
                seen = true;
                w.array(|w| {
                    items.push(w.value()?);
                    Ok(())
                })
            }
            _ => w.skip(),
        })?;
        w.end()?;
        if seen { Ok(items) } else { Err(GiveUp) }
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
