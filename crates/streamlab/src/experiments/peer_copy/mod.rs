//! peer-copy: copies between the GPUs of one machine. Every GPU chosen gets its primary
//! context, a stream, a pattern buffer (values drawn from a seed of its own, fresh every
//! run) and an inbox the others copy into; NVML says how each pair is joined
//! (`runtime::links`). Each GPU first copies its pattern into its own inbox (device to
//! device), the reference. Then for every ordered pair (source, destination) and size:
//! peer access is turned off both ways and checked off with the driver, and
//! `cuMemcpyPeerAsync` runs with it off (the driver stages it through host memory), one
//! way and both ways at once (source → destination on the source's stream, destination
//! → source on the destination's); then, where both GPUs can reach each other's memory,
//! with peer access on in both directions, the same copies, the copy issued on the
//! destination's stream, and the `copy_u32` kernel launched on the destination reading
//! the source (pull) and on the source writing the destination (push). Peer access is
//! left after each pair as it was found. Each method's samples are event-timed on the
//! stream that leads it (both ways: each direction's stream timed on its own too), more
//! of them where they are noisy; those over the link and within one GPU are issued
//! behind a gate every stream of the sample waits at (`runtime::gate`). Each inbox is
//! poisoned before a method and every element it received is checked on the host
//! afterwards. Needs two or more GPUs: [`Run::unavailable`] says why not otherwise.
mod timing;

use streamlab_results::experiment::Experiment as _;
use streamlab_results::experiments::peer_copy::{
    AccessCheck, LATENCY_BYTES, LocalCopy, LocalPoint, Method, PairResult, Params, PeerCopy,
    PeerCopyResult, PeerPoint,
};
use streamlab_results::saved::Params as _;

use streamlab_results::spread::Devices;

use super::{Context, Rebind, Run, RunError, chosen_gpus, several_gpus};
use crate::measure::series;
use crate::rng::Rng;
use crate::runtime::gate::Gate;
use crate::runtime::{DeviceBuffer, Event, Gpu, RuntimeError, Shape, Stream};
use timing::Bench;

/// Threads per block of the copy kernel.
const THREADS: u32 = 256;
/// Blocks per SM of the copy kernel's grid-stride launch.
const BLOCKS_PER_SM: u32 = 8;

/// One GPU of the run: its context's stream and timing events.
struct Side<'g> {
    gpu: &'g Gpu,
    stream: Stream<'g>,
    /// Start and stop of this GPU's stream's own part of a region.
    start: Event,
    stop: Event,
    /// The end of a region this GPU's stream leads, once it has joined the other's.
    end: Event,
    /// The seed of its pattern.
    seed: u64,
}

/// One GPU's memory: its pattern, copied to the others, and its inbox.
struct Memory {
    pattern: DeviceBuffer<u32>,
    inbox: DeviceBuffer<u32>,
}

/// Every GPU of the run; dropped GPU by GPU with its context current.
struct Gpus<'g> {
    sides: Vec<Side<'g>>,
    memory: Vec<Memory>,
}

impl Drop for Gpus<'_> {
    fn drop(&mut self) {
        for (side, memory) in self.sides.drain(..).zip(self.memory.drain(..)) {
            let _ = side.gpu.bind();
            let _ = side.gpu.synchronize();
            drop(memory);
            drop(side);
        }
    }
}

/// About how many bytes one timed sample moves each way: small copies are repeated
/// back to back up to this, at most [`MAX_PASSES`] times.
const SAMPLE_BYTES: u64 = 64 << 20;
/// The most copies in one timed sample.
const MAX_PASSES: u64 = 256;

/// The copy sizes, in bytes, ascending.
fn sizes(p: &Params) -> Vec<u64> {
    (p.min_exponent..=p.max_exponent)
        .step_by(p.exponent_step as usize)
        .map(|e| 1u64 << e)
        .collect()
}

