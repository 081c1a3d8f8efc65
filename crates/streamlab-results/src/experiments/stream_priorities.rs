//! stream-priorities: what a stream's priority buys a short kernel issued while a long
//! grid fills the GPU, and what it does not buy a copy.
//! How it measures, its bounds and its model are told in its words, `stream_priorities.md`.

use crate::experiments::prelude::*;

pub struct StreamPriorities;

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Microseconds each block of the long grid spins.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub block_us: u32,
    /// Waves of the long grid: its blocks are this many times the blocks the GPU holds
    /// at once.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub waves: u32,
    /// Probe kernels (and probe copies) issued while the long one runs, each on a stream
    /// of its own.
    #[arg(long, default_value_t = 40, value_parser = crate::saved::count(1024))]
    pub probes: usize,
    /// Microseconds each probe kernel spins.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub probe_us: u32,
    /// MiB of the long copy to the device (each probe copy is 4 KiB).
    #[arg(long, default_value_t = 256, value_parser = crate::saved::count(16_384))]
    pub copy_mib: usize,
    /// Rounds of each way, their probes' waits pooled.
    #[arg(long, default_value_t = 3, value_parser = crate::saved::count(100))]
    pub rounds: usize,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--waves 4 --probes 10 --copy-mib 64 --rounds 1";
}

/// What a way issues behind its long operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Work {
    Kernels,
    Copies,
}

impl Work {
    pub fn label(self) -> &'static str {
        match self {
            Work::Kernels => "kernels",
            Work::Copies => "copies",
        }
    }
}

/// One way of issuing, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WayRun {
    pub work: Work,
    /// The probes' streams at the greatest priority, the long one's at the least; else
    /// every stream at the default.
    pub prioritized: bool,
    /// Each probe's wait from issue to start on the GPU, ms, every round's pooled.
    pub waits_ms: Vec<f64>,
    /// The long operation's span on the GPU, ms, one per round.
    pub long_ms: Vec<f64>,
}

/// A way's name: "kernels, priorities", "copies, no priorities".
pub fn way_label(work: Work, prioritized: bool) -> String {
    let priorities = ["no priorities", "priorities"][usize::from(prioritized)];
    format!("{}, {priorities}", work.label())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamPrioritiesResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// The context's stream priorities, least and greatest (the driver numbers them
    /// downwards: the greatest is the lowest number).
    pub priority_range: (i32, i32),
    /// Blocks of the long grid the GPU holds at once, and the grid's blocks.
    pub resident_blocks: u32,
    pub long_blocks: u32,
    pub ways: Vec<WayRun>,
}

/// The `q`-quantile of `values` by nearest rank (NaN for none).
fn quantile(values: &[f64], q: f64) -> f64 {
    let sorted = stats::sorted(values);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or(f64::NAN)
}

/// One way's waits beside the model's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WayRow {
    pub work: Work,
    pub prioritized: bool,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// The long operation's median span.
    pub long_ms: f64,
    /// The model's p50 and p99: a wait uniform up to the next block boundary of the
    /// running grid (a prioritized kernel), up to the end of the long operation (a kernel
    /// that is not); none for a copy where the GPU has another copy engine, else up to the
    /// long copy's end.
    pub model_p50_ms: f64,
    pub model_p99_ms: f64,
    /// Its probes' waits, ms (their count and greatest in its summary).
    pub waits: Option<Series>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrioritiesAnalysis {
    pub rows: Vec<WayRow>,
    /// A probe kernel's p99 wait without priorities over its p99 with them.
    pub kernel_p99_gain: Option<f64>,
    /// A probe copy's p50 wait with priorities over its p50 without them.
    pub copy_p50_with_over_without: Option<f64>,
}

/// `work`'s row with priorities or without.
fn way(rows: &[WayRow], work: Work, prioritized: bool) -> Option<&WayRow> {
    (rows.iter()).find(|r| r.work == work && r.prioritized == prioritized)
}

/// `work`'s row without priorities and its row with them, where both have probes' waits
/// (a timeline drawn from events has none).
fn both_ways(rows: &[WayRow], work: Work) -> Option<(&WayRow, &WayRow)> {
    let measured = |on| way(rows, work, on).filter(|r| r.waits.is_some());
    measured(false).zip(measured(true))
}

