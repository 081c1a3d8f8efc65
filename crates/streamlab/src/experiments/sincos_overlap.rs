//! sincos-overlap: copy/compute overlap over streams, after the "CUDA streams" blog post.
//!
//! `b[i] = a[i] + sqrt(sin(i)² + cos(i)²)` over floats in pinned memory, timed as
//! * sequential: blocking copy in, one kernel, copy out;
//! * asynchronous 1: per stream, copy in, kernel, copy out (depth first);
//! * asynchronous 2: all copies in, all kernels, all copies out (breadth first);
//!
//! at `--streams` and every count of `--stream-counts`, chunk `s` on stream `s`. As in
//! the blog's program, iterations run back to back and are timed together, so one
//! iteration's copies out overlap the next one's copies in; the timed iterations are
//! split into batches, each batch's mean per iteration one sample.
//!
//! Configurations are sampled round-robin, one batch each per round, so that drift on a
//! shared machine hits them alike: every configuration gets `--batches` samples, and
//! those whose relative noise is still above the target get more rounds
//! ([`crate::measure::wants_round`]), for at most `EXTRA_ROUNDS_BUDGET` in all. For
//! the bound, the run times each stream count's chunks copied in alone, out alone and
//! both ways at once (first, then once more after each of its configurations' batches),
//! and their kernels alone. Every configuration's
//! output is poisoned before its first batch and checked bit for bit after it
//! ([`crate::sincos`]). Each timed batch is paired with one of the CUDA C++ host twin
//! (`runtime::cpp_host`, where nvcc is found; in the first kernel set's run of a
//! session only), the two alternating which goes first every
//! other pair of rounds, on the same streams, buffers and kernel; its output is checked
//! too. In every other round, right after each timed batch of an asynchronous
//! configuration, [`TRACED_BATCH`] iterations of it are traced back to back: the busy
//! time per steady iteration of their busiest engine or stream is one sample of the
//! configuration's busiest bound, taken under the same traffic as its timed samples; the
//! rounds without traces show whether tracing slows what is timed. Last, three
//! iterations of each asynchronous order at `--streams`, and of the fastest asynchronous
//! configuration, are traced back to back and kept as timelines.
use std::ops::Range;

use streamlab_results::derived::rates::{best_rates, for_chunks};
use streamlab_results::derived::trace::{BusiestBound, busiest_bound};
use streamlab_results::experiments::sincos_overlap::{
    CppHostRun, Params, SincosOverlap, SincosOverlapResult, SincosPoint, TRACED_BATCH,
    async_by_time,
};
use streamlab_results::saved::timeline::{OpKind, Timeline, TraceReference, TraceSource};
use streamlab_results::saved::{IssueOrder, Params as _, StageTimes, Verification};

use super::{Context, Run, RunError};
use crate::measure::{StageSampler, issue_iteration, series, wants_round};
use crate::runtime::cpp_host;
use crate::runtime::{Gpu, Region, RuntimeError, Stream};
use crate::sincos::{Buffers, SincosFn};
use crate::trace;
use streamlab_results::spread::chunks;

/// Iterations traced back to back for a timeline: the middle one's period is held to the
/// timed time.
const TRACED_ITERATIONS: usize = 3;

/// Samples of each stage for the bound, and passes over the array per sample.
const STAGE_SAMPLING: (usize, usize) = (5, 4);
/// Untimed iterations before each batch after a configuration's first.
const REVISIT_WARMUP: usize = 2;

/// How long the rounds past every configuration's `--batches` may go on for the
/// configurations whose noise is still above the target; a row still above it then
/// keeps the noise it has, and the report counts it as noisy.
const EXTRA_ROUNDS_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

impl Run for SincosOverlap {
    const SUMMARY: &'static str =
        "The blog's copy/kernel overlap: sequential against two stream orders";
    const ABOUT: &'static str = "b = a + sqrt(sin² + cos²) over pinned floats: sequential (blocking copies) \
        against asynchronous 1 (per stream: copy, kernel, copy) and 2 (all copies in, \
        all kernels, all copies out) over --streams and a sweep, iterations back to \
        back as in the blog, beside the bound: copies both ways at the measured rate";

