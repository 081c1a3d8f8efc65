//! How memcpy-kernel shows: its table's columns (the C++ kernels' beside the Rust ones)
//! and its charts.
use super::analysis::{MemcpyAnalysis, MemcpyRow};
use crate::experiments::prelude::*;
use crate::report::table::under_csv;

/// The one declaration of the tables (one per stream count) and the CSV (every row, the
/// Handbook's columns), the CUDA C++ twins' concurrent time beside the Rust one where
/// `cuda` ran.
pub(super) fn columns(cuda: Option<&MemcpyAnalysis>) -> Columns<'_, MemcpyRow> {
    let cpp = move |x: &MemcpyRow| {
        (cuda?.rows.iter())
            .find(|y| y.streams == x.streams && y.cycles == x.cycles)
            .map(|y| y.saved.concurrent.median())
    };
    Columns::new()
        .named(
            |x: &MemcpyRow| {
                RowName::new(
                    format_args!("{}/{}", x.streams, x.cycles),
                    format_args!("{} streams, {} cycles", x.streams, x.cycles),
                )
            },
            |_, _, row| row.over_link(),
        )
        .raw("Streams", |x: &MemcpyRow| x.streams.to_string())
        .text("Cycles", "Cycles", |x| x.cycles.to_string())
        .number("HtoD", "HtoD", (2, 4), |x| x.saved.htod.median())
        .number("Kernel", "Kernel", (2, 4), |x| x.saved.kernel.median())
        .number("DtoH", "DtoH", (2, 4), |x| x.saved.dtoh.median())
        .median(
            ("Total", "Total"),
            (2, 4),
            (Some(("sequential", "sequential")), MS),
            |x| Some(&x.saved.total),
        )
        .median(
            ("Concurrent", "Concurrent"),
            (2, 4),
            (Some(("streamed", "streamed")), MS),
            |x| Some(&x.saved.concurrent),
        )
        .noise_of("Noise", "Noise")
        .times("Speedup", "Speedup", 3, |x| x.speedup)
        .number("Bound", "Bound", (2, 4), |x| x.bound.ms)
        .times("Bound speedup", "BoundSpeedup", 3, |x| x.bound_speedup)
        .show("Efficiency", |x| num(x.efficiency, 3))
        .then(cuda.is_some(), |c| {
            c.show("C++ Concurrent", move |x| {
                cpp(x).map_or("–".into(), |v| num(v, 2))
            })
        })
        .both(
            "against its bound",
            |x| x.bound.cell(),
            "BeyondBound",
            |x| x.bound.lowered().to_string(),
        )
        .raw("UnderBound", |x| under_csv(x.bound.under))
}

/// Each row's (cycles, `y`), a line's points.
fn by_cycles(rows: &[&MemcpyRow], y: fn(&MemcpyRow) -> f64) -> Vec<(f64, f64)> {
    rows.iter().map(|r| (f64::from(r.cycles), y(r))).collect()
}

/// memcpy-kernel: speedup against cycles per stream count beside its bound, and the
/// stage times of the headline stream count.
pub(super) fn figures(a: &MemcpyAnalysis) -> Vec<FigureModel> {
    let mut speedup = blank(
        "memcpy-kernel: streamed speedup over sequential, and its bound (Rust kernels)".into(),
        "cycles",
        "speedup",
        XAxis::Linear,
        YScale::Linear,
    );
    type Y = fn(&MemcpyRow) -> f64;
    for (i, &streams) in a.stream_counts.iter().enumerate() {
        let rows: Vec<_> = a.rows.iter().filter(|x| x.streams == streams).collect();
        let lines: [(&str, bool, Y); 2] = [
            ("", false, |r| r.speedup),
            (": bound", true, |r| r.bound_speedup),
        ];
        for (name, dashed, y) in lines {
            let (name, color) = (
                format!("{streams} streams{name}"),
                PALETTE[i % PALETTE.len()],
            );
            (speedup.lines).push(line(name, color, dashed, by_cycles(&rows, y)));
        }
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
    let rows: Vec<_> = (a.rows.iter())
        .filter(|x| x.streams == a.headline_streams)
        .collect();
    let series: [(&str, _, bool, Y); 6] = [
        ("HtoD", PALETTE[0], false, |r| r.saved.htod.median()),
        ("kernel", PALETTE[2], false, |r| r.saved.kernel.median()),
        // Dashed, so that HtoD shows where the two copies take the same time.
        ("DtoH", PALETTE[3], true, |r| r.saved.dtoh.median()),
        ("sequential total", SEQUENTIAL_COLOR, false, |r| {
            r.saved.total.median()
        }),
        ("streamed", PALETTE[4], false, |r| {
            r.saved.concurrent.median()
        }),
        ("streamed bound", BOUND_COLOR, true, |r| r.bound.ms),
    ];
    for (name, color, dashed, y) in series {
        stages
            .lines
            .push(line(name, color, dashed, by_cycles(&rows, y)));
    }
    vec![
        FigureModel::chart("memcpy-kernel-speedup.svg".into(), speedup),
        FigureModel::chart("memcpy-kernel-stages.svg".into(), stages),
    ]
}
