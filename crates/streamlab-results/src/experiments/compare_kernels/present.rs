//! How a kernel comparison shows: its tables (the cases, the ratios over the shapes, what
//! safety costs, the spellings, the math libraries, the cards), its CSVs, its report
//! section, its chart and its facts in `summary.json`.
use super::analysis::{
    CaseRatio, ComparisonAnalysis, KernelRatios, Measure, SAFE_TARGET, SAFE_WORST_TARGET,
    SafetyCost, SweepRatio, TUNED_TARGET, TUNED_WORST_TARGET,
};
use super::{Cache, CompareKernels, KernelComparison, Origin};
use crate::card::KernelCard;
use crate::experiment::{self, Analyzed, Experiment, Overview, Summary};
use crate::report::ReportError;
use crate::report::chart::{BOUND_COLOR, BarSeries, Level, PALETTE, XAxis, YScale};
use crate::report::figures::{FigureModel, blank};
use crate::report::section::{Section, draw};
use crate::report::table::{Columns, Table, noise, num};
use crate::saved::KernelForm;
use crate::stats::Quartiles;
use crate::verdict::Rule;

fn form_label(form: Option<KernelForm>) -> String {
    form.map_or("one form".into(), |f| f.label().to_owned())
}

fn cache_label(cache: Option<Cache>) -> &'static str {
    cache.map_or("", Cache::label)
}

