//! The trace checks on made-up timelines: each check's pass and fail, the breaks found and
//! described, the engines' occupancy and the busiest bound.
use super::*;
use crate::saved::timeline::{CopyRates, Engine, Lane, TracedGpu};
use crate::saved::{made_up_op, made_up_timeline};
use crate::stats::tests::close;

fn op(kind: OpKind, stream: usize, iteration: usize, start: f64, end: f64) -> TimelineOp {
    TimelineOp {
        iteration,
        ..made_up_op(kind, stream, start, end)
    }
}

/// A timeline of `ops` over `iterations` iterations, back to back where there are several.
fn timeline(ops: Vec<TimelineOp>, timed_ms: f64, iterations: usize) -> Timeline {
    let mut t = made_up_timeline(4, ops, timed_ms);
    t.iterations = iterations;
    t.reference.back_to_back = iterations > 1;
    t.reference.rates = Some(CopyRates {
        htod_gbps: 55.0,
        dtoh_gbps: 55.0,
        both_gbps: 96.0,
        htod_shared_gbps: 48.0,
        dtoh_shared_gbps: 48.0,
    });
    t
}

/// 32 MiB takes 0.610 ms at 55 GB/s and 0.699 ms at 48 GB/s.
fn serial_copies() -> Vec<TimelineOp> {
    vec![
        op(OpKind::HtoD, 0, 0, 0.0, 0.61),
        op(OpKind::HtoD, 1, 0, 0.61, 1.25),
        op(OpKind::Kernel, 0, 0, 0.62, 0.70),
        op(OpKind::DtoH, 0, 0, 0.70, 1.38),
    ]
}

/// One timeline of `ops`, not back to back, checked: its failures.
fn failures(ops: Vec<TimelineOp>, timed_ms: f64) -> Vec<String> {
    check(&timeline(ops, timed_ms, 1)).failures()
}

#[test]
fn each_check_passes_a_clean_trace_and_fails_its_own_fault_on_one_gpu_or_several() {
    let checks = check(&timeline(serial_copies(), 1.4, 1));
    assert!(checks.passed(), "{:?}", checks.failures());
    assert!(checks.checks.iter().all(|c| c.outcome == Outcome::Passed));
    // Two copies of one direction overlapping.
    let mut ops = serial_copies();
    ops[1].start_ms = 0.3;
    ops[1].end_ms = 0.91;
    let failed = failures(ops, 1.4);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].contains("HtoD on stream 2 (iteration 1) starts 0.310 ms before"));
    // A copy slower than the link allows.
    let mut ops = serial_copies();
    ops[3].end_ms = 0.70 + 1.2;
    let failed = failures(ops, 1.9);
    assert!(failed[0].contains("DtoH on stream 1"), "{failed:?}");
    // A trace slower than the timed median is disturbed and gives no bound.
    let mut t = timeline(serial_copies(), 1.4, 1);
    t.reference.median_ms = Some(1.4);
    let checks = check(&t);
    assert!(checks.passed(), "{:?}", checks.failures());
    assert!(close(checks.busiest_bound().unwrap().ms, 1.37));
    t.reference.median_ms = Some(1.3);
    let checks = check(&t);
    assert!(checks.disturbed && checks.busiest_bound().is_none());
    assert!(checks.failures()[0].contains("busier link"), "{checks:?}");
    // Event brackets are only held to the span.
    let mut t = timeline(serial_copies(), 1.4, 1);
    t.ops[1].start_ms = 0.0;
    t.source = TraceSource::Events;
    let checks = check(&t);
    assert!(checks.passed() && checks.occupancy.is_none());
    assert_eq!(checks.checks[0].outcome, Outcome::NotApplicable);
    assert_eq!(checks.checks[2].outcome, Outcome::Passed);
    // Each GPU its own serial copies, both GPUs at once: streams 1–2 GPU 0's, 3–4 GPU 1's.
    let on = |gpu: usize, op: TimelineOp| TimelineOp {
        stream: op.stream + 2 * gpu,
        ..op
    };
    let ops: Vec<TimelineOp> = (0..2)
        .flat_map(|gpu| serial_copies().into_iter().map(move |op| on(gpu, op)))
        .collect();
    let mut t = timeline(ops, 1.4, 1);
    t.devices = (0..2)
        .map(|ordinal| TracedGpu {
            ordinal,
            streams: 2,
        })
        .collect();
    let checks = check(&t);
    assert!(checks.passed(), "{:?}", checks.failures());
    let said = &checks.checks[0].detail;
    assert!(said.starts_with("4 HtoD and 2 DtoH copies"), "{said}");
    // Several GPUs have no one set of engines: no occupancy, no busiest bound.
    assert!(checks.occupancy.is_none() && checks.busiest_bound().is_none());
    // Two copies of one GPU overlapping still fail, named by their GPU's stream.
    t.ops[5].start_ms = 0.3;
    t.ops[5].end_ms = 0.91;
    let failed = check(&t).failures();
    assert_eq!(failed.len(), 1, "{failed:?}");
    let named = "HtoD on GPU 1 stream 2 (iteration 1) starts 0.310 ms before";
    assert!(failed[0].contains(named), "{failed:?}");
    // A copy staged from pageable memory: its record spans its staged chunks, and the
    // pinned copy of stream 2 ran between two of them.
    let mut ops = serial_copies();
    ops[0].pageable = true;
    ops[0].end_ms = 1.0;
    let checks = check(&timeline(ops.clone(), 1.4, 1));
    let one = &checks.checks[0];
    assert_eq!((&*one.name, one.outcome), (ONE_AT_A_TIME, Outcome::Passed));
    let staged = "1 staged from pageable memory left out";
    assert!(one.detail.contains(staged), "{one:?}");
    // Two pinned copies overlapping still fail beside it.
    ops[3].kind = OpKind::HtoD;
    ops[3].start_ms = 1.0;
    let failed = failures(ops, 1.4).join("; ");
    assert!(failed.contains("starts 0.250 ms before"), "{failed}");
}

