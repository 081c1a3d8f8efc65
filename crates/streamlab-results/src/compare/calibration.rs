//! The margins of [`super::judge`] fitted on A/A pairs: runs of one build on two machines
//! of one kind, listed in `calibration/pairs.json`. Whatever `compare` calls changed
//! between two such runs is the machines' doing, so each experiment's spread is set from
//! them; each pair in turn is left out, the rest fitted, and the pair judged
//! ([`HeldOut`]). `cargo xtask calibrate` writes `calibration/margins.json`, which the
//! build embeds.
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::judge::{self, HeldOut, Margin, Margins, PairFacts, RowVerdicts};
use super::rows::PairedRow;
use super::{CompareError, ComparedRun};
use crate::stats::{quantile, sorted};

/// How the margins are fitted, in words (kept in the file).
pub const METHOD: &str = "Per experiment measured by at least two pairs (else the pooled rows), raw and controlled: the spread s with which ln(B/A) ~ N(0, s² + w²) (w the two runs' own noise of the row) covers 95% of the pairs' rows within 1.96 s and their largest change within 3.29 s (the two-sided 0.1% point): s = √max(0, max(q95(|ln B/A|) / 1.96, max(|ln B/A|) / 3.29)² − median(w²)), at least 0.01%. Rows judged at once by Benjamini–Hochberg at a 5% false-discovery rate, a row whose work crosses the link with how far the link moved over the two runs' probes added to its spread, and every row's raw change with how far the GPU's SM or memory clock moved between its results (read right after each).";

/// The least spread an experiment is given.
const FLOOR: f64 = 1e-4;

/// A pair of recorded runs, by their folders relative to the crate.
#[derive(Debug, Clone, Deserialize)]
pub struct PairFiles {
    pub a: PathBuf,
    pub b: PathBuf,
}

/// One pair's compared rows.
pub struct PairRows {
    pub facts: PairFacts,
    pub rows: Vec<PairedRow>,
}

/// The spread of `changes` ((ln B/A, w) of each row) as [`METHOD`] says.
fn spread(changes: &[(f64, f64)]) -> Option<f64> {
    if changes.is_empty() {
        return None;
    }
    let of = |f: fn(&(f64, f64)) -> f64| sorted(&changes.iter().map(f).collect::<Vec<_>>());
    let sizes = of(|c| c.0.abs());
    let s = (quantile(&sizes, 0.95) / 1.96).max(quantile(&sizes, 1.0) / 3.29);
    let w2 = quantile(&of(|c| c.1 * c.1), 0.5);
    Some((s.powi(2) - w2).max(0.0).sqrt().max(FLOOR))
}

/// The margin of `rows`.
fn margin(rows: &[&PairedRow]) -> Option<Margin> {
    let points = |pick: fn(&PairedRow) -> Option<super::rows::Change>| -> Vec<(f64, f64)> {
        (rows.iter())
            .filter_map(|r| pick(r))
            .filter(|c| c.within.is_finite() && c.b_over_a.is_finite() && c.b_over_a > 0.0)
            .map(|c| (c.log(), c.within))
            .collect()
    };
    let (raw, controlled) = (points(|r| r.raw), points(|r| r.controlled));
    Some(Margin {
        raw: spread(&raw)?,
        controlled: spread(&controlled),
        rows: raw.len(),
        controlled_rows: controlled.len(),
    })
}

/// The fewest pairs an experiment's own margin is fitted on (else it has the pooled one):
/// one pair of machines is one draw of how far two machines differ.
const MIN_PAIRS: usize = 2;

/// Every experiment's margin over `pairs`, and the pooled one (no pairs named, none left
/// out).
fn fit(pairs: &[&PairRows]) -> Margins {
    let all: Vec<&PairedRow> = pairs.iter().flat_map(|p| &p.rows).collect();
    let names: std::collections::BTreeSet<&str> = all.iter().map(|r| r.experiment).collect();
    let measured_by = |name: &str| {
        (pairs.iter())
            .filter(|p| p.rows.iter().any(|r| r.experiment == name))
            .count()
    };
    let experiments = (names.into_iter())
        .filter(|name| measured_by(name) >= MIN_PAIRS)
        .filter_map(|name| {
            let rows: Vec<&PairedRow> = (all.iter().copied())
                .filter(|r| r.experiment == name)
                .collect();
            Some((name.to_owned(), margin(&rows)?))
        })
        .collect();
    let pooled = margin(&all).unwrap_or(Margin {
        raw: FLOOR,
        controlled: None,
        rows: 0,
        controlled_rows: 0,
    });
    Margins {
        method: METHOD.into(),
        pairs: Vec::new(),
        experiments,
        pooled,
        held_out: Vec::new(),
    }
}

