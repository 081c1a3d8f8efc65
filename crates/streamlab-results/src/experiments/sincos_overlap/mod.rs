//! sincos-overlap, after the "CUDA streams" blog post: `b[i] = a[i] + sqrt(sin(i)² +
//! cos(i)²)` over pinned floats, sequential against two asynchronous issue orders; per
//! configuration its median, its noise, its reachable bound and the efficiency, and the
//! best asynchronous configuration.
//! How it measures, its bounds and its model are told in its words, `sincos_overlap.md`.
use crate::derived::rates::{for_chunks, stages};
use crate::derived::trace::{self, BusiestBound, TracedBound};
use crate::experiments::prelude::*;
mod present;

use present::{columns, figures};

/// The sincos-overlap experiment.
pub struct SincosOverlap;

/// Iterations of each traced batch (one after every timed batch of an asynchronous
/// configuration): all but the first and the last run as the timed ones do.
pub const TRACED_BATCH: usize = 10;

/// Parameters; defaults are the blog's.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Floats in the array.
    #[arg(long, default_value_t = 1 << 25, value_parser = crate::saved::count(u32::MAX as u64))]
    pub elements: usize,
    /// Threads per block (the blog's code uses 1024).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// Untimed iterations before each configuration is timed.
    #[arg(long, default_value_t = 100)]
    pub warmup: usize,
    /// Timed iterations per configuration.
    #[arg(long, default_value_t = 1000, value_parser = crate::saved::count(1_000_000))]
    pub iterations: usize,
    /// Timed batches the iterations are split into, each giving one sample; up to three
    /// times as many while a configuration's noise is above 1% [default: min(10,
    /// --iterations)].
    #[arg(long, value_parser = crate::saved::count(1_000_000))]
    pub batches: Option<usize>,
    /// Streams of the headline comparison (the blog's 4); also the traced count.
    #[arg(long, default_value_t = 4, value_parser = crate::saved::count(MAX_STREAMS as u64))]
    pub streams: usize,
    /// Stream counts of the sweep, comma separated (one stream is the sequential
    /// version's schedule, timed as such).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16",
          value_parser = crate::saved::count(MAX_STREAMS as u64))]
    pub stream_counts: Vec<usize>,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--elements 16777216 --warmup 5 --iterations 20 --batches 4 \
        --stream-counts 2,4,8";

    fn validate(&self) -> Result<(), UsageError> {
        if self.batches() > self.iterations {
            return Err(UsageError::new(format!(
                "--batches {} exceeds --iterations {}: each batch needs at least one iteration",
                self.batches(),
                self.iterations
            )));
        }
        let most = self.elements;
        let count = (self.stream_counts.iter()).fold(self.streams, |m, &c| m.max(c));
        if count > most {
            return Err(UsageError::new(format!(
                "{count} streams for {most} elements leaves streams without work: use at most {most} streams"
            )));
        }
        Ok(())
    }

    fn fit(&mut self) -> Option<String> {
        let most = self.elements;
        let dropped: Vec<String> = (self.stream_counts.iter())
            .filter(|&&c| c > most)
            .map(ToString::to_string)
            .collect();
        self.stream_counts.retain(|&c| c <= most);
        let said =
            (!dropped.is_empty()).then(|| format!("stream counts {} dropped", dropped.join(",")));
        let lowered =
            (self.streams > most).then(|| format!("--streams {} lowered to {most}", self.streams));
        self.streams = self.streams.min(most);
        let said: Vec<String> = said.into_iter().chain(lowered).collect();
        let said = said.join(", ");
        (!said.is_empty())
            .then(|| format!("{most} elements give at most {most} streams work: {said}"))
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

/// One variant at one stream count: each sample is the mean time per iteration of one
/// timed batch of back-to-back iterations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SincosPoint {
    pub variant: IssueOrder,
    pub streams: usize,
    pub time: Series,
    /// Asynchronous orders, with CUPTI: per timed batch of a traced round (every batch in
    /// runs from before rounds alternated), its busiest engine's or stream's busy time per
    /// steady iteration in a batch traced right after it (`trace::busiest_bound`).
    #[serde(default)]
    pub traced_busiest: Vec<BusiestBound>,
    /// The CUDA C++ host twin's samples (where it ran), batch for batch with `time`: sample
    /// `j` of each was taken in the same round, one right after the other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpp_host: Option<Series>,
    /// For each sample of `time`, whether its round traced every asynchronous batch right
    /// after timing it (rounds alternate; empty in runs from before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traced_round: Vec<bool>,
}

/// How the CUDA C++ host twin ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CppHostRun {
    /// Not run, and why (one line).
    Skipped(String),
    /// Built by nvcc (its path, version and options) and run beside the Rust host.
    Built(String),
}

/// A median ratio and its relative noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub ratio: f64,
    pub noise: f64,
}

