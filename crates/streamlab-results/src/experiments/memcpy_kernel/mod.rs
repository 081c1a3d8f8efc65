//! memcpy-kernel, after the CUDA Handbook's concurrencyMemcpyKernel: AddKernel between a
//! copy in and a copy out of the whole array, one after another against split over
//! streams, across a sweep of kernel cycles; per row the speedup, its reachable bound,
//! the efficiency, and the breakeven where the kernel outlasts the copies.
//! How it measures, its bounds and its model are told in its words, `memcpy_kernel.md`.
use crate::derived::rates::for_chunks;
use crate::experiments::prelude::*;
use crate::range::IntRange;
use crate::report::table::under_csv;

/// The memcpy-kernel experiment.
pub struct MemcpyKernel;

/// Parameters; defaults are the Handbook program's, with the book's 128 M ints.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Array size in M ints (2^20 ints each).
    #[arg(long, default_value_t = 128, value_parser = crate::saved::count(4096))]
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
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<5>,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--size 64 --cycles 0..=1024 --cycles-step 256 --repeats 2";

    /// 8 and 32 streams (the Handbook's 8, and as many as the GPU has hardware queues),
    /// and cycles in steps of 128: the shmoo past breakeven in half the rows.
    const RUN_ALL: &'static str = "--streams 8..=32 --streams-step 24 --cycles-step 128";

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

impl MemcpyKernelRow {
    /// Whether its kernel outlasts both its copies (medians): the breakeven is the first
    /// cycles value where the first stream count's row does (read by the run, which
    /// extends the range until then, and by the analysis, which finds it).
    pub fn outlasts_the_copies(&self) -> bool {
        self.kernel.median() > self.htod.median().max(self.dtoh.median())
    }
}

