//! How a kernel comparison shows: its report section (its tables from [`super::tables`]),
//! its chart and its facts in `summary.json`.
use super::analysis::{CaseRatio, ComparisonAnalysis, Measure, SweepRatio, TARGETED, span};
use super::{BATCHED_SAMPLE_MS, Cache, CompareKernels, KERNELS, KernelComparison, Origin};
use crate::experiments::prelude::*;
use std::collections::BTreeSet;

/// Rust time over CUDA C++ time per case at the write-ups' shapes (warm), in each form, on
/// a linear axis from 0. The math functions timed alone compare two libraries, not two
/// languages: they are left to their table.
pub fn figures(a: &ComparisonAnalysis) -> Vec<FigureModel> {
    let shown = |k: &&CaseRatio| {
        k.origin == Origin::Defaults && k.cache != Some(Cache::Cold) && k.max_ulps.is_none()
    };
    let shown: Vec<&CaseRatio> = a.cases.iter().filter(shown).collect();
    // A shape's cases lie together: one category each.
    let mut shapes: Vec<(&str, &str)> = (shown.iter())
        .map(|c| (c.kernel.as_str(), c.case.as_str()))
        .collect();
    shapes.dedup();
    let names = (shapes.iter()).map(|(k, case)| format!("{k} {case}").trim_end().into());
    let mut chart = blank(
        "Rust against CUDA C++ at the write-ups' shapes, each side's fastest spelling (median time ratio; below 1: Rust faster)".into(),
        "kernel",
        "Rust time / CUDA C++ time",
        XAxis::Categories(names.collect()),
        YScale::Linear,
    );
    let forms = (KernelForm::ALL.into_iter().map(Some)).chain([None]);
    for (i, form) in forms.enumerate() {
        let ratio = |&(kernel, case): &(&str, &str)| {
            let of = |c: &&&CaseRatio| c.kernel == kernel && c.case == case && c.form == form;
            shown.iter().find(of).map_or(f64::NAN, |c| c.ratio)
        };
        let values: Vec<f64> = shapes.iter().map(ratio).collect();
        if values.iter().any(|v| !v.is_nan()) {
            let name = form.map_or("one form: Rust / C++".into(), |f| Measure::Form(f).label());
            chart.bars.push(bars(name, PALETTE[i], values, None));
        }
    }
    chart.levels.push(Level {
        name: "same time".into(),
        color: BOUND_COLOR,
        y: 1.0,
    });
    vec![FigureModel::chart("compare-kernels.svg".into(), chart)]
}

/// What the section says of how it measured (fill's batch length is
/// [`BATCHED_SAMPLE_MS`]), and what its summary's sentences name beside `a`: the kernels
/// in table order, the measures held to targets over the shapes with their worst rows,
/// and the spans of those ratios at the write-ups' shapes.
pub fn words(c: &KernelComparison, a: &ComparisonAnalysis) -> Value {
    let shapes = context! {
        all => shapes(c, None),
        defaults => shapes(c, Some(Origin::Defaults)),
        tail => shapes(c, Some(Origin::Tail)),
        random => shapes(c, Some(Origin::Random)),
    };
    let tuned = (a.tuned.iter()).flat_map(|t| [t.fill, t.matmul, t.add_kernel]);
    let rows = over_shapes(a);
    // A measure's ratios at the write-ups' shapes, kernel by kernel and cache by cache.
    let write_ups =
        |m: Measure| (a.sweep.iter().filter(move |s| s.measure == m)).map(|s| s.write_up);
    context! {
        batched_ms => BATCHED_SAMPLE_MS,
        seed => c.seed,
        shapes,
        placed => (c.cases.iter()).any(|k| !k.placements.is_empty()),
        rule => Rule::within(CompareKernels::NAME).describe(),
        build => Serde(&c.cuda_build),
        kernels => Serde(&KERNELS[..3]),
        over_shapes => Serde(TARGETED.map(|m| {
            let rows: Vec<_> = rows.iter().filter(|s| s.measure == m).collect();
            (m.label(), rows)
        })),
        worst_tuned => Serde(worst_row(a, TARGETED[0])),
        worst_safe => Serde(worst_row(a, Measure::Safety)),
        // Every write-ups' shape: the sweep keeps each kernel's worst of them.
        cost_span => span(write_ups(TARGETED[0]).flatten().chain(tuned)),
        safe_span => span(write_ups(Measure::Safety).flatten()),
    }
}

/// The facts compare-kernels adds to `summary.json`.
pub const FACTS: &[&str] = &[
    "rust_over_cuda",
    "rust_over_cuda_safe",
    "rust_over_cuda_plain",
    "kernel_ratios_over_shapes",
    "math_libraries",
];

/// `measure`'s sweep row with the worst ratio, warm and cold alike: the worst of every
/// shape and cache state.
fn worst_row(a: &ComparisonAnalysis, measure: Measure) -> Option<&SweepRatio> {
    (a.sweep.iter())
        .filter(|s| s.measure == measure)
        .max_by(|x, y| x.worst.total_cmp(&y.worst))
}

/// The sweep's rows of the measures held to targets, L2 not flushed.
fn over_shapes(a: &ComparisonAnalysis) -> Vec<&SweepRatio> {
    (a.sweep.iter())
        .filter(|s| TARGETED.contains(&s.measure) && s.cache != Some(Cache::Cold))
        .collect()
}

/// The facts compare-kernels adds to `summary.json`, in the order of [`FACTS`]; its
/// words' template says them.
pub fn summary(a: &ComparisonAnalysis) -> Summary {
    let worst = worst_row(a, TARGETED[0]);
    Summary {
        overview: Overview {
            rust_over_cpp: worst.map(|w| (w.worst, "worst tuned shape".into())),
            ..Overview::default()
        },
        facts: vec![
            experiment::json(&a.tuned),
            experiment::json(&a.safe),
            experiment::json(&a.plain),
            experiment::json(&over_shapes(a)),
            experiment::json(&a.libraries),
        ],
        ..Summary::default()
    }
}

/// The distinct shapes (a kernel at a case) `c` timed, of `origin` or of any; the math
/// functions timed alone (the cases with an error in ulps) are no shape.
pub(super) fn shapes(c: &KernelComparison, origin: Option<Origin>) -> usize {
    let shapes = (c.cases.iter())
        .filter(|k| k.max_ulps.is_none() && origin.is_none_or(|o| k.origin == o))
        .map(|k| (&k.kernel, &k.case));
    shapes.collect::<BTreeSet<_>>().len()
}
