//! A cheap look at a file before choosing its adapter.
//!
//! Detection must not parse a 1 GB log twice, so it reads a bounded prefix and records what a
//! format can be recognized by: the top-level JSON keys (and their children one level down)
//! with their scalar values, whether the prefix is binary, and the first line of JSONL. The JSON
//! part uses serde_json's own parser on the prefix and keeps whatever it saw before the prefix
//! ended, so escapes and nesting are handled exactly as the real parse will.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// How much of a file detection reads.
pub const PROBE_BYTES: usize = 64 * 1024;

/// What detection knows about a file.
#[derive(Debug, Clone)]
pub struct Probe {
    pub path: PathBuf,
    /// File name, lower-cased.
    pub name: String,
    pub size: u64,
    pub prefix: Vec<u8>,
    /// The prefix holds a NUL byte or is not UTF-8 (ignoring a sequence cut at the end).
    pub binary: bool,
    /// Shape of the document if it starts like JSON (`{` or `[`).
    pub json: Option<JsonShape>,
    /// Shape of the first line if the file looks like JSON Lines (several lines, each an object).
    pub jsonl: Option<JsonShape>,
    /// The prefix as text, made on first use: several adapters look into it for one file.
    text: std::sync::OnceLock<String>,
}

/// serde_json's own recursion limit: deeper documents cannot be parsed, so detection says so
/// up front instead of reporting an unknown format.
pub const MAX_DEPTH: usize = 128;

/// Keys seen at the top of a JSON document (`a`), one level down (`a.b`) and, for a top-level
/// array, in its first element (`[].a`, `[].a.b`), each with its value when that is a scalar.
#[derive(Debug, Clone, Default)]
pub struct JsonShape {
    pub top_is_array: bool,
    pub keys: BTreeMap<String, Scalar>,
    /// The prefix ended before the document did (normal for large files).
    pub truncated: bool,
    /// The JSON was invalid inside the prefix: the parser's message, line and column.
    pub error: Option<(String, usize, usize)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
    Object,
    Array,
}

impl JsonShape {
    #[must_use]
    pub fn has(&self, key: &str) -> bool {
        self.keys.contains_key(key)
    }

    #[must_use]
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.keys.get(key) {
            Some(Scalar::Str(s)) => Some(s),
            _ => None,
        }
    }
}

impl Probe {
    /// Reads the prefix of `path` and works out its shape.
    ///
    /// # Errors
    /// When the file cannot be opened or read.
    pub fn read(path: &Path) -> std::io::Result<Self> {
        let mut f = File::open(path)?;
        let size = f.metadata()?.len();
        let mut prefix = Vec::with_capacity(PROBE_BYTES.min(usize::try_from(size).unwrap_or(PROBE_BYTES)));
        (&mut f).take(PROBE_BYTES as u64).read_to_end(&mut prefix)?;
        Ok(Self::from_prefix(path, size, prefix))
    }

    #[must_use]
    pub fn from_prefix(path: &Path, size: u64, prefix: Vec<u8>) -> Self {
        let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
        let cut = size as usize > prefix.len();
        // A JSON document or JSON Lines file with a bad byte somewhere is still that format:
        // its adapter reports the bad line (or byte) precisely, so only NULs or a non-JSON start
        // make invalid UTF-8 "binary" here.
        let utf8_end = std::str::from_utf8(&prefix).map_or_else(|e| e.valid_up_to(), |_| prefix.len());
        let starts_json = matches!(skip_bom_ws(&prefix).first(), Some(b'{' | b'['));
        let binary = memchr::memchr(0, &prefix).is_some() || (!starts_json && is_binary(&prefix, cut));
        let complete = !cut && utf8_end == prefix.len();
        let mut json = None;
        let mut jsonl = None;
        if !binary {
            let body = skip_bom_ws(&prefix[..utf8_end]);
            if matches!(body.first(), Some(b'{' | b'[')) {
                let shape = json_shape(body, complete);
                // A JSON Lines file is invalid JSON right after its first value ends.
                let first_line_end = memchr::memchr(b'\n', body);
                let trailing = shape.error.as_ref().is_some_and(|(m, _, _)| m.starts_with("trailing characters"));
                if trailing && body.first() == Some(&b'{') {
                    let line = &body[..first_line_end.unwrap_or(body.len())];
                    jsonl = Some(json_shape(line, true));
                }
                json = Some(shape);
            }
        }
        Self { path: path.to_path_buf(), name, size, prefix, binary, json, jsonl, text: std::sync::OnceLock::new() }
    }

