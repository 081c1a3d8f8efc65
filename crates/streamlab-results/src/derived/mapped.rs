//! mapped's derived numbers: per size the zero-copy kernel against the streamed version,
//! each beside its bound.
//!
//! Mapped memory moves the same bytes over PCIe as the copies, while the kernel runs, but
//! as the kernel's own loads and stores, with no copy to set up: its bound is the bytes
//! in and out at the fastest rates the link showed in the run (one way alone, and both
//! ways at once), at any size. Small sizes stay far from it: there a launch and PCIe's
//! latency, not bandwidth, set the time. The streamed version's bound is the pipeline
//! bound of its chunks' stages ([`super::pipeline`]), with the same link capacity both
//! ways.
use serde::{Deserialize, Serialize};

use super::pipeline::{self, Stages};
use super::rates::{best_rates, ms_at, pipeline_stages};
use crate::saved::LinkRates;
use crate::saved::mapped::MappedResult;
use crate::saved::timeline::CopyRates;

/// One size (medians, milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedRow {
    pub elements: usize,
    pub mapped_ms: f64,
    /// The better of the two asynchronous orders.
    pub streamed_ms: f64,
    pub mapped_bound_ms: f64,
    pub streamed_bound_ms: f64,
    /// mapped bound / mapped: 1 is the link's limit.
    pub mapped_efficiency: f64,
    /// streamed / mapped: above 1 mapped memory wins.
    pub mapped_speedup: f64,
    /// Either version beat the bound built from the measured rates: that bound was
    /// lowered to the row.
    pub beyond_bound: bool,
    /// Relative noise of the mapped kernel's and the streamed version's samples.
    pub mapped_noise: f64,
    pub streamed_noise: f64,
}

/// Everything derived from a mapped result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedAnalysis {
    /// The fastest rates of whole-array copies over every size: the link's bandwidth.
    pub link: CopyRates,
    pub rows: Vec<MappedRow>,
    /// The sizes at which mapped memory was faster.
    pub mapped_wins: Vec<usize>,
}

/// The fastest rate of each path over every size's whole-array copies and the run's
/// fastest large copies.
fn link_rates(r: &MappedResult) -> CopyRates {
    let all: Vec<CopyRates> = r.points.iter().map(|p| best_rates(&p.whole)).collect();
    let best = |rate: fn(&CopyRates) -> f64| all.iter().map(rate).fold(f64::NAN, f64::max);
    let run = r.provenance.fastest_link;
    let with_run =
        |own: f64, rate: fn(&LinkRates) -> f64| run.as_ref().map_or(own, |l| own.max(rate(l)));
    CopyRates {
        htod_gbps: with_run(best(|c| c.htod_gbps), |l| l.htod_gbps),
        dtoh_gbps: with_run(best(|c| c.dtoh_gbps), |l| l.dtoh_gbps),
        both_gbps: with_run(best(|c| c.both_gbps), |l| l.both_gbps),
        htod_shared_gbps: best(|c| c.htod_shared_gbps),
        dtoh_shared_gbps: best(|c| c.dtoh_shared_gbps),
    }
}

/// Derive everything from `r`.
pub fn analyze(r: &MappedResult) -> MappedAnalysis {
    let link = link_rates(r);
    let rows: Vec<MappedRow> = (r.points.iter())
        .map(|p| {
            let bytes = p.whole.bytes;
            let mapped_bound_ms = (ms_at(bytes, link.htod_gbps))
                .max(ms_at(bytes, link.dtoh_gbps))
                .max(ms_at(2 * bytes, link.both_gbps));
            // The link's capacity both ways is the run's best, as for the mapped bound.
            let streamed_bound_ms = pipeline_stages(
                [&p.whole, &p.chunked],
                r.params.streams,
                None,
                r.provenance.fastest_link.as_ref(),
            )
            .map_or(f64::NAN, |parts| {
                let parts = Stages {
                    both_ms: parts.both_ms.min(ms_at(2 * bytes, link.both_gbps)),
                    ..parts
                };
                pipeline::bound(parts, r.params.streams, p.iterations, r.device.copy_engines).ms
            });
            let mapped_ms = p.mapped.median();
            let (streamed, streamed_ms) = [&p.async1, &p.async2]
                .map(|s| (s, s.median()))
                .into_iter()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("two orders");
            // A row that beat a bound lowers it to the row (as `pipeline::Bound::held`).
            let held = |bound: f64, row: f64| {
                if pipeline::beyond(row, bound) {
                    (row, true)
                } else {
                    (bound, false)
                }
            };
            let (mapped_bound_ms, mapped_lowered) = held(mapped_bound_ms, mapped_ms);
            let (streamed_bound_ms, streamed_lowered) = held(streamed_bound_ms, streamed_ms);
            let beyond_bound = mapped_lowered || streamed_lowered;
            MappedRow {
                elements: p.elements,
                mapped_ms,
                streamed_ms,
                mapped_bound_ms,
                streamed_bound_ms,
                mapped_efficiency: mapped_bound_ms / mapped_ms,
                mapped_speedup: streamed_ms / mapped_ms,
                beyond_bound,
                mapped_noise: p.mapped.noise(),
                streamed_noise: streamed.noise(),
            }
        })
        .collect();
    MappedAnalysis {
        link,
        mapped_wins: (rows.iter())
            .filter(|r| r.mapped_speedup > 1.0)
            .map(|r| r.elements)
            .collect(),
        rows,
    }
}
