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
mod analysis;
mod present;

use analysis::analyze;
pub use analysis::{PairRow, PeerCopyAnalysis, PeerCopySummary, PeerRow};
use present::{figures, matrix_columns, pair_label, size, sweep_columns};

use serde::{Deserialize, Serialize};

use crate::derived::trace::TraceChecks;
use crate::experiment::{
    self, Analyzed, Csv, Experiment, MS, MeasuredRow, Overview, Saved, Summary, With, verdict,
};
use crate::report::ReportError;
use crate::report::section::{Section, draw};
use crate::report::table::Table;
use crate::saved::{DeviceInfo, RunRecord, UsageError};
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
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<5>,
    /// 4 KiB copies timed one by one for the latency, per pair and peer access state.
    #[arg(long, default_value_t = 200, value_parser = crate::saved::count(1_000_000))]
    pub latency_copies: usize,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    fn quick() -> Params {
        Params {
            max_exponent: 22,
            exponent_step: 5,
            sampling: crate::saved::Repeats::new(3),
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
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// The GPUs copied between.
    pub devices: Vec<DeviceInfo>,
    pub pairs: Vec<PairResult>,
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
        let a = &rust.derived;
        let mut sec = rust.section("peer-copy: copies between GPUs", "For every ordered pair of GPUs: cuMemcpyPeerAsync with peer access off (the driver stages the copy through host memory) and on (straight over the link between the GPUs), one way and both ways at once on two streams, and a copy kernel's loads and stores across the link (launched on the destination reading the source, and on the source writing the destination) where peer access is on; GB/s from the median of event-timed samples over a size sweep, and the latency of one small copy. Every copied element is checked against its source's pattern.");
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
            verified: r.run.verification.passed,
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
        Summary::headline(&x, line).with(Overview {
            finding: format!(
                "Between {} pair(s) of GPUs, copies with peer access move {} GB/s, copies staged through the host {} GB/s.",
                x.pairs,
                span(x.peer_gbps),
                span(x.staged_gbps)
            ),
            result: format!("peer {} GB/s", span(x.peer_gbps)),
            over_bound: None,
            rust_over_cpp: None,
        })
    }
}

#[cfg(test)]
mod tests;
