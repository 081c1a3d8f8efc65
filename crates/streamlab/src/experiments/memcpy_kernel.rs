//! memcpy-kernel: is overlapping copies with kernels worth it? After the CUDA Handbook,
//! section 6.5 (`concurrencyMemcpyKernel.cu`).
//!
//! `AddKernel` runs longer the more `cycles` it is given. For each cycles value the
//! sequential version copies the whole array in, runs the kernel, copies it out, with
//! an event between each step (the table's HtoD, Kernel, DtoH and Total); the concurrent
//! version splits the array over N streams and issues the Handbook's three loops (all
//! copies in, all kernels, all copies out). Speedup is Total over Concurrent (medians of the repeats); the
//! Amdahl ideal for three engines is (HtoD + Kernel + DtoH) / max(HtoD, Kernel, DtoH).
//!
//! Departures from the original, on purpose: every stream count of a range gets its own
//! table (the original prints only the first), chunks are `ceil(N / streams)` for each
//! count so they always cover N, and the cycles range is extended until the kernel takes
//! longer than the copies, so the breakeven point is always in the table.
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use serde::{Deserialize, Serialize};

use crate::experiments::{Context, UsageError, chunks};
use crate::range::IntRange;
use crate::results::{MemcpyKernelResult, MemcpyKernelRow, OpKind, Timeline, Verification};
use crate::runtime::{Arg, DeviceBuffer, PinnedBuffer, RuntimeError, Shape, Stream};
use crate::stats::Series;
use crate::timing::{Region, Tracer};

/// Cycles values tried past the end of the range while looking for the breakeven point.
pub const MAX_EXTENSION_STEPS: usize = 256;

/// Parameters; defaults are the Handbook program's, with the book's 128 M ints.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Array size in M ints (2^20 ints each).
    #[arg(long, default_value_t = 128)]
    pub size: usize,
    /// Cycles shmoo: START..=END (or one value).
    #[arg(long, default_value = "0..=4096")]
    pub cycles: IntRange,
    /// Step of the cycles shmoo.
    #[arg(long, default_value_t = 64)]
    pub cycles_step: i64,
    /// Streams shmoo: N or START..=END.
    #[arg(long, default_value = "8")]
    pub streams: IntRange,
    /// Step of the streams shmoo.
    #[arg(long, default_value_t = 1)]
    #[serde(default = "one")]
    pub streams_step: i64,
    /// Blocks per SM of each AddKernel launch (blocks = SMs × this).
    #[arg(long, default_value_t = 16)]
    pub blocks_per_sm: u32,
    /// Threads per block.
    #[arg(long, default_value_t = 256)]
    pub threads: u32,
    /// The value AddKernel adds, `cycles` times.
    #[arg(long, default_value_t = 0xcc)]
    pub add_value: i32,
    /// Timed repetitions of each row.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
}

/// The streams step of results saved before the step existed.
fn one() -> i64 {
    1
}

impl Default for Params {
    fn default() -> Params {
        Params {
            size: 128,
            cycles: IntRange::new(0, 4096).expect("non-empty"),
            cycles_step: 64,
            streams: IntRange::single(8),
            streams_step: 1,
            blocks_per_sm: 16,
            threads: 256,
            add_value: 0xcc,
            repeats: 3,
        }
    }
}

impl Params {
    /// What `run-all` measures: the Handbook's 8 streams, and 32 streams, a deeper
    /// pipeline whose fill and drain are a quarter as long.
    pub fn run_all() -> Params {
        Params {
            streams: IntRange::new(8, 32).expect("non-empty"),
            streams_step: 24,
            ..Params::default()
        }
    }

    /// Small sizes for a fast look.
    pub fn quick() -> Params {
        Params {
            size: 16,
            cycles: IntRange::new(0, 1024).expect("non-empty"),
            cycles_step: 256,
            repeats: 1,
            ..Params::default()
        }
    }

    /// Elements in the array.
    pub fn elements(&self) -> usize {
        self.size << 20
    }

