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

impl Params {
    /// Bytes of one copy.
    pub fn bytes(&self) -> u64 {
        (self.elements * size_of::<f32>()) as u64
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundsResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// Pinned copies of `params.bytes()` each way alone and both ways at once, whole.
    pub copies: StageTimes,
    /// Device to device, one copy of `params.bytes()` per sample.
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
    /// The relative noise of each measurement's samples (absent from summaries written
    /// before they were kept here).
    pub h2d_noise: Option<f64>,
    pub d2h_noise: Option<f64>,
    pub bidirectional_noise: Option<f64>,
    pub d2d_noise: Option<f64>,
    pub launch_noise: Option<f64>,
}

/// One measured path, as the table, the CSV and the measured rows show it.
struct PathRow<'a> {
    /// Its key among the measured rows.
    key: &'static str,
    path: &'static str,
    /// Median.
    value: f64,
    unit: &'static str,
    gbps: Option<f64>,
    /// Its samples (ms), and whether its copies cross the host link.
    samples: &'a Series,
    over_link: bool,
}

/// Every path of `b` (whose derived numbers are `s`), with its median and rate.
fn paths<'a>(b: &'a BoundsResult, s: &BoundsSummary) -> Vec<PathRow<'a>> {
    let c = &b.copies;
    let row = |key, path, samples: &'a Series, gbps| PathRow {
        key,
        path,
        value: samples.median(),
        unit: "ms",
        gbps: Some(gbps),
        samples,
        over_link: true,
    };
    vec![
        row("htod", "HtoD alone", &c.htod, s.h2d_gbps),
        row("dtoh", "DtoH alone", &c.dtoh, s.d2h_gbps),
        row(
            "both",
            "both ways at once (in total)",
            &c.both,
            s.bidirectional_gbps,
        ),
        PathRow {
            over_link: false,
            ..row(
                "dtod",
                "device to device (read + write)",
                &b.dtod,
                s.d2d_gbps,
            )
        },
        PathRow {
            key: "launch",
            path: "empty kernel launch",
            value: s.launch_us,
            unit: "µs",
            gbps: None,
            samples: &b.launch,
            over_link: false,
        },
    ]
}

/// The one declaration of the table, the CSV and the measured rows: a row per path.
fn columns<'a>() -> Columns<'a, PathRow<'a>> {
    Columns::new()
        .text("path", "path", |x: &PathRow| x.path.into())
        .named(
            |x| RowName::new(x.key, x.path),
            |x, _, row| if x.over_link { row.over_link() } else { row },
        )
        .measured((None, MS), |x| Some(x.samples))
        .both(
            "median",
            |x| format!("{} {}", num(x.value, 3), x.unit),
            "median",
            |x| format!("{:.6}", x.value),
        )
        .raw("unit", |x| x.unit.into())
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
    const USES_KERNEL_SETS: bool = false;
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
            h2d_noise: Some(b.copies.htod.noise()),
            d2h_noise: Some(b.copies.dtoh.noise()),
            bidirectional_noise: Some(b.copies.both.noise()),
            d2d_noise: Some(b.dtod.noise()),
            launch_noise: Some(b.launch.noise()),
        }
    }

    fn tables(b: &Self::Result, derived: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        let mib = b.copies.bytes as f64 / (1u64 << 20) as f64;
        vec![columns().table(
            Some(format!("{mib:.0} MiB per copy (medians)")),
            &paths(b, derived),
        )]
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
            fact_lines: vec![(
                "bounds".to_owned(),
                format!(
                    "HtoD {:.1} GB/s, DtoH {:.1} GB/s, both ways {:.1} GB/s, device {:.0} GB/s, launch {:.2} µs",
                    b.h2d_gbps, b.d2h_gbps, b.bidirectional_gbps, b.d2d_gbps, b.launch_us
                ),
            )],
            overview: Overview {
                finding: format!(
                    "The link moves {:.1} GB/s in, {:.1} GB/s out, {:.1} GB/s both ways at once; device memory copies at {:.0} GB/s; an empty launch takes {:.2} µs. The bounds below are built from these.",
                    b.h2d_gbps, b.d2h_gbps, b.bidirectional_gbps, b.d2d_gbps, b.launch_us
                ),
                result: format!(
                    "{:.1} / {:.1} GB/s in / out, launch {:.2} µs",
                    b.h2d_gbps, b.d2h_gbps, b.launch_us
                ),
                ..Overview::default()
            },
            ..Summary::default()
        }
    }
}
