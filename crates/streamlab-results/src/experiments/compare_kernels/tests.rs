//! compare-kernels' analysis on made-up cases: ratios, safety's cost, the sweep's worst
//! cases, the verdicts.
use super::analysis::*;
use super::present::shapes;
use super::tables::spelling_rows;
use super::*;
use crate::stats::tests::series;

/// The recorded run of 2026-11-27 00:14.
fn recorded() -> KernelComparison {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/runs/h200-2026-11-27-0014/compare-kernels.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `a`'s ratio over the shapes of `measure`, warm.
fn warm(a: &ComparisonAnalysis, measure: Measure) -> &SweepRatio {
    (a.sweep.iter())
        .find(|s| s.measure == measure && s.cache == Some(Cache::Warm))
        .unwrap()
}

/// A case at `case` in `form` of the spellings `runs`, warm.
fn spelled(
    kernel: &str,
    case: &str,
    form: KernelForm,
    origin: Origin,
    runs: &[(KernelSet, &str, f64)],
) -> KernelCase {
    let passed = RunRecord::made_up(()).verification;
    let spellings: Vec<serde_json::Value> = (runs.iter())
        .map(|&(language, entry, ms)| {
            let times = series(&[ms; 5]);
            json!({"language": language, "entry": entry, "how": "", "times": times,
                "verification": passed})
        })
        .collect();
    serde_json::from_value(json!({
        "kernel": kernel, "case": case, "form": form, "launch": "", "verification": passed,
        "spellings": spellings, "cache": "warm", "input_bytes": 1 << 20, "origin": origin,
    }))
    .unwrap()
}

#[test]
fn the_ratio_takes_each_sides_fastest_spelling_and_a_run_from_before_spellings_has_one_a_side() {
    use {KernelForm::Tuned, KernelSet::*, Origin::Defaults};
    let runs = [
        (Rust, "matmul", 3.0),
        (Rust, "matmul_tuned_walk", 5.0),
        (Cuda, "matmul", 4.0),
        (Cuda, "matmul_tuned_ldg", 2.5),
    ];
    let case = spelled("matmul", "32×16×131072", Tuned, Defaults, &runs);
    let r = case_ratio(&case, 60 << 20).unwrap();
    assert_eq!(
        (r.rust_spelling.as_str(), r.cuda_spelling.as_str()),
        ("matmul", "matmul_tuned_ldg")
    );
    assert!((r.ratio - 3.0 / 2.5).abs() < 1e-12);
    let rows = spelling_rows(std::slice::from_ref(&r));
    assert_eq!(rows.iter().filter(|s| s.fastest).count(), 2);
    assert_eq!(r.fits_l2, Some(true));
    assert_eq!(case_ratio(&case, 0).unwrap().fits_l2, None);
    let old = KernelCase {
        rust: Some(series(&[2.0; 3])),
        cuda: Some(series(&[4.0; 3])),
        ..spelled("add_kernel", "cycles 256", Tuned, Defaults, &[])
    };
    let runs = spellings(&old);
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r.entry == "add_kernel"));
    let r = case_ratio(&old, 0).unwrap();
    assert!((r.ratio - 0.5).abs() < 1e-12);
    let rows = spelling_rows(std::slice::from_ref(&r));
    assert!(rows.is_empty(), "no spellings table for an old run");
}