    fn run(ctx: &Context, p: &Params) -> Result<SincosOverlapResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let mut b = Buffers::new(gpu, ctx.kernels, ctx.form, p.elements)?;
        let counts = p.all_stream_counts();
        let streams = gpu.streams(counts.last().copied().unwrap_or(1).max(2))?;
        let kernel = ctx.kernels.sincos_in(ctx.form);
        let batches = chunks(p.iterations, p.batches());
        let mut chunk_counts = counts.clone();
        chunk_counts.insert(0, 1);
        chunk_counts.dedup();
        let mut task = crate::progress::Task::start(
            "sincos-overlap",
            (chunk_counts.len() + 1 + 2 * counts.len() + IssueOrder::ASYNC.len() + 1) as u64,
        );
        let mut samplers = Vec::new();
        for &c in &chunk_counts {
            samplers.push(StageSampler::measure(
                gpu,
                &streams,
                &chunks(p.elements, c),
                p.bytes(),
                STAGE_SAMPLING,
                true,
                |kind, stream, part| b.op(&kernel, p.threads, kind, stream, part),
            )?);
            task.step(&format!("stages over {c} chunk(s)"));
        }
        let timing = Timing {
            gpu,
            kernel,
            threads: p.threads,
        };
        let built = match ctx.earlier_set {
            // The hosts are compared once per session: the comparison does not depend on
            // the kernels, and it doubles the time sampling takes.
            Some(set) => Err(format!(
                "it is tried once per session, in the run with the {} kernels",
                set.label()
            )),
            None => cpp_host::CppHost::build().map_err(|why| why.to_string()),
        };
        let (cpp, cpp_host) = match built {
            Ok(host) => {
                let build = host.build.clone();
                (Some(host), CppHostRun::Built(build))
            }
            Err(why) => {
                crate::progress::note(&format!(
                    "sincos-overlap: skipped the CUDA C++ host twin: {why}"
                ));
                (None, CppHostRun::Skipped(why))
            }
        };
        let mut sampling = Sampling::new(&timing, p, &streams, &batches, &counts);
        sampling.cpp = cpp.as_ref();
        sampling.rounds(ctx, &mut b, (&mut samplers, &chunk_counts), &mut task)?;
        let Sampling {
            configurations,
            samples,
            cpp_samples,
            traced_rounds,
            traced_busiest,
            checks,
            ..
        } = sampling;
        let points: Vec<SincosPoint> = (configurations.iter().zip(samples).zip(traced_busiest))
            .zip(cpp_samples.into_iter().zip(traced_rounds))
            .filter(|(((_, s), _), _)| !s.is_empty())
            .map(
                |(((&(variant, streams), s), traced_busiest), (cpp, traced_round))| SincosPoint {
                    variant,
                    streams,
                    time: series(s),
                    traced_busiest,
                    cpp_host: (!cpp.is_empty()).then(|| series(cpp)),
                    traced_round,
                },
            )
            .collect();
        let stages: Vec<_> = samplers.into_iter().map(StageSampler::finish).collect();
        let complete = !ctx.stopping() && points.len() == configurations.len();
        let timelines = if complete {
            trace_timelines(&timing, p, &streams, &mut b, (&points, &stages), &mut task)?
        } else {
            Vec::new()
        };
        task.finish();
        Ok(SincosOverlapResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), complete),
            batch_sizes: batches.iter().map(Range::len).collect(),
            stages,
            points,
            timelines,
            cpp_host: Some(cpp_host),
        })
    }
}

/// The configurations sampled round-robin, and what each has gathered so far: its
/// samples, the C++ host twin's beside them, whether each was taken in a traced round,
/// its traced busiest bounds; and the checks.
struct Sampling<'a> {
    timing: &'a Timing<'a>,
    params: &'a Params,
    streams: &'a [Stream<'a>],
    batches: &'a [Range<usize>],
    /// The C++ host twin, where it was built.
    cpp: Option<&'a cpp_host::CppHost>,
    configurations: Vec<(IssueOrder, usize)>,
    samples: Vec<Vec<f64>>,
    cpp_samples: Vec<Vec<f64>>,
    traced_rounds: Vec<Vec<bool>>,
    traced_busiest: Vec<Vec<BusiestBound>>,
    checks: Vec<Verification>,
}