    /// Offset in the prefix where JSON nesting first went deeper than [`MAX_DEPTH`], if it did.
    /// Worked out when asked (a file no adapter took is being explained), not for every file.
    #[must_use]
    pub fn too_deep_at(&self) -> Option<usize> {
        self.json.as_ref()?;
        deep_offset(&self.prefix)
    }

    #[must_use]
    pub fn ext(&self) -> &str {
        self.name.rsplit_once('.').map_or("", |(_, e)| e)
    }

    /// The prefix as text (lossy), for formats recognized by their first lines.
    #[must_use]
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| String::from_utf8_lossy(&self.prefix).into_owned())
    }

    /// Names of the ancestors of the file, nearest first, lower-cased.
    pub fn parents(&self) -> impl Iterator<Item = String> + '_ {
        self.path.ancestors().skip(1).filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().to_lowercase())
    }
}

/// Where bracket nesting (outside strings) first exceeds [`MAX_DEPTH`]. String bodies, most of
/// the bytes of a transcript, are skipped with `memchr` rather than walked byte by byte.
fn deep_offset(b: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                // To the closing quote, stepping over escapes; a prefix cut inside a string
                // holds no more brackets.
                i += 1;
                loop {
                    let at = i + memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
                    if b[at] == b'"' {
                        i = at + 1;
                        break;
                    }
                    i = at + 2;
                }
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

fn skip_bom_ws(b: &[u8]) -> &[u8] {
    let b = b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b);
    let start = b.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(b.len());
    &b[start..]
}

fn is_binary(prefix: &[u8], cut: bool) -> bool {
    if memchr::memchr(0, prefix).is_some() {
        return true;
    }
    match std::str::from_utf8(prefix) {
        Ok(_) => false,
        // A multi-byte character cut by the prefix boundary is not binary.
        Err(e) => !(cut && e.error_len().is_none()),
    }
}

fn json_shape(body: &[u8], complete: bool) -> JsonShape {
    let mut shape = JsonShape::default();
    let mut de = serde_json::Deserializer::from_slice(body);
    let res = de::Deserializer::deserialize_any(&mut de, Top { shape: &mut shape });
    let res = res.and_then(|()| if complete { de.end() } else { Ok(()) });
    if let Err(e) = res {
        if e.is_eof() && !complete {
            shape.truncated = true;
        } else {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            shape.error = Some((msg, e.line(), e.column()));
        }
    }
    shape
}

struct Top<'a> {
    shape: &'a mut JsonShape,
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object or array")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        visit_keys(map, self.shape, "", 0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.shape.top_is_array = true;
        if seq.next_element_seed(KeysSeed { shape: self.shape, prefix: "[]".into(), depth: 0 })?.is_some() {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
        }
        Ok(())
    }
}

fn visit_keys<'de, A: MapAccess<'de>>(mut map: A, shape: &mut JsonShape, prefix: &str, depth: u8) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<String>()? {
        let path = if prefix.is_empty() { key } else { format!("{prefix}.{key}") };
        if depth == 0 {
            map.next_value_seed(KeysSeed { shape, prefix: path, depth: 1 })?;
        } else {
            let v = map.next_value_seed(ScalarSeed)?;
            shape.keys.insert(path, v);
        }
    }
    Ok(())
}

/// Records a value's scalar form under `prefix`, and its keys when it is an object at depth 0.
struct KeysSeed<'a> {
    shape: &'a mut JsonShape,
    prefix: String,
    depth: u8,
}

