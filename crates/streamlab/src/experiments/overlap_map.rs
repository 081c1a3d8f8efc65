//! overlap-map: when do streams pay off? The sincos workload over array sizes × stream
//! counts: for each size, copy in, kernel, copy out on one stream, against the two
//! asynchronous orders over each stream count, iterations back to back. Small arrays get
//! more iterations per sample and large ones fewer (about `--sample-ms` each). The run
//! also measures what the model is built from: the fixed cost of a launch and of a tiny
//! copy each way, the copy rates over the largest array, and the kernel alone at each
//! size. Every configuration's output is checked bit for bit by the sincos check.
use std::ops::Range;

use streamlab_results::experiments::overlap_map::{
    MapCell, MapSize, Overheads, OverlapMap, OverlapMapResult, Params,
};
use streamlab_results::saved::IssueOrder;
use streamlab_results::saved::Params as _;
use streamlab_results::saved::Verification;
use streamlab_results::saved::timeline::OpKind;
use streamlab_results::stats::Series;

use super::{Context, Run, RunError};
use crate::measure::{StageSampler, issue_iteration, series};
use crate::runtime::{Gpu, Region, RuntimeError, Shape, Stream};
use crate::sincos::{Buffers, SincosFn, THREADS};
use streamlab_results::spread::chunks;

/// Back-to-back operations per sample of a fixed cost.
const FIXED_COST_OPS: usize = 1000;
/// Samples of the largest array's copy stages, and passes per sample.
const STAGE_SAMPLING: (usize, usize) = (5, 2);

impl Run for OverlapMap {
    const SUMMARY: &'static str =
        "Where streams pay off over array sizes × stream counts, against a model";
    const ABOUT: &'static str = "The sincos workload over array sizes × stream counts: where streams pay off, \
        measured and predicted by a model built from measured costs";

    fn run(ctx: &Context, p: &Params) -> Result<OverlapMapResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let sizes: Vec<usize> = (p.sweep.exponents().into_iter()).map(|e| 1 << e).collect();
        let largest = sizes.last().copied().unwrap_or(1);
        let mut b = Buffers::new(gpu, ctx.kernels, ctx.form, largest)?;
        let most = p.stream_counts.iter().copied().max().unwrap_or(1);
        let streams = gpu.streams(most.max(2))?;
        let timing = Timing {
            gpu,
            kernel: ctx.kernels.sincos_in(ctx.form),
            repeats: p.sampling.repeats,
        };
        let mut task = crate::progress::Task::start("overlap-map", sizes.len() as u64 + 2);
        let overheads = timing.overheads(&streams, &mut b)?;
        let copies = StageSampler::measure(
            gpu,
            &streams,
            &chunks(largest, 1),
            (largest * size_of::<f32>()) as u64,
            STAGE_SAMPLING,
            false,
            |kind, stream, part| b.op(&timing.kernel, THREADS, kind, stream, part),
        )?
        .finish();
        task.step("fixed costs and copy rates");
        let mut measured = Vec::new();
        let mut checks = Vec::new();
        for &n in &sizes {
            if ctx.stopping() {
                break;
            }
            measured.push(timing.size(p, &streams, n, &mut b, &mut checks)?);
            task.step(&format!("2^{} floats", n.ilog2()));
        }
        task.finish();
        Ok(OverlapMapResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), !ctx.stopping()),
            overheads,
            copies,
            sizes: measured,
        })
    }
}

/// How the map's samples are timed.
struct Timing<'a> {
    gpu: &'a Gpu,
    kernel: SincosFn,
    repeats: usize,
}

