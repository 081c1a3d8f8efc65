//! Every number derived from saved results, each computed here once: stream counts,
//! medians, speedups, bounds, efficiencies, breakeven points, "best" configurations,
//! trace checks and the `summary.json` headline. Printed tables, JSON, charts and the
//! report all read these; none computes its own.
pub mod bounds;
pub mod compare_kernels;
pub mod graph_overlap;
pub mod kernel_concurrency;
pub mod launch_overhead;
pub mod mapped;
pub mod matmul_streams;
pub mod memcpy_kernel;
pub mod overlap;
pub mod overlap_map;
pub mod pipeline;
pub mod rates;
pub mod sincos_overlap;
pub mod summary;
pub mod trace;

use serde::Serialize;

use crate::folder::SeedRuns;
use crate::saved::Experiment;
use crate::saved::bounds::Bounds;
use crate::saved::compare_kernels::CompareKernels;
use crate::saved::graph_overlap::GraphOverlap;
use crate::saved::kernel_concurrency::KernelConcurrency;
use crate::saved::launch_overhead::LaunchOverhead;
use crate::saved::mapped::Mapped;
use crate::saved::matmul_streams::MatmulStreams;
use crate::saved::memcpy_kernel::MemcpyKernel;
use crate::saved::overlap::Overlap;
use crate::saved::overlap_map::OverlapMap;
use crate::saved::sincos_overlap::SincosOverlap;

/// An experiment's derived numbers, saved beside its result in its JSON.
pub trait Derive: Experiment {
    type Derived: Serialize + Clone + std::fmt::Debug;
    fn derive(result: &Self::Result) -> Self::Derived;
}

macro_rules! derive {
    ($($experiment:ty => $module:ident :: $derived:ident),* $(,)?) => {$(
        impl Derive for $experiment {
            type Derived = $module::$derived;
            fn derive(result: &Self::Result) -> $module::$derived {
                $module::analyze(result)
            }
        }
    )*};
}

derive!(
    Bounds => bounds::BoundsSummary,
    CompareKernels => compare_kernels::ComparisonAnalysis,
    SincosOverlap => sincos_overlap::SincosAnalysis,
    MatmulStreams => matmul_streams::MatmulAnalysis,
    MemcpyKernel => memcpy_kernel::MemcpyAnalysis,
    KernelConcurrency => kernel_concurrency::ConcurrencyAnalysis,
    LaunchOverhead => launch_overhead::LaunchAnalysis,
    GraphOverlap => graph_overlap::GraphAnalysis,
    OverlapMap => overlap_map::MapAnalysis,
    Mapped => mapped::MappedAnalysis,
    Overlap => overlap::OverlapAnalysis,
);

/// Every configuration both kernel sets measured, summed, Rust over CUDA C++.
fn experiment_ratios(rust: &SeedRuns, cuda: &SeedRuns) -> summary::ExperimentRatios {
    fn ratio(rust: Vec<(String, f64)>, cuda: Vec<(String, f64)>) -> Option<f64> {
        let (r, c) = (rust.iter())
            .filter_map(|(key, t)| cuda.iter().find(|(k, _)| k == key).map(|(_, u)| (*t, *u)))
            .fold((0.0, 0.0), |(a, b), (t, u)| (a + t, b + u));
        (c > 0.0).then(|| r / c)
    }
    let sincos = |r| -> Vec<(String, f64)> {
        (SincosOverlap::derive(r).configs.iter())
            .map(|c| (format!("{:?}{}", c.variant, c.streams), c.median_ms))
            .collect()
    };
    let matmul = |r| -> Vec<(String, f64)> {
        (MatmulStreams::derive(r).points.iter())
            .map(|p| (p.streams.to_string(), p.time.median()))
            .collect()
    };
    let memcpy = |r| -> Vec<(String, f64)> {
        (MemcpyKernel::derive(r).rows.iter())
            .map(|x| {
                (
                    format!("{}/{}", x.streams, x.cycles),
                    x.total_ms + x.concurrent_ms,
                )
            })
            .collect()
    };
    summary::ExperimentRatios {
        sincos_overlap: (rust.sincos_overlap.as_ref())
            .zip(cuda.sincos_overlap.as_ref())
            .and_then(|(r, c)| ratio(sincos(r), sincos(c))),
        matmul_streams: (rust.matmul_streams.as_ref())
            .zip(cuda.matmul_streams.as_ref())
            .and_then(|(r, c)| ratio(matmul(r), matmul(c))),
        memcpy_kernel: (rust.memcpy_kernel.as_ref())
            .zip(cuda.memcpy_kernel.as_ref())
            .and_then(|(r, c)| ratio(memcpy(r), memcpy(c))),
    }
}
