//! overlap: the CUDA Handbook's "plug your own kernel in". Any element-wise kernel
//! `fn name(input: &[T], output: &mut [T], …)` from a PTX file, run sequentially and
//! split over streams, so its author learns whether streams pay off at their sizes.
//! Per size: the best streamed speedup, each configuration against its bound, and the
//! verdict; its words are `overlap.md`.

use crate::experiments::prelude::*;
use std::path::PathBuf;

use crate::derived::pipeline::PAYOFF;
use crate::range::IntRange;

pub struct Overlap;

/// The element type of the kernel's slices.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum ElementType {
    #[default]
    F32,
    F64,
    I32,
    U32,
}

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize, Default)]
pub struct Params {
    /// The PTX file holding the kernel (built with nvptx-builder, or any PTX).
    #[arg(long, required = true)]
    pub ptx: PathBuf,
    /// The kernel's entry name; it must take `(input: &[T], output: &mut [T])` first.
    #[arg(long, required = true)]
    pub kernel: String,
    /// The element type T of both slices.
    #[arg(long = "type", value_enum, default_value_t = ElementType::F32)]
    pub element: ElementType,
    /// Elements in the arrays (your size).
    #[arg(long, default_value_t = 1 << 24, value_parser = crate::saved::count(u32::MAX as u64))]
    pub elements: usize,
    /// Also sweep array sizes 2^START..=2^END (every second power of two) to find where
    /// streams start to pay off.
    #[arg(long)]
    pub sizes: Option<IntRange>,
    /// Stream counts to split the arrays over, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16",
          value_parser = crate::saved::count(MAX_STREAMS as u64))]
    pub stream_counts: Vec<usize>,
    /// Threads per block.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// Values of the kernel's parameters after the two slices, in order (parsed as the
    /// PTX declares them: integers or floats).
    #[arg(long = "arg", allow_negative_numbers = true)]
    pub args: Vec<String>,
    /// The input: a raw little-endian file of T, or a .npy array of T; default random.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// The expected output, in the same formats, compared with the sequential run.
    #[arg(long)]
    pub reference: Option<PathBuf>,
    /// Largest difference from `--reference` that still passes (0: exact).
    #[arg(long, default_value_t = 0.0)]
    pub tolerance: f64,
    /// Target GPU time per timed sample, in milliseconds (at least 2 iterations).
    #[arg(long, default_value_t = 20.0)]
    pub sample_ms: f64,
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<3>,
}

impl crate::saved::Params for Params {
    /// `--ptx` and `--kernel` stand in for the ones the command line must give.
    const QUICK: &'static str = "--ptx kernel.ptx --kernel kernel --elements 1048576 --sample-ms 5 \
        --repeats 2";

    fn validate(&self) -> Result<(), UsageError> {
        for (option, path) in [
            ("--ptx", Some(&self.ptx)),
            ("--input", self.input.as_ref()),
            ("--reference", self.reference.as_ref()),
        ] {
            if let Some(path) = path.filter(|p| !p.is_file()) {
                return Err(UsageError::new(format!(
                    "{option} {}: no such file: give the path of an existing file",
                    path.display()
                )));
            }
        }
        if let Some(sizes) = &self.sizes
            && (sizes.start() < 1 || sizes.end() > 31)
        {
            return Err(UsageError::new(format!(
                "--sizes {sizes} is out of range: give powers of two as exponents within 1..=31, e.g. 12..=26"
            )));
        }
        crate::saved::check_sample_ms(self.sample_ms)?;
        let smallest = self.sizes().into_iter().min().unwrap_or(self.elements);
        if let Some(&s) = self.stream_counts.iter().find(|&&s| s > smallest) {
            return Err(UsageError::new(format!(
                "{s} streams for {smallest} elements leaves streams without work: use fewer streams"
            )));
        }
        if (self.input.is_some() || self.reference.is_some()) && self.sizes.is_some() {
            return Err(UsageError::new(
                "--input and --reference hold one array of --elements: leave out --sizes with them",
            ));
        }
        Ok(())
    }
}

impl Params {
    /// Every array size measured, ascending: `--elements`, and the `--sizes` sweep.
    pub fn sizes(&self) -> Vec<usize> {
        let mut sizes = vec![self.elements];
        if let Some(range) = &self.sizes {
            sizes.extend((range.values(2)).map(|e| 1usize << e));
        }
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }
}

/// One asynchronous configuration at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapPoint {
    pub variant: IssueOrder,
    pub streams: usize,
    pub time: Series,
}

