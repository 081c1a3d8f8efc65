//! A kernel comparison's tables (the cases, the ratios over the shapes, what safety costs,
//! the spellings, the math libraries, the cards), its CSVs and its measured rows.
use super::analysis::{CaseRatio, ComparisonAnalysis, SafetyCost, SweepRatio, TARGETED};
use super::{Cache, KernelComparison, LIBRARY_KERNELS, Origin, SpellingRun};
use crate::card::KernelCard;
use crate::experiments::prelude::*;
use crate::stats::Quartiles;

fn form_label(form: Option<KernelForm>) -> String {
    form.map_or("one form".into(), |f| f.label().to_owned())
}

/// A ratio with the shape it was taken at, e.g. "1.012 (cycles 1)"; a kernel with one
/// shape at the write-ups' size (fill) has none to name.
fn with_shape(ratio: f64, shape: &str) -> String {
    if shape.is_empty() {
        num(ratio, 3)
    } else {
        format!("{} ({shape})", num(ratio, 3))
    }
}

fn cache_label(cache: Option<Cache>) -> &'static str {
    cache.map_or("", Cache::label)
}

/// A case's name among the measured rows, e.g. "matmul/32×16×131072/tuned" (a cold case's
/// ends in "cold").
fn case_name(k: &CaseRatio) -> RowName {
    let form = k.form.map(KernelForm::label);
    let cold = (k.cache == Some(Cache::Cold)).then_some("cold");
    let case = (!k.case.is_empty()).then_some(k.case.as_str());
    let words = [Some(k.kernel.as_str()), case, form, cold];
    let words: Vec<&str> = words.into_iter().flatten().collect();
    RowName::new(words.join("/"), words.join(" "))
}

/// The one declaration of the cases' table, CSV and measured rows: a row per case, its
/// measured rows its fastest Rust and CUDA C++ spellings', the Rust row held against its
/// C++ twin.
pub(super) fn columns(c: &KernelComparison) -> Columns<'_, CaseRatio> {
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
                let fits = k.fits_l2.map(|f| if f { "fits" } else { "does not fit" });
                let words: Vec<_> = fits.into_iter().chain(k.cache.map(Cache::label)).collect();
                words.join(", ")
            },
            "cache",
            |k| cache_label(k.cache).to_owned(),
        )
        .row_names()
        .named(case_name, |k, item, row| match item {
            Some("rust") => {
                row.controlled_by(RowControl::Row(format!("{}/cuda", case_name(k).key)))
            }
            _ => row,
        })
        .measured((Some(("rust", "Rust")), MS), |k| Some(&k.times[0]))
        .measured((Some(("cuda", "CUDA C++")), MS), |k| Some(&k.times[1]))
        .raw("inputs_fit_l2", |k| {
            k.fits_l2.map_or(String::new(), |f| f.to_string())
        })
        .both(
            "Rust",
            move |k| quartiles(&k.rust),
            "rust_median_ms",
            |k| format!("{:.5}", k.rust.median),
        )
        .noise("Rust noise", "rust_noise", |k| k.times[0].noise())
        .both(
            "CUDA C++",
            move |k| quartiles(&k.cuda),
            "cuda_median_ms",
            |k| format!("{:.5}", k.cuda.median),
        )
        .noise("C++ noise", "cuda_noise", |k| k.times[1].noise())
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
        .raw("math_libraries_differ", |k| {
            LIBRARY_KERNELS.contains(&k.kernel.as_str()).to_string()
        })
        .then(c.run.params.placements > 1, |columns| {
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
        .raw("rust_max_ulps", ulps(0, 3, ""))
        .raw("cuda_max_ulps", ulps(1, 3, ""))
        .show("launch", |k| k.saved.launch.clone())
}

/// The ratios over the shapes: per kernel, measure and cache state.
fn sweep_columns<'a>() -> Columns<'a, SweepRatio> {
    Columns::new()
        .show("kernel", |s: &SweepRatio| s.kernel.clone())
        .show("ratio", |s| s.measure.label())
        .show("L2", |s| cache_label(s.cache).to_owned())
        .show("worst at the write-ups' shapes", |s| {
            s.write_up
                .map_or("–".into(), |w| with_shape(w, &s.write_up_case))
        })
        .show("median", |s| num(s.median, 3))
        .show("worst (shape)", |s| with_shape(s.worst, &s.worst_case))
        .show("shapes", |s| s.shapes.to_string())
        .show("targets", |s| {
            s.measure.targets().map_or("–".into(), |[at, worst]| {
                format!("≤ {at:.2}, worst ≤ {worst:.2}")
            })
        })
        .show("met", |s| s.within_targets.map_or("–", yes_no).into())
}

/// The safety table: one row per safe case.
fn safety_columns<'a>() -> Columns<'a, SafetyCost> {
    Columns::new()
        .show("kernel", |k: &SafetyCost| k.kernel.clone())
        .show("case", |k| k.case.clone())
        .show("L2", |k| cache_label(k.cache).to_owned())
        .show("safe Rust / fastest unchecked C++", |k| {
            let cost = num(k.over_cuda_unchecked, 3);
            format!("{cost} ({})", k.unchecked_spelling)
        })
        .show("safe Rust / safe C++", |k| num(k.over_cuda_safe, 3))
        .show("safe Rust / fastest unchecked Rust", |k| {
            num(k.over_rust_tuned, 3)
        })
}

/// A spelling's row: its case, the spelling, and whether it is its language's fastest
/// there (the one the case's ratio takes) and its time over that one's.
pub(super) struct SpellingRow<'a> {
    case: &'a CaseRatio,
    spelling: &'a SpellingRun,
    pub(super) fastest: bool,
    over_fastest: f64,
}

