//! A run's results as a whole, over the registry of experiments: a results folder read
//! back ([`SavedRun`]), each result's files (its JSON with its derived numbers and trace
//! checks, its CSV), the printed tables, `summary.json` ([`summarize`]) and the report
//! ([`document`], [`render`]). Nothing here names an experiment: everything goes
//! through [`crate::experiments::each`].
use std::any::Any;
use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use crate::derived::rates::{NOISY_LINK, link_moved};
use crate::derived::summary::{Entries, Json, LinkSteady, RunStatus, RunSummary};
use crate::derived::trace::{self, TraceChecks};
use crate::experiment::{Experiment, MeasuredRow, With};
use crate::experiments::{self, Visit};
use crate::folder::{self, FolderError, Held};
use crate::report::document::Document;
use crate::report::section::Section;
use crate::report::table::{self, Table};
use crate::report::{ReportError, html, markdown};
use crate::saved::{DeviceInfo, KernelSet, Provenance, files};
use crate::stats;

/// One saved result: which experiment, which kernel set, the result itself and the
/// numbers derived from it (derived once, when it is held).
struct Saved {
    name: &'static str,
    set: KernelSet,
    result: Box<dyn Any + Send + Sync>,
    derived: Box<dyn Any>,
}

/// Everything a results folder holds.
#[derive(Default)]
pub struct SavedRun {
    pub summary: Option<RunSummary>,
    results: Vec<Saved>,
}

impl std::fmt::Debug for SavedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held: Vec<String> = (self.results.iter())
            .map(|s| files::stem(s.name, s.set))
            .collect();
        f.debug_struct("SavedRun").field("results", &held).finish()
    }
}

/// The kernel sets experiment `E` can be measured with.
pub(crate) fn sets<E: Experiment>() -> &'static [KernelSet] {
    if E::USES_KERNEL_SETS {
        &[KernelSet::Rust, KernelSet::Cuda]
    } else {
        &[KernelSet::Rust]
    }
}

