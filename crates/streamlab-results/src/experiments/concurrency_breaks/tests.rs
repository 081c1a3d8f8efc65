//! concurrency-breaks' analysis on a recorded run, and its cases' declarations.
use super::*;

#[test]
fn every_case_has_a_clean_baseline_every_break_a_rule_and_every_remedy_a_break() {
    for case in Case::ALL {
        let base = case.baseline();
        assert_eq!(base.blocking_streams(), case.blocking_streams());
        assert!(base.expected().is_empty());
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
        // Every break has a remedy measured beside it.
        if case.nsys_rule().is_some() {
            let remedied = Case::ALL.iter().any(|c| c.remedies() == Some(case));
            assert!(remedied, "{case:?} has no remedy");
        }
    }
    assert_eq!(
        Case::NullStreamCopyNonBlocking.baseline(),
        Case::CleanNonBlocking
    );
}

/// The recorded run of 2026-11-27 04:47 with a probe of each copy time, and without one
/// as an older result: the staged copy is held against the slower of clean and the
/// host's copy, the staging note says whether the pipeline hides that copy, and within
/// noise means within the rows' noise, not under the minimum effect. The host calls a
/// timeline records are counted per iteration, and the NULL-stream copy's overlap lost
/// is told only where its timelines were traced.
#[test]
fn the_staged_copy_is_held_against_the_host_s_copy_and_within_noise_is_the_rows_noise() {
    let says = [
        (Some(0.01), "while it is shorter, as here"),
        (Some(1000.0), "which it is not here"),
        (Some(0.5), "on 4 threads"),
        (None, ""),
    ];
    let run: ConcurrencyBreaksResult = serde_json::from_str(include_str!(
        "../../../tests/runs/h200-2026-11-27-0447/concurrency-breaks.json"
    ))
    .unwrap();
    let note = |a: &Analyzed<ConcurrencyBreaks>, label: &str| {
        let notes = &a.words.as_ref().unwrap().notes;
        notes.iter().find(|(l, _)| l == label).map(|x| x.1.clone())
    };
    for (copy_ms, says) in says {
        let mut r = run.clone();
        r.staging = copy_ms.map(|copy_ms| StagingProbe {
            bytes: 8 << 20,
            threads: 4,
            by_threads: vec![(1, 3.0 * copy_ms), (2, 1.6 * copy_ms), (4, copy_ms)],
            copy: Series::new(vec![copy_ms * 0.99, copy_ms, copy_ms * 1.01]).unwrap(),
        });
        let a = Analyzed::<ConcurrencyBreaks>::new(KernelSet::Rust, r);
        let rows = &a.analysis.rows;
        let staged = rows.iter().find(|x| x.key == Case::StagedCopy.label());
        let row = |case: Case| a.derived.row(case).unwrap();
        let held = copy_ms.map(|ms| RowControl::Model(row(Case::Clean).time.median().max(ms)));
        assert_eq!(staged.unwrap().control, held, "{copy_ms:?}");
        let probed = rows.iter().any(|x| x.key == "host-copy-to-staging");
        assert_eq!(probed, copy_ms.is_some());
        match note(&a, "Staging") {
            Some(text) => assert!(text.contains(says), "{text}"),
            None => assert!(copy_ms.is_none()),
        }
        for x in &a.derived.rows {
            let within = (x.over_clean - 1.0).abs() <= x.noise.max(row(x.case.baseline()).noise);
            assert_eq!(x.within_noise, within, "{:?}", x.case);
        }
        // A case the rule calls the same can still be beyond its noise: the words differ.
        let text = note(&a, "Remedies' result").unwrap();
        assert!(text.contains("by the rule"), "{text}");
        assert!(text.contains("within noise of it"), "{text}");
        // The clean pipeline waits for nothing on the host; a host wait and an allocation
        // are host calls on the issue path.
        assert_eq!(row(Case::Clean).host_ms, None);
        for case in [Case::HostWaitOnEvent, Case::AllocAndFree] {
            let host = row(case).host_ms.unwrap();
            assert!(
                host > 0.0 && host < row(case).time.median() * 10.0,
                "{case:?}: {host}"
            );
        }
        let cause = a.derived.remedy(Case::EventQuery).map(|x| x.breaks);
        assert_eq!(cause, Some(Case::HostWaitOnEvent));
        let text = note(&a, "Result").unwrap();
        assert!(text.contains("ms less per iteration"), "{text}");
    }
    let mut untraced = run;
    untraced.cases.iter_mut().for_each(|c| c.timeline = None);
    let untraced = Analyzed::<ConcurrencyBreaks>::new(KernelSet::Rust, untraced);
    let text = note(&untraced, "Result").unwrap();
    assert!(
        text.contains("was not traced") && !text.contains("– ms"),
        "{text}"
    );
}
