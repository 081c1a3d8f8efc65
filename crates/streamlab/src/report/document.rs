//! What the report says, independent of its format: the device and provenance, the
//! measured physical limits, the Rust kernels against their CUDA C++ twins, then per
//! experiment its parameters, the bound beside the result, the efficiency (bound /
//! measured) of every configuration, the verification, the tables, the charts and the
//! timelines. Markdown and HTML both render this.
//!
//! The bounds are the pure formulas of [`crate::bounds`]: matmul-streams against the
//! tasks-per-stream model, memcpy-kernel and sincos-overlap against the pipeline
//! fill/drain bound of their own stages measured alone, split into as many chunks as
//! streams. Where the same experiment also ran with the CUDA C++ kernels, its time per
//! configuration sits in the same table, with Rust / CUDA C++.
use serde::Serialize;

use super::ReportError;
use super::chart::{
    self, copy_engine_bound_ms, memcpy_stages, sincos_mean, sincos_stages, sincos_stream_counts,
};
use super::json::SavedRun;
use super::plot::{self, Plot};
use super::timeline::{self, CheckedTimeline};
use crate::bounds;
use crate::results::{
    Bounds, BoundsSummary, DeviceInfo, ExperimentsSummary, KernelComparison, MatmulStreamsResult,
    MemcpyKernelResult, MemcpyKernelRow, Provenance, RunSummary, SincosOverlapResult,
    SincosVariant, Timeline, Verification,
};
use crate::stats::Series;

/// How to read a timeline, shown above each section's timelines.
pub const TIMELINE_NOTE: &str = "Each bar starts at an event recorded before the operation, \
    when its stream reaches it, and ends at an event recorded after it. An operation queued \
    behind another on the same engine (copies in one direction share one copy engine) is \
    drawn from the moment its stream reached it, so read an engine's throughput from the \
    end times.";

/// The header of every efficiency column starts with this.
pub const EFFICIENCY: &str = "efficiency";

/// The whole report.
#[derive(Debug, Clone)]
pub struct Document {
    /// `(label, value)` pairs describing the GPU.
    pub device: Vec<(String, String)>,
    /// `(label, value)` pairs: when and with what the results were measured.
    pub provenance: Vec<(String, String)>,
    /// The copy bandwidths and launch cost the run measured, if it measured them.
    pub limits: Option<Limits>,
    /// The Rust kernels against CUDA C++ first, when the folder has either a kernel
    /// comparison or CUDA C++ runs, then one section per experiment.
    pub sections: Vec<Section>,
}

/// The measured physical limits.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Where the numbers come from.
    pub note: String,
    pub table: Table,
}

/// One part of the report: an experiment, or the kernel comparison.
#[derive(Debug, Clone)]
pub struct Section {
    /// A short name, also the HTML anchor; an experiment's name is the stem of its files.
    pub id: &'static str,
    pub title: String,
    pub parameters: String,
    /// Labelled paragraphs, e.g. `("Bound", …)`, `("Efficiency", …)`.
    pub notes: Vec<(String, String)>,
    pub passed: bool,
    pub verification: String,
    pub tables: Vec<Table>,
    pub charts: Vec<Figure>,
    pub timelines: Vec<TimelineFigure>,
}

/// A rectangular table of text, with an optional caption.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The index of the first column whose header starts with `prefix`.
    pub fn column(&self, prefix: &str) -> Option<usize> {
        self.header.iter().position(|h| h.starts_with(prefix))
    }
}

/// A chart written to `file` and shown inline.
#[derive(Debug, Clone)]
pub struct Figure {
    pub file: String,
    pub title: String,
    pub svg: String,
}

/// A Gantt chart and the trace-event JSON of the same iteration.
#[derive(Debug, Clone)]
pub struct TimelineFigure {
    pub figure: Figure,
    pub trace_file: String,
    pub trace: String,
}

impl Document {
    /// The report of everything in `run`.
    pub fn new(run: &SavedRun) -> Result<Document, ReportError> {
        let summary_bounds = run.summary.as_ref().and_then(|s| s.bounds.as_ref());
        let bidirectional_gbps = (run.bounds.as_ref().map(|b| b.bidirectional_gbps))
            .or(summary_bounds.map(|b| b.bidirectional_gbps));
        let mut sections: Vec<Section> = comparison(run)?.into_iter().collect();
        if let Some(r) = &run.matmul_streams {
            sections.push(matmul_streams(r, run.cuda.matmul_streams.as_ref())?);
        }
        if let Some(r) = &run.memcpy_kernel {
            let cuda = run.cuda.memcpy_kernel.as_ref();
            sections.push(memcpy_kernel(r, cuda, bidirectional_gbps)?);
        }
        if let Some(r) = &run.sincos_overlap {
            let cuda = run.cuda.sincos_overlap.as_ref();
            sections.push(sincos_overlap(r, cuda, bidirectional_gbps)?);
        }
        let limits = match (&run.bounds, summary_bounds) {
            (Some(b), _) => Some(measured_limits(b)),
            (None, Some(b)) => Some(summary_limits(b)),
            (None, None) => None,
        };
        Ok(Document {
            device: header_device(run).map(device).unwrap_or_default(),
            provenance: header_provenance(run).map(provenance).unwrap_or_default(),
            limits,
            sections,
        })
    }

