//! mapped: zero-copy against streamed copies, after the CUDA Handbook's
//! concurrencyMemcpyKernelMapped. The sincos kernel reads its input from and writes its
//! output to mapped pinned host memory directly, over PCIe, one launch per iteration;
//! against the same work with device memory, copied in and out in both asynchronous
//! orders over `--streams` streams. Over the same sizes as overlap-map, iterations back
//! to back; every output element of both is checked bit for bit by the sincos check.
use std::ops::Range;

use streamlab_results::experiments::mapped::{
    Mapped, MappedPoint, MappedResult, Params, SINCOS_EXPONENT,
};
use streamlab_results::saved::Params as _;
use streamlab_results::saved::{IssueOrder, StageTimes, Verification};

use super::{Context, Run, RunError};
use crate::measure::{StageSampler, issue_iteration, series};
use crate::runtime::{Gpu, MappedBuffer, Region, RuntimeError, Shape, Stream};
use crate::sincos::{Buffers, SincosFn, THREADS};
use streamlab_results::spread::chunks;

/// The array sizes, in floats, ascending: overlap-map's, and sincos-overlap's array
/// where it lies in the range.
fn sizes(p: &Params) -> Vec<usize> {
    let mut exponents = p.sweep.exponents();
    if (p.sweep.min_exponent..=p.sweep.max_exponent).contains(&SINCOS_EXPONENT) {
        exponents.push(SINCOS_EXPONENT);
    }
    exponents.sort_unstable();
    exponents.dedup();
    exponents.into_iter().map(|e| 1usize << e).collect()
}

impl Run for Mapped {
    const SUMMARY: &'static str = "Zero-copy (mapped) host memory against streamed copies";
    const ABOUT: &'static str = "The sincos kernel on mapped (zero-copy) pinned host memory against streamed \
        copies, over the overlap map's sizes";

    fn run(ctx: &Context, p: &Params) -> Result<MappedResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let sizes = sizes(p);
        let largest = sizes.last().copied().unwrap_or(1);
        let kernel = ctx.kernels.sincos_in(ctx.form);
        let mut b = Buffers::new(gpu, ctx.kernels, ctx.form, largest)?;
        // The same input as the streamed version's, so one reference serves both.
        let mut mapped_a = gpu.mapped(largest, 0.0f32)?;
        mapped_a
            .as_mut_slice()?
            .copy_from_slice(b.host_a.as_slice()?);
        let mut mapped_b = gpu.mapped(largest, f32::NAN)?;
        let streams = gpu.streams(p.streams.max(2))?;
        let mut task = crate::progress::Task::start("mapped", sizes.len() as u64);
        let mut points = Vec::new();
        let mut checks = Vec::new();
        let one = Region::new(gpu, 1)?;
        let used = &streams[..p.streams];
        let many = Region::new(gpu, p.streams)?;
        let timing = Timing {
            gpu,
            kernel,
            p,
            streams: &streams,
            used,
            one: &one,
            many: &many,
        };
        for &n in &sizes {
            if ctx.stopping() {
                break;
            }
            let (iterations, mapped_ms) = timing.zero_copy(n, &mapped_a, &mut mapped_b)?;
            gpu.synchronize()?;
            checks.push(b.expected.check(
                &format!("2^{} floats, mapped", n.ilog2()),
                &mapped_b.as_slice()?[..n],
            ));
            let parts = chunks(n, p.streams);
            let mut streamed = |variant: IssueOrder| {
                timing.streamed(variant, (n, iterations), &parts, &mut b, &mut checks)
            };
            let async1 = streamed(IssueOrder::Async1)?;
            let async2 = streamed(IssueOrder::Async2)?;
            let bytes = (n * size_of::<f32>()) as u64;
            let whole = timing.stages(&chunks(n, 1), false, (bytes, iterations), &mut b)?;
            let chunked = timing.stages(&parts, true, (bytes, iterations), &mut b)?;
            points.push(MappedPoint {
                elements: n,
                iterations,
                mapped: series(mapped_ms),
                async1: series(async1),
                async2: series(async2),
                whole,
                chunked,
            });
            task.step(&format!("2^{} floats", n.ilog2()));
        }
        task.finish();
        Ok(MappedResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), !ctx.stopping()),
            points,
        })
    }
}

