//! memcpy-kernel: is overlapping copies with a kernel worth it? After the CUDA Handbook,
//! section 6.5 (`concurrencyMemcpyKernel.cu`).
//!
//! `AddKernel` runs longer the more `cycles` it is given. For each cycles value and each
//! stream count, the sequential version (the whole array copied in, the kernel, copied
//! out, an event between each step: the table's HtoD, Kernel, DtoH and Total) and the
//! streamed version (the array split over the streams, issued as the Handbook's three
//! loops: every copy in, every kernel, every copy out) alternate, A B A B …, so that a
//! disturbance of the machine hits both; the last run of each is checked element by
//! element. The streamed version is issued behind a closed gate ([`Gate`]) and timed
//! from the gate's opening, so its time is the GPU's, as its bound and its trace are,
//! not how fast the host issued its many operations. For the bound, each row then times the streamed version's kernels alone and
//! its chunks copied both ways at once, after the run first timed each stream count's
//! chunks copied in alone, out alone and both ways at once.
//!
//! Departures from the original, on purpose: every stream count of a range gets its own
//! rows (the original prints only the first), chunks always cover the array, and the
//! cycles range is extended until the kernel takes longer than the copies, so the
//! breakeven point is always in the table.
use std::ops::Range;

use kernels_rs::add_kernel;
use nvptx_kernel::Kernel;
use streamlab_results::derived::rates::{best_rates, for_chunks};
use streamlab_results::experiments::memcpy_kernel::{
    MemcpyKernel, MemcpyKernelResult, MemcpyKernelRow, Params,
};
use streamlab_results::saved::timeline::{OpKind, Timeline, TraceReference};
use streamlab_results::saved::{Params as _, StageTimes, Verification};

use super::{Context, Run, RunError};
use crate::measure::{StageSampler, series};
use crate::runtime::gate::Gate;
use crate::runtime::{
    DeviceBuffer, Event, Function, Gpu, PinnedBuffer, Region, RuntimeError, Shape, Stream,
};
use crate::trace;
use streamlab_results::spread::chunks;

/// Samples of each copy stage for the bound, and passes over the array per sample.
const STAGE_SAMPLING: (usize, usize) = (3, 2);

/// Cycles values tried past the end of the range while looking for the breakeven point.
const MAX_EXTENSION_STEPS: usize = 256;

/// The arrays of one run.
struct Buffers {
    host_in: PinnedBuffer<i32>,
    host_out: PinnedBuffer<i32>,
    dev_in: DeviceBuffer<i32>,
    dev_out: DeviceBuffer<i32>,
}

impl Buffers {
    /// The arrays of `n` ints: the input drawn at random, the output filled with -1.
    fn new(gpu: &Gpu, n: usize) -> Result<Buffers, RuntimeError> {
        let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
        let mut host_in = gpu.pinned(n, 0i32)?;
        rng.fill_any_i32(host_in.as_mut_slice()?);
        Ok(Buffers {
            host_in,
            host_out: gpu.pinned(n, -1i32)?,
            dev_in: gpu.alloc(n)?,
            dev_out: gpu.alloc(n)?,
        })
    }
}

type AddFn = Function<<add_kernel as Kernel>::Args>;

/// The launches of one run.
struct Launcher<'a> {
    gpu: &'a Gpu,
    kernel: AddFn,
    shape: Shape,
    add_value: i32,
}

