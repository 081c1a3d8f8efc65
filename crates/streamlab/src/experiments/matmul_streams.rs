//! matmul-streams: the same independent matrix products spread over 1..=16 streams,
//! after the "Multi Stream Parallelism" wiki experiment.
//!
//! Each product is `C (rows × cols) = A (rows × aligned) · B (aligned × cols)` with A and
//! B filled with 1 by the `fill` kernel, so every cell of C must equal `aligned`. Before
//! that, the kernel runs once on inputs whose elements all differ, checked against the
//! CPU (`check_on_distinct_inputs`): with every input equal, a kernel that read the wrong
//! row or column would still write `aligned` everywhere. Product
//! `i` goes to stream `i % s`; a trial times all products for each `s`. The region is
//! timed on the GPU (the first stream waits for every other one before the stop event),
//! where the original records its stop event after host-side stream waits, and issued
//! behind a gate the host opens once every product is issued, so the time is the GPU's
//! and not the host's launching. Each trial times every stream count in turn, so drift
//! hits them alike; after `--trials`, more trials run while any stream count's noise is
//! above the target ([`crate::measure::wants_round`]). The last step traces one iteration with
//! every stream in use.
use kernels_rs::matmul;
use nvptx_kernel::Kernel;
use streamlab_results::experiments::matmul_streams::{MatmulStreams, MatmulStreamsResult, Params};
use streamlab_results::saved::timeline::{OpKind, Timeline, TraceReference};
use streamlab_results::saved::{Params as _, Verification};

use super::{Context, Run, RunError};
use crate::measure::wants_round;
use crate::runtime::gate::Gate;
use crate::runtime::{DeviceBuffer, Function, Gpu, Kernels, Region, RuntimeError, Shape, Stream};
use crate::trace;

/// The three matrices of one product.
struct Product {
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    c: DeviceBuffer<f32>,
}

type MatmulFn = Function<<matmul as Kernel>::Args>;

impl Run for MatmulStreams {
    const SUMMARY: &'static str = "16 independent matrix products spread over 1 to 16 streams";
    const ABOUT: &'static str = "16 independent naive matrix products over 1..=16 streams (product i on stream \
        i % s): time per stream count, speedup, and the ceil(16/s) tasks-per-stream \
        model behind the plateaus";

    fn run(ctx: &Context, p: &Params) -> Result<MatmulStreamsResult, RunError> {
        p.validate()?;
        let gpu = ctx.gpu;
        gpu.ensure_fits(device_bytes(p))?;
        let (rows, cols) = (p.rows as usize, p.cols as usize);
        let streams = gpu.streams(p.max_streams)?;
        let mut products = alloc_products(gpu, p)?;
        let multiply = Multiply {
            kernel: ctx.kernels.matmul_in(ctx.form),
            shape: Shape {
                grid: (
                    cols.div_ceil(p.block as usize) as u32,
                    rows.div_ceil(p.block as usize) as u32,
                ),
                block: (p.block, p.block),
            },
            params: p,
        };
        let mut checks = vec![check_on_distinct_inputs(
            gpu,
            &streams[0],
            &multiply,
            &mut products[0],
        )?];
        fill_inputs(ctx.kernels, p, &streams[0], &mut products)?;
        gpu.synchronize()?;
        let regions = (1..=p.max_streams)
            .map(|used| Region::new(gpu, used))
            .collect::<Result<Vec<_>, _>>()?;
        let mut gate = Gate::new(gpu)?;
        let trials = Trials {
            gpu,
            params: p,
            streams: &streams,
            regions: &regions,
            multiply: &multiply,
        };
        let mut trials_ms: Vec<Vec<f64>> = Vec::with_capacity(p.trials);
        let mut task = crate::progress::Task::start("matmul-streams", p.trials as u64 + 1);
        for trial in 0.. {
            let noisy = (0..p.max_streams).any(|s| {
                let column: Vec<f64> = trials_ms.iter().map(|row| row[s]).collect();
                wants_round(&column, trial, p.trials)
            });
            if !noisy || ctx.stopping() {
                break;
            }
            trials_ms.push(trials.trial(trial, &mut gate, &mut products, &mut checks)?);
            if trial < p.trials {
                task.step(&format!("trial {}", trial + 1));
            }
        }
        let complete = !ctx.stopping();
        let timeline = match trials_ms.as_slice() {
            rows_done if complete && !rows_done.is_empty() => {
                let fastest =
                    (rows_done.iter().map(|r| r[p.max_streams - 1])).fold(f64::INFINITY, f64::min);
                let timeline = trials.trace(fastest, &mut products)?;
                task.step("traced");
                Some(timeline)
            }
            _ => None,
        };
        task.finish();
        Ok(MatmulStreamsResult {
            run: ctx.record(p.clone(), crate::verify::combine(checks), complete),
            trials_ms,
            timeline,
        })
    }
}

