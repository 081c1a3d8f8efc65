//! One experiment, as every generic part of the house sees it: what it saves (its
//! parameters and result, [`Saved`]), what it derives, how it shows (tables, CSV, report
//! section) and what it puts in `summary.json`. Each experiment implements
//! [`Experiment`] once, in its own module under [`crate::experiments`].
//!
//! A result is analysed once, when it is made or read ([`Analyzed::new`]): its derived
//! numbers, its trace checks, its measured rows and its summary are computed there and
//! nowhere else, and the generic parts (the results folder, the printed tables, the
//! report, `summary.json`, `compare`) read them from its [`Analysis`].
pub use minijinja::context;
pub use minijinja::value::{Serde, Value};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::derived::rates::fastest_link;
use crate::derived::summary::Json;
use crate::derived::trace::{self, TraceChecks};
use crate::report::ReportError;
use crate::report::figures::FigureModel;
use crate::report::section::{
    Figure, Section, TimelineFigure, cuda_note, machine_notes, parameters,
};
use crate::report::table::Table;
pub use crate::report::words::verdict;
use crate::report::words::{self, Words};
use crate::saved::timeline::Timeline;
use crate::saved::{
    DeviceInfo, KernelSet, LinkRates, Params, Provenance, RunRecord, StageTimes, Verification,
    files,
};
use crate::stats::Series;

pub use crate::measured::{MS, MeasuredRow, RowControl, RowName, US};
pub use crate::report::document::Question;

/// One experiment.
pub trait Experiment: Sized + 'static {
    /// The subcommand, and the stem of the experiment's files.
    const NAME: &'static str;
    /// Whether it runs the project's kernels, so `--kernels` and `--form` apply and the
    /// CUDA C++ twins' result sits beside the Rust one.
    const USES_KERNEL_SETS: bool = false;
    /// Its section's words: a Markdown template beside its code ([`words`]).
    const WORDS: &'static str;
    type Params: Params;
    type Result: Saved<Params = Self::Params>;
    /// Every number derived from a result, saved beside it in its JSON.
    type Derived: Serialize + std::fmt::Debug + Send + Sync;

    /// Every number derived from `result`, whose traced timelines' checks are `checks`
    /// (in the order of [`Saved::timelines`]).
    fn derive(result: &Self::Result, checks: &[TraceChecks]) -> Self::Derived;
    /// Every number it measured, one row per configuration and quantity, each with its
    /// noise: what `compare` sets side by side, and, for an experiment run with both
    /// kernel sets, what `summary.json`'s `experiment_rust_over_cuda` sums over the rows
    /// both measured.
    fn rows(result: &Self::Result, derived: &Self::Derived) -> Vec<MeasuredRow>;
    /// Its headline and facts in `summary.json`, and where it stands against its bound.
    /// Its sentences (the line `run-all` prints, its finding, its result and its answer)
    /// are its words' template's `## @line`, `@finding`, `@result` and `@answer`, rendered
    /// with the headline as `h`.
    fn summary(_result: &Self::Result, _derived: &Self::Derived) -> Summary {
        Summary::default()
    }
    /// The keys its facts take at the top level of `summary.json` (`null` when it did not
    /// run), in the order of [`Summary::facts`].
    const FACTS: &'static [&'static str] = &[];
    /// The question its words' `## @answer` answers.
    const QUESTION: Option<Question> = None;
    /// Its tables, printed after it runs and shown in the report; `cuda` is the CUDA C++
    /// twins' result with its derived numbers, shown beside the Rust one where both ran.
    fn tables(
        result: &Self::Result,
        derived: &Self::Derived,
        cuda: Option<With<'_, Self>>,
    ) -> Vec<Table>;
    /// Its CSV files: the first `<stem>.csv`, any other `<stem>-<suffix>.csv`.
    fn csv(_result: &Self::Result, _derived: &Self::Derived) -> Vec<Csv> {
        Vec::new()
    }
    /// What its words' template reads besides its derived numbers (`a`) and parameters
    /// (`p`): the sentences whose shape depends on the data, and values of the result.
    fn words(_result: &Self::Result, _derived: &Self::Derived) -> Value {
        context! {}
    }
    /// Its charts.
    fn figures(_result: &Self::Result, _derived: &Self::Derived) -> Vec<FigureModel> {
        Vec::new()
    }
    /// Its section of the report ([`Analyzed::section`]), which an experiment adds to
    /// where its words or timelines need more; `cuda` as for [`Experiment::tables`]. A
    /// section that sets no tables of its own shows [`Experiment::tables`].
    fn section(
        rust: &Analyzed<Self>,
        cuda: Option<&Analyzed<Self>>,
    ) -> Result<Section, ReportError> {
        rust.section(cuda)
    }
}

