//! concurrency-breaks: what breaks the overlap of copies and kernels over streams, after
//! the CUDA Handbook's section 6.5.3 ("Breaking interengine concurrency").
//! How it measures, its bounds and its model are told in its words, `concurrency_breaks.md`;
//! its tables' columns (a row per case, a row per remedy) are declared at its end.
use crate::experiments::prelude::*;
mod analysis;

#[cfg(test)]
mod tests;

use analysis::analyze;
pub use analysis::{BreakRow, BreaksAnalysis, RemedyRow};

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
    const QUICK: &'static str = "--elements 4194304 --iterations 3 --repeats 3";

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

/// `Case`, each way of running the pipeline, and `Case::ALL`, in order: each with its
/// label, the break it remedies, the `nsys analyze` rule that reports it, what the break
/// detector must find in its timeline, and whether its streams are blocking (which picks
/// its clean pipeline).
macro_rules! cases {
    ($($(#[doc = $doc:literal])* $case:ident => $label:literal $(, remedies $cause:ident)?
        $(, rule $rule:literal)? $(, finds $kind:ident)? $(, blocking $blocking:literal)?;)*) => {
        /// One way of running the pipeline.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum Case {
            $($(#[doc = $doc])* $case,)*
        }

        impl Case {
            pub const ALL: [Case; 17] = [$(Case::$case),*];

            pub fn label(self) -> &'static str {
                match self {
                    $(Case::$case => $label,)*
                }
            }

            /// The break it remedies, for a remedy.
            pub fn remedies(self) -> Option<Case> {
                match self {
                    $(Case::$case => None $(.or(Some(Case::$cause)))?,)*
                }
            }

            /// The `nsys analyze` rule (Nsight Systems' expert system) that reports the
            /// same thing, for a break: where no rule names the call, `gpu_gaps` reports
            /// the idle GPU it leaves.
            pub fn nsys_rule(self) -> Option<&'static str> {
                match self {
                    $(Case::$case => None $(.or(Some($rule)))?,)*
                }
            }

            /// What the break detector must find in its timeline.
            pub fn expected(self) -> &'static [BreakKind] {
                match self {
                    $(Case::$case => &[$(BreakKind::$kind)?],)*
                }
            }

            /// Whether its streams are blocking (the NULL stream joins them).
            pub fn blocking_streams(self) -> bool {
                match self {
                    $(Case::$case => true $(&& $blocking)?,)*
                }
            }

            /// The clean pipeline on streams of the same kind.
            pub fn baseline(self) -> Case {
                [Case::CleanNonBlocking, Case::Clean][usize::from(self.blocking_streams())]
            }
        }
    };
}

