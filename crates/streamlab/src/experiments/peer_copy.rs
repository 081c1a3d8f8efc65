//! peer-copy: copies between the GPUs of one machine. Every GPU chosen gets its primary
//! context, a stream, a pattern buffer (values drawn from a seed of its own, fresh every
//! run) and an inbox the others copy into. For every ordered pair (source, destination)
//! and size: `cuMemcpyPeerAsync` with peer access off (the driver stages it through host
//! memory), then, where both GPUs can reach each other's memory, with peer access on in
//! both directions, one way and both ways at once (source → destination on the source's
//! stream, destination → source on the destination's), and the `copy_u32` kernel
//! launched on the destination reading the source (pull) and on the source writing the
//! destination (push); peer access is turned off again after each pair. Each method's
//! samples are event-timed on the stream that leads it, more of them where they are
//! noisy; each inbox is poisoned before a method and every element it received is
//! checked on the host afterwards. Needs two or more GPUs: [`Run::unavailable`] says
//! why not otherwise.
use streamlab_results::experiment::Experiment as _;
use streamlab_results::experiments::peer_copy::{
    LATENCY_BYTES, Method, PairResult, Params, PeerCopy, PeerCopyResult, PeerPoint,
};
use streamlab_results::saved::Params as _;
use streamlab_results::saved::Verification;

use streamlab_results::spread::Devices;

use super::{Context, Rebind, Run, RunError, chosen_gpus, several_gpus};
use crate::measure::{MAX_ROUNDS, series, wants_round};
use crate::runtime::{DeviceBuffer, Event, Gpu, PinnedBuffer, RuntimeError, Shape, Stream};
use streamlab_results::rng::Rng;

/// Threads per block of the copy kernel.
const THREADS: u32 = 256;
/// Blocks per SM of the copy kernel's grid-stride launch.
const BLOCKS_PER_SM: u32 = 8;

/// One GPU of the run: its context's stream and timing events.
struct Side<'g> {
    gpu: &'g Gpu,
    stream: Stream<'g>,
    /// Start and stop of a region this GPU's stream leads.
    start: Event,
    stop: Event,
    /// Where this GPU's stream joins a region another GPU leads.
    join: Event,
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

/// Issue one pass of `method` over the first `n` elements, from GPU `s` to GPU `d`
/// (and back, for both ways), each call on its GPU's stream with its context current.
fn issue(
    method: Method,
    sides: &[Side],
    memory: &mut [Memory],
    (s, d): (usize, usize),
    n: usize,
) -> Result<(), RuntimeError> {
    let (src, dst) = (&sides[s], &sides[d]);
    match method {
        Method::Staged | Method::Peer | Method::StagedBoth | Method::PeerBoth => {
            src.gpu.bind()?;
            let (from, to) = pair_mut(memory, s, d);
            src.stream
                .copy_peer((&mut to.inbox, dst.gpu), (&from.pattern, src.gpu), n)?;
            if method.directions() == 2 {
                dst.gpu.bind()?;
                let (from, to) = pair_mut(memory, d, s);
                dst.stream
                    .copy_peer((&mut to.inbox, src.gpu), (&from.pattern, dst.gpu), n)?;
            }
            Ok(())
        }
        Method::KernelPull | Method::KernelPush => {
            let on = if method == Method::KernelPull {
                dst
            } else {
                src
            };
            let (from, to) = pair_mut(memory, s, d);
            on.gpu.bind()?;
            on.stream.launch(
                &on.gpu.kernels().copy_u32,
                copy_shape(on.gpu, n),
                (from.pattern.slice(0..n), to.inbox.slice_mut(0..n)),
            )
        }
    }
}

