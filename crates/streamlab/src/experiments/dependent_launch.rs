//! dependent-launch: chains of `chain_step` kernels (one block per SM) on one stream,
//! launched plainly, with programmatic dependent launch, and replayed from a CUDA graph
//! captured from the plain launches, for each work size, with the Rust kernels and
//! (where NVRTC is present) their CUDA C++ twins. Each chain is issued behind a closed
//! gate that the host opens once all of it is issued, so the gaps are the GPU's, not the
//! host's issuing. Before each chain the counts are zeroed and the stamps poisoned; after
//! it, every block's count must be the chain's length (a kernel that began before the one
//! ahead ended would lose a step), and each kernel's gap is read from the stamps: the
//! beginning of its work less the end of the work ahead. The global timer ticks coarsely
//! (hundreds of nanoseconds on some GPUs), so a chain's sample is the mean of its gaps.
use streamlab_results::experiments::dependent_launch::{
    ChainPoint, DependentLaunch, DependentLaunchResult, Params, Way,
};
use streamlab_results::saved::Params as _;
use streamlab_results::saved::{KernelSet, Verification};

use super::{Context, Run, RunError};
use crate::runtime::gate::Gate;
use crate::runtime::graph::Graph;
use crate::runtime::{
    DeviceBuffer, Function, Gpu, Kernels, PinnedBuffer, RuntimeError, Shape, Stream,
};

/// Threads of each chain kernel's block (thread 0 does the work).
const THREADS: u32 = 32;

type ChainFn = Function<<kernels_rs::chain_step as nvptx_kernel::Kernel>::Args>;

impl Run for DependentLaunch {
    const SUMMARY: &'static str = "The gap between dependent kernels: plain, PDL, a CUDA graph";
    const ABOUT: &'static str = "The gap between dependent kernels in one stream: launched one after another, \
        with programmatic dependent launch (Hopper), and replayed from a CUDA graph, over \
        work per kernel from none to long, Rust kernels and their CUDA C++ twins";

    fn run(ctx: &Context, p: &Params) -> Result<DependentLaunchResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        let blocks = gpu.info().sm_count.max(1) as u32;
        let streams = gpu.streams(1)?;
        let mut chain = Chain {
            gpu,
            stream: &streams[0],
            shape: Shape::linear(blocks, THREADS),
            length: p.chain,
            stamps: gpu.alloc(2 * p.chain)?,
            counts: gpu.alloc(blocks as usize)?,
            host_stamps: gpu.pinned(2 * p.chain, 0u64)?,
            host_counts: gpu.pinned(blocks as usize, 0u32)?,
            gate: Gate::new(gpu)?,
        };
        let mut sets: Vec<(KernelSet, &Kernels)> = vec![(KernelSet::Rust, gpu.kernels())];
        sets.extend(ctx.cuda.map(|c| (KernelSet::Cuda, &c.kernels)));
        let mut task =
            crate::progress::Task::start("dependent-launch", (sets.len() * p.spin_us.len()) as u64);
        let (mut points, mut checks) = (Vec::new(), Vec::new());
        for &(set, kernels) in &sets {
            for &spin_us in &p.spin_us {
                if ctx.stopping() {
                    break;
                }
                let ns = u64::from(spin_us) * 1000;
                for way in Way::ALL {
                    let mut gaps_us = Vec::new();
                    let graph = match way {
                        Way::Graph => Some(chain.capture(kernels.chain_step, ns)?),
                        _ => None,
                    };
                    for _ in 0..p.repeats {
                        let (gap, check) =
                            chain.run(kernels.chain_step, ns, way, graph.as_ref(), set)?;
                        gaps_us.push(gap);
                        checks.push(check);
                    }
                    points.push(ChainPoint {
                        kernels: set,
                        way,
                        spin_us,
                        gaps_us,
                    });
                }
                task.step(&format!("{}, {spin_us} µs", set.label()));
            }
        }
        task.finish();
        Ok(DependentLaunchResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), !ctx.stopping()),
            blocks,
            points,
        })
    }
}

