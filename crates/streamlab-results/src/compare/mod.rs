//! Two results folders side by side (`streamlab compare A B`): any two results folders
//! (whole runs, single experiments, a mix; other GPUs, builds, kernel forms; the formats
//! of earlier builds) read back, and for every experiment both hold, its headline and
//! every measured row ([`Experiment::measured_rows`]) as value A, value B, B/A, and a
//! verdict by the one rule of [`crate::verdict`]: faster, slower, the same, or too noisy
//! to say. The devices and provenance sit in a header; what only one folder holds is
//! listed. The report is written as Markdown and HTML ([`render`]) with a chart per
//! experiment overlaying both runs, and every compared row with its verdict as
//! `comparison.json`; nothing is written until both folders have been read, and the
//! output folder is replaced whole.
pub mod render;

use std::path::{Path, PathBuf};

use crate::derived::rates::{link_moved, link_spread};
use crate::derived::summary::{Json, RunStatus, RunSummary};
use crate::experiment::{Experiment, MeasuredRow, With};
use crate::experiments::{self, Visit};
use crate::folder::{self, FolderError};
use crate::report::chart::{BOUND_COLOR, BarSeries, Level, PALETTE, XAxis, YScale};
use crate::report::figures::{FigureModel, blank, line};
use crate::report::section::Figure;
use crate::report::table::{self, Table, num};
use crate::run::{SavedRun, held, sets, summarize};
use crate::saved::{BuildInfo, KernelSet, NOT_RECORDED, files};
use crate::verdict::{self, Judged, Rule, Verdict};

/// A comparison that cannot be made, or not written.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("{0} does not exist: name a results folder written by streamlab")]
    Missing(PathBuf),
    #[error("{0} is not a folder: name a results folder written by streamlab")]
    NotAFolder(PathBuf),
    #[error("A and B are the same folder ({0}): name two different results folders")]
    SameFolder(PathBuf),
    #[error(
        "--out {out} is inside {dir}, a folder compared: name a folder of its own for the comparison"
    )]
    OutInside { out: PathBuf, dir: PathBuf },
    #[error(transparent)]
    Folder(#[from] FolderError),
}

impl CompareError {
    /// Whether the folders named are what is wrong (a usage error), not the machine.
    pub fn is_usage(&self) -> bool {
        match self {
            CompareError::Folder(e) => e.is_usage(),
            _ => true,
        }
    }
}

/// One side of a comparison: a results folder with its summary.
pub struct ComparedRun {
    /// "A" or "B".
    pub side: &'static str,
    pub dir: PathBuf,
    pub run: SavedRun,
    pub summary: RunSummary,
    /// Whether the folder had a `summary.json` (a run of one experiment has none: its
    /// summary is derived from its results).
    pub summary_saved: bool,
}

impl ComparedRun {
    /// The results folder `dir` as side `side`; an error naming what is missing or
    /// unreadable.
    pub fn load(side: &'static str, dir: &Path) -> Result<ComparedRun, CompareError> {
        match std::fs::metadata(dir) {
            Err(_) => return Err(CompareError::Missing(dir.to_owned())),
            Ok(m) if !m.is_dir() => return Err(CompareError::NotAFolder(dir.to_owned())),
            Ok(_) => {}
        }
        let mut run = SavedRun::load(dir)?;
        let saved = run.summary.take();
        let summary_saved = saved.is_some();
        let summary = match saved {
            Some(s) => s,
            None => summarize(&run, RunStatus::default())
                .expect("a loaded folder holds a result to name its device"),
        };
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

    /// "incomplete run (stopped by SIGINT; not run or not finished: …)", or `None` for a
    /// complete one.
    pub fn incomplete(&self) -> Option<String> {
        let s = &self.summary;
        if s.complete {
            return None;
        }
        let mut parts = Vec::new();
        if let Some(signal) = &s.interrupted_by {
            parts.push(format!("stopped by {signal}"));
        }
        if !s.steps_not_run.is_empty() {
            parts.push(format!(
                "not run or not finished: {}",
                s.steps_not_run.join(", ")
            ));
        }
        Some(if parts.is_empty() {
            "incomplete run".to_owned()
        } else {
            format!("incomplete run ({})", parts.join("; "))
        })
    }
}

/// Where `compare A B` writes when `--out` is not given: `<A>-vs-<B>` beside A, A and B
/// being the folders' names (`docs/results/h100` against `docs/results/h200` writes
/// `docs/results/h100-vs-h200`).
pub fn default_out(a: &ComparedRun, b: &ComparedRun) -> PathBuf {
    let name = format!("{}-vs-{}", a.name(), b.name());
    let absolute = a.dir.canonicalize().unwrap_or_else(|_| a.dir.clone());
    match (a.dir.parent(), absolute.parent()) {
        (Some(p), _) if !p.as_os_str().is_empty() && a.dir.file_name().is_some() => p.join(name),
        (_, Some(p)) => p.join(name),
        _ => PathBuf::from(name),
    }
}

/// One measured row both folders hold, judged.
#[derive(Debug, Clone)]
pub struct ComparedRow {
    pub set: KernelSet,
    /// Whether its work crosses the host link ([`MeasuredRow::over_link`]).
    pub over_link: bool,
    pub key: String,
    pub label: String,
    pub unit: &'static str,
    pub a: f64,
    pub b: f64,
    pub noise_a: Option<f64>,
    pub noise_b: Option<f64>,
    pub judged: Judged,
}

/// A table whose rows may each carry a verdict (a change shown bold in Markdown,
/// coloured and classed in HTML, with the same text in both).
#[derive(Debug, Clone, PartialEq)]
pub struct MarkedTable {
    pub table: Table,
    /// One per row of `table`.
    pub verdicts: Vec<Option<Verdict>>,
}

impl MarkedTable {
    fn new(caption: String, header: &[&str]) -> MarkedTable {
        MarkedTable {
            table: Table::new(Some(caption), header),
            verdicts: Vec::new(),
        }
    }

