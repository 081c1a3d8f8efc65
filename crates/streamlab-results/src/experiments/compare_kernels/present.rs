//! How a kernel comparison shows: its report section (its tables from [`super::tables`]),
//! its chart and its facts in `summary.json`.
use super::analysis::{CaseRatio, ComparisonAnalysis, KernelRatios, Measure, SweepRatio};
use super::{BATCHED_SAMPLE_MS, Cache, CompareKernels, KernelComparison, Origin};
use crate::experiments::prelude::*;

/// Rust time over CUDA C++ time per case at the write-ups' shapes (warm), in each form, on
/// a linear axis from 0. The math functions timed alone compare two libraries, not two
/// languages: they are left to their table.
pub fn figures(a: &ComparisonAnalysis) -> Vec<FigureModel> {
    let shown: Vec<&CaseRatio> = (a.cases.iter())
        .filter(|k| k.origin == Origin::Defaults && k.cache != Some(Cache::Cold))
        .filter(|k| k.max_ulps.is_none())
        .collect();
    let mut cases: Vec<(&str, &str)> = Vec::new();
    for c in &shown {
        let key = (c.kernel.as_str(), c.case.as_str());
        if !cases.contains(&key) {
            cases.push(key);
        }
    }
    let ratio = |&(kernel, case): &(&str, &str), form: Option<KernelForm>| {
        (shown.iter())
            .find(|c| c.kernel == kernel && c.case == case && c.form == form)
            .map_or(f64::NAN, |c| c.ratio)
    };
    let mut chart = blank(
        "Rust against CUDA C++ at the write-ups' shapes, each side's fastest spelling (median time ratio; below 1: Rust faster)".into(),
        "kernel",
        "Rust time / CUDA C++ time",
        XAxis::Categories(
            (cases.iter())
                .map(|(k, case)| if case.is_empty() { k.to_string() } else { format!("{k} {case}") })
                .collect(),
        ),
        YScale::Linear,
    );
    let forms = (KernelForm::ALL.into_iter().map(Some)).chain([None]);
    for (i, form) in forms.enumerate() {
        let values: Vec<f64> = cases.iter().map(|key| ratio(key, form)).collect();
        if values.iter().all(|v| v.is_nan()) {
            continue;
        }
        chart.bars.push(BarSeries {
            name: form.map_or("one form: Rust / C++".into(), |f| {
                format!("{} Rust / {} C++", f.label(), f.label())
            }),
            color: PALETTE[i],
            values,
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

/// What the section says of how it measured; fill's batch length is [`BATCHED_SAMPLE_MS`].
pub fn words(c: &KernelComparison) -> Value {
    let shapes = context! {
        all => shapes(c, None),
        defaults => shapes(c, Some(Origin::Defaults)),
        tail => shapes(c, Some(Origin::Tail)),
        random => shapes(c, Some(Origin::Random)),
    };
    context! {
        batched_ms => BATCHED_SAMPLE_MS,
        seed => c.seed,
        shapes,
        placed => (c.cases.iter()).any(|k| !k.placements.is_empty()),
        rule => Rule::within(CompareKernels::NAME).describe(),
        build => Serde(&c.cuda_build),
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

/// What compare-kernels found, in words: the tuned kernels at the write-ups' shapes and
/// at their worst over `over_shapes`, and the plain ones.
fn overview(a: &ComparisonAnalysis) -> Overview {
    let worst = worst_row(a, Measure::Form(KernelForm::Tuned));
    let mut finding = Vec::new();
    let mut result = String::from("–");
    if let Some(t) = &a.tuned {
        let (lo, hi) = span(t, (f64::INFINITY, f64::NEG_INFINITY));
        let each: Vec<String> = (t.by_kernel().iter())
            .map(|(k, x)| format!("{k} {x:.2}"))
            .collect();
        finding.push(format!(
            "At the write-ups' shapes tuned Rust takes {lo:.2}–{hi:.2}× the time of the fastest C++ ({})",
            each.join(", ")
        ));
        result = format!("tuned {lo:.2}–{hi:.2}× C++");
    }
    if let Some(w) = worst {
        finding.push(format!(
            "at worst over every shape {:.2}× ({})",
            w.worst,
            worst_at(w)
        ));
    }
    if let Some(p) = &a.plain {
        let (kernel, x) = p.slowest();
        finding.push(format!(
            "written plainly, as in the write-ups, Rust's {kernel} takes {x:.2}×"
        ));
    }
    let mut finding = finding.join("; ");
    if !finding.is_empty() {
        finding.push('.');
    }
    Overview {
        finding,
        result,
        over_bound: None,
        rust_over_cpp: worst.map(|w| (w.worst, "worst tuned shape".into())),
    }
}

/// The lowest and the highest of `(lo, hi)` and the ratios of `r`.
fn span(r: &KernelRatios, (lo, hi): (f64, f64)) -> (f64, f64) {
    (r.by_kernel().iter()).fold((lo, hi), |(lo, hi), &(_, x)| (lo.min(x), hi.max(x)))
}

/// Where a sweep row's worst ratio was: its kernel and case, and the cache state where L2
/// was flushed.
fn worst_at(w: &SweepRatio) -> String {
    let mut at = match w.worst_case.as_str() {
        "" => w.kernel.clone(),
        case => format!("{}, {case}", w.kernel),
    };
    if w.cache == Some(Cache::Cold) {
        at += ", L2 flushed before each launch";
    }
    at
}

/// `measure`'s ratios over the kernels at the write-ups' shapes (lowest, highest), and its
/// worst row over every shape and cache state.
fn measured_span(a: &ComparisonAnalysis, measure: Measure) -> Option<(f64, f64, &SweepRatio)> {
    let at_write_ups: Vec<f64> = (a.sweep.iter())
        .filter(|s| s.measure == measure)
        .filter_map(|s| s.write_up)
        .collect();
    let lo = at_write_ups.iter().copied().reduce(f64::min)?;
    let hi = at_write_ups.iter().copied().reduce(f64::max)?;
    Some((lo, hi, worst_row(a, measure)?))
}

/// `measure`'s sweep row with the worst ratio, warm and cold alike: the worst of every
/// shape and cache state.
fn worst_row(a: &ComparisonAnalysis, measure: Measure) -> Option<&SweepRatio> {
    (a.sweep.iter())
        .filter(|s| s.measure == measure)
        .max_by(|x, y| x.worst.total_cmp(&y.worst))
}

/// What Rust costs, in a sentence: tuned and safe Rust each against the fastest unchecked
/// C++ of the same algorithm (at the write-ups' shapes and at the worst shape timed), and
/// Rust written plainly against C++ written plainly.
fn rust_cost(a: &ComparisonAnalysis) -> Option<String> {
    let range = |lo: f64, hi: f64| match lo == hi {
        true => times(lo),
        false => format!("{}–{}", times(lo), times(hi)),
    };
    let (mut lo, mut hi, worst) = measured_span(a, Measure::Form(KernelForm::Tuned))?;
    // Every write-ups' shape: the sweep keeps each kernel's worst of them.
    if let Some(t) = &a.tuned {
        (lo, hi) = span(t, (lo, hi));
    }
    let mut out = format!(
        "Against the fastest CUDA C++, tuned Rust takes {} its time at the write-ups' shapes and {} at the worst shape timed ({})",
        range(lo, hi),
        times(worst.worst),
        worst_at(worst)
    );
    if let Some((lo, hi, worst)) = measured_span(a, Measure::Safety) {
        out += &format!(
            "; safe Rust, with no unsafe in its kernels, {} against the fastest unchecked C++ ({} at worst, {})",
            range(lo, hi),
            times(worst.worst),
            worst_at(worst)
        );
    }
    if let Some(p) = &a.plain {
        let (kernel, x) = p.slowest();
        out += &format!(
            "; written plainly, as the write-ups write their C++, Rust's {kernel} takes {} the plain C++'s time",
            times(x)
        );
    }
    out.push('.');
    Some(out)
}

/// The facts compare-kernels adds to `summary.json`, in the order of [`FACTS`], and their
/// lines.
pub fn summary(a: &ComparisonAnalysis) -> Summary {
    // The measures held to targets, which the facts give over the shapes.
    let measures = [Measure::Form(KernelForm::Tuned), Measure::Safety];
    let over_shapes: Vec<&SweepRatio> = (a.sweep.iter())
        .filter(|s| measures.contains(&s.measure) && s.cache != Some(Cache::Cold))
        .collect();
    let mut lines = Vec::new();
    let labels = ["Rust/C++ (tuned)", "Rust/C++ (safe)", "Rust/C++ (plain)"];
    for (label, r) in labels.iter().zip([&a.tuned, &a.safe, &a.plain]) {
        let Some(r) = r else { continue };
        let each: Vec<String> = (r.by_kernel().iter())
            .map(|(k, x)| format!("{k} {x:.3}"))
            .collect();
        lines.push((
            (*label).to_owned(),
            format!(
                "{} (each side's fastest spelling, the write-ups' shapes)",
                each.join(", ")
            ),
        ));
    }
    for measure in measures {
        let parts: Vec<String> = (over_shapes.iter())
            .filter(|s| s.measure == measure)
            .map(|s| {
                // A case named by nothing is the write-ups' own shape.
                let at = match s.worst_case.as_str() {
                    "" => "the write-ups' shape",
                    case => case,
                };
                format!(
                    "{} {} at the write-ups' shapes (worst {} at {at})",
                    s.kernel,
                    s.write_up.map_or("–".into(), |w| num(w, 3)),
                    num(s.worst, 3),
                )
            })
            .collect();
        if !parts.is_empty() {
            lines.push((format!("{} over shapes", measure.label()), parts.join(", ")));
        }
    }
    if let Some((_, tuned)) = a.libraries.iter().find(|(f, _)| *f == KernelForm::Tuned) {
        lines.push((
            "Math libraries".into(),
            format!("sincos, the libm crate (Rust) over CUDA's libdevice (C++): {tuned:.3} (a library comparison, not a language one)"),
        ));
    }
    Summary {
        overview: overview(a),
        answer: rust_cost(a).map(|sentence| (Question::RustCost, sentence)),
        facts: vec![
            experiment::json(&a.tuned),
            experiment::json(&a.safe),
            experiment::json(&a.plain),
            experiment::json(&over_shapes),
            experiment::json(&a.libraries),
        ],
        fact_lines: lines,
        ..Summary::default()
    }
}

/// The distinct shapes (a kernel at a case) `c` timed, of `origin` or of any; the math
/// functions timed alone (the cases with an error in ulps) are no shape.
pub(super) fn shapes(c: &KernelComparison, origin: Option<Origin>) -> usize {
    let mut seen: Vec<(&str, &str)> = (c.cases.iter())
        .filter(|k| k.max_ulps.is_none() && origin.is_none_or(|o| k.origin == o))
        .map(|k| (k.kernel.as_str(), k.case.as_str()))
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}
