//! launch-overhead, after the CUDA Handbook's nullKernelAsync and breakevenKernelAsync:
//! what one launch costs, how much work a kernel needs before that cost stops mattering,
//! and what replaying a CUDA graph changes.

use crate::experiments::prelude::*;

pub struct LaunchOverhead;

#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Launches per sample.
    #[arg(long, default_value_t = 20_000, value_parser = crate::saved::count(10_000_000))]
    pub launches: usize,
    /// Kernel nodes in the captured graph (replayed until `--launches` are done).
    #[arg(long, default_value_t = 1000, value_parser = crate::saved::count(100_000))]
    pub graph_nodes: usize,
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<11>,
    /// Work per kernel for the breakeven curve: microseconds each kernel spins on the
    /// GPU's global timer, comma separated.
    #[arg(long, value_delimiter = ',',
          default_value = "0,1,2,3,4,6,8,12,16,24,32,48,64",
          value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub work_us: Vec<u32>,
    /// Kernels per breakeven sample.
    #[arg(long, default_value_t = 2000, value_parser = crate::saved::count(1_000_000))]
    pub breakeven_launches: usize,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--launches 2000 --graph-nodes 200 --repeats 2 --work-us 0,2,8,32 \
        --breakeven-launches 500";
}

/// An empty kernel's launch cost in one language (microseconds per launch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchCosts {
    pub kernels: KernelSet,
    /// Host time to issue `launches` launches back to back, per launch.
    pub async_host_us: Series,
    /// GPU time of those launches (events), per launch.
    pub async_gpu_us: Series,
    /// Launch, then wait for it, per launch (host time).
    pub sync_us: Series,
}

/// The same launches captured once in a graph and replayed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphCosts {
    /// Host time per kernel to issue the replays.
    pub host_us: Series,
    /// GPU time per kernel of the replays (events).
    pub gpu_us: Series,
}

/// Back-to-back kernels that each spin `work_us` (microseconds per kernel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakevenPoint {
    pub work_us: u32,
    /// GPU time per kernel.
    pub per_kernel_us: Series,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchOverheadResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// The Rust empty kernel, and its CUDA C++ twin where NVRTC is present.
    pub stream: Vec<LaunchCosts>,
    /// The Rust empty kernel in a graph.
    pub graph: GraphCosts,
    pub breakeven: Vec<BreakevenPoint>,
}

/// The overhead share under which a kernel's launch cost "stops mattering".
pub const BREAKEVEN_OVERHEAD: f64 = 0.10;

/// One language's launch costs on a stream, or the Rust kernel's graph replay
/// (microseconds per launch).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchRow {
    pub kernels: KernelSet,
    /// Host time to issue, and GPU time, back to back.
    #[serde(skip)]
    pub host: Series,
    #[serde(skip)]
    pub gpu: Series,
    /// Launch, then wait for it; none for the graph replay.
    #[serde(skip)]
    pub sync: Option<Series>,
    /// Back-to-back launches per second: one per the slower of host issue and GPU.
    pub launches_per_s: f64,
    /// The relative noise of that slower side.
    pub launches_noise: f64,
}

/// One work size of the breakeven curve (medians, microseconds per kernel).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakevenRow {
    pub work_us: u32,
    /// GPU time per kernel.
    #[serde(skip)]
    pub per_kernel: Series,
    /// The bound: the work itself, or the cost of an empty launch if larger.
    pub bound_us: f64,
    /// (per kernel − work) / per kernel: the share of each kernel's time that is not work.
    pub overhead_share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchAnalysis {
    pub rows: Vec<LaunchRow>,
    /// Rust's launch rate over the CUDA C++ twin's (above 1: Rust launches faster).
    pub rust_over_cuda_rate: Option<f64>,
    /// Whether the two rates' noise covers that ratio's distance from 1.
    pub rust_over_cuda_within_noise: Option<bool>,
    /// The Rust kernel's graph replay.
    pub graph: LaunchRow,
    /// Graph replay's host time per launch over stream issue's (Rust).
    pub graph_over_stream_host: f64,
    pub breakeven: Vec<BreakevenRow>,
    /// The least work per kernel whose overhead share is at most [`BREAKEVEN_OVERHEAD`].
    pub breakeven_work_us: Option<u32>,
}

