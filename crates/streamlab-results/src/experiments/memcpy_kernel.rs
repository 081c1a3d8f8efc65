//! memcpy-kernel, after the CUDA Handbook's concurrencyMemcpyKernel: AddKernel between a
//! copy in and a copy out of the whole array, one after another against split over
//! streams, across a sweep of kernel cycles; per row the speedup, its reachable bound,
//! the efficiency, and the breakeven where the kernel outlasts the copies.
//!
//! Each row times one streamed run, so its bound carries the first chunk's copy in and
//! the last chunk's copy out ([`crate::derived::pipeline`] with one run). The row's copy
//! stages are its stream count's chunks copied in alone, out alone and both ways at
//! once; its kernel stage the faster of the kernel alone in the sequential run and the
//! chunks' kernels alone, all at once (fastest samples, all measured in the same run).
use serde::{Deserialize, Serialize};

use crate::derived::pipeline::{self, Bound, count_under, under_clause};
use crate::derived::rates::{best_rates, chunks_noise, for_chunks, pipeline_stages};
use crate::derived::trace::TraceChecks;
use crate::experiment::{own_link, self, Experiment, MS, MeasuredRow, With, verdict, Analyzed, Csv, Saved, Summary};
use crate::range::IntRange;
use crate::report::ReportError;
use crate::report::chart::{BOUND_COLOR, Level, PALETTE, SEQUENTIAL_COLOR, XAxis, YScale};
use crate::report::figures::{FigureModel, blank, line};
use crate::report::section::{Section, cuda_note, draw};
use crate::report::table::{Columns, Table, noise, num, times, under_csv};
use crate::saved::timeline::{CopyRates, Timeline};
use crate::saved::{
    DeviceInfo, LinkRates, MAX_STREAMS, Provenance, StageTimes, UsageError, Verification,
};
use crate::stats::Series;

/// The memcpy-kernel experiment.
pub struct MemcpyKernel;

/// Cycles values tried past the end of the range while looking for the breakeven point.
pub const MAX_EXTENSION_STEPS: usize = 256;

/// Parameters; defaults are the Handbook program's, with the book's 128 M ints.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Array size in M ints (2^20 ints each).
    #[arg(long, default_value_t = 128,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub size: usize,
    /// Cycles shmoo: START..=END (or one value), 0 or more.
    #[arg(long, default_value = "0..=4096", allow_negative_numbers = true)]
    pub cycles: IntRange,
    /// Step of the cycles shmoo.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(i64).range(1..=1_000_000))]
    pub cycles_step: i64,
    /// Streams shmoo: N or START..=END.
    #[arg(long, default_value = "8")]
    pub streams: IntRange,
    /// Step of the streams shmoo.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i64).range(1..=1_000_000))]
    pub streams_step: i64,
    /// Blocks per SM of each AddKernel launch (blocks = SMs × this).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub blocks_per_sm: u32,
    /// Threads per block.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// The value AddKernel adds, `cycles` times (may be negative).
    #[arg(long, default_value_t = 0xcc, allow_negative_numbers = true)]
    pub add_value: i32,
    /// Timed repetitions of each row; the sequential and streamed runs alternate.
    #[arg(long, default_value_t = 5,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub repeats: usize,
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
            size: 64,
            cycles: IntRange::new(0, 1024).expect("non-empty"),
            cycles_step: 256,
            repeats: 2,
            ..Params::default()
        }
    }

    /// The Handbook's 8 streams, and 32 streams: a deeper pipeline whose fill and drain
    /// are a quarter as long; cycles in steps of 128 over the Handbook's range, which
    /// keeps `run-all` within its five minutes.
    /// 8 and 32 streams (the Handbook's 8, and as many as the GPU has hardware queues),
    /// and cycles in steps of 128: the shmoo past breakeven in half the rows.
    const RUN_ALL: &'static [&'static str] = &[
        "--streams",
        "8..=32",
        "--streams-step",
        "24",
        "--cycles-step",
        "128",
    ];

    fn validate(&self) -> Result<(), UsageError> {
        if self.cycles.start() < 0 || self.cycles.end() > i64::from(i32::MAX / 2) {
            return Err(UsageError::new(format!(
                "--cycles {} is out of range: use values within 0..={}",
                self.cycles,
                i32::MAX / 2
            )));
        }
        let most = (MAX_STREAMS as u64).min(self.elements() as u64) as i64;
        if self.streams.start() < 1 || self.streams.end() > most {
            return Err(UsageError::new(format!(
                "--streams {} is out of range: use stream counts within 1..={most}",
                self.streams
            )));
        }
        Ok(())
    }
}

