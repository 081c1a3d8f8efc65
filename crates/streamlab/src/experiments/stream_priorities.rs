//! stream-priorities: a long grid of spin kernels' blocks on a stream of the least
//! priority, and short probe kernels issued while it runs, each on a stream of its own,
//! at the default priority and then at the greatest; then a long copy to the device and
//! short probe copies issued while it runs, both ways. The host spreads the probes over the long
//! operation's span (timed alone first), each issued at its moment by a spin on the
//! host's clock; the schedule is traced as the host issues it (no gate), so a probe's
//! ready time in the GPU's records is its issue, and its wait is its start less that.
//! Every block spun at least its time, and every copy arrived whole.
use std::time::{Duration, Instant};

use streamlab_results::experiments::stream_priorities::{
    Params, StreamPriorities, StreamPrioritiesResult, WayRun, Work, way_label,
};
use streamlab_results::saved::Params as _;
use streamlab_results::saved::Verification;
use streamlab_results::saved::timeline::{OpKind, Timeline, TraceReference};

use super::{Context, Run, RunError};
use crate::runtime::{DeviceBuffer, Function, Gpu, PinnedBuffer, RuntimeError, Shape, Stream};
use crate::trace::{self, Recorder};

/// Threads of each spin kernel's block.
const SPIN_THREADS: u32 = 32;
/// 32-bit words of each probe copy (4 KiB).
const PROBE_WORDS: usize = 1024;

type SpinFn = Function<<kernels_rs::spin as nvptx_kernel::Kernel>::Args>;

impl Run for StreamPriorities {
    const SUMMARY: &'static str =
        "What a stream's priority buys a short kernel behind a grid that fills the GPU";
    const ABOUT: &'static str = "What a stream's priority buys: short probe kernels issued while a long grid \
        fills the GPU, at the default priority and at the greatest, each probe's wait from \
        issue to start (p50, p99, from CUPTI) beside the next-block-boundary model; and \
        short copies issued while a long one runs, which priorities do not reach";

    fn run(ctx: &Context, p: &Params) -> Result<StreamPrioritiesResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let (least, greatest) = gpu.stream_priorities()?;
        let spin = ctx.kernels.spin;
        let resident = spin.blocks_per_sm(SPIN_THREADS)?.max(1) * gpu.info().sm_count.max(1) as u32;
        let long_blocks = resident * p.waves;
        let mut bench = Bench {
            gpu,
            p,
            spin,
            long_blocks,
            long_elapsed: gpu.alloc(long_blocks as usize)?,
            probe_elapsed: gpu.alloc(p.probes)?,
            long_host: gpu.pinned(p.copy_mib << 18, 0u32)?,
            long_device: gpu.alloc(p.copy_mib << 18)?,
            probe_host: gpu.pinned(p.probes * PROBE_WORDS, 0u32)?,
            probe_device: gpu.alloc(p.probes * PROBE_WORDS)?,
        };
        bench.fill()?;
        let mut task = crate::progress::Task::start("stream-priorities", 4 * p.rounds as u64);
        let mut ways = Vec::new();
        for work in [Work::Kernels, Work::Copies] {
            for prioritized in [false, true] {
                if ctx.stopping() {
                    break;
                }
                let probe_priority = if prioritized { greatest } else { least };
                let mut streams = gpu.streams_at(1, least)?;
                streams.extend(gpu.streams_at(p.probes, probe_priority)?);
                let alone_ms = bench.alone(&streams[0], work)?;
                let mut way = WayRun {
                    work,
                    prioritized,
                    waits_ms: Vec::new(),
                    long_ms: Vec::new(),
                };
                let label = way_label(work, prioritized);
                for round in 0..p.rounds {
                    let t = bench.trace(&streams, work, prioritized, alone_ms)?;
                    let (waits, long) = waits(&t);
                    way.waits_ms.extend(waits);
                    way.long_ms.extend(long);
                    task.step(&format!("{label}, round {}", round + 1));
                }
                ways.push(way);
            }
        }
        task.finish();
        let verification = bench.check()?;
        Ok(StreamPrioritiesResult {
            run: ctx.record(p.clone(), verification, !ctx.stopping()),
            priority_range: (least, greatest),
            resident_blocks: resident,
            long_blocks,
            ways,
        })
    }
}

/// Each probe's wait from issue to start (operations on every stream but the first),
/// and the long operation's span, in ms: from a timeline whose ready times are the
/// host's issue (none where it was drawn from events, which have no ready times).
fn waits(t: &Timeline) -> (Vec<f64>, Option<f64>) {
    let long = (t.ops.iter())
        .find(|o| o.stream == 0)
        .map(|o| o.end_ms - o.start_ms);
    let waits = (t.ops.iter())
        .filter(|o| o.stream > 0)
        .filter_map(|o| o.ready_ms.map(|r| (o.start_ms - r).max(0.0)))
        .collect();
    (waits, long)
}

/// The buffers and the kernel the ways share.
struct Bench<'a> {
    gpu: &'a Gpu,
    p: &'a Params,
    spin: SpinFn,
    long_blocks: u32,
    long_elapsed: DeviceBuffer<u64>,
    probe_elapsed: DeviceBuffer<u64>,
    long_host: PinnedBuffer<u32>,
    long_device: DeviceBuffer<u32>,
    probe_host: PinnedBuffer<u32>,
    probe_device: DeviceBuffer<u32>,
}

