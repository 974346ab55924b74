//! The WGSL source of each shader module, composed from the pieces under `kernels/` (WGSL has
//! no include): the lane or shape prelude, the interface both kernels share with the host
//! (`curl_pow_interface.wgsl`), what both state layouts share (`curl_pow_shared.wgsl`: the
//! S-box and the transaction counter writer), the layout itself (`curl_pow.wgsl` in a storage
//! buffer, `curl_pow_workgroup.wgsl` in workgroup memory), the block PoW's counter writer
//! (`block_pow.wgsl`), and the layout's search entry point instantiated twice: `search` on the
//! transaction nonce layout and `block_search` on the block one. Both entry points of a module
//! call the same transform; each piece is written once.

use super::buffers;
use super::workgroup;

const INTERFACE: &str = include_str!("../../../kernels/curl_pow_interface.wgsl");
const SHARED: &str = include_str!("../../../kernels/curl_pow_shared.wgsl");
const STORAGE: &str = include_str!("../../../kernels/curl_pow.wgsl");
const WORKGROUP: &str = include_str!("../../../kernels/curl_pow_workgroup.wgsl");
const BLOCK: &str = include_str!("../../../kernels/block_pow.wgsl");
const STORAGE_ENTRY: &str = include_str!("../../../kernels/search_entry.wgsl");
const WORKGROUP_ENTRY: &str = include_str!("../../../kernels/search_entry_workgroup.wgsl");

/// The entry points of every module and the counter writer each uses: the transaction and
/// the block nonce layouts.
pub(super) const SEARCH_ENTRIES: [(&str, &str); 2] = [
    ("search", "write_counter"),
    ("block_search", "write_block_counter"),
];

/// `template` (a search entry point) named `name`, writing each counter with `writer`.
fn entry(template: &str, name: &str, writer: &str) -> String {
    template
        .replace("fn ENTRY(", &format!("fn {name}("))
        .replace("WRITE_COUNTER(", &format!("{writer}("))
}

/// The module of a layout after its prelude: the shared pieces, the layout, the block
/// writer, and both search entry points from `template`.
fn module(prelude: &str, layout: &str, template: &str) -> String {
    let mut s = format!("{prelude}\n{INTERFACE}\n{SHARED}\n{layout}\n{BLOCK}\n");
    for (name, writer) in SEARCH_ENTRIES {
        s.push_str(&entry(template, name, writer));
        s.push('\n');
    }
    s
}

/// The storage-buffer kernel's module for 64-bit (`lanes64`) or 32-bit lanes.
pub(super) fn storage_module(lanes64: bool) -> String {
    module(buffers::prelude(lanes64), STORAGE, STORAGE_ENTRY)
}

/// The workgroup-memory kernel's module for `coop` invocations per state.
pub(super) fn workgroup_module(coop: u32) -> String {
    module(&workgroup::prelude(coop), WORKGROUP, WORKGROUP_ENTRY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules() -> Vec<String> {
        vec![
            storage_module(false),
            storage_module(true),
            workgroup_module(32),
            workgroup_module(64),
        ]
    }

    #[test]
    fn every_module_has_both_search_entry_points_on_their_layouts() {
        for m in modules() {
            assert!(
                !m.contains("fn ENTRY(") && !m.contains("WRITE_COUNTER("),
                "placeholders left"
            );
            for (name, writer) in SEARCH_ENTRIES {
                let at = m
                    .find(&format!("fn {name}(@builtin"))
                    .unwrap_or_else(|| panic!("no entry point {name}"));
                let body = &m[at..];
                let body = &body[..body.find("\n}\n").expect("the entry point's end")];
                assert!(body.contains(&format!("{writer}(StateRef(")), "{body}");
                assert!(body.contains("atomicLoad(&flag.found)"), "{body}");
            }
        }
    }

    #[test]
    fn each_function_is_written_once() {
        for m in modules() {
            for f in [
                "fn sbox(",
                "fn splat(",
                "fn write_counter(",
                "fn write_block_counter(",
                "fn transform(",
                "fn set_trit(",
            ] {
                assert_eq!(m.matches(&format!("\n{f}")).count(), 1, "{f}");
            }
        }
    }
}
