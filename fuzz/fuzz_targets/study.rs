#![no_main]
// Target `study`: see `coroner::fuzzing::study`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| coroner::fuzzing::study(data));
