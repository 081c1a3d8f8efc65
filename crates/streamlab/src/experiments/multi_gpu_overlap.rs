//! multi-gpu-overlap: the sincos pipeline spread over several GPUs. Every GPU chosen gets
//! its primary context, `--streams` streams (at least two, for the stage samples) and
//! device arrays for its share of the elements ([`spread::over_gpus`]); the first GPU's
//! arrays hold every element, since it also runs the whole work alone. The host arrays
//! are pinned for every context, `a` random, `b` checked against the f64 reference.
//!
//! First each GPU's share is timed in parts (copies in alone, out alone, both ways at
//! once, and the kernels: [`StageSampler`]), and the whole array's parts on the first
//! GPU; then every GPU copying its share in and out at once, host-timed, for the shared
//! host link. Then the two configurations, round-robin a batch each per round as in
//! sincos-overlap: every GPU running asynchronous 2 over its share, and the first GPU
//! alone over the whole array. A batch is `warmup` untimed iterations, then its timed
//! iterations issued back to back (each iteration issued GPU by GPU, each GPU's work on
//! its own streams with its context current) and waited for on every GPU, timed with
//! the host clock: events cannot time across GPUs. Each configuration's output is
//! poisoned before its first batch and every element checked after it. After each round
//! the parts are sampled once more and every GPU copies at once once more,
//! and after the last round several times more: the bounds are the best of probes taken
//! before, between and after the timed batches. Last, one batch of every GPU its share
//! is traced on every GPU at once ([`trace::record_gpus`]). The result's parameters name
//! the GPUs it ran on. Needs two or more GPUs: [`Run::unavailable`] says why not
//! otherwise.
use std::ops::Range;
use std::time::Instant;

use streamlab_results::experiment::Experiment as _;
use streamlab_results::experiments::multi_gpu_overlap::{
    GpuShare, MultiGpuOverlap, MultiGpuOverlapResult, Params,
};
use streamlab_results::saved::timeline::{OpKind, Timeline, TraceReference};
use streamlab_results::saved::{IssueOrder, Params as _, Verification};
use streamlab_results::spread::{self, Devices, Share};
use streamlab_results::stats::Series;

use super::{Context, Rebind, Run, RunError, chosen_gpus, several_gpus};
use crate::measure::{StageSampler, issue_iteration, series, wants_round};
use crate::runtime::peer::portable_pinned;
use crate::runtime::{DeviceBuffer, Gpu, PinnedBuffer, RuntimeError, Stream};
use crate::sincos::{Expected, SincosFn, fill_inputs, issue_op};
use crate::trace;
use streamlab_results::spread::chunks;

/// How each GPU issues its iteration.
const ORDER: IssueOrder = IssueOrder::Async2;
/// Samples of each stage for the bound, and passes over the data per sample.
const STAGE_SAMPLING: (usize, usize) = (5, 4);
/// Samples of every GPU copying in and out at once, and passes per sample.
const HOST_LINK_SAMPLING: (usize, usize) = (5, 4);
/// Untimed iterations before each batch after a configuration's first.
const REVISIT_WARMUP: usize = 2;
/// Iterations of every GPU its share traced back to back: the middle one's period is
/// held to the fastest timed batch.
const TRACED_ITERATIONS: usize = 3;

/// The host arrays every GPU copies from and to, pinned for every context.
struct Host {
    a: PinnedBuffer<f32>,
    b: PinnedBuffer<f32>,
}

/// One GPU's copy of the arrays: the elements from `base` on.
struct Arrays {
    kernel: SincosFn,
    dev_a: DeviceBuffer<f32>,
    dev_b: DeviceBuffer<f32>,
    base: usize,
}

impl Arrays {
    /// One copy in, kernel or copy out of `part` on `stream` (its GPU's context
    /// current).
    fn op(
        &mut self,
        threads: u32,
        host: &mut Host,
        kind: OpKind,
        stream: &Stream,
        part: &Range<usize>,
    ) -> Result<(), RuntimeError> {
        issue_op(
            (&self.kernel, threads),
            kind,
            stream,
            (&host.a, &mut host.b),
            (&mut self.dev_a, &mut self.dev_b, self.base),
            part,
        )
    }
}

/// One GPU of the run: its streams, its share and its arrays.
struct Side<'g> {
    gpu: &'g Gpu,
    streams: Vec<Stream<'g>>,
    share: Share,
    arrays: Arrays,
}