impl SavedRun {
    /// Load every result file in `dir`; an error if there are none, if a file cannot be
    /// read (naming it and where), or if the files are of more than one run.
    pub fn load(dir: &Path) -> Result<SavedRun, FolderError> {
        struct Load<'a> {
            dir: &'a Path,
            run: SavedRun,
            error: Option<FolderError>,
        }
        impl Visit for Load<'_> {
            fn visit<E: Experiment>(&mut self) {
                for &set in sets::<E>() {
                    if self.error.is_some() {
                        return;
                    }
                    match folder::read_result::<E::Result>(self.dir, E::NAME, set, |r| {
                        E::provenance(r).kernels
                    }) {
                        Ok(Some(result)) => self.run.insert::<E>(set, result),
                        Ok(None) => {}
                        Err(err) => self.error = Some(err),
                    }
                }
            }
        }
        let mut load = Load {
            dir,
            run: SavedRun::default(),
            error: None,
        };
        experiments::each(&mut load);
        if let Some(err) = load.error {
            return Err(err);
        }
        if load.run.results.is_empty() {
            return Err(FolderError::Empty(dir.to_owned()));
        }
        load.run.summary = folder::read_json(dir, files::SUMMARY)?;
        load.run.check_one_run(dir)?;
        Ok(load.run)
    }

    /// Every file of the folder must be of one run: the same GPU, and the same start
    /// (summary.json's, where there is one).
    fn check_one_run(&self, dir: &Path) -> Result<(), FolderError> {
        let runs = identities(self);
        let first = match &self.summary {
            Some(s) => (
                files::SUMMARY.to_owned(),
                RunIdentity::of(&s.device, &s.provenance),
            ),
            None => runs.first().cloned().expect("a loaded run holds a result"),
        };
        match runs.iter().find(|(_, id)| *id != first.1) {
            None => Ok(()),
            Some((other, id)) => Err(FolderError::MixedRuns {
                dir: dir.to_owned(),
                first: first.0,
                first_run: first.1.to_string(),
                other: other.clone(),
                other_run: id.to_string(),
            }),
        }
    }

    /// The experiments `summary.json` has a headline of whose result file is not in the
    /// folder, each as "NAME (NAME.json)".
    pub fn missing(&self) -> Vec<String> {
        struct Missing<'a>(&'a SavedRun, &'a RunSummary, Vec<String>);
        impl Visit for Missing<'_> {
            fn visit<E: Experiment>(&mut self) {
                let summaries = [
                    (KernelSet::Rust, Some(&self.1.experiments)),
                    (KernelSet::Cuda, self.1.cuda_experiments.as_ref()),
                ];
                for (set, entries) in summaries {
                    let named = entries
                        .and_then(|e| e.get(E::NAME))
                        .is_some_and(|h| !h.is_null());
                    if named && self.0.get::<E>(set).is_none() {
                        self.2.push(format!(
                            "{} ({})",
                            files::stem(E::NAME, set),
                            files::json(E::NAME, set)
                        ));
                    }
                }
            }
        }
        let Some(summary) = &self.summary else {
            return Vec::new();
        };
        let mut missing = Missing(self, summary, Vec::new());
        experiments::each(&mut missing);
        missing.2
    }

    /// Hold `result` of experiment `E` measured with `set`, in place of any before, with
    /// the numbers derived from it.
    pub fn insert<E: Experiment>(&mut self, set: KernelSet, result: E::Result) {
        self.results
            .retain(|s| !(s.name == E::NAME && s.set == set));
        let derived = E::derive(&result);
        self.results.push(Saved {
            name: E::NAME,
            set,
            result: Box::new(result),
            derived: Box::new(derived),
        });
    }

    /// Experiment `E`'s result measured with `set`, if the folder has it.
    pub fn get<E: Experiment>(&self, set: KernelSet) -> Option<&E::Result> {
        self.with::<E>(set).map(|(r, _)| r)
    }

    /// The same with the numbers derived from it.
    pub fn with<E: Experiment>(&self, set: KernelSet) -> Option<With<'_, E>> {
        let saved = (self.results.iter()).find(|s| s.name == E::NAME && s.set == set)?;
        Some((saved.result.downcast_ref()?, saved.derived.downcast_ref()?))
    }

    /// Change experiment `E`'s result measured with `set` by `edit` (tests break results
    /// this way), deriving its numbers again; false where the run has none.
    pub fn edit<E: Experiment>(
        &mut self,
        set: KernelSet,
        edit: impl FnOnce(&mut E::Result),
    ) -> bool {
        let found = (self.results.iter_mut()).find(|s| s.name == E::NAME && s.set == set);
        let Some(saved) = found else {
            return false;
        };
        let Some(result) = saved.result.downcast_mut::<E::Result>() else {
            return false;
        };
        edit(result);
        saved.derived = Box::new(E::derive(result));
        true
    }
}

/// Which run a file is of: the GPU it ran on and when the run started.
#[derive(Debug, Clone, PartialEq)]
struct RunIdentity {
    gpu: String,
    started_utc: String,
}

impl RunIdentity {
    fn of(device: &DeviceInfo, provenance: &Provenance) -> RunIdentity {
        RunIdentity {
            gpu: format!("{} (GPU {})", device.name, device.ordinal),
            started_utc: provenance.started_utc.clone(),
        }
    }
}

impl std::fmt::Display for RunIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the run started {} on {}", self.started_utc, self.gpu)
    }
}

/// Each result of `run` by its file name, with the run it is of.
fn identities(run: &SavedRun) -> Vec<(String, RunIdentity)> {
    struct Ids<'a>(&'a SavedRun, Vec<(String, RunIdentity)>);
    impl Visit for Ids<'_> {
        fn visit<E: Experiment>(&mut self) {
            for &set in sets::<E>() {
                if let Some(r) = self.0.get::<E>(set) {
                    self.1.push((
                        files::json(E::NAME, set),
                        RunIdentity::of(E::device(r), E::provenance(r)),
                    ));
                }
            }
        }
    }
    let mut ids = Ids(run, Vec::new());
    experiments::each(&mut ids);
    ids.1
}

