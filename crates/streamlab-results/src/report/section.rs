//! One experiment's section of the report, and what sections are built from: the
//! section itself (what it measures, its parameters, notes, tables, charts and traced
//! timelines), a drawn chart, a traced timeline with its checks, and the notes every
//! section shares. Each experiment builds its own section from these.
use minijinja::context;
use serde::Serialize;

use super::ReportError;
use super::chart::Gantt;
use super::figures::{Drawing, FigureModel};
use super::provenance;
use super::table::{self, Table};
use super::{plot, timeline, words};
use crate::derived::pipeline::SLACK;
use crate::derived::rates::LARGE_COPY_BYTES;
use crate::derived::trace::{self, TOLERANCE, TraceChecks};
use crate::saved::timeline::Timeline;
use crate::saved::{KernelSet, Provenance};

/// One experiment's part of the report.
#[derive(Debug, Clone)]
pub struct Section {
    /// The experiment's name: the HTML anchor and the stem of its files.
    pub id: String,
    pub title: String,
    /// What it measures and how, in a sentence or two.
    pub about: String,
    /// The line it leads with: what bounds its traced schedules, whether anything broke
    /// their concurrency, and its headline ([`Section::lead`]).
    pub verdict: Option<String>,
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
    /// Why the page shows it as a line rather than drawn (it looks like one drawn above),
    /// where it does; its files are written all the same.
    pub collapsed: Option<String>,
}

/// Where the times of all of `timelines` come from, when they share one source (the
/// report then says it once, above them).
pub fn shared_source(timelines: &[TimelineFigure]) -> Option<&'static str> {
    let first = timelines.first()?.checks.source.description();
    (timelines.iter())
        .all(|t| t.checks.source.description() == first)
        .then_some(first)
}

impl TimelineFigure {
    /// The figure of `t`, whose checks are `checks`, measured with `set`, its files named
    /// `{stem}-timeline-{n}.svg` and `{stem}-trace-{n}.json`; the CUDA C++ twins' titled so.
    pub fn new(
        t: &Timeline,
        checks: &TraceChecks,
        stem: &str,
        n: usize,
        set: KernelSet,
    ) -> Result<TimelineFigure, ReportError> {
        timeline::check(t).map_err(ReportError::Invalid)?;
        let checks = checks.clone();
        let title = table::heading(&t.title, set);
        let mut gantt = timeline::gantt(t, &checks.breaks);
        gantt.title = gantt.title.replacen(&t.title, &title, 1);
        if checks.disturbed {
            gantt.title += " (disturbed: see its checks)";
        }
        Ok(TimelineFigure {
            title,
            file: format!("{stem}-timeline-{n}.svg"),
            svg: plot::gantt(&gantt),
            gantt,
            trace_file: format!("{stem}-trace-{n}.json"),
            trace: timeline::trace(t),
            checks,
            retraced: t.retraced.clone(),
            collapsed: None,
        })
    }

    /// Each of `figures` drawn again on the time scale of the longest of them.
    pub fn on_one_scale(figures: &mut [TimelineFigure]) {
        let end = |f: &TimelineFigure| {
            (f.gantt.bars.iter())
                .map(|b| b.end_ms)
                .filter(|e| e.is_finite())
                .fold(0.0, f64::max)
        };
        let span = figures.iter().map(end).fold(0.0, f64::max);
        for f in figures.iter_mut().filter(|f| end(f) < span) {
            f.gantt.span_ms = span;
            f.svg = plot::gantt(&f.gantt);
        }
    }

    /// Draw it again with no break marked: for a schedule whose breaks cost no time.
    pub fn unmark(&mut self) {
        if !self.gantt.marks.is_empty() {
            self.gantt.marks.clear();
            self.svg = plot::gantt(&self.gantt);
        }
    }

