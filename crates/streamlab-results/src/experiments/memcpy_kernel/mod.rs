//! memcpy-kernel, after the CUDA Handbook's concurrencyMemcpyKernel: AddKernel between a
//! copy in and a copy out of the whole array, one after another against split over
//! streams, across a sweep of kernel cycles; per row the speedup, its reachable bound,
//! the efficiency, and the breakeven where the kernel outlasts the copies.
//! How it measures, its bounds and its model are told in its words, `memcpy_kernel.md`.
use crate::experiments::prelude::*;
mod analysis;
mod present;

use analysis::analyze;
pub use analysis::{MemcpyAnalysis, MemcpyRow};
use present::{columns, figures};

use crate::range::IntRange;

/// The memcpy-kernel experiment.
pub struct MemcpyKernel;

/// Cycles values tried past the end of the range while looking for the breakeven point.
pub const MAX_EXTENSION_STEPS: usize = 256;

/// Whether a row's kernel outlasts both its copies: the breakeven is the first cycles
/// value where the first stream count's row does (read by the run, which extends the
/// range until then, and by the analysis, which finds it).
pub fn outlasts_the_copies(kernel_ms: f64, htod_ms: f64, dtoh_ms: f64) -> bool {
    kernel_ms > htod_ms.max(dtoh_ms)
}

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

/// Result of memcpy-kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemcpyKernelResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// For each stream count, its chunks copied in alone, out alone and both ways at
    /// once.
    pub copies: Vec<StageTimes>,
    /// One row per (streams, cycles) measured, in the order measured.
    pub rows: Vec<MemcpyKernelRow>,
    /// One streamed run traced, at the breakeven cycles (or the first) and the first
    /// stream count.
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
        analyze(r)
    }

    fn tables(_r: &Self::Result, a: &Self::Derived, cuda: Option<With<Self>>) -> Vec<Table> {
        let columns = columns(cuda.map(|(_, d)| d));
        (a.stream_counts.iter())
            .map(|&streams| {
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

    fn figures(_r: &MemcpyKernelResult, a: &Self::Derived) -> Vec<FigureModel> {
        figures(a)
    }

    fn summary(r: &MemcpyKernelResult, a: &Self::Derived) -> Summary {
        let [best, at] = [a.best, a.at_breakeven].map(|i| i.map(|i| &a.rows[i]));
        let (under, under_beyond) = pipeline::count_under(a.rows.iter().map(|r| r.bound.under));
        let headline = json!({
            "verified": r.run.verification.passed,
            // The stream count of the headline figures (the first measured; the
            // Handbook's 8).
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

#[cfg(test)]
mod tests;
