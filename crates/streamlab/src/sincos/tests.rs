//! The sincos check against kernels that do the work, and against kernels that do not:
//! each output below is what a kernel would write, computed on the host with the
//! `libm` crate the Rust kernels run on the GPU.
use super::*;
use kernels_rs::element::{sincos_element, sincos_element_plain, sincos_from};

/// The smallest array an experiment checks by default (overlap-map's first size).
const SMALLEST: usize = 1 << 12;

/// `n` inputs in [0, 1), as the experiments draw them.
fn inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut a = vec![0.0f32; n];
    crate::rng::Rng::new(seed).fill_unit(&mut a);
    a
}

/// The sines and cosines the `libm` crate gives each index, as the Rust set's
/// `math_sincosf` (or, `plain`, its `math_sinf` and `math_cosf`) writes them.
fn trig(n: usize, plain: bool) -> Trig {
    let pairs: Vec<(f32, f32)> = (0..n)
        .map(|i| {
            let x = i as u32 as f32;
            if plain {
                (libm::sinf(x), libm::cosf(x))
            } else {
                libm::sincosf(x)
            }
        })
        .collect();
    let (sines, cosines): (Vec<f32>, Vec<f32>) = pairs.into_iter().unzip();
    let check = check_trig("libm", &sines, &cosines);
    Trig {
        sines,
        cosines,
        check,
    }
}

/// The check of output `b` against the reference for inputs `a`.
fn check(a: &[f32], plain: bool, b: &[f32]) -> Verification {
    Expected::new(a, &trig(a.len(), plain)).check("sincos", b)
}

#[test]
fn the_kernels_element_math_passes_bit_for_bit() {
    for n in [1, 7, SMALLEST, 100_003] {
        let a = inputs(n, 3);
        let tuned: Vec<f32> = (0..n).map(|i| sincos_element(a[i], i as u32)).collect();
        let plain: Vec<f32> = (0..n)
            .map(|i| sincos_element_plain(a[i], i as u32))
            .collect();
        let v = check(&a, false, &tuned);
        assert!(v.passed, "{}", v.detail);
        assert!(v.detail.contains("bit for bit"), "{}", v.detail);
        assert!(check(&a, true, &plain).passed);
    }
}

#[test]
fn a_kernel_that_writes_a_plus_one_fails() {
    for (n, seed) in [(SMALLEST, 1), (SMALLEST, 2), (1 << 20, 3)] {
        let a = inputs(n, seed);
        let lazy: Vec<f32> = a.iter().map(|x| x + 1.0).collect();
        for plain in [false, true] {
            let v = check(&a, plain, &lazy);
            assert!(!v.passed, "{}", v.detail);
            // Not a rare element: a fair share of the array tells the work from none.
            assert!(v.mismatches as usize > n / 20, "{} of {n}", v.mismatches);
        }
        // The tolerance the check replaced passes it: why it was replaced.
        let worst = (0..n)
            .map(|i| {
                let x = i as u32 as f32 as f64;
                let want = f64::from(a[i]) + (x.sin().powi(2) + x.cos().powi(2)).sqrt();
                (f64::from(lazy[i]) - want).abs()
            })
            .fold(0.0, f64::max);
        assert!(worst < 1e-6, "{worst}");
    }
}

#[test]
fn kernels_that_read_the_wrong_index_fail() {
    let n = SMALLEST;
    let full = inputs(n + 1, 5);
    let a = &full[..n];
    let next_a: Vec<f32> = (0..n)
        .map(|i| sincos_element(full[i + 1], i as u32))
        .collect();
    let next_x: Vec<f32> = (0..n).map(|i| sincos_element(a[i], i as u32 + 1)).collect();
    // A chunk of a larger array whose kernel ignored its offset: its indices from 0.
    let (offset, len) = (3 * n / 4, n / 4);
    let no_offset: Vec<f32> = (0..n)
        .map(|i| match i >= offset {
            true => sincos_element(a[i], (i - offset) as u32),
            false => sincos_element(a[i], i as u32),
        })
        .collect();
    for (what, out) in [
        ("a from the next element", &next_a),
        ("x from the next index", &next_x),
        ("the last chunk without its offset", &no_offset),
    ] {
        let v = check(a, false, out);
        assert!(!v.passed, "{what}: {}", v.detail);
        assert!(v.mismatches as usize > len / 20, "{what}: {}", v.mismatches);
    }
}

#[test]
fn one_wrong_bit_fails_and_names_where() {
    let a = inputs(SMALLEST, 7);
    let mut b: Vec<f32> = (0..a.len())
        .map(|i| sincos_element(a[i], i as u32))
        .collect();
    b[1234] = f32::from_bits(b[1234].to_bits() ^ 1);
    let v = check(&a, false, &b);
    assert_eq!(v.mismatches, 1);
    assert!(
        v.detail.contains("first at index 1234 (x = 1234)"),
        "{}",
        v.detail
    );
}

#[test]
fn the_sines_and_cosines_are_checked_before_they_are_trusted() {
    let n = SMALLEST;
    let good = trig(n, false);
    assert!(good.check.passed, "{}", good.check.detail);
    // A "sine" that is the cosine, one from the next index, one 3 ulps off.
    let swapped = check_trig("t", &good.cosines, &good.sines);
    let shifted: Vec<f32> = (0..n).map(|i| libm::sinf((i + 1) as f32)).collect();
    let off: Vec<f32> = (good.sines.iter())
        .map(|s| f32::from_bits(s.to_bits() + 3))
        .collect();
    for (what, v) in [
        ("swapped", swapped),
        ("shifted", check_trig("t", &shifted, &good.cosines)),
        ("3 ulps off", check_trig("t", &off, &good.cosines)),
    ] {
        assert!(!v.passed, "{what}: {}", v.detail);
    }
    // Output checked against failed sines fails, whatever it holds.
    let a = inputs(n, 9);
    let bad = Trig {
        check: check_trig("t", &off, &good.cosines),
        sines: off,
        cosines: good.cosines.clone(),
    };
    let expected = Expected::new(&a, &bad);
    let v = expected.check("sincos", &expected.values.clone());
    assert!(
        !v.passed && v.detail.contains("no reference"),
        "{}",
        v.detail
    );
}

#[test]
fn a_prefix_of_the_output_is_checked_against_the_reference_s_prefix() {
    let a = inputs(SMALLEST, 11);
    let expected = Expected::new(&a, &trig(a.len(), false));
    let b: Vec<f32> = (0..100)
        .map(|i| {
            let (sin, cos) = libm::sincosf(i as f32);
            sincos_from(a[i], sin, cos)
        })
        .collect();
    assert!(expected.check("prefix", &b).passed);
}
