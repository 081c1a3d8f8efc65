//! peer-copy: copies between GPUs of one machine, for every ordered pair of the GPUs
//! chosen, over a size sweep.
//!
//! Per pair and size: `cuMemcpyPeerAsync` with peer access off (the driver stages the
//! copy through host memory) and on (straight over the link between the GPUs), one way
//! and both ways at once; and, where peer access is on, the `copy_u32` kernel's loads
//! and stores, launched on the destination reading the source's memory (pull) and on the
//! source writing the destination's (push). Each as GB/s from the median of event-timed
//! samples, with a small copy's latency beside them; every copied element is checked.
//! A machine with fewer than two GPUs cannot run it.

use serde::{Deserialize, Serialize};

use crate::derived::rates::gbps;
use crate::derived::trace::TraceChecks;
use crate::experiment::{
    self, Analyzed, Csv, Experiment, MS, MeasuredRow, Saved, Summary, With, verdict,
};
use crate::report::ReportError;
use crate::report::chart::HeatMap;
use crate::report::figures::{Drawing, FigureModel};
use crate::report::section::{Section, draw};
use crate::report::table::{Columns, Table, num};
use crate::saved::{DeviceInfo, Provenance, UsageError, Verification};
use crate::stats::Series;

/// The peer-copy experiment.
pub struct PeerCopy;

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// The GPUs to copy between, as ordinals, e.g. `0,1` (default: every GPU).
    #[arg(long, value_delimiter = ',')]
    pub devices: Vec<usize>,
    /// Smallest copy, as a power of two (bytes).
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(2..=34))]
    pub min_exponent: u32,
    /// Largest copy, as a power of two (bytes).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(2..=34))]
    pub max_exponent: u32,
    /// Exponent step (2: a factor of 4 per size).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub exponent_step: u32,
    /// Timed samples per pair, size and method (more, up to 3×, where they are noisy).
    #[arg(long, default_value_t = 5,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    pub repeats: usize,
    /// 4 KiB copies timed one by one for the latency, per pair and peer access state.
    #[arg(long, default_value_t = 200,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub latency_copies: usize,
}

impl Default for Params {
    /// The command line's defaults: the `#[arg]` attributes above are their one source.
    fn default() -> Params {
        crate::saved::clap_defaults()
    }
}

impl crate::saved::Params for Params {
    fn quick() -> Params {
        Params {
            max_exponent: 22,
            exponent_step: 5,
            repeats: 3,
            latency_copies: 50,
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        if self.min_exponent > self.max_exponent {
            return Err(UsageError::new(format!(
                "--min-exponent {} exceeds --max-exponent {}",
                self.min_exponent, self.max_exponent
            )));
        }
        crate::spread::check_devices(PeerCopy::NAME, &self.devices)
    }
}

/// The size of the copies whose latency is measured.
pub const LATENCY_BYTES: u64 = 4096;
/// About how many bytes one timed sample moves each way: small copies are repeated
/// back to back up to this, at most [`MAX_PASSES`] times.
const SAMPLE_BYTES: u64 = 64 << 20;
/// The most copies in one timed sample.
const MAX_PASSES: u64 = 256;

impl Params {
    /// The copy sizes, in bytes, ascending.
    pub fn sizes(&self) -> Vec<u64> {
        (self.min_exponent..=self.max_exponent)
            .step_by(self.exponent_step as usize)
            .map(|e| 1u64 << e)
            .collect()
    }

    /// Copies of `bytes` timed back to back as one sample.
    pub fn passes(bytes: u64) -> usize {
        (SAMPLE_BYTES / bytes.max(1)).clamp(1, MAX_PASSES) as usize
    }
}

/// How bytes get from one GPU to the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `cuMemcpyPeerAsync` with peer access off: staged by the driver through host
    /// memory.
    Staged,
    /// The same, source to destination and back at once on two streams.
    StagedBoth,
    /// `cuMemcpyPeerAsync` with peer access on: over the link.
    Peer,
    PeerBoth,
    /// The copy kernel on the destination GPU, loading the source's memory.
    KernelPull,
    /// The copy kernel on the source GPU, storing to the destination's memory.
    KernelPush,
}

impl Method {
    pub const ALL: [Method; 6] = [
        Method::Staged,
        Method::StagedBoth,
        Method::Peer,
        Method::PeerBoth,
        Method::KernelPull,
        Method::KernelPush,
    ];