/// Copies of `bytes` timed back to back as one sample.
fn passes(bytes: u64) -> usize {
    (SAMPLE_BYTES / bytes.max(1)).clamp(1, MAX_PASSES) as usize
}

/// Element `i` of the pattern drawn from `seed`: never the poison's all-ones word.
fn pattern(seed: u64, i: usize) -> u32 {
    let mut rng = Rng::new(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (rng.next_u64() >> 33) as u32
}

/// The source's memory and the destination's, `src != dst`.
fn pair_mut(memory: &mut [Memory], src: usize, dst: usize) -> (&Memory, &mut Memory) {
    assert_ne!(src, dst, "a pair is two GPUs");
    if src < dst {
        let (low, high) = memory.split_at_mut(dst);
        (&low[src], &mut high[0])
    } else {
        let (low, high) = memory.split_at_mut(src);
        (&high[0], &mut low[dst])
    }
}

/// The copy kernel's launch shape on `gpu` for `n` elements.
fn copy_shape(gpu: &Gpu, n: usize) -> Shape {
    let most = gpu.info().sm_count.max(1) as u32 * BLOCKS_PER_SM;
    let blocks = Shape::cover(n, THREADS).grid.0.min(most);
    Shape::linear(blocks, THREADS)
}

/// The elements, passes per sample and least samples of a sample of copies of `bytes`.
fn sample_shape(p: &Params, bytes: u64) -> (usize, usize, usize) {
    let elements = (bytes as usize / size_of::<u32>()).max(1);
    (elements, passes(bytes), p.sampling.repeats)
}

/// Peer access between a pair's GPUs as found, put back as it was when this goes: by
/// [`FoundAccess::restore`], or, on an error path, on drop.
struct FoundAccess<'a> {
    /// Source and destination.
    gpus: [&'a Gpu; 2],
    /// Whether it was on from the source to the destination, and back.
    on: [bool; 2],
    restored: bool,
}

impl<'a> FoundAccess<'a> {
    /// Peer access turned off both ways, once both GPUs have finished their work, and
    /// checked off with the driver; what was found.
    fn turn_off(src: &'a Gpu, dst: &'a Gpu) -> Result<FoundAccess<'a>, RuntimeError> {
        let mut found = FoundAccess {
            gpus: [src, dst],
            on: [false; 2],
            restored: false,
        };
        found.on[0] = src.disable_peer_access_checked(dst)?;
        found.on[1] = dst.disable_peer_access_checked(src)?;
        Ok(found)
    }

    fn put_back(&self) -> Result<(), RuntimeError> {
        let [src, dst] = self.gpus;
        src.set_peer_access(dst, self.on[0])?;
        dst.set_peer_access(src, self.on[1])
    }

    /// Peer access as it was found; what that was.
    fn restore(mut self) -> Result<[bool; 2], RuntimeError> {
        self.restored = true;
        self.put_back()?;
        Ok(self.on)
    }
}

impl Drop for FoundAccess<'_> {
    fn drop(&mut self) {
        if !self.restored {
            let _ = self.put_back();
        }
    }
}

/// Measure one ordered pair over every size: peer access checked off, then on in both
/// directions (where both GPUs can reach each other), then as it was found.
fn measure_pair(
    ctx: &Context,
    p: &Params,
    bench: &mut Bench,
    pair: (usize, usize),
) -> Result<PairResult, RuntimeError> {
    let (src, dst) = (bench.sides[pair.0].gpu, bench.sides[pair.1].gpu);
    let peer_access = src.can_access_peer(dst)? && dst.can_access_peer(src)?;
    let found = FoundAccess::turn_off(src, dst)?;
    let mut points = Vec::new();
    for bytes in sizes(p) {
        if ctx.stopping() {
            break;
        }
        let shape = sample_shape(p, bytes);
        let staged = bench.sample(Method::Staged, pair, shape)?;
        let both = bench.sample(Method::StagedBoth, pair, shape)?;
        points.push(PeerPoint {
            bytes,
            passes: passes(bytes),
            staged: series(staged.total),
            staged_both: series(both.total),
            peer: None,
            peer_both: None,
            kernel_pull: None,
            kernel_push: None,
            peer_dst: None,
            staged_both_each: both.each_way.map(|ways| ways.map(series)),
            peer_both_each: None,
        });
    }
    let latency_staged = bench.latency(Method::Staged, pair, p.latency_copies)?;
    let latency_peer = if peer_access {
        src.enable_peer_access(dst)?;
        dst.enable_peer_access(src)?;
        measure_peer(ctx, p, bench, pair, &mut points)?;
        Some(series(bench.latency(
            Method::Peer,
            pair,
            p.latency_copies,
        )?))
    } else {
        None
    };
    let found_on = found.restore()?;
    Ok(PairResult {
        src: src.info().ordinal,
        dst: dst.info().ordinal,
        peer_access,
        points,
        latency_staged: series(latency_staged),
        latency_peer,
        access: Some(AccessCheck {
            found_on,
            staged_checked_off: true,
        }),
    })
}

