//! The plain-text tables printed after each experiment (in the write-ups' own formats
//! where they have one) and the compact summary `run-all` prints last. Every figure is
//! read from [`crate::derived`].
use std::fmt::Write;

use crate::derived::Derive;
use crate::derived::rates::{NOISY_LINK, link_moved};
use crate::derived::summary::RunSummary;
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
use crate::saved::{DeviceInfo, KernelSet, Provenance};

/// `x` as "1.23×", "–" when not finite.
pub fn times(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}×")
    } else {
        "–".into()
    }
}

/// The heading of experiment `name`'s table, naming the kernels when they are the
/// CUDA C++ twins.
pub fn heading(name: &str, set: KernelSet) -> String {
    match set {
        KernelSet::Rust => name.to_owned(),
        KernelSet::Cuda => format!("{name} (CUDA C++ kernels)"),
    }
}

/// A flag for a row that beat the bound built from the measured rates.
fn flag(beyond: bool) -> &'static str {
    if beyond {
        "  ← beat its bound as built: a rate was under-measured, bound lowered to the row"
    } else {
        ""
    }
}

/// A relative noise as a percentage, e.g. "0.4%".
pub fn noise(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", 100.0 * x)
    } else {
        "–".into()
    }
}

/// The link probed around an experiment, e.g. "link both ways 96.1 GB/s before, 95.0
/// GB/s after (moved 1.1%)", marked "machine noisy" when it moved more than
/// [`NOISY_LINK`].
pub fn link(p: &Provenance) -> Option<String> {
    let (before, after, moved) = link_moved(p.link.as_ref()?);
    let noisy = if moved > NOISY_LINK {
        format!("machine noisy: link rate moved {:.1}%; ", 100.0 * moved)
    } else {
        String::new()
    };
    Some(format!(
        "{noisy}link both ways {before:.1} GB/s before, {after:.1} GB/s after (moved {:.1}%)",
        100.0 * moved
    ))
}

/// One line naming the GPU.
pub fn device(info: &DeviceInfo) -> String {
    format!(
        "GPU {}: {} (compute {}.{}, {} SMs, {} copy engines, concurrent kernels: {}, {:.1} GiB, CUDA driver {}{})\n",
        info.ordinal,
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.sm_count,
        info.copy_engines,
        if info.concurrent_kernels { "yes" } else { "no" },
        info.total_memory_bytes as f64 / (1u64 << 30) as f64,
        info.driver_cuda_version,
        info.pcie_link
            .as_ref()
            .map(|l| format!(", {l}"))
            .unwrap_or_default(),
    )
}

fn incomplete(complete: bool) -> &'static str {
    if complete {
        ""
    } else {
        "INCOMPLETE: the run was stopped before every configuration was measured\n"
    }
}

pub fn bounds(b: &BoundsResult) -> String {
    let s = Bounds::derive(b);
    format!(
        "{:.0} MiB each way (medians): HtoD {:.3} ms ({:.1} GB/s), DtoH {:.3} ms ({:.1} GB/s), both at once {:.1} GB/s in total\n\
         device to device {:.0} GB/s (read + write), launch {:.2} µs\nverification: {}\n",
        b.copies.bytes as f64 / (1u64 << 20) as f64,
        s.h2d_ms,
        s.h2d_gbps,
        s.d2h_ms,
        s.d2h_gbps,
        s.bidirectional_gbps,
        s.d2d_gbps,
        s.launch_us,
        b.verification.detail
    )
}

pub fn compare_kernels(c: &KernelComparison) -> String {
    let a = CompareKernels::derive(c);
    let mut out = String::from(
        "kernel         case        form    Rust median ms  CUDA C++ median ms  Rust/C++\n",
    );
    for k in &a.cases {
        let _ = writeln!(
            out,
            "{:<14} {:<11} {:<7} {:>14.4} {:>19.4} {:>9.3}",
            k.kernel,
            k.case,
            k.form.map_or("one", |f| f.label()),
            k.rust.median,
            k.cuda.median,
            k.ratio
        );
    }
    let _ = writeln!(out, "verification: {}", c.verification.detail);
    out
}