    pub fn validate(&self) -> Result<(), UsageError> {
        if self.size == 0 || self.size > 1 << 16 {
            return Err(UsageError::new(format!(
                "--size {} is out of range: use 1..=65536 (M ints)",
                self.size
            )));
        }
        if self.cycles.start() < 0 || self.cycles.end() > i32::MAX as i64 / 2 {
            return Err(UsageError::new(format!(
                "--cycles {} is out of range: cycles must be 0 or more",
                self.cycles
            )));
        }
        if self.cycles_step < 1 {
            return Err(UsageError::new(format!(
                "--cycles-step {} must be at least 1",
                self.cycles_step
            )));
        }
        if self.streams_step < 1 {
            return Err(UsageError::new(format!(
                "--streams-step {} must be at least 1",
                self.streams_step
            )));
        }
        if self.streams.start() < 1 {
            return Err(UsageError::new(format!(
                "--streams {}: a stream count must be at least 1",
                self.streams
            )));
        }
        if self.streams.end() as usize > self.elements() {
            return Err(UsageError::new(format!(
                "--streams {} exceeds the {} elements: use fewer streams",
                self.streams,
                self.elements()
            )));
        }
        if self.blocks_per_sm == 0 || !(1..=1024).contains(&self.threads) {
            return Err(UsageError::new(
                "--blocks-per-sm must be at least 1 and --threads within 1..=1024",
            ));
        }
        if self.repeats == 0 {
            return Err(UsageError::new(
                "--repeats 0 measures nothing: use at least 1",
            ));
        }
        Ok(())
    }
}

/// The buffers of one run.
struct Buffers {
    host_in: PinnedBuffer<i32>,
    host_out: PinnedBuffer<i32>,
    dev_in: DeviceBuffer<i32>,
    dev_out: DeviceBuffer<i32>,
}

/// One sequential measurement: HtoD, kernel, DtoH and their total.
#[derive(Debug, Clone, Default)]
struct Sequential {
    htod: Vec<f64>,
    kernel: Vec<f64>,
    dtoh: Vec<f64>,
    total: Vec<f64>,
}

/// Run the experiment.
pub fn run(ctx: &Context, params: &Params) -> Result<MemcpyKernelResult, RuntimeError> {
    let gpu = ctx.gpu;
    let n = params.elements();
    gpu.ensure_fits(2 * n * size_of::<i32>())?;
    let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
    let mut host_in = gpu.pinned(n, 0i32)?;
    host_in
        .as_mut_slice()
        .iter_mut()
        .for_each(|x| *x = rng.any_i32());
    let mut buffers = Buffers {
        host_in,
        host_out: gpu.pinned(n, -1i32)?,
        dev_in: gpu.alloc(n)?,
        dev_out: gpu.alloc(n)?,
    };
    let blocks = gpu.info().sm_count.max(1) as u32 * params.blocks_per_sm;
    let shape = Shape::linear(blocks, params.threads);
    let stream_counts: Vec<usize> = params
        .streams
        .values(params.streams_step)
        .map(|s| s as usize)
        .collect();
    let max_streams = stream_counts.iter().copied().max().unwrap_or(1);
    let streams = gpu.streams(max_streams)?;
    let events: Vec<_> = (0..4).map(|_| gpu.event()).collect::<Result<_, _>>()?;
    let planned =
        params.streams.values(1).count() * params.cycles.values(params.cycles_step).count();
    let mut task = crate::progress::Task::start("memcpy-kernel", planned as u64);
    let mut sequential: BTreeMap<i64, Sequential> = BTreeMap::new();
    let mut rows = Vec::new();
    let mut checks: Vec<Verification> = Vec::new();
    let mut breakeven = None;
    for &used in &stream_counts {
        let parts = chunks(n, used);
        let region = Region::new(gpu, used)?;
        let mut cycles_values = params.cycles.values(params.cycles_step);
        let mut extension = 0;
        let mut cycles = cycles_values.next();
        while let Some(c) = cycles {
            let c32 = c as i32;
            let mut verify_run =
                |buffers: &mut Buffers, stream: &Stream, what: &str| -> Result<(), RuntimeError> {
                    gpu.synchronize()?;
                    checks.push(check_output(
                        buffers,
                        params.add_value,
                        c32,
                        &format!("{what}, cycles {c}"),
                    ));
                    stream.poison(&buffers.dev_out)?;
                    crate::parallel::for_each_chunk_mut(
                        buffers.host_out.as_mut_slice(),
                        |_, chunk| chunk.fill(-1),
                    );
                    gpu.synchronize()
                };
            if let Entry::Vacant(slot) = sequential.entry(c) {
                let mut seq = Sequential::default();
                for _ in 0..params.repeats {
                    let s = &streams[0];
                    s.record(&events[0])?;
                    s.htod(&buffers.dev_in, 0, &buffers.host_in, 0..n)?;
                    s.record(&events[1])?;
                    launch_add(ctx, s, shape, &buffers, 0..n, params.add_value, c32)?;
                    s.record(&events[2])?;
                    s.dtoh(&mut buffers.host_out, 0, &buffers.dev_out, 0..n)?;
                    s.record(&events[3])?;
                    seq.htod.push(events[0].elapsed_ms(&events[1])?);
                    seq.kernel.push(events[1].elapsed_ms(&events[2])?);
                    seq.dtoh.push(events[2].elapsed_ms(&events[3])?);
                    seq.total.push(events[0].elapsed_ms(&events[3])?);
                }
                verify_run(&mut buffers, &streams[0], "sequential")?;
                slot.insert(seq);
            }
            let mut concurrent = Vec::with_capacity(params.repeats);
            for _ in 0..params.repeats {
                region.begin(&streams[..used])?;
                issue_concurrent(
                    ctx,
                    &streams[..used],
                    &parts,
                    shape,
                    &mut buffers,
                    params.add_value,
                    c32,
                )?;
                concurrent.push(region.end(&streams[..used])?);
            }
            verify_run(&mut buffers, &streams[0], &format!("{used} streams"))?;
            let seq = &sequential[&c];
            let row = make_row(c32, used, seq, concurrent);
            let crossed =
                row.kernel.summary.median > row.htod.summary.median.max(row.dtoh.summary.median);
            if crossed && breakeven.is_none() {
                breakeven = Some(c32);
            }
            task.step(&format!("{used} streams, cycles {c}"));
            rows.push(row);
            cycles = match cycles_values.next() {
                Some(next) => Some(next),
                None if !crossed && extension < MAX_EXTENSION_STEPS => {
                    extension += 1;
                    Some(c + params.cycles_step)
                }
                None => None,
            };
        }
    }
    task.finish();
    let timeline = trace(
        ctx,
        &streams[..params.streams.start() as usize],
        shape,
        &mut buffers,
        params,
        breakeven.unwrap_or(params.cycles.start() as i32),
    )?;
    Ok(MemcpyKernelResult {
        params: params.clone(),
        device: gpu.info().clone(),
        provenance: ctx.provenance(),
        rows,
        breakeven_cycles: breakeven,
        verification: crate::verify::combine(checks),
        timeline: Some(timeline),
    })
}

