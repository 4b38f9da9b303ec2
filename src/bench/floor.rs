//! The parse floor: what reading the corpus costs before any understanding of it. Reading the
//! bytes, and serde_json parsing every JSON document (each `.json` file, each JSONL line,
//! each member of an Inspect `.eval` archive, decompressed) into `serde_json::Value` on one
//! thread. coroner's ingest and classify are measured as a ratio to it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::typed::Schema;

/// What kind of file the floor reads, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Json,
    Jsonl,
    Eval,
}

/// Every JSON, JSONL and `.eval` file under `root`, sorted by path.
#[must_use]
pub fn corpus_files(root: &Path) -> Vec<(PathBuf, Kind)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let kind = if name.ends_with(".jsonl") {
                Kind::Jsonl
            } else if name.ends_with(".json") {
                Kind::Json
            } else if name.ends_with(".eval") {
                Kind::Eval
            } else {
                continue;
            };
            out.push((p, kind));
        }
    }
    out.sort();
    out
}

/// One pass over the files.
#[derive(Debug, Clone, Default)]
pub struct Pass {
    pub files: u64,
    /// Bytes on disk.
    pub bytes: u64,
    /// Bytes handed to the JSON parser (`.eval` members decompressed).
    pub parsed_bytes: u64,
    /// JSON documents parsed (files, lines, members).
    pub documents: u64,
    /// Documents that failed to parse (should be none).
    pub errors: u64,
    pub secs: f64,
}

impl Pass {
    /// Megabytes (10^6) of on-disk bytes per second.
    #[must_use]
    pub fn mb_per_s(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "byte counts far below 2^52")]
        let b = self.bytes as f64;
        b / 1e6 / self.secs.max(1e-9)
    }
}

/// Reads every file whole and touches nothing else.
#[must_use]
pub fn read_only(files: &[(PathBuf, Kind)]) -> Pass {
    let t0 = Instant::now();
    let mut p = Pass::default();
    let mut sink = 0u64;
    for (f, _) in files {
        if let Ok(b) = std::fs::read(f) {
            p.files += 1;
            p.bytes += b.len() as u64;
            // Keep the read from being optimized away.
            sink = sink.wrapping_add(u64::from(b.last().copied().unwrap_or(0)));
        }
    }
    std::hint::black_box(sink);
    p.secs = t0.elapsed().as_secs_f64();
    p
}

/// Reads every file and hands each JSON document in it to `parse`, with the typed schema its
/// place implies; counts documents, bytes and the ones `parse` refuses.
fn each_document(files: &[(PathBuf, Kind)], parse: impl Fn(Schema, &[u8]) -> bool) -> Pass {
    let t0 = Instant::now();
    let mut p = Pass::default();
    let doc = |schema: Schema, bytes: &[u8], p: &mut Pass| {
        p.documents += 1;
        p.parsed_bytes += bytes.len() as u64;
        if !parse(schema, bytes) {
            p.errors += 1;
        }
    };
    for (f, kind) in files {
        let Ok(bytes) = std::fs::read(f) else { continue };
        p.files += 1;
        p.bytes += bytes.len() as u64;
        match kind {
            Kind::Json => doc(Schema::Json, &bytes, &mut p),
            Kind::Jsonl => {
                for line in bytes.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)) {
                    doc(Schema::ClaudeLine, line, &mut p);
                }
            }
            Kind::Eval => {
                let Ok(mut zip) = zip::ZipArchive::new(std::io::Cursor::new(&bytes[..])) else {
                    p.errors += 1;
                    continue;
                };
                for i in 0..zip.len() {
                    let Ok(mut m) = zip.by_index(i) else {
                        p.errors += 1;
                        continue;
                    };
                    if !m.name().ends_with(".json") {
                        continue;
                    }
                    let schema = if m.name().starts_with("samples/") { Schema::EvalSample } else { Schema::EvalOther };
                    let mut buf = Vec::with_capacity(usize::try_from(m.size()).unwrap_or(0));
                    if m.read_to_end(&mut buf).is_err() {
                        p.errors += 1;
                        continue;
                    }
                    doc(schema, &buf, &mut p);
                }
            }
        }
    }
    p.secs = t0.elapsed().as_secs_f64();
    p
}

/// Reads every file and parses every JSON document in it into `serde_json::Value`.
#[must_use]
pub fn parse_values(files: &[(PathBuf, Kind)]) -> Pass {
    each_document(files, |_, bytes| std::hint::black_box(serde_json::from_slice::<serde_json::Value>(bytes)).is_ok())
}

/// Reads every file and parses every JSON document in it into the typed structs of
/// [`super::typed`]: the fields a record needs, owned.
#[must_use]
pub fn parse_typed(files: &[(PathBuf, Kind)]) -> Pass {
    each_document(files, |schema, bytes| super::typed::parse(schema, bytes).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_json_lines_and_archives() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), br#"{"a": [1, 2]}"#).unwrap();
        std::fs::write(dir.path().join("b.jsonl"), b"{\"x\": 1}\n\n{\"x\": 2}\n").unwrap();
        std::fs::write(dir.path().join("c.yaml"), b"k: v\n").unwrap();
        {
            use std::io::Write;
            let f = std::fs::File::create(dir.path().join("d.eval")).unwrap();
            let mut z = zip::ZipWriter::new(f);
            let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
            z.start_file("header.json", o).unwrap();
            z.write_all(br#"{"version": 2}"#).unwrap();
            z.start_file("samples/1_epoch_1.json", o).unwrap();
            z.write_all(br#"{"id": 1, "epoch": 1}"#).unwrap();
            z.finish().unwrap();
        }
        let files = corpus_files(dir.path());
        assert_eq!(files.len(), 3);
        let p = parse_values(&files);
        assert_eq!((p.files, p.documents, p.errors), (3, 5, 0));
        assert_eq!(read_only(&files).bytes, p.bytes);
        let t = parse_typed(&files);
        assert_eq!((t.files, t.documents, t.errors, t.parsed_bytes), (3, 5, 0, p.parsed_bytes));
        // A document the typed schema refuses is counted as an error, not skipped.
        std::fs::write(dir.path().join("a.json"), br#"[1, 2]"#).unwrap();
        assert_eq!(parse_typed(&files).errors, 1);
        assert_eq!(parse_values(&files).errors, 0);
    }
}
