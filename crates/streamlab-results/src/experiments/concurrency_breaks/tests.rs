//! concurrency-breaks' analysis on a recorded run, and its cases' declarations.
use super::*;

/// The recorded run `run` (a folder of `tests/runs`).
fn recorded(run: &str) -> ConcurrencyBreaksResult {
    let path = format!(
        "{}/tests/runs/{run}/concurrency-breaks.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The recorded run of 2026-11-27 04:47, with `staging` as its staging probe.
fn recorded_with(staging: Option<StagingProbe>) -> ConcurrencyBreaksResult {
    ConcurrencyBreaksResult {
        staging,
        ..recorded("h200-2026-11-27-0447")
    }
}

fn analyzed(r: ConcurrencyBreaksResult) -> Analyzed<ConcurrencyBreaks> {
    Analyzed::new(KernelSet::Rust, r)
}

/// The note `label` of `r`'s words, if it has one.
fn note(r: ConcurrencyBreaksResult, label: &str) -> Option<String> {
    let words = analyzed(r).words.unwrap();
    (words.notes.into_iter()).find_map(|(l, text)| (l == label).then_some(text))
}

#[test]
fn the_host_calls_a_timeline_records_are_counted_per_iteration() {
    let a = analyzed(recorded("h200-2026-11-27-0014")).derived;
    let row = |case: Case| a.row(case).unwrap();
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
    let remedy = a.remedy(Case::EventQuery).unwrap();
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
    let staged_control = |staging| {
        let a = analyzed(recorded_with(staging));
        let has_probe_row = (a.analysis.rows.iter()).any(|x| x.key == "host-copy-to-staging");
        let staged = (a.analysis.rows.iter())
            .find(|x| x.key == Case::StagedCopy.label())
            .unwrap();
        let clean = a.derived.row(Case::Clean).unwrap().median_ms;
        (clean, staged.control.clone(), has_probe_row)
    };
    let (clean, hidden, probed) = staged_control(Some(probe(0.01)));
    assert_eq!((hidden, probed), (Some(RowControl::Model(clean)), true));
    let (_, exposed, probed) = staged_control(Some(probe(1000.0)));
    assert_eq!((exposed, probed), (Some(RowControl::Model(1000.0)), true));
    // An older result, without the probe, has no such control and no probe row.
    let (_, old, probed) = staged_control(None);
    assert_eq!((old, probed), (None, false));
}

#[test]
fn the_staging_note_says_whether_the_pipeline_hides_the_host_s_copy() {
    let note = |staging| note(recorded_with(staging), "Staging");
    for (copy_ms, says) in [
        (0.01, "while it is shorter, as here"),
        (1000.0, "which it is not here"),
        (0.5, "on 4 threads"),
    ] {
        let text = note(Some(probe(copy_ms))).unwrap();
        assert!(text.contains(says), "{text}");
    }
    assert!(note(None).is_none());
}

#[test]
fn within_noise_means_within_the_rows_noise_not_under_the_minimum_effect() {
    let a = analyzed(recorded_with(None)).derived;
    for x in &a.rows {
        let noise = x.noise.max(a.row(x.case.baseline()).unwrap().noise);
        assert_eq!(
            x.within_noise,
            (x.over_clean - 1.0).abs() <= noise,
            "{:?}",
            x.case
        );
    }
    // A case the rule calls the same can still be beyond its noise: the words must differ.
    let text = note(recorded_with(None), "Remedies' result").unwrap();
    assert!(text.contains("by the rule"), "{text}");
    assert!(text.contains("within noise of it"), "{text}");
}