#[test]
fn the_span_or_the_middle_period_must_match_the_timed_time() {
    assert!(!check(&timeline(serial_copies(), 1.0, 1)).passed());
    // Three iterations back to back ending at 2, 3 and 5 ms: the middle period is 1.
    let ops = vec![
        op(OpKind::Kernel, 0, 0, 0.0, 2.0),
        op(OpKind::Kernel, 0, 1, 2.0, 3.0),
        op(OpKind::Kernel, 0, 2, 3.0, 5.0),
    ];
    assert!(check(&timeline(ops.clone(), 1.05, 3)).passed());
    assert!(!check(&timeline(ops, 1.5, 3)).passed());
    // Three streams, each iteration 1 ms after the one before, but the engine served
    // stream 3 last in the middle iteration: its last end moved 0.6 ms, its period
    // did not.
    let ops: Vec<TimelineOp> = (0..3)
        .flat_map(|i| {
            (0..3).map(move |s| {
                let late = if (i, s) == (1, 2) { 0.6 } else { 0.0 };
                let start = i as f64 + 0.3 * s as f64 + late;
                op(OpKind::Kernel, s, i, start, start + 0.3)
            })
        })
        .collect();
    assert!(check(&timeline(ops, 1.0, 3)).passed());
}

#[test]
fn occupancy_and_flow_are_each_engines_union_and_bound_the_iteration() {
    // serial_copies: HtoD busy 0–1.25, SMs 0.62–0.70, DtoH 0.70–1.38; span 0–1.38.
    let o = occupancy(&timeline(serial_copies(), 1.4, 1)).unwrap();
    assert!(close(o.span_ms, 1.38) && close(o.htod_busy_ms, 1.25));
    assert!(close(o.sms_busy_ms, 0.08) && close(o.dtoh_busy_ms, 0.68));
    // Both directions ran at once from 0.70 to 1.25.
    assert!(close(o.both_copying_ms, 0.55));
    // Stream 1 copies its chunk in, runs the kernel and copies it out one after
    // another: 0.61 + 0.08 + 0.68 ms, more than the HtoD engine's 1.25.
    assert_eq!(o.bound.resource, Resource::Stream(0));
    assert!(close(o.bound.ms, 1.37));
    let said = o.describe();
    assert!(said.starts_with("HtoD copy engine busy 91%"), "{said}");
    // Its flow: copies 0–1.38, every op ready at 0.
    let f = o.flow;
    assert!(close(f.copying_ms, 1.38) && close(f.copy_kernel_overlap_ms, 0.08));
    assert_eq!(f.idle_gaps, 0);
    // Waits: 0, 0.61, 0.62 and 0.70 ms.
    assert!(close(f.mean_queue_wait_ms, 1.93 / 4.0));
    assert!(close(f.longest_queue_wait_ms, 0.70));
    let w = f.longest_wait.unwrap();
    assert_eq!((w.kind, w.stream), (OpKind::DtoH, 0));
    // Two iterations: per iteration, the HtoD engine is busy 1.5 / 2, the SMs 1.3 / 2,
    // stream 1 (1.0 + 0.7) / 2 and stream 2 (1.0 + 0.6) / 2.
    let ops = vec![
        op(OpKind::HtoD, 0, 0, 0.0, 1.0),
        op(OpKind::HtoD, 1, 0, 0.5, 1.5),
        op(OpKind::Kernel, 0, 1, 1.5, 2.2),
        op(OpKind::Kernel, 1, 1, 2.2, 2.8),
    ];
    let o = occupancy(&timeline(ops, 1.4, 2)).unwrap();
    assert_eq!(o.bound.resource, Resource::Stream(0));
    assert!(close(o.bound.ms, 0.85) && close(o.htod_busy_ms, 1.5));
    // Back to back over five iterations, the three between fill and drain count: the
    // HtoD engine busy 0.9, 1.0 and 1.1 ms in them, 1.0 per iteration.
    let ops = (0..5)
        .map(|i| {
            let ms = [0.5, 0.9, 1.0, 1.1, 0.5][i];
            let start: f64 = [0.5, 0.9, 1.0, 1.1, 0.5][..i].iter().sum();
            op(OpKind::HtoD, 0, i, start, start + ms)
        })
        .collect();
    let o = occupancy(&timeline(ops, 1.0, 5)).unwrap();
    assert!(close(o.bound.ms, 1.0), "{}", o.bound.ms);
    // Back to back, fill and drain iterations give no bound: the middle one does.
    let ops = vec![
        op(OpKind::HtoD, 0, 0, 0.0, 0.5),
        op(OpKind::HtoD, 0, 1, 0.5, 1.5),
        op(OpKind::HtoD, 0, 2, 1.5, 2.0),
    ];
    let o = occupancy(&timeline(ops, 1.0, 3)).unwrap();
    assert!(close(o.bound.ms, 1.0));
    let no_negative_zero = o.sms_busy_ms.to_bits() == 0.0f64.to_bits();
    assert!(no_negative_zero, "{}", o.sms_busy_ms);
    // Stream 1 copies in and runs its kernel in the first iteration, and only copies
    // in the middle one: its 1.0 ms then is the bound.
    let ops = vec![
        op(OpKind::HtoD, 1, 0, 0.0, 0.4),
        op(OpKind::HtoD, 0, 0, 0.4, 1.0),
        op(OpKind::Kernel, 0, 0, 1.0, 1.2),
        op(OpKind::HtoD, 0, 1, 1.2, 2.2),
        op(OpKind::HtoD, 0, 2, 2.2, 3.2),
        op(OpKind::Kernel, 1, 2, 3.2, 3.4),
    ];
    let waits = occupancy(&timeline(ops, 1.0, 3)).unwrap();
    assert_eq!(waits.bound.resource, Resource::Stream(0));
    assert!(close(waits.bound.ms, 1.0));
}