/// What an experiment's JSON holds: its result, the numbers derived from it, and the
/// checks of its traced timelines.
#[derive(Serialize)]
struct SavedFile<'a, R: Serialize, D: Serialize> {
    #[serde(flatten)]
    result: &'a R,
    derived: &'a D,
    trace_checks: &'a [TraceChecks],
}

/// The files of experiment `E`'s result (with its derived numbers) measured with `set`:
/// its JSON (with its derived numbers and `checks`, the checks of its traced timelines)
/// and its CSV.
fn result_files<E: Experiment>(
    (result, derived): With<'_, E>,
    set: KernelSet,
    checks: &[TraceChecks],
) -> Result<Vec<(String, String)>, FolderError> {
    let file = SavedFile {
        result,
        derived,
        trace_checks: checks,
    };
    let name = files::json(E::NAME, set);
    let json = folder::to_json(&name, &file)?;
    let mut out = vec![(name, json)];
    out.extend(E::csv(result, derived).map(|csv| (files::csv(E::NAME, set), csv)));
    out.extend(
        E::csv_beside(result, derived)
            .map(|(suffix, csv)| (format!("{}-{suffix}.csv", files::stem(E::NAME, set)), csv)),
    );
    Ok(out)
}

/// The checks of every traced timeline of experiment `E`'s `result`.
fn trace_checks<E: Experiment>(result: &E::Result) -> Vec<TraceChecks> {
    E::timelines(result).into_iter().map(trace::check).collect()
}

/// Write experiment `E`'s `result` measured with `set` into `dir`: its JSON and its
/// CSV, each whole. Returns the checks of its traced timelines and the numbers derived
/// from it.
pub fn save<E: Experiment>(
    dir: &Path,
    result: &E::Result,
    set: KernelSet,
) -> Result<(Vec<TraceChecks>, E::Derived), FolderError> {
    let checks = trace_checks::<E>(result);
    let derived = E::derive(result);
    for (name, contents) in result_files::<E>((result, &derived), set, &checks)? {
        folder::write_atomic(dir, &name, contents.as_bytes())?;
    }
    Ok((checks, derived))
}

/// The table printed after experiment `E` ran with `set`: its heading, whether it is
/// complete, its tables and its verification.
pub fn printed<E: Experiment>((result, derived): With<'_, E>, set: KernelSet) -> String {
    let mut out = format!(
        "\n{}\n{}",
        table::heading(E::NAME, set),
        table::incomplete(E::provenance(result).complete)
    );
    for t in E::tables(result, derived, None) {
        out += &t.text();
    }
    let _ = writeln!(out, "verification: {}", E::verification(result).detail);
    out
}

/// Every table of `run`, as the runs printed them, then the summary.
pub fn tables(run: &SavedRun) -> String {
    struct Print<'a>(&'a SavedRun, String);
    impl Visit for Print<'_> {
        fn visit<E: Experiment>(&mut self) {
            for &set in sets::<E>() {
                if let Some(r) = self.0.with::<E>(set) {
                    self.1 += &printed::<E>(r, set);
                }
            }
        }
    }
    let mut print = Print(run, String::new());
    experiments::each(&mut print);
    if let Some(s) = &run.summary {
        print.1 += &format!("\nsummary\n{}", summary_text(s));
    }
    print.1
}

/// The device and provenance of the first result in `run` measured with the Rust
/// kernels, or, in a folder of the CUDA C++ twins' results alone, with those.
pub fn header(run: &SavedRun) -> Option<(DeviceInfo, Provenance)> {
    struct First<'a>(&'a SavedRun, KernelSet, Option<(DeviceInfo, Provenance)>);
    impl Visit for First<'_> {
        fn visit<E: Experiment>(&mut self) {
            if self.2.is_none() {
                self.2 = (self.0.get::<E>(self.1))
                    .map(|r| (E::device(r).clone(), E::provenance(r).clone()));
            }
        }
    }
    [KernelSet::Rust, KernelSet::Cuda]
        .into_iter()
        .find_map(|set| {
            let mut first = First(run, set, None);
            experiments::each(&mut first);
            first.2
        })
}

