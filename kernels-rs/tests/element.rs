//! The kernels' element math on the CPU, against f64 references.
use kernels_rs::element::{
    add_repeatedly, add_repeatedly_closed_form, add_repeatedly_in_pairs, add_repeatedly_unrolled,
    add_repeatedly_volatile, fma, matmul_cell, matmul_cell_plain, matmul_cell_safe, sincos_element,
    sincos_element_plain, sincos_of, sqrt,
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
fn the_tuned_add_kernels_unrolled_sums_match_the_closed_form_at_every_rest() {
    let mut rng = Rng(6);
    // Every count up to 300 (each rest of eight, with and without full steps), negative
    // counts, and a few long ones.
    for cycles in (-3..=300).chain([1_003, 65_537, 100_007]) {
        for _ in 0..4 {
            let (value, add) = (rng.next() as i32, rng.next() as i32);
            assert_eq!(
                add_repeatedly_unrolled(value, add, cycles),
                add_repeatedly_closed_form(value, add, cycles),
                "{value} + {add} x {cycles}"
            );
        }
    }
    assert_eq!(add_repeatedly_unrolled(i32::MAX, 1, 7), i32::MIN + 6);
    assert_eq!(add_repeatedly_unrolled(5, 0xcc, i32::MIN), 5);
}

#[test]
fn the_sums_in_pairs_of_steps_match_the_closed_form_at_every_rest_and_step_count() {
    let mut rng = Rng(7);
    // Every count up to 1100 (each rest of 128 with no, an odd and an even number of full
    // steps), negative counts, and a few long ones.
    for cycles in (-3..=1_100).chain([65_537, 100_007]) {
        let (value, add) = (rng.next() as i32, rng.next() as i32);
        let expected = add_repeatedly_closed_form(value, add, cycles);
        assert_eq!(
            add_repeatedly_in_pairs::<128>(value, add, cycles),
            expected,
            "{value} + {add} x {cycles}"
        );
        assert_eq!(add_repeatedly_in_pairs::<8>(value, add, cycles), expected);
    }
    assert_eq!(
        add_repeatedly_in_pairs::<128>(i32::MAX, 1, 129),
        i32::MIN + 128
    );
    assert_eq!(add_repeatedly_in_pairs::<128>(5, 0xcc, i32::MIN), 5);
}

#[test]
fn plain_volatile_add_kernel_agrees_with_the_safe_one() {
    let mut rng = Rng(5);
    for _ in 0..500 {
        let (value, add, cycles) = (
            rng.next() as i32,
            rng.next() as i32,
            (rng.next() % 100) as i32,
        );
        assert_eq!(
            add_repeatedly_volatile(value, add, cycles),
            add_repeatedly(value, add, cycles)
        );
    }
}

#[test]
fn tuned_and_safe_matmul_cells_are_the_plain_in_order_chain_bit_for_bit() {
    let mut rng = Rng(4);
    for (rows, cols, aligned) in [
        (3usize, 5usize, 7usize),
        (4, 16, 257),
        (2, 9, 1000),
        (5, 1, 33),
        (1, 3, 0),
        (2, 2, 8),
        (2, 2, 15),
        (2, 2, 16),
        (2, 2, 17),
        (2, 3, 40),
        (1, 2, 72),
    ] {
        let a: Vec<f32> = (0..rows * aligned).map(|_| rng.unit() - 0.5).collect();
        let b: Vec<f32> = (0..aligned * cols).map(|_| rng.unit() - 0.5).collect();
        for row in 0..rows {
            for col in 0..cols {
                let tuned =
                    unsafe { matmul_cell(a.as_ptr(), b.as_ptr(), row, col, cols, aligned as u32) };
                let plain = matmul_cell_plain(&a, &b, row, col, cols, aligned);
                assert_eq!(
                    tuned.to_bits(),
                    plain.to_bits(),
                    "({row},{col}) of {rows}x{cols}x{aligned}"
                );
                let a_view = nvptx_kernel::view::Matrix::new(&a, rows, aligned).unwrap();
                let b_view = nvptx_kernel::view::Matrix::new(&b, aligned, cols).unwrap();
                let pairs = nvptx_kernel::view::zip_exact(
                    a_view.row(row).unwrap(),
                    b_view.column(col).unwrap(),
                )
                .unwrap();
                assert_eq!(matmul_cell_safe(pairs).to_bits(), plain.to_bits());
                let want: f64 = (0..aligned)
                    .map(|k| a[row * aligned + k] as f64 * b[k * cols + col] as f64)
                    .sum();
                assert!((plain as f64 - want).abs() <= 1e-6 * aligned.max(1) as f64);
            }
        }
    }
}

#[test]
fn matmul_of_ones_is_exactly_the_inner_dimension() {
    let (rows, cols, aligned) = (2, 3, 131_072);
    let a = vec![1.0f32; rows * aligned];
    let b = vec![1.0f32; aligned * cols];
    let got = unsafe { matmul_cell(a.as_ptr(), b.as_ptr(), 1, 2, cols, aligned as u32) };
    assert_eq!(got, 131_072.0);
    assert_eq!(matmul_cell_plain(&a, &b, 1, 2, cols, aligned), 131_072.0);
}

#[test]
fn plain_sincos_is_within_1e_minus_6_like_the_tuned_one() {
    let mut rng = Rng(6);
    for i in (0u32..1 << 25).step_by(977) {
        let a = rng.unit();
        let x = i as f32 as f64;
        let reference = a as f64 + (x.sin().powi(2) + x.cos().powi(2)).sqrt();
        assert!(
            (sincos_element_plain(a, i) as f64 - reference).abs() <= 1e-6,
            "{i}"
        );
        assert_eq!(
            sincos_of(a, i as f32).to_bits(),
            sincos_element(a, i).to_bits()
        );
    }
}
