//! kernel-concurrency's derived numbers: per queue setting and stream count the serial
//! and concurrent medians, the speedup, and the hardware-queue model.
//!
//! Each stream runs two kernels of duration `t`, the second after the first. Stream `i`
//! feeds hardware queue `i mod q`, and a queue hands out its work in order: a stream's
//! second kernel holds back the first kernel of the next stream on its queue until its
//! own first kernel is done. With `k = ceil(N / min(q, G))` streams on the busiest queue
//! (`G`, the most grids the GPU keeps resident, is 128 on Hopper), that queue runs
//! `k + 1` waves of `t`: the expected concurrent time is `(k + 1)·t`, the expected serial
//! time `2N·t`.
use serde::{Deserialize, Serialize};

use crate::saved::kernel_concurrency::KernelConcurrencyResult;

/// Relative distance within which measured waves "match" the model.
pub const WAVES_TOLERANCE: f64 = 0.15;

/// One stream count with one queue setting (medians, milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConcurrencyRow {
    pub queues: u32,
    pub streams: usize,
    pub serial_ms: f64,
    pub concurrent_ms: f64,
    /// serial / concurrent.
    pub speedup: f64,
    /// The model's waves: `ceil(streams / min(queues, resident grids)) + 1`.
    pub model_waves: usize,
    /// concurrent / one kernel alone.
    pub measured_waves: f64,
    /// 2 × streams × one kernel alone.
    pub expected_serial_ms: f64,
    /// model waves × one kernel alone.
    pub expected_concurrent_ms: f64,
    /// model waves × the spin time each kernel is held to: no run can be faster.
    pub bound_ms: f64,
    /// Measured waves within [`WAVES_TOLERANCE`] of the model.
    pub matches_model: bool,
    /// Measured faster than its bound: the bound or the measurement is wrong.
    pub beyond_bound: bool,
}

/// Everything derived from a kernel-concurrency result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConcurrencyAnalysis {
    pub rows: Vec<ConcurrencyRow>,
    /// The queue settings measured, in order.
    pub queues: Vec<u32>,
}

impl ConcurrencyAnalysis {
    pub fn row(&self, queues: u32, streams: usize) -> Option<&ConcurrencyRow> {
        self.rows
            .iter()
            .find(|r| r.queues == queues && r.streams == streams)
    }
}

/// The kernels each stream runs, one after another.
const KERNELS_PER_STREAM: usize = 2;

/// `ceil(streams / min(queues, resident)) + 1`: the busiest queue's waves.
pub fn model_waves(streams: usize, queues: u32, resident: u32) -> usize {
    streams.div_ceil(queues.min(resident).max(1) as usize) + KERNELS_PER_STREAM - 1
}

/// Derive everything from `r`.
pub fn analyze(r: &KernelConcurrencyResult) -> ConcurrencyAnalysis {
    let spin_ms = f64::from(r.params.spin_us) / 1e3;
    let mut rows = Vec::new();
    for run in &r.runs {
        let single = run.single.median();
        for p in &run.points {
            let waves = model_waves(p.streams, run.queues, r.max_resident_grids);
            let (serial_ms, concurrent_ms) = (p.serial.median(), p.concurrent.median());
            let measured_waves = concurrent_ms / single;
            let expected_concurrent_ms = waves as f64 * single;
            rows.push(ConcurrencyRow {
                queues: run.queues,
                streams: p.streams,
                serial_ms,
                concurrent_ms,
                speedup: serial_ms / concurrent_ms,
                model_waves: waves,
                measured_waves,
                expected_serial_ms: (KERNELS_PER_STREAM * p.streams) as f64 * single,
                expected_concurrent_ms,
                bound_ms: waves as f64 * spin_ms,
                matches_model: (measured_waves / waves as f64 - 1.0).abs() <= WAVES_TOLERANCE,
                beyond_bound: concurrent_ms < waves as f64 * spin_ms,
            });
        }
    }
    ConcurrencyAnalysis {
        queues: r.runs.iter().map(|q| q.queues).collect(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waves_follow_the_queues_and_the_resident_grid_limit() {
        assert_eq!(model_waves(8, 8, 128), 2);
        assert_eq!(model_waves(16, 8, 128), 3);
        assert_eq!(model_waves(17, 8, 128), 4);
        assert_eq!(model_waves(32, 32, 128), 2);
        assert_eq!(model_waves(128, 32, 128), 5);
        assert_eq!(model_waves(256, 512, 128), 3);
    }
}
