//! What multi-gpu-overlap derives: each GPU's share against its own bound, the host
//! link's bound on all of them together, the speedup and the headline.
use super::{MultiGpuOverlapResult, TARGET};
use crate::derived::pipeline;
use crate::derived::pipeline::{Bound, Limiter, Stages};
use crate::derived::rates::{gbps, stage_noise, stages};
use serde::{Deserialize, Serialize};

/// What bounds the spread run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Limit {
    /// The slowest GPU's own pipeline for its share, and what limits it.
    Gpu { ordinal: usize, limiter: Limiter },
    /// Every GPU's copies sharing the host's link.
    HostLink,
}

impl Limit {
    pub fn label(self) -> String {
        match self {
            Limit::Gpu { ordinal, limiter } => format!("GPU {ordinal}: {}", limiter.label()),
            Limit::HostLink => "the host link, shared by every GPU".into(),
        }
    }
}

/// One GPU's share against its own pipeline bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuBound {
    pub ordinal: usize,
    pub elements: usize,
    pub streams: usize,
    /// Its share's stages (fastest samples) and its pipeline bound per iteration;
    /// `None` where it had no elements.
    pub stages: Option<Stages>,
    pub bound: Option<Bound>,
}

/// Everything derived from a multi-gpu-overlap result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiGpuAnalysis {
    /// GPUs in the run, and streams per GPU asked for.
    pub gpus: usize,
    pub streams: usize,
    /// Iterations per batch over which each pipeline's fill and drain are shared.
    pub batch_iterations: usize,
    /// Medians per iteration, and their relative noise.
    pub spread_ms: f64,
    pub spread_noise: f64,
    pub alone_ms: f64,
    pub alone_noise: f64,
    /// alone / spread.
    pub speedup: f64,
    pub per_gpu: Vec<GpuBound>,
    /// The slowest GPU's pipeline bound.
    pub gpus_bound_ms: f64,
    /// Every GPU copying both ways at once: the fastest pass, as a bound per iteration
    /// and as GB/s (both directions together).
    pub host_link_ms: f64,
    pub host_link_gbps: f64,
    /// The larger of the two, and which it is.
    pub bound_ms: f64,
    pub limit: Limit,
    /// The first GPU's pipeline bound for the whole work alone.
    pub alone_bound: Bound,
    /// alone bound / bound.
    pub bound_speedup: f64,
    /// speedup / bound speedup: 1 is the bound reached.
    pub efficiency: f64,
    /// Whether the speedup is within [`TARGET`] of the bound's.
    pub at_bound: bool,
    /// The spread run beat its bound by more than the slack: a limit was
    /// under-measured.
    pub beyond_bound: bool,
    /// GPUs that had fewer elements than `--streams` (ordinal, streams used).
    pub fewer_streams: Vec<(usize, usize)>,
}

/// Derive everything from `r`.
pub(super) fn analyze(r: &MultiGpuOverlapResult) -> MultiGpuAnalysis {
    let runs = r.batch_sizes.iter().copied().max().unwrap_or(1);
    let per_gpu: Vec<GpuBound> = (r.gpus.iter())
        .map(|g| {
            let stages = g.stages.as_ref().map(|t| stages(t, None));
            GpuBound {
                ordinal: g.device.ordinal,
                elements: g.elements,
                streams: g.streams,
                stages,
                bound: stages.map(|s| pipeline::bound(s, g.streams, runs, g.device.copy_engines)),
            }
        })
        .collect();
    let slowest = (per_gpu.iter())
        .filter_map(|g| Some((g.ordinal, g.bound?)))
        .max_by(|a, b| a.1.ms.total_cmp(&b.1.ms));
    let gpus_bound_ms = slowest.map_or(0.0, |(_, b)| b.ms);
    let host_link_ms = r.host_link.min();
    let (bound_ms, limit) = match slowest {
        Some((ordinal, b)) if b.ms >= host_link_ms => (
            b.ms,
            Limit::Gpu {
                ordinal,
                limiter: b.limiter,
            },
        ),
        _ => (host_link_ms, Limit::HostLink),
    };
    let spread_ms = r.spread.median();
    let alone_ms = r.alone.median();
    let first = r.gpus.first();
    let alone_bound = pipeline::bound(
        stages(&r.alone_stages, None),
        r.alone_stages.chunks,
        runs,
        first.map_or(0, |g| g.device.copy_engines),
    )
    .held(alone_ms, r.alone.noise(), stage_noise(&r.alone_stages));
    let speedup = alone_ms / spread_ms;
    let bound_speedup = alone_bound.ms / bound_ms;
    MultiGpuAnalysis {
        gpus: r.gpus.len(),
        streams: r.run.params.streams,
        batch_iterations: runs,
        spread_ms,
        spread_noise: r.spread.noise(),
        alone_ms,
        alone_noise: r.alone.noise(),
        speedup,
        per_gpu,
        gpus_bound_ms,
        host_link_ms,
        host_link_gbps: gbps(2 * r.run.params.bytes(), host_link_ms),
        bound_ms,
        limit,
        alone_bound,
        bound_speedup,
        efficiency: speedup / bound_speedup,
        at_bound: bound_speedup <= TARGET * speedup,
        beyond_bound: pipeline::beyond(spread_ms, bound_ms),
        fewer_streams: (r.gpus.iter())
            .filter(|g| g.streams < r.run.params.streams)
            .map(|g| (g.device.ordinal, g.streams))
            .collect(),
    }
}

/// multi-gpu-overlap's headline in `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiGpuSummary {
    pub verified: bool,
    pub gpus: usize,
    pub spread_ms: f64,
    pub alone_ms: f64,
    pub speedup: f64,
    pub bound_speedup: f64,
    pub limit: Limit,
    pub at_bound: bool,
}
