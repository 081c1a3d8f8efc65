//! overlap: the CUDA Handbook's "plug your own kernel in". Any element-wise kernel
//! `fn name(input: &[T], output: &mut [T], …)` from a PTX file, run sequentially and
//! split over streams, so its author learns whether streams pay off at their sizes.
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::sincos_overlap::SincosVariant;
use super::timeline::Timeline;
use super::{
    DeviceInfo, Experiment, MAX_STREAMS, Provenance, StageTimes, UsageError, Verification,
};
use crate::range::IntRange;
use crate::stats::Series;

/// The saved side of overlap.
pub struct Overlap;

impl Experiment for Overlap {
    const NAME: &'static str = "overlap";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = OverlapResult;
    fn provenance(result: &OverlapResult) -> &Provenance {
        &result.provenance
    }
    fn provenance_mut(result: &mut OverlapResult) -> &mut Provenance {
        &mut result.provenance
    }
    fn stage_times(result: &OverlapResult) -> Vec<&StageTimes> {
        result.sizes.iter().flat_map(|s| &s.stages).collect()
    }
    fn verification(result: &OverlapResult) -> &Verification {
        &result.verification
    }
    fn timelines(result: &OverlapResult) -> Vec<&Timeline> {
        result.timeline.iter().collect()
    }
}

/// The element type of the kernel's slices.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum ElementType {
    #[default]
    F32,
    F64,
    I32,
    U32,
}

impl ElementType {
    pub fn size(self) -> usize {
        match self {
            ElementType::F32 | ElementType::I32 | ElementType::U32 => 4,
            ElementType::F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
            ElementType::I32 => "i32",
            ElementType::U32 => "u32",
        }
    }
}

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize, Default)]
pub struct Params {
    /// The PTX file holding the kernel (built with nvptx-builder, or any PTX).
    #[arg(long, required = true)]
    pub ptx: PathBuf,
    /// The kernel's entry name; it must take `(input: &[T], output: &mut [T])` first.
    #[arg(long, required = true)]
    pub kernel: String,
    /// The element type T of both slices.
    #[arg(long = "type", value_enum, default_value_t = ElementType::F32)]
    pub element: ElementType,
    /// Elements in the arrays (your size).
    #[arg(long, default_value_t = 1 << 24,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=u32::MAX as u64))]
    pub elements: usize,
    /// Also sweep array sizes 2^START..=2^END (every second power of two) to find where
    /// streams start to pay off.
    #[arg(long)]
    pub sizes: Option<IntRange>,
    /// Stream counts to split the arrays over, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [2, 4, 8, 16],
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub stream_counts: Vec<usize>,
    /// Threads per block.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// Values of the kernel's parameters after the two slices, in order (parsed as the
    /// PTX declares them: integers or floats).
    #[arg(long = "arg", allow_negative_numbers = true)]
    pub args: Vec<String>,
    /// The input: a raw little-endian file of T, or a .npy array of T; default random.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// The expected output, in the same formats, compared with the sequential run.
    #[arg(long)]
    pub reference: Option<PathBuf>,
    /// Largest difference from `--reference` that still passes (0: exact).
    #[arg(long, default_value_t = 0.0)]
    pub tolerance: f64,
    /// Target GPU time per timed sample, in milliseconds (at least 2 iterations).
    #[arg(long, default_value_t = 20.0)]
    pub sample_ms: f64,
    /// Timed samples per configuration.
    #[arg(long, default_value_t = 3,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub repeats: usize,
}

impl super::Params for Params {
    fn quick() -> Params {
        Params {
            elements: 1 << 20,
            sample_ms: 5.0,
            repeats: 2,
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        for (option, path) in [
            ("--ptx", Some(&self.ptx)),
            ("--input", self.input.as_ref()),
            ("--reference", self.reference.as_ref()),
        ] {
            if let Some(path) = path.filter(|p| !p.is_file()) {
                return Err(UsageError::new(format!(
                    "{option} {}: no such file: give the path of an existing file",
                    path.display()
                )));
            }
        }
        if let Some(sizes) = &self.sizes
            && (sizes.start() < 1 || sizes.end() > 31)
        {
            return Err(UsageError::new(format!(
                "--sizes {sizes} is out of range: give powers of two as exponents within 1..=31, e.g. 12..=26"
            )));
        }
        if !(self.sample_ms.is_finite() && self.sample_ms > 0.0) {
            return Err(UsageError::new(
                "--sample-ms must be a positive number of milliseconds",
            ));
        }
        let smallest = self.sizes().into_iter().min().unwrap_or(self.elements);
        if let Some(&s) = self.stream_counts.iter().find(|&&s| s > smallest) {
            return Err(UsageError::new(format!(
                "{s} streams for {smallest} elements leaves streams without work: use fewer streams"
            )));
        }
        if (self.input.is_some() || self.reference.is_some()) && self.sizes.is_some() {
            return Err(UsageError::new(
                "--input and --reference hold one array of --elements: leave out --sizes with them",
            ));
        }
        Ok(())
    }
}

impl Params {
    /// Every array size measured, ascending: `--elements`, and the `--sizes` sweep.
    pub fn sizes(&self) -> Vec<usize> {
        let mut sizes = vec![self.elements];
        if let Some(range) = &self.sizes {
            sizes.extend((range.values(2)).map(|e| 1usize << e));
        }
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }
}

/// One asynchronous configuration at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapPoint {
    pub variant: SincosVariant,
    pub streams: usize,
    pub time: Series,
}

/// One array size (milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapSize {
    pub elements: usize,
    pub iterations: usize,
    pub sequential: Series,
    /// For 1 chunk and each stream count: the chunks copied in alone, out alone, both
    /// ways at once, and their kernels alone.
    pub stages: Vec<StageTimes>,
    pub points: Vec<OverlapPoint>,
}

/// Result of overlap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// The entry's PTX parameter types, as found in the file.
    pub entry: Vec<String>,
    pub sizes: Vec<OverlapSize>,
    /// Every streamed output against the sequential output, bit for bit (and the
    /// sequential output against `--reference` when given).
    pub verification: Verification,
    /// The best streamed configuration at `--elements`, traced.
    pub timeline: Option<Timeline>,
}