    fn push(&mut self, row: Vec<String>, verdict: Option<Verdict>) {
        self.table.rows.push(row);
        self.verdicts.push(verdict);
    }
}

/// One experiment both folders hold.
pub struct ComparedSection {
    pub name: &'static str,
    /// What differs in how it ran, and what only one side measured.
    pub notes: Vec<(String, String)>,
    pub tables: Vec<MarkedTable>,
    pub figures: Vec<Figure>,
    /// Every measured row both sides hold, judged.
    pub rows: Vec<ComparedRow>,
}

impl ComparedSection {
    /// How many of its rows got `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.rows
            .iter()
            .filter(|r| r.judged.verdict == verdict)
            .count()
    }

    /// "3 of 16 rows changed (1 faster, 2 slower), 10 the same, 3 too noisy to say".
    pub fn summary_line(&self) -> String {
        let (faster, slower) = (self.count(Verdict::Faster), self.count(Verdict::Slower));
        let mut line = format!(
            "{} of {} rows changed ({faster} faster, {slower} slower), {} the same, {} too noisy to say",
            faster + slower,
            self.rows.len(),
            self.count(Verdict::Same),
            self.count(Verdict::TooNoisy)
        );
        let not = self.count(Verdict::NotComparable);
        if not > 0 {
            line += &format!(", {not} without a ratio");
        }
        line
    }
}

/// The whole comparison.
pub struct Comparison {
    pub title: String,
    /// One line per incomplete run.
    pub banners: Vec<String>,
    /// Label, A, B.
    pub header: Table,
    /// Experiments only one folder holds: by side ("A" or "B"), with the side's heading.
    pub only: Vec<OnlyIn>,
    pub sections: Vec<ComparedSection>,
    /// The rule every row was judged by.
    pub rule: Rule,
    /// What `comparison.json` names each side by.
    pub sides: [SideFacts; 2],
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

/// A value with four significant digits, "–" when not finite.
pub fn significant(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let digits = 3 - x.abs().log10().floor() as i64;
    num(x, digits.clamp(0, 9) as usize)
}

/// B over A with three decimals, "–" where there is none.
fn ratio(a: f64, b: f64) -> String {
    if a == 0.0 {
        "–".into()
    } else {
        num(b / a, 3)
    }
}

/// Each leaf of `value` by its path, e.g. `ms_by_streams[3]`, in order.
fn leaves(prefix: &str, value: &Json, out: &mut Vec<(String, Json)>) {
    match value {
        Json::Object(entries) => {
            for (k, v) in &entries.0 {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(&path, v, out);
            }
        }
        Json::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                leaves(&format!("{prefix}[{i}]"), v, out);
            }
        }
        other => out.push((prefix.to_owned(), other.clone())),
    }
}

