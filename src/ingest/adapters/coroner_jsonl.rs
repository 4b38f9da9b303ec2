//! coroner's own normalized JSONL: one `Trajectory` per line.
//!
//! Any harness can write this directly, and coroner's output can be fed back in: ingesting it
//! gives identical records. Read line by line, so a file of a million records takes the memory
//! of one; a bad line is reported at its line number and the rest are kept.

use std::io::{BufRead, BufReader};

use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::io_error;
use crate::model::Trajectory;

pub struct CoronerJsonl;

impl Adapter for CoronerJsonl {
    fn name(&self) -> &'static str {
        "coroner"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "coroner normalized JSONL (one trajectory per line)"
    }

    /// Lines deserialize into today's `Trajectory`, whose layout is `RECORD_VERSION` 1.
    fn versions(&self) -> &'static str {
        "record_version 1"
    }

    /// A file of coroner JSONL can hold a whole run; records go out as they are read.
    fn streams(&self, _unit: &Unit) -> bool {
        true
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shape = p.jsonl.as_ref().or(p.json.as_ref()).ok_or("not JSON")?;
        if shape.has("record_version") && shape.has("provenance") {
            return marker("record_version and provenance");
        }
        Err("no record_version/provenance".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let shown = &unit.primary.display;
        let f = std::fs::File::open(&unit.primary.path).map_err(|e| io_error(shown, &e))?;
        let mut r = BufReader::with_capacity(1 << 16, f);
        let mut line = Vec::new();
        let mut lineno = 0usize;
        let mut offset = 0usize;
        loop {
            line.clear();
            let n = r.read_until(b'\n', &mut line).map_err(|e| io_error(shown, &e))?;
            if n == 0 {
                break;
            }
            lineno += 1;
            let start = offset;
            offset += n;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Trajectory>(&line) {
                Ok(t) => out.emit(t),
                Err(e) => {
                    out.diagnostics.push(InputError::from_json(shown, &line, "coroner record", &e).on_line(lineno, start));
                }
            }
        }
        if out.emitted == 0 && !out.diagnostics.is_empty() {
            return Err(InputError::new(InputErrorKind::Schema, shown, "read any coroner record: every line was bad"));
        }
        Ok(())
    }
}
