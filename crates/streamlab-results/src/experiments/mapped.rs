//! mapped, after the CUDA Handbook's concurrencyMemcpyKernelMapped: the sincos kernel
//! reading and writing mapped (zero-copy) pinned host memory directly, against copying
//! in and out on streams.
//! How it measures, its bounds and its model are told in its words, `mapped.md`.

use crate::derived::rates::{ms_at, stage_noise};
use crate::experiments::prelude::*;
use crate::report::table::flag;
use crate::stats::beyond_noise;

pub struct Mapped;

#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    #[command(flatten)]
    #[serde(flatten)]
    pub sweep: crate::saved::SizeSweep,
    /// Streams of the streamed version (the blog's 4).
    #[arg(long, default_value_t = 4, value_parser = crate::saved::count(MAX_STREAMS as u64))]
    pub streams: usize,
    /// Target GPU time per timed sample, in milliseconds (at least 2 iterations).
    #[arg(long, default_value_t = 20.0)]
    pub sample_ms: f64,
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<3>,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--max-exponent 22 --sample-ms 5 --repeats 2";

    fn validate(&self) -> Result<(), UsageError> {
        self.sweep.validate()?;
        crate::saved::check_sample_ms(self.sample_ms)?;
        if self.streams > 1usize << self.sweep.min_exponent {
            return Err(UsageError::new(format!(
                "--streams {} exceeds the smallest array (2^{} floats): raise --min-exponent",
                self.streams, self.sweep.min_exponent
            )));
        }
        Ok(())
    }
}

/// sincos-overlap's array (2^25 floats): measured too when it lies in the swept range,
/// and where the headline holds mapped memory to its bound.
pub const SINCOS_EXPONENT: u32 = 25;

/// One array size (milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedPoint {
    pub elements: usize,
    pub iterations: usize,
    /// The kernel over mapped host memory: no copies.
    pub mapped: Series,
    /// Asynchronous 1 and 2 over `streams` streams, device memory and copies.
    pub async1: Series,
    pub async2: Series,
    /// The whole array copied in alone, out alone and both ways at once: the mapped
    /// version's bound.
    pub whole: StageTimes,
    /// The streamed version's stages over its chunks.
    pub chunked: StageTimes,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    pub points: Vec<MappedPoint>,
}

/// One size (medians, milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MappedRow {
    pub elements: usize,
    pub mapped_bound_ms: f64,
    pub streamed_bound_ms: f64,
    /// mapped bound / mapped: 1 is the link's limit.
    pub mapped_efficiency: f64,
    /// streamed / mapped: above 1 mapped memory wins.
    pub mapped_speedup: f64,
    /// Either version beat the bound built from the measured rates: that bound was
    /// lowered to the row.
    pub beyond_bound: bool,
    /// Where each version sits under its bound as built (each bound's noise: its
    /// copies' samples'), within or beyond the two figures' noise.
    pub mapped_under: Option<Under>,
    pub streamed_under: Option<Under>,
    /// The size's samples, for its measured rows.
    #[serde(skip)]
    pub point: MappedPoint,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MappedAnalysis {
    /// The fastest rate of each path over every size's whole-array copies and the run's
    /// fastest large copies: the link's bandwidth.
    pub link: CopyRates,
    pub rows: Vec<MappedRow>,
    /// The sizes at which mapped memory was faster by more than the two rows' noise.
    pub mapped_wins: Vec<usize>,
}

/// The samples of the streamed version: the faster of the two asynchronous orders.
fn streamed(p: &MappedPoint) -> &Series {
    p.async1.faster(&p.async2)
}

