//! The Vulkan and OpenCL drivers (ICDs) the loaders would find: the JSON files under the Vulkan
//! loader's search paths, the `.icd` files of `/etc/OpenCL/vendors`, the library each names,
//! whether that library is there, and whose driver it is. Also the two loaders themselves.

use std::path::{Path, PathBuf};

use curlpow::env;
use serde::Serialize;

use super::nodes::Vendor;
use super::{Check, Root};

/// The drivers curlpow knows by their library's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Driver {
    /// NVIDIA's own (Vulkan `libGLX_nvidia.so.0`, OpenCL `libnvidia-opencl.so.1`).
    Nvidia,
    /// Mesa's Vulkan driver for NVIDIA GPUs on nouveau.
    Nvk,
    /// Mesa's Vulkan driver for AMD GPUs.
    Radv,
    /// AMD's open Vulkan driver.
    Amdvlk,
    /// AMD's OpenCL (ROCm, `libamdocl64.so`).
    Rocm,
    /// Mesa's Vulkan driver for Intel GPUs (Gen9 and newer).
    Anv,
    /// Mesa's Vulkan driver for older Intel GPUs.
    Hasvk,
    /// Intel's compute runtime (OpenCL, `libigdrcl.so`).
    IntelCompute,
    /// Mesa's OpenCL in Rust (radeonsi, iris, nouveau, ... when `RUSTICL_ENABLE` names them).
    Rusticl,
    /// Mesa's older OpenCL (Clover).
    Clover,
    /// Microsoft's Vulkan on Direct3D 12 (WSL).
    Dozen,
    /// Mesa's Vulkan on the CPU.
    Lavapipe,
    /// OpenCL on the CPU.
    Pocl,
    /// Intel's OpenCL on the CPU.
    IntelCpu,
    Other,
}

impl Driver {
    /// The driver a library's file name belongs to.
    pub fn of_library(lib: &str) -> Driver {
        let base = Path::new(lib)
            .file_name()
            .map(|f| f.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let has = |s: &str| base.contains(s);
        match () {
            _ if has("glx_nvidia") || has("nvidia-opencl") || has("nvidia-vulkan") => {
                Driver::Nvidia
            }
            _ if has("vulkan_nouveau") => Driver::Nvk,
            _ if has("vulkan_radeon") => Driver::Radv,
            _ if has("amdvlk") => Driver::Amdvlk,
            _ if has("amdocl") => Driver::Rocm,
            _ if has("vulkan_intel_hasvk") => Driver::Hasvk,
            _ if has("vulkan_intel") => Driver::Anv,
            _ if has("igdrcl") => Driver::IntelCompute,
            _ if has("rusticl") => Driver::Rusticl,
            _ if has("mesaopencl") => Driver::Clover,
            _ if has("vulkan_dzn") => Driver::Dozen,
            _ if has("vulkan_lvp") => Driver::Lavapipe,
            _ if has("pocl") => Driver::Pocl,
            _ if has("intelocl") => Driver::IntelCpu,
            _ => Driver::Other,
        }
    }

    /// How the messages name it.
    pub fn label(self) -> &'static str {
        match self {
            Driver::Nvidia => "NVIDIA (proprietary)",
            Driver::Nvk => "NVK (Mesa; NVIDIA on nouveau)",
            Driver::Radv => "RADV (Mesa; AMD)",
            Driver::Amdvlk => "AMDVLK (AMD)",
            Driver::Rocm => "ROCm (AMD)",
            Driver::Anv => "ANV (Mesa; Intel)",
            Driver::Hasvk => "hasvk (Mesa; older Intel)",
            Driver::IntelCompute => "Intel compute runtime",
            Driver::Rusticl => "rusticl (Mesa; AMD, Intel, ... with RUSTICL_ENABLE)",
            Driver::Clover => "Clover (Mesa; older AMD)",
            Driver::Dozen => "Dozen (Mesa; Direct3D 12 under WSL)",
            Driver::Lavapipe => "lavapipe (Mesa; software, on the CPU)",
            Driver::Pocl => "PoCL (software, on the CPU)",
            Driver::IntelCpu => "Intel CPU runtime (software, on the CPU)",
            Driver::Other => "unknown vendor",
        }
    }

    /// A driver on the CPU: left out of discovery unless `--software`.
    pub fn software(self) -> bool {
        matches!(self, Driver::Lavapipe | Driver::Pocl | Driver::IntelCpu)
    }

