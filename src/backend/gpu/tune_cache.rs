//! The tuner's cache: the kernel variant `curlpow tune` chose for each GPU device and proof of
//! work, kept in `$XDG_CACHE_HOME/curlpow/tune.json` (`~/.cache/curlpow/tune.json` without it)
//! per proof of work, backend, device name and driver version, for one curlpow version. Discovery starts from it unless
//! `CURLPOW_TUNE=0`. A cache that cannot be read, does not parse, or was written by another
//! curlpow version is ignored with one warning.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::base::env;

/// One device's choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Tuned {
    /// The variant name (`KernelConfig::name`, or a wgpu variant of `Tuning::variants`).
    pub variant: String,
    /// Its measured rate when it was chosen.
    pub nonces_per_second: f64,
    /// The launch size (work-items per launch) it was fastest with; `None`: the adaptive
    /// sizing (`src/gpu/driver.rs`) was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_items: Option<usize>,
}

/// The file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct TuneFile {
    /// The curlpow version that wrote it; another version's choices are stale.
    pub curlpow: String,
    /// `pow|backend|device name|driver version` → choice (`pow`: `transaction` or `block`).
    pub devices: BTreeMap<String, Tuned>,
}

impl TuneFile {
    /// The transaction search's choice recorded for the device of `backend` with this name and
    /// driver version.
    pub(crate) fn get(&self, backend: &str, name: &str, driver: &str) -> Option<&Tuned> {
        self.get_pow(TRANSACTION, backend, name, driver)
    }

    /// The choice recorded for the search of `pow` (`transaction` or `block`) on the device of
    /// `backend` with this name and driver version.
    pub(crate) fn get_pow(
        &self,
        pow: &str,
        backend: &str,
        name: &str,
        driver: &str,
    ) -> Option<&Tuned> {
        self.devices.get(&key(pow, backend, name, driver))
    }
}

/// The proof of work of a transaction search, as cache keys and `curlpow tune` name it.
pub(crate) const TRANSACTION: &str = "transaction";
/// The proof of work of a block search.
pub(crate) const BLOCK: &str = "block";

/// The key of a device's choice for one proof of work.
pub(crate) fn key(pow: &str, backend: &str, name: &str, driver: &str) -> String {
    format!("{pow}|{backend}|{name}|{driver}")
}

/// The key of a discovered device's choice for `pow`: the proof of work, its backend, name and
/// driver version (wgpu: the adapter's `driver_info`; OpenCL: `driver_version`).
pub(crate) fn key_of(pow: &str, info: &crate::search::device::DeviceInfo) -> String {
    let driver = match info.backend {
        crate::search::device::Backend::Wgpu => info.details.get("driver_info"),
        _ => info.details.get("driver_version"),
    }
    .and_then(|v| v.as_str())
    .unwrap_or("");
    key(pow, info.backend.name(), &info.name, driver)
}

/// Where the cache lives, `None` when neither `XDG_CACHE_HOME` nor `HOME` is set.
pub fn path() -> Option<PathBuf> {
    let base = match env::other("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env::other("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("curlpow").join("tune.json"))
}

/// Whether discovery uses the cache and the engine tunes (`CURLPOW_TUNE` is not `0`).
pub fn enabled() -> bool {
    env::get(env::TUNE).map_or(true, |v| v.as_deref() != Some("0"))
}

/// Whether a warning about the cache was already given in this process.
static WARNED: AtomicBool = AtomicBool::new(false);

/// The cache of this curlpow version: empty when there is none; `Err` (a warning) when it
/// exists but cannot be used, the first time in the process (later: empty, silently).
pub(crate) fn load() -> Result<TuneFile, String> {
    match read() {
        Err(w) if WARNED.swap(true, Ordering::Relaxed) => {
            let _ = w;
            Ok(TuneFile::default())
        }
        r => r,
    }
}

/// The cache as a backend's discovery starts from: [`load`]ed when `wanted` (no variant was
/// given by argument or environment) and [`enabled`], else empty. A cache that cannot be used
/// is empty, its warning pushed to `warnings`.
pub(crate) fn for_discovery(wanted: bool, warnings: &mut Vec<String>) -> TuneFile {
    if !wanted || !enabled() {
        return TuneFile::default();
    }
    load().unwrap_or_else(|w| {
        warnings.push(w);
        TuneFile::default()
    })
}

/// The largest cache read, in bytes (a choice takes about 150; thousands of devices fit).
pub(crate) const MAX_CACHE_BYTES: u64 = 1 << 20;

/// The text of the file at `path`, read only if it is a regular file of at most `cap` bytes.
/// The open never blocks (`O_NONBLOCK`: a FIFO opens at once) and the type is checked on the
/// opened file (`fstat`), so a link to `/dev/zero`, a FIFO or a device is refused before any
/// read, and a file growing past `cap` is refused after reading `cap + 1` bytes.
pub(crate) fn read_bounded(path: &std::path::Path, cap: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    if meta.len() > cap {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {cap} bytes"),
        ));
    }
    let mut text = String::new();
    file.take(cap + 1).read_to_string(&mut text)?;
    if text.len() as u64 > cap {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {cap} bytes"),
        ));
    }
    Ok(text)
}

fn read() -> Result<TuneFile, String> {
    let fresh = || TuneFile {
        curlpow: env!("CARGO_PKG_VERSION").into(),
        devices: BTreeMap::new(),
    };
    let Some(p) = path() else {
        return Ok(fresh());
    };
    let text = match read_bounded(&p, MAX_CACHE_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(fresh()),
        Err(e) => {
            return Err(format!(
                "tune cache {}: unreadable ({e}); ignored",
                p.display()
            ))
        }
    };
    let file: TuneFile = serde_json::from_str(&text)
        .map_err(|e| format!("tune cache {}: not valid ({e}); ignored", p.display()))?;
    if file.curlpow != env!("CARGO_PKG_VERSION") {
        return Err(format!(
            "tune cache {}: written by curlpow {} (this is {}); ignored",
            p.display(),
            file.curlpow,
            env!("CARGO_PKG_VERSION")
        ));
    }
    Ok(file)
}

/// Record `choice` for the device `key` (keeping the others of this version), written to a
/// temporary file and renamed into place.
pub(crate) fn store(key: &str, choice: Tuned) -> Result<PathBuf, String> {
    let p = path().ok_or("tune cache: neither XDG_CACHE_HOME nor HOME is set")?;
    let mut file = read().unwrap_or_default();
    file.curlpow = env!("CARGO_PKG_VERSION").into();
    file.devices.insert(key.into(), choice);
    let dir = p.parent().ok_or("tune cache: no parent directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("tune cache {}: {e}", dir.display()))?;
    let tmp = p.with_extension(format!("json.{}", std::process::id()));
    let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text).map_err(|e| format!("tune cache {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &p).map_err(|e| format!("tune cache {}: {e}", p.display()))?;
    Ok(p)
}

/// Where a device's variant came from, for `details.kernel_source`.
pub(crate) fn source(env: bool, tuned: bool) -> &'static str {
    if env {
        "env"
    } else if tuned {
        "tuned"
    } else {
        "default"
    }
}