/// One stream's chain of kernels, the buffers they stamp and count in, and the host's
/// copies of them to check.
struct Chain<'a> {
    gpu: &'a Gpu,
    stream: &'a Stream<'a>,
    shape: Shape,
    length: usize,
    stamps: DeviceBuffer<u64>,
    counts: DeviceBuffer<u32>,
    host_stamps: PinnedBuffer<u64>,
    host_counts: PinnedBuffer<u32>,
    gate: Gate,
}

impl Chain<'_> {
    /// Launch step `step` of the chain plainly.
    fn launch(&mut self, f: ChainFn, ns: u64, step: usize) -> Result<(), RuntimeError> {
        let args = (
            self.stamps.all_mut(),
            self.counts.all_mut(),
            ns,
            step as u32,
        );
        self.stream.launch(&f, self.shape, args)
    }

    /// The chain's plain launches captured into a graph.
    fn capture(&mut self, f: ChainFn, ns: u64) -> Result<Graph, RuntimeError> {
        let (gpu, stream) = (self.gpu, self.stream);
        Graph::capture(gpu, std::slice::from_ref(stream), || {
            (0..self.length).try_for_each(|step| self.launch(f, ns, step))
        })
    }

    /// One chain launched `way` (from `graph` for a graph) behind the gate: the mean of
    /// its kernels' gaps after the one ahead, µs, and the check of its counts and stamps.
    fn run(
        &mut self,
        f: ChainFn,
        ns: u64,
        way: Way,
        graph: Option<&Graph>,
        set: KernelSet,
    ) -> Result<(f64, Verification), RuntimeError> {
        self.stream.memset_d32(&mut self.counts, 0)?;
        self.stream.poison(&mut self.stamps)?;
        self.gate.close();
        self.gate.hold(self.stream)?;
        match (way, graph) {
            (Way::Graph, Some(graph)) => {
                // SAFETY: the graph's kernels write the stamps and counts this chain
                // owns, which live until it is dropped; the GPU is waited for below
                // before the host reads them.
                unsafe { graph.launch(self.stream) }?;
            }
            (Way::Programmatic, _) => {
                for step in 0..self.length {
                    let args = (
                        self.stamps.all_mut(),
                        self.counts.all_mut(),
                        ns,
                        step as u32,
                    );
                    // SAFETY: chain_step waits (griddepcontrol.wait) before it touches the
                    // stamps or the counts, the only memory the kernel ahead touches.
                    unsafe { self.stream.launch_programmatic(&f, self.shape, args) }?;
                }
            }
            _ => {
                for step in 0..self.length {
                    self.launch(f, ns, step)?;
                }
            }
        }
        self.gate.open();
        self.gpu.synchronize()?;
        self.stream
            .dtoh(&mut self.host_stamps, 0, &self.stamps, 0..self.stamps.len())?;
        self.stream
            .dtoh(&mut self.host_counts, 0, &self.counts, 0..self.counts.len())?;
        self.stream.synchronize()?;
        let stamps = self.host_stamps.as_slice()?;
        let gaps: Vec<f64> = (0..self.length - 1)
            .map(|k| (stamps[2 * k + 2] as f64 - stamps[2 * k + 1] as f64) / 1e3)
            .collect();
        let what = format!("{}, {}, {} µs", set.label(), way.label(), ns / 1000);
        let mut check = crate::verify::compare(
            &format!("{what}: every block counted every step"),
            self.host_counts.as_slice()?,
            |_| self.length as f64,
            0.0,
        );
        if check.passed {
            // A kernel's work begins after the work ahead ended, and within a second.
            check = crate::verify::compare(
                &format!("{what}: every kernel began after the one ahead ended"),
                &gaps,
                |_| 5e5,
                5e5,
            );
        }
        Ok((gaps.iter().sum::<f64>() / gaps.len() as f64, check))
    }
}
