#![no_main]
// Target `lock`: see `coroner::fuzzing::lock`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| coroner::fuzzing::lock(data));
