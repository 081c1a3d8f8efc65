//! What peer-copy derives: each ordered pair's rates by method and size, each beside the
//! link's rate in its directions (its efficiency, and whether it is above the link
//! beyond its noise: flagged, never a headline), the matrix of the largest copies, each
//! pair's link with its fastest copy, each GPU's copies to itself, and the headline.
use super::{Method, PairResult, PeerCopyResult, PeerPoint};
use crate::experiments::prelude::*;
use crate::saved::links::PairLink;
use crate::stats::beyond_noise;

/// One method's numbers at one size of one pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    /// GB/s (both directions together for both ways); NaN where the method did not run.
    pub gbps: f64,
    /// Relative noise of its samples.
    pub noise: f64,
    /// Each direction's own GB/s in a both-ways copy (source to destination, destination
    /// to source); NaN where not both ways or not timed apart.
    pub each_way: [f64; 2],
    /// GB/s over the NVLinks' rate in the method's directions; NaN where its bytes do not
    /// cross NVLink or NVML gave no rate.
    pub efficiency: f64,
    /// Whether it (or a direction of it) is above the NVLinks' rate beyond its noise: a
    /// timing the link cannot allow, flagged.
    pub above_link: bool,
}

/// One pair at one size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeerRow {
    pub src: usize,
    pub dst: usize,
    pub bytes: u64,
    /// Every method's [`Rate`], in [`Method::ALL`]'s order.
    pub rates: Vec<Rate>,
}

impl std::ops::Index<Method> for PeerRow {
    type Output = Rate;

    fn index(&self, method: Method) -> &Rate {
        &self.rates[method as usize]
    }
}

impl PeerRow {
    /// The methods above the link.
    pub fn flagged(&self) -> Vec<Method> {
        (Method::ALL.into_iter())
            .filter(|&m| self[m].above_link)
            .collect()
    }
}

/// One pair: its rates at the largest size measured and its latency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairRow {
    #[serde(flatten)]
    pub largest: PeerRow,
    pub peer_access: bool,
    /// Median microseconds per `LATENCY_BYTES` copy, peer access off and on.
    pub latency_staged_us: f64,
    pub latency_peer_us: f64,
}

/// A pair's fastest copy over its link (at any size), beside the link's rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Best {
    pub method: Method,
    pub bytes: u64,
    pub gbps: f64,
    /// Over the link's rate in the method's directions; NaN where unknown.
    pub efficiency: f64,
}

/// How one pair is joined, what the link allows, and the fastest copies over it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkRow {
    pub link: PairLink,
    /// The NVLinks' rate one way and both ways at once, GB/s; NaN over PCIe or unread.
    pub one_way_gbps: f64,
    pub both_ways_gbps: f64,
    /// The fastest copy one way and both ways over the link, of the rows not above it.
    pub fastest: [Option<Best>; 2],
    /// How many of the pair's rows are above the link's rate beyond noise.
    pub above_link: usize,
}

/// One GPU's copy to itself at one size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalRow {
    pub gpu: usize,
    pub bytes: u64,
    pub gbps: f64,
    pub noise: f64,
}

/// Everything derived from a peer-copy result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeerCopyAnalysis {
    /// A row per pair and size.
    pub rows: Vec<PeerRow>,
    /// A row per pair: the matrix.
    pub matrix: Vec<PairRow>,
    /// A row per pair where the run read the links (none in runs from before).
    pub links: Vec<LinkRow>,
    /// A row per GPU and size of its copies to itself.
    pub local: Vec<LocalRow>,
}

impl PeerCopyAnalysis {
    /// The matrix's row for `src` → `dst`.
    pub fn pair(&self, src: usize, dst: usize) -> Option<&PairRow> {
        (self.matrix.iter()).find(|p| p.largest.src == src && p.largest.dst == dst)
    }

    /// The slowest and fastest `value` (GB/s, efficiency) of `method`'s rates over the
    /// pairs where it ran at the largest size, leaving out those above their link.
    pub fn range(&self, method: Method, value: fn(&Rate) -> f64) -> Option<(f64, f64)> {
        let rates = (self.matrix.iter()).map(|p| &p.largest[method]);
        span(rates.filter(|rate| !rate.above_link).map(value))
    }

    /// The slowest and fastest pair's NVLink rate one way.
    pub fn link_range(&self) -> Option<(f64, f64)> {
        span(self.links.iter().map(|l| l.one_way_gbps))
    }

    /// How many rows (a method at a size of a pair) are above their link beyond noise.
    pub fn rows_above_link(&self) -> usize {
        self.links.iter().map(|l| l.above_link).sum()
    }
}