/// Milliseconds per pass of `passes` passes of `work`, between events on `lead`'s
/// stream; `other`'s stream, where given, starts after the start event and is joined
/// before the stop event.
fn time_passes(
    lead: &Side,
    other: Option<&Side>,
    passes: usize,
    mut work: impl FnMut() -> Result<(), RuntimeError>,
) -> Result<f64, RuntimeError> {
    lead.gpu.bind()?;
    lead.stream.record(&lead.start)?;
    if let Some(other) = other {
        other.gpu.bind()?;
        other.stream.wait(&lead.start)?;
    }
    for _ in 0..passes {
        work()?;
    }
    if let Some(other) = other {
        other.gpu.bind()?;
        other.stream.record(&other.join)?;
        lead.gpu.bind()?;
        lead.stream.wait(&other.join)?;
    }
    lead.gpu.bind()?;
    lead.stream.record(&lead.stop)?;
    Ok(lead.start.elapsed_ms(&lead.stop)? / passes as f64)
}

/// The inboxes `method` writes, as (receiving GPU, sending GPU).
fn written(method: Method, (s, d): (usize, usize)) -> Vec<(usize, usize)> {
    if method.directions() == 2 {
        vec![(d, s), (s, d)]
    } else {
        vec![(d, s)]
    }
}

/// Poison the inboxes `method` writes and wait for that, so no copy can land before it.
fn poison(
    method: Method,
    sides: &[Side],
    memory: &mut [Memory],
    pair: (usize, usize),
) -> Result<(), RuntimeError> {
    for (to, _) in written(method, pair) {
        sides[to].gpu.bind()?;
        sides[to].stream.poison(&mut memory[to].inbox)?;
        sides[to].stream.synchronize()?;
    }
    Ok(())
}

/// Check the first `n` elements of every inbox `method` wrote against its sender's
/// pattern, read back through `host`.
fn check(
    method: Method,
    gpus: (&[Side], &[Memory]),
    pair: (usize, usize),
    n: usize,
    host: &mut PinnedBuffer<u32>,
    what: &str,
) -> Result<Vec<Verification>, RuntimeError> {
    let (sides, memory) = gpus;
    let mut checks = Vec::new();
    for (to, from) in written(method, pair) {
        // Whichever stream wrote the inbox has finished before it is read back.
        for writer in [from, to] {
            sides[writer].gpu.bind()?;
            sides[writer].stream.synchronize()?;
        }
        let side = &sides[to];
        side.gpu.bind()?;
        side.stream.dtoh(host, 0, &memory[to].inbox, 0..n)?;
        side.stream.synchronize()?;
        let seed = sides[from].seed;
        let ordinal = |index: usize| sides[index].gpu.info().ordinal;
        checks.push(crate::verify::compare(
            &format!(
                "{what}, GPU {} to {}, {}",
                ordinal(from),
                ordinal(to),
                method.label()
            ),
            &host.as_slice()?[..n],
            |i| f64::from(pattern(seed, i)),
            0.0,
        ));
    }
    Ok(checks)
}

/// Samples of `method` for `n` elements: at least `repeats`, more (up to
/// [`MAX_ROUNDS`] × `repeats`) while they are noisy; then the check of what it wrote.
fn sample(
    method: Method,
    gpus: (&[Side], &mut [Memory]),
    pair: (usize, usize),
    (n, passes, repeats): (usize, usize, usize),
    host: &mut PinnedBuffer<u32>,
    checks: &mut Vec<Verification>,
) -> Result<Vec<f64>, RuntimeError> {
    let (sides, memory) = gpus;
    let (s, d) = pair;
    let lead = if method == Method::KernelPull { d } else { s };
    let other = (method.directions() == 2).then(|| &sides[d]);
    poison(method, sides, memory, pair)?;
    // One untimed pass, so no first-use cost lands in a sample.
    issue(method, sides, memory, pair, n)?;
    let mut samples = Vec::new();
    for round in 0..MAX_ROUNDS * repeats {
        if !wants_round(&samples, round, repeats) {
            break;
        }
        samples.push(time_passes(&sides[lead], other, passes, || {
            issue(method, sides, memory, pair, n)
        })?);
    }
    let what = format!("{} bytes", n * size_of::<u32>());
    checks.extend(check(method, (sides, memory), pair, n, host, &what)?);
    Ok(samples)
}

