//! `summary.json`: the stable, machine-readable headline of a run. Other tools read these
//! keys; every figure is taken from the analyses of this module tree, never recomputed.
use serde::{Deserialize, Serialize};

use super::Derive;
use super::overlap_map::Crossover;
use crate::folder::{SavedRun, SeedRuns};
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
use crate::saved::sincos_overlap::{SincosOverlap, SincosVariant};
use crate::saved::{DeviceInfo, Experiment, Provenance};

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// False when the run was stopped before every step ran.
    pub complete: bool,
    /// The signal that stopped the run, e.g. "SIGINT".
    pub interrupted_by: Option<String>,
    /// The steps of the run that did not run or did not finish.
    pub steps_not_run: Vec<String>,
    /// The headline of each experiment run with the Rust kernels.
    pub experiments: ExperimentsSummary,
    /// The physical limits measured for the sincos array size.
    pub bounds: Option<BoundsSummary>,
    /// Per kernel, tuned forms: median Rust time over median CUDA C++ time (below 1:
    /// Rust is faster).
    pub rust_over_cuda: Option<KernelRatios>,
    /// The same for the plain forms.
    pub rust_over_cuda_plain: Option<KernelRatios>,
    /// The seed experiments' headline with the CUDA C++ kernels, when they ran.
    pub cuda_experiments: Option<ExperimentsSummary>,
    /// Per seed experiment: total time of every configuration measured with both kernel
    /// sets, Rust over CUDA C++.
    pub experiment_rust_over_cuda: Option<ExperimentRatios>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunStatus {
    pub interrupted_by: Option<String>,
    pub steps_not_run: Vec<String>,
}

/// `summary.json`'s `bounds`: medians of `bounds.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundsSummary {
    pub h2d_ms: f64,
    pub d2h_ms: f64,
    pub h2d_gbps: f64,
    pub d2h_gbps: f64,
    /// Both directions at once, in total.
    pub bidirectional_gbps: f64,
    /// Bytes read plus bytes written.
    pub d2d_gbps: f64,
    pub launch_us: f64,
}

/// Median-time ratios per kernel, Rust over CUDA C++.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRatios {
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

/// The headline of each experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ExperimentsSummary {
    #[serde(rename = "sincos-overlap")]
    pub sincos_overlap: Option<SincosSummary>,
    #[serde(rename = "matmul-streams")]
    pub matmul_streams: Option<MatmulSummary>,
    #[serde(rename = "memcpy-kernel")]
    pub memcpy_kernel: Option<MemcpySummary>,
    #[serde(
        rename = "kernel-concurrency",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub kernel_concurrency: Option<ConcurrencySummary>,
    #[serde(
        rename = "launch-overhead",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub launch_overhead: Option<LaunchSummary>,
    #[serde(
        rename = "graph-overlap",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub graph_overlap: Option<GraphSummary>,
    #[serde(
        rename = "overlap-map",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub overlap_map: Option<MapSummary>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mapped: Option<MappedSummary>,
}