fn leaf_text(value: &Json) -> String {
    match value {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) if n.is_f64() => n.as_f64().map_or_else(|| n.to_string(), significant),
        Json::Number(n) => n.to_string(),
        Json::String(s) => s.clone(),
        Json::Array(_) => "[]".into(),
        Json::Object(_) => "{}".into(),
    }
}

fn number(value: &Json) -> Option<f64> {
    match value {
        Json::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// The union of two lists of keyed items, A's order first: each key with A's and B's.
fn paired<'a, T>(
    a: &'a [(String, T)],
    b: &'a [(String, T)],
) -> Vec<(&'a str, Option<&'a T>, Option<&'a T>)> {
    let find = |list: &'a [(String, T)], key: &str| list.iter().find(|(k, _)| k == key);
    let mut out: Vec<_> = (a.iter())
        .map(|(k, v)| (k.as_str(), Some(v), find(b, k).map(|(_, w)| w)))
        .collect();
    out.extend(
        (b.iter())
            .filter(|(k, _)| find(a, k).is_none())
            .map(|(k, w)| (k.as_str(), None, Some(w))),
    );
    out
}

/// The headline table: each leaf of the two headlines (and facts) side by side. Headline
/// figures carry no samples, so they get no verdict: their rows below do.
fn headline_table(
    caption: String,
    heads: (&str, &str),
    a: &[(String, Json)],
    b: &[(String, Json)],
) -> MarkedTable {
    let mut t = MarkedTable::new(caption, &["figure", heads.0, heads.1, "B/A", "note"]);
    for (key, va, vb) in paired(a, b) {
        let text = |v: Option<&Json>| v.map_or("–".to_owned(), leaf_text);
        let (ratio, note) = match (va.and_then(number), vb.and_then(number)) {
            (Some(x), Some(y)) => (ratio(x, y), String::new()),
            _ if va.is_none() => ("–".into(), "only in B".into()),
            _ if vb.is_none() => ("–".into(), "only in A".into()),
            _ if va == vb => ("–".into(), "same".into()),
            _ => ("–".into(), "differs".into()),
        };
        t.push(vec![key.to_owned(), text(va), text(vb), ratio, note], None);
    }
    t
}

/// Experiment `E`'s headline, facts, CUDA C++ headline and Rust-over-C++ ratio from a
/// summary, as leaves.
fn headline_leaves<E: Experiment>(s: &RunSummary) -> Vec<(String, Json)> {
    let mut out = Vec::new();
    if let Some(h) = s.experiment(E::NAME) {
        leaves("", h, &mut out);
    }
    for key in E::FACTS {
        if let Some(f) = s.facts.get(key).filter(|f| !f.is_null()) {
            leaves(key, f, &mut out);
        }
    }
    let cuda = s.cuda_experiments.as_ref().and_then(|c| c.get(E::NAME));
    if let Some(h) = cuda.filter(|h| !h.is_null()) {
        leaves("CUDA C++", h, &mut out);
    }
    let ratio = (s.experiment_rust_over_cuda.as_ref()).and_then(|c| c.get(E::NAME));
    if let Some(r) = ratio.filter(|r| !r.is_null()) {
        leaves("Rust over CUDA C++, all rows", r, &mut out);
    }
    out
}

/// The parameters that differ between two results, by path: (parameter, A, B).
fn differing_params<E: Experiment>(a: &E::Result, b: &E::Result) -> Vec<(String, String, String)> {
    let as_json = |r: &E::Result| {
        serde_json::to_string(E::params(r))
            .ok()
            .and_then(|t| serde_json::from_str::<Json>(&t).ok())
            .map(|j| {
                let mut out = Vec::new();
                leaves("", &j, &mut out);
                out
            })
            .unwrap_or_default()
    };
    let (pa, pb) = (as_json(a), as_json(b));
    paired(&pa, &pb)
        .into_iter()
        .filter(|(_, x, y)| x != y)
        .map(|(k, x, y)| {
            let text = |v: Option<&Json>| v.map_or("–".to_owned(), leaf_text);
            (k.to_owned(), text(x), text(y))
        })
        .collect()
}

/// The measured rows of one kernel set side by side, each judged by `rule` (a row whose
/// work crosses the host link against at least `link_spread`, how far the link moved over
/// both runs' probes); the rows only one side has; the chart of both.
fn rows_table<E: Experiment>(
    rule: &Rule,
    link_spread: f64,
    set: KernelSet,
    heads: (&str, &str),
    a: With<'_, E>,
    b: With<'_, E>,
) -> (
    MarkedTable,
    Vec<ComparedRow>,
    Vec<(String, String)>,
    FigureModel,
) {
    let keyed = |(r, d): With<'_, E>| -> Vec<(String, MeasuredRow)> {
        (E::measured_rows(r, d).into_iter())
            .map(|row| (row.key.clone(), row))
            .collect()
    };
    let (ra, rb) = (keyed(a), keyed(b));
    let mut t = MarkedTable::new(
        format!("Measured rows, {} kernels (medians)", set.label()),
        &[
            "row", "unit", heads.0, "noise A", heads.1, "noise B", "B/A", "p", "verdict",
        ],
    );
    let noise = |n: Option<f64>| n.map_or("not measured".to_owned(), table::noise);
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    let mut shared = Vec::new();
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    for (_, x, y) in paired(&ra, &rb) {
        match (x, y) {
            (Some(x), Some(y)) => {
                let machine = if x.over_link { link_spread } else { 0.0 };
                let judged = verdict::judge(rule, measured(x), measured(y), machine);
                t.push(
                    vec![
                        x.label.clone(),
                        x.unit.to_owned(),
                        significant(x.value),
                        noise(x.noise),
                        significant(y.value),
                        noise(y.noise),
                        judged.b_over_a.map_or("–".into(), |r| num(r, 3)),
                        judged.p_value.map_or("–".into(), p_text),
                        judged.verdict.text().to_owned(),
                    ],
                    Some(judged.verdict),
                );
                rows.push(ComparedRow {
                    set,
                    over_link: x.over_link,
                    key: x.key.clone(),
                    label: x.label.clone(),
                    unit: x.unit,
                    a: x.value,
                    b: y.value,
                    noise_a: x.noise,
                    noise_b: y.noise,
                    judged,
                });
                shared.push((x, y));
            }
            (Some(x), None) => only_a.push(x.label.clone()),
            (None, Some(y)) => only_b.push(y.label.clone()),
            (None, None) => {}
        }
    }
    for (side, list) in [("A", only_a), ("B", only_b)] {
        if !list.is_empty() {
            notes.push((
                format!("Rows only in {side} ({} kernels)", set.label()),
                list.join("; "),
            ));
        }
    }
    (t, rows, notes, chart::<E>(set, heads, &shared))
}

