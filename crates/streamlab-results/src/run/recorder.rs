//! A run being measured, written as it goes ([`Recorder`]): each experiment's results
//! written and held in memory as they come; at the end the summary and the report,
//! rendered from memory.
use std::path::{Path, PathBuf};

use super::report::{rendered, write_all};
use super::summary::summarize;
use super::{Held, Results, SavedRun};
use crate::derived::summary::{RunStatus, RunSummary};
use crate::experiment::Experiment;
use crate::folder::{self, FolderError};
use crate::report::ReportError;
use crate::saved::{KernelSet, files};

pub struct Recorder {
    dir: PathBuf,
    run: SavedRun,
}

impl Recorder {
    /// A run writing into `dir`, which exists.
    pub fn new(dir: &Path) -> Recorder {
        Recorder {
            dir: dir.to_owned(),
            run: SavedRun::default(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Analyse experiment `E`'s `results` (one per kernel set it ran with), write each
    /// one's JSON and CSV, and hold them; returns them as held.
    pub fn record<E: Experiment>(
        &mut self,
        results: Vec<(KernelSet, E::Result)>,
    ) -> Result<&dyn Held, FolderError> {
        let held = Results::<E>::new(results);
        write_all(&self.dir, &held.files()?)?;
        self.run.insert(Box::new(held));
        Ok(self.run.experiment(E::NAME).expect("just inserted"))
    }

    /// Finish the run: with `status` (a run of several experiments), its `summary.json`;
    /// then the report. Returns the run and its summary.
    pub fn finish(
        mut self,
        status: Option<RunStatus>,
    ) -> Result<(SavedRun, Option<RunSummary>), ReportError> {
        let summary = status.and_then(|s| summarize(&self.run, s));
        if let Some(s) = &summary {
            let json = folder::to_json(files::SUMMARY, s)?;
            folder::write_atomic(&self.dir, files::SUMMARY, json.as_bytes())?;
        }
        self.run.summary = summary.clone();
        if self.run.held().next().is_some() {
            write_all(&self.dir, &rendered(&self.run)?)?;
        }
        Ok((self.run, summary))
    }
}
