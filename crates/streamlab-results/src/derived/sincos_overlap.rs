//! sincos-overlap's derived numbers: per configuration its median, its reachable bound
//! and the efficiency, and the best asynchronous configuration.
//!
//! Iterations run back to back in batches, so one iteration's copies out overlap the
//! next one's copies in, and the pipeline's fill and drain are paid once per batch: the
//! bound per iteration uses the largest batch ([`super::pipeline`]). A traced
//! configuration also has the bound of its busiest engine in its traced iterations
//! ([`super::trace`]), shown beside it.
use serde::{Deserialize, Serialize};

use super::pipeline::{self, Bound, Stages};
use super::rates::{best_rates, for_chunks, pipeline_stages, stages};
use super::trace::{self, EngineBound};
use crate::saved::sincos_overlap::{SincosOverlapResult, SincosVariant, trace_title};
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
    /// Beat the bound built from the measured stages: the bound was lowered to the row
    /// (`bound.built_ms` keeps what it was).
    pub beyond_bound: bool,
    /// Relative noise of its samples ([`crate::stats::Series::noise`]).
    pub noise: f64,
    /// Indices of its outlier samples, kept in the result.
    pub outliers: Vec<usize>,
    /// Where it was traced undisturbed: its busiest engine's time per iteration.
    pub engine_bound: Option<EngineBound>,
    /// Faster than its engine bound by more than the slack: a measurement no correct
    /// run gives.
    pub beyond_engine_bound: bool,
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
    /// Index into `configs` of the fastest asynchronous configuration.
    pub best_async: Option<usize>,
    /// Index into `configs` of the next fastest asynchronous configuration.
    pub runner_up: Option<usize>,
    /// Rows that beat the bound built from the measured stages (each bound lowered).
    pub rows_beyond_bound: usize,
    /// Rows faster than their engine bound.
    pub rows_beyond_engine_bound: usize,
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

    /// Where the best row's noise is larger than its lead over the next row: which of
    /// the two is faster is not settled by this run.
    pub fn best_within_noise(&self) -> Option<&SincosConfig> {
        let best = self.best()?;
        let next = &self.configs[self.runner_up?];
        let lead = next.median_ms / best.median_ms - 1.0;
        (best.noise.max(next.noise) > lead).then_some(next)
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
            let link = r.provenance.fastest_link.as_ref();
            let parts = pipeline_stages(&r.stages, p.streams, None, link).unwrap_or(whole_stages);
            let median_ms = p.time.median();
            let bound =
                pipeline::bound(parts, p.streams, runs, r.device.copy_engines).held(median_ms);
            let title = trace_title(p.variant, p.streams);
            let engine_bound = (r.timelines.iter())
                .find(|t| t.title == title)
                .and_then(|t| trace::check(t).engine_bound());
            SincosConfig {
                variant: p.variant,
                streams: p.streams,
                median_ms,
                bound,
                efficiency: bound.ms / median_ms,
                beyond_bound: bound.lowered(),
                noise: p.time.noise(),
                outliers: p.time.outliers(),
                engine_bound,
                beyond_engine_bound: engine_bound
                    .is_some_and(|b| pipeline::beyond(median_ms, b.ms)),
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
    let mut by_time: Vec<usize> = (0..configs.len())
        .filter(|&i| configs[i].variant != SincosVariant::Sequential)
        .filter(|&i| configs[i].median_ms.is_finite())
        .collect();
    by_time.sort_by(|&a, &b| configs[a].median_ms.total_cmp(&configs[b].median_ms));
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
        rows_beyond_engine_bound: configs.iter().filter(|c| c.beyond_engine_bound).count(),
        configs,
        stream_counts,
        best_async: by_time.first().copied(),
        runner_up: by_time.get(1).copied(),
    }
}