impl Timing<'_> {
    /// The map's row of `n` elements: one stream, the kernel alone, and both
    /// asynchronous orders over every stream count, each output checked.
    fn size(
        &self,
        p: &Params,
        streams: &[Stream],
        n: usize,
        b: &mut Buffers,
        checks: &mut Vec<Verification>,
    ) -> Result<MapSize, RuntimeError> {
        let whole = chunks(n, 1);
        let one_stream = |b: &mut Buffers| {
            issue_iteration(
                IssueOrder::Async1,
                &streams[..1],
                &whole,
                |kind, _, part| b.op(&self.kernel, THREADS, kind, &streams[0], part),
            )
        };
        let iterations = self.iterations_for(p.sample_ms, &streams[..1], b, one_stream)?;
        let sequential = self.samples(&streams[..1], iterations, b, one_stream)?;
        checks.push(b.expected.check(
            &format!("2^{} floats, one stream", n.ilog2()),
            &b.host_b.as_slice()?[..n],
        ));
        let kernel_alone = self.samples(&streams[..1], iterations, b, |b| {
            b.op(&self.kernel, THREADS, OpKind::Kernel, &streams[0], &(0..n))
        })?;
        let cells = self.cells(&p.stream_counts, streams, (n, iterations), b, checks)?;
        Ok(MapSize {
            elements: n,
            iterations,
            sequential,
            kernel_alone,
            cells,
        })
    }

    /// Both asynchronous orders over `n` elements on each of `stream_counts` streams,
    /// `iterations` per sample, each output checked.
    fn cells(
        &self,
        stream_counts: &[usize],
        streams: &[Stream],
        (n, iterations): (usize, usize),
        b: &mut Buffers,
        checks: &mut Vec<Verification>,
    ) -> Result<Vec<MapCell>, RuntimeError> {
        let mut cells = Vec::new();
        for &s in stream_counts {
            let used = &streams[..s];
            let parts = chunks(n, s);
            let mut time = |variant| {
                let t = self.samples(used, iterations, b, |b| {
                    issue_iteration(variant, used, &parts, |kind, k, part| {
                        b.op(&self.kernel, THREADS, kind, &used[k], part)
                    })
                });
                let what = format!(
                    "2^{} floats, {} over {s} streams",
                    n.ilog2(),
                    variant.label()
                );
                checks.push(b.expected.check(&what, &b.host_b.as_slice()?[..n]));
                t
            };
            let async1 = time(IssueOrder::Async1)?;
            let async2 = time(IssueOrder::Async2)?;
            cells.push(MapCell {
                elements: n,
                streams: s,
                iterations,
                async1,
                async2,
            });
        }
        Ok(cells)
    }

    /// `repeats` samples of `iterations` back-to-back iterations of `issue`, as time per
    /// iteration; the output is poisoned first.
    fn samples(
        &self,
        streams: &[Stream],
        iterations: usize,
        b: &mut Buffers,
        mut issue: impl FnMut(&mut Buffers) -> Result<(), RuntimeError>,
    ) -> Result<Series, RuntimeError> {
        b.poison(self.gpu, &streams[0])?;
        let region = Region::new(self.gpu, streams.len())?;
        issue(b)?;
        let mut samples = Vec::with_capacity(self.repeats);
        for _ in 0..self.repeats {
            region.begin(streams)?;
            for _ in 0..iterations {
                issue(b)?;
            }
            samples.push(region.end(streams)? / iterations as f64);
        }
        self.gpu.synchronize()?;
        Ok(series(samples))
    }

    /// Iterations per sample so that one sample takes about `sample_ms` (at least 2).
    fn iterations_for(
        &self,
        sample_ms: f64,
        streams: &[Stream],
        b: &mut Buffers,
        mut issue: impl FnMut(&mut Buffers) -> Result<(), RuntimeError>,
    ) -> Result<usize, RuntimeError> {
        let region = Region::new(self.gpu, streams.len())?;
        issue(b)?;
        region.begin(streams)?;
        for _ in 0..4 {
            issue(b)?;
        }
        let per_iteration = region.end(streams)? / 4.0;
        Ok(((sample_ms / per_iteration).ceil() as usize).clamp(2, 100_000))
    }

    /// The fixed costs of the model: an empty launch and a 4-byte copy each way, each
    /// back to back.
    fn overheads(&self, streams: &[Stream], b: &mut Buffers) -> Result<Overheads, RuntimeError> {
        let s = &streams[..1];
        let empty = self.gpu.kernels().empty;
        let tiny: Range<usize> = 0..1;
        let launch = self.fixed(s, |stream| stream.launch(&empty, Shape::linear(1, 1), ()))?;
        let htod_latency = self.fixed(s, |stream| {
            stream.htod(&mut b.dev_a, 0, &b.host_a, tiny.clone())
        })?;
        let dtoh_latency = self.fixed(s, |stream| {
            stream.dtoh(&mut b.host_b, 0, &b.dev_b, tiny.clone())
        })?;
        Ok(Overheads {
            launch,
            htod_latency,
            dtoh_latency,
        })
    }

    fn fixed(
        &self,
        s: &[Stream],
        mut op: impl FnMut(&Stream) -> Result<(), RuntimeError>,
    ) -> Result<Series, RuntimeError> {
        let region = Region::new(self.gpu, 1)?;
        op(&s[0])?;
        let mut samples = Vec::with_capacity(self.repeats);
        for _ in 0..self.repeats {
            region.begin(s)?;
            for _ in 0..FIXED_COST_OPS {
                op(&s[0])?;
            }
            samples.push(region.end(s)? / FIXED_COST_OPS as f64);
        }
        Ok(series(samples))
    }
}
