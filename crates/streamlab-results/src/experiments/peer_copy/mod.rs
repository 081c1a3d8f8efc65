//! peer-copy: copies between GPUs of one machine, for every ordered pair of the GPUs
//! chosen, over a size sweep, beside the link that joins them.
//! How it measures, its bounds and its model are told in its words, `peer_copy.md`.
use crate::experiments::prelude::*;
mod analysis;
mod present;

use analysis::analyze;
pub use analysis::{Best, LinkRow, LocalRow, PairRow, PeerCopyAnalysis, PeerRow, Rate};
use present::{
    figures, link_columns, local_columns, matrix_columns, pair_label, size, span, sweep_columns,
};

use crate::saved::{DeviceInfo, links::PairLink};

pub struct PeerCopy;

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
    const QUICK: &'static str = "--max-exponent 22 --exponent-step 5 --repeats 3 --latency-copies \
        50";

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

/// How bytes get from one GPU to the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
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
    /// `cuMemcpyPeerAsync` with peer access on, issued on the destination's stream.
    PeerDst,
}

impl Method {
    pub const ALL: [Method; 7] = {
        use Method::*;
        [
            Staged, StagedBoth, Peer, PeerBoth, KernelPull, KernelPush, PeerDst,
        ]
    };

    /// Its key in keys and the CSV (whose columns of it are named after it), and its words.
    fn names(self) -> (&'static str, &'static str) {
        [
            ("staged", "copy, peer access off"),
            ("staged_both", "copy both ways, peer access off"),
            ("peer", "copy, peer access on"),
            ("peer_both", "copy both ways, peer access on"),
            ("kernel_pull", "kernel on destination (pull)"),
            ("kernel_push", "kernel on source (push)"),
            ("peer_dst", "copy on destination's stream, peer access on"),
        ][self as usize]
    }

    pub fn key(self) -> &'static str {
        self.names().0
    }

    pub fn label(self) -> &'static str {
        self.names().1
    }

    /// Copies of the size per pass: two where both directions run at once.
    pub fn directions(self) -> u64 {
        match self {
            Method::StagedBoth | Method::PeerBoth => 2,
            _ => 1,
        }
    }

    /// Whether it needs peer access on: whether its bytes go over the link between the
    /// GPUs rather than through host memory.
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
    /// `None` also in runs from before it was measured.
    pub peer_dst: Option<Series>,
    /// Each direction's own time in the both-ways copies, source to destination then
    /// destination to source (`None` in runs from before they were timed apart).
    pub staged_both_each: Option<[Series; 2]>,
    pub peer_both_each: Option<[Series; 2]>,
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
            Method::PeerDst => self.peer_dst.as_ref(),
        }
    }

    /// Each direction's own samples in a both-ways `method`, where they were timed.
    pub fn each_way(&self, method: Method) -> Option<&[Series; 2]> {
        match method {
            Method::StagedBoth => self.staged_both_each.as_ref(),
            Method::PeerBoth => self.peer_both_each.as_ref(),
            _ => None,
        }
    }
}

/// Peer access between a pair's GPUs as found when its copies began, and as checked
/// before its staged copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessCheck {
    /// Whether peer access was on from the source to the destination and from the
    /// destination to the source when the pair began: as it is again after its copies.
    pub found_on: [bool; 2],
    /// Whether the staged copies ran with peer access checked off both ways: turned off,
    /// then a second `cuCtxDisablePeerAccess` answered
    /// `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`.
    pub staged_checked_off: bool,
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
    /// `None` in runs from before peer access was checked.
    pub access: Option<AccessCheck>,
}

/// A copy within one GPU (device to device) of one size (milliseconds per pass).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalPoint {
    pub bytes: u64,
    pub passes: usize,
    pub time: Series,
}

/// A GPU's copies to itself: the reference for its copies to the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalCopy {
    /// Its ordinal.
    pub gpu: usize,
    pub points: Vec<LocalPoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerCopyResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// The GPUs copied between.
    pub devices: Vec<DeviceInfo>,
    pub pairs: Vec<PairResult>,
    /// How each ordered pair is joined, as NVML reports it (empty in runs from before it
    /// was read).
    #[serde(default)]
    pub links: Vec<PairLink>,
    /// Each GPU's copies to itself (empty in runs from before they were measured).
    #[serde(default)]
    pub local: Vec<LocalCopy>,
    /// Whether the copies with peer access on were issued behind a gate that every
    /// stream of a sample waits at, opened once the sample was queued (runs from before
    /// it: issued as the host went).
    #[serde(default)]
    pub gated: bool,
}

impl Saved for PeerCopyResult {
    experiment::saved_fields!(Params);
}

impl Experiment for PeerCopy {
    const NAME: &'static str = "peer-copy";
    const WORDS: &'static str = include_str!("../peer_copy.md");
    type Params = Params;
    type Result = PeerCopyResult;
    type Derived = PeerCopyAnalysis;

    fn rows(r: &PeerCopyResult, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        let local = (r.local.iter()).flat_map(|l| l.points.iter().map(move |p| (l.gpu, p)));
        let local = local.map(|(g, p)| {
            let key = format!("{g}-{g}/{}/local", p.bytes);
            let label = format!("GPU {g} to itself, {}", size(p.bytes));
            RowName::new(key, label).median(&p.time, MS)
        });
        r.pairs.iter().flat_map(pair_rows).chain(local).collect()
    }

