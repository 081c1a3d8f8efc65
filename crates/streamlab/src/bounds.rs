//! The physical limits every result is judged against, measured ([`measure`]) and turned
//! into each experiment's bound (the pure functions below).
//!
//! # What is measured
//! Over one buffer size (default: the sincos array, 2^25 floats = 128 MiB), each repeated
//! and summarised by its median: a pinned host-to-device copy alone (H), a device-to-host
//! copy alone (D), one copy each way at once on two streams, a device-to-device copy
//! (bytes read + bytes written), and the launch overhead (many back-to-back launches of
//! `fill` on a 1×1 matrix, time per launch).
//!
//! # The bounds
//! Work split into `k` equal chunks passes three engines in order: the H2D copy engine
//! (busy H in all), the SMs (busy K), the D2H copy engine (busy D). With `e` copy
//! engines (`asyncEngineCount`) the engines and their busy times are
//! * `e ≥ 2`: `[H, K, D]`, one copy engine per direction (the H100 has 3);
//! * `e = 1`: `[H + D, K]`, both directions share one copy engine;
//! * `e = 0`: `[H + K + D]`, copies never overlap kernels.
//!
//! **Pipeline fill/drain bound** ([`pipeline_bound_ms`]). An engine busy `E` in all
//! cannot start before the work that must precede it in the first chunk is done, and
//! must be followed by the work that comes after it in the last chunk. For the bottleneck
//! engine of `[H, K, D]` that is
//!
//! ```text
//! T(k) ≥ E + (S − E)/k,   S = H + K + D,
//! ```
//!
//! largest for the busiest engine `M = max(H, K, D)`: `T(k) ≥ M + (S − M)/k`. With copies
//! the bottleneck (sincos, memcpy-kernel on an H100) that is `H + (K + D)/k`: `k = 1` gives
//! the sequential `H + K + D`, and `k → ∞` the copy-engine bound. A shared copy engine
//! starts with a copy in and ends with a copy out, so it is only bounded by its busy time
//! `H + D`; the SMs still wait for the first chunk in and are followed by the last chunk
//! out: `T(k) ≥ max(H + D, K + (H + D)/k)`.
//!
//! **Copy-engine bound** ([`copy_engine_bound_ms`]): `k → ∞`, the busiest copy engine,
//! `max(H, D)` with two or more engines. sincos-overlap issues its iterations back to back,
//! so one iteration's fill overlaps the previous one's drain and the per-iteration time
//! approaches this bound rather than the single-iteration pipeline bound.
//!
//! **Three-engine Amdahl bound** ([`amdahl_bound_ms`], [`amdahl_speedup`]): memcpy-kernel's
//! best concurrent time is the busiest engine, and its best speedup `S / M`.
//!
//! **Tasks per stream** ([`matmul_model_ms`]): matmul-streams' products are independent
//! and small, so with `s` streams the time is that of the stream with the most products:
//! one-stream time × `ceil(products / s)` / products.
//!
//! [`efficiency`] = bound / measured: 1 is the limit reached; above 1 the model is wrong.
use serde::{Deserialize, Serialize};

use crate::experiments::UsageError;
use crate::experiments::matmul_streams::tasks_per_stream;
use crate::results::Bounds;
use crate::runtime::{Arg, DeviceBuffer, Event, Gpu, RuntimeError, Shape, Stream};
use crate::stats::Series;
use crate::timing::Region;

/// What [`measure`] measures.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Floats per copy (default: the sincos-overlap array).
    #[arg(long, default_value_t = 1 << 25)]
    pub elements: usize,
    /// Samples of each measurement; the medians are the bounds.
    #[arg(long, default_value_t = 20)]
    pub repeats: usize,
    /// Back-to-back launches in one launch-overhead sample.
    #[arg(long, default_value_t = 1000)]
    pub launches: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            elements: 1 << 25,
            repeats: 20,
            launches: 1000,
        }
    }
}

impl Params {
    /// Small sizes for a fast look.
    pub fn quick() -> Params {
        Params {
            elements: 1 << 22,
            repeats: 5,
            launches: 200,
        }
    }

