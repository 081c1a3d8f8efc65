//! How peer-copy issues and times its copies: one pass of a method over a pair, timed
//! samples of passes (behind the gate every stream of the sample waits at, where the
//! copies go over the link; as the host goes where the driver stages them through host
//! memory, since it may hold the host until such a copy is done), each direction's own
//! time in the both-ways copies, and the check of every element a method wrote.
use streamlab_results::experiments::peer_copy::{LATENCY_BYTES, Method};
use streamlab_results::saved::Verification;

use super::{Memory, Side, copy_shape, pair_mut, pattern};
use crate::measure::{MAX_ROUNDS, wants_round};
use crate::runtime::gate::Gate;
use crate::runtime::{PinnedBuffer, RuntimeError};

/// What measuring works with: every GPU's side and memory, the gate, the host buffer the
/// checks read through, and the checks so far.
pub(super) struct Bench<'a, 'g> {
    pub sides: &'a [Side<'g>],
    pub memory: &'a mut [Memory],
    pub gate: &'a mut Gate,
    pub host: &'a mut PinnedBuffer<u32>,
    pub checks: Vec<Verification>,
}

/// A method's samples: milliseconds per pass, and each direction's own where both ways
/// ran at once (source to destination, destination to source).
pub(super) struct Sampled {
    pub total: Vec<f64>,
    pub each_way: Option<[Vec<f64>; 2]>,
}

/// The GPU whose stream leads `method` over the pair `(s, d)`: the one its work (one
/// way) or its first direction (both ways) is issued on.
fn lead(method: Method, (s, d): (usize, usize)) -> usize {
    match method {
        Method::KernelPull | Method::PeerDst => d,
        _ => s,
    }
}

