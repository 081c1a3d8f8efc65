//! mapped, after the CUDA Handbook's concurrencyMemcpyKernelMapped: the sincos kernel
//! reading and writing mapped (zero-copy) pinned host memory directly, against copying
//! in and out on streams.
use serde::{Deserialize, Serialize};

use super::{
    DeviceInfo, Experiment, MAX_STREAMS, Provenance, SizeSweep, StageTimes, UsageError,
    Verification,
};
use crate::stats::Series;

/// The saved side of mapped.
pub struct Mapped;

impl Experiment for Mapped {
    const NAME: &'static str = "mapped";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = MappedResult;
    fn provenance(result: &MappedResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut MappedResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn stage_times(result: &MappedResult) -> Vec<&StageTimes> {
        result
            .points
            .iter()
            .flat_map(|p| [&p.whole, &p.chunked])
            .collect()
    }
    fn verification(result: &MappedResult) -> &Verification {
        &result.verification
    }
}

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    #[command(flatten)]
    #[serde(flatten)]
    pub sweep: SizeSweep,
    /// Streams of the streamed version (the blog's 4).
    #[arg(long, default_value_t = 4,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub streams: usize,
    /// Target GPU time per timed sample, in milliseconds (at least 2 iterations).
    #[arg(long, default_value_t = 20.0)]
    pub sample_ms: f64,
    /// Timed samples per size and version.
    #[arg(long, default_value_t = 3,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub repeats: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            sweep: SizeSweep::default(),
            streams: 4,
            sample_ms: 20.0,
            repeats: 3,
        }
    }
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            sweep: SizeSweep {
                max_exponent: 22,
                ..SizeSweep::default()
            },
            sample_ms: 5.0,
            repeats: 2,
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        self.sweep.validate()?;
        if !(self.sample_ms.is_finite() && self.sample_ms > 0.0) {
            return Err(UsageError::new(
                "--sample-ms must be a positive number of milliseconds",
            ));
        }
        if self.streams > 1usize << self.sweep.min_exponent {
            return Err(UsageError::new(format!(
                "--streams {} exceeds the smallest array (2^{} floats): raise --min-exponent",
                self.streams, self.sweep.min_exponent
            )));
        }
        Ok(())
    }
}

/// sincos-overlap's array (2^25 floats), measured too when it lies in the range.
const SINCOS_EXPONENT: u32 = 25;

impl Params {
    /// The array sizes, in floats, ascending: overlap-map's, and sincos-overlap's array.
    pub fn sizes(&self) -> Vec<usize> {
        let mut exponents = self.sweep.exponents();
        if (self.sweep.min_exponent..=self.sweep.max_exponent).contains(&SINCOS_EXPONENT) {
            exponents.push(SINCOS_EXPONENT);
        }
        exponents.sort_unstable();
        exponents.dedup();
        exponents.into_iter().map(|e| 1usize << e).collect()
    }
}

/// One array size (milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedPoint {
    pub elements: usize,
    pub iterations: usize,
    /// The kernel over mapped host memory: no copies.
    pub mapped: Series,
    /// Asynchronous 1 and 2 over `streams` streams, device memory and copies.
    pub async1: Series,
    pub async2: Series,
    /// The whole array copied in alone, out alone and both ways at once: the mapped
    /// version's bound.
    pub whole: StageTimes,
    /// The streamed version's stages over its chunks.
    pub chunked: StageTimes,
}

/// Result of mapped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    pub points: Vec<MappedPoint>,
    pub verification: Verification,
}
