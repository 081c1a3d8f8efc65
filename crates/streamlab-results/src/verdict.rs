//! The one rule by which two measurements of the same figure are called different: two
//! runs' rows (`compare`), a Rust kernel against its CUDA C++ twin, a concurrency break
//! against the clean pipeline. A difference is called only when it is both
//!
//! * beyond the noise: the two sets of samples (batches, trials, launches) are ranked
//!   apart by a Mann–Whitney U test ([`stats::mann_whitney_p`]) with p below
//!   [`Rule::alpha`], and
//! * beyond a minimum effect: machines of the same kind differ by more than one run's
//!   noise (clocks, the shared link, neighbours), so a change smaller than two such
//!   machines show running the same build ([`MIN_CHANGE`], measured on an A/A pair of
//!   H100 runs) is not the code's or the GPU's doing; and for a figure whose work crosses
//!   the host link, which the machine's other traffic slows by as much as a quarter, a
//!   change smaller than the link itself moved while the two runs measured it (the
//!   spread of their link probes, [`crate::derived::rates::link_spread`]) is not either.
//!
//! Otherwise the two are the same (the difference is under [`Rule::min_change`] and both
//! figures' noise is small enough to see one that large), or too noisy to say.
use serde::{Deserialize, Serialize};

use crate::stats::{self, Series};

/// The smallest relative change called a change by default. Two H100 runs of the same
/// build on two machines (the A/A pair kept in `crates/streamlab-results/tests/runs/`)
/// differ by more than their within-run noise on many rows; with this minimum, at most
/// 5% of their rows are called changed (a test holds it to that on the pair).
pub const MIN_CHANGE: f64 = 0.03;

/// The rank test's significance level.
pub const ALPHA: f64 = 0.01;

/// How a difference is judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// A difference is beyond the noise when the rank test's two-sided p is below this.
    pub alpha: f64,
    /// The smallest relative change (|B/A − 1|) called a change.
    pub min_change: f64,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule {
            alpha: ALPHA,
            min_change: MIN_CHANGE,
        }
    }
}

impl Rule {
    /// The rule in words, as reports state it once.
    pub fn describe(&self) -> String {
        format!(
            "B is called faster or slower than A only when both hold: the two sets of samples \
             (batches, trials or launches) are ranked apart by a two-sided Mann–Whitney U test \
             with p < {}, and the medians differ by at least the minimum effect (|B/A − 1|): {}, \
             set from two runs of one build on two machines of the same kind, which differ by \
             more than their own noise; for a row whose work crosses the host link, at least as \
             much as the link's both-ways rate moved over the two runs' probes of that \
             experiment, if more (the machine's other traffic moves the shared link). A row \
             under {} whose noise on both sides is under it too is the same; any other row is \
             too noisy to say. Noise is 1.4826 × the median absolute deviation of a row's \
             samples over their median.",
            self.alpha,
            percent(self.min_change),
            percent(self.min_change)
        )
    }
}

/// `x` as a percentage with as few decimals as it needs, e.g. "3%" or "2.5%".
pub fn percent(x: f64) -> String {
    let p = 100.0 * x;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// What a comparison of A with B says; the figures are times, so lower is faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// B takes less time, beyond the noise and the minimum effect.
    Faster,
    /// B takes more time, beyond the noise and the minimum effect.
    Slower,
    /// Under the minimum effect, with noise small enough to see one.
    Same,
    /// Neither: the samples cannot tell.
    TooNoisy,
    /// A value is missing, not finite or zero: no ratio to judge.
    NotComparable,
}

impl Verdict {
    /// As reports write it, readable without colour.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "▼ faster",
            Verdict::Slower => "▲ slower",
            Verdict::Same => "same",
            Verdict::TooNoisy => "too noisy to say",
            Verdict::NotComparable => "–",
        }
    }

    /// The name `comparison.json` counts it under.
    pub fn key(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
            Verdict::TooNoisy => "too-noisy",
            Verdict::NotComparable => "not-comparable",
        }
    }

    /// Whether it calls a change.
    pub fn changed(self) -> bool {
        matches!(self, Verdict::Faster | Verdict::Slower)
    }
}

/// One figure as the rule sees it: its median, its noise and its samples.
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    pub value: f64,
    /// Relative noise; `None` where the samples cannot show one.
    pub noise: Option<f64>,
    pub samples: &'a [f64],
}

impl<'a> From<&'a Series> for Measured<'a> {
    fn from(s: &'a Series) -> Measured<'a> {
        Measured {
            value: s.median(),
            noise: s.measured_noise(),
            samples: &s.samples_ms,
        }
    }
}