/// The headline of everything in `run`; `None` when the folder has no result to name its
/// device.
pub fn summarize(run: &SavedRun, status: RunStatus) -> Option<RunSummary> {
    struct Summarize<'a> {
        run: &'a SavedRun,
        experiments: Entries,
        cuda: Entries,
        ratios: Entries,
        facts: Entries,
        link_moved: Entries,
    }
    impl Visit for Summarize<'_> {
        fn visit<E: Experiment>(&mut self) {
            let rust = self.run.with::<E>(KernelSet::Rust);
            if let Some(probe) = rust.and_then(|(r, _)| E::provenance(r).link.as_ref()) {
                let (_, _, moved) = link_moved(probe);
                self.link_moved
                    .push(E::NAME, crate::experiment::json(&moved));
            }
            let summary = |(r, d): With<'_, E>| E::summary(r, d);
            let rows = |(r, d): With<'_, E>| E::measured_rows(r, d);
            let headline = rust.and_then(summary);
            if E::USES_KERNEL_SETS {
                let cuda = self.run.with::<E>(KernelSet::Cuda);
                self.experiments
                    .push(E::NAME, headline.unwrap_or(Json::Null));
                self.cuda
                    .push(E::NAME, cuda.and_then(summary).unwrap_or(Json::Null));
                let ratio = rust
                    .zip(cuda)
                    .and_then(|(r, c)| rust_over_cuda(&rows(r), &rows(c)));
                self.ratios.push(E::NAME, crate::experiment::json(&ratio));
            } else if let Some(h) = headline {
                self.experiments.push(E::NAME, h);
            }
            let facts = rust.map(|(r, d)| E::facts(r, d)).unwrap_or_default();
            for (i, key) in E::FACTS.iter().enumerate() {
                self.facts
                    .push(key, facts.get(i).cloned().unwrap_or(Json::Null));
            }
        }
    }
    let (device, mut provenance) = header(run)?;
    // The run's duration is the summary's own, not its first experiment's.
    provenance.duration_s = None;
    let mut s = Summarize {
        run,
        experiments: Entries::default(),
        cuda: Entries::default(),
        ratios: Entries::default(),
        facts: Entries::default(),
        link_moved: Entries::default(),
    };
    experiments::each(&mut s);
    let any_cuda = s.cuda.any();
    let moves: Vec<f64> = (s.link_moved.0.iter())
        .filter_map(|(_, v)| crate::experiment::parse::<f64>(v))
        .collect();
    let link_steady = (!moves.is_empty()).then(|| LinkSteady {
        experiments: moves.len(),
        steady: moves.iter().filter(|m| **m <= NOISY_LINK).count(),
    });
    Some(RunSummary {
        device,
        provenance,
        complete: status.steps_not_run.is_empty() && status.interrupted_by.is_none(),
        interrupted_by: status.interrupted_by,
        steps_not_run: status.steps_not_run,
        experiments: s.experiments,
        facts: s.facts,
        cuda_experiments: any_cuda.then_some(s.cuda),
        experiment_rust_over_cuda: any_cuda.then_some(s.ratios),
        link_moved: link_steady.map(|_| s.link_moved),
        link_steady,
        duration_s: status.duration_s,
    })
}

/// Every time both kernel sets measured, summed, Rust over CUDA C++.
fn rust_over_cuda(rust: &[MeasuredRow], cuda: &[MeasuredRow]) -> Option<f64> {
    let (r, c) = (rust.iter())
        .filter_map(|t| {
            (cuda.iter())
                .find(|u| u.key == t.key && u.unit == t.unit)
                .map(|u| (t.value, u.value))
        })
        .fold((0.0, 0.0), |(a, b), (t, u)| (a + t, b + u));
    (c > 0.0).then(|| r / c)
}

