//! The public entry point: an [`Engine`] owns the devices (the CPU pool, GPUs) for its life and
//! runs PoW searches on them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::control::{CancelToken, SearchControl, StopReason};
use crate::cpu::{self, CpuDevice, CpuKernel, PoolConfig};
use crate::device::{Device, DeviceInfo};
use crate::error::Error;
use crate::search::{CounterRange, SearchJob};
use crate::transaction::Transaction;

/// Options of one PoW call.
#[derive(Debug, Clone, Default)]
pub struct PowOptions {
    /// Minimum weight magnitude (0..=243).
    pub mwm: usize,
    /// Give up after this long ([`Error::Timeout`]).
    pub timeout: Option<Duration>,
    /// Cancel from another thread ([`Error::Cancelled`]).
    pub cancel: Option<CancelToken>,
}

impl PowOptions {
    /// Options with this MWM and nothing else.
    pub fn mwm(mwm: usize) -> Self {
        PowOptions {
            mwm,
            ..Default::default()
        }
    }

    /// Set a timeout.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// Set a cancel token.
    pub fn cancel(mut self, c: CancelToken) -> Self {
        self.cancel = Some(c);
        self
    }
}

/// What a PoW call did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PowReport {
    /// Nonces tried (all devices and workers of this call).
    pub nonces: u64,
    /// Wall time of the call.
    pub elapsed: Duration,
    /// The id of the device that found the nonce.
    pub device: String,
}

impl PowReport {
    /// Nonces tried per second.
    pub fn nonces_per_second(&self) -> f64 {
        self.nonces as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A transaction with a valid nonce, and the report of the search.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PowResult {
    /// The input transaction with its nonce set; its hash ends in at least MWM zero trits
    /// (checked on the host with the scalar reference).
    pub transaction: Transaction,
    /// How the search went.
    pub report: PowReport,
}

/// Builds an [`Engine`].
#[derive(Debug, Clone, Default)]
pub struct EngineBuilder {
    threads: Option<usize>,
    kernel: Option<CpuKernel>,
    pin: bool,
}

impl EngineBuilder {
    /// CPU pool size (default: `CURLPOW_THREADS`, else the available parallelism).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    /// Force a CPU kernel (default: `CURLPOW_CPU_KERNEL`, else the fastest this CPU runs).
    pub fn cpu_kernel(mut self, k: CpuKernel) -> Self {
        self.kernel = Some(k);
        self
    }

    /// Pin pool threads to cores (default off; gains nothing on most VMs).
    pub fn pin_threads(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// Build the engine: the pool is created here, once.
    pub fn build(self) -> Result<Engine, Error> {
        let threads = match self.threads {
            Some(0) => return Err(Error::Config("threads must be at least 1".into())),
            Some(n) => n,
            None => cpu::default_threads()?,
        };
        let kernel = match self.kernel {
            Some(k) => k,
            None => CpuKernel::from_env()?.unwrap_or_else(CpuKernel::detect),
        };
        let cpu = Arc::new(CpuDevice::new(
            PoolConfig {
                threads,
                pin: self.pin,
            },
            kernel,
        )?);
        Ok(Engine {
            inner: Arc::new(Inner { cpu }),
        })
    }
}

struct Inner {
    cpu: Arc<CpuDevice>,
}

/// The PoW engine. Cheap to clone (an `Arc`); share one per process: its thread pool is built
/// once and every search, from any number of caller threads, runs on it.
///
/// ```
/// use curlpow::{Engine, Transaction};
/// let engine = Engine::builder().threads(2).build().unwrap();
/// let tx: Transaction = "9".repeat(2673).parse().unwrap();
/// let done = engine.pow(&tx, 5).unwrap();
/// assert!(done.transaction.weight() >= 5);
/// ```
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("cpu", &self.inner.cpu)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine with the default settings.
    pub fn new() -> Result<Engine, Error> {
        Self::builder().build()
    }

    /// A builder.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// Find a nonce so that the transaction's hash ends in `mwm` zero trits.
    pub fn pow(&self, tx: &Transaction, mwm: usize) -> Result<PowResult, Error> {
        self.pow_with(tx, &PowOptions::mwm(mwm))
    }

    /// [`pow`](Self::pow) with a timeout and/or cancel token.
    pub fn pow_with(&self, tx: &Transaction, opts: &PowOptions) -> Result<PowResult, Error> {
        let job = SearchJob::new(tx, opts.mwm)?;
        let started = Instant::now();
        let ctl = SearchControl::new(opts.cancel.clone(), opts.timeout.map(|t| started + t));
        let dev: &dyn Device = &*self.inner.cpu;
        let out = dev.search(&job, CounterRange::ALL, &ctl)?;
        let elapsed = started.elapsed();
        match out.hit {
            Some(hit) => {
                let transaction = job.verify(hit).ok_or_else(|| Error::InvalidNonce {
                    device: dev.info().id.clone(),
                })?;
                Ok(PowResult {
                    transaction,
                    report: PowReport {
                        nonces: out.nonces,
                        elapsed,
                        device: dev.info().id.clone(),
                    },
                })
            }
            None => Err(stop_error(&ctl, out.nonces, elapsed)),
        }
    }

    /// Every device of the engine.
    pub fn devices(&self) -> Vec<DeviceInfo> {
        vec![self.inner.cpu.info().clone()]
    }

    /// Nonces tried by this engine so far, all devices (summed on read).
    pub fn nonces_tried(&self) -> u64 {
        self.inner.cpu.nonces_tried()
    }

    /// The CPU device (pool size, kernel).
    pub fn cpu(&self) -> &CpuDevice {
        &self.inner.cpu
    }
}

fn stop_error(ctl: &SearchControl, nonces: u64, elapsed: Duration) -> Error {
    match ctl.stop_reason() {
        Some(StopReason::Cancelled) => Error::Cancelled { nonces },
        Some(StopReason::Deadline) => Error::Timeout { elapsed, nonces },
        // A device stopped without a hit and without a reason: its range ran out.
        _ => Error::NoDevice("the nonce range was exhausted without a hit".into()),
    }
}