pub fn matmul_streams(r: &MatmulStreamsResult) -> String {
    let a = MatmulStreams::derive(r);
    let mut out = String::from(incomplete(r.provenance.complete));
    out += "streams  median ms  speedup  tasks/stream  model ms\n";
    for p in &a.points {
        let _ = writeln!(
            out,
            "{:>7}  {:>9.3}  {:>7}  {:>12}  {:>8.3}",
            p.streams,
            p.time.median(),
            times(p.speedup),
            p.tasks_per_stream,
            p.model_ms
        );
    }
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn memcpy_kernel(r: &MemcpyKernelResult) -> String {
    let a = MemcpyKernel::derive(r);
    let mut out = String::from(incomplete(r.provenance.complete));
    let _ = writeln!(
        out,
        "copy engines (asyncEngineCount): {}",
        r.device.copy_engines
    );
    for &streams in &a.stream_counts {
        let _ = writeln!(
            out,
            "{streams} streams (medians, ms)\n  Cycles    HtoD  Kernel    DtoH   Total  Concurrent   Noise  Speedup   Bound  Bound speedup"
        );
        for row in a.rows_with(streams) {
            let _ = writeln!(
                out,
                "{:>8} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>11.2} {:>7} {:>8} {:>7.2} {:>14}{}",
                row.cycles,
                row.htod_ms,
                row.kernel_ms,
                row.dtoh_ms,
                row.total_ms,
                row.concurrent_ms,
                noise(row.noise),
                times(row.speedup),
                row.bound.ms,
                times(row.bound_speedup),
                flag(row.beyond_bound)
            );
        }
    }
    let at = a.breakeven_row();
    let _ = writeln!(
        out,
        "breakeven (kernel outlasts the copies) at cycles: {}{}",
        a.breakeven_cycles
            .map_or("not reached".to_owned(), |c| c.to_string()),
        at.map_or(String::new(), |r| format!(
            "; there {} streams give {} of the bound's {}",
            r.streams,
            times(r.speedup),
            times(r.bound_speedup)
        ))
    );
    let _ = writeln!(
        out,
        "rows that beat their bound as built (bound lowered): {}",
        a.rows_beyond_bound
    );
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn sincos_overlap(r: &SincosOverlapResult) -> String {
    let a = SincosOverlap::derive(r);
    let mut out = String::from(incomplete(r.provenance.complete));
    if let Some(s) = a.sequential() {
        let _ = writeln!(
            out,
            "Time for sequential transfer and execution in ms = {:.4}",
            s.median_ms
        );
    }
    for variant in SincosVariant::ASYNC {
        if let Some(c) = a.config(variant, r.params.streams) {
            let _ = writeln!(
                out,
                "Time for {} transfer and execution in ms = {:.4} ({} streams)",
                variant.label(),
                c.median_ms,
                c.streams
            );
        }
    }
    let _ = writeln!(out, "Max error = {:e}", r.verification.max_abs_error);
    let _ = writeln!(
        out,
        "(medians per iteration; bound: copies both ways at the measured rate, fill and drain per batch of {})",
        a.batch_iterations
    );
    let _ = writeln!(
        out,
        "variant          streams   median ms   noise   bound ms  efficiency  engine bound ms"
    );
    for c in &a.configs {
        let _ = writeln!(
            out,
            "{:<16} {:>7} {:>11.4} {:>7} {:>10.4} {:>11.3} {:>16}{}",
            c.variant.label(),
            c.streams,
            c.median_ms,
            noise(c.noise),
            c.bound.ms,
            c.efficiency,
            c.engine_bound
                .map_or("–".into(), |b| format!("{:.4}", b.ms)),
            flag(c.beyond_bound)
        );
    }
    let _ = writeln!(
        out,
        "alone: HtoD {:.4} ms, kernel {:.4} ms, DtoH {:.4} ms; both ways {:.4} ms ({:.1} GB/s in total)",
        a.stages.htod_ms, a.stages.kernel_ms, a.stages.dtoh_ms, a.stages.both_ms, a.rates.both_gbps
    );
    if let Some(best) = a.best() {
        let _ = writeln!(
            out,
            "best asynchronous: {} with {} streams, {:.4} ms ± {} = {:.3}× its bound ({:.4} ms, {}){}",
            best.variant.label(),
            best.streams,
            best.median_ms,
            noise(best.noise),
            best.median_ms / best.bound.ms,
            best.bound.ms,
            best.bound.limiter.label(),
            best.engine_bound.map_or(String::new(), |b| format!(
                ", {:.3}× its busiest engine's time traced ({:.4} ms, {})",
                best.median_ms / b.ms,
                b.ms,
                b.engine.label()
            ))
        );
        if let Some(next) = a.best_within_noise() {
            let _ = writeln!(
                out,
                "  within noise of {} with {} streams ({:.4} ms ± {}): this run does not settle which is faster",
                next.variant.label(),
                next.streams,
                next.median_ms,
                noise(next.noise)
            );
        }
    }
    for c in a
        .configs
        .iter()
        .filter_map(|c| c.bound.under_measured().map(|u| (c, u)))
    {
        let _ = writeln!(
            out,
            "{} with {} streams: {}",
            c.0.variant.label(),
            c.0.streams,
            c.1
        );
    }
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn kernel_concurrency(r: &KernelConcurrencyResult) -> String {
    let a = KernelConcurrency::derive(r);
    let mut out = String::from(incomplete(r.provenance.complete));
    let _ = writeln!(
        out,
        "each kernel spins {} µs; medians, ms",
        r.params.spin_us
    );
    let _ = writeln!(
        out,
        "queues  streams   serial  concurrent  speedup  waves (model)  bound ms"
    );
    for row in &a.rows {
        let _ = writeln!(
            out,
            "{:>6}  {:>7} {:>8.3} {:>11.3} {:>8}  {:>5.2} ({:>3})  {:>9.3}{}",
            row.queues,
            row.streams,
            row.serial_ms,
            row.concurrent_ms,
            times(row.speedup),
            row.measured_waves,
            row.model_waves,
            row.bound_ms,
            flag(row.beyond_bound)
        );
    }
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn launch_overhead(r: &LaunchOverheadResult) -> String {
    let a = LaunchOverhead::derive(r);
    let mut out = String::from(incomplete(r.provenance.complete));
    let _ = writeln!(
        out,
        "empty kernel (medians, µs per launch)\nkernels    async host  async GPU  with sync  launches/s"
    );
    for row in &a.rows {
        let _ = writeln!(
            out,
            "{:<9} {:>11.3} {:>10.3} {:>10.3} {:>11.0}",
            row.kernels.label(),
            row.async_host_us,
            row.async_gpu_us,
            row.sync_us,
            row.launches_per_s
        );
    }
    let _ = writeln!(
        out,
        "graph replay: host {:.3} µs, GPU {:.3} µs per kernel ({} of stream issue's host time)",
        a.graph_host_us,
        a.graph_gpu_us,
        times(a.graph_over_stream_host)
    );
    let _ = writeln!(out, "work µs  per kernel µs  not work");
    for b in &a.breakeven {
        let _ = writeln!(
            out,
            "{:>7}  {:>13.3}  {:>7.1}%",
            b.work_us,
            b.per_kernel_us,
            b.overhead_share * 100.0
        );
    }
    let _ = writeln!(
        out,
        "launch cost stops mattering (under {:.0}% of each kernel) from {} µs of work",
        crate::derived::launch_overhead::BREAKEVEN_OVERHEAD * 100.0,
        a.breakeven_work_us
            .map_or("–".to_owned(), |w| w.to_string())
    );
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn graph_overlap(r: &GraphOverlapResult) -> String {
    let a = GraphOverlap::derive(r);
    let mut out = String::from(incomplete(r.provenance.complete));
    let _ = writeln!(
        out,
        "medians, ms per iteration\nvariant          chunks  GPU streams  GPU graph  ratio  host streams  host graph  ratio   bound"
    );
    for row in &a.rows {
        let _ = writeln!(
            out,
            "{:<16} {:>6} {:>12.4} {:>10.4} {:>6.3} {:>13.4} {:>11.4} {:>6.3} {:>7.4}{}",
            row.variant.label(),
            row.chunks,
            row.stream_gpu_ms,
            row.graph_gpu_ms,
            row.gpu_ratio,
            row.stream_host_ms,
            row.graph_host_ms,
            row.host_ratio,
            row.bound.ms,
            flag(row.beyond_bound)
        );
    }
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn overlap_map(r: &OverlapMapResult) -> String {
    let a = OverlapMap::derive(r);
    let mut out = String::from(incomplete(r.provenance.complete));
    let _ = writeln!(
        out,
        "speedup of the better asynchronous order over one stream (model in brackets)"
    );
    let mut header = String::from("floats      ");
    for s in &a.stream_counts {
        let _ = write!(header, "{:>16}", format!("{s} streams"));
    }
    let _ = writeln!(out, "{header}");
    for &n in &a.sizes {
        let mut line = format!("2^{:<9}", n.ilog2());
        for &s in &a.stream_counts {
            let cell = a.cell(n, s).map_or("–".to_owned(), |c| {
                format!(
                    "{} ({}){}",
                    times(c.speedup),
                    times(c.model_speedup),
                    if c.disagrees { "*" } else { "" }
                )
            });
            let _ = write!(line, "{cell:>16}");
        }
        let _ = writeln!(out, "{line}");
    }
    for c in &a.crossovers {
        let at = |n: Option<usize>| n.map_or("never".to_owned(), |n| format!("2^{}", n.ilog2()));
        let _ = writeln!(
            out,
            "{} streams pay off from {} floats (model: {}){}",
            c.streams,
            at(c.measured),
            at(c.model),
            c.steps_apart
                .map_or(String::new(), |d| format!(", {d} size step(s) apart"))
        );
    }
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn mapped(r: &MappedResult) -> String {
    let a = Mapped::derive(r);
    let mut out = String::from(incomplete(r.provenance.complete));
    let _ = writeln!(
        out,
        "medians, ms per iteration\nfloats   mapped  mapped bound  efficiency  streamed  streamed bound  streamed/mapped"
    );
    for row in &a.rows {
        let _ = writeln!(
            out,
            "2^{:<5} {:>8.4} {:>13.4} {:>11.3} {:>9.4} {:>15.4} {:>16}{}",
            row.elements.ilog2(),
            row.mapped_ms,
            row.mapped_bound_ms,
            row.mapped_efficiency,
            row.streamed_ms,
            row.streamed_bound_ms,
            times(row.mapped_speedup),
            flag(row.beyond_bound)
        );
    }
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn overlap(r: &OverlapResult) -> String {
    let a = Overlap::derive(r);
    let mut out = String::from(incomplete(r.provenance.complete));
    let _ = writeln!(
        out,
        "kernel {} from {} ({})",
        r.params.kernel,
        r.params.ptx.display(),
        r.entry.join(", ")
    );
    for size in &a.sizes {
        let _ = writeln!(
            out,
            "{} elements (medians, ms per iteration)",
            size.elements
        );
        for c in &size.configs {
            let _ = writeln!(
                out,
                "  {:<16} {:>3} streams {:>10.4}  bound {:>9.4}{}",
                c.variant.label(),
                c.streams,
                c.median_ms,
                c.bound.ms,
                flag(c.beyond_bound)
            );
        }
    }
    let _ = writeln!(out, "verdict: {}", a.verdict());
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

/// The compact table `run-all` prints last: the device, whether the run is complete,
/// and [`headlines`].
pub fn summary(s: &RunSummary) -> String {
    let mut out = device(&s.device);
    if !s.complete {
        let _ = writeln!(
            out,
            "INCOMPLETE ({}): not run or not finished: {}",
            s.interrupted_by.as_deref().unwrap_or("stopped"),
            s.steps_not_run.join(", ")
        );
    }
    for (name, line) in headlines(s) {
        let _ = writeln!(out, "{name:<19} {line}");
    }
    out
}

/// One line per experiment (and for the limits and the kernel ratios) of `s`.
pub fn headlines(s: &RunSummary) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let verdict = |v: bool| if v { "verified" } else { "FAILED" };
    let e = &s.experiments;
    if let Some(x) = &e.sincos_overlap {
        out.push((
            "sincos-overlap",
            format!(
                "sequential {:.3} ms, best async {:.3} ms ± {} ({}, {} streams{}) = {:.3}× its bound{}  {}",
                x.sequential_ms,
                x.best_async_ms,
                noise(x.best_async_noise),
                x.best_async_variant.label(),
                x.best_async_streams,
                if x.best_within_noise { ", within noise of the next" } else { "" },
                x.best_over_bound,
                x.best_over_engine_bound
                    .map_or(String::new(), |e| format!(", {e:.3}× its busiest engine traced")),
                verdict(x.verified)
            ),
        ));
    }
    if let Some(x) = &e.matmul_streams {
        out.push((
            "matmul-streams",
            format!(
                "1 stream {:.3} ms, {} streams {:.3} ms, speedup {}  {}",
                x.ms_by_streams.first().copied().unwrap_or(f64::NAN),
                x.ms_by_streams.len(),
                x.ms_by_streams.last().copied().unwrap_or(f64::NAN),
                times(x.speedup_max_streams),
                verdict(x.verified)
            ),
        ));
    }
    if let Some(x) = &e.memcpy_kernel {
        out.push((
            "memcpy-kernel",
            format!(
            "breakeven cycles {}, there {} streams {} of the bound's {}; {} rows beyond their bound  {}",
            x.breakeven_cycles.map_or("not reached".to_owned(), |c| c.to_string()),
            x.num_streams,
            x.speedup_at_breakeven.map_or("–".into(), times),
            x.bound_speedup_at_breakeven.map_or("–".into(), times),
            x.rows_beyond_bound,
            verdict(x.verified)
        )));
    }
    if let Some(x) = &e.kernel_concurrency {
        out.push((
            "kernel-concurrency",
            format!(
            "32 streams at 32 queues {} faster than serial; 8-queue waves match the model: {}  {}",
            x.speedup_32_streams_32_queues.map_or("–".into(), times),
            x.waves_match_model_8_queues.map_or("–", |m| if m { "yes" } else { "no" }),
            verdict(x.verified)
        )));
    }
    if let Some(x) = &e.launch_overhead {
        out.push((
            "launch-overhead",
            format!(
                "Rust {:.0} launches/s, Rust/C++ rate {}, graph host time {} of streams'  {}",
                x.rust_launches_per_s.unwrap_or(f64::NAN),
                x.rust_over_cuda_rate
                    .map_or("–".into(), |r| format!("{r:.3}")),
                times(x.graph_over_stream_host),
                verdict(x.verified)
            ),
        ));
    }
    if let Some(x) = &e.graph_overlap {
        out.push((
            "graph-overlap",
            format!(
                "graph/streams GPU time {} (fewest chunks), host time {} (most chunks)  {}",
                x.gpu_ratio_fewest_chunks
                    .map_or("–".into(), |r| format!("{r:.3}")),
                x.host_ratio_most_chunks
                    .map_or("–".into(), |r| format!("{r:.3}")),
                verdict(x.verified)
            ),
        ));
    }
    if let Some(x) = &e.overlap_map {
        out.push((
            "overlap-map",
            format!(
                "model crossover within one size step everywhere: {}  {}",
                if x.model_within_one_step { "yes" } else { "no" },
                verdict(x.verified)
            ),
        ));
    }
    if let Some(x) = &e.mapped {
        out.push((
            "mapped",
            format!(
                "{} at 2^{} floats of its bound; mapped wins at {} size(s)  {}",
                x.mapped_over_bound.map_or("–".into(), |(_, r)| times(r)),
                x.mapped_over_bound.map_or(0, |(n, _)| n.ilog2()),
                x.mapped_wins.len(),
                verdict(x.verified)
            ),
        ));
    }
    if let Some(b) = &s.bounds {
        out.push((
            "bounds",
            format!(
            "HtoD {:.1} GB/s, DtoH {:.1} GB/s, both ways {:.1} GB/s, device {:.0} GB/s, launch {:.2} µs",
            b.h2d_gbps, b.d2h_gbps, b.bidirectional_gbps, b.d2d_gbps, b.launch_us
        )));
    }
    for (name, ratios) in [
        ("Rust/C++ (tuned)", &s.rust_over_cuda),
        ("Rust/C++ (plain)", &s.rust_over_cuda_plain),
    ] {
        if let Some(r) = ratios {
            out.push((
                name,
                format!(
                    "fill {:.3}, matmul {:.3}, add_kernel {:.3}, sincos {:.3} (median kernel times)",
                    r.fill, r.matmul, r.add_kernel, r.sincos
                ),
            ));
        }
    }
    out
}
