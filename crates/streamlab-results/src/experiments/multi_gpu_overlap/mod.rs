//! multi-gpu-overlap: sincos-overlap's pipeline spread over several GPUs of one machine,
//! against the same work on the first of them alone.
//! How it measures, its bounds and its model are told in its words, `multi_gpu_overlap.md`.
use crate::experiments::prelude::*;
mod analysis;
mod present;

use analysis::analyze;
pub use analysis::{GpuBound, HostLinkProbes, Limit, MultiGpuAnalysis};
use present::{columns, figures, gpu_columns};

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
        if self.batches() > self.iterations {
            return Err(UsageError::new(format!(
                "--batches {} exceeds --iterations {}: each batch needs at least one iteration",
                self.batches(),
                self.iterations
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
    /// The same pass once after each round of timed batches, and several after the
    /// last: with `host_link`, the probes whose fastest is the host link's bound (absent
    /// before 2026-11-28, whose bound rests on `host_link` alone).
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
        let row = |key: &str, label: &str, series| {
            MeasuredRow::median(key, label, series, MS).over_link()
        };
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

    /// Its section, with the verdict its words give.
    fn section(
        rust: &Analyzed<Self>,
        cuda: Option<&Analyzed<Self>>,
    ) -> Result<Section, ReportError> {
        let mut sec = rust.section(cuda)?;
        sec.verdict = rust.words.as_ref().ok().and_then(|w| w.part("verdict"));
        Ok(sec)
    }

    fn summary(r: &MultiGpuOverlapResult, a: &Self::Derived) -> Summary {
        let headline = json!({
            "verified": r.run.verification.passed,
            "gpus": a.gpus,
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
            over_bound: Some((a.spread_over_bound, format!("spread over {} GPUs", a.gpus))),
            ..Overview::default()
        })
    }
}

#[cfg(test)]
mod tests;