/// One line per experiment and kernel set (and per fact: the limits, the kernel
/// ratios) of `s`, labelled.
pub fn headlines(s: &RunSummary) -> Vec<(String, String)> {
    struct Lines<'a>(&'a RunSummary, Vec<(String, String)>, Vec<(String, String)>);
    impl Visit for Lines<'_> {
        fn visit<E: Experiment>(&mut self) {
            if let Some(line) = self.0.experiment(E::NAME).and_then(E::headline) {
                self.1.push((E::NAME.to_owned(), line));
            }
            let cuda = (self.0.cuda_experiments.as_ref())
                .and_then(|c| c.get(E::NAME))
                .filter(|h| !h.is_null());
            if let Some(line) = cuda.and_then(E::headline) {
                self.1
                    .push((table::heading(E::NAME, KernelSet::Cuda), line));
            }
            if !E::FACTS.is_empty() {
                let facts: Vec<&Json> = (E::FACTS.iter())
                    .map(|k| self.0.facts.get(k).unwrap_or(&Json::Null))
                    .collect();
                self.2.extend(E::fact_lines(&facts));
            }
        }
    }
    let mut lines = Lines(s, Vec::new(), Vec::new());
    experiments::each(&mut lines);
    lines.1.extend(lines.2);
    lines.1
}

/// The compact summary `run-all` prints last: the device, whether the run is complete,
/// and [`headlines`].
pub fn summary_text(s: &RunSummary) -> String {
    let mut out = table::device(&s.device);
    if !s.complete {
        let _ = writeln!(
            out,
            "INCOMPLETE ({}): not run or not finished: {}",
            s.interrupted_by.as_deref().unwrap_or("stopped"),
            s.steps_not_run.join(", ")
        );
    }
    for (name, line) in headlines(s) {
        let _ = writeln!(out, "{name:<19} {line}");
    }
    out
}

/// The results in `run` that say they were stopped before the end, by file stem.
fn incomplete(run: &SavedRun) -> Vec<String> {
    struct Stopped<'a>(&'a SavedRun, Vec<String>);
    impl Visit for Stopped<'_> {
        fn visit<E: Experiment>(&mut self) {
            for &set in sets::<E>() {
                if (self.0.get::<E>(set)).is_some_and(|r| !E::provenance(r).complete) {
                    self.1.push(files::stem(E::NAME, set));
                }
            }
        }
    }
    let mut stopped = Stopped(run, Vec::new());
    experiments::each(&mut stopped);
    stopped.1
}

/// The banner of an incomplete run: the summary's status, or results that say so.
fn banner(run: &SavedRun) -> Option<String> {
    if let Some(s) = run.summary.as_ref().filter(|s| !s.complete) {
        let by =
            (s.interrupted_by.as_deref()).map_or(String::new(), |n| format!(" (stopped by {n})"));
        let missing = if s.steps_not_run.is_empty() {
            String::new()
        } else {
            format!("; not run or not finished: {}", s.steps_not_run.join(", "))
        };
        return Some(format!(
            "This run is incomplete{by}{missing}. What is shown was measured; the rest is missing."
        ));
    }
    let partial = incomplete(run);
    (!partial.is_empty()).then(|| {
        format!(
            "This run is incomplete: {} stopped before measuring every configuration. What is shown was measured; the rest is missing.",
            partial.join(", ")
        )
    })
}