    /// Whether the driver runs the GPU of this vendor on this kernel driver (`nouveau`:
    /// whether it is an NVIDIA GPU on the open driver).
    pub fn serves(self, vendor: Vendor, nouveau: bool) -> bool {
        match self {
            Driver::Nvidia => vendor == Vendor::Nvidia && !nouveau,
            Driver::Nvk => vendor == Vendor::Nvidia && nouveau,
            Driver::Radv | Driver::Amdvlk | Driver::Rocm | Driver::Clover => vendor == Vendor::Amd,
            Driver::Anv | Driver::Hasvk | Driver::IntelCompute => vendor == Vendor::Intel,
            Driver::Rusticl => {
                matches!(vendor, Vendor::Amd | Vendor::Intel)
                    || (vendor == Vendor::Nvidia && nouveau)
            }
            Driver::Dozen => vendor == Vendor::Wsl,
            Driver::Other => matches!(vendor, Vendor::Other | Vendor::Wsl),
            Driver::Lavapipe | Driver::Pocl | Driver::IntelCpu => false,
        }
    }
}

/// Which API an ICD is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    Vulkan,
    Opencl,
}

impl Api {
    pub fn name(self) -> &'static str {
        match self {
            Api::Vulkan => "Vulkan",
            Api::Opencl => "OpenCL",
        }
    }

    pub fn topic(self) -> &'static str {
        match self {
            Api::Vulkan => "vulkan",
            Api::Opencl => "opencl",
        }
    }
}

/// One driver file a loader reads.
#[derive(Debug, Clone, Serialize)]
pub struct Icd {
    pub api: Api,
    /// The `.json` / `.icd` file.
    pub file: String,
    /// The library it names, as written there.
    pub library: String,
    /// Where that library is, `None` when it is not found.
    pub library_found: Option<String>,
    pub driver: Driver,
    pub software: bool,
    /// What was wrong with the file itself (unreadable, not valid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Icd {
    /// Its library is there.
    pub fn usable(&self) -> bool {
        self.error.is_none() && self.library_found.is_some()
    }
}

/// A loader library (`libvulkan.so.1`, `libOpenCL.so.1`).
#[derive(Debug, Clone, Serialize)]
pub struct Loader {
    pub api: Api,
    pub library: String,
    pub found: Option<String>,
    /// Its backend is compiled into this binary.
    pub compiled: bool,
}

/// The folders the dynamic linker looks in for a library named without a path:
/// `LD_LIBRARY_PATH`, `/etc/ld.so.conf` (and its includes), then the usual system folders.
pub struct LibDirs {
    root: Root,
    dirs: Vec<PathBuf>,
}

impl LibDirs {
    pub fn new(root: &Root) -> LibDirs {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(v) = env::other("LD_LIBRARY_PATH") {
            dirs.extend(
                std::env::split_paths(&v)
                    .filter(|p| p.is_absolute())
                    .map(|p| root.path(p)),
            );
        }
        ld_so_conf(root, &root.path("/etc/ld.so.conf"), &mut dirs, 0);
        let multiarch = format!("{}-linux-gnu", std::env::consts::ARCH);
        for d in [
            format!("/lib/{multiarch}"),
            format!("/usr/lib/{multiarch}"),
            "/lib64".into(),
            "/usr/lib64".into(),
            "/lib".into(),
            "/usr/lib".into(),
            "/usr/local/lib".into(),
        ] {
            dirs.push(root.path(d));
        }
        let mut seen = Vec::new();
        dirs.retain(|d| {
            let new = !seen.contains(d);
            seen.push(d.clone());
            new
        });
        LibDirs {
            root: root.clone(),
            dirs,
        }
    }

    /// Where the library `name` (a bare file name) is.
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        self.dirs.iter().map(|d| d.join(name)).find(|p| p.exists())
    }

    /// Where the library an ICD file names is: an absolute path under the root, a relative
    /// one next to the file (Vulkan), a bare name in the linker's folders.
    fn resolve(&self, lib: &str, next_to: &Path) -> Option<PathBuf> {
        let p = Path::new(lib);
        if p.is_absolute() {
            let p = self.root.path(p);
            p.exists().then_some(p)
        } else if lib.contains('/') {
            let p = next_to.parent()?.join(p);
            p.exists().then_some(p)
        } else {
            self.find(lib)
        }
    }
}

