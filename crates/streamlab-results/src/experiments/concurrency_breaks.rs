//! concurrency-breaks: what breaks the overlap of copies and kernels over streams, after
//! the CUDA Handbook's section 6.5.3 ("Breaking interengine concurrency").
//!
//! The memcpy-kernel pipeline (every chunk copied in, every kernel, every copy out, one
//! chunk per stream, iterations back to back) runs clean, and then with one break inserted
//! in every iteration: a copy on the legacy NULL stream, a memset that takes no stream, a
//! device-to-device copy on the NULL stream, a copy from pageable memory, an allocation and
//! a free, a host wait on an event in the middle of issue; and as controls, the clean
//! pipeline and the NULL-stream copy on non-blocking streams, and the copy on the
//! per-thread default stream. Beside each break, in the same run, its remedy
//! ([`Case::remedies`]): the memset on a stream, stream-ordered allocation from a pool that
//! releases its memory and from one that keeps it, the pageable memory registered or staged
//! through two pinned buffers in turn, an event query in place of the wait. Each case's
//! time per iteration is held against its clean pipeline (the one on streams of the same
//! kind), and its traced timeline against the break detector
//! ([`crate::derived::trace::breaks`]): each break found by name (with the `nsys analyze`
//! rule that reports the same thing), the clean ones and the remedies found clean.

use serde::{Deserialize, Serialize};

use crate::derived::trace::TraceChecks;
use crate::derived::trace::{self, BreakKind};
use crate::experiment::{
    self, Analyzed, Csv, Experiment, MS, MeasuredRow, Overview, Saved, Summary, With, verdict,
};
use crate::report::ReportError;
use crate::report::chart::{BOUND_COLOR, BarSeries, PALETTE, XAxis, YScale};
use crate::report::figures::{FigureModel, blank, line};
use crate::report::section::{Section, draw};
use crate::report::table::{Columns, Table, num};
use crate::saved::timeline::{OpKind, Timeline};
use crate::saved::{RunRecord, UsageError};
use crate::stats::Series;
use crate::verdict::{self, Rule, Verdict};

/// The concurrency-breaks experiment.
pub struct ConcurrencyBreaks;

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// 32-bit integers in the array (at least one per stream).
    #[arg(long, default_value_t = 1 << 24,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=1 << 28))]
    pub elements: usize,
    /// Streams, one chunk each.
    #[arg(long, default_value_t = 8,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=64))]
    pub streams: usize,
    /// AddKernel's cycles; 0 picks the count at which the kernel takes as long as the
    /// copy in.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i32).range(0..=1_000_000))]
    pub cycles: i32,
    /// Iterations per timed sample, issued back to back.
    #[arg(long, default_value_t = 5, value_parser = crate::saved::count(10_000))]
    pub iterations: usize,
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<5>,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    fn quick() -> Params {
        Params {
            elements: 1 << 22,
            iterations: 3,
            sampling: crate::saved::Repeats::new(3),
            ..Params::default()
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        if self.streams > self.elements {
            return Err(UsageError::new(format!(
                "--streams {} exceeds --elements {}: each stream needs a chunk of at least one element",
                self.streams, self.elements
            )));
        }
        Ok(())
    }
}

/// One way of running the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Case {
    /// Blocking streams (`CU_STREAM_DEFAULT`), nothing else.
    Clean,
    /// Non-blocking streams (`CU_STREAM_NON_BLOCKING`), nothing else.
    CleanNonBlocking,
    /// The last chunk's copy in issued on the legacy NULL stream.
    NullStreamCopy,
    /// The same on non-blocking streams, which the NULL stream does not join.
    NullStreamCopyNonBlocking,
    /// The last chunk's copy in on the per-thread default stream.
    PerThreadStreamCopy,
    /// After the copies in, `cuMemsetD32` (no stream) of a scratch buffer.
    MemsetWithoutStream,
    /// After the copies in, a device-to-device copy of a scratch buffer on the NULL
    /// stream.
    DeviceCopyOnNullStream,
    /// The last chunk copied in from pageable host memory, on its own stream.
    PageableCopy,
    /// Before each iteration, a device allocation and its free.
    AllocAndFree,
    /// After each iteration's copies in, the host waits on an event recorded after the
    /// previous iteration's copies out.
    HostWaitOnEvent,
    /// [`Case::MemsetWithoutStream`]'s remedy: the memset on the last stream
    /// (`cuMemsetD32Async`).
    MemsetOnStream,
    /// [`Case::AllocAndFree`]'s remedy: the allocation and the free in the first stream's
    /// order (`cuMemAllocFromPoolAsync`, `cuMemFreeAsync`), from a pool that hands its
    /// memory back at each synchronization (release threshold 0, as the default pool).
    StreamOrderedAlloc,
    /// The same from a pool that keeps its memory (release threshold the maximum).
    StreamOrderedAllocKept,
    /// [`Case::PageableCopy`]'s remedy: the same host memory registered once, before the
    /// pipeline (`cuMemHostRegister`).
    RegisteredCopy,
    /// [`Case::PageableCopy`]'s other remedy: the chunk copied on the host into one of two
    /// pinned staging buffers, and in from there on its stream. The host stages the next
    /// iteration's chunk once it has issued this one's work, first waiting for the
    /// buffer's copy in of the iteration before (`cuEventSynchronize`).
    StagedCopy,
    /// [`Case::HostWaitOnEvent`]'s remedy: the host asks whether the event has passed
    /// (`cuEventQuery`) and goes on issuing.
    EventQuery,
}

