#![no_main]
// Target `python`: see `coroner::fuzzing::python`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| coroner::fuzzing::python(data));
