//! Turning results into files and text: JSON and CSV as the run writes them, the tables
//! printed at the end, and the report rendered from the saved JSON. Nothing here touches
//! the GPU, so every output can be regenerated from a results folder.
//!
//! [`render`] reads a results folder and writes, beside the JSON:
//! 1. the charts (`matmul-streams.svg`, `memcpy-kernel-speedup.svg`,
//!    `memcpy-kernel-breakdown.svg`, `sincos-overlap.svg`, and `kernel-comparison.svg`
//!    when the folder has a kernel comparison),
//! 2. per traced iteration a Gantt chart `<experiment>-timeline[-N].svg` and the
//!    Chrome trace-event JSON `<experiment>-trace[-N].json`,
//! 3. `report.md` and the self-contained `report.html`.
pub mod chart;
pub mod csv;
pub mod document;
pub mod html;
pub mod json;
pub mod markdown;
pub mod plot;
pub mod svg;
pub mod table;
pub mod timeline;

/// A failure writing or reading result files.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a streamlab result: {source}")]
    Json {
        path: std::path::PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "{0} holds no streamlab results (no summary.json or experiment JSON): point --from at a folder written by a run"
    )]
    Empty(std::path::PathBuf),
    #[error("cannot draw the report: {0}")]
    Invalid(String),
}

/// Write `contents` to `dir/name`, naming the path on failure.
pub fn write_file(dir: &std::path::Path, name: &str, contents: &str) -> Result<(), ReportError> {
    let path = dir.join(name);
    std::fs::write(&path, contents).map_err(|source| ReportError::Io {
        action: "write",
        path,
        source,
    })
}

/// Render the report of the results in `dir` from its saved JSON (no GPU needed): print
/// the tables, then write the charts, timelines, traces, `report.md` and `report.html`
/// into `dir`.
pub fn render(dir: &std::path::Path) -> Result<(), ReportError> {
    let run = json::SavedRun::load(dir)?;
    let doc = document::Document::new(&run)?;
    for (name, contents) in doc.files() {
        write_file(dir, name, contents)?;
    }
    write_file(dir, "report.md", &markdown::render(&doc))?;
    write_file(dir, "report.html", &html::render(&doc))
}

/// The printed tables of every result in `run`, as a run prints them.
pub fn tables(run: &json::SavedRun) -> String {
    let mut out = String::new();
    if let Some(r) = &run.matmul_streams {
        out += &format!("\nmatmul-streams\n{}", table::matmul_streams(r));
    }
    if let Some(r) = &run.memcpy_kernel {
        out += &format!("\nmemcpy-kernel\n{}", table::memcpy_kernel(r));
    }
    if let Some(r) = &run.sincos_overlap {
        out += &format!("\nsincos-overlap\n{}", table::sincos_overlap(r));
    }
    if let Some(s) = &run.summary {
        out += &format!("\nsummary\n{}", table::summary(s));
    }
    out
}
