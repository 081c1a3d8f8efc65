//! What multi-gpu-overlap derives: each GPU's share against its own bound, the host
//! link's bound on all of them together (the best of its probes before, between and after
//! the timed batches), each run held to its bound, the speedup and the headline.
use super::{MultiGpuOverlapResult, TARGET};
use crate::derived::pipeline;
use crate::derived::pipeline::Limiter;
use crate::derived::rates::{stage_noise, stages};
use crate::experiments::prelude::*;

/// What bounds the spread run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Limit {
    /// The slowest GPU's own pipeline for its share, and what limits it.
    Gpu { ordinal: usize, limiter: Limiter },
    /// Every GPU's copies to and from the host, at once.
    HostLink,
}

impl Limit {
    pub fn label(self) -> String {
        match self {
            Limit::Gpu { ordinal, limiter } => format!("GPU {ordinal}: {}", limiter.label()),
            Limit::HostLink => "every GPU's host copies at once".into(),
        }
    }
}

/// One GPU's share against its own pipeline bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuBound {
    pub ordinal: usize,
    pub elements: usize,
    pub streams: usize,
    /// Its share's stages (fastest samples) and its pipeline bound per iteration;
    /// `None` where it had no elements.
    pub stages: Option<Stages>,
    pub bound: Option<Bound>,
}

/// The probes of every GPU copying in and out at once: how many were taken before, between
/// and after the timed batches, and where the fastest, the bound's, was taken (`"before"`,
/// `"between"` or `"after"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HostLinkProbes {
    pub before: usize,
    pub between: usize,
    pub after: usize,
    pub best: &'static str,
}

/// Everything derived from a multi-gpu-overlap result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultiGpuAnalysis {
    /// GPUs in the run, and streams per GPU asked for.
    pub gpus: usize,
    pub streams: usize,
    /// alone / spread, of the medians per iteration.
    pub speedup: f64,
    pub per_gpu: Vec<GpuBound>,
    /// The slowest GPU's pipeline bound.
    pub gpus_bound_ms: f64,
    /// Every GPU copying both ways at once: the fastest pass of every probe, as a bound
    /// per iteration and as GB/s (both directions together), and the probes' noise.
    pub host_link_ms: f64,
    pub host_link_gbps: f64,
    pub host_link_noise: f64,
    pub host_link_probes: HostLinkProbes,
    /// The spread run's bound, held to it: the larger of the two above as built
    /// (`bound.built_ms` where the run beat it by more than the slack and it was lowered
    /// to the run), where the run sits under it, and which limit it is.
    pub bound: Bound,
    pub limit: Limit,
    /// The first GPU's pipeline bound for the whole work alone, held to its run.
    pub alone_bound: Bound,
    /// Each run's median over its bound: 1 is the bound reached.
    pub spread_over_bound: f64,
    pub alone_over_bound: f64,
    /// alone bound / spread bound: the speedup of both runs at their bounds.
    pub bound_speedup: f64,
    /// speedup / bound speedup: 1 is the bound reached.
    pub efficiency: f64,
    /// Whether the speedup is within [`TARGET`] of the bound's.
    pub at_bound: bool,
    /// A run beat its bound as built by more than the slack and beyond the two figures'
    /// noise: a limit was under-measured, and the run is flagged, never a finding.
    pub beyond_bound: bool,
}

/// Whether `bound`, held to its run, was beaten beyond the slack and the noise.
fn beaten(bound: &Bound) -> bool {
    bound.lowered() && bound.under == Some(Under::BeyondNoise)
}

/// The host link's best-of bound per iteration over every probe of every GPU copying at
/// once, the probes' noise and what they were.
fn host_link(r: &MultiGpuOverlapResult) -> (f64, f64, HostLinkProbes) {
    let probes = [
        Some(&r.host_link),
        r.host_link_between.as_ref(),
        r.host_link_after.as_ref(),
    ];
    let [before, between, after] = probes.map(|s| s.map_or(0, |s| s.samples_ms.len()));
    let (ms, best) = (probes.into_iter().zip(["before", "between", "after"]))
        .filter_map(|(s, when)| Some((s?.min(), when)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap_or((f64::NAN, "before"));
    let samples = probes.iter().flatten().flat_map(|s| s.samples_ms.clone());
    let noise = Series::new(samples.collect()).map_or(f64::NAN, |s| s.noise());
    let probes = HostLinkProbes {
        before,
        between,
        after,
        best,
    };
    (ms, noise, probes)
}

/// Derive everything from `r`.
pub(super) fn analyze(r: &MultiGpuOverlapResult) -> MultiGpuAnalysis {
    let runs = r.batch_sizes.iter().copied().max().unwrap_or(1);
    // Each GPU's share against its own pipeline bound, over batches of `runs` iterations.
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
    let slowest = (per_gpu.iter().zip(&r.gpus))
        .filter_map(|(g, share)| Some((g.ordinal, g.bound?, share.stages.as_ref()?)))
        .max_by(|a, b| a.1.ms.total_cmp(&b.1.ms));
    let (host_link_ms, host_link_noise, host_link_probes) = host_link(r);
    let (spread, alone) = (&r.spread, &r.alone);
    let (spread_ms, alone_ms) = (spread.median(), alone.median());
    // The spread run's bound as built (the slowest GPU's or the host link's, whichever is
    // larger), the noise of what it was built from, and which limit it is.
    let (built, built_noise, limit) = match slowest {
        Some((ordinal, b, t)) if b.ms >= host_link_ms || host_link_ms.is_nan() => {
            let limiter = b.limiter;
            (b, stage_noise(t), Limit::Gpu { ordinal, limiter })
        }
        _ => {
            let host_link = Bound {
                ms: host_link_ms,
                limiter: Limiter::BothWays,
                built_ms: None,
                noise: None,
                under: None,
            };
            (host_link, host_link_noise, Limit::HostLink)
        }
    };
    let bound = built.held(spread_ms, spread.noise(), built_noise);
    let first = r.gpus.first();
    let alone_bound = pipeline::bound(
        stages(&r.alone_stages, None),
        r.alone_stages.chunks,
        runs,
        first.map_or(0, |g| g.device.copy_engines),
    )
    .held(alone_ms, alone.noise(), stage_noise(&r.alone_stages));
    let speedup = alone_ms / spread_ms;
    let bound_speedup = alone_bound.ms / bound.ms;
    MultiGpuAnalysis {
        gpus: r.gpus.len(),
        streams: r.run.params.streams,
        speedup,
        per_gpu,
        gpus_bound_ms: slowest.map_or(0.0, |(_, b, _)| b.ms),
        host_link_ms,
        host_link_gbps: gbps(2 * r.run.params.bytes(), host_link_ms),
        host_link_noise,
        host_link_probes,
        limit,
        spread_over_bound: spread_ms / bound.ms,
        alone_over_bound: alone_ms / alone_bound.ms,
        beyond_bound: beaten(&bound) || beaten(&alone_bound),
        bound,
        alone_bound,
        bound_speedup,
        efficiency: speedup / bound_speedup,
        at_bound: bound_speedup <= TARGET * speedup,
    }
}
