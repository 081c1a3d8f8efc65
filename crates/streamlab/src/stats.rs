//! Summary statistics of timing samples.
use serde::{Deserialize, Serialize};

/// Mean, median, spread and extremes of a set of samples (milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1); 0 for a single sample.
    pub stddev: f64,
}

impl Summary {
    /// Summarise `samples`; `None` when there are none or one is not finite.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len().is_multiple_of(2) {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        } else {
            sorted[mid]
        };
        let variance = if samples.len() > 1 {
            samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Some(Summary {
            count: samples.len(),
            mean,
            median,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            stddev: variance.sqrt(),
        })
    }
}

/// Raw samples with their summary, as every JSON result stores them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub samples_ms: Vec<f64>,
    pub summary: Summary,
}

impl Series {
    /// A series from samples; `None` when [`Summary::of`] is.
    pub fn new(samples_ms: Vec<f64>) -> Option<Series> {
        let summary = Summary::of(&samples_ms)?;
        Some(Series {
            samples_ms,
            summary,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(
            (s.count, s.mean, s.median, s.min, s.max),
            (4, 2.5, 2.5, 1.0, 4.0)
        );
        assert!((s.stddev - 1.290_994_448_7).abs() < 1e-9);
        let odd = Summary::of(&[5.0, 1.0, 2.0]).unwrap();
        assert_eq!(odd.median, 2.0);
        assert_eq!(Summary::of(&[7.0]).unwrap().stddev, 0.0);
    }

    #[test]
    fn empty_or_non_finite_samples_have_no_summary() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
        assert!(Series::new(vec![f64::INFINITY]).is_none());
    }
}
