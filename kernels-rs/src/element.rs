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

/// Products loaded per step of [`matmul_cell`]: all loads of a step are issued before
/// its multiply-adds, so that many memory requests are in flight per thread.
pub const MATMUL_UNROLL: usize = 8;

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
    // SAFETY (all reads below): the caller guarantees row `row` of `a` and column `col`
    // of `b` are in bounds, and `k + u < aligned` throughout.
    let a_row = unsafe { a.add(row * aligned) };
    let b_col = unsafe { b.add(col) };
    let mut sum = 0.0f32;
    let mut k = 0;
    while k + MATMUL_UNROLL <= aligned {
        let mut x = [0.0f32; MATMUL_UNROLL];
        let mut y = [0.0f32; MATMUL_UNROLL];
        for u in 0..MATMUL_UNROLL {
            unsafe {
                x[u] = *a_row.add(k + u);
                y[u] = *b_col.add((k + u) * cols);
            }
        }
        for u in 0..MATMUL_UNROLL {
            sum = fma(x[u], y[u], sum);
        }
        k += MATMUL_UNROLL;
    }
    while k < aligned {
        sum = fma(
            unsafe { *a_row.add(k) },
            unsafe { *b_col.add(k * cols) },
            sum,
        );
        k += 1;
    }
    sum
}

/// AddKernel's work for one element: add `add_value` to `value`, `cycles` times, with
/// C's two's-complement wrap-around. Each sum passes through [`opaque`], so the compiler
/// cannot fold the loop into one multiply and the kernel's run time grows linearly with
/// `cycles`: the counterpart of the Handbook's `volatile int value`, which NVVM keeps in
/// a register and adds to once per iteration.
#[inline(always)]
pub fn add_repeatedly(value: i32, add_value: i32, cycles: i32) -> i32 {
    let mut value = value;
    for _ in 0..cycles {
        value = opaque(value.wrapping_add(add_value));
    }
    value
}

/// The identity, hidden from the optimizer: on the GPU an inline-assembly block (only a
/// comment naming the register) that claims to rewrite it, so the value stays in a
/// register and nothing is folded across it.
#[inline(always)]
pub fn opaque(value: i32) -> i32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let mut value = value;
        // SAFETY: the assembly is a comment; it touches no memory and no stack.
        unsafe { core::arch::asm!("// {0}", inout(reg32) value, options(nomem, nostack)) };
        value
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        core::hint::black_box(value)
    }
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
