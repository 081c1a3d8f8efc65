//! Two results folders side by side (`streamlab compare A B`): for every experiment both
//! hold, its headline and every measured row as A, B and B/A, raw and held against its
//! control where it has one ([`rows`]), each judged with runs as the unit ([`judge`], by
//! margins fitted on A/A pairs: [`calibration`]); written as a report ([`render`]) and
//! printed ([`terminal`]).
mod pairing;

pub mod calibration;
pub mod judge;
pub mod render;
pub mod rows;
pub mod terminal;

pub use pairing::all_rows;
use pairing::{header, pairings, ratio_chart};

use std::path::{Path, PathBuf};

use crate::derived::summary::{RunStatus, RunSummary};
use crate::folder::{self, FolderError};
use crate::report::section::Figure;
use crate::report::table::{Table, num};
use crate::run::summary::summarize;
use crate::run::{SavedRun, file_kind};
use crate::saved::{BuildInfo, KernelSet, NOT_RECORDED};
use crate::verdict::Verdict;
use judge::{Margins, RowVerdicts};
use rows::PairedRow;

/// A comparison that cannot be made, or not written.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("A and B are the same folder ({0}): name two different results folders")]
    SameFolder(PathBuf),
    #[error(
        "--out {out} is inside {dir}, a folder compared: name a folder of its own for the comparison"
    )]
    OutInside { out: PathBuf, dir: PathBuf },
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error("the calibration pairs cannot be read: {0}")]
    Calibration(String),
}

impl CompareError {
    /// Whether the folders named are what is wrong (a usage error), not the machine.
    pub fn is_usage(&self) -> bool {
        match self {
            CompareError::Folder(e) => e.is_usage(),
            CompareError::Calibration(_) => false,
            _ => true,
        }
    }
}

pub struct ComparedRun {
    /// "A" or "B".
    pub side: &'static str,
    pub dir: PathBuf,
    pub run: SavedRun,
    pub summary: RunSummary,
    /// Whether the folder had a `summary.json` (else its summary is derived).
    pub summary_saved: bool,
}

impl ComparedRun {
    /// The results folder `dir` as side `side`.
    pub fn load(side: &'static str, dir: &Path) -> Result<ComparedRun, CompareError> {
        let mut run = SavedRun::load(dir)?;
        let summary_saved = run.summary.is_some();
        let summary = run.summary.take().unwrap_or_else(|| {
            summarize(&run, RunStatus::default())
                .expect("a loaded folder holds a result to name its device")
        });
        Ok(ComparedRun {
            side,
            dir: dir.to_owned(),
            run,
            summary,
            summary_saved,
        })
    }

    /// The folder's last component, e.g. "h100".
    pub fn name(&self) -> String {
        (self.dir.canonicalize().ok().as_deref().unwrap_or(&self.dir))
            .file_name()
            .map_or_else(
                || self.dir.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
    }

    /// "A (h100)": the column heading of its values.
    pub fn heading(&self) -> String {
        format!("{} ({})", self.side, self.name())
    }
}

/// Where `compare A B` writes when `--out` is not given: `<A>-vs-<B>` beside A
/// (`docs/results/h100` against `docs/results/h200` writes `docs/results/h100-vs-h200`).
pub fn default_out(a: &ComparedRun, b: &ComparedRun) -> PathBuf {
    let name = format!("{}-vs-{}", a.name(), b.name());
    let absolute = a.dir.canonicalize().unwrap_or_else(|_| a.dir.clone());
    match (a.dir.parent(), absolute.parent()) {
        (Some(p), _) if !p.as_os_str().is_empty() && a.dir.file_name().is_some() => p.join(name),
        (_, Some(p)) => p.join(name),
        _ => PathBuf::from(name),
    }
}

/// One measured row both folders hold, with its verdicts.
#[derive(Debug, Clone)]
pub struct ComparedRow {
    pub row: PairedRow,
    pub verdicts: RowVerdicts,
}

impl ComparedRow {
    /// Its raw verdict where it is judged alone: a row with a control is called by it
    /// only, so that no row is called both faster and slower.
    pub fn raw_called(&self) -> Option<Verdict> {
        (self.verdicts.controlled.is_none()).then_some(self.verdicts.raw.verdict)
    }