impl Case {
    pub const ALL: [Case; 16] = [
        Case::Clean,
        Case::CleanNonBlocking,
        Case::NullStreamCopy,
        Case::NullStreamCopyNonBlocking,
        Case::PerThreadStreamCopy,
        Case::MemsetWithoutStream,
        Case::DeviceCopyOnNullStream,
        Case::PageableCopy,
        Case::AllocAndFree,
        Case::HostWaitOnEvent,
        Case::MemsetOnStream,
        Case::StreamOrderedAlloc,
        Case::StreamOrderedAllocKept,
        Case::RegisteredCopy,
        Case::StagedCopy,
        Case::EventQuery,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Case::Clean => "clean",
            Case::CleanNonBlocking => "clean, non-blocking streams",
            Case::NullStreamCopy => "copy in on the NULL stream",
            Case::NullStreamCopyNonBlocking => "copy in on the NULL stream, non-blocking streams",
            Case::PerThreadStreamCopy => "copy in on the per-thread default stream",
            Case::MemsetWithoutStream => "memset without a stream",
            Case::DeviceCopyOnNullStream => "device-to-device copy on the NULL stream",
            Case::PageableCopy => "copy in from pageable memory",
            Case::AllocAndFree => "allocation and free before each iteration",
            Case::HostWaitOnEvent => "host waits on an event mid-issue",
            Case::MemsetOnStream => "memset on the pipeline's stream",
            Case::StreamOrderedAlloc => "stream-ordered allocation and free, pool releasing",
            Case::StreamOrderedAllocKept => "stream-ordered allocation and free, pool keeping",
            Case::RegisteredCopy => "copy in from the pageable memory, registered",
            Case::StagedCopy => "copy in from the pageable memory through pinned staging",
            Case::EventQuery => "host queries the event mid-issue",
        }
    }

    /// The break it remedies, for a remedy (the NULL-stream copy's are the non-blocking
    /// streams and the per-thread default stream).
    pub fn remedies(self) -> Option<Case> {
        match self {
            Case::NullStreamCopyNonBlocking | Case::PerThreadStreamCopy => {
                Some(Case::NullStreamCopy)
            }
            Case::MemsetOnStream => Some(Case::MemsetWithoutStream),
            Case::StreamOrderedAlloc | Case::StreamOrderedAllocKept => Some(Case::AllocAndFree),
            Case::RegisteredCopy | Case::StagedCopy => Some(Case::PageableCopy),
            Case::EventQuery => Some(Case::HostWaitOnEvent),
            _ => None,
        }
    }

    /// The `nsys analyze` rule (Nsight Systems' expert system) that reports the same
    /// thing, for a break: where no rule names the call, `gpu_gaps` reports the idle GPU
    /// it leaves.
    pub fn nsys_rule(self) -> Option<&'static str> {
        match self {
            Case::NullStreamCopy | Case::DeviceCopyOnNullStream | Case::AllocAndFree => {
                Some("gpu_gaps")
            }
            Case::MemsetWithoutStream => Some("cuda_memset_sync"),
            Case::PageableCopy => Some("cuda_memcpy_async"),
            Case::HostWaitOnEvent => Some("cuda_api_sync"),
            _ => None,
        }
    }

    /// Whether its streams are blocking (the NULL stream joins them).
    pub fn blocking_streams(self) -> bool {
        !matches!(
            self,
            Case::CleanNonBlocking | Case::NullStreamCopyNonBlocking
        )
    }

    /// The clean pipeline on streams of the same kind.
    pub fn baseline(self) -> Case {
        if self.blocking_streams() {
            Case::Clean
        } else {
            Case::CleanNonBlocking
        }
    }

    /// What the break detector must find in its timeline (nothing for the clean cases
    /// and the per-thread default stream, which is an ordinary stream; the host's wait for
    /// a staging buffer, which the detector names as any host call that waits).
    pub fn expected(self) -> &'static [BreakKind] {
        match self {
            Case::Clean
            | Case::CleanNonBlocking
            | Case::PerThreadStreamCopy
            | Case::MemsetOnStream
            | Case::StreamOrderedAlloc
            | Case::StreamOrderedAllocKept
            | Case::RegisteredCopy
            | Case::EventQuery => &[],
            Case::NullStreamCopy
            | Case::NullStreamCopyNonBlocking
            | Case::MemsetWithoutStream
            | Case::DeviceCopyOnNullStream => &[BreakKind::NullStream],
            Case::PageableCopy => &[BreakKind::Pageable],
            Case::AllocAndFree | Case::HostWaitOnEvent => &[BreakKind::HostCall],
            // The host waits before reusing a staging buffer, for a copy queued an
            // iteration back: a host call, while the GPU has the iteration since.
            Case::StagedCopy => &[BreakKind::HostCall],
        }
    }
}