/// One array size (milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapSize {
    pub elements: usize,
    pub iterations: usize,
    pub sequential: Series,
    /// For 1 chunk and each stream count: the chunks copied in alone, out alone, both
    /// ways at once, and their kernels alone.
    pub stages: Vec<StageTimes>,
    pub points: Vec<OverlapPoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// The entry's PTX parameter types, as found in the file.
    pub entry: Vec<String>,
    pub sizes: Vec<OverlapSize>,
    /// The best streamed configuration at `--elements`, traced.
    pub timeline: Option<Timeline>,
}

/// One configuration at one size, sequential as one stream, against its bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverlapConfig {
    #[serde(flatten)]
    pub point: OverlapPoint,
    /// `None` where its stages were not measured.
    pub bound: Option<Bound>,
}

/// One array size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverlapSizeAnalysis {
    pub elements: usize,
    pub sequential_ms: f64,
    /// Sequential first, then every streamed configuration.
    pub configs: Vec<OverlapConfig>,
    /// The fastest streamed configuration.
    pub best: Option<OverlapConfig>,
    /// sequential / best.
    pub speedup: f64,
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverlapAnalysis {
    pub sizes: Vec<OverlapSizeAnalysis>,
    /// The smallest size measured at which the best streamed configuration reaches
    /// [`PAYOFF`] over sequential.
    pub pays_off_from: Option<usize>,
    /// Index into `sizes` of the user's `--elements`.
    pub at_user_size: usize,
}

fn analyze_size(size: &OverlapSize, engines: i32, link: Option<&LinkRates>) -> OverlapSizeAnalysis {
    let config = |point: OverlapPoint, runs| {
        let (streams, time) = (point.streams, &point.time);
        let bound = pipeline_stages(&size.stages, streams, None, link).map(|parts| {
            pipeline::bound(parts, streams, runs, engines).held(
                time.median(),
                time.noise(),
                chunks_noise(&size.stages, streams),
            )
        });
        OverlapConfig { point, bound }
    };
    let sequential = OverlapPoint {
        variant: IssueOrder::Sequential,
        streams: 1,
        time: size.sequential.clone(),
    };
    let mut configs = vec![config(sequential, 1)];
    configs.extend((size.points.iter()).map(|p| config(p.clone(), size.iterations)));
    let median = |c: &OverlapConfig| c.point.time.median();
    let best = (configs[1..].iter()).min_by(|a, b| median(a).total_cmp(&median(b)));
    let sequential_ms = size.sequential.median();
    OverlapSizeAnalysis {
        elements: size.elements,
        sequential_ms,
        speedup: best.map_or(f64::NAN, |b| sequential_ms / median(b)),
        best: best.cloned(),
        configs,
    }
}

/// One configuration of one size: a row of the tables and the CSV.
type Row<'a> = (&'a OverlapSizeAnalysis, &'a OverlapConfig);

/// The one declaration of the tables (one per size), the CSV (every size) and the
/// measured rows.
fn columns<'a>() -> Columns<'a, Row<'a>> {
    Columns::new()
        .named(
            |(s, x): &Row| {
                let n = RowName::new(s.elements, format_args!("{} elements", s.elements));
                match x.point.variant {
                    IssueOrder::Sequential => n.then("seq", "sequential"),
                    v => n.then(
                        format_args!("{}/{}", v.short(), x.point.streams),
                        format_args!("{} with {} streams", v.label(), x.point.streams),
                    ),
                }
            },
            |_, _, row| row.over_link(),
        )
        .raw("elements", |(s, _): &Row| s.elements.to_string())
        .text("variant", "variant", |(_, x)| {
            x.point.variant.label().into()
        })
        .text("streams", "streams", |(_, x)| x.point.streams.to_string())
        .median(("ms", "median_ms"), (4, 5), (None, MS), |(_, x)| {
            Some(&x.point.time)
        })
        .noise_of("noise", "noise")
        .show("speedup", |(s, x)| {
            times(s.sequential_ms / x.point.time.median())
        })
        .number("bound", "bound_ms", (4, 5), |(_, x)| {
            x.bound.map_or(f64::NAN, |b| b.ms)
        })
        .show("limited by", |(_, x)| {
            x.bound.map_or("–", |b| b.limiter.label()).into()
        })
        .show("against its bound", |(_, x)| {
            x.bound.map_or(String::new(), |b| b.cell())
        })
}

/// Every configuration of every size, size by size.
fn all_rows(a: &OverlapAnalysis) -> Vec<Row<'_>> {
    (a.sizes.iter())
        .flat_map(|s| s.configs.iter().map(move |x| (s, x)))
        .collect()
}

impl Saved for OverlapResult {
    experiment::saved_fields!(Params);

