//! A run's results as a whole, a results folder read back or a run being recorded
//! ([`SavedRun`]). Nothing here names an experiment: everything goes through
//! [`crate::experiments::ALL`] and [`Held`].
pub mod recorder;
pub mod report;
pub mod summary;

use std::path::Path;

pub use crate::held::{Held, Results, sets};

use crate::derived::summary::{Entries, RunSummary};
use crate::experiment::{Analysis, Experiment};
use crate::experiments;
use crate::folder::{self, FolderError, Held as FileKind};
use crate::saved::{DeviceInfo, KernelSet, Provenance, files};

/// Everything a results folder holds, or a run has measured so far: each experiment's
/// results, in the registry's order, and the run's `summary.json` where it has one.
#[derive(Default)]
pub struct SavedRun {
    pub summary: Option<RunSummary>,
    held: Vec<Box<dyn Held>>,
}

impl SavedRun {
    /// Load every result file in `dir`; an error if there are none, if a file cannot be
    /// read (naming it and where), or if the files are of more than one run.
    pub fn load(dir: &Path) -> Result<SavedRun, FolderError> {
        match std::fs::metadata(dir) {
            Err(_) => return Err(FolderError::Missing(dir.to_owned())),
            Ok(m) if !m.is_dir() => return Err(FolderError::NotAResultsFolder(dir.to_owned())),
            Ok(_) => {}
        }
        let mut run = SavedRun::default();
        for entry in experiments::ALL {
            run.held.extend(entry.load(dir)?);
        }
        if run.held.is_empty() {
            return Err(FolderError::Empty(dir.to_owned()));
        }
        run.summary = folder::read_json(dir, files::SUMMARY)?;
        run.check_one_run(dir)?;
        Ok(run)
    }

    /// Hold `held` in place of any results of the same experiment, in the registry's
    /// order (an experiment the registry does not list goes last).
    pub fn insert(&mut self, held: Box<dyn Held>) {
        let rank = |name: &str| {
            (experiments::ALL.iter())
                .position(|e| e.name() == name)
                .unwrap_or(usize::MAX)
        };
        self.held.retain(|h| h.name() != held.name());
        let at = (self.held.iter())
            .position(|h| rank(h.name()) > rank(held.name()))
            .unwrap_or(self.held.len());
        self.held.insert(at, held);
    }

    /// Each experiment's results, in the registry's order.
    pub fn held(&self) -> impl Iterator<Item = &dyn Held> {
        self.held.iter().map(|h| &**h)
    }

    /// The results of experiment `name`.
    pub fn experiment(&self, name: &str) -> Option<&dyn Held> {
        self.held().find(|h| h.name() == name)
    }

    /// Every result's analysis, experiment by experiment, the Rust kernels' first.
    pub fn analyses(&self) -> impl Iterator<Item = &Analysis> {
        self.held.iter().flat_map(|h| h.analyses())
    }

    /// The analysis of experiment `name`'s result measured with `set`.
    pub fn analysis(&self, name: &str, set: KernelSet) -> Option<&Analysis> {
        self.analyses().find(|a| a.name == name && a.set == set)
    }

    /// Change experiment `E`'s result measured with `set` by `edit`, as its JSON reads
    /// back, and analyse it again (tests break results this way); false where the run
    /// has none.
    pub fn edit<E: Experiment>(
        &mut self,
        set: KernelSet,
        edit: impl FnOnce(&mut E::Result),
    ) -> bool {
        let Some(Ok(files)) = self.experiment(E::NAME).map(|held| held.files()) else {
            return false;
        };
        let mut results: Vec<(KernelSet, E::Result)> = Vec::new();
        for &s in sets::<E>() {
            let name = files::json(E::NAME, s);
            let text = files.iter().find(|(n, _)| *n == name).map(|(_, t)| t);
            if let Some(result) = text.and_then(|t| folder::parse(Path::new(&name), t).ok()) {
                results.push((s, result));
            }
        }
        let Some((_, result)) = results.iter_mut().find(|(s, _)| *s == set) else {
            return false;
        };
        edit(result);
        self.insert(Box::new(Results::<E>::new(results)));
        true
    }

