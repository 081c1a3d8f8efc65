//! Which charts each experiment draws, as chart models ([`super::chart`]) built from its
//! saved result and derived numbers: every bar, line, bound and cell value here is read
//! from [`crate::derived`] or from the raw samples. [`super::plot`] draws them.
use super::chart::{
    BOUND_COLOR, BarSeries, Chart, HeatMap, Level, LineSeries, PALETTE, SEQUENTIAL_COLOR, XAxis,
    YScale,
};
use crate::derived::compare_kernels::ComparisonAnalysis;
use crate::derived::graph_overlap::GraphAnalysis;
use crate::derived::kernel_concurrency::ConcurrencyAnalysis;
use crate::derived::launch_overhead::LaunchAnalysis;
use crate::derived::mapped::MappedAnalysis;
use crate::derived::matmul_streams::MatmulAnalysis;
use crate::derived::memcpy_kernel::MemcpyAnalysis;
use crate::derived::overlap::OverlapAnalysis;
use crate::derived::overlap_map::{MapAnalysis, PAYOFF};
use crate::derived::sincos_overlap::SincosAnalysis;
use crate::saved::KernelForm;
use crate::saved::sincos_overlap::{SincosOverlapResult, SincosVariant};

/// What a figure draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Drawing {
    Chart(Chart),
    HeatMap(HeatMap),
}

/// One chart of the report, written to `file`.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureModel {
    pub file: String,
    pub drawing: Drawing,
}

impl FigureModel {
    fn chart(file: String, chart: Chart) -> FigureModel {
        FigureModel {
            file,
            drawing: Drawing::Chart(chart),
        }
    }

    pub fn title(&self) -> &str {
        match &self.drawing {
            Drawing::Chart(c) => &c.title,
            Drawing::HeatMap(h) => &h.title,
        }
    }
}

fn blank(title: String, x_label: &str, y_label: &str, x: XAxis, y_scale: YScale) -> Chart {
    Chart {
        title,
        x_label: x_label.to_owned(),
        y_label: y_label.to_owned(),
        x,
        y_scale,
        bars: Vec::new(),
        stacked: false,
        lines: Vec::new(),
        levels: Vec::new(),
    }
}

fn line(
    name: impl Into<String>,
    color: &'static str,
    dashed: bool,
    points: Vec<(f64, f64)>,
) -> LineSeries {
    LineSeries {
        name: name.into(),
        color,
        dashed,
        markers: !dashed,
        points,
    }
}

/// compare-kernels: Rust time over CUDA C++ time per kernel case, tuned and plain.
pub fn compare_kernels(a: &ComparisonAnalysis) -> Vec<FigureModel> {
    let mut cases: Vec<(String, String)> = Vec::new();
    for c in &a.cases {
        let key = (c.kernel.clone(), c.case.clone());
        if !cases.contains(&key) {
            cases.push(key);
        }
    }
    let ratio = |key: &(String, String), form: KernelForm| {
        (a.cases.iter())
            .find(|c| (&c.kernel, &c.case) == (&key.0, &key.1) && c.form.is_none_or(|f| f == form))
            .map_or(f64::NAN, |c| c.ratio)
    };
    let mut chart = blank(
        "Rust kernels against their CUDA C++ twins (median time ratio; below 1: Rust faster)"
            .into(),
        "kernel",
        "Rust time / CUDA C++ time",
        XAxis::Categories(
            (cases.iter())
                .map(|(k, case)| {
                    if case.is_empty() {
                        k.clone()
                    } else {
                        format!("{k} {case}")
                    }
                })
                .collect(),
        ),
        YScale::Log,
    );
    for (i, form) in [KernelForm::Tuned, KernelForm::Plain]
        .into_iter()
        .enumerate()
    {
        chart.bars.push(BarSeries {
            name: format!("{} Rust / {} C++", form.label(), form.label()),
            color: PALETTE[i],
            values: cases.iter().map(|key| ratio(key, form)).collect(),
            whiskers: None,
        });
    }
    chart.levels.push(Level {
        name: "same time".into(),
        color: BOUND_COLOR,
        y: 1.0,
    });
    vec![FigureModel::chart("compare-kernels.svg".into(), chart)]
}