/// Point `p` of `r` against its bounds from `link`, the fastest rates of every size, and
/// `run`, the run's fastest large copies.
fn mapped_row(
    r: &MappedResult,
    run: Option<&LinkRates>,
    link: &CopyRates,
    p: &MappedPoint,
) -> MappedRow {
    let (bytes, streams) = (p.whole.bytes, r.run.params.streams);
    let (mapped_ms, streamed_ms) = (p.mapped.median(), streamed(p).median());
    // The link's capacity both ways is the run's best, as for the mapped bound.
    let streamed_bound =
        pipeline_stages([&p.whole, &p.chunked], streams, None, run).map(|mut parts| {
            parts.both_ms = parts.both_ms.min(ms_at(2 * bytes, link.both_gbps));
            let bound = pipeline::bound(parts, streams, p.iterations, r.run.device.copy_engines);
            bound.held(streamed_ms, streamed(p).noise(), stage_noise(&p.chunked))
        });
    let built_ms = (ms_at(bytes, link.htod_gbps))
        .max(ms_at(bytes, link.dtoh_gbps))
        .max(ms_at(2 * bytes, link.both_gbps));
    // As `Bound::held`: a row that beat the bound lowers it to the row.
    let mapped_lowered = pipeline::beyond(mapped_ms, built_ms);
    let mapped_bound_ms = if mapped_lowered { mapped_ms } else { built_ms };
    MappedRow {
        elements: p.elements,
        mapped_bound_ms,
        streamed_bound_ms: streamed_bound.map_or(f64::NAN, |b| b.ms),
        mapped_efficiency: mapped_bound_ms / mapped_ms,
        mapped_speedup: streamed_ms / mapped_ms,
        beyond_bound: mapped_lowered || streamed_bound.is_some_and(|b| b.lowered()),
        mapped_under: Under::of(built_ms, stage_noise(&p.whole), mapped_ms, p.mapped.noise()),
        streamed_under: streamed_bound.and_then(|b| b.under),
        point: p.clone(),
    }
}

/// The key of the mapped kernel's measured row, under its size; held to its own model.
const MAPPED: &str = "mapped";

/// The one declaration of the table and the CSV: a row per size.
fn columns<'a>() -> Columns<'a, MappedRow> {
    Columns::new()
        .both(
            "floats",
            |x: &MappedRow| format!("2^{}", x.elements.ilog2()),
            "floats",
            |x| x.elements.to_string(),
        )
        .named(
            |x| RowName::new(x.elements, format_args!("{} floats", x.elements)),
            |x, item, row| {
                // The mapped kernel's model: the whole array copied both ways at once.
                let model = match item {
                    Some(MAPPED) => x.point.whole.both.median(),
                    _ => x.streamed_bound_ms,
                };
                row.over_link().modelled(Some(model))
            },
        )
        .median(
            ("mapped", "mapped_ms"),
            (4, 5),
            (Some((MAPPED, "mapped")), MS),
            |x| Some(&x.point.mapped),
        )
        .noise_of("noise", "mapped_noise")
        .measured((Some(("async1", "asynchronous 1")), MS), |x| {
            Some(&x.point.async1)
        })
        .measured((Some(("async2", "asynchronous 2")), MS), |x| {
            Some(&x.point.async2)
        })
        .number("mapped bound", "mapped_bound_ms", (4, 5), |x| {
            x.mapped_bound_ms
        })
        .show("efficiency", |x| num(x.mapped_efficiency, 3))
        .number("streamed", "streamed_ms", (4, 5), |x| {
            streamed(&x.point).median()
        })
        .noise("noise", "streamed_noise", |x| streamed(&x.point).noise())
        .number("streamed bound", "streamed_bound_ms", (4, 5), |x| {
            x.streamed_bound_ms
        })
        .show("streamed / mapped", |x| times(x.mapped_speedup))
        .show("against its bounds", |x| {
            let unders = [("mapped", x.mapped_under), ("streamed", x.streamed_under)];
            let marks =
                (unders.into_iter()).filter_map(|(v, u)| Some(format!("{v}: {}", u?.label())));
            pipeline::bound_cell(marks.chain(x.beyond_bound.then(|| flag(true))))
        })
}

impl Saved for MappedResult {
    experiment::saved_fields!(Params);

    fn stage_times(&self) -> Vec<&StageTimes> {
        let points = self.points.iter();
        points.flat_map(|p| [&p.whole, &p.chunked]).collect()
    }
}

