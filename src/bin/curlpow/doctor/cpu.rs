//! The CPU kernel a search runs, and why a faster one is not used.

use serde::Serialize;

use curlpow::CpuKernel;

use super::Check;

#[derive(Debug, Clone, Serialize)]
pub struct CpuFacts {
    /// The kernel a search runs (`portable`, `avx2`, `avx512`).
    pub kernel: String,
    /// `CURLPOW_CPU_KERNEL` or `detected`.
    pub source: String,
    /// The fastest this CPU runs.
    pub fastest: String,
    /// Each faster kernel and why it is not used.
    pub not_used: Vec<(String, String)>,
    /// Worker threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// What is wrong with `CURLPOW_CPU_KERNEL` or `CURLPOW_THREADS`.
    pub errors: Vec<String>,
}

/// The instructions a kernel needs, as a CPU's specification names them.
fn needs(k: CpuKernel) -> &'static str {
    match k {
        CpuKernel::Avx512 => "AVX-512F",
        CpuKernel::Avx2 => "AVX2",
        _ => "nothing",
    }
}

pub fn facts() -> CpuFacts {
    let fastest = CpuKernel::detect();
    let mut errors = Vec::new();
    let (kernel, source) = match CpuKernel::from_env() {
        Ok(Some(k)) => (k, "CURLPOW_CPU_KERNEL"),
        Ok(None) => (fastest, "detected"),
        Err(e) => {
            errors.push(format!("CURLPOW_CPU_KERNEL: {e}"));
            (fastest, "detected")
        }
    };
    let at = |k: CpuKernel| CpuKernel::ALL.iter().position(|&x| x == k).unwrap_or(0);
    let not_used = CpuKernel::ALL[at(kernel) + 1..]
        .iter()
        .map(|&k| {
            let why = if !k.is_supported() {
                if cfg!(target_arch = "x86_64") {
                    format!("this CPU has no {}", needs(k))
                } else {
                    "it is x86-64 only".to_string()
                }
            } else {
                "CURLPOW_CPU_KERNEL chooses a slower one".to_string()
            };
            (k.name().to_string(), why)
        })
        .collect();
    let threads = match curlpow::internal::cpu::default_threads() {
        Ok(n) => Some(n),
        Err(e) => {
            errors.push(e.to_string());
            None
        }
    };
    CpuFacts {
        kernel: kernel.name().into(),
        source: source.into(),
        fastest: fastest.name().into(),
        not_used,
        threads,
        errors,
    }
}

pub fn checks(c: &CpuFacts) -> Vec<Check> {
    let mut out = Vec::new();
    for e in &c.errors {
        out.push(Check::warn(
            "cpu",
            e.clone(),
            "fix or unset the variable (every other command refuses to start with it)",
        ));
    }
    let threads = c
        .threads
        .map(|n| format!(", {n} threads"))
        .unwrap_or_default();
    let why_not: Vec<String> = c
        .not_used
        .iter()
        .map(|(k, why)| format!("{k} not used: {why}"))
        .collect();
    let tail = if why_not.is_empty() {
        " (the fastest there is)".to_string()
    } else {
        format!("; {}", why_not.join("; "))
    };
    if c.source == "detected" {
        out.push(Check::ok(
            "cpu",
            format!(
                "kernel {}: the fastest this CPU runs{threads}{tail}",
                c.kernel
            ),
        ));
    } else if c.kernel != c.fastest {
        out.push(Check::warn(
            "cpu",
            format!(
                "kernel {} forced by CURLPOW_CPU_KERNEL{threads}; this CPU runs {}{tail}",
                c.kernel, c.fastest
            ),
            "unset CURLPOW_CPU_KERNEL for the fastest",
        ));
    } else {
        out.push(Check::ok(
            "cpu",
            format!("kernel {} (CURLPOW_CPU_KERNEL){threads}{tail}", c.kernel),
        ));
    }
    out
}