#[test]
fn safety_is_held_against_the_fastest_unchecked_cpp_of_its_shape_and_the_worst_shape_is_named() {
    use {KernelForm::*, KernelSet::*, Origin::*};
    // matmul at `case` in each form: (form, entry, Rust ms, C++ ms).
    let at = |case: &str, origin, safe: f64, plain_cpp: f64, tuned_cpp: f64| {
        [
            (Plain, "matmul_plain", 20.0, plain_cpp),
            (Safe, "matmul_safe", safe, 6.0),
            (Tuned, "matmul", 2.6, tuned_cpp),
        ]
        .map(|(form, entry, rust, cuda)| {
            let runs = [(Rust, entry, rust), (Cuda, entry, cuda)];
            spelled("matmul", case, form, origin, &runs)
        })
    };
    let at_wiki = || at("wiki", Defaults, 3.0, 4.0, 3.0);
    let analyzed = |cases: [[KernelCase; 3]; 2]| {
        analyze(&KernelComparison {
            cases: cases.concat(),
            ..recorded()
        })
    };
    let a = analyzed([at_wiki(), at("tail", Tail, 3.6, 3.0, 3.5)]);
    let wiki = &a.safety[0];
    assert_eq!(wiki.unchecked_spelling, "matmul");
    assert!((wiki.over_cuda_unchecked - 1.0).abs() < 1e-12);
    assert!((wiki.over_rust_tuned - 3.0 / 2.6).abs() < 1e-12);
    // At the tail the plain C++ loop is the fastest unchecked spelling.
    assert!((a.safety[1].over_cuda_unchecked - 1.2).abs() < 1e-12);
    let safety = warm(&a, Measure::Safety);
    assert_eq!(safety.write_up, Some(1.0));
    assert_eq!((safety.worst, safety.worst_case.as_str()), (1.2, "tail"));
    assert_eq!(safety.within_targets, Some(false));
    let tuned = warm(&a, Measure::Form(Tuned));
    assert_eq!(tuned.shapes, 2);
    assert!((tuned.worst - 2.6 / 3.0).abs() < 1e-12);
    assert_eq!(tuned.within_targets, Some(true));
    // A second write-ups' shape (matmul's square) is held to the same target: the
    // column gives the worse of the two.
    let a = analyzed([at_wiki(), at("512×512×2048", Defaults, 3.3, 3.0, 3.2)]);
    let safety = warm(&a, Measure::Safety);
    assert!((safety.write_up.unwrap() - 1.1).abs() < 1e-12);
    assert_eq!(safety.write_up_case, "512×512×2048");
    assert_eq!(safety.within_targets, Some(false));
}

#[test]
fn the_recorded_run_names_where_each_worst_ratio_was_measured_and_counts_shapes_once() {
    let r = recorded();
    let analyzed = Analyzed::<CompareKernels>::new(KernelSet::Rust, r.clone());
    let words = analyzed.words.unwrap();
    let line = words.part("line").unwrap();
    let over_shapes: Vec<&str> = (line.split("; "))
        .filter(|part| part.contains(" over shapes "))
        .collect();
    assert_eq!(over_shapes.len(), 2, "{line}");
    for part in over_shapes {
        assert!(!part.contains(" at )"), "{part}");
    }
    // fill's worst is at the one shape the run has no name for: the write-ups'.
    assert!(line.contains("at the write-ups' shape)"), "{line}");
    // Shapes are counted once whatever their forms and cache states.
    let all = shapes(&r, None);
    let origins = [Origin::Defaults, Origin::Tail, Origin::Random];
    let parts: usize = origins.map(|o| shapes(&r, Some(o))).iter().sum();
    assert_eq!(all, parts);
    // Each shape has three forms at least, and math functions are no shape.
    let cases = r.cases.len();
    assert!(3 * all <= cases, "{all} shapes of {cases} cases");
    // The write-ups' shapes: fill, the wiki's and the square matmul, AddKernel at its two
    // cycle counts, sincos.
    assert_eq!(shapes(&r, Some(Origin::Defaults)), 6);
    // Where every ratio is 1, each span prints one value.
    let mut even = r;
    for s in even.cases.iter_mut().flat_map(|k| &mut k.spellings) {
        s.times = series(&[1.0; 3]);
    }
    let words = Analyzed::<CompareKernels>::new(KernelSet::Rust, even)
        .words
        .unwrap();
    assert_eq!(words.part("result").unwrap(), "tuned 1.00× C++");
    let answer = words.part("answer").unwrap();
    assert!(
        answer.contains(" takes 1.00× its time") && !answer.contains('–'),
        "{answer}"
    );
}