fn spelling_columns<'a>() -> Columns<'a, SpellingRow<'a>> {
    Columns::new()
        .text("kernel", "kernel", |r: &SpellingRow| r.case.kernel.clone())
        .text("case", "case", |r| r.case.case.clone())
        .text("form", "form", |r| form_label(r.case.form))
        .text("L2", "cache", |r| cache_label(r.case.cache).to_owned())
        .text("language", "language", |r| {
            r.spelling.language.label().to_owned()
        })
        .text("entry", "entry", |r| r.spelling.entry.clone())
        .number("median ms", "median_ms", (4, 5), |r| {
            r.spelling.times.median()
        })
        .noise("noise", "noise", |r| r.spelling.times.noise())
        .both(
            "over its language's fastest",
            |r| match r.fastest {
                true => "fastest".into(),
                false => num(r.over_fastest, 3),
            },
            "over_fastest",
            |r| format!("{:.4}", r.over_fastest),
        )
        .text("how", "how", |r| r.spelling.how.clone())
}

pub(super) fn spelling_rows<'a>(cases: &'a [CaseRatio]) -> Vec<SpellingRow<'a>> {
    let row = |case: &'a CaseRatio, spelling: &'a SpellingRun| {
        let side = usize::from(spelling.language == KernelSet::Cuda);
        SpellingRow {
            case,
            spelling,
            fastest: spelling.entry == [&case.rust_spelling, &case.cuda_spelling][side][..],
            over_fastest: spelling.times.median() / case.times[side].median(),
        }
    };
    (cases.iter())
        .flat_map(|case| case.saved.spellings.iter().map(move |s| row(case, s)))
        .collect()
}

/// The cards' columns, Rust beside CUDA C++ in each cell ("40 / 38"), for the fastest
/// spellings.
fn card_columns<'a>() -> Columns<'a, CaseRatio> {
    Columns::new()
        .show("kernel", |k: &CaseRatio| k.kernel.clone())
        .show("case", |k| k.case.clone())
        .show("form", |k| form_label(k.form))
        .show("registers", cards(|c| c.driver.registers.to_string()))
        .show("local bytes", cards(|c| c.driver.local_bytes.to_string()))
        .show(
            "occupancy",
            cards(|c| format!("{:.0}%", 100.0 * c.driver.occupancy)),
        )
        .show("global loads", cards(|c| c.ptx.global_loads.to_string()))
        .show("FMAs", cards(|c| c.ptx.fmas.to_string()))
        .show("traps", cards(|c| c.ptx.traps.to_string()))
        .show(
            "hottest loop",
            cards(|c| match c.ptx.hottest_loop_instructions {
                Some(n) => n.to_string(),
                None => "none".into(),
            }),
        )
}

