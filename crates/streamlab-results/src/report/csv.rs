//! The CSV files: the write-ups' own where they print one (the wiki's per-trial table,
//! the Handbook's shmoo table, the blog's times), and one table of medians for each
//! newer experiment. Derived columns are read from [`crate::derived`].
use std::fmt::Write;

use crate::derived::Derive;
use crate::saved::compare_kernels::{CompareKernels, KernelComparison};
use crate::saved::graph_overlap::{GraphOverlap, GraphOverlapResult};
use crate::saved::kernel_concurrency::{KernelConcurrency, KernelConcurrencyResult};
use crate::saved::launch_overhead::{LaunchOverhead, LaunchOverheadResult};
use crate::saved::mapped::{Mapped, MappedResult};
use crate::saved::matmul_streams::MatmulStreamsResult;
use crate::saved::memcpy_kernel::{MemcpyKernel, MemcpyKernelResult};
use crate::saved::overlap::{Overlap, OverlapResult};
use crate::saved::overlap_map::{OverlapMap, OverlapMapResult};
use crate::saved::sincos_overlap::{SincosOverlap, SincosOverlapResult};

/// Rows of `cells`, comma separated, after `header`.
fn table(header: &str, rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut out = format!("{header}\n");
    for row in rows {
        let _ = writeln!(out, "{}", row.join(","));
    }
    out
}

fn ms(x: f64) -> String {
    format!("{x:.4}")
}

/// The wiki's CSV: header `1 Stream,2 Streams,…`, one row per trial, milliseconds.
pub fn matmul_streams(r: &MatmulStreamsResult) -> String {
    let header: Vec<String> = (1..=r.params.max_streams)
        .map(|s| {
            if s == 1 {
                "1 Stream".to_owned()
            } else {
                format!("{s} Streams")
            }
        })
        .collect();
    table(
        &header.join(","),
        r.trials_ms
            .iter()
            .map(|trial| trial.iter().map(|&t| ms(t)).collect()),
    )
}

/// The Handbook's table (medians, milliseconds), with the bound.
pub fn memcpy_kernel(r: &MemcpyKernelResult) -> String {
    let a = MemcpyKernel::derive(r);
    table(
        "Streams,Cycles,HtoD,Kernel,DtoH,Total,Concurrent,Speedup,Bound,BoundSpeedup,BeyondBound",
        a.rows.iter().map(|x| {
            vec![
                x.streams.to_string(),
                x.cycles.to_string(),
                ms(x.htod_ms),
                ms(x.kernel_ms),
                ms(x.dtoh_ms),
                ms(x.total_ms),
                ms(x.concurrent_ms),
                format!("{:.3}", x.speedup),
                ms(x.bound.ms),
                format!("{:.3}", x.bound_speedup),
                x.beyond_bound.to_string(),
            ]
        }),
    )
}

/// The blog's printed times per configuration (medians per iteration), with the bound.
pub fn sincos_overlap(r: &SincosOverlapResult) -> String {
    let a = SincosOverlap::derive(r);
    table(
        "variant,streams,median_ms,bound_ms,efficiency,beyond_bound",
        a.configs.iter().map(|c| {
            vec![
                c.variant.label().to_owned(),
                c.streams.to_string(),
                ms(c.median_ms),
                ms(c.bound.ms),
                format!("{:.4}", c.efficiency),
                c.beyond_bound.to_string(),
            ]
        }),
    )
}

pub fn compare_kernels(c: &KernelComparison) -> String {
    let a = CompareKernels::derive(c);
    table(
        "kernel,case,form,rust_median_ms,cuda_median_ms,rust_over_cuda",
        a.cases.iter().map(|k| {
            vec![
                k.kernel.clone(),
                k.case.clone(),
                k.form.map_or("one".to_owned(), |f| f.label().to_owned()),
                format!("{:.5}", k.rust.median),
                format!("{:.5}", k.cuda.median),
                format!("{:.4}", k.ratio),
            ]
        }),
    )
}

pub fn kernel_concurrency(r: &KernelConcurrencyResult) -> String {
    let a = KernelConcurrency::derive(r);
    table(
        "queues,streams,serial_ms,concurrent_ms,speedup,model_waves,measured_waves,bound_ms",
        a.rows.iter().map(|x| {
            vec![
                x.queues.to_string(),
                x.streams.to_string(),
                ms(x.serial_ms),
                ms(x.concurrent_ms),
                format!("{:.3}", x.speedup),
                x.model_waves.to_string(),
                format!("{:.3}", x.measured_waves),
                ms(x.bound_ms),
            ]
        }),
    )
}

pub fn launch_overhead(r: &LaunchOverheadResult) -> String {
    let a = LaunchOverhead::derive(r);
    table(
        "work_us,per_kernel_us,bound_us,overhead_share",
        a.breakeven.iter().map(|b| {
            vec![
                b.work_us.to_string(),
                format!("{:.4}", b.per_kernel_us),
                format!("{:.4}", b.bound_us),
                format!("{:.4}", b.overhead_share),
            ]
        }),
    )
}

pub fn graph_overlap(r: &GraphOverlapResult) -> String {
    let a = GraphOverlap::derive(r);
    table(
        "variant,chunks,gpu_streams_ms,gpu_graph_ms,host_streams_ms,host_graph_ms,bound_ms",
        a.rows.iter().map(|x| {
            vec![
                x.variant.label().to_owned(),
                x.chunks.to_string(),
                ms(x.stream_gpu_ms),
                ms(x.graph_gpu_ms),
                ms(x.stream_host_ms),
                ms(x.graph_host_ms),
                ms(x.bound.ms),
            ]
        }),
    )
}

pub fn overlap_map(r: &OverlapMapResult) -> String {
    let a = OverlapMap::derive(r);
    table(
        "floats,streams,best_ms,speedup,model_ms,model_speedup",
        a.cells.iter().map(|c| {
            vec![
                c.elements.to_string(),
                c.streams.to_string(),
                format!("{:.5}", c.best_ms),
                format!("{:.3}", c.speedup),
                format!("{:.5}", c.model_ms),
                format!("{:.3}", c.model_speedup),
            ]
        }),
    )
}

pub fn mapped(r: &MappedResult) -> String {
    let a = Mapped::derive(r);
    table(
        "floats,mapped_ms,mapped_bound_ms,streamed_ms,streamed_bound_ms",
        a.rows.iter().map(|x| {
            vec![
                x.elements.to_string(),
                format!("{:.5}", x.mapped_ms),
                format!("{:.5}", x.mapped_bound_ms),
                format!("{:.5}", x.streamed_ms),
                format!("{:.5}", x.streamed_bound_ms),
            ]
        }),
    )
}

pub fn overlap(r: &OverlapResult) -> String {
    let a = Overlap::derive(r);
    table(
        "elements,variant,streams,median_ms,bound_ms",
        a.sizes.iter().flat_map(|s| {
            s.configs.iter().map(|c| {
                vec![
                    s.elements.to_string(),
                    c.variant.label().to_owned(),
                    c.streams.to_string(),
                    format!("{:.5}", c.median_ms),
                    format!("{:.5}", c.bound.ms),
                ]
            })
        }),
    )
}
