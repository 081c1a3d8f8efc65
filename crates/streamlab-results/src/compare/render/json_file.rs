//! `comparison.json`: every compared row with its verdicts, the counts, and the rule.
use std::fmt::Write;

use crate::compare::{ComparedRow, Comparison};
use crate::derived::summary::{Entries, Json};
use crate::experiment::json;
use crate::saved::{KernelSet, files};
use crate::verdict::Verdict;
use serde::Serialize;

/// How many rows got each verdict.
#[derive(Debug, Default, Serialize)]
pub struct Counts {
    pub rows: usize,
    pub changed: usize,
    pub faster: usize,
    pub slower: usize,
    pub same: usize,
    pub too_noisy: usize,
    pub not_comparable: usize,
}

impl Counts {
    fn of(verdicts: impl IntoIterator<Item = Verdict>) -> Counts {
        let verdicts: Vec<Verdict> = verdicts.into_iter().collect();
        let n = |v: Verdict| verdicts.iter().filter(|&&x| x == v).count();
        Counts {
            rows: verdicts.len(),
            changed: n(Verdict::Faster) + n(Verdict::Slower),
            faster: n(Verdict::Faster),
            slower: n(Verdict::Slower),
            same: n(Verdict::Same),
            too_noisy: n(Verdict::TooNoisy),
            not_comparable: n(Verdict::NotComparable),
        }
    }
}

/// The counts of a comparison's (or a section's) rows: raw, controlled, and in all.
#[derive(Debug, Default, Serialize)]
pub struct Totals {
    /// Raw verdicts, a row the machine moved counted the same.
    pub raw: Counts,
    /// Raw verdicts of the rows without a control.
    pub alone: Counts,
    /// Controlled verdicts, over the rows with a control: what the code did.
    pub controlled: Counts,
    /// The controlled verdict where there is one, else the raw one: what `--fail-on` reads.
    pub verdict: Counts,
    /// Rows called changed raw that moved with their control.
    pub moved_with_machine: usize,
}

impl Totals {
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a ComparedRow>) -> Totals {
        let rows: Vec<&ComparedRow> = rows.into_iter().collect();
        let moved = |r: &&&ComparedRow| r.verdicts.moved_with_machine;
        // A row the machine moved counts the same raw.
        let raw = |r: &&ComparedRow| match moved(&r) {
            true => Verdict::Same,
            false => r.verdicts.raw.verdict,
        };
        let alone = rows.iter().filter(|r| r.verdicts.controlled.is_none());
        let controlled = (rows.iter()).filter_map(|r| r.verdicts.controlled.map(|c| c.verdict));
        Totals {
            raw: Counts::of(rows.iter().map(raw)),
            alone: Counts::of(alone.map(|r| r.verdicts.raw.verdict)),
            controlled: Counts::of(controlled),
            verdict: Counts::of(rows.iter().map(|r| r.verdicts.verdict())),
            moved_with_machine: rows.iter().filter(moved).count(),
        }
    }

    /// The two headlines: the rows judged alone, and those held against a control.
    pub fn headlines(&self) -> [String; 2] {
        let counts = |c: &Counts| {
            format!(
                "{} of {} changed ({} faster, {} slower, {} too noisy to say)",
                c.changed, c.rows, c.faster, c.slower, c.too_noisy
            )
        };
        [
            format!(
                "Rows judged alone, which a change of machine moves as well as a change of code: {}.",
                counts(&self.alone)
            ),
            format!(
                "Rows held against a control of their own run (a C++ twin, the link's probes, the launch probe, a model), which a change of machine moves only where it favours the row over its control: {}.",
                counts(&self.controlled)
            ),
        ]
    }

    /// "3 of 617 rows changed (1 faster, 2 slower); 32 moved with the machine; raw 35 of
    /// 617 called changed, controlled 1 of 198".
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} of {} rows changed ({} faster, {} slower)",
            self.verdict.changed, self.verdict.rows, self.verdict.faster, self.verdict.slower
        );
        if self.moved_with_machine > 0 {
            let _ = write!(line, "; {} moved with the machine", self.moved_with_machine);
        }
        let _ = write!(
            line,
            "; raw {} of {} called changed, controlled {} of {}",
            self.raw.changed, self.raw.rows, self.controlled.changed, self.controlled.rows
        );
        line
    }
}