cases! {
    /// Blocking streams (`CU_STREAM_DEFAULT`), nothing else.
    Clean => "clean";
    /// Non-blocking streams (`CU_STREAM_NON_BLOCKING`), nothing else.
    CleanNonBlocking => "clean, non-blocking streams", blocking false;
    /// The last chunk's copy in issued on the legacy NULL stream.
    NullStreamCopy => "copy in on the NULL stream", rule "gpu_gaps", finds NullStream;
    /// The same on non-blocking streams, which the NULL stream does not join: one of the
    /// NULL-stream copy's remedies.
    NullStreamCopyNonBlocking => "copy in on the NULL stream, non-blocking streams",
        remedies NullStreamCopy, finds NullStream, blocking false;
    /// The last chunk's copy in on the per-thread default stream, an ordinary stream: the
    /// NULL-stream copy's other remedy.
    PerThreadStreamCopy => "copy in on the per-thread default stream", remedies NullStreamCopy;
    /// After the copies in, `cuMemsetD32` (no stream) of a scratch buffer.
    MemsetWithoutStream => "memset without a stream", rule "cuda_memset_sync", finds NullStream;
    /// After the copies in, a device-to-device copy of a scratch buffer on the NULL
    /// stream.
    DeviceCopyOnNullStream => "device-to-device copy on the NULL stream", rule "gpu_gaps",
        finds NullStream;
    /// The last chunk copied in from pageable host memory, on its own stream.
    PageableCopy => "copy in from pageable memory", rule "cuda_memcpy_async", finds Pageable;
    /// Before each iteration, a device allocation and its free.
    AllocAndFree => "allocation and free before each iteration", rule "gpu_gaps",
        finds HostCall;
    /// After each iteration's copies in, the host waits on an event recorded after the
    /// previous iteration's copies out.
    HostWaitOnEvent => "host waits on an event mid-issue", rule "cuda_api_sync", finds HostCall;
    /// [`Case::MemsetWithoutStream`]'s remedy: the memset on the last stream
    /// (`cuMemsetD32Async`).
    MemsetOnStream => "memset on the pipeline's stream", remedies MemsetWithoutStream;
    /// [`Case::DeviceCopyOnNullStream`]'s remedy: the same copy on the last stream.
    DeviceCopyOnStream => "device-to-device copy on the pipeline's stream",
        remedies DeviceCopyOnNullStream;
    /// [`Case::AllocAndFree`]'s remedy: the allocation and the free in the first stream's
    /// order, from a pool that hands its memory back at each synchronization.
    StreamOrderedAlloc => "stream-ordered allocation and free, pool releasing",
        remedies AllocAndFree;
    /// The same from a pool that keeps its memory (release threshold the maximum).
    StreamOrderedAllocKept => "stream-ordered allocation and free, pool keeping",
        remedies AllocAndFree;
    /// [`Case::PageableCopy`]'s remedy: the same host memory registered once, before the
    /// pipeline (`cuMemHostRegister`).
    RegisteredCopy => "copy in from the pageable memory, registered", remedies PageableCopy;
    /// [`Case::PageableCopy`]'s other remedy: the chunk copied on the host into one of two
    /// pinned staging buffers, and in from there on its stream. The host waits before
    /// reusing a staging buffer, for a copy queued an iteration back: the detector finds
    /// a host call, while the GPU has the iteration since.
    StagedCopy => "copy in from the pageable memory through pinned staging",
        remedies PageableCopy, finds HostCall;
    /// [`Case::HostWaitOnEvent`]'s remedy: the host asks whether the event has passed
    /// (`cuEventQuery`) and goes on issuing.
    EventQuery => "host queries the event mid-issue", remedies HostWaitOnEvent;
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

/// The host's copy of one chunk into pinned staging memory, what the staged copy costs
/// the host each iteration on this host: timed at 1, 2, 4, … threads up to the cores,
/// and the staged copy's thread count (the fewest within 5% of the fastest) timed again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StagingProbe {
    /// Bytes of the chunk.
    pub bytes: u64,
    /// The threads the staged copy splits it over.
    pub threads: usize,
    /// The fastest copy at each thread count tried: (threads, milliseconds).
    pub by_threads: Vec<(usize, f64)>,
    /// Milliseconds of each copy at `threads`.
    pub copy: Series,
}

/// Result of concurrency-breaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConcurrencyBreaksResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    pub calibration: Calibration,
    pub cases: Vec<CaseRun>,
    /// The host's copy into staging (none in runs from before the staged copy used it).
    pub staging: Option<StagingProbe>,
}

impl Saved for ConcurrencyBreaksResult {
    experiment::saved_fields!(Params);

    fn timelines(&self) -> Vec<&Timeline> {
        self.cases.iter().flat_map(|c| &c.timeline).collect()
    }
}

impl Experiment for ConcurrencyBreaks {
    const NAME: &'static str = "concurrency-breaks";
    const WORDS: &'static str = include_str!("../concurrency_breaks.md");
    type Params = Params;
    type Result = ConcurrencyBreaksResult;
    type Derived = BreaksAnalysis;
    const QUESTION: Option<Question> = Some(Question::OverlapBreaks);

    /// Every case's time per iteration (over the link); the staged copy held against
    /// what limits it in the same run, the slower of the clean pipeline and the host's
    /// copy into staging (hidden only while it is shorter); and that copy itself.
    fn rows(r: &ConcurrencyBreaksResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        let clean = derived.baseline_ms(Case::StagedCopy);
        let staged_model = (r.staging.as_ref().zip(clean)).map(|(s, c)| c.max(s.copy.median()));
        let mut rows = columns(staged_model).measured_rows(&derived.rows);
        rows.extend(r.staging.iter().map(|probe| {
            let threads = probe.threads;
            let words =
                format!("the host's copy of one chunk into pinned staging, {threads} threads");
            MeasuredRow::median("host-copy-to-staging", words, &probe.copy, MS)
        }));
        rows
    }

    fn derive(r: &ConcurrencyBreaksResult, checks: &[TraceChecks]) -> BreaksAnalysis {
        analyze(r, checks)
    }

