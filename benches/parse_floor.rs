//! The parse floor of a corpus, for BENCHMARKS.md: reading the bytes alone, then serde_json
//! parsing every JSON document into `serde_json::Value`, then into typed structs of the fields a
//! record needs (`coroner::bench::typed`), on one thread. Prints JSON.
//!
//! `cargo bench --bench parse_floor -- DIR [--passes N]` (bench/run.sh runs it); the fastest
//! of N passes is reported for each, after one untimed pass that warms the page cache.

use coroner::bench::floor::{Pass, corpus_files, parse_typed, parse_values, read_only};

fn main() {
    let mut dir = None;
    let mut passes = 2usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            // `cargo bench` passes this to harness-less benches.
            "--bench" => {}
            "--passes" => passes = args.next().and_then(|n| n.parse().ok()).unwrap_or(passes),
            _ => dir = Some(std::path::PathBuf::from(a)),
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: parse_floor DIR [--passes N]");
        std::process::exit(2);
    };
    let files = corpus_files(&dir);
    let _ = read_only(&files);
    let best = |f: &dyn Fn() -> Pass| (0..passes.max(1)).map(|_| f()).min_by(|a, b| a.secs.total_cmp(&b.secs)).unwrap_or_default();
    let read = best(&|| read_only(&files));
    let parse = best(&|| parse_values(&files));
    let typed = best(&|| parse_typed(&files));
    let show = |p: &Pass| {
        serde_json::json!({
            "files": p.files,
            "bytes": p.bytes,
            "parsed_bytes": p.parsed_bytes,
            "documents": p.documents,
            "errors": p.errors,
            "secs": p.secs,
            "mb_per_s": p.mb_per_s(),
        })
    };
    let out = serde_json::json!({ "dir": dir.display().to_string(), "passes": passes, "read": show(&read), "parse_value": show(&parse), "parse_typed": show(&typed) });
    println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
}
