//! The rule by which two runs' rows are called changed, with runs as the unit.
//!
//! A row's change `x = ln(B/A)` is held against the spread `s` its experiment's rows show
//! between two machines of one kind running one build ([`Margins`]) together with the two
//! runs' own noise `w`: `p = P(|Z| ≥ |x| / √(s² + w²))`, and the rows called are chosen
//! over the whole comparison at once by Benjamini–Hochberg at a false-discovery rate of
//! [`FDR`] (`render::rule_text` says it in full). The raw and the controlled change are
//! judged apart, each against its own spread; how far the GPU's clocks moved between
//! the results is added to the raw spread, so a run whose GPU ran slower cannot call its
//! rows slower by what the clocks alone explain.
use std::collections::BTreeMap;

use super::rows::{Change, PairedRow};
use crate::saved::KernelSet;
use crate::stats::{benjamini_hochberg, normal_two_sided_p, quantile, sorted};
use crate::verdict::Verdict;
pub use crate::verdict::{HeldOut, Margin, Margins, PairFacts, margins};

/// The false-discovery rate over a comparison's rows.
pub const FDR: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    pub b_over_a: Option<f64>,
    pub p_value: Option<f64>,
    /// The spread of its experiment it was held to.
    pub spread: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowVerdicts {
    pub raw: Judgement,
    pub controlled: Option<Judgement>,
    /// Called changed raw by about as much as the machine moved its experiment's rows.
    pub moved_with_machine: bool,
}

impl RowVerdicts {
    /// What the row says of the code: the controlled verdict; without a control, the
    /// raw one, or the same where the raw change moved with the machine.
    pub fn verdict(&self) -> Verdict {
        match self.controlled {
            Some(c) => c.verdict,
            None if self.moved_with_machine => Verdict::Same,
            None => self.raw.verdict,
        }
    }

    /// Called changed raw, and not by the machine.
    pub fn raw_changed(&self) -> bool {
        self.raw.verdict.changed() && !self.moved_with_machine
    }
}

/// The p of `change` against `spread`; none where untestable or under `min_change`.
fn p_value(change: Option<&Change>, spread: f64, min_change: f64) -> Option<f64> {
    let c = change?;
    if !c.within.is_finite() || (c.b_over_a - 1.0).abs() < min_change {
        return None;
    }
    let scale = spread.hypot(c.within);
    Some(if scale > 0.0 {
        normal_two_sided_p(c.log() / scale)
    } else if c.log() == 0.0 {
        1.0
    } else {
        0.0
    })
}

/// Judge every one of `changes` (each with its experiment's spread) at once.
fn judge_all(changes: &[(Option<Change>, f64)], min_change: f64) -> Vec<Judgement> {
    let ps: Vec<Option<f64>> = (changes.iter())
        .map(|(c, spread)| p_value(c.as_ref(), *spread, min_change))
        .collect();
    let called = benjamini_hochberg(&ps, FDR);
    (changes.iter().zip(ps).zip(called))
        .map(|(((change, spread), p), called)| {
            let verdict = match change {
                None => Verdict::NotComparable,
                Some(c) if called && c.b_over_a < 1.0 => Verdict::Faster,
                Some(_) if called => Verdict::Slower,
                Some(c) if c.within <= *spread || c.b_over_a == 1.0 => Verdict::Same,
                Some(_) => Verdict::TooNoisy,
            };
            Judgement {
                verdict,
                b_over_a: change.map(|c| c.b_over_a),
                p_value: p.or_else(|| change.map(|_| 1.0)),
                spread: *spread,
            }
        })
        .collect()
}

/// The scatter of `changes` about their median (robust, as a standard deviation).
fn scatter(changes: &[f64]) -> Option<f64> {
    if changes.len() < SCATTER_ROWS {
        return None;
    }
    let median = |v: &[f64]| quantile(&sorted(v), 0.5);
    let center = median(changes);
    let deviations: Vec<f64> = changes.iter().map(|x| (x - center).abs()).collect();
    Some(1.4826 * median(&deviations))
}

/// Fewer rows than this in an experiment show no scatter of their own.
const SCATTER_ROWS: usize = 10;