    fn tables(r: &Self::Result, derived: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        let mut tables = vec![columns(None).table(
            Some(format!(
                "medians of {} back-to-back iterations per sample; cost: ms per iteration over the clean pipeline on streams of the same kind",
                r.run.params.iterations
            )),
            &derived.rows,
        )];
        if !derived.remedies.is_empty() {
            tables.push(remedy_columns(derived).table(
                Some(format!(
                    "each break beside its remedy, both against the clean pipeline in the same run; as clean: the remedy is the same as clean by the rule (under the minimum effect, {}) or faster; within noise: its median is within the larger noise of the two rows",
                    crate::verdict::percent(Rule::within(ConcurrencyBreaks::NAME).min_change)
                )),
                &derived.remedies,
            ));
        }
        tables
    }

    fn csv(_r: &ConcurrencyBreaksResult, derived: &Self::Derived) -> Vec<Csv> {
        let remedies = remedy_columns(derived).csv(&derived.remedies);
        let remedies = (!derived.remedies.is_empty()).then(|| Csv::extra("remedies", remedies));
        let main = Csv::main(columns(None).csv(&derived.rows));
        std::iter::once(main).chain(remedies).collect()
    }

    /// Besides the calibration and the staging probe, each case by its name in the
    /// results: its label, its clean pipeline's time, its row and its remedy's row.
    fn words(r: &ConcurrencyBreaksResult, a: &Self::Derived) -> Value {
        let cases = Value::from_pairs(Case::ALL.map(|c| {
            let case = context! {
                label => c.label(),
                clean_ms => a.baseline_ms(c),
                row => a.row(c).map(Serde),
                remedy => a.remedy(c).map(Serde),
            };
            (Serde(c), case)
        }));
        context! {
            c => Serde(&r.calibration),
            staging => r.staging.as_ref().map(Serde),
            cases,
        }
    }

    fn figures(_r: &ConcurrencyBreaksResult, a: &Self::Derived) -> Vec<FigureModel> {
        let labels: Vec<String> = a.rows.iter().map(|x| x.case.label().to_owned()).collect();
        let mut c = blank(
            "concurrency-breaks: time per iteration, each break and each remedy against the clean pipeline".into(),
            "case",
            "ms per iteration",
            XAxis::Categories(labels),
            YScale::Linear,
        );
        let whiskers = (a.rows.iter())
            .map(|x| (x.time.min(), x.time.summary.max))
            .collect();
        c.bars.push(bars(
            "median, whiskers min–max",
            PALETTE[0],
            a.rows.iter().map(|x| x.time.median()).collect(),
            Some(whiskers),
        ));
        if let Some(clean) = a.baseline_ms(Case::Clean) {
            let across = (0..a.rows.len()).map(|i| (i as f64, clean)).collect();
            let lines = &mut c.lines;
            lines.push(line("clean pipeline (median)", BOUND_COLOR, true, across));
        }
        vec![FigureModel::chart("concurrency-breaks.svg".into(), c)]
    }

    fn section(
        rust: &Analyzed<Self>,
        cuda: Option<&Analyzed<Self>>,
    ) -> Result<Section, ReportError> {
        let (r, a) = rust.with();
        let mut sec = rust.section(cuda)?;
        // A break is marked only where its case cost time. A remedy that runs as clean,
        // with nothing for the detector to find, looks like the clean timeline: one line
        // says so.
        let traced = r.cases.iter().filter(|c| c.timeline.is_some());
        for (figure, traced) in sec.timelines.iter_mut().zip(traced) {
            let row = a.row(traced.case);
            if row.is_none_or(|x| x.verdict != Verdict::Slower) {
                figure.unmark();
            }
            if let Some(row) = row
                && a.remedy(traced.case).is_some()
                && row.as_clean()
                && row.detected.is_empty()
            {
                figure.collapsed = Some(
                    "as the clean one's: the remedy runs as fast as clean and the detector finds no break"
                        .into(),
                );
            }
        }
        Ok(sec)
    }

