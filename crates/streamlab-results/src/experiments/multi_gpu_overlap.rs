//! multi-gpu-overlap: sincos-overlap's pipeline spread over several GPUs of one machine,
//! against the same work on the first of them alone.
//!
//! The elements are split evenly over the GPUs ([`crate::spread::over_gpus`]), each GPU's
//! share over `--streams` streams (fewer where it has fewer elements than that), each GPU
//! issuing asynchronous 2 (every copy in, every kernel, every copy out) from one host
//! array pinned for every GPU's context. Iterations run back to back in batches, as in
//! sincos-overlap; a batch is timed with the host clock from issuing its first
//! iteration on every GPU until every GPU has finished (events cannot time across
//! GPUs). The first GPU then runs the whole work alone over the same streams: speedup =
//! its time / the spread time.
//!
//! The bound of the spread run is the larger of two limits: the slowest GPU's own
//! pipeline bound for its share ([`crate::derived::pipeline`], from its copy and kernel
//! stages measured alone), and the host's link shared by every GPU: every GPU copying
//! its share in and out at once, timed together, bounds an iteration that moves the same
//! bytes. The bound's speedup is the first GPU's own pipeline bound for the whole work
//! over that; the run is at its bound where its speedup is within [`TARGET`] of it.
use serde::{Deserialize, Serialize};

use crate::derived::pipeline::{self, Bound, Limiter, Stages};
use crate::derived::rates::{gbps, stage_noise, stages};
use crate::derived::trace::TraceChecks;
use crate::experiment::{
    self, Analyzed, Csv, Experiment, MS, MeasuredRow, Saved, Summary, With, verdict,
};
use crate::report::ReportError;
use crate::report::chart::{BOUND_COLOR, BarSeries, PALETTE, XAxis, YScale};
use crate::report::figures::{FigureModel, blank, line};
use crate::report::section::{Section, draw};
use crate::report::table::{Columns, Table, noise, num, times};
use crate::saved::{DeviceInfo, MAX_STREAMS, Provenance, StageTimes, UsageError, Verification};
use crate::stats::Series;

/// The multi-gpu-overlap experiment.
pub struct MultiGpuOverlap;

/// How far below its bound's speedup a run's speedup may fall and still be at its
/// bound.
pub const TARGET: f64 = 1.05;

/// Parameters; the array and streams are sincos-overlap's.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// The GPUs to spread the work over, as ordinals, e.g. `0,1` (default: every GPU);
    /// the first also runs the whole work alone.
    #[arg(long, value_delimiter = ',')]
    pub devices: Vec<usize>,
    /// Floats in the array, over all GPUs together.
    #[arg(long, default_value_t = 1 << 25,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=u32::MAX as u64))]
    pub elements: usize,
    /// Threads per block (the blog's code uses 1024).
    #[arg(long, default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// Streams per GPU (a GPU with fewer elements uses one stream per element).
    #[arg(long, default_value_t = 4,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STREAMS as u64))]
    pub streams: usize,
    /// Untimed iterations before each configuration is first timed.
    #[arg(long, default_value_t = 20)]
    pub warmup: usize,
    /// Timed iterations per configuration.
    #[arg(long, default_value_t = 200,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub iterations: usize,
    /// Timed batches the iterations are split into, each giving one sample; up to three
    /// times as many while a configuration's noise is above 1% [default: min(10,
    /// --iterations)].
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub batches: Option<usize>,
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
            elements: 1 << 22,
            warmup: 2,
            iterations: 20,
            batches: Some(4),
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