    /// Names the method in keys and the CSV.
    pub fn key(self) -> &'static str {
        match self {
            Method::Staged => "staged",
            Method::StagedBoth => "staged_both",
            Method::Peer => "peer",
            Method::PeerBoth => "peer_both",
            Method::KernelPull => "kernel_pull",
            Method::KernelPush => "kernel_push",
        }
    }

    /// The method in words.
    pub fn label(self) -> &'static str {
        match self {
            Method::Staged => "copy, peer access off",
            Method::StagedBoth => "copy both ways, peer access off",
            Method::Peer => "copy, peer access on",
            Method::PeerBoth => "copy both ways, peer access on",
            Method::KernelPull => "kernel on destination (pull)",
            Method::KernelPush => "kernel on source (push)",
        }
    }

    /// Copies of the size per pass: two where both directions run at once.
    pub fn directions(self) -> u64 {
        match self {
            Method::StagedBoth | Method::PeerBoth => 2,
            _ => 1,
        }
    }

    /// Whether it needs peer access on.
    pub fn needs_peer_access(self) -> bool {
        !matches!(self, Method::Staged | Method::StagedBoth)
    }
}

/// One copy size of one pair (milliseconds per pass).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerPoint {
    pub bytes: u64,
    /// Passes per sample.
    pub passes: usize,
    pub staged: Series,
    pub staged_both: Series,
    /// `None` where the pair has no peer access.
    pub peer: Option<Series>,
    pub peer_both: Option<Series>,
    pub kernel_pull: Option<Series>,
    pub kernel_push: Option<Series>,
}

impl PeerPoint {
    /// The samples of `method`, where it ran.
    pub fn samples(&self, method: Method) -> Option<&Series> {
        match method {
            Method::Staged => Some(&self.staged),
            Method::StagedBoth => Some(&self.staged_both),
            Method::Peer => self.peer.as_ref(),
            Method::PeerBoth => self.peer_both.as_ref(),
            Method::KernelPull => self.kernel_pull.as_ref(),
            Method::KernelPush => self.kernel_push.as_ref(),
        }
    }
}

/// One ordered pair of GPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    /// Ordinals of the source and destination GPUs.
    pub src: usize,
    pub dst: usize,
    /// Whether each GPU can reach the other's memory directly (both ways).
    pub peer_access: bool,
    pub points: Vec<PeerPoint>,
    /// Milliseconds per [`LATENCY_BYTES`] copy, each copy timed alone, peer access off
    /// and on.
    pub latency_staged: Series,
    pub latency_peer: Option<Series>,
}

/// Result of peer-copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerCopyResult {
    pub params: Params,
    /// The GPU the session opened (the link probes ran on it).
    pub device: DeviceInfo,
    /// The GPUs copied between.
    pub devices: Vec<DeviceInfo>,
    pub provenance: Provenance,
    pub pairs: Vec<PairResult>,
    pub verification: Verification,
}

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

