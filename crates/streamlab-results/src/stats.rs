//! Summary statistics of timing samples: what every saved series carries beside its raw
//! samples, and the quartiles the kernel comparison draws.
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
        let sorted = sorted(samples);
        let variance = if samples.len() > 1 {
            samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Some(Summary {
            count: samples.len(),
            mean,
            median: quantile(&sorted, 0.5),
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

    pub fn median(&self) -> f64 {
        self.summary.median
    }

    /// The fastest sample: what the hardware demonstrably reached.
    pub fn min(&self) -> f64 {
        self.summary.min
    }

    pub fn quartiles(&self) -> Quartiles {
        let sorted = sorted(&self.samples_ms);
        Quartiles {
            q1: quantile(&sorted, 0.25),
            median: quantile(&sorted, 0.5),
            q3: quantile(&sorted, 0.75),
        }
    }
}

/// The lower quartile, median and upper quartile of a set of samples, interpolated
/// linearly between order statistics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quartiles {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The `q` quantile of ascending `sorted` samples, interpolated between neighbours.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let (low, high) = (position.floor() as usize, position.ceil() as usize);
    sorted[low] + (sorted[high] - sorted[low]) * (position - low as f64)
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

    #[test]
    fn quartiles_interpolate_between_samples() {
        let q = Series::new(vec![4.0, 1.0, 3.0, 2.0, 5.0])
            .unwrap()
            .quartiles();
        assert_eq!((q.q1, q.median, q.q3), (2.0, 3.0, 4.0));
        let q = Series::new(vec![1.0, 2.0]).unwrap().quartiles();
        assert_eq!((q.q1, q.median, q.q3), (1.25, 1.5, 1.75));
        assert_eq!(Series::new(vec![9.0]).unwrap().quartiles().q3, 9.0);
    }
}