fn make_row(
    cycles: i32,
    streams: usize,
    seq: &Sequential,
    concurrent: Vec<f64>,
) -> MemcpyKernelRow {
    let series = |v: &[f64]| Series::new(v.to_vec()).expect("finite samples");
    let (htod, kernel, dtoh, total) = (
        series(&seq.htod),
        series(&seq.kernel),
        series(&seq.dtoh),
        series(&seq.total),
    );
    let concurrent = series(&concurrent);
    let parts = [
        htod.summary.median,
        kernel.summary.median,
        dtoh.summary.median,
    ];
    let longest = parts.iter().cloned().fold(f64::MIN, f64::max);
    MemcpyKernelRow {
        cycles,
        streams,
        speedup: total.summary.median / concurrent.summary.median,
        amdahl_ideal: parts.iter().sum::<f64>() / longest,
        htod,
        kernel,
        dtoh,
        total,
        concurrent,
    }
}

fn launch_add(
    ctx: &Context,
    stream: &Stream,
    shape: Shape,
    buffers: &Buffers,
    part: std::ops::Range<usize>,
    add_value: i32,
    cycles: i32,
) -> Result<(), RuntimeError> {
    stream.launch(
        &ctx.kernels.add_kernel,
        shape,
        &[
            buffers.dev_out.at(part.start),
            buffers.dev_in.at(part.start),
            Arg::U64(part.len() as u64),
            Arg::I32(add_value),
            Arg::I32(cycles),
        ],
    )
}

/// The Handbook's three loops: every copy in, every kernel, every copy out.
fn issue_concurrent(
    ctx: &Context,
    streams: &[Stream],
    parts: &[std::ops::Range<usize>],
    shape: Shape,
    buffers: &mut Buffers,
    add_value: i32,
    cycles: i32,
) -> Result<(), RuntimeError> {
    for (stream, part) in streams.iter().zip(parts) {
        stream.htod(&buffers.dev_in, part.start, &buffers.host_in, part.clone())?;
    }
    for (stream, part) in streams.iter().zip(parts) {
        launch_add(ctx, stream, shape, buffers, part.clone(), add_value, cycles)?;
    }
    for (stream, part) in streams.iter().zip(parts) {
        stream.dtoh(
            &mut buffers.host_out,
            part.start,
            &buffers.dev_out,
            part.clone(),
        )?;
    }
    Ok(())
}

