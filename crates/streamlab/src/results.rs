//! What a run records: one JSON document per experiment and the `summary.json` headline.
//! Everything the report draws is read back from these types, so a report can be
//! rendered again from the files alone (`streamlab report --from DIR`).
use serde::{Deserialize, Serialize};

use crate::stats::Series;

/// File names inside a results folder.
pub mod files {
    pub const SUMMARY: &str = "summary.json";
    pub const MATMUL_STREAMS: &str = "matmul-streams.json";
    pub const MEMCPY_KERNEL: &str = "memcpy-kernel.json";
    pub const SINCOS_OVERLAP: &str = "sincos-overlap.json";
    /// The same experiments run with the CUDA C++ kernels.
    pub const MATMUL_STREAMS_CUDA: &str = "matmul-streams-cuda.json";
    pub const MEMCPY_KERNEL_CUDA: &str = "memcpy-kernel-cuda.json";
    pub const SINCOS_OVERLAP_CUDA: &str = "sincos-overlap-cuda.json";
    pub const KERNEL_COMPARISON: &str = "kernel-comparison.json";
    pub const BOUNDS: &str = "bounds.json";
}

/// The GPU and driver a result was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub sm_count: i32,
    /// `asyncEngineCount`: copy engines that can run beside kernels.
    pub copy_engines: i32,
    pub concurrent_kernels: bool,
    pub total_memory_bytes: u64,
    /// The CUDA version the driver supports, as `major.minor`.
    pub driver_cuda_version: String,
    /// PCIe link, where the driver exposes it (e.g. "PCIe gen 5 x16").
    pub pcie_link: Option<String>,
}

/// Versions and provenance of a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub streamlab_version: String,
    /// UTC time the run started, RFC 3339.
    pub started_utc: String,
    /// `.target` of the embedded Rust PTX (e.g. sm_90).
    pub ptx_target: String,
    /// Which kernel set produced the timed results ("rust" or "cuda").
    pub kernels: String,
}

/// Outcome of checking every output element against the CPU reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    pub passed: bool,
    /// Elements compared.
    pub checked: u64,
    /// Elements outside the tolerance.
    pub mismatches: u64,
    /// Largest absolute difference from the reference.
    pub max_abs_error: f64,
    /// What was checked, and the first mismatch if any.
    pub detail: String,
}

/// The kind of an operation on a stream timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    HtoD,
    Kernel,
    DtoH,
}

impl OpKind {
    pub fn label(self) -> &'static str {
        match self {
            OpKind::HtoD => "HtoD",
            OpKind::Kernel => "kernel",
            OpKind::DtoH => "DtoH",
        }
    }
}

/// One operation of a traced iteration: which stream, what, and when (milliseconds
/// from the first operation's start).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineOp {
    /// 0-based stream index.
    pub stream: usize,
    pub kind: OpKind,
    pub start_ms: f64,
    pub end_ms: f64,
}

/// One traced iteration of an async variant: an event before and after every operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Experiment and variant, e.g. "sincos-overlap async 1".
    pub title: String,
    pub streams: usize,
    pub ops: Vec<TimelineOp>,
}

/// Result of `matmul-streams`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatmulStreamsResult {
    pub params: crate::experiments::matmul_streams::Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// `trials_ms[trial][s - 1]`: time for all products with `s` streams in that trial.
    pub trials_ms: Vec<Vec<f64>>,
    /// One point per stream count 1..=max_streams.
    pub points: Vec<MatmulPoint>,
    pub verification: Verification,
    pub timeline: Option<Timeline>,
}

/// `matmul-streams` at one stream count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatmulPoint {
    pub streams: usize,
    pub time: Series,
    /// Mean time with 1 stream over mean time with `streams`.
    pub speedup: f64,
    /// `ceil(products / streams)`: the most products any one stream runs.
    pub tasks_per_stream: usize,
    /// The model's time: one-stream mean × tasks_per_stream / products.
    pub model_ms: f64,
}

/// Result of `memcpy-kernel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyKernelResult {
    pub params: crate::experiments::memcpy_kernel::Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// One row per (streams, cycles) measured, in the order measured.
    pub rows: Vec<MemcpyKernelRow>,
    /// The first cycles value whose kernel time (median) exceeds both copy times.
    pub breakeven_cycles: Option<i32>,
    pub verification: Verification,
    pub timeline: Option<Timeline>,
}

/// `memcpy-kernel` at one cycles value and stream count: the Handbook's table row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyKernelRow {
    pub cycles: i32,
    pub streams: usize,
    pub htod: Series,
    pub kernel: Series,
    pub dtoh: Series,
    pub total: Series,
    pub concurrent: Series,
    /// Sequential total over concurrent (medians, so one disturbed repeat cannot set it).
    pub speedup: f64,
    /// Best possible speedup with the three engines fully overlapped:
    /// (htod + kernel + dtoh) / max(htod, kernel, dtoh), from the measured medians.
    pub amdahl_ideal: f64,
}

/// How the sincos-overlap work is issued.
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
    pub fn label(self) -> &'static str {
        match self {
            SincosVariant::Sequential => "sequential",
            SincosVariant::Async1 => "asynchronous 1",
            SincosVariant::Async2 => "asynchronous 2",
        }
    }
}

/// Result of `sincos-overlap`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosOverlapResult {
    pub params: crate::experiments::sincos_overlap::Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    pub sequential: Series,
    /// Each async variant at each stream count.
    pub points: Vec<SincosPoint>,
    /// Each part alone over the whole array: the copy-engine bound is max(htod, dtoh).
    pub htod_alone: Series,
    pub kernel_alone: Series,
    pub dtoh_alone: Series,
    pub verification: Verification,
    /// One traced iteration of each async variant at `--streams`.
    pub timelines: Vec<Timeline>,
}

