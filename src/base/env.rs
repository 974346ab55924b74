//! Every environment variable curlpow reads: one table, and the one place they are read.
//!
//! [`VARS`] lists curlpow's own variables: the name, the values it takes, what it does and who
//! reads it (the library, the `curlpow` command, or the test harness). The README's table is
//! rendered from it ([`markdown_table`]); a test keeps the two equal, and another finds every
//! `CURLPOW_*` name in the sources in it.
//!
//! The library's and the command's variables are read once per process, on first use, into a
//! snapshot: every engine built in a process sees the same values, and a value that does not
//! parse is reported the same way each time ([`setting`]). The variables of other programs
//! that curlpow consults (the cache folder, the Vulkan and OpenCL loaders' paths, systemd's
//! socket) are in [`OTHERS`] and read as they are now ([`other`]).

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::OnceLock;

/// Who reads a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The library (so also the `curlpow` command and the C library).
    Library,
    /// The `curlpow` command only.
    Command,
    /// The C library (`libdcurl.so`) only.
    CLibrary,
    /// The test harness (`scripts/test.sh`, CI), not curlpow itself.
    Tests,
}

/// One of curlpow's environment variables.
#[derive(Debug, Clone, Copy)]
pub struct Var {
    /// Its name.
    pub name: &'static str,
    /// The values it takes, as the README shows them after `=`.
    pub takes: &'static str,
    /// What it does (Markdown).
    pub effect: &'static str,
    /// Who reads it.
    pub reader: Reader,
}

/// CPU pool size.
pub const THREADS: &str = "CURLPOW_THREADS";
/// Force a CPU kernel.
pub const CPU_KERNEL: &str = "CURLPOW_CPU_KERNEL";
/// Force the OpenCL kernel variant.
pub const OPENCL_KERNEL: &str = "CURLPOW_OPENCL_KERNEL";
/// NVIDIA's register limit for the OpenCL kernels.
pub const OPENCL_MAXRREGCOUNT: &str = "CURLPOW_OPENCL_MAXRREGCOUNT";
/// Override the wgpu tuning.
pub const WGPU_TUNING: &str = "CURLPOW_WGPU_TUNING";
/// Force the wgpu 32-bit-lane kernel.
pub const WGPU_LANES: &str = "CURLPOW_WGPU_LANES";
/// wgpu shader modules with runtime bounds checks.
pub const WGPU_CHECKED: &str = "CURLPOW_WGPU_CHECKED";
/// Force every GPU launch's work-items.
pub const GPU_LAUNCH_ITEMS: &str = "CURLPOW_GPU_LAUNCH_ITEMS";
/// Force every GPU launch's transforms per state.
pub const GPU_LAUNCH_ITERS: &str = "CURLPOW_GPU_LAUNCH_ITERS";
/// `0`: no GPU tuning and no tuner's cache.
pub const TUNE: &str = "CURLPOW_TUNE";
/// Devices that fail on purpose (the `fault-injection` feature).
pub const INJECT_FAULT: &str = "CURLPOW_INJECT_FAULT";
/// `serve`'s HTTP Basic credentials.
pub const REMOTE_AUTH: &str = "CURLPOW_REMOTE_AUTH";
/// The C library's broker queue.
pub const BROKER_QUEUE: &str = "CURLPOW_BROKER_QUEUE";