/// The one declaration of the cases' table and CSV: a row per case.
fn columns(c: &KernelComparison) -> Columns<'_, CaseRatio> {
    let quartiles =
        |q: &Quartiles| format!("{} ({}–{})", num(q.median, 4), num(q.q1, 4), num(q.q3, 4));
    Columns::new()
        .text("kernel", "kernel", |k: &CaseRatio| k.kernel.clone())
        .text("case", "case", |k| k.case.clone())
        .both(
            "form",
            |k| form_label(k.form),
            "form",
            |k| k.form.map_or("one".into(), |f| f.label().to_owned()),
        )
        .text("shape", "origin", |k| k.origin.label().to_owned())
        .both(
            "L2",
            |k| {
                let fits = match k.fits_l2 {
                    Some(true) => "fits",
                    Some(false) => "does not fit",
                    None => "",
                };
                [fits, cache_label(k.cache)]
                    .into_iter()
                    .filter(|w| !w.is_empty())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            "cache",
            |k| cache_label(k.cache).to_owned(),
        )
        .row_names()
        .raw("inputs_fit_l2", |k| {
            k.fits_l2.map_or(String::new(), |f| f.to_string())
        })
        .both(
            "Rust",
            move |k| quartiles(&k.rust),
            "rust_median_ms",
            |k| format!("{:.5}", k.rust.median),
        )
        .noise("Rust noise", "rust_noise", |k| k.rust_noise)
        .both(
            "CUDA C++",
            move |k| quartiles(&k.cuda),
            "cuda_median_ms",
            |k| format!("{:.5}", k.cuda.median),
        )
        .noise("C++ noise", "cuda_noise", |k| k.cuda_noise)
        .number("Rust / C++", "rust_over_cuda", (3, 4), |k| k.ratio)
        .both(
            "Rust against C++",
            |k| k.verdict.text().into(),
            "rust_against_cuda",
            |k| k.verdict.key().into(),
        )
        .both(
            "fastest spellings (Rust / C++)",
            |k| format!("{} / {}", k.rust_spelling, k.cuda_spelling),
            "rust_spelling",
            |k| k.rust_spelling.clone(),
        )
        .raw("cuda_spelling", |k| k.cuda_spelling.clone())
        .raw("math_libraries_differ", |k| k.library.to_string())
        .then(c.params.placements > 1, |columns| {
            columns.both(
                "Rust / C++ by placement",
                |k| {
                    k.placement_range.map_or(String::new(), |[lo, hi]| {
                        format!(
                            "{}–{} over {} (each place's noise up to {})",
                            num(lo, 3),
                            num(hi, 3),
                            k.by_placement.len(),
                            k.placement_noise.map_or("–".into(), noise)
                        )
                    })
                },
                "rust_over_cuda_by_placement",
                |k| {
                    (k.by_placement.iter())
                        .map(|r| format!("{r:.4}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                },
            )
        })
        .raw("rust_max_ulps", |k| {
            k.max_ulps.map_or(String::new(), |u| format!("{:.3}", u[0]))
        })
        .raw("cuda_max_ulps", |k| {
            k.max_ulps.map_or(String::new(), |u| format!("{:.3}", u[1]))
        })
        .show("launch", move |k| {
            (c.cases.iter())
                .find(|s| s.kernel == k.kernel && s.case == k.case && s.form == k.form)
                .map_or(String::new(), |s| s.launch.clone())
        })
}

/// The ratios over the shapes: per kernel, measure and cache state.
fn sweep_columns<'a>() -> Columns<'a, SweepRatio> {
    Columns::new()
        .show("kernel", |s: &SweepRatio| s.kernel.clone())
        .show("ratio", |s| s.measure.label())
        .show("L2", |s| cache_label(s.cache).to_owned())
        .show("at the write-ups' shape", |s| {
            s.write_up.map_or("–".into(), |w| {
                format!("{} ({})", num(w, 3), s.write_up_case)
            })
        })
        .show("median", |s| num(s.median, 3))
        .show("worst (shape)", |s| {
            format!("{} ({})", num(s.worst, 3), s.worst_case)
        })
        .show("shapes", |s| s.shapes.to_string())
        .show("targets", |s| {
            s.measure.targets().map_or("–".into(), |[at, worst]| {
                format!("≤ {at:.2}, worst ≤ {worst:.2}")
            })
        })
        .show("met", |s| match s.within_targets {
            Some(true) => "yes".into(),
            Some(false) => "no".into(),
            None => "–".into(),
        })
}

/// The safety table: one row per safe case.
fn safety_columns<'a>() -> Columns<'a, SafetyCost> {
    Columns::new()
        .show("kernel", |k: &SafetyCost| k.kernel.clone())
        .show("case", |k| k.case.clone())
        .show("L2", |k| cache_label(k.cache).to_owned())
        .show("safe Rust / fastest unchecked C++", |k| {
            format!(
                "{} ({})",
                num(k.over_cuda_unchecked, 3),
                k.unchecked_spelling
            )
        })
        .show("safe Rust / safe C++", |k| num(k.over_cuda_safe, 3))
        .show("safe Rust / fastest unchecked Rust", |k| {
            num(k.over_rust_tuned, 3)
        })
}

/// A spelling's row: its case, language, entry, what it does, its time and how far it is
/// from its language's fastest.
struct SpellingRow<'a> {
    case: &'a CaseRatio,
    spelling: &'a super::SpellingTime,
}

fn spelling_columns<'a>() -> Columns<'a, SpellingRow<'a>> {
    let fastest_of = |r: &SpellingRow| {
        (r.case.spellings.iter())
            .filter(|s| s.language == r.spelling.language && s.fastest)
            .map(|s| s.median)
            .next()
            .unwrap_or(f64::NAN)
    };
    Columns::new()
        .text("kernel", "kernel", |r: &SpellingRow| r.case.kernel.clone())
        .text("case", "case", |r| r.case.case.clone())
        .text("form", "form", |r| form_label(r.case.form))
        .text("L2", "cache", |r| cache_label(r.case.cache).to_owned())
        .text("language", "language", |r| {
            r.spelling.language.label().to_owned()
        })
        .text("entry", "entry", |r| r.spelling.entry.clone())
        .number("median ms", "median_ms", (4, 5), |r| r.spelling.median)
        .noise("noise", "noise", |r| r.spelling.noise)
        .both(
            "over its language's fastest",
            move |r| {
                if r.spelling.fastest {
                    "fastest".into()
                } else {
                    num(r.spelling.median / fastest_of(r), 3)
                }
            },
            "over_fastest",
            move |r| format!("{:.4}", r.spelling.median / fastest_of(r)),
        )
        .text("how", "how", |r| r.spelling.how.clone())
}

fn spelling_rows<'a>(cases: impl Iterator<Item = &'a CaseRatio>) -> Vec<SpellingRow<'a>> {
    cases
        .flat_map(|case| {
            case.spellings
                .iter()
                .map(move |spelling| SpellingRow { case, spelling })
        })
        .collect()
}

/// The cards' columns, Rust beside CUDA C++ in each cell ("40 / 38"), for the fastest
/// spellings.
fn card_columns<'a>() -> Columns<'a, CaseRatio> {
    let pair = |f: fn(&KernelCard) -> String| {
        move |k: &CaseRatio| {
            k.cards
                .map_or("–".into(), |[r, c]| format!("{} / {}", f(&r), f(&c)))
        }
    };
    Columns::new()
        .show("kernel", |k: &CaseRatio| k.kernel.clone())
        .show("case", |k| k.case.clone())
        .show("form", |k| form_label(k.form))
        .show("registers", pair(|c| c.driver.registers.to_string()))
        .show("local bytes", pair(|c| c.driver.local_bytes.to_string()))
        .show(
            "occupancy",
            pair(|c| format!("{:.0}%", 100.0 * c.driver.occupancy)),
        )
        .show("global loads", pair(|c| c.ptx.global_loads.to_string()))
        .show("FMAs", pair(|c| c.ptx.fmas.to_string()))
        .show("traps", pair(|c| c.ptx.traps.to_string()))
        .show(
            "hottest loop",
            pair(|c| {
                c.ptx
                    .hottest_loop_instructions
                    .map_or("none".into(), |n| n.to_string())
            }),
        )
}

