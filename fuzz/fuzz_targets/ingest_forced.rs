#![no_main]
// Target `ingest_forced`: see `coroner::fuzzing::ingest_forced`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| coroner::fuzzing::ingest_forced(data));
