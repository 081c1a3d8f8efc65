//! Checking every output element against a reference, on all cores, into a
//! [`Verification`].
use streamlab_results::saved::Verification;

use crate::parallel::map_chunks;

/// Mismatches in one chunk: how many, the largest error, and the first.
struct Tally {
    mismatches: u64,
    max_abs_error: f64,
    first: Option<(usize, f64, f64)>,
}

fn merge(tallies: Vec<Tally>) -> Tally {
    tallies.into_iter().fold(
        Tally {
            mismatches: 0,
            max_abs_error: 0.0,
            first: None,
        },
        |a, b| Tally {
            mismatches: a.mismatches + b.mismatches,
            max_abs_error: if a.max_abs_error.is_nan() || b.max_abs_error.is_nan() {
                f64::NAN
            } else {
                a.max_abs_error.max(b.max_abs_error)
            },
            first: a.first.or(b.first),
        },
    )
}

/// Compare each element `out[i]` with `expected(i)`; within `tolerance` passes
/// (0 means exact). NaN never passes.
pub fn compare<T: Copy + Into<f64> + Sync>(
    what: &str,
    out: &[T],
    expected: impl Fn(usize) -> f64 + Sync,
    tolerance: f64,
) -> Verification {
    let checked = compare_each(what, out, |i| (expected(i), tolerance));
    let detail = match checked.mismatches {
        0 => format!(
            "{what}: all {} elements within {tolerance:e} of the reference",
            out.len()
        ),
        _ => checked.detail.clone(),
    };
    Verification { detail, ..checked }
}

/// Compare each element `out[i]` with its reference value and tolerance, `expected(i)`:
/// within it passes. NaN never passes.
pub fn compare_each<T: Copy + Into<f64> + Sync>(
    what: &str,
    out: &[T],
    expected: impl Fn(usize) -> (f64, f64) + Sync,
) -> Verification {
    let tally = merge(map_chunks(out.len(), |range| {
        let mut t = Tally {
            mismatches: 0,
            max_abs_error: 0.0,
            first: None,
        };
        for i in range {
            let (got, (want, tolerance)) = (out[i].into(), expected(i));
            let error = (got - want).abs();
            if error.is_nan() || error > tolerance {
                t.mismatches += 1;
                t.first.get_or_insert((i, got, want));
            }
            if error.is_nan() {
                t.max_abs_error = f64::NAN;
            } else if !t.max_abs_error.is_nan() {
                t.max_abs_error = t.max_abs_error.max(error);
            }
        }
        t
    }));
    let detail = match tally.first {
        None => format!(
            "{what}: all {} elements within their tolerances of the reference",
            out.len()
        ),
        Some((i, got, want)) => format!(
            "{what}: {} of {} elements wrong; first at index {i}: got {got}, expected {want}",
            tally.mismatches,
            out.len()
        ),
    };
    Verification {
        passed: tally.mismatches == 0,
        checked: out.len() as u64,
        mismatches: tally.mismatches,
        max_abs_error: tally.max_abs_error,
        detail,
    }
}

