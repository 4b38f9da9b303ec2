//! The `.json` adapter: the same `EvalLog` written as one JSON document, read whole when it is
//! small and streamed sample by sample (see [`super::json`]) when it is not.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::header::{LogContext, RawHeader, RawPlan, RawSpec};
use super::json;
use super::sample::{SampleSource, sample};
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::SourceFile;

/// Parses one sample held in `src` (a whole `.eval` member, or a slice of a `.json` log), with
/// its diagnostics placed in that source.
fn emit_sample(raw: &str, at: &SampleSource<'_>, ctx: &LogContext, adapter: &str, out: &mut Output<'_>, what: &str) {
    match sample(raw, at, ctx, adapter) {
        Ok(t) => out.emit(t),
        Err(e) => {
            let base = at.src.offset_of(raw).unwrap_or(0);
            out.diagnostics.push(InputError::from_json_at(&at.src.display, &at.src.bytes, base, what, &e));
        }
    }
}

/// The top of a `.json` log: header fields and the samples as raw slices.
#[derive(Deserialize)]
struct RawJsonLog<'a> {
    #[serde(default)]
    version: Option<u32>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    eval: Option<RawSpec>,
    #[serde(default)]
    plan: Option<RawPlan>,
    #[serde(borrow, default)]
    samples: Option<Vec<&'a RawValue>>,
}

/// Inspect `.json` logs (the same `EvalLog`, written as one JSON document).
pub struct InspectJson;

impl Adapter for InspectJson {
    fn name(&self) -> &'static str {
        "inspect-json"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Inspect AI .json eval log (EvalLog: eval, plan, results, samples)"
    }

    /// The header's `version` is read as 2 when absent (`header.rs`), as the real log has it.
    fn versions(&self) -> &'static str {
        "log version 2"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = p.json.as_ref().filter(|j| !j.top_is_array) else { return Err("not a JSON object".into()) };
        let run = j.has("eval.run_id") || j.has("eval.eval_id") || j.has("eval.created");
        if j.has("eval.task") && j.has("eval.model") && run {
            return marker("EvalLog with eval.task, eval.model and eval.run_id");
        }
        // `eval.model` follows `eval.dataset`, whose `sample_ids` list can outgrow the probe in
        // a large log: the task and run id, then a cut, are enough.
        if j.has("eval.task") && run && j.truncated {
            return marker("EvalLog with eval.task and eval.run_id (the probe ended before eval.model)");
        }
        Err("no eval.task / eval.model / eval.run_id".into())
    }

    /// A log of many samples: records go out one at a time, beside the file's bytes.
    fn streams(&self, _unit: &Unit) -> bool {
        true
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let size = std::fs::metadata(&unit.primary.path).map(|m| m.len()).unwrap_or(0);
        if size > json::STREAM_ABOVE {
            return parse_json_streaming(&unit.primary.path, &unit.primary.display, self.name(), out);
        }
        parse_json_whole(&unit.primary.path, &unit.primary.display, self.name(), out)
    }
}

/// A `.json` log read whole: exact excerpts in diagnostics, one pass.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn parse_json_whole(path: &std::path::Path, display: &str, adapter: &str, out: &mut Output<'_>) -> Result<(), InputError> {
    let src = Source::read(path, display)?;
    let text = src.text()?;
    let log: RawJsonLog<'_> =
        serde_json::from_str(text).map_err(|e| InputError::from_json(&src.display, &src.bytes, "Inspect eval log", &e))?;
    let header = RawHeader { version: log.version, status: log.status, eval: log.eval, plan: log.plan };
    let ctx = LogContext::from_header(header, "json");
    let at = SampleSource { src: &src, file_ix: 0, files: vec![src.provenance("transcript")] };
    for raw in log.samples.iter().flatten() {
        emit_sample(raw.get(), &at, &ctx, adapter, out, "Inspect sample");
    }
    Ok(())
}