impl Launcher<'_> {
    fn launch(
        &self,
        stream: &Stream,
        part: Range<usize>,
        b: &mut Buffers,
        cycles: i32,
    ) -> Result<(), RuntimeError> {
        stream.launch(
            &self.kernel,
            self.shape,
            (
                b.dev_out.slice_mut(part.clone()),
                b.dev_in.slice(part),
                self.add_value,
                cycles,
            ),
        )
    }

    /// One sequential run: HtoD, kernel, DtoH on one stream, an event between each
    /// step; returns the four times.
    fn sequential(
        &self,
        stream: &Stream,
        events: &[Event; 4],
        b: &mut Buffers,
        cycles: i32,
    ) -> Result<[f64; 4], RuntimeError> {
        let n = b.host_in.len();
        stream.record(&events[0])?;
        stream.htod(&mut b.dev_in, 0, &b.host_in, 0..n)?;
        stream.record(&events[1])?;
        self.launch(stream, 0..n, b, cycles)?;
        stream.record(&events[2])?;
        stream.dtoh(&mut b.host_out, 0, &b.dev_out, 0..n)?;
        stream.record(&events[3])?;
        Ok([
            events[0].elapsed_ms(&events[1])?,
            events[1].elapsed_ms(&events[2])?,
            events[2].elapsed_ms(&events[3])?,
            events[0].elapsed_ms(&events[3])?,
        ])
    }

    /// One copy in or out of `part` on `stream`.
    fn copy(
        &self,
        kind: OpKind,
        stream: &Stream,
        part: &Range<usize>,
        b: &mut Buffers,
    ) -> Result<(), RuntimeError> {
        match kind {
            OpKind::HtoD => stream.htod(&mut b.dev_in, part.start, &b.host_in, part.clone()),
            OpKind::DtoH => stream.dtoh(&mut b.host_out, part.start, &b.dev_out, part.clone()),
            _ => Ok(()),
        }
    }

    /// The Handbook's three loops: every copy in, every kernel, every copy out.
    fn streamed(
        &self,
        streams: &[Stream],
        parts: &[Range<usize>],
        b: &mut Buffers,
        cycles: i32,
    ) -> Result<(), RuntimeError> {
        for (stream, part) in streams.iter().zip(parts) {
            stream.htod(&mut b.dev_in, part.start, &b.host_in, part.clone())?;
        }
        for (stream, part) in streams.iter().zip(parts) {
            self.launch(stream, part.clone(), b, cycles)?;
        }
        for (stream, part) in streams.iter().zip(parts) {
            stream.dtoh(&mut b.host_out, part.start, &b.dev_out, part.clone())?;
        }
        Ok(())
    }

    /// Poison the output on the device and the host before a checked run.
    fn poison(&self, stream: &Stream, b: &mut Buffers) -> Result<(), RuntimeError> {
        stream.poison(&mut b.dev_out)?;
        crate::parallel::for_each_chunk_mut(b.host_out.as_mut_slice()?, |_, c| c.fill(-1));
        self.gpu.synchronize()
    }
}

impl Run for MemcpyKernel {
    const SUMMARY: &'static str =
        "The CUDA Handbook's copy/kernel concurrency over a sweep of kernel cycles";
    const ABOUT: &'static str = "The CUDA Handbook's AddKernel shmoo: sequential HtoD, kernel, DtoH and total \
        against the streamed version (all copies in, all kernels, all copies out) for \
        each cycles value, alternating, with speedup and the reachable bound (copies \
        both ways at the measured rate, fill and drain). The cycles range is extended \
        until the kernel outlasts the copies";

    fn run(ctx: &Context, p: &Params) -> Result<MemcpyKernelResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let n = p.elements();
        gpu.ensure_fits(2 * p.bytes())?;
        let mut b = Buffers::new(gpu, n)?;
        let counts = p.stream_counts();
        let streams = gpu.streams(counts.iter().copied().max().unwrap_or(1).max(2))?;
        let events: [Event; 4] = [gpu.event()?, gpu.event()?, gpu.event()?, gpu.event()?];
        let launcher = Launcher {
            gpu,
            kernel: ctx.kernels.add_kernel_in(ctx.form),
            shape: Shape::linear(
                gpu.info().sm_count.max(1) as u32 * p.blocks_per_sm,
                p.threads,
            ),
            add_value: p.add_value,
        };
        let planned = p.cycles.values(p.cycles_step).count() * counts.len();
        let mut task =
            crate::progress::Task::start("memcpy-kernel", (planned + counts.len()) as u64);
        let mut samplers = copy_samplers(&launcher, &streams, &counts, p, &mut b, &mut task)?;
        let regions = (counts.iter())
            .map(|&used| Region::new(gpu, used))
            .collect::<Result<Vec<_>, _>>()?;
        let mut gate = Gate::new(gpu)?;
        let mut checks: Vec<Verification> = Vec::new();
        let mut sweep = Sweep {
            params: p,
            launcher: &launcher,
            streams: &streams,
            events: &events,
            gate: &mut gate,
            b: &mut b,
        };
        let (rows, breakeven) = sweep.rows(
            ctx,
            (&counts, &regions),
            &mut samplers,
            &mut task,
            &mut checks,
        )?;
        let copies: Vec<_> = samplers.into_iter().map(StageSampler::finish).collect();
        let complete = !ctx.stopping();
        let timeline = match (complete, rows.first()) {
            (true, Some(first)) => {
                let cycles = breakeven.unwrap_or(first.cycles);
                let used = counts[0];
                let reference = trace_reference(&rows, &copies, cycles, used);
                Some(trace(
                    &launcher,
                    &streams[..used],
                    &mut b,
                    cycles,
                    reference,
                )?)
            }
            _ => None,
        };
        task.finish();
        Ok(MemcpyKernelResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), complete),
            copies,
            rows,
            timeline,
        })
    }
}

