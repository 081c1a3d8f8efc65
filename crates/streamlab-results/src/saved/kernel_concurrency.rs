//! kernel-concurrency, after NVIDIA's simpleHyperQ and the CUDA Handbook's
//! concurrencyKernelKernel: how many kernels really run at once, with the driver's 8
//! hardware work queues and with 32.
use serde::{Deserialize, Serialize};

use super::timeline::Timeline;
use super::{DeviceInfo, Experiment, MAX_STREAMS, Provenance, UsageError, Verification};
use crate::stats::Series;

/// The saved side of kernel-concurrency.
pub struct KernelConcurrency;

impl Experiment for KernelConcurrency {
    const NAME: &'static str = "kernel-concurrency";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = KernelConcurrencyResult;
    fn provenance(result: &KernelConcurrencyResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut KernelConcurrencyResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn verification(result: &KernelConcurrencyResult) -> &Verification {
        &result.verification
    }
    fn timelines(result: &KernelConcurrencyResult) -> Vec<&Timeline> {
        result
            .runs
            .iter()
            .filter_map(|r| r.timeline.as_ref())
            .collect()
    }
}

/// The most hardware work queues the driver offers (`CUDA_DEVICE_MAX_CONNECTIONS`).
pub const MAX_QUEUES: u32 = 32;

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// How long each kernel spins on the GPU's global timer, in microseconds.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub spin_us: u32,
    /// Stream counts, one kernel (one block) on each, comma separated.
    #[arg(long, value_delimiter = ',',
          default_values_t = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128],
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub stream_counts: Vec<usize>,
    /// Hardware work queues to try, each in its own process (the driver reads
    /// CUDA_DEVICE_MAX_CONNECTIONS once, when it starts), comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [8, 32],
          value_parser = clap::value_parser!(u32).range(1..=MAX_QUEUES as i64))]
    pub queues: Vec<u32>,
    /// Timed repetitions of each configuration.
    #[arg(long, default_value_t = 5,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub repeats: usize,
    /// Internal: measure as the worker of one queue setting and print the result as JSON.
    #[arg(long, hide = true, value_parser = clap::value_parser!(u32).range(1..=MAX_QUEUES as i64))]
    #[serde(skip)]
    pub worker_queues: Option<u32>,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            spin_us: 1000,
            stream_counts: vec![1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128],
            queues: vec![8, 32],
            repeats: 5,
            worker_queues: None,
        }
    }
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            spin_us: 200,
            stream_counts: vec![1, 2, 4, 8, 16, 32],
            repeats: 2,
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        if self.stream_counts.is_empty() || self.queues.is_empty() {
            return Err(UsageError::new(
                "--stream-counts and --queues each need at least one value",
            ));
        }
        Ok(())
    }
}

/// One stream count with one queue setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConcurrencyPoint {
    pub streams: usize,
    /// Two kernels on each stream (the second after the first), all streams at once.
    pub concurrent: Series,
    /// The same kernels one after another on one stream.
    pub serial: Series,
}

/// Every stream count measured in one process with `queues` hardware queues.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueRun {
    pub queues: u32,
    /// One spin kernel alone on one stream.
    pub single: Series,
    pub points: Vec<ConcurrencyPoint>,
    pub verification: Verification,
    /// The 32-stream case traced (or the largest count below it).
    pub timeline: Option<Timeline>,
}

/// Result of kernel-concurrency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelConcurrencyResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// How many grids the GPU runs at once at most (128 from compute capability 9.0).
    pub max_resident_grids: u32,
    pub runs: Vec<QueueRun>,
    pub verification: Verification,
}