/// Milliseconds of each of `copies` [`LATENCY_BYTES`] copies from `s` to `d` by `method`
/// (one way), each timed alone on the source's stream, then their check.
fn latency(
    method: Method,
    gpus: (&[Side], &mut [Memory]),
    pair: (usize, usize),
    copies: usize,
    host: &mut PinnedBuffer<u32>,
    checks: &mut Vec<Verification>,
) -> Result<Vec<f64>, RuntimeError> {
    let (sides, memory) = gpus;
    let n = LATENCY_BYTES as usize / size_of::<u32>();
    poison(method, sides, memory, pair)?;
    issue(method, sides, memory, pair, n)?;
    let samples = (0..copies)
        .map(|_| {
            time_passes(&sides[pair.0], None, 1, || {
                issue(method, sides, memory, pair, n)
            })
        })
        .collect::<Result<Vec<f64>, _>>()?;
    checks.extend(check(
        method,
        (sides, memory),
        pair,
        n,
        host,
        "latency copies",
    )?);
    Ok(samples)
}

/// One size's samples with peer access off: its bytes, then one way and both ways.
type StagedSamples = (u64, Vec<f64>, Vec<f64>);
/// One size's samples with peer access on: one way, both ways, kernel pull, kernel push.
type PeerSamples = [Vec<f64>; 4];

/// Measure one ordered pair over every size: peer access off, then on in both
/// directions (where both GPUs can reach each other), then off again.
fn measure_pair(
    ctx: &Context,
    p: &Params,
    gpus: &mut Gpus,
    pair: (usize, usize),
    host: &mut PinnedBuffer<u32>,
    checks: &mut Vec<Verification>,
) -> Result<PairResult, RuntimeError> {
    let sides: &[Side] = &gpus.sides;
    let memory: &mut [Memory] = &mut gpus.memory;
    let (src, dst) = (&sides[pair.0].gpu, &sides[pair.1].gpu);
    let peer_access = src.can_access_peer(dst)? && dst.can_access_peer(src)?;
    let mut off = Vec::new();
    for bytes in p.sizes() {
        if ctx.stopping() {
            break;
        }
        let mut run = |m| {
            sample(
                m,
                (sides, &mut *memory),
                pair,
                sample_shape(p, bytes),
                &mut *host,
                &mut *checks,
            )
        };
        off.push((bytes, run(Method::Staged)?, run(Method::StagedBoth)?));
    }
    let latency_staged = latency(
        Method::Staged,
        (sides, &mut *memory),
        pair,
        p.latency_copies,
        host,
        checks,
    )?;
    let (on, latency_peer) = if peer_access {
        let (on, latency) = measure_peer(ctx, p, (sides, &mut *memory), pair, &off, host, checks)?;
        (on, Some(latency))
    } else {
        (Vec::new(), None)
    };
    Ok(PairResult {
        src: src.info().ordinal,
        dst: dst.info().ordinal,
        peer_access,
        points: points(off, on),
        latency_staged: series(latency_staged),
        latency_peer: latency_peer.map(series),
    })
}

/// The elements, passes per sample and least samples of [`sample`] for copies of `bytes`.
fn sample_shape(p: &Params, bytes: u64) -> (usize, usize, usize) {
    let elements = (bytes as usize / size_of::<u32>()).max(1);
    (elements, Params::passes(bytes), p.sampling.repeats)
}