/// Result of multi-gpu-overlap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiGpuOverlapResult {
    pub params: Params,
    /// The GPU the session opened (the link probes ran on it).
    pub device: DeviceInfo,
    pub provenance: Provenance,
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
    /// whole array each way over all GPUs), host-timed.
    pub host_link: Series,
    pub verification: Verification,
}

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
fn analyze(r: &MultiGpuOverlapResult) -> MultiGpuAnalysis {
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
        streams: r.params.streams,
        batch_iterations: runs,
        spread_ms,
        spread_noise: r.spread.noise(),
        alone_ms,
        alone_noise: r.alone.noise(),
        speedup,
        per_gpu,
        gpus_bound_ms,
        host_link_ms,
        host_link_gbps: gbps(2 * r.params.bytes(), host_link_ms),
        bound_ms,
        limit,
        alone_bound,
        bound_speedup,
        efficiency: speedup / bound_speedup,
        at_bound: bound_speedup <= TARGET * speedup,
        beyond_bound: pipeline::beyond(spread_ms, bound_ms),
        fewer_streams: (r.gpus.iter())
            .filter(|g| g.streams < r.params.streams)
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

/// The one declaration of the main table and the CSV: one row, the run.
fn columns<'a>() -> Columns<'a, MultiGpuAnalysis> {
    Columns::new()
        .both(
            "GPUs",
            |x: &MultiGpuAnalysis| x.gpus.to_string(),
            "gpus",
            |x| x.gpus.to_string(),
        )
        .both(
            "streams per GPU",
            |x| x.streams.to_string(),
            "streams",
            |x| x.streams.to_string(),
        )
        .both(
            "all GPUs (ms)",
            |x| num(x.spread_ms, 4),
            "spread_ms",
            |x| format!("{:.4}", x.spread_ms),
        )
        .both(
            "noise",
            |x| noise(x.spread_noise),
            "spread_noise",
            |x| format!("{:.4}", x.spread_noise),
        )
        .both(
            "first GPU alone (ms)",
            |x| num(x.alone_ms, 4),
            "alone_ms",
            |x| format!("{:.4}", x.alone_ms),
        )
        .both(
            "noise",
            |x| noise(x.alone_noise),
            "alone_noise",
            |x| format!("{:.4}", x.alone_noise),
        )
        .both(
            "speedup",
            |x| times(x.speedup),
            "speedup",
            |x| format!("{:.4}", x.speedup),
        )
        .both(
            "bound (ms)",
            |x| num(x.bound_ms, 4),
            "bound_ms",
            |x| format!("{:.4}", x.bound_ms),
        )
        .both(
            "bound's speedup",
            |x| times(x.bound_speedup),
            "bound_speedup",
            |x| format!("{:.4}", x.bound_speedup),
        )
        .both(
            "efficiency",
            |x| num(x.efficiency, 3),
            "efficiency",
            |x| format!("{:.4}", x.efficiency),
        )
        .show("limited by", |x| x.limit.label())
}

/// The table of each GPU's share against its own pipeline bound.
fn gpu_columns<'a>() -> Columns<'a, GpuBound> {
    let stage = |pick: fn(&Stages) -> f64| {
        move |x: &GpuBound| x.stages.as_ref().map_or("–".into(), |s| num(pick(s), 4))
    };
    Columns::new()
        .show("GPU", |x: &GpuBound| x.ordinal.to_string())
        .show("elements", |x| x.elements.to_string())
        .show("streams", |x| x.streams.to_string())
        .show("HtoD (ms)", stage(|s| s.htod_ms))
        .show("kernels (ms)", stage(|s| s.kernel_ms))
        .show("DtoH (ms)", stage(|s| s.dtoh_ms))
        .show("both ways (ms)", stage(|s| s.both_ms))
        .show("bound (ms)", |x| {
            x.bound.map_or("–".into(), |b| num(b.ms, 4))
        })
        .show("limited by", |x| {
            x.bound
                .map_or("no elements".into(), |b| b.limiter.label().into())
        })
}

/// The two runs beside their bounds, the alone run's with its samples' spread.
fn figures(r: &MultiGpuOverlapResult, a: &MultiGpuAnalysis) -> Vec<FigureModel> {
    let labels = vec!["first GPU alone".to_owned(), format!("{} GPUs", a.gpus)];
    let mut chart = blank(
        format!(
            "multi-gpu-overlap: ms per iteration, {} elements, {} streams per GPU",
            r.params.elements, r.params.streams
        ),
        "",
        "ms per iteration",
        XAxis::Categories(labels),
        YScale::Linear,
    );
    chart.bars.push(BarSeries {
        name: "measured (median)".into(),
        color: PALETTE[1],
        values: vec![a.alone_ms, a.spread_ms],
        whiskers: Some(vec![
            (r.alone.min(), r.alone.summary.max),
            (r.spread.min(), r.spread.summary.max),
        ]),
    });
    chart.lines.push(line(
        "bound",
        BOUND_COLOR,
        true,
        vec![(0.0, a.alone_bound.ms), (1.0, a.bound_ms)],
    ));
    vec![FigureModel::chart("multi-gpu-overlap.svg".into(), chart)]
}

impl Saved for MultiGpuOverlapResult {
    experiment::saved_fields!(Params);
}

impl Experiment for MultiGpuOverlap {
    const NAME: &'static str = "multi-gpu-overlap";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = MultiGpuOverlapResult;
    type Derived = MultiGpuAnalysis;

    fn rows(r: &MultiGpuOverlapResult, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        vec![
            MeasuredRow::median(
                "spread",
                format!("{} GPUs, {} streams each", r.gpus.len(), r.params.streams),
                &r.spread,
                MS,
            ),
            MeasuredRow::median(
                "alone",
                format!("the first GPU alone, {} streams", r.params.streams),
                &r.alone,
                MS,
            ),
            MeasuredRow::median(
                "host-link",
                "every GPU copying in and out at once, one pass",
                &r.host_link,
                MS,
            ),
        ]
        .into_iter()
        .map(MeasuredRow::over_link)
        .collect()
    }

    fn derive(r: &MultiGpuOverlapResult, _checks: &[TraceChecks]) -> MultiGpuAnalysis {
        analyze(r)
    }

    fn tables(
        _r: &MultiGpuOverlapResult,
        derived: &Self::Derived,
        _cuda: Option<With<'_, Self>>,
    ) -> Vec<Table> {
        let a = derived;
        vec![
            columns().table(
                Some(format!(
                    "medians, ms per iteration; speedup = alone / all GPUs; efficiency = speedup / the bound's speedup (at the bound within {TARGET}×)"
                )),
                std::slice::from_ref(a),
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

    fn csv(_r: &MultiGpuOverlapResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(std::slice::from_ref(derived)))]
    }

    fn section(
        rust: &Analyzed<Self>,
        _twin: Option<&Analyzed<Self>>,
    ) -> Result<Section, ReportError> {
        let (r, derived) = rust.with();
        let a = derived;
        let mut sec = rust.section("multi-gpu-overlap: the sincos pipeline over several GPUs", "sincos-overlap's array split evenly over the GPUs, each GPU running asynchronous 2 over its own streams from one host array pinned for every GPU; iterations back to back in batches, each batch timed with the host clock from issuing it on every GPU until every GPU finished, against the same work on the first GPU alone over the same streams. The bound is the slowest GPU's own pipeline bound for its share or the host link shared by every GPU (every GPU copying its share in and out at once), whichever is larger. Every element of every GPU's output is checked against the CPU reference.");
        sec.tables = Self::tables(r, derived, None);
        if !a.fewer_streams.is_empty() {
            let gpus: Vec<String> = (a.fewer_streams.iter())
                .map(|(ordinal, used)| format!("GPU {ordinal} ({used})"))
                .collect();
            sec.note(
                "Streams",
                format!(
                    "Fewer elements than --streams {}: {} used one stream per element.",
                    r.params.streams,
                    gpus.join(", ")
                ),
            );
        }
        sec.note(
            "Bound",
            format!(
                "The slowest GPU's pipeline bound is {} ms per iteration, every GPU copying at once {} ms ({} GB/s both ways together): {} limits the run. The first GPU alone is bound at {} ms ({}).{}",
                num(a.gpus_bound_ms, 4),
                num(a.host_link_ms, 4),
                num(a.host_link_gbps, 1),
                a.limit.label(),
                num(a.alone_bound.ms, 4),
                a.alone_bound.limiter.label(),
                if a.beyond_bound {
                    " The run beat this bound: a limit was under-measured."
                } else {
                    ""
                }
            ),
        );
        sec.verdict = Some(format!(
            "{} GPUs ran {} faster than the first alone, against {} for the bound: {} ({})",
            a.gpus,
            times(a.speedup),
            times(a.bound_speedup),
            if a.at_bound {
                format!("at the bound within {TARGET}×")
            } else {
                format!("short of the bound by more than {TARGET}×")
            },
            a.limit.label()
        ));
        sec.figures = draw(figures(r, a));
        Ok(sec)
    }

    fn summary(r: &MultiGpuOverlapResult, derived: &Self::Derived) -> Summary {
        let a = derived;
        let x = MultiGpuSummary {
            verified: r.verification.passed,
            gpus: a.gpus,
            spread_ms: a.spread_ms,
            alone_ms: a.alone_ms,
            speedup: a.speedup,
            bound_speedup: a.bound_speedup,
            limit: a.limit,
            at_bound: a.at_bound,
        };
        let line = format!(
            "{} GPUs {:.4} ms, first alone {:.4} ms: {} (bound {}, {}{}); {}",
            x.gpus,
            x.spread_ms,
            x.alone_ms,
            times(x.speedup),
            times(x.bound_speedup),
            x.limit.label(),
            if x.at_bound { "" } else { "; short of it" },
            verdict(x.verified)
        );
        Summary::headline(&x, line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::Params as _;

    fn series(ms: &[f64]) -> Series {
        Series::new(ms.to_vec()).unwrap()
    }

    /// The parts of `mib` MiB each way: in and out at 50 GB/s alone, both ways together
    /// in 1.2× the time of one way alone, the kernels `kernel_ms`.
    fn stage_times(chunks: usize, mib: u64, kernel_ms: f64) -> StageTimes {
        let bytes = mib << 20;
        let one_way = bytes as f64 / 50e6;
        StageTimes {
            chunks,
            bytes,
            passes: 1,
            htod: series(&[one_way, one_way * 1.1]),
            dtoh: series(&[one_way]),
            both: series(&[1.2 * one_way]),
            both_htod: series(&[one_way]),
            both_dtoh: series(&[one_way]),
            kernels: Some(series(&[kernel_ms])),
        }
    }

    /// Two GPUs, 64 MiB each way in all, 4 streams each, batches of 10 iterations: each
    /// GPU's share alone takes 0.671 ms one way; every GPU copying at once `host_link_ms`.
    fn result(host_link_ms: f64, spread_ms: f64) -> MultiGpuOverlapResult {
        let elements = 16 << 20;
        let share = |k: usize| GpuShare {
            device: DeviceInfo::made_up(k),
            first: k * elements / 2,
            elements: elements / 2,
            streams: 4,
            stages: Some(stage_times(4, 32, 0.05)),
        };
        MultiGpuOverlapResult {
            params: Params {
                devices: vec![0, 1],
                elements,
                ..Params::quick()
            },
            device: DeviceInfo::made_up(0),
            provenance: Provenance::made_up(),
            gpus: vec![share(0), share(1)],
            batch_sizes: vec![10, 10],
            spread: series(&[spread_ms, spread_ms * 1.01, spread_ms * 0.99]),
            alone: series(&[1.7, 1.71, 1.69]),
            alone_stages: stage_times(4, 64, 0.1),
            host_link: series(&[host_link_ms, host_link_ms * 1.2]),
            verification: Verification {
                passed: true,
                checked: elements as u64,
                mismatches: 0,
                max_abs_error: 0.0,
                detail: "ok".into(),
            },
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_slow_shared_link_binds_and_the_speedup_is_held_to_the_bounds() {
        // Every GPU at once moves 128 MiB in 1.2 ms: slower than either GPU alone.
        let a = analyze(&result(1.2, 1.25));
        let share = a.per_gpu[0].bound.unwrap();
        let one_way = (32u64 << 20) as f64 / 50e6;
        // Both ways at once: C + (H + D − C)/(4 × 10) per iteration.
        assert!(
            close(share.ms, 1.2 * one_way + 0.8 * one_way / 40.0),
            "{}",
            share.ms
        );
        assert_eq!(share.limiter, Limiter::BothWays);
        assert!(close(a.gpus_bound_ms, share.ms));
        assert_eq!(a.limit, Limit::HostLink);
        assert!(close(a.bound_ms, 1.2));
        assert!(close(a.host_link_gbps, 2.0 * (64u64 << 20) as f64 / 1.2e6));
        let alone = 2.0 * one_way;
        assert!(close(a.alone_bound.ms, 1.2 * alone + 0.8 * alone / 40.0));
        assert!(close(a.speedup, 1.7 / 1.25));
        assert!(close(a.bound_speedup, a.alone_bound.ms / 1.2));
        assert!(close(a.efficiency, a.speedup / a.bound_speedup));
        assert!(a.at_bound, "{} against {}", a.speedup, a.bound_speedup);
        assert!(!a.beyond_bound && a.fewer_streams.is_empty());
    }

    #[test]
    fn a_fast_link_leaves_the_slowest_gpu_as_the_limit() {
        let mut r = result(0.5, 1.2);
        // GPU 1's kernels take longer than its copies.
        r.gpus[1].stages = Some(stage_times(4, 32, 0.9));
        let a = analyze(&r);
        assert_eq!(
            a.limit,
            Limit::Gpu {
                ordinal: 1,
                limiter: Limiter::Sms
            }
        );
        assert!(close(a.bound_ms, a.per_gpu[1].bound.unwrap().ms));
        assert!(a.bound_ms > a.per_gpu[0].bound.unwrap().ms);
        // 1.7 / 1.2 against a bound's speedup near 1.75: more than 5% short.
        assert!(!a.at_bound, "{} against {}", a.speedup, a.bound_speedup);
        assert_eq!(a.limit.label(), "GPU 1: SMs");
    }

    #[test]
    fn an_idle_gpu_and_fewer_streams_are_said() {
        let mut r = result(1.2, 1.25);
        r.gpus[1].streams = 0;
        r.gpus[1].elements = 0;
        r.gpus[1].stages = None;
        let a = analyze(&r);
        assert!(a.per_gpu[1].bound.is_none());
        assert_eq!(a.fewer_streams, [(1, 0)]);
        let section = MultiGpuOverlap::section(
            &Analyzed::new(crate::saved::KernelSet::Rust, r.clone()),
            None,
        )
        .unwrap();
        assert!(
            (section.notes.iter()).any(|(label, n)| label == "Streams" && n.contains("GPU 1 (0)"))
        );
        let table = &MultiGpuOverlap::tables(&r, &analyze(&r), None)[1];
        assert_eq!(table.rows[1].last().unwrap(), "no elements");
    }

    #[test]
    fn the_run_renders_as_tables_csv_chart_section_and_headline() {
        let r = result(1.2, 1.25);
        let tables = MultiGpuOverlap::tables(&r, &analyze(&r), None);
        assert_eq!(tables.len(), 2);
        let main = &tables[0];
        assert_eq!(main.rows.len(), 1);
        assert_eq!(main.rows[0][main.column("speedup").unwrap()], "1.36×");
        assert_eq!(main.rows[0][main.column("all GPUs").unwrap()], "1.2500");
        assert_eq!(
            main.rows[0].last().unwrap(),
            "the host link, shared by every GPU"
        );
        assert_eq!(tables[1].rows.len(), 2);
        let csv = MultiGpuOverlap::csv(&r, &analyze(&r))[0].contents.clone();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "gpus,streams,spread_ms,spread_noise,alone_ms,alone_noise,speedup,bound_ms,bound_speedup,efficiency"
        );
        assert!(lines.next().unwrap().starts_with("2,4,1.2500,"));
        let section = MultiGpuOverlap::section(
            &Analyzed::new(crate::saved::KernelSet::Rust, r.clone()),
            None,
        )
        .unwrap();
        assert_eq!(section.figures.len(), 1);
        let verdict = section.verdict.unwrap();
        assert!(
            verdict.starts_with("2 GPUs ran 1.36× faster than the first alone")
                && verdict.contains("at the bound within 1.05×"),
            "{verdict}"
        );
        assert!((section.notes.iter()).any(|(label, _)| label == "Bound"));
        let headline = MultiGpuOverlap::summary(&r, &analyze(&r)).line.unwrap();
        assert!(
            headline.starts_with("2 GPUs 1.2500 ms, first alone 1.7000 ms: 1.36×")
                && headline.ends_with("verified"),
            "{headline}"
        );
        assert_eq!(MultiGpuOverlap::rows(&r, &analyze(&r)).len(), 3);
    }

    #[test]
    fn devices_are_checked_before_the_gpus_are_opened() {
        let given = |devices: &[usize]| Params {
            devices: devices.to_vec(),
            ..Params::default()
        };
        let err = given(&[0]).validate().unwrap_err();
        assert!(
            err.to_string()
                .contains("multi-gpu-overlap needs two or more GPUs but --devices names one (0)"),
            "{err}"
        );
        assert!(given(&[0, 0]).validate().is_err());
        assert!(given(&[]).validate().is_ok());
        let err = Params {
            batches: Some(30),
            iterations: 20,
            ..Params::default()
        }
        .validate()
        .unwrap_err();
        assert!(err.to_string().contains("--batches 30"), "{err}");
    }
}
