//! kernel-concurrency, after NVIDIA's simpleHyperQ and the CUDA Handbook's
//! concurrencyKernelKernel: how many kernels really run at once, with the driver's 8
//! hardware work queues and with 32.
//! How it measures, its bounds and its model are told in its words, `kernel_concurrency.md`.

use crate::experiments::prelude::*;

/// Kernels each stream runs, one after another (simpleHyperQ's kernel_A and kernel_B).
pub const KERNELS_PER_STREAM: usize = 2;

pub struct KernelConcurrency;

/// The most hardware work queues the driver offers (`CUDA_DEVICE_MAX_CONNECTIONS`).
pub const MAX_QUEUES: u32 = 32;

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// How long each kernel spins on the GPU's global timer, in microseconds.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub spin_us: u32,
    /// Stream counts, one kernel (one block) on each, comma separated.
    #[arg(long, value_delimiter = ',',
          default_value = "1,2,4,8,12,16,24,32,48,64,96,128",
          value_parser = crate::saved::count(MAX_STREAMS as u64))]
    pub stream_counts: Vec<usize>,
    /// Hardware work queues to try, each in its own process (the driver reads
    /// CUDA_DEVICE_MAX_CONNECTIONS once, when it starts), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "8,32",
          value_parser = clap::value_parser!(u32).range(1..=MAX_QUEUES as i64))]
    pub queues: Vec<u32>,
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<5>,
    /// Internal: measure as the worker of one queue setting and print the result as JSON.
    #[arg(long, hide = true, value_parser = clap::value_parser!(u32).range(1..=MAX_QUEUES as i64))]
    #[serde(skip)]
    pub worker_queues: Option<u32>,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--spin-us 200 --stream-counts 1,2,4,8,16,32 --repeats 2";
}

/// One stream count with one queue setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConcurrencyPoint {
    pub streams: usize,
    /// Two kernels on each stream (the second after the first), all streams at once.
    pub concurrent: Series,
    /// The same kernels one after another on one stream.
    pub serial: Series,
}

/// Every stream count measured in one process with `queues` hardware queues.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueRun {
    pub queues: u32,
    /// One spin kernel alone on one stream.
    pub single: Series,
    pub points: Vec<ConcurrencyPoint>,
    pub verification: crate::saved::Verification,
    /// The 32-stream case traced (or the largest count below it).
    pub timeline: Option<Timeline>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelConcurrencyResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// How many grids the GPU runs at once at most (128 from compute capability 9.0).
    pub max_resident_grids: u32,
    pub runs: Vec<QueueRun>,
}

/// Relative distance within which measured waves "match" the model.
pub const WAVES_TOLERANCE: f64 = 0.15;

/// One stream count with one queue setting (milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConcurrencyRow {
    pub queues: u32,
    pub streams: usize,
    /// Its serial and concurrent samples.
    #[serde(skip)]
    pub point: ConcurrencyPoint,
    /// serial / concurrent.
    pub speedup: f64,
    /// The model's waves: `ceil(streams / min(queues, resident grids)) + 1`.
    pub model_waves: usize,
    /// concurrent / one kernel alone.
    pub measured_waves: f64,
    /// model waves × one kernel alone.
    pub expected_concurrent_ms: f64,
    /// model waves × the spin time each kernel is held to: no run can be faster.
    pub bound_ms: f64,
    /// The concurrent median over its bound.
    pub over_bound: f64,
    /// Measured waves within [`WAVES_TOLERANCE`] of the model.
    pub matches_model: bool,
    /// Where the concurrent time sits under its bound (exact: the GPU's clock holds the
    /// spin time), within or beyond its noise; none at or over it: under it, one is wrong.
    pub under: Option<Under>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConcurrencyAnalysis {
    pub rows: Vec<ConcurrencyRow>,
}

