//! sincos-overlap: copy/compute overlap over streams, after "CUDA streams" (simons blog).
//!
//! `b[i] = a[i] + sqrt(sin(i)² + cos(i)²)` over 2^25 floats in pinned memory, timed as
//! * sequential: blocking copy in, one kernel, copy out;
//! * asynchronous 1: per stream, copy in, kernel, copy out (depth first);
//! * asynchronous 2: all copies in, all kernels, all copies out (breadth first);
//!
//! each after warm-up iterations, at `--streams` and every count of `--stream-counts`.
//! As in the blog's program, iterations are issued back to back and timed together, so
//! one iteration's copies out may overlap the next one's copies in; the timed iterations
//! are split into `--batches` so that each batch's mean per iteration is one sample. Each part alone over the whole array (copy in,
//! kernel, copy out) is timed too: the larger copy is the copy-engine bound.
use serde::{Deserialize, Serialize};

use crate::experiments::{Context, UsageError, chunks};
use crate::results::{
    OpKind, SincosOverlapResult, SincosPoint, SincosVariant, Timeline, Verification,
};
use crate::runtime::{Arg, DeviceBuffer, PinnedBuffer, RuntimeError, Shape, Stream};
use crate::stats::Series;
use crate::timing::{Region, Tracer};
use crate::verify;

/// Parameters; defaults are the blog's.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Floats in the array.
    #[arg(long, default_value_t = 1 << 25)]
    pub elements: usize,
    /// Threads per block (the blog's code uses 1024).
    #[arg(long, default_value_t = 1024)]
    pub threads: u32,
    /// Untimed iterations before each configuration is timed.
    #[arg(long, default_value_t = 100)]
    pub warmup: usize,
    /// Timed iterations per configuration.
    #[arg(long, default_value_t = 1000)]
    pub iterations: usize,
    /// Timed batches the iterations are split into; each gives one sample.
    #[arg(long, default_value_t = 10)]
    pub batches: usize,
    /// Streams of the headline comparison (the blog's 4); also the traced count.
    #[arg(long, default_value_t = 4)]
    pub streams: usize,
    /// Stream counts of the sweep, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4, 8, 16])]
    pub stream_counts: Vec<usize>,
}

impl Params {
    /// Small sizes for a fast look.
    pub fn quick() -> Params {
        Params {
            elements: 1 << 22,
            warmup: 5,
            iterations: 20,
            batches: 4,
            stream_counts: vec![1, 2, 4, 8],
            ..Params::default()
        }
    }

    /// Every stream count measured: the sweep plus `--streams`, ascending.
    pub fn all_stream_counts(&self) -> Vec<usize> {
        let mut counts = self.stream_counts.clone();
        counts.push(self.streams);
        counts.sort_unstable();
        counts.dedup();
        counts
    }

    pub fn validate(&self) -> Result<(), UsageError> {
        if self.elements == 0 || self.elements > i32::MAX as usize {
            return Err(UsageError::new(format!(
                "--elements {} is out of range: use 1..={}",
                self.elements,
                i32::MAX
            )));
        }
        if !(1..=1024).contains(&self.threads) {
            return Err(UsageError::new(format!(
                "--threads {} is out of range: use 1..=1024",
                self.threads
            )));
        }
        if self.iterations == 0 {
            return Err(UsageError::new(
                "--iterations 0 measures nothing: use at least 1",
            ));
        }
        if self.batches == 0 || self.batches > self.iterations {
            return Err(UsageError::new(format!(
                "--batches {} must be within 1..={} (--iterations)",
                self.batches, self.iterations
            )));
        }
        for &count in self.all_stream_counts().iter() {
            if count == 0 {
                return Err(UsageError::new(
                    "a stream count of 0 cannot carry work: use at least 1",
                ));
            }
            if count > self.elements {
                return Err(UsageError::new(format!(
                    "{count} streams for {} elements leaves streams without work: use at most {} streams",
                    self.elements, self.elements
                )));
            }
        }
        Ok(())
    }
}