/// "Whose math": the math library kernels' times and largest errors, the `libm` crate's
/// (Rust) against CUDA's (C++).
fn math_columns<'a>() -> Columns<'a, CaseRatio> {
    let ulps = |i: usize| move |k: &CaseRatio| k.max_ulps.map_or("–".into(), |u| num(u[i], 2));
    Columns::new()
        .show("function", |k: &CaseRatio| k.kernel.clone())
        .show("libm crate (Rust), ms", |k| num(k.rust.median, 4))
        .show("CUDA libdevice (C++), ms", |k| num(k.cuda.median, 4))
        .show("libm / libdevice", |k| num(k.ratio, 3))
        .show("libm crate, largest error (ulps)", ulps(0))
        .show("libdevice, largest error (ulps)", ulps(1))
}

/// A case that carries the comparison's finding: the tuned form (or a kernel's one
/// form), and any form where Rust and C++ differ by more than a tenth.
fn key_case(k: &CaseRatio) -> bool {
    matches!(k.form, None | Some(KernelForm::Tuned)) || !(0.9..=1.1).contains(&k.ratio)
}

/// Whether `k` is the slowest Rust has against C++ among `cases` of its kernel, form and
/// cache.
fn worst_of_its_kind(k: &CaseRatio, cases: &[CaseRatio]) -> bool {
    (cases.iter())
        .filter(|o| o.kernel == k.kernel && o.form == k.form && o.cache == k.cache)
        .all(|o| o.ratio <= k.ratio)
}

pub fn tables(c: &KernelComparison, a: &ComparisonAnalysis) -> Vec<Table> {
    let defaults: Vec<CaseRatio> = (a.cases.iter())
        .filter(|k| k.origin == Origin::Defaults && k.max_ulps.is_none())
        .cloned()
        .collect();
    let mut tables = vec![columns(c).keyed(
        Some("at the write-ups' shapes: each side's fastest spelling, median ms per launch (quartiles in brackets)".into()),
        &defaults,
        key_case,
    )];
    if !a.sweep.is_empty() {
        tables.push(sweep_columns().table(
            Some(format!(
                "each ratio over every shape timed (the write-ups', tails and drawn): targets for the tuned form ≤ {TUNED_TARGET:.2} at the write-ups' shape and ≤ {TUNED_WORST_TARGET:.2} at the worst, for safety's cost ≤ {SAFE_TARGET:.2} and ≤ {SAFE_WORST_TARGET:.2}"
            )),
            &a.sweep,
        ));
    }
    if !a.safety.is_empty() {
        // Each kernel's costliest shape.
        let costliest = |x: &SafetyCost| {
            (a.safety.iter())
                .filter(|o| o.kernel == x.kernel && o.cache == x.cache)
                .all(|o| o.over_cuda_unchecked <= x.over_cuda_unchecked)
        };
        tables.push(safety_columns().keyed(
            Some("what safety costs, per shape: safe Rust's fastest spelling over the fastest unchecked C++ spelling of the same algorithm (plain or tuned), over the fastest safe C++, and over the fastest unchecked Rust".into()),
            &a.safety,
            costliest,
        ));
    }
    let spellings = spelling_rows(defaults.iter());
    if !spellings.is_empty() {
        tables.push(spelling_columns().keyed(
            Some("every spelling at the write-ups' shapes (all shapes in compare-kernels-spellings.csv): median ms per launch, and its time over its language's fastest".into()),
            &spellings,
            |r| r.spelling.fastest,
        ));
    }
    let others: Vec<CaseRatio> = (a.cases.iter())
        .filter(|k| k.origin != Origin::Defaults)
        .cloned()
        .collect();
    if !others.is_empty() {
        tables.push(columns(c).keyed(
            Some("at the shapes with tails and the drawn ones".into()),
            &others,
            |k| worst_of_its_kind(k, &others),
        ));
    }
    let math: Vec<CaseRatio> = (a.cases.iter())
        .filter(|k| k.max_ulps.is_some())
        .cloned()
        .collect();
    if !math.is_empty() {
        tables.push(math_columns().table(
            Some("whose math: each library's function alone over the blog's indices (x = 0, 1, 2, …), median ms per launch, and its largest error against an f64 reference (a comparison of math libraries, not of languages)".into()),
            &math,
        ));
    }
    if defaults.iter().any(|k| k.cards.is_some()) {
        tables.push(card_columns().keyed(
            Some("the fastest spellings' cards, Rust / CUDA C++: the driver's figures at the launch shape, and the PTX's counts (over the entry and what it calls; the hottest loop is the largest innermost one, in instructions)".into()),
            &defaults,
            key_case,
        ));
    }
    tables
}

