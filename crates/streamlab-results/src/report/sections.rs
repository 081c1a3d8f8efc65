//! The report's sections, one per experiment in the folder: what it measures, its
//! parameters, its bound and how the result compares, its tables (with the CUDA C++
//! kernels' figures beside the Rust ones where both ran), its charts and its traced
//! timelines. Every number is read from [`crate::derived`].
use serde::Serialize;

use super::ReportError;
use super::document::{Figure, Section, Table, TimelineFigure};
use super::figures;
use super::table::{noise, times};
use crate::derived::Derive;
use crate::derived::overlap_map::PAYOFF;
use crate::derived::pipeline::SLACK;
use crate::derived::trace::{MIN_CHECKED_BYTES, TOLERANCE};
use crate::folder::SavedRun;
use crate::saved::bounds::{Bounds, BoundsResult};
use crate::saved::compare_kernels::{CompareKernels, KernelComparison};
use crate::saved::graph_overlap::{GraphOverlap, GraphOverlapResult};
use crate::saved::kernel_concurrency::{KernelConcurrency, KernelConcurrencyResult};
use crate::saved::launch_overhead::{LaunchOverhead, LaunchOverheadResult};
use crate::saved::mapped::{Mapped, MappedResult};
use crate::saved::matmul_streams::{MatmulStreams, MatmulStreamsResult};
use crate::saved::memcpy_kernel::{MemcpyKernel, MemcpyKernelResult};
use crate::saved::overlap::{Overlap, OverlapResult};
use crate::saved::overlap_map::{OverlapMap, OverlapMapResult};
use crate::saved::sincos_overlap::{SincosOverlap, SincosOverlapResult, SincosVariant};
use crate::saved::timeline::Timeline;
use crate::saved::{Experiment, KernelSet, Provenance, Verification, files};

/// A number with `decimals` decimals, "–" when not finite.
fn num(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        "–".into()
    }
}

/// The flag of a row that beat the bound built from the measured rates, as a cell.
fn flag(beyond: bool) -> String {
    if beyond {
        "beat its bound as built: a rate was under-measured, bound lowered to the row".into()
    } else {
        String::new()
    }
}

