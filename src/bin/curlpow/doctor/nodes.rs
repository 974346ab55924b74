//! GPU device nodes (`/dev/nvidia*`, `/dev/dri/renderD*`, `/dev/kfd`, `/dev/dxg`), the vendor
//! and kernel driver of each (from sysfs), and whether this user may open them.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use serde::Serialize;

use super::{Check, Root};

/// A GPU's maker, as the nodes and drivers tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Amd,
    Intel,
    /// WSL's `/dev/dxg` (the Windows driver behind it).
    Wsl,
    Other,
}

impl Vendor {
    pub fn name(self) -> &'static str {
        match self {
            Vendor::Nvidia => "NVIDIA",
            Vendor::Amd => "AMD",
            Vendor::Intel => "Intel",
            Vendor::Wsl => "WSL",
            Vendor::Other => "other",
        }
    }

    /// From a PCI vendor id.
    pub fn from_pci(id: u32) -> Vendor {
        match id {
            0x10de => Vendor::Nvidia,
            0x1002 | 0x1022 => Vendor::Amd,
            0x8086 => Vendor::Intel,
            _ => Vendor::Other,
        }
    }
}

/// What a node is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// `/dev/nvidiaN`: one NVIDIA GPU (the proprietary driver).
    NvidiaGpu,
    /// `/dev/nvidiactl`, `/dev/nvidia-uvm`, ...: the NVIDIA driver's control nodes.
    NvidiaControl,
    /// `/dev/dri/renderD*`: a DRM render node (Mesa's drivers, NVIDIA's, ROCm).
    Render,
    /// `/dev/kfd`: AMD's compute node (ROCm).
    Kfd,
    /// `/dev/dxg`: WSL's GPU.
    Dxg,
}

impl NodeKind {
    /// Whether the node means a GPU is there (the control nodes come with one).
    pub fn is_gpu(self) -> bool {
        !matches!(self, NodeKind::NvidiaControl)
    }
}

/// One device node.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    pub path: String,
    pub kind: NodeKind,
    pub vendor: Vendor,
    /// The kernel driver bound to it (sysfs `uevent`'s `DRIVER`), where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// The PCI address of its GPU, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_slot: Option<String>,
    /// Permission bits, octal (`0660`).
    pub mode: String,
    pub uid: u32,
    pub gid: u32,
    /// The group's name, from `/etc/group`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Whether this user may open it for reading and writing (by its permission bits).
    pub access: bool,
    /// Opening the device failed although the bits allow it (a container's device rules).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_error: Option<String>,
}

impl Node {
    /// Usable: the bits allow it and opening it did not fail.
    pub fn usable(&self) -> bool {
        self.access && self.open_error.is_none()
    }

    /// The node's GPU is served by the proprietary NVIDIA driver.
    pub fn nvidia_proprietary(&self) -> bool {
        matches!(self.kind, NodeKind::NvidiaGpu | NodeKind::NvidiaControl)
            || (self.vendor == Vendor::Nvidia && self.driver.as_deref() == Some("nvidia"))
    }
}

/// Who is asking: the user and groups of this process (`/proc/self/status`).
#[derive(Debug, Clone, Serialize)]
pub struct Identity {
    pub uid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    pub gids: Vec<u32>,
    /// Their names, where `/etc/group` has them.
    pub groups: Vec<String>,
}

/// This process's user and groups: `/proc/self/status` under the root, else the real ones.
pub fn identity(root: &Root) -> Identity {
    let status = std::fs::read_to_string(root.path("/proc/self/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|rest| {
                rest.split_whitespace()
                    .filter_map(|w| w.parse::<u32>().ok())
                    .collect::<Vec<_>>()
            })
    };
    let (uid, mut gids) = match (field("Uid:"), field("Groups:"), field("Gid:")) {
        (Some(u), Some(g), Some(pg)) if !u.is_empty() => {
            let mut gids = g;
            gids.extend(pg.first());
            (u[0], gids)
        }
        _ => real_identity(),
    };
    gids.sort_unstable();
    gids.dedup();
    let group_file = std::fs::read_to_string(root.path("/etc/group")).unwrap_or_default();
    let groups = gids
        .iter()
        .filter_map(|g| group_name(&group_file, *g))
        .collect();
    let passwd = std::fs::read_to_string(root.path("/etc/passwd")).unwrap_or_default();
    let user = passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 2 && f[2].parse() == Ok(uid)).then(|| f[0].to_string())
    });
    Identity {
        uid,
        user,
        gids,
        groups,
    }
}

