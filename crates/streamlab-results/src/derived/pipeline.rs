//! The reachable bound of a copy → kernel → copy pipeline: the fastest the measured
//! engines can run a schedule, fill and drain included.
//!
//! Work split into `n` chunks, `N` runs issued back to back, passes three engines in
//! order: the HtoD copy engine (busy `H` per run), the SMs (`K`), the DtoH copy engine
//! (`D`), each measured alone over the whole data. Copies in and out at once share the
//! link: moving a run's bytes both ways together takes at least `C`, measured at the
//! both-ways rate (about 95–98 GB/s on an H100's PCIe 5 link, not 2 × 55). The first
//! chunk's copy in and the last chunk's copy out overlap nothing (fill and drain); they
//! are paid once per `N` runs. Per run:
//!
//! ```text
//! HtoD engine:  H + (K + D)/(nN)      SMs:  K + (H + D)/(nN)
//! DtoH engine:  D + (H + K)/(nN)      both directions:  C + (H + D − C)/(nN)
//! ```
//!
//! The last: during the first chunk's copy in only HtoD can run, during the last
//! chunk's copy out only DtoH, and the rest of the bytes, `(H + D − C/…)`, moves no
//! faster than the both-ways rate. The bound is the largest term. With one copy engine
//! both directions queue on it (`H + D`); with none, nothing overlaps; one stream runs
//! its work in order (`H + K + D`).
use serde::Serialize;

use crate::stats;

/// How far below its bound a measurement may fall and still count as at the bound: the
/// copy rates a bound is built from vary by 1–4% between samples on a shared host. A
/// verified row further below shows a rate was under-measured: the bound is lowered to
/// the row and flagged ([`Bound::held`]).
pub const SLACK: f64 = 0.01;

/// Whether `measured_ms` is faster than `bound_ms` by more than [`SLACK`].
pub fn beyond(measured_ms: f64, bound_ms: f64) -> bool {
    measured_ms < bound_ms * (1.0 - SLACK)
}

/// The time (ms) each engine needs for the whole data of one run, measured alone, and
/// `both_ms`: the data in and out together at the both-ways rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stages {
    pub htod_ms: f64,
    pub kernel_ms: f64,
    pub dtoh_ms: f64,
    pub both_ms: f64,
}

impl Stages {
    /// Every part after the other.
    pub fn serial_ms(&self) -> f64 {
        self.htod_ms + self.kernel_ms + self.dtoh_ms
    }
}

/// What limits a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limiter {
    /// One stream: everything in order.
    OneStream,
    HtodEngine,
    Sms,
    DtohEngine,
    /// Copies in and out sharing the link.
    BothWays,
    /// One copy engine for both directions.
    SharedCopyEngine,
    /// No copy engine runs beside kernels.
    NoOverlap,
}

impl Limiter {
    pub fn label(self) -> &'static str {
        match self {
            Limiter::OneStream => "one stream, in order",
            Limiter::HtodEngine => "HtoD copy engine",
            Limiter::Sms => "SMs",
            Limiter::DtohEngine => "DtoH copy engine",
            Limiter::BothWays => "both copy directions at once",
            Limiter::SharedCopyEngine => "one shared copy engine",
            Limiter::NoOverlap => "no overlap (no copy engine)",
        }
    }
}

/// Where a row's median sits under a bound it should not beat ([`stats::beyond_noise`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Under {
    /// Under it by less than the two figures' noise: at the bound.
    WithinNoise,
    /// Under it by more than the two figures' noise: a measurement no correct run gives.
    BeyondNoise,
}

impl Under {
    /// A row of `row_ms` against a bound of `bound_ms`, each with its relative noise:
    /// `None` at or over it.
    pub fn of(bound_ms: f64, bound_noise: f64, row_ms: f64, row_noise: f64) -> Option<Under> {
        (row_ms < bound_ms).then(|| {
            if stats::beyond_noise(bound_ms, bound_noise, row_ms, row_noise) {
                Under::BeyondNoise
            } else {
                Under::WithinNoise
            }
        })
    }

    /// As a table row says it.
    pub fn label(self) -> &'static str {
        match self {
            Under::WithinNoise => "under its bound, within noise",
            Under::BeyondNoise => "under its bound, beyond noise",
        }
    }
}

/// How many of `unders` are under their bound, and how many of those beyond the noise.
pub fn count_under(unders: impl IntoIterator<Item = Option<Under>>) -> (usize, usize) {
    unders.into_iter().flatten().fold((0, 0), |(n, b), u| {
        (n + 1, b + usize::from(u == Under::BeyondNoise))
    })
}

/// A bound per run, and the term that sets it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bound {
    pub ms: f64,
    pub limiter: Limiter,
    /// Where a verified row beat the bound built from the measured stages by more than
    /// [`SLACK`]: that bound. The limiter's rate was under-measured, and `ms` is the
    /// row's own time, the bound the rate it implies gives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built_ms: Option<f64>,
    /// The relative noise of the stage samples it was built from
    /// ([`crate::derived::rates::stage_noise`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<f64>,
    /// Where its row's median sits under it as built, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub under: Option<Under>,
}

