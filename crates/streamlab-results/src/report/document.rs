//! What the report says, independent of its format: a line naming the machine and the
//! run, a banner when the run is incomplete, what the run found (each experiment's
//! finding in words and a row of numbers), the provenance, then a section per
//! experiment ([`super::section`]). Markdown and HTML both render this; the run
//! ([`crate::run`]) assembles it.
use super::glossary::Linker;
use super::section::Section;
use super::table::Table;

/// The whole report.
#[derive(Debug, Clone)]
pub struct Document {
    /// Set when the run did not measure everything it set out to.
    pub banner: Option<String>,
    /// Results the run's `summary.json` names that the folder no longer holds, e.g.
    /// "NAME (NAME.json)": their sections are missing.
    pub missing: Vec<String>,
    /// The GPU, when the run started and how long it took, in one line.
    pub lede: Option<String>,
    /// `(label, value)` pairs: the GPU, and when and with what the results were measured.
    pub header: Vec<(String, String)>,
    /// What the run found.
    pub findings: Option<Findings>,
    pub sections: Vec<Section>,
}

/// How a format prints the parts of the report after its findings and provenance.
pub struct Printer {
    /// The line pointing to the glossary and the list of `(title, anchor)`.
    pub contents: fn(&[(&str, &str)]) -> String,
    pub section: fn(&Section, &mut Linker) -> String,
    /// The note on reading the timelines.
    pub reading_timelines: fn(&mut Linker) -> String,
    pub glossary: fn() -> String,
}

impl Document {
    /// The report after its findings and provenance, in `printer`'s format: the
    /// contents, each section, how to read the timelines where there are some, and the
    /// glossary; each term linked to the glossary where it is first used.
    pub fn body(&self, printer: &Printer) -> String {
        if self.sections.is_empty() {
            return String::new();
        }
        let mut out = (printer.contents)(&self.contents());
        let mut linker = Linker::default();
        for s in &self.sections {
            out += &(printer.section)(s, &mut linker);
        }
        if self.has_timelines() {
            out += &(printer.reading_timelines)(&mut linker);
        }
        out + &(printer.glossary)()
    }

    /// The report's contents after its findings, as `(title, anchor)`: each section, the
    /// note on reading the timelines where a section has some, and the glossary.
    pub fn contents(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = (self.sections.iter())
            .map(|s| (s.title.as_str(), s.id.as_str()))
            .collect();
        if self.has_timelines() {
            out.push(("Reading the timelines", "reading-the-timelines"));
        }
        out.push(("Glossary", "glossary"));
        out
    }

    /// Whether any section has timelines: then the report says once how to read them.
    pub fn has_timelines(&self) -> bool {
        self.sections.iter().any(|s| !s.timelines.is_empty())
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

/// What a run found: each experiment's finding in words, and a row of numbers per
/// experiment. The report's first screen and the end of `run-all` show it.
#[derive(Debug, Clone)]
pub struct Findings {
    /// (experiment, its finding), in the run's order.
    pub words: Vec<(String, String)>,
    /// experiment | result | against its bound | Rust / C++ | noise | verified.
    pub table: Table,
    /// How many results it holds, and how many of them passed their verification.
    pub results: usize,
    pub verified: usize,
    /// The results whose GPU held its clocks down while they ran: (file stem, why).
    pub held_back: Vec<(String, String)>,
    /// How many results did not read every GPU's clocks (not recorded, or NVML refused):
    /// whether their GPUs held back is not known.
    pub clocks_unknown: usize,
}

impl Findings {
    /// The line saying how many results have no clocks to tell a GPU held back, if any.
    pub fn clocks_unknown_line(&self) -> Option<String> {
        (self.clocks_unknown > 0).then(|| {
            format!(
                "Clocks not recorded or unread for {} of {} results: whether the GPU held back during them is not known",
                self.clocks_unknown, self.results
            )
        })
    }
}

/// What the columns of [`Findings::table`] mean.
pub const FINDINGS_KEY: &str = "Against its bound: the time over the least time this machine allows, from limits measured in the same run (1.00× is the limit reached). Rust / C++: Rust kernels' time over their CUDA C++ twins' (below 1, Rust is faster). Noisy rows: measured rows whose repeated samples spread more than 1%, of those that can show a spread. Verified: every output element checked against a reference.";
