//! The one rule by which two figures are called different, and the margins it is held to.
//!
//! Two runs of one build on two machines of one kind differ by more than either run's own
//! noise, by how much depending on the experiment: [`Margins`] holds each experiment's
//! spread between such machines, fitted on recorded A/A pairs (`compare::calibration`).
//! Two figures of one run (a Rust kernel against its C++ twin, a concurrency break
//! against the clean pipeline) are called different by [`judge`] only when both hold:
//!
//! * beyond the noise: their samples (launches, batches, trials) are ranked apart by a
//!   Mann–Whitney U test ([`stats::mann_whitney_p`]) with p below [`Rule::alpha`], and
//! * beyond the machines: their ratio moves from 1 by more than the same ratio moves
//!   between two machines ([`Rule::within`]: 1.96 times the experiment's controlled
//!   spread), so that what is called would be called on another machine of the kind too.
//!
//! Otherwise the two are the same (the difference is under the minimum effect and both
//! figures' noise is small enough to see one that large), or too noisy to say.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::stats::{self, Series};

/// The rank test's significance level.
pub const ALPHA: f64 = 0.01;

/// How a difference is judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rule {
    /// A difference is beyond the noise when the rank test's two-sided p is below this.
    pub alpha: f64,
    /// The smallest relative change (|B/A − 1|) called a change.
    pub min_change: f64,
}

impl Rule {
    /// The rule for two figures of one run of experiment `name`: the minimum effect is
    /// 1.96 times the spread its controlled ratios show between two machines.
    pub fn within(name: &str) -> Rule {
        Rule {
            alpha: ALPHA,
            min_change: 1.96 * margins().spread(name, true),
        }
    }

    /// The rule in words, as reports state it once.
    pub fn describe(&self) -> String {
        format!(
            "B is called faster or slower than A only when both hold: the two sets of samples \
             (batches, trials or launches) are ranked apart by a two-sided Mann–Whitney U test \
             with p < {}, and the medians differ by at least the minimum effect (|B/A − 1|): {}, \
             1.96 times the spread the same ratio shows between two machines of one kind \
             running the same kernels (fitted by `streamlab compare` on recorded A/A pairs), so \
             that a difference called here \
             would be called on another such machine. A row under {} whose noise on both \
             sides is under it too is the same; any other row is too noisy to say. Noise is \
             1.4826 × the median absolute deviation of a row's samples over their median.",
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

/// The least spread between machines a margin is taken as: half the noise target the runs
/// sample to. A few pairs of machines that happened to agree closer than that (a Rust
/// kernel against its C++ twin, within a tenth of a percent on every machine fitted) say
/// little about the next machine, and a change under the noise a run samples to is not
/// one it can show.
pub const SPREAD_FLOOR: f64 = stats::NOISE_TARGET / 2.0;

/// The spread of one experiment's rows between two machines running one build: the
/// standard deviation of `ln(B/A)` the machines add beyond each run's own noise, raw and
/// controlled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Margin {
    pub raw: f64,
    /// None where no row of the pairs fitted had a control.
    pub controlled: Option<f64>,
    /// The rows it was fitted on.
    pub rows: usize,
    pub controlled_rows: usize,
}

/// The pair of runs a fit used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairFacts {
    pub name: String,
    pub gpu: String,
    /// Its rows both runs measured.
    pub rows: usize,
}

/// One pair left out of the fit and judged by the rest's margins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldOut {
    pub pair: String,
    pub rows: usize,
    pub raw_changed: usize,
    pub controlled_rows: usize,
    pub controlled_changed: usize,
    /// Rows called changed where a control exists, or raw where none does: what
    /// `--fail-on changed` would fail on.
    pub changed: usize,
}

impl HeldOut {
    pub fn raw_rate(&self) -> f64 {
        self.raw_changed as f64 / self.rows.max(1) as f64
    }

    pub fn controlled_rate(&self) -> f64 {
        self.controlled_changed as f64 / self.controlled_rows.max(1) as f64
    }
}

/// Every experiment's margin, the pooled one for experiments the pairs did not hold, the
/// pairs they came from, and how the rule did on each pair left out of the fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Margins {
    pub method: String,
    pub pairs: Vec<PairFacts>,
    pub experiments: BTreeMap<String, Margin>,
    pub pooled: Margin,
    pub held_out: Vec<HeldOut>,
}

/// The margins this build judges by, fitted on the A/A pairs recorded with it
/// (`crates/streamlab-results/calibration/`, by `compare::calibration`).
pub fn margins() -> &'static Margins {
    static MARGINS: OnceLock<Margins> = OnceLock::new();
    MARGINS.get_or_init(|| {
        serde_json::from_str(include_str!("../calibration/margins.json"))
            .expect("the committed margins parse")
    })
}

