//! allreduce-overlap's schedule: each GPU's streams and buffers, and one iteration of
//! each configuration issued on every GPU at once, timed and checked.
use streamlab_results::saved::Verification;

use crate::runtime::gate::{Gate, Held};
use crate::runtime::nccl::{AllReduce, Communicators};
use crate::runtime::{DeviceBuffer, Event, Gpu, PinnedBuffer, RuntimeError, Shape, Stream};

/// The product's inner size when its time per unit is measured, and the largest used.
pub(super) const INNER_PROBE: u32 = 1024;
pub(super) const INNER_MAX: u32 = 32768;
/// Threads a side of the product's blocks, and a block of the bucket writer.
const BLOCK: u32 = 16;
const COPY_THREADS: u32 = 256;
/// The most operations of either independent loop (they must outlast the side measured).
pub(super) const MOST_LOOPED: usize = 64;
/// How many times the side it slows an independent loop is sized to last.
pub(super) const LOOP_MARGIN: f64 = 2.5;
/// Operations an all-reduce is counted as queueing behind the gate.
const ALL_REDUCE_OPS: usize = 3;

/// What one timed iteration runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Config {
    Compute,
    InPlace,
    OutOfPlace,
    Serialized,
    Overlapped,
    OverlappedHigh,
    ComputeInterfered,
    ReduceInterfered,
}

impl Config {
    fn label(self) -> &'static str {
        match self {
            Config::Compute => "compute alone",
            Config::InPlace => "all-reduces alone, in place",
            Config::OutOfPlace => "all-reduces alone, out of place",
            Config::Serialized => "serialized",
            Config::Overlapped => "overlapped",
            Config::OverlappedHigh => "overlapped, communication at the greatest priority",
            Config::ComputeInterfered => "compute beside an all-reduce loop",
            Config::ReduceInterfered => "all-reduces beside a loop of products",
        }
    }

    /// Whether its buckets end summed over the GPUs (else they hold the pattern).
    fn sums(self) -> bool {
        !matches!(self, Config::Compute | Config::ComputeInterfered)
    }
}

/// The value at element `j` of GPU `rank`'s pattern under `seed`: an integer in
/// -2048..2048.
pub(super) fn pattern(seed: u64, rank: usize, j: usize) -> f32 {
    let mut x = seed ^ (rank as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (j as u64);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((x ^ (x >> 31)) % 4096) as f32 - 2048.0
}

/// One GPU: its streams, buffers and events.
pub(super) struct Side<'g> {
    pub(super) gpu: &'g Gpu,
    pub(super) rank: usize,
    pub(super) lanes: Lanes<'g>,
    pub(super) buckets: DeviceBuffer<f32>,
    pub(super) pattern: DeviceBuffer<f32>,
    pub(super) received: DeviceBuffer<f32>,
    pub(super) probe_src: DeviceBuffer<f32>,
    pub(super) probe_dst: DeviceBuffer<f32>,
    pub(super) a: DeviceBuffer<f32>,
    pub(super) b: DeviceBuffer<f32>,
    pub(super) c: DeviceBuffer<f32>,
    pub(super) written: Vec<Event>,
    pub(super) start: Event,
    pub(super) end: Event,
    pub(super) done: Event,
}

/// A GPU's streams: the compute stream, and the communication streams at the default
/// and the greatest priority.
pub(super) struct Lanes<'g> {
    pub(super) compute: Stream<'g>,
    pub(super) comm: Stream<'g>,
    pub(super) high: Stream<'g>,
}

impl<'g> Lanes<'g> {
    /// The stream of `lane`.
    fn of(&self, lane: Lane) -> &Stream<'g> {
        match lane {
            Lane::Compute => &self.compute,
            Lane::Comm => &self.comm,
            Lane::High => &self.high,
        }
    }
}

