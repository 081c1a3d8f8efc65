//! graph-overlap: sincos-overlap's asynchronous orders captured once as CUDA graphs and
//! replayed, against issuing them on streams: GPU time per iteration, and host time per
//! iteration (how much of the CPU is left free, as NVIDIA's asyncAPI sample asks).
use serde::{Deserialize, Serialize};

use super::sincos_overlap::SincosVariant;
use super::{
    DeviceInfo, Experiment, MAX_STREAMS, Provenance, StageTimes, UsageError, Verification,
};
use crate::stats::Series;

/// The saved side of graph-overlap.
pub struct GraphOverlap;

impl Experiment for GraphOverlap {
    const NAME: &'static str = "graph-overlap";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = GraphOverlapResult;
    fn provenance(result: &GraphOverlapResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut GraphOverlapResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn stage_times(result: &GraphOverlapResult) -> Vec<&StageTimes> {
        result.stages.iter().collect()
    }
    fn verification(result: &GraphOverlapResult) -> &Verification {
        &result.verification
    }
}

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Floats in the array.
    #[arg(long, default_value_t = 1 << 25,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=u32::MAX as u64))]
    pub elements: usize,
    /// Chunk counts (one stream per chunk), comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [4, 16, 64],
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub chunks: Vec<usize>,
    /// Iterations per timed sample, issued back to back.
    #[arg(long, default_value_t = 50,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub iterations: usize,
    /// Timed samples per configuration.
    #[arg(long, default_value_t = 5,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub repeats: usize,
    /// Untimed samples before each configuration.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            elements: 1 << 25,
            chunks: vec![4, 16, 64],
            iterations: 50,
            repeats: 5,
            warmup: 1,
        }
    }
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            elements: 1 << 22,
            iterations: 10,
            repeats: 2,
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        match self.chunks.iter().find(|&&c| c > self.elements) {
            Some(c) => Err(UsageError::new(format!(
                "--chunks {c} exceeds --elements {}: use at most one chunk per element",
                self.elements
            ))),
            None if self.chunks.is_empty() => {
                Err(UsageError::new("--chunks needs at least one value"))
            }
            None => Ok(()),
        }
    }
}

/// How an iteration reaches the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Issue {
    /// Every copy and kernel issued on its stream, each iteration.
    Streams,
    /// The iteration captured once as a graph, replayed.
    Graph,
}

impl Issue {
    pub fn label(self) -> &'static str {
        match self {
            Issue::Streams => "streams",
            Issue::Graph => "graph",
        }
    }
}

/// One order, chunk count and way of issuing (milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphPoint {
    pub variant: SincosVariant,
    pub chunks: usize,
    pub issue: Issue,
    /// GPU time per iteration (events around each sample).
    pub gpu: Series,
    /// Host time spent issuing, per iteration.
    pub host: Series,
}

/// Result of graph-overlap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphOverlapResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// For each chunk count: the chunks copied in alone, out alone, both ways at once,
    /// and their kernels alone.
    pub stages: Vec<StageTimes>,
    pub points: Vec<GraphPoint>,
    pub verification: Verification,
}
