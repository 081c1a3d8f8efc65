//! Each Rust kernel against its CUDA C++ twin, in both forms (plain and tuned), on the
//! experiments' buffers and launch shapes.
use serde::{Deserialize, Serialize};

use super::{DeviceInfo, Experiment, KernelForm, Provenance, UsageError, Verification};
use crate::stats::Series;

/// The saved side of compare-kernels.
pub struct CompareKernels;

impl Experiment for CompareKernels {
    const NAME: &'static str = "compare-kernels";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = KernelComparison;
    fn provenance(result: &KernelComparison) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut KernelComparison) -> &mut Provenance {
        &mut result.provenance
    }
    fn verification(result: &KernelComparison) -> &Verification {
        &result.verification
    }
}

/// What to compare; shapes are the experiments' defaults.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Timed launches of each kernel in each language and form.
    #[arg(long, default_value_t = 100,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub launches: usize,
    /// Untimed launches of each before timing.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// matmul's inner dimension (A is 32 × aligned, B aligned × 16; at most 2^24).
    #[arg(long, default_value_t = 131_072,
          value_parser = clap::value_parser!(u32).range(1..=1 << 24))]
    pub aligned: u32,
    /// add_kernel's array in M ints (2^20 ints each).
    #[arg(long, default_value_t = 128,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub add_size: usize,
    /// add_kernel's cycles, one case each, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [256, 0],
          value_parser = clap::value_parser!(i32).range(0..))]
    pub add_cycles: Vec<i32>,
    /// sincos' array in floats.
    #[arg(long, default_value_t = 1 << 25,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=u32::MAX as u64))]
    pub sincos_elements: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            launches: 100,
            warmup: 3,
            aligned: 131_072,
            add_size: 128,
            add_cycles: vec![256, 0],
            sincos_elements: 1 << 25,
        }
    }
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            launches: 20,
            warmup: 2,
            aligned: 8192,
            add_size: 16,
            sincos_elements: 1 << 22,
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        if self.add_cycles.is_empty() {
            return Err(UsageError::new("--add-cycles needs at least one value"));
        }
        Ok(())
    }
}

/// How the CUDA C++ twins (`cuda/kernels.cu`) were compiled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CudaBuild {
    /// The NVRTC library that compiled them, e.g. "NVRTC 13.0".
    pub compiler: String,
    /// Every option passed to NVRTC.
    pub options: Vec<String>,
    /// `.target` of the PTX NVRTC produced (e.g. sm_90).
    pub ptx_target: String,
}

/// One kernel case in one form, timed as Rust and as CUDA C++ from launches alternated
/// on one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCase {
    /// The kernel, e.g. "add_kernel".
    pub kernel: String,
    /// The case within the kernel, e.g. "cycles 256" (empty where there is one).
    pub case: String,
    /// `None` for a kernel with one form (plain and tuned are the same code: `fill`).
    pub form: Option<KernelForm>,
    /// The launch shape and sizes, in words.
    pub launch: String,
    pub rust: Series,
    pub cuda: Series,
    /// Both outputs against the CPU reference and against each other.
    pub verification: Verification,
}

/// Result of compare-kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelComparison {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    pub cuda_build: CudaBuild,
    pub cases: Vec<KernelCase>,
    pub verification: Verification,
}