    /// How large the row's change is: the larger |ln B/A| of its raw and controlled ones.
    pub fn size(&self) -> f64 {
        [self.row.raw, self.row.controlled]
            .iter()
            .flatten()
            .map(|c| c.log().abs())
            .fold(0.0, f64::max)
    }
}

/// One experiment both folders hold.
#[derive(Default)]
pub struct ComparedSection {
    pub name: &'static str,
    /// What differs in how it ran.
    pub notes: Vec<(String, String)>,
    /// The rows only one side measured, by side and kernel set: (what, their labels).
    pub only: Vec<(String, Vec<String>)>,
    /// Its headline and facts as each run's summary words them: (label, A, B).
    pub headlines: Vec<(String, String, String)>,
    /// The parameters that differ: (parameter, A, B).
    pub params: Vec<(String, String, String)>,
    /// Every measured row both sides hold, judged.
    pub rows: Vec<ComparedRow>,
    pub figures: Vec<Figure>,
}

impl ComparedSection {
    /// How many of its rows, beside those that moved with the machine, got `verdict` as
    /// their verdict, so that the summary line's counts add up to its rows.
    pub fn count(&self, verdict: Verdict) -> usize {
        (self.rows.iter())
            .filter(|r| !r.verdicts.moved_with_machine && r.verdicts.verdict() == verdict)
            .count()
    }

    /// How many rows moved with their controls, and their median raw change (B/A − 1).
    pub fn machine_moved(&self) -> Option<(usize, f64)> {
        let mut moved: Vec<f64> = (self.rows.iter())
            .filter(|r| r.verdicts.moved_with_machine)
            .filter_map(|r| r.row.raw.map(|c| c.b_over_a - 1.0))
            .collect();
        moved.sort_by(f64::total_cmp);
        (!moved.is_empty()).then(|| (moved.len(), moved[moved.len() / 2]))
    }

    /// "2 of 16 rows changed (1 faster, 1 slower), 3 moved with the machine, 10 the same,
    /// 1 too noisy to say".
    pub fn summary_line(&self) -> String {
        let (faster, slower) = (self.count(Verdict::Faster), self.count(Verdict::Slower));
        let (n, all) = (faster + slower, self.rows.len());
        let mut line = format!("{n} of {all} rows changed ({faster} faster, {slower} slower)");
        if let Some((n, _)) = self.machine_moved() {
            line += &format!(", {n} moved with the machine");
        }
        let (same, noisy) = (self.count(Verdict::Same), self.count(Verdict::TooNoisy));
        line += &format!(", {same} the same, {noisy} too noisy to say");
        let not = self.count(Verdict::NotComparable);
        if not > 0 {
            line += &format!(", {not} without a ratio");
        }
        line
    }
}

/// The rows of `rows` called changed (the controlled verdict where there is one, else the
/// raw one), largest change first.
pub fn changed<'a>(rows: impl IntoIterator<Item = &'a ComparedRow>) -> Vec<&'a ComparedRow> {
    let mut changed: Vec<&ComparedRow> = (rows.into_iter())
        .filter(|r| r.verdicts.verdict().changed())
        .collect();
    changed.sort_by(|a, b| b.size().total_cmp(&a.size()));
    changed
}

pub struct Comparison {
    pub title: String,
    /// One line per incomplete run.
    pub banners: Vec<String>,
    /// Every fact of both sides' provenance: label, A, B.
    pub header: Table,
    /// Experiments only one folder holds: by side ("A" or "B"), with the side's heading.
    pub only: Vec<OnlyIn>,
    pub sections: Vec<ComparedSection>,
    /// The margins every row was judged by, and the smallest change called.
    pub margins: Margins,
    pub min_change: f64,
    /// What `comparison.json` names each side by.
    pub sides: [SideFacts; 2],
}

impl Comparison {
    /// Every row of every section.
    pub fn rows(&self) -> impl Iterator<Item = &ComparedRow> {
        self.sections.iter().flat_map(|s| &s.rows)
    }

