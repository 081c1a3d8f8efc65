//! launch-overhead's derived numbers: launches per second of each language, graph replay
//! against stream issue, and the work per kernel at which the launch cost stops mattering.
use serde::{Deserialize, Serialize};

use crate::saved::KernelSet;
use crate::saved::launch_overhead::{LaunchCosts, LaunchOverheadResult};

/// The overhead share under which a kernel's launch cost "stops mattering".
pub const BREAKEVEN_OVERHEAD: f64 = 0.10;

/// One language's launch costs (medians, microseconds per launch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchRow {
    pub kernels: KernelSet,
    pub async_host_us: f64,
    pub async_gpu_us: f64,
    pub sync_us: f64,
    /// Back-to-back launches per second: one per the slower of host issue and GPU.
    pub launches_per_s: f64,
}

/// One work size of the breakeven curve (medians, microseconds per kernel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakevenRow {
    pub work_us: u32,
    pub per_kernel_us: f64,
    /// The bound: the work itself, or the cost of an empty launch if larger.
    pub bound_us: f64,
    /// (per kernel − work) / per kernel: the share of each kernel's time that is not work.
    pub overhead_share: f64,
}

/// Everything derived from a launch-overhead result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchAnalysis {
    pub rows: Vec<LaunchRow>,
    /// Rust's launch rate over the CUDA C++ twin's (above 1: Rust launches faster).
    pub rust_over_cuda_rate: Option<f64>,
    pub graph_host_us: f64,
    pub graph_gpu_us: f64,
    /// Graph replay's host time per launch over stream issue's (Rust).
    pub graph_over_stream_host: f64,
    pub breakeven: Vec<BreakevenRow>,
    /// The least work per kernel whose overhead share is at most [`BREAKEVEN_OVERHEAD`].
    pub breakeven_work_us: Option<u32>,
}

fn row(c: &LaunchCosts) -> LaunchRow {
    let (host, gpu) = (c.async_host_us.median(), c.async_gpu_us.median());
    LaunchRow {
        kernels: c.kernels,
        async_host_us: host,
        async_gpu_us: gpu,
        sync_us: c.sync_us.median(),
        launches_per_s: 1e6 / host.max(gpu),
    }
}

/// Derive everything from `r`.
pub fn analyze(r: &LaunchOverheadResult) -> LaunchAnalysis {
    let rows: Vec<LaunchRow> = r.stream.iter().map(row).collect();
    let rate = |set| {
        rows.iter()
            .find(|x| x.kernels == set)
            .map(|x| x.launches_per_s)
    };
    let rust = rows.iter().find(|x| x.kernels == KernelSet::Rust);
    let empty_us = rust.map_or(0.0, |x| x.async_gpu_us);
    let breakeven: Vec<BreakevenRow> = (r.breakeven.iter())
        .map(|p| {
            let per_kernel_us = p.per_kernel_us.median();
            let work = f64::from(p.work_us);
            BreakevenRow {
                work_us: p.work_us,
                per_kernel_us,
                bound_us: work.max(empty_us),
                overhead_share: (per_kernel_us - work) / per_kernel_us,
            }
        })
        .collect();
    let graph_host_us = r.graph.host_us.median();
    LaunchAnalysis {
        rust_over_cuda_rate: rate(KernelSet::Rust)
            .zip(rate(KernelSet::Cuda))
            .map(|(r, c)| r / c),
        graph_host_us,
        graph_gpu_us: r.graph.gpu_us.median(),
        graph_over_stream_host: graph_host_us / rust.map_or(f64::NAN, |x| x.async_host_us),
        breakeven_work_us: (breakeven.iter())
            .filter(|b| b.work_us > 0 && b.overhead_share <= BREAKEVEN_OVERHEAD)
            .map(|b| b.work_us)
            .min(),
        breakeven,
        rows,
    }
}
