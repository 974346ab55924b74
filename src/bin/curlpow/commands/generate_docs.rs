//! `curlpow generate-docs DIR` (hidden): the man pages and shell completions of this command
//! line, generated from its own definition, for packages (`scripts/package-deb.sh`).
//!
//! Writes `DIR/man/curlpow.1` and one page per subcommand (`curlpow-pow.1`, ...), and
//! `DIR/completions/curlpow.bash`, `_curlpow` (zsh) and `curlpow.fish`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use clap_complete::Shell;

#[derive(Args)]
pub struct GenerateDocsArgs {
    /// The folder to write `man/` and `completions/` into (created if missing).
    dir: PathBuf,
}

pub fn run(a: GenerateDocsArgs, cmd: clap::Command) -> Result<ExitCode> {
    let man = a.dir.join("man");
    let completions = a.dir.join("completions");
    for d in [&man, &completions] {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    clap_mangen::generate_to(cmd.clone(), &man)
        .with_context(|| format!("writing the man pages into {}", man.display()))?;
    let mut cmd = cmd;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        clap_complete::generate_to(shell, &mut cmd, "curlpow", &completions).with_context(
            || {
                format!(
                    "writing the {shell} completions into {}",
                    completions.display()
                )
            },
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