/// Each row's change, raw or `controlled`, with its spread: its experiment's fitted
/// spread, or the scatter the comparison's own rows of that experiment and kernel set
/// show, if wider (two machines noisier than those fitted show it so); with how far the
/// link moved (for a row over it) and the clocks moved (for a raw change) added.
fn with_spreads(
    rows: &[PairedRow],
    margins: &Margins,
    controlled: bool,
) -> Vec<(Option<Change>, f64)> {
    let pick = |r: &PairedRow| if controlled { r.controlled } else { r.raw };
    let mut scatters = BTreeMap::new();
    (rows.iter())
        .map(|r| {
            let group = (r.experiment, r.set == KernelSet::Cuda);
            let scattered = *scatters.entry(group).or_insert_with(|| {
                let logs: Vec<f64> = (rows.iter())
                    .filter(|o| (o.experiment, o.set) == (r.experiment, r.set))
                    .filter_map(|o| pick(o).map(|c| c.log()))
                    .filter(|x| x.is_finite())
                    .collect();
                scatter(&logs)
            });
            let fitted = margins.spread(r.experiment, controlled);
            let spread = scattered.map_or(fitted, |s| fitted.max(s));
            let clocks = if controlled { None } else { r.clocks_moved };
            let spread = spread.hypot(r.link_moved.unwrap_or(0.0));
            let spread = spread.hypot(clocks.unwrap_or(0.0));
            (pick(r), spread)
        })
        .collect()
}

/// Every row of a comparison judged by `margins`, raw and controlled, at once.
pub fn judge(rows: &[PairedRow], margins: &Margins, min_change: f64) -> Vec<RowVerdicts> {
    let judged = |rows: &[PairedRow], controlled: bool| {
        judge_all(&with_spreads(rows, margins, controlled), min_change)
    };
    let with_control: Vec<PairedRow> = (rows.iter())
        .filter(|r| r.controlled.is_some())
        .cloned()
        .collect();
    let mut controlled = judged(&with_control, true).into_iter();
    let mut out: Vec<RowVerdicts> = (rows.iter().zip(judged(rows, false)))
        .map(|(r, raw)| RowVerdicts {
            raw,
            controlled: r.controlled.and_then(|_| controlled.next()),
            moved_with_machine: false,
        })
        .collect();
    attribute_to_machine(rows, &mut out);
    out
}

/// The median change of an experiment's rows whose controls moved with them, if at
/// least [`MOVED_ROWS`] did.
fn machine_shift(rows: &[PairedRow], verdicts: &[RowVerdicts], name: &str) -> Option<f64> {
    let mut moved: Vec<f64> = (rows.iter().zip(verdicts))
        .filter(|(r, v)| r.experiment == name && v.raw.verdict.changed())
        .filter(|(_, v)| v.controlled.is_some_and(|c| !c.verdict.changed()))
        .filter_map(|(r, _)| r.raw.map(|c| c.log()))
        .collect();
    if moved.len() < MOVED_ROWS {
        return None;
    }
    moved.sort_by(f64::total_cmp);
    Some(moved[moved.len() / 2])
}

/// Rows whose controls moving with them say the machine moved, fewest.
const MOVED_ROWS: usize = 3;