/// Result of memcpy-kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyKernelResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// Each stream count's chunks copied in alone, out alone and both ways at once.
    pub copies: Vec<StageTimes>,
    /// One row per (streams, cycles) measured, in the order measured.
    pub rows: Vec<MemcpyKernelRow>,
    /// One streamed run traced: the first stream count at the breakeven (or first) cycles.
    pub timeline: Option<Timeline>,
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
    const WORDS: &'static str = include_str!("../memcpy_kernel.md");
    type Params = Params;
    type Result = MemcpyKernelResult;
    type Derived = MemcpyAnalysis;

    fn rows(_r: &MemcpyKernelResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        columns(None).measured_rows(&derived.rows)
    }

    fn derive(r: &MemcpyKernelResult, _checks: &[TraceChecks]) -> MemcpyAnalysis {
        let link = own_link(r);
        let rows: Vec<MemcpyRow> = (r.rows.iter())
            .map(|row| analyze_row(r, row, link.as_ref()))
            .collect();
        let mut seen = std::collections::HashSet::new();
        let stream_counts: Vec<usize> = (rows.iter().map(|x| x.streams))
            .filter(|&s| seen.insert(s))
            .collect();
        let headline_streams = stream_counts.first().copied().unwrap_or(0);
        let at_breakeven = (0..rows.len())
            .filter(|&i| rows[i].streams == headline_streams && rows[i].saved.outlasts_the_copies())
            .min_by_key(|&i| rows[i].cycles);
        let best = (0..rows.len())
            .filter(|&i| rows[i].speedup.is_finite())
            .max_by(|&i, &j| rows[i].speedup.total_cmp(&rows[j].speedup));
        MemcpyAnalysis {
            rates: for_chunks(&r.copies, headline_streams)
                .map_or(CopyRates::UNMEASURED, best_rates),
            stream_counts,
            rows,
            headline_streams,
            at_breakeven,
            best,
        }
    }

    fn tables(_r: &Self::Result, a: &Self::Derived, cuda: Option<With<Self>>) -> Vec<Table> {
        let columns = columns(cuda.map(|(_, d)| d));
        (a.stream_counts.iter().copied())
            .map(|streams| {
                let rows: Vec<MemcpyRow> =
                    (a.rows.iter().filter(|x| x.streams == streams).cloned()).collect();
                let best = (rows.iter().map(|x| x.speedup)).fold(f64::NEG_INFINITY, f64::max);
                let ends = [rows.first(), rows.last()].map(|x| x.map(|x| x.cycles));
                let breakeven = a.at_breakeven.map(|i| a.rows[i].cycles);
                let caption =
                    format!("{streams} streams (medians, ms); efficiency = bound / concurrent");
                // The ends, the breakeven, the best, and every row its bound marks.
                columns.keyed(Some(caption), &rows, |x| {
                    [breakeven, ends[0], ends[1]].contains(&Some(x.cycles))
                        || x.speedup == best
                        || !x.bound.mark().is_empty()
                })
            })
            .collect()
    }

    fn csv(_r: &MemcpyKernelResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns(None).csv(&derived.rows))]
    }

    fn words(r: &MemcpyKernelResult, a: &Self::Derived) -> Value {
        context! {
            copy_engines => r.run.device.copy_engines,
            at => a.at_breakeven.map(|i| Serde(&a.rows[i])),
        }
    }

    /// memcpy-kernel: speedup against cycles per stream count beside its bound, and the
    /// stage times of the headline stream count.
    fn figures(_r: &MemcpyKernelResult, a: &Self::Derived) -> Vec<FigureModel> {
        let mut speedup = blank(
            "memcpy-kernel: streamed speedup over sequential, and its bound (Rust kernels)".into(),
            "cycles",
            "speedup",
            XAxis::Linear,
            YScale::Linear,
        );
        for (i, &streams) in a.stream_counts.iter().enumerate() {
            let rows: Vec<_> = a.rows.iter().filter(|x| x.streams == streams).collect();
            let color = PALETTE[i % PALETTE.len()];
            let (gained, bound) = (
                by_cycles(&rows, |r| r.speedup),
                by_cycles(&rows, |r| r.bound_speedup),
            );
            let lines = &mut speedup.lines;
            lines.push(line(format!("{streams} streams"), color, false, gained));
            lines.push(line(
                format!("{streams} streams: bound"),
                color,
                true,
                bound,
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
        let rows: Vec<_> = (a.rows.iter())
            .filter(|x| x.streams == a.headline_streams)
            .collect();
        type Stage = fn(&MemcpyKernelRow) -> &Series;
        let series: [(&str, _, bool, Stage); 5] = [
            ("HtoD", PALETTE[0], false, |r| &r.htod),
            ("kernel", PALETTE[2], false, |r| &r.kernel),
            // Dashed, so that HtoD shows where the two copies take the same time.
            ("DtoH", PALETTE[3], true, |r| &r.dtoh),
            ("sequential total", SEQUENTIAL_COLOR, false, |r| &r.total),
            ("streamed", PALETTE[4], false, |r| &r.concurrent),
        ];
        let lines = &mut stages.lines;
        for (name, color, dashed, s) in series {
            let medians = by_cycles(&rows, |r| s(&r.saved).median());
            lines.push(line(name, color, dashed, medians));
        }
        let bound = by_cycles(&rows, |r| r.bound.ms);
        lines.push(line("streamed bound", BOUND_COLOR, true, bound));
        vec![
            FigureModel::chart("memcpy-kernel-speedup.svg".into(), speedup),
            FigureModel::chart("memcpy-kernel-stages.svg".into(), stages),
        ]
    }

    fn summary(r: &MemcpyKernelResult, a: &Self::Derived) -> Summary {
        let [best, at] = [a.best, a.at_breakeven].map(|i| i.map(|i| &a.rows[i]));
        let (under, under_beyond) = pipeline::count_under(a.rows.iter().map(|r| r.bound.under));
        let headline = json!({
            "verified": r.run.verification.passed,
            // The headline figures' stream count (the first measured; the Handbook's 8).
            "num_streams": a.headline_streams,
            "best_speedup": best.map_or(f64::NAN, |b| b.speedup),
            "best_speedup_streams": best.map_or(0, |b| b.streams),
            "best_speedup_cycles": best.map_or(0, |b| b.cycles),
            "breakeven_cycles": at.map(|b| b.cycles),
            "speedup_at_breakeven": at.map(|b| b.speedup),
            "bound_speedup_at_breakeven": at.map(|b| b.bound_speedup),
            "rows_beyond_bound": a.rows.iter().filter(|r| r.bound.lowered()).count(),
            "rows_under_bound": under,
            "rows_under_bound_beyond_noise": under_beyond,
        });
        Summary::of(&headline).with(Overview {
            over_bound: at.map(|at| {
                let over_bound = at.bound_speedup / at.speedup;
                (over_bound, format!("at {} cycles", at.cycles))
            }),
            ..Overview::default()
        })
    }
}

/// One row against its bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemcpyRow {
    pub cycles: i32,
    pub streams: usize,
    /// total / concurrent (medians).
    pub speedup: f64,
    pub bound: Bound,
    /// total / bound: the most the streamed version can gain.
    pub bound_speedup: f64,
    /// bound / concurrent.
    pub efficiency: f64,
    /// The saved row: its stages' and its two versions' samples.
    #[serde(skip)]
    pub saved: MemcpyKernelRow,
}

/// Everything derived from a memcpy-kernel result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemcpyAnalysis {
    /// The copy rates over the headline stream count's chunks.
    pub rates: CopyRates,
    /// The stream counts measured, in the order the run measured them.
    pub stream_counts: Vec<usize>,
    pub rows: Vec<MemcpyRow>,
    /// The stream count of the headline (the first measured).
    pub headline_streams: usize,
    /// Index into `rows` of the breakeven: the headline stream count's row of the first
    /// cycles value whose kernel outlasts both copies (medians).
    pub at_breakeven: Option<usize>,
    /// Index into `rows` of the best speedup.
    pub best: Option<usize>,
}

