//! The plain-text tables printed at the end of a run, in the write-ups' own formats.
use std::fmt::Write;

use crate::results::{
    Bounds, DeviceInfo, KernelComparison, MatmulStreamsResult, MemcpyKernelResult, RunSummary,
    SincosOverlapResult,
};

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

pub fn matmul_streams(r: &MatmulStreamsResult) -> String {
    let mut out = String::from("streams  mean ms  median ms  speedup  tasks/stream  model ms\n");
    for p in &r.points {
        let s = &p.time.summary;
        let _ = writeln!(
            out,
            "{:>7}  {:>7.3}  {:>9.3}  {:>6.2}x  {:>12}  {:>8.3}",
            p.streams, s.mean, s.median, p.speedup, p.tasks_per_stream, p.model_ms
        );
    }
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn memcpy_kernel(r: &MemcpyKernelResult) -> String {
    let mut out = format!(
        "copy engines (asyncEngineCount): {}\n",
        r.device.copy_engines
    );
    let mut streams = None;
    for row in &r.rows {
        if streams != Some(row.streams) {
            streams = Some(row.streams);
            let _ = writeln!(
                out,
                "{} streams (medians, ms)\n  Cycles    HtoD  Kernel    DtoH   Total  Concurrent  Speedup  Amdahl",
                row.streams
            );
        }
        let _ = writeln!(
            out,
            "{:>8} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>11.2} {:>7.2}x {:>6.2}x",
            row.cycles,
            row.htod.summary.median,
            row.kernel.summary.median,
            row.dtoh.summary.median,
            row.total.summary.median,
            row.concurrent.summary.median,
            row.speedup,
            row.amdahl_ideal
        );
    }
    let _ = writeln!(
        out,
        "breakeven (kernel outlasts the copies) at cycles: {}",
        r.breakeven_cycles
            .map_or("not reached".to_owned(), |c| c.to_string())
    );
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn sincos_overlap(r: &SincosOverlapResult) -> String {
    let mut out = format!(
        "Time for sequential transfer and execution in ms = {:.4}\n",
        r.sequential.summary.mean
    );
    for p in r.points.iter().filter(|p| p.streams == r.params.streams) {
        let _ = writeln!(
            out,
            "Time for {} transfer and execution in ms = {:.4} ({} streams)",
            p.variant.label(),
            p.time.summary.mean,
            p.streams
        );
    }
    let _ = writeln!(out, "Max error = {:e}", r.verification.max_abs_error);
    let _ = writeln!(out, "streams  async 1 ms  async 2 ms");
    let mut counts: Vec<usize> = r.points.iter().map(|p| p.streams).collect();
    counts.dedup();
    for s in counts {
        let mean = |v| {
            r.points
                .iter()
                .find(|p| p.streams == s && p.variant == v)
                .map_or(f64::NAN, |p| p.time.summary.mean)
        };
        let _ = writeln!(
            out,
            "{s:>7}  {:>10.4}  {:>10.4}",
            mean(crate::results::SincosVariant::Async1),
            mean(crate::results::SincosVariant::Async2)
        );
    }
    let _ = writeln!(
        out,
        "alone: HtoD {:.4} ms, kernel {:.4} ms, DtoH {:.4} ms (copy-engine bound {:.4} ms)",
        r.htod_alone.summary.mean,
        r.kernel_alone.summary.mean,
        r.dtoh_alone.summary.mean,
        r.htod_alone.summary.mean.max(r.dtoh_alone.summary.mean)
    );
    let _ = writeln!(out, "verification: {}", r.verification.detail);
    out
}

pub fn bounds(b: &Bounds) -> String {
    format!(
        "{:.0} MiB each way: HtoD {:.3} ms ({:.1} GB/s), DtoH {:.3} ms ({:.1} GB/s), both at once {:.1} GB/s in total\n\
         device to device {:.1} GB/s (read + write), launch overhead {:.2} us\n",
        b.bytes as f64 / (1u64 << 20) as f64,
        b.h2d_ms,
        b.h2d_gbps,
        b.d2h_ms,
        b.d2h_gbps,
        b.bidirectional_gbps,
        b.d2d_gbps,
        b.launch_us
    )
}

pub fn kernel_comparison(c: &KernelComparison) -> String {
    let mut out =
        String::from("kernel                      Rust median ms  CUDA C++ median ms  Rust/CUDA\n");
    for k in &c.kernels {
        let _ = writeln!(
            out,
            "{:<27} {:>14.4} {:>19.4} {:>10.3}",
            k.kernel, k.rust.summary.median, k.cuda.summary.median, k.ratio_median
        );
    }
    let _ = writeln!(out, "verification: {}", c.verification.detail);
    out
}

/// The compact table `run-all` prints last.
pub fn summary(s: &RunSummary) -> String {
    let mut out = device(&s.device);
    let verdict = |v: bool| if v { "verified" } else { "FAILED" };
    if let Some(x) = &s.experiments.sincos_overlap {
        let _ = writeln!(
            out,
            "sincos-overlap  sequential {:.3} ms, best async {:.3} ms ({}, {} streams)  {}",
            x.sequential_ms,
            x.best_async_ms,
            x.best_async_variant.label(),
            x.best_async_streams,
            verdict(x.verified)
        );
    }
    if let Some(x) = &s.experiments.matmul_streams {
        let _ = writeln!(
            out,
            "matmul-streams  1 stream {:.3} ms, {} streams {:.3} ms, speedup {:.2}x  {}",
            x.ms_by_streams.first().copied().unwrap_or(f64::NAN),
            x.ms_by_streams.len(),
            x.ms_by_streams.last().copied().unwrap_or(f64::NAN),
            x.speedup_max_streams,
            verdict(x.verified)
        );
    }
    if let Some(x) = &s.experiments.memcpy_kernel {
        let _ = writeln!(
            out,
            "memcpy-kernel   {} streams, best speedup {:.2}x, breakeven cycles {}  {}",
            x.num_streams,
            x.best_speedup,
            x.breakeven_cycles
                .map_or("not reached".to_owned(), |c| c.to_string()),
            verdict(x.verified)
        );
    }
    if let Some(b) = &s.bounds {
        let _ = writeln!(
            out,
            "bounds          HtoD {:.3} ms ({:.1} GB/s), DtoH {:.3} ms ({:.1} GB/s), both ways {:.1} GB/s, device {:.0} GB/s",
            b.h2d_ms, b.h2d_gbps, b.d2h_ms, b.d2h_gbps, b.bidirectional_gbps, b.d2d_gbps
        );
    }
    if let Some(r) = &s.rust_over_cuda {
        let _ = writeln!(
            out,
            "Rust/CUDA C++   fill {:.3}, matmul {:.3}, add_kernel {:.3}, sincos {:.3} (median kernel times)",
            r.fill, r.matmul, r.add_kernel, r.sincos
        );
    }
    if let Some(r) = &s.experiment_rust_over_cuda {
        let show = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{x:.3}"));
        let _ = writeln!(
            out,
            "Rust/CUDA C++   experiments: sincos-overlap {}, matmul-streams {}, memcpy-kernel {}",
            show(r.sincos_overlap),
            show(r.matmul_streams),
            show(r.memcpy_kernel)
        );
    }
    out
}
