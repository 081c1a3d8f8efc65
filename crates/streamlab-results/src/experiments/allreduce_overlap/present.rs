//! allreduce-overlap's tables, CSV and measured rows (one declaration each for the
//! all-reduces alone and for the overlap rows), and its two charts.
use super::{AllreduceAnalysis, AllreduceOverlapResult, Budget, OverlapRow, ReduceRow};
use crate::experiments::prelude::*;

/// A point's name among the measured rows: its budget and bucket size.
fn point_name(budget: Budget, bucket_mib: f64) -> RowName {
    RowName::new(
        format!("{}/{bucket_mib}MiB", String::from(budget)),
        format!("{}, {bucket_mib} MiB buckets", budget.label()),
    )
}

/// A measured row `key` in ms, said as "`words`" under the table row's name.
fn item<'s>(key: &'s str, words: &'s str) -> (Option<(&'s str, &'s str)>, &'s str) {
    (Some((key, words)), MS)
}

pub(super) fn reduce_columns<'a>() -> Columns<'a, ReduceRow> {
    Columns::new()
        .text("budget", "budget", |x: &ReduceRow| x.budget.label())
        .number("bucket MiB", "bucket_mib", (0, 3), |x| x.bucket_mib)
        .named(|x| point_name(x.budget, x.bucket_mib), |_, _, row| row)
        .median(
            ("in place, ms", "in_place_ms"),
            (3, 6),
            item("in-place", "all-reduces alone, in place"),
            |x| Some(&x.samples[0]),
        )
        .median(
            ("out of place, ms", "out_of_place_ms"),
            (3, 6),
            item("out-of-place", "all-reduces alone, out of place"),
            |x| Some(&x.samples[1]),
        )
        .number("ms per bucket", "bucket_ms", (4, 6), |x| x.bucket_ms)
        .number("busbw in place, GB/s", "busbw_in_place", (1, 3), |x| {
            x.busbw_in_place
        })
        .number(
            "busbw out of place, GB/s",
            "busbw_out_of_place",
            (1, 3),
            |x| x.busbw_out_of_place,
        )
}

pub(super) fn overlap_columns<'a>() -> Columns<'a, OverlapRow> {
    Columns::new()
        .text("budget", "budget", |x: &OverlapRow| x.budget.label())
        .number("bucket MiB", "bucket_mib", (0, 3), |x| x.bucket_mib)
        .number("C : M asked", "ratio_asked", (2, 3), |x| x.ratio_asked)
        .named(
            |x| {
                point_name(x.budget, x.bucket_mib).then(
                    format!("x{}", x.ratio_asked),
                    format!("compute : all-reduce {}", x.ratio_asked),
                )
            },
            |_, _, row| row,
        )
        .number("C : M", "ratio", (2, 3), |x| x.ratio)
        .median(
            ("compute C, ms", "compute_ms"),
            (3, 6),
            item("compute", "compute alone"),
            |x| Some(&x.samples.compute),
        )
        .number("all-reduce M, ms", "reduce_ms", (3, 6), |x| x.reduce_ms)
        .median(
            ("serialized, ms", "serialized_ms"),
            (3, 6),
            item("serialized", "serialized"),
            |x| Some(&x.samples.serialized),
        )
        .median(
            ("overlapped T, ms", "overlapped_ms"),
            (3, 6),
            item("overlapped", "overlapped"),
            |x| Some(&x.samples.overlapped),
        )
        .median(
            ("T, high priority, ms", "overlapped_high_ms"),
            (3, 6),
            item(
                "overlapped-high",
                "overlapped, communication at the greatest priority",
            ),
            |x| Some(&x.samples.overlapped_high),
        )
        // Each side beside a loop of the other: measured rows only.
        .measured(
            item("compute-interfered", "compute beside an all-reduce loop"),
            |x| Some(&x.samples.compute_interfered),
        )
        .measured(
            item("reduce-interfered", "all-reduces beside a loop of products"),
            |x| Some(&x.samples.reduce_interfered),
        )
        .number("bound, ms", "bound_ms", (3, 6), |x| x.bound_ms)
        .number("full interference, ms", "interfered_ms", (3, 6), |x| {
            x.interfered_ms
        })
        .both(
            "loops outlasted",
            |x| {
                String::from(if x.short_loops {
                    "no: estimate low"
                } else {
                    "yes"
                })
            },
            "short_loops",
            |x| x.short_loops.to_string(),
        )
        .number("hidden", "hidden", (2, 4), |x| x.hidden)
        .number("hidden, high priority", "hidden_high", (2, 4), |x| {
            x.hidden_high
        })
        .times("T / bound", "over_bound", 4, |x| x.over_bound)
}

/// The two charts: the fraction hidden against the all-reduces' bus bandwidth, a point
/// per CTA budget at the budget sweep's bucket size (the trade a user chooses on); and
/// the fraction hidden by bucket size at NCCL's default budget. A line per ratio asked.
pub(super) fn figures(r: &AllreduceOverlapResult, a: &AllreduceAnalysis) -> Vec<FigureModel> {
    let mib = f64::from(r.run.params.budget_mib);
    let mut trade = blank(
        format!(
            "allreduce-overlap: hidden against bus bandwidth, {mib} MiB buckets, a point per NCCL CTA budget"
        ),
        "all-reduce bus bandwidth alone (GB/s)",
        "fraction of the shorter side hidden",
        XAxis::Linear,
        YScale::Linear,
    );
    let mut sizes = blank(
        "allreduce-overlap: hidden by bucket size, NCCL's default budget".into(),
        "bucket (MiB)",
        "fraction of the shorter side hidden",
        XAxis::Log,
        YScale::Linear,
    );
    for (i, ratio) in r.run.params.ratios.iter().copied().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let of_ratio = || a.overlap.iter().filter(move |row| row.ratio_asked == ratio);
        let mut budget_points: Vec<(f64, f64)> = of_ratio()
            .filter(|row| row.bucket_mib == mib)
            .map(|row| (row.busbw, row.hidden))
            .collect();
        budget_points.sort_by(|x, y| x.0.total_cmp(&y.0));
        let name = format!("compute : all-reduce {ratio} asked");
        let budgets = line(name.clone(), color, false, budget_points);
        trade.lines.push(budgets);
        let size_points = of_ratio()
            .filter(|row| row.budget == Budget::Default)
            .map(|row| (row.bucket_mib, row.hidden))
            .collect();
        sizes.lines.push(line(name, color, false, size_points));
    }
    vec![
        FigureModel::chart("allreduce-overlap.svg".into(), trade),
        FigureModel::chart("allreduce-overlap-sizes.svg".into(), sizes),
    ]
}
