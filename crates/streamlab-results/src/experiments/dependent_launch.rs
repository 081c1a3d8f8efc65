//! dependent-launch: the gap between dependent kernels in one stream, launched plainly,
//! with programmatic dependent launch (Hopper's PDL: `cuLaunchKernelEx` with programmatic
//! stream serialization, the kernels calling `griddepcontrol`) and replayed from a CUDA
//! graph, over kernels from launch-bound (no work) to long.
//! How it measures, its bounds and its model are told in its words, `dependent_launch.md`.

use crate::experiments::prelude::*;

pub struct DependentLaunch;

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Microseconds each kernel's blocks spin, comma separated: from launch-bound (0) to
    /// long.
    #[arg(long, value_delimiter = ',', default_value = "0,1,2,4,8,16,32",
          value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub spin_us: Vec<u32>,
    /// Kernels in a chain.
    #[arg(long, default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=4096))]
    pub chain: usize,
    /// Chains of each way, language and size: one sample each, its kernels' mean gap.
    #[arg(long, default_value_t = 10, value_parser = crate::saved::count(1000))]
    pub repeats: usize,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--spin-us 0,8 --chain 16 --repeats 2";
}

/// How a chain's kernels are launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Way {
    /// `cuLaunchKernel`, one after another on the stream.
    Plain,
    /// `cuLaunchKernelEx` with programmatic stream serialization.
    Programmatic,
    /// The plain launches captured once into a CUDA graph, replayed.
    Graph,
}

impl Way {
    pub const ALL: [Way; 3] = [Way::Plain, Way::Programmatic, Way::Graph];

    pub fn label(self) -> &'static str {
        match self {
            Way::Plain => "plain launches",
            Way::Programmatic => "programmatic dependent launch",
            Way::Graph => "CUDA graph",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Way::Plain => "plain",
            Way::Programmatic => "pdl",
            Way::Graph => "graph",
        }
    }
}

/// One chain's way, language and size, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainPoint {
    pub kernels: KernelSet,
    pub way: Way,
    pub spin_us: u32,
    /// Each chain's mean gap of a kernel after the one ahead of it, µs.
    pub gaps_us: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DependentLaunchResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// Blocks of each kernel (one per SM).
    pub blocks: u32,
    pub points: Vec<ChainPoint>,
}

/// One point's gaps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GapRow {
    pub kernels: KernelSet,
    pub way: Way,
    pub spin_us: u32,
    /// The plain launches' median gap at the same size and language over this one's:
    /// what this way saves, as a factor.
    pub plain_over_this: f64,
    /// Its gaps, µs.
    pub gaps: Series,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DependentAnalysis {
    pub rows: Vec<GapRow>,
}

impl DependentAnalysis {
    pub fn row(&self, kernels: KernelSet, way: Way, spin_us: u32) -> Option<&GapRow> {
        (self.rows.iter()).find(|r| r.kernels == kernels && r.way == way && r.spin_us == spin_us)
    }
}

fn columns<'a>() -> Columns<'a, GapRow> {
    Columns::new()
        .text("kernels", "kernels", |x: &GapRow| x.kernels.label().into())
        .text("launched as", "way", |x| x.way.label().into())
        .number("work µs", "spin_us", (0, 0), |x| f64::from(x.spin_us))
        .named(
            |x| {
                let (kernels, spin) = (x.kernels.label(), x.spin_us);
                RowName::new(
                    format_args!("{kernels}/{}/{spin}", x.way.key()),
                    format_args!("{kernels}, {}, {spin} µs of work: the gap", x.way.label()),
                )
            },
            |_, _, row| row,
        )
        .median(("gap µs (median)", "gap_us"), (3, 4), (None, US), |x| {
            Some(&x.gaps)
        })
        .noise_of("noise", "noise")
        .number("plain over this", "plain_over_this", (2, 3), |x| {
            x.plain_over_this
        })
}

impl Saved for DependentLaunchResult {
    experiment::saved_fields!(Params);
}

impl Experiment for DependentLaunch {
    const NAME: &'static str = "dependent-launch";
    const WORDS: &'static str = include_str!("dependent_launch.md");
    type Params = Params;
    type Result = DependentLaunchResult;
    type Derived = DependentAnalysis;

    fn rows(_r: &DependentLaunchResult, derived: &Self::Derived) -> Vec<MeasuredRow> {
        columns().measured_rows(&derived.rows)
    }

