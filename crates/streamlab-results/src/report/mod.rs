//! Everything a run's results are rendered into: the tables printed at the end of each
//! experiment ([`table`]), the CSV files ([`csv`]), and the report rendered from a
//! results folder ([`render`]): the charts of each experiment ([`figures`] says what each
//! draws, [`chart`] is their data model, [`plot`] draws them), a Gantt chart and a Chrome
//! trace per traced timeline ([`timeline`]), and `report.md` and a self-contained
//! `report.html` ([`document`] and [`sections`] say what the report says, [`markdown`]
//! and [`html`] write it). Nothing here touches the
//! GPU, so a report can always be rendered again from the files.
pub mod chart;
pub mod csv;
pub mod document;
pub mod figures;
pub mod html;
pub mod markdown;
pub mod plot;
pub mod sections;
pub mod table;
pub mod timeline;

use std::path::Path;

use crate::derived::Derive;
use crate::folder::{self, FolderError, SavedRun};
use crate::saved::bounds::Bounds;
use crate::saved::compare_kernels::CompareKernels;
use crate::saved::graph_overlap::GraphOverlap;
use crate::saved::kernel_concurrency::KernelConcurrency;
use crate::saved::launch_overhead::LaunchOverhead;
use crate::saved::mapped::Mapped;
use crate::saved::matmul_streams::MatmulStreams;
use crate::saved::memcpy_kernel::MemcpyKernel;
use crate::saved::overlap::Overlap;
use crate::saved::overlap_map::OverlapMap;
use crate::saved::sincos_overlap::SincosOverlap;
use crate::saved::{KernelSet, files};

/// A failure rendering a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error("cannot draw the report: {0}")]
    Invalid(String),
    #[error("stopped after writing {written} of {total} report files")]
    Stopped { written: usize, total: usize },
}

/// How an experiment's result is printed and tabulated.
pub trait Render: Derive {
    /// The table printed after the experiment runs.
    fn table(result: &Self::Result) -> String;
    /// The experiment's CSV, if it writes one.
    fn csv(result: &Self::Result) -> Option<String>;
}

macro_rules! render {
    ($($experiment:ty => $table:ident, $csv:expr);* $(;)?) => {$(
        impl Render for $experiment {
            fn table(result: &Self::Result) -> String {
                table::$table(result)
            }
            fn csv(result: &Self::Result) -> Option<String> {
                let csv: fn(&Self::Result) -> Option<String> = $csv;
                csv(result)
            }
        }
    )*};
}

render!(
    Bounds => bounds, |_| None;
    CompareKernels => compare_kernels, |r| Some(csv::compare_kernels(r));
    SincosOverlap => sincos_overlap, |r| Some(csv::sincos_overlap(r));
    MatmulStreams => matmul_streams, |r| Some(csv::matmul_streams(r));
    MemcpyKernel => memcpy_kernel, |r| Some(csv::memcpy_kernel(r));
    KernelConcurrency => kernel_concurrency, |r| Some(csv::kernel_concurrency(r));
    LaunchOverhead => launch_overhead, |r| Some(csv::launch_overhead(r));
    GraphOverlap => graph_overlap, |r| Some(csv::graph_overlap(r));
    OverlapMap => overlap_map, |r| Some(csv::overlap_map(r));
    Mapped => mapped, |r| Some(csv::mapped(r));
    Overlap => overlap, |r| Some(csv::overlap(r));
);

/// Render the report of `run` into `out`: every chart, timeline and trace, then
/// `report.md` and `report.html`, each file written whole. `keep_going` is asked before
/// each file; when it says no, rendering stops there.
pub fn render(
    run: &SavedRun,
    out: &Path,
    keep_going: &dyn Fn() -> bool,
) -> Result<usize, ReportError> {
    let doc = document::Document::new(run)?;
    let mut outputs: Vec<(String, String)> = (doc.files().into_iter())
        .map(|(name, contents)| (name.to_owned(), contents.to_owned()))
        .collect();
    outputs.push((files::REPORT_MD.to_owned(), markdown::render(&doc)));
    outputs.push((files::REPORT_HTML.to_owned(), html::render(&doc)));
    let total = outputs.len();
    for (written, (name, contents)) in outputs.iter().enumerate() {
        if !keep_going() {
            return Err(ReportError::Stopped { written, total });
        }
        folder::write_atomic(out, name, contents.as_bytes())?;
    }
    Ok(total)
}

/// Every table of `run`, as the runs printed them.
pub fn tables(run: &SavedRun) -> String {
    fn add<E: Render>(out: &mut String, set: KernelSet, result: Option<&E::Result>) {
        if let Some(r) = result {
            *out += &format!("\n{}\n{}", table::heading(E::NAME, set), E::table(r));
        }
    }
    let (rust, cuda) = (KernelSet::Rust, KernelSet::Cuda);
    let mut out = String::new();
    add::<Bounds>(&mut out, rust, run.bounds.as_ref());
    add::<CompareKernels>(&mut out, rust, run.compare_kernels.as_ref());
    add::<SincosOverlap>(&mut out, rust, run.rust.sincos_overlap.as_ref());
    add::<SincosOverlap>(&mut out, cuda, run.cuda.sincos_overlap.as_ref());
    add::<MatmulStreams>(&mut out, rust, run.rust.matmul_streams.as_ref());
    add::<MatmulStreams>(&mut out, cuda, run.cuda.matmul_streams.as_ref());
    add::<MemcpyKernel>(&mut out, rust, run.rust.memcpy_kernel.as_ref());
    add::<MemcpyKernel>(&mut out, cuda, run.cuda.memcpy_kernel.as_ref());
    add::<KernelConcurrency>(&mut out, rust, run.kernel_concurrency.as_ref());
    add::<LaunchOverhead>(&mut out, rust, run.launch_overhead.as_ref());
    add::<GraphOverlap>(&mut out, rust, run.graph_overlap.as_ref());
    add::<OverlapMap>(&mut out, rust, run.overlap_map.as_ref());
    add::<Mapped>(&mut out, rust, run.mapped.as_ref());
    add::<Overlap>(&mut out, rust, run.overlap.as_ref());
    if let Some(s) = &run.summary {
        out += &format!("\nsummary\n{}", table::summary(s));
    }
    out
}
