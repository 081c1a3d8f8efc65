//! Measuring on the GPU, shared by the experiments: the blog's three issue orders
//! ([`issue_iteration`]), the stages of a chunked pipeline sampled on their own
//! ([`StageSampler`]), the link probed around every experiment ([`LinkProber`]), sampling
//! a configuration until its noise reaches the target ([`wants_round`]), and event times
//! as a series.
use std::ops::Range;

use streamlab_results::saved::timeline::OpKind;
use streamlab_results::saved::{IssueOrder, StageTimes, Verification};
use streamlab_results::stats::{NOISE_TARGET, Series};

use crate::runtime::{DeviceBuffer, Gpu, PinnedBuffer, Region, RuntimeError, Stream};

/// Issue one iteration of `variant` over `streams`, chunk `s` (of `parts`) on stream
/// `s`: `op(kind, stream index, chunk)` issues one copy in, kernel or copy out.
/// * sequential: on the first stream, the whole array in (the host waits for it, as the
///   blog's blocking copy does), the kernel, the whole array out;
/// * asynchronous 1: per stream, copy in, kernel, copy out (depth first);
/// * asynchronous 2: every copy in, every kernel, every copy out (breadth first).
pub fn issue_iteration(
    variant: IssueOrder,
    streams: &[Stream],
    parts: &[Range<usize>],
    mut op: impl FnMut(OpKind, usize, &Range<usize>) -> Result<(), RuntimeError>,
) -> Result<(), RuntimeError> {
    const KINDS: [OpKind; 3] = [OpKind::HtoD, OpKind::Kernel, OpKind::DtoH];
    match variant {
        IssueOrder::Sequential => {
            let whole = parts[0].start..parts[parts.len() - 1].end;
            op(OpKind::HtoD, 0, &whole)?;
            streams[0].synchronize()?;
            op(OpKind::Kernel, 0, &whole)?;
            op(OpKind::DtoH, 0, &whole)
        }
        IssueOrder::Async1 => (0..parts.len())
            .flat_map(|s| KINDS.map(|kind| (kind, s)))
            .try_for_each(|(kind, s)| op(kind, s, &parts[s])),
        IssueOrder::Async2 => (KINDS.into_iter())
            .flat_map(|kind| (0..parts.len()).map(move |s| (kind, s)))
            .try_for_each(|(kind, s)| op(kind, s, &parts[s])),
    }
}

/// The parts of a chunked copy → kernel → copy schedule timed on their own, over the
/// same chunks and buffers (`saved::StageTimes`): [`StageSampler::measure`] takes the
/// first samples before the schedule is timed, and [`StageSampler::sample_round`] adds
/// one more of each direction alone and both at once between its measurements, so the
/// bound sees the same states of the machine as the schedule does, and a few samples
/// that met a busy link cannot set it.
pub struct StageSampler {
    chunks: usize,
    bytes: u64,
    passes: usize,
    htod: Vec<f64>,
    dtoh: Vec<f64>,
    both: Vec<f64>,
    both_htod: Vec<f64>,
    both_dtoh: Vec<f64>,
    kernels: Option<Vec<f64>>,
}

impl StageSampler {
    /// `repeats` rounds of samples of `passes` passes over the whole data (`bytes` each
    /// way): every chunk (`parts`) copied in, back to back on one stream; every chunk
    /// copied out; both at once, in on one stream and out on another; and, with
    /// `kernels`, the chunks' kernels, one chunk per stream, all at once. `op(kind,
    /// stream, chunk)` issues one part; `streams` must hold at least max(chunks, 2).
    #[allow(clippy::too_many_arguments)]
    pub fn measure(
        gpu: &Gpu,
        streams: &[Stream],
        parts: &[Range<usize>],
        bytes: u64,
        (repeats, passes): (usize, usize),
        kernels: bool,
        mut op: impl FnMut(OpKind, &Stream, &Range<usize>) -> Result<(), RuntimeError>,
    ) -> Result<StageSampler, RuntimeError> {
        // Warm up each path once, so no first-use cost lands in a sample.
        for part in parts {
            op(OpKind::HtoD, &streams[0], part)?;
            op(OpKind::DtoH, &streams[0], part)?;
        }
        gpu.synchronize()?;
        let mut sampler = StageSampler {
            chunks: parts.len(),
            bytes,
            passes,
            htod: Vec::new(),
            dtoh: Vec::new(),
            both: Vec::new(),
            both_htod: Vec::new(),
            both_dtoh: Vec::new(),
            kernels: None,
        };
        for _ in 0..repeats {
            sampler.sample_round(gpu, streams, parts, passes, &mut op)?;
        }
        if kernels {
            let used = &streams[..parts.len()];
            let region = Region::new(gpu, used.len())?;
            let mut samples = Vec::with_capacity(repeats);
            for _ in 0..repeats {
                region.begin(used)?;
                for _ in 0..passes {
                    for (stream, part) in used.iter().zip(parts) {
                        op(OpKind::Kernel, stream, part)?;
                    }
                }
                samples.push(region.end(used)? / passes as f64);
            }
            sampler.kernels = Some(samples);
        }
        Ok(sampler)
    }