    pub fn validate(&self) -> Result<(), UsageError> {
        if self.elements == 0 {
            return Err(UsageError::new(
                "--elements 0 copies nothing: use at least 1",
            ));
        }
        if self.repeats == 0 || self.launches == 0 {
            return Err(UsageError::new(
                "--repeats and --launches must be at least 1",
            ));
        }
        Ok(())
    }

    /// Bytes of one copy.
    pub fn bytes(&self) -> u64 {
        (self.elements * size_of::<f32>()) as u64
    }
}

/// Copies each way per bidirectional sample: one pair alone under-reports the rate, since
/// the two copies never start and end at exactly the same moment; a run of pairs back to
/// back measures the steady state a pipeline sees.
pub const STEADY_PAIRS: usize = 8;

/// Measure the copy bandwidths and the launch overhead on `gpu`.
pub fn measure(gpu: &Gpu, params: &Params) -> Result<Bounds, RuntimeError> {
    let n = params.elements;
    gpu.ensure_fits(2 * n * size_of::<f32>())?;
    let host_a = gpu.pinned(n, 1.0f32)?;
    let mut host_b = gpu.pinned(n, 0.0f32)?;
    let dev_a: DeviceBuffer<f32> = gpu.alloc(n)?;
    let dev_b: DeviceBuffer<f32> = gpu.alloc(n)?;
    let streams = gpu.streams(2)?;
    let stream = &streams[0];
    let mut task = crate::progress::Task::start("bounds", 5);

    // Warm up each path once, so no first-use cost lands in a sample.
    stream.htod(&dev_a, 0, &host_a, 0..n)?;
    stream.dtod(&dev_b, 0, &dev_a, 0..n)?;
    stream.dtoh(&mut host_b, 0, &dev_b, 0..n)?;
    gpu.synchronize()?;

    let h2d = bracketed(gpu, stream, params.repeats, |s| {
        s.htod(&dev_a, 0, &host_a, 0..n)
    })?;
    task.step("HtoD");
    let d2h = bracketed(gpu, stream, params.repeats, |s| {
        s.dtoh(&mut host_b, 0, &dev_b, 0..n)
    })?;
    task.step("DtoH");
    let d2d = bracketed(gpu, stream, params.repeats, |s| {
        s.dtod(&dev_b, 0, &dev_a, 0..n)
    })?;
    task.step("DtoD");

    let region = Region::new(gpu, 2)?;
    let mut both = Vec::with_capacity(params.repeats);
    for _ in 0..params.repeats {
        region.begin(&streams)?;
        for _ in 0..STEADY_PAIRS {
            streams[0].htod(&dev_a, 0, &host_a, 0..n)?;
            streams[1].dtoh(&mut host_b, 0, &dev_b, 0..n)?;
        }
        both.push(region.end(&streams)? / STEADY_PAIRS as f64);
    }
    task.step("both directions");

    let launch = launch_overhead(gpu, stream, params)?;
    task.step("launch overhead");
    task.finish();
    gpu.synchronize()?;

    let series = |samples: Vec<f64>| Series::new(samples).expect("finite event times");
    let (h2d, d2h, d2d, bidirectional, launch) = (
        series(h2d),
        series(d2h),
        series(d2d),
        series(both),
        series(launch),
    );
    let bytes = params.bytes();
    Ok(Bounds {
        params: params.clone(),
        device: gpu.info().clone(),
        bytes,
        h2d_ms: h2d.summary.median,
        d2h_ms: d2h.summary.median,
        bidirectional_ms: bidirectional.summary.median,
        d2d_ms: d2d.summary.median,
        h2d_gbps: gbps(bytes, h2d.summary.median),
        d2h_gbps: gbps(bytes, d2h.summary.median),
        bidirectional_gbps: gbps(2 * bytes, bidirectional.summary.median),
        d2d_gbps: gbps(2 * bytes, d2d.summary.median),
        launch_us: launch.summary.median * 1e3,
        h2d,
        d2h,
        bidirectional,
        d2d,
        launch,
    })
}

/// Issue `op` `repeats` times back to back on `stream`, an event before and after each,
/// and return each one's milliseconds.
fn bracketed(
    gpu: &Gpu,
    stream: &Stream,
    repeats: usize,
    mut op: impl FnMut(&Stream) -> Result<(), RuntimeError>,
) -> Result<Vec<f64>, RuntimeError> {
    let marks = (0..=repeats)
        .map(|_| gpu.event())
        .collect::<Result<Vec<Event>, _>>()?;
    stream.record(&marks[0])?;
    for mark in &marks[1..] {
        op(stream)?;
        stream.record(mark)?;
    }
    marks.windows(2).map(|w| w[0].elapsed_ms(&w[1])).collect()
}