/// The matrices of `--max-streams` products, not yet filled.
fn alloc_products(gpu: &Gpu, p: &Params) -> Result<Vec<Product>, RuntimeError> {
    let (rows, cols, aligned) = (p.rows as usize, p.cols as usize, p.aligned as usize);
    (0..p.max_streams)
        .map(|_| {
            Ok(Product {
                a: gpu.alloc(rows * aligned)?,
                b: gpu.alloc(aligned * cols)?,
                c: gpu.alloc(rows * cols)?,
            })
        })
        .collect::<Result<Vec<_>, RuntimeError>>()
}

/// Fill every product's A and B with 1 on `stream`.
fn fill_inputs(
    kernels: &Kernels,
    p: &Params,
    stream: &Stream,
    products: &mut [Product],
) -> Result<(), RuntimeError> {
    let (rows, cols, aligned) = (p.rows as usize, p.cols as usize, p.aligned as usize);
    // The wiki's fill grids: one block more than needed along each axis.
    let fill_shape = |r: usize, c: usize| Shape {
        grid: (
            (c / p.block as usize + 1) as u32,
            (r / p.block as usize + 1) as u32,
        ),
        block: (p.block, p.block),
    };
    let fill = kernels.fill;
    for product in products {
        stream.launch(
            &fill,
            fill_shape(rows, aligned),
            (product.a.all_mut(), p.rows, p.aligned, 1.0f32),
        )?;
        stream.launch(
            &fill,
            fill_shape(aligned, cols),
            (product.b.all_mut(), p.aligned, p.cols, 1.0f32),
        )?;
    }
    Ok(())
}

/// What every trial runs: the products' launch, over the first `used` streams timed by
/// `regions[used - 1]`.
struct Trials<'a> {
    gpu: &'a Gpu,
    params: &'a Params,
    streams: &'a [Stream<'a>],
    regions: &'a [Region],
    multiply: &'a Multiply<'a>,
}

impl Trials<'_> {
    /// One trial: every stream count in turn, every product issued behind the gate on
    /// poisoned outputs; milliseconds per stream count, checked in the first and the
    /// last planned trial.
    fn trial(
        &self,
        trial: usize,
        gate: &mut Gate,
        products: &mut [Product],
        checks: &mut Vec<Verification>,
    ) -> Result<Vec<f64>, RuntimeError> {
        let (gpu, p, streams) = (self.gpu, self.params, self.streams);
        let mut row = Vec::with_capacity(p.max_streams);
        for used in 1..=p.max_streams {
            for product in products.iter_mut() {
                streams[0].poison(&mut product.c)?;
            }
            gpu.synchronize()?;
            let region = &self.regions[used - 1];
            gate.close();
            gate.hold(&streams[0])?;
            region.begin(&streams[..used])?;
            for (i, product) in products.iter_mut().enumerate() {
                self.multiply.issue(&streams[i % used], product)?;
            }
            region.mark_end(&streams[..used])?;
            gate.open();
            row.push(region.elapsed_ms()?);
            if trial == 0 || trial + 1 == p.trials {
                checks.push(check_products(gpu, products, p, used)?);
            }
        }
        Ok(row)
    }

    /// One iteration with every stream in use, traced, against the `fastest` time.
    fn trace(&self, fastest: f64, products: &mut [Product]) -> Result<Timeline, RuntimeError> {
        let p = self.params;
        let reference = TraceReference {
            timed_ms: fastest,
            back_to_back: false,
            median_ms: None,
            rates: None,
        };
        let title = format!("matmul-streams, {} streams", p.max_streams);
        trace::record(self.gpu, self.streams, &title, reference, |rec| {
            for (i, product) in products.iter_mut().enumerate() {
                rec.op(i % p.max_streams, 0, OpKind::Kernel, None, |s| {
                    self.multiply.issue(s, product)
                })?;
            }
            Ok(())
        })
    }
}