#[test]
fn flow_counts_idle_time_with_work_queued_and_names_the_longest_wait() {
    // A kernel ready at 1.0 that starts at 1.5 after a copy ending at 1.0: half a
    // millisecond with every engine idle and work queued.
    let mut ops = vec![op(OpKind::HtoD, 0, 0, 0.0, 1.0)];
    let mut k = op(OpKind::Kernel, 0, 0, 1.5, 2.0);
    k.ready_ms = Some(1.0);
    ops.push(k);
    ops[0].ready_ms = Some(0.0);
    let f = occupancy(&timeline(ops, 2.0, 1)).unwrap().flow;
    assert!(close(f.idle_while_queued_ms, 0.5));
    assert_eq!((f.idle_gaps, f.copy_kernel_overlap_ms), (1, 0.0));
    let said = f.describe(0.5);
    let none_beside = said.starts_with("kernels ran beside a copy 0% of their time");
    assert!(none_beside && said.contains("0.5000 ms (1 gap)"), "{said}");
    let longest = "(kernel on stream 1, iteration 1)";
    assert!(said.ends_with(longest), "{said}");
    // The longest wait names its row as the timeline labels it.
    let on = |lane| Flow {
        longest_wait: Some(WaitingOp {
            kind: OpKind::HtoD,
            stream: 8,
            lane,
            iteration: 2,
        }),
        ..Flow::default()
    };
    for (lane, row) in [
        (Some(Lane::NullStream), "the NULL stream"),
        (None, "stream 9"),
    ] {
        let said = on(lane).describe(1.0);
        let longest = format!("(HtoD on {row}, iteration 3)");
        assert!(said.ends_with(&longest), "{said}");
    }
}

