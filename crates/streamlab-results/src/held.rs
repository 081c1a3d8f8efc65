//! An experiment as the generic parts reach it without its types: in the registry
//! ([`Registered`]), and its results in a run, each analysed once ([`Held`]).
use std::marker::PhantomData;
use std::path::Path;

use serde::Serialize;

use crate::derived::trace::TraceChecks;
use crate::experiment::{Analysis, Analyzed, Experiment, Saved};
use crate::folder::{self, FolderError};
use crate::report::ReportError;
use crate::report::fit::Width;
use crate::report::section::Section;
use crate::report::table;
use crate::saved::{KernelSet, files};
use crate::stats;

/// One registered experiment, as the generic parts reach it without its types.
pub trait Registered: Sync {
    /// Its name ([`Experiment::NAME`]).
    fn name(&self) -> &'static str;
    /// Whether it runs with both kernel sets ([`Experiment::USES_KERNEL_SETS`]).
    fn uses_kernel_sets(&self) -> bool;
    /// The keys of its facts in `summary.json` ([`Experiment::FACTS`]).
    fn facts(&self) -> &'static [&'static str];
    /// Its results in `dir`, each analysed; `None` where the folder holds none.
    fn load(&self, dir: &Path) -> Result<Option<Box<dyn Held>>, FolderError>;
}

/// Experiment `E` in the registry.
pub struct Entry<E>(PhantomData<fn() -> E>);

impl<E> Entry<E> {
    pub const NEW: Entry<E> = Entry(PhantomData);
}

impl<E: Experiment> Registered for Entry<E> {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn uses_kernel_sets(&self) -> bool {
        E::USES_KERNEL_SETS
    }

    fn facts(&self) -> &'static [&'static str] {
        E::FACTS
    }

    fn load(&self, dir: &Path) -> Result<Option<Box<dyn Held>>, FolderError> {
        Ok(Results::<E>::load(dir)?.map(|r| Box::new(r) as Box<dyn Held>))
    }
}

/// One experiment's results in a run, as the generic parts reach them.
pub trait Held: Send + Sync {
    /// Its experiment, as the registry holds it.
    fn experiment(&self) -> &'static dyn Registered;
    /// The experiment's name.
    fn name(&self) -> &'static str {
        self.experiment().name()
    }
    /// The analysis of each result it holds, the Rust kernels' first.
    fn analyses(&self) -> Vec<&Analysis>;
    /// The files of each result, by name: its JSON and its CSV files.
    fn files(&self) -> Result<Vec<(String, String)>, FolderError>;
    /// What is printed after the result measured with `set`, `width` wide: its heading,
    /// whether it is complete, its tables and its verification.
    fn printed(&self, set: KernelSet, width: Width) -> Option<String>;
    /// Its section of the report, led by its headline and noted with its noise; `None`
    /// without a Rust kernels' result.
    fn section(&self) -> Result<Option<Section>, ReportError>;
}

/// Experiment `E`'s results in a run: one per kernel set it ran with.
pub struct Results<E: Experiment> {
    pub rust: Option<Analyzed<E>>,
    pub cuda: Option<Analyzed<E>>,
}

/// The kernel sets experiment `E` can be measured with.
pub fn sets<E: Experiment>() -> &'static [KernelSet] {
    if E::USES_KERNEL_SETS {
        &[KernelSet::Rust, KernelSet::Cuda]
    } else {
        &[KernelSet::Rust]
    }
}

impl<E: Experiment> Results<E> {
    /// `results`, each measured with its kernel set, analysed.
    pub fn new(results: impl IntoIterator<Item = (KernelSet, E::Result)>) -> Results<E> {
        let mut out = Results {
            rust: None,
            cuda: None,
        };
        for (set, result) in results {
            let analyzed = Some(Analyzed::new(set, result));
            match set {
                KernelSet::Rust => out.rust = analyzed,
                KernelSet::Cuda => out.cuda = analyzed,
            }
        }
        out
    }