/// curlpow's environment variables, in the README's order.
pub const VARS: &[Var] = &[
    Var {
        name: THREADS,
        takes: "N",
        effect: "CPU pool size (default: all cores)",
        reader: Reader::Library,
    },
    Var {
        name: CPU_KERNEL,
        takes: "portable\\|avx2\\|avx512",
        effect: "force a CPU kernel; one the CPU lacks is an error",
        reader: Reader::Library,
    },
    Var {
        name: OPENCL_KERNEL,
        takes: "VARIANT",
        effect: "the OpenCL kernel variant of every OpenCL device (`u64x8`, `u32:coop`, …; \
                 `curlpow tune --list`), instead of its default or the tuner's choice",
        reader: Reader::Library,
    },
    Var {
        name: OPENCL_MAXRREGCOUNT,
        takes: "N",
        effect: "NVIDIA OpenCL only: the most registers per work-item the driver's compiler \
                 may use (`-cl-nv-maxrregcount`)",
        reader: Reader::Library,
    },
    Var {
        name: WGPU_TUNING,
        takes: "key=N,…",
        effect: "override the wgpu kernel's tuning (`workgroup`, `transforms`, \
                 `max_invocations`, `fuse`, `target_ms`, `coop`; `docs/gpu-kernels.md`), \
                 instead of its default or the tuner's choice",
        reader: Reader::Library,
    },
    Var {
        name: WGPU_LANES,
        takes: "32",
        effect: "force the wgpu 32-bit-lane kernel",
        reader: Reader::Library,
    },
    Var {
        name: WGPU_CHECKED,
        takes: "1",
        effect: "wgpu shader modules with the driver's runtime bounds checks (slower; for \
                 debugging a kernel)",
        reader: Reader::Library,
    },
    Var {
        name: GPU_LAUNCH_ITEMS,
        takes: "N",
        effect: "work-items of every GPU launch, instead of the sizer's choice (clamped to \
                 the device's maximum)",
        reader: Reader::Library,
    },
    Var {
        name: GPU_LAUNCH_ITERS,
        takes: "N",
        effect: "transforms per state of every GPU launch, instead of the sizer's choice",
        reader: Reader::Library,
    },
    Var {
        name: TUNE,
        takes: "0",
        effect: "no GPU tuning and the tuner's cache (`$XDG_CACHE_HOME/curlpow/tune.json`) \
                 not read: every GPU device runs its default variant (`--no-tune` does the \
                 same; `docs/gpu-kernels.md`)",
        reader: Reader::Library,
    },
    Var {
        name: INJECT_FAULT,
        takes: "wrong-nonce[:RATE],…",
        effect: "tests, builds with the `fault-injection` feature only: adds devices that \
                 fail on purpose (`launch-error`, `wrong-nonce`, `hang`), see `curlpow::fault`",
        reader: Reader::Library,
    },
    Var {
        name: "CURLPOW_REMOTE_AUTH_FILE",
        takes: "FILE",
        effect: "`serve`: HTTP Basic credentials from a file (`--remote-auth-file`)",
        reader: Reader::Command,
    },
    Var {
        name: REMOTE_AUTH,
        takes: "user:password",
        effect: "`serve`: HTTP Basic credentials (a file is better: the environment of a \
                 process is visible to its user)",
        reader: Reader::Command,
    },
    Var {
        name: "CURLPOW_BROKER",
        takes: "amqp://…",
        effect: "`worker` and `serve`: the broker URL (`--broker`), kept out of the command line",
        reader: Reader::Command,
    },
    Var {
        name: BROKER_QUEUE,
        takes: "QUEUE",
        effect: "`libdcurl.so` with a `broker_host`: the queue its PoW is sent to (default \
                 `incoming_queue`, dcurl's; `docs/c-api.md`)",
        reader: Reader::CLibrary,
    },
    Var {
        name: "CURLPOW_DOCTOR_ROOT",
        takes: "DIR",
        effect: "tests: `doctor` reads the host's files under this folder (`--root`)",
        reader: Reader::Command,
    },
    Var {
        name: "CURLPOW_REQUIRE_BACKENDS",
        takes: "opencl,wgpu",
        effect: "tests: a missing device of these backends fails instead of skipping",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_REQUIRE_CC",
        takes: "1",
        effect: "tests of the C library: a missing C compiler fails instead of skipping",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_REQUIRE_PYTHON",
        takes: "1",
        effect: "tests of the C library: a missing `python3` fails instead of skipping",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_REQUIRE_JAVA",
        takes: "1",
        effect: "tests of the C library: a missing JDK fails instead of skipping",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_C_TEST_CFLAGS",
        takes: "FLAGS",
        effect: "tests of the C library: more flags for the C compiler (sanitizers, \
                 `docs/c-api.md`)",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_C_TEST_WRAPPER",
        takes: "COMMAND",
        effect: "tests of the C library: a command run in front of each C program (e.g. \
                 `valgrind --error-exitcode=99`)",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_REQUIRE_COMPAT",
        takes: "1",
        effect: "tests: a missing iota.js (`cd tests/compat && npm ci`) fails the \
                 client-compatibility test instead of skipping",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_REQUIRE_BROKER",
        takes: "1",
        effect: "tests: a missing RabbitMQ fails `tests/broker.rs` instead of skipping",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_TEST_BROKER",
        takes: "amqp://…",
        effect: "tests: the broker `tests/broker.rs` uses (default: the local RabbitMQ as guest)",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_REQUIRE_CHROMIUM",
        takes: "1",
        effect: "tests: a missing Chromium fails the status-page test instead of skipping",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_CHROMIUM",
        takes: "PATH",
        effect: "tests: the browser the status-page test runs",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_REQUIRE_GPU_STATIC",
        takes: "1",
        effect: "tests: missing GPU compilers (clang-19, libclc, ptxas) fail the static kernel \
                 check instead of skipping",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_REQUIRE_SYSTEMD",
        takes: "1",
        effect: "tests: a missing `systemd-analyze` fails the unit-hardening test instead of \
                 skipping",
        reader: Reader::Tests,
    },
    Var {
        name: "CURLPOW_SKIP_LOG",
        takes: "FILE",
        effect: "tests: each skipped test appends its `SKIPPED:` line here (`scripts/test.sh` \
                 sets it and lists them at the end)",
        reader: Reader::Tests,
    },
];

