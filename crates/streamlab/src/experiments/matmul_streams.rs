//! matmul-streams: the same 16 independent matrix products spread over 1..=16 streams,
//! after the "Multi Stream Parallelism" wiki experiment.
//!
//! Each product is `C (rows × cols) = A (rows × aligned) · B (aligned × cols)` with A and
//! B filled with 1 by the `fill` kernel, so every cell of C must equal `aligned`. Product
//! `i` goes to stream `i % s`; a trial times all products for each `s`. The slowest stream
//! runs `ceil(products / s)` products, which explains the plateaus (7 streams are no
//! faster than 6, 9..=15 no faster than 8).
//!
//! The region is timed on the GPU (the first stream waits for every other one before the
//! stop event), where the original records its stop event after host-side stream waits.
use serde::{Deserialize, Serialize};

use crate::experiments::{Context, UsageError};
use crate::results::{MatmulPoint, MatmulStreamsResult, OpKind, Timeline, Verification};
use crate::runtime::{Arg, DeviceBuffer, RuntimeError, Shape, Stream};
use crate::stats::Series;
use crate::timing::{Region, Tracer};

/// Parameters; defaults are the wiki's.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Rows of each output matrix.
    #[arg(long, default_value_t = 32)]
    pub rows: usize,
    /// Columns of each output matrix.
    #[arg(long, default_value_t = 16)]
    pub cols: usize,
    /// The inner (aligned) dimension of each product.
    #[arg(long, default_value_t = 131_072)]
    pub aligned: usize,
    /// Side of the square thread block.
    #[arg(long, default_value_t = 16)]
    pub block: u32,
    /// Products, and the largest stream count.
    #[arg(long, default_value_t = 16)]
    pub max_streams: usize,
    /// Trials (rows of the CSV).
    #[arg(long, default_value_t = 20)]
    pub trials: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            rows: 32,
            cols: 16,
            aligned: 131_072,
            block: 16,
            max_streams: 16,
            trials: 20,
        }
    }
}

impl Params {
    /// Small sizes for a fast look.
    pub fn quick() -> Params {
        Params {
            aligned: 8192,
            trials: 3,
            ..Params::default()
        }
    }

    pub fn validate(&self) -> Result<(), UsageError> {
        for (name, value) in [
            ("--rows", self.rows),
            ("--cols", self.cols),
            ("--aligned", self.aligned),
        ] {
            if value == 0 || value > i32::MAX as usize {
                return Err(UsageError::new(format!(
                    "{name} {value} is out of range: use 1..={}",
                    i32::MAX
                )));
            }
        }
        if self.aligned > 1 << 24 {
            return Err(UsageError::new(format!(
                "--aligned {} is too large to verify exactly in f32: use at most {}",
                self.aligned,
                1 << 24
            )));
        }
        if !(1..=32).contains(&self.block) {
            return Err(UsageError::new(format!(
                "--block {} is out of range: use 1..=32 (block² threads)",
                self.block
            )));
        }
        if self.max_streams == 0 {
            return Err(UsageError::new(
                "--max-streams 0 cannot carry work: use at least 1",
            ));
        }
        if self.trials == 0 {
            return Err(UsageError::new(
                "--trials 0 measures nothing: use at least 1",
            ));
        }
        Ok(())
    }

    /// Bytes of device memory the run needs.
    pub fn device_bytes(&self) -> usize {
        self.max_streams
            * (self.rows * self.aligned + self.aligned * self.cols + self.rows * self.cols)
            * 4
    }
}

/// `ceil(products / streams)`: the most products any one stream runs.
pub fn tasks_per_stream(products: usize, streams: usize) -> usize {
    products.div_ceil(streams)
}

/// The three matrices of one product.
struct Product {
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    c: DeviceBuffer<f32>,
}

/// Run the experiment.
pub fn run(ctx: &Context, params: &Params) -> Result<MatmulStreamsResult, RuntimeError> {
    let gpu = ctx.gpu;
    gpu.ensure_fits(params.device_bytes())?;
    let p = params;
    let streams = gpu.streams(p.max_streams)?;
    let block = (p.block, p.block);
    let products = (0..p.max_streams)
        .map(|_| {
            Ok(Product {
                a: gpu.alloc(p.rows * p.aligned)?,
                b: gpu.alloc(p.aligned * p.cols)?,
                c: gpu.alloc(p.rows * p.cols)?,
            })
        })
        .collect::<Result<Vec<_>, RuntimeError>>()?;
    // The wiki's fill grids: one block more than needed along each axis.
    let fill_shape = |rows: usize, cols: usize| Shape {
        grid: (
            (cols / p.block as usize + 1) as u32,
            (rows / p.block as usize + 1) as u32,
        ),
        block,
    };
    for product in &products {
        fill(
            ctx,
            &streams[0],
            fill_shape(p.rows, p.aligned),
            &product.a,
            p.rows,
            p.aligned,
            1.0,
        )?;
        fill(
            ctx,
            &streams[0],
            fill_shape(p.aligned, p.cols),
            &product.b,
            p.aligned,
            p.cols,
            1.0,
        )?;
    }
    gpu.synchronize()?;
    let mul_shape = Shape {
        grid: (
            p.cols.div_ceil(p.block as usize) as u32,
            p.rows.div_ceil(p.block as usize) as u32,
        ),
        block,
    };
    let mut trials_ms = vec![vec![0.0; p.max_streams]; p.trials];
    let mut checks = Vec::new();
    let mut task = crate::progress::Task::start("matmul-streams", p.trials as u64);
    let regions = (1..=p.max_streams)
        .map(|used| Region::new(gpu, used))
        .collect::<Result<Vec<_>, _>>()?;
    for (trial, row) in trials_ms.iter_mut().enumerate() {
        for used in 1..=p.max_streams {
            for product in &products {
                streams[0].poison(&product.c)?;
            }
            gpu.synchronize()?;
            let region = &regions[used - 1];
            region.begin(&streams[..used])?;
            for (i, product) in products.iter().enumerate() {
                multiply(ctx, &streams[i % used], mul_shape, product, p)?;
            }
            row[used - 1] = region.end(&streams[..used])?;
            if trial == 0 || trial + 1 == p.trials {
                checks.push(check_products(ctx, &products, p, used)?);
            }
        }
        task.step(&format!("trial {}", trial + 1));
    }
    task.finish();
    let timeline = trace(ctx, &streams, mul_shape, &products, p)?;
    Ok(MatmulStreamsResult {
        params: p.clone(),
        device: gpu.info().clone(),
        provenance: ctx.provenance(),
        points: points(&trials_ms, p.max_streams),
        trials_ms,
        verification: crate::verify::combine(checks),
        timeline: Some(timeline),
    })
}

