//! overlap-map's derived numbers: the measured speedup of the best asynchronous order
//! over one stream (the fastest of the one-stream timings, which all run the same work
//! in order) for every (size, stream count), the model's prediction of the same
//! from measured costs, the contour where streams start to pay off, and where the two
//! disagree.
//!
//! The model. Each iteration moves `B` bytes in and out and runs the kernel over `n`
//! elements, split into `s` chunks. From the same run it takes: the fixed cost of one
//! copy on each copy engine (`ℓ_h`, `ℓ_d`: tiny copies back to back), of one launch
//! (`L`: empty kernels back to back), the kernel's time per element (`k`, from the
//! kernel alone over the largest array), and the copy rates (`r_h`, `r_d` one way, `R`
//! both ways at once). The engines' busy times per iteration are then
//!
//! ```text
//! HtoD: s·ℓ_h + B/r_h     SMs: s·max(L, k·n/s)     DtoH: s·ℓ_d + B/r_d     link: 2B/R
//! ```
//!
//! and the time per iteration is the pipeline bound of those stages over `s` streams
//! and the iterations of one sample ([`super::pipeline`]); one stream runs them in
//! order. Besides, every operation passes the GPU's command front-end one after another,
//! whatever its stream: an iteration costs at least `s·(ℓ_h + L + ℓ_d)`, which is what
//! makes many streams lose on small arrays. Streams "pay off" where the speedup reaches
//! [`PAYOFF`].
use serde::{Deserialize, Serialize};

use super::pipeline::{self, Stages};
use super::rates::{best_rates, ms_at};
use crate::saved::overlap_map::OverlapMapResult;

/// The speedup from which streams are said to pay off.
pub const PAYOFF: f64 = 1.10;

/// One (size, stream count) cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapCellAnalysis {
    pub elements: usize,
    pub streams: usize,
    /// The better asynchronous order's median, milliseconds per iteration.
    pub best_ms: f64,
    /// One stream's median over `best_ms`.
    pub speedup: f64,
    /// The model's time per iteration and speedup.
    pub model_ms: f64,
    pub model_speedup: f64,
    /// Measured and model on different sides of [`PAYOFF`].
    pub disagrees: bool,
}

/// The smallest size at which a stream count pays off, measured and modelled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crossover {
    pub streams: usize,
    pub measured: Option<usize>,
    pub model: Option<usize>,
    /// How many size steps apart the two are (`None` if either is missing).
    pub steps_apart: Option<usize>,
}

/// Everything derived from an overlap-map result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapAnalysis {
    pub sizes: Vec<usize>,
    pub stream_counts: Vec<usize>,
    pub cells: Vec<MapCellAnalysis>,
    pub crossovers: Vec<Crossover>,
    /// The model's constants (milliseconds, GB/s): ℓ_h, ℓ_d, L, k per element.
    pub htod_latency_ms: f64,
    pub dtoh_latency_ms: f64,
    pub launch_ms: f64,
    pub kernel_ms_per_element: f64,
}

impl MapAnalysis {
    pub fn cell(&self, elements: usize, streams: usize) -> Option<&MapCellAnalysis> {
        self.cells
            .iter()
            .find(|c| c.elements == elements && c.streams == streams)
    }
}

/// The smallest of `sizes` whose speedup (by `speedup`) reaches [`PAYOFF`].
fn first_paying(sizes: &[usize], speedup: impl Fn(usize) -> Option<f64>) -> Option<usize> {
    sizes
        .iter()
        .copied()
        .find(|&n| speedup(n).is_some_and(|x| x >= PAYOFF))
}

/// Derive everything from `r`.
pub fn analyze(r: &OverlapMapResult) -> MapAnalysis {
    let rates = best_rates(&r.copies);
    let htod_latency_ms = r.overheads.htod_latency.median();
    let dtoh_latency_ms = r.overheads.dtoh_latency.median();
    let launch_ms = r.overheads.launch.median();
    let largest = r.sizes.iter().max_by_key(|s| s.elements);
    let kernel_ms_per_element =
        largest.map_or(0.0, |s| s.kernel_alone.median() / s.elements as f64);
    let model_ms = |elements: usize, streams: usize, runs: usize| {
        let bytes = (elements * size_of::<f32>()) as u64;
        let s = streams as f64;
        let chunk_kernel = (kernel_ms_per_element * elements as f64 / s).max(launch_ms);
        let stages = Stages {
            htod_ms: s * htod_latency_ms + ms_at(bytes, rates.htod_gbps),
            kernel_ms: s * chunk_kernel,
            dtoh_ms: s * dtoh_latency_ms + ms_at(bytes, rates.dtoh_gbps),
            both_ms: ms_at(2 * bytes, rates.both_gbps),
        };
        let front_end = s * (htod_latency_ms + launch_ms + dtoh_latency_ms);
        pipeline::bound(stages, streams, runs, r.device.copy_engines)
            .ms
            .max(front_end)
    };
    let mut cells = Vec::new();
    for size in &r.sizes {
        // One stream runs everything in order; its one-stream cells time the same work.
        let sequential = (size.cells.iter())
            .filter(|c| c.streams == 1)
            .map(|c| c.async1.median().min(c.async2.median()))
            .fold(size.sequential.median(), f64::min);
        let one_stream_model = model_ms(size.elements, 1, size.iterations);
        for cell in &size.cells {
            let best_ms = cell.async1.median().min(cell.async2.median());
            let model = model_ms(size.elements, cell.streams, cell.iterations);
            let (speedup, model_speedup) = (sequential / best_ms, one_stream_model / model);
            cells.push(MapCellAnalysis {
                elements: size.elements,
                streams: cell.streams,
                best_ms,
                speedup,
                model_ms: model,
                model_speedup,
                disagrees: (speedup >= PAYOFF) != (model_speedup >= PAYOFF),
            });
        }
    }
    let sizes: Vec<usize> = r.sizes.iter().map(|s| s.elements).collect();
    let mut stream_counts: Vec<usize> = cells.iter().map(|c| c.streams).collect();
    stream_counts.sort_unstable();
    stream_counts.dedup();
    let crossovers = (stream_counts.iter())
        .filter(|&&s| s > 1)
        .map(|&streams| {
            let pick = |model: bool| {
                first_paying(&sizes, |n| {
                    (cells.iter())
                        .find(|c| c.elements == n && c.streams == streams)
                        .map(|c| if model { c.model_speedup } else { c.speedup })
                })
            };
            let (measured, model) = (pick(false), pick(true));
            let index = |n: usize| sizes.iter().position(|&x| x == n);
            Crossover {
                streams,
                steps_apart: measured
                    .zip(model)
                    .and_then(|(a, b)| Some(index(a)?.abs_diff(index(b)?))),
                measured,
                model,
            }
        })
        .collect();
    MapAnalysis {
        sizes,
        stream_counts,
        cells,
        crossovers,
        htod_latency_ms,
        dtoh_latency_ms,
        launch_ms,
        kernel_ms_per_element,
    }
}
