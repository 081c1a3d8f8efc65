//! matmul-streams, after the "Multi Stream Parallelism" wiki: the same independent
//! matrix products spread over 1..=16 streams.
use serde::{Deserialize, Serialize};

use super::timeline::Timeline;
use super::{DeviceInfo, Experiment, MAX_STREAMS, Provenance, UsageError, Verification};

/// The saved side of matmul-streams.
pub struct MatmulStreams;

impl Experiment for MatmulStreams {
    const NAME: &'static str = "matmul-streams";
    const USES_KERNEL_SETS: bool = true;
    type Params = Params;
    type Result = MatmulStreamsResult;
    fn provenance(result: &MatmulStreamsResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut MatmulStreamsResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn verification(result: &MatmulStreamsResult) -> &Verification {
        &result.verification
    }
    fn timelines(result: &MatmulStreamsResult) -> Vec<&Timeline> {
        result.timeline.iter().collect()
    }
}

/// Parameters; defaults are the wiki's.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Rows of each output matrix.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub rows: u32,
    /// Columns of each output matrix.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub cols: u32,
    /// The inner (aligned) dimension of each product (at most 2^24, so that the sum of
    /// ones is exact in f32).
    #[arg(long, default_value_t = 131_072,
          value_parser = clap::value_parser!(u32).range(1..=1 << 24))]
    pub aligned: u32,
    /// Side of the square thread block (block² threads).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub block: u32,
    /// Products, and the largest stream count.
    #[arg(long, default_value_t = 16,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub max_streams: usize,
    /// Trials (rows of the CSV).
    #[arg(long, default_value_t = 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub trials: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            rows: 32,
            cols: 16,
            aligned: 131_072,
            block: 16,
            max_streams: 16,
            trials: 20,
        }
    }
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            aligned: 32768,
            trials: 3,
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        let cells = u64::from(self.rows) * u64::from(self.aligned);
        if cells > u64::from(u32::MAX)
            || u64::from(self.aligned) * u64::from(self.cols) > u64::from(u32::MAX)
        {
            return Err(UsageError::new(format!(
                "--rows {} × --aligned {} × --cols {} makes matrices of more than 2^32 elements: use smaller sizes",
                self.rows, self.aligned, self.cols
            )));
        }
        Ok(())
    }
}

impl Params {
    /// Bytes of device memory the run needs: A, B and C of every product.
    pub fn device_bytes(&self) -> u64 {
        let (r, c, k) = (
            u64::from(self.rows),
            u64::from(self.cols),
            u64::from(self.aligned),
        );
        self.max_streams as u64 * (r * k + k * c + r * c) * size_of::<f32>() as u64
    }
}

/// Result of matmul-streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatmulStreamsResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// `trials_ms[trial][s - 1]`: time for all products with `s` streams in that trial.
    pub trials_ms: Vec<Vec<f64>>,
    pub verification: Verification,
    /// One iteration with every stream in use, traced.
    pub timeline: Option<Timeline>,
}
