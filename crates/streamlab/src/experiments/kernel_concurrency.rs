//! kernel-concurrency: how many kernels really run at once, after NVIDIA's simpleHyperQ
//! and the CUDA Handbook's concurrencyKernelKernel.
//!
//! Each of `N` streams launches two `spin` kernels (one block each) that each run a fixed
//! time on the GPU's global timer, the second after the first as simpleHyperQ's
//! kernel_A and kernel_B; the same `2N` kernels also run one after another on one
//! stream. Every timed run is issued behind a closed gate that the host opens once all
//! of it is issued, so the times are the GPU's, not the host's issuing.
//! The driver reads `CUDA_DEVICE_MAX_CONNECTIONS` (the hardware work queues streams are
//! spread over) once, when it starts, so every queue setting runs in its own process:
//! this one starts `streamlab kernel-concurrency --worker-queues Q` with the variable set
//! to Q, and reads the worker's measurements from its standard output as JSON. Each
//! worker checks that every kernel spun at least its time, and traces the 32-stream case
//! from the GPU's records.
use std::process::{Command, Stdio};

use streamlab_results::experiments::kernel_concurrency::{
    ConcurrencyPoint, KERNELS_PER_STREAM, KernelConcurrency, KernelConcurrencyResult, Params,
    QueueRun,
};
use streamlab_results::saved::Params as _;
use streamlab_results::saved::Verification;
use streamlab_results::saved::timeline::{OpKind, Timeline, TraceReference};

use super::{Context, Run, RunError};
use crate::measure::series;
use crate::runtime::gate::Gate;
use crate::runtime::{DeviceBuffer, Gpu, Region, RuntimeError, Shape, Stream};
use crate::trace;

/// The most grids a GPU of compute capability 5.0 to 9.0 and later keeps resident at
/// once (CUDA Programming Guide, "Compute Capabilities"; no device attribute reports it).
const MAX_RESIDENT_GRIDS: u32 = 128;
/// Threads of each spin kernel's one block.
const SPIN_THREADS: u32 = 32;

impl Run for KernelConcurrency {
    const SUMMARY: &'static str =
        "How many kernels run at once, with 8 and with 32 hardware queues";
    const ABOUT: &'static str = "How many kernels run at once: one spin kernel on each of N streams, with 8 and \
        with 32 hardware queues (each in its own process), against the same kernels \
        one after another, beside the hardware-queue model";

    fn worker(p: &Params) -> Option<super::Worker<Params>> {
        let work: super::Worker<Params> = |ctx, p| {
            let queues = p
                .worker_queues
                .expect("a worker's parameters name its queues");
            let run = worker(ctx, p, queues)?;
            Ok(serde_json::to_string(&run).expect("a worker's result serialises"))
        };
        p.worker_queues.map(|_| work)
    }

    fn run(ctx: &Context, p: &Params) -> Result<KernelConcurrencyResult, RunError> {
        p.validate()?;
        let exe = std::env::current_exe().map_err(|e| {
            RunError::Input(format!(
                "cannot find the streamlab program to start workers: {e}"
            ))
        })?;
        let mut runs = Vec::new();
        for &queues in &p.queues {
            if ctx.stopping() {
                break;
            }
            crate::progress::note(&format!(
                "kernel-concurrency: {queues} hardware queues, in a worker process"
            ));
            let mut worker = Command::new(&exe);
            worker
                .arg("kernel-concurrency")
                .args(["--device", &ctx.gpu.info().ordinal.to_string()])
                .args(["--spin-us", &p.spin_us.to_string()])
                .args(["--stream-counts", &join(&p.stream_counts)])
                .args(["--repeats", &p.sampling.repeats.to_string()])
                .args(["--worker-queues", &queues.to_string()])
                .env(crate::runtime::QUEUES_VARIABLE, queues.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit());
            let output = worker
                .output()
                .map_err(|e| RunError::Input(format!("could not start a worker: {e}")))?;
            if !output.status.success() {
                return Err(RunError::Input(format!(
                    "the worker with {queues} hardware queues failed ({})",
                    output.status
                )));
            }
            let run: QueueRun = serde_json::from_slice(&output.stdout).map_err(|e| {
                RunError::Input(format!(
                    "the worker with {queues} queues sent no result: {e}"
                ))
            })?;
            runs.push(run);
        }
        let complete = !ctx.stopping() && runs.len() == p.queues.len();
        Ok(KernelConcurrencyResult {
            run: ctx.record(
                p.clone(),
                crate::verify::combine(runs.iter().map(|r| r.verification.clone()).collect()),
                complete,
            ),
            max_resident_grids: MAX_RESIDENT_GRIDS,
            runs,
        })
    }
}

