//! Rates and pipeline stages from measured stage times: the best each path reached in
//! the run, since a bound is what the hardware demonstrably did.
//!
//! Large copies (at least [`LARGE_COPY_BYTES`] each) move at the link's rate whatever
//! their size, so the fastest rate of an experiment's own large copies holds all its
//! bounds' large copy stages: a sample that met a busy link cannot raise a bound.
//! Smaller copies keep their own measured times, fixed costs included.
use super::pipeline::Stages;
use crate::saved::timeline::{CopyRates, OpKind, Timeline};
use crate::saved::{LinkProbe, LinkRates, StageTimes};
use crate::stats::Series;

/// GB/s (10^9 bytes per second) of `bytes` moved in `ms` milliseconds.
pub fn gbps(bytes: u64, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e6)
}

/// Milliseconds to move `bytes` at `gbps`.
pub fn ms_at(bytes: u64, gbps: f64) -> f64 {
    bytes as f64 / (gbps * 1e6)
}

/// The fastest rate of each path, and each direction's median rate while both run.
pub fn best_rates(t: &StageTimes) -> CopyRates {
    rates(t, Series::min)
}

/// The medians of each path, for tables that describe the typical copy.
pub fn median_rates(t: &StageTimes) -> CopyRates {
    rates(t, Series::median)
}

/// Each path's rate alone and both ways from the sample `pick` chooses; each direction's
/// rate while both run from its median, whatever `pick`.
fn rates(t: &StageTimes, pick: fn(&Series) -> f64) -> CopyRates {
    CopyRates {
        htod_gbps: gbps(t.bytes, pick(&t.htod)),
        dtoh_gbps: gbps(t.bytes, pick(&t.dtoh)),
        both_gbps: gbps(2 * t.bytes, pick(&t.both)),
        htod_shared_gbps: gbps(t.bytes, t.both_htod.median()),
        dtoh_shared_gbps: gbps(t.bytes, t.both_dtoh.median()),
    }
}

/// The bound's stages: the fastest sample of each part, the kernels' also from `kernels`
/// (0 where neither was timed, which keeps the bound a lower bound).
pub fn stages(t: &StageTimes, kernels: Option<f64>) -> Stages {
    let timed = t.kernels.as_ref().map(|k| k.min());
    Stages {
        htod_ms: t.htod.min(),
        kernel_ms: match (timed, kernels) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(0.0),
        },
        dtoh_ms: t.dtoh.min(),
        both_ms: t.both.min(),
    }
}

/// Copies from this size up move at the link's rate: a copy's fixed cost (a few
/// microseconds, more while CUPTI records it) is under 3% of their time.
pub const LARGE_COPY_BYTES: u64 = 8 << 20;

/// The fastest copies of at least [`LARGE_COPY_BYTES`] among `stage_times` and the
/// copies of `timelines` of one GPU (alone or not, a copy shows a rate its direction
/// reached); `None` where there were none.
pub fn fastest_link<'a>(
    stage_times: impl IntoIterator<Item = &'a StageTimes>,
    timelines: impl IntoIterator<Item = &'a Timeline>,
) -> Option<LinkRates> {
    let mut fastest: Option<LinkRates> = None;
    let mut offer = |rates: LinkRates| {
        fastest = Some(fastest.map_or(rates, |f| faster(f, rates)));
    };
    for t in stage_times {
        if t.bytes / t.chunks.max(1) as u64 >= LARGE_COPY_BYTES {
            offer(LinkRates {
                htod_gbps: gbps(t.bytes, t.htod.min()),
                dtoh_gbps: gbps(t.bytes, t.dtoh.min()),
                both_gbps: gbps(2 * t.bytes, t.both.min()),
            });
        }
    }
    // A timeline of several GPUs shows each one's share of a host link the others use
    // at once: no one GPU's link.
    let one_gpu = timelines.into_iter().filter(|t| t.devices.is_empty());
    for op in one_gpu.flat_map(|t| &t.ops) {
        let (Some(bytes), took) = (op.bytes, op.end_ms - op.start_ms) else {
            continue;
        };
        if bytes < LARGE_COPY_BYTES || took <= 0.0 || op.pageable {
            continue;
        }
        let rate = gbps(bytes, took);
        let (htod_gbps, dtoh_gbps) = match op.kind {
            OpKind::HtoD => (rate, 0.0),
            OpKind::DtoH => (0.0, rate),
            OpKind::Kernel | OpKind::DtoD | OpKind::Memset | OpKind::Host => continue,
        };
        offer(LinkRates {
            htod_gbps,
            dtoh_gbps,
            both_gbps: 0.0,
        });
    }
    fastest
}