fn columns<'a>() -> Columns<'a, WayRow> {
    Columns::new()
        .text("work", "work", |x: &WayRow| x.work.label().into())
        .text("priorities", "prioritized", |x| {
            yes_no(x.prioritized).into()
        })
        .number("probes", "probes", (0, 0), |x| {
            x.waits.as_ref().map_or(0.0, |s| s.summary.count as f64)
        })
        .number("wait p50 ms", "p50_ms", (4, 5), |x| x.p50_ms)
        .number("wait p99 ms", "p99_ms", (4, 5), |x| x.p99_ms)
        .number("wait max ms", "max_ms", (4, 5), |x| {
            x.waits.as_ref().map_or(f64::NAN, |s| s.summary.max)
        })
        .number("model p50 ms", "model_p50_ms", (4, 5), |x| x.model_p50_ms)
        .number("model p99 ms", "model_p99_ms", (4, 5), |x| x.model_p99_ms)
        .number("long operation ms", "long_ms", (3, 4), |x| x.long_ms)
        .named(
            |x| {
                let priority = if x.prioritized { "priority" } else { "default" };
                RowName::new(x.work.label(), way_label(x.work, x.prioritized))
                    .then(priority, "a probe's wait")
            },
            |x, _, row| match x.work {
                Work::Copies => row.controlled_by(RowControl::Launch),
                Work::Kernels => row,
            },
        )
        .measured((None, MS), |x| x.waits.as_ref())
}

impl Saved for StreamPrioritiesResult {
    experiment::saved_fields!(Params);
}

impl Experiment for StreamPriorities {
    const NAME: &'static str = "stream-priorities";
    const WORDS: &'static str = include_str!("stream_priorities.md");
    type Params = Params;
    type Result = StreamPrioritiesResult;
    type Derived = PrioritiesAnalysis;

    /// Each way's probes' waits; a probe copy's (the host's and the driver's path to a copy
    /// engine of its own) held against the run's launch probe.
    fn rows(_r: &StreamPrioritiesResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        columns().measured_rows(&derived.rows)
    }

    fn derive(r: &StreamPrioritiesResult, _checks: &[TraceChecks]) -> PrioritiesAnalysis {
        let block_ms = f64::from(r.run.params.block_us) / 1e3;
        let free_engine = r.run.device.copy_engines > 1;
        let rows: Vec<WayRow> = (r.ways.iter())
            .map(|w| {
                let long_ms = Series::new(w.long_ms.clone()).map_or(f64::NAN, |s| s.median());
                // A wait uniform on [0, reach] (`WayRow::model_p50_ms`).
                let reach = match (w.work, w.prioritized) {
                    (Work::Kernels, true) => block_ms,
                    (Work::Kernels, false) => long_ms,
                    (Work::Copies, _) if free_engine => 0.0,
                    (Work::Copies, _) => long_ms,
                };
                WayRow {
                    work: w.work,
                    prioritized: w.prioritized,
                    p50_ms: quantile(&w.waits_ms, 0.5),
                    p99_ms: quantile(&w.waits_ms, 0.99),
                    long_ms,
                    model_p50_ms: reach * 0.5,
                    model_p99_ms: reach * 0.99,
                    waits: Series::new(w.waits_ms.clone()),
                }
            })
            .collect();
        PrioritiesAnalysis {
            kernel_p99_gain: both_ways(&rows, Work::Kernels)
                .map(|(off, on)| off.p99_ms / on.p99_ms),
            copy_p50_with_over_without: both_ways(&rows, Work::Copies)
                .map(|(off, on)| on.p50_ms / off.p50_ms),
            rows,
        }
    }

    fn tables(_r: &Self::Result, derived: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        vec![columns().table(
            Some("each probe's wait from issue to start on the GPU (CUPTI), every round's pooled; the model's wait is uniform up to the running grid's next block boundary for a prioritized kernel, up to the long operation's end otherwise".into()),
            &derived.rows,
        )]
    }

