//! Keeping Mesa's headless warning off a service's stderr.

/// Mesa's Vulkan drivers print "XDG_RUNTIME_DIR is invalid or not set" on every instance when
/// the variable is unset (system services, CI, ssh without a session). curlpow never opens a
/// window, so before any thread starts it gives itself a private runtime folder (mode 0700, owned
/// by this user) and the message stays away. A folder that exists with another owner or wider
/// permissions is left alone, and so is the variable.
#[cfg(all(unix, feature = "wgpu"))]
pub fn quiet_headless_vulkan() {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    if curlpow::env::other("XDG_RUNTIME_DIR").is_some() {
        return;
    }
    let Ok(uid) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("curlpow-runtime-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o077 == 0 => {
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
        _ => {}
    }
}

/// Nothing to do without the wgpu backend or off Unix.
#[cfg(not(all(unix, feature = "wgpu")))]
pub fn quiet_headless_vulkan() {}