    /// Every file the report writes beside `report.md` and `report.html`.
    pub fn files(&self) -> Vec<(&str, &str)> {
        let mut files = Vec::new();
        for s in &self.sections {
            files.extend(s.charts.iter().map(|f| (f.file.as_str(), f.svg.as_str())));
            for t in &s.timelines {
                files.push((t.figure.file.as_str(), t.figure.svg.as_str()));
                files.push((t.trace_file.as_str(), t.trace.as_str()));
            }
        }
        files
    }

    /// The section with `id`.
    pub fn section(&self, id: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.id == id)
    }
}

fn header_device(run: &SavedRun) -> Option<&DeviceInfo> {
    (run.summary.as_ref().map(|s| &s.device))
        .or(run.matmul_streams.as_ref().map(|r| &r.device))
        .or(run.memcpy_kernel.as_ref().map(|r| &r.device))
        .or(run.sincos_overlap.as_ref().map(|r| &r.device))
}

fn header_provenance(run: &SavedRun) -> Option<&Provenance> {
    (run.summary.as_ref().map(|s| &s.provenance))
        .or(run.matmul_streams.as_ref().map(|r| &r.provenance))
        .or(run.memcpy_kernel.as_ref().map(|r| &r.provenance))
        .or(run.sincos_overlap.as_ref().map(|r| &r.provenance))
}

fn device(d: &DeviceInfo) -> Vec<(String, String)> {
    let pairs = [
        ("GPU", format!("{} (ordinal {})", d.name, d.ordinal)),
        (
            "compute capability",
            format!("{}.{}", d.compute_capability.0, d.compute_capability.1),
        ),
        ("SMs", d.sm_count.to_string()),
        (
            "copy engines (asyncEngineCount)",
            d.copy_engines.to_string(),
        ),
        (
            "concurrent kernels",
            yes_no(d.concurrent_kernels).to_owned(),
        ),
        (
            "memory",
            format!(
                "{:.1} GiB",
                d.total_memory_bytes as f64 / (1u64 << 30) as f64
            ),
        ),
        ("CUDA driver", d.driver_cuda_version.clone()),
        (
            "PCIe link",
            d.pcie_link.clone().unwrap_or_else(|| "not reported".into()),
        ),
    ];
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

fn provenance(p: &Provenance) -> Vec<(String, String)> {
    let pairs = [
        ("started (UTC)", &p.started_utc),
        ("streamlab", &p.streamlab_version),
        ("PTX target", &p.ptx_target),
        ("kernels", &p.kernels),
    ];
    pairs
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.clone()))
        .collect()
}

/// `bytes` in MiB when whole, else in bytes.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

fn range_ms(series: &Series) -> String {
    format!("{} – {} ms", ms(series.summary.min), ms(series.summary.max))
}

const LIMITS_HEADER: [&str; 5] = ["measurement", "size", "median", "min – max", "rate"];

/// The limits from `bounds.json`: every measurement with its size and spread.
fn measured_limits(b: &Bounds) -> Limits {
    let per_copy = size(b.bytes);
    let rows = vec![
        vec![
            "host to device alone (pinned)".into(),
            per_copy.clone(),
            format!("{} ms", ms(b.h2d_ms)),
            range_ms(&b.h2d),
            format!("{:.1} GB/s", b.h2d_gbps),
        ],
        vec![
            "device to host alone (pinned)".into(),
            per_copy.clone(),
            format!("{} ms", ms(b.d2h_ms)),
            range_ms(&b.d2h),
            format!("{:.1} GB/s", b.d2h_gbps),
        ],
        vec![
            "both directions at once (two streams)".into(),
            format!("{per_copy} each way"),
            format!("{} ms", ms(b.bidirectional_ms)),
            range_ms(&b.bidirectional),
            format!("{:.1} GB/s in total", b.bidirectional_gbps),
        ],
        vec![
            "device to device".into(),
            format!("{per_copy} read and written"),
            format!("{} ms", ms(b.d2d_ms)),
            range_ms(&b.d2d),
            format!("{:.0} GB/s (read + write)", b.d2d_gbps),
        ],
        vec![
            "kernel launch (fill of a 1×1 matrix)".into(),
            format!("{} back-to-back launches per sample", b.params.launches),
            format!("{:.2} µs", b.launch_us),
            format!(
                "{:.2} – {:.2} µs",
                b.launch.summary.min * 1e3,
                b.launch.summary.max * 1e3
            ),
            format!("{:.0} launches/ms", 1e3 / b.launch_us),
        ],
    ];
    Limits {
        note: format!(
            "Measured at the start of the run (bounds.json), each the median of {} samples. \
             GB/s are 10^9 bytes per second.",
            b.params.repeats
        ),
        table: table(None, &LIMITS_HEADER, rows),
    }
}