/// sincos-overlap: time per iteration of every configuration (median bars, whiskers
/// from the fastest to the slowest batch), with each stream count's bound.
pub fn sincos_overlap(r: &SincosOverlapResult, a: &SincosAnalysis) -> Vec<FigureModel> {
    let mut labels = vec!["sequential".to_owned()];
    labels.extend(a.stream_counts.iter().map(|s| format!("{s} streams")));
    let slot_of = |variant: SincosVariant, streams: usize| match variant {
        SincosVariant::Sequential => Some(0),
        _ => a
            .stream_counts
            .iter()
            .position(|&s| s == streams)
            .map(|i| i + 1),
    };
    let mut chart = blank(
        format!(
            "sincos-overlap: 2^{} floats, time per iteration (Rust kernels)",
            r.params.elements.max(1).ilog2()
        ),
        "schedule",
        "ms per iteration",
        XAxis::Categories(labels.clone()),
        YScale::Linear,
    );
    let variants = [
        (SincosVariant::Sequential, SEQUENTIAL_COLOR),
        (SincosVariant::Async1, PALETTE[0]),
        (SincosVariant::Async2, PALETTE[1]),
    ];
    for (variant, color) in variants {
        let mut values = vec![f64::NAN; labels.len()];
        let mut whiskers = vec![(f64::NAN, f64::NAN); labels.len()];
        for p in r.points.iter().filter(|p| p.variant == variant) {
            if let (Some(slot), Some(c)) =
                (slot_of(variant, p.streams), a.config(variant, p.streams))
            {
                values[slot] = c.median_ms;
                whiskers[slot] = (p.time.min(), p.time.summary.max);
            }
        }
        chart.bars.push(BarSeries {
            name: variant.label().to_owned(),
            color,
            values,
            whiskers: Some(whiskers),
        });
    }
    let bound: Vec<(f64, f64)> = (a.configs.iter())
        .filter(|c| c.variant != SincosVariant::Async2)
        .filter_map(|c| Some((slot_of(c.variant, c.streams)? as f64, c.bound.ms)))
        .collect();
    chart.lines.push(LineSeries {
        markers: true,
        ..line("bound", BOUND_COLOR, true, bound)
    });
    vec![FigureModel::chart("sincos-overlap.svg".into(), chart)]
}

/// matmul-streams: median time per stream count with whiskers over the trials, and the
/// tasks-per-stream model.
pub fn matmul_streams(a: &MatmulAnalysis) -> Vec<FigureModel> {
    let mut chart = blank(
        "matmul-streams: 16 products spread over 1..16 streams (Rust kernels)".into(),
        "streams",
        "ms for all products",
        XAxis::Categories(a.points.iter().map(|p| p.streams.to_string()).collect()),
        YScale::Linear,
    );
    chart.bars.push(BarSeries {
        name: "measured (median, whiskers min–max)".into(),
        color: PALETTE[0],
        values: a.points.iter().map(|p| p.time.median()).collect(),
        whiskers: Some(
            a.points
                .iter()
                .map(|p| (p.time.min(), p.time.summary.max))
                .collect(),
        ),
    });
    chart.lines.push(line(
        "model: tasks per stream × one product",
        BOUND_COLOR,
        true,
        (a.points.iter().enumerate())
            .map(|(i, p)| (i as f64, p.model_ms))
            .collect(),
    ));
    vec![FigureModel::chart("matmul-streams.svg".into(), chart)]
}

