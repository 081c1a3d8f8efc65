//! graph-overlap: sincos-overlap's two asynchronous orders issued on streams, against
//! the same work captured once as a CUDA graph and replayed. For each order and chunk
//! count (one stream per chunk), every sample runs `--iterations` iterations back to
//! back; the graph holds those iterations, with the same dependencies the streams have,
//! so one iteration's copies out overlap the next one's copies in either way (launches
//! of one graph run one after another, so a graph of one iteration would pay the
//! pipeline's fill and drain every iteration). GPU time per iteration comes from events;
//! host time per iteration from the wall clock around the issuing alone (what the CPU
//! spends, as NVIDIA's asyncAPI sample asks). Every output is checked against an f64 CPU
//! reference; the bound comes from each chunk count's stages timed alone.
use std::ops::Range;
use std::time::Instant;

use streamlab_results::experiments::graph_overlap::{
    GraphOverlap, GraphOverlapResult, GraphPoint, Issue, Params,
};
use streamlab_results::saved::Params as _;
use streamlab_results::saved::{IssueOrder, StageTimes};

use super::{Context, Run, RunError};
use crate::measure::{StageSampler, issue_iteration, series};
use crate::runtime::graph::Graph;
use crate::runtime::{Gpu, Region, RuntimeError, Stream};
use crate::sincos::{Buffers, SincosFn, THREADS};
use streamlab_results::spread::chunks;

impl Run for GraphOverlap {
    const SUMMARY: &'static str = "sincos-overlap issued as CUDA graphs against issued on streams";
    const ABOUT: &'static str = "sincos-overlap's asynchronous orders captured once as CUDA graphs and \
        replayed, against issuing on streams: GPU time and host time per iteration";

    fn run(ctx: &Context, p: &Params) -> Result<GraphOverlapResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let n = p.elements;
        let mut b = Buffers::new(gpu, ctx.kernels, ctx.form, n)?;
        let most = p.chunks.iter().copied().max().unwrap_or(1);
        let streams = gpu.streams(most.max(2))?;
        let kernel = ctx.kernels.sincos_in(ctx.form);
        let mut task = crate::progress::Task::start(
            "graph-overlap",
            ((1 + 2 * IssueOrder::ASYNC.len()) * p.chunks.len()) as u64,
        );
        let stages = stage_times(gpu, p, &streams, &mut b, kernel, &mut task)?;
        let one = Region::new(gpu, 1)?;
        let mut points = Vec::new();
        let mut checks = Vec::new();
        'measure: for variant in IssueOrder::ASYNC {
            for &c in &p.chunks {
                let used = &streams[..c];
                let parts = chunks(n, c);
                let region = Region::new(gpu, c)?;
                let iterations = Iterations {
                    variant,
                    used,
                    parts: &parts,
                    kernel,
                    count: p.iterations,
                };
                let graph = Graph::capture(gpu, used, || iterations.issue(&mut b))?;
                for issue in [Issue::Streams, Issue::Graph] {
                    if ctx.stopping() {
                        break 'measure;
                    }
                    b.poison(gpu, &streams[0])?;
                    // One sample: `--iterations` iterations, on streams or as one replay.
                    let run = |b: &mut Buffers| match issue {
                        Issue::Streams => iterations.on_streams(&region, b),
                        // SAFETY: the graph copies and computes on `b`'s buffers, which
                        // outlive it; nothing reads or writes them on the host until
                        // `gpu.synchronize()` below.
                        Issue::Graph => unsafe { replay(&graph, used, &one) },
                    };
                    let (gpu_ms, host_ms) = samples(p, &mut b, run)?;
                    gpu.synchronize()?;
                    checks.push(b.expected.check(
                        &format!("{}, {c} chunks, {}", variant.label(), issue.label()),
                        b.host_b.as_slice()?,
                    ));
                    points.push(GraphPoint {
                        variant,
                        chunks: c,
                        issue,
                        gpu: series(gpu_ms),
                        host: series(host_ms),
                    });
                    task.step(&format!("{} ×{c}, {}", variant.label(), issue.label()));
                }
            }
        }
        task.finish();
        Ok(GraphOverlapResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), !ctx.stopping()),
            stages,
            points,
        })
    }
}

/// Each chunk count's stages timed alone, for the bound.
fn stage_times(
    gpu: &Gpu,
    p: &Params,
    streams: &[Stream],
    b: &mut Buffers,
    kernel: SincosFn,
    task: &mut crate::progress::Task,
) -> Result<Vec<StageTimes>, RuntimeError> {
    let n = p.elements;
    let mut stages = Vec::new();
    for &c in &p.chunks {
        stages.push(
            StageSampler::measure(
                gpu,
                streams,
                &chunks(n, c),
                (n * size_of::<f32>()) as u64,
                (p.sampling.repeats, p.iterations.min(10)),
                true,
                |kind, stream, part| b.op(&kernel, THREADS, kind, stream, part),
            )?
            .finish(),
        );
        task.step(&format!("stages over {c} chunks"));
    }
    Ok(stages)
}

/// The iterations of one sample: an order over `used`, chunk `s` on stream `s`.
struct Iterations<'a> {
    variant: IssueOrder,
    used: &'a [Stream<'a>],
    parts: &'a [Range<usize>],
    kernel: SincosFn,
    count: usize,
}

impl Iterations<'_> {
    /// Issue them, back to back.
    fn issue(&self, b: &mut Buffers) -> Result<(), RuntimeError> {
        for _ in 0..self.count {
            issue_iteration(self.variant, self.used, self.parts, |kind, s, part| {
                b.op(&self.kernel, THREADS, kind, &self.used[s], part)
            })?;
        }
        Ok(())
    }

    /// Issue them on the streams, timed by `region`: GPU and host milliseconds.
    fn on_streams(&self, region: &Region, b: &mut Buffers) -> Result<(f64, f64), RuntimeError> {
        region.begin(self.used)?;
        let started = Instant::now();
        self.issue(b)?;
        let host = started.elapsed().as_secs_f64() * 1e3;
        region.mark_end(self.used)?;
        Ok((region.elapsed_ms()?, host))
    }
}

/// One replay of `graph` on the first of `used`, timed by `one`: GPU and host
/// milliseconds.
///
/// # Safety
/// As [`Graph::launch`]: the graph's buffers live and stay untouched on the host until
/// the GPU is waited for.
unsafe fn replay(graph: &Graph, used: &[Stream], one: &Region) -> Result<(f64, f64), RuntimeError> {
    one.begin(&used[..1])?;
    let started = Instant::now();
    // SAFETY: passed on to the caller.
    unsafe { graph.launch(&used[0]) }?;
    let host = started.elapsed().as_secs_f64() * 1e3;
    one.mark_end(&used[..1])?;
    Ok((one.elapsed_ms()?, host))
}

/// `--warmup` untimed samples of `run` (at least one), then `--repeats` timed: GPU and
/// host milliseconds per iteration.
fn samples(
    p: &Params,
    b: &mut Buffers,
    mut run: impl FnMut(&mut Buffers) -> Result<(f64, f64), RuntimeError>,
) -> Result<(Vec<f64>, Vec<f64>), RuntimeError> {
    for _ in 0..p.warmup.max(1) {
        run(b)?;
    }
    let (mut gpu_ms, mut host_ms) = (Vec::new(), Vec::new());
    for _ in 0..p.sampling.repeats {
        let (g, h) = run(b)?;
        gpu_ms.push(g / p.iterations as f64);
        host_ms.push(h / p.iterations as f64);
    }
    Ok((gpu_ms, host_ms))
}
