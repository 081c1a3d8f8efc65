//! sincos-overlap, after the "CUDA streams" blog post: `b[i] = a[i] + sqrt(sin(i)² +
//! cos(i)²)` over pinned floats, sequential against two asynchronous issue orders; per
//! configuration its median, its noise, its reachable bound and the efficiency, and the
//! best asynchronous configuration.
//! How it measures, its bounds and its model are told in its words, `sincos_overlap.md`.
use crate::experiments::prelude::*;
mod analysis;
mod present;

use analysis::analyze;
pub use analysis::{SincosAnalysis, SincosConfig, async_by_time};
use present::{columns, figures};

use crate::derived::trace::BusiestBound;

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
        (!said.is_empty()).then(|| {
            format!(
                "{most} elements give at most {most} streams work: {}",
                said.join(", ")
            )
        })
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
    /// busiest engine or stream (`trace::busiest_bound`; the records are not kept).
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
    /// "1.004 ± 0.8%".
    pub fn label(&self) -> String {
        format!("{} ± {}", num(self.ratio, 3), noise(self.noise))
    }
}

impl SincosPoint {
    /// The samples taken in traced rounds (`traced`: those whose batches were traced
    /// right after them, every sample in runs from before rounds alternated) or in
    /// untraced ones, in order.
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
        let s = Series::new(pairs.collect())?;
        Some(Ratio {
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
    /// asynchronous configuration, traced back to back ([`trace_title`]).
    pub timelines: Vec<Timeline>,
    /// The CUDA C++ host twin.
    #[serde(default, skip_serializing_if = "CppHostRun::not_asked")]
    pub cpp_host: CppHostRun,
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
        analyze(r)
    }

    fn tables(r: &Self::Result, a: &Self::Derived, cuda: Option<With<Self>>) -> Vec<Table> {
        let mut blog = Table::new(
            Some(format!(
                "the blog's lines (medians, {} kernels)",
                r.run.provenance.kernels.label()
            )),
            &["line", "ms"],
        );
        let streams = r.run.params.streams;
        let asynchronous = (IssueOrder::ASYNC.iter()).filter_map(|&v| a.config(v, streams));
        for x in a.sequential().into_iter().chain(asynchronous) {
            let streams = (x.variant != IssueOrder::Sequential)
                .then(|| format!(" ({} streams)", x.streams))
                .unwrap_or_default();
            let line = format!(
                "Time for {} transfer and execution{streams}",
                x.variant.label()
            );
            blog.rows.push(vec![line, num(x.median_ms, 4)]);
        }
        let c = cuda.map(|(_, d)| d);
        let mut tables = vec![blog];
        tables.push(columns(r.run.provenance.kernels, c, a.has_hosts()).table(
            Some("medians, ms per iteration; efficiency = bound / measured".into()),
            &a.configs,
        ));
        let mut stages = Table::new(
            Some("the whole array's parts, each alone (fastest sample)".into()),
            &["part", "ms", "GB/s"],
        );
        let (s, rates) = (&a.stages, &a.rates);
        stages.rows = [
            ("HtoD", s.htod_ms, Some(rates.htod_gbps)),
            ("kernel", s.kernel_ms, None),
            ("DtoH", s.dtoh_ms, Some(rates.dtoh_gbps)),
            ("in and out at once", s.both_ms, Some(rates.both_gbps)),
        ]
        .map(|(part, ms, gbps)| {
            vec![
                part.into(),
                num(ms, 4),
                gbps.map_or(String::new(), |g| num(g, 1)),
            ]
        })
        .into();
        tables.push(stages);
        tables
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
            sequential => a.sequential().map(Serde),
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
            "sequential_ms": a.sequential().map_or(f64::NAN, |s| s.median_ms),
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

#[cfg(test)]
mod tests;
