//! What results are rendered with: tables, CSV and measured rows declared once
//! ([`table`]) and fitted to a width as text ([`fit`]), figures as data ([`figures`],
//! [`chart`]) drawn by one plotting module ([`plot`]), a Gantt chart and a Chrome trace
//! per traced timeline ([`timeline`]), an experiment's words ([`words`]) and section
//! ([`section`]), what made a result ([`provenance`]), and the report itself
//! ([`document`]): a page ([`page`]) that the comparison is too, walked once
//! ([`printer`]) as Markdown ([`markdown`]) and as self-contained HTML ([`html`]), its terms
//! explained in a [`glossary`]. Nothing here touches the GPU or knows any one
//! experiment: each experiment says what it shows, and [`crate::run`] puts the report
//! together.
pub mod chart;
pub mod document;
pub mod figures;
pub mod fit;
pub mod glossary;
pub mod html;
pub mod markdown;
pub mod page;
pub mod plot;
pub mod printer;
pub mod provenance;
pub mod section;
pub mod table;
pub mod text;
pub mod timeline;
pub mod words;

use crate::folder::FolderError;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error("cannot draw the report: {0}")]
    Invalid(String),
    #[error("stopped after writing {written} of {total} report files")]
    Stopped { written: usize, total: usize },
}
