//! sincos-overlap's derived numbers: per configuration its median, its reachable bound
//! and the efficiency, and the best asynchronous configuration.
//!
//! Iterations run back to back in batches, so one iteration's copies out overlap the
//! next one's copies in, and the pipeline's fill and drain are paid once per batch: the
//! bound per iteration uses the largest batch ([`super::pipeline`]).
use serde::{Deserialize, Serialize};

use super::pipeline::{self, Bound, Stages};
use super::rates::{best_rates, for_chunks, pipeline_stages, stages};
use crate::saved::sincos_overlap::{SincosOverlapResult, SincosVariant};
use crate::saved::timeline::CopyRates;

/// One configuration against its bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosConfig {
    pub variant: SincosVariant,
    pub streams: usize,
    /// Median time per iteration.
    pub median_ms: f64,
    pub bound: Bound,
    /// bound / median: 1 is the limit reached.
    pub efficiency: f64,
    /// Measured faster than its bound: the bound or the measurement is wrong.
    pub beyond_bound: bool,
}

/// Everything derived from a sincos-overlap result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosAnalysis {
    /// The whole array's copy rates (one chunk): each way alone, both at once.
    pub rates: CopyRates,
    /// The whole array's stages (one chunk), fastest samples.
    pub stages: Stages,
    /// Iterations per batch over which fill and drain are shared.
    pub batch_iterations: usize,
    /// Sequential first, then each asynchronous variant by stream count.
    pub configs: Vec<SincosConfig>,
    /// The stream counts measured, ascending.
    pub stream_counts: Vec<usize>,
    /// Index into `configs` of the fastest asynchronous configuration that is not
    /// faster than its bound.
    pub best_async: Option<usize>,
    pub rows_beyond_bound: usize,
}

impl SincosAnalysis {
    pub fn sequential(&self) -> Option<&SincosConfig> {
        self.configs
            .iter()
            .find(|c| c.variant == SincosVariant::Sequential)
    }

    pub fn best(&self) -> Option<&SincosConfig> {
        self.best_async.map(|i| &self.configs[i])
    }

    /// The configuration of `variant` at `streams`, if measured.
    pub fn config(&self, variant: SincosVariant, streams: usize) -> Option<&SincosConfig> {
        self.configs
            .iter()
            .find(|c| c.variant == variant && c.streams == streams)
    }
}

/// Derive everything from `r`.
pub fn analyze(r: &SincosOverlapResult) -> SincosAnalysis {
    let whole = for_chunks(&r.stages, 1);
    let rates = whole.map_or(CopyRates::UNMEASURED, best_rates);
    let whole_stages = whole.map_or(
        Stages {
            htod_ms: f64::NAN,
            kernel_ms: f64::NAN,
            dtoh_ms: f64::NAN,
            both_ms: f64::NAN,
        },
        |t| stages(t, None),
    );
    let batch_iterations = r.batch_sizes.iter().copied().max().unwrap_or(1);
    let mut configs: Vec<SincosConfig> = r
        .points
        .iter()
        .map(|p| {
            // The sequential version's blocking copy makes the host wait every
            // iteration, so its iterations never overlap.
            let runs = match p.variant {
                SincosVariant::Sequential => 1,
                _ => batch_iterations,
            };
            // The parts measured over this configuration's chunks, or coarser ones.
            let parts = pipeline_stages(&r.stages, p.streams, None).unwrap_or(whole_stages);
            let bound = pipeline::bound(parts, p.streams, runs, r.device.copy_engines);
            let median_ms = p.time.median();
            SincosConfig {
                variant: p.variant,
                streams: p.streams,
                median_ms,
                bound,
                efficiency: bound.ms / median_ms,
                beyond_bound: pipeline::beyond(median_ms, bound.ms),
            }
        })
        .collect();
    configs.sort_by_key(|c| {
        (
            c.variant != SincosVariant::Sequential,
            c.streams,
            c.variant as u8,
        )
    });
    let best_async = (configs.iter().enumerate())
        .filter(|(_, c)| c.variant != SincosVariant::Sequential && !c.beyond_bound)
        .filter(|(_, c)| c.median_ms.is_finite())
        .min_by(|a, b| a.1.median_ms.total_cmp(&b.1.median_ms))
        .map(|(i, _)| i);
    let mut stream_counts: Vec<usize> = (configs.iter())
        .filter(|c| c.variant != SincosVariant::Sequential)
        .map(|c| c.streams)
        .collect();
    stream_counts.sort_unstable();
    stream_counts.dedup();
    SincosAnalysis {
        rates,
        stages: whole_stages,
        batch_iterations,
        rows_beyond_bound: configs.iter().filter(|c| c.beyond_bound).count(),
        configs,
        stream_counts,
        best_async,
    }
}