/// A judged difference: B over A, the rank test's p, the minimum effect it was held to,
/// and the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub b_over_a: Option<f64>,
    pub p_value: Option<f64>,
    pub min_effect: f64,
    pub verdict: Verdict,
}

/// Judge B against A by `rule`; `machine` is a change the machines' own measurements
/// explain (the link's spread for a figure whose work crosses it; 0 for none), which
/// widens the minimum effect.
pub fn judge(rule: &Rule, a: Measured, b: Measured, machine: f64) -> Judged {
    let min_effect = rule.min_change.max(machine);
    if !(a.value.is_finite() && b.value.is_finite()) || a.value == 0.0 || b.value == 0.0 {
        return Judged {
            b_over_a: None,
            p_value: None,
            min_effect,
            verdict: Verdict::NotComparable,
        };
    }
    let ratio = b.value / a.value;
    let p_value = stats::mann_whitney_p(a.samples, b.samples);
    let change = (ratio - 1.0).abs();
    let quiet = |n: Option<f64>| n.is_some_and(|n| n < rule.min_change);
    let verdict = if change >= min_effect && p_value.is_some_and(|p| p < rule.alpha) {
        if ratio < 1.0 {
            Verdict::Faster
        } else {
            Verdict::Slower
        }
    } else if change < rule.min_change && quiet(a.noise) && quiet(b.noise) {
        Verdict::Same
    } else {
        Verdict::TooNoisy
    };
    Judged {
        b_over_a: Some(ratio),
        p_value,
        min_effect,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(center: f64, spread: f64, n: usize) -> Series {
        Series::new(
            (0..n)
                .map(|i| center * (1.0 + spread * (i as f64 / (n - 1) as f64 - 0.5)))
                .collect(),
        )
        .unwrap()
    }

    fn verdict(a: &Series, b: &Series) -> Verdict {
        judge(&Rule::default(), a.into(), b.into(), 0.0).verdict
    }

    #[test]
    fn a_change_is_called_only_past_the_noise_and_the_minimum_effect() {
        let a = series(10.0, 0.004, 10);
        // 10% slower, samples apart: called.
        assert_eq!(verdict(&a, &series(11.0, 0.004, 10)), Verdict::Slower);
        assert_eq!(verdict(&a, &series(9.0, 0.004, 10)), Verdict::Faster);
        // 1% apart and quiet: ranked apart, but under the minimum effect.
        let j = judge(
            &Rule::default(),
            (&a).into(),
            (&series(10.1, 0.004, 10)).into(),
            0.0,
        );
        assert!(j.p_value.unwrap() < ALPHA);
        assert_eq!(j.verdict, Verdict::Same);
        // 1% apart, but each side spreads 30%: cannot tell.
        assert_eq!(
            verdict(&series(10.0, 0.3, 10), &series(10.1, 0.3, 10)),
            Verdict::TooNoisy
        );
        // 10% apart with 2 samples each: the rank test cannot reach p < 0.01.
        assert_eq!(
            verdict(&series(10.0, 0.004, 2), &series(11.0, 0.004, 2)),
            Verdict::TooNoisy
        );
        // A zero or missing value has no ratio.
        let zero = Series::new(vec![0.0, 0.0]).unwrap();
        assert_eq!(verdict(&zero, &a), Verdict::NotComparable);
        assert_eq!(verdict(&a, &zero), Verdict::NotComparable);
    }

    #[test]
    fn the_minimum_effect_is_the_rules() {
        let a = series(10.0, 0.004, 10);
        let b = series(10.5, 0.004, 10);
        assert_eq!(verdict(&a, &b), Verdict::Slower);
        let loose = Rule {
            min_change: 0.08,
            ..Rule::default()
        };
        assert_eq!(
            judge(&loose, (&a).into(), (&b).into(), 0.0).verdict,
            Verdict::Same
        );
        // A link that moved 20% while the runs measured it explains a 5% change: not
        // called, and not called the same either.
        let widened = judge(&Rule::default(), (&a).into(), (&b).into(), 0.2);
        assert_eq!(
            (widened.verdict, widened.min_effect),
            (Verdict::TooNoisy, 0.2)
        );
        let far = series(13.0, 0.004, 10);
        assert_eq!(
            judge(&Rule::default(), (&a).into(), (&far).into(), 0.2).verdict,
            Verdict::Slower
        );
        assert!(loose.describe().contains("(|B/A − 1|): 8%"));
        assert_eq!(percent(0.025), "2.5%");
    }
}
