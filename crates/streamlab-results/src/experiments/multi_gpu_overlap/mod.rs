//! multi-gpu-overlap: sincos-overlap's pipeline spread over several GPUs of one machine,
//! against the same work on the first of them alone.
//! How it measures, its bounds and its model are told in its words, `multi_gpu_overlap.md`.
use crate::derived::pipeline::Limiter;
use crate::derived::rates::{stage_noise, stages};
use crate::experiments::prelude::*;
use crate::saved::DeviceInfo;

pub struct MultiGpuOverlap;

/// How far below its bound's speedup a run's speedup may fall and still be at its
/// bound.
pub const TARGET: f64 = 1.05;

/// Parameters; the array and streams are sincos-overlap's.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// The GPUs to spread the work over, as ordinals, e.g. `0,1` (default: every GPU);
    /// the first also runs the whole work alone. A result records the GPUs it ran on
    /// (results before 2026-11-28 kept an empty list where every GPU was used).
    #[arg(long, value_delimiter = ',')]
    pub devices: Vec<usize>,
    /// Floats in the array, over all GPUs together.
    #[arg(long, default_value_t = 1 << 25, value_parser = crate::saved::count(u32::MAX as u64))]
    pub elements: usize,
    /// Threads per block (the blog's code uses 1024).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// Streams per GPU (a GPU with fewer elements uses one stream per element).
    #[arg(long, default_value_t = 4, value_parser = crate::saved::count(MAX_STREAMS as u64))]
    pub streams: usize,
    /// Untimed iterations before each configuration is first timed.
    #[arg(long, default_value_t = 20)]
    pub warmup: usize,
    /// Timed iterations per configuration.
    #[arg(long, default_value_t = 200, value_parser = crate::saved::count(1_000_000))]
    pub iterations: usize,
    /// Timed batches the iterations are split into, each giving one sample; up to three
    /// times as many while a configuration's noise is above 1% [default: min(10,
    /// --iterations)].
    #[arg(long, value_parser = crate::saved::count(1_000_000))]
    pub batches: Option<usize>,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--elements 4194304 --warmup 2 --iterations 20 --batches 4";

    fn validate(&self) -> Result<(), UsageError> {
        let (batches, iterations) = (self.batches(), self.iterations);
        if batches > iterations {
            return Err(UsageError::new(format!(
                "--batches {batches} exceeds --iterations {iterations}: each batch needs at least one iteration"
            )));
        }
        crate::spread::check_devices(MultiGpuOverlap::NAME, &self.devices)
    }
}

impl Params {
    /// The timed batches: `--batches`, else min(10, iterations).
    pub fn batches(&self) -> usize {
        self.batches.unwrap_or(self.iterations.min(10))
    }

    /// Bytes of the whole array, moved once each way per iteration.
    pub fn bytes(&self) -> u64 {
        (self.elements * size_of::<f32>()) as u64
    }
}

/// One GPU's part of the spread run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuShare {
    pub device: DeviceInfo,
    /// Its first element and how many it handles.
    pub first: usize,
    pub elements: usize,
    /// Streams it used: one chunk each.
    pub streams: usize,
    /// Its chunks copied in alone, out alone, both ways at once, and their kernels
    /// alone; `None` where it had no elements.
    pub stages: Option<StageTimes>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiGpuOverlapResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// Every GPU of the run, in `--devices` order; the first also ran the work alone.
    pub gpus: Vec<GpuShare>,
    /// Iterations in each timed batch (the batches differ by at most one).
    pub batch_sizes: Vec<usize>,
    /// Milliseconds per iteration, every GPU its share, host-timed per batch.
    pub spread: Series,
    /// The same on the first GPU alone, the whole array over its streams.
    pub alone: Series,
    /// The stages of the whole array on the first GPU, over the streams it used alone.
    pub alone_stages: StageTimes,
    /// Milliseconds per pass of every GPU copying its share in and out at once (the
    /// whole array each way over all GPUs), host-timed, before the timed batches.
    pub host_link: Series,
    /// The same pass once after each round of timed batches, and several after the last
    /// (absent before 2026-11-28); the fastest of all three is the host link's bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_link_between: Option<Series>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_link_after: Option<Series>,
    /// A batch of the spread configuration traced after the timed ones, on every GPU at
    /// once (absent before 2026-11-28, and where the run stopped before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
}

impl Saved for MultiGpuOverlapResult {
    experiment::saved_fields!(Params);

    fn timelines(&self) -> Vec<&Timeline> {
        self.timeline.iter().collect()
    }
}