/// One case measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRun {
    pub case: Case,
    /// Milliseconds per iteration, one sample per `iterations` back to back.
    pub time: Series,
    /// Three iterations traced back to back.
    pub timeline: Option<Timeline>,
}

/// How the kernel's length was chosen: the whole array copied in alone and its kernels
/// alone at `cycles` (milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub cycles: i32,
    pub htod_ms: f64,
    pub kernels_ms: f64,
}

/// Result of concurrency-breaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConcurrencyBreaksResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    pub calibration: Calibration,
    pub cases: Vec<CaseRun>,
}

/// One case against its clean pipeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakRow {
    pub case: Case,
    pub median_ms: f64,
    pub noise: f64,
    /// Its median over its clean pipeline's, and the difference per iteration.
    pub over_clean: f64,
    pub cost_ms: f64,
    /// The case against its clean pipeline by the one rule of [`crate::verdict`]: slower
    /// (a cost), faster, the same, or too noisy to say.
    pub verdict: Verdict,
    /// Per traced iteration, how much less copies ran beside kernels than in the clean
    /// pipeline's trace: the copy–kernel overlap it destroyed.
    pub overlap_lost_ms: Option<f64>,
    /// Per traced iteration, how much less the two copy directions ran at once. This
    /// costs less than its length: a copy alone runs faster than beside one in the other
    /// direction (the link's both-ways rate is below twice its one-way rate).
    pub both_ways_lost_ms: Option<f64>,
    /// Whether the cost is at least the copy–kernel overlap destroyed.
    pub costs_overlap_lost: Option<bool>,
    /// Per traced iteration, how long the host spent in the calls its timeline records
    /// (a wait, an allocation, a copy into staging): host work on the issue path.
    #[serde(default)]
    pub host_ms: Option<f64>,
    /// What the break detector found in its timeline, and what it must find.
    pub detected: Vec<BreakKind>,
    pub expected: Vec<BreakKind>,
    /// Everything expected was found, and nothing where nothing was expected.
    pub detected_as_expected: bool,
}

/// A break beside one of its remedies, each against the clean pipeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemedyRow {
    pub remedy: Case,
    pub breaks: Case,
    /// The break's and the remedy's cost per iteration over clean, and their verdicts.
    pub break_cost_ms: f64,
    pub break_verdict: Verdict,
    pub remedy_cost_ms: f64,
    pub remedy_verdict: Verdict,
    /// The remedy's time per iteration over the break's.
    pub over_break: f64,
    /// The remedy's host calls per traced iteration ([`BreakRow::host_ms`]).
    #[serde(default)]
    pub remedy_host_ms: Option<f64>,
}

impl RemedyRow {
    /// Whether the remedy is within noise of clean (or faster).
    pub fn as_clean(&self) -> bool {
        matches!(self.remedy_verdict, Verdict::Same | Verdict::Faster)
    }
}

/// Everything derived from a concurrency-breaks result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreaksAnalysis {
    pub rows: Vec<BreakRow>,
    /// Each break beside each of its remedies measured in the same run.
    #[serde(default)]
    pub remedies: Vec<RemedyRow>,
}