/// The kernels' fastest rate at `streams` streams, in ms per cycle (the streamed
/// version's kernels alone, over the rows whose cycles are at least the run's median: the
/// kernel's time there is its sums'), and how far that rate moved over those rows
/// ((slowest − fastest) / slowest): clocks move with load and temperature over a run.
fn kernel_rate(r: &MemcpyKernelResult, streams: usize) -> Option<(f64, f64)> {
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

/// One row against its bound. The kernels' term is the fastest of the whole array's
/// kernel, the streamed version's kernels alone, and the run's fastest per-cycle rate at
/// this stream count times the row's cycles ([`kernel_rate`]); the bound's noise is the
/// larger of its copies' noise and how far that rate moved over the run.
fn analyze_row(
    r: &MemcpyKernelResult,
    row: &MemcpyKernelRow,
    link: Option<&LinkRates>,
) -> MemcpyRow {
    let (copies, rate) = (&r.copies, kernel_rate(r, row.streams));
    let at_rate = rate.map_or(f64::INFINITY, |(ms_per_cycle, _)| {
        ms_per_cycle * f64::from(row.cycles)
    });
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
    let bound = pipeline::bound(parts, row.streams, 1, r.run.device.copy_engines).held(
        concurrent_ms,
        row.concurrent.noise(),
        noise,
    );
    MemcpyRow {
        cycles: row.cycles,
        streams: row.streams,
        speedup: total_ms / concurrent_ms,
        bound,
        bound_speedup: total_ms / bound.ms,
        efficiency: bound.ms / concurrent_ms,
        saved: row.clone(),
    }
}

/// The one declaration of the tables (one per stream count) and the CSV (every row, the
/// Handbook's columns), the CUDA C++ twins' concurrent time beside the Rust one where
/// `cuda` ran.
fn columns(cuda: Option<&MemcpyAnalysis>) -> Columns<'_, MemcpyRow> {
    let cpp = move |x: &MemcpyRow| {
        (cuda?.rows.iter())
            .find(|y| y.streams == x.streams && y.cycles == x.cycles)
            .map(|y| y.saved.concurrent.median())
    };
    Columns::new()
        .named(
            |x: &MemcpyRow| {
                RowName::new(
                    format_args!("{}/{}", x.streams, x.cycles),
                    format_args!("{} streams, {} cycles", x.streams, x.cycles),
                )
            },
            |_, _, row| row.over_link(),
        )
        .raw("Streams", |x: &MemcpyRow| x.streams.to_string())
        .text("Cycles", "Cycles", |x| x.cycles.to_string())
        .number("HtoD", "HtoD", (2, 4), |x| x.saved.htod.median())
        .number("Kernel", "Kernel", (2, 4), |x| x.saved.kernel.median())
        .number("DtoH", "DtoH", (2, 4), |x| x.saved.dtoh.median())
        .median(
            ("Total", "Total"),
            (2, 4),
            (Some(("sequential", "sequential")), MS),
            |x| Some(&x.saved.total),
        )
        .median(
            ("Concurrent", "Concurrent"),
            (2, 4),
            (Some(("streamed", "streamed")), MS),
            |x| Some(&x.saved.concurrent),
        )
        .noise_of("Noise", "Noise")
        .times("Speedup", "Speedup", 3, |x| x.speedup)
        .number("Bound", "Bound", (2, 4), |x| x.bound.ms)
        .times("Bound speedup", "BoundSpeedup", 3, |x| x.bound_speedup)
        .show("Efficiency", |x| num(x.efficiency, 3))
        .then(cuda.is_some(), |c| {
            c.show("C++ Concurrent", move |x| {
                num(cpp(x).unwrap_or(f64::NAN), 2)
            })
        })
        .both(
            "against its bound",
            |x| x.bound.cell(),
            "BeyondBound",
            |x| x.bound.lowered().to_string(),
        )
        .raw("UnderBound", |x| under_csv(x.bound.under))
}

/// Each row's (cycles, `y`), a line's points.
fn by_cycles(rows: &[&MemcpyRow], y: impl Fn(&MemcpyRow) -> f64) -> Vec<(f64, f64)> {
    rows.iter().map(|r| (f64::from(r.cycles), y(r))).collect()
}

#[cfg(test)]
mod tests;