/// A card's `figure`, the Rust spelling's beside the CUDA C++ one's ("–" without cards).
fn cards(figure: fn(&KernelCard) -> String) -> impl Fn(&CaseRatio) -> String {
    move |k| {
        (k.cards).map_or("–".into(), |[r, c]| {
            format!("{} / {}", figure(&r), figure(&c))
        })
    }
}

/// A math function's largest error in ulps, Rust's (`side` 0) or CUDA C++'s, with
/// `decimals`, or `none` for a case that is no math function.
fn ulps(side: usize, decimals: usize, none: &str) -> impl Fn(&CaseRatio) -> String {
    move |k| k.max_ulps.map_or(none.into(), |u| num(u[side], decimals))
}

/// "Whose math": the math library kernels' times and largest errors, the `libm` crate's
/// (Rust) against CUDA's (C++).
fn math_columns<'a>() -> Columns<'a, CaseRatio> {
    Columns::new()
        .show("function", |k: &CaseRatio| k.kernel.clone())
        .show("libm crate (Rust), ms", |k| num(k.rust.median, 4))
        .show("CUDA libdevice (C++), ms", |k| num(k.cuda.median, 4))
        .show("libm / libdevice", |k| num(k.ratio, 3))
        .show("libm crate, largest error (ulps)", ulps(0, 2, "–"))
        .show("libdevice, largest error (ulps)", ulps(1, 2, "–"))
}

/// A case that carries the comparison's finding: the tuned form (or a kernel's one
/// form), and any form where Rust and C++ differ by more than a tenth.
fn key_case(k: &CaseRatio) -> bool {
    matches!(k.form, None | Some(KernelForm::Tuned)) || !(0.9..=1.1).contains(&k.ratio)
}

/// The cases' CSV, every shape, and every spelling at every shape (none for runs from
/// before spellings).
pub fn csv(c: &KernelComparison, a: &ComparisonAnalysis) -> Vec<Csv> {
    let mut files = vec![Csv::main(columns(c).csv(&a.cases))];
    let spellings = spelling_rows(&a.cases);
    if !spellings.is_empty() {
        files.push(Csv::extra("spellings", spelling_columns().csv(&spellings)));
    }
    files
}

pub fn tables(c: &KernelComparison, a: &ComparisonAnalysis) -> Vec<Table> {
    let cases_where = |keep: fn(&CaseRatio) -> bool| -> Vec<CaseRatio> {
        a.cases.iter().filter(|k| keep(k)).cloned().collect()
    };
    let defaults = cases_where(|k| k.origin == Origin::Defaults && k.max_ulps.is_none());
    let cases = columns(c);
    let mut tables = vec![cases.keyed(
        Some("at the write-ups' shapes: each side's fastest spelling, median ms per launch (quartiles in brackets)".into()),
        &defaults,
        key_case,
    )];
    if !a.sweep.is_empty() {
        let [[tuned, tuned_worst], [safe, safe_worst]] = TARGETED.map(|m| m.targets().unwrap());
        tables.push(sweep_columns().table(
            Some(format!(
                "each ratio over every shape timed (the write-ups', tails and drawn): targets for the tuned form ≤ {tuned:.2} at every write-ups' shape and ≤ {tuned_worst:.2} at the worst, for safety's cost ≤ {safe:.2} and ≤ {safe_worst:.2}"
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
    let spellings = spelling_rows(&defaults);
    if !spellings.is_empty() {
        tables.push(spelling_columns().keyed(
            Some("every spelling at the write-ups' shapes (all shapes in compare-kernels-spellings.csv): median ms per launch, and its time over its language's fastest".into()),
            &spellings,
            |r| r.fastest,
        ));
    }
    let others = cases_where(|k| k.origin != Origin::Defaults);
    if !others.is_empty() {
        tables.push(cases.keyed(
            Some("at the shapes with tails and the drawn ones".into()),
            &others,
            // The slowest Rust has against C++ of its kernel, form and cache.
            |k| {
                (others.iter())
                    .filter(|o| o.kernel == k.kernel && o.form == k.form && o.cache == k.cache)
                    .all(|o| o.ratio <= k.ratio)
            },
        ));
    }
    let math = cases_where(|k| k.max_ulps.is_some());
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