/// Copy–kernel overlap and both copy directions at once, per traced iteration.
fn overlap_per_iteration(t: &Timeline) -> Option<(f64, f64)> {
    let o = trace::check(t).occupancy?;
    let per = t.iterations.max(1) as f64;
    Some((o.flow.copy_kernel_overlap_ms / per, o.both_copying_ms / per))
}

/// How long the host spent in the calls `t` records, per traced iteration (none where it
/// records none).
fn host_per_iteration(t: &Timeline) -> Option<f64> {
    let host: Vec<f64> = (t.ops.iter())
        .filter(|op| op.kind == OpKind::Host)
        .map(|op| op.end_ms - op.start_ms)
        .collect();
    (!host.is_empty()).then(|| host.iter().sum::<f64>() / t.iterations.max(1) as f64)
}

/// The kinds of break the detector found in `t`, in [`BreakKind`]'s order.
fn detected(t: &Timeline) -> Vec<BreakKind> {
    let found = trace::check(t).breaks;
    let mut kinds: Vec<BreakKind> = found.iter().flat_map(|b| b.kinds.clone()).collect();
    kinds.sort_by_key(|k| *k as usize);
    kinds.dedup();
    kinds
}

fn analyze(r: &ConcurrencyBreaksResult) -> BreaksAnalysis {
    let find = |case: Case| r.cases.iter().find(|c| c.case == case);
    let rows = (r.cases.iter())
        .filter_map(|c| {
            let base = find(c.case.baseline())?;
            let (m, b) = (c.time.median(), base.time.median());
            let detected = c.timeline.as_ref().map(detected).unwrap_or_default();
            let expected = c.case.expected().to_vec();
            let lost = (c.timeline.as_ref().and_then(overlap_per_iteration))
                .zip(base.timeline.as_ref().and_then(overlap_per_iteration))
                .map(|((kernel, both), (base_kernel, base_both))| {
                    (base_kernel - kernel, base_both - both)
                });
            Some(BreakRow {
                case: c.case,
                median_ms: m,
                noise: c.time.noise(),
                over_clean: m / b,
                cost_ms: m - b,
                verdict: verdict::judge(
                    &Rule::within(ConcurrencyBreaks::NAME),
                    (&base.time).into(),
                    (&c.time).into(),
                )
                .verdict,
                overlap_lost_ms: lost.map(|l| l.0),
                both_ways_lost_ms: lost.map(|l| l.1),
                costs_overlap_lost: lost.map(|l| m - b >= l.0),
                host_ms: c.timeline.as_ref().and_then(host_per_iteration),
                detected_as_expected: c.timeline.is_some()
                    && if expected.is_empty() {
                        detected.is_empty()
                    } else {
                        expected.iter().all(|k| detected.contains(k))
                    },
                detected,
                expected,
            })
        })
        .collect::<Vec<BreakRow>>();
    let remedies = (rows.iter())
        .filter_map(|remedy| {
            let cause = rows
                .iter()
                .find(|b| Some(b.case) == remedy.case.remedies())?;
            Some(RemedyRow {
                remedy: remedy.case,
                breaks: cause.case,
                break_cost_ms: cause.cost_ms,
                break_verdict: cause.verdict,
                remedy_cost_ms: remedy.cost_ms,
                remedy_verdict: remedy.verdict,
                over_break: remedy.median_ms / cause.median_ms,
                remedy_host_ms: remedy.host_ms,
            })
        })
        .collect();
    BreaksAnalysis { rows, remedies }
}

/// concurrency-breaks' headline in `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreaksSummary {
    pub verified: bool,
    pub clean_ms: Option<f64>,
    /// The costliest case, and its time over its clean pipeline's.
    pub costliest: Option<Case>,
    pub costliest_over_clean: Option<f64>,
    /// Cases whose timeline the break detector read as expected, of the cases traced.
    pub detected_as_expected: usize,
    pub traced: usize,
    /// Remedies within noise of the clean pipeline, of the remedies measured.
    #[serde(default)]
    pub remedies_as_clean: usize,
    #[serde(default)]
    pub remedies: usize,
}

/// A row's cost in words: "0.0012 ms per iteration (within the noise)", or that it
/// cost nothing.
fn cost_words(row: Option<&BreakRow>) -> String {
    row.map_or("–".into(), |x| {
        let within = unless_changed(x.verdict);
        if x.cost_ms < 0.0 {
            format!(
                "nothing: the run was {:.4} ms per iteration faster{within}",
                -x.cost_ms
            )
        } else {
            format!("{:.4} ms per iteration{within}", x.cost_ms)
        }
    })
}

