//! A run's report and printed tables from its analysed results.
use std::path::Path;

use super::SavedRun;
use super::summary::{findings, summarize};
use crate::derived::summary::{RunStatus, RunSummary, keep_where_null};
use crate::folder::{self, FolderError};
use crate::report::document::Document;
use crate::report::fit::Width;
use crate::report::provenance;
use crate::report::section::TimelineFigure;
use crate::report::{ReportError, html, markdown};
use crate::saved::{KernelSet, Provenance, files};

/// Every table of `run`, `width` wide, as the runs printed them, then the summary.
pub fn tables(run: &SavedRun, width: Width) -> String {
    let mut out = String::new();
    for h in run.held() {
        for set in [KernelSet::Rust, KernelSet::Cuda] {
            out.extend(h.printed(set, width));
        }
    }
    if let Some(s) = &run.summary {
        out += &format!("\nsummary\n{}", super::summary::summary_text(run, s, width));
    }
    out
}

/// The banner of an incomplete run: the summary's status, or the results (by file stem)
/// that say they were stopped before the end.
fn banner(run: &SavedRun) -> Option<String> {
    let rest = "What is shown was measured; the rest is missing.";
    if let Some(said) = run.summary.as_ref().and_then(RunSummary::incomplete) {
        let why = said.strip_prefix("incomplete run").unwrap_or_default();
        return Some(format!("This run is incomplete{why}. {rest}"));
    }
    let partial: Vec<String> = (run.analyses())
        .filter(|a| !a.provenance.complete)
        .map(|a| files::stem(a.name, a.set))
        .collect();
    (!partial.is_empty()).then(|| {
        let stopped = partial.join(", ");
        format!(
            "This run is incomplete: {stopped} stopped before measuring every configuration. {rest}"
        )
    })
}

/// How long `run` took: the whole run where it has a summary, else the experiment whose
/// `provenance` heads it.
fn took(run: &SavedRun, provenance: &Provenance) -> String {
    let (seconds, what) = match &run.summary {
        Some(summary) => (summary.duration_s, "the whole run"),
        None => (provenance.duration_s, "this experiment"),
    };
    match seconds {
        Some(s) if s < 120.0 => format!("{s:.0} s ({what})"),
        Some(s) => format!("{:.1} min ({what})", s / 60.0),
        None => crate::saved::NOT_RECORDED.to_owned(),
    }
}

pub fn document(run: &SavedRun) -> Result<Document, ReportError> {
    let mut sections = Vec::new();
    for h in run.held() {
        sections.extend(h.section()?);
    }
    for s in &mut sections {
        TimelineFigure::on_one_scale(&mut s.timelines);
    }
    let (lede, header) = match run.header() {
        Some((device, provenance)) => {
            let mut rows = vec![
                ("GPU", provenance::device(&device).trim_end().to_owned()),
                ("Started (UTC)", provenance.started_utc.clone()),
                ("Took", took(run, &provenance)),
            ];
            rows.extend(provenance::build_facts(&provenance));
            let started = provenance.started_utc.replace('T', " ");
            let lede = format!(
                "{}, started {} UTC, took {}",
                device.name,
                started.trim_end_matches('Z'),
                took(run, &provenance)
            );
            let rows = rows.into_iter().map(|(k, v)| (k.to_owned(), v));
            (Some(lede), rows.collect())
        }
        None => (None, Vec::new()),
    };
    Ok(Document {
        banner: banner(run),
        missing: run.missing(),
        lede,
        header,
        findings: (!sections.is_empty()).then(|| findings(run)),
        sections,
    })
}

/// `run`'s `summary.json` as the current derivations give it, where the folder had one:
/// its status, and the headlines of results no longer in the folder, kept as written.
fn current_summary(run: &SavedRun) -> Option<RunSummary> {
    let saved = run.summary.as_ref()?;
    let status = RunStatus {
        interrupted_by: saved.interrupted_by.clone(),
        steps_not_run: saved.steps_not_run.clone(),
        duration_s: saved.duration_s,
    };
    let mut now = summarize(run, status)?;
    keep_where_null(&mut now.experiments, &saved.experiments);
    if let (Some(now), Some(saved)) = (&mut now.cuda_experiments, &saved.cuda_experiments) {
        keep_where_null(now, saved);
    }
    Some(now)
}

/// What any run writes beside its results: every chart, timeline and trace, then each
/// page of the report in Markdown and HTML.
pub fn rendered(run: &SavedRun) -> Result<Vec<(String, String)>, ReportError> {
    let doc = document(run)?;
    let mut out: Vec<(String, String)> = (doc.files().into_iter())
        .map(|(name, contents)| (name.to_owned(), contents.to_owned()))
        .collect();
    for (stem, page) in doc.pages() {
        out.push((
            format!("{stem}{}", markdown::EXTENSION),
            markdown::page(&page),
        ));
        out.push((format!("{stem}{}", html::EXTENSION), html::page("", &page)));
    }
    Ok(out)
}

/// Render `run` into `out` ([`folder::Staged`]): every result's JSON and CSV again and
/// `summary.json` where the folder had one, then [`rendered`]. `in_place` says `out` is
/// the folder `run` was read from (any other holding a run's results is refused);
/// `keep_going` is asked before each file, and a no leaves `out` as it was.
pub fn render(
    run: &SavedRun,
    out: &Path,
    in_place: bool,
    keep_going: &dyn Fn() -> bool,
) -> Result<usize, ReportError> {
    let mut outputs = Vec::new();
    for h in run.held() {
        outputs.extend(h.files()?);
    }
    if let Some(summary) = current_summary(run) {
        outputs.push((
            files::SUMMARY.to_owned(),
            folder::to_json(files::SUMMARY, &summary)?,
        ));
    }
    outputs.extend(rendered(run)?);
    let total = outputs.len();
    let mut staged = folder::Staged::begin(out, super::file_kind, in_place)?;
    for (written, (name, contents)) in outputs.iter().enumerate() {
        if !keep_going() {
            return Err(ReportError::Stopped { written, total });
        }
        staged.write(name, contents.as_bytes())?;
    }
    staged.finish()?;
    Ok(total)
}

/// Write each of `files` into `dir`, whole.
pub fn write_all(dir: &Path, files: &[(String, String)]) -> Result<(), FolderError> {
    files
        .iter()
        .try_for_each(|(name, contents)| folder::write_atomic(dir, name, contents.as_bytes()))
}
