//! `curlpow doctor`'s checks: what a GPU needs on this host (device nodes and who may open
//! them, the Vulkan and OpenCL drivers the loaders find, a container's GPU capabilities), what
//! the backends report, and the CPU kernel. Each check is one [`Check`]; [`collect`] runs them
//! all into a [`Report`], which `print.rs` writes as lines or JSON.
//!
//! Every file the filesystem checks read is taken under a root (`/`, or the hidden `--root`
//! / `CURLPOW_DOCTOR_ROOT` the tests point at a tree of their own), so each diagnosis can be
//! tried without the hardware. The live part (the backends' devices) reads the real host and is
//! left out under another root.

pub mod container;
pub mod cpu;
pub mod diagnose;
pub mod icds;
pub mod live;
pub mod nodes;
pub mod print;

use std::path::{Path, PathBuf};

use serde::Serialize;

/// What a check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One check: its status, what it is about, what it found and, when not ok, the fix.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub status: Status,
    pub topic: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub fn ok(topic: &'static str, message: impl Into<String>) -> Check {
        Check {
            status: Status::Ok,
            topic,
            message: message.into(),
            fix: None,
        }
    }

    pub fn warn(topic: &'static str, message: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            status: Status::Warn,
            topic,
            message: message.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn fail(topic: &'static str, message: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            status: Status::Fail,
            topic,
            message: message.into(),
            fix: Some(fix.into()),
        }
    }
}

/// The folder the filesystem checks read under: `/` on a real host.
#[derive(Debug, Clone)]
pub struct Root(PathBuf);

impl Root {
    pub fn new(dir: Option<PathBuf>) -> Root {
        Root(dir.unwrap_or_else(|| PathBuf::from("/")))
    }

    /// Whether this is the host's own root (the live checks run only then).
    pub fn is_host(&self) -> bool {
        self.0 == Path::new("/")
    }

    /// The file the host path `p` (absolute) is under this root.
    pub fn path(&self, p: impl AsRef<Path>) -> PathBuf {
        let p = p.as_ref();
        self.0.join(p.strip_prefix("/").unwrap_or(p))
    }

    /// The host path of a file under this root, as the messages name it.
    pub fn host(&self, p: &Path) -> String {
        match p.strip_prefix(&self.0) {
            Ok(rel) => Path::new("/").join(rel).display().to_string(),
            Err(_) => p.display().to_string(),
        }
    }

    pub fn display(&self) -> String {
        self.0.display().to_string()
    }
}

/// Everything `curlpow doctor` found: the facts and the checks made of them.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The root the filesystem checks read (`/` on the host).
    pub root: String,
    pub nodes: Vec<nodes::Node>,
    pub identity: nodes::Identity,
    pub icds: Vec<icds::Icd>,
    pub loaders: Vec<icds::Loader>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<container::Container>,
    /// The backends' devices; `None` when discovery was not run (`--no-probe`, another root).
    pub live: Option<live::Live>,
    pub cpu: cpu::CpuFacts,
    /// A GPU device node exists.
    pub gpu_present: bool,
    /// A GPU is usable: by the backends' report when discovery ran, else by the files.
    pub gpu_usable: bool,
    pub checks: Vec<Check>,
    /// 1 when a check failed (a GPU is here but cannot be used), else 0.
    pub exit_code: u8,
}

/// What to check and how.
pub struct Options {
    pub root: Root,
    /// Run the backends' discovery.
    pub probe: bool,
    /// Include software drivers (PoCL, lavapipe) in discovery.
    pub software: bool,
}

/// Run every check.
pub fn collect(o: &Options) -> Report {
    let root = &o.root;
    let identity = nodes::identity(root);
    let nodes = nodes::scan(root, &identity);
    let libs = icds::LibDirs::new(root);
    let icds = icds::scan(root, &libs);
    let loaders = icds::loaders(&libs);
    let container = container::detect(root);
    let cpu = cpu::facts();

    let diag = diagnose::diagnose(&nodes, &icds, container.as_ref(), &libs);
    let live = o.probe.then(|| live::probe(o.software));
    let gpu_present = nodes.iter().any(|n| n.kind.is_gpu());
    let gpu_usable = match &live {
        Some(l) => l.hardware_gpus > 0,
        None => diag.usable,
    };
    // A node or driver missing for one GPU is a failure only when no GPU can be used.
    let soften = |mut c: Check| {
        if c.status == Status::Fail && gpu_usable {
            c.status = Status::Warn;
        }
        c
    };
    let mut checks: Vec<Check> = nodes::checks(&nodes, &identity)
        .into_iter()
        .map(soften)
        .collect();
    checks.extend(icds::checks(&icds, &loaders));
    match &container {
        Some(c) => checks.extend(container::checks(c, &nodes)),
        None => checks.push(Check::ok(
            "container",
            "not in a container (no /.dockerenv, /run/.containerenv or container cgroup)",
        )),
    }
    checks.extend(diag.checks.into_iter().map(soften));
    if let Some(l) = &live {
        checks.extend(live::checks(l, gpu_present));
    }
    checks.extend(cpu::checks(&cpu));
    let exit_code = u8::from(checks.iter().any(|c| c.status == Status::Fail));
    Report {
        root: root.display(),
        nodes,
        identity,
        icds,
        loaders,
        container,
        live,
        cpu,
        gpu_present,
        gpu_usable,
        checks,
        exit_code,
    }
}