/// The limits from `summary.json` alone, for folders without `bounds.json`.
fn summary_limits(b: &BoundsSummary) -> Limits {
    let unknown = || "–".to_owned();
    let rows = vec![
        vec![
            "host to device alone (pinned)".into(),
            unknown(),
            format!("{} ms", ms(b.h2d_ms)),
            unknown(),
            format!("{:.1} GB/s", b.h2d_gbps),
        ],
        vec![
            "device to host alone (pinned)".into(),
            unknown(),
            format!("{} ms", ms(b.d2h_ms)),
            unknown(),
            format!("{:.1} GB/s", b.d2h_gbps),
        ],
        vec![
            "both directions at once (two streams)".into(),
            unknown(),
            unknown(),
            unknown(),
            format!("{:.1} GB/s in total", b.bidirectional_gbps),
        ],
        vec![
            "device to device".into(),
            unknown(),
            unknown(),
            unknown(),
            format!("{:.0} GB/s (read + write)", b.d2d_gbps),
        ],
        vec![
            "kernel launch".into(),
            unknown(),
            format!("{:.2} µs", b.launch_us),
            unknown(),
            format!("{:.0} launches/ms", 1e3 / b.launch_us),
        ],
    ];
    Limits {
        note: "From summary.json (this folder has no bounds.json with the samples and sizes)."
            .into(),
        table: table(None, &LIMITS_HEADER, rows),
    }
}

/// `params` as `name value, …`, by name.
fn parameters<P: Serialize>(params: &P) -> Result<String, ReportError> {
    let value = serde_json::to_value(params)
        .map_err(|e| ReportError::Invalid(format!("parameters: {e}")))?;
    let Some(fields) = value.as_object() else {
        return Ok(value.to_string());
    };
    let pairs: Vec<String> = fields.iter().map(|(k, v)| format!("{k} {v}")).collect();
    Ok(pairs.join(", "))
}

fn verdict(passed: bool) -> &'static str {
    if passed { "passed" } else { "FAILED" }
}

fn verification(v: &Verification) -> String {
    format!(
        "{}: {} ({} elements checked, {} mismatches, max abs error {:e})",
        verdict(v.passed),
        v.detail,
        v.checked,
        v.mismatches,
        v.max_abs_error
    )
}

fn chart(file: String, plot: &Plot) -> Figure {
    Figure {
        file,
        title: plot.title.clone(),
        svg: plot::render(plot),
    }
}

/// Gantt and trace of each timeline, named `<name>-timeline[-N]` and `<name>-trace[-N]`.
fn timelines(name: &str, list: &[&Timeline]) -> Result<Vec<TimelineFigure>, ReportError> {
    let suffix = |i: usize| {
        if list.len() == 1 {
            String::new()
        } else {
            format!("-{}", i + 1)
        }
    };
    (list.iter().enumerate())
        .map(|(i, t)| {
            let checked = CheckedTimeline::new(t)?;
            Ok(TimelineFigure {
                figure: Figure {
                    file: format!("{name}-timeline{}.svg", suffix(i)),
                    title: t.title.clone(),
                    svg: timeline::gantt(checked),
                },
                trace_file: format!("{name}-trace{}.json", suffix(i)),
                trace: timeline::trace(checked)?,
            })
        })
        .collect()
}

fn ms(value: f64) -> String {
    format!("{value:.3}")
}

/// A ratio or an efficiency, "–" where it could not be formed.
fn ratio(value: f64) -> String {
    if value.is_finite() {
        format!("{value:.3}")
    } else {
        "–".to_owned()
    }
}

/// "1 stream", "N streams".
fn streams(n: usize) -> String {
    if n == 1 {
        "1 stream".to_owned()
    } else {
        format!("{n} streams")
    }
}

fn spread(series: &Series) -> [String; 4] {
    let s = &series.summary;
    [ms(s.mean), ms(s.median), ms(s.min), ms(s.max)]
}

fn table(caption: Option<String>, header: &[&str], rows: Vec<Vec<String>>) -> Table {
    Table {
        caption,
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    }
}

/// The CUDA C++ columns of a configuration: its time and Rust / CUDA C++, "–" where the
/// CUDA C++ run did not measure it.
fn cuda_cells(rust_ms: f64, cuda_ms: Option<f64>) -> [String; 2] {
    match cuda_ms {
        Some(c) => [ms(c), ratio(rust_ms / c)],
        None => ["–".to_owned(), "–".to_owned()],
    }
}

/// "from LOW (where) to HIGH (where)" over `(efficiency, where)` pairs.
fn efficiency_range(values: impl Iterator<Item = (f64, String)>) -> String {
    let values: Vec<(f64, String)> = values.filter(|(e, _)| e.is_finite()).collect();
    let low = values.iter().min_by(|a, b| a.0.total_cmp(&b.0));
    let high = values.iter().max_by(|a, b| a.0.total_cmp(&b.0));
    match (low, high) {
        (Some(low), Some(high)) => format!(
            "from {} ({}) to {} ({})",
            ratio(low.0),
            low.1,
            ratio(high.0),
            high.1
        ),
        _ => "not available".to_owned(),
    }
}

// Rust kernels against CUDA C++