impl<'a> Sampling<'a> {
    /// Sequential on one stream, then both asynchronous orders at each of `counts`,
    /// nothing sampled yet.
    fn new(
        timing: &'a Timing<'a>,
        params: &'a Params,
        streams: &'a [Stream],
        batches: &'a [Range<usize>],
        counts: &[usize],
    ) -> Sampling<'a> {
        let mut configurations = vec![(IssueOrder::Sequential, 1)];
        for &used in counts {
            configurations.extend(IssueOrder::ASYNC.map(|v| (v, used)));
        }
        let samples: Vec<Vec<f64>> = vec![Vec::new(); configurations.len()];
        let traced_busiest: Vec<Vec<BusiestBound>> = vec![Vec::new(); configurations.len()];
        Sampling {
            timing,
            params,
            streams,
            batches,
            cpp: None,
            cpp_samples: vec![Vec::new(); configurations.len()],
            traced_rounds: vec![Vec::new(); configurations.len()],
            configurations,
            samples,
            traced_busiest,
            checks: Vec::new(),
        }
    }

    /// Rounds of a batch of every configuration that wants one ([`wants_round`]), until
    /// none does, the rounds past `--batches` have had [`EXTRA_ROUNDS_BUDGET`], or a stop
    /// is asked; `samplers` are the stages of each of `chunk_counts`.
    fn rounds(
        &mut self,
        ctx: &Context,
        b: &mut Buffers,
        (samplers, chunk_counts): (&mut [StageSampler], &[usize]),
        task: &mut crate::progress::Task,
    ) -> Result<(), RuntimeError> {
        let mut extra_since = None;
        for round in 0.. {
            if round >= self.batches.len() {
                let since = *extra_since.get_or_insert_with(std::time::Instant::now);
                if since.elapsed() > EXTRA_ROUNDS_BUDGET {
                    break;
                }
            }
            let wanted: Vec<usize> = (0..self.configurations.len())
                .filter(|&i| wants_round(&self.samples[i], round, self.batches.len()))
                .collect();
            if wanted.is_empty() || ctx.stopping() {
                break;
            }
            for i in wanted {
                if ctx.stopping() {
                    break;
                }
                self.batch(i, round, b, (&mut *samplers, chunk_counts), task)?;
            }
        }
        Ok(())
    }

    /// One timed batch of configuration `i` (poisoned before its first, checked after
    /// it) and one of the C++ host twin's, the two alternating which goes first every
    /// other pair of rounds; in even rounds a traced batch after it where it is
    /// asynchronous; and one more sample of its stream count's stages.
    fn batch(
        &mut self,
        i: usize,
        round: usize,
        b: &mut Buffers,
        (samplers, chunk_counts): (&mut [StageSampler], &[usize]),
        task: &mut crate::progress::Task,
    ) -> Result<(), RuntimeError> {
        let (timing, p, streams, batches) = (self.timing, self.params, self.streams, self.batches);
        let (gpu, kernel) = (timing.gpu, timing.kernel);
        let (variant, used) = self.configurations[i];
        let first = self.samples[i].is_empty();
        let iterations = batches[round % batches.len()].len();
        let warmup = if first {
            p.warmup
        } else {
            p.warmup.min(REVISIT_WARMUP)
        };
        let label = format!("{} with {used} stream(s)", variant.label());
        let rust_first = first || (round / 2).is_multiple_of(2);
        let rust = |b: &mut Buffers| timing.batch(variant, &streams[..used], b, warmup, iterations);
        if rust_first {
            let sample = self.checked(b, first.then(|| label.clone()), rust)?;
            self.samples[i].push(sample);
        }
        if let Some(cpp) = self.cpp {
            let parts = chunks(b.host_a.len(), used);
            let sample =
                self.checked(b, first.then(|| format!("{label}, CUDA C++ host")), |b| {
                    cpp.batch(
                        gpu,
                        (&kernel, timing.threads),
                        variant,
                        &streams[..used],
                        (&b.host_a, &mut b.host_b),
                        (&mut b.dev_a, &mut b.dev_b),
                        &parts,
                        (warmup, iterations),
                    )
                })?;
            self.cpp_samples[i].push(sample);
        }
        if !rust_first {
            let sample = rust(b)?;
            self.samples[i].push(sample);
        }
        let traced_round = round.is_multiple_of(2);
        self.traced_rounds[i].push(traced_round);
        if variant != IssueOrder::Sequential && traced_round {
            let timeline = trace(timing, variant, &streams[..used], b, TRACED_BATCH, None)?;
            self.traced_busiest[i].extend(
                (timeline.source == TraceSource::Cupti)
                    .then(|| busiest_bound(&timeline))
                    .flatten(),
            );
        }
        // The parts alone and both directions at once over the same chunks, right
        // after: the bound sees the machine as this configuration did.
        let sampler = (samplers.iter_mut().zip(chunk_counts))
            .find(|(_, c)| **c == used)
            .map(|(s, _)| s)
            .expect("a sampler per stream count");
        sampler.sample_round(
            gpu,
            streams,
            &chunks(p.elements, used),
            1,
            |kind, stream, part| b.op(&kernel, p.threads, kind, stream, part),
        )?;
        if first {
            task.step(&format!("{} ×{used}", variant.label()));
        }
        Ok(())
    }
}