/// What a cost that is not called a change is: "the same as clean" or "too noisy to
/// say"; `None` for one that is.
fn unchanged(v: Verdict) -> Option<&'static str> {
    match v {
        Verdict::Same => Some("the same as clean"),
        Verdict::TooNoisy | Verdict::NotComparable => Some("too noisy to say"),
        Verdict::Faster | Verdict::Slower => None,
    }
}

/// [`unchanged`] in brackets after a cost, nothing after a cost called a change.
fn unless_changed(v: Verdict) -> String {
    unchanged(v).map_or(String::new(), |u| format!(" ({u})"))
}

fn kinds(k: &[BreakKind]) -> String {
    if k.is_empty() {
        "none".into()
    } else {
        k.iter().map(|k| k.label()).collect::<Vec<_>>().join(", ")
    }
}

/// The one declaration of the table and the CSV: a row per case.
fn columns<'a>() -> Columns<'a, BreakRow> {
    let ms = |x: f64| format!("{x:.4}");
    Columns::new()
        .text("case", "case", |x: &BreakRow| x.case.label().into())
        .both(
            "streams",
            |x| {
                (if x.case.blocking_streams() {
                    "blocking"
                } else {
                    "non-blocking"
                })
                .into()
            },
            "blocking_streams",
            |x| x.case.blocking_streams().to_string(),
        )
        .number("ms per iteration", "ms", (4, 4), |x| x.median_ms)
        .noise("noise", "noise", |x| x.noise)
        .number("over clean", "over_clean", (3, 4), |x| x.over_clean)
        .both(
            "cost ms",
            |x| format!("{}{}", num(x.cost_ms, 4), unless_changed(x.verdict)),
            "cost_ms",
            move |x| ms(x.cost_ms),
        )
        .both(
            "copy–kernel overlap lost ms (traced)",
            |x| x.overlap_lost_ms.map_or("–".into(), |v| num(v, 4)),
            "overlap_lost_ms",
            move |x| x.overlap_lost_ms.map_or(String::new(), ms),
        )
        .both(
            "both-ways lost ms (traced)",
            |x| x.both_ways_lost_ms.map_or("–".into(), |v| num(v, 4)),
            "both_ways_lost_ms",
            move |x| x.both_ways_lost_ms.map_or(String::new(), ms),
        )
        .text("detected", "detected", |x| kinds(&x.detected))
        .text("nsys analyze rule", "nsys_rule", |x| {
            x.case.nsys_rule().unwrap_or("").into()
        })
        .show("as expected", |x| {
            (if x.detected_as_expected { "yes" } else { "NO" }).into()
        })
}

/// A cost and its verdict, as the remedies' table shows them.
fn cost_cell(cost_ms: f64, v: Verdict) -> String {
    format!("{}{}", num(cost_ms, 4), unless_changed(v))
}

/// The table of each break beside its remedy.
fn remedy_columns<'a>() -> Columns<'a, RemedyRow> {
    Columns::new()
        .text("break", "break", |x: &RemedyRow| x.breaks.label().into())
        .both(
            "its cost ms",
            |x| cost_cell(x.break_cost_ms, x.break_verdict),
            "break_cost_ms",
            |x| format!("{:.4}", x.break_cost_ms),
        )
        .text("remedy", "remedy", |x| x.remedy.label().into())
        .both(
            "its cost ms",
            |x| cost_cell(x.remedy_cost_ms, x.remedy_verdict),
            "remedy_cost_ms",
            |x| format!("{:.4}", x.remedy_cost_ms),
        )
        .number("remedy over break", "over_break", (3, 4), |x| x.over_break)
        .show("as clean", |x| {
            (if x.as_clean() { "yes" } else { "no" }).into()
        })
}

fn figures(r: &ConcurrencyBreaksResult, a: &BreaksAnalysis) -> Vec<FigureModel> {
    let labels: Vec<String> = a.rows.iter().map(|x| x.case.label().to_owned()).collect();
    let mut c = blank(
        "concurrency-breaks: time per iteration, each break and each remedy against the clean pipeline".into(),
        "case",
        "ms per iteration",
        XAxis::Categories(labels),
        YScale::Linear,
    );
    let whiskers = (a.rows.iter())
        .map(|x| {
            (r.cases.iter().find(|c| c.case == x.case))
                .map_or((f64::NAN, f64::NAN), |c| (c.time.min(), c.time.summary.max))
        })
        .collect();
    c.bars.push(BarSeries {
        name: "median, whiskers min–max".into(),
        color: PALETTE[0],
        values: a.rows.iter().map(|x| x.median_ms).collect(),
        whiskers: Some(whiskers),
    });
    if let Some(clean) = a.rows.iter().find(|x| x.case == Case::Clean) {
        let across = (0..a.rows.len()).map(|i| (i as f64, clean.median_ms));
        c.lines.push(line(
            "clean pipeline (median)",
            BOUND_COLOR,
            true,
            across.collect(),
        ));
    }
    vec![FigureModel::chart("concurrency-breaks.svg".into(), c)]
}