/// Each stream count's chunks copied in alone, out alone and both ways at once, the
/// first samples for the bound.
fn copy_samplers(
    launcher: &Launcher,
    streams: &[Stream],
    counts: &[usize],
    p: &Params,
    b: &mut Buffers,
    task: &mut crate::progress::Task,
) -> Result<Vec<StageSampler>, RuntimeError> {
    let (gpu, n) = (launcher.gpu, p.elements());
    let mut samplers = Vec::new();
    for &used in counts {
        samplers.push(StageSampler::measure(
            gpu,
            streams,
            &chunks(n, used),
            p.bytes(),
            STAGE_SAMPLING,
            false,
            |kind, stream, part| launcher.copy(kind, stream, part, b),
        )?);
        task.step(&format!("copy stages over {used} chunks"));
    }
    Ok(samplers)
}

/// The cycles sweep: the run's launches on its streams, its events, gate and arrays.
struct Sweep<'a> {
    params: &'a Params,
    launcher: &'a Launcher<'a>,
    streams: &'a [Stream<'a>],
    events: &'a [Event; 4],
    gate: &'a mut Gate,
    b: &'a mut Buffers,
}

impl Sweep<'_> {
    /// Every row, cycles value by cycles value until a stop is asked, the range extended
    /// until the kernel outlasts the copies: the rows and the breakeven cycles.
    fn rows(
        &mut self,
        ctx: &Context,
        (counts, regions): (&[usize], &[Region]),
        samplers: &mut [StageSampler],
        task: &mut crate::progress::Task,
        checks: &mut Vec<Verification>,
    ) -> Result<(Vec<MemcpyKernelRow>, Option<i32>), RuntimeError> {
        let p = self.params;
        let mut rows = Vec::new();
        let mut values = p.cycles.values(p.cycles_step);
        let mut next = values.next();
        let mut extension = 0;
        let mut breakeven = None;
        while let Some(cycles) = next {
            if ctx.stopping() {
                break;
            }
            let c32 = cycles as i32;
            for ((&used, region), sampler) in counts.iter().zip(regions).zip(&mut *samplers) {
                rows.push(self.row((used, region, sampler), cycles, checks)?);
                task.step(&format!("{used} streams, cycles {cycles}"));
            }
            // The first stream count's row, whose crossing is the breakeven.
            let first: &MemcpyKernelRow = &rows[rows.len() - counts.len()];
            if first.outlasts_the_copies() && breakeven.is_none() {
                breakeven = Some(c32);
            }
            next = match values.next() {
                Some(value) => Some(value),
                None if breakeven.is_none() && extension < MAX_EXTENSION_STEPS => {
                    extension += 1;
                    Some(cycles + p.cycles_step)
                }
                None => None,
            };
        }
        Ok((rows, breakeven))
    }

    /// The row of `used` streams at `cycles`: both versions alternating, then the
    /// streamed version's kernels alone and one more round of its chunks' copy stages.
    fn row(
        &mut self,
        (used, region, sampler): (usize, &Region, &mut StageSampler),
        cycles: i64,
        checks: &mut Vec<Verification>,
    ) -> Result<MemcpyKernelRow, RuntimeError> {
        let (launcher, streams) = (self.launcher, self.streams);
        let gpu = launcher.gpu;
        let c32 = cycles as i32;
        let parts = chunks(self.params.elements(), used);
        let (sequential, concurrent) = self.alternate((used, region), &parts, cycles, checks)?;
        region.begin(&streams[..used])?;
        for (stream, part) in streams[..used].iter().zip(&parts) {
            launcher.launch(stream, part.clone(), self.b, c32)?;
        }
        let kernels = vec![region.end(&streams[..used])?];
        sampler.sample_round(gpu, streams, &parts, 1, |kind, stream, part| {
            launcher.copy(kind, stream, part, self.b)
        })?;
        let [htod, kernel, dtoh, total] = sequential.map(series);
        Ok(MemcpyKernelRow {
            cycles: c32,
            streams: used,
            htod,
            kernel,
            dtoh,
            total,
            concurrent: series(concurrent),
            kernels: series(kernels),
        })
    }

    /// `--repeats` runs of the sequential version and of the streamed one (behind the
    /// gate), alternating, the last of each on poisoned outputs and checked: the
    /// sequential version's four times per run and the streamed version's time.
    fn alternate(
        &mut self,
        (used, region): (usize, &Region),
        parts: &[Range<usize>],
        cycles: i64,
        checks: &mut Vec<Verification>,
    ) -> Result<([Vec<f64>; 4], Vec<f64>), RuntimeError> {
        let (p, launcher, streams, events) =
            (self.params, self.launcher, self.streams, self.events);
        let gpu = launcher.gpu;
        let c32 = cycles as i32;
        let mut sequential = [vec![], vec![], vec![], vec![]];
        let mut concurrent = Vec::with_capacity(p.sampling.repeats);
        for repeat in 0..p.sampling.repeats {
            let checked = repeat + 1 == p.sampling.repeats;
            if checked {
                launcher.poison(&streams[0], self.b)?;
            }
            let times = launcher.sequential(&streams[0], events, self.b, c32)?;
            for (samples, t) in sequential.iter_mut().zip(times) {
                samples.push(t);
            }
            if checked {
                checks.push(check_output(
                    self.b,
                    p.add_value,
                    c32,
                    &format!("sequential, cycles {cycles}"),
                )?);
                launcher.poison(&streams[0], self.b)?;
            }
            self.gate.close();
            self.gate.hold(&streams[0])?;
            region.begin(&streams[..used])?;
            launcher.streamed(&streams[..used], parts, self.b, c32)?;
            region.mark_end(&streams[..used])?;
            self.gate.open();
            concurrent.push(region.elapsed_ms()?);
            if checked {
                gpu.synchronize()?;
                checks.push(check_output(
                    self.b,
                    p.add_value,
                    c32,
                    &format!("{used} streams, cycles {cycles}"),
                )?);
            }
        }
        Ok((sequential, concurrent))
    }
}

