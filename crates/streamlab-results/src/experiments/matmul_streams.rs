//! matmul-streams, after the "CUDA streams" wiki page: independent naive matrix
//! products over 1..=n streams, each trial the time for all of them; per stream count
//! the speedup over one stream and the tasks-per-stream model.

use crate::experiments::prelude::*;
use crate::report::table::ratio;

pub struct MatmulStreams;

/// Parameters; defaults are the wiki's.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Rows of each output matrix.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub rows: u32,
    /// Columns of each output matrix.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub cols: u32,
    /// The inner (aligned) dimension of each product (at most 2^24, so that the sum of
    /// ones is exact in f32).
    #[arg(long, default_value_t = 131_072,
          value_parser = clap::value_parser!(u32).range(1..=1 << 24))]
    pub aligned: u32,
    /// Side of the square thread block (block² threads).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub block: u32,
    /// Products, and the largest stream count.
    #[arg(long, default_value_t = 16, value_parser = crate::saved::count(MAX_STREAMS as u64))]
    pub max_streams: usize,
    /// Trials (rows of the CSV); up to three times as many while a stream count's noise
    /// is above 1%.
    #[arg(long, default_value_t = 20, value_parser = crate::saved::count(1_000_000))]
    pub trials: usize,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--aligned 32768 --trials 3";

    fn validate(&self) -> Result<(), UsageError> {
        let [r, c, k] = [self.rows, self.cols, self.aligned].map(u64::from);
        if r * k > u64::from(u32::MAX) || k * c > u64::from(u32::MAX) {
            return Err(UsageError::new(format!(
                "--rows {} × --aligned {} × --cols {} makes matrices of more than 2^32 elements: use smaller sizes",
                self.rows, self.aligned, self.cols
            )));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatmulStreamsResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// `trials_ms[trial][s - 1]`: time for all products with `s` streams in that trial.
    pub trials_ms: Vec<Vec<f64>>,
    /// One iteration with every stream in use, traced.
    pub timeline: Option<Timeline>,
}

/// One stream count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatmulPoint {
    pub streams: usize,
    /// The time for all products in each trial.
    pub time: Series,
    /// One-stream median over this median.
    pub speedup: f64,
    /// `ceil(products / streams)`: the most products any one stream runs.
    pub tasks_per_stream: usize,
    /// The model's time.
    pub model_ms: f64,
}

/// `ceil(products / streams)`.
pub fn tasks_per_stream(products: usize, streams: usize) -> usize {
    products.div_ceil(streams.max(1))
}

/// The one declaration of the table: a row per stream count, the CUDA C++ twins' median
/// beside the Rust one where `cuda` ran. (The CSV is the wiki's layout: [`wiki_csv`].)
fn columns(cuda: Option<&[MatmulPoint]>) -> Columns<'_, MatmulPoint> {
    let cpp = move |x: &MatmulPoint| {
        let twin = cuda?.iter().find(|y| y.streams == x.streams);
        twin.map(|y| y.time.median())
    };
    Columns::<MatmulPoint>::new()
        .text("streams", "streams", |x| x.streams.to_string())
        .named(
            |x| RowName::new(x.streams, format_args!("{} streams", x.streams)),
            |_, _, row| row,
        )
        .median(("median", "median_ms"), (3, 4), (None, MS), |x| {
            Some(&x.time)
        })
        .noise_of("noise", "noise")
        .number("min", "min_ms", (3, 4), |x| x.time.min())
        .number("max", "max_ms", (3, 4), |x| x.time.summary.max)
        .times("speedup", "speedup", 3, |x| x.speedup)
        .text("tasks per stream", "tasks_per_stream", |x| {
            x.tasks_per_stream.to_string()
        })
        .number("model", "model_ms", (3, 4), |x| x.model_ms)
        .then(cuda.is_some(), |c| {
            c.show("C++ median", move |x| num(cpp(x).unwrap_or(f64::NAN), 3))
                .show("Rust / C++", move |x| ratio(x.time.median(), cpp(x)))
        })
}