impl Bound {
    /// This bound (of relative noise `noise`) held against a verified row's median and
    /// noise: marked where the row sits under it, and never left above the row by more
    /// than [`SLACK`] (lowered to it, keeping the bound as built).
    pub fn held(self, measured_ms: f64, measured_noise: f64, noise: f64) -> Bound {
        let marked = Bound {
            noise: Some(noise),
            under: Under::of(self.ms, noise, measured_ms, measured_noise),
            ..self
        };
        if beyond(measured_ms, self.ms) {
            Bound {
                ms: measured_ms,
                built_ms: Some(self.ms),
                ..marked
            }
        } else {
            marked
        }
    }

    /// Where a row sits under this bound, with its noise and any bound it replaced;
    /// empty at or over it.
    pub fn mark(&self) -> String {
        let Some(under) = self.under else {
            return String::new();
        };
        let noise = self.noise.map_or(String::new(), |n| {
            format!(" (bound's noise {:.1}%)", 100.0 * n)
        });
        let lowered = self.built_ms.map_or(String::new(), |b| {
            format!("; bound lowered to the row from {b:.4} ms")
        });
        format!("{}{noise}{lowered}", under.label())
    }

    /// [`Bound::mark`] as a table's whole cell ([`bound_cell`]).
    pub fn cell(&self) -> String {
        bound_cell([self.mark()])
    }

    /// Whether a row beat the bound as built (its limiter's rate was under-measured).
    pub fn lowered(&self) -> bool {
        self.built_ms.is_some()
    }

    /// What a lowered bound says, e.g. "HtoD copy engine rate under-measured: the row
    /// implies it 12% faster (bound 0.1559 → 0.1243 ms)", adding the other reading where
    /// the row is under the bound within the two figures' noise. Where the bound is a sum
    /// of stages (one stream, no overlap), the stages timed alone may instead carry a
    /// fixed cost per operation that back-to-back operations hide, as at a few elements.
    pub fn under_measured(&self) -> Option<String> {
        self.built_ms.map(|built| {
            let what = match self.limiter {
                Limiter::OneStream | Limiter::NoOverlap => format!(
                    "{}: the stages timed alone sum to more than the row (a fixed cost per \
                     operation that back-to-back operations hide, or an under-measured rate)",
                    self.limiter.label()
                ),
                // Within the two figures' noise, the row may be at the bound after all.
                limiter => match self.under {
                    Some(Under::WithinNoise) => format!(
                        "{} rate under-measured, or the row within the two figures' noise",
                        limiter.label()
                    ),
                    _ => format!("{} rate under-measured", limiter.label()),
                },
            };
            // "12% faster" reads well up to twice as fast; beyond, "9.92× faster" does.
            let speedup = built / self.ms;
            let faster = if speedup < 2.0 {
                format!("{:.0}% faster", 100.0 * (speedup - 1.0))
            } else {
                format!("{speedup:.2}× faster")
            };
            format!(
                "{what}: the row implies it {faster} (bound {built:.4} → {:.4} ms)",
                self.ms
            )
        })
    }
}

/// The bound per run of `stages` split over `streams` streams (one chunk each), with
/// `runs` runs issued back to back, on a GPU with `copy_engines` copy engines.
pub fn bound(stages: Stages, streams: usize, runs: usize, copy_engines: i32) -> Bound {
    let Stages {
        htod_ms: h,
        kernel_ms: k,
        dtoh_ms: d,
        both_ms: c,
    } = stages;
    let pieces = (streams * runs.max(1)) as f64;
    let terms: Vec<(f64, Limiter)> = match copy_engines {
        _ if streams <= 1 => vec![(h + k + d, Limiter::OneStream)],
        e if e >= 2 => vec![
            (h + (k + d) / pieces, Limiter::HtodEngine),
            (k + (h + d) / pieces, Limiter::Sms),
            (d + (h + k) / pieces, Limiter::DtohEngine),
            (c + (h + d - c).max(0.0) / pieces, Limiter::BothWays),
        ],
        1 => vec![
            (h + d, Limiter::SharedCopyEngine),
            (k + (h + d) / pieces, Limiter::Sms),
        ],
        _ => vec![(h + k + d, Limiter::NoOverlap)],
    };
    let (ms, limiter) = terms
        .into_iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("at least one term");
    Bound {
        ms,
        limiter,
        built_ms: None,
        noise: None,
        under: None,
    }
}

/// The speedup over sequential from which streams are said to pay off.
pub const PAYOFF: f64 = 1.10;