/// The kernel comparison and the CUDA C++ runs side by side with the Rust ones; `None`
/// when the folder has neither.
fn comparison(run: &SavedRun) -> Result<Option<Section>, ReportError> {
    let summary = run.summary.as_ref();
    let experiments = summary.and_then(experiments_table);
    if run.kernel_comparison.is_none() && experiments.is_none() {
        return Ok(None);
    }
    let mut checks: Vec<(&str, &Verification)> = Vec::new();
    let mut notes = Vec::new();
    let mut tables = Vec::new();
    let mut charts = Vec::new();
    let mut params = String::new();
    if let Some(c) = &run.kernel_comparison {
        params = parameters(&c.params)?;
        notes.push(("Method".to_owned(), comparison_method(c)));
        notes.push(("CUDA C++ build".to_owned(), cuda_build(c)));
        tables.push(kernels_table(c));
        charts.push(chart(
            "kernel-comparison.svg".into(),
            &chart::kernel_comparison(c),
        ));
        checks.push(("kernel comparison", &c.verification));
    }
    if let Some(t) = experiments {
        notes.push((
            "Whole experiments".to_owned(),
            "Each experiment ran again with the CUDA C++ kernels, in the same run. Rust / \
             CUDA C++ is the total time of every configuration both measured (summary.json); \
             each experiment's table below also gives the CUDA C++ time per configuration."
                .to_owned(),
        ));
        tables.push(t);
    }
    let cuda = &run.cuda;
    let runs = [
        (
            "matmul-streams (CUDA C++)",
            cuda.matmul_streams.as_ref().map(|r| &r.verification),
        ),
        (
            "memcpy-kernel (CUDA C++)",
            cuda.memcpy_kernel.as_ref().map(|r| &r.verification),
        ),
        (
            "sincos-overlap (CUDA C++)",
            cuda.sincos_overlap.as_ref().map(|r| &r.verification),
        ),
    ];
    checks.extend(runs.into_iter().filter_map(|(name, v)| Some((name, v?))));
    let verification = if checks.is_empty() {
        "no outputs of the CUDA C++ kernels were saved in this folder".to_owned()
    } else {
        (checks.iter())
            .map(|(name, v)| format!("{name}: {}", self::verification(v)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    Ok(Some(Section {
        id: "rust-against-cuda",
        title: "Rust kernels against CUDA C++".into(),
        parameters: params,
        notes,
        passed: checks.iter().all(|(_, v)| v.passed),
        verification,
        tables,
        charts,
        timelines: vec![],
    }))
}

fn comparison_method(c: &KernelComparison) -> String {
    format!(
        "Each kernel on the experiments' buffers and launch shapes, launched alternately as \
         Rust and as CUDA C++ on one stream with an event between launches: {} timed launches \
         of each after {} untimed ones. Rust / CUDA C++ is the ratio of the medians: below 1 \
         the Rust kernel is faster. q1 – q3 are the lower and upper quartiles.",
        c.params.launches, c.params.warmup
    )
}

fn cuda_build(c: &KernelComparison) -> String {
    format!(
        "{}, options {}, PTX target {}.",
        c.cuda_build.compiler,
        c.cuda_build.options.join(" "),
        c.cuda_build.ptx_target
    )
}

fn quartile_range(q: &crate::results::Quartiles) -> String {
    format!("{:.4} – {:.4}", q.q1, q.q3)
}

fn kernels_table(c: &KernelComparison) -> Table {
    let header = [
        "kernel",
        "launch",
        "Rust median ms",
        "Rust q1 – q3 ms",
        "CUDA C++ median ms",
        "CUDA C++ q1 – q3 ms",
        "Rust / CUDA C++",
        "verification",
    ];
    let rows = (c.kernels.iter())
        .map(|k| {
            vec![
                k.kernel.clone(),
                k.launch.clone(),
                format!("{:.4}", k.rust_quartiles.median),
                quartile_range(&k.rust_quartiles),
                format!("{:.4}", k.cuda_quartiles.median),
                quartile_range(&k.cuda_quartiles),
                ratio(k.ratio_median),
                format!(
                    "{} ({} elements, max abs error {:.2e})",
                    verdict(k.verification.passed),
                    k.verification.checked,
                    k.verification.max_abs_error
                ),
            ]
        })
        .collect();
    table(
        Some("Each kernel case, median time per launch".into()),
        &header,
        rows,
    )
}

/// The headlines with each kernel set and the whole-experiment ratio; `None` without any
/// CUDA C++ figures in `summary.json`.
fn experiments_table(s: &RunSummary) -> Option<Table> {
    if s.cuda_experiments.is_none() && s.experiment_rust_over_cuda.is_none() {
        return None;
    }
    let rust = &s.experiments;
    let cuda = s.cuda_experiments.as_ref();
    let ratios = s.experiment_rust_over_cuda.as_ref();
    let pick = |f: fn(&ExperimentsSummary) -> Option<String>| {
        let text = |e: Option<&ExperimentsSummary>| e.and_then(f).unwrap_or("–".into());
        [text(Some(rust)), text(cuda)]
    };
    let rows: [(&str, [String; 2], Option<f64>); 3] = [
        (
            "matmul-streams",
            pick(|e| e.matmul_streams.as_ref().map(matmul_headline)),
            ratios.and_then(|r| r.matmul_streams),
        ),
        (
            "memcpy-kernel",
            pick(|e| e.memcpy_kernel.as_ref().map(memcpy_headline)),
            ratios.and_then(|r| r.memcpy_kernel),
        ),
        (
            "sincos-overlap",
            pick(|e| e.sincos_overlap.as_ref().map(sincos_headline)),
            ratios.and_then(|r| r.sincos_overlap),
        ),
    ];
    let rows = (rows.into_iter())
        .map(|(name, [r, c], x)| vec![name.to_owned(), r, c, x.map_or("–".into(), ratio)])
        .collect();
    Some(table(
        Some("Each experiment with the Rust and with the CUDA C++ kernels".into()),
        &[
            "experiment",
            "Rust kernels",
            "CUDA C++ kernels",
            "Rust / CUDA C++ (whole experiment)",
        ],
        rows,
    ))
}

fn matmul_headline(m: &crate::results::MatmulSummary) -> String {
    let (first, last) = (m.ms_by_streams.first(), m.ms_by_streams.last());
    match (first, last) {
        (Some(first), Some(last)) => format!(
            "1 stream {} ms, {} streams {} ms ({:.2}×)",
            ms(*first),
            m.ms_by_streams.len(),
            ms(*last),
            m.speedup_max_streams
        ),
        _ => "no stream counts".into(),
    }
}

fn memcpy_headline(m: &crate::results::MemcpySummary) -> String {
    let breakeven = m
        .breakeven_cycles
        .map_or("kernel never outlasts HtoD".to_owned(), |c| {
            format!("kernel outlasts HtoD from {c} cycles")
        });
    format!("best speedup {:.2}×; {breakeven}", m.best_speedup)
}

fn sincos_headline(s: &crate::results::SincosSummary) -> String {
    format!(
        "sequential {} ms, best {} ms ({}, {} streams)",
        ms(s.sequential_ms),
        ms(s.best_async_ms),
        s.best_async_variant.label(),
        s.best_async_streams
    )
}

// matmul-streams

fn matmul_streams(
    r: &MatmulStreamsResult,
    cuda: Option<&MatmulStreamsResult>,
) -> Result<Section, ReportError> {
    let mut header = vec![
        "streams",
        "mean ms",
        "median ms",
        "min ms",
        "max ms",
        "speedup",
        "tasks/stream",
        "model ms",
        "efficiency (model / mean)",
    ];
    if cuda.is_some() {
        header.extend(["CUDA C++ mean ms", "Rust / CUDA C++"]);
    }
    let cuda_mean = |streams: usize| {
        cuda.and_then(|c| c.points.iter().find(|p| p.streams == streams))
            .map(|p| p.time.summary.mean)
    };
    let rows = (r.points.iter())
        .map(|p| {
            let mean = p.time.summary.mean;
            let mut row = vec![p.streams.to_string()];
            row.extend(spread(&p.time));
            row.extend([
                format!("{:.2}×", p.speedup),
                p.tasks_per_stream.to_string(),
                ms(p.model_ms),
                ratio(bounds::efficiency(p.model_ms, mean)),
            ]);
            if cuda.is_some() {
                row.extend(cuda_cells(mean, cuda_mean(p.streams)));
            }
            row
        })
        .collect();
    let efficiency = efficiency_range((r.points.iter()).map(|p| {
        (
            bounds::efficiency(p.model_ms, p.time.summary.mean),
            streams(p.streams),
        )
    }));
    let mut notes = vec![
        ("Bound".to_owned(), matmul_bound(r)),
        (
            "Efficiency".to_owned(),
            format!("model / measured mean per stream count: {efficiency}."),
        ),
    ];
    if let Some(c) = cuda {
        notes.push(("CUDA C++ kernels".to_owned(), matmul_cuda(r, c)));
    }
    Ok(Section {
        id: "matmul-streams",
        title: "matmul-streams".into(),
        parameters: parameters(&r.params)?,
        notes,
        passed: r.verification.passed,
        verification: verification(&r.verification),
        tables: vec![table(None, &header, rows)],
        charts: vec![chart(
            "matmul-streams.svg".into(),
            &chart::matmul_streams(r),
        )],
        timelines: timelines("matmul-streams", &r.timeline.iter().collect::<Vec<_>>())?,
    })
}

fn matmul_bound(r: &MatmulStreamsResult) -> String {
    let Some(last) = r.points.last() else {
        return "no stream counts were measured".into();
    };
    format!(
        "Model: the slowest stream runs ceil({products}/s) products, each taking the \
         1-stream mean / {products}. With {} streams the model gives {} ms and the run took \
         {} ms ({:.2}× speedup).",
        last.streams,
        ms(last.model_ms),
        ms(last.time.summary.mean),
        last.speedup,
        products = r.params.max_streams,
    )
}

fn matmul_cuda(r: &MatmulStreamsResult, c: &MatmulStreamsResult) -> String {
    let ends = |x: &MatmulStreamsResult| {
        (x.points.first().zip(x.points.last()))
            .map(|(a, b)| (a.time.summary.mean, b.time.summary.mean, b.streams))
    };
    match (ends(r), ends(c)) {
        (Some((r1, rn, n)), Some((c1, cn, _))) => format!(
            "1 stream {} ms against Rust {} ms, {n} streams {} ms against Rust {} ms \
             (verification: {}).",
            ms(c1),
            ms(r1),
            ms(cn),
            ms(rn),
            verdict(c.verification.passed)
        ),
        _ => "no stream counts were measured".into(),
    }
}

// memcpy-kernel

/// A memcpy-kernel row's pipeline bound: its own stages split over its streams.
fn memcpy_bound_ms(row: &MemcpyKernelRow, copy_engines: i32) -> f64 {
    bounds::pipeline_bound_ms(memcpy_stages(row), row.streams, copy_engines)
}

fn memcpy_kernel(
    r: &MemcpyKernelResult,
    cuda: Option<&MemcpyKernelResult>,
    bidirectional_gbps: Option<f64>,
) -> Result<Section, ReportError> {
    let engines = r.device.copy_engines;
    let mut header = vec![
        "streams",
        "cycles",
        "HtoD ms",
        "kernel ms",
        "DtoH ms",
        "total ms",
        "concurrent ms",
        "speedup",
        "Amdahl ideal",
        "pipeline bound ms",
        "efficiency (bound / concurrent)",
    ];
    if cuda.is_some() {
        header.extend(["CUDA C++ concurrent ms", "Rust / CUDA C++"]);
    }
    let cuda_mean = |row: &MemcpyKernelRow| {
        cuda.and_then(|c| {
            (c.rows.iter()).find(|x| x.streams == row.streams && x.cycles == row.cycles)
        })
        .map(|x| x.concurrent.summary.mean)
    };
    let rows = (r.rows.iter())
        .map(|row| {
            let means = [
                &row.htod,
                &row.kernel,
                &row.dtoh,
                &row.total,
                &row.concurrent,
            ];
            let concurrent = row.concurrent.summary.mean;
            let bound = memcpy_bound_ms(row, engines);
            let mut cells = vec![row.streams.to_string(), row.cycles.to_string()];
            cells.extend(means.iter().map(|s| ms(s.summary.mean)));
            cells.push(format!("{:.2}×", row.speedup));
            cells.push(format!(
                "{:.2}×",
                bounds::amdahl_speedup(memcpy_stages(row), engines)
            ));
            cells.push(ms(bound));
            cells.push(ratio(bounds::efficiency(bound, concurrent)));
            if cuda.is_some() {
                cells.extend(cuda_cells(concurrent, cuda_mean(row)));
            }
            cells
        })
        .collect();
    let mut notes = vec![
        ("Bound".to_owned(), memcpy_bound(r)),
        (
            "Efficiency".to_owned(),
            memcpy_efficiency(r, bidirectional_gbps),
        ),
    ];
    if let Some(c) = cuda {
        notes.push(("CUDA C++ kernels".to_owned(), memcpy_cuda(r, c)));
    }
    Ok(Section {
        id: "memcpy-kernel",
        title: "memcpy-kernel".into(),
        parameters: parameters(&r.params)?,
        notes,
        passed: r.verification.passed,
        verification: verification(&r.verification),
        tables: vec![table(None, &header, rows)],
        charts: vec![
            chart(
                "memcpy-kernel-speedup.svg".into(),
                &chart::memcpy_speedup(r),
            ),
            chart(
                "memcpy-kernel-breakdown.svg".into(),
                &chart::memcpy_breakdown(r),
            ),
        ],
        timelines: timelines("memcpy-kernel", &r.timeline.iter().collect::<Vec<_>>())?,
    })
}

fn memcpy_bound(r: &MemcpyKernelResult) -> String {
    let engines = r.device.copy_engines;
    let best = (r.rows.iter())
        .filter(|row| row.speedup.is_finite())
        .max_by(|a, b| a.speedup.total_cmp(&b.speedup));
    let Some(best) = best else {
        return "no cycles values were measured".into();
    };
    let ideal = bounds::amdahl_speedup(memcpy_stages(best), engines);
    let breakeven = r.breakeven_cycles.map_or_else(
        || "the kernel never outlasted the HtoD copy in this range".to_owned(),
        |c| format!("the kernel outlasts the HtoD copy from {c} cycles"),
    );
    format!(
        "Amdahl ideal: (HtoD + kernel + DtoH) / busiest engine ({engines} copy engines), the \
         speedup with the engines fully overlapped. Best measured speedup {:.2}× at {} cycles \
         with {} streams, where the ideal is {ideal:.2}× ({:.0}% of it); {breakeven}.",
        best.speedup,
        best.cycles,
        best.streams,
        best.speedup / ideal * 100.0,
    )
}

fn memcpy_efficiency(r: &MemcpyKernelResult, bidirectional_gbps: Option<f64>) -> String {
    let engines = r.device.copy_engines;
    let range = efficiency_range((r.rows.iter()).map(|row| {
        let bound = memcpy_bound_ms(row, engines);
        (
            bounds::efficiency(bound, row.concurrent.summary.mean),
            format!("{}, {} cycles", streams(row.streams), row.cycles),
        )
    }));
    let mut text = format!(
        "Per row, the pipeline bound of its own HtoD, kernel and DtoH means split into as \
         many chunks as streams: the busiest engine plus the rest of the work over the \
         stream count (H + (K + D)/s while the copies are the bottleneck, K + (H + D)/s \
         once the kernel is). Pipeline bound / concurrent mean: {range}."
    );
    if let Some(rate) = bidirectional_gbps {
        let bytes = (r.params.size as u64) << 22;
        text += &format!(
            " Both copy directions share the link when they overlap: at the measured \
             bidirectional rate ({rate:.1} GB/s) the {} each way take at least {} ms.",
            size(bytes),
            ms(floor_ms(bytes, rate))
        );
    }
    text
}

/// Milliseconds to move `bytes` each way at `gbps` for both directions together.
fn floor_ms(bytes: u64, gbps: f64) -> f64 {
    2.0 * bytes as f64 / (gbps * 1e6)
}

fn memcpy_cuda(r: &MemcpyKernelResult, c: &MemcpyKernelResult) -> String {
    let breakeven = |x: &MemcpyKernelResult| {
        x.breakeven_cycles
            .map_or("never".to_owned(), |c| format!("from {c} cycles"))
    };
    let best = |x: &MemcpyKernelResult| {
        x.rows
            .iter()
            .map(|row| row.speedup)
            .fold(f64::NAN, f64::max)
    };
    format!(
        "best speedup {:.2}× against Rust {:.2}×; the kernel outlasts the HtoD copy {} \
         against Rust {} (verification: {}).",
        best(c),
        best(r),
        breakeven(c),
        breakeven(r),
        verdict(c.verification.passed)
    )
}

// sincos-overlap

fn sincos_overlap(
    r: &SincosOverlapResult,
    cuda: Option<&SincosOverlapResult>,
    bidirectional_gbps: Option<f64>,
) -> Result<Section, ReportError> {
    let engines = r.device.copy_engines;
    let stages = sincos_stages(r);
    let copy_bound = copy_engine_bound_ms(r);
    let mut header = vec![
        "variant",
        "streams",
        "mean ms",
        "median ms",
        "min ms",
        "max ms",
        "pipeline bound ms",
        "efficiency (pipeline bound / mean)",
        "copy-engine bound / mean",
    ];
    if cuda.is_some() {
        header.extend(["CUDA C++ mean ms", "Rust / CUDA C++"]);
    }
    let configurations = sincos_configurations(r);
    let rows = (configurations.iter())
        .map(|&(variant, streams, series)| {
            let mean = series.summary.mean;
            let bound = bounds::pipeline_bound_ms(stages, streams, engines);
            let mut cells = vec![variant.label().to_owned(), streams.to_string()];
            cells.extend(spread(series));
            cells.extend([
                ms(bound),
                ratio(bounds::efficiency(bound, mean)),
                ratio(bounds::efficiency(copy_bound, mean)),
            ]);
            if let Some(c) = cuda {
                cells.extend(cuda_cells(mean, sincos_time(c, variant, streams)));
            }
            cells
        })
        .collect();
    let mut part_header = vec!["part", "mean ms", "median ms", "min ms", "max ms"];
    if cuda.is_some() {
        part_header.extend(["CUDA C++ mean ms", "Rust / CUDA C++"]);
    }
    let parts = [
        ("HtoD", &r.htod_alone, cuda.map(|c| &c.htod_alone)),
        ("kernel", &r.kernel_alone, cuda.map(|c| &c.kernel_alone)),
        ("DtoH", &r.dtoh_alone, cuda.map(|c| &c.dtoh_alone)),
    ];
    let part_rows = (parts.into_iter())
        .map(|(name, series, other)| {
            let mut cells = vec![name.to_owned()];
            cells.extend(spread(series));
            if cuda.is_some() {
                let other = other.map(|s| s.summary.mean);
                cells.extend(cuda_cells(series.summary.mean, other));
            }
            cells
        })
        .collect();
    let mut notes = vec![
        ("Bound".to_owned(), sincos_bound(r)),
        (
            "Efficiency".to_owned(),
            sincos_efficiency(r, bidirectional_gbps),
        ),
    ];
    if let Some(c) = cuda {
        notes.push(("CUDA C++ kernels".to_owned(), sincos_cuda(r, c)));
    }
    Ok(Section {
        id: "sincos-overlap",
        title: "sincos-overlap".into(),
        parameters: parameters(&r.params)?,
        notes,
        passed: r.verification.passed,
        verification: verification(&r.verification),
        tables: vec![
            table(
                Some("Every configuration against its bounds".into()),
                &header,
                rows,
            ),
            table(
                Some("Each part alone over the whole array (the stages of the bounds)".into()),
                &part_header,
                part_rows,
            ),
        ],
        charts: vec![chart(
            "sincos-overlap.svg".into(),
            &chart::sincos_overlap(r, bidirectional_gbps.map(|g| floor_ms(sincos_bytes(r), g))),
        )],
        timelines: timelines("sincos-overlap", &r.timelines.iter().collect::<Vec<_>>())?,
    })
}

/// Sequential (one stream) and every async point, as `(variant, streams, times)`.
fn sincos_configurations(r: &SincosOverlapResult) -> Vec<(SincosVariant, usize, &Series)> {
    std::iter::once((SincosVariant::Sequential, 1, &r.sequential))
        .chain((r.points.iter()).map(|p| (p.variant, p.streams, &p.time)))
        .collect()
}

/// The mean of `variant` at `streams` in `r`, if measured (sequential at one stream).
fn sincos_time(r: &SincosOverlapResult, variant: SincosVariant, streams: usize) -> Option<f64> {
    (sincos_configurations(r).into_iter())
        .find(|(v, s, _)| *v == variant && *s == streams)
        .map(|(.., series)| series.summary.mean)
}

fn sincos_bound(r: &SincosOverlapResult) -> String {
    let bound = copy_engine_bound_ms(r);
    let best = (sincos_stream_counts(r).into_iter())
        .flat_map(|s| [SincosVariant::Async1, SincosVariant::Async2].map(|v| (v, s)))
        .map(|(v, s)| (sincos_mean(r, v, s), v, s))
        .filter(|(mean, ..)| mean.is_finite())
        .min_by(|a, b| a.0.total_cmp(&b.0));
    let alone = format!(
        "Copy-engine bound: max(HtoD alone {}, DtoH alone {}) = {} ms (kernel alone {} ms), \
         since copies in one direction share one engine. Sequential {} ms.",
        ms(r.htod_alone.summary.mean),
        ms(r.dtoh_alone.summary.mean),
        ms(bound),
        ms(r.kernel_alone.summary.mean),
        ms(r.sequential.summary.mean),
    );
    match best {
        Some((mean, variant, streams)) => format!(
            "{alone} Best overlap: {} with {streams} streams, {} ms = {:.2}× the bound.",
            variant.label(),
            ms(mean),
            mean / bound
        ),
        None => format!("{alone} No asynchronous variant was measured."),
    }
}

fn sincos_efficiency(r: &SincosOverlapResult, bidirectional_gbps: Option<f64>) -> String {
    let stages = sincos_stages(r);
    let engines = r.device.copy_engines;
    let range = efficiency_range((sincos_configurations(r).into_iter()).map(|(v, s, t)| {
        let bound = bounds::pipeline_bound_ms(stages, s, engines);
        (
            bounds::efficiency(bound, t.summary.mean),
            format!("{}, {}", v.label(), streams(s)),
        )
    }));
    let mut text = format!(
        "Per configuration, the pipeline bound of the parts alone split into as many chunks \
         as streams (H + (K + D)/s while the copies are the bottleneck; sequential is s = 1): \
         pipeline bound / mean {range}. The iterations run back to back, so one iteration's \
         copies in overlap the previous one's copies out: a value above 1 means the run beat \
         the single-iteration bound that way, and the copy-engine bound (its own column) is \
         the floor for many iterations."
    );
    if let Some(rate) = bidirectional_gbps {
        let bytes = sincos_bytes(r);
        let floor = floor_ms(bytes, rate);
        let best = (r.points.iter())
            .map(|p| p.time.summary.mean)
            .fold(f64::INFINITY, f64::min);
        text += &format!(
            " With both copy directions running at once they share the link, so the real \
             floor is the measured bidirectional rate (bounds.json, {rate:.1} GB/s for both \
             together): 2 × {} / {rate:.1} GB/s = {} ms",
            size(bytes),
            ms(floor),
        );
        text += &if best.is_finite() {
            format!(
                "; the best asynchronous mean reaches {} of it.",
                ratio(bounds::efficiency(floor, best))
            )
        } else {
            ".".to_owned()
        };
    }
    text
}

/// Bytes of the sincos array, moved each way.
fn sincos_bytes(r: &SincosOverlapResult) -> u64 {
    (r.params.elements * size_of::<f32>()) as u64
}

fn sincos_cuda(r: &SincosOverlapResult, c: &SincosOverlapResult) -> String {
    let best = |x: &SincosOverlapResult| {
        (x.points.iter())
            .min_by(|a, b| a.time.summary.mean.total_cmp(&b.time.summary.mean))
            .map(|p| (p.time.summary.mean, p.variant, p.streams))
    };
    let kernel = format!(
        "kernel alone {} ms against Rust {} ms",
        ms(c.kernel_alone.summary.mean),
        ms(r.kernel_alone.summary.mean)
    );
    match (best(c), best(r)) {
        (Some((cm, cv, cs)), Some((rm, rv, rs))) => format!(
            "sequential {} ms against Rust {} ms; best {} ms ({}, {cs} streams) against Rust \
             {} ms ({}, {rs} streams); {kernel} (verification: {}).",
            ms(c.sequential.summary.mean),
            ms(r.sequential.summary.mean),
            ms(cm),
            cv.label(),
            ms(rm),
            rv.label(),
            verdict(c.verification.passed)
        ),
        _ => format!("{kernel}."),
    }
}
