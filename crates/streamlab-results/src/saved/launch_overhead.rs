//! launch-overhead, after the CUDA Handbook's nullKernelAsync and breakevenKernelAsync:
//! what one launch costs, how much work a kernel needs before that cost stops mattering,
//! and what replaying a CUDA graph changes.
use serde::{Deserialize, Serialize};

use super::{DeviceInfo, Experiment, KernelSet, Provenance, UsageError, Verification};
use crate::stats::Series;

/// The saved side of launch-overhead.
pub struct LaunchOverhead;

impl Experiment for LaunchOverhead {
    const NAME: &'static str = "launch-overhead";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = LaunchOverheadResult;
    fn provenance(result: &LaunchOverheadResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut LaunchOverheadResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn verification(result: &LaunchOverheadResult) -> &Verification {
        &result.verification
    }
}

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Launches per sample.
    #[arg(long, default_value_t = 20_000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    pub launches: usize,
    /// Kernel nodes in the captured graph (replayed until `--launches` are done).
    #[arg(long, default_value_t = 1000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub graph_nodes: usize,
    /// Samples of each measurement (the kernel sets take turns, sample by sample).
    #[arg(long, default_value_t = 11,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub repeats: usize,
    /// Work per kernel for the breakeven curve: microseconds each kernel spins on the
    /// GPU's global timer, comma separated.
    #[arg(long, value_delimiter = ',',
          default_values_t = [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
          value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub work_us: Vec<u32>,
    /// Kernels per breakeven sample.
    #[arg(long, default_value_t = 2000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub breakeven_launches: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            launches: 20_000,
            graph_nodes: 1000,
            repeats: 11,
            work_us: vec![0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
            breakeven_launches: 2000,
        }
    }
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            launches: 2000,
            graph_nodes: 200,
            repeats: 2,
            work_us: vec![0, 2, 8, 32],
            breakeven_launches: 500,
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        if self.work_us.is_empty() {
            return Err(UsageError::new("--work-us needs at least one value"));
        }
        Ok(())
    }
}

/// An empty kernel's launch cost in one language (microseconds per launch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchCosts {
    pub kernels: KernelSet,
    /// Host time to issue `launches` launches back to back, per launch.
    pub async_host_us: Series,
    /// GPU time of those launches (events), per launch.
    pub async_gpu_us: Series,
    /// Launch, then wait for it, per launch (host time).
    pub sync_us: Series,
}

/// The same launches captured once in a graph and replayed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphCosts {
    /// Host time per kernel to issue the replays.
    pub host_us: Series,
    /// GPU time per kernel of the replays (events).
    pub gpu_us: Series,
}

/// Back-to-back kernels that each spin `work_us` (microseconds per kernel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakevenPoint {
    pub work_us: u32,
    /// GPU time per kernel.
    pub per_kernel_us: Series,
}

/// Result of launch-overhead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchOverheadResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// The Rust empty kernel, and its CUDA C++ twin where NVRTC is present.
    pub stream: Vec<LaunchCosts>,
    /// The Rust empty kernel in a graph.
    pub graph: GraphCosts,
    pub breakeven: Vec<BreakevenPoint>,
    pub verification: Verification,
}
