//! overlap's derived numbers for a user's kernel: per size the speedup of the best
//! streamed configuration, each configuration's bound, and the verdict: from which size
//! streams pay off, what they give at the user's size, and the bound there.
use serde::{Deserialize, Serialize};

use super::overlap_map::PAYOFF;
use super::pipeline::{self, Bound};
use super::rates::pipeline_stages;
use crate::saved::LinkRates;
use crate::saved::overlap::{OverlapResult, OverlapSize};
use crate::saved::sincos_overlap::SincosVariant;
use crate::stats::Series;

/// One configuration at one size (medians, milliseconds per iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapConfig {
    pub variant: SincosVariant,
    pub streams: usize,
    pub median_ms: f64,
    pub bound: Bound,
    /// Beat the bound built from the measured stages: the bound was lowered to it.
    pub beyond_bound: bool,
    /// Relative noise of its samples.
    pub noise: f64,
}

/// One array size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapSizeAnalysis {
    pub elements: usize,
    pub sequential_ms: f64,
    /// Sequential first, then every streamed configuration.
    pub configs: Vec<OverlapConfig>,
    /// Index into `configs` of the fastest streamed configuration.
    pub best: Option<usize>,
    /// sequential / best.
    pub speedup: f64,
}

impl OverlapSizeAnalysis {
    pub fn best(&self) -> Option<&OverlapConfig> {
        self.best.map(|i| &self.configs[i])
    }
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlapAnalysis {
    pub sizes: Vec<OverlapSizeAnalysis>,
    /// The smallest size measured at which the best streamed configuration reaches
    /// [`PAYOFF`] over sequential.
    pub pays_off_from: Option<usize>,
    /// Index into `sizes` of the user's `--elements`.
    pub at_user_size: usize,
}

impl OverlapAnalysis {
    pub fn user_size(&self) -> &OverlapSizeAnalysis {
        &self.sizes[self.at_user_size]
    }

    /// "streams pay off from N elements: X× at your size; bound Y".
    pub fn verdict(&self) -> String {
        let at = self.user_size();
        let from = match self.pays_off_from {
            Some(n) => format!("streams pay off from {n} elements"),
            None => {
                format!("streams never reached {PAYOFF:.2}× over sequential at the sizes measured")
            }
        };
        match at.best() {
            Some(best) => format!(
                "{from}: {:.2}× at your size ({} elements, {} with {} streams, {:.4} ms against {:.4} ms sequential); bound {:.4} ms ({})",
                at.speedup,
                at.elements,
                best.variant.label(),
                best.streams,
                best.median_ms,
                at.sequential_ms,
                best.bound.ms,
                best.bound.limiter.label()
            ),
            None => format!("{from}; no streamed configuration was measured at your size"),
        }
    }
}

fn analyze_size(
    size: &OverlapSize,
    copy_engines: i32,
    link: Option<&LinkRates>,
) -> OverlapSizeAnalysis {
    let config = |variant, streams, time: &Series, runs| {
        let median_ms = time.median();
        let parts = pipeline_stages(&size.stages, streams, None, link);
        let bound = parts.map_or(
            Bound {
                ms: f64::NAN,
                limiter: pipeline::Limiter::OneStream,
                built_ms: None,
            },
            |parts| pipeline::bound(parts, streams, runs, copy_engines).held(median_ms),
        );
        OverlapConfig {
            variant,
            streams,
            median_ms,
            bound,
            beyond_bound: bound.lowered(),
            noise: time.noise(),
        }
    };
    let sequential_ms = size.sequential.median();
    let mut configs = vec![config(SincosVariant::Sequential, 1, &size.sequential, 1)];
    configs.extend(
        (size.points.iter()).map(|p| config(p.variant, p.streams, &p.time, size.iterations)),
    );
    let best = (configs.iter().enumerate())
        .filter(|(_, c)| c.variant != SincosVariant::Sequential)
        .min_by(|a, b| a.1.median_ms.total_cmp(&b.1.median_ms))
        .map(|(i, _)| i);
    OverlapSizeAnalysis {
        elements: size.elements,
        sequential_ms,
        speedup: best.map_or(f64::NAN, |i| sequential_ms / configs[i].median_ms),
        configs,
        best,
    }
}

/// Derive everything from `r`.
pub fn analyze(r: &OverlapResult) -> OverlapAnalysis {
    let sizes: Vec<OverlapSizeAnalysis> = (r.sizes.iter())
        .map(|s| analyze_size(s, r.device.copy_engines, r.provenance.fastest_link.as_ref()))
        .collect();
    OverlapAnalysis {
        pays_off_from: (sizes.iter())
            .find(|s| s.speedup >= PAYOFF)
            .map(|s| s.elements),
        at_user_size: (sizes.iter())
            .position(|s| s.elements == r.params.elements)
            .unwrap_or(0),
        sizes,
    }
}
