//! One experiment, as every generic part of the house sees it: what it saves (its
//! parameters and result), what it derives, how it shows (tables, CSV, report section)
//! and what it puts in `summary.json`. Each experiment implements this once, in its own
//! module under [`crate::experiments`]; the results folder, the summary, the printed
//! tables and the report only ever go through this trait and the registry.
use crate::derived::summary::Json;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::report::ReportError;
use crate::report::section::{self, Section, TimelineFigure};
use crate::report::table::Table;
use crate::saved::timeline::Timeline;
use crate::saved::{DeviceInfo, KernelSet, Params, Provenance, StageTimes, Verification, files};
use crate::stats::Series;

/// One experiment.
pub trait Experiment: 'static {
    /// The subcommand, and the stem of the experiment's files.
    const NAME: &'static str;
    /// Whether it runs the project's kernels, so `--kernels` and `--form` apply and the
    /// CUDA C++ twins' result sits beside the Rust one.
    const USES_KERNEL_SETS: bool;
    type Params: Params;
    type Result: Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + Sync + 'static;
    /// Every number derived from a result, saved beside it in its JSON.
    type Derived: Serialize + Clone + std::fmt::Debug;

    fn params(result: &Self::Result) -> &Self::Params;
    fn device(result: &Self::Result) -> &DeviceInfo;
    fn provenance(result: &Self::Result) -> &Provenance;
    fn provenance_mut(result: &mut Self::Result) -> &mut Provenance;
    fn verification(result: &Self::Result) -> &Verification;
    /// The traced timelines, each held to the trace checks.
    fn timelines(_result: &Self::Result) -> Vec<&Timeline> {
        Vec::new()
    }
    /// The copy (and kernel) stage samples it took: with the traced copies, where the
    /// run's fastest copy rates come from.
    fn stage_times(_result: &Self::Result) -> Vec<&StageTimes> {
        Vec::new()
    }
    /// An empty kernel's launch, where it probes one: what `compare` holds the rows a
    /// host's launching bounds against ([`RowControl::Launch`]).
    fn launch_probe(_result: &Self::Result) -> Option<&Series> {
        None
    }

    /// Every number derived from `result`: computed once for each result a run holds
    /// ([`crate::run::SavedRun`]) and handed to every hook below.
    fn derive(result: &Self::Result) -> Self::Derived;

    /// Its tables, printed after it runs and shown in the report; `cuda` is the CUDA C++
    /// twins' result with its derived numbers, shown beside the Rust one where both ran.
    fn tables(
        result: &Self::Result,
        derived: &Self::Derived,
        cuda: Option<With<'_, Self>>,
    ) -> Vec<Table>;
    /// Its CSV, if it writes one.
    fn csv(_result: &Self::Result, _derived: &Self::Derived) -> Option<String> {
        None
    }
    /// A second CSV beside it, `<stem>-<suffix>.csv`, where the first keeps a write-up's
    /// own format (matmul-streams' trials): `(suffix, contents)`.
    fn csv_beside(
        _result: &Self::Result,
        _derived: &Self::Derived,
    ) -> Option<(&'static str, String)> {
        None
    }
    /// Its section of the report: what it measures, its tables, bounds, charts and
    /// timelines.
    fn section(
        result: &Self::Result,
        derived: &Self::Derived,
        cuda: Option<With<'_, Self>>,
    ) -> Result<Section, ReportError>;

    /// Its headline under `summary.json`'s `experiments` (and `cuda_experiments`); `None`
    /// for one without a headline there.
    fn summary(_result: &Self::Result, _derived: &Self::Derived) -> Option<Json> {
        None
    }
    /// The line `run-all` prints for that headline.
    fn headline(_summary: &Json) -> Option<String> {
        None
    }
    /// The keys it adds at the top level of `summary.json` (`null` when it did not run).
    const FACTS: &'static [&'static str] = &[];
    /// Their values, in the order of [`Experiment::FACTS`].
    fn facts(_result: &Self::Result, _derived: &Self::Derived) -> Vec<Json> {
        Vec::new()
    }
    /// The lines `run-all` prints for those facts, labelled.
    fn fact_lines(_facts: &[&Json]) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Every number it measured, one row per configuration and quantity, each with its
    /// noise: what `compare` sets side by side, and, for an experiment run with both
    /// kernel sets, what `summary.json`'s `experiment_rust_over_cuda` sums over the rows
    /// both measured.
    fn measured_rows(result: &Self::Result, derived: &Self::Derived) -> Vec<MeasuredRow>;
}

