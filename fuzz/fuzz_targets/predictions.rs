#![no_main]
// Target `predictions`: see `coroner::fuzzing::predictions`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| coroner::fuzzing::predictions(data));