/// The line `run-all` prints for `r`'s headline, or for its facts where it has no
/// headline, as one sentence.
fn headline_or_facts<E: Experiment>((r, d): With<'_, E>) -> Option<String> {
    let line = E::summary(r, d).and_then(|j| E::headline(&j)).or_else(|| {
        let facts = E::facts(r, d);
        let lines = E::fact_lines(&facts.iter().collect::<Vec<_>>());
        (!lines.is_empty()).then(|| {
            (lines.iter())
                .map(|(label, text)| format!("{label} {text}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    })?;
    Some(line.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The section's note on noise: which of its measured rows (both kernel sets', those
/// whose samples can show a noise) ended above the noise target.
fn noise_note<E: Experiment>(rust: With<'_, E>, cuda: Option<With<'_, E>>) -> String {
    let labelled = |(r, d): With<'_, E>, prefix: &str| -> Vec<(String, f64)> {
        (E::measured_rows(r, d).into_iter())
            .filter_map(|row| Some((format!("{prefix}{}", row.label), row.noise?)))
            .collect()
    };
    let mut rows = labelled(rust, "");
    if let Some(c) = cuda {
        rows.extend(labelled(c, "C++: "));
    }
    stats::noise_target_note(&rows)
}

/// How long `run` took: the whole run where it has a summary, else the experiment whose
/// `provenance` heads it; "not recorded" for runs before durations were.
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

/// The report of everything in `run`.
pub fn document(run: &SavedRun) -> Result<Document, ReportError> {
    struct Sections<'a>(&'a SavedRun, Vec<Section>, Option<ReportError>);
    impl Visit for Sections<'_> {
        fn visit<E: Experiment>(&mut self) {
            if self.2.is_some() {
                return;
            }
            if let Some(rust) = self.0.with::<E>(KernelSet::Rust) {
                let cuda = self.0.with::<E>(KernelSet::Cuda);
                match E::section(rust.0, rust.1, cuda) {
                    Ok(mut s) => {
                        s.verdict = s.lead(headline_or_facts::<E>(rust));
                        s.note("Noise", noise_note::<E>(rust, cuda));
                        self.1.push(s)
                    }
                    Err(e) => self.2 = Some(e),
                }
            }
        }
    }
    let mut sections = Sections(run, Vec::new(), None);
    experiments::each(&mut sections);
    if let Some(err) = sections.2 {
        return Err(err);
    }
    let header = header(run).map(|(device, provenance)| {
        let mut rows = vec![
            (
                "GPU".to_owned(),
                table::device(&device).trim_end().to_owned(),
            ),
            ("Started (UTC)".to_owned(), provenance.started_utc.clone()),
            ("Took".to_owned(), took(run, &provenance)),
            ("streamlab".to_owned(), provenance.streamlab_version.clone()),
            ("Rust PTX target".to_owned(), provenance.ptx_target.clone()),
            (
                "Kernel form".to_owned(),
                format!(
                    "{} (unless a section says otherwise)",
                    provenance.form.label()
                ),
            ),
        ];
        rows.extend((table::build_facts(&provenance).into_iter()).map(|(k, v)| (k.to_owned(), v)));
        rows
    });
    Ok(Document {
        banner: banner(run),
        missing: run.missing(),
        header: header.unwrap_or_default(),
        headlines: current_summary(run).map(|s| {
            let mut t = Table::new(None, &["experiment", "headline"]);
            t.rows = (headlines(&s).into_iter())
                .map(|(name, line)| vec![name, line])
                .collect();
            t
        }),
        sections: sections.1,
    })
}

/// `run`'s `summary.json` as the current derivations give it, where the folder had one
/// (its run's status kept, and the headlines of results the folder no longer holds kept
/// as the run wrote them: [`SavedRun::missing`] names them).
fn current_summary(run: &SavedRun) -> Option<RunSummary> {
    let saved = run.summary.as_ref()?;
    let status = RunStatus {
        interrupted_by: saved.interrupted_by.clone(),
        steps_not_run: saved.steps_not_run.clone(),
        duration_s: saved.duration_s,
    };
    let mut now = summarize(run, status)?;
    now.experiments.keep_where_null(&saved.experiments);
    if let (Some(now), Some(saved)) = (&mut now.cuda_experiments, &saved.cuda_experiments) {
        now.keep_where_null(saved);
    }
    Some(now)
}

/// Every result file of `run` as it would be written now: each result's JSON and CSV,
/// and `summary.json` where the folder had one (its run's status kept).
fn result_outputs(run: &SavedRun) -> Result<Vec<(String, String)>, ReportError> {
    struct Files<'a>(&'a SavedRun, Vec<(String, String)>, Option<FolderError>);
    impl Visit for Files<'_> {
        fn visit<E: Experiment>(&mut self) {
            for &set in sets::<E>() {
                if let (Some(r), None) = (self.0.with::<E>(set), &self.2) {
                    match result_files::<E>(r, set, &trace_checks::<E>(r.0)) {
                        Ok(files) => self.1.extend(files),
                        Err(e) => self.2 = Some(e),
                    }
                }
            }
        }
    }
    let mut out = Files(run, Vec::new(), None);
    experiments::each(&mut out);
    if let Some(err) = out.2 {
        return Err(err.into());
    }
    if let Some(summary) = current_summary(run) {
        out.1.push((
            files::SUMMARY.to_owned(),
            folder::to_json(files::SUMMARY, &summary)?,
        ));
    }
    Ok(out.1)
}

/// What a file named `name` of a results folder or a comparison is ([`Held`]): a run's
/// results (an experiment's JSON, `summary.json`), its rendered output (its CSV, charts,
/// timelines and traces, the report, a comparison's files, a file being written), or
/// something else.
pub fn held(name: &str) -> Held {
    struct Stems(Vec<&'static str>);
    impl Visit for Stems {
        fn visit<E: Experiment>(&mut self) {
            self.0.push(E::NAME);
        }
    }
    let mut stems = Stems(Vec::new());
    experiments::each(&mut stems);
    let result = |stem: &str| {
        [KernelSet::Rust, KernelSet::Cuda]
            .iter()
            .any(|&set| name == files::json(stem, set))
    };
    if name == files::SUMMARY || stems.0.iter().any(|s| result(s)) {
        return Held::Results;
    }
    let rendered = [files::REPORT_MD, files::REPORT_HTML, files::COMPARISON];
    let typed = [".json", ".csv", ".svg"].iter().any(|e| name.ends_with(e));
    let of_ours = stems
        .0
        .iter()
        .chain(&["compare"])
        .any(|s| name.starts_with(s));
    if rendered.contains(&name)
        || (name.starts_with('.') && name.ends_with(".partial"))
        || (typed && of_ours)
    {
        Held::Output
    } else {
        Held::Foreign
    }
}

/// Render `run` into `out`: every result's JSON and CSV again (from the current
/// derivations), then every chart, timeline and trace, then `report.md` and
/// `report.html`. Everything is written into a fresh folder beside `out`, which replaces
/// `out` only once complete: `out` never holds half a report, nor files of another
/// run. `in_place` says `out` is the folder `run` was read from; any other folder
/// holding a run's results is refused, not replaced. `keep_going` is asked before each
/// file; when it says no, rendering stops there and `out` is left as it was.
pub fn render(
    run: &SavedRun,
    out: &Path,
    in_place: bool,
    keep_going: &dyn Fn() -> bool,
) -> Result<usize, ReportError> {
    let doc = document(run)?;
    let mut outputs = result_outputs(run)?;
    outputs.extend(
        (doc.files().into_iter()).map(|(name, contents)| (name.to_owned(), contents.to_owned())),
    );
    outputs.push((files::REPORT_MD.to_owned(), markdown::render(&doc)));
    outputs.push((files::REPORT_HTML.to_owned(), html::render(&doc)));
    let total = outputs.len();
    let mut staged = folder::Staged::begin(out, held, in_place)?;
    for (written, (name, contents)) in outputs.iter().enumerate() {
        if !keep_going() {
            return Err(ReportError::Stopped { written, total });
        }
        staged.write(name, contents.as_bytes())?;
    }
    staged.finish()?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_corrupt_folders_are_clear_errors() {
        let dir = std::env::temp_dir().join(format!("streamlab-run-empty-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let err = SavedRun::load(&dir).unwrap_err();
        assert!(
            err.to_string().contains("holds no streamlab results"),
            "{err}"
        );
        struct First(Option<&'static str>);
        impl Visit for First {
            fn visit<E: Experiment>(&mut self) {
                self.0.get_or_insert(E::NAME);
            }
        }
        let mut first = First(None);
        experiments::each(&mut first);
        let name = files::json(first.0.unwrap(), KernelSet::Rust);
        std::fs::write(dir.join(name), "{not json").unwrap();
        let err = SavedRun::load(&dir).unwrap_err();
        assert!(
            err.to_string()
                .contains("bounds.json is not JSON: key must be a string at line 1 column 2"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
