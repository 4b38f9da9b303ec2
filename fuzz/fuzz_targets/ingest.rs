#![no_main]
// Target `ingest`: see `coroner::fuzzing::ingest`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| coroner::fuzzing::ingest(data));
