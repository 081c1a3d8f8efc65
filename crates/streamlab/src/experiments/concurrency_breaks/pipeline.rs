//! concurrency-breaks' pipeline: its buffers, kernel and events, one iteration of any
//! case issued through a trace recorder, the staged copy's host side and its probe, and
//! the calibration of AddKernel's cycles.
use std::ops::Range;

use kernels_rs::add_kernel;
use nvptx_kernel::Kernel;
use streamlab_results::experiments::concurrency_breaks::{Calibration, Case, Params, StagingProbe};
use streamlab_results::saved::Verification;
use streamlab_results::saved::timeline::{Lane, OpKind};

use super::super::Context;
use crate::measure::series;
use crate::runtime::{
    DeviceBuffer, Event, Function, Gpu, MemPool, PinnedBuffer, Region, RuntimeError, Shape, Stream,
};
use crate::trace::Recorder;
use streamlab_results::spread::chunks;

/// 32-bit words of the scratch buffer the memset and the device-to-device copy write
/// (4 MiB): enough to be seen, small beside the pipeline's copies.
pub(super) const SCRATCH_WORDS: usize = 1 << 20;
/// What AddKernel adds, `cycles` times.
const ADD_VALUE: i32 = 0xcc;
/// Iterations traced back to back: the middle one runs as the timed ones do.
pub(super) const TRACED_ITERATIONS: usize = 3;
/// Threads per block and blocks per SM of AddKernel's launches (memcpy-kernel's).
const THREADS: u32 = 256;
const BLOCKS_PER_SM: u32 = 16;
/// Pinned staging buffers of the staged copy, used in turn: one the GPU copies in from
/// while the host fills the other.
const STAGING_BUFFERS: usize = 2;
/// The cycles the calibration times the kernels at, to fit their time to a line.
const CALIBRATION_CYCLES: [i32; 2] = [64, 1024];
/// Copies of one chunk into staging timed at each thread count, the fastest kept; and
/// copies timed at the count the staged copy uses.
const STAGING_TRIES: usize = 5;
const STAGING_SAMPLES: usize = 15;
/// How much slower than the fastest a thread count may copy and still be taken for fewer
/// threads.
const STAGING_SLACK: f64 = 1.05;

type AddFn = Function<<add_kernel as Kernel>::Args>;

/// The buffers, kernel and events of the pipeline.
pub(super) struct Pipeline<'a> {
    pub(super) gpu: &'a Gpu,
    kernel: AddFn,
    shape: Shape,
    cycles: i32,
    parts: Vec<Range<usize>>,
    host_in: PinnedBuffer<i32>,
    /// The same input in pageable memory, for the pageable copy.
    pageable_in: Vec<i32>,
    host_out: PinnedBuffer<i32>,
    dev_in: DeviceBuffer<i32>,
    dev_out: DeviceBuffer<i32>,
    scratch: DeviceBuffer<u32>,
    scratch_copy: DeviceBuffer<u32>,
    /// The pageable input registered with the driver (the pageable copy's remedy).
    registered_in: PinnedBuffer<i32>,
    /// Pinned buffers the last chunk is staged through (the pageable copy's other
    /// remedy), and for each, recorded after its copy in: the buffer is free again.
    staging: [PinnedBuffer<i32>; STAGING_BUFFERS],
    staged: [Event; STAGING_BUFFERS],
    /// The staging buffer that holds the next iteration's chunk, staged ahead. It carries
    /// over from one sample to the next, as in a pipeline that never stops: only the
    /// first iteration ever (in the warm-up) stages its own chunk.
    ready: Option<usize>,
    /// Host threads a chunk's copy into staging is split over ([`Pipeline::probe_staging`]).
    staging_threads: usize,
    /// Stream-ordered pools: one handing its memory back, one keeping it.
    pool_releasing: MemPool<'a>,
    pool_keeping: MemPool<'a>,
    /// Recorded on the last stream after its kernel: the chunk's input is free again.
    chunk_free: Event,
    /// Recorded on the lane after the last chunk's copy in there.
    copied: Event,
    /// Recorded on the last stream after its copy out (what the host waits on).
    done: Event,
}