/// Mark each row called changed raw in an experiment the machine moved ([`machine_shift`])
/// whose change lies within 1.96 times its spread and its own noise combined of that
/// shift, and whose control (if any) stood still.
fn attribute_to_machine(rows: &[PairedRow], verdicts: &mut [RowVerdicts]) {
    let shifts: Vec<Option<f64>> = (rows.iter())
        .map(|r| machine_shift(rows, verdicts, r.experiment))
        .collect();
    for ((r, v), shift) in rows.iter().zip(verdicts.iter_mut()).zip(shifts) {
        let raw = r.raw.filter(|_| v.raw.verdict.changed());
        let (Some(shift), Some(c)) = (shift, raw) else {
            continue;
        };
        let within = (c.log() - shift).abs() <= 1.96 * v.raw.spread.hypot(c.within);
        let control_still = v.controlled.is_none_or(|c| !c.verdict.changed());
        v.moved_with_machine = within && control_still;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::rows::Figure;
    use crate::saved::KernelSet;
    use std::collections::BTreeMap;

    fn margins(raw: f64, controlled: f64) -> Margins {
        let m = Margin {
            raw,
            controlled: Some(controlled),
            rows: 10,
            controlled_rows: 10,
        };
        Margins {
            method: String::new(),
            pairs: Vec::new(),
            experiments: BTreeMap::from([("x".into(), m)]),
            pooled: m,
            held_out: Vec::new(),
        }
    }

    fn row(ratio: f64, within: f64, controlled: Option<f64>) -> PairedRow {
        let f = Figure {
            value: 1.0,
            noise: Some(0.01),
            samples: 20,
        };
        PairedRow {
            experiment: "x",
            set: KernelSet::Rust,
            key: String::new(),
            label: String::new(),
            unit: "ms",
            a: f,
            b: Figure { value: ratio, ..f },
            over_link: false,
            link_moved: None,
            clocks_moved: None,
            raw: Some(Change {
                b_over_a: ratio,
                within,
            }),
            control: None,
            controlled: controlled.map(|b_over_a| Change { b_over_a, within }),
        }
    }

    #[test]
    fn a_change_past_the_machines_spread_or_its_clocks_or_control_is_called_and_they_are_not() {
        let m = margins(0.01, 0.002);
        let mut rows: Vec<PairedRow> = (0..40)
            .map(|i| row(1.0 + 0.0002 * i as f64, 0.001, None))
            .collect();
        rows.extend([1.06, 0.95, 1.015].map(|ratio| row(ratio, 0.001, None)));
        let v = judge(&rows, &m, 0.0);
        let called = [v[40].raw.verdict, v[41].raw.verdict];
        assert_eq!(called, [Verdict::Slower, Verdict::Faster]);
        // 1.5% against a 1% spread: not called, and quiet enough to say the same.
        assert_eq!(v[42].raw.verdict, Verdict::Same);
        assert!(v[..40].iter().all(|v| v.raw.verdict == Verdict::Same));
        // A row noisier than the spread that is not called cannot be said the same.
        let noisy = judge(&[row(1.02, 0.05, None)], &m, 0.0);
        assert_eq!(noisy[0].raw.verdict, Verdict::TooNoisy);
        // --min-change keeps a smaller change from being called.
        assert_eq!(judge(&rows, &m, 0.07)[40].raw.verdict, Verdict::Same);
        // The committed margins parse and name their pairs.
        let m = super::margins();
        assert!(!m.pairs.is_empty() && !m.held_out.is_empty());
        assert!(m.pooled.raw > 0.0);
        assert!(m.false_call_text().contains("A/A pairs"));
        // A row that moved with its control or the clocks is the machine's doing.
        let m = margins(0.005, 0.002);
        let rows: Vec<PairedRow> = (0..30)
            .map(|i| {
                let step = 0.0001 * i as f64;
                row(1.032 + step, 0.0005, Some(0.998 + step))
            })
            .collect();
        let v = judge(&rows, &m, 0.0);
        assert!(v.iter().all(|v| v.raw.verdict == Verdict::Slower));
        let machine = |v: &RowVerdicts| v.moved_with_machine && !v.verdict().changed();
        assert!(v.iter().all(machine));
        // A real change moves the row against its control too.
        let changed = judge(&[row(1.05, 0.0005, Some(1.05))], &m, 0.0);
        assert_eq!(changed[0].verdict(), Verdict::Slower);
        assert!(!changed[0].moved_with_machine);
        // A raw change the clocks account for is not called, and one past them is: B's GPU ran its SMs at 1800 MHz where A's ran at 1980: 10% slower rows.
        let slower_clock = (1980.0f64 / 1800.0).ln();
        let judged = |ratio: f64, clocks_moved: Option<f64>, controlled: Option<f64>| {
            let r = PairedRow {
                clocks_moved,
                ..row(ratio, 0.001, controlled)
            };
            judge(&[r], &m, 0.0)[0]
        };
        assert_eq!(judged(1.10, None, None).raw.verdict, Verdict::Slower);
        let within = judged(1.10, Some(slower_clock), None);
        assert_eq!(within.raw.verdict, Verdict::Same);
        // A change well past what the clocks explain is still called.
        let past = judged(1.40, Some(slower_clock), None);
        assert_eq!(past.raw.verdict, Verdict::Slower);
        // The controlled change, a ratio of rows of one machine, is held to its own spread.
        let controlled = judged(1.10, Some(slower_clock), Some(1.10));
        assert_eq!(controlled.controlled.unwrap().verdict, Verdict::Slower);
    }
}