impl Saved for ConcurrencyBreaksResult {
    experiment::saved_fields!(Params);

    fn timelines(&self) -> Vec<&Timeline> {
        self.cases
            .iter()
            .filter_map(|c| c.timeline.as_ref())
            .collect()
    }
}

impl Experiment for ConcurrencyBreaks {
    const NAME: &'static str = "concurrency-breaks";
    const USES_KERNEL_SETS: bool = false;
    type Params = Params;
    type Result = ConcurrencyBreaksResult;
    type Derived = BreaksAnalysis;

    fn rows(r: &ConcurrencyBreaksResult, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        (r.cases.iter())
            .map(|c| MeasuredRow::median(c.case.label(), c.case.label(), &c.time, MS).over_link())
            .collect()
    }

    fn derive(r: &ConcurrencyBreaksResult, _checks: &[TraceChecks]) -> BreaksAnalysis {
        analyze(r)
    }

    fn tables(
        r: &ConcurrencyBreaksResult,
        derived: &Self::Derived,
        _cuda: Option<With<'_, Self>>,
    ) -> Vec<Table> {
        let mut tables = vec![columns().table(
            Some(format!(
                "medians of {} back-to-back iterations per sample; cost: ms per iteration over the clean pipeline on streams of the same kind",
                r.run.params.iterations
            )),
            &derived.rows,
        )];
        if !derived.remedies.is_empty() {
            tables.push(remedy_columns().table(
                Some("each break beside its remedy, both against the clean pipeline in the same run; as clean: the remedy's cost is within noise (or it is faster)".into()),
                &derived.remedies,
            ));
        }
        tables
    }

    fn csv(_r: &ConcurrencyBreaksResult, derived: &Self::Derived) -> Vec<Csv> {
        let mut files = vec![Csv::main(columns().csv(&derived.rows))];
        if !derived.remedies.is_empty() {
            files.push(Csv {
                suffix: Some("remedies"),
                contents: remedy_columns().csv(&derived.remedies),
            });
        }
        files
    }