/// The wiki's CSV: header `1 Stream,2 Streams,…`, one row per trial, milliseconds.
fn wiki_csv(r: &MatmulStreamsResult) -> String {
    let header = (1..=r.run.params.max_streams)
        .map(|s| format!("{s} Stream{}", if s == 1 { "" } else { "s" }));
    let trials = (r.trials_ms.iter()).map(|t| t.iter().map(|t| format!("{t:.4}")).collect());
    (std::iter::once(header.collect::<Vec<_>>()).chain(trials))
        .map(|cells| cells.join(",") + "\n")
        .collect()
}

impl Saved for MatmulStreamsResult {
    experiment::saved_fields!(Params);

    fn timelines(&self) -> Vec<&Timeline> {
        self.timeline.iter().collect()
    }
}

impl Experiment for MatmulStreams {
    const NAME: &'static str = "matmul-streams";
    const USES_KERNEL_SETS: bool = true;
    const WORDS: &'static str = include_str!("matmul_streams.md");
    type Params = Params;
    type Result = MatmulStreamsResult;
    /// A point per stream count.
    type Derived = Vec<MatmulPoint>;

    fn rows(_r: &MatmulStreamsResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        columns(None).measured_rows(derived)
    }

    /// Stream counts whose column holds a non-finite time are left out.
    fn derive(r: &MatmulStreamsResult, _checks: &[TraceChecks]) -> Vec<MatmulPoint> {
        let products = r.run.params.max_streams;
        let time = |s: usize| {
            let column = r.trials_ms.iter().filter_map(|t| t.get(s - 1));
            Series::new(column.copied().collect())
        };
        let one = time(1).as_ref().map(Series::median);
        (1..=products)
            .filter_map(|s| {
                let (time, one) = (time(s)?, one?);
                let tasks = tasks_per_stream(products, s);
                Some(MatmulPoint {
                    streams: s,
                    speedup: one / time.median(),
                    tasks_per_stream: tasks,
                    model_ms: one * tasks as f64 / products as f64,
                    time,
                })
            })
            .collect()
    }

    fn tables(_r: &Self::Result, derived: &Self::Derived, cuda: Option<With<Self>>) -> Vec<Table> {
        let c = cuda.map(|(_, d)| d.as_slice());
        vec![columns(c).table(Some("ms for all products".into()), derived)]
    }

    fn csv(r: &MatmulStreamsResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![
            Csv::main(wiki_csv(r)),
            Csv::extra("medians", columns(None).csv(derived)),
        ]
    }

    /// Median time per stream count with whiskers over the trials, and the
    /// tasks-per-stream model.
    fn figures(r: &MatmulStreamsResult, a: &Self::Derived) -> Vec<FigureModel> {
        let products = r.run.params.max_streams;
        let title = format!(
            "matmul-streams: {products} products spread over 1..{products} streams (Rust kernels)"
        );
        let streams = XAxis::Categories(a.iter().map(|p| p.streams.to_string()).collect());
        let y = "ms for all products";
        let mut chart = blank(title, "streams", y, streams, YScale::Linear);
        let medians = a.iter().map(|p| p.time.median()).collect();
        let whiskers = Some(
            a.iter()
                .map(|p| (p.time.min(), p.time.summary.max))
                .collect(),
        );
        let measured = "measured (median, whiskers min–max)";
        chart.bars = vec![bars(measured, PALETTE[0], medians, whiskers)];
        let model = (a.iter().enumerate()).map(|(i, p)| (i as f64, p.model_ms));
        let model_name = "model: tasks per stream × one product";
        chart.lines = vec![line(model_name, BOUND_COLOR, true, model.collect())];
        vec![FigureModel::chart("matmul-streams.svg".into(), chart)]
    }

    fn summary(r: &MatmulStreamsResult, a: &Self::Derived) -> Summary {
        let noise = (a.iter()).map(|p| (format!("{} streams", p.streams), p.time.noise()));
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "ms_by_streams": a.iter().map(|p| p.time.median()).collect::<Vec<_>>(),
            "speedup_max_streams": a.last().map_or(f64::NAN, |p| p.speedup),
            "above_noise_target": stats::above_noise_target(&noise.collect::<Vec<_>>()),
        }))
    }

    fn words(_r: &MatmulStreamsResult, _a: &Self::Derived) -> Value {
        context! { noise_target => stats::NOISE_TARGET }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_per_stream_gives_the_wiki_plateaus() {
        let tasks: Vec<usize> = (1..=16).map(|s| tasks_per_stream(16, s)).collect();
        assert_eq!(tasks, [16, 8, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1]);
    }
}