/// memcpy-kernel: speedup against cycles per stream count beside its bound, and the
/// stage times of the headline stream count.
pub fn memcpy_kernel(a: &MemcpyAnalysis) -> Vec<FigureModel> {
    let mut speedup = blank(
        "memcpy-kernel: streamed speedup over sequential, and its bound (Rust kernels)".into(),
        "cycles",
        "speedup",
        XAxis::Linear,
        YScale::Linear,
    );
    for (i, &streams) in a.stream_counts.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let rows: Vec<_> = a.rows_with(streams).collect();
        speedup.lines.push(line(
            format!("{streams} streams"),
            color,
            false,
            rows.iter()
                .map(|r| (f64::from(r.cycles), r.speedup))
                .collect(),
        ));
        speedup.lines.push(line(
            format!("{streams} streams: bound"),
            color,
            true,
            rows.iter()
                .map(|r| (f64::from(r.cycles), r.bound_speedup))
                .collect(),
        ));
    }
    speedup.levels.push(Level {
        name: "no speedup".into(),
        color: SEQUENTIAL_COLOR,
        y: 1.0,
    });
    let mut stages = blank(
        format!(
            "memcpy-kernel: the parts and the streamed run, {} streams (medians)",
            a.headline_streams
        ),
        "cycles",
        "ms",
        XAxis::Linear,
        YScale::Linear,
    );
    let rows: Vec<_> = a.rows_with(a.headline_streams).collect();
    let series = [
        (
            "HtoD",
            PALETTE[0],
            false,
            (|r| r.htod_ms) as fn(&crate::derived::memcpy_kernel::MemcpyRow) -> f64,
        ),
        ("kernel", PALETTE[2], false, |r| r.kernel_ms),
        ("DtoH", PALETTE[3], false, |r| r.dtoh_ms),
        ("sequential total", SEQUENTIAL_COLOR, false, |r| r.total_ms),
        ("streamed", PALETTE[4], false, |r| r.concurrent_ms),
        ("streamed bound", BOUND_COLOR, true, |r| r.bound.ms),
    ];
    for (name, color, dashed, value) in series {
        stages.lines.push(line(
            name,
            color,
            dashed,
            rows.iter()
                .map(|r| (f64::from(r.cycles), value(r)))
                .collect(),
        ));
    }
    vec![
        FigureModel::chart("memcpy-kernel-speedup.svg".into(), speedup),
        FigureModel::chart("memcpy-kernel-stages.svg".into(), stages),
    ]
}

/// kernel-concurrency: time for every stream's kernels against the stream count, per
/// queue setting, with the wave model and the serial time.
pub fn kernel_concurrency(a: &ConcurrencyAnalysis, spin_us: u32) -> Vec<FigureModel> {
    let mut chart = blank(
        format!("kernel-concurrency: kernels of {spin_us} µs, two per stream"),
        "streams",
        "ms",
        XAxis::Log,
        YScale::Log,
    );
    for (i, &queues) in a.queues.iter().enumerate() {
        let rows: Vec<_> = a.rows.iter().filter(|r| r.queues == queues).collect();
        let color = PALETTE[i % PALETTE.len()];
        chart.lines.push(line(
            format!("{queues} queues: measured"),
            color,
            false,
            rows.iter()
                .map(|r| (r.streams as f64, r.concurrent_ms))
                .collect(),
        ));
        chart.lines.push(line(
            format!("{queues} queues: wave model"),
            color,
            true,
            rows.iter()
                .map(|r| (r.streams as f64, r.expected_concurrent_ms))
                .collect(),
        ));
    }
    if let Some(&first) = a.queues.first() {
        chart.lines.push(line(
            "serial (measured)",
            SEQUENTIAL_COLOR,
            false,
            (a.rows.iter())
                .filter(|r| r.queues == first)
                .map(|r| (r.streams as f64, r.serial_ms))
                .collect(),
        ));
    }
    vec![FigureModel::chart("kernel-concurrency.svg".into(), chart)]
}