/// With peer access turned on in both directions, every peer method at each size of
/// `off`, then the peer latency copies; peer access is turned off again after.
fn measure_peer(
    ctx: &Context,
    p: &Params,
    (sides, memory): (&[Side], &mut [Memory]),
    pair: (usize, usize),
    off: &[StagedSamples],
    host: &mut PinnedBuffer<u32>,
    checks: &mut Vec<Verification>,
) -> Result<(Vec<PeerSamples>, Vec<f64>), RuntimeError> {
    let (src, dst) = (&sides[pair.0].gpu, &sides[pair.1].gpu);
    let mut on = Vec::new();
    src.enable_peer_access(dst)?;
    dst.enable_peer_access(src)?;
    for &(bytes, ..) in off {
        if ctx.stopping() {
            break;
        }
        let mut run = |m| {
            sample(
                m,
                (sides, &mut *memory),
                pair,
                sample_shape(p, bytes),
                &mut *host,
                &mut *checks,
            )
        };
        on.push([
            run(Method::Peer)?,
            run(Method::PeerBoth)?,
            run(Method::KernelPull)?,
            run(Method::KernelPush)?,
        ]);
    }
    let latency_peer = latency(
        Method::Peer,
        (sides, &mut *memory),
        pair,
        p.latency_copies,
        host,
        checks,
    )?;
    src.disable_peer_access(dst)?;
    dst.disable_peer_access(src)?;
    Ok((on, latency_peer))
}

/// Each size's point: its staged samples (`off`), and its peer ones (`on`) where peer
/// access was measured.
fn points(off: Vec<StagedSamples>, on: Vec<PeerSamples>) -> Vec<PeerPoint> {
    let mut on = on.into_iter();
    (off.into_iter())
        .map(|(bytes, staged, staged_both)| {
            let [peer, peer_both, kernel_pull, kernel_push] =
                on.next().map_or_else(Default::default, |four| {
                    four.map(|samples| Some(series(samples)))
                });
            PeerPoint {
                bytes,
                passes: Params::passes(bytes),
                staged: series(staged),
                staged_both: series(staged_both),
                peer,
                peer_both,
                kernel_pull,
                kernel_push,
            }
        })
        .collect()
}

impl Run for PeerCopy {
    const SUMMARY: &'static str =
        "Copies between GPUs, peer access off and on (needs two or more GPUs)";
    const ABOUT: &'static str = "Copies between GPUs (needs two or more): for every ordered pair of --devices, \
        cuMemcpyPeerAsync with peer access off and on, one way and both ways at once, \
        and a copy kernel pulling and pushing across the link, over sizes 4 KiB..1 \
        GiB, as a GB/s matrix, with a small copy's latency";

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
        let largest_bytes = p.sizes().last().map_or(0, |&b| b).max(LATENCY_BYTES);
        let largest = largest_bytes as usize / size_of::<u32>();
        let seed = Rng::seed_from_clock();
        let mut host = crate::runtime::peer::portable_pinned(largest, 0u32)?;
        let opened = (ordinals.iter())
            .map(|&ordinal| Gpu::open(ordinal))
            .collect::<Result<Vec<_>, _>>()?;
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
            stream.htod(&mut memory.pattern, 0, &host, 0..largest)?;
            stream.synchronize()?;
            gpus.sides.push(Side {
                start: gpu.event()?,
                stop: gpu.event()?,
                join: gpu.event()?,
                stream,
                gpu,
                seed: side_seed,
            });
            gpus.memory.push(memory);
        }
        let count = ordinals.len();
        let pairs: Vec<(usize, usize)> = (0..count)
            .flat_map(|s| (0..count).filter(move |&d| d != s).map(move |d| (s, d)))
            .collect();
        let mut task = crate::progress::Task::start("peer-copy", pairs.len() as u64);
        let mut results = Vec::new();
        let mut checks = Vec::new();
        for pair in pairs {
            if ctx.stopping() {
                break;
            }
            let measured = measure_pair(ctx, p, &mut gpus, pair, &mut host, &mut checks)?;
            task.step(&format!("GPU {} to {}", measured.src, measured.dst));
            results.push(measured);
        }
        task.finish();
        let devices = (gpus.sides.iter()).map(|s| s.gpu.info().clone()).collect();
        drop(gpus);
        Ok(PeerCopyResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), !ctx.stopping()),
            devices,
            pairs: results,
        })
    }
}
