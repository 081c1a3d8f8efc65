//! memcpy-kernel's derived numbers: per row the speedup, the row's reachable bound and
//! the speedup it allows, the breakeven point where the kernel outlasts the copies, and
//! the headline figures.
//!
//! Each row times one streamed run, so its bound carries the first chunk's copy in and
//! the last chunk's copy out ([`super::pipeline`] with one run). The row's copy stages are
//! its stream count's chunks copied in alone, out alone and both ways at once; its kernel
//! stage the faster of the kernel alone in the sequential run and the chunks' kernels
//! alone, all at once (fastest samples, all measured in the same run).
use serde::{Deserialize, Serialize};

use super::pipeline::{self, Bound};
use super::rates::{best_rates, for_chunks, pipeline_stages};
use crate::saved::memcpy_kernel::{MemcpyKernelResult, MemcpyKernelRow};
use crate::saved::timeline::CopyRates;
use crate::saved::{LinkRates, StageTimes};

/// One row against its bound (medians, milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyRow {
    pub cycles: i32,
    pub streams: usize,
    pub htod_ms: f64,
    pub kernel_ms: f64,
    pub dtoh_ms: f64,
    pub total_ms: f64,
    pub concurrent_ms: f64,
    /// total / concurrent.
    pub speedup: f64,
    pub bound: Bound,
    /// total / bound: the most the streamed version can gain.
    pub bound_speedup: f64,
    /// bound / concurrent.
    pub efficiency: f64,
    /// Beat the bound built from the measured stages: the bound was lowered to the row
    /// (`bound.built_ms` keeps what it was).
    pub beyond_bound: bool,
    /// The streamed run's relative noise ([`crate::stats::Series::noise`]).
    pub noise: f64,
}

/// Everything derived from a memcpy-kernel result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyAnalysis {
    /// The copy rates over the headline stream count's chunks.
    pub rates: CopyRates,
    /// The stream counts measured, in the order measured.
    pub stream_counts: Vec<usize>,
    pub rows: Vec<MemcpyRow>,
    /// The first cycles value whose kernel outlasts both copies (medians).
    pub breakeven_cycles: Option<i32>,
    /// The stream count of the headline (the first measured).
    pub headline_streams: usize,
    /// Index into `rows` of the headline row at the breakeven point.
    pub at_breakeven: Option<usize>,
    /// Index into `rows` of the best speedup.
    pub best: Option<usize>,
    pub rows_beyond_bound: usize,
}

impl MemcpyAnalysis {
    /// The rows of one stream count, in cycles order.
    pub fn rows_with(&self, streams: usize) -> impl Iterator<Item = &MemcpyRow> {
        self.rows.iter().filter(move |r| r.streams == streams)
    }

    pub fn breakeven_row(&self) -> Option<&MemcpyRow> {
        self.at_breakeven.map(|i| &self.rows[i])
    }

    pub fn best_row(&self) -> Option<&MemcpyRow> {
        self.best.map(|i| &self.rows[i])
    }
}

/// Derive everything from `r`.
pub fn analyze(r: &MemcpyKernelResult) -> MemcpyAnalysis {
    let rows: Vec<MemcpyRow> = (r.rows.iter())
        .map(|row| {
            let link = r.provenance.fastest_link.as_ref();
            analyze_row(row, &r.copies, r.device.copy_engines, link)
        })
        .collect();
    let mut stream_counts: Vec<usize> = Vec::new();
    for row in &rows {
        if !stream_counts.contains(&row.streams) {
            stream_counts.push(row.streams);
        }
    }
    let headline_streams = stream_counts.first().copied().unwrap_or(0);
    let mut by_cycles: Vec<&MemcpyRow> = rows
        .iter()
        .filter(|r| r.streams == headline_streams)
        .collect();
    by_cycles.sort_by_key(|r| r.cycles);
    let breakeven_cycles = by_cycles
        .iter()
        .find(|r| r.kernel_ms > r.htod_ms.max(r.dtoh_ms))
        .map(|r| r.cycles);
    let at_breakeven = breakeven_cycles.and_then(|c| {
        rows.iter()
            .position(|r| r.streams == headline_streams && r.cycles == c)
    });
    let best = (rows.iter().enumerate())
        .filter(|(_, r)| r.speedup.is_finite())
        .max_by(|a, b| a.1.speedup.total_cmp(&b.1.speedup))
        .map(|(i, _)| i);
    MemcpyAnalysis {
        rates: for_chunks(&r.copies, headline_streams).map_or(CopyRates::UNMEASURED, best_rates),
        rows_beyond_bound: rows.iter().filter(|r| r.beyond_bound).count(),
        stream_counts,
        rows,
        breakeven_cycles,
        headline_streams,
        at_breakeven,
        best,
    }
}

fn analyze_row(
    row: &MemcpyKernelRow,
    copies: &[StageTimes],
    copy_engines: i32,
    link: Option<&LinkRates>,
) -> MemcpyRow {
    let kernel = row.kernel.min().min(row.kernels.min());
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
    let bound = pipeline::bound(parts, row.streams, 1, copy_engines).held(concurrent_ms);
    MemcpyRow {
        cycles: row.cycles,
        streams: row.streams,
        htod_ms: row.htod.median(),
        kernel_ms: row.kernel.median(),
        dtoh_ms: row.dtoh.median(),
        total_ms,
        concurrent_ms,
        speedup: total_ms / concurrent_ms,
        bound,
        bound_speedup: total_ms / bound.ms,
        efficiency: bound.ms / concurrent_ms,
        beyond_bound: bound.lowered(),
        noise: row.concurrent.noise(),
    }
}