impl ConcurrencyAnalysis {
    pub fn row(&self, queues: u32, streams: usize) -> Option<&ConcurrencyRow> {
        (self.rows.iter()).find(|r| r.queues == queues && r.streams == streams)
    }
}

/// `ceil(streams / min(queues, resident)) + 1`: the busiest queue's waves.
pub fn model_waves(streams: usize, queues: u32, resident: u32) -> usize {
    streams.div_ceil(queues.min(resident).max(1) as usize) + KERNELS_PER_STREAM - 1
}

/// A queue setting's row name, above its stream counts'.
fn queue_row(queues: u32) -> RowName {
    RowName::new(format_args!("q{queues}"), format_args!("{queues} queues"))
}

/// The one declaration of the table and the CSV: a row per queue setting and stream
/// count.
fn columns<'a>() -> Columns<'a, ConcurrencyRow> {
    Columns::<ConcurrencyRow>::new()
        .text("queues", "queues", |x| x.queues.to_string())
        .text("streams", "streams", |x| x.streams.to_string())
        .named(
            |x| {
                let s = x.streams;
                queue_row(x.queues).then(format_args!("s{s}"), format_args!("{s} streams"))
            },
            |_, _, row| row,
        )
        .median(
            ("serial", "serial_ms"),
            (3, 4),
            (Some(("serial", "serial")), MS),
            |x| Some(&x.point.serial),
        )
        .noise_of("serial noise", "serial_noise")
        .median(
            ("concurrent", "concurrent_ms"),
            (3, 4),
            (Some(("concurrent", "concurrent")), MS),
            |x| Some(&x.point.concurrent),
        )
        .noise_of("concurrent noise", "concurrent_noise")
        .times("speedup", "speedup", 3, |x| x.speedup)
        .text("model waves", "model_waves", |x| x.model_waves.to_string())
        .number("waves", "measured_waves", (2, 3), |x| x.measured_waves)
        .show("model", |x| num(x.expected_concurrent_ms, 3))
        .number("bound", "bound_ms", (3, 4), |x| x.bound_ms)
        .show("matches model", |x| yes_no(x.matches_model).into())
        .show("against its bound", |x| {
            crate::derived::pipeline::bound_cell(x.under.map(|u| u.label().to_owned()))
        })
}

impl Saved for KernelConcurrencyResult {
    experiment::saved_fields!(Params);

    fn timelines(&self) -> Vec<&Timeline> {
        let runs = self.runs.iter();
        runs.filter_map(|r| r.timeline.as_ref()).collect()
    }
}

impl Experiment for KernelConcurrency {
    const NAME: &'static str = "kernel-concurrency";
    const WORDS: &'static str = include_str!("kernel_concurrency.md");
    type Params = Params;
    type Result = KernelConcurrencyResult;
    type Derived = ConcurrencyAnalysis;

    fn rows(r: &KernelConcurrencyResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        // One kernel alone per queue setting, then its stream counts'.
        let mut rows = Vec::new();
        for run in &r.runs {
            let single = queue_row(run.queues).then("single", "one kernel alone");
            rows.push(single.median(&run.single, MS));
            let points = derived.rows.iter().filter(|x| x.queues == run.queues);
            rows.extend(columns().measured_rows(points));
        }
        rows
    }

    fn derive(r: &KernelConcurrencyResult, _checks: &[TraceChecks]) -> ConcurrencyAnalysis {
        let spin_ms = f64::from(r.run.params.spin_us) / 1e3;
        let mut rows = Vec::new();
        for run in &r.runs {
            let single = run.single.median();
            for p in &run.points {
                let waves = model_waves(p.streams, run.queues, r.max_resident_grids);
                let (serial_ms, concurrent_ms) = (p.serial.median(), p.concurrent.median());
                let measured_waves = concurrent_ms / single;
                let bound_ms = waves as f64 * spin_ms;
                rows.push(ConcurrencyRow {
                    queues: run.queues,
                    streams: p.streams,
                    point: p.clone(),
                    speedup: serial_ms / concurrent_ms,
                    model_waves: waves,
                    measured_waves,
                    expected_concurrent_ms: waves as f64 * single,
                    bound_ms,
                    over_bound: concurrent_ms / bound_ms,
                    matches_model: (measured_waves / waves as f64 - 1.0).abs() <= WAVES_TOLERANCE,
                    under: Under::of(bound_ms, 0.0, concurrent_ms, p.concurrent.noise()),
                });
            }
        }
        ConcurrencyAnalysis { rows }
    }