/// Copy `from` into `to` on the host, split over `threads` threads.
fn copy_over(to: &mut PinnedBuffer<i32>, from: &[i32], threads: usize) -> Result<(), RuntimeError> {
    crate::parallel::for_each_chunk_mut_over(to.as_mut_slice()?, threads, |at, chunk| {
        chunk.copy_from_slice(&from[at..at + chunk.len()])
    });
    Ok(())
}

/// The lane a case issues on beyond its streams.
pub(super) fn lane_of(gpu: &Gpu, case: Case) -> Option<(Lane, Stream<'_>)> {
    match case {
        Case::NullStreamCopy
        | Case::NullStreamCopyNonBlocking
        | Case::MemsetWithoutStream
        | Case::DeviceCopyOnNullStream => Some((Lane::NullStream, gpu.legacy_null_stream())),
        Case::PerThreadStreamCopy => Some((Lane::PerThreadStream, gpu.per_thread_stream())),
        _ => None,
    }
}

/// Whether the case moves the last chunk's copy in onto its lane.
fn moves_copy(case: Case) -> bool {
    matches!(
        case,
        Case::NullStreamCopy | Case::NullStreamCopyNonBlocking | Case::PerThreadStreamCopy
    )
}

impl<'a> Pipeline<'a> {
    /// The pipeline over `host_in` (`--elements` random ints): its other buffers and
    /// events, one chunk per stream.
    pub(super) fn new(
        ctx: &Context<'a>,
        p: &Params,
        host_in: PinnedBuffer<i32>,
    ) -> Result<Pipeline<'a>, RuntimeError> {
        let gpu = ctx.gpu;
        let n = p.elements;
        let parts = chunks(n, p.streams);
        let last_len = parts.last().map_or(0, Range::len);
        Ok(Pipeline {
            gpu,
            kernel: ctx.kernels.add_kernel_in(ctx.form),
            shape: Shape::linear(gpu.info().sm_count.max(1) as u32 * BLOCKS_PER_SM, THREADS),
            cycles: 1,
            parts,
            pageable_in: host_in.as_slice()?.to_vec(),
            registered_in: gpu.register(host_in.as_slice()?.to_vec())?,
            staging: [gpu.pinned(last_len, 0i32)?, gpu.pinned(last_len, 0i32)?],
            staged: [gpu.event()?, gpu.event()?],
            ready: None,
            staging_threads: crate::parallel::cores(),
            pool_releasing: gpu.mem_pool(false)?,
            pool_keeping: gpu.mem_pool(true)?,
            host_in,
            host_out: gpu.pinned(n, -1i32)?,
            dev_in: gpu.alloc(n)?,
            dev_out: gpu.alloc(n)?,
            scratch: gpu.alloc(SCRATCH_WORDS)?,
            scratch_copy: gpu.alloc(SCRATCH_WORDS)?,
            chunk_free: gpu.event()?,
            copied: gpu.event()?,
            done: gpu.event()?,
        })
    }

    fn bytes(&self, part: &Range<usize>) -> Option<u64> {
        Some((part.len() * size_of::<i32>()) as u64)
    }

    /// Issue iteration `i` of `case` through `rec` on `streams`: the case's break before
    /// the copies in, every chunk's copy in, the break after them, every kernel, every
    /// copy out, and the staged copy's next chunk.
    pub(super) fn iteration(
        &mut self,
        rec: &mut Recorder,
        streams: &[Stream],
        case: Case,
        i: usize,
    ) -> Result<(), RuntimeError> {
        let last = streams.len() - 1;
        self.before_copies_in(rec, streams, case, i)?;
        let staged_from = self.copies_in(rec, streams, case, i)?;
        self.after_copies_in(rec, last, case, i)?;
        for s in 0..streams.len() {
            let part = self.parts[s].clone();
            let (kernel, shape, cycles) = (&self.kernel, self.shape, self.cycles);
            let (dev_out, dev_in) = (&mut self.dev_out, &self.dev_in);
            rec.op(s, i, OpKind::Kernel, None, |stream| {
                let args = (
                    dev_out.slice_mut(part.clone()),
                    dev_in.slice(part.clone()),
                    ADD_VALUE,
                    cycles,
                );
                stream.launch(kernel, shape, args)
            })?;
        }
        streams[last].record(&self.chunk_free)?;
        for s in 0..streams.len() {
            let part = self.parts[s].clone();
            let bytes = self.bytes(&part);
            let (host_out, dev_out) = (&mut self.host_out, &self.dev_out);
            rec.op(s, i, OpKind::DtoH, bytes, |stream| {
                stream.dtoh(host_out, part.start, dev_out, part.clone())
            })?;
        }
        streams[last].record(&self.done)?;
        if let Some(k) = staged_from {
            // The next iteration's chunk (in this sample or the next), staged into the other
            // buffer while the GPU has this one.
            let next = (k + 1) % STAGING_BUFFERS;
            self.stage(rec, i, next)?;
            self.ready = Some(next);
        }
        Ok(())
    }

    /// The allocation cases' work before an iteration's copies in.
    fn before_copies_in(
        &mut self,
        rec: &mut Recorder,
        streams: &[Stream],
        case: Case,
        i: usize,
    ) -> Result<(), RuntimeError> {
        let gpu = self.gpu;
        match case {
            Case::AllocAndFree => rec.host(i, "cuMemAlloc + cuMemFree", || {
                drop(gpu.alloc::<u32>(SCRATCH_WORDS)?);
                Ok(())
            }),
            Case::StreamOrderedAlloc | Case::StreamOrderedAllocKept => {
                let pool = if case == Case::StreamOrderedAlloc {
                    &self.pool_releasing
                } else {
                    &self.pool_keeping
                };
                // Issued as any stream work is: no host call that waits, so none traced.
                streams[0].alloc_and_free(pool, SCRATCH_WORDS * size_of::<u32>())
            }
            _ => Ok(()),
        }
    }

    /// Every chunk's copy in, the last one's as `case` issues it: the staging buffer it
    /// came from, for the staged copy.
    fn copies_in(
        &mut self,
        rec: &mut Recorder,
        streams: &[Stream],
        case: Case,
        i: usize,
    ) -> Result<Option<usize>, RuntimeError> {
        let last = streams.len() - 1;
        let mut staged_from = None;
        for s in 0..streams.len() {
            let part = self.parts[s].clone();
            let bytes = self.bytes(&part);
            let (dev_in, host_in) = (&mut self.dev_in, &self.host_in);
            if s == last && moves_copy(case) {
                let (free, copied) = (&self.chunk_free, &self.copied);
                rec.on_lane(i, OpKind::HtoD, bytes, "cuMemcpyHtoDAsync", |lane| {
                    lane.wait(free)?;
                    lane.htod(dev_in, part.start, host_in, part.clone())?;
                    lane.record(copied)
                })?;
                streams[last].wait(copied)?;
            } else if s == last && case == Case::PageableCopy {
                let pageable = &self.pageable_in;
                rec.op(s, i, OpKind::HtoD, bytes, |stream| {
                    stream.htod_pageable(dev_in, part.start, pageable, part.clone())
                })?;
            } else if s == last && case == Case::RegisteredCopy {
                let registered = &self.registered_in;
                rec.op(s, i, OpKind::HtoD, bytes, |stream| {
                    stream.htod(dev_in, part.start, registered, part.clone())
                })?;
            } else if s == last && case == Case::StagedCopy {
                let k = match self.ready.take() {
                    Some(k) => k,
                    None => {
                        self.stage(rec, i, 0)?;
                        0
                    }
                };
                let (dev_in, staging) = (&mut self.dev_in, &self.staging[k]);
                rec.op(s, i, OpKind::HtoD, bytes, |stream| {
                    stream.htod(dev_in, part.start, staging, 0..part.len())
                })?;
                streams[last].record(&self.staged[k])?;
                staged_from = Some(k);
            } else {
                rec.op(s, i, OpKind::HtoD, bytes, |stream| {
                    stream.htod(dev_in, part.start, host_in, part.clone())
                })?;
            }
        }
        Ok(staged_from)
    }

    /// The memset, device-to-device copy and host wait cases' work after an iteration's
    /// copies in (on the NULL stream, without one, or on stream `last`).
    fn after_copies_in(
        &mut self,
        rec: &mut Recorder,
        last: usize,
        case: Case,
        i: usize,
    ) -> Result<(), RuntimeError> {
        let gpu = self.gpu;
        let bytes = Some((SCRATCH_WORDS * size_of::<u32>()) as u64);
        let (scratch, copy) = (&mut self.scratch, &mut self.scratch_copy);
        match case {
            Case::MemsetWithoutStream => {
                rec.on_lane(i, OpKind::Memset, bytes, "cuMemsetD32", |_| {
                    gpu.memset_without_stream(scratch, i as u32)
                })
            }
            Case::DeviceCopyOnNullStream => {
                rec.on_lane(i, OpKind::DtoD, bytes, "cuMemcpyDtoDAsync", |lane| {
                    lane.dtod(copy, 0, scratch, 0..SCRATCH_WORDS)
                })
            }
            Case::MemsetOnStream => rec.op(last, i, OpKind::Memset, bytes, |stream| {
                stream.memset_d32(scratch, i as u32)
            }),
            Case::DeviceCopyOnStream => rec.op(last, i, OpKind::DtoD, bytes, |stream| {
                stream.dtod(copy, 0, scratch, 0..SCRATCH_WORDS)
            }),
            Case::HostWaitOnEvent => {
                let done = &self.done;
                rec.host(i, "cuEventSynchronize", || done.synchronize())
            }
            // The host asks and goes on: no wait, so no host call traced.
            Case::EventQuery => self.done.query().map(drop),
            _ => Ok(()),
        }
    }

    /// Copy the last chunk of the pageable input into staging buffer `k` once the GPU has
    /// copied in what the buffer held (its event), as one host call of iteration `i`.
    fn stage(&mut self, rec: &mut Recorder, i: usize, k: usize) -> Result<(), RuntimeError> {
        let part = self.parts[self.parts.len() - 1].clone();
        let (staging, staged) = (&mut self.staging[k], &self.staged[k]);
        let (pageable, threads) = (&self.pageable_in[part], self.staging_threads);
        rec.host(i, "cuEventSynchronize + copy to pinned staging", || {
            staged.synchronize()?;
            copy_over(staging, pageable, threads)
        })
    }

    /// The host's copy of the last chunk into a pinned staging buffer, split over 1, 2,
    /// 4, … threads up to the cores, the fastest of [`STAGING_TRIES`] at each count; the
    /// staged copy then splits it over the fewest threads within [`STAGING_SLACK`] of the
    /// fastest, whose copies are timed [`STAGING_SAMPLES`] times: what the remedy costs
    /// the host each iteration, on this host.
    pub(super) fn probe_staging(&mut self) -> Result<StagingProbe, RuntimeError> {
        let part = self.parts[self.parts.len() - 1].clone();
        let pageable = &self.pageable_in[part.clone()];
        let staging = &mut self.staging[0];
        let mut time = |threads: usize| -> Result<f64, RuntimeError> {
            let started = std::time::Instant::now();
            copy_over(staging, pageable, threads)?;
            Ok(started.elapsed().as_secs_f64() * 1e3)
        };
        let cores = crate::parallel::cores();
        let counts = (0..).map(|k| 1usize << k).take_while(|&t| t < cores);
        let mut by_threads = Vec::new();
        for threads in counts.chain([cores]) {
            let fastest = (0..STAGING_TRIES)
                .map(|_| time(threads))
                .collect::<Result<Vec<f64>, _>>()?
                .into_iter()
                .fold(f64::INFINITY, f64::min);
            by_threads.push((threads, fastest));
        }
        let best = by_threads.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
        let threads = (by_threads.iter())
            .find(|t| t.1 <= STAGING_SLACK * best)
            .map_or(1, |t| t.0);
        let copy = (0..STAGING_SAMPLES)
            .map(|_| time(threads))
            .collect::<Result<Vec<f64>, _>>()?;
        self.staging_threads = threads;
        Ok(StagingProbe {
            bytes: (part.len() * size_of::<i32>()) as u64,
            threads,
            by_threads,
            copy: series(copy),
        })
    }

    /// One timed sample of `iterations` iterations of `case`: milliseconds per iteration.
    pub(super) fn sample(
        &mut self,
        streams: &[Stream],
        lane: Option<(Lane, &Stream)>,
        case: Case,
        iterations: usize,
        region: &Region,
    ) -> Result<f64, RuntimeError> {
        let began = self.gpu.event()?;
        region.begin(streams)?;
        streams[0].record(&began)?;
        let ended = self.gpu.event()?;
        if let Some((_, l)) = lane {
            l.wait(&began)?;
        }
        let mut rec = Recorder::untraced(self.gpu, streams, lane);
        for i in 0..iterations {
            self.iteration(&mut rec, streams, case, i)?;
        }
        if let Some((_, l)) = lane {
            l.record(&ended)?;
            streams[0].wait(&ended)?;
        }
        Ok(region.end(streams)? / iterations as f64)
    }

    /// Poison the input on the device and the output on the device and the host before a
    /// checked sample: a chunk a case did not copy in, or did not copy out, shows.
    pub(super) fn poison(&mut self, stream: &Stream) -> Result<(), RuntimeError> {
        stream.poison(&mut self.dev_in)?;
        stream.poison(&mut self.dev_out)?;
        crate::parallel::for_each_chunk_mut(self.host_out.as_mut_slice()?, |_, c| c.fill(-1));
        self.gpu.synchronize()
    }

    /// Check every output element: `out[i] == in[i] + ADD_VALUE·cycles` with wrap-around.
    pub(super) fn check(&self, what: &str) -> Result<Verification, RuntimeError> {
        let (input, output) = (self.host_in.as_slice()?, self.host_out.as_slice()?);
        Ok(crate::add_kernel::check(
            input,
            output,
            (ADD_VALUE, self.cycles),
            what,
        ))
    }

    /// The whole array copied in on one stream, and its kernels one chunk per stream at
    /// `cycles`: (copy ms, kernels ms), the fastest of three each.
    fn stage_times(&mut self, streams: &[Stream], cycles: i32) -> Result<(f64, f64), RuntimeError> {
        let (one, all) = (
            Region::new(self.gpu, 1)?,
            Region::new(self.gpu, streams.len())?,
        );
        let n = self.host_in.len();
        let (mut htod, mut kernels) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..3 {
            one.begin(&streams[..1])?;
            streams[0].htod(&mut self.dev_in, 0, &self.host_in, 0..n)?;
            htod = htod.min(one.end(&streams[..1])?);
            all.begin(streams)?;
            for (stream, part) in streams.iter().zip(&self.parts) {
                stream.launch(
                    &self.kernel,
                    self.shape,
                    (
                        self.dev_out.slice_mut(part.clone()),
                        self.dev_in.slice(part.clone()),
                        ADD_VALUE,
                        cycles,
                    ),
                )?;
            }
            kernels = kernels.min(all.end(streams)?);
        }
        Ok((htod, kernels))
    }

    /// The cycles at which the kernels take as long as the copy in (a line through two
    /// measured points), or `given`; and the times at them.
    pub(super) fn calibrate(
        &mut self,
        streams: &[Stream],
        given: i32,
    ) -> Result<Calibration, RuntimeError> {
        let cycles = if given > 0 {
            given
        } else {
            let [c0, c1] = CALIBRATION_CYCLES;
            let (htod, k0) = self.stage_times(streams, c0)?;
            let (_, k1) = self.stage_times(streams, c1)?;
            let per_cycle = (k1 - k0) / f64::from(c1 - c0);
            let fitted = if per_cycle > 0.0 {
                f64::from(c0) + (htod - k0) / per_cycle
            } else {
                f64::from(c1)
            };
            fitted.round().clamp(1.0, 1_000_000.0) as i32
        };
        let (htod_ms, kernels_ms) = self.stage_times(streams, cycles)?;
        self.cycles = cycles;
        Ok(Calibration {
            cycles,
            htod_ms,
            kernels_ms,
        })
    }
}
