//! sincos-overlap, after the "CUDA streams" blog post: `b[i] = a[i] + sqrt(sin(i)² +
//! cos(i)²)` over pinned floats, sequential against two asynchronous issue orders.
use serde::{Deserialize, Serialize};

use super::timeline::Timeline;
use super::{
    DeviceInfo, Experiment, MAX_STREAMS, Provenance, StageTimes, UsageError, Verification,
};
use crate::stats::Series;

/// The saved side of sincos-overlap.
pub struct SincosOverlap;

impl Experiment for SincosOverlap {
    const NAME: &'static str = "sincos-overlap";
    const USES_KERNEL_SETS: bool = true;
    type Params = Params;
    type Result = SincosOverlapResult;
    fn provenance(result: &SincosOverlapResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut SincosOverlapResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn stage_times(result: &SincosOverlapResult) -> Vec<&StageTimes> {
        result.stages.iter().collect()
    }
    fn verification(result: &SincosOverlapResult) -> &Verification {
        &result.verification
    }
    fn timelines(result: &SincosOverlapResult) -> Vec<&Timeline> {
        result.timelines.iter().collect()
    }
}

/// Parameters; defaults are the blog's.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Floats in the array.
    #[arg(long, default_value_t = 1 << 25,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=u32::MAX as u64))]
    pub elements: usize,
    /// Threads per block (the blog's code uses 1024).
    #[arg(long, default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// Untimed iterations before each configuration is timed.
    #[arg(long, default_value_t = 100)]
    pub warmup: usize,
    /// Timed iterations per configuration.
    #[arg(long, default_value_t = 1000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub iterations: usize,
    /// Timed batches the iterations are split into, each giving one sample
    /// [default: min(10, --iterations)].
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub batches: Option<usize>,
    /// Streams of the headline comparison (the blog's 4); also the traced count.
    #[arg(long, default_value_t = 4,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub streams: usize,
    /// Stream counts of the sweep, comma separated (one stream is the sequential
    /// version's schedule, timed as such).
    #[arg(long, value_delimiter = ',', default_values_t = [2, 4, 8, 16],
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub stream_counts: Vec<usize>,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            elements: 1 << 25,
            threads: 1024,
            warmup: 100,
            iterations: 1000,
            batches: None,
            streams: 4,
            stream_counts: vec![2, 4, 8, 16],
        }
    }
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            elements: 1 << 24,
            warmup: 5,
            iterations: 20,
            batches: Some(4),
            stream_counts: vec![2, 4, 8],
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        if self.batches() > self.iterations {
            return Err(UsageError::new(format!(
                "--batches {} exceeds --iterations {}: each batch needs at least one iteration",
                self.batches(),
                self.iterations
            )));
        }
        if let Some(&count) = self
            .all_stream_counts()
            .iter()
            .find(|&&c| c > self.elements)
        {
            return Err(UsageError::new(format!(
                "{count} streams for {} elements leaves streams without work: use at most {} streams",
                self.elements, self.elements
            )));
        }
        Ok(())
    }
}

impl Params {
    /// The timed batches: `--batches`, else min(10, iterations).
    pub fn batches(&self) -> usize {
        self.batches.unwrap_or(self.iterations.min(10))
    }

    /// Every stream count measured: the sweep plus `--streams`, ascending.
    pub fn all_stream_counts(&self) -> Vec<usize> {
        let mut counts = self.stream_counts.clone();
        counts.push(self.streams);
        counts.sort_unstable();
        counts.dedup();
        counts
    }

    /// Bytes of the array, moved once each way per iteration.
    pub fn bytes(&self) -> u64 {
        (self.elements * size_of::<f32>()) as u64
    }
}

/// How the work of one iteration is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SincosVariant {
    /// Blocking copies, one kernel over the whole array.
    Sequential,
    /// Per stream: copy in, kernel, copy out (depth first).
    Async1,
    /// All copies in, then all kernels, then all copies out (breadth first).
    Async2,
}

impl SincosVariant {
    pub const ASYNC: [SincosVariant; 2] = [SincosVariant::Async1, SincosVariant::Async2];

    /// The blog's name.
    pub fn label(self) -> &'static str {
        match self {
            SincosVariant::Sequential => "sequential",
            SincosVariant::Async1 => "asynchronous 1",
            SincosVariant::Async2 => "asynchronous 2",
        }
    }
}

/// The title of `variant`'s traced timeline at `streams`: how its row finds it.
pub fn trace_title(variant: SincosVariant, streams: usize) -> String {
    format!("sincos-overlap {}, {streams} streams", variant.label())
}

/// One variant at one stream count: each sample is the mean time per iteration of one
/// timed batch of back-to-back iterations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosPoint {
    pub variant: SincosVariant,
    pub streams: usize,
    pub time: Series,
}

/// Result of sincos-overlap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosOverlapResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// Iterations in each timed batch (the batches differ by at most one).
    pub batch_sizes: Vec<usize>,
    /// For each stream count (one chunk per stream, 1 included): the chunks copied in
    /// alone, out alone, both ways at once, and their kernels alone.
    pub stages: Vec<StageTimes>,
    /// Sequential (one stream) and each asynchronous variant at each stream count.
    pub points: Vec<SincosPoint>,
    pub verification: Verification,
    /// Three iterations of each asynchronous variant at `--streams`, and of the fastest
    /// asynchronous configuration, traced back to back ([`trace_title`]).
    pub timelines: Vec<Timeline>,
}
