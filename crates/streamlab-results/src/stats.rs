//! Summary statistics of timing samples, and the tests that tell two sets apart.
//!
//! Noise is robust: the median absolute deviation scaled to a standard deviation
//! (× 1.4826, exact for normal samples) over the median, so one sample that met a busy
//! link moves it little; such a sample is an outlier (more than [`OUTLIER_SPREADS`]
//! of those deviations from the median), marked and kept.
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
        // n − 1 in the denominator; a single sample has no spread to divide.
        let variance = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
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

    /// The faster (lower median, by `total_cmp`) of this series and `other`; this one
    /// where they tie.
    pub fn faster<'a>(&'a self, other: &'a Series) -> &'a Series {
        match other.median().total_cmp(&self.median()) {
            std::cmp::Ordering::Less => other,
            _ => self,
        }
    }

    /// The fastest sample: what the hardware demonstrably reached.
    pub fn min(&self) -> f64 {
        self.summary.min
    }

    /// The relative noise: 1.4826 × the median absolute deviation over the median (0
    /// for one sample; infinite for a zero median with spread).
    pub fn noise(&self) -> f64 {
        let median = self.median();
        let deviations: Vec<f64> = (self.samples_ms.iter())
            .map(|s| (s - median).abs())
            .collect();
        let spread = MAD_TO_SIGMA * quantile(&sorted(&deviations), 0.5);
        if spread == 0.0 {
            0.0
        } else {
            spread / median.abs()
        }
    }

    /// The indices of samples more than [`OUTLIER_SPREADS`] robust standard deviations
    /// from the median (none where the samples do not spread).
    pub fn outliers(&self) -> Vec<usize> {
        let median = self.median();
        let limit = OUTLIER_SPREADS * self.noise() * median.abs();
        (self.samples_ms.iter().enumerate())
            .filter(|(_, s)| limit > 0.0 && (*s - median).abs() > limit)
            .map(|(i, _)| i)
            .collect()
    }

    /// [`Series::noise`] where the samples can show one: `None` for a single sample or a
    /// noise that is not a number.
    pub fn measured_noise(&self) -> Option<f64> {
        Some(self.noise()).filter(|n| self.summary.count > 1 && !n.is_nan())
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

/// The relative noise ([`Series::noise`]) an experiment that samples to a target keeps
/// sampling each configuration down to, while its sampling budget lasts.
pub const NOISE_TARGET: f64 = 0.01;

/// The labels of the configurations (label, relative noise) that ended above
/// [`NOISE_TARGET`], with their noise, e.g. "asynchronous 1 with 16 streams (1.3%)".
pub fn above_noise_target(configs: &[(String, f64)]) -> Vec<String> {
    (configs.iter())
        .filter(|(_, noise)| above_target(*noise))
        .map(|(label, noise)| format!("{label} ({:.1}%)", 100.0 * noise))
        .collect()
}

/// Whether a noise is above [`NOISE_TARGET`] (or could not be measured).
pub fn above_target(noise: f64) -> bool {
    noise.is_nan() || noise > NOISE_TARGET
}

/// The most rows above the noise target [`noise_target_note`] names; its tables give the
/// noise of every row.
pub const NOISY_ROWS_NAMED: usize = 8;

/// In words, how many of `rows` (label, relative noise) ended above [`NOISE_TARGET`],
/// naming the noisiest [`NOISY_ROWS_NAMED`] with their noise.
pub fn noise_target_note(rows: &[(String, f64)]) -> String {
    let target = format!("{:.0}% noise target", 100.0 * NOISE_TARGET);
    let mut above: Vec<(String, f64)> = (rows.iter())
        .filter(|(_, noise)| above_target(*noise))
        .cloned()
        .collect();
    let count = above.len();
    let rest = match count {
        0 => {
            return format!(
                "All {} measured rows are at or under the {target}.",
                rows.len()
            );
        }
        n if n > NOISY_ROWS_NAMED => {
            above.sort_by(|a, b| b.1.total_cmp(&a.1));
            above.truncate(NOISY_ROWS_NAMED);
            format!(
                "; the noisiest {NOISY_ROWS_NAMED} of them named, every row's noise is in its table"
            )
        }
        _ => String::new(),
    };
    let named = above_noise_target(&above).join(", ");
    format!(
        "{count} of {} measured rows ended above the {target}: {named}{rest}.",
        rows.len()
    )
}

/// How many of their combined spreads two medians must lie apart for the difference to
/// be beyond the noise ([`beyond_noise`]).
pub const BEYOND_NOISE_SPREADS: f64 = 2.0;

/// Whether medians `a` and `b`, of relative noise `noise_a` and `noise_b`, differ by more
/// than [`BEYOND_NOISE_SPREADS`] times their combined spread (the root sum of squares of
/// noise × median): where only medians and noises are at hand.
pub fn beyond_noise(a: f64, noise_a: f64, b: f64, noise_b: f64) -> bool {
    let spread = (noise_a * a).hypot(noise_b * b);
    (a - b).abs() > BEYOND_NOISE_SPREADS * spread
}

/// The two-sided p-value of the Mann–Whitney U test of samples `a` against `b`: how
/// likely two sets drawn from one distribution are to be ranked at least this far apart.
/// Exact (every ordering of the pooled ranks counted) where the sets are small and share no
/// value, else the normal approximation with the ties' correction and a continuity
/// correction. `None` where a side has no sample or a sample is not finite.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let mut pooled: Vec<(f64, bool)> = (a.iter().map(|&x| (x, true)))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Midranks, and the ties' term Σ(t³ − t).
    let (mut rank_sum_a, mut ties, mut i) = (0.0, 0.0, 0);
    for tied in pooled.chunk_by(|x, y| x.0 == y.0) {
        let (t, j) = (tied.len() as f64, i + tied.len());
        let midrank = (i + j + 1) as f64 / 2.0;
        rank_sum_a += midrank * tied.iter().filter(|(_, in_a)| *in_a).count() as f64;
        ties += t * t * t - t;
        i = j;
    }
    let (nf, mf) = (n as f64, m as f64);
    let u = rank_sum_a - nf * (nf + 1.0) / 2.0;
    let mean = nf * mf / 2.0;
    if ties == 0.0 && n + m <= EXACT_MANN_WHITNEY {
        // Orderings with U at most k, for every k: the count of ways n ranks of n + m
        // give a rank sum of k + n(n + 1)/2.
        let counts = u_distribution(n, m);
        let total: f64 = counts.iter().sum();
        let extreme = u.min(nf * mf - u).round() as usize;
        let tail: f64 = counts[..=extreme].iter().sum::<f64>() / total;
        return Some((2.0 * tail).min(1.0));
    }
    let n_all = nf + mf;
    let variance = nf * mf / 12.0 * ((n_all + 1.0) - ties / (n_all * (n_all - 1.0)));
    if variance <= 0.0 {
        return Some(1.0);
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / variance.sqrt();
    Some((2.0 * normal_upper_tail(z)).min(1.0))
}

/// Up to this many samples in all (and no ties), [`mann_whitney_p`] counts every
/// ordering rather than approximating.
const EXACT_MANN_WHITNEY: usize = 60;

/// How many orderings of `n` and `m` samples give each U from 0 to n·m.
fn u_distribution(n: usize, m: usize) -> Vec<f64> {
    // ways[i][j][u]: i of the first set and j of the second placed, U so far u; built by
    // adding the largest sample, from either set.
    let mut previous: Vec<Vec<f64>> = vec![vec![1.0]; m + 1];
    for i in 1..=n {
        let mut current: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        for j in 0..=m {
            let mut row = vec![0.0; i * j + 1];
            // The largest is from the first set: it beats all j of the second.
            for (u, w) in previous[j].iter().enumerate() {
                row[u + j] += w;
            }
            // The largest is from the second set.
            if j > 0 {
                for (u, w) in current[j - 1].iter().enumerate() {
                    row[u] += w;
                }
            }
            current.push(row);
        }
        previous = current;
    }
    previous.swap_remove(m)
}

/// The two-sided p of a standard normal statistic `z`: P(|Z| ≥ |z|).
pub fn normal_two_sided_p(z: f64) -> f64 {
    (2.0 * normal_upper_tail(z.abs())).min(1.0)
}

/// Which of `ps` the Benjamini–Hochberg procedure calls discoveries at false-discovery
/// rate `q`: sorted, the largest k with p(k) ≤ k q / m, and every p at most that one. A
/// `None` (a row that could not be tested) is never one and does not count in m.
pub fn benjamini_hochberg(ps: &[Option<f64>], q: f64) -> Vec<bool> {
    let mut tested: Vec<(usize, f64)> = (ps.iter().enumerate())
        .filter_map(|(i, p)| p.filter(|p| p.is_finite()).map(|p| (i, p)))
        .collect();
    tested.sort_by(|x, y| x.1.total_cmp(&y.1));
    let m = tested.len() as f64;
    let cut = (tested.iter().enumerate())
        .rev()
        .find(|(k, (_, p))| *p <= (*k + 1) as f64 * q / m)
        .map_or(0, |(k, _)| k + 1);
    let mut called = vec![false; ps.len()];
    for &(i, _) in &tested[..cut] {
        called[i] = true;
    }
    called
}

/// P(Z > z) for a standard normal Z (Abramowitz and Stegun 7.1.26 through erfc, to
/// about 1e-7).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    let erfc = if x >= 0.0 { erfc } else { 2.0 - erfc };
    erfc / 2.0
}