/// One product's launch.
struct Multiply<'a> {
    kernel: MatmulFn,
    shape: Shape,
    params: &'a Params,
}

impl Multiply<'_> {
    fn issue(&self, stream: &Stream, product: &mut Product) -> Result<(), RuntimeError> {
        let p = self.params;
        stream.launch(
            &self.kernel,
            self.shape,
            (
                product.a.all(),
                product.b.all(),
                product.c.all_mut(),
                p.rows,
                p.cols,
                p.aligned,
            ),
        )
    }
}

/// One product of the kernel on inputs whose elements all differ (random in [-1, 1),
/// seeded from the clock), every cell checked against the CPU's f64 product within the
/// bound on the rounding of its chain of multiply-adds (`verify::matmul_reference`).
fn check_on_distinct_inputs(
    gpu: &Gpu,
    stream: &Stream,
    multiply: &Multiply,
    product: &mut Product,
) -> Result<Verification, RuntimeError> {
    let p = multiply.params;
    let (rows, cols, aligned) = (p.rows as usize, p.cols as usize, p.aligned as usize);
    let mut rng = crate::rng::Rng::new(crate::rng::Rng::seed_from_clock());
    let mut a = gpu.pinned(rows * aligned, 0.0f32)?;
    let mut b = gpu.pinned(aligned * cols, 0.0f32)?;
    rng.fill_signed_unit(a.as_mut_slice()?);
    rng.fill_signed_unit(b.as_mut_slice()?);
    stream.htod(&mut product.a, 0, &a, 0..rows * aligned)?;
    stream.htod(&mut product.b, 0, &b, 0..aligned * cols)?;
    stream.poison(&mut product.c)?;
    multiply.issue(stream, product)?;
    let mut c = gpu.pinned(rows * cols, f32::NAN)?;
    stream.dtoh(&mut c, 0, &product.c, 0..rows * cols)?;
    stream.synchronize()?;
    let reference =
        crate::verify::matmul_reference(a.as_slice()?, b.as_slice()?, rows, cols, aligned);
    Ok(crate::verify::compare_each(
        &format!("C = A · B on inputs whose elements all differ, {rows} × {cols} × {aligned}"),
        c.as_slice()?,
        |i| reference[i],
    ))
}

/// Copy every C back and check every cell equals `aligned` exactly.
fn check_products(
    gpu: &Gpu,
    products: &[Product],
    p: &Params,
    used: usize,
) -> Result<Verification, RuntimeError> {
    let cells = (p.rows * p.cols) as usize;
    let mut host = gpu.pinned(cells * products.len(), f32::NAN)?;
    let stream = &gpu.streams(1)?[0];
    for (i, product) in products.iter().enumerate() {
        stream.dtoh(&mut host, i * cells, &product.c, 0..cells)?;
    }
    stream.synchronize()?;
    Ok(crate::verify::compare(
        &format!(
            "C = {} in all {} products with {used} streams",
            p.aligned,
            products.len()
        ),
        host.as_slice()?,
        |_| f64::from(p.aligned),
        0.0,
    ))
}

/// Bytes of device memory the run needs: A, B and C of every product.
fn device_bytes(p: &Params) -> u64 {
    let (r, c, k) = (u64::from(p.rows), u64::from(p.cols), u64::from(p.aligned));
    p.max_streams as u64 * (r * k + k * c + r * c) * size_of::<f32>() as u64
}
