//! sincos-overlap, after the "CUDA streams" blog post: `b[i] = a[i] + sqrt(sin(i)² +
//! cos(i)²)` over pinned floats, sequential against two asynchronous issue orders; per
//! configuration its median, its noise, its reachable bound and the efficiency, and the
//! best asynchronous configuration.
//!
//! Iterations run back to back in batches, so one iteration's copies out overlap the
//! next one's copies in, and the pipeline's fill and drain are paid once per batch: the
//! bound per iteration uses the largest batch ([`crate::derived::pipeline`]). A traced
//! configuration also has the bound of its busiest engine or stream in its traced
//! iterations ([`crate::derived::trace`]), shown beside it.
use serde::{Deserialize, Serialize};

use crate::derived::pipeline::{self, Bound, Stages, Under, count_under, under_clause};
use crate::derived::rates::{best_rates, chunks_noise, for_chunks, pipeline_stages, stages};
use crate::derived::trace::{self, BusiestBound, TracedBound};
use crate::derived::trace::TraceChecks;
use crate::experiment::{own_link, self, Experiment, MS, MeasuredRow, With, verdict, Analyzed, Csv, Saved, Summary};
use crate::report::ReportError;
use crate::report::chart::{
    BOUND_COLOR, BarSeries, LineSeries, PALETTE, SEQUENTIAL_COLOR, XAxis, YScale,
};
use crate::report::figures::{FigureModel, blank, line};
use crate::report::section::{Section, cuda_note, draw};
use crate::report::table::{Columns, Table, noise, num, ratio, times, under_csv};
use crate::saved::timeline::{CopyRates, Timeline};
use crate::saved::{
    DeviceInfo, IssueOrder, MAX_STREAMS, Provenance, StageTimes, UsageError,
    Verification,
};
use crate::stats::{self, Series};

/// The sincos-overlap experiment.
pub struct SincosOverlap;

/// Iterations of each traced batch (one after every timed batch of an asynchronous
/// configuration): all but the first and the last run as the timed ones do.
pub const TRACED_BATCH: usize = 10;

/// Parameters; defaults are the blog's.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Floats in the array.
    #[arg(long, default_value_t = 1 << 25,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=u32::MAX as u64))]
    pub elements: usize,
    /// Threads per block (the blog's code uses 1024).
    #[arg(long, default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// Untimed iterations before each configuration is timed.
    #[arg(long, default_value_t = 100)]
    pub warmup: usize,
    /// Timed iterations per configuration.
    #[arg(long, default_value_t = 1000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub iterations: usize,
    /// Timed batches the iterations are split into, each giving one sample; up to three
    /// times as many while a configuration's noise is above 1% [default: min(10,
    /// --iterations)].
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub batches: Option<usize>,
    /// Streams of the headline comparison (the blog's 4); also the traced count.
    #[arg(long, default_value_t = 4,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub streams: usize,
    /// Stream counts of the sweep, comma separated (one stream is the sequential
    /// version's schedule, timed as such).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub stream_counts: Vec<usize>,
}

impl Default for Params {
    /// The command line's defaults: the `#[arg]` attributes above are their one source.
    fn default() -> Params {
        crate::saved::clap_defaults()
    }
}

impl crate::saved::Params for Params {
    fn quick() -> Params {
        Params {
            elements: 1 << 24,
            warmup: 5,
            iterations: 20,
            batches: Some(4),
            stream_counts: vec![2, 4, 8],
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        if self.batches() > self.iterations {
            return Err(UsageError::new(format!(
                "--batches {} exceeds --iterations {}: each batch needs at least one iteration",
                self.batches(),
                self.iterations
            )));
        }
        if let Some(&count) = self
            .all_stream_counts()
            .iter()
            .find(|&&c| c > self.elements)
        {
            return Err(UsageError::new(format!(
                "{count} streams for {} elements leaves streams without work: use at most {} streams",
                self.elements, self.elements
            )));
        }
        Ok(())
    }

    fn fit(&mut self) -> Option<String> {
        let dropped: Vec<String> = (self.stream_counts.iter())
            .filter(|&&c| c > self.elements)
            .map(ToString::to_string)
            .collect();
        let lowered = self.streams > self.elements;
        if dropped.is_empty() && !lowered {
            return None;
        }
        let mut said = Vec::new();
        if !dropped.is_empty() {
            self.stream_counts.retain(|&c| c <= self.elements);
            said.push(format!("stream counts {} dropped", dropped.join(",")));
        }
        if lowered {
            said.push(format!(
                "--streams {} lowered to {}",
                self.streams, self.elements
            ));
            self.streams = self.elements;
        }
        Some(format!(
            "{} elements give at most {} streams work: {}",
            self.elements,
            self.elements,
            said.join(", ")
        ))
    }
}

impl Params {
    /// The timed batches: `--batches`, else min(10, iterations).
    pub fn batches(&self) -> usize {
        self.batches.unwrap_or(self.iterations.min(10))
    }