/// launch-overhead: host and GPU cost per launch of each way to launch, and the
/// breakeven curve.
pub fn launch_overhead(a: &LaunchAnalysis) -> Vec<FigureModel> {
    let mut labels: Vec<String> = a
        .rows
        .iter()
        .map(|r| format!("{} streams", r.kernels.label()))
        .collect();
    labels.push("Rust graph replay".into());
    let mut costs = blank(
        "launch-overhead: an empty kernel, back to back (medians)".into(),
        "launched by",
        "µs per launch",
        XAxis::Categories(labels),
        YScale::Linear,
    );
    let host: Vec<f64> = (a.rows.iter().map(|r| r.async_host_us))
        .chain([a.graph_host_us])
        .collect();
    let gpu: Vec<f64> = (a.rows.iter().map(|r| r.async_gpu_us))
        .chain([a.graph_gpu_us])
        .collect();
    for (i, (name, values)) in [("host time to issue", host), ("GPU time", gpu)]
        .into_iter()
        .enumerate()
    {
        costs.bars.push(BarSeries {
            name: name.into(),
            color: PALETTE[i],
            values,
            whiskers: None,
        });
    }
    let mut breakeven = blank(
        "launch-overhead: time per kernel against the work it carries".into(),
        "work per kernel (µs)",
        "µs per kernel",
        XAxis::Linear,
        YScale::Linear,
    );
    breakeven.lines.push(line(
        "measured (median)",
        PALETTE[0],
        false,
        a.breakeven
            .iter()
            .map(|b| (f64::from(b.work_us), b.per_kernel_us))
            .collect(),
    ));
    breakeven.lines.push(line(
        "bound: the work, or an empty launch",
        BOUND_COLOR,
        true,
        a.breakeven
            .iter()
            .map(|b| (f64::from(b.work_us), b.bound_us))
            .collect(),
    ));
    vec![
        FigureModel::chart("launch-overhead.svg".into(), costs),
        FigureModel::chart("launch-overhead-breakeven.svg".into(), breakeven),
    ]
}

/// graph-overlap: host and GPU time per iteration, stream issue against graph replay.
pub fn graph_overlap(a: &GraphAnalysis) -> Vec<FigureModel> {
    let labels: Vec<String> = (a.rows.iter())
        .map(|r| format!("{} ×{}", short(r.variant), r.chunks))
        .collect();
    let chart_of = |title: &str,
                    y_label: &str,
                    streams: fn(&crate::derived::graph_overlap::GraphRow) -> f64,
                    graph: fn(&crate::derived::graph_overlap::GraphRow) -> f64| {
        let mut c = blank(
            title.into(),
            "order × chunks",
            y_label,
            XAxis::Categories(labels.clone()),
            YScale::Log,
        );
        c.bars.push(BarSeries {
            name: "issued on streams".into(),
            color: PALETTE[0],
            values: a.rows.iter().map(streams).collect(),
            whiskers: None,
        });
        c.bars.push(BarSeries {
            name: "replayed graph".into(),
            color: PALETTE[1],
            values: a.rows.iter().map(graph).collect(),
            whiskers: None,
        });
        c
    };
    let host = chart_of(
        "graph-overlap: host time per iteration (the CPU's share)",
        "host ms per iteration",
        |r| r.stream_host_ms,
        |r| r.graph_host_ms,
    );
    let mut gpu = chart_of(
        "graph-overlap: GPU time per iteration, and its bound",
        "GPU ms per iteration",
        |r| r.stream_gpu_ms,
        |r| r.graph_gpu_ms,
    );
    gpu.lines.push(line(
        "bound",
        BOUND_COLOR,
        true,
        a.rows
            .iter()
            .enumerate()
            .map(|(i, r)| (i as f64, r.bound.ms))
            .collect(),
    ));
    vec![
        FigureModel::chart("graph-overlap-host.svg".into(), host),
        FigureModel::chart("graph-overlap-gpu.svg".into(), gpu),
    ]
}