impl Experiment for Mapped {
    const NAME: &'static str = "mapped";
    const WORDS: &'static str = include_str!("mapped.md");
    type Params = Params;
    type Result = MappedResult;
    type Derived = MappedAnalysis;

    /// Each time against its bound at its size, from the same run: the mapped kernel's, the
    /// whole array copied both ways at once; the streamed orders', their pipeline bound
    /// from their chunks' copies and kernels timed alone.
    fn rows(_r: &MappedResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        columns().measured_rows(&derived.rows)
    }

    fn derive(r: &MappedResult, _checks: &[TraceChecks]) -> MappedAnalysis {
        let run = own_link(r);
        let all: Vec<CopyRates> = r.points.iter().map(|p| best_rates(&p.whole)).collect();
        let best = |rate: fn(&CopyRates) -> f64| all.iter().map(rate).fold(f64::NAN, f64::max);
        let run_best = |rate: fn(&LinkRates) -> f64| run.as_ref().map_or(f64::NAN, rate);
        let link = CopyRates {
            htod_gbps: best(|c| c.htod_gbps).max(run_best(|l| l.htod_gbps)),
            dtoh_gbps: best(|c| c.dtoh_gbps).max(run_best(|l| l.dtoh_gbps)),
            both_gbps: best(|c| c.both_gbps).max(run_best(|l| l.both_gbps)),
            htod_shared_gbps: best(|c| c.htod_shared_gbps),
            dtoh_shared_gbps: best(|c| c.dtoh_shared_gbps),
        };
        let row = |p| mapped_row(r, run.as_ref(), &link, p);
        let rows: Vec<MappedRow> = r.points.iter().map(row).collect();
        let wins = |x: &&MappedRow| {
            let (m, s) = (&x.point.mapped, streamed(&x.point));
            m.median() < s.median() && beyond_noise(m.median(), m.noise(), s.median(), s.noise())
        };
        MappedAnalysis {
            link,
            mapped_wins: rows.iter().filter(wins).map(|x| x.elements).collect(),
            rows,
        }
    }

    fn tables(_r: &Self::Result, derived: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        let caption = "medians, ms per iteration; efficiency = bound / measured".to_owned();
        vec![columns().table(Some(caption), &derived.rows)]
    }

    fn csv(_r: &MappedResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(&derived.rows))]
    }

    fn figures(_r: &MappedResult, a: &Self::Derived) -> Vec<FigureModel> {
        let title = "mapped: zero-copy kernel against streamed copies".into();
        let mut chart = blank(title, "floats", "ms per iteration", XAxis::Log, YScale::Log);
        type Y = fn(&MappedRow) -> f64;
        let series: [(&str, usize, bool, Y); 4] = [
            ("mapped (median)", 4, false, |r| r.point.mapped.median()),
            ("mapped bound: the link", 4, true, |r| r.mapped_bound_ms),
            ("streamed (median)", 0, false, |r| {
                streamed(&r.point).median()
            }),
            ("streamed bound: pipeline", 0, true, |r| r.streamed_bound_ms),
        ];
        for (name, color, dashed, y) in series {
            let points = a.rows.iter().map(|r| (r.elements as f64, y(r))).collect();
            chart.lines.push(line(name, PALETTE[color], dashed, points));
        }
        vec![FigureModel::chart("mapped.svg".into(), chart)]
    }

    fn summary(r: &MappedResult, a: &Self::Derived) -> Summary {
        // The size nearest sincos-overlap's array, where mapped memory is held to its bound.
        let near = (a.rows.iter()).min_by_key(|x| x.elements.abs_diff(1 << SINCOS_EXPONENT));
        let near = near.map(|x| (x.elements, x.point.mapped.median() / x.mapped_bound_ms));
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "mapped_wins": a.mapped_wins,
            "mapped_over_bound": near,
        }))
        .with(Overview {
            over_bound: near
                .map(|(n, over)| (over, format!("zero-copy at 2^{} floats", n.ilog2()))),
            ..Overview::default()
        })
    }
}