/// The process's own user and groups, from the kernel.
fn real_identity() -> (u32, Vec<u32>) {
    // SAFETY: getuid and getgid cannot fail and touch no memory of ours.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut gids = vec![0 as libc::gid_t; 256];
    // SAFETY: `gids` holds 256 entries and getgroups writes at most that many.
    let n = unsafe { libc::getgroups(256, gids.as_mut_ptr()) };
    gids.truncate(usize::try_from(n).unwrap_or(0));
    gids.push(gid);
    (uid, gids)
}

/// A group's name in the text of `/etc/group`.
fn group_name(group_file: &str, gid: u32) -> Option<String> {
    group_file.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 2 && f[2].parse() == Ok(gid)).then(|| f[0].to_string())
    })
}

/// Every GPU device node under the root, sorted by path.
pub fn scan(root: &Root, who: &Identity) -> Vec<Node> {
    let group_file = std::fs::read_to_string(root.path("/etc/group")).unwrap_or_default();
    let mut found = Vec::new();
    for (dir, prefix) in [
        ("/dev", "nvidia"),
        ("/dev/dri", "renderD"),
        ("/dev", "kfd"),
        ("/dev", "dxg"),
    ] {
        let Ok(entries) = std::fs::read_dir(root.path(dir)) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with(prefix) || e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let kind = match prefix {
                "nvidia" if name[6..].bytes().all(|b| b.is_ascii_digit()) && name.len() > 6 => {
                    NodeKind::NvidiaGpu
                }
                "nvidia" => NodeKind::NvidiaControl,
                "renderD" => NodeKind::Render,
                "kfd" if name == "kfd" => NodeKind::Kfd,
                "dxg" if name == "dxg" => NodeKind::Dxg,
                _ => continue,
            };
            if let Some(n) = node(root, &e.path(), &name, kind, who, &group_file) {
                found.push(n);
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

fn node(
    root: &Root,
    path: &Path,
    name: &str,
    kind: NodeKind,
    who: &Identity,
    group_file: &str,
) -> Option<Node> {
    let meta = std::fs::metadata(path).ok()?;
    let (mut vendor, mut driver, mut pci_slot) = match kind {
        NodeKind::NvidiaGpu | NodeKind::NvidiaControl => {
            (Vendor::Nvidia, Some("nvidia".to_string()), None)
        }
        NodeKind::Kfd => (Vendor::Amd, Some("amdgpu".to_string()), None),
        NodeKind::Dxg => (Vendor::Wsl, Some("dxgkrnl".to_string()), None),
        NodeKind::Render => (Vendor::Other, None, None),
    };
    if kind == NodeKind::Render {
        let dev = root.path(format!("/sys/class/drm/{name}/device"));
        if let Some(id) = std::fs::read_to_string(dev.join("vendor"))
            .ok()
            .and_then(|v| u32::from_str_radix(v.trim().trim_start_matches("0x"), 16).ok())
        {
            vendor = Vendor::from_pci(id);
        }
        let uevent = std::fs::read_to_string(dev.join("uevent")).unwrap_or_default();
        for l in uevent.lines() {
            if let Some(d) = l.strip_prefix("DRIVER=") {
                driver = Some(d.trim().to_string());
            } else if let Some(s) = l.strip_prefix("PCI_SLOT_NAME=") {
                pci_slot = Some(s.trim().to_string());
            }
        }
        if vendor == Vendor::Other {
            vendor = match driver.as_deref() {
                Some("amdgpu" | "radeon") => Vendor::Amd,
                Some("i915" | "xe") => Vendor::Intel,
                Some("nvidia" | "nouveau") => Vendor::Nvidia,
                _ => Vendor::Other,
            };
        }
    }
    let mode = meta.mode() & 0o7777;
    let access = may_open(who, meta.uid(), meta.gid(), mode);
    // A real device is opened too: a container's device rules can refuse what the bits allow.
    let open_error = (access && meta.file_type().is_char_device())
        .then(|| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .err()
                .map(|e| e.to_string())
        })
        .flatten();
    Some(Node {
        path: root.host(path),
        kind,
        vendor,
        driver,
        pci_slot,
        mode: format!("{mode:04o}"),
        uid: meta.uid(),
        gid: meta.gid(),
        group: group_name(group_file, meta.gid()),
        access,
        open_error,
    })
}

/// Whether the permission bits let `who` read and write a file of this owner, group and mode.
fn may_open(who: &Identity, uid: u32, gid: u32, mode: u32) -> bool {
    if who.uid == 0 {
        return true;
    }
    let bits = if who.uid == uid {
        mode >> 6
    } else if who.gids.contains(&gid) {
        mode >> 3
    } else {
        mode
    };
    bits & 0o6 == 0o6
}

/// One line per node (and one when there is none), and the user's groups.
pub fn checks(nodes: &[Node], who: &Identity) -> Vec<Check> {
    let mut out = Vec::new();
    if !nodes.iter().any(|n| n.kind.is_gpu()) {
        out.push(Check::ok(
            "node",
            "no GPU device node (/dev/nvidia*, /dev/dri/renderD*, /dev/kfd, /dev/dxg): no GPU \
             driver is loaded here (or none was passed into this container); searches run on \
             the CPU",
        ));
    }
    for n in nodes {
        let what = format!(
            "{}: {}{}{}, mode {} group {}",
            n.path,
            n.vendor.name(),
            n.driver
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default(),
            n.pci_slot
                .as_deref()
                .map(|s| format!(" at {s}"))
                .unwrap_or_default(),
            n.mode,
            n.group.clone().unwrap_or_else(|| n.gid.to_string())
        );
        if let Some(e) = &n.open_error {
            out.push(Check::fail(
                "node",
                format!("{what}: cannot be opened ({e})"),
                "in a container, pass the device in (docker/podman run --device, or --gpus all \
                 for NVIDIA) and do not drop its device cgroup rule",
            ));
        } else if n.access {
            out.push(Check::ok("node", format!("{what}: this user may open it")));
        } else {
            let group_rw = n.mode.len() == 4
                && u32::from_str_radix(&n.mode, 8).is_ok_and(|m| (m >> 3) & 0o6 == 0o6);
            let fix = match (&n.group, group_rw) {
                (Some(g), true) => format!(
                    "add the user to group `{g}`: sudo usermod -aG {g} $USER, then log in again \
                     (or run the service with SupplementaryGroups={g})"
                ),
                _ => format!(
                    "give the user read and write access to {} (a udev rule with \
                     GROUP=\"render\", MODE=\"0660\", and the user in that group)",
                    n.path
                ),
            };
            out.push(Check::fail(
                "node",
                format!("{what}: this user (uid {}) may not open it", who.uid),
                fix,
            ));
        }
    }
    let name = who
        .user
        .clone()
        .unwrap_or_else(|| format!("uid {}", who.uid));
    let groups = if who.groups.is_empty() {
        "no named group".to_string()
    } else {
        who.groups.join(", ")
    };
    if who.uid == 0 {
        out.push(Check::ok(
            "groups",
            format!("{name} (uid 0, groups {groups}): root may open every node"),
        ));
    } else {
        let gpu_groups: Vec<&str> = ["render", "video"]
            .into_iter()
            .filter(|g| who.groups.iter().any(|h| h == g))
            .collect();
        out.push(Check::ok(
            "groups",
            format!(
                "{name} (uid {}) is in {groups}{}",
                who.uid,
                if gpu_groups.is_empty() {
                    " (neither render nor video: fine only while the nodes allow this user)"
                        .to_string()
                } else {
                    String::new()
                }
            ),
        ));
    }
    out
}