    /// Every stream count measured: the sweep plus `--streams`, ascending.
    pub fn all_stream_counts(&self) -> Vec<usize> {
        let mut counts = self.stream_counts.clone();
        counts.push(self.streams);
        counts.sort_unstable();
        counts.dedup();
        counts
    }

    /// Bytes of the array, moved once each way per iteration.
    pub fn bytes(&self) -> u64 {
        (self.elements * size_of::<f32>()) as u64
    }
}

/// The title of `variant`'s traced timeline at `streams`: how its row finds it.
pub fn trace_title(variant: IssueOrder, streams: usize) -> String {
    format!("sincos-overlap {}, {streams} streams", variant.label())
}

/// One variant at one stream count: each sample is the mean time per iteration of one
/// timed batch of back-to-back iterations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosPoint {
    pub variant: IssueOrder,
    pub streams: usize,
    pub time: Series,
    /// Asynchronous orders, with CUPTI: one per timed batch of a traced round (every
    /// batch in runs from before rounds alternated), from a batch of iterations traced
    /// back to back right after it, the busy time per steady iteration of its
    /// busiest engine or stream ([`trace::busiest_bound`]; the records are not kept).
    #[serde(default)]
    pub traced_busiest: Vec<BusiestBound>,
    /// The CUDA C++ host twin's samples, batch for batch with `time`: sample `j` of each
    /// was taken in the same round, one right after the other (absent where it did not
    /// run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpp_host: Option<Series>,
    /// For each sample of `time`, whether it was taken in a round that traced every
    /// asynchronous batch right after timing it (rounds alternate; empty in runs from
    /// before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traced_round: Vec<bool>,
}

/// Whether and how the CUDA C++ host twin ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CppHostRun {
    /// Runs from before the twin.
    #[default]
    NotAsked,
    /// Not run, and why (one line).
    Skipped(String),
    /// Built by nvcc (its path, version and options) and run beside the Rust host.
    Built(String),
}

impl CppHostRun {
    /// A run from before the twin.
    pub fn not_asked(&self) -> bool {
        *self == CppHostRun::NotAsked
    }
}

/// A median ratio and its relative noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub ratio: f64,
    pub noise: f64,
}

impl Ratio {
    /// The median and the noise of `ratios` (none if empty).
    fn of(ratios: Vec<f64>) -> Option<Ratio> {
        let s = Series::new(ratios)?;
        Some(Ratio {
            ratio: s.median(),
            noise: s.noise(),
        })
    }

    /// "1.004 ± 0.8%".
    pub fn label(&self) -> String {
        format!("{} ± {}", num(self.ratio, 3), noise(self.noise))
    }
}

impl SincosPoint {
    /// The samples whose batches were traced right after them, in order: those of
    /// traced rounds (every sample in runs from before rounds alternated).
    pub fn traced_samples(&self) -> Vec<f64> {
        if self.traced_round.is_empty() {
            return self.time.samples_ms.clone();
        }
        self.samples_of_rounds(true)
    }

    /// The samples taken in traced rounds (`traced`) or in untraced ones, in order.
    fn samples_of_rounds(&self, traced: bool) -> Vec<f64> {
        (self.time.samples_ms.iter().zip(&self.traced_round))
            .filter(|(_, t)| **t == traced)
            .map(|(ms, _)| *ms)
            .collect()
    }

    /// Rust host over C++ host: the median of the batch pairs' ratios, with their noise.
    pub fn rust_host_over_cpp_host(&self) -> Option<Ratio> {
        let cpp = self.cpp_host.as_ref()?;
        Ratio::of(
            (self.time.samples_ms.iter().zip(&cpp.samples_ms))
                .map(|(rust, cpp)| rust / cpp)
                .collect(),
        )
    }

    /// The median of the samples taken in traced rounds over the median of those in
    /// untraced rounds; its noise is the larger of the two groups'.
    pub fn traced_over_untraced(&self) -> Option<Ratio> {
        let group = |traced: bool| Series::new(self.samples_of_rounds(traced));
        let (traced, untraced) = (group(true)?, group(false)?);
        Some(Ratio {
            ratio: traced.median() / untraced.median(),
            noise: traced.noise().max(untraced.noise()),
        })
    }
}

/// Result of sincos-overlap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosOverlapResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// Iterations in each timed batch (the batches differ by at most one).
    pub batch_sizes: Vec<usize>,
    /// For each stream count (one chunk per stream, 1 included): the chunks copied in
    /// alone, out alone, both ways at once, and their kernels alone.
    pub stages: Vec<StageTimes>,
    /// Sequential (one stream) and each asynchronous variant at each stream count.
    pub points: Vec<SincosPoint>,
    pub verification: Verification,
    /// Three iterations of each asynchronous variant at `--streams`, and of the fastest
    /// asynchronous configuration, traced back to back ([`trace_title`]).
    pub timelines: Vec<Timeline>,
    /// The CUDA C++ host twin.
    #[serde(default, skip_serializing_if = "CppHostRun::not_asked")]
    pub cpp_host: CppHostRun,
}

