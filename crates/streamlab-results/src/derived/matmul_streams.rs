//! matmul-streams' derived numbers: per stream count the times across trials, the
//! speedup over one stream, and the tasks-per-stream model behind the plateaus.
//!
//! The products are independent and small (two 16×16 blocks each), so with `s` streams
//! the stream with the most products, `ceil(products / s)`, sets the time: the model is
//! the one-stream median × `ceil(products / s)` / products.
use serde::{Deserialize, Serialize};

use crate::saved::matmul_streams::MatmulStreamsResult;
use crate::stats::Series;

/// One stream count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatmulPoint {
    pub streams: usize,
    /// The time for all products in each trial.
    pub time: Series,
    /// One-stream median over this median.
    pub speedup: f64,
    /// `ceil(products / streams)`: the most products any one stream runs.
    pub tasks_per_stream: usize,
    /// The model's time.
    pub model_ms: f64,
}

/// Everything derived from a matmul-streams result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatmulAnalysis {
    pub points: Vec<MatmulPoint>,
}

impl MatmulAnalysis {
    pub fn last(&self) -> Option<&MatmulPoint> {
        self.points.last()
    }
}

/// `ceil(products / streams)`.
pub fn tasks_per_stream(products: usize, streams: usize) -> usize {
    products.div_ceil(streams.max(1))
}

/// Derive everything from `r`; stream counts whose column holds a non-finite time are
/// left out.
pub fn analyze(r: &MatmulStreamsResult) -> MatmulAnalysis {
    let products = r.params.max_streams;
    let columns: Vec<Option<Series>> = (1..=products)
        .map(|s| {
            Series::new(
                r.trials_ms
                    .iter()
                    .filter_map(|row| row.get(s - 1).copied())
                    .collect(),
            )
        })
        .collect();
    let one = columns.first().and_then(|c| c.as_ref()).map(Series::median);
    let points = (1..=products)
        .zip(columns)
        .filter_map(|(s, time)| {
            let time = time?;
            let one = one?;
            let tasks = tasks_per_stream(products, s);
            Some(MatmulPoint {
                streams: s,
                speedup: one / time.median(),
                tasks_per_stream: tasks,
                model_ms: one * tasks as f64 / products as f64,
                time,
            })
        })
        .collect();
    MatmulAnalysis { points }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_per_stream_gives_the_wiki_plateaus() {
        let tasks: Vec<usize> = (1..=16).map(|s| tasks_per_stream(16, s)).collect();
        assert_eq!(tasks, [16, 8, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1]);
    }
}