    /// What the report says under the chart before its checks: the engines' occupancy,
    /// and whether the trace was disturbed.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(o) = &self.checks.occupancy {
            notes.push(o.describe());
            notes.push(o.flow.describe(o.sms_busy_ms));
            notes.extend(trace::describe_breaks(&self.checks.breaks));
        }
        if self.checks.disturbed {
            let traces = self.checks.retraces + 1;
            notes.push(format!(
                "disturbed: a check below still failed after {traces} trace(s) of this schedule; \
                 the machine's other traffic got in the way, so this timeline gives no bound \
                 (the outputs were verified apart from it)"
            ));
        }
        notes
    }
}

/// The notes on the machine while an experiment ran (its link probes, its GPUs' clocks,
/// their host links): the page folds them, since every section has them.
pub const MACHINE_NOTES: [&str; 3] = ["Machine", "Clocks", "Host links"];

impl Section {
    /// The verdict line: `headline` (what the experiment found), then what its traced
    /// timelines say (what bounds the first, whether any broke concurrency).
    pub fn lead(&self, headline: Option<String>) -> Option<String> {
        let traced: Vec<_> = (self.timelines.iter())
            .filter_map(|t| Some((t, t.checks.occupancy.as_ref()?)))
            .collect();
        let traced = traced.first().map(|(first, o)| {
            let broken = (traced.iter())
                .filter(|(t, _)| !t.checks.breaks.is_empty())
                .count();
            let breaks = match (broken, traced.len()) {
                (0, 1) => "no concurrency breaks".to_owned(),
                (0, n) => format!("no concurrency breaks in its {n} traced timelines"),
                (b, n) => format!("concurrency breaks in {b} of its {n} traced timelines"),
            };
            format!("Traced: {} ({}); {breaks}.", o.verdict(), first.title)
        });
        match (headline, traced) {
            (Some(h), Some(t)) => Some(format!("{h} {t}")),
            (h, t) => h.or(t),
        }
    }

    pub fn note(&mut self, label: &str, text: impl Into<String>) {
        self.notes.push((label.to_owned(), text.into()));
    }
}

/// The notes on the machine while a result ran ([`MACHINE_NOTES`]): the link probed
/// around it, the GPU's clocks and, for several GPUs, their host links.
pub fn machine_notes(p: &Provenance) -> Vec<(String, String)> {
    let link = provenance::link(p).map(|l| (MACHINE_NOTES[0].to_owned(), l));
    let clocks = (MACHINE_NOTES[1].to_owned(), provenance::clocks(p));
    let hosts = provenance::host_links(p).map(|l| (MACHINE_NOTES[2].to_owned(), l));
    link.into_iter().chain([clocks]).chain(hosts).collect()
}

/// `p` as "name: value" pairs.
pub fn parameters<P: Serialize>(p: &P) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::to_value(p) else {
        return String::new();
    };
    let pair = |(k, v): (&String, &serde_json::Value)| {
        let (name, value) = (k.replace('_', " "), v.to_string());
        format!("{name}: {}", value.trim_matches('"'))
    };
    let pairs: Vec<String> = map.iter().filter(|(_, v)| !v.is_null()).map(pair).collect();
    pairs.join(", ")
}

/// The note of a section whose experiment also ran with the CUDA C++ twins.
pub fn cuda_note(p: Option<&Provenance>) -> Option<(String, String)> {
    let form = p?.form.label();
    let note = format!(
        "The same experiment ran again with the CUDA C++ twins of the kernels (compiled at run time by NVRTC, {form} form), in the same run; its times sit beside the Rust ones as \"C++\", with Rust / C++ (below 1: Rust faster)."
    );
    Some(("CUDA C++".into(), note))
}

/// How to read a timeline and how it is checked (`timelines.md`), a paragraph each:
/// shown on each page with timelines.
pub fn timeline_notes() -> Vec<String> {
    let context = context! {
        checked_mib => LARGE_COPY_BYTES >> 20, tolerance => TOLERANCE, slack => SLACK,
    };
    let template = include_str!("timelines.md");
    let notes = words::render("the timelines' notes", template, context);
    let notes = notes.expect("the timelines' notes render");
    notes.notes.into_iter().map(|(_, note)| note).collect()
}