/// The faster of two sets of rates, path by path.
pub fn faster(a: LinkRates, b: LinkRates) -> LinkRates {
    LinkRates {
        htod_gbps: a.htod_gbps.max(b.htod_gbps),
        dtoh_gbps: a.dtoh_gbps.max(b.dtoh_gbps),
        both_gbps: a.both_gbps.max(b.both_gbps),
    }
}

/// How far the link's both-ways rate moved across an experiment beyond which it is
/// marked "machine noisy": a few percent is the link's own sample-to-sample spread.
pub const NOISY_LINK: f64 = 0.03;

/// The both-ways rate (GB/s) before and after an experiment, each its probe's median,
/// and how far it moved relative to the faster of the two.
pub fn link_moved(p: &LinkProbe) -> (f64, f64, f64) {
    let rate = |t: &StageTimes| gbps(2 * t.bytes, t.both.median());
    let (before, after) = (rate(&p.before), rate(&p.after));
    (before, after, (after - before).abs() / before.max(after))
}

/// The stages of a pipeline of `chunks` chunks; `None` when that split was not measured.
///
/// Copies in alone, copies out alone and the kernels: the fastest sample of the split
/// into `chunks` chunks; and, when its chunks are at least [`LARGE_COPY_BYTES`], the
/// fastest over every coarser split of the same bytes too (and the two-chunk split for
/// one chunk), the copies held to no slower than `link`'s fastest rates: such chunks pay
/// their fixed costs in the noise, so what a coarser split reached is reachable. Smaller
/// chunks are held to their own split, whose fixed costs the pipeline must pay.
///
/// Both directions at once: the fastest over every split (a sample with few chunks lets
/// one direction run on alone, which measures the sharing rather than the capacity), and
/// for chunks of at least [`LARGE_COPY_BYTES`] no slower than `link`'s both-ways rate.
pub fn pipeline_stages<'a>(
    all: impl IntoIterator<Item = &'a StageTimes>,
    chunks: usize,
    kernels: Option<f64>,
    link: Option<&LinkRates>,
) -> Option<Stages> {
    let all: Vec<&StageTimes> = all.into_iter().collect();
    let bytes = all.iter().find(|t| t.chunks == chunks)?.bytes;
    let pooled = bytes / chunks.max(1) as u64 >= LARGE_COPY_BYTES;
    let link = link.filter(|_| pooled);
    let both_ms = all
        .iter()
        .map(|t| t.both.min())
        .chain(link.map(|l| ms_at(2 * bytes, l.both_gbps)))
        .fold(f64::INFINITY, f64::min);
    let at_link = |own_ms: f64, gbps: Option<f64>| {
        gbps.filter(|g| *g > 0.0)
            .map_or(own_ms, |g| own_ms.min(ms_at(bytes, g)))
    };
    (all.iter())
        .filter(|t| t.chunks == chunks || (pooled && t.chunks <= chunks.max(2)))
        .map(|t| stages(t, kernels))
        .reduce(|a, b| Stages {
            htod_ms: a.htod_ms.min(b.htod_ms),
            kernel_ms: a.kernel_ms.min(b.kernel_ms),
            dtoh_ms: a.dtoh_ms.min(b.dtoh_ms),
            both_ms: a.both_ms.min(b.both_ms),
        })
        .map(|s| Stages {
            htod_ms: at_link(s.htod_ms, link.map(|l| l.htod_gbps)),
            dtoh_ms: at_link(s.dtoh_ms, link.map(|l| l.dtoh_gbps)),
            both_ms,
            ..s
        })
}

/// The relative noise of a bound built from `t`'s stages: the largest of its parts'.
pub fn stage_noise(t: &StageTimes) -> f64 {
    [&t.htod, &t.dtoh, &t.both]
        .into_iter()
        .chain(&t.kernels)
        .map(Series::noise)
        .fold(0.0, f64::max)
}

/// [`stage_noise`] of the split into `chunks` chunks in `all`, 0 where not measured.
pub fn chunks_noise(all: &[StageTimes], chunks: usize) -> f64 {
    for_chunks(all, chunks).map_or(0.0, stage_noise)
}