    /// Every file of the folder must be of one run: the same GPU, and the same start
    /// (summary.json's, where there is one).
    fn check_one_run(&self, dir: &Path) -> Result<(), FolderError> {
        let runs: Vec<(String, String)> = (self.analyses())
            .map(|a| (files::json(a.name, a.set), run_of(&a.device, &a.provenance)))
            .collect();
        let first = match &self.summary {
            Some(s) => (files::SUMMARY.to_owned(), run_of(&s.device, &s.provenance)),
            None => runs.first().cloned().expect("a loaded run holds a result"),
        };
        match runs.into_iter().find(|(_, run)| *run != first.1) {
            None => Ok(()),
            Some((other, other_run)) => Err(FolderError::MixedRuns {
                dir: dir.to_owned(),
                first: first.0,
                first_run: first.1,
                other,
                other_run,
            }),
        }
    }

    /// The experiments `summary.json` has a headline of whose result file is not in the
    /// folder, each as "NAME (NAME.json)".
    pub fn missing(&self) -> Vec<String> {
        let Some(summary) = &self.summary else {
            return Vec::new();
        };
        let summaries = [
            (KernelSet::Rust, Some(&summary.experiments)),
            (KernelSet::Cuda, summary.cuda_experiments.as_ref()),
        ];
        let named = |name: &str, entries: Option<&Entries>| {
            (entries.and_then(|e| e.get(name))).is_some_and(|h| !h.is_null())
        };
        (experiments::ALL.iter().map(|e| e.name()))
            .flat_map(|name| summaries.map(|(set, entries)| (name, set, entries)))
            .filter(|&(name, set, entries)| {
                named(name, entries) && self.analysis(name, set).is_none()
            })
            .map(|(name, set, _)| {
                format!("{} ({})", files::stem(name, set), files::json(name, set))
            })
            .collect()
    }

    /// The device and provenance of the first result measured with the Rust kernels,
    /// or, in a folder of the CUDA C++ twins' results alone, with those.
    pub fn header(&self) -> Option<(DeviceInfo, Provenance)> {
        let rust = self.analyses().find(|a| a.set == KernelSet::Rust);
        let a = rust.or_else(|| self.analyses().next())?;
        Some((a.device.clone(), a.provenance.clone()))
    }
}

/// Which run a file is of: when the run started and the GPU it ran on.
fn run_of(device: &DeviceInfo, provenance: &Provenance) -> String {
    let (started, gpu, ordinal) = (&provenance.started_utc, &device.name, device.ordinal);
    format!("the run started {started} on {gpu} (GPU {ordinal})")
}

/// What a file named `name` of a results folder or a comparison is ([`FileKind`]): a
/// run's results, its rendered output (or a file being written), or something else.
pub fn file_kind(name: &str) -> FileKind {
    let stems: Vec<&str> = experiments::ALL.iter().map(|e| e.name()).collect();
    let result = |stem: &str| {
        [KernelSet::Rust, KernelSet::Cuda]
            .iter()
            .any(|&set| name == files::json(stem, set))
    };
    if name == files::SUMMARY || stems.iter().any(|s| result(s)) {
        return FileKind::Results;
    }
    let rendered = [files::REPORT_MD, files::REPORT_HTML, files::COMPARISON];
    let typed = [".json", ".csv", ".svg", ".md", ".html"]
        .iter()
        .any(|e| name.ends_with(e));
    let of_ours = stems
        .iter()
        .chain(&["compare"])
        .any(|s| name.starts_with(s));
    if rendered.contains(&name)
        || (name.starts_with('.') && name.ends_with(".partial"))
        || (typed && of_ours)
    {
        FileKind::Output
    } else {
        FileKind::Foreign
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_corrupt_folders_are_clear_errors() {
        let dir = std::env::temp_dir().join(format!("streamlab-run-empty-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let err = |dir: &Path| SavedRun::load(dir).err().unwrap().to_string();
        let empty = err(&dir);
        assert!(empty.contains("holds no streamlab results"), "{empty}");
        let name = files::json(experiments::ALL[0].name(), KernelSet::Rust);
        // Each fault names the file and where, in one line: (contents, what is said).
        let faults = [
            (
                "{not json",
                "bounds.json is not JSON: key must be a string at line 1 column 2",
            ),
            (
                "{\"format\": 2",
                "bounds.json ends early, at line 1 column 12",
            ),
            (
                "{\"format\": 9}",
                "is in format 9, newer than this build reads (up to 2)",
            ),
            (
                "{}",
                "is missing: the file was not written by this streamlab",
            ),
        ];
        for (contents, said) in faults {
            std::fs::write(dir.join(&name), contents).unwrap();
            let fault = err(&dir);
            let one_line = fault.lines().count() == 1;
            assert!(fault.contains(said) && one_line, "{fault}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
