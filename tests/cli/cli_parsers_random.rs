//! The fuzz targets' properties (`curlpow_testkit::checks`) on pseudo-random inputs, in the regular test
//! run: the tryte and transaction parsers and the CLI's line reader, a bounded number of cases
//! shaped like what breaks parsers (trytes with a few wrong characters, invisible characters,
//! bad UTF-8, line ends). `scripts/fuzz.sh` runs the same checks under libFuzzer.

use curlpow_testkit::checks;

use crate::common;

use common::Rng;

const PIECES: &[&[u8]] = &[
    b"9",
    b"A",
    b"M",
    b"N",
    b"Z",
    b"a",
    b"0",
    b" ",
    b"\t",
    b"\n",
    b"\r",
    b"\r\n",
    b"\0",
    "\u{a0}".as_bytes(),
    "\u{feff}".as_bytes(),
    "\u{b}".as_bytes(),
    "é".as_bytes(),
    "\u{1F600}".as_bytes(),
    "\u{200b}".as_bytes(),
    b"\xff",
    b"\x80",
    b"\xc3",
    b"\xe2\x82",
    b"\xed\xa0\x80",
];

/// An input of up to `len` pieces, most of them trytes.
fn input(rng: &mut Rng, len: usize) -> Vec<u8> {
    let n = rng.below(len + 1);
    let mut v = Vec::new();
    for _ in 0..n {
        if rng.below(4) == 0 {
            v.extend_from_slice(PIECES[rng.below(PIECES.len())]);
        } else {
            v.push(b"9ABCDEFGHIJKLMNOPQRSTUVWXYZ"[rng.below(27)]);
        }
    }
    v
}

#[test]
fn parsers_hold_their_properties_on_random_inputs() {
    let mut rng = Rng(0x00F0_22ED);
    for _ in 0..20_000 {
        let d = input(&mut rng, 40);
        checks::trytes(&d);
        checks::lines(&d);
    }
    for _ in 0..2_000 {
        let d = input(&mut rng, 12);
        checks::transaction(&d);
    }
    // Whole transactions with a line end, and with one more or one less tryte.
    let tx = "NOPQ".repeat(668) + "ABCDE";
    for tail in ["", "\n", "\r\n", "\n\n", "\r", " ", "9", "\u{feff}"] {
        checks::transaction(format!("{tx}{tail}").as_bytes());
        checks::transaction(format!("{}{tail}", &tx[1..]).as_bytes());
    }
}
