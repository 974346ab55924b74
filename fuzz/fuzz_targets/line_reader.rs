#![no_main]

#[path = "../../src/bin/curlpow/line_reader.rs"]
#[allow(dead_code)]
mod line_reader;
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::lines(data));