/// One traced concurrent iteration.
fn trace(
    ctx: &Context,
    streams: &[Stream],
    shape: Shape,
    buffers: &mut Buffers,
    params: &Params,
    cycles: i32,
) -> Result<Timeline, RuntimeError> {
    let gpu = ctx.gpu;
    let parts = chunks(params.elements(), streams.len());
    let mut tracer = Tracer::begin(gpu, streams)?;
    for kind in [OpKind::HtoD, OpKind::Kernel, OpKind::DtoH] {
        for (s, part) in parts.iter().enumerate() {
            tracer.op(gpu, streams, s, kind, |stream| match kind {
                OpKind::HtoD => {
                    stream.htod(&buffers.dev_in, part.start, &buffers.host_in, part.clone())
                }
                OpKind::Kernel => launch_add(
                    ctx,
                    stream,
                    shape,
                    buffers,
                    part.clone(),
                    params.add_value,
                    cycles,
                ),
                OpKind::DtoH => stream.dtoh(
                    &mut buffers.host_out,
                    part.start,
                    &buffers.dev_out,
                    part.clone(),
                ),
            })?;
        }
    }
    tracer.finish(
        gpu,
        &format!(
            "memcpy-kernel concurrent, cycles {cycles} ({} streams)",
            streams.len()
        ),
        streams.len(),
    )
}

/// Check every output element: `out[i] == in[i] + add_value·cycles` with wrap-around.
fn check_output(buffers: &Buffers, add_value: i32, cycles: i32, what: &str) -> Verification {
    let (input, output) = (buffers.host_in.as_slice(), buffers.host_out.as_slice());
    let (mismatches, first) = crate::parallel::map_chunks(input.len(), |range| {
        let mut bad = 0u64;
        let mut first = None;
        for i in range {
            let want = kernels_rs::element::add_repeatedly_closed_form(input[i], add_value, cycles);
            if output[i] != want {
                bad += 1;
                first.get_or_insert((i, output[i], want));
            }
        }
        (bad, first)
    })
    .into_iter()
    .fold((0, None), |(n, f), (b, g)| (n + b, f.or(g)));
    Verification {
        passed: mismatches == 0,
        checked: input.len() as u64,
        mismatches,
        max_abs_error: if mismatches == 0 { 0.0 } else { f64::NAN },
        detail: match first {
            None => format!(
                "{what}: all {} ints equal in + {add_value}·{cycles}",
                input.len()
            ),
            Some((i, got, want)) => {
                format!("{what}: {mismatches} ints wrong; first at {i}: got {got}, expected {want}")
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_handbook_programs() {
        let p = Params::default();
        assert_eq!(p.elements(), 128 << 20);
        assert_eq!(p.cycles.values(p.cycles_step).count(), 65);
        assert_eq!(
            (p.streams.start(), p.blocks_per_sm, p.threads, p.add_value),
            (8, 16, 256, 0xcc)
        );
        assert!(p.validate().is_ok() && Params::quick().validate().is_ok());
        let all = Params::run_all();
        assert_eq!(
            all.streams.values(all.streams_step).collect::<Vec<_>>(),
            [8, 32]
        );
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        let bad = |p: Params| p.validate().unwrap_err().to_string();
        assert!(
            bad(Params {
                size: 0,
                ..Params::default()
            })
            .contains("--size 0")
        );
        assert!(
            bad(Params {
                streams: IntRange::single(0),
                ..Params::default()
            })
            .contains("at least 1")
        );
        assert!(
            bad(Params {
                cycles_step: 0,
                ..Params::default()
            })
            .contains("--cycles-step")
        );
        assert!(
            bad(Params {
                cycles: IntRange::new(-5, 3).unwrap(),
                ..Params::default()
            })
            .contains("--cycles")
        );
        assert!(
            bad(Params {
                size: 1,
                streams: IntRange::single(2 << 20),
                ..Params::default()
            })
            .contains("fewer streams")
        );
    }

    #[test]
    fn row_speedup_and_amdahl_ideal_follow_the_medians() {
        let seq = Sequential {
            htod: vec![10.0, 10.0, 30.0],
            kernel: vec![5.0, 5.0, 5.0],
            dtoh: vec![10.0, 10.0, 10.0],
            total: vec![25.0, 25.0, 45.0],
        };
        let row = make_row(64, 8, &seq, vec![12.5, 12.5, 40.0]);
        assert_eq!(row.speedup, 2.0);
        assert_eq!(row.amdahl_ideal, 2.5);
    }
}
