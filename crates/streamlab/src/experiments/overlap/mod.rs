//! overlap: "plug your own kernel in", as the CUDA Handbook invites. Any element-wise
//! kernel `name(input: &[T], output: &mut [T], …)` from a PTX file, run as sincos-overlap
//! runs its kernel: sequentially (blocking copy in, the kernel over the whole array, copy
//! out), and split over each stream count in both asynchronous orders, each chunk passed
//! as sub-slices (so the kernel needs no offset). One thread per element, `--threads` per
//! block. The output of every streamed run must equal the sequential run's bit for bit;
//! the sequential output is compared with `--reference` when given.
//!
//! The entry is checked before anything runs: its first four PTX parameters must be the
//! two slices (pointer and length each, 64-bit), and the rest scalars, one `--arg` each,
//! parsed as the PTX declares them.
mod input;

pub use input::Element;
use input::{check_entry, read_array};

use std::ops::Range;

use nvptx_kernel::launch::{Arg, ParamBuffer};
use streamlab_results::experiments::overlap::{
    ElementType, Overlap, OverlapPoint, OverlapResult, OverlapSize, Params,
};
use streamlab_results::saved::IssueOrder;
use streamlab_results::saved::Params as _;
use streamlab_results::saved::Verification;
use streamlab_results::saved::timeline::{OpKind, TraceReference};
use streamlab_results::stats::Series;

use super::{Context, Run, RunError};
use crate::measure::{StageSampler, issue_iteration, series};
use crate::runtime::kernels::{CheckedPtx, DynamicFunction, Module};
use crate::runtime::{DeviceBuffer, PinnedBuffer, Region, RuntimeError, Shape, Stream};
use crate::trace;
use streamlab_results::spread::chunks;

/// Iterations traced back to back.
const TRACED_ITERATIONS: usize = 3;

impl Run for Overlap {
    const SUMMARY: &'static str =
        "Your own element-wise kernel from a PTX file: do streams pay off for it?";
    const ABOUT: &'static str = "Your own element-wise kernel `name(input: &[T], output: &mut [T], …)` from a \
        PTX file, sequential against split over streams: does it pay off, from which \
        size, and how close to the bound";

    const IN_RUN_ALL: bool = false;

    fn run(ctx: &Context, p: &Params) -> Result<OverlapResult, RunError> {
        p.validate()?;
        let text = std::fs::read_to_string(&p.ptx)
            .map_err(|e| RunError::Input(format!("cannot read --ptx {}: {e}", p.ptx.display())))?;
        let (entry, extra) = check_entry(&text, &p.ptx, &p.kernel, &p.args)?;
        let module = Module::load(&CheckedPtx::new(&text, &[])?)?;
        let function = module.dynamic_function(&p.kernel, entry.len())?;
        let user = User {
            ctx,
            p,
            function,
            extra: &extra,
        };
        match p.element {
            ElementType::F32 => user.run::<f32>(entry),
            ElementType::F64 => user.run::<f64>(entry),
            ElementType::I32 => user.run::<i32>(entry),
            ElementType::U32 => user.run::<u32>(entry),
        }
    }
}

/// Map a failure after a launch of the user's kernel to that kernel.
fn blame(name: &str, err: RuntimeError) -> RunError {
    RunError::Runtime(err.blamed_on(name))
}

/// The user's kernel and its arguments.
struct User<'a> {
    ctx: &'a Context<'a>,
    p: &'a Params,
    function: DynamicFunction,
    extra: &'a [Vec<u8>],
}

/// The arrays of one size.
struct Arrays<T> {
    host_in: PinnedBuffer<T>,
    host_out: PinnedBuffer<T>,
    dev_in: DeviceBuffer<T>,
    dev_out: DeviceBuffer<T>,
}