impl Side<'_> {
    /// Issue one iteration over `parts`, chunk `s` on stream `s`, with this GPU's
    /// context current.
    fn issue(
        &mut self,
        threads: u32,
        host: &mut Host,
        parts: &[Range<usize>],
    ) -> Result<(), RuntimeError> {
        self.gpu.bind()?;
        let (streams, arrays) = (&self.streams, &mut self.arrays);
        issue_iteration(ORDER, streams, parts, |kind, s, part| {
            arrays.op(threads, host, kind, &streams[s], part)
        })
    }

    /// The parts of `parts` (`bytes` each way) on this GPU, timed alone.
    fn stages(
        &mut self,
        threads: u32,
        host: &mut Host,
        parts: &[Range<usize>],
        bytes: u64,
    ) -> Result<StageSampler, RuntimeError> {
        self.gpu.bind()?;
        let arrays = &mut self.arrays;
        StageSampler::measure(
            self.gpu,
            &self.streams,
            parts,
            bytes,
            STAGE_SAMPLING,
            true,
            |kind, stream, part| arrays.op(threads, host, kind, stream, part),
        )
    }

    /// One more sample of the copies of `parts` on this GPU into `sampler`.
    fn stage_round(
        &mut self,
        sampler: &mut StageSampler,
        threads: u32,
        host: &mut Host,
        parts: &[Range<usize>],
    ) -> Result<(), RuntimeError> {
        self.gpu.bind()?;
        let arrays = &mut self.arrays;
        sampler.sample_round(
            self.gpu,
            &self.streams,
            parts,
            STAGE_SAMPLING.1,
            |kind, stream, part| arrays.op(threads, host, kind, stream, part),
        )
    }
}

/// The samples the bounds are built from, taken before, between and after the timed
/// batches: each GPU's parts (`None` for a GPU with no elements), the whole array's on the
/// first GPU, and every GPU copying at once.
struct Probes {
    shares: Vec<Option<StageSampler>>,
    alone: StageSampler,
    host_link: [Vec<f64>; 3],
}

/// Which of [`Probes::host_link`] a sample goes to.
const BEFORE: usize = 0;
const BETWEEN: usize = 1;
const AFTER: usize = 2;

impl Probes {
    /// One more sample of every part and of every GPU copying at once, between rounds of
    /// timed batches.
    fn round(
        &mut self,
        sides: &mut Sides,
        host: &mut Host,
        (threads, whole): (u32, &[Range<usize>]),
    ) -> Result<(), RuntimeError> {
        for (side, sampler) in sides.0.iter_mut().zip(&mut self.shares) {
            if let Some(sampler) = sampler {
                let parts = side.share.parts.clone();
                side.stage_round(sampler, threads, host, &parts)?;
            }
        }
        sides.0[0].stage_round(&mut self.alone, threads, host, whole)?;
        let (_, passes) = HOST_LINK_SAMPLING;
        let sample = sides.host_link_pass(threads, host, passes)?;
        self.host_link[BETWEEN].push(sample);
        Ok(())
    }

    /// `HOST_LINK_SAMPLING` samples of every GPU copying at once, into `host_link[at]`.
    fn host_link(
        &mut self,
        sides: &mut Sides,
        host: &mut Host,
        threads: u32,
        at: usize,
    ) -> Result<(), RuntimeError> {
        let (samples, passes) = HOST_LINK_SAMPLING;
        for _ in 0..samples {
            let sample = sides.host_link_pass(threads, host, passes)?;
            self.host_link[at].push(sample);
        }
        Ok(())
    }
}

/// Every GPU of the run, in `--devices` order; dropped GPU by GPU with its context
/// current, after its work has finished.
struct Sides<'g>(Vec<Side<'g>>);

impl Drop for Sides<'_> {
    fn drop(&mut self) {
        for side in self.0.drain(..) {
            let _ = side.gpu.bind();
            let _ = side.gpu.synchronize();
            drop(side);
        }
    }
}

