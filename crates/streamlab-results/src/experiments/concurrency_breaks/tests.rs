//! concurrency-breaks' analysis on a recorded run, and its cases' declarations.
use super::*;

#[test]
fn the_host_calls_a_timeline_records_are_counted_per_iteration() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/runs/h200-2026-11-27-0014/concurrency-breaks.json"
    );
    let r: ConcurrencyBreaksResult =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let a = Analyzed::<ConcurrencyBreaks>::new(KernelSet::Rust, r).derived;
    let row = |case: Case| a.rows.iter().find(|x| x.case == case).unwrap();
    // The clean pipeline waits for nothing on the host; a host wait and an allocation
    // are host calls on the issue path.
    assert_eq!(row(Case::Clean).host_ms, None);
    for case in [Case::HostWaitOnEvent, Case::AllocAndFree] {
        let host = row(case).host_ms.unwrap();
        assert!(
            host > 0.0 && host < row(case).median_ms * 10.0,
            "{case:?}: {host}"
        );
    }
    let remedy = (a.remedies.iter())
        .find(|x| x.remedy == Case::EventQuery)
        .unwrap();
    assert_eq!(remedy.remedy_host_ms, row(Case::EventQuery).host_ms);
}

#[test]
fn every_case_has_a_clean_baseline_on_streams_of_its_kind() {
    for case in Case::ALL {
        let base = case.baseline();
        assert_eq!(base.blocking_streams(), case.blocking_streams());
        assert!(base.expected().is_empty());
    }
    assert_eq!(
        Case::NullStreamCopyNonBlocking.baseline(),
        Case::CleanNonBlocking
    );
}

#[test]
fn every_break_the_detector_names_has_a_rule_and_every_remedy_a_break_it_must_clear() {
    for case in Case::ALL {
        assert_eq!(
            case.nsys_rule().is_some(),
            !case.expected().is_empty() && case.remedies().is_none(),
            "{case:?}"
        );
        if let Some(cause) = case.remedies() {
            // The NULL-stream copy's remedies keep a copy on a default stream, which
            // non-blocking streams make harmless, and staging keeps a host wait for a
            // copy queued an iteration before: the others must run clean.
            let keeps_the_copy = cause == Case::NullStreamCopy;
            let keeps_a_wait = case == Case::StagedCopy;
            assert!(
                keeps_the_copy || keeps_a_wait || case.expected().is_empty(),
                "{case:?} must run clean"
            );
            assert!(!cause.expected().is_empty(), "{cause:?} must be a break");
            assert_eq!(
                case.blocking_streams() || cause == Case::NullStreamCopy,
                cause.blocking_streams()
            );
        }
    }
    // Every break has a remedy measured beside it.
    let breaks = Case::ALL.iter().filter(|c| c.nsys_rule().is_some());
    for &cause in breaks {
        assert!(
            Case::ALL.iter().any(|c| c.remedies() == Some(cause)),
            "{cause:?} has no remedy"
        );
    }
}

/// The recorded run of 2026-11-27 04:47, with `staging` as its staging probe.
fn recorded_with(staging: Option<StagingProbe>) -> ConcurrencyBreaksResult {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/runs/h200-2026-11-27-0447/concurrency-breaks.json"
    );
    let mut r: ConcurrencyBreaksResult =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    r.staging = staging;
    r
}

fn probe(copy_ms: f64) -> StagingProbe {
    StagingProbe {
        bytes: 8 << 20,
        threads: 4,
        by_threads: vec![
            (1, 3.0 * copy_ms),
            (2, 1.6 * copy_ms),
            (4, copy_ms),
            (8, copy_ms),
        ],
        copy: Series::new(vec![copy_ms * 0.99, copy_ms, copy_ms * 1.01]).unwrap(),
    }
}

#[test]
fn the_staged_copy_is_held_against_the_slower_of_clean_and_the_host_s_copy() {
    let control = |copy_ms: f64| {
        let a = Analyzed::<ConcurrencyBreaks>::new(
            KernelSet::Rust,
            recorded_with(Some(probe(copy_ms))),
        );
        let clean = a
            .derived
            .rows
            .iter()
            .find(|x| x.case == Case::Clean)
            .unwrap()
            .median_ms;
        let staged = (a.analysis.rows.iter())
            .find(|x| x.key == Case::StagedCopy.label())
            .unwrap()
            .control
            .clone();
        assert!(
            a.analysis
                .rows
                .iter()
                .any(|x| x.key == "host-copy-to-staging")
        );
        (clean, staged)
    };
    let (clean, hidden) = control(0.01);
    assert_eq!(hidden, Some(RowControl::Model(clean)));
    let (_, exposed) = control(1000.0);
    assert_eq!(exposed, Some(RowControl::Model(1000.0)));
    // An older result, without the probe, has no such control and no probe row.
    let old = Analyzed::<ConcurrencyBreaks>::new(KernelSet::Rust, recorded_with(None));
    let staged = (old.analysis.rows.iter())
        .find(|x| x.key == Case::StagedCopy.label())
        .unwrap();
    assert_eq!(staged.control, None);
}

#[test]
fn the_staging_note_says_whether_the_pipeline_hides_the_host_s_copy() {
    let note = |copy_ms: f64| {
        let r = recorded_with(Some(probe(copy_ms)));
        let a = Analyzed::<ConcurrencyBreaks>::new(KernelSet::Rust, r.clone()).derived;
        present::staging_note(&r, &a).unwrap()
    };
    assert!(
        note(0.01).contains("while it is shorter, as here"),
        "{}",
        note(0.01)
    );
    assert!(
        note(1000.0).contains("which it is not here"),
        "{}",
        note(1000.0)
    );
    assert!(note(0.5).contains("on 4 threads"), "{}", note(0.5));
    assert!(
        present::staging_note(
            &recorded_with(None),
            &Analyzed::<ConcurrencyBreaks>::new(KernelSet::Rust, recorded_with(None)).derived
        )
        .is_none()
    );
}

#[test]
fn within_noise_means_within_the_rows_noise_not_under_the_minimum_effect() {
    let a = Analyzed::<ConcurrencyBreaks>::new(KernelSet::Rust, recorded_with(None)).derived;
    for x in &a.rows {
        let noise = x.noise.max(
            a.rows
                .iter()
                .find(|c| c.case == x.case.baseline())
                .unwrap()
                .noise,
        );
        assert_eq!(
            x.within_noise,
            (x.over_clean - 1.0).abs() <= noise,
            "{:?}",
            x.case
        );
    }
    // A case the rule calls the same can still be beyond its noise: the words must differ.
    let text = present::remedies_result(&a);
    assert!(text.contains("by the rule"), "{text}");
    assert!(text.contains("within noise of it"), "{text}");
}