/// Milliseconds per launch of `fill` on a 1×1 matrix, one sample per `launches` launches.
fn launch_overhead(gpu: &Gpu, stream: &Stream, params: &Params) -> Result<Vec<f64>, RuntimeError> {
    let cell: DeviceBuffer<f32> = gpu.alloc(1)?;
    let fill = gpu.kernels().fill;
    let one = Shape {
        grid: (1, 1),
        block: (1, 1),
    };
    let args = [cell.at(0), Arg::I32(1), Arg::I32(1), Arg::F32(0.0)];
    stream.launch(&fill, one, &args)?;
    stream.synchronize()?;
    let samples = bracketed(gpu, stream, params.repeats, |s| {
        (0..params.launches).try_for_each(|_| s.launch(&fill, one, &args))
    })?;
    stream.synchronize()?;
    Ok(samples
        .into_iter()
        .map(|ms| ms / params.launches as f64)
        .collect())
}

/// GB/s (10^9 bytes per second) of `bytes` moved in `ms` milliseconds.
pub fn gbps(bytes: u64, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e6)
}

/// The three parts of work that flows host → kernel → host, each over the whole data
/// (milliseconds, each measured alone).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stages {
    pub htod_ms: f64,
    pub kernel_ms: f64,
    pub dtoh_ms: f64,
}

impl Stages {
    /// Sequential time: every part after the other.
    pub fn total_ms(&self) -> f64 {
        self.htod_ms + self.kernel_ms + self.dtoh_ms
    }

    /// Per engine, its busy time and the work that must precede it in the first chunk
    /// plus the work that must follow it in the last one (module header).
    fn engines(&self, copy_engines: i32) -> Vec<(f64, f64)> {
        let Stages {
            htod_ms: h,
            kernel_ms: k,
            dtoh_ms: d,
        } = *self;
        match copy_engines {
            e if e >= 2 => vec![(h, k + d), (k, h + d), (d, h + k)],
            1 => vec![(h + d, 0.0), (k, h + d)],
            _ => vec![(h + k + d, 0.0)],
        }
    }
}

/// The pipeline fill/drain bound of `stages` split into `chunks` equal chunks:
/// `max over engines of busy + (before + after) / chunks` (module header).
pub fn pipeline_bound_ms(stages: Stages, chunks: usize, copy_engines: i32) -> f64 {
    let k = chunks.max(1) as f64;
    stages
        .engines(copy_engines)
        .into_iter()
        .map(|(busy, around)| busy + around / k)
        .fold(0.0, f64::max)
}

/// The best time with infinitely many chunks: the busiest engine.
pub fn amdahl_bound_ms(stages: Stages, copy_engines: i32) -> f64 {
    stages
        .engines(copy_engines)
        .into_iter()
        .map(|(busy, _)| busy)
        .fold(0.0, f64::max)
}

/// The best speedup over sequential: sequential time over [`amdahl_bound_ms`].
pub fn amdahl_speedup(stages: Stages, copy_engines: i32) -> f64 {
    stages.total_ms() / amdahl_bound_ms(stages, copy_engines)
}

/// The copy-engine bound: the busiest copy engine (`max(H, D)` with one engine per
/// direction, `H + D` with one shared engine or none).
pub fn copy_engine_bound_ms(htod_ms: f64, dtoh_ms: f64, copy_engines: i32) -> f64 {
    if copy_engines >= 2 {
        htod_ms.max(dtoh_ms)
    } else {
        htod_ms + dtoh_ms
    }
}

/// matmul-streams' tasks-per-stream model: one-stream time × `ceil(products / streams)`
/// / products.
pub fn matmul_model_ms(one_stream_ms: f64, products: usize, streams: usize) -> f64 {
    one_stream_ms * tasks_per_stream(products, streams) as f64 / products as f64
}