impl Default for Params {
    fn default() -> Params {
        Params {
            elements: 1 << 25,
            threads: 1024,
            warmup: 100,
            iterations: 1000,
            batches: 10,
            streams: 4,
            stream_counts: vec![1, 2, 4, 8, 16],
        }
    }
}

/// The buffers of one run.
struct Buffers {
    host_a: PinnedBuffer<f32>,
    host_b: PinnedBuffer<f32>,
    dev_a: DeviceBuffer<f32>,
    dev_b: DeviceBuffer<f32>,
}

/// Run the experiment.
pub fn run(ctx: &Context, params: &Params) -> Result<SincosOverlapResult, RuntimeError> {
    let gpu = ctx.gpu;
    let n = params.elements;
    gpu.ensure_fits(2 * n * size_of::<f32>())?;
    let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
    let mut host_a = gpu.pinned(n, 0.0f32)?;
    host_a
        .as_mut_slice()
        .iter_mut()
        .for_each(|x| *x = rng.unit_f32());
    let buffers = Buffers {
        host_a,
        host_b: gpu.pinned(n, f32::NAN)?,
        dev_a: gpu.alloc(n)?,
        dev_b: gpu.alloc(n)?,
    };
    let expected = reference(buffers.host_a.as_slice());
    let mut buffers = buffers;
    let max_streams = params.all_stream_counts().into_iter().max().unwrap_or(1);
    let streams = gpu.streams(max_streams)?;
    let counts = params.all_stream_counts();
    let configs = 4 + 2 * counts.len();
    let mut task = crate::progress::Task::start("sincos-overlap", configs as u64);
    let mut checks = Vec::new();

    let measure = |variant: Variant,
                   used: usize,
                   buffers: &mut Buffers|
     -> Result<(Series, Option<Verification>), RuntimeError> {
        let streams = &streams[..used];
        let region = Region::new(gpu, used)?;
        let parts = chunks(n, used);
        streams[0].poison(&buffers.dev_b)?;
        buffers.host_b.as_mut_slice().fill(f32::NAN);
        gpu.synchronize()?;
        region.begin(streams)?;
        for _ in 0..params.warmup {
            issue(ctx, variant, streams, &parts, buffers, params.threads)?;
        }
        region.end(streams)?;
        let mut samples = Vec::with_capacity(params.batches);
        for batch in chunks(params.iterations, params.batches) {
            region.begin(streams)?;
            for _ in batch.clone() {
                issue(ctx, variant, streams, &parts, buffers, params.threads)?;
            }
            samples.push(region.end(streams)? / batch.len() as f64);
        }
        gpu.synchronize()?;
        let check = variant.writes_output().then(|| {
            verify::compare(
                &format!("{} with {used} stream(s)", variant.label()),
                buffers.host_b.as_slice(),
                |i| expected[i],
                1e-6,
            )
        });
        Ok((
            Series::new(samples).expect("at least one finite sample"),
            check,
        ))
    };

    let (sequential, check) = measure(Variant::Whole(SincosVariant::Sequential), 1, &mut buffers)?;
    checks.extend(check);
    task.step("sequential");
    let mut points = Vec::new();
    for &used in &counts {
        for variant in [SincosVariant::Async1, SincosVariant::Async2] {
            let (time, check) = measure(Variant::Whole(variant), used, &mut buffers)?;
            checks.extend(check);
            points.push(SincosPoint {
                variant,
                streams: used,
                time,
            });
            task.step(&format!("{} x{used}", variant.label()));
        }
    }
    let mut alone = Vec::new();
    for part in [OpKind::HtoD, OpKind::Kernel, OpKind::DtoH] {
        alone.push(measure(Variant::Alone(part), 1, &mut buffers)?.0);
        task.step(&format!("{} alone", part.label()));
    }
    let timelines = [SincosVariant::Async1, SincosVariant::Async2]
        .into_iter()
        .map(|variant| {
            trace(
                ctx,
                variant,
                &streams[..params.streams],
                &mut buffers,
                params,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    task.step("traced");
    task.finish();
    let dtoh_alone = alone.pop().expect("three parts");
    let kernel_alone = alone.pop().expect("three parts");
    let htod_alone = alone.pop().expect("three parts");
    Ok(SincosOverlapResult {
        params: params.clone(),
        device: gpu.info().clone(),
        provenance: ctx.provenance(),
        sequential,
        points,
        htod_alone,
        kernel_alone,
        dtoh_alone,
        verification: verify::combine(checks),
        timelines,
    })
}

/// What one timed iteration issues.
#[derive(Debug, Clone, Copy)]
enum Variant {
    /// A full iteration of a write-up variant.
    Whole(SincosVariant),
    /// One part alone over the whole array.
    Alone(OpKind),
}

impl Variant {
    fn writes_output(self) -> bool {
        matches!(self, Variant::Whole(_))
    }

    fn label(self) -> &'static str {
        match self {
            Variant::Whole(v) => v.label(),
            Variant::Alone(kind) => kind.label(),
        }
    }
}

fn launch_chunk(
    ctx: &Context,
    stream: &Stream,
    part: &std::ops::Range<usize>,
    buffers: &Buffers,
    threads: u32,
) -> Result<(), RuntimeError> {
    let blocks = part.len().div_ceil(threads as usize) as u32;
    stream.launch(
        &ctx.kernels.sincos,
        Shape::linear(blocks, threads),
        &[
            buffers.dev_a.at(0),
            buffers.dev_b.at(0),
            Arg::U32(part.start as u32),
            Arg::U32(part.end as u32),
        ],
    )
}

fn htod_chunk(
    stream: &Stream,
    part: &std::ops::Range<usize>,
    buffers: &Buffers,
) -> Result<(), RuntimeError> {
    stream.htod(&buffers.dev_a, part.start, &buffers.host_a, part.clone())
}

fn dtoh_chunk(
    stream: &Stream,
    part: &std::ops::Range<usize>,
    buffers: &mut Buffers,
) -> Result<(), RuntimeError> {
    stream.dtoh(
        &mut buffers.host_b,
        part.start,
        &buffers.dev_b,
        part.clone(),
    )
}

/// Issue one iteration of `variant` over `streams`, chunk `s` on stream `s`.
fn issue(
    ctx: &Context,
    variant: Variant,
    streams: &[Stream],
    parts: &[std::ops::Range<usize>],
    buffers: &mut Buffers,
    threads: u32,
) -> Result<(), RuntimeError> {
    let whole = 0..buffers.host_a.len();
    match variant {
        Variant::Whole(SincosVariant::Sequential) => {
            // The blog's blocking copies: the host waits for the copy in before launching.
            htod_chunk(&streams[0], &whole, buffers)?;
            streams[0].synchronize()?;
            launch_chunk(ctx, &streams[0], &whole, buffers, threads)?;
            dtoh_chunk(&streams[0], &whole, buffers)
        }
        Variant::Whole(SincosVariant::Async1) => {
            for (stream, part) in streams.iter().zip(parts) {
                htod_chunk(stream, part, buffers)?;
                launch_chunk(ctx, stream, part, buffers, threads)?;
                dtoh_chunk(stream, part, buffers)?;
            }
            Ok(())
        }
        Variant::Whole(SincosVariant::Async2) => {
            for (stream, part) in streams.iter().zip(parts) {
                htod_chunk(stream, part, buffers)?;
            }
            for (stream, part) in streams.iter().zip(parts) {
                launch_chunk(ctx, stream, part, buffers, threads)?;
            }
            for (stream, part) in streams.iter().zip(parts) {
                dtoh_chunk(stream, part, buffers)?;
            }
            Ok(())
        }
        Variant::Alone(OpKind::HtoD) => htod_chunk(&streams[0], &whole, buffers),
        Variant::Alone(OpKind::Kernel) => launch_chunk(ctx, &streams[0], &whole, buffers, threads),
        Variant::Alone(OpKind::DtoH) => dtoh_chunk(&streams[0], &whole, buffers),
    }
}

/// One traced iteration of an async variant (separate from the timed ones).
fn trace(
    ctx: &Context,
    variant: SincosVariant,
    streams: &[Stream],
    buffers: &mut Buffers,
    params: &Params,
) -> Result<Timeline, RuntimeError> {
    let gpu = ctx.gpu;
    let parts = chunks(params.elements, streams.len());
    let mut tracer = Tracer::begin(gpu, streams)?;
    let order: Vec<(OpKind, usize)> = match variant {
        SincosVariant::Async2 => [OpKind::HtoD, OpKind::Kernel, OpKind::DtoH]
            .into_iter()
            .flat_map(|kind| (0..streams.len()).map(move |s| (kind, s)))
            .collect(),
        _ => (0..streams.len())
            .flat_map(|s| [OpKind::HtoD, OpKind::Kernel, OpKind::DtoH].map(|kind| (kind, s)))
            .collect(),
    };
    for (kind, s) in order {
        let part = &parts[s];
        tracer.op(gpu, streams, s, kind, |stream| match kind {
            OpKind::HtoD => htod_chunk(stream, part, buffers),
            OpKind::Kernel => launch_chunk(ctx, stream, part, buffers, params.threads),
            OpKind::DtoH => dtoh_chunk(stream, part, buffers),
        })?;
    }
    tracer.finish(
        gpu,
        &format!(
            "sincos-overlap {} ({} streams)",
            variant.label(),
            streams.len()
        ),
        streams.len(),
    )
}

/// The f64 reference `a[i] + sqrt(sin(i)² + cos(i)²)`, computed on all cores.
pub fn reference(a: &[f32]) -> Vec<f64> {
    let mut out = vec![0.0f64; a.len()];
    crate::parallel::for_each_chunk_mut(&mut out, |start, chunk| {
        for (j, o) in chunk.iter_mut().enumerate() {
            let i = (start + j) as u32 as f32 as f64;
            *o = a[start + j] as f64 + (i.sin().powi(2) + i.cos().powi(2)).sqrt();
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_matches_the_kernel_element_math() {
        let a: Vec<f32> = (0..5000).map(|i| (i % 17) as f32 / 17.0).collect();
        let expected = reference(&a);
        for (i, (&x, &want)) in a.iter().zip(&expected).enumerate() {
            let got = kernels_rs::element::sincos_element(x, i as u32) as f64;
            assert!((got - want).abs() <= 1e-6, "{i}");
        }
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        let bad = |p: Params| p.validate().unwrap_err().to_string();
        assert!(
            bad(Params {
                elements: 0,
                ..Params::default()
            })
            .contains("--elements 0")
        );
        assert!(
            bad(Params {
                streams: 0,
                ..Params::default()
            })
            .contains("stream count of 0")
        );
        assert!(
            bad(Params {
                elements: 4,
                stream_counts: vec![8],
                streams: 1,
                ..Params::default()
            })
            .contains("at most 4")
        );
        assert!(
            bad(Params {
                threads: 2048,
                ..Params::default()
            })
            .contains("--threads")
        );
        assert!(
            bad(Params {
                iterations: 0,
                ..Params::default()
            })
            .contains("--iterations")
        );
        assert!(
            bad(Params {
                batches: 0,
                ..Params::default()
            })
            .contains("--batches")
        );
        assert!(
            bad(Params {
                iterations: 5,
                batches: 6,
                ..Params::default()
            })
            .contains("--batches 6")
        );
        assert!(Params::default().validate().is_ok());
        assert!(Params::quick().validate().is_ok());
    }
}
