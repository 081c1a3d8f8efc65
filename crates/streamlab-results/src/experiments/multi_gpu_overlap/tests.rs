//! multi-gpu-overlap's analysis and presentation on made-up two-GPU results.
use super::*;
use crate::experiments::peer_copy::tests::{analyzed, note, section};
use crate::report::figures::Drawing;
use crate::saved::Params as _;
use crate::stats::tests::{close, series};

/// The parts of `mib` MiB each way: in and out at 50 GB/s alone, both ways together
/// in 1.2× the time of one way alone, the kernels `kernel_ms`.
fn stage_times(chunks: usize, mib: u64, kernel_ms: f64) -> StageTimes {
    let bytes = mib << 20;
    let one_way = bytes as f64 / 50e6;
    StageTimes {
        chunks,
        bytes,
        passes: 1,
        htod: series(&[one_way, one_way * 1.1]),
        dtoh: series(&[one_way]),
        both: series(&[1.2 * one_way]),
        both_htod: series(&[one_way]),
        both_dtoh: series(&[one_way]),
        kernels: Some(series(&[kernel_ms])),
    }
}

/// Two GPUs, 64 MiB each way in all, 4 streams each, batches of 10 iterations: each
/// GPU's share alone takes 0.671 ms one way; every GPU copying at once `host_link_ms`.
fn result(host_link_ms: f64, spread_ms: f64) -> MultiGpuOverlapResult {
    let elements = 16 << 20;
    let share = |k: usize| GpuShare {
        device: crate::saved::made_up_device(k),
        first: k * elements / 2,
        elements: elements / 2,
        streams: 4,
        stages: Some(stage_times(4, 32, 0.05)),
    };
    let mut run = RunRecord::made_up(Params {
        devices: vec![0, 1],
        elements,
        ..Params::quick()
    });
    run.verification.checked = elements as u64;
    MultiGpuOverlapResult {
        run,
        gpus: vec![share(0), share(1)],
        batch_sizes: vec![10, 10],
        spread: series(&[spread_ms, spread_ms * 1.01, spread_ms * 0.99]),
        alone: series(&[1.7, 1.71, 1.69]),
        alone_stages: stage_times(4, 64, 0.1),
        host_link: series(&[host_link_ms, host_link_ms * 1.2]),
        host_link_between: None,
        host_link_after: None,
        timeline: None,
    }
}

/// The chart of `r`.
fn chart(r: &MultiGpuOverlapResult) -> crate::report::chart::Chart {
    let Drawing::Chart(chart) = figures(r, &analyze(r)).remove(0).drawing else {
        panic!("a chart")
    };
    chart
}