fn join(values: &[usize]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A worker's measurements with the hardware queues this process started with.
fn worker(ctx: &Context, p: &Params, queues: u32) -> Result<QueueRun, RunError> {
    let gpu = ctx.gpu;
    let most = p.stream_counts.iter().copied().max().unwrap_or(1);
    let streams = gpu.streams(most)?;
    let mut elapsed: DeviceBuffer<u64> = gpu.alloc(KERNELS_PER_STREAM * most)?;
    let ns = u64::from(p.spin_us) * 1000;
    let spin = Spin {
        gpu,
        ns,
        kernel: ctx.kernels.spin,
    };
    let mut gate = Gate::new(gpu)?;
    let mut task = crate::progress::Task::start(
        &format!("{queues} queues"),
        p.stream_counts.len() as u64 + 2,
    );
    let one = Region::new(gpu, 1)?;
    let mut single = Vec::with_capacity(p.sampling.repeats);
    for _ in 0..p.sampling.repeats {
        single.push(gated(&mut gate, &streams[..1], &one, &mut || {
            spin.launch(&streams[0], &mut elapsed, 0)
        })?);
    }
    task.step("one kernel alone");
    let mut points = Vec::new();
    let mut checks = Vec::new();
    for &n in &p.stream_counts {
        if ctx.stopping() {
            break;
        }
        points.push(measure_streams(
            &spin,
            (&mut gate, &streams, &one),
            &mut elapsed,
            (n, p.sampling.repeats, queues),
            &mut checks,
        )?);
        task.step(&format!("{n} streams"));
    }
    let traced = p.stream_counts.iter().copied().filter(|&n| n <= 32).max();
    let timeline = match traced.zip(points.iter().find(|q| Some(q.streams) == traced)) {
        Some((n, point)) if !ctx.stopping() => Some(trace_streams(
            &spin,
            &streams[..n],
            &mut elapsed,
            point,
            queues,
        )?),
        _ => None,
    };
    task.step("traced");
    task.finish();
    Ok(QueueRun {
        queues,
        single: series(single),
        points,
        verification: crate::verify::combine(checks),
        timeline,
    })
}

/// Issue `launches` behind the gate on `used`, open it, and time it.
fn gated(
    gate: &mut Gate,
    used: &[Stream],
    region: &Region,
    launches: &mut dyn FnMut() -> Result<(), RuntimeError>,
) -> Result<f64, RuntimeError> {
    gate.close();
    gate.hold(&used[0])?;
    region.begin(used)?;
    launches()?;
    region.mark_end(used)?;
    gate.open();
    region.elapsed_ms()
}

/// `repeats` gated samples with `n` streams: one spin kernel after another on each
/// stream, all at once, checked each time; and the same kernels one after another on
/// the first stream, timed by `one`.
fn measure_streams(
    spin: &Spin,
    (gate, streams, one): (&mut Gate, &[Stream], &Region),
    elapsed: &mut DeviceBuffer<u64>,
    (n, repeats, queues): (usize, usize, u32),
    checks: &mut Vec<Verification>,
) -> Result<ConcurrencyPoint, RuntimeError> {
    let used = &streams[..n];
    let region = Region::new(spin.gpu, n)?;
    let (mut concurrent, mut serial) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        streams[0].poison(elapsed)?;
        concurrent.push(gated(gate, used, &region, &mut || {
            for (s, stream) in used.iter().enumerate() {
                for k in 0..KERNELS_PER_STREAM {
                    spin.launch(stream, elapsed, KERNELS_PER_STREAM * s + k)?;
                }
            }
            Ok(())
        })?);
        checks.push(spin.check(
            elapsed,
            KERNELS_PER_STREAM * n,
            &format!("{n} streams, {queues} queues"),
        )?);
        serial.push(gated(gate, &streams[..1], one, &mut || {
            for slot in 0..KERNELS_PER_STREAM * n {
                spin.launch(&streams[0], elapsed, slot)?;
            }
            Ok(())
        })?);
    }
    Ok(ConcurrencyPoint {
        streams: n,
        concurrent: series(concurrent),
        serial: series(serial),
    })
}

/// The `used.len()`-stream case traced from the GPU's records, against `point`'s
/// fastest time.
fn trace_streams(
    spin: &Spin,
    used: &[Stream],
    elapsed: &mut DeviceBuffer<u64>,
    point: &ConcurrencyPoint,
    queues: u32,
) -> Result<Timeline, RuntimeError> {
    let n = used.len();
    let reference = TraceReference {
        timed_ms: point.concurrent.min(),
        back_to_back: false,
        median_ms: None,
        rates: None,
    };
    let title = format!("kernel-concurrency, {n} streams, {queues} hardware queues");
    trace::record(spin.gpu, used, &title, reference, |rec| {
        for s in 0..n {
            for k in 0..KERNELS_PER_STREAM {
                rec.op(s, 0, OpKind::Kernel, None, |stream| {
                    spin.launch(stream, elapsed, KERNELS_PER_STREAM * s + k)
                })?;
            }
        }
        Ok(())
    })
}

/// Launching and checking spin kernels.
struct Spin<'a> {
    gpu: &'a Gpu,
    ns: u64,
    kernel: crate::runtime::Function<<kernels_rs::spin as nvptx_kernel::Kernel>::Args>,
}

impl Spin<'_> {
    /// One spin kernel on `stream`, writing its time to `elapsed[slot]`.
    fn launch(
        &self,
        stream: &Stream,
        elapsed: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<(), RuntimeError> {
        stream.launch(
            &self.kernel,
            Shape::linear(1, SPIN_THREADS),
            (elapsed.slice_mut(slot..slot + 1), self.ns),
        )
    }

    /// Every one of the first `n` kernels spun at least its time, and under a second.
    fn check(
        &self,
        elapsed: &DeviceBuffer<u64>,
        n: usize,
        what: &str,
    ) -> Result<streamlab_results::saved::Verification, RuntimeError> {
        let mut host = self.gpu.pinned(elapsed.len(), 0u64)?;
        let stream = &self.gpu.streams(1)?[0];
        stream.dtoh(&mut host, 0, elapsed, 0..elapsed.len())?;
        stream.synchronize()?;
        let ns = self.ns as f64;
        let mid = ns + 5e8;
        let mut v = crate::verify::compare(
            what,
            &host.as_slice()?[..n]
                .iter()
                .map(|&x| x as f64)
                .collect::<Vec<f64>>(),
            |_| mid,
            5e8,
        );
        if v.passed {
            v.detail = format!("{what}: every kernel spun at least {} µs", self.ns / 1000);
        }
        Ok(v)
    }
}