/// A measured row as the rule sees it.
fn measured(row: &MeasuredRow) -> verdict::Measured<'_> {
    verdict::Measured {
        value: row.value,
        noise: row.noise,
        samples: &row.samples,
    }
}

/// A p-value as the tables show it: two decimals, four below 0.01, "< 0.0001" below that.
fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "< 0.0001".into()
    } else if p < 0.01 {
        format!("{p:.4}")
    } else {
        format!("{p:.2}")
    }
}

/// Both runs' rows of the first row's unit, overlaid as bars side by side; where there
/// are too many rows for bars, [`ratio_chart`].
fn chart<E: Experiment>(
    set: KernelSet,
    heads: (&str, &str),
    shared: &[(&MeasuredRow, &MeasuredRow)],
) -> FigureModel {
    if shared.len() > MAX_BARS {
        return ratio_chart::<E>(set, heads, shared);
    }
    let unit = shared
        .first()
        .map_or(crate::experiment::MS, |(x, _)| x.unit);
    let rows: Vec<_> = shared.iter().filter(|(x, _)| x.unit == unit).collect();
    let values = || rows.iter().flat_map(|(x, y)| [x.value, y.value]);
    let (lo, hi) = values()
        .filter(|v| *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let y_scale = if hi / lo > SPREAD_FOR_LOG {
        YScale::Log
    } else {
        YScale::Linear
    };
    let mut c = blank(
        format!(
            "{}: {} vs {}",
            table::heading(E::NAME, set),
            heads.0,
            heads.1
        ),
        "row",
        unit,
        XAxis::Categories(rows.iter().map(|(x, _)| x.label.clone()).collect()),
        y_scale,
    );
    let sides = [(heads.0, PALETTE[0]), (heads.1, PALETTE[1])];
    for (i, (name, color)) in sides.into_iter().enumerate() {
        let values: Vec<f64> = (rows.iter())
            .map(|(x, y)| if i == 0 { x.value } else { y.value })
            .collect();
        c.bars.push(BarSeries {
            name: name.to_owned(),
            color,
            values,
            whiskers: None,
        });
    }
    FigureModel::chart(format!("compare-{}.svg", files::stem(E::NAME, set)), c)
}

/// B/A of every row whose key is `configuration/quantity`, a line per quantity over the
/// configurations in the table's order, against a level at 1 (no change): many rows at
/// once, and each line one kind of figure, so no two are read as one. Rows without a
/// quantity in their key are in the table only.
fn ratio_chart<E: Experiment>(
    set: KernelSet,
    heads: (&str, &str),
    shared: &[(&MeasuredRow, &MeasuredRow)],
) -> FigureModel {
    // Each configuration with the words its rows' labels share, e.g. "8 streams, 64
    // cycles" of "8 streams, 64 cycles: sequential" and "…: streamed".
    let mut configurations: Vec<(&str, String)> = Vec::new();
    let mut quantities: Vec<(&str, Vec<(f64, f64)>)> = Vec::new();
    for (a, b) in shared {
        let Some((configuration, quantity)) = a.key.rsplit_once('/') else {
            continue;
        };
        let slot = match configurations.iter().position(|(c, _)| *c == configuration) {
            Some(slot) => {
                let shared = common_words(&configurations[slot].1, &a.label);
                configurations[slot].1 = shared;
                slot
            }
            None => {
                configurations.push((configuration, a.label.clone()));
                configurations.len() - 1
            }
        };
        let at = match quantities.iter().position(|(q, _)| *q == quantity) {
            Some(at) => at,
            None => {
                quantities.push((quantity, Vec::new()));
                quantities.len() - 1
            }
        };
        if a.value > 0.0 && b.value.is_finite() {
            quantities[at].1.push((slot as f64, b.value / a.value));
        }
    }
    let mut c = blank(
        format!(
            "{}: {} / {} per row",
            table::heading(E::NAME, set),
            heads.1,
            heads.0
        ),
        "configuration (in the table's order)",
        "B / A",
        XAxis::Categories(configurations.into_iter().map(|(_, label)| label).collect()),
        YScale::Linear,
    );
    for (i, (quantity, points)) in quantities.into_iter().enumerate() {
        c.lines
            .push(line(quantity, PALETTE[i % PALETTE.len()], false, points));
    }
    c.levels.push(Level {
        name: "no change".to_owned(),
        color: BOUND_COLOR,
        y: 1.0,
    });
    FigureModel::chart(format!("compare-{}.svg", files::stem(E::NAME, set)), c)
}

/// More rows than this are drawn as their ratios ([`ratio_chart`]).
const MAX_BARS: usize = 40;

/// The words `a` and `b` begin with alike, without a trailing ":" or ",".
fn common_words(a: &str, b: &str) -> String {
    let shared: Vec<&str> = (a.split(' ').zip(b.split(' ')))
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    let joined = shared.join(" ");
    let trimmed = joined.trim_end_matches([':', ',']);
    if trimmed.is_empty() {
        a.to_owned()
    } else {
        trimmed.to_owned()
    }
}
/// Values spreading over more than this factor get a log axis.
const SPREAD_FOR_LOG: f64 = 30.0;

/// Experiment `E` compared by `rule`, if both folders hold it.
fn section<E: Experiment>(
    rule: &Rule,
    a: &ComparedRun,
    b: &ComparedRun,
) -> Option<ComparedSection> {
    let heads = (a.heading(), b.heading());
    let heads = (heads.0.as_str(), heads.1.as_str());
    let mut sec = ComparedSection {
        name: E::NAME,
        notes: Vec::new(),
        tables: vec![headline_table(
            "Headline (summary.json; no samples, so no verdict: see the rows)".into(),
            heads,
            &headline_leaves::<E>(&a.summary),
            &headline_leaves::<E>(&b.summary),
        )],
        figures: Vec::new(),
        rows: Vec::new(),
    };
    let mut any = false;
    for &set in sets::<E>() {
        let (x, y) = (a.run.with::<E>(set), b.run.with::<E>(set));
        let ((x, x_derived), (y, y_derived)) = match (x, y) {
            (Some(x), Some(y)) => (x, y),
            (None, None) => continue,
            (x, _) => {
                let side = if x.is_some() { "A" } else { "B" };
                sec.notes.push((
                    format!("{} kernels", set.label()),
                    format!("measured only in {side}"),
                ));
                continue;
            }
        };
        any = true;
        if set == KernelSet::Rust || a.run.get::<E>(KernelSet::Rust).is_none() {
            let differ = differing_params::<E>(x, y);
            if !differ.is_empty() {
                let mut t = MarkedTable::new(
                    "Parameters that differ".into(),
                    &["parameter", heads.0, heads.1],
                );
                for (k, va, vb) in differ {
                    t.push(vec![k, va, vb], None);
                }
                sec.tables.push(t);
            }
        }
        for (side, r) in [("A", x), ("B", y)] {
            let p = E::provenance(r);
            if !p.complete {
                sec.notes.push((
                    format!("Incomplete in {side}"),
                    format!(
                        "the {} kernels' result stopped before every configuration was measured",
                        set.label()
                    ),
                ));
            }
            if !E::verification(r).passed {
                sec.notes.push((
                    format!("Verification FAILED in {side}"),
                    E::verification(r).detail.clone(),
                ));
            }
            if let Some(link) = table::link(p).filter(|_| set == KernelSet::Rust) {
                sec.notes.push((format!("Link in {side}"), link));
            }
        }
        let probes = [x, y].map(|r| E::provenance(r).link.as_ref());
        let spread = link_spread(probes.into_iter().flatten());
        let (t, rows, notes, figure) = rows_table::<E>(
            rule,
            spread.unwrap_or(0.0),
            set,
            heads,
            (x, x_derived),
            (y, y_derived),
        );
        let crossing = rows.iter().filter(|r| r.over_link).count();
        if let Some(moved) = spread.filter(|m| *m > rule.min_change && crossing > 0) {
            sec.notes.push((
                format!("Link ({} kernels)", set.label()),
                format!(
                    "the link's both-ways rate moved by {} over the two runs' probes of this experiment, so each of the {crossing} rows whose work crosses it is called changed only beyond that",
                    verdict::percent(moved)
                ),
            ));
        }
        if !t.table.rows.is_empty() {
            sec.tables.push(t);
            sec.figures.push(Figure::draw(figure));
        }
        sec.rows.extend(rows);
        sec.notes.extend(notes);
    }
    any.then_some(sec)
}

/// The header: each side's folder, run status, device and provenance.
fn header(a: &ComparedRun, b: &ComparedRun) -> Table {
    let mut t = Table::new(None, &["", &a.heading(), &b.heading()]);
    let facts = |r: &ComparedRun| -> Vec<(&'static str, String)> {
        let (d, p) = (&r.summary.device, &r.summary.provenance);
        let link = p.link.as_ref().map(link_moved);
        let fastest = p.fastest_link.as_ref();
        let mut facts = vec![
            ("Folder", r.dir.display().to_string()),
            (
                "Run",
                r.incomplete().unwrap_or_else(|| "complete".to_owned()),
            ),
            (
                "summary.json",
                if r.summary_saved {
                    "saved by the run".to_owned()
                } else {
                    "none (derived from the results)".to_owned()
                },
            ),
            ("GPU", d.name.clone()),
            (
                "Compute capability",
                format!("{}.{}", d.compute_capability.0, d.compute_capability.1),
            ),
            ("SMs", d.sm_count.to_string()),
            ("Copy engines", d.copy_engines.to_string()),
            (
                "Memory",
                format!(
                    "{:.1} GiB",
                    d.total_memory_bytes as f64 / (1u64 << 30) as f64
                ),
            ),
            ("CUDA version of the driver", d.driver_cuda_version.clone()),
            (
                "PCIe link",
                d.pcie_link.clone().unwrap_or_else(|| "–".into()),
            ),
            (
                "Link both ways, before → after (first experiment, probes' medians)",
                link.map_or("–".into(), |(before, after, moved)| {
                    format!(
                        "{before:.1} → {after:.1} GB/s (moved {:.1}%)",
                        100.0 * moved
                    )
                }),
            ),
            (
                "Fastest copies (HtoD, DtoH, both ways)",
                fastest.map_or("–".into(), |f| {
                    format!(
                        "{:.1}, {:.1}, {:.1} GB/s",
                        f.htod_gbps, f.dtoh_gbps, f.both_gbps
                    )
                }),
            ),
            ("streamlab", p.streamlab_version.clone()),
            ("Started (UTC)", p.started_utc.clone()),
            ("Rust PTX target", p.ptx_target.clone()),
            ("Kernel form", p.form.label().to_owned()),
        ];
        facts.extend(table::build_facts(p));
        facts
    };
    for ((label, x), (_, y)) in facts(a).into_iter().zip(facts(b)) {
        t.rows.push(vec![label.to_owned(), x, y]);
    }
    t
}

/// The comparison of `a` with `b`, every row judged by `rule`.
pub fn compare(a: &ComparedRun, b: &ComparedRun, rule: Rule) -> Comparison {
    struct Sections<'a> {
        rule: Rule,
        a: &'a ComparedRun,
        b: &'a ComparedRun,
        sections: Vec<ComparedSection>,
        only_a: Vec<&'static str>,
        only_b: Vec<&'static str>,
    }
    impl Visit for Sections<'_> {
        fn visit<E: Experiment>(&mut self) {
            let holds = |r: &ComparedRun| sets::<E>().iter().any(|&s| r.run.get::<E>(s).is_some());
            match (holds(self.a), holds(self.b)) {
                (true, false) => self.only_a.push(E::NAME),
                (false, true) => self.only_b.push(E::NAME),
                _ => self
                    .sections
                    .extend(section::<E>(&self.rule, self.a, self.b)),
            }
        }
    }
    let mut s = Sections {
        rule,
        a,
        b,
        sections: Vec::new(),
        only_a: Vec::new(),
        only_b: Vec::new(),
    };
    experiments::each(&mut s);
    let banners = [a, b]
        .iter()
        .filter_map(|r| r.incomplete().map(|i| format!("{}: {i}", r.heading())))
        .collect();
    let only = [(a, s.only_a), (b, s.only_b)]
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
        sections: s.sections,
        rule,
        sides: [side(a), side(b)],
    }
}