/// A table's "against its bound" cell from the marks of a row's bounds: those it sits
/// under, joined, or "within" (a blank cell would read as missing).
pub fn bound_cell(marks: impl IntoIterator<Item = String>) -> String {
    let marks: Vec<String> = marks.into_iter().filter(|m| !m.is_empty()).collect();
    match marks.is_empty() {
        true => "within".into(),
        false => marks.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::tests::close;

    /// About sincos-overlap's 128 MiB each way on an H100.
    const SINCOS: Stages = Stages {
        htod_ms: 2.43,
        kernel_ms: 0.19,
        dtoh_ms: 2.43,
        both_ms: 2.80,
    };

    #[test]
    fn each_term_sets_the_bound_where_it_is_the_largest_and_a_row_beating_it_lowers_it() {
        // 100 runs back to back pay fill and drain once: within a few µs of C.
        let batch = bound(SINCOS, 4, 100, 3);
        assert!(batch.ms > 2.80 && batch.ms - 2.80 < 0.006, "{}", batch.ms);
        // A faster link for both ways leaves the one-way copy engines as the limit.
        let fast_link = Stages {
            both_ms: 2.0,
            htod_ms: 2.5,
            ..SINCOS
        };
        assert_eq!(bound(fast_link, 4, 100, 3).limiter, Limiter::HtodEngine);
        let heavy = Stages {
            htod_ms: 10.0,
            kernel_ms: 30.0,
            dtoh_ms: 10.0,
            both_ms: 11.0,
        };
        // (stages, streams, runs, copy engines), the bound and what sets it: one run of 4
        // chunks, C + (H + D − C)/4; a long kernel, the SMs; one stream, or fewer copy
        // engines, serialize the copies.
        use Limiter::{BothWays, NoOverlap, OneStream, SharedCopyEngine, Sms};
        let cases = [
            ((SINCOS, 4, 1, 3), 2.80 + (4.86 - 2.80) / 4.0, BothWays),
            ((heavy, 8, 1, 3), 30.0 + 20.0 / 8.0, Sms),
            ((SINCOS, 1, 100, 3), SINCOS.serial_ms(), OneStream),
            ((SINCOS, 4, 1, 1), 4.86, SharedCopyEngine),
            ((SINCOS, 8, 10, 0), SINCOS.serial_ms(), NoOverlap),
        ];
        for ((stages, streams, runs, engines), ms, limiter) in cases {
            let b = bound(stages, streams, runs, engines);
            assert!(close(b.ms, ms) && b.limiter == limiter, "{b:?}");
        }
        // More streams never raise the bound.
        let mut last = f64::INFINITY;
        for streams in [2, 4, 8, 16, 32, 64] {
            let b = bound(SINCOS, streams, 1, 3).ms;
            assert!(b <= last, "{streams} streams: {b} > {last}");
            last = b;
        }
        // A row that beats its bound lowers it to the row, flagged.
        let built = bound(SINCOS, 4, 1, 3);
        let over = built.held(built.ms * 1.2, 0.01, 0.01);
        assert_eq!((over.ms, over.under, over.built_ms), (built.ms, None, None));
        assert_eq!(over.mark(), "");
        assert_eq!(over.cell(), "within", "a blank cell would read as missing");
        let within = built.held(built.ms * 0.995, 0.01, 0.01);
        assert_eq!(within.ms, built.ms, "within the slack");
        assert_eq!(within.under, Some(Under::WithinNoise));
        let said = "under its bound, within noise (bound's noise 1.0%)";
        assert_eq!(within.mark(), said);
        let held = built.held(built.ms * 0.8, 0.01, 0.01);
        assert!(held.lowered());
        assert_eq!((held.ms, held.built_ms), (built.ms * 0.8, Some(built.ms)));
        assert_eq!(held.under, Some(Under::BeyondNoise));
        let mark = held.mark();
        assert!(mark.contains("beyond noise") && mark.contains("lowered to the row from"));
        // Noisy enough, the same distance is within noise.
        let noisy = built.held(built.ms * 0.8, 0.2, 0.2);
        assert_eq!(noisy.under, Some(Under::WithinNoise));
        let said = held.under_measured().unwrap();
        let rate =
            "both copy directions at once rate under-measured: the row implies it 25% faster";
        assert!(said.starts_with(rate), "{said}");
        let said = noisy.under_measured().unwrap();
        let rate = "both copy directions at once rate under-measured, or the row within the two figures' noise: the row implies it 25% faster";
        assert!(said.starts_with(rate), "{said}");
        let one = bound(SINCOS, 1, 1, 3).held(0.5, 0.0, 0.0);
        let said = one.under_measured().unwrap();
        let sum = "one stream, in order: the stages timed alone sum to more";
        assert!(said.starts_with(sum), "{said}");
        let sum = bound(SINCOS, 1, 1, 3);
        let said = sum.held(sum.ms / 9.92, 0.0, 0.0).under_measured().unwrap();
        assert!(said.contains("implies it 9.92× faster (bound"), "{said}");
        let unders = [None, Some(Under::WithinNoise), Some(Under::BeyondNoise)];
        assert_eq!(count_under(unders), (2, 1));
    }
}