#[test]
fn a_slow_shared_link_binds_the_run_renders_held_to_its_bounds_and_an_idle_gpu_is_said() {
    // Every GPU at once moves 128 MiB in 1.2 ms: slower than either GPU alone.
    let mut r = result(1.2, 1.25);
    let a = analyze(&r);
    let share = a.per_gpu[0].bound.unwrap();
    let one_way = (32u64 << 20) as f64 / 50e6;
    // Both ways at once: C + (H + D − C)/(4 × 10) per iteration.
    let both_ways = 1.2 * one_way + 0.8 * one_way / 40.0;
    assert!(close(share.ms, both_ways), "{}", share.ms);
    assert_eq!(share.limiter, Limiter::BothWays);
    assert!(close(a.gpus_bound_ms, share.ms));
    assert_eq!(a.limit, Limit::HostLink);
    assert!(close(a.bound.ms, 1.2));
    assert!(close(a.host_link_gbps, 2.0 * (64u64 << 20) as f64 / 1.2e6));
    let alone = 2.0 * one_way;
    assert!(close(a.alone_bound.ms, 1.2 * alone + 0.8 * alone / 40.0));
    assert!(close(a.speedup, 1.7 / 1.25));
    assert!(close(a.bound_speedup, a.alone_bound.ms / 1.2));
    assert!(close(a.efficiency, a.speedup / a.bound_speedup));
    assert!(a.at_bound, "{} against {}", a.speedup, a.bound_speedup);
    assert!(!a.beyond_bound);
    let tables = MultiGpuOverlap::tables(&r, &a, None);
    assert_eq!(tables.len(), 2);
    let main = &tables[0];
    assert_eq!(main.rows.len(), 1);
    let cell = |heading: &str| main.rows[0][main.column(heading).unwrap()].as_str();
    assert_eq!(cell("speedup"), "1.36×");
    assert_eq!(cell("all GPUs"), "1.2500");
    assert_eq!(cell("limited by"), "every GPU's host copies at once");
    assert_eq!(cell("all GPUs / bound"), "1.04×");
    assert_eq!(main.rows[0].last().unwrap(), "within");
    assert_eq!(tables[1].rows.len(), 2);
    let csv = &MultiGpuOverlap::csv(&r, &a)[0].contents;
    let start = "gpus,streams,spread_ms,spread_noise,alone_ms,alone_noise,speedup,bound_ms,spread_over_bound,bound_speedup,efficiency,beyond_bound\n2,4,1.2500,";
    assert!(csv.starts_with(start), "{csv}");
    let shown = section::<MultiGpuOverlap>(&r);
    assert_eq!(shown.figures.len(), 1);
    let verdict = shown.verdict.as_deref().unwrap();
    assert!(
        verdict.starts_with("2 GPUs ran 1.36× faster than the first alone")
            && verdict.contains("at the bound within 1.05×"),
        "{verdict}"
    );
    let bound = note(&shown, "Bound");
    assert!(
        bound.contains("the fastest of 2 probes (2 before, 0 between rounds of timed batches, 0 after them; the fastest before the timed batches)"),
        "{bound}"
    );
    let against = note(&shown, "Against the bounds");
    assert!(against.starts_with("All GPUs took 1.04× their bound"));
    assert_eq!(note(&shown, "Flagged"), "");
    assert_eq!(note(&shown, "Streams"), "");
    let summary = analyzed::<MultiGpuOverlap>(&r).analysis.summary;
    let line = summary.line.unwrap();
    assert!(
        line.starts_with("2 GPUs 1.2500 ms, first alone 1.7000 ms: 1.36×")
            && line.ends_with("verified"),
        "{line}"
    );
    assert_eq!(MultiGpuOverlap::rows(&r, &a).len(), 3);
    // The chart draws each bar's own bound across that bar alone.
    let chart = chart(&r);
    assert_eq!(chart.lines.len(), 1);
    let bound = &chart.lines[0];
    assert!(bound.dashed && bound.joined);
    // A dash across each bar, broken between them.
    let p = &bound.points;
    assert_eq!(p.len(), 6);
    let (alone, spread) = (a.alone_bound.ms, a.bound.ms);
    assert_eq!(p[..2], [(-0.4, alone), (0.4, alone)]);
    assert!(p[2].1.is_nan());
    assert_eq!(p[3..5], [(0.6, spread), (1.4, spread)]);
    // An idle GPU has no bound, and is said to have had no elements.
    (r.gpus[1].streams, r.gpus[1].elements, r.gpus[1].stages) = (0, 0, None);
    let a = analyze(&r);
    assert!(a.per_gpu[1].bound.is_none());
    let idle = section::<MultiGpuOverlap>(&r);
    let streams =
        "Fewer elements than --streams 4, each element its own stream: GPU 1 (no elements).";
    assert_eq!(note(&idle, "Streams"), streams);
    let table = &MultiGpuOverlap::tables(&r, &a, None)[1];
    assert_eq!(table.rows[1].last().unwrap(), "no elements");
}

#[test]
fn devices_and_batches_are_checked_before_the_gpus_are_opened() {
    let mut p = Params::default();
    assert!(p.validate().is_ok(), "crate::spread tests the rest");
    p.devices = vec![0];
    let one = "multi-gpu-overlap needs two or more GPUs but --devices names one (0)";
    assert!(p.validate().unwrap_err().to_string().contains(one));
    (p.devices, p.batches, p.iterations) = (vec![], Some(30), 20);
    let err = p.validate().unwrap_err().to_string();
    assert!(err.contains("--batches 30"), "{err}");
}

#[test]
fn the_bound_is_the_slowest_gpu_or_the_best_host_link_probe_before_between_and_after() {
    let mut r = result(0.5, 1.2);
    // GPU 1's kernels take longer than its copies, and the link is fast.
    r.gpus[1].stages = Some(stage_times(4, 32, 0.9));
    let a = analyze(&r);
    let (ordinal, limiter) = (1, Limiter::Sms);
    assert_eq!(a.limit, Limit::Gpu { ordinal, limiter });
    assert!(close(a.bound.ms, a.per_gpu[1].bound.unwrap().ms));
    assert!(a.bound.ms > a.per_gpu[0].bound.unwrap().ms);
    // 1.7 / 1.2 against a bound's speedup near 1.75: more than 5% short.
    assert!(!a.at_bound, "{} against {}", a.speedup, a.bound_speedup);
    assert_eq!(a.limit.label(), "GPU 1: SMs");
    // Every GPU at once took 1.2 ms a pass before the timed batches; 1.1 ms in one probe
    // between two rounds of them.
    let mut r = result(1.2, 1.25);
    let first_only = analyze(&r);
    r.host_link_between = Some(series(&[1.3, 1.1]));
    let a = analyze(&r);
    assert!(close(a.host_link_ms, 1.1) && close(a.bound.ms, 1.1));
    assert!(close(a.host_link_gbps, 2.0 * (64u64 << 20) as f64 / 1.1e6));
    assert!(a.bound_speedup > first_only.bound_speedup);
    let p = a.host_link_probes;
    assert_eq!((p.before, p.between, p.after, p.best), (2, 2, 0, "between"));
    // One after them faster still sets it; a slower one leaves it.
    r.host_link_after = Some(series(&[1.15, 1.08, 1.2]));
    let a = analyze(&r);
    assert!(close(a.host_link_ms, 1.08));
    assert_eq!(a.host_link_probes.best, "after");
    r.host_link_after = Some(series(&[1.5]));
    assert!(close(analyze(&r).host_link_ms, 1.1));
}