/// `p` as "name: value" pairs.
fn parameters<P: Serialize>(p: &P) -> String {
    match serde_json::to_value(p) {
        Ok(serde_json::Value::Object(map)) => (map.iter())
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| {
                format!(
                    "{}: {}",
                    k.replace('_', " "),
                    v.to_string().trim_matches('"')
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    }
}

fn section<E: Experiment>(title: &str, about: &str, params: String, r: &E::Result) -> Section {
    let v: &Verification = E::verification(r);
    Section {
        id: E::NAME.to_owned(),
        title: title.to_owned(),
        about: about.to_owned(),
        parameters: params,
        notes: (super::table::link(E::provenance(r)).into_iter())
            .map(|l| ("Machine".to_owned(), l))
            .collect(),
        complete: E::provenance(r).complete,
        verification: (v.passed, v.detail.clone()),
        tables: Vec::new(),
        figures: Vec::new(),
        timelines: Vec::new(),
    }
}

fn draw(models: Vec<figures::FigureModel>) -> Vec<Figure> {
    models.into_iter().map(Figure::draw).collect()
}

/// The timeline figures of `timelines`, files named after `stem`.
fn timelines(timelines: &[&Timeline], stem: &str) -> Result<Vec<TimelineFigure>, ReportError> {
    (timelines.iter().enumerate())
        .map(|(i, t)| TimelineFigure::new(t, stem, i + 1))
        .collect()
}

/// The file stem of experiment `E` measured with `set`.
fn stem<E: Experiment>(set: KernelSet) -> String {
    files::stem(E::NAME, set)
}

/// Every section `run` has material for, in the order the experiments run.
pub fn all(run: &SavedRun) -> Result<Vec<Section>, ReportError> {
    let mut out = Vec::new();
    if let Some(b) = &run.bounds {
        out.push(bounds(b));
    }
    if let Some(c) = &run.compare_kernels {
        out.push(compare_kernels(c));
    }
    if let Some(r) = &run.rust.sincos_overlap {
        out.push(sincos_overlap(r, run.cuda.sincos_overlap.as_ref())?);
    }
    if let Some(r) = &run.rust.matmul_streams {
        out.push(matmul_streams(r, run.cuda.matmul_streams.as_ref())?);
    }
    if let Some(r) = &run.rust.memcpy_kernel {
        out.push(memcpy_kernel(r, run.cuda.memcpy_kernel.as_ref())?);
    }
    if let Some(r) = &run.kernel_concurrency {
        out.push(kernel_concurrency(r)?);
    }
    if let Some(r) = &run.launch_overhead {
        out.push(launch_overhead(r));
    }
    if let Some(r) = &run.graph_overlap {
        out.push(graph_overlap(r));
    }
    if let Some(r) = &run.overlap_map {
        out.push(overlap_map(r));
    }
    if let Some(r) = &run.mapped {
        out.push(mapped(r));
    }
    if let Some(r) = &run.overlap {
        out.push(overlap(r)?);
    }
    Ok(out)
}

/// The results in `run` that say they were stopped before the end, by file stem.
pub fn incomplete(run: &SavedRun) -> Vec<String> {
    fn check<E: Experiment>(out: &mut Vec<String>, r: Option<&E::Result>, set: KernelSet) {
        if r.is_some_and(|r| !E::provenance(r).complete) {
            out.push(stem::<E>(set));
        }
    }
    let mut out = Vec::new();
    let (rust, cuda) = (KernelSet::Rust, KernelSet::Cuda);
    check::<Bounds>(&mut out, run.bounds.as_ref(), rust);
    check::<CompareKernels>(&mut out, run.compare_kernels.as_ref(), rust);
    for (runs, set) in [(&run.rust, rust), (&run.cuda, cuda)] {
        check::<SincosOverlap>(&mut out, runs.sincos_overlap.as_ref(), set);
        check::<MatmulStreams>(&mut out, runs.matmul_streams.as_ref(), set);
        check::<MemcpyKernel>(&mut out, runs.memcpy_kernel.as_ref(), set);
    }
    check::<KernelConcurrency>(&mut out, run.kernel_concurrency.as_ref(), rust);
    check::<LaunchOverhead>(&mut out, run.launch_overhead.as_ref(), rust);
    check::<GraphOverlap>(&mut out, run.graph_overlap.as_ref(), rust);
    check::<OverlapMap>(&mut out, run.overlap_map.as_ref(), rust);
    check::<Mapped>(&mut out, run.mapped.as_ref(), rust);
    check::<Overlap>(&mut out, run.overlap.as_ref(), rust);
    out
}

/// Rust over CUDA C++, or "–" without a C++ figure.
fn ratio(rust: f64, cuda: Option<f64>) -> String {
    cuda.map_or("–".into(), |c| num(rust / c, 3))
}

fn cuda_note(p: Option<&Provenance>) -> Option<(String, String)> {
    p.map(|p| {
        (
            "CUDA C++".into(),
            format!(
                "The same experiment ran again with the CUDA C++ twins of the kernels (compiled at run time by NVRTC, {} form), in the same run; its times sit beside the Rust ones as \"C++\", with Rust / C++ (below 1: Rust faster).",
                p.form.label()
            ),
        )
    })
}

fn bounds(b: &BoundsResult) -> Section {
    let s = Bounds::derive(b);
    let mut sec = section::<Bounds>(
        "The physical limits, as measured",
        "Copies of pinned host memory each way alone and both ways at once, a device-to-device copy, and an empty kernel's launch, timed with events. Every bound in this report is built from figures like these, measured in the same run as what it bounds.",
        parameters(&b.params),
        b,
    );
    let mib = b.copies.bytes as f64 / (1u64 << 20) as f64;
    let mut t = Table::new(
        Some(format!("{mib:.0} MiB per copy (medians)")),
        &["path", "ms", "GB/s"],
    );
    t.rows = vec![
        vec!["HtoD alone".into(), num(s.h2d_ms, 3), num(s.h2d_gbps, 1)],
        vec!["DtoH alone".into(), num(s.d2h_ms, 3), num(s.d2h_gbps, 1)],
        vec![
            "both ways at once (in total)".into(),
            num(b.copies.both.median(), 3),
            num(s.bidirectional_gbps, 1),
        ],
        vec![
            "device to device (read + write)".into(),
            num(b.dtod.median(), 3),
            num(s.d2d_gbps, 0),
        ],
        vec![
            "empty kernel launch (µs)".into(),
            num(s.launch_us, 2),
            String::new(),
        ],
    ];
    sec.tables.push(t);
    sec.notes.push((
        "Both ways".into(),
        format!(
            "Copies in and out at once share the link: together they reach {:.1} GB/s, not {:.1} + {:.1}. A bound that lets both directions run at their one-way rates at once is a bound no run can reach.",
            s.bidirectional_gbps, s.h2d_gbps, s.d2h_gbps
        ),
    ));
    sec.notes
        .push(("Bounds".into(), super::document::BOUND_NOTE.into()));
    sec
}

fn compare_kernels(c: &KernelComparison) -> Section {
    let a = CompareKernels::derive(c);
    let mut sec = section::<CompareKernels>(
        "Rust against CUDA C++: the same kernels",
        "Each kernel in Rust and its CUDA C++ twin, written statement for statement alike, launched alternately on one stream and timed with events. Each exists in a plain form (the write-ups' algorithm: the naive matmul loop, AddKernel's volatile local, separate sinf and cosf) and a tuned form (batched matmul loads, AddKernel's register, one sincosf); a ratio always compares the same form.",
        parameters(&c.params),
        c,
    );
    let mut t = Table::new(
        Some("median ms per launch (quartiles in brackets)".into()),
        &[
            "kernel",
            "case",
            "form",
            "Rust",
            "CUDA C++",
            "Rust / C++",
            "launch",
        ],
    );
    let source =
        |kernel: &str, case: &str| (c.cases.iter()).find(|k| k.kernel == kernel && k.case == case);
    for k in &a.cases {
        t.rows.push(vec![
            k.kernel.clone(),
            k.case.clone(),
            k.form.map_or("one form".into(), |f| f.label().to_owned()),
            format!(
                "{} ({}–{})",
                num(k.rust.median, 4),
                num(k.rust.q1, 4),
                num(k.rust.q3, 4)
            ),
            format!(
                "{} ({}–{})",
                num(k.cuda.median, 4),
                num(k.cuda.q1, 4),
                num(k.cuda.q3, 4)
            ),
            num(k.ratio, 3),
            source(&k.kernel, &k.case).map_or(String::new(), |s| s.launch.clone()),
        ]);
    }
    sec.tables.push(t);
    sec.notes.push((
        "Math libraries".into(),
        "The Rust sincos kernels call the libm crate (a port of musl's sinf, cosf and sincosf, compiled into the PTX with the kernel); the CUDA C++ twins call CUDA's own math library (sinf, cosf, sincosf from libdevice). Both are checked against an f64 reference on the CPU.".into(),
    ));
    sec.notes.push((
        "C++ build".into(),
        format!(
            "{}, options {}, PTX target {}.",
            c.cuda_build.compiler,
            c.cuda_build.options.join(" "),
            c.cuda_build.ptx_target
        ),
    ));
    sec.figures = draw(figures::compare_kernels(&a));
    sec
}

fn sincos_overlap(
    r: &SincosOverlapResult,
    cuda: Option<&SincosOverlapResult>,
) -> Result<Section, ReportError> {
    let a = SincosOverlap::derive(r);
    let c = cuda.map(SincosOverlap::derive);
    let mut sec = section::<SincosOverlap>(
        "sincos-overlap: copies and kernels over streams",
        "b[i] = a[i] + sqrt(sin(i)² + cos(i)²) over an array in pinned memory: sequential (copy in, kernel, copy out, with blocking copies), asynchronous 1 (per stream: copy in, kernel, copy out) and asynchronous 2 (all copies in, all kernels, all copies out), over a sweep of stream counts. Each sample is the mean time per iteration of a batch of iterations issued back to back.",
        parameters(&r.params),
        r,
    );
    let mut blog = Table::new(
        Some("the blog's lines (medians, Rust kernels)".into()),
        &["line", "ms"],
    );
    if let Some(s) = a.sequential() {
        blog.rows.push(vec![
            "Time for sequential transfer and execution".into(),
            num(s.median_ms, 4),
        ]);
    }
    for variant in SincosVariant::ASYNC {
        if let Some(x) = a.config(variant, r.params.streams) {
            blog.rows.push(vec![
                format!(
                    "Time for {} transfer and execution ({} streams)",
                    variant.label(),
                    x.streams
                ),
                num(x.median_ms, 4),
            ]);
        }
    }
    sec.tables.push(blog);
    let mut t = Table::new(
        Some("medians, ms per iteration; efficiency = bound / measured".into()),
        &[
            "variant",
            "streams",
            "Rust",
            "noise",
            "C++",
            "noise",
            "Rust / C++",
            "bound",
            "limited by",
            "efficiency",
            "engine bound (traced)",
            "flag",
        ],
    );
    for x in &a.configs {
        let cpp = c.as_ref().and_then(|c| c.config(x.variant, x.streams));
        t.rows.push(vec![
            x.variant.label().into(),
            x.streams.to_string(),
            num(x.median_ms, 4),
            noise(x.noise),
            cpp.map_or("–".into(), |y| num(y.median_ms, 4)),
            cpp.map_or("–".into(), |y| noise(y.noise)),
            ratio(x.median_ms, cpp.map(|y| y.median_ms)),
            num(x.bound.ms, 4),
            x.bound.limiter.label().into(),
            num(x.efficiency, 3),
            x.engine_bound.map_or("–".into(), |b| {
                format!("{} ({})", num(b.ms, 4), b.engine.label())
            }),
            flag(x.beyond_bound),
        ]);
    }
    sec.tables.push(t);
    let mut stages = Table::new(
        Some("the whole array's parts, each alone (fastest sample)".into()),
        &["part", "ms", "GB/s"],
    );
    let bytes = r.params.bytes();
    stages.rows = vec![
        vec![
            "HtoD".into(),
            num(a.stages.htod_ms, 4),
            num(a.rates.htod_gbps, 1),
        ],
        vec!["kernel".into(), num(a.stages.kernel_ms, 4), String::new()],
        vec![
            "DtoH".into(),
            num(a.stages.dtoh_ms, 4),
            num(a.rates.dtoh_gbps, 1),
        ],
        vec![
            "in and out at once".into(),
            num(a.stages.both_ms, 4),
            num(a.rates.both_gbps, 1),
        ],
    ];
    sec.tables.push(stages);
    sec.notes.push((
        "Bound".into(),
        format!(
            "Per configuration, the largest of: the HtoD engine's, the SMs' and the DtoH engine's busy time, and {:.0} MiB in plus {:.0} MiB out at the both-ways rate; plus the pipeline's fill and drain (first chunk in, last chunk out) once per batch of {} back-to-back iterations (the sequential version's blocking copies let no iteration overlap the next, so it pays them every iteration). Each stream count's parts are timed over its own chunks.",
            bytes as f64 / (1u64 << 20) as f64,
            bytes as f64 / (1u64 << 20) as f64,
            a.batch_iterations
        ),
    ));
    if let Some(best) = a.best() {
        let engine = best.engine_bound.map_or(String::new(), |b| {
            format!(
                " and {} the busiest engine's time in its own traced iterations ({} ms, the {})",
                times(best.median_ms / b.ms),
                num(b.ms, 4),
                b.engine.label()
            )
        });
        let within = a.best_within_noise().map_or(String::new(), |next| {
            format!(
                " Its noise ({}) is larger than its lead over {} with {} streams ({} ms ± {}): this run does not settle which of the two is faster.",
                noise(best.noise),
                next.variant.label(),
                next.streams,
                num(next.median_ms, 4),
                noise(next.noise)
            )
        });
        sec.notes.push((
            "Result".into(),
            format!(
                "The best asynchronous configuration is {} over {} streams: {} ms per iteration ± {}, {} its bound ({} ms, set by {}){engine}, against {} ms sequential.{within}",
                best.variant.label(),
                best.streams,
                num(best.median_ms, 4),
                noise(best.noise),
                times(best.median_ms / best.bound.ms),
                num(best.bound.ms, 4),
                best.bound.limiter.label(),
                a.sequential().map_or("–".into(), |s| num(s.median_ms, 4)),
            ),
        ));
    }
    let lowered: Vec<String> = (a.configs.iter())
        .filter_map(|x| {
            let why = x.bound.under_measured()?;
            Some(format!(
                "{} with {} streams: {why}",
                x.variant.label(),
                x.streams
            ))
        })
        .collect();
    if !lowered.is_empty() {
        sec.notes.push((
            "Flagged".into(),
            format!(
                "{} configuration(s) beat the bound built from the measured rates, so a rate was under-measured and each bound is lowered to its row: {}.",
                a.rows_beyond_bound,
                lowered.join("; ")
            ),
        ));
    }
    sec.notes.extend(cuda_note(cuda.map(|c| &c.provenance)));
    sec.figures = draw(figures::sincos_overlap(r, &a));
    sec.timelines = timelines(
        &SincosOverlap::timelines(r),
        &stem::<SincosOverlap>(KernelSet::Rust),
    )?;
    if let Some(c) = cuda {
        sec.timelines.extend(timelines(
            &SincosOverlap::timelines(c),
            &stem::<SincosOverlap>(KernelSet::Cuda),
        )?);
    }
    Ok(sec)
}

fn matmul_streams(
    r: &MatmulStreamsResult,
    cuda: Option<&MatmulStreamsResult>,
) -> Result<Section, ReportError> {
    let a = MatmulStreams::derive(r);
    let c = cuda.map(MatmulStreams::derive);
    let p = &r.params;
    let mut sec = section::<MatmulStreams>(
        "matmul-streams: independent products over streams",
        "Independent naive matrix products (one thread per output cell), product i on stream i mod s, for s = 1 up to the number of products; the time for all of them per trial, timed with events.",
        parameters(p),
        r,
    );
    let mut t = Table::new(
        Some("ms for all products".into()),
        &[
            "streams",
            "median",
            "min",
            "max",
            "speedup",
            "tasks per stream",
            "model",
            "C++ median",
            "Rust / C++",
        ],
    );
    for x in &a.points {
        let cpp = c
            .as_ref()
            .and_then(|c| c.points.iter().find(|y| y.streams == x.streams))
            .map(|y| y.time.median());
        t.rows.push(vec![
            x.streams.to_string(),
            num(x.time.median(), 3),
            num(x.time.min(), 3),
            num(x.time.summary.max, 3),
            times(x.speedup),
            x.tasks_per_stream.to_string(),
            num(x.model_ms, 3),
            cpp.map_or("–".into(), |v| num(v, 3)),
            ratio(x.time.median(), cpp),
        ]);
    }
    sec.tables.push(t);
    sec.notes.push((
        "Model".into(),
        "The products are alike and each fills too few SMs to slow the others, so s streams take as long as the stream with the most products: ceil(products / s) times one product alone. The plateaus where adding a stream does not lower that count are the model's.".into(),
    ));
    sec.notes.extend(cuda_note(cuda.map(|c| &c.provenance)));
    sec.figures = draw(figures::matmul_streams(&a));
    sec.timelines = timelines(
        &MatmulStreams::timelines(r),
        &stem::<MatmulStreams>(KernelSet::Rust),
    )?;
    Ok(sec)
}

fn memcpy_kernel(
    r: &MemcpyKernelResult,
    cuda: Option<&MemcpyKernelResult>,
) -> Result<Section, ReportError> {
    let a = MemcpyKernel::derive(r);
    let c = cuda.map(MemcpyKernel::derive);
    let mut sec = section::<MemcpyKernel>(
        "memcpy-kernel: the CUDA Handbook's copy/kernel concurrency",
        "AddKernel, whose run time grows with its cycles, between a copy in and a copy out of the whole array: first one after another (HtoD, Kernel, DtoH, Total), then split over the streams with the Handbook's three loops (Concurrent), the two alternating repeat by repeat so that drift hits both.",
        parameters(&r.params),
        r,
    );
    sec.notes.push((
        "Copy engines".into(),
        format!(
            "asyncEngineCount {}: copies in and out run on separate engines, beside kernels.",
            r.device.copy_engines
        ),
    ));
    for &streams in &a.stream_counts {
        let mut t = Table::new(
            Some(format!(
                "{streams} streams (medians, ms); efficiency = bound / concurrent"
            )),
            &[
                "Cycles",
                "HtoD",
                "Kernel",
                "DtoH",
                "Total",
                "Concurrent",
                "Noise",
                "Speedup",
                "Bound",
                "Bound speedup",
                "Efficiency",
                "C++ Concurrent",
                "flag",
            ],
        );
        for x in a.rows_with(streams) {
            let cpp = (c.as_ref())
                .and_then(|c| {
                    c.rows
                        .iter()
                        .find(|y| y.streams == x.streams && y.cycles == x.cycles)
                })
                .map(|y| y.concurrent_ms);
            t.rows.push(vec![
                x.cycles.to_string(),
                num(x.htod_ms, 2),
                num(x.kernel_ms, 2),
                num(x.dtoh_ms, 2),
                num(x.total_ms, 2),
                num(x.concurrent_ms, 2),
                noise(x.noise),
                times(x.speedup),
                num(x.bound.ms, 2),
                times(x.bound_speedup),
                num(x.efficiency, 3),
                cpp.map_or("–".into(), |v| num(v, 2)),
                flag(x.beyond_bound),
            ]);
        }
        sec.tables.push(t);
    }
    sec.notes.push((
        "Bound".into(),
        "Per row: the largest of the HtoD engine's, the SMs' and the DtoH engine's busy time, and the bytes in plus out at the measured both-ways rate, plus the fill and drain of this one run (the first chunk's copy in and the last chunk's copy out). The copies' parts are timed over the row's own chunks, the kernel's part is the row's kernel alone. This is the reachable form of the Handbook's ideal, which lets both copies run at their one-way rates at once.".into(),
    ));
    let at = a.breakeven_row();
    sec.notes.push((
        "Result".into(),
        match (a.breakeven_cycles, at) {
            (Some(cycles), Some(x)) => format!(
                "The kernel outlasts the longer copy from {cycles} cycles; there {} streams give {} against the bound's {} ({} of the bound).",
                x.streams,
                times(x.speedup),
                times(x.bound_speedup),
                num(x.efficiency, 3)
            ),
            _ => "The kernel never outlasted the copies in this range of cycles.".into(),
        },
    ));
    if a.rows_beyond_bound > 0 {
        sec.notes.push((
            "Flagged".into(),
            format!(
                "{} row(s) beat the bound built from the measured rates: a rate was under-measured, and each such bound is lowered to its row.",
                a.rows_beyond_bound
            ),
        ));
    }
    sec.notes.extend(cuda_note(cuda.map(|c| &c.provenance)));
    sec.figures = draw(figures::memcpy_kernel(&a));
    sec.timelines = timelines(
        &MemcpyKernel::timelines(r),
        &stem::<MemcpyKernel>(KernelSet::Rust),
    )?;
    Ok(sec)
}

fn kernel_concurrency(r: &KernelConcurrencyResult) -> Result<Section, ReportError> {
    let a = KernelConcurrency::derive(r);
    let mut sec = section::<KernelConcurrency>(
        "kernel-concurrency: how many kernels really run at once",
        "N streams each launch two one-block kernels that spin a fixed time on the GPU's global timer, first all streams at once, then the same kernels one after another (serial). The number of hardware work queues is set by CUDA_DEVICE_MAX_CONNECTIONS, which the driver reads once when it starts, so each queue setting runs in a process of its own.",
        parameters(&r.params),
        r,
    );
    let mut t = Table::new(
        Some("medians, ms".into()),
        &[
            "queues",
            "streams",
            "serial",
            "concurrent",
            "speedup",
            "waves",
            "model waves",
            "model",
            "bound",
            "matches model",
            "flag",
        ],
    );
    for x in &a.rows {
        t.rows.push(vec![
            x.queues.to_string(),
            x.streams.to_string(),
            num(x.serial_ms, 3),
            num(x.concurrent_ms, 3),
            times(x.speedup),
            num(x.measured_waves, 2),
            x.model_waves.to_string(),
            num(x.expected_concurrent_ms, 3),
            num(x.bound_ms, 3),
            if x.matches_model {
                "yes".into()
            } else {
                "no".into()
            },
            flag(x.beyond_bound),
        ]);
    }
    sec.tables.push(t);
    sec.notes.push((
        "Model".into(),
        format!(
            "Kernels of different streams run at once up to the smaller of the hardware queues and the resident-grid limit ({} on this GPU; each kernel is one block, so the {} SMs are never the limit here). Each stream's second kernel waits for its first, so N streams over q queues take ceil(N / min(q, {})) + 1 waves of one kernel's time; the bound is those waves at exactly the spin time. Measured waves are the concurrent time over one kernel alone; \"matches\" means within {:.0}%.",
            r.max_resident_grids,
            r.device.sm_count,
            r.max_resident_grids,
            crate::derived::kernel_concurrency::WAVES_TOLERANCE * 100.0
        ),
    ));
    sec.figures = draw(figures::kernel_concurrency(&a, r.params.spin_us));
    sec.timelines = timelines(&KernelConcurrency::timelines(r), KernelConcurrency::NAME)?;
    Ok(sec)
}

fn launch_overhead(r: &LaunchOverheadResult) -> Section {
    let a = LaunchOverhead::derive(r);
    let mut sec = section::<LaunchOverhead>(
        "launch-overhead: what one launch costs",
        "An empty kernel launched back to back on one stream (host time to issue, GPU time between events), launched and waited for one at a time, and the same launches captured once in a CUDA graph and replayed; the Rust kernel and its CUDA C++ twin take turns, sample by sample. Then kernels that each spin a given time on the GPU's clock, back to back: the breakeven curve.",
        parameters(&r.params),
        r,
    );
    let mut t = Table::new(
        Some("medians, µs per launch".into()),
        &[
            "launched by",
            "host (async)",
            "GPU (async)",
            "launch + synchronize",
            "launches/s",
        ],
    );
    for x in &a.rows {
        t.rows.push(vec![
            format!("{} kernel, stream", x.kernels.label()),
            num(x.async_host_us, 3),
            num(x.async_gpu_us, 3),
            num(x.sync_us, 3),
            num(x.launches_per_s, 0),
        ]);
    }
    t.rows.push(vec![
        "Rust kernel, graph replay".into(),
        num(a.graph_host_us, 3),
        num(a.graph_gpu_us, 3),
        String::new(),
        num(1e6 / a.graph_host_us.max(a.graph_gpu_us), 0),
    ]);
    sec.tables.push(t);
    let mut b = Table::new(
        Some("breakeven: medians, µs per kernel".into()),
        &["work", "per kernel", "bound", "share not work"],
    );
    for x in &a.breakeven {
        b.rows.push(vec![
            x.work_us.to_string(),
            num(x.per_kernel_us, 3),
            num(x.bound_us, 3),
            format!("{}%", num(x.overhead_share * 100.0, 1)),
        ]);
    }
    sec.tables.push(b);
    sec.notes.push((
        "Result".into(),
        format!(
            "Rust's launch rate is {} of the CUDA C++ twin's (above 1: Rust launches faster). A graph replay costs the host {} of stream issue's time per kernel. Launch cost stops mattering (under {:.0}% of a kernel's time) from {} µs of work per kernel; the bound there is the work itself, or an empty launch where that is longer.",
            a.rust_over_cuda_rate.map_or("–".into(), |x| num(x, 3)),
            times(a.graph_over_stream_host),
            crate::derived::launch_overhead::BREAKEVEN_OVERHEAD * 100.0,
            a.breakeven_work_us.map_or("–".into(), |w| w.to_string())
        ),
    ));
    sec.figures = draw(figures::launch_overhead(&a));
    sec
}

fn graph_overlap(r: &GraphOverlapResult) -> Section {
    let a = GraphOverlap::derive(r);
    let mut sec = section::<GraphOverlap>(
        "graph-overlap: a CUDA graph against stream issue",
        "sincos-overlap's asynchronous orders, issued on streams (one per chunk) and captured once as a CUDA graph that holds a sample's back-to-back iterations with the same dependencies, then replayed: GPU time per iteration (events) and the host's time per iteration spent issuing (what the CPU is not left free for).",
        parameters(&r.params),
        r,
    );
    let mut t = Table::new(
        Some("medians, ms per iteration".into()),
        &[
            "order",
            "chunks",
            "GPU streams",
            "noise",
            "GPU graph",
            "noise",
            "graph / streams",
            "host streams",
            "host graph",
            "graph / streams",
            "bound",
            "flag",
        ],
    );
    for x in &a.rows {
        t.rows.push(vec![
            x.variant.label().into(),
            x.chunks.to_string(),
            num(x.stream_gpu_ms, 4),
            noise(x.stream_noise),
            num(x.graph_gpu_ms, 4),
            noise(x.graph_noise),
            num(x.gpu_ratio, 3),
            num(x.stream_host_ms, 4),
            num(x.graph_host_ms, 4),
            num(x.host_ratio, 3),
            num(x.bound.ms, 4),
            flag(x.beyond_bound),
        ]);
    }
    sec.tables.push(t);
    sec.notes.push((
        "Bound".into(),
        "The sincos pipeline bound of each chunk count's parts, timed alone, with fill and drain once per sample's iterations.".into(),
    ));
    sec.figures = draw(figures::graph_overlap(&a));
    sec
}

fn overlap_map(r: &OverlapMapResult) -> Section {
    let a = OverlapMap::derive(r);
    let mut sec = section::<OverlapMap>(
        "overlap-map: when streams pay off",
        "The sincos workload over array sizes × stream counts: the speedup of the better asynchronous order over one stream (the fastest of the one-stream timings, which all run the same work in order), beside a model's prediction of the same.",
        parameters(&r.params),
        r,
    );
    sec.notes.push((
        "Model".into(),
        format!(
            "From measured costs only: a 4-byte copy in ({} µs) and out ({} µs) and an empty launch ({} µs), each back to back, the kernel's time per element ({:.3} ns, over the largest array) and the copy rates. Each engine's busy time per iteration is s fixed costs plus bytes over its rate, the link carries both directions at the both-ways rate, and the time per iteration is the pipeline bound of those over s streams, but never less than s × (copy in + launch + copy out) fixed costs, which every operation pays at the GPU's front end whatever its stream.",
            num(a.htod_latency_ms * 1e3, 2),
            num(a.dtoh_latency_ms * 1e3, 2),
            num(a.launch_ms * 1e3, 2),
            a.kernel_ms_per_element * 1e6
        ),
    ));
    let mut crossovers = Table::new(
        Some(format!(
            "where streams start to pay off (speedup ≥ {PAYOFF:.2}×)"
        )),
        &["streams", "measured", "model", "size steps apart"],
    );
    let at = |n: Option<usize>| n.map_or("never".to_owned(), |n| format!("2^{}", n.ilog2()));
    for x in &a.crossovers {
        crossovers.rows.push(vec![
            x.streams.to_string(),
            at(x.measured),
            at(x.model),
            x.steps_apart.map_or("–".into(), |d| d.to_string()),
        ]);
    }
    sec.tables.push(crossovers);
    let mut cells = Table::new(
        Some("every cell: medians, ms per iteration".into()),
        &[
            "floats",
            "streams",
            "iterations per sample",
            "best",
            "speedup",
            "model",
            "model speedup",
            "disagree",
        ],
    );
    for x in &a.cells {
        let iterations = (r.sizes.iter())
            .find(|s| s.elements == x.elements)
            .map_or(0, |s| s.iterations);
        cells.rows.push(vec![
            format!("2^{}", x.elements.ilog2()),
            x.streams.to_string(),
            iterations.to_string(),
            num(x.best_ms, 4),
            times(x.speedup),
            num(x.model_ms, 4),
            times(x.model_speedup),
            if x.disagrees {
                "yes".into()
            } else {
                String::new()
            },
        ]);
    }
    sec.tables.push(cells);
    let disagree: Vec<String> = (a.cells.iter())
        .filter(|c| c.disagrees)
        .map(|c| format!("2^{} × {} streams", c.elements.ilog2(), c.streams))
        .collect();
    sec.notes.push((
        "Disagreements".into(),
        if disagree.is_empty() {
            "None: model and measurement fall on the same side of the pay-off line in every cell."
                .into()
        } else {
            format!("Outlined on both maps: {}.", disagree.join(", "))
        },
    ));
    sec.figures = draw(figures::overlap_map(&a));
    sec
}

fn mapped(r: &MappedResult) -> Section {
    let a = Mapped::derive(r);
    let mut sec = section::<Mapped>(
        "mapped: zero-copy memory against streamed copies",
        "The sincos kernel reading its input from and writing its output to mapped pinned host memory directly (no copies), against the streamed version (device memory, copies over streams, the better asynchronous order), over the same sizes.",
        parameters(&r.params),
        r,
    );
    let mut t = Table::new(
        Some("medians, ms per iteration; efficiency = bound / measured".into()),
        &[
            "floats",
            "mapped",
            "noise",
            "mapped bound",
            "efficiency",
            "streamed",
            "noise",
            "streamed bound",
            "streamed / mapped",
            "flag",
        ],
    );
    for x in &a.rows {
        t.rows.push(vec![
            format!("2^{}", x.elements.ilog2()),
            num(x.mapped_ms, 4),
            noise(x.mapped_noise),
            num(x.mapped_bound_ms, 4),
            num(x.mapped_efficiency, 3),
            num(x.streamed_ms, 4),
            noise(x.streamed_noise),
            num(x.streamed_bound_ms, 4),
            times(x.mapped_speedup),
            flag(x.beyond_bound),
        ]);
    }
    sec.tables.push(t);
    sec.notes.push((
        "Bound".into(),
        format!(
            "Mapped: the bytes in and out at the fastest rates the link showed in this run, one way alone ({:.1} and {:.1} GB/s) and both ways at once ({:.1} GB/s in total). At small sizes a launch and PCIe's latency, not bandwidth, set the time, so efficiency there is low by nature. Streamed: the pipeline bound of its chunks' parts.",
            a.link.htod_gbps, a.link.dtoh_gbps, a.link.both_gbps
        ),
    ));
    let wins: Vec<String> = a
        .mapped_wins
        .iter()
        .map(|n| format!("2^{}", n.ilog2()))
        .collect();
    sec.notes.push((
        "Result".into(),
        if wins.is_empty() {
            "Streamed copies were as fast or faster at every size.".into()
        } else {
            format!(
                "Mapped memory was faster at {}: there the streamed version pays a copy's fixed cost per chunk and direction and a launch per chunk, while the mapped kernel is one launch whose loads and stores cross the link as they run. Where bandwidth rules, streamed copies move the data at the copy engines' rates and mapped access reaches a share of the link.",
                wins.join(", ")
            )
        },
    ));
    sec.figures = draw(figures::mapped(&a));
    sec
}

fn overlap(r: &OverlapResult) -> Result<Section, ReportError> {
    let a = Overlap::derive(r);
    let mut sec = section::<Overlap>(
        "overlap: your kernel over streams",
        "An element-wise kernel from your PTX, run sequential against asynchronous 1 and 2 over stream counts, each chunk passed to the kernel as its own sub-slice; every streamed output is compared bit for bit with the sequential one.",
        parameters(&r.params),
        r,
    );
    sec.notes.push((
        "Entry".into(),
        format!("{}({})", r.params.kernel, r.entry.join(", ")),
    ));
    sec.notes.push(("Verdict".into(), a.verdict()));
    for s in &a.sizes {
        let mut t = Table::new(
            Some(format!(
                "{} elements (medians, ms per iteration)",
                s.elements
            )),
            &[
                "variant",
                "streams",
                "ms",
                "noise",
                "speedup",
                "bound",
                "limited by",
                "flag",
            ],
        );
        for x in &s.configs {
            t.rows.push(vec![
                x.variant.label().into(),
                x.streams.to_string(),
                num(x.median_ms, 4),
                noise(x.noise),
                times(s.sequential_ms / x.median_ms),
                num(x.bound.ms, 4),
                x.bound.limiter.label().into(),
                flag(x.beyond_bound),
            ]);
        }
        sec.tables.push(t);
    }
    sec.figures = draw(figures::overlap(&a));
    sec.timelines = timelines(&Overlap::timelines(r), Overlap::NAME)?;
    Ok(sec)
}

/// How traced timelines are checked, shown with every section that has one.
pub fn trace_note() -> String {
    format!(
        "Every traced iteration is checked, and a failed check fails the run: no two copies of one direction overlap; each copy of at least {} MiB takes between its bytes at its direction's one-way rate and its bytes at the slowest that direction runs while the other is busy (the rate measured with both copying, or what the both-ways total leaves beside the other direction's one-way rate), ±{:.0}%; and the traced time matches the fastest timed sample of the same schedule within ±{:.0}% (the middle of three back-to-back iterations against the time per iteration, or a lone run's span against the same schedule timed alone). A trace that fails is traced again after a pause, up to five times in all; the failures it left behind are listed. The bounds' tolerance is {:.0}%.",
        MIN_CHECKED_BYTES >> 20,
        TOLERANCE * 100.0,
        TOLERANCE * 100.0,
        SLACK * 100.0
    )
}