#[test]
fn a_traced_bound_is_the_median_batch_and_pairs_each_timed_batch_with_its_trace() {
    let bound = |ms, resource| BusiestBound { ms, resource };
    let (engine, stream) = (Resource::Engine(Engine::HtoD), Resource::Stream(1));
    // The link slowed for the second pair: paired, each batch is 1.02×, 1.01× and
    // 1.03× its trace; unpaired, the median time over the median bound is 1.1 / 1.0.
    let timed = [1.02, 1.212, 1.1];
    let traced = [bound(1.0, engine), bound(1.2, stream), bound(1.068, engine)];
    let b = traced_bound(&timed, &traced).unwrap();
    assert!(close(b.ms, 1.068));
    assert_eq!((b.resource, b.batches), (engine, 3));
    assert!(close(b.timed_over_bound, 1.02) && b.noise > 0.0, "{b:?}");
    // A timed batch without its trace (no CUPTI) gives no bound.
    assert_eq!(traced_bound(&timed, &traced[..2]), None);
    assert_eq!(traced_bound(&timed, &[]), None);
}

/// Two streams' copy in, kernel and copy out; with `null`, stream 2's copy in runs on
/// the NULL stream (row 3) and both kernels wait for it.
fn pipeline(null: bool) -> Timeline {
    let mut ops = vec![
        op(OpKind::HtoD, 0, 0, 0.0, 1.0),
        op(OpKind::HtoD, if null { 2 } else { 1 }, 0, 1.0, 2.0),
        op(OpKind::Kernel, 0, 0, if null { 2.0 } else { 1.0 }, 3.0),
        op(OpKind::Kernel, 1, 0, 2.0, 3.5),
        op(OpKind::DtoH, 0, 0, 3.0, 4.0),
        op(OpKind::DtoH, 1, 0, 4.0, 5.0),
    ];
    // Each op was ready when its stream's previous op ended.
    for (i, ready) in [0.0, 0.0, 1.0, 2.0, 3.0, 3.5].into_iter().enumerate() {
        ops[i].ready_ms = Some(ready);
    }
    let mut t = timeline(ops, 5.0, 1);
    t.streams = 2;
    if null {
        t.other_lanes = vec![Lane::NullStream];
    }
    t
}

#[test]
fn breaks_are_named_with_what_they_held_back_and_the_gpu_idle_under_them() {
    let t = pipeline(false);
    assert!(breaks(&t).is_empty());
    let none = describe_breaks(&[]);
    assert_eq!(describe_breaks(&check(&t).breaks), none);
    assert!(none.len() == 1 && none[0].starts_with("no concurrency breaks"));
    let found = breaks(&pipeline(true));
    assert_eq!(found.len(), 1);
    let b = &found[0];
    assert_eq!(b.kinds, [BreakKind::NullStream]);
    let at = (b.op, b.row.as_str(), b.iteration);
    assert_eq!(at, (OpKind::HtoD, "the NULL stream", 0));
    // Stream 1's kernel was ready at 1.0 and started at 2.0, as the copy ended.
    assert_eq!(b.held_back, 1);
    // Nothing else ran from 1.0 to 2.0.
    assert!(close(b.alone_ms, 1.0));
    let said = b.describe();
    assert!(
        said.contains("held back 1 operation that was ready"),
        "{said}"
    );
    let mut t = pipeline(false);
    t.ops[1].pageable = true;
    t.ops[4].synchronous = true;
    t.other_lanes = vec![Lane::Host];
    t.ops.push(TimelineOp {
        bytes: None,
        call: Some("cuMemFree".into()),
        ..op(OpKind::Host, 2, 0, 5.0, 5.5)
    });
    let found = breaks(&t);
    let kinds: Vec<&[BreakKind]> = found.iter().map(|b| b.kinds.as_slice()).collect();
    use BreakKind::{HostCall, Pageable, Synchronous};
    assert_eq!(kinds, [&[Pageable][..], &[Synchronous], &[HostCall]]);
    let host = &found[2];
    assert_eq!(host.row, "the host");
    // The GPU ran nothing during the call.
    assert!(close(host.alone_ms, 0.5));
    assert!(host.describe().contains("cuMemFree"));
    // A host call is not the GPU's work: the queue waits leave it out.
    let o = occupancy(&t).expect("ops");
    assert_eq!(o.flow.longest_wait.map(|w| w.kind), Some(OpKind::HtoD));
    assert!(close(o.flow.longest_queue_wait_ms, 1.0));
}