impl Sides<'_> {
    /// Wait for every GPU's work.
    fn synchronize(&self) -> Result<(), RuntimeError> {
        for side in &self.0 {
            side.gpu.bind()?;
            side.gpu.synchronize()?;
        }
        Ok(())
    }

    /// Poison `b` on every GPU and on the host, so every element must be written again.
    fn poison(&mut self, host: &mut Host) -> Result<(), RuntimeError> {
        for side in &mut self.0 {
            side.gpu.bind()?;
            side.streams[0].poison(&mut side.arrays.dev_b)?;
        }
        crate::parallel::for_each_chunk_mut(host.b.as_mut_slice()?, |_, c| c.fill(f32::NAN));
        self.synchronize()
    }

    /// Milliseconds per pass of every GPU copying its share in (first stream) and out
    /// (second stream) at once, `passes` passes issued GPU by GPU, host-timed until
    /// every GPU is done.
    fn host_link_pass(
        &mut self,
        threads: u32,
        host: &mut Host,
        passes: usize,
    ) -> Result<f64, RuntimeError> {
        self.synchronize()?;
        let start = Instant::now();
        for _ in 0..passes {
            for side in &mut self.0 {
                side.gpu.bind()?;
                for part in &side.share.parts {
                    side.arrays
                        .op(threads, host, OpKind::HtoD, &side.streams[0], part)?;
                    side.arrays
                        .op(threads, host, OpKind::DtoH, &side.streams[1], part)?;
                }
            }
        }
        self.synchronize()?;
        Ok(start.elapsed().as_secs_f64() * 1e3 / passes as f64)
    }
}

/// What a batch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Configuration {
    /// Every GPU its share.
    Spread,
    /// The first GPU the whole array.
    Alone,
}

impl Configuration {
    fn label(self) -> &'static str {
        match self {
            Configuration::Spread => "every GPU its share",
            Configuration::Alone => "the first GPU alone",
        }
    }
}

/// Each side's chunks under `configuration` (`whole`: the whole array's, for the first
/// GPU alone).
fn work(
    sides: &Sides,
    configuration: Configuration,
    whole: &[Range<usize>],
) -> Vec<Vec<Range<usize>>> {
    (sides.0.iter().enumerate())
        .map(|(k, side)| match configuration {
            Configuration::Spread => side.share.parts.clone(),
            Configuration::Alone if k == 0 => whole.to_vec(),
            Configuration::Alone => Vec::new(),
        })
        .collect()
}

/// One sample: `warmup` untimed iterations, then `iterations` issued back to back, each
/// GPU by GPU, timed with the host clock until every GPU is done; milliseconds per
/// iteration.
fn batch(
    sides: &mut Sides,
    parts: &[Vec<Range<usize>>],
    threads: u32,
    host: &mut Host,
    (warmup, iterations): (usize, usize),
) -> Result<f64, RuntimeError> {
    let mut issue = |sides: &mut Sides| -> Result<(), RuntimeError> {
        for (side, parts) in sides.0.iter_mut().zip(parts) {
            if !parts.is_empty() {
                side.issue(threads, host, parts)?;
            }
        }
        Ok(())
    };
    for _ in 0..warmup {
        issue(sides)?;
    }
    sides.synchronize()?;
    let start = Instant::now();
    for _ in 0..iterations {
        issue(sides)?;
    }
    sides.synchronize()?;
    Ok(start.elapsed().as_secs_f64() * 1e3 / iterations as f64)
}

