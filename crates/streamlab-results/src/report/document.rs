//! What the report says, independent of its format: a line naming the machine and the
//! run, a banner when the run is incomplete, what the run found (each experiment's
//! finding in words and a row of numbers), the provenance, then a section per
//! experiment ([`super::section`]). Markdown and HTML both render this; the run
//! ([`crate::run`]) assembles it.
use super::section::Section;
use crate::run::summary::Findings;

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

impl Document {
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
