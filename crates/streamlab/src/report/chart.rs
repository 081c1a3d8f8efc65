//! The charts: which measured numbers, and which bound, each one draws (the experiments'
//! charts and the Rust-against-CUDA C++ kernel comparison).
use super::plot::{BarSeries, Level, Line, PALETTE, Plot, XAxis, YScale};
use super::svg::Stroke;
use crate::bounds::{self, Stages};
use crate::results::{
    KernelComparison, MatmulStreamsResult, MemcpyKernelResult, MemcpyKernelRow, OpKind, Quartiles,
    SincosOverlapResult, SincosVariant,
};
use crate::stats::Series;

/// Colour of each operation kind, shared by the breakdown chart and the timelines.
pub fn kind_color(kind: OpKind) -> &'static str {
    match kind {
        OpKind::HtoD => "#4e79a7",
        OpKind::Kernel => "#59a14f",
        OpKind::DtoH => "#e15759",
    }
}

/// How a model or bound is drawn over measured data.
const BOUND: Stroke = Stroke {
    color: "#222222",
    width: 2.0,
    dashed: true,
};

/// sincos-overlap's three parts, each measured alone over the whole array (means, ms).
pub fn sincos_stages(r: &SincosOverlapResult) -> Stages {
    Stages {
        htod_ms: r.htod_alone.summary.mean,
        kernel_ms: r.kernel_alone.summary.mean,
        dtoh_ms: r.dtoh_alone.summary.mean,
    }
}

/// The sincos copy-engine bound: the busiest copy engine, `max(HtoD alone, DtoH alone)`
/// with one engine per direction (means, ms).
pub fn copy_engine_bound_ms(r: &SincosOverlapResult) -> f64 {
    let s = sincos_stages(r);
    bounds::copy_engine_bound_ms(s.htod_ms, s.dtoh_ms, r.device.copy_engines)
}

/// A memcpy-kernel row's sequential parts (means, ms).
pub fn memcpy_stages(row: &MemcpyKernelRow) -> Stages {
    Stages {
        htod_ms: row.htod.summary.mean,
        kernel_ms: row.kernel.summary.mean,
        dtoh_ms: row.dtoh.summary.mean,
    }
}

/// Mean time per stream count with min–max whiskers, and the tasks-per-stream model.
pub fn matmul_streams(r: &MatmulStreamsResult) -> Plot {
    let labels = r.points.iter().map(|p| p.streams.to_string()).collect();
    let bars = BarSeries {
        name: "measured mean (min–max)".into(),
        color: PALETTE[0],
        values: r.points.iter().map(|p| p.time.summary.mean).collect(),
        whiskers: Some(r.points.iter().map(|p| min_max(&p.time)).collect()),
    };
    let model = Line {
        name: format!("model: ceil({}/s) tasks per stream", r.params.max_streams),
        stroke: BOUND,
        points: (r.points.iter().enumerate())
            .map(|(i, p)| (i as f64, p.model_ms))
            .collect(),
        markers: true,
    };
    Plot {
        title: format!(
            "matmul-streams: {} products over 1..{} streams",
            r.params.max_streams, r.params.max_streams
        ),
        x_label: "streams".into(),
        y_label: "time for all products (ms)".into(),
        x: XAxis::Categories(labels),
        y_scale: YScale::Linear,
        bars: vec![bars],
        bar_labels: false,
        stacked: false,
        lines: vec![model],
        levels: vec![],
    }
}

fn min_max(series: &Series) -> (f64, f64) {
    (series.summary.min, series.summary.max)
}

/// The stream counts measured, in the order first seen.
pub fn memcpy_stream_counts(r: &MemcpyKernelResult) -> Vec<usize> {
    let mut counts: Vec<usize> = Vec::new();
    for row in &r.rows {
        if !counts.contains(&row.streams) {
            counts.push(row.streams);
        }
    }
    counts
}

fn rows_with(r: &MemcpyKernelResult, streams: usize) -> Vec<&MemcpyKernelRow> {
    r.rows.iter().filter(|row| row.streams == streams).collect()
}

/// Speedup over the sequential version vs cycles, one line per stream count, with the
/// Amdahl ideal of the engines fully overlapped ([`bounds::amdahl_speedup`]).
pub fn memcpy_speedup(r: &MemcpyKernelResult) -> Plot {
    let counts = memcpy_stream_counts(r);
    let mut lines: Vec<Line> = (counts.iter().enumerate())
        .map(|(k, &s)| Line {
            name: format!("{s} streams"),
            stroke: Stroke::solid(PALETTE[k % PALETTE.len()], 2.0),
            points: (rows_with(r, s).iter())
                .map(|row| (f64::from(row.cycles), row.speedup))
                .collect(),
            markers: true,
        })
        .collect();
    if let Some(&first) = counts.first() {
        lines.push(Line {
            name: "Amdahl ideal".into(),
            stroke: BOUND,
            points: (rows_with(r, first).iter())
                .map(|row| {
                    let ideal = bounds::amdahl_speedup(memcpy_stages(row), r.device.copy_engines);
                    (f64::from(row.cycles), ideal)
                })
                .collect(),
            markers: false,
        });
    }
    Plot {
        title: format!(
            "memcpy-kernel: speedup of the streamed version ({} Mi ints)",
            r.params.size
        ),
        x_label: "AddKernel cycles".into(),
        y_label: "speedup over sequential (×)".into(),
        x: XAxis::Linear,
        y_scale: YScale::Linear,
        bars: vec![],
        bar_labels: false,
        stacked: false,
        lines,
        levels: vec![],
    }
}