impl Side<'_> {
    /// One product at `inner` on the compute stream, or the communication stream where
    /// `on_comm` (the loop beside the all-reduces).
    pub(super) fn multiply(
        &mut self,
        on_comm: bool,
        side: u32,
        inner: u32,
    ) -> Result<(), RuntimeError> {
        let n = side as usize * inner as usize;
        let shape = Shape {
            grid: (side.div_ceil(BLOCK), side.div_ceil(BLOCK)),
            block: (BLOCK, BLOCK),
        };
        let stream = self
            .lanes
            .of(if on_comm { Lane::Comm } else { Lane::Compute });
        stream.launch(
            &self.gpu.kernels().matmul,
            shape,
            (
                self.a.slice(0..n),
                self.b.slice(0..n),
                self.c.all_mut(),
                side,
                side,
                inner,
            ),
        )
    }

    /// Layer `k`: the product, then bucket `k` written from the pattern, on the compute
    /// stream.
    fn layer(
        &mut self,
        k: usize,
        elements: usize,
        side: u32,
        inner: u32,
    ) -> Result<(), RuntimeError> {
        self.multiply(false, side, inner)?;
        let range = k * elements..(k + 1) * elements;
        self.lanes.compute.launch(
            &self.gpu.kernels().copy_u32,
            Shape::cover(elements, COPY_THREADS),
            (
                self.pattern.bits::<u32>(range.clone()),
                self.buckets.bits_mut::<u32>(range),
            ),
        )
    }
}

/// Every GPU of the run, waited for GPU by GPU when dropped.
pub(super) struct Sides<'g>(pub(super) Vec<Side<'g>>);

impl Drop for Sides<'_> {
    fn drop(&mut self) {
        for side in self.0.drain(..) {
            let _ = side.gpu.bind();
            let _ = side.gpu.synchronize();
        }
    }
}

impl Sides<'_> {
    fn synchronize(&self) -> Result<(), RuntimeError> {
        for side in &self.0 {
            side.gpu.bind()?;
            side.gpu.synchronize()?;
        }
        Ok(())
    }
}

/// Which buffer and stream an all-reduce of bucket `k` uses.
#[derive(Clone, Copy)]
enum Reduce {
    /// In place on the buckets, on the compute stream, the default- or the
    /// high-priority communication stream.
    Buckets(Lane),
    /// From the pattern into the receive buffer, on the communication stream.
    OutOfPlace,
    /// The probe buffers, on the communication stream.
    Probe,
}

#[derive(Clone, Copy, PartialEq)]
enum Lane {
    Compute,
    Comm,
    High,
}

/// What one (bucket size, budget) runs with.
pub(super) struct Schedule<'s, 'g, 'c> {
    pub(super) sides: &'s mut Sides<'g>,
    pub(super) comms: &'s Communicators<'c>,
    pub(super) buckets: usize,
    pub(super) elements: usize,
    pub(super) side: u32,
    pub(super) inner: u32,
    /// The independent loops' lengths: all-reduces beside the compute, products beside
    /// the all-reduces.
    pub(super) loops: (usize, usize),
    pub(super) drop_wait: bool,
}