fn short(variant: SincosVariant) -> &'static str {
    match variant {
        SincosVariant::Sequential => "seq",
        SincosVariant::Async1 => "async 1",
        SincosVariant::Async2 => "async 2",
    }
}

/// overlap-map: the measured speedup map and the model's, each with the pay-off contour;
/// cells where the two fall on different sides of it are outlined on both.
pub fn overlap_map(a: &MapAnalysis) -> Vec<FigureModel> {
    let marked: Vec<(usize, usize)> = (a.cells.iter())
        .filter(|c| c.disagrees)
        .filter_map(|c| {
            let row = a.sizes.iter().position(|&n| n == c.elements)?;
            let column = a.stream_counts.iter().position(|&s| s == c.streams)?;
            Some((row, column))
        })
        .collect();
    let map =
        |title: String, value: fn(&crate::derived::overlap_map::MapCellAnalysis) -> f64| HeatMap {
            title,
            x_label: "streams".into(),
            y_label: "floats".into(),
            columns: a.stream_counts.iter().map(|s| s.to_string()).collect(),
            rows: a.sizes.iter().map(|n| format!("2^{}", n.ilog2())).collect(),
            values: (a.sizes.iter())
                .map(|&n| {
                    (a.stream_counts.iter())
                        .map(|&s| a.cell(n, s).map(value))
                        .collect()
                })
                .collect(),
            threshold: PAYOFF,
            unit: "×",
            marked: marked.clone(),
        };
    vec![
        FigureModel {
            file: "overlap-map-measured.svg".into(),
            drawing: Drawing::HeatMap(map(
                format!(
                    "overlap-map, measured: speedup over one stream (pays off from {PAYOFF:.2}×)"
                ),
                |c| c.speedup,
            )),
        },
        FigureModel {
            file: "overlap-map-model.svg".into(),
            drawing: Drawing::HeatMap(map(
                format!("overlap-map, model: speedup over one stream (pays off from {PAYOFF:.2}×)"),
                |c| c.model_speedup,
            )),
        },
    ]
}

/// mapped: time per iteration against size, zero-copy and streamed, each with its bound.
pub fn mapped(a: &MappedAnalysis) -> Vec<FigureModel> {
    let mut chart = blank(
        "mapped: zero-copy kernel against streamed copies".into(),
        "floats",
        "ms per iteration",
        XAxis::Log,
        YScale::Log,
    );
    let n = |r: &crate::derived::mapped::MappedRow| r.elements as f64;
    chart.lines.push(line(
        "mapped (median)",
        PALETTE[4],
        false,
        a.rows.iter().map(|r| (n(r), r.mapped_ms)).collect(),
    ));
    chart.lines.push(line(
        "mapped bound: the link",
        PALETTE[4],
        true,
        a.rows.iter().map(|r| (n(r), r.mapped_bound_ms)).collect(),
    ));
    chart.lines.push(line(
        "streamed (median)",
        PALETTE[0],
        false,
        a.rows.iter().map(|r| (n(r), r.streamed_ms)).collect(),
    ));
    chart.lines.push(line(
        "streamed bound: pipeline",
        PALETTE[0],
        true,
        a.rows.iter().map(|r| (n(r), r.streamed_bound_ms)).collect(),
    ));
    vec![FigureModel::chart("mapped.svg".into(), chart)]
}