/// The folders `/etc/ld.so.conf` names, following `include` lines (a glob `*.conf` in a
/// folder, as Debian and Fedora write them).
fn ld_so_conf(root: &Root, file: &Path, dirs: &mut Vec<PathBuf>, depth: u32) {
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(pattern) = line.strip_prefix("include") {
            let pattern = pattern.trim();
            if depth > 4 || pattern.is_empty() {
                continue;
            }
            let (dir, suffix) = match pattern.rsplit_once("/*") {
                Some((d, s)) => (d.to_string(), s.to_string()),
                None => {
                    ld_so_conf(root, &root.path(pattern), dirs, depth + 1);
                    continue;
                }
            };
            let Ok(entries) = std::fs::read_dir(root.path(&dir)) else {
                continue;
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(&suffix))
                .collect();
            files.sort();
            for f in files {
                ld_so_conf(root, &f, dirs, depth + 1);
            }
        } else if line.starts_with('/') {
            dirs.push(root.path(line));
        }
    }
}

/// Paths from a colon-separated variable, or the defaults.
fn env_dirs(var: &str, defaults: &[&str]) -> Vec<PathBuf> {
    match env::other(var).filter(|v| !v.is_empty()) {
        Some(v) => std::env::split_paths(&v).collect(),
        None => defaults.iter().map(PathBuf::from).collect(),
    }
}

/// The Vulkan loader's driver files, in its order: `VK_DRIVER_FILES` (or the older
/// `VK_ICD_FILENAMES`) alone when set, else the `vulkan/icd.d` folders of the XDG config and
/// data folders and `/etc`; `VK_ADD_DRIVER_FILES` beside them.
fn vulkan_files(root: &Root) -> Vec<PathBuf> {
    let list = |v: &std::ffi::OsStr| -> Vec<PathBuf> {
        std::env::split_paths(v)
            .filter(|p| p.is_absolute())
            .map(|p| root.path(p))
            .collect()
    };
    let mut places: Vec<PathBuf> = Vec::new();
    let forced = env::other("VK_DRIVER_FILES")
        .or_else(|| env::other("VK_ICD_FILENAMES"))
        .filter(|v| !v.is_empty());
    if let Some(v) = forced {
        places.extend(list(&v));
    } else {
        let home = env::other("HOME").map(PathBuf::from);
        let mut dirs = Vec::new();
        match env::other("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
            Some(d) => dirs.push(PathBuf::from(d)),
            None => dirs.extend(home.as_ref().map(|h| h.join(".config"))),
        }
        dirs.extend(env_dirs("XDG_CONFIG_DIRS", &["/etc/xdg"]));
        dirs.push("/etc".into());
        match env::other("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
            Some(d) => dirs.push(PathBuf::from(d)),
            None => dirs.extend(home.as_ref().map(|h| h.join(".local/share"))),
        }
        dirs.extend(env_dirs(
            "XDG_DATA_DIRS",
            &["/usr/local/share", "/usr/share"],
        ));
        places.extend(
            dirs.into_iter()
                .filter(|d| d.is_absolute())
                .map(|d| root.path(d.join("vulkan/icd.d"))),
        );
    }
    if let Some(v) = env::other("VK_ADD_DRIVER_FILES") {
        places.extend(list(&v));
    }
    files_in(places, "json")
}

/// OpenCL's vendor files: `OCL_ICD_VENDORS` (ocl-icd) or `OPENCL_VENDOR_PATH` (Khronos'
/// loader) when set, else `/etc/OpenCL/vendors`.
fn opencl_files(root: &Root) -> Vec<PathBuf> {
    let dir = env::other("OCL_ICD_VENDORS")
        .or_else(|| env::other("OPENCL_VENDOR_PATH"))
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/etc/OpenCL/vendors"));
    files_in(vec![root.path(dir)], "icd")
}

