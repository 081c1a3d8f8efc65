//! launch-overhead: what one launch costs, after the CUDA Handbook's nullKernelAsync and
//! breakevenKernelAsync.
//!
//! An empty kernel launched back to back on one stream, timed on the host (issue alone)
//! and on the GPU (events), in Rust and, where NVRTC is present, as its CUDA C++ twin;
//! then launched and waited for, one at a time; then the same launches captured once in
//! a CUDA graph and replayed. Last, kernels that each spin a given time on the GPU's
//! clock, back to back: where the time per kernel approaches the work, the launch cost
//! has stopped mattering. Every spin kernel's own clock reading is checked.
use std::time::Instant;

use streamlab_results::experiments::launch_overhead::{
    BreakevenPoint, GraphCosts, LaunchCosts, LaunchOverhead, LaunchOverheadResult, Params,
};
use streamlab_results::saved::Params as _;

use super::{Context, Run, RunError};
use crate::measure::series;
use crate::runtime::graph::Graph;
use crate::runtime::{DeviceBuffer, Gpu, Kernels, Region, RuntimeError, Shape, Stream};

/// Launches waited for one at a time per sample (they are slow).
const SYNC_LAUNCHES: usize = 1000;

impl Run for LaunchOverhead {
    const SUMMARY: &'static str =
        "What a launch costs, issued on streams and replayed from a CUDA graph";
    const ABOUT: &'static str = "What a launch costs: empty kernels back to back (Rust and CUDA C++), waited \
        for one by one, replayed from a CUDA graph, and the work per kernel at which \
        the launch cost stops mattering";

    fn run(ctx: &Context, p: &Params) -> Result<LaunchOverheadResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let streams = gpu.streams(1)?;
        let stream = &streams[0];
        let region = Region::new(gpu, 1)?;
        let mut sets: Vec<&Kernels> = vec![gpu.kernels()];
        sets.extend(ctx.cuda.map(|c| &c.kernels));
        let mut task = crate::progress::Task::start("launch-overhead", 3);
        let costs = launch_costs(gpu, stream, &region, &sets, p)?;
        task.step("empty kernels");
        let graph = graph_costs(gpu, &streams, &region, p)?;
        task.step("graph replay");
        let mut elapsed: DeviceBuffer<u64> = gpu.alloc(1)?;
        let spin = gpu.kernels().spin;
        let mut breakeven = Vec::new();
        let mut checks = Vec::new();
        for &work in &p.work_us {
            if ctx.stopping() {
                break;
            }
            let ns = u64::from(work) * 1000;
            let mut samples = Vec::with_capacity(p.sampling.repeats);
            for _ in 0..p.sampling.repeats {
                stream.poison(&mut elapsed)?;
                region.begin(&streams)?;
                for _ in 0..p.breakeven_launches {
                    stream.launch(&spin, Shape::linear(1, 32), (elapsed.all_mut(), ns))?;
                }
                samples.push(region.end(&streams)? * 1e3 / p.breakeven_launches as f64);
            }
            let mut host = gpu.pinned(1, 0u64)?;
            stream.dtoh(&mut host, 0, &elapsed, 0..1)?;
            stream.synchronize()?;
            let spun = host.as_slice()?[0];
            checks.push(crate::verify::compare(
                &format!("spin {work} µs"),
                &[spun as f64],
                |_| ns as f64 + 5e8,
                5e8,
            ));
            breakeven.push(BreakevenPoint {
                work_us: work,
                per_kernel_us: series(samples),
            });
        }
        task.step("breakeven");
        task.finish();
        Ok(LaunchOverheadResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), !ctx.stopping()),
            stream: costs,
            graph,
            breakeven,
        })
    }
}

/// The empty kernel of each set: back to back (host and GPU time), and one at a time;
/// the sets take turns sample by sample, so drift on the host hits each alike.
fn launch_costs(
    gpu: &Gpu,
    stream: &Stream,
    region: &Region,
    sets: &[&Kernels],
    p: &Params,
) -> Result<Vec<LaunchCosts>, RuntimeError> {
    let one = Shape::linear(1, 1);
    let streams = std::slice::from_ref(stream);
    for set in sets {
        stream.launch(&set.empty, one, ())?;
    }
    gpu.synchronize()?;
    let mut samples = vec![(Vec::new(), Vec::new(), Vec::new()); sets.len()];
    for _ in 0..p.sampling.repeats {
        for (set, (host, device, sync)) in sets.iter().zip(&mut samples) {
            region.begin(streams)?;
            let started = Instant::now();
            for _ in 0..p.launches {
                stream.launch(&set.empty, one, ())?;
            }
            host.push(started.elapsed().as_secs_f64() * 1e6 / p.launches as f64);
            region.mark_end(streams)?;
            device.push(region.elapsed_ms()? * 1e3 / p.launches as f64);
            let launches = SYNC_LAUNCHES.min(p.launches);
            let started = Instant::now();
            for _ in 0..launches {
                stream.launch(&set.empty, one, ())?;
                stream.synchronize()?;
            }
            sync.push(started.elapsed().as_secs_f64() * 1e6 / launches as f64);
        }
    }
    Ok((sets.iter().zip(samples))
        .map(|(set, (host, device, sync))| LaunchCosts {
            kernels: set.set,
            async_host_us: series(host),
            async_gpu_us: series(device),
            sync_us: series(sync),
        })
        .collect())
}

/// `graph_nodes` empty launches captured once, replayed until `launches` kernels ran.
fn graph_costs(
    gpu: &Gpu,
    streams: &[Stream],
    region: &Region,
    p: &Params,
) -> Result<GraphCosts, RuntimeError> {
    let empty = gpu.kernels().empty;
    let one = Shape::linear(1, 1);
    let graph = Graph::capture(gpu, &streams[..1], || {
        (0..p.graph_nodes).try_for_each(|_| streams[0].launch(&empty, one, ()))
    })?;
    // SAFETY: the graph holds empty kernels only: no buffer to keep or wait for.
    unsafe { graph.launch(&streams[0]) }?;
    gpu.synchronize()?;
    let replays = p.launches.div_ceil(p.graph_nodes);
    let kernels = (replays * p.graph_nodes) as f64;
    let (mut host, mut device) = (Vec::new(), Vec::new());
    for _ in 0..p.sampling.repeats {
        region.begin(&streams[..1])?;
        let started = Instant::now();
        for _ in 0..replays {
            // SAFETY: as above, empty kernels only.
            unsafe { graph.launch(&streams[0]) }?;
        }
        host.push(started.elapsed().as_secs_f64() * 1e6 / kernels);
        region.mark_end(&streams[..1])?;
        device.push(region.elapsed_ms()? * 1e3 / kernels);
    }
    Ok(GraphCosts {
        host_us: series(host),
        gpu_us: series(device),
    })
}