    fn derive(r: &PeerCopyResult, _checks: &[TraceChecks]) -> PeerCopyAnalysis {
        analyze(r)
    }

    fn tables(_r: &Self::Result, a: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        let links = "How each pair is joined (NVML) and the fastest copy over it at any size: GB/s, and its share of the link's rate in its directions";
        let matrix = format!(
            "GB/s per pair at the largest size (both ways: both directions together; in brackets: share of the link's rate); latency: median µs of one {} copy",
            size(LATENCY_BYTES)
        );
        let local = "The reference: each GPU's copy to itself (device to device), GB/s per size";
        let tables = [
            (!a.links.is_empty()).then(|| link_columns().table(Some(links.into()), &a.links)),
            Some(matrix_columns().table(Some(matrix), &a.matrix)),
            Some(sweep_columns().table(Some("GB/s per pair and size".into()), &a.rows)),
            (!a.local.is_empty()).then(|| local_columns().table(Some(local.into()), &a.local)),
        ];
        tables.into_iter().flatten().collect()
    }

    fn csv(_r: &PeerCopyResult, derived: &Self::Derived) -> Vec<Csv> {
        let local = (!derived.local.is_empty())
            .then(|| Csv::extra("local", local_columns().csv(&derived.local)));
        let sweep = Csv::main(sweep_columns().csv(&derived.rows));
        std::iter::once(sweep).chain(local).collect()
    }

    fn words(r: &PeerCopyResult, a: &Self::Derived) -> Value {
        // Each method's GB/s at the largest size by key; none where every pair's is above its link.
        let gbps = |m: Method| {
            (a.range(m, |r| r.gbps)).map(|range| format!("{} GB/s", span(range, 1, 1.0)))
        };
        let gbps = Value::from_pairs(Method::ALL.map(|m| (m.key(), gbps(m))));
        let labels = |keep: fn(&PairResult) -> bool| -> Vec<String> {
            let kept = r.pairs.iter().filter(|p| keep(p));
            kept.map(|p| pair_label(p.src, p.dst)).collect()
        };
        // The peer copies' share of their link's rate, and that rate one way: said where
        // every pair in the peer copies' range has it.
        let mut peer = (a.matrix.iter()).map(|p| &p.largest[Method::Peer]);
        let known = peer.all(|r| !r.gbps.is_finite() || r.above_link || r.efficiency.is_finite());
        let share = (a.range(Method::Peer, |r| r.efficiency).zip(a.link_range()))
            .filter(|_| known)
            .map(|(share, link)| [span(share, 0, 100.0), span(link, 1, 1.0)]);
        context! {
            kinds => r.links.iter().map(|l| l.describe()).collect::<Vec<_>>(),
            without => labels(|p| !p.peer_access),
            checked => labels(|p| p.access.is_some_and(|c| c.staged_checked_off)).len(),
            found_on => labels(|p| p.access.is_some_and(|c| c.found_on.contains(&true))),
            gated => r.gated,
            gbps,
            share,
        }
    }

    fn figures(r: &PeerCopyResult, a: &Self::Derived) -> Vec<FigureModel> {
        figures(r, a)
    }

    fn summary(r: &PeerCopyResult, a: &Self::Derived) -> Summary {
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "pairs": a.matrix.len(),
            "peer_gbps": a.range(Method::Peer, |r| r.gbps),
            "staged_gbps": a.range(Method::Staged, |r| r.gbps),
            "link_gbps": a.link_range(),
            "peer_efficiency": a.range(Method::Peer, |r| r.efficiency),
            "rows_above_link": a.rows_above_link(),
        }))
    }
}

/// `pair`'s measured rows: each method's at each size, each direction's own in the
/// both-ways copies, and the latencies. The staged copies cross the host link, which
/// `compare` holds them against.
fn pair_rows(pair: &PairResult) -> Vec<MeasuredRow> {
    let (s, d) = (pair.src, pair.dst);
    let ways = [(s, d, "forward"), (d, s, "back")]
        .map(|(from, to, way)| (way, format!("its {from} → {to} direction")));
    let mut rows = Vec::new();
    for p in &pair.points {
        let at = RowName::new(
            format_args!("{s}-{d}/{}", p.bytes),
            format_args!("GPU {s} to {d}, {}", size(p.bytes)),
        );
        for method in Method::ALL {
            let this = at.then(method.key(), method.label());
            let own = p.samples(method).map(|x| this.clone().median(x, MS));
            let each_way = (ways.iter().zip(p.each_way(method).into_iter().flatten()))
                .map(|((way, words), x)| (*way, words.as_str(), x));
            for mut row in own.into_iter().chain(this.group(MS, each_way)) {
                row.over_link = !method.needs_peer_access();
                rows.push(row);
            }
        }
    }
    let at = RowName::new(
        format_args!("{s}-{d}/latency"),
        format_args!("GPU {s} to {d}, one {} copy", size(LATENCY_BYTES)),
    );
    let staged = at.then("staged", "staged").median(&pair.latency_staged, MS);
    rows.push(staged.over_link());
    rows.extend((pair.latency_peer.iter()).map(|x| at.then("peer", "peer").median(x, MS)));
    rows
}

#[cfg(test)]
pub(crate) mod tests;