fn row(kernels: KernelSet, host: &Series, gpu: &Series, sync: Option<&Series>) -> LaunchRow {
    let slower = std::cmp::max_by(gpu, host, |a, b| a.median().total_cmp(&b.median()));
    LaunchRow {
        kernels,
        host: host.clone(),
        gpu: gpu.clone(),
        sync: sync.cloned(),
        launches_per_s: 1e6 / slower.median(),
        launches_noise: slower.noise(),
    }
}

/// The row of `set`'s kernels, where they ran.
fn of(rows: &[LaunchRow], set: KernelSet) -> Option<&LaunchRow> {
    rows.iter().find(|x| x.kernels == set)
}

/// The one declaration of the launch table: the stream rows, then the graph replay's.
fn launch_columns<'a>() -> Columns<'a, LaunchRow> {
    Columns::new()
        .show("launched by", |x: &LaunchRow| {
            let way = x.sync.as_ref().map_or("graph replay", |_| "stream");
            format!("{} kernel, {way}", x.kernels.label())
        })
        .show("host (async)", |x| num(x.host.median(), 3))
        .show("host noise", |x| noise(x.host.noise()))
        .show("GPU (async)", |x| num(x.gpu.median(), 3))
        .show("GPU noise", |x| noise(x.gpu.noise()))
        .show("launch + synchronize", |x| {
            (x.sync.as_ref()).map_or(String::new(), |s| num(s.median(), 3))
        })
        .show("launches/s", |x| num(x.launches_per_s, 0))
}

/// The one declaration of the breakeven table and the CSV: a row per work per kernel.
fn breakeven_columns<'a>() -> Columns<'a, BreakevenRow> {
    Columns::new()
        .text("work", "work_us", |x: &BreakevenRow| x.work_us.to_string())
        .number("per kernel", "per_kernel_us", (3, 4), |x| {
            x.per_kernel.median()
        })
        .noise("noise", "noise", |x| x.per_kernel.noise())
        .number("bound", "bound_us", (3, 4), |x| x.bound_us)
        .both(
            "share not work",
            |x| format!("{}%", num(x.overhead_share * 100.0, 1)),
            "overhead_share",
            |x| format!("{:.4}", x.overhead_share),
        )
}

impl Saved for LaunchOverheadResult {
    experiment::saved_fields!(Params);
}

impl Experiment for LaunchOverhead {
    const NAME: &'static str = "launch-overhead";
    const WORDS: &'static str = include_str!("launch_overhead.md");
    type Params = Params;
    type Result = LaunchOverheadResult;
    type Derived = LaunchAnalysis;

    fn rows(r: &LaunchOverheadResult, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        let mut rows = Vec::new();
        for c in &r.stream {
            let key = format!("{:?}", c.kernels).to_lowercase();
            let series = [
                ("async-host", "asynchronous launch, host", &c.async_host_us),
                ("async-gpu", "asynchronous launch, GPU", &c.async_gpu_us),
                ("sync", "launch and wait", &c.sync_us),
            ];
            rows.extend(RowName::new(key, c.kernels.label()).group(US, series));
        }
        let graph = [
            ("host", "host per kernel", &r.graph.host_us),
            ("gpu", "GPU per kernel", &r.graph.gpu_us),
        ];
        rows.extend(RowName::new("graph", "graph replay").group(US, graph));
        for p in &r.breakeven {
            let at = RowName::new(
                format_args!("work{}", p.work_us),
                format_args!("kernels of {} µs work, per kernel", p.work_us),
            );
            rows.push(at.median(&p.per_kernel_us, US));
        }
        // Every row is a launch's cost: held against the run's own launch probe.
        (rows.into_iter())
            .map(|row| row.controlled_by(RowControl::Launch))
            .collect()
    }