impl Experiment for MultiGpuOverlap {
    const NAME: &'static str = "multi-gpu-overlap";
    const WORDS: &'static str = include_str!("../multi_gpu_overlap.md");
    type Params = Params;
    type Result = MultiGpuOverlapResult;
    type Derived = MultiGpuAnalysis;

    fn rows(r: &MultiGpuOverlapResult, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        let (gpus, streams) = (r.gpus.len(), r.run.params.streams);
        let spread = format!("{gpus} GPUs, {streams} streams each");
        let alone = format!("the first GPU alone, {streams} streams");
        let host = "every GPU copying in and out at once, one pass, before the timed batches";
        let row = |key: &str, label: &str, s| MeasuredRow::median(key, label, s, MS).over_link();
        vec![
            row("spread", &spread, &r.spread),
            row("alone", &alone, &r.alone),
            row("host-link", host, &r.host_link),
        ]
    }

    fn derive(r: &MultiGpuOverlapResult, _checks: &[TraceChecks]) -> MultiGpuAnalysis {
        analyze(r)
    }

    fn tables(r: &Self::Result, a: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        vec![
            columns().table(
                Some(format!(
                    "medians, ms per iteration; speedup = alone / all GPUs; efficiency = speedup / the bound's speedup (at the bound within {TARGET}×)"
                )),
                &[(r, a)],
            ),
            gpu_columns().table(
                Some(format!(
                    "each GPU's share, its parts alone (fastest sample) and its pipeline bound; every GPU copying in and out at once: {} GB/s, {} ms per iteration",
                    num(a.host_link_gbps, 1),
                    num(a.host_link_ms, 4)
                )),
                &a.per_gpu,
            ),
        ]
    }

    fn csv(r: &MultiGpuOverlapResult, a: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(&[(r, a)]))]
    }

    fn words(r: &MultiGpuOverlapResult, a: &Self::Derived) -> Value {
        context! {
            limit => a.limit.label(),
            alone_limiter => a.alone_bound.limiter.label(),
            alone_lowered => a.alone_bound.under_measured(),
            target => TARGET,
            timeline => r.timeline.is_some(),
        }
    }

    fn figures(r: &MultiGpuOverlapResult, a: &Self::Derived) -> Vec<FigureModel> {
        figures(r, a)
    }

    fn summary(r: &MultiGpuOverlapResult, a: &Self::Derived) -> Summary {
        let gpus = r.gpus.len();
        let headline = json!({
            "verified": r.run.verification.passed,
            "gpus": gpus,
            "spread_ms": r.spread.median(),
            "alone_ms": r.alone.median(),
            "speedup": a.speedup,
            "bound_speedup": a.bound_speedup,
            "limit": a.limit,
            "at_bound": a.at_bound,
            "spread_over_bound": a.spread_over_bound,
            "beyond_bound": a.beyond_bound,
        });
        Summary::of(&headline).with(Overview {
            over_bound: Some((a.spread_over_bound, format!("spread over {gpus} GPUs"))),
            ..Overview::default()
        })
    }
}

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

/// How many probes of every GPU copying in and out at once were taken before, between and
/// after the timed batches, and when the fastest, the bound's, was.
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
    /// The spread run's bound held to it (the larger of the two above; `built_ms` where the
    /// run beat it by more than the slack), and which limit it is.
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