/// What every saved result holds and says of itself.
pub trait Saved:
    Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + Sync + 'static
{
    type Params: Params;
    /// What it records of its run (its field `run`, as every result's is:
    /// [`saved_fields`]).
    fn run(&self) -> &RunRecord<Self::Params>;
    fn run_mut(&mut self) -> &mut RunRecord<Self::Params>;
    fn params(&self) -> &Self::Params {
        &self.run().params
    }
    fn device(&self) -> &DeviceInfo {
        &self.run().device
    }
    fn provenance(&self) -> &Provenance {
        &self.run().provenance
    }
    fn provenance_mut(&mut self) -> &mut Provenance {
        &mut self.run_mut().provenance
    }
    fn verification(&self) -> &Verification {
        &self.run().verification
    }
    /// The traced timelines, each held to the trace checks.
    fn timelines(&self) -> Vec<&Timeline> {
        Vec::new()
    }
    /// The copy (and kernel) stage samples it took: with the traced copies and the link
    /// probes around it, where its fastest copy rates come from ([`own_link`]).
    fn stage_times(&self) -> Vec<&StageTimes> {
        Vec::new()
    }
    /// An empty kernel's launch, where it probes one: what `compare` holds the rows a
    /// host's launching bounds against ([`RowControl::Launch`]).
    fn launch_probe(&self) -> Option<&Series> {
        None
    }
}

/// [`Saved`]'s record accessors for a result whose [`RunRecord`] is its field `run`, as
/// every one's is; `$params` is its parameters' type.
#[macro_export]
macro_rules! saved_fields {
    ($params:ty) => {
        type Params = $params;
        fn run(&self) -> &$crate::saved::RunRecord<$params> {
            &self.run
        }
        fn run_mut(&mut self) -> &mut $crate::saved::RunRecord<$params> {
            &mut self.run
        }
    };
}
pub use saved_fields;

/// The fastest large copies `result` made or met: its own stage samples and traced
/// copies, and the link probes around it ([`fastest_link`]). A bound's large copy stages
/// are held to these: they depend on this result alone, never on what else the run did.
pub fn own_link(result: &impl Saved) -> Option<LinkRates> {
    let probes = (result.provenance().link.iter()).flat_map(|l| [&l.before, &l.after]);
    fastest_link(
        result.stage_times().into_iter().chain(probes),
        result.timelines(),
    )
}

/// A CSV file of an experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Csv {
    /// `None` for `<stem>.csv`, `Some(suffix)` for `<stem>-<suffix>.csv`.
    pub suffix: Option<&'static str>,
    pub contents: String,
}

impl Csv {
    /// `<stem>.csv`.
    pub fn main(contents: String) -> Csv {
        Csv {
            suffix: None,
            contents,
        }
    }

    /// `<stem>-<suffix>.csv`.
    pub fn extra(suffix: &'static str, contents: String) -> Csv {
        let suffix = Some(suffix);
        Csv { suffix, contents }
    }

    /// Its file name for experiment `name` measured with `set`.
    pub fn file(&self, name: &str, set: KernelSet) -> String {
        let suffix = self.suffix.map_or(String::new(), |s| format!("-{s}"));
        format!("{}{suffix}.csv", files::stem(name, set))
    }
}

/// What a result puts in `summary.json`, and how `run-all` words it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Its headline under `experiments` (or `cuda_experiments`).
    pub headline: Option<Json>,
    /// The headline as one line (its template's `@line`).
    pub line: Option<String>,
    /// Its facts, in the order of [`Experiment::FACTS`].
    pub facts: Vec<Json>,
    /// What it found, for the report's first screen.
    pub overview: Overview,
    /// Its answer to one of the questions a reader comes with, in a sentence.
    pub answer: Option<(Question, String)>,
}

impl Summary {
    /// A headline, `value` as JSON.
    pub fn of<T: Serialize>(value: &T) -> Summary {
        Summary {
            headline: Some(json(value)),
            ..Summary::default()
        }
    }

    /// The summary with `overview`.
    pub fn with(self, overview: Overview) -> Summary {
        Summary { overview, ..self }
    }
}

/// An experiment's finding in plain words and its result in one line of numbers: what
/// the report and `run-all` show first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overview {
    /// What it found, in a sentence a newcomer reads without the section.
    pub finding: String,
    /// Its result, short enough for one cell.
    pub result: String,
    /// Its time over the bound the run measured for it (1 is the bound reached, 1.05 is
    /// 5% slower than it), and what that time is of.
    pub over_bound: Option<(f64, String)>,
    /// Rust's time over CUDA C++'s where the experiment measures that itself, and what
    /// that time is of (where it runs with both kernel sets, the summary sums their rows
    /// instead).
    pub rust_over_cpp: Option<(f64, String)>,
}