impl<T: Element> Arrays<T> {
    fn op(
        &mut self,
        user: &User,
        kind: OpKind,
        stream: &Stream,
        part: &Range<usize>,
    ) -> Result<(), RuntimeError> {
        match kind {
            OpKind::HtoD => stream.htod(&mut self.dev_in, part.start, &self.host_in, part.clone()),
            OpKind::Kernel => {
                let mut params = ParamBuffer::new();
                Arg::<nvptx_kernel::Slice<T>>::push(&self.dev_in.slice(part.clone()), &mut params);
                Arg::<nvptx_kernel::SliceMut<T>>::push(
                    &self.dev_out.slice_mut(part.clone()),
                    &mut params,
                );
                for bytes in user.extra {
                    params.push_bytes(bytes);
                }
                // SAFETY: the user's entry was checked to take a slice in, a slice out and
                // the scalars given, in that order, and these are live buffers of the
                // lengths passed; that the kernel stays within them is the user's word
                // (`--help` says so), which no check here can give.
                unsafe {
                    stream.launch_dynamic(
                        &user.function,
                        Shape::cover(part.len(), user.p.threads),
                        params,
                    )
                }
            }
            OpKind::DtoH => {
                stream.dtoh(&mut self.host_out, part.start, &self.dev_out, part.clone())
            }
            other => unreachable!("{} is not a stage of the pipeline", other.label()),
        }
    }
}