/// The files with this extension in each place (a folder, read sorted; or a file), once each.
fn files_in(places: Vec<PathBuf>, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in places {
        if p.is_file() {
            if !out.contains(&p) {
                out.push(p);
            }
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&p) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|f| f.extension().is_some_and(|e| e == ext))
            .collect();
        files.sort();
        for f in files {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// Every Vulkan and OpenCL driver file under the root, with its library.
pub fn scan(root: &Root, libs: &LibDirs) -> Vec<Icd> {
    let mut out = Vec::new();
    for file in vulkan_files(root) {
        let parsed = std::fs::read_to_string(&file)
            .map_err(|e| format!("unreadable: {e}"))
            .and_then(|t| {
                serde_json::from_str::<serde_json::Value>(&t)
                    .map_err(|e| format!("not valid JSON: {e}"))
            })
            .and_then(|v| {
                v.pointer("/ICD/library_path")
                    .and_then(|l| l.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| "no ICD.library_path".to_string())
            });
        out.push(icd(root, libs, Api::Vulkan, &file, parsed));
    }
    for file in opencl_files(root) {
        let parsed = std::fs::read_to_string(&file)
            .map_err(|e| format!("unreadable: {e}"))
            .and_then(|t| {
                t.lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(str::to_string)
                    .ok_or_else(|| "empty".to_string())
            });
        out.push(icd(root, libs, Api::Opencl, &file, parsed));
    }
    out
}

fn icd(root: &Root, libs: &LibDirs, api: Api, file: &Path, lib: Result<String, String>) -> Icd {
    let (library, error) = match lib {
        Ok(l) => (l, None),
        Err(e) => (String::new(), Some(e)),
    };
    let driver = Driver::of_library(&library);
    let library_found = (!library.is_empty())
        .then(|| libs.resolve(&library, file))
        .flatten()
        .map(|p| root.host(&p));
    Icd {
        api,
        file: root.host(file),
        library,
        library_found,
        driver,
        software: driver.software(),
        error,
    }
}

/// The two loaders.
pub fn loaders(libs: &LibDirs) -> Vec<Loader> {
    [
        (Api::Vulkan, "libvulkan.so.1", curlpow::Backend::Wgpu),
        (Api::Opencl, "libOpenCL.so.1", curlpow::Backend::Opencl),
    ]
    .into_iter()
    .map(|(api, library, be)| Loader {
        api,
        library: library.into(),
        found: libs.find(library).map(|p| libs.root.host(&p)),
        compiled: be.compiled(),
    })
    .collect()
}

/// A line per loader and per driver file.
pub fn checks(icds: &[Icd], loaders: &[Loader]) -> Vec<Check> {
    let mut out = Vec::new();
    for api in [Api::Vulkan, Api::Opencl] {
        if let Some(l) = loaders.iter().find(|l| l.api == api) {
            out.push(loader_check(l));
        }
        let mine: Vec<&Icd> = icds.iter().filter(|i| i.api == api).collect();
        if mine.is_empty() {
            out.push(Check::ok(
                api.topic(),
                format!(
                    "no {} driver file ({})",
                    api.name(),
                    match api {
                        Api::Vulkan => "vulkan/icd.d/*.json under /etc, /usr/share, ...",
                        Api::Opencl => "/etc/OpenCL/vendors/*.icd",
                    }
                ),
            ));
        }
        for i in mine {
            let head = format!("{}: {}", i.driver.label(), i.file);
            out.push(match (&i.error, &i.library_found) {
                (Some(e), _) => Check::warn(
                    api.topic(),
                    format!("{}: {e}", i.file),
                    "remove the file or reinstall the driver package that owns it (dpkg -S FILE)",
                ),
                (None, Some(p)) if *p == i.library => {
                    Check::ok(api.topic(), format!("{head} -> {p}"))
                }
                (None, Some(p)) => Check::ok(api.topic(), format!("{head} -> {} ({p})", i.library)),
                (None, None) => Check::warn(
                    api.topic(),
                    format!("{head} -> {}: library not found", i.library),
                    "reinstall the driver package that owns the file (dpkg -S FILE), or remove \
                     the file if the driver is gone",
                ),
            });
        }
    }
    out
}

/// The loader's line: found, missing, or its backend not compiled in.
fn loader_check(l: &Loader) -> Check {
    let topic = l.api.topic();
    let backend = match l.api {
        Api::Vulkan => "wgpu",
        Api::Opencl => "opencl",
    };
    match (&l.found, l.compiled) {
        (Some(p), true) => Check::ok(topic, format!("loader {}: {p}", l.library)),
        (None, true) => Check::warn(
            topic,
            format!(
                "loader {} not found: the {backend} backend sees no {} driver",
                l.library,
                l.api.name()
            ),
            match l.api {
                Api::Vulkan => "install the Vulkan loader (Debian/Ubuntu: libvulkan1)",
                Api::Opencl => "install the OpenCL ICD loader (Debian/Ubuntu: ocl-icd-libopencl1)",
            },
        ),
        (_, false) => Check::ok(
            topic,
            format!(
                "the {backend} backend is not compiled into this binary{}",
                if l.api == Api::Opencl {
                    " (build with --features opencl: cargo install --locked --path . --features opencl; it needs \
                     ocl-icd-opencl-dev)"
                } else {
                    ""
                }
            ),
        ),
    }
}