/// Derive everything from `r`: each GPU's share against its own bound, the host link's
/// bound on all of them together, each run held to its bound, the speedup.
fn analyze(r: &MultiGpuOverlapResult) -> MultiGpuAnalysis {
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
    let t = &r.alone_stages;
    let engines = r.gpus.first().map_or(0, |g| g.device.copy_engines);
    let alone_built = pipeline::bound(stages(t, None), t.chunks, runs, engines);
    let alone_bound = alone_built.held(alone_ms, alone.noise(), stage_noise(t));
    let speedup = alone_ms / spread_ms;
    let bound_speedup = alone_bound.ms / bound.ms;
    MultiGpuAnalysis {
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

/// Half the width of a bar on the chart's category axis (the plots' bar group).
const HALF_BAR: f64 = 0.4;

/// A row of the main table: the run and what is derived from it.
type Run<'r> = (&'r MultiGpuOverlapResult, &'r MultiGpuAnalysis);

/// The one declaration of the main table and the CSV: one row, the run.
fn columns<'a>() -> Columns<'a, Run<'a>> {
    Columns::new()
        .text("GPUs", "gpus", |(r, _): &Run| r.gpus.len().to_string())
        .text("streams per GPU", "streams", |(r, _)| {
            r.run.params.streams.to_string()
        })
        .number("all GPUs (ms)", "spread_ms", (4, 4), |(r, _)| {
            r.spread.median()
        })
        .noise("noise", "spread_noise", |(r, _)| r.spread.noise())
        .number("first GPU alone (ms)", "alone_ms", (4, 4), |(r, _)| {
            r.alone.median()
        })
        .noise("noise", "alone_noise", |(r, _)| r.alone.noise())
        .times("speedup", "speedup", 4, |(_, a)| a.speedup)
        .number("bound (ms)", "bound_ms", (4, 4), |(_, a)| a.bound.ms)
        .times("all GPUs / bound", "spread_over_bound", 4, |(_, a)| {
            a.spread_over_bound
        })
        .times("bound's speedup", "bound_speedup", 4, |(_, a)| {
            a.bound_speedup
        })
        .number("efficiency", "efficiency", (3, 4), |(_, a)| a.efficiency)
        .show("limited by", |(_, a)| a.limit.label())
        .both(
            "against their bounds",
            |(_, a)| against_bounds(a),
            "beyond_bound",
            |(_, a)| a.beyond_bound.to_string(),
        )
}

/// Where each run sits under its bound, if it does, and the flag of a run beyond it.
fn against_bounds(x: &MultiGpuAnalysis) -> String {
    let mark = |run: &str, b: &Bound| (b.under.is_some()).then(|| format!("{run}: {}", b.mark()));
    let marks = [mark("all GPUs", &x.bound), mark("alone", &x.alone_bound)];
    let flag = x.beyond_bound.then(|| "flagged: no finding".to_owned());
    pipeline::bound_cell(marks.into_iter().flatten().chain(flag))
}

/// The table of each GPU's share against its own pipeline bound.
fn gpu_columns<'a>() -> Columns<'a, GpuBound> {
    let stage = |pick: fn(&Stages) -> f64| {
        move |x: &GpuBound| num(x.stages.as_ref().map_or(f64::NAN, pick), 4)
    };
    Columns::new()
        .show("GPU", |x: &GpuBound| x.ordinal.to_string())
        .show("elements", |x| x.elements.to_string())
        .show("streams", |x| x.streams.to_string())
        .show("HtoD (ms)", stage(|s| s.htod_ms))
        .show("kernels (ms)", stage(|s| s.kernel_ms))
        .show("DtoH (ms)", stage(|s| s.dtoh_ms))
        .show("both ways (ms)", stage(|s| s.both_ms))
        .show("bound (ms)", |x| num(x.bound.map_or(f64::NAN, |b| b.ms), 4))
        .show("limited by", |x| {
            x.bound
                .map_or("no elements".into(), |b| b.limiter.label().into())
        })
}

/// The two runs, each beside its own bound (a dash across its bar), the bound as built
/// marked where a run beat it.
fn figures(r: &MultiGpuOverlapResult, a: &MultiGpuAnalysis) -> Vec<FigureModel> {
    let labels = vec!["first GPU alone".into(), format!("{} GPUs", r.gpus.len())];
    let mut chart = blank(
        format!(
            "multi-gpu-overlap: ms per iteration, {} elements, {} streams per GPU",
            r.run.params.elements, r.run.params.streams
        ),
        "",
        "ms per iteration",
        XAxis::Categories(labels),
        YScale::Linear,
    );
    let runs = [&r.alone, &r.spread];
    let medians = runs.map(Series::median).to_vec();
    let ranges = runs.map(|s| (s.min(), s.summary.max)).to_vec();
    let measured = bars("measured (median)", PALETTE[1], medians, Some(ranges));
    chart.bars.push(measured);
    let bounds = [&a.alone_bound, &a.bound];
    // A dash across each bar at its own bound, broken between the bars.
    let dashes = (bounds.iter().enumerate())
        .flat_map(|(i, b)| {
            let (x, y) = (i as f64, b.ms);
            [(x - HALF_BAR, y), (x + HALF_BAR, y), (x + 0.5, f64::NAN)]
        })
        .collect();
    let each = line("each run's bound", BOUND_COLOR, true, dashes);
    chart.lines.push(each);
    let built: Vec<(f64, f64)> = (bounds.iter().enumerate())
        .filter_map(|(i, b)| Some((i as f64, b.built_ms?)))
        .collect();
    if !built.is_empty() {
        let beaten = points("bound as built, beaten", PALETTE[3], built);
        chart.lines.push(beaten);
    }
    vec![FigureModel::chart("multi-gpu-overlap.svg".into(), chart)]
}

#[cfg(test)]
mod tests;