/// Per stream count: the samples across trials, speedup over one stream, and the model.
pub fn points(trials_ms: &[Vec<f64>], products: usize) -> Vec<MatmulPoint> {
    let column = |s: usize| {
        Series::new(trials_ms.iter().map(|row| row[s - 1]).collect()).expect("finite times")
    };
    let one = column(1).summary.mean;
    (1..=products)
        .map(|s| {
            let time = column(s);
            let tasks = tasks_per_stream(products, s);
            MatmulPoint {
                streams: s,
                speedup: one / time.summary.mean,
                tasks_per_stream: tasks,
                model_ms: one * tasks as f64 / products as f64,
                time,
            }
        })
        .collect()
}

fn fill(
    ctx: &Context,
    stream: &Stream,
    shape: Shape,
    matrix: &DeviceBuffer<f32>,
    rows: usize,
    cols: usize,
    value: f32,
) -> Result<(), RuntimeError> {
    stream.launch(
        &ctx.kernels.fill,
        shape,
        &[
            matrix.at(0),
            Arg::I32(rows as i32),
            Arg::I32(cols as i32),
            Arg::F32(value),
        ],
    )
}

fn multiply(
    ctx: &Context,
    stream: &Stream,
    shape: Shape,
    product: &Product,
    p: &Params,
) -> Result<(), RuntimeError> {
    stream.launch(
        &ctx.kernels.matmul,
        shape,
        &[
            product.a.at(0),
            product.b.at(0),
            product.c.at(0),
            Arg::I32(p.rows as i32),
            Arg::I32(p.cols as i32),
            Arg::I32(p.aligned as i32),
        ],
    )
}

/// Copy every C back and check every cell equals `aligned` exactly.
fn check_products(
    ctx: &Context,
    products: &[Product],
    p: &Params,
    used: usize,
) -> Result<Verification, RuntimeError> {
    let gpu = ctx.gpu;
    let cells = p.rows * p.cols;
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
        host.as_slice(),
        |_| p.aligned as f64,
        0.0,
    ))
}

/// One traced iteration with every stream in use.
fn trace(
    ctx: &Context,
    streams: &[Stream],
    shape: Shape,
    products: &[Product],
    p: &Params,
) -> Result<Timeline, RuntimeError> {
    let gpu = ctx.gpu;
    let mut tracer = Tracer::begin(gpu, streams)?;
    for (i, product) in products.iter().enumerate() {
        let s = i % streams.len();
        tracer.op(gpu, streams, s, OpKind::Kernel, |stream| {
            multiply(ctx, stream, shape, product, p)
        })?;
    }
    tracer.finish(
        gpu,
        &format!("matmul-streams ({} streams)", streams.len()),
        streams.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_per_stream_gives_the_wiki_plateaus() {
        let tasks: Vec<usize> = (1..=16).map(|s| tasks_per_stream(16, s)).collect();
        assert_eq!(tasks, [16, 8, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1]);
    }

    #[test]
    fn points_compute_speedup_and_model_from_trials() {
        let trials = vec![vec![16.0, 8.0, 6.5, 4.0], vec![16.0, 8.0, 5.5, 4.0]];
        let pts = points(&trials, 4);
        assert_eq!(pts.len(), 4);
        assert_eq!(pts[1].speedup, 2.0);
        assert_eq!(pts[2].time.summary.mean, 6.0);
        assert_eq!(pts[2].tasks_per_stream, 2);
        assert_eq!(pts[2].model_ms, 8.0);
        assert_eq!(pts[3].model_ms, 4.0);
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        let bad = |p: Params| p.validate().unwrap_err().to_string();
        assert!(
            bad(Params {
                rows: 0,
                ..Params::default()
            })
            .contains("--rows 0")
        );
        assert!(
            bad(Params {
                max_streams: 0,
                ..Params::default()
            })
            .contains("--max-streams 0")
        );
        assert!(
            bad(Params {
                block: 64,
                ..Params::default()
            })
            .contains("--block 64")
        );
        assert!(
            bad(Params {
                trials: 0,
                ..Params::default()
            })
            .contains("--trials 0")
        );
        assert!(
            bad(Params {
                aligned: 1 << 25,
                ..Params::default()
            })
            .contains("too large")
        );
        assert!(Params::default().validate().is_ok() && Params::quick().validate().is_ok());
    }
}
