//! How multi-gpu-overlap shows: the run and each GPU's share as tables, what its bounds
//! say in words, and its chart.
use super::MultiGpuOverlapResult;
use super::analysis::{GpuBound, MultiGpuAnalysis};
use crate::experiments::prelude::*;

/// Half the width of a bar on the chart's category axis (the plots' bar group).
const HALF_BAR: f64 = 0.4;

/// A row of the main table: the run and what is derived from it.
pub(super) type Run<'r> = (&'r MultiGpuOverlapResult, &'r MultiGpuAnalysis);

/// The one declaration of the main table and the CSV: one row, the run.
pub(super) fn columns<'a>() -> Columns<'a, Run<'a>> {
    Columns::new()
        .text("GPUs", "gpus", |(_, a): &Run| a.gpus.to_string())
        .text("streams per GPU", "streams", |(_, a)| a.streams.to_string())
        .number("all GPUs (ms)", "spread_ms", (4, 4), |(r, _)| {
            r.spread.median()
        })
        .noise("noise", "spread_noise", |(r, _)| r.spread.noise())
        .number("first GPU alone (ms)", "alone_ms", (4, 4), |(r, _)| {
            r.alone.median()
        })
        .noise("noise", "alone_noise", |(r, _)| r.alone.noise())
        .times("speedup", "speedup", 4, |(_, a)| a.speedup)
        .number("bound (ms)", "bound_ms", (4, 4), |(_, a)| a.bound.ms)
        .times("all GPUs / bound", "spread_over_bound", 4, |(_, a)| {
            a.spread_over_bound
        })
        .times("bound's speedup", "bound_speedup", 4, |(_, a)| {
            a.bound_speedup
        })
        .number("efficiency", "efficiency", (3, 4), |(_, a)| a.efficiency)
        .show("limited by", |(_, a)| a.limit.label())
        .both(
            "against their bounds",
            |(_, a)| against_bounds(a),
            "beyond_bound",
            |(_, a)| a.beyond_bound.to_string(),
        )
}

/// Where each run sits under its bound, if it does, and the flag of a run beyond it.
fn against_bounds(x: &MultiGpuAnalysis) -> String {
    let mark = |run: &str, b: &Bound| (b.under.is_some()).then(|| format!("{run}: {}", b.mark()));
    crate::derived::pipeline::bound_cell(
        [mark("all GPUs", &x.bound), mark("alone", &x.alone_bound)]
            .into_iter()
            .flatten()
            .chain(x.beyond_bound.then(|| "flagged: no finding".to_owned())),
    )
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

/// The two runs, each beside its own bound (a dash across its bar), the bound as built
/// marked where a run beat it.
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
    chart.bars.push(bars(
        "measured (median)",
        PALETTE[1],
        vec![r.alone.median(), r.spread.median()],
        Some(vec![
            (r.alone.min(), r.alone.summary.max),
            (r.spread.min(), r.spread.summary.max),
        ]),
    ));
    let bounds = [&a.alone_bound, &a.bound];
    // A dash across each bar at its own bound, broken between the bars.
    let dashes = (bounds.iter().enumerate())
        .flat_map(|(i, b)| {
            let (x, y) = (i as f64, b.ms);
            [(x - HALF_BAR, y), (x + HALF_BAR, y), (x + 0.5, f64::NAN)]
        })
        .collect();
    chart
        .lines
        .push(line("each run's bound", BOUND_COLOR, true, dashes));
    let built: Vec<(f64, f64)> = (bounds.iter().enumerate())
        .filter_map(|(i, b)| Some((i as f64, b.built_ms?)))
        .collect();
    if !built.is_empty() {
        chart
            .lines
            .push(points("bound as built, beaten", PALETTE[3], built));
    }
    vec![FigureModel::chart("multi-gpu-overlap.svg".into(), chart)]
}