impl Sampling<'_> {
    /// `timed` (one timed batch on either host); where `check_as` names it, the output is
    /// poisoned first and checked after.
    fn checked(
        &mut self,
        b: &mut Buffers,
        check_as: Option<String>,
        timed: impl FnOnce(&mut Buffers) -> Result<f64, RuntimeError>,
    ) -> Result<f64, RuntimeError> {
        if check_as.is_some() {
            b.poison(self.timing.gpu, &self.streams[0])?;
        }
        let sample = timed(b)?;
        if let Some(what) = check_as {
            (self.checks).push(b.expected.check(&what, b.host_b.as_slice()?));
        }
        Ok(sample)
    }
}

/// Three iterations of each asynchronous order at `--streams`, and of the fastest
/// asynchronous configuration, traced back to back and kept as timelines, each held to
/// its timed times and its stream count's copy rates.
fn trace_timelines(
    timing: &Timing,
    p: &Params,
    streams: &[Stream],
    b: &mut Buffers,
    (points, stages): (&[SincosPoint], &[StageTimes]),
    task: &mut crate::progress::Task,
) -> Result<Vec<Timeline>, RuntimeError> {
    let mut timelines = Vec::new();
    let fastest = async_by_time(points, |q| (q.variant, q.time.median()))
        .first()
        .map(|&i| &points[i]);
    let mut traced: Vec<&SincosPoint> = (points.iter())
        .filter(|q| q.variant != IssueOrder::Sequential && q.streams == p.streams)
        .collect();
    traced.extend(fastest.filter(|f| f.streams != p.streams));
    for q in traced {
        let rates = for_chunks(stages, q.streams).map(best_rates);
        let reference = TraceReference {
            timed_ms: q.time.min(),
            back_to_back: true,
            median_ms: Some(q.time.median()),
            rates,
        };
        timelines.push(trace(
            timing,
            q.variant,
            &streams[..q.streams],
            b,
            TRACED_ITERATIONS,
            Some(reference),
        )?);
        task.step(&format!("traced {} ×{}", q.variant.label(), q.streams));
    }
    Ok(timelines)
}

/// How every configuration is timed.
struct Timing<'a> {
    gpu: &'a Gpu,
    kernel: SincosFn,
    threads: u32,
}

impl Timing<'_> {
    /// One sample of `variant` on `streams`: `warmup` untimed iterations, then
    /// `iterations` back to back, timed together; returns the time per iteration.
    fn batch(
        &self,
        variant: IssueOrder,
        streams: &[Stream],
        b: &mut Buffers,
        warmup: usize,
        iterations: usize,
    ) -> Result<f64, RuntimeError> {
        let parts = chunks(b.host_a.len(), streams.len());
        let region = Region::new(self.gpu, streams.len())?;
        region.begin(streams)?;
        for _ in 0..warmup {
            self.issue(variant, streams, &parts, b)?;
        }
        region.end(streams)?;
        region.begin(streams)?;
        for _ in 0..iterations {
            self.issue(variant, streams, &parts, b)?;
        }
        let ms = region.end(streams)? / iterations as f64;
        self.gpu.synchronize()?;
        Ok(ms)
    }

    /// Issue one iteration of `variant` over `streams`, chunk `s` on stream `s`.
    fn issue(
        &self,
        variant: IssueOrder,
        streams: &[Stream],
        parts: &[Range<usize>],
        b: &mut Buffers,
    ) -> Result<(), RuntimeError> {
        issue_iteration(variant, streams, parts, |kind, s, part| {
            b.op(&self.kernel, self.threads, kind, &streams[s], part)
        })
    }
}

/// `iterations` of an asynchronous order, back to back, traced: checked against
/// `reference` (and traced again while a check fails) where one is given, else traced
/// once for its busy times alone.
fn trace(
    timing: &Timing,
    variant: IssueOrder,
    streams: &[Stream],
    b: &mut Buffers,
    iterations: usize,
    reference: Option<TraceReference>,
) -> Result<Timeline, RuntimeError> {
    let parts = chunks(b.host_a.len(), streams.len());
    let used = streams.len();
    let title = format!("sincos-overlap {}, {used} streams", variant.label());
    let schedule = |rec: &mut trace::Recorder| {
        for iteration in 0..iterations {
            issue_iteration(variant, streams, &parts, |kind, s, part| {
                let bytes =
                    (kind != OpKind::Kernel).then_some((part.len() * size_of::<f32>()) as u64);
                rec.op(s, iteration, kind, bytes, |stream| {
                    b.op(&timing.kernel, timing.threads, kind, stream, part)
                })
            })?;
        }
        Ok(())
    };
    match reference {
        Some(reference) => trace::record(timing.gpu, streams, &title, reference, schedule),
        None => {
            let unchecked = TraceReference {
                timed_ms: f64::NAN,
                back_to_back: true,
                median_ms: None,
                rates: None,
            };
            trace::record_unchecked(timing.gpu, streams, true, &title, unchecked, schedule)
        }
    }
}