fn not_measured() -> f64 {
    f64::NAN
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosSummary {
    pub verified: bool,
    /// Median time per iteration.
    pub sequential_ms: f64,
    /// The fastest asynchronous configuration (median).
    pub best_async_ms: f64,
    /// Its relative noise (NaN in summaries written before noise was measured).
    #[serde(default = "not_measured")]
    pub best_async_noise: f64,
    /// Whether its noise exceeds its lead over the next fastest configuration.
    #[serde(default)]
    pub best_within_noise: bool,
    pub best_async_variant: SincosVariant,
    pub best_async_streams: usize,
    /// That configuration's bound per iteration.
    pub bound_ms: f64,
    /// best_async_ms / bound_ms.
    pub best_over_bound: f64,
    /// Its busiest engine's time per iteration in its own traced iterations, where it
    /// was traced undisturbed, and best_async_ms over it.
    #[serde(default)]
    pub engine_bound_ms: Option<f64>,
    #[serde(default)]
    pub best_over_engine_bound: Option<f64>,
    /// Configurations faster than their engine bound (a measurement no correct run
    /// gives).
    #[serde(default)]
    pub rows_beyond_engine_bound: usize,
    /// Configurations that beat the bound built from the measured rates (each bound
    /// lowered to its row: a rate was under-measured).
    pub rows_beyond_bound: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatmulSummary {
    pub verified: bool,
    /// Median milliseconds; index 0 is 1 stream.
    pub ms_by_streams: Vec<f64>,
    pub speedup_max_streams: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpySummary {
    pub verified: bool,
    /// The stream count of the headline figures (the first measured; the Handbook's 8).
    pub num_streams: usize,
    /// The best speedup of any row, at any stream count.
    pub best_speedup: f64,
    pub best_speedup_streams: usize,
    pub best_speedup_cycles: i32,
    /// The first cycles value whose kernel outlasts both copies (medians).
    pub breakeven_cycles: Option<i32>,
    /// Speedup at the breakeven cycles with `num_streams` streams.
    pub speedup_at_breakeven: Option<f64>,
    /// The bound's speedup there: sequential total over the row's bound.
    pub bound_speedup_at_breakeven: Option<f64>,
    /// Rows that beat the bound built from the measured rates (each bound lowered to
    /// its row: a rate was under-measured).
    pub rows_beyond_bound: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConcurrencySummary {
    pub verified: bool,
    /// Serial over concurrent, 32 streams with 32 hardware queues.
    pub speedup_32_streams_32_queues: Option<f64>,
    /// Whether every stream count with 8 queues ran the model's number of waves.
    pub waves_match_model_8_queues: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchSummary {
    pub verified: bool,
    pub rust_launches_per_s: Option<f64>,
    pub cuda_launches_per_s: Option<f64>,
    pub rust_over_cuda_rate: Option<f64>,
    /// Graph replay's host time per launch over stream issue's.
    pub graph_over_stream_host: f64,
    pub breakeven_work_us: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphSummary {
    pub verified: bool,
    /// Graph over streams, GPU time, at the fewest chunks (the worse order).
    pub gpu_ratio_fewest_chunks: Option<f64>,
    /// Graph over streams, host time, at the most chunks (the worse order).
    pub host_ratio_most_chunks: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapSummary {
    pub verified: bool,
    pub crossovers: Vec<Crossover>,
    /// Whether the model's crossover is within one size step of the measured one for
    /// every stream count.
    pub model_within_one_step: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedSummary {
    pub verified: bool,
    /// The sizes (floats) at which mapped memory beat the streamed copies.
    pub mapped_wins: Vec<usize>,
    /// At the size nearest 2^25 floats: that size and mapped time over its bound.
    pub mapped_over_bound: Option<(usize, f64)>,
}

/// The headline of the seed experiments measured with one kernel set.
fn seed_summary(runs: &SeedRuns) -> ExperimentsSummary {
    ExperimentsSummary {
        sincos_overlap: runs.sincos_overlap.as_ref().and_then(|r| {
            let a = SincosOverlap::derive(r);
            let best = a.best()?;
            Some(SincosSummary {
                verified: r.verification.passed,
                sequential_ms: a.sequential().map_or(f64::NAN, |s| s.median_ms),
                best_async_ms: best.median_ms,
                best_async_noise: best.noise,
                best_within_noise: a.best_within_noise().is_some(),
                best_async_variant: best.variant,
                best_async_streams: best.streams,
                bound_ms: best.bound.ms,
                best_over_bound: best.median_ms / best.bound.ms,
                engine_bound_ms: best.engine_bound.map(|b| b.ms),
                best_over_engine_bound: best.engine_bound.map(|b| best.median_ms / b.ms),
                rows_beyond_engine_bound: a.rows_beyond_engine_bound,
                rows_beyond_bound: a.rows_beyond_bound,
            })
        }),
        matmul_streams: runs.matmul_streams.as_ref().map(|r| {
            let a = MatmulStreams::derive(r);
            MatmulSummary {
                verified: r.verification.passed,
                ms_by_streams: a.points.iter().map(|p| p.time.median()).collect(),
                speedup_max_streams: a.last().map_or(f64::NAN, |p| p.speedup),
            }
        }),
        memcpy_kernel: runs.memcpy_kernel.as_ref().map(|r| {
            let a = MemcpyKernel::derive(r);
            let best = a.best_row();
            let at = a.breakeven_row();
            MemcpySummary {
                verified: r.verification.passed,
                num_streams: a.headline_streams,
                best_speedup: best.map_or(f64::NAN, |b| b.speedup),
                best_speedup_streams: best.map_or(0, |b| b.streams),
                best_speedup_cycles: best.map_or(0, |b| b.cycles),
                breakeven_cycles: a.breakeven_cycles,
                speedup_at_breakeven: at.map(|b| b.speedup),
                bound_speedup_at_breakeven: at.map(|b| b.bound_speedup),
                rows_beyond_bound: a.rows_beyond_bound,
            }
        }),
        ..ExperimentsSummary::default()
    }
}

/// The headline of everything in `run`; `None` when the folder has no result to name its
/// device.
pub fn summarize(run: &SavedRun, status: RunStatus) -> Option<RunSummary> {
    let (device, provenance) = header(run)?;
    let mut experiments = seed_summary(&run.rust);
    experiments.kernel_concurrency = run.kernel_concurrency.as_ref().map(|r| {
        let a = KernelConcurrency::derive(r);
        let eight: Vec<_> = a.rows.iter().filter(|x| x.queues == 8).collect();
        ConcurrencySummary {
            verified: r.verification.passed,
            speedup_32_streams_32_queues: a.row(32, 32).map(|x| x.speedup),
            waves_match_model_8_queues: (!eight.is_empty())
                .then(|| eight.iter().all(|x| x.matches_model)),
        }
    });
    experiments.launch_overhead = run.launch_overhead.as_ref().map(|r| {
        let a = LaunchOverhead::derive(r);
        let rate = |set| {
            (a.rows.iter())
                .find(|x| x.kernels == set)
                .map(|x| x.launches_per_s)
        };
        LaunchSummary {
            verified: r.verification.passed,
            rust_launches_per_s: rate(crate::saved::KernelSet::Rust),
            cuda_launches_per_s: rate(crate::saved::KernelSet::Cuda),
            rust_over_cuda_rate: a.rust_over_cuda_rate,
            graph_over_stream_host: a.graph_over_stream_host,
            breakeven_work_us: a.breakeven_work_us,
        }
    });
    experiments.graph_overlap = run.graph_overlap.as_ref().map(|r| {
        let a = GraphOverlap::derive(r);
        let fewest = r.params.chunks.iter().min().copied();
        let most = r.params.chunks.iter().max().copied();
        let worst = |chunks: Option<usize>, pick: fn(&super::graph_overlap::GraphRow) -> f64| {
            (a.rows.iter())
                .filter(|x| Some(x.chunks) == chunks)
                .map(pick)
                .max_by(f64::total_cmp)
        };
        GraphSummary {
            verified: r.verification.passed,
            gpu_ratio_fewest_chunks: worst(fewest, |x| x.gpu_ratio),
            host_ratio_most_chunks: worst(most, |x| x.host_ratio),
        }
    });
    experiments.overlap_map = run.overlap_map.as_ref().map(|r| {
        let a = OverlapMap::derive(r);
        MapSummary {
            verified: r.verification.passed,
            model_within_one_step: (a.crossovers.iter()).all(|c| {
                c.steps_apart.is_some_and(|s| s <= 1) || (c.measured.is_none() && c.model.is_none())
            }),
            crossovers: a.crossovers,
        }
    });
    experiments.mapped = run.mapped.as_ref().map(|r| {
        let a = Mapped::derive(r);
        let near = (a.rows.iter()).min_by_key(|x| x.elements.abs_diff(1 << 25));
        MappedSummary {
            verified: r.verification.passed,
            mapped_wins: a.mapped_wins.clone(),
            mapped_over_bound: near.map(|x| (x.elements, x.mapped_ms / x.mapped_bound_ms)),
        }
    });
    let comparison = run.compare_kernels.as_ref().map(CompareKernels::derive);
    let cuda = seed_summary(&run.cuda);
    let any_cuda = cuda.sincos_overlap.is_some()
        || cuda.matmul_streams.is_some()
        || cuda.memcpy_kernel.is_some();
    Some(RunSummary {
        device,
        provenance,
        complete: status.steps_not_run.is_empty() && status.interrupted_by.is_none(),
        interrupted_by: status.interrupted_by,
        steps_not_run: status.steps_not_run,
        experiments,
        bounds: run.bounds.as_ref().map(Bounds::derive),
        rust_over_cuda: comparison.as_ref().and_then(|c| c.tuned.clone()),
        rust_over_cuda_plain: comparison.and_then(|c| c.plain),
        experiment_rust_over_cuda: any_cuda.then(|| super::experiment_ratios(&run.rust, &run.cuda)),
        cuda_experiments: any_cuda.then_some(cuda),
    })
}

/// The device and provenance of the first result in `run`.
pub fn header(run: &SavedRun) -> Option<(DeviceInfo, Provenance)> {
    macro_rules! first {
        ($($e:ty => $r:expr),* $(,)?) => {
            None$(.or_else(|| $r.as_ref().map(|r| (r.device.clone(), <$e as Experiment>::provenance(r).clone()))))*
        };
    }
    first!(
        Bounds => run.bounds,
        CompareKernels => run.compare_kernels,
        SincosOverlap => run.rust.sincos_overlap,
        MatmulStreams => run.rust.matmul_streams,
        MemcpyKernel => run.rust.memcpy_kernel,
        KernelConcurrency => run.kernel_concurrency,
        LaunchOverhead => run.launch_overhead,
        GraphOverlap => run.graph_overlap,
        OverlapMap => run.overlap_map,
        Mapped => run.mapped,
        Overlap => run.overlap,
    )
}
