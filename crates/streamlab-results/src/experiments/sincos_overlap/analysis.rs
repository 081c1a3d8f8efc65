//! What sincos-overlap derives: each configuration against its bound (the pipeline's
//! stages from its own chunks' samples, its traced busiest engine or stream), the best
//! asynchronous configuration.
use super::{Ratio, SincosOverlapResult};
use crate::derived::rates::{for_chunks, stages};
use crate::derived::trace;
use crate::derived::trace::TracedBound;
use crate::experiments::prelude::*;

/// One configuration against its bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SincosConfig {
    pub variant: IssueOrder,
    pub streams: usize,
    /// Median time per iteration.
    pub median_ms: f64,
    pub bound: Bound,
    /// bound / median: 1 is the limit reached.
    pub efficiency: f64,
    /// Relative noise of its samples ([`crate::stats::Series::noise`]).
    pub noise: f64,
    /// Indices of its outlier samples, kept in the result.
    pub outliers: Vec<usize>,
    /// Its samples.
    #[serde(skip)]
    pub time: Series,
    /// From its traced batches: the time per iteration of its busiest engine or stream.
    pub busiest_bound: Option<TracedBound>,
    /// Where its batches sit under their traced busiest bound (the median of their
    /// ratios under 1), within or beyond the two figures' noise.
    pub under_busiest_bound: Option<Under>,
    /// The CUDA C++ host twin's samples.
    #[serde(skip)]
    pub cpp_host: Option<Series>,
    /// Rust host over C++ host (`SincosPoint::rust_host_over_cpp_host`).
    pub rust_host_over_cpp_host: Option<Ratio>,
    /// Traced rounds over untraced ones (`SincosPoint::traced_over_untraced`).
    pub traced_over_untraced: Option<Ratio>,
}

/// Everything derived from a sincos-overlap result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SincosAnalysis {
    /// The whole array's copy rates (one chunk): each way alone, both at once.
    pub rates: CopyRates,
    /// The whole array's stages (one chunk), fastest samples.
    pub stages: Stages,
    /// Iterations per batch over which fill and drain are shared.
    pub batch_iterations: usize,
    /// Sequential first, then each asynchronous variant by stream count.
    pub configs: Vec<SincosConfig>,
    /// Index into `configs` of the fastest asynchronous configuration.
    pub best_async: Option<usize>,
    /// Index into `configs` of the next fastest asynchronous configuration.
    pub runner_up: Option<usize>,
}

impl SincosAnalysis {
    /// Whether any configuration has the C++ host twin's or the traced rounds' figures.
    pub fn has_hosts(&self) -> bool {
        (self.configs.iter()).any(|c| c.cpp_host.is_some() || c.traced_over_untraced.is_some())
    }

    pub fn sequential(&self) -> Option<&SincosConfig> {
        self.configs
            .iter()
            .find(|c| c.variant == IssueOrder::Sequential)
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
    pub fn config(&self, variant: IssueOrder, streams: usize) -> Option<&SincosConfig> {
        self.configs
            .iter()
            .find(|c| c.variant == variant && c.streams == streams)
    }
}

/// Derive everything from `r`.
pub(super) fn analyze(r: &SincosOverlapResult) -> SincosAnalysis {
    let link = own_link(r);
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
    let mut configs: Vec<SincosConfig> =
        r.points
            .iter()
            .map(|p| {
                // The sequential version's blocking copy makes the host wait every
                // iteration, so its iterations never overlap.
                let runs = match p.variant {
                    IssueOrder::Sequential => 1,
                    _ => batch_iterations,
                };
                // The parts measured over this configuration's chunks, or coarser ones.
                let link = link.as_ref();
                let parts =
                    pipeline_stages(&r.stages, p.streams, None, link).unwrap_or(whole_stages);
                let (median_ms, noise) = (p.time.median(), p.time.noise());
                let bound = pipeline::bound(parts, p.streams, runs, r.run.device.copy_engines)
                    .held(median_ms, noise, chunks_noise(&r.stages, p.streams));
                let busiest_bound =
                    trace::traced_bound(&p.samples_of_rounds(true), &p.traced_busiest);
                SincosConfig {
                    variant: p.variant,
                    streams: p.streams,
                    median_ms,
                    bound,
                    efficiency: bound.ms / median_ms,
                    noise,
                    outliers: p.time.outliers(),
                    time: p.time.clone(),
                    busiest_bound,
                    under_busiest_bound: busiest_bound
                        .and_then(|b| Under::of(1.0, b.noise, b.timed_over_bound, noise)),
                    cpp_host: p.cpp_host.clone(),
                    rust_host_over_cpp_host: p.rust_host_over_cpp_host(),
                    traced_over_untraced: p.traced_over_untraced(),
                }
            })
            .collect();
    configs.sort_by_key(|c| {
        (
            c.variant != IssueOrder::Sequential,
            c.streams,
            c.variant as u8,
        )
    });
    let by_time = async_by_time(&configs, |c| (c.variant, c.median_ms));
    SincosAnalysis {
        rates,
        stages: whole_stages,
        batch_iterations,
        best_async: by_time.first().copied(),
        runner_up: by_time.get(1).copied(),
        configs,
    }
}

/// The indices of the asynchronous configurations among `items`, fastest first, by
/// `key`'s issue order and median time (those without a finite time left out): the one
/// ranking of the analysis's best configuration and of the one the run traces.
pub fn async_by_time<T>(items: &[T], key: impl Fn(&T) -> (IssueOrder, f64)) -> Vec<usize> {
    let mut by_time: Vec<usize> = (0..items.len())
        .filter(|&i| key(&items[i]).0 != IssueOrder::Sequential && key(&items[i]).1.is_finite())
        .collect();
    by_time.sort_by(|&a, &b| key(&items[a]).1.total_cmp(&key(&items[b]).1));
    by_time
}
