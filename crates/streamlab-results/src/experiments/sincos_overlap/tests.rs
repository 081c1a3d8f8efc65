//! sincos-overlap's analysis on the committed H200 run and on made-up results.
use super::*;
use crate::saved::Params as _;

/// The committed H200 run (its C++ host twin built, its rounds alternating).
fn committed() -> SincosOverlapResult {
    serde_json::from_str(include_str!(
        "../../../../../docs/results/h200/sincos-overlap.json"
    ))
    .expect("the committed sincos-overlap result parses")
}

/// The notes and summary sentences of `r`'s words, each with its label.
fn said(r: &SincosOverlapResult) -> Vec<(String, String)> {
    let words = Analyzed::<SincosOverlap>::new(KernelSet::Rust, r.clone()).words;
    let words = words.unwrap();
    (words.notes.into_iter()).chain(words.summary).collect()
}

/// A run from before the C++ host twin says nothing of hosts, a skipped twin one line;
/// host pairs and traced rounds give their ratios with noise, and their columns.
#[test]
fn hosts_from_before_skipped_and_paired_with_traced_rounds() {
    let hosts_note = |r: &SincosOverlapResult| {
        said(r)
            .into_iter()
            .find_map(|(l, text)| (l == "Hosts").then_some(text))
    };
    let csv = |r: &SincosOverlapResult| {
        let a = SincosOverlap::derive(r, &[]);
        (a.has_hosts(), SincosOverlap::csv(r, &a).remove(0).contents)
    };
    let mut r = committed();
    r.cpp_host = None;
    for p in &mut r.points {
        p.cpp_host = None;
        p.traced_round.clear();
    }
    let (hosts, before) = csv(&r);
    assert!(!hosts && !before.contains("cpp_host_ms"));
    assert!(hosts_note(&r).is_none());
    r.cpp_host = Some(CppHostRun::Skipped("no nvcc found".into()));
    let text = hosts_note(&r).expect("a note");
    assert_eq!(text, "The CUDA C++ host twin was skipped: no nvcc found.");
    let json = serde_json::to_string(&r).unwrap();
    assert!(
        json.contains(r#""cpp_host":{"skipped":"no nvcc found"}"#),
        "{json}"
    );
    let p = (r.points.iter_mut())
        .find(|p| p.variant != IssueOrder::Sequential)
        .unwrap();
    let rust = p.time.samples_ms.clone();
    p.cpp_host = Series::new(rust.iter().map(|ms| ms / 1.25).collect());
    p.traced_round = (0..rust.len()).map(|j| j % 2 == 0).collect();
    let point = p.clone();
    let pairs = point.rust_host_over_cpp_host().unwrap();
    assert!((pairs.ratio - 1.25).abs() < 1e-12 && pairs.noise < 1e-12);
    let traced: Vec<f64> = rust.iter().step_by(2).copied().collect();
    let untraced: Vec<f64> = rust.iter().skip(1).step_by(2).copied().collect();
    let t = point.traced_over_untraced().unwrap();
    let median = |v: Vec<f64>| Series::new(v).unwrap().median();
    assert!((t.ratio - median(traced.clone()) / median(untraced)).abs() < 1e-12);
    assert_eq!(point.samples_of_rounds(true), traced);
    let (hosts, paired) = csv(&r);
    assert!(hosts && paired.contains("rust_host_over_cpp_host"));
}

#[test]
fn stream_counts_above_the_element_count_are_dropped_and_said() {
    let mut p = Params {
        elements: 3,
        streams: 4,
        stream_counts: vec![1, 2, 3, 5, 8],
        ..Params::default()
    };
    let said = p.fit().expect("something changed");
    assert!(said.contains("5,8 dropped") && said.contains("--streams 4 lowered to 3"));
    assert_eq!((p.streams, p.stream_counts.clone()), (3, vec![1, 2, 3]));
    assert!(p.validate().is_ok());
    assert_eq!(p.fit(), None, "fitting twice changes nothing");
    let mut one = Params {
        elements: 1,
        ..Params::default()
    };
    one.fit();
    assert_eq!((one.streams, one.all_stream_counts()), (1, vec![1]));
}

/// The words where a figure is missing: no sequential row, no host pairs at the best
/// configuration, a sequential row that beat its bound.
#[test]
fn the_words_say_what_is_missing_and_name_the_sequential_version() {
    let says = |r: &SincosOverlapResult| {
        said(r)
            .into_iter()
            .map(|(_, text)| text)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut r = committed();
    let mut alone = r.clone();
    alone.points.retain(|p| p.variant != IssueOrder::Sequential);
    alone.points.iter_mut().for_each(|p| p.cpp_host = None);
    let text = says(&alone);
    // The numbers are the committed run's, which each run replaces: only the words are held.
    for said in [
        "; the sequential version was not measured.",
        "with their noise; asynchronous ",
        " has no pairs.",
        " ms an iteration, ",
        " ms, no sequential time to compare",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
    assert!(!text.contains('–') && !text.contains("NaN"), "{text}");
    let sequential = (r.points.iter_mut()).find(|p| p.variant == IssueOrder::Sequential);
    let time = &mut sequential.unwrap().time;
    *time = Series::new(time.samples_ms.iter().map(|ms| ms / 10.0).collect()).unwrap();
    let text = says(&r);
    assert!(text.contains("lowered to its row: the sequential version: one stream"));
    let slower = text
        .split(" ms an iteration against ")
        .nth(1)
        .unwrap_or_default();
    assert!(
        slower.contains(" ms sequential (") && slower.contains("× slower)"),
        "{text}"
    );
}

/// The configurations come sequential first, then by stream count and order, whatever
/// the order of the saved points.
#[test]
fn configurations_in_order_whatever_the_points_order() {
    let mut r = committed();
    let key = |a: &SincosAnalysis| -> Vec<_> {
        (a.configs.iter()).map(|c| (c.variant, c.streams)).collect()
    };
    let ordered = key(&SincosOverlap::derive(&r, &[]));
    assert_eq!(ordered[0].0, IssueOrder::Sequential);
    r.points.reverse();
    assert_eq!(key(&SincosOverlap::derive(&r, &[])), ordered);
}