/// The cases' CSV, every shape.
pub fn csv(c: &KernelComparison, a: &ComparisonAnalysis) -> String {
    columns(c).csv(&a.cases)
}

/// Every spelling at every shape, as CSV (none for runs from before spellings).
pub fn spellings_csv(a: &ComparisonAnalysis) -> Option<String> {
    let rows = spelling_rows(a.cases.iter());
    (!rows.is_empty()).then(|| spelling_columns().csv(&rows))
}

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

const ABOUT: &str = "Each kernel in Rust and in CUDA C++, each side in a few honest spellings of the same algorithm (the same products or sums in the same order: loop shapes, batching, tails, index widths), launched alternately on one stream and timed with events; each side's fastest spelling is the one its ratio takes, so a ratio compares the best of each, and every spelling's time is kept. Each kernel exists in a plain form (the write-ups' algorithm as a user would port it: the naive matmul loop with checked indexing in Rust, AddKernel's volatile local, separate sinf and cosf), a safe form (no unsafe in the kernel body: slices, get and get_mut, and nvptx-kernel's views, which check a shape once and then iterate unchecked; the C++ twins check what the Rust ones check) and a tuned form (raw pointers and unchecked indexing, matmul's loads in batches with one batch loaded a step ahead, AddKernel's sums unrolled); a transformation one side's tuned form does by hand, the other side has a spelling of too. A ratio compares the same form; safety's cost compares safe Rust with the fastest unchecked C++ of the same algorithm. Every shape is timed after every spelling's output was checked on inputs whose elements all differ (matmul against the CPU in f64 within a bound on the rounding of its chain of multiply-adds; AddKernel exactly; sincos within 1e-6). Beside the write-ups' shapes, a sweep of shapes with tails and shapes drawn from the run's seed; a matmul case whose inputs fit in L2 is timed warm (launched back to back) and cold (L2 flushed before each launch).";

pub fn section(rust: &Analyzed<CompareKernels>) -> Result<Section, ReportError> {
    let (c, a) = rust.with();
    let mut sec = rust.section(
        "Rust against CUDA C++: the same kernels, each side's best spelling",
        ABOUT,
    );
    sec.tables = tables(c, a);
    if let Some(seed) = c.seed {
        sec.note(
            "Shapes",
            format!(
                "{} shapes in all: the write-ups', {} with tails (inner sizes that are not multiples of 8, block-ragged rows and columns, cycle counts 1–9 and odd larger ones, prime element counts) and {} drawn from seed {seed} (`--seed {seed}` draws the same ones); the sweep's shapes were timed {} launches a spelling.",
                a.cases.len(),
                c.cases.iter().filter(|k| k.origin == Origin::Tail).count(),
                c.cases.iter().filter(|k| k.origin == Origin::Random).count(),
                c.params.sweep_launches
            ),
        );
    }
    sec.note(
        "What safety costs, and when to reach for what",
        "A bounds check costs little by itself; what costs is what it stops the compiler from doing. A check inside the hottest loop keeps LLVM from unrolling it, so each thread has one load in flight instead of several, and a latency-bound kernel pays that in full; a kernel with enough threads hides it. The safe views move every check out of the loop, and their folds can issue the loads ahead (ZipExact::fold_ahead): the card of a safe form built on them shows its traps before the loop and a hottest loop like the unchecked kernel's. Reach for get and get_mut where a thread touches one element, and for the views (Matrix, zip_exact, GridStride) where it walks rows, columns or a grid-stride loop.",
    );
    if (c.cases.iter()).any(|k| !k.placements.is_empty()) {
        sec.note(
            "Where the inputs lie",
            format!(
                "matmul's warm cases are timed at {} places in one allocation, each a step of whole 2 MiB pages from the last (every input's offset is in the JSON), visited in order and back again; a row's medians pool every place's launches. \"Rust / C++ by placement\" gives the lowest and the highest ratio of the fastest spellings' medians place by place, and the largest noise of one place's samples: where the range is wider than that noise, the same two kernels on the same GPU compare differently at different places.",
                c.params.placements
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
            "Each row judged as `streamlab compare` judges two runs, the C++ twin as A and Rust as B: {}",
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
fn overview(a: &ComparisonAnalysis, over_shapes: &[&SweepRatio]) -> Overview {
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
    let worst = (over_shapes.iter())
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
        let at = match w.worst_case.as_str() {
            "" => w.kernel.clone(),
            case => format!("{}, {case}", w.kernel),
        };
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
                format!(
                    "{} {} (worst {} at {})",
                    s.kernel,
                    s.write_up.map_or("–".into(), |w| num(w, 3)),
                    num(s.worst, 3),
                    s.worst_case
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
        overview: overview(a, &over_shapes),
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
