//! graph-overlap: sincos-overlap's asynchronous orders captured once as CUDA graphs and
//! replayed, against issuing them on streams: GPU time per iteration, and host time per
//! iteration (how much of the CPU is left free, as NVIDIA's asyncAPI sample asks).

use crate::experiments::prelude::*;

pub struct GraphOverlap;

/// Parameters.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Floats in the array.
    #[arg(long, default_value_t = 1 << 25, value_parser = crate::saved::count(u32::MAX as u64))]
    pub elements: usize,
    /// Chunk counts (one stream per chunk), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "4,16,64",
          value_parser = crate::saved::count(MAX_STREAMS as u64))]
    pub chunks: Vec<usize>,
    /// Iterations per timed sample, issued back to back.
    #[arg(long, default_value_t = 50, value_parser = crate::saved::count(1_000_000))]
    pub iterations: usize,
    #[command(flatten)]
    #[serde(flatten)]
    pub sampling: crate::saved::Repeats<5>,
    /// Untimed samples before each configuration.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
}

crate::defaults_from_clap!(Params);

impl crate::saved::Params for Params {
    const QUICK: &'static str = "--elements 4194304 --iterations 10 --repeats 2";

    fn validate(&self) -> Result<(), UsageError> {
        match self.chunks.iter().find(|&&c| c > self.elements) {
            Some(c) => Err(UsageError::new(format!(
                "--chunks {c} exceeds --elements {}: use at most one chunk per element",
                self.elements
            ))),
            None => Ok(()),
        }
    }
}

/// How an iteration reaches the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Issue {
    /// Every copy and kernel issued on its stream, each iteration.
    Streams,
    /// The iteration captured once as a graph, replayed.
    Graph,
}

impl Issue {
    pub fn label(self) -> &'static str {
        match self {
            Issue::Streams => "streams",
            Issue::Graph => "graph",
        }
    }
}

/// One order, chunk count and way of issuing (milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphPoint {
    pub variant: IssueOrder,
    pub chunks: usize,
    pub issue: Issue,
    /// GPU time per iteration (events around each sample).
    pub gpu: Series,
    /// Host time spent issuing, per iteration.
    pub host: Series,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphOverlapResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    /// For each chunk count: the chunks copied in alone, out alone, both ways at once,
    /// and their kernels alone.
    pub stages: Vec<StageTimes>,
    pub points: Vec<GraphPoint>,
}

/// One order at one chunk count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphRow {
    pub variant: IssueOrder,
    pub chunks: usize,
    /// Graph replay over stream issue: the medians of the GPU's and of the host's time.
    pub gpu_ratio: f64,
    pub host_ratio: f64,
    /// Against the faster way's GPU time; `bound.lowered()` where either way beat the
    /// bound built from the measured stages.
    pub bound: Bound,
    /// The two ways' samples.
    #[serde(skip)]
    pub streams: GraphPoint,
    #[serde(skip)]
    pub graph: GraphPoint,
}

/// The one declaration of the table and the CSV: a row per order and chunk count.
fn columns<'a>() -> Columns<'a, GraphRow> {
    let columns = Columns::new()
        .text("order", "variant", |x: &GraphRow| x.variant.label().into())
        .text("chunks", "chunks", |x| x.chunks.to_string());
    let columns = timed(columns, "GPU streams", "gpu_streams", |x| &x.streams.gpu);
    let columns = timed(columns, "GPU graph", "gpu_graph", |x| &x.graph.gpu);
    let columns = columns.show("graph / streams", |x| num(x.gpu_ratio, 3));
    let columns = timed(columns, "host streams", "host_streams", |x| &x.streams.host);
    let columns = timed(columns, "host graph", "host_graph", |x| &x.graph.host);
    columns
        .show("graph / streams", |x| num(x.host_ratio, 3))
        .number("bound", "bound_ms", (4, 4), |x| x.bound.ms)
        .show("against its bound (the faster)", |x| x.bound.cell())
}

/// `columns` and a series' median (`<name>_ms`) and noise (`<name>_noise`).
fn timed<'a>(
    columns: Columns<'a, GraphRow>,
    heading: &'static str,
    name: &str,
    series: fn(&GraphRow) -> &Series,
) -> Columns<'a, GraphRow> {
    columns
        .number(heading, format!("{name}_ms"), (4, 4), move |x| {
            series(x).median()
        })
        .noise("noise", format!("{name}_noise"), move |x| series(x).noise())
}

impl Saved for GraphOverlapResult {
    experiment::saved_fields!(Params);

    fn stage_times(&self) -> Vec<&StageTimes> {
        self.stages.iter().collect()
    }
}

impl Experiment for GraphOverlap {
    const NAME: &'static str = "graph-overlap";
    const WORDS: &'static str = include_str!("graph_overlap.md");
    type Params = Params;
    type Result = GraphOverlapResult;
    /// A row per order and chunk count measured both ways.
    type Derived = Vec<GraphRow>;

