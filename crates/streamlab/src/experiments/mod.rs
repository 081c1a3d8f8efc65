//! The three experiments, each reproducing one write-up: its parameters (what clap
//! parses and the JSON records), the GPU run, and the verification of every output.
pub mod matmul_streams;
pub mod memcpy_kernel;
pub mod sincos_overlap;

use crate::results::Provenance;
use crate::runtime::{Gpu, Kernels};

/// What every experiment runs with: the GPU, the kernel set to time, and when the run
/// started.
pub struct Context<'a> {
    pub gpu: &'a Gpu,
    pub kernels: &'a Kernels,
    pub started_utc: String,
}

impl Context<'_> {
    /// The provenance every result records.
    pub fn provenance(&self) -> Provenance {
        Provenance {
            streamlab_version: env!("CARGO_PKG_VERSION").to_owned(),
            started_utc: self.started_utc.clone(),
            ptx_target: crate::kernels::ptx_target(crate::kernels::RUST_PTX).to_owned(),
            kernels: self.kernels.set.label().to_owned(),
        }
    }
}

/// Parameters that cannot work, with what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

impl UsageError {
    pub fn new(message: impl Into<String>) -> UsageError {
        UsageError(message.into())
    }
}

/// The element range each of `parts` streams handles: equal chunks of
/// `ceil(elements / parts)`, the last one shorter, together covering every element once.
pub fn chunks(elements: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let size = elements.div_ceil(parts);
    (0..parts)
        .map(|s| (s * size).min(elements)..((s + 1) * size).min(elements))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_element_once() {
        for (n, s) in [(10, 3), (16, 4), (5, 5), (1 << 20, 7), (7, 4)] {
            let parts = chunks(n, s);
            assert_eq!(parts.len(), s);
            assert_eq!(parts[0].start, 0);
            assert_eq!(parts[s - 1].end, n);
            assert!(parts.windows(2).all(|w| w[0].end == w[1].start));
        }
        assert_eq!(chunks(10, 3), [0..4, 4..8, 8..10]);
    }
}