impl Params {
    /// Elements in the array.
    pub fn elements(&self) -> usize {
        self.size << 20
    }

    /// Bytes of the array, copied once each way per run.
    pub fn bytes(&self) -> u64 {
        (self.elements() * size_of::<i32>()) as u64
    }

    /// The stream counts measured, ascending.
    pub fn stream_counts(&self) -> Vec<usize> {
        (self.streams.values(self.streams_step))
            .map(|s| s as usize)
            .collect()
    }
}

/// One row of the Handbook's table: a cycles value at a stream count. The sequential
/// samples are shared by every stream count at the same cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyKernelRow {
    pub cycles: i32,
    pub streams: usize,
    pub htod: Series,
    pub kernel: Series,
    pub dtoh: Series,
    /// HtoD, kernel and DtoH one after another, timed as a whole.
    pub total: Series,
    /// The streamed version: all copies in, all kernels, all copies out.
    pub concurrent: Series,
    /// The streamed version's kernels alone, one chunk per stream, all at once.
    pub kernels: Series,
}

/// Result of memcpy-kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyKernelResult {
    pub params: Params,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    /// For each stream count, its chunks copied in alone, out alone and both ways at
    /// once.
    pub copies: Vec<StageTimes>,
    /// One row per (streams, cycles) measured, in the order measured.
    pub rows: Vec<MemcpyKernelRow>,
    pub verification: Verification,
    /// One streamed run traced, at the breakeven cycles (or the first) and the first
    /// stream count.
    pub timeline: Option<Timeline>,
}

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
    /// Rows under their bound as built, and of those how many beyond the two figures'
    /// noise ([`pipeline::Under`]).
    pub rows_under_bound: usize,
    pub rows_under_bound_beyond_noise: usize,
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
/// The kernels' fastest rate at `streams` streams, in ms per cycle (the streamed
/// version's kernels alone, over the rows whose cycles are at least the run's median: the
/// kernel's time there is its sums'), and how far that rate moved over those rows
/// ((slowest − fastest) / slowest): clocks move with load and temperature over a run.
pub fn kernel_rate(r: &MemcpyKernelResult, streams: usize) -> Option<(f64, f64)> {
    let mut cycles: Vec<i32> = r.rows.iter().map(|x| x.cycles).collect();
    cycles.sort_unstable();
    let median = *cycles.get(cycles.len() / 2)?;
    let rates: Vec<f64> = (r.rows.iter())
        .filter(|x| x.streams == streams && x.cycles >= median.max(1))
        .map(|x| x.kernels.min() / f64::from(x.cycles))
        .filter(|rate| rate.is_finite() && *rate > 0.0)
        .collect();
    let fastest = rates.iter().copied().reduce(f64::min)?;
    let slowest = rates.iter().copied().reduce(f64::max)?;
    Some((fastest, (slowest - fastest) / slowest))
}