/// The stage times of `chunks` chunks in `all`, if measured.
pub fn for_chunks(all: &[StageTimes], chunks: usize) -> Option<&StageTimes> {
    all.iter().find(|t| t.chunks == chunks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::timeline::{OpKind, TracedGpu};
    use crate::saved::{made_up_op, made_up_timeline};
    use crate::stats::tests::{close, series};

    #[test]
    fn rates_and_stages_from_the_fastest_samples() {
        let t = StageTimes {
            chunks: 4,
            bytes: 128 << 20,
            passes: 2,
            htod: series(&[2.5, 2.43, 3.0]),
            dtoh: series(&[2.44]),
            both: series(&[2.9, 2.733]),
            both_htod: series(&[2.9, 3.1, 3.0]),
            both_dtoh: series(&[2.7]),
            kernels: Some(series(&[0.2, 0.25])),
        };
        let best = best_rates(&t);
        assert!((best.htod_gbps - 55.23).abs() < 0.01, "{}", best.htod_gbps);
        assert!((best.both_gbps - 98.22).abs() < 0.01, "{}", best.both_gbps);
        assert!(close(best.htod_shared_gbps, gbps(t.bytes, 3.0)));
        assert!(median_rates(&t).htod_gbps < best.htod_gbps);
        assert!((ms_at(t.bytes, best.htod_gbps) - 2.43).abs() < 1e-12);
        let s = stages(&t, Some(0.3));
        let parts = (s.htod_ms, s.kernel_ms, s.dtoh_ms, s.both_ms);
        assert_eq!(parts, (2.43, 0.2, 2.44, 2.733));
        let untimed = StageTimes {
            kernels: None,
            ..t.clone()
        };
        assert_eq!(stages(&untimed, None).kernel_ms, 0.0);
        assert!(for_chunks(std::slice::from_ref(&t), 4).is_some());
        // A finer split whose copies all met a busy link keeps the coarser split's parts.
        let busy = StageTimes {
            chunks: 8,
            htod: series(&[3.2, 3.3]),
            kernels: Some(series(&[0.18])),
            ..t.clone()
        };
        let all = [t.clone(), busy];
        let p = pipeline_stages(&all, 8, None, None).unwrap();
        assert_eq!((p.htod_ms, p.kernel_ms), (2.43, 0.18));
        // The link's capacity comes from any split: a finer one that shared it evenly.
        let even = StageTimes {
            chunks: 16,
            both: series(&[2.6]),
            ..t.clone()
        };
        let p = pipeline_stages(&[t.clone(), even], 4, None, None).unwrap();
        assert_eq!((p.both_ms, p.htod_ms), (2.6, 2.43));
        assert_eq!(pipeline_stages(&all, 4, None, None).unwrap().kernel_ms, 0.2);
        let none = pipeline_stages(&all, 2, None, None);
        assert!(none.is_none(), "no two-chunk split measured");
        // Small chunks pay fixed costs a coarser split does not: no pooling.
        let small = |chunks, htod: f64| StageTimes {
            chunks,
            bytes: 64 << 10,
            htod: series(&[htod]),
            ..t.clone()
        };
        let fine = [small(1, 0.005), small(4, 0.02)];
        assert_eq!(pipeline_stages(&fine, 4, None, None).unwrap().htod_ms, 0.02);
        // The run's fastest link holds large chunks' copy stages, never small ones'.
        let link = LinkRates {
            htod_gbps: 60.0,
            dtoh_gbps: 1.0,
            both_gbps: 110.0,
        };
        let held = pipeline_stages(&all, 4, None, Some(&link)).unwrap();
        assert!((held.htod_ms - ms_at(t.bytes, 60.0)).abs() < 1e-12);
        assert_eq!(held.dtoh_ms, 2.44);
        assert!((held.both_ms - ms_at(2 * t.bytes, 110.0)).abs() < 1e-12);
        let fine_held = pipeline_stages(&fine, 4, None, Some(&link)).unwrap();
        assert_eq!(fine_held.htod_ms, 0.02);
        let fastest = fastest_link([&t, &fine[0]], []).unwrap();
        assert!(close(fastest.htod_gbps, best.htod_gbps));
        assert!(close(fastest.both_gbps, best.both_gbps));
        // A traced copy shows its link's rate, unless several GPUs shared the host link.
        let copy = made_up_op(OpKind::HtoD, 0, 0.0, 0.5);
        let mut traced = made_up_timeline(1, vec![copy], 0.5);
        let one = fastest_link([], [&traced]).unwrap();
        assert!(close(one.htod_gbps, (32u64 << 20) as f64 / 0.5e6));
        traced.devices = vec![TracedGpu {
            ordinal: 1,
            streams: 1,
        }];
        assert_eq!(fastest_link([], [&traced]), None);
    }
}