    /// Whether the two runs are of one build and of one GPU kind.
    pub fn identity(&self) -> String {
        let [a, b] = &self.sides;
        let builds = if a.commit == NOT_RECORDED || b.commit == NOT_RECORDED {
            "builds not known to be the same (a run did not record its commit)".to_owned()
        } else if a.commit == b.commit {
            format!("one build ({})", a.commit)
        } else {
            format!("different builds (A {}, B {})", a.commit, b.commit)
        };
        let gpus = if a.gpu == b.gpu {
            format!("one GPU kind ({})", a.gpu)
        } else {
            format!("different GPU kinds (A {}, B {})", a.gpu, b.gpu)
        };
        format!("The two runs are of {builds}, on {gpus}.")
    }

    /// Whether any row changed as `fail` names: faster, slower, or either.
    pub fn fails(&self, fail: FailOn) -> bool {
        self.rows().any(|r| match (fail, r.verdicts.verdict()) {
            (FailOn::Changed, v) => v.changed(),
            (FailOn::Slower, v) => v == Verdict::Slower,
            (FailOn::Faster, v) => v == Verdict::Faster,
        })
    }
}

/// Which changes make `compare --fail-on` exit non-zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Slower,
    Faster,
    Changed,
}

/// The experiments only one side's folder holds.
#[derive(Debug, Clone, PartialEq)]
pub struct OnlyIn {
    /// "A" or "B".
    pub side: &'static str,
    /// e.g. "A (h100)".
    pub heading: String,
    pub names: Vec<&'static str>,
}

/// One side as `comparison.json` names it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SideFacts {
    pub folder: String,
    pub gpu: String,
    pub started_utc: String,
    /// The commit its binary was built from, "not recorded" before runs recorded it.
    pub commit: String,
    pub complete: bool,
}

/// A change as a cell: "1.034 ▲ slower", either part alone, or "–".
pub fn change_text(ratio: Option<f64>, verdict: Option<Verdict>) -> String {
    match (ratio, verdict) {
        (Some(r), Some(v)) => format!("{} {}", num(r, 3), v.text()),
        (None, Some(v)) => v.text().to_owned(),
        (Some(r), None) => num(r, 3),
        (None, None) => "–".into(),
    }
}

/// A value with four significant digits, "–" when not finite.
pub fn significant(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let digits = 3 - x.abs().log10().floor() as i64;
    num(x, digits.clamp(0, 9) as usize)
}

/// A p-value as the tables show it: two decimals, four below 0.01, "< 0.0001" below that.
pub fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "< 0.0001".into()
    } else if p < 0.01 {
        format!("{p:.4}")
    } else {
        format!("{p:.2}")
    }
}

/// The comparison of `a` with `b` by this build's margins; a change under `min_change`
/// is never called.
pub fn compare(a: &ComparedRun, b: &ComparedRun, min_change: f64) -> Comparison {
    let margins = judge::margins().clone();
    let (found, [only_a, only_b]) = pairings(a, b);
    let all: Vec<PairedRow> = found.iter().flat_map(|p| p.1.iter().cloned()).collect();
    let mut verdicts = judge::judge(&all, &margins, min_change).into_iter();
    let heads = (a.heading(), b.heading());
    let sections = (found.into_iter())
        .map(|(section, rows)| {
            let rows: Vec<ComparedRow> = (rows.into_iter())
                .map(|row| ComparedRow {
                    row,
                    verdicts: verdicts.next().expect("a verdict per row"),
                })
                .collect();
            let figures = [KernelSet::Rust, KernelSet::Cuda]
                .into_iter()
                .filter_map(|set| {
                    let of_set: Vec<&ComparedRow> =
                        rows.iter().filter(|r| r.row.set == set).collect();
                    let chart = ratio_chart(section.name, set, &of_set, (&heads.0, &heads.1));
                    chart.map(Figure::draw)
                })
                .collect();
            ComparedSection {
                rows,
                figures,
                ..section
            }
        })
        .collect();
    let banner = |r: &&ComparedRun| Some(format!("{}: {}", r.heading(), r.summary.incomplete()?));
    let banners = [a, b].iter().filter_map(banner).collect();
    let only = [(a, only_a), (b, only_b)]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(r, names)| OnlyIn {
            side: r.side,
            heading: r.heading(),
            names,
        })
        .collect();
    let side = |r: &ComparedRun| SideFacts {
        folder: r.dir.display().to_string(),
        gpu: r.summary.device.name.clone(),
        started_utc: r.summary.provenance.started_utc.clone(),
        commit: (r.summary.provenance.build.as_ref())
            .map_or(NOT_RECORDED.to_owned(), BuildInfo::commit_text),
        complete: r.summary.complete,
    };
    Comparison {
        title: format!("streamlab comparison: {} vs {}", a.heading(), b.heading()),
        banners,
        header: header(a, b),
        only,
        sections,
        margins,
        min_change,
        sides: [side(a), side(b)],
    }
}

