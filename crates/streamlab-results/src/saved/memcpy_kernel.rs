//! memcpy-kernel, after the CUDA Handbook's section 6.5 (`concurrencyMemcpyKernel.cu`):
//! is overlapping copies with a kernel worth it, as the kernel grows longer?
use serde::{Deserialize, Serialize};

use super::timeline::Timeline;
use super::{
    DeviceInfo, Experiment, MAX_STREAMS, Provenance, StageTimes, UsageError, Verification,
};
use crate::range::IntRange;
use crate::stats::Series;

/// Cycles values tried past the end of the range while looking for the breakeven point.
pub const MAX_EXTENSION_STEPS: usize = 256;

/// The saved side of memcpy-kernel.
pub struct MemcpyKernel;

impl Experiment for MemcpyKernel {
    const NAME: &'static str = "memcpy-kernel";
    const USES_KERNEL_SETS: bool = true;
    type Params = Params;
    type Result = MemcpyKernelResult;
    fn provenance(result: &MemcpyKernelResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut MemcpyKernelResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn stage_times(result: &MemcpyKernelResult) -> Vec<&StageTimes> {
        result.copies.iter().collect()
    }
    fn verification(result: &MemcpyKernelResult) -> &Verification {
        &result.verification
    }
    fn timelines(result: &MemcpyKernelResult) -> Vec<&Timeline> {
        result.timeline.iter().collect()
    }
}

/// Parameters; defaults are the Handbook program's, with the book's 128 M ints.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Array size in M ints (2^20 ints each).
    #[arg(long, default_value_t = 128,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub size: usize,
    /// Cycles shmoo: START..=END (or one value), 0 or more.
    #[arg(long, default_value = "0..=4096", allow_negative_numbers = true)]
    pub cycles: IntRange,
    /// Step of the cycles shmoo.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(i64).range(1..=1_000_000))]
    pub cycles_step: i64,
    /// Streams shmoo: N or START..=END.
    #[arg(long, default_value = "8")]
    pub streams: IntRange,
    /// Step of the streams shmoo.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i64).range(1..=1_000_000))]
    pub streams_step: i64,
    /// Blocks per SM of each AddKernel launch (blocks = SMs × this).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub blocks_per_sm: u32,
    /// Threads per block.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// The value AddKernel adds, `cycles` times (may be negative).
    #[arg(long, default_value_t = 0xcc, allow_negative_numbers = true)]
    pub add_value: i32,
    /// Timed repetitions of each row; the sequential and streamed runs alternate.
    #[arg(long, default_value_t = 5,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub repeats: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            size: 128,
            cycles: IntRange::new(0, 4096).expect("non-empty"),
            cycles_step: 64,
            streams: IntRange::single(8),
            streams_step: 1,
            blocks_per_sm: 16,
            threads: 256,
            add_value: 0xcc,
            repeats: 5,
        }
    }
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            size: 64,
            cycles: IntRange::new(0, 1024).expect("non-empty"),
            cycles_step: 256,
            repeats: 2,
            ..Params::default()
        }
    }

    /// The Handbook's 8 streams, and 32 streams: a deeper pipeline whose fill and drain
    /// are a quarter as long; cycles in steps of 128 over the Handbook's range, which
    /// keeps `run-all` within its five minutes.
    fn run_all() -> Params {
        Params {
            streams: IntRange::new(8, 32).expect("non-empty"),
            streams_step: 24,
            cycles_step: 128,
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        if self.cycles.start() < 0 || self.cycles.end() > i64::from(i32::MAX / 2) {
            return Err(UsageError::new(format!(
                "--cycles {} is out of range: use values within 0..={}",
                self.cycles,
                i32::MAX / 2
            )));
        }
        let most = (MAX_STREAMS as u64).min(self.elements() as u64) as i64;
        if self.streams.start() < 1 || self.streams.end() > most {
            return Err(UsageError::new(format!(
                "--streams {} is out of range: use stream counts within 1..={most}",
                self.streams
            )));
        }
        Ok(())
    }
}

impl Params {
    /// Elements in the array.
    pub fn elements(&self) -> usize {
        self.size << 20
    }

    /// Bytes of the array, copied once each way per run.
    pub fn bytes(&self) -> u64 {
        (self.elements() * size_of::<i32>()) as u64
    }

    /// The stream counts measured, ascending.
    pub fn stream_counts(&self) -> Vec<usize> {
        (self.streams.values(self.streams_step))
            .map(|s| s as usize)
            .collect()
    }
}

/// One row of the Handbook's table: a cycles value at a stream count. The sequential
/// samples are shared by every stream count at the same cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyKernelRow {
    pub cycles: i32,
    pub streams: usize,
    pub htod: Series,
    pub kernel: Series,
    pub dtoh: Series,
    /// HtoD, kernel and DtoH one after another, timed as a whole.
    pub total: Series,
    /// The streamed version: all copies in, all kernels, all copies out.
    pub concurrent: Series,
    /// The streamed version's kernels alone, one chunk per stream, all at once.
    pub kernels: Series,
}

/// Result of memcpy-kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyKernelResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// For each stream count, its chunks copied in alone, out alone and both ways at
    /// once.
    pub copies: Vec<StageTimes>,
    /// One row per (streams, cycles) measured, in the order measured.
    pub rows: Vec<MemcpyKernelRow>,
    pub verification: Verification,
    /// One streamed run traced, at the breakeven cycles (or the first) and the first
    /// stream count.
    pub timeline: Option<Timeline>,
}