/// The sequential HtoD, kernel and DtoH means stacked per cycles value (rows of the
/// first stream count measured).
pub fn memcpy_breakdown(r: &MemcpyKernelResult) -> Plot {
    let rows = memcpy_stream_counts(r)
        .first()
        .map_or_else(Vec::new, |&s| rows_with(r, s));
    let part = |kind: OpKind, pick: fn(&MemcpyKernelRow) -> f64| BarSeries {
        name: format!("{} (sequential)", kind.label()),
        color: kind_color(kind),
        values: rows.iter().map(|row| pick(row)).collect(),
        whiskers: None,
    };
    Plot {
        title: "memcpy-kernel: sequential time by part".into(),
        x_label: "AddKernel cycles".into(),
        y_label: "time (ms)".into(),
        x: XAxis::Categories(rows.iter().map(|row| row.cycles.to_string()).collect()),
        y_scale: YScale::Linear,
        bar_labels: false,
        bars: vec![
            part(OpKind::HtoD, |row| row.htod.summary.mean),
            part(OpKind::Kernel, |row| row.kernel.summary.mean),
            part(OpKind::DtoH, |row| row.dtoh.summary.mean),
        ],
        stacked: true,
        lines: vec![],
        levels: vec![],
    }
}

/// The stream counts of the sincos sweep, ascending.
pub fn sincos_stream_counts(r: &SincosOverlapResult) -> Vec<usize> {
    let mut counts: Vec<usize> = r.points.iter().map(|p| p.streams).collect();
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// The mean time of `variant` at `streams`, NaN where it was not measured.
pub fn sincos_mean(r: &SincosOverlapResult, variant: SincosVariant, streams: usize) -> f64 {
    r.points
        .iter()
        .find(|p| p.variant == variant && p.streams == streams)
        .map_or(f64::NAN, |p| p.time.summary.mean)
}

/// Sequential, async 1 and async 2 per stream count, with the copy-engine bound and,
/// where the bidirectional rate was measured, the floor of both directions at once
/// (`bidirectional_floor_ms`).
pub fn sincos_overlap(r: &SincosOverlapResult, bidirectional_floor_ms: Option<f64>) -> Plot {
    let counts = sincos_stream_counts(r);
    let variant = |v: SincosVariant, color| BarSeries {
        name: v.label().into(),
        color,
        values: counts.iter().map(|&s| sincos_mean(r, v, s)).collect(),
        whiskers: None,
    };
    let sequential = BarSeries {
        name: "sequential".into(),
        color: "#9c9c9c",
        values: vec![r.sequential.summary.mean; counts.len()],
        whiskers: None,
    };
    Plot {
        title: format!(
            "sincos-overlap: {} floats, transfer and execution",
            r.params.elements
        ),
        x_label: "streams".into(),
        y_label: "time per iteration (ms)".into(),
        x: XAxis::Categories(counts.iter().map(ToString::to_string).collect()),
        y_scale: YScale::Linear,
        bar_labels: false,
        bars: vec![
            sequential,
            variant(SincosVariant::Async1, PALETTE[0]),
            variant(SincosVariant::Async2, PALETTE[1]),
        ],
        stacked: false,
        lines: vec![],
        levels: std::iter::once(Level {
            name: "copy-engine bound".into(),
            stroke: BOUND,
            y: copy_engine_bound_ms(r),
        })
        .chain(bidirectional_floor_ms.map(|y| Level {
            name: "both directions at once (measured rate)".into(),
            stroke: Stroke {
                color: PALETTE[3],
                ..BOUND
            },
            y,
        }))
        .collect(),
    }
}

/// Median time per launch of each kernel case as Rust and as CUDA C++, side by side with
/// quartile whiskers, on a log axis (the cases span three decades).
pub fn kernel_comparison(c: &KernelComparison) -> Plot {
    let series =
        |name: &str, color, pick: fn(&crate::results::KernelTiming) -> &Quartiles| BarSeries {
            name: name.into(),
            color,
            values: c.kernels.iter().map(|k| pick(k).median).collect(),
            whiskers: Some(
                (c.kernels.iter())
                    .map(|k| (pick(k).q1, pick(k).q3))
                    .collect(),
            ),
        };
    Plot {
        title: "Rust kernels against CUDA C++: median time per launch".into(),
        x_label: "kernel case (whiskers: lower to upper quartile)".into(),
        y_label: "time per launch (ms, log scale)".into(),
        x: XAxis::Categories(c.kernels.iter().map(|k| k.kernel.clone()).collect()),
        y_scale: YScale::Log,
        bars: vec![
            series("Rust", PALETTE[0], |k| &k.rust_quartiles),
            series("CUDA C++", PALETTE[1], |k| &k.cuda_quartiles),
        ],
        bar_labels: true,
        stacked: false,
        lines: vec![],
        levels: vec![],
    }
}
