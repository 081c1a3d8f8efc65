//! The `bounds` experiment's derived numbers: the limits the report puts first, and the
//! `bounds` key of `summary.json`.
use super::rates::{gbps, median_rates};
pub use super::summary::BoundsSummary;
use crate::saved::bounds::BoundsResult;

/// The medians of every measurement.
pub fn analyze(b: &BoundsResult) -> BoundsSummary {
    let median = median_rates(&b.copies);
    BoundsSummary {
        h2d_ms: b.copies.htod.median(),
        d2h_ms: b.copies.dtoh.median(),
        h2d_gbps: median.htod_gbps,
        d2h_gbps: median.dtoh_gbps,
        bidirectional_gbps: median.both_gbps,
        d2d_gbps: gbps(2 * b.copies.bytes, b.dtod.median()),
        launch_us: b.launch.median() * 1e3,
    }
}