impl Bench<'_> {
    /// Words that differ at every index, so that a copy to the wrong place shows.
    fn fill(&mut self) -> Result<(), RuntimeError> {
        let word = |i: usize| (i as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995;
        crate::parallel::for_each_chunk_mut(self.long_host.as_mut_slice()?, |start, c| {
            for (k, x) in c.iter_mut().enumerate() {
                *x = word(start + k);
            }
        });
        let offset = self.long_host.len();
        crate::parallel::for_each_chunk_mut(self.probe_host.as_mut_slice()?, |start, c| {
            for (k, x) in c.iter_mut().enumerate() {
                *x = word(offset + start + k);
            }
        });
        Ok(())
    }

    /// Issue `work`'s long operation on `stream`.
    fn long(&mut self, stream: &Stream, work: Work) -> Result<(), RuntimeError> {
        match work {
            Work::Kernels => stream.launch(
                &self.spin,
                Shape::linear(self.long_blocks, SPIN_THREADS),
                (
                    self.long_elapsed.all_mut(),
                    u64::from(self.p.block_us) * 1000,
                ),
            ),
            Work::Copies => {
                let n = self.long_host.len();
                stream.htod(&mut self.long_device, 0, &self.long_host, 0..n)
            }
        }
    }

    /// Issue `work`'s probe `k` on `stream`.
    fn probe(&mut self, stream: &Stream, work: Work, k: usize) -> Result<(), RuntimeError> {
        match work {
            Work::Kernels => stream.launch(
                &self.spin,
                Shape::linear(1, SPIN_THREADS),
                (
                    self.probe_elapsed.slice_mut(k..k + 1),
                    u64::from(self.p.probe_us) * 1000,
                ),
            ),
            Work::Copies => {
                let words = k * PROBE_WORDS..(k + 1) * PROBE_WORDS;
                stream.htod(&mut self.probe_device, words.start, &self.probe_host, words)
            }
        }
    }

    /// The long operation alone on `stream`, timed with events (ms).
    fn alone(&mut self, stream: &Stream, work: Work) -> Result<f64, RuntimeError> {
        let (began, ended) = (self.gpu.event()?, self.gpu.event()?);
        stream.record(&began)?;
        self.long(stream, work)?;
        stream.record(&ended)?;
        began.elapsed_ms(&ended)
    }

    /// One traced round: the long operation on the first stream, then each probe on a
    /// stream of its own, issued at even steps over `alone_ms`.
    fn trace(
        &mut self,
        streams: &[Stream],
        work: Work,
        prioritized: bool,
        alone_ms: f64,
    ) -> Result<Timeline, RuntimeError> {
        let probes = self.p.probes;
        let step = Duration::from_secs_f64(alone_ms / 1e3 / (probes + 1) as f64);
        let title = format!(
            "stream-priorities, {} behind a long one, {}",
            work.label(),
            if prioritized {
                "probes at the greatest priority"
            } else {
                "every stream at the default priority"
            }
        );
        let reference = TraceReference {
            timed_ms: alone_ms,
            median_ms: None,
            back_to_back: false,
            rates: None,
        };
        let kind = match work {
            Work::Kernels => OpKind::Kernel,
            Work::Copies => OpKind::HtoD,
        };
        let (long_bytes, probe_bytes) = match work {
            Work::Kernels => (None, None),
            Work::Copies => (
                Some((self.long_host.len() * 4) as u64),
                Some((PROBE_WORDS * 4) as u64),
            ),
        };
        // No gate: a probe's ready time must be its issue.
        trace::record_unchecked(
            self.gpu,
            streams,
            false,
            &title,
            reference,
            |rec: &mut Recorder| {
                rec.op(0, 0, kind, long_bytes, |s| self.long(s, work))?;
                let issued = Instant::now();
                for k in 0..probes {
                    let at = step * (k as u32 + 1);
                    while issued.elapsed() < at {
                        std::hint::spin_loop();
                    }
                    rec.op(1 + k, 0, kind, probe_bytes, |s| self.probe(s, work, k))?;
                }
                Ok(())
            },
        )
    }

    /// Every block of the long grid and every probe spun at least its time (and under a
    /// second more); the long copy and every probe copy arrived whole.
    fn check(&self) -> Result<Verification, RuntimeError> {
        let stream = &self.gpu.streams(1)?[0];
        let spun = |elapsed: &DeviceBuffer<u64>, us: u32, what: &str| {
            let mut host = self.gpu.pinned(elapsed.len(), 0u64)?;
            stream.dtoh(&mut host, 0, elapsed, 0..elapsed.len())?;
            stream.synchronize()?;
            let ns: Vec<f64> = host.as_slice()?.iter().map(|&x| x as f64).collect();
            let least = f64::from(us) * 1e3;
            Ok::<_, RuntimeError>(crate::verify::compare(what, &ns, |_| least + 5e8, 5e8))
        };
        let arrived = |device: &DeviceBuffer<u32>, host: &PinnedBuffer<u32>, what: &str| {
            let mut back = self.gpu.pinned(device.len(), 0u32)?;
            stream.dtoh(&mut back, 0, device, 0..device.len())?;
            stream.synchronize()?;
            Ok::<_, RuntimeError>(crate::verify::identical(
                what,
                back.as_slice()?,
                host.as_slice()?,
                |i| format!("word {i}"),
            ))
        };
        Ok(crate::verify::combine(vec![
            spun(
                &self.long_elapsed,
                self.p.block_us,
                "the long grid's blocks spun their time",
            )?,
            spun(
                &self.probe_elapsed,
                self.p.probe_us,
                "the probe kernels spun their time",
            )?,
            arrived(&self.long_device, &self.long_host, "the long copy")?,
            arrived(&self.probe_device, &self.probe_host, "the probe copies")?,
        ]))
    }
}