    fn rows(r: &GraphOverlapResult, _derived: &Self::Derived) -> Vec<MeasuredRow> {
        (r.points.iter())
            .flat_map(|p| {
                let (variant, chunks, issue) = (p.variant, p.chunks, p.issue.label());
                let at = RowName::new(
                    format_args!("{}/{chunks}/{issue}", variant.short()),
                    format_args!("{} over {chunks} chunks, {issue}", variant.label()),
                );
                // The GPU's time crosses the link; the host's is its launches'.
                let host = at.then("host", "host time").median(&p.host, MS);
                [
                    at.then("gpu", "GPU time").median(&p.gpu, MS).over_link(),
                    host.controlled_by(RowControl::Launch),
                ]
            })
            .collect()
    }

    fn derive(r: &GraphOverlapResult, _checks: &[TraceChecks]) -> Vec<GraphRow> {
        let link = own_link(r);
        let (iterations, engines) = (r.run.params.iterations, r.run.device.copy_engines);
        (r.points.iter())
            .filter(|p| p.issue == Issue::Streams)
            .filter_map(|s| {
                let (variant, chunks) = (s.variant, s.chunks);
                let g = (r.points.iter()).find(|g| {
                    g.variant == variant && g.chunks == chunks && g.issue == Issue::Graph
                })?;
                let parts = pipeline_stages(&r.stages, chunks, None, link.as_ref())?;
                let faster = s.gpu.faster(&g.gpu);
                let bound = pipeline::bound(parts, chunks, iterations, engines).held(
                    faster.median(),
                    faster.noise(),
                    chunks_noise(&r.stages, chunks),
                );
                Some(GraphRow {
                    variant,
                    chunks,
                    gpu_ratio: g.gpu.median() / s.gpu.median(),
                    host_ratio: g.host.median() / s.host.median(),
                    bound,
                    streams: s.clone(),
                    graph: g.clone(),
                })
            })
            .collect()
    }

    fn tables(_r: &Self::Result, derived: &Self::Derived, _cuda: Option<With<Self>>) -> Vec<Table> {
        vec![columns().table(Some("medians, ms per iteration".into()), derived)]
    }

    fn csv(_r: &GraphOverlapResult, derived: &Self::Derived) -> Vec<Csv> {
        vec![Csv::main(columns().csv(derived))]
    }

    /// graph-overlap: host and GPU time per iteration, stream issue against graph replay.
    fn figures(_r: &GraphOverlapResult, a: &Self::Derived) -> Vec<FigureModel> {
        let labels: Vec<String> = (a.iter())
            .map(|r| format!("{} ×{}", r.variant.short(), r.chunks))
            .collect();
        let chart_of = |title: &str, y_label: &str, side: fn(&GraphPoint) -> &Series| {
            let x = XAxis::Categories(labels.clone());
            let mut c = blank(title.into(), "order × chunks", y_label, x, YScale::Log);
            let streams = a.iter().map(|r| side(&r.streams).median()).collect();
            let graph = a.iter().map(|r| side(&r.graph).median()).collect();
            c.bars
                .push(bars("issued on streams", PALETTE[0], streams, None));
            c.bars.push(bars("replayed graph", PALETTE[1], graph, None));
            c
        };
        let host = chart_of(
            "graph-overlap: host time per iteration (the CPU's share)",
            "host ms per iteration",
            |p| &p.host,
        );
        let mut gpu = chart_of(
            "graph-overlap: GPU time per iteration, and its bound",
            "GPU ms per iteration",
            |p| &p.gpu,
        );
        // The GPU times differ by a few percent: a linear axis from 0 shows them as they are.
        gpu.y_scale = YScale::Linear;
        let bound = (a.iter().enumerate()).map(|(i, r)| (i as f64, r.bound.ms));
        gpu.lines
            .push(line("bound", BOUND_COLOR, true, bound.collect()));
        vec![
            FigureModel::chart("graph-overlap-host.svg".into(), host),
            FigureModel::chart("graph-overlap-gpu.svg".into(), gpu),
        ]
    }

    /// The headline: graph over streams at the fewest chunks (GPU time) and the most
    /// (host time), each the worse order's, and whether the two sides' noise covers it.
    fn summary(r: &GraphOverlapResult, a: &Self::Derived) -> Summary {
        let chunks = &r.run.params.chunks;
        type Side = (fn(&GraphRow) -> f64, fn(&GraphPoint) -> &Series);
        let worst = |chunks: Option<&usize>, (ratio, side): Side| {
            let x = (a.iter())
                .filter(|x| Some(&x.chunks) == chunks)
                .max_by(|x, y| ratio(x).total_cmp(&ratio(y)))?;
            let (s, g) = (side(&x.streams), side(&x.graph));
            let within = !stats::beyond_noise(s.median(), s.noise(), g.median(), g.noise());
            Some((ratio(x), within))
        };
        let gpu = worst(chunks.iter().min(), (|x| x.gpu_ratio, |p| &p.gpu));
        let host = worst(chunks.iter().max(), (|x| x.host_ratio, |p| &p.host));
        Summary::of(&json!({
            "verified": r.run.verification.passed,
            "gpu_ratio_fewest_chunks": gpu.map(|x| x.0),
            "host_ratio_most_chunks": host.map(|x| x.0),
            "gpu_ratio_within_noise": gpu.map(|x| x.1),
            "host_ratio_within_noise": host.map(|x| x.1),
        }))
    }
}