impl Run for MultiGpuOverlap {
    const SUMMARY: &'static str = "sincos-overlap spread over several GPUs (needs two or more)";
    const ABOUT: &'static str = "sincos-overlap's pipeline spread over several GPUs (needs two or more): the \
        array split evenly over --devices, each GPU running asynchronous 2 over \
        --streams streams from host memory pinned for every GPU, host-timed, against \
        the same work on the first GPU alone: the speedup beside its bound (the \
        slowest GPU's own pipeline or the host link every GPU shares, whichever is \
        larger)";

    fn unavailable(params: &Params) -> Result<Option<String>, RunError> {
        match several_gpus(MultiGpuOverlap::NAME, &params.devices)? {
            Devices::Chosen(_) => Ok(None),
            Devices::TooFew(why) => Ok(Some(why)),
        }
    }

    fn gpus(params: &Params) -> Result<Vec<usize>, RunError> {
        chosen_gpus(MultiGpuOverlap::NAME, &params.devices)
    }

    fn run(ctx: &Context, p: &Params) -> Result<MultiGpuOverlapResult, RunError> {
        p.validate()?;
        let ordinals = chosen_gpus(MultiGpuOverlap::NAME, &p.devices)?;
        let _rebind = Rebind(ctx.gpu);
        let shares = spread::over_gpus(p.elements, ordinals.len(), p.streams);
        let whole = chunks(p.elements, p.streams.min(p.elements));
        let mut host = Host {
            a: portable_pinned(p.elements, 0.0f32)?,
            b: portable_pinned(p.elements, f32::NAN)?,
        };
        let expected = fill_inputs(ctx.gpu, (ctx.kernels, ctx.form), &mut host.a)?;
        let gpus = (ordinals.iter())
            .map(|&ordinal| Gpu::open(ordinal))
            .collect::<Result<Vec<_>, _>>()?;
        let mut sides = open_sides(ctx, p, &gpus, shares)?;
        let with_work = sides.0.iter().filter(|s| !s.share.parts.is_empty()).count();
        let mut task =
            crate::progress::Task::start(MultiGpuOverlap::NAME, (with_work + 2 + 2 + 2) as u64);
        let mut probes = first_probes(p, (&mut sides, &mut host), &whole, &mut task)?;
        let batches = chunks(p.iterations, p.batches());
        let (mut timed, checks) = sample_configurations(
            ctx,
            p,
            (&mut sides, &mut host, &mut probes),
            (&whole, &batches),
            &expected,
            &mut task,
        )?;
        probes.host_link(&mut sides, &mut host, p.threads, AFTER)?;
        task.step("every GPU copying in and out at once, after");
        let timeline = if ctx.stopping() || timed[0].is_empty() {
            None
        } else {
            let fastest = timed[0].iter().copied().fold(f64::INFINITY, f64::min);
            let traced = trace_spread(p, (&mut sides, &mut host), fastest)?;
            task.step("traced every GPU its share");
            Some(traced)
        };
        task.finish();
        let Probes {
            shares,
            alone,
            host_link: [before, between, after],
        } = probes;
        let gpus = (sides.0.iter().zip(shares))
            .map(|(side, stages)| GpuShare {
                device: side.gpu.info().clone(),
                first: side.share.elements.start,
                elements: side.share.elements.len(),
                streams: side.share.parts.len(),
                stages: stages.map(StageSampler::finish),
            })
            .collect();
        drop(sides);
        let [spread, alone_times] = [0, 1].map(|i| series(std::mem::take(&mut timed[i])));
        let params = Params {
            devices: ordinals,
            ..p.clone()
        };
        Ok(MultiGpuOverlapResult {
            run: ctx.record(params, crate::verify::combine(checks), !ctx.stopping()),
            gpus,
            batch_sizes: batches.iter().map(Range::len).collect(),
            spread,
            alone: alone_times,
            alone_stages: alone.finish(),
            host_link: series(before),
            host_link_between: Series::new(between),
            host_link_after: Series::new(after),
            timeline,
        })
    }
}

/// The probes before the timed batches: each GPU's share in parts, the whole array's
/// parts on the first GPU, then every GPU copying its share in and out at once.
fn first_probes(
    p: &Params,
    (sides, host): (&mut Sides, &mut Host),
    whole: &[Range<usize>],
    task: &mut crate::progress::Task,
) -> Result<Probes, RuntimeError> {
    let mut shares = Vec::new();
    for side in &mut sides.0 {
        let share = side.share.clone();
        shares.push(if share.parts.is_empty() {
            None
        } else {
            let bytes = (share.elements.len() * size_of::<f32>()) as u64;
            let sampler = side.stages(p.threads, host, &share.parts, bytes)?;
            task.step(&format!("stages on GPU {}", side.gpu.info().ordinal));
            Some(sampler)
        });
    }
    let alone = sides.0[0].stages(p.threads, host, whole, p.bytes())?;
    task.step("stages of the whole array on the first GPU");
    let mut probes = Probes {
        shares,
        alone,
        host_link: [Vec::new(), Vec::new(), Vec::new()],
    };
    // One untimed pass, so no first-use cost lands in a sample.
    sides.host_link_pass(p.threads, host, 1)?;
    probes.host_link(sides, host, p.threads, BEFORE)?;
    task.step("every GPU copying in and out at once");
    Ok(probes)
}

/// [`TRACED_ITERATIONS`] of every GPU its share, back to back, traced on every GPU at
/// once and held to `fastest`, the fastest timed batch's time per iteration.
fn trace_spread(
    p: &Params,
    (sides, host): (&mut Sides, &mut Host),
    fastest: f64,
) -> Result<Timeline, RuntimeError> {
    sides.synchronize()?;
    let mut gpus: Vec<(&Gpu, &[Stream])> = Vec::new();
    let mut work = Vec::new();
    for side in sides.0.iter_mut().filter(|s| !s.share.parts.is_empty()) {
        let streams = &side.streams[..side.share.parts.len()];
        gpus.push((side.gpu, streams));
        work.push((side.gpu, streams, &side.share.parts, &mut side.arrays));
    }
    let title = format!(
        "{}, every GPU its share ({} GPUs, {} streams each)",
        MultiGpuOverlap::NAME,
        gpus.len(),
        p.streams
    );
    let reference = TraceReference {
        timed_ms: fastest,
        back_to_back: true,
        median_ms: None,
        rates: None,
    };
    let threads = p.threads;
    trace::record_gpus(&gpus, &title, reference, |rec| {
        for iteration in 0..TRACED_ITERATIONS {
            let mut first = 0;
            for (gpu, streams, parts, arrays) in work.iter_mut() {
                gpu.bind()?;
                issue_iteration(ORDER, streams, parts, |kind, s, part| {
                    let bytes =
                        (kind != OpKind::Kernel).then_some((part.len() * size_of::<f32>()) as u64);
                    rec.op(first + s, iteration, kind, bytes, |stream| {
                        arrays.op(threads, host, kind, stream, part)
                    })
                })?;
                first += parts.len();
            }
        }
        Ok(())
    })
}

/// Every GPU of `ordinals` with its primary context, its streams and its arrays for its
/// share (the first GPU's for every element, since it also runs the whole array alone).
fn open_sides<'g>(
    ctx: &Context,
    p: &Params,
    gpus: &'g [Gpu],
    shares: Vec<Share>,
) -> Result<Sides<'g>, RuntimeError> {
    let mut sides = Sides(Vec::new());
    for (k, (gpu, share)) in gpus.iter().zip(shares).enumerate() {
        gpu.bind()?;
        // The first GPU also runs the whole array alone.
        let len = if k == 0 {
            p.elements
        } else {
            share.elements.len()
        };
        gpu.ensure_fits((2 * len * size_of::<f32>()) as u64)?;
        sides.0.push(Side {
            streams: gpu.streams(p.streams.max(2))?,
            arrays: Arrays {
                kernel: gpu.kernels().sincos_in(ctx.form),
                dev_a: gpu.alloc(len)?,
                dev_b: gpu.alloc(len)?,
                base: share.elements.start,
            },
            share,
            gpu,
        });
    }
    Ok(sides)
}

