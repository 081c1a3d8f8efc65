//! What the report says, independent of its format: the run's device and provenance, a
//! banner when the run is incomplete, the headline of every experiment, then a section
//! per experiment ([`super::sections`]) with its parameters, its bound beside each
//! result, its tables, charts and traced timelines with their checks. Markdown and HTML
//! both render this.
use super::chart::Gantt;
use super::figures::{Drawing, FigureModel};
use super::sections;
use super::{ReportError, plot, timeline};
use crate::derived::summary::{self, RunSummary};
use crate::derived::trace::{self, TraceChecks};
use crate::folder::SavedRun;
use crate::saved::timeline::Timeline;

/// The whole report.
#[derive(Debug, Clone)]
pub struct Document {
    /// Set when the run did not measure everything it set out to.
    pub banner: Option<String>,
    /// `(label, value)` pairs: the GPU, and when and with what the results were measured.
    pub header: Vec<(String, String)>,
    /// One line per experiment, from `summary.json`.
    pub headlines: Option<Table>,
    pub sections: Vec<Section>,
}

/// One experiment's part of the report.
#[derive(Debug, Clone)]
pub struct Section {
    /// The experiment's name: the HTML anchor and the stem of its files.
    pub id: String,
    pub title: String,
    /// What it measures and how, in a sentence or two.
    pub about: String,
    pub parameters: String,
    /// Labelled paragraphs, e.g. `("Bound", …)`.
    pub notes: Vec<(String, String)>,
    /// False when the run stopped before every configuration was measured.
    pub complete: bool,
    pub verification: (bool, String),
    pub tables: Vec<Table>,
    pub figures: Vec<Figure>,
    pub timelines: Vec<TimelineFigure>,
}

/// A rectangular table of text, with an optional caption.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(caption: Option<String>, header: &[&str]) -> Table {
        Table {
            caption,
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// The index of the first column whose header starts with `prefix`.
    pub fn column(&self, prefix: &str) -> Option<usize> {
        self.header.iter().position(|h| h.starts_with(prefix))
    }
}

/// A chart: its model, and the SVG written to `file` and shown inline.
#[derive(Debug, Clone)]
pub struct Figure {
    pub model: FigureModel,
    pub svg: String,
}

impl Figure {
    pub fn draw(model: FigureModel) -> Figure {
        let svg = match &model.drawing {
            Drawing::Chart(c) => plot::chart(c),
            Drawing::HeatMap(h) => plot::heat_map(h),
        };
        Figure { model, svg }
    }

    pub fn file(&self) -> &str {
        &self.model.file
    }

    pub fn title(&self) -> &str {
        self.model.title()
    }
}

/// A traced timeline: its Gantt chart, its Chrome trace and its checks.
#[derive(Debug, Clone)]
pub struct TimelineFigure {
    pub title: String,
    pub file: String,
    pub gantt: Gantt,
    pub svg: String,
    pub trace_file: String,
    pub trace: String,
    pub checks: TraceChecks,
    /// Checks that failed on earlier traces of the same schedule.
    pub retraced: Vec<String>,
}

impl TimelineFigure {
    /// The figure of `t`, its files named `{stem}-timeline-{n}.svg` and
    /// `{stem}-trace-{n}.json`.
    pub fn new(t: &Timeline, stem: &str, n: usize) -> Result<TimelineFigure, ReportError> {
        timeline::check(t).map_err(ReportError::Invalid)?;
        let checks = trace::check(t);
        let mut gantt = timeline::gantt(t);
        if checks.disturbed {
            gantt.title += " (disturbed: see its checks)";
        }
        Ok(TimelineFigure {
            title: t.title.clone(),
            file: format!("{stem}-timeline-{n}.svg"),
            svg: plot::gantt(&gantt),
            gantt,
            trace_file: format!("{stem}-trace-{n}.json"),
            trace: timeline::trace(t),
            checks,
            retraced: t.retraced.clone(),
        })
    }

    /// What the report says under the chart before its checks: the engines' occupancy,
    /// and whether the trace was disturbed.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(o) = &self.checks.occupancy {
            notes.push(o.describe());
        }
        if self.checks.disturbed {
            notes.push(format!(
                "disturbed: a check below still failed after {} trace(s) of this schedule; \
                 the machine's other traffic got in the way, so this timeline gives no bound \
                 (the outputs were verified apart from it)",
                self.checks.retraces + 1
            ));
        }
        notes
    }
}