    fn timelines(&self) -> Vec<&Timeline> {
        self.timeline.iter().collect()
    }

    fn stage_times(&self) -> Vec<&StageTimes> {
        self.sizes.iter().flat_map(|s| &s.stages).collect()
    }
}

impl Experiment for Overlap {
    const NAME: &'static str = "overlap";
    const WORDS: &'static str = include_str!("overlap.md");
    type Params = Params;
    type Result = OverlapResult;
    type Derived = OverlapAnalysis;

    fn rows(_r: &OverlapResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        columns().measured_rows(&all_rows(derived))
    }

    fn derive(r: &OverlapResult, _checks: &[TraceChecks]) -> OverlapAnalysis {
        let link = own_link(r);
        let sizes: Vec<OverlapSizeAnalysis> = (r.sizes.iter())
            .map(|s| analyze_size(s, r.run.device.copy_engines, link.as_ref()))
            .collect();
        OverlapAnalysis {
            pays_off_from: (sizes.iter())
                .find(|s| s.speedup >= PAYOFF)
                .map(|s| s.elements),
            at_user_size: (sizes.iter())
                .position(|s| s.elements == r.run.params.elements)
                .unwrap_or(0),
            sizes,
        }
    }

    fn tables(_r: &OverlapResult, a: &Self::Derived, _cuda: Option<With<'_, Self>>) -> Vec<Table> {
        (a.sizes.iter())
            .map(|s| {
                let rows: Vec<Row> = s.configs.iter().map(|x| (s, x)).collect();
                let caption = format!("{} elements (medians, ms per iteration)", s.elements);
                columns().table(Some(caption), &rows)
            })
            .collect()
    }

    fn csv(_r: &OverlapResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(&all_rows(derived)))]
    }

    fn words(r: &OverlapResult, a: &Self::Derived) -> Value {
        let best = a.sizes[a.at_user_size].best.as_ref();
        context! {
            entry => r.entry.join(", "),
            payoff => PAYOFF,
            best => best.map(|b| (Serde(b), b.point.variant.label(), b.bound.map(|b| b.limiter.label()))),
        }
    }

    /// overlap (your kernel): the best streamed speedup at each size, beside the bound's.
    fn figures(_r: &OverlapResult, a: &Self::Derived) -> Vec<FigureModel> {
        let mut chart = blank(
            "overlap: your kernel, best streamed configuration over sequential".into(),
            "elements",
            "speedup",
            XAxis::Log,
            YScale::Linear,
        );
        type Ms = fn(&OverlapConfig) -> f64;
        let curves: [(&str, _, bool, Ms); 2] = [
            ("measured", PALETTE[0], false, |b| b.point.time.median()),
            ("bound of that configuration", BOUND_COLOR, true, |b| {
                b.bound.map_or(f64::NAN, |b| b.ms)
            }),
        ];
        for (name, color, dashed, ms) in curves {
            let points = (a.sizes.iter())
                .filter_map(|s| Some((s.elements as f64, s.sequential_ms / ms(s.best.as_ref()?))))
                .collect();
            chart.lines.push(line(name, color, dashed, points));
        }
        chart.levels.push(Level {
            name: format!("pays off ({PAYOFF:.2}×)"),
            color: SEQUENTIAL_COLOR,
            y: PAYOFF,
        });
        vec![FigureModel::chart("overlap.svg".into(), chart)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_names_the_size_streams_pay_off_from_and_the_best_at_yours() {
        let ms = |v: f64| Series::new(vec![v, v, v]).unwrap();
        let size = |elements, streamed| OverlapSize {
            elements,
            iterations: 4,
            sequential: ms(2.0),
            stages: Vec::new(),
            points: vec![OverlapPoint {
                variant: IssueOrder::ASYNC[0],
                streams: 2,
                time: ms(streamed),
            }],
        };
        let params = Params {
            elements: 1 << 22,
            ..Params::default()
        };
        let r = OverlapResult {
            run: RunRecord::made_up(params),
            entry: vec![".param .u64".into()],
            sizes: vec![size(1 << 10, 1.95), size(1 << 20, 1.0), size(1 << 22, 0.5)],
            timeline: None,
        };
        let words = Analyzed::<Overlap>::new(KernelSet::Rust, r).words.unwrap();
        let (_, verdict) = words.notes.iter().find(|(l, _)| l == "Verdict").unwrap();
        assert!(
            verdict.starts_with("streams pay off from 1048576 elements: 4.00× at your size (4194304 elements, asynchronous 1 with 2 streams, 0.5000 ms against 2.0000 ms sequential); no bound, as the stages of its chunks were not measured"),
            "{verdict}"
        );
    }
}
