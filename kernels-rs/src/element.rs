//! Per-element math of the kernels: plain functions the GPU entry points call for each
//! thread and the host tests call on the CPU, so both run the same arithmetic.
//!
//! `sqrt` and `fma` are correctly rounded on both sides (PTX `sqrt.rn.f32` / `fma.rn.f32`
//! on the GPU, `libm` on the host), so the GPU and host results agree bit for bit except
//! where `sin`/`cos` are involved, which both take from `libm`.

/// Correctly rounded square root (`sqrt.rn.f32` on the GPU).
#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::f32::math::sqrt(x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        libm::sqrtf(x)
    }
}

/// Fused multiply-add `x * y + z` with one rounding (`fma.rn.f32` on the GPU).
#[inline(always)]
pub fn fma(x: f32, y: f32, z: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::f32::math::mul_add(x, y, z)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        libm::fmaf(x, y, z)
    }
}

/// Row-major index of cell (`row`, `col`) in a matrix with `cols` columns.
#[inline(always)]
pub fn cell(row: usize, col: usize, cols: usize) -> usize {
    row * cols + col
}

/// One cell of `C = A·B`: the dot product of row `row` of `a` (`rows × aligned`) with
/// column `col` of `b` (`aligned × cols`), accumulated in order with fused multiply-adds.
///
/// # Safety
/// `a` must be readable for `(row + 1) * aligned` elements and `b` for
/// `(aligned - 1) * cols + col + 1` elements.
#[inline(always)]
pub unsafe fn matmul_cell(
    a: *const f32,
    b: *const f32,
    row: usize,
    col: usize,
    cols: usize,
    aligned: usize,
) -> f32 {
    let mut sum = 0.0f32;
    let a_row = unsafe { a.add(row * aligned) };
    for k in 0..aligned {
        // SAFETY: the caller guarantees both reads are in bounds.
        let (x, y) = unsafe { (*a_row.add(k), *b.add(cell(k, col, cols))) };
        sum = fma(x, y, sum);
    }
    sum
}

/// AddKernel's work for one element: add `add_value` to `value`, `cycles` times, with
/// C's two's-complement wrap-around. The running value is kept in a volatile slot, as
/// the Handbook's `volatile int value` is, so the compiler cannot fold the loop into
/// one multiply and the kernel's run time grows linearly with `cycles`.
#[inline(always)]
pub fn add_repeatedly(value: i32, add_value: i32, cycles: i32) -> i32 {
    let mut slot = value;
    let slot = &raw mut slot;
    for _ in 0..cycles {
        // SAFETY: `slot` points at a live local.
        unsafe {
            let current = core::ptr::read_volatile(slot);
            core::ptr::write_volatile(slot, current.wrapping_add(add_value));
        }
    }
    // SAFETY: as above.
    unsafe { core::ptr::read_volatile(slot) }
}

/// The expected result of [`add_repeatedly`], in closed form: `value + add_value·cycles`
/// with wrap-around (negative `cycles` run no iterations, as the C loop does).
pub fn add_repeatedly_closed_form(value: i32, add_value: i32, cycles: i32) -> i32 {
    value.wrapping_add(add_value.wrapping_mul(cycles.max(0)))
}

/// The sincos kernel's element: `a + sqrt(sin(x)² + cos(x)²)` with `x = i as f32`.
#[inline(always)]
pub fn sincos_element(a: f32, i: u32) -> f32 {
    let x = i as f32;
    let (s, c) = libm::sincosf(x);
    a + sqrt(fma(s, s, c * c))
}
