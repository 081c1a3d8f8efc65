//! concurrency-breaks: the memcpy-kernel pipeline over streams, clean and with one
//! concurrency break in every iteration, after the CUDA Handbook's section 6.5.3.
//!
//! AddKernel's cycles are picked first (unless given) so that the whole array's kernels
//! take as long as copying it in: then the clean pipeline keeps both copy engines and the
//! SMs busy at once, and a break has overlap to destroy. Each iteration issues every
//! chunk's copy in, every kernel, every copy out (one chunk per stream), with the case's
//! break or its remedy ([`Case`]); one schedule, written once, is timed and traced. The
//! cases are sampled round-robin, each sample `--iterations` iterations back to back timed
//! with events, more rounds for a case whose noise is still above the target; each case's
//! last sample runs on a poisoned input on the device and poisoned outputs, and is checked
//! element by element. Then each case is traced over three iterations as the host issues
//! them (no gate: the host waits for the GPU in the middle of some schedules), and the
//! break detector reads the timeline.
mod pipeline;

use streamlab_results::experiments::concurrency_breaks::{
    Case, CaseRun, ConcurrencyBreaks, ConcurrencyBreaksResult, Params,
};
use streamlab_results::saved::Params as _;
use streamlab_results::saved::Verification;
use streamlab_results::saved::timeline::{Lane, TraceReference};

use super::{Context, Run, RunError};
use crate::measure::{MAX_ROUNDS, series, wants_round};
use crate::runtime::{Region, RuntimeError, Stream};
use crate::trace;
use pipeline::{Pipeline, SCRATCH_WORDS, TRACED_ITERATIONS, lane_of};

impl Run for ConcurrencyBreaks {
    const SUMMARY: &'static str =
        "What breaks the overlap: NULL-stream and pageable copies, allocations, waits";
    const ABOUT: &'static str = "The memcpy-kernel pipeline over 8 streams, clean and with one break in every \
        iteration (a copy or memset on the NULL stream, a pageable copy, an allocation \
        and free, a host wait on an event; non-blocking streams and the per-thread \
        default stream as controls): each one's cost against the clean pipeline, its \
        timeline and what the break detector finds in it";

    fn run(ctx: &Context, p: &Params) -> Result<ConcurrencyBreaksResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let n = p.elements;
        gpu.ensure_fits((2 * n * size_of::<i32>() + 2 * SCRATCH_WORDS * size_of::<u32>()) as u64)?;
        let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
        let mut host_in = gpu.pinned(n, 0i32)?;
        rng.fill_any_i32(host_in.as_mut_slice()?);
        let blocking = gpu.blocking_streams(p.streams)?;
        let non_blocking = gpu.streams(p.streams)?;
        let mut pipe = Pipeline::new(ctx, p, host_in)?;
        let mut task =
            crate::progress::Task::start("concurrency-breaks", 1 + 2 * Case::ALL.len() as u64);
        let calibration = pipe.calibrate(&blocking, p.cycles)?;
        task.step(&format!("AddKernel at {} cycles", calibration.cycles));
        let staging = pipe.probe_staging()?;
        let region = Region::new(gpu, p.streams)?;
        let cases = Cases {
            blocking: &blocking,
            non_blocking: &non_blocking,
            lanes: Case::ALL
                .map(|case| lane_of(gpu, case))
                .into_iter()
                .collect(),
            region: &region,
            iterations: p.iterations,
        };
        let samples = cases.sample(ctx, p, &mut pipe)?;
        let (runs, checks) = cases.check_and_trace(ctx, p, &mut pipe, samples, &mut task)?;
        task.finish();
        Ok(ConcurrencyBreaksResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), !ctx.stopping()),
            calibration,
            cases: runs,
            staging: Some(staging),
        })
    }
}

/// Where and how the cases run: on blocking or non-blocking streams, each with its lane,
/// `iterations` iterations per sample timed over one region.
struct Cases<'a> {
    blocking: &'a [Stream<'a>],
    non_blocking: &'a [Stream<'a>],
    lanes: Vec<Option<(Lane, Stream<'a>)>>,
    region: &'a Region,
    iterations: usize,
}

impl Cases<'_> {
    /// The streams `case` issues on.
    fn streams_of(&self, case: Case) -> &[Stream<'_>] {
        if case.blocking_streams() {
            self.blocking
        } else {
            self.non_blocking
        }
    }

    /// The lane of the `k`th case of [`Case::ALL`], if it has one.
    fn lane(&self, k: usize) -> Option<(Lane, &Stream<'_>)> {
        self.lanes[k].as_ref().map(|(l, s)| (*l, s))
    }

    /// Every case warmed up once, then sampled round-robin while its noise is above the
    /// target: each case's samples, in [`Case::ALL`]'s order.
    fn sample(
        &self,
        ctx: &Context,
        p: &Params,
        pipe: &mut Pipeline,
    ) -> Result<Vec<Vec<f64>>, RuntimeError> {
        // Warm up every case once, then sample them round-robin.
        for (k, &case) in Case::ALL.iter().enumerate() {
            pipe.sample(
                self.streams_of(case),
                self.lane(k),
                case,
                self.iterations,
                self.region,
            )?;
        }
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); Case::ALL.len()];
        'rounds: for round in 0..MAX_ROUNDS * p.sampling.repeats {
            for (k, &case) in Case::ALL.iter().enumerate() {
                if ctx.stopping() {
                    break 'rounds;
                }
                if wants_round(&samples[k], round, p.sampling.repeats) {
                    samples[k].push(pipe.sample(
                        self.streams_of(case),
                        self.lane(k),
                        case,
                        self.iterations,
                        self.region,
                    )?);
                }
            }
        }
        Ok(samples)
    }

    /// Each case's last sample on poisoned outputs, checked, then its trace over
    /// [`TRACED_ITERATIONS`] iterations: the cases run and their checks.
    fn check_and_trace(
        &self,
        ctx: &Context,
        p: &Params,
        pipe: &mut Pipeline,
        mut samples: Vec<Vec<f64>>,
        task: &mut crate::progress::Task,
    ) -> Result<(Vec<CaseRun>, Vec<Verification>), RuntimeError> {
        let gpu = pipe.gpu;
        let mut checks = Vec::new();
        let mut cases = Vec::new();
        for (k, &case) in Case::ALL.iter().enumerate() {
            if ctx.stopping() {
                break;
            }
            let streams = self.streams_of(case);
            pipe.poison(&streams[0])?;
            samples[k].push(pipe.sample(
                streams,
                self.lane(k),
                case,
                self.iterations,
                self.region,
            )?);
            gpu.synchronize()?;
            checks.push(pipe.check(case.label())?);
            task.step(case.label());
            let time = series(std::mem::take(&mut samples[k]));
            let reference = TraceReference {
                timed_ms: time.min(),
                median_ms: Some(time.median()),
                back_to_back: true,
                rates: None,
            };
            let title = format!("concurrency-breaks {}, {} streams", case.label(), p.streams);
            let timeline =
                trace::record_as_issued(gpu, streams, self.lane(k), &title, reference, |rec| {
                    (0..TRACED_ITERATIONS).try_for_each(|i| pipe.iteration(rec, streams, case, i))
                })?;
            task.step(&format!("{} traced", case.label()));
            cases.push(CaseRun {
                case,
                time,
                timeline: Some(timeline),
            });
        }
        Ok((cases, checks))
    }
}
