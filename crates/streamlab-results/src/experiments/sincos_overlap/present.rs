//! How sincos-overlap shows: its table's columns (the C++ kernels' and host's beside the
//! Rust ones) and its charts.
use super::{Ratio, SincosAnalysis, SincosConfig, SincosOverlapResult};
use crate::experiments::prelude::*;
use crate::report::chart::LineSeries;
use crate::report::table::{ratio, under_csv};

/// The columns of a result measured with `set`, the C++ kernels' beside them where
/// `cuda` ran; `hosts`: with the CUDA C++ host twin's and the traced rounds' columns
/// (runs that have them: [`SincosAnalysis::has_hosts`]).
pub(super) fn columns(
    set: KernelSet,
    cuda: Option<&SincosAnalysis>,
    hosts: bool,
) -> Columns<'_, SincosConfig> {
    // The C++ kernels' row of the same configuration.
    let cpp = move |x: &SincosConfig| {
        (cuda?.configs.iter()).find(|y| y.variant == x.variant && y.streams == x.streams)
    };
    Columns::<SincosConfig>::new()
        .text("variant", "variant", |x| x.variant.label().into())
        .text("streams", "streams", |x| x.streams.to_string())
        // "seq", or its order and streams.
        .named(
            |x| match x.variant {
                IssueOrder::Sequential => RowName::new("seq", x.variant.label()),
                v => RowName::new(
                    format_args!("{}/{}", v.short(), x.streams),
                    format_args!("{} with {} streams", v.label(), x.streams),
                ),
            },
            |_, _, row| row.over_link(),
        )
        .median((set.label(), "median_ms"), (4, 4), (None, MS), |x| {
            Some(&x.point.time)
        })
        .noise_of("noise", "noise")
        .then(cuda.is_some(), |c| {
            c.show("C++ kernels", move |x| {
                cpp(x).map_or("–".into(), |y| num(y.median_ms, 4))
            })
            .show("noise", move |x| {
                cpp(x).map_or("–".into(), |y| noise(y.noise))
            })
            .show("Rust / C++ kernels", move |x| {
                ratio(x.median_ms, cpp(x).map(|y| y.median_ms))
            })
        })
        .then(hosts, |c| {
            let shown = |r: Ratio| (r.ratio, plus_minus(r.ratio, r.noise, 3));
            c.optional(("C++ host", "cpp_host_ms"), |x| {
                (x.point.cpp_host.as_ref())
                    .map(|s| (s.median(), plus_minus(s.median(), s.noise(), 4)))
            })
            .optional(
                ("Rust host / C++ host", "rust_host_over_cpp_host"),
                move |x| x.rust_host_over_cpp_host.map(shown),
            )
            .optional(
                ("traced rounds / untraced", "traced_over_untraced"),
                move |x| x.traced_over_untraced.map(shown),
            )
        })
        .number("bound", "bound_ms", (4, 4), |x| x.bound.ms)
        .show("limited by", |x| x.bound.limiter.label().into())
        .number("efficiency", "efficiency", (3, 4), |x| x.efficiency)
        .optional(("busiest bound (traced)", "busiest_bound_ms"), |x| {
            let b = x.busiest_bound?;
            let shown = plus_minus(b.ms, b.noise, 4);
            Some((b.ms, format!("{shown} ({})", b.resource.label())))
        })
        .optional(("measured / busiest", "over_busiest"), |x| {
            (x.busiest_bound).map(|b| (b.timed_over_bound, num(b.timed_over_bound, 3)))
        })
        .both(
            "against its bounds",
            |x| {
                // A row under its busiest bound has one.
                let traced = (x.busiest_bound.zip(x.under_busiest_bound)).map(|(b, u)| {
                    format!("traced: {} (bound's noise {})", u.label(), noise(b.noise))
                });
                pipeline::bound_cell([x.bound.mark(), traced.unwrap_or_default()])
            },
            "beyond_bound",
            |x| x.bound.lowered().to_string(),
        )
        .raw("under_bound", |x| under_csv(x.bound.under))
        .raw("under_busiest_bound", |x| under_csv(x.under_busiest_bound))
}

/// "1.2345 ± 0.8%": `value` to `decimals` decimals, with its relative noise.
fn plus_minus(value: f64, relative: f64, decimals: usize) -> String {
    format!("{} ± {}", num(value, decimals), noise(relative))
}

/// sincos-overlap: time per iteration of every configuration (median bars, whiskers
/// from the fastest to the slowest batch), with each stream count's bound.
pub(super) fn figures(r: &SincosOverlapResult, a: &SincosAnalysis) -> Vec<FigureModel> {
    // Sequential, then the asynchronous stream counts ascending (the configurations' order).
    let category = |c: &SincosConfig| match c.variant {
        IssueOrder::Sequential => "sequential".to_owned(),
        _ => format!("{} streams", c.streams),
    };
    let mut labels = vec!["sequential".to_owned()];
    labels.extend(a.configs.iter().map(category));
    labels.dedup();
    let slot_of = |c: &SincosConfig| labels.iter().position(|l| *l == category(c));
    let mut chart = blank(
        format!(
            "sincos-overlap: 2^{} floats, time per iteration (Rust kernels)",
            r.run.params.elements.max(1).ilog2()
        ),
        "schedule",
        "ms per iteration",
        XAxis::Categories(labels.clone()),
        YScale::Linear,
    );
    let variants = [
        (IssueOrder::Sequential, SEQUENTIAL_COLOR),
        (IssueOrder::Async1, PALETTE[0]),
        (IssueOrder::Async2, PALETTE[1]),
    ];
    for (variant, color) in variants {
        let mut values = vec![f64::NAN; labels.len()];
        let mut whiskers = vec![(f64::NAN, f64::NAN); labels.len()];
        for c in a.configs.iter().filter(|c| c.variant == variant) {
            if let Some(slot) = slot_of(c) {
                values[slot] = c.median_ms;
                whiskers[slot] = (c.point.time.min(), c.point.time.summary.max);
            }
        }
        let shown = bars(variant.label(), color, values, Some(whiskers));
        chart.bars.push(shown);
    }
    let bound: Vec<(f64, f64)> = (a.configs.iter())
        .filter(|c| c.variant != IssueOrder::Async2)
        .filter_map(|c| Some((slot_of(c)? as f64, c.bound.ms)))
        .collect();
    chart.lines.push(LineSeries {
        markers: true,
        ..line("bound", BOUND_COLOR, true, bound)
    });
    vec![FigureModel::chart("sincos-overlap.svg".into(), chart)]
}