/// Other programs' variables curlpow consults, and why.
pub const OTHERS: &[(&str, &str)] = &[
    (
        "HOME",
        "the tuner's cache folder when XDG_CACHE_HOME is unset; doctor's Vulkan search",
    ),
    ("XDG_CACHE_HOME", "the tuner's cache folder"),
    (
        "XDG_RUNTIME_DIR",
        "the command gives itself a private one when unset",
    ),
    ("HOSTNAME", "a broker worker's default name"),
    ("NOTIFY_SOCKET", "systemd's readiness and watchdog socket"),
    ("RUST_LOG", "the log filter of serve and worker"),
    ("container", "doctor: the container runtime"),
    ("NVIDIA_VISIBLE_DEVICES", "doctor: a container's GPUs"),
    (
        "NVIDIA_DRIVER_CAPABILITIES",
        "doctor: a container's driver capabilities",
    ),
    (
        "LD_LIBRARY_PATH",
        "doctor: where a driver's library is looked for",
    ),
    ("RUSTICL_ENABLE", "doctor: Mesa's OpenCL devices"),
    (
        "VK_DRIVER_FILES",
        "doctor: the Vulkan loader's driver files",
    ),
    (
        "VK_ICD_FILENAMES",
        "doctor: the Vulkan loader's driver files (older name)",
    ),
    ("VK_ADD_DRIVER_FILES", "doctor: more Vulkan driver files"),
    ("XDG_CONFIG_HOME", "doctor: the Vulkan loader's search path"),
    ("XDG_CONFIG_DIRS", "doctor: the Vulkan loader's search path"),
    ("XDG_DATA_HOME", "doctor: the Vulkan loader's search path"),
    ("XDG_DATA_DIRS", "doctor: the Vulkan loader's search path"),
    ("OCL_ICD_VENDORS", "doctor: ocl-icd's vendor folder"),
    (
        "OPENCL_VENDOR_PATH",
        "doctor: Khronos' loader's vendor folder",
    ),
];