/// One configuration against its bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosConfig {
    pub variant: IssueOrder,
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
    /// From its traced batches: the time per iteration of its busiest engine or stream.
    pub busiest_bound: Option<TracedBound>,
    /// Faster than its busiest bound by more than the slack: a measurement no correct
    /// run gives.
    pub beyond_busiest_bound: bool,
    /// Where its batches sit under their traced busiest bound (the median of their
    /// ratios under 1), within or beyond the two figures' noise.
    pub under_busiest_bound: Option<Under>,
    /// The CUDA C++ host twin's median and noise.
    #[serde(default)]
    pub cpp_host_ms: Option<f64>,
    #[serde(default)]
    pub cpp_host_noise: Option<f64>,
    /// Rust host over C++ host ([`SincosPoint::rust_host_over_cpp_host`]).
    #[serde(default)]
    pub rust_host_over_cpp_host: Option<Ratio>,
    /// Traced rounds over untraced ones ([`SincosPoint::traced_over_untraced`]).
    #[serde(default)]
    pub traced_over_untraced: Option<Ratio>,
}

impl SincosConfig {
    /// Its time over its bound: 1 is the limit reached.
    pub fn over_bound(&self) -> f64 {
        self.median_ms / self.bound.ms
    }
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
    /// Rows faster than the bound of their busiest engine or stream.
    pub rows_beyond_busiest_bound: usize,
    /// Rows under the bound built from the measured rates, and of those, how many beyond
    /// the two figures' noise ([`pipeline::Under`]).
    pub rows_under_bound: usize,
    pub rows_under_bound_beyond_noise: usize,
    /// The same against the traced busiest bound.
    pub rows_under_busiest_bound: usize,
    pub rows_under_busiest_bound_beyond_noise: usize,
}

impl SincosAnalysis {
    /// Whether any configuration has the C++ host twin's or the traced rounds' figures.
    pub fn has_hosts(&self) -> bool {
        (self.configs.iter()).any(|c| c.cpp_host_ms.is_some() || c.traced_over_untraced.is_some())
    }

    pub fn sequential(&self) -> Option<&SincosConfig> {
        self.configs
            .iter()
            .find(|c| c.variant == IssueOrder::Sequential)
    }

    pub fn best(&self) -> Option<&SincosConfig> {
        self.best_async.map(|i| &self.configs[i])
    }

