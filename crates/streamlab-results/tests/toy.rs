//! A toy experiment, written as `docs/architecture.md` says a results module is written,
//! held to the house's protocol without a GPU: a run records each result once (derived
//! and summarized once, however many tables, files, charts and summaries read it), writes
//! its JSON, CSV, section and summary line, reads its JSON back to the same result, and
//! sets two runs' rows side by side in `compare`.
use std::cell::Cell;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use streamlab_results::compare::{self, ComparedRun};
use streamlab_results::derived::summary::RunStatus;
use streamlab_results::derived::trace::TraceChecks;
use streamlab_results::experiment::{
    Csv, Experiment, MS, MeasuredRow, RowName, Saved, Summary, With,
};
use streamlab_results::held::Results;
use streamlab_results::report::table::{Columns, Table};
use streamlab_results::run::SavedRun;
use streamlab_results::run::recorder::Recorder;
use streamlab_results::saved::RunRecord;
use streamlab_results::saved::{self, KernelSet};
use streamlab_results::stats::Series;

// The toy experiment, as a results module holds one: its parameters, its result and its
// `Experiment`. Beside its own logic (the rate, its row, its table, its words) and the two
// counters these tests read, what is left is the glue every experiment writes.

/// What `toy` measures.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct Params {
    /// Bytes per copy.
    #[arg(long, default_value_t = 1 << 20)]
    pub bytes: u64,
}

impl Default for Params {
    fn default() -> Params {
        saved::clap_defaults()
    }
}

impl saved::Params for Params {
    const QUICK: &'static str = "--bytes 4096";
}

/// Result of `toy`: one copy's times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToyResult {
    #[serde(flatten)]
    pub run: RunRecord<Params>,
    pub copy: Series,
}

impl Saved for ToyResult {
    streamlab_results::saved_fields!(Params);
}

/// The toy experiment.
pub struct Toy;

impl Experiment for Toy {
    const NAME: &'static str = "toy";
    const WORDS: &'static str = "# Toy: one copy\n\nOne copy timed with events.\n\n## @line\none copy at {{ h | fixed(1) }} GB/s";
    type Params = Params;
    type Result = ToyResult;
    type Derived = f64;

    fn derive(r: &ToyResult, _checks: &[TraceChecks]) -> f64 {
        DERIVED.set(DERIVED.get() + 1);
        r.run.params.bytes as f64 / (r.copy.median() * 1e6)
    }
    fn rows(r: &ToyResult, gbps: &f64) -> Vec<MeasuredRow> {
        columns(*gbps).measured_rows(&[r])
    }
    fn summary(_r: &ToyResult, gbps: &f64) -> Summary {
        SUMMARIZED.set(SUMMARIZED.get() + 1);
        Summary::of(gbps)
    }
    fn tables(r: &ToyResult, gbps: &f64, _cuda: Option<With<'_, Toy>>) -> Vec<Table> {
        vec![columns(*gbps).table(None, &[r])]
    }
    fn csv(r: &ToyResult, gbps: &f64) -> Vec<Csv> {
        vec![Csv::main(columns(*gbps).csv(&[r]))]
    }
}

/// The toy's one declaration of its table, its CSV and its measured row.
fn columns<'a>(gbps: f64) -> Columns<'a, &'a ToyResult> {
    Columns::new()
        .named(
            |_: &&ToyResult| RowName::new("copy", "one copy"),
            |_, _, row| row.over_link(),
        )
        .median(("median", "median_ms"), (3, 6), (None, MS), |r| {
            Some(&r.copy)
        })
        .number("GB/s", "gbps", (1, 3), move |_| gbps)
}

thread_local! {
    static DERIVED: Cell<usize> = const { Cell::new(0) };
    static SUMMARIZED: Cell<usize> = const { Cell::new(0) };
}

/// A toy result of one copy over `samples_ms`.
fn result(samples_ms: &[f64]) -> ToyResult {
    let json = include_str!("runs/h200-2026-11-25-2255/bounds.json");
    let bounds: serde_json::Value = serde_json::from_str(json).unwrap();
    ToyResult {
        run: RunRecord {
            params: Params::default(),
            device: serde_json::from_value(bounds["device"].clone()).unwrap(),
            provenance: serde_json::from_value(bounds["provenance"].clone()).unwrap(),
            verification: serde_json::from_value(bounds["verification"].clone()).unwrap(),
        },
        copy: Series::new(samples_ms.to_vec()).unwrap(),
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("streamlab-toy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A run of the toy recorded into `dir`, as `run-all` records one: the run, from memory.
fn recorded(dir: &Path, samples_ms: &[f64]) -> SavedRun {
    let mut recorder = Recorder::new(dir);
    recorder
        .record::<Toy>(vec![(KernelSet::Rust, result(samples_ms))])
        .unwrap();
    recorder.finish(Some(RunStatus::default())).unwrap().0
}

#[test]
fn a_run_derives_and_summarizes_each_result_once_and_writes_all_it_shows() {
    let dir = scratch("record");
    DERIVED.set(0);
    SUMMARIZED.set(0);
    let run = recorded(&dir, &[0.05, 0.051, 0.049, 0.05, 0.052]);
    assert_eq!((DERIVED.get(), SUMMARIZED.get()), (1, 1));
    for file in [
        "toy.json",
        "toy.csv",
        "summary.json",
        "report.md",
        "report.html",
        "toy.md",
        "toy.html",
    ] {
        assert!(dir.join(file).exists(), "{file} is not written");
    }
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(summary.contains("\"toy\""), "{summary}");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("[Toy: one copy](toy.md)"), "{report}");
    let page = std::fs::read_to_string(dir.join("toy.md")).unwrap();
    assert!(page.starts_with("# Toy: one copy") && page.contains("one copy at 21.0 GB/s"));
    // Everything above read the one analysis: nothing was derived again.
    assert_eq!((DERIVED.get(), SUMMARIZED.get()), (1, 1));
    assert_eq!(run.analyses().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_toys_json_reads_back_to_the_same_result() {
    let dir = scratch("round-trip");
    let samples = [0.05, 0.051, 0.049];
    recorded(&dir, &samples);
    let back = Results::<Toy>::load(&dir)
        .unwrap()
        .expect("toy.json is read");
    assert_eq!(
        back.rust.expect("a Rust kernels' result").result,
        result(&samples)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_sets_two_runs_of_the_toy_side_by_side() {
    let (a_dir, b_dir) = (scratch("a"), scratch("b"));
    let side = |side, dir: &Path, samples: &[f64]| {
        let run = recorded(dir, samples);
        ComparedRun {
            side,
            dir: dir.to_owned(),
            summary: run.summary.clone().unwrap(),
            summary_saved: true,
            run,
        }
    };
    let a = side("A", &a_dir, &[0.05, 0.0501, 0.0499, 0.05, 0.0502]);
    let b = side("B", &b_dir, &[0.10, 0.1001, 0.0999, 0.10, 0.1002]);
    let c = compare::compare(&a, &b, 0.0);
    let toy = c
        .sections
        .iter()
        .find(|s| s.name == "toy")
        .expect("the toy is compared");
    assert_eq!(toy.rows.len(), 1);
    assert!((toy.rows[0].row.raw.unwrap().b_over_a - 2.0).abs() < 1e-3);
    assert!(
        toy.headlines
            .iter()
            .any(|(_, x, y)| x.contains("GB/s") && y.contains("GB/s"))
    );
    for dir in [a_dir, b_dir] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}