    fn summary(r: &ConcurrencyBreaksResult, a: &Self::Derived) -> Summary {
        let costliest = (a.rows.iter())
            .filter(|x| x.case.remedies().is_none() && x.case.baseline() != x.case)
            .max_by(|x, y| x.over_clean.total_cmp(&y.over_clean));
        let remedies = |keep: fn(&BreakRow) -> bool| {
            (a.remedies.iter())
                .filter(|x| a.row(x.remedy).is_some_and(keep))
                .count()
        };
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "clean_ms": a.baseline_ms(Case::Clean),
            "costliest": costliest.map(|x| x.case),
            "costliest_over_clean": costliest.map(|x| x.over_clean),
            "detected_as_expected": a.rows.iter().filter(|x| x.detected_as_expected).count(),
            "traced": r.cases.iter().filter(|c| c.timeline.is_some()).count(),
            "remedies_as_clean": remedies(|x| x.as_clean()),
            "remedies_within_noise": remedies(|x| x.within_noise),
            "remedies": a.remedies.len(),
            // The least change the rule calls a cost or a gain here (|B/A − 1|).
            "min_effect": Rule::within(ConcurrencyBreaks::NAME).min_change,
        }))
    }
}

/// A cost column: the milliseconds in the CSV; in the tables, its verdict after it where
/// that is not a change, "(the same as clean)" or "(too noisy to say)".
fn cost<'a, R: 'a>(
    c: Columns<'a, R>,
    (heading, name): (&'static str, &'static str),
    cost: impl Fn(&R) -> (f64, Verdict) + Copy + 'a,
) -> Columns<'a, R> {
    let cell = move |x: &R| {
        let unchanged = match cost(x).1 {
            Verdict::Same => " (the same as clean)",
            Verdict::TooNoisy | Verdict::NotComparable => " (too noisy to say)",
            Verdict::Faster | Verdict::Slower => "",
        };
        format!("{}{unchanged}", num(cost(x).0, 4))
    };
    c.both(heading, cell, name, move |x| format!("{:.4}", cost(x).0))
}

/// The one declaration of the table, the CSV and the measured rows: a row per case, over
/// the link, the staged copy's held against `staged_model`.
fn columns<'a>(staged_model: Option<f64>) -> Columns<'a, BreakRow> {
    let hold = move |x: &BreakRow, _: Option<&str>, row: MeasuredRow| {
        (row.over_link()).modelled(staged_model.filter(|_| x.case == Case::StagedCopy))
    };
    let c = Columns::new()
        .named(
            |x: &BreakRow| RowName::new(x.case.label(), x.case.label()),
            hold,
        )
        .text("case", "case", |x| x.case.label().into())
        .both(
            "streams",
            |x| ["non-blocking", "blocking"][usize::from(x.case.blocking_streams())].into(),
            "blocking_streams",
            |x| x.case.blocking_streams().to_string(),
        )
        .median(("ms per iteration", "ms"), (4, 4), (None, MS), |x| {
            Some(&x.time)
        })
        .noise_of("noise", "noise")
        .number("over clean", "over_clean", (3, 4), |x| x.over_clean);
    let c = cost(c, ("cost ms", "cost_ms"), |x| (x.cost_ms, x.verdict));
    let lost = ("copy–kernel overlap lost ms (traced)", "overlap_lost_ms");
    let both = ("both-ways lost ms (traced)", "both_ways_lost_ms");
    let ms = |v: f64| (v, num(v, 4));
    c.optional(lost, move |x| x.overlap_lost_ms.map(ms))
        .optional(both, move |x| x.both_ways_lost_ms.map(ms))
        .text("detected", "detected", |x| match x.detected.as_slice() {
            [] => "none".into(),
            k => k.iter().map(|k| k.label()).collect::<Vec<_>>().join(", "),
        })
        .text("nsys analyze rule", "nsys_rule", |x| {
            x.case.nsys_rule().unwrap_or("").into()
        })
        .show("as expected", |x| {
            ["NO", "yes"][usize::from(x.detected_as_expected)].into()
        })
}

/// The table of each break beside its remedy, each one's cost read from its row in `a`.
fn remedy_columns(a: &BreaksAnalysis) -> Columns<'_, RemedyRow> {
    let row = |case| a.row(case).expect("a remedy and its break have rows");
    let c = Columns::new().text("break", "break", |x: &RemedyRow| x.breaks.label().into());
    let c = cost(c, ("its cost ms", "break_cost_ms"), move |x| {
        (row(x.breaks).cost_ms, row(x.breaks).verdict)
    })
    .text("remedy", "remedy", |x| x.remedy.label().into());
    cost(c, ("its cost ms", "remedy_cost_ms"), move |x| {
        (row(x.remedy).cost_ms, row(x.remedy).verdict)
    })
    .number("remedy over break", "over_break", (3, 4), |x| x.over_break)
    .show("as clean", move |x| yes_no(row(x.remedy).as_clean()).into())
    .show("within noise", move |x| {
        yes_no(row(x.remedy).within_noise).into()
    })
}
