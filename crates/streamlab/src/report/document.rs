//! What the report says, independent of its format: the device and provenance, then per
//! experiment its parameters, the bound beside the result, the verification, a table,
//! the charts and the timelines. Markdown and HTML both render this.
use serde::Serialize;

use super::ReportError;
use super::chart::{self, copy_engine_bound_ms, sincos_mean, sincos_stream_counts};
use super::json::SavedRun;
use super::plot::{self, Plot};
use super::timeline::{self, CheckedTimeline};
use crate::results::{
    BoundsSummary, DeviceInfo, MatmulStreamsResult, MemcpyKernelResult, Provenance,
    SincosOverlapResult, SincosVariant, Timeline, Verification,
};
use crate::stats::Series;

/// How to read a timeline, shown above each section's timelines.
pub const TIMELINE_NOTE: &str = "Each bar starts at an event recorded before the operation, \
    when its stream reaches it, and ends at an event recorded after it. An operation queued \
    behind another on the same engine (copies in one direction share one copy engine) is \
    drawn from the moment its stream reached it, so read an engine's throughput from the \
    end times.";

/// The whole report.
#[derive(Debug, Clone)]
pub struct Document {
    /// `(label, value)` pairs describing the GPU.
    pub device: Vec<(String, String)>,
    /// `(label, value)` pairs: when and with what the results were measured.
    pub provenance: Vec<(String, String)>,
    /// `(label, value)` pairs: the copy bandwidths and launch cost the run measured;
    /// empty when it measured none.
    pub limits: Vec<(String, String)>,
    pub sections: Vec<Section>,
}

/// One experiment.
#[derive(Debug, Clone)]
pub struct Section {
    /// The experiment's name, also the stem of its files.
    pub name: &'static str,
    pub parameters: String,
    /// The measured result next to its model or physical bound.
    pub bound: String,
    pub passed: bool,
    pub verification: String,
    pub table: Table,
    pub charts: Vec<Figure>,
    pub timelines: Vec<TimelineFigure>,
}

