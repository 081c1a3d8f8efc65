//! bounds: the machine's physical limits, measured: pinned copy rates each way and both
//! ways at once, device memory bandwidth, and the cost of a kernel launch. The limits the
//! report puts first, and the `bounds` key of `summary.json`.

use crate::derived::pipeline::SLACK;
use crate::derived::rates::median_rates;
use crate::experiments::prelude::*;

pub struct Bounds;

/// What `bounds` measures.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Floats per copy (default: the sincos-overlap array).
    #[arg(long, default_value_t = 1 << 25, value_parser = crate::saved::count(1 << 34))]
    pub elements: usize,
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<20>,
    /// Back-to-back launches in one launch-cost sample.
    #[arg(long, default_value_t = 1000, value_parser = crate::saved::count(1_000_000))]
    pub launches: usize,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--elements 4194304 --repeats 5 --launches 200";
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundsResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// Pinned copies of `params.elements` floats each way alone and both ways at once, whole.
    pub copies: StageTimes,
    /// Device to device, one copy of the same bytes per sample.
    pub dtod: Series,
    /// Milliseconds per launch of an empty kernel, each sample the mean of
    /// `params.launches` back-to-back launches.
    pub launch: Series,
}

/// The medians of every measurement: `summary.json`'s `bounds`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundsSummary {
    pub h2d_ms: f64,
    pub d2h_ms: f64,
    pub h2d_gbps: f64,
    pub d2h_gbps: f64,
    /// Both directions at once, in total.
    pub bidirectional_gbps: f64,
    /// Bytes read plus bytes written.
    pub d2d_gbps: f64,
    pub launch_us: f64,
    /// The relative noise of each measurement's samples.
    pub h2d_noise: f64,
    pub d2h_noise: f64,
    pub bidirectional_noise: f64,
    pub d2d_noise: f64,
    pub launch_noise: f64,
}

/// One measured path, as the table, the CSV and the measured rows show it.
struct PathRow<'a> {
    /// Its key among the measured rows.
    key: &'static str,
    path: &'static str,
    samples: &'a Series,
    /// Its rate; none for the launch, the one path timed in µs.
    gbps: Option<f64>,
    /// Its median, in ms for a copy and in µs for the launch, and that unit.
    median: (f64, &'static str),
}

/// Every path of `b` (whose derived numbers are `s`).
fn paths<'a>(b: &'a BoundsResult, s: &BoundsSummary) -> [PathRow<'a>; 5] {
    let row = |key, path, samples: &'a Series, gbps: Option<f64>| PathRow {
        key,
        path,
        samples,
        gbps,
        median: match gbps {
            Some(_) => (samples.median(), MS),
            None => (samples.median() * 1e3, US),
        },
    };
    let (c, both) = (&b.copies, "both ways at once (in total)");
    let dtod = "device to device (read + write)";
    [
        row("htod", "HtoD alone", &c.htod, Some(s.h2d_gbps)),
        row("dtoh", "DtoH alone", &c.dtoh, Some(s.d2h_gbps)),
        row("both", both, &c.both, Some(s.bidirectional_gbps)),
        row("dtod", dtod, &b.dtod, Some(s.d2d_gbps)),
        row("launch", "empty kernel launch", &b.launch, None),
    ]
}

/// The one declaration of the table, the CSV and the measured rows: a row per path.
fn columns<'a>() -> Columns<'a, PathRow<'a>> {
    Columns::new()
        .text("path", "path", |x: &PathRow| x.path.into())
        .named(
            |x| RowName::new(x.key, x.path),
            |x, _, row| match x.key {
                "htod" | "dtoh" | "both" => row.over_link(),
                _ => row,
            },
        )
        .measured((None, MS), |x| Some(x.samples))
        .both(
            "median",
            |x| format!("{} {}", num(x.median.0, 3), x.median.1),
            "median",
            |x| format!("{:.6}", x.median.0),
        )
        .raw("unit", |x| x.median.1.into())
        .noise("noise", "noise", |x| x.samples.noise())
        .both(
            "GB/s",
            |x| x.gbps.map_or(String::new(), |g| num(g, 1)),
            "gbps",
            |x| x.gbps.map_or(String::new(), |g| format!("{g:.3}")),
        )
}

impl Saved for BoundsResult {
    experiment::saved_fields!(Params);

    fn stage_times(&self) -> Vec<&StageTimes> {
        vec![&self.copies]
    }

    fn launch_probe(&self) -> Option<&Series> {
        Some(&self.launch)
    }
}

impl Experiment for Bounds {
    const NAME: &'static str = "bounds";
    const WORDS: &'static str = include_str!("bounds.md");
    type Params = Params;
    type Result = BoundsResult;
    type Derived = BoundsSummary;

    fn rows(b: &BoundsResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        columns().measured_rows(&paths(b, derived))
    }

    fn derive(b: &BoundsResult, _checks: &[TraceChecks]) -> BoundsSummary {
        let median = median_rates(&b.copies);
        BoundsSummary {
            h2d_ms: b.copies.htod.median(),
            d2h_ms: b.copies.dtoh.median(),
            h2d_gbps: median.htod_gbps,
            d2h_gbps: median.dtoh_gbps,
            bidirectional_gbps: median.both_gbps,
            d2d_gbps: gbps(2 * b.copies.bytes, b.dtod.median()),
            launch_us: b.launch.median() * 1e3,
            h2d_noise: b.copies.htod.noise(),
            d2h_noise: b.copies.dtoh.noise(),
            bidirectional_noise: b.copies.both.noise(),
            d2d_noise: b.dtod.noise(),
            launch_noise: b.launch.noise(),
        }
    }

    fn tables(b: &Self::Result, derived: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        let mib = b.copies.bytes as f64 / (1u64 << 20) as f64;
        let caption = format!("{mib:.0} MiB per copy (medians)");
        vec![columns().table(Some(caption), &paths(b, derived))]
    }

    fn csv(b: &BoundsResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(&paths(b, derived)))]
    }

    fn words(_r: &BoundsResult, _a: &Self::Derived) -> Value {
        context! { slack => SLACK }
    }

    const FACTS: &'static [&'static str] = &["bounds"];
    fn summary(_b: &BoundsResult, b: &Self::Derived) -> Summary {
        Summary {
            facts: vec![experiment::json(b)],
            ..Summary::default()
        }
    }
}