/// A result of experiment `E` with the numbers derived from it.
pub type With<'a, E> = (
    &'a <E as Experiment>::Result,
    &'a <E as Experiment>::Derived,
);

/// The accessors every experiment's `impl Experiment` has ([`Experiment::params`] and
/// the result's device, provenance and verification), for a result whose fields are named
/// `params`, `device`, `provenance` and `verification`, as every one's is.
macro_rules! result_fields {
    () => {
        fn params(result: &Self::Result) -> &Self::Params {
            &result.params
        }
        fn device(result: &Self::Result) -> &$crate::saved::DeviceInfo {
            &result.device
        }
        fn provenance(result: &Self::Result) -> &$crate::saved::Provenance {
            &result.provenance
        }
        fn provenance_mut(result: &mut Self::Result) -> &mut $crate::saved::Provenance {
            &mut result.provenance
        }
        fn verification(result: &Self::Result) -> &$crate::saved::Verification {
            &result.verification
        }
    };
}
pub(crate) use result_fields;

/// One measured number of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredRow {
    /// Names the configuration and quantity, the same in every run that measured it,
    /// e.g. "async2/4": short enough for a chart's axis.
    pub key: String,
    /// The same in words, e.g. "asynchronous 2 with 4 streams".
    pub label: String,
    pub value: f64,
    /// The unit of `value`: [`MS`] or [`US`].
    pub unit: &'static str,
    /// The relative noise of the samples behind `value` ([`Series::measured_noise`]);
    /// `None` where they cannot show one.
    pub noise: Option<f64>,
    /// The samples `value` is the median of, in `unit`: what `compare` ranks.
    pub samples: Vec<f64>,
    /// Whether its work moves data over the host link, whose rate a shared machine's
    /// other traffic moves: without a twin, `compare` holds it against the link's probes
    /// of the same run (`crate::compare::rows`).
    pub over_link: bool,
    /// What else of its own run it is held against, to tell the machine from the code
    /// (besides a twin and the link, which `compare` finds by itself).
    pub control: Option<RowControl>,
}

/// A control a row names for itself (see [`MeasuredRow::control`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RowControl {
    /// Another row of the same result, by key: compare-kernels' Rust row against its
    /// C++ twin's.
    Row(String),
    /// An empty kernel's launch, as the run's `bounds` probe measured it: a row the host's
    /// launching bounds.
    Launch,
}

/// Milliseconds.
pub const MS: &str = "ms";
/// Microseconds.
pub const US: &str = "µs";

impl MeasuredRow {
    /// The median of `series` (in `unit`) with its noise.
    pub fn median(
        key: impl Into<String>,
        label: impl Into<String>,
        series: &Series,
        unit: &'static str,
    ) -> MeasuredRow {
        MeasuredRow {
            key: key.into(),
            label: label.into(),
            value: series.median(),
            unit,
            noise: series.measured_noise(),
            samples: series.samples_ms.clone(),
            over_link: false,
            control: None,
        }
    }

    /// The same row, marked as moving data over the host link.
    pub fn over_link(self) -> MeasuredRow {
        MeasuredRow {
            over_link: true,
            ..self
        }
    }

    /// The same row, held against `control` of its own run.
    pub fn controlled_by(self, control: RowControl) -> MeasuredRow {
        MeasuredRow {
            control: Some(control),
            ..self
        }
    }
}

/// The section of experiment `E`'s `result`, titled `title`, saying what it measures in
/// `about` ([`Section::new`]).
pub fn section<E: Experiment>(title: &str, about: &str, result: &E::Result) -> Section {
    Section::new(
        E::NAME,
        title,
        about,
        E::params(result),
        E::provenance(result),
        E::verification(result),
    )
}

/// The timeline figures of experiment `E`'s `result` measured with `set`.
pub fn timelines<E: Experiment>(
    result: &E::Result,
    set: KernelSet,
) -> Result<Vec<TimelineFigure>, ReportError> {
    section::timelines(&E::timelines(result), &files::stem(E::NAME, set), set)
}

/// An experiment's headline as stored in `summary.json`, parsed back.
pub fn parse<T: DeserializeOwned>(value: &Json) -> Option<T> {
    serde_json::to_string(value)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
}

/// `value` as JSON, its fields in their order; every headline and fact serialises.
pub fn json<T: Serialize>(value: &T) -> Json {
    serde_json::to_string(value)
        .and_then(|text| serde_json::from_str(&text))
        .expect("a headline serialises to JSON")
}

/// "verified" or "FAILED", as the headlines end.
pub fn verdict(verified: bool) -> &'static str {
    if verified { "verified" } else { "FAILED" }
}