/// Compare the results folders `a` and `b` by `rule` and write the report into `out`
/// (`None`: [`default_out`]): `report.md`, `report.html`, `comparison.json` and a chart
/// per experiment. Both folders are read before anything is written, and `out` is
/// replaced whole once everything is. Returns the folder written.
pub fn write(a: &Path, b: &Path, out: Option<&Path>, rule: Rule) -> Result<PathBuf, CompareError> {
    let canonical = |p: &Path| p.canonicalize().ok();
    if canonical(a).is_some() && canonical(a) == canonical(b) {
        return Err(CompareError::SameFolder(a.to_owned()));
    }
    let (a, b) = (ComparedRun::load("A", a)?, ComparedRun::load("B", b)?);
    let out = out.map_or_else(|| default_out(&a, &b), Path::to_owned);
    // The output is a folder of its own: never one of the folders read, nor inside one.
    let inside = |run: &ComparedRun| {
        let base = canonical(&run.dir)?;
        let mut at = out.clone();
        // The output may not exist yet: judge by its nearest existing ancestor.
        loop {
            if let Some(c) = canonical(&at) {
                let within = c.starts_with(&base);
                return within.then_some(run.dir.clone());
            }
            at = at.parent()?.to_owned();
            if at.as_os_str().is_empty() {
                at = PathBuf::from(".");
            }
        }
    };
    if let Some(dir) = inside(&a).or_else(|| inside(&b)) {
        return Err(CompareError::OutInside { out, dir });
    }
    let outputs = render::files(&compare(&a, &b, rule));
    let mut staged = folder::Staged::begin(&out, held, false)?;
    for (name, contents) in &outputs {
        staged.write(name, contents.as_bytes())?;
    }
    Ok(staged.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn headline_leaves_pair_by_path_and_say_what_only_one_has() {
        let parse = |t: &str| serde_json::from_str::<Json>(t).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        leaves(
            "",
            &parse(r#"{"x": 2.0, "v": [1.0, 2.0], "s": "p", "only": 1}"#),
            &mut a,
        );
        leaves(
            "",
            &parse(r#"{"x": 3.0, "v": [1.0, 2.0], "s": "q"}"#),
            &mut b,
        );
        let t = headline_table("h".into(), ("A", "B"), &a, &b);
        let rows: Vec<Vec<&str>> = (t.table.rows.iter())
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(rows[0], ["x", "2.000", "3.000", "1.500", ""]);
        assert_eq!(rows[1][0], "v[0]");
        assert_eq!(rows[3], ["s", "p", "q", "–", "differs"]);
        assert_eq!(rows[4], ["only", "1", "–", "–", "only in A"]);
        assert!(t.verdicts.iter().all(Option::is_none));
    }
}
