//! The kernels' element math on the CPU, against f64 references.
use kernels_rs::element::{
    add_repeatedly, add_repeatedly_closed_form, cell, fma, matmul_cell, sincos_element, sqrt,
};

/// SplitMix64: a small deterministic generator for test inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

#[test]
fn sqrt_and_fma_are_correctly_rounded() {
    let mut rng = Rng(1);
    for _ in 0..100_000 {
        let (x, y, z) = (rng.unit() * 100.0, rng.unit() - 0.5, rng.unit());
        assert_eq!(sqrt(x), (x as f64).sqrt() as f32, "sqrt({x})");
        assert_eq!(
            fma(x, y, z),
            (x as f64 * y as f64 + z as f64) as f32,
            "fma({x},{y},{z})"
        );
    }
}

#[test]
fn sincos_element_is_within_1e_minus_6_over_the_whole_index_range() {
    let mut rng = Rng(2);
    let mut worst = 0.0f64;
    // Every 7th index of 0..2^25, plus the last few, with random `a` in [0, 1).
    let indices = (0u32..1 << 25).step_by(7).chain((1u32 << 25) - 8..1 << 25);
    for i in indices {
        let a = rng.unit();
        let x = i as f32 as f64;
        let reference = a as f64 + (x.sin().powi(2) + x.cos().powi(2)).sqrt();
        worst = worst.max((sincos_element(a, i) as f64 - reference).abs());
    }
    assert!(worst <= 1e-6, "max error {worst:e}");
}

#[test]
fn add_repeatedly_matches_the_closed_form_and_wraps_like_c() {
    let mut rng = Rng(3);
    for _ in 0..2_000 {
        let value = rng.next() as i32;
        let add = rng.next() as i32;
        let cycles = (rng.next() % 300) as i32;
        assert_eq!(
            add_repeatedly(value, add, cycles),
            add_repeatedly_closed_form(value, add, cycles)
        );
    }
    assert_eq!(add_repeatedly(i32::MAX, 1, 1), i32::MIN);
    assert_eq!(add_repeatedly(i32::MIN, -1, 3), i32::MAX - 2);
    assert_eq!(add_repeatedly(5, 0xcc, 0), 5);
    assert_eq!(
        add_repeatedly(5, 0xcc, -4),
        5,
        "a negative count runs no iteration"
    );
    assert_eq!(add_repeatedly_closed_form(0, 0x4000_0000, 4), 0);
}

#[test]
fn matmul_cell_matches_f64_on_non_square_shapes() {
    let mut rng = Rng(4);
    for (rows, cols, aligned) in [
        (3usize, 5usize, 7usize),
        (32, 16, 257),
        (1, 9, 1000),
        (17, 1, 33),
    ] {
        let a: Vec<f32> = (0..rows * aligned).map(|_| rng.unit() - 0.5).collect();
        let b: Vec<f32> = (0..aligned * cols).map(|_| rng.unit() - 0.5).collect();
        for row in 0..rows {
            for col in 0..cols {
                let got = unsafe { matmul_cell(a.as_ptr(), b.as_ptr(), row, col, cols, aligned) };
                let want: f64 = (0..aligned)
                    .map(|k| a[cell(row, k, aligned)] as f64 * b[cell(k, col, cols)] as f64)
                    .sum();
                let tolerance = 1e-6 * aligned as f64;
                assert!(
                    (got as f64 - want).abs() <= tolerance,
                    "({row},{col}): {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn matmul_of_ones_is_exactly_the_inner_dimension() {
    let (rows, cols, aligned) = (2, 3, 131_072);
    let a = vec![1.0f32; rows * aligned];
    let b = vec![1.0f32; aligned * cols];
    let got = unsafe { matmul_cell(a.as_ptr(), b.as_ptr(), 1, 2, cols, aligned) };
    assert_eq!(got, 131_072.0);
}