    /// One more sample of each direction alone (every chunk back to back on the first
    /// stream) and of both at once (every chunk in on the first stream and out on the
    /// second), `passes` passes each.
    pub fn sample_round(
        &mut self,
        gpu: &Gpu,
        streams: &[Stream],
        parts: &[Range<usize>],
        passes: usize,
        mut op: impl FnMut(OpKind, &Stream, &Range<usize>) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        let (s0, s1) = (&streams[0], &streams[1]);
        let per_pass = passes as f64;
        let one = Region::new(gpu, 1)?;
        for kind in [OpKind::HtoD, OpKind::DtoH] {
            one.begin(&streams[..1])?;
            for _ in 0..passes {
                for part in parts {
                    op(kind, s0, part)?;
                }
            }
            let ms = one.end(&streams[..1])? / per_pass;
            match kind {
                OpKind::HtoD => self.htod.push(ms),
                _ => self.dtoh.push(ms),
            }
        }
        let [start, end_in, end_out, stop] =
            [gpu.event()?, gpu.event()?, gpu.event()?, gpu.event()?];
        s0.record(&start)?;
        s1.wait(&start)?;
        for _ in 0..passes {
            for part in parts {
                op(OpKind::HtoD, s0, part)?;
            }
        }
        s0.record(&end_in)?;
        for _ in 0..passes {
            for part in parts {
                op(OpKind::DtoH, s1, part)?;
            }
        }
        s1.record(&end_out)?;
        s0.wait(&end_out)?;
        s0.record(&stop)?;
        self.both.push(start.elapsed_ms(&stop)? / per_pass);
        self.both_htod.push(start.elapsed_ms(&end_in)? / per_pass);
        self.both_dtoh.push(start.elapsed_ms(&end_out)? / per_pass);
        Ok(())
    }

    /// Every sample taken, as saved.
    pub fn finish(self) -> StageTimes {
        StageTimes {
            chunks: self.chunks,
            bytes: self.bytes,
            passes: self.passes,
            htod: series(self.htod),
            dtoh: series(self.dtoh),
            both: series(self.both),
            both_htod: series(self.both_htod),
            both_dtoh: series(self.both_dtoh),
            kernels: self.kernels.map(series),
        }
    }
}

/// The link probe a session takes around every experiment: the same 32 MiB copied in
/// alone, out alone and both ways at once, on buffers of its own (and two streams made
/// for each probe).
pub struct LinkProber {
    host_in: PinnedBuffer<f32>,
    host_out: PinnedBuffer<f32>,
    dev_in: DeviceBuffer<f32>,
    dev_out: DeviceBuffer<f32>,
}

impl LinkProber {
    /// Floats copied each way: 32 MiB, large enough to move at the link's rate.
    const ELEMENTS: usize = 8 << 20;
    /// Samples of each path, and passes per sample.
    const SAMPLING: (usize, usize) = (5, 2);

    pub fn new(gpu: &Gpu) -> Result<LinkProber, RuntimeError> {
        Ok(LinkProber {
            host_in: gpu.pinned(Self::ELEMENTS, 0.0f32)?,
            host_out: gpu.pinned(Self::ELEMENTS, 0.0f32)?,
            dev_in: gpu.alloc(Self::ELEMENTS)?,
            dev_out: gpu.alloc(Self::ELEMENTS)?,
        })
    }

    /// One probe of the link.
    pub fn probe(&mut self, gpu: &Gpu) -> Result<StageTimes, RuntimeError> {
        let LinkProber {
            host_in,
            host_out,
            dev_in,
            dev_out,
        } = self;
        let streams = gpu.streams(2)?;
        // One chunk: the whole buffer.
        let whole = std::slice::from_ref(&(0..Self::ELEMENTS));
        let bytes = (Self::ELEMENTS * size_of::<f32>()) as u64;
        let sampler = StageSampler::measure(
            gpu,
            &streams,
            whole,
            bytes,
            Self::SAMPLING,
            false,
            |kind, stream, part| match kind {
                OpKind::HtoD => stream.htod(dev_in, part.start, host_in, part.clone()),
                OpKind::DtoH => stream.dtoh(host_out, part.start, dev_out, part.clone()),
                _ => Ok(()),
            },
        )?;
        Ok(sampler.finish())
    }
}

/// A series from event times, which are always finite.
pub fn series(samples: Vec<f64>) -> Series {
    Series::new(samples).expect("at least one finite event time")
}

/// A configuration's sampling budget, in multiples of the rounds every configuration
/// gets.
pub const MAX_ROUNDS: usize = 3;

/// Whether a configuration sampled round-robin with others wants round `round` (from
/// 0), having `samples` so far: every configuration gets `rounds` rounds, and those whose
/// relative noise is still above [`NOISE_TARGET`] more, up to [`MAX_ROUNDS`] × `rounds`.
pub fn wants_round(samples: &[f64], round: usize, rounds: usize) -> bool {
    let noise = Series::new(samples.to_vec()).map_or(f64::INFINITY, |s| s.noise());
    round < rounds || (round < MAX_ROUNDS * rounds && noise > NOISE_TARGET)
}

/// A verification that passed, for steps that have nothing to compare.
pub fn nothing_to_verify(what: &str) -> Verification {
    Verification {
        passed: true,
        checked: 0,
        mismatches: 0,
        max_abs_error: 0.0,
        detail: what.to_owned(),
    }
}
