//! `curlpow doctor` on fake roots: a temporary tree with device-node stand-ins (plain files),
//! sysfs facts, `/proc/self/status` (the user and groups the checks judge by), and Vulkan and
//! OpenCL driver files, given with the hidden `--root` (devices are then not probed). One test
//! per diagnosis, and one on this host.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::cli_support::curlpow;

/// A user that owns none of the tree's files.
const UID: u32 = 4242;
/// A group none of the tree's files has.
const OTHER_GID: u32 = 4243;

/// A temporary root, removed on drop.
struct FakeRoot {
    dir: PathBuf,
}

impl FakeRoot {
    /// An empty tree with a user (uid 4242) in the groups `gids`.
    fn new(name: &str, gids: &[u32]) -> FakeRoot {
        let dir =
            std::env::temp_dir().join(format!("curlpow-doctor-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let r = FakeRoot { dir };
        r.set_groups(gids);
        r.file(
            "etc/passwd",
            &format!("alice:x:{UID}:{OTHER_GID}::/home/alice:/bin/sh\n"),
        );
        r
    }

    /// The user's groups, in `/proc/self/status`.
    fn set_groups(&self, gids: &[u32]) {
        let groups: Vec<String> = gids.iter().map(u32::to_string).collect();
        self.file(
            "proc/self/status",
            &format!(
                "Name:\tcurlpow\nUid:\t{UID}\t{UID}\t{UID}\t{UID}\n\
                 Gid:\t{OTHER_GID}\t{OTHER_GID}\t{OTHER_GID}\t{OTHER_GID}\nGroups:\t{}\n",
                groups.join(" ")
            ),
        );
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn file(&self, rel: &str, text: &str) -> &FakeRoot {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        self
    }

    /// A device-node stand-in with this mode.
    fn node(&self, rel: &str, mode: u32) -> &FakeRoot {
        self.file(rel, "");
        std::fs::set_permissions(self.path(rel), std::fs::Permissions::from_mode(mode)).unwrap();
        self
    }

    /// The group of the files this test creates (the one a node stand-in has).
    fn file_gid(&self) -> u32 {
        std::fs::metadata(&self.dir).unwrap().gid()
    }

    /// `/etc/group` naming the files' group `name`.
    fn group(&self, name: &str) -> &FakeRoot {
        self.file(
            "etc/group",
            &format!("{name}:x:{}:\nusers:x:{OTHER_GID}:\n", self.file_gid()),
        )
    }

    /// A library in the multiarch folder.
    fn lib(&self, name: &str) -> &FakeRoot {
        self.file(&format!("{}/{name}", libdir()), "")
    }

    fn vulkan_icd(&self, json_name: &str, library: &str) -> &FakeRoot {
        self.file(
            &format!("usr/share/vulkan/icd.d/{json_name}"),
            &format!(
                "{{\"file_format_version\": \"1.0.0\", \"ICD\": {{\"library_path\": \"{library}\", \"api_version\": \"1.3.0\"}}}}"
            ),
        )
    }

    fn opencl_icd(&self, name: &str, library: &str) -> &FakeRoot {
        self.file(
            &format!("etc/OpenCL/vendors/{name}"),
            &format!("{library}\n"),
        )
    }

    /// A render node of this PCI vendor and kernel driver.
    fn render_node(&self, vendor: &str, driver: &str, mode: u32) -> &FakeRoot {
        self.node("dev/dri/renderD128", mode)
            .file(
                "sys/class/drm/renderD128/device/vendor",
                &format!("{vendor}\n"),
            )
            .file(
                "sys/class/drm/renderD128/device/uevent",
                &format!("DRIVER={driver}\nPCI_SLOT_NAME=0000:03:00.0\n"),
            )
    }

    /// Run `curlpow doctor --root` on it, with `env` set and the host's driver settings
    /// removed.
    fn doctor(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        let mut c = curlpow();
        for v in [
            "VK_DRIVER_FILES",
            "VK_ICD_FILENAMES",
            "VK_ADD_DRIVER_FILES",
            "OCL_ICD_VENDORS",
            "OPENCL_VENDOR_PATH",
            "NVIDIA_VISIBLE_DEVICES",
            "NVIDIA_DRIVER_CAPABILITIES",
            "RUSTICL_ENABLE",
            "CURLPOW_DOCTOR_ROOT",
            "XDG_CONFIG_DIRS",
            "XDG_DATA_DIRS",
            "container",
        ] {
            c.env_remove(v);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c
            .arg("doctor")
            .arg("--root")
            .arg(&self.dir)
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }
}

impl Drop for FakeRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn libdir() -> String {
    format!("usr/lib/{}-linux-gnu", std::env::consts::ARCH)
}

/// The lines of a status and topic.
fn lines<'a>(out: &'a str, status: &str, topic: &str) -> Vec<&'a str> {
    out.lines()
        .filter(|l| {
            let mut w = l.split_whitespace();
            w.next() == Some(status) && w.next() == Some(topic)
        })
        .collect()
}

#[test]
fn no_gpu_node_exits_0_and_says_so() {
    let r = FakeRoot::new("none", &[OTHER_GID]);
    let (code, out) = r.doctor(&[], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no GPU device node"), "{out}");
    assert!(out.contains("not in a container"), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("fail")), "{out}");
    assert!(out.lines().last().unwrap().contains("no GPU here"), "{out}");
}

#[test]
fn nvidia_node_without_nvidia_driver_exits_1_naming_the_package() {
    let r = FakeRoot::new("nvidia-bare", &[OTHER_GID]);
    r.node("dev/nvidia0", 0o666).node("dev/nvidiactl", 0o666);
    // Mesa's drivers serve no NVIDIA GPU on NVIDIA's own driver.
    r.vulkan_icd("radeon_icd.x86_64.json", "libvulkan_radeon.so")
        .lib("libvulkan_radeon.so");
    let (code, out) = r.doctor(&[], &[]);
    assert_eq!(code, 1, "{out}");
    let fail = lines(&out, "fail", "gpu");
    assert_eq!(fail.len(), 1, "{out}");
    assert!(fail[0].contains("NVIDIA GPU (/dev/nvidia0)"), "{out}");
    assert!(fail[0].contains("nvidia-opencl-icd"), "{out}");
    assert!(fail[0].contains("nvidia-vulkan-icd"), "{out}");
    assert!(
        out.contains("/dev/nvidia0: NVIDIA (nvidia), mode 0666"),
        "{out}"
    );
}

#[test]
fn nvidia_node_with_its_drivers_is_ok() {
    let r = FakeRoot::new("nvidia-ok", &[OTHER_GID]);
    r.node("dev/nvidia0", 0o666).node("dev/nvidiactl", 0o666);
    r.vulkan_icd("nvidia_icd.json", "libGLX_nvidia.so.0")
        .lib("libGLX_nvidia.so.0")
        .opencl_icd("nvidia.icd", "libnvidia-opencl.so.1")
        .lib("libnvidia-opencl.so.1");
    let (code, out) = r.doctor(&[], &[]);
    assert_eq!(code, 0, "{out}");
    let ok = lines(&out, "ok", "gpu");
    assert_eq!(ok.len(), 1, "{out}");
    assert!(ok[0].contains("NVIDIA (proprietary)"), "{out}");
    assert!(
        out.contains("nvidia_icd.json -> libGLX_nvidia.so.0"),
        "{out}"
    );
}

#[test]
fn nvidia_opencl_library_without_its_icd_file_gets_the_line_to_write() {
    let r = FakeRoot::new("nvidia-noicd", &[OTHER_GID]);
    r.node("dev/nvidia0", 0o666).lib("libnvidia-opencl.so.1");
    let (code, out) = r.doctor(&[], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd"),
        "{out}"
    );
}

#[test]
fn amd_render_node_with_radv_is_ok() {
    let r = FakeRoot::new("amd-radv", &[]);
    r.set_groups(&[r.file_gid()]);
    r.group("render")
        .render_node("0x1002", "amdgpu", 0o660)
        .vulkan_icd("radeon_icd.x86_64.json", "libvulkan_radeon.so")
        .lib("libvulkan_radeon.so")
        .vulkan_icd("lvp_icd.x86_64.json", "libvulkan_lvp.so")
        .lib("libvulkan_lvp.so");
    let (code, out) = r.doctor(&[], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("/dev/dri/renderD128: AMD (amdgpu) at 0000:03:00.0, mode 0660 group render: this user may open it"),
        "{out}"
    );
    let ok = lines(&out, "ok", "gpu");
    assert_eq!(ok.len(), 1, "{out}");
    assert!(ok[0].contains("Vulkan RADV (Mesa; AMD)"), "{out}");
    assert!(
        !ok[0].contains("lavapipe"),
        "software drivers serve no GPU: {out}"
    );
    assert!(
        out.contains("lavapipe (Mesa; software, on the CPU)"),
        "{out}"
    );
    if cfg!(feature = "opencl") {
        let warn = lines(&out, "warn", "gpu");
        assert!(
            warn.iter()
                .any(|l| l.contains("no OpenCL driver") && l.contains("mesa-opencl-icd")),
            "{out}"
        );
    }
}

#[test]
fn render_node_outside_the_users_groups_fails_with_the_group_to_join() {
    let r = FakeRoot::new("amd-nogroup", &[OTHER_GID]);
    r.group("render")
        .render_node("0x1002", "amdgpu", 0o660)
        .vulkan_icd("radeon_icd.x86_64.json", "libvulkan_radeon.so")
        .lib("libvulkan_radeon.so");
    let (code, out) = r.doctor(&[], &[]);
    assert_eq!(code, 1, "{out}");
    let fail = lines(&out, "fail", "node");
    assert_eq!(fail.len(), 1, "{out}");
    assert!(fail[0].contains("may not open it"), "{out}");
    assert!(fail[0].contains("sudo usermod -aG render $USER"), "{out}");
    assert!(
        lines(&out, "fail", "gpu")
            .iter()
            .any(|l| l.contains("may open none of its nodes")),
        "{out}"
    );
}

#[test]
fn intel_node_with_a_driver_file_whose_library_is_gone_names_the_package() {
    let r = FakeRoot::new("intel-gone", &[OTHER_GID]);
    r.render_node("0x8086", "i915", 0o666)
        .vulkan_icd("intel_icd.x86_64.json", "/usr/lib/libvulkan_intel.so");
    let (code, out) = r.doctor(&[], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        lines(&out, "warn", "vulkan")
            .iter()
            .any(|l| l.contains("ANV (Mesa; Intel)") && l.contains("library not found")),
        "{out}"
    );
    let fail = lines(&out, "fail", "gpu");
    assert!(
        fail.iter().any(|l| l.contains("mesa-vulkan-drivers")),
        "{out}"
    );
}

#[test]
fn container_without_graphics_capability_names_it() {
    let r = FakeRoot::new("container-nographics", &[OTHER_GID]);
    r.file(".dockerenv", "")
        .node("dev/nvidia0", 0o666)
        .node("dev/nvidiactl", 0o666);
    // Only OpenCL came in (`compute`): usable, with a warning for Vulkan.
    r.opencl_icd("nvidia.icd", "libnvidia-opencl.so.1")
        .lib("libnvidia-opencl.so.1");
    let env = [("NVIDIA_DRIVER_CAPABILITIES", "compute,utility")];
    let (code, out) = r.doctor(&[], &env);
    assert!(out.contains("in a docker container (/.dockerenv)"), "{out}");
    let warn = lines(&out, "warn", "container");
    assert!(
        warn.iter().any(|l| l.contains("no `graphics`")
            && l.contains("NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics")),
        "{out}"
    );
    if cfg!(feature = "opencl") {
        assert_eq!(code, 0, "{out}");
        assert!(
            lines(&out, "warn", "gpu")
                .iter()
                .any(|l| l.contains("no Vulkan driver") && l.contains("`graphics` capability")),
            "{out}"
        );
    }
    // Nothing came in: the GPU cannot be used, and the fix is the capability, not a package.
    let r = FakeRoot::new("container-nothing", &[OTHER_GID]);
    r.file(".dockerenv", "").node("dev/nvidia0", 0o666);
    let (code, out) = r.doctor(&[], &[("NVIDIA_DRIVER_CAPABILITIES", "utility")]);
    assert_eq!(code, 1, "{out}");
    let fail = lines(&out, "fail", "gpu");
    assert!(fail[0].contains("`graphics` capability"), "{out}");
    assert!(!fail[0].contains("nvidia-vulkan-icd"), "{out}");
}

#[test]
fn container_without_a_gpu_says_how_to_pass_one() {
    let r = FakeRoot::new("container-nogpu", &[OTHER_GID]);
    r.file("proc/1/cgroup", "0::/system.slice/docker-0123abcd.scope\n");
    let (code, out) = r.doctor(&[], &[("NVIDIA_VISIBLE_DEVICES", "all")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("in a docker container (/proc/1/cgroup)"),
        "{out}"
    );
    assert!(
        lines(&out, "warn", "container").iter().any(|l| l
            .contains("NVIDIA_VISIBLE_DEVICES=all but no /dev/nvidia* node")
            && l.contains("--gpus all")),
        "{out}"
    );
}

#[test]
fn json_has_the_same_checks_and_exit_code() {
    let r = FakeRoot::new("json", &[OTHER_GID]);
    r.node("dev/nvidia0", 0o666);
    let (code, text) = r.doctor(&[], &[]);
    let (jcode, json) = r.doctor(&["--json"], &[]);
    assert_eq!(code, 1);
    assert_eq!(jcode, 1);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["gpu_present"], true);
    assert_eq!(v["gpu_usable"], false);
    assert!(v["live"].is_null(), "a fake root is never probed");
    assert_eq!(v["nodes"][0]["path"], "/dev/nvidia0");
    assert_eq!(v["nodes"][0]["vendor"], "nvidia");
    assert_eq!(v["identity"]["uid"], UID);
    let checks = v["checks"].as_array().unwrap();
    // One text line per check, and the verdict.
    assert_eq!(checks.len() + 1, text.lines().count(), "{text}");
    let fail = checks.iter().find(|c| c["status"] == "fail").unwrap();
    assert_eq!(fail["topic"], "gpu");
    assert!(fail["fix"].as_str().unwrap().contains("nvidia-opencl-icd"));
    assert!(v["cpu"]["kernel"].is_string());
}

#[test]
fn root_that_is_not_a_folder_is_a_usage_error() {
    let missing = Path::new("/nonexistent/curlpow-doctor-root");
    curlpow()
        .args(["doctor", "--root"])
        .arg(missing)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a folder"));
}

/// This host, probed as a user runs it: no panic; exit 0 where no GPU node exists; the
/// `CURLPOW_*` settings named, credentials not shown.
#[test]
fn this_host() {
    let out = curlpow()
        .arg("doctor")
        .env("CURLPOW_TUNE", "0")
        .env("CURLPOW_REMOTE_AUTH", "alice:hunter2")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 1, "{text}");
    assert!(
        text.lines().last().unwrap().starts_with("doctor: "),
        "{text}"
    );
    assert_eq!(lines(&text, "ok", "cpu").len(), 1, "{text}");
    assert!(
        lines(&text, "ok", "device")
            .iter()
            .any(|l| l.contains("cpu (cpu")),
        "{text}"
    );
    assert_eq!(lines(&text, "ok", "search").len(), 1, "{text}");
    assert!(text.contains("ok    setting   CURLPOW_TUNE=0"), "{text}");
    assert!(
        lines(&text, "ok", "tune")
            .iter()
            .any(|l| l.contains("ignored: CURLPOW_TUNE=0")),
        "{text}"
    );
    assert!(
        !text.contains("hunter2"),
        "a credential was printed: {text}"
    );
    let json = curlpow().args(["doctor", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(v["live"]["devices"]
        .as_array()
        .is_some_and(|d| !d.is_empty()));
    assert_eq!(v["exit_code"], code);
    let gpu_node = ["/dev/dri", "/dev"].iter().any(|d| {
        std::fs::read_dir(d).is_ok_and(|e| {
            e.filter_map(Result::ok).any(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with("renderD") || n.starts_with("nvidia") || n == "kfd" || n == "dxg"
            })
        })
    });
    if !gpu_node {
        assert_eq!(code, 0, "{text}");
        assert!(text.contains("no GPU device node"), "{text}");
    }
}
