//! graph-overlap's derived numbers: per order and chunk count, graph replay against
//! stream issue in GPU time and in host time per iteration, beside the pipeline bound.
use serde::{Deserialize, Serialize};

use super::pipeline::{self, Bound};
use super::rates::pipeline_stages;
use crate::saved::graph_overlap::{GraphOverlapResult, Issue};
use crate::saved::sincos_overlap::SincosVariant;

/// One order at one chunk count (medians, milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphRow {
    pub variant: SincosVariant,
    pub chunks: usize,
    pub stream_gpu_ms: f64,
    pub graph_gpu_ms: f64,
    pub stream_host_ms: f64,
    pub graph_host_ms: f64,
    /// graph / streams, GPU time.
    pub gpu_ratio: f64,
    /// graph / streams, host time.
    pub host_ratio: f64,
    pub bound: Bound,
    /// Either way of issuing beat the bound built from the measured stages: the bound was
    /// lowered to it (`bound.built_ms` keeps what it was).
    pub beyond_bound: bool,
    /// The relative noise of stream issue's and graph replay's GPU times.
    pub stream_noise: f64,
    pub graph_noise: f64,
}

/// Everything derived from a graph-overlap result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphAnalysis {
    pub rows: Vec<GraphRow>,
}

impl GraphAnalysis {
    pub fn row(&self, variant: SincosVariant, chunks: usize) -> Option<&GraphRow> {
        self.rows
            .iter()
            .find(|r| r.variant == variant && r.chunks == chunks)
    }
}

/// Derive everything from `r`.
pub fn analyze(r: &GraphOverlapResult) -> GraphAnalysis {
    let mut rows = Vec::new();
    for variant in SincosVariant::ASYNC {
        for &chunks in &r.params.chunks {
            let find = |issue| {
                (r.points.iter())
                    .find(|p| p.variant == variant && p.chunks == chunks && p.issue == issue)
            };
            let (Some(s), Some(g), Some(parts)) = (
                find(Issue::Streams),
                find(Issue::Graph),
                pipeline_stages(&r.stages, chunks, None, r.provenance.fastest_link.as_ref()),
            ) else {
                continue;
            };
            let (sg, gg) = (s.gpu.median(), g.gpu.median());
            let bound = pipeline::bound(parts, chunks, r.params.iterations, r.device.copy_engines)
                .held(sg.min(gg));
            rows.push(GraphRow {
                variant,
                chunks,
                stream_gpu_ms: sg,
                graph_gpu_ms: gg,
                stream_host_ms: s.host.median(),
                graph_host_ms: g.host.median(),
                gpu_ratio: gg / sg,
                host_ratio: g.host.median() / s.host.median(),
                bound,
                beyond_bound: bound.lowered(),
                stream_noise: s.gpu.noise(),
                graph_noise: g.gpu.noise(),
            });
        }
    }
    GraphAnalysis { rows }
}