    /// Its results in `dir`; `None` where the folder holds none.
    pub fn load(dir: &Path) -> Result<Option<Results<E>>, FolderError> {
        let mut found = Vec::new();
        for &set in sets::<E>() {
            let file = files::json(E::NAME, set);
            let Some(result) = folder::read_json::<E::Result>(dir, &file)? else {
                continue;
            };
            // The set it records must be the one its name says.
            let kernels = result.provenance().kernels;
            if kernels != set {
                return Err(FolderError::WrongKernels {
                    path: dir.join(file),
                    found: kernels.label(),
                    expected: set.label(),
                });
            }
            found.push((set, result));
        }
        Ok((!found.is_empty()).then(|| Results::new(found)))
    }

    /// The result measured with `set`, analysed.
    pub fn get(&self, set: KernelSet) -> Option<&Analyzed<E>> {
        match set {
            KernelSet::Rust => self.rust.as_ref(),
            KernelSet::Cuda => self.cuda.as_ref(),
        }
    }

    fn each(&self) -> impl Iterator<Item = &Analyzed<E>> {
        self.rust.iter().chain(&self.cuda)
    }
}

/// What an experiment's JSON holds: its result, its derived numbers and its trace checks.
#[derive(Serialize)]
struct SavedFile<'a, R: Serialize, D: Serialize> {
    #[serde(flatten)]
    result: &'a R,
    derived: &'a D,
    trace_checks: &'a [TraceChecks],
}

/// A section's note on which measured rows of `analyses` ended above the noise target,
/// the CUDA C++ twins' marked "C++: ".
fn noise_note(analyses: &[&Analysis]) -> String {
    let rows: Vec<(String, f64)> = (analyses.iter())
        .flat_map(|a| {
            let prefix = match a.set {
                KernelSet::Rust => "",
                KernelSet::Cuda => "C++: ",
            };
            (a.rows.iter())
                .filter_map(move |row| Some((format!("{prefix}{}", row.label), row.noise?)))
        })
        .collect();
    stats::noise_target_note(&rows)
}

impl<E: Experiment> Held for Results<E> {
    fn experiment(&self) -> &'static dyn Registered {
        &Entry::<E>::NEW
    }

    fn analyses(&self) -> Vec<&Analysis> {
        self.each().map(|a| &a.analysis).collect()
    }

    fn files(&self) -> Result<Vec<(String, String)>, FolderError> {
        let mut out = Vec::new();
        for a in self.each() {
            let set = a.analysis.set;
            let file = SavedFile {
                result: &a.result,
                derived: &a.derived,
                trace_checks: &a.analysis.trace_checks,
            };
            let name = files::json(E::NAME, set);
            out.push((name.clone(), folder::to_json(&name, &file)?));
            for csv in E::csv(&a.result, &a.derived) {
                out.push((csv.file(E::NAME, set), csv.contents));
            }
        }
        Ok(out)
    }

    fn printed(&self, set: KernelSet, width: Width) -> Option<String> {
        let a = self.get(set)?;
        let twin = match set {
            KernelSet::Rust => self.cuda.as_ref().map(Analyzed::with),
            KernelSet::Cuda => None,
        };
        let mut out = format!(
            "\n{}\n{}",
            table::heading(E::NAME, set),
            table::incomplete(a.analysis.provenance.complete)
        );
        for t in E::tables(&a.result, &a.derived, twin) {
            out += &width.table(&t);
        }
        out += &width.lines(&format!("verification: {}", a.analysis.verification.detail));
        Some(out)
    }

    fn section(&self) -> Result<Option<Section>, ReportError> {
        let Some(rust) = &self.rust else {
            return Ok(None);
        };
        let mut s = E::section(rust, self.cuda.as_ref())?;
        if s.tables.is_empty() {
            s.tables = E::tables(
                &rust.result,
                &rust.derived,
                self.cuda.as_ref().map(Analyzed::with),
            );
        }
        let finding = &rust.analysis.summary.overview.finding;
        // The headline line, as one sentence.
        let numbers = (rust.analysis.summary.line.as_deref())
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "));
        if finding.is_empty() {
            s.verdict = s.lead(numbers);
        } else {
            s.verdict = s.lead(Some(finding.clone()));
            if let Some(line) = numbers {
                s.notes.insert(0, ("In numbers".to_owned(), line));
            }
        }
        s.note("Noise", noise_note(&self.analyses()));
        Ok(Some(s))
    }
}
