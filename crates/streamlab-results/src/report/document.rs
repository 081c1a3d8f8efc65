//! What the report says, independent of its format: the run's device and provenance, a
//! banner when the run is incomplete, the headline of every experiment, then a section
//! per experiment ([`super::section`]). Markdown and HTML both render this; the run
//! ([`crate::run`]) assembles it.
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
    /// `(label, value)` pairs: the GPU, and when and with what the results were measured.
    pub header: Vec<(String, String)>,
    /// One line per experiment, from `summary.json`.
    pub headlines: Option<Table>,
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