/// With peer access on in both directions, every peer method at the size of each of
/// `points`, filled in.
fn measure_peer(
    ctx: &Context,
    p: &Params,
    bench: &mut Bench,
    pair: (usize, usize),
    points: &mut [PeerPoint],
) -> Result<(), RuntimeError> {
    for point in points {
        if ctx.stopping() {
            break;
        }
        let shape = sample_shape(p, point.bytes);
        let mut run = |m| bench.sample(m, pair, shape);
        point.peer = Some(series(run(Method::Peer)?.total));
        let both = run(Method::PeerBoth)?;
        point.peer_both = Some(series(both.total));
        point.peer_both_each = both.each_way.map(|ways| ways.map(series));
        point.kernel_pull = Some(series(run(Method::KernelPull)?.total));
        point.kernel_push = Some(series(run(Method::KernelPush)?.total));
        point.peer_dst = Some(series(run(Method::PeerDst)?.total));
    }
    Ok(())
}

/// Each GPU's copies to itself at every size.
fn measure_local(
    ctx: &Context,
    p: &Params,
    bench: &mut Bench,
) -> Result<Vec<LocalCopy>, RuntimeError> {
    let mut local = Vec::new();
    for g in 0..bench.sides.len() {
        let mut points = Vec::new();
        for bytes in sizes(p) {
            if ctx.stopping() {
                break;
            }
            points.push(LocalPoint {
                bytes,
                passes: passes(bytes),
                time: series(bench.local(g, sample_shape(p, bytes))?),
            });
        }
        local.push(LocalCopy {
            gpu: bench.sides[g].gpu.info().ordinal,
            points,
        });
    }
    Ok(local)
}

/// Every GPU of `opened` set up: its stream, events, pattern (copied in through `host`)
/// and inbox.
fn set_up<'g>(
    opened: &'g [Gpu],
    host: &mut crate::runtime::PinnedBuffer<u32>,
    largest: usize,
) -> Result<Gpus<'g>, RuntimeError> {
    let seed = Rng::seed_from_clock();
    let mut gpus = Gpus {
        sides: Vec::new(),
        memory: Vec::new(),
    };
    for (k, gpu) in opened.iter().enumerate() {
        gpu.bind()?;
        let side_seed = seed ^ (k as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        crate::parallel::for_each_chunk_mut(
            &mut host.as_mut_slice()?[..largest],
            |start, chunk| {
                for (j, x) in chunk.iter_mut().enumerate() {
                    *x = pattern(side_seed, start + j);
                }
            },
        );
        let stream = gpu.streams(1)?.remove(0);
        let mut memory = Memory {
            pattern: gpu.alloc(largest)?,
            inbox: gpu.alloc(largest)?,
        };
        stream.htod(&mut memory.pattern, 0, host, 0..largest)?;
        stream.synchronize()?;
        gpus.sides.push(Side {
            start: gpu.event()?,
            stop: gpu.event()?,
            end: gpu.event()?,
            stream,
            gpu,
            seed: side_seed,
        });
        gpus.memory.push(memory);
    }
    Ok(gpus)
}

