#![no_main]

use curlpow_testkit::checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::transaction(data));
