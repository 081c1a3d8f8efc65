//! The machine's physical limits, measured: pinned copy rates each way and both ways at
//! once, device memory bandwidth, and the cost of a kernel launch.
use serde::{Deserialize, Serialize};

use super::{DeviceInfo, Experiment, Provenance, StageTimes, UsageError, Verification};
use crate::stats::Series;

/// The saved side of `bounds`.
pub struct Bounds;

impl Experiment for Bounds {
    const NAME: &'static str = "bounds";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = BoundsResult;
    fn provenance(result: &BoundsResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut BoundsResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn stage_times(result: &BoundsResult) -> Vec<&StageTimes> {
        vec![&result.copies]
    }
    fn verification(result: &BoundsResult) -> &Verification {
        &result.verification
    }
}

/// What `bounds` measures.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Floats per copy (default: the sincos-overlap array).
    #[arg(long, default_value_t = 1 << 25,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1 << 34))]
    pub elements: usize,
    /// Samples of each measurement.
    #[arg(long, default_value_t = 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub repeats: usize,
    /// Back-to-back launches in one launch-cost sample.
    #[arg(long, default_value_t = 1000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub launches: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            elements: 1 << 25,
            repeats: 20,
            launches: 1000,
        }
    }
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            elements: 1 << 22,
            repeats: 5,
            launches: 200,
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        Ok(())
    }
}

impl Params {
    /// Bytes of one copy.
    pub fn bytes(&self) -> u64 {
        (self.elements * size_of::<f32>()) as u64
    }
}

/// Result of `bounds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundsResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// Pinned copies of `params.bytes()` each way alone and both ways at once, whole.
    pub copies: StageTimes,
    /// Device to device, one copy of `params.bytes()` per sample.
    pub dtod: Series,
    /// Milliseconds per launch of an empty kernel, each sample the mean of
    /// `params.launches` back-to-back launches.
    pub launch: Series,
    /// The copies' contents checked after the measurements.
    pub verification: Verification,
}
