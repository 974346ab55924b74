//! The block PoW on the engine ([`Engine::block_pow`]): the same lease, run, host check and
//! retry as a transaction PoW ([`PowJob`](super::pow_job::PowJob)), on the devices that run it; and
//! [`Engine::bench_block`], a device's rate for this search.

use std::time::{Duration, Instant};

use super::bench::BenchResult;
use super::{Engine, PowOptions, PowReport, Request};
use crate::base::error::Error;
use crate::search::block::{BlockJob, NONCE_BYTES};

/// A message with a valid nonce, and the report of the search.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BlockPowResult {
    /// The nonce.
    pub nonce: u64,
    /// The message with the nonce in its last 8 bytes (little-endian); its score reaches the
    /// target (checked on the host from the message's bytes).
    pub message: Vec<u8>,
    /// The message's score.
    pub score: f64,
    /// How the search went.
    pub report: PowReport,
}

impl Engine {
    /// Find a nonce for `message` (its last 8 bytes are the nonce, whose value is ignored) so
    /// that its score ([`crate::search::block::score`]) reaches `target`.
    pub fn block_pow(&self, message: &[u8], target: f64) -> Result<BlockPowResult, Error> {
        self.block_pow_with(message, target, &PowOptions::default())
    }

    /// [`block_pow`](Self::block_pow) with a timeout, cancel token, device selection, CPU
    /// thread cap or latency mode (`opts`' MWM is not used: the target sets the zeros). Only
    /// devices that run the block PoW are used ([`Device::supports_block_pow`]).
    ///
    /// [`Device::supports_block_pow`]: crate::search::device::Device::supports_block_pow
    pub fn block_pow_with(
        &self,
        message: &[u8],
        target: f64,
        opts: &PowOptions,
    ) -> Result<BlockPowResult, Error> {
        let job = BlockJob::new(message, target)?;
        self.block_pow_job(job, opts)
    }

    /// [`block_pow_with`](Self::block_pow_with) for the bytes before the nonce (the message is
    /// these and the 8 nonce bytes).
    pub fn block_pow_without_nonce(
        &self,
        head: &[u8],
        target: f64,
        opts: &PowOptions,
    ) -> Result<BlockPowResult, Error> {
        let job = BlockJob::without_nonce(head, target)?;
        self.block_pow_job(job, opts)
    }

    fn block_pow_job(&self, job: BlockJob, opts: &PowOptions) -> Result<BlockPowResult, Error> {
        let (job, nonce, report) = self.run_request(&Request::new(opts, Instant::now()), || job)?;
        let message = job.message(nonce);
        let score = crate::search::block::score(&message);
        debug_assert!(message.len() >= NONCE_BYTES && score >= job.target());
        Ok(BlockPowResult {
            nonce,
            message,
            score,
            report,
        })
    }

    /// Whether the device with this id runs the block PoW.
    pub fn runs_block_pow(&self, device_id: &str) -> bool {
        self.slot_index(device_id)
            .is_ok_and(|i| self.inner.registry.slots[i].device.supports_block_pow())
    }

    /// Measure a device's block PoW rate: nonces per second on a fixed 300-byte message with an
    /// unreachable target, for `duration` (the device's one-time setup excluded).
    pub fn bench_block(&self, device_id: &str, duration: Duration) -> Result<BenchResult, Error> {
        let reg = &self.inner.registry;
        let i = self.slot_index(device_id)?;
        let slot = &reg.slots[i];
        if !slot.device.supports_block_pow() {
            return Err(Error::Backend {
                backend: slot.info.backend,
                device: slot.info.id.clone(),
                message: "this device does not run the block PoW".into(),
            });
        }
        let message: Vec<u8> = crate::ternary::xorshift::bytes(0xB10C_0000_0000_0300)
            .take(300)
            .collect();
        // 243 zeros on 300 bytes: a score no hash reaches in practice.
        let target = crate::search::block::score_of(243, message.len());
        let job = BlockJob::new(&message, target)?;
        self.bench_job(i, &job, crate::search::block::COUNTERS, duration)
    }
}