    fn csv(_r: &StreamPrioritiesResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(&derived.rows))]
    }

    fn words(r: &StreamPrioritiesResult, a: &Self::Derived) -> Value {
        context! {
            long_blocks => r.long_blocks,
            resident_blocks => r.resident_blocks,
            priorities => [r.priority_range.0, r.priority_range.1],
            copy_engines => r.run.device.copy_engines,
            kernels => both_ways(&a.rows, Work::Kernels).map(Serde),
            copies => both_ways(&a.rows, Work::Copies).map(Serde),
        }
    }

    fn figures(_r: &StreamPrioritiesResult, a: &Self::Derived) -> Vec<FigureModel> {
        let labels = a.rows.iter().map(|r| way_label(r.work, r.prioritized));
        let mut c = blank(
            "stream-priorities: a probe's wait from issue to start, measured and modelled".into(),
            "probes issued while the long operation runs",
            "ms (log)",
            XAxis::Categories(labels.collect()),
            YScale::Log,
        );
        let ms = |f: fn(&WayRow) -> f64| a.rows.iter().map(f).collect();
        // A model wait of 0 (a copy with an engine free) has no bar on the log scale.
        c.bars = vec![
            bars("p50", PALETTE[0], ms(|r| r.p50_ms), None),
            bars("p99", PALETTE[1], ms(|r| r.p99_ms), None),
            bars("model p99", SEQUENTIAL_COLOR, ms(|r| r.model_p99_ms), None),
        ];
        vec![FigureModel::chart("stream-priorities.svg".into(), c)]
    }

    fn summary(r: &StreamPrioritiesResult, a: &Self::Derived) -> Summary {
        let both = |work, f: fn(&WayRow) -> f64| {
            [false, true].map(|prioritized| way(&a.rows, work, prioritized).map(f))
        };
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "kernel_p50_ms": both(Work::Kernels, |w| w.p50_ms),
            "kernel_p99_ms": both(Work::Kernels, |w| w.p99_ms),
            "model_p99_ms": way(&a.rows, Work::Kernels, true).map(|w| w.model_p99_ms),
            "kernel_p99_gain": a.kernel_p99_gain,
            "copy_p50_ms": both(Work::Copies, |w| w.p50_ms),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quantiles are by nearest rank; the model reaches a block for prioritized kernels and
    /// the long operation otherwise.
    #[test]
    fn nearest_rank_quantiles_and_the_model_s_reach() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&v, 1.0), 100.0);
        assert_eq!(quantile(&[3.0], 0.99), 3.0);
        assert!(quantile(&[], 0.5).is_nan());
        let run = |work, prioritized, waits: Vec<f64>| WayRun {
            work,
            prioritized,
            waits_ms: waits,
            long_ms: vec![2.0, 2.2, 2.1],
        };
        let r = StreamPrioritiesResult {
            run: RunRecord::made_up(Params::default()),
            priority_range: (0, -5),
            resident_blocks: 4224,
            long_blocks: 42240,
            ways: vec![
                run(Work::Kernels, false, vec![1.0, 1.5, 2.0]),
                run(Work::Kernels, true, vec![0.01, 0.05, 0.09]),
                run(Work::Copies, false, vec![1.0, 1.1]),
                run(Work::Copies, true, vec![1.05, 1.1]),
            ],
        };
        let analyzed = Analyzed::<StreamPriorities>::new(KernelSet::Rust, r);
        let a = &analyzed.derived;
        let with = way(&a.rows, Work::Kernels, true).unwrap();
        assert!((with.model_p99_ms - 0.099).abs() < 1e-12, "{with:?}");
        let without = way(&a.rows, Work::Kernels, false).unwrap();
        assert!((without.model_p99_ms - 2.1 * 0.99).abs() < 1e-12);
        assert!((a.kernel_p99_gain.unwrap() - 2.0 / 0.09).abs() < 1e-9);
        let notes = analyzed.words.clone().unwrap().notes;
        let (_, words) = notes.iter().find(|(label, _)| label == "Result").unwrap();
        assert!(
            words.contains("within the model's next block boundary"),
            "{words}"
        );
        assert!(words.contains("the priority made no difference"), "{words}");
        assert!(words.contains("it queued behind the long copy"), "{words}");
        let copies = way(&a.rows, Work::Copies, true).unwrap();
        assert_eq!(copies.model_p99_ms, 0.0, "made_up has three copy engines");
    }
}