    fn derive(r: &DependentLaunchResult, _checks: &[TraceChecks]) -> DependentAnalysis {
        let series = |p: &ChainPoint| Series::new(p.gaps_us.clone());
        let rows = (r.points.iter())
            .filter_map(|p| {
                let s = series(p)?;
                let plain = (r.points.iter())
                    .find(|q| {
                        q.kernels == p.kernels && q.way == Way::Plain && q.spin_us == p.spin_us
                    })
                    .and_then(series)
                    .map_or(f64::NAN, |s| s.median());
                Some(GapRow {
                    kernels: p.kernels,
                    way: p.way,
                    spin_us: p.spin_us,
                    plain_over_this: plain / s.median(),
                    gaps: s,
                })
            })
            .collect();
        DependentAnalysis { rows }
    }

    fn tables(r: &Self::Result, derived: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        // The finding's rows: each way at the least and the most work.
        let sizes = &r.run.params.spin_us;
        let ends = [sizes.iter().min(), sizes.iter().max()];
        vec![columns().keyed(
            Some(format!(
                "chains of {} kernels of {} blocks on one stream, each issued behind a gate, {} chains each (a chain's sample is its kernels' mean gap); a gap runs from the end of a kernel's work to the beginning of the next one's (the GPU's global timer)",
                r.run.params.chain, r.blocks, r.run.params.repeats
            )),
            &derived.rows,
            |x| ends.contains(&Some(&x.spin_us)),
        )]
    }

    fn csv(_r: &DependentLaunchResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(&derived.rows))]
    }

    fn figures(r: &DependentLaunchResult, a: &Self::Derived) -> Vec<FigureModel> {
        let sizes = &r.run.params.spin_us;
        let mut c = blank(
            "dependent-launch: the gap between dependent kernels in one stream (medians)".into(),
            "work per kernel (µs)",
            "gap µs",
            XAxis::Categories(sizes.iter().map(|s| s.to_string()).collect()),
            YScale::Linear,
        );
        for (w, way) in Way::ALL.into_iter().enumerate() {
            for set in [KernelSet::Rust, KernelSet::Cuda] {
                let points: Vec<(f64, f64)> = (sizes.iter().enumerate())
                    .filter_map(|(i, &us)| Some((i as f64, a.row(set, way, us)?.gaps.median())))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let name = format!("{}, {}", way.label(), set.label());
                c.lines
                    .push(line(name, PALETTE[w], set == KernelSet::Cuda, points));
            }
        }
        vec![FigureModel::chart("dependent-launch.svg".into(), c)]
    }

    /// The headline: the median gaps at the smallest size (µs), each way and language.
    fn summary(r: &DependentLaunchResult, a: &Self::Derived) -> Summary {
        let spin = r.run.params.spin_us.iter().copied().min();
        let gap = |set, way| {
            spin.and_then(|us| a.row(set, way, us))
                .map(|x| x.gaps.median())
        };
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "spin_us": spin,
            "plain_us": gap(KernelSet::Rust, Way::Plain),
            "programmatic_us": gap(KernelSet::Rust, Way::Programmatic),
            "graph_us": gap(KernelSet::Rust, Way::Graph),
            "cuda_plain_us": gap(KernelSet::Cuda, Way::Plain),
            "cuda_programmatic_us": gap(KernelSet::Cuda, Way::Programmatic),
            "cuda_graph_us": gap(KernelSet::Cuda, Way::Graph),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_way_is_held_against_plain_launches_of_its_language_and_size() {
        let point = |kernels, way, spin_us, gaps: &[f64]| ChainPoint {
            kernels,
            way,
            spin_us,
            gaps_us: gaps.to_vec(),
        };
        let r = DependentLaunchResult {
            run: RunRecord::made_up(Params::default()),
            blocks: 132,
            points: vec![
                point(KernelSet::Rust, Way::Plain, 0, &[4.0, 4.2, 3.8]),
                point(KernelSet::Rust, Way::Programmatic, 0, &[1.0, 1.0, 1.1]),
                point(KernelSet::Cuda, Way::Plain, 0, &[8.0, 8.0, 8.0]),
                point(KernelSet::Cuda, Way::Programmatic, 0, &[2.0, 2.0, 2.0]),
            ],
        };
        let analyzed = Analyzed::<DependentLaunch>::new(KernelSet::Rust, r);
        let a = &analyzed.derived;
        let pdl = a.row(KernelSet::Rust, Way::Programmatic, 0).unwrap();
        assert!((pdl.plain_over_this - 4.0).abs() < 1e-12, "{pdl:?}");
        let cuda = a.row(KernelSet::Cuda, Way::Programmatic, 0).unwrap();
        assert!((cuda.plain_over_this - 4.0).abs() < 1e-12);
        assert!(a.row(KernelSet::Rust, Way::Graph, 0).is_none());
        let words = &analyzed.analysis.summary.overview.finding;
        assert!(words.contains("plain launches 4.00"), "{words}");
        assert!(words.contains("The CUDA C++ twins"), "{words}");
    }
}