fn method_index(method: Method) -> usize {
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
    /// Median microseconds per [`LATENCY_BYTES`] copy, peer access off and on.
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
fn analyze(r: &PeerCopyResult) -> PeerCopyAnalysis {
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

/// A size in bytes, e.g. "4 KiB", "1 GiB".
fn size(bytes: u64) -> String {
    match bytes.ilog2() {
        e @ 30.. => format!("{} GiB", 1u64 << (e - 30)),
        e @ 20.. => format!("{} MiB", 1u64 << (e - 20)),
        e @ 10.. => format!("{} KiB", 1u64 << (e - 10)),
        _ => format!("{bytes} B"),
    }
}

/// "0 → 1".
fn pair_label(src: usize, dst: usize) -> String {
    format!("{src} → {dst}")
}

/// The one declaration of the matrix table: a row per pair.
fn matrix_columns<'a>() -> Columns<'a, PairRow> {
    let mut columns = Columns::new()
        .show("pair", |x: &PairRow| pair_label(x.src, x.dst))
        .show("peer access", |x| {
            if x.peer_access { "yes" } else { "no" }.to_owned()
        });
    for method in Method::ALL {
        columns = columns.show(method.label(), move |x| num(x.rate(method), 1));
    }
    columns
        .show("latency off (µs)", |x| num(x.latency_staged_us, 1))
        .show("latency on (µs)", |x| num(x.latency_peer_us, 1))
}

/// The one declaration of the sweep table and the CSV: a row per pair and size.
fn sweep_columns<'a>() -> Columns<'a, PeerRow> {
    let mut columns = Columns::new()
        .both(
            "pair",
            |x: &PeerRow| pair_label(x.src, x.dst),
            "src",
            |x| x.src.to_string(),
        )
        .raw("dst", |x| x.dst.to_string())
        .both("size", |x| size(x.bytes), "bytes", |x| x.bytes.to_string());
    for method in Method::ALL {
        columns = columns
            .both(
                method.label(),
                move |x| num(x.rate(method), 1),
                method.key(),
                move |x| format!("{:.3}", x.rate(method)),
            )
            .raw(noise_key(method), move |x| {
                format!("{:.4}", x.noise[method_index(method)])
            });
    }
    columns
}

/// The CSV column of `method`'s noise.
fn noise_key(method: Method) -> &'static str {
    match method {
        Method::Staged => "staged_noise",
        Method::StagedBoth => "staged_both_noise",
        Method::Peer => "peer_noise",
        Method::PeerBoth => "peer_both_noise",
        Method::KernelPull => "kernel_pull_noise",
        Method::KernelPush => "kernel_push_noise",
    }
}

/// The heat map of `method`'s GB/s at the largest size, source GPU by row, destination
/// by column; cells at or above `threshold` in the "pays off" colours.
fn heat_map(a: &PeerCopyAnalysis, method: Method, threshold: f64) -> HeatMap {
    HeatMap {
        title: format!(
            "peer-copy: GB/s, {} (largest size; ≥ {threshold:.1} GB/s: the fastest copy with peer access off)",
            method.label()
        ),
        x_label: "destination GPU".into(),
        y_label: "source GPU".into(),
        columns: a.devices.iter().map(|d| d.to_string()).collect(),
        rows: a.devices.iter().map(|d| d.to_string()).collect(),
        values: (a.devices.iter())
            .map(|&src| {
                (a.devices.iter())
                    .map(|&dst| {
                        a.pair(src, dst)
                            .map(|p| p.rate(method))
                            .filter(|r| r.is_finite())
                    })
                    .collect()
            })
            .collect(),
        threshold,
        unit: "{:.1}",
        marked: Vec::new(),
    }
}

/// The matrix as heat maps: peer access on and off, one way.
fn figures(a: &PeerCopyAnalysis) -> Vec<FigureModel> {
    let threshold = a.range(Method::Staged).map_or(0.0, |(_, fastest)| fastest);
    [
        (Method::Peer, "peer-copy-peer.svg"),
        (Method::Staged, "peer-copy-staged.svg"),
    ]
    .into_iter()
    .map(|(method, file)| FigureModel {
        file: file.into(),
        drawing: Drawing::HeatMap(heat_map(a, method, threshold)),
    })
    .collect()
}

impl Saved for PeerCopyResult {
    experiment::saved_fields!(Params);
}

impl Experiment for PeerCopy {
    const NAME: &'static str = "peer-copy";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = PeerCopyResult;
    type Derived = PeerCopyAnalysis;

    fn rows(r: &PeerCopyResult, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        let mut rows = Vec::new();
        for pair in &r.pairs {
            let (s, d) = (pair.src, pair.dst);
            for p in &pair.points {
                for method in Method::ALL {
                    if let Some(samples) = p.samples(method) {
                        rows.push(MeasuredRow::median(
                            format!("{s}-{d}/{}/{}", p.bytes, method.key()),
                            format!("GPU {s} to {d}, {}, {}", size(p.bytes), method.label()),
                            samples,
                            MS,
                        ));
                    }
                }
            }
            let latencies = [("staged", &pair.latency_staged)]
                .into_iter()
                .chain(pair.latency_peer.as_ref().map(|l| ("peer", l)));
            for (key, samples) in latencies {
                rows.push(MeasuredRow::median(
                    format!("{s}-{d}/latency/{key}"),
                    format!("GPU {s} to {d}, one {} copy, {key}", size(LATENCY_BYTES)),
                    samples,
                    MS,
                ));
            }
        }
        rows
    }

    fn derive(r: &PeerCopyResult, _checks: &[TraceChecks]) -> PeerCopyAnalysis {
        analyze(r)
    }

    fn tables(
        _r: &PeerCopyResult,
        derived: &Self::Derived,
        _cuda: Option<With<'_, Self>>,
    ) -> Vec<Table> {
        let a = derived;
        vec![
            matrix_columns().table(
                Some(format!(
                    "GB/s per pair at the largest size (both ways: both directions together); latency: median µs of one {} copy",
                    size(LATENCY_BYTES)
                )),
                &a.matrix,
            ),
            sweep_columns().table(Some("GB/s per pair and size".into()), &a.rows),
        ]
    }

    fn csv(_r: &PeerCopyResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(sweep_columns().csv(&derived.rows))]
    }

    fn section(
        rust: &Analyzed<Self>,
        _twin: Option<&Analyzed<Self>>,
    ) -> Result<Section, ReportError> {
        let (r, derived) = rust.with();
        let a = derived;
        let mut sec = rust.section("peer-copy: copies between GPUs", "For every ordered pair of GPUs: cuMemcpyPeerAsync with peer access off (the driver stages the copy through host memory) and on (straight over the link between the GPUs), one way and both ways at once on two streams, and a copy kernel's loads and stores across the link (launched on the destination reading the source, and on the source writing the destination) where peer access is on; GB/s from the median of event-timed samples over a size sweep, and the latency of one small copy. Every copied element is checked against its source's pattern.");
        sec.tables = Self::tables(r, derived, None);
        let without: Vec<String> = (a.matrix.iter())
            .filter(|p| !p.peer_access)
            .map(|p| pair_label(p.src, p.dst))
            .collect();
        if !without.is_empty() {
            sec.notes.push((
                "Peer access".into(),
                format!(
                    "No peer access for {}: only the staged copies ran there.",
                    without.join(", ")
                ),
            ));
        }
        let span = |m: Method| {
            a.range(m)
                .map_or("–".into(), |(lo, hi)| format!("{lo:.1}–{hi:.1} GB/s"))
        };
        sec.notes.push((
            "Result".into(),
            format!(
                "At the largest size, copies with peer access on reached {}, staged through host memory {}; the pull kernel {}, the push kernel {}.",
                span(Method::Peer),
                span(Method::Staged),
                span(Method::KernelPull),
                span(Method::KernelPush)
            ),
        ));
        sec.figures = draw(figures(a));
        Ok(sec)
    }

    fn summary(r: &PeerCopyResult, derived: &Self::Derived) -> Summary {
        let a = derived;
        let x = PeerCopySummary {
            verified: r.verification.passed,
            pairs: a.matrix.len(),
            peer_gbps: a.range(Method::Peer),
            staged_gbps: a.range(Method::Staged),
        };
        let span =
            |r: Option<(f64, f64)>| r.map_or("–".into(), |(lo, hi)| format!("{lo:.1}–{hi:.1}"));
        let line = format!(
            "{} pair(s): peer access on {} GB/s, off {} GB/s; {}",
            x.pairs,
            span(x.peer_gbps),
            span(x.staged_gbps),
            verdict(x.verified)
        );
        Summary::headline(&x, line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::Params as _;

    fn series(ms: &[f64]) -> Series {
        Series::new(ms.to_vec()).unwrap()
    }

    /// Two GPUs: 0 → 1 with peer access (1 MiB in 0.01 ms one way), 1 → 0 without.
    fn result() -> PeerCopyResult {
        let mib = 1u64 << 20;
        let point = |peer: bool| PeerPoint {
            bytes: mib,
            passes: Params::passes(mib),
            staged: series(&[0.1, 0.1, 0.2]),
            staged_both: series(&[0.1]),
            peer: peer.then(|| series(&[0.01, 0.01])),
            peer_both: peer.then(|| series(&[0.01])),
            kernel_pull: peer.then(|| series(&[0.02])),
            kernel_push: peer.then(|| series(&[0.04])),
        };
        let pair = |src, dst, peer: bool| PairResult {
            src,
            dst,
            peer_access: peer,
            points: vec![point(peer)],
            latency_staged: series(&[0.02, 0.03, 0.02]),
            latency_peer: peer.then(|| series(&[0.005])),
        };
        PeerCopyResult {
            params: Params::quick(),
            device: DeviceInfo::made_up(0),
            devices: vec![DeviceInfo::made_up(0), DeviceInfo::made_up(1)],
            provenance: Provenance::made_up(),
            pairs: vec![pair(0, 1, true), pair(1, 0, false)],
            verification: Verification {
                passed: true,
                checked: 1,
                mismatches: 0,
                max_abs_error: 0.0,
                detail: "ok".into(),
            },
        }
    }

    #[test]
    fn rates_come_from_the_medians_and_count_both_directions() {
        let a = analyze(&result());
        let forward = a.pair(0, 1).unwrap();
        let mib = (1u64 << 20) as f64;
        assert!((forward.rate(Method::Peer) - mib / 0.01e6).abs() < 1e-9);
        assert!((forward.rate(Method::PeerBoth) - 2.0 * mib / 0.01e6).abs() < 1e-9);
        assert!((forward.rate(Method::Staged) - mib / 0.1e6).abs() < 1e-9);
        assert!((forward.rate(Method::KernelPush) - mib / 0.04e6).abs() < 1e-9);
        assert!((forward.latency_staged_us - 20.0).abs() < 1e-9);
        assert!((forward.latency_peer_us - 5.0).abs() < 1e-9);
        let back = a.pair(1, 0).unwrap();
        assert!(!back.peer_access && back.rate(Method::Peer).is_nan());
        assert!(back.latency_peer_us.is_nan());
        let (lo, hi) = a.range(Method::Peer).unwrap();
        assert_eq!(lo, hi);
        assert_eq!(a.rows.len(), 2);
        assert_eq!(a.rows[0].rate(Method::Peer), forward.rate(Method::Peer));
    }

    #[test]
    fn the_matrix_renders_as_tables_csv_and_heat_maps() {
        let r = result();
        let tables = PeerCopy::tables(&r, &analyze(&r), None);
        let matrix = &tables[0];
        assert_eq!(matrix.rows.len(), 2);
        assert_eq!(matrix.rows[0][0], "0 → 1");
        assert_eq!(matrix.rows[0][1], "yes");
        let peer = matrix.column("copy, peer access on").unwrap();
        assert_eq!(matrix.rows[0][peer], "104.9");
        assert_eq!(matrix.rows[1][peer], "–");
        let csv = PeerCopy::csv(&r, &analyze(&r))[0].contents.clone();
        let mut lines = csv.lines();
        let header = lines.next().unwrap();
        assert!(header.starts_with("src,dst,bytes,staged,staged_noise,staged_both"));
        assert!(lines.next().unwrap().starts_with("0,1,1048576,10.486,"));
        let a = analyze(&r);
        let figures = figures(&a);
        assert_eq!(figures.len(), 2);
        let Drawing::HeatMap(map) = &figures[0].drawing else {
            panic!("a heat map")
        };
        assert_eq!(map.rows, ["0", "1"]);
        assert_eq!(map.values[0][0], None);
        assert!(map.values[0][1].is_some_and(|v| (v - 104.8576).abs() < 1e-9));
        assert_eq!(map.values[1][0], None);
        let section = PeerCopy::section(
            &Analyzed::new(crate::saved::KernelSet::Rust, r.clone()),
            None,
        )
        .unwrap();
        assert_eq!(section.figures.len(), 2);
        assert!(section.notes.iter().any(|(_, n)| n.contains("1 → 0")));
        let headline = PeerCopy::summary(&r, &analyze(&r)).line.unwrap();
        assert!(headline.starts_with("2 pair(s)") && headline.ends_with("verified"));
        assert_eq!(PeerCopy::rows(&r, &analyze(&r)).len(), 6 + 2 + 2 + 1);
    }

    #[test]
    fn devices_are_checked_before_the_gpus_are_opened() {
        let given = |devices: &[usize]| Params {
            devices: devices.to_vec(),
            ..Params::default()
        };
        let err = given(&[1, 1]).validate().unwrap_err();
        assert!(err.to_string().contains("GPU 1 twice"), "{err}");
        let err = given(&[1]).validate().unwrap_err();
        assert!(err.to_string().contains("names one (1)"), "{err}");
        assert!(given(&[0, 1]).validate().is_ok());
    }

    #[test]
    fn sizes_and_passes_cover_the_sweep() {
        let sizes = Params::default().sizes();
        assert_eq!(sizes.first(), Some(&4096));
        assert_eq!(sizes.last(), Some(&(1 << 30)));
        assert_eq!(Params::passes(4096), 256);
        assert_eq!(Params::passes(1 << 30), 1);
        assert_eq!(Params::passes(1 << 20), 64);
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(1 << 30), "1 GiB");
    }
}