/// The rule in words, with its margins' measured false-call rate.
pub fn rule_text(c: &Comparison) -> String {
    let floor = if c.min_change > 0.0 {
        format!(
            " A change under {} (--min-change) is never called.",
            crate::verdict::percent(c.min_change)
        )
    } else {
        String::new()
    };
    format!(
        "Runs are the unit: a row's change ln(B/A) is held against the spread s that rows of its experiment show between two machines of one kind running one build (fitted on A/A pairs) together with the two runs' own noise w of the row, p = P(|Z| ≥ |ln(B/A)| / √(s² + w²)), and the rows called changed are chosen over the whole comparison at once by the Benjamini–Hochberg procedure at a {:.0}% false-discovery rate. A row not called is the same where its own noise is within its experiment's spread, else too noisy to say. Raw verdicts judge the row alone (what the machine and the code did); controlled ones the row over its control measured in the same run (its C++ twin, the link's probes, the launch probe: what the code did), against the spread of such ratios. Measured false-call rate: {}.{floor}",
        100.0 * crate::compare::judge::FDR,
        c.margins.false_call_text()
    )
}

/// `comparison.json`: every compared row by experiment, kernel set and key (so
/// `/experiments/bounds/rust/dtod/verdict` names one verdict), with the counts.
pub fn comparison_json(c: &Comparison) -> String {
    let mut experiments = Entries::default();
    for s in &c.sections {
        let mut sets = Entries::default();
        for set in [KernelSet::Rust, KernelSet::Cuda] {
            let rows: Vec<&ComparedRow> = s.rows.iter().filter(|r| r.row.set == set).collect();
            if rows.is_empty() {
                continue;
            }
            let mut keyed = Entries::default();
            for r in rows {
                let (raw, controlled) = (r.verdicts.raw, r.verdicts.controlled);
                // The raw change and its verdict, against the experiment's spread between
                // machines; what it was held against, and the controlled change.
                let file = serde_json::json!({
                    "label": &r.row.label,
                    "unit": r.row.unit,
                    "a": r.row.a.value,
                    "b": r.row.b.value,
                    "noise_a": r.row.a.noise,
                    "noise_b": r.row.b.noise,
                    "b_over_a": raw.b_over_a,
                    "p_value": raw.p_value,
                    "spread": raw.spread,
                    "verdict": raw.verdict,
                    "control": r.row.control,
                    "controlled_b_over_a": controlled.and_then(|c| c.b_over_a),
                    "controlled_p_value": controlled.and_then(|c| c.p_value),
                    "controlled_spread": controlled.map(|c| c.spread),
                    "controlled_verdict": controlled.map(|c| c.verdict),
                    "moved_with_machine": r.verdicts.moved_with_machine,
                });
                keyed.insert(r.row.key.to_owned(), file);
            }
            // Named as the set serialises: "rust", "cuda".
            sets.insert(format!("{set:?}").to_lowercase(), Json::Object(keyed));
        }
        let totals = Totals::of(&s.rows);
        // The raw counts at the section's top level too, as every comparison has them.
        let (Json::Object(mut entry), Json::Object(raw)) = (json(&totals), json(&totals.raw))
        else {
            unreachable!("counts serialise as objects")
        };
        entry.extend(raw);
        entry.extend(sets);
        experiments.insert(s.name.to_owned(), Json::Object(entry));
    }
    let only = |side: &str| {
        (c.only.iter())
            .find(|o| o.side == side)
            .map(|o| o.names.clone())
            .unwrap_or_default()
    };
    let (raw, controlled) = c.margins.false_calls();
    // The totals are over every experiment; `experiments` holds each one's counts, then
    // its rows by kernel set and key. `false_calls`: the largest share of rows called
    // changed on an A/A pair left out of the fit.
    let file = serde_json::json!({
        "a": c.sides[0],
        "b": c.sides[1],
        "rule": {
            "text": rule_text(c),
            "min_change": c.min_change,
            "false_discovery_rate": crate::compare::judge::FDR,
            "false_calls": { "raw": raw, "controlled": controlled },
            "margins": c.margins,
        },
        "totals": Totals::of(c.rows()),
        "experiments": experiments,
        "only_in_a": only("A"),
        "only_in_b": only("B"),
    });
    crate::folder::to_json(files::COMPARISON, &file).expect("a comparison serialises")
}