impl Margins {
    /// Experiment `name`'s spread, raw or controlled (the pooled one where the pairs did
    /// not hold it, or held it without a control), never under [`SPREAD_FLOOR`].
    pub fn spread(&self, name: &str, controlled: bool) -> f64 {
        let m = self.experiments.get(name).unwrap_or(&self.pooled);
        let fitted = if controlled {
            (m.controlled).or(self.pooled.controlled).unwrap_or(m.raw)
        } else {
            m.raw
        };
        fitted.max(SPREAD_FLOOR)
    }

    /// The largest share of rows the rule called changed on a pair left out of its fit,
    /// raw and controlled.
    pub fn false_calls(&self) -> (f64, f64) {
        let max = |f: fn(&HeldOut) -> f64| self.held_out.iter().map(f).fold(0.0, f64::max);
        (max(HeldOut::raw_rate), max(HeldOut::controlled_rate))
    }

    /// "at most 1.2% of rows raw and 0.4% controlled on each of 5 A/A pairs left out of
    /// the fit": the measured false-call rate, in words.
    pub fn false_call_text(&self) -> String {
        let (raw, controlled) = self.false_calls();
        format!(
            "on each of {} A/A pairs (two machines of one kind, one build) left out of the fit in turn, the rule called at most {:.1}% of rows changed raw and {:.1}% controlled",
            self.held_out.len(),
            100.0 * raw,
            100.0 * controlled
        )
    }
}

/// What a comparison of A with B says; the figures are times, so lower is faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judged {
    pub b_over_a: Option<f64>,
    pub p_value: Option<f64>,
    pub min_effect: f64,
    pub verdict: Verdict,
}

/// Judge B against A, two figures of one run, by `rule`.
pub fn judge(rule: &Rule, a: Measured, b: Measured) -> Judged {
    let min_effect = rule.min_change;
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

    const RULE: Rule = Rule {
        alpha: ALPHA,
        min_change: 0.03,
    };

    /// `n` samples spread evenly `spread` wide around `center`.
    fn series(center: f64, spread: f64, n: usize) -> Series {
        let at = |i: usize| center * (1.0 + spread * (i as f64 / (n - 1) as f64 - 0.5));
        crate::stats::tests::series(&(0..n).map(at).collect::<Vec<_>>())
    }

    fn verdict(a: &Series, b: &Series) -> Verdict {
        judge(&RULE, a.into(), b.into()).verdict
    }

    #[test]
    fn a_change_is_called_only_past_the_noise_and_the_rules_minimum_effect() {
        let a = series(10.0, 0.004, 10);
        // 10% slower, samples apart: called.
        assert_eq!(verdict(&a, &series(11.0, 0.004, 10)), Verdict::Slower);
        assert_eq!(verdict(&a, &series(9.0, 0.004, 10)), Verdict::Faster);
        // 1% apart and quiet: ranked apart, but under the minimum effect.
        let j = judge(&RULE, (&a).into(), (&series(10.1, 0.004, 10)).into());
        assert!(j.p_value.unwrap() < ALPHA);
        assert_eq!(j.verdict, Verdict::Same);
        // 1% apart, but each side spreads 30%: cannot tell.
        let noisy = verdict(&series(10.0, 0.3, 10), &series(10.1, 0.3, 10));
        assert_eq!(noisy, Verdict::TooNoisy);
        // 10% apart with 2 samples each: the rank test cannot reach p < 0.01.
        let few = verdict(&series(10.0, 0.004, 2), &series(11.0, 0.004, 2));
        assert_eq!(few, Verdict::TooNoisy);
        // A zero or missing value has no ratio.
        let zero = Series::new(vec![0.0, 0.0]).unwrap();
        assert_eq!(verdict(&zero, &a), Verdict::NotComparable);
        assert_eq!(verdict(&a, &zero), Verdict::NotComparable);
        // The minimum effect is the rule's.
        let b = series(10.5, 0.004, 10);
        assert_eq!(verdict(&a, &b), Verdict::Slower);
        let rule = |min_change: f64| Rule { min_change, ..RULE };
        let by = |min_change: f64, b: &Series| judge(&rule(min_change), (&a).into(), b.into());
        assert_eq!(by(0.08, &b).verdict, Verdict::Same);
        // A minimum effect of 20% leaves a 5% change uncalled: the same, since both
        // sides' noise is far under it.
        let widened = by(0.2, &b);
        assert_eq!((widened.verdict, widened.min_effect), (Verdict::Same, 0.2));
        assert_eq!(by(0.2, &series(13.0, 0.004, 10)).verdict, Verdict::Slower);
        assert!(rule(0.08).describe().contains("(|B/A − 1|): 8%"));
        assert_eq!(percent(0.025), "2.5%");
        // Within a run, the minimum effect is the experiment's spread between machines.
        let within = Rule::within("compare-kernels").min_change;
        assert!(within > 0.0 && within < 0.2, "{within}");
    }
}