/// How to read a timeline, shown above each section's timelines.
pub const TIMELINE_NOTE: &str = "A row per stream, then a row per engine (HtoD copy engine, \
    SMs, DtoH copy engine). With GPU records (CUPTI) each bar is when the engine really ran \
    the operation; a lighter bar before it on its stream's row is the time it was ready (issued \
    and its stream's earlier work done) but waited for its engine. With event brackets (no \
    CUPTI) a bar runs from when its stream reached the operation to when it finished, waiting \
    included.";

/// How bounds are read, shown once near the top.
pub const BOUND_NOTE: &str = "Every bound is built from what the same run measured on this \
    GPU: each pipeline stage timed alone over the same bytes (the fastest sample of each, \
    samples taken before and between the timed batches), copies of 8 MiB or more never \
    slower than the fastest such copy anywhere in the run (either kernel set, the link \
    probes, the traced copies), copies in and out together at the measured both-ways rate \
    rather than twice the one-way rate, and the pipeline's fill (first chunk in) and drain \
    (last chunk out) paid once per run of back-to-back iterations. Efficiency is bound / \
    measured: 1 is the bound. A verified row more than 1% below its bound as built shows a \
    rate that was under-measured (a shared link's other traffic): it is flagged, and its \
    bound is lowered to the row. Traced schedules also show their busiest engine's time per \
    iteration from the GPU's own records, a bound no correct run of them beats. Noise is \
    1.4826 × the median absolute deviation over the median; each experiment's link probes \
    (both ways, before and after) say how much the machine's other traffic moved the link.";

impl Document {
    /// The report of everything in `run`.
    pub fn new(run: &SavedRun) -> Result<Document, ReportError> {
        let header = summary::header(run).map(|(device, provenance)| {
            vec![
                (
                    "GPU".to_owned(),
                    super::table::device(&device).trim_end().to_owned(),
                ),
                ("Started (UTC)".to_owned(), provenance.started_utc.clone()),
                ("streamlab".to_owned(), provenance.streamlab_version.clone()),
                ("Rust PTX target".to_owned(), provenance.ptx_target.clone()),
                (
                    "Kernel form".to_owned(),
                    format!(
                        "{} (unless a section says otherwise)",
                        provenance.form.label()
                    ),
                ),
            ]
        });
        Ok(Document {
            banner: banner(run),
            header: header.unwrap_or_default(),
            headlines: run.summary.as_ref().map(headlines),
            sections: sections::all(run)?,
        })
    }

    /// Every file the report writes beside `report.md` and `report.html`.
    pub fn files(&self) -> Vec<(&str, &str)> {
        let mut files = Vec::new();
        for s in &self.sections {
            files.extend(s.figures.iter().map(|f| (f.file(), f.svg.as_str())));
            for t in &s.timelines {
                files.push((t.file.as_str(), t.svg.as_str()));
                files.push((t.trace_file.as_str(), t.trace.as_str()));
            }
        }
        files
    }
}

/// The banner of an incomplete run: the summary's status, or results that say so.
fn banner(run: &SavedRun) -> Option<String> {
    if let Some(s) = run.summary.as_ref().filter(|s| !s.complete) {
        let by = s
            .interrupted_by
            .as_deref()
            .map_or(String::new(), |n| format!(" (stopped by {n})"));
        let missing = if s.steps_not_run.is_empty() {
            String::new()
        } else {
            format!("; not run or not finished: {}", s.steps_not_run.join(", "))
        };
        return Some(format!(
            "This run is incomplete{by}{missing}. What is shown was measured; the rest is missing."
        ));
    }
    let partial = sections::incomplete(run);
    (!partial.is_empty()).then(|| {
        format!(
            "This run is incomplete: {} stopped before measuring every configuration. What is shown was measured; the rest is missing.",
            partial.join(", ")
        )
    })
}

/// One line per experiment of `s`.
fn headlines(s: &RunSummary) -> Table {
    let mut t = Table::new(None, &["experiment", "headline"]);
    for line in super::table::summary(s).lines().skip(1) {
        if let Some((name, rest)) = line.split_once("  ") {
            t.rows
                .push(vec![name.trim().to_owned(), rest.trim().to_owned()]);
        }
    }
    t
}