    fn derive(r: &LaunchOverheadResult, _checks: &[TraceChecks]) -> LaunchAnalysis {
        let rows: Vec<LaunchRow> = (r.stream.iter())
            .map(|c| {
                let sync = Some(&c.sync_us);
                row(c.kernels, &c.async_host_us, &c.async_gpu_us, sync)
            })
            .collect();
        let (rust, cuda) = (of(&rows, KernelSet::Rust), of(&rows, KernelSet::Cuda));
        let empty_us = rust.map_or(0.0, |x| x.gpu.median());
        let breakeven: Vec<BreakevenRow> = (r.breakeven.iter())
            .map(|p| {
                let per_kernel_us = p.per_kernel_us.median();
                let work = f64::from(p.work_us);
                BreakevenRow {
                    work_us: p.work_us,
                    per_kernel: p.per_kernel_us.clone(),
                    bound_us: work.max(empty_us),
                    overhead_share: (per_kernel_us - work) / per_kernel_us,
                }
            })
            .collect();
        let (rust_over_cuda_rate, rust_over_cuda_within_noise) = (rust.zip(cuda))
            .map(|(r, c)| {
                let (rate, noise) = (r.launches_per_s, r.launches_noise);
                let within = !stats::beyond_noise(rate, noise, c.launches_per_s, c.launches_noise);
                (rate / c.launches_per_s, within)
            })
            .unzip();
        LaunchAnalysis {
            rust_over_cuda_rate,
            rust_over_cuda_within_noise,
            graph_over_stream_host: r.graph.host_us.median()
                / rust.map_or(f64::NAN, |x| x.host.median()),
            graph: row(KernelSet::Rust, &r.graph.host_us, &r.graph.gpu_us, None),
            breakeven_work_us: (breakeven.iter())
                .filter(|b| b.work_us > 0 && b.overhead_share <= BREAKEVEN_OVERHEAD)
                .map(|b| b.work_us)
                .min(),
            breakeven,
            rows,
        }
    }

    fn tables(_r: &Self::Result, a: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        let launches: Vec<LaunchRow> = a.rows.iter().chain([&a.graph]).cloned().collect();
        vec![
            launch_columns().table(Some("medians, µs per launch".into()), &launches),
            breakeven_columns().table(
                Some("breakeven: medians, µs per kernel".into()),
                &a.breakeven,
            ),
        ]
    }

    fn csv(_r: &LaunchOverheadResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(breakeven_columns().csv(&derived.breakeven))]
    }

    fn words(_r: &LaunchOverheadResult, a: &Self::Derived) -> Value {
        context! {
            overhead => BREAKEVEN_OVERHEAD,
            rust_host_us => of(&a.rows, KernelSet::Rust).map(|x| x.host.median()),
        }
    }

    fn figures(_r: &LaunchOverheadResult, a: &Self::Derived) -> Vec<FigureModel> {
        let labels = (a.rows.iter())
            .map(|r| format!("{} streams", r.kernels.label()))
            .chain(["Rust graph replay".into()]);
        let mut costs = blank(
            "launch-overhead: an empty kernel, back to back (medians)".into(),
            "launched by",
            "µs per launch",
            XAxis::Categories(labels.collect()),
            YScale::Linear,
        );
        let median = |side: fn(&LaunchRow) -> &Series| {
            (a.rows.iter().chain([&a.graph]))
                .map(|r| side(r).median())
                .collect()
        };
        costs.bars = vec![
            bars("host time to issue", PALETTE[0], median(|r| &r.host), None),
            bars("GPU time", PALETTE[1], median(|r| &r.gpu), None),
        ];
        let mut breakeven = blank(
            "launch-overhead: time per kernel against the work it carries".into(),
            "work per kernel (µs)",
            "µs per kernel",
            XAxis::Linear,
            YScale::Linear,
        );
        let curve = |y: fn(&BreakevenRow) -> f64| {
            let points = a.breakeven.iter().map(|b| (f64::from(b.work_us), y(b)));
            points.collect()
        };
        let measured = curve(|b| b.per_kernel.median());
        let bound = "bound: the work, or an empty launch";
        breakeven.lines = vec![
            line("measured (median)", PALETTE[0], false, measured),
            line(bound, BOUND_COLOR, true, curve(|b| b.bound_us)),
        ];
        vec![
            FigureModel::chart("launch-overhead.svg".into(), costs),
            FigureModel::chart("launch-overhead-breakeven.svg".into(), breakeven),
        ]
    }

    fn summary(r: &LaunchOverheadResult, a: &Self::Derived) -> Summary {
        let rate = |set| of(&a.rows, set).map(|x| x.launches_per_s);
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "rust_launches_per_s": rate(KernelSet::Rust),
            "cuda_launches_per_s": rate(KernelSet::Cuda),
            "rust_over_cuda_rate": a.rust_over_cuda_rate,
            "rust_over_cuda_within_noise": a.rust_over_cuda_within_noise,
            "graph_over_stream_host": a.graph_over_stream_host,
            "breakeven_work_us": a.breakeven_work_us,
        }))
        .with(Overview {
            rust_over_cpp: (a.rust_over_cuda_rate).map(|r| (1.0 / r, "launch time".into())),
            ..Overview::default()
        })
    }
}