impl Schedule<'_, '_, '_> {
    /// One all-reduce of bucket `k` (of the probe for `Reduce::Probe`) on every GPU.
    fn reduce(
        &mut self,
        k: usize,
        how: Reduce,
        held: &mut Option<Held>,
    ) -> Result<(), RuntimeError> {
        let range = k * self.elements..(k + 1) * self.elements;
        let probe = 0..self.elements;
        let mut ops = Vec::with_capacity(self.sides.0.len());
        for s in self.sides.0.iter_mut() {
            let op = match how {
                Reduce::Buckets(lane) => AllReduce {
                    stream: s.lanes.of(lane),
                    send: None,
                    recv: (&mut s.buckets, range.clone()),
                },
                Reduce::OutOfPlace => AllReduce {
                    stream: &s.lanes.comm,
                    send: Some((&s.pattern, range.clone())),
                    recv: (&mut s.received, range.clone()),
                },
                Reduce::Probe => AllReduce {
                    stream: &s.lanes.comm,
                    send: Some((&s.probe_src, probe.clone())),
                    recv: (&mut s.probe_dst, probe.clone()),
                },
            };
            if let Some(held) = held.as_mut() {
                held.queue(op.stream, ALL_REDUCE_OPS)?;
            }
            ops.push(op);
        }
        self.comms.all_reduce(&mut ops)
    }

    /// Every GPU's layer `k` (and, overlapped, its event and the wait of `lane` for it).
    fn layers(
        &mut self,
        k: usize,
        lane: Option<Lane>,
        held: &mut Option<Held>,
    ) -> Result<(), RuntimeError> {
        let (elements, side, inner, drop_wait) =
            (self.elements, self.side, self.inner, self.drop_wait);
        for s in self.sides.0.iter_mut() {
            s.gpu.bind()?;
            if let Some(held) = held.as_mut() {
                held.queue(&s.lanes.compute, 3)?;
            }
            s.layer(k, elements, side, inner)?;
            if let Some(lane) = lane {
                s.lanes.compute.record(&s.written[k])?;
                if !drop_wait {
                    s.lanes.of(lane).wait(&s.written[k])?;
                }
            }
        }
        Ok(())
    }

    /// Issue one iteration of `config` on every GPU: the start event on the compute
    /// stream, which both communication streams wait for, and the end event.
    fn issue(&mut self, config: Config, held: &mut Option<Held>) -> Result<(), RuntimeError> {
        for s in &self.sides.0 {
            s.gpu.bind()?;
            s.lanes.compute.record(&s.start)?;
            s.lanes.comm.wait(&s.start)?;
            s.lanes.high.wait(&s.start)?;
        }
        let k_all = self.buckets;
        let lane = match config {
            Config::Overlapped => Some(Lane::Comm),
            Config::OverlappedHigh => Some(Lane::High),
            _ => None,
        };
        match config {
            Config::Compute => (0..k_all).try_for_each(|k| self.layers(k, None, held))?,
            Config::InPlace => {
                (0..k_all).try_for_each(|k| self.reduce(k, Reduce::Buckets(Lane::Comm), held))?
            }
            Config::OutOfPlace => {
                (0..k_all).try_for_each(|k| self.reduce(k, Reduce::OutOfPlace, held))?
            }
            Config::Serialized => (0..k_all).try_for_each(|k| {
                self.layers(k, None, held)?;
                self.reduce(k, Reduce::Buckets(Lane::Compute), held)
            })?,
            Config::Overlapped | Config::OverlappedHigh => (0..k_all).try_for_each(|k| {
                self.layers(k, lane, held)?;
                self.reduce(k, Reduce::Buckets(lane.unwrap_or(Lane::Comm)), held)
            })?,
            Config::ComputeInterfered => {
                (0..self.loops.0).try_for_each(|_| self.reduce(0, Reduce::Probe, held))?;
                self.loop_ended()?;
                (0..k_all).try_for_each(|k| self.layers(k, None, held))?;
            }
            Config::ReduceInterfered => {
                let (side, inner) = (self.side, self.inner);
                for s in self.sides.0.iter_mut() {
                    s.gpu.bind()?;
                    if let Some(held) = held.as_mut() {
                        held.queue(&s.lanes.comm, self.loops.1)?;
                    }
                    for _ in 0..self.loops.1 {
                        s.multiply(true, side, inner)?;
                    }
                }
                self.loop_ended()?;
                (0..k_all)
                    .try_for_each(|k| self.reduce(k, Reduce::Buckets(Lane::Compute), held))?;
            }
        }
        self.finish(config, lane)
    }

    /// Each GPU's `done` event after the independent loop on its communication stream.
    fn loop_ended(&self) -> Result<(), RuntimeError> {
        for s in &self.sides.0 {
            s.gpu.bind()?;
            s.lanes.comm.record(&s.done)?;
        }
        Ok(())
    }

    /// The end event of each GPU: after the compute stream (joined by the communication
    /// stream where the iteration ends on both).
    fn finish(&mut self, config: Config, lane: Option<Lane>) -> Result<(), RuntimeError> {
        for s in &self.sides.0 {
            s.gpu.bind()?;
            let comm = s.lanes.of(lane.unwrap_or(Lane::Comm));
            match config {
                Config::InPlace
                | Config::OutOfPlace
                | Config::Overlapped
                | Config::OverlappedHigh => {
                    comm.record(&s.done)?;
                    s.lanes.compute.wait(&s.done)?;
                }
                _ => {}
            }
            s.lanes.compute.record(&s.end)?;
        }
        Ok(())
    }

    /// One iteration of `config`: behind `gate` where given; into poisoned buffers and
    /// checked against `expected` where given.
    pub(super) fn sample(
        &mut self,
        config: Config,
        gate: Option<&mut Gate>,
        expected: Option<(&Expected, &mut PinnedBuffer<f32>)>,
    ) -> Result<Sample, RuntimeError> {
        let total = self.buckets * self.elements;
        for s in self.sides.0.iter_mut() {
            s.gpu.bind()?;
            if expected.is_some() {
                let target = if config == Config::OutOfPlace {
                    &mut s.received
                } else {
                    &mut s.buckets
                };
                s.lanes.compute.poison(target)?;
            }
            // In place, the buckets start as the pattern (every element written again
            // after the poison), so that sums never grow.
            if matches!(config, Config::InPlace | Config::ReduceInterfered) {
                s.lanes
                    .compute
                    .dtod(&mut s.buckets, 0, &s.pattern, 0..total)?;
            }
        }
        self.sides.synchronize()?;
        {
            let mut held = None;
            if let Some(gate) = gate {
                let streams: Vec<&Stream> = (self.sides.0.iter())
                    .flat_map(|s| [&s.lanes.compute, &s.lanes.comm, &s.lanes.high])
                    .collect();
                held = Some(gate.sample(&streams)?);
            }
            self.issue(config, &mut held)?;
        }
        let looped = matches!(config, Config::ComputeInterfered | Config::ReduceInterfered);
        let (mut slowest, mut loop_outlasted) = (0.0f64, true);
        for s in &self.sides.0 {
            s.gpu.bind()?;
            let ms = s.start.elapsed_ms(&s.end)?;
            slowest = slowest.max(ms);
            if looped {
                loop_outlasted &= s.start.elapsed_ms(&s.done)? >= ms;
            }
        }
        self.sides.synchronize()?;
        let check = match expected {
            Some((expected, host)) => Some(self.check(config, expected, host)?),
            None => None,
        };
        Ok(Sample {
            ms: slowest,
            check,
            loop_outlasted,
        })
    }

    /// Every element of every GPU's buckets (receive buffer, out of place) after `config`.
    fn check(
        &mut self,
        config: Config,
        expected: &Expected,
        host: &mut PinnedBuffer<f32>,
    ) -> Result<Verification, RuntimeError> {
        let total = self.buckets * self.elements;
        let mut checks = Vec::new();
        for s in &self.sides.0 {
            s.gpu.bind()?;
            let source = if config == Config::OutOfPlace {
                &s.received
            } else {
                &s.buckets
            };
            s.lanes.compute.dtoh(host, 0, source, 0..total)?;
            let got = &host.as_slice()?[..total];
            let rank = s.rank;
            let what = format!(
                "{}, GPU {}, {} buckets of {} floats",
                config.label(),
                s.gpu.info().ordinal,
                self.buckets,
                self.elements
            );
            checks.push(if config.sums() {
                crate::verify::compare(&what, got, |j| expected.sum(j), 0.0)
            } else {
                crate::verify::compare(
                    &what,
                    got,
                    |j| f64::from(pattern(expected.seed, rank, j)),
                    0.0,
                )
            });
        }
        Ok(crate::verify::combine(checks))
    }
}

/// One timed iteration: the slowest GPU's milliseconds, its check where it was checked,
/// and whether the independent loop (where the configuration has one) ended after the
/// side it was to slow on every GPU.
pub(super) struct Sample {
    pub(super) ms: f64,
    pub(super) check: Option<Verification>,
    pub(super) loop_outlasted: bool,
}

/// What the buckets must hold: each GPU's pattern, and its sum over the GPUs.
pub(super) struct Expected {
    pub(super) seed: u64,
    pub(super) ranks: usize,
}

impl Expected {
    fn sum(&self, j: usize) -> f64 {
        (0..self.ranks)
            .map(|r| f64::from(pattern(self.seed, r, j)))
            .sum()
    }
}