/// How close a measurement came to its bound: bound / measured.
pub fn efficiency(bound_ms: f64, measured_ms: f64) -> f64 {
    bound_ms / measured_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// The H100 figures of the spec: sincos 2^25 floats.
    const SINCOS: Stages = Stages {
        htod_ms: 2.43,
        kernel_ms: 0.52,
        dtoh_ms: 2.43,
    };

    #[test]
    fn bandwidth_from_bytes_and_milliseconds() {
        assert!(close(gbps(1_000_000_000, 1000.0), 1.0));
        // 128 MiB in 2.43 ms is the spec's 55.2 GB/s.
        assert!((gbps(128 << 20, 2.43) - 55.23).abs() < 0.01);
        assert!(close(
            Params::default().bytes() as f64,
            (128u64 << 20) as f64
        ));
    }

    #[test]
    fn pipeline_bound_is_h_plus_the_rest_over_k_when_copies_dominate() {
        // k = 1 is the sequential time.
        assert!(close(pipeline_bound_ms(SINCOS, 1, 3), SINCOS.total_ms()));
        // H + (K + D) / 4.
        assert!(close(
            pipeline_bound_ms(SINCOS, 4, 3),
            2.43 + (0.52 + 2.43) / 4.0
        ));
        // Many chunks approach the copy-engine bound from above.
        let many = pipeline_bound_ms(SINCOS, 1_000_000, 3);
        assert!(many > 2.43 && many - 2.43 < 1e-5);
        assert!(close(
            copy_engine_bound_ms(SINCOS.htod_ms, SINCOS.dtoh_ms, 3),
            2.43
        ));
        // A kernel-bound case: K + (H + D) / k.
        let heavy = Stages {
            htod_ms: 1.0,
            kernel_ms: 10.0,
            dtoh_ms: 2.0,
        };
        assert!(close(pipeline_bound_ms(heavy, 3, 2), 10.0 + 1.0));
        // Zero chunks are treated as one.
        assert!(close(pipeline_bound_ms(heavy, 0, 2), heavy.total_ms()));
    }

    #[test]
    fn fewer_copy_engines_serialize_the_copies() {
        assert!(close(copy_engine_bound_ms(2.0, 3.0, 1), 5.0));
        assert!(close(copy_engine_bound_ms(2.0, 3.0, 2), 3.0));
        // One shared engine: max(H + D, K + (H + D) / k).
        assert!(close(pipeline_bound_ms(SINCOS, 4, 1), 4.86));
        let heavy = Stages {
            htod_ms: 1.0,
            kernel_ms: 10.0,
            dtoh_ms: 2.0,
        };
        assert!(close(pipeline_bound_ms(heavy, 3, 1), 11.0));
        // No copy engine: nothing overlaps, whatever the chunking.
        assert!(close(pipeline_bound_ms(SINCOS, 8, 0), SINCOS.total_ms()));
        assert!(close(amdahl_speedup(SINCOS, 0), 1.0));
    }

    #[test]
    fn amdahl_bound_of_the_memcpy_kernel_experiment() {
        let memcpy = Stages {
            htod_ms: 10.0,
            kernel_ms: 1.4,
            dtoh_ms: 10.0,
        };
        assert!(close(amdahl_bound_ms(memcpy, 3), 10.0));
        assert!(close(amdahl_speedup(memcpy, 3), 2.14));
        // Eight streams cannot beat the pipeline bound: below the Amdahl ideal.
        let eight = memcpy.total_ms() / pipeline_bound_ms(memcpy, 8, 3);
        assert!(eight < amdahl_speedup(memcpy, 3));
        assert!(close(pipeline_bound_ms(memcpy, 8, 3), 10.0 + 11.4 / 8.0));
    }

    #[test]
    fn matmul_model_and_efficiency() {
        assert!(close(matmul_model_ms(160.0, 16, 1), 160.0));
        assert!(close(matmul_model_ms(160.0, 16, 7), 30.0));
        assert!(close(matmul_model_ms(160.0, 16, 16), 10.0));
        assert!(close(efficiency(10.0, 12.5), 0.8));
        assert!(efficiency(2.43, 2.85) < 1.0);
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
                launches: 0,
                ..Params::default()
            })
            .contains("--launches")
        );
        assert!(Params::default().validate().is_ok() && Params::quick().validate().is_ok());
    }
}
