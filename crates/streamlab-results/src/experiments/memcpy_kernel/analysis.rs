//! What memcpy-kernel derives: each row's speedup against its bound (copies at the
//! measured rates, the kernels' stage from the run's fastest kernel rate), and the breakeven.
use super::{MemcpyKernelResult, MemcpyKernelRow};
use crate::derived::rates::for_chunks;
use crate::experiments::prelude::*;

/// One row against its bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemcpyRow {
    pub cycles: i32,
    pub streams: usize,
    /// total / concurrent (medians).
    pub speedup: f64,
    pub bound: Bound,
    /// total / bound: the most the streamed version can gain.
    pub bound_speedup: f64,
    /// bound / concurrent.
    pub efficiency: f64,
    /// The saved row: its stages' and its two versions' samples.
    #[serde(skip)]
    pub saved: MemcpyKernelRow,
}

/// Everything derived from a memcpy-kernel result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemcpyAnalysis {
    /// The copy rates over the headline stream count's chunks.
    pub rates: CopyRates,
    /// The stream counts measured, in the order measured.
    pub stream_counts: Vec<usize>,
    pub rows: Vec<MemcpyRow>,
    /// The stream count of the headline (the first measured).
    pub headline_streams: usize,
    /// Index into `rows` of the breakeven: the headline stream count's row of the first
    /// cycles value whose kernel outlasts both copies (medians).
    pub at_breakeven: Option<usize>,
    /// Index into `rows` of the best speedup.
    pub best: Option<usize>,
}

/// The kernels' fastest rate at `streams` streams, in ms per cycle (the streamed
/// version's kernels alone, over the rows whose cycles are at least the run's median: the
/// kernel's time there is its sums'), and how far that rate moved over those rows
/// ((slowest − fastest) / slowest): clocks move with load and temperature over a run.
fn kernel_rate(r: &MemcpyKernelResult, streams: usize) -> Option<(f64, f64)> {
    let mut cycles: Vec<i32> = r.rows.iter().map(|x| x.cycles).collect();
    cycles.sort_unstable();
    let median = *cycles.get(cycles.len() / 2)?;
    let rates: Vec<f64> = (r.rows.iter())
        .filter(|x| x.streams == streams && x.cycles >= median.max(1))
        .map(|x| x.kernels.min() / f64::from(x.cycles))
        .filter(|rate| rate.is_finite() && *rate > 0.0)
        .collect();
    let fastest = rates.iter().copied().reduce(f64::min)?;
    let slowest = rates.iter().copied().reduce(f64::max)?;
    Some((fastest, (slowest - fastest) / slowest))
}

pub(super) fn analyze(r: &MemcpyKernelResult) -> MemcpyAnalysis {
    let link = own_link(r);
    let rows: Vec<MemcpyRow> = (r.rows.iter())
        .map(|row| analyze_row(r, row, link.as_ref()))
        .collect();
    let mut stream_counts: Vec<usize> = Vec::new();
    for row in &rows {
        if !stream_counts.contains(&row.streams) {
            stream_counts.push(row.streams);
        }
    }
    let headline_streams = stream_counts.first().copied().unwrap_or(0);
    let at_breakeven = (0..rows.len())
        .filter(|&i| rows[i].streams == headline_streams)
        .filter(|&i| {
            let x = &rows[i].saved;
            super::outlasts_the_copies(x.kernel.median(), x.htod.median(), x.dtoh.median())
        })
        .min_by_key(|&i| rows[i].cycles);
    let best = (rows.iter().enumerate())
        .filter(|(_, r)| r.speedup.is_finite())
        .max_by(|a, b| a.1.speedup.total_cmp(&b.1.speedup))
        .map(|(i, _)| i);
    MemcpyAnalysis {
        rates: for_chunks(&r.copies, headline_streams).map_or(CopyRates::UNMEASURED, best_rates),
        stream_counts,
        rows,
        headline_streams,
        at_breakeven,
        best,
    }
}

/// One row against its bound. The kernels' term is the fastest of the whole array's
/// kernel, the streamed version's kernels alone, and the run's fastest per-cycle rate at
/// this stream count times the row's cycles ([`kernel_rate`]); the bound's noise is the
/// larger of its copies' noise and how far that rate moved over the run.
fn analyze_row(
    r: &MemcpyKernelResult,
    row: &MemcpyKernelRow,
    link: Option<&LinkRates>,
) -> MemcpyRow {
    let (copies, rate) = (&r.copies, kernel_rate(r, row.streams));
    let at_rate = rate.map_or(f64::INFINITY, |(ms_per_cycle, _)| {
        ms_per_cycle * f64::from(row.cycles)
    });
    let kernel = row.kernel.min().min(row.kernels.min()).min(at_rate);
    let parts = match pipeline_stages(copies, row.streams, Some(kernel), link) {
        Some(parts) => parts,
        // Without its chunks' copy times, the whole array's sequential copies alone.
        None => pipeline::Stages {
            htod_ms: row.htod.min(),
            kernel_ms: kernel,
            dtoh_ms: row.dtoh.min(),
            both_ms: row.htod.min().max(row.dtoh.min()),
        },
    };
    let (total_ms, concurrent_ms) = (row.total.median(), row.concurrent.median());
    let noise = chunks_noise(copies, row.streams).max(rate.map_or(0.0, |(_, moved)| moved));
    let bound = pipeline::bound(parts, row.streams, 1, r.run.device.copy_engines).held(
        concurrent_ms,
        row.concurrent.noise(),
        noise,
    );
    MemcpyRow {
        cycles: row.cycles,
        streams: row.streams,
        speedup: total_ms / concurrent_ms,
        bound,
        bound_speedup: total_ms / bound.ms,
        efficiency: bound.ms / concurrent_ms,
        saved: row.clone(),
    }
}