    fn section(
        rust: &Analyzed<Self>,
        _twin: Option<&Analyzed<Self>>,
    ) -> Result<Section, ReportError> {
        let (r, a) = rust.with();
        let mut sec = rust.section("concurrency-breaks: what stalls the overlap", "The memcpy-kernel pipeline over the streams (every chunk copied in, every AddKernel, every copy out; iterations back to back), clean and with one break in every iteration, after the CUDA Handbook's 6.5.3: the legacy NULL stream waits for every blocking stream's earlier work and holds back their later work, so anything on it (an asynchronous copy, a call that takes no stream) stalls the overlap; pageable copies and host calls that wait for the GPU stop the host issuing. Each case is timed against its clean pipeline and traced, and the break detector reads its timeline.");
        let c = &r.calibration;
        sec.note(
            "Kernel",
            format!(
                "AddKernel at {} cycles: the whole array's kernels take {:.4} ms against {:.4} ms to copy it in{}, so the clean pipeline keeps the copy engines and the SMs busy at once and a break has overlap to destroy.",
                c.cycles,
                c.kernels_ms,
                c.htod_ms,
                if r.run.params.cycles == 0 { " (cycles picked to match them)" } else { "" }
            ),
        );
        sec.note(
            "Breaks",
            "The break inserted in each iteration: the last chunk's copy in on the NULL stream (`CU_STREAM_LEGACY`) or the per-thread default stream (`CU_STREAM_PER_THREAD`), its stream waiting on an event after it; `cuMemsetD32` (no stream) or `cuMemcpyDtoDAsync` on the NULL stream of a 4 MiB scratch buffer after the copies in; the last chunk copied in from pageable memory with `cuMemcpyHtoDAsync` on its own stream; `cuMemAlloc` and `cuMemFree` of 4 MiB before the copies in; `cuEventSynchronize` after the copies in on an event recorded after the previous iteration's copies out. Cost is the time per iteration over the clean pipeline on streams of the same kind (a negative cost: faster); copy–kernel overlap lost is, per traced iteration, how much less copies ran beside kernels than in the clean pipeline's trace, and both-ways lost how much less the two copy directions ran at once.",
        );
        if !a.remedies.is_empty() {
            sec.note(
                "Remedies",
                "Each break's remedy runs in the same run, on the same streams: the memset on the last stream (`cuMemsetD32Async`); the allocation and the free in the first stream's order (`cuMemAllocFromPoolAsync`, `cuMemFreeAsync`) from a pool that hands its memory back at each synchronization (release threshold 0, as the default pool) and from one that keeps it; the same pageable memory registered once before the pipeline (`cuMemHostRegister`) and copied from asynchronously, or copied on the host into one of two pinned staging buffers in turn and in from there, the host staging the next iteration's chunk once it has issued this one's work, first waiting (`cuEventSynchronize`) for that buffer's copy in of the iteration before; `cuEventQuery` in place of `cuEventSynchronize`, the host going on whatever it answers; and for the NULL-stream copy, non-blocking streams and the per-thread default stream. The nsys analyze rule is the rule of Nsight Systems' expert system that reports the same thing (gpu_gaps: the idle GPU a call leaves where no rule names the call).",
            );
            let clean = a.remedies.iter().filter(|x| x.as_clean()).count();
            let clean_ms = |case: Case| {
                (a.rows.iter())
                    .find(|x| x.case == case.baseline())
                    .map(|x| x.median_ms)
            };
            let rest: Vec<String> = (a.remedies.iter())
                .filter(|x| !x.as_clean())
                .map(|x| {
                    format!(
                        "{} ({} ms per iteration, {:.2}× the break's time{})",
                        x.remedy.label(),
                        cost_cell(x.remedy_cost_ms, x.remedy_verdict),
                        x.over_break,
                        x.remedy_host_ms.map_or(String::new(), |h| format!(
                            "; the host's calls, which its timeline shows, took {h:.4} ms per traced iteration{}",
                            clean_ms(x.remedy).map_or(String::new(), |c| format!(
                                ", where a clean iteration takes {c:.4} ms"
                            ))
                        ))
                    )
                })
                .collect();
            sec.note(
                "Remedies' result",
                if rest.is_empty() {
                    format!("All {} remedies are within noise of the clean pipeline.", a.remedies.len())
                } else {
                    format!(
                        "{clean} of {} remedies are within noise of the clean pipeline; still costing: {}.",
                        a.remedies.len(),
                        rest.join("; ")
                    )
                },
            );
        }
        if let Some(x) = a.rows.iter().find(|x| x.case == Case::NullStreamCopy) {
            sec.note(
                "Result",
                format!(
                    "One copy in per iteration moved onto the NULL stream costs {:.4} ms per iteration ({:.2}× the clean pipeline{}): the kernels issued after it wait for it, so copies ran beside kernels {} ms less per iteration{}, and the two copy directions ran at once {} ms less, which costs less than its length because each copy then runs alone at its faster one-way rate. On non-blocking streams, which the NULL stream does not join, the same copy costs {}; on the per-thread default stream, {}.",
                    x.cost_ms,
                    x.over_clean,
                    unchanged(x.verdict).map_or(String::new(), |u| format!(", {u}")),
                    x.overlap_lost_ms.map_or("–".into(), |v| format!("{v:.4}")),
                    match x.costs_overlap_lost {
                        Some(true) => " (the cost is at least that overlap)",
                        Some(false) => " (more than the cost: a run this noisy does not show the whole loss)",
                        None => "",
                    },
                    x.both_ways_lost_ms.map_or("–".into(), |v| format!("{v:.4}")),
                    cost_words(a.rows.iter().find(|x| x.case == Case::NullStreamCopyNonBlocking)),
                    cost_words(a.rows.iter().find(|x| x.case == Case::PerThreadStreamCopy)),
                ),
            );
        }
        sec.figures = draw(figures(r, a));
        sec.timelines = rust.timelines()?;
        Ok(sec)
    }