/// One async variant at one stream count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosPoint {
    pub variant: SincosVariant,
    pub streams: usize,
    pub time: Series,
}

/// `summary.json`: the stable, machine-readable headline of a `run-all`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// The headline of each experiment run with the Rust kernels.
    pub experiments: ExperimentsSummary,
    /// The physical limits measured for the sincos array size.
    pub bounds: Option<BoundsSummary>,
    /// Per kernel: median Rust time over median CUDA C++ time (below 1: Rust is faster).
    pub rust_over_cuda: Option<RustOverCuda>,
    /// The same headline with the CUDA C++ kernels, when they ran.
    pub cuda_experiments: Option<ExperimentsSummary>,
    /// Per experiment: time of every configuration measured with both kernel sets, Rust
    /// over CUDA C++.
    pub experiment_rust_over_cuda: Option<ExperimentRatios>,
}

/// `summary.json`'s `bounds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundsSummary {
    pub h2d_ms: f64,
    pub d2h_ms: f64,
    pub h2d_gbps: f64,
    pub d2h_gbps: f64,
    pub bidirectional_gbps: f64,
    pub d2d_gbps: f64,
    pub launch_us: f64,
}

/// `summary.json`'s `rust_over_cuda`: median-time ratios per kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RustOverCuda {
    pub fill: f64,
    pub matmul: f64,
    pub add_kernel: f64,
    pub sincos: f64,
}

/// Whole-experiment ratios, Rust over CUDA C++.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentRatios {
    #[serde(rename = "sincos-overlap")]
    pub sincos_overlap: Option<f64>,
    #[serde(rename = "matmul-streams")]
    pub matmul_streams: Option<f64>,
    #[serde(rename = "memcpy-kernel")]
    pub memcpy_kernel: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentsSummary {
    #[serde(rename = "sincos-overlap")]
    pub sincos_overlap: Option<SincosSummary>,
    #[serde(rename = "matmul-streams")]
    pub matmul_streams: Option<MatmulSummary>,
    #[serde(rename = "memcpy-kernel")]
    pub memcpy_kernel: Option<MemcpySummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosSummary {
    pub verified: bool,
    pub sequential_ms: f64,
    pub best_async_ms: f64,
    pub best_async_variant: SincosVariant,
    pub best_async_streams: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatmulSummary {
    pub verified: bool,
    /// Mean milliseconds; index 0 is 1 stream.
    pub ms_by_streams: Vec<f64>,
    pub speedup_max_streams: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpySummary {
    pub verified: bool,
    pub num_streams: usize,
    pub best_speedup: f64,
    pub breakeven_cycles: Option<i32>,
}

/// How the CUDA C++ twins (`cuda/kernels.cu`) were compiled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CudaBuild {
    /// The NVRTC library that compiled them, e.g. "NVRTC 12.9".
    pub compiler: String,
    /// Every option passed to NVRTC.
    pub options: Vec<String>,
    /// `.target` of the PTX NVRTC produced (e.g. sm_90).
    pub ptx_target: String,
}

/// The lower quartile, median and upper quartile of a set of samples (milliseconds),
/// interpolated linearly between order statistics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quartiles {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
}

/// One kernel timed as Rust and as CUDA C++, launches interleaved on one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelTiming {
    /// The kernel and its case, e.g. "add_kernel (cycles 256)".
    pub kernel: String,
    /// The launch shape and sizes, in words.
    pub launch: String,
    pub rust: Series,
    pub cuda: Series,
    pub rust_quartiles: Quartiles,
    pub cuda_quartiles: Quartiles,
    /// Median Rust time over median CUDA C++ time: below 1 the Rust kernel is faster.
    pub ratio_median: f64,
    /// Both outputs against the CPU reference and against each other.
    pub verification: Verification,
}

/// Result of comparing the Rust kernels with their CUDA C++ twins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelComparison {
    pub params: crate::compare::Params,
    pub device: DeviceInfo,
    pub cuda_build: CudaBuild,
    pub kernels: Vec<KernelTiming>,
    pub verification: Verification,
}

/// The machine's physical limits, measured over one buffer size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    pub params: crate::bounds::Params,
    pub device: DeviceInfo,
    /// Bytes moved by one copy in each direction.
    pub bytes: u64,
    /// Pinned host to device, one copy per sample.
    pub h2d: Series,
    /// Device to pinned host, one copy per sample.
    pub d2h: Series,
    /// One copy each way at once on two streams: each sample is the mean over
    /// `bounds::STEADY_PAIRS` pairs issued back to back.
    pub bidirectional: Series,
    /// Device to device, one copy per sample.
    pub d2d: Series,
    /// Milliseconds per launch of an empty-ish kernel (fill of a 1×1 matrix), each
    /// sample the mean of `launches` back-to-back launches.
    pub launch: Series,
    /// Medians of the series above.
    pub h2d_ms: f64,
    pub d2h_ms: f64,
    pub bidirectional_ms: f64,
    pub d2d_ms: f64,
    /// GB/s (10^9 bytes) from the medians.
    pub h2d_gbps: f64,
    pub d2h_gbps: f64,
    /// Both directions together: 2 × bytes over the bidirectional median.
    pub bidirectional_gbps: f64,
    /// Bytes read plus bytes written: 2 × bytes over the device-to-device median.
    pub d2d_gbps: f64,
    /// Microseconds per launch (median).
    pub launch_us: f64,
}