/// How both versions are timed: the first stream alone for zero-copy (`one`), the
/// `--streams` streams used for the streamed version (`many`).
struct Timing<'a> {
    gpu: &'a Gpu,
    kernel: SincosFn,
    p: &'a Params,
    streams: &'a [Stream<'a>],
    used: &'a [Stream<'a>],
    one: &'a Region,
    many: &'a Region,
}

impl Timing<'_> {
    /// Zero-copy over the first `n` elements: the iterations per sample, and `--repeats`
    /// samples of them into `mapped_b`, poisoned first.
    fn zero_copy(
        &self,
        n: usize,
        mapped_a: &MappedBuffer<f32>,
        mapped_b: &mut MappedBuffer<f32>,
    ) -> Result<(usize, Vec<f64>), RuntimeError> {
        let (p, kernel, streams, one) = (self.p, self.kernel, self.streams, self.one);
        let shape = Shape::cover(n, THREADS);
        let zero_copy = |s: &Stream, a: &MappedBuffer<f32>, b: &mut MappedBuffer<f32>| {
            s.launch(&kernel, shape, (a.slice(0..n), b.slice_mut(0..n), 0u32))
        };
        // About `sample_ms` per sample, from a first timing of four iterations.
        zero_copy(&streams[0], mapped_a, mapped_b)?;
        one.begin(&streams[..1])?;
        for _ in 0..4 {
            zero_copy(&streams[0], mapped_a, mapped_b)?;
        }
        let estimate = one.end(&streams[..1])? / 4.0;
        let iterations = ((p.sample_ms / estimate).ceil() as usize).clamp(2, 100_000);
        mapped_b.as_mut_slice()?[..n].fill(f32::NAN);
        let mut mapped_ms = Vec::with_capacity(p.sampling.repeats);
        for _ in 0..p.sampling.repeats {
            one.begin(&streams[..1])?;
            for _ in 0..iterations {
                zero_copy(&streams[0], mapped_a, mapped_b)?;
            }
            mapped_ms.push(one.end(&streams[..1])? / iterations as f64);
        }
        Ok((iterations, mapped_ms))
    }

    /// `--repeats` samples of `iterations` iterations of `variant` over the first `n`
    /// elements in `parts`, on poisoned outputs checked after.
    fn streamed(
        &self,
        variant: IssueOrder,
        (n, iterations): (usize, usize),
        parts: &[Range<usize>],
        b: &mut Buffers,
        checks: &mut Vec<Verification>,
    ) -> Result<Vec<f64>, RuntimeError> {
        let (gpu, p, kernel, streams, used, many) = (
            self.gpu,
            self.p,
            self.kernel,
            self.streams,
            self.used,
            self.many,
        );
        b.poison(gpu, &streams[0])?;
        let mut samples = Vec::with_capacity(p.sampling.repeats);
        for _ in 0..p.sampling.repeats {
            many.begin(used)?;
            for _ in 0..iterations {
                issue_iteration(variant, used, parts, |kind, s, part| {
                    b.op(&kernel, THREADS, kind, &used[s], part)
                })?;
            }
            samples.push(many.end(used)? / iterations as f64);
        }
        gpu.synchronize()?;
        checks.push(b.expected.check(
            &format!(
                "2^{} floats, {} over {} streams",
                n.ilog2(),
                variant.label(),
                p.streams
            ),
            &b.host_b.as_slice()?[..n],
        ));
        Ok(samples)
    }

    /// The stages of `parts` (`bytes` each way) timed alone, `iterations` passes per
    /// sample, the kernels too where `kernels` says.
    fn stages(
        &self,
        parts: &[Range<usize>],
        kernels: bool,
        (bytes, iterations): (u64, usize),
        b: &mut Buffers,
    ) -> Result<StageTimes, RuntimeError> {
        StageSampler::measure(
            self.gpu,
            self.streams,
            parts,
            bytes,
            (self.p.sampling.repeats, iterations),
            kernels,
            |kind, stream, part| b.op(&self.kernel, THREADS, kind, stream, part),
        )
        .map(StageSampler::finish)
    }
}