    /// Each configuration's label ("asynchronous 1 with 4 streams") and relative noise.
    pub fn noise_by_configuration(&self) -> Vec<(String, f64)> {
        (self.configs.iter())
            .map(|c| {
                let label = format!("{} with {} streams", c.variant.label(), c.streams);
                (label, c.noise)
            })
            .collect()
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
fn analyze(r: &SincosOverlapResult) -> SincosAnalysis {
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
    let mut configs: Vec<SincosConfig> = r
        .points
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
            let parts = pipeline_stages(&r.stages, p.streams, None, link).unwrap_or(whole_stages);
            let (median_ms, noise) = (p.time.median(), p.time.noise());
            let bound = pipeline::bound(parts, p.streams, runs, r.device.copy_engines).held(
                median_ms,
                noise,
                chunks_noise(&r.stages, p.streams),
            );
            let busiest_bound = trace::traced_bound(&p.traced_samples(), &p.traced_busiest);
            SincosConfig {
                variant: p.variant,
                streams: p.streams,
                median_ms,
                bound,
                efficiency: bound.ms / median_ms,
                beyond_bound: bound.lowered(),
                noise,
                outliers: p.time.outliers(),
                busiest_bound,
                beyond_busiest_bound: busiest_bound
                    .is_some_and(|b| pipeline::beyond(b.timed_over_bound, 1.0)),
                under_busiest_bound: busiest_bound
                    .and_then(|b| Under::of(1.0, b.noise, b.timed_over_bound, noise)),
                cpp_host_ms: p.cpp_host.as_ref().map(Series::median),
                cpp_host_noise: p.cpp_host.as_ref().map(Series::noise),
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
    let mut stream_counts: Vec<usize> = (configs.iter())
        .filter(|c| c.variant != IssueOrder::Sequential)
        .map(|c| c.streams)
        .collect();
    stream_counts.sort_unstable();
    stream_counts.dedup();
    let (rows_under_bound, rows_under_bound_beyond_noise) =
        count_under(configs.iter().map(|c| c.bound.under));
    let (rows_under_busiest_bound, rows_under_busiest_bound_beyond_noise) =
        count_under(configs.iter().map(|c| c.under_busiest_bound));
    SincosAnalysis {
        rates,
        stages: whole_stages,
        batch_iterations,
        rows_beyond_bound: configs.iter().filter(|c| c.beyond_bound).count(),
        rows_beyond_busiest_bound: configs.iter().filter(|c| c.beyond_busiest_bound).count(),
        rows_under_bound,
        rows_under_bound_beyond_noise,
        rows_under_busiest_bound,
        rows_under_busiest_bound_beyond_noise,
        configs,
        stream_counts,
        best_async: by_time.first().copied(),
        runner_up: by_time.get(1).copied(),
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

/// sincos-overlap's headline in `summary.json`.
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
    pub best_async_variant: IssueOrder,
    pub best_async_streams: usize,
    /// That configuration's bound per iteration.
    pub bound_ms: f64,
    /// best_async_ms / bound_ms.
    pub best_over_bound: f64,
    /// The time per iteration of its busiest engine or stream in the batches traced after
    /// its timed ones, and its timed batches over it ([`trace::TracedBound`]).
    #[serde(default)]
    pub busiest_bound_ms: Option<f64>,
    #[serde(default)]
    pub best_over_busiest_bound: Option<f64>,
    /// Configurations faster than the bound of their busiest engine or stream (a
    /// measurement no correct run gives).
    #[serde(default)]
    pub rows_beyond_busiest_bound: usize,
    /// Configurations that beat the bound built from the measured rates (each bound
    /// lowered to its row: a rate was under-measured).
    pub rows_beyond_bound: usize,
    /// Configurations under the bound built from the measured rates, and of those how
    /// many beyond the two figures' noise; the same against the traced busiest bound
    /// (absent from summaries written before rows were marked so).
    #[serde(default)]
    pub rows_under_bound: Option<usize>,
    #[serde(default)]
    pub rows_under_bound_beyond_noise: Option<usize>,
    #[serde(default)]
    pub rows_under_busiest_bound: Option<usize>,
    #[serde(default)]
    pub rows_under_busiest_bound_beyond_noise: Option<usize>,
    /// How many configurations ran, and those whose noise stayed above
    /// [`stats::NOISE_TARGET`] when their sampling budget ran out, with their noise.
    #[serde(default)]
    pub configurations: usize,
    #[serde(default)]
    pub above_noise_target: Vec<String>,
    /// The best asynchronous configuration's Rust host time over the CUDA C++ host
    /// twin's, the median of their interleaved batch pairs (absent where the twin did
    /// not run).
    #[serde(default)]
    pub rust_host_over_cpp_host: Option<Ratio>,
    /// Its batches in rounds that traced every asynchronous batch after timing it, over
    /// those in rounds that traced none.
    #[serde(default)]
    pub traced_over_untraced: Option<Ratio>,
}

fn not_measured() -> f64 {
    f64::NAN
}

/// The one declaration of the main table and the CSV: a row per configuration, the
/// CUDA C++ twins' figures beside the Rust ones where `cuda` ran.
/// A configuration against its bound and its traced busiest bound, in words.
fn against_bounds(x: &SincosConfig) -> String {
    let traced = x.under_busiest_bound.map(|u| {
        let n = x.busiest_bound.map_or(String::new(), |b| {
            format!(" (bound's noise {})", noise(b.noise))
        });
        format!("traced: {}{n}", u.label())
    });
    [x.bound.mark(), traced.unwrap_or_default()]
        .into_iter()
        .filter(|m| !m.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// `hosts`: with the CUDA C++ host twin's and the traced rounds' columns (runs that have
/// them: [`SincosAnalysis::has_hosts`]).
fn columns(cuda: Option<&SincosAnalysis>, hosts: bool) -> Columns<'_, SincosConfig> {
    let cpp = move |x: &SincosConfig| cuda.and_then(|c| c.config(x.variant, x.streams));
    Columns::new()
        .both(
            "variant",
            |x: &SincosConfig| x.variant.label().into(),
            "variant",
            |x| x.variant.label().into(),
        )
        .both(
            "streams",
            |x| x.streams.to_string(),
            "streams",
            |x| x.streams.to_string(),
        )
        .both(
            "Rust",
            |x| num(x.median_ms, 4),
            "median_ms",
            |x| format!("{:.4}", x.median_ms),
        )
        .both(
            "noise",
            |x| noise(x.noise),
            "noise",
            |x| format!("{:.4}", x.noise),
        )
        .show("C++ kernels", move |x| {
            cpp(x).map_or("–".into(), |y| num(y.median_ms, 4))
        })
        .show("noise", move |x| {
            cpp(x).map_or("–".into(), |y| noise(y.noise))
        })
        .show("Rust / C++ kernels", move |x| {
            ratio(x.median_ms, cpp(x).map(|y| y.median_ms))
        })
        .then(hosts, |c| {
            c.both(
                "C++ host",
                |x| {
                    (x.cpp_host_ms.zip(x.cpp_host_noise)).map_or("–".into(), |(ms, n)| {
                        format!("{} ± {}", num(ms, 4), noise(n))
                    })
                },
                "cpp_host_ms",
                |x| x.cpp_host_ms.map_or(String::new(), |ms| format!("{ms:.4}")),
            )
            .both(
                "Rust host / C++ host",
                |x| x.rust_host_over_cpp_host.map_or("–".into(), |r| r.label()),
                "rust_host_over_cpp_host",
                |x| {
                    (x.rust_host_over_cpp_host).map_or(String::new(), |r| format!("{:.4}", r.ratio))
                },
            )
            .both(
                "traced rounds / untraced",
                |x| x.traced_over_untraced.map_or("–".into(), |r| r.label()),
                "traced_over_untraced",
                |x| (x.traced_over_untraced).map_or(String::new(), |r| format!("{:.4}", r.ratio)),
            )
        })
        .both(
            "bound",
            |x| num(x.bound.ms, 4),
            "bound_ms",
            |x| format!("{:.4}", x.bound.ms),
        )
        .show("limited by", |x| x.bound.limiter.label().into())
        .both(
            "efficiency",
            |x| num(x.efficiency, 3),
            "efficiency",
            |x| format!("{:.4}", x.efficiency),
        )
        .both(
            "busiest bound (traced)",
            |x| {
                x.busiest_bound.map_or("–".into(), |b| {
                    format!(
                        "{} ± {} ({})",
                        num(b.ms, 4),
                        noise(b.noise),
                        b.resource.label()
                    )
                })
            },
            "busiest_bound_ms",
            |x| {
                x.busiest_bound
                    .map_or(String::new(), |b| format!("{:.4}", b.ms))
            },
        )
        .both(
            "Rust / busiest",
            |x| {
                x.busiest_bound
                    .map_or("–".into(), |b| num(b.timed_over_bound, 3))
            },
            "over_busiest",
            |x| {
                x.busiest_bound
                    .map_or(String::new(), |b| format!("{:.4}", b.timed_over_bound))
            },
        )
        .both("against its bounds", against_bounds, "beyond_bound", |x| {
            x.beyond_bound.to_string()
        })
        .raw("under_bound", |x| under_csv(x.bound.under))
        .raw("under_busiest_bound", |x| under_csv(x.under_busiest_bound))
}

/// What the CUDA C++ host twin and the traced rounds say, or why the twin did not run.
fn hosts_note(r: &SincosOverlapResult, a: &SincosAnalysis) -> Option<(String, String)> {
    let best = a.best()?;
    let at_best = format!("{} with {} streams", best.variant.label(), best.streams);
    let traced = best.traced_over_untraced.map_or(String::new(), |t| {
        format!(
            " Tracing: rounds alternate between tracing every asynchronous batch right after timing it and tracing none; at {at_best} the batches of traced rounds took {} the time of untraced ones.",
            t.label()
        )
    });
    let text = match &r.cpp_host {
        CppHostRun::NotAsked => {
            return (!traced.is_empty()).then(|| ("Hosts".into(), traced.trim().to_owned()));
        }
        CppHostRun::Skipped(why) => format!("The CUDA C++ host twin was skipped: {why}.{traced}"),
        CppHostRun::Built(build) => format!(
            "Each batch of the Rust host is paired with one of a CUDA C++ host twin (cuda/sincos_host.cu, built by {build}) issuing the same copies and the same kernel on the same streams and buffers through the driver API, the two swapping which goes first every two rounds. Rust host / C++ host is the median of the pairs' ratios, with their noise: {} at {at_best}.{traced}",
            best.rust_host_over_cpp_host
                .map_or("–".into(), |r| r.label()),
        ),
    };
    Some(("Hosts".into(), text))
}

/// sincos-overlap: time per iteration of every configuration (median bars, whiskers
/// from the fastest to the slowest batch), with each stream count's bound.
fn figures(r: &SincosOverlapResult, a: &SincosAnalysis) -> Vec<FigureModel> {
    let mut labels = vec!["sequential".to_owned()];
    labels.extend(a.stream_counts.iter().map(|s| format!("{s} streams")));
    let slot_of = |variant: IssueOrder, streams: usize| match variant {
        IssueOrder::Sequential => Some(0),
        _ => a
            .stream_counts
            .iter()
            .position(|&s| s == streams)
            .map(|i| i + 1),
    };
    let mut chart = blank(
        format!(
            "sincos-overlap: 2^{} floats, time per iteration (Rust kernels)",
            r.params.elements.max(1).ilog2()
        ),
        "schedule",
        "ms per iteration",
        XAxis::Categories(labels.clone()),
        YScale::Linear,
    );
    let variants = [
        (IssueOrder::Sequential, SEQUENTIAL_COLOR),
        (IssueOrder::Async1, PALETTE[0]),
        (IssueOrder::Async2, PALETTE[1]),
    ];
    for (variant, color) in variants {
        let mut values = vec![f64::NAN; labels.len()];
        let mut whiskers = vec![(f64::NAN, f64::NAN); labels.len()];
        for p in r.points.iter().filter(|p| p.variant == variant) {
            if let (Some(slot), Some(c)) =
                (slot_of(variant, p.streams), a.config(variant, p.streams))
            {
                values[slot] = c.median_ms;
                whiskers[slot] = (p.time.min(), p.time.summary.max);
            }
        }
        chart.bars.push(BarSeries {
            name: variant.label().to_owned(),
            color,
            values,
            whiskers: Some(whiskers),
        });
    }
    let bound: Vec<(f64, f64)> = (a.configs.iter())
        .filter(|c| c.variant != IssueOrder::Async2)
        .filter_map(|c| Some((slot_of(c.variant, c.streams)? as f64, c.bound.ms)))
        .collect();
    chart.lines.push(LineSeries {
        markers: true,
        ..line("bound", BOUND_COLOR, true, bound)
    });
    vec![FigureModel::chart("sincos-overlap.svg".into(), chart)]
}

impl Saved for SincosOverlapResult {
    experiment::saved_fields!(Params);

    fn timelines(&self) -> Vec<&Timeline> {
        self.timelines.iter().collect()
    }

    fn stage_times(&self) -> Vec<&StageTimes> {
        self.stages.iter().collect()
    }
}

impl Experiment for SincosOverlap {
    const NAME: &'static str = "sincos-overlap";
    const USES_KERNEL_SETS: bool = true;
    type Params = Params;
    type Result = SincosOverlapResult;
    type Derived = SincosAnalysis;

    fn rows(r: &SincosOverlapResult, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        (r.points.iter())
            .map(|p| {
                let (key, label) = match p.variant {
                    IssueOrder::Sequential => ("seq".to_owned(), p.variant.label().to_owned()),
                    v => (
                        format!("{}/{}", v.short(), p.streams),
                        format!("{} with {} streams", v.label(), p.streams),
                    ),
                };
                MeasuredRow::median(key, label, &p.time, MS).over_link()
            })
            .collect()
    }

    fn derive(r: &SincosOverlapResult, _checks: &[TraceChecks]) -> SincosAnalysis {
        analyze(r)
    }

    fn tables(
        r: &SincosOverlapResult,
        derived: &Self::Derived,
        cuda: Option<With<'_, Self>>,
    ) -> Vec<Table> {
        let a = derived;
        let mut tables = Vec::new();
        let mut blog = Table::new(
            Some("the blog's lines (medians, Rust kernels)".into()),
            &["line", "ms"],
        );
        if let Some(s) = a.sequential() {
            blog.rows.push(vec![
                "Time for sequential transfer and execution".into(),
                num(s.median_ms, 4),
            ]);
        }
        for variant in IssueOrder::ASYNC {
            if let Some(x) = a.config(variant, r.params.streams) {
                blog.rows.push(vec![
                    format!(
                        "Time for {} transfer and execution ({} streams)",
                        variant.label(),
                        x.streams
                    ),
                    num(x.median_ms, 4),
                ]);
            }
        }
        tables.push(blog);
        let c = cuda.map(|(_, d)| d);
        tables.push(columns(c, a.has_hosts()).table(
            Some("medians, ms per iteration; efficiency = bound / measured".into()),
            &a.configs,
        ));
        let mut stages = Table::new(
            Some("the whole array's parts, each alone (fastest sample)".into()),
            &["part", "ms", "GB/s"],
        );
        stages.rows = vec![
            vec![
                "HtoD".into(),
                num(a.stages.htod_ms, 4),
                num(a.rates.htod_gbps, 1),
            ],
            vec!["kernel".into(), num(a.stages.kernel_ms, 4), String::new()],
            vec![
                "DtoH".into(),
                num(a.stages.dtoh_ms, 4),
                num(a.rates.dtoh_gbps, 1),
            ],
            vec![
                "in and out at once".into(),
                num(a.stages.both_ms, 4),
                num(a.rates.both_gbps, 1),
            ],
        ];
        tables.push(stages);
        tables
    }

    fn csv(_r: &SincosOverlapResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns(None, derived.has_hosts()).csv(&derived.configs))]
    }

    fn section(
        rust: &Analyzed<Self>,
        twin: Option<&Analyzed<Self>>,
    ) -> Result<Section, ReportError> {
        let (r, derived) = rust.with();
        let cuda = twin.map(Analyzed::with);
        let a = derived;
        let mut sec = rust.section("sincos-overlap: copies and kernels over streams", "b[i] = a[i] + sqrt(sin(i)² + cos(i)²) over an array in pinned memory: sequential (copy in, kernel, copy out, with blocking copies), asynchronous 1 (per stream: copy in, kernel, copy out) and asynchronous 2 (all copies in, all kernels, all copies out), over a sweep of stream counts. Each sample is the mean time per iteration of a batch of iterations issued back to back.");
        sec.tables = Self::tables(r, derived, cuda);
        let bytes = r.params.bytes();
        sec.notes.push((
            "Bound".into(),
            format!(
                "Per configuration, the largest of: the HtoD engine's, the SMs' and the DtoH engine's busy time, and {:.0} MiB in plus {:.0} MiB out at the both-ways rate; plus the pipeline's fill and drain (first chunk in, last chunk out) once per batch of {} back-to-back iterations (the sequential version's blocking copies let no iteration overlap the next, so it pays them every iteration). Each stream count's parts are timed over its own chunks. Each asynchronous configuration's busiest bound comes from the GPU's own records: {}right after each of its timed batches, {} iterations of it are traced back to back, and the busy time per iteration of the busiest engine or stream (a stream runs its operations one after another) over all but the first and last is one sample; the bound is their median, with their noise. Rust / busiest is the median over the timed batches of each one's time over the bound traced right after it, under the same traffic on the shared link: 1 is the bound.",
                bytes as f64 / (1u64 << 20) as f64,
                bytes as f64 / (1u64 << 20) as f64,
                a.batch_iterations,
                if r.points.iter().any(|p| !p.traced_round.is_empty()) {
                    "in every other round, "
                } else {
                    ""
                },
                TRACED_BATCH,
            ),
        ));
        if let Some(best) = a.best() {
            let engine = best.busiest_bound.map_or(String::new(), |b| {
                format!(
                    " and {:.3}× the time of the busiest engine or stream in the batches traced after its timed ones ({} ms ± {}, {}, median of {})",
                    b.timed_over_bound,
                    num(b.ms, 4),
                    noise(b.noise),
                    b.resource.label(),
                    b.batches
                )
            });
            let within = a.best_within_noise().map_or(String::new(), |next| {
                format!(
                    " Its noise ({}) is larger than its lead over {} with {} streams ({} ms ± {}): this run does not settle which of the two is faster.",
                    noise(best.noise),
                    next.variant.label(),
                    next.streams,
                    num(next.median_ms, 4),
                    noise(next.noise)
                )
            });
            sec.notes.push((
                "Result".into(),
                format!(
                    "The best asynchronous configuration is {} over {} streams: {} ms per iteration ± {}, {} its bound ({} ms, set by {}){engine}, against {} ms sequential.{within}",
                    best.variant.label(),
                    best.streams,
                    num(best.median_ms, 4),
                    noise(best.noise),
                    times(best.over_bound()),
                    num(best.bound.ms, 4),
                    best.bound.limiter.label(),
                    a.sequential().map_or("–".into(), |s| num(s.median_ms, 4)),
                ),
            ));
        }
        sec.notes.extend(hosts_note(r, a));
        let lowered: Vec<String> = (a.configs.iter())
            .filter_map(|x| {
                let why = x.bound.under_measured()?;
                Some(format!(
                    "{} with {} streams: {why}",
                    x.variant.label(),
                    x.streams
                ))
            })
            .collect();
        if !lowered.is_empty() {
            sec.notes.push((
                "Flagged".into(),
                format!(
                    "{} configuration(s) beat the bound built from the measured rates, so a rate was under-measured and each bound is lowered to its row: {}.",
                    a.rows_beyond_bound,
                    lowered.join("; ")
                ),
            ));
        }
        sec.notes
            .extend(cuda_note(cuda.map(|(c, _)| &c.provenance)));
        sec.figures = draw(figures(r, a));
        sec.timelines = rust.timelines()?;
        if let Some(twin) = twin {
            sec.timelines.extend(twin.timelines()?);
        }
        Ok(sec)
    }

    fn summary(r: &SincosOverlapResult, derived: &Self::Derived) -> Summary {
        let a = derived;
        let Some(best) = a.best() else {
            return Summary::default();
        };
        let x = SincosSummary {
            verified: r.verification.passed,
            sequential_ms: a.sequential().map_or(f64::NAN, |s| s.median_ms),
            best_async_ms: best.median_ms,
            best_async_noise: best.noise,
            best_within_noise: a.best_within_noise().is_some(),
            best_async_variant: best.variant,
            best_async_streams: best.streams,
            bound_ms: best.bound.ms,
            best_over_bound: best.over_bound(),
            busiest_bound_ms: best.busiest_bound.map(|b| b.ms),
            best_over_busiest_bound: best.busiest_bound.map(|b| b.timed_over_bound),
            rows_beyond_busiest_bound: a.rows_beyond_busiest_bound,
            rows_beyond_bound: a.rows_beyond_bound,
            rows_under_bound: Some(a.rows_under_bound),
            rows_under_bound_beyond_noise: Some(a.rows_under_bound_beyond_noise),
            rows_under_busiest_bound: Some(a.rows_under_busiest_bound),
            rows_under_busiest_bound_beyond_noise: Some(a.rows_under_busiest_bound_beyond_noise),
            configurations: a.configs.len(),
            above_noise_target: stats::above_noise_target(&a.noise_by_configuration()),
            rust_host_over_cpp_host: best.rust_host_over_cpp_host,
            traced_over_untraced: best.traced_over_untraced,
        };
        let line = format!(
            "sequential {:.3} ms, best async {:.3} ms ± {} ({}, {} streams{}) = {:.3}× its bound{}{}{}{}{}; {}",
            x.sequential_ms,
            x.best_async_ms,
            noise(x.best_async_noise),
            x.best_async_variant.label(),
            x.best_async_streams,
            if x.best_within_noise {
                ", within noise of the next"
            } else {
                ""
            },
            x.best_over_bound,
            x.best_over_busiest_bound.map_or(String::new(), |e| format!(
                ", {e:.3}× its busiest engine or stream traced"
            )),
            under_clause(
                "its bound",
                x.rows_under_bound,
                x.rows_under_bound_beyond_noise
            ),
            under_clause(
                "its traced busiest bound",
                x.rows_under_busiest_bound,
                x.rows_under_busiest_bound_beyond_noise
            ),
            stats::above_noise_target_clause(&x.above_noise_target, x.configurations),
            x.rust_host_over_cpp_host.map_or(String::new(), |r| format!(
                ", Rust host / C++ host {}",
                r.label()
            )),
            verdict(x.verified)
        );
        Summary::headline(&x, line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::Params as _;

    /// The committed H100 run, as a run from before the C++ host twin and traced rounds.
    fn committed() -> SincosOverlapResult {
        let mut r: SincosOverlapResult = serde_json::from_str(include_str!(
            "../../../../docs/results/h100/sincos-overlap.json"
        ))
        .expect("the committed sincos-overlap result parses");
        r.cpp_host = CppHostRun::NotAsked;
        for p in &mut r.points {
            p.cpp_host = None;
            p.traced_round.clear();
        }
        r
    }

    #[test]
    fn a_skipped_cpp_host_is_said_in_one_line_and_a_run_from_before_says_nothing() {
        let mut r = committed();
        let a = analyze(&r);
        assert!(!a.has_hosts());
        assert!(hosts_note(&r, &a).is_none());
        assert!(
            !columns(None, a.has_hosts())
                .csv(&a.configs)
                .contains("cpp_host_ms")
        );
        r.cpp_host = CppHostRun::Skipped("no nvcc found".into());
        let (title, text) = hosts_note(&r, &a).expect("a note");
        assert_eq!(title, "Hosts");
        assert_eq!(text, "The CUDA C++ host twin was skipped: no nvcc found.");
        let json = serde_json::to_string(&r).unwrap();
        assert!(
            json.contains(r#""cpp_host":{"skipped":"no nvcc found"}"#),
            "{json}"
        );
    }

    #[test]
    fn host_pairs_and_traced_rounds_give_their_ratios_with_noise() {
        let mut r = committed();
        let p = r
            .points
            .iter_mut()
            .find(|p| p.variant != IssueOrder::Sequential)
            .unwrap();
        let rust = p.time.samples_ms.clone();
        let n = rust.len();
        p.cpp_host = Series::new(rust.iter().map(|ms| ms / 1.25).collect());
        p.traced_round = (0..n).map(|j| j % 2 == 0).collect();
        let point = p.clone();
        let pairs = point.rust_host_over_cpp_host().unwrap();
        assert!((pairs.ratio - 1.25).abs() < 1e-12 && pairs.noise < 1e-12);
        let traced: Vec<f64> = rust.iter().step_by(2).copied().collect();
        let untraced: Vec<f64> = rust.iter().skip(1).step_by(2).copied().collect();
        let t = point.traced_over_untraced().unwrap();
        let median = |v: Vec<f64>| Series::new(v).unwrap().median();
        assert!((t.ratio - median(traced.clone()) / median(untraced)).abs() < 1e-12);
        assert_eq!(point.traced_samples(), traced);
        let a = analyze(&r);
        assert!(a.has_hosts());
        assert!(
            columns(None, true)
                .csv(&a.configs)
                .contains("rust_host_over_cpp_host")
        );
    }

    #[test]
    fn stream_counts_above_the_element_count_are_dropped_and_said() {
        let mut p = Params {
            elements: 3,
            streams: 4,
            stream_counts: vec![1, 2, 3, 5, 8],
            ..Params::default()
        };
        let said = p.fit().expect("something changed");
        assert!(said.contains("5,8 dropped") && said.contains("--streams 4 lowered to 3"));
        assert_eq!((p.streams, p.stream_counts.clone()), (3, vec![1, 2, 3]));
        assert!(p.validate().is_ok());
        assert_eq!(p.fit(), None, "fitting twice changes nothing");
        let mut one = Params {
            elements: 1,
            ..Params::default()
        };
        one.fit();
        assert_eq!((one.streams, one.all_stream_counts()), (1, vec![1]));
    }
}
