//! The library's layers, checked from its source: `src/` holds six layer folders, bottom to top
//! `base`, `ternary`, `search`, `backend`, `engine`, `service`. A file may name (`crate::…`) only
//! its own layer and the layers below it, and the top-level modules of one layer
//! (`search::device`, `search::search_job`, …) import each other without a cycle. Only `lib.rs`
//! re-exports at the root, so
//! code inside a layer names what it uses by its full path, never through a root re-export.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const LAYERS: [&str; 6] = ["base", "ternary", "search", "backend", "engine", "service"];

fn layer_index(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

/// The node a source file belongs to: its layer and the layer's child it sits in (`None` for
/// the layer's own `mod.rs`).
fn node_of(rel: &Path) -> Option<(usize, Option<String>)> {
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let layer = layer_index(&parts[0])?;
    let child = match parts.get(1).map(String::as_str) {
        None | Some("mod.rs") => None,
        Some(f) => Some(f.trim_end_matches(".rs").to_owned()),
    };
    Some((layer, child))
}

/// Every `crate::a::b` path named in code (comments and doc comments left out).
fn crate_paths(source: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for line in source.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let ident = |s: &str| -> String {
                s.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            };
            let first = ident(rest);
            let after = &rest[first.len()..];
            let second = after.strip_prefix("::").map(ident);
            out.push((first, second.filter(|s| !s.is_empty())));
        }
    }
    out
}

#[test]
fn layers_import_only_downwards_and_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    crate::common::rust_files(&src, &mut files);
    let mut problems = Vec::new();
    // (layer, child) → children of the same layer it imports
    let mut edges: BTreeMap<(usize, String), BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        if rel.starts_with("bin") || rel == Path::new("lib.rs") {
            continue;
        }
        let Some((layer, child)) = node_of(rel) else {
            problems.push(format!(
                "{}: outside the layer folders {LAYERS:?}",
                rel.display()
            ));
            continue;
        };
        let source = std::fs::read_to_string(file).unwrap();
        for (first, second) in crate_paths(&source) {
            let Some(to) = layer_index(&first) else {
                problems.push(format!(
                    "{}: names `crate::{first}`, a root re-export; name the item's own path",
                    rel.display()
                ));
                continue;
            };
            if to > layer {
                problems.push(format!(
                    "{}: the {} layer imports `crate::{first}`, a layer above it",
                    rel.display(),
                    LAYERS[layer]
                ));
            }
            if let (true, Some(from), Some(target)) = (to == layer, &child, second) {
                if *from != target {
                    edges
                        .entry((layer, from.clone()))
                        .or_default()
                        .insert(target);
                }
            }
        }
    }
    // A cycle among the top-level modules of a layer: depth-first search for a back edge.
    fn visit(
        layer: usize,
        node: &str,
        edges: &BTreeMap<(usize, String), BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        problems: &mut Vec<String>,
    ) {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_owned());
            problems.push(format!(
                "cycle in the {} layer: {}",
                LAYERS[layer],
                cycle.join(" → ")
            ));
            return;
        }
        if !done.insert(node.to_owned()) {
            return;
        }
        path.push(node.to_owned());
        if let Some(next) = edges.get(&(layer, node.to_owned())) {
            for n in next {
                visit(layer, n, edges, path, done, problems);
            }
        }
        path.pop();
    }
    for layer in 0..LAYERS.len() {
        let mut done = BTreeSet::new();
        let starts: Vec<String> = edges
            .keys()
            .filter(|(l, _)| *l == layer)
            .map(|(_, n)| n.clone())
            .collect();
        for start in starts {
            visit(
                layer,
                &start,
                &edges,
                &mut Vec::new(),
                &mut done,
                &mut problems,
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_paths_in_code_only() {
    let paths = crate_paths(
        "use crate::search::device::Device; // crate::engine::x\n/// [`crate::service`]\nlet x = $crate::backend::cpu::f();",
    );
    assert_eq!(
        paths,
        vec![
            ("search".to_owned(), Some("device".to_owned())),
            ("backend".to_owned(), Some("cpu".to_owned())),
        ]
    );
}
