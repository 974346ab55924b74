//! The README's tables against the code: the command table names every command the binary
//! knows (and no other), the environment table is the one `curlpow::env` renders, every
//! `CURLPOW_*` name in the sources (the library, the command, the C library) is in that table,
//! and the environment is read in one module.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::cli_support::curlpow;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// Every `.rs` file of the library, the command and the C library.
fn sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    crate::common::rust_files(&root().join("src"), &mut files);
    crate::common::rust_files(&root().join("ffi/src"), &mut files);
    files
}

#[test]
fn the_command_table_names_every_command() {
    let out = curlpow().arg("--help").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8(out.stdout).unwrap();
    let known: BTreeSet<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect();
    assert!(known.contains("pow") && known.contains("tune"), "{help}");
    let text = readme();
    let section = text
        .split("## The command line")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the README's command-line section");
    let listed: BTreeSet<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `curlpow "))
        .filter_map(|l| l.split('`').next())
        .map(|c| {
            assert!(
                !c.contains(' '),
                "the command table re-types options ({c:?}): they belong to `curlpow {} --help`",
                c.split(' ').next().unwrap()
            );
            c.to_string()
        })
        .collect();
    assert_eq!(
        listed, known,
        "the README's command table and `curlpow --help` disagree"
    );
}

#[test]
fn the_environment_table_is_generated_from_the_code() {
    let text = readme();
    let start = text
        .find("<!-- env-table")
        .expect("the README's env-table marker");
    let start = start + text[start..].find('\n').unwrap() + 1;
    let end = text
        .find("<!-- /env-table -->")
        .expect("the README's /env-table marker");
    let expected = curlpow::env::markdown_table();
    assert!(
        text[start..end] == expected,
        "the README's environment table differs from src/base/env.rs; it should read:\n{expected}"
    );
}

#[test]
fn every_curlpow_variable_in_the_sources_is_in_the_table() {
    let names: BTreeSet<&str> = curlpow::env::VARS.iter().map(|v| v.name).collect();
    let files = sources();
    let mut missing = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, _) in text.match_indices("\"CURLPOW_") {
            let name: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            // The bare prefix (`"CURLPOW_"`, a filter) names no variable.
            if name.len() > "CURLPOW_".len() && !names.contains(name.as_str()) {
                missing.push(format!("{}: {name}", f.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in curlpow::env::VARS: {missing:#?}"
    );
}

#[test]
fn the_environment_is_read_in_one_module() {
    let files = sources();
    let readers: Vec<String> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains(concat!("env::", "var"))
        })
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert_eq!(
        readers,
        ["src/base/env.rs"],
        "read through curlpow::env instead"
    );
}