/// `pairs` judged by margins fitted on all the others, one at a time.
fn held_out(pairs: &[PairRows]) -> Vec<HeldOut> {
    (pairs.iter())
        .map(|pair| {
            let rest: Vec<&PairRows> = pairs.iter().filter(|p| !std::ptr::eq(*p, pair)).collect();
            let verdicts = judge::judge(&pair.rows, &fit(&rest), 0.0);
            let count =
                |called: fn(&RowVerdicts) -> bool| verdicts.iter().filter(|v| called(v)).count();
            HeldOut {
                pair: pair.facts.name.clone(),
                rows: pair.rows.len(),
                raw_changed: count(RowVerdicts::raw_changed),
                controlled_rows: count(|v| v.controlled.is_some()),
                controlled_changed: count(|v| v.controlled.is_some_and(|c| c.verdict.changed())),
                changed: count(|v| v.verdict().changed()),
            }
        })
        .collect()
}

/// The margins of `pairs`, each pair also left out in turn.
pub fn calibrate(pairs: Vec<PairRows>) -> Margins {
    let fitted = fit(&pairs.iter().collect::<Vec<_>>());
    Margins {
        held_out: held_out(&pairs),
        pairs: pairs.into_iter().map(|p| p.facts).collect(),
        ..fitted
    }
}

/// The pairs `calibration/pairs.json` lists under `crate_dir`, compared.
pub fn pairs(crate_dir: &Path) -> Result<Vec<PairRows>, CompareError> {
    let list = crate_dir.join("calibration/pairs.json");
    let unreadable =
        |e: &dyn std::fmt::Display| CompareError::Calibration(format!("{}: {e}", list.display()));
    let text = std::fs::read_to_string(&list).map_err(|e| unreadable(&e))?;
    let files: Vec<PairFiles> = serde_json::from_str(&text).map_err(|e| unreadable(&e))?;
    files
        .iter()
        .map(|p| {
            let a = ComparedRun::load("A", &crate_dir.join(&p.a))?;
            let b = ComparedRun::load("B", &crate_dir.join(&p.b))?;
            let rows = super::all_rows(&a, &b);
            Ok(PairRows {
                facts: PairFacts {
                    name: format!("{} vs {}", a.name(), b.name()),
                    gpu: a.summary.device.name.clone(),
                    rows: rows.len(),
                },
                rows,
            })
        })
        .collect()
}

/// `calibration/margins.json` as a fresh fit of the pairs would write it.
pub fn margins_file(crate_dir: &Path) -> Result<String, CompareError> {
    let margins = calibrate(pairs(crate_dir)?);
    Ok(serde_json::to_string_pretty(&margins).expect("margins serialise") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_covers_95_percent_of_the_rows_beyond_their_own_noise() {
        // |x| from 0 to 0.0099: q95 ≈ 0.0094; no noise: s = q95 / 1.96.
        let quiet: Vec<(f64, f64)> = (0..100).map(|i| (i as f64 * 1e-4, 0.0)).collect();
        let s = spread(&quiet).unwrap();
        let sizes = sorted(&quiet.iter().map(|c| c.0).collect::<Vec<_>>());
        assert!((s - quantile(&sizes, 0.95) / 1.96).abs() < 1e-12);
        // One far row widens it: the largest change within 3.29 s.
        let mut far = quiet.clone();
        far.push((0.1, 0.0));
        assert!((spread(&far).unwrap() - 0.1 / 3.29).abs() < 1e-12);
        // The rows' own noise explains part of it.
        let noisy: Vec<(f64, f64)> = quiet.iter().map(|&(x, _)| (x, 0.003)).collect();
        assert!(spread(&noisy).unwrap() < s);
        // All of it: the floor.
        let all_noise: Vec<(f64, f64)> = quiet.iter().map(|&(x, _)| (x, 1.0)).collect();
        assert_eq!(spread(&all_noise), Some(FLOOR));
        assert_eq!(spread(&[]), None);
    }
}
