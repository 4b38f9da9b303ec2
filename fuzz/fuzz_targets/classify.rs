#![no_main]
// Target `classify`: see `coroner::fuzzing::classify`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| coroner::fuzzing::classify(data));