impl Run for PeerCopy {
    const SUMMARY: &'static str =
        "Copies between GPUs beside their link, peer access off and on (2+ GPUs)";
    const ABOUT: &'static str = "Copies between GPUs (needs two or more): for every ordered pair of --devices, \
        cuMemcpyPeerAsync with peer access off (checked with the driver) and on, one way and both ways at once \
        (each direction timed too), from the source's and the destination's stream, and a copy kernel pulling \
        and pushing across the link, over sizes 4 KiB..1 GiB, as a GB/s matrix beside the NVLink or PCIe link \
        NVML reports (efficiency per row), with each GPU's copy to itself as the reference and a small copy's \
        latency";

    fn gpus(params: &Params) -> Result<Vec<usize>, RunError> {
        chosen_gpus(PeerCopy::NAME, &params.devices)
    }

    fn unavailable(params: &Params) -> Result<Option<String>, RunError> {
        match several_gpus(PeerCopy::NAME, &params.devices)? {
            Devices::Chosen(_) => Ok(None),
            Devices::TooFew(why) => Ok(Some(why)),
        }
    }

    fn run(ctx: &Context, p: &Params) -> Result<PeerCopyResult, RunError> {
        p.validate()?;
        let ordinals = chosen_gpus(PeerCopy::NAME, &p.devices)?;
        let _rebind = Rebind(ctx.gpu);
        // Elements of the largest copy, the latency copies included.
        let largest_bytes = sizes(p).last().map_or(0, |&b| b).max(LATENCY_BYTES);
        let largest = largest_bytes as usize / size_of::<u32>();
        let mut host = crate::runtime::peer::portable_pinned(largest, 0u32)?;
        let opened = (ordinals.iter())
            .map(|&ordinal| Gpu::open(ordinal))
            .collect::<Result<Vec<_>, _>>()?;
        let every: Vec<&Gpu> = opened.iter().collect();
        let links = crate::runtime::links::read(&every);
        let mut gpus = set_up(&opened, &mut host, largest)?;
        // Dropped before the GPUs' streams and buffers: it opens, and waits for them.
        let mut gate = Gate::across(&every)?;
        let mut bench = Bench {
            sides: &gpus.sides,
            memory: &mut gpus.memory,
            gate: &mut gate,
            host: &mut host,
            checks: Vec::new(),
        };
        let count = ordinals.len();
        let pairs: Vec<(usize, usize)> = (0..count)
            .flat_map(|s| (0..count).filter(move |&d| d != s).map(move |d| (s, d)))
            .collect();
        let mut task = crate::progress::Task::start("peer-copy", 1 + pairs.len() as u64);
        let local = measure_local(ctx, p, &mut bench)?;
        task.step("each GPU to itself");
        let mut results = Vec::new();
        for pair in pairs {
            if ctx.stopping() {
                break;
            }
            let measured = measure_pair(ctx, p, &mut bench, pair)?;
            task.step(&format!("GPU {} to {}", measured.src, measured.dst));
            results.push(measured);
        }
        task.finish();
        let checks = std::mem::take(&mut bench.checks);
        let devices = (gpus.sides.iter()).map(|s| s.gpu.info().clone()).collect();
        drop(gate);
        drop(gpus);
        let params = Params {
            devices: ordinals,
            ..p.clone()
        };
        Ok(PeerCopyResult {
            run: ctx.record(params, crate::verify::combine(checks), !ctx.stopping()),
            devices,
            pairs: results,
            links,
            local,
            gated: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sizes_cover_the_sweep_and_small_copies_are_timed_in_passes() {
        let sizes = sizes(&Params::default());
        assert_eq!(sizes.first(), Some(&4096));
        assert_eq!(sizes.last(), Some(&(1 << 30)));
        assert_eq!([4096, 1 << 30, 1 << 20].map(passes), [256, 1, 64]);
    }
}