/// A result of experiment `E` with the numbers derived from it.
pub type With<'a, E> = (
    &'a <E as Experiment>::Result,
    &'a <E as Experiment>::Derived,
);

/// Everything the generic parts read of one result: computed once, by [`Analyzed::new`].
#[derive(Debug, Clone)]
pub struct Analysis {
    pub name: &'static str,
    pub set: KernelSet,
    pub device: DeviceInfo,
    pub provenance: Provenance,
    pub verification: Verification,
    /// Its parameters as JSON.
    pub params: Json,
    pub rows: Vec<MeasuredRow>,
    /// The checks of its traced timelines, in their order.
    pub trace_checks: Vec<TraceChecks>,
    pub summary: Summary,
    pub launch_probe: Option<Series>,
    /// Its fastest large copies ([`own_link`]).
    pub link: Option<LinkRates>,
}

/// A result of experiment `E`, analysed: the result, its derived numbers and its
/// [`Analysis`].
#[derive(Debug)]
pub struct Analyzed<E: Experiment> {
    pub result: E::Result,
    pub derived: E::Derived,
    /// Its words, rendered once; the error where its template fails, which its section
    /// reports.
    pub words: Result<Words, String>,
    pub analysis: Analysis,
}

impl<E: Experiment> Analyzed<E> {
    /// Analyse `result`, measured with `set`: the one place its numbers are derived and
    /// its words rendered.
    pub fn new(set: KernelSet, result: E::Result) -> Analyzed<E> {
        let trace_checks: Vec<TraceChecks> =
            result.timelines().into_iter().map(trace::check).collect();
        let derived = E::derive(&result, &trace_checks);
        let mut summary = E::summary(&result, &derived);
        let context = context! {
            a => Serde(&derived),
            p => Serde(result.params()),
            h => Serde(&summary.headline),
            ..E::words(&result, &derived)
        };
        let words = words::render(E::NAME, E::WORDS, context);
        if let Ok(words) = &words {
            summary.line = words.part("line");
            summary.overview.finding = words.part("finding").unwrap_or_default();
            summary.overview.result = words.part("result").unwrap_or_default();
            summary.answer = E::QUESTION.zip(words.part("answer"));
        }
        let analysis = Analysis {
            name: E::NAME,
            set,
            device: result.device().clone(),
            provenance: result.provenance().clone(),
            verification: result.verification().clone(),
            params: json(result.params()),
            rows: E::rows(&result, &derived),
            trace_checks,
            summary,
            launch_probe: result.launch_probe().cloned(),
            link: own_link(&result),
        };
        Analyzed {
            result,
            derived,
            words,
            analysis,
        }
    }

    /// The result with its derived numbers.
    pub fn with(&self) -> With<'_, E> {
        (&self.result, &self.derived)
    }

    /// The section of its experiment: its title, what it measures, its verdict where its
    /// words have one and its notes from its words, after the machine's notes; the CUDA
    /// C++ note where the twins' result `cuda` is there; its parameters, verification,
    /// figures and traced timelines.
    pub fn section(&self, cuda: Option<&Analyzed<E>>) -> Result<Section, ReportError> {
        let (r, a) = self.with();
        let words = self.words.clone().map_err(ReportError::Invalid)?;
        let (p, v) = (r.provenance(), r.verification());
        let verdict = words.part("verdict");
        let mut notes = machine_notes(p);
        notes.extend(words.notes);
        notes.extend(cuda_note(cuda.map(|c| c.result.provenance())));
        Ok(Section {
            id: E::NAME.to_owned(),
            title: words.title,
            about: words.about,
            verdict,
            parameters: parameters(r.params()),
            notes,
            complete: p.complete,
            verification: (v.passed, v.sentence()),
            tables: Vec::new(),
            figures: E::figures(r, a).into_iter().map(Figure::draw).collect(),
            timelines: self.timelines()?,
        })
    }

    /// The figures of its traced timelines, with their checks.
    pub fn timelines(&self) -> Result<Vec<TimelineFigure>, ReportError> {
        let stem = files::stem(E::NAME, self.analysis.set);
        (self.result.timelines().into_iter())
            .zip(&self.analysis.trace_checks)
            .enumerate()
            .map(|(i, (t, checks))| TimelineFigure::new(t, checks, &stem, i + 1, self.analysis.set))
            .collect()
    }
}

/// `value` as JSON, its fields in their order; every headline and fact serialises.
pub fn json<T: Serialize>(value: &T) -> Json {
    serde_json::to_string(value)
        .and_then(|text| serde_json::from_str(&text))
        .expect("a headline serialises to JSON")
}