/// The snapshot of curlpow's variables (library and command), taken on first use.
fn snapshot() -> &'static HashMap<&'static str, OsString> {
    static SNAPSHOT: OnceLock<HashMap<&'static str, OsString>> = OnceLock::new();
    SNAPSHOT.get_or_init(|| {
        VARS.iter()
            .filter(|v| v.reader != Reader::Tests)
            .filter_map(|v| std::env::var_os(v.name).map(|value| (v.name, value)))
            .collect()
    })
}

fn known(name: &str) -> bool {
    VARS.iter()
        .any(|v| v.name == name && v.reader != Reader::Tests)
}

/// One of curlpow's variables: `Ok(None)` when unset or blank, its trimmed text otherwise;
/// `Err` naming the variable when it is not UTF-8.
pub fn get(name: &str) -> Result<Option<String>, String> {
    debug_assert!(known(name), "{name} is not in env::VARS");
    match snapshot().get(name).map(|v| v.to_str()) {
        None => Ok(None),
        Some(None) => Err(format!("{name} is not UTF-8 text")),
        Some(Some(v)) if v.trim().is_empty() => Ok(None),
        Some(Some(v)) => Ok(Some(v.trim().to_string())),
    }
}

/// Whether one of curlpow's variables is set to something other than blanks.
pub fn is_set(name: &str) -> bool {
    !matches!(get(name), Ok(None))
}

/// A setting: `Ok(None)` when unset or blank, `Err` (a warning naming the variable, the value
/// and what was expected) when it does not parse.
pub fn setting<T>(
    name: &str,
    expected: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>, String> {
    parse_setting(name, get(name)?.as_deref(), expected, parse)
}

fn parse_setting<T>(
    name: &str,
    value: Option<&str>,
    expected: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>, String> {
    match value {
        None => Ok(None),
        Some(v) => parse(v)
            .map(Some)
            .ok_or_else(|| format!("{name}={v:?} ignored (expected {expected})")),
    }
}

/// Every `CURLPOW_*` variable set in this process's environment now, known or not (a misspelt
/// one included), as text.
pub fn curlpow_vars() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| {
            let k = k.into_string().ok()?;
            k.starts_with("CURLPOW_")
                .then(|| (k, v.to_string_lossy().into_owned()))
        })
        .collect()
}

/// One of [`OTHERS`] as it is now (`None` when unset; an empty value is returned as it is:
/// some programs treat empty and unset alike, others do not).
pub fn other(name: &str) -> Option<OsString> {
    debug_assert!(
        OTHERS.iter().any(|(n, _)| *n == name),
        "{name} is not in env::OTHERS"
    );
    std::env::var_os(name)
}

/// The README's table of [`VARS`].
pub fn markdown_table() -> String {
    let mut out = String::from("| environment variable | effect |\n|---|---|\n");
    for v in VARS {
        let effect = v.effect.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push_str(&format!("| `{}={}` | {effect} |\n", v.name, v.takes));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_say_what_is_wrong() {
        let r = parse_setting("SOME_SETTING", Some("nope"), "32 or 64", |v| {
            v.parse::<u32>().ok()
        });
        assert_eq!(
            r.unwrap_err(),
            "SOME_SETTING=\"nope\" ignored (expected 32 or 64)"
        );
        assert_eq!(
            parse_setting("SOME_SETTING", None, "", |_| Some(1)),
            Ok(None)
        );
        assert_eq!(
            parse_setting("SOME_SETTING", Some("7"), "", |v| v.parse::<u32>().ok()),
            Ok(Some(7))
        );
    }

    #[test]
    fn names_are_unique_and_prefixed() {
        for (i, v) in VARS.iter().enumerate() {
            assert!(v.name.starts_with("CURLPOW_"), "{}", v.name);
            assert!(
                VARS[i + 1..].iter().all(|w| w.name != v.name),
                "{} twice",
                v.name
            );
        }
    }
}
