//! How a kernel comparison shows: its report section (its tables from [`super::tables`]),
//! its chart and its facts in `summary.json`.
use super::analysis::{CaseRatio, ComparisonAnalysis, KernelRatios, Measure, SweepRatio};
use super::tables::tables;
use super::{BATCHED_SAMPLE_MS, Cache, CompareKernels, KernelComparison, Origin};
use crate::experiment::{self, Analyzed, Experiment, Overview, Summary};
use crate::report::ReportError;
use crate::report::chart::{BOUND_COLOR, BarSeries, Level, PALETTE, XAxis, YScale};
use crate::report::figures::{FigureModel, blank};
use crate::report::section::{Section, draw};
use crate::report::table::num;
use crate::saved::KernelForm;
use crate::verdict::Rule;

/// Rust time over CUDA C++ time per case at the write-ups' shapes (warm), in each form.
fn figures(a: &ComparisonAnalysis) -> Vec<FigureModel> {
    let shown: Vec<&CaseRatio> = (a.cases.iter())
        .filter(|k| k.origin == Origin::Defaults && k.cache != Some(Cache::Cold))
        .collect();
    let mut cases: Vec<(String, String)> = Vec::new();
    for c in &shown {
        let key = (c.kernel.clone(), c.case.clone());
        if !cases.contains(&key) {
            cases.push(key);
        }
    }
    let ratio = |key: &(String, String), form: Option<KernelForm>| {
        (shown.iter())
            .find(|c| (&c.kernel, &c.case) == (&key.0, &key.1) && c.form == form)
            .map_or(f64::NAN, |c| c.ratio)
    };
    let mut chart = blank(
        "Rust against CUDA C++, each side's fastest spelling (median time ratio; below 1: Rust faster)".into(),
        "kernel",
        "Rust time / CUDA C++ time",
        XAxis::Categories(
            (cases.iter())
                .map(|(k, case)| if case.is_empty() { k.clone() } else { format!("{k} {case}") })
                .collect(),
        ),
        YScale::Log,
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
fn about() -> String {
    format!(
        "Each kernel in Rust and in CUDA C++, each side in a few honest spellings of the same algorithm (the same products or sums in the same order: loop shapes, batching, tails, index widths), launched alternately on one stream and timed with events (fill, whose launches last microseconds, in batches of launches run back to back that last at least {BATCHED_SAMPLE_MS} ms, each batch's mean per launch one sample); each side's fastest spelling is the one its ratio takes, so a ratio compares the best of each, and every spelling's time is kept. Each kernel exists in a plain form (the write-ups' algorithm as a user would port it: the naive matmul loop with checked indexing in Rust, AddKernel's volatile local, separate sinf and cosf), a safe form (no unsafe in the kernel body: slices, get and get_mut, and nvptx-kernel's views, which check a shape once and then iterate unchecked; the C++ twins check what the Rust ones check) and a tuned form (raw pointers and unchecked indexing, matmul's loads in batches with one batch loaded a step ahead, AddKernel's sums unrolled, 256 a turn); a transformation one side's tuned form does by hand, the other side has a spelling of too. A ratio compares the same form; safety's cost compares safe Rust with the fastest unchecked C++ of the same algorithm. Every shape is timed after every spelling's output was checked on inputs whose elements all differ (matmul against the CPU in f64 within a bound on the rounding of its chain of multiply-adds; AddKernel exactly; sincos bit for bit against a + sqrt(s² + c²) from its own language's sine and cosine of each index, each checked within 2 ulps, since a tolerance would pass a kernel that wrote a + 1), and after the timing, the output the case's last timed launch left is compared bit for bit with its spelling's checked output (matmul's where that launch ran at the checked place). Beside the write-ups' shapes, a sweep of shapes with tails and shapes drawn from the run's seed; a matmul case whose inputs fit in L2 is timed warm (launched back to back) and cold (L2 flushed before each launch)."
    )
}

pub fn section(rust: &Analyzed<CompareKernels>) -> Result<Section, ReportError> {
    let (c, a) = rust.with();
    let mut sec = rust.section(
        "Rust against CUDA C++: the same kernels, each side's best spelling",
        &about(),
    );
    sec.tables = tables(c, a);
    if let Some(seed) = c.seed {
        sec.note(
            "Shapes",
            format!(
                "{} shapes in all ({} cases: a shape's forms and cache states are cases of it): {} of the write-ups', {} with tails (inner sizes that are not multiples of 8, block-ragged rows and columns, cycle counts 1–9 and odd larger ones, prime element counts) and {} drawn from seed {seed} (`--seed {seed}` draws the same ones); the sweep's shapes were timed {} launches a spelling.",
                shapes(c, None),
                a.cases.len(),
                shapes(c, Some(Origin::Defaults)),
                shapes(c, Some(Origin::Tail)),
                shapes(c, Some(Origin::Random)),
                c.run.params.sweep_launches
            ),
        );
    }
    sec.note(
        "What safety costs, and when to reach for what",
        "A bounds check costs little by itself; what costs is what it stops the compiler from doing. A check inside the hottest loop keeps LLVM from unrolling it, so each thread has one load in flight instead of several, and a latency-bound kernel pays that in full; a kernel with enough threads hides it. The safe views move every check out of the loop, and their folds can issue the loads ahead (ZipExact::fold_ahead): the card of a safe form built on them shows a hottest loop like the unchecked kernel's. Reach for get and get_mut where a thread touches one element, and for the views (Matrix, zip_exact, GridStride) where it walks rows, columns or a grid-stride loop.",
    );
    if (c.cases.iter()).any(|k| !k.placements.is_empty()) {
        sec.note(
            "Where the inputs lie",
            format!(
                "matmul's warm cases at the write-ups' shapes are timed at {} places in one allocation, each a step of whole 2 MiB pages from the last (every input's offset is in the JSON), visited in order and back again; a row's medians pool every place's launches. \"Rust / C++ by placement\" gives the lowest and the highest ratio of the fastest spellings' medians place by place, and the largest noise of one place's samples: where the range is wider than that noise, the same two kernels on the same GPU compare differently at different places.",
                c.run.params.placements
            ),
        );
    }
    sec.note(
        "Math libraries",
        "sincos and the math functions call different libraries on the two sides: the Rust kernels the libm crate (a port of musl's sinf, cosf and sincosf, compiled into the PTX with the kernel), the CUDA C++ twins CUDA's libdevice. No library is available to both, so their ratios compare the libraries (their algorithms and accuracy: see the largest errors in ulps), not the languages, and the language ratios of the summary leave sincos out.",
    );
    sec.note(
        "Rust against C++",
        format!(
            "Each row judged by the rule two figures of one run are held to, the C++ twin as A and Rust as B: {}",
            Rule::within(CompareKernels::NAME).describe()
        ),
    );
    sec.note(
        "C++ build",
        format!(
            "{}, options {}, PTX target {}.",
            c.cuda_build.compiler,
            c.cuda_build.options.join(" "),
            c.cuda_build.ptx_target
        ),
    );
    sec.figures = draw(figures(a));
    Ok(sec)
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
    let by_kernel = |r: &KernelRatios| {
        [
            ("fill", r.fill),
            ("matmul", r.matmul),
            ("add_kernel", r.add_kernel),
        ]
    };
    let span = |r: &KernelRatios| {
        let v = by_kernel(r).map(|(_, x)| x);
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    // Warm and cold alike: the worst is the worst of every shape and cache state.
    let worst = (a.sweep.iter())
        .filter(|s| s.measure == Measure::Form(KernelForm::Tuned))
        .max_by(|x, y| x.worst.total_cmp(&y.worst));
    let mut finding = Vec::new();
    let mut result = String::from("–");
    if let Some(t) = &a.tuned {
        let (lo, hi) = span(t);
        let each: Vec<String> = (by_kernel(t).iter())
            .map(|(k, x)| format!("{k} {x:.2}"))
            .collect();
        finding.push(format!(
            "At the write-ups' shapes tuned Rust takes {lo:.2}–{hi:.2}× the time of the fastest C++ ({})",
            each.join(", ")
        ));
        result = format!("tuned {lo:.2}–{hi:.2}× C++");
    }
    if let Some(w) = worst {
        let mut at = match w.worst_case.as_str() {
            "" => w.kernel.clone(),
            case => format!("{}, {case}", w.kernel),
        };
        if w.cache == Some(Cache::Cold) {
            at += ", L2 flushed before each launch";
        }
        finding.push(format!("at worst over every shape {:.2}× ({at})", w.worst));
    }
    if let Some(p) = &a.plain {
        let (kernel, x) = (by_kernel(p).into_iter())
            .max_by(|x, y| x.1.total_cmp(&y.1))
            .expect("three kernels");
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
        rust_over_cpp: worst.map(|w| w.worst),
    }
}

/// The facts compare-kernels adds to `summary.json`, in the order of [`FACTS`], and their
/// lines.
pub fn summary(a: &ComparisonAnalysis) -> Summary {
    let over_shapes: Vec<&SweepRatio> = (a.sweep.iter())
        .filter(|s| {
            matches!(
                s.measure,
                Measure::Form(KernelForm::Tuned) | Measure::Safety
            )
        })
        .filter(|s| s.cache != Some(Cache::Cold))
        .collect();
    let mut lines = Vec::new();
    let labels = ["Rust/C++ (tuned)", "Rust/C++ (safe)", "Rust/C++ (plain)"];
    for (label, r) in labels.iter().zip([&a.tuned, &a.safe, &a.plain]) {
        let Some(r) = r else { continue };
        lines.push((
            (*label).to_owned(),
            format!(
                "fill {:.3}, matmul {:.3}, add_kernel {:.3} (each side's fastest spelling, the write-ups' shapes)",
                r.fill, r.matmul, r.add_kernel
            ),
        ));
    }
    for measure in [Measure::Form(KernelForm::Tuned), Measure::Safety] {
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