/// overlap (your kernel): the best streamed speedup at each size, beside the bound's.
pub fn overlap(a: &OverlapAnalysis) -> Vec<FigureModel> {
    let mut chart = blank(
        "overlap: your kernel, best streamed configuration over sequential".into(),
        "elements",
        "speedup",
        XAxis::Log,
        YScale::Linear,
    );
    fn best(
        s: &crate::derived::overlap::OverlapSizeAnalysis,
    ) -> Option<&crate::derived::overlap::OverlapConfig> {
        s.best.map(|i| &s.configs[i])
    }
    chart.lines.push(line(
        "measured",
        PALETTE[0],
        false,
        (a.sizes.iter())
            .filter_map(|s| Some((s.elements as f64, s.sequential_ms / best(s)?.median_ms)))
            .collect(),
    ));
    chart.lines.push(line(
        "bound of that configuration",
        BOUND_COLOR,
        true,
        (a.sizes.iter())
            .filter_map(|s| Some((s.elements as f64, s.sequential_ms / best(s)?.bound.ms)))
            .collect(),
    ));
    chart.levels.push(Level {
        name: format!("pays off ({PAYOFF:.2}×)"),
        color: SEQUENTIAL_COLOR,
        y: PAYOFF,
    });
    vec![FigureModel::chart("overlap.svg".into(), chart)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derived::overlap_map::MapCellAnalysis;
    use crate::derived::pipeline::{Bound, Limiter};

    #[test]
    fn the_overlap_map_marks_disagreements_on_both_maps_and_leaves_gaps_empty() {
        let cell = |elements, streams, speedup, model_speedup: f64| MapCellAnalysis {
            elements,
            streams,
            best_ms: 1.0,
            speedup,
            model_ms: 1.0,
            model_speedup,
            disagrees: (speedup >= PAYOFF) != (model_speedup >= PAYOFF),
        };
        let a = MapAnalysis {
            sizes: vec![1 << 12, 1 << 14],
            stream_counts: vec![1, 4],
            cells: vec![
                cell(1 << 12, 1, 1.0, 1.0),
                cell(1 << 12, 4, 1.2, 0.5),
                cell(1 << 14, 4, 1.5, 1.6),
            ],
            crossovers: Vec::new(),
            htod_latency_ms: 0.0,
            dtoh_latency_ms: 0.0,
            launch_ms: 0.0,
            kernel_ms_per_element: 0.0,
        };
        let maps = overlap_map(&a);
        assert_eq!(maps.len(), 2);
        for (m, expected) in maps
            .iter()
            .zip([[Some(1.0), Some(1.2)], [Some(1.0), Some(0.5)]])
        {
            let Drawing::HeatMap(h) = &m.drawing else {
                panic!("a heat map")
            };
            assert_eq!(h.marked, vec![(0, 1)]);
            assert_eq!(h.values[0], expected.to_vec());
            assert_eq!(h.values[1][0], None);
            assert_eq!(h.rows, ["2^12", "2^14"]);
        }
    }

    #[test]
    fn graph_bars_pair_stream_issue_with_replay_and_the_bound_follows_each_row() {
        use crate::derived::graph_overlap::GraphRow;
        let row = |chunks, sh: f64, gh: f64| GraphRow {
            variant: SincosVariant::Async1,
            chunks,
            stream_gpu_ms: 3.0,
            graph_gpu_ms: 2.9,
            stream_host_ms: sh,
            graph_host_ms: gh,
            gpu_ratio: 2.9 / 3.0,
            host_ratio: gh / sh,
            bound: Bound {
                ms: 2.8,
                limiter: Limiter::BothWays,
                built_ms: None,
            },
            beyond_bound: false,
            stream_noise: 0.01,
            graph_noise: 0.01,
        };
        let figures = graph_overlap(&GraphAnalysis {
            rows: vec![row(4, 0.04, 0.02), row(64, 1.0, 0.7)],
        });
        let Drawing::Chart(host) = &figures[0].drawing else {
            panic!("a chart")
        };
        assert_eq!(
            host.x,
            XAxis::Categories(vec!["async 1 ×4".into(), "async 1 ×64".into()])
        );
        assert_eq!(host.bars[0].values, [0.04, 1.0]);
        assert_eq!(host.bars[1].values, [0.02, 0.7]);
        let Drawing::Chart(gpu) = &figures[1].drawing else {
            panic!("a chart")
        };
        assert_eq!(gpu.lines[0].points, [(0.0, 2.8), (1.0, 2.8)]);
    }
}