impl User<'_> {
    fn run<T: Element>(&self, entry: Vec<String>) -> Result<OverlapResult, RunError> {
        let (gpu, p) = (self.ctx.gpu, self.p);
        let input = p
            .input
            .as_deref()
            .map(|f| read_array::<T>(f, p.elements))
            .transpose()?;
        let reference = p
            .reference
            .as_deref()
            .map(|f| read_array::<T>(f, p.elements))
            .transpose()?;
        let sizes = p.sizes();
        let most = p.stream_counts.iter().copied().max().unwrap_or(1);
        let streams = gpu.streams(most.max(2))?;
        let mut task = crate::progress::Task::start("overlap", sizes.len() as u64 + 1);
        let mut measured = Vec::new();
        let mut checks = Vec::new();
        let mut traced = None;
        for &n in &sizes {
            if self.ctx.stopping() {
                break;
            }
            gpu.ensure_fits((2 * n * size_of::<T>()) as u64)?;
            let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
            let mut a = Arrays {
                host_in: gpu.pinned(n, T::poison())?,
                host_out: gpu.pinned(n, T::poison())?,
                dev_in: gpu.alloc(n)?,
                dev_out: gpu.alloc(n)?,
            };
            match (&input, n == p.elements) {
                (Some(values), true) => a.host_in.as_mut_slice()?.copy_from_slice(values),
                _ => a
                    .host_in
                    .as_mut_slice()?
                    .iter_mut()
                    .for_each(|x| *x = T::random(&mut rng)),
            }
            let (size, sequential_out) = self
                .size(&streams, &mut a, n, &mut checks)
                .map_err(|e| blame(&p.kernel, e))?;
            if let (Some(want), true) = (&reference, n == p.elements) {
                checks.push(crate::verify::compare(
                    "sequential output against --reference",
                    &sequential_out,
                    |i| want[i].into(),
                    p.tolerance,
                ));
            }
            if n == p.elements && !self.ctx.stopping() {
                let best =
                    (size.points.iter()).min_by(|x, y| x.time.median().total_cmp(&y.time.median()));
                if let Some(best) = best {
                    let reference = TraceReference {
                        timed_ms: best.time.min(),
                        back_to_back: true,
                        median_ms: None,
                        rates: streamlab_results::derived::rates::for_chunks(
                            &size.stages,
                            best.streams,
                        )
                        .map(streamlab_results::derived::rates::best_rates),
                    };
                    traced = Some(
                        self.trace(&streams[..best.streams], best.variant, &mut a, reference)
                            .map_err(|e| blame(&p.kernel, e))?,
                    );
                }
            }
            measured.push(size);
            task.step(&format!("{n} elements"));
        }
        task.finish();
        Ok(OverlapResult {
            run: self.ctx.record(
                p.clone(),
                crate::verify::combine(checks),
                !self.ctx.stopping(),
            ),
            entry,
            sizes: measured,
            timeline: traced,
        })
    }

    /// Every configuration at one size; returns it and the sequential output.
    fn size<T: Element>(
        &self,
        streams: &[Stream],
        a: &mut Arrays<T>,
        n: usize,
        checks: &mut Vec<Verification>,
    ) -> Result<(OverlapSize, Vec<T>), RuntimeError> {
        let whole = chunks(n, 1);
        let sequential_issue = |a: &mut Arrays<T>| {
            issue_iteration(
                IssueOrder::Sequential,
                &streams[..1],
                &whole,
                |kind, _, part| a.op(self, kind, &streams[0], part),
            )
        };
        let iterations = self.iterations(&streams[..1], a, sequential_issue)?;
        let sequential = self.samples(&streams[..1], iterations, a, sequential_issue)?;
        let sequential_out = a.host_out.as_slice()?.to_vec();
        let bytes = (n * size_of::<T>()) as u64;
        let mut stages = Vec::new();
        for s in std::iter::once(1).chain(self.p.stream_counts.iter().copied()) {
            if stages
                .iter()
                .any(|t: &streamlab_results::saved::StageTimes| t.chunks == s)
            {
                continue;
            }
            stages.push(
                StageSampler::measure(
                    self.ctx.gpu,
                    streams,
                    &chunks(n, s),
                    bytes,
                    (self.p.sampling.repeats, iterations),
                    true,
                    |kind, stream, part| a.op(self, kind, stream, part),
                )?
                .finish(),
            );
        }
        let mut points = Vec::new();
        for &s in &self.p.stream_counts {
            let used = &streams[..s];
            let parts = chunks(n, s);
            for variant in IssueOrder::ASYNC {
                let time = self.samples(used, iterations, a, |a| {
                    issue_iteration(variant, used, &parts, |kind, k, part| {
                        a.op(self, kind, &used[k], part)
                    })
                })?;
                let chunk = |i: usize| {
                    let k = parts.iter().position(|r| r.contains(&i)).unwrap_or(0);
                    format!("stream {} of {s}", k + 1)
                };
                checks.push(crate::verify::identical(
                    &format!(
                        "{n} elements, {} over {s} streams, against sequential",
                        variant.label()
                    ),
                    a.host_out.as_slice()?,
                    &sequential_out,
                    chunk,
                ));
                points.push(OverlapPoint {
                    variant,
                    streams: s,
                    time,
                });
            }
        }
        Ok((
            OverlapSize {
                elements: n,
                iterations,
                sequential,
                stages,
                points,
            },
            sequential_out,
        ))
    }

    /// Iterations per sample so that one sample takes about `--sample-ms` (at least 2).
    fn iterations<T: Element>(
        &self,
        streams: &[Stream],
        a: &mut Arrays<T>,
        mut issue: impl FnMut(&mut Arrays<T>) -> Result<(), RuntimeError>,
    ) -> Result<usize, RuntimeError> {
        let region = Region::new(self.ctx.gpu, streams.len())?;
        issue(a)?;
        region.begin(streams)?;
        for _ in 0..4 {
            issue(a)?;
        }
        let per_iteration = region.end(streams)? / 4.0;
        Ok(((self.p.sample_ms / per_iteration).ceil() as usize).clamp(2, 100_000))
    }

    /// `--repeats` samples of `iterations` back-to-back iterations, the output poisoned
    /// first.
    fn samples<T: Element>(
        &self,
        streams: &[Stream],
        iterations: usize,
        a: &mut Arrays<T>,
        mut issue: impl FnMut(&mut Arrays<T>) -> Result<(), RuntimeError>,
    ) -> Result<Series, RuntimeError> {
        let gpu = self.ctx.gpu;
        streams[0].poison(&mut a.dev_out)?;
        a.host_out.as_mut_slice()?.fill(T::poison());
        gpu.synchronize()?;
        let region = Region::new(gpu, streams.len())?;
        let mut samples = Vec::with_capacity(self.p.sampling.repeats);
        for _ in 0..self.p.sampling.repeats {
            region.begin(streams)?;
            for _ in 0..iterations {
                issue(a)?;
            }
            samples.push(region.end(streams)? / iterations as f64);
        }
        gpu.synchronize()?;
        Ok(series(samples))
    }

    fn trace<T: Element>(
        &self,
        streams: &[Stream],
        variant: IssueOrder,
        a: &mut Arrays<T>,
        reference: TraceReference,
    ) -> Result<streamlab_results::saved::timeline::Timeline, RuntimeError> {
        let parts = chunks(a.host_in.len(), streams.len());
        let title = format!(
            "{} {}, {} streams",
            self.p.kernel,
            variant.label(),
            streams.len()
        );
        trace::record(self.ctx.gpu, streams, &title, reference, |rec| {
            for iteration in 0..TRACED_ITERATIONS {
                issue_iteration(variant, streams, &parts, |kind, s, part| {
                    let bytes =
                        (kind != OpKind::Kernel).then_some((part.len() * size_of::<T>()) as u64);
                    rec.op(s, iteration, kind, bytes, |stream| {
                        a.op(self, kind, stream, part)
                    })
                })?;
            }
            Ok(())
        })
    }
}
