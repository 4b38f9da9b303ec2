//! The stages composed for every command that reads transcripts: ingest decodes each file into
//! records with their raw signals, interpretation gives the signals meaning with the rules in
//! force, and the caller's map (classification, a writer) runs on the threads that parsed.
//! Commands that classify, show or write records call this, never `ingest` alone, so no record
//! reaches a later stage uninterpreted (`predict` reads only task ids and start times, which
//! need no interpretation, straight from `ingest`).

use crate::ingest::{IngestError, IngestOptions, Summary};
use crate::model::Trajectory;
use crate::rules::Rules;

/// Ingests and interprets, handing every record to `sink` in a deterministic order.
///
/// # Errors
/// As [`crate::ingest::run`].
pub fn run(opts: &IngestOptions, rules: &Rules, sink: &mut dyn FnMut(Trajectory) -> std::io::Result<()>) -> Result<Summary, IngestError> {
    run_map(opts, rules, &|t| t, sink)
}

/// Ingests, interprets and applies `map` to every record inside the parallel parse.
///
/// # Errors
/// As [`crate::ingest::run_map`].
pub fn run_map<T: Send>(
    opts: &IngestOptions,
    rules: &Rules,
    map: &(dyn Fn(Trajectory) -> T + Sync),
    sink: &mut dyn FnMut(T) -> std::io::Result<()>,
) -> Result<Summary, IngestError> {
    // The rules' format mappings are read beside the built-in adapters, unless the caller chose.
    let with_formats;
    let opts = if opts.formats.is_empty() && !rules.formats.is_empty() {
        with_formats = IngestOptions { formats: rules.formats.clone(), ..opts.clone() };
        &with_formats
    } else {
        opts
    };
    crate::ingest::run_map(
        opts,
        &|mut t| {
            crate::interpret::interpret(&mut t, rules);
            map(t)
        },
        sink,
    )
}
