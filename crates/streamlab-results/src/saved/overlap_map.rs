//! overlap-map: the sincos workload over array sizes × stream counts, measured, beside a
//! model that predicts from measured costs when streams start to pay off.
use serde::{Deserialize, Serialize};

use super::{
    DeviceInfo, Experiment, MAX_STREAMS, Provenance, SizeSweep, StageTimes, UsageError,
    Verification,
};
use crate::stats::Series;

/// The saved side of overlap-map.
pub struct OverlapMap;

impl Experiment for OverlapMap {
    const NAME: &'static str = "overlap-map";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = OverlapMapResult;
    fn provenance(result: &OverlapMapResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut OverlapMapResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn stage_times(result: &OverlapMapResult) -> Vec<&StageTimes> {
        vec![&result.copies]
    }
    fn verification(result: &OverlapMapResult) -> &Verification {
        &result.verification
    }
}

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    #[command(flatten)]
    #[serde(flatten)]
    pub sweep: SizeSweep,
    /// Stream counts, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4, 8, 16, 32],
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub stream_counts: Vec<usize>,
    /// Target GPU time per timed sample, in milliseconds: small arrays get more
    /// iterations, large ones fewer (at least 2).
    #[arg(long, default_value_t = 20.0)]
    pub sample_ms: f64,
    /// Timed samples per cell.
    #[arg(long, default_value_t = 5,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub repeats: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            sweep: SizeSweep::default(),
            stream_counts: vec![1, 2, 4, 8, 16, 32],
            sample_ms: 20.0,
            repeats: 5,
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
            stream_counts: vec![1, 4, 16],
            sample_ms: 5.0,
            repeats: 2,
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        self.sweep.validate()?;
        if !(self.sample_ms.is_finite() && self.sample_ms > 0.0) {
            return Err(UsageError::new(
                "--sample-ms must be a positive number of milliseconds",
            ));
        }
        let smallest = 1usize << self.sweep.min_exponent;
        if let Some(&s) = self.stream_counts.iter().find(|&&s| s > smallest) {
            return Err(UsageError::new(format!(
                "{s} streams for 2^{} floats leaves streams without work: raise --min-exponent",
                self.sweep.min_exponent
            )));
        }
        Ok(())
    }
}

impl Params {
    /// The array sizes, in floats, ascending.
    pub fn sizes(&self) -> Vec<usize> {
        self.sweep
            .exponents()
            .into_iter()
            .map(|e| 1usize << e)
            .collect()
    }
}

/// One size at one stream count (milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapCell {
    pub elements: usize,
    pub streams: usize,
    /// Iterations per timed sample.
    pub iterations: usize,
    pub async1: Series,
    pub async2: Series,
}

/// The fixed costs the model is built from, measured in the same run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overheads {
    /// One empty kernel, back to back: GPU time per launch (ms).
    pub launch: Series,
    /// One 4-byte copy each way, back to back: time per copy (ms).
    pub htod_latency: Series,
    pub dtoh_latency: Series,
}

/// One array size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapSize {
    pub elements: usize,
    /// Iterations per timed sample at this size.
    pub iterations: usize,
    /// Copy in, kernel, copy out on one stream.
    pub sequential: Series,
    /// The kernel alone over the whole array.
    pub kernel_alone: Series,
    pub cells: Vec<MapCell>,
}

/// Result of overlap-map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapMapResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    pub overheads: Overheads,
    /// The largest array copied in alone, out alone and both ways at once: the rates.
    pub copies: StageTimes,
    pub sizes: Vec<MapSize>,
    pub verification: Verification,
}
