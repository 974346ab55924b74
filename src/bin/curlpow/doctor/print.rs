//! `curlpow doctor`'s output: one line per check (`ok`, `warn` or `fail`, what was found and
//! the fix), then one line of verdict; or, with `--json`, the whole [`Report`].

use anyhow::Result;

use super::{Report, Status};
use crate::output::Stdout;

pub fn text(r: &Report, out: &mut Stdout) -> Result<()> {
    for c in &r.checks {
        let fix = c
            .fix
            .as_deref()
            .filter(|_| c.status != Status::Ok)
            .map(|f| format!(" -- fix: {f}"))
            .unwrap_or_default();
        out.line(format_args!(
            "{:<5} {:<9} {}{fix}",
            c.status.name(),
            c.topic,
            c.message
        ))?;
    }
    let verdict = match (r.gpu_present, r.gpu_usable, r.exit_code) {
        (false, _, _) => "no GPU here: curlpow searches on the CPU",
        (true, true, 0) => "a GPU is usable",
        (true, true, _) => "a GPU is usable, but a check failed",
        (true, false, _) => "a GPU is here but cannot be used: see the fail lines",
    };
    out.line(format_args!(
        "doctor: {verdict} (exit {}){}",
        r.exit_code,
        if r.live.is_none() {
            "; devices not probed"
        } else {
            ""
        }
    ))?;
    Ok(())
}

pub fn json(r: &Report, out: &mut Stdout) -> Result<()> {
    out.line(serde_json::to_string_pretty(r)?)?;
    Ok(())
}
