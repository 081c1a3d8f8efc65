//! What peer-copy derives: each ordered pair's rates by method and size, the matrix of
//! the largest copies, and the headline.
use super::{Method, PeerCopyResult};
use crate::derived::rates::gbps;
use crate::stats::Series;
use serde::{Deserialize, Serialize};

/// One pair at one size: GB/s per method (both directions together for both ways).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerRow {
    pub src: usize,
    pub dst: usize,
    pub bytes: u64,
    /// In [`Method::ALL`]'s order; NaN where the method did not run.
    pub gbps: Vec<f64>,
    /// Relative noise of each method's samples, in the same order.
    pub noise: Vec<f64>,
}

impl PeerRow {
    pub fn rate(&self, method: Method) -> f64 {
        self.gbps[method_index(method)]
    }
}

pub(super) fn method_index(method: Method) -> usize {
    Method::ALL
        .iter()
        .position(|&m| m == method)
        .expect("every method is listed")
}

/// One pair: its rates at the largest size and its latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRow {
    pub src: usize,
    pub dst: usize,
    pub peer_access: bool,
    /// The largest size measured: where the rates below come from.
    pub bytes: u64,
    /// In [`Method::ALL`]'s order; NaN where the method did not run.
    pub gbps: Vec<f64>,
    /// Median microseconds per `LATENCY_BYTES` copy, peer access off and on.
    pub latency_staged_us: f64,
    pub latency_peer_us: f64,
}

impl PairRow {
    pub fn rate(&self, method: Method) -> f64 {
        self.gbps[method_index(method)]
    }
}

/// Everything derived from a peer-copy result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerCopyAnalysis {
    /// The ordinals copied between, in the run's order.
    pub devices: Vec<usize>,
    /// A row per pair and size.
    pub rows: Vec<PeerRow>,
    /// A row per pair: the matrix.
    pub matrix: Vec<PairRow>,
}

impl PeerCopyAnalysis {
    /// The matrix's row for `src` → `dst`.
    pub fn pair(&self, src: usize, dst: usize) -> Option<&PairRow> {
        self.matrix.iter().find(|p| p.src == src && p.dst == dst)
    }

    /// The slowest and fastest rate of `method` over the pairs where it ran.
    pub fn range(&self, method: Method) -> Option<(f64, f64)> {
        let rates: Vec<f64> = (self.matrix.iter())
            .map(|p| p.rate(method))
            .filter(|r| r.is_finite())
            .collect();
        let min = rates.iter().copied().reduce(f64::min)?;
        Some((min, rates.iter().copied().fold(min, f64::max)))
    }
}

/// GB/s of `method` from `samples` of `bytes` per copy.
fn rate(method: Method, bytes: u64, samples: Option<&Series>) -> f64 {
    samples.map_or(f64::NAN, |s| gbps(method.directions() * bytes, s.median()))
}

/// Derive everything from `r`.
pub(super) fn analyze(r: &PeerCopyResult) -> PeerCopyAnalysis {
    let rows = (r.pairs.iter())
        .flat_map(|pair| {
            pair.points.iter().map(|p| PeerRow {
                src: pair.src,
                dst: pair.dst,
                bytes: p.bytes,
                gbps: (Method::ALL.iter())
                    .map(|&m| rate(m, p.bytes, p.samples(m)))
                    .collect(),
                noise: (Method::ALL.iter())
                    .map(|&m| p.samples(m).map_or(f64::NAN, Series::noise))
                    .collect(),
            })
        })
        .collect();
    let us = |s: &Series| s.median() * 1e3;
    let matrix = (r.pairs.iter())
        .map(|pair| {
            let largest = pair.points.iter().max_by_key(|p| p.bytes);
            PairRow {
                src: pair.src,
                dst: pair.dst,
                peer_access: pair.peer_access,
                bytes: largest.map_or(0, |p| p.bytes),
                gbps: (Method::ALL.iter())
                    .map(|&m| largest.map_or(f64::NAN, |p| rate(m, p.bytes, p.samples(m))))
                    .collect(),
                latency_staged_us: us(&pair.latency_staged),
                latency_peer_us: pair.latency_peer.as_ref().map_or(f64::NAN, us),
            }
        })
        .collect();
    PeerCopyAnalysis {
        devices: r.devices.iter().map(|d| d.ordinal).collect(),
        rows,
        matrix,
    }
}

/// peer-copy's headline in `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerCopySummary {
    pub verified: bool,
    pub pairs: usize,
    /// Slowest and fastest pair at the largest size, GB/s, peer access on and off.
    pub peer_gbps: Option<(f64, f64)>,
    pub staged_gbps: Option<(f64, f64)>,
}