impl SincosPoint {
    /// The samples taken in traced rounds (`traced`; every sample in runs from before rounds
    /// alternated) or in untraced ones, in order.
    pub fn samples_of_rounds(&self, traced: bool) -> Vec<f64> {
        let of_round = |j: usize| self.traced_round.get(j).copied().unwrap_or(true);
        (self.time.samples_ms.iter().enumerate())
            .filter(|&(j, _)| of_round(j) == traced)
            .map(|(_, ms)| *ms)
            .collect()
    }

    /// Rust host over C++ host: the median of the batch pairs' ratios, with their noise.
    pub fn rust_host_over_cpp_host(&self) -> Option<Ratio> {
        let cpp = self.cpp_host.as_ref()?;
        let pairs =
            (self.time.samples_ms.iter().zip(&cpp.samples_ms)).map(|(rust, cpp)| rust / cpp);
        Series::new(pairs.collect()).map(|s| Ratio {
            ratio: s.median(),
            noise: s.noise(),
        })
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
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// Iterations in each timed batch (the batches differ by at most one).
    pub batch_sizes: Vec<usize>,
    /// For each stream count (one chunk per stream, 1 included): the chunks copied in
    /// alone, out alone, both ways at once, and their kernels alone.
    pub stages: Vec<StageTimes>,
    /// Sequential (one stream) and each asynchronous variant at each stream count.
    pub points: Vec<SincosPoint>,
    /// Three iterations of each asynchronous variant at `--streams`, and of the fastest
    /// asynchronous configuration, traced back to back.
    pub timelines: Vec<Timeline>,
    /// The CUDA C++ host twin (none in runs from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpp_host: Option<CppHostRun>,
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
    const WORDS: &'static str = include_str!("../sincos_overlap.md");
    type Params = Params;
    type Result = SincosOverlapResult;
    type Derived = SincosAnalysis;

    fn rows(_r: &SincosOverlapResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        // The measured rows do not depend on the kernel set, which only heads a column.
        let columns = columns(KernelSet::Rust, None, derived.has_hosts());
        columns.measured_rows(&derived.configs)
    }

    fn derive(r: &SincosOverlapResult, _checks: &[TraceChecks]) -> SincosAnalysis {
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
        let mut configs: Vec<SincosConfig> = (r.points.iter())
            .map(|p| {
                // The sequential version's blocking copy makes the host wait every
                // iteration, so its iterations never overlap.
                let runs = match p.variant {
                    IssueOrder::Sequential => 1,
                    _ => batch_iterations,
                };
                // The parts measured over this configuration's chunks, or coarser ones.
                let parts = pipeline_stages(&r.stages, p.streams, None, link.as_ref())
                    .unwrap_or(whole_stages);
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
                    point: p.clone(),
                    busiest_bound,
                    under_busiest_bound: busiest_bound
                        .and_then(|b| Under::of(1.0, b.noise, b.timed_over_bound, noise)),
                    rust_host_over_cpp_host: p.rust_host_over_cpp_host(),
                    traced_over_untraced: p.traced_over_untraced(),
                }
            })
            .collect();
        // Sequential first, then each stream count's orders, whatever the points' order.
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

    fn tables(r: &Self::Result, a: &Self::Derived, cuda: Option<With<Self>>) -> Vec<Table> {
        let kernels = r.run.provenance.kernels;
        let caption = format!("the blog's lines (medians, {} kernels)", kernels.label());
        let mut blog = Table::new(Some(caption), &["line", "ms"]);
        let streams = r.run.params.streams;
        for x in (a.configs.iter())
            .filter(|c| c.variant == IssueOrder::Sequential || c.streams == streams)
        {
            let at = match x.variant {
                IssueOrder::Sequential => String::new(),
                _ => format!(" ({streams} streams)"),
            };
            let line = format!("Time for {} transfer and execution{at}", x.variant.label());
            blog.rows.push(vec![line, num(x.median_ms, 4)]);
        }
        let caption = "medians, ms per iteration; efficiency = bound / measured";
        let measured = columns(kernels, cuda.map(|(_, d)| d), a.has_hosts());
        let measured = measured.table(Some(caption.into()), &a.configs);
        let caption = "the whole array's parts, each alone (fastest sample)";
        let mut stages = Table::new(Some(caption.into()), &["part", "ms", "GB/s"]);
        let (s, rates) = (&a.stages, &a.rates);
        stages.rows = [
            ("HtoD", s.htod_ms, num(rates.htod_gbps, 1)),
            ("kernel", s.kernel_ms, String::new()),
            ("DtoH", s.dtoh_ms, num(rates.dtoh_gbps, 1)),
            ("in and out at once", s.both_ms, num(rates.both_gbps, 1)),
        ]
        .map(|(part, ms, gbps)| vec![part.into(), num(ms, 4), gbps])
        .into();
        vec![blog, measured, stages]
    }

    fn csv(_r: &SincosOverlapResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(
            columns(KernelSet::Rust, None, derived.has_hosts()).csv(&derived.configs),
        )]
    }