/// Compare the results folders `a` and `b` ([`compare`]) and write the report into `out`
/// (`None`: [`default_out`]), replaced whole once both folders are read and everything
/// is rendered. Returns the folder written and the comparison.
pub fn write(
    a: &Path,
    b: &Path,
    out: Option<&Path>,
    min_change: f64,
) -> Result<(PathBuf, Comparison), CompareError> {
    let canonical = |p: &Path| p.canonicalize().ok();
    if canonical(a).is_some() && canonical(a) == canonical(b) {
        return Err(CompareError::SameFolder(a.to_owned()));
    }
    let (a, b) = (ComparedRun::load("A", a)?, ComparedRun::load("B", b)?);
    let out = out.map_or_else(|| default_out(&a, &b), Path::to_owned);
    // The output is a folder of its own: never one of the folders read, nor inside one.
    let inside = |run: &ComparedRun| {
        let base = canonical(&run.dir)?;
        // The output may not exist yet: judge by its nearest existing ancestor.
        let nearest = (out.ancestors()).find_map(|at| canonical(&Path::new(".").join(at)))?;
        nearest.starts_with(&base).then(|| run.dir.clone())
    };
    if let Some(dir) = inside(&a).or_else(|| inside(&b)) {
        return Err(CompareError::OutInside { out, dir });
    }
    let comparison = compare(&a, &b, min_change);
    let outputs = render::files(&comparison);
    let mut staged = folder::Staged::begin(&out, file_kind, false)?;
    for (name, contents) in &outputs {
        staged.write(name, contents.as_bytes())?;
    }
    Ok((staged.finish()?, comparison))
}

#[cfg(test)]
mod tests {
    use super::pairing::{leaf_text, leaves, side_by_side};
    use super::*;
    use crate::derived::summary::Json;

    #[test]
    fn values_keep_four_significant_digits() {
        assert_eq!(significant(111.4675), "111.5");
        assert_eq!(significant(0.003_210_655), "0.003211");
        assert_eq!(significant(2.5), "2.500");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(f64::NAN), "–");
        assert_eq!(p_text(0.5), "0.50");
        assert_eq!(p_text(0.001_234), "0.0012");
        assert_eq!(p_text(1e-7), "< 0.0001");
    }

    #[test]
    fn leaves_pair_by_path_and_keep_what_only_one_side_has() {
        let parse = |t: &str| serde_json::from_str::<Json>(t).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        leaves(
            "",
            &parse(r#"{"x": 2.0, "v": [1.0, 2.0], "only": 1}"#),
            &mut a,
        );
        leaves("", &parse(r#"{"x": 3.0, "v": [1.0, 2.0]}"#), &mut b);
        let paired = side_by_side(&a, &b, false, |v| v.map_or("–".into(), leaf_text));
        let keys: Vec<&str> = paired.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(keys, ["x", "v[0]", "v[1]", "only"]);
        assert_eq!(paired[3].2, "–", "B lacks it");
        let differing = side_by_side(&a, &b, true, |v| v.map_or("–".into(), leaf_text));
        assert_eq!(differing.len(), 2, "x and only: {differing:?}");
        assert_eq!(leaf_text(&parse("2.5")), "2.500");
        let texts = ["null", "true", "3", "\"s\"", "[]"].map(|t| leaf_text(&parse(t)));
        assert_eq!(texts, ["null", "true", "3", "s", "[]"]);
    }
}
