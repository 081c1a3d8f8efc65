//! Checking every output element against a reference, into a [`Verification`].
use crate::results::Verification;

/// Compare each element `out[i]` with `expected(i)`; within `tolerance` passes
/// (0 means exact). NaN never passes.
pub fn compare<T: Copy + Into<f64>>(
    what: &str,
    out: &[T],
    expected: impl Fn(usize) -> f64,
    tolerance: f64,
) -> Verification {
    let mut mismatches = 0u64;
    let mut max_abs_error = 0.0f64;
    let mut first = None;
    for (i, &got) in out.iter().enumerate() {
        let want = expected(i);
        let got: f64 = got.into();
        let error = (got - want).abs();
        if error.is_nan() || error > tolerance {
            mismatches += 1;
            first.get_or_insert((i, got, want));
        }
        if error.is_nan() {
            max_abs_error = f64::NAN;
        } else if !max_abs_error.is_nan() {
            max_abs_error = max_abs_error.max(error);
        }
    }
    let detail = match first {
        None => format!(
            "{what}: all {} elements within {tolerance:e} of the reference",
            out.len()
        ),
        Some((i, got, want)) => format!(
            "{what}: {mismatches} of {} elements wrong; first at index {i}: got {got}, expected {want}",
            out.len()
        ),
    };
    Verification {
        passed: mismatches == 0,
        checked: out.len() as u64,
        mismatches,
        max_abs_error,
        detail,
    }
}

/// Fold several checks of one experiment into one verdict.
pub fn combine(checks: Vec<Verification>) -> Verification {
    let failed: Vec<&Verification> = checks.iter().filter(|c| !c.passed).collect();
    let detail = match failed.first() {
        None => format!(
            "{} checks passed; {}",
            checks.len(),
            checks.last().map_or("", |c| c.detail.as_str())
        ),
        Some(first) => format!(
            "{} of {} checks failed; {}",
            failed.len(),
            checks.len(),
            first.detail
        ),
    };
    Verification {
        passed: failed.is_empty(),
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
    fn exact_and_tolerant_comparisons() {
        let ok = compare("x", &[1.0f32, 2.0], |i| [1.0, 2.0][i], 0.0);
        assert!(ok.passed && ok.checked == 2 && ok.max_abs_error == 0.0);
        let off = compare("x", &[1.0f32, 2.5], |i| [1.0, 2.0][i], 0.1);
        assert!(!off.passed);
        assert_eq!(off.mismatches, 1);
        assert!(off.detail.contains("index 1"), "{}", off.detail);
        assert!(compare("x", &[1.000_000_5f32], |_| 1.0, 1e-6).passed);
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
}
