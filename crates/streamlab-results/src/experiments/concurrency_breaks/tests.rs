//! concurrency-breaks' analysis on a recorded run, and its cases' declarations.
use super::*;
use crate::saved::KernelSet;

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
    for cause in [
        Case::NullStreamCopy,
        Case::MemsetWithoutStream,
        Case::AllocAndFree,
        Case::PageableCopy,
        Case::HostWaitOnEvent,
    ] {
        assert!(
            Case::ALL.iter().any(|c| c.remedies() == Some(cause)),
            "{cause:?}"
        );
    }
}
