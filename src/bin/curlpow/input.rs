//! Reading the input of `pow`, `hash` and `verify`: one item a line, every bad line named.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use curlpow::Error;

use crate::exit::UsageError;

#[derive(Args)]
pub struct InputArg {
    /// Input file; `-` or nothing for standard input.
    pub file: Option<PathBuf>,
}

/// Read the whole input; a missing file is a usage error.
pub fn read_input(file: &Option<PathBuf>) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    match file {
        Some(p) if p.as_os_str() != "-" => {
            buf = std::fs::read(p)
                .map_err(|e| UsageError(format!("cannot read {}: {e}", p.display())))?;
        }
        _ => {
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("reading standard input")?;
        }
    }
    Ok(buf)
}

/// Non-blank lines with their 1-based numbers; CR and surrounding blanks removed.
fn lines(input: &[u8]) -> Vec<(usize, Result<&str, String>)> {
    input
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, l)| {
            let l = l.trim_ascii();
            if l.is_empty() {
                return None;
            }
            Some((
                i + 1,
                std::str::from_utf8(l).map_err(|e| format!("not UTF-8 text: {e}")),
            ))
        })
        .collect()
}

/// Report every bad line, or return the parsed values.
pub fn parse_all<T>(
    input: &[u8],
    parse: impl Fn(&str) -> Result<T, Error>,
) -> Result<Vec<T>, UsageError> {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (n, l) in lines(input) {
        match l.and_then(|s| parse(s).map_err(|e| e.to_string())) {
            Ok(v) => ok.push(v),
            Err(e) => bad.push(format!("line {n}: {e}")),
        }
    }
    if bad.is_empty() {
        Ok(ok)
    } else {
        let n = bad.len();
        Err(UsageError(format!(
            "{n} bad input line{}:\n  {}",
            if n == 1 { "" } else { "s" },
            bad.join("\n  ")
        )))
    }
}