/// A rectangular table of text.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
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
        let mut sections = Vec::new();
        if let Some(r) = &run.matmul_streams {
            sections.push(matmul_streams(r)?);
        }
        if let Some(r) = &run.memcpy_kernel {
            sections.push(memcpy_kernel(r)?);
        }
        if let Some(r) = &run.sincos_overlap {
            sections.push(sincos_overlap(r)?);
        }
        Ok(Document {
            device: header_device(run).map(device).unwrap_or_default(),
            provenance: header_provenance(run).map(provenance).unwrap_or_default(),
            limits: (run.summary.as_ref())
                .and_then(|s| s.bounds.as_ref())
                .map(limits)
                .unwrap_or_default(),
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

fn limits(b: &BoundsSummary) -> Vec<(String, String)> {
    let pairs = [
        (
            "host to device (pinned)",
            format!("{:.1} GB/s ({} ms per copy)", b.h2d_gbps, ms(b.h2d_ms)),
        ),
        (
            "device to host (pinned)",
            format!("{:.1} GB/s ({} ms per copy)", b.d2h_gbps, ms(b.d2h_ms)),
        ),
        (
            "both directions at once",
            format!("{:.1} GB/s", b.bidirectional_gbps),
        ),
        ("device to device", format!("{:.1} GB/s", b.d2d_gbps)),
        ("kernel launch", format!("{:.1} µs", b.launch_us)),
    ];
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
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

fn verification(v: &Verification) -> String {
    let verdict = if v.passed { "passed" } else { "FAILED" };
    format!(
        "{verdict}: {} ({} elements checked, {} mismatches, max abs error {:e})",
        v.detail, v.checked, v.mismatches, v.max_abs_error
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

fn spread(series: &Series) -> [String; 4] {
    let s = &series.summary;
    [ms(s.mean), ms(s.median), ms(s.min), ms(s.max)]
}

fn matmul_streams(r: &MatmulStreamsResult) -> Result<Section, ReportError> {
    let header = [
        "streams",
        "mean ms",
        "median ms",
        "min ms",
        "max ms",
        "speedup",
        "tasks/stream",
        "model ms",
        "mean / model",
    ];
    let rows = (r.points.iter())
        .map(|p| {
            let mut row = vec![p.streams.to_string()];
            row.extend(spread(&p.time));
            row.extend([
                format!("{:.2}×", p.speedup),
                p.tasks_per_stream.to_string(),
                ms(p.model_ms),
                format!("{:.3}", p.time.summary.mean / p.model_ms),
            ]);
            row
        })
        .collect();
    Ok(Section {
        name: "matmul-streams",
        parameters: parameters(&r.params)?,
        bound: matmul_bound(r),
        passed: r.verification.passed,
        verification: verification(&r.verification),
        table: table(&header, rows),
        charts: vec![chart(
            "matmul-streams.svg".into(),
            &chart::matmul_streams(r),
        )],
        timelines: timelines("matmul-streams", &r.timeline.iter().collect::<Vec<_>>())?,
    })
}

fn table(header: &[&str], rows: Vec<Vec<String>>) -> Table {
    Table {
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    }
}

fn matmul_bound(r: &MatmulStreamsResult) -> String {
    let worst = (r.points.iter())
        .map(|p| (p.time.summary.mean / p.model_ms, p.streams))
        .filter(|(ratio, _)| ratio.is_finite())
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let (Some(last), Some((ratio, streams))) = (r.points.last(), worst) else {
        return "no stream counts were measured".into();
    };
    format!(
        "Model: the slowest stream runs ceil({products}/s) products, each taking the \
         1-stream mean / {products}. With {} streams the model gives {} ms and the run took \
         {} ms ({:.2}× speedup); the furthest any stream count lies above the model is \
         {:.1}% ({streams} streams).",
        last.streams,
        ms(last.model_ms),
        ms(last.time.summary.mean),
        last.speedup,
        (ratio - 1.0) * 100.0,
        products = r.params.max_streams,
    )
}

fn memcpy_kernel(r: &MemcpyKernelResult) -> Result<Section, ReportError> {
    let header = [
        "streams",
        "cycles",
        "HtoD ms",
        "kernel ms",
        "DtoH ms",
        "total ms",
        "concurrent ms",
        "speedup",
        "Amdahl ideal",
    ];
    let rows = (r.rows.iter())
        .map(|row| {
            let means = [
                &row.htod,
                &row.kernel,
                &row.dtoh,
                &row.total,
                &row.concurrent,
            ];
            let mut cells = vec![row.streams.to_string(), row.cycles.to_string()];
            cells.extend(means.iter().map(|s| ms(s.summary.mean)));
            cells.push(format!("{:.2}×", row.speedup));
            cells.push(format!("{:.2}×", row.amdahl_ideal));
            cells
        })
        .collect();
    Ok(Section {
        name: "memcpy-kernel",
        parameters: parameters(&r.params)?,
        bound: memcpy_bound(r),
        passed: r.verification.passed,
        verification: verification(&r.verification),
        table: table(&header, rows),
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
    let best = (r.rows.iter())
        .filter(|row| row.speedup.is_finite())
        .max_by(|a, b| a.speedup.total_cmp(&b.speedup));
    let Some(best) = best else {
        return "no cycles values were measured".into();
    };
    let breakeven = r.breakeven_cycles.map_or_else(
        || "the kernel never outlasted the HtoD copy in this range".to_owned(),
        |c| format!("the kernel outlasts the HtoD copy from {c} cycles"),
    );
    format!(
        "Amdahl ideal: (HtoD + kernel + DtoH) / max(HtoD, kernel, DtoH), the speedup with \
         the three engines fully overlapped. Best measured speedup {:.2}× at {} cycles with \
         {} streams, where the ideal is {:.2}× ({:.0}% of it); {breakeven}.",
        best.speedup,
        best.cycles,
        best.streams,
        best.amdahl_ideal,
        best.speedup / best.amdahl_ideal * 100.0,
    )
}

fn sincos_overlap(r: &SincosOverlapResult) -> Result<Section, ReportError> {
    let header = [
        "variant",
        "streams",
        "mean ms",
        "median ms",
        "min ms",
        "max ms",
    ];
    let bound = copy_engine_bound_ms(r);
    let mut header: Vec<&str> = header.to_vec();
    header.push("mean / bound");
    let row = |label: &str, streams: String, series: &Series| {
        let mut cells = vec![label.to_owned(), streams];
        cells.extend(spread(series));
        cells.push(format!("{:.2}", series.summary.mean / bound));
        cells
    };
    let mut rows = vec![row("sequential", "1".into(), &r.sequential)];
    rows.extend((r.points.iter()).map(|p| row(p.variant.label(), p.streams.to_string(), &p.time)));
    rows.push(row("HtoD alone", "1".into(), &r.htod_alone));
    rows.push(row("kernel alone", "1".into(), &r.kernel_alone));
    rows.push(row("DtoH alone", "1".into(), &r.dtoh_alone));
    Ok(Section {
        name: "sincos-overlap",
        parameters: parameters(&r.params)?,
        bound: sincos_bound(r),
        passed: r.verification.passed,
        verification: verification(&r.verification),
        table: table(&header, rows),
        charts: vec![chart(
            "sincos-overlap.svg".into(),
            &chart::sincos_overlap(r),
        )],
        timelines: timelines("sincos-overlap", &r.timelines.iter().collect::<Vec<_>>())?,
    })
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