/// The median absolute deviation times this estimates a normal sample's standard
/// deviation.
const MAD_TO_SIGMA: f64 = 1.4826;
/// How many robust standard deviations from the median make a sample an outlier.
pub const OUTLIER_SPREADS: f64 = 3.0;

/// The lower quartile, median and upper quartile of a set of samples, interpolated
/// linearly between order statistics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quartiles {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
}

pub fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The `q` quantile of ascending `sorted` samples, interpolated between neighbours.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let (low, high) = (position.floor() as usize, position.ceil() as usize);
    sorted[low] + (sorted[high] - sorted[low]) * (position - low as f64)
}

/// The crate's tests, and the helpers they share.
#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn series(samples: &[f64]) -> Series {
        Series::new(samples.to_vec()).unwrap()
    }

    pub(crate) fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn summaries_noise_outliers_and_quartiles_of_known_samples() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        let parts = (s.count, s.mean, s.median, s.min, s.max);
        assert_eq!(parts, (4, 2.5, 2.5, 1.0, 4.0));
        assert!((s.stddev - 1.290_994_448_7).abs() < 1e-9);
        assert_eq!(Summary::of(&[5.0, 1.0, 2.0]).unwrap().median, 2.0);
        assert_eq!(Summary::of(&[7.0]).unwrap().stddev, 0.0);
        // Empty or non-finite samples have none.
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
        assert!(Series::new(vec![f64::INFINITY]).is_none());
        // The faster of two is the lower median; the first where they tie.
        let (slow, fast, tie) = (series(&[3.0, 2.0]), series(&[1.0, 2.0]), series(&[2.5]));
        assert_eq!(slow.faster(&fast), &fast);
        assert_eq!(fast.faster(&slow), &fast);
        assert!(std::ptr::eq(slow.faster(&tie), &slow));
        let quiet = series(&[10.0, 10.1, 9.9, 10.0, 10.05]);
        // Deviations 0, .1, .1, 0, .05: median .05, × 1.4826 over 10.
        assert!((quiet.noise() - 0.007_413).abs() < 1e-6, "{quiet:?}");
        assert!(quiet.outliers().is_empty());
        let one_bad = series(&[10.0, 10.1, 9.9, 10.0, 25.0]);
        assert!(one_bad.noise() < 0.02, "{}", one_bad.noise());
        assert_eq!(one_bad.outliers(), [4]);
        assert_eq!(series(&[3.0]).noise(), 0.0);
        assert!(series(&[3.0, 3.0]).outliers().is_empty());
        // A single sample measures no noise.
        assert_eq!(series(&[3.0]).measured_noise(), None);
        assert_eq!(series(&[3.0, 3.0]).measured_noise(), Some(0.0));
        // Quartiles interpolate between samples.
        let q = series(&[4.0, 1.0, 3.0, 2.0, 5.0]).quartiles();
        assert_eq!((q.q1, q.median, q.q3), (2.0, 3.0, 4.0));
        let q = series(&[1.0, 2.0]).quartiles();
        assert_eq!((q.q1, q.median, q.q3), (1.25, 1.5, 1.75));
        assert_eq!(series(&[9.0]).quartiles().q3, 9.0);
    }

    #[test]
    fn beyond_noise_past_twice_the_combined_spread_and_above_the_noise_target_named() {
        // Spreads 1.0 and 1.0 (10% of 10): combined √2, twice that 2.83.
        let cases = [
            (10.0, 0.1, 12.8, 0.1 * 10.0 / 12.8, false, "within"),
            (10.0, 0.1, 12.9, 0.1 * 10.0 / 12.9, true, "past it"),
            (12.9, 0.1 * 10.0 / 12.9, 10.0, 0.1, true, "symmetric"),
            (10.0, 0.0, 10.0, 0.0, false, "equal medians never are"),
            (10.0, 0.0, 10.001, 0.0, true, "no spread: any change is"),
            (10.0, f64::INFINITY, 20.0, 0.0, false, "unbounded noise"),
            (10.0, f64::NAN, 20.0, 0.0, false, "unknown noise never is"),
        ];
        for (a, noise_a, b, noise_b, beyond, why) in cases {
            assert_eq!(beyond_noise(a, noise_a, b, noise_b), beyond, "{why}");
        }
        // Configurations above the noise target are named, the noisiest first.
        let configs =
            [("a", 0.004), ("b", 0.013), ("c", f64::INFINITY)].map(|(l, n)| (l.into(), n));
        assert_eq!(above_noise_target(&configs), ["b (1.3%)", "c (inf%)"]);
        let note = noise_target_note(&configs);
        let named = "2 of 3 measured rows ended above the 1% noise target: b (1.3%), c";
        assert!(note.starts_with(named), "{note}");
        let many: Vec<(String, f64)> = (0..12)
            .map(|i| (format!("r{i}"), 0.011 + 0.001 * f64::from(i)))
            .collect();
        let note = noise_target_note(&many);
        let noisiest = "12 of 12 measured rows ended above the 1% noise target: r11 (2.2%), r10";
        assert!(note.starts_with(noisiest), "{note}");
        let cut = "r4 (1.5%); the noisiest 8 of them named";
        assert!(note.contains(cut) && !note.contains("r3 "), "{note}");
        let quiet = "All 1 measured rows are at or under the 1% noise target.";
        assert_eq!(noise_target_note(&configs[..1]), quiet);
    }

    #[test]
    fn mann_whitney_and_benjamini_hochberg_match_known_p_values() {
        // Fully separated sets of 5 and 5: exact two-sided p = 2/252.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // Interleaved sets: no evidence.
        let p = mann_whitney_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert!(p > 0.6, "{p}");
        // 3 against 4, U = 1: counts 1, 1, 2, 3, ... of 35 orderings; P(U ≤ 1) = 2/35.
        let p = mann_whitney_p(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0, 7.0]).unwrap();
        assert!((p - 4.0 / 35.0).abs() < 1e-12, "{p}");
        // Symmetric in its arguments.
        let swapped = mann_whitney_p(&[3.0, 5.0, 6.0, 7.0], &[1.0, 2.0, 4.0]);
        assert_eq!(swapped, Some(p));
        // Large sets, shifted: the normal approximation, tiny p; ties handled.
        let a: Vec<f64> = (0..50).map(f64::from).collect();
        let b: Vec<f64> = (0..50).map(|i| f64::from(i) + 40.0).collect();
        assert!(mann_whitney_p(&a, &b).unwrap() < 1e-10);
        assert!((mann_whitney_p(&a, &a).unwrap() - 1.0).abs() < 0.02);
        assert_eq!(mann_whitney_p(&[2.0, 2.0], &[2.0, 2.0]), Some(1.0));
        assert_eq!(mann_whitney_p(&[], &[1.0]), None);
        assert_eq!(mann_whitney_p(&[f64::NAN], &[1.0]), None);
        assert!((normal_upper_tail(1.96) - 0.025).abs() < 1e-4);
        assert!((normal_two_sided_p(1.959_964) - 0.05).abs() < 1e-6);
        assert!(normal_two_sided_p(0.0) > 0.999_999);
        let ps = [
            Some(0.01),
            Some(0.04),
            None,
            Some(0.03),
            Some(0.5),
            Some(0.001),
        ];
        // m = 5: lines 0.01, 0.02, 0.03, 0.04, 0.05 for the sorted 0.001, 0.01, 0.03, 0.04, 0.5.
        let called = [true, true, false, true, false, true];
        assert_eq!(benjamini_hochberg(&ps, 0.05), called);
        let called = [false, false, false, false, false, true];
        assert_eq!(benjamini_hochberg(&ps, 0.01), called);
        assert_eq!(benjamini_hochberg(&[None, Some(0.9)], 0.05), [false, false]);
    }
}
