//! `curlpow block-score`: each hex message's block PoW score (Chrysalis/Stardust), no device
//! needed.
//!
//! Two passes over the input ([`crate::input`]): check every line, then score and write.

use std::process::ExitCode;

use anyhow::Result;

use crate::hex_message::{self, EXPECTED, MAX_HEX_LINE};
use crate::input::{changed, Input, InputArg};
use crate::line_reader::Line;
use crate::output::Stdout;

pub fn run(a: InputArg) -> Result<ExitCode> {
    let mut out = Stdout::open()?;
    let mut input = Input::open(&a)?;
    input.check_lines(MAX_HEX_LINE, EXPECTED, |b| hex_message::parse(b).map(drop))?;
    input.for_each_line(MAX_HEX_LINE, |line| {
        let Line::Text { bytes, .. } = line else {
            return Err(changed());
        };
        let msg = hex_message::parse(bytes).map_err(|_| changed())?;
        out.line(curlpow::block::score(&msg))?;
        Ok(())
    })?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
