//! What a streamlab run records and the runtime returns, shared by the crate that
//! measures (`streamlab-runtime`) and the crate that saves, derives and renders
//! (`streamlab-results`): the GPU a result ran on and the kernels that ran
//! ([`DeviceInfo`], [`KernelSet`], [`KernelForm`], [`CudaBuild`]), how an iteration was
//! issued ([`IssueOrder`]), a traced timeline ([`timeline`]), the GPUs' clocks and links
//! ([`clocks`], [`links`]) and a kernel's card ([`card`]). Types only, with what reads
//! them in words; serde for the JSON they are saved in.
use serde::{Deserialize, Serialize};

pub mod card;
pub mod clocks;
pub mod links;
pub mod timeline;

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
    /// The L2 cache's size (0 in runs from before it was recorded).
    #[serde(default, skip_serializing_if = "unrecorded")]
    pub l2_bytes: u64,
    /// The CUDA version the driver supports, as `major.minor`.
    pub driver_cuda_version: String,
    /// PCIe link, where the driver exposes it (e.g. "PCIe 32.0 GT/s x16").
    pub pcie_link: Option<String>,
}

/// A size a run did not record (0), left out of the JSON as it was.
fn unrecorded(bytes: &u64) -> bool {
    *bytes == 0
}

/// Which implementation of the kernels ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum KernelSet {
    /// The Rust kernels of `kernels-rs/`.
    Rust,
    /// The CUDA C++ twins, compiled at run time with NVRTC.
    Cuda,
}

impl KernelSet {
    pub fn label(self) -> &'static str {
        match self {
            KernelSet::Rust => "Rust",
            KernelSet::Cuda => "CUDA C++",
        }
    }
}

/// Which form of each kernel ran: the write-up's, the safe one, or the tuned one.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum KernelForm {
    /// As the write-ups have them: the naive matmul loop, AddKernel's `volatile` local,
    /// separate `sin` and `cos`.
    Plain,
    /// No `unsafe` in the kernel body: slices and iterators, one check per row or
    /// column that the optimizer can hoist, `core::hint::black_box` for AddKernel's loop.
    Safe,
    /// Batched matmul loads, AddKernel's sum kept in a register, one `sincos`.
    #[default]
    Tuned,
}

impl KernelForm {
    pub const ALL: [KernelForm; 3] = [KernelForm::Plain, KernelForm::Safe, KernelForm::Tuned];

    pub fn label(self) -> &'static str {
        match self {
            KernelForm::Plain => "plain",
            KernelForm::Safe => "safe",
            KernelForm::Tuned => "tuned",
        }
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

/// How the work of one iteration is issued over streams: the blog's three orders, which
/// experiments that run the blog's workload share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IssueOrder {
    /// Blocking copies, one kernel over the whole array.
    Sequential,
    /// Per stream: copy in, kernel, copy out (depth first).
    Async1,
    /// All copies in, then all kernels, then all copies out (breadth first).
    Async2,
}

impl IssueOrder {
    pub const ASYNC: [IssueOrder; 2] = [IssueOrder::Async1, IssueOrder::Async2];

    /// The blog's name.
    pub fn label(self) -> &'static str {
        match self {
            IssueOrder::Sequential => "sequential",
            IssueOrder::Async1 => "asynchronous 1",
            IssueOrder::Async2 => "asynchronous 2",
        }
    }

    /// A short name, for chart legends.
    pub fn short(self) -> &'static str {
        match self {
            IssueOrder::Sequential => "seq",
            IssueOrder::Async1 => "async 1",
            IssueOrder::Async2 => "async 2",
        }
    }
}