/// `c = a · b` (`a: rows × inner`, `b: inner × cols`, row-major) on the CPU in f64, each
/// cell with the tolerance a correct f32 kernel meets: every form and spelling computes a
/// cell as one chain of f32 multiply-adds in the order of `k`, each rounded once, so its
/// error is at most the unit roundoff 2^-24 times the sum of the magnitudes of the chain's
/// partial sums (to first order); the tolerance is twice that, covering the higher-order
/// terms and the f64 reference's own rounding. On inputs whose elements all differ, a
/// cell read from the wrong row or column is off by about the size of a cell, far beyond
/// it.
pub fn matmul_reference(
    a: &[f32],
    b: &[f32],
    rows: usize,
    cols: usize,
    inner: usize,
) -> Vec<(f64, f64)> {
    map_chunks(rows * cols, |range| {
        range
            .map(|cell| {
                let (row, col) = (cell / cols, cell % cols);
                let (mut sum, mut partials) = (0.0f64, 0.0f64);
                for k in 0..inner {
                    sum += f64::from(a[row * inner + k]) * f64::from(b[k * cols + col]);
                    partials += sum.abs();
                }
                // Twice 2^-24 (f32::EPSILON is 2^-23) times the partial sums' magnitudes.
                (sum, partials * f64::from(f32::EPSILON) + f64::MIN_POSITIVE)
            })
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

/// The largest error of `out` against `expected` in units in the last place of the f32
/// nearest each expected value (the gap from it to the next f32 away from zero).
pub fn max_ulps(out: &[f32], expected: impl Fn(usize) -> f64 + Sync) -> f64 {
    let worst = map_chunks(out.len(), |range| {
        range.fold(0.0f64, |worst, i| {
            let want = expected(i);
            let error = (f64::from(out[i]) - want).abs() / ulp_of(want);
            if error.is_nan() || worst.is_nan() {
                f64::NAN
            } else {
                worst.max(error)
            }
        })
    });
    worst.into_iter().fold(0.0, |a, b| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else {
            a.max(b)
        }
    })
}

/// The unit in the last place of the f32 nearest `value`: the gap from it to the next
/// f32 away from zero.
pub fn ulp_of(value: f64) -> f64 {
    let nearest = (value as f32).abs();
    f64::from(f32::from_bits(nearest.to_bits() + 1)) - f64::from(nearest)
}

/// A number whose bit pattern can be compared.
pub trait Bits: Copy + std::fmt::Debug + Sync {
    fn bits(self) -> u64;
}

macro_rules! bits {
    ($($t:ty => $e:expr),*) => {$(
        impl Bits for $t {
            fn bits(self) -> u64 {
                let f: fn($t) -> u64 = $e;
                f(self)
            }
        }
    )*};
}
bits!(f32 => |x| u64::from(x.to_bits()), f64 => f64::to_bits, i32 => |x| u64::from(x as u32), u32 => u64::from);

/// Compare `out` with `expected` bit for bit (equal NaNs match, -0 differs from 0);
/// `locate(i)` names where element `i` came from (e.g. its stream) in the message.
pub fn identical<T: Bits>(
    what: &str,
    out: &[T],
    expected: &[T],
    locate: impl Fn(usize) -> String,
) -> Verification {
    let counts = map_chunks(out.len(), |range| {
        let mut count = 0u64;
        let mut first = None;
        for i in range {
            if out[i].bits() != expected[i].bits() {
                count += 1;
                first.get_or_insert(i);
            }
        }
        (count, first)
    });
    let mismatches: u64 = counts.iter().map(|c| c.0).sum();
    let first = counts.iter().find_map(|c| c.1);
    let detail = match first {
        None => format!("{what}: all {} elements identical, bit for bit", out.len()),
        Some(i) => format!(
            "{what}: {mismatches} of {} elements differ; first at index {i} ({}): got {:?}, expected {:?}",
            out.len(),
            locate(i),
            out[i],
            expected[i]
        ),
    };
    Verification {
        passed: mismatches == 0,
        checked: out.len() as u64,
        mismatches,
        max_abs_error: if mismatches == 0 { 0.0 } else { f64::NAN },
        detail,
    }
}

/// Fold several checks of one experiment into one verdict, counting the single checks
/// of any verdict folded already.
pub fn combine(checks: Vec<Verification>) -> Verification {
    let folded: Vec<_> = checks.iter().map(Verification::folded).collect();
    let total: usize = folded.iter().map(|f| f.checks).sum();
    let failed: usize = folded.iter().map(|f| f.failed).sum();
    let detail = match folded.iter().find(|f| f.failed > 0) {
        None => format!(
            "{total} checks passed; {}",
            folded.last().map_or("", |f| f.detail)
        ),
        Some(first) => format!("{failed} of {total} checks failed; {}", first.detail),
    };
    Verification {
        passed: failed == 0,
        checked: checks.iter().map(|c| c.checked).sum(),
        mismatches: checks.iter().map(|c| c.mismatches).sum(),
        max_abs_error: checks.iter().map(|c| c.max_abs_error).fold(0.0, |a, b| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        }),
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_counted_in_units_in_the_last_place() {
        let one_ulp_at_one = f64::from(f32::EPSILON);
        let exact = [1.0f32, 0.5, 0.0];
        let want = [1.0, 0.5, 0.0];
        assert_eq!(max_ulps(&exact, |i| want[i]), 0.0);
        // 1 + 2 ulps of f32 at 1.0, and half an ulp's error at 0.5 (its ulp is half as big).
        let out = [1.0f32 + 2.0 * f32::EPSILON, 0.5];
        let want = [1.0, 0.5 + one_ulp_at_one / 4.0];
        assert!((max_ulps(&out, |i| want[i]) - 2.0).abs() < 1e-9);
        assert!(max_ulps(&[f32::NAN], |_| 1.0).is_nan());
    }

    #[test]
    fn exact_and_tolerant_comparisons() {
        let ok = compare("x", &[1.0f32, 2.0], |i| [1.0, 2.0][i], 0.0);
        assert!(ok.passed && ok.checked == 2 && ok.max_abs_error == 0.0);
        let off = compare("x", &[1.0f32, 2.5], |i| [1.0, 2.0][i], 0.1);
        assert!(!off.passed);
        assert_eq!(off.mismatches, 1);
        assert!(off.detail.contains("index 1"), "{}", off.detail);
        assert!(compare("x", &[1.000_000_5f32], |_| 1.0, 1e-6).passed);
    }

    /// `c = a · b` computed on the CPU by the tuned kernel's cell, reading `(row, col)` of
    /// each output from `(pick(row, col))`.
    fn cells(
        a: &[f32],
        b: &[f32],
        n: usize,
        pick: impl Fn(usize, usize) -> (usize, usize),
    ) -> Vec<f32> {
        (0..n * n)
            .map(|cell| {
                let (row, col) = pick(cell / n, cell % n);
                // SAFETY: a and b are n × n, row and col below n.
                unsafe {
                    kernels_rs::element::matmul_cell(a.as_ptr(), b.as_ptr(), row, col, n, n as u32)
                }
            })
            .collect()
    }

    #[test]
    fn the_matmul_check_passes_the_kernels_cells_and_fails_a_kernel_that_swaps_row_and_column() {
        let n = 48;
        let mut rng = crate::rng::Rng::new(11);
        let (mut a, mut b) = (vec![0.0f32; n * n], vec![0.0f32; n * n]);
        rng.fill_signed_unit(&mut a);
        rng.fill_signed_unit(&mut b);
        let reference = matmul_reference(&a, &b, n, n, n);
        let check = |out: &[f32]| compare_each("matmul", out, |i| reference[i]);
        assert!(check(&cells(&a, &b, n, |r, c| (r, c))).passed);
        let swapped = check(&cells(&a, &b, n, |r, c| (c, r)));
        assert!(!swapped.passed);
        assert!(
            swapped.mismatches as usize > n * n / 2,
            "{}",
            swapped.detail
        );
        // With every input equal (the wiki's all-ones fill) the same wrong kernel passes:
        // why the check runs on inputs whose elements all differ.
        let ones = vec![1.0f32; n * n];
        let reference = matmul_reference(&ones, &ones, n, n, n);
        let swapped = cells(&ones, &ones, n, |r, c| (c, r));
        assert!(compare_each("matmul", &swapped, |i| reference[i]).passed);
    }

    #[test]
    fn the_matmul_tolerance_holds_at_a_long_inner_dimension_and_is_far_below_a_cell() {
        let (rows, cols, inner) = (2, 3, 131_072);
        let mut rng = crate::rng::Rng::new(5);
        let (mut a, mut b) = (vec![0.0f32; rows * inner], vec![0.0f32; inner * cols]);
        rng.fill_signed_unit(&mut a);
        rng.fill_signed_unit(&mut b);
        let reference = matmul_reference(&a, &b, rows, cols, inner);
        let out: Vec<f32> = (0..rows * cols)
            .map(|cell| {
                kernels_rs::element::matmul_cell_plain(
                    &a,
                    &b,
                    cell / cols,
                    cell % cols,
                    cols,
                    inner,
                )
            })
            .collect();
        assert!(compare_each("matmul", &out, |i| reference[i]).passed);
        // A cell is about sqrt(inner) / 3 ≈ 120 here, and a cell read from the wrong row
        // or column off by about as much: the tolerance stays within 2% of a cell.
        let typical = (inner as f64).sqrt() / 3.0;
        for (value, tolerance) in &reference {
            assert!(
                *tolerance < 0.02 * value.abs().max(typical),
                "{value} ± {tolerance}"
            );
        }
    }

    #[test]
    fn nan_always_fails_and_combine_reports_the_first_failure() {
        let nan = compare("poisoned", &[f32::NAN], |_| 1.0, 1.0);
        assert!(!nan.passed && nan.max_abs_error.is_nan());
        let all = combine(vec![compare("a", &[1i32], |_| 1.0, 0.0), nan]);
        assert!(!all.passed);
        assert!(
            all.detail.contains("1 of 2 checks failed; poisoned"),
            "{}",
            all.detail
        );
    }

    #[test]
    fn folds_of_folds_count_their_single_checks() {
        let pair = || combine(vec![compare("a", &[1i32], |_| 1.0, 0.0); 2]);
        let all = combine(vec![pair(), compare("b", &[1i32], |_| 1.0, 0.0), pair()]);
        assert!(
            all.detail.starts_with("5 checks passed; a: "),
            "{}",
            all.detail
        );
        assert_eq!(all.folded().checks, 5);
        let bad = combine(vec![
            pair(),
            combine(vec![pair(), compare("x", &[2i32], |_| 1.0, 0.0)]),
        ]);
        assert!(
            bad.detail.starts_with("1 of 5 checks failed; x: "),
            "{}",
            bad.detail
        );
        assert_eq!(
            bad.sentence().split(';').next(),
            Some("1 of 5 checks FAILED")
        );
    }

    #[test]
    fn identical_compares_bits_and_names_where_the_first_difference_came_from() {
        let a = [1.0f32, -0.0, f32::NAN, 4.0];
        assert!(identical("x", &a, &[1.0, -0.0, f32::NAN, 4.0], |_| String::new()).passed);
        let b = [1.0f32, 0.0, f32::NAN, 5.0];
        let v = identical("streams", &a, &b, |i| format!("stream {}", i / 2 + 1));
        assert!(!v.passed);
        assert_eq!(v.mismatches, 2);
        assert!(
            v.detail.contains("first at index 1 (stream 1)"),
            "{}",
            v.detail
        );
    }
}
