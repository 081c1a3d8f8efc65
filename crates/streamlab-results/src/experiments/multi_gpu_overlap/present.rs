//! How multi-gpu-overlap shows: the run and each GPU's share as tables, and its chart.
use super::MultiGpuOverlapResult;
use super::analysis::{GpuBound, MultiGpuAnalysis};
use crate::derived::pipeline::Stages;
use crate::report::chart::{BOUND_COLOR, BarSeries, PALETTE, XAxis, YScale};
use crate::report::figures::{FigureModel, blank, line};
use crate::report::table::{Columns, num};

/// The one declaration of the main table and the CSV: one row, the run.
pub(super) fn columns<'a>() -> Columns<'a, MultiGpuAnalysis> {
    Columns::new()
        .text("GPUs", "gpus", |x: &MultiGpuAnalysis| x.gpus.to_string())
        .text("streams per GPU", "streams", |x| x.streams.to_string())
        .number("all GPUs (ms)", "spread_ms", (4, 4), |x| x.spread_ms)
        .noise("noise", "spread_noise", |x| x.spread_noise)
        .number("first GPU alone (ms)", "alone_ms", (4, 4), |x| x.alone_ms)
        .noise("noise", "alone_noise", |x| x.alone_noise)
        .times("speedup", "speedup", 4, |x| x.speedup)
        .number("bound (ms)", "bound_ms", (4, 4), |x| x.bound_ms)
        .times("bound's speedup", "bound_speedup", 4, |x| x.bound_speedup)
        .number("efficiency", "efficiency", (3, 4), |x| x.efficiency)
        .show("limited by", |x| x.limit.label())
}

/// The table of each GPU's share against its own pipeline bound.
pub(super) fn gpu_columns<'a>() -> Columns<'a, GpuBound> {
    let stage = |pick: fn(&Stages) -> f64| {
        move |x: &GpuBound| x.stages.as_ref().map_or("–".into(), |s| num(pick(s), 4))
    };
    Columns::new()
        .show("GPU", |x: &GpuBound| x.ordinal.to_string())
        .show("elements", |x| x.elements.to_string())
        .show("streams", |x| x.streams.to_string())
        .show("HtoD (ms)", stage(|s| s.htod_ms))
        .show("kernels (ms)", stage(|s| s.kernel_ms))
        .show("DtoH (ms)", stage(|s| s.dtoh_ms))
        .show("both ways (ms)", stage(|s| s.both_ms))
        .show("bound (ms)", |x| {
            x.bound.map_or("–".into(), |b| num(b.ms, 4))
        })
        .show("limited by", |x| {
            x.bound
                .map_or("no elements".into(), |b| b.limiter.label().into())
        })
}

/// The two runs beside their bounds, the alone run's with its samples' spread.
pub(super) fn figures(r: &MultiGpuOverlapResult, a: &MultiGpuAnalysis) -> Vec<FigureModel> {
    let labels = vec!["first GPU alone".to_owned(), format!("{} GPUs", a.gpus)];
    let mut chart = blank(
        format!(
            "multi-gpu-overlap: ms per iteration, {} elements, {} streams per GPU",
            r.run.params.elements, r.run.params.streams
        ),
        "",
        "ms per iteration",
        XAxis::Categories(labels),
        YScale::Linear,
    );
    chart.bars.push(BarSeries {
        name: "measured (median)".into(),
        color: PALETTE[1],
        values: vec![a.alone_ms, a.spread_ms],
        whiskers: Some(vec![
            (r.alone.min(), r.alone.summary.max),
            (r.spread.min(), r.spread.summary.max),
        ]),
    });
    chart.lines.push(line(
        "bound",
        BOUND_COLOR,
        true,
        vec![(0.0, a.alone_bound.ms), (1.0, a.bound_ms)],
    ));
    vec![FigureModel::chart("multi-gpu-overlap.svg".into(), chart)]
}
