#![no_main]
// Target `shell`: see `coroner::fuzzing::shell`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| coroner::fuzzing::shell(data));