fn analyze(r: &MemcpyKernelResult) -> MemcpyAnalysis {
    let link = own_link(r);
    let rows: Vec<MemcpyRow> = (r.rows.iter())
        .map(|row| {
            analyze_row(row, &r.copies, r.device.copy_engines, link.as_ref(), kernel_rate(r, row.streams))
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
    let (rows_under_bound, rows_under_bound_beyond_noise) =
        count_under(rows.iter().map(|r| r.bound.under));
    MemcpyAnalysis {
        rows_under_bound,
        rows_under_bound_beyond_noise,
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

/// One row against its bound. The kernels' term is the fastest of the whole array's
/// kernel, the streamed version's kernels alone, and the run's fastest per-cycle rate at
/// this stream count times the row's cycles ([`kernel_rate`]); the bound's noise is the
/// larger of its copies' noise and how far that rate moved over the run.
fn analyze_row(
    row: &MemcpyKernelRow,
    copies: &[StageTimes],
    copy_engines: i32,
    link: Option<&LinkRates>,
    rate: Option<(f64, f64)>,
) -> MemcpyRow {
    let at_rate = rate.map_or(f64::INFINITY, |(ms_per_cycle, _)| ms_per_cycle * f64::from(row.cycles));
    let kernel = row.kernel.min().min(row.kernels.min()).min(at_rate);
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
    let noise = chunks_noise(copies, row.streams).max(rate.map_or(0.0, |(_, moved)| moved));
    let bound = pipeline::bound(parts, row.streams, 1, copy_engines).held(
        concurrent_ms,
        row.concurrent.noise(),
        noise,
    );
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

/// memcpy-kernel's headline in `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpySummary {
    pub verified: bool,
    /// The stream count of the headline figures (the first measured; the Handbook's 8).
    pub num_streams: usize,
    /// The best speedup of any row, at any stream count.
    pub best_speedup: f64,
    pub best_speedup_streams: usize,
    pub best_speedup_cycles: i32,
    /// The first cycles value whose kernel outlasts both copies (medians).
    pub breakeven_cycles: Option<i32>,
    /// Speedup at the breakeven cycles with `num_streams` streams.
    pub speedup_at_breakeven: Option<f64>,
    /// The bound's speedup there: sequential total over the row's bound.
    pub bound_speedup_at_breakeven: Option<f64>,
    /// Rows that beat the bound built from the measured rates (each bound lowered to
    /// its row: a rate was under-measured).
    pub rows_beyond_bound: usize,
    /// Rows under their bound as built, and of those how many beyond the two figures'
    /// noise (absent from summaries written before rows were marked so).
    #[serde(default)]
    pub rows_under_bound: Option<usize>,
    #[serde(default)]
    pub rows_under_bound_beyond_noise: Option<usize>,
}

/// The one declaration of the tables (one per stream count) and the CSV (every row, the
/// Handbook's columns), the CUDA C++ twins' concurrent time beside the Rust one where
/// `cuda` ran.
fn columns(cuda: Option<&MemcpyAnalysis>) -> Columns<'_, MemcpyRow> {
    let ms = |x: f64| format!("{x:.4}");
    let cpp = move |x: &MemcpyRow| {
        (cuda?.rows.iter())
            .find(|y| y.streams == x.streams && y.cycles == x.cycles)
            .map(|y| y.concurrent_ms)
    };
    Columns::new()
        .raw("Streams", |x: &MemcpyRow| x.streams.to_string())
        .both(
            "Cycles",
            |x| x.cycles.to_string(),
            "Cycles",
            |x| x.cycles.to_string(),
        )
        .both(
            "HtoD",
            |x| num(x.htod_ms, 2),
            "HtoD",
            move |x| ms(x.htod_ms),
        )
        .both(
            "Kernel",
            |x| num(x.kernel_ms, 2),
            "Kernel",
            move |x| ms(x.kernel_ms),
        )
        .both(
            "DtoH",
            |x| num(x.dtoh_ms, 2),
            "DtoH",
            move |x| ms(x.dtoh_ms),
        )
        .both(
            "Total",
            |x| num(x.total_ms, 2),
            "Total",
            move |x| ms(x.total_ms),
        )
        .both(
            "Concurrent",
            |x| num(x.concurrent_ms, 2),
            "Concurrent",
            move |x| ms(x.concurrent_ms),
        )
        .both(
            "Noise",
            |x| noise(x.noise),
            "Noise",
            |x| format!("{:.4}", x.noise),
        )
        .both(
            "Speedup",
            |x| times(x.speedup),
            "Speedup",
            |x| format!("{:.3}", x.speedup),
        )
        .both(
            "Bound",
            |x| num(x.bound.ms, 2),
            "Bound",
            move |x| ms(x.bound.ms),
        )
        .both(
            "Bound speedup",
            |x| times(x.bound_speedup),
            "BoundSpeedup",
            |x| format!("{:.3}", x.bound_speedup),
        )
        .show("Efficiency", |x| num(x.efficiency, 3))
        .show("C++ Concurrent", move |x| {
            cpp(x).map_or("–".into(), |v| num(v, 2))
        })
        .both(
            "against its bound",
            |x| x.bound.mark(),
            "BeyondBound",
            |x| x.beyond_bound.to_string(),
        )
        .raw("UnderBound", |x| under_csv(x.bound.under))
}

/// memcpy-kernel: speedup against cycles per stream count beside its bound, and the
/// stage times of the headline stream count.
fn figures(a: &MemcpyAnalysis) -> Vec<FigureModel> {
    let mut speedup = blank(
        "memcpy-kernel: streamed speedup over sequential, and its bound (Rust kernels)".into(),
        "cycles",
        "speedup",
        XAxis::Linear,
        YScale::Linear,
    );
    for (i, &streams) in a.stream_counts.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let rows: Vec<_> = a.rows_with(streams).collect();
        speedup.lines.push(line(
            format!("{streams} streams"),
            color,
            false,
            rows.iter()
                .map(|r| (f64::from(r.cycles), r.speedup))
                .collect(),
        ));
        speedup.lines.push(line(
            format!("{streams} streams: bound"),
            color,
            true,
            rows.iter()
                .map(|r| (f64::from(r.cycles), r.bound_speedup))
                .collect(),
        ));
    }
    speedup.levels.push(Level {
        name: "no speedup".into(),
        color: SEQUENTIAL_COLOR,
        y: 1.0,
    });
    let mut stages = blank(
        format!(
            "memcpy-kernel: the parts and the streamed run, {} streams (medians)",
            a.headline_streams
        ),
        "cycles",
        "ms",
        XAxis::Linear,
        YScale::Linear,
    );
    let rows: Vec<_> = a.rows_with(a.headline_streams).collect();
    let series = [
        (
            "HtoD",
            PALETTE[0],
            false,
            (|r| r.htod_ms) as fn(&MemcpyRow) -> f64,
        ),
        ("kernel", PALETTE[2], false, |r| r.kernel_ms),
        ("DtoH", PALETTE[3], false, |r| r.dtoh_ms),
        ("sequential total", SEQUENTIAL_COLOR, false, |r| r.total_ms),
        ("streamed", PALETTE[4], false, |r| r.concurrent_ms),
        ("streamed bound", BOUND_COLOR, true, |r| r.bound.ms),
    ];
    for (name, color, dashed, value) in series {
        stages.lines.push(line(
            name,
            color,
            dashed,
            rows.iter()
                .map(|r| (f64::from(r.cycles), value(r)))
                .collect(),
        ));
    }
    vec![
        FigureModel::chart("memcpy-kernel-speedup.svg".into(), speedup),
        FigureModel::chart("memcpy-kernel-stages.svg".into(), stages),
    ]
}

impl Saved for MemcpyKernelResult {
    experiment::saved_fields!(Params);

    fn timelines(&self) -> Vec<&Timeline> {
        self.timeline.iter().collect()
    }

    fn stage_times(&self) -> Vec<&StageTimes> {
        self.copies.iter().collect()
    }
}

impl Experiment for MemcpyKernel {
    const NAME: &'static str = "memcpy-kernel";
    const USES_KERNEL_SETS: bool = true;
    type Params = Params;
    type Result = MemcpyKernelResult;
    type Derived = MemcpyAnalysis;

    fn rows(r: &MemcpyKernelResult, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        let mut rows = Vec::new();
        for x in &r.rows {
            let (key, label) = (
                format!("{}/{}", x.streams, x.cycles),
                format!("{} streams, {} cycles", x.streams, x.cycles),
            );
            rows.push(MeasuredRow::median(
                format!("{key}/sequential"),
                format!("{label}: sequential"),
                &x.total,
                MS,
            ));
            rows.push(MeasuredRow::median(
                format!("{key}/streamed"),
                format!("{label}: streamed"),
                &x.concurrent,
                MS,
            ));
        }
        rows.into_iter().map(MeasuredRow::over_link).collect()
    }

    fn derive(r: &MemcpyKernelResult, _checks: &[TraceChecks]) -> MemcpyAnalysis {
        analyze(r)
    }

    fn tables(
        _r: &MemcpyKernelResult,
        derived: &Self::Derived,
        cuda: Option<With<'_, Self>>,
    ) -> Vec<Table> {
        let a = derived;
        let c = cuda.map(|(_, d)| d);
        let columns = columns(c);
        (a.stream_counts.iter())
            .map(|&streams| {
                let rows: Vec<MemcpyRow> = a.rows_with(streams).cloned().collect();
                columns.table(
                    Some(format!(
                        "{streams} streams (medians, ms); efficiency = bound / concurrent"
                    )),
                    &rows,
                )
            })
            .collect()
    }

    fn csv(_r: &MemcpyKernelResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns(None).csv(&derived.rows))]
    }

    fn section(
        rust: &Analyzed<Self>,
        twin: Option<&Analyzed<Self>>,
    ) -> Result<Section, ReportError> {
        let (r, derived) = rust.with();
        let cuda = twin.map(Analyzed::with);
        let a = derived;
        let mut sec = rust.section("memcpy-kernel: the CUDA Handbook's copy/kernel concurrency", "AddKernel, whose run time grows with its cycles, between a copy in and a copy out of the whole array: first one after another (HtoD, Kernel, DtoH, Total), then split over the streams with the Handbook's three loops (Concurrent), the two alternating repeat by repeat so that drift hits both.");
        sec.note(
            "Copy engines",
            format!(
                "asyncEngineCount {}: copies in and out run on separate engines, beside kernels.",
                r.device.copy_engines
            ),
        );
        sec.tables = Self::tables(r, derived, cuda);
        sec.notes.push((
            "Bound".into(),
            "Per row: the largest of the HtoD engine's, the SMs' and the DtoH engine's busy time, and the bytes in plus out at the measured both-ways rate, plus the fill and drain of this one run (the first chunk's copy in and the last chunk's copy out). The copies' parts are timed over the row's own chunks, the kernel's part is the row's kernel alone. This is the reachable form of the Handbook's ideal, which lets both copies run at their one-way rates at once.".into(),
        ));
        let at = a.breakeven_row();
        sec.notes.push((
            "Result".into(),
            match (a.breakeven_cycles, at) {
                (Some(cycles), Some(x)) => format!(
                    "The kernel outlasts the longer copy from {cycles} cycles; there {} streams give {} against the bound's {} ({} of the bound).",
                    x.streams,
                    times(x.speedup),
                    times(x.bound_speedup),
                    num(x.efficiency, 3)
                ),
                _ => "The kernel never outlasted the copies in this range of cycles.".into(),
            },
        ));
        if a.rows_beyond_bound > 0 {
            sec.notes.push((
                "Flagged".into(),
                format!(
                    "{} row(s) beat the bound built from the measured rates: a rate was under-measured, and each such bound is lowered to its row.",
                    a.rows_beyond_bound
                ),
            ));
        }
        sec.notes
            .extend(cuda_note(cuda.map(|(c, _)| &c.provenance)));
        sec.figures = draw(figures(a));
        sec.timelines = rust.timelines()?;
        Ok(sec)
    }

    fn summary(r: &MemcpyKernelResult, derived: &Self::Derived) -> Summary {
        let a = derived;
        let best = a.best_row();
        let at = a.breakeven_row();
        let x = MemcpySummary {
            verified: r.verification.passed,
            num_streams: a.headline_streams,
            best_speedup: best.map_or(f64::NAN, |b| b.speedup),
            best_speedup_streams: best.map_or(0, |b| b.streams),
            best_speedup_cycles: best.map_or(0, |b| b.cycles),
            breakeven_cycles: a.breakeven_cycles,
            speedup_at_breakeven: at.map(|b| b.speedup),
            bound_speedup_at_breakeven: at.map(|b| b.bound_speedup),
            rows_beyond_bound: a.rows_beyond_bound,
            rows_under_bound: Some(a.rows_under_bound),
            rows_under_bound_beyond_noise: Some(a.rows_under_bound_beyond_noise),
        };
        let line = format!(
            "breakeven cycles {}, there {} streams {} of the bound's {}; {} rows beyond their bound{}; {}",
            x.breakeven_cycles
                .map_or("not reached".to_owned(), |c| c.to_string()),
            x.num_streams,
            x.speedup_at_breakeven.map_or("–".into(), times),
            x.bound_speedup_at_breakeven.map_or("–".into(), times),
            x.rows_beyond_bound,
            under_clause(
                "their bound",
                x.rows_under_bound,
                x.rows_under_bound_beyond_noise
            ),
            verdict(x.verified)
        );
        Summary::headline(&x, line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::Params as _;

    #[test]
    fn run_all_gives_the_options_it_states() {
        let p = Params::run_all();
        assert_eq!((p.streams.start(), p.streams.end()), (8, 32));
        assert_eq!((p.streams_step, p.cycles_step), (24, 128));
        let d = Params::default();
        assert_eq!(
            (d.streams.start(), d.streams.end(), d.cycles_step),
            (8, 8, 64)
        );
        assert_eq!(
            Params {
                streams: d.streams,
                streams_step: d.streams_step,
                cycles_step: d.cycles_step,
                ..p
            },
            d
        );
    }
}