/// The smallest and largest of the finite `values`.
fn span(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    (values.filter(|v| v.is_finite())).fold(None, |span, v| {
        Some(span.map_or((v, v), |(lo, hi): (f64, f64)| (lo.min(v), hi.max(v))))
    })
}

/// Whether `gbps` (of relative noise `noise`) is above `link` beyond the noise.
pub(super) fn above(gbps: f64, noise: f64, link: f64) -> bool {
    gbps > link && beyond_noise(gbps, noise, link, 0.0)
}

/// `pair`'s row at its point `p`: every method's numbers, NaN throughout where there is
/// none (a pair stopped before its first size).
fn row(r: &PeerCopyResult, pair: &PairResult, p: Option<&PeerPoint>) -> PeerRow {
    let ((s, d), bytes) = ((pair.src, pair.dst), p.map_or(0, |p| p.bytes));
    let rate = |m: Method| {
        let figures = |x: &Series, bytes| (gbps(bytes, x.median()), x.noise());
        let nan = (f64::NAN, f64::NAN);
        let samples = p.and_then(|p| p.samples(m));
        let (rate, noise) = samples.map_or(nan, |x| figures(x, m.directions() * bytes));
        let ways = (p.and_then(|p| p.each_way(m)))
            .map_or([nan; 2], |ways| ways.each_ref().map(|x| figures(x, bytes)));
        // The NVLinks' rate from `src` to `dst` in `directions` directions, NaN where
        // unknown or not crossed: only the copies with peer access on cross the link.
        let link = |(src, dst): (usize, usize), directions| {
            (r.links.iter())
                .find(|l| l.src == src && l.dst == dst && m.needs_peer_access())
                .and_then(|l| l.rate_gbps(directions))
                .unwrap_or(f64::NAN)
        };
        let (own_link, way_links) = (link((s, d), m.directions()), [(s, d), (d, s)]);
        Rate {
            gbps: rate,
            noise,
            each_way: ways.map(|w| w.0),
            efficiency: rate / own_link,
            above_link: above(rate, noise, own_link)
                || (ways.iter().zip(way_links)).any(|(&(g, n), way)| above(g, n, link(way, 1))),
        }
    };
    let rates = Method::ALL.map(rate).to_vec();
    PeerRow {
        src: s,
        dst: d,
        bytes,
        rates,
    }
}

/// Each pair's link beside its fastest copies over it one way and both ways, of those not
/// above it.
fn links(r: &PeerCopyResult, rows: &[PeerRow]) -> Vec<LinkRow> {
    (r.links.iter())
        .map(|link| {
            let own = (rows.iter()).filter(|row| row.src == link.src && row.dst == link.dst);
            let best = |directions| {
                let over_link = (Method::ALL.into_iter())
                    .filter(|m| m.needs_peer_access() && m.directions() == directions);
                (over_link.flat_map(|m| own.clone().map(move |row| (m, row.bytes, row[m]))))
                    .filter(|(_, _, rate)| rate.gbps.is_finite() && !rate.above_link)
                    .max_by(|a, b| a.2.gbps.total_cmp(&b.2.gbps))
                    .map(|(method, bytes, rate)| Best {
                        method,
                        bytes,
                        gbps: rate.gbps,
                        efficiency: rate.efficiency,
                    })
            };
            LinkRow {
                link: link.clone(),
                one_way_gbps: link.rate_gbps(1).unwrap_or(f64::NAN),
                both_ways_gbps: link.rate_gbps(2).unwrap_or(f64::NAN),
                fastest: [1, 2].map(best),
                above_link: own.map(|row| row.flagged().len()).sum(),
            }
        })
        .collect()
}

/// Derive everything from `r`.
pub(super) fn analyze(r: &PeerCopyResult) -> PeerCopyAnalysis {
    let rows: Vec<PeerRow> = (r.pairs.iter())
        .flat_map(|pair| pair.points.iter().map(move |p| row(r, pair, Some(p))))
        .collect();
    let us = |s: &Series| s.median() * 1e3;
    let matrix = (r.pairs.iter())
        .map(|pair| PairRow {
            largest: row(r, pair, pair.points.iter().max_by_key(|p| p.bytes)),
            peer_access: pair.peer_access,
            latency_staged_us: us(&pair.latency_staged),
            latency_peer_us: pair.latency_peer.as_ref().map_or(f64::NAN, us),
        })
        .collect();
    let local = (r.local.iter())
        .flat_map(|g| {
            g.points.iter().map(|p| LocalRow {
                gpu: g.gpu,
                bytes: p.bytes,
                gbps: gbps(p.bytes, p.time.median()),
                noise: p.time.noise(),
            })
        })
        .collect();
    PeerCopyAnalysis {
        links: links(r, &rows),
        rows,
        matrix,
        local,
    }
}