/// The two configurations round-robin, a batch each per round while either wants more
/// ([`wants_round`]), each poisoned before its first batch and checked after it, the
/// probes sampled once more after each round: each configuration's times and the checks.
fn sample_configurations(
    ctx: &Context,
    p: &Params,
    (sides, host, probes): (&mut Sides, &mut Host, &mut Probes),
    (whole, batches): (&[Range<usize>], &[Range<usize>]),
    expected: &Expected,
    task: &mut crate::progress::Task,
) -> Result<(Vec<Vec<f64>>, Vec<Verification>), RuntimeError> {
    let configurations = [Configuration::Spread, Configuration::Alone];
    let mut timed: Vec<Vec<f64>> = vec![Vec::new(); configurations.len()];
    let mut checks = Vec::new();
    // Every configuration gets its first batch before a signal can stop the run.
    for round in 0.. {
        if round > 0 && ctx.stopping() {
            break;
        }
        let wanted: Vec<usize> = (0..configurations.len())
            .filter(|&i| wants_round(&timed[i], round, batches.len()))
            .collect();
        if wanted.is_empty() {
            break;
        }
        for i in wanted {
            let configuration = configurations[i];
            let first = timed[i].is_empty();
            if first {
                sides.poison(host)?;
            }
            let warmup = if first {
                p.warmup
            } else {
                p.warmup.min(REVISIT_WARMUP)
            };
            let parts = work(sides, configuration, whole);
            let iterations = batches[round % batches.len()].len();
            timed[i].push(batch(sides, &parts, p.threads, host, (warmup, iterations))?);
            if first {
                checks.push(expected.check(configuration.label(), host.b.as_slice()?));
                task.step(configuration.label());
            }
        }
        probes.round(sides, host, (p.threads, whole))?;
    }
    Ok((timed, checks))
}
