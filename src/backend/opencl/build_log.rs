//! The OpenCL program build log: kept (trimmed) for display, and the resource lines NVIDIA's
//! compiler prints with `-cl-nv-verbose` (its PTX assembler's report: registers, stack frame,
//! spill stores and loads, shared memory per entry function) read into numbers.

use std::collections::BTreeMap;

/// Characters of the build log kept for display.
pub(super) const KEEP_CHARS: usize = 4000;

/// What the compiler said about one kernel (entry function).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Resources {
    pub registers: Option<u32>,
    pub stack_frame_bytes: Option<u64>,
    pub spill_store_bytes: Option<u64>,
    pub spill_load_bytes: Option<u64>,
    pub shared_bytes: Option<u64>,
}

impl Resources {
    /// As display details (`registers`, `stack_frame_bytes`, …), only the known ones.
    pub(super) fn details(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        let mut put = |k: &str, v: Option<u64>| {
            if let Some(v) = v {
                m.insert(k.into(), v.into());
            }
        };
        put("registers", self.registers.map(u64::from));
        put("stack_frame_bytes", self.stack_frame_bytes);
        put("spill_store_bytes", self.spill_store_bytes);
        put("spill_load_bytes", self.spill_load_bytes);
        put("shared_bytes", self.shared_bytes);
        m
    }
}

/// The log trimmed for display: at most [`KEEP_CHARS`] characters (on a character boundary),
/// with a note of how much was cut.
pub(super) fn trimmed(log: &str) -> String {
    let log = log.trim();
    if log.len() <= KEEP_CHARS {
        return log.to_string();
    }
    let mut end = KEEP_CHARS;
    while !log.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &log[..end], log.len() - end)
}

/// The numbers before `unit` in `line` (`"56 registers"`, `"0 bytes spill stores"`).
fn number_before(line: &str, unit: &str) -> Option<u64> {
    let at = line.find(unit)?;
    line[..at]
        .trim_end()
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
}

/// Per entry function, what the verbose build log reports. Lines name their function
/// ("Compiling entry function 'curl_search'", "Function properties for curl_search") and the
/// lines after them give the numbers.
pub(super) fn parse(log: &str) -> BTreeMap<String, Resources> {
    let mut out: BTreeMap<String, Resources> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in log.lines() {
        let named = line
            .split_once("entry function '")
            .and_then(|(_, r)| r.split_once('\''))
            .map(|(n, _)| n.to_string())
            .or_else(|| {
                line.split_once("Function properties for ")
                    .map(|(_, r)| r.trim().trim_matches('\'').to_string())
            });
        if let Some(n) = named {
            current = Some(n);
            continue;
        }
        let Some(f) = &current else { continue };
        let r = out.entry(f.clone()).or_default();
        if line.contains(" registers") {
            r.registers = number_before(line, " registers").and_then(|n| u32::try_from(n).ok());
            if let Some(n) = number_before(line, " bytes smem") {
                r.shared_bytes = Some(n);
            }
        }
        if line.contains("bytes stack frame") {
            r.stack_frame_bytes = number_before(line, " bytes stack frame");
            r.spill_store_bytes = number_before(line, " bytes spill stores");
            r.spill_load_bytes = number_before(line, " bytes spill loads");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of NVIDIA's verbose build output (numbers made up).
    const NV_LOG: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'curl_transform' for 'sm_90'
ptxas info    : Function properties for curl_transform
    11680 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, 372 bytes cmem[0]
ptxas info    : Compiling entry function 'curl_search' for 'sm_90'
ptxas info    : Function properties for curl_search
    11712 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 64 registers, 23328 bytes smem, 400 bytes cmem[0]
";

    #[test]
    fn reads_nvidia_resource_lines() {
        let m = parse(NV_LOG);
        let s = m["curl_search"];
        assert_eq!(s.registers, Some(64));
        assert_eq!(s.stack_frame_bytes, Some(11712));
        assert_eq!(s.spill_store_bytes, Some(24));
        assert_eq!(s.spill_load_bytes, Some(16));
        assert_eq!(s.shared_bytes, Some(23328));
        assert_eq!(m["curl_transform"].registers, Some(40));
        assert_eq!(m["curl_transform"].shared_bytes, None);
        assert_eq!(s.details()["registers"], 64);
    }

    #[test]
    fn other_logs_give_nothing_and_trim() {
        assert!(parse("warning: something\n").is_empty());
        assert!(parse("").is_empty());
        let long = "é".repeat(KEEP_CHARS);
        let t = trimmed(&long);
        assert!(t.len() < long.len() && t.contains("more bytes"));
        assert_eq!(trimmed("  ok \n"), "ok");
    }
}