/// What the trace of `used` streams at `cycles` is checked against: the fastest
/// streamed run timed there, and the copy rates over its chunks.
fn trace_reference(
    rows: &[MemcpyKernelRow],
    copies: &[StageTimes],
    cycles: i32,
    used: usize,
) -> TraceReference {
    let timed_ms = (rows.iter())
        .find(|r| r.cycles == cycles && r.streams == used)
        .map_or(f64::NAN, |r| r.concurrent.min());
    TraceReference {
        timed_ms,
        back_to_back: false,
        median_ms: None,
        rates: for_chunks(copies, used).map(best_rates),
    }
}

/// One streamed run, traced.
fn trace(
    launcher: &Launcher,
    streams: &[Stream],
    b: &mut Buffers,
    cycles: i32,
    reference: TraceReference,
) -> Result<Timeline, RuntimeError> {
    let parts = chunks(b.host_in.len(), streams.len());
    let title = format!(
        "memcpy-kernel streamed, {} streams, cycles {cycles}",
        streams.len()
    );
    trace::record(launcher.gpu, streams, &title, reference, |rec| {
        for kind in [OpKind::HtoD, OpKind::Kernel, OpKind::DtoH] {
            for (s, part) in parts.iter().enumerate() {
                let bytes =
                    (kind != OpKind::Kernel).then_some((part.len() * size_of::<i32>()) as u64);
                rec.op(s, 0, kind, bytes, |stream| match kind {
                    OpKind::Kernel => launcher.launch(stream, part.clone(), b, cycles),
                    copy => launcher.copy(copy, stream, part, b),
                })?;
            }
        }
        Ok(())
    })
}

/// Check every output element: `out[i] == in[i] + add_value·cycles` with wrap-around.
fn check_output(
    b: &Buffers,
    add_value: i32,
    cycles: i32,
    what: &str,
) -> Result<Verification, RuntimeError> {
    let (input, output) = (b.host_in.as_slice()?, b.host_out.as_slice()?);
    Ok(crate::add_kernel::check(
        input,
        output,
        (add_value, cycles),
        what,
    ))
}