    fn words(r: &SincosOverlapResult, a: &Self::Derived) -> Value {
        // A configuration with the labels of its order, its bound's limiter and its
        // busiest engine or stream, and why its bound was lowered to it.
        let config = |c: &SincosConfig| {
            context! {
                label => c.variant.label(),
                limiter => c.bound.limiter.label(),
                resource => c.busiest_bound.map(|b| b.resource.label()),
                lowered => c.bound.under_measured(),
                ..Value::from(Serde(c))
            }
        };
        context! {
            bytes => r.run.params.bytes(),
            every_other_round => r.points.iter().any(|p| !p.traced_round.is_empty()),
            traced_batch => TRACED_BATCH,
            best => a.best().map(config),
            next => a.best_within_noise().map(config),
            cpp_host => Serde(&r.cpp_host),
            noise_target => stats::NOISE_TARGET,
            lowered => a.configs.iter().filter(|c| c.bound.lowered()).map(config).collect::<Vec<_>>(),
        }
    }

    fn figures(r: &SincosOverlapResult, a: &Self::Derived) -> Vec<FigureModel> {
        figures(r, a)
    }

    /// The C++ run's traced timelines follow the Rust run's.
    fn section(
        rust: &Analyzed<Self>,
        twin: Option<&Analyzed<Self>>,
    ) -> Result<Section, ReportError> {
        let mut sec = rust.section(twin)?;
        if let Some(twin) = twin {
            sec.timelines.extend(twin.timelines()?);
        }
        Ok(sec)
    }

    fn summary(r: &SincosOverlapResult, a: &Self::Derived) -> Summary {
        let Some(best) = a.best() else {
            return Summary::default();
        };
        let (busiest, over_bound) = (best.busiest_bound, best.median_ms / best.bound.ms);
        let sequential = (a.configs.first()).filter(|c| c.variant == IssueOrder::Sequential);
        let label = |c: &SincosConfig| format!("{} with {} streams", c.variant.label(), c.streams);
        let labelled_noise: Vec<_> = a.configs.iter().map(|c| (label(c), c.noise)).collect();
        // Faster than its busiest bound beyond the slack: no correct run gives it.
        let beyond_busiest = |c: &SincosConfig| {
            (c.busiest_bound).is_some_and(|b| pipeline::beyond(b.timed_over_bound, 1.0))
        };
        let rows = |keep: fn(&SincosConfig) -> bool| a.configs.iter().filter(|c| keep(c)).count();
        let (under, under_beyond) = pipeline::count_under(a.configs.iter().map(|c| c.bound.under));
        let (under_busiest, under_busiest_beyond) =
            pipeline::count_under(a.configs.iter().map(|c| c.under_busiest_bound));
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "sequential_ms": sequential.map_or(f64::NAN, |s| s.median_ms),
            "best_async_ms": best.median_ms,
            "best_async_noise": best.noise,
            // Whether its noise exceeds its lead over the next fastest configuration.
            "best_within_noise": a.best_within_noise().is_some(),
            "best_async_variant": best.variant,
            "best_async_streams": best.streams,
            "bound_ms": best.bound.ms,
            "best_over_bound": over_bound,
            "busiest_bound_ms": busiest.map(|b| b.ms),
            "best_over_busiest_bound": busiest.map(|b| b.timed_over_bound),
            "rows_beyond_busiest_bound": rows(beyond_busiest),
            "rows_beyond_bound": rows(|c| c.bound.lowered()),
            "rows_under_bound": under,
            "rows_under_bound_beyond_noise": under_beyond,
            "rows_under_busiest_bound": under_busiest,
            "rows_under_busiest_bound_beyond_noise": under_busiest_beyond,
            "configurations": a.configs.len(),
            "above_noise_target": stats::above_noise_target(&labelled_noise),
            "rust_host_over_cpp_host": best.rust_host_over_cpp_host,
            "traced_over_untraced": best.traced_over_untraced,
        }))
        .with(Overview {
            over_bound: Some((over_bound, "the fastest iteration".into())),
            ..Overview::default()
        })
    }
}

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
    /// Its point, as measured: its samples, and the C++ host twin's.
    #[serde(skip)]
    pub point: SincosPoint,
    /// From its traced batches: the time per iteration of its busiest engine or stream.
    pub busiest_bound: Option<TracedBound>,
    /// Where its batches sit under their traced busiest bound (the median of their
    /// ratios under 1), within or beyond the two figures' noise.
    pub under_busiest_bound: Option<Under>,
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
        (self.configs.iter())
            .any(|c| c.point.cpp_host.is_some() || c.traced_over_untraced.is_some())
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

#[cfg(test)]
mod tests;