#[test]
fn a_run_beyond_its_bound_is_flagged_only_beyond_noise_and_is_never_a_finding() {
    // 1% under a bound of 1.2 ms: at it, within noise.
    let at = analyze(&result(1.2, 1.19));
    assert!(!at.bound.lowered() && !at.beyond_bound);
    assert_eq!(at.bound.under, Some(Under::WithinNoise));
    // 4% under it, but the run's samples and the probes spread wider than that: the bound
    // is lowered to the run, and the run is not flagged.
    let mut noisy = result(1.2, 1.15);
    noisy.spread = series(&[1.05, 1.15, 1.25]);
    let a = analyze(&noisy);
    assert!(a.bound.lowered() && close(a.bound.ms, 1.15) && close(a.spread_over_bound, 1.0));
    assert_eq!(a.bound.under, Some(Under::WithinNoise));
    assert!(!a.beyond_bound);
    let summary = analyzed::<MultiGpuOverlap>(&noisy).analysis.summary;
    assert!(!summary.overview.finding.contains("flagged"));
    let within = note(&section::<MultiGpuOverlap>(&noisy), "Flagged").to_owned();
    assert!(within.ends_with("within noise. Within the noise of both figures: not flagged."));
    // 17% under tight probes with tight samples: beyond noise, flagged.
    let mut beyond = result(1.2, 1.0);
    beyond.host_link = series(&[1.2, 1.2, 1.201]);
    let a = analyze(&beyond);
    assert!(a.beyond_bound && a.bound.lowered());
    assert_eq!(a.bound.under, Some(Under::BeyondNoise));
    assert_eq!(a.bound.built_ms, Some(1.2));
    let summary = analyzed::<MultiGpuOverlap>(&beyond).analysis.summary;
    let o = &summary.overview;
    let finding = &o.finding;
    assert!(finding.contains("flagged, not a finding"), "{finding}");
    assert!(!finding.contains("allows"), "{finding}");
    assert_eq!(o.result, "flagged: beyond its bound");
    assert_eq!(o.over_bound.as_ref().map(|(x, _)| *x), Some(1.0));
    let line = summary.line.unwrap();
    assert!(line.contains("FLAGGED: a run beat its bound beyond noise"));
    assert_eq!(summary.headline.unwrap()["beyond_bound"], true);
    let section = section::<MultiGpuOverlap>(&beyond);
    assert!(section.verdict.as_deref().unwrap().starts_with("FLAGGED"));
    let flagged = note(&section, "Flagged");
    assert!(
        flagged.contains("all GPUs ran 20% faster than their bound (every GPU's host copies at once) allows as measured (bound 1.2000 → 1.0000 ms), beyond noise")
            && flagged.ends_with("this run's speedup is flagged, not a finding."),
        "{flagged}"
    );
    let table = &MultiGpuOverlap::tables(&beyond, &a, None)[0];
    let against = table.rows[0].last().unwrap();
    assert!(against.ends_with("; flagged: no finding"));
    // The chart marks each bar's own bound and the bound as built.
    let chart = chart(&beyond);
    let names: Vec<&str> = chart.lines.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["each run's bound", "bound as built, beaten"]);
}

#[test]
fn a_result_saved_before_the_probes_between_and_after_still_reads() {
    // This module's made-up two-GPU result (host link 1.2 ms, all GPUs 1.25 ms) as
    // streamlab f771c3b saved it, every GPU used: no probes between or after the timed
    // batches, no timeline, no GPU ordinals in its parameters.
    let text = include_str!("../../../tests/formats/multi-gpu-overlap-f771c3b.json");
    let r: MultiGpuOverlapResult = crate::folder::parse("f771c3b".as_ref(), text).unwrap();
    assert!(r.host_link_between.is_none() && r.host_link_after.is_none());
    assert!(r.timeline.is_none() && r.run.params.devices.is_empty());
    let analyzed = analyzed::<MultiGpuOverlap>(&r);
    let a = &analyzed.derived;
    // The bound rests on the probes before the timed batches alone, as it did.
    assert!(close(a.host_link_ms, 1.2) && close(a.bound.ms, 1.2));
    let probes = &a.host_link_probes;
    assert_eq!((probes.before, probes.between), (2, 0));
    assert!(!a.beyond_bound && analyzed.analysis.trace_checks.is_empty());
    let section = MultiGpuOverlap::section(&analyzed, None).unwrap();
    assert!(section.timelines.is_empty());
    let verdict = section.verdict.unwrap();
    assert!(verdict.starts_with("2 GPUs ran 1.36× faster"));
}
