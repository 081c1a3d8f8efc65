//! The CSV files the write-ups print.
use crate::results::{MatmulStreamsResult, MemcpyKernelResult, SincosOverlapResult};

/// The wiki's CSV: header `1 Stream,2 Streams,…`, one row per trial, milliseconds.
pub fn matmul_streams(result: &MatmulStreamsResult) -> String {
    let header: Vec<String> = (1..=result.params.max_streams)
        .map(|s| {
            if s == 1 {
                "1 Stream".to_owned()
            } else {
                format!("{s} Streams")
            }
        })
        .collect();
    let mut out = header.join(",") + "\n";
    for trial in &result.trials_ms {
        let row: Vec<String> = trial.iter().map(|ms| format!("{ms:.4}")).collect();
        out += &(row.join(",") + "\n");
    }
    out
}

/// The Handbook's table as CSV: `Streams,Cycles,HtoD,Kernel,DtoH,Total,Concurrent,Speedup`
/// (medians of the repeats, milliseconds), plus the Amdahl ideal.
pub fn memcpy_kernel(result: &MemcpyKernelResult) -> String {
    let mut out =
        String::from("Streams,Cycles,HtoD,Kernel,DtoH,Total,Concurrent,Speedup,AmdahlIdeal\n");
    for r in &result.rows {
        out += &format!(
            "{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.3},{:.3}\n",
            r.streams,
            r.cycles,
            r.htod.summary.median,
            r.kernel.summary.median,
            r.dtoh.summary.median,
            r.total.summary.median,
            r.concurrent.summary.median,
            r.speedup,
            r.amdahl_ideal
        );
    }
    out
}

/// The blog's printed times as CSV: `variant,streams,mean_ms,median_ms,min_ms,max_ms`.
pub fn sincos_overlap(result: &SincosOverlapResult) -> String {
    let mut out = String::from("variant,streams,mean_ms,median_ms,min_ms,max_ms\n");
    let seq = &result.sequential.summary;
    out += &format!(
        "sequential,1,{:.4},{:.4},{:.4},{:.4}\n",
        seq.mean, seq.median, seq.min, seq.max
    );
    for p in &result.points {
        let s = &p.time.summary;
        out += &format!(
            "{},{},{:.4},{:.4},{:.4},{:.4}\n",
            p.variant.label(),
            p.streams,
            s.mean,
            s.median,
            s.min,
            s.max
        );
    }
    out
}