/// A `.json` log too large to hold whole: header and sample ranges from a byte-level scan,
/// then one sample at a time (see [`inspect_json`]).
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn parse_json_streaming(path: &std::path::Path, display: &str, adapter: &str, out: &mut Output<'_>) -> Result<(), InputError> {
    let scanned = json::scan(path, display)?;
    let mut header = String::from("{");
    for (i, (k, v)) in scanned.header.iter().enumerate() {
        if i > 0 {
            header.push(',');
        }
        header.push_str(&serde_json::to_string(k).unwrap_or_default());
        header.push(':');
        header.push_str(&String::from_utf8_lossy(v));
    }
    header.push('}');
    let header: RawHeader =
        serde_json::from_str(&header).map_err(|e| InputError::from_json(display, header.as_bytes(), "Inspect log header", &e))?;
    let ctx = LogContext::from_header(header, "json");
    let file = SourceFile { path: display.to_string(), sha256: scanned.sha256.clone(), role: "transcript".into() };
    let mut f = std::fs::File::open(path).map_err(|e| InputError::new(InputErrorKind::Io, display, format!("open the file: {e}")))?;
    for &(start, len, line) in &scanned.samples {
        let moved = |e: InputError| e.on_line(usize::try_from(line).unwrap_or(usize::MAX), usize::try_from(start).unwrap_or(usize::MAX));
        let src = match json::read_range(&mut f, path, display, start, len) {
            Ok(s) => s,
            Err(e) => {
                out.diagnostics.push(e);
                continue;
            }
        };
        let text = match src.text() {
            Ok(t) => t,
            Err(e) => {
                out.diagnostics.push(moved(e));
                continue;
            }
        };
        let at = SampleSource { src: &src, file_ix: 0, files: vec![file.clone()] };
        match sample(text, &at, &ctx, adapter) {
            Ok(mut t) => {
                json::shift_spans(&mut t, 0, start, line);
                out.emit(t);
            }
            Err(e) => out.diagnostics.push(moved(InputError::from_json(display, &src.bytes, "Inspect sample", &e))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Trajectory;

    /// Records of a `.json` log read whole and streamed.
    fn both_ways(path: &std::path::Path) -> (Vec<String>, Vec<String>) {
        let run = |stream: bool| {
            let mut got = Vec::new();
            let mut emit = |t: Trajectory| got.push(serde_json::to_string(&t).unwrap());
            let mut out = Output::new(&mut emit);
            if stream {
                parse_json_streaming(path, "log.json", "inspect-json", &mut out).unwrap();
            } else {
                parse_json_whole(path, "log.json", "inspect-json", &mut out).unwrap();
            }
            let diags: Vec<(Option<usize>, String)> = out.diagnostics.iter().map(|d| (d.line, d.message.clone())).collect();
            drop(out);
            got.extend(diags.into_iter().map(|d| format!("{d:?}")));
            got
        };
        (run(false), run(true))
    }

    #[test]
    fn a_streamed_json_log_gives_the_records_the_whole_reader_gives() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log.json");
        let sample = |id: u32, extra: &str, end: &str| {
            format!(
                r#"{{"id": {id}, "epoch": 1, "uuid": "u{id}", "input": "go",
  "messages": [
    {{"role": "user", "content": "count the lines"}},
    {{"role": "assistant", "content": "I'll look.", "tool_calls": [{{"id": "c{id}", "function": "bash", "arguments": {{"cmd": "wc -l f"}}}}]}},
    {{"role": "tool", "content": "3 f", "tool_call_id": "c{id}", "function": "bash"}},
    {{"role": "assistant", "content": "3{extra}"}}
  ],
  {end}"scores": {{"match": {{"value": "C"}}}}}}"#
            )
        };
        // `results` after the samples and a bad sample among good ones: both readers report it
        // at the same line and keep the others.
        let body = format!(
            "{{\"version\": 2, \"status\": \"success\",\n \"eval\": {{\"run_id\": \"r\", \"created\": \"2026-03-01T10:00:00+00:00\", \"task\": \"t\", \"model\": \"m\", \"dataset\": {{}}, \"config\": {{}}}},\n \"samples\": [{}, {}, {{\"id\": [1, 2], \"epoch\": \"x\"}}],\n \"results\": {{\"total_samples\": 3}}}}\n",
            sample(1, "", ""),
            // The end of the second, on a later line of the file, moves with it.
            sample(2, " \\\"lines\\\"", "\"limit\": {\"type\": \"message\", \"limit\": 4},\n  \"error\": {\"message\": \"boom\"},\n  ")
        );
        std::fs::write(&p, body).unwrap();
        let (whole, streamed) = both_ways(&p);
        assert_eq!(whole.len(), 3, "two records and one diagnostic: {whole:?}");
        assert_eq!(whole, streamed);
        assert!(whole[1].contains(r#""signals":{"statuses":[{"field":"sample.limit","text":"message","span""#), "{}", whole[1]);
    }

    #[test]
    fn the_real_json_log_streams_to_the_same_record() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/corpus/inspect-eval-log/2025-05-12T20-27-36-04-00_browser.json");
        if !p.exists() {
            eprintln!("SKIPPED: {} is absent (tests on the real corpus need ../shared)", p.display());
            return;
        }
        let (whole, streamed) = both_ways(&p);
        assert_eq!(whole.len(), 1);
        assert_eq!(whole, streamed);
    }
}