/// Issue one pass of `method` over the first `n` elements, from GPU `s` to GPU `d`
/// (and back, for both ways), each call on its GPU's stream with its context current.
fn issue(
    method: Method,
    (sides, memory): (&[Side], &mut [Memory]),
    (s, d): (usize, usize),
    n: usize,
) -> Result<(), RuntimeError> {
    let (src, dst) = (&sides[s], &sides[d]);
    match method {
        Method::Staged | Method::Peer | Method::StagedBoth | Method::PeerBoth | Method::PeerDst => {
            let on = &sides[lead(method, (s, d))];
            on.gpu.bind()?;
            let (from, to) = pair_mut(memory, s, d);
            on.stream
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
            let on = &sides[lead(method, (s, d))];
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

/// Milliseconds per pass of `passes` passes of `pass`, between events on `lead`'s
/// stream, and, where `other`'s stream copies too, each stream's own time: `other`
/// starts after `lead`'s start event and `lead` joins it before its end. Behind `gate`
/// where given: both streams held, everything queued, then the gate opened (on every
/// path); the operations each stream queues behind it are counted first.
fn time_passes(
    gate: Option<&mut Gate>,
    (lead, other): (&Side, Option<&Side>),
    passes: usize,
    mut pass: impl FnMut() -> Result<(), RuntimeError>,
) -> Result<(f64, Option<[f64; 2]>), RuntimeError> {
    {
        let streams: Vec<_> = std::iter::once(&lead.stream)
            .chain(other.map(|o| &o.stream))
            .collect();
        let mut held = gate.map(|g| g.sample(&streams)).transpose()?;
        if let Some(held) = &mut held {
            // Lead: start, the passes, stop, and with another stream its join and end;
            // the other: its wait for the start, its own start, the passes, its stop.
            held.queue(&lead.stream, passes + if other.is_some() { 4 } else { 2 })?;
            if let Some(other) = other {
                held.queue(&other.stream, passes + 3)?;
            }
        }
        lead.gpu.bind()?;
        lead.stream.record(&lead.start)?;
        if let Some(other) = other {
            other.gpu.bind()?;
            other.stream.wait(&lead.start)?;
            other.stream.record(&other.start)?;
        }
        for _ in 0..passes {
            pass()?;
        }
        if let Some(other) = other {
            other.gpu.bind()?;
            other.stream.record(&other.stop)?;
        }
        lead.gpu.bind()?;
        lead.stream.record(&lead.stop)?;
        if let Some(other) = other {
            lead.stream.wait(&other.stop)?;
            lead.stream.record(&lead.end)?;
        }
        if let Some(held) = held {
            held.open();
        }
    }
    let per_pass = |side: &Side, end| -> Result<f64, RuntimeError> {
        side.gpu.bind()?;
        Ok(side.start.elapsed_ms(end)? / passes as f64)
    };
    let Some(other) = other else {
        return Ok((per_pass(lead, &lead.stop)?, None));
    };
    let total = per_pass(lead, &lead.end)?;
    let each_way = [per_pass(lead, &lead.stop)?, per_pass(other, &other.stop)?];
    Ok((total, Some(each_way)))
}

/// The inboxes `method` writes, as (receiving GPU, sending GPU).
fn written(method: Method, (s, d): (usize, usize)) -> Vec<(usize, usize)> {
    if method.directions() == 2 {
        vec![(d, s), (s, d)]
    } else {
        vec![(d, s)]
    }
}

impl Bench<'_, '_> {
    /// Poison the inboxes of `(receiving, sending)` GPUs `to` and wait for that, so no
    /// copy can land before it.
    fn poison(&mut self, to: &[(usize, usize)]) -> Result<(), RuntimeError> {
        for &(to, _) in to {
            let side = &self.sides[to];
            side.gpu.bind()?;
            side.stream.poison(&mut self.memory[to].inbox)?;
            side.stream.synchronize()?;
        }
        Ok(())
    }

    /// Check the first `n` elements of the inbox of each `(receiving, sending)` GPUs of
    /// `to` against its sender's pattern, read back through the host buffer.
    fn check(&mut self, to: &[(usize, usize)], n: usize, what: &str) -> Result<(), RuntimeError> {
        let sides = self.sides;
        for &(to, from) in to {
            // Whichever stream wrote the inbox has finished before it is read back.
            for writer in [from, to] {
                sides[writer].gpu.bind()?;
                sides[writer].stream.synchronize()?;
            }
            let side = &sides[to];
            side.gpu.bind()?;
            side.stream
                .dtoh(self.host, 0, &self.memory[to].inbox, 0..n)?;
            side.stream.synchronize()?;
            let seed = sides[from].seed;
            let ordinal = |index: usize| sides[index].gpu.info().ordinal;
            self.checks.push(crate::verify::compare(
                &format!("{what}, GPU {} to {}", ordinal(from), ordinal(to)),
                &self.host.as_slice()?[..n],
                |i| f64::from(pattern(seed, i)),
                0.0,
            ));
        }
        Ok(())
    }

    /// One timed sample of `passes` passes of `method` over `n` elements: behind the gate
    /// where its bytes go over the link, as the host goes where they are staged.
    fn time(
        &mut self,
        method: Method,
        pair: (usize, usize),
        (n, passes): (usize, usize),
    ) -> Result<(f64, Option<[f64; 2]>), RuntimeError> {
        let sides: &[Side] = self.sides;
        let memory = &mut *self.memory;
        let lead = &sides[lead(method, pair)];
        let other = (method.directions() == 2).then(|| &sides[pair.1]);
        let gate = method.needs_peer_access().then_some(&mut *self.gate);
        time_passes(gate, (lead, other), passes, || {
            issue(method, (sides, &mut *memory), pair, n)
        })
    }

    /// Samples of `method` for `n` elements, `passes` passes each: at least `repeats`,
    /// more (up to [`MAX_ROUNDS`] × `repeats`) while they are noisy; then the check of
    /// what it wrote.
    pub(super) fn sample(
        &mut self,
        method: Method,
        pair: (usize, usize),
        (n, passes, repeats): (usize, usize, usize),
    ) -> Result<Sampled, RuntimeError> {
        let to = written(method, pair);
        self.poison(&to)?;
        // One untimed pass, so no first-use cost lands in a sample.
        issue(method, (self.sides, &mut *self.memory), pair, n)?;
        let mut sampled = Sampled {
            total: Vec::new(),
            each_way: (method.directions() == 2).then(Default::default),
        };
        for round in 0..MAX_ROUNDS * repeats {
            if !wants_round(&sampled.total, round, repeats) {
                break;
            }
            let (total, each_way) = self.time(method, pair, (n, passes))?;
            sampled.total.push(total);
            if let (Some([forward, back]), Some([f, b])) = (&mut sampled.each_way, each_way) {
                forward.push(f);
                back.push(b);
            }
        }
        let what = format!("{} bytes, {}", n * size_of::<u32>(), method.label());
        self.check(&to, n, &what)?;
        Ok(sampled)
    }

    /// Milliseconds of each of `copies` [`LATENCY_BYTES`] copies by `method` over the
    /// pair (one way), each timed alone, then their check.
    pub(super) fn latency(
        &mut self,
        method: Method,
        pair: (usize, usize),
        copies: usize,
    ) -> Result<Vec<f64>, RuntimeError> {
        let n = LATENCY_BYTES as usize / size_of::<u32>();
        let to = written(method, pair);
        self.poison(&to)?;
        issue(method, (self.sides, &mut *self.memory), pair, n)?;
        let samples = (0..copies)
            .map(|_| Ok(self.time(method, pair, (n, 1))?.0))
            .collect::<Result<Vec<f64>, RuntimeError>>()?;
        self.check(&to, n, &format!("latency copies, {}", method.label()))?;
        Ok(samples)
    }

    /// Samples of GPU `g`'s copy of its pattern into its own inbox (device to device),
    /// as [`Bench::sample`] takes them, behind the gate; then their check.
    pub(super) fn local(
        &mut self,
        g: usize,
        (n, passes, repeats): (usize, usize, usize),
    ) -> Result<Vec<f64>, RuntimeError> {
        let to = [(g, g)];
        self.poison(&to)?;
        let sides: &[Side] = self.sides;
        let side = &sides[g];
        let copy = |memory: &mut [Memory]| {
            let own = &mut memory[g];
            side.stream.dtod(&mut own.inbox, 0, &own.pattern, 0..n)
        };
        side.gpu.bind()?;
        copy(&mut *self.memory)?;
        let mut samples = Vec::new();
        for round in 0..MAX_ROUNDS * repeats {
            if !wants_round(&samples, round, repeats) {
                break;
            }
            let memory = &mut *self.memory;
            let (ms, _) = time_passes(Some(&mut *self.gate), (side, None), passes, || {
                copy(&mut *memory)
            })?;
            samples.push(ms);
        }
        let what = format!("{} bytes, within one GPU", n * size_of::<u32>());
        self.check(&to, n, &what)?;
        Ok(samples)
    }
}