    fn summary(r: &ConcurrencyBreaksResult, derived: &Self::Derived) -> Summary {
        let a = derived;
        let costliest = (a.rows.iter())
            .filter(|x| x.case.remedies().is_none())
            .max_by(|x, y| x.over_clean.total_cmp(&y.over_clean));
        let x = BreaksSummary {
            verified: r.run.verification.passed,
            clean_ms: (a.rows.iter().find(|x| x.case == Case::Clean)).map(|x| x.median_ms),
            costliest: costliest.map(|x| x.case),
            costliest_over_clean: costliest.map(|x| x.over_clean),
            detected_as_expected: a.rows.iter().filter(|x| x.detected_as_expected).count(),
            traced: r.cases.iter().filter(|c| c.timeline.is_some()).count(),
            remedies_as_clean: a.remedies.iter().filter(|x| x.as_clean()).count(),
            remedies: a.remedies.len(),
        };
        let line = format!(
            "clean {} ms per iteration, costliest break {} at {}× clean; {} of {} remedies as clean; detector as expected in {} of {} traced cases; {}",
            x.clean_ms.map_or("–".into(), |v| format!("{v:.4}")),
            x.costliest.map_or("–", Case::label),
            x.costliest_over_clean
                .map_or("–".into(), |v| format!("{v:.2}")),
            x.remedies_as_clean,
            x.remedies,
            x.detected_as_expected,
            x.traced,
            verdict(x.verified)
        );
        let finding = match (x.costliest, x.costliest_over_clean, x.clean_ms) {
            (Some(case), Some(over), Some(clean)) => format!(
                "Of what breaks the overlap, a {} costs most: {over:.2}× the clean iteration ({clean:.3} ms); {} of {} remedies measured beside their breaks run within noise of clean; the timelines name the break as expected in {} of {} traced cases.",
                case.label(),
                x.remedies_as_clean,
                x.remedies,
                x.detected_as_expected,
                x.traced
            ),
            _ => "No break was measured against the clean case.".into(),
        };
        let result = match (x.costliest, x.costliest_over_clean) {
            (Some(case), Some(over)) => format!("{}: {over:.2}× clean", case.label()),
            _ => "–".into(),
        };
        Summary::headline(&x, line).with(Overview {
            finding,
            result,
            over_bound: None,
            rust_over_cpp: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_calls_a_timeline_records_are_counted_per_iteration() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/runs/h200-2026-11-27-0014/concurrency-breaks.json"
        );
        let r: ConcurrencyBreaksResult =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let a = analyze(&r);
        let row = |case: Case| a.rows.iter().find(|x| x.case == case).unwrap();
        // The clean pipeline waits for nothing on the host; a host wait and an allocation
        // are host calls on the issue path.
        assert_eq!(row(Case::Clean).host_ms, None);
        for case in [Case::HostWaitOnEvent, Case::AllocAndFree] {
            let host = row(case).host_ms.unwrap();
            assert!(
                host > 0.0 && host < row(case).median_ms * 10.0,
                "{case:?}: {host}"
            );
        }
        let remedy = (a.remedies.iter())
            .find(|x| x.remedy == Case::EventQuery)
            .unwrap();
        assert_eq!(remedy.remedy_host_ms, row(Case::EventQuery).host_ms);
    }

    #[test]
    fn every_case_has_a_clean_baseline_on_streams_of_its_kind() {
        for case in Case::ALL {
            let base = case.baseline();
            assert_eq!(base.blocking_streams(), case.blocking_streams());
            assert!(base.expected().is_empty());
        }
        assert_eq!(
            Case::NullStreamCopyNonBlocking.baseline(),
            Case::CleanNonBlocking
        );
    }

    #[test]
    fn every_break_the_detector_names_has_a_rule_and_every_remedy_a_break_it_must_clear() {
        for case in Case::ALL {
            assert_eq!(
                case.nsys_rule().is_some(),
                !case.expected().is_empty() && case.remedies().is_none(),
                "{case:?}"
            );
            if let Some(cause) = case.remedies() {
                // The NULL-stream copy's remedies keep a copy on a default stream, which
                // non-blocking streams make harmless, and staging keeps a host wait for a
                // copy queued an iteration before: the others must run clean.
                let keeps_the_copy = cause == Case::NullStreamCopy;
                let keeps_a_wait = case == Case::StagedCopy;
                assert!(
                    keeps_the_copy || keeps_a_wait || case.expected().is_empty(),
                    "{case:?} must run clean"
                );
                assert!(!cause.expected().is_empty(), "{cause:?} must be a break");
                assert_eq!(
                    case.blocking_streams() || cause == Case::NullStreamCopy,
                    cause.blocking_streams()
                );
            }
        }
        for cause in [
            Case::NullStreamCopy,
            Case::MemsetWithoutStream,
            Case::AllocAndFree,
            Case::PageableCopy,
            Case::HostWaitOnEvent,
        ] {
            assert!(
                Case::ALL.iter().any(|c| c.remedies() == Some(cause)),
                "{cause:?}"
            );
        }
    }
}