    fn tables(_r: &Self::Result, derived: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        let most = derived.rows.iter().map(|x| x.streams).max();
        // Each queue setting at its most streams, and every row off its model or bound.
        let shown =
            |x: &ConcurrencyRow| Some(x.streams) == most || !x.matches_model || x.under.is_some();
        vec![columns().keyed(Some("medians, ms".into()), &derived.rows, shown)]
    }

    fn csv(_r: &KernelConcurrencyResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(&derived.rows))]
    }

    /// Time for every stream's kernels against the stream count, per queue setting, with
    /// the wave model and the serial time.
    fn figures(r: &KernelConcurrencyResult, a: &Self::Derived) -> Vec<FigureModel> {
        let curve = |queues: u32, ms: fn(&ConcurrencyRow) -> f64| {
            let at = a.rows.iter().filter(|r| r.queues == queues);
            at.map(|r| (r.streams as f64, ms(r))).collect()
        };
        let spin_us = r.run.params.spin_us;
        let title = format!("kernel-concurrency: kernels of {spin_us} µs, two per stream");
        let mut chart = blank(title, "streams", "ms", XAxis::Log, YScale::Log);
        let queues = r.runs.iter().map(|q| q.queues);
        chart.lines = (queues.zip(PALETTE.into_iter().cycle()))
            .flat_map(|(q, color)| {
                let measured = curve(q, |r| r.point.concurrent.median());
                let model = curve(q, |r| r.expected_concurrent_ms);
                [
                    line(format!("{q} queues: measured"), color, false, measured),
                    line(format!("{q} queues: wave model"), color, true, model),
                ]
            })
            .collect();
        if let Some(first) = r.runs.first() {
            let serial = curve(first.queues, |r| r.point.serial.median());
            (chart.lines).push(line("serial (measured)", SEQUENTIAL_COLOR, false, serial));
        }
        vec![FigureModel::chart("kernel-concurrency.svg".into(), chart)]
    }

    fn summary(r: &KernelConcurrencyResult, a: &Self::Derived) -> Summary {
        let eight: Vec<_> = a.rows.iter().filter(|x| x.queues == 8).collect();
        let at_32 = a.row(32, 32);
        let headline = json!({
            "verified": r.run.verification.passed,
            "speedup_32_streams_32_queues": at_32.map(|x| x.speedup),
            "waves_match_model_8_queues": (!eight.is_empty())
                .then(|| eight.iter().all(|x| x.matches_model)),
        });
        Summary::of(&headline).with(Overview {
            over_bound: at_32.map(|x| (x.over_bound, format!("at {} streams", x.streams))),
            ..Overview::default()
        })
    }

    fn words(r: &KernelConcurrencyResult, a: &Self::Derived) -> Value {
        context! {
            grids => r.max_resident_grids,
            sms => r.run.device.sm_count,
            tolerance => WAVES_TOLERANCE,
            per_stream => KERNELS_PER_STREAM,
            at_32 => a.row(32, 32).map(Serde),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waves_follow_the_queues_and_the_resident_grid_limit() {
        assert_eq!(model_waves(8, 8, 128), 2);
        assert_eq!(model_waves(16, 8, 128), 3);
        assert_eq!(model_waves(17, 8, 128), 4);
        assert_eq!(model_waves(32, 32, 128), 2);
        assert_eq!(model_waves(128, 32, 128), 5);
        assert_eq!(model_waves(256, 512, 128), 3);
    }
}