impl<'de> DeserializeSeed<'de> for KeysSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeysSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.shape.keys.insert(self.prefix.clone(), Scalar::Object);
        visit_keys(map, self.shape, &self.prefix, self.depth)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.shape.keys.insert(self.prefix, Scalar::Array);
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.shape.keys.insert(self.prefix, Scalar::Str(v.chars().take(200).collect()));
        Ok(())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<(), E> {
        self.visit_str(&v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.shape.keys.insert(self.prefix, Scalar::Num(v));
        Ok(())
    }
    #[expect(clippy::cast_precision_loss, reason = "detection only looks at magnitudes")]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.visit_f64(v as f64)
    }
    #[expect(clippy::cast_precision_loss, reason = "detection only looks at magnitudes")]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.visit_f64(v as f64)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.shape.keys.insert(self.prefix, Scalar::Bool(v));
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.shape.keys.insert(self.prefix, Scalar::Null);
        Ok(())
    }
}

/// A value reduced to its scalar form; containers are skipped.
struct ScalarSeed;

impl<'de> DeserializeSeed<'de> for ScalarSeed {
    type Value = Scalar;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed {
    type Value = Scalar;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Object)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Array)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Str(v.chars().take(200).collect()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Num(v))
    }
    #[expect(clippy::cast_precision_loss, reason = "detection only looks at magnitudes")]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Num(v as f64))
    }
    #[expect(clippy::cast_precision_loss, reason = "detection only looks at magnitudes")]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::Num(v as f64))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-by-byte scan `deep_offset` replaced, kept as its reference.
    fn deep_offset_bytewise(b: &[u8]) -> Option<usize> {
        let mut depth = 0usize;
        let mut in_str = false;
        let mut escaped = false;
        for (i, &c) in b.iter().enumerate() {
            if in_str {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_str = false,
                    _ => {}
                }
                continue;
            }
            match c {
                b'"' => in_str = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Some(i);
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        None
    }

    #[test]
    fn deep_offset_agrees_with_the_bytewise_scan() {
        let deep = "[".repeat(200);
        let mut cases: Vec<String> = vec![
            deep.clone(),
            format!("{{\"a\": \"{}\", \"b\": {deep}", "[".repeat(300)),
            format!("[\"\\\"{deep}\", {deep}"),
            format!("[\"\\\\\", {deep}"),
            format!("{}{}", "[{".repeat(64), "]}".repeat(64)) + &deep,
            "[\"cut inside a string \\".into(),
            "[\"cut after an escape \\".into(),
            String::new(),
        ];
        // Pseudo-random mixes of brackets, quotes, backslashes and text.
        let alphabet = b"[[[{{]}\"\\ab";
        let mut x = 12345u64;
        for _ in 0..500 {
            let mut s = String::new();
            for _ in 0..400 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                s.push(char::from(alphabet[(x >> 33) as usize % alphabet.len()]));
            }
            cases.push(s);
        }
        for c in &cases {
            assert_eq!(deep_offset(c.as_bytes()), deep_offset_bytewise(c.as_bytes()), "{c:?}");
        }
        assert!(cases.iter().filter(|c| deep_offset(c.as_bytes()).is_some()).count() > 3);
    }

    fn probe(text: &str, size: Option<u64>) -> Probe {
        let size = size.unwrap_or(text.len() as u64);
        Probe::from_prefix(Path::new("x/f.json"), size, text.as_bytes().to_vec())
    }

    #[test]
    fn keys_two_levels_deep_with_scalars() {
        let p = probe(
            r#"{"info": {"exit_status": "Submitted", "config": {"a": 1}}, "messages": [1,2], "trajectory_format": "mini-swe-agent-1"}"#,
            None,
        );
        let j = p.json.unwrap();
        assert_eq!(j.str("info.exit_status"), Some("Submitted"));
        assert_eq!(j.keys.get("info.config"), Some(&Scalar::Object));
        assert_eq!(j.keys.get("messages"), Some(&Scalar::Array));
        assert_eq!(j.str("trajectory_format"), Some("mini-swe-agent-1"));
        assert!(!j.truncated && j.error.is_none());
    }

    #[test]
    fn a_cut_prefix_keeps_what_it_saw() {
        let p = probe(r#"{"schema_version": "ATIF-v1.6", "steps": [{"step_id": 1, "mess"#, Some(1 << 20));
        let j = p.json.unwrap();
        assert!(j.truncated);
        assert_eq!(j.str("schema_version"), Some("ATIF-v1.6"));
    }

    #[test]
    fn arrays_report_their_first_element() {
        let p = probe(r#"[{"role": "Orchestrator", "content": "x"}, {"role": "Coder"}]"#, None);
        let j = p.json.unwrap();
        assert!(j.top_is_array);
        assert_eq!(j.str("[].role"), Some("Orchestrator"));
    }

    #[test]
    fn jsonl_is_recognized_by_its_trailing_characters() {
        let p = probe("{\"type\": \"session_meta\"}\n{\"type\": \"x\"}\n", None);
        assert!(p.json.unwrap().error.is_some());
        assert_eq!(p.jsonl.unwrap().str("type"), Some("session_meta"));
    }

    #[test]
    fn nesting_deeper_than_serde_can_parse_is_found() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(probe(&deep, None).too_deep_at(), Some(MAX_DEPTH));
        assert_eq!(probe(r#"{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}"#, None).too_deep_at(), None);
    }

    #[test]
    fn binary_and_cut_utf8() {
        assert!(probe("a\0b", None).binary);
        let mut cut = "é".as_bytes().to_vec();
        cut.truncate(1);
        assert!(!Probe::from_prefix(Path::new("f"), 10, cut.clone()).binary);
        assert!(Probe::from_prefix(Path::new("f"), 1, cut).binary);
    }
}

/// Largest file whose keys detection skims past the probe.
pub const SKIM_MAX_BYTES: u64 = 1 << 30;

impl Probe {
    /// This probe with the top-level keys (and their children one level down) of the whole
    /// document, read past the prefix with every value skipped: a file whose first key holds
    /// megabytes (mini-swe-agent's `info.submission`) is recognized by the keys after it.
    /// `None` when the prefix saw the whole document, it is not a JSON object, or it cannot be
    /// read.
    #[must_use]
    pub fn skimmed(&self) -> Option<Self> {
        let shape = self.json.as_ref().filter(|j| j.truncated && !j.top_is_array)?;
        let mut f = File::open(&self.path).ok()?;
        let mut skim = Skim::default();
        let mut buf = vec![0u8; 1 << 16];
        let mut read = 0u64;
        while read < SKIM_MAX_BYTES {
            let n = f.read(&mut buf).ok()?;
            if n == 0 || !skim.feed(&buf[..n]) {
                break;
            }
            read += n as u64;
        }
        let mut json = shape.clone();
        for (k, v) in skim.keys {
            json.keys.entry(k).or_insert(v);
        }
        Some(Self { json: Some(json), text: std::sync::OnceLock::new(), ..self.clone() })
    }
}

/// A byte-level walk over a JSON object that records member names at depths 1 and 2 with their
/// scalar values and skips everything else, string bodies with `memchr`. Unlike the real parse it
/// keeps an escaped character as written after its backslash (`\n` as `n`) and cuts strings at
/// [`SKIM_KEEP`] bytes: what it keeps are format markers and versions, compared as they are.
#[derive(Default)]
struct Skim {
    /// Open containers: (is an object, the last member name read in it).
    stack: Vec<(bool, Option<String>)>,
    /// Inside a string: whether it is a member name, its first bytes, an escape pending.
    string: Option<(bool, Vec<u8>, bool)>,
    /// An object expects a member name next.
    expect_key: bool,
    /// A number or literal being read at a recorded position.
    literal: Option<(String, Vec<u8>)>,
    keys: Vec<(String, Scalar)>,
}

/// Longest string value kept.
const SKIM_KEEP: usize = 200;

impl Skim {
    /// The recorded name of a value starting now, if its depth is recorded.
    fn path(&self) -> Option<String> {
        match self.stack.as_slice() {
            [(true, Some(k))] => Some(k.clone()),
            [(true, Some(k)), (true, Some(k2))] => Some(format!("{k}.{k2}")),
            _ => None,
        }
    }

    /// Feeds bytes; `false` once the top-level object has closed.
    fn feed(&mut self, b: &[u8]) -> bool {
        let mut i = 0;
        while i < b.len() {
            if let Some((_, kept, escape)) = &mut self.string {
                if *escape {
                    *escape = false;
                    if kept.len() < SKIM_KEEP {
                        kept.push(b[i]);
                    }
                    i += 1;
                    continue;
                }
                let Some(at) = memchr::memchr2(b'"', b'\\', &b[i..]) else {
                    let room = SKIM_KEEP.saturating_sub(kept.len());
                    kept.extend_from_slice(&b[i..b.len().min(i + room)]);
                    return true;
                };
                let room = SKIM_KEEP.saturating_sub(kept.len());
                kept.extend_from_slice(&b[i..(i + at).min(i + room)]);
                i += at;
                if b[i] == b'\\' {
                    *escape = true;
                    i += 1;
                    continue;
                }
                let (is_key, kept, _) = self.string.take().expect("in a string");
                let s = String::from_utf8_lossy(&kept).into_owned();
                if is_key {
                    if let Some(top) = self.stack.last_mut() {
                        top.1 = Some(s);
                    }
                } else if let Some(p) = self.path() {
                    self.keys.push((p, Scalar::Str(s)));
                }
                i += 1;
                continue;
            }
            let c = b[i];
            if let Some((_, lit)) = &mut self.literal {
                if c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+') {
                    lit.push(c);
                    i += 1;
                    continue;
                }
                let (p, lit) = self.literal.take().expect("in a literal");
                let v = match lit.as_slice() {
                    b"true" => Scalar::Bool(true),
                    b"false" => Scalar::Bool(false),
                    b"null" => Scalar::Null,
                    n => std::str::from_utf8(n).ok().and_then(|n| n.parse().ok()).map_or(Scalar::Null, Scalar::Num),
                };
                self.keys.push((p, v));
            }
            match c {
                b'"' => {
                    let is_key = self.expect_key;
                    self.expect_key = false;
                    self.string = Some((is_key, Vec::new(), false));
                }
                b'{' | b'[' => {
                    if let Some(p) = self.path() {
                        self.keys.push((p, if c == b'{' { Scalar::Object } else { Scalar::Array }));
                    }
                    self.stack.push((c == b'{', None));
                    self.expect_key = c == b'{';
                }
                b'}' | b']' => {
                    self.stack.pop();
                    if self.stack.is_empty() {
                        return false;
                    }
                }
                b',' => self.expect_key = self.stack.last().is_some_and(|t| t.0),
                b':' => {}
                c if c.is_ascii_whitespace() => {}
                c => {
                    if let Some(p) = self.path() {
                        self.literal = Some((p, vec![c]));
                    }
                }
            }
            i += 1;
        }
        true
    }
}

#[cfg(test)]
mod skim_tests {
    use super::*;

    /// A mini-swe-agent file as the real run writes it: `info` first, its `submission` far
    /// longer than the probe, the marker fields after it.
    #[test]
    fn keys_after_a_value_longer_than_the_probe_are_found() {
        let big = "diff --git a/x.py b/x.py\\n+\\\"quoted\\\" line\\n".repeat(4000);
        let text = format!(
            r#"{{"info": {{"exit_status": "Submitted", "submission": "{big}", "model_stats": {{"instance_cost": 0.5, "api_calls": 40}}, "mini_version": "1.15.0", "config": {{"agent": {{"step_limit": 250}}}}}}, "messages": [{{"role": "system", "content": "x"}}], "trajectory_format": "mini-swe-agent-1", "instance_id": "a__b-1"}}"#
        );
        assert!(text.len() > PROBE_BYTES * 2);
        let dir = std::env::temp_dir().join(format!("coroner-skim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a__b-1.traj.json");
        std::fs::write(&path, &text).unwrap();
        let probe = Probe::read(&path).unwrap();
        let j = probe.json.as_ref().unwrap();
        assert!(j.truncated && j.has("info.exit_status") && !j.has("info.model_stats"));
        let s = probe.skimmed().unwrap();
        let j = s.json.as_ref().unwrap();
        assert_eq!(j.str("trajectory_format"), Some("mini-swe-agent-1"));
        assert_eq!(j.str("info.mini_version"), Some("1.15.0"));
        assert_eq!(j.keys.get("info.model_stats"), Some(&Scalar::Object));
        assert_eq!(j.keys.get("messages"), Some(&Scalar::Array));
        // Members deeper than two levels are skipped, not recorded.
        assert!(!j.has("info.model_stats.api_calls") && !j.has("info.config.agent"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
